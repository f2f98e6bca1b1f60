//! The decisions a policy makes that the kernel applies: the urgency a lock ceiling stands for
//! ([`Scheduler::ceiling_urgency`]) and the urgency a constant bandwidth server's member runs
//! at ([`Scheduler::served_urgency`]). Each test runs the same workload under the built-in
//! answer and under a stacked scheduler that answers otherwise, and asserts both exact
//! schedules, so a kernel that made the decision itself would fail one of them.

use crate::common;

use std::sync::Arc;

use common::{ms, segments};
use tempi::policy::lock::LockCeiling;
use tempi::policy::sched::{Edf, FixedPriority, SchedInfo, Scheduler, StackedScheduler, Urgency};
use tempi::sync::LockSpec;
use tempi::{Budget, Runtime, ThreadSpec, Time};

/// Stacked over fixed priority: every ceiling stands ten priority levels higher.
struct HighCeilings(Box<dyn Scheduler>);
impl StackedScheduler for HighCeilings {
    fn prev(&self) -> &dyn Scheduler {
        &*self.0
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.0
    }
    fn ceiling_urgency(&self, ceiling: &LockCeiling, _now: Time) -> Urgency {
        Urgency::from_priority(ceiling.priority() + 10)
    }
}

#[test]
fn sched_ceiling_urgency_is_the_schedulers_answer() {
    let run = |raise: bool| {
        let mut rt = Runtime::simulated(1);
        rt.set_scheduler(|| Box::new(FixedPriority::new()));
        if raise {
            rt.stack_scheduler(|prev| Box::new(HighCeilings(prev)));
        }
        let table = Arc::new(rt.create_mutex((), LockSpec::new("table").protocol("pcp").ceiling(3)).unwrap());
        let log = Arc::new(rt.create_mutex((), LockSpec::new("log").protocol("pcp").ceiling(5)).unwrap());
        rt.spawn(ThreadSpec::new("low").priority(1).periodic(ms(100)).max_jobs(1), move |cx| {
            let _g = table.lock(cx).unwrap();
            cx.work(ms(3));
        })
        .unwrap();
        rt.spawn(ThreadSpec::new("high").priority(5).periodic(ms(100)).phase(ms(1)).max_jobs(1), move |cx| {
            let _g = log.lock(cx).unwrap();
            cx.work(ms(1));
        })
        .unwrap();
        segments(&rt.run().unwrap())
    };
    // Ceiling 3 is below `high`'s priority: it takes `log` at once and preempts `low`.
    assert_eq!(run(false), ["low:0-1:preempt", "high:1-2:exit", "low:2-4:exit"]);
    // Raised to 13, `table`'s ceiling refuses `high` until `low` releases it at 3 ms.
    assert_eq!(run(true), ["low:0-1:preempt", "high:1-1:block", "low:1-3:preempt", "high:3-4:exit", "low:4-4:exit"]);
}

/// Stacked over EDF: a constant bandwidth server's members keep their own deadlines.
struct OwnDeadlines(Box<dyn Scheduler>);
impl StackedScheduler for OwnDeadlines {
    fn prev(&self) -> &dyn Scheduler {
        &*self.0
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.0
    }
    fn served_urgency(&self, member: &SchedInfo, _server_deadline: Time) -> Urgency {
        self.0.base_urgency(member)
    }
}

/// EDF: a periodic task (C = 2, T = 4) and an aperiodic job of 4 ms at 0 with a relative
/// deadline of 3 ms, in a constant bandwidth server of 2 every 5.
fn served_run(own_deadlines: bool) -> tempi::RunOutcome {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Edf::new()));
    if own_deadlines {
        rt.stack_scheduler(|prev| Box::new(OwnDeadlines(prev)));
    }
    rt.spawn(ThreadSpec::new("task").periodic(ms(4)).max_jobs(3), |cx| cx.work(ms(2))).unwrap();
    let ap = rt.spawn(ThreadSpec::new("ap").deadline(ms(3)), |cx| cx.work(ms(4))).unwrap();
    let s = rt.create_set("cbs", 0).unwrap();
    rt.add_to_set(s, ap).unwrap();
    rt.set_budget(s, Budget::constant_bandwidth_server(ms(2), ms(5))).unwrap();
    rt.run().unwrap()
}

#[test]
fn sched_served_urgency_is_the_schedulers_answer() {
    // The built-in answer: the server deadline (5, then 10), so the task's jobs go first each
    // time their deadline is earlier.
    let out = served_run(false);
    assert_eq!(segments(&out), ["task:0-2:done", "ap:2-4:preempt", "task:4-6:done", "ap:6-8:exit", "task:8-10:exit"]);
    // Members by their own deadline (3): the aperiodic job runs through, and the task's first
    // job, due at 4, misses.
    let out = served_run(true);
    assert_eq!(segments(&out)[0], "ap:0-4:exit");
    assert_eq!(out.thread_named("task").unwrap().stats.misses, 1);
}
