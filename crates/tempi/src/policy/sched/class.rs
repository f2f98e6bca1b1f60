//! Which schedulability tests describe a policy ([`PolicyClass`]), read from what the policy
//! answers, never from the name it is registered under.
//!
//! Owns that one reading, which admission ([`crate::admission::Admission::new`]), the
//! scenario checks and `tempi analyze` all ask, so that they recognise EDF and fixed priority
//! alike. Must not run a test (the formulas live in [`crate::analysis`]).

use super::Scheduler;

/// The family of schedulability tests a policy's decisions follow, from its answers to
/// [`Scheduler::global`], [`Scheduler::earliest_deadline_first`] and
/// [`Scheduler::fixed_priority`]: a policy registered under any name, or stacked on another,
/// is analysed, and admitted to an EDF admission, by what it does.
///
/// ```
/// use tempi::policy::sched::{by_name, Edf, PolicyClass, WaitInheritance};
/// assert_eq!(PolicyClass::of(&Edf::new()), PolicyClass::Edf);
/// assert_eq!(PolicyClass::of(&WaitInheritance::new(Box::new(Edf::new()))), PolicyClass::Edf);
/// assert_eq!(PolicyClass::of(&*by_name("rm", None).unwrap()()), PolicyClass::FixedPriority);
/// assert_eq!(PolicyClass::of(&*by_name("gedf", None).unwrap()()), PolicyClass::GlobalEdf);
/// assert_eq!(PolicyClass::of(&*by_name("fifo", None).unwrap()()), PolicyClass::Other);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PolicyClass {
    /// Preemptive fixed priority, one instance per CPU: response-time analysis and the Liu
    /// and Layland bound.
    FixedPriority,
    /// Preemptive EDF, one instance per CPU: the EDF tests; what an admission test that
    /// guarantees deadlines needs.
    Edf,
    /// Global fixed priority: the CPUs judged together.
    GlobalFixedPriority,
    /// Global EDF: the CPUs judged together.
    GlobalEdf,
    /// None of the above: no schedulability test applies.
    Other,
}

impl PolicyClass {
    /// The class of `policy`.
    ///
    /// ```
    /// use tempi::policy::sched::{FixedPriority, GlobalFp, PolicyClass};
    /// assert_eq!(PolicyClass::of(&FixedPriority::new()), PolicyClass::FixedPriority);
    /// assert_eq!(PolicyClass::of(&GlobalFp::new()), PolicyClass::GlobalFixedPriority);
    /// ```
    pub fn of(policy: &dyn Scheduler) -> PolicyClass {
        match (policy.global(), policy.earliest_deadline_first(), policy.fixed_priority()) {
            (false, true, _) => PolicyClass::Edf,
            (false, false, true) => PolicyClass::FixedPriority,
            (true, true, _) => PolicyClass::GlobalEdf,
            (true, false, true) => PolicyClass::GlobalFixedPriority,
            (_, false, false) => PolicyClass::Other,
        }
    }
}
