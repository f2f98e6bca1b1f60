//! # tempi: real-time threads for Rust
//!
//! User-level threads with timing attributes (periodic, sporadic, deadlines, miss policies),
//! an open scheduling meta-interface, and two clocks: a deterministic virtual clock for
//! simulation and testing, and the machine's real clock with a dispatcher OS thread per CPU.
//! The same application code runs on both.
//!
//! ```
//! use std::time::Duration;
//! use tempi::{Runtime, ThreadSpec, Time};
//!
//! let ms = Duration::from_millis;
//! let mut rt = Runtime::simulated(1);
//! rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
//! rt.spawn(ThreadSpec::new("control").periodic(ms(5)).wcet(ms(2)), move |cx| cx.work(ms(2))).unwrap();
//! rt.spawn(ThreadSpec::new("logger").periodic(ms(10)).wcet(ms(5)), move |cx| cx.work(ms(5))).unwrap();
//! let out = rt.run_until(Time::from_millis(100)).unwrap();
//! assert_eq!(out.total_misses(), 0); // U = 0.9 is feasible under EDF
//! ```
//!
//! ## Layout
//!
//! - [`kernel`]: mechanism (threads, stacks, context switches, timers, jobs, accounting).
//! - [`policy`]: decisions, one folder per family, one built-in policy per file.
//! - [`clock`]: virtual and real time.
//! - [`trace`]: fixed-size records and the exporters (Perfetto JSON, SVG Gantt, JSON report).
//! - [`admission`]: PORTS admission control on the runtime: idle-time queries, admitting
//!   jobs under WCET enforcement, cross-CPU submission with negative acknowledgements.
//! - [`runtime`]: configuration, spawning, running, results.
//! - [`os`]: the operating-system calls a real-time dispatcher makes.
//! - [`mem`]: a bounded-time heap over a fixed region, for real-time data or as the global allocator.
//! - [`warp`]: speculative execution with rollback, a Time Warp engine over logical processes.

pub mod admission;
pub mod analysis;
pub mod clock;
pub mod config;
pub mod error;
mod id_space;
pub mod kernel;
pub mod mem;
pub mod message;
mod objects;
pub mod os;
mod plain;
pub mod policy;
mod raw_ids;
pub mod runtime;
mod runtime_run;
pub mod sets;
pub mod sizes;
pub mod spring;
pub mod stats;
pub mod sync;
pub mod thread;
pub mod time;
pub mod trace;
pub mod warp;

pub use error::{Error, GlobalRefusal, PanicSource};
pub use kernel::{Ctx, EventCtx, JobInfo, UnwindCause};
pub use plain::RuntimeId;
pub use plain::{Histogram, ThreadDistributions, HISTOGRAM_BUCKETS};
pub use runtime::{
    Config, Costs, CrossCpuStats, MessageStats, ProgressHook, RunOutcome, Runtime, ThreadStats, ThreadSummary,
    TimerSpec,
};
pub use sets::{
    Accounting, Budget, BudgetEvent, BudgetEventKind, MemberBudgetCounts, Replenishment, SetId, SetSummary,
};
pub use thread::{
    assign_deadline_monotonic, assign_rate_monotonic, Criticality, MissEvent, MissPolicy, ThreadId, ThreadOutcome,
    ThreadSpec, Timing, MIN_STACK_SIZE,
};
pub use time::Time;
