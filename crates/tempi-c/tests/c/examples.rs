//! The C examples of `examples/c/`, built with the system compiler and run; each one's
//! virtual-time output is checked against the same scenario through the Rust API.

use std::fmt::Write as _;
use std::process::Command;
use std::time::Duration;

use tempi::trace::report::{jobs, to_json};
use tempi::{RunOutcome, Runtime, ThreadOutcome, ThreadSpec, Time};

use super::support::{build_c, run, scratch};

/// The lines the C examples print: every job, each thread's totals, the misses.
fn listing(out: &RunOutcome) -> String {
    let ns = |t: Option<Time>| t.map_or(u64::MAX, Time::as_nanos);
    let mut s = String::new();
    for j in jobs(out) {
        writeln!(
            s,
            "job {}#{} release {} start {} finish {} deadline {} missed {}",
            j.thread,
            j.job,
            j.release.as_nanos(),
            ns(j.start),
            ns(j.finish),
            ns(j.deadline),
            u32::from(j.missed)
        )
        .unwrap();
    }
    for t in &out.threads {
        let worst = t.stats.response_max.map_or(0, |d| d.as_nanos());
        writeln!(
            s,
            "thread {} released {} completed {} misses {} worst {} end {}",
            t.name,
            t.stats.released,
            t.stats.completed,
            t.stats.misses,
            worst,
            end_code(t.outcome.as_ref())
        )
        .unwrap();
    }
    writeln!(s, "misses {}", out.total_misses()).unwrap();
    s
}

/// A thread's end as `tempi_thread_end` numbers it.
fn end_code(outcome: Option<&ThreadOutcome>) -> u32 {
    match outcome {
        None => 0,
        Some(ThreadOutcome::Completed) => 1,
        Some(ThreadOutcome::Panicked(_)) => 2,
        Some(ThreadOutcome::Killed) => 3,
        Some(ThreadOutcome::NotStarted(_)) => 4,
    }
}

#[test]
fn rm_textbook_from_c_matches_the_rust_api() {
    let ms = Duration::from_millis;
    let mut rt = Runtime::simulated(1);
    for (name, period, wcet, priority) in [("t1", 4, 1, 3), ("t2", 6, 2, 2), ("t3", 12, 3, 1)] {
        let spec = ThreadSpec::new(name).periodic(ms(period)).wcet(ms(wcet)).priority(priority);
        rt.spawn(spec, move |cx| cx.work(ms(wcet))).unwrap();
    }
    let rust = rt.run_until(Time::from_millis(24)).unwrap();
    assert_eq!(rust.total_misses(), 0);

    let dir = scratch("rm_textbook");
    let exe = build_c("examples/c/rm_textbook.c", &dir);
    let report = dir.join("report.json");
    let printed = run(Command::new(&exe).arg(&report));
    assert_eq!(printed, listing(&rust));
    assert!(printed.contains("job t3#0 release 0 start 3000000 finish 10000000"), "{printed}");
    assert_eq!(std::fs::read_to_string(&report).unwrap(), to_json(&rust), "the C run's report differs");
}

#[test]
fn rm_textbook_links_with_pkg_config_against_the_shared_library() {
    super::support::build_library();
    // The `tempi.pc` the build script wrote, with its library directory pointed at a copy of
    // this build's shared library under the installed name.
    let dir = scratch("rm_textbook_shared");
    std::fs::copy(super::support::test_lib_dir().join("libtempi_c_shared.so"), dir.join("libtempi_c.so")).unwrap();
    let pkg = run(Command::new("pkg-config")
        .args(["--cflags", "--libs", "tempi"])
        .arg(format!("--define-variable=libdir={}", dir.display()))
        .env("PKG_CONFIG_PATH", super::support::lib_dir()));
    let exe = dir.join("rm_textbook");
    let root = super::support::root();
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"])
        .arg(root.join("examples/c/rm_textbook.c"))
        .args(pkg.split_whitespace())
        .arg("-o")
        .arg(&exe));
    let ldd = run(Command::new("ldd").arg(&exe));
    assert!(ldd.contains("libtempi_c.so"), "{ldd}");
    assert!(run(&mut Command::new(&exe)).ends_with("misses 0\n"));
}

