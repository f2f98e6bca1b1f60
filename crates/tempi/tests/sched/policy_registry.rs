//! The policy registries: an application registers a policy of each family and uses it by
//! name, as the built-ins are used; taken and invalid names are refused. Registration is
//! process-wide, so every test here registers names of its own.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::{ms, segments};
use tempi::analysis::{Protocol, UnknownProtocol};
use tempi::policy::budget::{self, BudgetAction, Enforcement};
use tempi::policy::lock::{self, LockPolicy, LockView};
use tempi::policy::queue::{self, QueuePolicy};
use tempi::policy::sched::{self, ReadyReason, SchedInfo, Scheduler, Urgency};
use tempi::policy::RegistryError;
use tempi::sync::{LockSpec, SemSpec};
use tempi::{Budget, BudgetEvent, Replenishment, RunOutcome, Runtime, ThreadId, ThreadSpec, Time};

/// Last come, first served, never preempting.
#[derive(Default)]
struct Lifo {
    stack: Vec<ThreadId>,
}

impl Scheduler for Lifo {
    fn name(&self) -> &str {
        "lifo"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
    fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) {
        self.stack.push(t.id)
    }
    fn on_removed(&mut self, id: ThreadId) {
        self.stack.retain(|&t| t != id)
    }
    fn should_preempt(&self, _running: &SchedInfo, _woken: &SchedInfo) -> bool {
        false
    }
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        self.stack.pop()
    }
}

#[test]
fn registered_scheduler_is_used_by_name() {
    sched::register("lifo", || Box::new(Lifo::default())).unwrap();
    assert!(sched::names().contains(&"lifo".to_string()));
    let factory = sched::by_name("lifo", None).unwrap();
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(move || factory());
    for name in ["a", "b", "c"] {
        rt.spawn(ThreadSpec::new(name), |cx| cx.work(ms(1))).unwrap();
    }
    let out = rt.run().unwrap();
    assert_eq!(segments(&out), ["c:0-1:exit", "b:1-2:exit", "a:2-3:exit"]);
}

