//! The code of an executing thread (task boundaries, waiting for planned starts, holding each
//! task to its window) and the overrun handler of the enforcement pool.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::time::Duration;

use crate::kernel::Ctx;
use crate::policy::admit::planner::GroupId;
use crate::Time;
use crate::{BudgetEvent, BudgetEventKind};

use super::{lock, Spring, TaskBody, TaskCx, TaskOutcome};

/// What an executing thread runs: the tasks of thread `thread` of group entry `g`, whose
/// records start at `base`.
pub(super) struct ThreadBody {
    pub(super) g: usize,
    pub(super) id: GroupId,
    pub(super) thread: usize,
    pub(super) base: usize,
    pub(super) bodies: Vec<TaskBody>,
}

/// Frees the thread's enforcement slot and marks its tasks that never ran as killed, however
/// the thread ends (returned, killed at an overrun, stopped with the run). Makes no runtime
/// call, so it is safe while the thread unwinds.
struct Leave {
    spring: Spring,
    /// The enforcement set held by the running task, if any (CPU, index in the pool).
    slot: std::cell::Cell<Option<(usize, usize)>>,
    records: std::ops::Range<usize>,
}

impl Drop for Leave {
    fn drop(&mut self) {
        let mut st = lock(&self.spring.state);
        if let Some((cpu, i)) = self.slot.get() {
            let s = &mut st.pool[cpu][i];
            s.busy = false;
            s.record = None;
        }
        for r in &mut st.records[self.records.clone()] {
            if r.outcome == TaskOutcome::Planned {
                r.outcome = TaskOutcome::Killed;
            }
        }
    }
}

/// The thread body of `t` (a one-shot thread: called once).
pub(super) fn body(spring: Spring, t: ThreadBody) -> impl FnMut(&Ctx<'_>) + Send + 'static {
    let mut t = Some(t);
    move |cx: &Ctx<'_>| {
        let Some(t) = t.take() else { return };
        run(&spring, cx, t);
    }
}

