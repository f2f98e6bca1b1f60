//! The per-LP report of a run: what each LP processed, undid, committed, cancelled, how long
//! it spent redoing and waiting for commits, and how many of its results came too late; with
//! the run's totals. Text through `Display`, JSON through serde (the `export` feature). Owns
//! only the report's shape; the numbers are the engine's counters.

use std::fmt;

use super::engine::{Engine, RunOutcome};
use super::Model;

/// One LP's line of a [`WarpReport`]. Times are nanoseconds on the runtime's clock, measured
/// only on a runtime ([`Engine::spawn_on`]).
///
/// ```
/// let r = tempi::warp::LpReport::default();
/// assert_eq!(r.committed, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "export", derive(serde::Serialize))]
pub struct LpReport {
    /// The LP's index.
    pub lp: u32,
    /// The worker (CPU) that owns it.
    pub worker: usize,
    /// Forward executions, re-executions included.
    pub processed: u64,
    /// Events undone.
    pub rolled_back: u64,
    /// Events committed.
    pub committed: u64,
    /// Anti-messages sent.
    pub antis_sent: u64,
    /// Re-executions of undone events.
    pub redone: u64,
    /// Time spent on those re-executions.
    pub redo_ns: u64,
    /// Mean time from an event's first execution to its commit.
    pub commit_latency_mean_ns: u64,
    /// The longest such time.
    pub commit_latency_max_ns: u64,
    /// Events committed after their commit deadline (their results dropped for a fallback).
    pub fallbacks: u64,
    /// The most processed, uncommitted events it held at once.
    pub max_history: usize,
}

/// A run's report: one [`LpReport`] per LP, in LP order, and the totals.
///
/// ```
/// use tempi::warp::{phold::Phold, Engine, Schedule, WarpConfig};
/// let mut e = Engine::new(Phold { lps: 4, ..Phold::default() }.scenario(1, 2, 0), WarpConfig { workers: 2, end_time: 40, ..Default::default() }).unwrap();
/// e.run(Schedule::RoundRobin, |_| {}).unwrap();
/// let report = e.report();
/// assert_eq!(report.lps.len(), 4);
/// assert_eq!(report.lps.iter().map(|l| l.committed).sum::<u64>(), report.totals.committed);
/// assert!(report.to_string().starts_with("lp  worker"));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "export", derive(serde::Serialize))]
pub struct WarpReport {
    /// Per LP.
    pub lps: Vec<LpReport>,
    /// The run's totals.
    pub totals: RunOutcome,
}

impl WarpReport {
    /// The report as one JSON object: `{"lps": [...], "totals": {...}}`.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, Schedule, WarpConfig};
    /// let mut e = Engine::new(Phold { lps: 2, ..Phold::default() }.scenario(1, 1, 0), WarpConfig { end_time: 20, ..Default::default() }).unwrap();
    /// e.run(Schedule::RoundRobin, |_| {}).unwrap();
    /// let v: serde_json::Value = serde_json::from_str(&e.report().to_json()).unwrap();
    /// assert_eq!(v["lps"][1]["lp"], 1);
    /// assert_eq!(v["totals"]["committed"], v["lps"][0]["committed"].as_u64().unwrap() + v["lps"][1]["committed"].as_u64().unwrap());
    /// ```
    #[cfg(feature = "export")]
    pub fn to_json(&self) -> String {
        // Plain integers and vectors: serialising cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }
}

impl fmt::Display for WarpReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "lp  worker  processed  rolled_back  committed  antis  redone  redo_us  latency_mean_us  latency_max_us  fallbacks"
        )?;
        for l in &self.lps {
            writeln!(
                f,
                "{:<3} {:>6}  {:>9}  {:>11}  {:>9}  {:>5}  {:>6}  {:>7.1}  {:>15.1}  {:>14.1}  {:>9}",
                l.lp,
                l.worker,
                l.processed,
                l.rolled_back,
                l.committed,
                l.antis_sent,
                l.redone,
                l.redo_ns as f64 / 1e3,
                l.commit_latency_mean_ns as f64 / 1e3,
                l.commit_latency_max_ns as f64 / 1e3,
                l.fallbacks
            )?;
        }
        let t = &self.totals;
        write!(
            f,
            "total: {} processed, {} rolled back, {} committed (efficiency {:.3}), {} anti-messages, {} late, {} fallbacks run",
            t.processed,
            t.rolled_back,
            t.committed,
            t.efficiency(),
            t.antis_sent,
            t.late,
            t.fallbacks
        )
    }
}

impl<M: Model> Engine<M> {
    /// The per-LP report of what the engine has done so far.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.report().lps[0].processed, 0);
    /// ```
    pub fn report(&self) -> WarpReport {
        let lps = (0..self.place.len())
            .filter_map(|i| {
                let lp = super::LpId(i as u32);
                let c = self.counters(lp)?;
                let ns = |d: std::time::Duration| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
                Some(LpReport {
                    lp: lp.0,
                    worker: self.place[i].worker as usize,
                    processed: c.processed,
                    rolled_back: c.rolled_back,
                    committed: c.committed,
                    antis_sent: c.antis_sent,
                    redone: c.redone,
                    redo_ns: ns(c.redo_time),
                    commit_latency_mean_ns: ns(c.commit_latency_total).checked_div(c.committed).unwrap_or(0),
                    commit_latency_max_ns: ns(c.commit_latency_max),
                    fallbacks: c.late,
                    max_history: c.max_history,
                })
            })
            .collect();
        WarpReport { lps, totals: self.outcome() }
    }
}
