//! The lock mechanism: owners, waiters, timeouts, ownership checks, deadlock detection,
//! poisoning, and the urgency a lock lends its owner.
//!
//! Decisions belong to each lock's [`LockPolicy`]: may a requester take a free lock (ceiling
//! tests), what urgency an owner holds while it holds (kernelized monitor, immediate ceiling),
//! and whether waiters lend their urgency (inheritance). The mechanism here applies them:
//!
//! - **Effective urgency.** A thread's lent urgency is the maximum, over the locks it holds, of
//!   the policy's holding urgency and (for inheriting policies) of its waiters' effective
//!   urgencies. It is recomputed from scratch whenever it may change, so releasing one of
//!   several held locks keeps exactly what the others lend; a change is pushed along the chain
//!   of blocked owners.
//! - **Unlock.** The released lock goes straight to its heir: the most urgent waiter that asked
//!   for it (the earliest among equals) and that the policy lets take it now, provided it is
//!   more urgent than the releaser without this lock's lending (or the releaser is ending). The
//!   heir wakes holding the lock and preempts the releaser; the other waiters that want the lock
//!   keep waiting, now on the heir. Without an heir every waiter is woken to ask again when it
//!   runs, except one a ceiling still refuses, which moves to the lock holding that ceiling.
//!   The common contended case (one waiter, a releaser holding nothing else) takes the short
//!   path in `hand_off.rs`, with the same effects.
//! - **Task boundaries.** Aborts and kills never take effect while a thread holds a lock: they
//!   wait until its last lock is released.
//! - **Restartable sections (RCS).** A more urgent requester of a lock held by a preempted
//!   owner inside `Mutex::critical` aborts the owner's section (`maybe_abort_owner`); the owner
//!   is unwound at its next reply that may unwind (see `threads/requests.rs`).
//!
//! Must not: pick or dispatch threads other than through the dispatch functions (the short
//! path in `hand_off.rs` mirrors them step for step).

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::thread_side::protocol::LockAnswer;
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::{Culprit, Kernel};
use crate::policy::lock::{LockCeiling, LockPolicy, LockView};
use crate::policy::sched::Urgency;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use crate::objects::{LockError, LockSpec, LockWord};

use crate::plain::LockId;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::time::Time;

pub(crate) struct LockState {
    pub(in crate::kernel) cpu: usize,
    pub(in crate::kernel) policy: Box<dyn LockPolicy>,
    /// The policy's [`LockPolicy::inherits`] and [`LockPolicy::raises_holder`], asked once.
    pub(in crate::kernel) inherits: bool,
    pub(in crate::kernel) raises_holder: bool,
    /// The policy's [`LockPolicy::uncontended_fast_path`], asked once: taking the free lock
    /// decides nothing (no ceiling test), so `may_acquire` needs no asking.
    pub(in crate::kernel) acquire_decides_nothing: bool,
    /// The lock's ceiling, computed once when the lock is made ([`LockCeiling::of`]); the
    /// scheduler of its CPU says what urgency it stands for at each instant.
    pub(in crate::kernel) ceiling: Option<LockCeiling>,
    /// The ceiling as it stood when the current owner took the lock: what it imposes on
    /// others (the system ceiling) until it is released.
    pub(in crate::kernel) held_ceiling: Option<Urgency>,
    pub(in crate::kernel) owner: Option<ThreadId>,
    /// Shared with the `Mutex`: fast-path ownership, and whether the fast path is open.
    pub(in crate::kernel) word: Arc<LockWord>,
    /// The protocol, the costs and tracing allow the fast path (poisoning closes it).
    pub(in crate::kernel) fast_ok: bool,
    pub(in crate::kernel) waiters: Vec<ThreadId>,
    pub(in crate::kernel) poisoned: bool,
    /// The owner entered through `Mutex::critical`: its section may be restarted.
    pub(in crate::kernel) restartable: bool,
    /// The lock's name, to name its policy should it panic.
    pub(in crate::kernel) name: Box<str>,
}

