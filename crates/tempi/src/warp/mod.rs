//! Speculative execution with rollback: a Time Warp engine over logical processes.
//!
//! Owns the model interface ([`Model`], [`Emit`]), the event identity and tie rule
//! ([`EventKey`]), the per-LP rollback choice ([`Rollback`]), the scenario and capacities
//! ([`Scenario`], [`WarpConfig`]), the optimistic engine ([`Engine`]) with its workers, inboxes,
//! GVT, fossil collection and commit, the reference runs ([`sequential`], [`check`]), the PHOLD
//! benchmark model ([`phold`]), the engine on a runtime's CPUs ([`Engine::spawn_on`],
//! [`Parallel`], [`ParallelSpec`]) with commit deadlines and their reactive fallbacks
//! ([`DeadlineSpec`], [`Model::commit_deadline`]), the per-LP report ([`WarpReport`]) and the
//! errors ([`WarpError`]). It sits on top of the crate and uses only the runtime's public calls:
//! the kernel and the policies must not import it, and it must not reach into them.
//!
//! # The protocol as built
//!
//! - **Logical processes.** An LP is explicit state (`M::State`) plus an event handler,
//!   [`Model::event`]. A coroutine stack cannot be copied, so speculation works on data.
//! - **Rollback per LP** ([`Rollback`]): *state saving* clones the state into a preallocated
//!   ring before each event (restoring is a swap), *reverse* runs [`Model::reverse`] with the
//!   per-event scratch (`M::Saved`) the forward pass filled, and *never rollback* LPs are
//!   conservative: they only process an event once it is at or below GVT, so they never see
//!   work that could be undone.
//! - **Random draws** come from [`Emit::random_u64`], a counter-based stream (splitmix64 over
//!   the seed, the LP and a draw index). Rolling back restores the index, so a re-executed event
//!   draws the same numbers.
//! - **Timestamps** are `u64` ticks of the model's own unit. An emitted event is stamped at
//!   least `now + lookahead` ([`WarpConfig::lookahead`], 0 allowed).
//! - **Tie rule.** Events are ordered by [`EventKey`]: (timestamp, depth, sender LP, sender's
//!   send sequence), where depth counts zero-delay generations at one timestamp. The key is
//!   computed from data that rollback restores, so every event gets the same key in every run,
//!   and results never depend on delivery order; a child is always strictly after its parent,
//!   even with lookahead 0.
//! - **Stragglers and cancellation.** An event arriving below an LP's last processed event rolls
//!   that LP back to before it; every undone event's sent messages are cancelled by
//!   anti-messages (aggressive cancellation), and the LP re-executes. An anti-message
//!   annihilates its unprocessed message, rolls back a processed one, or, arriving first, waits
//!   for its message and annihilates it on arrival.
//! - **GVT, fossils, commit.** GVT is the least key of all unprocessed events, messages and
//!   anti-messages in flight, and unfinished rollbacks. Processed events below GVT are final:
//!   the commit callback gets each exactly once, per LP in key order, with what it sent, and
//!   its memory is reused. The commit callback is the only way out of the engine.
//! - **Bounded memory.** Every pool is sized up front by [`WarpConfig`]; when an LP's history,
//!   the event pool or the outbox is full, the worker stops running ahead until GVT frees room.
//!   Nothing allocates after [`Engine::new`] for models whose state and events do not allocate.
//!
//! ```
//! use tempi::warp::{self, phold::Phold, Engine, Schedule, Scenario, WarpConfig};
//!
//! let model = Phold { lps: 8, remote_fraction: 0.5, lookahead: 1, mean_delay: 4 };
//! let scenario = model.scenario(2, 2, 7); // population 2 per LP, 2 workers, seed 7
//! let config = WarpConfig { workers: 2, end_time: 200, ..WarpConfig::default() };
//!
//! let mut reference = Vec::new();
//! let seq = warp::sequential(&scenario, &config, |c| reference.push((c.lp, c.key))).unwrap();
//!
//! let mut engine = Engine::new(scenario, config).unwrap();
//! let mut optimistic = Vec::new();
//! let out = engine.run(Schedule::Seeded(1), |c| optimistic.push((c.lp, c.key))).unwrap();
//! optimistic.sort();
//! reference.sort();
//! assert_eq!(optimistic, reference);
//! assert_eq!(out.committed, seq.committed);
//! ```

