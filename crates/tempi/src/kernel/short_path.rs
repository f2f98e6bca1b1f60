//! The short path of a message call: a process's reply and its next read in one request.
//!
//! # Reply and read in one request
//!
//! A process that replies and then reads its next message ([`Flow::Reply`],
//! [`Ctx::reply_and_read`]) makes one request for both. The reply is made; if the thread is
//! still the one to run (the reply woke nobody more urgent), the read is made at once, as the
//! thread's next request would have made it. If the reply let a more urgent thread in (the
//! caller preempts its server), the thread is preempted exactly as after a plain `reply`, and
//! its read is made when it is next resumed, before it runs: by then a new message may be
//! queued, and the thread runs on with it, one suspend and resume fewer per call. A read that
//! would wait blocks the thread then, as its own request would. Should an interrupt be due to
//! it at that resume (an abort, a kill, a restart), the read is not made: the thread is
//! answered `Empty`, on which the call makes a plain read, which delivers the interrupt as
//! before.
//!
//! Must not: decide who runs (the policy picks, as always), or make the read at a moment a
//! separate request could not have been made.
//!
//! [`Flow::Reply`]: crate::message::Flow::Reply
//! [`Ctx::reply_and_read`]: crate::Ctx::reply_and_read

use super::protocol::{Answer, MsgAnswer, Settled};
use super::Kernel;
use crate::clock::Clock;
use crate::message::MsgError;
use crate::thread::ThreadId;

impl<C: Clock> Kernel<C> {
    /// The process `id`, current on CPU `c`, replies with the message in its mail cell and
    /// reads its next message: now, if it still runs after the reply, or when next resumed.
    /// `None` when the read blocks it.
    pub(crate) fn msg_reply_read(&mut self, c: usize, id: ThreadId) -> Option<MsgAnswer> {
        match self.msg_reply(c, id) {
            Some(Err(e)) => return Some(Err(e)),
            Some(Ok(())) => {}
            None => {
                // The reply goes to a thread of another real-time CPU and waits for its
                // delivery there: the read is made at the resume that answer brings, unless
                // the answer is an error, which the process then gets instead.
                self.tcb(id).pending_read = true;
                return None;
            }
        }
        let cpu = &self.cpus[c];
        if cpu.preempt || cpu.requeue_current || cpu.current != Some(id) {
            // The read waits for the thread's next resume; `Empty` is its answer should the
            // read not be made then.
            self.tcb(id).pending_read = true;
            return Some(Err(MsgError::Empty));
        }
        self.msg_read(c, id, true, None)
    }

    /// Make the read a fused reply + read left for this resume of thread `id` (slot `i`,
    /// current on CPU `c`). Returns false when it blocked the thread: it is not resumed.
    #[inline]
    pub(super) fn deferred_read(&mut self, c: usize, i: usize, id: ThreadId) -> bool {
        let t = self.slots[i].as_mut().expect("live slot");
        t.pending_read = false;
        // A reply refused across real-time CPUs answers with its error; the `Empty` the fused
        // request itself left as the answer (for a read that is not made) is no refusal.
        let refused = matches!(t.answer, Answer::Settled(Settled::Msg(Err(e))) if e != MsgError::Empty);
        if refused
            || t.interrupt.is_some()
            || t.kill_pending
            || t.abort_pending
            || t.stale
            || t.restart_section.is_some()
        {
            // Answered `Empty`: the thread reads again itself, and gets what is due.
            return true;
        }
        #[cfg(test)]
        DEFERRED_READS.with(|n| n.set(n.get() + 1));
        match self.msg_read(c, id, true, None) {
            Some(a) => {
                self.slots[i].as_mut().expect("live slot").set_answer(Answer::Settled(Settled::Msg(a)));
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
thread_local! {
    /// The deferred reads made on this OS thread's kernels (tests only).
    static DEFERRED_READS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::DEFERRED_READS;
    use crate::message::{Flow, Message};
    use crate::{Runtime, ThreadSpec};

    /// Every call of a more urgent client finds the process preempted by its previous fused
    /// reply: the process's read is made at its resume, not by a read request of its own.
    #[test]
    fn fused_reply_preempted_by_its_caller_reads_at_the_next_resume() {
        let mut rt = Runtime::simulated(1);
        let server = rt
            .spawn_process(ThreadSpec::new("server").priority(1), |cx, m| {
                if m.id != 0 {
                    return Flow::Reply(m);
                }
                cx.reply(m).expect("reply");
                Flow::Stop
            })
            .unwrap();
        rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
            for i in 1..=10 {
                assert_eq!(cx.call(server, Message::new(1, i, 0)).expect("call").value, i);
            }
            cx.call(server, Message::new(0, 0, 0)).expect("last call");
        })
        .unwrap();
        DEFERRED_READS.with(|n| n.set(0));
        rt.run().unwrap();
        // The first call finds the process waiting in its first read; the ten after it
        // find it preempted by its fused reply.
        assert_eq!(DEFERRED_READS.with(|n| n.get()), 10);
    }
}
