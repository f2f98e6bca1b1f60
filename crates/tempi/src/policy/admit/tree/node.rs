//! The nodes of the `tree` engine: leaves of jobs and inner nodes of children, each with the
//! cached sums and suffix minima a descent reads.
//!
//! Owns the node layouts and the upkeep of their cached values; the tree's shape (routing,
//! splits, the arenas) belongs to the parent module.

use super::{FAN, LEAF};
use crate::policy::admit::AdmitId;

/// Index into one of the arenas.
pub(super) type Ix = u32;

/// The `min_key` of an empty run: above any real key (keys are at most
/// [`MAX_DEADLINE_NS`](crate::policy::admit::MAX_DEADLINE_NS), 2^62), and never shifted, so it
/// stays recognisable. Less any run's work (at most 2^62 too) it is still above every real key.
pub(super) const NO_KEY: i64 = i64::MAX;

/// What a leaf's deadline array holds past the last job: above every deadline a job can have
/// (at most [`MAX_DEADLINE_NS`](crate::policy::admit::MAX_DEADLINE_NS)), so that a search may
/// read the whole array and find nothing past the jobs to count.
pub(super) const PAD: u64 = u64::MAX;

/// Slots of each leaf array: [`LEAF`] jobs, one more before a split, and room for an insertion
/// into a full leaf to move a whole group of four from its last job on (see [`Leaf::insert`]):
/// the top group starts at slot `LEAF` at most and is written to the four slots after it.
const SLOTS: usize = LEAF + 5;

/// How many of the first `n` deadlines of `keys` are at or before `deadline`: the place of a
/// new job with that deadline, after every one with the same deadline. `keys` holds at least
/// `4·W` slots, in order, the slots past the first `n` being [`PAD`].
///
/// Without a branch: the three quarter ends say which quarter holds the place, and the
/// entries of that quarter are counted, where a forward scan stops at an unpredictable entry
/// (a mispredicted branch per search).
#[inline]
pub(super) fn count_not_after<const W: usize>(keys: &[u64], n: usize, deadline: u64) -> usize {
    let q = usize::from(keys[W - 1] <= deadline)
        + usize::from(keys[2 * W - 1] <= deadline)
        + usize::from(keys[3 * W - 1] <= deadline);
    let within: usize = keys[q * W..q * W + W].iter().map(|&d| usize::from(d <= deadline)).sum();
    // A deadline of `PAD` counts the padding too.
    (q * W + within).min(n)
}

/// A run's summary: its total remaining work and its smallest `d − P` with `P` counted from
/// the run's first job.
///
/// Every value fits an `i64`: deadlines are at most 2^62 ns, and an accepted job's work is
/// never more than the time before its deadline, so no sum of work passes 2^62 either.
#[derive(Clone, Copy, Debug)]
pub(super) struct Summary {
    pub(super) work: i64,
    pub(super) min_key: i64,
}

/// Up to [`LEAF`] jobs in EDF order (spare slots: a leaf overflows, then splits, and an
/// insertion moves groups of four, see [`SLOTS`]). Struct of arrays: the admission search
/// reads only deadlines.
///
/// The jobs' remaining times are kept as prefix sums: `pre[i]` is the work of the jobs before
/// job `i` (`pre[0] = 0`, `pre[len]` the leaf's total), so a descent reads the work before its
/// place in one load, and a job's remaining time is `pre[i + 1] − pre[i]`.
///
/// `suffix_min[i]` is the smallest key of the jobs from `i` on, counted from job `i`'s start
/// ([`NO_KEY`] at `len`): `suffix_min[i] = min(d_i, suffix_min[i + 1]) − c_i`. Counted from
/// each job's own start, an entry depends only on the jobs from it on, so a change at `i`
/// recomputes the entries up to `i` and no further, a shift moves them unchanged, and a query
/// reads one entry.
#[derive(Clone, Debug)]
pub(super) struct Leaf {
    pub(super) len: usize,
    /// [`PAD`] past the last job (see [`count_not_after`]).
    pub(super) deadlines: [u64; SLOTS],
    pub(super) pre: [i64; SLOTS],
    pub(super) suffix_min: [i64; SLOTS],
    pub(super) seqs: [u64; SLOTS],
}

