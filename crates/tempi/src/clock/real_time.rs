//! Real time: `CLOCK_MONOTONIC`, read through the CPU's time-stamp counter where it is
//! invariant.
//!
//! The kernel reads the clock at every context switch (CPU-time accounting, timer checks), so
//! the read must be cheap: `quanta` calibrates the TSC against `CLOCK_MONOTONIC` once and then
//! reads it in a few nanoseconds, falling back to `clock_gettime` on machines without a
//! reliable TSC. The epoch is an [`std::time::Instant`], shared by every CPU of a runtime.
//!
//! Waiting while idle sleeps until shortly before the target, then spins the rest, which trades
//! a little CPU for release jitter close to the clock's own resolution. Waiting while busy
//! (simulated work) spins, because the work stands for CPU demand.
//!
//! A clock given a doorbell ([`RealClock::with_doorbell`]) stops waiting as soon as the bell
//! rings: another CPU posted a request to this CPU's dispatcher. An idle wait first watches
//! the bell for the spin margin (requests between CPUs tend to come in quick exchanges), then
//! sleeps by parking the dispatcher's OS thread (a futex on Linux), which the poster unparks
//! after ringing.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Clock, ClockMode};
// The doorbell is the cross-CPU protocol's (`kernel/xcpu/mod.rs`): loom's under `--cfg loom`.
use crate::os::loom_shim::AtomicBool;
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
    source: quanta::Clock,
    /// Raw counter reading taken when `offset` was measured.
    raw_base: u64,
    /// Nanoseconds from `epoch` to `raw_base`.
    offset: u64,
    spin_margin: Duration,
    /// Rung by other CPUs when they post a request to this one: the wait ends early.
    doorbell: Option<Arc<AtomicBool>>,
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
        let source = quanta::Clock::new();
        let raw_base = source.raw();
        let offset = nanos(epoch.elapsed());
        RealClock { epoch, source, raw_base, offset, spin_margin: Duration::from_micros(100), doorbell: None }
    }

    /// Calibrate the TSC against `CLOCK_MONOTONIC` now, if this process has not yet (it is
    /// done once per process, and takes milliseconds). A real-time runtime does this before
    /// its time zero.
    ///
    /// ```
    /// tempi::clock::RealClock::calibrate();
    /// ```
    pub fn calibrate() {
        let _ = quanta::Clock::new();
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

    /// The current instant (the same reading as [`Clock::now`], without needing `&mut`).
    ///
    /// ```
    /// let c = tempi::clock::RealClock::starting_now();
    /// assert!(c.read() <= c.read());
    /// ```
    #[inline]
    pub fn read(&self) -> Time {
        Time::from_nanos(self.offset + self.source.delta_as_nanos(self.raw_base, self.source.raw()))
    }

    /// The raw counter behind [`RealClock::read`] (the TSC where it is invariant), without
    /// the conversion to nanoseconds: the least a timestamp can add to an interval it
    /// measures. Convert two readings with [`RealClock::raw_delta`].
    ///
    /// ```
    /// let c = tempi::clock::RealClock::starting_now();
    /// let start = c.raw();
    /// assert!(c.raw_delta(start, c.raw()) < std::time::Duration::from_secs(1));
    /// ```
    #[inline]
    pub fn raw(&self) -> u64 {
        self.source.raw()
    }

    /// The time between two [`RealClock::raw`] readings; zero unless `end` is later.
    ///
    /// ```
    /// let c = tempi::clock::RealClock::starting_now();
    /// let t = c.raw();
    /// assert_eq!(c.raw_delta(t, t), std::time::Duration::ZERO);
    /// ```
    pub fn raw_delta(&self, start: u64, end: u64) -> Duration {
        Duration::from_nanos(self.source.delta_as_nanos(start, end))
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

impl RealClock {
    /// This clock, whose waits end early when `bell` is set: [`Clock::wait_until`] then
    /// returns before its target. Whoever sets the bell unparks the waiting OS thread.
    ///
    /// ```
    /// use std::sync::{atomic::AtomicBool, Arc};
    /// use tempi::clock::{Clock, RealClock};
    /// let bell = Arc::new(AtomicBool::new(true));
    /// let mut c = RealClock::starting_now().with_doorbell(bell);
    /// let t = c.now();
    /// assert!(c.wait_until(t + std::time::Duration::from_secs(60), false) < t + std::time::Duration::from_secs(60));
    /// ```
    pub fn with_doorbell(mut self, bell: Arc<AtomicBool>) -> RealClock {
        self.doorbell = Some(bell);
        self
    }

    #[inline]
    fn rung(&self) -> bool {
        self.doorbell.as_ref().is_some_and(|b| b.load(Ordering::Acquire))
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
        self.read()
    }

    fn as_real(&self) -> Option<&RealClock> {
        Some(self)
    }

    fn wait_until(&mut self, target: Time, busy: bool) -> Time {
        let mut now = self.now();
        if !busy && self.doorbell.is_some() {
            // A request from another CPU often follows soon after the dispatcher went idle
            // (a hand-off between CPUs): watch the bell for the spin margin before sleeping,
            // which answers it without the OS's wake-up latency.
            let watch_until = now + self.spin_margin;
            while now < target && now < watch_until {
                if self.rung() {
                    return now;
                }
                std::hint::spin_loop();
                now = self.now();
            }
        }
        if !busy {
            while target > now && target - now > self.spin_margin {
                let nap = target - now - self.spin_margin;
                match &self.doorbell {
                    // A park may end early (an unpark, or spuriously): the loop sleeps again.
                    Some(bell) => {
                        if bell.load(Ordering::Acquire) {
                            return now;
                        }
                        std::thread::park_timeout(nap);
                    }
                    None => std::thread::sleep(nap),
                }
                now = self.now();
            }
        }
        while now < target {
            if self.rung() {
                return now;
            }
            std::hint::spin_loop();
            now = self.now();
        }
        now
    }
}
