//! `tempi analyze` judges a lock by the ceiling the run gives it: computed once from all the
//! lock's users, the threads the model leaves out included. Here a one-shot `boss` (priority
//! 9, not analysed) shares `bus` with `a` and `b`: the ceiling is 9, not `a`'s 3, so `c`
//! (priority 5, no lock) can be blocked by `b`'s section (pushed through when `boss` waits for
//! `bus` and `b` inherits its priority).

use crate::common;
use common::{scratch, tempi, text};

const SCENARIO: &str = r#"
[runtime]
policy = "fp"

[[resource]]
name = "bus"
protocol = "pcp"

[[thread]]
name = "boss"
priority = 9
steps = [{ lock = "bus" }, { work = "1ms" }, { unlock = "bus" }]

[[thread]]
name = "c"
priority = 5
period = "10ms"
wcet = "1ms"

[[thread]]
name = "a"
priority = 3
period = "20ms"
steps = [{ lock = "bus" }, { work = "1ms" }, { unlock = "bus" }]

[[thread]]
name = "b"
priority = 1
period = "40ms"
steps = [{ lock = "bus" }, { work = "4ms" }, { unlock = "bus" }]
"#;

#[test]
fn a_ceiling_counts_the_users_the_model_leaves_out() {
    let file = scratch("analyze_ceilings_cli", "boss").join("s.toml");
    std::fs::write(&file, SCENARIO).unwrap();
    let out = tempi(&["analyze", &file.display().to_string()]);
    let s = text(&out.stdout);
    assert!(s.contains("  c                    1ms      10ms      10ms     5        4ms         5ms    ok\n"), "{s}");
    assert!(s.contains("B under each protocol: km 4ms, bp 0ns, bpi 4ms, pcp 4ms, srp 4ms, rcs 4ms\n"), "{s}");
    assert!(s.contains("note: thread \"boss\": one-shot: not analysed\n"), "{s}");
}
