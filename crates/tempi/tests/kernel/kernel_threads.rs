//! Thread lifecycle in virtual time: spawn from a thread, join, panic isolation, several CPUs,
//! determinism, errors.

use crate::common;

use std::sync::{Arc, Mutex};

use common::{cpu_segments, ms, segments};
use tempi::policy::sched::Edf;
use tempi::trace::TraceKind;
use tempi::{Error, MissPolicy, Runtime, ThreadOutcome, ThreadSpec, Time};

#[test]
fn kernel_panicking_thread_is_isolated() {
    let mut rt = Runtime::simulated(1);
    let bad = rt
        .spawn(ThreadSpec::new("bad").priority(2), |cx| {
            cx.work(ms(1));
            panic!("sensor {} out of range", 7);
        })
        .unwrap();
    let good = rt.spawn(ThreadSpec::new("good").periodic(ms(2)).max_jobs(4), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(bad).unwrap().outcome, Some(ThreadOutcome::Panicked("sensor 7 out of range".into())));
    assert_eq!(out.thread(good).unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread(good).unwrap().stats.completed, 4);
    let exit = out.trace.iter().find(|r| r.kind == TraceKind::Exit && r.thread == bad).unwrap();
    assert_eq!((exit.time, exit.arg), (Time::from_millis(1), 1));
}

#[test]
fn kernel_panic_in_a_periodic_job_ends_only_that_thread() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("flaky").periodic(ms(2)), |cx| {
        if cx.job().number == 2 {
            panic!("third job fails");
        }
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("steady").periodic(ms(4)), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run_until(Time::from_millis(20)).unwrap();
    let flaky = out.thread_named("flaky").unwrap();
    assert_eq!(flaky.stats.completed, 2);
    assert!(matches!(flaky.outcome, Some(ThreadOutcome::Panicked(_))));
    assert_eq!(out.thread_named("steady").unwrap().stats.completed, 5);
}

#[test]
fn kernel_spawn_and_join_from_a_thread() {
    let order = Arc::new(Mutex::new(Vec::new()));
    let o = order.clone();
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("parent").priority(1), move |cx| {
        let o2 = o.clone();
        let child = cx
            .spawn(ThreadSpec::new("child").priority(2), move |cx| {
                cx.work(ms(2));
                o2.lock().unwrap().push(("child done", cx.now()));
            })
            .unwrap();
        // The child is more urgent: it ran as soon as it was created.
        o.lock().unwrap().push(("parent after spawn", cx.now()));
        assert_eq!(cx.join(child), Ok(ThreadOutcome::Completed));
        o.lock().unwrap().push(("parent joined", cx.now()));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        *order.lock().unwrap(),
        [
            ("child done", Time::from_millis(2)),
            ("parent after spawn", Time::from_millis(2)),
            ("parent joined", Time::from_millis(2))
        ]
    );
    assert_eq!(segments(&out), ["parent:0-0:preempt", "child:0-2:exit", "parent:2-2:exit"]);
}

