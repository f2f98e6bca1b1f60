//! Operations between threads of different CPUs: releases, kills, priority changes, spawns
//! and joins, in real time (through each CPU's request queue) and in virtual time (one kernel
//! holds every CPU), and cooperative preemption with `Ctx::checkpoint`. Real-time checks are
//! properties with generous bounds; virtual-time ones are exact.

use crate::common;

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use common::ms;
use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::trace::TraceKind;
use tempi::{Config, CrossCpuStats, Error, Runtime, ThreadOutcome, ThreadSpec, Time};

/// Real-time tests take turns: on a 2-core machine two runs of two dispatchers each would
/// steal each other's CPUs.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

const WAKES: u32 = 10_000;

/// A on CPU 0 releases B on CPU 1, B releases A back, `WAKES` times each.
fn ping_pong<C: Clock>(rt: &mut Runtime<C>) -> (tempi::ThreadId, tempi::ThreadId, Arc<AtomicU32>) {
    let spec = |name: &str, cpu| {
        ThreadSpec::new(name).cpu(cpu).sporadic(Duration::ZERO).max_jobs(WAKES).priority(5).release_queue(4)
    };
    let pongs = Arc::new(AtomicU32::new(0));
    let b_slot = Arc::new(Mutex::new(None));
    let a_slot = Arc::new(Mutex::new(None));
    let (a_of_b, b_of_a) = (a_slot.clone(), b_slot.clone());
    let a = rt
        .spawn(spec("a", 0), move |cx| {
            let b = b_of_a.lock().unwrap().expect("b spawned");
            cx.release(b).unwrap();
        })
        .unwrap();
    let counted = pongs.clone();
    let b = rt
        .spawn(spec("b", 1), move |cx| {
            let a = a_of_b.lock().unwrap().expect("a spawned");
            if counted.fetch_add(1, Ordering::Relaxed) + 1 < WAKES {
                cx.release(a).unwrap();
            }
        })
        .unwrap();
    *a_slot.lock().unwrap() = Some(a);
    *b_slot.lock().unwrap() = Some(b);
    rt.spawn(ThreadSpec::new("serve").cpu(0), move |cx| cx.release(a).unwrap()).unwrap();
    (a, b, pongs)
}

#[test]
fn xcpu_ping_pong_loses_no_wake_in_virtual_time() {
    let mut rt = Runtime::<VirtualClock>::new(Config::new(2).trace_capacity(0)).unwrap();
    let (a, b, pongs) = ping_pong(&mut rt);
    let out = rt.run().unwrap();
    assert_eq!(out.thread(a).unwrap().stats.completed, u64::from(WAKES));
    assert_eq!(out.thread(b).unwrap().stats.completed, u64::from(WAKES));
    assert_eq!(pongs.load(Ordering::Relaxed), WAKES);
    // Wakes take no simulated time.
    assert_eq!(out.end, Time::ZERO);
}

#[test]
fn xcpu_ping_pong_loses_no_wake_in_real_time() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false).trace_capacity(0)).unwrap();
    let (a, b, pongs) = ping_pong(&mut rt);
    let out = rt.run().unwrap();
    assert_eq!(out.thread(a).unwrap().stats.completed, u64::from(WAKES));
    assert_eq!(out.thread(b).unwrap().stats.completed, u64::from(WAKES));
    assert_eq!(out.thread(a).unwrap().stats.overflows, 0);
    assert_eq!(pongs.load(Ordering::Relaxed), WAKES);
}

