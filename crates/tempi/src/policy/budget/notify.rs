//! The `notify` budget action. Only notify: the members run on; the exhaustion handler and the trace record the overrun.

use super::{BudgetAction, Enforcement};
use crate::plain::BudgetEvent;

/// Only notify: the members run on; the exhaustion handler and the trace record the overrun.
///
/// ```
/// use tempi::policy::budget::{BudgetAction, Notify};
/// assert_eq!(Notify.name(), "notify");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Notify;

impl BudgetAction for Notify {
    fn name(&self) -> &str {
        "notify"
    }
    fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
        Enforcement::Nothing
    }
}
