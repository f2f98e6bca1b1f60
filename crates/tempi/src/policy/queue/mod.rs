//! Queue policies: the order in which waiters are served.
//!
//! A [`QueuePolicy`] ranks a waiter when it joins a queue; the kernel serves the highest rank
//! first and, among equal ranks, the earliest arrival. Semaphores take any policy (FREE JAZZ
//! lets the user replace a semaphore's FIFO queue); condition variables rank by urgency, as
//! the locking protocols order their waiters. Built-in policies, one per file: [`ArrivalOrder`],
//! [`ByUrgency`], [`ByDeadline`]. The [`registry`] holds them by name, with any policy the
//! application adds with [`register`].
//!
//! ```
//! use tempi::policy::queue::QueuePolicy;
//! use tempi::policy::sched::SchedInfo;
//!
//! /// Most important first (the thread's importance attribute).
//! struct ByImportance;
//! impl QueuePolicy for ByImportance {
//!     fn name(&self) -> &str { "importance" }
//!     fn rank(&self, waiter: &SchedInfo) -> i64 { waiter.importance as i64 }
//! }
//! # let _ = tempi::sync::SemSpec::new("s", 1).queue(ByImportance);
//! ```

mod deadline;
mod fifo;
mod urgency;

pub use deadline::ByDeadline;
pub use fifo::ArrivalOrder;
pub use urgency::ByUrgency;

use std::sync::{Arc, LazyLock};

use crate::policy::sched::SchedInfo;
use crate::policy::{Registry, RegistryError};

/// Orders the waiters of a queue. Called on the queue's CPU dispatcher when a thread joins.
pub trait QueuePolicy: Send {
    /// The policy's registry name, e.g. `"fifo"`.
    fn name(&self) -> &str;
    /// The waiter's rank: higher is served first; equal ranks in arrival order.
    fn rank(&self, waiter: &SchedInfo) -> i64;
    /// The rank of `msg` in the new queue of `receiver` (higher is read first, equal ranks in
    /// arrival order), or `None` to refuse it: it cannot be served within its constraint, and
    /// the sender gets [`crate::message::MsgError::Refused`]. By default every message ranks
    /// the same: first come, first served.
    ///
    /// ```
    /// use tempi::message::Message;
    /// use tempi::policy::queue::QueuePolicy;
    /// use tempi::policy::sched::SchedInfo;
    /// /// Earliest constraint first; negative constraints refused.
    /// struct Edf;
    /// impl QueuePolicy for Edf {
    ///     fn name(&self) -> &str { "edf-messages" }
    ///     fn rank(&self, _: &SchedInfo) -> i64 { 0 }
    ///     fn rank_message(&self, msg: &Message, _: &SchedInfo) -> Option<i64> {
    ///         (msg.constraint >= 0).then(|| -msg.constraint)
    ///     }
    /// }
    /// # let _ = tempi::ThreadSpec::new("s").message_queue(Edf);
    /// ```
    fn rank_message(&self, msg: &crate::plain::Message, receiver: &SchedInfo) -> Option<i64> {
        let _ = (msg, receiver);
        Some(0)
    }
}

/// Builds a queue policy: called once per semaphore created with the policy.
///
/// ```
/// let make: tempi::policy::queue::QueuePolicyFactory = std::sync::Arc::new(|| Box::new(tempi::policy::queue::ArrivalOrder));
/// assert_eq!(make().name(), "fifo");
/// ```
pub type QueuePolicyFactory = Arc<dyn Fn() -> Box<dyn QueuePolicy> + Send + Sync>;

/// The process-wide queue policy registry: the built-ins `fifo`, `urgency` (also `priority`)
/// and `deadline`, and what the application added with [`register`].
///
/// ```
/// assert_eq!(tempi::policy::queue::registry().get("priority").unwrap()().name(), "urgency");
/// ```
pub fn registry() -> &'static Registry<QueuePolicyFactory> {
    static REGISTRY: LazyLock<Registry<QueuePolicyFactory>> = LazyLock::new(|| {
        let f = |make: fn() -> Box<dyn QueuePolicy>| -> QueuePolicyFactory { Arc::new(make) };
        Registry::new(
            "queue policy",
            &[
                ("fifo", &[], f(|| Box::new(ArrivalOrder))),
                ("urgency", &["priority"], f(|| Box::new(ByUrgency))),
                ("deadline", &[], f(|| Box::new(ByDeadline))),
            ],
        )
    });
    &REGISTRY
}

/// Make a queue policy available by `name` to every runtime of the process (to [`by_name`]
/// and [`crate::sync::SemSpec::queue_name`]). Fails if the name is taken or invalid
/// ([`RegistryError`]).
///
/// ```
/// use tempi::policy::queue::{register, QueuePolicy};
/// use tempi::policy::sched::SchedInfo;
/// struct LastJobFirst;
/// impl QueuePolicy for LastJobFirst {
///     fn name(&self) -> &str { "last-job-first" }
///     fn rank(&self, waiter: &SchedInfo) -> i64 { waiter.job as i64 }
/// }
/// register("last-job-first", || Box::new(LastJobFirst)).unwrap();
/// assert!(tempi::policy::queue::by_name("last-job-first").is_some());
/// ```
pub fn register(
    name: &str,
    factory: impl Fn() -> Box<dyn QueuePolicy> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    registry().register(name, Arc::new(factory))
}

/// Every registered queue policy's name, the built-ins first.
///
/// ```
/// assert_eq!(tempi::policy::queue::names()[..3], ["fifo", "urgency", "deadline"]);
/// ```
pub fn names() -> Vec<String> {
    registry().names()
}

/// A fresh queue policy registered as `name`: a built-in (`fifo`, `urgency` (also
/// `priority`), `deadline`) or one the application registered.
///
/// ```
/// assert_eq!(tempi::policy::queue::by_name("deadline").unwrap().name(), "deadline");
/// assert!(tempi::policy::queue::by_name("random").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn QueuePolicy>> {
    registry().get(name).map(|make| make())
}
