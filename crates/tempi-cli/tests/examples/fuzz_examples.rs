//! A short property-based fuzz of the scenario parser and the simulator: the built-in
//! examples, mutated (bit flips, deleted and duplicated lines, changed numbers), must parse
//! to a scenario or an error, and what parses must simulate briefly, without a panic. The
//! cargo-fuzz target under `fuzz/` runs the same check on arbitrary text, for as long as one
//! lets it.

use std::time::Duration;

use proptest::prelude::*;

const EXAMPLES: &[(&str, &str)] = &[
    ("rm-textbook.toml", include_str!("../../../../examples/rm-textbook.toml")),
    ("edf-full-utilisation.toml", include_str!("../../../../examples/edf-full-utilisation.toml")),
    ("round-robin.toml", include_str!("../../../../examples/round-robin.toml")),
    ("sporadic-timer.toml", include_str!("../../../../examples/sporadic-timer.toml")),
    ("miss-policies.toml", include_str!("../../../../examples/miss-policies.toml")),
    ("two-cpus.toml", include_str!("../../../../examples/two-cpus.toml")),
    ("temporal-isolation.toml", include_str!("../../../../examples/temporal-isolation.toml")),
    ("servers.toml", include_str!("../../../../examples/servers.toml")),
    ("locks-inversion.toml", include_str!("../../../../examples/locks-inversion.toml")),
    ("locks-pcp.toml", include_str!("../../../../examples/locks-pcp.toml")),
    ("spring-plan.toml", include_str!("../../../../examples/spring-plan.toml")),
    ("spring-exec.toml", include_str!("../../../../examples/spring-exec.toml")),
    ("spring-vehicle.toml", include_str!("../../../../examples/spring-vehicle.toml")),
];

/// Virtual time each mutated scenario that parses is simulated for (or less, if its `until`
/// is shorter): as in the fuzz target.
const HORIZON: Duration = Duration::from_millis(1);

/// Numbers a mutation writes in place of one in the file: zero, small values, values at the
/// edges of the integer types the format uses, and one too long for any of them.
const NUMBERS: &[&str] =
    &["0", "1", "2", "3", "7", "10", "255", "1000", "65536", "2147483647", "4294967296", "99999999999999999999999"];

#[derive(Clone, Debug)]
enum Mutation {
    /// Flip bit `bit` of the byte at `at` (modulo the length).
    FlipBit { at: usize, bit: u8 },
    /// Delete line `line` (modulo the number of lines).
    DeleteLine { line: usize },
    /// Write line `line` twice.
    DuplicateLine { line: usize },
    /// Replace the `which`-th run of digits with `NUMBERS[value]`.
    ChangeNumber { which: usize, value: usize },
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(at, bit)| Mutation::FlipBit { at, bit }),
        any::<usize>().prop_map(|line| Mutation::DeleteLine { line }),
        any::<usize>().prop_map(|line| Mutation::DuplicateLine { line }),
        (any::<usize>(), 0..NUMBERS.len()).prop_map(|(which, value)| Mutation::ChangeNumber { which, value }),
    ]
}

/// `text` with `m` applied; bytes that stop being UTF-8 are replaced, as a reader would.
fn apply(text: &str, m: &Mutation) -> String {
    match *m {
        Mutation::FlipBit { at, bit } => {
            let mut bytes = text.as_bytes().to_vec();
            if !bytes.is_empty() {
                let at = at % bytes.len();
                bytes[at] ^= 1 << bit;
            }
            String::from_utf8_lossy(&bytes).into_owned()
        }
        Mutation::DeleteLine { line } | Mutation::DuplicateLine { line } => {
            let mut lines: Vec<&str> = text.split('\n').collect();
            let at = line % lines.len();
            if matches!(m, Mutation::DeleteLine { .. }) {
                lines.remove(at);
            } else {
                lines.insert(at, lines[at]);
            }
            lines.join("\n")
        }
        Mutation::ChangeNumber { which, value } => {
            let mut runs = Vec::new();
            let bytes = text.as_bytes();
            let mut k = 0;
            while k < bytes.len() {
                if bytes[k].is_ascii_digit() {
                    let start = k;
                    while k < bytes.len() && bytes[k].is_ascii_digit() {
                        k += 1;
                    }
                    runs.push(start..k);
                } else {
                    k += 1;
                }
            }
            if runs.is_empty() {
                return text.to_string();
            }
            let run = runs[which % runs.len()].clone();
            format!("{}{}{}", &text[..run.start], NUMBERS[value], &text[run.end..])
        }
    }
}

proptest! {
    // Each case parses a file of a few dozen lines and simulates at most 1 ms of it: a few
    // thousand cases take about a second in a release build.
    #![proptest_config(ProptestConfig { cases: 1000, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_examples_parse_and_simulate_without_panicking(
        example in 0..EXAMPLES.len(),
        mutations in proptest::collection::vec(mutation(), 1..4),
    ) {
        let (name, original) = EXAMPLES[example];
        let text = mutations.iter().fold(original.to_string(), |t, m| apply(&t, m));
        if let Ok(scenario) = tempi_cli::parse(name, &text) {
            let _ = tempi_cli::simulate_briefly(&scenario, HORIZON);
        }
    }
}

#[test]
fn mutations_do_what_they_say() {
    let text = "a = 12\nb = \"3ms\"\n";
    assert_eq!(apply(text, &Mutation::DeleteLine { line: 0 }), "b = \"3ms\"\n");
    assert_eq!(apply(text, &Mutation::DuplicateLine { line: 4 }), "a = 12\nb = \"3ms\"\nb = \"3ms\"\n");
    assert_eq!(apply(text, &Mutation::ChangeNumber { which: 1, value: 0 }), "a = 12\nb = \"0ms\"\n");
    assert_eq!(apply(text, &Mutation::FlipBit { at: 1, bit: 0 }), "a!= 12\nb = \"3ms\"\n");
    // Every example parses and simulates unmutated.
    for (name, text) in EXAMPLES {
        let scenario = tempi_cli::parse(name, text).unwrap();
        tempi_cli::simulate_briefly(&scenario, HORIZON).unwrap();
    }
}
