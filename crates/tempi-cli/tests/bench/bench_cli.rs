//! `tempi bench --quick --json`: the output is one JSON object with every metric, and its
//! numbers are consistent. No timing is asserted: the machine running the tests may be slow or
//! loaded.

use std::process::Command;

use serde_json::Value;

fn bench_json() -> Value {
    let out = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .args(["bench", "--quick", "--json"])
        .output()
        .expect("run the tempi binary");
    assert!(out.status.success(), "tempi bench failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).expect("utf-8 output");
    // Progress lines go to stderr, so stdout must hold exactly one JSON value.
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("stdout is not one JSON object ({e}):\n{stdout}"))
}

fn positive(m: &Value, key: &str) -> f64 {
    let x = m[key].as_f64().unwrap_or_else(|| panic!("{}: `{key}` is not a number: {m}", m["name"]));
    assert!(x > 0.0 && x.is_finite(), "{}: `{key}` = {x} is not positive", m["name"]);
    x
}

/// The ratio is rounded to three decimals from the printed (rounded) times.
fn assert_ratio(name: &str, ratio: f64, expect: f64) {
    assert!((ratio - expect).abs() <= 1e-3 + 1e-6 * expect, "{name}: ratio {ratio} != {expect}");
}

#[test]
fn quick_json_has_every_metric_with_consistent_numbers() {
    let v = bench_json();
    let metrics = v["metrics"].as_array().expect("a `metrics` array");
    let find = |name: &str| {
        metrics.iter().find(|m| m["name"] == name).unwrap_or_else(|| panic!("metric `{name}` missing from {v}"))
    };

    // Speed-ups: ratio = peer_ns / tempi_ns.
    for name in [
        "switch.roundtrip",
        "switch.roundtrip.channel",
        "switch.roundtrip.corosensei",
        "switch.roundtrip.corosensei_clocked",
        "budget.notify",
        "spawn",
    ] {
        let m = find(name);
        let tempi = positive(m, "tempi_ns");
        let peer = positive(m, "peer_ns");
        let ratio = positive(m, "ratio");
        assert!(m["peer"].as_str().is_some_and(|s| !s.is_empty()), "{name}: no peer description");
        assert_ratio(name, ratio, peer / tempi);
    }
    assert_eq!(find("switch.roundtrip")["peer"], "os-thread condvar handoff, same CPU");
    // The bare coroutine round trip is timed in the same run as the tempi round trip.
    assert_eq!(find("switch.roundtrip.corosensei")["tempi_ns"], find("switch.roundtrip")["tempi_ns"]);
    assert_eq!(find("switch.roundtrip.corosensei")["peer"], "bare corosensei resume + suspend, same CPU");
    assert_eq!(find("switch.roundtrip.corosensei_clocked")["tempi_ns"], find("switch.roundtrip")["tempi_ns"]);
    // Messages: every metric compares with its peer; the handler metrics with the process
    // metrics of the same run.
    for name in
        ["msg.call_process", "msg.call_process.tokio", "msg.send_process", "msg.call_handler", "msg.send_handler"]
    {
        let m = find(name);
        assert_ratio(name, positive(m, "ratio"), positive(m, "peer_ns") / positive(m, "tempi_ns"));
    }
    assert_eq!(find("msg.call_handler")["peer_ns"], find("msg.call_process")["tempi_ns"]);
    // The cross-CPU wake-up needs two CPUs; on one it is skipped.
    if std::thread::available_parallelism().map_or(1, usize::from) >= 2 {
        let m = find("xcpu.wake");
        assert_ratio("xcpu.wake", positive(m, "ratio"), positive(m, "peer_ns") / positive(m, "tempi_ns"));
    }
    assert!(find("budget.notify")["note"].as_str().is_some_and(|n| n.contains("overshoot")));

    // Overheads: ratio = tempi_ns / peer_ns, the peer being the same round trip without
    // accounting, so every variant has the same peer time.
    let mut off = Vec::new();
    for name in ["switch.accounting.thread", "switch.accounting.group", "switch.accounting.budget"] {
        let m = find(name);
        let with = positive(m, "tempi_ns");
        let without = positive(m, "peer_ns");
        let ratio = positive(m, "ratio");
        assert_eq!(m["peer"], "same round trip, accounting off", "{name}: peer");
        assert_ratio(name, ratio, with / without);
        assert!(m["note"].as_str().is_some_and(|n| n.contains("overhead factor")), "{name}: note");
        off.push(without);
    }
    assert!(off.windows(2).all(|w| w[0] == w[1]), "accounting variants disagree on the baseline: {off:?}");
    // The C API's round trip against the Rust API's, an overhead too.
    let c = find("capi.yield");
    assert_ratio("capi.yield", positive(c, "ratio"), positive(c, "tempi_ns") / positive(c, "peer_ns"));
    assert!(c["note"].as_str().is_some_and(|n| n.contains("bar 1.2")), "capi.yield: note");

    // Locks: every protocol against std::sync::Mutex and against a pthread PI mutex, the same
    // tempi time on both lines and the same peer time on every protocol's line.
    let mut std_ns = Vec::new();
    let mut pi_ns = Vec::new();
    for p in ["km", "bp", "bpi", "pcp", "srp", "msrp"] {
        let name = format!("lock.uncontended.{p}");
        let m = find(&name);
        let tempi = positive(m, "tempi_ns");
        let peer = positive(m, "peer_ns");
        assert_ratio(&name, positive(m, "ratio"), peer / tempi);
        assert_eq!(m["peer"], "std::sync::Mutex lock+unlock, OS thread, same CPU", "{name}: peer");
        assert!(m["note"].as_str().is_some_and(|n| n.contains("pthread PI mutex")), "{name}: note");
        std_ns.push(peer);
        let pi_name = format!("{name}.pthread-pi");
        let pi = find(&pi_name);
        assert_eq!(positive(pi, "tempi_ns"), tempi, "{pi_name}: tempi time differs from {name}");
        let pi_peer = positive(pi, "peer_ns");
        assert_ratio(&pi_name, positive(pi, "ratio"), pi_peer / tempi);
        assert!(pi["peer"].as_str().is_some_and(|s| s.contains("PTHREAD_PRIO_INHERIT")), "{pi_name}: peer");
        pi_ns.push(pi_peer);
    }
    assert!(std_ns.windows(2).all(|w| w[0] == w[1]), "lock.uncontended.*: std peer times differ: {std_ns:?}");
    assert!(pi_ns.windows(2).all(|w| w[0] == w[1]), "lock.uncontended.*.pthread-pi: peer times differ: {pi_ns:?}");

    let h = find("lock.handoff.bpi");
    let (tempi, peer) = (positive(h, "tempi_ns"), positive(h, "peer_ns"));
    assert_ratio("lock.handoff.bpi", positive(h, "ratio"), peer / tempi);
    assert!(h["peer"].as_str().is_some_and(|s| s.contains("pthread PI mutex")), "lock.handoff.bpi: peer");
    assert!(h["note"].as_str().is_some_and(|n| n.contains("p99")), "lock.handoff.bpi: note");

    for (name, unit) in [("sim.events_per_sec", "events/s"), ("sim.jobs_per_sec", "jobs/s")] {
        let m = find(name);
        positive(m, "value");
        assert_eq!(m["unit"], unit, "{name}: unit");
    }
    // Every trace record a job writes is an event, and a job writes several.
    assert!(find("sim.events_per_sec")["value"].as_f64() > find("sim.jobs_per_sec")["value"].as_f64());
}

#[test]
fn only_runs_the_named_groups() {
    let out = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .args(["bench", "--quick", "--json", "--only", "lock.uncontended,spawn"])
        .output()
        .expect("run the tempi binary");
    assert!(out.status.success(), "tempi bench failed: {}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    let names: Vec<&str> = v["metrics"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"spawn") && names.contains(&"lock.uncontended.bpi"), "{names:?}");
    assert!(names.iter().all(|n| *n == "spawn" || n.starts_with("lock.uncontended.")), "{names:?}");
}

#[test]
fn only_rejects_an_unknown_group() {
    let out = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .args(["bench", "--only", "lock.nothing"])
        .output()
        .expect("run the tempi binary");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("lock.handoff") && err.contains("lock.nothing"), "{err}");
}
