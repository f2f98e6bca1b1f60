//! Message passing: the kernel's pool of messages, each thread's new queue and save queues,
//! and the calls on them (send, call, reply, read, save, read_saved).
//!
//! A message lives in a slot of the kernel's pool from its send until it is replied to, read
//! past or dropped with its queue; queues hold slot numbers. The pool and every queue are sized
//! before they are used (the pool in `Kernel::new`, a thread's queues when it is created), so
//! no call here allocates. Message fields cross between a thread and its kernel through the
//! [`Exchange`] both share (as the fast-path lock count does), so requests and answers stay
//! small and `Copy`.
//!
//! Timed messages (`send_at`, `cancel_timer`): the message is taken from the pool when the
//! timer is asked for and waits in its pool slot, linked to a kernel timer, until that fires;
//! it is then delivered as a send made at that instant would be (its arrival order is the
//! expiry). What cannot be delivered then (its queue is full, its policy refuses) goes back to
//! the pool and is traced as a refusal on the sender; so does a timed message whose recipient
//! ends before the instant, when the recipient ends. The timer table
//! has a slot for every message of the pool, so arming never fails for want of one.
//! Their calls are `messages_timed.rs`'s.
//!
//! Readings: a call's message stays with its recipient until replied to; if the recipient puts
//! it away some other way (reads the next message, its invocation ends, it ends) the caller is
//! answered `Unanswered` rather than left waiting. `reply` to an asynchronous message sends the
//! reused message back to its sender asynchronously. A save queue is ordered by `value`, ties
//! in the order saved.
//!
//! Must not: rank messages itself (the recipient's queue policy does), or wake a thread by any
//! path but `wake_from_wait`.

use std::cell::Cell;

use crate::clock::Clock;
use crate::kernel::messaging::messages_timed::Armed;
use crate::kernel::thread_side::protocol::{Answer, MsgAnswer, MsgOp, Value};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::Kernel;
use crate::plain::HandlerId;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{Message, MsgError, Selection};
use crate::policy::queue::QueuePolicy;
use crate::time::Time;

/// What a thread and its kernel exchange through besides a request and its answer: message
/// fields (the message sent, replied or saved, thread to kernel; the message read or the
/// reply, kernel to thread; a selection; a timed message's handle), a handler to invoke on
/// another CPU, the CPU's event bits and the instants a spin is timed by.
#[derive(Default)]
pub(crate) struct Exchange {
    pub(crate) msg: Cell<Message>,
    pub(crate) sel: Cell<Selection>,
    /// A timed message's handle: pool slot and stamp (kernel to thread on `send_at`, thread
    /// to kernel on `cancel_timer`).
    pub(crate) timer: Cell<(u32, u64)>,
    /// The bits of the CPU's `Events` (kernel to thread, at creation): a handler reports
    /// PRIO SAVE / RESTORE and CALL only when asked.
    pub(crate) events: Cell<u8>,
    /// What leaving a handler takes besides releasing it (kernel to thread): the bits
    /// [`LEAVE_NICE`] and [`LEAVE_RECHECK`]; zero, the usual case, costs the idle call one test.
    pub(crate) leave: Cell<u8>,
    /// The busy handler this thread waits at was left to it by a runtime unwind of its holder
    /// (kernel to thread): its call, taken out of the queue, is to be made again.
    pub(crate) handed_over: Cell<bool>,
    /// The handler of another real-time CPU a request is for (thread to kernel, see
    /// `xcpu/handlers.rs`).
    pub(crate) handler: std::cell::RefCell<Option<std::sync::Arc<dyn crate::kernel::RemoteHandler>>>,
    /// Real time: the start and end of the thread's spin for the global lock it holds (thread
    /// to kernel, read at the release; see `locking/global_locks.rs`).
    pub(crate) spun: Cell<Option<(Time, Time)>>,
    /// What the thread's timed messages met (kernel to thread, on `timed_refusals`).
    pub(crate) refused_timed: Cell<crate::plain::TimedRefusals>,
}

