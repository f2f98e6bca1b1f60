//! Simulated time: a counter the kernel moves from event to event.

use super::{Clock, ClockMode};
use crate::time::Time;

/// Deterministic virtual time. Code between two runtime calls takes no time; only `work(d)`
/// and waiting move the clock. Two runs with the same inputs are identical.
///
/// ```
/// use tempi::clock::{Clock, VirtualClock};
/// let mut c = VirtualClock::default();
/// assert_eq!(c.now(), tempi::Time::ZERO);
/// ```
#[derive(Debug, Default, Clone)]
pub struct VirtualClock {
    now: Time,
}

impl Clock for VirtualClock {
    const MODE: ClockMode = ClockMode::Virtual;

    fn now(&mut self) -> Time {
        self.now
    }

    fn wait_until(&mut self, target: Time, _busy: bool) -> Time {
        self.now = self.now.max(target);
        self.now
    }
}
