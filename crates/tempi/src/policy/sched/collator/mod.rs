//! Several schedulers on one CPU: the [`Collator`], which divides the CPU between a guaranteed
//! part (admission-controlled EDF) and any number of other [`Scheduler`]s by the guaranteed
//! jobs' laxity, as PORTS proposed.
//!
//! Owns the collator's data (its children, the admission engine of the guaranteed part, the
//! slack claims) and its hooks (`hooks.rs`). It sees threads only through [`SchedInfo`] and
//! its children only through the [`Scheduler`] trait; it must not reach into the kernel or
//! into the admission engine's internals.
//!
//! # The parts
//!
//! - The **guaranteed part**: an [`Edf`] queue over jobs that hold a *reservation* in a
//!   [`TreeEngine`]. A job becomes ready with a deadline and a declared WCET; its remaining
//!   WCET (`wcet − job_cpu_time`) is admitted at that instant if it fits in the idle time
//!   before its deadline *after* the slack the other children claim (see below). An admitted
//!   job is charged the CPU time it runs; it is guaranteed its deadline.
//! - The **children**, in rank order (index 0 first): any [`Scheduler`]s, each with its own
//!   ready queue. The last child also receives every job the guaranteed part refused and
//!   every guaranteed job that overran its WCET; that is the negative acknowledgement.
//! - A **classifier** `Fn(&SchedInfo) -> Party` puts each thread, whenever it becomes ready,
//!   in the guaranteed part or in a child. [`Collator::standard`] classifies by attributes:
//!   a positive priority puts it in the reactive fixed-priority child, else a deadline and
//!   a WCET make it guaranteed, and anything else is best effort.
//!
//! # Slack
//!
//! The *slack* is the minimum laxity of the jobs holding a reservation: how long the CPU can
//! do something else before some guaranteed job could no longer finish by its deadline under
//! EDF. While a guaranteed job is ready, the children run **first** (stealing the slack), in
//! rank order, each with a time slice that ends when its share of the slack does; then the
//! guaranteed part runs until the slack grows again (a job ends, blocks or gives back time).
//! While no guaranteed job is ready the children run freely, with their own time slices.
//!
//! Slack is divided into *claims*: [`Collator::transfer`] moves an amount of laxity from the
//! guaranteed part (its unclaimed slack) to a child, back, or between children. A child may
//! steal its own claim plus the unclaimed slack, never another child's claim; a claim also
//! limits admission (a new job is admitted only if every claim still fits afterwards). The
//! invariant, checked by the tests after every hook and transfer: **slack ≥ sum of claims ≥
//! 0**, so no admitted job's laxity is ever below zero.
//!
//! # Hooks
//!
//! | hook | what the collator does |
//! |---|---|
//! | `on_ready`, `on_yield` | charges a guaranteed job the CPU time it ran; classifies the thread and queues it in its part; a guaranteed job without a reservation for this job waits for the next `pick_next`, the first hook that knows the time, to be admitted |
//! | `on_blocked` | charges and ends the reservation (the kernel shows job end and suspension alike); a job woken later in the same job is admitted afresh |
//! | `on_removed` | ends any reservation and unqueues the thread from its part |
//! | `should_preempt` | an arrival awaiting admission, or a guaranteed arrival while a child runs, preempts (the slack changed); a child preempts a guaranteed job if it may steal now; between children the higher rank preempts, within one the child decides |
//! | `pick_next` | settles what the last steal used, expires past entries, admits the arrivals, then picks: children in rank order while they may steal, else EDF, else children freely |
//! | `time_slice` | a stealing child: the smaller of its share of the slack and its own slice; a guaranteed job: what its reservation has left (WCET enforcement: when it runs out, the job goes on in the last child) |
//! | `on_urgency_changed` | passed to the part holding the thread |
//! | `base_urgency` | the urgency of the part the classifier picks (deadline order for guaranteed jobs) |
//!
//! # Assumptions (what the guarantee rests on)
//!
//! - A guaranteed job's WCET covers its own work and the context switches plain EDF would
//!   cost it. The switches the collator adds (a child steals, then a guaranteed job is
//!   dispatched) are its own business if [`Collator::with_switch_cost`] is at least the
//!   kernel's context-switch cost (zero by default in virtual time): each steal keeps that
//!   much slack back, taken from its child's claim first, and the switch back is not
//!   charged to the job.
//! - The kernel keeps per-thread CPU time (`Accounting::Thread` or `Group`, the default):
//!   charges come from `job_cpu_time`.
//! - A guaranteed job does not share locks with children: urgency inheritance works inside a
//!   part, not across parts.
//! - A guaranteed job that blocks loses its reservation, since suspension is not covered by
//!   EDF analysis; it is admitted again when it wakes, or runs in the last child.
//! - The guarantee is per admitted job (as in PORTS): a periodic thread's next job is
//!   admitted at its release, and may be refused if the slack was stolen meanwhile.
//! - Real time: slices end by timers, so timer latency must be covered by the switch cost.
//!
//! # Memory
//!
//! Everything is sized at construction ([`Collator::with_capacity`]); hooks do not allocate
//! unless a thread index or the number of reservations passes that capacity.
//!
//! ```
//! use std::time::Duration;
//! use tempi::policy::sched::{Collator, Scheduler};
//! use tempi::{Runtime, ThreadSpec, Time};
//! let ms = Duration::from_millis;
//! let mut rt = Runtime::simulated(1);
//! rt.set_scheduler(|| Box::new(Collator::standard()));
//! // Guaranteed: 2 ms of work due at 5 ms. Best effort: 4 ms of work.
//! rt.spawn(ThreadSpec::new("g").wcet(ms(2)).deadline(ms(5)), move |cx| cx.work(ms(2))).unwrap();
//! rt.spawn(ThreadSpec::new("be"), move |cx| cx.work(ms(4))).unwrap();
//! let out = rt.run().unwrap();
//! // The best-effort thread stole the 3 ms of slack first; the guaranteed job still met 5 ms.
//! assert_eq!(out.total_misses(), 0);
//! assert_eq!(out.end, Time::from_millis(6));
//! ```

