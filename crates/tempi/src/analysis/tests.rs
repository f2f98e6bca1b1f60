//! Worked examples with numbers checked by hand.

use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// Three tasks, two resources: R1 shared by t1 and t3, R2 by t2 and t3.
/// Ceilings: R1 = 3 (t1), R2 = 2 (t2).
fn three_tasks(protocol: Protocol) -> TaskSet {
    let mut ts = TaskSet::new();
    let r1 = ts.add_resource(Resource::new("R1", protocol));
    let r2 = ts.add_resource(Resource::new("R2", protocol));
    ts.add_task(Task::new("t1", ms(2), ms(10)).priority(3).section(r1, ms(1)));
    ts.add_task(Task::new("t2", ms(3), ms(15)).priority(2).section(r2, ms(2)));
    ts.add_task(Task::new("t3", ms(5), ms(30)).priority(1).section(r1, ms(3)).section(r2, ms(2)));
    ts
}

#[test]
fn ceilings_are_computed_from_users() {
    let ts = three_tasks(Protocol::Pcp);
    assert_eq!((ts.ceiling(0), ts.ceiling(1)), (Some(3), Some(2)));
    assert_eq!(ts.validate(), Ok(()));
}

#[test]
fn pcp_and_srp_block_for_one_section() {
    for p in [Protocol::Pcp, Protocol::Srp] {
        let ts = three_tasks(p);
        // t1: t3's section on R1 (ceiling 3). t2: t3's longest on R1 or R2 (both ceilings >= 2).
        assert_eq!((0..3).map(|i| ts.blocking(i)).collect::<Vec<_>>(), [Some(ms(3)), Some(ms(3)), Some(ms(0))]);
    }
}

#[test]
fn pcp_response_times_by_hand() {
    let ts = three_tasks(Protocol::Pcp);
    // R1 = 2 + 3 = 5. R2 = 3 + 3 + ceil(R/10)*2 = 8. R3 = 5 + ceil(R/10)*2 + ceil(R/15)*3 = 10.
    assert_eq!(ts.response_times(), [Response::Bounded(ms(5)), Response::Bounded(ms(8)), Response::Bounded(ms(10))]);
    let ll = ts.liu_layland().unwrap();
    let loads: Vec<f64> = ll.rows.iter().map(|r| r.load.unwrap()).collect();
    // 0.2 + 0.3; 0.2 + 0.2 + 0.2; 0.2 + 0.2 + 1/6.
    assert!(
        (loads[0] - 0.5).abs() < 1e-9 && (loads[1] - 0.6).abs() < 1e-9 && (loads[2] - (0.4 + 1.0 / 6.0)).abs() < 1e-9
    );
    assert!((ll.rows[1].bound - 0.828427).abs() < 1e-6 && (ll.rows[2].bound - 0.779763).abs() < 1e-6);
    assert!(ll.passed && ts.analyze().schedulable);
}

#[test]
fn inheritance_takes_the_smaller_of_its_two_bounds() {
    // One resource, two lower users: blocked at most once (by resource), not twice (by task).
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("R", Protocol::Bpi));
    ts.add_task(Task::new("h", ms(1), ms(20)).priority(3).section(r, ms(1)));
    ts.add_task(Task::new("m", ms(3), ms(40)).priority(2).section(r, ms(2)));
    ts.add_task(Task::new("l", ms(5), ms(80)).priority(1).section(r, ms(4)));
    assert_eq!(ts.blocking(0), Some(ms(4)));
    // m: only l is lower; R's ceiling (3) >= 2, so l's section counts.
    assert_eq!(ts.blocking(1), Some(ms(4)));
    // Two resources, one lower task: blocked at most once (by task).
    let mut ts = TaskSet::new();
    let a = ts.add_resource(Resource::new("A", Protocol::Bpi));
    let b = ts.add_resource(Resource::new("B", Protocol::Bpi));
    ts.add_task(Task::new("h", ms(2), ms(20)).priority(2).section(a, ms(1)).section(b, ms(1)));
    ts.add_task(Task::new("l", ms(5), ms(80)).priority(1).section(a, ms(2)).section(b, ms(3)));
    assert_eq!(ts.blocking_under(0, Protocol::Bpi), Some(ms(3)));
}

