//! PORTS admission on the runtime, in virtual time: a job the test admitted but whose thread
//! could not be started, or was stopped before its body ran, gives its reservation back, and
//! the caller and the job-event log say so.

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
