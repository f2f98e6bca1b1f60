//! Admission engines: answer "can this job still meet its deadline on this CPU?" before it is
//! accepted, following PORTS (Ghosh, Fujimoto & Schwan, 1994).
//!
//! Owns the [`AdmissionEngine`] trait, its result and error types, and one engine per file:
//! [`TreeEngine`] (`tree`), [`LinearEngine`] (`linear`) and [`MinLaxityEngine`]
//! (`min_laxity`, and `hashed`: the same list with the paper's hashed search). Engines are
//! pure data structures:
//! they never read a clock, never touch the kernel and never allocate after construction.
//!
//! # Semantics
//!
//! An engine holds one CPU's accepted jobs `A`, each with a remaining worst-case execution
//! time `c_j` and an absolute deadline `d_j`, executed earliest-deadline-first (ties: in the
//! order they were accepted). At time `t`:
//!
//! - the finish time of job `j` is `f_j = t + Σ c_i` over the jobs ordered at or before `j`
//!   by (deadline, acceptance order), and its laxity is `L_j = d_j − f_j`;
//! - [`idle_before(d, t)`](AdmissionEngine::idle_before) is the time a new job with deadline
//!   `d` could use: `min(d − t − Σ_{d_i ≤ d} c_i, min_{d_j > d} L_j)`, zero if negative. A new
//!   job goes after every job with the same deadline;
//! - [`admit(c, d, t)`](AdmissionEngine::admit) accepts iff `c` fits in that idle time (and
//!   the idle time is not negative), inserting the job so that no accepted job's laxity goes
//!   below zero; a rejection returns the idle time there was (the negative acknowledgement's
//!   content) and leaves the engine untouched;
//! - [`charge(job, ran)`](AdmissionEngine::charge) records that the dispatcher ran `job` for
//!   `ran` (its remaining time shrinks, never below zero; later jobs finish earlier);
//! - [`finish(job)`](AdmissionEngine::finish) records that the job ended: the time it did not
//!   use goes back to the later jobs ("reclaim"). The entry stays, with nothing remaining,
//!   until its deadline passes;
//! - [`withdraw(job)`](AdmissionEngine::withdraw) takes the job back as if it had never been
//!   accepted (its thread will never run): its remaining time goes back and its entry goes at
//!   once. A finished entry never lowers an idle time (the entry before it is due no later
//!   and finishes at the same instant), so a withdrawal frees the entry's room in the capacity
//!   and changes no answer that a finish would not;
//! - [`expire(t)`](AdmissionEngine::expire) removes every entry whose deadline is before `t`
//!   ("temporal paging") and says how many went.
//!
//! Time passing without charges (the CPU idle or running other work) lowers every laxity:
//! that is just a later `t` in the next call. Admission assumes the job is released (ready to
//! run) when it is admitted; jobs with a future release time are not supported.
//!
//! # Invariants
//!
//! If every interval of CPU time between calls is charged to the accepted jobs in EDF order
//! (a work-conserving EDF dispatcher), every unfinished job keeps a laxity of zero or more, so
//! the accepted set is EDF-feasible. Times are whole nanoseconds: an instant is a
//! [`Time`], a span a [`Duration`] (saturating at `u64::MAX` nanoseconds). An accepted job's
//! deadline is at most [`MAX_DEADLINE_NS`] (2^62 ns, about 146 years after the clock's zero):
//! [`admit`](AdmissionEngine::admit) refuses a later one with [`AdmitError::DeadlineTooLate`].
//! Within that range every sum of work and every laxity fits a 64-bit integer, which the `tree`
//! engine's nodes rely on; queries accept any deadline.
//!
//! # Memory
//!
//! An engine is built with a capacity (`with_capacity(n)`) and preallocates room for `n`
//! entries. Admitting past it returns [`AdmitError::Full`]; nothing reallocates on the admit
//! path. Entries leave through [`expire`](AdmissionEngine::expire) and
//! [`withdraw`](AdmissionEngine::withdraw).
//!
//! # Complexity (n entries)
//!
//! | engine   | `idle_before` | `admit`  | `charge`, `finish` | `withdraw` | `expire` (k removed) |
//! |----------|---------------|----------|--------------------|------------|----------------------|
//! | `tree`   | O(log n)      | O(log n) | O(log n)           | O(log n)   | O(k + log n)         |
//! | `linear` | O(n)          | O(n)     | O(n)               | O(n)       | O(n)                 |
//! | `min_laxity` | O(h) + O(1) | O(h + r + m) | O(h + r + m) | O(h + r + m) | O(k + r)          |
//! | `hashed` | O(h) + O(1)   | O(h + r + m) | O(h + r + m)   | O(h + r + m + B) | O(k + r)       |
//!
//! `tree` bounds are worst-case (a B+-tree: logarithms base 8 to 32); `linear` is the paper's
//! original sorted slot list; `min_laxity` is the paper's improved list, where `h` is the
//! length of the search walk (from the last insertion point, or from the slot the hash table
//! gives for `hashed`), `r` the number of shared minimum-laxity pointers (runs) after the
//! change and `m` the length of the runs it splits or merges; all are O(n) in the worst case.
//! `hashed` also rebuilds its table at every `expire` that removes entries, O(n), and a
//! withdrawal re-names the slot before the withdrawn one in the `B` buckets after its own
//! (O(n) at worst). An `expire`
//! that removes nothing changes nothing and costs O(1) (`tree`: O(log n), one walk down its
//! left edge): the runtime's admission expires before every query.
//!
//! # Registry
//!
//! Like the other policy families, engines are found by name through a process-wide
//! [`registry`], pre-filled with the built-ins; an application adds its own with
//! [`register`] and builds any of them with [`by_name`].

