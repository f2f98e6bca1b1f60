//! Property test: response-time analysis with RCS blocking and re-executed work against the
//! simulator. Protocols: rcs (sections entered with `Mutex::critical` or held with a guard),
//! mixed with bpi and pcp. Scheduler: fixed priority, rate monotonic or random priorities.
//!
//! Random small periodic sets (2-5 tasks, work and phases in quarter milliseconds, deadlines
//! from half the period to the period, two resources each under rcs, bpi or pcp), whose jobs do
//! `work; section on one resource; work; section on the other; work` (either section may be
//! absent). On an rcs resource a section runs in `Mutex::critical`, so a more urgent request
//! aborts a preempted holder, which pays the simulated abort cost (the model's
//! `restart_cost`) and redoes its section, or, for some tasks, holds the lock with a guard
//! (`Task::guarded_section` in the model), which is waited for. Simulated from the release
//! (all together, or with random phases) for two hyperperiods past the latest phase: whenever
//! the analysis says schedulable, no deadline is missed and no job takes longer than its
//! analysed response time. The same sets under EDF: whenever the EDF test with inheritance
//! blocking passes, no deadline is missed.

use std::sync::Arc;
use std::time::Duration;

use crate::common;

use common::{ms, quarter_ms as work};
use proptest::prelude::*;
use tempi::analysis::{Protocol, Resource, Response, Task, TaskSet};
use tempi::clock::VirtualClock;
use tempi::policy::sched::Edf;
use tempi::sync::{LockSpec, Mutex};
use tempi::{Config, Costs, Runtime, ThreadSpec};

/// Periods (ms) whose LCM is at most 60 ms.
const PERIODS: [u64; 7] = [2, 3, 4, 5, 6, 10, 12];
/// rcs twice as often as the others.
const PROTOCOLS: [Protocol; 4] = [Protocol::Rcs, Protocol::Rcs, Protocol::Bpi, Protocol::Pcp];
/// What an aborted rcs section costs its holder to recover (the model's `restart_cost`).
const RESTART: Duration = Duration::from_micros(100);

/// One section of a generated job: its length in quarter milliseconds, and whether it holds
/// the lock with a guard rather than in `Mutex::critical` (which matters under rcs only).
#[derive(Clone, Copy, Debug)]
struct Sec {
    len: u64,
    guard: bool,
}

/// One generated task: period index, phase, work before, a section on each resource (if any)
/// with the work between them, the work after (all in quarter milliseconds), and the deadline
/// in quarters of the period (at least `C`). `swap` takes the resources in the other order;
/// `same` puts both sections on the first.
#[derive(Clone, Copy, Debug)]
struct Gen {
    period: usize,
    phase: u64,
    before: u64,
    first: Option<Sec>,
    between: u64,
    second: Option<Sec>,
    after: u64,
    quarters: u64,
    swap: bool,
    same: bool,
}

impl Gen {
    fn wcet(&self) -> u64 {
        self.before + self.first.map_or(0, |s| s.len) + self.between + self.second.map_or(0, |s| s.len) + self.after
    }

    fn deadline(&self) -> Duration {
        let d = Duration::from_micros(PERIODS[self.period] * 250 * self.quarters);
        d.max(work(self.wcet()))
    }

    /// The (resource, section) of each section, in the order the job takes them.
    fn sections(&self) -> [(usize, Option<Sec>); 2] {
        let (a, b) = if self.swap { (1, 0) } else { (0, 1) };
        let b = if self.same { a } else { b };
        [(a, self.first), (b, self.second)]
    }
}

fn gen_sec(p: f64, lens: std::ops::RangeInclusive<u64>) -> impl Strategy<Value = Option<Sec>> {
    proptest::option::weighted(p, (lens, proptest::bool::weighted(0.25)).prop_map(|(len, guard)| Sec { len, guard }))
}

fn gen_task() -> impl Strategy<Value = Gen> {
    (
        (0..PERIODS.len(), 0u64..=15, 0u64..=2),
        (gen_sec(0.6, 1..=3), 0u64..=1, gen_sec(0.4, 1..=2)),
        (0u64..=2, prop_oneof![1 => 2u64..=3, 2 => Just(4u64)], any::<bool>()),
    )
        .prop_map(|((period, phase, before), (first, between, second), (after, quarters, swap))| {
            let locks = first.is_some() || second.is_some();
            let before = if !locks && before + after == 0 { 1 } else { before };
            // A job ends with work, not with an unlock (a runtime call, hence a preemption
            // point), as in the other cross-checks.
            let after = if locks { after.max(1) } else { after };
            Gen { period, phase, before, first, between, second, after, quarters, swap, same: false }
        })
}

