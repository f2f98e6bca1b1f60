//! The `lock.uncontended.<protocol>` and `lock.handoff.bpi` metrics: tempi's locks free and
//! handed to a more urgent waiter, against `std` and pthread priority-inheritance mutexes.
//!
//! Owns the tempi side of both groups, the state a hand-off shares with its peer, and the
//! locking-protocol names the benchmarks use (the "Protocol names" section below, the only
//! place that names one). The OS-thread peers are in `peers.rs`; it must not time anything
//! else.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tempi::clock::RealClock;
use tempi::sync::LockSpec;
use tempi::{Config, Runtime, ThreadSpec};

use super::peers::{pthread_handoff, pthread_pi_uncontended, std_uncontended};
use super::{check_completed, compare, fmt_ns, median, percentile, progress, sample_runs, Metric, Sizes, BENCH_CPU};

// ----- Protocol names -------------------------------------------------------------------------
// Every locking-protocol name the benchmarks use, listed or turned into a lock, is here.

/// The protocols `lock.uncontended.<protocol>` measures, in the order they run and are
/// reported: the lock registry's built-ins, less RCS, whose uncontended path is BPI's (its
/// difference, aborting a preempted owner, needs contention). MSRP's global lock, made for
/// several CPUs, is measured on the same one CPU: its ticket taken and given back, and the
/// non-preemptive section entered and left, with nobody to spin against.
fn lock_protocol_names() -> Vec<&'static str> {
    tempi::policy::lock::NAMES.iter().copied().filter(|&n| n != "rcs").collect()
}

/// Whether a `lock.uncontended` lock under `protocol` is given a ceiling ([`LOCK_PRIO`]).
fn protocol_takes_ceiling(protocol: &str) -> bool {
    tempi::policy::lock::by_name(protocol).is_some_and(|p| p.needs_ceiling())
}

/// The protocol `lock.handoff.bpi` measures.
const HANDOFF_PROTOCOL: &str = "bpi";

// ----- Parameters -------------------------------------------------------------------------------

/// Priority of the `lock.uncontended` thread, and the ceiling of its PCP and SRP locks.
const LOCK_PRIO: i32 = 1;

/// `lock.handoff.bpi`: priorities of the owner and of the more urgent waiter, used both as
/// tempi priorities and as the `SCHED_FIFO` priorities of the OS-thread peer.
pub(super) const HANDOFF_LOW: i32 = 10;
pub(super) const HANDOFF_HIGH: i32 = 20;

/// `lock.handoff.bpi`: period of tempi's waiter, sleep of the peer's waiter between hand-offs,
/// and how long the tempi owner works between looks at whether the waiter is blocked.
pub(super) const HANDOFF_PERIOD: Duration = Duration::from_micros(100);
const HANDOFF_POLL: Duration = Duration::from_micros(2);

