//! A spawn onto (or a join of a thread of) another real-time CPU that the thread gave up on
//! (its job was aborted while it waited): the answer comes later, and must not be taken for
//! the answer to the next such request of the same thread. Real time only (in virtual time a spawn is carried out at once); the
//! checks are properties with generous bounds.

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::ms;
use tempi::clock::RealClock;
use tempi::trace::TraceKind;
use tempi::{Config, Runtime, ThreadId, ThreadOutcome, ThreadSpec};

/// Real-time tests take turns: on a 2-core machine two runs of two dispatchers each would
/// steal each other's CPUs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn xcpu_a_stale_spawn_answer_is_not_taken_for_the_next_spawn() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let hogging = Arc::new(AtomicBool::new(false));
    let second_asked = Arc::new(AtomicBool::new(false));
    let (h, s) = (hogging.clone(), second_asked.clone());
    // Holds CPU 1 without a runtime call until the second spawn has been asked for (and a
    // little more, for it to be posted), so both spawns wait in CPU 1's queue meanwhile.
    rt.spawn(ThreadSpec::new("hog").cpu(1).priority(9), move |_| {
        h.store(true, Ordering::Release);
        let start = Instant::now();
        while !s.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            std::hint::spin_loop();
        }
        let asked = Instant::now();
        while asked.elapsed() < ms(5) {
            std::hint::spin_loop();
        }
    })
    .unwrap();
    let got: Arc<Mutex<Vec<ThreadId>>> = Arc::default();
    let g = got.clone();
    // Job 0 asks for "first" and is aborted while it waits; job 1 asks for "second" and gets
    // its answer well before its own abort time.
    rt.spawn(ThreadSpec::new("spawner").cpu(0).periodic(ms(100)).max_jobs(2).abort_after(ms(40)), move |cx| {
        if cx.job().number == 0 {
            // No runtime call before the spawn: it is the thread's first wait, and the abort
            // ends it, so the second spawn is its second wait (their stamps once collided).
            let start = Instant::now();
            while !hogging.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
                std::hint::spin_loop();
            }
            let id = cx.spawn(ThreadSpec::new("first").cpu(1), |_| {});
            panic!("the aborted spawn returned {id:?}");
        }
        second_asked.store(true, Ordering::Release);
        let id = cx.spawn(ThreadSpec::new("second").cpu(1), |_| {}).unwrap();
        g.lock().unwrap().push(id);
    })
    .unwrap();
    let out = rt.run().unwrap();
    let spawner = out.thread_named("spawner").unwrap();
    assert_eq!(spawner.stats.aborted, 1);
    assert_eq!(spawner.stats.completed, 1);
    // The second spawn returned the second thread, not the first one.
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 1);
    let second = out.thread_named("second").unwrap();
    assert_eq!(got[0], second.id);
    // The thread the aborted spawn created still ran, and is reported.
    let first = out.thread_named("first").unwrap();
    assert_eq!(first.outcome, Some(ThreadOutcome::Completed));
    assert_eq!(second.outcome, Some(ThreadOutcome::Completed));
    // Its answer, which nobody waited for any more, is counted and traced on the spawner's CPU.
    assert_eq!(out.cross_cpu.stale_answers, 1);
    let stale: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::StaleAnswer).collect();
    assert_eq!(stale.len(), 1);
    assert_eq!((stale[0].thread, stale[0].cpu, stale[0].arg), (spawner.id, 0, first.id.index() as u64));
    let text = tempi::trace::report::summary_text(&out);
    assert!(text.contains("cross-CPU answers that came after their waiter gave up: 1"), "{text}");
}

/// The same for a join: the answer to a join of a thread of another CPU that the joiner gave
/// up on (its job was aborted) must not be taken for the answer to its next join, of another
/// thread of that CPU.
#[test]
fn xcpu_a_stale_join_answer_is_not_taken_for_the_next_join() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let second_asked = Arc::new(AtomicBool::new(false));
    let s = second_asked.clone();
    // Ends (panicking) once the joiner's second job has asked to join the other thread.
    let first = rt
        .spawn(ThreadSpec::new("first").cpu(1), move |cx| {
            let start = Instant::now();
            while !s.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
                cx.sleep(Duration::from_micros(100));
            }
            cx.sleep(ms(2));
            panic!("first");
        })
        .unwrap();
    // Ends after the first, completing.
    let second = rt
        .spawn(ThreadSpec::new("second").cpu(1), move |cx| {
            let _ = cx.join(first);
            cx.sleep(ms(2));
        })
        .unwrap();
    let got: Arc<Mutex<Vec<ThreadOutcome>>> = Arc::default();
    let g = got.clone();
    // Job 0 joins "first" and is aborted while it waits; job 1 joins "second" and gets its
    // answer well before its own abort time (a panic, with its backtrace, can take tens of
    // milliseconds).
    rt.spawn(ThreadSpec::new("joiner").cpu(0).periodic(ms(200)).max_jobs(2).abort_after(ms(100)), move |cx| {
        if cx.job().number == 0 {
            let outcome = cx.join(first);
            panic!("the aborted join returned {outcome:?}");
        }
        second_asked.store(true, Ordering::Release);
        g.lock().unwrap().push(cx.join(second).unwrap());
    })
    .unwrap();
    let out = rt.run().unwrap();
    let joiner = out.thread_named("joiner").unwrap();
    assert_eq!((joiner.stats.aborted, joiner.stats.completed), (1, 1));
    // The second join returned the second thread's outcome, not the first one's.
    assert_eq!(*got.lock().unwrap(), [ThreadOutcome::Completed]);
    assert_eq!(out.thread(first).unwrap().outcome, Some(ThreadOutcome::Panicked("first".into())));
    // The first thread's answer, which nobody waited for any more, is counted and traced.
    assert_eq!(out.cross_cpu.stale_answers, 1);
    let stale: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::StaleAnswer).collect();
    assert_eq!(stale.len(), 1);
    assert_eq!((stale[0].thread, stale[0].job, stale[0].cpu, stale[0].arg), (joiner.id, 6, 0, first.index() as u64));
}