/// [`Exchange::leave`]: the thread holds urgency lent for a handler it runs, so leaving the
/// handler must be reported (NICE).
pub(crate) const LEAVE_NICE: u8 = 1;
/// [`Exchange::leave`]: the thread is OS-backed, so it can be stopped in place between a
/// handler's last look at its queue and its release, while a thread of its CPU queues a
/// message there; after the release it looks at the queue again and drains what came.
/// (A coroutine thread is only ever switched at a runtime call, so nothing can come in that
/// window.)
pub(crate) const LEAVE_RECHECK: u8 = 2;

impl Exchange {
    /// Record whether the thread holds urgency lent for a handler it runs ([`LEAVE_NICE`]).
    pub(crate) fn set_handler_lends(&self, held: bool) {
        let others = self.leave.get() & !LEAVE_NICE;
        self.leave.set(others | if held { LEAVE_NICE } else { 0 });
    }
}

/// One message of the pool, with what orders it in the queue it is in.
#[derive(Clone, Copy, Default)]
pub(crate) struct MsgSlot {
    pub(in crate::kernel) msg: Message,
    /// Rank given by the recipient's queue policy (higher first).
    rank: i64,
    /// Arrival or save order, for ties.
    pub(in crate::kernel) seq: u64,
    /// Set while the message waits for its timer.
    pub(in crate::kernel) armed: Option<Armed>,
    /// For a message of a thread of another real-time CPU: the stamp its sender waits on
    /// (`Wait::Reply(stamp)` there), to answer it through that CPU's queue; 0 otherwise.
    pub(in crate::kernel) remote: u32,
    /// Cancelled by the scheduler (NEXT): read as `MsgError::Cancelled`.
    cancelled: bool,
}

/// The kernel's pool of messages: slots and a free list, both sized once.
pub(crate) struct MsgPool {
    pub(in crate::kernel) slots: Vec<MsgSlot>,
    free: Vec<u32>,
    seq: u64,
    /// Messages waiting for their timer (a thread's end scans the pool only if some are).
    pub(in crate::kernel) armed: u32,
    /// The payload pools of the runtime, to give back the payloads of messages dropped.
    pub(in crate::kernel) payloads: crate::kernel::PayloadStores,
}

impl MsgPool {
    /// A pool of `n` messages (`Config::check` keeps `n` within `Config::MAX_MESSAGES`), or
    /// an error if the allocator refuses it.
    pub(crate) fn new(n: usize, payloads: crate::kernel::PayloadStores) -> Result<MsgPool, crate::Error> {
        let what = "the message pool (Config::message_pool)";
        let slots = crate::sizes::vec_filled(n, MsgSlot::default(), what)?;
        let mut free = crate::sizes::vec_with_capacity(n, what)?;
        free.extend((0..n as u32).rev());
        Ok(MsgPool { slots, free, seq: 0, armed: 0, payloads })
    }
    /// A slot holding `msg`, sent by `from` (`expects_reply`: a call), or `None` when the
    /// pool is empty. The sender's fields are written into the slot after the copy: written
    /// into `msg` first, the copy would read them back at once, wider than they were written.
    pub(in crate::kernel) fn take(&mut self, msg: Message, from: Option<ThreadId>, expects_reply: bool) -> Option<u32> {
        let s = self.free.pop()?;
        self.seq += 1;
        let slot = &mut self.slots[s as usize];
        *slot = MsgSlot { msg, rank: 0, seq: self.seq, armed: None, remote: 0, cancelled: false };
        slot.msg.from = from;
        slot.msg.expects_reply = expects_reply;
        Some(s)
    }
    /// Slot `s` is free again; the payload of the message in it, if any, goes back to its
    /// pool (a payload taken already is left alone).
    #[inline]
    pub(in crate::kernel) fn give_back(&mut self, s: u32) {
        if self.slots[s as usize].msg.payload.is_some() {
            self.release_payload_of(s);
        }
        self.free.push(s);
    }
    #[cold]
    fn release_payload_of(&mut self, s: u32) {
        if let Some(p) = self.slots[s as usize].msg.payload.take() {
            self.payloads.release(p);
        }
    }
    pub(in crate::kernel) fn next_seq(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }
    /// The message in slot `s` (for the scheduler's view, `cpu/sched_meta.rs`).
    pub(in crate::kernel) fn msg(&self, s: u32) -> Message {
        self.slots[s as usize].msg
    }
    /// Mark the message in slot `s` cancelled (NEXT).
    pub(in crate::kernel) fn cancel(&mut self, s: u32) {
        self.slots[s as usize].cancelled = true;
    }
}

