//! Jobs that fall behind, in virtual time: every release becomes a job with its own record and
//! deadline, waiting jobs are checked at their deadlines, abandoned jobs end at the instant
//! they are abandoned, overflowing sporadic releases are reported.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{markers, ms, segments};
use tempi::trace::{report, TraceKind};
use tempi::{MissPolicy, Runtime, ThreadSpec, Time};

/// Fixed priorities hog > low > bg; hog T = 200 C = 120, low T = 10 C = 1, bg T = 200 C = 40
/// D = 170; misses let the jobs run on.
#[test]
fn kernel_overrun_keeps_every_release_of_a_starved_thread() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("hog").periodic(ms(200)).priority(3), |cx| cx.work(ms(120))).unwrap();
    rt.spawn(ThreadSpec::new("low").periodic(ms(10)).priority(2), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("bg").periodic(ms(200)).deadline(ms(170)).priority(1), |cx| cx.work(ms(40))).unwrap();
    let out = rt.run_until(Time::from_millis(180)).unwrap();
    // low's 13 jobs released at 0..=120 wait behind hog and run back to back from 120, with
    // the job released at 130: 14 jobs from 120 to 134.
    let mut expected = vec!["hog:0-120:done".to_string()];
    expected.extend((120..134).map(|t| format!("low:{t}-{}:done", t + 1)));
    expected.extend(
        [
            "bg:134-140:preempt",
            "low:140-141:done",
            "bg:141-150:preempt",
            "low:150-151:done",
            "bg:151-160:preempt",
            "low:160-161:done",
            "bg:161-170:preempt",
            "low:170-171:done",
            "bg:171-178:done",
        ]
        .map(String::from),
    );
    assert_eq!(segments(&out), expected);
    // low misses every job released at 0..=120 (deadlines 10..=130, each at its instant);
    // bg ends at 178, past its deadline at 170.
    let low_misses: Vec<String> = (0..13).map(|k| format!("low#{k}@{}", 10 * (k + 1))).collect();
    let mut misses = markers(&out, TraceKind::Miss);
    misses.sort_by_key(|m| m.starts_with("bg"));
    assert_eq!(misses[..13], low_misses[..]);
    assert_eq!(misses[13..], ["bg#0@170"]);
    let low = &out.thread_named("low").unwrap().stats;
    assert_eq!((low.released, low.completed, low.aborted, low.misses, low.skipped), (18, 18, 0, 13, 0));
    assert_eq!(out.thread_named("bg").unwrap().stats.misses, 1);
    assert_eq!(out.total_misses(), 14);
    // Every release is a job in the report, with its finish.
    let jobs = report::jobs(&out);
    let low_jobs: Vec<_> = jobs.iter().filter(|j| j.thread == "low").collect();
    assert_eq!(low_jobs.len(), 18);
    assert!(low_jobs.iter().all(|j| j.finish.is_some()));
    assert_eq!(low_jobs[12].finish, Some(Time::from_millis(133)));
    assert!(low_jobs[12].missed && !low_jobs[13].missed);
    let bg = jobs.iter().find(|j| j.thread == "bg").unwrap();
    assert_eq!((bg.finish, bg.missed), (Some(Time::from_millis(178)), true));
}

/// hog T = 200 C = 105 above low T = 10 C = 1, which abandons late jobs.
#[test]
fn kernel_abort_removes_a_job_that_never_started_at_its_deadline() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("hog").periodic(ms(200)).priority(2), |cx| cx.work(ms(105))).unwrap();
    rt.spawn(ThreadSpec::new("low").periodic(ms(10)).priority(1).miss_policy(MissPolicy::AbortJob), |cx| {
        cx.work(ms(1))
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(130)).unwrap();
    // Jobs 0..=9 are removed at their deadlines; job 10 (released at 100) runs at 105.
    let aborts: Vec<String> = (0..10).map(|k| format!("low#{k}@{}", 10 * (k + 1))).collect();
    assert_eq!(markers(&out, TraceKind::JobAbort), aborts);
    assert_eq!(segments(&out), ["hog:0-105:done", "low:105-106:done", "low:110-111:done", "low:120-121:done"]);
    let jobs = report::jobs(&out);
    let j9 = jobs.iter().find(|j| j.thread == "low" && j.job == 9).unwrap();
    assert_eq!((j9.finish, j9.aborted, j9.start), (Some(Time::from_millis(100)), true, None));
    let low = &out.thread_named("low").unwrap().stats;
    assert_eq!((low.released, low.completed, low.aborted, low.misses), (13, 3, 10, 10));
}

