//! The indexed blocking terms and the per-period response-time analysis give exactly what the
//! first, unindexed formulas give (`reference.rs`), on random task sets: ties in priority,
//! mixed protocols, declared and computed ceilings, several sections per task, some held with
//! a guard.

use std::time::Duration;

use proptest::prelude::*;

use super::reference::{every_protocol, Reference};
use super::*;

/// Every protocol, MSRP included (it is not in [`Protocol::ALL`]).
fn protocols() -> Vec<Protocol> {
    every_protocol()
}

/// The list the comparisons iterate over leaves out no protocol a lock protocol maps to.
#[test]
fn the_comparisons_cover_every_protocol() {
    let listed = protocols();
    for name in crate::policy::lock::names() {
        if let Ok(p) = Protocol::for_lock_policy(&name) {
            assert!(listed.contains(&p), "lock protocol {name} maps to {p}, which the comparisons leave out");
        }
    }
    for p in Protocol::ALL {
        assert!(listed.contains(&p), "{p}");
    }
    for (k, p) in listed.iter().enumerate() {
        assert!(!listed[..k].contains(p), "{p} listed twice");
    }
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// Mixed protocols counted by hand, so that the reference is checked against the documented
/// combination and not only against the production code: SRP's and MSRP's terms combine by
/// their maximum, the other protocols' terms add.
#[test]
fn mixed_protocols_combine_as_documented() {
    let mut ts = TaskSet::new();
    let srp = ts.add_resource(Resource::new("s", Protocol::Srp));
    let pcp = ts.add_resource(Resource::new("p", Protocol::Pcp));
    let global = ts.add_resource(Resource::new("g", Protocol::Msrp));
    let bpi = ts.add_resource(Resource::new("b", Protocol::Bpi));
    ts.add_task(
        Task::new("h", us(10), us(100)).priority(3).section(srp, us(1)).section(pcp, us(1)).section(bpi, us(1)),
    );
    ts.add_task(Task::new("l1", us(10), us(200)).priority(1).section(srp, us(2)).section(global, us(3)));
    ts.add_task(Task::new("l2", us(10), us(200)).priority(2).section(pcp, us(4)).section(bpi, us(1)));
    let reference = Reference(&ts);
    // max(srp 2, msrp 3) + pcp 4 + bpi 1.
    assert_eq!(reference.blocking(0), Some(us(8)));
    assert_eq!(ts.blocking(0), Some(us(8)));
    // g's ceiling (1, its only user) cannot block h: the longest of 2, 4 and 1.
    assert_eq!(reference.blocking_under(0, Protocol::Pcp), Some(us(4)));
    // By task 2 + 4, by resource 2 + 4 + 1: the smaller.
    assert_eq!(reference.blocking_under(0, Protocol::Bpi), Some(us(6)));
    // Non-preemptible sections block whatever the ceiling: g's 3 is not the longest, p's 4 is.
    assert_eq!(reference.blocking_under(0, Protocol::Km), Some(us(4)));
    // l2 shares p with h and l1 shares s, with l2 between l1 and h: unbounded.
    assert_eq!(reference.blocking_under(0, Protocol::Bp), None);
}

/// (protocol index, declared ceiling, restart cost in µs) per resource; per task (period
/// index, WCET beyond its sections, deadline numerator in eighths of the period, priority,
/// sections as (resource, µs, held with a guard)).
type Raw = (Vec<(usize, Option<i32>, u64)>, Vec<(usize, u64, u64, i32, Vec<(usize, u64, bool)>)>);

const PERIODS: [u64; 6] = [10, 12, 20, 25, 40, 100];

fn raw() -> impl Strategy<Value = Raw> {
    (
        prop::collection::vec((0..protocols().len(), prop::option::of(0i32..5), 0u64..3), 0..4),
        prop::collection::vec(
            (
                0..PERIODS.len(),
                0u64..8,
                4u64..12,
                0i32..5,
                prop::collection::vec((0usize..4, 1u64..4, prop::bool::weighted(0.3)), 0..3),
            ),
            1..9,
        ),
    )
}

fn build((resources, tasks): &Raw) -> TaskSet {
    let mut ts = TaskSet::new();
    for (k, &(p, ceiling, cost)) in resources.iter().enumerate() {
        let mut r = Resource::new(format!("r{k}"), protocols()[p]).restart_cost(us(cost));
        if let Some(c) = ceiling {
            r = r.ceiling(c);
        }
        ts.add_resource(r);
    }
    for (i, (period, extra, eighths, priority, sections)) in tasks.iter().enumerate() {
        let period = us(PERIODS[*period]);
        let sections: Vec<(usize, u64, bool)> =
            sections.iter().filter(|&&(r, _, _)| r < resources.len()).copied().collect();
        let wcet = us(extra + sections.iter().map(|&(_, d, _)| d).sum::<u64>());
        let mut t =
            Task::new(format!("t{i}"), wcet, period).deadline(period * (*eighths as u32) / 8).priority(*priority);
        for (r, d, guarded) in sections {
            t = if guarded { t.guarded_section(r, us(d)) } else { t.section(r, us(d)) };
        }
        ts.add_task(t);
    }
    ts
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_indexed_analysis_matches_the_reference(raw in raw()) {
        let ts = build(&raw);
        prop_assert!(ts.validate().is_ok());
        let reference = Reference(&ts);
        for i in 0..ts.tasks.len() {
            for p in protocols() {
                prop_assert_eq!(ts.blocking_under(i, p), reference.blocking_under(i, p), "task {} under {}: {:?}", i, p, ts);
            }
            prop_assert_eq!(ts.blocking(i), reference.blocking(i), "task {}: {:?}", i, ts);
            prop_assert_eq!(ts.response_time(i), reference.response_time(i), "task {}: {:?}", i, ts);
        }
        let expected: Vec<Response> = (0..ts.tasks.len()).map(|i| reference.response_time(i)).collect();
        prop_assert_eq!(ts.response_times(), expected.clone(), "{:?}", ts);
        let v = ts.analyze();
        prop_assert_eq!(v.tasks.iter().map(|t| t.response).collect::<Vec<_>>(), expected);
        prop_assert_eq!(ts.is_rate_monotonic(), reference.is_rate_monotonic(), "{:?}", ts);
    }
}

const FITS: [Fit; 2] = [Fit::First, Fit::Worst];
const KEYS: [SortKey; 2] = [SortKey::Utilisation, SortKey::Density];
const TESTS: [CpuTest; 3] = [CpuTest::Edf, CpuTest::ResponseTime, CpuTest::LiuLayland];

/// One task of [`many`]: (period in µs, WCET in µs, deadline in eighths of the period,
/// priority, an optional section as (resource, µs)).
type Light = (u64, u64, u64, i32, Option<(usize, u64)>);

/// Many light tasks (the quick decisions take most placements) with a few heavy ones (the
/// full test takes the rest).
fn many() -> impl Strategy<Value = Vec<Light>> {
    prop::collection::vec(
        (
            prop::sample::select(vec![100u64, 200, 250, 400, 1000]),
            prop::sample::select(vec![1u64, 1, 1, 2, 3, 5, 20, 40, 90]),
            4u64..=12,
            0i32..6,
            prop::option::weighted(0.15, (0usize..4, 1u64..=2)),
        ),
        1..80,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    /// The partitioner with its quick decisions places every task where the first version
    /// (every candidate judged by the full test) does, or fails on the same task.
    #[test]
    fn the_partition_matches_the_reference(
        small in raw(),
        large in many(),
        protocols in prop::collection::vec(0..self::protocols().len(), 4),
        cpus in 1usize..5,
        how in (0..FITS.len(), 0..KEYS.len(), 0..TESTS.len()),
    ) {
        let (fit, key, test) = (FITS[how.0], KEYS[how.1], TESTS[how.2]);
        let mut big = TaskSet::new();
        for (k, &p) in protocols.iter().enumerate() {
            let protocol = self::protocols()[p];
            let r = Resource::new(format!("r{k}"), protocol).restart_cost(us(1));
            big.add_resource(if protocol == Protocol::Pcp { r.ceiling(5) } else { r });
        }
        for (i, &(period, wcet, eighths, priority, section)) in large.iter().enumerate() {
            let mut t = Task::new(format!("t{i}"), us(wcet + section.map_or(0, |(_, d)| d)), us(period))
                .deadline(us(period * eighths / 8))
                .priority(priority);
            if let Some((r, d)) = section {
                t = t.section(r, us(d));
            }
            big.add_task(t);
        }
        for ts in [build(&small), big] {
            let expected = Reference(&ts).partition(cpus, fit, key, test);
            prop_assert_eq!(ts.partition(cpus, fit, key, test), expected, "{:?} {:?} {:?} on {}: {:?}", fit, key, test, cpus, ts);
        }
    }
}

/// `Σ c/t ≥ 1` by cross-multiplying in arbitrary precision, without any shortcut.
fn reaches_one_exactly(terms: &[(u128, u128)]) -> bool {
    let product = terms.iter().fold(BigNat::from(1), |acc, &(_, t)| acc.mul(&BigNat::from(t)));
    let mut sum = BigNat::from(0);
    for (k, &(c, _)) in terms.iter().enumerate() {
        let others = terms
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != k)
            .fold(BigNat::from(c), |acc, (_, &(_, t))| acc.mul(&BigNat::from(t)));
        sum = sum.add(&others);
    }
    sum >= product
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Random sums, and sums within one part in 10^12 or so of 1 (n terms of 1/n, one of them
    /// nudged), come out as the exact comparison says.
    #[test]
    fn the_utilisation_comparison_is_exact(
        terms in prop::collection::vec((0u128..5000, 1u128..5000), 1..12),
        n in 1u128..40,
        big in 1u128 << 40..1u128 << 50,
        nudge in 0usize..3,
    ) {
        prop_assert_eq!(utilisation_reaches_one(terms.iter().copied()), reaches_one_exactly(&terms));
        let mut near: Vec<(u128, u128)> = (0..n).map(|_| (big, n * big)).collect();
        match nudge {
            0 => near[0].0 -= 1,
            1 => near[0].1 += 1,
            _ => near[0].0 += 1,
        }
        prop_assert_eq!(utilisation_reaches_one(near.iter().copied()), reaches_one_exactly(&near), "{:?}", near);
    }
}
