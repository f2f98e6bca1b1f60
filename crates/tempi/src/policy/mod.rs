//! Policies: the decisions the kernel delegates.
//!
//! Each family has a folder with its trait in `mod.rs` and one built-in policy per file. A
//! policy sees only what its trait passes it; it never reaches into the kernel's thread table.
//! Families present: [`sched`] (which thread runs) and [`budget`] (what an execution-time
//! overrun does). Lock, queue and admission policies arrive with their capabilities.

pub mod budget;
pub mod lock;
pub mod queue;
pub mod sched;
