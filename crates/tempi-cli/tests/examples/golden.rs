//! Golden outputs: every built-in example's JSON report and Perfetto trace, compared byte for
//! byte with the files under `tests/golden/`. A change in scheduling behaviour or in an exporter
//! shows up here as a diff of a file a reviewer can read.
//!
//! When a change is intended, write the files anew and review the diff:
//!
//! ```sh
//! TEMPI_BLESS=1 cargo test --release -p tempi-cli --test examples golden::
//! ```

use std::path::{Path, PathBuf};
use std::process::Command;

/// Every example with threads to simulate; planner-only examples (thread groups and no
/// `[[thread]]`, read by `tempi plan`) have no simulation report and are tested elsewhere.
fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the examples folder exists")
        .map(|entry| entry.expect("a readable folder entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        // Planner-only examples (thread groups, nothing to run) have no golden outputs.
        .filter(|path| {
            std::fs::read_to_string(path).is_ok_and(|text| text.contains("[[thread]]") || text.contains("[[request]]"))
        })
        .collect();
    files.sort();
    files
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Simulates one example and returns its report and trace, as `tempi simulate` writes them.
fn simulate(example: &Path) -> (String, String) {
    let name = example.file_stem().unwrap().to_string_lossy().into_owned();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("golden").join(&name);
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let (report, trace) = (out.join("report.json"), out.join("trace.json"));
    let status = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .arg("simulate")
        .arg(example)
        .arg("--report")
        .arg(&report)
        .arg("--trace")
        .arg(&trace)
        .output()
        .expect("the tempi binary starts");
    assert!(status.status.success(), "{name}: {}", String::from_utf8_lossy(&status.stderr));
    (std::fs::read_to_string(report).unwrap(), std::fs::read_to_string(trace).unwrap())
}

#[test]
fn golden_every_example_matches_its_committed_report_and_trace() {
    let bless = std::env::var_os("TEMPI_BLESS").is_some_and(|v| v != "0");
    let dir = golden_dir();
    let mut differ = Vec::new();
    let examples = examples();
    assert!(examples.len() >= 10, "the built-in examples are found");
    for example in &examples {
        let name = example.file_stem().unwrap().to_string_lossy().into_owned();
        let (report, trace) = simulate(example);
        for (kind, actual) in [("report", report), ("trace", trace)] {
            let path = dir.join(format!("{name}.{kind}.json"));
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, &actual).unwrap();
                continue;
            }
            match std::fs::read_to_string(&path) {
                Ok(expected) if expected == actual => {}
                Ok(expected) => {
                    let line = expected.lines().zip(actual.lines()).position(|(a, b)| a != b);
                    let line = line.unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
                    differ.push(format!("{}: first difference at line {}", path.display(), line + 1));
                }
                Err(e) => differ.push(format!("{}: {e}", path.display())),
            }
        }
    }
    assert!(
        differ.is_empty(),
        "outputs differ from the golden files (if intended: TEMPI_BLESS=1 cargo test --release -p tempi-cli --test examples golden::, then review the diff):\n{}",
        differ.join("\n")
    );
}

/// Every golden file belongs to an example that still exists.
#[test]
fn golden_has_no_file_without_an_example() {
    let names: Vec<String> = examples().iter().map(|e| e.file_stem().unwrap().to_string_lossy().into_owned()).collect();
    for entry in std::fs::read_dir(golden_dir()).expect("tests/golden exists") {
        let file = entry.unwrap().file_name().to_string_lossy().into_owned();
        let stem = file.trim_end_matches(".report.json").trim_end_matches(".trace.json");
        assert!(names.iter().any(|n| n == stem), "{file} has no example");
    }
}
