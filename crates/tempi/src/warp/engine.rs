//! The optimistic engine: workers owning LPs, their event pools and histories, the inboxes
//! between workers, GVT, fossil collection and commit, and the deterministic driver that
//! interleaves the workers on one OS thread. Owns every piece of speculative bookkeeping; the
//! model sees only [`Emit`] and its own state.
//!
//! A worker's [`Engine::step`] handles its inbox, finishes rollbacks that were waiting for
//! outbox room and processes at most one event, then returns: the unit a tempi thread on the
//! worker's CPU would later run. Messages leave a worker through its outbox; delivery into the
//! destination inbox ([`Engine::deliver`], [`Engine::flush`]) is the step a cross-CPU queue
//! would take. Delivery order is free (the driver may reorder), which is why an anti-message
//! can arrive before its message.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::Duration;

use super::heap::SlotHeap;
use super::ring::Ring;
use super::{
    validate_scenario, Committed, Emit, EventKey, LpId, Model, Rollback, Scenario, SendError, Sent, WarpConfig,
    WarpError,
};

/// How the driver interleaves the workers and delivers messages.
///
/// ```
/// use tempi::warp::Schedule;
/// assert_ne!(Schedule::RoundRobin, Schedule::Seeded(3));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Each worker in turn takes one step, then its outbox is delivered in order.
    RoundRobin,
    /// A seeded random worker steps each time, and a random number of waiting messages is
    /// delivered from random outboxes, out of order: the schedule that provokes stragglers.
    Seeded(u64),
}

/// The alias kept for the driver's name in the documentation: runs are driven by
/// [`Engine::run`] under a [`Schedule`].
///
/// ```
/// let d: tempi::warp::Driver = tempi::warp::Schedule::RoundRobin;
/// assert_eq!(d, tempi::warp::Schedule::RoundRobin);
/// ```
pub type Driver = Schedule;

/// What one [`Engine::step`] did.
///
/// ```
/// use tempi::warp::StepOutcome;
/// assert!(StepOutcome::Processed.progressed());
/// assert!(!StepOutcome::Idle.progressed());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepOutcome {
    /// It processed an event.
    Processed,
    /// It handled messages or rollbacks but processed no event.
    Handled,
    /// Nothing to do below the end time (or only conservative events above GVT).
    Idle,
    /// It has work but no room (history, event pool or outbox full): it waits for GVT.
    Blocked,
}

impl StepOutcome {
    /// Whether the step changed anything.
    ///
    /// ```
    /// assert!(tempi::warp::StepOutcome::Handled.progressed());
    /// ```
    pub fn progressed(self) -> bool {
        matches!(self, StepOutcome::Processed | StepOutcome::Handled)
    }
}

/// One entry of the engine's bounded event log ([`WarpConfig::log_capacity`]).
///
/// ```
/// use tempi::warp::{EventKey, LogRecord, LpId};
/// let key = EventKey { time: 5, depth: 0, sender: LpId::OUTSIDE, seq: 0 };
/// assert_eq!(LogRecord::Process { lp: LpId(1), key }.to_string(), "process lp1 5.0@out#0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogRecord {
    /// An LP processed an event (forward).
    Process {
        /// The LP.
        lp: LpId,
        /// The event.
        key: EventKey,
    },
    /// An LP undid a processed event.
    Rollback {
        /// The LP.
        lp: LpId,
        /// The event undone.
        key: EventKey,
    },
    /// An undone event's message was cancelled by an anti-message.
    Anti {
        /// The sender.
        from: LpId,
        /// The receiver of the cancelled message.
        to: LpId,
        /// The cancelled message.
        key: EventKey,
    },
    /// A message and its anti-message met and both vanished (the message was unprocessed, or
    /// was rolled back for it, or arrived after its anti-message).
    Annihilate {
        /// The receiving LP.
        lp: LpId,
        /// The message.
        key: EventKey,
    },
    /// An event became final and went to the commit callback.
    Commit {
        /// The LP.
        lp: LpId,
        /// The event.
        key: EventKey,
    },
}

impl fmt::Display for LogRecord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LogRecord::Process { lp, key } => write!(f, "process lp{} {key}", lp.0),
            LogRecord::Rollback { lp, key } => write!(f, "rollback lp{} {key}", lp.0),
            LogRecord::Anti { from, to, key } => write!(f, "anti lp{}->lp{} {key}", from.0, to.0),
            LogRecord::Annihilate { lp, key } => write!(f, "annihilate lp{} {key}", lp.0),
            LogRecord::Commit { lp, key } => write!(f, "commit lp{} {key}", lp.0),
        }
    }
}

/// One LP's counters. The times are on the runtime's clock and are only measured when the
/// engine runs on a runtime ([`Engine::spawn_on`]); they stay zero otherwise.
///
/// ```
/// let c = tempi::warp::LpCounters::default();
/// assert_eq!(c.processed, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "export", derive(serde::Serialize))]
pub struct LpCounters {
    /// Forward executions (including re-executions).
    pub processed: u64,
    /// Events undone.
    pub rolled_back: u64,
    /// Events committed.
    pub committed: u64,
    /// Anti-messages sent.
    pub antis_sent: u64,
    /// Re-executions of events undone before (the redo work).
    pub redone: u64,
    /// The most processed, uncommitted events the LP held at once.
    pub max_history: usize,
    /// Events committed after their commit deadline had passed: their results were dropped
    /// and a fallback ran instead ([`crate::warp::DeadlineSpec`]).
    pub late: u64,
    /// Time spent re-executing undone events (their steps, with their charged cost).
    pub redo_time: Duration,
    /// Sum, over committed events, of the time from an event's first execution to its commit.
    pub commit_latency_total: Duration,
    /// The longest of those.
    pub commit_latency_max: Duration,
}

/// The totals of a run.
///
/// ```
/// let o = tempi::warp::RunOutcome { committed: 90, processed: 100, ..Default::default() };
/// assert_eq!(o.efficiency(), 0.9);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "export", derive(serde::Serialize))]
pub struct RunOutcome {
    /// Events committed.
    pub committed: u64,
    /// Forward executions.
    pub processed: u64,
    /// Events undone.
    pub rolled_back: u64,
    /// Anti-messages sent.
    pub antis_sent: u64,
    /// Re-executions.
    pub redone: u64,
    /// GVT computations.
    pub gvt_rounds: u64,
    /// Steps that found work but no room.
    pub blocked_steps: u64,
    /// Driver actions.
    pub actions: u64,
    /// Log records not kept for lack of room.
    pub log_dropped: u64,
    /// Events committed after their commit deadline (their results dropped).
    pub late: u64,
    /// Fallbacks the reactive watchers ran for events uncommitted at their deadline (a
    /// fallback may be for an event later cancelled, so this may exceed `late`).
    pub fallbacks: u64,
}

