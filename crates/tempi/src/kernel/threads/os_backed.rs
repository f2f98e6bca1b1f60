//! OS-backed threads (`ThreadSpec::os_backed`, real time): the thread's coroutine is resumed
//! on an OS thread of its own instead of on the dispatcher's, so the dispatcher can take the
//! CPU back from it while it runs its own code, without waiting for its next runtime call.
//!
//! The thread is a normal thread to the kernel: the same coroutine, job loop, `Ctx`, control
//! block, scheduling, accounting and trace. Only the resume differs:
//!
//! - Resuming it posts the answer to its OS thread (`os::worker::Channel`), which resumes the
//!   coroutine there and posts back the request the coroutine suspends with. Meanwhile the
//!   dispatcher parks until the earliest of: that request, the next thing the kernel must do
//!   on this CPU (a timer, an execution-time event such as a budget, the run's end), or a post
//!   from another CPU (its doorbell).
//! - When the kernel has something to do first, the dispatcher stops the OS thread in place
//!   (the stop signal: its handler only waits on a futex) and handles the stop as the thread's
//!   `checkpoint`: the loop fires what is due, and preempts or enforces a budget as at any
//!   runtime call. The thread is *in place*: its next resume lets the OS thread go on where it
//!   was, and its answer and any interrupt wait for its next runtime call, where they are
//!   delivered as for any thread.
//!
//! Soundness: the coroutine only ever runs on its OS thread once it has moved there. What it
//! shares with the kernel (its control block's fast-lock count and message cell) is
//! reached by one side at a time: the thread touches them in its runtime calls, while the
//! dispatcher waits for it, and the kernel touches them only while the thread waits in a
//! call for its answer; each handover is ordered by the channel's atomic state word. The
//! checkpoint's due instant, which a stopped thread may still read until the stop signal is
//! delivered (the dispatcher does not wait for that), is atomic. The paths that touch state
//! shared with other threads of the CPU without a runtime call are closed to such a thread:
//! it never takes a lock on the fast path, and it may not run a restartable section.
//!
//! Must not: let go a thread that is not in place; deliver anything to a thread stopped in
//! place (it is not in a runtime call).

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::os::context::CoroutineResult;

use crate::clock::Clock;
use crate::kernel::thread_side::protocol::{Interrupt, JobInfo, Op, Request, Response};
use crate::kernel::threads::tcb::Co;
use crate::kernel::Kernel;
use crate::os::worker::{Channel, Stopped};
use crate::plain::ThreadId;
use crate::thread::ThreadOutcome;
use crate::time::Time;

/// What the coroutine hands back: a request, or its end.
type Step = CoroutineResult<Request, ThreadOutcome>;

/// The longest the dispatcher parks at once while an OS-backed thread runs; it looks at its
/// state again after that whatever happens.
const PARK_MAX: Duration = Duration::from_millis(10);

/// The OS thread of an OS-backed thread, held in its control block.
pub(crate) struct Worker {
    channel: Arc<Channel<Response, Step>>,
    handle: Option<JoinHandle<()>>,
    /// Stopped by the dispatcher in its own code: the next resume lets it go on instead of
    /// answering a request.
    pub(crate) in_place: bool,
    /// Its coroutine has returned: the OS thread ends.
    done: bool,
    /// The thread it runs, named in the outcome if the run's end leaves it stopped.
    thread: ThreadId,
}

impl Drop for Worker {
    fn drop(&mut self) {
        let Some(handle) = self.handle.take() else { return };
        if self.done {
            let _ = handle.join();
        }
        // Otherwise it stays blocked (waiting for an answer, or stopped in place) until the
        // process ends: it owns what it can reach, and nothing wakes it any more.
    }
}

impl Worker {
    /// The end of the run: answer its pending runtime call with the runtime's stop
    /// (`response`), or let it go on toward its next call if it was stopped in place.
    fn send_stop(&mut self, response: Response) {
        if std::mem::take(&mut self.in_place) {
            self.channel.let_go();
        } else {
            self.channel.post(response);
        }
    }

