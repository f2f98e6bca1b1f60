//! Checks of the `tree` engine against the linear one, with tiny nodes so that every split,
//! growth and expiry path runs, and of its cached node values against recomputation.

use super::*;
use crate::policy::admit::LinearEngine;

/// The summary of the subtree at `node` (`level` inner levels above its leaves) recomputed
/// from its jobs alone, after checking that every cached value in it (each node's `total`
/// and `suffix_min`, each inner node's copies of its children's last ids and summaries)
/// equals what a full recomputation gives.
fn checked_summary(tree: &TreeEngine, node: Ix, level: usize) -> (AdmitId, Summary) {
    if level == 0 {
        let leaf = &tree.leaves[node as usize];
        let mut fresh = leaf.clone();
        fresh.rebuild();
        assert_eq!(leaf.pre[0], 0);
        assert!((0..leaf.len).all(|i| leaf.pre[i] <= leaf.pre[i + 1]), "remaining times are never negative");
        assert_eq!(leaf.suffix_min[..=leaf.len], fresh.suffix_min[..=leaf.len]);
        assert!(leaf.deadlines[..leaf.len].is_sorted());
        assert!(leaf.deadlines[leaf.len..].iter().all(|&d| d == node::PAD), "padding after the jobs");
        return (leaf.last(), fresh.summary());
    }
    let n = &tree.inners[node as usize];
    assert!(n.len > 0);
    let mut fresh = n.clone();
    for c in 0..n.len {
        let (last, s) = checked_summary(tree, n.children[c], level - 1);
        assert_eq!((n.last(c), n.work[c], n.min_key[c]), (last, s.work, s.min_key), "child {c} at level {level}");
        fresh.work[c] = s.work;
        fresh.min_key[c] = s.min_key;
    }
    fresh.rebuild();
    assert_eq!(n.total, fresh.total);
    assert_eq!(n.suffix_min[..=n.len], fresh.suffix_min[..=n.len]);
    assert!(n.last_deadlines[n.len..].iter().all(|&d| d == node::PAD), "padding after the children");
    (n.last(n.len - 1), fresh.summary())
}

/// Checks that every node off the leftmost path is at least half full and that no node but
/// an empty root is empty (what bounds the arenas); `leftmost`: the node is on that path.
fn check_fill(tree: &TreeEngine, node: Ix, level: usize, leftmost: bool) {
    let (len, min) = if level == 0 {
        (tree.leaves[node as usize].len, tree.leaf_max.div_ceil(2))
    } else {
        (tree.inners[node as usize].len, tree.fan_max.div_ceil(2))
    };
    let root = level == tree.height;
    assert!(len > 0 || (root && level == 0), "an empty node at level {level}");
    assert!(
        leftmost || len >= min,
        "a node off the leftmost path with {len} entries (at least {min}) at level {level}"
    );
    if level > 0 {
        let n = &tree.inners[node as usize];
        for c in 0..n.len {
            check_fill(tree, n.children[c], level - 1, leftmost && c == 0);
        }
    }
}

/// Random calls on a tree with tiny nodes (so it splits, grows and shrinks often) and on
/// the linear engine, which the integration tests check against an oracle: every answer
/// must agree.
#[test]
fn tiny_nodes_agree_with_the_linear_engine() {
    // The last pair: full-size leaves (every group of a leaf used) under tiny inner nodes.
    for (leaf_max, fan_max) in [(2, 3), (3, 3), (4, 4), (5, 3), (2, 5), (LEAF, 3)] {
        let capacity = 200;
        let mut tree = TreeEngine::with_limits(capacity, leaf_max, fan_max);
        let mut linear = LinearEngine::with_capacity(capacity);
        let mut x = 0x1234_5678_9ABC_DEF1u64 ^ leaf_max as u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut now, mut ids, mut tallest) = (0u64, Vec::new(), 0);
        for step in 0..6000 {
            let t = Time::from_nanos(now);
            match next() % 10 {
                0..=4 => {
                    let (c, d) = (Duration::from_nanos(next() % 5), Time::from_nanos(now + next() % 300));
                    let a = tree.admit(c, d, t);
                    assert_eq!(a, linear.admit(c, d, t), "step {step}");
                    if let Ok(Admission::Accepted(id)) = a {
                        ids.push(id);
                    }
                }
                5 => {
                    // Now and then past every held deadline: the latest accepted one, and the
                    // latest instant, which only a query may name.
                    let d = match next() % 8 {
                        0 => Time::MAX,
                        1 => Time::from_nanos(MAX_DEADLINE_NS),
                        _ => Time::from_nanos(now + next() % 320),
                    };
                    assert_eq!(tree.idle_before(d, t), linear.idle_before(d, t), "step {step}");
                }
                6 | 7 if !ids.is_empty() => {
                    let id = ids[(next() % ids.len() as u64) as usize];
                    let ran = Duration::from_nanos(next() % 3);
                    assert_eq!(tree.charge(id, ran), linear.charge(id, ran), "step {step}");
                    assert_eq!(tree.remaining(id), linear.remaining(id));
                }
                8 if !ids.is_empty() => {
                    let id = ids[(next() % ids.len() as u64) as usize];
                    if next() % 2 == 0 {
                        assert_eq!(tree.finish(id), linear.finish(id), "step {step}");
                    } else {
                        // Withdrawn handles stay in `ids`: a second withdrawal is refused.
                        assert_eq!(tree.withdraw(id), linear.withdraw(id), "step {step}");
                    }
                }
                _ => {
                    now += next() % 40;
                    assert_eq!(tree.expire(Time::from_nanos(now)), linear.expire(Time::from_nanos(now)));
                    ids.retain(|id| id.deadline() >= Time::from_nanos(now));
                }
            }
            assert_eq!(tree.len(), linear.len(), "step {step}");
            // The incrementally kept sums and minima equal a recomputation from scratch.
            checked_summary(&tree, tree.root, tree.height);
            check_fill(&tree, tree.root, tree.height, true);
            assert!(tree.leaves.len() <= tree.leaves.capacity() && tree.inners.len() <= tree.inners.capacity());
            tallest = tallest.max(tree.height);
        }
        // The calls did build, and cut back, a tree of several levels.
        assert!(tallest >= if leaf_max == LEAF { 1 } else { 3 }, "{leaf_max}/{fan_max}: height {tallest}");
    }
}