impl RunOutcome {
    /// Committed over processed (1 when nothing was processed).
    ///
    /// ```
    /// assert_eq!(tempi::warp::RunOutcome::default().efficiency(), 1.0);
    /// ```
    pub fn efficiency(&self) -> f64 {
        if self.processed == 0 {
            1.0
        } else {
            self.committed as f64 / self.processed as f64
        }
    }
}

/// Which send a message came from: the sender and its count of sends ever made, which rollback
/// does not restore. A re-sent message has the same key as the one it replaces (keys are
/// deterministic) but a new id, so an anti-message always cancels the right copy however
/// delivery reorders them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct MsgId {
    sender: u32,
    n: u64,
}

/// A message's record at its sender.
#[derive(Clone, Copy)]
struct SentRec {
    to: LpId,
    key: EventKey,
    id: MsgId,
    /// The receiver's slot when the receiver is on the sender's worker.
    slot: u32,
}

/// A message between workers.
pub(super) enum Msg<E> {
    Event { to: LpId, key: EventKey, id: MsgId, event: E },
    Anti { to: LpId, key: EventKey, id: MsgId },
}

impl<E> Msg<E> {
    pub(super) fn to(&self) -> LpId {
        match self {
            Msg::Event { to, .. } | Msg::Anti { to, .. } => *to,
        }
    }
    pub(super) fn key(&self) -> EventKey {
        match self {
            Msg::Event { key, .. } | Msg::Anti { key, .. } => *key,
        }
    }
    fn id(&self) -> MsgId {
        match self {
            Msg::Event { id, .. } | Msg::Anti { id, .. } => *id,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum SlotState {
    Free,
    /// Unprocessed, in one of the worker's heaps.
    Pending,
    /// Processed, in its LP's history.
    Processed,
    /// An anti-message waiting for its message.
    Orphan,
}

struct Slot<E> {
    key: EventKey,
    id: MsgId,
    to: LpId,
    event: Option<E>,
    state: SlotState,
    /// An anti-message came for it while processed; the rollback frees it instead of
    /// returning it to the unprocessed events.
    cancelled: bool,
    /// Undone at least once: its next execution is redo work.
    undone: bool,
    /// In the id index (messages from other workers and orphans; local messages are found
    /// through their sender's record instead).
    indexed: bool,
    /// When it was first executed (runtime nanoseconds; on a runtime only).
    first_ns: u64,
    /// Lazy cancellation: the messages its undone execution sent, with their payloads, kept
    /// until it is executed again (those it sends again are not cancelled).
    lazy: Vec<(SentRec, Option<E>)>,
}

struct Entry<Saved> {
    slot: u32,
    rng_index: u64,
    send_seq: u64,
    sent: u32,
    saved: Saved,
    error: Option<SendError>,
}

struct LpRun<S, Saved, E> {
    id: LpId,
    rollback: Rollback,
    state: S,
    rng_index: u64,
    send_seq: u64,
    history: Ring<Entry<Saved>>,
    /// State before each history entry (state-saving LPs only; aligned with `history`).
    states: Ring<S>,
    sent: Ring<SentRec>,
    /// The payloads of `sent` (lazy cancellation only; aligned with it).
    sent_events: Ring<Option<E>>,
    /// Sends ever made (never restored): the next message id.
    next_id: u64,
    /// A rollback in progress (it waits for outbox room), down to this key.
    rollback_to: Option<EventKey>,
    counters: LpCounters,
}

#[derive(Clone, Copy)]
pub(super) struct Place {
    pub(super) worker: u32,
    pub(super) local: u32,
}

/// A multiply-rotate hasher for event keys: the index is internal and keys are not chosen by
/// an adversary, so SipHash's cost buys nothing.
#[derive(Default)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(23) ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_u32(&mut self, v: u32) {
        self.write_u64(v as u64);
    }
}

type KeyIndex = HashMap<MsgId, u32, BuildHasherDefault<KeyHasher>>;

pub(super) struct Log {
    pub(super) records: Vec<LogRecord>,
    pub(super) dropped: u64,
}

impl Log {
    fn push(&mut self, r: LogRecord) {
        if self.records.len() < self.records.capacity() {
            self.records.push(r);
        } else {
            self.dropped += 1;
        }
    }
}

pub(super) struct Shared<'a, M> {
    pub(super) model: &'a M,
    pub(super) config: &'a WarpConfig,
    pub(super) place: &'a [Place],
}

pub(super) struct Worker<M: Model> {
    pub(super) id: u32,
    lps: Vec<LpRun<M::State, M::Saved, M::Event>>,
    slots: Vec<Slot<M::Event>>,
    pub(super) free: Vec<u32>,
    index: KeyIndex,
    pub(super) optimistic: SlotHeap,
    pub(super) conservative: SlotHeap,
    pub(super) outbox: VecDeque<Msg<M::Event>>,
    pub(super) outbox_capacity: usize,
    pub(super) sends: Vec<(LpId, EventKey, M::Event)>,
    pub(super) sent_scratch: Vec<Sent>,
    pub(super) ids: Vec<MsgId>,
    cancels: Vec<(MsgId, u32)>,
    /// LPs with a rollback in progress.
    pub(super) rolling_back: usize,
    /// The last GVT this worker was told (never above the true GVT).
    pub(super) gvt: EventKey,
    /// The least key an anti-message or rollback could cancel at when `gvt` was computed: a
    /// conservative event exactly at GVT may still have a doomed twin (a cancelled copy with
    /// the same key) while that copy's anti-message is in flight.
    pub(super) cancel_floor: EventKey,
    pub(super) blocked_steps: u64,
    /// Set by a parallel worker thread when it saw GVT reach the end.
    pub(super) finished: bool,
    /// Lazy cancellation: messages of undone executions found not sent again (or whose event
    /// went away), waiting for outbox room for their anti-messages: (sender, record).
    lazy_antis: VecDeque<(LpId, SentRec)>,
    /// Per send of the event being processed: whether it re-uses a lazily kept message.
    reused: Vec<bool>,
    /// The runtime's clock as last told by a parallel driver (0 otherwise).
    pub(super) now_ns: u64,
    /// The local LP whose event the last step re-executed, if it was redo work.
    pub(super) last_redo: Option<usize>,
    /// Commit-deadline cells, one per slot (on a runtime with deadlines only).
    pub(super) deadlines: Option<std::sync::Arc<super::deadline::Cells>>,
}

