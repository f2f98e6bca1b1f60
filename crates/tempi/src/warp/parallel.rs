//! The engine on a tempi runtime: one worker thread per CPU, each running its LPs' events
//! truly in parallel with the others, messages and anti-messages between CPUs through bounded
//! preallocated lock-free queues, and GVT computed by the workers together in rounds that
//! count the messages in flight. Owns the worker threads' loop, the queues and the GVT rounds;
//! the workers' event handling is the engine's own ([`Engine::step`]'s code), unchanged.
//!
//! Built on the runtime's public calls only ([`Runtime::spawn`], [`Ctx::work`],
//! [`Ctx::sleep`], [`Ctx::checkpoint`], [`Ctx::now`]): warp is a front end, not a kernel mode.
//!
//! # A GVT round
//!
//! Any worker may ask for the next round (every [`WarpConfig::gvt_interval`] events it
//! processes, or when it has had nothing to do for a while); every worker joins it at its next
//! check, between two events. In a round:
//!
//! 1. every worker reaches a barrier: from then on nobody sends until the round ends;
//! 2. each worker computes its least key, over its unprocessed events, unfinished rollbacks,
//!    outbox, the messages it has taken in but not yet handled, and the messages in its own
//!    inbound queue (it empties the queue and refills it in order, the only one touching it
//!    while the others wait): nothing is in flight anywhere else, so the minimum over the
//!    workers is the exact GVT;
//! 3. a second barrier; each worker reads every minimum, so all agree on GVT, commits its
//!    events below it and goes on. GVT `MAX` ends the run; a round in which no worker made
//!    progress since the last one and GVT did not move is [`WarpError::Stalled`].

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crossbeam_queue::ArrayQueue;

use super::deadline::Cells;
use super::engine::{internal, Engine, Log, Msg, Place, Shared, StepOutcome, Worker};
use super::{Committed, EventKey, LpId, Model, WarpConfig, WarpError};
use crate::clock::{Clock, ClockMode};
use crate::{Ctx, Runtime, ThreadSpec};

/// How the worker threads are made and paced.
///
/// ```
/// let spec = tempi::warp::ParallelSpec::default();
/// assert_eq!(spec.priority, i32::MIN);
/// assert!(spec.event_cost.is_zero());
/// ```
#[derive(Clone, Debug)]
pub struct ParallelSpec {
    /// Worker `w` is a thread named `{name}{w}` on CPU `w`.
    pub name: String,
    /// The workers' fixed priority: the lowest by default, so every reactive thread of a
    /// fixed-priority CPU runs before speculation. (Under EDF a thread without a deadline,
    /// as the workers are, is already the least urgent.)
    pub priority: i32,
    /// CPU time each processed event is charged with [`Ctx::work`]: zero in real time (the
    /// handler's own time is its cost), the modelled cost of an event in virtual time.
    pub event_cost: Duration,
    /// How long a worker with nothing to do, or waiting at a GVT barrier, waits before it looks
    /// again: with [`Ctx::sleep`] when non-zero; when zero it spins (with
    /// [`Ctx::checkpoint`]), which only real time allows.
    pub poll: Duration,
    /// Looks a worker with nothing to do makes before it asks for a GVT round.
    pub idle_polls: u32,
    /// The workers' stack size (`None`: the runtime's default).
    pub stack_size: Option<usize>,
    /// Commit deadlines ([`Model::commit_deadline`]) with their reactive watchers, or `None`.
    pub deadlines: Option<DeadlineSpec>,
}

/// The reactive side of commit deadlines: on each worker's CPU a watcher thread at
/// `priority` wakes every `period` (at `period`, `2 period`, ... after the run starts), drops
/// each event of that worker still uncommitted at its deadline and calls `fallback` for it,
/// on the watcher's own thread. A dropped event that commits later is
/// [`Committed::late`]. The watcher is an ordinary reactive thread: its CPU time (its scan
/// and the fallbacks it runs) is reserved like any other thread's, whatever the speculation
/// does, until each deadline has passed.
///
/// ```
/// use std::time::Duration;
/// use tempi::warp::DeadlineSpec;
/// let d = DeadlineSpec::new(Duration::from_micros(50), |cx, f| {
///     cx.work(Duration::from_micros(2)); // the guaranteed version of the event's work
///     let _ = (f.lp, f.key);
/// });
/// assert_eq!(d.priority, i32::MAX);
/// ```
#[derive(Clone)]
pub struct DeadlineSpec {
    /// How often the watcher looks: a fallback runs at the first multiple of `period` at or
    /// after its deadline.
    pub period: Duration,
    /// The watcher's fixed priority (the highest by default).
    pub priority: i32,
    /// What runs for an event dropped at its deadline.
    pub fallback: FallbackFn,
}