/// A thread's queues: the new queue (ranked by its policy), its save queues (ordered by
/// value) and the message it is working on.
pub(crate) struct Mailbox {
    /// Slots, sorted so the next to read is first.
    new: Vec<u32>,
    saves: Vec<Vec<u32>>,
    cap: usize,
    pub(in crate::kernel) policy: Option<Box<dyn QueuePolicy>>,
    /// The message last read, until it is replied to, saved or read past.
    current: Option<u32>,
    /// The thread's timed messages refused at their instant, as `Ctx::timed_refusals` reads.
    pub(in crate::kernel) refused_timed: crate::plain::TimedRefusals,
}

impl Mailbox {
    /// The slots of the new queue, in reading order (for the scheduler's view).
    pub(in crate::kernel) fn queued(&self) -> &[u32] {
        &self.new
    }

    /// Queues of `cap` messages (`ThreadSpec::validate` bounds both sizes), or an error if
    /// the allocator refuses them.
    pub(crate) fn new(
        cap: usize,
        save_queues: usize,
        policy: Option<Box<dyn QueuePolicy>>,
    ) -> Result<Mailbox, crate::Error> {
        use crate::sizes::vec_with_capacity;
        let mut saves = vec_with_capacity(save_queues, "the save queues (ThreadSpec::save_queues)")?;
        for _ in 0..save_queues {
            saves.push(vec_with_capacity(cap, "a save queue (ThreadSpec::mailbox)")?);
        }
        Ok(Mailbox {
            new: vec_with_capacity(cap, "the new queue (ThreadSpec::mailbox)")?,
            saves,
            cap,
            policy,
            current: None,
            refused_timed: crate::plain::TimedRefusals::default(),
        })
    }
}

/// The `arg` of a `MessageRefused` record for a message a busy handler's full queue refused.
pub(in crate::kernel) const HANDLER_QUEUE_FULL: u64 = 5;
/// The `arg` of a `MessageRefused` record for a timed message still waiting when the run
/// ended.
pub(in crate::kernel) const PENDING_AT_END: u64 = 6;
/// The `arg` of a `MessageRefused` record for a message a poisoned handler did not serve.
pub(in crate::kernel) const HANDLER_PANICKED: u64 = 7;

/// The `arg` of a `MessageRefused` record.
pub(in crate::kernel) fn refusal_code(e: MsgError) -> u64 {
    match e {
        MsgError::PoolFull => 0,
        MsgError::QueueFull => 1,
        MsgError::NoSuchThread(_) => 3,
        MsgError::CpuQueueFull { .. } => 4,
        _ => 2,
    }
}

