//! Property tests of kills in every state a thread can be in: random periodic, sporadic and
//! one-shot threads (sleeping, yielding, computing, with deadlines and abort times, some in a
//! deferrable server's thread set) on one or two CPUs under every scheduling policy the
//! registry holds (`common::registered`: fixed priorities, EDF, round robin, FIFO, the
//! collator, global EDF and global fixed priorities, and whatever is added), and a killer of the highest priority
//! that kills random threads at random instants (before their first release, between jobs,
//! waiting, sleeping, ready or running). Whatever the kills hit, the run ends without error
//! (the kernel's own checks, `Config::verify`, run after every step), every thread ends
//! (completed or killed; nothing is left ready forever), a killed thread is released no more,
//! and the run is exactly the same when repeated.

use crate::common;

use common::kills::{spawn_killer, UNIT};
use common::registered;
use proptest::prelude::*;
use tempi::{Config, Runtime, ThreadId, ThreadOutcome, ThreadSpec, Time};

#[derive(Clone, Debug)]
enum Kind {
    /// Period and phase (units), jobs.
    Periodic(u64, u64, u32),
    /// Released by the releaser every `gap` units, `count` times; minimum interarrival.
    Sporadic(u64, u32, u64),
    /// A one-shot thread.
    OneShot,
}

#[derive(Clone, Debug)]
enum Step {
    Work(u64),
    Sleep(u64),
    Yield,
}

#[derive(Clone, Debug)]
struct Plan {
    kind: Kind,
    cpu: usize,
    priority: i32,
    /// A relative deadline and an abort time (units), if any.
    deadline: Option<u64>,
    abort_after: Option<u64>,
    /// A member of the deferrable server's thread set (on CPU 0), if there is one: held when
    /// its budget runs out.
    in_set: bool,
    steps: Vec<Step>,
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        (5u64..40, 0u64..30, 1u32..4).prop_map(|(t, ph, n)| Kind::Periodic(t, ph, n)),
        (1u64..20, 1u32..4, 0u64..15).prop_map(|(g, n, mi)| Kind::Sporadic(g, n, mi)),
        Just(Kind::OneShot),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![(1u64..10).prop_map(Step::Work), (1u64..10).prop_map(Step::Sleep), Just(Step::Yield)]
}

fn plan() -> impl Strategy<Value = Plan> {
    (
        kind(),
        0usize..2,
        1i32..6,
        proptest::option::of(3u64..30),
        proptest::option::of(3u64..30),
        any::<bool>(),
        proptest::collection::vec(step(), 1..5),
    )
        .prop_map(|(kind, cpu, priority, deadline, abort_after, in_set, steps)| Plan {
            kind,
            cpu,
            priority,
            deadline,
            abort_after,
            in_set,
            steps,
        })
}

