//! Ending threads from outside them: the runtime stopping at its horizon, a kill, a panicking
//! handler. Destructors run, their runtime calls neither abort the process nor get lost, and
//! a panic of code the kernel calls ends the run with an error the caller can handle.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex as StdMutex, MutexGuard as StdGuard};
use std::time::Duration;

use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::policy::budget::Kill;
use tempi::sync::{LockSpec, Mutex, SemSpec, Semaphore};
use tempi::trace::TraceKind;
use tempi::{Budget, Config, Ctx, Error, Runtime, ThreadOutcome, ThreadSpec, Time, TimerSpec};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Real-time tests measure time: two at once would steal each other's CPU.
static ONE_AT_A_TIME: StdMutex<()> = StdMutex::new(());

fn serial() -> StdGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// Gives a semaphore unit back when dropped, as a resource guard does.
struct Vacates<'a> {
    sem: &'a Semaphore,
    cx: &'a Ctx<'a>,
    dropped: &'a AtomicBool,
}

impl Drop for Vacates<'_> {
    fn drop(&mut self) {
        let _ = self.sem.vacate(self.cx);
        self.dropped.store(true, Ordering::SeqCst);
    }
}

#[test]
fn stop_at_the_horizon_runs_a_destructor_that_vacates() {
    let mut rt = Runtime::simulated(1);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("slots", 1)).unwrap());
    let dropped = Arc::new(AtomicBool::new(false));
    let (s, d) = (sem.clone(), dropped.clone());
    let t = rt
        .spawn(ThreadSpec::new("holder"), move |cx| {
            s.procure(cx).unwrap();
            let _unit = Vacates { sem: &s, cx, dropped: &d };
            cx.work(ms(100));
        })
        .unwrap();
    let out = rt.run_until(Time::from_millis(10)).unwrap();
    assert_eq!(out.thread(t).unwrap().outcome, None, "still alive at the horizon");
    assert!(dropped.load(Ordering::SeqCst), "the destructor ran");
}

/// Holds a mutex's guard (and so unlocks it when dropped) and counts in the protected data.
struct Holds<'a> {
    guard: tempi::sync::MutexGuard<'a, u32>,
}

impl Drop for Holds<'_> {
    fn drop(&mut self) {
        *self.guard += 1;
    }
}

#[test]
fn stop_at_the_horizon_unlocks_a_held_mutex() {
    for trace in [0, 1 << 12] {
        let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(trace)).unwrap();
        let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol("bpi")).unwrap());
        let m2 = m.clone();
        rt.spawn(ThreadSpec::new("owner").priority(1), move |cx| {
            let _held = Holds { guard: m2.lock(cx).unwrap() };
            cx.work(ms(100));
        })
        .unwrap();
        let m3 = m.clone();
        rt.spawn(ThreadSpec::new("waiter").priority(2).sporadic(ms(1)), move |cx| {
            let _g = m3.lock(cx).unwrap();
        })
        .unwrap();
        let out: tempi::RunOutcome = rt.run_until(Time::from_millis(10)).unwrap();
        assert_eq!(out.thread_named("owner").unwrap().outcome, None);
    }
}

#[test]
fn stop_at_the_horizon_runs_a_destructor_that_locks_a_mutex() {
    for trace in [0, 1 << 12] {
        let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(trace)).unwrap();
        let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol("bp")).unwrap());
        let m2 = m.clone();
        let t = rt
            .spawn(ThreadSpec::new("t"), move |cx| {
                let _c = CountsOnDrop { m: &m2, cx };
                cx.work(ms(100));
            })
            .unwrap();
        let out = rt.run_until(Time::from_millis(10)).unwrap();
        assert_eq!(out.thread(t).unwrap().outcome, None);
    }
}

/// A budget that kills its only member after `budget` of CPU time.
fn kill_after<C: Clock>(rt: &mut Runtime<C>, t: tempi::ThreadId, budget: Duration) {
    let set = rt.create_set("box", 0).unwrap();
    rt.add_to_set(set, t).unwrap();
    rt.set_budget(set, Budget::new(budget).action(Kill)).unwrap();
}

