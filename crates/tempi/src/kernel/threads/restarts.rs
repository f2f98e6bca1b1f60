//! What an aborted critical section's restart (RCS) and an unlock whose cost is paid owe a
//! thread before it is resumed, and which requests such a restart answers instead of their
//! being carried out. Called from the resume (`requests.rs`) when a thread has one owed.
//!
//! Must not: change a lock's or a semaphore's state other than through their own modules'
//! functions.

use crate::clock::Clock;
use crate::kernel::thread_side::protocol::{Answer, Interrupt, LockAnswer, Op, Value};
use crate::kernel::Kernel;
use crate::plain::ThreadId;

impl<C: Clock> Kernel<C> {
    /// What must happen before thread `id` is resumed with its reply: an RCS restart (of a
    /// section that has not begun: the lock goes back; of one under way: the restart is
    /// raised, and a semaphore unit the answer granted goes back), an unlock whose simulated
    /// cost has been paid. Returns false when the thread must not be resumed now (a
    /// more urgent one takes over first).
    #[cold]
    pub(in crate::kernel) fn settle_before_resume(&mut self, c: usize, id: ThreadId) -> bool {
        let t = self.tcb(id);
        if let Some(section) = t.restart_section {
            // Only a lock request is answered `Granted`, so this is the section's own lock,
            // just granted.
            if matches!(t.answer, Answer::Value(Value::Lock(LockAnswer::Granted))) && t.held.last() == Some(&section) {
                // RCS aborted a section that has not begun (the owner was still paying for the
                // acquisition): give the lock back and let the owner ask again, behind the
                // aborter.
                t.restart_section = None;
                t.set_answer(LockAnswer::Retry);
                self.give_back(id, section as usize);
                if self.cpus[c].preempt {
                    return false;
                }
            } else if let Some(k) = t.answer.granted_unit()
                && t.held.contains(&section)
            {
                // RCS aborted a section under way just after a `procure` in it was granted,
                // before the owner saw the unit: the restart is raised and the unit
                // goes back to the semaphore (to its first waiter, as a vacate would). The
                // owner unwinds without knowing it had the unit, so nothing it runs could
                // vacate it, and the rerun section procures again: keeping the unit would
                // lose it. This is what a procure made after the abort gets too (see
                // `restart_answers`: no unit is granted).
                t.restart_section = None;
                t.take_answer().discard();
                t.raise(Interrupt::Restart);
                self.forgo_unit(k, id);
                if self.cpus[c].preempt {
                    return false;
                }
            }
        }
        let i = self.local(id).expect("the resumed thread is live");
        let t = self.table.slots[i].as_mut().expect("live slot");
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

    /// Raise the restart of thread `id`'s aborted section, if its reply may carry one. The
    /// answer to an unlock may not (it comes back into a destructor): the restart then
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
            t.raise(Interrupt::Restart);
        }
    }

    /// Whether the restart of thread `id`'s aborted section, waiting to be delivered, answers
    /// `request` instead of it being carried out: a request that would acquire or wait. A lock
    /// or a semaphore unit granted now would stay with a thread that unwinds without ever
    /// seeing it, and a wait would hold the aborter up. The others (releases, queries, the end
    /// of a job) are made as usual.
    #[cold]
    pub(in crate::kernel) fn restart_answers(&mut self, id: ThreadId, request: &Op) -> bool {
        let t = self.tcb(id);
        let in_section = t.restart_section.is_some_and(|s| t.held.contains(&s));
        in_section
            && matches!(
                request,
                Op::Lock { .. }
                    | Op::GlobalLock { .. }
                    | Op::Procure { .. }
                    | Op::Yield
                    | Op::SleepUntil(_)
                    | Op::Join(_)
            )
    }
}
