//! The switch paths of `tempi bench`, as a program to count instructions on: `yield N` runs
//! the `switch.roundtrip` loop (two equal-priority threads yielding N times each), `call N`
//! a client calling a lower-priority process N times, the process answering with `reply` and
//! `Flow::Continue`, `fused N` the same answering with `Flow::Reply` (the `msg.call_process`
//! loop); all on one real-time CPU with tracing off. A third argument `plain` turns the direct
//! thread-to-thread switch off (every switch through the dispatcher).
//!
//! ```sh
//! cargo build --release -p tempi --example switch_loops
//! valgrind --tool=callgrind target/release/examples/switch_loops call 50000
//! ```

use tempi::clock::RealClock;
use tempi::message::{Flow, Message};
use tempi::{Config, Runtime, ThreadSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let what = args.next().unwrap_or_else(|| "call".into());
    let n: u64 = args.next().map_or(Ok(50_000), |s| s.parse())?;
    let direct = args.next().as_deref() != Some("plain");
    let mut rt = Runtime::<RealClock>::new(Config::new(1).trace_capacity(0).direct_switch(direct))?;
    match what.as_str() {
        "yield" => {
            for name in ["a", "b"] {
                rt.spawn(ThreadSpec::new(name), move |cx| {
                    for _ in 0..n {
                        cx.yield_now();
                    }
                })?;
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
