//! The `spring-*` experiments: section 5 of Humphrey and Stankovic, "Predictable Threads for
//! Dynamic, Hard Real-Time Environments" (the Spring threads package), rebuilt on the planner
//! of `tempi::policy::admit::planner` with its modelled cost.
//!
//! - `spring-planner` (figures 11 and 12): modelled planner time against the number of tasks
//!   planned, one curve per planner budget;
//! - `spring-fastswitch` (figure 13): share of fast context switches against the probability
//!   that consecutive threads of a group share a process, with and without the
//!   stay-within-process rule;
//! - `spring-locality` (figures 14 and 15): acceptance ratio against the deadline multiplier,
//!   `only-local` against `earliest` placement, at moderate and heavy load.
//!
//! Owns the workloads (seeded, so every run plans the same requests), the statistics, the
//! paper's conclusions and the reports. Nothing runs on a dispatcher: the executed schedule of
//! a run is the plan itself, since a guaranteed task runs exactly where it is planned. It must
//! not touch the other experiments. Parameters the paper does not state are listed in
//! `docs/EXPERIMENTS.md` with the reading chosen.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::time::Duration;

use serde_json::{json, Value};
use tempi::policy::admit::planner::{
    Capacity, CostModel, Decision, GroupId, GroupRequest, Locality, Placement, Planner, PlannerConfig, TaskRequest,
    ThreadRequest,
};
use tempi::Time;

use super::ExperimentArgs;

/// CPUs (application processors): not stated in the paper; its figure 3 shows three.
const CPUS: usize = 3;
/// The modelled cost of one evaluation: (450 − 50) ms over the 903 evaluations of 42 tasks
/// with k = all, the paper's knee at a 450 ms budget, rounded down so 42 tasks still fit.
const PER_EVALUATION: Duration = Duration::from_micros(442);
/// The safety window taken off the planner's declared WCET.
const SAFETY: Duration = Duration::from_millis(50);
/// Length of one simulated run of figures 13 to 15.
const RUN_LENGTH: Duration = Duration::from_secs(200);

/// SplitMix64, so every run's workload is a fixed function of its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
    /// Exponential with mean `mean`.
    fn exponential(&mut self, mean: Duration) -> Duration {
        mean.mul_f64(-(1.0 - self.unit()).ln())
    }
}

/// Mean and half-width of the 95% confidence interval (Student's t).
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len();
    if n == 0 {
        return (0.0, 0.0);
    }
    let mean = xs.iter().sum::<f64>() / n as f64;
    if n < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    const T: [f64; 10] = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228];
    let df = n - 1;
    // Past ten degrees of freedom, 1.96 + 2.5/df is within 1% of the t quantile.
    let t = if df <= 10 { T[df - 1] } else { 1.96 + 2.5 / df as f64 };
    (mean, t * (var / n as f64).sqrt())
}

struct Conclusion {
    claim: String,
    holds: bool,
    detail: String,
}

fn conclusions_text(s: &mut String, checks: &[Conclusion]) {
    let _ = writeln!(s, "\nPaper's conclusions, checked on these runs:");
    for c in checks {
        let mark = if c.holds { "[holds]" } else { "[does not hold]" };
        let _ = writeln!(s, "  {mark} {}\n      {}", c.claim, c.detail);
    }
}

