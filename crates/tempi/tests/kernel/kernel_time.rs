//! Where time is charged: the runtime's own time goes to the CPU's kernel
//! (`RunOutcome::kernel_time`), not to the thread it serves, and the per-job overhead
//! (`Config::job_overhead`) is reserved by admission and the collator. Real-time checks are
//! properties with generous bounds; virtual-time ones are exact.

use crate::common;

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use common::{ms, us};
use tempi::admission::{Admission, AdmissionSpec, JobRequest, Refused};
use tempi::clock::{Clock, RealClock};
use tempi::policy::sched::{Collator, Edf};
use tempi::trace::report::jobs;
use tempi::{Config, Runtime, ThreadOutcome, ThreadSpec, Time};

/// Real-time tests in this file take turns: each spins a dispatcher.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Five admitted jobs, one every 10 ms, each with body `work(wcet)`, WCET 2 ms, due 8 ms
/// after its request; returns the outcome of each job's thread.
fn admitted_jobs<C: Clock>(mut rt: Runtime<C>) -> (tempi::RunOutcome, Vec<Option<ThreadOutcome>>) {
    rt.set_scheduler(|| Box::new(Edf::new()));
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    let a = adm.clone();
    rt.spawn(ThreadSpec::new("submit").deadline(ms(1)), move |cx| {
        for k in 0..5u64 {
            cx.sleep_until(Time::from_millis(10 * k));
            let due = Time::from_millis(10 * k + 8);
            let job = JobRequest::new(format!("job{k}"), ms(2), due, move |cx| cx.work(ms(2)));
            a.admit(cx, job).unwrap();
        }
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(60)).unwrap();
    let outcomes = (0..5).map(|k| out.thread_named(&format!("job{k}")).and_then(|t| t.outcome.clone())).collect();
    (out, outcomes)
}

#[test]
fn kernel_time_real_time_job_of_exactly_its_wcet_completes_under_the_measured_overhead() {
    let _turn = serial();
    let cfg = Config::new(1).fifo_priority(Some(50)).job_overhead(Config::MEASURED_JOB_OVERHEAD);
    let (out, outcomes) = admitted_jobs(Runtime::<RealClock>::new(cfg).unwrap());
    assert_eq!(outcomes, vec![Some(ThreadOutcome::Completed); 5], "warnings: {:?}", out.warnings);
    // The dispatcher's own time went somewhere, and not to the jobs.
    assert_eq!(out.kernel_time.len(), 1);
    assert!(out.kernel_time[0] > Duration::ZERO);
}

#[test]
fn kernel_time_is_zero_in_virtual_time_and_cpu_time_is_the_work() {
    let cfg = Config::new(2).job_overhead(us(50));
    let (out, outcomes) = admitted_jobs(Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap());
    assert_eq!(outcomes, vec![Some(ThreadOutcome::Completed); 5]);
    assert_eq!(out.kernel_time, vec![Duration::ZERO; 2]);
    for k in 0..5 {
        assert_eq!(out.thread_named(&format!("job{k}")).unwrap().stats.cpu_time, ms(2));
    }
}

/// Two requests at time 0 due at 10 µs, of 6 µs and 4 µs: they fit exactly without overhead.
fn decisions_with_overhead(overhead: Duration) -> (Vec<bool>, Vec<(String, Time)>) {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).job_overhead(overhead)).unwrap();
    rt.set_scheduler(|| Box::new(Edf::new()));
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    let a = adm.clone();
    rt.spawn(ThreadSpec::new("submit").deadline(Duration::from_nanos(1)), move |cx| {
        let due = Time::from_micros(10);
        for (name, wcet) in [("a", us(6)), ("b", us(4))] {
            match a.admit(cx, JobRequest::new(name, wcet, due, move |cx| cx.work(wcet))) {
                Ok(_) | Err(Refused::Nack(_)) => {}
                Err(e) => panic!("{e:?}"),
            }
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    let accepted = adm.decisions().iter().map(|d| d.accepted).collect();
    let finished = jobs(&out).into_iter().filter_map(|j| Some((j.thread, j.finish?))).collect();
    (accepted, finished)
}

#[test]
fn kernel_time_admission_reserves_the_per_job_overhead_exactly() {
    let (accepted, finished) = decisions_with_overhead(Duration::ZERO);
    assert_eq!(accepted, [true, true]);
    let at = |n: u64| Time::from_micros(n);
    assert_eq!(finished, [("submit".into(), at(0)), ("a".into(), at(6)), ("b".into(), at(10))]);
    // With 1 µs per job the second no longer fits: 7 µs are reserved for the first, and the
    // second would need 5 of the 3 left.
    let (accepted, finished) = decisions_with_overhead(us(1));
    assert_eq!(accepted, [true, false]);
    assert_eq!(finished, [("submit".into(), at(0)), ("a".into(), at(6))]);
}

/// A guaranteed job (3 ms every 10 ms) and a best-effort one (30 ms) under the collator:
/// when the guaranteed job's first job ends.
fn collated_first_end(overhead: Duration) -> Time {
    let cfg = Config::new(1)
        .job_overhead(overhead)
        .scheduler(move || Box::new(Collator::standard().with_job_overhead(overhead)));
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
    rt.spawn(ThreadSpec::new("control").periodic(ms(10)).wcet(ms(3)).max_jobs(1), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("planner").wcet(ms(30)), |cx| cx.work(ms(30))).unwrap();
    let out = rt.run_until(Time::from_millis(40)).unwrap();
    assert_eq!(out.total_misses(), 0);
    jobs(&out).into_iter().find(|j| j.thread == "control").and_then(|j| j.finish).unwrap()
}

#[test]
fn kernel_time_collator_starts_a_guaranteed_job_earlier_by_the_overhead() {
    // The planner steals the slack first; the guaranteed job runs just in time, and the
    // overhead it is reserved moves it exactly that much earlier.
    assert_eq!(collated_first_end(Duration::ZERO), Time::from_millis(10));
    assert_eq!(collated_first_end(us(50)), Time::from_micros(9_950));
}

#[test]
fn kernel_time_a_real_time_run_without_fifo_warns_once() {
    let _turn = serial();
    let run = |cfg: Config| {
        let mut rt = Runtime::<RealClock>::new(cfg).unwrap();
        rt.spawn(ThreadSpec::new("t"), |cx| cx.work(us(100))).unwrap();
        rt.run().unwrap().warnings
    };
    let without = run(Config::new(2).pin(false));
    assert_eq!(without.iter().filter(|w| w.contains("no SCHED_FIFO")).count(), 1, "{without:?}");
    let with = run(Config::new(1).pin(false).fifo_priority(Some(10)));
    assert!(!with.iter().any(|w| w.contains("no SCHED_FIFO")), "{with:?}");
}
