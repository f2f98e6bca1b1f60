//! Tests of the Spring planner (`tempi::policy::admit::planner`): hand-computed plans on small
//! groups (1 and 3 CPUs, shared and exclusive resources, cutoff, backtracking, locality,
//! budgets), then random request streams checked by an independent checker that knows only
//! the requests and the plan's public view. Touches only the planner's public interface.

use std::collections::HashMap;
use std::time::Duration;

use crate::common;

use common::counting::allocations;
use common::ms;
use proptest::prelude::*;
use tempi::policy::admit::planner::*;
use tempi::Time;

fn at(n: u64) -> Time {
    Time::from_millis(n)
}

fn task(wcet_ms: u64) -> TaskRequest {
    TaskRequest::new(ms(wcet_ms))
}

/// A planner whose budget is `budget_ms` and whose modelled cost is zero, so hand-computed
/// plans depend only on the cutoff.
fn planner(cpus: usize, resources: usize, heuristic: &str, budget_ms: u64) -> Planner {
    let config = PlannerConfig {
        heuristic: Heuristic::by_name(heuristic).unwrap(),
        planner_wcet: ms(budget_ms),
        safety: Duration::ZERO,
        cost: CostModel { fixed: Duration::ZERO, per_evaluation: Duration::ZERO },
        ..PlannerConfig::new(cpus, resources)
    };
    Planner::new(config).unwrap()
}

fn accept(p: &mut Planner, g: &GroupRequest, now: Time) -> GroupId {
    let out = p.submit(g, now, None).unwrap();
    match out.decision {
        Decision::Accepted(id) => id,
        other => panic!("expected acceptance, got {other:?} ({out:?})"),
    }
}

/// (group, thread, task) and (cpu, start ms, finish ms) of a planned task.
type Row = ((u64, usize, usize), (usize, u64, u64));

/// Every planned task, in the plan's order.
fn layout(p: &Planner) -> Vec<Row> {
    p.plan()
        .tasks()
        .map(|t| {
            let ms = |x: Time| x.as_nanos() / 1_000_000;
            ((t.group.0, t.thread, t.task), (t.cpu, ms(t.start), ms(t.finish)))
        })
        .collect()
}

/// Five threads: T3 after T0 and T1; R0 taken exclusively by T0 and shared by T1 and T2; R1
/// exclusive in T3's first task and shared by T4.
fn resource_group(deadline_ms: u64) -> GroupRequest {
    let (r0, r1) = (ResourceId(0), ResourceId(1));
    GroupRequest::new(at(0), at(deadline_ms))
        .thread(ThreadRequest::new().task(task(10).exclusive(r0)))
        .thread(ThreadRequest::new().task(task(10).shared(r0)))
        .thread(ThreadRequest::new().task(task(10).shared(r0)))
        .thread(ThreadRequest::new().after(0).after(1).task(task(5).exclusive(r1)).task(task(5)))
        .thread(ThreadRequest::new().task(task(4).shared(r1)))
}

#[test]
fn three_cpus_share_and_exclude_resources() {
    // Effective deadlines: T0, T1 40 (T3's 10 ms follow), T3's tasks 45 and 50, T2 and T4 50.
    // min-s, ties by deadline then index. T0 first (R0 exclusive, CPU 0, 0-10); then T4,
    // which alone can start at once (CPU 1, 0-4); T1 and T2 wait for R0's exclusive holder and
    // share it from 10: every CPU ties at 10 for T1, so the lowest (0), then CPU 0 is busy
    // until 20 and T2 takes CPU 1. T3 waits for T0 and T1 (20), on the lowest tied CPU.
    let mut p = planner(3, 2, "min-s", 0);
    accept(&mut p, &resource_group(50), at(0));
    assert_eq!(
        layout(&p),
        [
            ((1, 0, 0), (0, 0, 10)),
            ((1, 1, 0), (0, 10, 20)),
            ((1, 2, 0), (1, 10, 20)),
            ((1, 3, 0), (0, 20, 25)),
            ((1, 3, 1), (0, 25, 30)),
            ((1, 4, 0), (1, 0, 4)),
        ]
    );
    let mut cpu0 = Vec::new();
    let mut from = at(0);
    while let Some(t) = p.plan().next_on_cpu(0, from) {
        cpu0.push((t.thread, t.task));
        from = t.finish;
    }
    assert_eq!(cpu0, [(0, 0), (1, 0), (3, 0), (3, 1)]);
    assert_eq!(p.plan().resource_available(ResourceId(0)), Some((at(10), at(20))));
    assert_eq!(p.plan().resource_available(ResourceId(1)), Some((at(25), at(25))));
    assert_eq!(p.plan().cpu_available(2), Some(at(0)));
}

