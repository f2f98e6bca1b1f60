//! The workload of `sim.jobs_per_sec` in `tempi bench`, as a program to count instructions
//! on: 20 periodic threads on one CPU under EDF, periods 1 to 20 ms, each job working 0.045
//! of its period (U = 0.9), for N simulated seconds with the trace off. The difference between
//! two runs with different N, divided by the jobs of the longer run's extra seconds (3,598
//! jobs per simulated second), is the cost per job.
//!
//! ```sh
//! cargo build --release -p tempi --example sim_jobs
//! valgrind --tool=callgrind target/release/examples/sim_jobs 1    # and 2
//! ```

use std::time::Duration;

use tempi::clock::VirtualClock;
use tempi::policy::sched::Edf;
use tempi::{Config, Runtime, ThreadSpec, Time};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let seconds: u64 = std::env::args().nth(1).map_or(Ok(1), |s| s.parse())?;
    let cfg = Config::new(1).trace_capacity(0).scheduler(|| Box::new(Edf::new()));
    let mut rt = Runtime::<VirtualClock>::new(cfg)?;
    for p in 1..=20u64 {
        let c = Duration::from_micros(45 * p);
        rt.spawn(ThreadSpec::new(format!("p{p}")).periodic(Duration::from_millis(p)).wcet(c), move |cx| cx.work(c))?;
    }
    let out = rt.run_until(Time::from_secs(seconds))?;
    let jobs: u64 = out.threads.iter().map(|t| t.stats.completed).sum();
    println!("{jobs} jobs, {} misses", out.total_misses());
    Ok(())
}
