//! PORTS admission on the runtime (`tempi::admission`), in virtual time: hand-computed idle
//! times and decisions, reclaim and expiry, WCET enforcement, cross-CPU NACKs, and random
//! request streams under every engine (no admitted job misses, overrunning or not; none runs
//! past its WCET; an ended job leaves `max_live` at once; the engines decide alike).
//!
//! Requests arrive through a sporadic "submitter" thread per CPU, released by timing events
//! at the request instants, with a 1 ns deadline: it runs ahead of every admitted job (whose
//! deadlines here are whole microseconds) and takes no time.

use proptest::prelude::*;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempi::admission::{
    Admission, AdmissionError, AdmissionSpec, Admitted, Decision, JobEventKind, JobRequest, Refused,
};
use tempi::clock::VirtualClock;
use tempi::{Ctx, Runtime, ThreadOutcome, ThreadSpec, Time, TimerSpec};

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn at(n: u64) -> Time {
    Time::from_micros(n)
}

fn edf(cpus: usize) -> Runtime<VirtualClock> {
    let mut rt = Runtime::simulated(cpus);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    rt
}

const ENGINES: [&str; 4] = ["tree", "linear", "min_laxity", "hashed"];

/// A sporadic thread on `cpu` whose job `k` runs `body(cx, k)` at `times[k]` µs.
fn submitter(
    rt: &mut Runtime<VirtualClock>,
    cpu: usize,
    times: &[u64],
    mut body: impl FnMut(&Ctx<'_>, usize) + Send + 'static,
) {
    let n = times.len();
    if n == 0 {
        return;
    }
    let spec = ThreadSpec::new(format!("submit{cpu}"))
        .cpu(cpu)
        .sporadic(Duration::ZERO)
        .deadline(Duration::from_nanos(1))
        .max_jobs(n as u32)
        .release_queue(n.max(1));
    let s = rt.spawn(spec, move |cx| body(cx, cx.job().number as usize)).unwrap();
    for &t in times {
        rt.add_timer(TimerSpec::at(at(t)).cpu(cpu), move |ev| ev.release(s).unwrap()).unwrap();
    }
}

fn job(name: &str, wcet: u64, deadline: u64, work: u64) -> JobRequest {
    JobRequest::new(name, us(wcet), at(deadline), move |cx| cx.work(us(work)))
}

fn accepted(r: Result<Admitted, Refused>) -> Admitted {
    r.unwrap_or_else(|e| panic!("expected admission, got {e}"))
}

fn nack_idle(r: Result<Admitted, Refused>) -> Duration {
    match r {
        Err(Refused::Nack(n)) => n.idle,
        other => panic!("expected a NACK, got {other:?}"),
    }
}

#[test]
fn hand_computed_idle_times_and_decisions() {
    for engine in ENGINES {
        let mut rt = edf(1);
        let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine(engine)).unwrap();
        let a = adm.clone();
        let seen: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let log = seen.clone();
        submitter(&mut rt, 0, &[0, 2], move |cx, k| {
            let mut log = log.lock().unwrap();
            if k == 0 {
                log.push(a.idle_before(cx, at(10)).unwrap()); // empty: 10
                accepted(a.admit(cx, job("A", 4, 10, 4)));
                // Before 6 nothing is due; A, due at 10, has 10 − 4 = 6 to spare: 6.
                log.push(a.idle_before(cx, at(6)).unwrap());
                accepted(a.admit(cx, job("B", 3, 6, 3)));
                // 8 − 0 − B's 3 = 5, but A now has 10 − 7 = 3 to spare: 3.
                log.push(nack_idle(a.admit(cx, job("C", 4, 8, 4))));
            } else {
                // At 2, B has run 2 of its 3: 9 − 2 − 1 = 6, A has 10 − (2 + 1 + 4) = 3: 3.
                log.push(a.idle_before(cx, at(9)).unwrap());
                accepted(a.admit(cx, job("D", 2, 9, 2)));
            }
        });
        let out = rt.run().unwrap();
        assert_eq!(*seen.lock().unwrap(), [us(10), us(6), us(3), us(3)], "{engine}");
        assert_eq!(out.total_misses(), 0, "{engine}");
        let finish = |name: &str| {
            let t = out.threads.iter().find(|t| t.name == name).unwrap();
            t.stats.response_max.unwrap()
        };
        // EDF: B 0–3, D 3–5, A 5–9 (A's release is 0, D's 2).
        assert_eq!((finish("B"), finish("D"), finish("A")), (us(3), us(3), us(9)), "{engine}");
        let d = adm.decisions();
        let summary: Vec<(&str, u64, bool, Duration)> =
            d.iter().map(|d| (&*d.request, d.time.as_nanos() / 1000, d.accepted, d.idle)).collect();
        assert_eq!(
            summary,
            [("A", 0, true, us(10)), ("B", 0, true, us(6)), ("C", 0, false, us(3)), ("D", 2, true, us(3))],
            "{engine}"
        );
    }
}

