//! PORTS submission to another CPU's admission in real time: the target CPU makes the test
//! and either starts the job there or answers a NACK with its idle time, and the submitter
//! resubmits a smaller job or goes elsewhere; the same submissions get the same decisions in
//! virtual time. Properties only, no timing: the jobs sleep, the margins are wide.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::admission::{Admission, AdmissionSpec, Admitted, JobRequest, Refused};
use tempi::clock::{Clock, RealClock};
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn real_edf(cpus: usize) -> Runtime<RealClock> {
    let config = Config::new(cpus).pin(false).scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    Runtime::new(config).unwrap()
}

/// A job that holds its reservation by sleeping (no CPU time, so no overrun and no miss).
fn sleeper(name: &str, wcet: Duration, deadline: tempi::Time, sleep: Duration) -> JobRequest {
    JobRequest::new(name, wcet, deadline, move |cx| cx.sleep(sleep))
}

#[test]
fn real_time_nack_then_resubmission_elsewhere_is_accepted() {
    let mut rt = real_edf(2);
    let adm0 = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    let adm1 = Admission::new(&mut rt, AdmissionSpec::new(1)).unwrap();
    let (far, home) = (adm1.clone(), adm0.clone());
    let placed: Arc<Mutex<Vec<Admitted>>> = Arc::default();
    let keep = placed.clone();
    rt.spawn(ThreadSpec::new("submitter").cpu(0), move |cx| {
        let d = cx.now() + ms(400);
        let idle = far.idle_before(cx, d).unwrap();
        assert!(idle > ms(300) && idle <= ms(400), "{idle:?}");
        keep.lock().unwrap().push(far.admit(cx, sleeper("J1", ms(240), d, ms(100))).unwrap());
        let nack = match far.admit(cx, sleeper("J2", ms(240), d, ms(100))) {
            Err(Refused::Nack(n)) => n,
            other => panic!("expected a NACK, got {other:?}"),
        };
        assert_eq!((&*nack.request, nack.cpu, nack.deadline), ("J2", 1, d));
        assert!(nack.idle <= ms(160) && nack.idle > ms(60), "{:?}", nack.idle);
        // A smaller version that fits what CPU 1 has left, and the full one at home.
        keep.lock().unwrap().push(far.admit(cx, sleeper("J2-small", nack.idle / 2, d, ms(10))).unwrap());
        keep.lock().unwrap().push(home.admit(cx, sleeper("J2", ms(240), d, ms(10))).unwrap());
    })
    .unwrap();
    let out = rt.run().unwrap();
    let placed = placed.lock().unwrap();
    assert_eq!(placed.iter().map(|a| a.cpu).collect::<Vec<_>>(), [1, 1, 0]);
    for a in placed.iter() {
        let t = out.thread(a.thread).unwrap();
        assert_eq!((t.cpu, &t.outcome), (a.cpu, &Some(ThreadOutcome::Completed)));
    }
    let d: Vec<(String, usize, usize, bool)> =
        adm1.decisions().iter().map(|d| (d.request.to_string(), d.cpu, d.target_cpu, d.accepted)).collect();
    assert_eq!(d, [("J1".into(), 0, 1, true), ("J2".into(), 0, 1, false), ("J2-small".into(), 0, 1, true)]);
    assert_eq!(adm0.decisions().len(), 1);
    // The submissions crossed as threads of CPU 1, which ended, none late.
    let submissions: Vec<_> = out.threads.iter().filter(|t| t.name.starts_with("submit:")).collect();
    assert_eq!(submissions.len(), 4);
    assert!(submissions.iter().all(|t| t.cpu == 1 && t.outcome == Some(ThreadOutcome::Completed)));
    assert_eq!(out.total_misses(), 0);
}

/// Submissions from CPU 0 to CPU 1, all due 1 s after the first: what each decision was
/// (every margin is at least 80 ms, so the time the submissions take does not matter).
fn decisions<C: Clock>(rt: &mut Runtime<C>) -> Arc<Mutex<Vec<(String, bool)>>> {
    let adm1 = Admission::new(rt, AdmissionSpec::new(1)).unwrap();
    let seen: Arc<Mutex<Vec<(String, bool)>>> = Arc::default();
    let log = seen.clone();
    rt.spawn(ThreadSpec::new("submitter").cpu(0).deadline(Duration::from_nanos(1)), move |cx| {
        let d = cx.now() + ms(1000);
        for (k, wcet) in [400, 400, 400, 100, 300, 20].into_iter().enumerate() {
            let r = adm1.admit(cx, sleeper(&format!("j{k}"), ms(wcet), d, ms(50)));
            match r {
                Ok(_) | Err(Refused::Nack(_)) => log.lock().unwrap().push((format!("j{k}"), r.is_ok())),
                Err(e) => panic!("{e}"),
            }
        }
    })
    .unwrap();
    seen
}

#[test]
fn cross_cpu_submissions_get_the_same_decisions_in_real_and_virtual_time() {
    let mut sim = Runtime::simulated(2);
    sim.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    let virtual_seen = decisions(&mut sim);
    sim.run().unwrap();
    let mut rt = real_edf(2);
    let real_seen = decisions(&mut rt);
    rt.run().unwrap();
    let expected: Vec<(String, bool)> =
        [true, true, false, true, false, true].iter().enumerate().map(|(k, &ok)| (format!("j{k}"), ok)).collect();
    assert_eq!(*virtual_seen.lock().unwrap(), expected);
    assert_eq!(*real_seen.lock().unwrap(), expected);
}
