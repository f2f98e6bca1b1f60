//! The direct thread-to-thread switch changes nothing a run shows: over random one-CPU loads
//! of yielding threads, clients calling processes (plain and fused replies), periodic
//! interference, time slices, switch costs and tracing, a run with the direct switch and one
//! without it (`Config::direct_switch(false)`) have the same trace, outcomes and CPU times; so
//! have a run with the call's and the reply's hand-offs of the CPU and one without them
//! (`Config::direct_hand_off(false)`).

use crate::common;

use std::time::Duration;

use common::us;
use proptest::prelude::*;
use tempi::clock::VirtualClock;
use tempi::message::Message;
use tempi::policy::sched::{Edf, RoundRobin};
use tempi::{Config, Costs, RunOutcome, Runtime, ThreadSpec, Time};

#[derive(Debug, Clone)]
struct Load {
    /// (priority, yields per round, work per round in µs) of each yielding thread.
    yielders: Vec<(i32, u8, u8)>,
    /// (client priority, server priority, calls, fused, server work every k-th message).
    pairs: Vec<(i32, i32, u16, bool, u8)>,
    /// (priority, period in µs, work in µs) of periodic threads.
    periodic: Vec<(i32, u16, u8)>,
    policy: u8,
    switch_cost: bool,
}

fn load() -> impl Strategy<Value = Load> {
    (
        prop::collection::vec((0i32..4, 0u8..6, 0u8..20), 0..4),
        prop::collection::vec((0i32..4, 0i32..4, 1u16..60, any::<bool>(), 0u8..5), 0..3),
        prop::collection::vec((0i32..6, 40u16..400, 1u8..30), 0..3),
        0u8..3,
        any::<bool>(),
    )
        .prop_map(|(yielders, pairs, periodic, policy, switch_cost)| Load {
            yielders,
            pairs,
            periodic,
            policy,
            switch_cost,
        })
}

fn run(load: &Load, direct: bool) -> RunOutcome {
    run_with(load, direct, true)
}

fn run_with(load: &Load, direct: bool, hand_off: bool) -> RunOutcome {
    let mut config =
        Config::new(1).verify(true).trace_capacity(1 << 16).direct_switch(direct).direct_hand_off(hand_off);
    config = match load.policy {
        1 => config.scheduler(|| Box::new(RoundRobin::new(us(25)))),
        2 => config.scheduler(|| Box::new(Edf::new())),
        _ => config,
    };
    if load.switch_cost {
        config = config.costs(Costs { context_switch: us(2), ..Costs::default() });
    }
    let mut rt = Runtime::<VirtualClock>::new(config).unwrap();
    for (k, &(priority, yields, work)) in load.yielders.iter().enumerate() {
        rt.spawn(ThreadSpec::new(format!("y{k}")).priority(priority), move |cx| {
            for _ in 0..20 {
                for _ in 0..yields {
                    cx.yield_now();
                }
                cx.work(Duration::from_micros(work as u64));
            }
        })
        .unwrap();
    }
    for (k, &(client, server, calls, fused, every)) in load.pairs.iter().enumerate() {
        let s = rt
            .spawn_process(ThreadSpec::new(format!("s{k}")).priority(server), move |cx, m| {
                if every > 0 && m.id % every as i64 == 0 {
                    cx.work(us(3));
                }
                common::echo(cx, m, fused)
            })
            .unwrap();
        rt.spawn(ThreadSpec::new(format!("c{k}")).priority(client), move |cx| {
            for i in 1..=calls as i64 {
                let _ = cx.call(s, Message::new(i, i, 0));
            }
            let _ = cx.call(s, Message::new(0, 0, 0));
        })
        .unwrap();
    }
    for (k, &(priority, period, work)) in load.periodic.iter().enumerate() {
        let spec = ThreadSpec::new(format!("p{k}")).priority(priority).periodic(us(period as u64));
        rt.spawn(spec, move |cx| {
            cx.yield_now();
            cx.work(Duration::from_micros(work as u64));
        })
        .unwrap();
    }
    rt.run_until(Time::from_millis(3)).unwrap()
}

/// Both runs show the same trace, outcomes, CPU times and end.
fn same_run(a: &RunOutcome, b: &RunOutcome) -> Result<(), TestCaseError> {
    prop_assert_eq!(a.trace.len(), b.trace.len());
    for (x, y) in a.trace.iter().zip(&b.trace) {
        // Ids of two runtimes differ in their runtime's tag: compare what they show.
        prop_assert_eq!(
            (x.time, x.cpu, format!("{:?}", x.thread), x.job, x.kind, x.arg),
            (y.time, y.cpu, format!("{:?}", y.thread), y.job, y.kind, y.arg)
        );
    }
    for (x, y) in a.threads.iter().zip(&b.threads) {
        prop_assert_eq!(&x.outcome, &y.outcome, "{}", x.name);
        prop_assert_eq!(x.stats.cpu_time, y.stats.cpu_time, "{}", x.name);
    }
    prop_assert_eq!(a.end, b.end);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn direct_switch_is_the_dispatcher_path_in_fewer_steps(load in load()) {
        let direct = run(&load, true);
        let through = run(&load, false);
        prop_assert_eq!(through.direct_switches, 0);
        if load.switch_cost {
            prop_assert_eq!(direct.direct_switches, 0);
        }
        same_run(&direct, &through)?;
    }

    #[test]
    fn call_and_reply_hand_offs_are_the_general_path_in_fewer_steps(load in load()) {
        let short = run_with(&load, true, true);
        let general = run_with(&load, true, false);
        same_run(&short, &general)?;
        let through = run_with(&load, false, false);
        same_run(&short, &through)?;
    }
}
