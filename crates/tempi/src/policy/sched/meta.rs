//! The vocabulary of the message-level scheduling events (FREE JAZZ's scheduling messages): which
//! events a policy asks for ([`Events`]), the ids pairing an inheritance with its restore
//! ([`InheritId`]), what a thread is blocked at ([`BlockedAt`]) and why the CPU is reassigned
//! ([`Schedule`]). The hooks themselves are methods of [`super::Scheduler`].

use std::fmt;

use crate::plain::HandlerId;
use crate::plain::SemId;

/// The constraint of a message that does not affect scheduling: the kernel reports no event for
/// it ([`super::Scheduler::on_message_ready`], [`super::Scheduler::on_prio_save`]).
///
/// ```
/// use tempi::message::Message;
/// assert_eq!(Message::new(1, 2, tempi::policy::sched::NO_CONSTRAINT).constraint, 0);
/// ```
pub const NO_CONSTRAINT: i64 = 0;

/// The message-level events a policy asks to be told of, answered once per CPU by
/// [`super::Scheduler::events`] when the CPU starts. An event not asked for is never reported,
/// and costs nothing: the kernel tests one bit, with no call into the policy.
///
/// ```
/// use tempi::policy::sched::Events;
/// let e = Events::CALL | Events::PROCURE;
/// assert!(e.contains(Events::CALL) && !e.contains(Events::NEXT));
/// assert!(Events::NONE.is_empty());
/// assert_eq!(Events::ALL & Events::PRIO, Events::PRIO);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Events(u8);

impl Events {
    /// Nothing beyond the core hooks (the default).
    pub const NONE: Events = Events(0);
    /// READY: a message with a constraint reached a thread ([`super::Scheduler::on_message_ready`]).
    pub const READY: Events = Events(1);
    /// PRIO SAVE / PRIO RESTORE around each message a handler serves that carries a constraint
    /// ([`super::Scheduler::on_prio_save`], [`super::Scheduler::on_prio_restore`]).
    pub const PRIO: Events = Events(2);
    /// NEXT: a thread blocked or went idle; the policy may cancel queued messages
    /// ([`super::Scheduler::on_next`]).
    pub const NEXT: Events = Events(4);
    /// CALL: a thread blocked calling a busy handler ([`super::Scheduler::on_call`]); implies
    /// NICE when its holder leaves the handler.
    pub const CALL: Events = Events(8);
    /// PROCURE: a thread blocked at a semaphore ([`super::Scheduler::on_procure`]), followed
    /// transitively; implies NICE when a holder vacates.
    pub const PROCURE: Events = Events(16);
    /// Every event.
    pub const ALL: Events = Events(31);
    /// Not an event but a filter on CALL and PROCURE (and not in [`Events::ALL`]): report
    /// them only when the blocked thread has FREE JAZZ's `tame_prio_inv` on
    /// ([`crate::ThreadSpec::tame_prio_inv`], [`crate::Ctx::tame_prio_inv`]), the threads
    /// that should endure bounded priority inversion at worst. Without it they are reported
    /// for every thread.
    ///
    /// ```
    /// use tempi::policy::sched::Events;
    /// assert!(!Events::ALL.contains(Events::TAMED_ONLY));
    /// assert!((Events::PROCURE | Events::TAMED_ONLY).contains(Events::PROCURE));
    /// ```
    pub const TAMED_ONLY: Events = Events(32);

    /// Whether every event of `other` is in `self`.
    ///
    /// ```
    /// assert!(tempi::policy::sched::Events::ALL.contains(tempi::policy::sched::Events::NEXT));
    /// ```
    pub const fn contains(self, other: Events) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether no event is asked for.
    ///
    /// ```
    /// assert!(!tempi::policy::sched::Events::READY.is_empty());
    /// ```
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The events as bits (for the thread's view of its CPU's events).
    pub(crate) const fn bits(self) -> u8 {
        self.0
    }

    /// Events from bits, unknown bits dropped.
    pub(crate) const fn from_bits(bits: u8) -> Events {
        Events(bits & (Events::ALL.0 | Events::TAMED_ONLY.0))
    }
}

impl std::ops::BitOr for Events {
    type Output = Events;
    fn bitor(self, rhs: Events) -> Events {
        Events(self.0 | rhs.0)
    }
}

impl std::ops::BitAnd for Events {
    type Output = Events;
    fn bitand(self, rhs: Events) -> Events {
        Events(self.0 & rhs.0)
    }
}

impl fmt::Debug for Events {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = [
            (Events::READY, "READY"),
            (Events::PRIO, "PRIO"),
            (Events::NEXT, "NEXT"),
            (Events::CALL, "CALL"),
            (Events::PROCURE, "PROCURE"),
            (Events::TAMED_ONLY, "TAMED_ONLY"),
        ];
        let set: Vec<&str> = names.iter().filter(|(e, _)| self.contains(*e)).map(|(_, n)| *n).collect();
        write!(f, "Events({})", if set.is_empty() { "NONE".to_string() } else { set.join("|") })
    }
}

/// Pairs an urgency lent by an inheritance event (CALL, PROCURE, PRIO SAVE) with the event
/// that takes it back (NICE, PRIO RESTORE): unique within a run, handed to the policy at the
/// inheritance and given back at the restore, so a policy can keep nested or multiple
/// inheritances apart.
///
/// ```
/// use tempi::policy::sched::InheritId;
/// assert_ne!(InheritId::from_raw(1), InheritId::from_raw(2));
/// assert_eq!(InheritId::from_raw(7).raw(), 7);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InheritId(u64);

impl InheritId {
    /// The id with this number (for tests and policies that keep ids in tables).
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::InheritId::from_raw(3).raw(), 3);
    /// ```
    pub const fn from_raw(n: u64) -> InheritId {
        InheritId(n)
    }

    /// Its number: ids are handed out in increasing order from 1.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::InheritId::from_raw(5).raw(), 5);
    /// ```
    pub const fn raw(self) -> u64 {
        self.0
    }
}

/// What a blocked thread waits at (FREE JAZZ's "stymie descriptor"), as shown to
/// [`super::Scheduler::on_call`], [`super::Scheduler::on_procure`] and
/// [`super::Scheduler::on_nice`].
///
/// ```
/// use tempi::policy::sched::BlockedAt;
/// let h = tempi::message::Handler::new("h", 0, 1, |_, _| {});
/// assert_eq!(BlockedAt::Handler(h.id()), BlockedAt::Handler(h.id()));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockedAt {
    /// A busy handler.
    Handler(HandlerId),
    /// A semaphore with no unit left.
    Semaphore(SemId),
    /// A handler serving a message with a constraint (PRIO SAVE / PRIO RESTORE).
    Prio,
}

/// Why the CPU is being reassigned away from a running thread that stays ready (FREE JAZZ's
/// `SCHEDULE NOP`), as shown to [`super::Scheduler::on_schedule`].
///
/// ```
/// use tempi::policy::sched::Schedule;
/// assert_ne!(Schedule::Yield, Schedule::Quantum);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schedule {
    /// The thread yielded ([`crate::Ctx::yield_now`]).
    Yield,
    /// Its time quantum ran out (the policy's [`super::Scheduler::time_slice`]).
    Quantum,
}
