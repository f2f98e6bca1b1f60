//! The OS thread of an OS-backed thread (`ThreadSpec::os_backed`), and the stop signal that
//! blocks it in place.
//!
//! A [`Channel`] joins one dispatcher and one worker OS thread. The worker runs a `step`
//! function on each input the dispatcher posts and posts its output back; the dispatcher can
//! also *stop* the worker while it runs its own code: it sends [`stop_signal`] to the worker,
//! whose handler, if the stop still stands, marks it taken and waits on a futex until the
//! dispatcher lets it go (the dispatcher does not wait for the handler to run). The
//! handler does nothing else: it touches one atomic word and makes `futex` system calls (which
//! are async-signal-safe), never switches stacks, never unwinds and never reaches Rust state
//! of the interrupted code, so the interrupted code continues exactly where it was.
//!
//! One atomic word, `state`, carries the whole protocol; every handover of the input or the
//! output slot is a release store or read-modify-write of it and an acquire load on the other
//! side, so each slot is used by one side at a time and its contents are ordered.
//!
//! Must not: do anything in the signal handler but the mark and the wait; send the
//! signal to a worker that is not running its step.

use std::cell::Cell;
use std::sync::atomic::Ordering;

// Its futex and slots are loom's models of them under `--cfg loom`.
use super::loom_shim::{Futex, UnsafeCell};
use std::sync::{Arc, Once};
use std::thread::{JoinHandle, Thread};

/// The worker waits for an input (before the first, or after posting an output).
const IDLE: u32 = 0;
/// An input is posted; the worker takes it.
const INPUT: u32 = 1;
/// The worker runs its step.
const RUNNING: u32 = 2;
/// The worker posted an output and waits for the next input.
const OUTPUT: u32 = 3;
/// The dispatcher sent the stop signal; the handler has not acknowledged yet.
const STOPPING: u32 = 4;
/// The handler acknowledged: the worker waits in it until let go.
const STOPPED: u32 = 5;
/// An input was posted, then held back before the worker took it (the dispatcher stopped a
/// worker that had not started its step yet): the worker keeps waiting.
const HELD_INPUT: u32 = 6;

/// Where the worker was when [`Channel::stop`] returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// Blocked in place in its own code (or held before taking its input): let it go with
    /// [`Channel::let_go`].
    InPlace,
    /// It had posted an output already: take it.
    Output,
}

/// One dispatcher's link to one worker OS thread.
pub(crate) struct Channel<In, Out> {
    state: Futex,
    input: UnsafeCell<Option<In>>,
    output: UnsafeCell<Option<Out>>,
    /// Unparked when an output is posted.
    dispatcher: Thread,
}

// SAFETY: the slots are only reached as the protocol on `state` allows, one side at a time:
// the dispatcher writes `input` only while the worker waits for an input (state IDLE or
// OUTPUT, read with acquire) and publishes it with a release store of INPUT; the worker takes
// it only after winning INPUT -> RUNNING (acquire). The worker writes `output` only while
// running its step and publishes it with the release read-modify-write RUNNING -> OUTPUT; the
// dispatcher takes it only after an acquire load of OUTPUT, and posts the next input only
// after that. `In` and `Out` are moved between the two OS threads this way, never shared; the
// values they hold that are not `Send` are the kernel's to judge (see `kernel/threads/os_backed.rs`).
unsafe impl<In, Out> Sync for Channel<In, Out> {}
// SAFETY: as for `Sync`: the channel itself is only shared through an `Arc` by its two ends.
unsafe impl<In, Out> Send for Channel<In, Out> {}

/// A value moved to the worker OS thread once, before anything runs it there.
struct Handed<F>(F);

// SAFETY: `Handed` wraps the step function of a worker (which owns a coroutine). It is created
// on the dispatcher's OS thread, never called there, moved once into the worker's OS thread
// and only ever called on that thread afterwards. What it shares with the kernel is reached by
// the two sides one at a time, ordered by the channel's protocol (see `kernel/threads/os_backed.rs`).
unsafe impl<F> Send for Handed<F> {}

