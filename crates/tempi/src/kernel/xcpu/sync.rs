//! Condition variables and semaphores shared by the CPUs of a real-time runtime, whose
//! kernels run on separate dispatcher OS threads. Each object belongs to the kernel of its
//! CPU, which alone touches its count and its ranked queue; other CPUs reach it through that
//! CPU's request queue (`xcpu/mod.rs`).
//!
//! Notifying and giving a unit back: the request is carried out by the owner through the same
//! functions as a local call (`locking/waits.rs`); the caller goes on once it is posted. A unit the
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

use crate::clock::{Clock, ClockMode};
use crate::error::Error;
use crate::kernel::thread_side::protocol::{CondAnswer, SemAnswer};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::xcpu::{NowOr, Post, RemoteOp, RemoteWait};
use crate::kernel::Kernel;
use crate::objects::LockError;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{CondId, SemId};
use crate::policy::sched::{SchedInfo, Urgency};
use crate::time::Time;
use std::time::Duration;

/// The top bit of a remote wait's stamp (so it is never 0, a local waiter's stamp), and of a
/// granted unit's index that names another CPU's semaphore by its raw id.
pub(in crate::kernel) const REMOTE_UNIT: u32 = 1 << 31;

/// A waiter's [`SchedInfo`] packed for a request (times and durations in ns, `u64::MAX` for
/// none), so that a `Post` stays small: the object's CPU unpacks it for its queue policy.
/// Durations beyond `u64::MAX` ns (585 years) read as that.
#[derive(Clone, Copy, Debug)]
pub(crate) struct WaiterInfo {
    /// The waiter's id word (`ThreadId::to_word`).
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

    /// The waiter.
    pub(crate) fn waiter(&self) -> ThreadId {
        ThreadId::from_word(self.id).expect("a packed waiter's word is not zero")
    }

