//! The direct thread-to-thread switch (`Config::direct_switch`): a yield on a one-CPU kernel
//! handled on the yielding thread's stack, which switches straight to the next thread when
//! nothing else is due. It is taken (counted in `RunOutcome::direct_switches`), declined
//! when something is due or switch costs are set, and changes nothing a run shows: the same
//! trace, outcomes and CPU times as the switch through the dispatcher. A panic in a thread
//! reached by a direct switch is caught as any thread's; threads suspended after one are
//! unwound at the end of the run; a policy panicking on a thread's stack ends the run with
//! the usual error.

use crate::common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{ms, us};
use tempi::clock::VirtualClock;
use tempi::policy::sched::{FixedPriority, ReadyReason, RoundRobin, SchedInfo, Scheduler, Urgency};
use tempi::{Config, Costs, Error, RunOutcome, Runtime, ThreadId, ThreadOutcome, ThreadSpec, Time};

/// Threads of a mixed load: yield loops at one priority (with some `work` between rounds),
/// a periodic thread above them whose releases fall due in the middle of the loops.
fn mixed(config: Config, until: Time) -> RunOutcome {
    let mut rt = Runtime::<VirtualClock>::new(config.trace_capacity(1 << 16)).unwrap();
    for k in 0..3u64 {
        rt.spawn(ThreadSpec::new(format!("y{k}")).priority(2), move |cx| {
            for round in 0..40u64 {
                for _ in 0..(3 + k) {
                    cx.yield_now();
                }
                cx.work(us(7 + 3 * k + round % 5));
            }
        })
        .unwrap();
    }
    rt.spawn(ThreadSpec::new("p").priority(5).periodic(us(130)), |cx| {
        cx.yield_now();
        cx.work(us(11));
        cx.yield_now();
    })
    .unwrap();
    rt.run_until(until).unwrap()
}

fn same_run(a: &RunOutcome, b: &RunOutcome) {
    assert_eq!(a.trace.len(), b.trace.len());
    for (x, y) in a.trace.iter().zip(&b.trace) {
        // Ids of two runtimes differ in their runtime's tag: compare what they show.
        assert_eq!(
            (x.time, x.cpu, format!("{:?}", x.thread), x.job, x.kind, x.arg),
            (y.time, y.cpu, format!("{:?}", y.thread), y.job, y.kind, y.arg)
        );
    }
    assert_eq!(a.threads.len(), b.threads.len());
    for (x, y) in a.threads.iter().zip(&b.threads) {
        assert_eq!((&x.name, &x.outcome, x.stats.cpu_time), (&y.name, &y.outcome, y.stats.cpu_time));
    }
    assert_eq!(a.end, b.end);
}

#[test]
fn yields_switch_directly_and_the_run_is_the_same() {
    let until = Time::from_millis(20);
    let configs: [fn() -> Config; 2] = [
        || Config::new(1).verify(true),
        || Config::new(1).verify(true).scheduler(|| Box::new(RoundRobin::new(us(40)))),
    ];
    for config in configs {
        let direct = mixed(config(), until);
        let through = mixed(config().direct_switch(false), until);
        assert!(direct.direct_switches > 0, "the direct switch was taken");
        assert_eq!(through.direct_switches, 0);
        same_run(&direct, &through);
        assert!(direct.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed) || t.name == "p"));
    }
}

#[test]
fn switch_costs_decline_the_direct_switch_and_the_run_is_the_same() {
    let costs = Costs { context_switch: us(2), ..Costs::default() };
    let until = Time::from_millis(20);
    let direct = mixed(Config::new(1).verify(true).costs(costs), until);
    let through = mixed(Config::new(1).verify(true).costs(costs).direct_switch(false), until);
    // Every switch to another thread pays its cost first, as `work`: the run loop's business.
    assert_eq!(direct.direct_switches, 0);
    same_run(&direct, &through);
}