#[test]
fn one_cpu_runs_everything_in_heuristic_order() {
    // All start times are the CPU's free time; min-s ties go to the earlier deadline: T0 (40),
    // T1 (40), T3's first task (45, once T0 and T1 are done), then T2 (50, index 2) before
    // T3's second task (index 4) and T4 (index 5).
    let mut p = planner(1, 2, "min-s", 0);
    accept(&mut p, &resource_group(50), at(0));
    assert_eq!(
        layout(&p),
        [
            ((1, 0, 0), (0, 0, 10)),
            ((1, 1, 0), (0, 10, 20)),
            ((1, 2, 0), (0, 25, 35)),
            ((1, 3, 0), (0, 20, 25)),
            ((1, 3, 1), (0, 35, 40)),
            ((1, 4, 0), (0, 40, 44)),
        ]
    );
}

#[test]
fn a_rejected_group_leaves_the_plan_identical() {
    let mut p = planner(1, 2, "min-s", 0);
    accept(&mut p, &GroupRequest::new(at(100), at(200)).thread(ThreadRequest::new().task(task(30))), at(0));
    let before = p.plan().clone();
    // 44 ms of work cannot fit before 43 ms on one CPU.
    let out = p.submit(&resource_group(43), at(0), None).unwrap();
    assert_eq!(out.decision, Decision::Rejected(Rejection::Infeasible));
    assert_eq!(p.plan(), &before);
    assert_eq!(format!("{:?}", p.plan()), format!("{before:?}"));
}

#[test]
fn tasks_before_the_cutoff_stay_and_the_rest_is_replanned() {
    // Budget 2 ms: the first group is planned from 2 ms on.
    let mut p = planner(1, 0, "d+w*est", 2);
    let a = GroupRequest::new(at(0), at(100)).thread(ThreadRequest::new().task(task(10)).task(task(10)).task(task(10)));
    accept(&mut p, &a, at(0));
    assert_eq!(layout(&p), [((1, 0, 0), (0, 2, 12)), ((1, 0, 1), (0, 12, 22)), ((1, 0, 2), (0, 22, 32))]);
    // At 10 ms the cutoff is 12 ms: A's first task stays; its second (starting at 12) is
    // replanned. H = 1000·d + 1000·EST: B (d 30, EST 12) beats A's second task (d 90).
    let out = p.submit(&GroupRequest::new(at(0), at(30)).thread(ThreadRequest::new().task(task(5))), at(10), None);
    let out = out.unwrap();
    assert_eq!(out.cutoff, at(12));
    assert_eq!((out.tasks, out.k, out.evaluations), (3, 3, 6));
    assert_eq!(
        layout(&p),
        [((1, 0, 0), (0, 2, 12)), ((1, 0, 1), (0, 17, 27)), ((1, 0, 2), (0, 27, 37)), ((2, 0, 0), (0, 12, 17))]
    );
}

/// A guaranteed long task L (released 1 ms, due 100 ms) and a request U released at 3 ms, due
/// at 5 ms. min-s plans L first (EST 1 against 3), which leaves U no room: one backtrack puts
/// U first.
fn backtrack_case(max_backtracks: u32, cost: CostModel, wcet: Duration) -> (Planner, PlanOutcome) {
    let config = PlannerConfig {
        heuristic: Heuristic::MinS,
        planner_wcet: wcet,
        safety: Duration::ZERO,
        cost,
        max_backtracks,
        ..PlannerConfig::new(1, 0)
    };
    let mut p = Planner::new(config).unwrap();
    accept(&mut p, &GroupRequest::new(at(1), at(100)).thread(ThreadRequest::new().task(task(10))), at(0));
    let out = p.submit(&GroupRequest::new(at(3), at(5)).thread(ThreadRequest::new().task(task(1))), at(0), None);
    (p, out.unwrap())
}