mod deadline;
mod engine;
mod heap;
mod parallel;
pub mod phold;
mod report;
mod ring;
mod sequential;

pub use engine::{Driver, Engine, LogRecord, LpCounters, RunOutcome, Schedule, StepOutcome};
pub use parallel::{DeadlineSpec, Fallback, FallbackFn, Parallel, ParallelSpec};
pub use report::{LpReport, WarpReport};
pub use sequential::{check, sequential, CheckReport, SequentialOutcome};

use std::fmt;

/// The index of a logical process in its [`Scenario`].
///
/// ```
/// let lp = tempi::warp::LpId(3);
/// assert_eq!(lp.index(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LpId(pub u32);

impl LpId {
    /// The sender of events scheduled from outside the model ([`Scenario::schedule`]).
    ///
    /// ```
    /// assert_eq!(tempi::warp::LpId::OUTSIDE.0, u32::MAX);
    /// ```
    pub const OUTSIDE: LpId = LpId(u32::MAX);

    /// The LP's position in the scenario, as a `usize`.
    ///
    /// ```
    /// assert_eq!(tempi::warp::LpId(7).index(), 7);
    /// ```
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// An event's identity and place in the total order: compared field by field, timestamp first.
///
/// - `time`: the virtual timestamp, in ticks;
/// - `depth`: 0 when the event is later than its parent, otherwise the parent's depth plus one
///   (a chain of zero-delay events at one timestamp runs in causal order);
/// - `sender`: the LP whose event emitted it ([`LpId::OUTSIDE`] for scheduled ones);
/// - `seq`: the sender's count of events sent before it (restored by rollback).
///
/// `(sender, seq)` is unique, so no two events share a key.
///
/// ```
/// use tempi::warp::{EventKey, LpId};
/// let a = EventKey { time: 5, depth: 0, sender: LpId(2), seq: 9 };
/// let b = EventKey { time: 5, depth: 0, sender: LpId(3), seq: 0 };
/// assert!(a < b); // equal timestamps: the lower sender first
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// Virtual timestamp in ticks.
    pub time: u64,
    /// Zero-delay generation at this timestamp.
    pub depth: u32,
    /// The LP that sent the event.
    pub sender: LpId,
    /// The sender's send sequence number.
    pub seq: u64,
}

impl EventKey {
    /// Above every real key: the GVT when nothing is left to do.
    ///
    /// ```
    /// use tempi::warp::EventKey;
    /// assert!(EventKey { time: u64::MAX - 1, depth: 0, sender: tempi::warp::LpId(0), seq: 0 } < EventKey::MAX);
    /// ```
    pub const MAX: EventKey = EventKey { time: u64::MAX, depth: u32::MAX, sender: LpId(u32::MAX), seq: u64::MAX };

    /// The key of a child event sent at `time` by `sender` (its `seq`-th send) while this
    /// event is processed.
    ///
    /// ```
    /// use tempi::warp::{EventKey, LpId};
    /// let parent = EventKey { time: 4, depth: 0, sender: LpId(0), seq: 0 };
    /// let same = parent.child(4, LpId(1), 0);
    /// assert_eq!(same.depth, 1);
    /// assert!(same > parent);
    /// assert_eq!(parent.child(6, LpId(1), 1).depth, 0);
    /// ```
    pub fn child(&self, time: u64, sender: LpId, seq: u64) -> EventKey {
        let depth = if time == self.time { self.depth.saturating_add(1) } else { 0 };
        EventKey { time, depth, sender, seq }
    }
}

impl fmt::Display for EventKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sender = if self.sender == LpId::OUTSIDE { "out".to_string() } else { self.sender.0.to_string() };
        write!(f, "{}.{}@{}#{}", self.time, self.depth, sender, self.seq)
    }
}

