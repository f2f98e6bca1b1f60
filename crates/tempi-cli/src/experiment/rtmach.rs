//! The `rtmach-*` experiments: benchmarks 1 to 3 of Tokuda and Nakajima, "Evaluation of
//! Real-Time Synchronization in Real-Time Mach" (tables 3 to 8), rebuilt in virtual time.
//!
//! Owns the benchmarks' thread sets, the breakdown search, the paper's numbers and
//! conclusions, and their text and JSON reports. It must not touch the other experiments.
//!
//! Each benchmark is a small set of periodic threads under fixed priorities; some of them lock
//! a shared object for their whole job. For every locking protocol we search the largest
//! execution time `EXE` of the varied thread at which no deadline is missed over the run
//! horizon (the last start time plus two hyperperiods), and report the processor utilisation
//! at that point, as the paper's tables do. The runs charge the paper's measured overheads
//! (tables 1 and 2) as [`tempi::Costs`], unless `--no-costs` is given. How the paper's tables
//! were turned into thread sets, and every interpretation that needed, is in
//! `docs/EXPERIMENTS.md`.
//!
//! Output: a table per experiment (ours next to the paper's numbers), then the paper's
//! conclusions, each marked as holding or not in our runs. `--json` prints the same as one JSON
//! object.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tempi::clock::VirtualClock;
use tempi::sync::{LockSpec, Mutex};
use tempi::{Config, Costs, Ctx, Runtime, ThreadOutcome, ThreadSpec, Time};

use super::ExperimentArgs;

/// The protocols compared, in the order of the paper's table 4, by their lock registry names;
/// a run compares those the registry holds.
const POLICIES: [&str; 5] = ["bp", "bpi", "km", "pcp", "rcs"];

/// A thread of a benchmark, from the paper's attribute tables.
struct Task {
    name: &'static str,
    period_ms: u64,
    /// Execution time per job; `None` is the varied `EXE`.
    wcet_ms: Option<u64>,
    /// Start time (first release).
    start_ms: u64,
    /// Fixed priority, larger is more urgent.
    priority: i32,
    /// The object (index into [`Benchmark::objects`]) the thread locks for its whole job.
    object: Option<usize>,
}

/// A shared object and the ceiling its lock gets (used by PCP only).
struct Object {
    name: &'static str,
    ceiling: i32,
}

/// One row of the paper's result table.
struct PaperRow {
    policy: &'static str,
    max_exe_ms: u64,
    utilisation_pct: f64,
}

/// One benchmark: the thread set, the shared objects and the paper's results.
struct Benchmark {
    name: &'static str,
    title: &'static str,
    /// What `EXE` is.
    varied: &'static str,
    tasks: Vec<Task>,
    objects: Vec<Object>,
    paper: Vec<PaperRow>,
    /// A supplementary RCS search that does not count this thread's deadlines (the thread
    /// whose section RCS restarts), to compare with a paper number that seems not to.
    rcs_exempt: Option<&'static str>,
}

fn task(name: &'static str, period_ms: u64, wcet_ms: Option<u64>, start_ms: u64, priority: i32) -> Task {
    Task { name, period_ms, wcet_ms, start_ms, priority, object: None }
}

impl Task {
    fn locks(mut self, object: usize) -> Task {
        self.object = Some(object);
        self
    }
}

fn row(policy: &'static str, max_exe_ms: u64, utilisation_pct: f64) -> PaperRow {
    PaperRow { policy, max_exe_ms, utilisation_pct }
}

