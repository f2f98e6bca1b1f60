//! Timed messages (`send_at`, `cancel_timer`, `timed_refusals`): a message taken from the pool
//! when its timer is asked for waits in its pool slot, linked to a kernel timer, until that
//! fires; it is then delivered as a send made at that instant would be. What cannot be
//! delivered then, or whose recipient ends before the instant, goes back to the pool, counted
//! by cause, traced as a refusal on its sender and kept for the sender to read.
//!
//! Owns [`Armed`], a message's link to its timer, and these calls on the kernel's pool (see
//! `messages.rs`, which owns the pool and the queues). Must not: deliver by any path but
//! `deliver`, or wake a thread by any path but `wake_from_wait`.

use crate::clock::Clock;
use crate::kernel::messaging::messages::refusal_code;
use crate::kernel::thread_side::protocol::MsgAnswer;
use crate::kernel::timing::timers::{TimerHandle, TimerKind};
use crate::kernel::Kernel;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{Message, MsgError};
use crate::time::Time;

/// A message held by a timer until it fires.
#[derive(Clone, Copy)]
pub(in crate::kernel) struct Armed {
    to: ThreadId,
    pub(in crate::kernel) timer: TimerHandle,
    /// The slot's `seq` when it was taken: a handle names this arming only.
    stamp: u64,
    /// The local CPU of the sender, to trace a refusal once the sender has ended.
    pub(in crate::kernel) cpu: usize,
}

impl<C: Clock> Kernel<C> {
    /// `id` asks for the message in its mail cell to be sent to `to` at `at` (now, if `at` has
    /// passed): the message is taken from the pool now; the handle goes back in the mail cell.
    pub(crate) fn msg_send_at(&mut self, c: usize, id: ThreadId, to: ThreadId, at: Time) -> MsgAnswer {
        let msg = self.mail_msg(id);
        // A recipient of another real-time CPU is checked there when the timer fires.
        if self.local(to).is_none() && self.remote_cpu(to).is_none() {
            self.drop_payload(msg);
            return Err(MsgError::NoSuchThread(to));
        }
        let Some(s) = self.mail.pool.take(msg, Some(id), false) else {
            self.drop_payload(msg);
            return Err(self.refuse(id, MsgError::PoolFull));
        };
        let Some(timer) = self.timers.push(at.max(self.now), TimerKind::Message(s)) else {
            // Cannot happen with the table sized for the pool; the run ends on the overflow.
            self.mail.pool.give_back(s);
            return Err(self.refuse(id, MsgError::PoolFull));
        };
        let slot = &mut self.mail.pool.slots[s as usize];
        let stamp = slot.seq;
        slot.armed = Some(Armed { to, timer, stamp, cpu: c });
        self.mail.pool.armed += 1;
        self.tcb(id).mail.timer.set((s, stamp));
        Ok(())
    }

    /// `id` cancels the timed message whose handle is in its mail cell: the message goes back
    /// in the mail cell, its slot to the pool. Only the thread that armed it may cancel it.
    pub(crate) fn msg_cancel_timer(&mut self, id: ThreadId) -> MsgAnswer {
        let (s, stamp) = self.tcb(id).mail.timer.get();
        let Some(slot) = self.mail.pool.slots.get_mut(s as usize) else { return Err(MsgError::NoSuchTimer) };
        match slot.armed {
            Some(a) if a.stamp == stamp && slot.msg.from == Some(id) => {
                slot.armed = None;
                self.mail.pool.armed -= 1;
                let msg = slot.msg;
                // The message, payload included, goes back to its sender.
                slot.msg.payload = None;
                self.timers.cancel(a.timer);
                self.mail.pool.give_back(s);
                self.tcb(id).mail.msg.set(msg);
                Ok(())
            }
            _ => Err(MsgError::NoSuchTimer),
        }
    }