/// How an LP undoes an event.
///
/// ```
/// use tempi::warp::Rollback;
/// assert_ne!(Rollback::StateSaving, Rollback::NeverRollback);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rollback {
    /// The state is cloned into the LP's history before each event.
    StateSaving,
    /// [`Model::reverse`] undoes each event from its scratch ([`Model::HAS_REVERSE`] must hold).
    Reverse,
    /// Conservative: events are processed only at or below GVT, never undone.
    NeverRollback,
}

/// A message one event sent: where, and its key.
///
/// ```
/// use tempi::warp::{EventKey, LpId, Sent};
/// let s = Sent { to: LpId(1), key: EventKey { time: 3, depth: 0, sender: LpId(0), seq: 0 } };
/// assert_eq!(s.key.time, 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Sent {
    /// The receiving LP.
    pub to: LpId,
    /// The message's key.
    pub key: EventKey,
}

/// A model: the LPs' event handlers over explicit state.
///
/// One model serves every LP type; an LP's type is whatever the model reads from its state or
/// its id. Handlers must be deterministic functions of their inputs (state, event, scratch and
/// the draws from [`Emit`]); that is what makes re-execution reproduce the reference.
///
/// ```
/// use tempi::warp::{Emit, LpId, Model};
///
/// /// Each LP counts events and forwards each to its right neighbour 2 ticks later.
/// struct Ring { lps: u32 }
/// impl Model for Ring {
///     type State = u64;
///     type Event = ();
///     type Saved = ();
///     const HAS_REVERSE: bool = true;
///     fn event(&self, lp: LpId, count: &mut u64, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
///         *count += 1;
///         out.send(LpId((lp.0 + 1) % self.lps), out.time() + 2, ());
///     }
///     fn reverse(&self, _: LpId, count: &mut u64, _: &(), _: &()) {
///         *count -= 1;
///     }
/// }
/// ```
pub trait Model {
    /// One LP's state.
    type State: Clone;
    /// An event's payload.
    type Event: Clone;
    /// What the forward pass remembers for its reverse handler and its commit (reset to
    /// `Default` before each event).
    type Saved: Default + Clone;
    /// Whether [`Model::reverse`] is written; LPs may choose [`Rollback::Reverse`] only if so.
    const HAS_REVERSE: bool = false;

    /// Processes `event` at LP `lp`: updates `state`, fills `saved`, sends through `out`.
    fn event(
        &self,
        lp: LpId,
        state: &mut Self::State,
        event: &Self::Event,
        saved: &mut Self::Saved,
        out: &mut Emit<'_, Self::Event>,
    );

    /// Undoes [`Model::event`] exactly, from the scratch it filled. Sent messages and random
    /// draws are undone by the engine. The default does nothing (models without reverse
    /// handlers use state saving).
    fn reverse(&self, lp: LpId, state: &mut Self::State, event: &Self::Event, saved: &Self::Saved) {
        let _ = (lp, state, event, saved);
    }

    /// The instant, on the runtime's clock (time since the run started), by which the event
    /// `key` for `lp` must be committed, or `None` (the default) for no deadline. Used only by
    /// an engine on a runtime with [`ParallelSpec::deadlines`]: an event still uncommitted at
    /// its deadline is dropped and the fallback runs for it on a reactive thread.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use tempi::warp::{Emit, EventKey, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = (); type Event = (); type Saved = ();
    /// # fn event(&self, _: LpId, _: &mut (), _: &(), _: &mut (), _: &mut Emit<'_, ()>) {}
    /// /// The model keeps pace with real time: tick t is due 10 us per tick after the start.
    /// fn commit_deadline(&self, _: LpId, key: &EventKey, _: &()) -> Option<Duration> {
    ///     Some(Duration::from_micros(10 * key.time))
    /// }
    /// # }
    /// ```
    /// Whether two payloads are the same message, for lazy cancellation
    /// ([`WarpConfig::lazy_cancellation`]): a re-execution that sends the same receiver, key
    /// and payload re-uses the message sent before instead of cancelling it. The default,
    /// `false`, makes lazy cancellation cancel everything (later than aggressive would).
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = (); type Event = u32; type Saved = ();
    /// # fn event(&self, _: LpId, _: &mut (), _: &u32, _: &mut (), _: &mut Emit<'_, u32>) {}
    /// fn same_event(&self, a: &u32, b: &u32) -> bool {
    ///     a == b
    /// }
    /// # }
    /// ```
    fn same_event(&self, a: &Self::Event, b: &Self::Event) -> bool {
        let _ = (a, b);
        false
    }

