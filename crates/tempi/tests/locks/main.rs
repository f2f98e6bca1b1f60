//! Locks, condition variables and semaphores: protocols, waits, restarts, errors and misuse,
//! trace order, and the multiprocessor resource protocol (MSRP).

#[path = "../common/mod.rs"]
mod common;

mod condvar_properties;
mod lock_errors;
mod lock_foreign;
mod lock_heir_rank;
mod lock_misuse;
mod lock_properties;
mod lock_protocols;
mod lock_restart_on_unlock;
mod lock_restart_procure;
mod lock_trace_order;
mod lock_waits;
mod msrp_real_time;
mod msrp_virtual;
mod sem_unit_after_abort;
