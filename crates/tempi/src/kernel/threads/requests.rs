//! Resuming a thread and handling the request it suspends with: what the kernel owes a
//! thread before it resumes (an RCS restart, an unlock whose cost is paid: `restarts.rs`), the
//! reply it gets, its coroutine, and the dispatch on the request kind.
//!
//! Must not: change a lock's, a set's or a job's state other than through their own modules'
//! functions.

use crate::kernel::cpu::direct::Resumed;
use crate::os::context::{self, CoHandle, Coroutine, CoroutineResult};

use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::kernel::thread_side::job_loop;
use crate::kernel::thread_side::protocol::{
    Answer, ControlOp, ControlValue, Interrupt, Op, Report, Request, Response, SetOp, SetValue, Setup, Value,
};
use crate::kernel::threads::tcb::{State, Tcb, Wait};
use crate::kernel::timing::timers::TimerKind;
use crate::kernel::xcpu::Post;
use crate::kernel::Kernel;
use crate::objects::LockError;
use crate::plain::LockId;
use crate::plain::StopReason;
use crate::plain::ThreadId;
use crate::thread::ThreadOutcome;
use crate::time::Time;

impl<C: Clock> Kernel<C> {
    // ----- running threads --------------------------------------------------------------------

    /// A thread came back to the dispatcher: real time, the clock is read, and the kernel
    /// entered then ([`Kernel::leave_kernel`]).
    pub(in crate::kernel) fn refresh_now(&mut self) {
        if C::MODE == ClockMode::Real {
            self.now = self.clock.now();
            self.enter_kernel(self.now);
        }
    }

    /// Real time: the dispatcher entered the kernel at `at` on each of its CPUs (one, in real
    /// time) that was not in it already.
    #[inline(always)]
    pub(in crate::kernel) fn enter_kernel(&mut self, at: Time) {
        if C::MODE == ClockMode::Real {
            for cpu in &mut self.cpus {
                cpu.enter_kernel(at);
            }
        }
    }

    /// Real time: the dispatcher hands the CPU back, to the current thread (its resume, or the
    /// `work` it spins for) or to a wait: the clock is read, and the time since the kernel was
    /// entered ([`Kernel::refresh_now`], or the end of a wait in `advance`) is charged to the
    /// CPU's kernel, not to the thread. So a thread's execution-time clock, its set's group
    /// clock and budget, and its `work`, count its own time only: its code, and the `work` the
    /// dispatcher spins for it. What the OS takes from the dispatcher while it is in the
    /// kernel is the kernel's too; what it takes while the thread's code runs is the
    /// thread's (no user-level runtime can see it: `Config::job_overhead` leaves room for it).
    /// Nothing in virtual time, where the kernel takes no time (simulated costs are the
    /// threads' `work`, [`crate::config::Costs`]).
    #[inline(always)]
    pub(in crate::kernel) fn leave_kernel(&mut self) {
        if C::MODE == ClockMode::Real {
            self.now = self.clock.now();
            let now = self.now;
            for cpu in &mut self.cpus {
                cpu.leave_kernel(now);
            }
        }
    }

    /// Resume the current thread `id` of CPU `c` and handle its request. On a kernel of one
    /// CPU, while nothing else is pending (no timer due, no post, no execution-time event
    /// watched, no run's end), a thread the request leaves current (a yield's pick included)
    /// is resumed here too, as the run loop would do next anyway (see
    /// [`Kernel::continuation`]).
    ///
    /// Inlined into the run loop, its one hot caller: a call here costs the loop's every
    /// resumption the saving and restoring of its registers.
    #[inline(always)]
    pub(in crate::kernel) fn resume(&mut self, c: usize, id: ThreadId) {
        let mut next = (id, self.local(id).expect("current thread is live"));
        loop {
            self.resume_once(c, next.0, next.1);
            match self.continuation(c) {
                Some(then) => next = then,
                None => return,
            }
        }
    }