    fn commit_deadline(&self, lp: LpId, key: &EventKey, event: &Self::Event) -> Option<std::time::Duration> {
        let _ = (lp, key, event);
        None
    }
}

/// One LP's declaration: initial state, rollback choice, owning worker.
///
/// ```
/// use tempi::warp::{LpSpec, Rollback};
/// let spec = LpSpec { state: 0u64, rollback: Rollback::StateSaving, worker: 0 };
/// assert_eq!(spec.worker, 0);
/// ```
#[derive(Clone, Debug)]
pub struct LpSpec<S> {
    /// The state before the first event.
    pub state: S,
    /// How the LP undoes events.
    pub rollback: Rollback,
    /// The worker (CPU) that owns it.
    pub worker: usize,
}

/// A model, its LPs and the events scheduled before the run.
///
/// ```
/// use tempi::warp::{phold::Phold, LpId, Scenario, LpSpec, Rollback};
/// let model = Phold { lps: 2, remote_fraction: 0.0, lookahead: 1, mean_delay: 2 };
/// let mut s = Scenario::new(model);
/// let a = s.add_lp(LpSpec { state: Default::default(), rollback: Rollback::Reverse, worker: 0 });
/// s.schedule(a, 0, Default::default()).unwrap();
/// assert_eq!(s.lps().len(), 1);
/// assert!(s.schedule(LpId(5), 0, Default::default()).is_err());
/// ```
pub struct Scenario<M: Model> {
    /// The model.
    pub model: M,
    lps: Vec<LpSpec<M::State>>,
    initial: Vec<(LpId, EventKey, M::Event)>,
}

impl<M: Model> Scenario<M> {
    /// An empty scenario over `model`.
    ///
    /// ```
    /// let s = tempi::warp::Scenario::new(tempi::warp::phold::Phold::default());
    /// assert!(s.lps().is_empty());
    /// ```
    pub fn new(model: M) -> Self {
        Scenario { model, lps: Vec::new(), initial: Vec::new() }
    }

    /// Declares the next LP and returns its id.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, LpId, LpSpec, Rollback, Scenario};
    /// let mut s = Scenario::new(Phold::default());
    /// let id = s.add_lp(LpSpec { state: Default::default(), rollback: Rollback::StateSaving, worker: 0 });
    /// assert_eq!(id, LpId(0));
    /// ```
    pub fn add_lp(&mut self, spec: LpSpec<M::State>) -> LpId {
        self.lps.push(spec);
        LpId(self.lps.len() as u32 - 1)
    }

    /// Schedules an event from outside at `time`; its key is `(time, 0, OUTSIDE, n)` for the
    /// `n`-th scheduled event.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, LpId, LpSpec, Rollback, Scenario};
    /// let mut s = Scenario::new(Phold::default());
    /// let id = s.add_lp(LpSpec { state: Default::default(), rollback: Rollback::StateSaving, worker: 0 });
    /// let key = s.schedule(id, 10, Default::default()).unwrap();
    /// assert_eq!((key.time, key.seq), (10, 0));
    /// ```
    pub fn schedule(&mut self, to: LpId, time: u64, event: M::Event) -> Result<EventKey, WarpError> {
        if to.index() >= self.lps.len() {
            return Err(WarpError::NoSuchLp { lp: to, lps: self.lps.len() });
        }
        let key = EventKey { time, depth: 0, sender: LpId::OUTSIDE, seq: self.initial.len() as u64 };
        self.initial.push((to, key, event));
        Ok(key)
    }

