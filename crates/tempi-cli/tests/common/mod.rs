//! Helpers shared by the CLI's integration tests: running the `tempi` binary, finding a
//! built-in example, a scratch directory per test, and reading output bytes.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Run the `tempi` binary with `args` and wait for it.
pub fn tempi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tempi")).args(args).output().expect("the tempi binary starts")
}

/// The path of a built-in example, by file name.
pub fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).display().to_string()
}

/// A fresh, empty directory for one test of one suite, so tests running in parallel do not
/// share files.
pub fn scratch(suite: &str, test: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(suite).join(test);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Output bytes as text (lossy).
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