    /// The thread [`Kernel::resume`] goes on with on CPU `c`, if any, and its slot: the
    /// current thread, when it stays current (no preemption pending) and the run loop's next
    /// pass would do nothing else before resuming it: one CPU, no post waiting, no timer due,
    /// no execution-time event watched, no lowered urgency to re-check, no end or halt, no
    /// `work` left.
    #[inline]
    pub(in crate::kernel) fn continuation(&self, c: usize) -> Option<(ThreadId, usize)> {
        if !self.nothing_due(c) {
            return None;
        }
        self.current_continues(c)
    }

    /// [`Kernel::continuation`] right after a thread switch made on CPU `c` once
    /// [`Kernel::nothing_due`] had found nothing due: of what that check covers, the switch
    /// can only have changed the timers (the dispatched thread's time slice, which a policy
    /// may make zero), so only they are checked again.
    #[inline]
    pub(in crate::kernel) fn continuation_after_switch(&self, c: usize) -> Option<(ThreadId, usize)> {
        if self.timer_due() {
            return None;
        }
        self.current_continues(c)
    }

    /// The current thread of CPU `c` and its slot, when it stays current (no preemption
    /// pending) and has no `work` left.
    #[inline(always)]
    fn current_continues(&self, c: usize) -> Option<(ThreadId, usize)> {
        let cpu = &self.cpus[c];
        // A thread switch (a preemption, an empty CPU) is left to the run loop: made here, it
        // let a collator's best-effort child run past the guaranteed jobs' laxity under
        // switch costs (`sched_collator`'s regression seed).
        let (next, i) = match cpu.current {
            Some(current) if !cpu.preempt => (current, self.local(current)?),
            _ => return None,
        };
        let t = self.table.slots[i].as_ref()?;
        (t.work_left == 0).then_some((next, i))
    }

    /// Whether the run loop's next pass would do nothing on CPU `c` before its thread switch:
    /// one CPU, no post waiting, no lowered urgency to re-check, no execution-time event
    /// watched, no timer due, no end or halt.
    #[inline]
    pub(in crate::kernel) fn nothing_due(&self, c: usize) -> bool {
        !(self.cpus.len() != 1
            || (C::MODE == ClockMode::Real && self.bell_rung())
            || self.cpus[c].requeue_current
            || self.exec.watch > 0
            || self.timer_due()
            || self.end_or_halt_due())
    }

    /// Resume the current thread `id` (in slot `i`) of CPU `c` and handle its request. On a
    /// kernel of one CPU the thread is resumed hosted: its yield is handled on its own stack,
    /// which may switch straight to the next thread (see `cpu/direct.rs`); this returns when a
    /// thread comes back to the dispatcher, with whatever is left to handle.
    #[inline(never)]
    pub(in crate::kernel) fn resume_once(&mut self, c: usize, id: ThreadId, i: usize) {
        let t = self.table.slots[i].as_mut().expect("live slot");
        // Real time only (compiled out of the simulator): an OS-backed thread stopped in place.
        if C::MODE == ClockMode::Real && t.worker.as_ref().is_some_and(|w| w.in_place) {
            return self.resume_in_place(c, id, i);
        }
        // `prepare_resume`, in its parts (see `owed_before_resume`).
        let Some(restart_waits) = self.owed_before_resume(c, id, i) else { return };
        let response = self.response(i);
        let Some(co) = self.ready_to_resume(c, id, i, restart_waits) else { return };
        let result = match co {
            // The kernel is reached on the threads' stacks through a pointer derived from this
            // `&mut self` (see `cpu/direct.rs`), which is not used meanwhile.
            Some(co) if self.hosted() => context::resume_hosted(co, self, response),
            Some(co) => context::resume_plain(co, response),
            None => self.resume_worker(i, Some(response)),
        };
        self.after_resume(result);
    }