mod linear;
mod min_laxity;
/// The Spring planner: plans whole thread groups onto the CPUs before they start, or refuses them.
pub mod planner;
mod tree;

pub use linear::LinearEngine;
pub use min_laxity::MinLaxityEngine;
pub use tree::TreeEngine;

use crate::policy::{Registry, RegistryError};
use crate::Time;
use std::fmt;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

/// A handle to an accepted job, returned by [`AdmissionEngine::admit`].
///
/// Handles are never reused: acceptances are numbered in order, so engines fed the same calls
/// hand out equal handles.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, TreeEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = TreeEngine::with_capacity(4);
/// let a = e.admit(Duration::from_nanos(2), Time::from_nanos(5), Time::ZERO).unwrap();
/// let b = e.admit(Duration::from_nanos(2), Time::from_nanos(5), Time::ZERO).unwrap();
/// assert_ne!(a, b);
/// assert!(matches!(a, Admission::Accepted(_)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AdmitId {
    /// Absolute deadline in nanoseconds: ordered first, so a handle is also the job's EDF key.
    deadline: u64,
    /// Acceptance order: breaks deadline ties first-come first-served.
    seq: u64,
}

impl AdmitId {
    /// The job's absolute deadline.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, Admission, LinearEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = LinearEngine::with_capacity(1);
    /// let Ok(Admission::Accepted(id)) = e.admit(Duration::from_nanos(1), Time::from_nanos(9), Time::ZERO)
    /// else { panic!() };
    /// assert_eq!(id.deadline(), Time::from_nanos(9));
    /// ```
    pub fn deadline(self) -> Time {
        Time::from_nanos(self.deadline)
    }
}

/// The answer to [`AdmissionEngine::admit`].
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, TreeEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = TreeEngine::with_capacity(4);
/// let r = e.admit(Duration::from_nanos(7), Time::from_nanos(5), Time::ZERO).unwrap();
/// assert_eq!(r, Admission::Rejected { idle: Duration::from_nanos(5) });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The job was inserted; it will meet its deadline if dispatched EDF.
    Accepted(AdmitId),
    /// The job does not fit; nothing changed.
    Rejected {
        /// The idle time available before the deadline asked for.
        idle: Duration,
    },
}

/// Why an engine call could not be carried out.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, AdmitError, TreeEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = TreeEngine::with_capacity(0);
/// let r = e.admit(Duration::from_nanos(1), Time::from_nanos(5), Time::ZERO);
/// assert_eq!(r, Err(AdmitError::Full { capacity: 0 }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdmitError {
    /// Every preallocated entry is in use; expire old entries or build a larger engine.
    Full {
        /// The engine's capacity.
        capacity: usize,
    },
    /// The handle names no entry (never accepted here, or already expired).
    UnknownJob(AdmitId),
    /// The deadline is after [`MAX_DEADLINE_NS`]; no engine accepts it.
    DeadlineTooLate {
        /// The deadline asked for.
        deadline: Time,
    },
}

/// The latest deadline an engine accepts, in nanoseconds: 2^62, about 146 years.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, AdmitError, LinearEngine, MAX_DEADLINE_NS};
/// use tempi::Time;
/// let mut e = LinearEngine::with_capacity(1);
/// let late = Time::from_nanos(MAX_DEADLINE_NS + 1);
/// let r = e.admit(std::time::Duration::from_nanos(1), late, Time::ZERO);
/// assert_eq!(r, Err(AdmitError::DeadlineTooLate { deadline: late }));
/// ```
pub const MAX_DEADLINE_NS: u64 = 1 << 62;