#[test]
fn backtracking_finds_the_plan_the_heuristic_missed() {
    let free = CostModel { fixed: Duration::ZERO, per_evaluation: Duration::ZERO };
    let (p, out) = backtrack_case(1, free, Duration::ZERO);
    assert!(out.decision.is_accepted());
    // Step 1 (2 evaluations), step 2 (1, dead end), step 1 again (2), step 2 (1).
    assert_eq!((out.backtracks, out.evaluations), (1, 6));
    assert_eq!(layout(&p), [((1, 0, 0), (0, 4, 14)), ((2, 0, 0), (0, 3, 4))]);

    let (p, out) = backtrack_case(0, free, Duration::ZERO);
    assert_eq!(out.decision, Decision::Rejected(Rejection::Infeasible));
    assert_eq!(layout(&p), [((1, 0, 0), (0, 1, 11))]);
}

#[test]
fn a_search_that_would_pass_its_budget_answers_no() {
    // 1 µs per evaluation and a 3 µs budget: k = 2 (all) fits without backtracking (2 + 1
    // evaluations), but the backtrack needs more.
    let cost = CostModel { fixed: Duration::ZERO, per_evaluation: Duration::from_micros(1) };
    let (p, out) = backtrack_case(8, cost, Duration::from_micros(3));
    assert_eq!(out.decision, Decision::Rejected(Rejection::BudgetExhausted));
    assert_eq!((out.k, out.evaluations, out.cost), (2, 3, Duration::from_micros(3)));
    assert!(out.cost <= out.budget);
    assert_eq!(layout(&p), [((1, 0, 0), (0, 1, 11))]);
}

fn chain_of(n: u64) -> GroupRequest {
    let mut t = ThreadRequest::new();
    for _ in 0..n {
        t = t.task(task(1));
    }
    GroupRequest::new(at(10), at(1_000)).thread(t)
}

#[test]
fn the_budget_chooses_k_and_a_too_small_budget_answers_no() {
    let config = PlannerConfig {
        heuristic: Heuristic::MinD,
        planner_wcet: ms(1),
        safety: Duration::ZERO,
        cost: CostModel { fixed: Duration::from_micros(10), per_evaluation: Duration::from_micros(1) },
        ..PlannerConfig::new(2, 0)
    };
    let mut p = Planner::new(config).unwrap();
    let before = p.plan().clone();
    // 10 tasks need at least 10 µs fixed + 10 evaluations = 20 µs.
    let out = p.submit(&chain_of(10), at(0), Some(Duration::from_micros(19))).unwrap();
    assert_eq!(out.decision, Decision::Rejected(Rejection::BudgetTooSmall { needed: Duration::from_micros(20) }));
    assert_eq!((out.k, out.evaluations, out.cost), (0, 0, Duration::ZERO));
    assert_eq!(p.plan(), &before);
    // 37 µs leaves 27 evaluations: k = 3 (6 + 7·3 = 27).
    let out = p.submit(&chain_of(10), at(0), Some(Duration::from_micros(37))).unwrap();
    assert!(out.decision.is_accepted());
    assert_eq!(out.k, 3);
    assert!(out.evaluations <= 27 && out.cost <= out.budget);
    // The full budget (1 ms) covers k = all for 20 tasks (the new ones and the replanned).
    let out = p.submit(&chain_of(10), at(0), None).unwrap();
    assert_eq!((out.tasks, out.k), (20, 20));
    assert!(out.decision.is_accepted());
    assert_eq!(out.evaluations, 210);
    assert_eq!(out.cost, Duration::from_micros(220));
}