thread_local! {
    /// The state word of the worker running on this OS thread, for the stop handler. A const
    /// initializer without a destructor: reading it is a plain thread-local load, safe in a
    /// signal handler.
    static STOP_WORD: Cell<*const Futex> = const { Cell::new(std::ptr::null()) };
}

static INSTALL: Once = Once::new();

/// The signal that stops an OS-backed thread in place: `SIGRTMIN + 2` (the first real-time
/// signals are the C library's). An application that uses this signal for its own purposes
/// must not run OS-backed threads.
///
/// ```
/// assert!(tempi::os::stop_signal() > 0);
/// ```
pub fn stop_signal() -> i32 {
    libc::SIGRTMIN() + 2
}

/// The stop handler: acknowledge, then wait until let go. Async-signal-safe: one atomic
/// read-modify-write, futex calls, and `errno` kept as it was.
extern "C" fn on_stop(_sig: libc::c_int) {
    let word = STOP_WORD.with(Cell::get);
    if word.is_null() {
        return;
    }
    // SAFETY: `__errno_location` returns the calling thread's errno, valid for its lifetime.
    let errno = unsafe { *libc::__errno_location() };
    // SAFETY: a worker sets `STOP_WORD` to its channel's state word, which its own `Arc`
    // keeps alive for as long as the worker runs, and clears it before returning.
    let state = unsafe { &*word };
    acknowledge_stop(state);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// The stop handler's work on the worker's state word: if a stop stands, take it and wait
/// until let go.
fn acknowledge_stop(state: &Futex) {
    if state.compare_exchange(STOPPING, STOPPED, Ordering::AcqRel, Ordering::Acquire).is_ok() {
        state.wake();
        while state.load(Ordering::Acquire) == STOPPED {
            state.wait(STOPPED);
        }
    }
}

fn install_handler() -> std::io::Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| {
        // SAFETY: all-zero is a valid sigaction (no handler, empty mask, no flags), completed
        // below.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        action.sa_sigaction = on_stop as *const () as usize;
        // Interrupted system calls of the worker's own code restart.
        action.sa_flags = libc::SA_RESTART;
        // SAFETY: `action.sa_mask` is a valid sigset_t to empty.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: `action` is a complete sigaction whose handler takes the signal number.
        if unsafe { libc::sigaction(stop_signal(), &action, std::ptr::null_mut()) } != 0 {
            result = Err(std::io::Error::last_os_error());
        }
    });
    result
}

impl<In: 'static, Out: 'static> Channel<In, Out> {
    /// Start a worker OS thread named `name` that runs `step` on every input, until a step
    /// returns `true` with its output (the last). The calling thread is the dispatcher.
    pub(crate) fn start<F>(name: String, step: F) -> std::io::Result<(Arc<Self>, JoinHandle<()>)>
    where
        F: FnMut(In) -> (Out, bool) + 'static,
    {
        install_handler()?;
        let channel = Arc::new(Channel {
            state: Futex::new(IDLE),
            input: UnsafeCell::new(None),
            output: UnsafeCell::new(None),
            dispatcher: std::thread::current(),
        });
        let theirs = channel.clone();
        let handed = Handed(step);
        let handle = std::thread::Builder::new().name(name).spawn(move || {
            let handed = handed;
            theirs.serve(handed.0);
        })?;
        Ok((channel, handle))
    }

