//! The command line's commands: simulate and run, inputs and their limits, the registered
//! policies, ports, global scheduling, experiments and admission.

#[path = "../common/mod.rs"]
mod common;

mod admission_cli;
mod cli;
mod csv_cli;
mod experiment_cli;
mod global_cli;
mod inputs_cli;
mod ports_real_time;
mod registered_policies;
mod size_limits_cli;
