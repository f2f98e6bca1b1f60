//! `tempi bench`: measure tempi against what a user would reach for instead, in the same run.
//!
//! Every comparison metric times tempi and its peer back to back in this process and reports
//! `ratio = peer_ns / tempi_ns`, i.e. how many times faster tempi is. The exception is the
//! `switch.accounting.*` overhead metrics, where the "peer" is tempi itself with accounting off
//! and `ratio = tempi_ns / peer_ns` is the overhead factor (above 1 means slower). Absolute
//! numbers depend on the machine and its load; the ratios are what the project tracks. Each
//! number is the median of several repetitions taken after a warm-up run. Progress goes to
//! stderr, results to stdout (a table, or one JSON object with `--json`).
//!
//! Metrics:
//! - `switch.roundtrip`: two equal-priority tempi threads on one real-time CPU yielding to each
//!   other (A -> B -> A), against two OS threads pinned to one CPU handing a token through a
//!   mutex and condition variable (`switch.roundtrip.channel`: through two `mpsc` channels).
//! - `switch.accounting.thread` / `.group` / `.budget`: the same round trip with both threads
//!   in one thread set, under `Accounting::Thread`, `Accounting::Group`, and `Group` with a
//!   never-exhausted budget armed on the set, each against `Accounting::Off`. The variants run
//!   interleaved (Off, Thread, Group, Budget, Off, ...) so drift hits them alike.
//! - `budget.notify`: real-time overrun notification latency, from the instant a set's budget
//!   runs out to its handler starting, against a POSIX CPU-time timer whose real-time signal
//!   wakes a handler thread blocked in `sigtimedwait`.
//! - `spawn`: create a tempi thread from a thread, let it run to completion and join it,
//!   against `std::thread::spawn(|| {}).join()`.
//! - `lock.uncontended.<protocol>` (`km`, `bp`, `bpi`, `pcp`, `srp`): one tempi thread locking
//!   and unlocking a free [`tempi::sync::Mutex`], against `std::sync::Mutex` lock + unlock on a
//!   pinned OS thread; `lock.uncontended.<protocol>.pthread-pi` is the same tempi number against
//!   a pthread mutex with `PTHREAD_PRIO_INHERIT`. All seven variants run interleaved.
//! - `lock.handoff.bpi`: from a low-priority owner's unlock to the blocked high-priority waiter
//!   holding the lock (priority inheritance), against the same hand-off between two
//!   `SCHED_FIFO` OS threads on one CPU through a pthread PI mutex.
//! - `sim.events_per_sec` / `sim.jobs_per_sec`: throughput of the virtual-time simulator on a
//!   fixed periodic workload (see [`SIM_WORKLOAD`]).

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;
use tempi::clock::{RealClock, VirtualClock};
use tempi::policy::sched::Edf;
use tempi::sync::LockSpec;
use tempi::{
    Accounting, Budget, BudgetEvent, BudgetEventKind, Config, Runtime, SetId, ThreadOutcome, ThreadSpec, Time,
};

/// The CPU both tempi's dispatcher and the OS-thread peers are pinned to.
const BENCH_CPU: usize = 0;

/// `SCHED_FIFO` priority of both sides of `budget.notify` (the POSIX handler thread gets one
/// more, so it preempts the spinner the moment its signal arrives, as tempi's handler does).
const NOTIFY_FIFO: i32 = 10;

/// The budget the `budget.notify` member overruns, and how far past it each job works.
const NOTIFY_BUDGET: Duration = Duration::from_micros(200);
const NOTIFY_OVERRUN: Duration = Duration::from_micros(100);

/// The protocols `lock.uncontended.<protocol>` measures.
const LOCK_PROTOCOLS: [&str; 5] = ["km", "bp", "bpi", "pcp", "srp"];

/// Priority of the `lock.uncontended` thread, and the ceiling of its PCP and SRP locks.
const LOCK_PRIO: i32 = 1;

/// `lock.handoff.bpi`: priorities of the owner and of the more urgent waiter, used both as
/// tempi priorities and as the `SCHED_FIFO` priorities of the OS-thread peer.
const HANDOFF_LOW: i32 = 10;
const HANDOFF_HIGH: i32 = 20;

/// `lock.handoff.bpi`: period of tempi's waiter, sleep of the peer's waiter between hand-offs,
/// and how long the tempi owner works between looks at whether the waiter is blocked.
const HANDOFF_PERIOD: Duration = Duration::from_micros(100);
const HANDOFF_POLL: Duration = Duration::from_micros(2);

/// Number of periodic threads in the simulator workload.
const SIM_THREADS: u64 = 20;

/// Human description of the simulator workload, printed with its results.
const SIM_WORKLOAD: &str =
    "20 periodic threads on 1 CPU, EDF, periods 1..20 ms, wcet = 0.045 x period (U = 0.9), each job cx.work(wcet)";

/// How much work each benchmark does; `--quick` shrinks everything so a test can run it.
struct Sizes {
    reps: usize,
    switch_tempi: u64,
    switch_peer: u64,
    spawn_tempi: u64,
    spawn_peer: u64,
    sim_seconds: u64,
    /// Interleaved repetitions of every accounting variant (after one warm-up round).
    acct_reps: usize,
    acct_switches: u64,
    /// Overruns per `budget.notify` run, tempi side and POSIX side.
    notify_tempi: usize,
    notify_peer: usize,
    /// Lock + unlock pairs per `lock.uncontended` run, tempi side and OS-thread side.
    lock_tempi: u64,
    lock_peer: u64,
    /// Hand-offs per `lock.handoff.bpi` run, tempi side and OS-thread side.
    handoff_tempi: usize,
    handoff_peer: usize,
}

