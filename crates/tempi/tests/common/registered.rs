//! The registries' built-in scheduling policies and lock protocols, for property tests that
//! must hold for every one: they iterate the registries instead of lists of their own, so a
//! policy or protocol added to a registry is property-tested the day it is registered.
//!
//! Built-in entries only: the tests of one binary share one process, and some register names
//! of their own while others run, which would make the generated cases depend on timing.

use std::time::Duration;

use tempi::policy::lock::{self, LockPolicy};
use tempi::policy::sched::{self, SchedParams, Scheduler, SchedulerFactory};

/// The built-in policies, by registry name, for which `keep` holds of an instance built with
/// time slice `quantum` (so that round robin is built too).
pub fn schedulers(quantum: Duration, keep: impl Fn(&dyn Scheduler) -> bool) -> Vec<String> {
    sched::names()
        .into_iter()
        .filter(|name| sched::registry().entry(name).is_some_and(|e| e.built_in))
        .filter(|name| keep(&*scheduler(name, quantum)()))
        .collect()
}

/// The factory of policy `name`, built with time slice `quantum`.
pub fn scheduler(name: &str, quantum: Duration) -> SchedulerFactory {
    sched::by_name(name, SchedParams::default().quantum(quantum)).unwrap_or_else(|| panic!("policy {name}"))
}

/// The built-in lock protocols of one CPU (not global), by registry name, for which `keep`
/// holds.
pub fn lock_protocols(keep: impl Fn(&dyn LockPolicy) -> bool) -> Vec<String> {
    lock::names()
        .into_iter()
        .filter(|name| lock::registry().entry(name).is_some_and(|e| e.built_in))
        .filter(|name| lock::by_name(name).is_some_and(|p| !p.global() && keep(&*p)))
        .collect()
}
