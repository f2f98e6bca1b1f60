//! Properties of a policy's own on each thread (`ThreadSpec::sched_properties`, heard in
//! `Scheduler::on_properties`): a policy with a per-thread attribute written against the
//! public interface only. They reach the policy before it first ranks the thread, for threads
//! spawned before the run and during it, through a stacked scheduler, and a policy that does
//! not know their type is unaffected.

use std::any::Any;
use std::sync::{Arc, Mutex};

use tempi::policy::sched::{FixedPriority, ReadyReason, SchedInfo, Scheduler, Urgency, WaitInheritance};
use tempi::{Runtime, ThreadId, ThreadSpec, Time};

/// A thread's rank under [`ByRank`]: larger runs first.
struct Rank(i64);

/// Runs the ready thread of the highest rank; a thread without one ranks 0.
struct ByRank {
    ranks: Vec<(ThreadId, i64)>,
    ready: Vec<(i64, ThreadId)>,
    /// Whether a rank was asked for before the thread's properties arrived.
    asked_early: Arc<Mutex<Vec<ThreadId>>>,
}

impl ByRank {
    fn new(asked_early: Arc<Mutex<Vec<ThreadId>>>) -> ByRank {
        ByRank { ranks: Vec::with_capacity(16), ready: Vec::with_capacity(16), asked_early }
    }
}

impl Scheduler for ByRank {
    fn name(&self) -> &str {
        "by-rank"
    }
    fn on_properties(&mut self, t: &SchedInfo, p: &dyn Any) {
        if let Some(Rank(r)) = p.downcast_ref::<Rank>() {
            self.ranks.push((t.id, *r));
        }
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        match self.ranks.iter().find(|(id, _)| *id == t.id) {
            Some(&(_, r)) => Urgency(r),
            None => {
                self.asked_early.lock().unwrap().push(t.id);
                Urgency(0)
            }
        }
    }
    fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) {
        self.ready.push((t.urgency.0, t.id));
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.ready.retain(|(_, t)| *t != id);
    }
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        // The highest rank; the earliest queued among equals.
        let best = (0..self.ready.len()).rev().max_by_key(|&i| self.ready[i].0)?;
        Some(self.ready.remove(best).1)
    }
}

/// Spawn `ranks` (name, rank) in order, each recording its name when it runs, under
/// `ByRank` (stacked under priority inheritance when `stacked`), and a spawner of rank 100
/// that spawns "late" (rank 50) during the run; returns the order the threads ran in and the
/// threads whose rank was asked for before their properties came.
fn run(ranks: &[(&'static str, i64)], stacked: bool) -> (Vec<&'static str>, Vec<ThreadId>) {
    let order = Arc::new(Mutex::new(Vec::new()));
    let asked_early = Arc::new(Mutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    let early = asked_early.clone();
    rt.set_scheduler(move || Box::new(ByRank::new(early.clone())));
    if stacked {
        rt.stack_scheduler(|prev| Box::new(WaitInheritance::new(prev)));
    }
    for &(name, rank) in ranks {
        let order = order.clone();
        rt.spawn(ThreadSpec::new(name).sched_properties(Rank(rank)), move |_| order.lock().unwrap().push(name))
            .unwrap();
    }
    let late_order = order.clone();
    rt.spawn(ThreadSpec::new("spawner").sched_properties(Rank(100)), move |cx| {
        let order = late_order.clone();
        cx.spawn(ThreadSpec::new("late").sched_properties(Rank(50)), move |_| order.lock().unwrap().push("late"))
            .unwrap();
        late_order.lock().unwrap().push("spawner");
    })
    .unwrap();
    rt.run().unwrap();
    let order = order.lock().unwrap().clone();
    let early = asked_early.lock().unwrap().clone();
    (order, early)
}

#[test]
fn a_policy_ranks_threads_by_properties_of_its_own() {
    let (order, early) = run(&[("low", 1), ("high", 9), ("middle", 5)], false);
    assert_eq!(order, ["spawner", "late", "high", "middle", "low"]);
    assert!(early.is_empty(), "ranks asked before the properties came: {early:?}");
}

#[test]
fn a_stacked_scheduler_hands_the_properties_down() {
    let (order, early) = run(&[("low", 1), ("high", 9), ("middle", 5)], true);
    assert_eq!(order, ["spawner", "late", "high", "middle", "low"]);
    assert!(early.is_empty(), "ranks asked before the properties came: {early:?}");
}

#[test]
fn a_policy_that_does_not_know_the_properties_ignores_them() {
    // Fixed priority, equal priorities: arrival order, whatever the ranks say.
    let order = Arc::new(Mutex::new(Vec::new()));
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(FixedPriority::new()));
    for (name, rank) in [("first", 1), ("second", 9)] {
        let order = order.clone();
        rt.spawn(ThreadSpec::new(name).sched_properties(Rank(rank)), move |_| order.lock().unwrap().push(name))
            .unwrap();
    }
    rt.run().unwrap();
    assert_eq!(*order.lock().unwrap(), ["first", "second"]);
}
