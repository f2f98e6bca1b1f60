//! The `tree` admission engine: an augmented B+-tree answering every query in O(log n).
//!
//! Owns [`TreeEngine`] only; the semantics and the trait live in the parent module.
//!
//! Each job `j` has the key `K_j = d_j − P_j`, where `P_j` is the work due at or before it in
//! EDF order, so its laxity is `K_j − now`. For a run of jobs the pair (total work, smallest
//! key counted from the run's start) is a monoid — `combine(l, r) = (l.work + r.work,
//! min(l.min_key, r.min_key − l.work))` — so an inner node keeps, for each child, that pair
//! and the child's last id. Every node also keeps its total work (a leaf keeps the work
//! before each of its jobs, prefix sums, so the descent reads the work before its place in
//! one load) and, per entry, the smallest key of the entries from it on counted from that
//! entry's own start (see [`node`]): a query reads one such minimum per level, and a change
//! at an entry recomputes only the minima up to it. `admit` is one root-to-leaf descent that answers the idle query and records the
//! path, then an insertion into the leaf found and an O(fan-out) update per level on the way
//! back up; charging and finishing change one leaf and update one entry per level;
//! withdrawing removes the job from its leaf and updates (or merges) one entry per level; expiring
//! removes a prefix in EDF order (whole subtrees, then part of one path). No lazy tags.
//!
//! Why a B+-tree rather than a binary tree: a descent reads a few contiguous arrays per level
//! instead of one scattered node per level, so it stays fast when the accepted set no longer
//! fits in the processor's caches (a binary tree of a million jobs is about 20 levels of
//! cache misses). An inner level is scanned forward, one predicted branch per child passed
//! and one likely misprediction where the scan stops (a correctly predicted scan reaches the
//! next node's address before its comparisons complete); the leaf is searched without a
//! branch, since its result only picks entries of the leaf itself. Nodes live in two
//! preallocated arenas (leaves, inner nodes) with free lists, so nothing allocates after
//! construction. Nodes are split when they overflow. Entries leave by expiry, which removes a
//! prefix and merges nothing, and by withdrawal, which removes one job and merges or refills a
//! node left less than half full from a neighbour (level by level while parents lose
//! children); so every node off the leftmost path stays at least half full, which bounds the
//! arenas (see [`TreeEngine::with_capacity`]).

use super::{
    admit_prologue, idle_span, signed_idle, span_nanos, Admission, AdmissionEngine, AdmitError, AdmitId,
    MAX_DEADLINE_NS,
};
use crate::Time;
use std::cell::Cell;
use std::time::Duration;

mod node;

use node::{count_not_after, Inner, Ix, Leaf, Summary, NO_KEY};

/// Most entries in a leaf.
const LEAF: usize = 32;
/// Most children of an inner node.
const FAN: usize = 16;
/// The fewest inner levels at which a descent touches its whole leaf before scanning it (see
/// [`Leaf::touch`]).
const TOUCH_HEIGHT: usize = 3;
/// The fewest inner levels at which a descent touches the lines of its leaf that the search
/// reads (see [`Leaf::touch_search`]): some hundreds of jobs, whose leaves no longer fit the
/// first-level cache.
const TOUCH_SEARCH_HEIGHT: usize = 2;
/// Most inner levels: with at least two children per inner node off the leftmost path, more
/// than 2^32 entries would be needed to go deeper.
const MAX_HEIGHT: usize = 34;

/// The inner nodes and child indices from the root to a leaf.
type Path = [(Ix, usize); MAX_HEIGHT];

/// Where a descent towards a deadline ended: the leaf, the place of a new job in it, the work
/// ordered before that place and the smallest key (counted from the first job) after it, or a
/// stand-in that never lowers the idle time (see [`Probe::idle`]). None of it depends on the
/// present instant.
#[derive(Clone, Copy, Debug)]
struct Probe {
    leaf: Ix,
    at: usize,
    start: i64,
    min_key_after: i64,
}