/// `server`: a deferrable server (budget and period, units) for the threads of CPU 0 marked
/// `in_set`.
fn run(
    cpus: usize,
    policy: &str,
    plans: &[Plan],
    server: Option<(u64, u64)>,
    kills: &[(u64, usize)],
) -> tempi::RunOutcome {
    let make = registered::scheduler(policy, UNIT * 3);
    let global = make().global();
    let config = Config::new(cpus).verify(true).scheduler_factory(make);
    // Thread sets belong to one CPU: not under a global policy.
    let server = server.filter(|_| !global);
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(config).unwrap();
    let set = server.map(|(q, period)| {
        let s = rt.create_set("server", 0).unwrap();
        rt.set_budget(s, tempi::Budget::deferrable_server(UNIT * q as u32, UNIT * period as u32)).unwrap();
        s
    });
    let mut ids: Vec<ThreadId> = Vec::new();
    let mut sporadic: Vec<(ThreadId, u64, u32)> = Vec::new();
    for (i, p) in plans.iter().enumerate() {
        let mut spec = ThreadSpec::new(format!("t{i}")).cpu(p.cpu % cpus).priority(p.priority);
        spec = match p.kind {
            Kind::Periodic(t, ph, n) => spec.periodic(UNIT * t as u32).phase(UNIT * ph as u32).max_jobs(n),
            Kind::Sporadic(_, n, mi) => spec.sporadic(UNIT * mi as u32).max_jobs(n),
            Kind::OneShot => spec,
        };
        if let Some(d) = p.deadline {
            spec = spec.deadline(UNIT * d as u32);
        }
        if let Some(a) = p.abort_after {
            spec = spec.abort_after(UNIT * a as u32);
        }
        let steps = p.steps.clone();
        let id = rt
            .spawn(spec, move |cx| {
                for s in &steps {
                    match *s {
                        Step::Work(u) => cx.work(UNIT * u as u32),
                        Step::Sleep(u) => cx.sleep(UNIT * u as u32),
                        Step::Yield => cx.yield_now(),
                    }
                }
            })
            .unwrap();
        if let (Some(s), true, 0) = (set, p.in_set, p.cpu % cpus) {
            rt.add_to_set(s, id).unwrap();
        }
        if let Kind::Sporadic(gap, n, _) = p.kind {
            sporadic.push((id, gap, n));
        }
        ids.push(id);
    }
    if !sporadic.is_empty() {
        rt.spawn(ThreadSpec::new("releaser").priority(8), move |cx| {
            let rounds = sporadic.iter().map(|s| s.2).max().unwrap_or(0);
            for k in 0..rounds {
                for &(id, gap, n) in &sporadic {
                    if k < n {
                        // It may have been killed already, or release too early: both are
                        // answers, not failures.
                        let _ = cx.release(id);
                        let _ = gap;
                    }
                }
                cx.sleep(UNIT * sporadic.iter().map(|s| s.1).min().unwrap_or(1) as u32);
            }
        })
        .unwrap();
    }
    spawn_killer(&mut rt, 9, UNIT, kills.iter().map(|&(at, v)| (at, ids[v % ids.len()])).collect());
    rt.run_until(Time::from_millis(200)).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn kills_in_any_state_leave_a_sound_run(
        cpus in 1usize..3,
        policy in prop::sample::select(registered::schedulers(UNIT * 3, |_| true)),
        plans in proptest::collection::vec(plan(), 1..6),
        server in proptest::option::of((1u64..4, 4u64..12)),
        kills in proptest::collection::vec((0u64..60, 0usize..6), 1..4),
    ) {
        let mut kills = kills;
        kills.sort();
        let out = run(cpus, &policy, &plans, server, &kills);
        for t in &out.threads {
            prop_assert!(
                matches!(t.outcome, Some(ThreadOutcome::Completed | ThreadOutcome::Killed)),
                "{} under {}: {:?}", t.name, policy, t.outcome
            );
        }
        // No release is stamped after its thread's kill took effect.
        for t in out.threads.iter().filter(|t| t.outcome == Some(ThreadOutcome::Killed)) {
            let exit = out.trace.iter().filter(|r| r.thread == t.id && r.kind == tempi::trace::TraceKind::Exit).map(|r| r.time).max();
            let last_release = out.trace.iter().filter(|r| r.thread == t.id && r.kind == tempi::trace::TraceKind::Release).map(|r| r.time).max();
            if let (Some(exit), Some(release)) = (exit, last_release) {
                prop_assert!(release <= exit, "{} released at {:?} after its end at {:?}", t.name, release, exit);
            }
        }
        // Ids of two runtimes differ in their runtime's tag: compare what they show.
        let again = run(cpus, &policy, &plans, server, &kills);
        let show = |o: &tempi::RunOutcome| format!("{:?}", o.trace.iter().map(|r| (r.time, r.cpu, r.kind, r.arg)).collect::<Vec<_>>());
        prop_assert_eq!(show(&again), show(&out));
    }
}