#[test]
fn bpi_sums_across_tasks_where_pcp_takes_one() {
    let ts = three_tasks(Protocol::Bpi);
    // t2: only t3 is lower; its longest section on a resource with ceiling >= 2 is 3.
    assert_eq!(ts.blocking(1), Some(ms(3)));
    let mut ts = TaskSet::new();
    let a = ts.add_resource(Resource::new("A", Protocol::Bpi));
    let b = ts.add_resource(Resource::new("B", Protocol::Bpi));
    ts.add_task(Task::new("h", ms(2), ms(10)).priority(3).section(a, ms(1)).section(b, ms(1)));
    ts.add_task(Task::new("m", ms(3), ms(20)).priority(2).section(a, ms(2)));
    ts.add_task(Task::new("l", ms(4), ms(40)).priority(1).section(b, ms(3)));
    assert_eq!(ts.blocking_under(0, Protocol::Bpi), Some(ms(5)));
    assert_eq!(ts.blocking_under(0, Protocol::Pcp), Some(ms(3)));
    // Push-through: m never locks B, but l may run B at h's priority: blocks m under BPI.
    assert_eq!(ts.blocking_under(1, Protocol::Bpi), Some(ms(3)));
}

#[test]
fn kernelized_monitor_blocks_everyone_by_the_longest_lower_section() {
    let ts = three_tasks(Protocol::Km);
    assert_eq!(ts.blocking(0), Some(ms(3)));
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("R", Protocol::Km));
    ts.add_task(Task::new("free", ms(1), ms(5)).priority(3));
    ts.add_task(Task::new("a", ms(2), ms(10)).priority(2).section(r, ms(1)));
    ts.add_task(Task::new("b", ms(3), ms(20)).priority(1).section(r, ms(2)));
    // `free` never locks, yet b's non-preemptable section delays it.
    assert_eq!(ts.blocking(0), Some(ms(2)));
    assert_eq!(ts.blocking_under(0, Protocol::Pcp), Some(ms(0)));
}

#[test]
fn basic_priority_is_unbounded_only_with_a_task_in_between() {
    // Tokuda and Nakajima's Benchmark-1 shape: A and D share a lock, B and C are in between.
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("obj", Protocol::Bp));
    ts.add_task(Task::new("A", ms(10), ms(100)).priority(4).section(r, ms(10)));
    ts.add_task(Task::new("B", ms(50), ms(300)).priority(3));
    ts.add_task(Task::new("C", ms(60), ms(400)).priority(2));
    ts.add_task(Task::new("D", ms(30), ms(1000)).priority(1).section(r, ms(30)));
    assert_eq!(ts.blocking(0), None);
    assert_eq!(ts.response_time(0), Response::Unbounded);
    assert_eq!(ts.liu_layland().unwrap().rows[0].load, None);
    for p in [Protocol::Bpi, Protocol::Pcp, Protocol::Srp, Protocol::Km] {
        assert_eq!(ts.blocking_under(0, p), Some(ms(30)), "{p}");
    }
    // B does not lock, but D's section can run at A's priority (bpi, pcp) or at the ceiling.
    assert_eq!(ts.blocking_under(1, Protocol::Bpi), Some(ms(30)));
    // Under bp, B is never blocked: it does not want the lock and nothing is inherited.
    assert_eq!(ts.blocking_under(1, Protocol::Bp), Some(ms(0)));
    // Two tasks only: no one in between, the inversion is one section.
    let mut two = TaskSet::new();
    two.add_resource(Resource::new("obj", Protocol::Bp));
    two.add_task(Task::new("A", ms(20), ms(100)).priority(2).section(0, ms(5)));
    two.add_task(Task::new("B", ms(50), ms(200)).priority(1).section(0, ms(40)));
    assert_eq!(two.blocking(0), Some(ms(40)));
}

#[test]
fn restartable_sections_cost_the_restart_not_the_section() {
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("obj", Protocol::Rcs).restart_cost(Duration::from_micros(816)));
    ts.add_task(Task::new("A", ms(10), ms(100)).priority(2).section(r, ms(10)));
    ts.add_task(Task::new("D", ms(30), ms(1000)).priority(1).section(r, ms(30)));
    assert_eq!(ts.blocking(0), Some(Duration::from_micros(816)));
    assert_eq!(ts.blocking(1), Some(ms(0)));
    // D may redo its 30 ms section (plus the restart) once per job of A in its window:
    // R = 30 + ceil(R/100) * (10 + 30.816) = 70.816.
    assert_eq!(ts.response_time(1), Response::Bounded(Duration::from_micros(70_816)));
}

