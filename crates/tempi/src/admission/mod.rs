//! PORTS admission control on the runtime: "how much idle time is there before deadline
//! `d`?", and jobs admitted only if their worst-case execution time (WCET) fits, so an admitted
//! job never misses its deadline.
//!
//! Owns [`Admission`] (one CPU's admission test, decision log and job wrapper) and the
//! [`Admitted`] answer; its parts own the rest: `request.rs` what an admission is built from
//! and asked ([`AdmissionSpec`], [`JobRequest`]), `answers.rs` the other answers ([`Nack`],
//! [`Refused`], [`AdmissionError`]), `log.rs` the logs ([`Decision`], [`JobEvent`]), `job.rs`
//! the code around a job's body (its budget, its end), `remote.rs` the crossing to another
//! real-time CPU. Built only on public runtime calls (`Ctx::spawn`, thread sets, budgets,
//! execution-time clocks) and on the engines of [`crate::policy::admit`]; it must not reach
//! into the kernel or change an engine.
//!
//! # Shape
//!
//! - **Forking is separate from admission.** A [`JobRequest`] is only a description; the
//!   application may first ask [`Admission::idle_before`] and pick a version of its
//!   computation that fits, then call [`Admission::admit`].
//! - **The scheduler is separate from the dispatcher.** An admitted job becomes an ordinary
//!   one-shot thread on the admission's CPU whose relative deadline puts its absolute deadline
//!   at the one admitted; the CPU's EDF scheduler dispatches it and knows nothing of the
//!   admission structure. The admission needs the CPU to be scheduled EDF.
//! - **WCET enforcement.** Each admission owns a pool of thread sets (one per job that may be
//!   alive at once, [`AdmissionSpec::max_live`]), each with a `Manual` budget whose action is
//!   `Kill`. A job, as it starts, sets its set's budget to its WCET and joins it, so the
//!   execution-time clock of the set stops it when it has consumed its WCET. With a per-job
//!   overhead ([`crate::Config::job_overhead`]) a job is reserved, and budgeted, its WCET
//!   plus that overhead: what a user-level runtime cannot keep off its clock (in real time,
//!   its own calls around the body, and what the OS takes while its code runs; the
//!   runtime's own time is charged to no thread, [`crate::RunOutcome::kernel_time`]), so a
//!   job that uses exactly its WCET completes. **Overrun
//!   action:** the job's thread is killed at that instant (at its next runtime call in real
//!   time), before anything else runs then — a request of that instant finds it ended, and a
//!   job killed at its deadline has not missed it —, a [`JobEventKind::Overrun`] is logged,
//!   and its reservation is returned.
//! - **Reclaim and expiry.** When the job's body returns, or its thread is killed or unwinds,
//!   the engine is told it finished ([`finish`](crate::policy::admit::AdmissionEngine::finish)):
//!   the WCET it did not use goes back to the later jobs. A job whose body never ran (its
//!   thread could not be created, or was killed or stopped before it started) is withdrawn
//!   ([`withdraw`](crate::policy::admit::AdmissionEngine::withdraw)): its entry leaves the
//!   engine at once, as if it had never been admitted. Before every query the admission
//!   charges the jobs that ran with the CPU time their clocks show, and expires the entries
//!   whose deadline has passed.
//! - **Cross-CPU submission.** Calling another CPU's admission from a thread is submitting a
//!   job to that CPU: it is tested there and, if it fits, runs there; otherwise the answer is
//!   a [`Nack`] naming the job and the idle time that CPU had before its deadline, and the
//!   sender may resubmit a smaller job elsewhere. In virtual time every CPU is driven from one
//!   OS thread, so the test is made directly. In real time the request crosses to the target
//!   CPU, whose own thread makes the test there and starts the job (`remote.rs`); the
//!   submitter waits for the answer. The decisions are the same on both clocks.
//!
//! # What the guarantee assumes
//!
//! The engine accounts for the time that passes between queries, whoever used it, but not
//! for work that will preempt admitted jobs later: it holds when everything else on the CPU
//! is less urgent than the admitted jobs (no deadline, or later deadlines), apart from the
//! zero-time calls of the threads that submit (in virtual time runtime calls take no time).
//! A submitter that must not wait behind admitted jobs gives itself a deadline of 1 ns.
//! Jobs are assumed to be released when admitted: a request with a future release is refused
//! with [`AdmissionError::FutureRelease`].
//!
//! # Memory
//!
//! The engine, the set pool and both logs are sized when the admission is created. Admitting
//! spawns a thread, which allocates its body and its name as any spawn does.
//!
//! ```
//! use std::time::Duration;
//! use tempi::admission::{Admission, AdmissionSpec, JobRequest, Refused};
//! use tempi::{Runtime, ThreadSpec, Time};
//! let us = Duration::from_micros;
//! let mut rt = Runtime::simulated(1);
//! rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
//! let adm = Admission::new(&mut rt, AdmissionSpec::new(0).engine("tree")).unwrap();
//! let a = adm.clone();
//! rt.spawn(ThreadSpec::new("app").deadline(Duration::from_nanos(1)), move |cx| {
//!     let d = Time::from_micros(10);
//!     a.admit(cx, JobRequest::new("first", us(6), d, move |cx| cx.work(us(6)))).unwrap();
//!     assert_eq!(a.idle_before(cx, d), Ok(us(4)));
//!     match a.admit(cx, JobRequest::new("big", us(5), d, move |cx| cx.work(us(5)))) {
//!         Err(Refused::Nack(n)) => assert_eq!(n.idle, us(4)),
//!         other => panic!("{other:?}"),
//!     }
//! }).unwrap();
//! let out = rt.run().unwrap();
//! assert_eq!(out.total_misses(), 0);
//! ```

