//! Per-thread preemption on and off (`Ctx::preemption`) in virtual time: preemptions and the
//! end of a time slice held back while it is off and carried out exactly when it is switched
//! back on, nesting, blocking with it off, budgets that still apply, a global policy.

use crate::common;

use common::{ms, segments, us};
use tempi::policy::budget::{Demote, Suspend};
use tempi::policy::sched::{GlobalFp, RoundRobin};
use tempi::trace::TraceKind;
use tempi::{Budget, RunOutcome, Runtime, ThreadSpec, Time};

/// A thread of priority `p` with one job, released at `at_ms`.
fn released_at(name: &str, p: i32, at_ms: u64) -> ThreadSpec {
    ThreadSpec::new(name).priority(p).periodic(ms(100)).phase(ms(at_ms)).max_jobs(1)
}

/// The `PreemptionDeferred` records as (thread name, time in µs, arg).
fn deferred(out: &RunOutcome) -> Vec<(String, u64, u64)> {
    out.trace
        .iter()
        .filter(|r| r.kind == TraceKind::PreemptionDeferred)
        .map(|r| (out.thread(r.thread).unwrap().name.clone(), r.time.as_nanos() / 1_000, r.arg))
        .collect()
}

#[test]
fn preemption_off_keeps_the_cpu_past_a_more_urgent_release_until_switched_on() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("low").priority(1), |cx| {
        cx.work(ms(1));
        assert!(cx.preemption(false));
        cx.work(ms(3));
        assert!(!cx.preemption(true));
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(released_at("high", 5, 2), |cx| {
        assert_eq!(cx.now(), Time::from_millis(4));
        cx.work(ms(2));
    })
    .unwrap();
    let out = rt.run().unwrap();
    // Released at 2 ms, "high" waits until "low" switches preemption back on at 4 ms.
    assert_eq!(segments(&out), ["low:0-4:preempt", "high:4-6:exit", "low:6-7:exit"]);
    assert_eq!(deferred(&out), [("low".to_string(), 4_000, 0)]);
    assert_eq!(out.thread_named("low").unwrap().stats.preemptions, 1);
    // The Gantt chart marks the instant.
    let svg = tempi::trace::gantt::to_svg(&out);
    assert_eq!(svg.matches(r#"class="preemption-deferred""#).count(), 1);
    assert!(svg.contains("low: held-back preemption carried out at 4.000000ms"), "{svg}");
}

#[test]
fn preemption_on_throughout_preempts_at_the_release() {
    // The same threads without switching preemption off: the release preempts at once.
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("low").priority(1), |cx| {
        cx.work(ms(4));
        assert!(cx.preemption(true));
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(released_at("high", 5, 2), |cx| cx.work(ms(2))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["low:0-2:preempt", "high:2-4:exit", "low:4-7:exit"]);
    assert!(deferred(&out).is_empty());
}

#[test]
fn nested_sections_restore_the_old_setting_and_only_the_outer_one_preempts() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("low").priority(1), |cx| {
        let outer = cx.preemption(false);
        assert!(outer);
        cx.work(ms(1));
        let inner = cx.preemption(false);
        assert!(!inner);
        cx.work(ms(2)); // "high" is released at 2 ms
                        // Restoring the inner section's old value leaves preemption off.
        assert!(!cx.preemption(inner));
        cx.work(ms(1));
        assert!(!cx.preemption(outer));
        cx.work(ms(1));
        // Switching on when it is on already changes nothing.
        assert!(cx.preemption(true));
    })
    .unwrap();
    rt.spawn(released_at("high", 5, 2), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["low:0-4:preempt", "high:4-5:exit", "low:5-6:exit"]);
    assert_eq!(deferred(&out), [("low".to_string(), 4_000, 0)]);
}

#[test]
fn an_expired_slice_rotates_when_preemption_is_switched_on() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(RoundRobin::new(ms(1))));
    rt.spawn(ThreadSpec::new("a"), |cx| {
        assert!(cx.preemption(false));
        cx.work(us(2_500));
        cx.preemption(true);
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("b"), |cx| cx.work(ms(2))).unwrap();
    let out = rt.run().unwrap();
    // "a"'s slice ends at 1 ms, held back to 2.5 ms; then the slices alternate.
    assert_eq!(segments(&out), ["a:0-2.5:slice", "b:2.5-3.5:slice", "a:3.5-4.5:exit", "b:4.5-5.5:exit"]);
    assert_eq!(deferred(&out), [("a".to_string(), 2_500, 1)]);
}

