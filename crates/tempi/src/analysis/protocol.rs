//! The locking protocols the analysis knows ([`Protocol`], the blocking bounds of
//! [`crate::policy::lock::BlockingBound`]), and how a lock protocol's registry name maps onto
//! one of them ([`Protocol::for_lock_policy`]).
//!
//! Owns the name lookups and their errors. Must not compute any bound (that is
//! `blocking.rs`) and must not decide which bound a protocol has: each registered protocol
//! says so itself ([`crate::policy::lock::LockPolicy::blocking_bound`]), read here through
//! the lock registry, [`crate::policy::lock::registry`].

use std::fmt;

use crate::policy::lock;

/// A locking protocol, as far as the analysis is concerned: the blocking bound that covers
/// it. Defined with the lock policies ([`lock::BlockingBound`]), which answer it.
///
/// ```
/// use tempi::analysis::Protocol;
/// assert_eq!(Protocol::from_name("icpp"), Some(Protocol::Srp));
/// assert_eq!(Protocol::Pcp.name(), "pcp");
/// ```
pub use crate::policy::lock::BlockingBound as Protocol;

impl Protocol {
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
    /// ([`crate::policy::lock::registry`]): what one instance of it answers to
    /// [`LockPolicy::blocking_bound`], so a protocol the application registers is analysed
    /// the day it is registered, by the bound it names or the one its other answers fix (see
    /// that hook's default), with no list of names here:
    ///
    /// - a built-in protocol, or an alias of one, is itself;
    /// - a protocol that answers `None` is refused with [`UnknownProtocol::NotAnalysable`]:
    ///   its blocking depends on answers the analysis cannot bound from outside.
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
    /// [`LockPolicy::blocking_bound`]: crate::policy::lock::LockPolicy::blocking_bound
    pub fn for_lock_policy(name: &str) -> Result<Protocol, UnknownProtocol> {
        let entry = lock::registry().entry(name).ok_or_else(|| UnknownProtocol::NotRegistered(name.to_string()))?;
        (entry.constructor)().blocking_bound().ok_or(UnknownProtocol::NotAnalysable(entry.name))
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
