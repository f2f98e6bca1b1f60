//! The `freejazz-2` experiment: table 2 of Kramp's FREE JAZZ report (the cost of messages to
//! processes and handlers, with the scheduler behind the open meta-interface and with it
//! hard-wired), re-run on one pinned real-time CPU of this machine.
//!
//! Owns the two schedulers compared, the paper's numbers, the conclusions and the reports. The
//! four operations are timed by the `msg.*` functions of `tempi bench` (`bench/msg.rs`), given
//! each scheduler in turn:
//! - **black box**: [`FixedPriority`] as is. It asks for no message-level event, so the kernel
//!   tests one bit per semaphore operation, handler block and thread block and calls nothing:
//!   the hard-wired path;
//! - **open**: the same policy under a stacked scheduler ([`StackedScheduler`]) that forwards
//!   every hook, so every scheduler call goes through one more dynamic call, and that asks for
//!   every event ([`Events::ALL`]), so NEXT is reported at each block (twice per process round
//!   trip) with the view of the queued messages. Messages carry no constraint, as in the
//!   paper's fixed-priority use, so READY and PRIO are not reported.
//!
//! The two variants alternate within each repetition; each figure is the fastest of the
//! repetitions (the one least disturbed by other work on the machine; the paper gives no
//! statistics). Δ% is open against black box, as in the paper.

use std::fmt::Write as _;
use std::sync::Arc;

use serde_json::{json, Value};
use tempi::policy::sched::{Events, FixedPriority, Scheduler, SchedulerFactory, StackedScheduler};

use super::ExperimentArgs;
use crate::bench::msg::{tempi_call, tempi_handler, tempi_send};

/// The operations of table 2, in the paper's order.
const OPS: [&str; 4] = ["send->process", "call<->process", "send->handler", "call<->handler"];

/// The paper's table 2 (µs): platform, then (black box, open) per operation.
const PAPER: [(&str, [(f64, f64); 4]); 4] = [
    ("SunOS 4.1.3, SPARC10 Model 20", [(2.21, 2.34), (68.84, 71.90), (3.98, 4.26), (5.01, 5.28)]),
    ("LynxOS 2.5.0, P166", [(0.60, 0.60), (15.43, 16.07), (1.04, 1.06), (1.25, 1.30)]),
    ("Linux 2.0.30, P166", [(0.59, 0.59), (2.78, 3.50), (1.03, 1.02), (1.23, 1.26)]),
    ("Linux 2.0.30, P200MMX", [(0.49, 0.49), (2.20, 2.72), (0.85, 0.79), (0.97, 0.95)]),
];

/// Operations per run and repetitions: full, then `--quick`.
const FULL: (u64, usize) = (50_000, 21);
const QUICK: (u64, usize) = (2_000, 1);

/// The open variant's top: forwards everything to fixed priority, asks for every event.
struct Open {
    prev: Box<dyn Scheduler>,
}

impl StackedScheduler for Open {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn events(&self) -> Events {
        Events::ALL
    }
}

fn black_box_factory() -> SchedulerFactory {
    Arc::new(|| Box::new(FixedPriority::new()) as Box<dyn Scheduler>)
}

fn open_factory() -> SchedulerFactory {
    Arc::new(|| Box::new(Open { prev: Box::new(FixedPriority::new()) }) as Box<dyn Scheduler>)
}

/// ns per operation `op` (index into [`OPS`]) under `sched`.
fn time_op(op: usize, n: u64, sched: &SchedulerFactory) -> Result<f64, String> {
    let s = Some(sched);
    match op {
        0 => tempi_send(n, s),
        1 => tempi_call(n, s),
        2 => tempi_handler(n, false, s),
        _ => tempi_handler(n, true, s),
    }
}

fn fastest(xs: &[f64]) -> f64 {
    xs.iter().copied().fold(f64::INFINITY, f64::min)
}

/// One row of our table: the fastest run of each variant, ns per operation.
struct Row {
    black_ns: f64,
    open_ns: f64,
}

impl Row {
    fn delta_pct(&self) -> f64 {
        (self.open_ns / self.black_ns - 1.0) * 100.0
    }
}

/// One of the paper's conclusions, checked on our run.
struct Conclusion {
    claim: &'static str,
    holds: bool,
    detail: String,
}

fn measure(n: u64, reps: usize) -> Result<Vec<Row>, String> {
    let (black, open) = (black_box_factory(), open_factory());
    let mut rows = Vec::new();
    for (op, name) in OPS.iter().enumerate() {
        eprintln!("experiment: {name}, {n} operations x {reps} per variant");
        // Warm-up of both, then alternate.
        time_op(op, n, &black)?;
        time_op(op, n, &open)?;
        let (mut b, mut o) = (Vec::with_capacity(reps), Vec::with_capacity(reps));
        for _ in 0..reps {
            b.push(time_op(op, n, &black)?);
            o.push(time_op(op, n, &open)?);
        }
        rows.push(Row { black_ns: fastest(&b), open_ns: fastest(&o) });
    }
    Ok(rows)
}

