//! Bodies that ignore their interrupt forever (`ignore.c`): the library abandons each one
//! after `TEMPI_IGNORED_INTERRUPT_LIMIT` further calls, the run ends at its horizon on both
//! clocks, and the outcome, its warnings and its report name each thread. Nothing aborts.

use std::process::Command;

use super::support::{build_c, run, scratch};

/// What `ignore virtual` prints: exact, in virtual time. One CPU, fixed priorities: "aborted"
/// (3) works 0-3 ms of each 10 ms period and is aborted at 3 ms; "killed" (1) works from 3 ms
/// until the killer (2) kills it at 5 ms; "stopped" (0) works in the gaps from 5 ms (14 ms in
/// all) until the run's end at 25 ms stops it. A job's calls: those answered `TEMPI_OK`, the
/// interrupted one, the limit's 1000 answered again at once, and the one that never returned.
const VIRTUAL: &str = "\
end 25 ms, threads abandoned 3, limit 1000
aborted: running, released 3, completed 0, aborted 3, abandoned 3, bodies 3, calls 3015, interrupted 3003
killed: killed, released 1, completed 0, aborted 1, abandoned 1, bodies 1, calls 1004, interrupted 1001
killer: completed, released 1, completed 1
stopped: running, released 1, completed 0, aborted 0, abandoned 1, bodies 1, calls 1015, interrupted 1001
warning: thread \"aborted\" ignored its interrupt: its C code was abandoned 3 time(s), each after 1000 further calls answered TEMPI_INTERRUPTED
warning: thread \"killed\" ignored its interrupt: its C code was abandoned 1 time(s), each after 1000 further calls answered TEMPI_INTERRUPTED
warning: thread \"stopped\" ignored its interrupt: its C code was abandoned 1 time(s), each after 1000 further calls answered TEMPI_INTERRUPTED
";

#[test]
fn a_body_that_ignores_its_interrupt_is_abandoned_in_virtual_time() {
    let dir = scratch("ignore-virtual");
    let exe = build_c("crates/tempi-c/tests/c/ignore.c", &dir);
    let report = dir.join("report.json");
    let printed = run(Command::new(&exe).arg("virtual").arg(&report));
    assert_eq!(printed, VIRTUAL);
    let json = std::fs::read_to_string(&report).unwrap();
    for name in ["aborted", "killed", "stopped"] {
        let warning = format!("thread \\\"{name}\\\" ignored its interrupt");
        assert!(json.contains(&warning), "{warning} not in {json}");
    }
}

#[test]
fn a_body_that_ignores_its_interrupt_is_abandoned_in_real_time() {
    let dir = scratch("ignore-real");
    let exe = build_c("crates/tempi-c/tests/c/ignore.c", &dir);
    assert_eq!(run(Command::new(&exe).arg("real")), "real: ok\n");
}