impl Probe {
    /// The signed idle time before `deadline` at `now` (see the parent module).
    ///
    /// The descent takes into `min_key_after`, at every level with nothing after the place,
    /// `NO_KEY` less the work `u` through that level's child (where a branch on "nothing
    /// after" was often mispredicted), so it may hold such a stand-in `NO_KEY − u` rather than
    /// `NO_KEY` or a real key. A stand-in never wins the minimum here: `u − start` is the work
    /// of jobs after the place, so either it is zero, or some job has a deadline after
    /// `deadline`, which then is below `MAX_DEADLINE_NS` = 2^62; and the work held is at most
    /// 2^62 (every job's, and so the last one's, work up to it fits before its deadline). So
    /// `deadline + u − start ≤ 2^63 − 1 = NO_KEY`, that is
    /// `deadline − now − start ≤ (NO_KEY − u) − now`. A later deadline (a query may name any)
    /// has every job before its place, and only stand-ins after it.
    ///
    /// With the deadline and the instant both at most 2^62 ns, as they are but in a query for
    /// a deadline out of range or at an instant past 2^62 ns, every term fits an `i64`: the
    /// work before the place is at most 2^62 and a key is between −2^62 and `NO_KEY`.
    #[inline]
    fn idle(&self, deadline: u64, now: u64) -> i128 {
        if deadline <= MAX_DEADLINE_NS && now <= MAX_DEADLINE_NS {
            let (deadline, now) = (deadline as i64, now as i64);
            return i128::from((deadline - now - self.start).min(self.min_key_after - now));
        }
        let after = (deadline <= MAX_DEADLINE_NS).then_some(i128::from(self.min_key_after));
        signed_idle(deadline, now, i128::from(self.start), after)
    }
}

/// A descent's deadline and result, and the instant last asked about with them and the signed
/// idle time found for it, so that `admit` at that instant does not compute it again.
#[derive(Clone, Copy, Debug)]
struct Kept {
    deadline: u64,
    probe: Probe,
    now: u64,
    idle: i128,
}

/// The last descent, kept so that `admit` right after `idle_before` with the same deadline
/// (the protocol the engines are made for: ask, then admit what fits) does not descend again.
///
/// Cells rather than one `RefCell`, since `idle_before` takes `&self`: each value is only
/// ever copied in or out whole, so there is no borrow to track (a flag tested and set twice
/// per query), and the path lives in the engine itself rather than behind a pointer.
#[derive(Debug)]
struct LastProbe {
    /// The last descent; `None` once the engine changed.
    probe: Cell<Option<Kept>>,
    /// The inner nodes and child indices the descent went through, root first.
    path: Cell<Path>,
}

/// An augmented B+-tree over the accepted jobs, keyed by (deadline, acceptance order).
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
    leaves: Vec<Leaf>,
    free_leaves: Vec<Ix>,
    inners: Vec<Inner>,
    free_inners: Vec<Ix>,
    /// A leaf when `height` is 0, else an inner node.
    root: Ix,
    /// Inner levels above the leaves.
    height: usize,
    len: usize,
    capacity: usize,
    next_seq: u64,
    /// The last descent; every call that changes the engine clears its probe (see
    /// [`TreeEngine::changed`]).
    last: LastProbe,
    /// Entries per leaf and children per inner node before a split: [`LEAF`] and [`FAN`],
    /// smaller in tests so that small engines split too.
    leaf_max: usize,
    fan_max: usize,
}

impl TreeEngine {
    /// An empty engine with room for `capacity` entries, all allocated now.
    ///
    /// # Panics
    /// Above [`super::MAX_CAPACITY`] entries, or if the allocator refuses them.
    ///
    /// The arenas hold `2·capacity/LEAF + 2` leaves (every leaf but the leftmost is at least
    /// half full) and, level by level, half a fan-out fewer inner nodes.
    ///
    /// ```
    /// use tempi::policy::admit::{AdmissionEngine, TreeEngine};
    /// assert_eq!(TreeEngine::with_capacity(3).capacity(), 3);
    /// ```
    pub fn with_capacity(capacity: usize) -> TreeEngine {
        TreeEngine::with_limits(capacity, LEAF, FAN)
    }