#[test]
fn a_runaway_c_thread_killed_by_its_budget_returns_cleanly_as_through_the_rust_api() {
    use std::sync::{Arc, Mutex};
    let (us, ms) = (Duration::from_micros, Duration::from_millis);
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("control").periodic(ms(5)).wcet(ms(1)).priority(2), move |cx| cx.work(ms(1))).unwrap();
    let steps = Arc::new(Mutex::new(0u32));
    let counted = steps.clone();
    let hog = rt
        .spawn(ThreadSpec::new("runaway").priority(1), move |cx| loop {
            cx.work(us(100));
            *counted.lock().unwrap() += 1;
        })
        .unwrap();
    let sandbox = rt.create_set("sandbox", 0).unwrap();
    rt.add_to_set(sandbox, hog).unwrap();
    let events = Arc::new(Mutex::new(String::new()));
    let log = events.clone();
    let budget = tempi::Budget::new(ms(3)).action(tempi::policy::budget::Kill).on_event(move |e| {
        let what = if e.kind == tempi::BudgetEventKind::Replenished { "replenished" } else { "exhausted" };
        writeln!(
            log.lock().unwrap(),
            "budget {what} at {} consumed {} remaining {}",
            e.at.as_nanos(),
            e.consumed.as_nanos(),
            e.remaining.as_nanos()
        )
        .unwrap();
    });
    rt.set_budget(sandbox, budget).unwrap();
    let rust = rt.run_until(Time::from_millis(20)).unwrap();
    assert_eq!(rust.thread(hog).unwrap().outcome, Some(ThreadOutcome::Killed));
    let expected = format!(
        "{}runaway made {} steps, then got TEMPI_INTERRUPTED\n{}",
        events.lock().unwrap(),
        steps.lock().unwrap(),
        listing(&rust)
    );

    let dir = scratch("runaway");
    let exe = build_c("examples/c/runaway.c", &dir);
    let printed = run(&mut Command::new(&exe));
    assert_eq!(printed, expected);
    assert!(printed.contains("thread runaway released 1 completed 0 misses 0 worst 0 end 3\n"), "{printed}");
}

/// The inversion scenario through the Rust API under `protocol`.
fn inversion_in_rust(protocol: &str) -> RunOutcome {
    use std::sync::Arc;
    use tempi::sync::LockSpec;
    let ms = Duration::from_millis;
    let mut rt = Runtime::simulated(1);
    let object = Arc::new(rt.create_mutex((), LockSpec::new("object").protocol(protocol)).unwrap());
    let o = object.clone();
    let high = ThreadSpec::new("high").periodic(ms(20)).phase(ms(1)).deadline(ms(5)).priority(3);
    rt.spawn(high, move |cx| {
        let g = o.lock(cx).unwrap();
        cx.work(ms(1));
        drop(g);
    })
    .unwrap();
    let medium = ThreadSpec::new("medium").periodic(ms(20)).phase(ms(2)).priority(2);
    rt.spawn(medium, move |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("low").periodic(ms(20)).priority(1), move |cx| {
        let g = object.lock(cx).unwrap();
        cx.work(ms(4));
        drop(g);
        cx.work(ms(1));
    })
    .unwrap();
    rt.run_until(Time::from_millis(40)).unwrap()
}

#[test]
fn priority_inversion_from_c_under_bp_and_fixed_by_inheritance_matches_the_rust_api() {
    let dir = scratch("inversion");
    let exe = build_c("examples/c/inversion.c", &dir);
    for (protocol, high_worst) in [("bp", 9_000_000), ("bpi", 4_000_000)] {
        let rust = inversion_in_rust(protocol);
        assert_eq!(rust.thread_named("high").unwrap().stats.response_max, Some(Duration::from_nanos(high_worst)));
        let printed = run(Command::new(&exe).arg(protocol));
        assert_eq!(printed, listing(&rust), "protocol {protocol}");
    }
    let unknown = Command::new(&exe).arg("lottery").output().unwrap();
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).starts_with("tempi_runtime_create_mutex: TEMPI_UNKNOWN_NAME"));
}