#[test]
fn unused_wcet_is_reclaimed_at_the_job_end() {
    for engine in ENGINES {
        let mut rt = edf(1);
        let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine(engine)).unwrap();
        let a = adm.clone();
        let seen: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let log = seen.clone();
        submitter(&mut rt, 0, &[0, 1, 3], move |cx, k| match k {
            0 => {
                accepted(a.admit(cx, job("A", 6, 10, 2)));
            }
            // A has run 1 and may need 5 more: 10 − 1 − 5 = 4.
            1 => log.lock().unwrap().push(nack_idle(a.admit(cx, job("E", 7, 10, 7)))),
            // A ended at 2 having used 2 of its 6: everything up to 10 is free again. Had
            // its 4 unused not come back, the idle time would be 10 − 3 − 4 = 3.
            _ => {
                log.lock().unwrap().push(a.idle_before(cx, at(10)).unwrap());
                accepted(a.admit(cx, job("E2", 7, 10, 7)));
            }
        });
        let out = rt.run().unwrap();
        assert_eq!(*seen.lock().unwrap(), [us(4), us(7)], "{engine}");
        assert_eq!(out.total_misses(), 0, "{engine}");
        assert_eq!(out.end, at(10), "{engine}");
    }
}

#[test]
fn entries_expire_exactly_after_their_deadline() {
    let mut rt = edf(1);
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    let a = adm.clone();
    let seen: Arc<Mutex<Vec<(usize, u64)>>> = Arc::default();
    let log = seen.clone();
    submitter(&mut rt, 0, &[0, 10, 11], move |cx, k| {
        if k == 0 {
            accepted(a.admit(cx, job("A", 1, 5, 1)));
            accepted(a.admit(cx, job("B", 1, 10, 1)));
        }
        a.idle_before(cx, at(20)).unwrap();
        log.lock().unwrap().push((a.entries(), a.expired()));
    });
    rt.run().unwrap();
    // At 10, A (due 5) is gone and B (due 10) stays: only deadlines before now expire.
    assert_eq!(*seen.lock().unwrap(), [(2, 0), (1, 1), (0, 2)]);
}

