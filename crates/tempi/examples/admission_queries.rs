//! An admission engine's query (`idle_before`) at a given number of entries, as a program to
//! count instructions on: an engine of `tempi::policy::admit` is filled with N jobs of 100 ns
//! WCET due at 10 s + U(0, 1 s) (a fixed xorshift generator), each charged 50 ns and finished,
//! as jobs run to their end are; then Q queries `idle_before(d)` are made with `d` cycling
//! through 1,024 deadlines drawn the same way, each in a function callgrind can name. The
//! difference between two runs with different Q, divided by the difference of Q, is the cost
//! of one query.
//!
//! ```sh
//! cargo build --release -p tempi --example admission_queries
//! valgrind --tool=callgrind --callgrind-out-file=/dev/null \
//!     target/release/examples/admission_queries min_laxity 8000 6000    # and 2000
//! ```

use std::time::Duration;
use tempi::policy::admit::{self, Admission, AdmissionEngine};
use tempi::Time;

#[inline(never)]
fn one_query(e: &dyn AdmissionEngine, d: Time) -> Duration {
    e.idle_before(d, Time::ZERO)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let engine = args.next().unwrap_or_else(|| "min_laxity".into());
    let n: usize = args.next().map_or(Ok(8_000), |s| s.parse())?;
    let q: usize = args.next().map_or(Ok(6_000), |s| s.parse())?;
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut draw = || Time::from_nanos(10_000_000_000 + next() % 1_000_000_000);
    let mut e = admit::by_name(&engine, n).ok_or("no such engine")?;
    for _ in 0..n {
        let Ok(Admission::Accepted(id)) = e.admit(Duration::from_nanos(100), draw(), Time::ZERO) else {
            return Err("a job was refused".into());
        };
        e.charge(id, Duration::from_nanos(50))?;
        e.finish(id)?;
    }
    let deadlines: Vec<Time> = (0..1024).map(|_| draw()).collect();
    let mut sum = Duration::ZERO;
    for i in 0..q {
        sum += one_query(&*e, deadlines[i % deadlines.len()]);
    }
    println!("{engine}: {n} entries, {q} queries, idle sum {sum:?}");
    Ok(())
}
