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

/// Thread sets, their execution-time accounting and the budget checks put off within an instant.
pub(in crate::kernel) struct ExecTime {
    pub(in crate::kernel) sets: Vec<crate::kernel::timing::sets::SetState>,
    pub(in crate::kernel) set_base: u32,
    pub(in crate::kernel) accounting: crate::sets::Accounting,
    /// Armed execution-time events (thread timers, set timers, budgets); zero skips all checks.
    pub(in crate::kernel) watch: u32,
    /// Deadline checks put off until the budget events of their instant (see
    /// `Kernel::settle_budgets`): a running job whose budget runs out at its deadline. Sized
    /// once, one per CPU (only a running thread's check is put off).
    pub(in crate::kernel) deferred_deadlines: Vec<(crate::plain::ThreadId, u32)>,
    /// A budget's `kill` struck a running thread at this instant: it ends before any thread
    /// runs on (see `Kernel::settle_budgets`).
    pub(in crate::kernel) budget_killed_running: bool,
}
