//! The `ports-*` experiments: the cost tables of Ghosh, Fujimoto and Schwan's PORTS scheduler
//! (table 1: inserting into the slot list; table 2: total scheduling cost), rebuilt with the
//! admission engines of [`tempi::policy::admit`] and timed on this machine.
//!
//! Owns the synthetic workload, the replay that times the engines, the paper's numbers and
//! conclusions, and the text and JSON reports. It must not touch the other experiments.
//!
//! # Workloads
//!
//! The paper's generator is not published ("a synthetic workload", averaged over 25,000
//! tasks), so ours are stated here and generated from a fixed seed (every run schedules the
//! same jobs), one CPU, times in nanoseconds of a simulated timeline. Both share:
//! - jobs arrive as a Poisson process, mean gap 125 µs;
//! - worst-case execution time uniform in 50..150 µs, actual execution time uniform in 50 to
//!   100 % of it (so the offered load is about 60 % of the CPU, 80 % by worst case);
//! - the CPU runs the accepted jobs earliest-deadline-first, preemptively; when one
//!   completes, the engine is told (`finish`, the dispatcher's bookkeeping);
//! - garbage collection: when the list holds `N` entries, the next arrival first removes every
//!   entry whose deadline has passed (`expire`), as the paper collects "after its length
//!   becomes equal to the value on the x-axis".
//!
//! They differ in the relative deadline ([`Workload`]):
//! - `seed-like` (the default): a small multiple of the job's worst case, uniform in 4..12
//!   times it, so deadlines grow with arrival time and a new job lands near the end of the
//!   list, close to the last insertion, as in the paper's speculative planner, whose
//!   insertions cluster; the list is mostly slots whose deadline has passed, waiting for the
//!   next collection;
//! - `random`: uniform in 0.5..1.5 times `N/2 × 125 µs`, where `N` is the list length on the
//!   table's x-axis: about `N/2` accepted jobs have a deadline still ahead, and new deadlines
//!   land at random places in the list, where the last insertion point is no better a start
//!   than the front.
//!
//! The four engines (`linear` = the paper's original list, `min_laxity` = its new scheme with
//! shared minimum-laxity pointers and best-guess search, `hashed` = the same with the paper's
//! hashed search, `tree` = ours) receive the same calls in lock step, in rotating order, and must give the same answers (the run stops otherwise).
//! Each call is timed on its own with the machine's monotonic clock; the mean cost of an empty
//! timing (measured at start) is subtracted; a call over half a millisecond counts as interrupted
//! by another process and is left out (the total is scaled up from the calls kept, and the
//! report says how many). A full run schedules the same jobs five times and
//! keeps, per engine and per part (admission, collection, finish), the cheapest total, which
//! filters out the moments the machine was busy with other work.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::time::{Duration, Instant};

use tempi::policy::admit::{self, Admission, AdmissionEngine, AdmitId, MinLaxityEngine};
use tempi::Time;

use super::ExperimentArgs;

mod conclusions;
mod report;

use conclusions::{table1_conclusions, table2_conclusions, Conclusion};

/// The list lengths on the paper's x-axis.
const LENGTHS: [usize; 4] = [100, 500, 1000, 3000];
/// The engines compared: the paper's original, its new scheme (best-guess search), the new
/// scheme with the hashed search, ours.
const ENGINES: [&str; 4] = ["linear", "min_laxity", "hashed", "tree"];
const JOBS_FULL: usize = 25_000;
const JOBS_QUICK: usize = 8_000;
/// Full runs schedule the jobs this many times and keep the cheapest (`--quick`: once).
const REPEATS: usize = 5;

const MEAN_GAP_NS: f64 = 125_000.0;
/// How often (in jobs) the shared minimum-laxity pointers are counted.
const POINTER_SAMPLE: usize = 64;
const WCET_MIN_NS: u64 = 50_000;
const WCET_SPAN_NS: u64 = 100_000;

/// The paper's table 1 (µs per insertion on a 20 MHz KSR-1): slots, original, hash, guess.
const PAPER_TABLE1: [(usize, f64, f64, f64); 4] =
    [(100, 130.0, 53.0, 69.0), (500, 683.0, 220.0, 167.0), (1000, 1130.0, 284.0, 342.0), (3000, 3350.0, 780.0, 595.0)];
