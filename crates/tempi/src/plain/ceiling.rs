//! A lock's ceiling, computed once by one rule that the runtime and the analysis share.

use std::time::Duration;

/// The ceiling of a lock: the preemption level of the most urgent job that may take it, what
/// the ceiling protocols (PCP, SRP/ICPP) hold against other requesters.
///
/// It is computed once, by [`LockCeiling::of`], from what the lock declares: a ceiling priority,
/// or the lock's users. The runtime turns it into an urgency on its CPU's scheduler scale
/// ([`Scheduler::ceiling_urgency`]); the analysis ([`TaskSet::ceiling`]) compares its priority
/// with the tasks'. Both therefore judge a lock by the same ceiling.
///
/// A ceiling computed from users keeps the highest priority among them and the shortest
/// relative deadline among them: the level of a job at least as urgent as any user's job under
/// any scheduler, and exactly the most urgent user's under a scheduler that orders by priority
/// alone (fixed priority) or by deadline alone (EDF, where the shortest relative deadline is
/// SRP's preemption level).
///
/// [`Scheduler::ceiling_urgency`]: crate::policy::sched::Scheduler::ceiling_urgency
/// [`TaskSet::ceiling`]: crate::analysis::TaskSet::ceiling
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::lock::LockCeiling;
/// let users = [(3, Some(Duration::from_millis(8))), (5, Some(Duration::from_millis(20)))];
/// let c = LockCeiling::of(None, users).unwrap();
/// assert_eq!(c, LockCeiling::Users { priority: 5, relative_deadline: Some(Duration::from_millis(8)) });
/// assert_eq!(c.priority(), 5);
/// // A declared ceiling wins over the users; no declaration and no users: no ceiling.
/// assert_eq!(LockCeiling::of(Some(9), users), Some(LockCeiling::Declared(9)));
/// assert_eq!(LockCeiling::of(None, []), None);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LockCeiling {
    /// A declared ceiling priority.
    Declared(i32),
    /// Computed from the lock's users.
    Users {
        /// The highest priority among the users.
        priority: i32,
        /// The shortest relative deadline among the users that have one.
        relative_deadline: Option<Duration>,
    },
}

impl LockCeiling {
    /// The ceiling of a lock that declares `declared` (a priority) and is used by threads of the
    /// given `(priority, relative deadline)`: the declaration if there is one, else the users'
    /// level, else `None` (a lock without a ceiling).
    ///
    /// ```
    /// use tempi::policy::lock::LockCeiling;
    /// assert_eq!(LockCeiling::of(None, [(2, None), (7, None)]).map(|c| c.priority()), Some(7));
    /// ```
    pub fn of(declared: Option<i32>, users: impl IntoIterator<Item = (i32, Option<Duration>)>) -> Option<LockCeiling> {
        if let Some(p) = declared {
            return Some(LockCeiling::Declared(p));
        }
        users.into_iter().fold(None, |level, (priority, rel)| {
            Some(match level {
                None => LockCeiling::Users { priority, relative_deadline: rel },
                Some(LockCeiling::Users { priority: p, relative_deadline: d }) => LockCeiling::Users {
                    priority: p.max(priority),
                    relative_deadline: match (d, rel) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    },
                },
                Some(declared) => declared,
            })
        })
    }

    /// The ceiling's priority: the declared one, or the highest among the users.
    ///
    /// ```
    /// assert_eq!(tempi::policy::lock::LockCeiling::Declared(4).priority(), 4);
    /// ```
    pub fn priority(&self) -> i32 {
        match *self {
            LockCeiling::Declared(p) | LockCeiling::Users { priority: p, .. } => p,
        }
    }
}
