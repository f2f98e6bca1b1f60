//! Necessary conditions: demands that no scheduler can meet, whatever the policy or the locking
//! protocol ([`TaskSet::infeasibility`]).
//!
//! Owns the conditions and their result type. The sufficient tests (which can show a set
//! schedulable) live in `fixed_priority.rs`, `edf.rs` and `global.rs`; a failed sufficient test
//! proves nothing, while a condition here, once broken, proves that some job misses.

use super::arith::{nanos, secs, utilisation_exceeds};
use super::TaskSet;

/// Why a task set cannot meet its deadlines on any scheduler ([`TaskSet::infeasibility`]).
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{Infeasible, Task, TaskSet};
/// let ms = Duration::from_millis;
/// let mut ts = TaskSet::new();
/// ts.add_task(Task::new("a", ms(3), ms(4)));
/// ts.add_task(Task::new("b", ms(3), ms(4)));
/// assert_eq!(ts.infeasibility(1), Some(Infeasible::Utilisation { utilisation: 1.5, cpus: 1 }));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum Infeasible {
    /// The tasks ask for more than the CPUs have in the long run: `Σ C/T > cpus`. Whatever the
    /// phases, the work released grows faster than the CPUs can serve it, so the backlog grows
    /// without bound and some job finishes after any deadline.
    Utilisation {
        /// `Σ C/T` (rounded; the comparison itself is exact).
        utilisation: f64,
        /// The number of CPUs it was compared with.
        cpus: usize,
    },
    /// One task asks for more CPU time per job than its deadline leaves: `C > D`. A job runs
    /// on one CPU at a time, so even alone it misses.
    WcetAboveDeadline {
        /// The task's index.
        task: usize,
    },
    /// One task alone asks for more than one CPU: `C/T > 1` (with `D > T`; with `D ≤ T` it is
    /// [`Infeasible::WcetAboveDeadline`]). Its jobs run one at a time, so they fall behind
    /// without bound, however many CPUs there are.
    TaskUtilisation {
        /// The task's index.
        task: usize,
        /// Its `C/T`.
        utilisation: f64,
    },
}

impl TaskSet {
    /// Whether the set breaks a condition every schedule on `cpus` identical CPUs must meet,
    /// under any policy and any locking protocol (blocking only adds to the demand): the
    /// utilisation `Σ C/T` above `cpus`, then a task with `C > D`, then (for several CPUs) a
    /// task with `C/T > 1`. `None` proves nothing: the set may still miss; the sufficient tests
    /// decide that. The comparisons are exact, in integers, so a utilisation of exactly
    /// `cpus` is not infeasible.
    ///
    /// The model's worst case is what is judged: each job asks for its `C`, and a sporadic task
    /// arrives as often as its period allows.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Infeasible, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("a", ms(2), ms(4)));
    /// ts.add_task(Task::new("b", ms(2), ms(4)));
    /// assert_eq!(ts.infeasibility(1), None); // exactly 1: EDF meets it
    /// ts.add_task(Task::new("late", ms(3), ms(10)).deadline(ms(2)));
    /// assert!(matches!(ts.infeasibility(1), Some(Infeasible::Utilisation { cpus: 1, .. })));
    /// assert_eq!(ts.infeasibility(2), Some(Infeasible::WcetAboveDeadline { task: 2 }));
    /// ```
    pub fn infeasibility(&self, cpus: usize) -> Option<Infeasible> {
        // A zero period is a model error (`validate`), not a demand: leave it to that.
        let terms = self.tasks.iter().filter(|t| !t.period.is_zero()).map(|t| (nanos(t.wcet), nanos(t.period)));
        if utilisation_exceeds(terms, cpus as u128) {
            let utilisation = self.tasks.iter().filter(|t| !t.period.is_zero()).map(|t| t.utilisation()).sum();
            return Some(Infeasible::Utilisation { utilisation, cpus });
        }
        if let Some(task) = self.tasks.iter().position(|t| t.wcet > t.deadline) {
            return Some(Infeasible::WcetAboveDeadline { task });
        }
        let task = self.tasks.iter().position(|t| !t.period.is_zero() && t.wcet > t.period)?;
        Some(Infeasible::TaskUtilisation {
            task,
            utilisation: secs(self.tasks[task].wcet) / secs(self.tasks[task].period),
        })
    }
}
