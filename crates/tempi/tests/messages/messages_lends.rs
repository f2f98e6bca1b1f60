//! How long a message-level lend lasts, in virtual time: a waiter at a semaphore or a busy
//! handler lends its urgency to the holder (PROCURE, CALL) until the holder leaves (NICE) or
//! until the waiter stops waiting unserved (its timeout, its kill), whichever is first; the
//! holder's urgency at each step is asserted exactly.

use crate::common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use common::{ms, segments};
use tempi::clock::VirtualClock;
use tempi::message::{Handler, Message};
use tempi::policy::sched::{
    BlockedAt, FixedPriority, InheritId, SchedInfo, Scheduler, StackedScheduler, Urgency, WaitInheritance,
};
use tempi::sync::{LockError, SemSpec};
use tempi::{Config, Runtime, ThreadId, ThreadSpec};

type Log = Arc<Mutex<Vec<String>>>;
type Names = Arc<Mutex<HashMap<ThreadId, String>>>;

fn push(log: &Log, s: String) {
    log.lock().unwrap().push(s);
}

/// Forwards everything; writes the inheritance events to the log.
struct Recorder {
    prev: Box<dyn Scheduler>,
    log: Log,
    names: Names,
}

impl Recorder {
    fn name(&self, t: &SchedInfo) -> String {
        self.names.lock().unwrap().get(&t.id).cloned().unwrap_or_else(|| "?".into())
    }
}

impl StackedScheduler for Recorder {
    fn prev(&self) -> &dyn Scheduler {
        &*self.prev
    }
    fn prev_mut(&mut self) -> &mut dyn Scheduler {
        &mut *self.prev
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
        let place = if matches!(at, BlockedAt::Handler(_)) { "handler" } else { "sem" };
        push(&self.log, format!("NICE#{} {} {place} now {}", id.raw(), self.name(t), t.urgency.0));
        self.prev.on_nice(t, at, id)
    }
}

fn runtime(log: &Log, names: &Names) -> Runtime<VirtualClock> {
    let mut rt: Runtime<VirtualClock> = Runtime::new(Config::new(1).verify(true)).unwrap();
    rt.set_scheduler(|| Box::new(FixedPriority::new()));
    rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    let (log, names) = (log.clone(), names.clone());
    rt.stack_scheduler(move |prev| Box::new(Recorder { prev, log: log.clone(), names: names.clone() }));
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

fn now(cx: &tempi::Ctx<'_>) -> u64 {
    cx.now().as_nanos() / 1_000_000
}

/// `g` (1) holds `s2` for 6 ms; `h` (2) takes `s1` and blocks at `s2` at 1 ms (PROCURE: `g`
/// at 2); `a` (5) blocks at `s1` for at most 2 ms at 2 ms (PROCURE `a`->`h` and,
/// transitively, `h`->`g`: `g` at 5). At 4 ms `a` times out: both lends its wait caused end
/// then (NICE: `g` back to 2, `h` back to 2), not when `g` vacates at 6 ms; `h`'s own lend
/// stays until then.
#[test]
fn messages_lends_a_waiters_timeout_ends_the_lends_it_caused_transitively() {
    let (log, names) = (Log::default(), Names::default());
    let mut rt = runtime(&log, &names);
    let s1 = Arc::new(rt.create_semaphore(SemSpec::new("s1", 1)).unwrap());
    let s2 = Arc::new(rt.create_semaphore(SemSpec::new("s2", 1)).unwrap());
    let (l, s) = (log.clone(), s2.clone());
    spawn(&mut rt, &names, "g", 1, move |cx| {
        s.procure(cx).unwrap();
        for _ in 0..6 {
            push(&l, format!("g@{} u{}", now(cx), cx.urgency().0));
            cx.work(ms(1));
        }
        s.vacate(cx).unwrap();
        push(&l, format!("g done@{} u{}", now(cx), cx.urgency().0));
    });
    let (l, a1, a2) = (log.clone(), s1.clone(), s2.clone());
    spawn(&mut rt, &names, "h", 2, move |cx| {
        cx.sleep(ms(1));
        a1.procure(cx).unwrap();
        a2.procure(cx).unwrap();
        push(&l, format!("h got s2@{} u{}", now(cx), cx.urgency().0));
        a2.vacate(cx).unwrap();
        a1.vacate(cx).unwrap();
    });
    let (l, a1) = (log.clone(), s1.clone());
    spawn(&mut rt, &names, "a", 5, move |cx| {
        cx.sleep(ms(2));
        assert_eq!(a1.procure_timeout(cx, ms(2)), Err(LockError::Timeout));
        push(&l, format!("a timeout@{} u{}", now(cx), cx.urgency().0));
    });
    let out = rt.run().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "g@0 u1",
            "g@1 u1",
            "PROCURE#1 h->g Some(2)",
            "g@2 u2",
            "PROCURE#2 a->h Some(5)",
            "PROCURE#3 h->g Some(5)",
            "g@3 u5",
            "g@4 u5",
            "NICE#3 g sem now 2",
            "NICE#2 h sem now 2",
            "a timeout@4 u5",
            "g@5 u2",
            "NICE#1 g sem now 1",
            "h got s2@6 u2",
            "g done@6 u1",
        ]
    );
    assert_eq!(
        segments(&out),
        [
            "a:0-0:sleep",
            "h:0-0:sleep",
            "g:0-1:preempt",
            "h:1-1:block",
            "g:1-2:preempt",
            "a:2-2:block",
            "g:2-4:preempt",
            "a:4-4:exit",
            "g:4-6:preempt",
            "h:6-6:exit",
            "g:6-6:exit",
        ]
    );
}

