//! The `tempi` command line: simulate a scenario file in virtual time, run it on the real
//! clock, or benchmark the runtime.
//!
//! Owns argument parsing, exit codes and output files. The scenario format lives in the
//! library (`tempi_cli::scenario`); the benchmarks in `bench`. Exit codes: 0 success, 1 the
//! run itself failed (runtime or I/O error), 2 bad input (scenario file, command-line flags,
//! or an output path that cannot be written, checked before the run).
//! `analyze` answers with its status: 0 shown schedulable, 1 not shown schedulable, 2 an error.

mod analyze;
mod bench;
mod compare;
mod experiment;
mod plan;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::{Config, RunOutcome, Time};

use tempi_cli::scenario::{parse_duration, Overrides, Scenario};

const AFTER_HELP: &str = "\
Durations are written like 12ms, 500us, 250ns, 1.5s or 2s; a bare integer is nanoseconds
(one under 1000 in a file is warned about: `period = 10` is 10 ns, not 10 ms).
A file that is valid but doubtful (a bare integer, a wcet above the period, a periodic
thread with no work, steps longer than the declared wcet) runs with warnings on stderr.
Output files (--report, --trace, --gantt, --csv) go into existing directories only: tempi never
creates one. Exit codes: 0 success, 2 bad input (with FILE:LINE when a line applies),
1 the run itself failed.
The scenario format is described in docs/SCENARIOS.md.

Examples:
  tempi simulate examples/rm-textbook.toml --gantt target/rm.svg
  tempi simulate examples/edf-full-utilisation.toml --policy fp
  tempi simulate examples/temporal-isolation.toml --gantt target/isolation.svg
  tempi simulate examples/servers.toml --report target/servers.json
  tempi run examples/rm-textbook.toml --until 100ms --fifo 50
  tempi compare examples/spring-exec.toml --fifo 50
  tempi simulate examples/locks-inversion.toml --lock-protocol bp
  tempi analyze examples/locks-pcp.toml
  tempi plan examples/spring-plan.toml --json
  tempi bench --quick
  tempi bench --only lock.uncontended,lock.handoff";