    /// Whether this kernel's threads are resumed hosted, their yields handled on their own
    /// stacks: one CPU (nothing can be due elsewhere), no global policy, not turned off
    /// (`Config::direct_switch`), and nothing that makes every direct switch decline: an
    /// execution-time event watched (an armed budget) or context-switch costs. Decided at each
    /// resume; a declined direct switch costs more than a plain suspend to the dispatcher
    /// (the request is handled on the thread's stack, then the dispatcher is entered anyway).
    #[inline(always)]
    pub(in crate::kernel) fn hosted(&self) -> bool {
        self.direct_switch
            && self.cpus.len() == 1
            && !self.global
            && self.exec.watch == 0
            && self.costs.context_switch.is_zero()
    }

    /// What comes before resuming the current thread `id` (slot `i`) of CPU `c`: what it is
    /// owed first (an RCS restart, an unlock whose cost is paid, a deferred read), its answer
    /// or interrupt, its coroutine at its first resume. Returns its response, or `None` when
    /// it must not be resumed now. Notes it as the thread resumed ([`Resumed`]).
    #[inline(always)]
    pub(in crate::kernel) fn prepare_resume(&mut self, c: usize, id: ThreadId, i: usize) -> Option<Response> {
        let restart_waits = self.owed_before_resume(c, id, i)?;
        let response = self.response(i);
        self.ready_to_resume(c, id, i, restart_waits)?;
        Some(response)
    }

    /// The first part of [`Kernel::prepare_resume`]: what thread `id` (slot `i`) is owed
    /// before its reply. Returns whether an aborted section's restart waits for its next
    /// call, or `None` when it must not be resumed now.
    ///
    /// The three parts are called in turn by [`Kernel::resume_once`] itself: a `Response`
    /// returned in an `Option` was copied twice more on the way to the thread's stack.
    #[inline(always)]
    fn owed_before_resume(&mut self, c: usize, id: ThreadId, i: usize) -> Option<bool> {
        let t = self.table.slots[i].as_mut().expect("live slot");
        // A restart that waits for the thread's next call is read here, not after that call.
        let restart_waits = t.restart_section.is_some();
        let settle = restart_waits || t.pending_unlock.is_some();
        // Read from one look-up of the slot, unless a settlement comes first.
        let mut read = t.pending_read;
        if settle {
            if !self.settle_before_resume(c, id) {
                return None;
            }
            read = self.table.slots[i].as_ref().expect("live slot").pending_read;
        }
        if read && !self.deferred_read(c, i, id) {
            return None;
        }
        Some(restart_waits)
    }

    /// The second part of [`Kernel::prepare_resume`]: the response of the thread in slot `i`,
    /// its answer or interrupt (both taken from its slot).
    #[inline(always)]
    fn response(&mut self, i: usize) -> Response {
        let now = self.now;
        let t = self.table.slots[i].as_mut().expect("live slot");
        t.in_work = false;
        let answer = t.take_answer();
        // The answer to an unlock comes back into a destructor: it carries no interrupt, and
        // one pending stays in its slot for the thread's next call. Aborts and kills also wait
        // for the thread's last lock to be released. A restart was raised by
        // `settle_before_resume`: the thread holds its section's lock, so no abort or kill
        // comes before it.
        let quiet = std::mem::take(&mut t.quiet_reply);
        // The job is read before the interrupt, which changes nothing in it.
        let job = t.job;
        let reply = if !quiet && (t.interrupt.is_some() || t.kill_pending || t.abort_pending || t.stale) {
            self.interrupt_or(i, answer)
        } else {
            t.at_boundary = false;
            Ok(answer)
        };
        Response { now, job, reply }
    }

    /// The last part of [`Kernel::prepare_resume`]: the coroutine of thread `id` (slot `i`)
    /// at its first resume. Returns `None` when it must not be resumed (it has ended);
    /// otherwise notes it as the thread resumed and returns its coroutine's handle, taken
    /// here, or `Some(None)` when it runs on an OS thread of its own (real time only).
    #[inline(always)]
    fn ready_to_resume(&mut self, c: usize, id: ThreadId, i: usize, restart_waits: bool) -> Option<Option<CoHandle>> {
        let t = self.table.slots[i].as_mut().expect("live slot");
        let co = match &t.coroutine {
            Some(co) => Some(co.handle()),
            None if t.worker.is_some() => None,
            None => {
                if !self.create_coroutine(c, i) {
                    return None;
                }
                // An OS-backed thread's coroutine went to its worker.
                self.table.slots[i].as_ref().expect("live slot").coroutine.as_ref().map(Coroutine::handle)
            }
        };
        if C::MODE == ClockMode::Real {
            self.leave_kernel();
            self.publish_due();
        }
        self.resumed = Resumed { c, id, i, restart_waits };
        Some(co)
    }

