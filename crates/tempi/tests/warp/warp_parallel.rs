//! The engine on a runtime: two worker threads on two CPUs, truly parallel in real time,
//! interleaved by the kernel in virtual time. Whatever the model, the committed events (per
//! LP, in key order, with their sends) and the final states are the sequential mode's.

use std::time::Duration;

use proptest::prelude::*;
use tempi::warp::{phold::Phold, sequential, Committed, Engine, EventKey, LpId, ParallelSpec, Sent, WarpConfig};
use tempi::Runtime;

type PerLp = Vec<Vec<(EventKey, Vec<Sent>)>>;

fn record(sink: &mut Vec<(LpId, EventKey, Vec<Sent>)>, c: &Committed<'_, Phold>) {
    sink.push((c.lp, c.key, c.sent.to_vec()));
}

fn per_lp(lps: usize, sinks: Vec<Vec<(LpId, EventKey, Vec<Sent>)>>) -> PerLp {
    let mut out: PerLp = vec![Vec::new(); lps];
    for sink in sinks {
        for (lp, key, sent) in sink {
            out[lp.index()].push((key, sent));
        }
    }
    out
}

/// Runs PHOLD sequentially and on `rt`'s CPUs; checks commits, states and counters agree and
/// returns the parallel engine's totals.
fn agree<C: tempi::clock::Clock>(
    mut rt: Runtime<C>,
    model: Phold,
    population: u32,
    seed: u64,
    config: WarpConfig,
    spec: ParallelSpec,
) -> Result<tempi::warp::RunOutcome, TestCaseError> {
    let lps = model.lps as usize;
    let workers = config.workers;
    let mut expected: PerLp = vec![Vec::new(); lps];
    let seq = sequential(&model.scenario(population, workers, seed), &config, |c| {
        expected[c.lp.index()].push((c.key, c.sent.to_vec()))
    })
    .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let engine = Engine::new(model.scenario(population, workers, seed), config.clone())
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    let par = engine
        .spawn_on(&mut rt, spec, vec![Vec::new(); workers], record)
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    rt.run().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let (engine, sinks) = par.finish().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let got = per_lp(lps, sinks);
    for lp in 0..lps {
        prop_assert_eq!(&got[lp], &expected[lp], "commits of LP {}", lp);
        prop_assert_eq!(engine.state(LpId(lp as u32)).unwrap(), &seq.states[lp], "final state of LP {}", lp);
        let c = engine.counters(LpId(lp as u32)).unwrap();
        prop_assert_eq!(c.processed, c.committed + c.rolled_back);
    }
    let out = engine.outcome();
    prop_assert_eq!(out.committed, seq.committed);
    Ok(out)
}