#[test]
fn an_overrunning_job_is_killed_at_its_wcet_and_the_others_meet_their_deadlines() {
    for engine in ENGINES {
        let mut rt = edf(1);
        let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine(engine)).unwrap();
        let a = adm.clone();
        let ids: Arc<Mutex<Vec<Admitted>>> = Arc::default();
        let keep = ids.clone();
        submitter(&mut rt, 0, &[0], move |cx, _| {
            let mut keep = keep.lock().unwrap();
            keep.push(accepted(a.admit(cx, job("liar", 2, 10, 5))));
            keep.push(accepted(a.admit(cx, job("early", 3, 6, 3))));
            // 10 − 0 − (2 + 3) = 5.
            keep.push(accepted(a.admit(cx, job("honest", 5, 10, 5))));
        });
        let out = rt.run().unwrap();
        let ids = ids.lock().unwrap();
        let liar = out.thread(ids[0].thread).unwrap();
        assert_eq!(liar.outcome, Some(ThreadOutcome::Killed), "{engine}");
        assert_eq!(liar.stats.cpu_time, us(2), "{engine}");
        // early 0–3, liar 3–5 (stopped), honest 5–10.
        let events = adm.job_events();
        assert_eq!(events.len(), 1, "{engine}");
        assert_eq!((&*events[0].request, events[0].at, &events[0].kind), ("liar", at(5), &JobEventKind::Overrun));
        assert_eq!(out.thread(ids[2].thread).unwrap().stats.response_max, Some(us(10)), "{engine}");
        assert_eq!(out.total_misses(), 0, "{engine}");
    }
}

#[test]
fn a_cross_cpu_nack_carries_the_exact_idle_time_and_a_job_that_fits_it_is_accepted() {
    let mut rt = edf(2);
    let adm0 = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    let adm1 = Admission::new(&mut rt, AdmissionSpec::new(1)).unwrap();
    let local = adm1.clone();
    submitter(&mut rt, 1, &[0], move |cx, _| {
        accepted(local.admit(cx, job("K", 8, 10, 8)));
    });
    let (remote, home) = (adm1.clone(), adm0.clone());
    let placed: Arc<Mutex<Vec<Admitted>>> = Arc::default();
    let keep = placed.clone();
    submitter(&mut rt, 0, &[1], move |cx, _| {
        // CPU 1 at 1: K has 7 left, 10 − 1 − 7 = 2.
        let nack = match remote.admit(cx, job("L", 5, 10, 5)) {
            Err(Refused::Nack(n)) => n,
            other => panic!("{other:?}"),
        };
        assert_eq!((&*nack.request, nack.cpu, nack.idle), ("L", 1, us(2)));
        // The smaller version that fits exactly what CPU 1 has left, and the full one at home.
        keep.lock().unwrap().push(accepted(remote.admit(cx, job("L-small", 2, 10, 2))));
        keep.lock().unwrap().push(accepted(home.admit(cx, job("L", 5, 10, 5))));
    });
    let out = rt.run().unwrap();
    let placed = placed.lock().unwrap();
    assert_eq!((placed[0].cpu, placed[1].cpu), (1, 0));
    assert_eq!(out.thread(placed[0].thread).unwrap().cpu, 1);
    assert_eq!(out.thread(placed[0].thread).unwrap().stats.response_max, Some(us(9)));
    assert_eq!(out.total_misses(), 0);
    let d: Vec<(String, usize, usize, bool)> =
        adm1.decisions().iter().map(|d| (d.request.to_string(), d.cpu, d.target_cpu, d.accepted)).collect();
    assert_eq!(d, [("K".into(), 1, 1, true), ("L".into(), 0, 1, false), ("L-small".into(), 0, 1, true)]);
}

#[test]
fn bad_requests_are_refused_with_clear_errors() {
    let mut rt = edf(1);
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0).capacity(1).max_live(1)).unwrap();
    let mut other = edf(1);
    let foreign = Admission::new(&mut other, AdmissionSpec::new(0)).unwrap();
    let a = adm.clone();
    submitter(&mut rt, 0, &[0], move |cx, _| {
        let err = |r: Result<Admitted, Refused>| match r {
            Err(Refused::Error(e)) => e,
            other => panic!("{other:?}"),
        };
        let later = job("later", 1, 10, 1).released_at(at(3));
        assert_eq!(err(a.admit(cx, later)), AdmissionError::FutureRelease { release: at(3), now: at(0) });
        assert_eq!(err(a.admit(cx, job("none", 0, 10, 0))), AdmissionError::ZeroWcet);
        assert_eq!(err(foreign.admit(cx, job("x", 1, 10, 1))), AdmissionError::ForeignRuntime);
        assert_eq!(foreign.idle_before(cx, at(3)), Err(AdmissionError::ForeignRuntime));
        accepted(a.admit(cx, job("one", 1, 10, 1)));
        assert_eq!(err(a.admit(cx, job("two", 1, 10, 1))), AdmissionError::Full { capacity: 1 });
        // A deadline already passed leaves no idle time.
        assert_eq!(nack_idle(a.admit(cx, job("past", 1, 0, 1))), Duration::ZERO);
    });
    rt.run().unwrap();
    let lost = AdmissionError::Unanswered { cpu: 1, outcome: "killed".into() };
    assert!(lost.to_string().contains("CPU 1") && lost.to_string().contains("killed"));
}

