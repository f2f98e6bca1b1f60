//! `tempi compare`: one scenario run both ways, in virtual time (as `tempi simulate` runs it)
//! and on the real clock (as `tempi run` does), side by side.
//!
//! Owns the comparison: per thread (matched by name) jobs released and completed, deadline
//! misses, aborted jobs, whether it was killed, worst and mean response; per thread group its
//! planner decisions; and the differences beyond the stated tolerance, each marked with the
//! direction it goes. Real time pays overheads the simulation does not (dispatch latency, a
//! busy machine), so a difference where real time does *worse* can come from load; one where
//! it does *better* cannot come from load alone, unless something else in the same run went
//! worse first (a kill frees a CPU for the others). The pure part ([`Side`], [`compare`]) takes
//! two summaries and lists the differences; the rest runs the scenario and prints.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::Serialize;

use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::policy::admit::planner::{Decision, Rejection};
use tempi::{Config, RunOutcome, ThreadOutcome, Time};

use tempi_cli::scenario::{parse_duration, Overrides, Scenario};

/// `tempi compare` flags.
#[derive(Args, Debug)]
pub struct CompareArgs {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Stop both runs at this time, overriding the scenario's `until` (e.g. 100ms).
    #[arg(long, value_name = "T", value_parser = crate::parse_positive_duration)]
    until: Option<Duration>,
    /// Jobs released near the horizon may fall on either side of it: job counts that differ
    /// by at most this many are not a difference.
    #[arg(long, value_name = "N", default_value_t = 1)]
    horizon_jobs: u64,
    /// Worst responses that differ by at most this much are not a difference (e.g. 500us).
    #[arg(long, value_name = "DUR", default_value = "1ms", value_parser = parse_duration)]
    tolerance: Duration,
    /// Write the comparison as JSON here (its directory must exist).
    #[arg(long, value_name = "OUT.json")]
    report: Option<PathBuf>,
    /// Run the real-time dispatchers under SCHED_FIFO at this priority (1-99); a refusal is
    /// a warning.
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99))]
    fifo: Option<i32>,
    /// Locking protocol of every `[[resource]]`, overriding the scenario's, on both sides.
    #[arg(long, value_name = "NAME")]
    lock_protocol: Option<String>,
}

/// One thread as one run saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ThreadRow {
    /// Its name (a group thread's is `GROUP/THREAD`).
    pub name: String,
    /// Its period in nanoseconds, if it is periodic: its releases follow the clock alone.
    pub period: Option<u64>,
    /// Jobs released.
    pub jobs: u64,
    /// Jobs completed.
    pub completed: u64,
    /// Deadlines missed.
    pub misses: u64,
    /// Jobs aborted (miss policy, abort time, or cut short by the thread's end).
    pub aborted: u64,
    /// Whether the thread was killed (a budget's `Kill`, a Spring task stopped at its window).
    pub killed: bool,
    /// Longest response of a completed job, in nanoseconds.
    pub worst_response: Option<u64>,
    /// Mean response of completed jobs, in nanoseconds.
    pub mean_response: Option<u64>,
}

/// What one run reports that the comparison reads.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Side {
    /// Threads in the run's order.
    pub threads: Vec<ThreadRow>,
    /// Thread groups' planner decisions, as (group, decision) in the order they were made;
    /// a decision is `accepted` or `refused (REASON)`.
    pub groups: Vec<(String, String)>,
    /// Threads this clock alone has by design, not a difference: on the real clock the
    /// submission thread (`submit:JOB`) that carries a request to another CPU's admission,
    /// where virtual time makes the test directly.
    pub by_design: Vec<String>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Side {
    /// Read a finished run and its thread groups' executor, if it had one.
    pub fn of(outcome: &RunOutcome, spring: Option<&tempi::spring::Spring>) -> Side {
        let threads = outcome
            .threads
            .iter()
            .map(|t| ThreadRow {
                name: t.name.clone(),
                period: match t.timing {
                    tempi::Timing::Periodic { period, .. } => Some(nanos(period)),
                    _ => None,
                },
                jobs: t.stats.released,
                completed: t.stats.completed,
                misses: t.stats.misses,
                aborted: t.stats.aborted,
                killed: t.outcome == Some(ThreadOutcome::Killed),
                worst_response: t.stats.response_max.map(nanos),
                mean_response: t.stats.mean_response().map(nanos),
            })
            .collect();
        let groups = spring
            .map(|sp| sp.decisions().into_iter().map(|d| (d.group, decision_name(&d.outcome.decision))).collect())
            .unwrap_or_default();
        Side { threads, groups, by_design: Vec::new() }
    }
}

