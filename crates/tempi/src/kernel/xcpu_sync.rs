//! Condition variables and semaphores shared by the CPUs of a real-time runtime, whose
//! kernels run on separate dispatcher OS threads. Each object belongs to the kernel of its
//! CPU, which alone touches its count and its ranked queue; other CPUs reach it through that
//! CPU's request queue (`xcpu.rs`).
//!
//! Notifying and giving a unit back: the request is carried out by the owner through the same
//! functions as a local call (`waits.rs`); the caller goes on once it is posted. A unit the
//! owner cannot add (its count is at `u64::MAX`) is answered to the giver's kernel, which
//! counts and traces the refusal (`xcpu-refused`, request 3).
//!
//! Waiting (a condition wait, a procure with or without timeout, a `try_procure`): the
//! waiter's kernel posts a `Post::Wait` carrying the thread, a *stamp* built from its wait
//! token (it changes whenever a wait ends, so it names this wait only), its scheduling
//! attributes (what the object's queue ranks) and, for a procure that must not wait, the
//! error to answer if no unit is free. The waiter blocks on `Wait::RemoteCond` /
//! `Wait::RemoteSem`, with its timeout armed on its own CPU. The owner grants a free unit at
//! once, or queues a *proxy* — the remote thread's id with the stamp — in the object's own
//! ranked queue, at the rank a local waiter with those attributes would get, so every grant
//! is decided on one kernel, atomically, in the local order. A grant to a proxy (a unit, a
//! notification) leaves the queue and is answered to the waiter's CPU (`WaitAnswer`), whose
//! kernel wakes the thread if it still waits on that stamp.
//!
//! Giving up (timeout, abort, kill) ends the wait on the waiter's CPU at once and posts a
//! `Withdraw` with the stamp; the owner takes the proxy out if it is still queued. If the
//! grant had already left, it reaches the waiter's CPU for a stamp nobody waits on: a unit is
//! given back to the semaphore (to its first waiter, or the count, as a vacate), so no unit is
//! ever lost; a `notify_one` is passed on as a new `notify_one` of the condition variable (a
//! `notify_all` woke every waiter of its instant and is not). Locally a waiter that times out
//! leaves the queue before a notification can pick it, so the notification goes to the next
//! waiter; passed on, it reaches the next waiter a little later, or, if nobody waits by then,
//! is lost as any notification nobody waits for is — or wakes a thread that began waiting
//! meanwhile, which a condition-variable user must tolerate as a spurious wake-up anyway.
//! A granted unit whose thread is unwound before it sees the answer goes back the same way.
//!
//! Proxy storage: each CPU holds at most `Config::max_threads` proxies at once (as many as
//! it has thread slots), and each object's queue is sized when it is created to hold every
//! local waiter and every proxy, so queueing one never allocates. A wait that finds the
//! owner's proxies all taken is refused with [`LockError::ProxiesFull`], counted on the
//! waiter's CPU (`CrossCpuStats::proxies_full`) and traced there (`xcpu-refused`, request 4).
//! Proxies still queued when the run ends are counted in `CrossCpuStats::proxies_at_end`.
//!
//! What differs from a local wait: a waiter's rank is taken when it joins the queue, as
//! locally (a later priority change does not move it); the scheduler meta-interface's
//! semaphore hook (`on_procure`, inheritance along units held) sees local waiters only; a
//! procure inside a global (MSRP) section is refused (`LockError::GlobalHeld`) even if a unit
//! is free, since finding out would mean waiting for the answer.
//!
//! Must not: touch the queue or count of an object of another kernel, or allocate (the
//! requests are fixed-size, the proxies live in queues sized up front).

use super::protocol::{CondAnswer, SemAnswer};
use super::tcb::{State, Wait};
use super::xcpu::{NowOr, Post, RemoteOp, RemoteWait};
use super::Kernel;
use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::objects::{CondId, LockError, SemId};
use crate::policy::sched::{SchedInfo, Urgency};
use crate::thread::ThreadId;
use crate::time::Time;
use crate::trace::TraceKind;
use std::time::Duration;

