//! The scheduling meta-interface in virtual time: inheritance through busy handlers (CALL) and
//! semaphores (PROCURE, transitive), given back by NICE, nested, with the exact urgency of each
//! thread at each step; PRIO SAVE / RESTORE around handler messages with a constraint; NEXT
//! cancelling a queued message; READY with a constraint; SCHEDULE on yield and on quantum
//! expiry; and stacked schedulers that forward to the built-in one and change one decision.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::clock::VirtualClock;
use tempi::message::{Flow, Handler, Message, MsgError, Read};
use tempi::policy::sched::{
    BlockedAt, Events, FixedPriority, InheritId, QueuedMessages, RoundRobin, SchedInfo, Schedule, Scheduler,
    StackedScheduler, Urgency, WaitInheritance,
};
use tempi::sync::SemSpec;
use tempi::{Runtime, ThreadId, ThreadSpec};

type Log = Arc<Mutex<Vec<String>>>;
type Names = Arc<Mutex<HashMap<ThreadId, String>>>;

fn log() -> Log {
    Arc::new(Mutex::new(Vec::new()))
}

fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

fn push(log: &Log, s: String) {
    log.lock().unwrap().push(s);
}

/// Stacked on top of the chain: writes every message-level event to a log, and forwards
/// everything (it changes no decision).
struct Recorder {
    prev: Box<dyn Scheduler>,
    log: Log,
    names: Names,
    extra: Events,
}

impl Recorder {
    fn name(&self, t: &SchedInfo) -> String {
        self.names.lock().unwrap().get(&t.id).cloned().unwrap_or_else(|| "?".into())
    }
    fn at(at: BlockedAt) -> &'static str {
        match at {
            BlockedAt::Handler(_) => "handler",
            BlockedAt::Semaphore(_) => "sem",
            BlockedAt::Prio => "prio",
        }
    }
}

impl StackedScheduler for Recorder {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn events(&self) -> Events {
        self.prev.events() | self.extra
    }
    fn on_schedule(&mut self, t: &SchedInfo, why: Schedule) {
        push(&self.log, format!("SCHEDULE {why:?} {}", self.name(t)));
        self.prev.on_schedule(t, why)
    }
    fn on_message_ready(&mut self, t: &SchedInfo, constraint: i64) {
        push(&self.log, format!("READY {} c={constraint}", self.name(t)));
        self.prev.on_message_ready(t, constraint)
    }
    fn on_call(&mut self, w: &SchedInfo, h: &SchedInfo, at: BlockedAt, c: i64, id: InheritId) -> Option<Urgency> {
        let lent = self.prev.on_call(w, h, at, c, id);
        push(&self.log, format!("CALL#{} {}->{} {:?}", id.raw(), self.name(w), self.name(h), lent.map(|u| u.0)));
        lent
    }
    fn on_procure(&mut self, w: &SchedInfo, h: &SchedInfo, at: BlockedAt, id: InheritId) -> Option<Urgency> {
        let lent = self.prev.on_procure(w, h, at, id);
        push(&self.log, format!("PROCURE#{} {}->{} {:?}", id.raw(), self.name(w), self.name(h), lent.map(|u| u.0)));
        lent
    }
    fn on_nice(&mut self, t: &SchedInfo, at: BlockedAt, id: InheritId) {
        push(&self.log, format!("NICE#{} {} {} now {}", id.raw(), self.name(t), Self::at(at), t.urgency.0));
        self.prev.on_nice(t, at, id)
    }
    fn on_prio_save(&mut self, t: &SchedInfo, c: i64, id: InheritId) -> Option<Urgency> {
        let lent = self.prev.on_prio_save(t, c, id);
        push(&self.log, format!("PRIO SAVE#{} {} c={c}", id.raw(), self.name(t)));
        lent
    }
    fn on_prio_restore(&mut self, t: &SchedInfo, id: InheritId) {
        push(&self.log, format!("PRIO RESTORE#{} {} now {}", id.raw(), self.name(t), t.urgency.0));
        self.prev.on_prio_restore(t, id)
    }
}

/// A runtime on fixed priority with `stack` applied, then the recorder on top.
fn runtime(inherit: bool, extra: Events, log: &Log, names: &Names) -> Runtime<VirtualClock> {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(FixedPriority::new()));
    if inherit {
        rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    }
    let (log, names) = (log.clone(), names.clone());
    rt.stack_scheduler(move |prev| Box::new(Recorder { prev, log: log.clone(), names: names.clone(), extra }));
    rt
}

