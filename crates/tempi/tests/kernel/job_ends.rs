//! Every job released shows how it ended, even when its thread's end cut it short: a job in
//! progress (or waiting) when its thread is killed or panics gets a `JobAbort` record whose
//! `arg` says why (1 panicked, 2 killed, as its thread's `Exit` record), is counted in `aborted`, and its per-job record in the
//! report has a finish and the reason.

use crate::common;

use common::{markers, ms};
use tempi::policy::budget::Kill;
use tempi::trace::report;
use tempi::trace::JobEnd;
use tempi::trace::TraceKind;
use tempi::{Budget, RunOutcome, Runtime, ThreadOutcome, ThreadSpec, Time};

/// The `arg` of every `JobAbort` record, as `name#job@ms=arg`.
fn abort_codes(out: &RunOutcome) -> Vec<String> {
    let m = markers(out, TraceKind::JobAbort);
    let args = out.trace.iter().filter(|r| r.kind == TraceKind::JobAbort).map(|r| r.arg);
    m.into_iter().zip(args).map(|(m, a)| format!("{m}={a}")).collect()
}

/// `p` (T = 4, C = 10, priority 1) is killed at 9 by `k` (priority 2): job 0 is in progress,
/// jobs 1 (released at 4) and 2 (at 8) wait.
fn killed_run() -> RunOutcome {
    let mut rt = Runtime::simulated(1);
    let p = rt.spawn(ThreadSpec::new("p").periodic(ms(4)).priority(1), |cx| cx.work(ms(10))).unwrap();
    rt.spawn(ThreadSpec::new("k").priority(2), move |cx| {
        cx.sleep_until(Time::from_millis(9));
        cx.kill(p).unwrap();
    })
    .unwrap();
    rt.run_until(Time::from_millis(20)).unwrap()
}

#[test]
fn job_ends_a_killed_thread_ends_its_running_and_waiting_jobs() {
    let out = killed_run();
    let p = out.thread_named("p").unwrap();
    assert_eq!(p.outcome, Some(ThreadOutcome::Killed));
    assert_eq!((p.stats.released, p.stats.completed, p.stats.aborted), (3, 0, 3));
    assert_eq!(abort_codes(&out), ["p#0@9=2", "p#1@9=2", "p#2@9=2"]);
    // The job ends are written before the thread's exit.
    assert_eq!(markers(&out, TraceKind::Exit), ["k#0@9", "p#0@9"]);
    let jobs: Vec<_> = report::jobs(&out).into_iter().filter(|j| j.thread == "p").collect();
    let ends: Vec<_> = jobs.iter().map(|j| (j.job, j.start, j.finish, j.aborted, j.ended_by)).collect();
    let at9 = Some(Time::from_millis(9));
    assert_eq!(
        ends,
        [
            (0, Some(Time::ZERO), at9, true, Some(JobEnd::Killed)),
            (1, None, at9, true, Some(JobEnd::Killed)),
            (2, None, at9, true, Some(JobEnd::Killed)),
        ]
    );
}

#[test]
fn job_ends_the_json_report_says_a_job_was_killed() {
    let out = killed_run();
    let v: serde_json::Value = serde_json::from_str(&report::to_json(&out)).unwrap();
    let job = v["jobs"].as_array().unwrap().iter().find(|j| j["thread"] == "p" && j["job"] == 0).unwrap();
    assert_eq!((job["finish"].as_u64(), job["aborted"].as_bool()), (Some(9_000_000), Some(true)));
    assert_eq!(job["ended_by"], "kill");
    assert_eq!(v["threads"][0]["aborted"], 3);
    // A job that completed says nothing of the kind.
    let k = v["jobs"].as_array().unwrap().iter().find(|j| j["thread"] == "k").unwrap();
    assert_eq!(k.get("ended_by"), None);
}

