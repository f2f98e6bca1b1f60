//! Resuming a thread and handling the request it suspends with: what the kernel owes a
//! thread before it resumes (an RCS restart, an unlock whose cost is paid), the reply it gets,
//! its coroutine, and the dispatch on the request kind.
//!
//! Must not: change a lock's, a set's or a job's state other than through their own modules'
//! functions.

use corosensei::{Coroutine, CoroutineResult};

use super::job_loop;
use super::protocol::{ControlOp, ControlValue, Reply, Request, Response};
use super::tcb::{State, Tcb, Wait};
use super::timers::TimerKind;
use super::Kernel;
use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::objects::LockId;
use crate::thread::{ThreadId, ThreadOutcome};
use crate::trace::StopReason;

impl<C: Clock> Kernel<C> {
    // ----- running threads --------------------------------------------------------------------

    pub(super) fn refresh_now(&mut self) {
        if C::MODE == ClockMode::Real {
            self.now = self.clock.now();
        }
    }

    /// Resume the current thread `id` of CPU `c` and handle its request. On a kernel of one
    /// CPU, while the request leaves a thread current that can be resumed at once (nothing
    /// pending: no preemption, no timer due, no execution-time event watched, no `work` left),
    /// that thread is resumed here too, as the run loop would do next anyway.
    pub(super) fn resume(&mut self, c: usize, id: ThreadId) {
        let mut next = (id, self.local(id).expect("current thread is live"));
        loop {
            self.resume_once(c, next.0, next.1);
            match self.continuation(c) {
                Some(then) => next = then,
                None => return,
            }
        }
    }

    /// The thread [`Kernel::resume`] may go on with on CPU `c`, if any, and its slot.
    #[inline]
    pub(super) fn continuation(&self, c: usize) -> Option<(ThreadId, usize)> {
        let cpu = &self.cpus[c];
        let next = cpu.current?;
        if self.cpus.len() != 1
            || cpu.preempt
            || cpu.requeue_current
            || self.exec_watch > 0
            || self.timers.next_at().is_some_and(|t| t <= self.now)
        {
            return None;
        }
        let i = self.local(next)?;
        let t = self.slots[i].as_ref()?;
        (t.work_left == 0).then_some((next, i))
    }

    /// Resume the current thread `id` (in slot `i`) of CPU `c` and handle its request.
    #[inline]
    pub(super) fn resume_once(&mut self, c: usize, id: ThreadId, i: usize) {
        let now = self.now;
        let t = self.slots[i].as_mut().expect("live slot");
        // A restart that waits for the thread's next call is read here, not after that call.
        let restart_waits = t.restart_section.is_some();
        if (restart_waits || t.pending_unlock.is_some()) && !self.settle_before_resume(c, id) {
            return;
        }
        let t = self.slots[i].as_mut().expect("live slot");
        t.in_work = false;
        let mut reply = match t.reply.take() {
            Some(reply) => reply,
            None => Reply::Go,
        };
        // Aborts and kills wait for the thread's last lock to be released, and never ride on
        // the answer to an unlock (it comes back into a destructor). A restart was put in
        // `reply` by `settle_before_resume`: the thread holds its section's lock, so no abort or
        // kill replaces it.
        let quiet = std::mem::take(&mut t.quiet_reply);
        let t = if (t.kill_pending || t.abort_pending || t.stale) && !quiet {
            reply = self.unwind_instead(i, reply);
            self.slots[i].as_mut().expect("live slot")
        } else {
            t
        };
        t.at_boundary = false;
        let response = Response { now, job: t.job, reply };
        if t.coroutine.is_none() && !self.create_coroutine(c, i) {
            return;
        }
        let t = self.slots[i].as_mut().expect("live slot");
        let result = t.coroutine.as_mut().expect("coroutine created").resume(response);
        self.refresh_now();
        match result {
            // Unlocks are the requests that hand a CPU straight to a waiter: they skip the
            // general dispatch on the request kind.
            CoroutineResult::Yield(request) => {
                if let Request::Unlock { lock, poison } = request {
                    // An unlock owns nothing: there is no drop glue to run.
                    std::mem::forget(request);
                    self.handle_unlock(i, id, lock, poison);
                } else if let Request::Work(ns) = request {
                    // The most frequent request in a simulation, handled here; it owns
                    // nothing either.
                    std::mem::forget(request);
                    self.handle_work(c, i, ns);
                } else if !restart_waits || !self.restart_answers(id, &request) {
                    self.handle(c, id, request);
                }
            }
            CoroutineResult::Return(outcome) => self.exit(c, id, outcome),
        }
        if self.verify {
            self.verify_urgencies();
        }
    }

