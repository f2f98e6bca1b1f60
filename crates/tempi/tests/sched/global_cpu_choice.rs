//! The CPU a global policy offers a woken thread (`Scheduler::select_cpu`): the default choice
//! in exact timelines, a policy's own choice changing which thread is preempted, a policy that
//! leaves the thread queued, and an impossible choice ending the run with an error.

use crate::common;

use common::{cpu_segments, ms};
use tempi::policy::sched::{default_cpu_choice, CpuChoice, GlobalFp, SchedInfo, Scheduler, StackedScheduler};
use tempi::{Error, RunOutcome, Runtime, ThreadSpec, Time};

/// A CPU choice: the policy below, the woken thread, the CPUs.
type Choice = fn(&dyn Scheduler, &SchedInfo, &CpuChoice<'_>) -> Option<usize>;

/// Global fixed priority with a CPU choice of its own.
struct Choosing {
    prev: Box<dyn Scheduler>,
    choose: Choice,
}

impl StackedScheduler for Choosing {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn select_cpu(&self, woken: &SchedInfo, cpus: &CpuChoice<'_>) -> Option<usize> {
        (self.choose)(&*self.prev, woken, cpus)
    }
}

/// Two CPUs: `mid` (priority 2) and `low` (priority 1) run 10 ms from 0; `high` (priority 3)
/// runs first (an instant, on CPU 0), sleeps 1 ms, then runs 1 ms. Segments in the order they
/// end.
fn run(choose: Option<Choice>) -> Result<RunOutcome, Error> {
    let mut rt = Runtime::simulated(2);
    match choose {
        Some(choose) => rt.set_scheduler(move || Box::new(Choosing { prev: Box::new(GlobalFp::new()), choose })),
        None => rt.set_scheduler(|| Box::new(GlobalFp::new())),
    }
    rt.spawn(ThreadSpec::new("mid").priority(2), |cx| cx.work(ms(10))).unwrap();
    rt.spawn(ThreadSpec::new("low").priority(1), |cx| cx.work(ms(10))).unwrap();
    rt.spawn(ThreadSpec::new("high").priority(3), |cx| {
        cx.sleep(ms(1));
        cx.work(ms(1));
    })
    .unwrap();
    rt.run_until(Time::from_millis(30))
}

#[test]
fn global_cpu_choice_by_default_preempts_the_least_urgent_thread() {
    let out = run(None).unwrap();
    assert_eq!(
        cpu_segments(&out),
        ["cpu0/high:0-0", "cpu1/low:0-1", "cpu1/high:1-2", "cpu0/mid:0-10", "cpu1/low:2-11"],
    );
    // The same through a wrapper whose choice is the default one.
    let out = run(Some(|prev, woken, cpus| default_cpu_choice(prev, woken, cpus))).unwrap();
    assert_eq!(
        cpu_segments(&out),
        ["cpu0/high:0-0", "cpu1/low:0-1", "cpu1/high:1-2", "cpu0/mid:0-10", "cpu1/low:2-11"],
    );
}

#[test]
fn global_cpu_choice_of_the_policy_decides_which_cpu_is_preempted() {
    // Always the first CPU not offered yet: `mid` is preempted instead of `low`, and takes
    // the CPU back when `high` ends.
    let out = run(Some(|_, _, cpus| cpus.iter().find(|v| !v.offered).map(|v| v.index))).unwrap();
    assert_eq!(
        cpu_segments(&out),
        ["cpu0/high:0-0", "cpu0/mid:0-1", "cpu0/high:1-2", "cpu1/low:0-10", "cpu0/mid:2-11"],
    );
    assert_eq!(out.thread_named("mid").unwrap().stats.migrations, 0);
}

#[test]
fn global_cpu_choice_none_leaves_the_thread_queued_until_a_cpu_frees() {
    // Never preempt (an idle CPU is still taken): `high` waits for `mid` to end at 10 ms.
    let out = run(Some(|_, _, cpus| cpus.iter().find(|v| v.running.is_none() && !v.offered).map(|v| v.index))).unwrap();
    assert_eq!(cpu_segments(&out), ["cpu0/high:0-0", "cpu0/mid:0-10", "cpu1/low:0-10", "cpu0/high:10-11"],);
}

#[test]
fn global_cpu_choice_of_a_cpu_the_run_does_not_have_is_an_error() {
    let err = run(Some(|_, _, _| Some(7))).unwrap_err();
    assert_eq!(err, Error::BadCpuChoice { scheduler: "global-fp".into(), cpu: 7, cpus: 2 });
    assert!(err.to_string().contains("chose CPU 7"), "{err}");
}
