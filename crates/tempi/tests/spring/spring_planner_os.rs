//! Where and how the operating system runs the Spring planner's OS thread in real time: on
//! `SpringSpec::planner_cpu`, one `SCHED_FIFO` level above `SCHED_FIFO` dispatchers, so it
//! answers while they are busy; a refusal is a run warning. Properties only, with generous
//! bounds: the planner's scheduling class is read from `/proc`, exactly, and the answers are
//! checked against deadlines far longer than planning takes on a loaded machine.

use crate::common;

use std::sync::{Arc, Mutex, MutexGuard};

use common::ms;
use tempi::clock::RealClock;
use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, PlannerPriority, Spring, SpringSpec, TaskOutcome};
use tempi::{Config, Error, Runtime, ThreadSpec, Time};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// A planner with a 20 ms budget (30 ms WCET, 10 ms safety window).
fn planner(cpus: usize) -> PlannerConfig {
    PlannerConfig { planner_wcet: ms(30), safety: ms(10), ..PlannerConfig::new(cpus, 0) }
}

/// Whether this process may put a thread under `SCHED_FIFO` (tried on a thread of its own,
/// which then ends).
fn fifo_permitted() -> bool {
    std::thread::spawn(|| tempi::os::set_fifo(1).is_ok()).join().unwrap_or(false)
}

/// The planner's OS thread as `/proc` shows it: (scheduling policy, real-time priority, CPUs
/// it may run on), or `None` if no thread of this process has its name.
#[derive(Clone, Debug, PartialEq, Eq)]
struct OsView {
    policy: u32,
    rt_priority: u32,
    cpus_allowed: String,
}

fn planner_os_thread() -> Option<OsView> {
    for entry in std::fs::read_dir("/proc/self/task").ok()?.flatten() {
        let dir = entry.path();
        // The kernel keeps 15 bytes of a thread's name.
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != "tempi-spring-pl" {
            continue;
        }
        let stat = std::fs::read_to_string(dir.join("stat")).ok()?;
        // Fields after the name (which is in parentheses and may hold spaces): the state is
        // field 3, rt_priority field 40, policy field 41.
        let rest: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        let rt_priority = rest.get(40 - 3)?.parse().ok()?;
        let policy = rest.get(41 - 3)?.parse().ok()?;
        let status = std::fs::read_to_string(dir.join("status")).ok()?;
        let cpus_allowed = status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:"))?.trim().to_string();
        return Some(OsView { policy, rt_priority, cpus_allowed });
    }
    None
}

const SCHED_OTHER: u32 = 0;
const SCHED_FIFO: u32 = 1;

/// A group of one task (50 ms reserved, 1 ms of work) released at 0 with a 150 ms deadline,
/// which reads the planner's OS thread from `/proc` as it runs.
fn probing_group(seen: &Arc<Mutex<Option<OsView>>>) -> GroupSpec {
    let seen = seen.clone();
    GroupSpec::new("probe", Time::ZERO, Time::from_millis(150)).thread(GroupThread::new("a").task(
        TaskRequest::new(ms(50)),
        move |cx, _| {
            *seen.lock().unwrap() = planner_os_thread();
            cx.work(ms(1));
        },
    ))
}

#[test]
fn spring_planner_answers_while_fifo_dispatchers_are_busy() {
    let _turn = serial();
    if !fifo_permitted() {
        eprintln!("skipped: SCHED_FIFO is not permitted to this process");
        return;
    }
    let config = Config::new(2).fifo_priority(Some(10));
    let mut rt = Runtime::<RealClock>::new(config).unwrap();
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(2))).unwrap();
    // Both dispatchers busy for 200 ms from time zero: a planner under the time-sharing policy
    // gets no CPU before then, so its answer would come after the group's deadline.
    for cpu in 0..2 {
        rt.spawn(ThreadSpec::new(format!("busy{cpu}")).cpu(cpu), |cx| cx.work(ms(200))).unwrap();
    }
    let seen = Arc::new(Mutex::new(None));
    spring.add_group(&mut rt, probing_group(&seen)).unwrap();
    let out = rt.run().unwrap();

    assert!(out.warnings.is_empty(), "{:?}", out.warnings);
    let decisions = spring.decisions();
    assert_eq!(decisions.len(), 1);
    assert!(decisions[0].outcome.decision.is_accepted(), "{decisions:?}");
    let tasks = spring.tasks();
    assert_eq!(tasks[0].outcome, TaskOutcome::Completed, "{tasks:?}");
    // One level above the dispatchers, on CPU 0.
    let view = seen.lock().unwrap().clone().expect("the planner's OS thread is alive during the run");
    assert_eq!(view, OsView { policy: SCHED_FIFO, rt_priority: 11, cpus_allowed: "0".into() });
}

