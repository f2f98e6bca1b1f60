//! Real time: the planner on an OS thread of its own, off every dispatcher.
//!
//! The planner's thread owns the working plan. Requests reach it through a bounded queue
//! ([`Request`]: plan a group entry, take a killed group out of the plan, stop); it plans each
//! with its budget held in wall-clock time ([`Planner::submit_wall`]), then, under the
//! executor's lock and only briefly, publishes the plan (a copy into the executor's planner,
//! which the executing threads read at their task boundaries), records the answers and leaves
//! the threads of accepted groups for the planner's runtime thread to spawn. Nothing on a
//! dispatcher waits for planning: dispatchers only post requests (a non-blocking push onto
//! the preallocated queue) and take the executor's lock for short reads and writes.
//!
//! The planner's runtime thread (on CPU 0, sporadic) posts the declared groups due at its
//! release, then, while answers are owed, wakes every [`super::SpringSpec::poll`] to spawn
//! the threads of accepted groups on their planned CPUs. A panic while planning is caught on
//! the planner's thread: the request gets an error, later requests get the same error, and the
//! run goes on. The thread is joined when the runtime's threads are torn down (at the end of
//! the run, or when an unrun runtime is dropped).

use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TrySendError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::kernel::Ctx;
use crate::policy::admit::planner::{Decision, GroupId, Planner, Rejection};
use crate::thread::ThreadSpec;
use crate::Time;

use super::decide::decide;
use super::exec::{self, ThreadBody};
use super::{lock, Spring};

/// What the planner's thread is asked.
pub(super) enum Request {
    /// Plan group entry `g`, asked at `requested` (run time), posted at `posted`.
    Plan { g: usize, requested: Time, posted: Instant },
    /// Take group `id`'s tasks that had not started at `at` out of the working plan.
    Kill { id: GroupId, at: Time },
    /// End the thread.
    Stop,
}

/// The executor's side of the planner's thread.
pub(super) struct Link {
    tx: SyncSender<Request>,
    capacity: usize,
    /// Plan requests posted and not answered yet.
    pub(super) outstanding: usize,
    /// Threads of accepted groups waiting to be spawned, with their group entries.
    pub(super) ready: Vec<(ThreadSpec, ThreadBody)>,
    join: Option<JoinHandle<()>>,
    /// How often the planner's runtime thread looks for answers while some are owed.
    pub(super) poll: Duration,
    /// Why the planner stopped answering, once it has.
    pub(super) broken: Option<String>,
}

impl Link {
    /// Post `request` without waiting.
    pub(super) fn post(&self, request: Request) -> Result<(), Error> {
        match self.tx.try_send(request) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                Err(Error::InvalidConfig(format!("the planner's request queue is full ({} requests)", self.capacity)))
            }
            Err(TrySendError::Disconnected(_)) => Err(Error::InvalidConfig("the planner's thread has stopped".into())),
        }
    }

    /// Whether the planner's thread has ended (so no answer will come).
    fn gone(&self) -> bool {
        self.join.as_ref().is_none_or(JoinHandle::is_finished)
    }
}

/// Where and how the operating system runs the planner's thread.
pub(super) struct Placement {
    /// The CPU to pin it to, if any.
    pub(super) cpu: Option<usize>,
    /// Its `SCHED_FIFO` priority, or `None` for the time-sharing policy.
    pub(super) fifo: Option<i32>,
}

/// Start the planner's thread, owning `working` (a planner with the executor's
/// configuration), with a request queue of `capacity`, and wait until it has taken its
/// `placement`. Returns the link and one warning per part of the placement the operating
/// system refused (the thread then runs without it).
pub(super) fn start(
    spring: &Spring,
    working: Planner,
    capacity: usize,
    poll: Duration,
    placement: Placement,
) -> Result<(Link, Vec<String>), Error> {
    let (tx, rx) = sync_channel(capacity);
    let (placed_tx, placed_rx) = sync_channel(1);
    let me = spring.clone();
    let join = std::thread::Builder::new()
        .name("tempi-spring-planner".into())
        .spawn(move || {
            // Before the first request: a request is planned only once the thread runs where
            // and as it was asked to (or the refusal is known).
            let _ = placed_tx.send(take_placement(&placement));
            planner_loop(&me, &rx, working);
        })
        .map_err(|e| Error::Os(format!("starting the planner's thread: {e}")))?;
    let warnings = match placed_rx.recv() {
        Ok(warnings) => warnings,
        // The thread ended without answering: it can only have panicked, which `join` reports
        // at teardown; requests then get "the planner's thread has stopped".
        Err(_) => vec!["the planner's thread ended before it started planning".to_string()],
    };
    let link = Link { tx, capacity, outstanding: 0, ready: Vec::new(), join: Some(join), poll, broken: None };
    Ok((link, warnings))
}