    /// `leaf_max` at least 2 and `fan_max` at least 3, so that a split leaves at least one
    /// entry in each leaf and two children in each inner node.
    fn with_limits(capacity: usize, leaf_max: usize, fan_max: usize) -> TreeEngine {
        let capacity = super::checked_capacity("tree", capacity);
        // The fewest entries (children) a node off the leftmost path has: what a split leaves.
        let (min_leaf, min_fan) = (leaf_max.div_ceil(2), fan_max.div_ceil(2));
        let leaves_cap = capacity / min_leaf + 2;
        // Each inner level has at most (nodes below) / min_fan + 1 nodes, plus one a split may
        // add; the last few levels, of a handful of nodes each, are covered by the margin.
        let (mut below, mut inners_cap) = (leaves_cap, 2 * MAX_HEIGHT);
        while below > 4 {
            below = below / min_fan + 2;
            inners_cap += below;
        }
        let mut leaves: Vec<Leaf> = super::arena("tree", leaves_cap);
        let inners: Vec<Inner> = super::arena("tree", inners_cap);
        // Large arenas on huge pages, advised before any node is written: a descent through
        // a tree of many megabytes then misses the TLB far less often.
        crate::os::huge_pages::advise_huge_pages(leaves.as_ptr().cast(), leaves_cap * std::mem::size_of::<Leaf>());
        crate::os::huge_pages::advise_huge_pages(inners.as_ptr().cast(), inners_cap * std::mem::size_of::<Inner>());
        leaves.push(Leaf::EMPTY);
        TreeEngine {
            leaves,
            free_leaves: super::arena("tree", leaves_cap),
            inners,
            free_inners: super::arena("tree", inners_cap),
            root: 0,
            height: 0,
            len: 0,
            capacity,
            next_seq: 0,
            last: LastProbe { probe: Cell::new(None), path: Cell::new([(0, 0); MAX_HEIGHT]) },
            leaf_max,
            fan_max,
        }
    }

    /// Forget the last descent: every call that changes the engine makes it stale.
    fn changed(&mut self) {
        self.last.probe.set(None);
    }

    fn new_leaf(&mut self) -> Ix {
        match self.free_leaves.pop() {
            Some(ix) => ix,
            None => {
                // Within the bound computed at construction: no reallocation.
                self.leaves.push(Leaf::EMPTY);
                (self.leaves.len() - 1) as Ix
            }
        }
    }

    fn new_inner(&mut self) -> Ix {
        match self.free_inners.pop() {
            Some(ix) => ix,
            None => {
                self.inners.push(Inner::EMPTY);
                (self.inners.len() - 1) as Ix
            }
        }
    }

    /// The last id and summary of node `ix`, a leaf if `leaf`.
    fn node_summary(&self, ix: Ix, leaf: bool) -> (AdmitId, Summary) {
        if leaf {
            let l = &self.leaves[ix as usize];
            (l.last(), l.summary())
        } else {
            let n = &self.inners[ix as usize];
            (n.last(n.len.saturating_sub(1)), n.summary())
        }
    }

    /// Store child `c` of inner node `p`'s last id and summary (`leaf`: the child is a leaf).
    fn refresh(&mut self, p: Ix, c: usize, leaf: bool) {
        let child = self.inners[p as usize].children[c];
        let (last, s) = self.node_summary(child, leaf);
        self.inners[p as usize].set(c, last, s);
    }

    /// One root-to-leaf descent towards the place of a new job with `deadline` (after every
    /// held job with that deadline), recording it in `path`.
    ///
    /// At each level the child holding the place is found by its last deadline, in a scan
    /// that also sums the work of the children it passes; the smallest key after the place is
    /// then one read from the node's `suffix_min`.
    ///
    /// Inlined into its callers: called, it saved and restored six registers and returned
    /// its result through memory, some twenty instructions of a 3,000-job admission's 660.
    #[inline(always)]
    fn descend(&self, deadline: u64, path: &[Cell<(Ix, usize)>]) -> Probe {
        // `start` is the exact work ordered before the current node; `min_key_after` the
        // smallest key (counted from the first job) of the jobs after it.
        let (mut node, mut start, mut min_key_after) = (self.root, 0i64, NO_KEY);
        // Every held deadline is at most `MAX_DEADLINE_NS`, so a later one finds the same
        // place as that; below `PAD`, it stops every scan of an inner node at the padding.
        let key = deadline.min(MAX_DEADLINE_NS);
        for step in path.iter().take(self.height) {
            let n = &self.inners[node as usize];
            // The first child ending after the deadline holds the place; the last child if
            // none does (then every job is before the place).
            // A forward scan rather than a binary search: in order, the prefetcher keeps up.
            // The work of the children before the place is summed in the same scan. The
            // scan has no bound of its own: it stops at the padding after the last child at
            // the latest (see [`Inner`]), so a fixed count of at most `FAN` steps, unrolled,
            // leaves one test and one add per child passed.
            let (mut c, mut before) = (0, 0i64);
            for k in 0..FAN {
                if n.last_deadlines[k] > key {
                    break;
                }
                before += n.work[k];
                c = k + 1;
            }
            // Past every child (only on the path's right edge): the place is in the last.
            if c >= n.len {
                c = n.len - 1;
                before -= n.work[c];
            }
            // With no child after `c`, `after` is `NO_KEY` and this takes a stand-in that
            // never lowers the answer (see [`Probe::idle`]): no branch on it.
            let after = n.suffix_min[c + 1];
            min_key_after = min_key_after.min(after - (start + before + n.work[c]));
            start += before;
            step.set((node, c));
            node = n.children[c];
        }
        let leaf = &self.leaves[node as usize];
        // From three inner levels up the leaves mostly miss every cache; below, they stay in
        // the second-level cache, and only the lines the search reads are worth loading early.
        if self.height >= TOUCH_HEIGHT {
            leaf.touch();
        } else if self.height >= TOUCH_SEARCH_HEIGHT {
            leaf.touch_search();
        }
        // Without a branch here, where the result only picks entries of this leaf (in a large
        // tree, a mispredicted scan would only be found out once the leaf arrived). The inner
        // levels keep a forward scan: there the place gives the next node's address, which a
        // correctly predicted scan reaches before its comparisons complete.
        let at = count_not_after::<{ LEAF / 4 }>(&leaf.deadlines, leaf.len, deadline);
        start += leaf.pre[at];
        min_key_after = min_key_after.min(leaf.suffix_min[at] - start);
        Probe { leaf: node, at, start, min_key_after }
    }

