//! Stack overflow in a tempi thread: a clear message naming the thread, then an abort, as std
//! does for its own threads (instead of a bare `SIGSEGV`).
//!
//! Every thread's stack has an inaccessible guard page below it, and Rust probes every page
//! of a large frame, so an overflow faults in that page. A `SIGSEGV`/`SIGBUS` handler, run on
//! an alternate signal stack, recognises a fault in the guard page of the tempi thread that
//! is running on the faulting OS thread (the fault address in its guard page and the stack
//! pointer inside its stack), writes the message with `write(2)` and aborts. Any other fault
//! goes to the handler that was installed before (std's, which reports an overflow of an OS
//! thread's own stack), or to the default action, so genuine crashes still crash. The faulting
//! OS thread is a dispatcher, which watches its kernel's table of stacks, or the OS thread of
//! an OS-backed thread, which watches that one thread's stack ([`OwnStackWatch`]); each has
//! an alternate signal stack of its own.
//!
//! The thread is not recovered. Abandoning its frames mid-instruction would leave whatever it
//! was doing half done on an OS thread that goes on running other threads: the allocator's
//! per-thread caches and locks, std's per-thread panic count and reentrant locks (stdout),
//! any lock it took, an `std::thread::scope` whose borrowed data would be reused; and the
//! coroutine library's recovery entry point reuses the top of the faulting stack. None of
//! that can be made sound for arbitrary code, which is why std aborts too.

use std::cell::Cell;
use std::sync::Once;

/// What the signal handler needs to know about a thread's stack. Lives in the kernel, at a
/// fixed address (a slot of a vector that never grows), for the thread's lifetime.
#[derive(Clone, Copy)]
pub(crate) struct StackGuard {
    /// The guard page: `[guard_lo, limit)`; the usable stack is `[limit, base)`.
    guard_lo: usize,
    limit: usize,
    /// Top of the stack (exclusive).
    base: usize,
    /// The thread's name, kept by the kernel for the whole run.
    name: *const u8,
    name_len: usize,
    slot: u32,
    generation: u32,
    cpu: usize,
}

impl StackGuard {
    pub(crate) const NONE: StackGuard = StackGuard {
        guard_lo: 0,
        limit: 0,
        base: 0,
        name: std::ptr::null(),
        name_len: 0,
        slot: 0,
        generation: 0,
        cpu: 0,
    };

    /// A stack mapped at `[lowest, base)` whose lowest page is its guard (the layout of
    /// `corosensei`'s default stack, whose `limit()` is `lowest`), for the thread named
    /// `name`, which must outlive every run of the thread (the kernel keeps names until the
    /// run's end).
    pub(crate) fn new(lowest: usize, base: usize, name: &str, slot: u32, generation: u32, cpu: usize) -> StackGuard {
        StackGuard {
            guard_lo: lowest,
            limit: lowest + page_size(),
            base,
            name: name.as_ptr(),
            name_len: name.len(),
            slot,
            generation,
            cpu,
        }
    }
}

thread_local! {
    /// The stack table of the kernel running on this OS thread (its start and length), set
    /// for the whole run. Const-initialised and without a destructor, so reading it from a
    /// signal handler touches no lazy initialisation.
    static TABLE: Cell<(*const StackGuard, usize)> = const { Cell::new((std::ptr::null(), 0)) };
}

/// While the returned value lives, faults on this OS thread are checked against `table`: one
/// entry per thread slot, [`StackGuard::NONE`] for a free slot. The table must not move or be
/// resized meanwhile (entries may be rewritten).
pub(crate) fn watching(table: &[StackGuard]) -> Watching {
    let signal_stack = watch();
    TABLE.with(|t| t.set((table.as_ptr(), table.len())));
    Watching { _signal_stack: signal_stack }
}

/// See [`watching`].
pub(crate) struct Watching {
    _signal_stack: AltStack,
}

/// The watch over the one stack that an OS-backed thread's own OS thread (its worker, see
/// `os/worker.rs`) runs: the kernel's table is watched on the dispatcher's OS thread only,
/// and a fault is delivered to the OS thread that faults. The worker gets a table of its own,
/// one entry that is never rewritten, with its own copy of the thread's name: the worker may
/// outlive the run (and the kernel that keeps the names) when the run's end leaves it stopped.
pub(crate) struct OwnStackWatch {
    // Dropped first: the OS thread stops reading the entry before the entry goes.
    watching: Option<Watching>,
    entry: Box<[StackGuard; 1]>,
    _name: Box<str>,
}