#[test]
fn textbook_response_times_without_resources() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("t1", ms(1), ms(4)).priority(3));
    ts.add_task(Task::new("t2", ms(2), ms(6)).priority(2));
    ts.add_task(Task::new("t3", ms(3), ms(13)).priority(1));
    assert_eq!(ts.response_times(), [Response::Bounded(ms(1)), Response::Bounded(ms(3)), Response::Bounded(ms(10))]);
    // U = 0.25 + 0.333 + 0.231 = 0.814 <= 0.7798? No: L&L is inconclusive, RTA says yes.
    let ll = ts.liu_layland().unwrap();
    assert!(!ll.passed);
    assert!(ts.analyze().schedulable);
    assert_eq!(ts.hyperperiod(), Some(ms(156)));
}

#[test]
fn deadline_misses_and_non_rm_orders() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(3), ms(5)).priority(2));
    ts.add_task(Task::new("b", ms(3), ms(10)).priority(1).deadline(ms(5)));
    // b: 3 + 3 = 6 > 5.
    assert_eq!(ts.response_time(1), Response::ExceedsDeadline(ms(6)));
    assert!(!ts.analyze().schedulable);
    assert!(ts.liu_layland().is_none(), "D < T: not applicable");
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(1), ms(5)).priority(1));
    ts.add_task(Task::new("b", ms(1), ms(10)).priority(2));
    assert!(ts.liu_layland().is_none(), "not rate monotonic");
}

#[test]
fn edf_tests_by_hand() {
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("R", Protocol::Srp));
    ts.add_task(Task::new("a", ms(1), ms(4)).section(r, ms(1)));
    ts.add_task(Task::new("b", ms(2), ms(8)).section(r, ms(1)));
    ts.add_task(Task::new("c", ms(3), ms(12)));
    let e = ts.edf_tests();
    // km: (1+1)/4 + (2+1)/8 + (3+1)/12 = 0.5 + 0.375 + 0.333.
    assert!((e.km_bound.load - (0.5 + 0.375 + 1.0 / 3.0)).abs() < 1e-9 && !e.km_bound.passed);
    // Baker: k=a: 0.25 + 1/4 = 0.5; k=b: 0.5 + 0 = 0.5; k=c: 0.75. Max 0.75.
    let b = e.baker.unwrap();
    assert!((b.load - 0.75).abs() < 1e-9 && b.passed);
    ts.resources[0].protocol = Protocol::Bpi;
    assert!(ts.edf_tests().baker.is_none());
}

#[test]
fn edf_inheritance_test_by_hand() {
    let mut ts = TaskSet::new();
    let a = ts.add_resource(Resource::new("A", Protocol::Bpi));
    let b = ts.add_resource(Resource::new("B", Protocol::Bpi));
    ts.add_task(Task::new("h", ms(2), ms(100)).deadline(ms(10)).section(a, ms(1)).section(b, ms(1)));
    ts.add_task(Task::new("m", ms(3), ms(100)).deadline(ms(20)).section(a, ms(2)));
    ts.add_task(Task::new("l", ms(4), ms(100)).deadline(ms(40)).section(b, ms(3)));
    let load = |ts: &TaskSet| ts.edf_tests().inheritance.map(|t| t.load);
    // k=h: both m and l can hold a lock h wants: B = 2 + 3. Demand: 2/100 per unit of time
    // plus 2 * (1 - 10/100) = 1.8 ms. 0.02 + (1.8 + 5)/10 = 0.70. (k=m: 0.05 + (4.2 + 3)/20;
    // k=l: 0.09 + 6.6/40.)
    assert!((load(&ts).unwrap() - 0.70).abs() < 1e-9, "{:?}", ts.edf_tests());
    // B under rcs, restart 0.5 ms: l is aborted, so k=h has B = 2 + 0.5: 0.02 + 4.3/10 = 0.45.
    // At k=l, l is a victim inside the window of h's request on B: 3 + 0.5 more per job of h,
    // 0.125 + (6.6 + 3.15)/40 = 0.369.
    ts.resources[b] = Resource::new("B", Protocol::Rcs).restart_cost(Duration::from_micros(500));
    assert!((load(&ts).unwrap() - 0.45).abs() < 1e-9, "{:?}", ts.edf_tests());
    ts.tasks[0].deadline = ms(50);
    ts.tasks[1].deadline = ms(60);
    // By deadline l (40), h (50), m (60). k=l: only B can block l, held by h (aborted: 0.5):
    // 0.04 + (2.4 + 0.5)/40 = 0.1125. k=h: now h is the victim of l's request on B, 1 + 0.5
    // per job of l (rate 0.015, constant 1.5 * 0.6); m can block on A (2): rate 0.04 + 0.02 +
    // 0.015 = 0.075, constant 2.4 + 1.0 + 0.9 = 4.3, 0.075 + (4.3 + 2)/50 = 0.201. k=m: 0.197.
    assert!((load(&ts).unwrap() - 0.201).abs() < 1e-9, "{:?}", ts.edf_tests());
    // A under bp: h and m lock it with different deadlines and l could run ahead of m.
    ts.resources[a].protocol = Protocol::Bp;
    assert_eq!(load(&ts), None);
    // Without l (two tasks) bp blocks as bpi.
    ts.tasks.pop();
    ts.tasks[0].sections.pop();
    assert!(load(&ts).is_some());
}