impl LockState {
    /// `id` owns the free lock, which imposes `ceiling` until released; returns whether it
    /// imposes one (the kernel counts them).
    #[inline]
    pub(in crate::kernel) fn set_owner(&mut self, id: ThreadId, ceiling: Option<Urgency>) -> bool {
        debug_assert!(self.owner.is_none());
        self.held_ceiling = ceiling;
        self.owner = Some(id);
        ceiling.is_some()
    }

    /// The lock has no owner any more; returns whether it imposed a ceiling.
    #[inline]
    pub(in crate::kernel) fn clear_owner(&mut self) -> bool {
        self.owner.take().is_some() && self.held_ceiling.take().is_some()
    }

    /// Tell the `Mutex` that `id` owns the lock through the kernel.
    #[inline]
    pub(in crate::kernel) fn publish_owner(&self, id: ThreadId) {
        self.word.owner.store(id.to_word(), Ordering::Relaxed);
        self.word.managed.store(true, Ordering::Relaxed);
    }
}

impl<C: Clock> Kernel<C> {
    /// The local index of `lock`, if it is a lock of this kernel. (The `Mutex` has already
    /// refused callers of another runtime or CPU.)
    pub(crate) fn lock_local(&self, lock: LockId) -> Option<usize> {
        match lock.0.checked_sub(self.sync.lock_base).map(|i| i as usize) {
            Some(i) if i < self.sync.locks.len() => Some(i),
            _ => None,
        }
    }

    /// Ask lock `l`'s policy something: a panic in it is then named as that policy's.
    #[inline(always)]
    pub(in crate::kernel) fn ask_lock<R>(&self, l: usize, ask: impl FnOnce(&dyn LockPolicy) -> R) -> R {
        let before = self.culprit.replace(Culprit::LockPolicy(l as u32));
        let answer = ask(&*self.sync.locks[l].policy);
        self.culprit.set(before);
        answer
    }

    pub(crate) fn create_lock(&mut self, spec: LockSpec) -> Result<LockId, Error> {
        spec.check()?;
        // The policy is asked its properties below: a panic there is the new lock's policy's.
        let before = self.culprit.replace(Culprit::LockPolicy(self.sync.locks.len() as u32));
        let made = self.create_lock_asking(spec);
        self.culprit.set(before);
        made
    }

    fn create_lock_asking(&mut self, spec: LockSpec) -> Result<LockId, Error> {
        if spec.policy.global() {
            return Err(Error::InvalidConfig(format!(
                "lock `{}`: protocol `{}` makes a global lock, shared by the CPUs: create it before the run (Runtime::create_mutex)",
                spec.name,
                spec.policy.name()
            )));
        }
        if self.sync.locks.len() == self.sync.locks.capacity() {
            return Err(Error::InvalidConfig(format!("more than {} locks on one CPU", self.sync.locks.capacity())));
        }
        if self.cpu_local(spec.cpu).is_none() {
            return Err(Error::NoSuchCpu { cpu: spec.cpu, cpus: self.total_cpus });
        }
        let mut users = Vec::with_capacity(spec.users.len());
        for &u in &spec.users {
            if self.local(u).is_none() {
                return Err(self.no_thread(u));
            }
            let t = self.tcb(u);
            users.push((t.sched.priority, t.rel_deadline));
        }
        let ceiling = spec.ceiling.or_else(|| LockCeiling::of(None, users));
        if spec.policy.needs_ceiling() && ceiling.is_none() {
            return Err(Error::InvalidConfig(format!(
                "lock `{}`: protocol `{}` needs a ceiling: declare one or list the lock's users",
                spec.name,
                spec.policy.name()
            )));
        }
        let id = LockId(self.sync.lock_base + self.sync.locks.len() as u32);
        let cap = self.table.slots.len();
        let costs_free =
            self.costs.lock_acquired.is_zero() && self.costs.lock_not_acquired.is_zero() && self.costs.unlock.is_zero();
        // Fast-path acquisitions are invisible to the trace, so tracing keeps every lock on
        // the kernel path.
        let fast_ok = spec.policy.uncontended_fast_path() && costs_free && !self.tracing;
        spec.word.fast.store(fast_ok, Ordering::Relaxed);
        self.sync.locks.push(LockState {
            inherits: spec.policy.inherits(),
            raises_holder: spec.policy.raises_holder(),
            acquire_decides_nothing: spec.policy.uncontended_fast_path(),
            word: spec.word,
            fast_ok,
            cpu: spec.cpu,
            policy: spec.policy,
            ceiling,
            held_ceiling: None,
            owner: None,
            waiters: crate::sizes::vec_with_capacity(cap, "the waiters of a lock (Config::max_threads)")?,
            poisoned: false,
            restartable: false,
            name: spec.name.into_boxed_str(),
        });
        Ok(id)
    }