impl<C: Clock> Kernel<C> {
    /// Handle the message call `op` of thread `id`, running on CPU `c`.
    pub(crate) fn handle_msg(&mut self, c: usize, id: ThreadId, op: MsgOp) {
        let answer = match op {
            MsgOp::Send { to } => self.msg_send(c, id, to, false),
            MsgOp::Call { to } => self.msg_send(c, id, to, true),
            MsgOp::Reply => self.msg_reply(c, id),
            MsgOp::ReplyRead => self.msg_reply_read(c, id),
            MsgOp::Read { wait, deadline } => self.msg_read(c, id, wait, deadline),
            MsgOp::Save(q) => Some(self.msg_save(id, q as usize)),
            MsgOp::ReadSaved(q) => Some(self.msg_read_saved(id, q as usize)),
            MsgOp::AwaitHandler { token } => {
                let at = self.mail_msg(id);
                self.block_in(c, id, Wait::Handler(token), None);
                if let Some(holder) = at.from {
                    self.meta_call_blocked(c, id, HandlerId::from_raw(at.id as u64), holder, at.constraint);
                }
                None
            }
            MsgOp::LeftHandler(handler) => {
                self.meta_left_handler(id, handler);
                Some(Ok(()))
            }
            MsgOp::PrioSave(constraint) => {
                let inherit = self.meta_prio_save(id, constraint);
                self.tcb(id).mail.timer.set((0, inherit.raw()));
                Some(Ok(()))
            }
            MsgOp::PrioRestore(inherit) => {
                self.meta_prio_restore(id, inherit);
                Some(Ok(()))
            }
            MsgOp::SendAt { to, at } => Some(self.msg_send_at(c, id, to, at)),
            MsgOp::CancelTimer => Some(self.msg_cancel_timer(id)),
            MsgOp::TimedRefusals => Some(self.msg_timed_refusals(id)),
            MsgOp::DropPayload => {
                let m = self.mail_msg(id);
                self.drop_payload(m);
                Some(Ok(()))
            }
            MsgOp::AnswerCaller { caller, token, answered } => {
                self.answer_handler_caller(id, caller, token, answered);
                Some(Ok(()))
            }
            MsgOp::RemoteHandler { wait } => self.handler_send_remote(c, id, wait),
            MsgOp::AnswerRemote { caller, stamp, answered } => {
                self.answer_remote_caller(id, caller, stamp, answered);
                Some(Ok(()))
            }
            MsgOp::HandlerRefused => {
                let m = self.mail_msg(id);
                self.drop_payload(m);
                self.mail.stats.handler_queue_full += 1;
                self.trace_thread(id, TraceKind::MessageRefused, HANDLER_QUEUE_FULL);
                Some(Ok(()))
            }
            MsgOp::HandlerUnserved(caller) => {
                let m = self.mail_msg(id);
                self.handler_unserved(m, caller);
                Some(Ok(()))
            }
            MsgOp::SettleHandlers => {
                self.settle_handlers(id);
                Some(Ok(()))
            }
        };
        if let Some(a) = answer {
            self.tcb(id).set_answer(Answer::Value(Value::Msg(a)));
        }
    }

    pub(in crate::kernel) fn mail_msg(&mut self, id: ThreadId) -> Message {
        self.tcb(id).mail.msg.get()
    }

    /// Send the message in `id`'s mail cell to `to` (`call`: and wait for the reply). Returns
    /// the answer, or `None` when the caller now waits.
    pub(crate) fn msg_send(&mut self, c: usize, id: ThreadId, to: ThreadId, call: bool) -> Option<MsgAnswer> {
        let msg = self.mail_msg(id);
        if call && to == id {
            self.drop_payload(msg);
            return Some(Err(MsgError::CallSelf));
        }
        if self.local(to).is_none() {
            return match self.remote_cpu(to) {
                Some(cpu) => self.msg_send_remote(c, id, to, cpu, msg, call),
                None => {
                    self.drop_payload(msg);
                    Some(Err(MsgError::NoSuchThread(to)))
                }
            };
        }
        let Some(s) = self.mail.pool.take(msg, Some(id), call) else {
            self.drop_payload(msg);
            return Some(Err(self.refuse(id, MsgError::PoolFull)));
        };
        if let Err(e) = self.deliver(to, s) {
            self.mail.pool.give_back(s);
            return Some(Err(self.refuse(id, e)));
        }
        if call {
            if !self.call_hand_off(c, id, s) {
                self.block_in(c, id, Wait::Reply(s), None);
            }
            return None;
        }
        Some(Ok(()))
    }

