//! Executing Spring plans in virtual time: exact timelines on 1 and 3 CPUs, unplanned threads
//! in the gaps, the overrun policy, kill at task boundaries, spawning from threads, and a
//! property test over random groups.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use tempi::policy::admit::planner::{PlannerConfig, ResourceId, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, Status, TaskOutcome, TaskRecord};
use tempi::{Runtime, ThreadSpec, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(n: u64) -> Time {
    Time::from_millis(n)
}

/// A planner whose budget is `budget_ms` (no safety window).
fn planner(cpus: usize, resources: usize, budget_ms: u64) -> PlannerConfig {
    PlannerConfig { planner_wcet: ms(budget_ms), safety: Duration::ZERO, ..PlannerConfig::new(cpus, resources) }
}

/// An unplanned thread on `cpu` that works `demand` from time 0; the cell gets its end.
fn background(rt: &mut Runtime<tempi::clock::VirtualClock>, cpu: usize, demand: Duration) -> Arc<Mutex<Option<Time>>> {
    let end = Arc::new(Mutex::new(None));
    let e = end.clone();
    rt.spawn(ThreadSpec::new(format!("bg{cpu}")).cpu(cpu).priority(1), move |cx| {
        cx.work(demand);
        *e.lock().unwrap() = Some(cx.now());
    })
    .unwrap();
    end
}

/// A task as (CPU, planned start, planned finish, actual start, actual finish), in ms.
type Window = (usize, u64, u64, Option<u64>, Option<u64>);

fn windows(tasks: &[TaskRecord]) -> Vec<Window> {
    let ms = |t: Time| t.as_nanos() / 1_000_000;
    tasks
        .iter()
        .map(|t| (t.cpu, ms(t.planned_start), ms(t.planned_finish), t.actual_start.map(ms), t.actual_finish.map(ms)))
        .collect()
}

#[test]
fn one_cpu_plan_runs_exactly_and_the_background_fills_the_gaps() {
    let mut rt = Runtime::simulated(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1, 0, 2))).unwrap();
    let g = GroupSpec::new("g", Time::ZERO, at(20))
        .thread(GroupThread::new("a").work(TaskRequest::new(ms(3)), ms(3)).work(TaskRequest::new(ms(2)), ms(2)))
        .thread(GroupThread::new("b").after(0).work(TaskRequest::new(ms(4)), ms(4)));
    spring.add_group(&mut rt, g).unwrap();
    let bg = background(&mut rt, 0, ms(6));
    let out = rt.run().unwrap();
    // Cutoff at 2 ms (the 2 ms budget); a0 [2,5], a1 [5,7], b [7,11].
    assert_eq!(
        windows(&spring.tasks()),
        [(0, 2, 5, Some(2), Some(5)), (0, 5, 7, Some(5), Some(7)), (0, 7, 11, Some(7), Some(11))]
    );
    assert!(spring.tasks().iter().all(|t| t.outcome == TaskOutcome::Completed));
    // The background ran [0,2] and [11,15].
    assert_eq!(*bg.lock().unwrap(), Some(at(15)));
    assert_eq!(out.total_misses(), 0);
    let d = &spring.decisions()[0];
    assert!(d.outcome.decision.is_accepted());
    assert_eq!(d.requested, Time::ZERO);
    assert_eq!(d.decided, Time::ZERO + d.outcome.cost);
    assert!(spring.events().is_empty());
}

