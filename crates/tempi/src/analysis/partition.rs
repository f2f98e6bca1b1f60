//! Partitioning a task set over several CPUs: first-fit and worst-fit decreasing, each
//! placement checked by a one-CPU schedulability test of this module's siblings
//! ([`TaskSet::partition`]).
//!
//! Owns the bin-packing heuristics, their error type and turning thread specs into a task set
//! ([`TaskSet::from_specs`]). Must not define schedulability tests: each CPU's subset is judged
//! by the existing tests (`edf.rs`, `fixed_priority.rs`), which see it as a task set of its own.
//!
//! Locks stay on one CPU: a task that shares a resource with tasks already placed goes to
//! their CPU or nowhere, so every CPU's subset is a closed one-processor task set and its
//! blocking terms are the one-processor ones.

use std::collections::BTreeMap;
use std::fmt;

use super::arith::secs;
use super::{ModelError, Task, TaskSet};
use crate::thread::{ThreadSpec, Timing};

/// Where a task goes among the CPUs it would fit on.
///
/// ```
/// use tempi::analysis::Fit;
/// assert_eq!(Fit::First.name(), "ffd");
/// assert_eq!(Fit::by_name("wfd"), Some(Fit::Worst));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fit {
    /// The lowest-numbered CPU that passes the test (first-fit decreasing, `ffd`).
    First,
    /// The least-loaded CPU that passes the test, load being the sum of the sort key of the
    /// tasks already there; ties go to the lower number (worst-fit decreasing, `wfd`).
    Worst,
}

impl Fit {
    /// `"ffd"` or `"wfd"`.
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Fit::Worst.name(), "wfd");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Fit::First => "ffd",
            Fit::Worst => "wfd",
        }
    }

    /// The heuristic called `name` (`ffd`, `wfd`).
    ///
    /// ```
    /// assert_eq!(tempi::analysis::Fit::by_name("bfd"), None);
    /// ```
    pub fn by_name(name: &str) -> Option<Fit> {
        match name {
            "ffd" => Some(Fit::First),
            "wfd" => Some(Fit::Worst),
            _ => None,
        }
    }
}

/// The "size" tasks are sorted by (largest first) and a CPU's load is summed from.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{SortKey, Task};
/// let ms = Duration::from_millis;
/// let t = Task::new("t", ms(2), ms(10)).deadline(ms(4));
/// assert_eq!(SortKey::Utilisation.of(&t), 0.2);
/// assert_eq!(SortKey::Density.of(&t), 0.5);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SortKey {
    /// `C/T`.
    Utilisation,
    /// `C/min(D, T)`.
    Density,
}

impl SortKey {
    /// The key's value for one task.
    ///
    /// ```
    /// use std::time::Duration;
    /// let t = tempi::analysis::Task::new("t", Duration::from_millis(1), Duration::from_millis(4));
    /// assert_eq!(tempi::analysis::SortKey::Density.of(&t), 0.25);
    /// ```
    pub fn of(self, t: &Task) -> f64 {
        match self {
            SortKey::Utilisation => t.utilisation(),
            SortKey::Density => secs(t.wcet) / secs(t.deadline.min(t.period)),
        }
    }
}

/// The one-CPU test a placement must pass. All three are sufficient tests; a subset they
/// cannot decide counts as not fitting.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{CpuTest, Task, TaskSet};
/// let mut ts = TaskSet::new();
/// ts.add_task(Task::new("a", Duration::from_millis(2), Duration::from_millis(4)).priority(2));
/// ts.add_task(Task::new("b", Duration::from_millis(3), Duration::from_millis(6)).priority(1));
/// assert!(CpuTest::Edf.passes(&ts)); // U = 1
/// assert!(!CpuTest::ResponseTime.passes(&ts)); // R_b = 7 > 6
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuTest {
    /// EDF ([`TaskSet::edf_tests`]): Baker's test (which needs every resource under km, pcp
    /// or srp; without sections it is the density test `Σ C/min(D, T) ≤ 1`), the
    /// kernelized-monitor bound (same coverage) or the test with inheritance-style blocking
    /// (every protocol; none under bp when a third task can run ahead of a holder); any one
    /// passing is enough. All divide by `min(D, T)`, so any mix of deadlines shorter and
    /// longer than the periods is judged.
    Edf,
    /// Fixed priority, exact response-time analysis with blocking, on the tasks' own
    /// priorities ([`TaskSet::analyze`]): a soft task whose worst case exceeds its deadline
    /// does not fail it ([`crate::analysis::Task::criticality`]). The other two tests judge
    /// soft tasks as hard.
    ResponseTime,
    /// Fixed priority, the Liu and Layland bound with blocking ([`TaskSet::liu_layland`]):
    /// only for rate-monotonic priorities and `D ≥ T`; otherwise it does not pass.
    LiuLayland,
}

