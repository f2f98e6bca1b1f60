//! A backtrace taken inside a thread goes on past the thread's first frame into the stack
//! that resumed it: the dispatcher's, down to the function that called `run`, whether the
//! thread was resumed by the dispatcher or reached by a direct switch from another thread.

use std::backtrace::Backtrace;
use std::sync::{Arc, Mutex};

use tempi::clock::VirtualClock;
use tempi::{Config, RunOutcome, Runtime, ThreadSpec};

/// A frame only the resumer's stack has: the backtraces must reach it.
#[inline(never)]
fn backtraces_resumer_marker(rt: Runtime<VirtualClock>) -> RunOutcome {
    let out = rt.run().unwrap();
    // Keeps the call to `run` from becoming a jump, which would leave this frame off the stack.
    std::hint::black_box(&out);
    out
}

/// Two threads of one priority that each take a backtrace, yield, and take another; returns
/// the backtraces by thread and the run's direct switches.
fn taken(direct: bool) -> (Vec<(String, String)>, u64) {
    let traces = Arc::new(Mutex::new(Vec::new()));
    let cfg = Config::new(1).direct_switch(direct);
    let mut rt = Runtime::<VirtualClock>::new(cfg).unwrap();
    for name in ["a", "b"] {
        let traces = traces.clone();
        rt.spawn(ThreadSpec::new(name), move |cx| {
            traces.lock().unwrap().push((format!("{name} before its yield"), Backtrace::force_capture()));
            cx.yield_now();
            traces.lock().unwrap().push((format!("{name} after its yield"), Backtrace::force_capture()));
        })
        .unwrap();
    }
    let out = backtraces_resumer_marker(rt);
    let traces = std::mem::take(&mut *traces.lock().unwrap());
    (traces.into_iter().map(|(at, bt)| (at, bt.to_string())).collect(), out.direct_switches)
}

fn check(traces: &[(String, String)]) {
    assert_eq!(traces.len(), 4);
    for (at, bt) in traces {
        assert!(bt.contains("backtraces_resumer_marker"), "the backtrace of {at} stops in the thread:\n{bt}");
    }
}

#[test]
fn backtraces_reach_the_resumer_after_direct_switches() {
    let (traces, direct) = taken(true);
    assert!(direct > 0, "the yields were switched directly");
    check(&traces);
}

#[test]
fn backtraces_reach_the_dispatcher_without_direct_switches() {
    let (traces, direct) = taken(false);
    assert_eq!(direct, 0);
    check(&traces);
}