    /// The timer of the message in slot `s` fired: it is delivered as a send made now would
    /// be; if it cannot be, it goes back to the pool and the refusal is traced on its sender.
    pub(crate) fn on_msg_timer(&mut self, s: u32) {
        let Some(a) = self.mail.pool.slots[s as usize].armed.take() else { return };
        self.mail.pool.armed -= 1;
        let sender = self.mail.pool.slots[s as usize].msg.from.expect("a timed message has a sender");
        let seq = self.mail.pool.next_seq();
        self.mail.pool.slots[s as usize].seq = seq;
        if self.local(a.to).is_none()
            && let Some(cpu) = self.remote_cpu(a.to)
        {
            // Posted as plain data; the slot is this kernel's and comes back now, without
            // the payload, which travels with the message.
            let msg = self.mail.pool.slots[s as usize].msg;
            self.mail.pool.slots[s as usize].msg.payload = None;
            self.mail.pool.give_back(s);
            if let Err(e) = self.post_msg(cpu, a.to, msg, 0) {
                self.drop_payload(msg);
                self.refuse_timed(sender, a.cpu, a.to, msg, e);
            }
            return;
        }
        let result = if self.local(a.to).is_none() { Err(MsgError::NoSuchThread(a.to)) } else { self.deliver(a.to, s) };
        if let Err(e) = result {
            let msg = self.mail.pool.slots[s as usize].msg;
            self.mail.pool.give_back(s);
            self.refuse_timed(sender, a.cpu, a.to, msg, e);
        }
    }

    /// A timed message `msg` of `sender` (armed on local CPU `cpu`) for `to` was not
    /// delivered: counted by cause, traced on the sender (also once it has ended), and kept
    /// for the sender to read (`Ctx::timed_refusals`).
    pub(in crate::kernel) fn refuse_timed(
        &mut self,
        sender: ThreadId,
        cpu: usize,
        to: ThreadId,
        msg: Message,
        e: MsgError,
    ) {
        self.count_timed_refusal(e);
        if self.local(sender).is_some() {
            self.refuse(sender, e);
            self.note_timed_refusal(sender, to, msg, e);
        } else {
            self.trace(cpu, TraceKind::MessageRefused, sender, 0, refusal_code(e));
        }
    }

    /// Count a timed message refused with `e` in the run's `MessageStats`, by cause.
    pub(in crate::kernel) fn count_timed_refusal(&mut self, e: MsgError) {
        let stats = &mut self.mail.stats;
        match e {
            MsgError::QueueFull => stats.timed_refused_queue_full += 1,
            MsgError::NoSuchThread(_) => stats.timed_refused_recipient_ended += 1,
            MsgError::CpuQueueFull { .. } => stats.timed_refused_cpu_queue_full += 1,
            MsgError::PoolFull => stats.timed_refused_pool_full += 1,
            // `deliver` refuses with nothing else: the rest is the queue policy's refusal.
            _ => stats.timed_refused_by_policy += 1,
        }
    }

    /// Keep, for the live thread `sender` to read, that its timed message `msg` for `to` was
    /// refused with `e` now.
    pub(in crate::kernel) fn note_timed_refusal(&mut self, sender: ThreadId, to: ThreadId, msg: Message, e: MsgError) {
        let at = self.now;
        let record = &mut self.tcb(sender).mbox.refused_timed;
        record.count += 1;
        record.last = Some(crate::plain::TimedRefusal { to, msg: msg.without_payload(), error: e, at });
    }

    /// `id` asks what its timed messages met: the record goes back in its mail cell.
    pub(crate) fn msg_timed_refusals(&mut self, id: ThreadId) -> MsgAnswer {
        let record = self.tcb(id).mbox.refused_timed;
        self.tcb(id).mail.refused_timed.set(record);
        Ok(())
    }

    /// Thread `id` ends: the timed messages addressed to it can never be delivered. They go
    /// back to the pool now (a scan of the pool, made only while some message is timed: a
    /// thread's end is not a hot path) and each
    /// is traced as refused on its sender.
    pub(in crate::kernel) fn drop_timed_to(&mut self, id: ThreadId) {
        if self.mail.pool.armed == 0 {
            return;
        }
        for s in 0..self.mail.pool.slots.len() {
            let slot = &mut self.mail.pool.slots[s];
            let Some(a) = slot.armed.filter(|a| a.to == id) else { continue };
            slot.armed = None;
            self.mail.pool.armed -= 1;
            let sender = slot.msg.from.expect("a timed message has a sender");
            let msg = slot.msg;
            self.timers.cancel(a.timer);
            self.mail.pool.give_back(s as u32);
            self.refuse_timed(sender, a.cpu, id, msg, MsgError::NoSuchThread(id));
        }
    }
}