impl DeadlineSpec {
    /// A watcher every `period` at the highest priority, running `fallback`.
    ///
    /// ```
    /// let d = tempi::warp::DeadlineSpec::new(std::time::Duration::from_millis(1), |_, _| {});
    /// assert_eq!(d.period, std::time::Duration::from_millis(1));
    /// ```
    pub fn new(period: Duration, fallback: impl Fn(&Ctx<'_>, &Fallback) + Send + Sync + 'static) -> Self {
        DeadlineSpec { period, priority: i32::MAX, fallback: Arc::new(fallback) }
    }
}

impl std::fmt::Debug for DeadlineSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeadlineSpec").field("period", &self.period).field("priority", &self.priority).finish()
    }
}

/// The fallback of [`DeadlineSpec`]: called on the watcher's thread for each dropped event.
pub type FallbackFn = Arc<dyn Fn(&Ctx<'_>, &Fallback) + Send + Sync>;

/// An event dropped at its commit deadline, as the fallback sees it.
///
/// ```
/// use tempi::warp::{EventKey, Fallback, LpId};
/// let f = Fallback { worker: 0, lp: LpId(1), key: EventKey { time: 3, depth: 0, sender: LpId(0), seq: 0 }, deadline: std::time::Duration::from_micros(30) };
/// assert_eq!(f.key.time, 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fallback {
    /// The worker (and CPU) whose watcher dropped it.
    pub worker: usize,
    /// The LP the event was for.
    pub lp: LpId,
    /// The event.
    pub key: EventKey,
    /// Its commit deadline (time since the run started).
    pub deadline: Duration,
}

impl Default for ParallelSpec {
    fn default() -> Self {
        ParallelSpec {
            name: "warp".into(),
            priority: i32::MIN,
            event_cost: Duration::ZERO,
            poll: Duration::ZERO,
            idle_polls: 64,
            stack_size: None,
            deadlines: None,
        }
    }
}

/// A reusable barrier for a fixed number of threads that may be abandoned: a waiter returns
/// `false` once the run has failed.
struct Barrier {
    count: AtomicUsize,
    generation: AtomicU64,
    parties: usize,
}

/// What every worker thread shares: the model and placement, the inbound queues, the round
/// machinery, and the place where each worker leaves its part when it ends.
struct Common<M: Model, F> {
    model: M,
    config: WarpConfig,
    place: Vec<Place>,
    spec: ParallelSpec,
    /// Worker `w`'s inbound messages, from every other worker.
    queues: Vec<ArrayQueue<Msg<M::Event>>>,
    /// The highest round asked for.
    want: AtomicU64,
    barrier: Barrier,
    /// Each worker's part of the current round: least key, least cancel key, progress.
    mins: Vec<Mutex<(EventKey, EventKey, bool)>>,
    failed: AtomicBool,
    error: Mutex<Option<WarpError>>,
    /// GVT as agreed in the last round.
    gvt: Mutex<EventKey>,
    rounds: AtomicU64,
    /// Worker threads not ended yet (the watchers stop when none is left).
    live: AtomicUsize,
    /// Fallbacks run, per worker.
    fallbacks: Vec<AtomicU64>,
    /// What each worker thread hands back when it ends.
    parts: Vec<Mutex<Option<Part<M, F>>>>,
}

/// One worker with everything its thread owns.
struct Part<M: Model, F> {
    worker: Worker<M>,
    log: Log,
    inbox: VecDeque<Msg<M::Event>>,
    commit: F,
    actions: u64,
}