#[test]
fn three_cpus_plan_runs_exactly_and_each_background_fills_its_gaps() {
    let mut rt = Runtime::simulated(3);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(3, 0, 2))).unwrap();
    let g = GroupSpec::new("g", at(1), at(31))
        .thread(GroupThread::new("x").work(TaskRequest::new(ms(4)), ms(4)))
        .thread(GroupThread::new("y").work(TaskRequest::new(ms(4)), ms(4)))
        .thread(GroupThread::new("z").work(TaskRequest::new(ms(4)), ms(4)))
        .thread(GroupThread::new("join").after(0).after(1).after(2).work(TaskRequest::new(ms(3)), ms(3)));
    spring.add_group(&mut rt, g).unwrap();
    let bgs: Vec<_> = (0..3).map(|c| background(&mut rt, c, ms(5))).collect();
    rt.run().unwrap();
    // Planned at 1 ms, cutoff 3 ms: the three parallel threads on the three CPUs [3,7], the
    // join after all of them on CPU 0 [7,10].
    assert_eq!(
        windows(&spring.tasks()),
        [
            (0, 3, 7, Some(3), Some(7)),
            (1, 3, 7, Some(3), Some(7)),
            (2, 3, 7, Some(3), Some(7)),
            (0, 7, 10, Some(7), Some(10))
        ]
    );
    // CPU 0: background [0,3] and [10,12]; CPUs 1 and 2: [0,3] and [7,9].
    let ends: Vec<_> = bgs.iter().map(|b| b.lock().unwrap().unwrap()).collect();
    assert_eq!(ends, [at(12), at(9), at(9)]);
}

#[test]
fn an_overrunning_task_is_stopped_at_its_window_and_its_group_killed() {
    let mut rt = Runtime::simulated(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1, 0, 1))).unwrap();
    let g = GroupSpec::new("late", Time::ZERO, at(30))
        .thread(GroupThread::new("a").work(TaskRequest::new(ms(2)), ms(5)).work(TaskRequest::new(ms(2)), ms(2)));
    spring.add_group(&mut rt, g).unwrap();
    let bg = background(&mut rt, 0, ms(4));
    rt.run().unwrap();
    let tasks = spring.tasks();
    // a0 planned [1,3] asked for 5 ms: stopped at 3. a1 never runs; its reservation went.
    assert_eq!(windows(&tasks), [(0, 1, 3, Some(1), Some(3)), (0, 3, 5, None, None)]);
    assert_eq!((tasks[0].outcome, tasks[1].outcome), (TaskOutcome::Overrun, TaskOutcome::Killed));
    // The background ran [0,1] and then from 3 without a break.
    assert_eq!(*bg.lock().unwrap(), Some(at(6)));
    // Only the stopped task is left in the plan (until retired), nothing after 3 ms.
    assert!(spring.planner().plan().tasks().all(|t| t.finish <= at(3)));
    assert_eq!(spring.events().len(), 1);
}

#[test]
fn a_task_whose_body_panics_is_recorded_as_panicked() {
    let mut rt = Runtime::simulated(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1, 0, 1))).unwrap();
    let g = GroupSpec::new("bad", Time::ZERO, at(30)).thread(
        GroupThread::new("a")
            .task(TaskRequest::new(ms(4)), |cx, _| {
                cx.work(ms(2));
                panic!("sensor gone");
            })
            .work(TaskRequest::new(ms(2)), ms(2)),
    );
    spring.add_group(&mut rt, g).unwrap();
    let out = rt.run().unwrap();
    let tasks = spring.tasks();
    // a0 planned [1,5] panics at 3; a1, planned [5,7], never runs: its thread has ended.
    assert_eq!(windows(&tasks), [(0, 1, 5, Some(1), Some(3)), (0, 5, 7, None, None)]);
    assert_eq!((tasks[0].outcome, tasks[1].outcome), (TaskOutcome::Panicked, TaskOutcome::Killed));
    assert_eq!(TaskOutcome::Panicked.name(), "panicked");
    assert_eq!(spring.events(), ["3.000000ms: group \"bad\": a task panicked: sensor gone"]);
    let thread = out.thread_named("bad/a").unwrap();
    assert_eq!(thread.outcome, Some(tempi::ThreadOutcome::Panicked("sensor gone".into())));
}

