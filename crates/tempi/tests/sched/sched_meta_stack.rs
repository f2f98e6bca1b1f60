//! Stacking a scheduler during the run (`Ctx::stack_scheduler`) and un-stacking it
//! (`Ctx::unstack_scheduler`), in virtual time: decisions change from the instant of stacking
//! and not before, the built-in decision comes back from the instant of un-stacking, events a
//! stacked scheduler asks for are reported from then on (with exact urgencies), and misuse is
//! an error, not a panic.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::policy::sched::{SchedInfo, Scheduler, StackedScheduler, Vacant, WaitInheritance};
use tempi::sync::SemSpec;
use tempi::{Error, Runtime, ThreadSpec, Time};

/// Never preempts: a woken thread waits for the running one to give up the CPU.
struct NoPreempt {
    prev: Box<dyn Scheduler>,
}

impl StackedScheduler for NoPreempt {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn name(&self) -> &str {
        "no-preempt"
    }
    fn should_preempt(&self, _running: &SchedInfo, _woken: &SchedInfo) -> bool {
        false
    }
    fn take_prev(&mut self) -> Option<Box<dyn Scheduler>> {
        Some(std::mem::replace(&mut self.prev, Box::new(Vacant)))
    }
}

/// `low` (1) computes 2 ms (done at 3 ms), stacks [`NoPreempt`], computes 4 ms, un-stacks,
/// yields and computes 4 ms more; `high` (9) is released at 1, 5 and 9 ms for 1 ms each.
/// Without stacking `high` preempts at each release (and `low` yields at 8 ms). Stacked, the
/// release at 1 ms (before the stacking) still preempts, the one at 5 ms (after it) waits
/// until `low` un-stacks and yields at 7 ms, and the one at 9 ms (after un-stacking) preempts
/// again.
#[test]
fn stacking_mid_run_changes_decisions_from_that_instant_only() {
    let mut runs = Vec::new();
    for stack in [false, true] {
        let mut rt = Runtime::simulated(1);
        let names = Arc::new(Mutex::new(Vec::new()));
        let n = names.clone();
        rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
            cx.work(ms(2));
            if stack {
                cx.stack_scheduler(|prev| Box::new(NoPreempt { prev })).unwrap();
            }
            n.lock().unwrap().push((cx.now(), stack));
            cx.work(ms(4));
            if stack {
                cx.unstack_scheduler().unwrap();
            }
            cx.yield_now();
            cx.work(ms(4));
        })
        .unwrap();
        let high = ThreadSpec::new("high").priority(9).periodic(ms(4)).phase(ms(1)).max_jobs(3);
        rt.spawn(high, |cx| cx.work(ms(1))).unwrap();
        runs.push(segments(&rt.run().unwrap()));
        assert_eq!(names.lock().unwrap()[0].0, Time::from_millis(3));
    }
    assert_eq!(
        runs[0],
        [
            "low:0-1:preempt",
            "high:1-2:done",
            "low:2-5:preempt",
            "high:5-6:done",
            "low:6-8:yield",
            "low:8-9:preempt",
            "high:9-10:exit",
            "low:10-13:exit"
        ]
    );
    assert_eq!(
        runs[1],
        [
            "low:0-1:preempt",
            "high:1-2:done",
            "low:2-7:yield",
            "high:7-8:done",
            "low:8-9:preempt",
            "high:9-10:exit",
            "low:10-13:exit"
        ]
    );
}