/// An engine whose workers were spawned on a runtime ([`Engine::spawn_on`]); after the run,
/// [`Parallel::finish`] gives the engine back with everything the workers did.
///
/// ```
/// use tempi::warp::{phold::Phold, Engine, ParallelSpec, WarpConfig};
/// let scenario = Phold { lps: 8, ..Phold::default() }.scenario(2, 2, 1);
/// let config = WarpConfig { workers: 2, end_time: 100, ..WarpConfig::default() };
/// let mut rt = tempi::Runtime::real_time(2);
/// let commits = vec![0u64; 2];
/// let par = Engine::new(scenario, config).unwrap().spawn_on(&mut rt, ParallelSpec::default(), commits, |n, _| *n += 1).unwrap();
/// rt.run().unwrap();
/// let (engine, counts) = par.finish().unwrap();
/// assert_eq!(counts.iter().sum::<u64>(), engine.outcome().committed);
/// ```
pub struct Parallel<M: Model, T> {
    common: Arc<Common<M, Sink<M, T>>>,
}

type CommitFn<M, T> = fn(&mut T, &Committed<'_, M>);
type Sink<M, T> = (T, CommitFn<M, T>);

impl<M> Engine<M>
where
    M: Model + Send + Sync + 'static,
    M::State: Send + 'static,
    M::Event: Send + 'static,
    M::Saved: Send + 'static,
{
    /// Moves the engine onto `rt`: worker `w` becomes a thread on CPU `w` (at
    /// [`ParallelSpec::priority`]) that runs its LPs' events, exchanges messages with the other
    /// workers through bounded lock-free queues (one per worker, [`WarpConfig::inbox_capacity`]
    /// messages) and takes part in the GVT rounds. Each worker commits through
    /// `commit(&mut sinks[w], event)`, on its own CPU, per LP in key order. Nothing is
    /// allocated once the workers run (for models whose states and events do not allocate).
    ///
    /// Errors: [`WarpError::BadConfig`] when the runtime has fewer CPUs than workers, when
    /// `sinks` does not have one entry per worker, or when `poll` is zero in virtual time (a
    /// spinning thread would stop the virtual clock); [`WarpError::Runtime`] when a thread
    /// cannot be spawned.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::warp::{phold::Phold, Engine, ParallelSpec, WarpConfig};
    /// let scenario = Phold { lps: 8, ..Phold::default() }.scenario(2, 2, 1);
    /// let config = WarpConfig { workers: 2, end_time: 100, ..WarpConfig::default() };
    /// let mut rt = tempi::Runtime::simulated(2);
    /// let spec = ParallelSpec { event_cost: Duration::from_micros(1), poll: Duration::from_micros(1), ..ParallelSpec::default() };
    /// let par = Engine::new(scenario, config).unwrap().spawn_on(&mut rt, spec, vec![(); 2], |_, _| {}).unwrap();
    /// rt.run().unwrap();
    /// assert!(par.finish().unwrap().0.outcome().committed > 0);
    /// ```
    pub fn spawn_on<C: Clock, T: Send + 'static>(
        self,
        rt: &mut Runtime<C>,
        spec: ParallelSpec,
        sinks: Vec<T>,
        commit: fn(&mut T, &Committed<'_, M>),
    ) -> Result<Parallel<M, T>, WarpError> {
        let workers = self.workers.len();
        if rt.config().cpus() < workers {
            return Err(WarpError::BadConfig { what: "the runtime has fewer CPUs than the engine has workers" });
        }
        if sinks.len() != workers {
            return Err(WarpError::BadConfig { what: "one commit sink per worker is needed" });
        }
        if C::MODE == ClockMode::Virtual && spec.poll.is_zero() {
            return Err(WarpError::BadConfig { what: "poll must be non-zero in virtual time" });
        }
        if spec.deadlines.as_ref().is_some_and(|d| d.period.is_zero()) {
            return Err(WarpError::BadConfig { what: "the deadline watchers' period must be non-zero" });
        }
        let Engine { model, config, place, workers: ws, inboxes, log, gvt, .. } = self;
        let cap = config.inbox_capacity;
        let per_log = config.log_capacity;
        let mut parts = Vec::with_capacity(workers);
        let mut first_log = Some(log);
        let mut cells = Vec::new();
        for ((mut worker, inbox), sink) in ws.into_iter().zip(inboxes).zip(sinks) {
            if spec.deadlines.is_some() {
                let c = Arc::new(Cells::new(config.events_per_worker));
                worker.attach_deadlines(&model, c.clone());
                cells.push(c);
            }
            let log = first_log.take().unwrap_or_else(|| Log { records: Vec::with_capacity(per_log), dropped: 0 });
            let part = Part { worker, log, inbox, commit: (sink, commit), actions: 0 };
            parts.push(Mutex::new(Some(part)));
        }
        let common = Arc::new(Common {
            model,
            place,
            spec: spec.clone(),
            queues: (0..workers).map(|_| ArrayQueue::new(cap)).collect(),
            want: AtomicU64::new(0),
            barrier: Barrier { count: AtomicUsize::new(0), generation: AtomicU64::new(0), parties: workers },
            mins: (0..workers).map(|_| Mutex::new((EventKey::MAX, EventKey::MAX, false))).collect(),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            gvt: Mutex::new(gvt),
            rounds: AtomicU64::new(0),
            live: AtomicUsize::new(workers),
            fallbacks: (0..workers).map(|_| AtomicU64::new(0)).collect(),
            parts,
            config,
        });
        for w in 0..workers {
            let mut thread = ThreadSpec::new(format!("{}{w}", spec.name)).cpu(w).priority(spec.priority);
            if let Some(bytes) = spec.stack_size {
                thread = thread.stack_size(bytes);
            }
            let c = common.clone();
            let mut once = Some(c);
            rt.spawn(thread, move |cx| {
                if let Some(c) = once.take() {
                    run_worker(cx, &c, w);
                }
            })
            .map_err(|e| WarpError::Runtime { what: e.to_string() })?;
        }
        if let Some(d) = &spec.deadlines {
            for (w, cells) in cells.into_iter().enumerate() {
                let thread = ThreadSpec::new(format!("{}-watch{w}", spec.name)).cpu(w).priority(d.priority);
                let (c, d) = (common.clone(), d.clone());
                let mut once = Some((c, cells));
                rt.spawn(thread, move |cx| {
                    if let Some((c, cells)) = once.take() {
                        watch(cx, &c, &cells, &d, w);
                    }
                })
                .map_err(|e| WarpError::Runtime { what: e.to_string() })?;
            }
        }
        Ok(Parallel { common })
    }
}

impl<M: Model, T> Parallel<M, T> {
    /// After the runtime's run: the engine with every worker's LPs, counters, log and GVT,
    /// and the commit sinks. The first error a worker met is returned instead; a run that
    /// ended before the workers did (a horizon too early, a killed worker) is
    /// [`WarpError::Unfinished`].
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, ParallelSpec, WarpConfig, WarpError};
    /// let config = WarpConfig { workers: 1, end_time: 100, ..WarpConfig::default() };
    /// let mut rt = tempi::Runtime::real_time(1);
    /// let par = Engine::new(Phold::default().scenario(1, 1, 0), config).unwrap()
    ///     .spawn_on(&mut rt, ParallelSpec::default(), vec![()], |_, _| {}).unwrap();
    /// drop(rt); // never run
    /// assert!(matches!(par.finish(), Err(WarpError::Unfinished)));
    /// ```
    pub fn finish(self) -> Result<(Engine<M>, Vec<T>), WarpError> {
        let common = Arc::try_unwrap(self.common).map_err(|_| WarpError::Unfinished)?;
        if let Some(e) = common.error.into_inner().map_err(|_| internal("error slot poisoned"))? {
            return Err(e);
        }
        let mut workers = Vec::new();
        let mut inboxes = Vec::new();
        let mut sinks = Vec::new();
        let mut log: Option<Log> = None;
        let mut actions = 0;
        for slot in common.parts {
            let part = slot.into_inner().map_err(|_| internal("part poisoned"))?.ok_or(WarpError::Unfinished)?;
            if !part.worker.finished {
                return Err(WarpError::Unfinished);
            }
            workers.push(part.worker);
            inboxes.push(part.inbox);
            sinks.push(part.commit.0);
            actions += part.actions;
            match &mut log {
                None => log = Some(part.log),
                Some(l) => {
                    let room = l.records.capacity() - l.records.len();
                    let take = part.log.records.len().min(room);
                    l.dropped += part.log.dropped + (part.log.records.len() - take) as u64;
                    l.records.extend_from_slice(&part.log.records[..take]);
                }
            }
        }
        let gvt = common.gvt.into_inner().map_err(|_| internal("gvt poisoned"))?;
        let fallbacks = common.fallbacks.iter().map(|f| f.load(Ordering::Relaxed)).sum();
        let engine = Engine {
            model: common.model,
            config: common.config,
            place: common.place,
            workers,
            inboxes,
            log: log.ok_or_else(|| internal("no worker"))?,
            gvt,
            gvt_rounds: common.rounds.into_inner(),
            actions,
            fallbacks,
        };
        Ok((engine, sinks))
    }
}