    /// Handle what the thread that came back to the dispatcher hands it: a request, its end,
    /// or nothing (its request was handled on its stack).
    #[inline(always)]
    fn after_resume(&mut self, result: CoroutineResult<Request, ThreadOutcome>) {
        let Resumed { c, id, .. } = self.resumed;
        match result {
            CoroutineResult::Yield(Request::Op(request)) => {
                self.refresh_now();
                self.handle_plain(request);
            }
            CoroutineResult::Yield(Request::Setup(request)) => {
                self.refresh_now();
                self.handle_owned(c, id, *request);
            }
            CoroutineResult::Return(outcome) => {
                self.refresh_now();
                self.exit(c, id, outcome);
            }
            // Handled on the thread's stack, checks included.
            CoroutineResult::Handled => return,
        }
        if self.verify {
            self.verify_urgencies();
        }
    }

    /// Handle the request of the thread resumed last ([`Resumed`]), on whichever stack.
    #[inline(always)]
    pub(in crate::kernel) fn handle_plain(&mut self, request: Op) {
        let Resumed { c, id, i, restart_waits } = self.resumed;
        match request {
            // Unlocks are the requests that hand a CPU straight to a waiter: they skip the
            // general dispatch on the request kind.
            Op::Unlock { lock, poison } => self.handle_unlock(i, id, lock, poison),
            // The most frequent request in a simulation, handled here.
            Op::Work(ns) => self.handle_work(c, i, ns),
            // A yield: `handle_yield` dispatches the scheduler's pick when nothing is due.
            Op::Yield if !restart_waits => {
                self.handle_yield(c, i);
            }
            request => {
                if !restart_waits || !self.restart_answers(id, &request) {
                    self.handle(c, id, request);
                }
            }
        }
    }

    /// The reply for the thread in slot `i`, resumed with `answer` while an interrupt may be
    /// due: the pending one, if due now ([`Tcb::interrupt_due`]; it is taken), or an abort or
    /// a kill that may be delivered now ([`Kernel::unwind_reply`]), the more urgent of the two
    /// (see [`Interrupt`]). A semaphore unit `answer` granted goes back, since the thread will
    /// never see it. The thread is no longer at a job boundary once this is read.
    ///
    /// [`Tcb::interrupt_due`]: crate::kernel::threads::tcb::Tcb::interrupt_due
    #[cold]
    fn interrupt_or(&mut self, i: usize, answer: Answer) -> Result<Answer, Interrupt> {
        let t = self.table.slots[i].as_mut().expect("live slot");
        let due = if t.kill_pending || t.abort_pending || t.stale { Self::unwind_reply(t) } else { None };
        let pending = t.interrupt_due();
        // `None` is below any interrupt: this is the more urgent of the two, if any.
        let Some(interrupt) = pending.max(due) else {
            t.at_boundary = false;
            return Ok(answer);
        };
        if pending.is_some() {
            // Delivered now (or overtaken by a more urgent one, which ends the same job).
            t.interrupt = None;
        }
        if let Some(k) = answer.granted_unit() {
            let id = t.id;
            self.forgo_unit(k, id);
        }
        self.table.slots[i].as_mut().expect("live slot").at_boundary = false;
        Err(interrupt)
    }