#[test]
fn the_cpp_example_builds_with_gpp_and_runs_as_the_rust_api_does() {
    let ms = Duration::from_millis;
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    for (name, period, wcet) in [("control", 5, 2), ("logger", 10, 5)] {
        rt.spawn(ThreadSpec::new(name).periodic(ms(period)).wcet(ms(wcet)), move |cx| cx.work(ms(wcet))).unwrap();
    }
    let rust = rt.run_until(Time::from_millis(100)).unwrap();
    let mut expected = String::new();
    for t in &rust.threads {
        writeln!(expected, "{}: {} jobs, {} misses", t.name, t.stats.completed, t.stats.misses).unwrap();
    }
    writeln!(expected, "misses {}", rust.total_misses()).unwrap();
    let dir = scratch("periodic_cpp");
    let exe = super::support::build_cpp("examples/c/periodic.cpp", &dir);
    assert_eq!(run(&mut Command::new(&exe)), expected);
}

#[test]
fn the_first_program_of_the_guide_builds_and_runs() {
    let guide = std::fs::read_to_string(super::support::root().join("docs/C-API.md")).unwrap();
    let start = guide.find("```c\n").expect("the guide has a C program") + 5;
    let end = start + guide[start..].find("```").unwrap();
    let dir = scratch("guide");
    let src = dir.join("first.c");
    std::fs::write(&src, &guide[start..end]).unwrap();
    let exe = build_c(src.to_str().unwrap(), &dir);
    let printed = run(Command::new(&exe).current_dir(&dir));
    assert_eq!(printed, "misses 0\n");
    assert!(std::fs::read_to_string(dir.join("gantt.svg")).unwrap().starts_with("<svg"));
}

#[test]
fn admission_with_a_nack_and_a_resubmission_from_c_matches_the_rust_api() {
    use std::sync::{Arc, Mutex};
    use tempi::admission::{Admission, AdmissionSpec, JobRequest, Refused};
    let ms = Duration::from_millis;
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine("tree")).unwrap();
    let printed = Arc::new(Mutex::new(String::new()));
    let (a, log) = (adm.clone(), printed.clone());
    rt.spawn(ThreadSpec::new("submitter").deadline(Duration::from_nanos(1)), move |cx| {
        let deadline = Time::from_millis(10);
        let idle = a.idle_before(cx, deadline).unwrap();
        writeln!(log.lock().unwrap(), "idle before {}: {}", deadline.as_nanos(), idle.as_nanos()).unwrap();
        let submit = |name: &str, wcet: Duration, work: Duration| {
            let answer = a.admit(cx, JobRequest::new(name, wcet, deadline, move |cx| cx.work(work)));
            let (status, admitted, cpu, idle) = match &answer {
                Ok(ok) => ("TEMPI_OK", 1, ok.cpu, ok.idle),
                Err(Refused::Nack(n)) => ("TEMPI_NACK", 0, n.cpu, n.idle),
                Err(e) => panic!("{e}"),
            };
            writeln!(
                log.lock().unwrap(),
                "admit {name} wcet {}: {status} admitted {admitted} cpu {cpu} idle {}",
                wcet.as_nanos(),
                idle.as_nanos()
            )
            .unwrap();
            answer
        };
        submit("first", ms(6), ms(5)).unwrap();
        let Err(Refused::Nack(nack)) = submit("big", ms(5), ms(4)) else { panic!("big fits") };
        submit("big", nack.idle, ms(4)).unwrap();
    })
    .unwrap();
    let rust = rt.run().unwrap();
    assert_eq!(rust.total_misses(), 0);
    let mut expected = printed.lock().unwrap().clone();
    for d in adm.decisions() {
        writeln!(
            expected,
            "decision {} at {} cpu {} target {} wcet {} deadline {} idle {} accepted {}",
            d.request,
            d.time.as_nanos(),
            d.cpu,
            d.target_cpu,
            d.wcet.as_nanos(),
            d.deadline.as_nanos(),
            d.idle.as_nanos(),
            u32::from(d.accepted)
        )
        .unwrap();
    }
    expected.push_str(&listing(&rust));

    let dir = scratch("admission");
    let exe = build_c("examples/c/admission.c", &dir);
    let printed = run(&mut Command::new(&exe));
    assert_eq!(printed, expected);
    assert!(printed.contains("admit big wcet 5000000: TEMPI_NACK admitted 0 cpu 0 idle 4000000\n"), "{printed}");
    assert!(printed.contains("admit big wcet 4000000: TEMPI_OK admitted 1 cpu 0 idle 4000000\n"), "{printed}");
    assert!(
        printed.contains("decision big at 0 cpu 0 target 0 wcet 5000000 deadline 10000000 idle 4000000 accepted 0\n")
    );
}

