//! Scheduling: the policies, meta-schedulers, the collator, the registry, global EDF, and
//! execution-time budgets (budget clocks, sets with budgets, servers).

#[path = "../common/mod.rs"]
mod common;

mod budget_clocks;
mod budget_members;
mod budget_properties;
mod budget_servers;
mod global_cpu_choice;
mod global_edf;
mod global_properties;
mod policy_registry;
mod sched_bad_pick;
mod sched_collator;
mod sched_criticality;
mod sched_decision_hooks;
mod sched_meta;
mod sched_meta_stack;
mod sched_meta_tame;
mod sched_policies;
mod sched_properties;
mod sched_thread_properties;
mod sched_yield_pick;
