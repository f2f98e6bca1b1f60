//! The `plan.*` metrics: wall time of the Spring planner on requests of a fixed size, and
//! whether any request ran past the budget it declared.
//!
//! Owns the planning workload ([`PLAN_WORKLOAD`]) and its pseudo-random generator (seeded, so
//! every run plans the same requests). It has no peer: the planner is measured against its
//! own bar. It must not time anything but `Planner::submit`.
//!
//! - `plan.100x4` / `plan.100x4.max`: median and maximum wall time of one request that plans
//!   100 tasks (60 guaranteed ones after the cutoff line, replanned, plus a new group of 40)
//!   over 4 CPUs and 5 resources, with every task considered at every step (k = all).
//! - `plan.budget_overruns`: how many of those requests took longer, in wall time, than the
//!   budget the planner gave them (its declared WCET minus the safety window).

use std::hint::black_box;
use std::time::{Duration, Instant};

use tempi::policy::admit::planner::{
    Capacity, CostModel, Decision, GroupRequest, Heuristic, PlanOutcome, Planner, PlannerConfig, ResourceId,
    TaskRequest, ThreadRequest,
};
use tempi::Time;

use super::{median, progress, throughput, Metric, Sizes};

/// Human description of the planning workload, printed with its results.
pub(super) const PLAN_WORKLOAD: &str = "4 CPUs, 5 resources, d+w*est (W = 1), k = all, 8 backtracks; a plan of \
     60 guaranteed tasks (3 groups of 5 threads x 4 tasks) replanned with a new group of 40 (10 threads x 4 tasks): \
     WCETs 0.1-2 ms, each task holding each resource with probability 0.15 (half exclusive), each thread after \
     an earlier one with probability 0.3";

const CPUS: usize = 4;
const RESOURCES: usize = 5;

/// SplitMix64: a small, fixed pseudo-random sequence, so the workload is the same every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// A group of `threads` threads of 4 tasks, released at `release`, due `slack` times its
/// total work after it.
fn random_group(rng: &mut Rng, threads: usize, release: Time, slack: f64) -> GroupRequest {
    let mut g = GroupRequest::new(release, release);
    let mut work = Duration::ZERO;
    for i in 0..threads {
        let mut t = ThreadRequest::new();
        if i > 0 && rng.chance(30) {
            t = t.after(rng.range(0, i as u64 - 1) as usize);
        }
        for _ in 0..4 {
            let wcet = Duration::from_micros(rng.range(100, 2_000));
            work += wcet;
            let mut task = TaskRequest::new(wcet);
            for r in 0..RESOURCES as u16 {
                if rng.chance(15) {
                    task = if rng.chance(50) { task.exclusive(ResourceId(r)) } else { task.shared(ResourceId(r)) };
                }
            }
            t = t.task(task);
        }
        g = g.thread(t);
    }
    g.deadline = release + work.mul_f64(slack);
    g
}

/// The planner every request starts from: 60 tasks guaranteed, all after any request's
/// cutoff line (they are released at 20 ms, requests arrive at 0 with a budget under 1 ms).
fn base_planner(rng: &mut Rng) -> Result<(Planner, Duration), String> {
    let config = PlannerConfig {
        heuristic: Heuristic::DPlusWEst { weight_milli: 1000 },
        max_backtracks: 8,
        planner_wcet: Duration::from_millis(1),
        safety: Duration::from_micros(100),
        // Conservative per-evaluation cost, so k = all (5050 evaluations for 100 tasks) fits
        // the 900 µs budget: 20 µs + 5050 x 150 ns = 777.5 µs.
        cost: CostModel { fixed: Duration::from_micros(20), per_evaluation: Duration::from_nanos(150) },
        capacity: Capacity::for_tasks(256),
        ..PlannerConfig::new(CPUS, RESOURCES)
    };
    let mut planner = Planner::new(config).map_err(|e| e.to_string())?;
    let mut tries = 0;
    while planner.plan().task_count() < 60 {
        tries += 1;
        if tries > 100 {
            return Err("plan benchmark: could not build the starting plan of 60 tasks".into());
        }
        let g = random_group(rng, 5, Time::from_millis(20), 1.0);
        planner.submit(&g, Time::ZERO, None).map_err(|e| e.to_string())?;
    }
    let budget = planner.budget(None);
    Ok((planner, budget))
}

/// The `SCHED_FIFO` priority the measuring thread asks for, so other processes on a busy
/// machine do not preempt it in the middle of a request.
const PLAN_FIFO: i32 = 10;