#[test]
fn a_job_that_fits_but_finds_no_enforcement_set_is_refused_without_touching_the_engine() {
    let mut rt = edf(1);
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0).max_live(1)).unwrap();
    let a = adm.clone();
    submitter(&mut rt, 0, &[0, 5], move |cx, k| {
        if k == 0 {
            accepted(a.admit(cx, job("one", 5, 20, 5)));
            let busy = a.admit(cx, job("two", 1, 20, 1));
            assert_eq!(busy, Err(Refused::Error(AdmissionError::TooManyLive { max: 1 })));
            // Nothing was reserved for "two"; one that does not fit still gets its NACK.
            assert_eq!(a.idle_before(cx, at(20)), Ok(us(15)));
            assert_eq!(nack_idle(a.admit(cx, job("huge", 16, 20, 16))), us(15));
        } else {
            // "one" ended at 5: its set is free again.
            accepted(a.admit(cx, job("two", 1, 20, 1)));
        }
    });
    assert_eq!(rt.run().unwrap().total_misses(), 0);
    let names: Vec<(String, bool)> = adm.decisions().iter().map(|d| (d.request.to_string(), d.accepted)).collect();
    assert_eq!(names, [("one".into(), true), ("huge".into(), false), ("two".into(), true)]);
    let orders: Vec<u64> = adm.decisions().iter().map(|d| d.order).collect();
    assert!(orders.windows(2).all(|w| w[0] < w[1]), "{orders:?}");
}

#[derive(Clone, Debug)]
struct Req {
    time: u64,
    cpu: usize,
    target: usize,
    wcet: u64,
    deadline: u64,
    work: u64,
}

fn requests() -> impl Strategy<Value = Vec<Req>> {
    prop::collection::vec(
        (0u64..60, 0usize..2, 0usize..2, 1u64..12, 0u64..40, 0u64..=100).prop_map(
            |(time, cpu, target, wcet, slack, pct)| Req {
                time,
                cpu,
                target,
                wcet,
                deadline: wcet + slack,
                work: wcet * pct / 100,
            },
        ),
        1..16,
    )
}

