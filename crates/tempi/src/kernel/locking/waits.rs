//! Wait queues for condition variables and counting semaphores.
//!
//! One queue mechanism: waiters ranked when they join (by urgency for condition variables, by
//! the semaphore's [`QueuePolicy`]), the highest rank served first, arrival order among equal
//! ranks; bounded waits through the kernel's timer queue. Semaphores hand a vacated unit
//! straight to the first waiter; a condition variable's waiter, once signalled, reacquires
//! its lock under the lock's own protocol.
//!
//! Must not: rank waiters itself (the queue policy does), or take a lock on a waiter's behalf.

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::thread_side::protocol::{Answer, CondAnswer, LockAnswer, SemAnswer, Value};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::timing::timers::TimerKind;
use crate::kernel::Kernel;
use crate::objects::{LockError, SemSpec};
use crate::plain::StopReason;
use crate::plain::ThreadId;
use crate::plain::{CondId, LockId, SemId};
use crate::policy::queue::QueuePolicy;
use crate::policy::sched::ReadyReason;
use crate::time::Time;

/// Ranked waiters: highest rank first, then arrival order. Pre-sized, so joining never
/// allocates. In real time an entry may be a *proxy* for a thread of another CPU, marked by
/// the non-zero stamp that thread waits on (`xcpu/sync.rs`); a local waiter's stamp is 0.
pub(crate) struct WaitQueue {
    /// Sorted ascending by (rank, -arrival): the next to serve is last.
    entries: Vec<(i64, i64, ThreadId, u32)>,
    arrivals: i64,
}

impl WaitQueue {
    /// Room for `n` waiters, or an error naming `what` if the allocator refuses it.
    fn with_capacity(n: usize, what: &str) -> Result<WaitQueue, Error> {
        Ok(WaitQueue { entries: crate::sizes::vec_with_capacity(n, what)?, arrivals: 0 })
    }
    fn push(&mut self, rank: i64, id: ThreadId) {
        self.push_stamped(rank, id, 0);
    }
    /// Queue `id` (a proxy if `stamp` is not 0) at `rank`, after the waiters of equal rank.
    pub(in crate::kernel) fn push_stamped(&mut self, rank: i64, id: ThreadId, stamp: u32) {
        self.arrivals += 1;
        let key = (rank, -self.arrivals);
        let at = self.entries.partition_point(|e| (e.0, e.1) < key);
        self.entries.insert(at, (rank, -self.arrivals, id, stamp));
    }
    /// The next waiter to serve, and its stamp (0: a thread of this kernel).
    pub(in crate::kernel) fn pop(&mut self) -> Option<(ThreadId, u32)> {
        self.entries.pop().map(|e| (e.2, e.3))
    }
    fn remove(&mut self, id: ThreadId) {
        self.entries.retain(|e| e.2 != id);
    }
    /// Take out the proxy of `id` waiting on `stamp`; whether it was queued.
    pub(in crate::kernel) fn remove_proxy(&mut self, id: ThreadId, stamp: u32) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| !(e.2 == id && e.3 == stamp));
        self.entries.len() != before
    }
}

pub(crate) struct CondState {
    pub(in crate::kernel) waiters: WaitQueue,
}

pub(crate) struct SemState {
    /// For the error naming its policy, should the policy panic.
    pub(in crate::kernel) name: String,
    pub(in crate::kernel) count: u64,
    pub(in crate::kernel) policy: Box<dyn QueuePolicy>,
    pub(in crate::kernel) waiters: WaitQueue,
}

impl<C: Clock> Kernel<C> {
    pub(crate) fn create_cond(&mut self, cpu: usize) -> Result<CondId, Error> {
        if self.cpu_local(cpu).is_none() {
            return Err(Error::NoSuchCpu { cpu, cpus: self.total_cpus });
        }
        if self.sync.conds.len() == self.sync.conds.capacity() {
            return Err(Error::InvalidConfig(format!(
                "more than {} condition variables on one CPU",
                self.sync.conds.capacity()
            )));
        }
        let id = CondId(self.sync.lock_base + self.sync.conds.len() as u32);
        let cap = self.table.slots.len() + self.proxy_room();
        let waiters = WaitQueue::with_capacity(cap, "the waiters of a condition variable (Config::max_threads)")?;
        self.sync.conds.push(CondState { waiters });
        Ok(id)
    }