mod hooks;

use std::fmt;
use std::time::Duration;

use super::{Edf, Fifo, FixedPriority, ReadyReason, SchedInfo, Scheduler};
use crate::plain::ThreadId;
use crate::policy::admit::{AdmissionEngine, AdmitId, TreeEngine};
use crate::time::Time;

/// A part of the collator: the guaranteed part or a child by rank.
///
/// ```
/// use tempi::policy::sched::Party;
/// assert_ne!(Party::Guaranteed, Party::Child(0));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Party {
    /// The admission-controlled EDF part.
    Guaranteed,
    /// The child at this rank (0 is the first to steal).
    Child(usize),
}

/// Puts a thread in a part whenever it becomes ready.
///
/// ```
/// use tempi::policy::sched::{Classifier, Party};
/// let by_priority: Classifier = Box::new(|t| if t.priority > 0 { Party::Child(0) } else { Party::Child(1) });
/// # let _ = by_priority;
/// ```
pub type Classifier = Box<dyn Fn(&SchedInfo) -> Party>;

/// Why a collator could not be built or a transfer refused.
///
/// ```
/// use tempi::policy::sched::{Collator, CollatorError, Party};
/// let r = Collator::new(Box::new(|_| Party::Guaranteed), Vec::new());
/// assert_eq!(r.err(), Some(CollatorError::NoChild));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollatorError {
    /// A collator needs at least one child: the last one takes refused jobs.
    NoChild,
    /// No child has this rank.
    NoSuchChild(usize),
    /// The source has less laxity to give than asked.
    Insufficient {
        /// What the source could give.
        available: Duration,
    },
}

impl fmt::Display for CollatorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CollatorError::NoChild => write!(f, "a collator needs at least one child scheduler"),
            CollatorError::NoSuchChild(i) => write!(f, "the collator has no child {i}"),
            CollatorError::Insufficient { available } => {
                write!(f, "not enough laxity to transfer ({available:?} available)")
            }
        }
    }
}

impl std::error::Error for CollatorError {}