fn conclusions_json(checks: &[Conclusion]) -> Value {
    Value::Array(checks.iter().map(|c| json!({"claim": c.claim, "holds": c.holds, "detail": c.detail})).collect())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Run `args.name` (one of the `spring-*` names) and print its report.
pub(super) fn run(args: &ExperimentArgs) -> Result<(), String> {
    let runs = if args.quick { 5 } else { 50 };
    let (text, value) = match args.name.as_str() {
        "spring-planner" => planner_experiment(runs)?,
        "spring-fastswitch" => fastswitch_experiment(runs, args.quick)?,
        "spring-locality" => locality_experiment(runs, args.quick)?,
        other => return Err(format!("unknown experiment {other}")),
    };
    if args.json {
        println!("{value}");
    } else {
        print!("{text}");
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Figures 11 and 12.

/// Planner WCETs (the paper's "budgets"): figure 11 spans 50-350 ms, figure 12 450-1000 ms.
const BUDGETS_MS: [u64; 8] = [50, 150, 250, 350, 450, 600, 800, 1000];
const MAX_TASKS: usize = 100;

/// One request of `n` tasks (threads of three tasks, WCET U(50 ms, 1 s), some threads after
/// an earlier one), due three times its work after its release, so it is rarely refused.
fn sized_request(rng: &mut Rng, n: usize) -> GroupRequest {
    let mut g = GroupRequest::new(Time::ZERO, Time::ZERO);
    let mut work = Duration::ZERO;
    let mut left = n;
    while left > 0 {
        let mut t = ThreadRequest::new();
        let i = g.threads.len();
        if i > 0 && rng.chance(0.3) {
            t = t.after(rng.range(0, i as u64 - 1) as usize);
        }
        for _ in 0..left.min(3) {
            let wcet = Duration::from_millis(rng.range(50, 1000));
            work += wcet;
            t = t.task(TaskRequest::new(wcet));
        }
        left -= left.min(3);
        g = g.thread(t);
    }
    g.deadline = Time::ZERO + work.mul_f64(3.0);
    g
}

struct PlannerPoint {
    budget_ms: u64,
    tasks: usize,
    mean_ms: f64,
    ci_ms: f64,
    max_ms: f64,
    /// Runs in which k covered every task.
    k_all: usize,
    min_k: usize,
    accepted: usize,
}

fn planner_experiment(runs: usize) -> Result<(String, Value), String> {
    let mut points = Vec::new();
    for &b in &BUDGETS_MS {
        let config = PlannerConfig {
            planner_wcet: Duration::from_millis(b),
            safety: SAFETY,
            cost: CostModel { fixed: Duration::ZERO, per_evaluation: PER_EVALUATION },
            capacity: Capacity::for_tasks(MAX_TASKS),
            ..PlannerConfig::new(CPUS, 0)
        };
        let base = Planner::new(config).map_err(|e| e.to_string())?;
        for n in 1..=MAX_TASKS {
            let mut costs = Vec::with_capacity(runs);
            let (mut k_all, mut min_k, mut accepted) = (0, usize::MAX, 0);
            for run in 0..runs {
                let mut rng = Rng(0x5011_0000 + (n as u64) * 1000 + run as u64);
                let g = sized_request(&mut rng, n);
                let mut p = base.clone();
                let out = p.submit(&g, Time::ZERO, None).map_err(|e| e.to_string())?;
                costs.push(ms(out.cost));
                k_all += usize::from(out.k == n);
                min_k = min_k.min(out.k);
                accepted += usize::from(out.decision.is_accepted());
            }
            let (mean_ms, ci_ms) = mean_ci(&costs);
            let max_ms = costs.iter().copied().fold(0.0, f64::max);
            points.push(PlannerPoint { budget_ms: b, tasks: n, mean_ms, ci_ms, max_ms, k_all, min_k, accepted });
        }
    }

    let budget_of = |b: u64| ms(Duration::from_millis(b).saturating_sub(SAFETY));
    let predicted_knee = |b: u64| {
        let evals = (budget_of(b) / ms(PER_EVALUATION)).floor() as usize;
        (1..=MAX_TASKS).take_while(|&n| n * (n + 1) / 2 <= evals).last().unwrap_or(0)
    };
    let knee =
        |b: u64| points.iter().filter(|p| p.budget_ms == b && p.k_all == runs).map(|p| p.tasks).max().unwrap_or(0);
    let mut checks = Vec::new();
    let over: Vec<&PlannerPoint> = points.iter().filter(|p| p.max_ms > budget_of(p.budget_ms) + 1e-9).collect();
    checks.push(Conclusion {
        claim: "The planner never runs past its budget (declared WCET minus the 50 ms safety window)".into(),
        holds: over.is_empty(),
        detail: format!(
            "{} of {} requests over budget; largest time {:.1} ms at a 1000 ms WCET (budget 950 ms)",
            over.len(),
            points.len() * runs,
            points.iter().filter(|p| p.budget_ms == 1000).map(|p| p.max_ms).fold(0.0, f64::max)
        ),
    });
    let below_knee_ok = BUDGETS_MS.iter().all(|&b| {
        let kp = predicted_knee(b);
        points.iter().filter(|p| p.budget_ms == b && p.tasks <= kp).all(|p| p.k_all == runs)
    });
    let knees: Vec<String> =
        BUDGETS_MS.iter().map(|&b| format!("{b} ms: {} ({})", knee(b), predicted_knee(b))).collect();
    checks.push(Conclusion {
        claim: "Below the knee every task is considered at every step (k = all)".into(),
        holds: below_knee_ok,
        detail: format!("largest n with k = all in every run (predicted from the cost bound): {}", knees.join(", ")),
    });
    checks.push(Conclusion {
        claim: "At a 450 ms budget, k = all up to 42 tasks and is limited above".into(),
        holds: knee(450) == 42,
        detail: format!("knee at {} tasks", knee(450)),
    });
    let flat = BUDGETS_MS.iter().filter(|&&b| b > 50).all(|&b| {
        let top = points.iter().filter(|p| p.budget_ms == b).map(|p| p.max_ms).fold(0.0, f64::max);
        top <= budget_of(b) + 1e-9 && top >= 0.9 * budget_of(b)
    });
    checks.push(Conclusion {
        claim: "Past the knee the planner time stays flat, its maximum about 50 ms below the WCET".into(),
        holds: flat,
        detail: "every WCET from 150 ms: largest time within 10% under WCET - 50 ms".into(),
    });
    let accepted_50 = points.iter().filter(|p| p.budget_ms == 50).map(|p| p.accepted).sum::<usize>();
    let accepted_450 = points.iter().filter(|p| p.budget_ms == 450).map(|p| p.accepted).sum::<usize>();
    checks.push(Conclusion {
        claim: "A 50 ms WCET is not a reasonable value (the planner cannot do its work)".into(),
        holds: accepted_50 * 2 < accepted_450,
        detail: format!(
            "accepted at 50 ms: {accepted_50} of {}; at 450 ms: {accepted_450}",
            points.len() / BUDGETS_MS.len() * runs
        ),
    });

    let mut s = String::new();
    let _ = writeln!(
        s,
        "spring-planner (figures 11-12): modelled planner time against tasks planned\n\
         {CPUS} CPUs, d+w*est (W = 1), 8 backtracks; cost = {} us per evaluation, no fixed cost; safety window \
         50 ms; {runs} requests per point (threads of 3 tasks, WCET U(50 ms, 1 s), deadline 3 x work)\n",
        PER_EVALUATION.as_micros()
    );
    let shown: Vec<usize> = [5, 10, 20, 30, 40, 42, 43, 50, 60, 70, 80, 90, 100].into();
    let _ = write!(s, "{:>7}", "tasks");
    for b in BUDGETS_MS {
        let _ = write!(s, " {:>17}", format!("{b} ms WCET"));
    }
    let _ = writeln!(s, "\n{:>7} (mean planner time in ms +- 95% CI; * = k limited in some run)", "");
    for &n in &shown {
        let _ = write!(s, "{n:>7}");
        for b in BUDGETS_MS {
            if let Some(p) = points.iter().find(|p| p.budget_ms == b && p.tasks == n) {
                let mark = if p.k_all < runs { "*" } else { " " };
                let _ = write!(s, " {:>16}{mark}", format!("{:.1} +- {:.1}", p.mean_ms, p.ci_ms));
            }
        }
        let _ = writeln!(s);
    }
    conclusions_text(&mut s, &checks);
    let rows: Vec<Value> = points
        .iter()
        .map(|p| {
            json!({"wcet_ms": p.budget_ms, "tasks": p.tasks, "mean_ms": p.mean_ms, "ci95_ms": p.ci_ms,
                   "max_ms": p.max_ms, "runs_k_all": p.k_all, "min_k": p.min_k, "accepted": p.accepted})
        })
        .collect();
    let value = json!({"experiment": "spring-planner", "runs_per_point": runs, "cpus": CPUS,
        "per_evaluation_us": PER_EVALUATION.as_micros() as u64, "safety_ms": 50, "points": rows,
        "conclusions": conclusions_json(&checks)});
    Ok((s, value))
}

// ---------------------------------------------------------------------------------------------
// Figures 13 to 15: arrivals of thread groups from a few Poisson sources, planned as they come.

/// A group template: its threads (chained in order), each with its process and tasks' WCETs.
struct Template {
    threads: Vec<(u32, Vec<Duration>)>,
    work: Duration,
}

/// What one run produced.
struct RunResult {
    arrivals: usize,
    accepted: usize,
    fast: usize,
    switches: usize,
    local: usize,
    tasks: usize,
}

/// Plan, in arrival order, the groups of `templates`, each an independent Poisson source whose
/// mean gap is `gap_factor` times its work, for [`RUN_LENGTH`]; deadlines are `multiplier`
/// times the group's work. `homes[p]` is process `p`'s CPU.
fn simulate_run(
    rng: &mut Rng,
    templates: &[Template],
    homes: &[u16],
    gap_factor: f64,
    multiplier: f64,
    placement: Placement,
    stay_within_process: bool,
) -> Result<RunResult, String> {
    let mut arrivals: Vec<(Duration, usize)> = Vec::new();
    for (i, t) in templates.iter().enumerate() {
        let mut at = rng.exponential(t.work.mul_f64(gap_factor));
        while at < RUN_LENGTH {
            arrivals.push((at, i));
            at += rng.exponential(t.work.mul_f64(gap_factor));
        }
    }
    arrivals.sort();
    let tasks: usize =
        arrivals.iter().map(|&(_, i)| templates[i].threads.iter().map(|t| t.1.len()).sum::<usize>()).sum();
    let config = PlannerConfig {
        placement,
        stay_within_process,
        planner_wcet: Duration::from_millis(450),
        safety: SAFETY,
        cost: CostModel { fixed: Duration::ZERO, per_evaluation: PER_EVALUATION },
        // Nothing is retired: at the end the plan is the whole executed schedule.
        capacity: Capacity::for_tasks(tasks.max(1)),
        ..PlannerConfig::new(CPUS, 0)
    };
    let mut planner = Planner::new(config).map_err(|e| e.to_string())?;
    let mut template_of: HashMap<GroupId, usize> = HashMap::with_capacity(arrivals.len());
    let mut accepted = 0;
    for &(at, i) in &arrivals {
        let now = Time::ZERO + at;
        let t = &templates[i];
        let mut g = GroupRequest::new(now, now + t.work.mul_f64(multiplier));
        for (k, (process, wcets)) in t.threads.iter().enumerate() {
            let mut th =
                ThreadRequest::new().locality(Locality { process: *process, home_cpu: homes[*process as usize] });
            if k > 0 {
                th = th.after(k - 1);
            }
            for &w in wcets {
                th = th.task(TaskRequest::new(w));
            }
            g = g.thread(th);
        }
        let out = planner.submit(&g, now, None).map_err(|e| e.to_string())?;
        if let Decision::Accepted(id) = out.decision {
            accepted += 1;
            template_of.insert(id, i);
        }
    }
    // The executed schedule: per CPU in start order, a switch is fast when the task before it
    // on that CPU belonged to the same process.
    let mut per_cpu: Vec<Vec<(Time, u32)>> = vec![Vec::new(); CPUS];
    let (mut local, mut planned) = (0, 0);
    for t in planner.plan().tasks() {
        let process = template_of.get(&t.group).map_or(u32::MAX, |&i| templates[i].threads[t.thread].0);
        per_cpu[t.cpu].push((t.start, process));
        planned += 1;
        local += usize::from(homes.get(process as usize).is_some_and(|&h| usize::from(h) == t.cpu));
    }
    let (mut fast, mut switches) = (0, 0);
    for cpu in &mut per_cpu {
        cpu.sort();
        for w in cpu.windows(2) {
            switches += 1;
            fast += usize::from(w[0].1 == w[1].1);
        }
    }
    Ok(RunResult { arrivals: arrivals.len(), accepted, fast, switches, local, tasks: planned })
}

fn pct(a: usize, b: usize) -> f64 {
    if b == 0 {
        0.0
    } else {
        100.0 * a as f64 / b as f64
    }
}

/// Figure 13's templates: 3 threads of 3 tasks, WCET U(50 ms, 1 s). Threads are given
/// processes in one sequence over all templates: each stays in the process of the thread
/// before it with probability `same`, else opens a new one, so `same = 0` is one thread per
/// process and `same = 1` a single process, the two ends of the paper's axis.
/// Returns the templates and the number of processes used.
fn fastswitch_templates(rng: &mut Rng, same: f64) -> (Vec<Template>, u32) {
    let mut processes = 0u32;
    let templates = (0..5)
        .map(|_| {
            let mut threads: Vec<(u32, Vec<Duration>)> = Vec::new();
            let mut work = Duration::ZERO;
            for _ in 0..3 {
                let process = if processes > 0 && rng.chance(same) {
                    processes - 1
                } else {
                    processes += 1;
                    processes - 1
                };
                let wcets: Vec<Duration> = (0..3).map(|_| Duration::from_millis(rng.range(50, 1000))).collect();
                work += wcets.iter().sum::<Duration>();
                threads.push((process, wcets));
            }
            Template { threads, work }
        })
        .collect();
    (templates, processes)
}

fn fastswitch_experiment(runs: usize, quick: bool) -> Result<(String, Value), String> {
    let probabilities: Vec<f64> =
        if quick { vec![0.0, 0.5, 1.0] } else { (0..=10).map(|i| f64::from(i) / 10.0).collect() };
    let mut rows = Vec::new();
    for &p in &probabilities {
        for stay in [false, true] {
            let (mut fast, mut arrivals, mut acc) = (Vec::new(), Vec::new(), Vec::new());
            for run in 0..runs {
                // The same seed with and without the rule: the comparison is paired.
                let mut rng = Rng(0xF13_0000 + (p * 100.0).round() as u64 * 1000 + run as u64);
                let (templates, processes) = fastswitch_templates(&mut rng, p);
                let homes: Vec<u16> = (0..processes).map(|_| rng.range(0, CPUS as u64 - 1) as u16).collect();
                let r = simulate_run(&mut rng, &templates, &homes, 2.5, 3.0, Placement::Earliest, stay)?;
                fast.push(pct(r.fast, r.switches));
                arrivals.push(r.arrivals as f64);
                acc.push(pct(r.accepted, r.arrivals));
            }
            rows.push((p, stay, mean_ci(&fast), mean_ci(&arrivals), mean_ci(&acc)));
        }
    }
    let get = |p: f64, stay: bool| rows.iter().find(|r| r.0 == p && r.1 == stay).map(|r| (r.2).0).unwrap_or(0.0);
    let mut checks = Vec::new();
    let higher = probabilities.iter().filter(|&&p| get(p, true) >= get(p, false)).count();
    let gain: f64 =
        probabilities.iter().map(|&p| get(p, true) - get(p, false)).sum::<f64>() / probabilities.len() as f64;
    checks.push(Conclusion {
        claim: "The stay-within-process rule raises the share of fast switches".into(),
        holds: higher == probabilities.len() && gain > 0.0,
        detail: format!(
            "with the rule at least as high at {higher} of {} points, {gain:+.1} points on average",
            probabilities.len()
        ),
    });
    checks.push(Conclusion {
        claim: "Even with one thread per process (p = 0) some switches are fast (task to task within a thread)".into(),
        holds: get(0.0, false) > 0.0 && get(0.0, true) > 0.0,
        detail: format!("p = 0: {:.1}% without the rule, {:.1}% with it", get(0.0, false), get(0.0, true)),
    });
    checks.push(Conclusion {
        claim: "Both curves rise to about 100% at p = 1 (our reading of the figure)".into(),
        holds: get(1.0, false) >= 90.0 && get(1.0, true) >= 90.0,
        detail: format!("p = 1: {:.1}% without, {:.1}% with", get(1.0, false), get(1.0, true)),
    });
    let min_acc = rows.iter().map(|r| (r.4).0).fold(100.0, f64::min);
    checks.push(Conclusion {
        claim: "All thread groups were schedulable (100% accepted)".into(),
        holds: min_acc >= 100.0,
        detail: format!("lowest mean acceptance over the points: {min_acc:.2}%"),
    });

    let mut s = String::new();
    let _ = writeln!(
        s,
        "spring-fastswitch (figure 13): share of fast context switches\n\
         {CPUS} CPUs, earliest placement; 5 group templates of 3 chained threads x 3 tasks, WCET U(50 ms, 1 s), each \
         an independent Poisson source with mean gap 2.5 x its work; deadline 3 x work; {} s per run, {runs} runs \
         per point (mean +- 95% CI)\n",
        RUN_LENGTH.as_secs()
    );
    let _ = writeln!(
        s,
        "{:>5}  {:>17} {:>17}  {:>15} {:>15}",
        "p", "fast % without", "fast % with", "arrivals/run", "accepted %"
    );
    for &p in &probabilities {
        let row = |stay: bool| rows.iter().find(|r| r.0 == p && r.1 == stay);
        if let (Some(a), Some(b)) = (row(false), row(true)) {
            let _ = writeln!(
                s,
                "{p:>5.1}  {:>17} {:>17}  {:>15} {:>15}",
                format!("{:.1} +- {:.1}", a.2 .0, a.2 .1),
                format!("{:.1} +- {:.1}", b.2 .0, b.2 .1),
                format!("{:.1} +- {:.1}", a.3 .0, a.3 .1),
                format!("{:.1} / {:.1}", a.4 .0, b.4 .0),
            );
        }
    }
    conclusions_text(&mut s, &checks);
    let jrows: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({"p_same_process": r.0, "stay_within_process": r.1, "fast_pct": r.2.0, "fast_ci95": r.2.1,
                   "arrivals": r.3.0, "arrivals_ci95": r.3.1, "accepted_pct": r.4.0, "accepted_ci95": r.4.1})
        })
        .collect();
    let value = json!({"experiment": "spring-fastswitch", "runs_per_point": runs, "cpus": CPUS,
        "run_length_s": RUN_LENGTH.as_secs(), "points": jrows, "conclusions": conclusions_json(&checks)});
    Ok((s, value))
}

/// Figures 14-15's templates: U{1..10} processes with a home CPU each; 5 templates of U{1..5}
/// chained threads of U{1..8} tasks, WCET U(50, 500) ms; each thread after the first stays in
/// the previous thread's process with probability 0.7, else takes a random process.
fn locality_workload(rng: &mut Rng) -> (Vec<Template>, Vec<u16>) {
    let processes = rng.range(1, 10) as u32;
    let homes: Vec<u16> = (0..processes).map(|_| rng.range(0, CPUS as u64 - 1) as u16).collect();
    let templates = (0..5)
        .map(|_| {
            let mut threads: Vec<(u32, Vec<Duration>)> = Vec::new();
            let mut work = Duration::ZERO;
            for k in 0..rng.range(1, 5) as usize {
                let process = if k > 0 && rng.chance(0.7) {
                    threads[k - 1].0
                } else {
                    rng.range(0, u64::from(processes) - 1) as u32
                };
                let wcets: Vec<Duration> =
                    (0..rng.range(1, 8)).map(|_| Duration::from_millis(rng.range(50, 500))).collect();
                work += wcets.iter().sum::<Duration>();
                threads.push((process, wcets));
            }
            Template { threads, work }
        })
        .collect();
    (templates, homes)
}

fn locality_experiment(runs: usize, quick: bool) -> Result<(String, Value), String> {
    let multipliers: Vec<f64> = if quick { vec![1.5, 3.0, 5.0] } else { vec![1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0] };
    let loads = [("moderate", 5.0), ("heavy", 2.5)];
    let placements = [Placement::OnlyLocal, Placement::Earliest];
    // (load, multiplier, placement) -> (acceptance, local %, fast %, arrivals), each mean and CI.
    type Stat = (f64, f64);
    let mut rows: Vec<(&str, f64, Placement, Stat, Stat, Stat, Stat)> = Vec::new();
    for &(load, gap) in &loads {
        for &m in &multipliers {
            for &pl in &placements {
                let (mut acc, mut local, mut fast, mut arr) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
                for run in 0..runs {
                    let mut rng =
                        Rng(0x1415_0000 + (gap * 10.0) as u64 * 100_000 + (m * 10.0) as u64 * 1000 + run as u64);
                    let (templates, homes) = locality_workload(&mut rng);
                    let r = simulate_run(&mut rng, &templates, &homes, gap, m, pl, false)?;
                    acc.push(pct(r.accepted, r.arrivals));
                    local.push(pct(r.local, r.tasks));
                    fast.push(pct(r.fast, r.switches));
                    arr.push(r.arrivals as f64);
                }
                rows.push((load, m, pl, mean_ci(&acc), mean_ci(&local), mean_ci(&fast), mean_ci(&arr)));
            }
        }
    }
    let acc = |load: &str, m: f64, pl: Placement| {
        rows.iter().find(|r| r.0 == load && r.1 == m && r.2 == pl).map_or(0.0, |r| r.3 .0)
    };
    let gap = |load: &str| {
        multipliers.iter().map(|&m| acc(load, m, Placement::Earliest) - acc(load, m, Placement::OnlyLocal)).sum::<f64>()
            / multipliers.len() as f64
    };
    let mut checks = Vec::new();
    let never_worse = loads
        .iter()
        .all(|&(l, _)| multipliers.iter().all(|&m| acc(l, m, Placement::Earliest) >= acc(l, m, Placement::OnlyLocal)));
    checks.push(Conclusion {
        claim: "Only Local greatly sacrifices schedulability (Earliest accepts more at every point)".into(),
        holds: never_worse && gap("moderate") >= 5.0 && gap("heavy") >= 5.0,
        detail: format!(
            "Earliest minus Only Local, mean over multipliers: {:+.1} points (moderate), {:+.1} (heavy); \
             Earliest at least as high everywhere: {never_worse}",
            gap("moderate"),
            gap("heavy")
        ),
    });
    let local_of = |pl: Placement| {
        // Points where nothing was accepted have no tasks to count.
        let v: Vec<f64> = rows.iter().filter(|r| r.2 == pl && r.3 .0 > 0.0).map(|r| r.4 .0).collect();
        v.iter().sum::<f64>() / v.len().max(1) as f64
    };
    let share = 100.0 / CPUS as f64;
    checks.push(Conclusion {
        claim: "Earliest still reduces memory costs: it runs well over a random share of tasks locally".into(),
        holds: local_of(Placement::Earliest) > share + 10.0,
        detail: format!(
            "tasks on their home CPU: Earliest {:.1}%, Only Local {:.1}%, random placement {share:.1}%",
            local_of(Placement::Earliest),
            local_of(Placement::OnlyLocal)
        ),
    });
    checks.push(Conclusion {
        claim: "The gap is larger at heavy load than at moderate load (our reading of the figures)".into(),
        holds: gap("heavy") > gap("moderate"),
        detail: format!("{:+.1} (heavy) against {:+.1} (moderate)", gap("heavy"), gap("moderate")),
    });

    let mut s = String::new();
    let _ = writeln!(
        s,
        "spring-locality (figures 14-15): acceptance against the deadline multiplier\n\
         {CPUS} CPUs; U{{1..10}} processes, each on a random home CPU; 5 templates of U{{1..5}} chained threads x \
         U{{1..8}} tasks, WCET U(50, 500) ms, P(same process as the previous thread) = 0.7; Poisson sources with \
         mean gap 5.0 x work (moderate) or 2.5 x work (heavy); {} s per run, {runs} runs per point (mean +- 95% CI)\n",
        RUN_LENGTH.as_secs()
    );
    for &(load, g) in &loads {
        let _ = writeln!(s, "{load} load (mean gap {g} x work):");
        let _ = writeln!(
            s,
            "{:>6}  {:>17} {:>17}  {:>13} {:>13}  {:>13}",
            "mult", "accepted % local", "accepted % earl.", "local % l/e", "fast % l/e", "arrivals/run"
        );
        for &m in &multipliers {
            let row = |pl: Placement| rows.iter().find(|r| r.0 == load && r.1 == m && r.2 == pl);
            if let (Some(a), Some(b)) = (row(Placement::OnlyLocal), row(Placement::Earliest)) {
                let _ = writeln!(
                    s,
                    "{m:>6.1}  {:>17} {:>17}  {:>13} {:>13}  {:>13}",
                    format!("{:.1} +- {:.1}", a.3 .0, a.3 .1),
                    format!("{:.1} +- {:.1}", b.3 .0, b.3 .1),
                    format!("{:.0} / {:.0}", a.4 .0, b.4 .0),
                    format!("{:.0} / {:.0}", a.5 .0, b.5 .0),
                    format!("{:.1}", a.6 .0),
                );
            }
        }
        let _ = writeln!(s);
    }
    conclusions_text(&mut s, &checks);
    let jrows: Vec<Value> = rows
        .iter()
        .map(|r| {
            json!({"load": r.0, "multiplier": r.1, "placement": r.2.name(), "accepted_pct": r.3.0,
                   "accepted_ci95": r.3.1, "local_pct": r.4.0, "fast_pct": r.5.0, "arrivals": r.6.0})
        })
        .collect();
    let value = json!({"experiment": "spring-locality", "runs_per_point": runs, "cpus": CPUS,
        "run_length_s": RUN_LENGTH.as_secs(), "points": jrows, "conclusions": conclusions_json(&checks)});
    Ok((s, value))
}