/// A killer on CPU 0 ends a sleeper on CPU 1; a boss on CPU 0 raises a thread of CPU 1 above
/// its rival there, which it then preempts.
fn kill_and_raise<C: Clock>(rt: &mut Runtime<C>) -> Arc<Mutex<Vec<&'static str>>> {
    let order = Arc::new(Mutex::new(Vec::new()));
    let victim =
        rt.spawn(ThreadSpec::new("victim").cpu(1).priority(9), |cx| cx.sleep(Duration::from_secs(60))).unwrap();
    let log = order.clone();
    let raised = rt
        .spawn(ThreadSpec::new("raised").cpu(1).priority(1), move |cx| {
            cx.work(ms(1));
            log.lock().unwrap().push("raised");
        })
        .unwrap();
    let log = order.clone();
    rt.spawn(ThreadSpec::new("rival").cpu(1).priority(2), move |cx| {
        for _ in 0..40 {
            cx.work(ms(1));
        }
        log.lock().unwrap().push("rival");
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("boss").cpu(0), move |cx| {
        cx.sleep(ms(2));
        cx.kill(victim).unwrap();
        cx.set_priority_of(raised, 9).unwrap();
    })
    .unwrap();
    order
}

#[test]
fn xcpu_kill_and_set_priority_in_virtual_time() {
    let mut rt = Runtime::simulated(2);
    let order = kill_and_raise(&mut rt);
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("victim").unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(*order.lock().unwrap(), ["raised", "rival"]);
    // Raised at 2 ms, the thread preempts its rival there and works its 1 ms.
    assert_eq!(out.end, Time::from_millis(41));
}

#[test]
fn xcpu_kill_and_set_priority_in_real_time() {
    let _turn = serial();
    let mut rt = real(2);
    let order = kill_and_raise(&mut rt);
    let started = Instant::now();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("victim").unwrap().outcome, Some(ThreadOutcome::Killed));
    assert_eq!(*order.lock().unwrap(), ["raised", "rival"]);
    // The victim's 60 s sleep was cut short.
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// `main` on CPU 0 creates threads on CPU 1 and waits for them.
fn spawn_and_join<C: Clock>(rt: &mut Runtime<C>) {
    rt.spawn(ThreadSpec::new("main").cpu(0), |cx| {
        let child = cx
            .spawn(ThreadSpec::new("child").cpu(1), |cx| {
                assert_eq!(cx.cpu(), 1);
                cx.work(ms(1));
            })
            .unwrap();
        assert_eq!(cx.join(child), Ok(ThreadOutcome::Completed));
        let bad = cx.spawn(ThreadSpec::new("bad").cpu(1), |_| panic!("boom")).unwrap();
        assert_eq!(cx.join(bad), Ok(ThreadOutcome::Panicked("boom".into())));
        // Joined again once it has ended: its outcome is kept.
        assert_eq!(cx.join(bad), Ok(ThreadOutcome::Panicked("boom".into())));
        assert!(matches!(cx.spawn(ThreadSpec::new("nowhere").cpu(7), |_| {}), Err(Error::NoSuchCpu { cpu: 7, .. })));
    })
    .unwrap();
}

#[test]
fn xcpu_spawn_and_join_in_virtual_time() {
    let mut rt = Runtime::simulated(2);
    spawn_and_join(&mut rt);
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("main").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread_named("child").unwrap().cpu, 1);
    assert_eq!(out.end, Time::from_millis(1));
}

#[test]
fn xcpu_spawn_and_join_in_real_time() {
    let _turn = serial();
    let mut rt = real(2);
    spawn_and_join(&mut rt);
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("main").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread_named("child").unwrap().cpu, 1);
    assert!(out.thread_named("child").unwrap().stats.cpu_time >= ms(1));
}