/// The top bit of a remote wait's stamp (so it is never 0, a local waiter's stamp), and of a
/// granted unit's index that names another CPU's semaphore by its raw id.
pub(super) const REMOTE_UNIT: u32 = 1 << 31;

/// A waiter's [`SchedInfo`] packed for a request (times and durations in ns, `u64::MAX` for
/// none), so that a `Post` stays small: the object's CPU unpacks it for its queue policy.
/// Durations beyond `u64::MAX` ns (585 years) read as that.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaiterInfo {
    /// The waiter's slot word: it is a thread of the runtime of the kernel that unpacks it,
    /// so the runtime's identity need not travel.
    id: u64,
    urgency: i64,
    release: u64,
    deadline: u64,
    period: u64,
    relative_deadline: u64,
    wcet: u64,
    job_cpu_time: u64,
    cpu: u32,
    priority: i32,
    importance: u32,
    job: u32,
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX - 1)
}

fn dur(n: u64) -> Option<Duration> {
    (n != u64::MAX).then(|| Duration::from_nanos(n))
}

impl WaiterInfo {
    fn pack(i: &SchedInfo) -> WaiterInfo {
        WaiterInfo {
            id: i.id.to_word(),
            urgency: i.urgency.0,
            release: i.release.as_nanos(),
            deadline: i.deadline.map_or(u64::MAX, |t| t.as_nanos().min(u64::MAX - 1)),
            period: i.period.map_or(u64::MAX, ns),
            relative_deadline: i.relative_deadline.map_or(u64::MAX, ns),
            wcet: ns(i.wcet),
            job_cpu_time: ns(i.job_cpu_time),
            cpu: u32::try_from(i.cpu).unwrap_or(u32::MAX),
            priority: i.priority,
            importance: i.importance,
            job: i.job,
        }
    }

    /// The waiter, a thread of runtime `runtime`.
    pub(crate) fn waiter(&self, runtime: u64) -> ThreadId {
        ThreadId::from_word(runtime, self.id).expect("a packed waiter's word is not zero")
    }

    fn unpack(&self, runtime: u64) -> SchedInfo {
        SchedInfo {
            id: self.waiter(runtime),
            cpu: self.cpu as usize,
            priority: self.priority,
            urgency: Urgency(self.urgency),
            importance: self.importance,
            release: Time::from_nanos(self.release),
            deadline: (self.deadline != u64::MAX).then(|| Time::from_nanos(self.deadline)),
            period: dur(self.period),
            relative_deadline: dur(self.relative_deadline),
            wcet: Duration::from_nanos(self.wcet),
            job_cpu_time: Duration::from_nanos(self.job_cpu_time),
            job: self.job,
        }
    }
}

impl<C: Clock> Kernel<C> {
    /// The real-time CPU of another kernel that owns the object with raw id `raw` (condition
    /// variables, semaphores and locks are numbered `CPU × per-CPU capacity + index`), or
    /// `None` (virtual time, or not another CPU's).
    pub(super) fn object_cpu(&self, raw: u32, per_cpu: usize) -> Option<usize> {
        self.crossing.as_ref()?;
        let to = raw as usize / per_cpu.max(1);
        (to != self.first_cpu && to < self.total_cpus).then_some(to)
    }

    /// Post `post` about an object of CPU `to`; a full queue is [`LockError::QueueFull`].
    fn post_sync(&mut self, to: usize, post: Post) -> Result<(), LockError> {
        self.post(to, post).map_err(|e| match e {
            Error::QueueFull { cpu, capacity } => LockError::QueueFull { cpu, capacity },
            _ => LockError::CrossCpu { from: self.first_cpu, to },
        })
    }

    /// Thread `id` notifies `cond`, a condition variable of CPU `to`.
    pub(super) fn post_cond_signal(
        &mut self,
        to: usize,
        id: ThreadId,
        cond: CondId,
        all: bool,
    ) -> Result<(), LockError> {
        self.post_sync(to, Post::CondSignal { cond, all, notifier: id })
    }

