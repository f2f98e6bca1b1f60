//! What a budget reports: an exhaustion or a replenishment of a thread set's budget, passed to
//! budget actions and handlers. Re-exported by the crate root and `tempi::sets`.

use std::time::Duration;

use crate::plain::ids::SetId;
use crate::time::Time;

/// What happened to a budget.
///
/// ```
/// assert_ne!(tempi::BudgetEventKind::Exhausted, tempi::BudgetEventKind::Replenished);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetEventKind {
    /// The budget ran out.
    Exhausted,
    /// The budget got time back.
    Replenished,
}

/// Passed to budget actions and handlers.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use std::time::Duration;
/// use tempi::{Budget, BudgetEventKind, Runtime, ThreadSpec, Time};
/// let ms = Duration::from_millis;
/// let log = Arc::new(Mutex::new(Vec::new()));
/// let l = log.clone();
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("greedy"), move |cx| cx.work(ms(5))).unwrap();
/// let set = rt.create_set("box", 0).unwrap();
/// rt.add_to_set(set, t).unwrap();
/// rt.set_budget(set, Budget::new(ms(2)).on_event(move |e| l.lock().unwrap().push(*e))).unwrap();
/// rt.run().unwrap();
/// let log = log.lock().unwrap();
/// assert_eq!((log[0].kind, log[0].at, log[0].consumed), (BudgetEventKind::Exhausted, Time::from_millis(2), ms(2)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BudgetEvent {
    /// The set.
    pub set: SetId,
    /// Exhausted or replenished.
    pub kind: BudgetEventKind,
    /// When.
    pub at: Time,
    /// The set's group clock at that instant.
    pub consumed: Duration,
    /// Budget left after the event.
    pub remaining: Duration,
}