/// What the collator did so far.
///
/// ```
/// let s = tempi::policy::sched::Collator::standard().stats();
/// assert_eq!(s.admitted, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CollatorStats {
    /// Reservations granted (a job woken after blocking counts again).
    pub admitted: u64,
    /// Guaranteed jobs refused (no room, no deadline or WCET, or the engine full): they ran
    /// in the last child.
    pub refused: u64,
    /// Guaranteed jobs that used up their reservation and went on in the last child.
    pub overruns: u64,
    /// Dispatches of a child while a guaranteed job was ready.
    pub steals: u64,
    /// CPU time those dispatches took from the slack.
    pub stolen: Duration,
}

/// One child scheduler and its slack account.
struct Child {
    sched: Box<dyn Scheduler>,
    /// Threads queued in it.
    ready: usize,
    /// Laxity reserved for it.
    claim: Duration,
}

/// What the collator remembers of a thread, by its slot index.
#[derive(Clone, Copy)]
struct Entry {
    id: Option<ThreadId>,
    place: Party,
    queued: bool,
    /// Ready, classified guaranteed, admitted at the next pick.
    awaiting: bool,
    job: u32,
    /// `job_cpu_time` when last queued: the base of the next charge.
    cpu_mark: Duration,
    reservation: Option<AdmitId>,
    /// Refused or overran in this job: it runs in the last child until the job ends.
    demoted: bool,
}

impl Entry {
    const EMPTY: Entry = Entry {
        id: None,
        place: Party::Guaranteed,
        queued: false,
        awaiting: false,
        job: 0,
        cpu_mark: Duration::ZERO,
        reservation: None,
        demoted: false,
    };
}

/// The thread last handed to the kernel, until it stops.
#[derive(Clone, Copy)]
struct Dispatch {
    id: ThreadId,
    place: Party,
    since: Time,
    /// A child dispatched while a guaranteed job was ready: how far it may run.
    steal: Option<Duration>,
    /// Switch cost not charged to a guaranteed job dispatched right after a steal.
    credit: Duration,
    /// It stopped (and a guaranteed job was charged); the steal is settled at the next pick.
    stopped: bool,
}

/// Several schedulers on one CPU, sharing it by the guaranteed jobs' laxity. See the
/// [module documentation](crate::policy::sched::collator).
///
/// ```
/// use std::time::Duration;
/// use tempi::policy::sched::{Collator, Fifo, FixedPriority, Party, Scheduler};
/// let collator = Collator::new(
///     Box::new(|t| if t.deadline.is_some() { Party::Guaranteed } else { Party::Child(0) }),
///     vec![Box::new(FixedPriority::new()), Box::new(Fifo::new())],
/// )
/// .unwrap()
/// .with_switch_cost(Duration::from_micros(5));
/// assert_eq!(collator.name(), "collator");
/// ```
pub struct Collator {
    engine: TreeEngine,
    guaranteed: Edf,
    guaranteed_ready: usize,
    children: Vec<Child>,
    classify: Classifier,
    threads: Vec<Entry>,
    /// Reservations of unfinished jobs, ascending by (deadline, acceptance).
    reserved: Vec<AdmitId>,
    /// Threads to admit at the next pick, in arrival order, with how they became ready.
    pending: Vec<(SchedInfo, ReadyReason, bool)>,
    claimed: Duration,
    /// The switch back from the last steal, until a guaranteed job has made it: the slack
    /// counts it as idle until then, although the claims were already charged for it.
    owed: Duration,
    switch_cost: Duration,
    /// Reserved per guaranteed job on top of its WCET ([`Collator::with_job_overhead`]).
    job_overhead: Duration,
    /// The latest instant any hook revealed.
    now: Time,
    current: Option<Dispatch>,
    stats: CollatorStats,
}

/// Thread slots and reservations the collator sizes for by default.
const DEFAULT_THREADS: usize = super::DEFAULT_QUEUE;

impl Collator {
    /// A collator with a classifier and its children in rank order; the last child takes
    /// refused and overrunning guaranteed jobs. Fails with [`CollatorError::NoChild`] when
    /// `children` is empty. A classifier answering a child that does not exist sends the
    /// thread to the last child.
    ///
    /// ```
    /// use tempi::policy::sched::{Collator, Fifo, Party};
    /// let c = Collator::new(Box::new(|_| Party::Child(0)), vec![Box::new(Fifo::new())]).unwrap();
    /// assert_eq!(c.children(), 1);
    /// ```
    pub fn new(classify: Classifier, children: Vec<Box<dyn Scheduler>>) -> Result<Collator, CollatorError> {
        if children.is_empty() {
            return Err(CollatorError::NoChild);
        }
        Ok(Collator::with_children(classify, children))
    }

