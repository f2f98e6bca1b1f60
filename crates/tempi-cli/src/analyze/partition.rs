//! `tempi analyze --partition ffd|wfd`: a placement of the scenario's analysed threads on its
//! CPUs, found by [`TaskSet::partition`](tempi::analysis::TaskSet::partition) under the policy's per-CPU test.
//!
//! Owns the refusals, the placement's text and JSON, and the scenario it yields. Must not
//! analyse the placed scenario (the parent module does, on what this returns).

use serde_json::json;
use tempi::analysis::{CpuTest, Fit, SortKey};

use tempi_cli::scenario::Scenario;

use super::model::{model, Notes};
use super::{kind, Kind, Placement};

/// Why [`partition`] gives no placement.
pub enum PartitionError {
    /// Nothing to partition, or no test to partition with: a request that cannot be met.
    Refused(String),
    /// Every placement the heuristic tried fails the policy's test: not shown schedulable.
    NotFound(String),
}

/// Place the scenario's analysed threads on its CPUs with `fit` (`ffd` or `wfd`; tasks by
/// density), each CPU judged by the policy's test (response-time analysis under fixed priority,
/// the EDF tests under EDF). Returns the scenario with those CPUs (a resource follows its
/// users) and the placement for the report, or why no placement was found: the first task, in
/// density order, that fits on no CPU.
pub fn partition(sc: &Scenario, fit: Fit) -> Result<(Scenario, Placement), PartitionError> {
    let test = match kind(sc) {
        Kind::FixedPriority => CpuTest::ResponseTime,
        Kind::Edf => CpuTest::Edf,
        Kind::Global { .. } => {
            return Err(PartitionError::Refused(format!(
                "{}: policy \"{}\" migrates threads between CPUs, so there is nothing to partition; choose a \
                 per-CPU policy with --policy edf or --policy fp",
                sc.file, sc.policy
            )))
        }
        Kind::Other => {
            return Err(PartitionError::Refused(format!(
                "{}: policy \"{}\": no per-CPU test to partition with (fixed priority or EDF only)",
                sc.file, sc.policy
            )))
        }
    };
    // Every analysed thread in one task set: the placement is what is being decided.
    let mut all = sc.clone();
    all.threads.iter_mut().for_each(|t| t.cpu = 0);
    let mut ignored = Notes::default();
    let models = model(&all, &mut ignored);
    let Some(m) = models.first() else {
        return Err(PartitionError::Refused(format!("{}: no periodic or sporadic thread to partition", sc.file)));
    };
    m.tasks.validate().map_err(|e| PartitionError::Refused(format!("{}: {e}", sc.file)))?;
    let heading = format!(
        "partition: {} over {} CPU(s), tasks by density, each CPU judged by {}\n",
        fit.name(),
        sc.cpus,
        test.name()
    );
    let p = match m.tasks.partition(sc.cpus, fit, SortKey::Density, test) {
        Ok(p) => p,
        Err(e) => {
            return Err(PartitionError::NotFound(format!("{heading}{}: no partition found: {e}", sc.file)));
        }
    };
    let mut placed = sc.clone();
    let mut text = heading;
    let mut rows = Vec::new();
    for (k, &thread) in m.threads.iter().enumerate() {
        let cpu = p.cpu_of[k];
        let t = &m.tasks.tasks[k];
        placed.threads[thread].cpu = cpu;
        text.push_str(&format!("  {:<14} -> CPU {cpu}  (density {:.3})\n", t.name, SortKey::Density.of(t)));
        rows.push(json!({ "thread": t.name, "cpu": cpu }));
    }
    for r in &mut placed.resources {
        if let Some(&u) = r.users.first() {
            r.cpu = placed.threads[u].cpu;
        }
    }
    let json = json!({ "fit": fit.name(), "key": "density", "test": test.name(), "cpus": sc.cpus, "threads": rows });
    Ok((placed, Placement { text, json }))
}