    /// Refresh the entries on `path` from the leaf up after the leaf split, inserting `split`
    /// (the new right sibling of the node below) where one happened, and splitting full nodes
    /// in turn. Above the last split each level hands its last id and summary up, instead of
    /// the next level looking them up again. (A change that split nothing takes
    /// [`fix_up_unsplit`].)
    fn fix_up(&mut self, path: &[(Ix, usize)], mut split: Option<Ix>) {
        let mut below: Option<(AdmitId, Summary)> = None;
        for level in (0..self.height).rev() {
            let (p, c) = path[level];
            let leaf_children = level + 1 == self.height;
            match below {
                Some((last, s)) => self.inners[p as usize].set(c, last, s),
                None => self.refresh(p, c, leaf_children),
            }
            let Some(right) = split.take() else {
                let n = &self.inners[p as usize];
                below = Some((n.last(n.len - 1), n.summary()));
                continue;
            };
            below = None;
            self.inners[p as usize].open(c + 1);
            self.inners[p as usize].children[c + 1] = right;
            self.refresh(p, c + 1, leaf_children);
            // `open` left `total` and `suffix_min` stale.
            self.inners[p as usize].rebuild();
            if self.inners[p as usize].len > self.fan_max {
                let q = self.new_inner();
                let mut upper = Inner::EMPTY;
                let n = &mut self.inners[p as usize];
                n.split_into(n.len / 2, &mut upper);
                self.inners[q as usize] = upper;
                split = Some(q);
            }
        }
        if let Some(right) = split {
            // The root split: a new root above the two halves.
            let leaf_children = self.height == 0;
            let r = self.new_inner();
            let mut root = Inner::EMPTY;
            root.len = 2;
            root.children[0] = self.root;
            root.children[1] = right;
            self.inners[r as usize] = root;
            self.refresh(r, 0, leaf_children);
            self.refresh(r, 1, leaf_children);
            self.inners[r as usize].rebuild();
            self.root = r;
            self.height += 1;
        }
    }

    /// Insert a new job, which is after every held job with its deadline, at the place
    /// `probe` and the kept path (from [`descend`](Self::descend), nothing changed since)
    /// found. The path is read where it is kept: only a split that the leaf's parent cannot
    /// take without splitting too, which changes the engine in more places, copies it out.
    fn insert_at(&mut self, probe: &Probe, id: AdmitId, remaining: u64) {
        let leaf = &mut self.leaves[probe.leaf as usize];
        leaf.insert(probe.at, id, remaining);
        if leaf.len <= self.leaf_max {
            let (last, s) = (leaf.last(), leaf.summary());
            let path = self.last.path.get_mut();
            fix_up_unsplit(&mut self.inners, &path[..self.height], last, s);
        } else {
            // The upper half is written straight into its arena slot: built on the stack
            // from `Leaf::EMPTY` and copied in, it took two copies of a whole leaf per split.
            let r = self.new_leaf();
            let (lower, upper) = two(&mut self.leaves, probe.leaf, r);
            lower.split_into(lower.len / 2, upper);
            // Mostly the parent has room for the new leaf: it takes both halves in place and
            // the levels above are refreshed as after an unsplit change. Else the general walk.
            if let Some(&(p, c)) = self.height.checked_sub(1).map(|h| &self.last.path.get_mut()[h])
                && self.inners[p as usize].len < self.fan_max
            {
                let halves = [(lower.last(), lower.summary()), (upper.last(), upper.summary())];
                let n = &mut self.inners[p as usize];
                n.insert_split(c, r, halves);
                let (last, s) = (n.last(n.len - 1), n.summary());
                let path = self.last.path.get_mut();
                fix_up_unsplit(&mut self.inners, &path[..self.height - 1], last, s);
                return;
            }
            let path = *self.last.path.get_mut();
            self.fix_up(&path, Some(r));
        }
    }

