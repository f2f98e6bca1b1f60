//! `tempi bench --only latency --quick --json`: the three release-latency metrics, their
//! percentiles in order on both sides, and the note that states the bar. No timing is
//! asserted: the machine running the tests may be slow or loaded.

use crate::common;

#[test]
fn latency_group_reports_ordered_percentiles_for_both_sides() {
    let metrics =
        common::bench_percentiles("latency", ["latency.release.p99", "latency.release.p50", "latency.release.max"]);
    for m in &metrics {
        assert!(m["peer"].as_str().is_some_and(|p| p.contains("clock_nanosleep")), "{}: peer", m["name"]);
    }
    let note = metrics[0]["note"].as_str().expect("p99 carries the note");
    assert!(note.contains("bar (not a test)") && note.contains("1000 releases pooled per side"), "note: {note}");
}
