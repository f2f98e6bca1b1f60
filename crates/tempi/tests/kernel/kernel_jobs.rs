//! Jobs in virtual time: deadline misses detected at the deadline instant, miss handlers, miss
//! policies, abort time, sporadic releases, timing events.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{markers, ms, segments};
use tempi::trace::TraceKind;
use tempi::{MissEvent, MissPolicy, Runtime, ThreadSpec, Time, TimerSpec};

/// One periodic thread, T = D = 4 ms, whose first job needs 6 ms and the others 1 ms.
fn overrun(policy: MissPolicy) -> (tempi::RunOutcome, Vec<MissEvent>) {
    let seen: Arc<Mutex<Vec<MissEvent>>> = Arc::default();
    let log = seen.clone();
    let mut rt = Runtime::simulated(1);
    let spec = ThreadSpec::new("p").periodic(ms(4)).miss_policy(policy).on_miss(move |m| log.lock().unwrap().push(*m));
    rt.spawn(spec, |cx| cx.work(if cx.job().number == 0 { ms(6) } else { ms(1) })).unwrap();
    let out = rt.run_until(Time::from_millis(16)).unwrap();
    let seen = seen.lock().unwrap().clone();
    (out, seen)
}

#[test]
fn kernel_miss_detected_at_deadline_instant_and_handler_runs() {
    let (out, seen) = overrun(MissPolicy::Continue);
    assert_eq!(markers(&out, TraceKind::Miss), ["p#0@4"]);
    assert_eq!(seen.len(), 1);
    assert_eq!((seen[0].job, seen[0].deadline, seen[0].at), (0, Time::from_millis(4), Time::from_millis(4)));
    // The late job runs on; the release at 4 waited and starts at once at 6.
    assert_eq!(segments(&out), ["p:0-6:done", "p:6-7:done", "p:8-9:done", "p:12-13:done"]);
    let s = &out.threads[0].stats;
    assert_eq!((s.completed, s.aborted, s.misses, s.skipped), (4, 0, 1, 0));
    assert_eq!(s.response_max, Some(ms(6)));
}

#[test]
fn kernel_miss_policy_abort_abandons_the_job_at_the_deadline() {
    let (out, _) = overrun(MissPolicy::AbortJob);
    assert_eq!(markers(&out, TraceKind::JobAbort), ["p#0@4"]);
    assert_eq!(segments(&out), ["p:0-4:abort", "p:4-5:done", "p:8-9:done", "p:12-13:done"]);
    let s = &out.threads[0].stats;
    assert_eq!((s.completed, s.aborted, s.misses), (3, 1, 1));
    assert_eq!(s.cpu_time, ms(7));
}

#[test]
fn kernel_miss_policy_skip_next_drops_the_following_release() {
    let (out, _) = overrun(MissPolicy::SkipNext);
    assert_eq!(markers(&out, TraceKind::ReleaseSkipped), ["p#0@4"]);
    assert_eq!(segments(&out), ["p:0-6:done", "p:8-9:done", "p:12-13:done"]);
    let s = &out.threads[0].stats;
    assert_eq!((s.completed, s.misses, s.skipped), (3, 1, 1));
}

#[test]
fn kernel_miss_detected_while_thread_is_not_running() {
    // `low` never gets the CPU before its deadline: the miss is still reported at 2 ms.
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("hog").priority(5), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("low").deadline(ms(2)), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(markers(&out, TraceKind::Miss), ["low#0@2"]);
    assert_eq!(segments(&out), ["hog:0-5:exit", "low:5-6:exit"]);
}

#[test]
fn kernel_abort_wakes_a_sleeping_job() {
    let mut rt = Runtime::simulated(1);
    let reached = Arc::new(Mutex::new(false));
    let r = reached.clone();
    rt.spawn(ThreadSpec::new("s").deadline(ms(3)).miss_policy(MissPolicy::AbortJob), move |cx| {
        cx.sleep(ms(10));
        *r.lock().unwrap() = true;
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(!*reached.lock().unwrap(), "the code after the sleep must not run");
    assert_eq!(markers(&out, TraceKind::JobAbort), ["s#0@3"]);
    assert_eq!(out.end, Time::from_millis(3));
}

#[test]
fn kernel_abort_time_applies_whatever_the_miss_policy() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("soft").deadline(ms(2)).abort_after(ms(3)), |cx| cx.work(ms(10))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(markers(&out, TraceKind::Miss), ["soft#0@2"]);
    assert_eq!(markers(&out, TraceKind::JobAbort), ["soft#0@3"]);
}

#[test]
fn kernel_abort_runs_destructors() {
    struct Flag(Arc<Mutex<bool>>);
    impl Drop for Flag {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = true;
        }
    }
    let dropped = Arc::new(Mutex::new(false));
    let d = dropped.clone();
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("a").deadline(ms(1)).miss_policy(MissPolicy::AbortJob), move |cx| {
        let _guard = Flag(d.clone());
        cx.work(ms(5));
    })
    .unwrap();
    rt.run().unwrap();
    assert!(*dropped.lock().unwrap());
}