fn benchmark(name: &str) -> Option<Benchmark> {
    Some(match name {
        // Table 3. A and D share the object, each for its whole job. B and C do not lock.
        // Rate-monotonic priorities (B above C; the other order gives nearly the same results,
        // see docs/EXPERIMENTS.md).
        "rtmach-1" => Benchmark {
            name: "rtmach-1",
            title: "Real-Time Mach benchmark 1 (paper tables 3 and 4)",
            varied: "EXE = execution time of B (period 300 ms)",
            tasks: vec![
                task("A", 100, Some(10), 20, 4).locks(0),
                task("B", 300, None, 10, 3),
                task("C", 400, Some(60), 10, 2),
                task("D", 1000, Some(30), 0, 1).locks(0),
            ],
            objects: vec![Object { name: "L", ceiling: 4 }],
            paper: vec![
                row("bp", 14, 32.6),
                row("bpi", 181, 88.3),
                row("km", 183, 89.0),
                row("pcp", 181, 88.3),
                row("rcs", 202, 95.3),
            ],
            rcs_exempt: Some("D"),
        },
        // Table 5. B's whole job is a critical section on L. A locks an object of its own, M;
        // L's ceiling is A's priority, as if A may also use L. That is what makes PCP block A
        // (ceiling blocking) while BPI does not.
        "rtmach-2" => Benchmark {
            name: "rtmach-2",
            title: "Real-Time Mach benchmark 2 (paper tables 5 and 6)",
            varied: "EXE = execution time of B = length of its critical section (period 200 ms)",
            tasks: vec![task("A", 100, Some(20), 10, 2).locks(1), task("B", 200, None, 0, 1).locks(0)],
            objects: vec![Object { name: "L", ceiling: 2 }, Object { name: "M", ceiling: 2 }],
            paper: vec![row("bpi", 155, 97.5), row("km", 88, 64.0), row("pcp", 87, 63.5)],
            rcs_exempt: None,
        },
        // Table 7. Rate-monotonic priorities. As in benchmark 1, the most and the least urgent
        // threads (A and C) share the object for their whole job; B does not lock.
        "rtmach-3" => Benchmark {
            name: "rtmach-3",
            title: "Real-Time Mach benchmark 3 (paper tables 7 and 8)",
            varied: "EXE = execution time of B (period 150 ms)",
            tasks: vec![
                task("A", 100, Some(20), 50, 3).locks(0),
                task("B", 150, None, 60, 2),
                task("C", 200, Some(60), 0, 1).locks(0),
            ],
            objects: vec![Object { name: "L", ceiling: 3 }],
            paper: vec![row("bpi", 60, 90.0), row("rcs", 15, 60.0)],
            rcs_exempt: None,
        },
        _ => return None,
    })
}