/// A task whose thread is killed while it runs (here by itself, at 2 ms) ends killed at that
/// instant, not left `running`; the thread's later task never runs.
#[test]
fn a_task_whose_thread_is_killed_while_it_runs_is_recorded_as_killed() {
    let mut rt = Runtime::simulated(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1, 0, 1))).unwrap();
    let g = GroupSpec::new("victim", Time::ZERO, at(30)).thread(
        GroupThread::new("a")
            .task(TaskRequest::new(ms(4)), |cx, _| {
                cx.work(ms(1));
                cx.kill(cx.id()).unwrap();
                cx.work(ms(1));
            })
            .work(TaskRequest::new(ms(2)), ms(2)),
    );
    spring.add_group(&mut rt, g).unwrap();
    let out = rt.run().unwrap();
    let tasks = spring.tasks();
    // a0 planned [1,5], killed at 2; a1, planned [5,7], never runs.
    assert_eq!(windows(&tasks), [(0, 1, 5, Some(1), Some(2)), (0, 5, 7, None, None)]);
    assert_eq!((tasks[0].outcome, tasks[1].outcome), (TaskOutcome::Killed, TaskOutcome::Killed));
    assert_eq!(out.thread_named("victim/a").unwrap().outcome, Some(tempi::ThreadOutcome::Killed));
}

#[test]
fn kill_lands_at_the_next_task_boundary_and_frees_the_rest() {
    // The killer runs on the second CPU: on the victim's, planned work runs above it.
    let mut rt = Runtime::simulated(2);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(2, 1, 1))).unwrap();
    let r = ResourceId(0);
    let g = GroupSpec::new("victim", Time::ZERO, at(40)).thread(
        GroupThread::new("a")
            .work(TaskRequest::new(ms(4)).exclusive(r), ms(4))
            .work(TaskRequest::new(ms(4)).exclusive(r), ms(4))
            .work(TaskRequest::new(ms(4)), ms(4)),
    );
    spring.add_group(&mut rt, g).unwrap();
    let s = spring.clone();
    let killed = Arc::new(Mutex::new(None));
    let k = killed.clone();
    rt.spawn(ThreadSpec::new("killer").cpu(1), move |cx| {
        cx.sleep_until(at(7)); // inside the second task, [5,9]
        *k.lock().unwrap() = s.kill(cx, "victim").unwrap();
        assert!(s.kill(cx, "victim").unwrap().is_none(), "a group dies once");
    })
    .unwrap();
    rt.run().unwrap();
    let tasks = spring.tasks();
    assert_eq!(killed.lock().unwrap().map(|(_, n)| n), Some(1));
    // The running task holds its resource to its end; the third never starts.
    assert_eq!(windows(&tasks)[..2], [(0, 1, 5, Some(1), Some(5)), (0, 5, 9, Some(5), Some(9))]);
    assert_eq!(
        tasks.iter().map(|t| t.outcome).collect::<Vec<_>>(),
        [TaskOutcome::Completed, TaskOutcome::Completed, TaskOutcome::Killed]
    );
}

#[test]
fn spawning_from_a_thread_sync_and_async() {
    let mut rt = Runtime::simulated(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1, 0, 2))).unwrap();
    let s = spring.clone();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    rt.spawn(ThreadSpec::new("app").priority(5), move |cx| {
        cx.sleep_until(at(1));
        let fits = GroupSpec::new("fits", Time::ZERO, at(10))
            .thread(GroupThread::new("a").work(TaskRequest::new(ms(3)), ms(3)));
        let yes = s.spawn_sync(cx, fits).unwrap().is_accepted();
        log.lock().unwrap().push((cx.now(), format!("sync {yes}")));
        // Needs 8 ms before 10 ms, but the first group holds [3,6] and the cutoff is 3 ms.
        let late = GroupSpec::new("late", Time::ZERO, at(10))
            .thread(GroupThread::new("b").work(TaskRequest::new(ms(5)), ms(5)));
        let ticket = s.spawn_async(cx, late).unwrap();
        let first = s.status(cx, ticket).unwrap();
        cx.sleep(ms(1));
        log.lock().unwrap().push((cx.now(), format!("async {first:?} then {:?}", s.status(cx, ticket).unwrap())));
    })
    .unwrap();
    rt.run().unwrap();
    let d = spring.decisions();
    let seen = seen.lock().unwrap();
    // The synchronous caller waited for the modelled planner time.
    assert_eq!(seen[0], (d[0].decided, "sync true".to_string()));
    assert!(d[0].decided > at(1));
    assert_eq!(seen[1].1, format!("async {:?} then {:?}", Status::Unknown, Status::No));
    assert_eq!(windows(&spring.tasks()), [(0, 3, 6, Some(3), Some(6))]);
}

