//! `Runtime::run` in virtual time refuses, before anything runs, a runtime that only a kill
//! could end; a bounded one runs to its end, and `run_until(Time::MAX)` is the way to run
//! one that the program ends itself.

use std::time::Duration;

use tempi::{Error, Runtime, ThreadSpec, Time, TimerSpec};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const ADVICE: &str =
    ", and the clock only moves on; give a horizon with run_until (or run_until(Time::MAX) if the program ends it by a kill)";

#[test]
fn run_refuses_a_periodic_thread_without_a_job_limit() {
    let mut rt = Runtime::simulated(2);
    rt.spawn(ThreadSpec::new("once"), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("tick").cpu(1).periodic(ms(5)), |cx| cx.work(ms(1))).unwrap();
    match rt.run() {
        Err(Error::InvalidConfig(m)) => assert_eq!(
            m,
            format!(
                "Runtime::run in virtual time would never return: periodic thread `tick` has no `max_jobs`{ADVICE}"
            )
        ),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn run_refuses_a_periodic_timing_event() {
    let mut rt = Runtime::simulated(1);
    rt.add_timer(TimerSpec::every(ms(3)), |_| {}).unwrap();
    match rt.run() {
        Err(Error::InvalidConfig(m)) => {
            assert_eq!(m, format!("Runtime::run in virtual time would never return: a periodic timing event{ADVICE}"))
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn a_bounded_periodic_thread_runs_to_its_last_job() {
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("tick").periodic(ms(5)).max_jobs(3), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.end, Time::from_millis(11));
    assert_eq!(out.thread(t).unwrap().stats.completed, 3);
}

#[test]
fn run_until_max_runs_what_a_kill_ends() {
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("tick").periodic(ms(5)).priority(1), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("stopper").priority(2), move |cx| {
        cx.sleep(ms(12));
        cx.kill(t).unwrap();
    })
    .unwrap();
    let out = rt.run_until(Time::MAX).unwrap();
    assert_eq!(out.end, Time::from_millis(12));
    assert_eq!(out.thread(t).unwrap().stats.completed, 3);
}