/// Real-time user-level threads: simulate or run timing scenarios described in TOML files.
#[derive(Parser, Debug)]
#[command(name = "tempi", version, after_help = AFTER_HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run a scenario in deterministic virtual time and report what happened.
    ///
    /// Work takes exactly the time it asks for and the clock jumps between events, so the
    /// same file (and seed) always gives the same schedule, byte for byte.
    Simulate(Outputs),
    /// Run a scenario on the machine's real clock, one dispatcher OS thread per CPU.
    ///
    /// `work` steps spin for their duration. Needs a finite horizon: `until` in the
    /// scenario or --until.
    Run(RunArgs),
    /// Analyse a scenario's schedulability without running it: blocking terms per locking
    /// protocol, Liu & Layland with blocking, response times (see docs/ANALYSIS.md).
    ///
    /// Exit status: 0 when the scenario is shown schedulable; 1 when it is not shown
    /// schedulable (NOT schedulable, inconclusive, a thread not analysed, or no partition
    /// found); 2 on an error (a bad file or flag). A CI pipeline can gate on it.
    Analyze {
        /// The scenario file (TOML).
        file: PathBuf,
        /// Print machine-readable JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Locking protocol of every resource, overriding the scenario's; the file is then
        /// checked as if it said so itself.
        #[arg(long, value_name = "NAME")]
        lock_protocol: Option<String>,
        /// Scheduling policy, overriding the scenario's `policy`.
        #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(tempi::policy::sched::NAMES))]
        policy: Option<String>,
        /// Place the periodic and sporadic threads on the scenario's CPUs by first-fit or
        /// worst-fit decreasing (instead of their `cpu`), print the placement, analyse it.
        #[arg(long, value_name = "HEURISTIC", value_parser = ["ffd", "wfd"])]
        partition: Option<String>,
    },
    /// Measure tempi against what a user would pick instead, in the same run, and print ratios:
    /// context switch, spawn, simulator throughput, accounting, budget notification, locks.
    Bench {
        /// Print machine-readable JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Fewer iterations: a quick smoke run rather than stable numbers.
        #[arg(long)]
        quick: bool,
        /// Run only these groups (comma-separated or repeated); default: all.
        #[arg(long, value_name = "GROUP", value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(bench::GROUPS))]
        only: Vec<String>,
    },
    /// Rebuild a published experiment and check its conclusions (rtmach-1, rtmach-2, rtmach-3:
    /// the Real-Time Mach locking benchmarks, in virtual time; ports-1, ports-2: the PORTS
    /// admission cost tables, timed here; spring-planner, spring-fastswitch, spring-locality:
    /// the Spring planner's evaluation, on modelled cost; freejazz-2: FREE JAZZ's message
    /// costs with the scheduler open or hard-wired, timed here); see docs/EXPERIMENTS.md.
    Experiment(experiment::ExperimentArgs),
    /// Run a scenario both ways, simulated and on the real clock, and compare them side by
    /// side, thread by thread: jobs, completions, misses, aborted jobs, kills, worst and mean
    /// response, and each thread group's planner decisions.
    ///
    /// Marks every difference beyond the tolerance (job counts apart by more than
    /// --horizon-jobs, a miss, an aborted job or a kill on one side only, worst responses
    /// apart by more than --tolerance, a thread or a group decision on one side only) and says
    /// which way it goes: real time worse (load can explain it) or better (load alone
    /// cannot). Exit status: 0 when the runs agree, 1 when they differ, 2 on an error.
    Compare(compare::CompareArgs),
    /// Plan the scenario's thread groups (`[[group]]`) with the Spring planner, without
    /// running them: each request's decision and cost, and where every task goes.
    Plan {
        /// The scenario file.
        file: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

/// What to run and what to write: shared by `simulate` and `run`.
#[derive(Args, Debug)]
struct Outputs {
    /// The scenario file (TOML).
    file: PathBuf,
    /// Stop at this time, overriding the scenario's `until` (e.g. 100ms); must be positive,
    /// as `until` must.
    #[arg(long, value_name = "T", value_parser = parse_positive_duration)]
    until: Option<Duration>,
    /// Scheduling policy, overriding the scenario's `policy`.
    #[arg(long, value_name = "NAME", value_parser = clap::builder::PossibleValuesParser::new(tempi::policy::sched::NAMES))]
    policy: Option<String>,
    /// Locking protocol of every `[[resource]]`, overriding the scenario's (km, bp, bpi, pcp,
    /// srp, ...); the file is then checked as if it said so itself.
    #[arg(long, value_name = "NAME")]
    lock_protocol: Option<String>,
    /// Round-robin time slice, overriding the scenario's `quantum` (e.g. 2ms).
    #[arg(long, value_name = "T", value_parser = parse_duration)]
    quantum: Option<Duration>,
    /// Write the JSON report (per-thread and per-set statistics, jobs, budget events) here
    /// (its directory must exist).
    #[arg(long, value_name = "OUT.json")]
    report: Option<PathBuf>,
    /// Write a Perfetto / chrome://tracing trace here (its directory must exist).
    #[arg(long, value_name = "OUT.json")]
    trace: Option<PathBuf>,
    /// Write an SVG Gantt chart here (its directory must exist).
    #[arg(long, value_name = "OUT.svg")]
    gantt: Option<PathBuf>,
    /// Write one CSV row per job here (thread, CPU, job number, release, start, finish,
    /// deadline, response, execution, lateness, outcome; its directory must exist).
    #[arg(long, value_name = "OUT.csv")]
    csv: Option<PathBuf>,
    /// Print nothing but warnings and errors.
    #[arg(long, short)]
    quiet: bool,
}

/// `tempi run` flags on top of the shared ones.
#[derive(Args, Debug)]
struct RunArgs {
    #[command(flatten)]
    outputs: Outputs,
    /// Run dispatchers under SCHED_FIFO at this priority (1-99); a refusal is a warning.
    #[arg(long, value_name = "PRIO", value_parser = clap::value_parser!(i32).range(1..=99))]
    fifo: Option<i32>,
    /// Do not pin each dispatcher thread to its CPU.
    #[arg(long)]
    no_pin: bool,
    /// Lock all memory (mlockall) before running; a refusal is a warning.
    #[arg(long)]
    lock_memory: bool,
}

/// Why the command failed, which decides the exit code.
enum Failure {
    /// The user's input is wrong: exit code 2.
    Input(String),
    /// The run itself failed: exit code 1.
    Runtime(String),
}

fn input(e: impl std::fmt::Display) -> Failure {
    Failure::Input(e.to_string())
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            // Help and version requests are answers, not errors.
            if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
                let _ = e.print();
                return ExitCode::SUCCESS;
            }
            // `tempi` alone: the help is the most useful answer, but it is still a usage error.
            if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                let _ = e.print();
                return ExitCode::from(2);
            }
            let text = e.render().to_string();
            let text = text.strip_prefix("error: ").unwrap_or(&text);
            eprint!("tempi: {text}");
            if !text.ends_with('\n') {
                eprintln!();
            }
            return ExitCode::from(2);
        }
    };
    let result = match cli.command {
        Command::Simulate(out) => simulate(&out),
        Command::Run(args) => run(&args),
        Command::Analyze { file, json, lock_protocol, policy, partition } => {
            match analyze(&file, json, lock_protocol.as_deref(), policy.as_deref(), partition.as_deref()) {
                // Not shown schedulable is an answer, already printed, not a failure to report.
                Ok(false) => return ExitCode::from(1),
                other => other.map(|_| ()),
            }
        }
        Command::Compare(args) => match compare::run(&args) {
            Ok(true) => Ok(()),
            // The differences are the answer, already printed.
            Ok(false) => return ExitCode::from(1),
            // Every failure of a comparison is exit status 2, a run's too: 1 means "they differ".
            Err(m) => Err(Failure::Input(m)),
        },
        Command::Bench { json, quick, only } => bench::run(json, quick, &only).map_err(Failure::Runtime),
        Command::Experiment(args) => experiment::run(&args).map_err(Failure::Runtime),
        Command::Plan { file, json } => Scenario::load(&file)
            .map_err(input)
            .inspect(print_warnings)
            .and_then(|sc| plan::plan(&sc, json).map_err(Failure::Input))
            .map(|text| print!("{text}")),
    };
    let (message, code) = match result {
        Ok(()) => return ExitCode::SUCCESS,
        Err(Failure::Input(m)) => (m, 2),
        Err(Failure::Runtime(m)) => (m, 1),
    };
    // A failure always says something, even when the error it comes from has no text.
    if message.trim().is_empty() {
        eprintln!("tempi: failed (exit code {code}) without an error message");
    } else {
        eprintln!("tempi: {message}");
    }
    ExitCode::from(code)
}