    /// The payload `m` carries, if any, goes back to its pool: `m` is not delivered.
    #[inline]
    pub(in crate::kernel) fn drop_payload(&mut self, m: Message) {
        if let Some(p) = m.payload {
            self.release_payload(p);
        }
    }
    #[cold]
    fn release_payload(&mut self, p: crate::plain::Payload) {
        self.mail.pool.payloads.release(p);
    }

    /// A message call of `id` failed with `e`: traced, and returned.
    pub(in crate::kernel) fn refuse(&mut self, id: ThreadId, e: MsgError) -> MsgError {
        self.trace_thread(id, TraceKind::MessageRefused, refusal_code(e));
        e
    }

    /// Put slot `s` into `to`'s new queue, or hand it to `to` at once if it waits in `read`.
    #[inline(always)]
    pub(in crate::kernel) fn deliver(&mut self, to: ThreadId, s: u32) -> Result<(), MsgError> {
        let i = self.local(to).expect("recipient is live");
        let t = self.table.slots[i].as_mut().expect("live slot");
        // Read by field: the sender's fields were just written into the slot, and a copy of
        // the whole message would read them back wider than they were written.
        let msg = &self.mail.pool.slots[s as usize].msg;
        let constraint = msg.constraint;
        let rank = match &t.mbox.policy {
            Some(p) => {
                // A panic in the policy is then named as the policy's.
                let before = self.culprit.replace(crate::kernel::Culprit::MessageQueue(to));
                let rank = p.rank_message(msg, &t.sched);
                self.culprit.set(before);
                rank.ok_or(MsgError::Refused)?
            }
            None => 0,
        };
        let waiting = t.state == State::Blocked(Wait::Msg);
        if waiting && t.mbox.policy.is_none() {
            // First come, first served: the message it waits for is this one.
            debug_assert!(t.mbox.new.is_empty());
            t.mbox.current = Some(s);
            t.mail.msg.set(*msg);
            t.set_answer(Answer::Value(Value::Msg(Ok(()))));
            self.wake_from_wait(to);
            self.meta_message_ready(to, constraint);
            return Ok(());
        }
        if t.mbox.new.len() >= t.mbox.cap {
            return Err(MsgError::QueueFull);
        }
        self.mail.pool.slots[s as usize].rank = rank;
        let slots = &self.mail.pool.slots;
        let key = |x: u32| {
            let m = &slots[x as usize];
            (std::cmp::Reverse(m.rank), m.seq)
        };
        // The new slot's key from what was just written, not read back from the slot.
        let k = (std::cmp::Reverse(rank), slots[s as usize].seq);
        if t.mbox.new.is_empty() {
            // The common case, without the search and the shift.
            t.mbox.new.push(s);
        } else {
            let at = t.mbox.new.partition_point(|&x| key(x) < k);
            t.mbox.new.insert(at, s);
        }
        if waiting {
            // A ranked queue: the reader takes its head when it runs (a more urgent message
            // may come first), so its read is answered `Empty`, which `Ctx::read` asks again.
            t.set_answer(Answer::Value(Value::Msg(Err(MsgError::Empty))));
            self.wake_from_wait(to);
        }
        self.meta_message_ready(to, constraint);
        Ok(())
    }

    /// Put `id`'s current message away: a call not answered is answered `Unanswered`.
    fn retire_current(&mut self, id: ThreadId) {
        if let Some(s) = self.tcb(id).mbox.current.take() {
            self.drop_msg(s);
        }
    }