#[test]
fn xcpu_a_full_queue_is_an_error_to_the_sender() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false).cross_cpu_queue(1)).unwrap();
    let (hogging, done) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (h, d) = (hogging.clone(), done.clone());
    // Holds CPU 1 without a runtime call, so its dispatcher drains nothing meanwhile.
    rt.spawn(ThreadSpec::new("hog").cpu(1).priority(9), move |_| {
        h.store(true, Ordering::Release);
        let start = Instant::now();
        while !d.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            std::hint::spin_loop();
        }
    })
    .unwrap();
    let target = rt.spawn(ThreadSpec::new("target").cpu(1).sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("poster").cpu(0), move |cx| {
        while !hogging.load(Ordering::Acquire) {
            cx.sleep(Duration::from_micros(100));
        }
        assert_eq!(cx.release(target), Ok(()));
        assert_eq!(cx.release(target), Err(Error::QueueFull { cpu: 1, capacity: 1 }));
        assert_eq!(cx.kill(target), Err(Error::QueueFull { cpu: 1, capacity: 1 }));
        done.store(true, Ordering::Release);
    })
    .unwrap();
    let out = rt.run().unwrap();
    // Both refusals are counted and traced on the sender's CPU, naming the target thread and
    // the full queue's CPU.
    assert_eq!(
        out.cross_cpu,
        CrossCpuStats {
            refused: 0,
            queue_full: 2,
            pending_at_end: 0,
            proxies_full: 0,
            proxies_at_end: 0,
            stale_answers: 0
        }
    );
    let full: Vec<_> = out.trace.iter().filter(|r| r.kind == TraceKind::QueueFull).collect();
    assert_eq!(full.len(), 2);
    assert!(full.iter().all(|r| r.cpu == 0 && r.thread == target && r.arg == 1));
    let report = tempi::trace::report::to_json(&out);
    assert!(report.contains("\"cross_cpu_queue_full\": 2"), "{report}");
    // The posted release was carried out, the refused requests were not.
    assert_eq!(out.thread(target).unwrap().stats.completed, 1);
    assert_eq!(out.thread(target).unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread_named("poster").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert!(Error::QueueFull { cpu: 1, capacity: 1 }.to_string().contains("CPU 1 is full"));
}