/// A generated set: the two resources' protocols, the tasks, their priorities, and whether
/// they are released together (phases ignored).
#[derive(Clone, Debug)]
struct Case {
    protocols: [Protocol; 2],
    gens: Vec<Gen>,
    prio: Vec<i32>,
    together: bool,
}

/// Rate-monotonic priorities, distinct: the shortest period gets `n`, ties by index.
fn rate_monotonic(gens: &[Gen]) -> Vec<i32> {
    common::rate_monotonic(&gens.iter().map(|g| PERIODS[g.period]).collect::<Vec<_>>())
}

fn case() -> impl Strategy<Value = Case> {
    (
        (0..PROTOCOLS.len(), 0..PROTOCOLS.len()),
        proptest::collection::vec(gen_task(), 2..=5),
        any::<bool>(),
        proptest::bool::weighted(0.3),
    )
        .prop_flat_map(|((a, b), gens, rm, together)| {
            let n = gens.len();
            let prio = if rm {
                Just(rate_monotonic(&gens)).boxed()
            } else {
                // A random permutation of 1..=n.
                Just((1..=n as i32).collect::<Vec<i32>>()).prop_shuffle().boxed()
            };
            (Just([PROTOCOLS[a], PROTOCOLS[b]]), Just(gens), prio, Just(together))
        })
        .prop_map(|(protocols, gens, prio, together)| Case { protocols, gens, prio, together })
}

fn model(c: &Case) -> TaskSet {
    let mut ts = TaskSet::new();
    for (k, p) in c.protocols.into_iter().enumerate() {
        let cost = if p == Protocol::Rcs { RESTART } else { Duration::ZERO };
        ts.add_resource(Resource::new(format!("R{k}"), p).restart_cost(cost));
    }
    for (i, g) in c.gens.iter().enumerate() {
        let mut t = Task::new(format!("t{i}"), work(g.wcet()), ms(PERIODS[g.period]))
            .deadline(g.deadline())
            .priority(c.prio[i]);
        for (r, s) in g.sections() {
            if let Some(s) = s {
                t = if s.guard { t.guarded_section(r, work(s.len)) } else { t.section(r, work(s.len)) };
            }
        }
        ts.add_task(t);
    }
    ts
}

fn phase(c: &Case, g: &Gen) -> Duration {
    if c.together {
        Duration::ZERO
    } else {
        work(g.phase)
    }
}

/// Simulate under fixed priorities (or EDF) from the release for two hyperperiods past the
/// latest phase (after which a periodic schedule repeats) and the longest deadline; per task:
/// (misses, longest response).
fn simulate(ts: &TaskSet, c: &Case, edf: bool) -> Vec<(u64, Duration)> {
    let config = Config::new(1).trace_capacity(0).costs(Costs { abort: RESTART, ..Costs::default() });
    let mut rt = Runtime::<VirtualClock>::new(config).unwrap();
    if edf {
        rt.set_scheduler(|| Box::new(Edf::new()));
    }
    let locks: Vec<(Arc<Mutex<()>>, bool)> = ts
        .resources
        .iter()
        .enumerate()
        .map(|(r, res)| {
            let mut spec = LockSpec::new(res.name.clone()).protocol(res.protocol.name());
            if res.protocol == Protocol::Pcp {
                // A resource nobody uses still needs a ceiling under pcp: the lowest will do.
                spec = spec.ceiling(ts.ceiling(r).unwrap_or(0));
            }
            (Arc::new(rt.create_mutex((), spec).unwrap()), res.protocol == Protocol::Rcs)
        })
        .collect();
    for (t, g) in ts.tasks.iter().zip(&c.gens) {
        let g = *g;
        let locks = locks.clone();
        let spec = ThreadSpec::new(t.name.clone())
            .periodic(t.period)
            .phase(phase(c, &g))
            .wcet(t.wcet)
            .deadline(t.deadline)
            .priority(t.priority);
        rt.spawn(spec, move |cx| {
            if g.before > 0 {
                cx.work(work(g.before));
            }
            for (k, (r, s)) in g.sections().into_iter().enumerate() {
                if k == 1 && g.between > 0 {
                    cx.work(work(g.between));
                }
                let Some(s) = s else { continue };
                let (lock, restartable) = &locks[r];
                if *restartable && !s.guard {
                    lock.critical(cx, |_| cx.work(work(s.len))).unwrap();
                } else {
                    let _guard = lock.lock(cx).unwrap();
                    cx.work(work(s.len));
                }
            }
            if g.after > 0 {
                cx.work(work(g.after));
            }
        })
        .unwrap();
    }
    let latest = c.gens.iter().map(|g| phase(c, g)).max().unwrap_or_default();
    let out = rt.run_until(common::two_hyperperiods_after(ts, latest)).unwrap();
    common::misses_and_worst_responses(&out, ts.tasks.iter().map(|t| &t.name))
}

