//! Timing events, execution-time timers and servers from C (`timers.c`), checked line for
//! line against the same two scenarios through the Rust API, in virtual time.

use std::fmt::Write as _;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::{Budget, RunOutcome, Runtime, SetId, ThreadId, ThreadOutcome, ThreadSpec, Time, TimerSpec};

use super::support::{build_c, run, scratch};

fn summary(out: &RunOutcome, s: &mut String) {
    for t in &out.threads {
        let end = match t.outcome {
            None => "running",
            Some(ThreadOutcome::Completed) => "completed",
            Some(ThreadOutcome::Panicked(_)) => "panicked",
            Some(ThreadOutcome::Killed) => "killed",
            Some(ThreadOutcome::NotStarted(_)) => "not-started",
        };
        writeln!(
            s,
            "thread {}: cpu {}, released {}, completed {}, end {end}",
            t.name,
            t.stats.cpu_time.as_nanos(),
            t.stats.released,
            t.stats.completed
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
}

/// What `timers.c` prints, made through the Rust API.
fn timers_in_rust() -> String {
    let ms = Duration::from_millis;
    let log = Arc::new(Mutex::new(String::new()));
    let say = |log: &Arc<Mutex<String>>, what: &str, at: Time| {
        writeln!(log.lock().unwrap(), "{}: {what}", at.as_nanos()).unwrap()
    };

    // Run 1.
    let mut rt = Runtime::simulated(1);
    let on_demand =
        rt.spawn(ThreadSpec::new("on-demand").sporadic(Duration::ZERO).priority(3), move |cx| cx.work(ms(1))).unwrap();
    let background = rt.spawn(ThreadSpec::new("background").priority(1), move |cx| cx.work(ms(10))).unwrap();
    let spare = rt.spawn(ThreadSpec::new("spare").priority(2), move |cx| cx.work(ms(6))).unwrap();
    let ids: Arc<Mutex<Option<(SetId, SetId)>>> = Arc::new(Mutex::new(None));
    let (l, sets) = (log.clone(), ids.clone());
    rt.spawn(ThreadSpec::new("watch").priority(4), move |cx| {
        let (ds, ss) = sets.lock().unwrap().unwrap();
        cx.sleep_until(Time::from_millis(11));
        let ns = |d: Duration| d.as_nanos();
        let line = format!(
            "watch: ds left {}, ss left {}, background cpu {}, spare cpu {}",
            ns(cx.budget_remaining(ds).unwrap()),
            ns(cx.budget_remaining(ss).unwrap()),
            ns(cx.thread_cpu_time(background).unwrap()),
            ns(cx.thread_cpu_time(spare).unwrap())
        );
        say(&l, &line, cx.now());
        cx.add_budget(ds, 1_000_000).unwrap();
        let l2 = l.clone();
        cx.arm_thread_timer(background, ms(4), move |ev| {
            say(&l2, "background reached 4 ms of cpu (armed by watch)", ev.now())
        })
        .unwrap();
        cx.sleep_until(Time::from_millis(25));
        cx.replenish_budget(ss, ms(1)).unwrap();
        say(&l, "watch: ss replenished to 1 ms", cx.now());
    })
    .unwrap();
    let ds = rt.create_set("ds", 0).unwrap();
    rt.set_budget(ds, Budget::deferrable_server(ms(2), ms(10))).unwrap();
    rt.add_to_set(ds, background).unwrap();
    let ss = rt.create_set("ss", 0).unwrap();
    rt.set_budget(ss, Budget::sporadic_server(ms(3), ms(10))).unwrap();
    rt.add_to_set(ss, spare).unwrap();
    *ids.lock().unwrap() = Some((ds, ss));
    let l = log.clone();
    rt.add_timer(TimerSpec::every(ms(5)).starting(Time::from_millis(2)), move |ev| {
        say(&l, "tick: release on-demand", ev.now());
        ev.release(on_demand).unwrap();
        if ev.now() >= Time::from_millis(17) {
            ev.cancel();
            say(&l, "tick: cancelled", ev.now());
        }
    })
    .unwrap();
    let l = log.clone();
    rt.add_timer(TimerSpec::at(Time::from_millis(4)), move |ev| say(&l, "once: at 4 ms", ev.now())).unwrap();
    let l = log.clone();
    rt.arm_thread_timer(background, ms(1), move |ev| say(&l, "background reached 1 ms of cpu", ev.now())).unwrap();
    let l = log.clone();
    rt.arm_set_timer(ds, ms(3), move |ev| say(&l, "ds members reached 3 ms of cpu", ev.now())).unwrap();
    let out = rt.run_until(Time::from_millis(40)).unwrap();
    let mut s = log.lock().unwrap().clone();
    s.push_str("run 1 (fp)\n");
    summary(&out, &mut s);

    // Run 2.
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    rt.spawn(ThreadSpec::new("control").periodic(ms(5)).wcet(ms(2)), move |cx| cx.work(ms(2))).unwrap();
    let hog: ThreadId = rt
        .spawn(ThreadSpec::new("hog").deadline(ms(1)), move |cx| loop {
            cx.work(ms(1));
        })
        .unwrap();
    let cbs = rt.create_set("cbs", 0).unwrap();
    rt.set_budget(cbs, Budget::constant_bandwidth_server(ms(2), ms(10))).unwrap();
    rt.add_to_set(cbs, hog).unwrap();
    let out = rt.run_until(Time::from_millis(30)).unwrap();
    s.push_str("run 2 (edf)\n");
    summary(&out, &mut s);
    s
}

#[test]
fn timing_events_execution_time_timers_and_servers_from_c_match_the_rust_api() {
    let expected = timers_in_rust();
    // What the scenario is for: the event cancels itself at 17 ms after four releases, the
    // servers were exhausted and replenished, the periodic thread beside the CBS kept its
    // deadlines.
    assert!(expected.contains("17000000: tick: cancelled\n"), "{expected}");
    assert!(expected.contains("thread on-demand: cpu 4000000, released 4, completed 4"), "{expected}");
    assert!(expected.contains("thread control: cpu 12000000, released 6, completed 6"), "{expected}");
    let dir = scratch("timers");
    let exe = build_c("crates/tempi-c/tests/c/timers.c", &dir);
    assert_eq!(run(&mut Command::new(&exe)), expected);
}