#[test]
fn blocking_with_preemption_off_gives_up_the_cpu_and_the_setting_stays() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("low").priority(1), |cx| {
        assert!(cx.preemption(false));
        cx.work(ms(2)); // "high" is released at 1 ms and waits
        cx.sleep_until(Time::from_millis(3)); // gives the CPU up: "high" runs at 2 ms
                                              // Still off after the sleep: "mid", released at 4 ms, waits too.
        cx.work(ms(2));
        assert!(!cx.preemption(true));
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(released_at("high", 5, 1), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(released_at("mid", 3, 5), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["low:0-2:sleep", "high:2-4:exit", "low:4-6:preempt", "mid:6-7:exit", "low:7-8:exit"]);
    // The preemption held back before the sleep was dropped; only the one at 6 ms remains.
    assert_eq!(deferred(&out), [("low".to_string(), 6_000, 0)]);
}

#[test]
fn a_suspending_budget_still_stops_a_thread_with_preemption_off() {
    let mut rt = Runtime::simulated(1);
    let t = rt
        .spawn(ThreadSpec::new("hog").priority(1), |cx| {
            cx.preemption(false);
            cx.work(ms(5));
        })
        .unwrap();
    rt.spawn(released_at("other", 1, 1), |cx| cx.work(ms(1))).unwrap();
    let s = rt.create_set("capped", 0).unwrap();
    rt.add_to_set(s, t).unwrap();
    rt.set_budget(s, Budget::new(ms(2)).action(Suspend)).unwrap();
    let out = rt.run_until(Time::from_millis(10)).unwrap();
    // Suspended at its budget's end (2 ms) though preemption is off.
    assert_eq!(segments(&out)[..2], ["hog:0-2:suspend".to_string(), "other:2-3:exit".to_string()]);
    assert!(deferred(&out).is_empty());
}

#[test]
fn a_demoting_budget_still_takes_the_cpu_from_a_thread_with_preemption_off() {
    let mut rt = Runtime::simulated(1);
    let t = rt
        .spawn(ThreadSpec::new("hog").priority(5), |cx| {
            cx.preemption(false);
            cx.work(ms(4));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("other").priority(1), |cx| cx.work(ms(1))).unwrap();
    let s = rt.create_set("capped", 0).unwrap();
    rt.add_to_set(s, t).unwrap();
    rt.set_budget(s, Budget::new(ms(2)).action(Demote)).unwrap();
    let out = rt.run().unwrap();
    // Demoted at 2 ms below "other", which runs at once; "hog" finishes in the background.
    assert_eq!(segments(&out), ["hog:0-2:preempt", "other:2-3:exit", "hog:3-5:exit"]);
}

#[test]
fn a_global_policy_preempts_a_cpu_whose_thread_may_be_preempted() {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalFp::new()));
    rt.spawn(ThreadSpec::new("low").priority(1), |cx| {
        cx.preemption(false);
        cx.work(ms(3));
        cx.preemption(true);
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("mid").priority(2), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(released_at("high", 5, 1), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    // "high" takes "mid"'s CPU at 1 ms rather than waiting for "low", the least urgent.
    assert_eq!(common::cpu_segments(&out), ["cpu0/mid:0-1", "cpu0/high:1-2", "cpu0/mid:2-4", "cpu1/low:0-4"]);
    assert!(deferred(&out).is_empty());
}

#[test]
fn a_global_policy_holds_back_when_every_running_thread_holds_its_cpu() {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalFp::new()));
    for (name, p, until) in [("a", 1, 3), ("b", 2, 2)] {
        rt.spawn(ThreadSpec::new(name).priority(p), move |cx| {
            cx.preemption(false);
            cx.work(ms(until));
            cx.preemption(true);
            cx.work(ms(2));
        })
        .unwrap();
    }
    rt.spawn(released_at("high", 5, 1), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    // Both hold their CPUs at 1 ms: "high" waits for the least urgent one, "a", which keeps
    // its CPU until it switches preemption on at 3 ms ("b" switching on at 2 ms is not asked
    // for its CPU, and "high" was not offered to it).
    let d = deferred(&out);
    assert_eq!(d, [("a".to_string(), 3_000, 0)]);
    // "a" goes back to the queue at 3 ms and runs on the CPU "b" leaves at 4 ms.
    assert_eq!(common::cpu_segments(&out), ["cpu1/a:0-3", "cpu0/b:0-4", "cpu1/high:3-4", "cpu0/a:4-6"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// A section with preemption off from `off_at` for `off_len`, and a more urgent release at
    /// `release` (all in µs): the urgent thread starts at its release, unless the release
    /// falls inside the section, where it starts exactly at the section's end (with one
    /// `PreemptionDeferred` record there).
    #[test]
    fn a_release_inside_the_section_starts_exactly_at_its_end(
        off_at in 0u64..5_000,
        off_len in 0u64..5_000,
        release in 0u64..12_000,
    ) {
        let mut rt = Runtime::simulated(1);
        rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
            cx.work(us(off_at));
            let old = cx.preemption(false);
            cx.work(us(off_len));
            cx.preemption(old);
            cx.work(ms(3));
        })
        .unwrap();
        let high = ThreadSpec::new("high").priority(5).periodic(ms(100)).phase(us(release)).max_jobs(1);
        let h = rt.spawn(high, |cx| cx.work(ms(1))).unwrap();
        let out = rt.run().unwrap();
        let end = off_at + off_len;
        let held = release > off_at && release <= end;
        let start = if held { end } else { release };
        let first = out.trace.iter().find(|r| r.kind == TraceKind::Run && r.thread == h).unwrap();
        proptest::prop_assert_eq!(first.time, Time::from_micros(start));
        let records = deferred(&out);
        if held {
            proptest::prop_assert_eq!(records, vec![("low".to_string(), end, 0)]);
        } else {
            proptest::prop_assert!(records.is_empty());
        }
        // Nothing is lost: the CPU is busy for both demands whatever the order.
        let low_and_high = off_at + off_len + 3_000 + 1_000;
        let expected_end = if release > off_at + off_len + 3_000 { release + 1_000 } else { low_and_high };
        proptest::prop_assert_eq!(out.end, Time::from_micros(expected_end));
    }
}