mod answers;
mod job;
mod log;
mod remote;
mod request;

pub use answers::{AdmissionError, Nack, Refused};
pub use request::{AdmissionSpec, JobRequest};

pub use log::{Decision, JobEvent, JobEventKind};

use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::kernel::Ctx;
use crate::policy::admit::{self, Admission as EngineAnswer, AdmissionEngine, AdmitError, AdmitId};
use crate::policy::budget::Kill;
use crate::policy::sched::PolicyClass;
use crate::runtime::Runtime;
use crate::sets::Budget;
use crate::thread::ThreadSpec;
use crate::time::Time;
use crate::BudgetEventKind;
use crate::SetId;
use crate::ThreadId;

use log::Bounded;

/// An admitted job: its thread and its handle in the engine.
///
/// ```
/// use std::time::Duration;
/// use tempi::admission::{Admission, AdmissionSpec, JobRequest};
/// let mut rt = tempi::Runtime::simulated(1);
/// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
/// let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
/// rt.spawn(tempi::ThreadSpec::new("s").deadline(Duration::from_nanos(1)), move |cx| {
///     let ok = adm.admit(cx, JobRequest::new("j", Duration::from_micros(1), tempi::Time::from_micros(5), |_| {})).unwrap();
///     assert_eq!((ok.cpu, ok.idle), (0, Duration::from_micros(5)));
/// }).unwrap();
/// rt.run().unwrap();
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admitted {
    /// The job's thread.
    pub thread: ThreadId,
    /// The job's entry in the engine.
    pub job: AdmitId,
    /// The CPU it runs on.
    pub cpu: usize,
    /// The idle time there was before its deadline, before it was admitted.
    pub idle: Duration,
}

/// An admitted job not yet ended.
struct Live {
    id: AdmitId,
    request: Arc<str>,
    wcet: Duration,
    /// What it is reserved and held to: its WCET and the runtime's per-job overhead
    /// ([`crate::Config::job_overhead`]).
    budget: Duration,
    /// Set by the job when it starts.
    thread: Option<ThreadId>,
    /// CPU time already charged to the engine.
    charged: Duration,
}

/// One thread set of the enforcement pool and the job holding it.
struct Slot {
    set: SetId,
    job: Option<Live>,
}

struct State {
    engine: Box<dyn AdmissionEngine>,
    slots: Vec<Slot>,
    decisions: Bounded<Decision>,
    events: Bounded<JobEvent>,
    expired: u64,
    /// The instant of the last charge of the started jobs.
    charged_at: Option<Time>,
    /// Reserved and budgeted per job on top of its WCET ([`crate::Config::job_overhead`]).
    job_overhead: Duration,
}