fn decision_name(d: &Decision) -> String {
    match d {
        Decision::Accepted(_) => "accepted".into(),
        Decision::Rejected(Rejection::Infeasible) => "refused (infeasible)".into(),
        Decision::Rejected(Rejection::BudgetExhausted) => "refused (budget-exhausted)".into(),
        Decision::Rejected(Rejection::BudgetTooSmall { .. }) => "refused (budget-too-small)".into(),
    }
}

/// Which way a difference goes, seen from real time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    /// Real time did worse: load, latency or a slow machine can explain it.
    Worse,
    /// Real time did better: load alone cannot explain it.
    Better,
}

/// One difference beyond the tolerance.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Difference {
    /// The thread or group it is about.
    pub subject: String,
    /// What differs, in words.
    pub what: String,
    /// Which way it goes.
    pub real_time: Direction,
}

/// How close the two runs must be.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Tolerance {
    /// Job counts (released, completed) may differ by this many.
    pub horizon_jobs: u64,
    /// Worst responses may differ by this many nanoseconds.
    pub response: u64,
}

/// Every difference between `sim` and `real` beyond `tol`, thread by thread in the
/// simulation's order (threads only in real time last), then group by group.
pub fn compare(sim: &Side, real: &Side, tol: Tolerance) -> Vec<Difference> {
    use Direction::{Better, Worse};
    let mut out = Vec::new();
    let mut diff = |subject: &str, what: String, real_time| {
        out.push(Difference { subject: subject.to_string(), what, real_time });
    };
    for s in &sim.threads {
        let Some(r) = real.threads.iter().find(|r| r.name == s.name) else {
            diff(&s.name, "not in the real-time run".into(), Worse);
            continue;
        };
        let name = s.name.as_str();
        for (what, a, b) in [("jobs released", s.jobs, r.jobs), ("jobs completed", s.completed, r.completed)] {
            if a.abs_diff(b) > tol.horizon_jobs {
                let dir = if b < a { Worse } else { Better };
                diff(name, format!("{what}: {a} simulated, {b} in real time"), dir);
            }
        }
        for (what, a, b) in [("deadline misses", s.misses, r.misses), ("aborted jobs", s.aborted, r.aborted)] {
            if (a == 0) != (b == 0) {
                let (dir, side) = if b > 0 { (Worse, "real time") } else { (Better, "the simulation") };
                diff(name, format!("{what} in {side} only: {a} simulated, {b} in real time"), dir);
            }
        }
        if s.killed != r.killed {
            let (dir, side) = if r.killed { (Worse, "real time") } else { (Better, "the simulation") };
            diff(name, format!("killed in {side} only"), dir);
        }
        if let (Some(a), Some(b)) = (s.worst_response, r.worst_response)
            && a.abs_diff(b) > tol.response
        {
            let dir = if b > a { Worse } else { Better };
            diff(name, format!("worst response: {} simulated, {} in real time", ms(a), ms(b)), dir);
        }
    }
    for r in real.threads.iter().filter(|r| !sim.threads.iter().any(|s| s.name == r.name)) {
        if !real.by_design.contains(&r.name) {
            diff(&r.name, "not in the simulation".into(), Better);
        }
    }
    let mut names: Vec<&str> = Vec::new();
    for (g, _) in sim.groups.iter().chain(&real.groups) {
        if !names.contains(&g.as_str()) {
            names.push(g);
        }
    }
    for g in names {
        let of = |side: &Side| side.groups.iter().filter(|(n, _)| n == g).map(|(_, d)| d.clone()).collect::<Vec<_>>();
        let (a, b) = (of(sim), of(real));
        if a != b {
            let accepted = |v: &[String]| v.iter().filter(|d| *d == "accepted").count();
            let dir = if accepted(&b) < accepted(&a) { Worse } else { Better };
            let show = |v: &[String]| if v.is_empty() { "not planned".to_string() } else { v.join(", ") };
            diff(&format!("group {g}"), format!("{} simulated, {} in real time", show(&a), show(&b)), dir);
        }
    }
    out
}

