//! The identities every layer names: threads, thread sets, locks, condition variables,
//! semaphores and handlers, and their encoding.

use std::fmt;
use std::num::NonZeroU64;

/// Identifies a thread for the lifetime of a runtime.
///
/// A slot index plus a generation, so an id of an exited thread never aliases a newer thread
/// that reuses the slot, plus the tag of the runtime that made it. A runtime refuses an id of
/// any other runtime with [`crate::Error::ForeignThread`] wherever the id is handed to it (a
/// message to it is refused with [`crate::message::MsgError::NoSuchThread`]), however many
/// runtimes the process has made before, alive or dropped: runtimes alive at once have
/// different tags, and a runtime that takes up the tag of a dropped one numbers its
/// generations from above every generation the dropped one used. Ids of two runtimes
/// therefore never compare equal, even when the runs are identical: compare
/// [`ThreadId::index`] (and the order of spawning) across runs instead.
///
/// An id is one word (`Option<ThreadId>` too): the runtime's tag (12 bits) and the slot
/// index (20 bits), then the generation (32 bits). So at most 4 096 runtimes are alive at
/// once ([`crate::Error::TooManyRuntimes`]).
///
/// ```
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
/// let b = rt.spawn(ThreadSpec::new("b"), |_| {}).unwrap();
/// assert_ne!(a, b);
/// assert_eq!(std::mem::size_of::<Option<tempi::ThreadId>>(), 8);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ThreadId {
    /// Slot (tag and index) and generation (see [`ThreadId::new`]).
    word: NonZeroU64,
}

impl ThreadId {
    /// The id of slot `slot` (the runtime's tag in its top 12 bits, [`ThreadId::TAG_SHIFT`],
    /// the slot index below) in generation `generation`: packed in one word, slot first, so
    /// ids order by (slot, generation); the `+ 1` keeps zero free, so `Option<ThreadId>`
    /// needs no word of its own.
    pub(crate) fn new(slot: u32, generation: u32) -> ThreadId {
        let packed = ((slot as u64) << 32 | generation as u64).wrapping_add(1);
        ThreadId { word: NonZeroU64::new(packed).expect("slot and generation are not both at their maximum") }
    }

    /// Where the runtime's tag starts in the slot field; the slot index is below it, so a
    /// runtime has at most `1 << TAG_SHIFT` (1 048 576) thread slots.
    pub(crate) const TAG_SHIFT: u32 = 20;

    /// The tag of the runtime that made this id ([`crate::id_space`]).
    #[inline]
    pub(crate) fn tag(self) -> u16 {
        (self.slot() >> Self::TAG_SHIFT) as u16
    }

    /// The slot field: the runtime's tag, then the slot index.
    #[inline]
    pub(crate) fn slot(self) -> u32 {
        ((self.word.get() - 1) >> 32) as u32
    }

    #[inline]
    pub(crate) fn generation(self) -> u32 {
        (self.word.get() - 1) as u32
    }

    /// The id's word, non-zero (a lock's owner word).
    #[inline]
    pub(crate) fn to_word(self) -> u64 {
        self.word.get()
    }

    /// The id whose word from [`ThreadId::to_word`] is `word`; `None` for zero.
    #[inline]
    pub(crate) fn from_word(word: u64) -> Option<ThreadId> {
        NonZeroU64::new(word).map(|word| ThreadId { word })
    }

    /// The slot index: small, dense, stable while the thread lives. Useful as an array index
    /// in user-defined schedulers.
    ///
    /// ```
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
    /// assert_eq!(a.index(), 0);
    /// ```
    pub fn index(self) -> usize {
        (self.slot() & ((1 << Self::TAG_SHIFT) - 1)) as usize
    }
}

impl fmt::Debug for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{}.{}", self.index(), self.generation())
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "T{}", self.index())
    }
}

/// Identifies a thread set for the lifetime of a runtime.
///
/// It carries the whole identity of its runtime (as a [`ThreadId`] carries its runtime's id
/// tag and generation floor): every other runtime refuses it with [`crate::Error::ForeignSet`], however many runtimes the process has made.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// let a = rt.create_set("a", 0).unwrap();
/// let b = rt.create_set("b", 0).unwrap();
/// assert_ne!(a, b);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SetId {
    /// The runtime's tag above the index, as in a [`ThreadId`]'s slot; first, so ids order
    /// by it.
    pub(crate) word: u32,
    /// The identity of the runtime that made the id.
    pub(crate) runtime: u64,
}

impl SetId {
    /// A small dense index, stable for the run.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// assert_eq!(rt.create_set("a", 0).unwrap().index(), 0);
    /// ```
    pub fn index(self) -> usize {
        (self.word & ((1 << ThreadId::TAG_SHIFT) - 1)) as usize
    }
}

impl fmt::Debug for SetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "S{}", self.index())
    }
}

/// Identifies a lock for the lifetime of a runtime.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// let m = rt.create_mutex((), tempi::sync::LockSpec::new("m")).unwrap();
/// assert_eq!(m.id().index(), 0);
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LockId(pub(crate) u32);

impl LockId {
    /// A small dense index.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// assert_eq!(rt.create_mutex(1, tempi::sync::LockSpec::new("m")).unwrap().id().index(), 0);
    /// ```
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Debug for LockId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "L{}", self.0)
    }
}

/// Identifies a condition variable.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// let cv = rt.create_condvar(0).unwrap();
/// let _ = cv.id();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CondId(pub(crate) u32);

/// Identifies a semaphore.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// let s = rt.create_semaphore(tempi::sync::SemSpec::new("s", 1)).unwrap();
/// let _ = s.id();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SemId(pub(crate) u32);

/// A handler's identity, unique in the process: what the scheduler is shown of a busy handler
/// a thread blocks at ([`crate::policy::sched::BlockedAt::Handler`]).
///
/// ```
/// use tempi::message::Handler;
/// let (a, b) = (Handler::new("a", 0, 1, |_, _| {}), Handler::new("b", 0, 1, |_, _| {}));
/// assert_ne!(a.id(), b.id());
/// assert_eq!(a.id(), a.clone().id());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandlerId(u64);

impl HandlerId {
    /// Its number.
    ///
    /// ```
    /// assert!(tempi::message::Handler::new("h", 0, 1, |_, _| {}).id().raw() > 0);
    /// ```
    pub fn raw(self) -> u64 {
        self.0
    }

    /// The id with this number.
    pub(crate) fn from_raw(n: u64) -> HandlerId {
        HandlerId(n)
    }
}

/// A runtime's identity, unique in the process and never reused: what objects built on a
/// runtime (an admission controller, a Spring executor) keep to refuse the threads, requests
/// and tickets of any other runtime.
///
/// ```
/// let (a, b) = (tempi::Runtime::simulated(1), tempi::Runtime::simulated(1));
/// assert_ne!(a.id(), b.id());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuntimeId(pub(crate) u64);
