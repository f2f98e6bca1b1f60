//! `tempi bench --only preempt --quick --json`: the three metrics of a periodic thread's
//! release latency while an OS-backed loop computes on its CPU, with their percentiles in
//! order on both sides. No timing is asserted: the machine running the tests may be slow or
//! loaded.

use crate::common;

#[test]
fn preempt_group_reports_ordered_percentiles_for_both_sides() {
    let metrics = common::bench_percentiles(
        "preempt",
        ["preempt.os_thread.p99", "preempt.os_thread.p50", "preempt.os_thread.max"],
    );
    let note = metrics[0]["note"].as_str().expect("p99 carries the note");
    assert!(note.contains("OS-backed") && note.contains("1000 releases pooled per side"), "note: {note}");
}
