//! The run loop: firing due timers, running every CPU, finding the next instant and letting
//! the clock pass to it, and how a run ends (normally, by a failure, or by a panic of code the
//! kernel calls), including unwinding the threads still alive.
//!
//! Must not: interpret a thread's request (`threads/requests.rs` does) or decide who runs.

use std::time::Duration;

use crate::clock::{Clock, ClockMode, RealClock};
use crate::error::Error;
use crate::kernel::thread_side::job_loop;
use crate::kernel::thread_side::protocol::{Interrupt, Response};
use crate::kernel::threads::tcb::State;
use crate::kernel::timing::timers::TimerKind;
use crate::kernel::EventCtx;
use crate::kernel::{panic_message, Culprit, Kernel, KernelPart};
use crate::plain::ThreadId;
use crate::plain::{StopReason, TraceKind};
use crate::thread::Timing;
use crate::time::Time;
use std::sync::atomic::Ordering;

impl<C: Clock> Kernel<C> {
    /// Resume threads on every CPU until each is idle or busy with `work`.
    pub(in crate::kernel) fn run_cpus(&mut self) {
        loop {
            let mut progressed = false;
            for c in 0..self.cpus.len() {
                loop {
                    if self.timer_due() {
                        self.fire_due_timers();
                        if !self.exec.deferred_deadlines.is_empty() {
                            self.settle_budgets();
                        }
                    }
                    if C::MODE == ClockMode::Real {
                        if self.bell_rung() {
                            self.drain_posts();
                        }
                        if self.exec.watch > 0 {
                            // A runaway in user code is caught at its next runtime call.
                            self.settle_budgets();
                        }
                        if self.end_or_halt_due() {
                            return;
                        }
                    }
                    self.reschedule(c);
                    if self.failed.is_some() {
                        return;
                    }
                    let Some(id) = self.cpus[c].current else { break };
                    if self.tcb(id).work_left > 0 {
                        break;
                    }
                    self.resume(c, id);
                    progressed = true;
                    // A yield lets the other CPUs run first: a thread polling for what another
                    // CPU does at this same instant would otherwise keep this one forever.
                    if std::mem::take(&mut self.cpus[c].yielded) && self.cpus.len() > 1 {
                        break;
                    }
                }
            }
            // Under a global policy a CPU passed over in this pass may have been offered a
            // thread since: it takes it in another pass.
            let offered = self.global && self.cpus.iter().any(|cpu| cpu.preempt);
            if (!progressed && !offered) || self.lone_cpu_busy() {
                return;
            }
        }
    }

    /// Whether another pass of [`Kernel::run_cpus`] would do nothing: a lone CPU whose
    /// current thread is inside `work`, with no preemption pending, no timer due and no
    /// execution-time check to make (the pass that just ended stopped there).
    #[inline]
    pub(in crate::kernel) fn lone_cpu_busy(&self) -> bool {
        let [cpu] = &self.cpus[..] else { return false };
        cpu.current.is_some()
            && !cpu.preempt
            && !cpu.requeue_current
            && (C::MODE == ClockMode::Virtual || (self.exec.watch == 0 && !self.bell_rung()))
            && self.timers.next_at().is_none_or(|t| t > self.now)
    }

    // ----- time ---------------------------------------------------------------------------------

