//! The serde model of a scenario file: the "raw" structs `toml` fills in the first pass.
//!
//! Owns the shape of the file only: table and key names, which keys are optional, and which
//! values keep their [`Spanned`] position so the second pass can point at their line. It must
//! not check meaning (ranges, names, cross references): that is `validate.rs`, `threads.rs`
//! and `sets.rs`, and a key added here needs its check there and its entry in
//! `docs/SCENARIOS.md`.

use serde::Deserialize;
use toml::{Spanned, Value};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawFile {
    pub(super) runtime: Option<RawRuntime>,
    #[serde(default)]
    pub(super) thread: Vec<Spanned<RawThread>>,
    #[serde(default)]
    pub(super) timer: Vec<Spanned<RawTimer>>,
    #[serde(default)]
    pub(super) set: Vec<Spanned<RawSet>>,
    #[serde(default)]
    pub(super) resource: Vec<Spanned<RawResource>>,
    pub(super) admission: Option<Spanned<super::requests::RawAdmission>>,
    #[serde(default)]
    pub(super) request: Vec<Spanned<super::requests::RawRequest>>,
    #[serde(default)]
    pub(super) planner: Option<super::groups::RawPlanner>,
    #[serde(default)]
    pub(super) group: Vec<Spanned<super::groups::RawGroup>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResource {
    pub(super) name: Spanned<String>,
    pub(super) protocol: Option<Spanned<String>>,
    pub(super) ceiling: Option<Spanned<i32>>,
    pub(super) cpu: Option<Spanned<usize>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRuntime {
    pub(super) cpus: Option<Spanned<i64>>,
    pub(super) policy: Option<Spanned<String>>,
    pub(super) quantum: Option<Spanned<Value>>,
    pub(super) until: Option<Spanned<Value>>,
    pub(super) priorities: Option<Spanned<String>>,
    pub(super) seed: Option<i64>,
    pub(super) accounting: Option<Spanned<String>>,
    pub(super) costs: Option<RawCosts>,
    pub(super) job_overhead: Option<Spanned<Value>>,
}

/// `[runtime.costs]`: simulated overheads of the runtime's own operations.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawCosts {
    pub(super) context_switch: Option<Spanned<Value>>,
    pub(super) lock_acquired: Option<Spanned<Value>>,
    pub(super) lock_not_acquired: Option<Spanned<Value>>,
    pub(super) unlock: Option<Spanned<Value>>,
    pub(super) abort: Option<Spanned<Value>>,
}

#[derive(Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawKind {
    Periodic,
    Sporadic,
    #[serde(alias = "one-shot")]
    Oneshot,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawCriticality {
    Hard,
    Soft,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "kebab-case")]
pub(super) enum RawMissPolicy {
    Continue,
    Abort,
    SkipNext,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawThread {
    pub(super) name: Spanned<String>,
    pub(super) kind: Option<Spanned<RawKind>>,
    pub(super) period: Option<Spanned<Value>>,
    pub(super) phase: Option<Spanned<Value>>,
    pub(super) deadline: Option<Spanned<Value>>,
    pub(super) wcet: Option<Spanned<Value>>,
    pub(super) min_interarrival: Option<Spanned<Value>>,
    pub(super) abort_after: Option<Spanned<Value>>,
    pub(super) priority: Option<i32>,
    pub(super) importance: Option<u32>,
    pub(super) cpu: Option<Spanned<usize>>,
    pub(super) criticality: Option<RawCriticality>,
    pub(super) miss_policy: Option<RawMissPolicy>,
    pub(super) max_jobs: Option<Spanned<u32>>,
    pub(super) stack: Option<Spanned<usize>>,
    pub(super) steps: Option<Spanned<Vec<Spanned<RawStep>>>>,
    pub(super) forever: Option<Spanned<bool>>,
    pub(super) os_backed: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStep {
    pub(super) work: Option<Spanned<Value>>,
    pub(super) sleep: Option<Spanned<Value>>,
    #[serde(rename = "yield")]
    pub(super) yield_now: Option<Spanned<bool>>,
    pub(super) lock: Option<Spanned<String>>,
    pub(super) unlock: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTimer {
    pub(super) every: Option<Spanned<Value>>,
    pub(super) at: Option<Spanned<Value>>,
    pub(super) start: Option<Spanned<Value>>,
    pub(super) cpu: Option<Spanned<usize>>,
    pub(super) release: Option<Vec<Spanned<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSet {
    pub(super) name: Spanned<String>,
    pub(super) cpu: Option<Spanned<usize>>,
    pub(super) members: Option<Vec<Spanned<String>>>,
    pub(super) budget: Option<Spanned<Value>>,
    pub(super) replenish: Option<Spanned<String>>,
    pub(super) period: Option<Spanned<Value>>,
    pub(super) action: Option<Spanned<String>>,
    pub(super) server: Option<Spanned<String>>,
}