impl CpuTest {
    /// Whether `ts`, run alone on one CPU, passes this test.
    ///
    /// ```
    /// assert!(tempi::analysis::CpuTest::LiuLayland.passes(&tempi::analysis::TaskSet::new()));
    /// ```
    pub fn passes(self, ts: &TaskSet) -> bool {
        match self {
            CpuTest::Edf => {
                let e = ts.edf_tests();
                e.baker.is_some_and(|b| b.passed) || e.km_bound.passed || e.inheritance.is_some_and(|b| b.passed)
            }
            CpuTest::ResponseTime => ts.analyze().schedulable,
            CpuTest::LiuLayland => ts.liu_layland().is_some_and(|l| l.passed),
        }
    }

    /// `"edf"`, `"rta"` or `"liu-layland"`.
    ///
    /// ```
    /// assert_eq!(tempi::analysis::CpuTest::ResponseTime.name(), "rta");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            CpuTest::Edf => "edf",
            CpuTest::ResponseTime => "rta",
            CpuTest::LiuLayland => "liu-layland",
        }
    }
}

/// Why a task set could not be partitioned.
///
/// ```
/// use tempi::analysis::{Fit, CpuTest, PartitionError, SortKey, TaskSet};
/// let e = TaskSet::new().partition(0, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap_err();
/// assert_eq!(e, PartitionError::NoCpus);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PartitionError {
    /// Zero CPUs were offered.
    NoCpus,
    /// The task set itself is invalid.
    Model(ModelError),
    /// A thread spec has no period nor minimum inter-arrival time: it is no task.
    NotPeriodic {
        /// The thread's name.
        thread: String,
    },
    /// No CPU passes the test with this task added (the tasks before it in the sorted order
    /// are placed).
    DoesNotFit {
        /// The task's name.
        task: String,
        /// The only CPU it could go to, because tasks it shares a resource with are there.
        bound_to: Option<usize>,
    },
    /// The task shares resources with tasks already placed on two different CPUs.
    SplitResources {
        /// The task's name.
        task: String,
        /// Two of those CPUs.
        cpus: (usize, usize),
    },
}

impl fmt::Display for PartitionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PartitionError::NoCpus => write!(f, "there are no CPUs to partition over"),
            PartitionError::Model(e) => write!(f, "{e}"),
            PartitionError::NotPeriodic { thread } => {
                write!(f, "thread \"{thread}\" is neither periodic nor sporadic, so it is not a task to place")
            }
            PartitionError::DoesNotFit { task, bound_to: None } => {
                write!(f, "task \"{task}\" does not fit on any CPU")
            }
            PartitionError::DoesNotFit { task, bound_to: Some(c) } => {
                write!(f, "task \"{task}\" does not fit on CPU {c}, the CPU of the tasks it shares a resource with")
            }
            PartitionError::SplitResources { task, cpus: (a, b) } => write!(
                f,
                "task \"{task}\" shares resources with tasks on CPU {a} and on CPU {b}; a resource must stay on one CPU"
            ),
        }
    }
}

impl std::error::Error for PartitionError {}

impl From<ModelError> for PartitionError {
    fn from(e: ModelError) -> Self {
        PartitionError::Model(e)
    }
}

/// A task-to-CPU assignment: `cpu_of[i]` is task `i`'s CPU.
///
/// ```
/// use std::time::Duration;
/// use tempi::analysis::{CpuTest, Fit, SortKey, Task, TaskSet};
/// let mut ts = TaskSet::new();
/// ts.add_task(Task::new("a", Duration::from_millis(3), Duration::from_millis(4)));
/// ts.add_task(Task::new("b", Duration::from_millis(3), Duration::from_millis(4)));
/// let p = ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap();
/// assert_eq!(p.cpu_of, [0, 1]);
/// assert_eq!(p.tasks_on(1).collect::<Vec<_>>(), [1]);
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    /// The CPU of each task, by task index.
    pub cpu_of: Vec<usize>,
    /// How many CPUs were offered (some may be left empty).
    pub cpus: usize,
}