    /// [`Collator::new`] once `children` is known not to be empty.
    fn with_children(classify: Classifier, children: Vec<Box<dyn Scheduler>>) -> Collator {
        let children = children.into_iter().map(|sched| Child { sched, ready: 0, claim: Duration::ZERO }).collect();
        Collator {
            engine: TreeEngine::with_capacity(DEFAULT_THREADS),
            guaranteed: Edf::new(),
            guaranteed_ready: 0,
            children,
            classify,
            threads: vec![Entry::EMPTY; DEFAULT_THREADS],
            reserved: Vec::with_capacity(DEFAULT_THREADS),
            pending: Vec::with_capacity(DEFAULT_THREADS),
            claimed: Duration::ZERO,
            owed: Duration::ZERO,
            switch_cost: Duration::ZERO,
            job_overhead: Duration::ZERO,
            now: Time::ZERO,
            current: None,
            stats: CollatorStats::default(),
        }
    }

    /// The default composition, registered as `collator`: a thread with a priority above
    /// zero goes to child 0, fixed priority (the reactive part); otherwise one whose job has
    /// a deadline and a declared WCET is guaranteed; the rest go to child 1, FIFO (best
    /// effort, which also takes refused jobs). It assumes switches cost nothing
    /// ([`Collator::with_switch_cost`]); built by name
    /// ([`by_name`](crate::policy::sched::by_name)), it is told the switch cost the run gives
    /// ([`SchedParams::switch_cost`](crate::policy::sched::SchedParams::switch_cost)).
    ///
    /// ```
    /// use tempi::policy::sched::{Collator, Scheduler};
    /// assert_eq!(Collator::standard().children(), 2);
    /// assert!(tempi::policy::sched::by_name("collator", None).is_some());
    /// ```
    pub fn standard() -> Collator {
        let classify: Classifier = Box::new(|t: &SchedInfo| {
            if t.priority > 0 {
                Party::Child(0)
            } else if t.deadline.is_some() && !t.wcet.is_zero() {
                Party::Guaranteed
            } else {
                Party::Child(1)
            }
        });
        let children: Vec<Box<dyn Scheduler>> = vec![Box::new(FixedPriority::new()), Box::new(Fifo::new())];
        Collator::with_children(classify, children)
    }

    /// Keep `cost` of slack back at every steal for the switch back to the guaranteed job,
    /// and do not charge that switch to the job. Set it to at least the kernel's
    /// context-switch cost (plus timer latency in real time).
    ///
    /// ```
    /// let c = tempi::policy::sched::Collator::standard().with_switch_cost(std::time::Duration::from_micros(3));
    /// # let _ = c;
    /// ```
    pub fn with_switch_cost(mut self, cost: Duration) -> Collator {
        self.switch_cost = cost;
        self
    }

    /// Reserve each guaranteed job `overhead` on top of its WCET, and let its time slice run
    /// that much longer before it counts as an overrun: the per-job time a user-level runtime
    /// cannot keep off a job's clock ([`crate::Config::job_overhead`]). Built by name, the
    /// collator is told the run's ([`SchedParams::job_overhead`](crate::policy::sched::SchedParams::job_overhead)).
    ///
    /// ```
    /// let c = tempi::policy::sched::Collator::standard().with_job_overhead(std::time::Duration::from_micros(50));
    /// # let _ = c;
    /// ```
    pub fn with_job_overhead(mut self, overhead: Duration) -> Collator {
        self.job_overhead = overhead;
        self
    }

    /// Size for thread slot indices below `threads` and as many reservations at once
    /// (default 1024 each).
    ///
    /// # Panics
    /// Above [`crate::policy::admit::MAX_CAPACITY`], or if the allocator refuses the room.
    ///
    /// ```
    /// let c = tempi::policy::sched::Collator::standard().with_capacity(64);
    /// # let _ = c;
    /// ```
    pub fn with_capacity(mut self, threads: usize) -> Collator {
        self.engine = TreeEngine::with_capacity(threads);
        use crate::policy::admit::arena;
        self.threads = arena("collator", threads);
        self.threads.resize(threads, Entry::EMPTY);
        self.reserved = arena("collator", threads);
        self.pending = arena("collator", threads);
        self
    }