    /// The inner nodes and child indices from the root to the leaf that holds (or would hold)
    /// `id`, and that leaf.
    fn path_to(&self, id: AdmitId, path: &mut Path) -> Ix {
        let mut node = self.root;
        for step in path.iter_mut().take(self.height) {
            let n = &self.inners[node as usize];
            let c = n.route(id);
            *step = (node, c);
            node = n.children[c];
        }
        node
    }

    /// Set `job`'s remaining time to `new_remaining(old)`; false if there is no such job.
    fn update(&mut self, job: AdmitId, new_remaining: impl Fn(u64) -> u64) -> bool {
        let mut path = [(0, 0); MAX_HEIGHT];
        let leaf_ix = self.path_to(job, &mut path);
        let leaf = &mut self.leaves[leaf_ix as usize];
        let Some(at) = leaf.position(job) else {
            return false;
        };
        leaf.set_remaining(at, new_remaining(leaf.remaining(at)));
        let (last, s) = (leaf.last(), leaf.summary());
        fix_up_unsplit(&mut self.inners, &path[..self.height], last, s);
        true
    }

    /// Remove the jobs before `key` from the subtree at `node` (`level` inner levels above its
    /// leaves); how many went.
    fn expire_in(&mut self, node: Ix, level: usize, key: AdmitId) -> usize {
        if level == 0 {
            let leaf = &mut self.leaves[node as usize];
            let gone = leaf.rank(key);
            leaf.drop_front(gone);
            return gone;
        }
        let n = &self.inners[node as usize];
        let whole = (0..n.len).find(|&c| n.last(c) >= key).unwrap_or(n.len);
        let mut gone = 0;
        for c in 0..whole {
            let child = self.inners[node as usize].children[c];
            gone += self.release(child, level - 1);
        }
        self.inners[node as usize].drop_front(whole);
        if self.inners[node as usize].len > 0 {
            let first = self.inners[node as usize].children[0];
            gone += self.expire_in(first, level - 1, key);
            self.refresh(node, 0, level == 1);
        }
        gone
    }

    /// Whether some held deadline is before `t`: the first job of the leftmost leaf is the
    /// earliest (an empty leftmost leaf, should one be left, answers yes, so the full walk
    /// decides).
    fn earliest_before(&self, t: u64) -> bool {
        if self.len == 0 {
            return false;
        }
        let mut node = self.root;
        for _ in 0..self.height {
            node = self.inners[node as usize].children[0];
        }
        let leaf = &self.leaves[node as usize];
        leaf.len == 0 || leaf.deadlines[0] < t
    }

    /// A root left with one child hands over to it; an empty inner root becomes a leaf.
    fn shrink_root(&mut self) {
        while self.height > 0 && self.inners[self.root as usize].len <= 1 {
            let old = self.root;
            if self.inners[old as usize].len == 0 {
                self.root = self.new_leaf();
                self.leaves[self.root as usize] = Leaf::EMPTY;
                self.height = 0;
            } else {
                self.root = self.inners[old as usize].children[0];
                self.height -= 1;
            }
            self.free_inners.push(old);
        }
    }

