//! Spring from the command line: plans, dependents, simulation and the vehicle example.

#[path = "../common/mod.rs"]
mod common;

mod plan_cli;
mod spring_dependents;
mod spring_simulate;
mod spring_vehicle;