/// A duration flag that must not be zero (`--until`): the file's `until` refuses zero too.
fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let d = parse_duration(text)?;
    if d.is_zero() {
        return Err("must be positive".to_string());
    }
    Ok(d)
}

/// What the file probably did not mean, on stderr (even with --quiet), before anything runs.
fn print_warnings(sc: &Scenario) {
    for w in &sc.warnings {
        eprintln!("tempi: warning: {w}");
    }
}

/// Load the scenario and apply the command-line overrides.
fn load(out: &Outputs) -> Result<Scenario, Failure> {
    let overrides = Overrides { lock_protocol: out.lock_protocol.clone() };
    let mut sc = Scenario::load_with(&out.file, &overrides).map_err(input)?;
    print_warnings(&sc);
    if let Some(q) = out.quantum {
        sc.set_quantum(q).map_err(input)?;
    }
    if let Some(p) = &out.policy {
        sc.set_policy(p).map_err(input)?;
    }
    Ok(sc)
}

/// Print the analysis; `Ok(true)` when it shows the scenario schedulable.
fn analyze(
    file: &Path,
    json: bool,
    lock_protocol: Option<&str>,
    policy: Option<&str>,
    partition: Option<&str>,
) -> Result<bool, Failure> {
    let overrides = Overrides { lock_protocol: lock_protocol.map(str::to_string) };
    let mut sc = Scenario::load_with(file, &overrides).map_err(input)?;
    print_warnings(&sc);
    if let Some(p) = policy {
        sc.set_policy(p).map_err(input)?;
    }
    let fit = partition.and_then(tempi::analysis::Fit::by_name);
    let report = match fit {
        Some(fit) => {
            let (placed, placement) = analyze::partition(&sc, fit).map_err(|e| match e {
                analyze::PartitionError::Refused(m) => Failure::Input(m),
                // No placement passes the tests: not shown schedulable, exit status 1.
                analyze::PartitionError::NotFound(m) => Failure::Runtime(m),
            })?;
            analyze::analyze(&placed, json, Some(&placement)).map_err(Failure::Input)?
        }
        None => analyze::analyze(&sc, json, None).map_err(Failure::Input)?,
    };
    print!("{}", report.text);
    Ok(report.schedulable == Some(true))
}

