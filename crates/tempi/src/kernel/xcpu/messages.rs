//! Messages between the CPUs of a real-time runtime, whose kernels run on separate
//! dispatcher OS threads and each have their own message pool: a send, call, reply or timed
//! message to a thread of another CPU travels through that CPU's request queue
//! (`xcpu/mod.rs`), and the answer back through the sender CPU's queue.
//!
//! Ownership of the message: a [`Message`] is plain data (`Copy`), and it crosses by value in
//! the request. A send or call takes no slot of the sender's pool; the target kernel takes a
//! slot of *its* pool when the request arrives, and that slot stays the target's until the
//! message is replied to or put away, exactly as for a local send. A timed message waits in a
//! slot of the sender's pool (its timer is the sender's) and the slot goes back to that pool
//! when the timer fires and the message is posted. So a pool slot is only ever touched by the
//! kernel that owns it, and no slot is lent across CPUs. A typed payload's handle crosses with
//! the message; its value waits in its payload pool, which every kernel can release into, so
//! the kernel that gives the message up (the target refusing it, the sender whose request
//! queue is full, the caller's kernel when the caller no longer waits for the reply) releases
//! the payload, and a sender is answered without it once it is delivered.
//!
//! The sender blocks, for a send as for a call (`Wait::Reply` with a stamp that has its top
//! bit set, so it never names a local pool slot): a send is answered once the target has
//! delivered the message or refused it, so it returns the same result as in virtual time,
//! where delivery is immediate; a call is answered with the reply, or with the refusal, or
//! with `Unanswered` if the recipient puts the message away. Messages from one sender to one
//! recipient keep their order: the sender waits for each, and a queue is first in, first out.
//! A full request queue fails the send with [`MsgError::CpuQueueFull`] (counted and traced as
//! any full queue); an answer that finds the sender's queue full waits in the outbox.
//!
//! Must not: touch another kernel's pool or threads (everything goes through a post), or
//! allocate.

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::thread_side::protocol::{Answer, MsgAnswer, Value};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::xcpu::Post;
use crate::kernel::Kernel;
use crate::plain::ThreadId;
use crate::plain::TraceKind;
use crate::plain::{Message, MsgError};

/// The top bit of a `Wait::Reply` stamp that waits for another CPU (pool slots are below it).
const REMOTE: u32 = 1 << 31;

impl<C: Clock> Kernel<C> {
    /// `id`, running on CPU `c`, sends `msg` to `to`, a thread of real-time CPU `cpu` (a call
    /// if `call`), and waits for the answer. Returns an immediate answer (the request queue
    /// was full), or `None` when `id` now waits.
    pub(in crate::kernel) fn msg_send_remote(
        &mut self,
        c: usize,
        id: ThreadId,
        to: ThreadId,
        cpu: usize,
        mut msg: Message,
        call: bool,
    ) -> Option<MsgAnswer> {
        msg.from = Some(id);
        msg.expects_reply = call;
        let stamp = self.remote_stamp(id);
        if let Err(e) = self.post_msg(cpu, to, msg, stamp) {
            self.drop_payload(msg);
            return Some(Err(self.refuse_unposted(id, e)));
        }
        self.block_in(c, id, Wait::Reply(stamp), None);
        None
    }

    /// The stamp `id` waits on for an answer from another CPU. The thread's wait token changes
    /// when a wait ends, so a stamp names this wait only: an answer to a wait that was given
    /// up (abort, kill) finds another stamp, or none. The top bit makes it non-zero; the
    /// other bits are the token's, all of them (folding token 0 onto 1 gave the first two
    /// waits of a thread the same stamp).
    pub(in crate::kernel) fn remote_stamp(&mut self, id: ThreadId) -> u32 {
        REMOTE | (self.tcb(id).wait_token as u32 & !REMOTE)
    }

    /// Post message `msg` for `to` on CPU `cpu`; `stamp` is what its sender waits on (0: a
    /// timed message, nobody waits).
    pub(in crate::kernel) fn post_msg(
        &mut self,
        cpu: usize,
        to: ThreadId,
        msg: Message,
        stamp: u32,
    ) -> Result<(), MsgError> {
        self.post(cpu, Post::Msg { to, msg, stamp }).map_err(|e| match e {
            Error::QueueFull { cpu, capacity } => MsgError::CpuQueueFull { cpu, capacity },
            _ => MsgError::NoSuchThread(to),
        })
    }

