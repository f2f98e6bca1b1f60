//! The `switch.roundtrip` and `switch.accounting.*` metrics: two equal-priority tempi threads
//! yielding to each other, bare or in a thread set under each accounting mode; the same round
//! trip against a bare `corosensei` coroutine round trip (`switch.roundtrip.corosensei`), and
//! against that round trip with a clock read and a charge at each switch
//! (`switch.roundtrip.corosensei_clocked`).
//!
//! Owns the tempi side of the round trip, the accounting variants and how their metrics and
//! notes read. The OS-thread peers are in `peers.rs`; it must not time anything else.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tempi::clock::RealClock;
use tempi::{Accounting, Budget, Config, Runtime, ThreadSpec};

use super::peers::{channel_switch, condvar_switch, coroutine_roundtrip};
use super::{check_completed, compare, median, overhead, progress, sample, Metric, Sizes};

/// What surrounds the two yielding threads of a switch measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SwitchSetup {
    /// The default runtime, no thread set: what `switch.roundtrip` measures.
    Plain,
    /// Both threads in one thread set, under this accounting.
    InSet(Accounting),
    /// Both threads in one set with a budget armed that never runs out (`Accounting::Group`),
    /// so the kernel also tracks when the set's execution-time event would be reached.
    InSetWithBudget,
}

/// tempi: two equal-priority threads on one pinned real-time CPU, each yielding `n` times.
/// Returns ns per round trip (A -> B -> A) and the runtime's warnings.
fn tempi_switch(n: u64, setup: SwitchSetup) -> Result<(f64, Vec<String>), String> {
    let accounting = match setup {
        SwitchSetup::Plain | SwitchSetup::InSetWithBudget => Accounting::Group,
        SwitchSetup::InSet(a) => a,
    };
    let cfg = Config::new(1).trace_capacity(0).pin(true).accounting(accounting);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let base = Instant::now();
    let start = Arc::new(AtomicU64::new(0));
    let end = Arc::new(AtomicU64::new(0));
    let (s, e) = (start.clone(), end.clone());
    // The first yield also creates B's coroutine, so the clock starts after it.
    let a = rt
        .spawn(ThreadSpec::new("a"), move |cx| {
            cx.yield_now();
            s.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
            for _ in 0..n {
                cx.yield_now();
            }
            e.store(base.elapsed().as_nanos() as u64, Ordering::Relaxed);
        })
        .map_err(|e| e.to_string())?;
    let b = rt
        .spawn(ThreadSpec::new("b"), move |cx| {
            for _ in 0..=n {
                cx.yield_now();
            }
        })
        .map_err(|e| e.to_string())?;
    if setup != SwitchSetup::Plain {
        let set = rt.create_set("s", 0).map_err(|e| e.to_string())?;
        for t in [a, b] {
            rt.add_to_set(set, t).map_err(|e| e.to_string())?;
        }
        if setup == SwitchSetup::InSetWithBudget {
            // An hour of CPU time: armed for the whole run, never reached.
            rt.set_budget(set, Budget::new(Duration::from_secs(3600))).map_err(|e| e.to_string())?;
        }
    }
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    let span = end.load(Ordering::Relaxed).saturating_sub(start.load(Ordering::Relaxed));
    Ok((span as f64 / n as f64, out.warnings))
}

/// The variants of the accounting comparison, in the order they are interleaved; the first is
/// the baseline.
const ACCT_VARIANTS: [(&str, SwitchSetup); 4] = [
    ("off", SwitchSetup::InSet(Accounting::Off)),
    ("switch.accounting.thread", SwitchSetup::InSet(Accounting::Thread)),
    ("switch.accounting.group", SwitchSetup::InSet(Accounting::Group)),
    ("switch.accounting.budget", SwitchSetup::InSetWithBudget),
];

/// Round-trip times of every accounting variant, interleaved (A B C D A B C D ...) after one
/// warm-up round, so slow drift of a shared VM (frequency, neighbours) hits every variant
/// alike. Returns one median per variant and the runtime's warnings.
fn accounting_switch(reps: usize, n: u64) -> Result<(Vec<f64>, Vec<String>), String> {
    let mut xs = vec![Vec::with_capacity(reps); ACCT_VARIANTS.len()];
    let mut notes = Vec::new();
    for rep in 0..=reps {
        for (i, &(_, setup)) in ACCT_VARIANTS.iter().enumerate() {
            let (ns, w) = tempi_switch(n, setup)?;
            if rep > 0 {
                xs[i].push(ns);
            }
            notes = w;
        }
    }
    Ok((xs.into_iter().map(median).collect(), notes))
}

