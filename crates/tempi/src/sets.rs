//! Thread sets, execution-time budgets and servers, as the application describes them.
//!
//! Owns the public description types: [`SetId`], [`Budget`] with its [`Replenishment`] rule,
//! [`BudgetEvent`], [`SetSummary`] and [`Accounting`]. The kernel keeps the live state (group
//! clocks, armed execution-time events, enforcement) in `kernel::sets`.
//!
//! A thread belongs to at most one set (as in MaRTE OS and Ada 2005), so a context switch
//! charges at most one group clock and re-arms at most one group event.

use std::fmt;
use std::time::Duration;

use crate::plain::ThreadId;
pub use crate::plain::{BudgetEvent, BudgetEventKind, SetId};
use crate::policy::budget::{BudgetAction, Notify, Suspend};

/// Which execution-time clocks the kernel keeps. Exists to measure the cost of accounting;
/// budgets and execution-time timers need `Group` (thread timers need at least `Thread`).
///
/// ```
/// assert_eq!(tempi::Accounting::default(), tempi::Accounting::Group);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, PartialOrd, Ord)]
pub enum Accounting {
    /// No CPU time is charged at switches.
    Off,
    /// Per-thread clocks only.
    Thread,
    /// Per-thread and per-set clocks.
    #[default]
    Group,
}

/// How a budget gets its time back.
///
/// ```
/// use std::time::Duration;
/// let r = tempi::Replenishment::Periodic { period: Duration::from_millis(10) };
/// assert!(matches!(r, tempi::Replenishment::Periodic { .. }));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replenishment {
    /// Never by itself; only [`crate::Ctx::replenish_budget`] and
    /// [`crate::Ctx::add_budget`] change it (Ada's `Replenish` / `Add`).
    Manual,
    /// Refilled to the full amount every `period`, from the instant the budget was set
    /// (a deferrable server when combined with [`crate::policy::budget::Suspend`]).
    Periodic {
        /// Replenishment period.
        period: Duration,
    },
    /// Sporadic-server rule: time consumed during an active interval comes back `period`
    /// after the interval began.
    Sporadic {
        /// Replenishment period.
        period: Duration,
    },
    /// Constant bandwidth server (for EDF): the members are scheduled by the server's own
    /// deadline; an exhausted budget is refilled at once and the server deadline moves one
    /// `period` later, so the set never takes more than amount/period of the CPU.
    ConstantBandwidth {
        /// Server period.
        period: Duration,
    },
}

pub(crate) type BudgetHandler = Box<dyn FnMut(&BudgetEvent) + Send>;

/// An execution-time budget on a thread set: an amount of CPU time, a replenishment rule, an
/// action on exhaustion and an optional handler run inside the runtime.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Budget, Replenishment};
/// let ms = Duration::from_millis;
/// let b = Budget::new(ms(2))
///     .replenish(Replenishment::Periodic { period: ms(10) })
///     .action(tempi::policy::budget::Demote)
///     .on_event(|e| println!("{e:?}"));
/// assert_eq!(b.amount(), ms(2));
/// ```
pub struct Budget {
    pub(crate) amount: Duration,
    pub(crate) replenish: Replenishment,
    pub(crate) action: Box<dyn BudgetAction>,
    pub(crate) handler: Option<BudgetHandler>,
}

impl fmt::Debug for Budget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Budget")
            .field("amount", &self.amount)
            .field("replenish", &self.replenish)
            .field("action", &self.action.name())
            .finish_non_exhaustive()
    }
}

impl Budget {
    /// `amount` of CPU time, replenished only by hand, notify-only on exhaustion.
    ///
    /// ```
    /// let b = tempi::Budget::new(std::time::Duration::from_millis(1));
    /// assert_eq!(b.action_name(), "notify");
    /// ```
    pub fn new(amount: Duration) -> Budget {
        Budget { amount, replenish: Replenishment::Manual, action: Box::new(Notify), handler: None }
    }

    /// A deferrable server for fixed-priority scheduling: `capacity` every `period`, refilled
    /// to full at each period boundary, members suspended when it is used up. Give the
    /// members the server's priority.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tempi::Budget::deferrable_server(Duration::from_millis(2), Duration::from_millis(10));
    /// assert_eq!(b.action_name(), "suspend");
    /// ```
    pub fn deferrable_server(capacity: Duration, period: Duration) -> Budget {
        Budget::new(capacity).replenish(Replenishment::Periodic { period }).action(Suspend)
    }

    /// A sporadic server for fixed-priority scheduling: `capacity` every `period` under the
    /// sporadic-server replenishment rule, members suspended when it is used up.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tempi::Budget::sporadic_server(Duration::from_millis(2), Duration::from_millis(10));
    /// assert!(matches!(b.replenishment(), tempi::Replenishment::Sporadic { .. }));
    /// ```
    pub fn sporadic_server(capacity: Duration, period: Duration) -> Budget {
        Budget::new(capacity).replenish(Replenishment::Sporadic { period }).action(Suspend)
    }

    /// A constant bandwidth server for EDF: bandwidth `capacity`/`period`.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tempi::Budget::constant_bandwidth_server(Duration::from_millis(2), Duration::from_millis(10));
    /// assert!(matches!(b.replenishment(), tempi::Replenishment::ConstantBandwidth { .. }));
    /// ```
    pub fn constant_bandwidth_server(capacity: Duration, period: Duration) -> Budget {
        Budget::new(capacity).replenish(Replenishment::ConstantBandwidth { period })
    }

