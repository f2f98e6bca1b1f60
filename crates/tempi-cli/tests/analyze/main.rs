//! `tempi analyze`: verdicts, partitioning, and the analyses checked against simulation.

#[path = "../common/mod.rs"]
mod common;

mod analyze_ceilings_cli;
mod analyze_criticality_cli;
mod analyze_crosscheck;
mod analyze_partition_cli;
mod analyze_verdict_cli;