impl Partition {
    /// The indices of the tasks on `cpu`, in task order.
    ///
    /// ```
    /// let p = tempi::analysis::Partition { cpu_of: vec![1, 0, 1], cpus: 2 };
    /// assert_eq!(p.tasks_on(1).collect::<Vec<_>>(), [0, 2]);
    /// ```
    pub fn tasks_on(&self, cpu: usize) -> impl Iterator<Item = usize> + '_ {
        self.cpu_of.iter().enumerate().filter(move |&(_, &c)| c == cpu).map(|(i, _)| i)
    }

    /// The task set CPU `cpu` runs: its tasks, in task order, and every resource of `ts`
    /// (same indices, so sections still name them). This is what the test judged.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{Partition, Task, TaskSet};
    /// let mut ts = TaskSet::new();
    /// ts.add_task(Task::new("a", Duration::from_millis(1), Duration::from_millis(4)));
    /// ts.add_task(Task::new("b", Duration::from_millis(1), Duration::from_millis(4)));
    /// let p = Partition { cpu_of: vec![1, 0], cpus: 2 };
    /// assert_eq!(p.subset(&ts, 0).tasks[0].name, "b");
    /// ```
    pub fn subset(&self, ts: &TaskSet, cpu: usize) -> TaskSet {
        TaskSet { tasks: self.tasks_on(cpu).map(|i| ts.tasks[i].clone()).collect(), resources: ts.resources.clone() }
    }

    /// Pin each thread to its task's CPU (`specs[i]` is task `i`, as [`TaskSet::from_specs`]
    /// builds it). Specs beyond the partition are left alone.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::Partition;
    /// let mut specs = vec![tempi::ThreadSpec::new("a").periodic(Duration::from_millis(4))];
    /// Partition { cpu_of: vec![1], cpus: 2 }.apply(&mut specs);
    /// assert_eq!(specs[0].cpu_index(), 1);
    /// ```
    pub fn apply(&self, specs: &mut [ThreadSpec]) {
        for (spec, &cpu) in specs.iter_mut().zip(&self.cpu_of) {
            let s = std::mem::replace(spec, ThreadSpec::new(""));
            *spec = s.cpu(cpu);
        }
    }
}

impl TaskSet {
    /// The task set of some thread specs, task `i` being `specs[i]`: `C` its WCET, `T` its
    /// period (a sporadic thread's minimum inter-arrival time), `D` its relative deadline
    /// (default `T`), its priority and its criticality. No resources. One-shot threads are
    /// refused.
    ///
    /// ```
    /// use std::time::Duration;
    /// let ms = Duration::from_millis;
    /// let specs = [tempi::ThreadSpec::new("p").periodic(ms(10)).wcet(ms(2)).priority(3)];
    /// let ts = tempi::analysis::TaskSet::from_specs(&specs).unwrap();
    /// assert_eq!((ts.tasks[0].wcet, ts.tasks[0].deadline, ts.tasks[0].priority), (ms(2), ms(10), 3));
    /// assert!(tempi::analysis::TaskSet::from_specs(&[tempi::ThreadSpec::new("once")]).is_err());
    /// ```
    pub fn from_specs(specs: &[ThreadSpec]) -> Result<TaskSet, PartitionError> {
        let mut ts = TaskSet::new();
        for s in specs {
            let period = match s.timing() {
                Timing::Periodic { period, .. } => period,
                Timing::Sporadic { min_interarrival } if !min_interarrival.is_zero() => min_interarrival,
                _ => return Err(PartitionError::NotPeriodic { thread: s.name().to_string() }),
            };
            let deadline = s.relative_deadline().unwrap_or(period);
            ts.add_task(
                Task::new(s.name(), s.wcet_value(), period)
                    .deadline(deadline)
                    .priority(s.priority_value())
                    .criticality(s.criticality_value()),
            );
        }
        Ok(ts)
    }