/// Nanoseconds as milliseconds with three decimals.
fn ms(ns: u64) -> String {
    format!("{}.{:03}", ns / 1_000_000, (ns / 1_000) % 1_000)
}

/// The table: per thread each column as `SIMULATED | REAL`, a `!` after a cell that differs.
pub fn table(sim: &Side, real: &Side, differences: &[Difference]) -> String {
    let mut names: Vec<&str> = sim.threads.iter().map(|t| t.name.as_str()).collect();
    for r in &real.threads {
        if !names.contains(&r.name.as_str()) {
            names.push(&r.name);
        }
    }
    let width = names.iter().map(|n| n.len()).max().unwrap_or(0).max(6);
    let mut text = String::new();
    let _ = writeln!(
        text,
        "{:<width$}  {:<13}  {:<13}  {:<11}  {:<11}  {:<11}  {:<19}  {:<19}",
        "thread", "jobs", "done", "misses", "aborted", "killed", "worst resp", "mean resp"
    );
    let _ = writeln!(text, "{}", "-".repeat(width + 2 + 13 + 2 + 13 + 2 + 11 * 3 + 6 + 2 + 19 + 2 + 19));
    let opt = |v: Option<u64>| v.map_or("-".to_string(), ms);
    for name in names {
        let s = sim.threads.iter().find(|t| t.name == name);
        let r = real.threads.iter().find(|t| t.name == name);
        // The mean response is shown, not compared.
        let marked = |key: Option<&str>| {
            key.is_some_and(|key| {
                differences
                    .iter()
                    .any(|d| d.subject == name && (d.what.starts_with(key) || d.what.starts_with("not in ")))
            })
        };
        let cell = |f: &dyn Fn(&ThreadRow) -> String, key: Option<&str>| {
            let a = s.map_or("-".to_string(), f);
            let b = r.map_or("-".to_string(), f);
            format!("{a} | {b}{}", if marked(key) { " !" } else { "" })
        };
        let _ = writeln!(
            text,
            "{name:<width$}  {:<13}  {:<13}  {:<11}  {:<11}  {:<11}  {:<19}  {:<19}",
            cell(&|t| t.jobs.to_string(), Some("jobs released")),
            cell(&|t| t.completed.to_string(), Some("jobs completed")),
            cell(&|t| t.misses.to_string(), Some("deadline misses")),
            cell(&|t| t.aborted.to_string(), Some("aborted jobs")),
            cell(&|t| if t.killed { "yes".into() } else { "no".into() }, Some("killed")),
            cell(&|t| opt(t.worst_response), Some("worst response")),
            cell(&|t| opt(t.mean_response), None),
        );
    }
    let mut groups: Vec<&str> = Vec::new();
    for (g, _) in sim.groups.iter().chain(&real.groups) {
        if !groups.contains(&g.as_str()) {
            groups.push(g);
        }
    }
    for g in groups {
        let of = |side: &Side| {
            let v: Vec<&str> = side.groups.iter().filter(|(n, _)| n == g).map(|(_, d)| d.as_str()).collect();
            if v.is_empty() {
                "not planned".to_string()
            } else {
                v.join(", ")
            }
        };
        let mark = if differences.iter().any(|d| d.subject == format!("group {g}")) { " !" } else { "" };
        let _ = writeln!(text, "group {g}: {} | {}{mark}", of(sim), of(real));
    }
    text
}

