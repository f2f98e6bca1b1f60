//! The synchronisation primitives of the cross-CPU protocols, from one place: the standard
//! library's (and `crossbeam`'s queue) in every normal build, `loom`'s when the crate is built
//! with `RUSTFLAGS="--cfg loom"`, so the loom models (docs/ARCHITECTURE.md, "The loom
//! models") run the protocols' own code with every interleaving loom explores.
//!
//! Swapped here: the atomics of the modules the models check (`kernel/xcpu/mod.rs`'s `Crossing`,
//! `objects.rs`'s ticket lock, `os/busy_cell.rs`, `os/worker.rs`), the cell of a value one side
//! at a time may reach ([`UnsafeCell`], whose accesses loom checks for races), a dispatcher's
//! OS-thread handle and its unpark ([`Waker`]), the bounded request queue ([`BoundedQueue`])
//! and the futex wait and wake of a worker's state word ([`Futex`]).
//!
//! Must not: change what a normal build does — every item is the standard one, or a wrapper
//! that inlines to it.

#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize};

/// The OS threads of a model: loom's under `--cfg loom`.
#[cfg(loom)]
pub(crate) use loom::thread;
#[cfg(not(loom))]
pub(crate) use std::thread;

/// A value reached by one side at a time, as a protocol on some atomic decides. Under loom
/// every access is checked: two that are not ordered by the protocol fail the model.
#[cfg(not(loom))]
#[derive(Debug, Default)]
pub(crate) struct UnsafeCell<T: ?Sized>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> UnsafeCell<T> {
        UnsafeCell(std::cell::UnsafeCell::new(value))
    }
}

#[cfg(not(loom))]
impl<T: ?Sized> UnsafeCell<T> {
    /// Read through a pointer to the value (loom records a shared access).
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Write through a pointer to the value (loom records an exclusive access).
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// The handle of the OS thread that waits for something (a dispatcher), set once by that
/// thread and unparked by whoever has something for it.
///
/// Under loom the models' threads block only by parking (or spinning with a yield): loom's
/// own mutex and condition variable do not survive an unpark of a thread blocked in them,
/// which the protocols do (a dispatcher is unparked whenever it is posted to), so nothing
/// here uses them.
pub(crate) struct Waker {
    #[cfg(not(loom))]
    thread: std::sync::OnceLock<std::thread::Thread>,
    /// Written once by the thread registering, before `set` is stored with release ordering.
    #[cfg(loom)]
    thread: UnsafeCell<Option<loom::thread::Thread>>,
    #[cfg(loom)]
    set: AtomicBool,
}

// SAFETY: the slot is written once, by the registering thread, before the release store of
// `set`, and read only after an acquire load of `set` saw it: never reached by two threads
// at once. A loom thread handle is only ever used inside its model.
#[cfg(loom)]
unsafe impl Sync for Waker {}
// SAFETY: as for `Sync`.
#[cfg(loom)]
unsafe impl Send for Waker {}

impl Waker {
    /// No thread yet: [`Waker::unpark`] does nothing until one registers.
    pub(crate) fn new() -> Waker {
        Waker {
            #[cfg(not(loom))]
            thread: std::sync::OnceLock::new(),
            #[cfg(loom)]
            thread: UnsafeCell::new(None),
            #[cfg(loom)]
            set: AtomicBool::new(false),
        }
    }

    /// The calling OS thread is the one to wake. Called once, by that thread (a second call
    /// changes nothing).
    pub(crate) fn register_current(&self) {
        #[cfg(not(loom))]
        let _ = self.thread.set(thread::current());
        #[cfg(loom)]
        if !self.set.load(std::sync::atomic::Ordering::Relaxed) {
            // SAFETY: only the registering thread writes the slot, once, before `set`;
            // readers read it only after an acquire load of `set` saw that store.
            self.thread.with_mut(|t| unsafe { *t = Some(thread::current()) });
            self.set.store(true, std::sync::atomic::Ordering::Release);
        }
    }