#[test]
fn registered_scheduler_with_quantum_gets_the_quantum() {
    sched::register_with_quantum("rr-from-registry", |q| {
        let q = q?;
        Some(Arc::new(move || Box::new(sched::RoundRobin::new(q)) as Box<dyn Scheduler>) as sched::SchedulerFactory)
    })
    .unwrap();
    assert!(sched::by_name("rr-from-registry", None).is_none());
    let factory = sched::by_name("rr-from-registry", Some(ms(1))).unwrap();
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(move || factory());
    rt.spawn(ThreadSpec::new("a"), |cx| cx.work(ms(2))).unwrap();
    rt.spawn(ThreadSpec::new("b"), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(segments(&out)[..2], ["a:0-1:slice", "b:1-2:exit"]);
}

/// Basic priority, written by an application: no inheritance, no holder raise.
struct PlainLock;
impl LockPolicy for PlainLock {
    fn name(&self) -> &str {
        "plain-lock"
    }
    fn raises_holder(&self) -> bool {
        false
    }
    fn uncontended_fast_path(&self) -> bool {
        true
    }
}

/// Priority inheritance, written by an application.
struct LendingLock;
impl LockPolicy for LendingLock {
    fn name(&self) -> &str {
        "lending-lock"
    }
    fn raises_holder(&self) -> bool {
        false
    }
    fn uncontended_fast_path(&self) -> bool {
        true
    }
    fn inherits(&self) -> bool {
        true
    }
}

/// An immediate ceiling of its own: the analysis cannot bound it from outside.
struct OwnCeiling;
impl LockPolicy for OwnCeiling {
    fn name(&self) -> &str {
        "own-ceiling"
    }
    fn holding_urgency(&self, _owner: &SchedInfo, lock: &LockView) -> Option<Urgency> {
        lock.ceiling
    }
}

/// `low` holds the lock for 4 ms from 0, `high` wants it at 1, `medium` (no lock) computes
/// 3 ms from 2.
fn inversion(protocol: &str) -> RunOutcome {
    let one_job = |phase| ThreadSpec::new("x").periodic(ms(1000)).phase(ms(phase)).max_jobs(1);
    let mut rt = Runtime::simulated(1);
    let lock = Arc::new(rt.create_mutex((), LockSpec::new("L").protocol(protocol)).unwrap());
    let l = lock.clone();
    rt.spawn(one_job(0).priority(1), move |cx| {
        let _g = l.lock(cx).unwrap();
        cx.work(ms(4));
    })
    .unwrap();
    rt.spawn(one_job(1).priority(3), move |cx| {
        let _g = lock.lock(cx).unwrap();
        cx.work(ms(1));
    })
    .unwrap();
    rt.spawn(one_job(2).priority(2), |cx| cx.work(ms(3))).unwrap();
    rt.run().unwrap()
}

#[test]
fn registered_lock_protocols_behave_as_the_built_ins_they_copy() {
    lock::register("plain-lock", || Box::new(PlainLock)).unwrap();
    lock::register("lending-lock", || Box::new(LendingLock)).unwrap();
    assert_eq!(LockSpec::new("m").protocol("lending-lock").protocol_name(), "lending-lock");
    assert_eq!(segments(&inversion("plain-lock")), segments(&inversion("bp")));
    assert_eq!(segments(&inversion("lending-lock")), segments(&inversion("bpi")));
    assert_ne!(segments(&inversion("lending-lock")), segments(&inversion("bp")));
}

#[test]
fn analysis_reads_the_lock_registry() {
    for p in Protocol::ALL {
        let entry = lock::registry().entry(p.name()).unwrap();
        assert!(entry.built_in, "{p} is a built-in lock protocol");
        assert_eq!(Protocol::for_lock_policy(p.name()), Ok(p));
    }
    assert_eq!(Protocol::from_name("pi"), Some(Protocol::Bpi));
    assert_eq!(Protocol::from_name("icpp"), Some(Protocol::Srp));
    lock::register("analysed-plain", || Box::new(PlainLock)).unwrap();
    lock::register("analysed-lending", || Box::new(LendingLock)).unwrap();
    lock::register("own-ceiling", || Box::new(OwnCeiling)).unwrap();
    assert_eq!(Protocol::for_lock_policy("analysed-plain"), Ok(Protocol::Bp));
    assert_eq!(Protocol::for_lock_policy("analysed-lending"), Ok(Protocol::Bpi));
    let refused = Protocol::for_lock_policy("own-ceiling").unwrap_err();
    assert_eq!(refused, UnknownProtocol::NotAnalysable("own-ceiling".into()));
    assert!(refused.to_string().contains("the analysis does not know lock protocol \"own-ceiling\""));
    assert_eq!(Protocol::for_lock_policy("nowhere"), Err(UnknownProtocol::NotRegistered("nowhere".into())));
}

/// The most important waiter first.
struct ByImportance;
impl QueuePolicy for ByImportance {
    fn name(&self) -> &str {
        "by-importance"
    }
    fn rank(&self, waiter: &SchedInfo) -> i64 {
        waiter.importance as i64
    }
}

#[test]
fn registered_queue_policy_orders_a_semaphore() {
    queue::register("by-importance", || Box::new(ByImportance)).unwrap();
    let mut rt = Runtime::simulated(1);
    let sem = Arc::new(rt.create_semaphore(SemSpec::new("s", 0).queue_name("by-importance")).unwrap());
    let served = Arc::new(StdMutex::new(Vec::new()));
    for (name, importance) in [("one", 1), ("three", 3), ("two", 2)] {
        let (sem, served) = (sem.clone(), served.clone());
        rt.spawn(ThreadSpec::new(name).priority(2).importance(importance), move |cx| {
            sem.procure(cx).unwrap();
            served.lock().unwrap().push(name);
        })
        .unwrap();
    }
    rt.spawn(ThreadSpec::new("giver").priority(1), move |cx| {
        for _ in 0..3 {
            sem.vacate(cx).unwrap();
        }
    })
    .unwrap();
    rt.run().unwrap();
    assert_eq!(*served.lock().unwrap(), ["three", "two", "one"]);
}

/// Demotes, as the built-in `demote` does.
struct AlwaysDemote;
impl BudgetAction for AlwaysDemote {
    fn name(&self) -> &str {
        "always-demote"
    }
    fn on_exhausted(&mut self, _event: &BudgetEvent) -> Enforcement {
        Enforcement::Demote
    }
}

/// A greedy one-shot thread (5 ms, in a set with 2 ms every 10 ms) above a background thread.
fn greedy(action: &str) -> Vec<String> {
    let mut rt = Runtime::simulated(1);
    let g = rt.spawn(ThreadSpec::new("greedy").priority(5), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("bg").priority(1), |cx| cx.work(ms(10))).unwrap();
    let s = rt.create_set("box", 0).unwrap();
    rt.add_to_set(s, g).unwrap();
    let budget = Budget::new(ms(2))
        .replenish(Replenishment::Periodic { period: ms(10) })
        .boxed_action(budget::by_name(action).unwrap());
    rt.set_budget(s, budget).unwrap();
    segments(&rt.run().unwrap())
}

#[test]
fn registered_budget_action_is_used_by_name() {
    budget::register("always-demote", || Box::new(AlwaysDemote)).unwrap();
    assert_eq!(greedy("always-demote"), greedy("demote"));
    assert_ne!(greedy("always-demote"), greedy("notify"));
}

#[test]
fn taken_and_invalid_names_are_refused() {
    let taken = |family: &'static str, name: &str| Err(RegistryError::Taken { family, name: name.into() });
    assert_eq!(sched::register("edf", || Box::new(Lifo::default())), taken("scheduler", "edf"));
    assert_eq!(sched::register("rm", || Box::new(Lifo::default())), taken("scheduler", "rm"));
    assert_eq!(lock::register("pi", || Box::new(PlainLock)), taken("lock protocol", "pi"));
    assert_eq!(lock::register("icpp", || Box::new(PlainLock)), taken("lock protocol", "icpp"));
    assert_eq!(queue::register("priority", || Box::new(ByImportance)), taken("queue policy", "priority"));
    assert_eq!(budget::register("kill", || Box::new(AlwaysDemote)), taken("budget action", "kill"));

    lock::register("twice", || Box::new(PlainLock)).unwrap();
    let again = lock::register("twice", || Box::new(LendingLock)).unwrap_err();
    assert_eq!(again.to_string(), "lock protocol \"twice\" is already registered");
    assert_eq!(lock::by_name("twice").unwrap().name(), "plain-lock", "the first registration stays");

    for bad in ["", "Mine", "9lives", "with space", "semi;colon", &"x".repeat(65)] {
        assert!(
            matches!(lock::register(bad, || Box::new(PlainLock)), Err(RegistryError::InvalidName { .. })),
            "{bad:?} should be refused"
        );
    }
    assert!(lock::register(&"x".repeat(64), || Box::new(PlainLock)).is_ok());
}

#[test]
fn built_in_names_come_first_in_the_listed_order() {
    assert_eq!(sched::names()[..sched::NAMES.len()], sched::NAMES[..]);
    assert_eq!(lock::names()[..lock::NAMES.len()], lock::NAMES[..]);
    assert_eq!(queue::names()[..3], ["fifo", "urgency", "deadline"]);
    assert_eq!(budget::names()[..4], ["notify", "demote", "suspend", "kill"]);
}
