//! The lock hand-off of `lock.handoff.bpi`, as a program to count instructions on, in virtual
//! time so that every run executes the same instructions: a low-priority thread holds a BPI
//! mutex for 10 µs at a time, and a periodic high-priority thread, released in the middle of
//! each hold, blocks on it and is handed the lock at the owner's unlock. Every job of the high
//! thread is one hand-off cycle (its release and preemption, the block with inheritance, the
//! unlock handing the lock over, its own unlock, the switch back, the owner's next lock). The
//! difference between two runs with different N is the cost per cycle.
//!
//! ```sh
//! cargo build --release -p tempi --example lock_handoff
//! valgrind --tool=callgrind target/release/examples/lock_handoff 20000    # and 40000
//! ```

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tempi::clock::VirtualClock;
use tempi::sync::LockSpec;
use tempi::{Config, Runtime, ThreadSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: u32 = std::env::args().nth(1).map_or(Ok(20_000), |s| s.parse())?;
    let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(0))?;
    let m = Arc::new(rt.create_mutex(0u64, LockSpec::new("m").protocol("bpi"))?);
    let done = Arc::new(AtomicBool::new(false));
    let (hm, hdone) = (m.clone(), done.clone());
    let mut job = 0;
    let high = ThreadSpec::new("high").periodic(Duration::from_micros(10)).phase(Duration::from_micros(5));
    rt.spawn(high.priority(2).max_jobs(n), move |cx| {
        *hm.lock(cx).expect("hand-off lock") += 1;
        job += 1;
        if job == n {
            hdone.store(true, Ordering::Relaxed);
        }
    })?;
    rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
        while !done.load(Ordering::Relaxed) {
            let g = m.lock(cx).expect("hand-off lock");
            cx.work(Duration::from_micros(10));
            drop(g);
        }
    })?;
    let out = rt.run()?;
    println!("bpi hand-off x {n}: run ended at {:?}", out.end);
    Ok(())
}