#[test]
fn a_kill_runs_a_destructor_that_vacates_and_the_unit_comes_back() {
    let mut rt = Runtime::simulated(1);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("slots", 1)).unwrap());
    let dropped = Arc::new(AtomicBool::new(false));
    let (s, d) = (sem.clone(), dropped.clone());
    let victim = rt
        .spawn(ThreadSpec::new("victim").priority(5), move |cx| {
            s.procure(cx).unwrap();
            let _unit = Vacates { sem: &s, cx, dropped: &d };
            cx.work(ms(10));
        })
        .unwrap();
    kill_after(&mut rt, victim, ms(2));
    let s = sem.clone();
    let got = Arc::new(AtomicBool::new(false));
    let g = got.clone();
    let other = rt
        .spawn(ThreadSpec::new("other").priority(1), move |cx| {
            s.procure(cx).unwrap();
            g.store(true, Ordering::SeqCst);
            let _ = s.vacate(cx);
        })
        .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(victim).unwrap().outcome, Some(ThreadOutcome::Killed));
    assert!(dropped.load(Ordering::SeqCst));
    assert_eq!(out.thread(other).unwrap().outcome, Some(ThreadOutcome::Completed));
    assert!(got.load(Ordering::SeqCst), "the vacated unit reached the other thread");
}

/// Locks a mutex in its destructor and counts in it.
struct CountsOnDrop<'a> {
    m: &'a Mutex<u32>,
    cx: &'a Ctx<'a>,
}

impl Drop for CountsOnDrop<'_> {
    fn drop(&mut self) {
        // A free lock is taken on the fast path; otherwise the call is refused, not waited for.
        if let Ok(mut g) = self.m.lock(self.cx) {
            *g += 1;
        }
    }
}

#[test]
fn a_kill_runs_a_destructor_that_locks_and_unlocks_a_mutex() {
    for trace in [0, 1 << 12] {
        let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(trace)).unwrap();
        let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol("bp")).unwrap());
        let m2 = m.clone();
        let victim = rt
            .spawn(ThreadSpec::new("victim").priority(5), move |cx| {
                let _c = CountsOnDrop { m: &m2, cx };
                *m2.lock(cx).unwrap() += 1;
                cx.work(ms(10));
            })
            .unwrap();
        kill_after(&mut rt, victim, ms(2));
        let m3 = m.clone();
        let seen = Arc::new(AtomicU32::new(u32::MAX));
        let s = seen.clone();
        rt.spawn(ThreadSpec::new("reader").priority(1), move |cx| s.store(*m3.lock(cx).unwrap(), Ordering::SeqCst))
            .unwrap();
        let out = rt.run().unwrap();
        assert_eq!(out.thread(victim).unwrap().outcome, Some(ThreadOutcome::Killed));
        assert_eq!(out.thread_named("reader").unwrap().outcome, Some(ThreadOutcome::Completed));
        // With tracing off the destructor takes the free lock on the fast path; with tracing
        // on it is refused instead of waited for. Either way the lock is free afterwards.
        let expected = if trace == 0 { 2 } else { 1 };
        assert_eq!(seen.load(Ordering::SeqCst), expected);
    }
}

#[test]
fn a_panic_whose_destructor_unlocks_hands_the_lock_on_poisoned() {
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol("bpi")).unwrap());
    let m2 = m.clone();
    rt.spawn(ThreadSpec::new("boom").priority(1), move |cx| {
        let _g = m2.lock(cx).unwrap();
        cx.work(ms(2));
        panic!("inside");
    })
    .unwrap();
    let m3 = m.clone();
    let t = rt
        .spawn(ThreadSpec::new("waiter").priority(2).periodic(ms(10)).phase(ms(1)).max_jobs(1), move |cx| {
            assert_eq!(m3.lock(cx).err(), Some(tempi::sync::LockError::Poisoned));
        })
        .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread(t).unwrap().outcome, Some(ThreadOutcome::Completed));
    assert!(matches!(out.thread_named("boom").unwrap().outcome, Some(ThreadOutcome::Panicked(_))));
}

