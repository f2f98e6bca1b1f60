//! The `tree` admission engine: an augmented treap answering every query in O(log n).
//!
//! Owns [`TreeEngine`] only; the semantics and the trait live in the parent module.
//!
//! Each job `j` has the key `K_j = d_j − P_j`, where `P_j` is the work due at or before it in
//! EDF order, so its laxity is `K_j − now`. For a run of jobs the pair (total work, smallest
//! key counted from the run's start) is a monoid — `combine(l, r) = (l.work + r.work,
//! min(l.min_key, r.min_key − l.work))` — so each node caches it for its subtree and
//! `idle_before` is one root-to-leaf descent, while inserting, charging, finishing and
//! expiring are point updates that only recompute the caches on one path. No lazy tags.
//!
//! Why a treap: split and merge make insertion and the bulk removal of expired entries (a
//! prefix in EDF order) short and obviously correct; priorities come from a fixed-seed
//! generator, so runs are reproducible; nodes live in one preallocated arena addressed by
//! index, with a free list, so nothing allocates after construction.

use super::{idle_span, signed_idle, span_nanos, Admission, AdmissionEngine, AdmitError, AdmitId};
use crate::Time;
use std::time::Duration;

/// Index of a node in the arena; [`NIL`] is no node.
type Link = u32;
/// Slot 0 of the arena is a sentinel with the empty summary, so a descent reads a missing
/// child's summary like any other, without a branch.
const NIL: Link = 0;

/// The subtree summary: its total remaining work and its smallest `d − P` with `P` counted
/// from the subtree's first job.
#[derive(Clone, Copy, Debug)]
struct Summary {
    work: i128,
    /// [`NO_KEY`] for an empty subtree. A plain number rather than an `Option` keeps nodes
    /// small and the combine branch-light: the summaries are read on every step of a descent.
    min_key: i128,
}

/// The `min_key` of an empty subtree: above any real key (keys are at most `u64::MAX`), and
/// never shifted, so it stays recognisable.
const NO_KEY: i128 = i128::MAX;

impl Summary {
    const EMPTY: Summary = Summary { work: 0, min_key: NO_KEY };

    fn combine(left: Summary, right: Summary) -> Summary {
        let min_key = if right.min_key == NO_KEY { left.min_key } else { left.min_key.min(right.min_key - left.work) };
        Summary { work: left.work + right.work, min_key }
    }
}

/// The longest root-to-node path an insertion remembers; a deeper one (vanishingly unlikely in
/// a treap) falls back to split and merge, which need no path.
const MAX_PATH: usize = 96;

#[derive(Clone, Copy, Debug)]
struct Node {
    id: AdmitId,
    remaining: u64,
    priority: u32,
    left: Link,
    right: Link,
    /// Summary of this node's subtree, itself included.
    summary: Summary,
}

/// An augmented treap over the accepted jobs, keyed by (deadline, acceptance order).
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, TreeEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = TreeEngine::with_capacity(8);
/// let ns = Duration::from_nanos;
/// e.admit(ns(2), Time::from_nanos(5), Time::ZERO).unwrap();
/// e.admit(ns(2), Time::from_nanos(4), Time::ZERO).unwrap();
/// // min(4 − 0 − 2, laxity of the deadline-5 job = 5 − 4) = 1.
/// assert_eq!(e.idle_before(Time::from_nanos(4), Time::ZERO), ns(1));
/// ```
#[derive(Debug)]
pub struct TreeEngine {
    nodes: Vec<Node>,
    /// Arena slots released by `expire`, reused before the arena grows (within capacity).
    free: Vec<Link>,
    root: Link,
    len: usize,
    capacity: usize,
    next_seq: u64,
    /// State of the fixed-seed priority generator (xorshift64).
    rng: u64,
}

impl TreeEngine {
    /// An empty engine with room for `capacity` entries, all allocated now.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, TreeEngine};
    /// assert_eq!(TreeEngine::with_capacity(3).capacity(), 3);
    /// ```
    pub fn with_capacity(capacity: usize) -> TreeEngine {
        // Links are u32 and slot 0 is the sentinel.
        let capacity = capacity.min(u32::MAX as usize - 1);
        let mut nodes = Vec::with_capacity(capacity + 1);
        nodes.push(Node {
            id: AdmitId { deadline: 0, seq: 0 },
            remaining: 0,
            priority: 0,
            left: NIL,
            right: NIL,
            summary: Summary::EMPTY,
        });
        TreeEngine {
            nodes,
            free: Vec::with_capacity(capacity),
            root: NIL,
            len: 0,
            capacity,
            next_seq: 0,
            rng: 0x9E37_79B9_7F4A_7C15,
        }
    }

