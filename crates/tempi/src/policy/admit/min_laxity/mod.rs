//! The `min_laxity` and `hashed` admission engines: PORTS' improved slot list, with shared
//! minimum-laxity pointers, searched from the last insertion point ("best guess") or through
//! a hash table over deadlines.
//!
//! Owns [`MinLaxityEngine`] and its search index (`hash`); the semantics and the trait live in
//! the parent module.
//!
//! # Structure, as in the paper
//!
//! The slots form a doubly linked list in deadline order, in an arena allocated at
//! construction, so an insertion links one slot in and moves no other. Every slot belongs to a
//! **run**, the paper's shared minimum-laxity pointer: the slots whose least-laxity slot from
//! themselves to the end of the list is the same share one run record, which points at that
//! slot (the run's last slot: the runs are the steps of the suffix minima of `K_j = d_j − P_j`,
//! where `P_j` is the work due at or before slot `j`, so its laxity is `K_j − t`). The idle
//! time after a deadline is one read through the pointer of the slot after it.
//!
//! Finish offsets are not kept per slot: a slot stores its offset less its run's `shift`, and
//! a change of work moves the later runs by changing their `shift` (the paper: "the laxities
//! associated with all the minimum-laxity pointers associated with later slots are reduced"),
//! plus, in the run where the change happens, the slots from it to the run's end. The cost of
//! an update is thus the number of later runs and the length of one run, not the number of
//! later slots: runs are few when laxities tend to grow with deadlines.
//!
//! - **Insertion** of work `c` before the run `g`: later runs shift by `c`, `g`'s slots from
//!   the insertion point on by `c`; the new slot joins `g`, or, if its key is a new minimum,
//!   ends a run (splitting `g`). The minimum after the insertion point went down, so the
//!   earlier runs whose minimum is now larger join that run ("the minimum-laxity pointers of
//!   slots of tasks with lower deadline are updated").
//! - **Charge, finish** (reclaim) of `u` at slot `j`: later runs shift back by `u`, `j`'s run
//!   from `j` on too, and the slots of `j`'s run before `j`, whose keys did not rise, are
//!   regrouped (they may now be their own minimum). No slot outside `j`'s run is visited.
//! - **Withdrawal** of slot `j`: its time goes back as at a finish, then the slot, which has
//!   no work left, is unlinked. A slot with no work bounds no idle time (the slot before it is
//!   due no later and finishes at the same offset), so no other slot's minimum changes, and if
//!   `j` is the target of its run the run holds `j` alone and goes with it. The `hashed`
//!   search's buckets that named `j` name the slot before it instead.
//! - **Expiry** ("garbage collection"): the expired slots are a prefix of the list; it goes,
//!   and every remaining run shifts back by its work. The `hashed` search rebuilds its table
//!   then, as the paper rehashes at every collection.
//!
//! Finding a deadline's place (and a job's slot, for `charge`, `finish`, `withdraw`,
//! `remaining`) walks the list: from the last insertion point or an end of the list, whichever
//! is due nearest, backwards or forwards (`min_laxity`), or forwards from the slot a hash of
//! the deadline gives (`hashed`; see the `hash` module for our reading of the paper's adaptive
//! hashing). A walk reads only each slot's [`Link`] (deadline and neighbours), kept in an array
//! of its own.

mod hash;

use super::{admit_prologue, idle_span, signed_idle, span_nanos, Admission, AdmissionEngine, AdmitError, AdmitId};
use crate::Time;
use hash::HashIndex;
use std::time::Duration;

/// No slot, no run.
const NIL: u32 = u32::MAX;

/// One accepted job, but for its place in the list ([`Link`], the same index in its arena).
#[derive(Clone, Copy, Debug)]
struct Slot {
    seq: u64,
    /// Remaining execution time, nanoseconds.
    remaining: u64,
    /// Work due at or before this slot (itself included) less its run's `shift`.
    p_raw: i128,
    /// The run (shared minimum-laxity pointer) the slot belongs to. On the free list: unused.
    run: u32,
}