    /// Thread `id` gives a unit back to `sem`, a semaphore of CPU `to`.
    pub(super) fn post_vacate(&mut self, to: usize, id: ThreadId, sem: SemId) -> Result<(), LockError> {
        self.post_sync(to, Post::Vacate { sem, giver: id })
    }

    /// A thread of another CPU notified `cond`, one of this kernel's.
    pub(super) fn remote_cond_signal(&mut self, cond: CondId, all: bool) {
        if let Some(k) = self.cond_index(cond) {
            self.cond_signal_local(k, all);
        }
    }

    /// `giver`, a thread of another CPU, gave a unit back to `sem`, one of this kernel's.
    pub(super) fn remote_vacate(&mut self, sem: SemId, giver: ThreadId) {
        let done = match self.sem_index(sem) {
            Some(k) => self.vacate_local(k).is_ok(),
            None => false,
        };
        if !done {
            let to = giver.index() / self.slots.len();
            self.post_answer(to, Post::Refused { target: giver, op: RemoteOp::Vacate, by: self.first_cpu });
        }
    }

    /// How many proxies of other CPUs' threads this kernel can queue at once: as many as it
    /// has thread slots, in a real-time run of several CPUs; none otherwise.
    pub(super) fn proxy_room(&self) -> usize {
        if C::MODE == ClockMode::Real && self.total_cpus > 1 {
            self.slots.len()
        } else {
            0
        }
    }

    /// The stamp of the wait `id` is in (or about to begin): its wait token, top bit set.
    fn sync_wait_stamp(&mut self, id: ThreadId) -> u32 {
        REMOTE_UNIT | (self.tcb(id).wait_token as u32 & !REMOTE_UNIT)
    }

    /// The CPU of the thread `id` of this run (whichever kernel it is on).
    fn cpu_of_remote(&self, id: ThreadId) -> usize {
        id.index() / self.slots.len()
    }

    /// `id`, running on CPU `c`, waits for a unit of `sem`, a semaphore of another CPU. Returns
    /// an immediate answer (the request could not be posted, or is refused here), or `None`
    /// when `id` now waits for the answer.
    pub(super) fn procure_remote(
        &mut self,
        c: usize,
        id: ThreadId,
        sem: SemId,
        deadline: Option<Time>,
        try_only: bool,
    ) -> Option<SemAnswer> {
        let now_or = if try_only {
            NowOr::WouldBlock
        } else if self.in_global(id) {
            // No waiting inside a global (MSRP) section, not even for the answer.
            return Some(Err(LockError::GlobalHeld));
        } else if deadline.is_some_and(|d| d <= self.now) {
            NowOr::Timeout
        } else {
            NowOr::Wait
        };
        // A wait that must not wait still waits for the answer, with no timeout of its own.
        let deadline = if now_or == NowOr::Wait { deadline } else { None };
        self.post_remote_wait(c, id, sem.0, true, now_or, deadline).map(Err)
    }

    /// `id`, running on CPU `c`, waits on `cond`, a condition variable of another CPU (its
    /// lock already released). Returns an immediate answer, or `None` when `id` now waits.
    pub(super) fn cond_wait_remote(
        &mut self,
        c: usize,
        id: ThreadId,
        cond: CondId,
        deadline: Option<Time>,
    ) -> Option<CondAnswer> {
        self.post_remote_wait(c, id, cond.0, false, NowOr::Wait, deadline).map(Err)
    }