impl OwnStackWatch {
    /// The watch over the stack that `guard` describes, not started yet.
    pub(crate) fn new(guard: &StackGuard) -> OwnStackWatch {
        let name: Box<str> = if guard.name.is_null() {
            Box::from("")
        } else {
            // SAFETY: a non-null name is the kernel's copy of the thread's name, valid UTF-8 of
            // `name_len` bytes, alive while the kernel runs, which is when this is called.
            let bytes = unsafe { std::slice::from_raw_parts(guard.name, guard.name_len) };
            Box::from(std::str::from_utf8(bytes).unwrap_or(""))
        };
        let entry = Box::new([StackGuard { name: name.as_ptr(), name_len: name.len(), ..*guard }]);
        OwnStackWatch { watching: None, entry, _name: name }
    }

    /// Watch the stack on the calling OS thread from now on, until this value is dropped (on
    /// the same OS thread). Calls after the first do nothing.
    pub(crate) fn start(&mut self) {
        if self.watching.is_none() {
            self.watching = Some(watching(&self.entry[..]));
        }
    }
}

impl Drop for Watching {
    fn drop(&mut self) {
        TABLE.with(|t| t.set((std::ptr::null(), 0)));
    }
}

fn page_size() -> usize {
    // SAFETY: sysconf only reads a configuration value.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// The handlers that were installed before ours, for `SIGSEGV` and `SIGBUS`.
struct Previous([libc::sigaction; 2]);

// SAFETY: a `sigaction` is plain data (a handler address, flags, a signal mask); it is written
// once, before the handler that reads it is installed, and never changed afterwards.
unsafe impl Sync for Previous {}
// SAFETY: as above: plain data.
unsafe impl Send for Previous {}

static PREVIOUS: std::sync::OnceLock<Previous> = std::sync::OnceLock::new();
static INSTALL: Once = Once::new();
const SIGNALS: [libc::c_int; 2] = [libc::SIGSEGV, libc::SIGBUS];

/// Install the handler (once per process) and make sure the calling OS thread has an
/// alternate signal stack; the returned guard removes a stack this call added.
fn watch() -> AltStack {
    INSTALL.call_once(|| {
        // SAFETY: an all-zero sigaction is a valid value (no handler, empty mask, no flags).
        let mut previous: [libc::sigaction; 2] = unsafe { std::mem::zeroed() };
        for (i, &sig) in SIGNALS.iter().enumerate() {
            // SAFETY: a null new action only reads the current one into `previous[i]`, a valid
            // sigaction.
            unsafe { libc::sigaction(sig, std::ptr::null(), &mut previous[i]) };
        }
        if PREVIOUS.set(Previous(previous)).is_err() {
            return;
        }
        for sig in SIGNALS {
            // SAFETY: as above, all-zero is a valid sigaction, completed below.
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = on_fault as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            // SAFETY: `action.sa_mask` is a valid sigset_t to empty.
            unsafe { libc::sigemptyset(&mut action.sa_mask) };
            // SAFETY: `action` is a complete sigaction whose handler has the SA_SIGINFO
            // signature; the previous handlers were saved above, before this one can run.
            unsafe { libc::sigaction(sig, &action, std::ptr::null_mut()) };
        }
    });
    AltStack::ensure()
}

/// An alternate signal stack this module mapped for the calling OS thread; unmapped when
/// dropped. Threads that already have one (std gives its threads one) keep theirs.
pub(crate) struct AltStack {
    mapped: Option<(usize, usize)>,
}

impl AltStack {
    const SIZE: usize = 64 * 1024;

    fn ensure() -> AltStack {
        // SAFETY: all-zero is a valid stack_t; a null new stack only reads the current one.
        let mut current: libc::stack_t = unsafe { std::mem::zeroed() };
        // SAFETY: `current` is a valid stack_t to write into.
        let rc = unsafe { libc::sigaltstack(std::ptr::null(), &mut current) };
        if rc != 0 || current.ss_flags & libc::SS_DISABLE == 0 {
            return AltStack { mapped: None };
        }
        let len = AltStack::SIZE + page_size();
        // SAFETY: an anonymous private mapping with no address hint has no preconditions.
        let map = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if map == libc::MAP_FAILED {
            return AltStack { mapped: None };
        }
        // The lowest page stays inaccessible: an overflow of the signal stack faults.
        // SAFETY: the first page lies inside the mapping just made.
        unsafe { libc::mprotect(map, page_size(), libc::PROT_NONE) };
        let stack = libc::stack_t {
            // SAFETY: `page_size()` bytes past the start is still inside the mapping.
            ss_sp: unsafe { map.cast::<u8>().add(page_size()) }.cast(),
            ss_flags: 0,
            ss_size: AltStack::SIZE,
        };
        // SAFETY: `stack` describes memory mapped above, which stays mapped until `drop`
        // disables the alternate stack again.
        if unsafe { libc::sigaltstack(&stack, std::ptr::null_mut()) } != 0 {
            // SAFETY: the mapping made above, of `len` bytes, unused.
            unsafe { libc::munmap(map, len) };
            return AltStack { mapped: None };
        }
        AltStack { mapped: Some((map as usize, len)) }
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        let Some((map, len)) = self.mapped else { return };
        let off = libc::stack_t { ss_sp: std::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
        // SAFETY: disabling the alternate stack of the calling thread, which installed it in
        // `ensure` and is not running a handler on it now.
        if unsafe { libc::sigaltstack(&off, std::ptr::null_mut()) } == 0 {
            // SAFETY: the mapping `ensure` made, no longer in use as a signal stack.
            unsafe { libc::munmap(map as *mut libc::c_void, len) };
        }
    }
}

/// The stack pointer at the fault, where this platform's context layout is known.
fn fault_sp(context: *mut libc::c_void) -> Option<usize> {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        let uc = context.cast::<libc::ucontext_t>();
        // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
        return Some(unsafe { (*uc).uc_mcontext.gregs[libc::REG_RSP as usize] } as usize);
    }
    #[cfg(all(target_os = "linux", target_arch = "aarch64"))]
    {
        let uc = context.cast::<libc::ucontext_t>();
        // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
        return Some(unsafe { (*uc).uc_mcontext.sp } as usize);
    }
    #[allow(unreachable_code)]
    {
        let _ = context;
        None
    }
}

extern "C" fn on_fault(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    // Only async-signal-safe work from here: reads, write(2), abort(2), sigaction(2).
    let (table, len) = TABLE.with(|t| t.get());
    let sp = fault_sp(context);
    if !table.is_null() && !info.is_null() && sp.is_some() {
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler; for SIGSEGV
        // and SIGBUS it carries the fault address.
        let addr = unsafe { (*info).si_addr() } as usize;
        let sp = sp.unwrap_or(0);
        // SAFETY: `TABLE` points at the running kernel's table of `len` entries, which stays
        // at that address for the whole run (`watching`), or at the one entry of an OS-backed
        // thread's worker, never rewritten while it is watched (`OwnStackWatch`). Entries are
        // plain words; the stack pointer is inside a thread's stack only while that thread
        // runs, and the kernel writes no entry then, so the entry found is whole and current.
        let entries = unsafe { std::slice::from_raw_parts(table, len) };
        for g in entries {
            if sp >= g.guard_lo && sp < g.base {
                if addr >= g.guard_lo && addr < g.limit {
                    report(g);
                    // SAFETY: abort has no preconditions; it does not return.
                    unsafe { libc::abort() };
                }
                break;
            }
        }
    }
    chain(sig, info, context);
}

/// Hand a fault that is not a tempi thread's overflow to the handler installed before.
fn chain(sig: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let i = if sig == libc::SIGSEGV { 0 } else { 1 };
    let previous = PREVIOUS.get().map(|p| p.0[i]);
    match previous {
        Some(p) if p.sa_sigaction != libc::SIG_DFL && p.sa_sigaction != libc::SIG_IGN => {
            if p.sa_flags & libc::SA_SIGINFO != 0 {
                // SAFETY: the previous handler was installed with SA_SIGINFO, so it has this
                // signature; it gets the arguments the kernel gave us.
                let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                    unsafe { std::mem::transmute(p.sa_sigaction) };
                f(sig, info, context);
            } else {
                // SAFETY: without SA_SIGINFO the handler takes the signal number only.
                let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(p.sa_sigaction) };
                f(sig);
            }
        }
        _ => {
            // Back to the default action: returning re-executes the faulting instruction,
            // which then ends the process as it would have without us.
            // SAFETY: all-zero is a valid sigaction; with SIG_DFL (zero) it restores the default.
            let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
            action.sa_sigaction = libc::SIG_DFL;
            // SAFETY: `action` is a complete sigaction.
            unsafe { libc::sigaction(sig, &action, std::ptr::null_mut()) };
        }
    }
}

/// "thread `name` (T3.0) on CPU 0 has overflowed its stack of N bytes", with write(2).
fn report(g: &StackGuard) {
    fn put(bytes: &[u8]) {
        // SAFETY: writing a valid byte slice to standard error.
        let _ = unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
    }
    fn num(mut n: usize) {
        let mut buf = [0u8; 20];
        let mut i = buf.len();
        loop {
            i -= 1;
            buf[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        put(&buf[i..]);
    }
    put(b"\ntempi thread `");
    if !g.name.is_null() {
        // SAFETY: the name belongs to the thread running now; the kernel keeps it for the run.
        put(unsafe { std::slice::from_raw_parts(g.name, g.name_len) });
    }
    put(b"` (T");
    num(g.slot as usize);
    put(b".");
    num(g.generation as usize);
    put(b") on CPU ");
    num(g.cpu);
    put(b" has overflowed its stack of ");
    num(g.base - g.limit);
    put(b" bytes\nfatal runtime error: stack overflow in a tempi thread, aborting (give it a larger `stack_size`)\n");
}
