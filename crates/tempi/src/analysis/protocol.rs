//! The locking protocols the analysis knows, and how a lock protocol's registry name maps
//! onto one of them ([`Protocol::for_lock_policy`]).
//!
//! Owns the [`Protocol`] enum and its names. Must not compute any bound (that is
//! `blocking.rs`) and must not keep a list of protocol names of its own: names are read from
//! the lock registry, [`crate::policy::lock::registry`].

use std::fmt;

use crate::policy::lock;

/// A locking protocol, as far as the analysis is concerned.
///
/// ```
/// use tempi::analysis::Protocol;
/// assert_eq!(Protocol::from_name("icpp"), Some(Protocol::Srp));
/// assert_eq!(Protocol::Pcp.name(), "pcp");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Protocol {
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
    /// [`Protocol::ALL`], the single-CPU protocols reports compare.
    Msrp,
}

impl Protocol {
    /// Every single-CPU protocol, in the order reports list them ([`Protocol::Msrp`], for
    /// resources shared by several CPUs, is apart).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::ALL.len(), 6);
    /// ```
    pub const ALL: [Protocol; 6] =
        [Protocol::Km, Protocol::Bp, Protocol::Bpi, Protocol::Pcp, Protocol::Srp, Protocol::Rcs];

    /// The protocol a lock registry name denotes, or `None` when the analysis cannot take it
    /// (see [`Protocol::for_lock_policy`] for which names it takes and why).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::from_name("pi"), Some(tempi::analysis::Protocol::Bpi));
    /// assert_eq!(tempi::analysis::Protocol::from_name("spin"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Protocol> {
        Protocol::for_lock_policy(name).ok()
    }

    /// The protocol whose bounds apply to the lock protocol registered as `name`
    /// ([`crate::policy::lock::registry`]), read from the registry rather than from a list of
    /// names of its own:
    ///
    /// - a built-in protocol, or an alias of one, is itself;
    /// - a protocol the application registered is analysed from what it answers, where that
    ///   fixes the blocking it can cause: one that takes a free lock without a kernel decision
    ///   ([`LockPolicy::uncontended_fast_path`]: no ceiling test, so `may_acquire` is always
    ///   yes), never raises its holder ([`LockPolicy::raises_holder`] no, so no holding
    ///   urgency) and needs no ceiling is [`Protocol::Bpi`] if its waiters lend their urgency
    ///   ([`LockPolicy::inherits`]) and [`Protocol::Bp`] if not. Who gets a released lock is
    ///   kernel mechanism, the same for every protocol, so nothing else about such a protocol
    ///   changes the bound. The one answer that cannot be asked in advance is
    ///   [`LockPolicy::aborts_owner`]: the derivation holds for a protocol that keeps the
    ///   default (never abort); one that aborts owners makes them redo work the bp and bpi
    ///   bounds do not count.
    /// - any other registered protocol (a ceiling test, a holding urgency) is refused with
    ///   [`UnknownProtocol::NotAnalysable`]: its blocking depends on answers the analysis
    ///   cannot bound from outside.
    ///
    /// ```
    /// use tempi::analysis::{Protocol, UnknownProtocol};
    /// use tempi::policy::lock::{self, LockPolicy};
    ///
    /// struct Lender;
    /// impl LockPolicy for Lender {
    ///     fn name(&self) -> &str { "lender" }
    ///     fn uncontended_fast_path(&self) -> bool { true }
    ///     fn raises_holder(&self) -> bool { false }
    ///     fn inherits(&self) -> bool { true }
    /// }
    /// lock::register("lender", || Box::new(Lender)).unwrap();
    /// assert_eq!(Protocol::for_lock_policy("lender"), Ok(Protocol::Bpi));
    /// assert_eq!(Protocol::for_lock_policy("icpp"), Ok(Protocol::Srp));
    /// assert!(matches!(Protocol::for_lock_policy("spin"), Err(UnknownProtocol::NotRegistered(_))));
    /// ```
    ///
    /// [`LockPolicy::uncontended_fast_path`]: crate::policy::lock::LockPolicy::uncontended_fast_path
    /// [`LockPolicy::raises_holder`]: crate::policy::lock::LockPolicy::raises_holder
    /// [`LockPolicy::inherits`]: crate::policy::lock::LockPolicy::inherits
    /// [`LockPolicy::aborts_owner`]: crate::policy::lock::LockPolicy::aborts_owner
    pub fn for_lock_policy(name: &str) -> Result<Protocol, UnknownProtocol> {
        let entry = lock::registry().entry(name).ok_or_else(|| UnknownProtocol::NotRegistered(name.to_string()))?;
        if entry.built_in {
            return Protocol::ALL
                .into_iter()
                .chain([Protocol::Msrp])
                .find(|p| p.name() == entry.name)
                .ok_or(UnknownProtocol::NotAnalysable(entry.name));
        }
        let policy = (entry.constructor)();
        if policy.uncontended_fast_path() && !policy.raises_holder() && !policy.needs_ceiling() {
            return Ok(if policy.inherits() { Protocol::Bpi } else { Protocol::Bp });
        }
        Err(UnknownProtocol::NotAnalysable(entry.name))
    }

    /// The name of the built-in lock protocol it is (the lock registry's name for it).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Protocol::Rcs.name(), "rcs");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Protocol::Km => "km",
            Protocol::Bp => "bp",
            Protocol::Bpi => "bpi",
            Protocol::Pcp => "pcp",
            Protocol::Srp => "srp",
            Protocol::Rcs => "rcs",
            Protocol::Msrp => "msrp",
        }
    }
}

impl fmt::Display for Protocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Why [`Protocol::for_lock_policy`] cannot take a lock protocol.
///
/// ```
/// let e = tempi::analysis::Protocol::for_lock_policy("spin").unwrap_err();
/// assert_eq!(e.to_string(), "lock protocol \"spin\" is not registered");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UnknownProtocol {
    /// No lock protocol is registered under the name.
    NotRegistered(String),
    /// The protocol is registered, but the analysis does not know how to bound the blocking
    /// it causes.
    NotAnalysable(String),
}

impl fmt::Display for UnknownProtocol {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnknownProtocol::NotRegistered(name) => write!(f, "lock protocol \"{name}\" is not registered"),
            UnknownProtocol::NotAnalysable(name) => write!(
                f,
                "the analysis does not know lock protocol \"{name}\": it bounds the built-in protocols and \
                 registered ones that take a free lock without a kernel decision and never raise their holder"
            ),
        }
    }
}

impl std::error::Error for UnknownProtocol {}