/// A slot's deadline and its neighbours in the list: all a search walk reads, kept apart from
/// the rest of the slot so that a walk loads 16 bytes per slot passed, four slots to a cache
/// line, rather than a whole slot (64 bytes with the links inside). Deadline order is not
/// arena order (slots are
/// linked in as they come), so each step of a walk is a dependent load from anywhere in the
/// arena: at 8,000 slots the links take 128 KB, which stays in a core's second-level cache,
/// where whole slots (512 KB with the links inside) did not.
#[derive(Clone, Copy, Debug)]
struct Link {
    deadline: u64,
    prev: u32,
    /// The next slot in the list (on the free list: the next free slot).
    next: u32,
}

/// A shared minimum-laxity pointer: consecutive slots whose least-laxity slot from themselves
/// to the end is `target`, the run's last slot.
#[derive(Clone, Copy, Debug)]
struct Run {
    target: u32,
    /// Added to each member's `p_raw` to give its finish offset.
    shift: i128,
    prev: u32,
    /// The next run in list order (on the free list: the next free run).
    next: u32,
}

/// How a deadline's place in the list is found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Search {
    /// From the last insertion point, backwards or forwards.
    Guess,
    /// Forwards from the slot the hash table gives.
    Hashed,
}

/// The paper's improved slot list: shared minimum-laxity pointers over a linked slot list,
/// searched from the last insertion point (`min_laxity`) or by hashing (`hashed`).
///
/// ```
/// use tempi::policy::admit::{AdmissionEngine, Admission, MinLaxityEngine};
/// use tempi::Time;
/// use std::time::Duration;
/// let mut e = MinLaxityEngine::with_capacity(8);
/// let ns = Duration::from_nanos;
/// e.admit(ns(2), Time::from_nanos(5), Time::ZERO).unwrap();
/// e.admit(ns(2), Time::from_nanos(4), Time::ZERO).unwrap();
/// // min(4 − 0 − 2, laxity of the deadline-5 job = 5 − 4) = 1.
/// assert_eq!(e.idle_before(Time::from_nanos(4), Time::ZERO), ns(1));
/// ```
#[derive(Debug)]
pub struct MinLaxityEngine {
    /// The slot arena: allocated at construction, grown by `push` up to its capacity only.
    slots: Vec<Slot>,
    /// The slots' places in the list, index for index (grown with `slots`).
    links: Vec<Link>,
    free_slot: u32,
    head: u32,
    tail: u32,
    /// The run arena (never more runs than slots: each run's target is its own slot).
    runs: Vec<Run>,
    free_run: u32,
    len: usize,
    capacity: usize,
    next_seq: u64,
    /// The slot inserted last (`NIL` once it expired or was withdrawn with none before it):
    /// where the best-guess search starts unless an end of the list is nearer.
    hint: u32,
    search: Search,
    /// The hashed search's table (empty for the best-guess search).
    hash: HashIndex,
}

impl MinLaxityEngine {
    /// An empty engine searching from the last insertion point, with room for `capacity`
    /// entries, all allocated now.
    ///
    /// # Panics
    /// Above [`super::MAX_CAPACITY`] entries, or if the allocator refuses them.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, MinLaxityEngine};
    /// let e = MinLaxityEngine::with_capacity(3);
    /// assert_eq!((e.capacity(), e.name()), (3, "min_laxity"));
    /// ```
    pub fn with_capacity(capacity: usize) -> MinLaxityEngine {
        MinLaxityEngine::build(capacity, Search::Guess)
    }

    /// An empty engine searching through a hash table over deadlines, rebuilt at every
    /// [`expire`](AdmissionEngine::expire), with room for `capacity` entries, all allocated
    /// now.
    ///
    /// # Panics
    /// Above [`super::MAX_CAPACITY`] entries, or if the allocator refuses them.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, MinLaxityEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = MinLaxityEngine::hashed(8);
    /// assert_eq!(e.name(), "hashed");
    /// e.admit(Duration::from_nanos(2), Time::from_nanos(5), Time::ZERO).unwrap();
    /// assert_eq!(e.idle_before(Time::from_nanos(9), Time::ZERO), Duration::from_nanos(7));
    /// ```
    pub fn hashed(capacity: usize) -> MinLaxityEngine {
        MinLaxityEngine::build(capacity, Search::Hashed)
    }