impl Sizes {
    fn new(quick: bool) -> Sizes {
        if quick {
            Sizes {
                reps: 3,
                switch_tempi: 20_000,
                switch_peer: 2_000,
                spawn_tempi: 2_000,
                spawn_peer: 300,
                sim_seconds: 5,
                acct_reps: 3,
                acct_switches: 20_000,
                notify_tempi: 100,
                notify_peer: 8,
                lock_tempi: 5_000,
                lock_peer: 50_000,
                handoff_tempi: 100,
                handoff_peer: 30,
            }
        } else {
            Sizes {
                reps: 5,
                switch_tempi: 300_000,
                switch_peer: 40_000,
                spawn_tempi: 30_000,
                spawn_peer: 4_000,
                sim_seconds: 200,
                acct_reps: 31,
                acct_switches: 100_000,
                notify_tempi: 500,
                notify_peer: 40,
                lock_tempi: 200_000,
                lock_peer: 2_000_000,
                handoff_tempi: 2_000,
                handoff_peer: 1_000,
            }
        }
    }
}

/// One line of the result. Comparison metrics fill `tempi_ns`/`peer`/`peer_ns`/`ratio`,
/// throughput metrics fill `value`/`unit`.
#[derive(Serialize, Debug, Clone)]
struct Metric {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    tempi_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peer_ns: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    ratio: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    unit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<String>,
}

#[derive(Serialize)]
struct Report {
    metrics: Vec<Metric>,
}

fn round_to(x: f64, decimals: i32) -> f64 {
    let f = 10f64.powi(decimals);
    (x * f).round() / f
}

fn compare(name: &str, tempi_ns: f64, peer: &str, peer_ns: f64, note: Option<String>) -> Metric {
    // Round first and derive the ratio from the rounded values, so a reader can recompute it.
    let tempi_ns = round_to(tempi_ns, 1);
    let peer_ns = round_to(peer_ns, 1);
    let ratio = if tempi_ns > 0.0 { round_to(peer_ns / tempi_ns, 3) } else { 0.0 };
    Metric {
        name: name.into(),
        tempi_ns: Some(tempi_ns),
        peer: Some(peer.into()),
        peer_ns: Some(peer_ns),
        ratio: Some(ratio),
        value: None,
        unit: None,
        note,
    }
}

/// An overhead metric: tempi with a feature against tempi without it. Here
/// `ratio = tempi_ns / peer_ns`, the overhead factor (above 1 means the feature costs time).
fn overhead(name: &str, with_ns: f64, without: &str, without_ns: f64, note: String) -> Metric {
    let tempi_ns = round_to(with_ns, 1);
    let peer_ns = round_to(without_ns, 1);
    let ratio = if peer_ns > 0.0 { round_to(tempi_ns / peer_ns, 3) } else { 0.0 };
    Metric {
        name: name.into(),
        tempi_ns: Some(tempi_ns),
        peer: Some(without.into()),
        peer_ns: Some(peer_ns),
        ratio: Some(ratio),
        value: None,
        unit: None,
        note: Some(note),
    }
}

/// Whether a metric's ratio is an overhead factor (tempi / peer) rather than a speed-up.
fn is_overhead(m: &Metric) -> bool {
    m.name.starts_with("switch.accounting.")
}

fn throughput(name: &str, value: f64, unit: &str, note: &str) -> Metric {
    Metric {
        name: name.into(),
        tempi_ns: None,
        peer: None,
        peer_ns: None,
        ratio: None,
        value: Some(value.round()),
        unit: Some(unit.into()),
        note: Some(note.into()),
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// Warm up once, then take the median of `reps` runs of `f` (each returns one sample).
fn sample(reps: usize, mut f: impl FnMut() -> Result<f64, String>) -> Result<f64, String> {
    f()?;
    let mut xs = Vec::with_capacity(reps);
    for _ in 0..reps {
        xs.push(f()?);
    }
    Ok(median(xs))
}

/// Like [`sample`] for runs that keep their raw data: the median of `value(run)` over the
/// repetitions, and every run (the warm-up first) for the notes.
fn sample_runs<R>(
    reps: usize,
    mut run: impl FnMut() -> Result<R, String>,
    value: impl Fn(&R) -> &[f64],
) -> Result<(f64, Vec<R>), String> {
    let mut runs = Vec::with_capacity(reps + 1);
    let m = sample(reps, || {
        let r = run()?;
        let m = median(value(&r).to_vec());
        runs.push(r);
        Ok(m)
    })?;
    Ok((m, runs))
}

fn progress(msg: &str) {
    eprintln!("bench: {msg}");
}

// ----- OS helpers ---------------------------------------------------------------------------

/// Pin the calling OS thread to `cpu`, as tempi's dispatchers are pinned.
fn pin_current(cpu: usize) -> Result<(), String> {
    tempi::os::pin_to_cpu(cpu).map_err(|e| e.to_string())
}

/// Run `a` and `b` on two OS threads, each first pinned to `BENCH_CPU`. Returns what `a`
/// returned and the pinning errors, if any.
fn pinned_pair<A, B>(a: A, b: B) -> Result<(f64, Vec<String>), String>
where
    A: FnOnce() -> f64 + Send + 'static,
    B: FnOnce() + Send + 'static,
{
    let hb = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        b();
        pinned
    });
    let ha = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        (a(), pinned)
    });
    let (ns, pa) = ha.join().map_err(|_| "peer thread panicked".to_string())?;
    let pb = hb.join().map_err(|_| "peer thread panicked".to_string())?;
    let notes = [pa, pb].into_iter().filter_map(Result::err).collect();
    Ok((ns, notes))
}

// ----- switch.roundtrip ---------------------------------------------------------------------

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

/// Peer: two pinned OS threads passing a token through `Mutex<bool>` + `Condvar`.
fn condvar_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    // `true`: A's turn; `false`: B's turn.
    let pair = Arc::new((Mutex::new(true), Condvar::new()));
    let pb = pair.clone();
    let b = move || {
        let (m, cv) = &*pb;
        for _ in 0..=n {
            let mut turn = m.lock().unwrap();
            while *turn {
                turn = cv.wait(turn).unwrap();
            }
            *turn = true;
            cv.notify_one();
        }
    };
    let a = move || {
        let (m, cv) = &*pair;
        let mut t0 = Instant::now();
        for i in 0..=n {
            // Round 0 is a warm-up that also waits for B to be running.
            if i == 1 {
                t0 = Instant::now();
            }
            let mut turn = m.lock().unwrap();
            *turn = false;
            cv.notify_one();
            while !*turn {
                turn = cv.wait(turn).unwrap();
            }
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    };
    pinned_pair(a, b)
}

