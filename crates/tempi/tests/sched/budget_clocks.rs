//! Execution-time clocks, thread sets, execution-time timers and budget actions, in virtual
//! time with exact values. Policies: fp, rr.

use crate::common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{ms, segments, us};
use tempi::policy::budget::{Demote, Kill, Notify, Suspend};
use tempi::policy::sched::RoundRobin;
use tempi::trace::TraceKind;
use tempi::{Budget, BudgetEventKind, Error, Replenishment, Runtime, ThreadOutcome, ThreadSpec, Time};

type Log = Arc<Mutex<Vec<(String, Duration)>>>;

#[test]
fn budget_clocks_read_exactly_around_preemption_and_migration() {
    let log: Log = Arc::default();
    let mut rt = Runtime::simulated(1);
    let s1 = rt.create_set("s1", 0).unwrap();
    let s2 = rt.create_set("s2", 0).unwrap();
    let l = log.clone();
    let a = rt
        .spawn(ThreadSpec::new("a").priority(1), move |cx| {
            cx.work(ms(3)); // preempted by b over [2, 3]
            let me = cx.id();
            l.lock().unwrap().push(("a@4".into(), cx.thread_cpu_time(me).unwrap()));
            l.lock().unwrap().push(("s1@4".into(), cx.set_cpu_time(s1).unwrap()));
            cx.remove_from_set(s1, me).unwrap();
            cx.add_to_set(s2, me).unwrap();
            cx.work(ms(1));
            l.lock().unwrap().push(("a@5".into(), cx.thread_cpu_time(me).unwrap()));
            l.lock().unwrap().push(("s1@5".into(), cx.set_cpu_time(s1).unwrap()));
            l.lock().unwrap().push(("s2@5".into(), cx.set_cpu_time(s2).unwrap()));
        })
        .unwrap();
    let l = log.clone();
    let b = rt
        .spawn(ThreadSpec::new("b").priority(2).periodic(ms(10)).phase(ms(2)).max_jobs(1), move |cx| {
            let before = cx.set_cpu_time(s1).unwrap(); // a was charged when preempted
            cx.work(ms(1));
            l.lock().unwrap().push(("s1 seen by b@2".into(), before));
        })
        .unwrap();
    rt.add_to_set(s1, a).unwrap();
    rt.add_to_set(s2, b).unwrap();
    let out = rt.run().unwrap();
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log,
        [
            ("s1 seen by b@2".to_string(), ms(2)),
            ("a@4".into(), ms(3)),
            ("s1@4".into(), ms(3)),
            ("a@5".into(), ms(4)),
            ("s1@5".into(), ms(3)),
            ("s2@5".into(), ms(2)),
        ]
    );
    assert_eq!(out.sets[0].cpu_time, ms(3));
    assert_eq!(out.sets[1].cpu_time, ms(2));
}

#[test]
fn budget_running_partial_slice_is_readable_from_a_handler_instant() {
    // The set timer fires in the middle of a `work` call: the clock reads exactly its value.
    let seen = Arc::new(Mutex::new(None));
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("t"), |cx| cx.work(ms(10))).unwrap();
    let s = rt.create_set("s", 0).unwrap();
    rt.add_to_set(s, t).unwrap();
    let w = seen.clone();
    rt.arm_set_timer(s, us(3_500), move |ev| *w.lock().unwrap() = Some(ev.now())).unwrap();
    rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), Some(Time::from_micros(3_500)));
}

#[test]
fn budget_group_timer_fires_at_exact_consumption_while_members_interleave() {
    let fired = Arc::new(Mutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(RoundRobin::new(us(700))));
    let s = rt.create_set("pair", 0).unwrap();
    for name in ["x", "y"] {
        let t = rt.spawn(ThreadSpec::new(name), |cx| cx.work(ms(3))).unwrap();
        rt.add_to_set(s, t).unwrap();
    }
    // An outsider runs in between and must not count.
    rt.spawn(ThreadSpec::new("z"), |cx| cx.work(ms(2))).unwrap();
    let f = fired.clone();
    rt.arm_set_timer(s, ms(4), move |ev| f.lock().unwrap().push(ev.now())).unwrap();
    let out = rt.run().unwrap();
    // Slices: x 0-0.7, y 0.7-1.4, z 1.4-2.1, x 2.1-2.8, y 2.8-3.5, z 3.5-4.2, x 4.2-4.9,
    // y 4.9-5.6. The pair has 2.8 ms at 4.2, 3.5 ms at 4.9, and reaches 4 ms at 5.4, inside y.
    assert_eq!(*fired.lock().unwrap(), [Time::from_micros(5_400)]);
    assert_eq!(out.sets[0].cpu_time, ms(6));
}

#[test]
fn budget_group_timer_on_two_cpus_counts_both() {
    let fired = Arc::new(Mutex::new(Vec::new()));
    let mut rt = Runtime::simulated(2);
    let s = rt.create_set("wide", 0).unwrap();
    for cpu in 0..2 {
        let t = rt.spawn(ThreadSpec::new(format!("m{cpu}")).cpu(cpu), |cx| cx.work(ms(2))).unwrap();
        rt.add_to_set(s, t).unwrap();
    }
    let f = fired.clone();
    rt.arm_set_timer(s, ms(3), move |ev| f.lock().unwrap().push(ev.now())).unwrap();
    rt.run().unwrap();
    assert_eq!(*fired.lock().unwrap(), [Time::from_micros(1_500)]);
}

