//! Spring groups a user gets wrong are refused when added, naming the group; a task that
//! panics kills its group as an overrun does, successor threads included.

use std::time::Duration;

use tempi::policy::admit::planner::{Mode, PlannerConfig, ResourceId, ResourceUse, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome};
use tempi::{Runtime, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(n: u64) -> Time {
    Time::from_millis(n)
}

fn planner(cpus: usize, resources: usize) -> PlannerConfig {
    PlannerConfig { planner_wcet: ms(1), safety: Duration::ZERO, ..PlannerConfig::new(cpus, resources) }
}

fn thread(name: &str) -> GroupThread {
    GroupThread::new(name).work(TaskRequest::new(ms(1)), ms(1))
}

#[test]
fn malformed_groups_are_refused_when_added_naming_the_group() {
    let mut rt = Runtime::simulated(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1, 1))).unwrap();
    let mut unknown_resource = TaskRequest::new(ms(1));
    unknown_resource.resources.push(ResourceUse { resource: ResourceId(3), mode: Mode::Exclusive });
    let cases: Vec<(GroupSpec, &str)> = vec![
        (GroupSpec::new("selfish", Time::ZERO, at(10)).thread(thread("a").after(0)), "group \"selfish\": thread 0 comes after thread 0, which is not listed before it (list every thread after its predecessors) (thread 0 is \"a\")"),
        (GroupSpec::new("orphan", Time::ZERO, at(10)).thread(thread("a")).thread(thread("b").after(7)), "group \"orphan\": thread 1 comes after thread 7, which is not listed before it (list every thread after its predecessors) (thread 1 is \"b\")"),
        (GroupSpec::new("idle", Time::ZERO, at(10)).thread(thread("a")).thread(GroupThread::new("lazy")), "group \"idle\": thread 1 has no task (thread 1 is \"lazy\")"),
        (
            GroupSpec::new("greedy", Time::ZERO, at(10))
                .thread(GroupThread::new("a").work(unknown_resource, ms(1))),
            "group \"greedy\": resource 3 does not exist (the planner has 1)",
        ),
        (GroupSpec::new("late", at(5), at(4)).thread(thread("a")), "group \"late\": deadline 4.000000ms is before the release 5.000000ms"),
        (
            GroupSpec::new("parent", Time::ZERO, at(10))
                .thread(thread("a"))
                .dependent(GroupSpec::new("child", Time::ZERO, at(10)).thread(thread("c").after(0))),
            "group \"child\" (a dependent of \"parent\"): thread 0 comes after thread 0, which is not listed before it (list every thread after its predecessors) (thread 0 is \"c\")",
        ),
    ];
    for (group, expected) in cases {
        match spring.add_group(&mut rt, group) {
            Err(tempi::Error::InvalidConfig(m)) => assert_eq!(m, expected),
            other => panic!("{expected}: {other:?}"),
        }
    }
    // Nothing of them was declared: the run plans nothing and records nothing.
    rt.run().unwrap();
    assert!(spring.decisions().is_empty(), "{:?}", spring.decisions());
    assert!(spring.events().is_empty(), "{:?}", spring.events());
}

/// A task's outcome, actual start and actual finish.
type Ran = (TaskOutcome, Option<Time>, Option<Time>);

/// Two threads of one group on two CPUs, `b` after `a`: `a`'s first task is planned [1, 5]
/// on CPU 0, its second [5, 7]; `b`'s task [7, 9]. `fail` is what `a`'s first task does
/// instead of working its 4 ms.
fn successor_group(fail: fn(&tempi::Ctx<'_>)) -> (Vec<Ran>, Vec<String>) {
    let mut rt = Runtime::simulated(2);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(2, 0))).unwrap();
    let g = GroupSpec::new("g", Time::ZERO, at(30))
        .thread(
            GroupThread::new("a")
                .task(TaskRequest::new(ms(4)), move |cx, _| fail(cx))
                .work(TaskRequest::new(ms(2)), ms(2)),
        )
        .thread(GroupThread::new("b").after(0).work(TaskRequest::new(ms(2)), ms(2)));
    spring.add_group(&mut rt, g).unwrap();
    rt.run().unwrap();
    let tasks = spring.tasks();
    let planned: Vec<(usize, Time, Time)> = tasks.iter().map(|t| (t.cpu, t.planned_start, t.planned_finish)).collect();
    assert_eq!(planned[..2], [(0, at(1), at(5)), (0, at(5), at(7))]);
    assert_eq!((planned[2].1, planned[2].2), (at(7), at(9)));
    (tasks.iter().map(|t| (t.outcome, t.actual_start, t.actual_finish)).collect(), spring.events())
}

/// One rule for a task that does not finish as planned, whether it overruns its window or
/// panics: its group is killed there, so neither the thread's later task nor the successor
/// thread `b` runs.
#[test]
fn a_panicking_task_kills_its_group_as_an_overrun_does() {
    let (panicked, events) = successor_group(|cx| {
        cx.work(ms(2));
        panic!("sensor gone");
    });
    assert_eq!(
        panicked,
        [
            (TaskOutcome::Panicked, Some(at(1)), Some(at(3))),
            (TaskOutcome::Killed, None, None),
            (TaskOutcome::Killed, None, None),
        ]
    );
    assert_eq!(events, ["3.000000ms: group \"g\": a task panicked: sensor gone"]);

    let (overran, events) = successor_group(|cx| cx.work(ms(6)));
    assert_eq!(
        overran,
        [
            (TaskOutcome::Overrun, Some(at(1)), Some(at(5))),
            (TaskOutcome::Killed, None, None),
            (TaskOutcome::Killed, None, None),
        ]
    );
    assert_eq!(events, ["5.000000ms: group \"g\": a task overran its window and was stopped"]);
}