fn locality_group() -> GroupRequest {
    let p7 = Locality { process: 7, home_cpu: 1 };
    let p8 = Locality { process: 8, home_cpu: 1 };
    GroupRequest::new(at(0), at(100))
        .thread(ThreadRequest::new().locality(p7).task(task(10)).task(task(10)))
        .thread(ThreadRequest::new().locality(p8).task(task(10)))
}

fn locality_planner(placement: &str) -> Planner {
    let config = PlannerConfig {
        heuristic: Heuristic::MinS,
        placement: Placement::by_name(placement).unwrap(),
        planner_wcet: Duration::ZERO,
        safety: Duration::ZERO,
        cost: CostModel { fixed: Duration::ZERO, per_evaluation: Duration::ZERO },
        local_percent: 50,
        fast_switch: Duration::ZERO,
        slow_switch: ms(1),
        ..PlannerConfig::new(2, 0)
    };
    Planner::new(config).unwrap()
}

#[test]
fn earliest_placement_takes_home_only_when_it_is_free_in_time() {
    // Home CPU 1 runs tasks in half their WCET; entering a process costs 1 ms. Process 7's
    // thread goes home (free at 0): 1 + 5, then 0 + 5. Process 8's thread could start at 6 at
    // home but at 0 on CPU 0, where it runs at full WCET after a slow switch: 0-11.
    let mut p = locality_planner("earliest");
    accept(&mut p, &locality_group(), at(0));
    assert_eq!(layout(&p), [((1, 0, 0), (1, 0, 6)), ((1, 0, 1), (1, 6, 11)), ((1, 1, 0), (0, 0, 11))]);
}

#[test]
fn only_local_placement_always_goes_home() {
    // Process 8's thread waits for CPU 1 and enters it with a slow switch: 11 + 1 + 5.
    let mut p = locality_planner("only-local");
    accept(&mut p, &locality_group(), at(0));
    assert_eq!(layout(&p), [((1, 0, 0), (1, 0, 6)), ((1, 0, 1), (1, 6, 11)), ((1, 1, 0), (1, 11, 17))]);
}

#[test]
fn staying_within_the_process_saves_slow_switches() {
    let pa = Locality { process: 7, home_cpu: 0 };
    let pb = Locality { process: 8, home_cpu: 0 };
    let g = GroupRequest::new(at(0), at(100))
        .thread(ThreadRequest::new().locality(pa).task(task(5)))
        .thread(ThreadRequest::new().locality(pb).task(task(5)))
        .thread(ThreadRequest::new().locality(pa).task(task(5)));
    for (stay, expected) in [
        // In index order, every switch is slow (2 ms): 0-7, 7-14, 14-21.
        (false, [((1, 0, 0), (0, 0, 7)), ((1, 1, 0), (0, 7, 14)), ((1, 2, 0), (0, 14, 21))]),
        // The second thread of process 7 follows the first with a fast switch.
        (true, [((1, 0, 0), (0, 0, 7)), ((1, 1, 0), (0, 12, 19)), ((1, 2, 0), (0, 7, 12))]),
    ] {
        let config = PlannerConfig {
            heuristic: Heuristic::MinD,
            stay_within_process: stay,
            planner_wcet: Duration::ZERO,
            safety: Duration::ZERO,
            cost: CostModel { fixed: Duration::ZERO, per_evaluation: Duration::ZERO },
            slow_switch: ms(2),
            ..PlannerConfig::new(1, 0)
        };
        let mut p = Planner::new(config).unwrap();
        accept(&mut p, &g, at(0));
        assert_eq!(layout(&p), expected, "stay_within_process = {stay}");
    }
}

