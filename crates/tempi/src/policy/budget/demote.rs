//! The `demote` budget action. Demote the members to background urgency until replenishment.

use super::{BudgetAction, Enforcement};
use crate::plain::BudgetEvent;

/// Demote the members to background urgency until replenishment.
///
/// ```
/// use tempi::policy::budget::{BudgetAction, Demote};
/// assert_eq!(Demote.name(), "demote");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Demote;

impl BudgetAction for Demote {
    fn name(&self) -> &str {
        "demote"
    }
    fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
        Enforcement::Demote
    }
}
