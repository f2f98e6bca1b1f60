//! The two clocks a runtime can run on.
//!
//! Owns the [`Clock`] trait and its two implementations. A clock answers "what time is it"
//! and "let time pass until this instant": [`VirtualClock`] jumps there at once (discrete-event
//! simulation), [`RealClock`] spins or sleeps on `CLOCK_MONOTONIC`. The kernel is generic over
//! the clock, so one build carries both modes and nothing above the clock knows which it has.

mod real_time;
mod virtual_time;

pub use real_time::RealClock;
pub use virtual_time::VirtualClock;

use crate::time::Time;

mod sealed {
    /// Only the clocks of this module implement [`super::Clock`].
    pub trait Sealed {}
    impl Sealed for super::VirtualClock {}
    impl Sealed for super::RealClock {}
}

/// Which kind of clock a run used.
///
/// ```
/// use tempi::clock::{Clock, ClockMode, VirtualClock};
/// assert_eq!(VirtualClock::MODE, ClockMode::Virtual);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockMode {
    /// Deterministic simulated time.
    Virtual,
    /// The machine's monotonic clock.
    Real,
}

impl ClockMode {
    /// `"virtual"` or `"real"`.
    ///
    /// ```
    /// assert_eq!(tempi::clock::ClockMode::Real.name(), "real");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            ClockMode::Virtual => "virtual",
            ClockMode::Real => "real",
        }
    }
}

/// A source of time for the kernel.
///
/// Sealed: the runtime builds its clock by mode ([`ClockMode`]), so the two clocks here are
/// the only ones; a clock of the application's own could not be handed to it, and a trait
/// that looked open would silently ignore it.
///
/// `wait_until` is the only way time passes for the kernel. `busy` tells whether the CPU is
/// executing simulated work (`work(d)`) meanwhile: a real clock spins then, to burn the CPU time
/// the work stands for, and sleeps otherwise.
///
/// ```
/// use tempi::clock::{Clock, VirtualClock};
/// use tempi::Time;
/// let mut c = VirtualClock::default();
/// assert_eq!(c.wait_until(Time::from_millis(5), false), Time::from_millis(5));
/// assert_eq!(c.now(), Time::from_millis(5));
/// ```
pub trait Clock: sealed::Sealed + Send + 'static {
    /// Which kind of clock this is.
    const MODE: ClockMode;
    /// The current instant.
    fn now(&mut self) -> Time;
    /// Let time pass until `target` (or a little after, for a real clock) and return the new
    /// current instant; a real clock with a doorbell returns earlier when the bell rings
    /// ([`RealClock::with_doorbell`]).
    fn wait_until(&mut self, target: Time, busy: bool) -> Time;
    /// The real clock itself, for threads that read the time between runtime calls; `None`
    /// for clocks under which time does not pass between calls.
    ///
    /// ```
    /// use tempi::clock::{Clock, VirtualClock};
    /// assert!(VirtualClock::default().as_real().is_none());
    /// ```
    fn as_real(&self) -> Option<&RealClock> {
        None
    }
}