    /// The interrupt that unwinds a thread with a kill, an abort or an ended job on its stack,
    /// if it is to be unwound now. Nothing unwinds inside a critical section, except at a
    /// job boundary, where a lock still counted as held was leaked by the job. Once delivered,
    /// the interrupt is delivered again until the job loop reports the unwind: a body that
    /// caught it and called the runtime again is unwound again at that call. A thread still
    /// unwinding (a destructor calling the runtime) is answered normally instead.
    #[cold]
    pub(in crate::kernel) fn unwind_reply(t: &mut Tcb) -> Option<Interrupt> {
        if !(t.holds_nothing() || t.at_boundary) {
            return None;
        }
        if t.unwind_sent && std::thread::panicking() {
            return None;
        }
        t.unwind_sent = true;
        Some(if t.kill_pending { Interrupt::Kill } else { Interrupt::Abort })
    }

    /// Give the thread in slot `i` (on CPU `c`) its coroutine, at its first resume. Returns
    /// false when no stack could be had: the thread has then ended.
    #[cold]
    pub(in crate::kernel) fn create_coroutine(&mut self, c: usize, i: usize) -> bool {
        let t = self.table.slots[i].as_mut().expect("live slot");
        let id = t.id;
        match self.table.stacks.take(t.stack_size) {
            Ok(stack) => {
                use corosensei::stack::Stack;
                let clocks = (self.real_clock.clone(), self.watch.clone());
                let (runtime, executor) = (self.runtime, self.executor());
                let t = self.table.slots[i].as_mut().expect("live slot");
                self.table.guards[i] = crate::os::overflow::StackGuard::new(
                    stack.limit().get(),
                    stack.base().get(),
                    &self.table.summaries[t.summary].name,
                    id.index() as u32,
                    id.generation(),
                    t.cpu,
                );
                let body = t.body.take().expect("a new thread has its body");
                let cpu = t.cpu;
                let shared = (t.fast_held.clone(), t.mail.clone());
                let os_backed = t.os_backed && C::MODE == ClockMode::Real;
                let co = Coroutine::with_stack(stack, move |y, first| {
                    job_loop::thread_main(y, first, (runtime, executor, id, cpu, os_backed), clocks, shared, body)
                });
                if os_backed {
                    return self.start_worker(c, i, co);
                }
                let mut co = co;
                co.set_host::<Self>();
                t.coroutine = Some(co);
                true
            }
            Err(e) => {
                self.exit(c, id, ThreadOutcome::NotStarted(e.to_string()));
                false
            }
        }
    }