#[derive(Serialize)]
struct ThreadJson<'a> {
    name: &'a str,
    simulation: Option<&'a ThreadRow>,
    real_time: Option<&'a ThreadRow>,
}

#[derive(Serialize)]
struct ReportJson<'a> {
    file: &'a str,
    until: u64,
    tolerance: Tolerance,
    fifo: Option<i32>,
    agree: bool,
    threads: Vec<ThreadJson<'a>>,
    groups: GroupsJson<'a>,
    /// Threads only the real-time run has by design (`Side::by_design`): not differences.
    real_time_only_by_design: &'a [String],
    differences: &'a [Difference],
    warnings: &'a [String],
}

#[derive(Serialize)]
struct GroupsJson<'a> {
    simulation: &'a [(String, String)],
    real_time: &'a [(String, String)],
}

/// The `--report` JSON.
fn report_json(
    file: &str,
    until: Duration,
    tol: Tolerance,
    fifo: Option<i32>,
    sides: (&Side, &Side),
    differences: &[Difference],
    warnings: &[String],
) -> String {
    let (sim, real) = sides;
    let mut threads: Vec<ThreadJson> = sim
        .threads
        .iter()
        .map(|s| ThreadJson {
            name: &s.name,
            simulation: Some(s),
            real_time: real.threads.iter().find(|r| r.name == s.name),
        })
        .collect();
    for r in real.threads.iter().filter(|r| !sim.threads.iter().any(|s| s.name == r.name)) {
        threads.push(ThreadJson { name: &r.name, simulation: None, real_time: Some(r) });
    }
    let json = ReportJson {
        file,
        until: nanos(until),
        tolerance: tol,
        fifo,
        agree: differences.is_empty(),
        threads,
        groups: GroupsJson { simulation: &sim.groups, real_time: &real.groups },
        real_time_only_by_design: &real.by_design,
        differences,
        warnings,
    };
    serde_json::to_string_pretty(&json).unwrap_or_else(|e| format!("\"unserialisable: {e}\"")) + "\n"
}

/// Run `sc` on clock `C` with `config` up to `until`: its side, and the run's warnings.
fn one_side<C: Clock>(sc: &Scenario, config: Config, until: Time) -> Result<(Side, Vec<String>), String> {
    let (mut rt, _admissions) = sc.runtime_with_admission::<C>(config).map_err(|e| e.to_string())?;
    let spring = sc.populate_groups(&mut rt).map_err(|e| e.to_string())?;
    let outcome = rt.run_until(until).map_err(|e| format!("{}: {} run failed: {e}", sc.file, C::MODE.name()))?;
    Ok((Side::of(&outcome, spring.as_ref()), outcome.warnings))
}

/// The submission threads a real-time run of `sc` creates: one per request tested on (or
/// resubmitted to) another CPU than the one it arrives on, named `submit:` and the request.
fn submission_threads(sc: &Scenario) -> Vec<String> {
    let Some(def) = &sc.admission else { return Vec::new() };
    def.requests
        .iter()
        .filter(|r| r.target != r.cpu || r.resubmit.is_some_and(|(elsewhere, _)| elsewhere != r.cpu))
        .map(|r| format!("submit:{}", r.name))
        .collect()
}