    /// The worker's loop.
    fn serve<F: FnMut(In) -> (Out, bool)>(&self, mut step: F) {
        // A dispatcher under SCHED_FIFO passes its class to the threads it creates: the worker
        // goes back to time sharing, below its dispatcher, so the dispatcher's wake-up at the
        // next event preempts it at once.
        lower_to_time_sharing();
        STOP_WORD.with(|w| w.set(&self.state));
        loop {
            loop {
                match self.state.compare_exchange(INPUT, RUNNING, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    Err(seen) => self.state.wait(seen),
                }
            }
            // SAFETY: won INPUT -> RUNNING: the input slot is this side's (see `Sync`).
            let input = self.input.with_mut(|slot| unsafe { (*slot).take() }).expect("an input was posted");
            let (output, last) = step(input);
            // SAFETY: RUNNING (or stopped in place, which is RUNNING to this code): the output
            // slot is this side's until the release below.
            self.output.with_mut(|slot| unsafe { *slot = Some(output) });
            loop {
                match self.state.compare_exchange(RUNNING, OUTPUT, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => break,
                    // The stop signal is on its way: its handler runs at the latest when this
                    // wait enters the kernel, and returns once the worker is let go.
                    Err(seen) => self.state.wait(seen),
                }
            }
            self.dispatcher.unpark();
            if last {
                break;
            }
        }
        STOP_WORD.with(|w| w.set(std::ptr::null()));
    }

    /// Dispatcher: post the next input; the worker must be waiting for one (never posted
    /// before, or its output taken).
    pub(crate) fn post(&self, input: In) {
        debug_assert!(matches!(self.state.load(Ordering::Acquire), IDLE | OUTPUT));
        // SAFETY: the worker waits for an input (IDLE or OUTPUT, see `Sync`): the slot is this
        // side's until the release store below.
        self.input.with_mut(|slot| unsafe { *slot = Some(input) });
        self.state.store(INPUT, Ordering::Release);
        self.state.wake();
    }

    /// Dispatcher: the worker's output, if it has posted one not taken yet.
    pub(crate) fn take_output(&self) -> Option<Out> {
        if self.state.load(Ordering::Acquire) != OUTPUT {
            return None;
        }
        // SAFETY: OUTPUT was read with acquire: the output slot is this side's until the next
        // `post`.
        self.output.with_mut(|slot| unsafe { (*slot).take() })
    }

    /// Dispatcher: stop the worker where it is, through `thread` (its handle): once this
    /// returns `InPlace`, the stop signal is queued for the worker, whose handler runs before
    /// it executes anything more of its own code if it is not on a CPU now, and within the
    /// signal's delivery (an interrupt of its CPU) if it is. This does not wait for the
    /// handler: on a loaded machine a worker of the time-sharing class may wait long for a
    /// CPU to run it, and the dispatcher has better things to do. Returns `Output` when the
    /// worker is known to have posted its output.
    pub(crate) fn stop(&self, thread: &JoinHandle<()>) -> Stopped {
        if let Some(known) = self.mark_stop() {
            return known;
        }
        use std::os::unix::thread::JoinHandleExt;
        // SAFETY: the worker thread is alive (it is RUNNING: it leaves its loop only after
        // posting its last output) and its handler is installed; pthread_kill only queues the
        // signal.
        unsafe { libc::pthread_kill(thread.as_pthread_t(), stop_signal()) };
        Stopped::InPlace
    }

    /// The atomic part of [`Channel::stop`]: where the worker is known to be, or `None` when
    /// the stop now stands (RUNNING -> STOPPING) and the signal must be sent.
    fn mark_stop(&self) -> Option<Stopped> {
        loop {
            match self.state.compare_exchange(RUNNING, STOPPING, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return None,
                Err(OUTPUT) => return Some(Stopped::Output),
                Err(INPUT) => {
                    if self.state.compare_exchange(INPUT, HELD_INPUT, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                        return Some(Stopped::InPlace);
                    }
                }
                Err(STOPPING | STOPPED | HELD_INPUT) => return Some(Stopped::InPlace),
                // IDLE (nothing posted yet) or a race with the worker's own transition: look
                // again.
                Err(_) => std::hint::spin_loop(),
            }
        }
    }

