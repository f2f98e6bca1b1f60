//! OS-backed threads (`ThreadSpec::os_backed`): a thread that computes without a single
//! runtime call is still preempted in real time, and caught by its budget; in virtual time
//! the kind changes nothing. Real-time checks are properties with generous bounds.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::{completion_order, ms, segments};
use tempi::clock::{Clock, RealClock};
use tempi::policy::budget::{Kill, Suspend};
use tempi::trace::TraceKind;
use tempi::{Budget, Config, RunOutcome, Runtime, ThreadOutcome, ThreadSpec, Time};

/// Real-time tests in this file take turns (two dispatchers spinning at once on a 2-core
/// machine would steal each other's CPU).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn real() -> Runtime<RealClock> {
    Runtime::<RealClock>::new(Config::new(1).pin(false)).unwrap()
}

/// Run `f` on an OS thread of its own and wait for it a minute at most: a run that hangs fails
/// the test instead of holding it.
fn within_a_minute<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(f());
    });
    result.recv_timeout(Duration::from_secs(60)).expect("the run ended")
}

/// Spin for `d` of wall-clock time without calling the runtime, counting in `progress`.
fn spin(d: Duration, progress: &AtomicU64) {
    let start = Instant::now();
    while start.elapsed() < d {
        progress.fetch_add(1, Ordering::Relaxed);
    }
}

/// A low-priority thread that computes for `busy` of wall-clock time without any runtime
/// call, then works 10 ms; an urgent periodic thread (every 10 ms from 5 ms, 5 jobs) that
/// notes how far the loop had got each time it runs.
fn app<C: Clock>(rt: &mut Runtime<C>, busy: Duration, os: bool) -> (Arc<AtomicU64>, Arc<Mutex<Vec<u64>>>) {
    let progress = Arc::new(AtomicU64::new(0));
    let seen = Arc::new(Mutex::new(Vec::new()));
    let p = progress.clone();
    let mut spec = ThreadSpec::new("loop").priority(1).max_jobs(1);
    if os {
        spec = spec.os_backed();
    }
    rt.spawn(spec, move |cx| {
        spin(busy, &p);
        cx.work(ms(10));
    })
    .unwrap();
    let (p, s) = (progress.clone(), seen.clone());
    let tick = ThreadSpec::new("tick").periodic(ms(10)).phase(ms(5)).priority(2).max_jobs(5);
    rt.spawn(tick, move |cx| {
        s.lock().unwrap().push(p.load(Ordering::Relaxed));
        cx.work(ms(1));
    })
    .unwrap();
    (progress, seen)
}

/// For each job of thread `name`: its first dispatch minus its release, in µs.
fn start_latencies(out: &RunOutcome, name: &str) -> Vec<u64> {
    let id = out.thread_named(name).unwrap().id;
    let mut released: Vec<(u32, Time)> = Vec::new();
    let mut late = Vec::new();
    for r in out.trace.iter().filter(|r| r.thread == id) {
        match r.kind {
            TraceKind::Release => released.push((r.job, r.time)),
            TraceKind::Run => {
                if let Some(k) = released.iter().position(|&(j, _)| j == r.job) {
                    late.push(r.time.saturating_since(released.remove(k).1).as_micros() as u64);
                }
            }
            _ => {}
        }
    }
    late
}

#[test]
fn os_backed_loop_without_runtime_calls_is_preempted_by_an_urgent_thread() {
    let _turn = serial();
    let mut rt = real();
    let (progress, seen) = app(&mut rt, ms(250), true);
    let out = rt.run().unwrap();
    let seen = seen.lock().unwrap().clone();
    let total = progress.load(Ordering::Relaxed);
    // Every urgent job ran while the loop was still computing: it had not finished at the
    // last one, and it went on between the first and the last. (Under a loaded OS the
    // dispatcher may wake late enough for two urgent jobs to run back to back, so not every
    // gap shows progress.)
    assert_eq!(seen.len(), 5, "{seen:?}");
    assert!(seen[0] < seen[4], "the loop went on between the urgent jobs: {seen:?}");
    // For information (`--nocapture`): how late each urgent job started after its release.
    let latencies = start_latencies(&out, "tick");
    assert_eq!(latencies.len(), 5);
    eprintln!("urgent job start after release, µs: {latencies:?}");
    assert!(seen[4] < total, "the loop was not done at the last urgent job: {seen:?} of {total}");
    assert_eq!(&completion_order(&out)[..5], ["tick#0", "tick#1", "tick#2", "tick#3", "tick#4"]);
    let lp = out.thread_named("loop").unwrap();
    assert_eq!(lp.outcome, Some(ThreadOutcome::Completed));
    assert!(lp.stats.preemptions >= 1, "{:?}", lp.stats);
    // Its CPU time counts its own code too, not only its `work`.
    assert!(lp.stats.cpu_time >= ms(200), "{:?}", lp.stats.cpu_time);
}