/// The paper's measured overheads for `policy` (tables 1 and 2), in µs.
///
/// Context switch: `C_switch` = `C_block` + `C_choose` + `C_dispatch` = 172 µs. Lock not
/// acquired: the policy part only (`C_block` is in the switch that follows). Unlock: the cost
/// with no waiter to wake. Abort: `C_abort` = 816 µs, with no application recovery cost.
fn paper_costs(policy: &str) -> Costs {
    let (acquired, not_acquired, unlock) = match policy {
        "bp" => (120, 208, 144),
        "km" => (132, 0, 156),
        "bpi" => (196, 340, 192),
        "pcp" => (232, 508, 256),
        "rcs" => (256, 628, 196),
        _ => (0, 0, 0),
    };
    let us = Duration::from_micros;
    Costs {
        context_switch: us(172),
        lock_acquired: us(acquired),
        lock_not_acquired: us(not_acquired),
        unlock: us(unlock),
        abort: us(816),
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

impl Benchmark {
    fn hyperperiod_ms(&self) -> u64 {
        self.tasks.iter().fold(1, |h, t| h / gcd(h, t.period_ms) * t.period_ms)
    }

    /// Last start time plus two hyperperiods: for fixed priorities with start offsets, the
    /// schedule from the last start on repeats with the hyperperiod once the first one has
    /// settled, so every pattern of releases is seen at least once.
    fn horizon_ms(&self) -> u64 {
        self.tasks.iter().map(|t| t.start_ms).max().unwrap_or(0) + 2 * self.hyperperiod_ms()
    }

    fn varied(&self) -> &Task {
        self.tasks.iter().find(|t| t.wcet_ms.is_none()).expect("a benchmark varies one thread")
    }

    /// Utilisation in percent with the varied thread at `exe_us`.
    fn utilisation_pct(&self, exe_us: u64) -> f64 {
        100.0
            * self
                .tasks
                .iter()
                .map(|t| t.wcet_ms.map_or(exe_us as f64 / 1000.0, |c| c as f64) / t.period_ms as f64)
                .sum::<f64>()
    }

    /// The largest `EXE` (µs) at which the utilisation is at most 100 %.
    fn exe_cap_us(&self) -> u64 {
        let fixed: f64 = self.tasks.iter().filter_map(|t| t.wcet_ms.map(|c| c as f64 / t.period_ms as f64)).sum();
        let period_us = self.varied().period_ms as f64 * 1000.0;
        ((1.0 - fixed) * period_us + 1e-6).floor().max(0.0) as u64
    }

    /// Run the benchmark once under `policy` with `EXE` = `exe_us`; the threads that missed a
    /// deadline, with their miss counts (empty: all deadlines met). Misses of thread `exempt`
    /// are not counted.
    fn run(&self, policy: &str, exe_us: u64, costs: Costs, exempt: Option<&str>) -> Result<Vec<(String, u64)>, String> {
        let config = Config::new(1).costs(costs).trace_capacity(0).default_stack(64 * 1024);
        let mut rt = Runtime::<VirtualClock>::new(config).map_err(|e| e.to_string())?;
        let mut objects: Vec<Arc<Mutex<u64>>> = Vec::new();
        for o in &self.objects {
            let spec = LockSpec::new(o.name).protocol(policy).ceiling(o.ceiling);
            objects.push(Arc::new(rt.create_mutex(0u64, spec).map_err(|e| e.to_string())?));
        }
        let ms = Duration::from_millis;
        for t in &self.tasks {
            let c = t.wcet_ms.map_or(Duration::from_micros(exe_us), ms);
            let spec = ThreadSpec::new(t.name).periodic(ms(t.period_ms)).phase(ms(t.start_ms)).priority(t.priority);
            match t.object {
                Some(k) => {
                    let object = objects[k].clone();
                    rt.spawn(spec, move |cx| critical_section(&object, cx, c))
                }
                None => rt.spawn(spec, move |cx| cx.work(c)),
            }
            .map_err(|e| e.to_string())?;
        }
        let out = rt.run_until(Time::from_millis(self.horizon_ms())).map_err(|e| e.to_string())?;
        if let Some(t) = out
            .threads
            .iter()
            .find(|t| matches!(t.outcome, Some(ThreadOutcome::Panicked(_) | ThreadOutcome::NotStarted(_))))
        {
            return Err(format!(
                "{} under {policy} with EXE = {exe_us} us: thread {} failed: {:?}",
                self.name, t.name, t.outcome
            ));
        }
        Ok(out
            .threads
            .iter()
            .filter(|t| t.stats.misses > 0 && Some(t.name.as_str()) != exempt)
            .map(|t| (t.name.clone(), t.stats.misses))
            .collect())
    }
}

/// A whole job inside one critical section: lock, compute `c`, update the object, unlock. It
/// goes through [`Mutex::critical`], which is a plain lock and unlock under every protocol but
/// RCS, where it makes the section restartable.
fn critical_section(object: &Mutex<u64>, cx: &Ctx<'_>, c: Duration) {
    let entered = object.critical(cx, |n| {
        cx.work(c);
        *n += 1;
    });
    if let Err(e) = entered {
        panic!("critical section refused: {e}");
    }
}

/// What the search found for one policy.
struct Breakdown {
    policy: &'static str,
    /// The thread whose deadlines were not counted (supplementary rows only).
    exempt: Option<&'static str>,
    /// Largest `EXE` (µs) with no miss, below the first one that misses; `None` if even
    /// `EXE` = 0 misses.
    max_exe_us: Option<u64>,
    /// The smallest `EXE` found to miss, and who missed then; `None` if nothing missed up to
    /// 100 % utilisation.
    first_miss: Option<(u64, Vec<(String, u64)>)>,
    /// A larger `EXE` of the 1 ms scan at which all deadlines are met again (a scheduling
    /// anomaly), if any. Not looked for by the quick search.
    passes_again_us: Option<u64>,
    /// Simulation runs the search took.
    runs: usize,
}

/// Search the breakdown point of `bench` under `policy`.
///
/// Full: scan `EXE` from 0 in 1 ms steps up to 100 % utilisation, then bisect between the
/// last passing and the first failing step to 1 µs (assuming no anomaly inside that 1 ms).
/// Quick: bisect at 1 ms resolution, assuming that missing is monotone in `EXE`.
fn search(
    bench: &Benchmark,
    policy: &'static str,
    costs: Costs,
    quick: bool,
    exempt: Option<&'static str>,
) -> Result<Breakdown, String> {
    let cap = bench.exe_cap_us();
    let mut runs = 0;
    let mut run = |exe: u64| -> Result<Vec<(String, u64)>, String> {
        runs += 1;
        bench.run(policy, exe, costs, exempt)
    };
    let mut result = Breakdown { policy, exempt, max_exe_us: None, first_miss: None, passes_again_us: None, runs: 0 };
    let step = 1000;
    if quick {
        let missed = run(0)?;
        if !missed.is_empty() {
            result.first_miss = Some((0, missed));
            result.runs = runs;
            return Ok(result);
        }
        let top = cap / step * step;
        let missed = run(top)?;
        if missed.is_empty() {
            result.max_exe_us = Some(top);
        } else {
            // Invariant: `lo` passes, `hi` misses (with `hi_missed`).
            let (mut lo, mut hi, mut hi_missed) = (0, top, missed);
            while hi - lo > step {
                let mid = (lo + hi) / 2 / step * step;
                let missed = run(mid)?;
                if missed.is_empty() {
                    lo = mid;
                } else {
                    (hi, hi_missed) = (mid, missed);
                }
            }
            result.max_exe_us = Some(lo);
            result.first_miss = Some((hi, hi_missed));
        }
    } else {
        let mut last_pass = None;
        let mut exe = 0;
        loop {
            let missed = run(exe)?;
            match (missed.is_empty(), &result.first_miss) {
                (true, None) => last_pass = Some(exe),
                (true, Some(_)) => result.passes_again_us = Some(exe),
                (false, None) => result.first_miss = Some((exe, missed)),
                (false, Some(_)) => {}
            }
            if exe == cap {
                break;
            }
            exe = (exe + step).min(cap);
        }
        result.max_exe_us = last_pass;
        if let (Some(mut lo), Some((mut hi, mut hi_missed))) = (last_pass, result.first_miss.clone()) {
            while hi - lo > 1 {
                let mid = (lo + hi) / 2;
                let missed = run(mid)?;
                if missed.is_empty() {
                    lo = mid;
                } else {
                    (hi, hi_missed) = (mid, missed);
                }
            }
            result.max_exe_us = Some(lo);
            result.first_miss = Some((hi, hi_missed));
        }
    }
    result.runs = runs;
    Ok(result)
}

/// One of the paper's conclusions, checked against our runs.
struct Conclusion {
    claim: &'static str,
    /// `None`: could not be checked (RCS not built).
    holds: Option<bool>,
    detail: String,
}

fn ms_text(us: Option<u64>) -> String {
    match us {
        Some(us) => format!("{:.3}", us as f64 / 1000.0),
        None => "none".to_string(),
    }
}

fn conclusions(bench: &Benchmark, rows: &[Breakdown], rcs: bool) -> Vec<Conclusion> {
    let get = |p: &str| rows.iter().find(|r| r.policy == p && r.exempt.is_none()).and_then(|r| r.max_exe_us);
    let exempt_rcs = rows.iter().find(|r| r.exempt.is_some());
    let describe =
        |ps: &[&str]| ps.iter().map(|p| format!("{} {}", p.to_uppercase(), ms_text(get(p)))).collect::<Vec<_>>();
    let unavailable =
        || Conclusion { claim: "", holds: None, detail: "RCS: not available in this build, not checked".to_string() };
    match bench.name {
        "rtmach-1" => {
            let mut out = Vec::new();
            let others: Vec<&str> = if rcs { vec!["bpi", "km", "pcp", "rcs"] } else { vec!["bpi", "km", "pcp"] };
            let bp = get("bp").unwrap_or(0);
            let holds = others.iter().all(|p| get(p).is_some_and(|o| 2 * bp <= o));
            out.push(Conclusion {
                claim: "BP breaks down far below the other protocols (priority queueing alone does not bound \
                        the inversion); 'far' = at most half their EXE",
                holds: Some(holds),
                detail: format!("max EXE (ms): BP {} vs {}", ms_text(get("bp")), describe(&others).join(", ")),
            });
            let claim = "RCS reaches the highest breakdown utilisation when its restart cost is small (816 µs here)";
            if rcs {
                let r = get("rcs");
                let rest = ["bp", "bpi", "km", "pcp"];
                let holds = rest.iter().all(|p| r > get(p));
                let mut detail = format!("max EXE (ms): RCS {} vs {}", ms_text(r), describe(&rest).join(", "));
                if let Some(x) = exempt_rcs {
                    let above = rest.iter().all(|p| x.max_exe_us > get(p));
                    detail += &format!(
                        "; not counting {}'s deadlines, RCS reaches {} ms ({} the others)",
                        x.exempt.unwrap_or("?"),
                        ms_text(x.max_exe_us),
                        if above { "above" } else { "not above" }
                    );
                }
                out.push(Conclusion { claim, holds: Some(holds), detail });
            } else {
                out.push(Conclusion { claim, ..unavailable() });
            }
            out
        }
        "rtmach-2" => {
            let b = get("bpi");
            let holds = b > get("km") && b > get("pcp");
            vec![Conclusion {
                claim: "BPI breaks down above KM and PCP (both make A wait for B's whole critical section)",
                holds: Some(holds),
                detail: format!("max EXE (ms): {}", describe(&["bpi", "km", "pcp"]).join(", ")),
            }]
        }
        "rtmach-3" => {
            let claim = "BPI breaks down above RCS (C's long critical section is aborted and restarted)";
            if rcs {
                vec![Conclusion {
                    claim,
                    holds: Some(get("bpi") > get("rcs")),
                    detail: format!("max EXE (ms): {}", describe(&["bpi", "rcs"]).join(", ")),
                }]
            } else {
                vec![Conclusion { claim, ..unavailable() }]
            }
        }
        _ => Vec::new(),
    }
}

/// Run experiment `args.name` (one of `rtmach-1` to `rtmach-3`) and print its tables.
pub(super) fn run(args: &ExperimentArgs) -> Result<(), String> {
    let bench = benchmark(&args.name).ok_or_else(|| format!("unknown experiment `{}`", args.name))?;
    let registered = tempi::policy::lock::names();
    let is_registered = |p: &str| registered.iter().any(|n| n == p);
    let rcs = is_registered("rcs");
    let policies: Vec<&'static str> = POLICIES.iter().copied().filter(|p| is_registered(p)).collect();
    let costs_for = |p: &str| if args.no_costs { Costs::default() } else { paper_costs(p) };
    let mut rows = Vec::new();
    for p in &policies {
        rows.push(search(&bench, p, costs_for(p), args.quick, None)?);
    }
    if let (true, Some(exempt)) = (rcs, bench.rcs_exempt) {
        rows.push(search(&bench, "rcs", costs_for("rcs"), args.quick, Some(exempt))?);
    }
    let checks = conclusions(&bench, &rows, rcs);
    let text = if args.json {
        format!("{}\n", to_json(&bench, &rows, &checks, args, rcs))
    } else {
        to_text(&bench, &rows, &checks, args, rcs)
    };
    // A closed pipe (`| head`) is not an error worth a panic.
    use std::io::Write;
    let _ = std::io::stdout().write_all(text.as_bytes());
    Ok(())
}

fn paper_row<'a>(bench: &'a Benchmark, policy: &str) -> Option<&'a PaperRow> {
    bench.paper.iter().find(|r| r.policy == policy)
}