    /// The highest ceiling among locks of `cpu` held by threads other than `id`, and the lock
    /// that has it.
    pub(in crate::kernel) fn system_ceiling(&self, id: ThreadId, cpu: usize) -> Option<(Urgency, usize)> {
        self.system_ceiling_except(id, cpu, usize::MAX)
    }

    /// [`Kernel::system_ceiling`] as it will be once lock `except` is released.
    #[inline]
    pub(in crate::kernel) fn system_ceiling_except(
        &self,
        id: ThreadId,
        cpu: usize,
        except: usize,
    ) -> Option<(Urgency, usize)> {
        if self.sync.ceilings_held == 0 {
            return None;
        }
        self.highest_held_ceiling(id, cpu, except)
    }

    /// The search behind [`Kernel::system_ceiling_except`].
    pub(in crate::kernel) fn highest_held_ceiling(
        &self,
        id: ThreadId,
        cpu: usize,
        except: usize,
    ) -> Option<(Urgency, usize)> {
        let mut best: Option<(Urgency, usize)> = None;
        for (i, l) in self.sync.locks.iter().enumerate() {
            if i == except || l.cpu != cpu || l.owner.is_none() || l.owner == Some(id) {
                continue;
            }
            if let Some(c) = l.held_ceiling
                && best.is_none_or(|(b, _)| c > b)
            {
                best = Some((c, i));
            }
        }
        best
    }

    /// `id` becomes the owner of lock `l`, which imposes its ceiling as it stands now.
    pub(in crate::kernel) fn set_owner(&mut self, l: usize, id: ThreadId) {
        let ceiling = self.ceiling_now(l);
        self.set_owner_at(l, id, ceiling);
    }

    /// [`Kernel::set_owner`] with the ceiling as it stands now.
    pub(in crate::kernel) fn set_owner_at(&mut self, l: usize, id: ThreadId, ceiling: Option<Urgency>) {
        self.sync.ceilings_held += u32::from(self.sync.locks[l].set_owner(id, ceiling));
    }

    /// Lock `l` has no owner any more.
    pub(in crate::kernel) fn clear_owner(&mut self, l: usize) {
        self.sync.ceilings_held -= u32::from(self.sync.locks[l].clear_owner());
    }

    /// The ceiling of lock `l` at this instant.
    #[inline(always)]
    pub(in crate::kernel) fn ceiling_now(&self, l: usize) -> Option<Urgency> {
        let lock = &self.sync.locks[l];
        let ceiling = lock.ceiling.as_ref()?;
        let c = self.cpu_local(lock.cpu).expect("lock on this kernel");
        Some(self.cpus[c].scheduler.ceiling_urgency(ceiling, self.now))
    }

