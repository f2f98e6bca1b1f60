//! Schedulability analysis of periodic tasks that share resources under a locking protocol.
//!
//! Pure functions over a task-set model ([`TaskSet`]): no runtime, no clock. The formulas and
//! their sources are listed in `docs/ANALYSIS.md`; in short:
//!
//! - [`TaskSet::blocking`]: the worst-case blocking term `B_i` of each protocol (Tokuda and
//!   Nakajima 1993, section 2.3, for the protocols; Sha, Rajkumar and Lehoczky 1990 for the
//!   inheritance and ceiling bounds; Baker 1991 for SRP).
//! - [`TaskSet::liu_layland`]: the rate-monotonic utilisation test with blocking, in the form
//!   of Tokuda and Nakajima's section 2.3.
//! - [`TaskSet::response_times`]: exact response-time analysis with blocking (Joseph and
//!   Pandya 1986; Audsley et al. 1993, with the blocking term added).
//! - [`TaskSet::edf_tests`]: EDF with critical sections: the paper's kernelized-monitor bound,
//!   Baker's (1991) SRP test, and a test with inheritance-style blocking for every protocol
//!   (in the manner of Spuri 1995, with bounds for bp and rcs).
//! - [`TaskSet::analyze`]: all of it, as a [`Verdict`].
//! - [`TaskSet::infeasibility`]: the necessary conditions no scheduler can escape (`Σ C/T`
//!   above the CPUs, `C > D`), which show a set NOT schedulable whatever the policy.
//! - [`TaskSet::partition`]: several CPUs, by first-fit or worst-fit decreasing, each CPU
//!   judged by one of the tests above ([`CpuTest`]).
//! - [`TaskSet::global_edf_tests`], [`TaskSet::global_fp_response_times`]: global scheduling
//!   on several CPUs with migration (Goossens, Funk and Baruah 2003; Bertogna, Cirinei and
//!   Lipari 2005; Bertogna and Cirinei 2007), sufficient tests without critical sections.
//! - [`TaskSet::msrp_inflated`], [`msrp_analyze`]: resources shared by several CPUs under
//!   MSRP (Gai, Lipari and Di Natale 2001): the spin of a request, the inflated WCETs, and
//!   each CPU analysed with them.
//!
//! Conventions: a larger `priority` is more urgent (as in [`crate::ThreadSpec::priority`]);
//! `hp(i)` is every other task with a priority at least `P_i` (equal priorities are counted as
//! interference, which is safe under FIFO order among equals); `lp(i)` is every task with a
//! priority strictly below `P_i`. Critical sections are not nested; a task may have several.
//!
//! ```
//! use std::time::Duration;
//! use tempi::analysis::{Protocol, Resource, Task, TaskSet};
//!
//! let ms = Duration::from_millis;
//! let mut ts = TaskSet::new();
//! let r = ts.add_resource(Resource::new("bus", Protocol::Pcp));
//! ts.add_task(Task::new("high", ms(1), ms(5)).priority(3).section(r, ms(1)));
//! ts.add_task(Task::new("mid", ms(2), ms(10)).priority(2));
//! ts.add_task(Task::new("low", ms(3), ms(20)).priority(1).section(r, ms(2)));
//! let v = ts.analyze();
//! assert_eq!(v.tasks[0].blocking, Some(ms(2))); // low's section on the bus
//! assert_eq!(v.tasks[0].response.bounded(), Some(ms(3)));
//! assert!(v.schedulable);
//! ```
//!
//! The module is split along its seams: `protocol.rs` (the protocols and their names, read
//! from the lock registry), `model.rs` (the task-set model), `blocking.rs` (the blocking
//! terms), `fixed_priority.rs` (Liu and Layland, response times, the verdict), `edf.rs` (the
//! EDF tests), `feasibility.rs` (the necessary conditions), `global.rs` (the global tests), `msrp.rs` (the MSRP terms across CPUs), `partition.rs` (placing tasks on CPUs), `index.rs` (the
//! task set's resource users and priorities, sorted once for the blocking terms and response
//! times) and `arith.rs` (exact arithmetic). This file holds only the module's
//! documentation and the re-exports that keep every public path `tempi::analysis::…`; analysis
//! code belongs in the files above.

mod arith;
mod blocking;
mod edf;
mod feasibility;
mod fixed_priority;
mod global;
mod index;
mod model;
mod msrp;
mod partition;
mod protocol;

pub use blocking::BlockingTable;
pub use edf::{EdfTest, EdfTests};
pub use feasibility::Infeasible;
pub use fixed_priority::{LiuLayland, LiuLaylandRow, Response, TaskVerdict, Verdict};
pub use global::{GlobalBound, GlobalEdfTests, GlobalError};
pub use model::{ModelError, Resource, Section, Task, TaskSet};
pub use msrp::msrp_analyze;
pub use partition::{CpuTest, Fit, Partition, PartitionError, SortKey};
pub use protocol::{Protocol, UnknownProtocol};

#[cfg(test)]
use arith::{utilisation_exceeds, utilisation_reaches_one, BigNat};
#[cfg(test)]
use std::time::Duration;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;
