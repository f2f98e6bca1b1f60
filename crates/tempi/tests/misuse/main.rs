//! Misuse: foreign ids, payloads, timers and Spring objects, panics, size limits and stack
//! overflows.

#[path = "../common/mod.rs"]
mod common;

mod foreign_ids;
mod foreign_payloads;
mod foreign_spring;
mod foreign_timers;
mod handler_panics;
mod panic_sources;
mod queue_policy_panics;
mod size_limits;
mod stack_overflow;
