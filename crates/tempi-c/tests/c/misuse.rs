//! Misuse from C (`misuse.c`, `misuse_more.c`, `misuse_spring.c`): null handles and
//! arguments, bad sizes, unknown names, a runtime used after it ran (or freed, for its sets),
//! threads, sets, mutexes and plan executors of another runtime, a body that ignores its
//! interrupt.

use std::process::Command;

use super::support::{build_c, scratch};

#[test]
fn every_misuse_answers_its_status() {
    let dir = scratch("misuse");
    let exe = build_c("crates/tempi-c/tests/c/misuse.c", &dir);
    let out = Command::new(&exe).output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(printed.trim_end().ends_with(" passed, 0 failed"), "{printed}");
}

#[test]
fn every_misuse_of_admission_messages_and_handlers_answers_its_status() {
    let dir = scratch("misuse_more");
    let exe = build_c("crates/tempi-c/tests/c/misuse_more.c", &dir);
    let out = Command::new(&exe).output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(printed.trim_end().ends_with(" passed, 0 failed"), "{printed}");
}

#[test]
fn every_misuse_of_spring_timers_servers_and_membership_answers_its_status() {
    let dir = scratch("misuse_spring");
    let exe = build_c("crates/tempi-c/tests/c/misuse_spring.c", &dir);
    let out = Command::new(&exe).output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{printed}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(printed.trim_end().ends_with(" passed, 0 failed"), "{printed}");
}