#[test]
fn kernel_join_blocks_until_the_target_ends() {
    let mut rt = Runtime::simulated(1);
    let worker = rt.spawn(ThreadSpec::new("worker"), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("waiter").priority(5), move |cx| {
        assert_eq!(cx.join(worker), Ok(ThreadOutcome::Completed));
        assert_eq!(cx.now(), Time::from_millis(3));
        cx.work(ms(1));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["waiter:0-0:block", "worker:0-3:exit", "waiter:3-4:exit"]);
}

#[test]
fn kernel_spawn_errors_are_reported() {
    let mut rt = Runtime::simulated(1);
    assert_eq!(rt.spawn(ThreadSpec::new("x").cpu(2), |_| {}).unwrap_err(), Error::NoSuchCpu { cpu: 2, cpus: 1 });
    assert!(matches!(
        rt.spawn(ThreadSpec::new("zero").periodic(ms(0)), |_| {}),
        Err(Error::InvalidSpec { ref reason, .. }) if reason.contains("period")
    ));
    rt.spawn(ThreadSpec::new("t"), |cx| {
        let e = cx.spawn(ThreadSpec::new("far").cpu(9), |_| {}).unwrap_err();
        assert_eq!(e, Error::NoSuchCpu { cpu: 9, cpus: 1 });
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.threads[0].outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn kernel_thread_slots_are_reused_with_new_generations() {
    let mut rt = tempi::Runtime::<tempi::clock::VirtualClock>::new(tempi::Config::new(1).max_threads(2)).unwrap();
    rt.spawn(ThreadSpec::new("main"), |cx| {
        let mut last = None;
        for _ in 0..50 {
            let c = cx.spawn(ThreadSpec::new("c"), |cx| cx.work(ms(1))).unwrap();
            assert_ne!(Some(c), last);
            last = Some(c);
            assert_eq!(cx.join(c), Ok(ThreadOutcome::Completed));
        }
        // Both slots busy: a third live thread does not fit.
        let a = cx.spawn(ThreadSpec::new("a"), |cx| cx.work(ms(1))).unwrap();
        assert_eq!(cx.spawn(ThreadSpec::new("b"), |_| {}).unwrap_err(), Error::TooManyThreads { max: 2 });
        cx.join(a).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.threads.len(), 52);
    assert_eq!(out.end, Time::from_millis(51));
}

#[test]
fn kernel_two_cpus_run_in_parallel() {
    let mut rt = Runtime::simulated(2);
    rt.spawn(ThreadSpec::new("a").cpu(0), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("b").cpu(1), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("c").cpu(1).priority(1).periodic(ms(10)).phase(ms(1)).max_jobs(1), |cx| cx.work(ms(1)))
        .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.end, Time::from_millis(3));
    let mut segs = cpu_segments(&out);
    segs.sort();
    assert_eq!(segs, ["cpu0/a:0-3", "cpu1/b:0-1", "cpu1/b:2-3", "cpu1/c:1-2"]);
}

#[test]
fn kernel_cross_cpu_spawn_and_wakeup_in_virtual_time() {
    let mut rt = Runtime::simulated(2);
    rt.spawn(ThreadSpec::new("boss").cpu(0), |cx| {
        cx.work(ms(1));
        let w = cx.spawn(ThreadSpec::new("helper").cpu(1), |cx| cx.work(ms(4))).unwrap();
        cx.work(ms(1));
        assert_eq!(cx.join(w), Ok(ThreadOutcome::Completed));
        assert_eq!(cx.now(), Time::from_millis(5));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(cpu_segments(&out), ["cpu0/boss:0-2", "cpu1/helper:1-5", "cpu0/boss:5-5"]);
}

fn busy_scenario() -> tempi::RunOutcome {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(Edf::new()));
    for i in 0..6u64 {
        let c = ms(1 + i % 3);
        rt.spawn(
            ThreadSpec::new(format!("p{i}"))
                .cpu((i % 2) as usize)
                .periodic(ms(5 + i))
                .miss_policy(MissPolicy::SkipNext),
            move |cx| {
                cx.work(c);
                if cx.job().number % 3 == 0 {
                    cx.yield_now();
                    cx.sleep(ms(1));
                }
                cx.work(ms(1));
            },
        )
        .unwrap();
    }
    rt.run_until(Time::from_millis(500)).unwrap()
}

#[test]
fn kernel_virtual_time_is_deterministic() {
    let a = busy_scenario();
    let b = busy_scenario();
    assert!(a.trace.len() > 500);
    assert_eq!(format!("{:?}", a.trace), format!("{:?}", b.trace));
    assert_eq!(format!("{:?}", a.threads), format!("{:?}", b.threads));
}

/// On several simulated CPUs a yield lets the other CPUs run at the same instant: a thread
/// polling with `yield_now` for a flag that a thread of another CPU sets (woken there by a
/// message sent at that instant) sees it, and time never moves. Without this, the polling
/// CPU kept the simulation at that instant forever.
#[test]
fn kernel_yield_lets_other_cpus_run_at_the_same_instant() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use tempi::message::{Message, Read};
    let mut rt = Runtime::simulated(2);
    let flag = Arc::new(AtomicBool::new(false));
    let polls = Arc::new(AtomicU64::new(0));
    let f = flag.clone();
    let far = rt
        .spawn(ThreadSpec::new("far").cpu(1), move |cx| {
            cx.read(Read::Wait).unwrap();
            f.store(true, Ordering::Relaxed);
        })
        .unwrap();
    let (f, p) = (flag.clone(), polls.clone());
    rt.spawn(ThreadSpec::new("near").cpu(0), move |cx| {
        cx.send(far, Message::new(1, 0, 0)).unwrap();
        while !f.load(Ordering::Relaxed) {
            assert!(p.fetch_add(1, Ordering::Relaxed) < 1_000, "the other CPU never ran");
            cx.yield_now();
        }
        assert_eq!(cx.now(), Time::ZERO);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().all(|t| t.outcome == Some(ThreadOutcome::Completed)));
    assert_eq!(polls.load(Ordering::Relaxed), 1);
}