    /// Dispatcher: let a worker stopped in place go on (also one whose handler has not run
    /// yet: it then returns at once when it does).
    pub(crate) fn let_go(&self) {
        let to =
            |from: u32, to: u32| self.state.compare_exchange(from, to, Ordering::AcqRel, Ordering::Acquire).is_ok();
        let _ = to(STOPPED, RUNNING) || to(STOPPING, RUNNING) || to(HELD_INPUT, INPUT);
        self.state.wake();
    }
}

fn lower_to_time_sharing() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: pid 0 names the calling thread; `param` is valid for the call. Lowering a
    // thread's class needs no privilege; a refusal leaves it as it was.
    unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
}

/// The loom model of the worker's channel and its stop (docs/ARCHITECTURE.md, "The loom
/// models"): the real [`Channel`] (its futex and slots are loom's), the worker's own loop
/// (`serve`) on one loom thread, the dispatcher on another. The stop's atomic part is the
/// real [`Channel::mark_stop`]; the signal is not modelled: where `stop` would send it, the
/// model marks it pending, and the worker's step takes it (runs the handler's real
/// [`acknowledge_stop`]) before and after its work — the points where a signal may land in
/// the worker's own code. (One landing in `serve`'s waits is not modelled: there the stop's
/// `let_go` ends the wait whether the handler ran or not.)
#[cfg(all(test, loom))]
mod loom_models {
    use super::{acknowledge_stop, Channel, Futex, Stopped, UnsafeCell, IDLE, OUTPUT};
    use crate::os::loom_shim::{self, thread, AtomicBool};
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    /// The handler runs if a signal is pending (it is taken once).
    fn signal_lands(pending: &AtomicBool, state: &Futex) {
        if pending.swap(false, Ordering::AcqRel) {
            acknowledge_stop(state);
        }
    }

    /// The dispatcher posts two inputs and stops the worker during each (twice during the
    /// second), letting it go after each stop left in place, then takes each output: whatever
    /// the interleaving, every output is the step's for its input and the worker leaves its
    /// loop — no stop or let-go loses a wake-up (a worker left waiting spins for ever under
    /// the shim's futex, which fails the model), and loom checks every access to the slots.
    #[test]
    fn loom_worker_stop_and_let_go_never_lose_a_wake_up() {
        loom_shim::check(2, || {
            let channel: Arc<Channel<u32, u32>> = Arc::new(Channel {
                state: Futex::new(IDLE),
                input: UnsafeCell::new(None),
                output: UnsafeCell::new(None),
                dispatcher: std::thread::current(),
            });
            let pending = Arc::new(AtomicBool::new(false));
            let (theirs, signal) = (channel.clone(), pending.clone());
            let worker = thread::spawn(move || {
                let state = &theirs.state;
                theirs.serve(|input| {
                    signal_lands(&signal, state);
                    let output = input * 10;
                    signal_lands(&signal, state);
                    (output, input == 2)
                });
                // A signal still pending lands after the loop: the stop no longer stands.
                signal_lands(&signal, state);
            });
            for (input, stops) in [(1, 1), (2, 2)] {
                channel.post(input);
                let mut in_place = false;
                for _ in 0..stops {
                    match channel.mark_stop() {
                        // `stop` sends the signal here.
                        None => {
                            pending.store(true, Ordering::Release);
                            in_place = true;
                        }
                        Some(Stopped::InPlace) => in_place = true,
                        Some(Stopped::Output) => {}
                    }
                }
                if in_place {
                    channel.let_go();
                }
                let output = loop {
                    match channel.take_output() {
                        Some(output) => break output,
                        None => thread::yield_now(),
                    }
                };
                assert_eq!(output, input * 10, "each output is the step's for its input");
            }
            worker.join().expect("the worker leaves its loop");
            assert_eq!(channel.state.load(Ordering::Acquire), OUTPUT);
        });
    }
}