    fn next_priority(&mut self) -> u32 {
        let mut x = self.rng;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.rng = x;
        (x >> 32) as u32
    }

    fn summary(&self, link: Link) -> Summary {
        self.nodes[link as usize].summary
    }

    /// Recompute `link`'s summary from its children.
    fn pull(&mut self, link: Link) {
        let node = self.nodes[link as usize];
        let work = i128::from(node.remaining);
        let own = Summary { work, min_key: i128::from(node.id.deadline) - work };
        let summary = Summary::combine(Summary::combine(self.summary(node.left), own), self.summary(node.right));
        self.nodes[link as usize].summary = summary;
    }

    /// Split `link` into the nodes with id below `key` and the rest.
    fn split(&mut self, link: Link, key: AdmitId) -> (Link, Link) {
        if link == NIL {
            return (NIL, NIL);
        }
        let node = self.nodes[link as usize];
        if node.id < key {
            let (mid, right) = self.split(node.right, key);
            self.nodes[link as usize].right = mid;
            self.pull(link);
            (link, right)
        } else {
            let (left, mid) = self.split(node.left, key);
            self.nodes[link as usize].left = mid;
            self.pull(link);
            (left, link)
        }
    }

    /// Join two treaps, every id in `left` below every id in `right`.
    fn merge(&mut self, left: Link, right: Link) -> Link {
        if left == NIL {
            return right;
        }
        if right == NIL {
            return left;
        }
        if self.nodes[left as usize].priority >= self.nodes[right as usize].priority {
            let joined = self.merge(self.nodes[left as usize].right, right);
            self.nodes[left as usize].right = joined;
            self.pull(left);
            left
        } else {
            let joined = self.merge(left, self.nodes[right as usize].left);
            self.nodes[right as usize].left = joined;
            self.pull(right);
            right
        }
    }

    /// The signed idle time before `deadline` at `now`, by one descent.
    fn signed_idle_before(&self, deadline: u64, now: u64) -> i128 {
        // `work_before` is the exact work ordered before the current subtree.
        let (mut link, mut work_before, mut min_key_after) = (self.root, 0i128, NO_KEY);
        while link != NIL {
            let node = &self.nodes[link as usize];
            let through_node = work_before + self.summary(node.left).work + i128::from(node.remaining);
            if node.id.deadline <= deadline {
                work_before = through_node;
                link = node.right;
            } else {
                // The node and its right subtree are all after `deadline`. The right subtree's
                // summary is read only here: on a long list it is a cache miss.
                let own = i128::from(node.id.deadline) - through_node;
                let right = self.summary(node.right).min_key;
                let after = if right == NO_KEY { own } else { own.min(right - through_node) };
                min_key_after = min_key_after.min(after);
                link = node.left;
            }
        }
        signed_idle(deadline, now, work_before, (min_key_after != NO_KEY).then_some(min_key_after))
    }

    /// Set `job`'s remaining time to `new_remaining(old)`, recomputing summaries on its path.
    fn update(&mut self, link: Link, job: AdmitId, new_remaining: &impl Fn(u64) -> u64) -> bool {
        if link == NIL {
            return false;
        }
        let node = self.nodes[link as usize];
        let found = match job.cmp(&node.id) {
            std::cmp::Ordering::Less => self.update(node.left, job, new_remaining),
            std::cmp::Ordering::Greater => self.update(node.right, job, new_remaining),
            std::cmp::Ordering::Equal => {
                self.nodes[link as usize].remaining = new_remaining(node.remaining);
                true
            }
        };
        if found {
            self.pull(link);
        }
        found
    }

