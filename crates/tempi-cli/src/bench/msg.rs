//! The `msg.*` metrics: message passing between tempi threads on one real-time CPU.
//!
//! - `msg.call_process`: a call to a process and its reply (client -> server -> client, two
//!   switches; the process answers with `Flow::Reply`, its reply and next read in one call), against a round trip over two `std::sync::mpsc` channels between two OS
//!   threads pinned to the same CPU; `msg.call_process.tokio` is the same tempi number against
//!   a ping-pong of two tasks over `tokio::sync::mpsc` on a current-thread tokio runtime.
//! - `msg.send_process`: one asynchronous send to a ready process of lower priority (no
//!   switch: the message is queued), against one `std::sync::mpsc` send to a channel nobody
//!   waits on.
//! - `msg.call_handler`: a call to an idle handler, which runs on the caller's stack, against
//!   `msg.call_process` measured in the same run (the bar: at most 0.2x, i.e. ratio >= 5).
//! - `msg.send_handler`: an asynchronous send to an idle handler (it runs at once and
//!   returns), against `msg.send_process` in the same run.
//!
//! Owns the tempi side and the tokio peer; the OS-thread channel peer is in `peers.rs`. It
//! must not time anything else.

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use tempi::clock::RealClock;
use tempi::message::{Flow, Handler, Message};
use tempi::policy::sched::SchedulerFactory;
use tempi::{Config, Runtime, ThreadSpec};

use super::peers::channel_switch;
use super::{check_completed, compare, progress, sample, Metric, Sizes};

/// Messages per batch of `msg.send_process`: the receiver's queue and the pool hold one batch.
const BATCH: usize = 256;

/// The configuration of every `msg.*` run: one pinned real-time CPU, no trace, and the
/// scheduler `sched` (the default fixed priority when `None`).
fn config(sched: Option<&SchedulerFactory>) -> Config {
    let cfg = Config::new(1).trace_capacity(0).pin(true);
    match sched {
        Some(f) => cfg.scheduler_factory(f.clone()),
        None => cfg,
    }
}

/// tempi: `n` calls from a client to a process on one pinned real-time CPU; ns per round trip.
/// Also timed by `tempi experiment freejazz-2`, with its schedulers.
pub(crate) fn tempi_call(n: u64, sched: Option<&SchedulerFactory>) -> Result<f64, String> {
    let cfg = config(sched);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let server = rt
        .spawn_process(ThreadSpec::new("server").priority(1), |cx, m| {
            if m.id == 0 {
                cx.reply(m).expect("reply");
                Flow::Stop
            } else {
                // The reply and the read of the next call in one runtime call.
                Flow::Reply(m)
            }
        })
        .map_err(|e| e.to_string())?;
    let ns = Arc::new(AtomicU64::new(0));
    let out_ns = ns.clone();
    rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
        // The first call also creates the server's coroutine: the clock starts after it.
        cx.call(server, Message::new(1, 0, 0)).expect("call");
        let t0 = Instant::now();
        for i in 0..n {
            black_box(cx.call(server, Message::new(1, i as i64, 0)).expect("call"));
        }
        out_ns.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
        cx.call(server, Message::new(0, 0, 0)).expect("last call");
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64 / n as f64)
}