/// A member of a set whose budget has the action Kill is killed in the middle of its job.
#[test]
fn job_ends_a_budget_kill_ends_the_job_in_progress() {
    let mut rt = Runtime::simulated(1);
    let g = rt.spawn(ThreadSpec::new("greedy").periodic(ms(10)), |cx| cx.work(ms(5))).unwrap();
    let set = rt.create_set("box", 0).unwrap();
    rt.add_to_set(set, g).unwrap();
    rt.set_budget(set, Budget::new(ms(2)).action(Kill)).unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(out.thread(g).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(abort_codes(&out), ["greedy#0@2=2"]);
    let s = &out.thread(g).unwrap().stats;
    assert_eq!((s.released, s.completed, s.aborted), (1, 0, 1));
    assert_eq!(report::jobs(&out)[0].finish, Some(Time::from_millis(2)));
}

/// A job released but not yet begun when its thread is killed ends too. The thread is
/// dispatched at the kill only to end (a segment of no length, which the job record counts as
/// its start); its body never runs.
#[test]
fn job_ends_a_job_killed_before_it_ran_ends_at_the_kill() {
    let mut rt = Runtime::simulated(1);
    let p = rt.spawn(ThreadSpec::new("p").periodic(ms(10)).priority(1), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("k").priority(2), move |cx| {
        cx.work(ms(3));
        cx.kill(p).unwrap();
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(out.thread(p).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(abort_codes(&out), ["p#0@3=2"]);
    assert_eq!(common::segments(&out), ["k:0-3:exit", "p:3-3:exit"]);
    assert_eq!(out.thread(p).unwrap().stats.cpu_time, ms(0));
    let j = report::jobs(&out).into_iter().find(|j| j.thread == "p").unwrap();
    let at3 = Some(Time::from_millis(3));
    assert_eq!((j.start, j.finish, j.ended_by), (at3, at3, Some(JobEnd::Killed)));
}

/// A periodic thread killed before its first release is made ready by the kill only to end.
/// Its release timer, still armed, fires while it waits behind `w` (same priority, first
/// in line) for the CPU: that release starts no job, is not counted, and does not offer the
/// thread to the scheduler a second time (which made the run fail with `BadPick` once the
/// thread had ended).
#[test]
fn job_ends_a_thread_killed_before_its_first_release_is_released_no_more() {
    let mut rt = Runtime::simulated(1);
    let p = rt.spawn(ThreadSpec::new("p").periodic(ms(10)).phase(ms(2)).priority(1), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("w").priority(1), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("k").priority(2), move |cx| cx.kill(p).unwrap()).unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(out.thread(p).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(out.thread(p).unwrap().stats.released, 0);
    assert_eq!(common::segments(&out), ["k:0-0:exit", "w:0-3:exit", "p:3-3:exit"]);
    assert!(
        markers(&out, TraceKind::Release).iter().all(|m| !m.starts_with("p#")),
        "{:?}",
        markers(&out, TraceKind::Release)
    );
}

/// A sporadic thread (two jobs allowed, each aborted 2 ms after its release) is released at
/// 0 and killed at 1 ms while it waits behind `w` for the CPU; its job's abort time comes at
/// 2 ms, before it has run. The abort must not park it to wait for a next release (none comes
/// to a killed thread): it ends as soon as it runs, at 3 ms, killed.
#[test]
fn job_ends_a_killed_thread_whose_waiting_job_is_aborted_still_ends() {
    let mut rt = Runtime::simulated(1);
    let s = rt
        .spawn(ThreadSpec::new("s").sporadic(ms(1)).max_jobs(2).abort_after(ms(2)).priority(1), |cx| cx.work(ms(1)))
        .unwrap();
    rt.spawn(ThreadSpec::new("w").priority(1), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("k").priority(2), move |cx| {
        cx.release(s).unwrap();
        cx.sleep_until(Time::from_millis(1));
        cx.kill(s).unwrap();
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(out.thread(s).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(abort_codes(&out), ["s#0@2=0"]);
    assert_eq!(common::segments(&out), ["k:0-0:sleep", "w:0-1:preempt", "k:1-1:exit", "w:1-3:exit", "s:3-3:exit"]);
}

/// A body that panics ends its job as panicked; its thread's waiting releases end with it.
#[test]
fn job_ends_a_panicking_body_ends_its_job_as_panicked() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("p").periodic(ms(2)), |cx| {
        cx.work(ms(3));
        panic!("boom");
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(10)).unwrap();
    let p = out.thread_named("p").unwrap();
    assert_eq!(p.outcome, Some(ThreadOutcome::Panicked("boom".into())));
    assert_eq!((p.stats.released, p.stats.completed, p.stats.aborted), (2, 0, 2));
    assert_eq!(abort_codes(&out), ["p#0@3=1", "p#1@3=1"]);
    let ends: Vec<_> = report::jobs(&out).into_iter().map(|j| (j.job, j.finish, j.ended_by)).collect();
    let at3 = Some(Time::from_millis(3));
    assert_eq!(ends, [(0, at3, Some(JobEnd::Panicked)), (1, at3, Some(JobEnd::Panicked))]);
    let v: serde_json::Value = serde_json::from_str(&report::to_json(&out)).unwrap();
    assert_eq!(v["jobs"][0]["ended_by"], "panic");
}

/// Jobs still running when the run ends are unfinished, not killed: no end is made up.
#[test]
fn job_ends_a_job_running_at_the_horizon_stays_unfinished() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("long"), |cx| cx.work(ms(50))).unwrap();
    let out = rt.run_until(Time::from_millis(10)).unwrap();
    assert!(abort_codes(&out).is_empty());
    let j = &report::jobs(&out)[0];
    assert_eq!((j.finish, j.aborted, j.ended_by), (None, false, None));
    assert_eq!(out.threads[0].stats.aborted, 0);
}
