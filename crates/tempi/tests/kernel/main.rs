//! The kernel: threads, jobs, time, preemption, unwinding, teardown, direct switches,
//! OS-backed threads, kills, the exporters and backtraces taken inside threads.

#[path = "../common/mod.rs"]
mod common;

mod backtraces;
mod direct_switch;
mod direct_switch_properties;
mod export;
mod job_ends;
mod kernel_backlog;
mod kernel_jobs;
mod kernel_pending_interrupt;
mod kernel_preemption_flag;
mod kernel_real_time;
mod kernel_threads;
mod kernel_time;
mod kernel_unwinding;
mod kill_properties;
mod os_backed;
mod release_stamps;
mod run_without_horizon;
mod teardown;
mod thread_not_started;