    /// Assign every task a CPU among `cpus`: tasks by decreasing `key` (ties in task order),
    /// each put on the first CPU in `fit`'s order whose subset, with the task added, passes
    /// `test`. A task that shares a resource with tasks already placed may only join them.
    ///
    /// The result is a placement every CPU of which passes `test`, or the first task (in the
    /// sorted order) that fits nowhere.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::analysis::{CpuTest, Fit, PartitionError, SortKey, Task, TaskSet};
    /// let ms = Duration::from_millis;
    /// let mut ts = TaskSet::new();
    /// for (name, c) in [("a", 4), ("b", 4), ("c", 3), ("d", 3), ("e", 3), ("f", 3)] {
    ///     ts.add_task(Task::new(name, ms(c), ms(10)));
    /// }
    /// // First fit fills CPU 0 with a and b (0.8), CPU 1 with c, d, e (0.9): f fits nowhere.
    /// let ffd = ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf);
    /// assert_eq!(ffd, Err(PartitionError::DoesNotFit { task: "f".into(), bound_to: None }));
    /// // Worst fit alternates: 0.4 + 0.3 + 0.3 on each.
    /// let wfd = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap();
    /// assert_eq!(wfd.cpu_of, [0, 1, 0, 1, 0, 1]);
    /// ```
    pub fn partition(&self, cpus: usize, fit: Fit, key: SortKey, test: CpuTest) -> Result<Partition, PartitionError> {
        if cpus == 0 {
            return Err(PartitionError::NoCpus);
        }
        self.validate()?;
        let mut order: Vec<usize> = (0..self.tasks.len()).collect();
        // Stable: equal keys keep task order.
        order.sort_by(|&a, &b| key.of(&self.tasks[b]).total_cmp(&key.of(&self.tasks[a])));
        let mut cpu_of: Vec<Option<usize>> = vec![None; self.tasks.len()];
        let mut resource_cpu: Vec<Option<usize>> = vec![None; self.resources.len()];
        let mut load = vec![0.0_f64; cpus];
        // Per CPU: its tasks in task order (what the test is shown, as a task set of its own)
        // and their sums for the quick decisions.
        let mut on: Vec<Vec<usize>> = vec![Vec::new(); cpus];
        let mut sums: Vec<Sums> = vec![Sums::default(); cpus];
        // Per CPU and priority band: the sums of the tasks in that band, for the response-time
        // bound band by band. A band is a priority when there are few, else a range of them
        // (its tasks then count as interfering with each other, which only makes X larger).
        let mut levels: Vec<BTreeMap<usize, Sums>> = vec![BTreeMap::new(); cpus];
        let mut priorities: Vec<i32> = self.tasks.iter().map(|t| t.priority).collect();
        priorities.sort_unstable();
        priorities.dedup();
        let cuts: Vec<i32> = if priorities.len() <= MAX_LEVELS {
            priorities
        } else {
            (0..MAX_LEVELS).map(|k| priorities[k * priorities.len() / MAX_LEVELS]).collect()
        };
        let band = |p: i32| cuts.partition_point(|&c| c <= p);
        let mut trial = TaskSet { tasks: Vec::new(), resources: self.resources.clone() };
        // Worst fit: CPUs by (load, number), so the least loaded is the first.
        let mut by_load: std::collections::BTreeSet<(Key, usize)> = (0..cpus).map(|c| (Key(0.0), c)).collect();
        for &i in &order {
            let task = &self.tasks[i];
            let mut bound_to: Option<usize> = None;
            for s in &task.sections {
                if let Some(c) = resource_cpu[s.resource] {
                    match bound_to {
                        Some(b) if b != c => {
                            return Err(PartitionError::SplitResources {
                                task: task.name.clone(),
                                cpus: (b.min(c), b.max(c)),
                            })
                        }
                        _ => bound_to = Some(c),
                    }
                }
            }
            let added = Sums::of(self, task);
            let at_band = band(task.priority);
            let mut fits = |cpu: usize| match sums[cpu].with(&added).decide(test, &levels[cpu], (at_band, &added)) {
                Some(answer) => answer,
                None => {
                    trial.tasks.clear();
                    trial.tasks.extend(on[cpu].iter().map(|&j| self.tasks[j].clone()));
                    trial.tasks.push(task.clone());
                    test.passes(&trial)
                }
            };
            let found = match (bound_to, fit) {
                (Some(c), _) => fits(c).then_some(c),
                (None, Fit::First) => (0..cpus).find(|&c| fits(c)),
                (None, Fit::Worst) => by_load.iter().map(|&(_, c)| c).find(|&c| fits(c)),
            };
            let Some(cpu) = found else {
                return Err(PartitionError::DoesNotFit { task: task.name.clone(), bound_to });
            };
            cpu_of[i] = Some(cpu);
            by_load.remove(&(Key(load[cpu]), cpu));
            load[cpu] += key.of(task);
            by_load.insert((Key(load[cpu]), cpu));
            let at = on[cpu].partition_point(|&j| j < i);
            on[cpu].insert(at, i);
            sums[cpu] = sums[cpu].with(&added);
            let level = levels[cpu].entry(at_band).or_default();
            *level = level.with(&added);
            for s in &task.sections {
                resource_cpu[s.resource] = Some(cpu);
            }
        }
        Ok(Partition { cpu_of: cpu_of.into_iter().map(|c| c.expect("every task placed")).collect(), cpus })
    }
}

