use std::time::Duration;
use tempi::trace::{StopReason, TraceKind};
use tempi::{assign_rate_monotonic, Runtime, ThreadSpec, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn rm_timeline() {
    let mut rt = Runtime::simulated(1);
    let mut specs = vec![
        ThreadSpec::new("t1").periodic(ms(4)).wcet(ms(1)),
        ThreadSpec::new("t2").periodic(ms(6)).wcet(ms(2)),
        ThreadSpec::new("t3").periodic(ms(12)).wcet(ms(3)),
    ];
    assign_rate_monotonic(&mut specs);
    for s in specs {
        let c = s.wcet_value();
        rt.spawn(s, move |cx| cx.work(c)).unwrap();
    }
    let out = rt.run_until(Time::from_millis(12)).unwrap();
    let mut segs = vec![];
    let mut open: Option<(String, Time)> = None;
    for r in &out.trace {
        match r.kind {
            TraceKind::Run => open = Some((out.thread(r.thread).unwrap().name.clone(), r.time)),
            TraceKind::Stop => {
                let (n, s) = open.take().unwrap();
                segs.push(format!("{n}:{}-{}:{}", s.as_nanos() / 1_000_000, r.time.as_nanos() / 1_000_000, StopReason::from_code(r.arg).unwrap().name()));
            }
            _ => {}
        }
    }
    println!("{segs:?}");
    assert_eq!(out.total_misses(), 0);
}