/// What every engine checks before an admission: room for one more entry, a deadline in range.
fn admit_prologue(len: usize, capacity: usize, deadline: Time) -> Result<(), AdmitError> {
    if len >= capacity {
        return Err(AdmitError::Full { capacity });
    }
    if deadline.as_nanos() > MAX_DEADLINE_NS {
        return Err(AdmitError::DeadlineTooLate { deadline });
    }
    Ok(())
}

impl fmt::Display for AdmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AdmitError::Full { capacity } => write!(f, "admission engine full ({capacity} entries)"),
            AdmitError::UnknownJob(id) => write!(f, "no admitted job {id:?}"),
            AdmitError::DeadlineTooLate { deadline } => {
                write!(
                    f,
                    "deadline {} ns is after the latest an engine accepts ({MAX_DEADLINE_NS} ns)",
                    deadline.as_nanos()
                )
            }
        }
    }
}

impl std::error::Error for AdmitError {}

/// One CPU's EDF admission test: see the [module documentation](self) for the semantics.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, TreeEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let ns = Duration::from_nanos;
/// let mut e: Box<dyn AdmissionEngine> = Box::new(TreeEngine::with_capacity(8));
/// let t0 = Time::ZERO;
/// assert!(matches!(e.admit(ns(2), Time::from_nanos(5), t0), Ok(Admission::Accepted(_))));
/// // min(4 − 0 − 0, laxity of the deadline-5 job = 5 − 2) = 3.
/// assert_eq!(e.idle_before(Time::from_nanos(4), t0), ns(3));
/// ```
pub trait AdmissionEngine: Send {
    /// The engine's name, as [`by_name`] knows it.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, LinearEngine};
    /// assert_eq!(LinearEngine::with_capacity(1).name(), "linear");
    /// ```
    fn name(&self) -> &'static str;

    /// How many entries are held (finished ones included until they expire).
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, TreeEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = TreeEngine::with_capacity(2);
    /// e.admit(Duration::from_nanos(1), Time::from_nanos(3), Time::ZERO).unwrap();
    /// assert_eq!(e.len(), 1);
    /// ```
    fn len(&self) -> usize;