    pub(in crate::kernel) fn view(&self, l: usize, asking: ThreadId) -> LockView {
        let lock = &self.sync.locks[l];
        LockView {
            ceiling: if lock.owner.is_some() { lock.held_ceiling } else { self.ceiling_now(l) },
            owner: lock.owner,
            system_ceiling: self.system_ceiling(asking, lock.cpu).map(|(c, _)| c),
        }
    }

    /// Thread `id`, running on CPU `c`, asks for `lock`. Returns the answer to send, or `None`
    /// when the thread now waits (or pays for a refused attempt first).
    pub(crate) fn lock_request(
        &mut self,
        c: usize,
        id: ThreadId,
        lock: LockId,
        deadline: Option<Time>,
        try_only: bool,
        restartable: bool,
    ) -> Option<LockAnswer> {
        let from = self.cpus[c].index;
        let Some(l) = self.lock_local(lock) else {
            return Some(LockAnswer::Refused(LockError::CrossCpu { from, to: usize::MAX }));
        };
        if self.sync.locks[l].cpu != from {
            return Some(LockAnswer::Refused(LockError::CrossCpu { from, to: self.sync.locks[l].cpu }));
        }
        self.sync_owner(l);
        if self.sync.locks[l].owner == Some(id) {
            return Some(LockAnswer::Refused(LockError::AlreadyHeld));
        }
        if self.sync.locks[l].poisoned {
            return Some(LockAnswer::Refused(LockError::Poisoned));
        }
        let view = self.view(l, id);
        if view.owner.is_none() && self.ask_lock(l, |p| p.may_acquire(self.info_ref(id), &view)) {
            self.tcb(id).paid_block_cost = false;
            self.grant(id, l);
            self.recompute_lent(id);
            self.sync.locks[l].restartable = restartable;
            self.charge_overhead(id, self.costs.lock_acquired);
            return Some(LockAnswer::Granted);
        }
        if try_only {
            return Some(LockAnswer::Refused(LockError::WouldBlock));
        }
        if self.in_global(id) {
            // No waiting inside a global (MSRP) section.
            return Some(LockAnswer::Refused(LockError::GlobalHeld));
        }
        if deadline.is_some_and(|d| d <= self.now) {
            return Some(LockAnswer::Refused(LockError::Timeout));
        }
        // Wait on the lock itself if it is taken, else (ceiling blocking) on the lock that
        // holds the system ceiling, whose owner is the one in the way.
        let target = match view.owner {
            Some(_) => l,
            None => match self.system_ceiling(id, self.sync.locks[l].cpu) {
                Some((_, holder)) => holder,
                None => {
                    // The policy refused without a ceiling in the way: nothing will change by
                    // waiting, so say so rather than block forever.
                    return Some(LockAnswer::Refused(LockError::WouldBlock));
                }
            },
        };
        if self.ask_lock(target, |p| p.detects_deadlock()) && self.closes_cycle(id, target) {
            return Some(LockAnswer::Refused(LockError::Deadlock));
        }
        let cost = self.costs.lock_not_acquired;
        if !cost.is_zero() && !self.tcb(id).paid_block_cost {
            // Spend the cost of the failed attempt first, then ask again (the lock may be free
            // by then); the second refusal waits without paying twice.
            self.tcb(id).paid_block_cost = true;
            self.tcb(id).set_answer(LockAnswer::Retry);
            self.charge_overhead(id, cost);
            return None;
        }
        self.tcb(id).paid_block_cost = false;
        if target == l {
            self.maybe_abort_owner(id, l);
        }
        let t = self.tcb(id);
        t.wants = Some(l as u32);
        t.wants_restartable = restartable;
        self.block_in(c, id, Wait::Lock(target as u32), deadline);
        self.sync.locks[target].waiters.push(id);
        if let Some(owner) = self.sync.locks[target].owner {
            self.recompute_lent(owner);
        }
        None
    }