/// One variant of the interleaved `lock.uncontended` runs.
#[derive(Clone, Copy)]
enum LockVariant {
    Tempi(&'static str),
    Std,
    PthreadPi,
}

/// tempi: one thread on one pinned real-time CPU (tracing off) locking and unlocking a free
/// mutex under `protocol` `n` times. Returns ns per lock + unlock.
fn tempi_uncontended(protocol: &str, n: u64) -> Result<f64, String> {
    let cfg = Config::new(1).trace_capacity(0).pin(true);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let mut spec = LockSpec::new("m").protocol(protocol);
    if protocol_takes_ceiling(protocol) {
        spec = spec.ceiling(LOCK_PRIO);
    }
    let m = rt.create_mutex(0u64, spec).map_err(|e| e.to_string())?;
    let ns = Arc::new(AtomicU64::new(0));
    let out_ns = ns.clone();
    rt.spawn(ThreadSpec::new("locker").priority(LOCK_PRIO), move |cx| {
        drop(m.lock(cx).expect("uncontended lock"));
        let t0 = Instant::now();
        for _ in 0..n {
            drop(black_box(black_box(&m).lock(cx).expect("uncontended lock")));
        }
        out_ns.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64 / n as f64)
}

/// Medians of every `lock.uncontended` variant (the tempi protocols, then `std`, then pthread
/// PI), interleaved over `reps` rounds after a warm-up round, and the pinning notes.
fn uncontended_all(reps: usize, tempi_n: u64, peer_n: u64) -> Result<(Vec<f64>, Vec<String>), String> {
    let variants: Vec<LockVariant> = lock_protocol_names()
        .iter()
        .map(|&p| LockVariant::Tempi(p))
        .chain([LockVariant::Std, LockVariant::PthreadPi])
        .collect();
    let mut xs = vec![Vec::with_capacity(reps); variants.len()];
    let mut notes = Vec::new();
    for rep in 0..=reps {
        for (i, v) in variants.iter().enumerate() {
            let ns = match *v {
                LockVariant::Tempi(p) => tempi_uncontended(p, tempi_n)?,
                LockVariant::Std => {
                    let (ns, w) = std_uncontended(peer_n)?;
                    notes.extend(w);
                    ns
                }
                LockVariant::PthreadPi => {
                    let (ns, w) = pthread_pi_uncontended(peer_n)?;
                    notes.extend(w);
                    ns
                }
            };
            if rep > 0 {
                xs[i].push(ns);
            }
        }
    }
    notes.sort();
    notes.dedup();
    Ok((xs.into_iter().map(median).collect(), notes))
}

/// What the owner and the waiter of a hand-off share.
#[derive(Default)]
pub(super) struct HandoffState {
    /// Set by the waiter just before it asks for the lock. On one CPU the waiter, the more
    /// urgent of the two, runs until it blocks, so when the owner sees the flag the waiter is
    /// blocked on the lock.
    pub(super) waiting: AtomicBool,
    /// Raw clock reading ([`RealClock::raw`]) the owner takes right before unlocking to a
    /// waiter; 0: none. Both ends read the raw counter and convert after the interval, so
    /// the clock's own arithmetic stays out of what is measured (on both sides).
    pub(super) unlock_at: AtomicU64,
    /// The waiter has finished: the owner stops.
    pub(super) done: AtomicBool,
}

/// Latencies of one hand-off run (ns) and its notes.
#[derive(Default)]
pub(super) struct HandoffRun {
    pub(super) lat: Vec<f64>,
    pub(super) notes: Vec<String>,
}

/// tempi: on one pinned real-time CPU (dispatcher under `SCHED_FIFO` [`HANDOFF_LOW`] where
/// allowed, tracing off), a low-priority thread (priority [`HANDOFF_LOW`]) holds a BPI lock
/// and works in [`HANDOFF_POLL`] steps; a periodic thread (priority [`HANDOFF_HIGH`], period
/// [`HANDOFF_PERIOD`]) is released, preempts it, and blocks on the lock. The low thread sees
/// it waiting, reads the clock and unlocks; the high thread reads the clock when it holds the
/// lock. The high thread's first job (before the low thread has run) finds the lock free and
/// gives no sample.
fn tempi_handoff(n: usize) -> Result<HandoffRun, String> {
    let cfg = Config::new(1).trace_capacity(0).pin(true).fifo_priority(Some(HANDOFF_LOW));
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").protocol(HANDOFF_PROTOCOL)).map_err(|e| e.to_string())?);
    let clock = RealClock::starting_now();
    let st = Arc::new(HandoffState::default());
    let lat = Arc::new(Mutex::new(Vec::<f64>::with_capacity(n)));
    let jobs = n as u32 + 1;
    let (hm, hs, hc, hl) = (m.clone(), st.clone(), clock.clone(), lat.clone());
    let mut job = 0u32;
    rt.spawn(ThreadSpec::new("high").periodic(HANDOFF_PERIOD).priority(HANDOFF_HIGH).max_jobs(jobs), move |cx| {
        job += 1;
        hs.waiting.store(true, Ordering::Relaxed);
        let g = hm.lock(cx).expect("hand-off lock");
        let t = hc.raw();
        hs.waiting.store(false, Ordering::Relaxed);
        let u = hs.unlock_at.swap(0, Ordering::Relaxed);
        if u != 0 {
            hl.lock().expect("latency log").push(hc.raw_delta(u, t).as_nanos() as f64);
        }
        if job == jobs {
            hs.done.store(true, Ordering::Relaxed);
        }
        drop(g);
    })
    .map_err(|e| e.to_string())?;
    rt.spawn(ThreadSpec::new("low").priority(HANDOFF_LOW), move |cx| {
        while !st.done.load(Ordering::Relaxed) {
            let g = m.lock(cx).expect("hand-off lock");
            while !st.waiting.load(Ordering::Relaxed) && !st.done.load(Ordering::Relaxed) {
                cx.work(HANDOFF_POLL);
            }
            if st.waiting.load(Ordering::Relaxed) {
                st.unlock_at.store(clock.raw().max(1), Ordering::Relaxed);
            }
            drop(g);
        }
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    let lat = std::mem::take(&mut *lat.lock().expect("latency log"));
    if lat.len() < n / 2 {
        return Err(format!("lock.handoff.bpi: only {} of {n} tempi jobs found the lock held", lat.len()));
    }
    Ok(HandoffRun { lat, notes: out.warnings.iter().map(|w| format!("tempi: {w}")).collect() })
}

/// Breakdown of `lock.handoff.bpi` over every measured hand-off (warm-up runs excluded).
fn handoff_note(tempi: &[HandoffRun], peer: &[HandoffRun]) -> String {
    let pool = |runs: &[HandoffRun]| -> Vec<f64> { runs.iter().skip(1).flat_map(|r| r.lat.iter().copied()).collect() };
    let (t, p) = (pool(tempi), pool(peer));
    let mut note = format!(
        "from the owner's unlock call to the blocked, more urgent waiter holding the lock; tempi: BPI, priorities \
         {HANDOFF_LOW}/{HANDOFF_HIGH}, waiter periodic {} us, p99 {}; peer: pthread PTHREAD_PRIO_INHERIT mutex, \
         SCHED_FIFO {HANDOFF_LOW}/{HANDOFF_HIGH} both pinned to CPU {BENCH_CPU}, p99 {}; {} + {} hand-offs pooled",
        HANDOFF_PERIOD.as_micros(),
        fmt_ns(percentile(t.clone(), 99.0)),
        fmt_ns(percentile(p.clone(), 99.0)),
        t.len(),
        p.len(),
    );
    let mut notes: Vec<String> = tempi.iter().chain(peer).flat_map(|r| r.notes.iter().cloned()).collect();
    notes.sort();
    notes.dedup();
    if !notes.is_empty() {
        note.push_str(&format!(" | {}", notes.join("; ")));
    }
    note
}

pub(super) fn uncontended_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    let protocols = lock_protocol_names();
    progress(&format!(
        "lock.uncontended: {} protocols + std + pthread PI interleaved, {} / {} lock+unlock x {} (+ warm-up round)",
        protocols.len(),
        sz.lock_tempi,
        sz.lock_peer,
        sz.reps
    ));
    let (lock_ns, lock_notes) = uncontended_all(sz.reps, sz.lock_tempi, sz.lock_peer)?;
    let (std_ns, pi_ns) = (lock_ns[protocols.len()], lock_ns[protocols.len() + 1]);
    let pin_problem = (!lock_notes.is_empty()).then(|| format!("peer could not pin: {}", lock_notes.join("; ")));
    for (i, p) in protocols.iter().enumerate() {
        let mut note = format!(
            "free lock, one thread, `drop(m.lock(cx))` in a loop; {} variants interleaved over {} rounds, medians; \
             pthread PI mutex {}",
            protocols.len() + 2,
            sz.reps,
            fmt_ns(pi_ns)
        );
        if let Some(pin) = &pin_problem {
            note.push_str(&format!(" | {pin}"));
        }
        metrics.push(compare(
            &format!("lock.uncontended.{p}"),
            lock_ns[i],
            "std::sync::Mutex lock+unlock, OS thread, same CPU",
            std_ns,
            Some(note),
        ));
        metrics.push(compare(
            &format!("lock.uncontended.{p}.pthread-pi"),
            lock_ns[i],
            "pthread PTHREAD_PRIO_INHERIT mutex lock+unlock, OS thread, same CPU",
            pi_ns,
            pin_problem.clone(),
        ));
    }

    Ok(())
}

pub(super) fn handoff_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("lock.handoff.bpi: tempi, {} hand-offs x {} (+ warm-up)", sz.handoff_tempi, sz.reps));
    let (t_handoff, t_runs) = sample_runs(sz.reps, || tempi_handoff(sz.handoff_tempi), |r| &r.lat)?;
    progress(&format!("lock.handoff.bpi: pthread PI peer, {} hand-offs x {} (+ warm-up)", sz.handoff_peer, sz.reps));
    let (p_handoff, p_runs) = sample_runs(sz.reps, || pthread_handoff(sz.handoff_peer), |r| &r.lat)?;
    metrics.push(compare(
        "lock.handoff.bpi",
        t_handoff,
        "pthread PI mutex, SCHED_FIFO 10/20 OS threads, same CPU",
        p_handoff,
        Some(handoff_note(&t_runs, &p_runs)),
    ));

    Ok(())
}