/// Waits `spec.poll` (sleeping) or spins once (checking the kernel's timers).
fn pause(cx: &Ctx<'_>, spec: &ParallelSpec) {
    if spec.poll.is_zero() {
        std::hint::spin_loop();
        cx.checkpoint();
    } else {
        cx.sleep(spec.poll);
    }
}

impl Barrier {
    /// Waits for every party; `false` if the run failed meanwhile.
    fn wait(&self, cx: &Ctx<'_>, spec: &ParallelSpec, failed: &AtomicBool) -> bool {
        let generation = self.generation.load(Ordering::Acquire);
        if self.count.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            self.count.store(0, Ordering::Relaxed);
            self.generation.store(generation + 1, Ordering::Release);
            return !failed.load(Ordering::Acquire);
        }
        while self.generation.load(Ordering::Acquire) == generation {
            if failed.load(Ordering::Acquire) {
                return false;
            }
            pause(cx, spec);
        }
        !failed.load(Ordering::Acquire)
    }
}

/// What a round decided.
enum Round {
    Go,
    Done,
    Failed,
}

/// A worker thread's body: its part is taken out, run to the end, and put back.
fn run_worker<M: Model, F: Committer<M>>(cx: &Ctx<'_>, c: &Common<M, F>, w: usize) {
    let Some(mut part) = c.parts[w].lock().ok().and_then(|mut p| p.take()) else { return };
    let result = worker_loop(cx, c, w, &mut part);
    if let Err(e) = result {
        if let Ok(mut slot) = c.error.lock() {
            slot.get_or_insert(e);
        }
        c.failed.store(true, Ordering::Release);
    }
    if let Ok(mut slot) = c.parts[w].lock() {
        *slot = Some(part);
    }
    c.live.fetch_sub(1, Ordering::AcqRel);
}

