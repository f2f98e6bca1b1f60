//! Size keys of a scenario above their limits are input errors (exit 2, FILE:LINE), for
//! `simulate` and `run` alike, never an abort while the runtime allocates its pools.

use crate::common;
use common::{scratch, tempi, text};

/// Write `body`, run `tempi COMMAND` on it, and check exit code 2 and `FILE:LINE: message`.
fn assert_refused(test: &str, command: &str, body: &str, line: usize, message: &str) {
    let dir = scratch("size_limits_cli", test);
    let file = dir.join("big.toml");
    std::fs::write(&file, body).unwrap();
    let out = tempi(&[command, file.to_str().unwrap()]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{test}: {err}");
    assert_eq!(err.trim_end(), format!("tempi: {}:{line}: {message}", file.display()), "{test}");
}

fn admission(key: &str, value: &str) -> String {
    format!(
        "[runtime]\npolicy = \"edf\"\nuntil = \"10ms\"\n\n[admission]\n{key} = {value}\n\n[[request]]\nname = \"a\"\n\
         time = \"0ms\"\nwcet = \"1ms\"\ndeadline = \"10ms\"\n"
    )
}

#[test]
fn admission_capacity_above_its_limit_is_an_input_error() {
    for command in ["simulate", "run"] {
        assert_refused(
            &format!("capacity_{command}"),
            command,
            &admission("capacity", "2147483647"),
            6,
            "[admission]: field `capacity`: 2147483647 is above the limit of 1048576",
        );
    }
}

#[test]
fn admission_max_live_above_its_limit_is_an_input_error() {
    for command in ["simulate", "run"] {
        assert_refused(
            &format!("max_live_{command}"),
            command,
            &admission("max_live", "2147483647"),
            6,
            "[admission]: field `max_live`: 2147483647 is above the limit of 1024",
        );
    }
}

#[test]
fn admission_sizes_at_their_limits_simulate() {
    let dir = scratch("size_limits_cli", "at_limits");
    let file = dir.join("ok.toml");
    let body = admission("capacity", "1048576").replace("[admission]\n", "[admission]\nmax_live = 1024\n");
    std::fs::write(&file, body).unwrap();
    let out = tempi(&["simulate", file.to_str().unwrap(), "--quiet"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