    /// Post the wait of `id` on object `obj` (a semaphore if `sem`) to the object's CPU and
    /// block `id` until the answer; the error if it could not be posted (`None`, and no
    /// wait, for an object of no other CPU, which the callers have ruled out).
    fn post_remote_wait(
        &mut self,
        c: usize,
        id: ThreadId,
        obj: u32,
        sem: bool,
        now_or: NowOr,
        deadline: Option<Time>,
    ) -> Option<LockError> {
        let per_cpu = if sem { self.sems.capacity() } else { self.conds.capacity() };
        let to = self.object_cpu(obj, per_cpu)?;
        let stamp = self.sync_wait_stamp(id);
        let info = WaiterInfo::pack(&self.info(id));
        let post = Post::Wait(RemoteWait { stamp, obj, sem, now_or, info });
        if let Err(e) = self.post_sync(to, post) {
            return Some(e);
        }
        let wait = if sem { Wait::RemoteSem(obj) } else { Wait::RemoteCond(obj) };
        self.block_in(c, id, wait, deadline);
        None
    }

    /// A thread of another CPU waits on one of this kernel's condition variables or
    /// semaphores: a free unit is granted at once; otherwise its proxy joins the object's
    /// queue where a local waiter would (or the wait is refused: no unit and it must not
    /// wait, or no room for a proxy).
    pub(super) fn remote_wait_arrived(&mut self, w: RemoteWait) {
        let waiter = w.info.waiter(self.runtime);
        let k = if w.sem { self.sem_index(SemId(w.obj)) } else { self.cond_index(CondId(w.obj)) };
        let refusal = match (k, w.now_or) {
            // Not an object of this CPU: the caller fills in the CPU numbers.
            (None, _) => LockError::CrossCpu { from: self.cpu_of_remote(waiter), to: usize::MAX },
            (Some(k), _) if w.sem && self.sems[k].count > 0 => {
                self.sems[k].count -= 1;
                self.answer_proxy(waiter, w.stamp, w.obj, true, Ok(()), false);
                return;
            }
            (Some(_), NowOr::WouldBlock) => LockError::WouldBlock,
            (Some(_), NowOr::Timeout) => LockError::Timeout,
            (Some(_), NowOr::Wait) if self.proxies >= self.proxy_room() => {
                LockError::ProxiesFull { cpu: self.first_cpu, capacity: self.proxy_room() }
            }
            (Some(k), NowOr::Wait) => {
                if w.sem {
                    let rank = self.sem_rank(k, &w.info.unpack(self.runtime));
                    self.sems[k].waiters.push_stamped(rank, waiter, w.stamp);
                } else {
                    self.conds[k].waiters.push_stamped(w.info.urgency, waiter, w.stamp);
                }
                self.proxies += 1;
                return;
            }
        };
        self.answer_proxy(waiter, w.stamp, w.obj, w.sem, Err(refusal), false);
    }

    /// A unit of semaphore `obj` (if `sem`) or a notification of condition variable `obj`
    /// went to the proxy of `waiter` (taken out of its queue): answer its CPU. `pass_on`: a
    /// `notify_one`, passed on if the waiter gave up meanwhile.
    pub(super) fn grant_proxy(&mut self, waiter: ThreadId, stamp: u32, obj: u32, sem: bool, pass_on: bool) {
        self.proxies -= 1;
        self.answer_proxy(waiter, stamp, obj, sem, Ok(()), pass_on);
    }

    fn answer_proxy(
        &mut self,
        waiter: ThreadId,
        stamp: u32,
        obj: u32,
        sem: bool,
        result: Result<(), LockError>,
        pass_on: bool,
    ) {
        let to = self.cpu_of_remote(waiter);
        self.post_answer(to, Post::WaitAnswer { waiter, stamp, obj, sem, result, pass_on });
    }