#[test]
fn guarded_rcs_sections_block_for_their_length_by_hand() {
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("R", Protocol::Rcs).restart_cost(Duration::from_micros(500)));
    ts.add_task(Task::new("h", ms(2), ms(100)).deadline(ms(10)).priority(3).section(r, ms(1)));
    ts.add_task(Task::new("m", ms(3), ms(100)).deadline(ms(20)).priority(2).section(r, ms(2)));
    ts.add_task(Task::new("l", ms(4), ms(100)).deadline(ms(40)).priority(1).guarded_section(r, ms(3)));
    // h: m's section is aborted (0.5), l's guarded one waited for (3); one resource: the larger.
    assert_eq!((ts.blocking(0), ts.blocking(1), ts.blocking(2)), (Some(ms(3)), Some(ms(3)), Some(ms(0))));
    // m: 3 + 3 + one job of h, which may abort m's section (2 + 0.5 redone). l: 4 + m's 3 +
    // h's 2 and m's redone 2.5; l's guarded section is never redone.
    let r = ts.response_times();
    let bounded = |x: u64| Response::Bounded(Duration::from_micros(x));
    assert_eq!(r, [bounded(5_000), bounded(10_500), bounded(11_500)]);
    // EDF, k=h: B = 3 (as above). k=m: B = 3 (l), and h's request may abort m (2.5):
    // rate 0.05 + 0.025, constant 4.2 + 2.5 * 0.9, 0.075 + (6.45 + 3)/20 = 0.5475. k=l: l is
    // no victim, 0.115 + 8.85/40 = 0.336.
    let e = ts.edf_tests().inheritance.unwrap();
    assert!((e.load - 0.5475).abs() < 1e-9, "{e:?}");
}

#[test]
fn edf_tests_divide_by_the_shorter_of_deadline_and_period() {
    // Two tasks of utilisation 0.75 each: U = 1.5, every window of 4 ms asks for 6 ms. With
    // D = 8 > T = 4, C/D would be 0.375 each and accept the set.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(3), ms(4)).deadline(ms(8)));
    ts.add_task(Task::new("b", ms(3), ms(4)).deadline(ms(8)));
    let e = ts.edf_tests();
    let b = e.baker.unwrap();
    assert!((b.load - 1.5).abs() < 1e-9 && !b.passed, "{b:?}");
    assert!(!e.km_bound.passed);
    assert!(!CpuTest::Edf.passes(&ts));
    // D < T: a job of 3 ms due 2 ms after its release misses, though C/T = 0.3.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(3), ms(10)).deadline(ms(2)));
    let e = ts.edf_tests();
    assert!((e.km_bound.load - 1.5).abs() < 1e-9 && !e.km_bound.passed, "{:?}", e.km_bound);
    assert!(!e.baker.unwrap().passed);
    // With a section: (C + CS)/min(D, T) for each task.
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("K", Protocol::Km));
    ts.add_task(Task::new("a", ms(1), ms(4)).deadline(ms(2)));
    ts.add_task(Task::new("b", ms(2), ms(8)).deadline(ms(16)).section(r, ms(1)));
    let e = ts.edf_tests();
    // km: (1 + 1)/2 + (2 + 1)/8 = 1.375.
    assert!((e.km_bound.load - 1.375).abs() < 1e-9, "{:?}", e.km_bound);
    // Baker: k=a: 1/2 + 1/2 = 1; k=b: 0.5 + 2/8 = 0.75.
    let b = e.baker.unwrap();
    assert!((b.load - 1.0).abs() < 1e-9 && b.passed, "{b:?}");
    assert!(CpuTest::Edf.passes(&ts));
}

