//! Budget policies: what an execution-time overrun does to the members of a thread set.
//!
//! The kernel measures, detects and enforces; a [`BudgetAction`] decides. When a set's budget
//! runs out the kernel asks the action for an [`Enforcement`] and carries it out on every
//! member; when the budget is replenished it lifts whatever enforcement is in force and tells
//! the action. Built-in actions, one per file: [`Notify`], [`Demote`], [`Suspend`], [`Kill`]. The
//! [`registry`] holds them by name, with any action the application adds with [`register`].
//!
//! An action that suspends a set on its third overrun only:
//!
//! ```
//! use tempi::policy::budget::{BudgetAction, Enforcement};
//! use tempi::BudgetEvent;
//!
//! #[derive(Default)]
//! struct ThreeStrikes { overruns: u32 }
//!
//! impl BudgetAction for ThreeStrikes {
//!     fn name(&self) -> &str { "three-strikes" }
//!     fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
//!         self.overruns += 1;
//!         if self.overruns >= 3 { Enforcement::Suspend } else { Enforcement::Nothing }
//!     }
//! }
//! # let _ = tempi::Budget::new(std::time::Duration::from_millis(1)).action(ThreeStrikes::default());
//! ```

mod demote;
mod kill;
mod notify;
mod suspend;

pub use demote::Demote;
pub use kill::Kill;
pub use notify::Notify;
pub use suspend::Suspend;

use std::sync::{Arc, LazyLock};

use crate::plain::BudgetEvent;
use crate::policy::{Registry, RegistryError};

/// What the kernel does to the members of a set whose budget ran out.
///
/// ```
/// assert_ne!(tempi::policy::budget::Enforcement::Suspend, tempi::policy::budget::Enforcement::Kill);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Enforcement {
    /// Nothing: the members run on (the handler has been told).
    #[default]
    Nothing,
    /// The members drop to background urgency, [`Urgency::DEMOTED`] (below every thread not
    /// demoted), until the budget is replenished.
    ///
    /// [`Urgency::DEMOTED`]: crate::policy::sched::Urgency::DEMOTED
    Demote,
    /// The members stop running until the budget is replenished: a running member is taken
    /// off its CPU at once (in real time: at its next preemption point), ready and waking
    /// members are held.
    Suspend,
    /// The members are ended at their next task boundary (their current or next runtime
    /// call), with outcome [`crate::ThreadOutcome::Killed`]. A running member that holds no
    /// lock ends at the instant of the exhaustion, before any other thread runs then (in
    /// virtual time exactly; in real time at its next runtime call); a job so ended at its
    /// deadline is no miss.
    Kill,
}

/// Decides what an overrun does. Called by the kernel, inside the runtime, at the instant the
/// budget runs out (virtual time: exactly; real time: within the timer latency, or at the
/// runaway's next preemption point).
pub trait BudgetAction: Send {
    /// The action's name, e.g. `"suspend"`.
    fn name(&self) -> &str;
    /// The budget ran out.
    fn on_exhausted(&mut self, event: &BudgetEvent) -> Enforcement;
    /// The budget was replenished; the kernel has already lifted the enforcement.
    fn on_replenished(&mut self, _event: &BudgetEvent) {}
}

/// Builds a budget action: called once per budget created with the action.
///
/// ```
/// let make: tempi::policy::budget::BudgetActionFactory = std::sync::Arc::new(|| Box::new(tempi::policy::budget::Kill));
/// assert_eq!(make().name(), "kill");
/// ```
pub type BudgetActionFactory = Arc<dyn Fn() -> Box<dyn BudgetAction> + Send + Sync>;

/// The process-wide budget action registry: the built-ins `notify`, `demote`, `suspend` and
/// `kill`, and what the application added with [`register`].
///
/// ```
/// assert_eq!(tempi::policy::budget::registry().names()[..4], ["notify", "demote", "suspend", "kill"]);
/// ```
pub fn registry() -> &'static Registry<BudgetActionFactory> {
    static REGISTRY: LazyLock<Registry<BudgetActionFactory>> = LazyLock::new(|| {
        let f = |make: fn() -> Box<dyn BudgetAction>| -> BudgetActionFactory { Arc::new(make) };
        Registry::new(
            "budget action",
            &[
                ("notify", &[], f(|| Box::new(Notify))),
                ("demote", &[], f(|| Box::new(Demote))),
                ("suspend", &[], f(|| Box::new(Suspend))),
                ("kill", &[], f(|| Box::new(Kill))),
            ],
        )
    });
    &REGISTRY
}

/// Make a budget action available by `name` to every runtime of the process (to
/// [`by_name`]). Fails if the name is taken or invalid ([`RegistryError`]).
///
/// ```
/// use tempi::policy::budget::{register, BudgetAction, Enforcement};
/// use tempi::BudgetEvent;
/// struct AlwaysSuspend;
/// impl BudgetAction for AlwaysSuspend {
///     fn name(&self) -> &str { "always-suspend" }
///     fn on_exhausted(&mut self, _: &BudgetEvent) -> Enforcement { Enforcement::Suspend }
/// }
/// register("always-suspend", || Box::new(AlwaysSuspend)).unwrap();
/// assert!(register("kill", || Box::new(AlwaysSuspend)).is_err());
/// ```
pub fn register(
    name: &str,
    factory: impl Fn() -> Box<dyn BudgetAction> + Send + Sync + 'static,
) -> Result<(), RegistryError> {
    registry().register(name, Arc::new(factory))
}

/// Every registered action's name, the built-ins first.
///
/// ```
/// assert!(tempi::policy::budget::names().contains(&"suspend".to_string()));
/// ```
pub fn names() -> Vec<String> {
    registry().names()
}

/// A fresh action registered as `name`: a built-in (`notify`, `demote`, `suspend`, `kill`)
/// or one the application registered.
///
/// ```
/// assert_eq!(tempi::policy::budget::by_name("suspend").unwrap().name(), "suspend");
/// assert!(tempi::policy::budget::by_name("explode").is_none());
/// ```
pub fn by_name(name: &str) -> Option<Box<dyn BudgetAction>> {
    registry().get(name).map(|make| make())
}
