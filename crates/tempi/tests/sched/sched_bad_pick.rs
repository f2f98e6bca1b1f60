//! A scheduling policy that hands back a thread that is not ready ends the run with an error
//! naming the pick, after an orderly teardown (the threads' destructors run).

use crate::common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::ms;
use tempi::policy::sched::{ReadyReason, SchedInfo, Scheduler, Urgency};
use tempi::{Error, Runtime, ThreadId, ThreadSpec, Time};

/// First in, first out, except that it hands back the last thread that blocked.
#[derive(Default)]
struct Sticky {
    blocked: Option<ThreadId>,
    ready: Vec<ThreadId>,
}

impl Scheduler for Sticky {
    fn name(&self) -> &str {
        "sticky"
    }
    fn base_urgency(&self, t: &SchedInfo) -> Urgency {
        Urgency::from_priority(t.priority)
    }
    fn on_ready(&mut self, t: &SchedInfo, _why: ReadyReason) {
        self.ready.push(t.id);
    }
    fn on_blocked(&mut self, t: &SchedInfo) {
        self.blocked = Some(t.id);
    }
    fn on_removed(&mut self, t: ThreadId) {
        self.ready.retain(|&r| r != t);
    }
    fn should_preempt(&self, _running: &SchedInfo, _woken: &SchedInfo) -> bool {
        false
    }
    fn pick_next(&mut self, _now: Time) -> Option<ThreadId> {
        if self.ready.is_empty() {
            return None;
        }
        // Wrong on purpose: a thread that went to sleep is not ready.
        match self.blocked {
            Some(b) => Some(b),
            None => Some(self.ready.remove(0)),
        }
    }
}

struct Flag(Arc<AtomicBool>);
impl Drop for Flag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

#[test]
fn sched_wrong_pick_is_an_error_not_a_hang() {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::<Sticky>::default());
    let unwound = Arc::new(AtomicBool::new(false));
    let u = unwound.clone();
    let sleeper = rt
        .spawn(ThreadSpec::new("sleeper"), move |cx| {
            let _flag = Flag(u.clone());
            cx.sleep(ms(1));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("other"), |cx| cx.work(ms(1))).unwrap();
    let err = rt.run().unwrap_err();
    assert_eq!(err, Error::BadPick { scheduler: "sticky".into(), cpu: 0, thread: sleeper });
    assert!(err.to_string().contains("scheduler `sticky` picked"), "{err}");
    assert!(unwound.load(Ordering::SeqCst), "the sleeper was unwound at the end of the run");
}

/// In real time the other CPUs stop too: without that, this run would never end (the thread of
/// CPU 1 works forever and its scheduler never errs).
#[test]
fn sched_wrong_pick_stops_every_cpu_in_real_time() {
    let mut rt = tempi::Runtime::<tempi::clock::RealClock>::new(tempi::Config::new(2).pin(false)).unwrap();
    rt.set_scheduler(|| Box::<Sticky>::default());
    let sleeper = rt.spawn(ThreadSpec::new("sleeper").cpu(0), |cx| cx.sleep(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("other").cpu(0), |cx| cx.work(ms(1))).unwrap();
    rt.spawn(ThreadSpec::new("forever").cpu(1), |cx| loop {
        cx.work(std::time::Duration::from_micros(100));
    })
    .unwrap();
    let err = rt.run().unwrap_err();
    assert_eq!(err, Error::BadPick { scheduler: "sticky".into(), cpu: 0, thread: sleeper });
}
