//! A queue policy's panic ends the run as any panic of code the kernel calls, and the error
//! names the queue policy (not the scheduler): for a semaphore's waiters and for a thread's
//! new queue of messages, in virtual and in real time, from the object's CPU and from another.

use crate::common;

use std::sync::Arc;

use common::ms;
use tempi::clock::RealClock;
use tempi::message::Message;
use tempi::policy::queue::QueuePolicy;
use tempi::policy::sched::SchedInfo;
use tempi::sync::SemSpec;
use tempi::{Config, Error, PanicSource, Runtime, ThreadSpec};

/// Ranks nothing: every question panics.
struct Exploding;
impl QueuePolicy for Exploding {
    fn name(&self) -> &str {
        "exploding"
    }
    fn rank(&self, _: &SchedInfo) -> i64 {
        panic!("no rank")
    }
    fn rank_message(&self, _: &Message, _: &SchedInfo) -> Option<i64> {
        panic!("no message rank")
    }
}

fn panicked(r: Result<tempi::RunOutcome, Error>) -> (PanicSource, String, String) {
    match r {
        Err(Error::Panicked { source, what, message }) => (source, what, message),
        other => panic!("expected a panicked run, got {other:?}"),
    }
}

fn real(cpus: usize) -> Runtime<RealClock> {
    Runtime::new(Config::new(cpus).pin(false)).unwrap()
}

/// A semaphore with no unit: the second thread to procure it waits, and the policy ranking it
/// panics.
fn semaphore_waiter<C: tempi::clock::Clock>(rt: &mut Runtime<C>, waiter_cpu: usize) {
    let s = Arc::new(rt.create_semaphore(SemSpec::new("buffers", 0).queue(Exploding)).unwrap());
    rt.spawn(ThreadSpec::new("waiter").cpu(waiter_cpu), move |cx| {
        cx.work(ms(1));
        let _ = s.procure(cx);
    })
    .unwrap();
}

#[test]
fn queue_policy_panic_of_a_semaphore_queue_in_virtual_time() {
    let mut rt = Runtime::simulated(1);
    semaphore_waiter(&mut rt, 0);
    let err = rt.run().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the queue policy `exploding` of semaphore `buffers` panicked: no rank; the run was stopped and its threads unwound"
    );
    let (source, what, message) = panicked(Err(err));
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::QueuePolicy, "the queue policy `exploding` of semaphore `buffers`", "no rank")
    );
}

#[test]
fn queue_policy_panic_of_a_semaphore_queue_in_real_time() {
    let mut rt = real(1);
    semaphore_waiter(&mut rt, 0);
    let (source, what, message) = panicked(rt.run());
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::QueuePolicy, "the queue policy `exploding` of semaphore `buffers`", "no rank")
    );
}

#[test]
fn queue_policy_panic_of_a_semaphore_queue_ranking_a_waiter_of_another_cpu() {
    let mut rt = real(2);
    // The semaphore is CPU 0's; its waiter runs on CPU 1, and CPU 0's kernel ranks its proxy.
    semaphore_waiter(&mut rt, 1);
    let (source, what, message) = panicked(rt.run());
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::QueuePolicy, "the queue policy `exploding` of semaphore `buffers`", "no rank")
    );
}

/// A receiver whose new queue is ranked by the exploding policy, and a sender to it on
/// `sender_cpu`.
fn message_sender<C: tempi::clock::Clock>(rt: &mut Runtime<C>, sender_cpu: usize) {
    let inbox = rt
        .spawn(ThreadSpec::new("inbox").message_queue(Exploding), |cx| {
            let _ = cx.read(tempi::message::Read::Wait);
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("sender").cpu(sender_cpu), move |cx| {
        cx.work(ms(1));
        let _ = cx.send(inbox, Message::new(1, 2, 3));
    })
    .unwrap();
}

#[test]
fn queue_policy_panic_of_a_message_queue_in_virtual_time() {
    let mut rt = Runtime::simulated(1);
    message_sender(&mut rt, 0);
    let err = rt.run().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the message queue policy `exploding` of thread `inbox` panicked: no message rank; the run was stopped and its threads unwound"
    );
    let (source, what, message) = panicked(Err(err));
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::QueuePolicy, "the message queue policy `exploding` of thread `inbox`", "no message rank")
    );
}

#[test]
fn queue_policy_panic_of_a_message_queue_in_real_time() {
    let mut rt = real(1);
    message_sender(&mut rt, 0);
    let (source, what, message) = panicked(rt.run());
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::QueuePolicy, "the message queue policy `exploding` of thread `inbox`", "no message rank")
    );
}

#[test]
fn queue_policy_panic_of_a_message_queue_ranking_a_message_from_another_cpu() {
    let mut rt = real(2);
    message_sender(&mut rt, 1);
    let (source, what, message) = panicked(rt.run());
    assert_eq!(
        (source, what.as_str(), message.as_str()),
        (PanicSource::QueuePolicy, "the message queue policy `exploding` of thread `inbox`", "no message rank")
    );
}