/// Peer: two pinned OS threads passing a token through two `mpsc` channels.
fn channel_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    let (to_b, from_a) = mpsc::channel::<u64>();
    let (to_a, from_b) = mpsc::channel::<u64>();
    let b = move || {
        while let Ok(x) = from_a.recv() {
            if to_a.send(black_box(x)).is_err() {
                break;
            }
        }
    };
    let a = move || {
        let mut t0 = Instant::now();
        for i in 0..=n {
            if i == 1 {
                t0 = Instant::now();
            }
            to_b.send(i).expect("peer alive");
            black_box(from_b.recv().expect("peer alive"));
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        // Dropping `to_b` ends B's loop.
        drop(to_b);
        ns
    };
    pinned_pair(a, b)
}

// ----- switch.accounting --------------------------------------------------------------------

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

// ----- budget.notify ------------------------------------------------------------------------

/// The `p`-th percentile (0..=100, nearest rank) of `xs`.
fn percentile(mut xs: Vec<f64>, p: f64) -> f64 {
    if xs.is_empty() {
        return 0.0;
    }
    xs.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * xs.len() as f64).ceil() as usize;
    xs[rank.clamp(1, xs.len()) - 1]
}

/// Latencies of one `budget.notify` run, in ns, one entry per overrun.
#[derive(Default)]
struct NotifyRun {
    /// From the instant the budget (or CPU-time timer) ran out to the handler running.
    total: Vec<f64>,
    /// The consumer's own clock past the limit when noticed: tempi's group clock at the
    /// handler minus the limit; the spinner's CPU clock read by the woken handler thread minus
    /// the timer value.
    clock: Vec<f64>,
    /// tempi only: from the dispatcher noticing (the event's `at`) to the handler's first line.
    entry: Vec<f64>,
    notes: Vec<String>,
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

/// Thin wrappers over the POSIX calls the `budget.notify` peer needs, one `unsafe` block each.
mod posix {
    use std::time::Duration;

    fn os_error(what: &str) -> String {
        format!("{what}: {}", std::io::Error::last_os_error())
    }

    /// Put the calling thread under `SCHED_FIFO` at `priority`.
    pub fn set_fifo(priority: i32) -> Result<(), String> {
        let param = libc::sched_param { sched_priority: priority };
        // SAFETY: pid 0 names the calling thread; `param` is a valid sched_param that outlives
        // the call, which only reads it.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) };
        if rc == 0 {
            Ok(())
        } else {
            Err(os_error("sched_setscheduler"))
        }
    }

    /// A pthread mutex with `PTHREAD_PRIO_INHERIT`: a waiter lends its priority to the owner
    /// (Linux: a PI futex, so an uncontended lock or unlock stays in user space). Boxed, so it
    /// never moves once initialised.
    pub struct PiMutex(Box<std::cell::UnsafeCell<libc::pthread_mutex_t>>);

    // SAFETY: a pthread mutex exists to be locked and unlocked from several threads; the value
    // is only ever touched through pthread calls, never read or written directly.
    unsafe impl Send for PiMutex {}
    // SAFETY: as above; every access goes through pthread_mutex_lock / _unlock.
    unsafe impl Sync for PiMutex {}

    impl PiMutex {
        pub fn new() -> Result<PiMutex, String> {
            let m = Box::new(std::cell::UnsafeCell::new(libc::PTHREAD_MUTEX_INITIALIZER));
            // SAFETY: pthread_mutexattr_t is plain data, and pthread_mutexattr_init initialises
            // it before any other use; it is destroyed once, after the mutex is initialised
            // (the mutex does not keep a reference to it). The mutex lives in a Box that is
            // neither moved nor freed while the PiMutex exists, and `m.get()` is valid for
            // writes.
            let rc = unsafe {
                let mut attr: libc::pthread_mutexattr_t = std::mem::zeroed();
                let mut rc = libc::pthread_mutexattr_init(&mut attr);
                if rc == 0 {
                    rc = libc::pthread_mutexattr_setprotocol(&mut attr, libc::PTHREAD_PRIO_INHERIT);
                    if rc == 0 {
                        rc = libc::pthread_mutex_init(m.get(), &attr);
                    }
                    libc::pthread_mutexattr_destroy(&mut attr);
                }
                rc
            };
            if rc == 0 {
                Ok(PiMutex(m))
            } else {
                Err(format!("PTHREAD_PRIO_INHERIT mutex: {}", std::io::Error::from_raw_os_error(rc)))
            }
        }

        #[inline]
        pub fn lock(&self) {
            // SAFETY: the mutex was initialised in `new`, has not moved (boxed) and is destroyed
            // only in Drop, which cannot run while `&self` is alive.
            let rc = unsafe { libc::pthread_mutex_lock(self.0.get()) };
            assert_eq!(rc, 0, "pthread_mutex_lock");
        }

        /// Callers unlock only what they locked.
        #[inline]
        pub fn unlock(&self) {
            // SAFETY: as in `lock`; the benchmark unlocks only from the thread that locked.
            let rc = unsafe { libc::pthread_mutex_unlock(self.0.get()) };
            assert_eq!(rc, 0, "pthread_mutex_unlock");
        }
    }

    impl Drop for PiMutex {
        fn drop(&mut self) {
            // SAFETY: initialised in `new`, destroyed exactly once, here; `&mut self` means no
            // thread can be using it.
            unsafe { libc::pthread_mutex_destroy(self.0.get()) };
        }
    }