    /// Whether no entry is held.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, TreeEngine};
    /// assert!(TreeEngine::with_capacity(2).is_empty());
    /// ```
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many entries the engine can hold.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, LinearEngine};
    /// assert_eq!(LinearEngine::with_capacity(16).capacity(), 16);
    /// ```
    fn capacity(&self) -> usize;

    /// The idle time a new job with deadline `deadline` would find at `now`.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, TreeEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = TreeEngine::with_capacity(4);
    /// e.admit(Duration::from_nanos(2), Time::from_nanos(5), Time::ZERO).unwrap();
    /// e.admit(Duration::from_nanos(2), Time::from_nanos(4), Time::ZERO).unwrap();
    /// // 4 − 0 − 2 = 2, but the deadline-5 job has only 5 − 4 = 1 to spare.
    /// assert_eq!(e.idle_before(Time::from_nanos(4), Time::ZERO), Duration::from_nanos(1));
    /// // Nothing is due after 10: 10 − 0 − 4 = 6.
    /// assert_eq!(e.idle_before(Time::from_nanos(10), Time::ZERO), Duration::from_nanos(6));
    /// ```
    fn idle_before(&self, deadline: Time, now: Time) -> Duration;

    /// Accept the job (`wcet` of work due at `deadline`, ready at `now`) if it fits.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, Admission, LinearEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = LinearEngine::with_capacity(4);
    /// let ns = Duration::from_nanos;
    /// assert!(matches!(e.admit(ns(2), Time::from_nanos(5), Time::ZERO), Ok(Admission::Accepted(_))));
    /// // The deadline-5 job leaves 3 before 4.
    /// assert_eq!(e.admit(ns(4), Time::from_nanos(4), Time::ZERO), Ok(Admission::Rejected { idle: ns(3) }));
    /// ```
    fn admit(&mut self, wcet: Duration, deadline: Time, now: Time) -> Result<Admission, AdmitError>;

    /// Record that `job` ran for `ran`; its remaining time never goes below zero.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, Admission, TreeEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = TreeEngine::with_capacity(4);
    /// let Ok(Admission::Accepted(j)) = e.admit(Duration::from_nanos(3), Time::from_nanos(5), Time::ZERO)
    /// else { panic!() };
    /// e.charge(j, Duration::from_nanos(1)).unwrap();
    /// assert_eq!(e.remaining(j), Some(Duration::from_nanos(2)));
    /// ```
    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError>;

    /// Record that `job` ended: its unused time goes back to the later jobs.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, Admission, TreeEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = TreeEngine::with_capacity(4);
    /// let Ok(Admission::Accepted(j)) = e.admit(Duration::from_nanos(3), Time::from_nanos(5), Time::ZERO)
    /// else { panic!() };
    /// e.finish(j).unwrap();
    /// assert_eq!(e.idle_before(Time::from_nanos(5), Time::ZERO), Duration::from_nanos(5));
    /// assert_eq!(e.len(), 1);
    /// ```
    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError>;

    /// Remove `job`'s entry at once, as if it had never been accepted: its remaining time goes
    /// back to the later jobs (as [`finish`](AdmissionEngine::finish) gives it back) and its
    /// entry stops counting against the capacity, instead of staying until its deadline
    /// passes. For a job that will never run (its thread was dropped before it started).
    /// Handles are still never reused.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, Admission, AdmitError, TreeEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = TreeEngine::with_capacity(1);
    /// let Ok(Admission::Accepted(j)) = e.admit(Duration::from_nanos(3), Time::from_nanos(5), Time::ZERO)
    /// else { panic!() };
    /// e.withdraw(j).unwrap();
    /// assert_eq!((e.len(), e.remaining(j)), (0, None));
    /// assert_eq!(e.idle_before(Time::from_nanos(5), Time::ZERO), Duration::from_nanos(5));
    /// assert_eq!(e.withdraw(j), Err(AdmitError::UnknownJob(j)));
    /// // The room it held is free at once, not at its deadline.
    /// assert!(matches!(e.admit(Duration::from_nanos(5), Time::from_nanos(5), Time::ZERO), Ok(Admission::Accepted(_))));
    /// ```
    fn withdraw(&mut self, job: AdmitId) -> Result<(), AdmitError>;

    /// Remove every entry whose deadline is before `now`; returns how many were removed.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, TreeEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = TreeEngine::with_capacity(4);
    /// e.admit(Duration::from_nanos(1), Time::from_nanos(5), Time::ZERO).unwrap();
    /// assert_eq!(e.expire(Time::from_nanos(5)), 0);
    /// assert_eq!(e.expire(Time::from_nanos(6)), 1);
    /// ```
    fn expire(&mut self, now: Time) -> usize;

    /// The remaining execution time of `job`, or `None` if no entry has that handle.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, Admission, LinearEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = LinearEngine::with_capacity(4);
    /// let Ok(Admission::Accepted(j)) = e.admit(Duration::from_nanos(3), Time::from_nanos(5), Time::ZERO)
    /// else { panic!() };
    /// assert_eq!(e.remaining(j), Some(Duration::from_nanos(3)));
    /// ```
    fn remaining(&self, job: AdmitId) -> Option<Duration>;
}

/// The most entries a built-in engine is made for (2^24, 16 Mi); their constructors panic
/// above it (an admission refuses more than [`crate::admission::AdmissionSpec::MAX_CAPACITY`]
/// with an error first).
///
/// ```
/// use tempi::policy::admit::{LinearEngine, MAX_CAPACITY};
/// assert!(std::panic::catch_unwind(|| LinearEngine::with_capacity(MAX_CAPACITY + 1)).is_err());
/// ```
pub const MAX_CAPACITY: usize = 1 << 24;

/// `capacity` for an engine named `engine`, if it is within [`MAX_CAPACITY`].
///
/// # Panics
/// Above [`MAX_CAPACITY`]: the engines' constructors cannot return an error, and an
/// admission ([`crate::admission::AdmissionSpec::MAX_CAPACITY`]) never asks for more.
pub(crate) fn checked_capacity(engine: &str, capacity: usize) -> usize {
    if capacity > MAX_CAPACITY {
        panic!(
            "{engine}: {} (policy::admit::MAX_CAPACITY)",
            crate::sizes::too_large("capacity", capacity, MAX_CAPACITY)
        );
    }
    capacity
}

/// An empty arena of `n` entries for engine `engine`.
///
/// # Panics
/// If the allocator refuses it, with a message naming the engine (instead of the process
/// aborting).
pub(crate) fn arena<T>(engine: &str, n: usize) -> Vec<T> {
    crate::sizes::vec_with_capacity(n, "an arena of the engine").unwrap_or_else(|e| panic!("{engine}: {e}"))
}