#[test]
fn kill_removes_only_unstarted_tasks_and_frees_their_time() {
    let mut p = planner(1, 0, "min-d", 0);
    let a = GroupRequest::new(at(0), at(100)).thread(ThreadRequest::new().task(task(10)).task(task(10)));
    let id = accept(&mut p, &a, at(0));
    assert_eq!(p.kill(id, at(5)), Ok(1));
    assert_eq!(layout(&p), [((1, 0, 0), (0, 0, 10))]);
    assert_eq!(p.plan().cpu_available(0), Some(at(10)));
    // The freed time is planned again: a new task starts at 10.
    accept(&mut p, &GroupRequest::new(at(0), at(30)).thread(ThreadRequest::new().task(task(15))), at(5));
    assert_eq!(layout(&p), [((1, 0, 0), (0, 0, 10)), ((2, 0, 0), (0, 10, 25))]);
    assert_eq!(p.retire(at(10)), 1);
    assert_eq!(p.plan().group_count(), 1);
    assert_eq!(p.kill(id, at(5)), Err(PlanError::UnknownGroup(id)));
}

#[test]
fn malformed_requests_and_full_tables_are_errors() {
    let mut p = planner(2, 1, "min-d", 0);
    let cases = [
        (GroupRequest::new(at(0), at(9)), PlanError::EmptyGroup),
        (GroupRequest::new(at(0), at(9)).thread(ThreadRequest::new()), PlanError::EmptyThread { thread: 0 }),
        (
            GroupRequest::new(at(9), at(0)).thread(ThreadRequest::new().task(task(1))),
            PlanError::DeadlineBeforeRelease { release: at(9), deadline: at(0) },
        ),
        (
            GroupRequest::new(at(0), at(9)).thread(ThreadRequest::new().after(0).task(task(1))),
            PlanError::PredecessorNotEarlier { thread: 0, predecessor: 0 },
        ),
        (
            GroupRequest::new(at(0), at(9)).thread(ThreadRequest::new().task(task(1).shared(ResourceId(1)))),
            PlanError::UnknownResource { resource: ResourceId(1), resources: 1 },
        ),
        (
            GroupRequest::new(at(0), at(9))
                .thread(ThreadRequest::new().task(task(1).shared(ResourceId(0)).exclusive(ResourceId(0)))),
            PlanError::DuplicateResource { thread: 0, task: 0, resource: ResourceId(0) },
        ),
        (
            GroupRequest::new(at(0), at(9))
                .thread(ThreadRequest::new().locality(Locality { process: 0, home_cpu: 2 }).task(task(1))),
            PlanError::UnknownCpu { thread: 0, cpu: 2, cpus: 2 },
        ),
    ];
    for (g, err) in cases {
        assert_eq!(p.submit(&g, at(0), None), Err(err));
        assert!(!err.to_string().is_empty());
    }
    let config = PlannerConfig { capacity: Capacity::for_tasks(2), ..PlannerConfig::new(1, 0) };
    let mut small = Planner::new(config).unwrap();
    assert_eq!(small.submit(&chain_of(3), at(0), None), Err(PlanError::Full { table: "task", capacity: 2 }));
    assert_eq!(small.plan().task_count(), 0);
}

#[test]
fn planning_killing_and_retiring_do_not_allocate() {
    let config = PlannerConfig {
        heuristic: Heuristic::MinL,
        placement: Placement::OnlyLocal,
        stay_within_process: true,
        planner_wcet: ms(5),
        safety: Duration::ZERO,
        slow_switch: Duration::from_micros(100),
        local_percent: 80,
        capacity: Capacity::for_tasks(64),
        ..PlannerConfig::new(3, 2)
    };
    let mut p = Planner::new(config).unwrap();
    let loc = Locality { process: 1, home_cpu: 2 };
    let requests: Vec<(GroupRequest, Time)> = (0..12)
        .map(|i| {
            let g = resource_group(if i % 3 == 2 { 20 } else { 200 });
            let g = GroupRequest { release: at(10 * i), deadline: g.deadline + ms(10 * i), ..g };
            (g.thread(ThreadRequest::new().locality(loc).task(task(2)).task(task(3))), at(4 * i))
        })
        .collect();
    let before = allocations();
    let mut accepted = 0;
    for (i, (g, now)) in requests.iter().enumerate() {
        let wait = if i == 5 { Some(Duration::from_nanos(1)) } else { None };
        if let Decision::Accepted(id) = p.submit(g, *now, wait).unwrap().decision {
            accepted += 1;
            if i % 4 == 0 {
                p.kill(id, *now).unwrap();
            }
        }
        p.retire(*now);
    }
    assert_eq!(allocations() - before, 0);
    // Replanned threads keep their CPU and tasks are never advanced, so one fewer fits.
    assert!(accepted >= 5, "only {accepted} accepted");
}