/// One CPU's admission test over the jobs it admitted. Cloning gives another handle on the
/// same admission (to move into threads).
///
/// ```
/// use tempi::admission::{Admission, AdmissionSpec};
/// let mut rt = tempi::Runtime::simulated(2);
/// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
/// let adm = Admission::new(&mut rt, AdmissionSpec::new(1).engine("linear")).unwrap();
/// assert_eq!((adm.cpu(), adm.engine_name()), (1, "linear"));
/// ```
#[derive(Clone)]
pub struct Admission {
    state: Arc<Mutex<State>>,
    runtime: crate::RuntimeId,
    cpu: usize,
    mode: ClockMode,
    engine_name: &'static str,
}

impl fmt::Debug for Admission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Admission").field("cpu", &self.cpu).field("engine", &self.engine_name).finish_non_exhaustive()
    }
}

impl Admission {
    /// Build the admission of `spec.cpu()` on `rt`: its engine, and its pool of
    /// [`AdmissionSpec::max_live`] enforcement sets (named `admission:CPU:N`, with a `kill`
    /// budget each).
    ///
    /// The runtime must already be scheduled EDF, one instance per CPU (a policy of
    /// [`PolicyClass::Edf`], such as [`crate::policy::sched::Edf`]: one whose
    /// [`Scheduler::earliest_deadline_first`](crate::policy::sched::Scheduler::earliest_deadline_first)
    /// is true and [`Scheduler::global`](crate::policy::sched::Scheduler::global) false);
    /// changing its policy afterwards voids the guarantee.
    ///
    /// # Errors
    /// [`AdmissionError::NotEdf`], [`AdmissionError::UnknownEngine`]; [`AdmissionError::Runtime`] for a CPU the runtime
    /// lacks or more sets than [`crate::Config::max_sets`] allows, and
    /// [`AdmissionError::Runtime`]`(`[`Error::InvalidConfig`]`)` for a size of `spec` above its
    /// limit ([`AdmissionSpec::MAX_CAPACITY`], [`AdmissionSpec::MAX_LIVE`],
    /// [`AdmissionSpec::MAX_LOG_CAPACITY`]; checked before anything is allocated) or a pool
    /// the allocator refuses.
    ///
    /// ```
    /// use tempi::admission::{Admission, AdmissionError, AdmissionSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// assert!(matches!(Admission::new(&mut rt, AdmissionSpec::new(0)), Err(AdmissionError::NotEdf { .. })));
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// assert!(matches!(Admission::new(&mut rt, AdmissionSpec::new(0).engine("nope")), Err(AdmissionError::UnknownEngine(_))));
    /// assert!(matches!(Admission::new(&mut rt, AdmissionSpec::new(5)), Err(AdmissionError::Runtime(_))));
    /// ```
    pub fn new<C: Clock>(rt: &mut Runtime<C>, spec: AdmissionSpec) -> Result<Admission, AdmissionError> {
        let policy = (rt.config().chosen_scheduler())();
        if PolicyClass::of(&*policy) != PolicyClass::Edf {
            return Err(AdmissionError::NotEdf { scheduler: policy.name().to_string() });
        }
        spec.check().map_err(AdmissionError::Runtime)?;
        // An engine whose arenas the allocator refuses panics (its factory cannot fail).
        let built = std::panic::catch_unwind(|| admit::by_name(&spec.engine, spec.capacity)).map_err(|payload| {
            AdmissionError::Runtime(Error::InvalidConfig(format!(
                "admission of CPU {}: engine `{}` of capacity {}: {}",
                spec.cpu,
                spec.engine,
                spec.capacity,
                crate::UnwindCause::of(&*payload)
            )))
        })?;
        let engine = built.ok_or(AdmissionError::UnknownEngine(spec.engine))?;
        let engine_name = engine.name();
        let mut slots = crate::sizes::vec_with_capacity(spec.max_live, "the admission's sets (max_live)")
            .map_err(AdmissionError::Runtime)?;
        for i in 0..spec.max_live {
            let set =
                rt.create_set(&format!("admission:{}:{i}", spec.cpu), spec.cpu).map_err(AdmissionError::Runtime)?;
            slots.push(Slot { set, job: None });
        }
        let state = Arc::new(Mutex::new(State {
            engine,
            slots,
            decisions: Bounded::with_capacity(spec.log_capacity).map_err(AdmissionError::Runtime)?,
            events: Bounded::with_capacity(spec.log_capacity).map_err(AdmissionError::Runtime)?,
            expired: 0,
            charged_at: None,
            job_overhead: rt.config().job_overhead_reserved(),
        }));
        for i in 0..spec.max_live {
            let set = lock(&state).slots[i].set;
            // The amount is replaced by each job's WCET before it joins; an empty set uses none.
            let budget =
                Budget::new(Duration::from_nanos(1)).action(Kill).on_event(job::overrun_handler(state.clone(), i));
            rt.set_budget(set, budget).map_err(AdmissionError::Runtime)?;
        }
        Ok(Admission { state, runtime: rt.id(), cpu: spec.cpu, mode: C::MODE, engine_name })
    }