/// Pin the calling thread and set its scheduling class as `placement` says; one warning per
/// refusal.
fn take_placement(placement: &Placement) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(cpu) = placement.cpu
        && let Err(e) = crate::os::pin_to_cpu(cpu)
    {
        warnings.push(format!("spring: could not pin the planner's thread to CPU {cpu}: {e}"));
    }
    if let Some(prio) = placement.fifo
        && let Err(e) = crate::os::set_fifo(prio)
    {
        warnings.push(format!(
            "spring: SCHED_FIFO priority {prio} refused for the planner's thread ({e}); it runs under the \
                 time-sharing policy and may answer late while dispatchers are busy"
        ));
    }
    warnings
}

/// Stops and joins the planner's thread when dropped (it lives in the planner's runtime
/// thread's body, which the runtime drops when it tears its threads down).
pub(super) struct Shutdown(pub(super) Spring);

impl Drop for Shutdown {
    fn drop(&mut self) {
        let (tx, join) = {
            let mut st = lock(&self.0.state);
            let Some(link) = st.rt.as_mut() else { return };
            (link.tx.clone(), link.join.take())
        };
        // The queue may be full for a moment; the planner's thread drains it.
        for _ in 0..10_000 {
            match tx.try_send(Request::Stop) {
                Err(TrySendError::Full(_)) => std::thread::sleep(Duration::from_millis(1)),
                _ => break,
            }
        }
        if let Some(handle) = join
            && let Err(p) = handle.join()
        {
            let message = format!("the planner's thread panicked: {}", panic_message(&*p));
            lock(&self.0.state).events.push(message);
        }
    }
}

