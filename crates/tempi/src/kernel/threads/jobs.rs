//! Jobs and deadlines: releases (periodic, sporadic, one-shot), the start and end of a job,
//! deadline misses and abort times, abandoning a job, sporadic releases asked for by threads or
//! handlers, and the end of a thread.
//!
//! Must not: pick threads or switch CPUs (it asks the dispatch functions), or interpret
//! thread requests (see `requests.rs`).

use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::kernel::thread_side::protocol::{Interrupt, JobInfo};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::timing::timers::TimerKind;
use crate::kernel::{Culprit, Kernel};
use crate::plain::ThreadId;
use crate::plain::{JobEnd, StopReason, TraceKind};
use crate::policy::sched::ReadyReason;
use crate::thread::{MissEvent, MissPolicy, ThreadOutcome, Timing};
use crate::time::Time;

impl<C: Clock> Kernel<C> {
    pub(in crate::kernel) fn exit(&mut self, c: usize, id: ThreadId, outcome: ThreadOutcome) {
        // A thread that ends normally has no job left; one cut short ends its jobs, and its
        // exit record carries the same code as their ends (0: completed).
        let cut_short = match outcome {
            ThreadOutcome::Completed => None,
            ThreadOutcome::Panicked(_) => Some(JobEnd::Panicked),
            ThreadOutcome::Killed => Some(JobEnd::Killed),
            ThreadOutcome::NotStarted(_) => Some(JobEnd::NotStarted),
        };
        if self.cpus[c].current == Some(id) {
            self.stop_running(c, StopReason::Exited);
        }
        if let Some(why) = cut_short {
            self.end_jobs_cut_short(id, why);
        }
        self.trace_thread(id, TraceKind::Exit, cut_short.map_or(0, JobEnd::code));
        if let Some(s) = self.tcb(id).set {
            let set = self.exec.sets[s as usize].id;
            let _ = self.remove_from_set(set, id);
        }
        self.release_all(id);
        self.close_mailbox(id);
        if self.tcb(id).cpu_timer.take().is_some() {
            self.exec.watch -= 1;
        }
        let i = self.local(id).expect("exiting thread is live");
        let tcb = self.table.slots[i].take().expect("live slot");
        // Its stack goes back to the pool: it must not name this thread any more.
        self.table.guards[i] = crate::os::overflow::StackGuard::NONE;
        for h in tcb.job_timers.into_iter().chain([tcb.wait_timer]).flatten() {
            self.timers.cancel(h);
        }
        if tcb.state == State::Ready {
            self.sched_mut(c).on_removed(id);
        }
        let stats = tcb.final_stats();
        if let Some(co) = tcb.coroutine
            && co.done()
        {
            self.table.stacks.give_back(tcb.stack_size, co.into_stack());
        }
        self.table.summaries[tcb.summary].outcome = Some(outcome.clone());
        self.table.summaries[tcb.summary].stats = stats;
        self.table.summaries[tcb.summary].distributions = tcb.dist;
        self.table.free.push(i as u32);
        self.table.live -= 1;
        self.count_exit();
        if C::MODE == ClockMode::Real && !self.cross.remote_joins.is_empty() {
            self.answer_remote_joiners(id, &outcome);
        }
        if tcb.joiners == 0 {
            return;
        }
        // Wake every joiner.
        for j in 0..self.table.slots.len() {
            let joiner = match &self.table.slots[j] {
                Some(t) if t.state == State::Blocked(Wait::Join(id)) => t.id,
                _ => continue,
            };
            self.answer_joiner(joiner, outcome.clone());
        }
    }

    /// The thread `id` ends by a kill, a panic or a failure to start: its job in progress (begun or not) and its
    /// waiting jobs end now, abandoned, each with a `JobAbort` record saying why, so that no
    /// released job is left without an end.
    fn end_jobs_cut_short(&mut self, id: ThreadId, why: JobEnd) {
        let t = self.tcb(id);
        let mut ended = 0;
        if t.job_active {
            // (A job already abandoned, whose stack was still unwinding, is not active.)
            t.job_active = false;
            t.finished += 1;
            ended += 1;
            self.trace_thread(id, TraceKind::JobAbort, why.code());
        }
        let c = self.cpu_of(id);
        while self.tcb(id).pending > 0 {
            let t = self.tcb(id);
            let (number, _) = t.pop_pending();
            t.finished += 1;
            ended += 1;
            self.trace(c, TraceKind::JobAbort, id, number, why.code());
        }
        self.stats(id).aborted += ended;
    }

