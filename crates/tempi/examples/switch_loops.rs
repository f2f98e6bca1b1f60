//! The switch paths of `tempi bench`, as a program to count instructions on: `yield N` runs
//! the `switch.roundtrip` loop (two equal-priority threads yielding N times each), `call N`
//! a client calling a lower-priority process N times, the process answering with `reply` and
//! `Flow::Continue`, `fused N` the same answering with `Flow::Reply` (the `msg.call_process`
//! loop); all on one real-time CPU with tracing off. A third argument `plain` turns the direct
//! thread-to-thread switch off (every switch through the dispatcher; anything else keeps it);
//! a fourth puts the two yielding threads in a thread set under `off`, `thread` or `group`
//! accounting, or `budget` (group, with a budget armed): the `switch.accounting.*` loops.
//! `--virtual` anywhere on the line runs the same loop in virtual time, where every run executes
//! the same instructions (the real clock's reads and the machine's timing vary from run to run),
//! so that two builds can be compared by their instruction counts.
//!
//! ```sh
//! cargo build --release -p tempi --example switch_loops
//! valgrind --tool=callgrind target/release/examples/switch_loops call 50000
//! valgrind --tool=callgrind target/release/examples/switch_loops --virtual yield 20000   # and 40000
//! ```

use tempi::clock::{Clock, RealClock, VirtualClock};
use tempi::message::{Flow, Message};
use tempi::{Accounting, Budget, Config, Runtime, ThreadSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let all: Vec<String> = std::env::args().skip(1).collect();
    let simulated = all.iter().any(|a| a == "--virtual");
    let args = all.into_iter().filter(|a| a != "--virtual");
    if simulated {
        run_loops::<VirtualClock>(args)
    } else {
        run_loops::<RealClock>(args)
    }
}

fn run_loops<C: Clock>(mut args: impl Iterator<Item = String>) -> Result<(), Box<dyn std::error::Error>> {
    let what = args.next().unwrap_or_else(|| "call".into());
    let n: u64 = args.next().map_or(Ok(50_000), |s| s.parse())?;
    let direct = args.next().as_deref() != Some("plain");
    // `yield` only: both threads in one thread set, under this accounting (`off`, `thread`,
    // `group`), or `budget` (group accounting and a budget armed that never runs out): the
    // `switch.accounting.*` loops of `tempi bench`.
    let set_mode = args.next();
    let accounting = match set_mode.as_deref() {
        None | Some("group") | Some("budget") => Accounting::Group,
        Some("off") => Accounting::Off,
        Some("thread") => Accounting::Thread,
        Some(other) => return Err(format!("unknown set mode `{other}`: `off`, `thread`, `group` or `budget`").into()),
    };
    let cfg = Config::new(1).trace_capacity(0).direct_switch(direct).accounting(accounting);
    let mut rt = Runtime::<C>::new(cfg)?;
    match what.as_str() {
        "yield" => {
            let mut ids = Vec::new();
            for name in ["a", "b"] {
                ids.push(rt.spawn(ThreadSpec::new(name), move |cx| {
                    for _ in 0..n {
                        cx.yield_now();
                    }
                })?);
            }
            if set_mode.is_some() {
                let set = rt.create_set("s", 0)?;
                for t in ids {
                    rt.add_to_set(set, t)?;
                }
                if set_mode.as_deref() == Some("budget") {
                    rt.set_budget(set, Budget::new(std::time::Duration::from_secs(3600)))?;
                }
            }
        }
        "call" | "fused" => {
            let fused = what == "fused";
            let server = rt.spawn_process(ThreadSpec::new("server").priority(1), move |cx, m| {
                if fused && m.id != 0 {
                    return Flow::Reply(m);
                }
                cx.reply(m).expect("reply");
                if m.id == 0 {
                    Flow::Stop
                } else {
                    Flow::Continue
                }
            })?;
            rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
                for i in 0..n {
                    std::hint::black_box(cx.call(server, Message::new(1, i as i64, 0)).expect("call"));
                }
                cx.call(server, Message::new(0, 0, 0)).expect("last call");
            })?;
        }
        other => return Err(format!("unknown loop `{other}`: `yield`, `call` or `fused`").into()),
    }
    let out = rt.run()?;
    println!("{what} x {n}: run ended at {:?}, {} direct switches", out.end, out.direct_switches);
    Ok(())
}
