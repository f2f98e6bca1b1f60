//! A real-time stress of kills: random runs on two CPUs in which clients (some OS-backed,
//! some in a deferrable server's thread set on their CPU, held when its budget runs out) call
//! and send to a message handler and to a process on each CPU, take a lock of their CPU or a
//! global (MSRP) lock shared by both, wait on a condition variable and take units of a
//! semaphore of CPU 0 (with timeouts), send timed messages across the CPUs, compute, spin in
//! their own code and sleep, while two killers kill random threads (clients and processes) at
//! random instants. Each run must end, and end with every thread completed or killed: a run
//! that ends with a thread still waiting is printed, with the step each client was at and the
//! last trace records of the thread left waiting.
//!
//! ```sh
//! cargo run --release -p tempi --example kill_stress -- 300        # runs 1 to 300
//! cargo run --release -p tempi --example kill_stress -- 300 79     # run 79 alone, in detail
//! ```

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tempi::clock::RealClock;
use tempi::message::{Flow, Handler, Message};
use tempi::sync::LockSpec;
use tempi::trace::TraceKind;
use tempi::{Config, RunOutcome, Runtime, ThreadId, ThreadOutcome, ThreadSpec, Time};

/// A small xorshift generator: each run is drawn from its number.
struct Draw(u64);