/// `tempi compare`: `Ok(true)` when the runs agree. Every error is the caller's exit code 2.
pub fn run(args: &CompareArgs) -> Result<bool, String> {
    let overrides = Overrides { lock_protocol: args.lock_protocol.clone() };
    let sc = Scenario::load_with(&args.file, &overrides).map_err(|e| e.to_string())?;
    let crossings = submission_threads(&sc);
    crate::print_warnings(&sc);
    sc.check_real_time().map_err(|e| e.to_string())?;
    if let Some(path) = &args.report {
        crate::check_output("--report", path).map_err(|e| match e {
            crate::Failure::Input(m) | crate::Failure::Runtime(m) => m,
        })?;
    }
    let Some(until) = args.until.or(sc.until) else {
        return Err(format!(
            "{}: a comparison needs a finite horizon: set `until` in [runtime] or pass --until",
            sc.file
        ));
    };
    let horizon = Time::ZERO + until;
    // Both sides with the configuration `simulate` and `run` would use, trace included only
    // where it changes the schedule (a lock's fast path).
    let base = || if crate::locks_need_trace(&sc) { sc.config() } else { sc.config().trace_capacity(0) };
    let (sim, _) = one_side::<VirtualClock>(&sc, base(), horizon)?;
    let (mut real, warnings) = one_side::<RealClock>(&sc, base().pin(true).fifo_priority(args.fifo), horizon)?;
    real.by_design = crossings;
    for w in &warnings {
        eprintln!("tempi: warning: {w}");
    }
    let tol = Tolerance { horizon_jobs: args.horizon_jobs, response: nanos(args.tolerance) };
    let differences = compare(&sim, &real, tol);

    let fifo = args.fifo.map_or("time-sharing".to_string(), |p| format!("SCHED_FIFO {p}"));
    println!(
        "compare: {} until {} ms: simulation | real time ({fifo}); tolerance {} ms, {} job(s) at the horizon",
        sc.file,
        ms(nanos(until)),
        ms(tol.response),
        tol.horizon_jobs
    );
    print!("{}", table(&sim, &real, &differences));
    for name in real.by_design.iter().filter(|n| real.threads.iter().any(|t| &t.name == *n)) {
        println!("{name}: a request's crossing to another CPU's admission, in real time only (not a difference)");
    }
    if differences.is_empty() {
        println!("agree: no difference beyond the tolerance");
    } else {
        let worse = differences.iter().filter(|d| d.real_time == Direction::Worse).count();
        println!(
            "differ: {} difference(s), real time worse in {worse}, better in {}:",
            differences.len(),
            differences.len() - worse
        );
        for d in &differences {
            let dir = match d.real_time {
                Direction::Worse => "real time worse",
                Direction::Better => "real time better",
            };
            println!("  {}: {} ({dir})", d.subject, d.what);
        }
    }
    if let Some(path) = &args.report {
        let text = report_json(&sc.file, until, tol, args.fifo, (&sim, &real), &differences, &warnings);
        std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote report to {}", path.display());
    }
    Ok(differences.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, jobs: u64, misses: u64, worst_ms: u64) -> ThreadRow {
        ThreadRow {
            name: name.into(),
            period: None,
            jobs,
            completed: jobs,
            misses,
            aborted: 0,
            killed: false,
            worst_response: Some(worst_ms * 1_000_000),
            mean_response: Some(worst_ms * 1_000_000),
        }
    }

    const TOL: Tolerance = Tolerance { horizon_jobs: 1, response: 1_000_000 };

    fn side(threads: Vec<ThreadRow>) -> Side {
        Side { threads, groups: Vec::new(), by_design: Vec::new() }
    }

    #[test]
    fn compare_takes_a_thread_by_design_for_no_difference() {
        let sim = side(vec![row("a", 3, 0, 2)]);
        let mut real = side(vec![row("a", 3, 0, 2), row("submit:j", 1, 0, 0)]);
        assert_eq!(
            compare(&sim, &real, TOL),
            vec![Difference {
                subject: "submit:j".into(),
                what: "not in the simulation".into(),
                real_time: Direction::Better
            }]
        );
        real.by_design = vec!["submit:j".into()];
        assert_eq!(compare(&sim, &real, TOL), vec![]);
    }

    #[test]
    fn compare_within_the_tolerance_is_no_difference() {
        let sim = side(vec![row("a", 10, 0, 3), row("b", 4, 2, 7)]);
        let mut real = side(vec![row("a", 9, 0, 4), row("b", 5, 1, 6)]);
        // One job less at the horizon, 1 ms more response, misses on both sides: all agreed.
        real.threads[0].completed = 9;
        assert_eq!(compare(&sim, &real, TOL), vec![]);
        assert_eq!(compare(&sim, &sim, TOL), vec![]);
    }

    #[test]
    fn compare_flags_each_difference_with_its_direction() {
        let sim = side(vec![row("a", 10, 0, 3), row("b", 4, 2, 7), row("c", 1, 0, 1), row("gone", 1, 0, 1)]);
        let mut a = row("a", 8, 1, 5);
        a.completed = 10;
        let mut b = row("b", 4, 0, 5);
        b.aborted = 1;
        let mut c = row("c", 1, 0, 1);
        c.killed = true;
        let real = side(vec![a, b, c, row("new", 1, 0, 1)]);
        let d =
            |subject: &str, what: &str, real_time| Difference { subject: subject.into(), what: what.into(), real_time };
        use Direction::{Better, Worse};
        assert_eq!(
            compare(&sim, &real, TOL),
            vec![
                d("a", "jobs released: 10 simulated, 8 in real time", Worse),
                d("a", "deadline misses in real time only: 0 simulated, 1 in real time", Worse),
                d("a", "worst response: 3.000 simulated, 5.000 in real time", Worse),
                d("b", "deadline misses in the simulation only: 2 simulated, 0 in real time", Better),
                d("b", "aborted jobs in real time only: 0 simulated, 1 in real time", Worse),
                d("b", "worst response: 7.000 simulated, 5.000 in real time", Better),
                d("c", "killed in real time only", Worse),
                d("gone", "not in the real-time run", Worse),
                d("new", "not in the simulation", Better),
            ]
        );
        // The other way round, every direction turns.
        let back = compare(&real, &sim, TOL);
        assert_eq!(back.len(), 9);
        assert_eq!(back[0], d("a", "jobs released: 8 simulated, 10 in real time", Better));
        assert_eq!(back[1], d("a", "deadline misses in the simulation only: 1 simulated, 0 in real time", Better));
        assert_eq!(back[2], d("a", "worst response: 5.000 simulated, 3.000 in real time", Better));
        assert!(back.iter().any(|x| x == &d("c", "killed in the simulation only", Better)));
        assert!(back.iter().any(|x| x == &d("gone", "not in the simulation", Better)));
        assert!(back.iter().any(|x| x == &d("new", "not in the real-time run", Worse)));
    }

    #[test]
    fn compare_flags_group_decisions_that_differ() {
        let g = |name: &str, d: &str| (name.to_string(), d.to_string());
        let sim =
            Side { threads: vec![], groups: vec![g("sample", "accepted"), g("greedy", "accepted")], by_design: vec![] };
        let real = Side { threads: vec![], groups: vec![g("sample", "refused (infeasible)")], by_design: vec![] };
        let d =
            |subject: &str, what: &str, real_time| Difference { subject: subject.into(), what: what.into(), real_time };
        assert_eq!(
            compare(&sim, &real, TOL),
            vec![
                d("group sample", "accepted simulated, refused (infeasible) in real time", Direction::Worse),
                d("group greedy", "accepted simulated, not planned in real time", Direction::Worse),
            ]
        );
        assert_eq!(compare(&real, &sim, TOL)[0].real_time, Direction::Better);
        assert_eq!(compare(&sim, &sim, TOL), vec![]);
    }

    #[test]
    fn compare_table_marks_the_cells_that_differ() {
        let sim = side(vec![row("a", 10, 0, 3)]);
        let real = side(vec![row("a", 10, 1, 3)]);
        let text = table(&sim, &real, &compare(&sim, &real, TOL));
        let line = text.lines().nth(2).unwrap();
        assert!(line.starts_with("a  ") && line.contains(" 10 | 10 ") && line.contains(" 0 | 1 ! "), "{text}");
        assert_eq!(line.matches(" !").count(), 1, "{text}");
        assert!(!line.contains("3.000 | 3.000 !"), "{text}");
    }
}