#[test]
fn several_cpus_never_switch_directly() {
    let mut rt = Runtime::<VirtualClock>::new(Config::new(2)).unwrap();
    for cpu in [0, 0, 1, 1] {
        rt.spawn(ThreadSpec::new("y").cpu(cpu), |cx| {
            for _ in 0..10 {
                cx.yield_now();
            }
        })
        .unwrap();
    }
    let out = rt.run_until(Time::from_millis(1)).unwrap();
    assert_eq!(out.direct_switches, 0);
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
}

#[test]
fn a_panic_in_a_thread_reached_by_a_direct_switch_is_caught() {
    let mut rt = Runtime::simulated(1);
    let a = rt
        .spawn(ThreadSpec::new("a"), |cx| {
            for _ in 0..10 {
                cx.yield_now();
            }
        })
        .unwrap();
    let b = rt
        .spawn(ThreadSpec::new("b"), |cx| {
            for _ in 0..3 {
                cx.yield_now();
            }
            panic!("b gives up");
        })
        .unwrap();
    let out = rt.run_until(Time::from_millis(1)).unwrap();
    assert!(out.direct_switches >= 3, "b was resumed by direct switches ({})", out.direct_switches);
    assert_eq!(out.thread(b).unwrap().outcome, Some(ThreadOutcome::Panicked("b gives up".to_string())));
    assert_eq!(out.thread(a).unwrap().outcome, Some(ThreadOutcome::Completed));
}