pub(super) fn internal(what: &'static str) -> WarpError {
    WarpError::Internal { what }
}

impl<M: Model> Worker<M> {
    pub(super) fn outbox_room(&self) -> usize {
        self.outbox_capacity - self.outbox.len()
    }

    /// A slot for a message; `indexed` when an anti-message may come for it from another
    /// worker (or it is an orphan anti-message waiting for its message).
    fn alloc(
        &mut self,
        to: LpId,
        key: EventKey,
        id: MsgId,
        event: Option<M::Event>,
        state: SlotState,
        indexed: bool,
    ) -> Option<u32> {
        let slot = self.free.pop()?;
        let s = &mut self.slots[slot as usize];
        // Field by field: the lazy list keeps its storage.
        (s.key, s.id, s.to, s.event, s.state) = (key, id, to, event, state);
        (s.cancelled, s.undone, s.indexed, s.first_ns) = (false, false, indexed, 0);
        s.lazy.clear();
        if indexed {
            self.index.insert(id, slot);
        }
        Some(slot)
    }

    fn free_slot(&mut self, slot: u32) {
        let s = &mut self.slots[slot as usize];
        if s.indexed {
            self.index.remove(&s.id);
        }
        if let Some(cells) = &self.deadlines {
            cells.disarm(slot);
        }
        s.state = SlotState::Free;
        s.event = None;
        self.free.push(slot);
    }

    fn heap_for(&mut self, rollback: Rollback) -> &mut SlotHeap {
        if rollback == Rollback::NeverRollback {
            &mut self.conservative
        } else {
            &mut self.optimistic
        }
    }

    /// A new unprocessed event in `slot` for local LP `local`; a straggler rolls it back.
    fn insert_pending(&mut self, sh: &Shared<'_, M>, log: &mut Log, local: usize, slot: u32) -> Result<(), WarpError> {
        let key = self.slots[slot as usize].key;
        let rollback = self.lps[local].rollback;
        if let Some(cells) = &self.deadlines {
            let s = &self.slots[slot as usize];
            if let Some(d) = s.event.as_ref().and_then(|e| sh.model.commit_deadline(s.to, &key, e)) {
                cells.arm(slot, s.to, key, crate::time::nanos(d));
            }
        }
        self.heap_for(rollback).push(slot, key);
        let last = self.lps[local].history.back().map(|e| self.slots[e.slot as usize].key);
        if last.is_some_and(|last| key < last) {
            if rollback == Rollback::NeverRollback {
                return Err(internal("a straggler reached a never-rollback LP"));
            }
            self.rollback(sh, log, local, key)?;
        }
        Ok(())
    }

    /// Rolls local LP `local` back to before `target` (undoing every processed event at or
    /// above it), then handles the local cancellations that produced.
    fn rollback(&mut self, sh: &Shared<'_, M>, log: &mut Log, local: usize, target: EventKey) -> Result<(), WarpError> {
        let lp = &mut self.lps[local];
        match lp.rollback_to {
            None => {
                lp.rollback_to = Some(target);
                self.rolling_back += 1;
            }
            Some(t) => lp.rollback_to = Some(t.min(target)),
        }
        self.continue_rollback(sh, log, local)?;
        self.drain_cancels(sh, log)
    }

    /// Undoes events of a rolling-back LP while the outbox has room for their anti-messages.
    fn continue_rollback(&mut self, sh: &Shared<'_, M>, log: &mut Log, local: usize) -> Result<(), WarpError> {
        let Some(target) = self.lps[local].rollback_to else { return Ok(()) };
        loop {
            let lp = &self.lps[local];
            let Some(entry) = lp.history.back() else { break };
            let slot = entry.slot;
            let key = self.slots[slot as usize].key;
            if key < target {
                break;
            }
            if self.outbox_room() < entry.sent as usize {
                return Ok(()); // resumed by a later step, after delivery makes room
            }
            let my_id = self.id;
            let lazy = sh.config.lazy_cancellation;
            let Worker { lps, slots, outbox, cancels, .. } = &mut *self;
            let LpRun {
                id, rollback, state, rng_index, send_seq, history, states, sent, sent_events, counters, ..
            } = &mut lps[local];
            let entry = history.pop_back().ok_or_else(|| internal("history emptied under rollback"))?;
            match rollback {
                Rollback::StateSaving => {
                    let before = states.pop_back().ok_or_else(|| internal("saved state missing"))?;
                    std::mem::swap(state, before);
                }
                Rollback::Reverse => {
                    let event = slots[slot as usize].event.as_ref().ok_or_else(|| internal("processed event empty"))?;
                    sh.model.reverse(*id, state, event, &entry.saved);
                }
                Rollback::NeverRollback => return Err(internal("rollback of a never-rollback LP")),
            }
            *rng_index = entry.rng_index;
            *send_seq = entry.send_seq;
            counters.rolled_back += 1;
            log.push(LogRecord::Rollback { lp: *id, key });
            let keep = lazy && !slots[slot as usize].cancelled;
            for _ in 0..entry.sent {
                let s = *sent.pop_back().ok_or_else(|| internal("sent record missing"))?;
                let payload = if lazy { sent_events.pop_back().and_then(|e| e.take()) } else { None };
                if keep {
                    // Lazy: kept with the event; cancelled only if its re-execution does not
                    // send it again.
                    slots[slot as usize].lazy.push((s, payload));
                    continue;
                }
                if sh.place[s.to.index()].worker == my_id {
                    cancels.push((s.id, s.slot));
                } else {
                    outbox.push_back(Msg::Anti { to: s.to, key: s.key, id: s.id });
                }
                counters.antis_sent += 1;
                log.push(LogRecord::Anti { from: *id, to: s.to, key: s.key });
            }
            let mode = *rollback;
            let s = &mut slots[slot as usize];
            if s.cancelled {
                log.push(LogRecord::Annihilate { lp: s.to, key });
                self.free_slot(slot);
            } else {
                s.state = SlotState::Pending;
                s.undone = true;
                self.heap_for(mode).push(slot, key);
            }
        }
        self.lps[local].rollback_to = None;
        self.rolling_back -= 1;
        Ok(())
    }