    /// Slot `s` leaves every queue: its caller, if one still waits for it, is answered
    /// `Unanswered` (through its CPU's queue, for a caller of another real-time CPU); the
    /// slot goes back to the pool.
    fn drop_msg(&mut self, s: u32) {
        let msg = self.mail.pool.slots[s as usize].msg;
        if let Some(caller) = msg.from.filter(|_| msg.expects_reply) {
            let stamp = self.mail.pool.slots[s as usize].remote;
            if stamp != 0 {
                self.answer_remote_sender(caller, stamp, Err(MsgError::Unanswered));
            } else if self.local(caller).is_some() && self.tcb(caller).state == State::Blocked(Wait::Reply(s)) {
                self.tcb(caller).set_answer(Answer::Value(Value::Msg(Err(MsgError::Unanswered))));
                self.wake_from_wait(caller);
            }
        }
        self.mail.pool.give_back(s);
    }

    /// `id`, running on CPU `c`, replies to its current message with the fields in its mail
    /// cell. Returns the answer, or `None` when it now waits (a reply to an asynchronous
    /// message of another real-time CPU's thread is sent as [`Ctx::send`](crate::kernel::Ctx::send)
    /// is, and waits for its delivery there).
    #[inline(always)]
    pub(crate) fn msg_reply(&mut self, c: usize, id: ThreadId) -> Option<MsgAnswer> {
        let i = self.local(id).expect("the replier is live");
        let t = self.table.slots[i].as_ref().expect("live slot");
        let Some(s) = t.mbox.current else { return Some(Err(MsgError::NoCurrent)) };
        // The reply's own sender fields are filled in where it goes (see `MsgPool::take`).
        let reply = t.mail.msg.get();
        let as_reply = |reply: Message| Message { from: Some(id), expects_reply: false, ..reply };
        let original = self.mail.pool.slots[s as usize].msg;
        let Some(sender) = original.from else {
            self.drop_payload(reply);
            return Some(Err(MsgError::NoCurrent));
        };
        let stamp = self.mail.pool.slots[s as usize].remote;
        self.table.slots[i].as_mut().expect("live slot").mbox.current = None;
        if reply.payload.is_some() && reply.payload == original.payload {
            // The reply carries the payload on: the slot's message gives it up.
            self.mail.pool.slots[s as usize].msg.payload = None;
        }
        if original.expects_reply && stamp != 0 {
            // The caller waits on another real-time CPU: the reply travels back through that
            // CPU's queue, as plain data; the slot is this kernel's and comes back now.
            self.mail.pool.give_back(s);
            self.answer_remote_sender(sender, stamp, Ok(as_reply(reply)));
            return Some(Ok(()));
        }
        if original.expects_reply {
            let waiting = self
                .local(sender)
                .filter(|&k| self.table.slots[k].as_ref().is_some_and(|t| t.state == State::Blocked(Wait::Reply(s))));
            if let Some(k) = waiting {
                let t = self.table.slots[k].as_mut().expect("live slot");
                t.mail.msg.set(as_reply(reply));
                t.set_answer(Answer::Value(Value::Msg(Ok(()))));
                if !self.reply_hand_off(c, i, k) {
                    self.wake_from_wait(sender);
                }
            } else {
                // A caller that no longer waits (aborted, killed) gets nothing.
                self.drop_payload(reply);
            }
            self.mail.pool.give_back(s);
            return Some(Ok(()));
        }
        // A reply to an asynchronous message goes back as an asynchronous message, in the
        // same slot (or, to a thread of another real-time CPU, as a send to it).
        if self.local(sender).is_none() {
            self.mail.pool.give_back(s);
            return match self.remote_cpu(sender) {
                Some(cpu) => self.msg_send_remote(c, id, sender, cpu, reply, false),
                None => Some(Err(MsgError::NoSuchThread(sender))),
            };
        }
        let old = std::mem::replace(&mut self.mail.pool.slots[s as usize].msg, as_reply(reply));
        self.drop_payload(old);
        self.mail.pool.slots[s as usize].seq = self.mail.pool.next_seq();
        if let Err(e) = self.deliver(sender, s) {
            self.mail.pool.give_back(s);
            return Some(Err(self.refuse(id, e)));
        }
        Some(Ok(()))
    }

