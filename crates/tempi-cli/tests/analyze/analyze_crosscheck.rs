//! Property test: `tempi analyze` against `tempi simulate` on scenarios whose steps may ask for
//! more work than the thread's declared `wcet` (a fixed step, or a range whose top is above
//! it). The analysis must take each thread's C as the larger of the two, and whatever it shows
//! schedulable, the simulation (released together, two hyperperiods) must not miss.

use std::time::Duration;

use crate::common;
use common::{scratch, tempi, text};
use proptest::prelude::*;
use tempi::Time;

/// Periods (ms) whose LCM is 40 ms.
const PERIODS: [u64; 3] = [10, 20, 40];

/// One thread: period index, declared wcet (ms), the step's low and high ends (ms; equal for a
/// fixed step).
#[derive(Clone, Copy, Debug)]
struct Gen {
    period: usize,
    wcet: u64,
    lo: u64,
    hi: u64,
}

fn gen_thread() -> impl Strategy<Value = Gen> {
    (0..PERIODS.len(), 1u64..=6, 1u64..=4, 0u64..=6, any::<bool>()).prop_map(|(period, wcet, lo, extra, fixed)| {
        let hi = if fixed { lo + extra } else { lo + extra.max(1) };
        let lo = if fixed { hi } else { lo };
        Gen { period, wcet, lo, hi }
    })
}

fn body(gens: &[Gen], policy: &str) -> String {
    let mut s = format!("[runtime]\npolicy = \"{policy}\"\nuntil = \"80ms\"\n");
    for (i, g) in gens.iter().enumerate() {
        let work = if g.lo == g.hi { format!("\"{}ms\"", g.hi) } else { format!("\"{}ms..{}ms\"", g.lo, g.hi) };
        s.push_str(&format!(
            "\n[[thread]]\nname = \"t{i}\"\nperiod = \"{}ms\"\nwcet = \"{}ms\"\nsteps = [{{ work = {work} }}]\n",
            PERIODS[g.period], g.wcet
        ));
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn what_analyze_shows_schedulable_the_simulation_meets(
        gens in proptest::collection::vec(gen_thread(), 2..=3),
        edf in any::<bool>(),
    ) {
        let policy = if edf { "edf" } else { "rm" };
        let text_of_file = body(&gens, policy);
        let dir = scratch("analyze_crosscheck", "case");
        let file = dir.join("s.toml");
        std::fs::write(&file, &text_of_file).unwrap();
        let out = tempi(&["analyze", file.to_str().unwrap(), "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        let longer = gens.iter().filter(|g| g.hi > g.wcet).count();
        prop_assert_eq!(v["warnings"].as_array().map(Vec::len), Some(longer), "{}", text_of_file);
        if !edf {
            for (i, g) in gens.iter().enumerate() {
                let c = v["cpus"][0]["tasks"][i]["c_ns"].as_u64();
                prop_assert_eq!(c, Some(g.wcet.max(g.hi) * 1_000_000), "{}", text_of_file);
            }
        }
        let schedulable = v["schedulable"] == true;
        prop_assert_eq!(out.status.code(), Some(if schedulable { 0 } else { 1 }), "{}", text(&out.stderr));
        if schedulable {
            let sc = tempi_cli::parse("s.toml", &text_of_file).unwrap();
            let run = tempi_cli::simulate(&sc, Time::ZERO + Duration::from_millis(80) + Duration::from_nanos(1)).unwrap();
            let misses: u64 = run.threads.iter().map(|t| t.stats.misses).sum();
            prop_assert_eq!(misses, 0, "analysis said schedulable: {}", text_of_file);
        }
    }
}