#[test]
fn xcpu_a_request_refused_by_its_target_cpu_is_counted_and_traced_by_the_sender() {
    let _turn = serial();
    let mut rt = real(2);
    let gone = rt.spawn(ThreadSpec::new("gone").cpu(1), |cx| cx.work(Duration::from_micros(100))).unwrap();
    // Alive for the whole run, but periodic: it cannot be released on demand.
    let ticker = rt.spawn(ThreadSpec::new("ticker").cpu(1).periodic(ms(1)).max_jobs(30), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("poster").cpu(0), move |cx| {
        assert_eq!(cx.join(gone), Ok(ThreadOutcome::Completed));
        // Each call returns once posted; the target CPU finds each impossible when it arrives.
        assert_eq!(cx.release(gone), Ok(()));
        assert_eq!(cx.kill(gone), Ok(()));
        assert_eq!(cx.set_priority_of(gone, 3), Ok(()));
        assert_eq!(cx.release(ticker), Ok(()));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(
        out.cross_cpu,
        CrossCpuStats {
            refused: 4,
            queue_full: 0,
            pending_at_end: 0,
            proxies_full: 0,
            proxies_at_end: 0,
            stale_answers: 0
        }
    );
    let mut refused: Vec<_> = out
        .trace
        .iter()
        .filter(|r| r.kind == TraceKind::CrossCpuRefused)
        .map(|r| (r.thread, r.job, r.cpu, r.arg))
        .collect();
    refused.sort();
    // (thread named, request: 0 release, 1 kill, 2 priority, traced on CPU 0, refused by CPU 1)
    let mut expected = vec![(gone, 0u32, 0u16, 1u64), (gone, 1, 0, 1), (gone, 2, 0, 1), (ticker, 0, 0, 1)];
    expected.sort();
    assert_eq!(refused, expected);
    assert_eq!(out.thread(ticker).unwrap().stats.completed, 30);
    let text = tempi::trace::report::summary_text(&out);
    assert!(text.contains("cross-CPU requests refused by their target CPU: 4"), "{text}");
}

#[test]
fn xcpu_virtual_time_answers_the_same_requests_with_errors() {
    // One kernel holds both CPUs: the same requests fail at once, to their caller.
    let mut rt = Runtime::simulated(2);
    let gone = rt.spawn(ThreadSpec::new("gone").cpu(1), |cx| cx.work(Duration::from_micros(100))).unwrap();
    let ticker = rt.spawn(ThreadSpec::new("ticker").cpu(1).periodic(ms(1)).max_jobs(3), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("poster").cpu(0), move |cx| {
        assert_eq!(cx.join(gone), Ok(ThreadOutcome::Completed));
        assert!(matches!(cx.release(gone), Err(Error::UnknownThread(_))));
        assert!(matches!(cx.kill(gone), Err(Error::UnknownThread(_))));
        assert_eq!(cx.release(ticker), Err(Error::NotSporadic(ticker)));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("poster").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.cross_cpu, CrossCpuStats::default());
}

/// Each job of `tick` (CPU 0) releases `echo` on CPU 1, which releases `back` on CPU 0,
/// more urgent than `tick`; `tick` works on until `back` has run. The jobs log themselves as
/// they end; each entry is caused by the one before, so the order does not depend on how
/// fast the machine is, only on every request arriving.
fn chain<C: Clock>(rt: &mut Runtime<C>) -> Arc<Mutex<Vec<String>>> {
    let log = Arc::new(Mutex::new(Vec::new()));
    let backs = Arc::new(AtomicU32::new(0));
    let (log_back, count) = (log.clone(), backs.clone());
    let back = rt
        .spawn(ThreadSpec::new("back").cpu(0).sporadic(Duration::ZERO).priority(3).max_jobs(3), move |cx| {
            cx.work(ms(1));
            log_back.lock().unwrap().push(format!("back#{}", cx.job().number));
            count.fetch_add(1, Ordering::Release);
        })
        .unwrap();
    let log_echo = log.clone();
    let echo = rt
        .spawn(ThreadSpec::new("echo").cpu(1).sporadic(Duration::ZERO).priority(3).max_jobs(3), move |cx| {
            cx.work(ms(1));
            log_echo.lock().unwrap().push(format!("echo#{}", cx.job().number));
            cx.release(back).unwrap();
        })
        .unwrap();
    let log_tick = log.clone();
    rt.spawn(ThreadSpec::new("tick").cpu(0).periodic(ms(20)).priority(2).max_jobs(3), move |cx| {
        cx.work(ms(1));
        cx.release(echo).unwrap();
        let job = cx.job().number;
        while backs.load(Ordering::Acquire) <= job {
            cx.work(ms(1));
        }
        log_tick.lock().unwrap().push(format!("tick#{job}"));
    })
    .unwrap();
    log
}

#[test]
fn xcpu_real_and_virtual_time_give_the_same_job_order() {
    let mut sim = Runtime::simulated(2);
    let log = chain(&mut sim);
    let virtual_out = sim.run().unwrap();
    let order = log.lock().unwrap().clone();
    let expected = ["echo#0", "back#0", "tick#0", "echo#1", "back#1", "tick#1", "echo#2", "back#2", "tick#2"];
    assert_eq!(order, expected);
    // Echo at 1-2 ms; `back` preempts `tick` at 2 ms and ends at 3; tick's piece ends at 4.
    assert_eq!(virtual_out.end, Time::from_millis(44));

    let _turn = serial();
    let mut rt = real(2);
    let log = chain(&mut rt);
    rt.run().unwrap();
    assert_eq!(*log.lock().unwrap(), expected);
}

#[test]
fn xcpu_checkpoint_yields_to_a_more_urgent_release_in_real_time() {
    let _turn = serial();
    let mut rt = real(1);
    let stop = Arc::new(AtomicBool::new(false));
    let (seen, set) = (stop.clone(), stop.clone());
    // Loops in its own code: only its checkpoints let `urgent` in.
    rt.spawn(ThreadSpec::new("looper").priority(1), move |cx| {
        let start = Instant::now();
        let mut x = 0u64;
        while !seen.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(1));
            cx.checkpoint();
        }
        assert!(seen.load(Ordering::Acquire), "the urgent release never ran");
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("urgent").periodic(ms(5)).phase(ms(5)).priority(9).max_jobs(1), move |cx| {
        assert!(cx.now() >= Time::from_millis(5));
        set.store(true, Ordering::Release);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("looper").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread_named("urgent").unwrap().stats.completed, 1);
}

#[test]
fn xcpu_checkpoint_yields_to_a_request_from_another_cpu() {
    let _turn = serial();
    let mut rt = real(2);
    let stop = Arc::new(AtomicBool::new(false));
    let (seen, set) = (stop.clone(), stop.clone());
    rt.spawn(ThreadSpec::new("looper").cpu(1).priority(1), move |cx| {
        let start = Instant::now();
        while !seen.load(Ordering::Acquire) && start.elapsed() < Duration::from_secs(20) {
            cx.checkpoint();
        }
        assert!(seen.load(Ordering::Acquire), "the posted release never ran");
    })
    .unwrap();
    let urgent = rt
        .spawn(ThreadSpec::new("urgent").cpu(1).sporadic(Duration::ZERO).priority(9).max_jobs(1), move |_| {
            set.store(true, Ordering::Release);
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("poster").cpu(0), move |cx| {
        cx.sleep(ms(2));
        cx.release(urgent).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("looper").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.thread(urgent).unwrap().stats.completed, 1);
}

#[test]
fn xcpu_checkpoint_in_virtual_time_preempts_exactly_at_the_release() {
    let mut rt = Runtime::simulated(1);
    let stop = Arc::new(AtomicBool::new(false));
    let (seen, set) = (stop.clone(), stop.clone());
    rt.spawn(ThreadSpec::new("looper").priority(1), move |cx| {
        while !seen.load(Ordering::Acquire) {
            cx.work(Duration::from_micros(300));
            cx.checkpoint();
        }
        // The urgent job ran at 5 ms; the loop noticed at the end of the piece it was in.
        assert_eq!(cx.now(), Time::from_micros(5_100));
    })
    .unwrap();
    rt.spawn(ThreadSpec::new("urgent").periodic(ms(5)).phase(ms(5)).priority(9).max_jobs(1), move |cx| {
        assert_eq!(cx.now(), Time::from_millis(5));
        set.store(true, Ordering::Release);
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("looper").unwrap().outcome, Some(ThreadOutcome::Completed));
}

#[test]
fn xcpu_a_quiet_real_time_run_ends() {
    let _turn = serial();
    // Nothing will ever release `idle`, and `waiter` waits for it from CPU 0: once neither CPU
    // has a timer, work or a request in flight, the run ends instead of waiting forever.
    let mut rt = real(2);
    let idle = rt.spawn(ThreadSpec::new("idle").cpu(1).sporadic(Duration::ZERO), |_| {}).unwrap();
    rt.spawn(ThreadSpec::new("waiter").cpu(0), move |cx| {
        let _ = cx.join(idle);
        unreachable!("`idle` never ends");
    })
    .unwrap();
    let started = Instant::now();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(idle).unwrap().outcome, None);
    assert_eq!(out.thread_named("waiter").unwrap().outcome, None);
    assert!(started.elapsed() < Duration::from_secs(30));
}

/// CPU 1's only timer before the horizon is its periodic thread's first release: once that
/// job is done its dispatcher waits for the horizon, and every post from CPU 0 ends that wait
/// early. Each such post must still be served, and the run must go on to its horizon: no
/// release is left in the queue and none is lost, as in virtual time.
fn releases_into_a_quiet_cpu<C: Clock>(rt: &mut Runtime<C>) -> tempi::ThreadId {
    let alarm = rt
        .spawn(ThreadSpec::new("alarm").cpu(1).sporadic(Duration::ZERO).release_queue(4), |cx| cx.work(ms(1)))
        .unwrap();
    rt.spawn(ThreadSpec::new("control").cpu(1).periodic(Duration::from_secs(1)).priority(1), |cx| cx.work(ms(2)))
        .unwrap();
    let mut posted = 0;
    rt.add_timer(tempi::TimerSpec::every(ms(10)).starting(Time::from_millis(10)).cpu(0), move |ev| {
        if posted < 10 {
            posted += 1;
            ev.release(alarm).unwrap();
        }
    })
    .unwrap();
    alarm
}

#[test]
fn xcpu_a_cpu_with_no_local_event_left_serves_its_queue_until_the_horizon() {
    let horizon = Time::from_millis(1000);
    let mut sim = Runtime::<VirtualClock>::new(Config::new(2)).unwrap();
    let alarm = releases_into_a_quiet_cpu(&mut sim);
    let simulated = sim.run_until(horizon).unwrap();
    assert_eq!(simulated.thread(alarm).unwrap().stats.completed, 10);

    let _turn = serial();
    let mut rt = real(2);
    let alarm = releases_into_a_quiet_cpu(&mut rt);
    let out = rt.run_until(horizon).unwrap();
    // The last release is posted about 900 ms before the horizon: every one arrives.
    assert_eq!(out.thread(alarm).unwrap().stats.completed, 10, "{:?}", out.cross_cpu);
    assert_eq!(out.cross_cpu.pending_at_end, 0);
    assert!(out.end >= horizon, "the run ended at {:?}, before its horizon", out.end);
}

fn spawned_across_cpus<C: Clock>(rt: &mut Runtime<C>) {
    for (name, cpu) in [("d", 1), ("c", 0), ("b", 1), ("a", 0)] {
        rt.spawn(ThreadSpec::new(name).cpu(cpu), |cx| cx.work(ms(1))).unwrap();
    }
}

#[test]
fn xcpu_both_clocks_list_threads_in_the_order_they_were_spawned() {
    let names = |out: &tempi::RunOutcome| out.threads.iter().map(|t| t.name.clone()).collect::<Vec<_>>();
    let mut sim = Runtime::<VirtualClock>::new(Config::new(2)).unwrap();
    spawned_across_cpus(&mut sim);
    let simulated = sim.run().unwrap();
    assert_eq!(names(&simulated), ["d", "c", "b", "a"]);
    let _turn = serial();
    let mut rt = real(2);
    spawned_across_cpus(&mut rt);
    assert_eq!(names(&rt.run().unwrap()), ["d", "c", "b", "a"]);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// In virtual time a chain of threads on random CPUs, each releasing the next and the
    /// last releasing the first, runs every round exactly, whatever the placement.
    #[test]
    fn xcpu_virtual_release_rings_lose_nothing(
        cpus in 1usize..4,
        placement in proptest::collection::vec(0usize..4, 2..5),
        rounds in 1u32..50,
    ) {
        let mut rt = Runtime::<VirtualClock>::new(Config::new(cpus).trace_capacity(0)).unwrap();
        let ids = Arc::new(Mutex::new(Vec::new()));
        let n = placement.len();
        let mut spawned = Vec::new();
        for (k, &cpu) in placement.iter().enumerate() {
            let ids = ids.clone();
            let spec = ThreadSpec::new(format!("t{k}")).cpu(cpu % cpus).sporadic(Duration::ZERO).max_jobs(rounds);
            let id = rt
                .spawn(spec, move |cx| {
                    let next = ids.lock().unwrap()[(k + 1) % n];
                    // The first thread's last job closes the ring without releasing it again.
                    if !(k + 1 == n && cx.job().number + 1 == rounds) {
                        cx.release(next).unwrap();
                    }
                })
                .unwrap();
            spawned.push(id);
        }
        *ids.lock().unwrap() = spawned.clone();
        let first = spawned[0];
        rt.spawn(ThreadSpec::new("start"), move |cx| cx.release(first).unwrap()).unwrap();
        let out = rt.run().unwrap();
        for id in spawned {
            proptest::prop_assert_eq!(out.thread(id).unwrap().stats.completed, u64::from(rounds));
            proptest::prop_assert_eq!(out.thread(id).unwrap().stats.overflows, 0);
        }
    }
}