fn to_text(bench: &Benchmark, rows: &[Breakdown], checks: &[Conclusion], args: &ExperimentArgs, rcs: bool) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "{}: {}", bench.name, bench.title);
    let _ = writeln!(s, "threads (fixed priority, larger = more urgent; deadline = period):");
    for t in &bench.tasks {
        let c = t.wcet_ms.map_or("EXE".to_string(), |c| format!("{c} ms"));
        let lock =
            t.object.map_or("no lock".to_string(), |k| format!("locks {} for its whole job", bench.objects[k].name));
        let _ = writeln!(
            s,
            "  {}  T = {:>4} ms  C = {:>6}  S = {:>3} ms  priority {}  {}",
            t.name, t.period_ms, c, t.start_ms, t.priority, lock
        );
    }
    let _ = writeln!(s, "varied: {}", bench.varied);
    let search = if args.quick {
        "bisection at 1 ms resolution (--quick)"
    } else {
        "1 ms scan up to 100 % utilisation, then bisection to 1 µs"
    };
    let _ = writeln!(s, "search: {search}");
    let _ = writeln!(
        s,
        "horizon: {} ms (last start + 2 hyperperiods of {} ms), virtual time",
        bench.horizon_ms(),
        bench.hyperperiod_ms()
    );
    if args.no_costs {
        let _ = writeln!(s, "costs: none (--no-costs)");
    } else {
        let _ = writeln!(
            s,
            "costs: paper tables 1-2: context switch 172 us, abort 816 us; lock acquired / not acquired / unlock \
             per protocol in the last column"
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(
        s,
        "{:<12} {:>19} {:>7} | {:>20} {:>7} | {:<24} costs (us)",
        "Lock policy", "Max exec time (ms)", "U (%)", "paper: max exec (ms)", "U (%)", "first miss"
    );
    for r in rows {
        let (pe, pu) = match (paper_row(bench, r.policy), r.exempt) {
            (Some(p), None) => (p.max_exe_ms.to_string(), format!("{:.1}", p.utilisation_pct)),
            _ => ("-".to_string(), "-".to_string()),
        };
        let label = match r.exempt {
            Some(t) => format!("{} (no {t})", r.policy.to_uppercase()),
            None => r.policy.to_uppercase(),
        };
        let u = r.max_exe_us.map_or("-".to_string(), |e| format!("{:.1}", bench.utilisation_pct(e)));
        let miss = match &r.first_miss {
            Some((e, who)) => format!(
                "{} ms: {}",
                ms_text(Some(*e)),
                who.iter().map(|(n, k)| format!("{n} x{k}")).collect::<Vec<_>>().join(" ")
            ),
            None => "none up to 100 %".to_string(),
        };
        let c = if args.no_costs { Costs::default() } else { paper_costs(r.policy) };
        let _ = writeln!(
            s,
            "{:<12} {:>19} {:>7} | {:>20} {:>7} | {:<24} {}/{}/{}",
            label,
            ms_text(r.max_exe_us),
            u,
            pe,
            pu,
            miss,
            c.lock_acquired.as_micros(),
            c.lock_not_acquired.as_micros(),
            c.unlock.as_micros()
        );
        if let Some(again) = r.passes_again_us {
            let _ =
                writeln!(s, "{:<12} note: all deadlines met again at EXE = {} ms (anomaly)", "", ms_text(Some(again)));
        }
    }
    if !rcs {
        let _ = writeln!(s, "RCS: not available in this build");
    }
    if let Some(t) = rows.iter().find_map(|r| r.exempt) {
        let _ = writeln!(
            s,
            "RCS (no {t}): supplementary, {t}'s deadlines not counted ({t} is the thread whose section RCS restarts)"
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Paper's conclusions, checked on these runs:");
    for c in checks {
        let mark = match c.holds {
            Some(true) => "[holds]",
            Some(false) => "[does not hold]",
            None => "[not checked]",
        };
        let _ = writeln!(s, "  {mark} {}", c.claim);
        let _ = writeln!(s, "      {}", c.detail);
    }
    let _ = writeln!(s, "({} simulation runs)", rows.iter().map(|r| r.runs).sum::<usize>());
    s
}

fn to_json(bench: &Benchmark, rows: &[Breakdown], checks: &[Conclusion], args: &ExperimentArgs, rcs: bool) -> Value {
    let threads: Vec<Value> = bench
        .tasks
        .iter()
        .map(|t| {
            json!({
                "name": t.name,
                "period_ms": t.period_ms,
                "wcet_ms": t.wcet_ms,
                "start_ms": t.start_ms,
                "priority": t.priority,
                "locks": t.object.map(|k| bench.objects[k].name),
            })
        })
        .collect();
    let rows: Vec<Value> = rows
        .iter()
        .map(|r| {
            let paper = paper_row(bench, r.policy).filter(|_| r.exempt.is_none());
            let c = if args.no_costs { Costs::default() } else { paper_costs(r.policy) };
            json!({
                "policy": r.policy,
                "deadlines_not_counted": r.exempt,
                "max_exe_us": r.max_exe_us,
                "utilisation_pct": r.max_exe_us.map(|e| (bench.utilisation_pct(e) * 100.0).round() / 100.0),
                "paper_max_exe_ms": paper.map(|p| p.max_exe_ms),
                "paper_utilisation_pct": paper.map(|p| p.utilisation_pct),
                "first_miss": r.first_miss.as_ref().map(|(e, who)| json!({
                    "exe_us": e,
                    "threads": who.iter().map(|(n, k)| json!({"name": n, "misses": k})).collect::<Vec<_>>(),
                })),
                "passes_again_us": r.passes_again_us,
                "runs": r.runs,
                "costs_us": {
                    "context_switch": c.context_switch.as_micros() as u64,
                    "lock_acquired": c.lock_acquired.as_micros() as u64,
                    "lock_not_acquired": c.lock_not_acquired.as_micros() as u64,
                    "unlock": c.unlock.as_micros() as u64,
                    "abort": c.abort.as_micros() as u64,
                },
            })
        })
        .collect();
    let checks: Vec<Value> =
        checks.iter().map(|c| json!({"claim": c.claim, "holds": c.holds, "detail": c.detail})).collect();
    json!({
        "experiment": bench.name,
        "title": bench.title,
        "varied": bench.varied,
        "threads": threads,
        "horizon_ms": bench.horizon_ms(),
        "hyperperiod_ms": bench.hyperperiod_ms(),
        "costs": if args.no_costs { "none" } else { "paper" },
        "search": if args.quick { "quick" } else { "full" },
        "rcs_available": rcs,
        "rows": rows,
        "conclusions": checks,
    })
}