/// A watcher's body: every period, drop what is due and run its fallbacks, until the workers
/// have ended.
fn watch<M: Model, F>(cx: &Ctx<'_>, c: &Common<M, F>, cells: &Cells, d: &DeadlineSpec, w: usize) {
    let mut next = cx.now();
    loop {
        next = next.saturating_add(d.period);
        cx.sleep_until(next);
        let now = cx.now().as_nanos();
        let n = cells.expire(now, |e| {
            let f = Fallback { worker: w, lp: e.lp, key: e.key, deadline: Duration::from_nanos(e.deadline_ns) };
            (d.fallback)(cx, &f);
        });
        c.fallbacks[w].fetch_add(n, Ordering::Relaxed);
        if c.live.load(Ordering::Acquire) == 0 {
            return;
        }
    }
}

/// The commit sink with its function, as a worker calls it.
trait Committer<M: Model> {
    fn commit(&mut self, c: &Committed<'_, M>);
}

impl<M: Model, T> Committer<M> for (T, CommitFn<M, T>) {
    fn commit(&mut self, c: &Committed<'_, M>) {
        (self.1)(&mut self.0, c)
    }
}

fn worker_loop<M: Model, F: Committer<M>>(
    cx: &Ctx<'_>,
    c: &Common<M, F>,
    w: usize,
    part: &mut Part<M, F>,
) -> Result<(), WarpError> {
    let sh = Shared { model: &c.model, config: &c.config, place: &c.place };
    let spec = &c.spec;
    let cap = c.config.inbox_capacity;
    let mut round = 0u64;
    let mut processed_since = 0usize;
    let mut idle = 0u32;
    let mut progressed = false;
    let mut last_gvt = part.worker.gvt;
    // After a round, one full step before the next: a round then shows whether anything moved.
    let mut stepped = false;
    loop {
        if c.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        if stepped && c.want.load(Ordering::Acquire) > round {
            match gvt_round(cx, c, w, part, progressed, &mut last_gvt)? {
                Round::Go => {}
                Round::Done => {
                    part.worker.finished = true;
                    return Ok(());
                }
                Round::Failed => return Ok(()),
            }
            round += 1;
            processed_since = 0;
            idle = 0;
            progressed = false;
            stepped = false;
            continue;
        }
        let mut moved = false;
        while part.inbox.len() < cap {
            let Some(msg) = c.queues[w].pop() else { break };
            part.inbox.push_back(msg);
            moved = true;
        }
        let t0 = cx.now();
        part.worker.now_ns = t0.as_nanos().max(1);
        part.worker.last_redo = None;
        let outcome = part.worker.step(&sh, &mut part.log, &mut part.inbox)?;
        moved |= send_out(c, &mut part.worker);
        part.actions += 1;
        stepped = true;
        let p = moved || outcome.progressed();
        progressed |= p;
        if outcome == StepOutcome::Processed {
            processed_since += 1;
            idle = 0;
            if !spec.event_cost.is_zero() {
                cx.work(spec.event_cost);
            } else {
                cx.checkpoint();
            }
            if part.worker.last_redo.is_some() {
                part.worker.charge_redo(cx.now().saturating_since(t0));
            }
        } else if !p {
            idle += 1;
            pause(cx, spec);
        }
        if processed_since >= c.config.gvt_interval || idle >= spec.idle_polls {
            c.want.fetch_max(round + 1, Ordering::AcqRel);
        }
    }
}

/// Moves the outbox into the receivers' queues, in order, as far as they have room.
fn send_out<M: Model, F>(c: &Common<M, F>, worker: &mut Worker<M>) -> bool {
    let mut moved = false;
    let mut left = worker.outbox.len();
    while left > 0 {
        left -= 1;
        let Some(msg) = worker.outbox.pop_front() else { break };
        let dest = c.place[msg.to().index()].worker as usize;
        match c.queues[dest].push(msg) {
            Ok(()) => moved = true,
            // Full: it stays, behind the others (delivery order is free).
            Err(msg) => worker.outbox.push_back(msg),
        }
    }
    moved
}

fn gvt_round<M: Model, F: Committer<M>>(
    cx: &Ctx<'_>,
    c: &Common<M, F>,
    w: usize,
    part: &mut Part<M, F>,
    progressed: bool,
    last_gvt: &mut EventKey,
) -> Result<Round, WarpError> {
    let spec = &c.spec;
    if !c.barrier.wait(cx, spec, &c.failed) {
        return Ok(Round::Failed);
    }
    // Nobody sends now: what is in flight is in the outboxes, the taken-in inboxes and the
    // queues, each looked at by its owner.
    let (mut min, mut cancel) = part.worker.local_min(c.config.end_time);
    let mut note = |msg: &Msg<M::Event>| {
        min = min.min(msg.key());
        if matches!(msg, Msg::Anti { .. }) {
            cancel = cancel.min(msg.key());
        }
    };
    part.inbox.iter().for_each(&mut note);
    let queue = &c.queues[w];
    for _ in 0..queue.len() {
        let Some(msg) = queue.pop() else { break };
        note(&msg);
        // The queue had this message, so it has room for it again.
        if queue.push(msg).is_err() {
            return Err(internal("a queue lost room during a GVT round"));
        }
    }
    *c.mins[w].lock().map_err(|_| internal("round slot poisoned"))? = (min, cancel, progressed);
    if !c.barrier.wait(cx, spec, &c.failed) {
        return Ok(Round::Failed);
    }
    let (mut gvt, mut floor, mut any) = (EventKey::MAX, EventKey::MAX, false);
    for slot in &c.mins {
        let (m, f, p) = *slot.lock().map_err(|_| internal("round slot poisoned"))?;
        gvt = gvt.min(m);
        floor = floor.min(f);
        any |= p;
    }
    if w == 0 {
        c.rounds.fetch_add(1, Ordering::Relaxed);
        *c.gvt.lock().map_err(|_| internal("gvt poisoned"))? = gvt;
    }
    part.worker.now_ns = cx.now().as_nanos().max(1);
    let commit = &mut part.commit;
    part.worker.collect(&mut part.log, gvt, floor, &mut |e| commit.commit(e))?;
    if gvt == EventKey::MAX {
        return Ok(Round::Done);
    }
    if !any && gvt == *last_gvt {
        return Err(WarpError::Stalled { gvt });
    }
    *last_gvt = gvt;
    Ok(Round::Go)
}
