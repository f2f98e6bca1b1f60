//! The scheduler registry: policies by name, for the command line, scenario files and the
//! application ([`by_name`], [`register`]), and the run parameters a policy built by name is
//! given ([`SchedParams`]).

use std::sync::{Arc, LazyLock};
use std::time::Duration;

use super::{Collator, Edf, Fifo, FixedPriority, GlobalEdf, GlobalFp, RoundRobin, Scheduler};
use crate::policy::{Registry, RegistryError};

/// Builds a fresh scheduler: the runtime calls it once per CPU.
///
/// ```
/// let f: tempi::policy::sched::SchedulerFactory = std::sync::Arc::new(|| Box::new(tempi::policy::sched::Fifo::new()));
/// assert_eq!(f().name(), "fifo");
/// ```
pub type SchedulerFactory = Arc<dyn Fn() -> Box<dyn Scheduler> + Send + Sync>;

/// The built-in policies' registry names. [`names`] also lists those the application
/// registered.
///
/// ```
/// assert!(tempi::policy::sched::NAMES.contains(&"edf"));
/// ```
pub const NAMES: &[&str] = &["fp", "edf", "fifo", "rr", "collator", "global-edf", "global-fp"];

/// What a run tells a policy built by name ([`by_name`]): the round-robin quantum, if one
/// was given, and the kernel's context-switch cost ([`crate::Costs::context_switch`]), which
/// a policy that makes switches of its own must keep room for (the `collator` does).
///
/// `None` and `Some(quantum)` convert into it, with no switch cost, so
/// `by_name("rr", Some(q))` reads as before.
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::SchedParams;
/// let p = SchedParams::default().quantum(Duration::from_millis(2)).switch_cost(Duration::from_micros(50));
/// assert_eq!((p.quantum, p.switch_cost), (Some(Duration::from_millis(2)), Duration::from_micros(50)));
/// assert_eq!(SchedParams::from(None), SchedParams::default());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchedParams {
    /// The time slice of a time-sliced policy (`rr`), if the run gives one.
    pub quantum: Option<Duration>,
    /// What the kernel charges a thread dispatched after another ran on its CPU: the run's
    /// [`crate::Costs::context_switch`] (zero unless the run sets it).
    pub switch_cost: Duration,
    /// What a policy that reserves CPU time per job (the collator) reserves on top of each
    /// job's WCET: the run's [`crate::Config::job_overhead`] (zero unless the run sets it).
    pub job_overhead: Duration,
}

impl SchedParams {
    /// With time slice `quantum`.
    ///
    /// ```
    /// let p = tempi::policy::sched::SchedParams::default().quantum(std::time::Duration::from_millis(1));
    /// assert!(p.quantum.is_some());
    /// ```
    pub fn quantum(mut self, quantum: Duration) -> SchedParams {
        self.quantum = Some(quantum);
        self
    }

    /// With context-switch cost `cost`.
    ///
    /// ```
    /// let p = tempi::policy::sched::SchedParams::default().switch_cost(std::time::Duration::from_micros(5));
    /// assert_eq!(p.switch_cost, std::time::Duration::from_micros(5));
    /// ```
    pub fn switch_cost(mut self, cost: Duration) -> SchedParams {
        self.switch_cost = cost;
        self
    }

    /// With per-job overhead `overhead`.
    ///
    /// ```
    /// let p = tempi::policy::sched::SchedParams::default().job_overhead(std::time::Duration::from_micros(50));
    /// assert_eq!(p.job_overhead, std::time::Duration::from_micros(50));
    /// ```
    pub fn job_overhead(mut self, overhead: Duration) -> SchedParams {
        self.job_overhead = overhead;
        self
    }
}

impl From<Option<Duration>> for SchedParams {
    fn from(quantum: Option<Duration>) -> SchedParams {
        SchedParams { quantum, ..SchedParams::default() }
    }
}

/// Turns the scheduling parameters of a run ([`SchedParams`]) into a [`SchedulerFactory`],
/// or `None` when they do not suit the policy (round robin without a positive quantum).
///
/// ```
/// use std::sync::Arc;
/// use tempi::policy::sched::{Edf, SchedParams, Scheduler, SchedulerFactory, SchedulerMaker};
/// let make: SchedulerMaker = Arc::new(|_params| Some(Arc::new(|| Box::new(Edf::new()) as Box<dyn Scheduler>) as SchedulerFactory));
/// assert_eq!(make(SchedParams::default()).unwrap()().name(), "edf");
/// ```
pub type SchedulerMaker = Arc<dyn Fn(SchedParams) -> Option<SchedulerFactory> + Send + Sync>;