/// The engines this crate provides, by name. [`names`] also lists those the application
/// registered.
///
/// ```
/// assert_eq!(tempi::policy::admit::NAMES, ["tree", "linear", "min_laxity", "hashed"]);
/// ```
pub const NAMES: [&str; 4] = ["tree", "linear", "min_laxity", "hashed"];

/// Builds an admission engine with room for the given number of entries: called once per
/// engine, when a CPU's admission test is set up.
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, EngineFactory, LinearEngine};
/// let make: EngineFactory = std::sync::Arc::new(|n| Box::new(LinearEngine::with_capacity(n)));
/// assert_eq!(make(4).capacity(), 4);
/// ```
pub type EngineFactory = Arc<dyn Fn(usize) -> Box<dyn AdmissionEngine> + Send + Sync>;

/// The process-wide admission engine registry: the built-ins ([`NAMES`]; `min_laxity` is also
/// known as `min-laxity`, the spelling scenario files use) and what the application added
/// with [`register`].
///
/// ```
/// let make = tempi::policy::admit::registry().get("min-laxity").unwrap();
/// assert_eq!(make(8).name(), "min_laxity");
/// ```
pub fn registry() -> &'static Registry<EngineFactory> {
    static REGISTRY: LazyLock<Registry<EngineFactory>> = LazyLock::new(|| {
        let f = |make: fn(usize) -> Box<dyn AdmissionEngine>| -> EngineFactory { Arc::new(make) };
        Registry::new(
            "admission engine",
            &[
                ("tree", &[], f(|n| Box::new(TreeEngine::with_capacity(n)))),
                ("linear", &[], f(|n| Box::new(LinearEngine::with_capacity(n)))),
                ("min_laxity", &["min-laxity"], f(|n| Box::new(MinLaxityEngine::with_capacity(n)))),
                ("hashed", &[], f(|n| Box::new(MinLaxityEngine::hashed(n)))),
            ],
        )
    });
    &REGISTRY
}

/// Make an engine available by `name` to every part of the process that builds engines by
/// name ([`by_name`]). `maker` receives the capacity asked for and must preallocate it, as the
/// built-ins do. Fails if the name is taken or invalid ([`RegistryError`]).
///
/// ```
/// use tempi::policy::admit::{register, AdmissionEngine, TreeEngine};
/// register("my-tree", |n| Box::new(TreeEngine::with_capacity(n))).unwrap();
/// assert!(register("tree", |n| Box::new(TreeEngine::with_capacity(n))).is_err());
/// assert_eq!(tempi::policy::admit::by_name("my-tree", 16).unwrap().capacity(), 16);
/// ```
pub fn register(
    name: &str,
    maker: impl Fn(usize) -> Box<dyn AdmissionEngine> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    registry().register(name, Arc::new(maker))
}

/// Every registered engine's name: the built-ins ([`NAMES`]) first, then the application's in
/// registration order. Aliases (`min-laxity`) are not listed.
///
/// ```
/// assert_eq!(tempi::policy::admit::names()[..4], tempi::policy::admit::NAMES[..]);
/// ```
pub fn names() -> Vec<String> {
    registry().names()
}

/// Build the engine registered as `name` (a built-in, `min-laxity` for `min_laxity`, or one
/// the application registered) with room for `capacity` entries, if there is one.
///
/// ```
/// let e = tempi::policy::admit::by_name("linear", 8).unwrap();
/// assert_eq!(e.name(), "linear");
/// assert_eq!(tempi::policy::admit::by_name("min-laxity", 8).unwrap().name(), "min_laxity");
/// assert!(tempi::policy::admit::by_name("nope", 8).is_none());
/// ```
pub fn by_name(name: &str, capacity: usize) -> Option<Box<dyn AdmissionEngine>> {
    registry().get(name).map(|make| make(capacity))
}

/// Whole nanoseconds of a span, saturating.
fn span_nanos(d: Duration) -> u64 {
    crate::time::nanos(d)
}

/// The signed idle time, in nanoseconds, as the module documentation defines it, from the
/// work due at or before `deadline` and the smallest `K_j = d_j − P_j` after it (`None` if no
/// job is after it). Negative means even a zero-length job would not fit.
fn signed_idle(deadline: u64, now: u64, work_up_to: i128, min_key_after: Option<i128>) -> i128 {
    let before = i128::from(deadline) - i128::from(now) - work_up_to;
    match min_key_after {
        Some(k) => before.min(k - i128::from(now)),
        None => before,
    }
}

/// The idle time as a span: negative is zero.
fn idle_span(signed: i128) -> Duration {
    Duration::from_nanos(u64::try_from(signed.max(0)).unwrap_or(u64::MAX))
}