fn spawn(
    rt: &mut Runtime<VirtualClock>,
    names: &Names,
    name: &str,
    prio: i32,
    f: impl FnMut(&tempi::Ctx<'_>) + Send + 'static,
) -> ThreadId {
    let id = rt.spawn(ThreadSpec::new(name).priority(prio), f).unwrap();
    names.lock().unwrap().insert(id, name.to_string());
    id
}

/// A handler that works `m.value` ms in 1 ms steps, logging the time and its urgency at each.
fn working_handler(log: &Log) -> Handler {
    let l = log.clone();
    Handler::new("h", 0, 4, move |hcx, m| {
        for _ in 0..m.value {
            push(&l, format!("h[{}]@{} u{}", m.id, hcx.now().as_nanos() / 1_000_000, hcx.urgency().0));
            hcx.work(ms(1));
        }
        hcx.reply(m);
    })
}

/// `low` (1) runs a 4 ms message in the handler; `mid` (5) wakes at 1 ms and would compute
/// 10 ms; `high` (10) wakes at 2 ms and calls the busy handler. With inheritance (CALL) `low`
/// runs the handler at 10 from 2 ms, drains `high`'s call at 10, and NICE gives it back
/// 1 at 6 ms: `high` ends at 6, before `mid`. Without, `mid` runs first and `high` ends at
/// 15: inversion.
#[test]
fn meta_call_lends_the_callers_urgency_to_the_handlers_holder_until_nice() {
    for inherit in [true, false] {
        let (events, names) = (log(), Names::default());
        let mut rt = runtime(inherit, Events::NONE, &events, &names);
        let h = working_handler(&events);
        let (h1, h2) = (h.clone(), h.clone());
        let l = events.clone();
        spawn(&mut rt, &names, "low", 1, move |cx| {
            h1.send(cx, Message::new(1, 4, 0)).unwrap();
            push(&l, format!("low@{} u{}", cx.now().as_nanos() / 1_000_000, cx.urgency().0));
        });
        spawn(&mut rt, &names, "mid", 5, |cx| {
            cx.sleep(ms(1));
            cx.work(ms(10));
        });
        let l = events.clone();
        spawn(&mut rt, &names, "high", 10, move |cx| {
            cx.sleep(ms(2));
            assert_eq!(h2.call(cx, Message::new(2, 1, 0)).unwrap().value, 1);
            push(&l, format!("high@{} u{}", cx.now().as_nanos() / 1_000_000, cx.urgency().0));
        });
        let out = rt.run().unwrap();
        if inherit {
            assert_eq!(
                take(&events),
                [
                    "h[1]@0 u1",
                    "h[1]@1 u1",
                    "CALL#1 high->low Some(10)",
                    "h[1]@3 u10",
                    "h[1]@4 u10",
                    "h[2]@5 u10",
                    "NICE#1 low handler now 1",
                    "high@6 u10",
                    "low@15 u1",
                ]
            );
            assert_eq!(
                segments(&out),
                [
                    "high:0-0:sleep",
                    "mid:0-0:sleep",
                    "low:0-1:preempt",
                    "mid:1-2:preempt",
                    "high:2-2:block",
                    "low:2-6:preempt",
                    "high:6-6:exit",
                    "mid:6-15:exit",
                    "low:15-15:exit"
                ]
            );
        } else {
            // The default policy asks for no CALL: nothing is reported, nothing lent.
            assert_eq!(
                take(&events),
                ["h[1]@0 u1", "h[1]@1 u1", "h[1]@12 u1", "h[1]@13 u1", "h[2]@14 u1", "high@15 u10", "low@15 u1"]
            );
        }
    }
}

/// Nested and transitive inheritance, one step at a time. `g` (1) holds semaphore `s2` and
/// runs a 10 ms message in the handler; `h` (2) takes `s1` and blocks at `s2` (PROCURE: `g`
/// at 2); `a` (5) blocks at `s1`, held by `h`, which is blocked at `s2` (PROCURE `a`->`h`
/// and, transitively, `h`->`g`: `g` at 5); `b` (10) calls the busy handler (CALL: `g` at
/// 10). Leaving the handler gives back the CALL (NICE: 5); vacating `s2` gives back both
/// PROCUREs, latest first (NICE: 2, then 1); `h` vacating `s1` gives back `a`'s (NICE: 2).
#[test]
fn meta_procure_is_transitive_and_nested_lends_come_back_latest_first() {
    let (events, names) = (log(), Names::default());
    let mut rt = runtime(true, Events::NONE, &events, &names);
    let s1 = Arc::new(rt.create_semaphore(SemSpec::new("s1", 1)).unwrap());
    let s2 = Arc::new(rt.create_semaphore(SemSpec::new("s2", 1)).unwrap());
    let h = working_handler(&events);
    let now = |cx: &tempi::Ctx<'_>| cx.now().as_nanos() / 1_000_000;
    let (l, hh, s) = (events.clone(), h.clone(), s2.clone());
    spawn(&mut rt, &names, "g", 1, move |cx| {
        s.procure(cx).unwrap();
        hh.send(cx, Message::new(1, 10, 0)).unwrap();
        for _ in 0..2 {
            push(&l, format!("g@{} u{}", now(cx), cx.urgency().0));
            cx.work(ms(1));
        }
        s.vacate(cx).unwrap();
        push(&l, format!("g done@{} u{}", now(cx), cx.urgency().0));
    });
    let (l, a1, a2) = (events.clone(), s1.clone(), s2.clone());
    spawn(&mut rt, &names, "h", 2, move |cx| {
        cx.sleep(ms(1));
        a1.procure(cx).unwrap();
        a2.procure(cx).unwrap();
        push(&l, format!("h got s2@{} u{}", now(cx), cx.urgency().0));
        a2.vacate(cx).unwrap();
        a1.vacate(cx).unwrap();
        push(&l, format!("h done@{} u{}", now(cx), cx.urgency().0));
    });
    let (l, a1) = (events.clone(), s1.clone());
    spawn(&mut rt, &names, "a", 5, move |cx| {
        cx.sleep(ms(2));
        a1.procure(cx).unwrap();
        push(&l, format!("a got s1@{} u{}", now(cx), cx.urgency().0));
        a1.vacate(cx).unwrap();
    });
    let (l, hh) = (events.clone(), h.clone());
    spawn(&mut rt, &names, "b", 10, move |cx| {
        cx.sleep(ms(3));
        hh.call(cx, Message::new(2, 1, 0)).unwrap();
        push(&l, format!("b@{} u{}", now(cx), cx.urgency().0));
    });
    rt.run().unwrap();
    assert_eq!(
        take(&events),
        [
            "h[1]@0 u1",
            "h[1]@1 u1",
            "PROCURE#1 h->g Some(2)",
            "h[1]@2 u2",
            "PROCURE#2 a->h Some(5)",
            "PROCURE#3 h->g Some(5)",
            "h[1]@3 u5",
            "CALL#4 b->g Some(10)",
            "h[1]@4 u10",
            "h[1]@5 u10",
            "h[1]@6 u10",
            "h[1]@7 u10",
            "h[1]@8 u10",
            "h[1]@9 u10",
            "h[2]@10 u10",
            "NICE#4 g handler now 5",
            "b@11 u10",
            "g@11 u5",
            "g@12 u5",
            "NICE#3 g sem now 2",
            "NICE#1 g sem now 1",
            "h got s2@13 u5",
            "NICE#2 h sem now 2",
            "a got s1@13 u5",
            "h done@13 u2",
            "g done@13 u1",
        ]
    );
}

/// Fixed priority, except that `quiet` never preempts anyone: a user scheduler stacked on the
/// built-in one that overrides one hook and forwards the rest.
struct NoPreemptBy {
    prev: Box<dyn Scheduler>,
    quiet: ThreadId,
}

impl StackedScheduler for NoPreemptBy {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn should_preempt(&self, running: &SchedInfo, woken: &SchedInfo) -> bool {
        woken.id != self.quiet && self.prev.should_preempt(running, woken)
    }
}

/// `low` (1) computes 5 ms; `quiet` (10) wakes at 1 ms, `other` (8) at 2 ms, each for 1 ms.
/// Under fixed priority `quiet` preempts at 1. Stacked, that one decision changes: `quiet`
/// waits until `other` preempts `low` at 2, and then runs first, by priority, as the
/// built-in policy picks.
#[test]
fn meta_stacked_scheduler_forwards_and_changes_one_decision() {
    let mut runs = Vec::new();
    for stacked in [false, true] {
        let mut rt = Runtime::simulated(1);
        rt.spawn(ThreadSpec::new("low").priority(1), |cx| cx.work(ms(5))).unwrap();
        let quiet = rt
            .spawn(ThreadSpec::new("quiet").priority(10), |cx| {
                cx.sleep(ms(1));
                cx.work(ms(1));
            })
            .unwrap();
        rt.spawn(ThreadSpec::new("other").priority(8), |cx| {
            cx.sleep(ms(2));
            cx.work(ms(1));
        })
        .unwrap();
        if stacked {
            rt.stack_scheduler(move |prev| Box::new(NoPreemptBy { prev, quiet }));
        }
        runs.push(segments(&rt.run().unwrap()));
    }
    assert_eq!(
        runs[0],
        ["quiet:0-0:sleep", "other:0-0:sleep", "low:0-1:preempt", "quiet:1-2:exit", "other:2-3:exit", "low:3-7:exit"]
    );
    assert_eq!(
        runs[1],
        ["quiet:0-0:sleep", "other:0-0:sleep", "low:0-2:preempt", "quiet:2-3:exit", "other:3-4:exit", "low:4-7:exit"]
    );
}

/// Lends a handler's invoker the constraint of the message it serves, as an urgency.
struct ByConstraint {
    prev: Box<dyn Scheduler>,
}

impl StackedScheduler for ByConstraint {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn events(&self) -> Events {
        self.prev.events() | Events::PRIO
    }
    fn on_prio_save(&mut self, t: &SchedInfo, constraint: i64, _id: InheritId) -> Option<Urgency> {
        (Urgency(constraint) > t.urgency).then_some(Urgency(constraint))
    }
}

/// PRIO SAVE before and PRIO RESTORE after each handler message with a constraint, nested
/// when a handler sends to another idle handler, each pair with its own id; a message
/// without a constraint is not reported.
#[test]
fn meta_prio_save_and_restore_pair_around_nested_handlers() {
    let (events, names) = (log(), Names::default());
    let mut rt = Runtime::simulated(1);
    rt.stack_scheduler(|prev| Box::new(ByConstraint { prev }));
    let (l2, n2) = (events.clone(), names.clone());
    rt.stack_scheduler(move |prev| {
        Box::new(Recorder { prev, log: l2.clone(), names: n2.clone(), extra: Events::NONE })
    });
    let l = events.clone();
    let inner =
        Handler::new("inner", 0, 2, move |hcx, m| push(&l, format!("inner c={} u{}", m.constraint, hcx.urgency().0)));
    let l = events.clone();
    let outer = Handler::new("outer", 0, 2, move |hcx, m| {
        push(&l, format!("outer c={} u{}", m.constraint, hcx.urgency().0));
        hcx.send_handler(&inner, Message::new(0, 0, 9)).unwrap();
        push(&l, format!("outer after u{}", hcx.urgency().0));
    });
    let l = events.clone();
    spawn(&mut rt, &names, "t", 1, move |cx| {
        outer.send(cx, Message::new(0, 0, 7)).unwrap();
        push(&l, format!("t u{}", cx.urgency().0));
        outer.send(cx, Message::new(0, 0, 0)).unwrap();
    });
    rt.run().unwrap();
    assert_eq!(
        take(&events),
        [
            "PRIO SAVE#1 t c=7",
            "outer c=7 u7",
            "PRIO SAVE#2 t c=9",
            "inner c=9 u9",
            "PRIO RESTORE#2 t now 7",
            "outer after u7",
            "PRIO RESTORE#1 t now 1",
            "t u1",
            "outer c=0 u1",
            "PRIO SAVE#3 t c=9",
            "inner c=9 u9",
            "PRIO RESTORE#3 t now 1",
            "outer after u1",
        ]
    );
}

/// Cancels, at every NEXT, the queued messages whose id is 99 (the application's code for
/// "too late").
struct CancelLate {
    prev: Box<dyn Scheduler>,
    log: Log,
}

impl StackedScheduler for CancelLate {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
    }
    fn events(&self) -> Events {
        self.prev.events() | Events::NEXT
    }
    fn on_next(&mut self, _t: &SchedInfo, queues: &mut dyn QueuedMessages) {
        let mut buf = Vec::new();
        let mut k = 0;
        while let Some(t) = queues.thread(k) {
            k += 1;
            for i in 0..queues.len(t) {
                if queues.get(t, i).is_some_and(|m| m.id == 99) && queues.cancel(t, i) {
                    buf.push(i);
                }
            }
        }
        push(&self.log, format!("NEXT cancelled {}", buf.len()));
    }
}