fn simulate(out: &Outputs) -> Result<(), Failure> {
    let sc = load(out)?;
    check_outputs(out)?;
    let until = match out.until.or(sc.until) {
        Some(u) => Time::ZERO + u,
        // Without a horizon a simulation stops when nothing can happen any more, which is
        // never if something periodic is left: refuse rather than loop forever.
        None if sc.never_ends() => {
            return Err(Failure::Input(format!(
                "{}: this scenario never ends on its own (periodic threads or timers): set `until` in \
                 [runtime] or pass --until",
                sc.file
            )))
        }
        None => Time::MAX,
    };
    let config = trace_config(&sc, out);
    let config = if out.quiet { config } else { config.progress(progress_reporter(until)) };
    execute::<VirtualClock>(&sc, config, until, out)
}

/// Whether the run's trace is used: an output is made from it, or the scenario has a lock
/// whose protocol takes a free lock without a runtime call when tracing is off, which would
/// then no longer be a preemption point and could change the schedule.
fn needs_trace(sc: &Scenario, out: &Outputs) -> bool {
    out.report.is_some() || out.trace.is_some() || out.gantt.is_some() || out.csv.is_some() || locks_need_trace(sc)
}

/// Whether the scenario has a lock whose protocol takes a free lock without a runtime call
/// when tracing is off (see [`needs_trace`]).
fn locks_need_trace(sc: &Scenario) -> bool {
    let fast_path = |protocol: &str| tempi::policy::lock::by_name(protocol).is_some_and(|p| p.uncontended_fast_path());
    sc.resources.iter().any(|r| fast_path(&r.protocol))
}

/// The scenario's configuration, with tracing off when nothing uses the trace: the summary
/// reads only the statistics the kernel keeps, and a long run would otherwise fill the trace
/// buffer for nothing (and warn that it dropped records).
fn trace_config(sc: &Scenario, out: &Outputs) -> Config {
    if needs_trace(sc, out) {
        sc.config()
    } else {
        sc.config().trace_capacity(0)
    }
}

