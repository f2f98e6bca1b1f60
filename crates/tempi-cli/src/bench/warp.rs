//! The `warp.*` metrics: the Time Warp engine's cost of undoing work, its sequential speed and
//! its parallel speedup.
//!
//! - `warp.rollback`: a straggler cycle on a 1 KiB state. An LP on worker 1 has run an event
//!   ahead; a straggler from worker 0 arrives, the engine rolls the event back with its
//!   reverse handler, runs the straggler and re-runs the event. The peer does the same cycle
//!   by hand the way a program without an engine would: a fresh `Clone` of the state before
//!   each event, and on the straggler the clone put back, the straggler run, the event re-run.
//!   Both sides run the same handlers on the same state; `ratio = peer / tempi`.
//! - `warp.phold.seq`: committed PHOLD events per second in the sequential mode on one CPU
//!   (1,000 LPs, 4 events each, 10% remote, lookahead 1), a throughput with no peer.
//!
//! - `warp.phold.speedup`: the same PHOLD model (1,000 LPs, 4 events each, 10% remote) run
//!   optimistically on 2 real-time CPUs (one worker thread per CPU, `Engine::spawn_on`) against
//!   the sequential mode in the same run; ns per committed event on each side, the ratio is the
//!   speedup, and the note gives the efficiency (committed / processed).
//!
//! Owns the three workloads; it needs no real-time privilege.

use std::hint::black_box;
use std::time::Instant;

use tempi::clock::RealClock;
use tempi::warp::phold::Phold;
use tempi::warp::{
    sequential, Committed, Emit, Engine, EventKey, LpId, LpSpec, Model, ParallelSpec, Rollback, RunOutcome, Scenario,
    WarpConfig,
};
use tempi::{Config, Runtime};

use super::{compare, median, progress, throughput, Metric, Sizes};

/// Words of the rolled-back state: 128 x 8 bytes = 1 KiB.
const WORDS: usize = 128;
/// Ticks between an LP's own events in the straggler workload.
const PERIOD: u64 = 10;

/// The straggler workload. LP 0 (worker 0) runs at 0, 10, 20, ... and sends LP 1 a straggler
/// at `t + 1`; LP 1 (worker 1) runs its own chain at 2, 12, 22, ..., each event updating a
/// few words of its 1 KiB state.
struct Cycle;

#[derive(Clone, Debug, PartialEq)]
enum CycleEvent {
    /// LP 0's clock tick.
    Tick,
    /// LP 1's own chain.
    Work,
    /// The straggler for LP 1.
    Late,
}

/// The words one event changes, with their old values (what the reverse handler restores).
#[derive(Clone, Copy, Default)]
struct Changed {
    old: [(u16, u64); 4],
}

fn touch(state: &mut [u64], time: u64, changed: &mut Changed) {
    for (k, slot) in changed.old.iter_mut().enumerate() {
        let i = ((time as usize).wrapping_mul(31) + k * 37) % state.len();
        *slot = (i as u16, state[i]);
        state[i] = state[i].rotate_left(9) ^ time.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ k as u64;
    }
}

impl Model for Cycle {
    type State = Vec<u64>;
    type Event = CycleEvent;
    type Saved = Changed;
    const HAS_REVERSE: bool = true;

    fn event(
        &self,
        lp: LpId,
        state: &mut Vec<u64>,
        ev: &CycleEvent,
        saved: &mut Changed,
        out: &mut Emit<'_, CycleEvent>,
    ) {
        touch(state, out.time(), saved);
        match ev {
            CycleEvent::Tick => {
                out.send(LpId(1), out.time() + 1, CycleEvent::Late);
                out.send(lp, out.time() + PERIOD, CycleEvent::Tick);
            }
            CycleEvent::Work => {
                out.send(lp, out.time() + PERIOD, CycleEvent::Work);
            }
            CycleEvent::Late => {}
        }
    }

    fn reverse(&self, _: LpId, state: &mut Vec<u64>, _: &CycleEvent, saved: &Changed) {
        for &(i, old) in saved.old.iter().rev() {
            state[i as usize] = old;
        }
    }
}

