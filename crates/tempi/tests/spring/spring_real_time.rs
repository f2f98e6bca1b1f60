//! Executing Spring plans in real time, the planner on its own OS thread: groups run as
//! planned, spawns answer, a too-small budget answers no, kill lands at task boundaries, and
//! the planner's thread is torn down with the run. Properties with generous bounds only: each
//! task's window is far longer than its work, so a slow machine delays but never breaks them.

use crate::common;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use common::{ms, us};
use tempi::policy::admit::planner::{CostModel, Decision, PlannerConfig, Rejection, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, Status, TaskOutcome, TaskRecord};
use tempi::{Runtime, ThreadSpec, Time};

/// Real-time tests in this file take turns: each spins dispatchers, and on a 2-core machine
/// two at once would steal each other's CPU.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// A planner with a 20 ms budget (30 ms WCET, 10 ms safety window).
fn planner(cpus: usize) -> PlannerConfig {
    PlannerConfig { planner_wcet: ms(30), safety: ms(10), ..PlannerConfig::new(cpus, 0) }
}

/// What a task saw when it ran: (group/thread, task, CPU, start).
type Seen = Arc<Mutex<Vec<(String, usize, usize, Time)>>>;

/// A thread whose `n` tasks each reserve 50 ms and work 1 ms, logging where and when they ran.
fn logged(name: &str, group: &str, n: usize, seen: &Seen) -> GroupThread {
    let mut t = GroupThread::new(name);
    for _ in 0..n {
        let (seen, label) = (seen.clone(), format!("{group}/{name}"));
        t = t.task(TaskRequest::new(ms(50)), move |cx, tcx| {
            seen.lock().unwrap().push((label, tcx.task, cx.cpu(), cx.now()));
            cx.work(ms(1));
        });
    }
    t
}

fn record<'a>(tasks: &'a [TaskRecord], thread: &str, task: usize) -> &'a TaskRecord {
    tasks.iter().find(|t| t.thread == thread && t.task == task).unwrap()
}

#[test]
fn groups_run_in_real_time_on_their_cpus_in_precedence_order_never_early() {
    let _turn = serial();
    let mut rt = Runtime::real_time(2);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(2))).unwrap();
    let seen: Seen = Arc::default();
    let g = GroupSpec::new("g", Time::ZERO, Time::from_secs(2))
        .thread(logged("a", "g", 2, &seen))
        .thread(logged("b", "g", 1, &seen).after(0))
        .thread(logged("c", "g", 1, &seen));
    let h = GroupSpec::new("h", Time::from_millis(50), Time::from_secs(2)).thread(logged("d", "h", 2, &seen));
    spring.add_group(&mut rt, g).unwrap();
    spring.add_group(&mut rt, h).unwrap();
    rt.run().unwrap();

    let decisions = spring.decisions();
    assert_eq!(decisions.len(), 2);
    assert!(decisions.iter().all(|d| d.outcome.decision.is_accepted()), "{decisions:?}");
    let tasks = spring.tasks();
    assert_eq!(tasks.len(), 6);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 6, "every accepted task ran: {seen:?}");
    for t in &tasks {
        assert_eq!(t.outcome, TaskOutcome::Completed, "{t:?}");
        let start = t.actual_start.unwrap();
        assert!(start >= t.planned_start, "started before its planned start: {t:?}");
        assert!(t.actual_finish.unwrap() >= start);
        // On its planned CPU.
        let label = format!("{}/{}", t.group, t.thread);
        let ran = seen.iter().find(|(l, task, _, _)| *l == label && *task == t.task).unwrap();
        assert_eq!(ran.2, t.cpu, "{t:?}");
    }
    // Nothing is planned before the answer could be known: after the request's cutoff.
    for d in &decisions {
        assert!(d.outcome.cutoff >= d.requested);
        assert!(d.decided >= d.requested);
    }
    for t in tasks.iter().filter(|t| t.group == "g") {
        assert!(t.planned_start >= decisions[0].outcome.cutoff, "{t:?}");
    }
    // Precedence: a's tasks in order, b after all of a.
    let (a0, a1, b0) = (record(&tasks, "a", 0), record(&tasks, "a", 1), record(&tasks, "b", 0));
    assert!(a1.actual_start >= a0.actual_finish);
    assert!(b0.actual_start >= a1.actual_finish);
    assert_eq!(a0.cpu, a1.cpu, "a thread stays on its CPU");
    // The planner ran on its own thread and answered with its measured time.
    assert!(decisions.iter().all(|d| d.outcome.cost <= Duration::from_secs(5)));
    assert!(spring.events().is_empty(), "{:?}", spring.events());
}

