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
//! # A call and its reply hand the CPU over
//!
//! A call blocks its caller, and the run loop's next step is the reschedule that picks the
//! next thread (the process called, in the common case). A reply whose caller waits on the
//! same CPU wakes it; when the caller is the more urgent (a server runs below its clients),
//! the run loop's next step is the reschedule that preempts the server for it. When nothing
//! else is due then, the request makes that step itself: a call ([`Kernel::call_hand_off`])
//! stops its caller, tells the scheduler and asks for the pick in one call
//! ([`Scheduler::on_blocked_pick`]) and dispatches it; a reply ([`Kernel::reply_hand_off`])
//! wakes the caller, tells the scheduler and asks in one call ([`Scheduler::on_woken_pick`]),
//! stops the server and dispatches the pick. Both have the effects, trace records and
//! scheduler calls of the general path in the same order. Whenever the case is not plain
//! (another CPU, a global policy, a switch cost, a thread set, preemption held off, something
//! due, a scheduler that asked to hear NEXT between the block and the pick), the request
//! goes the general way and the run loop goes on as usual.
//!
//! Must not: decide who runs (the policy picks, as always), or make the read at a moment a
//! separate request could not have been made.
//!
//! [`Scheduler::on_woken_pick`]: crate::policy::sched::Scheduler::on_woken_pick
//! [`Scheduler::on_blocked_pick`]: crate::policy::sched::Scheduler::on_blocked_pick
//!
//! [`Flow::Reply`]: crate::message::Flow::Reply
//! [`Ctx::reply_and_read`]: crate::Ctx::reply_and_read

use std::time::Duration;

