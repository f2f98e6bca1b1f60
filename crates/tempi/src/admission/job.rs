//! The code around an admitted job's body: putting the thread under its WCET budget, and
//! telling the engine the job ended however it ends (returned, killed at its WCET, aborted,
//! panicked, stopped with the runtime), or withdrawing it if its body never ran.

use std::sync::{Arc, Mutex};

use crate::kernel::Ctx;
use crate::policy::admit::AdmitId;
use crate::BudgetEvent;
use crate::SetId;

use super::log::{JobEvent, JobEventKind};
use super::{is_overrun, lock, State};

/// A job's body, run once.
pub(super) type Body = Box<dyn FnOnce(&Ctx<'_>) + Send>;

/// Ends the job in its slot when dropped: on return and during any unwind alike. Makes no
/// runtime call, so it is safe while the thread unwinds.
struct EndOfJob {
    state: Arc<Mutex<State>>,
    slot: usize,
    id: AdmitId,
    /// Whether the body began: a job whose body never ran leaves the engine altogether
    /// ([`State::withdraw_job`]); one that ran gives back what it did not use and keeps its
    /// entry until its deadline ([`State::end_job`]).
    began: bool,
}

impl Drop for EndOfJob {
    fn drop(&mut self) {
        let mut st = lock(&self.state);
        if self.began {
            st.end_job(self.slot, self.id);
        } else {
            st.withdraw_job(self.slot, self.id);
        }
    }
}

/// The thread body of admitted job `id`, holding pool slot `slot` (set `set`).
///
/// The body owns the job's end: if it is dropped without having run (the spawn failed, or
/// the thread was killed or the runtime stopped before it started), or the job could not be
/// put under its budget, the job is withdrawn then: its set is free again and its entry
/// leaves the engine at once, as if it had never been admitted.
pub(super) fn wrap(
    state: Arc<Mutex<State>>,
    slot: usize,
    set: SetId,
    id: AdmitId,
    body: Body,
) -> impl FnMut(&Ctx<'_>) + Send + 'static {
    let mut pending = Some((body, EndOfJob { state: state.clone(), slot, id, began: false }));
    move |cx: &Ctx<'_>| {
        let Some((body, mut end)) = pending.take() else { return };
        let (wcet, budget) = {
            let mut st = lock(&state);
            let Some(job) = st.slots[slot].job.as_mut().filter(|j| j.id == id) else { return };
            job.thread = Some(cx.id());
            (job.wcet, job.budget)
        };
        // The budget is refilled before the thread joins, so an exhausted budget left by the
        // previous holder cannot strike it, and only this job's time counts against its WCET
        // (and the per-job overhead).
        let enforced = cx.replenish_budget(set, budget).and_then(|()| cx.add_to_set(set, cx.id()));
        if let Err(e) = enforced {
            let mut st = lock(&state);
            let request = st.slots[slot].job.as_ref().map(|j| j.request.clone()).unwrap_or_else(|| "".into());
            let event =
                JobEvent { request, thread: Some(cx.id()), at: cx.now(), wcet, kind: JobEventKind::Unenforced(e) };
            st.events.push(event);
            return;
        }
        end.began = true;
        body(cx);
        // Leaving the set before the slot is freed keeps the next holder alone in it. A killed
        // or unwinding job cannot make this call; its thread leaves the set as it ends, before
        // any other thread runs.
        let _ = cx.remove_from_set(set, cx.id());
        drop(end);
    }
}

/// The budget handler of pool slot `slot`: an exhaustion while a job holds the slot is that
/// job's overrun (the `Kill` action stops it).
pub(super) fn overrun_handler(state: Arc<Mutex<State>>, slot: usize) -> impl FnMut(&BudgetEvent) + Send + 'static {
    move |event: &BudgetEvent| {
        if !is_overrun(event.kind) {
            return;
        }
        let mut st = lock(&state);
        let Some(job) = st.slots[slot].job.as_ref() else { return };
        let record = JobEvent {
            request: job.request.clone(),
            thread: job.thread,
            at: event.at,
            wcet: job.wcet,
            kind: JobEventKind::Overrun,
        };
        st.events.push(record);
    }
}