#[test]
fn a_full_tree_at_capacity_never_reallocates() {
    let capacity = 1000;
    let mut tree = TreeEngine::with_limits(capacity, 4, 4);
    let (leaves, inners) = (tree.leaves.capacity(), tree.inners.capacity());
    for round in 0..5u64 {
        for i in 0..capacity as u64 {
            // Deadlines in a scattered order, so splits happen all over the tree.
            let d = Time::from_nanos(round * 10_000 + 1_000 + (i * 7919) % 5_000);
            let r = tree.admit(Duration::ZERO, d, Time::from_nanos(round * 10_000));
            assert!(matches!(r, Ok(Admission::Accepted(_))), "{r:?}");
        }
        assert!(tree.height >= 4);
        assert_eq!(tree.admit(Duration::ZERO, Time::MAX, Time::ZERO), Err(AdmitError::Full { capacity }));
        assert_eq!(tree.expire(Time::from_nanos((round + 1) * 10_000)), capacity);
        assert_eq!((tree.height, tree.len()), (0, 0));
        assert_eq!((tree.leaves.capacity(), tree.inners.capacity()), (leaves, inners));
    }
}

/// Withdrawals anywhere in a full tree, each followed by an admission, at every node size:
/// the nodes left less than half full are merged or refilled, so the arenas sized at
/// construction are never outgrown, every cached value stays right and no node but an empty
/// root is empty; withdrawing everything leaves an empty leaf as the root.
#[test]
fn withdrawals_keep_the_tree_balanced_within_its_arenas() {
    for (leaf_max, fan_max) in [(2, 3), (3, 4), (4, 4), (LEAF, FAN), (LEAF, 3)] {
        let capacity = 600;
        let mut tree = TreeEngine::with_limits(capacity, leaf_max, fan_max);
        let (leaves, inners) = (tree.leaves.capacity(), tree.inners.capacity());
        let mut x = 0xDEAD_BEEF_0123_4567u64 ^ (leaf_max * 31 + fan_max) as u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut held = Vec::new();
        let admit = |tree: &mut TreeEngine, next: &mut dyn FnMut() -> u64| {
            let d = Time::from_nanos(1_000 + next() % 100_000);
            match tree.admit(Duration::from_nanos(next() % 3), d, Time::ZERO) {
                Ok(Admission::Accepted(id)) => id,
                other => panic!("{other:?}"),
            }
        };
        while held.len() < capacity {
            held.push(admit(&mut tree, &mut next));
        }
        let tallest = tree.height;
        for step in 0..4 * capacity {
            let k = (next() % held.len() as u64) as usize;
            let id = held.swap_remove(k);
            let before = tree.idle_before(Time::from_nanos(50_000), Time::ZERO);
            tree.withdraw(id).unwrap();
            assert_eq!(tree.remaining(id), None);
            assert_eq!(tree.withdraw(id), Err(AdmitError::UnknownJob(id)));
            assert!(tree.idle_before(Time::from_nanos(50_000), Time::ZERO) >= before);
            checked_summary(&tree, tree.root, tree.height);
            check_fill(&tree, tree.root, tree.height, true);
            // Refill in three steps of four, so the tree also shrinks for a while.
            if step % 4 != 3 {
                held.push(admit(&mut tree, &mut next));
            }
            if held.len() < capacity / 2 {
                while held.len() < capacity {
                    held.push(admit(&mut tree, &mut next));
                }
            }
            assert_eq!(tree.len(), held.len());
        }
        for id in held.drain(..) {
            tree.withdraw(id).unwrap();
            check_fill(&tree, tree.root, tree.height, true);
        }
        assert!(tallest >= if leaf_max == LEAF { 1 } else { 3 }, "{leaf_max}/{fan_max}: height {tallest}");
        assert_eq!((tree.height, tree.len(), tree.leaves[tree.root as usize].len), (0, 0, 0));
        assert_eq!((tree.leaves.capacity(), tree.inners.capacity()), (leaves, inners), "{leaf_max}/{fan_max}");
    }
}