/// A thread panics holding `m1`, for which a more urgent thread waits while holding `m2`. The
/// waiter runs only once the panicking thread has finished unwinding (its unlock waits for the
/// end of the unwind), so the waiter's own guard of `m2` is not dropped while the OS thread is
/// still unwinding, and `m2` is not poisoned: a panic poisons only the locks its thread held.
#[test]
fn a_panic_poisons_only_the_locks_its_own_thread_held() {
    for trace in [0, 1 << 12] {
        let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(trace)).unwrap();
        let m1 = Arc::new(rt.create_mutex(0u32, LockSpec::new("m1").protocol("bpi")).unwrap());
        let m2 = Arc::new(rt.create_mutex(0u32, LockSpec::new("m2").protocol("bpi")).unwrap());
        let seen = Arc::new(StdMutex::new(Vec::new()));
        let b1 = m1.clone();
        rt.spawn(ThreadSpec::new("boom").priority(1), move |cx| {
            let _g = b1.lock(cx).unwrap();
            cx.work(ms(2));
            panic!("inside");
        })
        .unwrap();
        let (w1, w2, v) = (m1.clone(), m2.clone(), seen.clone());
        rt.spawn(ThreadSpec::new("waiter").priority(2).periodic(ms(10)).phase(ms(1)).max_jobs(1), move |cx| {
            let g2 = w2.lock(cx).unwrap();
            v.lock().unwrap().push(w1.lock(cx).err());
            drop(g2);
            v.lock().unwrap().push(w2.lock(cx).err());
        })
        .unwrap();
        rt.run().unwrap();
        assert_eq!(*seen.lock().unwrap(), [Some(tempi::sync::LockError::Poisoned), None], "trace capacity {trace}");
    }
}

/// A thread that takes a mutex at once and sleeps holding it; the flag says whether its
/// destructors ran.
fn holder<C: Clock>(rt: &mut Runtime<C>) -> Arc<AtomicBool> {
    holder_locked(rt).1
}

/// A thread that takes a lock and sleeps holding it: flags for "it holds the lock" and "it
/// was unwound". Real-time tests wait for the first before failing, since a loaded machine
/// may start the holder late.
fn holder_locked<C: Clock>(rt: &mut Runtime<C>) -> (Arc<AtomicBool>, Arc<AtomicBool>) {
    let m = Arc::new(rt.create_mutex(0u32, LockSpec::new("m").protocol("bpi")).unwrap());
    let (locked, dropped) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let (l, d) = (locked.clone(), dropped.clone());
    rt.spawn(ThreadSpec::new("holder").priority(9), move |cx| {
        struct Flag<'a>(&'a AtomicBool);
        impl Drop for Flag<'_> {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let _f = Flag(&d);
        let _g = m.lock(cx).unwrap();
        l.store(true, Ordering::SeqCst);
        cx.sleep(ms(50));
    })
    .unwrap();
    (locked, dropped)
}