/// The paper's table 2 (µs of total scheduling cost per task): slots, original, new.
const PAPER_TABLE2: [(usize, f64, f64); 4] =
    [(100, 500.0, 830.0), (500, 1750.0, 534.0), (1000, 2722.0, 913.0), (3000, 5300.0, 1337.0)];

/// What `--workload` asks for: one workload, or both in turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum WorkloadChoice {
    /// A small multiple of the job's worst case (4 to 12 times): deadlines grow with arrival
    /// time and insertions land near the last one, the kind of workload the paper's schemes
    /// were designed for.
    SeedLike,
    /// Around `N/2` mean gaps ahead (0.5 to 1.5 times `N/2 × 125 µs`): insertions land at
    /// random places in a list of about `N/2` live slots.
    Random,
    /// Both, one after the other, with the conclusions side by side.
    Both,
}

impl WorkloadChoice {
    /// The workloads run, in order.
    fn workloads(self) -> &'static [Workload] {
        match self {
            WorkloadChoice::SeedLike => &[Workload::SeedLike],
            WorkloadChoice::Random => &[Workload::Random],
            WorkloadChoice::Both => &[Workload::SeedLike, Workload::Random],
        }
    }
}

/// How a job's relative deadline is drawn (the rest of the workload is shared).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Workload {
    SeedLike,
    Random,
}

/// The seed-like workload's relative deadline, in multiples of the job's worst case.
const SEED_LIKE_MULTIPLE: (f64, f64) = (4.0, 12.0);

impl Workload {
    /// The name `--workload` takes.
    fn name(self) -> &'static str {
        match self {
            Workload::SeedLike => "seed-like",
            Workload::Random => "random",
        }
    }

    /// One line for the report: how the relative deadline is drawn.
    fn deadline_rule(self) -> &'static str {
        match self {
            Workload::Random => "relative deadline U(0.5, 1.5) x N/2 x 125 us (insertions at random places)",
            Workload::SeedLike => {
                "relative deadline U(4, 12) x WCET (deadlines grow with arrival time, insertions near the last one)"
            }
        }
    }

    /// The relative deadline of a job of worst case `wcet_ns` in a list collected at `length`.
    fn relative_deadline_ns(self, length: usize, wcet_ns: u64, rng: &mut Rng) -> u64 {
        match self {
            Workload::Random => ((length as f64 / 2.0) * MEAN_GAP_NS * (0.5 + rng.unit())) as u64,
            Workload::SeedLike => {
                let (lo, hi) = SEED_LIKE_MULTIPLE;
                (wcet_ns as f64 * (lo + (hi - lo) * rng.unit())) as u64
            }
        }
    }
}

/// xorshift64*: fixed seed, so every run schedules the same jobs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// A call that took longer than this was interrupted (the process was descheduled): its time
/// is left out, and the part's total is scaled up from the calls kept. The slowest real call
/// here (the `min_laxity` list at 3,000 slots) takes tens of microseconds.
const INTERRUPTED_NS: f64 = 500_000.0;

/// The wall time of one kind of call of one engine.
#[derive(Default, Clone, Copy)]
struct Part {
    /// Nanoseconds spent in the calls kept.
    sum_ns: f64,
    kept: usize,
    calls: usize,
}

impl Part {
    /// The estimated total: the calls kept, scaled to all calls.
    fn total_ns(&self) -> f64 {
        if self.kept == 0 {
            0.0
        } else {
            self.sum_ns * self.calls as f64 / self.kept as f64
        }
    }
}

/// One engine's wall time per kind of call.
#[derive(Default, Clone, Copy)]
struct Cost {
    admit: Part,
    gc: Part,
    finish: Part,
}

impl Cost {
    fn interrupted(&self) -> usize {
        [self.admit, self.gc, self.finish].iter().map(|p| p.calls - p.kept).sum()
    }
}

/// One list length's run: the workload's counts (the same for every engine) and each
/// engine's mean costs.
struct LengthRun {
    length: usize,
    jobs: usize,
    accepted: usize,
    rejected: usize,
    collections: usize,
    collected: usize,
    /// Mean list length seen by an admission.
    mean_len: f64,
    /// Mean number of `min_laxity`'s shared minimum-laxity pointers per slot, sampled every
    /// [`POINTER_SAMPLE`] jobs (1: no slot shares its pointer).
    pointers_per_slot: f64,
    /// Per engine in [`ENGINES`] order: mean ns per admission, per collection, per finish,
    /// and the total per job.
    costs: Vec<Cost>,
}