/// Whenever response-time analysis finds `c`'s set schedulable, its simulation misses nothing
/// and no job takes longer than its task's analysed response time.
fn rta_bounds_the_simulation(c: &Case) -> Result<(), TestCaseError> {
    let ts = model(c);
    prop_assert!(ts.validate().is_ok());
    let verdict = ts.analyze();
    if verdict.schedulable {
        let sim = simulate(&ts, c, false);
        for (i, (misses, worst)) in sim.iter().enumerate() {
            let Response::Bounded(r) = verdict.tasks[i].response else { unreachable!() };
            prop_assert_eq!(*misses, 0, "task {} missed; analysis said R = {:?}; {:?}", i, r, ts);
            prop_assert!(*worst <= r, "task {}: simulated {:?} > analysed {:?}; {:?}", i, worst, r, ts);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn rta_with_rcs_bounds_the_simulation(c in case()) {
        rta_bounds_the_simulation(&c)?;
    }
}

/// The sets of [`case`] with, at random, tied priorities (drawn from `1..=n` with repeats, equal
/// priorities counting as interference) and jobs that take their two sections on one resource
/// (a job of an aborter requests it twice, a victim can be aborted in either).
fn tied_case() -> impl Strategy<Value = Case> {
    case()
        .prop_flat_map(|c| {
            let n = c.gens.len();
            let ties = proptest::option::weighted(0.5, proptest::collection::vec(1..=n as i32, n));
            let same = proptest::collection::vec(proptest::bool::weighted(0.3), n);
            (Just(c), ties, same)
        })
        .prop_map(|(mut c, ties, same)| {
            if let Some(prio) = ties {
                c.prio = prio;
            }
            c.gens.iter_mut().zip(same).for_each(|(g, same)| g.same = same);
            c
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn rta_with_rcs_bounds_the_simulation_with_ties_and_repeated_resources(c in tied_case()) {
        rta_bounds_the_simulation(&c)?;
    }
}

/// The same sets under EDF (pcp, whose ceilings the generator gives as priorities, becomes
/// bpi): whenever the EDF test with inheritance blocking passes, nothing misses. This checks
/// its rcs terms with guarded holders, which are waited for (their section in `B_k`) and
/// never redo anything (no victim in `V_k`).
fn edf_case() -> impl Strategy<Value = Case> {
    case().prop_map(|mut c| {
        for p in &mut c.protocols {
            if *p == Protocol::Pcp {
                *p = Protocol::Bpi;
            }
        }
        c
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn the_edf_inheritance_test_bounds_the_simulation(c in edf_case()) {
        let ts = model(&c);
        let e = ts.edf_tests();
        if e.inheritance.is_some_and(|t| t.passed) {
            let sim = simulate(&ts, &c, true);
            prop_assert!(sim.iter().all(|&(m, _)| m == 0), "misses {:?}; {:?}; {:?}", sim, e, ts);
        }
    }
}

/// The generator is not idle: over a fixed stream of sets, a good share is schedulable with
/// rcs sections that the analysis must count (restarts, redone sections, guarded holders), so
/// the property above compares something.
#[test]
fn the_generated_sets_exercise_the_analysis() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config as RunnerConfig, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(RunnerConfig::default(), TestRng::deterministic_rng(Default::default()));
    let strategy = case();
    let (mut passed, mut charged, mut guarded) = (0, 0, 0);
    for _ in 0..400 {
        let c = strategy.new_tree(&mut runner).unwrap().current();
        let ts = model(&c);
        let v = ts.analyze();
        if !v.schedulable {
            continue;
        }
        passed += 1;
        // Some rcs section makes a response longer than the set without sections has.
        let mut quiet = ts.clone();
        quiet.tasks.iter_mut().for_each(|t| t.sections.clear());
        let q = quiet.response_times();
        let uses_rcs =
            ts.tasks.iter().flat_map(|t| &t.sections).any(|s| ts.resources[s.resource].protocol == Protocol::Rcs);
        charged += usize::from(uses_rcs && v.tasks.iter().zip(&q).any(|(t, q)| t.response != *q));
        guarded += usize::from(
            ts.tasks
                .iter()
                .flat_map(|t| &t.sections)
                .any(|s| s.guarded && ts.resources[s.resource].protocol == Protocol::Rcs),
        );
    }
    assert!(
        passed >= 60 && charged >= 30 && guarded >= 15,
        "passed {passed}, rcs charged {charged}, guarded {guarded}"
    );
}

/// Four tasks on one rcs resource `R` (restart 100 µs), period 12 ms each:
///
/// - `l` (priority 1, released at 0): 2 ms in `R` then 1 ms of work;
/// - `m` (priority 2, at 0.5 ms): 1 ms of work, no lock;
/// - `h` (priority 3, at 0.75 ms): 0.5 ms in `R` then 0.25 ms of work;
/// - `b` (priority 0, at 0): 0.25 ms of work, no lock.
///
/// `m` preempts `l` inside its section at 0.5; `h` preempts `m` at 0.75 and asks for `R`,
/// aborting `l`, which recovers at `h`'s urgency until 0.85; `h` ends at 1.6 (0.85 after its
/// release: `C + B`); `m` resumes and ends at 2.35 (1.85: its own 1 ms, `h`'s 0.75 and `l`'s
/// recovery, which it waited for although it locks nothing); `l` redoes its whole section
/// and ends at 5.35, `b` at 5.6 (it waited for `l`'s lost 0.75 ms and recovery too).
#[derive(Clone, Copy)]
struct ByHand {
    guard: bool,
}

impl ByHand {
    fn case(self) -> Case {
        let g = |phase, first: Option<u64>, before, after| Gen {
            period: 6,
            phase,
            before,
            first: first.map(|len| Sec { len, guard: self.guard }),
            between: 0,
            second: None,
            after,
            quarters: 4,
            swap: false,
            same: false,
        };
        Case {
            protocols: [Protocol::Rcs, Protocol::Rcs],
            gens: vec![g(0, Some(8), 0, 4), g(2, None, 4, 0), g(3, Some(2), 0, 1), g(0, None, 1, 0)],
            prio: vec![1, 2, 3, 0],
            together: false,
        }
    }
}

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

#[test]
fn a_restart_delays_the_tasks_between_and_below_by_hand() {
    let c = ByHand { guard: false }.case();
    let ts = model(&c);
    let sim = simulate(&ts, &c, false);
    let worst: Vec<Duration> = sim.iter().map(|&(_, w)| w).collect();
    assert_eq!(worst, [us(5350), us(1850), us(850), us(5600)]);
    assert!(sim.iter().all(|&(m, _)| m == 0));
    // The analysis: h = C + one recovery; m = its C + h's C + the recovery of l at h's
    // urgency; l = its C + m's C + h's C + the section h makes it redo (2 ms + 100 µs); b
    // = all of that plus its own 0.25 ms.
    let r: Vec<Response> = ts.response_times();
    assert_eq!(
        r,
        [
            Response::Bounded(us(3000 + 1000 + 750 + 2100)),
            Response::Bounded(us(1850)),
            Response::Bounded(us(850)),
            Response::Bounded(us(250 + 3000 + 1000 + 750 + 2100)),
        ]
    );
}

/// The same set with `l` holding `R` with a guard: `h` does not abort it and waits, lending
/// its urgency, for the rest of `l`'s section (0.75 to 2.25), so `h` ends at 3.0 (2.25 after
/// its release), `m` at 3.75 (3.25), `l` at 4.75 (its section ran once) and `b` at 5.0. The
/// analysis counts `l`'s whole section as the blocking of `h` and `m`, as under bpi, and
/// nothing redone.
#[test]
fn a_guarded_holder_is_waited_for_by_hand() {
    let c = ByHand { guard: true }.case();
    let ts = model(&c);
    let sim = simulate(&ts, &c, false);
    let worst: Vec<Duration> = sim.iter().map(|&(_, w)| w).collect();
    assert_eq!(worst, [us(4750), us(3250), us(2250), us(5000)]);
    let r: Vec<Response> = ts.response_times();
    assert_eq!(
        r,
        [
            Response::Bounded(us(3000 + 1000 + 750)),
            Response::Bounded(us(1000 + 750 + 2000)),
            Response::Bounded(us(750 + 2000)),
            Response::Bounded(us(250 + 3000 + 1000 + 750)),
        ]
    );
}