    /// How many shared minimum-laxity pointers (runs of slots with the same least-laxity slot
    /// after them) the list holds now: between 1 and [`len`](AdmissionEngine::len) when it is
    /// not empty. An update visits the pointers after the change, not the slots. O(pointers).
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, MinLaxityEngine};
    /// use tempi::Time;
    /// use std::time::Duration;
    /// let mut e = MinLaxityEngine::with_capacity(4);
    /// // Laxities 5 − 1 = 4 and 7 − 3 = 4: each slot is the (first) least from itself on.
    /// e.admit(Duration::from_nanos(1), Time::from_nanos(5), Time::ZERO).unwrap();
    /// e.admit(Duration::from_nanos(2), Time::from_nanos(7), Time::ZERO).unwrap();
    /// assert_eq!(e.shared_pointers(), 2);
    /// // 3 of work due at 6 leaves it a laxity of 6 − 4 = 2 and cuts the deadline-7 job's
    /// // to 1, the least of all: all three slots now share one pointer, to the last.
    /// e.admit(Duration::from_nanos(3), Time::from_nanos(6), Time::ZERO).unwrap();
    /// assert_eq!(e.shared_pointers(), 1);
    /// ```
    pub fn shared_pointers(&self) -> usize {
        let mut r = if self.head == NIL { NIL } else { self.slot(self.head).run };
        let mut n = 0;
        while r != NIL {
            n += 1;
            r = self.run(r).next;
        }
        n
    }

    fn build(capacity: usize, search: Search) -> MinLaxityEngine {
        let name = if search == Search::Hashed { "hashed" } else { "min_laxity" };
        let capacity = super::checked_capacity(name, capacity);
        MinLaxityEngine {
            slots: super::arena(name, capacity),
            links: super::arena(name, capacity),
            free_slot: NIL,
            head: NIL,
            tail: NIL,
            runs: super::arena(name, capacity),
            free_run: NIL,
            len: 0,
            capacity,
            next_seq: 0,
            hint: NIL,
            search,
            hash: HashIndex::with_capacity(name, if search == Search::Hashed { capacity } else { 0 }),
        }
    }

    fn slot(&self, i: u32) -> &Slot {
        &self.slots[i as usize]
    }

    fn slot_mut(&mut self, i: u32) -> &mut Slot {
        &mut self.slots[i as usize]
    }

    fn link(&self, i: u32) -> &Link {
        &self.links[i as usize]
    }

    fn link_mut(&mut self, i: u32) -> &mut Link {
        &mut self.links[i as usize]
    }

    fn run(&self, r: u32) -> &Run {
        &self.runs[r as usize]
    }

    fn run_mut(&mut self, r: u32) -> &mut Run {
        &mut self.runs[r as usize]
    }

    /// Slot `i`'s finish offset `P_i`.
    fn offset(&self, i: u32) -> i128 {
        let s = self.slot(i);
        s.p_raw + self.run(s.run).shift
    }

    /// Slot `i`'s key `d_i − P_i` (its laxity plus the present instant).
    fn key(&self, i: u32) -> i128 {
        i128::from(self.link(i).deadline) - self.offset(i)
    }

    /// Where the best-guess search starts for `deadline`: the last insertion point, or an end
    /// of the list (`NIL` for the head) when the deadline is nearer that end's than the last
    /// insertion's. The walk's length is the number of slots between the start and the place;
    /// the nearest deadline is the guess of the fewest. With deadlines landing at random
    /// places, a walk from the last insertion point alone is a third of the list on average,
    /// from the nearest of the three a sixth; when insertions cluster, as the paper's
    /// speculative workload's do, the last insertion point is the nearest and is taken.
    fn guess(&self, deadline: u64) -> u32 {
        if self.head == NIL {
            return NIL;
        }
        let (first, last) = (self.link(self.head).deadline, self.link(self.tail).deadline);
        if deadline <= first {
            return NIL;
        }
        if deadline >= last {
            return self.tail;
        }
        let (to_head, to_tail) = (deadline - first, last - deadline);
        let to_hint = if self.hint == NIL { u64::MAX } else { self.link(self.hint).deadline.abs_diff(deadline) };
        if to_hint <= to_head.min(to_tail) {
            self.hint
        } else if to_head <= to_tail {
            NIL
        } else {
            self.tail
        }
    }

    /// The last slot due at or before `deadline` and the one after it (`NIL`: none).
    fn place(&self, deadline: u64) -> (u32, u32) {
        let mut pred = match self.search {
            Search::Guess => self.guess(deadline),
            Search::Hashed => self.hash.start(deadline),
        };
        while pred != NIL && self.link(pred).deadline > deadline {
            pred = self.link(pred).prev;
        }
        let mut succ = if pred == NIL { self.head } else { self.link(pred).next };
        while succ != NIL && self.link(succ).deadline <= deadline {
            pred = succ;
            succ = self.link(succ).next;
        }
        (pred, succ)
    }

    /// The signed idle time before `deadline` at `now`, and the place found for it.
    fn signed_idle_at(&self, deadline: u64, now: u64) -> (i128, u32, u32) {
        let (pred, succ) = self.place(deadline);
        let work = if pred == NIL { 0 } else { self.offset(pred) };
        let min_after = (succ != NIL).then(|| self.key(self.run(self.slot(succ).run).target));
        (signed_idle(deadline, now, work, min_after), pred, succ)
    }

    /// The slot holding `job`, found by its deadline.
    fn find(&self, job: AdmitId) -> Option<u32> {
        let (mut i, _) = self.place(job.deadline);
        while i != NIL && self.link(i).deadline == job.deadline {
            if self.slot(i).seq == job.seq {
                return Some(i);
            }
            i = self.link(i).prev;
        }
        None
    }

    fn alloc_slot(&mut self, slot: Slot, link: Link) -> u32 {
        if self.free_slot == NIL {
            self.slots.push(slot);
            self.links.push(link);
            (self.slots.len() - 1) as u32
        } else {
            let i = self.free_slot;
            self.free_slot = self.link(i).next;
            *self.slot_mut(i) = slot;
            *self.link_mut(i) = link;
            i
        }
    }

    /// A new run between runs `prev` and `next` (either `NIL`).
    fn new_run(&mut self, target: u32, shift: i128, prev: u32, next: u32) -> u32 {
        let run = Run { target, shift, prev, next };
        let r = if self.free_run == NIL {
            self.runs.push(run);
            (self.runs.len() - 1) as u32
        } else {
            let r = self.free_run;
            self.free_run = self.run(r).next;
            *self.run_mut(r) = run;
            r
        };
        if prev != NIL {
            self.run_mut(prev).next = r;
        }
        if next != NIL {
            self.run_mut(next).prev = r;
        }
        r
    }

    /// Unlink run `r` from the run list and free it.
    fn drop_run(&mut self, r: u32) {
        let Run { prev, next, .. } = *self.run(r);
        if prev != NIL {
            self.run_mut(prev).next = next;
        }
        if next != NIL {
            self.run_mut(next).prev = prev;
        }
        self.run_mut(r).next = self.free_run;
        self.free_run = r;
    }

    /// Add `delta` to the finish offsets of every run after `r`.
    fn shift_runs_after(&mut self, r: u32, delta: i128) {
        let mut r = self.run(r).next;
        while r != NIL {
            self.run_mut(r).shift += delta;
            r = self.run(r).next;
        }
    }

    /// Add `delta` to the finish offsets of the slots from `from` to the end of its run.
    fn shift_run_tail(&mut self, from: u32, delta: i128) {
        let target = self.run(self.slot(from).run).target;
        let mut i = from;
        loop {
            self.slot_mut(i).p_raw += delta;
            if i == target {
                break;
            }
            i = self.link(i).next;
        }
    }

    /// Run `r`'s minimum went down (an insertion lowered it, or it is new): the earlier runs
    /// whose minimum is now larger join it.
    fn merge_back(&mut self, r: u32) {
        let key = self.key(self.run(r).target);
        loop {
            let e = self.run(r).prev;
            if e == NIL || self.key(self.run(e).target) <= key {
                return;
            }
            let delta = self.run(e).shift - self.run(r).shift;
            let mut i = self.run(e).target;
            while i != NIL && self.slot(i).run == e {
                let s = self.slot_mut(i);
                s.p_raw += delta;
                s.run = r;
                i = self.link(i).prev;
            }
            self.drop_run(e);
        }
    }

    /// Rebuild the hashed search's table over the present list.
    fn rehash(&mut self) {
        let last = if self.tail == NIL { 0 } else { self.link(self.tail).deadline };
        self.hash.rebuild(&self.links, self.head, self.len, last);
    }

    /// Lower `job`'s remaining time to `new_remaining(old)`: the later jobs finish earlier.
    fn reduce(&mut self, job: AdmitId, new_remaining: impl Fn(u64) -> u64) -> Result<(), AdmitError> {
        let j = self.find(job).ok_or(AdmitError::UnknownJob(job))?;
        self.reduce_slot(j, new_remaining);
        Ok(())
    }

    /// Lower slot `j`'s remaining time to `new_remaining(old)`.
    fn reduce_slot(&mut self, j: u32, new_remaining: impl Fn(u64) -> u64) {
        let old = self.slot(j).remaining;
        let new = new_remaining(old);
        self.slot_mut(j).remaining = new;
        let freed = i128::from(old - new);
        if freed == 0 {
            return;
        }
        let g = self.slot(j).run;
        self.shift_runs_after(g, -freed);
        self.shift_run_tail(j, -freed);
        // The slots of `g` before `j` kept their keys while `j`'s and later ones rose: walk
        // back from `j`, ending a new run at each slot at or below the minimum after it.
        let (mut least, mut cur) = (self.key(self.run(g).target), g);
        let mut i = self.link(j).prev;
        while i != NIL && self.slot(i).run == g {
            let k = self.key(i);
            if k <= least {
                let shift = self.run(g).shift;
                cur = self.new_run(i, shift, self.run(cur).prev, cur);
                least = k;
            }
            self.slot_mut(i).run = cur;
            i = self.link(i).prev;
        }
    }
}

