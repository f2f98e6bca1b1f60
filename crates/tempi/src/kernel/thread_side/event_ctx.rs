//! [`EventCtx`], the handle a timing-event or execution-time handler receives. Handlers run
//! inside the kernel, between thread executions: what they ask for is collected here and
//! applied by the kernel when they return.
//!
//! Must not: suspend anything or reach kernel state directly.

use crate::error::Error;
use crate::plain::ThreadId;
use crate::time::Time;

/// A timing-event handler's handle on the runtime. Handlers run inside the kernel, between
/// thread executions, on no thread of their own: they must not block.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, TimerSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.add_timer(TimerSpec::every(Duration::from_millis(2)), |ev| {
///     if ev.now() >= Time::from_millis(6) { ev.cancel() }
/// }).unwrap();
/// rt.run_until(Time::from_millis(20)).unwrap();
/// ```
pub struct EventCtx<'k> {
    pub(crate) now: Time,
    /// Whether an id is of this runtime: ids of other runtimes are refused.
    pub(crate) ids: crate::id_space::IdCheck,
    pub(crate) releases: &'k mut Vec<ThreadId>,
    pub(crate) cancelled: bool,
}

impl EventCtx<'_> {
    /// The instant the event fired.
    ///
    /// ```
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// rt.add_timer(tempi::TimerSpec::at(tempi::Time::from_millis(3)), |ev| assert_eq!(ev.now(), tempi::Time::from_millis(3))).unwrap();
    /// # rt.run_until(tempi::Time::from_millis(5)).unwrap();
    /// ```
    pub fn now(&self) -> Time {
        self.now
    }

    /// Release a job of sporadic thread `t` (applied when the handler returns).
    ///
    /// # Errors
    /// [`Error::TooManyThreads`] if more releases are requested in one firing than the runtime
    /// has thread slots (the request list is pre-sized to that); [`Error::ForeignThread`] for
    /// an id of another runtime.
    ///
    /// ```
    /// # use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let s = rt.spawn(tempi::ThreadSpec::new("s").sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    /// rt.add_timer(tempi::TimerSpec::at(tempi::Time::from_millis(1)), move |ev| ev.release(s).unwrap()).unwrap();
    /// assert_eq!(rt.run().unwrap().thread(s).unwrap().stats.completed, 1);
    /// ```
    pub fn release(&mut self, t: ThreadId) -> Result<(), Error> {
        if !self.ids.owns(t) {
            return Err(Error::ForeignThread(t));
        }
        if self.releases.len() == self.releases.capacity() {
            return Err(Error::TooManyThreads { max: self.releases.capacity() });
        }
        self.releases.push(t);
        Ok(())
    }

    /// Stop a periodic event from firing again.
    ///
    /// ```
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// rt.add_timer(tempi::TimerSpec::every(std::time::Duration::from_millis(1)), |ev| ev.cancel()).unwrap();
    /// # rt.run_until(tempi::Time::from_millis(5)).unwrap();
    /// ```
    pub fn cancel(&mut self) {
        self.cancelled = true;
    }
}
