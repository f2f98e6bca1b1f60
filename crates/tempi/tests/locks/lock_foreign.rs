//! Objects are bound to the runtime that made them: a mutex, condition variable, semaphore,
//! thread set or thread id used by another runtime is refused with an error, never a race or
//! another object's data.

use crate::common;

use std::sync::mpsc;
use std::sync::{Arc, Barrier, Mutex as StdMutex};
use std::time::Duration;

use common::ms;
use tempi::sync::{LockError, LockSpec, SemSpec};
use tempi::{Budget, Config, Error, Runtime, ThreadSpec};

const ROUNDS: u64 = 200_000;

/// The program: two OS threads, each running a simulated runtime, share a mutex of
/// the first; both lock it 200 000 times. The second runtime's threads are refused and the
/// count is exact. Tracing off, so the first runtime takes the lock on the fast path.
fn two_runtimes_share_a_mutex(protocol: &'static str) {
    let start = Arc::new(Barrier::new(2));
    let (send, recv) = mpsc::channel::<Arc<tempi::sync::Mutex<u64>>>();
    let refused = Arc::new(StdMutex::new((0u64, None)));
    let count = Arc::new(StdMutex::new(0u64));

    let s1 = start.clone();
    let count_home = count.clone();
    let home = std::thread::spawn(move || {
        let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
        let m = Arc::new(rt.create_mutex(0u64, LockSpec::new("shared").protocol(protocol)).unwrap());
        send.send(m.clone()).unwrap();
        let (m1, c) = (m.clone(), count_home);
        rt.spawn(ThreadSpec::new("home"), move |cx| {
            for _ in 0..ROUNDS {
                *m1.lock(cx).unwrap() += 1;
            }
            *c.lock().unwrap() = *m1.lock(cx).unwrap();
        })
        .unwrap();
        s1.wait();
        rt.run().unwrap();
        m
    });

    let m = recv.recv().unwrap();
    let r = refused.clone();
    let away = std::thread::spawn(move || {
        let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
        rt.spawn(ThreadSpec::new("away"), move |cx| {
            for _ in 0..ROUNDS {
                match m.lock(cx) {
                    Ok(mut g) => *g += 1,
                    Err(e) => {
                        let mut r = r.lock().unwrap();
                        r.0 += 1;
                        r.1 = Some(e);
                    }
                }
            }
            assert_eq!(m.try_lock(cx).err(), Some(LockError::ForeignRuntime));
            assert_eq!(m.lock_timeout(cx, ms(1)).err(), Some(LockError::ForeignRuntime));
            assert_eq!(m.clear_poison(cx), Err(LockError::ForeignRuntime));
        })
        .unwrap();
        start.wait();
        rt.run().unwrap();
    });

    away.join().unwrap();
    let m = home.join().unwrap();
    // Every foreign attempt was refused, and the home runtime's increments all counted.
    assert_eq!(*refused.lock().unwrap(), (ROUNDS, Some(LockError::ForeignRuntime)));
    assert_eq!(*count.lock().unwrap(), ROUNDS);
    // A third runtime, after both runs, is refused as well.
    let mut rt = Runtime::simulated(1);
    let seen = Arc::new(StdMutex::new(None));
    let s = seen.clone();
    rt.spawn(ThreadSpec::new("reader"), move |cx| *s.lock().unwrap() = Some(m.lock(cx).err())).unwrap();
    rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), Some(Some(LockError::ForeignRuntime)));
}

#[test]
fn foreign_mutex_is_refused_and_the_count_is_exact_bpi() {
    two_runtimes_share_a_mutex("bpi");
}

#[test]
fn foreign_mutex_is_refused_and_the_count_is_exact_other_protocols() {
    for p in ["bp", "km"] {
        two_runtimes_share_a_mutex(p);
    }
}