    pub(in crate::kernel) fn fire_due_timers(&mut self) {
        // The horizon is exclusive, also when a real clock has passed it: what is due at or
        // after it belongs to no run.
        let Some(last) = self.horizon.as_nanos().checked_sub(1) else { return };
        let due_by = self.now.min(Time::from_nanos(last));
        while let Some((at, kind)) = self.timers.peek_due(due_by) {
            if let TimerKind::Release(id) = kind {
                let Some(i) = self.local(id) else {
                    self.timers.take_top();
                    continue;
                };
                let t = self.table.slots[i].as_mut().expect("live slot");
                let next = match t.timing {
                    Timing::Periodic { period, .. } => {
                        t.max_jobs.is_none_or(|m| t.released + 1 < m).then_some(at + period)
                    }
                    Timing::Sporadic { min_interarrival } => {
                        t.deferred = t.deferred.saturating_sub(1);
                        (t.deferred > 0).then_some(at + min_interarrival)
                    }
                    Timing::OneShot => None,
                };
                // The job released now will have its deadline armed at the next release (see
                // `release_job`, whose early returns this mirrors): the entry that just fired
                // is re-armed for both at once, the deadline keyed as if pushed right after.
                let number = t.released;
                let shared_deadline = matches!(t.timing, Timing::Periodic { .. })
                    && next.is_some()
                    && t.deadline_of(number, at) == next
                    && t.deadline_next == number
                    && !(t.skip_next > 0 && t.pending == 0)
                    && t.max_jobs.is_none_or(|m| number < m);
                match next {
                    // The next release reuses the entry that just fired.
                    Some(next) => {
                        let first = shared_deadline.then_some(TimerKind::Deadline(id, number));
                        t.job_timers[0] = Some(self.timers.rearm_top(next, TimerKind::Release(id), first));
                    }
                    None => self.timers.remove_top(),
                }
                self.release_job(id, at, shared_deadline);
                continue;
            }
            self.timers.take_top();
            match kind {
                TimerKind::Release(_) => unreachable!("handled above"),
                TimerKind::Wake(id, token) => {
                    if self.local(id).is_some() {
                        let t = self.tcb(id);
                        if t.state == State::Sleeping && t.wait_token == token {
                            self.wake(id);
                        }
                    }
                }
                TimerKind::Deadline(id, job) => self.on_deadline(id, job),
                TimerKind::AbortTime(id, job) => self.on_abort_time(id, job),
                TimerKind::SliceEnd(c, token) => {
                    if self.cpus[c].slice_token == token
                        && let Some(id) = self.cpus[c].current
                    {
                        if self.tcb(id).holds_cpu() {
                            // Preemption is off: the slice ends when it is switched on.
                            self.tcb(id).slice_deferred = true;
                            continue;
                        }
                        self.stop_running(c, StopReason::SliceExpired);
                        self.tcb(id).state = State::Ready;
                        self.report_quantum(c, id);
                    }
                }
                TimerKind::Event(idx) => self.fire_event(idx as usize, at),
                TimerKind::WaitTimeout(id, token) => self.on_wait_timeout(id, token),
                TimerKind::Replenish(set, epoch, amount) => self.on_replenish_timer(set as usize, epoch, amount, at),
                TimerKind::Message(s) => self.on_msg_timer(s),
            }
        }
    }

    pub(in crate::kernel) fn fire_event(&mut self, idx: usize, at: Time) {
        let ev = &mut self.events[idx];
        if ev.cancelled {
            return;
        }
        let Some(mut handler) = ev.handler.take() else { return };
        let spec = ev.spec;
        let mut releases = std::mem::take(&mut self.release_buf);
        releases.clear();
        let mut ecx = EventCtx { now: self.now, ids: self.id_check, releases: &mut releases, cancelled: false };
        self.culprit.set(Culprit::Event(idx as u32));
        handler(&mut ecx);
        self.culprit.set(Culprit::Scheduler);
        let cancelled = ecx.cancelled;
        let c = self.cpu_local(spec.cpu).expect("event on this kernel");
        let placeholder = ThreadId::new(u32::MAX, 0);
        self.trace(c, TraceKind::Timer, placeholder, 0, idx as u64);
        for &t in releases.iter() {
            // The handler cannot be answered: a release that cannot be carried out (an ended
            // or non-sporadic thread) is counted and traced instead.
            if self.request_release(t, spec.cpu, at).is_err() {
                self.event_releases_refused += 1;
                self.trace(c, TraceKind::EventReleaseRefused, t, 0, idx as u64);
            }
        }
        self.release_buf = releases;
        let ev = &mut self.events[idx];
        ev.handler = Some(handler);
        ev.cancelled = cancelled;
        if let (Some(p), false) = (spec.period, cancelled) {
            self.timers.push(at + p, TimerKind::Event(idx as u32));
        }
    }