/// `low` (1) runs a 5 ms message in a handler; `high` (10) calls the busy handler at 1 ms
/// (CALL: `low` at 10, ahead of `mid`, 5); `killer` (20) kills `high` at 3 ms: the lend ends
/// then (NICE: `low` back to 1) and `mid` runs before `low` finishes the handler. The
/// killed caller's queued call is still served (its answer goes nowhere).
#[test]
fn messages_lends_a_killed_callers_lend_ends_with_its_wait() {
    let (log, names) = (Log::default(), Names::default());
    let mut rt = runtime(&log, &names);
    let l = log.clone();
    let h = Handler::new("h", 0, 4, move |hcx, m| {
        for _ in 0..m.value {
            push(&l, format!("h[{}]@{} u{}", m.id, hcx.now().as_nanos() / 1_000_000, hcx.urgency().0));
            hcx.work(ms(1));
        }
        hcx.reply(m);
    });
    let (h1, h2) = (h.clone(), h.clone());
    let l = log.clone();
    spawn(&mut rt, &names, "low", 1, move |cx| {
        h1.send(cx, Message::new(1, 5, 0)).unwrap();
        push(&l, format!("low@{} u{}", now(cx), cx.urgency().0));
    });
    spawn(&mut rt, &names, "mid", 5, |cx| {
        cx.sleep(ms(1));
        cx.work(ms(10));
    });
    let high = spawn(&mut rt, &names, "high", 10, move |cx| {
        cx.sleep(ms(1));
        let _ = h2.call(cx, Message::new(2, 1, 0));
        unreachable!("killed while waiting");
    });
    spawn(&mut rt, &names, "killer", 20, move |cx| {
        cx.sleep(ms(3));
        cx.kill(high).unwrap();
    });
    let out = rt.run().unwrap();
    assert_eq!(
        *log.lock().unwrap(),
        [
            "h[1]@0 u1",
            "h[1]@1 u1",
            "CALL#1 high->low Some(10)",
            "h[1]@2 u10",
            "h[1]@3 u10",
            "NICE#1 low handler now 1",
            "h[1]@14 u1",
            "h[2]@15 u1",
            "low@16 u1",
        ]
    );
    assert_eq!(out.thread_named("high").unwrap().outcome, Some(tempi::ThreadOutcome::Killed));
}