impl Draw {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

const STEPS: [&str; 8] =
    ["call handler", "send handler", "call process", "send process", "work", "sleep", "lock", "spin"];

/// One run; `Some(report)` if a thread was left waiting.
fn run(number: u64, detail: bool) -> Option<String> {
    let mut draw = Draw(number.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let us = Duration::from_micros;
    let mut rt = Runtime::<RealClock>::new(Config::new(2).pin(false)).unwrap();
    let h = Handler::new("h", draw.below(2) as usize, 4, move |hcx, m| {
        hcx.work(us(50));
        hcx.reply(m);
    });
    let processes: Vec<ThreadId> = (0..2)
        .map(|cpu| {
            let spec = ThreadSpec::new(format!("process{cpu}")).cpu(cpu).priority(2).mailbox(4);
            rt.spawn_process(spec, move |cx, m| {
                cx.work(us(30));
                if m.expects_reply {
                    Flow::Reply(m)
                } else {
                    Flow::Continue
                }
            })
            .unwrap()
        })
        .collect();
    let locks: Vec<Arc<tempi::sync::Mutex<u64>>> = (0..2)
        .map(|cpu| Arc::new(rt.create_mutex(0, LockSpec::new(format!("l{cpu}")).cpu(cpu).protocol("bpi")).unwrap()))
        .collect();
    // Of CPU 0, used from both CPUs: waits and units there are requests to CPU 0.
    let condition = Arc::new(rt.create_condvar(0).unwrap());
    let units = Arc::new(rt.create_semaphore(tempi::sync::SemSpec::new("units", 2)).unwrap());
    let global = Arc::new(rt.create_mutex(0u64, LockSpec::new("g").protocol("msrp")).unwrap());
    // A deferrable server on each CPU for the clients drawn into it.
    let servers: Vec<tempi::SetId> = (0..2)
        .map(|cpu| {
            let s = rt.create_set(&format!("server{cpu}"), cpu).unwrap();
            rt.set_budget(s, tempi::Budget::deferrable_server(us(300), us(1_000))).unwrap();
            s
        })
        .collect();
    let at_step: Arc<Vec<AtomicU64>> = Arc::new((0..6).map(|_| AtomicU64::new(0)).collect());
    let mut plans: Vec<(usize, Vec<u64>)> = Vec::new();
    let mut ids = Vec::new();
    for c in 0..2 + draw.below(4) as usize {
        let cpu = draw.below(2) as usize;
        let priority = 1 + draw.below(4) as i32;
        let steps: Vec<u64> = (0..5 + draw.below(20)).map(|_| draw.below(STEPS.len() as u64)).collect();
        let os_backed = draw.below(3) == 0;
        let mut spec = ThreadSpec::new(format!("c{c}")).cpu(cpu).priority(priority);
        if os_backed {
            spec = spec.os_backed();
        }
        if detail {
            println!("c{c}: CPU {cpu}, priority {priority}, OS-backed {os_backed}, steps {steps:?}");
        }
        plans.push((cpu, steps.clone()));
        let (h, processes, lock, at_step) = (h.clone(), processes.clone(), locks[cpu].clone(), at_step.clone());
        let (global, condition, units) = (global.clone(), condition.clone(), units.clone());
        let id = rt
            .spawn(spec, move |cx| {
                for (k, &step) in steps.iter().enumerate() {
                    at_step[c].store(k as u64, Ordering::Relaxed);
                    let m = Message::new(c as i64, k as i64, 0);
                    // Refusals (a full queue, a receiver killed) are answers, not failures.
                    match step {
                        0 => drop(h.call(cx, m)),
                        1 => drop(h.send(cx, m)),
                        2 => drop(cx.call(processes[k % 2], m)),
                        3 => drop(cx.send(processes[k % 2], m)),
                        4 => cx.work(us(100)),
                        5 => cx.sleep(us(200)),
                        6 => {
                            let mut g = lock.lock(cx).unwrap();
                            *g += 1;
                            cx.work(us(80));
                        }
                        8 => {
                            let mut g = global.lock(cx).unwrap();
                            *g += 1;
                            cx.work(us(40));
                        }
                        9 => drop(cx.send_after(us(150), processes[(k + 1) % 2], m)),
                        10 => {
                            // Wait a little on the condition under this CPU's lock, then wake
                            // whoever waits there.
                            let g = lock.lock(cx).unwrap();
                            if let Ok((g, _)) = condition.wait_timeout(cx, g, Some(us(300))) {
                                drop(g);
                            }
                            let _ = condition.notify_all(cx);
                        }
                        11 => {
                            if units.procure_timeout(cx, us(500)).is_ok() {
                                cx.work(us(50));
                                let _ = units.vacate(cx);
                            }
                        }
                        _ => {
                            let start = Instant::now();
                            while start.elapsed() < us(60) {
                                std::hint::spin_loop();
                            }
                        }
                    }
                }
            })
            .unwrap();
        if draw.below(3) == 0 {
            rt.add_to_set(servers[cpu], id).unwrap();
        }
        ids.push(id);
    }
    let everyone: Vec<ThreadId> = ids.iter().chain(&processes).copied().collect();
    for cpu in 0..2 {
        let mut kills: Vec<(u64, ThreadId)> = (0..draw.below(3))
            .map(|_| (draw.below(5_000), everyone[draw.below(everyone.len() as u64) as usize]))
            .collect();
        kills.sort_by_key(|k| k.0);
        rt.spawn(ThreadSpec::new(format!("killer{cpu}")).cpu(cpu).priority(9), move |cx| {
            for &(at, victim) in &kills {
                cx.sleep_until(Time::from_micros(at));
                let _ = cx.kill(victim);
            }
        })
        .unwrap();
    }
    // The processes never end by themselves.
    rt.spawn(ThreadSpec::new("stopper").priority(10), move |cx| {
        cx.sleep_until(Time::from_millis(50));
        for &p in &processes {
            let _ = cx.kill(p);
        }
    })
    .unwrap();
    let out = match rt.run_until(Time::from_secs(5)) {
        Ok(out) => out,
        Err(e) => return Some(format!("run {number}: error {e}")),
    };
    let waiting: Vec<_> = out
        .threads
        .iter()
        .filter(|t| !matches!(t.outcome, Some(ThreadOutcome::Completed | ThreadOutcome::Killed)))
        .collect();
    if waiting.is_empty() && !h.is_busy() {
        return None;
    }
    let mut report = format!("run {number}: left waiting at {:?}; handler busy: {}\n", out.end, h.is_busy());
    for (c, (cpu, steps)) in plans.iter().enumerate() {
        let k = at_step[c].load(Ordering::Relaxed) as usize;
        report += &format!("  c{c} (CPU {cpu}) at step {k}: {}\n", STEPS[steps[k] as usize]);
    }
    for t in waiting {
        report += &format!("  {} ({:?}): {}\n", t.name, t.id, last_records(&out, t.id));
    }
    Some(report)
}

/// The last records of thread `id` in the run's trace.
fn last_records(out: &RunOutcome, id: ThreadId) -> String {
    let mine: Vec<String> = out
        .trace
        .iter()
        .filter(|r| r.thread == id && r.kind != TraceKind::Spawn)
        .map(|r| format!("{:?}@{:?}/{}", r.kind, r.time, r.arg))
        .collect();
    mine[mine.len().saturating_sub(6)..].join(" ")
}

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<u64>().expect("a number"));
    let runs = args.next().unwrap_or(100);
    let only = args.next();
    let mut failed = 0;
    for number in (1..=runs).filter(|n| only.is_none_or(|o| o == *n)) {
        if let Some(report) = run(number, only.is_some()) {
            failed += 1;
            print!("{report}");
        }
        if number % 50 == 0 {
            eprintln!("{number} runs");
        }
    }
    println!("{failed} of {} runs left a thread waiting", if only.is_some() { 1 } else { runs });
}