fn config(workers: usize, history: usize, end_time: u64, seed: u64, gvt_interval: usize) -> WarpConfig {
    WarpConfig {
        workers,
        history_per_lp: history,
        events_per_worker: 4096,
        max_sends_per_event: 1,
        outbox_capacity: 64,
        inbox_capacity: 64,
        lookahead: 1,
        end_time,
        seed,
        gvt_interval,
        log_capacity: 0,
        lazy_cancellation: false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn phold_on_two_real_time_cpus_commits_what_the_sequential_mode_does(
        lps in 2u32..200,
        remote in 0.0f64..1.0,
        mean_delay in 1u64..8,
        population in 1u32..5,
        history in 2usize..64,
        end_time in 50u64..400,
        gvt_interval in 1usize..256,
        seed in any::<u64>(),
        lazy_cancellation in any::<bool>(),
    ) {
        let model = Phold { lps, remote_fraction: remote, lookahead: 1, mean_delay };
        let rt = Runtime::real_time(2);
        let config = WarpConfig { lazy_cancellation, ..config(2, history, end_time, seed, gvt_interval) };
        agree(rt, model, population, seed, config, ParallelSpec::default())?;
    }

    #[test]
    fn phold_on_two_virtual_cpus_commits_what_the_sequential_mode_does(
        lps in 2u32..60,
        remote in 0.0f64..1.0,
        mean_delay in 1u64..8,
        population in 1u32..4,
        history in 2usize..32,
        end_time in 20u64..200,
        gvt_interval in 1usize..64,
        cost in 1u64..5,
        seed in any::<u64>(),
    ) {
        let model = Phold { lps, remote_fraction: remote, lookahead: 1, mean_delay };
        let spec = ParallelSpec {
            event_cost: Duration::from_micros(cost),
            poll: Duration::from_micros(1),
            idle_polls: 4,
            ..ParallelSpec::default()
        };
        agree(Runtime::simulated(2), model, population, seed, config(2, history, end_time, seed, gvt_interval), spec)?;
    }
}

#[test]
fn real_time_workers_speculate_and_roll_back() {
    // Not a property: unequal event costs make one worker run ahead of the other, so
    // stragglers are certain in virtual time (the properties would pass trivially without).
    let model = Phold { lps: 16, remote_fraction: 0.5, lookahead: 1, mean_delay: 3 };
    let spec =
        ParallelSpec { event_cost: Duration::from_micros(1), poll: Duration::from_micros(1), ..Default::default() };
    let out = agree(Runtime::simulated(2), model, 2, 5, config(2, 32, 300, 5, 64), spec).unwrap();
    assert!(out.rolled_back > 0 && out.antis_sent > 0, "{out:?}");
}

#[test]
fn too_few_cpus_and_a_spinning_virtual_worker_are_errors() {
    let model = Phold { lps: 4, ..Phold::default() };
    let mut rt = Runtime::simulated(1);
    let e = Engine::new(model.scenario(1, 2, 0), config(2, 8, 50, 0, 8)).unwrap();
    assert!(e.spawn_on(&mut rt, ParallelSpec::default(), vec![Vec::new(), Vec::new()], record).is_err());
    let mut rt = Runtime::simulated(2);
    let e = Engine::new(model.scenario(1, 2, 0), config(2, 8, 50, 0, 8)).unwrap();
    let spec = ParallelSpec::default(); // poll zero: would spin in virtual time
    assert!(e.spawn_on(&mut rt, spec, vec![Vec::new(), Vec::new()], record).is_err());
}

#[test]
fn the_per_lp_report_adds_up_and_times_redo_work_exactly() {
    // In virtual time only `work` takes time: each re-execution is charged exactly its cost.
    let model = Phold { lps: 16, remote_fraction: 0.5, lookahead: 1, mean_delay: 3 };
    let spec =
        ParallelSpec { event_cost: Duration::from_micros(2), poll: Duration::from_micros(1), ..Default::default() };
    let mut rt = Runtime::simulated(2);
    let engine = Engine::new(model.scenario(2, 2, 5), config(2, 32, 300, 5, 64)).unwrap();
    let par = engine.spawn_on(&mut rt, spec, vec![Vec::new(); 2], record).unwrap();
    rt.run().unwrap();
    let (engine, _) = par.finish().unwrap();
    let report = engine.report();
    assert_eq!(report.lps.len(), 16);
    let sum = |f: fn(&tempi::warp::LpReport) -> u64| report.lps.iter().map(f).sum::<u64>();
    assert_eq!(sum(|l| l.committed), report.totals.committed);
    assert_eq!(sum(|l| l.processed), report.totals.processed);
    assert_eq!(sum(|l| l.antis_sent), report.totals.antis_sent);
    assert!(report.totals.redone > 0);
    for l in &report.lps {
        assert_eq!(l.redo_ns, l.redone * 2_000, "LP {}", l.lp);
        assert_eq!(l.worker, l.lp as usize / 8);
        assert!(l.commit_latency_max_ns >= l.commit_latency_mean_ns);
        assert!(l.committed == 0 || l.commit_latency_max_ns > 0);
        assert_eq!(l.fallbacks, 0);
    }
    let text = report.to_string();
    assert_eq!(text.lines().count(), 18);
    let v: serde_json::Value = serde_json::from_str(&report.to_json()).unwrap();
    assert_eq!(v["lps"][3]["redone"], report.lps[3].redone);
    assert_eq!(v["totals"]["committed"], report.totals.committed);
}