#[test]
fn spawn_sync_and_spawn_async_answer_in_real_time() {
    let _turn = serial();
    let mut rt = Runtime::real_time(2);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(2))).unwrap();
    let seen: Seen = Arc::default();
    let answers = Arc::new(Mutex::new(Vec::new()));
    let (s, log, out) = (spring.clone(), seen.clone(), answers.clone());
    rt.spawn(ThreadSpec::new("app").cpu(1), move |cx| {
        let deadline = cx.now() + Duration::from_secs(2);
        let fits = GroupSpec::new("sync", cx.now(), deadline).thread(logged("s", "sync", 1, &log));
        let yes = s.spawn_sync(cx, fits).unwrap();
        // Too tight: 50 ms of work by 5 ms from now.
        let tight = GroupSpec::new("tight", cx.now(), cx.now() + ms(5)).thread(logged("t", "tight", 1, &log));
        let no = s.spawn_sync(cx, tight).unwrap();
        let later = GroupSpec::new("async", cx.now(), deadline).thread(logged("x", "async", 1, &log));
        let ticket = s.spawn_async(cx, later).unwrap();
        let mut status = s.status(cx, ticket).unwrap();
        for _ in 0..2000 {
            if status != Status::Unknown {
                break;
            }
            cx.sleep(ms(1));
            status = s.status(cx, ticket).unwrap();
        }
        // A malformed group is an error, and the planner answers the next request still.
        let bad = GroupSpec::new("bad", cx.now(), deadline).thread(GroupThread::new("z").after(3));
        let err = s.spawn_sync(cx, bad).is_err();
        let again = GroupSpec::new("again", cx.now(), deadline).thread(logged("y", "again", 1, &log));
        let yes_again = s.spawn_sync(cx, again).unwrap();
        out.lock().unwrap().push((yes, no, status, err, yes_again));
    })
    .unwrap();
    rt.run().unwrap();

    let answers = answers.lock().unwrap();
    let (yes, no, status, err, yes_again) = answers[0];
    assert!(yes.is_accepted());
    assert_eq!(no, Decision::Rejected(Rejection::Infeasible));
    assert_eq!(status, Status::Yes);
    assert!(err);
    assert!(yes_again.is_accepted());
    let tasks = spring.tasks();
    let groups: Vec<&str> = tasks.iter().map(|t| t.group.as_str()).collect();
    assert_eq!(groups, ["sync", "async", "again"]);
    for t in &tasks {
        assert_eq!(t.outcome, TaskOutcome::Completed, "{t:?}");
        assert!(t.actual_start.unwrap() >= t.planned_start);
    }
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn a_budget_too_small_for_the_request_answers_no_in_wall_time() {
    let _turn = serial();
    let mut rt = Runtime::real_time(1);
    // The cost model allows any number of evaluations, so only the wall clock can say no:
    // 400 tasks with k = all take far longer than 1 µs to plan.
    let free = CostModel { fixed: Duration::ZERO, per_evaluation: Duration::ZERO };
    let config = PlannerConfig { planner_wcet: us(1), safety: Duration::ZERO, cost: free, ..PlannerConfig::new(1, 0) };
    let spring = Spring::new(&mut rt, SpringSpec::new(config)).unwrap();
    let mut big = GroupSpec::new("big", Time::ZERO, Time::from_secs(100));
    for i in 0..40 {
        let mut t = GroupThread::new(format!("t{i}"));
        for _ in 0..10 {
            t = t.work(TaskRequest::new(ms(1)), us(1));
        }
        big = big.thread(t);
    }
    spring.add_group(&mut rt, big).unwrap();
    rt.run().unwrap();
    let d = spring.decisions();
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].outcome.decision, Decision::Rejected(Rejection::BudgetExhausted), "{d:?}");
    assert!(spring.tasks().is_empty());
    assert_eq!(spring.planner().plan().task_count(), 0, "a refusal leaves the plan as it was");
}