#[test]
fn mixed_protocols_add_their_terms() {
    let mut ts = TaskSet::new();
    let k = ts.add_resource(Resource::new("K", Protocol::Km));
    let p = ts.add_resource(Resource::new("P", Protocol::Pcp));
    ts.add_task(Task::new("h", ms(2), ms(10)).priority(2).section(p, ms(1)));
    ts.add_task(Task::new("l", ms(6), ms(40)).priority(1).section(k, ms(2)).section(p, ms(3)));
    assert_eq!(ts.blocking(0), Some(ms(5)));
}

#[test]
fn model_errors() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("t", ms(1), ms(4)).section(0, ms(1)));
    assert_eq!(ts.validate(), Err(ModelError::UnknownResource { task: "t".into(), resource: 0 }));
    ts.add_resource(Resource::new("R", Protocol::Bpi));
    ts.tasks[0].sections[0].duration = ms(2);
    assert_eq!(ts.validate(), Err(ModelError::SectionsExceedWcet { task: "t".into() }));
    assert!(ModelError::ZeroDeadline { task: "x".into() }.to_string().contains("deadline"));
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

/// A task that runs 1 µs every 1 µs above one that needs 1 µs by a far deadline: the old
/// iteration crept up by 1 µs per step, D/C steps (10^7 here, 10^11 with the 100,000 s of
/// the original report); the interfering utilisation is 1, which answers at once.
#[test]
fn full_utilisation_above_a_task_is_overloaded_at_once() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("full", us(1), us(1)).priority(2));
    ts.add_task(Task::new("slow", us(1), Duration::from_secs(10)).priority(1));
    assert_eq!(ts.response_times(), [Response::Bounded(us(1)), Response::Overloaded]);
    assert!(Response::Overloaded.misses());
    assert!(!ts.analyze().schedulable);
    // The original report's task set answers the same.
    ts.tasks[1].period = Duration::from_secs(100_000);
    ts.tasks[1].deadline = Duration::from_secs(100_000);
    assert_eq!(ts.response_time(1), Response::Overloaded);
}

#[test]
fn utilisation_is_compared_with_one_exactly() {
    // 1/3 + 1/2 + 1/6 is exactly 1 (in floating point the sum comes out just below 1).
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", us(1), us(3)).priority(4));
    ts.add_task(Task::new("b", us(1), us(2)).priority(3));
    ts.add_task(Task::new("c", us(1), us(6)).priority(2));
    ts.add_task(Task::new("low", us(1), Duration::from_secs(1)).priority(1));
    assert_eq!(ts.response_time(3), Response::Overloaded);
    // 1/3 + 1/2 + 1/7 < 1: a fixed point exists.
    ts.tasks[2].period = us(7);
    assert!(matches!(ts.response_time(3), Response::Bounded(_)), "{:?}", ts.response_time(3));
    // Equal priorities interfere too; zero work of its own is done at once.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("x", us(1), us(2)).priority(1));
    ts.add_task(Task::new("y", us(1), us(2)).priority(1));
    ts.add_task(Task::new("w", us(1), us(2)).priority(1));
    ts.add_task(Task::new("z", Duration::ZERO, us(2)).priority(1));
    let r = ts.response_times();
    assert_eq!(r[..3], [Response::Overloaded; 3]);
    assert_eq!(r[3], Response::Bounded(Duration::ZERO));
}

/// Periods of about 2^60 ns, pairwise coprime: their common multiple does not fit in 128
/// bits, and sums within 2^-60 of 1 still come out on the right side.
#[test]
fn utilisation_beyond_128_bits_is_exact() {
    let p = [(1u128 << 60) + 3, (1 << 60) + 6, (1 << 60) + 9];
    // Each p ≡ 1 (mod 3): (p - 1)/3 per term sums just below 1, (p + 2)/3 just above.
    let below = p.map(|p| ((p - 1) / 3, p));
    let above = p.map(|p| (p.div_ceil(3), p));
    assert!(!utilisation_reaches_one(below.into_iter()));
    assert!(utilisation_reaches_one(above.into_iter()));
    assert!(!utilisation_reaches_one([below[0], below[1], above[2]].into_iter()));
    let task_set = |terms: [(u128, u128); 3]| {
        let mut ts = TaskSet::new();
        for (k, (c, t)) in terms.into_iter().enumerate() {
            let ns = |v: u128| Duration::from_nanos(v as u64);
            ts.add_task(Task::new(format!("h{k}"), ns(c), ns(t)).priority(2));
        }
        ts.add_task(Task::new("low", Duration::from_nanos(1), Duration::from_secs(1)).priority(1));
        ts
    };
    assert_eq!(task_set(above).response_time(3), Response::Overloaded);
    assert!(matches!(task_set(below).response_time(3), Response::ExceedsDeadline(_)));
    // (2^128 - 1)^2 + 2 (2^128 - 1) + 1 = (2^128)^2.
    let max = BigNat::from(u128::MAX);
    let two_128 = max.add(&BigNat::from(1));
    assert_eq!(max.mul(&max).add(&max.add(&max)).add(&BigNat::from(1)), two_128.mul(&two_128));
    assert!(two_128 > max && BigNat::from(0) < BigNat::from(1));
}

