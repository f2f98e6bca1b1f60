//! PORTS admission on the runtime, in virtual time: a job the test admitted but whose thread
//! could not be started, or was stopped before its body ran, leaves the engine at once (its
//! reservation and its entry), and the caller and the job-event log say so.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempi::admission::{Admission, AdmissionError, AdmissionSpec, JobEventKind, JobRequest, Refused};
use tempi::clock::VirtualClock;
use tempi::{Config, Error, Runtime, ThreadOutcome, ThreadSpec, Time};

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn at(n: u64) -> Time {
    Time::from_micros(n)
}

fn edf(config: Config) -> Runtime<VirtualClock> {
    let mut rt = Runtime::new(config).unwrap();
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    rt
}

const ENGINES: [&str; 4] = ["tree", "linear", "min_laxity", "hashed"];

fn job(name: &str, wcet: u64, deadline: u64) -> JobRequest {
    JobRequest::new(name, us(wcet), at(deadline), move |cx| cx.work(us(wcet)))
}

#[test]
fn an_admitted_job_whose_thread_cannot_be_created_gives_its_reservation_back() {
    for engine in ENGINES {
        // One thread per CPU: the submitter holds it, so the job's spawn fails.
        let mut rt = edf(Config::new(1).max_threads(1));
        let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine(engine).max_live(1)).unwrap();
        let a = adm.clone();
        let seen: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let log = seen.clone();
        rt.spawn(ThreadSpec::new("submitter").deadline(Duration::from_nanos(1)), move |cx| {
            let mut log = log.lock().unwrap();
            // Two jobs already on the books would do: a reservation left behind shows in both
            // the idle time before its deadline and the laxity of a later deadline.
            log.push(a.idle_before(cx, at(10)).unwrap());
            log.push(a.idle_before(cx, at(20)).unwrap());
            let r = a.admit(cx, job("orphan", 6, 10));
            assert_eq!(r, Err(Refused::Error(AdmissionError::NotStarted(Error::TooManyThreads { max: 1 }))));
            // Not left in the engine until its deadline: gone at once.
            assert_eq!(a.entries(), 0, "{engine}");
            log.push(a.idle_before(cx, at(10)).unwrap());
            log.push(a.idle_before(cx, at(20)).unwrap());
            log.push(a.idle_before(cx, at(8)).unwrap());
            // The whole 10 µs before 10 is there to be asked for again.
            match a.admit(cx, job("again", 10, 10)) {
                Err(Refused::Error(AdmissionError::NotStarted(Error::TooManyThreads { .. }))) => {}
                other => panic!("{engine}: {other:?}"),
            }
        })
        .unwrap();
        let out = rt.run().unwrap();
        assert_eq!(out.total_misses(), 0, "{engine}");
        assert_eq!(*seen.lock().unwrap(), [us(10), us(20), us(10), us(20), us(8)], "{engine}");
        // Not admitted: no decision; the failure is a job event with no thread.
        assert!(adm.decisions().is_empty(), "{engine}");
        let events: Vec<(String, Option<tempi::ThreadId>, Time, Duration, JobEventKind)> =
            adm.job_events().into_iter().map(|e| (e.request.to_string(), e.thread, e.at, e.wcet, e.kind)).collect();
        let unstarted = JobEventKind::NotStarted(Error::TooManyThreads { max: 1 });
        assert_eq!(
            events,
            [
                ("orphan".into(), None, at(0), us(6), unstarted.clone()),
                ("again".into(), None, at(0), us(10), unstarted)
            ],
            "{engine}"
        );
        let (_, rows) = adm.report_rows();
        assert_eq!(rows[0].kind, "not started: no free thread slot: at most 1 threads per CPU", "{engine}");
    }
}

