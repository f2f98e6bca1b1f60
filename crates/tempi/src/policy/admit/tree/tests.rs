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
    (n.last(n.len - 1), fresh.summary())
}

/// Random calls on a tree with tiny nodes (so it splits, grows and shrinks often) and on
/// the linear engine, which the integration tests check against an oracle: every answer
/// must agree.
#[test]
fn tiny_nodes_agree_with_the_linear_engine() {
    for (leaf_max, fan_max) in [(2, 3), (3, 3), (4, 4), (5, 3), (2, 5)] {
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
                    let d = Time::from_nanos(now + next() % 320);
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
                    assert_eq!(tree.finish(id), linear.finish(id), "step {step}");
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
            assert!(tree.leaves.len() <= tree.leaves.capacity() && tree.inners.len() <= tree.inners.capacity());
            tallest = tallest.max(tree.height);
        }
        // The calls did build, and cut back, a tree of several levels.
        assert!(tallest >= 3, "{leaf_max}/{fan_max}: height {tallest}");
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