    /// Link the fresh node `new` into the treap: walk down while the nodes outrank it, split
    /// the subtree found there around it, then recompute the summaries on the path walked.
    /// One descent, instead of the three a split and two merges from the root would take.
    fn insert(&mut self, new: Link) {
        let Node { id, priority, .. } = self.nodes[new as usize];
        let mut path = [NIL; MAX_PATH];
        let mut depth = 0;
        let mut at = self.root;
        while at != NIL && self.nodes[at as usize].priority >= priority {
            if depth == MAX_PATH {
                // The new id is above every held id with the same deadline: it goes after them.
                self.pull(new);
                let (left, right) = self.split(self.root, id);
                let left = self.merge(left, new);
                self.root = self.merge(left, right);
                return;
            }
            path[depth] = at;
            depth += 1;
            let node = &self.nodes[at as usize];
            at = if id < node.id { node.left } else { node.right };
        }
        let (left, right) = self.split(at, id);
        self.nodes[new as usize].left = left;
        self.nodes[new as usize].right = right;
        self.pull(new);
        match depth.checked_sub(1).map(|i| path[i]) {
            None => self.root = new,
            Some(parent) => {
                if id < self.nodes[parent as usize].id {
                    self.nodes[parent as usize].left = new;
                } else {
                    self.nodes[parent as usize].right = new;
                }
            }
        }
        for &link in path[..depth].iter().rev() {
            self.pull(link);
        }
    }

    /// Return every node of the subtree at `link` to the free list; how many there were.
    fn release(&mut self, link: Link) -> usize {
        // An explicit stack: an expired prefix can be deep on one side.
        let mut count = 0;
        let mut pending = link;
        let mut stack_top = NIL;
        // Reuse the `left` links of released nodes as the stack, so nothing allocates.
        while pending != NIL || stack_top != NIL {
            if pending == NIL {
                pending = stack_top;
                stack_top = self.nodes[pending as usize].left;
                let right = self.nodes[pending as usize].right;
                self.free.push(pending);
                count += 1;
                pending = right;
                continue;
            }
            let left = self.nodes[pending as usize].left;
            self.nodes[pending as usize].left = stack_top;
            stack_top = pending;
            pending = left;
        }
        count
    }
}

impl AdmissionEngine for TreeEngine {
    fn name(&self) -> &'static str {
        "tree"
    }

    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn idle_before(&self, deadline: Time, now: Time) -> Duration {
        idle_span(self.signed_idle_before(deadline.as_nanos(), now.as_nanos()))
    }

    fn admit(&mut self, wcet: Duration, deadline: Time, now: Time) -> Result<Admission, AdmitError> {
        if self.len >= self.capacity {
            return Err(AdmitError::Full { capacity: self.capacity });
        }
        let (deadline, wcet) = (deadline.as_nanos(), span_nanos(wcet));
        let idle = self.signed_idle_before(deadline, now.as_nanos());
        if idle < i128::from(wcet) {
            return Ok(Admission::Rejected { idle: idle_span(idle) });
        }
        let id = AdmitId { deadline, seq: self.next_seq };
        self.next_seq += 1;
        let priority = self.next_priority();
        let node = Node { id, remaining: wcet, priority, left: NIL, right: NIL, summary: Summary::EMPTY };
        let link = match self.free.pop() {
            Some(link) => {
                self.nodes[link as usize] = node;
                link
            }
            None => {
                // Within capacity (plus the sentinel), so within the preallocated arena: no
                // reallocation.
                self.nodes.push(node);
                (self.nodes.len() - 1) as Link
            }
        };
        self.insert(link);
        self.len += 1;
        Ok(Admission::Accepted(id))
    }

    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError> {
        let ran = span_nanos(ran);
        if self.update(self.root, job, &|old: u64| old.saturating_sub(ran)) {
            Ok(())
        } else {
            Err(AdmitError::UnknownJob(job))
        }
    }

    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        if self.update(self.root, job, &|_| 0) {
            Ok(())
        } else {
            Err(AdmitError::UnknownJob(job))
        }
    }

    fn expire(&mut self, now: Time) -> usize {
        // Ids order by deadline first, so this splits off every deadline before `now`.
        let (expired, kept) = self.split(self.root, AdmitId { deadline: now.as_nanos(), seq: 0 });
        self.root = kept;
        let gone = self.release(expired);
        self.len -= gone;
        gone
    }

    fn remaining(&self, job: AdmitId) -> Option<Duration> {
        let mut link = self.root;
        while link != NIL {
            let node = &self.nodes[link as usize];
            link = match job.cmp(&node.id) {
                std::cmp::Ordering::Less => node.left,
                std::cmp::Ordering::Greater => node.right,
                std::cmp::Ordering::Equal => return Some(Duration::from_nanos(node.remaining)),
            };
        }
        None
    }
}