    fn unpack(&self) -> SchedInfo {
        SchedInfo {
            id: self.waiter(),
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

/// What becomes of the answer to a remote wait that was given up while it was on its way.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unclaimed {
    /// A semaphore's unit: back to the semaphore, as a vacate.
    GiveBack,
    /// A `notify_one`: a new `notify_one` of the condition variable.
    PassOn,
    /// A refusal, or a `notify_all`'s notification: nothing is owed to anyone.
    Drop,
}

/// The fate of an answer `result` (to a wait on a semaphore if `sem`; `pass_on`: a
/// `notify_one`) that finds its wait given up (see the module's docs).
fn unclaimed(result: &Result<(), LockError>, sem: bool, pass_on: bool) -> Unclaimed {
    match (result, sem) {
        (Ok(()), true) => Unclaimed::GiveBack,
        (Ok(()), false) if pass_on => Unclaimed::PassOn,
        _ => Unclaimed::Drop,
    }
}

impl<C: Clock> Kernel<C> {
    /// The real-time CPU of another kernel that owns the object with raw id `raw` (condition
    /// variables, semaphores and locks are numbered `CPU × per-CPU capacity + index`), or
    /// `None` (virtual time, or not another CPU's).
    pub(in crate::kernel) fn object_cpu(&self, raw: u32, per_cpu: usize) -> Option<usize> {
        self.cross.crossing.as_ref()?;
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
    pub(in crate::kernel) fn post_cond_signal(
        &mut self,
        to: usize,
        id: ThreadId,
        cond: CondId,
        all: bool,
    ) -> Result<(), LockError> {
        self.post_sync(to, Post::CondSignal { cond, all, notifier: id })
    }

    /// Thread `id` gives a unit back to `sem`, a semaphore of CPU `to`.
    pub(in crate::kernel) fn post_vacate(&mut self, to: usize, id: ThreadId, sem: SemId) -> Result<(), LockError> {
        self.post_sync(to, Post::Vacate { sem, giver: id })
    }

    /// A thread of another CPU notified `cond`, one of this kernel's.
    pub(in crate::kernel) fn remote_cond_signal(&mut self, cond: CondId, all: bool) {
        if let Some(k) = self.cond_index(cond) {
            self.cond_signal_local(k, all);
        }
    }

    /// `giver`, a thread of another CPU, gave a unit back to `sem`, one of this kernel's.
    pub(in crate::kernel) fn remote_vacate(&mut self, sem: SemId, giver: ThreadId) {
        let done = match self.sem_index(sem) {
            Some(k) => self.vacate_local(k).is_ok(),
            None => false,
        };
        if !done {
            let to = giver.index() / self.table.slots.len();
            self.post_answer(to, Post::Refused { target: giver, op: RemoteOp::Vacate, by: self.first_cpu });
        }
    }

    /// How many proxies of other CPUs' threads this kernel can queue at once: as many as it
    /// has thread slots, in a real-time run of several CPUs; none otherwise.
    pub(in crate::kernel) fn proxy_room(&self) -> usize {
        if C::MODE == ClockMode::Real && self.total_cpus > 1 {
            self.table.slots.len()
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
        id.index() / self.table.slots.len()
    }

    /// `id`, running on CPU `c`, waits for a unit of `sem`, a semaphore of another CPU. Returns
    /// an immediate answer (the request could not be posted, or is refused here), or `None`
    /// when `id` now waits for the answer.
    pub(in crate::kernel) fn procure_remote(
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
    pub(in crate::kernel) fn cond_wait_remote(
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
        let per_cpu = if sem { self.sync.sems.capacity() } else { self.sync.conds.capacity() };
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
    pub(in crate::kernel) fn remote_wait_arrived(&mut self, w: RemoteWait) {
        let waiter = w.info.waiter();
        let k = if w.sem { self.sem_index(SemId(w.obj)) } else { self.cond_index(CondId(w.obj)) };
        let refusal = match (k, w.now_or) {
            // Not an object of this CPU: the caller fills in the CPU numbers.
            (None, _) => LockError::CrossCpu { from: self.cpu_of_remote(waiter), to: usize::MAX },
            (Some(k), _) if w.sem && self.sync.sems[k].count > 0 => {
                self.sync.sems[k].count -= 1;
                self.answer_proxy(waiter, w.stamp, w.obj, true, Ok(()), false);
                return;
            }
            (Some(_), NowOr::WouldBlock) => LockError::WouldBlock,
            (Some(_), NowOr::Timeout) => LockError::Timeout,
            (Some(_), NowOr::Wait) if self.cross.proxies >= self.proxy_room() => {
                LockError::ProxiesFull { cpu: self.first_cpu, capacity: self.proxy_room() }
            }
            (Some(k), NowOr::Wait) => {
                if w.sem {
                    let rank = self.sem_rank(k, &w.info.unpack());
                    self.sync.sems[k].waiters.push_stamped(rank, waiter, w.stamp);
                } else {
                    self.sync.conds[k].waiters.push_stamped(w.info.urgency, waiter, w.stamp);
                }
                self.cross.proxies += 1;
                return;
            }
        };
        self.answer_proxy(waiter, w.stamp, w.obj, w.sem, Err(refusal), false);
    }

    /// A unit of semaphore `obj` (if `sem`) or a notification of condition variable `obj`
    /// went to the proxy of `waiter` (taken out of its queue): answer its CPU. `pass_on`: a
    /// `notify_one`, passed on if the waiter gave up meanwhile.
    pub(in crate::kernel) fn grant_proxy(&mut self, waiter: ThreadId, stamp: u32, obj: u32, sem: bool, pass_on: bool) {
        self.cross.proxies -= 1;
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
    pub(in crate::kernel) fn on_remote_wait_answer(
        &mut self,
        waiter: ThreadId,
        stamp: u32,
        obj: u32,
        sem: bool,
        result: Result<(), LockError>,
        pass_on: bool,
    ) {
        if let Err(LockError::ProxiesFull { cpu, .. }) = result {
            self.cross.stats.proxies_full += 1;
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
        match unclaimed(&result, sem, pass_on) {
            Unclaimed::GiveBack => self.give_back_remote_unit(obj, waiter),
            Unclaimed::PassOn => {
                let to = self.object_cpu(obj, self.sync.conds.capacity()).expect("an object of another CPU");
                self.post_answer(to, Post::CondSignal { cond: CondId(obj), all: false, notifier: waiter });
            }
            Unclaimed::Drop => {}
        }
    }

    /// Give a unit of `raw`, a semaphore of another CPU, back there for `giver` (a unit its
    /// thread never saw). Posted as an answer: it waits in the outbox if the queue is full,
    /// so it is never lost.
    pub(in crate::kernel) fn give_back_remote_unit(&mut self, raw: u32, giver: ThreadId) {
        if let Some(to) = self.object_cpu(raw, self.sync.sems.capacity()) {
            self.post_answer(to, Post::Vacate { sem: SemId(raw), giver });
        }
    }

    /// This kernel's thread `id` gives up its wait on `obj` of another CPU: the proxy is
    /// withdrawn there (posted as an answer, so it is never lost). Called while `id` still
    /// waits, so its stamp is the wait's.
    pub(in crate::kernel) fn withdraw_remote_wait(&mut self, id: ThreadId, obj: u32, sem: bool) {
        let stamp = self.sync_wait_stamp(id);
        let per_cpu = if sem { self.sync.sems.capacity() } else { self.sync.conds.capacity() };
        if let Some(to) = self.object_cpu(obj, per_cpu) {
            self.post_answer(to, Post::Withdraw { waiter: id, stamp, obj, sem });
        }
    }

    /// `waiter`, a thread of another CPU, gave up its wait on `stamp`: its proxy leaves the
    /// queue if no grant took it out first.
    pub(in crate::kernel) fn remote_withdrawn(&mut self, waiter: ThreadId, stamp: u32, obj: u32, sem: bool) {
        let removed = if sem {
            self.sem_index(SemId(obj)).is_some_and(|k| self.sync.sems[k].waiters.remove_proxy(waiter, stamp))
        } else {
            self.cond_index(CondId(obj)).is_some_and(|k| self.sync.conds[k].waiters.remove_proxy(waiter, stamp))
        };
        if removed {
            self.cross.proxies -= 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xcpu_sync_waiter_info_packs_and_unpacks_exactly() {
        let info = SchedInfo {
            id: ThreadId::new(7, 3),
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
        assert_eq!(WaiterInfo::pack(&info).unpack(), info);
        let none = SchedInfo { deadline: None, period: None, ..info };
        assert_eq!(WaiterInfo::pack(&none).unpack(), none);
    }

    #[test]
    fn xcpu_sync_a_wait_request_keeps_posts_small() {
        // Every request queue holds `Config::cross_cpu_queue` posts of this size: a wait packs
        // its waiter's attributes (`WaiterInfo`) to stay within it.
        assert!(std::mem::size_of::<Post>() <= 96, "{}", std::mem::size_of::<Post>());
    }
}

/// The loom model of the remote-wait proxies (docs/ARCHITECTURE.md, "The loom models"): two
/// dispatchers, the waiter's CPU 0 and the object's CPU 1, run the turn of `Kernel::run_loop`
/// around the real [`Crossing`](crate::kernel::xcpu::Crossing) and [`Outbox`](crate::kernel::xcpu::Outbox),
/// one queue slot per CPU. Tokens stand for `Post::Wait`, `WaitAnswer`, `Withdraw`, `Vacate`
/// and `CondSignal`; each side keeps what its kernel keeps for the protocol (the waiter's
/// wait token and whether it is blocked; the object's count and its queued proxies) and
/// decides an unclaimed answer with the kernel's own [`unclaimed`].
#[cfg(all(test, loom))]
mod loom_models {
    use super::{unclaimed, Unclaimed, REMOTE_UNIT};
    use crate::kernel::xcpu::{Crossing, Outbox};
    use crate::os::loom_shim::{self, thread, AtomicUsize};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    /// How often each end of the race was reached, over a model's executions: granted in
    /// time, withdrawn before any grant, granted too late (given back or passed on).
    #[derive(Default)]
    struct Reached {
        granted: std::sync::atomic::AtomicUsize,
        withdrawn: std::sync::atomic::AtomicUsize,
        returned: std::sync::atomic::AtomicUsize,
    }

    impl Reached {
        fn note(&self, waiter: &Waiter) {
            let end = match (waiter.granted, waiter.returned) {
                (1, _) => &self.granted,
                (_, 0) => &self.withdrawn,
                _ => &self.returned,
            };
            end.fetch_add(1, Ordering::Relaxed);
        }

        /// Every end of the race was explored: the model is not vacuous.
        fn assert_all(&self) {
            let seen = |a: &std::sync::atomic::AtomicUsize| a.load(Ordering::Relaxed);
            assert!(seen(&self.granted) > 0, "no execution granted the wait in time");
            assert!(seen(&self.withdrawn) > 0, "no execution withdrew the proxy before a grant");
            assert!(seen(&self.returned) > 0, "no execution raced a grant with the withdrawal");
        }
    }

    /// What travels between the model's CPUs.
    #[derive(Debug)]
    enum Token {
        /// `Post::Wait`: the waiter's thread waits on the object, on `stamp`.
        Wait { stamp: u32 },
        /// `Post::WaitAnswer` granting the wait on `stamp` (a unit, or a notification, a
        /// `notify_one` if `pass_on`).
        Granted { stamp: u32, pass_on: bool },
        /// `Post::Withdraw`: the wait on `stamp` was given up.
        Withdraw { stamp: u32 },
        /// `Post::Vacate` (a unit given back) or `Post::CondSignal` (a `notify_one` passed on).
        Again,
    }

    /// One CPU's kernel, as far as the protocol goes.
    trait Side {
        /// Carry out a token drained from this CPU's queue.
        fn carry_out(&mut self, token: Token, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>);
        /// Run this CPU's thread and fire its due timers.
        fn turn(&mut self, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>);
        /// A timer is armed: the dispatcher is not idle.
        fn timer_armed(&self) -> bool;
    }

    /// The waiter's kernel: its thread waits once on the object of CPU 1 and gives up at its
    /// timeout, a turn of the loop after it began waiting.
    struct Waiter {
        /// `Tcb::wait_token`: it changes whenever a wait ends.
        wait_token: u32,
        /// Whether the thread is blocked on the remote wait (`State::Blocked(Wait::Remote…)`).
        blocked: bool,
        started: bool,
        /// The wait is on a semaphore (else a condition variable).
        sem: bool,
        /// What the thread got: a unit or a notification.
        granted: usize,
        timed_out: bool,
        /// Answers that found the wait given up, given back or passed on.
        returned: usize,
    }

    impl Waiter {
        fn stamp(&self) -> u32 {
            REMOTE_UNIT | (self.wait_token & !REMOTE_UNIT)
        }

        /// The wait ends (granted or timed out): the thread goes on, and here ends.
        fn end_wait(&mut self, crossing: &Crossing<Token>) {
            self.blocked = false;
            self.wait_token += 1;
            crossing.exited();
        }
    }

    impl Side for Waiter {
        fn carry_out(&mut self, token: Token, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>) {
            let Token::Granted { stamp, pass_on } = token else { panic!("CPU 0 is sent only answers") };
            // `on_remote_wait_answer`.
            if self.blocked && self.stamp() == stamp {
                self.granted += 1;
                self.end_wait(crossing);
                return;
            }
            match unclaimed(&Ok(()), self.sem, pass_on) {
                Unclaimed::GiveBack | Unclaimed::PassOn => {
                    self.returned += 1;
                    outbox.send(crossing, 1, Token::Again);
                }
                Unclaimed::Drop => {}
            }
        }

        fn turn(&mut self, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>) {
            if !self.started {
                // `post_remote_wait`: posted as a request, then the thread blocks.
                self.started = true;
                crossing.post(1, Token::Wait { stamp: self.stamp() }).expect("CPU 1's queue holds only this wait");
                self.blocked = true;
            } else if self.blocked {
                // The timeout fires: the wait ends here at once and the proxy is withdrawn
                // (`withdraw_remote_wait`, before the token changes: the stamp is the wait's).
                self.timed_out = true;
                outbox.send(crossing, 1, Token::Withdraw { stamp: self.stamp() });
                self.end_wait(crossing);
            }
        }

        fn timer_armed(&self) -> bool {
            self.blocked
        }
    }

    /// The object's kernel: a semaphore (count 0) or a condition variable with a local waiter
    /// ranked below the remote one; its thread vacates a unit, or notifies one waiter, once.
    struct Owner {
        sem: bool,
        count: u64,
        /// The proxies queued (their stamps), served first.
        proxies: Vec<u32>,
        /// `Kernel::proxies`: the proxies this CPU holds.
        held: usize,
        /// The local waiter of the condition variable is still queued.
        local_waits: bool,
        local_woken: usize,
        ran: bool,
    }

    impl Owner {
        /// `vacate_local` or `cond_signal_local(_, false)`: the first proxy, else the local
        /// waiter, else the count (a notification nobody waits for is lost).
        fn serve(&mut self, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>) {
            if let Some(stamp) = self.proxies.pop() {
                // `grant_proxy`.
                self.held -= 1;
                outbox.send(crossing, 0, Token::Granted { stamp, pass_on: !self.sem });
            } else if !self.sem && self.local_waits {
                self.local_waits = false;
                self.local_woken += 1;
                crossing.exited();
            } else if self.sem {
                self.count += 1;
            }
        }
    }

    impl Side for Owner {
        fn carry_out(&mut self, token: Token, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>) {
            match token {
                // `remote_wait_arrived`.
                Token::Wait { stamp } if self.sem && self.count > 0 => {
                    self.count -= 1;
                    outbox.send(crossing, 0, Token::Granted { stamp, pass_on: false });
                }
                Token::Wait { stamp } => {
                    self.proxies.push(stamp);
                    self.held += 1;
                }
                // `remote_withdrawn`.
                Token::Withdraw { stamp } => {
                    let before = self.proxies.len();
                    self.proxies.retain(|&s| s != stamp);
                    if self.proxies.len() != before {
                        self.held -= 1;
                    }
                }
                // `remote_vacate`, `remote_cond_signal(_, false)`.
                Token::Again => self.serve(crossing, outbox),
                Token::Granted { .. } => panic!("CPU 1 waits on nothing"),
            }
        }

        fn turn(&mut self, crossing: &Crossing<Token>, outbox: &mut Outbox<Token>) {
            if !self.ran {
                self.ran = true;
                self.serve(crossing, outbox);
                crossing.exited();
            }
        }

        fn timer_armed(&self) -> bool {
            false
        }
    }

    /// The model's run: two CPUs, one queue slot each.
    struct Run {
        crossing: Crossing<Token>,
        gate: AtomicUsize,
    }

    /// One dispatcher's turns of `Kernel::run_loop` until the run ends, as in `xcpu/mod.rs`'s
    /// model: drain (after the outbox), run the thread and fire due timers, end if the run is
    /// over, go on while an answer is owed or a timer armed, else settle idle and park.
    fn dispatcher<S: Side>(run: &Run, cpu: usize, mut side: S) -> S {
        let crossing = &run.crossing;
        crossing.model_arrive(cpu, &run.gate);
        let bell = crossing.bell(cpu);
        let mut outbox: Outbox<Token> = Outbox::with_capacity(4);
        loop {
            if bell.load(Ordering::Acquire) || !outbox.is_empty() {
                if !outbox.is_empty() {
                    outbox.flush(crossing, |_| {});
                }
                crossing.drain(cpu, |token| side.carry_out(token, crossing, &mut outbox));
            }
            side.turn(crossing, &mut outbox);
            if outbox.is_empty() && crossing.over() {
                break;
            }
            if !outbox.is_empty() || side.timer_armed() {
                thread::yield_now();
                continue;
            }
            if crossing.model_rest(&bell) {
                break;
            }
        }
        crossing.leave_run();
        side
    }

    /// Run the two CPUs: a wait on a semaphore (`sem`) or a condition variable; the run's
    /// threads are the waiter, the owner's thread and (condition variable) its local waiter.
    fn model(sem: bool) -> (Waiter, Owner, u64) {
        let threads = if sem { 2 } else { 3 };
        let run = Arc::new(Run { crossing: Crossing::new(2, 1, threads), gate: AtomicUsize::new(0) });
        let theirs = run.clone();
        let owner = thread::spawn(move || {
            let owner =
                Owner { sem, count: 0, proxies: Vec::new(), held: 0, local_waits: !sem, local_woken: 0, ran: false };
            dispatcher(&theirs, 1, owner)
        });
        let theirs = run.clone();
        let waiter = thread::spawn(move || {
            let waiter = Waiter {
                wait_token: 7,
                blocked: false,
                started: false,
                sem,
                granted: 0,
                timed_out: false,
                returned: 0,
            };
            dispatcher(&theirs, 0, waiter)
        });
        let owner = owner.join().expect("CPU 1's dispatcher");
        let waiter = waiter.join().expect("CPU 0's dispatcher");
        let leftovers = run.crossing.take_leftovers();
        (waiter, owner, leftovers)
    }

    /// A unit vacated on the semaphore's CPU while the remote waiter times out: whatever the
    /// interleaving, the unit is the waiter's exactly when it did not time out, and back in
    /// the count otherwise (a grant racing the withdrawal is given back): never lost, never
    /// twice. The proxy is gone and its slot freed; no request is left in a queue.
    #[test]
    fn loom_xcpu_sync_a_unit_racing_a_withdrawal_is_taken_once_or_given_back() {
        static REACHED: std::sync::LazyLock<Reached> = std::sync::LazyLock::new(Reached::default);
        loom_shim::check(2, || {
            let (waiter, owner, leftovers) = model(true);
            REACHED.note(&waiter);
            assert_eq!(waiter.granted + owner.count as usize, 1, "the unit is neither lost nor doubled");
            assert_eq!(
                waiter.granted,
                usize::from(!waiter.timed_out),
                "the waiter has the unit iff it did not time out"
            );
            assert!(owner.proxies.is_empty(), "no proxy is left queued");
            assert_eq!(owner.held, 0, "the proxy's slot is freed");
            assert!(!waiter.blocked);
            assert_eq!(leftovers, 0, "no request was left in a queue");
        });
        REACHED.assert_all();
    }

    /// A `notify_one` on the condition variable's CPU, whose remote waiter (ranked first)
    /// times out meanwhile, and a local waiter behind it: exactly one of them is woken — the
    /// remote one iff it did not time out; a notification that reached it too late is passed
    /// on to the local one. The proxy's slot is freed.
    #[test]
    fn loom_xcpu_sync_a_notification_racing_a_withdrawal_wakes_exactly_one() {
        static REACHED: std::sync::LazyLock<Reached> = std::sync::LazyLock::new(Reached::default);
        loom_shim::check(2, || {
            let (waiter, owner, leftovers) = model(false);
            REACHED.note(&waiter);
            assert_eq!(waiter.granted + owner.local_woken, 1, "exactly one waiter is woken");
            assert_eq!(
                waiter.granted,
                usize::from(!waiter.timed_out),
                "the remote waiter is woken iff it did not time out"
            );
            assert!(owner.proxies.is_empty(), "no proxy is left queued");
            assert_eq!(owner.held, 0, "the proxy's slot is freed");
            assert_eq!(leftovers, 0, "no request was left in a queue");
        });
        REACHED.assert_all();
    }
}