    /// The declared LPs.
    ///
    /// ```
    /// let s = tempi::warp::Scenario::new(tempi::warp::phold::Phold::default());
    /// assert_eq!(s.lps().len(), 0);
    /// ```
    pub fn lps(&self) -> &[LpSpec<M::State>] {
        &self.lps
    }

    /// The scheduled events with their keys.
    ///
    /// ```
    /// let s = tempi::warp::Scenario::new(tempi::warp::phold::Phold::default());
    /// assert!(s.initial_events().is_empty());
    /// ```
    pub fn initial_events(&self) -> &[(LpId, EventKey, M::Event)] {
        &self.initial
    }
}

/// Capacities and parameters of a run; [`Engine::new`] checks them.
///
/// ```
/// let c = tempi::warp::WarpConfig { workers: 2, end_time: 1_000, ..Default::default() };
/// assert!(c.validate().is_ok());
/// assert!(tempi::warp::WarpConfig { history_per_lp: 0, ..c }.validate().is_err());
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct WarpConfig {
    /// Workers (one per CPU later); each LP names its own.
    pub workers: usize,
    /// Processed, uncommitted events an LP may hold (its history ring).
    pub history_per_lp: usize,
    /// Event slots per worker: unprocessed and processed-uncommitted events of its LPs, and
    /// anti-messages waiting for their message. Speculative work leaves `inbox_capacity` of
    /// them free, so it must exceed `inbox_capacity + max_sends_per_event`.
    pub events_per_worker: usize,
    /// Most messages one event may send.
    pub max_sends_per_event: usize,
    /// Messages and anti-messages a worker may have waiting for delivery.
    pub outbox_capacity: usize,
    /// Messages a worker's inbox holds.
    pub inbox_capacity: usize,
    /// Least distance, in ticks, from an event to what it sends (0 allowed).
    pub lookahead: u64,
    /// Events stamped at or after this are not processed.
    pub end_time: u64,
    /// Seed of the LPs' random streams.
    pub seed: u64,
    /// Driver actions between GVT computations.
    pub gvt_interval: usize,
    /// Records kept in the event log (0: no log); later records are counted, not kept.
    pub log_capacity: usize,
    /// Lazy cancellation: an undone event's messages are kept until it is executed again, and
    /// only those it does not send again (same receiver, key and, by [`Model::same_event`],
    /// payload) are cancelled. Off: aggressive cancellation, every message cancelled at once.
    pub lazy_cancellation: bool,
}

impl Default for WarpConfig {
    fn default() -> Self {
        WarpConfig {
            workers: 1,
            history_per_lp: 64,
            events_per_worker: 4096,
            max_sends_per_event: 4,
            outbox_capacity: 1024,
            inbox_capacity: 1024,
            lookahead: 1,
            end_time: u64::MAX,
            seed: 0,
            gvt_interval: 16,
            log_capacity: 0,
            lazy_cancellation: false,
        }
    }
}

impl WarpConfig {
    /// Checks that the capacities can work together.
    ///
    /// ```
    /// let c = tempi::warp::WarpConfig { outbox_capacity: 1, max_sends_per_event: 2, ..Default::default() };
    /// assert!(c.validate().is_err());
    /// ```
    pub fn validate(&self) -> Result<(), WarpError> {
        let bad = |what| Err(WarpError::BadConfig { what });
        if self.workers == 0 {
            return bad("workers must be at least 1");
        }
        if self.history_per_lp == 0 {
            return bad("history_per_lp must be at least 1");
        }
        if self.max_sends_per_event == 0 {
            return bad("max_sends_per_event must be at least 1");
        }
        if self.events_per_worker <= self.max_sends_per_event + self.inbox_capacity {
            // Speculative work keeps an inbox's worth of slots free for arriving messages.
            return bad("events_per_worker must exceed max_sends_per_event + inbox_capacity");
        }
        if self.events_per_worker > u32::MAX as usize / 2 {
            return bad("events_per_worker too large");
        }
        if self.outbox_capacity < self.max_sends_per_event {
            return bad("outbox_capacity must be at least max_sends_per_event");
        }
        if self.inbox_capacity == 0 {
            return bad("inbox_capacity must be at least 1");
        }
        if self.gvt_interval == 0 {
            return bad("gvt_interval must be at least 1");
        }
        if self.history_per_lp.checked_mul(self.max_sends_per_event).is_none() {
            return bad("history_per_lp * max_sends_per_event overflows");
        }
        Ok(())
    }
}