    /// The lazily kept messages of `slot`'s event will not be sent again: they are cancelled
    /// (as soon as the outbox has room).
    fn drop_lazy(&mut self, slot: u32) {
        let Worker { slots, lazy_antis, .. } = &mut *self;
        let s = &mut slots[slot as usize];
        let sender = s.to;
        for (rec, _) in s.lazy.drain(..) {
            lazy_antis.push_back((sender, rec));
        }
    }

    /// Sends the anti-messages of dropped lazy messages while the outbox has room; true if
    /// any went.
    fn flush_lazy(&mut self, sh: &Shared<'_, M>, log: &mut Log) -> Result<bool, WarpError> {
        let mut any = false;
        while let Some(&(from, rec)) = self.lazy_antis.front() {
            let local_to = sh.place[rec.to.index()].worker == self.id;
            if !local_to && self.outbox_room() == 0 {
                break;
            }
            self.lazy_antis.pop_front();
            if local_to {
                self.cancels.push((rec.id, rec.slot));
            } else {
                self.outbox.push_back(Msg::Anti { to: rec.to, key: rec.key, id: rec.id });
            }
            let local = sh.place[from.index()].local as usize;
            self.lps[local].counters.antis_sent += 1;
            log.push(LogRecord::Anti { from, to: rec.to, key: rec.key });
            any = true;
        }
        if any {
            self.drain_cancels(sh, log)?;
        }
        Ok(any)
    }

    /// Cancels the local messages undone events sent (each may roll back its receiver, which
    /// may cancel more).
    fn drain_cancels(&mut self, sh: &Shared<'_, M>, log: &mut Log) -> Result<(), WarpError> {
        while let Some((id, slot)) = self.cancels.pop() {
            let s = self.slots.get(slot as usize).ok_or_else(|| internal("local message slot out of range"))?;
            if s.id != id || s.state == SlotState::Free {
                return Err(internal("local message to cancel not found"));
            }
            self.cancel_slot(sh, log, slot)?;
        }
        Ok(())
    }

    /// An anti-message met its message in `slot`.
    fn cancel_slot(&mut self, sh: &Shared<'_, M>, log: &mut Log, slot: u32) -> Result<(), WarpError> {
        let s = &self.slots[slot as usize];
        let (key, to) = (s.key, s.to);
        let local = sh.place[to.index()].local as usize;
        match s.state {
            SlotState::Pending => {
                let rollback = self.lps[local].rollback;
                self.heap_for(rollback).remove(slot);
                self.drop_lazy(slot);
                log.push(LogRecord::Annihilate { lp: to, key });
                self.free_slot(slot);
                Ok(())
            }
            SlotState::Processed => {
                if self.slots[slot as usize].cancelled {
                    return Err(internal("second anti-message for one event"));
                }
                self.slots[slot as usize].cancelled = true;
                self.rollback(sh, log, local, key)
            }
            SlotState::Orphan | SlotState::Free => Err(internal("anti-message met no message")),
        }
    }

    /// Takes one message from the inbox; false when it must wait for a free slot.
    fn receive(
        &mut self,
        sh: &Shared<'_, M>,
        log: &mut Log,
        msg: Msg<M::Event>,
    ) -> Result<Option<Msg<M::Event>>, WarpError> {
        let key = msg.key();
        let to = msg.to();
        let id = msg.id();
        let found = self.index.get(&id).copied();
        match msg {
            Msg::Event { event, .. } => match found {
                Some(slot) if self.slots[slot as usize].state == SlotState::Orphan => {
                    log.push(LogRecord::Annihilate { lp: to, key });
                    self.free_slot(slot);
                }
                Some(_) => return Err(internal("a message arrived twice")),
                None => {
                    let Some(slot) = self.alloc(to, key, id, None, SlotState::Pending, true) else {
                        return Ok(Some(Msg::Event { to, key, id, event }));
                    };
                    self.slots[slot as usize].event = Some(event);
                    self.insert_pending(sh, log, sh.place[to.index()].local as usize, slot)?;
                }
            },
            Msg::Anti { .. } => match found {
                Some(slot) => self.cancel_slot(sh, log, slot)?,
                None => {
                    if self.alloc(to, key, id, None, SlotState::Orphan, true).is_none() {
                        return Ok(Some(msg));
                    }
                }
            },
        }
        Ok(None)
    }

    pub(super) fn step(
        &mut self,
        sh: &Shared<'_, M>,
        log: &mut Log,
        inbox: &mut VecDeque<Msg<M::Event>>,
    ) -> Result<StepOutcome, WarpError> {
        let mut handled = false;
        while let Some(msg) = inbox.pop_front() {
            if let Some(back) = self.receive(sh, log, msg)? {
                inbox.push_front(back);
                break;
            }
            handled = true;
        }
        if !self.lazy_antis.is_empty() {
            handled |= self.flush_lazy(sh, log)?;
        }
        if self.rolling_back > 0 {
            for local in 0..self.lps.len() {
                if self.lps[local].rollback_to.is_some() {
                    self.continue_rollback(sh, log, local)?;
                    handled = true;
                }
            }
            self.drain_cancels(sh, log)?;
        }
        let idle = if handled { StepOutcome::Handled } else { StepOutcome::Idle };
        if self.rolling_back > 0 {
            self.blocked_steps += 1;
            return Ok(if handled { StepOutcome::Handled } else { StepOutcome::Blocked });
        }
        // Safe work first: a conservative event at or below GVT can never be undone.
        let pick = match self.conservative.peek() {
            Some((slot, key)) if key <= self.gvt && key < self.cancel_floor && key.time < sh.config.end_time => {
                Some((slot, true))
            }
            _ => match self.optimistic.peek() {
                Some((slot, key)) if key.time < sh.config.end_time => Some((slot, false)),
                _ => None,
            },
        };
        let Some((slot, conservative)) = pick else { return Ok(idle) };
        let to = self.slots[slot as usize].to;
        let local = sh.place[to.index()].local as usize;
        // Speculative work (above the last known GVT) leaves an inbox's worth of slots free, so
        // the worker can always take in its messages, among them the one at GVT that lets
        // everyone progress; work at GVT may use the whole pool.
        let key = self.slots[slot as usize].key;
        let reserve = if key > self.gvt { sh.config.inbox_capacity } else { 0 };
        let room = !self.lps[local].history.is_full()
            && self.free.len() >= sh.config.max_sends_per_event + reserve
            && self.outbox_room() >= sh.config.max_sends_per_event;
        if !room {
            self.blocked_steps += 1;
            return Ok(if handled { StepOutcome::Handled } else { StepOutcome::Blocked });
        }
        if conservative {
            self.conservative.pop();
        } else {
            self.optimistic.pop();
        }
        self.process(sh, log, local, slot)?;
        Ok(StepOutcome::Processed)
    }