    /// How many children there are.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::Collator::standard().children(), 2);
    /// ```
    pub fn children(&self) -> usize {
        self.children.len()
    }

    /// What the collator did so far.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::Collator::standard().stats().refused, 0);
    /// ```
    pub fn stats(&self) -> CollatorStats {
        self.stats
    }

    /// The minimum laxity at `now` of the jobs holding a reservation, or `None` when no job
    /// holds one (nothing to protect). Exact when nothing runs, that is between a stop and
    /// the next dispatch; while a guaranteed job runs its uncharged time counts as idle.
    ///
    /// ```
    /// use tempi::policy::sched::Collator;
    /// assert_eq!(Collator::standard().slack(tempi::Time::ZERO), None);
    /// ```
    pub fn slack(&self, now: Time) -> Option<Duration> {
        let first = self.reserved.first()?.deadline();
        // Just before the earliest unfinished deadline, `idle_before` is the minimum
        // laxity of the jobs from there on: finished entries before it do not count.
        let just_before = Time::from_nanos(first.as_nanos().saturating_sub(1));
        Some(self.engine.idle_before(just_before, now))
    }

    /// The laxity child `child` holds, or `None` if there is no such child.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::Collator::standard().claim(0), Some(std::time::Duration::ZERO));
    /// ```
    pub fn claim(&self, child: usize) -> Option<Duration> {
        self.children.get(child).map(|c| c.claim)
    }

    /// The sum of the children's claims.
    ///
    /// ```
    /// assert!(tempi::policy::sched::Collator::standard().claimed().is_zero());
    /// ```
    pub fn claimed(&self) -> Duration {
        self.claimed
    }

    /// The slack nobody claims at `now`: what the guaranteed part can still admit into or
    /// give away ([`Duration::MAX`] less the claims when no job holds a reservation), less
    /// the switch back from the last steal while no guaranteed job has paid it yet.
    ///
    /// ```
    /// use std::time::Duration;
    /// let c = tempi::policy::sched::Collator::standard();
    /// assert_eq!(c.unclaimed(tempi::Time::ZERO), Duration::MAX);
    /// ```
    pub fn unclaimed(&self, now: Time) -> Duration {
        // The switch back from the last steal is spoken for until a guaranteed job pays it.
        self.slack(now).unwrap_or(Duration::MAX).saturating_sub(self.claimed).saturating_sub(self.owed)
    }

    /// Move `amount` of laxity from one party to another at `now`: from the guaranteed part
    /// (its unclaimed slack) to a child, from a child's claim back or to another child.
    /// Refused, changing nothing, when the source holds less: no transfer can take an
    /// admitted job below zero laxity. While a child steals, its claim and the unclaimed
    /// slack can give only what its running slice does not need.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::sched::{Collator, CollatorError, Party};
    /// use tempi::Time;
    /// let ms = Duration::from_millis;
    /// let mut c = Collator::standard();
    /// c.transfer(Party::Guaranteed, Party::Child(0), ms(3), Time::ZERO).unwrap();
    /// c.transfer(Party::Child(0), Party::Child(1), ms(1), Time::ZERO).unwrap();
    /// assert_eq!(c.claim(0), Some(ms(2)));
    /// assert_eq!(
    ///     c.transfer(Party::Child(1), Party::Child(0), ms(2), Time::ZERO),
    ///     Err(CollatorError::Insufficient { available: ms(1) })
    /// );
    /// ```
    pub fn transfer(&mut self, from: Party, to: Party, amount: Duration, now: Time) -> Result<(), CollatorError> {
        for party in [from, to] {
            if let Party::Child(i) = party
                && i >= self.children.len()
            {
                return Err(CollatorError::NoSuchChild(i));
            }
        }
        // What a running steal used so far is settled first, so claims are current.
        self.now = self.now.max(now);
        self.account_steal(now);
        let available = self.transferable(from, now);
        if amount > available {
            return Err(CollatorError::Insufficient { available });
        }
        if from == to {
            return Ok(());
        }
        if let Party::Child(i) = from {
            self.children[i].claim -= amount;
            self.claimed -= amount;
        }
        if let Party::Child(j) = to {
            self.children[j].claim += amount;
            self.claimed += amount;
        }
        Ok(())
    }

