//! The `admit.*` benchmark's workload replayed on one admission engine, as a program to count
//! instructions on: the engine (built by name, so through the `AdmissionEngine` trait as the
//! benchmark does) is filled with N jobs of 1 µs, each finished at once, due at
//! `now + 1 ms + U(0, 1 s)` (distinct deadlines from a fixed xorshift generator); then B blocks
//! of 32 admissions, each an `idle_before` then an `admit` at the block's instant in one
//! function callgrind can name, each block followed by the finish of its jobs and the expiry of
//! the 32 earliest deadlines (so the engine is back to N entries), which are not counted.
//! The instructions of `one_admission` divided by `32·B` are the cost of one admission.
//!
//! ```sh
//! cargo build --release -p tempi --example admit_replay
//! valgrind --tool=callgrind --branch-sim=yes --toggle-collect='*one_admission*' \
//!     --callgrind-out-file=/dev/null target/release/examples/admit_replay tree 3000 63
//! ```
//!
//! With a fourth argument `time`, it instead times every block's admissions and prints the
//! median per admission (a quick, indicative wall-clock figure for one engine alone).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};
use std::time::{Duration, Instant};
use tempi::policy::admit::{self, Admission, AdmissionEngine, AdmitId};
use tempi::Time;

const BLOCK: usize = 32;
const WCET: Duration = Duration::from_micros(1);

#[inline(never)]
fn one_admission(e: &mut dyn AdmissionEngine, d: Time, now: Time) -> Option<AdmitId> {
    let idle = e.idle_before(d, now);
    match e.admit(WCET, d, now) {
        Ok(Admission::Accepted(id)) if idle >= WCET => Some(id),
        _ => None,
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let engine = args.next().unwrap_or_else(|| "tree".into());
    let n: usize = args.next().map_or(Ok(3_000), |s| s.parse())?;
    let blocks: usize = args.next().map_or(Ok(63), |s| s.parse())?;
    let timed = args.next().is_some_and(|s| s == "time");
    let mut x = 0x5EED_AD41u64 | 1;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let mut distinct = HashSet::new();
    let mut deadline = |now: u64| loop {
        let d = now + 1_000_000 + next() % 1_000_000_000;
        if distinct.insert(d) {
            return d;
        }
    };
    let mut held = BinaryHeap::new();
    let mut now = 1_000_000u64;
    let mut e = admit::by_name(&engine, n + BLOCK).ok_or("no such engine")?;
    for _ in 0..n {
        let d = deadline(now);
        held.push(Reverse(d));
        let Ok(Admission::Accepted(id)) = e.admit(WCET, Time::from_nanos(d), Time::from_nanos(now)) else {
            return Err("a fill job was refused".into());
        };
        e.finish(id)?;
    }
    let mut per_job = Vec::with_capacity(blocks);
    for _ in 0..blocks {
        let ds: [u64; BLOCK] = std::array::from_fn(|_| deadline(now));
        let t0 = Instant::now();
        let mut ids = [None; BLOCK];
        for (&d, id) in ds.iter().zip(&mut ids) {
            *id = one_admission(&mut *e, Time::from_nanos(d), Time::from_nanos(now));
        }
        per_job.push((t0.elapsed().as_nanos() as f64) / BLOCK as f64);
        for id in ids {
            e.finish(id.ok_or("a job was refused")?)?;
        }
        held.extend(ds.iter().map(|&d| Reverse(d)));
        let mut last = now;
        for _ in 0..BLOCK {
            last = held.pop().map_or(last, |Reverse(d)| d);
        }
        now = last + 1;
        if e.expire(Time::from_nanos(now)) != BLOCK {
            return Err("the expiry did not remove one block".into());
        }
    }
    if timed {
        per_job.sort_by(f64::total_cmp);
        println!("{engine} {n}: median {:.1} ns per admission", per_job[per_job.len() / 2]);
    }
    Ok(())
}
