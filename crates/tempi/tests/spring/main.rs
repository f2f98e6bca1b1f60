//! Spring: planned execution, dependents, inputs, job overhead and real-time runs.

#[path = "../common/mod.rs"]
mod common;

mod spring_dependents;
mod spring_exec;
mod spring_inputs;
mod spring_overhead;
mod spring_planner_os;
mod spring_real_time;
