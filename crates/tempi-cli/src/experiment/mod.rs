//! `tempi experiment NAME`: rebuild a published experiment and check its conclusions against
//! our own runs.
//!
//! Owns the command's arguments, the list of experiments ([`NAMES`]) and the dispatch to them;
//! each experiment lives in its own file and owns its workload, the paper's numbers, the
//! conclusions it checks and its report:
//! - `rtmach.rs`: `rtmach-1` to `rtmach-3`, the Real-Time Mach locking benchmarks, in virtual
//!   time (breakdown utilisation per locking protocol);
//! - `ports/`: `ports-1` and `ports-2`, the PORTS scheduler's cost tables (insertion into the
//!   slot list, total scheduling cost), timed on this machine's clock for the admission
//!   engines of `tempi::policy::admit`;
//! - `spring.rs`: `spring-planner`, `spring-fastswitch` and `spring-locality`, the Spring
//!   planner's evaluation (planner time, fast switches, locality), on modelled planner cost;
//! - `freejazz.rs`: `freejazz-2`, FREE JAZZ's message costs (table 2) with the scheduler open
//!   and hard-wired, timed on one pinned real-time CPU of this machine.
//!
//! Every report prints ours next to the paper's numbers, then each of the paper's conclusions
//! marked as holding or not in our runs; `--json` prints the same as one JSON object.

mod freejazz;
mod ports;
mod rtmach;
mod spring;

/// The experiments `tempi experiment` knows.
pub const NAMES: &[&str] = &[
    "rtmach-1",
    "rtmach-2",
    "rtmach-3",
    "ports-1",
    "ports-2",
    "spring-planner",
    "spring-fastswitch",
    "spring-locality",
    "freejazz-2",
];

/// `tempi experiment` arguments.
#[derive(clap::Args, Debug)]
pub struct ExperimentArgs {
    /// Which experiment: rtmach-1, rtmach-2 or rtmach-3 (Real-Time Mach locking benchmarks
    /// 1-3, virtual time); ports-1 (PORTS table 1: cost of inserting into the slot list) or
    /// ports-2 (PORTS table 2: total scheduling cost), timed on this machine; spring-planner,
    /// spring-fastswitch or spring-locality (Spring figures 11-15, modelled planner cost);
    /// freejazz-2 (FREE JAZZ table 2: message costs, open vs hard-wired scheduler, timed).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(NAMES))]
    pub name: String,
    /// Print one JSON object instead of tables.
    #[arg(long)]
    pub json: bool,
    /// A smaller run: for rtmach-*, bisection at 1 ms resolution instead of a 1 ms scan refined
    /// to 1 µs; for ports-*, 8,000 jobs per list length instead of 25,000; for spring-*, 5
    /// runs per point instead of 50 (and fewer points for spring-fastswitch and
    /// spring-locality); for freejazz-2, 2,000 operations once instead of 50,000 21 times.
    #[arg(long)]
    pub quick: bool,
    /// rtmach-* only: charge no simulated overheads (context switch, lock, unlock, abort all
    /// zero).
    #[arg(long)]
    pub no_costs: bool,
    /// ports-* only: how relative deadlines are drawn. seed-like (the default): a small
    /// multiple of the job's worst case, so insertions land near the last one; random: around
    /// N/2 arrivals ahead, at random places in the list; both: one after the other, with the
    /// paper's conclusions side by side.
    #[arg(long, value_enum)]
    pub workload: Option<ports::WorkloadChoice>,
}

/// Run experiment `args.name` and print its report.
pub fn run(args: &ExperimentArgs) -> Result<(), String> {
    if args.workload.is_some() && !args.name.starts_with("ports-") {
        return Err(format!("--workload is for ports-1 and ports-2, not {}", args.name));
    }
    if args.name == "freejazz-2" {
        freejazz::run(args)
    } else if args.name.starts_with("ports-") {
        ports::run(args)
    } else if args.name.starts_with("spring-") {
        spring::run(args)
    } else {
        rtmach::run(args)
    }
}