#[test]
fn a_global_policy_is_refused_since_plans_place_threads_on_cpus() {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::GlobalEdf::new()));
    let err = Spring::new(&mut rt, SpringSpec::new(planner(2, 0, 1))).err().unwrap();
    assert!(err.to_string().contains("is global"), "{err}");
}

/// A random task: WCET in ms, how much less it needs (quarter ms), a resource and whether
/// it is held exclusively.
type RandomTask = (u64, u64, Option<(usize, bool)>);
/// A random thread: its predecessors and its tasks.
type RandomThread = (Vec<usize>, Vec<RandomTask>);

/// A random group: up to 4 threads, each of 1-3 tasks, each after some earlier threads, with
/// random resource holdings.
fn group_strategy(resources: usize) -> impl Strategy<Value = (u64, u64, Vec<RandomThread>)> {
    let task = (1u64..5, 0u64..5, proptest::option::of((0..resources.max(1), any::<bool>())));
    let thread = (proptest::collection::vec(0usize..4, 0..3), proptest::collection::vec(task, 1..4));
    (0u64..20, 5u64..60, proptest::collection::vec(thread, 1..5))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// Every accepted plan, executed with tasks within their WCET and busy unplanned threads
    /// on every CPU, runs each task exactly in its window: no start before the planned start,
    /// no finish after the planned finish, no group past its deadline.
    #[test]
    fn accepted_plans_execute_within_their_windows(
        cpus in 1usize..5,
        resources in 0usize..3,
        groups in proptest::collection::vec(group_strategy(2), 1..5),
    ) {
        let mut rt = Runtime::simulated(cpus);
        let spring = Spring::new(&mut rt, SpringSpec::new(planner(cpus, resources, 1))).unwrap();
        let mut deadlines = Vec::new();
        for (n, (release, span, threads)) in groups.iter().enumerate() {
            let release = at(*release);
            let deadline = release + ms(*span);
            let mut g = GroupSpec::new(format!("g{n}"), release, deadline);
            for (i, (after, tasks)) in threads.iter().enumerate() {
                let mut t = GroupThread::new(format!("t{i}"));
                let mut preds: Vec<usize> = after.iter().copied().filter(|&p| p < i).collect();
                preds.sort_unstable();
                preds.dedup();
                for p in preds {
                    t = t.after(p);
                }
                for &(wcet, less, res) in tasks {
                    let mut req = TaskRequest::new(ms(wcet));
                    if let (Some((r, excl)), true) = (res, resources > 0) {
                        let r = ResourceId((r % resources) as u16);
                        req = if excl { req.exclusive(r) } else { req.shared(r) };
                    }
                    // Actual demand within the WCET.
                    let actual = Duration::from_micros(wcet * 1000 - less.min(wcet - 1) * 250);
                    t = t.work(req, actual);
                }
                g = g.thread(t);
            }
            deadlines.push((format!("g{n}"), deadline));
            spring.add_group(&mut rt, g).unwrap();
        }
        for c in 0..cpus {
            rt.spawn(ThreadSpec::new(format!("bg{c}")).cpu(c).priority(1), |cx| cx.work(ms(500))).unwrap();
        }
        rt.run().unwrap();
        for t in spring.tasks() {
            prop_assert_eq!(t.outcome, TaskOutcome::Completed, "{:?} {:?} {:?}", t, spring.events(), spring.tasks());
            let (start, finish) = (t.actual_start.unwrap(), t.actual_finish.unwrap());
            prop_assert_eq!(start, t.planned_start);
            prop_assert!(finish <= t.planned_finish, "{:?}", t);
            let deadline = deadlines.iter().find(|(n, _)| *n == t.group).unwrap().1;
            prop_assert!(finish <= deadline, "{:?}", t);
        }
        let accepted: usize = spring.decisions().iter().filter(|d| d.outcome.decision.is_accepted()).count();
        let groups_run: std::collections::BTreeSet<String> = spring.tasks().iter().map(|t| t.group.clone()).collect();
        prop_assert_eq!(groups_run.len(), accepted);
        prop_assert!(spring.events().is_empty(), "{:?}", spring.events());
    }
}
