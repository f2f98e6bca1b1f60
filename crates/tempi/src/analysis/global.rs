//! Sufficient schedulability tests for global scheduling on `m` identical CPUs, where a job
//! may run on any CPU and migrate ([`TaskSet::global_edf_tests`],
//! [`TaskSet::global_fp_response_times`]).
//!
//! Owns the global tests and their result types. Must not define blocking terms nor the
//! single-CPU tests: critical sections are not modelled here (tempi refuses locks under a
//! global policy), and a set that has any is refused with [`GlobalError::Sections`].
//!
//! Every test here is *sufficient*: passing proves that no job misses its deadline, for any
//! release pattern with at least the given minimum separations (periodic or sporadic, any
//! phases); failing proves nothing. The tests cover constrained deadlines (`D ≤ T`) only; a set
//! with a longer deadline is refused with [`GlobalError::ArbitraryDeadline`]. Time is counted in
//! whole nanoseconds, the kernel's own unit.

use std::time::Duration;

use super::arith::{from_nanos, nanos, secs, utilisation_reaches_one};
use super::{ModelError, TaskSet};

/// Why a global test does not apply to a task set.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{GlobalError, Task, TaskSet};
/// let ms = Duration::from_millis;
/// let mut ts = TaskSet::new();
/// ts.add_task(Task::new("late", ms(1), ms(4)).deadline(ms(6)));
/// assert_eq!(ts.global_edf_tests(2).unwrap_err(), GlobalError::ArbitraryDeadline { task: "late".into() });
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GlobalError {
    /// No CPU: `m` must be at least 1.
    NoCpu,
    /// The model itself is invalid (a zero period or deadline, ...: see [`TaskSet::validate`]).
    Model(ModelError),
    /// A task has critical sections, which the global tests do not model.
    Sections {
        /// The task's name.
        task: String,
    },
    /// A task's relative deadline is longer than its period.
    ArbitraryDeadline {
        /// The task's name.
        task: String,
    },
}

impl std::fmt::Display for GlobalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GlobalError::NoCpu => write!(f, "a global test needs at least one CPU"),
            GlobalError::Model(e) => write!(f, "{e}"),
            GlobalError::Sections { task } => {
                write!(f, "task \"{task}\" has critical sections, which the global tests do not model")
            }
            GlobalError::ArbitraryDeadline { task } => {
                write!(f, "task \"{task}\" has a deadline longer than its period; the global tests need D <= T")
            }
        }
    }
}

impl std::error::Error for GlobalError {}

/// The global EDF tests of [`TaskSet::global_edf_tests`].
///
/// ```
/// let ts = tempi::analysis::TaskSet::new();
/// assert!(ts.global_edf_tests(2).unwrap().passed());
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GlobalEdfTests {
    /// The CPUs the set was judged for.
    pub cpus: usize,
    /// `Σ λ_i`, the total density (`λ_i = C_i / D_i`), for display.
    pub density: f64,
    /// `m − (m − 1)·λ_max`, the right-hand side of the density test, for display.
    pub density_bound: f64,
    /// Goossens, Funk and Baruah's test in its density form: `Σ λ_i < m − (m − 1)·λ_max`,
    /// decided exactly.
    pub density_passed: bool,
    /// Bertogna, Cirinei and Lipari's test (2005), decided exactly.
    pub bcl_passed: bool,
}

impl GlobalEdfTests {
    /// Whether either test passed: no job misses under global EDF.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("a", Duration::from_millis(3), Duration::from_millis(4)));
    /// assert!(ts.global_edf_tests(1).unwrap().passed());
    /// ```
    pub fn passed(&self) -> bool {
        self.density_passed || self.bcl_passed
    }
}

/// One task's result under [`TaskSet::global_fp_response_times`].
///
/// ```
/// use std::time::Duration;
/// let b = tempi::analysis::GlobalBound::Proven(Duration::from_millis(2));
/// assert_eq!(b.proven(), Some(Duration::from_millis(2)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GlobalBound {
    /// The response time is at most this, within the deadline.
    Proven(Duration),
    /// The bound passed the deadline at this value: the test cannot vouch for the task (it may
    /// still meet every deadline; the test is only sufficient).
    NotProven(Duration),
}

impl GlobalBound {
    /// The bound when it is within the deadline.
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(tempi::analysis::GlobalBound::NotProven(Duration::from_millis(9)).proven(), None);
    /// ```
    pub fn proven(self) -> Option<Duration> {
        match self {
            GlobalBound::Proven(r) => Some(r),
            GlobalBound::NotProven(_) => None,
        }
    }
}

/// A task's numbers in nanoseconds: (wcet, period, deadline).
type Ns = (u128, u128, u128);

/// `Σ_i min(w_i, x)`: the work that can keep the CPUs busy during `x` units of waiting.
fn capped(ws: &[u128], x: u128) -> u128 {
    ws.iter().map(|&w| w.min(x)).sum()
}