    /// At the deadline of the run's end: whether the worker is left without being unwound
    /// (stopped in place again, or waiting for an answer that never comes); a worker whose
    /// coroutine has just returned is not.
    fn give_up(&mut self) -> bool {
        let handle = self.handle.as_ref().expect("a live worker has its thread");
        loop {
            if let Some(step) = self.channel.take_output() {
                self.done = matches!(step, CoroutineResult::Return(_));
                return !self.done;
            }
            if self.channel.stop(handle) == Stopped::InPlace {
                self.in_place = true;
                return true;
            }
        }
    }
}

impl<C: Clock> Kernel<C> {
    /// Move the new coroutine `co` of the thread in slot `i` (CPU `c`) to an OS thread of its
    /// own. Returns false when the system refused the thread: the thread has then ended.
    #[cold]
    pub(in crate::kernel) fn start_worker(&mut self, c: usize, i: usize, mut co: Co) -> bool {
        let t = self.table.slots[i].as_ref().expect("live slot");
        let id = t.id;
        // The OS thread bears the thread's name (an OS thread name cannot hold a NUL).
        let name = self.table.summaries[t.summary].name.replace('\0', " ");
        // A fault on the worker's OS thread is checked against this thread's stack there.
        let mut watch = crate::os::overflow::OwnStackWatch::new(&self.table.guards[i]);
        let step = move |response: Response| {
            watch.start();
            let step = co.resume(response);
            let last = matches!(step, CoroutineResult::Return(_));
            (step, last)
        };
        match Channel::start(name, step) {
            Ok((channel, handle)) => {
                let t = self.table.slots[i].as_mut().expect("live slot");
                t.worker =
                    Some(Box::new(Worker { channel, handle: Some(handle), in_place: false, done: false, thread: id }));
                true
            }
            Err(e) => {
                self.exit(c, id, ThreadOutcome::NotStarted(format!("its OS thread could not be started: {e}")));
                false
            }
        }
    }

    /// The instant the dispatcher must take the CPU back from a running OS-backed thread at
    /// the latest: the earliest timer, execution-time event or the run's end.
    fn worker_due(&self) -> Time {
        let mut due = self.timers.next_at().unwrap_or(Time::MAX);
        if self.exec.watch > 0
            && let Some(t) = self.next_exec_instant()
        {
            due = due.min(t);
        }
        due.min(self.horizon)
    }

    /// Resume the OS-backed thread in slot `i`: answer it with `response`, or let it go on
    /// where it was stopped (`None`). Returns its request, or a checkpoint when the dispatcher
    /// stopped it in place because something is due on this CPU.
    pub(in crate::kernel) fn resume_worker(&mut self, i: usize, response: Option<Response>) -> Step {
        let due = self.worker_due();
        let clock = self.real_clock.as_ref().expect("OS-backed threads run in real time");
        let bell = self.cross.bell.as_deref();
        let halt = self.halt.as_deref();
        let w =
            self.table.slots[i].as_mut().and_then(|t| t.worker.as_mut()).expect("an OS-backed thread has its worker");
        match response {
            Some(r) => w.channel.post(r),
            None => {
                w.in_place = false;
                w.channel.let_go();
            }
        }
        let handle = w.handle.as_ref().expect("a live worker has its thread");
        loop {
            if let Some(step) = w.channel.take_output() {
                w.done = matches!(step, CoroutineResult::Return(_));
                return step;
            }
            let now = clock.read();
            let acquire = std::sync::atomic::Ordering::Acquire;
            let rung = bell.is_some_and(|b| b.load(acquire)) || halt.is_some_and(|h| h.load(acquire));
            if now >= due || rung {
                match w.channel.stop(handle) {
                    Stopped::InPlace => {
                        w.in_place = true;
                        return CoroutineResult::Yield(Request::Op(Op::Checkpoint));
                    }
                    Stopped::Output => continue,
                }
            }
            std::thread::park_timeout(due.saturating_since(now).min(PARK_MAX));
        }
    }

