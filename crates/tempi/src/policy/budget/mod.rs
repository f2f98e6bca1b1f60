//! Budget policies: what an execution-time overrun does to the members of a thread set.
//!
//! The kernel measures, detects and enforces; a [`BudgetAction`] decides. When a set's budget
//! runs out the kernel asks the action for an [`Enforcement`] and carries it out on every
//! member; when the budget is replenished it lifts whatever enforcement is in force and tells
//! the action. Built-in actions, one per file: [`Notify`], [`Demote`], [`Suspend`], [`Kill`].
//!
//! An action that suspends a set on its third overrun only:
//!
//! ```
//! use tempi::policy::budget::{BudgetAction, Enforcement};
//! use tempi::BudgetEvent;
//!
//! #[derive(Default)]
//! struct ThreeStrikes { overruns: u32 }
//!
//! impl BudgetAction for ThreeStrikes {
//!     fn name(&self) -> &str { "three-strikes" }
//!     fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
//!         self.overruns += 1;
//!         if self.overruns >= 3 { Enforcement::Suspend } else { Enforcement::Nothing }
//!     }
//! }
//! # let _ = tempi::Budget::new(std::time::Duration::from_millis(1)).action(ThreeStrikes::default());
//! ```

mod demote;
mod kill;
mod notify;
mod suspend;

pub use demote::Demote;
pub use kill::Kill;
pub use notify::Notify;
pub use suspend::Suspend;

use crate::sets::BudgetEvent;

/// What the kernel does to the members of a set whose budget ran out.
///
/// ```
/// assert_ne!(tempi::policy::budget::Enforcement::Suspend, tempi::policy::budget::Enforcement::Kill);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Enforcement {
    /// Nothing: the members run on (the handler has been told).
    #[default]
    Nothing,
    /// The members drop to background urgency (below every thread not demoted) until the
    /// budget is replenished.
    Demote,
    /// The members stop running until the budget is replenished: a running member is taken
    /// off its CPU at once (in real time: at its next preemption point), ready and waking
    /// members are held.
    Suspend,
    /// The members are ended at their next task boundary (their current or next runtime
    /// call), with outcome [`crate::ThreadOutcome::Killed`].
    Kill,
}

/// Decides what an overrun does. Called by the kernel, inside the runtime, at the instant the
/// budget runs out (virtual time: exactly; real time: within the timer latency, or at the
/// runaway's next preemption point).
pub trait BudgetAction: Send {
    /// The action's name, e.g. `"suspend"`.
    fn name(&self) -> &str;
    /// The budget ran out.
    fn on_exhausted(&mut self, event: &BudgetEvent) -> Enforcement;
    /// The budget was replenished; the kernel has already lifted the enforcement.
    fn on_replenished(&mut self, _event: &BudgetEvent) {}
}

/// A built-in action by name: `notify`, `demote`, `suspend`, `kill`.
///
/// ```
/// assert_eq!(tempi::policy::budget::by_name("suspend").unwrap().name(), "suspend");
/// assert!(tempi::policy::budget::by_name("explode").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn BudgetAction>> {
    Some(match name {
        "notify" => Box::new(Notify),
        "demote" => Box::new(Demote),
        "suspend" => Box::new(Suspend),
        "kill" => Box::new(Kill),
        _ => return None,
    })
}