    pub(crate) fn create_sem(&mut self, spec: SemSpec) -> Result<SemId, Error> {
        spec.check()?;
        if self.cpu_local(spec.cpu).is_none() {
            return Err(Error::NoSuchCpu { cpu: spec.cpu, cpus: self.total_cpus });
        }
        if self.sync.sems.len() == self.sync.sems.capacity() {
            return Err(Error::InvalidConfig(format!("more than {} semaphores on one CPU", self.sync.sems.capacity())));
        }
        let id = SemId(self.sync.lock_base + self.sync.sems.len() as u32);
        let cap = self.table.slots.len() + self.proxy_room();
        let waiters = WaitQueue::with_capacity(cap, "the waiters of a semaphore (Config::max_threads)")?;
        self.sync.sems.push(SemState { name: spec.name, count: spec.count, policy: spec.queue, waiters });
        Ok(id)
    }

    /// Semaphore `k`'s policy ranks `waiter`: a panic in it is then named as that policy's.
    pub(in crate::kernel) fn sem_rank(&self, k: usize, waiter: &crate::policy::sched::SchedInfo) -> i64 {
        let before = self.culprit.replace(crate::kernel::Culprit::SemQueue(k as u32));
        let rank = self.sync.sems[k].policy.rank(waiter);
        self.culprit.set(before);
        rank
    }

    fn cond_local(&self, cond: CondId) -> Option<usize> {
        let i = cond.0.checked_sub(self.sync.lock_base)? as usize;
        (i < self.sync.conds.len()).then_some(i)
    }

    fn sem_local(&self, sem: SemId) -> Option<usize> {
        let i = sem.0.checked_sub(self.sync.lock_base)? as usize;
        (i < self.sync.sems.len()).then_some(i)
    }

    /// This kernel's index of `cond` (for a request from another CPU).
    pub(in crate::kernel) fn cond_index(&self, cond: CondId) -> Option<usize> {
        self.cond_local(cond)
    }

    /// This kernel's index of `sem` (for a request from another CPU).
    pub(in crate::kernel) fn sem_index(&self, sem: SemId) -> Option<usize> {
        self.sem_local(sem)
    }

    /// Block the running thread `id` of CPU `c` on `wait` (a lock, a condition variable, a
    /// semaphore), with an optional deadline; the caller queues it where it waits.
    pub(crate) fn block_in(&mut self, c: usize, id: ThreadId, wait: Wait, deadline: Option<Time>) {
        // The control block is looked up once, for the stop, the accounting and the
        // scheduler call.
        let i = self.local(id).expect("the blocking thread is live");
        if self.cpus[c].current == Some(id) {
            self.stop_running_at(c, i, StopReason::Blocked);
        } else {
            self.stop_running(c, StopReason::Blocked);
        }
        let t = self.table.slots[i].as_mut().expect("live slot");
        t.state = State::Blocked(wait);
        let token = t.wait_token;
        if let Some(d) = deadline {
            self.arm_wait_timer(id, d, TimerKind::WaitTimeout(id, token));
        }
        self.sched_call_at(c, i, |s, info| s.on_blocked(info));
        self.meta_next(c, id);
    }

    /// `id` waits on `cond`, releasing `lock` first. Returns an immediate answer, or `None`
    /// when it now waits. The lock is released even when the wait is refused, so no error
    /// leaves it held (the caller has given up its guard).
    pub(crate) fn cond_wait(
        &mut self,
        c: usize,
        id: ThreadId,
        cond: CondId,
        lock: LockId,
        deadline: Option<Time>,
    ) -> Option<CondAnswer> {
        self.unlock(id, lock, false, None);
        let from = self.cpus[c].index;
        // Any condition variable of this kernel (in virtual time, of any CPU): its waiters
        // are ranked together whatever their CPUs.
        let k = self.cond_local(cond);
        if k.is_none() && self.object_cpu(cond.0, self.sync.conds.capacity()).is_none() {
            // The caller fills in the condition variable's CPU.
            return Some(Err(LockError::CrossCpu { from, to: usize::MAX }));
        }
        if self.in_global(id) {
            // No waiting inside a global (MSRP) section.
            return Some(Err(LockError::GlobalHeld));
        }
        if deadline.is_some_and(|d| d <= self.now) {
            return Some(Ok(true));
        }
        let Some(k) = k else {
            return self.cond_wait_remote(c, id, cond, deadline);
        };
        let rank = self.tcb(id).urgency().0;
        self.sync.conds[k].waiters.push(rank, id);
        self.block_in(c, id, Wait::Cond(k as u32), deadline);
        None
    }