fn run(spring: &Spring, cx: &Ctx<'_>, t: ThreadBody) {
    let cpu = cx.cpu();
    let count = t.bodies.len();
    let leave = Leave { spring: spring.clone(), slot: std::cell::Cell::new(None), records: t.base..t.base + count };
    for (task, code) in t.bodies.into_iter().enumerate() {
        let record = t.base + task;
        // A task boundary: a killed group stops here; otherwise wait for the planned start,
        // reading the plan again after each wait (the planner may have delayed the task).
        let (start, finish, wcet) = loop {
            let Some(window) = planned(spring, t.g, t.id, t.thread, task) else { return };
            if cx.now() >= window.0 {
                break window;
            }
            cx.sleep_until(window.0);
        };
        // The enforcement set is taken for the task only: planned tasks of one CPU do not
        // overlap, so a CPU's pool needs about one set however many threads wait there.
        let slot = {
            let mut st = lock(&spring.state);
            let free = st.pool[cpu].iter().position(|s| !s.busy);
            if let Some(i) = free {
                st.pool[cpu][i].busy = true;
            } else {
                let name = st.groups[t.g].name.clone();
                st.events.push(format!(
                    "{}: group \"{name}\": no free enforcement set on CPU {cpu}; the task runs unenforced",
                    cx.now()
                ));
            }
            free.map(|i| (i, st.pool[cpu][i].set))
        };
        leave.slot.set(slot.map(|(i, _)| (cpu, i)));
        {
            let mut st = lock(&spring.state);
            let r = &mut st.records[record];
            r.planned_start = start;
            r.planned_finish = finish;
            r.actual_start = Some(cx.now());
            r.outcome = TaskOutcome::Running;
            if let Some((i, _)) = slot {
                st.pool[cpu][i].record = Some((record, t.g));
            }
        }
        // Refilled before joining, so an exhausted budget left by the slot's previous holder
        // (or this thread's previous task) cannot strike this task.
        let mut joined = None;
        if let Some((_, set)) = slot {
            let window = finish.saturating_since(cx.now()).max(Duration::from_nanos(1));
            match cx.replenish_budget(set, window).and_then(|()| cx.add_to_set(set, cx.id())) {
                Ok(()) => joined = Some(set),
                Err(e) => {
                    let mut st = lock(&spring.state);
                    let message = format!("{}: group \"{}\": task runs unenforced: {e}", cx.now(), st.groups[t.g].name);
                    st.events.push(message);
                }
            }
        }
        let tcx =
            TaskCx { spring, group: t.id, thread: t.thread, task, planned_start: start, planned_finish: finish, wcet };
        // A panic of the task's code ends its thread and kills its group, as an overrun does;
        // the task is recorded as panicked at that instant before the unwind goes on. The runtime's own unwinds (a kill, the end
        // of the run) are left to `Leave` and the overrun handler.
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| code(cx, &tcx))) {
            let cause = crate::UnwindCause::of(&*payload);
            if let crate::UnwindCause::Panic(why) = cause {
                let mut st = lock(&spring.state);
                let r = &mut st.records[record];
                r.actual_finish = Some(cx.now());
                r.outcome = TaskOutcome::Panicked;
                let message = format!("{}: group \"{}\": a task panicked: {why}", cx.now(), r.group);
                st.events.push(message);
                // The same rule as an overrun: a task that did not finish as planned breaks
                // the precondition of every later task of its group, on any of its threads.
                if !st.groups[t.g].killed {
                    st.kill_group(t.g, cx.now());
                }
            } else if cause == crate::UnwindCause::Kill {
                // Killed while it ran (a kill of its thread; an overrun has already recorded
                // the task as overrun): it ends here, killed, rather than left running.
                let mut st = lock(&spring.state);
                let r = &mut st.records[record];
                if r.outcome == TaskOutcome::Running {
                    r.actual_finish = Some(cx.now());
                    r.outcome = TaskOutcome::Killed;
                }
            }
            resume_unwind(payload);
        }
        // Out of the set between tasks: a budget that runs out as the task ends exactly at
        // its window's end must not strike the thread while it waits for its next task.
        if let Some(set) = joined {
            let _ = cx.remove_from_set(set, cx.id());
        }
        let mut st = lock(&spring.state);
        let r = &mut st.records[record];
        r.actual_finish = Some(cx.now());
        r.outcome = TaskOutcome::Completed;
        if let Some((i, _)) = slot {
            st.pool[cpu][i].record = None;
            st.pool[cpu][i].busy = false;
        }
        leave.slot.set(None);
        // The budget counts CPU time; a task that waited inside its window (a synchronous
        // spawn, a sleep) can still end past it. That is an overrun too: reported, and the
        // group killed.
        if cx.now() > finish {
            st.records[record].outcome = TaskOutcome::Overrun;
            let message = format!(
                "{}: group \"{}\": a task ended after its window ({finish})",
                cx.now(),
                st.records[record].group
            );
            st.events.push(message);
            if !st.groups[t.g].killed {
                st.kill_group(t.g, cx.now());
            }
        }
    }
}

/// The planned window and WCET of a task, or `None` if its group was killed or the task has
/// left the plan.
fn planned(spring: &Spring, g: usize, id: GroupId, thread: usize, task: usize) -> Option<(Time, Time, Duration)> {
    let st = lock(&spring.state);
    if st.groups[g].killed {
        return None;
    }
    let found = st.planner.plan().tasks().find(|p| p.group == id && p.thread == thread && p.task == task);
    found.map(|p| (p.start, p.finish, p.wcet))
}

/// The budget handler of slot `i` on `cpu`: an exhaustion while a task holds the slot is that
/// task's overrun. The `Kill` action stops the thread; here the task is recorded as stopped
/// at that instant and its group is killed.
pub(super) fn overrun_handler(spring: Spring, cpu: usize, i: usize) -> impl FnMut(&BudgetEvent) + Send + 'static {
    move |event: &BudgetEvent| {
        if event.kind != BudgetEventKind::Exhausted {
            return;
        }
        let mut st = lock(&spring.state);
        let Some((record, g)) = st.pool.get(cpu).and_then(|p| p[i].record) else { return };
        let r = &mut st.records[record];
        r.actual_finish = Some(event.at);
        r.outcome = TaskOutcome::Overrun;
        let message = format!("{}: group \"{}\": a task overran its window and was stopped", event.at, r.group);
        st.events.push(message);
        if !st.groups[g].killed {
            st.kill_group(g, event.at);
        }
    }
}
