//! A set's budget exhaustions and overruns broken down by member thread, exact in virtual
//! time, under `notify` (members run on past the budget), `suspend` (they stop at once) and on
//! two CPUs.

use crate::common;

use common::ms;
use tempi::policy::budget::Suspend;
use tempi::{Budget, MemberBudgetCounts, Replenishment, Runtime, ThreadSpec, Time};

fn counts(thread: tempi::ThreadId, exhaustions: u64, overruns: u64, overrun_ms: u64) -> MemberBudgetCounts {
    MemberBudgetCounts { thread: Some(thread), exhaustions, overruns, overrun_time: ms(overrun_ms) }
}

/// One CPU, fixed priority, a set of `a` (3 ms), `b` (8 ms) and `c` (3 ms), in that order of
/// priority, with 2 ms of budget every 10 ms.
fn three_members(budget: Budget) -> (tempi::RunOutcome, [tempi::ThreadId; 3]) {
    let mut rt = Runtime::simulated(1);
    let spawn = |rt: &mut Runtime<_>, name: &str, prio: i32, work: u64| {
        rt.spawn(ThreadSpec::new(name).priority(prio), move |cx| cx.work(ms(work))).unwrap()
    };
    let a = spawn(&mut rt, "a", 3, 3);
    let b = spawn(&mut rt, "b", 2, 8);
    let c = spawn(&mut rt, "c", 1, 3);
    let set = rt.create_set("box", 0).unwrap();
    for t in [a, b, c] {
        rt.add_to_set(set, t).unwrap();
    }
    rt.set_budget(set, budget).unwrap();
    (rt.run_until(Time::from_millis(40)).unwrap(), [a, b, c])
}

#[test]
fn under_notify_each_exhaustion_goes_to_the_member_running_and_overruns_to_those_that_ran_on() {
    // a runs [0, 3]: the budget runs out at 2 with a running, which runs on 1 ms; b runs
    // [3, 11] past the budget until the refill at 10 (7 ms), then on the new budget; c runs
    // [11, 14]: the budget runs out again at 12 with c running, which runs on 2 ms.
    let (out, [a, b, c]) = three_members(Budget::new(ms(2)).replenish(Replenishment::Periodic { period: ms(10) }));
    let set = &out.sets[0];
    assert_eq!(set.exhaustions, 2);
    assert_eq!(set.exhaustions_idle, 0);
    assert_eq!(set.per_member, [counts(a, 1, 1, 1), counts(b, 0, 1, 7), counts(c, 1, 1, 2)]);
    let text = tempi::trace::report::summary_text(&out);
    assert!(
        text.contains(
            "set  member  exhaustions  overruns  overrun time\n\
             ------------------------------------------------\n\
             box       a            1         1         1.000\n\
             box       b            0         1         7.000\n\
             box       c            1         1         2.000\n"
        ),
        "{text}"
    );
    let v: serde_json::Value = serde_json::from_str(&tempi::trace::report::to_json(&out)).unwrap();
    assert_eq!(
        v["sets"][0]["per_member"],
        serde_json::json!([
            {"thread": "a", "exhaustions": 1, "overruns": 1, "overrun_time": 1_000_000},
            {"thread": "b", "exhaustions": 0, "overruns": 1, "overrun_time": 7_000_000},
            {"thread": "c", "exhaustions": 1, "overruns": 1, "overrun_time": 2_000_000},
        ])
    );
    assert!(v["sets"][0].get("exhaustions_idle").is_none());
}

#[test]
fn under_suspend_nobody_runs_past_the_budget() {
    // a [0, 2], held; refill at 10: a [10, 11] ends, b [11, 12], held; refill at 20: b [20, 22],
    // held; 30: b [30, 32], held; the run ends at 40 (b has 1 ms left).
    let (out, [a, b, c]) =
        three_members(Budget::new(ms(2)).replenish(Replenishment::Periodic { period: ms(10) }).action(Suspend));
    let set = &out.sets[0];
    assert_eq!(set.exhaustions, 4);
    assert_eq!(set.per_member, [counts(a, 1, 0, 0), counts(b, 3, 0, 0), counts(c, 0, 0, 0)]);
}

#[test]
fn members_running_at_once_on_two_cpus_each_count_the_exhaustion() {
    // a on CPU 0 and b on CPU 1 run together from 0: 4 ms of budget is used up at 2, both
    // running; a (3 ms) runs on 1 ms, b (5 ms) 3 ms. A manual budget is never refilled.
    let mut rt = Runtime::simulated(2);
    let a = rt.spawn(ThreadSpec::new("a").cpu(0), |cx| cx.work(ms(3))).unwrap();
    let b = rt.spawn(ThreadSpec::new("b").cpu(1), |cx| cx.work(ms(5))).unwrap();
    let set = rt.create_set("pair", 0).unwrap();
    rt.add_to_set(set, a).unwrap();
    rt.add_to_set(set, b).unwrap();
    rt.set_budget(set, Budget::new(ms(4))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.sets[0].exhaustions, 1);
    assert_eq!(out.sets[0].per_member, [counts(a, 1, 1, 1), counts(b, 1, 1, 3)]);
}