    /// Wake `joiner`, blocked joining a thread, with that thread's outcome.
    fn answer_joiner(&mut self, joiner: ThreadId, outcome: ThreadOutcome) {
        debug_assert!(matches!(self.tcb(joiner).state, State::Blocked(Wait::Join(_))));
        self.tcb(joiner).set_answer(crate::kernel::thread_side::protocol::Answer::joined(outcome));
        self.wake(joiner);
    }

    pub(in crate::kernel) fn outcome_of(&self, id: ThreadId) -> Result<Option<ThreadOutcome>, Error> {
        if self.local(id).is_some() {
            return Ok(None);
        }
        match self.table.summaries.iter().find(|s| s.id == id) {
            Some(s) => Ok(s.outcome.clone()),
            None => Err(Error::UnknownThread(id)),
        }
    }

    // ----- jobs ---------------------------------------------------------------------------

    /// A release instant of thread `id` has come.
    ///
    /// `deadline_armed`: the caller armed the new job's deadline on the release timer's
    /// entry already.
    pub(in crate::kernel) fn release_job(&mut self, id: ThreadId, at: Time, deadline_armed: bool) {
        let t = self.tcb(id);
        if t.kill_pending {
            // The thread ends at its next task boundary and starts no job after the kill: a
            // release timer still armed (a periodic thread killed before a release) must
            // not start one, nor offer the thread, made ready by the kill, to its scheduler
            // a second time.
            return;
        }
        if t.max_jobs.is_some_and(|m| t.released >= m) {
            // Only a sporadic thread gets here: periodic releases stop at the limit.
            self.stats(id).beyond_limit += 1;
            self.trace_thread(id, TraceKind::ReleaseBeyondLimit, at.as_nanos());
            return;
        }
        // A skip drops the next release to come only when no job waits: waiting jobs are
        // dropped from the oldest when the current one ends, which keeps the waiting
        // releases a period apart.
        if t.skip_next > 0 && t.pending == 0 {
            t.skip_next -= 1;
            self.stats(id).skipped += 1;
            self.trace_thread(id, TraceKind::ReleaseSkipped, at.as_nanos());
            return;
        }
        let busy = t.job_active;
        let queued = !matches!(t.timing, Timing::Periodic { .. });
        if busy && queued && t.release_queue.len() >= t.release_queue_cap {
            self.stats(id).overflows += 1;
            self.trace_thread(id, TraceKind::ReleaseOverflow, at.as_nanos());
            return;
        }
        let number = t.released;
        t.released += 1;
        let deadline = t.deadline_of(number, at);
        let abort_at = t.abort_after.map(|a| at + a);
        let arm_deadline = t.deadline_next == number;
        let arm_abort = t.abort_next == number;
        if busy {
            if t.pending == 0 {
                t.pending_release = at;
            }
            if queued {
                t.release_queue.push_back(at);
            }
            t.pending += 1;
        }
        t.stats.released += 1;
        if self.tracing {
            let c = self.cpu_of(id);
            // Stamped with the nominal release, which a real clock may have passed a little
            // before the kernel got here: response times and the report count from the
            // nominal instant.
            let now = self.now;
            self.now = at;
            self.trace(c, TraceKind::Release, id, number, deadline.map_or(u64::MAX, Time::as_nanos));
            self.now = now;
        }
        // One deadline timer and one abort-time timer per thread, for the oldest job not yet
        // checked; each moves on to the next job when it fires.
        if let (Some(d), true, false) = (deadline, arm_deadline, deadline_armed) {
            // A deadline at the next release (D = T) rides on the release timer's entry: it
            // fires first, then the entry stays armed for the release, so a job that ends
            // in time costs no heap entry of its own.
            let t = self.tcb(id);
            let shared = matches!(t.timing, Timing::Periodic { .. })
                && t.job_timers[0].is_some_and(|h| self.timers.push_before(h, d, TimerKind::Deadline(id, number)));
            let h = if shared { None } else { self.timers.push(d, TimerKind::Deadline(id, number)) };
            self.tcb(id).job_timers[1] = h;
        }
        if let (Some(a), true) = (abort_at, arm_abort) {
            let h = self.timers.push(a, TimerKind::AbortTime(id, number));
            self.tcb(id).job_timers[2] = h;
        }
        if !busy {
            self.start_job(id, JobInfo { number, release: at, deadline });
        }
    }