/// The count, read back inside the mutex's own runtime after the two runs.
#[test]
fn foreign_mutex_leaves_the_data_alone() {
    let mut home = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
    let m = Arc::new(home.create_mutex(7u64, LockSpec::new("m")).unwrap());
    let mut away = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
    let m2 = m.clone();
    away.spawn(ThreadSpec::new("away"), move |cx| {
        assert_eq!(m2.lock(cx).err(), Some(LockError::ForeignRuntime));
    })
    .unwrap();
    away.run().unwrap();
    let seen = Arc::new(StdMutex::new(0));
    let s = seen.clone();
    home.spawn(ThreadSpec::new("home"), move |cx| *s.lock().unwrap() = *m.lock(cx).unwrap()).unwrap();
    home.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), 7);
}

#[test]
fn foreign_condvar_is_refused_and_the_lock_released() {
    let mut a = Runtime::simulated(1);
    let cv = Arc::new(a.create_condvar(0).unwrap());
    let mut b = Runtime::simulated(1);
    let m = Arc::new(b.create_mutex(0u32, LockSpec::new("m")).unwrap());
    let done = Arc::new(StdMutex::new(false));
    let d = done.clone();
    b.spawn(ThreadSpec::new("t"), move |cx| {
        let g = m.lock(cx).unwrap();
        assert_eq!(cv.wait(cx, g).err(), Some(LockError::ForeignRuntime));
        // The refused wait gave the lock back.
        drop(m.try_lock(cx).unwrap());
        let g = m.lock(cx).unwrap();
        assert_eq!(cv.wait_timeout(cx, g, Some(ms(1))).err(), Some(LockError::ForeignRuntime));
        drop(m.try_lock(cx).unwrap());
        assert_eq!(cv.notify_one(cx), Err(LockError::ForeignRuntime));
        assert_eq!(cv.notify_all(cx), Err(LockError::ForeignRuntime));
        *d.lock().unwrap() = true;
    })
    .unwrap();
    b.run().unwrap();
    assert!(*done.lock().unwrap());
}

#[test]
fn foreign_semaphore_is_refused_and_its_count_untouched() {
    let mut a = Runtime::simulated(1);
    let s = Arc::new(a.create_semaphore(SemSpec::new("s", 1)).unwrap());
    let mut b = Runtime::simulated(1);
    let s2 = s.clone();
    b.spawn(ThreadSpec::new("t"), move |cx| {
        assert_eq!(s2.procure(cx), Err(LockError::ForeignRuntime));
        assert_eq!(s2.try_procure(cx), Err(LockError::ForeignRuntime));
        assert_eq!(s2.procure_timeout(cx, ms(1)), Err(LockError::ForeignRuntime));
        assert_eq!(s2.vacate(cx), Err(LockError::ForeignRuntime));
    })
    .unwrap();
    b.run().unwrap();
    // At home the count is still exactly one.
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let v = seen.clone();
    a.spawn(ThreadSpec::new("t"), move |cx| {
        let mut v = v.lock().unwrap();
        v.push(s.try_procure(cx));
        v.push(s.try_procure(cx));
    })
    .unwrap();
    a.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), [Ok(()), Err(LockError::WouldBlock)]);
}

#[test]
fn foreign_set_is_refused() {
    let mut a = Runtime::simulated(1);
    let set_a = a.create_set("a", 0).unwrap();
    let mut b = Runtime::simulated(1);
    let set_b = b.create_set("b", 0).unwrap();
    // Same index, different runtimes: never equal.
    assert_eq!(set_a.index(), set_b.index());
    assert_ne!(set_a, set_b);
    let t = b
        .spawn(ThreadSpec::new("t"), move |cx| {
            assert_eq!(cx.set_members(set_a), Err(Error::ForeignSet(set_a)));
            assert_eq!(cx.add_to_set(set_a, cx.id()), Err(Error::ForeignSet(set_a)));
            assert_eq!(cx.set_cpu_time(set_a), Err(Error::ForeignSet(set_a)));
            assert_eq!(cx.budget_remaining(set_a), Err(Error::ForeignSet(set_a)));
            assert_eq!(cx.set_members(set_b), Ok(vec![]));
        })
        .unwrap();
    assert_eq!(b.add_to_set(set_a, t), Err(Error::ForeignSet(set_a)));
    assert_eq!(b.set_budget(set_a, Budget::new(ms(1))), Err(Error::ForeignSet(set_a)));
    assert_eq!(b.arm_set_timer(set_a, ms(1), |_| {}), Err(Error::ForeignSet(set_a)));
    let out = b.run().unwrap();
    assert_eq!(out.threads[0].outcome, Some(tempi::ThreadOutcome::Completed));
}