    /// RCS: abort the owner's restartable section if the policy says so and the owner is
    /// preempted (not waiting inside its section, where it cannot unwind now).
    pub(in crate::kernel) fn maybe_abort_owner(&mut self, requester: ThreadId, l: usize) {
        let Some(owner) = self.sync.locks[l].owner else { return };
        if !self.sync.locks[l].restartable {
            return;
        }
        let o = self.tcb(owner);
        if o.state != State::Ready || o.restart_section.is_some() || o.held.last() != Some(&(l as u32)) {
            return;
        }
        let (req, own) = (self.info(requester), self.info(owner));
        if !self.ask_lock(l, |p| p.aborts_owner(&req, &own)) {
            return;
        }
        let o = self.tcb(owner);
        o.restart_section = Some(l as u32);
        o.work_left = 0;
        o.in_work = false;
        self.charge_overhead(owner, self.costs.abort);
    }

    /// Whether `id` waiting on lock `l` would close a cycle of owners waiting for each other.
    pub(in crate::kernel) fn closes_cycle(&self, id: ThreadId, l: usize) -> bool {
        let mut lock = l;
        for _ in 0..=self.table.slots.len() {
            let Some(owner) = self.sync.locks[lock].owner else { return false };
            if owner == id {
                return true;
            }
            let Some(i) = self.local(owner) else { return false };
            match self.table.slots[i].as_ref().map(|t| t.state) {
                Some(State::Blocked(Wait::Lock(next))) => lock = next as usize,
                _ => return false,
            }
        }
        true
    }

    /// Make `id` the owner of free lock `l`. The caller recomputes what `id` is lent.
    pub(in crate::kernel) fn grant(&mut self, id: ThreadId, l: usize) {
        let ceiling = self.ceiling_now(l);
        self.grant_at(id, l, ceiling);
    }

    /// [`Kernel::grant`], with the lock's ceiling as it stands now already known.
    pub(in crate::kernel) fn grant_at(&mut self, id: ThreadId, l: usize, ceiling: Option<Urgency>) {
        self.trace_thread(id, TraceKind::LockAcquired, l as u64);
        self.set_owner_at(l, id, ceiling);
        self.sync.locks[l].publish_owner(id);
        self.tcb(id).held.push(l as u32);
    }