impl LengthRun {
    fn insert_ns(&self, engine: usize) -> f64 {
        self.costs[engine].admit.total_ns() / self.jobs as f64
    }

    /// Admission + garbage collection + dispatch bookkeeping, per job.
    fn total_ns(&self, engine: usize) -> f64 {
        let c = self.costs[engine];
        (c.admit.total_ns() + c.gc.total_ns() + c.finish.total_ns()) / self.jobs as f64
    }
}

/// The mean cost of timing nothing: two clock reads.
fn timer_overhead_ns() -> f64 {
    let n = 10_000;
    let mut total = Duration::ZERO;
    for _ in 0..n {
        let t = Instant::now();
        total += t.elapsed();
    }
    total.as_nanos() as f64 / n as f64
}

/// Time `f` into `part`, less the timer's own cost (never below zero), unless interrupted.
fn timed<R>(overhead: f64, part: &mut Part, f: impl FnOnce() -> R) -> R {
    let t = Instant::now();
    let r = f();
    let ns = t.elapsed().as_nanos() as f64;
    part.calls += 1;
    if ns <= INTERRUPTED_NS {
        part.sum_ns += (ns - overhead).max(0.0);
        part.kept += 1;
    }
    r
}

/// A job the simulated CPU holds: EDF key and actual time still to run.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Ready {
    deadline: u64,
    seq: u64,
    left_ns: u64,
}

/// Schedule `jobs` jobs with garbage collection at `length` entries, all engines in lock step.
fn run_length(workload: Workload, length: usize, jobs: usize, overhead: f64) -> Result<LengthRun, String> {
    // Room for the list to pass `length` when a collection finds nothing expired.
    let capacity = length * 4 + 64;
    let mut engines: Vec<Box<dyn AdmissionEngine>> = ENGINES
        .iter()
        .map(|n| admit::by_name(n, capacity).ok_or_else(|| format!("no admission engine `{n}`")))
        .collect::<Result<_, _>>()?;
    let mut costs = vec![Cost::default(); ENGINES.len()];
    let mut rng = Rng(0x9047_5000_0001 ^ length as u64);
    let mut ready: BinaryHeap<Reverse<Ready>> = BinaryHeap::with_capacity(capacity);
    let mut ids: Vec<AdmitId> = Vec::with_capacity(jobs);
    let (mut now, mut cpu_at) = (0u64, 0u64);
    let mut run = LengthRun {
        length,
        jobs,
        accepted: 0,
        rejected: 0,
        collections: 0,
        collected: 0,
        mean_len: 0.0,
        pointers_per_slot: 0.0,
        costs: Vec::new(),
    };
    // An untimed copy of `min_laxity`, fed the same calls, whose pointers are counted.
    let mut probe = MinLaxityEngine::with_capacity(capacity);
    let (mut pointer_sum, mut samples) = (0.0, 0usize);
    let mut len_sum = 0usize;
    for job in 0..jobs {
        now += (-MEAN_GAP_NS * (1.0 - rng.unit()).ln()) as u64 + 1;
        // The CPU works from where it was to this arrival, earliest deadline first.
        while let Some(Reverse(top)) = ready.peek() {
            let (seq, left) = (top.seq, top.left_ns);
            if cpu_at + left > now {
                let ran = now - cpu_at;
                if let Some(mut top) = ready.peek_mut() {
                    top.0.left_ns -= ran;
                }
                break;
            }
            cpu_at += left;
            ready.pop();
            let id = ids[seq as usize];
            for k in rotation(job) {
                timed(overhead, &mut costs[k].finish, || engines[k].finish(id)).map_err(|e| e.to_string())?;
            }
            probe.finish(id).map_err(|e| e.to_string())?;
        }
        cpu_at = cpu_at.max(now);
        if engines[0].len() >= length {
            let t = Time::from_nanos(now);
            let mut gone = [0usize; ENGINES.len()];
            for k in rotation(job) {
                gone[k] = timed(overhead, &mut costs[k].gc, || engines[k].expire(t));
            }
            agree(&gone, "expire")?;
            probe.expire(t);
            run.collections += 1;
            run.collected += gone[0];
        }
        len_sum += engines[0].len();
        if job % POINTER_SAMPLE == 0 && !probe.is_empty() {
            pointer_sum += probe.shared_pointers() as f64 / probe.len() as f64;
            samples += 1;
        }
        let wcet = WCET_MIN_NS + rng.next() % WCET_SPAN_NS;
        let actual = (wcet as f64 * (0.5 + 0.5 * rng.unit())) as u64;
        let deadline = now + workload.relative_deadline_ns(length, wcet, &mut rng);
        let mut answers = [None; ENGINES.len()];
        for k in rotation(job) {
            let (c, d, t) = (Duration::from_nanos(wcet), Time::from_nanos(deadline), Time::from_nanos(now));
            answers[k] = Some(timed(overhead, &mut costs[k].admit, || engines[k].admit(c, d, t)));
        }
        let answers = answers.map(|a| a.expect("every engine was asked"));
        agree(&answers, "admit")?;
        probe
            .admit(Duration::from_nanos(wcet), Time::from_nanos(deadline), Time::from_nanos(now))
            .map_err(|e| e.to_string())?;
        match answers[0] {
            Ok(Admission::Accepted(id)) => {
                ready.push(Reverse(Ready { deadline, seq: ids.len() as u64, left_ns: actual }));
                ids.push(id);
                run.accepted += 1;
            }
            Ok(Admission::Rejected { .. }) => run.rejected += 1,
            Err(e) => return Err(format!("{length} slots: {e}")),
        }
    }
    run.mean_len = len_sum as f64 / jobs as f64;
    run.pointers_per_slot = if samples == 0 { 0.0 } else { pointer_sum / samples as f64 };
    run.costs = costs;
    Ok(run)
}