/// A thread id of another runtime never names a local thread, even one with the same slot
/// and generation.
#[test]
fn foreign_thread_id_is_refused_rather_than_aliased() {
    let mut a = Runtime::simulated(1);
    let ta = a.spawn(ThreadSpec::new("a").sporadic(Duration::ZERO), |_| {}).unwrap();
    let mut b = Runtime::simulated(1);
    let tb = b.spawn(ThreadSpec::new("b").sporadic(Duration::ZERO).max_jobs(1), |_| {}).unwrap();
    assert_eq!((ta.index(), format!("{ta:?}")), (tb.index(), format!("{tb:?}")));
    assert_ne!(ta, tb);
    let seen = Arc::new(StdMutex::new(Vec::new()));
    let v = seen.clone();
    b.spawn(ThreadSpec::new("user"), move |cx| {
        let mut v = v.lock().unwrap();
        v.push(cx.release(ta));
        v.push(cx.join(ta).map(|_| ()));
        v.push(cx.thread_cpu_time(ta).map(|_| ()));
        v.push(cx.set_of(ta).map(|_| ()));
        v.push(cx.arm_thread_timer(ta, ms(1), |_| {}));
        v.push(cx.create_mutex((), LockSpec::new("m").protocol("pcp").users(&[ta])).map(|_| ()));
        // The local thread of the same slot is still there.
        v.push(cx.release(tb));
    })
    .unwrap();
    let from_event = Arc::new(StdMutex::new(None));
    let e = from_event.clone();
    b.add_timer(tempi::TimerSpec::at(tempi::Time::ZERO), move |ev| *e.lock().unwrap() = Some(ev.release(ta))).unwrap();
    let set = b.create_set("s", 0).unwrap();
    assert_eq!(b.add_to_set(set, ta), Err(Error::ForeignThread(ta)));
    assert_eq!(b.arm_thread_timer(ta, ms(1), |_| {}), Err(Error::ForeignThread(ta)));
    assert_eq!(
        b.create_mutex((), LockSpec::new("m").protocol("pcp").users(&[ta])).err(),
        Some(Error::ForeignThread(ta))
    );
    let out = b.run().unwrap();
    let f = Err(Error::ForeignThread(ta));
    assert_eq!(*seen.lock().unwrap(), [f.clone(), f.clone(), f.clone(), f.clone(), f.clone(), f.clone(), Ok(())]);
    assert_eq!(*from_event.lock().unwrap(), Some(f));
    // The local sporadic thread was released once, by its own id only.
    assert_eq!(out.thread(tb).unwrap().stats.completed, 1);
    assert!(out.thread(ta).is_none());
}

#[test]
fn runtime_limits_on_ids_are_checked_at_creation() {
    type Sim = Runtime<tempi::clock::VirtualClock>;
    // A runtime numbers at most 2^20 thread slots and 2^20 set slots, over all its CPUs.
    assert!(Sim::new(Config::new(1).max_threads(1 << 20)).is_ok());
    assert!(Sim::new(Config::new(2).max_threads(1 << 19)).is_ok());
    assert!(matches!(Sim::new(Config::new(2).max_threads((1 << 19) + 1)), Err(Error::InvalidConfig(_))));
    assert!(matches!(Sim::new(Config::new(1).max_sets((1 << 20) + 1)), Err(Error::InvalidConfig(_))));
    assert!(matches!(Sim::new(Config::new(usize::MAX)), Err(Error::InvalidConfig(_))));
}
