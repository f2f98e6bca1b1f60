//! Instants and spans of time shared by both clocks.
//!
//! Owns the [`Time`] type: an instant measured in whole nanoseconds since the runtime started.
//! Spans are plain [`std::time::Duration`]s. Nothing here reads a clock; see [`crate::clock`].
//!
//! Arithmetic saturates: an instant or a span past [`Time::MAX`] (about 584 years) is
//! [`Time::MAX`], which the runtime reads as "never"; a span before an earlier instant is
//! zero. Nothing here wraps or panics.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::Duration;

/// An instant on a runtime's clock: nanoseconds since the runtime started.
///
/// The same type serves virtual and real time, so application code never learns which clock it
/// runs on.
///
/// ```
/// use std::time::Duration;
/// use tempi::Time;
/// let t = Time::from_millis(3) + Duration::from_micros(500);
/// assert_eq!(t.as_nanos(), 3_500_000);
/// assert_eq!(t - Time::from_millis(1), Duration::from_micros(2_500));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(u64);

impl Time {
    /// The instant the runtime started.
    ///
    /// ```
    /// assert_eq!(tempi::Time::ZERO.as_nanos(), 0);
    /// ```
    pub const ZERO: Time = Time(0);
    /// The last representable instant; used as "never".
    ///
    /// ```
    /// assert!(tempi::Time::MAX > tempi::Time::from_secs(1_000_000));
    /// ```
    pub const MAX: Time = Time(u64::MAX);

    /// An instant `ns` nanoseconds after start.
    ///
    /// ```
    /// assert_eq!(tempi::Time::from_nanos(7).as_nanos(), 7);
    /// ```
    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    /// An instant `us` microseconds after start, clamped to [`Time::MAX`] (as `Time + Duration`
    /// is).
    ///
    /// ```
    /// assert_eq!(tempi::Time::from_micros(2).as_nanos(), 2_000);
    /// assert_eq!(tempi::Time::from_micros(u64::MAX), tempi::Time::MAX);
    /// ```
    pub const fn from_micros(us: u64) -> Time {
        Time(us.saturating_mul(1_000))
    }
    /// An instant `ms` milliseconds after start, clamped to [`Time::MAX`].
    ///
    /// ```
    /// assert_eq!(tempi::Time::from_millis(2).as_nanos(), 2_000_000);
    /// assert_eq!(tempi::Time::from_millis(u64::MAX), tempi::Time::MAX);
    /// ```
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms.saturating_mul(1_000_000))
    }
    /// An instant `s` seconds after start, clamped to [`Time::MAX`] (about 584 years).
    ///
    /// ```
    /// assert_eq!(tempi::Time::from_secs(1).as_nanos(), 1_000_000_000);
    /// assert_eq!(tempi::Time::from_secs(u64::MAX), tempi::Time::MAX);
    /// ```
    pub const fn from_secs(s: u64) -> Time {
        Time(s.saturating_mul(1_000_000_000))
    }
    /// Nanoseconds since start.
    ///
    /// ```
    /// assert_eq!(tempi::Time::from_micros(1).as_nanos(), 1_000);
    /// ```
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// The span from start to this instant.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tempi::Time::from_millis(4).since_start(), Duration::from_millis(4));
    /// ```
    pub const fn since_start(self) -> Duration {
        Duration::from_nanos(self.0)
    }
    /// `self - earlier`, or zero when `earlier` is later.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::Time;
    /// assert_eq!(Time::from_nanos(5).saturating_since(Time::from_nanos(9)), Duration::ZERO);
    /// ```
    pub const fn saturating_since(self, earlier: Time) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, clamped to [`Time::MAX`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::Time;
    /// assert_eq!(Time::MAX.saturating_add(Duration::from_secs(1)), Time::MAX);
    /// ```
    pub fn saturating_add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(nanos(d)))
    }
}

/// A span as whole nanoseconds, clamped to `u64::MAX` (about 584 years).
///
/// ```
/// assert_eq!(tempi::time::nanos(std::time::Duration::from_micros(3)), 3_000);
/// ```
pub fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for Time {
    type Output = Duration;
    fn sub(self, earlier: Time) -> Duration {
        self.saturating_since(earlier)
    }
}

impl fmt::Debug for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Time {
    /// Milliseconds with microsecond precision, e.g. `12.500ms`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:06}ms", self.0 / 1_000_000, self.0 % 1_000_000)
    }
}