    fn process(&mut self, sh: &Shared<'_, M>, log: &mut Log, local: usize, slot: u32) -> Result<(), WarpError> {
        let nlps = sh.place.len();
        let key = self.slots[slot as usize].key;
        let mut sends = std::mem::take(&mut self.sends);
        let mut ids = std::mem::take(&mut self.ids);
        sends.clear();
        {
            let lazy = sh.config.lazy_cancellation;
            let Worker { lps, slots, now_ns, last_redo, reused, .. } = &mut *self;
            let LpRun {
                id,
                rollback,
                state,
                rng_index,
                send_seq,
                history,
                states,
                sent,
                sent_events,
                next_id,
                counters,
                ..
            } = &mut lps[local];
            let entry = history.push_back().ok_or_else(|| internal("history full at process"))?;
            entry.slot = slot;
            entry.rng_index = *rng_index;
            entry.send_seq = *send_seq;
            entry.sent = 0;
            entry.saved = M::Saved::default();
            entry.error = None;
            if *rollback == Rollback::StateSaving {
                states.push_back().ok_or_else(|| internal("state ring full at process"))?.clone_from(state);
            }
            let s = &mut slots[slot as usize];
            let event = s.event.as_ref().ok_or_else(|| internal("pending event empty"))?;
            let mut out = Emit::new(key, *id, sh.config, nlps, rng_index, send_seq, &mut sends, &mut entry.error);
            sh.model.event(*id, state, event, &mut entry.saved, &mut out);
            ids.clear();
            reused.clear();
            for (to, k, ev) in sends.iter() {
                // Lazy: the undone execution's copy of this very message is still out there.
                let again = s.lazy.iter().position(|(r, old)| {
                    r.to == *to && r.key == *k && old.as_ref().is_some_and(|old| sh.model.same_event(old, ev))
                });
                let rec = match again {
                    Some(i) => s.lazy.swap_remove(i).0,
                    None => {
                        let msg_id = MsgId { sender: id.0, n: *next_id };
                        *next_id += 1;
                        SentRec { to: *to, key: *k, id: msg_id, slot: super::heap::NOWHERE }
                    }
                };
                *sent.push_back().ok_or_else(|| internal("sent ring full"))? = rec;
                if lazy {
                    *sent_events.push_back().ok_or_else(|| internal("sent payload ring full"))? = Some(ev.clone());
                }
                ids.push(rec.id);
                reused.push(again.is_some());
                entry.sent += 1;
            }
            s.state = SlotState::Processed;
            counters.processed += 1;
            if s.undone {
                counters.redone += 1;
            } else {
                s.first_ns = *now_ns;
            }
            *last_redo = s.undone.then_some(local);
            counters.max_history = counters.max_history.max(history.len());
            log.push(LogRecord::Process { lp: *id, key });
        }
        let first = self.lps[local].sent.len() - ids.len();
        for (i, ((to, k, event), &id)) in sends.drain(..).zip(ids.iter()).enumerate() {
            let place = sh.place[to.index()];
            if self.reused[i] {
                continue; // its earlier copy stands
            }
            if place.worker == self.id {
                let slot = self
                    .alloc(to, k, id, Some(event), SlotState::Pending, false)
                    .ok_or_else(|| internal("pool checked"))?;
                self.lps[local].sent.get_mut(first + i).ok_or_else(|| internal("sent record missing"))?.slot = slot;
                self.insert_pending(sh, log, place.local as usize, slot)?;
            } else {
                self.outbox.push_back(Msg::Event { to, key: k, id, event });
            }
        }
        self.sends = sends;
        self.ids = ids;
        if !self.slots[slot as usize].lazy.is_empty() {
            // What the re-execution did not send again is cancelled.
            self.drop_lazy(slot);
            self.flush_lazy(sh, log)?;
        }
        Ok(())
    }

    /// The least key this worker still has to account for (unprocessed events below the end,
    /// unfinished rollbacks and its outbox), and the least key something may still cancel at
    /// (anti-messages and rollback targets).
    pub(super) fn local_min(&self, end_time: u64) -> (EventKey, EventKey) {
        let mut min = EventKey::MAX;
        let mut cancel = EventKey::MAX;
        for heap in [&self.optimistic, &self.conservative] {
            if let Some((_, key)) = heap.peek().filter(|(_, key)| key.time < end_time) {
                min = min.min(key);
            }
        }
        if self.rolling_back > 0 {
            for lp in &self.lps {
                if let Some(t) = lp.rollback_to {
                    min = min.min(t);
                    cancel = cancel.min(t);
                }
            }
        }
        for (_, rec) in &self.lazy_antis {
            min = min.min(rec.key);
            cancel = cancel.min(rec.key);
        }
        for msg in &self.outbox {
            min = min.min(msg.key());
            if matches!(msg, Msg::Anti { .. }) {
                cancel = cancel.min(msg.key());
            }
        }
        (min, cancel)
    }

    /// Charges `d` of redo time to the LP whose event the last step re-executed, if any.
    pub(super) fn charge_redo(&mut self, d: Duration) {
        if let Some(lp) = self.last_redo.take().and_then(|local| self.lps.get_mut(local)) {
            lp.counters.redo_time += d;
        }
    }