/// Runs the stream under `engine`; returns the decisions of both CPUs and the misses.
fn run_stream(engine: &str, reqs: &[Req]) -> (Vec<Decision>, u64, usize, usize) {
    let mut rt = edf(2);
    let adms: Vec<Admission> =
        (0..2).map(|c| Admission::new(&mut rt, AdmissionSpec::new(c).engine(engine).max_live(16)).unwrap()).collect();
    for cpu in 0..2 {
        let mut mine: Vec<Req> = reqs.iter().filter(|r| r.cpu == cpu).cloned().collect();
        mine.sort_by_key(|r| r.time);
        let times: Vec<u64> = mine.iter().map(|r| r.time).collect();
        let adms = adms.clone();
        submitter(&mut rt, cpu, &times, move |cx, k| {
            let r = &mine[k];
            let name = format!("r{k}@{cpu}");
            let answer = adms[r.target].admit(cx, job(&name, r.wcet, r.time + r.deadline, r.work));
            if let Err(Refused::Error(e)) = answer {
                panic!("{e}");
            }
        });
    }
    let out = rt.run().unwrap();
    let killed = out.threads.iter().filter(|t| t.outcome == Some(ThreadOutcome::Killed)).count();
    let completed_jobs = out.threads.iter().filter(|t| !t.name.starts_with("submit") && t.stats.completed == 1).count();
    let mut d = adms[0].decisions();
    d.extend(adms[1].decisions());
    // The order numbers are process-wide: only their sequence is the same across runs.
    for x in &mut d {
        x.order = 0;
    }
    (d, out.total_misses(), killed, completed_jobs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn admitted_jobs_never_miss_and_the_engines_decide_alike(reqs in requests()) {
        let (reference, misses, killed, completed) = run_stream("tree", &reqs);
        prop_assert_eq!(misses, 0);
        prop_assert_eq!(killed, 0);
        prop_assert_eq!(reference.len(), reqs.len());
        // Every admitted job ran to its end.
        prop_assert_eq!(completed, reference.iter().filter(|d| d.accepted).count());
        for engine in ["linear", "min_laxity"] {
            let (d, misses, _, _) = run_stream(engine, &reqs);
            prop_assert_eq!(misses, 0, "{}", engine);
            prop_assert_eq!(&d, &reference, "{}", engine);
        }
    }
}

/// A policy under a name of its own, stacked on `prev`.
struct Renamed {
    prev: Box<dyn tempi::policy::sched::Scheduler>,
    name: &'static str,
}

impl tempi::policy::sched::StackedScheduler for Renamed {
    fn prev(&self) -> &dyn tempi::policy::sched::Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn tempi::policy::sched::Scheduler {
        &mut *self.prev
    }
    fn name(&self) -> &str {
        self.name
    }
}

#[test]
fn admission_asks_the_policy_whether_it_is_edf_not_its_name() {
    use tempi::policy::sched::{Edf, FixedPriority};
    // EDF under another name is admitted to.
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Renamed { prev: Box::new(Edf::new()), name: "my-deadlines" }));
    assert!(Admission::new(&mut rt, AdmissionSpec::new(0)).is_ok());
    // Fixed priority named "edf" is refused, under the name it gave.
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(Renamed { prev: Box::new(FixedPriority::new()), name: "edf" }));
    assert_eq!(
        Admission::new(&mut rt, AdmissionSpec::new(0)).err(),
        Some(AdmissionError::NotEdf { scheduler: "edf".into() })
    );
}