// ---------------------------------------------------------------------------------------------
// Random request streams, checked independently.

/// Everything the checker knows about an accepted group: its request.
type Accepted = HashMap<GroupId, GroupRequest>;

/// Check every invariant of a plan from the requests alone.
fn check_plan(p: &Planner, accepted: &Accepted) -> Result<(), String> {
    let cfg = p.config();
    let tasks: Vec<PlannedTask<'_>> = p.plan().tasks().collect();
    let mut by_key = HashMap::new();
    for t in &tasks {
        let g = accepted.get(&t.group).ok_or(format!("unknown group {:?}", t.group))?;
        let th = &g.threads[t.thread];
        let req = &th.tasks[t.task];
        if t.start < g.release {
            return Err(format!("{t:?} starts before its release {:?}", g.release));
        }
        if t.finish > g.deadline {
            return Err(format!("{t:?} ends after its deadline {:?}", g.deadline));
        }
        let wcet = req.wcet.as_nanos() as u64;
        let exec = match th.locality {
            Some(l) if usize::from(l.home_cpu) == t.cpu => (wcet * u64::from(cfg.local_percent)).div_ceil(100),
            _ => wcet,
        };
        let len = (t.finish - t.start).as_nanos() as u64;
        let (lo, hi) = (cfg.fast_switch.min(cfg.slow_switch), cfg.fast_switch.max(cfg.slow_switch));
        if len < exec + lo.as_nanos() as u64 || len > exec + hi.as_nanos() as u64 {
            return Err(format!("{t:?} lasts {len} ns, execution {exec} ns"));
        }
        if t.resources != req.resources.as_slice() {
            return Err(format!("{t:?} holds other resources than requested"));
        }
        by_key.insert((t.group, t.thread, t.task), *t);
    }
    for t in &tasks {
        let g = &accepted[&t.group];
        if t.task > 0 {
            if let Some(prev) = by_key.get(&(t.group, t.thread, t.task - 1)) {
                if prev.cpu != t.cpu {
                    return Err(format!("thread migrates: {prev:?} then {t:?}"));
                }
                if t.start < prev.finish {
                    return Err(format!("{t:?} starts before its predecessor {prev:?} ends"));
                }
            }
        } else {
            for &p in &g.threads[t.thread].after {
                for j in 0..g.threads[p].tasks.len() {
                    if let Some(prev) = by_key.get(&(t.group, p, j))
                        && t.start < prev.finish
                    {
                        return Err(format!("{t:?} starts before predecessor thread's {prev:?} ends"));
                    }
                }
            }
        }
    }
    for (i, a) in tasks.iter().enumerate() {
        for b in &tasks[i + 1..] {
            let overlap = a.start < b.finish && b.start < a.finish;
            if !overlap {
                continue;
            }
            if a.cpu == b.cpu {
                return Err(format!("CPU overlap: {a:?} and {b:?}"));
            }
            for ua in a.resources {
                for ub in b.resources {
                    if ua.resource == ub.resource && (ua.mode == Mode::Exclusive || ub.mode == Mode::Exclusive) {
                        return Err(format!("resource {:?} conflict: {a:?} and {b:?}", ua.resource));
                    }
                }
            }
        }
    }
    Ok(())
}

fn arb_locality(cpus: usize) -> impl Strategy<Value = Option<Locality>> {
    prop::option::weighted(
        0.5,
        (0u32..3, 0..cpus as u16).prop_map(|(process, home_cpu)| Locality { process, home_cpu }),
    )
}

