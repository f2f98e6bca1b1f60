//! Condition variables and semaphores shared by the CPUs of a real-time runtime: notifying a
//! condition variable or giving a semaphore unit back from another CPU posts a request to the
//! kernel of the CPU that owns the object, which carries it out through the same functions as
//! a local call (`waits.rs`). The caller goes on once the request is posted, as after a
//! release; a unit the owner cannot add (its count is at `u64::MAX`) is answered to the
//! giver's kernel, which counts and traces the refusal (`xcpu-refused`, request 3). A full
//! queue fails the call with [`LockError::QueueFull`], counted and traced.
//!
//! Waiting on an object of another CPU (a condition wait, taking a unit) stays refused with
//! [`LockError::CrossCpu`]: a waiter belongs in the owner's ranked queue, ordered and removed
//! (timeout, abort, kill, priority change) atomically with the grants made there, and a
//! condition wait reacquires a lock of the waiter's own CPU. A remote waiter would turn every
//! grant, timeout and abort into a two-CPU exchange in which a unit granted to a waiter that
//! has meanwhile given up must travel back; the owner-CPU rule keeps each queue under one
//! kernel and every wake-up exact.
//!
//! Must not: touch the queue of an object of another kernel.

use super::xcpu::{Post, RemoteOp};
use super::Kernel;
use crate::clock::Clock;
use crate::error::Error;
use crate::objects::{CondId, LockError, SemId};
use crate::thread::ThreadId;

impl<C: Clock> Kernel<C> {
    /// The real-time CPU of another kernel that owns the object with raw id `raw` (condition
    /// variables, semaphores and locks are numbered `CPU × per-CPU capacity + index`), or
    /// `None` (virtual time, or not another CPU's).
    pub(super) fn object_cpu(&self, raw: u32, per_cpu: usize) -> Option<usize> {
        self.crossing.as_ref()?;
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
    pub(super) fn post_cond_signal(
        &mut self,
        to: usize,
        id: ThreadId,
        cond: CondId,
        all: bool,
    ) -> Result<(), LockError> {
        self.post_sync(to, Post::CondSignal { cond, all, notifier: id })
    }

    /// Thread `id` gives a unit back to `sem`, a semaphore of CPU `to`.
    pub(super) fn post_vacate(&mut self, to: usize, id: ThreadId, sem: SemId) -> Result<(), LockError> {
        self.post_sync(to, Post::Vacate { sem, giver: id })
    }

    /// A thread of another CPU notified `cond`, one of this kernel's.
    pub(super) fn remote_cond_signal(&mut self, cond: CondId, all: bool) {
        if let Some(k) = self.cond_index(cond) {
            self.cond_signal_local(k, all);
        }
    }

    /// `giver`, a thread of another CPU, gave a unit back to `sem`, one of this kernel's.
    pub(super) fn remote_vacate(&mut self, sem: SemId, giver: ThreadId) {
        let done = match self.sem_index(sem) {
            Some(k) => self.vacate_local(k).is_ok(),
            None => false,
        };
        if !done {
            let to = giver.index() / self.slots.len();
            self.post_answer(to, Post::Refused { target: giver, op: RemoteOp::Vacate, by: self.first_cpu });
        }
    }
}