impl AdmissionEngine for MinLaxityEngine {
    fn name(&self) -> &'static str {
        match self.search {
            Search::Guess => "min_laxity",
            Search::Hashed => "hashed",
        }
    }

    fn len(&self) -> usize {
        self.len
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn idle_before(&self, deadline: Time, now: Time) -> Duration {
        idle_span(self.signed_idle_at(deadline.as_nanos(), now.as_nanos()).0)
    }

    fn admit(&mut self, wcet: Duration, deadline: Time, now: Time) -> Result<Admission, AdmitError> {
        admit_prologue(self.len, self.capacity, deadline)?;
        let (deadline, wcet) = (deadline.as_nanos(), span_nanos(wcet));
        if self.search == Search::Hashed && (!self.hash.covers(deadline) || self.hash.outgrown(self.len)) {
            self.rehash();
        }
        let (idle, pred, succ) = self.signed_idle_at(deadline, now.as_nanos());
        if idle < i128::from(wcet) {
            return Ok(Admission::Rejected { idle: idle_span(idle) });
        }
        let id = AdmitId { deadline, seq: self.next_seq };
        self.next_seq += 1;
        let c = i128::from(wcet);
        let offset = if pred == NIL { 0 } else { self.offset(pred) } + c;
        let key = i128::from(deadline) - offset;
        let n = self.alloc_slot(
            Slot { seq: id.seq, remaining: wcet, p_raw: 0, run: NIL },
            Link { deadline, prev: pred, next: succ },
        );
        if pred == NIL {
            self.head = n;
        } else {
            self.link_mut(pred).next = n;
        }
        if succ == NIL {
            self.tail = n;
        } else {
            self.link_mut(succ).prev = n;
        }
        self.len += 1;
        let run = if succ == NIL {
            // Last in the list: its own minimum, in a run of its own at the end.
            let last = if pred == NIL { NIL } else { self.slot(pred).run };
            self.new_run(n, 0, last, NIL)
        } else {
            let g = self.slot(succ).run;
            if c != 0 {
                self.shift_runs_after(g, c);
                self.shift_run_tail(succ, c);
            }
            let target = self.run(g).target;
            if key > self.key(target) {
                // Not a new minimum: it joins the run of the slot after it.
                g
            } else if pred != NIL && self.slot(pred).run == g {
                // A new minimum inside `g`: `g`'s slots before it now point at it, and the
                // rest of `g` (from `succ` to its target) becomes a run of its own.
                let r = self.new_run(target, self.run(g).shift, g, self.run(g).next);
                let mut i = succ;
                loop {
                    self.slot_mut(i).run = r;
                    if i == target {
                        break;
                    }
                    i = self.link(i).next;
                }
                self.run_mut(g).target = n;
                g
            } else {
                // A new minimum at the start of `g`: a run of its own before it.
                self.new_run(n, 0, self.run(g).prev, g)
            }
        };
        let shift = self.run(run).shift;
        let s = self.slot_mut(n);
        s.run = run;
        s.p_raw = offset - shift;
        // The minimum after the insertion point went down by `c`, or is the new slot's.
        self.merge_back(run);
        self.hint = n;
        if self.search == Search::Hashed {
            self.hash.inserted(&self.links, n, deadline);
        }
        Ok(Admission::Accepted(id))
    }

    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError> {
        let ran = span_nanos(ran);
        self.reduce(job, |old| old.saturating_sub(ran))
    }

    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        self.reduce(job, |_| 0)
    }

    fn withdraw(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        let j = self.find(job).ok_or(AdmitError::UnknownJob(job))?;
        // Its time goes back first, as at a finish. A slot with no work left bounds no idle
        // time: the slot before it is due no later and finishes at the same offset, so its key
        // is no larger. Taking it out therefore changes no other slot's minimum, and if it is
        // the target of its run, that run holds it alone (the slot before it, its key no
        // larger than any after, is a target itself).
        self.reduce_slot(j, |_| 0);
        let Link { deadline, prev, next } = *self.link(j);
        let run = self.slot(j).run;
        if self.run(run).target == j {
            self.drop_run(run);
        }
        if prev == NIL {
            self.head = next;
        } else {
            self.link_mut(prev).next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.link_mut(next).prev = prev;
        }
        if self.hint == j {
            self.hint = prev;
        }
        if self.search == Search::Hashed {
            self.hash.withdrawn(j, deadline, prev);
        }
        self.link_mut(j).next = self.free_slot;
        self.free_slot = j;
        self.len -= 1;
        Ok(())
    }

    fn expire(&mut self, now: Time) -> usize {
        let now = now.as_nanos();
        let (mut gone, mut freed) = (0, 0);
        while self.head != NIL && self.link(self.head).deadline < now {
            let i = self.head;
            freed = self.offset(i);
            let r = self.slot(i).run;
            if self.run(r).target == i {
                // The run ends here, and it is the first: it goes with its last slot.
                self.drop_run(r);
            }
            if i == self.hint {
                self.hint = NIL;
            }
            self.head = self.link(i).next;
            self.link_mut(i).next = self.free_slot;
            self.free_slot = i;
            gone += 1;
        }
        self.len -= gone;
        if self.head == NIL {
            self.tail = NIL;
        } else {
            let head = self.head;
            self.link_mut(head).prev = NIL;
            // A uniform shift: every remaining pointer keeps its target.
            let mut r = self.slot(head).run;
            while r != NIL && freed != 0 {
                self.run_mut(r).shift -= freed;
                r = self.run(r).next;
            }
        }
        // A collection that removed nothing leaves the list, and so the table, as they were.
        if self.search == Search::Hashed && gone > 0 {
            self.rehash();
        }
        gone
    }

    fn remaining(&self, job: AdmitId) -> Option<Duration> {
        self.find(job).map(|i| Duration::from_nanos(self.slot(i).remaining))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hashed list filled from empty, with no collection, rebuilds its table as it grows: past
    /// 16 slots the table is always sized for at least half the list. (Built only when the list was empty or
    /// past the table's reach, it was sized for the first few slots until the first collection.)
    #[test]
    fn a_growing_hashed_list_rebuilds_its_table_as_it_doubles() {
        let mut e = MinLaxityEngine::hashed(4096);
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for n in 1..=3_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Deadlines spread over 10 s from the start, in random order, all accepted.
            let d = Time::from_nanos(10_000_000_000 + x % 10_000_000_000);
            assert!(matches!(e.admit(Duration::from_nanos(1), d, Time::ZERO), Ok(Admission::Accepted(_))), "job {n}");
            assert!(
                e.len <= 2 * e.hash.built_for() || e.len <= 16,
                "{} slots, table built for {}",
                e.len,
                e.hash.built_for()
            );
        }
        assert_eq!(e.len, 3_000);
    }
}
