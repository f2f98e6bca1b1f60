//! The global schedulability tests (`TaskSet::global_edf_tests`,
//! `TaskSet::global_fp_response_times`): hand-computed verdicts and bounds, refusals, and a
//! cross-check against the global schedulers in virtual time: a set a test passes never misses
//! a deadline when simulated, whatever the phases.

use crate::common;

use std::time::Duration;

use common::global::{run_global, unit, Plan};
use common::{ms, us};
use proptest::prelude::*;
use tempi::analysis::{GlobalBound, GlobalError, ModelError, Protocol, Resource, Task, TaskSet};
use tempi::Time;

#[test]
fn dhall_set_passes_neither_edf_test() {
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("light0", us(200), ms(10)));
    ts.add_task(Task::new("light1", us(200), ms(10)));
    ts.add_task(Task::new("heavy", ms(10), us(10_100)));
    let g = ts.global_edf_tests(2).unwrap();
    assert!(!g.density_passed && !g.bcl_passed);
    // 0.02 + 0.02 + 10/10.1 against 2 - 10/10.1.
    assert!((g.density - (0.04 + 10.0 / 10.1)).abs() < 1e-12);
    assert!((g.density_bound - (2.0 - 10.0 / 10.1)).abs() < 1e-12);
}

#[test]
fn window_test_passes_where_the_density_test_cannot() {
    // Two tasks of density 0.9 on two CPUs: 1.8 >= 2 - 0.9, but each sees at most 1 ms of the
    // other's work in its 1 ms of slack, and 1 < 2 * 1.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(9), ms(10)));
    ts.add_task(Task::new("b", ms(9), ms(10)));
    let g = ts.global_edf_tests(2).unwrap();
    assert!(!g.density_passed);
    assert!(g.bcl_passed);
    assert!(g.passed());
    // On one CPU neither passes.
    assert!(!ts.global_edf_tests(1).unwrap().passed());
}

#[test]
fn density_boundary_is_not_claimed() {
    // Σλ = 1.5 and m - (m-1)λmax = 2 - 0.5 = 1.5: equal, so the strict test does not pass.
    let mut ts = TaskSet::new();
    for name in ["a", "b", "c"] {
        ts.add_task(Task::new(name, ms(5), ms(10)));
    }
    assert!(!ts.global_edf_tests(2).unwrap().density_passed);
    ts.tasks[2].wcet = us(4_999);
    assert!(ts.global_edf_tests(2).unwrap().density_passed);
}

#[test]
fn fp_bounds_by_hand() {
    // m = 2. a alone: 2. b: one unit of a's work fits its window of 1, halved: 2.
    // c: 3 -> 3 + (1 + 1)/2 = 4 -> 3 + (2 + 2)/2 = 5 -> 3 + (2 + 2)/2 = 5.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("a", ms(2), ms(5)).priority(3));
    ts.add_task(Task::new("b", ms(2), ms(5)).priority(2));
    ts.add_task(Task::new("c", ms(3), ms(10)).priority(1));
    let ns = Duration::from_nanos;
    assert_eq!(
        ts.global_fp_response_times(2).unwrap(),
        vec![GlobalBound::Proven(ms(2)), GlobalBound::Proven(ms(2) + ns(0)), GlobalBound::Proven(ms(5))]
    );
    // On one CPU the bound is the uniprocessor one plus the window's +1: c passes its 10 ms.
    let r = ts.global_fp_response_times(1).unwrap();
    assert_eq!(r[0], GlobalBound::Proven(ms(2)));
    assert!(matches!(r[1], GlobalBound::Proven(d) if d == ms(4)));
    assert!(matches!(r[2], GlobalBound::NotProven(_)), "{r:?}");
}

#[test]
fn refusals_name_the_task() {
    let mut ts = TaskSet::new();
    let bus = ts.add_resource(Resource::new("bus", Protocol::Msrp));
    ts.add_task(Task::new("locker", ms(2), ms(10)).section(bus, ms(1)));
    assert_eq!(ts.global_edf_tests(2).unwrap_err(), GlobalError::Sections { task: "locker".into() });
    assert_eq!(ts.global_fp_response_times(2).unwrap_err(), GlobalError::Sections { task: "locker".into() });
    assert_eq!(TaskSet::new().global_edf_tests(0).unwrap_err(), GlobalError::NoCpu);
    // A zero period is refused as the model's error, not divided by.
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("still", ms(1), Duration::ZERO).deadline(ms(1)));
    let zero = GlobalError::Model(ModelError::ZeroPeriod { task: "still".into() });
    assert_eq!(ts.global_edf_tests(2).unwrap_err(), zero);
    assert_eq!(ts.global_fp_response_times(2).unwrap_err(), zero);
    let mut ts = TaskSet::new();
    ts.add_task(Task::new("late", ms(1), ms(4)).deadline(ms(5)));
    assert!(ts.global_fp_response_times(2).unwrap_err().to_string().contains("\"late\""));
}

fn plan() -> impl Strategy<Value = Plan> {
    (10u64..=40)
        .prop_flat_map(|t| (Just(t), 1..=t * 3 / 4, 0..t, 0..=3i32))
        .prop_flat_map(|(t, c, phase, p)| (Just(t), Just(c), c..=t, Just(phase), Just(p)))
}

fn task_set(plans: &[Plan]) -> TaskSet {
    let mut ts = TaskSet::new();
    for (i, &(t, c, d, _, p)) in plans.iter().enumerate() {
        ts.add_task(Task::new(format!("t{i}"), unit(c), unit(t)).deadline(unit(d)).priority(p));
    }
    ts
}

/// Misses of the set under a global policy in virtual time, over 60 ms.
fn misses(cpus: usize, plans: &[Plan], edf: bool) -> u64 {
    run_global(cpus, plans, edf, Time::from_millis(60)).total_misses()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// A set a global EDF test passes never misses under global EDF.
    #[test]
    fn edf_tests_are_sound(cpus in 2usize..=3, plans in prop::collection::vec(plan(), 2..=7)) {
        let g = task_set(&plans).global_edf_tests(cpus).unwrap();
        if g.passed() {
            prop_assert_eq!(misses(cpus, &plans, true), 0, "tests {:?}", g);
        }
    }

    /// A set whose every task has a global FP bound never misses under global FP, and no
    /// response exceeds its task's bound.
    #[test]
    fn fp_bounds_are_sound(cpus in 2usize..=3, plans in prop::collection::vec(plan(), 2..=7)) {
        let bounds = task_set(&plans).global_fp_response_times(cpus).unwrap();
        if bounds.iter().all(|b| b.proven().is_some()) {
            prop_assert_eq!(misses(cpus, &plans, false), 0, "bounds {:?}", bounds);
        }
    }
}

#[test]
fn the_cross_check_is_not_vacuous() {
    // Sets of the kind the property tests draw that the tests do pass, so the check above
    // does compare something: light sets pass both, and the simulation agrees.
    let light: Vec<Plan> = vec![(10, 3, 10, 0, 3), (20, 5, 15, 4, 2), (40, 10, 40, 7, 1), (25, 6, 20, 0, 0)];
    let ts = task_set(&light);
    assert!(ts.global_edf_tests(2).unwrap().passed());
    assert!(ts.global_fp_response_times(2).unwrap().iter().all(|b| b.proven().is_some()));
    assert_eq!(misses(2, &light, true), 0);
    assert_eq!(misses(2, &light, false), 0);
}