    /// Earliest instant something happens: a timer, or the end of some CPU's work.
    pub(in crate::kernel) fn next_instant(&self) -> Option<Time> {
        let mut next = self.timers.next_at();
        if let Some(t) = self.next_exec_instant() {
            next = Some(next.map_or(t, |n| n.min(t)));
        }
        for cpu in &self.cpus {
            if let Some(id) = cpu.current {
                let left = self.table.slots[self.local(id).expect("live")].as_ref().expect("live").work_left;
                if left > 0 {
                    let end = Time::from_nanos(cpu.work_mark.as_nanos().saturating_add(left));
                    next = Some(next.map_or(end, |n| n.min(end)));
                }
            }
        }
        if C::MODE == ClockMode::Real && !self.cross.outbox.is_empty() {
            // Answers owed to another CPU wait for room in its queue: try again soon.
            let retry = self.now + Duration::from_micros(50);
            next = Some(next.map_or(retry, |n| n.min(retry)));
        }
        next
    }

    pub(in crate::kernel) fn advance(&mut self, target: Time) {
        let busy = self.cpus.iter().any(|cpu| cpu.current.is_some());
        self.now = self.clock.wait_until(target, busy);
        // Work is credited only up to `target`, the instant of the next event. A real clock may
        // return later than asked (the OS descheduled the dispatcher): that excess was not this
        // CPU's time to give, and crediting it would let a job finish "before" an event that
        // was due earlier. The events due meanwhile are then handled in their time order.
        let credited_until = self.now.min(target);
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else {
                // Real time: what the dispatcher does after an idle wait is the kernel's.
                if C::MODE == ClockMode::Real {
                    self.cpus[c].enter_kernel(self.now);
                }
                continue;
            };
            let done = credited_until - self.cpus[c].work_mark;
            self.cpus[c].work_mark = self.now;
            if C::MODE == ClockMode::Real {
                // The thread is charged as its work is credited: the excess is the kernel's.
                let at = credited_until.max(self.cpus[c].charged_at);
                self.cpus[c].enter_kernel(at);
            }
            let t = self.tcb(id);
            t.work_left = t.work_left.saturating_sub(crate::time::nanos(done));
        }
    }

    /// Resume the threads whose `work` ended at this instant before anything else due now, and
    /// let each run its zero-time code up to its next `work`, wait, yield or end: a job whose
    /// demand is met at `t` completes (or ends its thread) at `t`, ahead of releases, budget
    /// events and replenishments at `t`.
    pub(in crate::kernel) fn finish_completed_work(&mut self) {
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else { continue };
            let t = self.tcb(id);
            if !(t.in_work && t.work_left == 0) {
                continue;
            }
            loop {
                self.resume(c, id);
                if self.cpus[c].current != Some(id) || self.cpus[c].preempt {
                    break;
                }
                // Real time: with a timer due, a post waiting, or the end or a halt come, the
                // run loop acts first (`run_cpus` resumes the thread after). An OS-backed
                // thread is stopped in place at once whenever one of them is due, so chained
                // resumes here would stop it again for ever.
                if C::MODE == ClockMode::Real && self.something_due_in_real_time() {
                    break;
                }
                match self.local(id) {
                    Some(i) if self.table.slots[i].as_ref().is_some_and(|t| !t.in_work) => {}
                    _ => break,
                }
            }
        }
    }

    /// The budget events of this instant, after its timers and before any thread runs on: the
    /// budgets that have run out are exhausted and enforced; a running thread a `kill` ends,
    /// which is in its current runtime call, is resumed to end now, on every CPU, before a
    /// preemption or a thread of another CPU can run at this instant (so that, for instance, a
    /// request made at this instant no longer finds it alive); then the deadlines of this
    /// instant put off until now ([`Kernel::on_deadline`]) are judged.
    ///
    /// A budget refilled at the instant it runs out is not exhausted: the replenishment is a
    /// timer of the instant, and comes first.
    #[inline]
    pub(in crate::kernel) fn settle_budgets(&mut self) {
        // Most instants have nothing to settle: no execution-time event armed, no budget kill
        // of a running job and no deadline left to judge. They pay three tests, not a call.
        if self.exec.watch == 0 && !self.exec.budget_killed_running && self.exec.deferred_deadlines.is_empty() {
            return;
        }
        self.settle_armed_budgets();
    }

    #[inline(never)]
    fn settle_armed_budgets(&mut self) {
        self.check_exec_events();
        if std::mem::take(&mut self.exec.budget_killed_running) {
            self.end_killed_running();
        }
        if !self.exec.deferred_deadlines.is_empty() {
            let mut deferred = std::mem::take(&mut self.exec.deferred_deadlines);
            for &(id, number) in &deferred {
                self.judge_deadline(id, number);
            }
            deferred.clear();
            self.exec.deferred_deadlines = deferred;
        }
    }

    /// Resume, once, each running thread with a kill pending that holds no lock: it unwinds
    /// from its current call and ends, in no simulated time. One that holds a lock goes on to
    /// its last unlock, as a kill always waits for it.
    #[inline(never)]
    fn end_killed_running(&mut self) {
        for c in 0..self.cpus.len() {
            let Some(id) = self.cpus[c].current else { continue };
            let t = self.tcb(id);
            if !(t.kill_pending && t.holds_nothing()) {
                continue;
            }
            self.resume(c, id);
            if self.failed.is_some() {
                return;
            }
        }
    }

    /// Run over `[now, until)` or until no thread is left. A panic of code the kernel calls
    /// (a handler, a policy) ends the run with [`Error::Panicked`], after every thread still
    /// alive was unwound.
    pub(crate) fn run(mut self, until: Time) -> Result<KernelPart, Error> {
        let _overflows = crate::os::overflow::watching(&self.table.guards);
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run_loop(until)));
        self.leave_run();
        match ran {
            Ok(()) => {
                if self.failed.is_some() {
                    self.halt_others();
                }
                Ok(self.shutdown())
            }
            Err(payload) => {
                let (source, what) = (self.culprit_source(), self.culprit_name());
                // The kernel's state may be half-changed: only unwinding the threads is safe now.
                self.teardown_threads();
                self.halt_others();
                Err(Error::Panicked { source, what, message: panic_message(&*payload) })
            }
        }
    }

    /// This kernel's run failed: the other dispatchers of the run stop at their next turn.
    pub(in crate::kernel) fn halt_others(&self) {
        if let Some(halt) = &self.halt {
            halt.store(true, std::sync::atomic::Ordering::Relaxed);
        }
        self.ring_others();
    }

    /// The kind of code [`Kernel::culprit`] names.
    pub(in crate::kernel) fn culprit_source(&self) -> crate::error::PanicSource {
        use crate::error::PanicSource;
        match self.culprit.get() {
            Culprit::Scheduler => PanicSource::Scheduler,
            Culprit::LockPolicy(_) => PanicSource::LockPolicy,
            Culprit::SemQueue(_) | Culprit::MessageQueue(_) => PanicSource::QueuePolicy,
            Culprit::MissHandler(_)
            | Culprit::Event(_)
            | Culprit::ExecTimer
            | Culprit::Budget(_)
            | Culprit::RemoteHandler => PanicSource::Handler,
            Culprit::Progress => PanicSource::Hook,
        }
    }

    /// What [`Kernel::culprit`] names, in words.
    pub(in crate::kernel) fn culprit_name(&self) -> String {
        let name_of = |id: ThreadId| {
            self.table
                .summaries
                .iter()
                .find(|s| s.id == id)
                .map_or_else(|| format!("{id:?}"), |s| format!("`{}`", s.name))
        };
        match self.culprit.get() {
            Culprit::Scheduler => format!("the scheduler `{}`", self.cpus.first().map_or("?", |c| c.scheduler.name())),
            Culprit::LockPolicy(l) => match self.sync.locks.get(l as usize) {
                Some(lock) => format!("the lock policy `{}` of lock `{}`", lock.policy.name(), lock.name),
                None => "the lock policy of a lock being created".to_string(),
            },
            Culprit::SemQueue(k) => match self.sync.sems.get(k as usize) {
                Some(sem) => format!("the queue policy `{}` of semaphore `{}`", sem.policy.name(), sem.name),
                None => "the queue policy of a semaphore".to_string(),
            },
            Culprit::MessageQueue(id) => {
                let policy =
                    self.local(id).and_then(|i| self.table.slots[i].as_ref()).and_then(|t| t.mbox.policy.as_ref());
                format!("the message queue policy `{}` of thread {}", policy.map_or("?", |p| p.name()), name_of(id))
            }
            Culprit::MissHandler(id) => format!("the miss handler of thread {}", name_of(id)),
            Culprit::Event(i) => format!("the handler of timing event {i}"),
            Culprit::RemoteHandler => format!(
                "the message handler `{}` of CPU {}, serving another CPU's thread",
                crate::kernel::xcpu::handlers::panicked_handler(),
                self.first_cpu
            ),
            Culprit::ExecTimer => "an execution-time timer's handler".to_string(),
            Culprit::Budget(s) => match self.exec.sets.get(s as usize) {
                Some(set) => format!("the budget handler or action of thread set {:?}", set.id),
                None => "a budget handler or action".to_string(),
            },
            Culprit::Progress => "the progress hook".to_string(),
        }
    }

    /// Real time: the run's end or a halt has come. Only the run loop acts on them, so the
    /// passes over the CPUs and the chaining of resumes stop there: a thread stopped because
    /// one of them is due (an OS-backed thread, a checkpoint) would otherwise be resumed and
    /// stopped again for ever.
    pub(in crate::kernel) fn end_or_halt_due(&self) -> bool {
        C::MODE == ClockMode::Real
            && (self.now >= self.horizon || self.halt.as_ref().is_some_and(|h| h.load(Ordering::Relaxed)))
    }

    /// Whether a timer is due now.
    #[inline(always)]
    pub(in crate::kernel) fn timer_due(&self) -> bool {
        self.timers.next_at().is_some_and(|t| t <= self.now)
    }

    /// Real time: a timer is due, a post waits, or the end or a halt has come.
    fn something_due_in_real_time(&self) -> bool {
        self.timer_due() || self.bell_rung() || self.end_or_halt_due()
    }

    /// Stop at the next turn of the loop when another dispatcher of the run has failed.
    pub(crate) fn halt_with(&mut self, halt: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.halt = Some(halt);
    }

    pub(in crate::kernel) fn run_loop(&mut self, until: Time) {
        self.now = self.clock.now();
        self.enter_kernel(self.now);
        self.horizon = until;
        let mut turns: u32 = 0;
        loop {
            turns = turns.wrapping_add(1);
            if turns & 0xffff == 0
                && let Some(hook) = &self.progress
            {
                self.culprit.set(Culprit::Progress);
                hook(self.now);
                self.culprit.set(Culprit::Scheduler);
            }
            if self.halt.as_ref().is_some_and(|h| h.load(std::sync::atomic::Ordering::Relaxed)) {
                break;
            }
            if C::MODE == ClockMode::Real && (self.bell_rung() || !self.cross.outbox.is_empty()) {
                self.drain_posts();
            }
            self.finish_completed_work();
            self.fire_due_timers();
            self.settle_budgets();
            self.run_cpus();
            if self.timers.overflowed() && self.failed.is_none() {
                self.failed = Some(Error::TooManyTimers { max: self.timers.capacity() });
            }
            if self.run_over() || self.failed.is_some() {
                break;
            }
            if self.end_or_halt_due() {
                break;
            }
            // The CPU goes to the current thread's `work`, or to an idle wait.
            self.leave_kernel();
            match self.next_instant() {
                // Real time: another CPU may still post here, unless every CPU is as quiet.
                None if C::MODE == ClockMode::Real => {
                    if self.settle_idle() {
                        break;
                    }
                    // A post or the run's end rings the bell; the wait is still bounded, so
                    // the run's state is looked at again now and then whatever happens.
                    let recheck = self.now + Duration::from_millis(10);
                    self.advance(until.min(recheck));
                    self.leave_idle();
                    if self.now >= until {
                        break;
                    }
                }
                None => break,
                // The horizon is exclusive: what is due at `until` itself belongs to a later run.
                Some(t) if t >= until => {
                    self.advance(until);
                    // A real clock's wait ends early when another CPU posts here: the run goes
                    // on to the horizon, serving what was posted.
                    if C::MODE == ClockMode::Virtual || self.now >= until {
                        break;
                    }
                }
                Some(t) => self.advance(t),
            }
        }
    }

    /// Unwind every thread that has started and not ended, with the runtime's stop, so its
    /// destructors run on its own stack; their runtime calls do not suspend it (see
    /// `thread_side/ctx.rs`). The kernel's state is not touched: this also runs after a panic left it
    /// half-changed, and when the kernel is dropped.
    pub(in crate::kernel) fn teardown_threads(&mut self) {
        self.teardown_workers();
        let now = self.now;
        for i in 0..self.table.slots.len() {
            let Some(t) = self.table.slots[i].as_mut() else { continue };
            let Some(mut co) = t.coroutine.take() else { continue };
            let job = t.job;
            // Each resume runs the thread up to its next runtime call: a thread that catches
            // the stop and calls the runtime again is stopped again at that call.
            for _ in 0..64 {
                if co.done() {
                    break;
                }
                let resumed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let _ = co.resume(Response { now, job, reply: Err(Interrupt::Stop) });
                }));
                if resumed.is_err() {
                    break;
                }
            }
            // A thread that refused to stop is dropped: the coroutine library unwinds it by
            // force.
            job_loop::drop_coroutine(co);
        }
    }

    pub(in crate::kernel) fn shutdown(mut self) -> KernelPart {
        // Timed messages whose instant has not come: reported, and their slots taken back.
        self.drop_timed_at_end();
        // Charge the CPU time of threads still on a CPU; their last segment stays open in the
        // trace, which exporters close at the run's end.
        for c in 0..self.cpus.len() {
            self.charge(c);
        }
        // The kernel's time up to the end (real time; the clock is not read again: the end
        // stays the instant the run stopped).
        if C::MODE == ClockMode::Real {
            let end = self.now;
            for cpu in &mut self.cpus {
                cpu.leave_kernel(end);
            }
        }
        let table = &mut self.table;
        for t in table.slots.iter_mut().flatten() {
            table.summaries[t.summary].stats = t.final_stats();
            table.summaries[t.summary].distributions =
                std::mem::replace(&mut t.dist, crate::plain::ThreadDistributions::empty());
        }
        // Unwind every suspended thread so its destructors run on its own stack.
        self.teardown_threads();
        let mut lists = Vec::with_capacity(self.cpus.len());
        let mut dropped = 0;
        for cpu in &mut self.cpus {
            let (records, lost) = cpu.trace.take();
            lists.push(records);
            dropped += lost;
        }
        let trace = crate::trace::merge_by_seq(lists);
        KernelPart {
            threads: std::mem::take(&mut self.table.summaries),
            sets: self.set_summaries(),
            trace,
            trace_dropped: dropped,
            cross_cpu: crate::stats::CrossCpuStats { proxies_at_end: self.cross.proxies as u64, ..self.cross.stats },
            event_releases_refused: self.event_releases_refused,
            messages: self.mail.stats,
            direct_switches: self.direct_switches,
            kernel_time: self.cpus.iter().map(|cpu| (cpu.index, Duration::from_nanos(cpu.kernel_ns))).collect(),
            os_backed_left_stopped: std::mem::take(&mut self.table.left_stopped),
            end: self.now,
            error: self.failed.take(),
        }
    }
}

impl Kernel<RealClock> {
    /// Before the run, once the run's clock is set: give every thread registered so far its
    /// coroutine (a stack from the pool, its first frame), which a thread otherwise gets at
    /// its first dispatch: tens of microseconds of the first job's time on its CPU, taken
    /// from its deadline. OS-backed threads start their workers at their first dispatch, as
    /// ever.
    pub(crate) fn prepare_threads(&mut self) {
        for i in 0..self.table.slots.len() {
            let Some(t) = self.table.slots[i].as_ref() else { continue };
            if t.coroutine.is_some() || t.body.is_none() || t.os_backed {
                continue;
            }
            let Some(c) = self.cpu_local(t.cpu) else { continue };
            // A thread whose stack cannot be had ends now, as at its first dispatch.
            self.create_coroutine(c, i);
        }
    }

    /// Give the kernel the run's clock, whose zero every CPU shares; before the run starts.
    pub(crate) fn set_clock(&mut self, clock: RealClock) {
        self.real_clock = Some(clock.clone());
        // The dispatcher's own waits end when another CPU posts to it.
        self.clock = match &self.cross.bell {
            Some(bell) => clock.with_doorbell(bell.clone()),
            None => clock,
        };
    }
}