/// The ping-pong scenario of `examples/c/pingpong.c` through the Rust API, in virtual time:
/// what the C program prints.
fn pingpong_in_rust() -> String {
    use std::sync::atomic::{AtomicI64, Ordering};
    use std::sync::{Arc, Mutex};
    use tempi::message::{Handler, Message, Read};
    let us = Duration::from_micros;
    let printed = Arc::new(Mutex::new(String::new()));
    let total = Arc::new(AtomicI64::new(0));
    let sum = total.clone();
    let tally = Handler::new("tally", 1, 4, move |hcx, m| {
        let now = sum.fetch_add(m.value, Ordering::Relaxed) + m.value;
        hcx.reply(Message::new(m.id, now, 0));
    });
    let mut rt = Runtime::simulated(2);
    let log = printed.clone();
    let pong = rt
        .spawn(ThreadSpec::new("pong").cpu(1).mailbox(8), move |cx| loop {
            let m = cx.read(Read::Wait).unwrap();
            let log = |line: String| log.lock().unwrap().push_str(&line);
            if m.id == -1 {
                log(format!("pong: stop at {}\n", cx.now().as_nanos()));
                return;
            }
            if !m.expects_reply {
                log(format!("pong: note {} value {} at {}\n", m.id, m.value, cx.now().as_nanos()));
                continue;
            }
            cx.work(us(50));
            let t = tally.call(cx, Message::new(m.id, m.value, 0)).unwrap();
            cx.reply(Message::new(m.id, m.value * 10 + 1, 0)).unwrap();
            log(format!("pong: call {} total {} at {}\n", m.id, t.value, cx.now().as_nanos()));
        })
        .unwrap();
    let log = printed.clone();
    rt.spawn(ThreadSpec::new("ping").cpu(0), move |cx| {
        for i in 0..5 {
            cx.work(us(100));
            let r = cx.call(pong, Message::new(i, i, 0)).unwrap();
            writeln!(log.lock().unwrap(), "ping: call {i} answered {} at {}", r.value, cx.now().as_nanos()).unwrap();
        }
        for k in 0..3 {
            cx.send(pong, Message::new(100 + k, k, 0)).unwrap();
        }
        cx.send(pong, Message::new(-1, 0, 0)).unwrap();
        writeln!(log.lock().unwrap(), "ping: sent 3 notes and the stop at {}", cx.now().as_nanos()).unwrap();
    })
    .unwrap();
    let out = rt.run().unwrap();
    let mut s = printed.lock().unwrap().clone();
    for t in &out.threads {
        writeln!(
            s,
            "thread {} cpu {} completed {} end {}",
            t.name,
            t.cpu,
            t.stats.completed,
            end_code(t.outcome.as_ref())
        )
        .unwrap();
    }
    writeln!(s, "total {}", total.load(Ordering::Relaxed)).unwrap();
    s
}

#[test]
fn two_cpus_exchanging_messages_from_c_in_virtual_time_match_the_rust_api() {
    let expected = pingpong_in_rust();
    assert!(expected.contains("ping: call 4 answered 41 at "), "{expected}");
    let dir = scratch("pingpong");
    let exe = build_c("examples/c/pingpong.c", &dir);
    assert_eq!(run(&mut Command::new(&exe)), expected);
}

