//! Servers built on budgets, with exact response times: deferrable and sporadic servers under
//! fixed priority, the constant bandwidth server under EDF; temporal isolation of a runaway.

use crate::common;

use std::time::Duration;

use common::{ms, segments};
use tempi::policy::sched::Edf;
use tempi::{Budget, Runtime, ThreadSpec, Time, TimerSpec};

/// Periodic task (C = 3, T = 10, low priority) and an aperiodic request of 3 ms arriving at 2,
/// served by a server of capacity 2 and period 5 at the highest priority.
fn served(server: Budget) -> tempi::RunOutcome {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("task").periodic(ms(10)).priority(1).max_jobs(1), |cx| cx.work(ms(3))).unwrap();
    let ap =
        rt.spawn(ThreadSpec::new("ap").sporadic(Duration::ZERO).priority(3).max_jobs(1), |cx| cx.work(ms(3))).unwrap();
    rt.add_timer(TimerSpec::at(Time::from_millis(2)), move |ev| ev.release(ap).unwrap()).unwrap();
    let s = rt.create_set("server", 0).unwrap();
    rt.add_to_set(s, ap).unwrap();
    rt.set_budget(s, server).unwrap();
    rt.run().unwrap()
}

#[test]
fn budget_deferrable_server_response_time_is_exact() {
    // The capacity kept since 0 serves 2 ms at once; the rest waits for the refill at 5.
    let out = served(Budget::deferrable_server(ms(2), ms(5)));
    assert_eq!(segments(&out), ["task:0-2:preempt", "ap:2-4:suspend", "task:4-5:exit", "ap:5-6:exit"]);
    assert_eq!(out.thread_named("ap").unwrap().stats.response_max, Some(ms(4)));
}

#[test]
fn budget_sporadic_server_response_time_is_exact() {
    // The 2 ms consumed from 2 come back one period after the activation: at 7.
    let out = served(Budget::sporadic_server(ms(2), ms(5)));
    assert_eq!(segments(&out), ["task:0-2:preempt", "ap:2-4:suspend", "task:4-5:exit", "ap:7-8:exit"]);
    assert_eq!(out.thread_named("ap").unwrap().stats.response_max, Some(ms(6)));
    assert_eq!(out.sets[0].replenishments, 1);
}

#[test]
fn budget_sporadic_server_replenishes_what_each_interval_used() {
    // Two short requests: each interval's consumption returns one period after it began.
    let mut rt = Runtime::simulated(1);
    let ap = rt.spawn(ThreadSpec::new("ap").sporadic(Duration::ZERO).priority(3), |cx| cx.work(ms(1))).unwrap();
    rt.add_timer(TimerSpec::at(Time::from_millis(1)), move |ev| ev.release(ap).unwrap()).unwrap();
    rt.add_timer(TimerSpec::at(Time::from_millis(3)), move |ev| ev.release(ap).unwrap()).unwrap();
    let s = rt.create_set("ss", 0).unwrap();
    rt.add_to_set(s, ap).unwrap();
    let remaining = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let r = remaining.clone();
    rt.set_budget(
        s,
        Budget::sporadic_server(ms(2), ms(10)).on_event(move |e| {
            r.lock().unwrap().push((e.at.as_nanos() / 1_000_000, e.remaining.as_nanos() / 1_000_000))
        }),
    )
    .unwrap();
    rt.run_until(Time::from_millis(20)).unwrap();
    // Exhausted at 4 (1 + 1 ms used), refilled by 1 at 11 and by 1 at 13.
    assert_eq!(*remaining.lock().unwrap(), [(4, 0), (11, 1), (13, 2)]);
}

#[test]
fn budget_constant_bandwidth_server_postpones_its_deadline() {
    // EDF: periodic task C = 2, T = 4; an aperiodic job of 4 ms at 0 in a CBS of 2 every 5.
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Edf::new()));
    rt.spawn(ThreadSpec::new("task").periodic(ms(4)).max_jobs(3), |cx| cx.work(ms(2))).unwrap();
    let ap = rt.spawn(ThreadSpec::new("ap"), |cx| cx.work(ms(4))).unwrap();
    let s = rt.create_set("cbs", 0).unwrap();
    rt.add_to_set(s, ap).unwrap();
    rt.set_budget(s, Budget::constant_bandwidth_server(ms(2), ms(5))).unwrap();
    let out = rt.run().unwrap();
    // Server deadline 5, then 10 after the first 2 ms: the task's jobs (deadlines 4, 8, 12)
    // go first each time their deadline is earlier.
    assert_eq!(segments(&out), ["task:0-2:done", "ap:2-4:preempt", "task:4-6:done", "ap:6-8:exit", "task:8-10:exit"]);
    assert_eq!(out.total_misses(), 0);
}

#[test]
fn budget_runaway_member_is_isolated() {
    // A member that never stops computing gets its 2 ms per 10 ms, no more; the periodic
    // threads outside its set keep every deadline.
    let mut rt = Runtime::simulated(1);
    let runaway = rt
        .spawn(ThreadSpec::new("runaway").priority(9), |cx| loop {
            cx.work(ms(1));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("control").periodic(ms(10)).priority(5), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("logger").periodic(ms(20)).priority(4), |cx| cx.work(ms(4))).unwrap();
    let s = rt.create_set("sandbox", 0).unwrap();
    rt.add_to_set(s, runaway).unwrap();
    rt.set_budget(s, Budget::deferrable_server(ms(2), ms(10))).unwrap();
    let out = rt.run_until(Time::from_millis(200)).unwrap();
    assert_eq!(out.thread(runaway).unwrap().stats.cpu_time, ms(40));
    assert_eq!(out.sets[0].exhaustions, 20);
    assert_eq!(out.total_misses(), 0);
    assert_eq!(out.thread_named("control").unwrap().stats.completed, 20);
}
