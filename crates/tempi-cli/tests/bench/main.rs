//! `tempi bench` and `tempi compare`.

#[path = "../common/mod.rs"]
mod common;

mod bench_cli;
mod bench_latency_cli;
mod bench_preempt_cli;
mod compare_cli;
