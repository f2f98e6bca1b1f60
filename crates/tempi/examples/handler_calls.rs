//! The idle-handler call of `msg.call_handler`, as a program to count instructions on: one
//! thread of a virtual-time runtime calls an idle handler that replies with the message it
//! got, N times (the handler runs on the caller's stack). The difference between two runs
//! with different N is the cost per call.
//!
//! ```sh
//! cargo build --release -p tempi --example handler_calls
//! valgrind --tool=callgrind target/release/examples/handler_calls 20000    # and 40000
//! ```

use tempi::message::{Handler, Message};
use tempi::{Runtime, ThreadSpec};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n: i64 = std::env::args().nth(1).map_or(Ok(20_000), |s| s.parse())?;
    let h = Handler::new("echo", 0, 4, |hcx, m| hcx.reply(m));
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("caller"), move |cx| {
        let mut sum = 0;
        for v in 0..n {
            sum += h.call(cx, Message::new(0, v, 0)).map_or(0, |r| r.value);
        }
        assert_eq!(sum, n * (n - 1) / 2);
    })?;
    rt.run()?;
    Ok(())
}
