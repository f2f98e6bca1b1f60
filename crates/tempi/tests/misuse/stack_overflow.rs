//! A thread that overflows its stack: the process ends with a message naming the thread
//! (not a bare segmentation fault), in both clocks; faults elsewhere still reach the handler
//! installed before; stacks too small for the runtime's own paths are refused.
//!
//! The overflowing runs happen in a child process (this test binary, run again with
//! `TEMPI_OVERFLOW_CASE` set), since they end it.

use std::os::unix::process::ExitStatusExt;
use std::process::Command;
use std::time::Duration;

use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::{Config, Ctx, Error, Runtime, ThreadSpec, MIN_STACK_SIZE};

fn deep(n: u64, cx: &Ctx<'_>) -> u64 {
    let frame = std::hint::black_box([n; 32]);
    if n == u64::MAX {
        cx.yield_now();
        return 0;
    }
    deep(n + 1, cx).wrapping_add(frame[7])
}

fn overflowing<C: Clock>(config: Config) {
    let mut rt = Runtime::<C>::new(config).unwrap();
    rt.spawn(ThreadSpec::new("fine"), |cx| cx.work(Duration::from_millis(1))).unwrap();
    rt.spawn(ThreadSpec::new("deep one").stack_size(64 * 1024).priority(1), |cx| {
        std::hint::black_box(deep(0, cx));
    })
    .unwrap();
    let _ = rt.run();
}

/// An OS-backed thread, which runs on an OS thread of its own in real time, overflowing
/// there without a runtime call.
fn overflowing_os_backed() {
    let mut rt = Runtime::<RealClock>::new(Config::new(1).pin(false)).unwrap();
    rt.spawn(ThreadSpec::new("deep").stack_size(64 * 1024).os_backed(), |cx| {
        std::hint::black_box(deep(0, cx));
    })
    .unwrap();
    let _ = rt.run();
}

/// Runs the case named by `TEMPI_OVERFLOW_CASE` when this binary is the child.
#[test]
fn child() {
    match std::env::var("TEMPI_OVERFLOW_CASE").as_deref() {
        Ok("virtual") => overflowing::<VirtualClock>(Config::new(1)),
        Ok("real") => overflowing::<RealClock>(Config::new(1).pin(false)),
        Ok("os-backed") => overflowing_os_backed(),
        Ok("os-thread") => {
            // A run installs the overflow handler; an OS thread's own overflow must still be
            // reported by the handler that was there before (std's).
            let mut rt = Runtime::simulated(1);
            rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
            rt.run().unwrap();
            fn recurse(n: u64) -> u64 {
                let frame = std::hint::black_box([n; 32]);
                if n == u64::MAX {
                    return 0;
                }
                recurse(n + 1).wrapping_add(frame[5])
            }
            std::thread::Builder::new()
                .name("plain".into())
                .stack_size(64 * 1024)
                .spawn(|| std::hint::black_box(recurse(0)))
                .unwrap()
                .join()
                .unwrap();
        }
        _ => {}
    }
}

/// The full name of test [`child`], as the test harness knows it: this module's path without
/// the program's name.
fn child_test() -> String {
    let path = module_path!().split_once("::").map_or("", |(_, rest)| rest);
    format!("{path}::child")
}

fn run_child(case: &str) -> (Option<i32>, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([&child_test(), "--exact", "--nocapture", "--test-threads=1"])
        .env("TEMPI_OVERFLOW_CASE", case)
        .output()
        .unwrap();
    (out.status.signal(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_overflowing_thread_is_named_before_the_abort_in_virtual_time() {
    let (signal, stderr) = run_child("virtual");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(stderr.contains("tempi thread `deep one` (T1.0) on CPU 0 has overflowed its stack"), "stderr: {stderr}");
}

#[test]
fn an_overflowing_thread_is_named_before_the_abort_in_real_time() {
    let (signal, stderr) = run_child("real");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(stderr.contains("tempi thread `deep one`"), "stderr: {stderr}");
}

#[test]
fn an_overflowing_os_backed_thread_is_named_before_the_abort() {
    // Its stack's guard page faults on its own OS thread, not on the dispatcher's.
    let (signal, stderr) = run_child("os-backed");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(
        stderr.contains("\ntempi thread `deep` (T0.0) on CPU 0 has overflowed its stack of 65536 bytes\n"),
        "stderr: {stderr}"
    );
}

#[test]
fn an_os_thread_overflow_still_reaches_the_previous_handler() {
    let (signal, stderr) = run_child("os-thread");
    assert_eq!(signal, Some(libc::SIGABRT), "stderr: {stderr}");
    assert!(stderr.contains("thread 'plain'") && stderr.contains("has overflowed its stack"), "stderr: {stderr}");
    assert!(!stderr.contains("tempi thread"), "stderr: {stderr}");
}

#[test]
fn stacks_below_the_minimum_are_refused() {
    let mut rt = Runtime::simulated(1);
    let e = rt.spawn(ThreadSpec::new("tiny").stack_size(4096), |_| {}).unwrap_err();
    assert!(matches!(e, Error::InvalidSpec { ref thread, .. } if thread == "tiny"), "{e}");
    assert!(e.to_string().contains(&MIN_STACK_SIZE.to_string()), "{e}");
    rt.spawn(ThreadSpec::new("enough").stack_size(MIN_STACK_SIZE), |_| {}).unwrap();
    let e = Runtime::<VirtualClock>::new(Config::new(1).default_stack(MIN_STACK_SIZE - 1)).err();
    assert!(matches!(e, Some(Error::InvalidConfig(_))), "{e:?}");
    // From inside a thread too.
    rt.spawn(ThreadSpec::new("parent"), |cx| {
        assert!(cx.spawn(ThreadSpec::new("tiny").stack_size(8192), |_| {}).is_err());
    })
    .unwrap();
    rt.run().unwrap();
}