    pub(in crate::kernel) fn start_job(&mut self, id: ThreadId, job: JobInfo) {
        let now = self.now;
        let t = self.tcb(id);
        t.set_job(job);
        t.job_active = true;
        if t.state == State::Running {
            // A job that begins while its thread runs (the next one, at the end of the last)
            // starts now, without a dispatch.
            t.job_first_runs(now);
        }
        t.abort_pending = false;
        self.refresh_urgency(id);
        self.make_ready(id, ReadyReason::Released);
    }

    /// The running thread `id` on CPU `c` reports its job ended.
    pub(in crate::kernel) fn job_done(&mut self, c: usize, id: ThreadId, aborted: bool) {
        self.release_leaked(id);
        let now = self.now;
        let t = self.tcb(id);
        t.at_boundary = true;
        let interrupted = std::mem::take(&mut t.unwind_sent);
        let abort_pending = std::mem::take(&mut t.abort_pending);
        if std::mem::take(&mut t.stale) || !t.job_active {
            // The job on the stack ended at its deadline or abort time and is accounted for:
            // its unwinding took no time, and the next job, if one has started, begins now.
            if t.kill_pending {
                t.raise(Interrupt::Kill);
            } else if !t.job_active && !t.more_jobs() {
                t.raise(Interrupt::Stop);
            } else if !t.job_active {
                self.stop_running(c, StopReason::Aborted);
                self.tcb(id).state = State::Dormant;
                self.sched_call(c, id, |s, info| s.on_blocked(info));
                self.meta_next(c, id);
            }
            return;
        }
        // An abort or a kill the body caught before returning still ends the job as abandoned.
        let aborted = aborted || interrupted || abort_pending;
        t.job_active = false;
        t.finished += 1;
        let (release, number) = (t.job.release, t.job.number);
        let more_jobs = t.more_jobs();
        if aborted {
            self.stats(id).aborted += 1;
            self.trace_thread(id, TraceKind::JobAbort, 0);
        } else {
            let response = now.as_nanos().saturating_sub(release.as_nanos());
            // The job's CPU time up to this instant is what its clock holds plus the part not
            // yet charged (the clock is charged when the thread stops, just below).
            let accounting = self.exec.accounting;
            let uncharged = match accounting {
                crate::sets::Accounting::Off => 0,
                _ if self.cpus[c].current == Some(id) => self.cpus[c].uncharged(now),
                _ => 0,
            };
            let t = self.tcb(id);
            // The response histogram is also the count of completed jobs and their response
            // times ([`Tcb::final_stats`]).
            t.dist.response.record_nanos(response);
            if accounting != crate::sets::Accounting::Off {
                t.dist.execution.record_nanos(crate::time::nanos(t.sched.job_cpu_time).saturating_add(uncharged));
            }
            if let Some(deadline) = t.job.deadline {
                t.dist.tardiness.record_nanos(now.as_nanos().saturating_sub(deadline.as_nanos()));
            }
            self.trace_thread(id, TraceKind::JobComplete, response);
        }
        let t = self.tcb(id);
        if t.deadline_next == number && t.pending == 0 && t.released == number + 1 && t.job_timers[1].is_none() {
            // Its deadline shares the release timer's entry (see `release_job`) and would find
            // the job ended, so it would only move the thread's deadline on to the next job,
            // which no release precedes: do that now and leave the entry to the release.
            if let Some(h) = t.job_timers[0]
                && self.timers.drop_first(h, TimerKind::Deadline(id, number))
            {
                self.tcb(id).deadline_next = number + 1;
            }
        }
        let t = self.tcb(id);
        if t.kill_pending {
            // A killed thread starts no other job: it ends at this boundary (a lock it still
            // holds was leaked by its job, not held by a critical section in progress).
            t.raise(Interrupt::Kill);
            return;
        }
        if !more_jobs {
            // It stays current and ends at its next resume.
            t.raise(Interrupt::Stop);
            return;
        }
        self.stop_running(c, if aborted { StopReason::Aborted } else { StopReason::JobDone });
        self.tcb(id).state = State::Dormant;
        self.sched_call(c, id, |s, info| s.on_blocked(info));
        self.meta_next(c, id);
        self.start_next_queued(id);
    }

    /// Start the oldest waiting job of `id`, if any; jobs the skip policy drops are
    /// abandoned on the way.
    pub(in crate::kernel) fn start_next_queued(&mut self, id: ThreadId) {
        loop {
            let t = self.tcb(id);
            if t.pending == 0 || t.job_active {
                return;
            }
            let (number, release) = t.pop_pending();
            let deadline = t.deadline_of(number, release);
            if t.skip_next > 0 {
                t.skip_next -= 1;
                t.finished += 1;
                self.stats(id).aborted += 1;
                let c = self.cpu_of(id);
                self.trace(c, TraceKind::JobAbort, id, number, 0);
                continue;
            }
            self.start_job(id, JobInfo { number, release, deadline });
            return;
        }
    }

