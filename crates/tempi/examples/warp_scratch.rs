use std::time::Instant;
use tempi::clock::RealClock;
use tempi::warp::{phold::Phold, sequential, Committed, Engine, ParallelSpec, Schedule, WarpConfig};
use tempi::{Config, Runtime};

const M: Phold = Phold { lps: 1000, remote_fraction: 0.1, lookahead: 1, mean_delay: 8 };
fn cfg(workers: usize, end: u64, gi: usize) -> WarpConfig {
    WarpConfig {
        workers,
        history_per_lp: 64,
        events_per_worker: std::env::var("P").map(|s| s.parse().unwrap()).unwrap_or(16384),
        max_sends_per_event: 1,
        outbox_capacity: 4096,
        inbox_capacity: std::env::var("I").map(|s| s.parse().unwrap()).unwrap_or(4096),
        lookahead: 1,
        end_time: end,
        seed: 1,
        gvt_interval: gi,
        log_capacity: 0,
        lazy_cancellation: std::env::var("LAZY").is_ok(),
    }
}
fn count(n: &mut u64, _c: &Committed<'_, Phold>) {
    *n += 1;
}
fn main() {
    let end: u64 = std::env::args().nth(1).map(|s| s.parse().unwrap()).unwrap_or(800);
    let gi: usize = std::env::args().nth(2).map(|s| s.parse().unwrap()).unwrap_or(512);
    RealClock::calibrate();
    let t = Instant::now();
    let s = sequential(&M.scenario(4, 1, 1), &cfg(1, end, gi), |_| {}).unwrap();
    let seq = t.elapsed().as_secs_f64() * 1e9 / s.committed as f64;
    println!("seq {seq:.1} ns/ev ({} ev)", s.committed);
    for w in [1usize, 2] {
        let mut e = Engine::new(M.scenario(4, w, 1), cfg(w, end, gi)).unwrap();
        let t = Instant::now();
        let o = e.run(Schedule::RoundRobin, |_| {}).unwrap();
        println!(
            "engine.run w={w} {:.1} ns/ev eff {:.3} rounds {}",
            t.elapsed().as_secs_f64() * 1e9 / o.committed as f64,
            o.efficiency(),
            o.gvt_rounds
        );
    }
    for w in [1usize, 2] {
        let e = Engine::new(M.scenario(4, w, 1), cfg(w, end, gi)).unwrap();
        let mut rt = Runtime::<RealClock>::new(Config::new(w).trace_capacity(0).pin(true)).unwrap();
        let p = e.spawn_on(&mut rt, ParallelSpec::default(), vec![0u64; w], count).unwrap();
        let t = Instant::now();
        rt.run().unwrap();
        let el = t.elapsed().as_secs_f64();
        let (e, _) = p.finish().unwrap();
        let o = e.outcome();
        println!(
            "parallel w={w} {:.1} ns/ev eff {:.3} rounds {} blocked {} actions {}",
            el * 1e9 / o.committed as f64,
            o.efficiency(),
            o.gvt_rounds,
            o.blocked_steps,
            o.actions
        );
    }
}
