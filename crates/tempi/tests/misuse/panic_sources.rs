//! A panic of code the kernel calls ends the run with [`Error::Panicked`], which says what
//! panicked: the scheduling policy, a lock policy, a handler, a hook or a dispatcher, in
//! `source` and in words in `what`. A thread body's panic is not among them: it ends only its
//! thread.

use crate::common;

use std::sync::Arc;

use common::ms;
use tempi::policy::lock::{self, LockPolicy, LockView};
use tempi::policy::sched::{FixedPriority, ReadyReason, SchedInfo, Scheduler, Urgency};
use tempi::sync::LockSpec;
use tempi::{Config, Error, PanicSource, Runtime, ThreadId, ThreadOutcome, ThreadSpec, Time, TimerSpec};

/// Refuses nothing until asked, then panics.
struct Exploding;
impl LockPolicy for Exploding {
    fn name(&self) -> &str {
        "exploding"
    }
    fn may_acquire(&self, _requester: &SchedInfo, _lock: &LockView) -> bool {
        panic!("no answer")
    }
}

/// Fails when asked whether its lock's waiters lend their urgency, which the kernel asks once,
/// when it creates the lock (while it is built, for a lock created on the runtime).
struct BadAtCreation;
impl LockPolicy for BadAtCreation {
    fn name(&self) -> &str {
        "bad-at-creation"
    }
    fn inherits(&self) -> bool {
        panic!("cannot tell")
    }
}

fn panicked(r: Result<tempi::RunOutcome, Error>) -> (PanicSource, String, String) {
    match r {
        Err(Error::Panicked { source, what, message }) => (source, what, message),
        other => panic!("expected a panicked run, got {other:?}"),
    }
}

#[test]
fn panic_source_a_lock_policy_is_named_as_such() {
    lock::register("exploding", || Box::new(Exploding)).unwrap();
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex((), LockSpec::new("door").protocol("exploding")).unwrap());
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        cx.work(ms(1));
        let _g = m.lock(cx).unwrap();
    })
    .unwrap();
    let err = rt.run().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the lock policy `exploding` of lock `door` panicked: no answer; the run was stopped and its threads unwound"
    );
    let (source, what, message) = panicked(Err(err));
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::LockPolicy, "the lock policy `exploding` of lock `door`", "no answer")
    );
}

#[test]
fn panic_source_a_lock_policy_failing_while_the_kernel_is_built() {
    lock::register("bad-at-creation", || Box::new(BadAtCreation)).unwrap();
    let mut rt = Runtime::simulated(1);
    let _m = rt.create_mutex((), LockSpec::new("gate").protocol("bad-at-creation")).unwrap();
    rt.spawn(ThreadSpec::new("t"), |cx| cx.work(ms(1))).unwrap();
    let (source, what, message) = panicked(rt.run());
    assert_eq!(source, PanicSource::LockPolicy);
    assert_eq!(message, "cannot tell");
    assert_eq!(what, "the lock policy of a lock being created, while the kernel was built");
}

/// Fixed priorities, failing at its third ready thread.
struct Broken(FixedPriority, u32);
impl Scheduler for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        self.0.base_urgency(t)
    }
    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
        self.1 += 1;
        if self.1 == 3 {
            panic!("policy failed");
        }
        self.0.on_ready(t, why)
    }
    fn on_yield(&mut self, t: &SchedInfo) {
        self.0.on_yield(t)
    }
    fn on_blocked(&mut self, t: &SchedInfo) {
        self.0.on_blocked(t)
    }
    fn on_removed(&mut self, t: ThreadId) {
        self.0.on_removed(t)
    }
    fn on_urgency_changed(&mut self, t: &SchedInfo, old: Urgency) {
        self.0.on_urgency_changed(t, old)
    }
    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        self.0.pick_next(now)
    }
}

#[test]
fn panic_source_the_scheduler_is_named_alone() {
    let cfg = Config::new(1).scheduler(|| Box::new(Broken(FixedPriority::new(), 0)));
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    rt.spawn(ThreadSpec::new("p").periodic(ms(5)), |cx| cx.work(ms(1))).unwrap();
    // Endless but for the failure, which `run` would refuse up front: no horizon instead.
    let (source, what, message) = panicked(rt.run_until(Time::MAX));
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::Scheduler, "the scheduler `broken`", "policy failed")
    );
}

#[test]
fn panic_source_the_scheduler_factory_is_the_scheduler() {
    let cfg = Config::new(1).scheduler(|| panic!("no scheduler"));
    let rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    let (source, what, _) = panicked(rt.run());
    assert_eq!((source, what.as_str()), (PanicSource::Scheduler, "the scheduler factory"));
}

#[test]
fn panic_source_a_handler_and_not_a_thread_body() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("w"), |cx| cx.work(ms(2))).unwrap();
    rt.add_timer(TimerSpec::at(Time::from_millis(1)), |_| panic!("bad handler")).unwrap();
    let (source, what, _) = panicked(rt.run());
    assert_eq!((source, what.as_str()), (PanicSource::Handler, "the handler of timing event 0"));

    // A thread body's panic ends its thread only: the run goes on and succeeds.
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("body"), |_| panic!("body failed")).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(t).unwrap().outcome, Some(ThreadOutcome::Panicked("body failed".into())));
}
