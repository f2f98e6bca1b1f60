//! Parse arbitrary text as a scenario file; when it is a valid scenario, simulate it for a
//! short horizon. Errors are expected; a panic, a hang or a crash is a bug.

#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;

/// Long enough for every built-in example to release, preempt, lock and miss; short enough
/// that a scenario of nanosecond periods still ends quickly.
const HORIZON: Duration = Duration::from_millis(1);

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(scenario) = tempi_cli::parse("fuzz.toml", text) {
        let _ = tempi_cli::simulate_briefly(&scenario, HORIZON);
    }
});