/// A CPU's load as worst fit orders it: `total_cmp`, as the stable sort by load did, so equal
/// loads go by CPU number.
#[derive(Clone, Copy, Debug)]
struct Key(f64);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.0.total_cmp(&other.0).is_eq()
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Key) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Sums over a CPU's tasks (times in seconds) from which [`Sums::decide`] can often tell, in
/// constant time, what the CPU's full test would answer: a sufficient test with a margin (so
/// that its yes implies the exact test's) and a necessary one (utilisation above 1). Neither
/// holding, the full test decides.
#[derive(Clone, Copy, Debug)]
struct Sums {
    tasks: f64,
    /// `Σ C`, the largest `C`, `Σ C/T`, `Σ C/min(D, T)`, `Σ 1/T`.
    wcet: f64,
    wcet_max: f64,
    utilisation: f64,
    density: f64,
    rate: f64,
    /// Every section of every task, summed: at least any blocking term of km, bpi, pcp, srp
    /// and msrp (each counts at most one section per lower task).
    sections: f64,
    /// The smallest `D` and the smallest `min(D, T)`.
    deadline_min: f64,
    window_min: f64,
    /// A resource under bp (unbounded blocking) or rcs (restarts) is in use.
    unbounded: bool,
}

impl Default for Sums {
    fn default() -> Sums {
        Sums {
            tasks: 0.0,
            wcet: 0.0,
            wcet_max: 0.0,
            utilisation: 0.0,
            density: 0.0,
            rate: 0.0,
            sections: 0.0,
            deadline_min: f64::INFINITY,
            window_min: f64::INFINITY,
            unbounded: false,
        }
    }
}

/// How far from its bound a quick decision must be, relative, to stand for the exact test
/// (whose sums are taken in another order, or in integers).
const MARGIN: f64 = 1e-6;

/// How many priority bands the response-time bound is taken over, at most (see
/// [`Sums::decide`]). (A few only under test, so that the comparison with the reference covers
/// bands of several priorities.)
const MAX_LEVELS: usize = if cfg!(test) { 3 } else { 64 };

impl Sums {
    fn of(ts: &TaskSet, t: &Task) -> Sums {
        let window = secs(t.deadline.min(t.period));
        Sums {
            tasks: 1.0,
            wcet: secs(t.wcet),
            wcet_max: secs(t.wcet),
            utilisation: t.utilisation(),
            density: secs(t.wcet) / window,
            rate: 1.0 / secs(t.period),
            sections: t.sections.iter().map(|s| secs(s.duration)).sum(),
            deadline_min: secs(t.deadline),
            window_min: window,
            unbounded: t
                .sections
                .iter()
                .any(|s| matches!(ts.resources[s.resource].protocol, super::Protocol::Bp | super::Protocol::Rcs)),
        }
    }

    fn with(&self, o: &Sums) -> Sums {
        Sums {
            tasks: self.tasks + o.tasks,
            wcet: self.wcet + o.wcet,
            wcet_max: self.wcet_max.max(o.wcet_max),
            utilisation: self.utilisation + o.utilisation,
            density: self.density + o.density,
            rate: self.rate + o.rate,
            sections: self.sections + o.sections,
            deadline_min: self.deadline_min.min(o.deadline_min),
            window_min: self.window_min.min(o.window_min),
            unbounded: self.unbounded || o.unbounded,
        }
    }