/// A group of up to 8 threads of up to 5 tasks (so at most 40), random predecessors, random
/// resource uses, WCETs of 1-20 ms, released in the next 50 ms, due within 1-4 times its work.
fn arb_group(cpus: usize, resources: usize) -> impl Strategy<Value = GroupRequest> {
    let use_ = (0..resources.max(1) as u16, any::<bool>()).prop_map(|(r, excl)| ResourceUse {
        resource: ResourceId(r),
        mode: if excl { Mode::Exclusive } else { Mode::Shared },
    });
    let uses = prop::collection::vec(use_, 0..=if resources == 0 { 0 } else { 2 });
    let task = (1u64..=20, uses).prop_map(|(w, mut uses)| {
        let mut seen = Vec::new();
        uses.retain(|u| {
            let fresh = !seen.contains(&u.resource);
            seen.push(u.resource);
            fresh
        });
        TaskRequest { wcet: ms(w), resources: uses }
    });
    let thread = (
        prop::collection::vec(task, 1..=5),
        prop::collection::vec(any::<prop::sample::Index>(), 0..3),
        arb_locality(cpus),
    );
    (prop::collection::vec(thread, 1..=8), 0u64..50, 1u64..=4, 0u32..10).prop_map(
        move |(threads, release, factor, importance)| {
            let mut g = GroupRequest::new(at(release), at(release)).importance(importance);
            let mut work = 0;
            for (i, (tasks, preds, locality)) in threads.into_iter().enumerate() {
                let mut after: Vec<usize> =
                    if i == 0 { Vec::new() } else { preds.iter().map(|ix| ix.index(i)).collect() };
                after.sort_unstable();
                after.dedup();
                work += tasks.iter().map(|t| t.wcet.as_millis() as u64).sum::<u64>();
                g.threads.push(ThreadRequest { tasks, after, locality });
            }
            g.deadline = at(release + work * factor / cpus.max(1) as u64 + 5);
            g
        },
    )
}

#[derive(Debug, Clone)]
enum Op {
    Submit { group: GroupRequest, advance_ms: u64, max_wait_ms: Option<u64> },
    Kill { which: prop::sample::Index, advance_ms: u64 },
}

fn arb_world() -> impl Strategy<Value = (PlannerConfig, Vec<Op>)> {
    (1usize..=4, 0usize..=5).prop_flat_map(|(cpus, resources)| {
        let heuristic = prop::sample::select(vec!["min-d", "min-s", "est", "min-l", "d+w*est"]);
        let placement = prop::sample::select(vec!["earliest", "only-local"]);
        let config = (heuristic, placement, any::<bool>(), 0u32..4, 0u64..20, 0u64..3, 50u32..=100, 0u64..20_000)
            .prop_map(move |(h, pl, stay, backtracks, wcet_ms, slow, local, per_eval_ns)| PlannerConfig {
                heuristic: Heuristic::by_name(h).unwrap().with_weight_milli(1500),
                placement: Placement::by_name(pl).unwrap(),
                stay_within_process: stay,
                max_backtracks: backtracks,
                planner_wcet: ms(wcet_ms),
                safety: Duration::from_micros(500),
                cost: CostModel { fixed: Duration::from_micros(20), per_evaluation: Duration::from_nanos(per_eval_ns) },
                local_percent: local,
                fast_switch: Duration::ZERO,
                slow_switch: ms(slow),
                capacity: Capacity::for_tasks(400),
                ..PlannerConfig::new(cpus, resources)
            });
        let op = prop_oneof![
            4 => (arb_group(cpus, resources), 0u64..30, prop::option::of(0u64..30))
                .prop_map(|(group, advance_ms, max_wait_ms)| Op::Submit { group, advance_ms, max_wait_ms }),
            1 => (any::<prop::sample::Index>(), 0u64..30).prop_map(|(which, advance_ms)| Op::Kill { which, advance_ms }),
        ];
        (config, prop::collection::vec(op, 1..8))
    })
}

type Slot = (usize, Time, Time);