fn conclusions(rows: &[Row]) -> Vec<Conclusion> {
    let call_p = &rows[1];
    let call_h = &rows[3];
    let ratio = call_p.open_ns / call_h.open_ns;
    let quiet = [0, 2, 3].map(|k| rows[k].delta_pct());
    let max_quiet = quiet.iter().fold(0.0f64, |m, d| m.max(d.abs()));
    vec![
        Conclusion {
            claim: "calling a handler is several times cheaper than calling a process (paper: 3-14x)",
            holds: ratio >= 3.0,
            detail: format!(
                "open: call<->process {:.0} ns / call<->handler {:.0} ns = {ratio:.1}x",
                call_p.open_ns, call_h.open_ns
            ),
        },
        Conclusion {
            claim: "the open scheduler's overhead is small where no scheduler call is involved (paper: -7% to +7%)",
            holds: max_quiet <= 10.0,
            detail: format!(
                "send->process {:+.1}%, send->handler {:+.1}%, call<->handler {:+.1}% (bound used: |delta| <= 10%)",
                quiet[0], quiet[1], quiet[2]
            ),
        },
        Conclusion {
            claim: "the overhead shows where the scheduler is called, and stays moderate (paper: call<->process +4% to +26%)",
            holds: call_p.delta_pct() <= 26.0,
            detail: format!("call<->process {:+.1}% (bound used: <= +26%)", call_p.delta_pct()),
        },
    ]
}

fn text(rows: &[Row], checks: &[Conclusion], n: u64, reps: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "freejazz-2: FREE JAZZ table 2, message costs, black box vs open scheduler");
    let _ = writeln!(s, "{n} operations per run, fastest of {reps} runs per variant, one pinned real-time CPU");
    let _ = writeln!(s);
    let _ = writeln!(s, "{:<16} {:>12} {:>12} {:>9}", "operation", "black (ns)", "open (ns)", "delta");
    for (name, r) in OPS.iter().zip(rows) {
        let _ = writeln!(s, "{name:<16} {:>12.0} {:>12.0} {:>+8.1}%", r.black_ns, r.open_ns, r.delta_pct());
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Paper (us, black -> open, delta):");
    for (platform, cells) in PAPER {
        let row: Vec<String> =
            cells.iter().map(|(b, o)| format!("{b:.2}->{o:.2} ({:+.1}%)", (o / b - 1.0) * 100.0)).collect();
        let _ = writeln!(s, "  {platform:<30} {}", row.join("  "));
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "Paper's conclusions, checked on these runs:");
    for c in checks {
        let _ = writeln!(s, "  {} {}", if c.holds { "[holds]" } else { "[does not hold]" }, c.claim);
        let _ = writeln!(s, "      {}", c.detail);
    }
    s
}

fn to_json(rows: &[Row], checks: &[Conclusion], n: u64, reps: usize) -> Value {
    let rows: Vec<Value> = OPS
        .iter()
        .enumerate()
        .zip(rows)
        .map(|((k, name), r)| {
            let paper: Vec<Value> = PAPER
                .iter()
                .map(|(p, cells)| {
                    let (b, o) = cells[k];
                    json!({"platform": p, "black_us": b, "open_us": o, "delta_pct": ((o / b - 1.0) * 1000.0).round() / 10.0})
                })
                .collect();
            json!({
                "operation": name,
                "black_box_ns": (r.black_ns * 10.0).round() / 10.0,
                "open_ns": (r.open_ns * 10.0).round() / 10.0,
                "delta_pct": (r.delta_pct() * 10.0).round() / 10.0,
                "paper": paper,
            })
        })
        .collect();
    let checks: Vec<Value> =
        checks.iter().map(|c| json!({"claim": c.claim, "holds": c.holds, "detail": c.detail})).collect();
    json!({
        "experiment": "freejazz-2",
        "operations_per_run": n,
        "runs_per_variant": reps,
        "rows": rows,
        "conclusions": checks,
    })
}

/// Run `freejazz-2` and print its report.
pub fn run(args: &ExperimentArgs) -> Result<(), String> {
    let (n, reps) = if args.quick { QUICK } else { FULL };
    let rows = measure(n, reps)?;
    let checks = conclusions(&rows);
    if args.json {
        println!("{}", to_json(&rows, &checks, n, reps));
    } else {
        print!("{}", text(&rows, &checks, n, reps));
    }
    Ok(())
}