#[test]
fn os_backed_without_the_kind_the_same_loop_holds_its_cpu() {
    // The control: as a coroutine, the loop is preempted only at its runtime call, after
    // computing; every urgent job comes after that.
    let _turn = serial();
    let mut rt = real();
    let (progress, seen) = app(&mut rt, ms(60), false);
    rt.run().unwrap();
    let total = progress.load(Ordering::Relaxed);
    assert!(seen.lock().unwrap().iter().all(|&v| v == total));
}

#[test]
fn os_backed_kind_changes_nothing_in_virtual_time() {
    // Virtual time passes only inside runtime calls: the loop computes in no simulated time,
    // then its `work` is preempted exactly at each release.
    let run = |os: bool| -> RunOutcome {
        let mut rt = Runtime::simulated(1);
        app(&mut rt, ms(5), os);
        rt.run().unwrap()
    };
    let with = run(true);
    let without = run(false);
    assert_eq!(
        segments(&with),
        [
            "loop:0-5:preempt",
            "tick:5-6:done",
            "loop:6-11:exit",
            "tick:15-16:done",
            "tick:25-26:done",
            "tick:35-36:done",
            "tick:45-46:exit",
        ]
    );
    // Record for record the same run (thread ids carry each runtime's own tag: compare names).
    assert_eq!(segments(&with), segments(&without));
    let kinds = |o: &RunOutcome| {
        o.trace.iter().map(|r| (r.time, r.kind, o.thread(r.thread).map(|t| t.name.clone()), r.arg)).collect::<Vec<_>>()
    };
    assert_eq!(kinds(&with), kinds(&without));
    for name in ["loop", "tick"] {
        assert_eq!(with.thread_named(name).unwrap().stats, without.thread_named(name).unwrap().stats);
    }
    assert_eq!(with.end, Time::from_millis(46));
}

/// A thread in a set with a 20 ms budget under `action` that would compute for 300 ms
/// without a runtime call, and a lower-priority thread that works 5 ms.
fn runaway(action: &'static str) -> (RunOutcome, Duration) {
    let mut rt = real();
    let progress = Arc::new(AtomicU64::new(0));
    let p = progress.clone();
    let r = rt.spawn(ThreadSpec::new("runaway").priority(5).os_backed(), move |_| spin(ms(300), &p)).unwrap();
    rt.spawn(ThreadSpec::new("other").priority(1), |cx| cx.work(ms(5))).unwrap();
    let s = rt.create_set("sandbox", 0).unwrap();
    rt.add_to_set(s, r).unwrap();
    let budget = match action {
        "kill" => Budget::new(ms(20)).action(Kill),
        _ => Budget::new(ms(20)).action(Suspend),
    };
    rt.set_budget(s, budget).unwrap();
    let started = Instant::now();
    let out = rt.run_until(Time::from_millis(100)).unwrap();
    (out, started.elapsed())
}