#[test]
fn spring_planner_follows_its_spec_cpu_and_fifo_priority() {
    let _turn = serial();
    if !fifo_permitted() {
        eprintln!("skipped: SCHED_FIFO is not permitted to this process");
        return;
    }
    let cpu = std::thread::available_parallelism().map_or(1, |n| n.get()) - 1;
    let mut rt = Runtime::<RealClock>::new(Config::new(1)).unwrap();
    let spec = SpringSpec {
        planner_cpu: Some(cpu),
        planner_priority: PlannerPriority::Fifo(7),
        ..SpringSpec::new(planner(1))
    };
    let spring = Spring::new(&mut rt, spec).unwrap();
    let seen = Arc::new(Mutex::new(None));
    spring.add_group(&mut rt, probing_group(&seen)).unwrap();
    let out = rt.run().unwrap();
    let warnings = planner_warnings(&out.warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    let view = seen.lock().unwrap().clone().expect("the planner's OS thread is alive during the run");
    assert_eq!(view, OsView { policy: SCHED_FIFO, rt_priority: 7, cpus_allowed: cpu.to_string() });
}

#[test]
fn spring_planner_is_time_sharing_beside_time_sharing_dispatchers() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(1)).unwrap();
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1))).unwrap();
    let seen = Arc::new(Mutex::new(None));
    spring.add_group(&mut rt, probing_group(&seen)).unwrap();
    let out = rt.run().unwrap();
    let warnings = planner_warnings(&out.warnings);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert!(spring.decisions()[0].outcome.decision.is_accepted());
    let view = seen.lock().unwrap().clone().expect("the planner's OS thread is alive during the run");
    assert_eq!(view, OsView { policy: SCHED_OTHER, rt_priority: 0, cpus_allowed: "0".into() });
}

#[test]
fn spring_planner_cpu_the_machine_lacks_is_a_run_warning_and_the_planner_still_answers() {
    let _turn = serial();
    let mut rt = Runtime::<RealClock>::new(Config::new(1)).unwrap();
    let spec = SpringSpec { planner_cpu: Some(4096), ..SpringSpec::new(planner(1)) };
    let spring = Spring::new(&mut rt, spec).unwrap();
    let seen = Arc::new(Mutex::new(None));
    spring.add_group(&mut rt, probing_group(&seen)).unwrap();
    let out = rt.run().unwrap();
    let warnings = planner_warnings(&out.warnings);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].starts_with("spring: could not pin the planner's thread to CPU 4096: "), "{:?}", out.warnings);
    assert!(spring.decisions()[0].outcome.decision.is_accepted());
    assert_eq!(spring.tasks()[0].outcome, TaskOutcome::Completed);
}

#[test]
fn spring_planner_fifo_priority_outside_1_to_99_is_refused() {
    for p in [0, 100, -1] {
        let mut rt = Runtime::simulated(1);
        let spec = SpringSpec { planner_priority: PlannerPriority::Fifo(p), ..SpringSpec::new(planner(1)) };
        match Spring::new(&mut rt, spec) {
            Err(Error::InvalidConfig(m)) => {
                assert_eq!(m, format!("spring: the planner's SCHED_FIFO priority {p} is outside 1..=99"))
            }
            Err(e) => panic!("{p}: {e}"),
            Ok(_) => panic!("{p}: accepted"),
        }
    }
}

/// The run's warnings about the planner's thread: a run whose dispatchers are time-sharing
/// also warns of that, which these tests do not look at.
fn planner_warnings(warnings: &[String]) -> Vec<&String> {
    warnings.iter().filter(|w| !w.starts_with("no SCHED_FIFO priority")).collect()
}
