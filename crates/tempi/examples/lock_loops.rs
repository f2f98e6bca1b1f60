//! The uncontended lock loop of `tempi bench` (`lock.uncontended.*`), as a program to count
//! instructions on: one thread on one real-time CPU takes and releases a free lock N times
//! (`drop(m.lock(cx))`). The first argument is the protocol (`bpi`, `srp`, ..., or `msrp` for
//! a global lock), the second N, a third `trace` turns tracing on (off by default, as in the
//! benchmark; with it, BP and BPI locks go through the kernel too).
//!
//! ```sh
//! cargo build --release -p tempi --example lock_loops
//! valgrind --tool=callgrind target/release/examples/lock_loops msrp 50000
//! ```

use tempi::clock::RealClock;
use tempi::sync::LockSpec;
use tempi::{Config, Runtime, ThreadSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let protocol = args.next().unwrap_or_else(|| "msrp".into());
    let n: u64 = args.next().map_or(Ok(50_000), |s| s.parse())?;
    let trace = args.next().as_deref() == Some("trace");
    // Room for every record of the loop: a lock, an unlock and their urgency changes.
    let capacity = if trace { 8 * n as usize + 64 } else { 0 };
    let mut rt = Runtime::<RealClock>::new(Config::new(1).trace_capacity(capacity))?;
    let mut spec = LockSpec::new("m").protocol(&protocol);
    if protocol == "pcp" || protocol == "srp" || protocol == "icpp" {
        spec = spec.ceiling(1);
    }
    let m = std::sync::Arc::new(rt.create_mutex(0u64, spec)?);
    rt.spawn(ThreadSpec::new("t").priority(1), move |cx| {
        for _ in 0..n {
            *m.lock(cx).expect("lock") += 1;
        }
    })?;
    let out = rt.run()?;
    println!("{protocol} x {n}: run ended at {:?}, {} trace records", out.end, out.trace.len());
    Ok(())
}