#[test]
fn an_admitted_job_killed_before_its_body_ran_frees_its_set_and_its_reservation() {
    for engine in ENGINES {
        let mut rt = edf(Config::new(1));
        let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine(engine).max_live(1)).unwrap();
        let a = adm.clone();
        let seen: Arc<Mutex<Vec<Duration>>> = Arc::default();
        let log = seen.clone();
        let killed: Arc<Mutex<Option<tempi::ThreadId>>> = Arc::default();
        let victim = killed.clone();
        rt.spawn(ThreadSpec::new("submitter").deadline(Duration::from_nanos(1)), move |cx| {
            let ok = a.admit(cx, job("doomed", 6, 10)).unwrap();
            *victim.lock().unwrap() = Some(ok.thread);
            cx.kill(ok.thread).unwrap();
            cx.sleep(us(1));
            assert_eq!(a.entries(), 0, "{engine}");
            let mut log = log.lock().unwrap();
            // At 1: nothing ran, nothing is reserved: 10 − 1.
            log.push(a.idle_before(cx, at(10)).unwrap());
            // Its one enforcement set is free again.
            a.admit(cx, job("next", 9, 10)).unwrap();
            log.push(a.idle_before(cx, at(10)).unwrap());
        })
        .unwrap();
        let out = rt.run().unwrap();
        let doomed = killed.lock().unwrap().unwrap();
        assert_eq!(out.thread(doomed).unwrap().outcome, Some(ThreadOutcome::Killed), "{engine}");
        assert_eq!(out.thread(doomed).unwrap().stats.cpu_time, Duration::ZERO, "{engine}");
        assert_eq!(*seen.lock().unwrap(), [us(9), us(0)], "{engine}");
        // The submitter, due at 1 ns, misses by sleeping; the jobs do not.
        let misses: Vec<(&str, u64)> = out.threads.iter().map(|t| (&*t.name, t.stats.misses)).collect();
        assert_eq!(misses, [("submitter", 1), ("doomed", 0), ("next", 0)], "{engine}");
        assert_eq!(out.end, at(10), "{engine}");
    }
}

/// What the CPU answers about deadlines 5, 10, ..., 60 and how many entries it holds, asked at
/// 2 µs by a 1 ns-deadline thread after it admitted, in order, the jobs `(name, wcet, deadline)`
/// of `jobs` (each taking 1 µs of its WCET) on an admission with room for `capacity` entries,
/// killing the jobs named `doomed*` before they start; then whether one more job due at 70
/// with 1 µs of work is admitted.
fn after(engine: &str, capacity: usize, jobs: &[(&str, u64, u64)]) -> (Vec<Duration>, usize, bool) {
    let mut rt = edf(Config::new(1));
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine(engine).capacity(capacity).max_live(8)).unwrap();
    let seen: Arc<Mutex<(Vec<Duration>, usize, bool)>> = Arc::default();
    let out = seen.clone();
    let jobs: Vec<(String, u64, u64)> = jobs.iter().map(|&(n, c, d)| (n.to_string(), c, d)).collect();
    rt.spawn(ThreadSpec::new("submitter").deadline(Duration::from_nanos(1)), move |cx| {
        for (name, wcet, deadline) in jobs.iter().cloned() {
            let r = JobRequest::new(name.as_str(), us(wcet), at(deadline), |cx| cx.work(us(1)));
            let ok = adm.admit(cx, r).unwrap();
            if name.starts_with("doomed") {
                // It ends, its body dropped unrun, when EDF first dispatches it: once the
                // submitter sleeps.
                cx.kill(ok.thread).unwrap();
            }
        }
        cx.sleep(us(2));
        let idle = (1..=12).map(|k| adm.idle_before(cx, at(5 * k)).unwrap()).collect();
        let entries = adm.entries();
        let more = adm.admit(cx, JobRequest::new("more", us(1), at(70), |cx| cx.work(us(1)))).is_ok();
        *out.lock().unwrap() = (idle, entries, more);
    })
    .unwrap();
    rt.run().unwrap();

    seen.lock().unwrap().clone()
}

#[test]
fn a_job_killed_before_it_started_leaves_the_engine_as_if_never_admitted() {
    for engine in ENGINES {
        // Two jobs killed before they start, among three that run 1 µs each (by 2 µs, two of
        // them have run; the third, due at 50, has its 1 µs still to do).
        let with =
            after(engine, 5, &[("a", 4, 20), ("doomed-1", 9, 30), ("b", 3, 40), ("doomed-2", 5, 15), ("c", 6, 50)]);
        let without = after(engine, 5, &[("a", 4, 20), ("b", 3, 40), ("c", 6, 50)]);
        assert_eq!(with, without, "{engine}");
        // At 2 µs a and b have ended (entries with nothing left); c, started or not, still
        // holds its 6 µs WCET less nothing charged, due at 50: a laxity of 50 − 2 − 6 = 42.
        let expected = [3, 8, 13, 18, 23, 28, 33, 38, 42, 42, 47, 52].map(us);
        assert_eq!(with.0, expected, "{engine}");
        // Three entries, not five: the job due at 70 still fits in the capacity of five.
        assert_eq!((with.1, with.2), (3, true), "{engine}");
    }
}
