//! A semaphore unit handed to a waiting thread that has not run since is not lost when that
//! thread's job is abandoned before it runs (its deadline passes under `AbortJob`): the unit
//! goes back to the semaphore, as if the thread had never waited. Virtual time, fixed
//! priority, exact instants.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::ms;
use tempi::sync::SemSpec;
use tempi::{MissPolicy, Runtime, ThreadSpec, Time};

type Log = Arc<StdMutex<Vec<(&'static str, Time)>>>;

/// How `waiter`'s job is ended while it holds a unit it has not seen.
#[derive(Clone, Copy)]
enum End {
    /// Its deadline passes under `MissPolicy::AbortJob`; it has no further job.
    AbortLast,
    /// The same, but a second job follows (released at 100 ms).
    AbortOneOfTwo,
}

/// `waiter` (priority 1) waits for a unit of `s` (none free) from 0. `giver` (priority 3),
/// released at 1, vacates a unit, which goes to `waiter`, then works to 5: `waiter` cannot
/// run. At 3 `waiter`'s deadline passes and its job is abandoned without having run. `taker` (priority 4),
/// released at 4, asks for a unit: the one `waiter` never saw.
fn run(end: End) -> Vec<(&'static str, Time)> {
    let mut rt = Runtime::simulated(1);
    let s = Arc::new(rt.create_semaphore(SemSpec::new("s", 0)).unwrap());
    let log: Log = Arc::default();
    let (s1, log1) = (s.clone(), log.clone());
    let mut spec = ThreadSpec::new("waiter").priority(1).periodic(ms(100));
    spec = match end {
        End::AbortLast => spec.deadline(ms(3)).miss_policy(MissPolicy::AbortJob).max_jobs(1),
        End::AbortOneOfTwo => spec.deadline(ms(3)).miss_policy(MissPolicy::AbortJob).max_jobs(2),
    };
    rt.spawn(spec, move |cx| {
        s1.procure(cx).unwrap();
        log1.lock().unwrap().push(("waiter has a unit", cx.now()));
        s1.vacate(cx).unwrap();
    })
    .unwrap();
    let (s2, log2) = (s.clone(), log.clone());
    rt.spawn(ThreadSpec::new("giver").priority(3).periodic(ms(1000)).phase(ms(1)).max_jobs(1), move |cx| {
        s2.vacate(cx).unwrap();
        log2.lock().unwrap().push(("giver vacates", cx.now()));
        cx.work(ms(4));
    })
    .unwrap();
    let (s3, log3) = (s.clone(), log.clone());
    rt.spawn(ThreadSpec::new("taker").priority(4).periodic(ms(1000)).phase(ms(4)).max_jobs(1), move |cx| {
        s3.procure(cx).unwrap();
        log3.lock().unwrap().push(("taker has a unit", cx.now()));
    })
    .unwrap();
    rt.run_until(Time::from_millis(150)).unwrap();

    log.lock().unwrap().clone()
}

#[test]
fn a_unit_granted_to_a_job_aborted_before_it_ran_goes_back() {
    assert_eq!(
        run(End::AbortLast),
        [("giver vacates", Time::from_millis(1)), ("taker has a unit", Time::from_millis(4))]
    );
}

#[test]
fn a_unit_granted_to_a_job_aborted_before_it_ran_goes_back_and_the_next_job_waits_again() {
    assert_eq!(
        run(End::AbortOneOfTwo),
        [
            ("giver vacates", Time::from_millis(1)),
            ("taker has a unit", Time::from_millis(4)),
            // The second job finds the unit `taker` took and kept: none is free, and it waits
            // to the end of the run.
        ]
    );
}
