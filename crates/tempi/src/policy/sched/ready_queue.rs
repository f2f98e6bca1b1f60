//! [`ReadyQueue`]: the urgency-ordered ready queue the built-in policies share.

use super::Urgency;
use crate::plain::ThreadId;

/// An urgency-ordered ready queue with FIFO order among equals, stored in one pre-sized vector.
///
/// Insertion is a binary search plus a shift, removal of the most urgent thread is O(1). Ready
/// queues in real-time systems hold tens to hundreds of threads, where this beats pointer-linked
/// structures; it never allocates once `with_capacity` covers the thread count.
///
/// ```
/// use tempi::policy::sched::{ReadyQueue, Urgency};
/// # use tempi::{Runtime, ThreadSpec};
/// # let mut rt = Runtime::simulated(1);
/// # let a = rt.spawn(ThreadSpec::new("a"), |_| {}).unwrap();
/// # let b = rt.spawn(ThreadSpec::new("b"), |_| {}).unwrap();
/// let mut q = ReadyQueue::with_capacity(8);
/// q.push_back(a, Urgency(1));
/// q.push_back(b, Urgency(2));
/// assert_eq!(q.pop(), Some(b));
/// assert_eq!(q.pop(), Some(a));
/// ```
#[derive(Debug, Clone)]
pub struct ReadyQueue {
    /// Sorted ascending by (urgency, order); the next to run is last.
    entries: Vec<(Urgency, i64, ThreadId)>,
    back: i64,
    front: i64,
}

impl ReadyQueue {
    /// Up to this many entries, an insertion steps back from the end instead of searching.
    const SHORT: usize = 16;

    /// An empty queue with room for `n` threads, or for 1 048 576 (2^20, the most thread
    /// slots a runtime has, so the most threads ever ready at once) if `n` is larger: room
    /// beyond that could never be used.
    ///
    /// ```
    /// assert!(tempi::policy::sched::ReadyQueue::with_capacity(4).is_empty());
    /// assert!(tempi::policy::sched::ReadyQueue::with_capacity(1 << 32).is_empty());
    /// ```
    pub fn with_capacity(n: usize) -> ReadyQueue {
        ReadyQueue { entries: Vec::with_capacity(n.min(1 << ThreadId::TAG_SHIFT)), back: 0, front: 1 }
    }

    #[inline(always)]
    fn insert(&mut self, key: (Urgency, i64, ThreadId)) {
        let before = |e: &(Urgency, i64, ThreadId)| (e.0, e.1) < (key.0, key.1);
        let n = self.entries.len();
        // Ready queues are short: the new entry is found a place by stepping back from the
        // end (often it is the next to run and stays there); long queues are searched.
        if n <= Self::SHORT {
            self.entries.push(key);
            let mut at = n;
            while at > 0 && !before(&self.entries[at - 1]) {
                self.entries.swap(at - 1, at);
                at -= 1;
            }
            return;
        }
        self.insert_searched(key);
    }

    /// [`ReadyQueue::insert`] into a long queue.
    fn insert_searched(&mut self, key: (Urgency, i64, ThreadId)) {
        let at = self.entries.partition_point(|e| (e.0, e.1) < (key.0, key.1));
        self.entries.insert(at, key);
    }

    /// Queue `id` behind every thread of equal urgency.
    ///
    /// ```
    /// # use tempi::policy::sched::{ReadyQueue, Urgency};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// let mut q = ReadyQueue::with_capacity(1);
    /// q.push_back(a, Urgency(0));
    /// assert_eq!(q.len(), 1);
    /// ```
    #[inline]
    pub fn push_back(&mut self, id: ThreadId, urgency: Urgency) {
        self.back -= 1;
        self.insert((urgency, self.back, id));
    }

    /// Queue `id` ahead of every thread of equal urgency.
    ///
    /// ```
    /// # use tempi::policy::sched::{ReadyQueue, Urgency};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// # let b = rt.spawn(tempi::ThreadSpec::new("b"), |_| {}).unwrap();
    /// let mut q = ReadyQueue::with_capacity(2);
    /// q.push_back(a, Urgency(0));
    /// q.push_front(b, Urgency(0));
    /// assert_eq!(q.pop(), Some(b));
    /// ```
    #[inline]
    pub fn push_front(&mut self, id: ThreadId, urgency: Urgency) {
        self.front += 1;
        self.insert((urgency, self.front, id));
    }

