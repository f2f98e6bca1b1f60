//! Ids of a dropped runtime are refused by a later runtime that takes up its id tag. The
//! 4 097th runtime made in a process, the first runtime being dropped, has the first one's
//! 12-bit tag: its first thread has the same index (and its first set the same slot word) as
//! the first runtime's, and it must still refuse the first runtime's ids at every entry
//! point. Its threads' generations start above every generation the first runtime used, so
//! their ids differ in their generation; a set id carries its runtime's whole identity.
//!
//! The test runs in a process of its own (this test program run again for it alone, with
//! `TEMPI_FOREIGN_IDS_CHILD` set): no other test may make runtimes between the first and the
//! 4 097th, so that tags are handed out in turn and the 4 097th gets the first's.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::clock::VirtualClock;
use tempi::message::{Message, MsgError};
use tempi::{Budget, Config, Error, Runtime, ThreadOutcome, ThreadSpec, Time, TimerSpec};

fn small() -> Config {
    Config::new(1).max_threads(2).max_sets(1).max_timers(2).trace_capacity(0).message_pool(2).max_locks(1)
}

const CHILD: &str = "TEMPI_FOREIGN_IDS_CHILD";

#[test]
fn the_4097th_runtime_refuses_the_ids_of_the_first() {
    let path = module_path!().split_once("::").map_or("", |(_, rest)| rest);
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([&format!("{path}::alone"), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "stdout: {stdout}\nstderr: {stderr}");
    assert!(stdout.contains("1 passed"), "the case ran: {stdout}");
}

/// The case itself, in the child process only.
#[test]
fn alone() {
    if std::env::var_os(CHILD).is_some() {
        the_4097th_runtime_case();
    }
}

fn the_4097th_runtime_case() {
    let ms = Duration::from_millis;
    // Two CPUs, so that A also has a thread numbered as a thread of CPU 1 of a real-time
    // runtime with two CPUs is (index 2, the first slot of CPU 1's kernel).
    let mut a = Runtime::<VirtualClock>::new(Config::new(2).max_threads(2).max_sets(1).trace_capacity(0)).unwrap();
    let a_thread = a.spawn(ThreadSpec::new("a").sporadic(Duration::ZERO), |_| {}).unwrap();
    a.spawn(ThreadSpec::new("a1").sporadic(Duration::ZERO), |_| {}).unwrap();
    let a_of_cpu1 = a.spawn(ThreadSpec::new("a2").sporadic(Duration::ZERO).cpu(1), |_| {}).unwrap();
    assert_eq!(a_of_cpu1.index(), 2);
    let a_set = a.create_set("a", 0).unwrap();
    // Its ids outlive it.
    drop(a);
    // Only one runtime is alive at any time.
    for _ in 0..4095 {
        drop(Runtime::<VirtualClock>::new(small()).unwrap());
    }
    let mut b = Runtime::<VirtualClock>::new(small()).unwrap();
    // B's first thread and set take the slots A's took, under A's tag: the thread's
    // generation and the set's runtime tell them apart.
    let victim = b.spawn(ThreadSpec::new("victim").sporadic(Duration::ZERO).max_jobs(1).priority(1), |_| {}).unwrap();
    let b_set = b.create_set("b", 0).unwrap();
    assert_eq!((victim.index(), format!("{b_set:?}")), (a_thread.index(), format!("{a_set:?}")));
    assert_eq!((format!("{a_thread:?}"), format!("{victim:?}")), ("T0.0".to_string(), "T0.1".to_string()));
    assert_ne!(victim, a_thread);
    assert_ne!(b_set, a_set);

    // Before the run.
    assert_eq!(b.add_to_set(b_set, a_thread), Err(Error::ForeignThread(a_thread)));
    assert_eq!(b.add_to_set(a_set, victim), Err(Error::ForeignSet(a_set)));
    assert_eq!(b.set_budget(a_set, Budget::new(ms(1))), Err(Error::ForeignSet(a_set)));
    assert!(matches!(b.arm_set_timer(a_set, ms(1), |_| {}), Err(Error::ForeignSet(s)) if s == a_set));
    assert!(matches!(b.arm_thread_timer(a_thread, ms(1), |_| {}), Err(Error::ForeignThread(t)) if t == a_thread));

    // From a timing event.
    let from_event = Arc::new(Mutex::new(None));
    let seen = from_event.clone();
    b.add_timer(TimerSpec::at(Time::from_millis(1)), move |ev| *seen.lock().unwrap() = Some(ev.release(a_thread)))
        .unwrap();

    // From a thread of B.
    let from_thread = Arc::new(Mutex::new(Vec::new()));
    let log = from_thread.clone();
    b.spawn(ThreadSpec::new("checker").priority(2), move |cx| {
        let mut log = log.lock().unwrap();
        let t = Err(Error::ForeignThread(a_thread));
        let s = Err(Error::ForeignSet(a_set));
        log.push(("release", cx.release(a_thread) == t));
        log.push(("set_priority_of", cx.set_priority_of(a_thread, 9) == t));
        log.push(("join", cx.join(a_thread).map(|_| ()) == t));
        log.push(("add_to_set thread", cx.add_to_set(b_set, a_thread) == t));
        log.push(("add_to_set set", cx.add_to_set(a_set, cx.id()) == s));
        log.push(("remove_from_set thread", cx.remove_from_set(b_set, a_thread) == t));
        log.push(("remove_from_set set", cx.remove_from_set(a_set, victim) == s));
        log.push(("set_contains set", cx.set_contains(a_set, victim) == Err(Error::ForeignSet(a_set))));
        log.push(("set_contains thread", cx.set_contains(b_set, a_thread) == Err(Error::ForeignThread(a_thread))));
        log.push(("arm_thread_timer", cx.arm_thread_timer(a_thread, ms(1), |_| {}) == t));
        log.push(("arm_set_timer", cx.arm_set_timer(a_set, ms(1), |_| {}) == s));
        log.push(("set_of", cx.set_of(a_thread) == Err(Error::ForeignThread(a_thread))));
        log.push(("set_members", cx.set_members(a_set) == Err(Error::ForeignSet(a_set))));
        log.push(("thread_cpu_time", cx.thread_cpu_time(a_thread) == Err(Error::ForeignThread(a_thread))));
        log.push(("set_thread_cpu_time", cx.set_thread_cpu_time(a_thread, ms(1)) == t));
        log.push(("set_cpu_time", cx.set_cpu_time(a_set) == Err(Error::ForeignSet(a_set))));
        log.push(("set_set_cpu_time", cx.set_set_cpu_time(a_set, ms(1)) == s));
        log.push(("set_budget", cx.set_budget(a_set, Budget::new(ms(1))) == s));
        log.push(("budget_remaining", cx.budget_remaining(a_set) == Err(Error::ForeignSet(a_set))));
        log.push(("budget_exhausted", cx.budget_exhausted(a_set) == Err(Error::ForeignSet(a_set))));
        log.push(("replenish_budget", cx.replenish_budget(a_set, ms(1)) == s));
        log.push(("add_budget", cx.add_budget(a_set, 1) == s));
        log.push(("empty_set", cx.empty_set(a_set) == s));
        log.push(("destroy_set", cx.destroy_set(a_set) == s));
        let no_such = Err(MsgError::NoSuchThread(a_thread));
        log.push(("send", cx.send(a_thread, Message::new(1, 0, 0)) == no_such));
        log.push(("call", cx.call(a_thread, Message::new(1, 0, 0)).map(|_| ()) == no_such));
        log.push(("send_after", cx.send_after(ms(1), a_thread, Message::new(1, 0, 0)).map(|_| ()) == no_such));
        log.push(("kill", cx.kill(a_thread) == t));
        // B's own thread in the same slot is still there to be released.
        log.push(("own release", cx.release(victim).is_ok()));
        drop(log);
        // Past the timing event's instant.
        cx.work(ms(2));
    })
    .unwrap();
    let out = b.run_until(Time::from_millis(5)).unwrap();

    let refused: Vec<(&str, bool)> = from_thread.lock().unwrap().clone();
    let not_refused: Vec<&str> = refused.iter().filter(|(_, ok)| !ok).map(|(name, _)| *name).collect();
    assert_eq!(refused.len(), 29);
    assert_eq!(not_refused, Vec::<&str>::new());
    assert_eq!(*from_event.lock().unwrap(), Some(Err(Error::ForeignThread(a_thread))));
    // Nothing B did with A's ids touched B's thread of the same slot: it ran its one job.
    let v = out.thread(victim).unwrap();
    assert_eq!(v.outcome, Some(ThreadOutcome::Completed));
    assert_eq!(v.stats.completed, 1);
    assert_eq!(v.priority, 1);
    assert!(out.thread(a_thread).is_none());
    assert_eq!(out.sets[0].members, Vec::new());

    // The 8 193rd runtime, in real time with one kernel per CPU, under A's (and B's) tag
    // again: an id that names a thread of the other CPU travels to it only if it is of this
    // runtime.
    for _ in 0..4095 {
        drop(Runtime::<VirtualClock>::new(small()).unwrap());
    }
    let mut c = Runtime::<tempi::clock::RealClock>::new(Config::new(2).max_threads(2).trace_capacity(0)).unwrap();
    c.spawn(ThreadSpec::new("filler").cpu(0), |_| {}).unwrap();
    let far = c.spawn(ThreadSpec::new("far").cpu(1), move |cx| cx.sleep(ms(30))).unwrap();
    assert_eq!(far.index(), a_of_cpu1.index());
    assert_eq!((format!("{a_of_cpu1:?}"), format!("{far:?}")), ("T2.0".to_string(), "T2.2".to_string()));
    let remote = Arc::new(Mutex::new(Vec::new()));
    let log = remote.clone();
    c.spawn(ThreadSpec::new("checker").cpu(0), move |cx| {
        cx.sleep(ms(5));
        let mut log = log.lock().unwrap();
        log.push(cx.kill(a_of_cpu1));
        log.push(cx.release(a_of_cpu1));
        log.push(cx.set_priority_of(a_of_cpu1, 7));
        log.push(cx.join(a_of_cpu1).map(|_| ()));
    })
    .unwrap();
    let out = c.run().unwrap();
    assert_eq!(*remote.lock().unwrap(), vec![Err(Error::ForeignThread(a_of_cpu1)); 4]);
    assert_eq!(out.thread(far).unwrap().outcome, Some(ThreadOutcome::Completed));

    // As many runtimes alive at once as there are tags, and no more: the next is refused
    // with an error, and one dropped makes room.
    let mut alive = Vec::new();
    let refused = loop {
        match Runtime::<VirtualClock>::new(small()) {
            Ok(rt) => alive.push(rt),
            Err(e) => break e,
        }
        assert!(alive.len() <= 4096);
    };
    assert_eq!((alive.len(), refused), (4096, Error::TooManyRuntimes { max: 4096 }));
    alive.pop();
    assert!(Runtime::<VirtualClock>::new(small()).is_ok());
}