/// Progress on long simulations: once a run has taken more than a second of wall time, a line
/// on stderr at most every second with how far the simulated clock has got.
fn progress_reporter(until: Time) -> impl Fn(Time) + Send + Sync + 'static {
    let started = std::time::Instant::now();
    let last = std::sync::Mutex::new(started);
    move |now: Time| {
        let wall = std::time::Instant::now();
        let mut last = last.lock().unwrap_or_else(|e| e.into_inner());
        if wall.duration_since(*last) < std::time::Duration::from_secs(1) {
            return;
        }
        *last = wall;
        let elapsed = wall.duration_since(started).as_secs_f64();
        let secs = |t: Time| t.as_nanos() as f64 / 1e9;
        if until == Time::MAX {
            eprintln!("tempi: simulated {:.3} s ({elapsed:.0} s of wall time)", secs(now));
        } else {
            let pct = now.as_nanos() as f64 * 100.0 / until.as_nanos().max(1) as f64;
            eprintln!(
                "tempi: simulated {:.3} s of {:.3} s ({pct:.0}%, {elapsed:.0} s of wall time)",
                secs(now),
                secs(until)
            );
        }
    }
}

fn run(args: &RunArgs) -> Result<(), Failure> {
    let out = &args.outputs;
    let sc = load(out)?;
    sc.check_real_time().map_err(input)?;
    check_outputs(out)?;
    let Some(until) = out.until.or(sc.until) else {
        return Err(Failure::Input(format!(
            "{}: a real-time run needs a finite horizon: set `until` in [runtime] or pass --until",
            sc.file
        )));
    };
    let config = trace_config(&sc, out).pin(!args.no_pin).fifo_priority(args.fifo).lock_memory(args.lock_memory);
    execute::<RealClock>(&sc, config, Time::ZERO + until, out)
}

/// Turns a finished run into the text of one output file.
type Exporter = fn(&RunOutcome) -> String;

/// Build the runtime on clock `C`, run it, print the summary and write the files asked for.
fn execute<C: Clock>(sc: &Scenario, config: Config, until: Time, out: &Outputs) -> Result<(), Failure> {
    let (mut rt, admissions) = sc.runtime_with_admission::<C>(config).map_err(input)?;
    let spring = sc.populate_groups(&mut rt).map_err(input)?;
    let outcome = rt.run_until(until).map_err(|e| Failure::Runtime(format!("{}: run failed: {e}", sc.file)))?;

    // The summary lists the run's warnings: printed there, they are not repeated on stderr.
    if out.quiet {
        for w in &outcome.warnings {
            eprintln!("tempi: warning: {w}");
        }
    }
    if outcome.trace_dropped > 0 {
        eprintln!(
            "tempi: warning: {} trace records were dropped (per-CPU buffer full); statistics are exact, \
             the trace and Gantt chart are cut",
            outcome.trace_dropped
        );
    }
    if !out.quiet {
        print_summary(sc, &outcome);
        if let Some(sp) = &spring {
            print!("{}", tempi_cli::scenario::spring_summary(sp));
        }
    }
    if let Some(path) = &out.csv {
        warn_missing_rows(path, &outcome);
    }
    let files: [(&Option<PathBuf>, &str, Exporter); 4] = [
        (&out.report, "report", tempi::trace::report::to_json),
        (&out.trace, "trace", tempi::trace::perfetto::to_json),
        (&out.gantt, "Gantt chart", tempi::trace::gantt::to_svg),
        (&out.csv, "per-job CSV", tempi::trace::csv::to_csv),
    ];
    for (path, what, export) in files {
        if let Some(path) = path {
            // A run with admission lists its decisions in the report; others keep the report
            // as it was.
            let text = match (&admissions, what) {
                (Some(a), "report") => a.report_json(&outcome),
                _ => export(&outcome),
            };
            // A run with thread groups adds its plan: planned and actual times to the
            // report, planned windows and cutoff lines to the trace and the chart.
            let text = match (&spring, what) {
                (Some(sp), "report") => tempi_cli::scenario::report_with_groups(&text, sp),
                (Some(sp), "trace") => {
                    tempi::trace::plans::perfetto_with_plan(&outcome, &tempi_cli::scenario::overlay(sp))
                }
                (Some(_), "per-job CSV") => text,
                (Some(sp), _) => tempi::trace::gantt::to_svg_with_plan(&outcome, &tempi_cli::scenario::overlay(sp)),
                (None, _) => text,
            };
            write_file(path, &text)?;
            if !out.quiet {
                println!("wrote {what} to {}", path.display());
            }
        }
    }
    Ok(())
}