/// tempi: `n` sends (in batches of [`BATCH`]) to a ready process of lower priority, which
/// drains each batch while the sender waits; ns per send, the draining not counted.
pub(crate) fn tempi_send(n: u64, sched: Option<&SchedulerFactory>) -> Result<f64, String> {
    let cfg = config(sched).message_pool(BATCH + 1);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let sink = rt
        .spawn_process(ThreadSpec::new("sink").priority(1).mailbox(BATCH + 1), |cx, m| {
            if m.expects_reply {
                // The end of a batch: every message before it has been read.
                cx.reply(m).expect("reply");
            }
            if m.id == 0 {
                Flow::Stop
            } else {
                Flow::Continue
            }
        })
        .map_err(|e| e.to_string())?;
    let ns = Arc::new(AtomicU64::new(0));
    let out_ns = ns.clone();
    rt.spawn(ThreadSpec::new("sender").priority(2), move |cx| {
        cx.call(sink, Message::new(2, 0, 0)).expect("warm-up");
        let mut spent = 0u128;
        let mut sent = 0u64;
        while sent < n {
            let t0 = Instant::now();
            for i in 0..BATCH {
                cx.send(sink, Message::new(1, i as i64, 0)).expect("send");
            }
            spent += t0.elapsed().as_nanos();
            sent += BATCH as u64;
            cx.call(sink, Message::new(2, 0, 0)).expect("drain");
        }
        out_ns.store((spent / u128::from(sent)) as u64, Ordering::Relaxed);
        cx.call(sink, Message::new(0, 0, 0)).expect("last call");
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64)
}

/// tempi: `n` calls (or sends) to an idle handler from one thread of a pinned real-time CPU;
/// ns per invocation.
pub(crate) fn tempi_handler(n: u64, call: bool, sched: Option<&SchedulerFactory>) -> Result<f64, String> {
    let cfg = config(sched);
    let mut rt = Runtime::<RealClock>::new(cfg).map_err(|e| e.to_string())?;
    let h = Handler::new("h", 0, 1, |hcx, m| {
        if m.expects_reply {
            hcx.reply(m);
        }
    });
    let ns = Arc::new(AtomicU64::new(0));
    let out_ns = ns.clone();
    rt.spawn(ThreadSpec::new("client"), move |cx| {
        let t0 = Instant::now();
        for i in 0..n {
            let m = Message::new(1, i as i64, 0);
            if call {
                black_box(h.call(cx, black_box(m)).expect("call"));
            } else {
                h.send(cx, black_box(m)).expect("send");
            }
        }
        out_ns.store(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    })
    .map_err(|e| e.to_string())?;
    let out = rt.run().map_err(|e| e.to_string())?;
    check_completed(&out)?;
    Ok(ns.load(Ordering::Relaxed) as f64 / n as f64)
}

/// Peer of `msg.send_process`: `n` sends on a `std::sync::mpsc` channel nobody waits on (in
/// batches, drained untimed); ns per send.
fn mpsc_send(n: u64) -> f64 {
    let (tx, rx) = mpsc::channel::<Message>();
    let mut spent = 0u128;
    let mut sent = 0u64;
    while sent < n {
        let t0 = Instant::now();
        for i in 0..BATCH {
            tx.send(Message::new(1, i as i64, 0)).expect("receiver alive");
        }
        spent += t0.elapsed().as_nanos();
        sent += BATCH as u64;
        while rx.try_recv().is_ok() {}
    }
    (spent / u128::from(sent)) as f64
}

/// Peer of `msg.call_process.tokio`: two tasks of a current-thread tokio runtime, one sending
/// a request over a `tokio::sync::mpsc` channel and awaiting the answer on another; ns per
/// round trip.
fn tokio_call(n: u64) -> Result<f64, String> {
    let rt = tokio::runtime::Builder::new_current_thread().build().map_err(|e| e.to_string())?;
    Ok(rt.block_on(async move {
        let (to_server, mut requests) = tokio::sync::mpsc::channel::<Message>(1);
        let (to_client, mut answers) = tokio::sync::mpsc::channel::<Message>(1);
        let server = tokio::task::spawn(async move {
            while let Some(m) = requests.recv().await {
                if to_client.send(m).await.is_err() {
                    break;
                }
            }
        });
        let client = tokio::task::spawn(async move {
            to_server.send(Message::new(1, 0, 0)).await.expect("server alive");
            answers.recv().await.expect("server alive");
            let t0 = Instant::now();
            for i in 0..n {
                to_server.send(Message::new(1, i as i64, 0)).await.expect("server alive");
                black_box(answers.recv().await.expect("server alive"));
            }
            t0.elapsed().as_nanos() as f64 / n as f64
        });
        let ns = client.await.expect("client task");
        server.await.expect("server task");
        ns
    }))
}

pub(super) fn msg_metrics(sz: &Sizes, metrics: &mut Vec<Metric>) -> Result<(), String> {
    let n = sz.switch_tempi;
    progress(&format!("msg.call_process: tempi, {n} calls x {}", sz.reps));
    let t_call = sample(sz.reps, || tempi_call(n, None))?;
    progress(&format!("msg.call_process: std mpsc peer, {} round trips x {}", sz.switch_peer, sz.reps));
    let mut notes = Vec::new();
    let p_mpsc = sample(sz.reps, || {
        let (ns, w) = channel_switch(sz.switch_peer)?;
        notes = w;
        Ok(ns)
    })?;
    progress(&format!("msg.call_process.tokio: tokio peer, {n} round trips x {}", sz.reps));
    let p_tokio = sample(sz.reps, || tokio_call(n))?;
    progress(&format!("msg.send_process: tempi, {n} sends x {}", sz.reps));
    let t_send = sample(sz.reps, || tempi_send(n, None))?;
    progress(&format!("msg.send_process: std mpsc peer, {n} sends x {}", sz.reps));
    let p_send = sample(sz.reps, || Ok(mpsc_send(n)))?;
    progress(&format!("msg.call_handler / msg.send_handler: tempi, {n} invocations x {}", sz.reps));
    let t_call_h = sample(sz.reps, || tempi_handler(n, true, None))?;
    let t_send_h = sample(sz.reps, || tempi_handler(n, false, None))?;
    let pin_note = (!notes.is_empty()).then(|| format!("peer not pinned: {}", notes.join("; ")));
    metrics.push(compare(
        "msg.call_process",
        t_call,
        "std::sync::mpsc round trip, 2 OS threads on one CPU",
        p_mpsc,
        pin_note,
    ));
    metrics.push(compare(
        "msg.call_process.tokio",
        t_call,
        "tokio::sync::mpsc ping-pong, 2 tasks, current-thread runtime",
        p_tokio,
        None,
    ));
    metrics.push(compare("msg.send_process", t_send, "std::sync::mpsc send, nobody waiting", p_send, None));
    metrics.push(compare(
        "msg.call_handler",
        t_call_h,
        "msg.call_process (same run)",
        t_call,
        Some("ratio = process call / handler call; the bar is >= 5 (handler <= 0.2x)".into()),
    ));
    metrics.push(compare(
        "msg.send_handler",
        t_send_h,
        "msg.send_process (same run)",
        t_send,
        Some("ratio = send to a process / send to an idle handler (which runs at once)".into()),
    ));
    Ok(())
}