fn slots(p: &Planner) -> HashMap<(GroupId, usize, usize), Slot> {
    p.plan().tasks().map(|t| ((t.group, t.thread, t.task), (t.cpu, t.start, t.finish))).collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn random_request_streams_keep_every_promise((config, ops) in arb_world()) {
        let mut p = Planner::new(config).unwrap();
        let mut accepted = Accepted::new();
        let mut ids = Vec::new();
        let mut now = Time::ZERO;
        for op in ops {
            match op {
                Op::Submit { group, advance_ms, max_wait_ms } => {
                    now += ms(advance_ms);
                    let max_wait = max_wait_ms.map(ms);
                    let cutoff = now + p.budget(max_wait);
                    let before = p.plan().clone();
                    let old = slots(&p);
                    let out = p.submit(&group, now, max_wait).unwrap();
                    prop_assert!(out.cost <= out.budget, "{out:?}");
                    prop_assert_eq!(out.cutoff, cutoff);
                    prop_assert!(out.k <= out.tasks);
                    let new = slots(&p);
                    match out.decision {
                        Decision::Accepted(id) => {
                            accepted.insert(id, group.clone());
                            ids.push(id);
                            prop_assert_eq!(new.len(), old.len() + group.task_count());
                        }
                        Decision::Rejected(_) => prop_assert_eq!(p.plan(), &before),
                    }
                    for (key, slot) in &old {
                        if slot.1 < cutoff {
                            // Reserved for the dispatchers: never moved.
                            prop_assert_eq!(new.get(key), Some(slot));
                        } else {
                            prop_assert!(new[key].1 >= cutoff, "{key:?} moved before the cutoff");
                        }
                    }
                    for (key, slot) in &new {
                        if !old.contains_key(key) {
                            prop_assert!(slot.1 >= cutoff, "new task {key:?} starts before the cutoff");
                        }
                    }
                }
                Op::Kill { which, advance_ms } => {
                    if ids.is_empty() {
                        continue;
                    }
                    now += ms(advance_ms);
                    let id = ids[which.index(ids.len())];
                    let old = slots(&p);
                    let removed = p.kill(id, now).unwrap();
                    let new = slots(&p);
                    let unstarted = old.iter().filter(|(k, s)| k.0 == id && s.1 >= now).count();
                    prop_assert_eq!(removed, unstarted);
                    for (key, slot) in &old {
                        if key.0 == id && slot.1 >= now {
                            prop_assert!(!new.contains_key(key));
                        } else {
                            prop_assert_eq!(new.get(key), Some(slot));
                        }
                    }
                }
            }
            if let Err(e) = check_plan(&p, &accepted) {
                prop_assert!(false, "{}", e);
            }
        }
    }

    #[test]
    fn the_modelled_cost_never_passes_the_budget(
        group in arb_group(3, 3),
        wait_us in 0u64..400,
        per_eval_ns in 1u64..5_000,
    ) {
        let config = PlannerConfig {
            planner_wcet: ms(1),
            safety: Duration::from_micros(10),
            cost: CostModel { fixed: Duration::from_micros(5), per_evaluation: Duration::from_nanos(per_eval_ns) },
            max_backtracks: 50,
            ..PlannerConfig::new(3, 3)
        };
        let mut p = Planner::new(config).unwrap();
        let out = p.submit(&group, Time::ZERO, Some(Duration::from_micros(wait_us))).unwrap();
        prop_assert!(out.cost <= out.budget, "{out:?}");
        let n = group.task_count() as u64;
        let bound = |k: u64| k * (k + 1) / 2 + (n - k) * k;
        match out.decision {
            Decision::Rejected(Rejection::BudgetTooSmall { needed }) => {
                prop_assert!(needed > out.budget);
                prop_assert_eq!(needed, config.cost.cost(n));
            }
            _ => {
                // k is the largest whose no-backtrack bound fits.
                let k = out.k as u64;
                prop_assert!(config.cost.cost(bound(k)) <= out.budget);
                if k < n {
                    prop_assert!(config.cost.cost(bound(k + 1)) > out.budget);
                }
                if out.backtracks == 0 {
                    prop_assert!(out.evaluations <= bound(k));
                }
            }
        }
    }
}