/// Up to [`FAN`] children in EDF order, with each child's last id (split into deadline and
/// sequence number, so the admission search reads only deadlines) and summary (one spare
/// slot, as for leaves), and the children's suffix minimum as in [`Leaf`]:
/// `suffix_min[c] = min(min_key[c], suffix_min[c + 1] − work[c])`.
#[derive(Clone, Debug)]
pub(super) struct Inner {
    pub(super) len: usize,
    pub(super) children: [Ix; FAN + 1],
    /// [`PAD`] past the last child, so that a scan for a deadline stops there at the latest.
    pub(super) last_deadlines: [u64; FAN + 1],
    pub(super) last_seqs: [u64; FAN + 1],
    pub(super) work: [i64; FAN + 1],
    pub(super) min_key: [i64; FAN + 1],
    pub(super) suffix_min: [i64; FAN + 2],
    /// The sum of `work`.
    pub(super) total: i64,
}

impl Leaf {
    pub(super) const EMPTY: Leaf =
        Leaf { len: 0, deadlines: [PAD; SLOTS], pre: [0; SLOTS], suffix_min: [NO_KEY; SLOTS], seqs: [0; SLOTS] };

    /// Load one word of every cache line of the leaf at once. The loads do not depend on one
    /// another, so a leaf that is not in the caches arrives in about one memory latency rather
    /// than one per line as the scans reach them: a software prefetch in safe code. It pays
    /// off when the accepted set is much larger than the caches. Written out load by load:
    /// a loop over the lines cost some eighty instructions more per admission.
    #[inline]
    pub(super) fn touch(&self) {
        let s = &self.seqs;
        std::hint::black_box(self.search_lines() ^ s[0] ^ s[8] ^ s[16] ^ s[24] ^ s[32]);
    }

    /// Load one word of every cache line that the descent's search reads (deadlines, `pre`,
    /// `suffix_min`), as [`touch`](Leaf::touch) does for the whole leaf. In a tree of a few
    /// thousand jobs the leaves are in the second-level cache, not the first, and the search
    /// reads them in three dependent rounds (quarter ends, one quarter, then the place's
    /// `pre` and `suffix_min`): loaded at once, the second and third rounds find them in the
    /// first-level cache.
    #[inline]
    pub(super) fn touch_search(&self) {
        std::hint::black_box(self.search_lines());
    }

    /// One word of each cache line of `deadlines`, `pre` and `suffix_min`, combined: every
    /// eighth slot, the five words covering the [`SLOTS`] of an array.
    #[inline]
    fn search_lines(&self) -> u64 {
        const _: () = assert!(SLOTS <= 5 * 8);
        let (d, p, m) = (&self.deadlines, &self.pre, &self.suffix_min);
        (d[0] ^ d[8] ^ d[16] ^ d[24] ^ d[32])
            ^ (p[0] ^ p[8] ^ p[16] ^ p[24] ^ p[32]) as u64
            ^ (m[0] ^ m[8] ^ m[16] ^ m[24] ^ m[32]) as u64
    }

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn id(&self, i: usize) -> AdmitId {
        AdmitId { deadline: self.deadlines[i], seq: self.seqs[i] }
    }

    /// The last id (a placeholder for an empty leaf, which only an empty root is).
    pub(super) fn last(&self) -> AdmitId {
        self.len.checked_sub(1).map_or(AdmitId { deadline: 0, seq: 0 }, |i| self.id(i))
    }

    /// Job `i`'s remaining time.
    pub(super) fn remaining(&self, i: usize) -> u64 {
        (self.pre[i + 1] - self.pre[i]) as u64
    }

    /// The total remaining time of the jobs.
    pub(super) fn total(&self) -> i64 {
        self.pre[self.len]
    }

    /// Recompute `suffix_min` from job `from` back to the first (the entries after `from`
    /// depend only on the jobs after it).
    pub(super) fn refix_all(&mut self, from: usize) {
        let mut min_key = self.suffix_min[from + 1];
        for i in (0..=from).rev() {
            // NO_KEY (nothing after the last job) is above every deadline and drops out.
            min_key = min_key.min(self.deadlines[i] as i64) - (self.pre[i + 1] - self.pre[i]);
            self.suffix_min[i] = min_key;
        }
    }

    /// Recompute `suffix_min` after a change at job `from` only, when `suffix_min[from]`
    /// still holds the value the jobs before `from` were computed from. An entry depends only
    /// on its job and the entry after it, so as soon as a recomputed entry equals the stored
    /// one, every entry before it is already right and the walk stops. It usually stops at
    /// once: the smallest key after a job is mostly that of a job close to it.
    pub(super) fn refix(&mut self, from: usize) {
        let mut i = from + 1;
        let mut min_key = self.suffix_min[i];
        while i > 0 {
            i -= 1;
            min_key = min_key.min(self.deadlines[i] as i64) - (self.pre[i + 1] - self.pre[i]);
            if self.suffix_min[i] == min_key {
                return;
            }
            self.suffix_min[i] = min_key;
        }
    }

