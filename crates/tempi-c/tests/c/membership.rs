//! Set membership from a running C thread (`membership.c`: `tempi_add_to_set`,
//! `tempi_remove_from_set`), checked line for line against the same scenario through the Rust
//! API (`Ctx::add_to_set`, `Ctx::remove_from_set`), in virtual time: job records, thread and
//! set summaries.

use std::fmt::Write as _;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::trace::report::jobs;
use tempi::{Budget, Error, Runtime, ThreadSpec, Time};

use super::support::{build_c, run, scratch};

/// A membership call's answer as `tempi_status_str` names it.
fn status(r: Result<(), Error>) -> &'static str {
    match r {
        Ok(()) => "TEMPI_OK",
        Err(Error::AlreadyInSet { .. } | Error::NotInSet { .. }) => "TEMPI_REFUSED",
        Err(e) => panic!("unexpected: {e}"),
    }
}

/// What `membership.c` prints, made through the Rust API.
fn membership_in_rust() -> String {
    let ms = Duration::from_millis;
    let log = Arc::new(Mutex::new(String::new()));
    let mut rt = Runtime::simulated(1);
    let worker = rt.spawn(ThreadSpec::new("worker").priority(1), move |cx| cx.work(ms(8))).unwrap();
    let pool = rt.create_set("pool", 0).unwrap();
    rt.set_budget(pool, Budget::deferrable_server(ms(2), ms(10))).unwrap();
    let other = rt.create_set("other", 0).unwrap();
    let l = log.clone();
    rt.spawn(ThreadSpec::new("manager").priority(2), move |cx| {
        let say = |what: &str, r: Result<(), Error>| {
            writeln!(l.lock().unwrap(), "{}: {what}: {}", cx.now().as_nanos(), status(r)).unwrap();
        };
        cx.sleep_until(Time::from_millis(1));
        say("add worker to pool", cx.add_to_set(pool, worker));
        say("add worker to other", cx.add_to_set(other, worker));
        cx.sleep_until(Time::from_millis(11));
        let used = cx.set_cpu_time(pool).unwrap();
        writeln!(l.lock().unwrap(), "TEMPI_OK: pool clock {}", used.as_nanos()).unwrap();
        say("remove worker from pool", cx.remove_from_set(pool, worker));
        say("remove worker from pool", cx.remove_from_set(pool, worker));
        say("add manager to other", cx.add_to_set(other, cx.id()));
        cx.work(ms(1));
    })
    .unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    let mut s = log.lock().unwrap().clone();
    let ns = |t: Option<Time>| t.map_or(u64::MAX, Time::as_nanos);
    for j in jobs(&out) {
        writeln!(
            s,
            "job {}#{} release {} start {} finish {} preemptions {}",
            j.thread,
            j.job,
            j.release.as_nanos(),
            ns(j.start),
            ns(j.finish),
            j.preemptions
        )
        .unwrap();
    }
    for t in &out.threads {
        writeln!(
            s,
            "thread {}: cpu {}, released {}, completed {}, preemptions {}",
            t.name,
            t.stats.cpu_time.as_nanos(),
            t.stats.released,
            t.stats.completed,
            t.stats.preemptions
        )
        .unwrap();
    }
    for set in &out.sets {
        writeln!(
            s,
            "set {}: cpu {}, exhaustions {}, replenishments {}, members {}",
            set.name,
            set.cpu_time.as_nanos(),
            set.exhaustions,
            set.replenishments,
            set.members.len()
        )
        .unwrap();
    }
    s
}

#[test]
fn set_membership_from_a_c_thread_matches_the_rust_api() {
    let expected = membership_in_rust();
    // What the scenario is for: the pool's budget held the worker from 3 ms to its refill at
    // 10 ms while it was a member, and not after its removal at 11 ms.
    assert!(expected.contains("1000000: add worker to other: TEMPI_REFUSED\n"), "{expected}");
    assert!(expected.contains("11000000: remove worker from pool: TEMPI_REFUSED\n"), "{expected}");
    // At 11 ms the pool has run its worker from 1 ms to 3 ms and from 10 ms to 11 ms.
    assert!(expected.contains("TEMPI_OK: pool clock 3000000\n"), "{expected}");
    assert!(expected.contains("job worker#0 release 0 start 0 finish 16000000 preemptions 2\n"), "{expected}");
    assert!(expected.contains("set pool: cpu 3000000, exhaustions 1, replenishments 1, members 0\n"), "{expected}");
    assert!(expected.contains("set other: cpu 1000000, exhaustions 0, replenishments 0, members 0\n"), "{expected}");
    let dir = scratch("membership");
    let exe = build_c("crates/tempi-c/tests/c/membership.c", &dir);
    assert_eq!(run(&mut Command::new(&exe)), expected);
}