    /// Wake `cond`'s most urgent waiter, or all of them. A condition variable of another
    /// real-time CPU is notified through that CPU's queue (`xcpu/sync.rs`); an id of no CPU
    /// is refused, the caller filling in the object's CPU.
    pub(crate) fn cond_signal(&mut self, c: usize, cond: CondId, all: bool) -> Result<(), LockError> {
        let Some(k) = self.cond_local(cond) else {
            let caller = self.cpus[c].current;
            return match (self.object_cpu(cond.0, self.sync.conds.capacity()), caller) {
                (Some(to), Some(id)) => self.post_cond_signal(to, id, cond, all),
                _ => Err(LockError::CrossCpu { from: self.cpus[c].index, to: usize::MAX }),
            };
        };
        self.cond_signal_local(k, all);
        Ok(())
    }

    /// Wake the most urgent waiter of this kernel's condition variable `k`, or all of them.
    pub(in crate::kernel) fn cond_signal_local(&mut self, k: usize, all: bool) {
        while let Some((w, stamp)) = self.sync.conds[k].waiters.pop() {
            if stamp != 0 {
                self.grant_proxy(w, stamp, self.sync.lock_base + k as u32, false, !all);
            } else {
                self.answer_cond_waiter(w, Ok(false));
            }
            if !all {
                break;
            }
        }
    }

    /// FREE JAZZ's `procure`: take a unit, waiting unless `try_only`. Returns the answer to
    /// send (a unit granted or a refusal), or `None` when the thread now waits.
    pub(crate) fn procure(
        &mut self,
        c: usize,
        id: ThreadId,
        sem: SemId,
        deadline: Option<Time>,
        try_only: bool,
    ) -> Option<SemAnswer> {
        let from = self.cpus[c].index;
        // Any semaphore of this kernel (in virtual time, of any CPU).
        let Some(k) = self.sem_local(sem) else {
            return match self.object_cpu(sem.0, self.sync.sems.capacity()) {
                Some(_) => self.procure_remote(c, id, sem, deadline, try_only),
                // The caller fills in the semaphore's CPU.
                None => Some(Err(LockError::CrossCpu { from, to: usize::MAX })),
            };
        };
        if self.sync.sems[k].count > 0 {
            self.sync.sems[k].count -= 1;
            self.meta_sem_entered(id, k as u32);
            return Some(Ok(k as u32));
        }
        if try_only {
            return Some(Err(LockError::WouldBlock));
        }
        if self.in_global(id) {
            // No waiting inside a global (MSRP) section.
            return Some(Err(LockError::GlobalHeld));
        }
        if deadline.is_some_and(|d| d <= self.now) {
            return Some(Err(LockError::Timeout));
        }
        let info = self.info(id);
        let rank = self.sem_rank(k, &info);
        self.sync.sems[k].waiters.push(rank, id);
        self.block_in(c, id, Wait::Sem(k as u32), deadline);
        self.meta_procure_blocked(c, id);
        None
    }

    /// FREE JAZZ's `vacate`: give a unit back, straight to the first waiter if there is one.
    /// A semaphore of another real-time CPU gets it through that CPU's queue
    /// (`xcpu/sync.rs`); an id of no CPU is refused, the caller filling in the object's CPU;
    /// a count at `u64::MAX` is left so and refused.
    pub(crate) fn vacate(&mut self, c: usize, sem: SemId) -> Result<(), LockError> {
        let Some(k) = self.sem_local(sem) else {
            let caller = self.cpus[c].current;
            return match (self.object_cpu(sem.0, self.sync.sems.capacity()), caller) {
                (Some(to), Some(id)) => self.post_vacate(to, id, sem),
                _ => Err(LockError::CrossCpu { from: self.cpus[c].index, to: usize::MAX }),
            };
        };
        let done = self.vacate_local(k);
        self.meta_sem_left(c, k as u32);
        done
    }

    /// [`Kernel::vacate`] of the semaphore of local index `k`.
    pub(in crate::kernel) fn vacate_local(&mut self, k: usize) -> Result<(), LockError> {
        match self.sync.sems[k].waiters.pop() {
            Some((w, stamp)) if stamp != 0 => self.grant_proxy(w, stamp, self.sync.lock_base + k as u32, true, false),
            Some((w, _)) => {
                self.answer_sem_waiter(w, Ok(k as u32));
                self.meta_sem_entered(w, k as u32);
            }
            None => {
                let count = &mut self.sync.sems[k].count;
                *count = count.checked_add(1).ok_or(LockError::Overflow)?;
            }
        }
        Ok(())
    }