    /// Recompute `suffix_min` from the jobs (`pre` is kept up to date by every change): what
    /// the tests compare every cached minimum with.
    #[cfg(test)]
    pub(super) fn rebuild(&mut self) {
        self.suffix_min[self.len] = NO_KEY;
        if let Some(last) = self.len.checked_sub(1) {
            self.refix_all(last);
        }
    }

    pub(super) fn summary(&self) -> Summary {
        Summary { work: self.total(), min_key: self.suffix_min[0] }
    }

    /// Set job `i`'s remaining time.
    pub(super) fn set_remaining(&mut self, i: usize, remaining: u64) {
        let delta = remaining as i64 - self.remaining(i) as i64;
        for p in &mut self.pre[i + 1..=self.len] {
            *p += delta;
        }
        self.refix(i);
    }

    /// Where `id` is.
    pub(super) fn position(&self, id: AdmitId) -> Option<usize> {
        (0..self.len).find(|&i| self.deadlines[i] == id.deadline && self.seqs[i] == id.seq)
    }

    /// The number of jobs before `id`.
    pub(super) fn rank(&self, id: AdmitId) -> usize {
        (0..self.len).find(|&i| self.id(i) >= id).unwrap_or(self.len)
    }

    pub(super) fn insert(&mut self, at: usize, id: AdmitId, remaining: u64) {
        let len = self.len;
        let w = remaining as i64;
        // The entries from `at` to `len` (`PAD` and `NO_KEY` there) move one place on with
        // their jobs, unchanged; the work before each of them grows by the new job's. They
        // move in groups of four from the top (each group is read before it is written over):
        // two 16-byte loads and stores per array and group, where one entry at a time takes a
        // load and a store per entry and array, and a `memmove` per array costs more to set
        // up than to copy a dozen entries. The top group may reach past `len + 1`, into the
        // spare slots (see `SLOTS`): what it moves there is padding, and past `len` nothing
        // is read but `deadlines`, which stay `PAD`. A whole number of groups also leaves no
        // remainder to branch on: the loop's end is the one unpredictable branch.
        let top = at + (len - at) / 4 * 4;
        assert!(top + 4 < SLOTS);
        let mut j = top;
        loop {
            self.deadlines.copy_within(j..j + 4, j + 1);
            self.seqs.copy_within(j..j + 4, j + 1);
            self.suffix_min.copy_within(j..j + 4, j + 1);
            let moved: [i64; 4] = std::array::from_fn(|k| self.pre[j + k] + w);
            self.pre[j + 1..j + 5].copy_from_slice(&moved);
            if j == at {
                break;
            }
            j -= 4;
        }
        self.deadlines[at] = id.deadline;
        self.seqs[at] = id.seq;
        self.len += 1;
        self.refix(at);
    }

    /// Remove job `at`.
    pub(super) fn remove(&mut self, at: usize) {
        let len = self.len;
        let w = self.pre[at + 1] - self.pre[at];
        self.deadlines.copy_within(at + 1..len, at);
        self.deadlines[len - 1] = PAD;
        self.seqs.copy_within(at + 1..len, at);
        for i in at + 1..len {
            self.pre[i] = self.pre[i + 1] - w;
        }
        // Counted from each job's own start, the minima of the jobs after it do not change.
        self.suffix_min.copy_within(at + 1..=len, at);
        self.len -= 1;
        if at > 0 {
            self.refix(at - 1);
        }
    }

    /// Append the jobs of `other`, which all come after this leaf's.
    pub(super) fn append(&mut self, other: &Leaf) {
        let (n, m) = (self.len, other.len);
        self.deadlines[n..n + m].copy_from_slice(&other.deadlines[..m]);
        self.seqs[n..n + m].copy_from_slice(&other.seqs[..m]);
        let base = self.pre[n];
        for (p, &o) in self.pre[n..=n + m].iter_mut().zip(&other.pre[..=m]) {
            *p = base + o;
        }
        self.suffix_min[n..=n + m].copy_from_slice(&other.suffix_min[..=m]);
        self.len = n + m;
        if let Some(last) = n.checked_sub(1) {
            self.refix_all(last);
        }
    }