/// The order the engines are called in for job `job`: rotating, so none is always first (with
/// a cold cache) or last.
fn rotation(job: usize) -> impl Iterator<Item = usize> {
    (0..ENGINES.len()).map(move |i| (i + job) % ENGINES.len())
}

fn agree<T: PartialEq + std::fmt::Debug>(answers: &[T], call: &str) -> Result<(), String> {
    if answers.iter().all(|a| *a == answers[0]) {
        Ok(())
    } else {
        Err(format!("the engines disagree on {call}: {answers:?}"))
    }
}

/// Every list length's run under one workload.
struct WorkloadRun {
    workload: Workload,
    runs: Vec<LengthRun>,
    checks: Vec<Conclusion>,
}

/// Schedule every list length under `workload`, keeping each engine's cheapest of `repeats`.
fn run_workload(
    table: u8,
    workload: Workload,
    jobs: usize,
    repeats: usize,
    overhead: f64,
) -> Result<WorkloadRun, String> {
    let mut runs = Vec::with_capacity(LENGTHS.len());
    for length in LENGTHS {
        eprintln!("experiment: {} workload, {length} slots, {jobs} jobs, {repeats} runs", workload.name());
        let mut best = run_length(workload, length, jobs, overhead)?;
        for _ in 1..repeats {
            // The same jobs again (the workload is seeded): keep each engine's cheapest run of
            // each part, which filters out the moments the machine was busy elsewhere.
            let again = run_length(workload, length, jobs, overhead)?;
            for (b, a) in best.costs.iter_mut().zip(&again.costs) {
                for (b, a) in [(&mut b.admit, a.admit), (&mut b.gc, a.gc), (&mut b.finish, a.finish)] {
                    if a.total_ns() < b.total_ns() {
                        *b = a;
                    }
                }
            }
        }
        runs.push(best);
    }
    let checks = if table == 1 { table1_conclusions(&runs) } else { table2_conclusions(&runs) };
    Ok(WorkloadRun { workload, runs, checks })
}

/// Run `ports-1` or `ports-2` and print the report.
pub(super) fn run(args: &ExperimentArgs) -> Result<(), String> {
    let table = match args.name.as_str() {
        "ports-1" => 1,
        "ports-2" => 2,
        other => return Err(format!("unknown experiment `{other}`")),
    };
    let jobs = if args.quick { JOBS_QUICK } else { JOBS_FULL };
    let repeats = if args.quick { 1 } else { REPEATS };
    let overhead = timer_overhead_ns();
    let done = args
        .workload
        .unwrap_or(WorkloadChoice::SeedLike)
        .workloads()
        .iter()
        .map(|&w| run_workload(table, w, jobs, repeats, overhead))
        .collect::<Result<Vec<_>, _>>()?;
    let text = if args.json {
        format!("{}\n", report::to_json(table, &done, jobs, overhead, repeats))
    } else {
        report::to_text(table, &done, jobs, overhead, repeats)
    };
    use std::io::Write;
    // A closed pipe (`| head`) is not an error worth a panic.
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(())
}
