//! The analyses checked against the simulator (fixed priority, EDF, RCS, MSRP, global)
//! and partitioning.

#[path = "../common/mod.rs"]
mod common;

mod analysis_crosscheck;
mod edf_crosscheck;
mod edf_inheritance_crosscheck;
mod fp_rcs_crosscheck;
mod global_analysis;
mod msrp_crosscheck;
mod partition_properties;