    /// Child `c` of inner node `p` (a leaf if `leaf`) lost an entry and is less than half
    /// full: it is merged with a neighbour if both fit in one node, else entries move between
    /// them so that both are at least half full. A child without a neighbour (only a node on
    /// the leftmost path may have a single child) stays as it is, or goes if it is empty.
    /// Returns whether `p` lost a child; `p`'s entries are up to date either way.
    fn rebalance(&mut self, p: Ix, c: usize, leaf: bool) -> bool {
        let n = &self.inners[p as usize];
        let (a, b) = if c > 0 {
            (c - 1, c)
        } else if n.len > 1 {
            (c, c + 1)
        } else {
            let only = n.children[0];
            let empty = if leaf { self.leaves[only as usize].len == 0 } else { self.inners[only as usize].len == 0 };
            if !empty {
                self.refresh(p, 0, leaf);
                return false;
            }
            self.free(only, leaf);
            self.inners[p as usize].remove(0);
            return true;
        };
        let (ia, ib) = (n.children[a], n.children[b]);
        let merged = if leaf {
            let (la, lb) = two(&mut self.leaves, ia, ib);
            even_out(la, lb, self.leaf_max, Leaf::EMPTY, Leaf::len, Leaf::append, Leaf::split_into)
        } else {
            let (na, nb) = two(&mut self.inners, ia, ib);
            even_out(na, nb, self.fan_max, Inner::EMPTY, Inner::len, Inner::append, Inner::split_into)
        };
        if merged {
            self.free(ib, leaf);
            self.inners[p as usize].remove(b);
        } else {
            self.refresh(p, b, leaf);
        }
        self.refresh(p, a, leaf);
        merged
    }

    /// Put node `ix` (a leaf if `leaf`) back on its free list.
    fn free(&mut self, ix: Ix, leaf: bool) {
        if leaf {
            self.free_leaves.push(ix);
        } else {
            self.free_inners.push(ix);
        }
    }

    /// Return the subtree at `node` to the free lists; how many jobs it held.
    fn release(&mut self, node: Ix, level: usize) -> usize {
        if level == 0 {
            self.free_leaves.push(node);
            return self.leaves[node as usize].len;
        }
        let mut held = 0;
        for c in 0..self.inners[node as usize].len {
            held += self.release(self.inners[node as usize].children[c], level - 1);
        }
        self.free_inners.push(node);
        held
    }
}

/// Refresh the entries on `path` (root first, one per inner level) after a change in its leaf
/// that did not split it: `last` and `s` are the leaf's last id and summary, and each level
/// hands its own up. The common case of [`TreeEngine::fix_up`], without its checks for
/// splits; a function of the inner arena alone, so that `admit` may pass the path where the
/// engine keeps it.
fn fix_up_unsplit(inners: &mut [Inner], path: &[(Ix, usize)], mut last: AdmitId, mut s: Summary) {
    for &(p, c) in path.iter().rev() {
        let n = &mut inners[p as usize];
        n.set(c, last, s);
        (last, s) = (n.last(n.len - 1), n.summary());
    }
}

/// Nodes `a` and `b` of one arena, both mutable (they differ).
fn two<T>(arena: &mut [T], a: Ix, b: Ix) -> (&mut T, &mut T) {
    let (a, b) = (a as usize, b as usize);
    assert_ne!(a, b);
    if a < b {
        let (lo, hi) = arena.split_at_mut(b);
        (&mut lo[a], &mut hi[0])
    } else {
        let (lo, hi) = arena.split_at_mut(a);
        (&mut hi[0], &mut lo[b])
    }
}