    /// What `test` answers for these tasks, when the sums settle it.
    ///
    /// - Utilisation above 1 fails every test: under EDF the demand of a long window exceeds
    ///   it; under fixed priority the lowest task with work would need `R ≥ C + R(U − U_i)`,
    ///   impossible within its period, and a response beyond the period is not `Bounded`.
    /// - EDF passes when `Σ C/min(D, T) + Σ sections / min D ≤ 1`: the test with inheritance
    ///   blocking is at most that (its demand per unit of time is at most `Σ C/min(D, T)`, its
    ///   blocking at most every section once, over the shortest deadline), unless bp (no
    ///   bound) or rcs (restarts) is in use.
    /// - Response times pass when, for each priority band (a priority, or with more than
    ///   [`MAX_LEVELS`] priorities in the task set a range of them),
    ///   `X = (max C + Σ sections + Σ C)/(1 − U)` over the tasks of that band or higher is
    ///   within the `min(D, T)` of every task of the band: each such `R_i` is at most `X`
    ///   (`X ≥ C_i + B_i + Σ (X/T_j + 1) C_j`, the band's own tasks counted as interference
    ///   too), so none exceeds its deadline or its period, and the recurrence, which raises
    ///   some `⌈R/T_j⌉` at each step, stops within `X Σ 1/T + n + 1` steps, checked to be well
    ///   under [`TaskSet::MAX_RTA_ITERATIONS`]. `levels` are the CPU's sums per band, `added`
    ///   the task being tried and its band.
    fn decide(&self, test: CpuTest, levels: &BTreeMap<usize, Sums>, added: (usize, &Sums)) -> Option<bool> {
        if self.utilisation > 1.0 + MARGIN {
            return Some(false);
        }
        if self.unbounded {
            return None;
        }
        let pass = match test {
            CpuTest::Edf => self.density + self.sections / self.deadline_min <= 1.0 - MARGIN,
            CpuTest::ResponseTime => {
                if self.utilisation >= 1.0 - MARGIN {
                    return None;
                }
                // From the most urgent level down, each level with everything above it (the
                // interference of a task is every task of its priority or higher).
                let (p, new) = added;
                let mut above = Sums::default();
                let mut pending = Some(new);
                for (&q, level) in levels.iter().rev() {
                    if let Some(n) = pending.filter(|_| p > q) {
                        above = above.with(n);
                        if !above.bounds_responses(self.sections, n.window_min) {
                            return None;
                        }
                        pending = None;
                    }
                    let mut here = *level;
                    if let Some(n) = pending.filter(|_| p == q) {
                        here = here.with(n);
                        pending = None;
                    }
                    above = above.with(&here);
                    if !above.bounds_responses(self.sections, here.window_min) {
                        return None;
                    }
                }
                if let Some(n) = pending {
                    above = above.with(n);
                    if !above.bounds_responses(self.sections, n.window_min) {
                        return None;
                    }
                }
                true
            }
            CpuTest::LiuLayland => false,
        };
        pass.then_some(true)
    }

