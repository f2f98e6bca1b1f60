//! Policy names: every place a scheduling-policy, locking-protocol or budget-action name from a
//! scenario file or the command line is defaulted, looked up in the library, or listed in an
//! error.
//!
//! Owns the defaults (`"fp"`, `"bpi"`, `"notify"`), the lookups (`tempi::policy::*::by_name`)
//! and the lists of accepted names; the rest of the scenario code asks here instead of naming
//! a policy itself, so a library-side registry only has to change this file. It must not
//! validate anything else or phrase position information: callers place the messages
//! (`source.rs`). Locks are created by protocol name in `runtime.rs` through
//! [`tempi::sync::LockSpec`], which accepts exactly the names [`known_lock_protocol`] does.

use std::time::Duration;

use tempi::policy::sched::{by_name, names, PolicyClass, SchedParams, SchedulerFactory};

use super::PriorityRule;

/// The scheduling policy of a scenario whose `[runtime]` names none.
pub(super) const DEFAULT_POLICY: &str = "fp";

/// The locking protocol of a `[[resource]]` that names none.
pub(super) const DEFAULT_LOCK_PROTOCOL: &str = "bpi";

/// The scheduler factory for policy `name`, told the run's time slice, context-switch cost
/// and per-job overhead (the collator keeps slack back for the switches it adds, and
/// reserves the overhead per guaranteed job); `None` for an unknown name, or for a policy
/// that needs a time slice when `quantum` is `None`.
pub(super) fn scheduler(
    name: &str,
    quantum: Option<Duration>,
    switch_cost: Duration,
    job_overhead: Duration,
) -> Option<SchedulerFactory> {
    by_name(name, SchedParams::from(quantum).switch_cost(switch_cost).job_overhead(job_overhead))
}

/// Why a global policy (one ready set for every CPU, virtual time only) cannot run a
/// scenario that has resources, admission or thread groups, or `None` when `scheduler` is not
/// global or the scenario has none of them. `resource` names the first `[[resource]]` and its
/// line. Groups are refused because a plan places each thread on one CPU.
pub(super) fn global_refusal(
    policy: &str,
    scheduler: &SchedulerFactory,
    resource: Option<(&str, usize)>,
    admission: bool,
    groups: bool,
) -> Option<String> {
    if !scheduler().global() {
        return None;
    }
    let what = match (resource, admission, groups) {
        (Some((name, line)), _, _) => format!("[[resource]] \"{name}\" (line {line}): locks are"),
        (None, true, _) => "[admission] is".to_string(),
        (None, false, true) => "[[group]] (plans place each thread on one CPU) is".to_string(),
        (None, false, false) => return None,
    };
    Some(format!("policy \"{policy}\" is global (threads migrate between CPUs): {what} not supported under it"))
}

/// Whether policy `name` is EDF, one instance per CPU, as admission needs it
/// ([`PolicyClass::of`], the test [`tempi::admission::Admission::new`] applies).
pub(super) fn dispatches_edf(name: &str) -> bool {
    by_name(name, None).is_some_and(|make| PolicyClass::of(&*make()) == PolicyClass::Edf)
}

/// Whether `name` is a policy [`by_name`] knows (asking with a quantum, so `rr` counts).
pub(super) fn known_policy(name: &str) -> bool {
    by_name(name, Some(Duration::from_millis(1))).is_some()
}

pub(super) fn unknown_policy(name: &str) -> String {
    format!("unknown policy \"{name}\" (expected one of {})", names().join(", "))
}

/// The priority rule a policy name implies: "rm" and "dm" mean fixed priority with that
/// assignment.
pub(super) fn implied_priority_rule(policy: &str) -> Option<PriorityRule> {
    match policy {
        "rm" => Some(PriorityRule::RateMonotonic),
        "dm" => Some(PriorityRule::DeadlineMonotonic),
        _ => None,
    }
}

/// The budget action of a set that names none, and the only one a constant bandwidth server
/// supports.
pub(super) const DEFAULT_BUDGET_ACTION: &str = "notify";

/// The budget action of a deferrable or sporadic server (`server = "..."`).
pub(super) const SERVER_BUDGET_ACTION: &str = "suspend";

/// A budget action by registry name (a built-in or one the application registered).
pub(super) fn budget_action(name: &str) -> Option<Box<dyn tempi::policy::budget::BudgetAction>> {
    tempi::policy::budget::by_name(name)
}

pub(super) fn unknown_budget_action(name: &str) -> String {
    format!("unknown action \"{name}\" (expected one of {})", tempi::policy::budget::names().join(", "))
}

/// Whether `name` is a locking protocol the library knows.
pub(super) fn known_lock_protocol(name: &str) -> bool {
    tempi::policy::lock::by_name(name).is_some()
}

/// Whether locks under `protocol` are global (shared by the CPUs, as under `msrp`).
pub(super) fn lock_protocol_is_global(protocol: &str) -> bool {
    tempi::policy::lock::by_name(protocol).is_some_and(|p| p.global())
}

/// Whether locks under `protocol` need a ceiling priority (false for an unknown name).
pub(super) fn lock_protocol_needs_ceiling(protocol: &str) -> bool {
    tempi::policy::lock::by_name(protocol).is_some_and(|p| p.needs_ceiling())
}

pub(super) fn unknown_lock_protocol(name: &str) -> String {
    format!("unknown locking protocol \"{name}\" (expected one of {})", tempi::policy::lock::names().join(", "))
}
