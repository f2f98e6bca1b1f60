//! The urgency locks lend their owners: recomputing it from scratch when it may change, pushing a
//! change along a chain of blocked owners, and the check (`Config::verify`) that every
//! thread's effective urgency is what its base and held locks give.
//!
//! Also how long a message-level lend lasts (`cpu/sched_meta.rs`): until its holder leaves the
//! handler or semaphore (NICE), or until the wait that caused it ends without being served
//! (the waiter's timeout, abort or kill), whichever comes first. A waiter that leaves so takes
//! back every lend its wait caused, also those made transitively along a chain of blocked
//! holders; each is reported as NICE and the holder's urgency recomputed through the same path
//! as lock inheritance.
//!
//! Must not: change who owns or waits for a lock.

use crate::clock::Clock;
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::Kernel;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::policy::sched::Urgency;

impl<C: Clock> Kernel<C> {
    /// Recompute what the locks held by `id` lend it, and push a change along the chain of
    /// owners it waits for.
    pub(crate) fn recompute_lent(&mut self, id: ThreadId) {
        let mut who = id;
        for _ in 0..=self.table.slots.len() {
            let lent = self.lent_to(who);
            let t = self.tcb(who);
            if t.inherited == lent {
                return;
            }
            let before = t.urgency();
            self.set_inherited(who, lent);
            let after = self.tcb(who).urgency();
            if after == before {
                return;
            }
            self.trace_thread(who, TraceKind::Inherit, after.0 as u64);
            let state = self.tcb(who).state;
            match state {
                State::Blocked(Wait::Lock(l)) if self.ask_lock(l as usize, |p| p.inherits()) => {
                    match self.sync.locks[l as usize].owner {
                        Some(next) => who = next,
                        None => return,
                    }
                }
                _ => return,
            }
        }
    }

    /// `id` leaves its wait at a semaphore or a busy handler without being served (timeout,
    /// abort, kill): the lends its wait caused end now, each reported as NICE to its holder's
    /// scheduler, latest first, and the holder's urgency is recomputed. Costs one branch
    /// unless the wait caused a lend still held.
    pub(crate) fn end_lends_of(&mut self, id: ThreadId) {
        if self.tcb(id).meta.caused == 0 {
            return;
        }
        for i in 0..self.table.slots.len() {
            let Some(holder) = self.table.slots[i].as_ref().map(|t| t.id) else { continue };
            while let Some((lend, at)) = self.tcb(holder).meta.take_lend_of(id) {
                let m = &mut self.tcb(id).meta;
                m.caused = m.caused.saturating_sub(1);
                self.recompute_lent(holder);
                let handler_lends = self.tcb(holder).meta.holds_handler_lends();
                self.tcb(holder).mail.set_handler_lends(handler_lends);
                let c = self.cpu_of(holder);
                let info = self.info(holder);
                self.sched_mut(c).on_nice(&info, at, lend);
            }
        }
        // None is left anywhere now (a count made stale by a holder's end is reset too).
        self.tcb(id).meta.caused = 0;
    }

    /// What the locks `who` holds lend it: the maximum of their policies' holding urgencies
    /// and, for inheriting policies, of their waiters' effective urgencies; above everything
    /// inside a global (MSRP) section.
    pub(in crate::kernel) fn lent_to(&self, who: ThreadId) -> Option<Urgency> {
        let t = self.table.slots[self.local(who).expect("live thread")].as_ref().expect("live slot");
        // Inside a global (MSRP) section, from the request to the release: not preemptible.
        let mut lent: Option<Urgency> = t.global.map(|_| Urgency(i64::MAX));
        // Message-level inheritance (handlers, semaphores: `cpu/sched_meta.rs`).
        lent = lent.max(t.meta.lent());
        for &l in &t.held {
            let lock = &self.sync.locks[l as usize];
            if lock.raises_holder {
                let info = &t.sched;
                let view = self.view(l as usize, who);
                if let Some(u) = self.ask_lock(l as usize, |p| p.holding_urgency(info, &view)) {
                    lent = Some(lent.map_or(u, |x: Urgency| x.max(u)));
                }
            }
            if lock.inherits {
                for &w in &lock.waiters {
                    let i = self.local(w).expect("waiters are live");
                    let u = self.table.slots[i].as_ref().expect("live").urgency();
                    lent = Some(lent.map_or(u, |x: Urgency| x.max(u)));
                }
            }
        }
        lent
    }

    /// Panic unless every thread's effective urgency is what its base urgency and its held
    /// locks give, recomputed from scratch (`Config::verify`).
    pub(crate) fn verify_urgencies(&self) {
        let live: Vec<&crate::kernel::threads::tcb::Tcb> = self.table.slots.iter().flatten().collect();
        let urgency_of = |id: ThreadId, guess: &[(ThreadId, Urgency)]| {
            guess.iter().find(|(t, _)| *t == id).map(|(_, u)| *u).expect("live thread")
        };
        // Fixpoint from the base urgencies: chains are acyclic, so this settles in at most as
        // many rounds as there are threads.
        let mut guess: Vec<(ThreadId, Urgency)> = live.iter().map(|t| (t.id, t.base_urgency)).collect();
        for _ in 0..=live.len() {
            let mut next = guess.clone();
            for (k, t) in live.iter().enumerate() {
                if t.demoted {
                    next[k].1 = Urgency::DEMOTED;
                    continue;
                }
                let mut u = t.base_urgency;
                if t.global.is_some() {
                    u = u.max(Urgency(i64::MAX));
                }
                if let Some(m) = t.meta.lent() {
                    u = u.max(m);
                }
                for &l in &t.held {
                    let lock = &self.sync.locks[l as usize];
                    let mut info = self.info(t.id);
                    info.urgency = urgency_of(t.id, &guess);
                    let view = self.view(l as usize, t.id);
                    if let Some(h) = self.ask_lock(l as usize, |p| p.holding_urgency(&info, &view)) {
                        u = u.max(h);
                    }
                    if self.ask_lock(l as usize, |p| p.inherits()) {
                        for &w in &lock.waiters {
                            u = u.max(urgency_of(w, &guess));
                        }
                    }
                }
                next[k].1 = u;
            }
            if next == guess {
                break;
            }
            guess = next;
        }
        for (l, lock) in self.sync.locks.iter().enumerate() {
            if let Some(o) = lock.owner {
                let holder = live.iter().find(|t| t.id == o).expect("a lock's owner is live");
                assert!(
                    holder.held.contains(&(l as u32)),
                    "lock {l} is owned by {o:?}, which does not list it as held"
                );
            }
        }
        for t in &live {
            for &l in &t.held {
                assert_eq!(self.sync.locks[l as usize].owner, Some(t.id), "thread {:?} lists lock {l} as held", t.id);
            }
        }
        for (t, (_, expected)) in live.iter().zip(&guess) {
            assert_eq!(
                t.urgency(),
                *expected,
                "thread {:?}: effective urgency {:?}, but its base and held locks give {:?}",
                t.id,
                t.urgency(),
                expected
            );
            assert_eq!(t.sched, Self::assemble_info(t), "thread {:?}: the scheduler's view of it is stale", t.id);
        }
    }
}