    /// The deadline of job `number` of `id` has come. A running job whose budget runs out at
    /// this same instant is judged only after that budget's event (see
    /// [`Kernel::settle_budgets`]): if the budget kills it, it ended at this instant, as a job
    /// whose demand is met now does, and did not miss.
    pub(in crate::kernel) fn on_deadline(&mut self, id: ThreadId, number: u32) {
        if self.local(id).is_none() {
            return;
        }
        let room = self.exec.deferred_deadlines.len() < self.exec.deferred_deadlines.capacity();
        if room && self.tcb(id).unfinished(number) && self.budget_runs_out_now(id) {
            self.exec.deferred_deadlines.push((id, number));
            return;
        }
        self.judge_deadline(id, number);
    }

    /// [`Kernel::on_deadline`], the budget events of this instant being settled: a miss if
    /// the job is unfinished, then the deadline timer moves on to the thread's next job.
    pub(in crate::kernel) fn judge_deadline(&mut self, id: ThreadId, number: u32) {
        if self.local(id).is_none() {
            return;
        }
        let t = self.tcb(id);
        if t.unfinished(number) {
            let (release, deadline) = t.job_times(number);
            let policy = t.miss_policy;
            let deadline = deadline.unwrap_or(self.now);
            self.stats(id).misses += 1;
            let c = self.cpu_of(id);
            self.trace(c, TraceKind::Miss, id, number, deadline.as_nanos());
            let event = MissEvent { thread: id, job: number, release, deadline, at: self.now };
            self.culprit.set(Culprit::MissHandler(id));
            if let Some(h) = self.tcb(id).on_miss.as_mut() {
                h(&event);
            }
            self.culprit.set(Culprit::Scheduler);
            match policy {
                MissPolicy::Continue => {}
                MissPolicy::AbortJob => self.abandon(id, number),
                MissPolicy::SkipNext => self.tcb(id).skip_next += 1,
            }
        }
        // Move the thread's deadline timer on to its next unfinished job.
        let t = self.tcb(id);
        let next = (number + 1).max(t.first_unfinished());
        t.deadline_next = next;
        if next < t.released
            && let (_, Some(d)) = t.job_times(next)
        {
            let h = self.timers.push(d, TimerKind::Deadline(id, next));
            self.tcb(id).job_timers[1] = h;
        }
    }

    pub(in crate::kernel) fn on_abort_time(&mut self, id: ThreadId, number: u32) {
        if self.local(id).is_none() {
            return;
        }
        if self.tcb(id).unfinished(number) {
            // Abort time applies whatever the miss policy.
            self.abandon(id, number);
        }
        let t = self.tcb(id);
        let next = (number + 1).max(t.first_unfinished());
        t.abort_next = next;
        if let (true, Some(a)) = (next < t.released, t.abort_after) {
            let release = t.job_times(next).0;
            let h = self.timers.push(release + a, TimerKind::AbortTime(id, next));
            self.tcb(id).job_timers[2] = h;
        }
    }

    /// Abandon job `number` of `id` (current or waiting) at this instant.
    pub(in crate::kernel) fn abandon(&mut self, id: ThreadId, number: u32) {
        let t = self.tcb(id);
        if t.job_active && t.job.number == number {
            self.abort_job(id);
        } else if t.pending > 0 && t.pending_front() == number {
            // A waiting job: removed before it starts.
            t.pop_pending();
            t.finished += 1;
            self.stats(id).aborted += 1;
            let c = self.cpu_of(id);
            self.trace(c, TraceKind::JobAbort, id, number, 0);
        }
    }