/// Nanoseconds per straggler cycle through the engine.
fn engine_cycles(cycles: u64) -> Result<f64, String> {
    let mut s = Scenario::new(Cycle);
    s.add_lp(LpSpec { state: vec![0; 1], rollback: Rollback::Reverse, worker: 0 });
    s.add_lp(LpSpec { state: vec![0; WORDS], rollback: Rollback::Reverse, worker: 1 });
    s.schedule(LpId(0), 0, CycleEvent::Tick).map_err(|e| e.to_string())?;
    s.schedule(LpId(1), 2, CycleEvent::Work).map_err(|e| e.to_string())?;
    let config = WarpConfig {
        workers: 2,
        history_per_lp: 256,
        events_per_worker: 1024,
        inbox_capacity: 64,
        ..WarpConfig::default()
    };
    let mut e = Engine::new(s, config).map_err(|e| e.to_string())?;
    let err = |e: tempi::warp::WarpError| e.to_string();
    let t0 = Instant::now();
    for c in 0..cycles {
        e.step(1).map_err(err)?; // LP 1 runs ahead
        e.step(0).map_err(err)?; // LP 0 sends the straggler
        e.flush(0);
        e.step(1).map_err(err)?; // rollback, then the straggler
        e.step(1).map_err(err)?; // the re-run
        if c % 64 == 63 {
            e.collect(EventKey::MAX, |c| {
                black_box(c.key);
            })
            .map_err(err)?;
        }
    }
    let ns = t0.elapsed().as_nanos() as f64 / cycles as f64;
    let out = e.outcome();
    if out.rolled_back != cycles {
        return Err(format!("warp.rollback: {} rollbacks for {cycles} cycles", out.rolled_back));
    }
    black_box(e.state(LpId(1)));
    Ok(ns)
}

/// Nanoseconds per straggler cycle by hand: clone before each event, clone back on the
/// straggler, the same handler code.
fn clone_cycles(cycles: u64) -> f64 {
    let mut sender = vec![0u64; 1];
    let mut state = vec![0u64; WORDS];
    let mut changed = Changed::default();
    let t0 = Instant::now();
    for c in 0..cycles {
        let t = c * PERIOD;
        let before = state.clone(); // what a program keeps to be able to redo
        touch(&mut state, t + 2, &mut changed); // run ahead
        touch(&mut sender, t, &mut changed); // the sender's tick
        state = before; // the straggler: back to the fresh clone...
        touch(&mut state, t + 1, &mut changed); // ...run it...
        touch(&mut state, t + 2, &mut changed); // ...and re-run the event
        black_box(&state);
    }
    t0.elapsed().as_nanos() as f64 / cycles as f64
}

fn phold_run(end_time: u64) -> Result<(f64, u64), String> {
    let model = Phold { lps: 1000, remote_fraction: 0.1, lookahead: 1, mean_delay: 8 };
    let scenario = model.scenario(4, 1, 1);
    let config = WarpConfig { end_time, ..WarpConfig::default() };
    let mut committed = 0u64;
    let t0 = Instant::now();
    let out = sequential(&scenario, &config, |c| {
        committed += 1;
        black_box(c.key);
    })
    .map_err(|e| e.to_string())?;
    let secs = t0.elapsed().as_secs_f64();
    if out.committed != committed {
        return Err("warp.phold.seq: commit count mismatch".into());
    }
    Ok((committed as f64 / secs, committed))
}

/// The speedup workload: PHOLD, 1,000 LPs x 4 events, 10% remote, lookahead 1.
const SPEEDUP_MODEL: Phold = Phold { lps: 1000, remote_fraction: 0.1, lookahead: 1, mean_delay: 8 };

fn speedup_config(workers: usize, end_time: u64) -> WarpConfig {
    WarpConfig {
        workers,
        history_per_lp: 64,
        events_per_worker: 16_384,
        max_sends_per_event: 1,
        outbox_capacity: 4096,
        inbox_capacity: 4096,
        lookahead: 1,
        end_time,
        seed: 1,
        gvt_interval: 512,
        log_capacity: 0,
        lazy_cancellation: false,
    }
}

fn count(n: &mut u64, c: &Committed<'_, Phold>) {
    *n += 1;
    black_box(c.key);
}

