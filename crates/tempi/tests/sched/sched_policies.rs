//! Scheduling policies in virtual time: exact timelines. Policies: fp (rate monotonic), edf, rr,
//! fifo, and a user-defined least-laxity policy.

use crate::common;

use common::{completion_order, markers, ms, segments};
use tempi::policy::sched::{Edf, Fifo, ReadyReason, RoundRobin, SchedInfo, Scheduler, Urgency};
use tempi::trace::TraceKind;
use tempi::{assign_rate_monotonic, Runtime, ThreadId, ThreadSpec, Time};

fn periodic_set(rt: &mut Runtime<tempi::clock::VirtualClock>, set: &[(&str, u64, u64)]) {
    let mut specs: Vec<ThreadSpec> =
        set.iter().map(|&(n, c, t)| ThreadSpec::new(n).periodic(ms(t)).wcet(ms(c))).collect();
    assign_rate_monotonic(&mut specs);
    for s in specs {
        let c = s.wcet_value();
        rt.spawn(s, move |cx| cx.work(c)).unwrap();
    }
}

#[test]
fn sched_rm_textbook_timeline_is_exact() {
    // C/T = 1/4, 2/6, 3/12: U = 0.833, above the 3-task bound (0.780) yet schedulable.
    let mut rt = Runtime::simulated(1);
    periodic_set(&mut rt, &[("t1", 1, 4), ("t2", 2, 6), ("t3", 3, 12)]);
    let out = rt.run_until(Time::from_millis(12)).unwrap();
    assert_eq!(
        segments(&out),
        [
            "t1:0-1:done",
            "t2:1-3:done",
            "t3:3-4:preempt",
            "t1:4-5:done",
            "t3:5-6:preempt",
            "t2:6-8:done",
            "t1:8-9:done",
            "t3:9-10:done",
        ]
    );
    assert_eq!(out.total_misses(), 0);
    let t3 = out.thread_named("t3").unwrap();
    assert_eq!(t3.stats.response_max, Some(ms(10)));
    assert_eq!(t3.stats.preemptions, 2);
    assert_eq!(t3.stats.cpu_time, ms(3));
    assert_eq!(out.thread_named("t1").unwrap().stats.completed, 3);
}

#[test]
fn sched_full_utilisation_misses_under_rm_not_edf() {
    // C/T = 2/4, 5/10: U = 1.
    let set = [("a", 2, 4), ("b", 5, 10)];
    let mut rm = Runtime::simulated(1);
    periodic_set(&mut rm, &set);
    let out = rm.run_until(Time::from_millis(20)).unwrap();
    assert_eq!(markers(&out, TraceKind::Miss)[0], "b#0@10");
    assert!(out.total_misses() >= 1);

    let mut edf = Runtime::simulated(1);
    edf.set_scheduler(|| Box::new(Edf::new()));
    periodic_set(&mut edf, &set);
    let out = edf.run_until(Time::from_millis(20)).unwrap();
    assert_eq!(out.total_misses(), 0);
    assert_eq!(
        segments(&out)[..6],
        ["a:0-2:done", "b:2-4:preempt", "a:4-6:done", "b:6-9:done", "a:9-11:done", "b:11-12:preempt"]
    );
}

#[test]
fn sched_round_robin_slices_exactly_by_quantum() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(RoundRobin::new(ms(2))));
    rt.spawn(ThreadSpec::new("a"), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("b"), |cx| cx.work(ms(5))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        segments(&out),
        ["a:0-2:slice", "b:2-4:slice", "a:4-6:slice", "b:6-8:slice", "a:8-9:exit", "b:9-10:exit"]
    );
}

#[test]
fn sched_round_robin_respects_priority_levels() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(RoundRobin::new(ms(1))));
    rt.spawn(ThreadSpec::new("lo"), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("hi").priority(5), |cx| cx.work(ms(2))).unwrap();
    let out = rt.run().unwrap();
    // `hi` is alone on its level: its slices end and it is picked again at once.
    assert_eq!(completion_order(&out), ["hi#0", "lo#0"]);
    assert_eq!(out.thread_named("hi").unwrap().stats.response_max, Some(ms(2)));
}

#[test]
fn sched_fifo_never_preempts() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Fifo::new()));
    rt.spawn(ThreadSpec::new("long"), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("urgent").periodic(ms(2)).priority(9).max_jobs(2), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["long:0-5:exit", "urgent:5-6:done", "urgent:6-7:exit"]);
}

#[test]
fn sched_fixed_priority_preempted_thread_resumes_before_equals() {
    // POSIX: a preempted thread goes back to the head of its level.
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("a").priority(1), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("b").priority(1), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("hi").priority(2).periodic(ms(10)).phase(ms(1)).max_jobs(1), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["a:0-1:preempt", "hi:1-2:exit", "a:2-4:exit", "b:4-5:exit"]);
}

/// Least laxity first, written only against the public meta-interface.
#[derive(Default)]
struct LeastLaxity {
    ready: Vec<SchedInfo>,
}

fn laxity(t: &SchedInfo, now: Time) -> i128 {
    let Some(d) = t.deadline else { return i128::MAX };
    let left = t.wcet.saturating_sub(t.job_cpu_time);
    d.as_nanos() as i128 - now.as_nanos() as i128 - left.as_nanos() as i128
}

impl Scheduler for LeastLaxity {
    fn name(&self) -> &str {
        "llf"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_deadline(t.deadline)
    }
    fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) {
        self.ready.push(*t);
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.ready.retain(|t| t.id != id);
    }
    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        // Compare laxities at the wake-up instant, approximated by the woken job's release.
        laxity(woken, woken.release) < laxity(running, woken.release)
    }
    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        let best = (0..self.ready.len()).min_by_key(|&i| (laxity(&self.ready[i], now), i))?;
        Some(self.ready.remove(best).id)
    }
}

#[test]
fn sched_user_defined_least_laxity_policy() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(LeastLaxity::default()));
    // Laxities at 0: a = 7 - 1 = 6, b = 8 - 6 = 2.
    rt.spawn(ThreadSpec::new("a").deadline(ms(7)).wcet(ms(1)), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("b").deadline(ms(8)).wcet(ms(6)), |cx| cx.work(ms(6))).unwrap();
    let out = rt.run().unwrap();
    // EDF would run a first (deadline 7 < 8); LLF runs b (laxity 2 < 6).
    assert_eq!(segments(&out), ["b:0-6:exit", "a:6-7:exit"]);
    assert_eq!(out.total_misses(), 0);
}

#[test]
fn sched_urgency_changes_at_run_time() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("a").priority(5), |cx| {
        cx.work(ms(1));
        cx.set_priority(9); // still the most urgent: nothing visible happens
        cx.work(ms(1));
        cx.set_priority(0); // now below `b`, which takes the CPU here
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("b").priority(1), |cx| cx.work(ms(2))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["a:0-2:preempt", "b:2-4:exit", "a:4-5:exit"]);
}
