//! Who gets a released lock is the lock policy's answer ([`LockPolicy::heir_rank`]): the same
//! two waiters, in the same order, get the lock most urgent first under the default rank and
//! most important first under a protocol that ranks by importance. Scheduler: fixed priority.

use crate::common;

use std::sync::{Arc, Mutex as StdMutex};

use common::ms;
use tempi::policy::lock::LockPolicy;
use tempi::policy::sched::{SchedInfo, Urgency};
use tempi::sync::LockSpec;
use tempi::{Runtime, ThreadSpec};

/// Basic priority, except that a released lock goes to its most important waiter.
struct ByImportance;
impl LockPolicy for ByImportance {
    fn name(&self) -> &str {
        "by-importance"
    }
    fn raises_holder(&self) -> bool {
        false
    }
    fn heir_rank(&self, waiter: &SchedInfo) -> Urgency {
        Urgency(i64::from(waiter.importance))
    }
}

/// `owner` (priority 1) holds the lock from 0 to 3 ms; `urgent` (priority 5, importance 1)
/// asks at 1 ms, `important` (priority 4, importance 9) at 2 ms. Returns who took it, in order.
fn takers(spec: LockSpec) -> Vec<String> {
    let log: Arc<StdMutex<Vec<String>>> = Arc::default();
    let mut rt = Runtime::simulated(1);
    let m = Arc::new(rt.create_mutex((), spec).unwrap());
    let at = |name: &str, prio: i32, importance: u32, phase: u64| {
        ThreadSpec::new(name).priority(prio).importance(importance).periodic(ms(100)).phase(ms(phase)).max_jobs(1)
    };
    for (spec, hold) in [(at("owner", 1, 0, 0), 3), (at("urgent", 5, 1, 1), 1), (at("important", 4, 9, 2), 1)] {
        let (m, log, name) = (m.clone(), log.clone(), spec.name().to_string());
        rt.spawn(spec, move |cx| {
            let _g = m.lock(cx).unwrap();
            log.lock().unwrap().push(format!("{name}@{}", cx.now()));
            cx.work(ms(hold));
        })
        .unwrap();
    }
    rt.run().unwrap();
    log.lock().unwrap().clone()
}

#[test]
fn lock_heir_is_the_policys_highest_ranked_waiter() {
    assert_eq!(
        takers(LockSpec::new("m").protocol("bp")),
        ["owner@0.000000ms", "urgent@3.000000ms", "important@4.000000ms"]
    );
    assert_eq!(
        takers(LockSpec::new("m").policy(ByImportance)),
        ["owner@0.000000ms", "important@3.000000ms", "urgent@4.000000ms"]
    );
}