    /// The reply the thread in slot `i` is resumed with when an abort or a kill is pending:
    /// the unwinding (see [`Kernel::unwind_reply`]) instead of `reply`, when it may be sent.
    /// A semaphore unit `reply` granted goes back, since the thread will never see it.
    #[cold]
    fn unwind_instead(&mut self, i: usize, reply: Reply) -> Reply {
        let t = self.slots[i].as_mut().expect("live slot");
        match Self::unwind_reply(t) {
            Some(unwind) => {
                if let Reply::Procured(k) = reply {
                    self.forgo_unit(k);
                }
                unwind
            }
            None => reply,
        }
    }

    /// The reply that unwinds a thread with a kill, an abort or an ended job on its stack,
    /// if it is to be unwound now. Nothing unwinds inside a critical section, except at a
    /// job boundary, where a lock still counted as held was leaked by the job. Once delivered,
    /// the reply is delivered again until the job loop reports the unwind: a body that caught
    /// it and called the runtime again is unwound again at that call. A thread still
    /// unwinding (a destructor calling the runtime) is answered normally instead.
    #[cold]
    pub(super) fn unwind_reply(t: &mut Tcb) -> Option<Reply> {
        if !(t.holds_nothing() || t.at_boundary) {
            return None;
        }
        if t.unwind_sent && std::thread::panicking() {
            return None;
        }
        t.unwind_sent = true;
        Some(if t.kill_pending { Reply::Kill } else { Reply::Abort })
    }

    /// What must happen before thread `id` is resumed with its reply: an RCS restart (of a
    /// section that has not begun: the lock goes back; of one under way: the reply becomes
    /// the restart, and a semaphore unit the reply granted goes back), an unlock whose
    /// simulated cost has been paid. Returns false when the thread must not be resumed now (a
    /// more urgent one takes over first).
    #[cold]
    pub(super) fn settle_before_resume(&mut self, c: usize, id: ThreadId) -> bool {
        let t = self.tcb(id);
        if let Some(section) = t.restart_section {
            // Only a lock grant answers `Locked(Ok(()))` (a semaphore grant is `Procured`), so
            // this is the section's own lock, just granted.
            if matches!(t.reply, Some(Reply::Locked(Ok(())))) && t.held.last() == Some(&section) {
                // RCS aborted a section that has not begun (the owner was still paying for the
                // acquisition): give the lock back and let the owner ask again, behind the
                // aborter.
                t.restart_section = None;
                t.reply = Some(Reply::LockRetry);
                self.give_back(id, section as usize);
                if self.cpus[c].preempt {
                    return false;
                }
            } else if let Some(Reply::Procured(k)) = t.reply {
                if t.held.contains(&section) {
                    // RCS aborted a section under way just after a `procure` in it was granted,
                    // before the owner saw the unit: the reply becomes the restart and the unit
                    // goes back to the semaphore (to its first waiter, as a vacate would). The
                    // owner unwinds without knowing it had the unit, so nothing it runs could
                    // vacate it, and the rerun section procures again: keeping the unit would
                    // lose it. This is what a procure made after the abort gets too (see
                    // `restart_answers`: no unit is granted).
                    t.restart_section = None;
                    t.set_reply(Reply::Restart);
                    self.forgo_unit(k);
                    if self.cpus[c].preempt {
                        return false;
                    }
                }
            }
        }
        let i = self.local(id).expect("the resumed thread is live");
        let t = self.slots[i].as_mut().expect("live slot");
        if let Some((lock, poison)) = t.pending_unlock.take() {
            self.unlock(id, lock, poison, Some(i));
            if self.cpus[c].preempt || self.cpus[c].current != Some(id) {
                // A waiter more urgent than this thread takes over first.
                return false;
            }
        }
        self.deliver_restart(id);
        true
    }

    /// Turn thread `id`'s reply into the restart of its aborted section, if it may carry one.
    /// The answer to an unlock may not (it comes back into a destructor): the restart then
    /// answers the thread's next runtime call instead (see `restart_answers` and
    /// `handle_work`).
    fn deliver_restart(&mut self, id: ThreadId) {
        let t = self.tcb(id);
        let Some(section) = t.restart_section else { return };
        if !t.held.contains(&section) {
            // The section ended (its lock was released) before the restart could be delivered.
            t.restart_section = None;
        } else if !t.quiet_reply {
            t.restart_section = None;
            t.set_reply(Reply::Restart);
        }
    }

    /// Whether the restart of thread `id`'s aborted section, waiting to be delivered, answers
    /// `request` instead of it being carried out: a request that would acquire or wait. A lock
    /// or a semaphore unit granted now would stay with a thread that unwinds without ever
    /// seeing it, and a wait would hold the aborter up. The others (releases, queries, the end
    /// of a job) are made as usual.
    #[cold]
    fn restart_answers(&mut self, id: ThreadId, request: &Request) -> bool {
        let t = self.tcb(id);
        let in_section = t.restart_section.is_some_and(|s| t.held.contains(&s));
        in_section
            && matches!(
                request,
                Request::Lock { .. }
                    | Request::Procure { .. }
                    | Request::Yield
                    | Request::SleepUntil(_)
                    | Request::Join(_)
            )
    }

