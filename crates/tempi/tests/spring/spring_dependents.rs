//! Dependent groups of dependent groups, in virtual time: the whole chain is planned in the
//! parent's request, all or nothing, with exact plans.

use std::time::Duration;

use tempi::policy::admit::planner::{Decision, PlannerConfig, Rejection, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
use tempi::{Runtime, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(n: u64) -> Time {
    Time::from_millis(n)
}

fn group(name: &str, release: u64, deadline: u64, wcet: u64) -> GroupSpec {
    GroupSpec::new(name, at(release), at(deadline))
        .thread(GroupThread::new("t").work(TaskRequest::new(ms(wcet)), ms(wcet)))
}

fn spring(rt: &mut Runtime<tempi::clock::VirtualClock>) -> Spring {
    let planner = PlannerConfig { planner_wcet: ms(1), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    Spring::new(rt, SpringSpec::new(planner)).unwrap()
}

#[test]
fn grandchildren_are_planned_with_the_parent_and_run() {
    let mut rt = Runtime::simulated(1);
    let s = spring(&mut rt);
    let grandchild = group("grandchild", 10, 40, 3);
    let child = group("child", 0, 30, 2).dependent(grandchild);
    s.add_group(&mut rt, group("parent", 0, 20, 4).dependent(child)).unwrap();
    rt.run().unwrap();
    let d = s.decisions();
    let names: Vec<(&str, bool)> = d.iter().map(|d| (d.group.as_str(), d.outcome.decision.is_accepted())).collect();
    assert_eq!(names, [("parent", true), ("child", true), ("grandchild", true)]);
    // One request: every answer is known at the same instant, after all three searches.
    assert!(d.iter().all(|x| x.requested == Time::ZERO && x.decided == d[0].decided));
    let windows: Vec<(String, u64, u64, TaskOutcome)> = s
        .tasks()
        .iter()
        .map(|t| {
            let ms = |t: Time| t.as_nanos() / 1_000_000;
            (t.group.clone(), ms(t.planned_start), ms(t.actual_finish.unwrap()), t.outcome)
        })
        .collect();
    // Cutoff at 1 ms: parent [1,5], child [5,7], grandchild from its release [10,13].
    assert_eq!(
        windows,
        [
            ("parent".into(), 1, 5, TaskOutcome::Completed),
            ("child".into(), 5, 7, TaskOutcome::Completed),
            ("grandchild".into(), 10, 13, TaskOutcome::Completed),
        ]
    );
}

#[test]
fn a_grandchild_that_does_not_fit_refuses_the_whole_request() {
    let mut rt = Runtime::simulated(1);
    let s = spring(&mut rt);
    // 5 ms of work due 4 ms after its release: never fits.
    let grandchild = group("grandchild", 10, 14, 5);
    let child = group("child", 0, 30, 2).dependent(grandchild);
    s.add_group(&mut rt, group("parent", 0, 20, 4).dependent(child)).unwrap();
    rt.run().unwrap();
    let d: Vec<Decision> = s.decisions().iter().map(|d| d.outcome.decision).collect();
    assert_eq!(d, [Decision::Rejected(Rejection::Infeasible); 3]);
    assert!(s.tasks().is_empty());
    assert_eq!(s.planner().plan().task_count(), 0);
}