/// The leaves and inner nodes reachable from the root.
fn live_nodes(tree: &TreeEngine, node: Ix, level: usize) -> (usize, usize) {
    if level == 0 {
        return (1, 0);
    }
    let n = &tree.inners[node as usize];
    n.children[..n.len].iter().fold((0, 1), |(l, i), &c| {
        let (cl, ci) = live_nodes(tree, c, level - 1);
        (l + cl, i + ci)
    })
}

/// Random insertion places with the real node sizes (the admission benchmark's workload:
/// deadlines uniform over a second, the 32 earliest expiring after every 32 admissions): every
/// arena slot is either in the tree or on a free list, and a leaf split in halves leaves the
/// leaves about 70 % full. Prints the footprint (`--nocapture`; `TEMPI_TREE_FILL_JOBS` sets
/// the number of jobs, 100,000 by default).
#[test]
fn random_insertions_fill_the_leaves() {
    let jobs: usize = std::env::var("TEMPI_TREE_FILL_JOBS").ok().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let mut tree = TreeEngine::with_capacity(jobs + 64);
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (ms, spread) = (1_000_000u64, 1_000_000_000u64);
    // The held deadlines, earliest first (`Reverse` in a max-heap).
    let mut held = std::collections::BinaryHeap::new();
    let mut now = 0u64;
    for round in 0..3 * jobs / 32 {
        for _ in 0..32 {
            let d = now + ms + next() % spread;
            let r = tree.admit(Duration::from_micros(1), Time::from_nanos(d), Time::from_nanos(now));
            let Ok(Admission::Accepted(id)) = r else { panic!("{r:?}") };
            tree.finish(id).unwrap();
            held.push(std::cmp::Reverse(d));
        }
        if round >= jobs / 32 {
            // Steady state, as in the benchmark: the 32 earliest go as 32 new ones come.
            let mut last = 0;
            for _ in 0..32 {
                last = held.pop().unwrap().0;
            }
            while held.peek().is_some_and(|r| r.0 == last) {
                held.pop();
            }
            now = now.max(last.saturating_sub(ms));
            tree.expire(Time::from_nanos(last + 1));
            assert_eq!(tree.len(), held.len());
        }
    }
    let (leaves, inners) = live_nodes(&tree, tree.root, tree.height);
    assert_eq!(leaves + tree.free_leaves.len(), tree.leaves.len(), "a leaf neither in the tree nor free");
    assert_eq!(inners + tree.free_inners.len(), tree.inners.len(), "an inner node neither in the tree nor free");
    let fill = tree.len() as f64 / (leaves * LEAF) as f64;
    let bytes = leaves * std::mem::size_of::<Leaf>() + inners * std::mem::size_of::<Inner>();
    println!(
        "{} jobs: {leaves} leaves of {} B ({:.1} % full), {inners} inner nodes of {} B: {:.1} MB, {:.1} B per job",
        tree.len(),
        std::mem::size_of::<Leaf>(),
        100.0 * fill,
        std::mem::size_of::<Inner>(),
        bytes as f64 / 1e6,
        bytes as f64 / tree.len() as f64
    );
    // Random insertions into leaves split in halves give about ln 2 (69 %); much less means
    // uneven splits or leaves left nearly empty.
    assert!(fill >= 0.65, "leaves {:.1} % full", 100.0 * fill);
}

/// An admission right after a query with the same deadline reuses the query's descent, and
/// its idle time only at the same instant: asked at one instant and admitted at a later one,
/// a job is judged at the later one.
#[test]
fn an_admission_after_a_query_is_judged_at_its_own_instant() {
    let mut tree = TreeEngine::with_capacity(8);
    let ns = Duration::from_nanos;
    let d = Time::from_nanos(100);
    tree.admit(ns(10), Time::from_nanos(50), Time::ZERO).unwrap();
    assert_eq!(tree.idle_before(d, Time::ZERO), ns(90));
    // At 40, 50 ns are left before the deadline once the held job's 10 are set aside.
    assert_eq!(tree.admit(ns(80), d, Time::from_nanos(40)), Ok(Admission::Rejected { idle: ns(50) }));
    // The rejection kept its own answer: admitted again at 40, the same.
    assert_eq!(tree.admit(ns(60), d, Time::from_nanos(40)), Ok(Admission::Rejected { idle: ns(50) }));
    // Asked and admitted at the same instant, the kept answer is used.
    assert_eq!(tree.idle_before(d, Time::from_nanos(40)), ns(50));
    assert!(matches!(tree.admit(ns(50), d, Time::from_nanos(40)), Ok(Admission::Accepted(_))));
    assert_eq!(tree.idle_before(d, Time::from_nanos(40)), ns(0));
}
