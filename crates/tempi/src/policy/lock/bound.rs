//! Which published blocking bound covers a lock protocol: [`BlockingBound`], the answer of
//! [`LockPolicy::blocking_bound`](super::LockPolicy::blocking_bound).
//!
//! Owns the enum and its names, plain data the analysis reads through the lock registry
//! ([`crate::analysis::Protocol::for_lock_policy`]). Must not compute a bound: the formulas
//! live in `analysis/blocking.rs`.

use std::fmt;

/// The blocking bound that covers the waits a lock protocol causes, as the analysis knows
/// it: one per built-in protocol, which a protocol the application registers may answer
/// too when its waits are those of a built-in one. The analysis calls it `Protocol`
/// ([`crate::analysis::Protocol`]).
///
/// ```
/// use tempi::analysis::Protocol;
/// assert_eq!(Protocol::from_name("icpp"), Some(Protocol::Srp));
/// assert_eq!(Protocol::Pcp.name(), "pcp");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockingBound {
    /// Kernelized monitor: critical sections are not preemptable.
    Km,
    /// Basic priority: priority-ordered waiting, no inheritance (blocking is unbounded).
    Bp,
    /// Basic priority inheritance.
    Bpi,
    /// Priority ceiling protocol (Sha, Rajkumar and Lehoczky).
    Pcp,
    /// Stack resource policy / immediate ceiling (Baker).
    Srp,
    /// Restartable critical sections: the higher-priority task aborts the holder's section.
    Rcs,
    /// MSRP (Gai, Lipari and Di Natale): a *global* resource, shared by tasks of several
    /// CPUs, held and waited for (spinning, FIFO) without preemption. On one CPU alone its
    /// sections block like the kernelized monitor's; across CPUs see
    /// [`TaskSet::msrp_inflated`](crate::analysis::TaskSet::msrp_inflated). Not in
    /// [`BlockingBound::ALL`], the single-CPU protocols reports compare.
    Msrp,
}

impl BlockingBound {
    /// Every single-CPU protocol, in the order reports list them ([`BlockingBound::Msrp`],
    /// for resources shared by several CPUs, is apart).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::ALL.len(), 6);
    /// ```
    pub const ALL: [BlockingBound; 6] = [
        BlockingBound::Km,
        BlockingBound::Bp,
        BlockingBound::Bpi,
        BlockingBound::Pcp,
        BlockingBound::Srp,
        BlockingBound::Rcs,
    ];

    /// The name of the built-in lock protocol it is (the lock registry's name for it).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::Rcs.name(), "rcs");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            BlockingBound::Km => "km",
            BlockingBound::Bp => "bp",
            BlockingBound::Bpi => "bpi",
            BlockingBound::Pcp => "pcp",
            BlockingBound::Srp => "srp",
            BlockingBound::Rcs => "rcs",
            BlockingBound::Msrp => "msrp",
        }
    }
}

impl fmt::Display for BlockingBound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