/// What an event handler may do besides changing its state: read the clock, send, draw.
///
/// ```
/// use tempi::warp::{Emit, LpId, Model};
/// struct Once;
/// impl Model for Once {
///     type State = Vec<u64>;
///     type Event = u64;
///     type Saved = ();
///     fn event(&self, lp: LpId, seen: &mut Vec<u64>, ev: &u64, _: &mut (), out: &mut Emit<'_, u64>) {
///         seen.push(out.random_below(100));
///         if *ev > 0 {
///             out.send(lp, out.time() + 1, ev - 1);
///         }
///     }
/// }
/// ```
pub struct Emit<'a, E> {
    key: EventKey,
    lp: LpId,
    lookahead: u64,
    lps: usize,
    seed: u64,
    max_sends: usize,
    rng_index: &'a mut u64,
    send_seq: &'a mut u64,
    sends: &'a mut Vec<(LpId, EventKey, E)>,
    error: &'a mut Option<SendError>,
}

/// Why a send was refused. The event that tried it fails the run when it commits (a send from
/// speculative work that is later undone is forgotten).
///
/// ```
/// use tempi::warp::SendError;
/// assert_ne!(SendError::BeforeLookahead { time: 1, earliest: 2 }, SendError::TooMany { max: 4 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SendError {
    /// The timestamp is earlier than `now + lookahead`.
    BeforeLookahead {
        /// The timestamp asked for.
        time: u64,
        /// The earliest allowed.
        earliest: u64,
    },
    /// The receiver does not exist.
    NoSuchLp {
        /// The receiver named.
        lp: LpId,
    },
    /// More than [`WarpConfig::max_sends_per_event`] sends from one event.
    TooMany {
        /// The limit.
        max: usize,
    },
}

