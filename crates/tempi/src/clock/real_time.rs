//! Real time: `CLOCK_MONOTONIC` through [`std::time::Instant`].
//!
//! Waiting while idle sleeps until shortly before the target, then spins the rest, which trades
//! a little CPU for release jitter close to the clock's own resolution. Waiting while busy
//! (simulated work) spins, because the work stands for CPU demand.

use std::time::{Duration, Instant};

use super::{Clock, ClockMode};
use crate::time::{nanos, Time};

/// The machine's monotonic clock, measured from an epoch shared by every CPU of a runtime.
///
/// ```
/// use tempi::clock::{Clock, RealClock};
/// let mut c = RealClock::starting_now();
/// let t = c.now();
/// assert!(c.wait_until(t + std::time::Duration::from_micros(50), true) >= t);
/// ```
#[derive(Debug, Clone)]
pub struct RealClock {
    epoch: Instant,
    spin_margin: Duration,
}

impl RealClock {
    /// A clock whose zero is now.
    ///
    /// ```
    /// let _ = tempi::clock::RealClock::starting_now();
    /// ```
    pub fn starting_now() -> RealClock {
        RealClock::with_epoch(Instant::now())
    }

    /// A clock whose zero is `epoch`.
    ///
    /// ```
    /// let _ = tempi::clock::RealClock::with_epoch(std::time::Instant::now());
    /// ```
    pub fn with_epoch(epoch: Instant) -> RealClock {
        RealClock { epoch, spin_margin: Duration::from_micros(100) }
    }

    /// The instant this clock calls zero.
    ///
    /// ```
    /// let e = std::time::Instant::now();
    /// assert_eq!(tempi::clock::RealClock::with_epoch(e).epoch(), e);
    /// ```
    pub fn epoch(&self) -> Instant {
        self.epoch
    }

    /// How long before a wake-up time an idle wait stops sleeping and starts spinning
    /// (default 100 µs; zero sleeps the whole way).
    ///
    /// ```
    /// let c = tempi::clock::RealClock::starting_now().spin_margin(std::time::Duration::ZERO);
    /// # let _ = c;
    /// ```
    pub fn spin_margin(mut self, margin: Duration) -> RealClock {
        self.spin_margin = margin;
        self
    }
}

impl Default for RealClock {
    fn default() -> Self {
        RealClock::starting_now()
    }
}

impl Clock for RealClock {
    const MODE: ClockMode = ClockMode::Real;

    #[inline]
    fn now(&mut self) -> Time {
        Time::from_nanos(nanos(self.epoch.elapsed()))
    }

    fn wait_until(&mut self, target: Time, busy: bool) -> Time {
        let mut now = self.now();
        if !busy && target > now {
            let left = target - now;
            if left > self.spin_margin {
                std::thread::sleep(left - self.spin_margin);
            }
            now = self.now();
        }
        while now < target {
            std::hint::spin_loop();
            now = self.now();
        }
        now
    }
}