/// A per-job CSV never lacks rows silently: when the trace lost records, say on stderr (even
/// with --quiet) how many jobs have no row and that the rows kept may lack their end.
fn warn_missing_rows(path: &Path, outcome: &RunOutcome) {
    if outcome.trace_dropped == 0 {
        return;
    }
    let missing = tempi::trace::csv::missing_jobs(outcome);
    eprintln!(
        "tempi: warning: --csv {}: {missing} jobs have no row (their release records were among the {} trace \
         records dropped, per-CPU buffer full); the rows written may lack a start or finish: a shorter \
         run (--until) keeps every row",
        path.display(),
        outcome.trace_dropped
    );
}

/// The library's summary, or a few lines of our own while that is still empty.
fn print_summary(sc: &Scenario, outcome: &RunOutcome) {
    let text = tempi::trace::report::summary_text(outcome);
    if !text.trim().is_empty() {
        print!("{text}");
        if !text.ends_with('\n') {
            println!();
        }
        return;
    }
    println!(
        "{}: {} run, policy {}, {} CPU(s), ended at {}",
        sc.file,
        outcome.mode.name(),
        outcome.scheduler,
        outcome.cpus,
        outcome.end
    );
    for t in &outcome.threads {
        let s = &t.stats;
        println!(
            "  {:<16} cpu {} prio {:>3}  released {:>4}  completed {:>4}  misses {:>3}  aborted {:>3}  skipped {:>3}",
            t.name, t.cpu, t.priority, s.released, s.completed, s.misses, s.aborted, s.skipped
        );
    }
    println!("total deadline misses: {}", outcome.total_misses());
    // Shown only when there are some: a soft thread's misses are targets missed, a hard one's
    // are faults of the run.
    if outcome.hard_misses() > 0 {
        println!("faults: deadline misses by hard threads: {}", outcome.hard_misses());
    }
}

/// Refuse an output path that cannot be written, before the run rather than after it: a
/// directory, a file in a directory that does not exist (directories are never created: a
/// mistyped path should not leave new directories behind), or two outputs on one file.
fn check_outputs(out: &Outputs) -> Result<(), Failure> {
    let files = [("--report", &out.report), ("--trace", &out.trace), ("--gantt", &out.gantt), ("--csv", &out.csv)];
    let given: Vec<(&str, &PathBuf)> = files.iter().filter_map(|(flag, p)| p.as_ref().map(|p| (*flag, p))).collect();
    for (i, &(flag, path)) in given.iter().enumerate() {
        check_output(flag, path)?;
        let shown = path.display();
        if let Some(&(other, _)) = given[..i].iter().find(|(_, p)| *p == path) {
            return Err(Failure::Input(format!("{other} and {flag} both name {shown}: give each output its own file")));
        }
    }
    Ok(())
}

/// Refuse one output path that cannot be written: a directory, or a file in a directory that
/// does not exist.
fn check_output(flag: &str, path: &Path) -> Result<(), Failure> {
    let shown = path.display();
    if path.is_dir() {
        return Err(Failure::Input(format!("{flag} {shown}: is a directory; give the name of a file to write")));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        if !dir.exists() {
            return Err(Failure::Input(format!(
                "{flag} {shown}: directory {} does not exist (tempi does not create directories)",
                dir.display()
            )));
        }
        if !dir.is_dir() {
            return Err(Failure::Input(format!("{flag} {shown}: {} is not a directory", dir.display())));
        }
    }
    Ok(())
}

fn write_file(path: &Path, contents: &str) -> Result<(), Failure> {
    std::fs::write(path, contents).map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))
}
