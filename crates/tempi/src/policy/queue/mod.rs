//! Queue policies: the order in which waiters are served.
//!
//! A [`QueuePolicy`] ranks a waiter when it joins a queue; the kernel serves the highest rank
//! first and, among equal ranks, the earliest arrival. Semaphores take any policy (FREE JAZZ
//! lets the user replace a semaphore's FIFO queue); condition variables rank by urgency, as
//! the locking protocols order their waiters. Built-in policies, one per file: [`Fifo`],
//! [`ByUrgency`], [`ByDeadline`].
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
pub use fifo::Fifo;
pub use urgency::ByUrgency;

use crate::policy::sched::SchedInfo;

/// Orders the waiters of a queue. Called on the queue's CPU dispatcher when a thread joins.
pub trait QueuePolicy: Send {
    /// The policy's registry name, e.g. `"fifo"`.
    fn name(&self) -> &str;
    /// The waiter's rank: higher is served first; equal ranks in arrival order.
    fn rank(&self, waiter: &SchedInfo) -> i64;
}

/// A built-in queue policy by name: `fifo`, `urgency` (also `priority`), `deadline`.
///
/// ```
/// assert_eq!(tempi::policy::queue::by_name("deadline").unwrap().name(), "deadline");
/// assert!(tempi::policy::queue::by_name("random").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn QueuePolicy>> {
    Some(match name {
        "fifo" => Box::new(Fifo),
        "urgency" | "priority" => Box::new(ByUrgency),
        "deadline" => Box::new(ByDeadline),
        _ => return None,
    })
}