    /// Thread `id` releases `lock`. When `running` is its slot, `id` is the running thread
    /// and nothing else remains to be done for it before the reschedule, so the lock may go to
    /// a more urgent waiter on the short path, which also switches the CPU to it.
    pub(crate) fn unlock(&mut self, id: ThreadId, lock: LockId, poison: bool, running: Option<usize>) {
        let Some(l) = self.lock_local(lock) else { return };
        self.sync_owner(l);
        if self.sync.locks[l].owner != Some(id) {
            // The guard API makes this unreachable; a stray request changes nothing.
            return;
        }
        let handed = match running {
            Some(i) if !poison && self.direct_hand_off => self.hand_off(id, i, l),
            _ => false,
        };
        if !handed {
            self.release(id, l, poison);
        }
    }
    /// `id` releases lock `l` and the lock goes to its heir, if any; what `id` and the heir
    /// are lent is recomputed.
    pub(in crate::kernel) fn release(&mut self, id: ThreadId, l: usize, poison: bool) {
        self.trace_thread(id, TraceKind::LockReleased, l as u64);
        self.clear_owner(l);
        self.sync.locks[l].poisoned |= poison;
        let word = &self.sync.locks[l].word;
        word.owner.store(0, Ordering::Relaxed);
        word.managed.store(false, Ordering::Relaxed);
        if self.sync.locks[l].poisoned {
            word.fast.store(false, Ordering::Relaxed);
        }
        let held = &mut self.tcb(id).held;
        // Locks are usually released in the reverse order of taking them.
        if let Some(k) = held.iter().rposition(|&h| h as usize == l) {
            held.remove(k);
        }
        // Hand the lock straight to the most urgent waiter that asked for it and may take it
        // now, if that waiter is more urgent than the releaser without this lock's lending: it
        // preempts at once and wakes up holding the lock (no second round trip to ask again).
        // A less urgent waiter is only woken to ask again when it runs: owning the lock while
        // the releaser runs on would let it block the releaser (and, under PCP, add a second
        // blocking by a lower-priority job).
        self.recompute_lent(id);
        let releaser = self.tcb(id).urgency();
        let exiting = self.tcb(id).exiting;
        let heir = if self.sync.locks[l].poisoned { None } else { self.heir(l) };
        let heir = heir.filter(|&w| exiting || self.tcb(w).urgency() > releaser);
        if let Some(w) = heir {
            let waiters = &mut self.sync.locks[l].waiters;
            if let Some(k) = waiters.iter().position(|&x| x == w) {
                waiters.remove(k);
            }
            let restartable = self.tcb(w).wants_restartable;
            self.tcb(w).paid_block_cost = false;
            self.grant(w, l);
            self.sync.locks[l].restartable = restartable;
            self.answer_lock_waiter(w, LockAnswer::Granted);
            self.charge_overhead(w, self.costs.lock_acquired);
        }
        // The others: those that want this lock keep waiting, now on the heir (if any); the
        // rest ask again, except a thread held off by a ceiling that is still too high for it,
        // which moves to the lock now holding that ceiling without waking: it stays blocked by
        // the same critical section. The list is swapped with a pre-sized scratch list so the
        // lock path never allocates.
        if self.sync.locks[l].waiters.is_empty() {
            if let Some(w) = heir {
                self.recompute_lent(w);
            }
            return;
        }
        std::mem::swap(&mut self.sync.lock_scratch, &mut self.sync.locks[l].waiters);
        for k in 0..self.sync.lock_scratch.len() {
            let w = self.sync.lock_scratch[k];
            if heir.is_some() && self.tcb(w).wants == Some(l as u32) {
                self.sync.locks[l].waiters.push(w);
                continue;
            }
            if let Some(holder) = self.still_ceiling_blocked(w) {
                self.tcb(w).state = State::Blocked(Wait::Lock(holder as u32));
                self.sync.locks[holder].waiters.push(w);
                if let Some(owner) = self.sync.locks[holder].owner {
                    self.recompute_lent(owner);
                }
                continue;
            }
            self.answer_lock_waiter(w, LockAnswer::Retry);
        }
        self.sync.lock_scratch.clear();
        if let Some(w) = heir {
            self.recompute_lent(w);
        }
    }

    /// The waiter of free lock `l` that should get it: among those that asked for this lock,
    /// the one its policy ranks highest ([`LockPolicy::heir_rank`]; the earliest to wait among
    /// equals), if the policy lets it take the lock now.
    pub(in crate::kernel) fn heir(&mut self, l: usize) -> Option<ThreadId> {
        let mut best: Option<(Urgency, ThreadId)> = None;
        for &w in &self.sync.locks[l].waiters {
            let i = self.local(w).expect("waiters are live");
            let t = self.table.slots[i].as_ref().expect("live");
            if t.wants != Some(l as u32) {
                continue;
            }
            let rank = self.ask_lock(l, |p| p.heir_rank(&t.sched));
            if best.is_none_or(|(r, _)| rank > r) {
                best = Some((rank, w));
            }
        }
        let (_, w) = best?;
        let info = self.info(w);
        let view = self.view(l, w);
        self.ask_lock(l, |p| p.may_acquire(&info, &view)).then_some(w)
    }

    /// Release lock `l` held by `id` outside any request (an RCS owner that had not entered its
    /// section), handing it on as an unlock would.
    pub(crate) fn give_back(&mut self, id: ThreadId, l: usize) {
        self.release(id, l, false);
    }

