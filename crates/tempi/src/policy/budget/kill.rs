//! The `kill` budget action. End the members at their next task boundary.

use super::{BudgetAction, Enforcement};
use crate::plain::BudgetEvent;

/// End the members at their next task boundary.
///
/// ```
/// use tempi::policy::budget::{BudgetAction, Kill};
/// assert_eq!(Kill.name(), "kill");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Kill;

impl BudgetAction for Kill {
    fn name(&self) -> &str {
        "kill"
    }
    fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
        Enforcement::Kill
    }
}