    /// Resume the OS-backed thread `id` (slot `i`, current on CPU `c`) stopped in place, and
    /// handle what it does next as `resume_once` handles a request.
    pub(in crate::kernel) fn resume_in_place(&mut self, c: usize, id: crate::plain::ThreadId, i: usize) {
        let t = self.table.slots[i].as_ref().expect("live slot");
        if t.kill_pending && t.holds_nothing() && !(self.handler_hooks.holds_a_handler)(self.executor(), id) {
            // It may never reach a runtime call: it ends now and its OS thread stays stopped
            // until the run ends, when it is unwound (it holds no lock another thread could
            // be given meanwhile, and is inside no handler whose callers would wait for it:
            // such a thread is let go, and killed at its next runtime call, as a lock's
            // holder is).
            let t = self.table.slots[i].as_mut().expect("live slot");
            let w = t.worker.take().expect("in place");
            self.table.abandoned.push(*w);
            self.exit(c, id, ThreadOutcome::Killed);
            return;
        }
        // What its `checkpoint` compares with, as for any resume.
        self.leave_kernel();
        self.publish_due();
        let step = self.resume_worker(i, None);
        self.refresh_now();
        match step {
            CoroutineResult::Yield(Request::Op(request)) => {
                let restart_waits = self.table.slots[i].as_ref().is_some_and(|t| t.restart_section.is_some());
                if !restart_waits || !self.restart_answers(id, &request) {
                    self.handle(c, id, request);
                }
            }
            CoroutineResult::Yield(Request::Setup(request)) => self.handle_owned(c, id, *request),
            CoroutineResult::Return(outcome) => self.exit(c, id, outcome),
            // An OS-backed thread is never resumed hosted.
            CoroutineResult::Handled => {}
        }
    }

    /// At the end of the run: unwind the OS-backed threads with the runtime's stop at their
    /// runtime calls, as the coroutines of the dispatcher are, all at once. One that catches
    /// the stop and calls the runtime again is stopped again, 64 times at most. Those still
    /// in their own code (or not unwound) when [`crate::Config::os_backed_grace`] has passed
    /// are left stopped until the process ends, and named in the run's outcome: one
    /// deadline for all, so the run's end waits at most that long however many there are.
    pub(in crate::kernel) fn teardown_workers(&mut self) {
        let now = self.now;
        let stop = |job: JobInfo| Response { now, job, reply: Err(Interrupt::Stop) };
        let mut workers: Vec<(Worker, JobInfo, u32)> =
            std::mem::take(&mut self.table.abandoned).into_iter().map(|w| (w, JobInfo::default(), 0)).collect();
        for slot in &mut self.table.slots {
            let Some(t) = slot.as_mut() else { continue };
            if let Some(w) = t.worker.take() {
                workers.push((*w, t.job, 0));
            }
        }
        if workers.is_empty() {
            return;
        }
        // A grace too long for the clock to add is no bound at all.
        let deadline = Instant::now().checked_add(self.table.os_backed_grace);
        for (w, job, _) in &mut workers {
            if !w.done {
                w.send_stop(stop(*job));
            }
        }
        let mut left = Vec::new();
        loop {
            workers.retain_mut(|(w, job, rounds)| {
                if w.done {
                    return false;
                }
                let Some(step) = w.channel.take_output() else { return true };
                w.done = matches!(step, CoroutineResult::Return(_));
                if w.done {
                    return false;
                }
                *rounds += 1;
                if *rounds < 64 {
                    w.send_stop(stop(*job));
                    return true;
                }
                left.push(w.thread);
                false
            });
            if workers.is_empty() {
                break;
            }
            let at = Instant::now();
            if deadline.is_some_and(|d| at >= d) {
                for (mut w, _, _) in workers.drain(..) {
                    if w.give_up() {
                        left.push(w.thread);
                    }
                }
                break;
            }
            std::thread::park_timeout(deadline.map_or(PARK_MAX, |d| (d - at).min(PARK_MAX)));
        }
        left.sort_unstable();
        self.table.left_stopped.extend(left);
    }
}