    /// Move the entries from `half` on into `upper`, whose entries it replaces (a leaf off
    /// the free list may be passed as it is: every value read is written).
    pub(super) fn split_into(&mut self, half: usize, upper: &mut Leaf) {
        let moved = self.len - half;
        upper.len = moved;
        upper.deadlines[..moved].copy_from_slice(&self.deadlines[half..self.len]);
        upper.deadlines[moved..].fill(PAD);
        upper.seqs[..moved].copy_from_slice(&self.seqs[half..self.len]);
        let base = self.pre[half];
        for (u, &p) in upper.pre[..=moved].iter_mut().zip(&self.pre[half..=self.len]) {
            *u = p - base;
        }
        // Counted from each job's own start, the upper half's minima do not change.
        upper.suffix_min[..=moved].copy_from_slice(&self.suffix_min[half..=self.len]);
        self.deadlines[half..self.len].fill(PAD);
        self.len = half;
        // The lower half's minima were computed from the entry at `half`, now gone: with
        // nothing after them they are recomputed from the last back, and, as after any change
        // at one entry, only until one comes out as stored (usually at once: the smallest key
        // after a job is mostly its own or a close one's).
        self.suffix_min[half] = NO_KEY;
        if let Some(last) = half.checked_sub(1) {
            self.refix(last);
        }
    }

    /// Drop the first `k` entries.
    pub(super) fn drop_front(&mut self, k: usize) {
        let len = self.len;
        self.deadlines.copy_within(k..len, 0);
        self.deadlines[len - k..len].fill(PAD);
        self.seqs.copy_within(k..len, 0);
        let base = self.pre[k];
        for i in 0..=len - k {
            self.pre[i] = self.pre[i + k] - base;
        }
        // The minima of the jobs left do not depend on the jobs before them.
        self.suffix_min.copy_within(k..=len, 0);
        self.len -= k;
    }
}

impl Inner {
    pub(super) const EMPTY: Inner = Inner {
        len: 0,
        children: [0; FAN + 1],
        last_deadlines: [PAD; FAN + 1],
        last_seqs: [0; FAN + 1],
        work: [0; FAN + 1],
        min_key: [0; FAN + 1],
        suffix_min: [NO_KEY; FAN + 2],
        total: 0,
    };

    pub(super) fn len(&self) -> usize {
        self.len
    }

    pub(super) fn last(&self, c: usize) -> AdmitId {
        AdmitId { deadline: self.last_deadlines[c], seq: self.last_seqs[c] }
    }

    /// Store child `c`'s last id and summary, and update `total` and `suffix_min` (valid
    /// only if they were before; after [`open`](Inner::open), [`rebuild`](Inner::rebuild)).
    pub(super) fn set(&mut self, c: usize, last: AdmitId, s: Summary) {
        self.last_deadlines[c] = last.deadline;
        self.last_seqs[c] = last.seq;
        self.total += s.work - self.work[c];
        self.work[c] = s.work;
        self.min_key[c] = s.min_key;
        self.refix(c);
    }

    /// Child `c` split in two: `halves` are the last ids and summaries of its lower half (which
    /// stays child `c`) and of its upper half, the node `right`, which becomes child `c + 1`.
    /// The node must have room for one more child, and its entries must be up to date but for
    /// child `c`'s. Cheaper than [`open`](Inner::open) then [`rebuild`](Inner::rebuild): the
    /// entries after `c + 1` move with their suffix minima, which do not change, and those
    /// before it are recomputed only until one comes out as stored.
    pub(super) fn insert_split(&mut self, c: usize, right: Ix, halves: [(AdmitId, Summary); 2]) {
        let [(lower_last, lower), (upper_last, upper)] = halves;
        self.open(c + 1);
        self.children[c + 1] = right;
        self.last_deadlines[c + 1] = upper_last.deadline;
        self.last_seqs[c + 1] = upper_last.seq;
        self.work[c + 1] = upper.work;
        self.min_key[c + 1] = upper.min_key;
        self.total += upper.work;
        // The slot holds a stale copy (`open` moved its value on), so it is written, not
        // compared as `refix` would.
        self.suffix_min[c + 1] = upper.min_key.min(self.suffix_min[c + 2] - upper.work);
        self.set(c, lower_last, lower);
    }

