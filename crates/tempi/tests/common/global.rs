//! Periodic sets run under a global policy in virtual time, shared by the global-scheduling
//! property tests and the cross-check of the global analysis.

use std::sync::Arc;
use std::time::Duration;

use tempi::policy::sched::{GlobalEdf, GlobalFp, SchedulerFactory};
use tempi::{RunOutcome, Runtime, ThreadSpec, Time};

/// One thread: (period, wcet, deadline, phase) in units of [`UNIT`], and a priority.
pub type Plan = (u64, u64, u64, u64, i32);

/// The time unit of a [`Plan`]: 100 µs.
pub const UNIT: u64 = 100_000;

/// `u` units as a duration.
pub fn unit(u: u64) -> Duration {
    Duration::from_nanos(u * UNIT)
}

/// Run `plans` on `cpus` CPUs under global EDF (`edf`) or global fixed priority until `until`;
/// thread `i` starts on CPU `i % cpus` and each job works its whole wcet.
pub fn run_global(cpus: usize, plans: &[Plan], edf: bool, until: Time) -> RunOutcome {
    let make: SchedulerFactory =
        if edf { Arc::new(|| Box::new(GlobalEdf::new())) } else { Arc::new(|| Box::new(GlobalFp::new())) };
    run_global_under(cpus, plans, make, until)
}

/// [`run_global`] under the policy `make` builds.
pub fn run_global_under(cpus: usize, plans: &[Plan], make: SchedulerFactory, until: Time) -> RunOutcome {
    let mut rt = Runtime::simulated(cpus);
    rt.set_scheduler(move || make());
    for (i, &(t, c, d, phase, p)) in plans.iter().enumerate() {
        let spec = ThreadSpec::new(format!("t{i}"))
            .periodic(unit(t))
            .wcet(unit(c))
            .deadline(unit(d))
            .phase(unit(phase))
            .priority(p)
            .cpu(i % cpus);
        rt.spawn(spec, move |cx| cx.work(unit(c))).unwrap();
    }
    rt.run_until(until).unwrap()
}