    /// Gives the worker its deadline cells and arms them for the events already in its pool.
    pub(super) fn attach_deadlines(&mut self, model: &M, cells: std::sync::Arc<super::deadline::Cells>) {
        for (i, s) in self.slots.iter().enumerate() {
            if !matches!(s.state, SlotState::Pending | SlotState::Processed) {
                continue;
            }
            if let Some(d) = s.event.as_ref().and_then(|e| model.commit_deadline(s.to, &s.key, e)) {
                cells.arm(i as u32, s.to, s.key, crate::time::nanos(d));
            }
        }
        self.deadlines = Some(cells);
    }

    /// Commits and frees every processed event below `gvt`.
    pub(super) fn collect(
        &mut self,
        log: &mut Log,
        gvt: EventKey,
        cancel_floor: EventKey,
        commit: &mut dyn FnMut(&Committed<'_, M>),
    ) -> Result<u64, WarpError> {
        self.gvt = self.gvt.max(gvt);
        self.cancel_floor = cancel_floor;
        let mut count = 0;
        for local in 0..self.lps.len() {
            loop {
                let Worker { lps, slots, sent_scratch, deadlines, now_ns, .. } = &mut *self;
                let lp = &mut lps[local];
                let Some(front) = lp.history.front() else { break };
                let slot = front.slot as usize;
                let key = slots[slot].key;
                if key >= gvt {
                    break;
                }
                if let Some(error) = front.error {
                    return Err(WarpError::Send { lp: lp.id, key, error });
                }
                sent_scratch.clear();
                for _ in 0..front.sent {
                    let rec = *lp.sent.pop_front().ok_or_else(|| internal("sent record missing at commit"))?;
                    if let Some(e) = lp.sent_events.pop_front() {
                        *e = None;
                    }
                    sent_scratch.push(Sent { to: rec.to, key: rec.key });
                }
                let event = slots[slot].event.as_ref().ok_or_else(|| internal("committed event empty"))?;
                let late = deadlines.as_ref().is_some_and(|c| c.commit(slot as u32));
                if *now_ns > 0 {
                    let waited = Duration::from_nanos(now_ns.saturating_sub(slots[slot].first_ns));
                    lp.counters.commit_latency_total += waited;
                    lp.counters.commit_latency_max = lp.counters.commit_latency_max.max(waited);
                }
                if late {
                    lp.counters.late += 1;
                }
                commit(&Committed { lp: lp.id, key, event, saved: &front.saved, sent: sent_scratch, late });
                lp.history.pop_front();
                if lp.rollback == Rollback::StateSaving {
                    lp.states.pop_front();
                }
                lp.counters.committed += 1;
                log.push(LogRecord::Commit { lp: lp.id, key });
                count += 1;
                self.free_slot(slot as u32);
            }
        }
        Ok(count)
    }
}

/// The optimistic Time Warp engine over a [`Scenario`].
///
/// ```
/// use tempi::warp::{phold::Phold, Engine, Schedule, WarpConfig};
/// let scenario = Phold { lps: 6, ..Phold::default() }.scenario(2, 3, 9);
/// let mut engine = Engine::new(scenario, WarpConfig { workers: 3, end_time: 100, ..Default::default() }).unwrap();
/// let mut committed = 0;
/// let out = engine.run(Schedule::Seeded(5), |_| committed += 1).unwrap();
/// assert_eq!(out.committed, committed);
/// assert!(out.processed >= out.committed);
/// ```
pub struct Engine<M: Model> {
    pub(super) model: M,
    pub(super) config: WarpConfig,
    pub(super) place: Vec<Place>,
    pub(super) workers: Vec<Worker<M>>,
    pub(super) inboxes: Vec<VecDeque<Msg<M::Event>>>,
    pub(super) log: Log,
    pub(super) gvt: EventKey,
    pub(super) gvt_rounds: u64,
    pub(super) actions: u64,
    /// Fallbacks run by the reactive watchers of a run on a runtime.
    pub(super) fallbacks: u64,
}

impl<M: Model> Engine<M> {
    /// Builds the engine: checks the configuration against the scenario, preallocates every
    /// pool and places the scheduled events.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig, WarpError};
    /// let s = Phold { lps: 4, ..Phold::default() }.scenario(1, 2, 0);
    /// let e = Engine::new(s, WarpConfig { workers: 1, ..Default::default() });
    /// assert!(matches!(e, Err(WarpError::NoSuchWorker { .. })));
    /// ```
    pub fn new(scenario: Scenario<M>, config: WarpConfig) -> Result<Self, WarpError> {
        validate_scenario(&scenario, &config)?;
        let Scenario { model, lps: specs, initial } = scenario;
        let h = config.history_per_lp;
        let pool = config.events_per_worker;
        let mut workers: Vec<Worker<M>> = (0..config.workers)
            .map(|w| {
                let mut index = KeyIndex::default();
                // Twice the pool: the table stays at most half full, so tombstones are cleared
                // by rehashing in place and it never grows.
                index.reserve(2 * pool);
                Worker {
                    id: w as u32,
                    lps: Vec::new(),
                    slots: (0..pool)
                        .map(|_| Slot {
                            key: EventKey::MAX,
                            id: MsgId { sender: 0, n: 0 },
                            to: LpId(0),
                            event: None,
                            state: SlotState::Free,
                            cancelled: false,
                            undone: false,
                            indexed: false,
                            first_ns: 0,
                            lazy: Vec::with_capacity(if config.lazy_cancellation {
                                config.max_sends_per_event
                            } else {
                                0
                            }),
                        })
                        .collect(),
                    free: (0..pool as u32).rev().collect(),
                    index,
                    optimistic: SlotHeap::new(pool),
                    conservative: SlotHeap::new(pool),
                    outbox: VecDeque::with_capacity(config.outbox_capacity),
                    outbox_capacity: config.outbox_capacity,
                    sends: Vec::with_capacity(config.max_sends_per_event),
                    sent_scratch: Vec::with_capacity(config.max_sends_per_event),
                    cancels: Vec::with_capacity(pool),
                    ids: Vec::with_capacity(config.max_sends_per_event),
                    rolling_back: 0,
                    gvt: EventKey { time: 0, depth: 0, sender: LpId(0), seq: 0 },
                    cancel_floor: EventKey::MAX,
                    blocked_steps: 0,
                    finished: false,
                    deadlines: None,
                    now_ns: 0,
                    last_redo: None,
                    lazy_antis: VecDeque::with_capacity(if config.lazy_cancellation {
                        pool * config.max_sends_per_event
                    } else {
                        0
                    }),
                    reused: Vec::with_capacity(config.max_sends_per_event),
                }
            })
            .collect();
        let mut place = Vec::with_capacity(specs.len());
        for (i, spec) in specs.into_iter().enumerate() {
            let w = &mut workers[spec.worker];
            place.push(Place { worker: spec.worker as u32, local: w.lps.len() as u32 });
            let states = if spec.rollback == Rollback::StateSaving {
                Ring::over((0..h).map(|_| spec.state.clone()).collect())
            } else {
                Ring::over(Vec::new())
            };
            w.lps.push(LpRun {
                id: LpId(i as u32),
                rollback: spec.rollback,
                state: spec.state,
                rng_index: 0,
                send_seq: 0,
                history: Ring::over(
                    (0..h)
                        .map(|_| Entry {
                            slot: 0,
                            rng_index: 0,
                            send_seq: 0,
                            sent: 0,
                            saved: M::Saved::default(),
                            error: None,
                        })
                        .collect(),
                ),
                states,
                sent_events: Ring::over(if config.lazy_cancellation {
                    (0..h * config.max_sends_per_event).map(|_| None).collect()
                } else {
                    Vec::new()
                }),
                sent: Ring::over(vec![
                    SentRec {
                        to: LpId(0),
                        key: EventKey::MAX,
                        id: MsgId { sender: 0, n: 0 },
                        slot: 0
                    };
                    h * config.max_sends_per_event
                ]),
                next_id: 0,
                rollback_to: None,
                counters: LpCounters::default(),
            });
        }
        let mut needed = vec![0usize; config.workers];
        for (to, _, _) in &initial {
            needed[place[to.index()].worker as usize] += 1;
        }
        for (w, &n) in needed.iter().enumerate() {
            if n > pool {
                return Err(WarpError::PoolTooSmall { worker: w, needed: n });
            }
        }
        let mut log = Log { records: Vec::with_capacity(config.log_capacity), dropped: 0 };
        let inboxes = (0..config.workers).map(|_| VecDeque::with_capacity(config.inbox_capacity)).collect();
        {
            let sh = Shared { model: &model, config: &config, place: &place };
            for (to, key, event) in initial {
                let p = place[to.index()];
                let w = &mut workers[p.worker as usize];
                let id = MsgId { sender: key.sender.0, n: key.seq };
                let slot = w
                    .alloc(to, key, id, Some(event), SlotState::Pending, false)
                    .ok_or_else(|| internal("pool checked"))?;
                w.insert_pending(&sh, &mut log, p.local as usize, slot)?;
            }
        }
        Ok(Engine {
            model,
            config,
            place,
            workers,
            inboxes,
            log,
            gvt: EventKey { time: 0, depth: 0, sender: LpId(0), seq: 0 },
            gvt_rounds: 0,
            actions: 0,
            fallbacks: 0,
        })
    }