    /// Recompute `suffix_min` from child `from` back to the first.
    pub(super) fn refix_all(&mut self, from: usize) {
        let mut min_key = self.suffix_min[from + 1];
        for c in (0..=from).rev() {
            // NO_KEY less a child's work is still above every real key, so it drops out.
            min_key = self.min_key[c].min(min_key - self.work[c]);
            self.suffix_min[c] = min_key;
        }
    }

    /// Recompute `suffix_min` after a change at child `from` only, stopping at the first
    /// entry that comes out as stored (see [`Leaf::refix`]).
    pub(super) fn refix(&mut self, from: usize) {
        let mut min_key = self.suffix_min[from + 1];
        for c in (0..=from).rev() {
            min_key = self.min_key[c].min(min_key - self.work[c]);
            if self.suffix_min[c] == min_key {
                return;
            }
            self.suffix_min[c] = min_key;
        }
    }

    /// Recompute `total` and `suffix_min` from the children's summaries.
    pub(super) fn rebuild(&mut self) {
        self.total = self.work[..self.len].iter().sum();
        self.suffix_min[self.len] = NO_KEY;
        if let Some(last) = self.len.checked_sub(1) {
            self.refix_all(last);
        }
    }

    pub(super) fn summary(&self) -> Summary {
        Summary { work: self.total, min_key: self.suffix_min[0] }
    }

    /// The child that holds `id`, or would: the first whose last id is not below it (the last
    /// child if every id is below).
    pub(super) fn route(&self, id: AdmitId) -> usize {
        (0..self.len - 1).find(|&c| self.last(c) >= id).unwrap_or(self.len - 1)
    }

    /// Make room at `at` (the entries from `at` move one place on).
    pub(super) fn open(&mut self, at: usize) {
        let len = self.len;
        self.children.copy_within(at..len, at + 1);
        self.last_deadlines.copy_within(at..len, at + 1);
        self.last_seqs.copy_within(at..len, at + 1);
        self.work.copy_within(at..len, at + 1);
        self.min_key.copy_within(at..len, at + 1);
        self.suffix_min.copy_within(at..len + 1, at + 1);
        self.len += 1;
    }

    /// Remove child `c` (its entries from the next on move one place back).
    pub(super) fn remove(&mut self, c: usize) {
        let len = self.len;
        self.children.copy_within(c + 1..len, c);
        self.last_deadlines.copy_within(c + 1..len, c);
        self.last_deadlines[len - 1] = PAD;
        self.last_seqs.copy_within(c + 1..len, c);
        self.work.copy_within(c + 1..len, c);
        self.min_key.copy_within(c + 1..len, c);
        self.len -= 1;
        self.rebuild();
    }

    /// Append the children of `other`, which all come after this node's.
    pub(super) fn append(&mut self, other: &Inner) {
        let (n, m) = (self.len, other.len);
        self.children[n..n + m].copy_from_slice(&other.children[..m]);
        self.last_deadlines[n..n + m].copy_from_slice(&other.last_deadlines[..m]);
        self.last_seqs[n..n + m].copy_from_slice(&other.last_seqs[..m]);
        self.work[n..n + m].copy_from_slice(&other.work[..m]);
        self.min_key[n..n + m].copy_from_slice(&other.min_key[..m]);
        self.len = n + m;
        self.rebuild();
    }

    /// Move the entries from `half` on into `upper` (an empty node).
    pub(super) fn split_into(&mut self, half: usize, upper: &mut Inner) {
        let (len, moved) = (self.len, self.len - half);
        upper.len = moved;
        upper.children[..moved].copy_from_slice(&self.children[half..len]);
        upper.last_deadlines[..moved].copy_from_slice(&self.last_deadlines[half..len]);
        upper.last_seqs[..moved].copy_from_slice(&self.last_seqs[half..len]);
        upper.work[..moved].copy_from_slice(&self.work[half..len]);
        upper.min_key[..moved].copy_from_slice(&self.min_key[half..len]);
        self.last_deadlines[half..len].fill(PAD);
        self.len = half;
        self.rebuild();
        upper.rebuild();
    }

    /// Drop the first `k` entries.
    pub(super) fn drop_front(&mut self, k: usize) {
        let len = self.len;
        self.children.copy_within(k..len, 0);
        self.last_deadlines.copy_within(k..len, 0);
        self.last_deadlines[len - k..len].fill(PAD);
        self.last_seqs.copy_within(k..len, 0);
        self.work.copy_within(k..len, 0);
        self.min_key.copy_within(k..len, 0);
        self.len -= k;
        self.rebuild();
    }
}