/// A timing event that fails once the holder holds its lock.
fn fail_once_locked(locked: Arc<AtomicBool>) -> impl FnMut(&mut tempi::EventCtx<'_>) + Send + 'static {
    move |_| {
        if locked.load(Ordering::SeqCst) {
            panic!("timer failed")
        }
    }
}

fn expect_panicked(r: Result<tempi::RunOutcome, Error>, what: &str, message: &str) {
    match r {
        Err(Error::Panicked { what: w, message: m, .. }) => {
            assert!(w.contains(what), "{w:?} should name {what:?}");
            assert_eq!(m, message);
        }
        other => panic!("expected a panicked run, got {other:?}"),
    }
}

#[test]
fn a_panicking_timer_handler_ends_the_run_with_an_error_in_virtual_time() {
    let mut rt = Runtime::simulated(1);
    let dropped = holder(&mut rt);
    rt.add_timer(TimerSpec::at(Time::from_millis(1)), |_| panic!("timer failed")).unwrap();
    expect_panicked(rt.run(), "timing event 0", "timer failed");
    assert!(dropped.load(Ordering::SeqCst), "the holder was unwound");
}

#[test]
fn a_panicking_miss_handler_ends_the_run_with_an_error() {
    let mut rt = Runtime::simulated(1);
    let dropped = holder(&mut rt);
    rt.spawn(ThreadSpec::new("late").priority(0).deadline(ms(1)).on_miss(|_| panic!("miss handler failed")), |cx| {
        cx.work(ms(2))
    })
    .unwrap();
    expect_panicked(rt.run(), "miss handler of thread `late`", "miss handler failed");
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn a_panicking_budget_handler_ends_the_run_with_an_error() {
    let mut rt = Runtime::simulated(1);
    let dropped = holder(&mut rt);
    let t = rt.spawn(ThreadSpec::new("member").priority(2), |cx| cx.work(ms(5))).unwrap();
    let set = rt.create_set("box", 0).unwrap();
    rt.add_to_set(set, t).unwrap();
    rt.set_budget(set, Budget::new(ms(1)).on_event(|_| panic!("budget handler failed"))).unwrap();
    expect_panicked(rt.run(), "budget", "budget handler failed");
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn a_panicking_scheduler_ends_the_run_with_an_error() {
    struct Broken(tempi::policy::sched::FixedPriority, u32);
    impl tempi::policy::sched::Scheduler for Broken {
        fn name(&self) -> &str {
            "broken"
        }
        fn base_urgency(&self, t: &tempi::policy::sched::SchedInfo) -> tempi::policy::sched::Urgency {
            self.0.base_urgency(t)
        }
        fn on_ready(&mut self, t: &tempi::policy::sched::SchedInfo, why: tempi::policy::sched::ReadyReason) {
            self.1 += 1;
            if self.1 == 3 {
                panic!("policy failed");
            }
            self.0.on_ready(t, why)
        }
        fn on_yield(&mut self, t: &tempi::policy::sched::SchedInfo) {
            self.0.on_yield(t)
        }
        fn on_blocked(&mut self, t: &tempi::policy::sched::SchedInfo) {
            self.0.on_blocked(t)
        }
        fn on_removed(&mut self, t: tempi::ThreadId) {
            self.0.on_removed(t)
        }
        fn on_urgency_changed(&mut self, t: &tempi::policy::sched::SchedInfo, old: tempi::policy::sched::Urgency) {
            self.0.on_urgency_changed(t, old)
        }
        fn pick_next(&mut self, now: Time) -> Option<tempi::ThreadId> {
            self.0.pick_next(now)
        }
    }
    let cfg = Config::new(1).scheduler(|| Box::new(Broken(tempi::policy::sched::FixedPriority::new(), 0)));
    let mut rt = Runtime::<VirtualClock>::new(cfg).unwrap();
    let dropped = holder(&mut rt);
    rt.spawn(ThreadSpec::new("p").priority(3).periodic(ms(5)), |cx| cx.work(ms(1))).unwrap();
    // Endless but for the failure, which `run` would refuse up front: no horizon instead.
    expect_panicked(rt.run_until(Time::MAX), "scheduler `broken`", "policy failed");
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn a_panicking_timer_handler_ends_the_run_with_an_error_in_real_time() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(1).pin(false)).unwrap();
    let (locked, dropped) = holder_locked(&mut rt);
    rt.add_timer(TimerSpec::every(ms(1)), fail_once_locked(locked)).unwrap();
    expect_panicked(rt.run(), "timing event 0", "timer failed");
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn a_failing_dispatcher_stops_the_other_cpus_in_real_time() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let (locked, dropped) = holder_locked(&mut rt);
    rt.spawn(ThreadSpec::new("forever").cpu(1).periodic(ms(1)), |cx| cx.work(Duration::from_micros(100))).unwrap();
    rt.add_timer(TimerSpec::every(ms(1)), fail_once_locked(locked)).unwrap();
    // Without the failure this run would never end.
    expect_panicked(rt.run(), "timing event 0", "timer failed");
    assert!(dropped.load(Ordering::SeqCst));
}

#[test]
fn real_time_cpus_share_time_zero() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    for cpu in 0..2 {
        rt.spawn(ThreadSpec::new(format!("p{cpu}")).cpu(cpu).periodic(ms(2)).max_jobs(2), |cx| cx.work(ms(1))).unwrap();
        rt.spawn(ThreadSpec::new(format!("once{cpu}")).cpu(cpu), |_| {}).unwrap();
    }
    let out = rt.run().unwrap();
    for cpu in 0..2u16 {
        let first = out.trace.iter().filter(|r| r.cpu == cpu && r.kind == TraceKind::Release).map(|r| r.time).min();
        assert_eq!(first, Some(Time::ZERO), "CPU {cpu}'s first release is at the shared time zero");
    }
    // The second periodic releases are one period after the shared zero on both CPUs.
    for cpu in 0..2 {
        let p = out.thread_named(&format!("p{cpu}")).unwrap();
        let releases: Vec<Time> =
            out.trace.iter().filter(|r| r.thread == p.id && r.kind == TraceKind::Release).map(|r| r.time).collect();
        assert_eq!(releases, [Time::ZERO, Time::from_millis(2)]);
    }
}

#[test]
fn real_time_horizon_is_exclusive() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    for cpu in 0..2 {
        rt.spawn(ThreadSpec::new(format!("p{cpu}")).cpu(cpu).periodic(Duration::from_micros(50)), |cx| {
            cx.work(Duration::from_micros(40))
        })
        .unwrap();
    }
    let out = rt.run_until(Time::from_nanos(1)).unwrap();
    assert_eq!(out.total_misses(), 0);
    assert!(out.trace.iter().filter(|r| r.kind == TraceKind::Release).all(|r| r.time < Time::from_nanos(1)));
    assert!(out.threads.iter().all(|t| t.stats.released <= 1));
}