    /// Whether, for tasks interfered with by at most the tasks summed in `self` and blocked
    /// by at most `blocking`, `X = (max C + blocking + Σ C)/(1 − U)` is within `window` and
    /// the recurrence stops well within [`TaskSet::MAX_RTA_ITERATIONS`] (see [`Sums::decide`]).
    fn bounds_responses(&self, blocking: f64, window: f64) -> bool {
        let x = (self.wcet_max + blocking + self.wcet) / (1.0 - self.utilisation);
        self.utilisation < 1.0 - MARGIN
            && x * (1.0 + MARGIN) + 1e-9 <= window
            && x * self.rate + self.tasks + 2.0 <= 0.9 * f64::from(TaskSet::MAX_RTA_ITERATIONS)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::{Protocol, Resource};
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn set(tasks: &[(&str, u64, u64)]) -> TaskSet {
        let mut ts = TaskSet::new();
        for &(name, c, t) in tasks {
            ts.add_task(Task::new(name, ms(c), ms(t)));
        }
        ts
    }

    #[test]
    fn first_and_worst_fit_place_by_hand() {
        // Utilisations 0.5, 0.4, 0.3, 0.2 on two CPUs under EDF.
        let ts = set(&[("a", 5, 10), ("b", 4, 10), ("c", 3, 10), ("d", 2, 10)]);
        // FFD: a -> 0 (0.5), b -> 0 (0.9), c -> 1 (0 would be 1.2), d -> 1 (0 would be 1.1).
        let p = ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap();
        assert_eq!(p.cpu_of, [0, 0, 1, 1]);
        // WFD: a -> 0, b -> 1 (0.4 < 0.5), c -> 1 (0.4 < 0.5: 0.7), d -> 0 (0.5 < 0.7: 0.7).
        let p = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap();
        assert_eq!(p.cpu_of, [0, 1, 1, 0]);
    }

    #[test]
    fn worst_fit_succeeds_where_first_fit_fails() {
        let ts = set(&[("a", 4, 10), ("b", 4, 10), ("c", 3, 10), ("d", 3, 10), ("e", 3, 10), ("f", 3, 10)]);
        assert_eq!(
            ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf),
            Err(PartitionError::DoesNotFit { task: "f".into(), bound_to: None })
        );
        let p = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap();
        assert_eq!(p.cpu_of, [0, 1, 0, 1, 0, 1]);
        // Each CPU is loaded exactly to 1, which EDF accepts.
        for cpu in 0..2 {
            assert!(CpuTest::Edf.passes(&p.subset(&ts, cpu)));
        }
        // Three CPUs: first fit has room.
        let p = ts.partition(3, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap();
        assert_eq!(p.cpu_of, [0, 0, 1, 1, 1, 2]);
    }

    #[test]
    fn the_sort_key_decides_the_order() {
        let mut ts = TaskSet::new();
        // x: u 0.2, density 0.5; y: u 0.4, density 0.4.
        ts.add_task(Task::new("x", ms(2), ms(10)).deadline(ms(4)));
        ts.add_task(Task::new("y", ms(4), ms(10)));
        let by_u = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap();
        assert_eq!(by_u.cpu_of, [1, 0]);
        let by_density = ts.partition(2, Fit::Worst, SortKey::Density, CpuTest::Edf).unwrap();
        assert_eq!(by_density.cpu_of, [0, 1]);
        // Both on one CPU under EDF: by deadline, 2/4 = 0.5, then 0.5 + 4/10 = 0.9.
        assert_eq!(ts.partition(1, Fit::First, SortKey::Density, CpuTest::Edf).unwrap().cpu_of, [0, 0]);
    }

    #[test]
    fn the_test_decides_what_fits() {
        let mut ts = TaskSet::new();
        ts.add_task(Task::new("t1", ms(2), ms(4)).priority(2));
        ts.add_task(Task::new("t2", ms(3), ms(6)).priority(1));
        // U = 1: EDF takes both on one CPU; RTA gives t2 R = 3 + 2 * 2 = 7 > 6.
        assert_eq!(ts.partition(1, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap().cpu_of, [0, 0]);
        assert_eq!(
            ts.partition(1, Fit::First, SortKey::Utilisation, CpuTest::ResponseTime),
            Err(PartitionError::DoesNotFit { task: "t2".into(), bound_to: None })
        );
        assert_eq!(ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::ResponseTime).unwrap().cpu_of, [0, 1]);
        // Liu and Layland, two tasks: bound 0.828; 0.5 + 0.5 exceeds it.
        assert_eq!(ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::LiuLayland).unwrap().cpu_of, [0, 1]);
    }

