//! Plain data at the bottom of the crate: the values every layer names — identities, messages,
//! budget events, trace records, lock ceilings, what a policy is told of a thread — which name nothing above them, so that policies, the kernel and the front
//! ends can all speak of them without reaching each other. Each is re-exported where its model
//! is described (`tempi::ThreadId`, `tempi::SetId`, `tempi::sync`, `tempi::message`,
//! `tempi::BudgetEvent`); this module owns only the values.
//!
//! Must not: name anything of the crate but `time` (and `std`).

pub(crate) mod budget;
pub(crate) mod ceiling;
pub(crate) mod histogram;
pub(crate) mod ids;
pub(crate) mod message;
pub(crate) mod sched_info;
pub(crate) mod trace;

pub use budget::{BudgetEvent, BudgetEventKind};
pub use ceiling::LockCeiling;
pub use histogram::{Histogram, ThreadDistributions, HISTOGRAM_BUCKETS};
pub use ids::{CondId, HandlerId, LockId, RuntimeId, SemId, SetId, ThreadId};
pub use message::{Flow, Message, MsgError, MsgTimer, Payload, Read, Selection, TimedRefusal, TimedRefusals};
pub use sched_info::{SchedInfo, Urgency};
pub use trace::{JobEnd, StopReason, TraceKind, TraceRecord};