/// Optimistic PHOLD on 2 real-time CPUs: seconds for the runtime's run (dispatcher start
/// included), the totals, and the commits the sinks saw.
fn phold_parallel(end_time: u64) -> Result<(f64, RunOutcome), String> {
    let err = |e: tempi::warp::WarpError| e.to_string();
    let scenario = SPEEDUP_MODEL.scenario(4, 2, 1);
    let engine = Engine::new(scenario, speedup_config(2, end_time)).map_err(err)?;
    let mut rt = Runtime::<RealClock>::new(Config::new(2).trace_capacity(0).pin(true)).map_err(|e| e.to_string())?;
    let par = engine.spawn_on(&mut rt, ParallelSpec::default(), vec![0u64; 2], count).map_err(err)?;
    let t0 = Instant::now();
    rt.run().map_err(|e| e.to_string())?;
    let secs = t0.elapsed().as_secs_f64();
    let (engine, sinks) = par.finish().map_err(err)?;
    let out = engine.outcome();
    if sinks.iter().sum::<u64>() != out.committed {
        return Err("warp.phold.speedup: commit count mismatch".into());
    }
    Ok((secs, out))
}

/// The same model in the sequential mode: seconds and events.
fn phold_sequential(end_time: u64) -> Result<(f64, u64), String> {
    let scenario = SPEEDUP_MODEL.scenario(4, 2, 1);
    let mut n = 0u64;
    let t0 = Instant::now();
    let out = sequential(&scenario, &speedup_config(2, end_time), |c| {
        n += 1;
        black_box(c.key);
    })
    .map_err(|e| e.to_string())?;
    Ok((t0.elapsed().as_secs_f64(), out.committed))
}

pub(super) fn warp_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    let cycles = sz.warp_cycles;
    progress(&format!("warp.rollback: {cycles} straggler cycles on a 1 KiB state, engine and clone"));
    engine_cycles(cycles / 10 + 1)?;
    clone_cycles(cycles / 10 + 1);
    let (mut tempi, mut peer) = (Vec::new(), Vec::new());
    for _ in 0..sz.reps {
        tempi.push(engine_cycles(cycles)?);
        peer.push(clone_cycles(cycles));
    }
    metrics.push(compare(
        "warp.rollback",
        median(tempi),
        "clone + redo",
        median(peer),
        Some(format!(
            "per straggler cycle on a {} B state: run ahead, straggler, undo, run it, re-run (engine: reverse \
             handler, anti-message for the undone send, heaps and GVT included; peer: a fresh Clone before \
             each event and the clone put back)",
            WORDS * 8
        )),
    ));
    progress(&format!("warp.phold.seq: sequential PHOLD up to time {}", sz.warp_phold_end));
    phold_run(sz.warp_phold_end / 10 + 1)?;
    let mut rates = Vec::new();
    let mut events = 0;
    for _ in 0..sz.reps {
        let (rate, n) = phold_run(sz.warp_phold_end)?;
        rates.push(rate);
        events = n;
    }
    metrics.push(throughput(
        "warp.phold.seq",
        median(rates),
        "events/s",
        &format!(
            "committed events per second, sequential mode, 1 CPU: PHOLD, 1000 LPs x 4 events, 10% remote, \
             lookahead 1, delay 1 + U[0, 16); {events} events per run (goal: 2 M/s)"
        ),
    ));
    let end = sz.warp_phold_end * 4;
    progress(&format!("warp.phold.speedup: PHOLD up to time {end}, optimistic on 2 real-time CPUs and sequential"));
    phold_parallel(end / 10 + 1)?;
    let (mut par, mut seq, mut eff) = (Vec::new(), Vec::new(), Vec::new());
    let mut events = 0;
    for _ in 0..sz.reps {
        let (secs, out) = phold_parallel(end)?;
        let (seq_secs, n) = phold_sequential(end)?;
        if out.committed != n {
            return Err(format!("warp.phold.speedup: {} committed, sequential {n}", out.committed));
        }
        events = n;
        par.push(secs * 1e9 / n as f64);
        seq.push(seq_secs * 1e9 / n as f64);
        eff.push(out.efficiency());
    }
    metrics.push(compare(
        "warp.phold.speedup",
        median(par),
        "sequential",
        median(seq),
        Some(format!(
            "ns per committed event: optimistic PHOLD on 2 real-time CPUs (whole run, dispatcher start \
             included) against the sequential mode, same model; 1000 LPs x 4 events, 10% remote, lookahead 1, \
             {events} events per run; efficiency (committed / processed) {:.3} (bar: ratio >= 1.3)",
            median(eff)
        )),
    ));
    Ok(())
}