#[test]
fn kill_lands_at_a_task_boundary_in_real_time() {
    let _turn = serial();
    let mut rt = Runtime::real_time(2);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(2))).unwrap();
    let seen: Seen = Arc::default();
    let victim = GroupSpec::new("victim", Time::ZERO, Time::from_secs(2)).thread(logged("v", "victim", 4, &seen));
    spring.add_group(&mut rt, victim).unwrap();
    let (s, killed) = (spring.clone(), Arc::new(Mutex::new(None)));
    let k = killed.clone();
    rt.spawn(ThreadSpec::new("killer").cpu(1), move |cx| {
        // Kill as soon as the victim's first task has started.
        for _ in 0..5000 {
            if s.tasks().first().is_some_and(|t| t.actual_start.is_some()) {
                break;
            }
            cx.sleep(us(200));
        }
        *k.lock().unwrap() = s.kill(cx, "victim").unwrap();
    })
    .unwrap();
    rt.run().unwrap();

    let (_, removed) = killed.lock().unwrap().expect("the group was live");
    assert!(removed >= 1, "tasks not started left the plan");
    let outcomes: Vec<TaskOutcome> = spring.tasks().iter().map(|t| t.outcome).collect();
    // A prefix completed (the running task finished), the rest never ran.
    let done = outcomes.iter().take_while(|&&o| o == TaskOutcome::Completed).count();
    assert!(done >= 1, "{outcomes:?}");
    assert!(outcomes[done..].iter().all(|&o| o == TaskOutcome::Killed), "{outcomes:?}");
    assert_eq!(outcomes.len() - done, removed, "{outcomes:?}");
    assert_eq!(seen.lock().unwrap().len(), done);
}

#[test]
fn the_planner_thread_is_torn_down_with_the_run() {
    let _turn = serial();
    // Stopped at a horizon before a group's release, and dropped unrun: both end promptly.
    let mut rt = Runtime::real_time(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1))).unwrap();
    let late = GroupSpec::new("late", Time::from_secs(10), Time::from_secs(20))
        .thread(GroupThread::new("a").work(TaskRequest::new(ms(1)), us(1)));
    spring.add_group(&mut rt, late).unwrap();
    rt.run_until(Time::from_millis(20)).unwrap();
    assert!(spring.decisions().is_empty());
    assert!(spring.events().is_empty(), "{:?}", spring.events());

    let mut rt = Runtime::real_time(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1))).unwrap();
    drop(rt);
    assert!(spring.events().is_empty());

    // A thread that panics inside a task ends alone; the run and the planner end in order.
    let mut rt = Runtime::real_time(1);
    let spring = Spring::new(&mut rt, SpringSpec::new(planner(1))).unwrap();
    let g = GroupSpec::new("p", Time::ZERO, Time::from_secs(2))
        .thread(GroupThread::new("a").task(TaskRequest::new(ms(5)), |_, _| panic!("task failed")));
    spring.add_group(&mut rt, g).unwrap();
    let out = rt.run().unwrap();
    assert!(out.threads.iter().any(|t| matches!(t.outcome, Some(tempi::ThreadOutcome::Panicked(_)))));
    assert_ne!(spring.tasks()[0].outcome, TaskOutcome::Completed);
}
