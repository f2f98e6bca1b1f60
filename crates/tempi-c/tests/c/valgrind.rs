//! The C examples and the misuse program under `valgrind --error-exitcode=1` (when valgrind
//! is on PATH): no invalid access, no use of uninitialised memory, through the context
//! switches, the interrupts and the misuse.

use std::process::Command;

use super::support::{build_c, have_valgrind, run, scratch};

#[test]
fn the_c_programs_are_valgrind_clean() {
    if !have_valgrind() {
        eprintln!("valgrind is not on PATH: not checked");
        return;
    }
    let dir = scratch("valgrind");
    for (src, args) in [
        ("examples/c/rm_textbook.c", &[][..]),
        ("examples/c/runaway.c", &[][..]),
        ("examples/c/inversion.c", &["bpi"][..]),
        ("examples/c/admission.c", &[][..]),
        ("examples/c/pingpong.c", &[][..]),
        ("examples/c/spring.c", &[][..]),
        ("crates/tempi-c/tests/c/misuse.c", &[][..]),
        ("crates/tempi-c/tests/c/misuse_more.c", &[][..]),
        ("crates/tempi-c/tests/c/ignore.c", &["virtual"][..]),
        ("crates/tempi-c/tests/c/timers.c", &[][..]),
        ("crates/tempi-c/tests/c/membership.c", &[][..]),
        ("crates/tempi-c/tests/c/misuse_spring.c", &[][..]),
    ] {
        let exe = build_c(src, &dir);
        run(Command::new("valgrind").args(["-q", "--error-exitcode=1"]).arg(&exe).args(args));
    }
}