#[test]
fn budget_thread_timer_fires_on_thread_clock() {
    let fired = Arc::new(Mutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("t").priority(1), |cx| cx.work(ms(4))).unwrap();
    rt.spawn(ThreadSpec::new("hi").priority(2).periodic(ms(10)).phase(ms(1)).max_jobs(1), |cx| cx.work(ms(5))).unwrap();
    let f = fired.clone();
    rt.arm_thread_timer(t, ms(2), move |ev| f.lock().unwrap().push(ev.now())).unwrap();
    rt.run().unwrap();
    // t runs 0-1, is preempted 1-6, reaches 2 ms of CPU time at 7.
    assert_eq!(*fired.lock().unwrap(), [Time::from_millis(7)]);
}

#[test]
fn budget_double_membership_is_an_error() {
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    let a = rt.create_set("a", 0).unwrap();
    let b = rt.create_set("b", 0).unwrap();
    rt.add_to_set(a, t).unwrap();
    // Refused when asked, not when the run starts.
    assert_eq!(rt.add_to_set(b, t), Err(Error::AlreadyInSet { thread: t, set: a }));
    rt.run().unwrap();
}

/// A greedy one-shot thread (5 ms, in a set with 2 ms every 10 ms) above a background thread.
fn greedy(action: &str) -> (tempi::RunOutcome, Vec<(BudgetEventKind, Time)>) {
    let events = Arc::new(Mutex::new(Vec::new()));
    let e = events.clone();
    let mut rt = Runtime::simulated(1);
    let g = rt.spawn(ThreadSpec::new("greedy").priority(5), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("bg").priority(1), |cx| cx.work(ms(10))).unwrap();
    let s = rt.create_set("box", 0).unwrap();
    rt.add_to_set(s, g).unwrap();
    let budget = Budget::new(ms(2))
        .replenish(Replenishment::Periodic { period: ms(10) })
        .boxed_action(tempi::policy::budget::by_name(action).unwrap())
        .on_event(move |ev| e.lock().unwrap().push((ev.kind, ev.at)));
    rt.set_budget(s, budget).unwrap();
    let out = rt.run().unwrap();
    let events = events.lock().unwrap().clone();
    (out, events)
}

#[test]
fn budget_action_notify_only_reports() {
    let (out, events) = greedy("notify");
    assert_eq!(segments(&out), ["greedy:0-5:exit", "bg:5-15:exit"]);
    assert_eq!(
        events,
        [(BudgetEventKind::Exhausted, Time::from_millis(2)), (BudgetEventKind::Replenished, Time::from_millis(10))]
    );
    assert_eq!(out.sets[0].exhaustions, 1);
    let _ = Notify;
}

#[test]
fn budget_action_demote_runs_members_in_background() {
    let (out, _) = greedy("demote");
    assert_eq!(
        segments(&out),
        ["greedy:0-2:preempt", "bg:2-10:preempt", "greedy:10-12:preempt", "bg:12-14:exit", "greedy:14-15:exit"]
    );
    let _ = Demote;
}

#[test]
fn budget_action_suspend_holds_members_until_replenishment() {
    let (out, events) = greedy("suspend");
    assert_eq!(
        segments(&out),
        ["greedy:0-2:suspend", "bg:2-10:preempt", "greedy:10-12:suspend", "bg:12-14:exit", "greedy:20-21:exit"]
    );
    let kinds: Vec<_> = events.iter().map(|e| (e.0, e.1.as_nanos() / 1_000_000)).collect();
    assert_eq!(
        kinds,
        [
            (BudgetEventKind::Exhausted, 2),
            (BudgetEventKind::Replenished, 10),
            (BudgetEventKind::Exhausted, 12),
            (BudgetEventKind::Replenished, 20)
        ]
    );
    assert_eq!(out.trace.iter().filter(|r| r.kind == TraceKind::BudgetExhausted).count(), 2);
    let _ = Suspend;
}

#[test]
fn budget_action_kill_ends_members_at_a_task_boundary() {
    let (out, _) = greedy("kill");
    assert_eq!(segments(&out), ["greedy:0-2:exit", "bg:2-12:exit"]);
    assert_eq!(out.thread_named("greedy").unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(out.thread_named("bg").unwrap().outcome, Some(ThreadOutcome::Completed));
    let _ = Kill;
}

#[test]
fn budget_manual_replenish_and_add() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("t"), |cx| {
        let s = cx.create_set("s").unwrap();
        cx.add_to_set(s, cx.id()).unwrap();
        cx.set_budget(s, Budget::new(ms(1))).unwrap();
        cx.work(us(500));
        assert_eq!(cx.budget_remaining(s), Ok(us(500)));
        cx.add_budget(s, 1_000_000).unwrap();
        assert_eq!(cx.budget_remaining(s), Ok(us(1_500)));
        cx.replenish_budget(s, ms(4)).unwrap();
        cx.work(ms(4));
        assert_eq!(cx.budget_exhausted(s), Ok(true));
        assert_eq!(cx.budget_remaining(s), Ok(Duration::ZERO));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.threads[0].outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn budget_suspended_member_without_replenishment_stays_held() {
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("t"), |cx| cx.work(ms(3))).unwrap();
    let other = rt.spawn(ThreadSpec::new("other"), |cx| cx.work(ms(1))).unwrap();
    let s = rt.create_set("s", 0).unwrap();
    rt.add_to_set(s, t).unwrap();
    rt.set_budget(s, Budget::new(ms(1)).action(Suspend)).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["t:0-1:suspend", "other:1-2:exit"]);
    assert_eq!(out.thread(t).unwrap().outcome, None, "held forever: nothing replenishes it");
    assert_eq!(out.thread(other).unwrap().outcome, Some(ThreadOutcome::Completed));
}