/// The process-wide scheduler registry: the built-ins ([`NAMES`], with the aliases
/// `fixed-priority`, `rm` and `dm` for `fp`, `round-robin` for `rr`, `gedf` for `global-edf`
/// and `gfp` for `global-fp`) and what the
/// application added with [`register`], [`register_with_quantum`] or [`register_with_params`].
///
/// ```
/// let fp = tempi::policy::sched::registry().entry("rm").unwrap();
/// assert_eq!(fp.name, "fp");
/// ```
pub fn registry() -> &'static Registry<SchedulerMaker> {
    static REGISTRY: LazyLock<Registry<SchedulerMaker>> = LazyLock::new(|| {
        let plain = |make: fn() -> Box<dyn Scheduler>| -> SchedulerMaker {
            Arc::new(move |_| Some(Arc::new(make) as SchedulerFactory))
        };
        let round_robin: SchedulerMaker = Arc::new(|params: SchedParams| {
            let q = params.quantum.filter(|q| !q.is_zero())?;
            Some(Arc::new(move || Box::new(RoundRobin::new(q)) as Box<dyn Scheduler>) as SchedulerFactory)
        });
        // The collator keeps slack back for the switches it adds, and reserves each
        // guaranteed job its WCET and the per-job overhead: it must know what they cost.
        let collator: SchedulerMaker = Arc::new(|params: SchedParams| {
            let (cost, overhead) = (params.switch_cost, params.job_overhead);
            Some(Arc::new(move || {
                Box::new(Collator::standard().with_switch_cost(cost).with_job_overhead(overhead)) as Box<dyn Scheduler>
            }) as SchedulerFactory)
        });
        Registry::new(
            "scheduler",
            &[
                ("fp", &["fixed-priority", "rm", "dm"], plain(|| Box::new(FixedPriority::new()))),
                ("edf", &[], plain(|| Box::new(Edf::new()))),
                ("fifo", &[], plain(|| Box::new(Fifo::new()))),
                ("rr", &["round-robin"], round_robin),
                ("collator", &[], collator),
                ("global-edf", &["gedf"], plain(|| Box::new(GlobalEdf::new()))),
                ("global-fp", &["gfp"], plain(|| Box::new(GlobalFp::new()))),
            ],
        )
    });
    &REGISTRY
}

/// Make a policy available by `name` to every runtime of the process (to [`by_name`], hence
/// to scenario files). `factory` builds one instance per CPU. Fails if the name is taken or
/// invalid ([`RegistryError`]).
///
/// ```
/// use tempi::policy::sched::{by_name, register, FixedPriority};
/// register("my-fp", || Box::new(FixedPriority::new())).unwrap();
/// assert_eq!(by_name("my-fp", None).unwrap()().name(), "fp");
/// assert!(register("edf", || Box::new(FixedPriority::new())).is_err());
/// ```
pub fn register(
    name: &str,
    factory: impl Fn() -> Box<dyn Scheduler> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    let factory: SchedulerFactory = Arc::new(factory);
    registry().register(name, Arc::new(move |_| Some(factory.clone())))
}

/// [`register`] for a policy that takes the run's quantum: `make` is given it (or `None`) and
/// answers a factory, or `None` to refuse the parameters.
///
/// ```
/// use std::sync::Arc;
/// use tempi::policy::sched::{by_name, register_with_quantum, RoundRobin, Scheduler, SchedulerFactory};
/// register_with_quantum("slow-rr", |q| {
///     let q = q? * 10;
///     Some(Arc::new(move || Box::new(RoundRobin::new(q)) as Box<dyn Scheduler>) as SchedulerFactory)
/// })
/// .unwrap();
/// assert!(by_name("slow-rr", None).is_none());
/// assert!(by_name("slow-rr", Some(std::time::Duration::from_millis(1))).is_some());
/// ```
pub fn register_with_quantum(
    name: &str,
    make: impl Fn(Option<Duration>) -> Option<SchedulerFactory> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    registry().register(name, Arc::new(move |params: SchedParams| make(params.quantum)))
}

/// [`register`] for a policy that takes every parameter of the run ([`SchedParams`]: the
/// quantum and the context-switch cost): `make` answers a factory, or `None` to refuse them.
///
/// ```
/// use std::sync::Arc;
/// use std::time::Duration;
/// use tempi::policy::sched::{by_name, register_with_params, Collator, SchedParams, Scheduler, SchedulerFactory};
/// // A collator that keeps twice the switch cost back (a timer latency as large again).
/// register_with_params("careful-collator", |p: SchedParams| {
///     let cost = p.switch_cost * 2;
///     Some(Arc::new(move || Box::new(Collator::standard().with_switch_cost(cost)) as Box<dyn Scheduler>) as SchedulerFactory)
/// })
/// .unwrap();
/// let make = by_name("careful-collator", SchedParams::default().switch_cost(Duration::from_micros(5))).unwrap();
/// assert_eq!(make().name(), "collator");
/// ```
pub fn register_with_params(
    name: &str,
    make: impl Fn(SchedParams) -> Option<SchedulerFactory> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    registry().register(name, Arc::new(make))
}

/// Every registered policy's name: the built-ins ([`NAMES`]) first, then the application's in
/// registration order.
///
/// ```
/// assert_eq!(tempi::policy::sched::names()[..tempi::policy::sched::NAMES.len()], tempi::policy::sched::NAMES[..]);
/// ```
pub fn names() -> Vec<String> {
    registry().names()
}

/// A registered policy by name: a built-in (`fp` (also `fixed-priority`, `rm`, `dm`), `edf`,
/// `fifo`, `rr` (also `round-robin`; it needs a quantum), `collator` ([`Collator::standard`]
/// told the switch cost, [`Collator::with_switch_cost`]), `global-edf` (also `gedf`) and
/// `global-fp` (also `gfp`), virtual time only) or one the application registered, built
/// with the run's parameters: a [`SchedParams`], or just the quantum (`None`, `Some(q)`).
/// A run that charges context switches ([`crate::Costs::context_switch`]) passes that cost
/// as [`SchedParams::switch_cost`], or the collator's guarantee does not cover them.
/// Returns `None` for an unknown name or parameters the policy refuses (a missing quantum).
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::{by_name, SchedParams};
/// assert_eq!(by_name("edf", None).unwrap()().name(), "edf");
/// assert!(by_name("rr", Some(Duration::from_millis(1))).is_some());
/// assert!(by_name("rr", None).is_none());
/// assert!(by_name("lottery", None).is_none());
/// assert!(by_name("collator", SchedParams::default().switch_cost(Duration::from_micros(50))).is_some());
/// ```
pub fn by_name(name: &str, params: impl Into<SchedParams>) -> Option<SchedulerFactory> {
    registry().get(name)?(params.into())
}