impl<'a, E> Emit<'a, E> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        key: EventKey,
        lp: LpId,
        config: &WarpConfig,
        lps: usize,
        rng_index: &'a mut u64,
        send_seq: &'a mut u64,
        sends: &'a mut Vec<(LpId, EventKey, E)>,
        error: &'a mut Option<SendError>,
    ) -> Self {
        Emit {
            key,
            lp,
            lookahead: config.lookahead,
            lps,
            seed: config.seed,
            max_sends: config.max_sends_per_event,
            rng_index,
            send_seq,
            sends,
            error,
        }
    }

    /// The event's timestamp.
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = u64; type Event = (); type Saved = ();
    /// fn event(&self, _: LpId, last: &mut u64, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
    ///     *last = out.time();
    /// }
    /// # }
    /// ```
    pub fn time(&self) -> u64 {
        self.key.time
    }

    /// The event's full key.
    ///
    /// ```
    /// # use tempi::warp::{Emit, EventKey, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = Option<EventKey>; type Event = (); type Saved = ();
    /// fn event(&self, _: LpId, last: &mut Option<EventKey>, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
    ///     *last = Some(out.key());
    /// }
    /// # }
    /// ```
    pub fn key(&self) -> EventKey {
        self.key
    }

    /// The LP processing the event.
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = u32; type Event = (); type Saved = ();
    /// fn event(&self, _: LpId, me: &mut u32, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
    ///     *me = out.lp().0;
    /// }
    /// # }
    /// ```
    pub fn lp(&self) -> LpId {
        self.lp
    }

    /// Sends `event` to `to` at `time` (at least `now + lookahead`) and returns its key. A
    /// refused send returns `None` and fails the run if this event commits.
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = (); type Event = u8; type Saved = ();
    /// fn event(&self, lp: LpId, _: &mut (), hops: &u8, _: &mut (), out: &mut Emit<'_, u8>) {
    ///     if *hops > 0 {
    ///         out.send(lp, out.time() + 3, hops - 1);
    ///     }
    /// }
    /// # }
    /// ```
    pub fn send(&mut self, to: LpId, time: u64, event: E) -> Option<EventKey> {
        let earliest = self.key.time.saturating_add(self.lookahead);
        let refused = if time < earliest {
            Some(SendError::BeforeLookahead { time, earliest })
        } else if to.index() >= self.lps {
            Some(SendError::NoSuchLp { lp: to })
        } else if self.sends.len() >= self.max_sends {
            Some(SendError::TooMany { max: self.max_sends })
        } else {
            None
        };
        if let Some(e) = refused {
            self.error.get_or_insert(e);
            return None;
        }
        let key = self.key.child(time, self.lp, *self.send_seq);
        *self.send_seq += 1;
        self.sends.push((to, key, event));
        Some(key)
    }

    /// The next draw of this LP's random stream; undone with the event.
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = u64; type Event = (); type Saved = ();
    /// fn event(&self, _: LpId, x: &mut u64, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
    ///     *x ^= out.random_u64();
    /// }
    /// # }
    /// ```
    pub fn random_u64(&mut self) -> u64 {
        let x = stream_draw(self.seed, self.lp, *self.rng_index);
        *self.rng_index += 1;
        x
    }

    /// A draw uniform in `[0, 1)`.
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = f64; type Event = (); type Saved = ();
    /// fn event(&self, _: LpId, x: &mut f64, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
    ///     *x = out.random_f64();
    ///     assert!((0.0..1.0).contains(x));
    /// }
    /// # }
    /// ```
    pub fn random_f64(&mut self) -> f64 {
        (self.random_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A draw uniform in `[0, n)` (0 when `n` is 0).
    ///
    /// ```
    /// # use tempi::warp::{Emit, LpId, Model};
    /// # struct M;
    /// # impl Model for M { type State = u64; type Event = (); type Saved = ();
    /// fn event(&self, _: LpId, x: &mut u64, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
    ///     *x = out.random_below(6) + 1; // a die
    /// }
    /// # }
    /// ```
    pub fn random_below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        ((self.random_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// Draw `index` of LP `lp`'s stream under `seed`: splitmix64's finalizer over a counter, so a
/// draw depends only on its position and rollback only has to restore the index.
fn stream_draw(seed: u64, lp: LpId, index: u64) -> u64 {
    let mut z = seed
        .wrapping_add((lp.0 as u64 + 1).wrapping_mul(0xD1B5_4A32_D192_ED03))
        .wrapping_add(index.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One committed event, as the commit callback sees it: final, never undone.
///
/// ```
/// use tempi::warp::{phold::Phold, Committed};
/// fn show(c: &Committed<'_, Phold>) -> String {
///     format!("LP {} at {} sent {}", c.lp.0, c.key.time, c.sent.len())
/// }
/// ```
pub struct Committed<'a, M: Model> {
    /// The LP that processed it.
    pub lp: LpId,
    /// Its key.
    pub key: EventKey,
    /// Its payload.
    pub event: &'a M::Event,
    /// The scratch its forward pass filled (the place for output data).
    pub saved: &'a M::Saved,
    /// What it sent, in send order.
    pub sent: &'a [Sent],
    /// Committed after its commit deadline ([`Model::commit_deadline`]) had passed: the
    /// result is dropped, a fallback ran in its place at the deadline. Always `false` without
    /// deadlines.
    pub late: bool,
}

/// Why a warp run or check failed.
///
/// ```
/// let e = tempi::warp::WarpError::BadConfig { what: "workers must be at least 1" };
/// assert!(e.to_string().contains("workers"));
/// ```
#[derive(Clone, Debug, PartialEq)]
pub enum WarpError {
    /// A capacity or parameter is unusable.
    BadConfig {
        /// What is wrong.
        what: &'static str,
    },
    /// An LP id is out of range.
    NoSuchLp {
        /// The id.
        lp: LpId,
        /// How many LPs the scenario has.
        lps: usize,
    },
    /// An LP names a worker the configuration does not have.
    NoSuchWorker {
        /// The LP.
        lp: LpId,
        /// Its worker.
        worker: usize,
    },
    /// An LP asks for [`Rollback::Reverse`] but the model has no reverse handler.
    NoReverseHandler {
        /// The LP.
        lp: LpId,
    },
    /// More scheduled events for one worker than its event pool holds.
    PoolTooSmall {
        /// The worker.
        worker: usize,
        /// Events it must hold at the start.
        needed: usize,
    },
    /// A committed event's send was refused.
    Send {
        /// The sending LP.
        lp: LpId,
        /// The event.
        key: EventKey,
        /// Why.
        error: SendError,
    },
    /// No worker could make progress and GVT did not move: the pools are too small for the
    /// model's event population.
    Stalled {
        /// The GVT at which it stopped.
        gvt: EventKey,
    },
    /// The check mode found an event its reverse handler does not undo.
    ReverseMismatch {
        /// The LP.
        lp: LpId,
        /// The event (its timestamp is `key.time`).
        key: EventKey,
        /// `"reverse"`: the state after forward + reverse differs from before;
        /// `"redo"`: forward again differs from the first forward.
        stage: &'static str,
    },
    /// A worker thread could not be created on the runtime.
    Runtime {
        /// The runtime's error.
        what: String,
    },
    /// The runtime's run ended before the engine's workers did (a horizon before the end of
    /// the model, a killed worker, a run never made).
    Unfinished,
    /// A broken engine invariant (a bug, reported instead of a panic).
    Internal {
        /// What broke.
        what: &'static str,
    },
}

impl fmt::Display for WarpError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WarpError::BadConfig { what } => write!(f, "bad warp configuration: {what}"),
            WarpError::NoSuchLp { lp, lps } => write!(f, "LP {} does not exist ({lps} LPs)", lp.0),
            WarpError::NoSuchWorker { lp, worker } => {
                write!(f, "LP {} names worker {worker}, which does not exist", lp.0)
            }
            WarpError::NoReverseHandler { lp } => {
                write!(f, "LP {} uses reverse computation but the model has no reverse handler", lp.0)
            }
            WarpError::PoolTooSmall { worker, needed } => {
                write!(f, "worker {worker} must hold {needed} scheduled events: events_per_worker too small")
            }
            WarpError::Send { lp, key, error } => write!(f, "LP {} event {key}: send refused: {error:?}", lp.0),
            WarpError::Stalled { gvt } => write!(f, "no progress possible at GVT {gvt}: event pools too small"),
            WarpError::ReverseMismatch { lp, key, stage } => {
                write!(f, "LP {} event {key} (time {}): reverse handler check failed at {stage}", lp.0, key.time)
            }
            WarpError::Runtime { what } => write!(f, "cannot start a warp worker: {what}"),
            WarpError::Unfinished => write!(f, "the run ended before the warp workers finished"),
            WarpError::Internal { what } => write!(f, "warp engine invariant broken: {what}"),
        }
    }
}

impl std::error::Error for WarpError {}

/// Checks a scenario against a configuration (shared by every mode).
fn validate_scenario<M: Model>(scenario: &Scenario<M>, config: &WarpConfig) -> Result<(), WarpError> {
    config.validate()?;
    if scenario.lps.len() >= u32::MAX as usize {
        return Err(WarpError::BadConfig { what: "too many LPs" });
    }
    for (i, lp) in scenario.lps.iter().enumerate() {
        let id = LpId(i as u32);
        if lp.worker >= config.workers {
            return Err(WarpError::NoSuchWorker { lp: id, worker: lp.worker });
        }
        if lp.rollback == Rollback::Reverse && !M::HAS_REVERSE {
            return Err(WarpError::NoReverseHandler { lp: id });
        }
    }
    Ok(())
}
