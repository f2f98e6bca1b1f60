//! The Spring planner reserves the run's per-job overhead (`Config::job_overhead`) on top of
//! every task's WCET, as admission does: exact windows in virtual time, and a group that fits
//! only without the overhead refused.

use std::time::Duration;

use tempi::clock::VirtualClock;
use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
use tempi::{Config, Runtime, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Two chained 3 ms tasks due at 10 ms, planned at the 2 ms cutoff, under `overhead`: whether
/// the group was accepted, and its tasks' planned windows and outcomes (ms).
fn plan(overhead: Duration) -> (bool, Vec<(u64, u64, TaskOutcome)>) {
    let mut rt = Runtime::<VirtualClock>::new(Config::new(1).job_overhead(overhead)).unwrap();
    let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    let g = GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
        .thread(GroupThread::new("a").work(TaskRequest::new(ms(3)), ms(3)))
        .thread(GroupThread::new("b").after(0).work(TaskRequest::new(ms(3)), ms(3)));
    spring.add_group(&mut rt, g).unwrap();
    rt.run_until(Time::from_millis(20)).unwrap();
    let accepted = spring.decisions()[0].outcome.decision.is_accepted();
    let in_ms = |t: Time| t.as_nanos() / 1_000_000;
    let tasks = spring.tasks().iter().map(|t| (in_ms(t.planned_start), in_ms(t.planned_finish), t.outcome)).collect();
    (accepted, tasks)
}

#[test]
fn spring_reserves_the_job_overhead_on_top_of_each_tasks_wcet() {
    use TaskOutcome::Completed;
    // Without overhead: a [2, 5], b [5, 8].
    assert_eq!(plan(Duration::ZERO), (true, vec![(2, 5, Completed), (5, 8, Completed)]));
    // 1 ms per task: a [2, 6], b [6, 10], exactly at the deadline; the work still takes 3 ms.
    assert_eq!(plan(ms(1)), (true, vec![(2, 6, Completed), (6, 10, Completed)]));
}

#[test]
fn spring_refuses_a_group_that_fits_only_without_the_overhead() {
    // 2 ms per task would end b at 12 ms, after the group's 10 ms deadline.
    let (accepted, tasks) = plan(ms(2));
    assert!(!accepted);
    assert!(tasks.iter().all(|t| t.2 != TaskOutcome::Completed), "{tasks:?}");
}