/// Counts its drops.
struct Counted(Arc<AtomicU32>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn threads_suspended_after_a_direct_switch_are_unwound_at_the_end() {
    let drops = Arc::new(AtomicU32::new(0));
    let mut rt = Runtime::simulated(1);
    for name in ["a", "b", "c"] {
        let d = drops.clone();
        rt.spawn(ThreadSpec::new(name), move |cx| {
            let _guard = Counted(d.clone());
            loop {
                for _ in 0..5 {
                    cx.yield_now();
                }
                cx.work(us(10));
            }
        })
        .unwrap();
    }
    let out = rt.run_until(Time::from_millis(1)).unwrap();
    assert!(out.direct_switches > 0);
    assert!(out.threads.iter().all(|t| t.outcome.is_none()), "alive at the horizon");
    assert_eq!(drops.load(Ordering::SeqCst), 3, "every thread was unwound");
}

/// Fixed priorities, except that the `n`-th fused yield-and-pick panics.
struct Breaks(FixedPriority, u32);

impl Scheduler for Breaks {
    fn name(&self) -> &str {
        "breaks"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        self.0.base_urgency(t)
    }
    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
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
    fn on_yield_pick(&mut self, t: &SchedInfo, now: Time) -> Option<ThreadId> {
        self.1 -= 1;
        if self.1 == 0 {
            panic!("policy failed on a yield");
        }
        self.0.on_yield_pick(t, now)
    }
}

#[test]
fn a_policy_panicking_on_a_threads_stack_ends_the_run_with_an_error() {
    let drops = Arc::new(AtomicU32::new(0));
    let cfg = Config::new(1).scheduler(|| Box::new(Breaks(FixedPriority::new(), 5)));
    let mut rt = Runtime::<VirtualClock>::new(cfg).unwrap();
    for name in ["a", "b"] {
        let d = drops.clone();
        rt.spawn(ThreadSpec::new(name), move |cx| {
            let _guard = Counted(d.clone());
            for _ in 0..10 {
                cx.yield_now();
            }
        })
        .unwrap();
    }
    match rt.run_until(Time::from_millis(1)) {
        Err(Error::Panicked { what, message, .. }) => {
            assert!(what.contains("scheduler `breaks`"), "{what}");
            assert_eq!(message, "policy failed on a yield");
        }
        other => panic!("expected a panic error, got {:?}", other.map(|o| o.end)),
    }
    assert_eq!(drops.load(Ordering::SeqCst), 2, "both threads were unwound");
}

#[test]
fn a_lone_yielder_goes_on_without_a_switch() {
    let mut rt = Runtime::simulated(1);
    let t = rt
        .spawn(ThreadSpec::new("alone"), |cx| {
            for _ in 0..100 {
                cx.yield_now();
            }
            cx.work(ms(1));
        })
        .unwrap();
    let out = rt.run_until(Time::from_millis(5)).unwrap();
    assert_eq!(out.thread(t).unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread(t).unwrap().stats.cpu_time, Duration::from_millis(1));
    assert_eq!(out.direct_switches, 0, "picked again: no switch at all");
}

/// A client calling a process of lower priority on one CPU, with a periodic thread above
/// both whose releases fall in the middle of the calls; the process answers with
/// `Flow::Reply` (reply and read fused) or with `reply` and `Flow::Continue`.
fn calls(config: Config, fused: bool) -> RunOutcome {
    use tempi::message::Message;
    let mut rt = Runtime::<VirtualClock>::new(config.trace_capacity(1 << 16)).unwrap();
    let server = rt
        .spawn_process(ThreadSpec::new("server").priority(1), move |cx, m| {
            if m.id % 7 == 3 {
                cx.work(us(3));
            }
            common::echo(cx, m, fused)
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
        for i in 1..400i64 {
            let answer = cx.call(server, Message::new(i, i, 0)).expect("call");
            assert_eq!(answer.id, i);
            if i % 11 == 0 {
                cx.work(us(5));
            }
        }
        cx.call(server, Message::new(0, 0, 0)).expect("last call");
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("p").priority(5).periodic(us(170)), |cx| cx.work(us(9))).unwrap();
    rt.run_until(Time::from_millis(20)).unwrap()
}

#[test]
fn calls_and_replies_switch_directly_and_the_run_is_the_same() {
    for fused in [false, true] {
        let direct = calls(Config::new(1).verify(true), fused);
        let through = calls(Config::new(1).verify(true).direct_switch(false), fused);
        assert!(direct.direct_switches > 0, "the direct switch was taken (fused: {fused})");
        same_run(&direct, &through);
        assert!(direct.threads.iter().filter(|t| t.name != "p").all(|t| t.outcome == Some(ThreadOutcome::Completed)));
        let costs = Costs { context_switch: us(1), ..Costs::default() };
        let direct = calls(Config::new(1).verify(true).costs(costs), fused);
        let through = calls(Config::new(1).verify(true).costs(costs).direct_switch(false), fused);
        assert_eq!(direct.direct_switches, 0);
        same_run(&direct, &through);
    }
}

#[test]
fn real_time_yields_and_calls_switch_directly_and_os_backed_threads_are_left_to_the_dispatcher() {
    use tempi::clock::RealClock;
    use tempi::message::Message;
    let mut rt = Runtime::<RealClock>::new(Config::new(1).pin(false).trace_capacity(0)).unwrap();
    let mut names = Vec::new();
    for (name, os) in [("a", false), ("b", false), ("os", true)] {
        let spec = if os { ThreadSpec::new(name).os_backed() } else { ThreadSpec::new(name) };
        names.push(
            rt.spawn(spec, |cx| {
                for _ in 0..200 {
                    cx.yield_now();
                }
            })
            .unwrap(),
        );
    }
    let server = rt.spawn_process(ThreadSpec::new("server").priority(1), |cx, m| common::echo(cx, m, false)).unwrap();
    let client = rt
        .spawn(ThreadSpec::new("client").priority(2), move |cx| {
            for i in 1..200 {
                assert_eq!(cx.call(server, Message::new(i, i, 0)).expect("call").value, i);
            }
            cx.call(server, Message::new(0, 0, 0)).expect("last call");
        })
        .unwrap();
    let out = rt.run().unwrap();
    assert!(out.direct_switches > 0);
    for id in names.into_iter().chain([server, client]) {
        assert_eq!(out.thread(id).unwrap().outcome, Some(ThreadOutcome::Completed));
    }
}