/// A blocking before [`WaitInheritance`] is stacked lends nothing (PROCURE was not asked
/// for then, and is not reported afterwards); one after it lends the waiter's urgency; un-stacking
/// withdraws that lend at once.
///
/// `low` (1) takes the unit at 0; `high` (9) blocks at 1: `low` stays at 1. `low` stacks the
/// inheritance at 2 (still 1), gives the unit back (`high` runs 2-3, then sleeps to 4), takes
/// it again at 3; `high` blocks at 4 and lends 9; `low` un-stacks at 5 and is back at 1.
#[test]
fn inheritance_stacked_mid_run_lends_from_then_on_and_unstacking_withdraws_it() {
    let mut rt = Runtime::simulated(1);
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 1)).unwrap());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s1, s2, log) = (s.clone(), s.clone(), seen.clone());
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        let note = |what: &str| {
            log.lock().unwrap().push(format!("{what}@{}:{}", cx.now().as_nanos() / 1_000_000, cx.urgency().0))
        };
        s1.procure(cx).unwrap();
        cx.work(ms(2));
        note("blocked-before");
        cx.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev))).unwrap();
        note("stacked");
        s1.vacate(cx).unwrap();
        s1.procure(cx).unwrap();
        note("again");
        cx.work(ms(2));
        note("lent");
        cx.unstack_scheduler().unwrap();
        note("unstacked");
        s1.vacate(cx).unwrap();
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("high").priority(9), move |cx| {
        cx.sleep(ms(1));
        s2.procure(cx).unwrap();
        cx.work(ms(1));
        s2.vacate(cx).unwrap();
        cx.sleep_until(Time::from_millis(4));
        s2.procure(cx).unwrap();
        cx.work(ms(1));
        s2.vacate(cx).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), ["blocked-before@2:1", "stacked@2:1", "again@3:1", "lent@5:9", "unstacked@5:1"]);
    assert_eq!(
        segments(&out),
        [
            "high:0-0:sleep",
            "low:0-1:preempt",
            "high:1-1:block",
            "low:1-2:preempt",
            "high:2-3:sleep",
            "low:3-4:preempt",
            "high:4-4:block",
            "low:4-5:preempt",
            "high:5-6:exit",
            "low:6-6:exit"
        ]
    );
}

/// Claims to be global, which its scheduler is not; gives the one below back.
struct WrongGlobal {
    prev: Box<dyn Scheduler>,
}

impl StackedScheduler for WrongGlobal {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn global(&self) -> bool {
        true
    }
    fn take_prev(&mut self) -> Option<Box<dyn Scheduler>> {
        Some(std::mem::replace(&mut self.prev, Box::new(Vacant)))
    }
}

/// Un-stacking the bottom, and stacking a scheduler that changes `global()`, are errors; the
/// CPU keeps its scheduler and the run goes on.
#[test]
fn misuse_of_stacking_is_an_error_and_the_run_goes_on() {
    let mut rt = Runtime::simulated(1);
    let results = Arc::new(Mutex::new(Vec::new()));
    let r = results.clone();
    rt.spawn(ThreadSpec::new("t").priority(3), move |cx| {
        let bottom = cx.unstack_scheduler();
        let wrong = cx.stack_scheduler(|prev| Box::new(WrongGlobal { prev }));
        cx.work(ms(1));
        r.lock().unwrap().push((bottom, wrong, cx.unstack_scheduler().is_err()));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("u").priority(2), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    let got = results.lock().unwrap();
    assert!(matches!(&got[0].0, Err(Error::InvalidConfig(m)) if m.contains("not stacked")), "{:?}", got[0].0);
    assert!(matches!(&got[0].1, Err(Error::InvalidConfig(m)) if m.contains("global")), "{:?}", got[0].1);
    assert!(got[0].2, "the fixed-priority scheduler is back at the bottom");
    assert_eq!(segments(&out), ["t:0-1:exit", "u:1-2:exit"]);
}

/// A closure that panics leaves the CPU without a scheduler: the run stops with an error
/// instead of aborting the process.
#[test]
fn a_panicking_stacking_closure_stops_the_run_with_an_error() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), |cx| {
        let r = cx.stack_scheduler(|_prev| panic!("no scheduler today"));
        assert!(matches!(r, Err(Error::InvalidConfig(_))));
    })
    .unwrap();
    match rt.run() {
        Err(Error::InvalidConfig(m)) => assert!(m.contains("no usable scheduler"), "{m}"),
        other => panic!("expected the run to stop with InvalidConfig, got {other:?}"),
    }
}