    /// The answer to a wait of this kernel's thread `waiter` on another CPU's object: it
    /// wakes the thread if it still waits on `stamp`. A unit for a wait given up meanwhile
    /// goes back to the semaphore, a `notify_one` is passed on (see the module's docs).
    pub(super) fn on_remote_wait_answer(
        &mut self,
        waiter: ThreadId,
        stamp: u32,
        obj: u32,
        sem: bool,
        result: Result<(), LockError>,
        pass_on: bool,
    ) {
        if let Err(LockError::ProxiesFull { cpu, .. }) = result {
            self.xcpu.proxies_full += 1;
            if let Some(c) = self.cpu_local(self.first_cpu) {
                self.trace(c, TraceKind::CrossCpuRefused, waiter, RemoteOp::Wait as u32, cpu as u64);
            }
        }
        let wait = if sem { Wait::RemoteSem(obj) } else { Wait::RemoteCond(obj) };
        let waiting = self.local(waiter).is_some()
            && self.tcb(waiter).state == State::Blocked(wait)
            && self.sync_wait_stamp(waiter) == stamp;
        if waiting {
            if sem {
                self.answer_sem_waiter(waiter, result.map(|()| REMOTE_UNIT | obj));
            } else {
                self.answer_cond_waiter(waiter, result.map(|()| false));
            }
            return;
        }
        // The wait was given up (timeout, abort, kill) while the grant was on its way.
        match (result, sem) {
            (Ok(()), true) => self.give_back_remote_unit(obj, waiter),
            (Ok(()), false) if pass_on => {
                let to = self.object_cpu(obj, self.conds.capacity()).expect("an object of another CPU");
                self.post_answer(to, Post::CondSignal { cond: CondId(obj), all: false, notifier: waiter });
            }
            _ => {}
        }
    }

    /// Give a unit of `raw`, a semaphore of another CPU, back there for `giver` (a unit its
    /// thread never saw). Posted as an answer: it waits in the outbox if the queue is full,
    /// so it is never lost.
    pub(super) fn give_back_remote_unit(&mut self, raw: u32, giver: ThreadId) {
        if let Some(to) = self.object_cpu(raw, self.sems.capacity()) {
            self.post_answer(to, Post::Vacate { sem: SemId(raw), giver });
        }
    }

    /// This kernel's thread `id` gives up its wait on `obj` of another CPU: the proxy is
    /// withdrawn there (posted as an answer, so it is never lost). Called while `id` still
    /// waits, so its stamp is the wait's.
    pub(super) fn withdraw_remote_wait(&mut self, id: ThreadId, obj: u32, sem: bool) {
        let stamp = self.sync_wait_stamp(id);
        let per_cpu = if sem { self.sems.capacity() } else { self.conds.capacity() };
        if let Some(to) = self.object_cpu(obj, per_cpu) {
            self.post_answer(to, Post::Withdraw { waiter: id, stamp, obj, sem });
        }
    }

    /// `waiter`, a thread of another CPU, gave up its wait on `stamp`: its proxy leaves the
    /// queue if no grant took it out first.
    pub(super) fn remote_withdrawn(&mut self, waiter: ThreadId, stamp: u32, obj: u32, sem: bool) {
        let removed = if sem {
            self.sem_index(SemId(obj)).is_some_and(|k| self.sems[k].waiters.remove_proxy(waiter, stamp))
        } else {
            self.cond_index(CondId(obj)).is_some_and(|k| self.conds[k].waiters.remove_proxy(waiter, stamp))
        };
        if removed {
            self.proxies -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xcpu_sync_waiter_info_packs_and_unpacks_exactly() {
        let info = SchedInfo {
            id: ThreadId::new(1, 7, 3),
            cpu: 2,
            priority: -4,
            urgency: Urgency(-123),
            importance: 9,
            release: Time::from_nanos(1_500),
            deadline: Some(Time::from_nanos(9_000)),
            period: Some(Duration::from_micros(250)),
            relative_deadline: None,
            wcet: Duration::from_nanos(77),
            job_cpu_time: Duration::from_nanos(5),
            job: 11,
        };
        assert_eq!(WaiterInfo::pack(&info).unpack(1), info);
        let none = SchedInfo { deadline: None, period: None, ..info };
        assert_eq!(WaiterInfo::pack(&none).unpack(1), none);
    }

    #[test]
    fn xcpu_sync_a_wait_request_keeps_posts_small() {
        // Every request queue holds `Config::cross_cpu_queue` posts of this size: a wait packs
        // its waiter's attributes (`WaiterInfo`) to stay within it.
        assert!(std::mem::size_of::<Post>() <= 96, "{}", std::mem::size_of::<Post>());
    }
}