    /// A message from another CPU's thread arrived for `to`: it takes a slot of this
    /// kernel's pool and is delivered as a local send would be. A send is answered at once;
    /// a call when it is replied to or put away; a refusal at once (a timed message's
    /// refusal, which nobody waits for, is traced here on its sender).
    pub(in crate::kernel) fn accept_remote_msg(&mut self, to: ThreadId, msg: Message, stamp: u32) {
        let sender = msg.from.expect("a posted message has a sender");
        let result = self.deliver_remote(to, msg, stamp);
        if result.is_err() {
            // Not delivered: its payload goes back here (every kernel can release it).
            self.drop_payload(msg);
        }
        match (result, stamp) {
            (Ok(()), 0) => {}
            (Ok(()), _) if msg.expects_reply => {}
            (Ok(()), _) => self.answer_remote_sender(sender, stamp, Ok(msg.without_payload())),
            (Err(e), 0) => {
                self.count_timed_refusal(e);
                if let Some(c) = self.cpu_local(self.first_cpu) {
                    self.trace(
                        c,
                        TraceKind::MessageRefused,
                        sender,
                        0,
                        crate::kernel::messaging::messages::refusal_code(e),
                    );
                }
                // Nobody waits for it, but the sender is told: its kernel keeps the refusal
                // for it to read (`Ctx::timed_refusals`).
                let code = crate::kernel::messaging::messages::refusal_code(e) as u8;
                let back = sender.index() / self.table.slots.len();
                self.post_answer(back, Post::TimedRefused { to, msg: msg.without_payload(), code });
            }
            (Err(e), _) => self.answer_remote_sender(sender, stamp, Err(e)),
        }
    }

    pub(in crate::kernel) fn deliver_remote(&mut self, to: ThreadId, msg: Message, stamp: u32) -> Result<(), MsgError> {
        if self.local(to).is_none() {
            return Err(MsgError::NoSuchThread(to));
        }
        let s = self.mail.pool.take(msg, msg.from, msg.expects_reply).ok_or(MsgError::PoolFull)?;
        self.mail.pool.slots[s as usize].remote = stamp;
        if let Err(e) = self.deliver(to, s) {
            self.mail.pool.give_back(s);
            return Err(e);
        }
        Ok(())
    }

    /// Answer `sender`, a thread of another real-time CPU waiting on `stamp`, through its
    /// CPU's queue (the outbox keeps the answer if that queue is full).
    pub(in crate::kernel) fn answer_remote_sender(
        &mut self,
        sender: ThreadId,
        stamp: u32,
        result: Result<Message, MsgError>,
    ) {
        let to = sender.index() / self.table.slots.len();
        self.post_answer(to, Post::MsgAnswer { sender: sender.to_word(), stamp, result });
    }

    /// The answer to a message this kernel's thread `sender` sent to another CPU: it wakes
    /// the sender if it still waits for it (a call gets the reply in its mail cell). A
    /// refusal by the recipient's pool, queue or policy is traced here, on the sender, as a
    /// local one is.
    /// This kernel's thread `msg.from` is told that its timed message `msg` for `to` was
    /// refused on `to`'s CPU (counted and traced there) with the error of refusal code `code`.
    pub(in crate::kernel) fn on_remote_timed_refusal(&mut self, to: ThreadId, msg: Message, code: u8) {
        let Some(sender) = msg.from.filter(|&s| self.local(s).is_some()) else { return };
        let e = match u64::from(code) {
            0 => MsgError::PoolFull,
            1 => MsgError::QueueFull,
            3 => MsgError::NoSuchThread(to),
            _ => MsgError::Refused,
        };
        self.note_timed_refusal(sender, to, msg, e);
    }

    pub(in crate::kernel) fn on_remote_msg_answer(
        &mut self,
        sender: ThreadId,
        stamp: u32,
        result: Result<Message, MsgError>,
    ) {
        if self.local(sender).is_none() || self.tcb(sender).state != State::Blocked(Wait::Reply(stamp)) {
            // Nobody takes the reply (the caller gave up): nor its payload.
            if let Ok(reply) = result {
                self.drop_payload(reply);
            }
            return;
        }
        let answer = match result {
            Ok(reply) => {
                self.tcb(sender).mail.msg.set(reply);
                Ok(())
            }
            Err(e @ (MsgError::PoolFull | MsgError::QueueFull | MsgError::Refused)) => Err(self.refuse(sender, e)),
            Err(e) => Err(e),
        };
        self.tcb(sender).set_answer(Answer::Value(Value::Msg(answer)));
        self.wake_from_wait(sender);
    }
}