/// Below 1 by one part in a million with 1 ms periods, the fixed point is about 10^6 s away
/// and tens of millions of steps: the iteration stops at its cap and says so.
#[test]
fn iteration_that_does_not_settle_gives_up() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("almost", Duration::from_nanos(999_999), ms(1)).priority(2));
    let far = Duration::from_secs(10_000_000);
    ts.add_task(Task::new("slow", Duration::from_secs(1), far).priority(1));
    let Response::GaveUp(r) = ts.response_time(1) else { panic!("{:?}", ts.response_time(1)) };
    assert!(r > Duration::from_secs(1) && r < far, "{r:?}");
    assert!(!Response::GaveUp(r).misses() && !ts.analyze().schedulable);
}

/// The strict comparison: a sum of exactly `m` is not above it, one part in 2^60 more is, on
/// either path (floats far from `m`, integers near it, big numbers beyond 128 bits).
#[test]
fn utilisation_exceeds_is_strict_and_exact() {
    let exact = [(1u128, 3u128), (1, 3), (1, 3)];
    assert!(!utilisation_exceeds(exact.into_iter(), 1));
    assert!(utilisation_exceeds(exact.into_iter().chain([(1, 1u128 << 60)]), 1));
    assert!(!utilisation_exceeds([(3u128, 2u128), (1, 2)].into_iter(), 2));
    assert!(utilisation_exceeds([(3u128, 2u128), (1, 2), (1, 1 << 70)].into_iter(), 2));
    assert!(utilisation_exceeds([(100_000u128, 1u128)].into_iter(), 1));
    assert!(!utilisation_exceeds([(100_000u128, 1u128)].into_iter(), 100_000));
    assert!(!utilisation_exceeds(std::iter::empty(), 1));
    let p = [(1u128 << 60) + 3, (1 << 60) + 6, (1 << 60) + 9];
    let below = p.map(|p| ((p - 1) / 3, p));
    let above = p.map(|p| (p.div_ceil(3), p));
    assert!(!utilisation_exceeds(below.into_iter(), 1));
    assert!(utilisation_exceeds(above.into_iter(), 1));
    // Twice each term, against 2 CPUs: the same verdicts with doubled numerators.
    assert!(!utilisation_exceeds(below.map(|(c, t)| (2 * c, t)).into_iter(), 2));
    assert!(utilisation_exceeds(above.map(|(c, t)| (2 * c, t)).into_iter(), 2));
}

#[test]
fn infeasibility_names_the_broken_condition() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(5), ms(10)));
    ts.add_task(Task::new("b", ms(5), ms(10)));
    assert_eq!(ts.infeasibility(1), None);
    ts.add_task(Task::new("c", ms(1), ms(1000)));
    assert_eq!(ts.infeasibility(1), Some(Infeasible::Utilisation { utilisation: 1.001, cpus: 1 }));
    assert_eq!(ts.infeasibility(2), None);
    // C > D, though C/T is small.
    ts.add_task(Task::new("tight", ms(3), ms(100)).deadline(ms(2)));
    assert_eq!(ts.infeasibility(2), Some(Infeasible::WcetAboveDeadline { task: 3 }));
    // C/T > 1 with D > T: one task cannot use two CPUs at once.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("heavy", ms(6), ms(4)).deadline(ms(8)));
    assert_eq!(ts.infeasibility(4), Some(Infeasible::TaskUtilisation { task: 0, utilisation: 1.5 }));
    // Blocking does not count: it can only make a feasible set miss, never the reverse.
    let mut ts = TaskSet::new();
    let r = ts.add_resource(Resource::new("m", Protocol::Bp));
    ts.add_task(Task::new("h", ms(1), ms(2)).priority(2).section(r, ms(1)));
    ts.add_task(Task::new("l", ms(5), ms(10)).priority(1).section(r, ms(5)));
    assert_eq!(ts.infeasibility(1), None);
    assert!(!ts.analyze().schedulable);
}
