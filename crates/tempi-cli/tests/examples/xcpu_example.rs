//! The two-CPU example with cross-CPU traffic (`examples/two-cpu-traffic.toml`): in virtual
//! time its releases are exact; in real time every release one CPU asks of the other arrives
//! (a property with generous bounds, never a timing).

use std::path::Path;

use tempi::clock::{RealClock, VirtualClock};
use tempi::{CrossCpuStats, RunOutcome, Time};

fn scenario() -> tempi_cli::Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/two-cpu-traffic.toml");
    let text = std::fs::read_to_string(&path).expect("the example exists");
    tempi_cli::parse("two-cpu-traffic.toml", &text).expect("the example parses")
}

fn run<C: tempi::clock::Clock>(sc: &tempi_cli::Scenario, config: tempi::Config) -> RunOutcome {
    sc.runtime::<C>(config).expect("the example builds").run_until(Time::from_millis(200)).expect("the run ends")
}

/// Releases that reached a thread: as jobs, or dropped for a full release queue (counted).
fn arrived(out: &RunOutcome, name: &str) -> u64 {
    let s = out.thread_named(name).expect("thread exists").stats;
    s.released + s.overflows
}

#[test]
fn xcpu_example_releases_across_cpus_exactly_in_virtual_time() {
    let sc = scenario();
    let out = run::<VirtualClock>(&sc, sc.config());
    // CPU 0's timer fires at 1, 5, ..., 197 ms: 50 releases of `filter` on CPU 1; CPU 1's at
    // 2, 12, ..., 192 ms: 20 releases of `log` on CPU 0. Nothing is refused or dropped.
    assert_eq!(out.thread_named("filter").unwrap().stats.released, 50);
    assert_eq!(out.thread_named("log").unwrap().stats.released, 20);
    assert_eq!(out.thread_named("filter").unwrap().cpu, 1);
    assert_eq!(out.thread_named("log").unwrap().cpu, 0);
    assert_eq!(out.total_misses(), 0);
    assert_eq!(out.cross_cpu, CrossCpuStats::default());
}

#[test]
fn xcpu_example_loses_no_cross_cpu_release_in_real_time() {
    let sc = scenario();
    let virtual_out = run::<VirtualClock>(&sc, sc.config());
    let out = run::<RealClock>(&sc, sc.config().pin(false));
    // Every release posted to the other CPU arrived there: as many as in virtual time, none
    // refused, none refused for a full request queue. Near the horizon a loaded machine may
    // let a post arrive after its target stopped (then it is counted as pending at the end),
    // or the last firing slip past the horizon: a margin of one per thread.
    let pending = out.cross_cpu.pending_at_end;
    for name in ["filter", "log"] {
        let (real, exact) = (arrived(&out, name), arrived(&virtual_out, name));
        assert!(
            real <= exact && real + pending + 1 >= exact,
            "{name}: {real} releases arrived, {exact} in virtual time, {pending} pending at the end"
        );
    }
    assert_eq!((out.cross_cpu.refused, out.cross_cpu.queue_full), (0, 0));
}