    /// The model (for models that record what they see).
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.model().lps, 16);
    /// ```
    pub fn model(&self) -> &M {
        &self.model
    }

    /// The number of workers.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 2, 0), WarpConfig { workers: 2, ..Default::default() }).unwrap();
    /// assert_eq!(e.workers(), 2);
    /// ```
    pub fn workers(&self) -> usize {
        self.workers.len()
    }

    /// One step of worker `w`: its inbox, its waiting rollbacks, then at most one event.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, StepOutcome, WarpConfig};
    /// let mut e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.step(0).unwrap(), StepOutcome::Processed);
    /// assert!(e.step(7).is_err());
    /// ```
    pub fn step(&mut self, w: usize) -> Result<StepOutcome, WarpError> {
        if w >= self.workers.len() {
            return Err(WarpError::BadConfig { what: "no such worker" });
        }
        let sh = Shared { model: &self.model, config: &self.config, place: &self.place };
        self.workers[w].step(&sh, &mut self.log, &mut self.inboxes[w])
    }

    /// Messages waiting in worker `w`'s outbox.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.outbox_len(0), 0);
    /// ```
    pub fn outbox_len(&self, w: usize) -> usize {
        self.workers.get(w).map_or(0, |wk| wk.outbox.len())
    }

    /// Moves message `i` of worker `w`'s outbox into its receiver's inbox; false when there is
    /// no such message or that inbox is full.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let mut e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert!(!e.deliver(0, 0));
    /// ```
    pub fn deliver(&mut self, w: usize, i: usize) -> bool {
        let Some(worker) = self.workers.get_mut(w) else { return false };
        let Some(msg) = worker.outbox.get(i) else { return false };
        let dest = self.place[msg.to().index()].worker as usize;
        if self.inboxes[dest].len() >= self.config.inbox_capacity {
            return false;
        }
        let Some(msg) = worker.outbox.remove(i) else { return false };
        self.inboxes[dest].push_back(msg);
        true
    }

    /// Delivers worker `w`'s outbox in order, as far as the inboxes have room; returns how
    /// many messages moved.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let mut e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.flush(0), 0);
    /// ```
    pub fn flush(&mut self, w: usize) -> usize {
        let mut moved = 0;
        let mut i = 0;
        while i < self.outbox_len(w) {
            if self.deliver(w, i) {
                moved += 1;
            } else {
                i += 1;
            }
        }
        moved
    }

    /// Computes GVT: the least key among unprocessed events below the end time, unfinished
    /// rollbacks, and messages and anti-messages in outboxes and inboxes.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.compute_gvt().time, 0); // the first scheduled events are at 0
    /// ```
    pub fn compute_gvt(&self) -> EventKey {
        self.floors().0
    }

    /// GVT, and the least key an anti-message or unfinished rollback may still cancel at.
    fn floors(&self) -> (EventKey, EventKey) {
        let (mut min, mut cancel) = (EventKey::MAX, EventKey::MAX);
        for w in &self.workers {
            let (m, c) = w.local_min(self.config.end_time);
            min = min.min(m);
            cancel = cancel.min(c);
        }
        for inbox in &self.inboxes {
            for msg in inbox {
                min = min.min(msg.key());
                if matches!(msg, Msg::Anti { .. }) {
                    cancel = cancel.min(msg.key());
                }
            }
        }
        (min, cancel)
    }