    /// The replenishment rule.
    ///
    /// ```
    /// use std::time::Duration;
    /// let b = tempi::Budget::new(Duration::from_millis(1)).replenish(tempi::Replenishment::Manual);
    /// # let _ = b;
    /// ```
    pub fn replenish(mut self, rule: Replenishment) -> Budget {
        self.replenish = rule;
        self
    }

    /// The action on exhaustion (default: notify only).
    ///
    /// ```
    /// let b = tempi::Budget::new(std::time::Duration::from_millis(1)).action(tempi::policy::budget::Kill);
    /// assert_eq!(b.action_name(), "kill");
    /// ```
    pub fn action(mut self, action: impl BudgetAction + 'static) -> Budget {
        self.action = Box::new(action);
        self
    }

    /// The action, boxed (e.g. from [`crate::policy::budget::by_name`]).
    ///
    /// ```
    /// let a = tempi::policy::budget::by_name("demote").unwrap();
    /// let b = tempi::Budget::new(std::time::Duration::from_millis(1)).boxed_action(a);
    /// assert_eq!(b.action_name(), "demote");
    /// ```
    pub fn boxed_action(mut self, action: Box<dyn BudgetAction>) -> Budget {
        self.action = action;
        self
    }

    /// A handler run inside the runtime at every exhaustion and replenishment.
    ///
    /// ```
    /// let b = tempi::Budget::new(std::time::Duration::from_millis(1)).on_event(|e| eprintln!("{e:?}"));
    /// # let _ = b;
    /// ```
    pub fn on_event(mut self, handler: impl FnMut(&BudgetEvent) + Send + 'static) -> Budget {
        self.handler = Some(Box::new(handler));
        self
    }

    /// The amount.
    ///
    /// ```
    /// assert_eq!(tempi::Budget::new(std::time::Duration::from_micros(5)).amount(), std::time::Duration::from_micros(5));
    /// ```
    pub fn amount(&self) -> Duration {
        self.amount
    }

    /// The replenishment rule.
    ///
    /// ```
    /// assert_eq!(tempi::Budget::new(std::time::Duration::ZERO).replenishment(), tempi::Replenishment::Manual);
    /// ```
    pub fn replenishment(&self) -> Replenishment {
        self.replenish
    }

    /// The action's name.
    ///
    /// ```
    /// assert_eq!(tempi::Budget::new(std::time::Duration::ZERO).action_name(), "notify");
    /// ```
    pub fn action_name(&self) -> &str {
        self.action.name()
    }

    pub(crate) fn validate(&self) -> Result<(), crate::Error> {
        let period = match self.replenish {
            Replenishment::Manual => None,
            Replenishment::Periodic { period }
            | Replenishment::Sporadic { period }
            | Replenishment::ConstantBandwidth { period } => Some(period),
        };
        if period.is_some_and(|p| p.is_zero()) {
            return Err(crate::Error::InvalidConfig("a budget's replenishment period must be positive".into()));
        }
        if matches!(self.replenish, Replenishment::ConstantBandwidth { .. }) && self.amount.is_zero() {
            return Err(crate::Error::InvalidConfig("a constant bandwidth server needs a positive capacity".into()));
        }
        Ok(())
    }
}

/// What a run reports about one thread set.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// rt.create_set("empty", 0).unwrap();
/// let out = rt.run().unwrap();
/// assert_eq!(out.sets[0].name, "empty");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetSummary {
    /// The set.
    pub id: SetId,
    /// Its name.
    pub name: String,
    /// Members when the run ended.
    pub members: Vec<ThreadId>,
    /// CPU time consumed by its members while they were members.
    pub cpu_time: Duration,
    /// Budget exhaustions.
    pub exhaustions: u64,
    /// Budget replenishments.
    pub replenishments: u64,
    /// Whether the set was destroyed during the run.
    pub destroyed: bool,
    /// Per thread that was ever a member, in the order they joined: the exhaustions at which
    /// it was running and its overruns (see [`MemberBudgetCounts`]).
    pub per_member: Vec<MemberBudgetCounts>,
    /// Exhaustions at which no member was running (the budget was cut while all were idle).
    pub exhaustions_idle: u64,
}

/// One member's share of its set's budget events.
///
/// - `exhaustions`: the set's exhaustions at which this thread was running, the member whose
///   consumption used the budget up (members running at once on several CPUs are each
///   counted);
/// - `overruns`: the exhaustions past which this thread went on running, each counted once:
///   it consumed CPU time while the set's budget was exhausted (with `notify` or `demote`,
///   or before a `kill` took effect);
/// - `overrun_time`: the CPU time it consumed while the budget was exhausted.
///
/// Counted by the kernel without allocating: a set has room for [`crate::Config::max_threads`]
/// members' counts; threads that join past that are summed in one entry whose `thread` is
/// `None`.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Budget, Runtime, ThreadSpec};
/// let ms = Duration::from_millis;
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("greedy"), move |cx| cx.work(ms(5))).unwrap();
/// let set = rt.create_set("box", 0).unwrap();
/// rt.add_to_set(set, t).unwrap();
/// rt.set_budget(set, Budget::new(ms(2))).unwrap(); // notify: it runs on
/// let out = rt.run().unwrap();
/// let m = out.sets[0].per_member[0];
/// assert_eq!((m.thread, m.exhaustions, m.overruns, m.overrun_time), (Some(t), 1, 1, ms(3)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberBudgetCounts {
    /// The member; `None` for the threads beyond the set's room for counts.
    pub thread: Option<ThreadId>,
    /// Exhaustions at which it was running.
    pub exhaustions: u64,
    /// Exhaustions past which it went on running.
    pub overruns: u64,
    /// CPU time it consumed while the budget was exhausted.
    pub overrun_time: Duration,
}