    /// The running thread `id`, in slot `i`, unlocks `lock`.
    #[inline]
    pub(in crate::kernel) fn handle_unlock(&mut self, i: usize, id: ThreadId, lock: LockId, poison: bool) {
        let t = self.table.slots[i].as_mut().expect("live slot");
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

    /// The running thread of CPU `c`, in slot `i`, yields: it stays ready, and the scheduler
    /// is told. When the run loop would pick the next thread right after with nothing in
    /// between (see [`Kernel::continuation`]), the scheduler is told and asked in one call
    /// ([`Scheduler::on_yield_pick`]) and its pick dispatched here. The slot, resolved once
    /// by the caller, serves the stop, the accounting and the scheduler call.
    ///
    /// [`Scheduler::on_yield_pick`]: crate::policy::sched::Scheduler::on_yield_pick
    /// Returns whether the pick was asked for (nothing was due).
    #[inline]
    pub(in crate::kernel) fn handle_yield(&mut self, c: usize, i: usize) -> bool {
        self.stop_running_at(c, i, StopReason::Yielded);
        self.table.slots[i].as_mut().expect("live slot").state = State::Ready;
        if self.global || self.failed.is_some() || !self.nothing_due(c) {
            self.cpus[c].yielded = true;
            self.sched_call_at(c, i, |s, info| s.on_schedule(info, crate::policy::sched::Schedule::Yield));
            return false;
        }
        // What `reschedule` does with a CPU left empty: a pending preemption is moot.
        self.cpus[c].preempt = false;
        let now = self.now;
        if let Some(next) = self.sched_call_at(c, i, |s, info| s.on_yield_pick(info, now)) {
            self.dispatch_picked(c, next);
        }
        true
    }

    /// The thread in slot `i`, current on CPU `c`, asks to spend `ns` of CPU time.
    #[inline(always)]
    pub(in crate::kernel) fn handle_work(&mut self, c: usize, i: usize, ns: u64) {
        let t = self.table.slots[i].as_mut().expect("live slot");
        let maybe_signalled =
            t.abort_pending || t.kill_pending || t.stale || t.restart_section.is_some() || t.interrupt.is_some();
        if ns > 0 && !(maybe_signalled && Self::signalled(t)) {
            t.work_left = ns;
            t.in_work = true;
            self.cpus[c].work_mark = self.now;
        }
    }

    /// Whether an interrupt lands on this demand instead of after it: an abort or a kill that
    /// waited for a critical section to end, the restart of an aborted section, or any
    /// interrupt that waited for the answer to an unlock to go by.
    #[cold]
    fn signalled(t: &Tcb) -> bool {
        ((t.abort_pending || t.kill_pending || t.stale) && t.holds_nothing())
            || t.restart_section.is_some()
            || t.interrupt_due().is_some()
    }

    pub(in crate::kernel) fn handle(&mut self, c: usize, id: ThreadId, request: Op) {
        match request {
            Op::Work(ns) => {
                let i = self.local(id).expect("the requesting thread is live");
                self.handle_work(c, i, ns);
            }
            Op::Yield => {
                let i = self.local(id).expect("the running thread is live");
                self.handle_yield(c, i);
            }
            Op::SleepUntil(_) if self.in_global(id) => {
                self.failed = Some(Error::GlobalLockHeld { thread: id, call: "sleep" });
            }
            Op::Join(_) if self.in_global(id) => {
                let e = Error::GlobalLockHeld { thread: id, call: "join" };
                self.tcb(id).set_answer(Answer::failed(e));
            }
            Op::SleepUntil(t) => {
                if t > self.now {
                    self.stop_running(c, StopReason::Sleeping);
                    let tcb = self.tcb(id);
                    tcb.state = State::Sleeping;
                    let token = tcb.wait_token;
                    self.arm_wait_timer(id, t, TimerKind::Wake(id, token));
                    self.sched_call(c, id, |s, info| s.on_blocked(info));
                    self.meta_next(c, id);
                }
            }
            Op::Join(target) => {
                let from = Some(self.cpus[c].index);
                let r = if target == id {
                    Err(Error::JoinSelf)
                } else {
                    match (self.outcome_of(target), self.remote_cpu(target)) {
                        // A thread of another real-time CPU: its kernel answers when it ends.
                        (Err(_), Some(to)) => self.post(to, Post::Join { target, joiner: id }).map(|()| None),
                        (r, _) => r.map_err(|_| self.no_thread_from(target, from)),
                    }
                };
                match r {
                    Ok(None) => {
                        if self.local(target).is_some() {
                            self.tcb(target).joiners += 1;
                        }
                        self.stop_running(c, StopReason::Blocked);
                        self.tcb(id).state = State::Blocked(Wait::Join(target));
                        self.sched_call(c, id, |s, info| s.on_blocked(info));
                        self.meta_next(c, id);
                    }
                    Ok(Some(outcome)) => {
                        self.tcb(id).set_answer(crate::kernel::thread_side::protocol::Answer::joined(outcome))
                    }
                    Err(e) => self.tcb(id).set_answer(Answer::failed(e)),
                }
            }
            Op::Release(target) => {
                let from = self.cpus[c].index;
                let r = self.request_release(target, from, self.now);
                self.tcb(id).set_answer(Answer::fallible(r, |()| Value::Released.into()));
            }
            Op::JobDone { aborted } => self.job_done(c, id, aborted),
            Op::Lock { lock, deadline, try_only, restartable } => {
                if let Some(answer) = self.lock_request(c, id, lock, deadline, try_only, restartable) {
                    self.tcb(id).set_answer(answer);
                }
            }
            Op::Unlock { lock, poison } => {
                let i = self.local(id).expect("the requesting thread is live");
                self.handle_unlock(i, id, lock, poison);
            }
            Op::ClearPoison(lock) => self.clear_poison(lock),
            Op::GlobalLock { global, try_only } => {
                if let Some(answer) = self.global_lock_request(c, id, global, try_only) {
                    self.tcb(id).set_answer(answer);
                }
            }
            Op::GlobalUnlock { global, acquired, released } => {
                self.tcb(id).quiet_reply = true;
                self.global_unlock(id, global, acquired, released);
            }
            Op::Adopt(lock) => {
                if let Some(l) = self.lock_local(lock) {
                    self.sync_owner(l);
                }
            }
            Op::CondWait { cond, lock, deadline } => {
                if let Some(answer) = self.cond_wait(c, id, cond, lock, deadline) {
                    self.tcb(id).set_answer(Answer::Value(Value::Cond(answer)));
                }
            }
            Op::CondSignal { cond, all } => {
                let status = self.cond_signal(c, cond, all);
                self.answer_status(id, status);
            }
            Op::Procure { sem, deadline, try_only } => {
                if let Some(answer) = self.procure(c, id, sem, deadline, try_only) {
                    self.tcb(id).set_answer(Answer::Value(Value::Sem(answer)));
                }
            }
            Op::Vacate(sem) => {
                let status = self.vacate(c, sem);
                self.answer_status(id, status);
            }
            Op::Urgency => {
                let u = self.tcb(id).urgency();
                self.tcb(id).set_answer(Answer::Value(Value::Urgency(u)));
            }
            Op::Preemption(on) => {
                let old = self.set_preemption(c, id, on);
                self.tcb(id).set_answer(Answer::Value(Value::Flag(old)));
            }
            Op::SetPriority(priority) => self.set_priority_of(id, priority),
            Op::Kill(target) => {
                let r = match (self.local(target), self.remote_cpu(target)) {
                    (Some(_), _) => {
                        self.kill(target);
                        Ok(())
                    }
                    (None, Some(to)) => self.post(to, Post::Kill { target, from: self.first_cpu }),
                    (None, None) => Err(self.no_thread(target)),
                };
                self.tcb(id).set_answer(Answer::fallible(r, |()| Value::Go.into()));
            }
            Op::SetPriorityOf(target, priority) => {
                let r = match (self.local(target), self.remote_cpu(target)) {
                    (Some(_), _) => {
                        self.set_priority_of(target, priority);
                        Ok(())
                    }
                    (None, Some(to)) => self.post(to, Post::SetPriority { target, priority, from: self.first_cpu }),
                    (None, None) => Err(self.no_thread(target)),
                };
                self.tcb(id).set_answer(Answer::fallible(r, |()| Value::Go.into()));
            }
            // Coming back to the loop is the point: it fires what is due and preempts.
            Op::Checkpoint => {}
            Op::Msg(op) => self.handle_msg(c, id, op),
            Op::Set(op) => {
                let r = self.set_op(op);
                self.tcb(id).set_answer(Answer::fallible(r, |value| Value::Set(value).into()));
            }
        }
    }

    /// Handle a request that owns heap values.
    #[cold]
    pub(in crate::kernel) fn handle_owned(&mut self, c: usize, id: ThreadId, request: Setup) {
        match request {
            Setup::Spawn(spec, body) => {
                let cpu = self.cpus[c].index;
                if self.cross.crossing.is_some() && spec.cpu != cpu && spec.cpu < self.total_cpus {
                    // Real time: the target CPU's kernel creates it and answers.
                    let to = spec.cpu;
                    let stamp = self.remote_stamp(id);
                    match self.post(to, Post::Spawn(Box::new((spec, body, id, stamp)))) {
                        Ok(()) => {
                            self.stop_running(c, StopReason::Blocked);
                            self.tcb(id).state = State::Blocked(Wait::Spawn(stamp));
                            self.sched_call(c, id, |s, info| s.on_blocked(info));
                            self.meta_next(c, id);
                        }
                        Err(e) => self.tcb(id).set_answer(Answer::failed(e)),
                    }
                    return;
                }
                let r = self.spawn_thread(spec, body, cpu);
                self.tcb(id).set_answer(Answer::fallible(r, |id| Value::Spawned(id).into()));
            }
            Setup::Control(op) => {
                let r = self.control(op);
                self.tcb(id).set_answer(Answer::fallible(r, |value| Report::Control(value).into()));
            }
        }
    }

    /// Answer a notification or a vacate with its outcome.
    fn answer_status(&mut self, id: ThreadId, status: Result<(), LockError>) {
        self.tcb(id).set_answer(Answer::Value(Value::Status(status)));
    }

    /// Carry out a set, clock or budget operation asked for by a thread.
    pub(crate) fn control(&mut self, op: ControlOp) -> Result<ControlValue, Error> {
        use ControlValue::{Members, Unit};
        Ok(match op {
            ControlOp::CreateSet(name) => ControlValue::Set(self.create_set(name)?),
            ControlOp::Set(op) => self.set_op(op)?.into(),
            ControlOp::SetMembers(set) => Members(self.exec.sets[self.set_local(set)?].members.clone()),
            ControlOp::ThreadTimer(t, at, h) => self.arm_thread_timer(t, at, h).map(|_| Unit)?,
            ControlOp::SetTimer(set, at, h) => self.arm_set_timer(set, at, h).map(|_| Unit)?,
            ControlOp::SetBudget(set, b) => self.set_budget(set, b).map(|_| Unit)?,
            ControlOp::CreateLock(_) | ControlOp::CreateCond(_) | ControlOp::CreateSem(_) if self.global => {
                return Err(self.global_refusal(crate::error::GlobalRefusal::Synchronisation));
            }
            ControlOp::CreateLock(spec) => ControlValue::Lock(self.create_lock(spec)?),
            ControlOp::CreateCond(cpu) => ControlValue::Cond(self.create_cond(cpu)?),
            ControlOp::CreateSem(spec) => ControlValue::Sem(self.create_sem(spec)?),
            ControlOp::StackScheduler(cpu, wrap) => self.stack_scheduler_now(cpu, wrap).map(|_| Unit)?,
            ControlOp::UnstackScheduler(cpu) => self.unstack_scheduler_now(cpu).map(|_| Unit)?,
        })
    }

    /// Carry out a set, clock or budget operation that owns nothing.
    pub(crate) fn set_op(&mut self, op: SetOp) -> Result<SetValue, Error> {
        use SetValue::{Bool, Unit};
        Ok(match op {
            SetOp::DestroySet(set) => self.destroy_set(set).map(|_| Unit)?,
            SetOp::EmptySet(set) => self.empty_set(set).map(|_| Unit)?,
            SetOp::AddToSet(set, t) => self.add_to_set(set, t).map(|_| Unit)?,
            SetOp::RemoveFromSet(set, t) => self.remove_from_set(set, t).map(|_| Unit)?,
            SetOp::SetContains(set, t) => {
                let s = self.set_local(set)?;
                if !self.id_check.owns(t) {
                    return Err(Error::ForeignThread(t));
                }
                Bool(self.exec.sets[s].members.contains(&t))
            }
            SetOp::SetOf(t) => {
                if self.local(t).is_none() {
                    return Err(self.no_thread(t));
                }
                SetValue::SetOf(self.tcb(t).set.map(|s| self.exec.sets[s as usize].id))
            }
            SetOp::ThreadClock(t) => SetValue::Time(self.thread_clock(t)?),
            SetOp::SetThreadClock(t, v) => self.set_thread_clock(t, v).map(|_| Unit)?,
            SetOp::GroupClock(set) => SetValue::Time(self.group_clock(set)?),
            SetOp::SetGroupClock(set, v) => self.set_group_clock(set, v).map(|_| Unit)?,
            SetOp::BudgetLeft(set) => {
                let (left, exhausted) = self.budget_left(set)?;
                SetValue::Budget(left, exhausted)
            }
            SetOp::Replenish(set, to) => self.replenish_to(set, to).map(|_| Unit)?,
            SetOp::AddBudget(set, d) => self.add_budget(set, d).map(|_| Unit)?,
        })
    }
}
