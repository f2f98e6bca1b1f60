//! The `budget.notify` metric: from a thread set's budget running out to its handler running,
//! against a POSIX CPU-time timer whose signal wakes a handler thread.
//!
//! Owns the tempi side, the latency breakdown every run keeps ([`NotifyRun`]) and the note
//! that reports it. The POSIX peer is in `peers.rs`; it must not time anything else.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::clock::RealClock;
use tempi::{Budget, BudgetEvent, BudgetEventKind, Config, Runtime, SetId, ThreadSpec};

use super::peers::posix_notify;
use super::{check_completed, compare, fmt_ns, median, percentile, progress, sample_runs, Metric, Sizes};

/// `SCHED_FIFO` priority of both sides of `budget.notify` (the POSIX handler thread gets one
/// more, so it preempts the spinner the moment its signal arrives, as tempi's handler does).
pub(super) const NOTIFY_FIFO: i32 = 10;

/// The budget the `budget.notify` member overruns, and how far past it each job works.
pub(super) const NOTIFY_BUDGET: Duration = Duration::from_micros(200);
const NOTIFY_OVERRUN: Duration = Duration::from_micros(100);

/// Latencies of one `budget.notify` run, in ns, one entry per overrun.
#[derive(Default)]
pub(super) struct NotifyRun {
    /// From the instant the budget (or CPU-time timer) ran out to the handler running.
    pub(super) total: Vec<f64>,
    /// The consumer's own clock past the limit when noticed: tempi's group clock at the
    /// handler minus the limit; the spinner's CPU clock read by the woken handler thread minus
    /// the timer value.
    pub(super) clock: Vec<f64>,
    /// tempi only: from the dispatcher noticing (the event's `at`) to the handler's first line.
    pub(super) entry: Vec<f64>,
    pub(super) notes: Vec<String>,
}

/// tempi: one thread in a set with a budget of [`NOTIFY_BUDGET`]; each job replenishes the
/// budget and works [`NOTIFY_OVERRUN`] longer than it, so each job overruns exactly once. The
/// first overrun is a warm-up and is dropped.
///
/// The member runs the whole time, so its group clock advances with the wall clock and the
/// budget ran out at `event.at - (event.consumed - limit)`. The handler's first action reads a
/// second [`RealClock`] (the same calibrated counter), mapped onto the runtime's timeline by a
/// pair of readings the thread takes just before each `work`.
fn tempi_notify(overruns: usize) -> Result<NotifyRun, String> {
    let cfg = Config::new(1).trace_capacity(0).pin(true).fifo_priority(Some(NOTIFY_FIFO));
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let set: SetId = rt.create_set("overrun", 0).map_err(|e| e.to_string())?;
    let clock = RealClock::starting_now();
    let offset = Arc::new(AtomicI64::new(0));
    let log = Arc::new(Mutex::new(Vec::<(i64, i64)>::with_capacity(overruns + 1)));
    let (h_clock, h_offset, h_log) = (clock.clone(), offset.clone(), log.clone());
    // Group-clock value at which the budget runs out, learnt from the replenishment event.
    let mut limit: Option<Duration> = None;
    let handler = move |e: &BudgetEvent| {
        let now = h_clock.read().as_nanos() as i64;
        match e.kind {
            BudgetEventKind::Replenished => limit = Some(e.consumed + e.remaining),
            BudgetEventKind::Exhausted => {
                if let Some(l) = limit.take() {
                    let over = e.consumed.saturating_sub(l).as_nanos() as i64;
                    let entry = now - h_offset.load(Ordering::Relaxed) - e.at.as_nanos() as i64;
                    h_log.lock().expect("log lock").push((over, entry));
                }
            }
        }
    };
    let t = rt
        .spawn(ThreadSpec::new("overrun"), move |cx| {
            for _ in 0..=overruns {
                cx.replenish_budget(set, NOTIFY_BUDGET).expect("the set has a budget");
                let a = cx.now().as_nanos() as i64;
                let m = clock.read().as_nanos() as i64;
                let b = cx.now().as_nanos() as i64;
                offset.store(m - (a + b) / 2, Ordering::Relaxed);
                cx.work(NOTIFY_BUDGET + NOTIFY_OVERRUN);
            }
        })
        .map_err(|e| e.to_string())?;
    rt.add_to_set(set, t).map_err(|e| e.to_string())?;
    rt.set_budget(set, Budget::new(NOTIFY_BUDGET).on_event(handler)).map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    let log = std::mem::take(&mut *log.lock().expect("log lock"));
    if log.len() != overruns + 1 {
        return Err(format!("budget.notify: expected {} overruns, the handler saw {}", overruns + 1, log.len()));
    }
    let mut run = NotifyRun { notes: out.warnings, ..NotifyRun::default() };
    for &(over, entry) in &log[1..] {
        run.clock.push(over as f64);
        run.entry.push(entry as f64);
        run.total.push((over + entry) as f64);
    }
    Ok(run)
}