    /// Sets GVT to `gvt` (which must not exceed [`Engine::compute_gvt`]) and commits every
    /// processed event below it, per LP in key order; returns how many were committed.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let mut e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// e.step(0).unwrap();
    /// let gvt = e.compute_gvt();
    /// assert_eq!(e.collect(gvt, |_| {}).unwrap(), 1);
    /// ```
    pub fn collect(&mut self, gvt: EventKey, mut commit: impl FnMut(&Committed<'_, M>)) -> Result<u64, WarpError> {
        self.collect_dyn(gvt, &mut commit)
    }

    fn collect_dyn(&mut self, gvt: EventKey, commit: &mut dyn FnMut(&Committed<'_, M>)) -> Result<u64, WarpError> {
        let (now, cancel_floor) = self.floors();
        self.gvt = self.gvt.max(gvt.min(now));
        self.gvt_rounds += 1;
        let mut n = 0;
        for w in &mut self.workers {
            n += w.collect(&mut self.log, self.gvt, cancel_floor, commit)?;
        }
        Ok(n)
    }

    /// The current GVT (as last collected).
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.gvt().time, 0);
    /// ```
    pub fn gvt(&self) -> EventKey {
        self.gvt
    }

    /// Runs to the end: steps the workers under `schedule`, computes GVT every
    /// [`WarpConfig::gvt_interval`] actions (and whenever nothing moves), commits through
    /// `commit`, until every event below the end time is committed.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, Schedule, WarpConfig};
    /// let mut e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig { end_time: 30, ..Default::default() }).unwrap();
    /// let out = e.run(Schedule::RoundRobin, |_| {}).unwrap();
    /// assert_eq!(out.efficiency(), 1.0); // one worker never receives a straggler from another
    /// ```
    pub fn run(
        &mut self,
        schedule: Schedule,
        mut commit: impl FnMut(&Committed<'_, M>),
    ) -> Result<RunOutcome, WarpError> {
        let workers = self.workers.len();
        let mut rng = match schedule {
            Schedule::RoundRobin => 0,
            Schedule::Seeded(seed) => seed ^ 0x5DEE_CE66_D1CE_4E5B,
        };
        let mut next = move || {
            rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = rng;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        let mut turn = 0usize;
        loop {
            let mut quiet = 0usize;
            for _ in 0..self.config.gvt_interval {
                let progressed = match schedule {
                    Schedule::RoundRobin => {
                        let w = turn % workers;
                        turn += 1;
                        let o = self.step(w)?;
                        self.flush(w) > 0 || o.progressed()
                    }
                    Schedule::Seeded(_) => {
                        let w = (next() % workers as u64) as usize;
                        let o = self.step(w)?;
                        let mut moved = 0;
                        for _ in 0..next() % 4 {
                            let from = (next() % workers as u64) as usize;
                            let len = self.outbox_len(from);
                            if len > 0 {
                                let i = if next() % 2 == 0 { 0 } else { (next() % len as u64) as usize };
                                moved += self.deliver(from, i) as usize;
                            }
                        }
                        moved > 0 || o.progressed()
                    }
                };
                self.actions += 1;
                if progressed {
                    quiet = 0;
                } else {
                    quiet += 1;
                    if quiet > 2 * workers {
                        break;
                    }
                }
            }
            let before = self.gvt;
            let committed = self.collect_dyn(EventKey::MAX, &mut commit)?;
            if self.gvt == EventKey::MAX {
                break;
            }
            if quiet > 2 * workers && committed == 0 && self.gvt == before {
                // Nothing moved for a while and GVT is stuck: give every worker a full turn with
                // in-order delivery before declaring the pools too small.
                let mut progressed = false;
                for w in 0..workers {
                    progressed |= self.flush(w) > 0;
                    progressed |= self.step(w)?.progressed();
                    progressed |= self.flush(w) > 0;
                }
                let committed = self.collect_dyn(EventKey::MAX, &mut commit)?;
                if self.gvt == EventKey::MAX {
                    break;
                }
                if !progressed && committed == 0 && self.gvt == before {
                    return Err(WarpError::Stalled { gvt: self.gvt });
                }
            }
        }
        Ok(self.outcome())
    }

    /// The totals so far.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.outcome().processed, 0);
    /// ```
    pub fn outcome(&self) -> RunOutcome {
        let mut o = RunOutcome {
            gvt_rounds: self.gvt_rounds,
            actions: self.actions,
            log_dropped: self.log.dropped,
            fallbacks: self.fallbacks,
            ..RunOutcome::default()
        };
        for w in &self.workers {
            o.blocked_steps += w.blocked_steps;
            for lp in &w.lps {
                let c = &lp.counters;
                o.committed += c.committed;
                o.processed += c.processed;
                o.rolled_back += c.rolled_back;
                o.antis_sent += c.antis_sent;
                o.redone += c.redone;
                o.late += c.late;
            }
        }
        o
    }

    fn lp(&self, lp: LpId) -> Option<&LpRun<M::State, M::Saved, M::Event>> {
        let p = self.place.get(lp.index())?;
        self.workers[p.worker as usize].lps.get(p.local as usize)
    }

    /// LP `lp`'s current state (speculative until everything is committed).
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, LpId, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.state(LpId(0)).unwrap().events, 0);
    /// ```
    pub fn state(&self, lp: LpId) -> Option<&M::State> {
        self.lp(lp).map(|l| &l.state)
    }

    /// LP `lp`'s counters.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, LpId, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig::default()).unwrap();
    /// assert_eq!(e.counters(LpId(0)).unwrap().committed, 0);
    /// ```
    pub fn counters(&self, lp: LpId) -> Option<LpCounters> {
        self.lp(lp).map(|l| l.counters)
    }

    /// Processed, uncommitted events LP `lp` holds now, and its capacity.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, LpId, WarpConfig};
    /// let e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig { history_per_lp: 8, ..Default::default() }).unwrap();
    /// assert_eq!(e.history(LpId(0)), Some((0, 8)));
    /// ```
    pub fn history(&self, lp: LpId) -> Option<(usize, usize)> {
        self.lp(lp).map(|l| (l.history.len(), l.history.capacity()))
    }

    /// The event log kept so far.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Engine, WarpConfig};
    /// let mut e = Engine::new(Phold::default().scenario(1, 1, 0), WarpConfig { log_capacity: 8, ..Default::default() }).unwrap();
    /// e.step(0).unwrap();
    /// assert_eq!(e.log().len(), 1);
    /// ```
    pub fn log(&self) -> &[LogRecord] {
        &self.log.records
    }
}