#[test]
fn kernel_sporadic_releases_respect_minimum_interarrival() {
    let mut rt = Runtime::simulated(1);
    let s = rt.spawn(ThreadSpec::new("s").sporadic(ms(5)).deadline(ms(5)), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("trigger").priority(9), move |cx| {
        cx.release(s).unwrap();
        cx.sleep(ms(1));
        cx.release(s).unwrap(); // too early: deferred to 5
        cx.sleep_until(Time::from_millis(12));
        cx.release(s).unwrap(); // on time
    })
    .unwrap();
    let out = rt.run().unwrap();
    let releases: Vec<String> = markers(&out, TraceKind::Release).into_iter().filter(|m| m.starts_with("s#")).collect();
    assert_eq!(releases, ["s#0@0", "s#1@5", "s#2@12"]);
    assert_eq!(out.thread(s).unwrap().stats.completed, 3);
}

#[test]
fn kernel_release_of_non_sporadic_thread_is_an_error() {
    let mut rt = Runtime::simulated(1);
    let p = rt.spawn(ThreadSpec::new("p").periodic(ms(5)).max_jobs(1), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("t"), move |cx| assert_eq!(cx.release(p), Err(tempi::Error::NotSporadic(p)))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("t").unwrap().outcome, Some(tempi::ThreadOutcome::Completed));
}

#[test]
fn kernel_timing_events_fire_exactly_and_release_jobs() {
    let fired = Arc::new(Mutex::new(Vec::new()));
    let f = fired.clone();
    let mut rt = Runtime::simulated(1);
    let s = rt.spawn(ThreadSpec::new("s").sporadic(ms(0)), |cx| cx.work(ms(1))).unwrap();
    rt.add_timer(TimerSpec::every(ms(3)).starting(Time::from_millis(1)), move |ev| {
        f.lock().unwrap().push(ev.now());
        ev.release(s).unwrap();
        if ev.now() >= Time::from_millis(7) {
            ev.cancel();
        }
    })
    .unwrap();
    rt.add_timer(TimerSpec::at(Time::from_millis(2)), |_| {}).unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(*fired.lock().unwrap(), [1, 4, 7].map(Time::from_millis));
    assert_eq!(segments(&out), ["s:1-2:done", "s:4-5:done", "s:7-8:done"]);
    assert_eq!(out.trace.iter().filter(|r| r.kind == TraceKind::Timer).count(), 4);
}

/// The handler of an execution-time timer is held to the same: its release of a periodic
/// thread, refused, is counted and traced (`arg` `u64::MAX`), not dropped.
#[test]
fn kernel_exec_timer_release_that_cannot_be_carried_out_is_counted_and_traced() {
    let mut rt = Runtime::simulated(1);
    let p = rt.spawn(ThreadSpec::new("p").periodic(ms(10)).max_jobs(1), |cx| cx.work(ms(1))).unwrap();
    let w = rt.spawn(ThreadSpec::new("w").priority(2), |cx| cx.work(ms(5))).unwrap();
    rt.arm_thread_timer(w, ms(2), move |ev| ev.release(p).unwrap()).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.event_releases_refused, 1);
    let refused: Vec<_> = out
        .trace
        .iter()
        .filter(|r| r.kind == TraceKind::EventReleaseRefused)
        .map(|r| (r.thread, r.time.as_nanos() / 1_000_000, r.arg))
        .collect();
    // `w` runs first, from 0: its 2 ms of CPU time are up at 2 ms.
    assert_eq!(refused, [(p, 2, u64::MAX)]);
}

#[test]
fn kernel_event_release_that_cannot_be_carried_out_is_counted_and_traced() {
    let mut rt = Runtime::simulated(1);
    // Periodic: an event cannot release it (it keeps the run going until 30 ms).
    let p = rt.spawn(ThreadSpec::new("p").periodic(ms(10)), |cx| cx.work(ms(1))).unwrap();
    let s = rt.spawn(ThreadSpec::new("s").sporadic(ms(0)), |cx| cx.work(ms(1))).unwrap();
    rt.add_timer(TimerSpec::every(ms(3)).starting(Time::from_millis(1)), move |ev| {
        ev.release(s).unwrap();
        ev.release(p).unwrap();
        if ev.now() >= Time::from_millis(7) {
            ev.cancel();
        }
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(out.thread(s).unwrap().stats.completed, 3);
    assert_eq!(out.event_releases_refused, 3);
    let refused: Vec<String> = out
        .trace
        .iter()
        .filter(|r| r.kind == TraceKind::EventReleaseRefused)
        .map(|r| format!("{}@{}", if r.thread == p { "p" } else { "?" }, r.time.as_nanos() / 1_000_000))
        .collect();
    assert_eq!(refused, ["p@1", "p@4", "p@7"]);
    let text = tempi::trace::report::summary_text(&out);
    assert!(text.contains("releases by timing events refused (thread ended or not sporadic): 3"), "{text}");
    let json = tempi::trace::report::to_json(&out);
    assert!(json.contains("\"event_releases_refused\": 3"), "{json}");
}

#[test]
fn kernel_periodic_phase_offsets_first_release() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("p").periodic(ms(5)).phase(ms(2)).max_jobs(3), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(markers(&out, TraceKind::Release), ["p#0@2", "p#1@7", "p#2@12"]);
    assert_eq!(out.threads[0].outcome, Some(tempi::ThreadOutcome::Completed));
    assert_eq!(out.end, Time::from_millis(13));
}