    /// Thread `id`'s pending answer will never be seen (its job is abandoned before it runs
    /// again): drop it, and if it granted a semaphore unit, give the unit back
    /// ([`Kernel::forgo_unit`]). A semaphore has no owner, so nothing else would ever return
    /// a unit its thread never saw.
    #[cold]
    pub(in crate::kernel) fn forgo_answer(&mut self, id: ThreadId) {
        if let Some(k) = self.tcb(id).take_answer().granted_unit() {
            self.forgo_unit(k, id);
        }
    }

    /// Give back semaphore `k`'s unit granted in an answer its thread `id` never saw (to the
    /// first waiter, or to the count; a unit of another CPU's semaphore goes back there, given
    /// by `id`, and a refusal there is only counted and traced). The count can overflow only
    /// if other vacates took it to `u64::MAX` since the grant; it then stays so, as a refused
    /// vacate leaves it.
    #[cold]
    pub(in crate::kernel) fn forgo_unit(&mut self, k: u32, id: ThreadId) {
        if k & crate::kernel::xcpu::sync::REMOTE_UNIT != 0 {
            self.give_back_remote_unit(k & !crate::kernel::xcpu::sync::REMOTE_UNIT, id);
            return;
        }
        let _ = self.vacate_local(k as usize);
    }

    /// Wake `w`, blocked on a lock, with `answer`: how a lock waiter is answered.
    #[inline]
    pub(crate) fn answer_lock_waiter(&mut self, w: ThreadId, answer: LockAnswer) {
        debug_assert!(matches!(self.tcb(w).state, State::Blocked(Wait::Lock(_))));
        self.tcb(w).set_answer(answer);
        self.wake_from_wait(w);
    }

    /// Wake `w`, waiting on a condition variable, with `answer`.
    pub(crate) fn answer_cond_waiter(&mut self, w: ThreadId, answer: CondAnswer) {
        debug_assert!(matches!(self.tcb(w).state, State::Blocked(Wait::Cond(_) | Wait::RemoteCond(_))));
        self.tcb(w).set_answer(Answer::Value(Value::Cond(answer)));
        self.wake_from_wait(w);
    }

    /// Wake `w`, waiting for a semaphore unit, with `answer`.
    pub(crate) fn answer_sem_waiter(&mut self, w: ThreadId, answer: SemAnswer) {
        debug_assert!(matches!(self.tcb(w).state, State::Blocked(Wait::Sem(_) | Wait::RemoteSem(_))));
        self.tcb(w).set_answer(Answer::Value(Value::Sem(answer)));
        self.wake_from_wait(w);
    }

    /// End a wait on a lock, a condition variable or a semaphore: the thread becomes ready and
    /// any timeout armed for the wait goes stale.
    pub(crate) fn wake_from_wait(&mut self, w: ThreadId) {
        let i = self.local(w).expect("the woken thread is live");
        let t = self.table.slots[i].as_mut().expect("live slot");
        t.end_wait(&mut self.timers);
        t.wants = None;
        self.make_ready_at(i, w, ReadyReason::Woken);
    }

    /// Take `id` out of the condition-variable or semaphore queue it waits in (not served:
    /// a timeout, abort or kill); the lends its wait at a semaphore or busy handler caused
    /// end (`lending.rs`). For a wait on another real-time CPU, the withdrawal of its proxy is
    /// posted there.
    pub(crate) fn leave_queue_wait(&mut self, id: ThreadId) {
        match self.tcb(id).state {
            State::Blocked(Wait::Cond(k)) => self.sync.conds[k as usize].waiters.remove(id),
            State::Blocked(Wait::Sem(k)) => {
                self.sync.sems[k as usize].waiters.remove(id);
                self.end_lends_of(id);
            }
            State::Blocked(Wait::Handler(_)) => self.end_lends_of(id),
            State::Blocked(Wait::RemoteCond(raw)) => self.withdraw_remote_wait(id, raw, false),
            State::Blocked(Wait::RemoteSem(raw)) => self.withdraw_remote_wait(id, raw, true),
            _ => {}
        }
    }

    /// A bounded wait ran out: for a lock, a condition variable or a semaphore.
    pub(crate) fn on_wait_timeout(&mut self, id: ThreadId, token: u64) {
        if self.local(id).is_none() || self.tcb(id).wait_token != token {
            return;
        }
        let State::Blocked(wait) = self.tcb(id).state else { return };
        let Some(answer) = wait.timeout_answer() else { return };
        self.leave_lock_wait(id);
        self.leave_queue_wait(id);
        self.tcb(id).set_answer(answer);
        self.wake_from_wait(id);
    }
}