/// Like [`run_stream`], but each request may also kill the `kill`-th job admitted so far on
/// its submitter's CPU (modulo their number) right after its own admission: a killed job ends
/// and its reservation goes back at once.
fn run_stream_killing(engine: &str, reqs: &[(Req, Option<usize>)]) -> (Vec<Decision>, u64, Vec<Option<ThreadOutcome>>) {
    let mut rt = edf(2);
    let adms: Vec<Admission> =
        (0..2).map(|c| Admission::new(&mut rt, AdmissionSpec::new(c).engine(engine).max_live(16)).unwrap()).collect();
    for cpu in 0..2 {
        let mut mine: Vec<(Req, Option<usize>)> = reqs.iter().filter(|r| r.0.cpu == cpu).cloned().collect();
        mine.sort_by_key(|r| r.0.time);
        let times: Vec<u64> = mine.iter().map(|r| r.0.time).collect();
        let adms = adms.clone();
        let mut admitted: Vec<tempi::ThreadId> = Vec::new();
        submitter(&mut rt, cpu, &times, move |cx, k| {
            let (r, kill) = &mine[k];
            let name = format!("r{k}@{cpu}");
            match adms[r.target].admit(cx, job(&name, r.wcet, r.time + r.deadline, r.work)) {
                Ok(a) => admitted.push(a.thread),
                Err(Refused::Error(e)) => panic!("{e}"),
                Err(_) => {}
            }
            if let (Some(i), false) = (kill, admitted.is_empty()) {
                // It may have ended already.
                let _ = cx.kill(admitted[i % admitted.len()]);
            }
        });
    }
    let out = rt.run().unwrap();
    let outcomes = out.threads.iter().filter(|t| !t.name.starts_with("submit")).map(|t| t.outcome.clone()).collect();
    let mut d = adms[0].decisions();
    d.extend(adms[1].decisions());
    for x in &mut d {
        x.order = 0;
    }
    (d, out.total_misses(), outcomes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn kills_of_admitted_jobs_free_their_reservations_and_break_no_guarantee(
        reqs in requests().prop_flat_map(|r| {
            let n = r.len();
            (Just(r), prop::collection::vec(prop::option::weighted(0.3, 0usize..8), n))
        }).prop_map(|(r, k)| r.into_iter().zip(k).collect::<Vec<_>>()),
    ) {
        let (reference, misses, outcomes) = run_stream_killing("tree", &reqs);
        prop_assert_eq!(misses, 0);
        prop_assert!(
            outcomes.iter().all(|o| matches!(o, Some(ThreadOutcome::Completed | ThreadOutcome::Killed))),
            "a job left waiting: {:?}", outcomes
        );
        prop_assert_eq!(outcomes.len(), reference.iter().filter(|d| d.accepted).count());
        for engine in ["linear", "min_laxity"] {
            let (d, misses, _) = run_stream_killing(engine, &reqs);
            prop_assert_eq!(misses, 0, "{}", engine);
            prop_assert_eq!(&d, &reference, "{}", engine);
        }
    }
}

/// What one request got, in the order the requests were made (one OS thread drives every CPU
/// in virtual time, so this order is the order of the tests).
#[derive(Clone, Debug, PartialEq, Eq)]
enum Answer {
    Admitted { wcet: u64, work: u64 },
    Nack,
    TooManyLive,
}

/// Like [`run_stream`] with `max_live` jobs alive at most per CPU, jobs that may need up to
/// three times their WCET: returns each request's time, target and answer, the admitted jobs'
/// threads in the same order, the decisions and the outcome.
fn run_stream_overrunning(engine: &str, reqs: &[Req], max_live: usize) -> Overrunning {
    let mut rt = edf(2);
    let spec = |c| AdmissionSpec::new(c).engine(engine).max_live(max_live);
    let adms: Vec<Admission> = (0..2).map(|c| Admission::new(&mut rt, spec(c)).unwrap()).collect();
    let answers: Arc<Mutex<AnswerLog>> = Arc::default();
    for cpu in 0..2 {
        let mut mine: Vec<Req> = reqs.iter().filter(|r| r.cpu == cpu).cloned().collect();
        mine.sort_by_key(|r| r.time);
        let times: Vec<u64> = mine.iter().map(|r| r.time).collect();
        let (adms, answers) = (adms.clone(), answers.clone());
        submitter(&mut rt, cpu, &times, move |cx, k| {
            let r = &mine[k];
            let name = format!("r{k}@{cpu}");
            let mut log = answers.lock().unwrap();
            let answer = match adms[r.target].admit(cx, job(&name, r.wcet, r.time + r.deadline, r.work)) {
                Ok(a) => {
                    log.1.push(a.thread);
                    Answer::Admitted { wcet: r.wcet, work: r.work }
                }
                Err(Refused::Nack(_)) => Answer::Nack,
                Err(Refused::Error(AdmissionError::TooManyLive { .. })) => Answer::TooManyLive,
                Err(Refused::Error(e)) => panic!("{e}"),
            };
            log.0.push((r.time, r.target, answer));
        });
    }
    let out = rt.run().unwrap();
    let mut d = adms[0].decisions();
    d.extend(adms[1].decisions());
    for x in &mut d {
        x.order = 0;
    }
    let (answers, threads) = answers.lock().unwrap().clone();
    Overrunning { answers, threads, decisions: d, out }
}

/// Each request's time, target and answer, and the admitted jobs' threads, in order.
type AnswerLog = (Vec<(u64, usize, Answer)>, Vec<tempi::ThreadId>);

/// What [`run_stream_overrunning`] returns.
struct Overrunning {
    answers: Vec<(u64, usize, Answer)>,
    threads: Vec<tempi::ThreadId>,
    decisions: Vec<Decision>,
    out: tempi::RunOutcome,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Admitted jobs that overrun their WCET: each is stopped at exactly its WCET and none
    /// runs past it; no admitted job misses its deadline, the killed ones included (a budget
    /// runs out at the latest at the deadline); a job that ended at `t` — completed or killed
    /// by its budget — no longer counts against `max_live` for a request at `t`, on its own
    /// CPU or from the other; and the engines still decide alike.
    #[test]
    fn overrunning_jobs_stop_at_their_wcet_miss_nothing_and_leave_max_live_at_once(
        reqs in prop::collection::vec(
            (0u64..40, 0usize..2, 0usize..2, 1u64..8, 0u64..20, 0u64..=300).prop_map(
                |(time, cpu, target, wcet, slack, pct)| Req {
                    // Some work, so that no job ends at the instant of its admission (when a
                    // zero-work job ends, relative to the other CPU's requests of that
                    // instant, is the CPUs' order).
                    time, cpu, target, wcet, deadline: wcet + slack, work: (wcet * pct / 100).max(1),
                },
            ),
            1..16,
        ),
        max_live in 1usize..3,
    ) {
        let Overrunning { answers, threads, decisions: reference, out } =
            run_stream_overrunning("tree", &reqs, max_live);
        prop_assert_eq!(out.total_misses(), 0);
        let records = tempi::trace::report::jobs(&out);
        // Where and when each admitted job ended (it has one job).
        let mut ends: Vec<(usize, Time)> = Vec::new();
        let admitted = answers.iter().filter_map(|(_, target, a)| match a {
            Answer::Admitted { wcet, work } => Some((target, wcet, work)),
            _ => None,
        });
        for ((target, wcet, work), thread) in admitted.zip(&threads) {
            let summary = out.thread(*thread).unwrap();
            let overran = work > wcet;
            let expected = if overran { ThreadOutcome::Killed } else { ThreadOutcome::Completed };
            prop_assert_eq!(summary.outcome.as_ref(), Some(&expected), "{:?}", summary.name);
            prop_assert_eq!(summary.stats.cpu_time, us(*work.min(wcet)), "{:?}", summary.name);
            let record = records.iter().find(|j| j.thread_id == *thread).unwrap();
            prop_assert!(!record.missed, "{:?}", record);
            ends.push((*target, record.finish.unwrap()));
        }
        // Replay the answers in order: a job admitted earlier is alive at a request at `t`
        // unless it ended before `t` or at `t`, completed or killed by its budget.
        let mut admitted_so_far: Vec<(usize, Time)> = Vec::new();
        let mut next = ends.iter();
        for (time, target, answer) in &answers {
            let now = at(*time);
            let alive = admitted_so_far.iter().filter(|&&(cpu, end)| cpu == *target && end > now).count();
            match answer {
                Answer::Admitted { .. } => {
                    prop_assert!(alive < max_live, "admitted at {:?} with {} alive", now, alive);
                    admitted_so_far.push(*next.next().unwrap());
                }
                Answer::TooManyLive => prop_assert_eq!(alive, max_live, "refused at {:?}", now),
                Answer::Nack => {}
            }
        }
        for engine in ["linear", "min_laxity", "hashed"] {
            let o = run_stream_overrunning(engine, &reqs, max_live);
            prop_assert_eq!(o.out.total_misses(), 0, "{}", engine);
            prop_assert_eq!(&o.decisions, &reference, "{}", engine);
            prop_assert_eq!(&o.answers, &answers, "{}", engine);
        }
    }
}
