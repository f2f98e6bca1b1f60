//! The indexed blocking terms and the per-period response-time analysis give exactly what the
//! first, unindexed formulas give (`reference.rs`), on random task sets: ties in priority,
//! mixed protocols, declared and computed ceilings, several sections per task.

use std::time::Duration;

use proptest::prelude::*;

use super::reference::Reference;
use super::*;

const PROTOCOLS: [Protocol; 7] =
    [Protocol::Km, Protocol::Bp, Protocol::Bpi, Protocol::Pcp, Protocol::Srp, Protocol::Rcs, Protocol::Msrp];

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// (protocol index, declared ceiling, restart cost in µs) per resource; per task (period
/// index, WCET beyond its sections, deadline numerator in eighths of the period, priority,
/// sections as (resource, µs)).
type Raw = (Vec<(usize, Option<i32>, u64)>, Vec<(usize, u64, u64, i32, Vec<(usize, u64)>)>);

const PERIODS: [u64; 6] = [10, 12, 20, 25, 40, 100];

fn raw() -> impl Strategy<Value = Raw> {
    (
        prop::collection::vec((0..PROTOCOLS.len(), prop::option::of(0i32..5), 0u64..3), 0..4),
        prop::collection::vec(
            (0..PERIODS.len(), 0u64..8, 4u64..12, 0i32..5, prop::collection::vec((0usize..4, 1u64..4), 0..3)),
            1..9,
        ),
    )
}

fn build((resources, tasks): &Raw) -> TaskSet {
    let mut ts = TaskSet::new();
    for (k, &(p, ceiling, cost)) in resources.iter().enumerate() {
        let mut r = Resource::new(format!("r{k}"), PROTOCOLS[p]).restart_cost(us(cost));
        if let Some(c) = ceiling {
            r = r.ceiling(c);
        }
        ts.add_resource(r);
    }
    for (i, (period, extra, eighths, priority, sections)) in tasks.iter().enumerate() {
        let period = us(PERIODS[*period]);
        let sections: Vec<(usize, u64)> = sections.iter().filter(|&&(r, _)| r < resources.len()).copied().collect();
        let wcet = us(extra + sections.iter().map(|&(_, d)| d).sum::<u64>());
        let mut t =
            Task::new(format!("t{i}"), wcet, period).deadline(period * (*eighths as u32) / 8).priority(*priority);
        for (r, d) in sections {
            t = t.section(r, us(d));
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
            for p in PROTOCOLS {
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