    /// Give the thread in slot `i` (on CPU `c`) its coroutine, at its first resume. Returns
    /// false when no stack could be had: the thread has then ended.
    #[cold]
    pub(super) fn create_coroutine(&mut self, c: usize, i: usize) -> bool {
        let t = self.slots[i].as_mut().expect("live slot");
        let id = t.id;
        match self.stacks.take(t.stack_size) {
            Ok(stack) => {
                use corosensei::stack::Stack;
                let real_clock = self.real_clock.clone();
                let t = self.slots[i].as_mut().expect("live slot");
                self.guards[i] = crate::os::overflow::StackGuard::new(
                    stack.limit().get(),
                    stack.base().get(),
                    &self.summaries[t.summary].name,
                    id.index() as u32,
                    id.generation(),
                    t.cpu,
                );
                let body = t.body.take().expect("a new thread has its body");
                let cpu = t.cpu;
                let fast_held = t.fast_held.clone();
                let runtime = self.runtime;
                t.coroutine = Some(Coroutine::with_stack(stack, move |y, first| {
                    job_loop::thread_main(y, first, (runtime, id, cpu), real_clock, fast_held, body)
                }));
                true
            }
            Err(e) => {
                self.exit(c, id, ThreadOutcome::Panicked(e.to_string()));
                false
            }
        }
    }

    /// The running thread `id`, in slot `i`, unlocks `lock`.
    #[inline]
    pub(super) fn handle_unlock(&mut self, i: usize, id: ThreadId, lock: LockId, poison: bool) {
        let t = self.slots[i].as_mut().expect("live slot");
        t.quiet_reply = true;
        let cost = self.costs.unlock;
        if cost.is_zero() {
            self.unlock(id, lock, poison, Some(i));
        } else {
            // The unlock takes effect once its cost is paid, before any waiter runs.
            t.pending_unlock = Some((lock, poison));
            self.charge_overhead(id, cost);
        }
    }

    /// The thread in slot `i`, current on CPU `c`, asks to spend `ns` of CPU time.
    #[inline]
    pub(super) fn handle_work(&mut self, c: usize, i: usize, ns: u64) {
        let t = self.slots[i].as_mut().expect("live slot");
        // An abort or a kill that waited for a critical section to end lands here, instead
        // of after this demand; so does the restart of an aborted section that waited for the
        // answer to an unlock to go by.
        let signalled =
            ((t.abort_pending || t.kill_pending || t.stale) && t.holds_nothing()) || t.restart_section.is_some();
        if ns > 0 && !signalled {
            t.work_left = ns;
            t.in_work = true;
            self.cpus[c].work_mark = self.now;
        }
    }