    /// Wake the registered thread (its next park returns at once if it is not parked now).
    #[inline]
    pub(crate) fn unpark(&self) {
        #[cfg(not(loom))]
        if let Some(t) = self.thread.get() {
            t.unpark();
        }
        #[cfg(loom)]
        if self.set.load(std::sync::atomic::Ordering::Acquire) {
            // SAFETY: `set` was seen with acquire ordering: the slot is written and never
            // written again.
            self.thread.with(|t| unsafe { (*t).as_ref().map(loom::thread::Thread::unpark) });
        }
    }
}

/// A bounded lock-free queue of many producers and one consumer: `crossbeam`'s `ArrayQueue`;
/// under loom, a deque of the same capacity behind a spin lock (the queue's own algorithm is
/// `crossbeam`'s, and not what the models check: they check what is built on it).
#[cfg(not(loom))]
pub(crate) type BoundedQueue<T> = crossbeam_queue::ArrayQueue<T>;

#[cfg(loom)]
pub(crate) struct BoundedQueue<T> {
    locked: AtomicBool,
    items: UnsafeCell<std::collections::VecDeque<T>>,
    capacity: usize,
}

// SAFETY: the deque is reached only while holding `locked` (taken with acquire ordering,
// released with release ordering), one thread at a time; the items move between threads.
#[cfg(loom)]
unsafe impl<T: Send> Sync for BoundedQueue<T> {}

#[cfg(loom)]
impl<T> BoundedQueue<T> {
    pub(crate) fn new(capacity: usize) -> BoundedQueue<T> {
        assert!(capacity > 0, "capacity must be non-zero");
        BoundedQueue {
            locked: AtomicBool::new(false),
            items: UnsafeCell::new(std::collections::VecDeque::with_capacity(capacity)),
            capacity,
        }
    }

    fn locked<R>(&self, f: impl FnOnce(&mut std::collections::VecDeque<T>) -> R) -> R {
        use std::sync::atomic::Ordering;
        while self.locked.compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed).is_err() {
            thread::yield_now();
        }
        // SAFETY: `locked` is held: nobody else reaches the deque until it is released.
        let r = self.items.with_mut(|items| f(unsafe { &mut *items }));
        self.locked.store(false, Ordering::Release);
        r
    }

    /// Append `item`, or give it back when the queue is full.
    pub(crate) fn push(&self, item: T) -> Result<(), T> {
        let capacity = self.capacity;
        self.locked(|items| {
            if items.len() == capacity {
                return Err(item);
            }
            items.push_back(item);
            Ok(())
        })
    }

    pub(crate) fn pop(&self) -> Option<T> {
        self.locked(|items| items.pop_front())
    }

    pub(crate) fn capacity(&self) -> usize {
        self.capacity
    }
}

/// A 32-bit atomic word that a thread can wait on until it changes (Linux's `futex`). Under
/// loom a wait reads a count of wakes, then the word, and if the word still holds the value
/// expected spins (yielding) until the count moves: a wake after a change reaches every
/// waiter that saw the old value, as the futex guarantees, and a change without a wake leaves
/// the waiter spinning, which fails the model.
pub(crate) struct Futex {
    word: AtomicU32,
    #[cfg(loom)]
    wakes: AtomicU32,
}

impl std::ops::Deref for Futex {
    type Target = AtomicU32;
    #[inline(always)]
    fn deref(&self) -> &AtomicU32 {
        &self.word
    }
}

impl Futex {
    pub(crate) fn new(value: u32) -> Futex {
        Futex {
            word: AtomicU32::new(value),
            #[cfg(loom)]
            wakes: AtomicU32::new(0),
        }
    }

    /// Sleep while the word holds `expected` (it may also return early: a wake-up, a signal
    /// or a changed value all lead the caller to look at the word again).
    pub(crate) fn wait(&self, expected: u32) {
        #[cfg(not(loom))]
        // SAFETY: FUTEX_WAIT reads the aligned 32-bit word `word` points to, which outlives
        // the call; a null timeout waits without a bound. Only the return value is used (none
        // here: the caller looks at the word again whatever ended the wait).
        unsafe {
            libc::syscall(
                libc::SYS_futex,
                self.word.as_ptr(),
                libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
                expected,
                std::ptr::null::<libc::timespec>(),
            );
        }
        #[cfg(loom)]
        {
            use std::sync::atomic::Ordering::SeqCst;
            let wakes = self.wakes.load(SeqCst);
            if self.word.load(SeqCst) == expected {
                while self.wakes.load(SeqCst) == wakes {
                    thread::yield_now();
                }
            }
        }
    }

    /// Wake every thread waiting on the word.
    pub(crate) fn wake(&self) {
        #[cfg(not(loom))]
        // SAFETY: FUTEX_WAKE only uses the address as a key; the word is valid.
        unsafe {
            libc::syscall(libc::SYS_futex, self.word.as_ptr(), libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG, i32::MAX);
        }
        #[cfg(loom)]
        self.wakes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Run `model` under loom with at most `preemptions` preemptions per execution (the bound
/// that keeps a model's exploration to seconds; the bugs loom finds need few).
#[cfg(all(test, loom))]
pub(crate) fn check(preemptions: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    // `LOOM_MAX_PREEMPTIONS` explores further (slower) than the bound the model runs with.
    let bound = std::env::var("LOOM_MAX_PREEMPTIONS").ok().and_then(|v| v.parse().ok());
    builder.preemption_bound = Some(bound.unwrap_or(preemptions));
    // The models' spin loops (a ticket lock's spinner, a waiter on a hand-off) yield at each
    // turn; loom counts every turn as a branch.
    builder.max_branches = 100_000;
    builder.check(model);
}
