//! The collator in virtual time: several schedulers on one CPU sharing it by the guaranteed
//! jobs' laxity. Exact schedules for hand-computed cases; properties over random guaranteed
//! sets under random reactive and best-effort load, with random laxity transfers: the slack
//! never falls below the claims (nor below zero) and no admitted job misses its deadline.

use crate::common;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{markers, ms, segments, us};
use proptest::prelude::*;
use tempi::policy::sched::{Collator, CollatorStats, Party, ReadyReason, SchedInfo, Scheduler, Urgency};
use tempi::trace::TraceKind;
use tempi::{Config, Costs, RunOutcome, Runtime, ThreadId, ThreadSpec, Time};

/// What a [`Probe`] saw during a run.
#[derive(Default)]
struct Log {
    /// (thread, job) that held a reservation when queued.
    admitted: HashSet<(ThreadId, u32)>,
    /// (thread, job) that lost its reservation by running out its WCET.
    overran: HashSet<(ThreadId, u32)>,
    /// Invariant checks made, and the ones that failed.
    checks: u64,
    violations: Vec<String>,
    transfers: u64,
    stats: CollatorStats,
}

/// A scheduler that is the collator, checking the slack invariant around it and making
/// laxity transfers at chosen instants: everything goes through the public interface.
struct Probe {
    inner: Collator,
    log: Arc<Mutex<Log>>,
    /// Random transfers: the state of a small generator, or `None` for none.
    rng: Option<u64>,
    /// Transfers to make at the first pick at or after an instant.
    planned: Vec<(Time, Party, Party, Duration)>,
    /// The thread dispatched and not yet stopped.
    running: Option<ThreadId>,
    /// Threads queued since the last pick, with their job.
    arrived: Vec<(ThreadId, u32)>,
}

impl Probe {
    fn new(inner: Collator, log: Arc<Mutex<Log>>) -> Probe {
        Probe { inner, log, rng: None, planned: Vec::new(), running: None, arrived: Vec::new() }
    }

    /// The minimum laxity of the reservations, computed naively, against the claims; and
    /// the collator's own slack figure against it.
    fn check(&self, now: Time, when: &str) {
        let mut log = self.log.lock().unwrap();
        log.checks += 1;
        log.stats = self.inner.stats();
        let mut finish = now.as_nanos() as i128;
        let mut min_laxity: Option<i128> = None;
        for (deadline, remaining) in self.inner.reservations() {
            finish += remaining.as_nanos() as i128;
            let laxity = deadline.as_nanos() as i128 - finish;
            min_laxity = Some(min_laxity.map_or(laxity, |m| m.min(laxity)));
        }
        let claimed = self.inner.claimed().as_nanos() as i128;
        if let Some(m) = min_laxity {
            if m < claimed {
                let held: Vec<_> = self.inner.reservations().collect();
                log.violations
                    .push(format!("{when} at {now:?}: min laxity {m} ns below the claims {claimed} ns: {held:?}"));
            }
            let slack = self.inner.slack(now).map(|s| s.as_nanos() as i128);
            if slack != Some(m.max(0)) {
                log.violations.push(format!("{when} at {now:?}: slack {slack:?} but min laxity {m}"));
            }
        }
    }

    fn next_random(&mut self) -> Option<u64> {
        let s = self.rng.as_mut()?;
        *s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        Some(*s >> 33)
    }

    fn stopped(&mut self, id: ThreadId) {
        if self.running == Some(id) {
            self.running = None;
        }
    }
}