    /// The CPU whose jobs this admission tests.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert_eq!(a.cpu(), 0);
    /// ```
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// The engine's name.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert_eq!(a.engine_name(), "tree");
    /// ```
    pub fn engine_name(&self) -> &'static str {
        self.engine_name
    }

    /// The idle time this CPU has before `deadline`, now: what a job due then could use.
    ///
    /// # Errors
    /// [`AdmissionError::ForeignRuntime`], or [`AdmissionError::Runtime`] for a runtime call
    /// refused (e.g. while unwinding). From another real-time CPU the question is asked on
    /// this admission's CPU, as [`Admission::admit`] does, and may fail as it does.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::admission::{Admission, AdmissionSpec};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    /// rt.spawn(tempi::ThreadSpec::new("s"), move |cx| {
    ///     cx.sleep(Duration::from_micros(2));
    ///     assert_eq!(adm.idle_before(cx, tempi::Time::from_micros(7)), Ok(Duration::from_micros(5)));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn idle_before(&self, cx: &Ctx<'_>, deadline: Time) -> Result<Duration, AdmissionError> {
        self.check_caller(cx)?;
        if self.is_remote(cx) {
            let this = self.clone();
            return self.on_target(cx, "idle", deadline, move |cx| this.idle_before(cx, deadline))?;
        }
        let now = cx.now();
        let mut st = self.charge_running(cx, now)?;
        st.expire(now);
        Ok(st.engine.idle_before(deadline, now))
    }

    /// Test `request` now and, if it fits, start it as a thread on this admission's CPU with
    /// its deadline, held to its WCET.
    ///
    /// From a thread of another real-time CPU the request is submitted to this admission's
    /// CPU: a thread there makes the test and starts the job, and the caller waits for the
    /// answer (see the module docs); the decision logged names the caller's CPU.
    ///
    /// # Errors
    /// [`Refused::Nack`] if it does not fit (nothing changed); [`Refused::Error`] if it could
    /// not be tested ([`AdmissionError`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::admission::{Admission, AdmissionSpec, JobRequest};
    /// let us = Duration::from_micros;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    /// let a = adm.clone();
    /// rt.spawn(tempi::ThreadSpec::new("s").deadline(Duration::from_nanos(1)), move |cx| {
    ///     let d = tempi::Time::from_micros(4);
    ///     assert!(a.admit(cx, JobRequest::new("fits", us(3), d, move |cx| cx.work(us(3)))).is_ok());
    ///     let nack = a.admit(cx, JobRequest::new("late", us(2), d, |_| {})).unwrap_err();
    ///     assert_eq!(nack.nack().unwrap().idle, us(1));
    /// }).unwrap();
    /// assert_eq!(rt.run().unwrap().total_misses(), 0);
    /// ```
    pub fn admit(&self, cx: &Ctx<'_>, request: JobRequest) -> Result<Admitted, Refused> {
        self.check_caller(cx)?;
        if self.is_remote(cx) {
            let (this, origin) = (self.clone(), cx.cpu());
            let (name, deadline) = (request.name.clone(), request.deadline);
            return self.on_target(cx, &name, deadline, move |cx| this.admit_from(cx, request, origin))?;
        }
        self.admit_from(cx, request, cx.cpu())
    }

    /// [`Admission::admit`] made on this admission's CPU for a caller of CPU `origin`.
    fn admit_from(&self, cx: &Ctx<'_>, request: JobRequest, origin: usize) -> Result<Admitted, Refused> {
        let now = cx.now();
        if let Some(release) = request.release.filter(|&r| r > now) {
            return Err(AdmissionError::FutureRelease { release, now }.into());
        }
        if request.wcet.is_zero() {
            return Err(AdmissionError::ZeroWcet.into());
        }
        let mut st = self.charge_running(cx, now)?;
        let JobRequest { name, wcet, deadline, body, .. } = request;
        // The job is reserved, and held to, its WCET and the per-job overhead.
        let budget = wcet.saturating_add(st.job_overhead);
        let (id, slot, set, idle, decision) = {
            st.expire(now);
            let idle = st.engine.idle_before(deadline, now);
            let free = st.slots.iter().position(|s| s.job.is_none());
            if free.is_none() && budget <= idle {
                // It would fit, but nothing could enforce its WCET: the engine is not touched.
                return Err(AdmissionError::TooManyLive { max: st.slots.len() }.into());
            }
            let decision = |accepted| Decision {
                request: name.clone(),
                time: now,
                cpu: origin,
                target_cpu: self.cpu,
                wcet,
                deadline,
                accepted,
                idle,
                order: DECISION_ORDER.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            };
            let id = match st.engine.admit(budget, deadline, now) {
                Err(AdmitError::Full { capacity }) => return Err(AdmissionError::Full { capacity }.into()),
                Err(AdmitError::UnknownJob(_)) => unreachable!("admitting names no job"),
                Err(AdmitError::DeadlineTooLate { deadline }) => {
                    return Err(AdmissionError::DeadlineTooLate { deadline }.into())
                }
                Ok(EngineAnswer::Rejected { idle }) => {
                    st.decisions.push(decision(false));
                    return Err(Refused::Nack(Nack { request: name, cpu: self.cpu, deadline, idle }));
                }
                Ok(EngineAnswer::Accepted(id)) => id,
            };
            let Some(slot) = free else {
                // Unreachable (an admitted job fitted its idle time, so a slot was free), but a
                // wrong guess must not leave a reservation nothing runs.
                let _ = st.engine.withdraw(id);
                return Err(AdmissionError::TooManyLive { max: st.slots.len() }.into());
            };
            let live = Live { id, request: name.clone(), wcet, budget, thread: None, charged: Duration::ZERO };
            st.slots[slot].job = Some(live);
            (id, slot, st.slots[slot].set, idle, decision(true))
        };
        drop(st);
        // Due at the deadline it was admitted for, not at its spawn plus the relative
        // deadline: in real time the dispatcher carries out the spawn a little after the
        // test, and jobs admitted for the same instant must keep the order the test assumed.
        let spec =
            ThreadSpec::new(&*name).cpu(self.cpu).deadline(deadline - now).first_deadline_at(deadline).wcet(wcet);
        // The body ends the job if it is dropped unrun, as it is when the spawn fails.
        let body = job::wrap(self.state.clone(), slot, set, id, body);
        match cx.spawn(spec, body) {
            Ok(thread) => {
                // Logged once the job exists: a job that could not be started was not admitted.
                lock(&self.state).decisions.push(decision);
                Ok(Admitted { thread, job: id, cpu: self.cpu, idle })
            }
            Err(e) => {
                let mut st = lock(&self.state);
                // Already done by the dropped body; kept so the entry cannot outlive a failed
                // spawn whatever the runtime does with the body.
                st.withdraw_job(slot, id);
                let kind = JobEventKind::NotStarted(e.clone());
                st.events.push(JobEvent { request: name, thread: None, at: now, wcet, kind });
                Err(AdmissionError::NotStarted(e).into())
            }
        }
    }

    /// Every decision logged so far, in order.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert!(a.decisions().is_empty());
    /// ```
    pub fn decisions(&self) -> Vec<Decision> {
        lock(&self.state).decisions.entries.clone()
    }

    /// Decisions made after the log was full (not stored).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert_eq!(a.decisions_dropped(), 0);
    /// ```
    pub fn decisions_dropped(&self) -> u64 {
        lock(&self.state).decisions.dropped
    }

    /// Every job event (overruns, enforcement failures) logged so far, in order.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert!(a.job_events().is_empty());
    /// ```
    pub fn job_events(&self) -> Vec<JobEvent> {
        lock(&self.state).events.entries.clone()
    }

    /// How many entries the engine holds (admitted jobs whose deadline was not yet found
    /// passed; entries expire at the first query after their deadline, and a job whose body
    /// never ran is taken out at once).
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert_eq!(a.entries(), 0);
    /// ```
    pub fn entries(&self) -> usize {
        lock(&self.state).engine.len()
    }

    /// How many entries have expired so far.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    /// let a = tempi::admission::Admission::new(&mut rt, tempi::admission::AdmissionSpec::new(0)).unwrap();
    /// assert_eq!(a.expired(), 0);
    /// ```
    pub fn expired(&self) -> u64 {
        lock(&self.state).expired
    }

    fn check_caller(&self, cx: &Ctx<'_>) -> Result<(), AdmissionError> {
        if cx.runtime_id() != self.runtime {
            return Err(AdmissionError::ForeignRuntime);
        }
        Ok(())
    }

    /// Charge every started live job with the CPU time its clock gained since the last
    /// charge, so the engine sees what is really left of each; returns the state, locked,
    /// for the query that follows. The lock is taken once to find the started jobs and once
    /// more per job charged, and never held across a runtime call.
    ///
    /// In virtual time CPU time passes only as time does: a second charge at the same
    /// instant (a query, then the admission it decides) would find nothing and is skipped.
    fn charge_running(&self, cx: &Ctx<'_>, now: Time) -> Result<MutexGuard<'_, State>, AdmissionError> {
        let mut st = lock(&self.state);
        if self.mode == ClockMode::Virtual && st.charged_at == Some(now) {
            return Ok(st);
        }
        let mut from = 0;
        loop {
            let started = st.slots[from..]
                .iter()
                .enumerate()
                .find_map(|(k, s)| s.job.as_ref().and_then(|j| Some((from + k, j.id, j.thread?))));
            let Some((i, id, thread)) = started else { break };
            from = i + 1;
            drop(st);
            let used = cx.thread_cpu_time(thread);
            st = lock(&self.state);
            let used = match used {
                Ok(used) => used,
                // It ended between the two calls: its end already told the engine.
                Err(Error::UnknownThread(_)) => continue,
                Err(e) => return Err(AdmissionError::Runtime(e)),
            };
            let st = &mut *st;
            if let Some(job) = st.slots[i].job.as_mut().filter(|j| j.id == id) {
                let delta = used.saturating_sub(job.charged);
                job.charged = used;
                // An entry already expired has nothing left to charge.
                let _ = st.engine.charge(id, delta);
            }
        }
        st.charged_at = Some(now);
        Ok(st)
    }
}