    /// The calling thread's CPU-time clock and its kernel thread id.
    pub fn this_thread() -> Result<(libc::clockid_t, libc::pid_t), String> {
        let mut clock: libc::clockid_t = 0;
        // SAFETY: pthread_self() names the calling thread, alive for the whole call; `clock` is
        // a valid, writable clockid_t. gettid has no preconditions.
        let (rc, tid) = unsafe { (libc::pthread_getcpuclockid(libc::pthread_self(), &mut clock), libc::gettid()) };
        if rc == 0 {
            Ok((clock, tid))
        } else {
            Err(format!("pthread_getcpuclockid: {}", std::io::Error::from_raw_os_error(rc)))
        }
    }

    /// Read `clock` in nanoseconds.
    pub fn read(clock: libc::clockid_t) -> Result<u64, String> {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec; an invalid clock id is reported through the
        // return value, not by touching other memory.
        let rc = unsafe { libc::clock_gettime(clock, &mut ts) };
        if rc == 0 {
            Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
        } else {
            Err(os_error("clock_gettime"))
        }
    }

    /// A signal blocked in the calling thread, so that it stays pending until accepted.
    pub struct BlockedSignal {
        set: libc::sigset_t,
    }

    impl BlockedSignal {
        /// Block `sig` in the calling thread (other threads keep their masks).
        pub fn new(sig: libc::c_int) -> Result<BlockedSignal, String> {
            // SAFETY: sigset_t is a plain bit array for which all-zero is a valid value;
            // sigemptyset and sigaddset write only into `set`, which we own; pthread_sigmask
            // reads `set` and changes only the calling thread's mask (old mask not wanted:
            // null is allowed).
            let (set, rc) = unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                let rc = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
                (set, rc)
            };
            if rc == 0 {
                Ok(BlockedSignal { set })
            } else {
                Err(format!("pthread_sigmask: {}", std::io::Error::from_raw_os_error(rc)))
            }
        }

        /// Wait for the signal; `false` if `timeout` passed first.
        pub fn wait(&self, timeout: Duration) -> Result<bool, String> {
            let ts = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as _ };
            loop {
                // SAFETY: `self.set` is an initialised sigset_t; a null siginfo pointer is
                // allowed (we do not need the details); `ts` is a valid timespec. All three
                // outlive the call.
                let rc = unsafe { libc::sigtimedwait(&self.set, std::ptr::null_mut(), &ts) };
                if rc >= 0 {
                    return Ok(true);
                }
                match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) => return Ok(false),
                    Some(libc::EINTR) => continue,
                    _ => return Err(os_error("sigtimedwait")),
                }
            }
        }
    }

    /// A POSIX timer on a CPU-time clock that sends a signal to one thread when it expires.
    pub struct CpuTimer(libc::timer_t);

    impl CpuTimer {
        /// A disarmed timer on `clock` that sends `sig` to thread `tid` (`SIGEV_THREAD_ID`).
        pub fn new(clock: libc::clockid_t, sig: libc::c_int, tid: libc::pid_t) -> Result<CpuTimer, String> {
            let mut timer: libc::timer_t = std::ptr::null_mut();
            // SAFETY: sigevent is plain data for which all-zero is valid; we then fill in the
            // fields SIGEV_THREAD_ID needs. timer_create only reads `ev` and writes the new
            // timer's id into `timer`, both valid for the call.
            let rc = unsafe {
                let mut ev: libc::sigevent = std::mem::zeroed();
                ev.sigev_notify = libc::SIGEV_THREAD_ID;
                ev.sigev_signo = sig;
                ev.sigev_notify_thread_id = tid;
                libc::timer_create(clock, &mut ev, &mut timer)
            };
            if rc == 0 {
                Ok(CpuTimer(timer))
            } else {
                Err(os_error("timer_create"))
            }
        }

        /// Expire once, when the clock reaches `at_ns`.
        pub fn arm_at(&self, at_ns: u64) -> Result<(), String> {
            let value = libc::timespec {
                tv_sec: (at_ns / 1_000_000_000) as libc::time_t,
                tv_nsec: (at_ns % 1_000_000_000) as _,
            };
            let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: value };
            // SAFETY: `self.0` came from a successful timer_create and is deleted only in Drop;
            // `spec` is valid for the call; the old value is not wanted (null is allowed).
            let rc = unsafe { libc::timer_settime(self.0, libc::TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
            if rc == 0 {
                Ok(())
            } else {
                Err(os_error("timer_settime"))
            }
        }
    }

    impl Drop for CpuTimer {
        fn drop(&mut self) {
            // SAFETY: `self.0` came from a successful timer_create and is deleted exactly once,
            // here.
            unsafe { libc::timer_delete(self.0) };
        }
    }
}