impl TaskSet {
    /// The least `R` in `[c, d]` where `workloads(R)` (each interferer's work in a window of
    /// `R`) leaves job `k` done by `R` on `m` CPUs: see [`TaskSet::global_fp_response_times`].
    fn global_fp_bound(c: u128, d: u128, m: u128, workloads: impl Fn(u128) -> Vec<u128>) -> GlobalBound {
        let mut r = c;
        for _ in 0..Self::MAX_RTA_ITERATIONS {
            if r > d {
                return GlobalBound::NotProven(from_nanos(r));
            }
            let ws = workloads(r);
            let x = r - c + 1;
            if capped(&ws, x) < m * x {
                return GlobalBound::Proven(from_nanos(r));
            }
            // With these workloads no window in (x, lo] can work; one of hi can (the capped sum
            // is at most Σ w < m·hi). The windows that work form an up-set (concave minus
            // linear), so bisect for the first.
            let (mut lo, mut hi) = (x, ws.iter().sum::<u128>() / m + 1);
            while hi - lo > 1 {
                let mid = lo + (hi - lo) / 2;
                if capped(&ws, mid) < m * mid {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            r = c + hi - 1;
        }
        GlobalBound::NotProven(from_nanos(r))
    }

    fn global_model(&self, cpus: usize) -> Result<Vec<Ns>, GlobalError> {
        if cpus == 0 {
            return Err(GlobalError::NoCpu);
        }
        self.validate().map_err(GlobalError::Model)?;
        self.tasks
            .iter()
            .map(|t| {
                if !t.sections.is_empty() {
                    return Err(GlobalError::Sections { task: t.name.clone() });
                }
                if t.deadline > t.period {
                    return Err(GlobalError::ArbitraryDeadline { task: t.name.clone() });
                }
                Ok((nanos(t.wcet), nanos(t.period), nanos(t.deadline)))
            })
            .collect()
    }

    /// Sufficient tests for global EDF on `cpus` identical CPUs (constrained deadlines, no
    /// critical sections):
    ///
    /// - **Density** (Goossens, Funk and Baruah 2003, in the density form that covers
    ///   `D ≤ T`): with `λ_i = C_i/D_i`, passes when `Σ λ_i < m − (m − 1)·λ_max`. Decided in
    ///   exact rational arithmetic; the boundary case `=` is not claimed.
    /// - **BCL** (Bertogna, Cirinei and Lipari 2005): for every task `k`, the work other tasks
    ///   can do inside a window of length `D_k` ending at its deadline, each capped at
    ///   `D_k − C_k`, is less than `m·(D_k − C_k)`. A task `i` fits `N_i = ⌊(D_k − D_i)/T_i⌋ + 1`
    ///   whole jobs in the window and a part of one more:
    ///   `W_i = N_i·C_i + min(C_i, max(0, D_k − N_i·T_i))`. Passes when
    ///   `Σ_{i≠k} min(W_i, D_k − C_k) < m·(D_k − C_k)` for every `k`.
    ///
    /// The two are incomparable: either passing is enough ([`GlobalEdfTests::passed`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Task, TaskSet};
    /// let us = Duration::from_micros;
    /// // The Dhall effect: two light tasks and one heavy, total utilisation 1.03 on 2 CPUs.
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("light0", us(200), us(10_000)));
    /// ts.add_task(Task::new("light1", us(200), us(10_000)));
    /// ts.add_task(Task::new("heavy", us(10_000), us(10_100)));
    /// let g = ts.global_edf_tests(2).unwrap();
    /// assert!(!g.passed()); // and global EDF does miss: the heavy job ends at 10.2 ms
    ///
    /// // Four tasks of utilisation 0.3 on 2 CPUs: 1.2 < 2 - 0.3.
    /// let mut ts = TaskSet::new();
    /// for i in 0..4 {
    ///     ts.add_task(Task::new(format!("t{i}"), us(3_000), us(10_000)));
    /// }
    /// assert!(ts.global_edf_tests(2).unwrap().density_passed);
    /// ```
    pub fn global_edf_tests(&self, cpus: usize) -> Result<GlobalEdfTests, GlobalError> {
        let tasks = self.global_model(cpus)?;
        let m = cpus as u128;
        let density: f64 = self.tasks.iter().map(|t| secs(t.wcet) / secs(t.deadline)).sum();
        // The densest task, compared exactly: C_a/D_a > C_b/D_b  <=>  C_a·D_b > C_b·D_a.
        let densest = tasks.iter().copied().reduce(|a, b| if a.0 * b.2 >= b.0 * a.2 { a } else { b });
        let max_density = self.tasks.iter().map(|t| secs(t.wcet) / secs(t.deadline)).fold(0.0, f64::max);
        let density_bound = m as f64 - (m as f64 - 1.0) * max_density;
        // Σ λ_i + (m−1)·λ_max < m  <=>  Σ C_i/(m·D_i) + (m−1)·C_max/(m·D_max) < 1.
        let density_passed = match densest {
            None => true,
            Some((c_max, _, d_max)) => {
                let terms = tasks.iter().map(|&(c, _, d)| (c, m * d));
                let extra = (1..m).map(|_| (c_max, m * d_max));
                !utilisation_reaches_one(terms.chain(extra))
            }
        };
        let bcl_passed = (0..tasks.len()).all(|k| {
            let (c_k, _, d_k) = tasks[k];
            let slack = d_k - c_k.min(d_k);
            let interference: u128 = tasks
                .iter()
                .enumerate()
                .filter(|&(i, _)| i != k)
                .map(|(_, &(c_i, t_i, d_i))| {
                    let whole = if d_k >= d_i { (d_k - d_i) / t_i + 1 } else { 0 };
                    let partial = c_i.min(d_k.saturating_sub(whole * t_i));
                    (whole * c_i + partial).min(slack)
                })
                .sum();
            c_k <= d_k && interference < m * slack
        });
        Ok(GlobalEdfTests { cpus, density, density_bound, density_passed, bcl_passed })
    }

    /// Response-time bounds under global fixed priority on `cpus` identical CPUs (Bertogna and
    /// Cirinei 2007; constrained deadlines, no critical sections), task by task from the most
    /// urgent down. Task `k` is interfered with by every other task of priority at least its
    /// own (equal priorities count as interference, safe under FIFO order among equals). In a
    /// window of length `L` a task `i` does at most
    /// `W_i(L) = N_i·C_i + min(C_i, L + R_i − C_i − N_i·T_i)`, `N_i = ⌊(L + R_i − C_i)/T_i⌋`,
    /// where `R_i` is its own proven bound when it is strictly more urgent and proven, and its
    /// deadline otherwise. The bound is the least `R ≥ C_k` with
    /// `Σ_i min(W_i(R), R − C_k + 1) < m·(R − C_k + 1)` (if the job were not done by `R` it would
    /// have waited at least `R − C_k + 1` nanoseconds with every CPU busy, which needs that much
    /// work on each CPU); this is the least fixed point of Bertogna and Cirinei's iteration
    /// `R = C_k + ⌊Σ_i min(W_i(R), R − C_k + 1) / m⌋`. Stepping that iteration advances by as
    /// little as a nanosecond while the caps bind, so the search jumps instead: with the
    /// workloads of the present `R`, the capped sum is concave in the window, so the first
    /// window where it can fall below `m` times the window is found by bisection, and the
    /// workloads are evaluated again there. The search stops as soon as `R` passes `D_k` (or
    /// after [`TaskSet::MAX_RTA_ITERATIONS`] jumps, reported as not proven).
    ///
    /// Each bound assumes the more urgent tasks meet their deadlines, so the set is proven
    /// schedulable only when every task is [`GlobalBound::Proven`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{GlobalBound, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("a", ms(2), ms(5)).priority(3));
    /// ts.add_task(Task::new("b", ms(2), ms(5)).priority(2));
    /// ts.add_task(Task::new("c", ms(3), ms(10)).priority(1));
    /// let r = ts.global_fp_response_times(2).unwrap();
    /// assert_eq!(r[0], GlobalBound::Proven(ms(2)));
    /// assert!(r.iter().all(|b| b.proven().is_some()));
    /// ```
    pub fn global_fp_response_times(&self, cpus: usize) -> Result<Vec<GlobalBound>, GlobalError> {
        let tasks = self.global_model(cpus)?;
        let m = cpus as u128;
        let mut order: Vec<usize> = (0..tasks.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(self.tasks[i].priority));
        let mut bound: Vec<Option<GlobalBound>> = vec![None; tasks.len()];
        for &k in &order {
            let (c_k, _, d_k) = tasks[k];
            let p = self.tasks[k].priority;
            // Each interferer as (C_i, T_i, the response it is known to stay within).
            let hp: Vec<(u128, u128, u128)> = self
                .higher(k)
                .map(|i| {
                    let (c, t, d) = tasks[i];
                    let r = match bound[i] {
                        Some(GlobalBound::Proven(r)) if self.tasks[i].priority > p => nanos(r),
                        _ => d,
                    };
                    (c, t, r)
                })
                .collect();
            let work = |l: u128, (c, t, r): (u128, u128, u128)| -> u128 {
                let reach = l + r - c.min(r);
                let n = reach / t;
                n * c + c.min(reach - n * t)
            };
            let result = Self::global_fp_bound(c_k, d_k, m, |l| hp.iter().map(|&i| work(l, i)).collect());
            bound[k] = Some(result);
        }
        Ok(bound.into_iter().map(|b| b.expect("every task is bounded in the loop")).collect())
    }
}