pub(super) fn switch_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("switch.roundtrip: tempi, {} round trips x {} (+ warm-up)", sz.switch_tempi, sz.reps));
    let mut tempi_notes = Vec::new();
    let t_switch = sample(sz.reps, || {
        let (ns, w) = tempi_switch(sz.switch_tempi, SwitchSetup::Plain)?;
        tempi_notes = w;
        Ok(ns)
    })?;
    progress(&format!("switch.roundtrip: condvar peer, {} round trips x {}", sz.switch_peer, sz.reps));
    let mut peer_notes = Vec::new();
    let p_condvar = sample(sz.reps, || {
        let (ns, w) = condvar_switch(sz.switch_peer)?;
        peer_notes = w;
        Ok(ns)
    })?;
    progress(&format!("switch.roundtrip: channel peer, {} round trips x {}", sz.switch_peer, sz.reps));
    let p_channel = sample(sz.reps, || {
        let (ns, w) = channel_switch(sz.switch_peer)?;
        peer_notes.extend(w);
        Ok(ns)
    })?;
    progress(&format!("switch.roundtrip: bare corosensei peer, {} round trips x {}", sz.switch_tempi, sz.reps));
    let p_coroutine = sample(sz.reps, || {
        let (ns, w) = coroutine_roundtrip::<false>(sz.switch_tempi)?;
        peer_notes.extend(w);
        Ok(ns)
    })?;
    progress(&format!("switch.roundtrip: clocked corosensei peer, {} round trips x {}", sz.switch_tempi, sz.reps));
    let p_clocked = sample(sz.reps, || {
        let (ns, w) = coroutine_roundtrip::<true>(sz.switch_tempi)?;
        peer_notes.extend(w);
        Ok(ns)
    })?;
    peer_notes.sort();
    peer_notes.dedup();
    let pin_note = pin_note(&tempi_notes, &peer_notes);
    metrics.push(compare(
        "switch.roundtrip",
        t_switch,
        "os-thread condvar handoff, same CPU",
        p_condvar,
        pin_note.clone(),
    ));
    metrics.push(compare(
        "switch.roundtrip.channel",
        t_switch,
        "os-thread mpsc channel pair, same CPU",
        p_channel,
        pin_note.clone(),
    ));
    // A bare resume + suspend of one coroutine: a tempi round trip (A -> B -> A) is two thread
    // switches, each from a thread to its dispatcher and on to the next thread.
    metrics.push(compare(
        "switch.roundtrip.corosensei",
        t_switch,
        "bare corosensei resume + suspend, same CPU",
        p_coroutine,
        pin_note.clone(),
    ));
    // The same bare round trip reading the clock and charging the time at both switches: the
    // least any kernel that accounts execution time per thread pays, with no scheduling at all.
    metrics.push(compare(
        "switch.roundtrip.corosensei_clocked",
        t_switch,
        "bare corosensei round trip reading the clock and charging time at each switch, same CPU",
        p_clocked,
        pin_note,
    ));

    Ok(())
}

pub(super) fn accounting_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!(
        "switch.accounting: {} variants interleaved, {} round trips x {} (+ warm-up round)",
        ACCT_VARIANTS.len(),
        sz.acct_switches,
        sz.acct_reps
    ));
    let (acct, acct_warnings) = accounting_switch(sz.acct_reps, sz.acct_switches)?;
    let off_ns = acct[0];
    let mut acct_note = format!(
        "ratio = tempi_ns / peer_ns here (overhead factor, >1 = slower), not a speed-up; both threads in one \
         thread set in every variant; variants interleaved over {} repetitions, medians",
        sz.acct_reps
    );
    if !acct_warnings.is_empty() {
        acct_note.push_str(&format!(" | tempi: {}", acct_warnings.join("; ")));
    }
    for (i, &(name, _)) in ACCT_VARIANTS.iter().enumerate().skip(1) {
        let what = match name {
            "switch.accounting.thread" => "Accounting::Thread",
            "switch.accounting.group" => "Accounting::Group",
            _ => "Accounting::Group + budget armed on the set (never exhausted)",
        };
        let note = format!("{what}; {acct_note}");
        metrics.push(overhead(name, acct[i], "same round trip, accounting off", off_ns, note));
    }

    Ok(())
}

fn pin_note(tempi: &[String], peer: &[String]) -> Option<String> {
    let mut parts = Vec::new();
    if !tempi.is_empty() {
        parts.push(format!("tempi: {}", tempi.join("; ")));
    }
    if !peer.is_empty() {
        parts.push(format!("peer could not pin: {}", peer.join("; ")));
    }
    (!parts.is_empty()).then(|| parts.join(" | "))
}