    pub(super) fn handle(&mut self, c: usize, id: ThreadId, request: Request) {
        match request {
            Request::Work(ns) => {
                let i = self.local(id).expect("the requesting thread is live");
                self.handle_work(c, i, ns);
            }
            Request::Yield => {
                self.stop_running(c, StopReason::Yielded);
                self.tcb(id).state = State::Ready;
                self.sched_call(c, id, |s, info| s.on_yield(info));
            }
            Request::SleepUntil(t) => {
                if t > self.now {
                    self.stop_running(c, StopReason::Sleeping);
                    let tcb = self.tcb(id);
                    tcb.state = State::Sleeping;
                    let token = tcb.wait_token;
                    self.arm_wait_timer(id, t, TimerKind::Wake(id, token));
                    self.sched_call(c, id, |s, info| s.on_blocked(info));
                }
            }
            Request::Spawn(boxed) => {
                let (spec, body) = *boxed;
                let cpu = self.cpus[c].index;
                let r = self.spawn_thread(spec, body, cpu);
                self.tcb(id).reply = Some(Reply::Spawned(r.map_err(Box::new)));
            }
            Request::Join(target) => {
                let from = Some(self.cpus[c].index);
                let r = if target == id {
                    Err(Error::JoinSelf)
                } else {
                    self.outcome_of(target).map_err(|_| self.no_thread_from(target, from))
                };
                match r {
                    Ok(None) => {
                        self.tcb(target).joiners += 1;
                        self.stop_running(c, StopReason::Blocked);
                        self.tcb(id).state = State::Blocked(Wait::Join(target));
                        self.sched_call(c, id, |s, info| s.on_blocked(info));
                    }
                    Ok(Some(outcome)) => self.tcb(id).reply = Some(Reply::Joined(Ok(outcome))),
                    Err(e) => self.tcb(id).reply = Some(Reply::Joined(Err(Box::new(e)))),
                }
            }
            Request::Release(target) => {
                let from = self.cpus[c].index;
                let r = self.request_release(target, from);
                self.tcb(id).reply = Some(Reply::Released(r.map_err(Box::new)));
            }
            Request::JobDone { aborted } => self.job_done(c, id, aborted),
            Request::Lock { lock, deadline, try_only, restartable } => {
                if let Some(r) = self.lock_request(c, id, lock, deadline, try_only, restartable) {
                    self.tcb(id).reply = Some(Reply::Locked(r));
                }
            }
            Request::Unlock { lock, poison } => {
                let i = self.local(id).expect("the requesting thread is live");
                self.handle_unlock(i, id, lock, poison);
            }
            Request::ClearPoison(lock) => self.clear_poison(lock),
            Request::Adopt(lock) => {
                if let Some(l) = self.lock_local(lock) {
                    self.sync_owner(l);
                }
            }
            Request::CondWait { cond, lock, deadline } => {
                if let Some(r) = self.cond_wait(c, id, cond, lock, deadline) {
                    self.tcb(id).reply = Some(r);
                }
            }
            Request::CondSignal { cond, all } => {
                if let Err(e) = self.cond_signal(c, cond, all) {
                    self.tcb(id).reply = Some(Reply::Locked(Err(e)));
                }
            }
            Request::Procure { sem, deadline, try_only } => {
                if let Some(r) = self.procure(c, id, sem, deadline, try_only) {
                    self.tcb(id).reply = Some(r);
                }
            }
            Request::Vacate(sem) => {
                if let Err(e) = self.vacate(c, sem) {
                    self.tcb(id).reply = Some(Reply::Locked(Err(e)));
                }
            }
            Request::Urgency => {
                let u = self.tcb(id).urgency();
                self.tcb(id).reply = Some(Reply::Urgency(u));
            }
            Request::Control(op) => {
                let r = self.control(*op);
                self.tcb(id).reply = Some(Reply::Control(r.map_err(Box::new)));
            }
            Request::SetPriority(priority) => {
                self.tcb(id).sched.priority = priority;
                self.refresh_urgency(id);
            }
        }
    }

    /// Carry out a set, clock or budget operation asked for by a thread.
    pub(crate) fn control(&mut self, op: ControlOp) -> Result<ControlValue, Error> {
        use ControlValue::{Bool, Members, Unit};
        Ok(match op {
            ControlOp::CreateSet(name) => ControlValue::Set(self.create_set(name)?),
            ControlOp::DestroySet(set) => self.destroy_set(set).map(|_| Unit)?,
            ControlOp::EmptySet(set) => self.empty_set(set).map(|_| Unit)?,
            ControlOp::AddToSet(set, t) => self.add_to_set(set, t).map(|_| Unit)?,
            ControlOp::RemoveFromSet(set, t) => self.remove_from_set(set, t).map(|_| Unit)?,
            ControlOp::SetContains(set, t) => Bool(self.sets[self.set_local(set)?].members.contains(&t)),
            ControlOp::SetMembers(set) => Members(self.sets[self.set_local(set)?].members.clone()),
            ControlOp::SetOf(t) => {
                if self.local(t).is_none() {
                    return Err(self.no_thread(t));
                }
                ControlValue::SetOf(self.tcb(t).set.map(|s| self.sets[s as usize].id))
            }
            ControlOp::ThreadClock(t) => ControlValue::Time(self.thread_clock(t)?),
            ControlOp::SetThreadClock(t, v) => self.set_thread_clock(t, v).map(|_| Unit)?,
            ControlOp::GroupClock(set) => ControlValue::Time(self.group_clock(set)?),
            ControlOp::SetGroupClock(set, v) => self.set_group_clock(set, v).map(|_| Unit)?,
            ControlOp::ThreadTimer(t, at, h) => self.arm_thread_timer(t, at, h).map(|_| Unit)?,
            ControlOp::SetTimer(set, at, h) => self.arm_set_timer(set, at, h).map(|_| Unit)?,
            ControlOp::SetBudget(set, b) => self.set_budget(set, b).map(|_| Unit)?,
            ControlOp::BudgetLeft(set) => {
                let (left, exhausted) = self.budget_left(set)?;
                ControlValue::Budget(left, exhausted)
            }
            ControlOp::Replenish(set, to) => self.replenish_to(set, to).map(|_| Unit)?,
            ControlOp::AddBudget(set, d) => self.add_budget(set, d).map(|_| Unit)?,
            ControlOp::CreateLock(spec) => ControlValue::Lock(self.create_lock(spec)?),
            ControlOp::CreateCond(cpu) => ControlValue::Cond(self.create_cond(cpu)?),
            ControlOp::CreateSem(spec) => ControlValue::Sem(self.create_sem(spec)?),
        })
    }
}