    /// [`ReadyQueue::push_back`] of `back`, [`ReadyQueue::push_front`] of `front`, then
    /// [`ReadyQueue::pop`], in one step: when `back` is more urgent than `front` and than
    /// every queued thread it is returned without ever being queued.
    ///
    /// ```
    /// # use tempi::policy::sched::{ReadyQueue, Urgency};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// # let b = rt.spawn(tempi::ThreadSpec::new("b"), |_| {}).unwrap();
    /// let mut q = ReadyQueue::with_capacity(2);
    /// assert_eq!(q.push_back_front_pop((a, Urgency(2)), (b, Urgency(1))), Some(a));
    /// assert_eq!(q.pop(), Some(b));
    /// ```
    #[inline]
    pub fn push_back_front_pop(&mut self, back: (ThreadId, Urgency), front: (ThreadId, Urgency)) -> Option<ThreadId> {
        if back.1 > front.1 && self.entries.last().is_none_or(|e| back.1 > e.0) {
            // Among equals a later `push_back` only ever comes after an earlier one, so
            // skipping the queue position changes no order.
            self.back -= 1;
            self.push_front(front.0, front.1);
            return Some(back.0);
        }
        self.push_back(back.0, back.1);
        self.push_front(front.0, front.1);
        self.pop()
    }

    /// [`ReadyQueue::push_back`] of `id`, then [`ReadyQueue::pop`], in one step: the most
    /// urgent thread is taken out before `id` is queued (no entry is moved twice), and `id`
    /// itself comes straight back, never queued, when it is more urgent than every queued
    /// thread.
    ///
    /// ```
    /// # use tempi::policy::sched::{ReadyQueue, Urgency};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// # let b = rt.spawn(tempi::ThreadSpec::new("b"), |_| {}).unwrap();
    /// let mut q = ReadyQueue::with_capacity(2);
    /// q.push_back(b, Urgency(1));
    /// // Equal urgency: `a` goes behind `b`, which runs.
    /// assert_eq!(q.push_back_pop(a, Urgency(1)), b);
    /// assert_eq!(q.pop(), Some(a));
    /// // More urgent than everything queued: `a` is not queued at all.
    /// assert_eq!(q.push_back_pop(a, Urgency(5)), a);
    /// assert!(q.is_empty());
    /// ```
    #[inline]
    pub fn push_back_pop(&mut self, id: ThreadId, urgency: Urgency) -> ThreadId {
        self.back -= 1;
        let key = (urgency, self.back, id);
        match self.entries.last() {
            // The queued entry is the one `pop` would take after the insertion too (it ranks
            // above `key`); taking it first leaves the same queue.
            Some(top) if (top.0, top.1) > (key.0, key.1) => {
                let top = top.2;
                self.entries.pop();
                self.insert(key);
                top
            }
            _ => id,
        }
    }

    /// Remove and return the most urgent thread (the earliest queued among equals).
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::ReadyQueue::with_capacity(0).pop(), None);
    /// ```
    pub fn pop(&mut self) -> Option<ThreadId> {
        self.entries.pop().map(|e| e.2)
    }

    /// The most urgent thread and its urgency, without removing it.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::ReadyQueue::with_capacity(0).peek(), None);
    /// ```
    pub fn peek(&self) -> Option<(ThreadId, Urgency)> {
        self.entries.last().map(|e| (e.2, e.0))
    }

    /// Remove `id` if queued; returns whether it was.
    ///
    /// ```
    /// # use tempi::policy::sched::{ReadyQueue, Urgency};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// let mut q = ReadyQueue::with_capacity(1);
    /// q.push_back(a, Urgency(0));
    /// assert!(q.remove(a));
    /// assert!(!q.remove(a));
    /// ```
    pub fn remove(&mut self, id: ThreadId) -> bool {
        match self.entries.iter().position(|e| e.2 == id) {
            Some(i) => {
                self.entries.remove(i);
                true
            }
            None => false,
        }
    }

    /// Move a queued thread to its new urgency, keeping its place among equals by arrival.
    /// Returns whether it was queued.
    ///
    /// ```
    /// # use tempi::policy::sched::{ReadyQueue, Urgency};
    /// # let mut rt = tempi::Runtime::simulated(1);
    /// # let a = rt.spawn(tempi::ThreadSpec::new("a"), |_| {}).unwrap();
    /// # let b = rt.spawn(tempi::ThreadSpec::new("b"), |_| {}).unwrap();
    /// let mut q = ReadyQueue::with_capacity(2);
    /// q.push_back(a, Urgency(0));
    /// q.push_back(b, Urgency(1));
    /// q.update(a, Urgency(5));
    /// assert_eq!(q.pop(), Some(a));
    /// ```
    pub fn update(&mut self, id: ThreadId, urgency: Urgency) -> bool {
        match self.entries.iter().position(|e| e.2 == id) {
            Some(i) => {
                let (_, order, _) = self.entries.remove(i);
                self.insert((urgency, order, id));
                true
            }
            None => false,
        }
    }

    /// Number of queued threads.
    ///
    /// ```
    /// assert_eq!(tempi::policy::sched::ReadyQueue::with_capacity(3).len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no thread is queued.
    ///
    /// ```
    /// assert!(tempi::policy::sched::ReadyQueue::with_capacity(3).is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

/// Default ready-queue capacity of the built-in policies; grows only past this many threads
/// per CPU.
pub(crate) const DEFAULT_QUEUE: usize = 1024;