impl Scheduler for Probe {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        self.inner.base_urgency(t)
    }
    fn on_ready(&mut self, t: &SchedInfo, why: ReadyReason) {
        let held = self.inner.is_reserved(t.id);
        self.stopped(t.id);
        self.inner.on_ready(t, why);
        if held && !self.inner.is_reserved(t.id) {
            self.log.lock().unwrap().overran.insert((t.id, t.job));
        }
        // Admission happens at the next pick.
        self.arrived.push((t.id, t.job));
    }
    fn on_yield(&mut self, t: &SchedInfo) {
        self.stopped(t.id);
        self.inner.on_yield(t)
    }
    fn on_blocked(&mut self, t: &SchedInfo) {
        self.stopped(t.id);
        self.inner.on_blocked(t)
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.inner.on_removed(id)
    }
    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        self.inner.should_preempt(running, woken)
    }
    fn pick_next(&mut self, now: Time) -> Option<ThreadId> {
        while self.planned.first().is_some_and(|p| p.0 <= now) {
            let (_, from, to, amount) = self.planned.remove(0);
            self.inner.transfer(from, to, amount, now).expect("planned transfer");
            self.log.lock().unwrap().transfers += 1;
        }
        let next = self.inner.pick_next(now);
        for (id, job) in self.arrived.drain(..) {
            if self.inner.is_reserved(id) {
                self.log.lock().unwrap().admitted.insert((id, job));
            }
        }
        self.check(now, "pick");
        // Random transfers right after the pick (admissions are made), while the thread just
        // picked holds the CPU: a transfer must leave a running steal its slice.
        if let Some(r) = self.next_random() {
            let party = |k: u64| if k == 0 { Party::Guaranteed } else { Party::Child(k as usize - 1) };
            let (from, to) = (party(r % 3), party((r / 3) % 3));
            let amount = Duration::from_micros((r / 9) % 3000);
            let r = self.inner.transfer(from, to, amount, now);
            if r.is_ok() {
                self.log.lock().unwrap().transfers += 1;
                self.check(now, "transfer");
            }
        }
        self.running = next;
        next
    }
    fn on_urgency_changed(&mut self, t: &SchedInfo, old: Urgency) {
        self.inner.on_urgency_changed(t, old)
    }
    fn time_sliced(&self) -> bool {
        self.inner.time_sliced()
    }
    fn time_slice(&self, t: &SchedInfo) -> Option<Duration> {
        self.inner.time_slice(t)
    }
}

/// A simulated CPU under a probed standard collator told the switch costs `switch_cost`,
/// with random transfers from `rng` and the `planned` ones.
fn probed(
    costs: Costs,
    switch_cost: Duration,
    rng: Option<u64>,
    planned: Vec<(Time, Party, Party, Duration)>,
) -> (Runtime<tempi::clock::VirtualClock>, Arc<Mutex<Log>>) {
    let log = Arc::new(Mutex::new(Log::default()));
    let mut rt = Runtime::new(Config::new(1).costs(costs)).unwrap();
    let shared = log.clone();
    rt.set_scheduler(move || {
        let mut p = Probe::new(Collator::standard().with_switch_cost(switch_cost), shared.clone());
        p.rng = rng;
        p.planned = planned.clone();
        Box::new(p)
    });
    (rt, log)
}

fn clean(log: &Arc<Mutex<Log>>) -> std::sync::MutexGuard<'_, Log> {
    let log = log.lock().unwrap();
    assert!(log.violations.is_empty(), "{:?}", log.violations);
    assert!(log.checks > 0);
    log
}

