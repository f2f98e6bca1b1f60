//! The code every thread runs on its own stack: its jobs one after another, how the end of a
//! job is classified (completed, aborted, killed, panicked, stopped), and dropping a coroutine
//! that must be unwound by force.
//!
//! Must not: make any runtime call but `JobDone`; runtime calls are `Ctx`'s.

use std::any::Any;
use std::cell::{Cell, RefCell};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::rc::Rc;

use crate::os::busy_cell::KernelId;
use crate::os::context::{ForcedUnwind, Yielder};

use crate::clock::RealClock;
use crate::plain::ThreadId;
use crate::thread::ThreadOutcome;

use crate::kernel::thread_side::calls::{answer_of_another_kind, Call, JobDone};
use crate::kernel::thread_side::ctx::Ctx;
use crate::kernel::thread_side::protocol::{Body, Interrupt, Request, Response};
use crate::kernel::thread_side::unwinds::{JobAborted, Killed, RestartSection, Shutdown};

enum JobEnd {
    Aborted,
    Killed,
    Panicked(String),
    Shutdown,
}

fn classify(payload: Box<dyn Any + Send>) -> JobEnd {
    if payload.is::<JobAborted>() {
        JobEnd::Aborted
    } else if payload.is::<RestartSection>() {
        // Only delivered inside `Mutex::critical`, which catches it; one that escapes (the
        // section was left some other way) ends the job like an abort.
        JobEnd::Aborted
    } else if payload.is::<Killed>() {
        JobEnd::Killed
    } else if payload.is::<Shutdown>() {
        JobEnd::Shutdown
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        JobEnd::Panicked((*s).to_string())
    } else if let Some(s) = payload.downcast_ref::<String>() {
        JobEnd::Panicked(s.clone())
    } else if payload.is::<ForcedUnwind>() {
        // The forced unwind of a thread being dropped: it must reach the stack's first frame.
        resume_unwind(payload)
    } else {
        JobEnd::Panicked("a panic whose payload is not a message".to_string())
    }
}

/// Drop a thread's coroutine, which unwinds it by force if it is suspended.
pub(crate) fn drop_coroutine<T>(co: T) {
    let dropped = catch_unwind(AssertUnwindSafe(move || drop(co)));
    // A panic escaping that unwind has nowhere to go.
    drop(dropped);
}

/// The code every thread runs on its own stack: jobs, one after another, until told to stop.
pub(crate) fn thread_main(
    yielder: &Yielder<Response, Request>,
    first: Response,
    (runtime, executor, id, cpu, os_backed): (u64, KernelId, ThreadId, usize, bool),
    (real_clock, watch): (Option<RealClock>, Option<Rc<crate::kernel::CheckpointWatch>>),
    (fast_held, mail): (Rc<Cell<u32>>, Rc<crate::kernel::messaging::messages::Exchange>),
    mut body: Body,
) -> ThreadOutcome {
    let cx = Ctx {
        yielder,
        runtime,
        executor,
        id,
        cpu,
        os_backed,
        now: Cell::new(first.now),
        job: Cell::new(first.job),
        real_clock,
        watch,
        fast_held,
        mail,
        owed: Cell::new(false),
        deferred: RefCell::new(Vec::new()),
        stashed: Cell::new(None),
        runtime_unwind: Cell::new(false),
    };
    // The first resume answers as the end of a job would: start one, or be interrupted.
    let mut next_job = first.reply.map(|answer| JobDone::answer(answer).unwrap_or_else(|| answer_of_another_kind()));
    loop {
        cx.runtime_unwind.set(false);
        let aborted = match next_job {
            Ok(()) => match catch_unwind(AssertUnwindSafe(|| body(&cx))) {
                Ok(()) => false,
                Err(payload) => match classify(payload) {
                    JobEnd::Aborted => true,
                    JobEnd::Panicked(msg) => {
                        cx.settle_at_end();
                        return ThreadOutcome::Panicked(msg);
                    }
                    JobEnd::Shutdown => {
                        cx.forget_owed();
                        return ThreadOutcome::Completed;
                    }
                    JobEnd::Killed => {
                        cx.settle_at_end();
                        return ThreadOutcome::Killed;
                    }
                },
            },
            Err(Interrupt::Kill) => return ThreadOutcome::Killed,
            // Abandoned before it could start.
            Err(Interrupt::Abort) => true,
            Err(Interrupt::Stop | Interrupt::Restart) => return ThreadOutcome::Completed,
        };
        cx.settle_at_end();
        next_job = cx.exchange(JobDone(aborted));
    }
}