    /// `id` reads the next message of its new queue (waiting until `deadline`, if `wait`).
    /// Returns the answer, or `None` when it now waits.
    #[inline(always)]
    pub(crate) fn msg_read(&mut self, c: usize, id: ThreadId, wait: bool, deadline: Option<Time>) -> Option<MsgAnswer> {
        let i = self.local(id).expect("the reader is live");
        if let Some(s) = self.table.slots[i].as_mut().expect("live slot").mbox.current.take() {
            self.drop_msg(s);
        }
        let t = self.table.slots[i].as_mut().expect("live slot");
        if !t.mbox.new.is_empty() {
            // The common case, a single message, without the shift.
            let s = if t.mbox.new.len() == 1 {
                let s = t.mbox.new[0];
                t.mbox.new.clear();
                s
            } else {
                t.mbox.new.remove(0)
            };
            t.mbox.current = Some(s);
            let msg = self.mail.pool.slots[s as usize].msg;
            t.mail.msg.set(msg);
            if self.mail.pool.slots[s as usize].cancelled {
                return Some(Err(MsgError::Cancelled(msg)));
            }
            return Some(Ok(()));
        }
        if !wait {
            return Some(Err(MsgError::Empty));
        }
        if deadline.is_some_and(|d| d <= self.now) {
            return Some(Err(MsgError::Timeout));
        }
        self.block_in(c, id, Wait::Msg, deadline);
        None
    }

    /// `id` saves its current message in save queue `q`, with the fields in its mail cell
    /// (the sender is kept).
    pub(crate) fn msg_save(&mut self, id: ThreadId, q: usize) -> MsgAnswer {
        let fields = self.mail_msg(id);
        let t = self.tcb(id);
        let Some(s) = t.mbox.current else { return Err(MsgError::NoCurrent) };
        let Some(queue) = t.mbox.saves.get(q) else { return Err(MsgError::NoSuchSaveQueue(q)) };
        if queue.len() >= t.mbox.cap {
            return Err(MsgError::QueueFull);
        }
        t.mbox.current = None;
        let seq = self.mail.pool.next_seq();
        let slot = &mut self.mail.pool.slots[s as usize];
        slot.msg.id = fields.id;
        slot.msg.value = fields.value;
        slot.msg.constraint = fields.constraint;
        slot.seq = seq;
        let slots = &self.mail.pool.slots;
        let key = |x: u32| (slots[x as usize].msg.value, slots[x as usize].seq);
        let k = key(s);
        let i = self.local(id).expect("live thread");
        let queue = &mut self.table.slots[i].as_mut().expect("live slot").mbox.saves[q];
        let at = queue.partition_point(|&x| key(x) < k);
        queue.insert(at, s);
        Ok(())
    }

    /// `id` takes the first message of save queue `q` matching the selection in its mail
    /// cell; it becomes the current message.
    pub(crate) fn msg_read_saved(&mut self, id: ThreadId, q: usize) -> MsgAnswer {
        let sel = self.tcb(id).mail.sel.get();
        let i = self.local(id).expect("live thread");
        let t = self.table.slots[i].as_mut().expect("live slot");
        let Some(queue) = t.mbox.saves.get(q) else { return Err(MsgError::NoSuchSaveQueue(q)) };
        let slots = &self.mail.pool.slots;
        let Some(at) = queue.iter().position(|&x| sel.matches(&slots[x as usize].msg)) else {
            return Err(MsgError::NoMatch);
        };
        let s = self.tcb(id).mbox.saves[q].remove(at);
        self.retire_current(id);
        let msg = self.mail.pool.slots[s as usize].msg;
        let t = self.tcb(id);
        t.mbox.current = Some(s);
        t.mail.msg.set(msg);
        Ok(())
    }