    /// Abandon the current job. One that has not begun, or that holds no lock, ends at this
    /// instant: the thread leaves its CPU, queue or wait, and a started job's stack is
    /// unwound when the thread next runs (in no simulated time). A job inside a critical
    /// section is unwound at its next task boundary after its last unlock, and ends then.
    pub(in crate::kernel) fn abort_job(&mut self, id: ThreadId) {
        let t = self.tcb(id);
        let begun = !(t.at_boundary || t.stale);
        if begun && !t.holds_nothing() {
            t.abort_pending = true;
            match t.state {
                // A thread waiting for a lock while holding another is aborted once it has let go.
                State::Blocked(Wait::Lock(_)) => {}
                State::Sleeping | State::Blocked(_) => self.wake(id),
                State::Running | State::Ready | State::Dormant | State::Held => {}
            }
            return;
        }
        t.job_active = false;
        t.finished += 1;
        t.abort_pending = false;
        t.stale |= begun;
        t.work_left = 0;
        t.in_work = false;
        self.stats(id).aborted += 1;
        self.trace_thread(id, TraceKind::JobAbort, 0);
        self.forgo_answer(id);
        let t = self.tcb(id);
        if t.kill_pending {
            // Killed: it ends as soon as it runs, whatever jobs it might still have had
            // (parked, it would wait for a release that never comes to a killed thread).
            self.rouse_to_end(id);
            return;
        }
        if !t.more_jobs() {
            // The thread ends as soon as it runs (after unwinding its stack, if it began).
            t.raise(Interrupt::Stop);
            if matches!(t.state, State::Sleeping | State::Blocked(_)) {
                self.wake(id);
            }
            return;
        }
        self.park(id);
        self.start_next_queued(id);
    }

    /// Take `id` off its CPU, out of its scheduler's queue or out of its wait: it becomes
    /// dormant.
    pub(in crate::kernel) fn park(&mut self, id: ThreadId) {
        let c = self.cpu_of(id);
        match self.tcb(id).state {
            State::Running => self.stop_running(c, StopReason::Aborted),
            State::Ready => self.sched_mut(c).on_removed(id),
            State::Sleeping | State::Blocked(_) => {
                self.leave_lock_wait(id);
                self.leave_queue_wait(id);
                self.end_wait(id);
                self.tcb(id).wants = None;
            }
            State::Held | State::Dormant => {}
        }
        self.forgo_answer(id);
        let t = self.tcb(id);
        if t.state != State::Dormant {
            t.state = State::Dormant;
            self.member_idle(id);
        }
    }

    /// Release sporadic thread `target` as of instant `stamp`: now for a thread's call, the
    /// timer's own instant for a timing event's handler. A real clock reaches an event a
    /// little after its instant (the dispatcher's wake-up, a crossing to another CPU); the
    /// job is released at the instant the event stands for, as a periodic release is, so its
    /// deadline and response time are the ones the simulation gives it.
    pub(in crate::kernel) fn request_release(
        &mut self,
        target: ThreadId,
        from_cpu: usize,
        stamp: Time,
    ) -> Result<(), Error> {
        if self.local(target).is_none() {
            if let Some(to) = self.remote_cpu(target) {
                return self.post(to, crate::kernel::xcpu::Post::Release { target, from: self.first_cpu, stamp });
            }
            return Err(self.no_thread_from(target, Some(from_cpu)));
        }
        let now = self.now;
        let t = self.tcb(target);
        let Timing::Sporadic { min_interarrival } = t.timing else {
            return Err(Error::NotSporadic(target));
        };
        let at = stamp.max(t.next_sporadic);
        t.next_sporadic = at + min_interarrival;
        if at <= now {
            self.release_job(target, at, false);
        } else {
            // Deferred releases fall `min_interarrival` apart: one timer, for the first.
            t.deferred += 1;
            if t.deferred == 1 {
                let h = self.timers.push(at, TimerKind::Release(target));
                self.tcb(target).job_timers[0] = h;
            }
        }
        Ok(())
    }

    /// Set thread `id`'s base priority; its policy recomputes its urgency.
    pub(in crate::kernel) fn set_priority_of(&mut self, id: ThreadId, priority: i32) {
        self.tcb(id).sched.priority = priority;
        self.refresh_urgency(id);
    }

    /// End thread `id` at its next task boundary.
    pub(crate) fn kill(&mut self, id: ThreadId) {
        let t = self.tcb(id);
        if t.kill_pending {
            return;
        }
        t.kill_pending = true;
        if t.holds_nothing() {
            t.work_left = 0;
            t.in_work = false;
        }
        self.rouse_to_end(id);
    }

    /// Thread `id`, with a kill pending, is to run so that it ends: woken from a wait or a
    /// sleep, or made ready from dormant. One waiting for a lock while it holds another is
    /// left to get it first (it ends once it has let go).
    fn rouse_to_end(&mut self, id: ThreadId) {
        let t = self.tcb(id);
        match t.state {
            State::Blocked(crate::kernel::threads::tcb::Wait::Lock(_)) if !t.holds_nothing() => {}
            State::Sleeping | State::Blocked(_) => self.wake(id),
            State::Dormant | State::Held => self.make_ready(id, ReadyReason::Woken),
            State::Running | State::Ready => {}
        }
    }
}