struct PlanSample {
    wall_ns: Vec<f64>,
    accepted: usize,
    evaluations: u64,
    modelled_ns: Vec<f64>,
    overruns: usize,
    /// What could not be set up for the measuring thread (pinning, `SCHED_FIFO`).
    setup_notes: Vec<String>,
}

/// Measure `requests` requests on a thread pinned to the benchmark CPU under `SCHED_FIFO`
/// when the OS allows it.
fn plan_run(requests: usize) -> Result<PlanSample, String> {
    std::thread::spawn(move || {
        let mut setup_notes = Vec::new();
        if let Err(e) = tempi::os::pin_to_cpu(super::BENCH_CPU) {
            setup_notes.push(format!("not pinned: {e}"));
        }
        if let Err(e) = tempi::os::set_fifo(PLAN_FIFO) {
            setup_notes.push(format!("not SCHED_FIFO: {e}"));
        }
        plan_requests(requests, setup_notes)
    })
    .join()
    .map_err(|_| "plan benchmark thread panicked".to_string())?
}

fn plan_requests(requests: usize, setup_notes: Vec<String>) -> Result<PlanSample, String> {
    let mut rng = Rng(0x5eed_0f5a_7971_u64);
    let (mut planner, budget) = base_planner(&mut rng)?;
    let base_tasks = planner.plan().task_count();
    let groups: Vec<GroupRequest> =
        (0..requests).map(|_| random_group(&mut rng, 10, Time::from_millis(1), 0.6)).collect();
    let mut s = PlanSample {
        wall_ns: Vec::with_capacity(requests),
        accepted: 0,
        evaluations: 0,
        modelled_ns: Vec::with_capacity(requests),
        overruns: 0,
        setup_notes,
    };
    // One warm-up request, then every request against the same starting plan.
    one_request(&mut planner, &groups[0], base_tasks)?;
    for g in &groups {
        let (out, wall) = one_request(&mut planner, g, base_tasks)?;
        if wall > budget {
            s.overruns += 1;
        }
        s.accepted += usize::from(out.decision.is_accepted());
        s.evaluations += out.evaluations;
        s.wall_ns.push(wall.as_nanos() as f64);
        s.modelled_ns.push(out.cost.as_nanos() as f64);
    }
    Ok(s)
}

/// Time one request; an accepted group is then killed and retired again (untimed). The
/// starting plan's tasks all start after the cutoff line, so where a request left them does
/// not change the next search.
fn one_request(planner: &mut Planner, g: &GroupRequest, base_tasks: usize) -> Result<(PlanOutcome, Duration), String> {
    let t0 = Instant::now();
    let out = planner.submit(black_box(g), Time::ZERO, None);
    let wall = t0.elapsed();
    let out = out.map_err(|e| e.to_string())?;
    if let Decision::Accepted(id) = out.decision {
        planner.kill(id, Time::ZERO).map_err(|e| e.to_string())?;
        planner.retire(Time::ZERO);
    }
    let expected = base_tasks + g.task_count();
    if planner.plan().task_count() != base_tasks || out.tasks != expected || out.k != expected {
        return Err(format!(
            "plan benchmark: planned {} tasks with k = {} (expected {expected} and all)",
            out.tasks, out.k
        ));
    }
    Ok((out, wall))
}

pub(super) fn plan_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("plan: {} requests of 100 tasks over 4 CPUs", sz.plan_requests));
    let s = plan_run(sz.plan_requests)?;
    let n = s.wall_ns.len();
    let max = s.wall_ns.iter().copied().fold(0.0, f64::max);
    let med = median(s.wall_ns.clone());
    let setup = if s.setup_notes.is_empty() { String::new() } else { format!("; {}", s.setup_notes.join("; ")) };
    let note = format!(
        "{PLAN_WORKLOAD}; {n} requests, {} accepted, {:.0} evaluations per request on average; wall median {:.1} us, \
         max {:.1} us (bar: 1 ms); modelled planner time median {:.1} us{setup}",
        s.accepted,
        s.evaluations as f64 / n.max(1) as f64,
        med / 1e3,
        max / 1e3,
        median(s.modelled_ns) / 1e3
    );
    metrics.push(throughput("plan.100x4", med, "ns", &note));
    metrics.push(throughput("plan.100x4.max", max, "ns", "same requests as plan.100x4: the slowest"));
    metrics.push(throughput(
        "plan.budget_overruns",
        s.overruns as f64,
        "requests",
        "requests of plan.100x4 whose wall time passed their budget (declared planner WCET 1 ms - 100 us safety \
         window = 900 us); must be 0",
    ));
    Ok(())
}