/// NEXT: when `c` blocks (it sleeps), the policy cancels the queued message 99 of `p`; `p`
/// reads it as `Cancelled`, with the message, and reads the others as usual. A call
/// cancelled and not replied to is answered `Unanswered`.
#[test]
fn meta_next_cancels_a_queued_message_by_marking_it() {
    let events = log();
    let mut rt = Runtime::simulated(1);
    let l = events.clone();
    rt.stack_scheduler(move |prev| Box::new(CancelLate { prev, log: l.clone() }));
    let l = events.clone();
    let p = rt
        .spawn(ThreadSpec::new("p").priority(1), move |cx| {
            for _ in 0..3 {
                let r = cx.read(Read::Poll);
                push(
                    &l,
                    format!(
                        "p read {:?}",
                        r.map(|m| m.id).map_err(|e| matches!(e, MsgError::Cancelled(m) if m.id == 99))
                    ),
                );
            }
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("c").priority(5), move |cx| {
        for id in [1, 99, 2] {
            cx.send(p, Message::new(id, 0, 0)).unwrap();
        }
        cx.sleep(ms(1));
    })
    .unwrap();
    let srv = rt.spawn_process(ThreadSpec::new("srv").priority(1), |_cx, _m| Flow::Continue).unwrap();
    rt.spawn(ThreadSpec::new("caller").priority(3), move |cx| {
        assert_eq!(cx.call(srv, Message::new(99, 0, 0)), Err(MsgError::Unanswered));
    })
    .unwrap();
    rt.run().unwrap();
    let got = take(&events);
    // `c` sleeps: p's 99 is marked. `caller` blocks: p's 99 (marked already) and srv's.
    // `p` reads; `srv` reads its 99 as cancelled, skips it (its caller is answered
    // `Unanswered`) and waits for the next with every queue empty.
    assert_eq!(
        got,
        [
            "NEXT cancelled 1",
            "NEXT cancelled 2",
            "p read Ok(1)",
            "p read Err(true)",
            "p read Ok(2)",
            "NEXT cancelled 0"
        ]
    );
}

/// READY with the message's constraint (none for `NO_CONSTRAINT`), SCHEDULE on a yield and
/// on each quantum expiry under round robin.
#[test]
fn meta_ready_with_constraint_and_schedule_on_yield_and_quantum() {
    let (events, names) = (log(), Names::default());
    let mut rt = runtime(false, Events::READY, &events, &names);
    let r = spawn(&mut rt, &names, "r", 1, |cx| {
        cx.read(Read::Wait).unwrap();
        cx.read(Read::Wait).unwrap();
    });
    spawn(&mut rt, &names, "s", 2, move |cx| {
        cx.send(r, Message::new(0, 0, 5)).unwrap();
        cx.send(r, Message::new(0, 0, 0)).unwrap();
        cx.yield_now();
    });
    rt.run().unwrap();
    assert_eq!(take(&events), ["READY r c=5", "SCHEDULE Yield s"]);

    let (events, names) = (log(), Names::default());
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(RoundRobin::new(ms(1))));
    let (l, n) = (events.clone(), names.clone());
    rt.stack_scheduler(move |prev| Box::new(Recorder { prev, log: l.clone(), names: n.clone(), extra: Events::NONE }));
    spawn(&mut rt, &names, "a", 1, |cx| cx.work(ms(2)));
    spawn(&mut rt, &names, "b", 1, |cx| cx.work(ms(2)));
    let out = rt.run().unwrap();
    assert_eq!(take(&events), ["SCHEDULE Quantum a", "SCHEDULE Quantum b"]);
    assert_eq!(segments(&out), ["a:0-1:slice", "b:1-2:slice", "a:2-3:exit", "b:3-4:exit"]);
}