/// Peer: the POSIX route the seed paper compares against. A spinner thread (the consumer)
/// runs; a POSIX timer on its CPU-time clock (`pthread_getcpuclockid`) is armed at its current
/// CPU time plus [`NOTIFY_BUDGET`] and sends `SIGRTMIN` to a handler thread
/// (`SIGEV_THREAD_ID`) that has the signal blocked and waits in `sigtimedwait`. Both threads
/// are pinned to [`BENCH_CPU`], the spinner under `SCHED_FIFO` [`NOTIFY_FIFO`], the handler
/// one above. The first overrun is a warm-up and is dropped.
///
/// The spinner reads its CPU clock and the wall clock together when it starts spinning, so the
/// wall instant its CPU clock reached the timer value is known; the handler thread reads the
/// wall clock first thing after waking, then the spinner's CPU clock.
fn posix_notify(overruns: usize) -> Result<NotifyRun, String> {
    let base = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    // Where the spinner's timeline starts: (wall ns since `base`, own CPU-time ns).
    let start_wall = Arc::new(AtomicU64::new(0));
    let start_cpu = Arc::new(AtomicU64::new(0));
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(libc::clockid_t, Vec<String>), String>>();
    let (s_stop, s_wall, s_cpu) = (stop.clone(), start_wall.clone(), start_cpu.clone());
    let spinner = std::thread::spawn(move || {
        let mut notes = Vec::new();
        if let Err(e) = pin_current(BENCH_CPU) {
            notes.push(format!("spinner not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(NOTIFY_FIFO) {
            notes.push(format!("spinner: SCHED_FIFO refused ({e})"));
        }
        let clock = match posix::this_thread() {
            Ok((clock, _)) => clock,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        let _ = ready_tx.send(Ok((clock, notes)));
        while go_rx.recv().is_ok() {
            let w0 = base.elapsed().as_nanos() as u64;
            let c = posix::read(clock).unwrap_or(0);
            let w1 = base.elapsed().as_nanos() as u64;
            s_wall.store(w0 + (w1 - w0) / 2, Ordering::Relaxed);
            s_cpu.store(c, Ordering::Release);
            // Spin until the handler thread has run (or, should the timer never fire, 2 s).
            let cap = Instant::now() + Duration::from_secs(2);
            while !s_stop.load(Ordering::Acquire) && Instant::now() < cap {
                std::hint::spin_loop();
            }
            if done_tx.send(()).is_err() {
                break;
            }
        }
    });
    let waiter = std::thread::spawn(move || -> Result<NotifyRun, String> {
        let mut run = NotifyRun::default();
        if let Err(e) = pin_current(BENCH_CPU) {
            run.notes.push(format!("handler thread not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(NOTIFY_FIFO + 1) {
            run.notes.push(format!("handler thread: SCHED_FIFO refused ({e})"));
        }
        let sig = libc::SIGRTMIN();
        let blocked = posix::BlockedSignal::new(sig)?;
        let (_, tid) = posix::this_thread()?;
        let (clock, spin_notes) = ready_rx.recv().map_err(|_| "spinner thread died".to_string())??;
        run.notes.extend(spin_notes);
        let timer = posix::CpuTimer::new(clock, sig, tid)?;
        let budget = NOTIFY_BUDGET.as_nanos() as u64;
        for i in 0..=overruns {
            // Linux checks CPU-time timers at the scheduler tick. Back to back, every overrun
            // would start just after the tick that ended the previous one, so its delay would
            // always be nearly a full tick; a pause spread evenly over [0, 4 ms) (golden-ratio
            // sequence) puts the overrun at every phase of a 250 Hz or 1000 Hz tick instead.
            let phase = (i as f64 * 0.618_033_988_75).fract();
            std::thread::sleep(Duration::from_secs_f64(phase * 0.004));
            // The spinner is parked (or preempted by us on the shared CPU): its clock is still.
            let expiry = posix::read(clock)? + budget;
            timer.arm_at(expiry)?;
            stop.store(false, Ordering::Release);
            go_tx.send(()).map_err(|_| "spinner thread died".to_string())?;
            let fired = blocked.wait(Duration::from_secs(1));
            let woke = base.elapsed().as_nanos() as i64;
            let cpu_then = posix::read(clock);
            stop.store(true, Ordering::Release);
            done_rx.recv().map_err(|_| "spinner thread died".to_string())?;
            if !fired? {
                return Err("budget.notify: the POSIX CPU-time timer did not fire within 1 s".into());
            }
            let cpu_then = cpu_then? as i64;
            if i == 0 {
                continue;
            }
            let (c0, w0) = (start_cpu.load(Ordering::Acquire) as i64, start_wall.load(Ordering::Relaxed) as i64);
            let expired_wall = w0 + (expiry as i64 - c0);
            run.total.push((woke - expired_wall) as f64);
            run.clock.push((cpu_then - expiry as i64) as f64);
        }
        drop(timer);
        // Dropping `go_tx` ends the spinner's loop.
        Ok(run)
    });
    let run = waiter.join().map_err(|_| "peer thread panicked".to_string())?;
    spinner.join().map_err(|_| "peer thread panicked".to_string())?;
    run
}

// ----- lock.uncontended ---------------------------------------------------------------------

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
    if matches!(protocol, "pcp" | "srp") {
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

/// Run `f` on an OS thread pinned to [`BENCH_CPU`]; returns its result and the pinning error.
fn on_pinned_thread(f: impl FnOnce() -> f64 + Send + 'static) -> Result<(f64, Vec<String>), String> {
    let h = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        (f(), pinned)
    });
    let (ns, pinned) = h.join().map_err(|_| "peer thread panicked".to_string())?;
    Ok((ns, pinned.err().into_iter().collect()))
}

/// Peer: `std::sync::Mutex` lock + unlock `n` times on a pinned OS thread.
fn std_uncontended(n: u64) -> Result<(f64, Vec<String>), String> {
    on_pinned_thread(move || {
        let m = Mutex::new(0u64);
        drop(m.lock());
        let t0 = Instant::now();
        for _ in 0..n {
            drop(black_box(black_box(&m).lock()));
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    })
}

/// Peer: pthread mutex with `PTHREAD_PRIO_INHERIT`, lock + unlock `n` times on a pinned OS
/// thread.
fn pthread_pi_uncontended(n: u64) -> Result<(f64, Vec<String>), String> {
    let m = posix::PiMutex::new()?;
    on_pinned_thread(move || {
        m.lock();
        m.unlock();
        let t0 = Instant::now();
        for _ in 0..n {
            let m = black_box(&m);
            m.lock();
            m.unlock();
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    })
}

/// Medians of every `lock.uncontended` variant (the tempi protocols, then `std`, then pthread
/// PI), interleaved over `reps` rounds after a warm-up round, and the pinning notes.
fn uncontended_all(reps: usize, tempi_n: u64, peer_n: u64) -> Result<(Vec<f64>, Vec<String>), String> {
    let variants: Vec<LockVariant> = LOCK_PROTOCOLS
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

// ----- lock.handoff.bpi ---------------------------------------------------------------------

/// What the owner and the waiter of a hand-off share.
#[derive(Default)]
struct HandoffState {
    /// Set by the waiter just before it asks for the lock. On one CPU the waiter, the more
    /// urgent of the two, runs until it blocks, so when the owner sees the flag the waiter is
    /// blocked on the lock.
    waiting: AtomicBool,
    /// Raw clock reading ([`RealClock::raw`]) the owner takes right before unlocking to a
    /// waiter; 0: none. Both ends read the raw counter and convert after the interval, so
    /// the clock's own arithmetic stays out of what is measured (on both sides).
    unlock_at: AtomicU64,
    /// The waiter has finished: the owner stops.
    done: AtomicBool,
}

/// Latencies of one hand-off run (ns) and its notes.
#[derive(Default)]
struct HandoffRun {
    lat: Vec<f64>,
    notes: Vec<String>,
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
    let m = Arc::new(rt.create_mutex((), LockSpec::new("m").protocol("bpi")).map_err(|e| e.to_string())?);
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

/// Peer: two OS threads pinned to [`BENCH_CPU`], the owner under `SCHED_FIFO` [`HANDOFF_LOW`]
/// and the waiter under `SCHED_FIFO` [`HANDOFF_HIGH`], sharing a `PTHREAD_PRIO_INHERIT`
/// mutex. The owner holds it and spins; the waiter sleeps [`HANDOFF_PERIOD`], wakes
/// (preempting the owner), and blocks on the mutex (the kernel boosts the owner). The owner
/// sees it waiting, reads the clock and unlocks; the kernel hands the mutex to the waiter, which
/// preempts the owner and reads the clock. Both read the same [`RealClock`].
fn pthread_handoff(n: usize) -> Result<HandoffRun, String> {
    let m = Arc::new(posix::PiMutex::new()?);
    let st = Arc::new(HandoffState::default());
    let clock = RealClock::starting_now();
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let (hm, hs, hc) = (m.clone(), st.clone(), clock.clone());
    let high = std::thread::spawn(move || {
        let mut run = HandoffRun { lat: Vec::with_capacity(n), notes: Vec::new() };
        if let Err(e) = pin_current(BENCH_CPU) {
            run.notes.push(format!("waiter not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(HANDOFF_HIGH) {
            run.notes.push(format!("waiter: SCHED_FIFO refused ({e}), measured under the default policy"));
        }
        let _ = ready_tx.send(());
        // Bounded, should the owner never be holding the mutex when the waiter wakes.
        for _ in 0..n * 4 + 16 {
            if run.lat.len() >= n {
                break;
            }
            std::thread::sleep(HANDOFF_PERIOD);
            hs.waiting.store(true, Ordering::SeqCst);
            hm.lock();
            let t = hc.raw();
            hs.waiting.store(false, Ordering::SeqCst);
            let u = hs.unlock_at.swap(0, Ordering::SeqCst);
            hm.unlock();
            if u != 0 {
                run.lat.push(hc.raw_delta(u, t).as_nanos() as f64);
            }
        }
        hs.done.store(true, Ordering::SeqCst);
        run
    });
    // The owner spins under SCHED_FIFO on the waiter's CPU: start it only once the waiter is
    // pinned and real-time, or the waiter could starve behind it.
    let _ = ready_rx.recv();
    let low = std::thread::spawn(move || {
        let mut notes = Vec::new();
        if let Err(e) = pin_current(BENCH_CPU) {
            notes.push(format!("owner not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(HANDOFF_LOW) {
            notes.push(format!("owner: SCHED_FIFO refused ({e}), measured under the default policy"));
        }
        while !st.done.load(Ordering::SeqCst) {
            m.lock();
            while !st.waiting.load(Ordering::SeqCst) && !st.done.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            if st.waiting.load(Ordering::SeqCst) {
                st.unlock_at.store(clock.raw().max(1), Ordering::SeqCst);
            }
            m.unlock();
        }
        notes
    });
    let mut run = high.join().map_err(|_| "peer thread panicked".to_string())?;
    run.notes.extend(low.join().map_err(|_| "peer thread panicked".to_string())?);
    if run.lat.len() < n / 2 {
        return Err(format!("lock.handoff.bpi: only {} of {n} pthread hand-offs found the mutex held", run.lat.len()));
    }
    Ok(run)
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

// ----- spawn --------------------------------------------------------------------------------

/// tempi: one thread spawning and joining `n` empty threads, one at a time.
fn tempi_spawn(n: u64) -> Result<f64, String> {
    let cfg = Config::new(1).trace_capacity(0).pin(true);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let ns = Arc::new(AtomicU64::new(0));
    let out_ns = ns.clone();
    rt.spawn(ThreadSpec::new("main"), move |cx| {
        let t0 = Instant::now();
        for _ in 0..n {
            let c = cx.spawn(ThreadSpec::new("c"), |_| {}).expect("spawn");
            black_box(cx.join(c).expect("join"));
        }
        out_ns.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64 / n as f64)
}

/// Peer: `std::thread::spawn(|| {}).join()` `n` times from a thread pinned to the same CPU
/// (children inherit the affinity, as tempi's threads share their dispatcher's CPU).
fn os_spawn(n: u64) -> Result<(f64, Vec<String>), String> {
    let h = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        let t0 = Instant::now();
        for _ in 0..n {
            std::thread::spawn(|| black_box(())).join().expect("empty thread");
        }
        (t0.elapsed().as_nanos() as f64 / n as f64, pinned)
    });
    let (ns, pinned) = h.join().map_err(|_| "peer thread panicked".to_string())?;
    Ok((ns, pinned.err().into_iter().collect()))
}

fn check_completed(out: &tempi::RunOutcome) -> Result<(), String> {
    for t in &out.threads {
        match &t.outcome {
            Some(ThreadOutcome::Completed) => {}
            other => return Err(format!("benchmark thread `{}` ended as {other:?}", t.name)),
        }
    }
    Ok(())
}

// ----- simulator throughput -----------------------------------------------------------------

struct SimSample {
    events: u64,
    jobs: u64,
    wall: Duration,
}

/// The trace records a run of the [`SIM_WORKLOAD`] writes, counted from the statistics the
/// kernel keeps: a spawn per thread, a release and a completion per job, and a run and a stop
/// per dispatch (each completed job is dispatched once, and once more after each preemption).
/// A thread still running when the run ends has a run record more, which the statistics do
/// not show: the count is exact to one record per CPU. The measured runs do not record a
/// trace; a recorded warm-up run checks this count against its trace.
fn sim_events(out: &tempi::RunOutcome) -> u64 {
    out.threads
        .iter()
        .map(|t| 1 + t.stats.released + t.stats.completed + 2 * (t.stats.completed + t.stats.preemptions))
        .sum()
}

/// Run the [`SIM_WORKLOAD`] for `seconds` of virtual time and time `run_until`; with
/// `traced`, record the trace and check [`sim_events`] against it.
fn sim_run(seconds: u64, traced: bool) -> Result<SimSample, String> {
    // Jobs per simulated second: sum over periods of 1000 / period_ms (about 3598). A job
    // writes a release, run, stop and completion record, plus a run/stop pair per preemption;
    // twelve per job leaves ample room.
    let jobs_per_sec: u64 = (1..=SIM_THREADS).map(|p| 1000 / p + 1).sum();
    let capacity = if traced { (seconds * jobs_per_sec * 12 + 4096) as usize } else { 0 };
    let cfg = Config::new(1).trace_capacity(capacity).scheduler(|| Box::new(Edf::new()));
    let mut rt = Runtime::<VirtualClock>::new(cfg).map_err(|e| e.to_string())?;
    for p in 1..=SIM_THREADS {
        let period = Duration::from_millis(p);
        let c = Duration::from_micros(45 * p);
        rt.spawn(ThreadSpec::new(format!("p{p}")).periodic(period).wcet(c), move |cx| cx.work(c))
            .map_err(|e| e.to_string())?;
    }
    let t0 = Instant::now();
    let out = rt.run_until(Time::from_secs(seconds)).map_err(|e| e.to_string())?;
    let wall = t0.elapsed();
    if out.trace_dropped != 0 {
        return Err(format!("simulator benchmark dropped {} trace records; capacity too small", out.trace_dropped));
    }
    if out.total_misses() != 0 {
        return Err(format!("simulator workload missed {} deadlines; it should be feasible", out.total_misses()));
    }
    let jobs = out.threads.iter().map(|t| t.stats.completed).sum();
    let events = sim_events(&out);
    if traced && !(events..=events + out.cpus as u64).contains(&(out.trace.len() as u64)) {
        return Err(format!(
            "simulator benchmark: {events} events counted from the statistics, {} trace records",
            out.trace.len()
        ));
    }
    // Freeing the trace is not part of the measurement.
    drop(black_box(out));
    Ok(SimSample { events, jobs, wall })
}

// ----- driver -------------------------------------------------------------------------------

/// The benchmark groups, in the order they run; `--only` takes these names.
pub const GROUPS: &[&str] =
    &["switch.roundtrip", "switch.accounting", "budget.notify", "spawn", "lock.uncontended", "lock.handoff", "sim"];

fn measure(quick: bool, only: &[String]) -> Result<Vec<Metric>, String> {
    let sz = Sizes::new(quick);
    let mut metrics = Vec::new();
    let wanted = |group: &str| only.is_empty() || only.iter().any(|o| o == group);

    if wanted("switch.roundtrip") {
        switch_metrics(&sz, &mut metrics)?;
    }
    if wanted("switch.accounting") {
        accounting_metrics(&sz, &mut metrics)?;
    }
    if wanted("budget.notify") {
        notify_metrics(&sz, &mut metrics)?;
    }
    if wanted("spawn") {
        spawn_metrics(&sz, &mut metrics)?;
    }
    if wanted("lock.uncontended") {
        uncontended_metrics(&sz, &mut metrics)?;
    }
    if wanted("lock.handoff") {
        handoff_metrics(&sz, &mut metrics)?;
    }
    if wanted("sim") {
        sim_metrics(&sz, &mut metrics)?;
    }
    Ok(metrics)
}

fn switch_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
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
        pin_note,
    ));

    Ok(())
}

fn accounting_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
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

fn notify_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
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

fn spawn_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("spawn: tempi, {} spawn+join x {}", sz.spawn_tempi, sz.reps));
    let t_spawn = sample(sz.reps, || tempi_spawn(sz.spawn_tempi))?;
    progress(&format!("spawn: std::thread peer, {} spawn+join x {}", sz.spawn_peer, sz.reps));
    let mut spawn_notes = Vec::new();
    let p_spawn = sample(sz.reps, || {
        let (ns, w) = os_spawn(sz.spawn_peer)?;
        spawn_notes = w;
        Ok(ns)
    })?;
    let spawn_note = (!spawn_notes.is_empty()).then(|| format!("peer not pinned: {}", spawn_notes.join("; ")));
    metrics.push(compare("spawn", t_spawn, "std::thread::spawn + join", p_spawn, spawn_note));

    Ok(())
}

fn uncontended_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!(
        "lock.uncontended: {} protocols + std + pthread PI interleaved, {} / {} lock+unlock x {} (+ warm-up round)",
        LOCK_PROTOCOLS.len(),
        sz.lock_tempi,
        sz.lock_peer,
        sz.reps
    ));
    let (lock_ns, lock_notes) = uncontended_all(sz.reps, sz.lock_tempi, sz.lock_peer)?;
    let (std_ns, pi_ns) = (lock_ns[LOCK_PROTOCOLS.len()], lock_ns[LOCK_PROTOCOLS.len() + 1]);
    let pin_problem = (!lock_notes.is_empty()).then(|| format!("peer could not pin: {}", lock_notes.join("; ")));
    for (i, p) in LOCK_PROTOCOLS.iter().enumerate() {
        let mut note = format!(
            "free lock, one thread, `drop(m.lock(cx))` in a loop; {} variants interleaved over {} rounds, medians; \
             pthread PI mutex {}",
            LOCK_PROTOCOLS.len() + 2,
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

fn handoff_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
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

fn sim_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    progress(&format!("sim: {} simulated s of the workload x {}", sz.sim_seconds, sz.reps));
    // Warm-up on a shorter run, recorded to check the event count, then keep every
    // repetition, untraced as `tempi simulate` runs without trace outputs, and take medians
    // of both rates.
    sim_run(sz.sim_seconds.div_ceil(5), true)?;
    let mut ev = Vec::with_capacity(sz.reps);
    let mut jobs = Vec::with_capacity(sz.reps);
    let mut last = None;
    for _ in 0..sz.reps {
        let s = sim_run(sz.sim_seconds, false)?;
        let secs = s.wall.as_secs_f64().max(1e-9);
        ev.push(s.events as f64 / secs);
        jobs.push(s.jobs as f64 / secs);
        last = Some(s);
    }
    let last = last.expect("at least one repetition");
    let note = format!(
        "{SIM_WORKLOAD}; trace off; {} simulated s per run, {} events (the trace records a traced run \
         writes) and {} jobs per run, median wall {:.3} s",
        sz.sim_seconds,
        last.events,
        last.jobs,
        last.events as f64 / median(ev.clone())
    );
    metrics.push(throughput("sim.events_per_sec", median(ev), "events/s", &note));
    metrics.push(throughput("sim.jobs_per_sec", median(jobs), "jobs/s", "same runs as sim.events_per_sec"));
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

fn fmt_ns(ns: f64) -> String {
    if ns >= 1_000_000.0 {
        format!("{:.2} ms", ns / 1_000_000.0)
    } else if ns >= 1_000.0 {
        format!("{:.2} us", ns / 1_000.0)
    } else {
        format!("{ns:.1} ns")
    }
}

fn fmt_rate(v: f64, unit: &str) -> String {
    if v >= 1e6 {
        format!("{:.2} M {unit}", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1} k {unit}", v / 1e3)
    } else {
        format!("{v:.0} {unit}")
    }
}

fn table(metrics: &[Metric]) -> String {
    let header = ["metric", "tempi", "peer", "peer time", "ratio"];
    let rows: Vec<[String; 5]> = metrics
        .iter()
        .map(|m| match (m.tempi_ns, m.peer_ns, m.ratio) {
            (Some(t), Some(p), Some(r)) => {
                let ratio = if is_overhead(m) {
                    format!("{r:.3}x ({:+.1}%)", (r - 1.0) * 100.0)
                } else if r < 1.0 {
                    // tempi slower than its peer: keep the digits that matter.
                    format!("{r:.3}x")
                } else {
                    format!("{r:.1}x")
                };
                [m.name.clone(), fmt_ns(t), m.peer.clone().unwrap_or_default(), fmt_ns(p), ratio]
            }
            _ => [
                m.name.clone(),
                fmt_rate(m.value.unwrap_or(0.0), m.unit.as_deref().unwrap_or("")),
                "-".into(),
                "-".into(),
                "-".into(),
            ],
        })
        .collect();
    let mut width = header.map(str::len);
    for r in &rows {
        for (w, cell) in width.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 5]| {
        let mut s = String::new();
        for (i, (cell, w)) in cells.iter().zip(width).enumerate() {
            // Text columns left-aligned, numbers right-aligned.
            if i == 0 || i == 2 {
                s.push_str(&format!("{cell:<w$}  "));
            } else {
                s.push_str(&format!("{cell:>w$}  "));
            }
        }
        s.trim_end().to_string()
    };
    let mut out = String::new();
    out.push_str(&line(header));
    out.push('\n');
    out.push_str(&"-".repeat(width.iter().sum::<usize>() + 2 * (width.len() - 1)));
    out.push('\n');
    for r in &rows {
        out.push_str(&line([&r[0], &r[1], &r[2], &r[3], &r[4]]));
        out.push('\n');
    }
    let notes: Vec<String> =
        metrics.iter().filter_map(|m| m.note.as_ref().map(|n| format!("  {}: {n}", m.name))).collect();
    if !notes.is_empty() {
        out.push_str("\nnotes:\n");
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out.push_str("\nratio = peer time / tempi time (how many times faster tempi is); medians of repeated runs.\n");
    if metrics.iter().any(is_overhead) {
        out.push_str(
            "except switch.accounting.*: ratio = tempi time / peer time, the overhead factor of the accounting \
             (above 1 = slower; +x% is the added switch time).\n",
        );
    }
    out
}

/// Run the benchmarks (every group, or those named in `only`, see [`GROUPS`]) and print a
/// table, or JSON with `json`.
pub fn run(json: bool, quick: bool, only: &[String]) -> Result<(), String> {
    let metrics = measure(quick, only)?;
    if json {
        let s = serde_json::to_string(&Report { metrics }).map_err(|e| e.to_string())?;
        println!("{s}");
    } else {
        print!("{}", table(&metrics));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 2.0, 3.0]), 2.5);
    }

    #[test]
    fn ratio_is_recomputable() {
        let m = compare("x", 123.456, "p", 9876.54, None);
        let r = m.peer_ns.unwrap() / m.tempi_ns.unwrap();
        assert!((m.ratio.unwrap() - r).abs() < 1e-3);
    }

    #[test]
    fn overhead_ratio_is_with_over_without() {
        let m = overhead("switch.accounting.group", 105.0, "off", 100.0, "n".into());
        assert_eq!(m.ratio, Some(1.05));
        assert!(table(&[m]).contains("1.050x (+5.0%)"));
    }

    #[test]
    fn percentile_nearest_rank() {
        let xs: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(xs.clone(), 99.0), 99.0);
        assert_eq!(percentile(xs, 100.0), 100.0);
        assert_eq!(percentile(vec![], 50.0), 0.0);
    }

    #[test]
    fn ratio_below_one_keeps_its_digits() {
        let m = compare("lock.uncontended.bpi", 200.0, "std", 5.0, None);
        assert!(table(&[m]).contains("0.025x"));
    }

    #[test]
    fn table_lists_every_metric() {
        let ms = vec![
            compare("switch.roundtrip", 100.0, "p", 5000.0, None),
            throughput("sim.events_per_sec", 1e6, "events/s", "w"),
        ];
        let t = table(&ms);
        assert!(t.contains("switch.roundtrip") && t.contains("50.0x") && t.contains("1.00 M events/s"));
    }
}