use crate::clock::Clock;
use crate::kernel::locking::hand_off::slot_pair;
use crate::kernel::thread_side::protocol::{Answer, MsgAnswer, Value};
use crate::kernel::threads::tcb::{State, Wait};
use crate::kernel::Kernel;
use crate::plain::MsgError;
use crate::plain::StopReason;
use crate::plain::ThreadId;
use crate::policy::sched::{Events, WakePick};

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

    /// The reply of the running process in slot `i` (CPU `c`) wakes its caller, waiting in
    /// slot `k`, and the CPU goes to whom the scheduler picks: what `wake_from_wait` and the
    /// run loop's next step, `reschedule`, would do, in one step with the same effects, trace
    /// records and scheduler calls in the same order. Returns false, having changed nothing,
    /// when the case does not apply.
    pub(in crate::kernel) fn reply_hand_off(&mut self, c: usize, i: usize, k: usize) -> bool {
        if !self.direct_hand_off || self.global || !self.costs.context_switch.is_zero() || !self.nothing_due(c) {
            return false;
        }
        let Some((server, caller)) = slot_pair(&mut self.table.slots, i, k) else { return false };
        let cpu = &mut self.cpus[c];
        if cpu.preempt
            || cpu.current != Some(server.id)
            || server.holds_cpu()
            || server.exiting
            || server.set.is_some()
            || caller.set.is_some()
            || caller.cpu != cpu.index
        {
            return false;
        }
        #[cfg(test)]
        REPLY_HAND_OFFS.with(|n| n.set(n.get() + 1));
        // `wake_from_wait`, then the reschedule's scheduler calls in one.
        caller.end_wait(&mut self.timers);
        caller.wants = None;
        caller.state = State::Ready;
        let now = self.now;
        match cpu.scheduler.on_woken_pick(&caller.sched, &server.sched, now) {
            WakePick::Stays => {}
            WakePick::Preempted(Some(next)) if next == caller.id => {
                let trace_seq = self.tracing.then_some(&mut self.trace_seq);
                Self::preempt_tcb(
                    cpu,
                    c,
                    server,
                    caller,
                    &mut self.timers,
                    trace_seq,
                    now,
                    self.exec.accounting,
                    Duration::ZERO,
                );
                self.switched_in_request = true;
            }
            WakePick::Preempted(next) => {
                self.stop_running_at(c, i, StopReason::Preempted);
                self.table.slots[i].as_mut().expect("live slot").state = State::Ready;
                if let Some(next) = next {
                    // A wrong pick stops the run; the run loop sees it.
                    let _ = self.dispatch_picked_at(c, next);
                }
            }
        }
        true
    }

    /// The call of the running thread `id` (CPU `c`), whose message (pool slot `s`) was just
    /// delivered, blocks it and the CPU goes to whom the scheduler picks: what `block_in` and
    /// the run loop's next step, `reschedule`, would do, in one step with the same effects,
    /// trace records and scheduler calls in the same order. Returns false, having changed
    /// nothing, when the case does not apply.
    pub(in crate::kernel) fn call_hand_off(&mut self, c: usize, id: ThreadId, s: u32) -> bool {
        if !self.direct_hand_off
            || self.global
            || !self.costs.context_switch.is_zero()
            || !self.nothing_due(c)
            || self.cpus[c].events.contains(Events::NEXT)
        {
            return false;
        }
        let Some(i) = self.local(id) else { return false };
        let (Some(t), cpu) = (self.table.slots[i].as_mut(), &mut self.cpus[c]) else { return false };
        if cpu.preempt || cpu.current != Some(id) || t.set.is_some() {
            return false;
        }
        #[cfg(test)]
        CALL_HAND_OFFS.with(|n| n.set(n.get() + 1));
        let now = self.now;
        let trace_seq = self.tracing.then_some(&mut self.trace_seq);
        Self::stop_tcb(cpu, t, trace_seq, now, self.exec.accounting, StopReason::Blocked);
        t.state = State::Blocked(Wait::Reply(s));
        if let Some(next) = cpu.scheduler.on_blocked_pick(&t.sched, now) {
            // A wrong pick stops the run; the run loop sees it.
            if self.dispatch_picked_at(c, next).is_some() {
                self.switched_in_request = true;
            }
        }
        true
    }

    /// Make the read a fused reply + read left for this resume of thread `id` (slot `i`,
    /// current on CPU `c`). Returns false when it blocked the thread: it is not resumed.
    #[inline]
    pub(in crate::kernel) fn deferred_read(&mut self, c: usize, i: usize, id: ThreadId) -> bool {
        let t = self.table.slots[i].as_mut().expect("live slot");
        t.pending_read = false;
        // A reply refused across real-time CPUs answers with its error; the `Empty` the fused
        // request itself left as the answer (for a read that is not made) is no refusal.
        // A pattern, not `!=`: the derived comparison of `MsgError` is a call once it has
        // enough variants, on every deferred read.
        let refused = matches!(t.answer, Answer::Value(Value::Msg(Err(e))) if !matches!(e, MsgError::Empty));
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
                self.table.slots[i].as_mut().expect("live slot").set_answer(Answer::Value(Value::Msg(a)));
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
    /// The calls handed over on their short path on this OS thread's kernels (tests only).
    static CALL_HAND_OFFS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The replies handed over on their short path on this OS thread's kernels (tests only).
    static REPLY_HAND_OFFS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::{CALL_HAND_OFFS, DEFERRED_READS, REPLY_HAND_OFFS};
    use crate::clock::VirtualClock;
    use crate::plain::{Flow, Message};
    use crate::policy::sched::{Events, FixedPriority, Scheduler, StackedScheduler, WaitInheritance};
    use crate::{Config, Costs, Runtime, ThreadSpec};

    /// A client of priority 2 makes eleven calls to a process of priority 1 that replies
    /// with fused replies; returns the calls and the replies handed over on their short paths.
    fn hand_offs(config: Config) -> (u64, u64) {
        let mut rt = Runtime::<VirtualClock>::new(config).unwrap();
        let server = rt.spawn_process(ThreadSpec::new("server").priority(1), |_, m| Flow::Reply(m)).unwrap();
        rt.spawn(ThreadSpec::new("client").priority(2), move |cx| {
            for i in 1..=11 {
                assert_eq!(cx.call(server, Message::new(1, i, 0)).expect("call").value, i);
            }
        })
        .unwrap();
        CALL_HAND_OFFS.with(|n| n.set(0));
        REPLY_HAND_OFFS.with(|n| n.set(0));
        rt.run().unwrap();
        (CALL_HAND_OFFS.with(|n| n.get()), REPLY_HAND_OFFS.with(|n| n.get()))
    }

    /// Every call blocks its client and every reply wakes it, with nothing else due: each
    /// hands the CPU over on its short path (the dispatcher's too), unless the short paths are
    /// off or a switch costs time; a scheduler that asked for NEXT hears of the blocked
    /// caller between the block and the pick, so calls then take the general path.
    #[test]
    fn calls_and_replies_hand_the_cpu_over_only_when_the_case_is_plain() {
        assert_eq!(hand_offs(Config::new(1)), (11, 11));
        assert_eq!(hand_offs(Config::new(1).direct_switch(false)), (11, 11));
        assert_eq!(hand_offs(Config::new(1).direct_hand_off(false)), (0, 0));
        let costly = Costs { context_switch: std::time::Duration::from_micros(1), ..Costs::default() };
        assert_eq!(hand_offs(Config::new(1).costs(costly)), (0, 0));
        // A stacked scheduler answers through its own hooks, which the defaults make.
        let stacked = Config::new(1).scheduler(|| Box::new(WaitInheritance::new(Box::new(FixedPriority::new()))));
        assert_eq!(hand_offs(stacked), (11, 11));
        let next = Config::new(1).scheduler(|| Box::new(HearsNext(FixedPriority::new())));
        assert_eq!(hand_offs(next), (0, 11));
    }

    /// Fixed priority, asking for NEXT events (and ignoring them).
    struct HearsNext(FixedPriority);
    impl StackedScheduler for HearsNext {
        fn prev(&self) -> &dyn Scheduler {
            &self.0
        }
        fn prev_mut(&mut self) -> &mut dyn Scheduler {
            &mut self.0
        }
        fn events(&self) -> Events {
            Events::NEXT
        }
    }

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