#[test]
fn two_cpus_exchanging_messages_from_c_in_real_time_deliver_every_message_in_order() {
    let dir = scratch("pingpong_real");
    let exe = build_c("examples/c/pingpong.c", &dir);
    let printed = run(Command::new(&exe).arg("real"));
    // Times vary on the real clock: the lines without them, thread by thread.
    let lines = |prefix: &str| -> Vec<String> {
        printed
            .lines()
            .filter(|l| l.starts_with(prefix))
            .map(|l| l.rsplit_once(" at ").map_or(l, |(head, _)| head).to_string())
            .collect()
    };
    let calls: Vec<String> = (0..5).map(|i| format!("ping: call {i} answered {}", i * 10 + 1)).collect();
    assert_eq!(lines("ping: call"), calls, "{printed}");
    let totals: Vec<String> =
        [0, 1, 3, 6, 10].iter().enumerate().map(|(i, t)| format!("pong: call {i} total {t}")).collect();
    assert_eq!(lines("pong: call"), totals, "{printed}");
    let notes: Vec<String> = (0..3).map(|k| format!("pong: note {} value {k}", 100 + k)).collect();
    assert_eq!(lines("pong: note"), notes, "{printed}");
    assert_eq!(lines("pong: stop"), ["pong: stop"], "{printed}");
    // Pong's lines come in the order it read the messages: every call before the notes, the
    // stop last.
    let pong: Vec<&str> = printed.lines().filter(|l| l.starts_with("pong:")).collect();
    assert_eq!(pong.len(), 9, "{printed}");
    assert!(pong[..5].iter().all(|l| l.starts_with("pong: call")) && pong[8].starts_with("pong: stop"), "{printed}");
    assert!(printed.contains("thread ping cpu 0 completed 1 end 1\n"), "{printed}");
    assert!(printed.contains("thread pong cpu 1 completed 1 end 1\n"), "{printed}");
    assert!(printed.ends_with("total 10\n"), "{printed}");
}