/// `tame_prio_inv` on a handler: invoked from another handler, it runs with preemption off
/// until it has drained its queue. `high` wakes at 1 ms, inside the inner handler's 2 ms: it
/// waits for the inner handler to finish (2 ms) when tamed, preempts at once otherwise.
#[test]
fn meta_tamed_handler_runs_non_preemptively_inside_another_handler() {
    for tame in [true, false] {
        let inner = Handler::new("inner", 0, 1, |hcx, _m| hcx.work(ms(2))).tame_prio_inv(tame);
        let outer = Handler::new("outer", 0, 1, move |hcx, m| {
            hcx.send_handler(&inner, m).unwrap();
            hcx.work(ms(1));
        });
        let mut rt = Runtime::simulated(1);
        rt.spawn(ThreadSpec::new("low").priority(1), move |cx| {
            outer.send(cx, Message::new(0, 0, 0)).unwrap();
            assert!(cx.preemption(true), "the invoker's setting is restored");
        })
        .unwrap();
        rt.spawn(ThreadSpec::new("high").priority(9), |cx| {
            cx.sleep(ms(1));
            cx.work(ms(1));
        })
        .unwrap();
        let segs = segments(&rt.run().unwrap());
        if tame {
            assert_eq!(segs, ["high:0-0:sleep", "low:0-2:preempt", "high:2-3:exit", "low:3-4:exit"]);
        } else {
            assert_eq!(segs, ["high:0-0:sleep", "low:0-1:preempt", "high:1-2:exit", "low:2-4:exit"]);
        }
    }
}