#[test]
fn os_backed_budget_suspends_a_loop_without_runtime_calls() {
    let _turn = serial();
    let (out, _) = runaway("suspend");
    assert_eq!(out.sets[0].exhaustions, 1);
    let r = out.thread_named("runaway").unwrap();
    // Caught at the budget's instant, not after its 300 ms loop.
    assert!(r.stats.cpu_time >= ms(20) && r.stats.cpu_time < ms(60), "{:?}", r.stats.cpu_time);
    assert_eq!(r.outcome, None, "still held when the run ends");
    assert_eq!(out.thread_named("other").unwrap().outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn os_backed_budget_kills_a_loop_without_runtime_calls() {
    let _turn = serial();
    let (out, _) = runaway("kill");
    assert_eq!(out.sets[0].exhaustions, 1);
    let r = out.thread_named("runaway").unwrap();
    assert_eq!(r.outcome, Some(ThreadOutcome::Killed));
    assert!(r.stats.cpu_time >= ms(20) && r.stats.cpu_time < ms(60), "{:?}", r.stats.cpu_time);
    assert_eq!(out.thread_named("other").unwrap().outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn os_backed_run_ending_mid_loop_tears_down_in_order() {
    // The run ends at 50 ms while the thread is 150 ms into a 200 ms loop... stopped in place;
    // the end of the run lets it go to its next runtime call, where it is unwound, and its
    // destructors run.
    let _turn = serial();
    struct Flag(Arc<AtomicU64>);
    impl Drop for Flag {
        fn drop(&mut self) {
            self.0.store(1, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicU64::new(0));
    let d = dropped.clone();
    let mut rt = real();
    rt.spawn(ThreadSpec::new("loop").os_backed(), move |cx| {
        let _flag = Flag(d.clone());
        spin(ms(200), &AtomicU64::new(0));
        cx.work(ms(10));
        unreachable!("stopped at the call above");
    })
    .unwrap();
    let started = Instant::now();
    let out = rt.run_until(Time::from_millis(50)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(dropped.load(Ordering::SeqCst), 1, "the stopped thread was unwound");
    assert!(out.os_backed_left_stopped.is_empty(), "{:?}", out.os_backed_left_stopped);
    assert!(!tempi::trace::report::summary_text(&out).contains("left stopped"));
    assert!(!tempi::trace::report::to_json(&out).contains("os_backed_left_stopped"));
    assert!(out.end >= Time::from_millis(50));
}

#[test]
fn os_backed_thread_uses_runtime_calls_and_locks() {
    // Every runtime call goes to the kernel as from a coroutine: locks (never on the fast
    // path), sleep, spawn and join, a restartable section refused.
    let _turn = serial();
    let mut rt = real();
    let m = Arc::new(rt.create_mutex(0u64, tempi::sync::LockSpec::new("m").protocol("bpi")).unwrap());
    let m2 = m.clone();
    rt.spawn(ThreadSpec::new("os").priority(2).os_backed(), move |cx| {
        for _ in 0..100 {
            *m2.lock(cx).unwrap() += 1;
        }
        cx.sleep(ms(2));
        let child = cx.spawn(ThreadSpec::new("child").priority(3), |cx| cx.work(ms(1))).unwrap();
        assert_eq!(cx.join(child), Ok(ThreadOutcome::Completed));
        assert_eq!(m2.critical(cx, |n| *n).err(), Some(tempi::sync::LockError::NotForOsBacked));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("co").priority(1), move |cx| {
        for _ in 0..100 {
            *m.lock(cx).unwrap() += 1;
        }
        assert_eq!(*m.lock(cx).unwrap(), 200);
    })
    .unwrap();
    let out = rt.run().unwrap();
    for name in ["os", "co", "child"] {
        assert_eq!(out.thread_named(name).unwrap().outcome, Some(ThreadOutcome::Completed), "{name}");
    }
}

#[test]
fn os_backed_loop_is_preempted_by_a_release_from_another_cpu() {
    // CPU 1 runs a loop without runtime calls; a thread of CPU 0 releases an urgent sporadic
    // thread of CPU 1. No timer of CPU 1 is due: the post's doorbell stops the loop.
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let progress = Arc::new(AtomicU64::new(0));
    let seen = Arc::new(AtomicU64::new(u64::MAX));
    let p = progress.clone();
    rt.spawn(ThreadSpec::new("loop").cpu(1).priority(1).os_backed(), move |_| spin(ms(200), &p)).unwrap();
    let (p, s) = (progress.clone(), seen.clone());
    let urgent = rt
        .spawn(ThreadSpec::new("urgent").cpu(1).priority(5).sporadic(ms(1)).max_jobs(1), move |_| {
            s.store(p.load(Ordering::Relaxed), Ordering::Relaxed);
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("poster").cpu(0), move |cx| {
        cx.sleep(ms(20));
        cx.release(urgent).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("urgent").unwrap().outcome, Some(ThreadOutcome::Completed));
    let total = progress.load(Ordering::Relaxed);
    let at = seen.load(Ordering::Relaxed);
    assert!(at > 0 && at < total, "the urgent job ran in the middle of the loop: {at} of {total}");
}

/// An OS-backed thread calls a handler whose function computes without a runtime call, so a
/// release of the urgent periodic thread stops it in place inside the handler; that thread
/// then calls the busy handler and waits, and the OS-backed thread, resumed, serves it. It
/// may also be stopped between the handler's last look at its queue and its release: it
/// looks again once it has released it (the window is too narrow to hit on purpose; this
/// exercises the path, and the virtual-time twin below checks that it changes no schedule).
/// Every call is answered, nothing is left queued.
#[test]
fn os_backed_thread_holding_a_handler_strands_no_caller() {
    let _turn = serial();
    let mut rt = real();
    let served = Arc::new(AtomicU64::new(0));
    let s = served.clone();
    let h = tempi::message::Handler::new("spin", 0, 8, move |hcx, m| {
        spin(Duration::from_micros(30), &s);
        hcx.reply(m);
    });
    let (h1, h2) = (h.clone(), h.clone());
    rt.spawn(ThreadSpec::new("os").priority(1).os_backed(), move |cx| {
        for v in 0..2_000 {
            assert_eq!(h1.call(cx, tempi::message::Message::new(0, v, 0)).unwrap().value, v);
        }
    })
    .unwrap();
    let tick = ThreadSpec::new("tick").periodic(Duration::from_micros(200)).priority(2).max_jobs(300);
    rt.spawn(tick, move |cx| {
        assert_eq!(h2.call(cx, tempi::message::Message::new(1, 7, 0)).unwrap().value, 7);
    })
    .unwrap();
    let out = rt.run().unwrap();
    for name in ["os", "tick"] {
        assert_eq!(out.thread_named(name).unwrap().outcome, Some(ThreadOutcome::Completed), "{name}");
    }
    assert_eq!(out.thread_named("tick").unwrap().stats.completed, 300);
    assert_eq!(h.queued(), 0);
    assert_eq!(out.messages.queued_at_end, 0);
    assert!(served.load(Ordering::Relaxed) > 0);
}

/// In virtual time an OS-backed thread leaves a handler through the path that looks at the
/// queue again after the release: the schedule and every answer are those of a coroutine.
#[test]
fn os_backed_handler_leave_changes_nothing_in_virtual_time() {
    use tempi::message::{Handler, Message};
    let run = |os: bool| {
        let log = Arc::new(Mutex::new(Vec::new()));
        let l = log.clone();
        let h = Handler::new("h", 0, 4, move |hcx, m| {
            l.lock().unwrap().push(format!("run {}@{}", m.value, hcx.now().as_nanos() / 1_000_000));
            hcx.work(ms(if m.value == 0 { 4 } else { 1 }));
            hcx.reply(Message::new(m.id, m.value * 10, 0));
        });
        let mut rt = Runtime::simulated(1);
        let (h1, h2) = (h.clone(), h.clone());
        let mut low = ThreadSpec::new("low").priority(1);
        if os {
            low = low.os_backed();
        }
        let l1 = log.clone();
        rt.spawn(low, move |cx| {
            let a = h1.call(cx, Message::new(1, 0, 0)).unwrap();
            l1.lock().unwrap().push(format!("low got {}@{}", a.value, cx.now().as_nanos() / 1_000_000));
        })
        .unwrap();
        let l2 = log.clone();
        rt.spawn(ThreadSpec::new("high").priority(2), move |cx| {
            cx.sleep(ms(1));
            h2.send(cx, Message::new(2, 1, 0)).unwrap();
            let a = h2.call(cx, Message::new(2, 2, 0)).unwrap();
            l2.lock().unwrap().push(format!("high got {}@{}", a.value, cx.now().as_nanos() / 1_000_000));
        })
        .unwrap();
        let out = rt.run().unwrap();
        assert_eq!(h.queued(), 0);
        let log = log.lock().unwrap().clone();
        (log, segments(&out))
    };
    let (log, segs) = run(true);
    assert_eq!(log, ["run 0@0", "run 1@4", "run 2@5", "high got 20@6", "low got 0@6"]);
    assert_eq!((log, segs), run(false));
}

/// An OS-backed thread whose `work` ends and which then computes in its own code, past the
/// instant a timer of its CPU is due (here another thread's wake-up): the dispatcher stops it
/// in place for the timer, fires it, and lets it go on. (The dispatcher once resumed it again
/// and again before firing the timer, stopping it at once each time: the run never ended.)
/// The run is watched from another OS thread, so a hang fails the test instead of holding it.
#[test]
fn os_backed_thread_computing_past_a_due_timer_after_its_work_lets_the_timer_fire() {
    let _one = serial();
    let (outcomes, woke) = within_a_minute(move || {
        let mut rt = real();
        let progress = Arc::new(AtomicU64::new(0));
        let p = progress.clone();
        rt.spawn(ThreadSpec::new("worker").priority(1).os_backed(), move |cx| {
            cx.work(ms(1));
            spin(ms(30), &p);
        })
        .unwrap();
        let woke = Arc::new(Mutex::new(None));
        let w = woke.clone();
        rt.spawn(ThreadSpec::new("sleeper").priority(2), move |cx| {
            cx.sleep(ms(5));
            *w.lock().unwrap() = Some(cx.now());
        })
        .unwrap();
        let out = rt.run_until(Time::from_secs(10)).unwrap();
        let woke = *woke.lock().unwrap();
        (out.threads.iter().map(|t| t.outcome.clone()).collect::<Vec<_>>(), woke)
    });
    assert!(outcomes.iter().all(|o| *o == Some(ThreadOutcome::Completed)), "{outcomes:?}");
    // The sleeper woke during the worker's loop, not after it: generous bounds.
    let woke = woke.expect("the sleeper ran").as_nanos();
    assert!((5_000_000..25_000_000).contains(&woke), "woke at {woke} ns");
}

/// An OS-backed thread killed while it computes inside a handler (stopped in place there, with
/// a caller queued at the handler) is not left stopped for good, which would keep the handler
/// busy and its caller waiting: it is let go, serves the queued call as it leaves the handler,
/// and is killed at its next runtime call, as the holder of a lock is.
#[test]
fn os_backed_thread_killed_inside_a_handler_still_serves_its_queue() {
    use tempi::message::{Handler, Message};
    let _one = serial();
    let (outcomes, answer, busy) = within_a_minute(move || {
        let mut rt = real();
        let progress = Arc::new(AtomicU64::new(0));
        let p = progress.clone();
        let h = Handler::new("h", 0, 4, move |hcx, m| {
            if m.value == 0 {
                // The holder's own message: computing without a runtime call.
                spin(ms(40), &p);
            }
            hcx.reply(Message::new(m.id, m.value * 10, 0));
        });
        let (h1, h2) = (h.clone(), h.clone());
        let holder = rt
            .spawn(ThreadSpec::new("holder").priority(1).os_backed(), move |cx| {
                let _ = h1.call(cx, Message::new(1, 0, 0));
                cx.work(ms(1));
            })
            .unwrap();
        let answer = Arc::new(Mutex::new(None));
        let a = answer.clone();
        rt.spawn(ThreadSpec::new("caller").priority(2), move |cx| {
            cx.sleep(ms(5));
            *a.lock().unwrap() = Some(h2.call(cx, Message::new(2, 3, 0)).map(|m| m.value));
        })
        .unwrap();
        rt.spawn(ThreadSpec::new("killer").priority(3), move |cx| {
            cx.sleep(ms(10));
            cx.kill(holder).unwrap();
        })
        .unwrap();
        let out = rt.run_until(Time::from_secs(10)).unwrap();
        let outcomes: Vec<_> = out.threads.iter().map(|t| (t.name.clone(), t.outcome.clone())).collect();
        let answer = *answer.lock().unwrap();
        (outcomes, answer, h.is_busy())
    });
    assert_eq!(answer, Some(Ok(30)), "{outcomes:?}");
    assert!(!busy);
    assert_eq!(
        outcomes,
        [
            ("holder".to_string(), Some(ThreadOutcome::Killed)),
            ("caller".to_string(), Some(ThreadOutcome::Completed)),
            ("killer".to_string(), Some(ThreadOutcome::Completed)),
        ]
    );
}

/// Spin without a runtime call until the process ends.
fn spin_forever() -> ! {
    let progress = AtomicU64::new(0);
    loop {
        progress.fetch_add(1, Ordering::Relaxed);
        std::hint::black_box(&progress);
    }
}

/// The names of the OS-backed threads the end of the run left stopped.
fn left_stopped(out: &RunOutcome) -> Vec<String> {
    out.os_backed_left_stopped.iter().map(|&id| out.thread(id).unwrap().name.clone()).collect()
}

/// OS-backed threads still computing in their own code for good when the run ends (two
/// running, one killed while it computes) are waited for at most the configured grace, all
/// at once, then left stopped and named in the outcome, its summary and its report; one that
/// ends its loop in time is not. (With the fixed grace of 1 s each, the end of this run took
/// more than 3 s and named nobody.)
#[test]
fn os_backed_threads_left_in_their_own_code_are_named_and_waited_for_once() {
    let _one = serial();
    let grace = ms(300);
    let (names, outcomes, summary, report, elapsed) = within_a_minute(move || {
        let mut rt = Runtime::<RealClock>::new(Config::new(1).pin(false).os_backed_grace(grace)).unwrap();
        rt.spawn(ThreadSpec::new("forever-a").priority(1).os_backed(), |_| spin_forever()).unwrap();
        // Preempts "forever-a" in its loop at 30 ms: at the end one is running, one is ready.
        rt.spawn(ThreadSpec::new("forever-b").priority(5).os_backed(), |cx| {
            cx.sleep(ms(30));
            spin_forever()
        })
        .unwrap();
        // The victim says when it is in its own code, and only then is it killed: on a loaded
        // machine its start may come later than the killer's first wake-up.
        let computing = Arc::new(AtomicBool::new(false));
        let flag = computing.clone();
        let victim = rt
            .spawn(ThreadSpec::new("victim").priority(2).os_backed(), move |_| {
                flag.store(true, Ordering::Release);
                spin_forever()
            })
            .unwrap();
        rt.spawn(ThreadSpec::new("brief").priority(3).os_backed(), |_| spin(ms(5), &AtomicU64::new(0))).unwrap();
        rt.spawn(ThreadSpec::new("killer").priority(6), move |cx| {
            cx.sleep(ms(20));
            while !computing.load(Ordering::Acquire) {
                cx.sleep(ms(1));
            }
            cx.kill(victim).unwrap();
        })
        .unwrap();
        let started = Instant::now();
        let out = rt.run_until(Time::from_millis(50)).unwrap();
        let elapsed = started.elapsed();
        let outcomes: Vec<_> = out.threads.iter().map(|t| (t.name.clone(), t.outcome.clone())).collect();
        let summary = tempi::trace::report::summary_text(&out);
        let report = tempi::trace::report::to_json(&out);
        (left_stopped(&out), outcomes, summary, report, elapsed)
    });
    assert_eq!(names, ["forever-a", "forever-b", "victim"], "{outcomes:?}");
    assert_eq!(
        outcomes,
        [
            ("forever-a".to_string(), None),
            ("forever-b".to_string(), None),
            ("victim".to_string(), Some(ThreadOutcome::Killed)),
            ("brief".to_string(), Some(ThreadOutcome::Completed)),
            ("killer".to_string(), Some(ThreadOutcome::Completed)),
        ]
    );
    assert!(
        summary.contains(
            "OS-backed threads left stopped in their own code at the end of the run, not unwound: forever-a, forever-b, victim\n"
        ),
        "{summary}"
    );
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(v["os_backed_left_stopped"], serde_json::json!(["forever-a", "forever-b", "victim"]));
    // The grace was waited for, once for all three (waiting for each in turn takes three).
    assert!(elapsed >= grace, "{elapsed:?}");
    assert!(elapsed < grace * 3, "{elapsed:?}");
}

/// The grace is the setting's, not a fixed second: a longer one is waited for in full, and a
/// thread that is unwound in time is not named.
#[test]
fn os_backed_grace_setting_bounds_the_wait_at_the_end() {
    let _one = serial();
    let grace = ms(1_500);
    let (names, elapsed, summary, report) = within_a_minute(move || {
        let mut rt = Runtime::<RealClock>::new(Config::new(1).pin(false).os_backed_grace(grace)).unwrap();
        rt.spawn(ThreadSpec::new("forever").os_backed(), |_| spin_forever()).unwrap();
        let started = Instant::now();
        let out = rt.run_until(Time::from_millis(20)).unwrap();
        let elapsed = started.elapsed();
        (left_stopped(&out), elapsed, tempi::trace::report::summary_text(&out), tempi::trace::report::to_json(&out))
    });
    assert_eq!(names, ["forever"]);
    assert!(summary.contains("not unwound: forever\n"), "{summary}");
    assert!(report.contains("\"os_backed_left_stopped\""), "{report}");
    assert!(elapsed >= grace, "{elapsed:?}");
    assert!(elapsed < grace + Duration::from_secs(20), "{elapsed:?}");
}
