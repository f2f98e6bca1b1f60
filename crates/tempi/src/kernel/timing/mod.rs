//! Time: the kernel's timer queue, thread sets with their execution-time clocks and timers,
//! and budgets with their enforcement and replenishment.
//!
//! Owns: `timers` (every future instant the kernel must act at), `sets` (membership, thread and
//! group clocks, execution-time events) and `budgets` (exhaustion, enforcement, periodic and
//! server replenishment).
//!
//! Must not: decide what an exhausted budget does (its [`BudgetAction`](crate::sets::BudgetAction)
//! policy does) or dispatch threads directly: enforcement goes through dispatch's calls.

pub(in crate::kernel) mod budgets;
pub(in crate::kernel) mod sets;
pub(in crate::kernel) mod timers;