    /// Where `id` is queued or was last placed, if the collator knows it.
    ///
    /// ```
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// assert_eq!(tempi::policy::sched::Collator::standard().placement(a), None);
    /// ```
    pub fn placement(&self, id: ThreadId) -> Option<Party> {
        self.threads.get(id.index()).filter(|e| e.id == Some(id)).map(|e| e.place)
    }

    /// Whether `id`'s current job holds a reservation (it is guaranteed its deadline).
    ///
    /// ```
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// assert!(!tempi::policy::sched::Collator::standard().is_reserved(a));
    /// ```
    pub fn is_reserved(&self, id: ThreadId) -> bool {
        self.threads
            .get(id.index())
            .is_some_and(|e| e.id == Some(id) && e.reservation.is_some_and(|r| self.engine.remaining(r).is_some()))
    }

    /// Every unfinished reservation as (deadline, remaining WCET), earliest deadline first
    /// (acceptance order among equal deadlines): what the slack is computed from.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::Collator::standard().reservations().count(), 0);
    /// ```
    pub fn reservations(&self) -> impl Iterator<Item = (Time, Duration)> + '_ {
        self.reserved.iter().filter_map(|&r| Some((r.deadline(), self.engine.remaining(r)?)))
    }

    // ----- bookkeeping the hooks share ---------------------------------------------------

    /// The entry of `id`, reset if its slot held another thread (which left without a
    /// hook: its reservation, if any, is given back).
    fn entry_index(&mut self, id: ThreadId) -> usize {
        let i = id.index();
        if i >= self.threads.len() {
            self.threads.resize(i + 1, Entry::EMPTY);
        }
        if self.threads[i].id != Some(id) {
            if let Some(r) = self.threads[i].reservation.take() {
                self.end_reservation(r);
            }
            self.threads[i] = Entry { id: Some(id), ..Entry::EMPTY };
        }
        i
    }

    /// Admit `t`'s remaining WCET if it and every claim fit; the reservation or `None`.
    fn admit(&mut self, t: &SchedInfo) -> Option<AdmitId> {
        let deadline = t.deadline?;
        if t.wcet.is_zero() {
            return None;
        }
        let remaining = t.wcet.saturating_add(self.job_overhead).saturating_sub(t.job_cpu_time);
        if remaining.is_zero() || deadline <= self.now {
            return None;
        }
        self.expire();
        let idle = self.engine.idle_before(deadline, self.now);
        // The claims (and the switch owed) stay covered: the new job lowers the laxity of
        // later jobs by `remaining`, and its own laxity is `idle − remaining`.
        let need = remaining.checked_add(self.claimed).and_then(|n| n.checked_add(self.owed));
        if need.is_none_or(|need| need > idle) {
            return None;
        }
        match self.engine.admit(remaining, deadline, self.now) {
            Ok(crate::policy::admit::Admission::Accepted(r)) => {
                let at = self.reserved.partition_point(|&x| x < r);
                self.reserved.insert(at, r);
                self.stats.admitted += 1;
                Some(r)
            }
            _ => None,
        }
    }

    /// Give a reservation's unused time back to the later jobs.
    fn end_reservation(&mut self, r: AdmitId) {
        let _ = self.engine.finish(r);
        if let Ok(at) = self.reserved.binary_search(&r) {
            self.reserved.remove(at);
        }
    }

    /// Drop entries whose deadline passed; reservations among them are over.
    fn expire(&mut self) {
        self.engine.expire(self.now);
        let now = self.now;
        let gone = self.reserved.partition_point(|r| r.deadline() < now);
        if gone > 0 {
            self.reserved.drain(..gone);
        }
    }

    /// The scheduler of a part.
    fn part(&mut self, place: Party) -> &mut dyn Scheduler {
        match place {
            Party::Guaranteed => &mut self.guaranteed,
            Party::Child(i) => &mut *self.children[i].sched,
        }
    }

    /// The child that takes what the guaranteed part refuses.
    fn fallback(&self) -> Party {
        Party::Child(self.children.len() - 1)
    }
}