/// A job that began, was preempted and is abandoned at its deadline ends at that instant; its
/// stack is unwound when the thread next runs, at no cost to the job that runs then.
#[test]
fn kernel_abort_of_a_preempted_job_ends_it_at_the_deadline() {
    let unwound = Arc::new(AtomicBool::new(false));
    let u = unwound.clone();
    struct Flag(Arc<AtomicBool>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("low").periodic(ms(10)).priority(1).miss_policy(MissPolicy::AbortJob), move |cx| {
        let _flag = Flag(u.clone());
        cx.work(ms(3));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("hog").periodic(ms(100)).phase(ms(1)).priority(2), |cx| cx.work(ms(20))).unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    assert_eq!(segments(&out), ["low:0-1:preempt", "hog:1-21:done", "low:21-24:done"]);
    assert_eq!(markers(&out, TraceKind::JobAbort), ["low#0@10", "low#1@20"]);
    assert!(unwound.load(Ordering::SeqCst));
    let jobs = report::jobs(&out);
    let low: Vec<_> = jobs.iter().filter(|j| j.thread == "low").collect();
    assert_eq!((low[0].start, low[0].finish, low[0].aborted), (Some(Time::ZERO), Some(Time::from_millis(10)), true));
    assert_eq!((low[1].start, low[1].finish, low[1].aborted), (None, Some(Time::from_millis(20)), true));
    assert_eq!(
        (low[2].start, low[2].finish, low[2].aborted),
        (Some(Time::from_millis(21)), Some(Time::from_millis(24)), false)
    );
}

/// T = D = 4 ms, the first job needs 14 ms, SkipNext: the release at 4 is skipped (no job was
/// waiting); job 1 (released at 8) misses at 12 while waiting, so when job 0 ends at 14 the
/// oldest waiting job is dropped and job 2 (released at 12) runs.
#[test]
fn kernel_skip_next_with_waiting_jobs_drops_the_oldest() {
    let mut rt = Runtime::simulated(1);
    let spec = ThreadSpec::new("p").periodic(ms(4)).miss_policy(MissPolicy::SkipNext);
    rt.spawn(spec, |cx| cx.work(if cx.job().number == 0 { ms(14) } else { ms(1) })).unwrap();
    let out = rt.run_until(Time::from_millis(18)).unwrap();
    assert_eq!(segments(&out), ["p:0-14:done", "p:14-15:done", "p:16-17:done"]);
    assert_eq!(markers(&out, TraceKind::ReleaseSkipped), ["p#0@4"]);
    assert_eq!(markers(&out, TraceKind::Miss), ["p#0@4", "p#1@12"]);
    assert_eq!(markers(&out, TraceKind::JobAbort), ["p#1@14"]);
    let s = &out.threads[0].stats;
    assert_eq!((s.released, s.completed, s.aborted, s.skipped, s.misses), (4, 3, 1, 1, 2));
}

/// Releases of a sporadic thread that arrive while a job runs wait in its queue; a full queue
/// drops the release, which is counted, traced and reported.
#[test]
fn kernel_sporadic_queue_overflow_is_reported() {
    let mut rt = Runtime::simulated(1);
    let s = rt.spawn(ThreadSpec::new("s").sporadic(ms(0)).release_queue(2).priority(1), |cx| cx.work(ms(10))).unwrap();
    rt.spawn(ThreadSpec::new("trigger").priority(2), move |cx| {
        for _ in 0..5 {
            cx.release(s).unwrap();
            cx.sleep(ms(1));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    // Released at 0, 1 and 2 (two wait); the releases at 3 and 4 find the queue full.
    assert_eq!(markers(&out, TraceKind::ReleaseOverflow), ["s#0@3", "s#0@4"]);
    let st = &out.thread(s).unwrap().stats;
    assert_eq!((st.released, st.completed, st.overflows), (3, 3, 2));
    let json: serde_json::Value = serde_json::from_str(&report::to_json(&out)).unwrap();
    assert_eq!(json["threads"][0]["overflows"], 2);
    assert!(report::summary_text(&out).contains("releases dropped, release queue full: s (2)"));
}

/// Releases of a sporadic thread asked after its last job (`max_jobs`) was released make no
/// job; each is counted, traced and reported rather than dropped unseen.
#[test]
fn kernel_release_beyond_max_jobs_is_reported() {
    let mut rt = Runtime::simulated(1);
    let s = rt.spawn(ThreadSpec::new("s").sporadic(ms(0)).max_jobs(2).priority(1), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("trigger").priority(2), move |cx| {
        for _ in 0..4 {
            cx.release(s).unwrap();
            cx.sleep(ms(1));
        }
    })
    .unwrap();
    let out = rt.run().unwrap();
    // Released at 0 and 1 (the second waits); those at 2 and 3 come after the last job.
    assert_eq!(markers(&out, TraceKind::ReleaseBeyondLimit), ["s#0@2", "s#0@3"]);
    let st = &out.thread(s).unwrap().stats;
    assert_eq!((st.released, st.completed, st.beyond_limit), (2, 2, 2));
    let json: serde_json::Value = serde_json::from_str(&report::to_json(&out)).unwrap();
    assert_eq!(json["threads"][0]["beyond_limit"], 2);
    assert!(json["threads"][1].get("beyond_limit").is_none());
    assert!(report::summary_text(&out).contains("releases after the last job (max_jobs), no job made: s (2)"));
}
