//! Speculation only on time the guaranteed work does not need: on virtual CPUs with exact
//! timelines, reactive threads keep their response times while warp workers run below them,
//! and an event still uncommitted at its commit deadline is dropped and its fallback runs on
//! the reactive watcher at the first watcher period at or after the deadline.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::warp::{
    phold::Phold, sequential, Committed, DeadlineSpec, Emit, Engine, EventKey, LpId, LpSpec, Model, ParallelSpec,
    Rollback, Scenario, WarpConfig,
};
use tempi::{Runtime, ThreadSpec, Time};

fn us(n: u64) -> Duration {
    Duration::from_micros(n)
}

fn paced(priority: i32) -> ParallelSpec {
    ParallelSpec { priority, event_cost: us(1), poll: us(1), idle_polls: 4, ..ParallelSpec::default() }
}

fn count(n: &mut u64, _: &Committed<'_, Phold>) {
    *n += 1;
}

/// PHOLD on two workers beside a reactive thread on each CPU (period 20 us, WCET 5 us, 40
/// jobs); returns the reactive threads' misses and largest response time, and the commits.
fn reactive_beside_warp(worker_priority: i32) -> (u64, Duration, u64, u64) {
    let model = Phold { lps: 16, remote_fraction: 0.3, lookahead: 1, mean_delay: 4 };
    let config = WarpConfig { workers: 2, end_time: 60, history_per_lp: 16, gvt_interval: 8, ..WarpConfig::default() };
    let seq = sequential(&model.scenario(2, 2, 3), &config, |_| {}).unwrap();
    let mut rt = Runtime::simulated(2);
    for cpu in 0..2 {
        let spec = ThreadSpec::new(format!("ctl{cpu}")).cpu(cpu).periodic(us(20)).wcet(us(5)).priority(10).max_jobs(40);
        rt.spawn(spec, |cx| cx.work(us(5))).unwrap();
    }
    let engine = Engine::new(model.scenario(2, 2, 3), config).unwrap();
    let par = engine.spawn_on(&mut rt, paced(worker_priority), vec![0u64; 2], count).unwrap();
    let out = rt.run().unwrap();
    let (engine, counts) = par.finish().unwrap();
    assert_eq!(counts.iter().sum::<u64>(), engine.outcome().committed);
    let ctl: Vec<_> = (0..2).map(|c| out.thread_named(&format!("ctl{c}")).unwrap().stats).collect();
    let misses = ctl.iter().map(|s| s.misses).sum();
    let worst = ctl.iter().filter_map(|s| s.response_max).max().unwrap();
    assert!(ctl.iter().all(|s| s.completed == 40));
    (misses, worst, engine.outcome().committed, seq.committed)
}

#[test]
fn reactive_threads_never_wait_for_speculation() {
    // Workers at the lowest priority: every reactive job runs from its release to its end
    // without a gap (response time = WCET), and the engine still commits the reference.
    let (misses, worst, committed, reference) = reactive_beside_warp(i32::MIN);
    assert_eq!((misses, worst), (0, us(5)));
    assert_eq!(committed, reference);
    // The control: workers above the reactive threads delay them (the test can fail).
    let (_, worst, committed, reference) = reactive_beside_warp(100);
    assert!(worst > us(5), "{worst:?}");
    assert_eq!(committed, reference);
}

/// Each LP processes its scheduled events; the commit deadline of timestamp `t` is
/// `deadlines[t]` (none when absent).
struct Due {
    deadlines: Vec<Option<Duration>>,
}

impl Model for Due {
    type State = Vec<u64>;
    type Event = ();
    type Saved = ();

    fn event(&self, _: LpId, seen: &mut Vec<u64>, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
        seen.push(out.time());
    }

    fn commit_deadline(&self, _: LpId, key: &EventKey, _: &()) -> Option<Duration> {
        self.deadlines.get(key.time as usize).copied().flatten()
    }
}

type Fallbacks = Arc<Mutex<Vec<(Time, u32, u64, Duration)>>>;

fn late(sink: &mut Vec<(u32, u64, bool)>, c: &Committed<'_, Due>) {
    sink.push((c.lp.0, c.key.time, c.late));
}

#[test]
fn a_fallback_runs_when_a_commit_deadline_passes() {
    // LP 0 (CPU 0) has events at 1..=4, LP 1 (CPU 1) one at 2. Each event costs 10 us of
    // worker time; the first GVT round cannot come before 10 us. The event at 3 is due at
    // 3 us: the watcher of CPU 0 (every 5 us) drops it at 5 us and runs its fallback (2 us of
    // reactive work); the others are due at 1 s and commit in time.
    let mut deadlines = vec![Some(Duration::from_secs(1)); 5];
    deadlines[3] = Some(us(3));
    let mut s = Scenario::new(Due { deadlines });
    let a = s.add_lp(LpSpec { state: Vec::new(), rollback: Rollback::StateSaving, worker: 0 });
    let b = s.add_lp(LpSpec { state: Vec::new(), rollback: Rollback::StateSaving, worker: 1 });
    for t in 1..=4 {
        s.schedule(a, t, ()).unwrap();
    }
    s.schedule(b, 2, ()).unwrap();
    let config = WarpConfig { workers: 2, end_time: 100, gvt_interval: 2, ..WarpConfig::default() };
    let seen: Fallbacks = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let watch = DeadlineSpec::new(us(5), move |cx, f| {
        log.lock().unwrap().push((cx.now(), f.lp.0, f.key.time, f.deadline));
        cx.work(us(2));
    });
    let spec = ParallelSpec { event_cost: us(10), poll: us(1), deadlines: Some(watch), ..ParallelSpec::default() };
    let mut rt = Runtime::simulated(2);
    let par = Engine::new(s, config).unwrap().spawn_on(&mut rt, spec, vec![Vec::new(); 2], late).unwrap();
    let out = rt.run().unwrap();
    let (engine, sinks) = par.finish().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![(Time::from_micros(5), 0, 3, us(3))]);
    let mut commits: Vec<_> = sinks.into_iter().flatten().collect();
    commits.sort();
    assert_eq!(commits, vec![(0, 1, false), (0, 2, false), (0, 3, true), (0, 4, false), (1, 2, false)]);
    assert_eq!(engine.state(a).unwrap(), &vec![1, 2, 3, 4]);
    let o = engine.outcome();
    assert_eq!((o.fallbacks, o.late), (1, 1));
    assert_eq!(engine.counters(a).unwrap().late, 1);
    // The watchers are reactive: they never miss, and a watcher's job is its fallback.
    assert_eq!(out.total_misses(), 0);
    let w0 = &out.thread_named("warp-watch0").unwrap().stats;
    assert_eq!(w0.cpu_time, us(2));
}
