//! Property tests for budgets: no set consumes more than its budget in any replenishment
//! period, and threads outside the sets keep their deadlines. Policies: fp with deferrable
//! servers, edf with constant bandwidth servers.

use std::time::Duration;

use proptest::prelude::*;
use tempi::policy::sched::Edf;
use tempi::trace::TraceKind;
use tempi::{Budget, Config, RunOutcome, Runtime, ThreadId, ThreadSpec, Time};

const PERIODS_MS: [u64; 4] = [5, 10, 20, 40];

/// CPU time of `thread` inside each window `[k p, (k+1) p)` up to `end`, from the trace.
fn per_window(out: &RunOutcome, thread: ThreadId, period: u64, end: u64) -> Vec<u64> {
    let mut windows = vec![0u64; end.div_ceil(period) as usize];
    let mut open: Vec<Option<(ThreadId, u64)>> = vec![None; out.cpus];
    let mut add = |from: u64, to: u64| {
        let mut t = from;
        while t < to {
            let w = t / period;
            let edge = ((w + 1) * period).min(to);
            windows[w as usize] += edge - t;
            t = edge;
        }
    };
    for r in &out.trace {
        let cpu = r.cpu as usize;
        match r.kind {
            TraceKind::Run => open[cpu] = Some((r.thread, r.time.as_nanos())),
            TraceKind::Stop => {
                if let Some((t, from)) = open[cpu].take()
                    && t == thread
                {
                    add(from, r.time.as_nanos());
                }
            }
            _ => {}
        }
    }
    for (t, from) in open.into_iter().flatten() {
        if t == thread {
            add(from, end);
        }
    }
    windows
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn budget_deferrable_servers_never_exceed_their_budget_per_period(
        servers in prop::collection::vec((1u64..5, 0..PERIODS_MS.len(), 50u64..2_000), 1..4),
        victims in prop::collection::vec((1u64..4, 0..PERIODS_MS.len()), 0..3),
    ) {
        let horizon = 200_000_000u64;
        let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(1 << 18)).unwrap();
        let mut runaways = Vec::new();
        for (i, &(q, p, step_us)) in servers.iter().enumerate() {
            let step = Duration::from_micros(step_us);
            let t = rt.spawn(ThreadSpec::new(format!("runaway{i}")).priority(100 - i as i32), move |cx| loop {
                cx.work(step);
            }).unwrap();
            let s = rt.create_set(&format!("s{i}"), 0).unwrap();
            rt.add_to_set(s, t).unwrap();
            let period = PERIODS_MS[p];
            rt.set_budget(s, Budget::deferrable_server(Duration::from_millis(q), Duration::from_millis(period))).unwrap();
            runaways.push((t, q * 1_000_000, period * 1_000_000));
        }
        for (i, &(c, p)) in victims.iter().enumerate() {
            let c = Duration::from_millis(c);
            rt.spawn(ThreadSpec::new(format!("v{i}")).periodic(Duration::from_millis(PERIODS_MS[p])).priority(10 - i as i32), move |cx| cx.work(c)).unwrap();
        }
        let out = rt.run_until(Time::from_nanos(horizon)).unwrap();
        prop_assert_eq!(out.trace_dropped, 0);
        for (t, q, period) in runaways {
            for (k, used) in per_window(&out, t, period, horizon).into_iter().enumerate() {
                prop_assert!(used <= q, "runaway {:?} used {} ns > budget {} ns in window {}", t, used, q, k);
            }
        }
    }

    #[test]
    fn budget_constant_bandwidth_servers_isolate_hard_threads(
        servers in prop::collection::vec((1u64..4, 0..PERIODS_MS.len()), 1..3),
        tasks in prop::collection::vec((1u32..100, 0..PERIODS_MS.len()), 1..4),
    ) {
        // Server bandwidth plus task utilisation at most 1: EDF with CBS meets every deadline
        // of the hard tasks, whatever the runaways inside the servers do.
        let server_u: f64 = servers.iter().map(|&(q, p)| q as f64 / PERIODS_MS[p] as f64).sum();
        prop_assume!(server_u < 0.9);
        let left = 1.0 - server_u;
        let total: u32 = tasks.iter().map(|t| t.0).sum();
        let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(1).trace_capacity(0)).unwrap();
        rt.set_scheduler(|| Box::new(Edf::new()));
        for (i, &(q, p)) in servers.iter().enumerate() {
            let t = rt.spawn(ThreadSpec::new(format!("runaway{i}")), |cx| loop {
                cx.work(Duration::from_micros(300));
            }).unwrap();
            let s = rt.create_set(&format!("cbs{i}"), 0).unwrap();
            rt.add_to_set(s, t).unwrap();
            rt.set_budget(s, Budget::constant_bandwidth_server(Duration::from_millis(q), Duration::from_millis(PERIODS_MS[p]))).unwrap();
        }
        for (i, &(w, p)) in tasks.iter().enumerate() {
            let period = PERIODS_MS[p] * 1_000_000;
            let c = ((left * w as f64 / total as f64) * period as f64).floor() as u64;
            prop_assume!(c > 0);
            let c = Duration::from_nanos(c);
            rt.spawn(ThreadSpec::new(format!("task{i}")).periodic(Duration::from_nanos(period)), move |cx| cx.work(c)).unwrap();
        }
        let out = rt.run_until(Time::from_millis(400)).unwrap();
        prop_assert_eq!(out.total_misses(), 0);
        let runaway_time: Duration = out.threads.iter().filter(|t| t.name.starts_with("runaway")).map(|t| t.stats.cpu_time).sum();
        prop_assert!(runaway_time > Duration::ZERO, "servers must get their bandwidth");
    }
}
