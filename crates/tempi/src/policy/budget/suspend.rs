//! The `suspend` budget action. Suspend the members until replenishment (deferrable and sporadic servers use this).

use super::{BudgetAction, Enforcement};
use crate::plain::BudgetEvent;

/// Suspend the members until replenishment (deferrable and sporadic servers use this).
///
/// ```
/// use tempi::policy::budget::{BudgetAction, Suspend};
/// assert_eq!(Suspend.name(), "suspend");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Suspend;

impl BudgetAction for Suspend {
    fn name(&self) -> &str {
        "suspend"
    }
    fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
        Enforcement::Suspend
    }
}