#[test]
fn real_time_a_panicking_scheduler_factory_is_an_error() {
    let _turn = serial();
    let cfg = Config::new(2).pin(false).scheduler(|| panic!("no scheduler"));
    let mut rt = Runtime::<RealClock>::new(cfg).unwrap();
    rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    match rt.run() {
        Err(Error::Panicked { message, .. }) => assert_eq!(message, "no scheduler"),
        other => panic!("expected a panicked run, got {other:?}"),
    }
}

#[test]
fn a_scheduler_panicking_while_threads_are_placed_is_an_error() {
    struct Refuses(tempi::policy::sched::FixedPriority);
    impl tempi::policy::sched::Scheduler for Refuses {
        fn name(&self) -> &str {
            "refuses"
        }
        fn base_urgency(&self, t: &tempi::policy::sched::SchedInfo) -> tempi::policy::sched::Urgency {
            self.0.base_urgency(t)
        }
        fn on_ready(&mut self, _: &tempi::policy::sched::SchedInfo, _: tempi::policy::sched::ReadyReason) {
            panic!("no thread is ever ready");
        }
        fn on_removed(&mut self, t: tempi::ThreadId) {
            self.0.on_removed(t)
        }
        fn pick_next(&mut self, now: Time) -> Option<tempi::ThreadId> {
            self.0.pick_next(now)
        }
    }
    let cfg = Config::new(1).scheduler(|| Box::new(Refuses(tempi::policy::sched::FixedPriority::new())));
    let mut rt = Runtime::<VirtualClock>::new(cfg).unwrap();
    rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    let r = rt.run();
    assert!(matches!(r, Err(Error::Panicked { source: tempi::PanicSource::Scheduler, .. })), "{r:?}");
    expect_panicked(r, "the scheduler of CPU 0, while the kernel was built", "no thread is ever ready");
}

#[test]
fn a_thread_panicking_with_any_payload_ends_only_that_thread() {
    let mut rt = Runtime::simulated(1);
    let t = rt.spawn(ThreadSpec::new("odd"), |_| std::panic::panic_any(7u8)).unwrap();
    let u = rt.spawn(ThreadSpec::new("fine"), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert!(matches!(out.thread(t).unwrap().outcome, Some(ThreadOutcome::Panicked(_))));
    assert_eq!(out.thread(u).unwrap().outcome, Some(ThreadOutcome::Completed));
}