pub(super) fn notify_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!(
        "budget.notify: tempi, {} overruns of a {} us budget x {} (+ warm-up)",
        sz.notify_tempi,
        NOTIFY_BUDGET.as_micros(),
        sz.reps
    ));
    let (t_notify, tempi_runs) = sample_runs(sz.reps, || tempi_notify(sz.notify_tempi), |r| &r.total)?;
    progress(&format!("budget.notify: POSIX CPU-time timer peer, {} overruns x {}", sz.notify_peer, sz.reps));
    let (p_notify, peer_runs) = sample_runs(sz.reps, || posix_notify(sz.notify_peer), |r| &r.total)?;
    metrics.push(compare(
        "budget.notify",
        t_notify,
        "POSIX CPU-time timer + SIGRTMIN to a thread in sigtimedwait, same CPU",
        p_notify,
        Some(notify_note(&tempi_runs, &peer_runs)),
    ));

    Ok(())
}

/// Breakdown and tails of `budget.notify`, over every measured overrun (warm-up runs
/// included in neither: `sample`'s first run is the first element and is skipped).
fn notify_note(tempi: &[NotifyRun], peer: &[NotifyRun]) -> String {
    let pool = |runs: &[NotifyRun], f: fn(&NotifyRun) -> &Vec<f64>| -> Vec<f64> {
        runs.iter().skip(1).flat_map(|r| f(r).iter().copied()).collect()
    };
    let t_total = pool(tempi, |r| &r.total);
    let p_total = pool(peer, |r| &r.total);
    // Wall minus CPU clock: from the spinner being switched out to the handler thread running.
    let p_switch: Vec<f64> = p_total.iter().zip(pool(peer, |r| &r.clock)).map(|(t, c)| t - c).collect();
    let mut note = format!(
        "from budget exhausted to handler running, wall clock; tempi: work() overrun detected by \
         the spinning dispatcher, group-clock overshoot (consumed - limit) {:.0} ns + handler entry {:.0} ns, \
         p99 {}; POSIX: spinner CPU clock read by the woken thread - timer value {} (Linux checks \
         CPU-time timers at the scheduler tick), then spinner switched out -> handler thread running {}, \
         p99 {}; budget {} us, {} + {} overruns pooled",
        median(pool(tempi, |r| &r.clock)),
        median(pool(tempi, |r| &r.entry)),
        fmt_ns(percentile(t_total.clone(), 99.0)),
        fmt_ns(median(pool(peer, |r| &r.clock))),
        fmt_ns(median(p_switch)),
        fmt_ns(percentile(p_total.clone(), 99.0)),
        NOTIFY_BUDGET.as_micros(),
        t_total.len(),
        p_total.len(),
    );
    let mut notes: Vec<String> = tempi.iter().chain(peer).flat_map(|r| r.notes.iter().cloned()).collect();
    notes.sort();
    notes.dedup();
    if !notes.is_empty() {
        note.push_str(&format!(" | {}", notes.join("; ")));
    }
    note
}