    /// A handler running on `id`'s stack answers `caller`, waiting for its queued call
    /// `token`: with the message in `id`'s mail cell, or `Unanswered`. A caller that no longer
    /// waits for it (aborted, killed) gets nothing.
    fn answer_handler_caller(&mut self, id: ThreadId, caller: ThreadId, token: u32, answered: bool) {
        if self.local(caller).is_none() || self.tcb(caller).state != State::Blocked(Wait::Handler(token)) {
            if answered {
                let m = self.mail_msg(id);
                self.drop_payload(m);
            }
            return;
        }
        let answer = if answered {
            let mut reply = self.mail_msg(id);
            reply.expects_reply = false;
            self.tcb(caller).mail.msg.set(reply);
            Ok(())
        } else {
            Err(MsgError::Unanswered)
        };
        self.tcb(caller).set_answer(Answer::Value(Value::Msg(answer)));
        self.wake_from_wait(caller);
    }

    /// The run ends: the messages still in the queues and save queues of live threads are
    /// counted (`MessageStats::queued_at_end`; they go back to the pool when their threads
    /// are unwound) and give their payloads back now; every timed message still waiting for
    /// its instant is counted (`MessageStats::timed_pending_at_end`), traced as refused on its
    /// sender with `arg` [`PENDING_AT_END`], and its slot goes back to the pool. A scan of the
    /// pool, once, and only if some message is timed.
    pub(in crate::kernel) fn drop_timed_at_end(&mut self) {
        for i in 0..self.table.slots.len() {
            let Some(t) = self.table.slots[i].as_ref() else { continue };
            let queued = t.mbox.new.len() + t.mbox.saves.iter().map(Vec::len).sum::<usize>();
            self.mail.stats.queued_at_end += queued as u64;
            if crate::kernel::PayloadStores::no_pool_exists() {
                continue;
            }
            // The message being served too: its payload goes back with the rest.
            let held = t.mbox.current.iter().chain(t.mbox.new.iter()).chain(t.mbox.saves.iter().flatten());
            for &m in held {
                if let Some(p) = self.mail.pool.slots[m as usize].msg.payload.take() {
                    self.mail.pool.payloads.release(p);
                }
            }
        }
        if self.mail.pool.armed == 0 {
            return;
        }
        for s in 0..self.mail.pool.slots.len() {
            let slot = &mut self.mail.pool.slots[s];
            let Some(a) = slot.armed.take() else { continue };
            self.mail.pool.armed -= 1;
            let sender = slot.msg.from.expect("a timed message has a sender");
            self.timers.cancel(a.timer);
            self.mail.pool.give_back(s as u32);
            self.mail.stats.timed_pending_at_end += 1;
            if self.local(sender).is_some() {
                self.trace_thread(sender, TraceKind::MessageRefused, PENDING_AT_END);
            } else {
                self.trace(a.cpu, TraceKind::MessageRefused, sender, 0, PENDING_AT_END);
            }
        }
    }

    /// Thread `id` ends: every message it holds or that is timed for it goes back to the
    /// pool and every caller waiting on one is answered `Unanswered`; those it never served
    /// are counted (`MessageStats::unserved_at_receiver_end`). Not called at the run's end,
    /// whose teardown leaves the kernel's state alone (`drop_timed_at_end` counts those).
    pub(crate) fn close_mailbox(&mut self, id: ThreadId) {
        self.drop_timed_to(id);
        self.retire_current(id);
        while let Some(s) = self.tcb(id).mbox.new.pop() {
            self.mail.stats.unserved_at_receiver_end += 1;
            self.drop_msg(s);
        }
        let queues = self.tcb(id).mbox.saves.len();
        for q in 0..queues {
            while let Some(s) = self.tcb(id).mbox.saves[q].pop() {
                self.mail.stats.unserved_at_receiver_end += 1;
                self.drop_msg(s);
            }
        }
    }
}