impl State {
    fn expire(&mut self, now: Time) {
        self.expired += self.engine.expire(now) as u64;
    }

    /// The job in `slot` ended: its unused time goes back, its set is free again.
    fn end_job(&mut self, slot: usize, id: AdmitId) {
        if self.slots[slot].job.as_ref().is_some_and(|j| j.id == id) {
            self.slots[slot].job = None;
            // An entry already expired has nothing to give back.
            let _ = self.engine.finish(id);
        }
    }

    /// The job in `slot` will never run its body: its set is free again and its entry leaves
    /// the engine at once, as if it had never been admitted, rather than staying, with nothing
    /// left, until its deadline.
    fn withdraw_job(&mut self, slot: usize, id: AdmitId) {
        if self.slots[slot].job.as_ref().is_some_and(|j| j.id == id) {
            self.slots[slot].job = None;
            // An entry already expired is gone anyway.
            let _ = self.engine.withdraw(id);
        }
    }
}

/// Numbers decisions across every admission of the process (see [`Decision::order`]).
static DECISION_ORDER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The state's lock; a panic elsewhere while it was held leaves data that is still whole
/// (every update is a single assignment or an engine call), so poisoning is ignored.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// Used by the overrun handler: only exhaustion is an overrun.
fn is_overrun(kind: BudgetEventKind) -> bool {
    kind == BudgetEventKind::Exhausted
}