fn panic_message(p: &(dyn Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

fn planner_loop(spring: &Spring, rx: &Receiver<Request>, mut working: Planner) {
    let mut broken: Option<String> = None;
    while let Ok(request) = rx.recv() {
        match request {
            Request::Stop => return,
            Request::Kill { id, at } => {
                if broken.is_some() {
                    continue;
                }
                let done = catch_unwind(AssertUnwindSafe(|| {
                    let _ = working.kill(id, at);
                    let mut st = lock(&spring.state);
                    let _ = st.planner.copy_plan_from(&working);
                }));
                if let Err(p) = done {
                    broken = Some(format!("the planner panicked: {}", panic_message(&*p)));
                }
            }
            Request::Plan { g, requested, posted } => {
                let now = requested.saturating_add(posted.elapsed());
                let result = match &broken {
                    Some(why) => Err(why.clone()),
                    None => catch_unwind(AssertUnwindSafe(|| plan_one(spring, &mut working, g, now)))
                        .map_err(|p| format!("the planner panicked: {}", panic_message(&*p))),
                };
                if let Err(why) = result {
                    broken.get_or_insert(why.clone());
                    let mut st = lock(&spring.state);
                    let message = format!("{now}: group \"{}\": {why}", st.groups[g].name);
                    st.events.push(message);
                    st.groups[g].error = Some(why.clone());
                    if let Some(link) = st.rt.as_mut() {
                        link.outstanding = link.outstanding.saturating_sub(1);
                        link.broken = Some(why);
                    }
                }
            }
        }
    }
}

/// Plan group entry `g` at `now` on the working plan, then publish and record.
fn plan_one(spring: &Spring, working: &mut Planner, g: usize, now: Time) {
    let (spec, overhead) = {
        let mut st = lock(&spring.state);
        (st.groups[g].spec.take(), st.job_overhead)
    };
    let answer = spec.map(|spec| {
        working.retire(now);
        decide(working, spec, now, overhead, |p, r, w| p.submit_wall(r, now, w, Instant::now()))
    });
    let mut st = lock(&spring.state);
    match answer {
        None => {}
        Some(Err(e)) => {
            st.events.push(format!("{now}: {e}"));
            st.groups[g].error = Some(e.to_string());
        }
        Some(Ok(mut answer)) => {
            if st.groups[g].abandoned {
                // The requester stopped waiting: the request is refused, and taken back out
                // of the plan if it was accepted (none of its tasks can have started).
                let ids: Vec<GroupId> = answer.accepted().collect();
                for id in ids {
                    let _ = working.kill(id, now);
                }
                for (o, _) in &mut answer.outcomes {
                    o.decision = Decision::Rejected(Rejection::BudgetExhausted);
                }
                answer.all = false;
            }
            let _ = st.planner.copy_plan_from(working);
            let spawns = st.record(g, answer, now);
            if let Some(link) = st.rt.as_mut() {
                link.ready.extend(spawns);
            }
        }
    }
    if let Some(link) = st.rt.as_mut() {
        link.outstanding = link.outstanding.saturating_sub(1);
    }
}

impl Spring {
    /// Post a plan request for group entry `g`, asked now.
    pub(super) fn post_plan(&self, cx: &Ctx<'_>, g: usize) -> Result<(), Error> {
        let mut st = lock(&self.state);
        let Some(link) = st.rt.as_mut() else { return Err(Error::InvalidConfig("not in real time".into())) };
        let posted = link.post(Request::Plan { g, requested: cx.now(), posted: Instant::now() });
        match posted {
            Ok(()) => {
                link.outstanding += 1;
                Ok(())
            }
            Err(e) => {
                st.groups[g].error = Some(e.to_string());
                let message = format!("{}: group \"{}\": {e}", cx.now(), st.groups[g].name);
                st.events.push(message);
                Err(e)
            }
        }
    }

    /// The planner's runtime thread's job in real time: post the declared groups due now,
    /// then spawn the threads of accepted groups as answers come, until none is owed.
    pub(super) fn rt_job(&self, cx: &Ctx<'_>) {
        while let Some(g) = self.next_due(cx.now()) {
            // A refused post is recorded with the group.
            let _ = self.post_plan(cx, g);
        }
        loop {
            let (spawns, owed, poll) = {
                let mut st = lock(&self.state);
                let Some(link) = st.rt.as_mut() else { return };
                let owed = link.outstanding > 0 && link.broken.is_none() && !link.gone();
                (std::mem::take(&mut link.ready), owed, link.poll)
            };
            for (spec, body) in spawns {
                let g = body.g;
                if let Err(e) = cx.spawn(spec, exec::body(self.clone(), body)) {
                    let now = cx.now();
                    let mut st = lock(&self.state);
                    let message = format!("{now}: group \"{}\": a thread could not be spawned: {e}", st.groups[g].name);
                    st.events.push(message);
                    st.kill_group(g, now);
                }
            }
            if !owed {
                return;
            }
            cx.sleep(poll);
        }
    }

    /// Wait, in wall time, for the answer to group entry `g` until `until`; "no" if it does
    /// not come by then (the request is then withdrawn).
    pub(super) fn wait_answer(&self, cx: &Ctx<'_>, g: usize, until: Time) -> Result<Decision, Error> {
        loop {
            let poll = {
                let mut st = lock(&self.state);
                if let Some(row) = st.groups[g].decision {
                    return Ok(st.decisions[row].outcome.decision);
                }
                if let Some(e) = &st.groups[g].error {
                    return Err(Error::InvalidConfig(e.clone()));
                }
                if cx.now() >= until {
                    st.groups[g].abandoned = true;
                    let message = format!("{}: group \"{}\": no answer within the wait", cx.now(), st.groups[g].name);
                    st.events.push(message);
                    return Ok(Decision::Rejected(Rejection::BudgetExhausted));
                }
                st.rt.as_ref().map_or(Duration::from_micros(100), |l| l.poll)
            };
            cx.sleep(poll.min(until.saturating_since(cx.now())).max(Duration::from_micros(1)));
        }
    }
}