    #[test]
    fn tasks_sharing_a_resource_stay_together() {
        let mut ts = TaskSet::new();
        let r = ts.add_resource(Resource::new("bus", Protocol::Srp));
        ts.add_task(Task::new("a", ms(4), ms(10)).section(r, ms(1)));
        ts.add_task(Task::new("b", ms(3), ms(10)));
        ts.add_task(Task::new("c", ms(2), ms(10)).section(r, ms(1)));
        // WFD alone would put c on CPU 1 (0.3 < 0.4); the bus keeps it with a.
        let p = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap();
        assert_eq!(p.cpu_of, [0, 1, 0]);
        // Grow c so that a and c no longer fit together: it may not go elsewhere.
        ts.tasks[2].wcet = ms(7);
        assert_eq!(
            ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::Edf),
            Err(PartitionError::DoesNotFit { task: "a".into(), bound_to: Some(0) })
        );
    }

    #[test]
    fn a_global_resource_keeps_its_users_on_one_cpu_so_no_request_spins() {
        // Worst fit alone would split a and c; under MSRP that would add a spin of c's 3 ms
        // section to a's request (and a's 3 ms to c's), which the placement test does not see.
        // Like any resource, the msrp one binds c to a's CPU, so the spins are zero.
        let mut ts = TaskSet::new();
        let g = ts.add_resource(Resource::new("g", Protocol::Msrp));
        ts.add_task(Task::new("a", ms(4), ms(10)).priority(3).section(g, ms(3)));
        ts.add_task(Task::new("b", ms(3), ms(10)).priority(2));
        ts.add_task(Task::new("c", ms(3), ms(20)).priority(1).section(g, ms(3)));
        let p = ts.partition(2, Fit::Worst, SortKey::Utilisation, CpuTest::ResponseTime).unwrap();
        assert_eq!(p.cpu_of, [0, 1, 0]);
        let cpus = [p.subset(&ts, 0), p.subset(&ts, 1)];
        assert_eq!(cpus[0].msrp_spin(g, &[&cpus[1]]), Duration::ZERO);
        for (inflated, verdict) in super::super::msrp_analyze(&cpus) {
            assert!(verdict.schedulable, "{inflated:?}");
        }
    }

    #[test]
    fn a_task_between_two_placed_resources_is_refused() {
        let mut ts = TaskSet::new();
        let r = ts.add_resource(Resource::new("r", Protocol::Pcp));
        let s = ts.add_resource(Resource::new("s", Protocol::Pcp));
        ts.add_task(Task::new("a", ms(6), ms(10)).section(r, ms(1)));
        ts.add_task(Task::new("b", ms(5), ms(10)).section(s, ms(1)));
        ts.add_task(Task::new("c", ms(2), ms(10)).section(r, ms(1)).section(s, ms(1)));
        let e = ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap_err();
        assert_eq!(e, PartitionError::SplitResources { task: "c".into(), cpus: (0, 1) });
        assert!(e.to_string().contains("\"c\""));
    }

    #[test]
    fn bad_input_is_an_error() {
        assert_eq!(set(&[]).partition(0, Fit::First, SortKey::Utilisation, CpuTest::Edf), Err(PartitionError::NoCpus));
        let ts = set(&[("z", 1, 0)]);
        let e = ts.partition(2, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap_err();
        assert!(matches!(e, PartitionError::Model(ModelError::ZeroPeriod { .. })), "{e}");
        let e = TaskSet::from_specs(&[ThreadSpec::new("s").sporadic(Duration::ZERO)]).unwrap_err();
        assert_eq!(e.to_string(), "thread \"s\" is neither periodic nor sporadic, so it is not a task to place");
        let e = set(&[("big", 11, 10)]).partition(4, Fit::Worst, SortKey::Utilisation, CpuTest::Edf).unwrap_err();
        assert_eq!(e.to_string(), "task \"big\" does not fit on any CPU");
    }

    #[test]
    fn specs_round_trip_through_a_partition() {
        let mut specs = vec![
            ThreadSpec::new("p").periodic(ms(10)).wcet(ms(6)),
            ThreadSpec::new("s").sporadic(ms(10)).wcet(ms(6)).deadline(ms(8)),
        ];
        let ts = TaskSet::from_specs(&specs).unwrap();
        assert_eq!((ts.tasks[1].period, ts.tasks[1].deadline), (ms(10), ms(8)));
        let p = ts.partition(2, Fit::First, SortKey::Density, CpuTest::Edf).unwrap();
        // s first (density 0.75 > 0.6): CPU 0; p does not fit with it.
        assert_eq!(p.cpu_of, [1, 0]);
        p.apply(&mut specs);
        assert_eq!((specs[0].cpu_index(), specs[1].cpu_index()), (1, 0));
        assert_eq!(specs[1].relative_deadline(), Some(ms(8)));
    }
}