    /// For a waiter of a just-released lock: the lock whose ceiling would still refuse what it
    /// asked for, if any.
    pub(in crate::kernel) fn still_ceiling_blocked(&mut self, w: ThreadId) -> Option<usize> {
        let wanted = self.tcb(w).wants? as usize;
        // The released lock itself, or another free one, that the ceiling still refuses: the
        // waiter stays blocked by the same outer critical section.
        if self.sync.locks[wanted].owner.is_some() {
            return None;
        }
        let info = self.info(w);
        let view = self.view(wanted, w);
        if self.ask_lock(wanted, |p| p.may_acquire(&info, &view)) {
            return None;
        }
        self.system_ceiling(w, self.sync.locks[wanted].cpu).map(|(_, holder)| holder)
    }

    /// Take `id` out of the waiters of the lock it waits on (timeout, abort, kill).
    pub(crate) fn leave_lock_wait(&mut self, id: ThreadId) {
        let State::Blocked(Wait::Lock(l)) = self.tcb(id).state else { return };
        let l = l as usize;
        self.sync.locks[l].waiters.retain(|&w| w != id);
        if let Some(owner) = self.sync.locks[l].owner {
            self.recompute_lent(owner);
        }
    }
    /// A thread ends: release what it still holds (a guard that was leaked), marked poisoned.
    pub(crate) fn release_all(&mut self, id: ThreadId) {
        self.tcb(id).exiting = true;
        self.release_global(id);
        self.adopt_fast_held(id);
        while let Some(&l) = self.tcb(id).held.last() {
            self.release(id, l as usize, true);
        }
    }

    /// A job of `id` has ended. No guard outlives its job (it borrows the job's `Ctx`), so a
    /// lock still held was leaked (`mem::forget`): release it, marked poisoned, whether it
    /// was taken on the fast path or through the kernel.
    #[inline]
    pub(crate) fn release_leaked(&mut self, id: ThreadId) {
        if self.tcb(id).holds_nothing() {
            return;
        }
        self.release_global(id);
        self.adopt_fast_held(id);
        while let Some(&l) = self.tcb(id).held.last() {
            self.release(id, l as usize, true);
        }
    }

    /// Adopt every lock `id` holds through the fast path, so the kernel can release it.
    pub(in crate::kernel) fn adopt_fast_held(&mut self, id: ThreadId) {
        if self.tcb(id).fast_held.get() == 0 {
            return;
        }
        let word = id.to_word();
        for l in 0..self.sync.locks.len() {
            if self.sync.locks[l].owner.is_none() && self.sync.locks[l].word.owner.load(Ordering::Relaxed) == word {
                self.adopt_fast_owner(l);
            }
        }
    }

    pub(crate) fn clear_poison(&mut self, lock: LockId) {
        if let Some(l) = self.lock_local(lock) {
            self.sync.locks[l].poisoned = false;
            let fast = self.sync.locks[l].fast_ok;
            self.sync.locks[l].word.fast.store(fast, Ordering::Relaxed);
        }
    }

    /// Take over an ownership the fast path established without the kernel: from now on the
    /// kernel knows the owner holds the lock (for inheritance, deadlock detection, aborts),
    /// and the owner unlocks through the kernel.
    #[inline]
    pub(crate) fn sync_owner(&mut self, l: usize) {
        if self.sync.locks[l].owner.is_none() {
            self.adopt_fast_owner(l);
        }
    }

    /// [`Kernel::sync_owner`] of a lock the kernel sees as free.
    pub(in crate::kernel) fn adopt_fast_owner(&mut self, l: usize) {
        let Some(owner) = ThreadId::from_word(self.sync.locks[l].word.owner.load(Ordering::Relaxed)) else {
            return;
        };
        if self.local(owner).is_none() {
            return;
        }
        self.set_owner(l, owner);
        self.sync.locks[l].word.managed.store(true, Ordering::Relaxed);
        let t = self.tcb(owner);
        t.held.push(l as u32);
        t.fast_held.set(t.fast_held.get().saturating_sub(1));
    }
}