#[test]
fn collator_steals_slack_then_guarantees() {
    // Guaranteed g1 (2 ms by 6) and g2 (3 ms by 10): slack 4 ms at 0. The reactive r sleeps
    // until 2 then works 1 ms; the best-effort spinner wants 20 ms.
    let (mut rt, log) = probed(Costs::default(), Duration::ZERO, None, Vec::new());
    rt.spawn(ThreadSpec::new("g1").wcet(ms(2)).deadline(ms(6)), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("g2").wcet(ms(3)).deadline(ms(10)), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("r").priority(5), |cx| {
        cx.sleep_until(Time::from_millis(2));
        cx.work(ms(1))
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("be"), |cx| cx.work(ms(20))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        segments(&out),
        [
            // The children steal first, in rank order: r (asleep at once), then be.
            "r:0-0:sleep",
            // r wakes at 2 and outranks be; 1 ms of slack left after it.
            "be:0-2:preempt",
            "r:2-3:exit",
            "be:3-4:slice",
            // Slack gone: EDF runs the guaranteed jobs back to back, g1 exactly on time.
            "g1:4-6:exit",
            // g1 is done: g2 has 1 ms of laxity, stolen at once; g2 ends on its deadline.
            "be:6-7:slice",
            "g2:7-10:exit",
            // Nothing guaranteed is ready: the rest runs freely.
            "be:10-26:exit",
        ]
    );
    assert!(markers(&out, TraceKind::Miss).is_empty());
    let log = clean(&log);
    assert_eq!(log.stats.admitted, 2);
    assert_eq!(log.stats.steals, 5);
    assert_eq!(log.stats.stolen, ms(5));
    assert_eq!((log.stats.refused, log.stats.overruns), (0, 0));
}

#[test]
fn collator_claim_keeps_slack_for_the_reactive_part() {
    // As above, but the reactive child holds a 3 ms claim from the start: best effort may
    // steal only the 1 ms nobody claims, and r still gets its slack at 2 although a
    // guaranteed job is running.
    let claim = vec![(Time::ZERO, Party::Guaranteed, Party::Child(0), ms(3))];
    let (mut rt, log) = probed(Costs::default(), Duration::ZERO, None, claim);
    rt.spawn(ThreadSpec::new("g1").wcet(ms(2)).deadline(ms(6)), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("g2").wcet(ms(3)).deadline(ms(10)), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("r").priority(5), |cx| {
        cx.sleep_until(Time::from_millis(2));
        cx.work(ms(1))
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("be"), |cx| cx.work(ms(20))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        segments(&out),
        [
            "r:0-0:sleep",
            "be:0-1:slice",
            "g1:1-2:preempt",
            "r:2-3:exit",
            "g1:3-4:exit",
            // g2 has 3 ms of laxity, 2 of them still r's: be steals the third.
            "be:4-5:slice",
            "g2:5-8:exit",
            "be:8-26:exit",
        ]
    );
    assert!(markers(&out, TraceKind::Miss).is_empty());
    let log = clean(&log);
    assert_eq!(log.transfers, 1);
    assert_eq!(log.stats.stolen, ms(3));
}

#[test]
fn collator_refused_and_overrunning_jobs_run_as_best_effort() {
    // g1 (2 ms by 5) is admitted; g2 (4 ms by 5) no longer fits and is refused; g3 declares
    // 1 ms but works 3 ms: its reservation runs out and it goes on as best effort.
    let (mut rt, log) = probed(Costs::default(), Duration::ZERO, None, Vec::new());
    rt.spawn(ThreadSpec::new("g1").wcet(ms(2)).deadline(ms(5)), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("g2").wcet(ms(4)).deadline(ms(5)), |cx| cx.work(ms(4))).unwrap();
    rt.spawn(ThreadSpec::new("g3").wcet(ms(1)).deadline(ms(20)), |cx| cx.work(ms(3))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        segments(&out),
        [
            // The refused g2 is best effort now, and steals g1's 3 ms of slack.
            "g2:0-3:slice",
            "g1:3-5:exit",
            // g3 has 14 ms of laxity: g2 steals it to finish.
            "g2:5-6:exit",
            // g3's WCET is enforced by the slice; it goes on as best effort.
            "g3:6-7:slice",
            "g3:7-9:exit",
        ]
    );
    assert_eq!(markers(&out, TraceKind::Miss), ["g2#0@5"]);
    let log = clean(&log);
    assert_eq!((log.stats.admitted, log.stats.refused, log.stats.overruns), (2, 1, 1));
}

#[test]
fn collator_blocked_job_is_admitted_again_when_it_wakes() {
    // g (2 ms by 10 ms) works 1 ms, sleeps until 3, works 1 ms. Its block ends the
    // reservation, so be runs freely from 2; when g wakes its remaining 1 ms is admitted
    // afresh, and be steals the new slack (6 ms) before g finishes on its deadline.
    let (mut rt, log) = probed(Costs::default(), Duration::ZERO, None, Vec::new());
    rt.spawn(ThreadSpec::new("g").wcet(ms(2)).deadline(ms(10)), |cx| {
        cx.work(ms(1));
        cx.sleep_until(Time::from_millis(3));
        cx.work(ms(1))
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("be"), |cx| {
        cx.sleep_until(Time::from_millis(2));
        cx.work(ms(10))
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        segments(&out),
        ["be:0-0:sleep", "g:0-1:sleep", "be:2-3:preempt", "be:3-9:slice", "g:9-10:exit", "be:10-13:exit"]
    );
    assert!(markers(&out, TraceKind::Miss).is_empty());
    let log = clean(&log);
    assert_eq!((log.stats.admitted, log.stats.refused), (2, 0));
}

/// g (2 ms of work by 4 ms, its WCET covering one 100 µs switch) and a best-effort thread
/// that wakes at 1 ms, under a collator told the switch costs `told`.
fn switch_case(told: Duration) -> (RunOutcome, Arc<Mutex<Log>>) {
    let cs = us(100);
    let costs = Costs { context_switch: cs, ..Default::default() };
    let (mut rt, log) = probed(costs, told, None, Vec::new());
    rt.spawn(ThreadSpec::new("g").wcet(ms(2) + cs).deadline(ms(4)), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("be"), |cx| {
        cx.sleep_until(Time::from_millis(1));
        cx.work(ms(5))
    })
    .unwrap();
    (rt.run().unwrap(), log)
}

#[test]
fn collator_switch_cost_is_kept_back_and_not_charged() {
    // Each steal keeps one switch of slack back for the switch back to g, and that switch
    // is not charged to g's reservation.
    let (out, log) = switch_case(us(100));
    assert_eq!(
        segments(&out),
        [
            "be:0-0:sleep",
            // g's switch at 0 follows a steal: not charged. At 1 it has 1.2 ms reserved
            // (1.1 of work and the switch back), so 1.8 ms of slack, 1.7 for the steal.
            "g:0-1:preempt",
            "be:1-2.7:slice",
            "g:2.7-3.9:exit",
            "be:3.9-7.4:exit",
        ]
    );
    assert!(markers(&out, TraceKind::Miss).is_empty());
    let log = clean(&log);
    assert_eq!((log.stats.steals, log.stats.overruns), (2, 0));

    // Told nothing of the switch, the collator lets be steal the switch back too: g misses.
    // This is the assumption the guarantee rests on.
    let (out, _) = switch_case(Duration::ZERO);
    assert_eq!(markers(&out, TraceKind::Miss), ["g#0@4"]);
}

#[test]
fn collator_transfer_refuses_what_the_source_lacks() {
    let mut c = Collator::standard();
    assert!(c.transfer(Party::Child(0), Party::Child(1), ms(1), Time::ZERO).is_err());
    assert!(c.transfer(Party::Guaranteed, Party::Child(5), ms(1), Time::ZERO).is_err());
    c.transfer(Party::Guaranteed, Party::Child(1), ms(4), Time::ZERO).unwrap();
    c.transfer(Party::Child(1), Party::Guaranteed, ms(4), Time::ZERO).unwrap();
    assert!(c.claimed().is_zero());
}

/// A random load: guaranteed periodic threads (C, T, phase, work ≤ C), reactive periodic
/// threads (priority, T, work) and best-effort spinners (work).
#[derive(Clone, Debug)]
struct Load {
    guaranteed: Vec<(u64, u64, u64, u64)>,
    reactive: Vec<(i32, u64, u64)>,
    best_effort: Vec<u64>,
}

fn load(max_guaranteed_utilisation: f64) -> impl Strategy<Value = Load> {
    let g = prop::collection::vec((1u64..=40, 4u64..=40, 0u64..=40, 0u64..=100), 1..=4);
    let r = prop::collection::vec((1i32..=9, 3u64..=30, 1u64..=3), 0..=2);
    let b = prop::collection::vec(1u64..=150, 0..=2);
    (g, r, b).prop_map(move |(g, r, b)| {
        // Scale the WCETs so that the guaranteed utilisation stays at the bound.
        let raw: f64 = g.iter().map(|&(c, t, _, _)| c.min(t) as f64 / t as f64).sum();
        let scale = (max_guaranteed_utilisation / raw).min(1.0);
        let guaranteed = g
            .into_iter()
            .map(|(c, t, phase, frac)| {
                let c_us = ((c.min(t) * 1000) as f64 * scale).max(100.0) as u64;
                (c_us, t * 1000, (phase % t) * 1000, c_us * frac / 100)
            })
            .collect();
        Load { guaranteed, reactive: r, best_effort: b }
    })
}

/// Run `load` for 200 ms under a probed collator; the outcome and the log.
fn run_load(load: &Load, costs: Costs, switch: Duration, seed: Option<u64>) -> (RunOutcome, Arc<Mutex<Log>>) {
    let (mut rt, log) = probed(costs, switch, seed, Vec::new());
    for (i, &(c, t, phase, work)) in load.guaranteed.iter().enumerate() {
        let spec = ThreadSpec::new(format!("g{i}")).periodic(us(t)).phase(us(phase)).wcet(us(c)).deadline(us(t));
        // Work within the WCET, less the switches it may pay (its own dispatch and one
        // resumption per other guaranteed thread).
        let overhead = costs.context_switch * (load.guaranteed.len() as u32 + 1);
        let work = us(work).min(us(c).saturating_sub(overhead));
        rt.spawn(spec, move |cx| cx.work(work)).unwrap();
    }
    for (i, &(prio, t, work)) in load.reactive.iter().enumerate() {
        let spec = ThreadSpec::new(format!("r{i}")).periodic(ms(t)).priority(prio);
        rt.spawn(spec, move |cx| cx.work(ms(work))).unwrap();
    }
    for (i, &work) in load.best_effort.iter().enumerate() {
        rt.spawn(ThreadSpec::new(format!("b{i}")), move |cx| cx.work(ms(work))).unwrap();
    }
    (rt.run_until(Time::from_millis(200)).unwrap(), log)
}

/// No job that held its reservation to the end missed its deadline; the invariant held at
/// every check. Returns the number of admitted jobs.
fn assert_guarantee(out: &RunOutcome, log: &Arc<Mutex<Log>>) -> Result<usize, TestCaseError> {
    let log = log.lock().unwrap();
    prop_assert!(log.violations.is_empty(), "{:?}", log.violations);
    prop_assert!(log.checks > 0);
    for r in out.trace.iter().filter(|r| r.kind == TraceKind::Miss) {
        let name = &out.thread(r.thread).unwrap().name;
        let key = (r.thread, r.job);
        prop_assert!(
            !name.starts_with('g') || !log.admitted.contains(&key) || log.overran.contains(&key),
            "admitted job {}#{} missed at {:?}",
            name,
            r.job,
            r.time
        );
    }
    Ok(log.admitted.len())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn collator_best_effort_never_causes_a_guaranteed_miss(load in load(0.9), seed in prop::option::of(any::<u64>())) {
        let (out, log) = run_load(&load, Costs::default(), Duration::ZERO, seed);
        let admitted = assert_guarantee(&out, &log)?;
        // Without transfers nothing claims slack, and every first job finds the CPU free
        // of other guaranteed work at least once; claims may keep every job out.
        prop_assert!(admitted > 0 || seed.is_some());
        // Jobs use at most their WCET, so none overruns.
        prop_assert!(log.lock().unwrap().overran.is_empty());
    }

    #[test]
    fn collator_guarantee_holds_with_switch_costs(load in load(0.8), seed in prop::option::of(any::<u64>())) {
        let cs = us(20);
        let costs = Costs { context_switch: cs, ..Default::default() };
        let (out, log) = run_load(&load, costs, cs, seed);
        let admitted = assert_guarantee(&out, &log)?;
        prop_assert!(admitted > 0 || seed.is_some());
    }

    #[test]
    fn collator_feasible_set_at_once_is_admitted_whole(
        jobs in prop::collection::vec((1u64..=5, 1u64..=60), 1..=6),
        spinners in prop::collection::vec(1u64..=80, 1..=3),
        seed in any::<u64>(),
    ) {
        // One job per thread, all released at 0, made EDF-feasible: sorted by deadline, each
        // deadline is at least the work due by then. Transfers come only after admission.
        let mut jobs = jobs;
        jobs.sort_by_key(|j| j.1);
        let mut due = 0;
        let jobs: Vec<(u64, u64)> = jobs.into_iter().map(|(c, d)| { due += c; (c, d.max(due)) }).collect();
        let (mut rt, log) = probed(Costs::default(), Duration::ZERO, Some(seed), Vec::new());
        for (i, &(c, d)) in jobs.iter().enumerate() {
            rt.spawn(ThreadSpec::new(format!("g{i}")).wcet(ms(c)).deadline(ms(d)), move |cx| cx.work(ms(c))).unwrap();
        }
        for (i, &w) in spinners.iter().enumerate() {
            rt.spawn(ThreadSpec::new(format!("b{i}")).priority(i as i32), move |cx| cx.work(ms(w))).unwrap();
        }
        let out = rt.run().unwrap();
        prop_assert_eq!(assert_guarantee(&out, &log)?, jobs.len());
        prop_assert_eq!(out.total_misses(), 0);
        // The spinners all ended: the slack went to them.
        prop_assert_eq!(out.thread_named("b0").unwrap().stats.cpu_time, ms(spinners[0]));
    }
}