/// Neighbours `a` and `b` (`b` right after `a`, one of them less than half full): `b`'s
/// entries appended to `a` if both fit in one node of at most `max` (returns true: `b` is
/// then unused), else entries moved across so that `a` holds half of them, rounded down, and
/// `b` the rest (both at least half full, since together they overflow one node).
fn even_out<N>(
    a: &mut N,
    b: &mut N,
    max: usize,
    empty: N,
    len: fn(&N) -> usize,
    append: fn(&mut N, &N),
    split_into: fn(&mut N, usize, &mut N),
) -> bool {
    let total = len(a) + len(b);
    if total <= max {
        append(a, b);
        return true;
    }
    let keep = total / 2;
    let mut rest = empty;
    if len(a) > keep {
        // `a`'s last entries go to the front of `b`.
        split_into(a, keep, &mut rest);
        append(&mut rest, b);
    } else {
        // `b`'s first entries go to the end of `a`.
        let moved = keep - len(a);
        split_into(b, moved, &mut rest);
        append(a, b);
    }
    *b = rest;
    false
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
        let deadline = deadline.as_nanos();
        let path: &Cell<[(Ix, usize)]> = &self.last.path;
        let probe = self.descend(deadline, path.as_slice_of_cells());
        let now = now.as_nanos();
        let idle = probe.idle(deadline, now);
        self.last.probe.set(Some(Kept { deadline, probe, now, idle }));
        idle_span(idle)
    }

    fn admit(&mut self, wcet: Duration, deadline: Time, now: Time) -> Result<Admission, AdmitError> {
        admit_prologue(self.len, self.capacity, deadline)?;
        let (deadline, wcet, now) = (deadline.as_nanos(), span_nanos(wcet), now.as_nanos());
        // The kept descent is used in place: its probe taken (the engine is about to change),
        // its path read by the insertion where it is kept; the idle time it found is reused
        // at the same instant.
        let (probe, idle) = match self.last.probe.take() {
            Some(k) if k.deadline == deadline && k.now == now => (k.probe, k.idle),
            Some(k) if k.deadline == deadline => (k.probe, k.probe.idle(deadline, now)),
            _ => {
                let path: &Cell<[(Ix, usize)]> = &self.last.path;
                let probe = self.descend(deadline, path.as_slice_of_cells());
                (probe, probe.idle(deadline, now))
            }
        };
        if idle < i128::from(wcet) {
            // Nothing changed: the descent stays valid for another try.
            self.last.probe.set(Some(Kept { deadline, probe, now, idle }));
            return Ok(Admission::Rejected { idle: idle_span(idle) });
        }
        let id = AdmitId { deadline, seq: self.next_seq };
        self.next_seq += 1;
        self.insert_at(&probe, id, wcet);
        self.len += 1;
        Ok(Admission::Accepted(id))
    }

    fn charge(&mut self, job: AdmitId, ran: Duration) -> Result<(), AdmitError> {
        self.changed();
        let ran = span_nanos(ran);
        if self.update(job, |old| old.saturating_sub(ran)) {
            Ok(())
        } else {
            Err(AdmitError::UnknownJob(job))
        }
    }

    fn finish(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        self.changed();
        if self.update(job, |_| 0) {
            Ok(())
        } else {
            Err(AdmitError::UnknownJob(job))
        }
    }

    fn withdraw(&mut self, job: AdmitId) -> Result<(), AdmitError> {
        let mut path = [(0, 0); MAX_HEIGHT];
        let leaf_ix = self.path_to(job, &mut path);
        let at = self.leaves[leaf_ix as usize].position(job).ok_or(AdmitError::UnknownJob(job))?;
        self.changed();
        self.leaves[leaf_ix as usize].remove(at);
        self.len -= 1;
        // Unlike expiry, a withdrawal may empty any node: a node left less than half full is
        // merged with or refilled from a neighbour, level by level while parents lose
        // children, so that every node off the leftmost path stays at least half full, which
        // bounds the arenas.
        let (min_leaf, min_fan) = (self.leaf_max.div_ceil(2), self.fan_max.div_ceil(2));
        // The node at depth `level` (the leaf at depth `height`) changed.
        let mut level = self.height;
        let mut short = self.leaves[leaf_ix as usize].len < min_leaf;
        while level > 0 && short {
            let (p, c) = path[level - 1];
            let lost = self.rebalance(p, c, level == self.height);
            level -= 1;
            short = lost && self.inners[p as usize].len < min_fan;
        }
        if level > 0 {
            let leaf = level == self.height;
            let node = if leaf { leaf_ix } else { path[level].0 };
            let (last, s) = self.node_summary(node, leaf);
            fix_up_unsplit(&mut self.inners, &path[..level], last, s);
        }
        self.shrink_root();
        Ok(())
    }

    fn expire(&mut self, now: Time) -> usize {
        if !self.earliest_before(now.as_nanos()) {
            // Nothing to remove: the engine, and the kept descent, stay as they are. Callers
            // expire before every query, so this is the common case.
            return 0;
        }
        self.changed();
        // Ids order by deadline first, so this removes every deadline before `now`.
        let gone = self.expire_in(self.root, self.height, AdmitId { deadline: now.as_nanos(), seq: 0 });
        self.len -= gone;
        self.shrink_root();
        gone
    }

    fn remaining(&self, job: AdmitId) -> Option<Duration> {
        let mut path = [(0, 0); MAX_HEIGHT];
        let leaf = &self.leaves[self.path_to(job, &mut path) as usize];
        let at = leaf.position(job)?;
        Some(Duration::from_nanos(leaf.remaining(at)))
    }
}

#[cfg(test)]
mod tests;
