//! Random traffic and random kills for the property tests: a killer thread, and clients that
//! send to and call a receiver (a handler or a process) in random steps.

use std::sync::Mutex;
use std::time::Duration;

use proptest::prelude::*;
use tempi::clock::Clock;
use tempi::message::{Message, MsgError, MsgTimer};
use tempi::{Ctx, Runtime, ThreadId, ThreadSpec, Time};

/// The time unit of the random steps.
pub const UNIT: Duration = Duration::from_micros(100);

/// Spawn a thread of `priority` that kills each of `victims` at its instant (in `unit`s);
/// one that has ended already is no error.
pub fn spawn_killer<C: Clock>(rt: &mut Runtime<C>, priority: i32, unit: Duration, victims: Vec<(u64, ThreadId)>) {
    rt.spawn(ThreadSpec::new("killer").priority(priority), move |cx| {
        for &(at, victim) in &victims {
            cx.sleep_until(Time::from_nanos(at * unit.as_nanos() as u64));
            let _ = cx.kill(victim);
        }
    })
    .unwrap();
}

/// A client's step.
#[derive(Clone, Copy, Debug)]
pub enum Op {
    Send,
    Call,
    /// Compute for this many units.
    Work(u64),
    /// Sleep for this many units.
    Sleep(u64),
    /// Send a timed message this many units from now.
    SendAfter(u64),
    /// Cancel the last timed message still armed, if any.
    Cancel,
}

/// A random step; timed messages only if `timed`.
pub fn op(timed: bool) -> BoxedStrategy<Op> {
    let plain =
        prop_oneof![Just(Op::Send), Just(Op::Call), (1u64..5).prop_map(Op::Work), (1u64..8).prop_map(Op::Sleep)];
    if timed {
        prop_oneof![4 => plain, 1 => (0u64..8).prop_map(Op::SendAfter), 1 => Just(Op::Cancel)].boxed()
    } else {
        plain.boxed()
    }
}

/// A client: its CPU, its priority, and its steps.
pub type Client = (usize, i32, Vec<Op>);

/// A random client of `cpus` CPUs.
pub fn client(cpus: usize, timed: bool) -> impl Strategy<Value = Client> {
    (0..cpus, 1i32..6, proptest::collection::vec(op(timed), 1..10))
}

/// What the clients saw: each answer by (client, sequence number), how many sends and calls
/// they made, how many timed messages they asked for, and the timed messages they cancelled.
#[derive(Debug, Default, PartialEq)]
pub struct Ledger {
    pub answers: Vec<((usize, u64), Result<i64, MsgError>)>,
    pub attempts: u64,
    pub timed: u64,
    pub cancelled: Vec<(usize, u64)>,
}

/// Client `c`'s steps in turn. Message `(c, seq)` (its `id` and `value`) goes out through
/// `invoke(cx, msg, call)` (which answers a send with -1); a timed one goes to `timed_to`.
pub fn run_client(
    cx: &Ctx<'_>,
    c: usize,
    ops: &[Op],
    ledger: &Mutex<Ledger>,
    invoke: &dyn Fn(&Ctx<'_>, Message, bool) -> Result<i64, MsgError>,
    timed_to: Option<ThreadId>,
) {
    let mut seq = 0u64;
    let mut armed: Vec<MsgTimer> = Vec::new();
    for op in ops {
        match *op {
            Op::Send | Op::Call => {
                seq += 1;
                ledger.lock().unwrap().attempts += 1;
                let r = invoke(cx, Message::new(c as i64, seq as i64, 0), matches!(op, Op::Call));
                ledger.lock().unwrap().answers.push(((c, seq), r));
            }
            Op::Work(u) => cx.work(UNIT * u as u32),
            Op::Sleep(u) => cx.sleep(UNIT * u as u32),
            Op::SendAfter(u) => {
                let Some(to) = timed_to else { continue };
                seq += 1;
                ledger.lock().unwrap().timed += 1;
                if let Ok(t) = cx.send_after(UNIT * u as u32, to, Message::new(c as i64, seq as i64, 0)) {
                    armed.push(t);
                }
            }
            Op::Cancel => {
                // Delivered already, or cancelled: both are answers.
                if let Some(Ok(m)) = armed.pop().map(|t| cx.cancel_timer(t)) {
                    ledger.lock().unwrap().cancelled.push((c, m.value as u64));
                }
            }
        }
    }
}

/// Spawn the clients of `handlers`: a message goes to handler `value % handlers.len()`.
pub fn spawn_handler_clients<C: Clock>(
    rt: &mut Runtime<C>,
    clients: &[Client],
    ledger: &std::sync::Arc<Mutex<Ledger>>,
    handlers: &[tempi::message::Handler],
) -> Vec<ThreadId> {
    let mut ids = Vec::new();
    for (c, (cpu, prio, ops)) in clients.iter().cloned().enumerate() {
        let (handlers, ledger) = (handlers.to_vec(), ledger.clone());
        let id = rt
            .spawn(ThreadSpec::new(format!("c{c}")).cpu(cpu).priority(prio), move |cx| {
                let invoke = |cx: &Ctx<'_>, m: Message, call: bool| {
                    let h = &handlers[m.value as usize % handlers.len()];
                    if call {
                        h.call(cx, m).map(|m| m.value)
                    } else {
                        h.send(cx, m).map(|()| -1)
                    }
                };
                run_client(cx, c, &ops, &ledger, &invoke, None);
            })
            .unwrap();
        ids.push(id);
    }
    ids
}