/// The scenario of `examples/c/spring.c` through the Rust API (`tempi::spring`), in virtual
/// time: what the C program prints.
fn spring_in_rust() -> String {
    use std::sync::{Arc, Mutex};
    use tempi::policy::admit::planner::{Decision, PlannerConfig, Rejection, ResourceId, TaskRequest};
    use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, Status, TaskOutcome};
    let ms = Duration::from_millis;
    let printed = Arc::new(Mutex::new(String::new()));
    let mut rt = Runtime::simulated(2);
    let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(2, 1) };
    let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    let log = printed.clone();
    let sense = GroupSpec::new("sense", Time::ZERO, Time::from_millis(20))
        .thread(GroupThread::new("read").task(TaskRequest::new(ms(3)), move |cx, t| {
            writeln!(
                log.lock().unwrap(),
                "task {}/{}#{} starts at {} (planned {}..{})",
                t.group.0,
                t.thread,
                t.task,
                cx.now().as_nanos(),
                t.planned_start.as_nanos(),
                t.planned_finish.as_nanos()
            )
            .unwrap();
            cx.work(t.scaled(ms(3)));
        }))
        .thread(GroupThread::new("fuse").after(0).work(TaskRequest::new(ms(4)).exclusive(ResourceId(0)), ms(2)));
    spring.add_group(&mut rt, sense).unwrap();
    let group_of = |name: &str, deadline: u64, tasks: usize, work: Duration| {
        let mut t = GroupThread::new("b");
        for _ in 0..tasks {
            t = t.work(TaskRequest::new(work), work);
        }
        GroupSpec::new(name, Time::ZERO, Time::from_millis(deadline)).thread(t)
    };
    let (s, log) = (spring.clone(), printed.clone());
    rt.spawn(ThreadSpec::new("app").cpu(1).priority(1), move |cx| {
        let say = |line: String| log.lock().unwrap().push_str(&line);
        let status = |st: Status| match st {
            Status::Unknown => 0,
            Status::Yes => 1,
            Status::No => 2,
        };
        cx.sleep_until(Time::from_millis(1));
        let d = s.spawn_sync(cx, group_of("burst", 12, 2, ms(1))).unwrap();
        let Decision::Accepted(id) = d else { panic!("burst refused") };
        say(format!("at {}: burst TEMPI_OK (group {})\n", cx.now().as_nanos(), id.0));
        let (_, removed) = s.kill_id(cx, id).unwrap().unwrap();
        say(format!("kill burst: TEMPI_OK, {removed} task(s) removed\n"));
        let ticket = s.spawn_async(cx, group_of("late", 4, 1, ms(3))).unwrap();
        say(format!("late: TEMPI_OK, ticket given, status {}\n", status(s.status(cx, ticket).unwrap())));
        cx.sleep(ms(2));
        say(format!("at {}: late status {}\n", cx.now().as_nanos(), status(s.status(cx, ticket).unwrap())));
        let d = s.spawn_sync(cx, group_of("never", 6, 1, ms(5))).unwrap();
        assert_eq!(d, Decision::Rejected(Rejection::Infeasible));
        say(format!("at {}: never TEMPI_REJECTED (rejection 3)\n", cx.now().as_nanos()));
        let (_, removed) = s.kill(cx, "sense").unwrap().unwrap();
        say(format!("kill sense: TEMPI_OK, {removed} task(s) removed\n"));
        assert_eq!(s.kill(cx, "nobody").unwrap(), None);
        say("kill nobody: TEMPI_NO_MATCH\n".to_string());
    })
    .unwrap();
    rt.run().unwrap();
    let mut out = printed.lock().unwrap().clone();
    let ns = |t: Option<Time>| t.map_or(u64::MAX, Time::as_nanos);
    for d in spring.decisions() {
        let o = d.outcome;
        let rejection = match o.decision {
            Decision::Accepted(_) => 0,
            Decision::Rejected(Rejection::BudgetTooSmall { .. }) => 1,
            Decision::Rejected(Rejection::BudgetExhausted) => 2,
            Decision::Rejected(Rejection::Infeasible) => 3,
        };
        writeln!(
            out,
            "decision {}: accepted {} rejection {rejection} id {} requested {} decided {} tasks {} k {} evaluations {} \
             cost {} budget {} cutoff {}",
            d.group,
            u32::from(o.decision.is_accepted()),
            d.id.map_or(0, |g| g.0),
            d.requested.as_nanos(),
            d.decided.as_nanos(),
            o.tasks,
            o.k,
            o.evaluations,
            o.cost.as_nanos(),
            o.budget.as_nanos(),
            o.cutoff.as_nanos()
        )
        .unwrap();
    }
    for t in spring.tasks() {
        let outcome = match t.outcome {
            TaskOutcome::Planned => "planned",
            TaskOutcome::Running => "running",
            TaskOutcome::Completed => "completed",
            TaskOutcome::Overrun => "overrun",
            TaskOutcome::Killed => "killed",
            TaskOutcome::Panicked => "panicked",
        };
        writeln!(
            out,
            "task {}/{}#{} cpu {} planned {}..{} actual {}..{} {outcome}",
            t.group,
            t.thread,
            t.task,
            t.cpu,
            t.planned_start.as_nanos(),
            t.planned_finish.as_nanos(),
            ns(t.actual_start),
            ns(t.actual_finish)
        )
        .unwrap();
    }
    out
}

#[test]
fn spring_groups_from_c_declared_spawned_and_killed_match_the_rust_api() {
    let expected = spring_in_rust();
    // The plan as the scenario intends it: the declared group's first task at the cutoff of
    // its planning (2 ms), its second killed before it starts; the two refusals infeasible.
    assert!(expected.contains("task sense/read#0 cpu 0 planned 2000000..5000000 actual 2000000..5000000 completed\n"));
    assert!(expected.contains("kill sense: TEMPI_OK, 1 task(s) removed\n"), "{expected}");
    assert!(expected.contains("never TEMPI_REJECTED (rejection 3)\n"), "{expected}");
    let dir = scratch("spring");
    let exe = build_c("examples/c/spring.c", &dir);
    assert_eq!(run(&mut Command::new(&exe)), expected);
}
