//! The context switch: a thread's own stack entered and left with a few instructions.
//!
//! A [`Coroutine`] runs a closure on a stack of the pool (`kernel/threads/stacks.rs`: an `mmap` with a
//! guard page, registered with valgrind). [`Coroutine::resume`] switches from the caller's
//! stack to the coroutine's with an input; the closure hands a value back with
//! [`Yielder::suspend`] (which switches back and returns the next input) or by returning.
//! Values cross by address: the side that switches leaves its value in its own frame and
//! passes a pointer; the other side moves it out before anything else runs.
//!
//! The switch itself ([`switch`]) saves the callee-saved registers on the stack it leaves,
//! stores that stack pointer, loads the other and restores its registers: one function,
//! symmetric, so a stack may be left for any other suspended stack, not only its resumer.
//!
//! # Hosted resumes: the direct switch
//!
//! A coroutine resumed with [`resume_hosted`] runs its suspends through the [`Host`] (the
//! kernel) on its own stack: the host handles the value there (borrowed in the frame that
//! built it, never copied first: a copy would read back, in wide loads, bytes just written
//! by narrower stores, which the processor cannot forward) and says what follows
//! ([`Next`]): go back to the resumer with the value (unhandled) or without it (handled), go
//! on at once with an input, or switch straight to another suspended coroutine with its
//! input. That other coroutine is resumed as if by the same resumer: when it suspends to the
//! resumer or ends, the resumer's `resume_hosted` returns with its step (the host knows whose
//! it is). A panic in the host is caught on the coroutine's stack and raised again in the
//! resumer; the coroutine stays suspended.
//!
//! Unwinding never crosses the switch: the closure runs inside `catch_unwind` in the first
//! frame of the stack ([`entry`]); a panic that escapes it is carried to the resumer and
//! raised there. A coroutine dropped while suspended is unwound by force: its suspend point
//! gets no input and raises [`ForcedUnwind`], which the runtime's job loop lets through.
//!
//! Backtraces do cross it: [`switch`] and [`trampoline`] carry unwind rules of their own,
//! and the trampoline's names as its caller the frame whose stack pointer the header's
//! `parent_sp` holds, the stack that resumed the coroutine (after a direct switch, the
//! original resumer, which `parent_sp` is copied from). A backtrace taken inside a coroutine
//! (gdb, perf, `std::backtrace`) thus reaches the dispatcher; gdb shows the trampoline as
//! `<signal handler called>`, as the rule is marked a signal frame (see [`trampoline`]).
//!
//! x86_64 only for now; other architectures are refused at build time.
//!
//! Must not: let a value cross without being moved out exactly once; return a stack to the
//! pool while a frame on it may still run.

use std::any::Any;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};

use corosensei::stack::{DefaultStack, Stack};

#[cfg(not(target_arch = "x86_64"))]
compile_error!("tempi's context switch (os/context.rs) is written for x86_64 only");

/// The payload of the unwind that tears a suspended coroutine down when it is dropped.
pub(crate) struct ForcedUnwind;

/// What a coroutine hands its resumer: a value it suspended with, its end, or (hosted
/// resumes only) a suspend its host handled.
pub(crate) enum CoroutineResult<Y, R> {
    Yield(Y),
    Return(R),
    Handled,
}

/// What follows a suspend handled by the [`Host`] on the coroutine's stack.
pub(crate) enum Next<I> {
    /// Not handled: the value goes to the resumer.
    Resumer,
    /// Handled: back to the resumer without a value.
    Handled,
    /// The coroutine goes on at once with this input.
    Same(I),
    /// Switch straight to this suspended (or not yet started) coroutine with its input.
    Switch(CoHandle, I),
}

/// What handles the suspends of coroutines resumed with [`resume_hosted`], on their stacks.
///
/// The host borrows the value where the suspending frame built it (reading it field by field,
/// as it was written, so that no load straddles the stores that wrote it); the value goes to
/// the resumer when the host answers [`Next::Resumer`], and is dropped otherwise.
pub(crate) trait Host<I, Y> {
    fn on_suspend(&mut self, value: &Y) -> Next<I>;

    /// Drop a suspended value the host did not hand to the resumer. A host whose values
    /// usually own nothing can test for that here, inlined, where the compiler may leave a
    /// generic drop out of line (a call per suspension for nothing to drop).
    #[inline(always)]
    fn discard(value: Y) {
        drop(value);
    }
}

/// A coroutine's address for a direct switch, taken from the live [`Coroutine`] just before
/// it is used (valid while that coroutine is neither dropped nor done).
#[derive(Clone, Copy)]
pub(crate) struct CoHandle(*mut Header);

/// The address handed to the other side of a switch: the low two bits say what it is.
const TAG_YIELD: usize = 0;
const TAG_LAST: usize = 1;
const TAG_HANDLED: usize = 2;
const TAG_PANIC: usize = 3;

/// What crosses from a coroutine to its resumer, once read.
enum Step<Y, R> {
    Yield(Y),
    Return(R),
    Handled,
    /// A panic escaped the closure (the coroutine is done) or its host (it is suspended):
    /// raised again in the resumer.
    Panicked(Box<dyn Any + Send>),
    /// The forced unwind is over.
    Unwound,
}

/// How a coroutine ends, handed to its resumer by address.
enum Last<R> {
    Return(R),
    Panicked(Box<dyn Any + Send>),
    Unwound,
}

/// A value whose address has its low three bits clear, for the tags above.
#[repr(align(8))]
struct Aligned<T>(T);

/// At the top of a coroutine's stack (its address never moves, whatever happens to the
/// [`Coroutine`] value).
#[repr(C)]
struct Header {
    /// The resumer's stack while the coroutine runs. At offset 0: the trampoline's unwind
    /// rule reads it there, and with the next word it is the frame record the trampoline's
    /// `rbp` points at.
    parent_sp: usize,
    /// The return address of that frame record (the trampoline's), for walkers that follow
    /// frame pointers and expect one.
    link_ip: usize,
    /// The coroutine's stack while it is suspended (or before its first resume).
    co_sp: usize,
    /// The host of the current resume, or null: suspends go to the resumer.
    host: *mut (),
    /// The host's suspend function for this coroutine's types (see [`hosted_suspend`]), or 0.
    hook: usize,
    started: bool,
    done: bool,
}

/// Switch stacks: save the callee-saved registers and the stack pointer through `from`, load
/// `to` (a stack pointer saved by this function, or prepared by [`Coroutine::with_stack`])
/// and return `arg` on that stack, from the `switch` call that saved it.
///
/// The stack pointer saved is taken just after `rbp` is pushed, so that it points at a frame
/// record (the saved `rbp`, the return address above it) with the other registers below: the
/// trampoline's unwind rule and frame-pointer walkers go on from a coroutine's first frame to
/// its resumer through it. The unwind rules here describe the frame of whichever stack is
/// current, the one left up to the `lea`, the one entered after it (same layout).
///
/// # Safety
///
/// `to` must be a stack pointer saved by `switch` (or prepared for [`trampoline`]) whose
/// stack is not running, and `from` must be writable.
#[unsafe(naked)]
unsafe extern "sysv64" fn switch(from: *mut usize, to: usize, arg: usize) -> usize {
    core::arch::naked_asm!(
        ".cfi_startproc",
        "push rbp",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset rbp, 0",
        "mov [rdi], rsp",
        "push rbx",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset rbx, 0",
        "push r12",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r12, 0",
        "push r13",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r13, 0",
        "push r14",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r14, 0",
        "push r15",
        ".cfi_adjust_cfa_offset 8",
        ".cfi_rel_offset r15, 0",
        "lea rsp, [rsi - 40]",
        "pop r15",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_restore r15",
        "pop r14",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_restore r14",
        "pop r13",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_restore r13",
        "pop r12",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_restore r12",
        "pop rbx",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_restore rbx",
        "pop rbp",
        ".cfi_adjust_cfa_offset -8",
        ".cfi_restore rbp",
        "mov rax, rdx",
        "ret",
        ".cfi_endproc",
    )
}

/// The first frame of a coroutine's stack: `switch` returns into it the first time, with
/// the first input's address in `rax`, the closure's in `rbx`, the header's in `r12` and
/// the entry function in `r13` (placed there by [`Coroutine::with_stack`]), and the stack
/// pointer at a word holding the header's address. It never returns.
///
/// Its unwind rule makes the resumer's frame its caller: the canonical frame address is the
/// resumer's stack pointer after its `switch` returns, read through the header's `parent_sp`
/// (the saved stack pointer, plus the saved `rbp` and return address), and the resumer's
/// callee-saved registers are those its `switch` pushed below. As the word at this frame's
/// stack pointer never changes, the rule holds wherever the coroutine runs, and the link it
/// follows is whatever `parent_sp` holds then: the stack that resumed the coroutine.
///
/// The frame is marked a signal frame: a coroutine's stack may lie above its resumer's, and
/// gdb stops a backtrace whose frames go down in address unless a signal frame lies between
/// (as on an alternate signal stack). The cost is the name gdb shows for this frame
/// (`<signal handler called>`), and that unwinders look the resumer's return address up as
/// it is, not one byte before: harmless, as it is never the end of a function (`switch`
/// returns). The `ud2` keeps this frame's own address, looked up as it is too by gdb, inside
/// this function.
///
/// `rbp` is set to the header: its first two words are a frame record leading to the
/// resumer's, for walkers that follow frame pointers.
#[unsafe(naked)]
unsafe extern "sysv64" fn trampoline() {
    core::arch::naked_asm!(
        ".cfi_startproc",
        ".cfi_signal_frame",
        // DW_CFA_def_cfa_expression, 6 bytes: DW_OP_breg7 (rsp) 0, DW_OP_deref (the header),
        // DW_OP_deref (its `parent_sp`), DW_OP_plus_uconst 16.
        ".cfi_escape 0x0f, 6, 0x77, 0x00, 0x06, 0x06, 0x23, 0x10",
        ".cfi_offset rip, -8",
        ".cfi_offset rbp, -16",
        ".cfi_offset rbx, -24",
        ".cfi_offset r12, -32",
        ".cfi_offset r13, -40",
        ".cfi_offset r14, -48",
        ".cfi_offset r15, -56",
        "mov rdi, rax",
        "mov rsi, rbx",
        "mov rdx, r12",
        "mov rbp, r12",
        "call r13",
        "ud2",
        ".cfi_endproc",
    )
}

/// Runs on the coroutine's stack: the closure, inside `catch_unwind`, then the last switch.
///
/// # Safety
///
/// Called once per coroutine by [`trampoline`], with the arguments `with_stack` prepared.
unsafe extern "sysv64" fn entry<I, Y, R, F>(first: usize, f: *mut F, header: *mut Header) -> !
where
    F: FnOnce(&Yielder<I, Y>, I) -> R,
{
    // SAFETY: `with_stack` wrote the closure at `f` and nothing else reads it: moved out
    // once; the header is this stack's.
    let f = unsafe {
        (*header).started = true;
        std::ptr::read(f)
    };
    let yielder = Yielder { header, _types: PhantomData };
    let last: Last<R> = match catch_unwind(AssertUnwindSafe(|| {
        let first = take_input::<I>(first);
        f(&yielder, first)
    })) {
        Ok(r) => Last::Return(r),
        Err(payload) if payload.is::<ForcedUnwind>() => Last::Unwound,
        Err(payload) => Last::Panicked(payload),
    };
    let last = ManuallyDrop::new(Aligned(last));
    // SAFETY: the resumer is suspended in `switch` at `parent_sp`; it moves `last` out, and
    // never switches back here.
    unsafe {
        (*header).done = true;
        switch(&raw mut (*header).co_sp, (*header).parent_sp, (&raw const last as usize) | TAG_LAST)
    };
    // A finished coroutine is never resumed.
    std::process::abort()
}

/// The input at `addr`, handed by the side that switched here; 0 asks for the forced unwind.
#[inline(always)]
fn take_input<I>(addr: usize) -> I {
    // SAFETY: every switch to a coroutine passes 0 or the address of an `ManuallyDrop<I>` in
    // the switching frame, which does not touch it again: moved out once.
    unsafe { std::ptr::read(input_address::<I>(addr)) }
}

/// Move the value at `p` out 8 bytes at a time, each word by a load of its own: its sender
/// wrote it field by field moments ago, and the processor forwards a store to a load only
/// when the load lies within it (a copy by wider loads waits for those stores to reach the
/// cache). The loads are volatile so that they are not merged into wider ones. Types whose
/// size or alignment is not a multiple of 8 are moved as usual.
///
/// # Safety
///
/// As [`std::ptr::read`]: `p` is valid, aligned, and the value is not used again.
#[inline(always)]
unsafe fn read_by_words<T>(p: *const T) -> T {
    if !std::mem::size_of::<T>().is_multiple_of(8) || std::mem::align_of::<T>() < 8 {
        // SAFETY: per this function's contract.
        return unsafe { std::ptr::read(p) };
    }
    let words = std::mem::size_of::<T>() / 8;
    let mut out = MaybeUninit::<T>::uninit();
    let (from, to) = (p as *const MaybeUninit<u64>, out.as_mut_ptr() as *mut MaybeUninit<u64>);
    for k in 0..words {
        // SAFETY: `k` words lie within both values (their size is `words` words and both are
        // aligned to 8); a word may hold padding, which `MaybeUninit` copies as it is.
        unsafe { to.add(k).write(std::ptr::read_volatile(from.add(k))) };
    }
    // SAFETY: every byte of `out` was copied from the value at `p`, which is not used again.
    unsafe { out.assume_init() }
}

/// [`take_input`] without the move: the input's address, valid until the coroutine that
/// received it switches away again (the frame that holds it is suspended until then).
#[inline(always)]
fn input_address<I>(addr: usize) -> *const I {
    if addr == 0 {
        resume_unwind(Box::new(ForcedUnwind));
    }
    addr as *const I
}

/// The coroutine's side: how it hands values back to its resumer.
pub(crate) struct Yielder<I, Y> {
    header: *mut Header,
    _types: PhantomData<fn(Y) -> I>,
}

impl<I, Y> Yielder<I, Y> {
    /// Hand `value` to the resumer and wait for the next input. Raises [`ForcedUnwind`] when
    /// the coroutine is dropped instead.
    #[inline(always)]
    pub(crate) fn suspend(&self, value: Y) -> I {
        self.to_resumer(value)
    }

    /// [`Yielder::suspend`], the value handled by the host on this stack when the coroutine
    /// was resumed hosted (see [`Host`]).
    #[inline(always)]
    pub(crate) fn suspend_hosted(&self, value: Y) -> I {
        let h = self.header;
        // The hook reads the value where it was built, and hands back the address of the
        // input where its sender built it, moved out here a word at a time: a copy in between,
        // or a wider load here, would read back bytes just written by narrower stores (a stall).
        let mut value = ManuallyDrop::new(value);
        let mut spare = MaybeUninit::<I>::uninit();
        // SAFETY: the header is this stack's; `hook` was set by `Coroutine::set_host` with
        // this coroutine's `I` and `Y` (see `hosted_suspend`): it moves the value out of
        // `value` or drops it, which is not used again, and returns the address of an input
        // that nothing reads or frees before this coroutine suspends again (in its sender's
        // suspended frame, or in `spare`), moved out here once.
        unsafe {
            if !(*h).host.is_null() && (*h).hook != 0 {
                let hook: unsafe fn(&Self, *mut Y, *mut I) -> *const I = std::mem::transmute((*h).hook);
                let input = hook(self, &raw mut *value, spare.as_mut_ptr());
                return read_by_words(input);
            }
        }
        self.to_resumer(ManuallyDrop::into_inner(value))
    }

    /// [`Yielder::leave`], giving the address of the next input instead of moving it out:
    /// it stays valid until this coroutine switches away again.
    #[inline(always)]
    fn leave_for_address(&self, addr: usize) -> *const I {
        // SAFETY: this runs on the coroutine's stack, whose resumer is suspended at
        // `parent_sp`; what `addr` points at is moved out by `read_step` before it switches
        // back.
        let input = unsafe {
            let h = self.header;
            switch(&raw mut (*h).co_sp, (*h).parent_sp, addr)
        };
        input_address(input)
    }

    /// Switch to the resumer with `addr` (tagged) and take the next input.
    #[inline(always)]
    fn leave(&self, addr: usize) -> I {
        // SAFETY: the input's sender does not touch it again: moved out once, here.
        unsafe { std::ptr::read(self.leave_for_address(addr)) }
    }

    #[inline(always)]
    fn to_resumer(&self, value: Y) -> I {
        let value = ManuallyDrop::new(Aligned(value));
        self.leave(&raw const value as usize | TAG_YIELD)
    }

    /// Switch straight to `to`, which is suspended (or not started), with its `input`: it is
    /// resumed by this coroutine's resumer and host. Returns the address of this coroutine's
    /// next input (see [`Yielder::leave_for_address`]).
    #[inline(always)]
    fn switch_to(&self, to: CoHandle, input: I) -> *const I {
        let input = ManuallyDrop::new(input);
        // SAFETY: `to` is another live coroutine's header (the host took it from the live
        // coroutine), not running; it gets this resume's resumer and host, and moves
        // `input` out before it switches anywhere.
        let next = unsafe {
            let (me, to) = (self.header, to.0);
            (*to).parent_sp = (*me).parent_sp;
            (*to).host = (*me).host;
            switch(&raw mut (*me).co_sp, (*to).co_sp, &raw const input as usize)
        };
        input_address(next)
    }
}

/// The hook of a hosted coroutine: the host handles `value` on this stack (a panic in it is
/// caught here and handed to the resumer), then this coroutine goes where the host says.
///
/// # Safety
///
/// Called from `Yielder::suspend` only, while the header's `host` is the `H` given to
/// [`resume_hosted`] (or carried along by a direct switch from a coroutine resumed so).
unsafe fn hosted_suspend<H: Host<I, Y>, I, Y>(y: &Yielder<I, Y>, value: *mut Y, spare: *mut I) -> *const I {
    // SAFETY: the header is this stack's.
    let host = unsafe { (*y.header).host as *mut H };
    let next = catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: per the contract, `host` is the resumer's `H`; this `&mut H` lives only
        // inside this closure, and no other reference to the host is used while it does
        // (the resumer is suspended in `switch`, its own reference below this one). `value`
        // is the suspending frame's, alive and untouched until this function returns.
        let (host, value) = unsafe { (&mut *host, &*value) };
        host.on_suspend(value)
    }));
    if let Ok(Next::Resumer) = next {
        // SAFETY: the suspending frame handed its value over (it keeps it in a
        // `ManuallyDrop`): moved out once, here.
        let value = ManuallyDrop::new(Aligned(unsafe { std::ptr::read(value) }));
        return y.leave_for_address(&raw const value as usize | TAG_YIELD);
    }
    // SAFETY: as above: the value is this function's to drop, once, and not used after.
    H::discard(unsafe { std::ptr::read(value) });
    match next {
        Ok(Next::Resumer) => unreachable!("handed to the resumer above"),
        Ok(Next::Handled) => y.leave_for_address(TAG_HANDLED),
        Ok(Next::Same(input)) => {
            // SAFETY: `spare` is the suspending frame's room for one input, unused so far.
            unsafe { spare.write(input) };
            spare
        }
        Ok(Next::Switch(to, input)) => y.switch_to(to, input),
        Err(payload) => {
            let payload = ManuallyDrop::new(Aligned(payload));
            y.leave_for_address(&raw const payload as usize | TAG_PANIC)
        }
    }
}

/// A closure on a stack of its own, resumed with `I`, suspending with `Y`, returning `R`.
pub(crate) struct Coroutine<I, Y, R> {
    stack: ManuallyDrop<DefaultStack>,
    header: *mut Header,
    drop_closure: unsafe fn(*mut u8),
    closure: *mut u8,
    _types: PhantomData<fn(I) -> (Y, R)>,
}

unsafe fn drop_in_place_as<F>(p: *mut u8) {
    // SAFETY: called only on the closure `with_stack` wrote at `p`, not moved out.
    unsafe { std::ptr::drop_in_place(p as *mut F) }
}

/// Room left at the top of the stack for the header, in bytes.
const HEADER_ROOM: usize = 64;

impl<I, Y, R> Coroutine<I, Y, R> {
    /// A coroutine that runs `f` on `stack` at its first resume.
    pub(crate) fn with_stack<F>(stack: DefaultStack, f: F) -> Self
    where
        F: FnOnce(&Yielder<I, Y>, I) -> R,
    {
        const { assert!(std::mem::size_of::<Header>() <= HEADER_ROOM) };
        let base = stack.base().get();
        let limit = stack.limit().get();
        assert!(std::mem::align_of::<F>() <= 4096 && std::mem::size_of::<F>() + 8192 < base - limit);
        let header = (base - HEADER_ROOM) & !15;
        let closure = (header - std::mem::size_of::<F>()) & !(std::mem::align_of::<F>() - 1) & !15;
        // `switch` pops six registers and returns into the trampoline, which calls `entry`
        // with the stack 16-byte aligned, as the ABI requires: the frame starts at 8 mod 16.
        // The trampoline's stack pointer is then at the header's address, for its unwind rule.
        let frame_at = closure - 9 * 8;
        let entry_fn: unsafe extern "sysv64" fn(usize, *mut F, *mut Header) -> ! = entry::<I, Y, R, F>;
        let tramp = trampoline as *const () as usize;
        let frame: [usize; 9] = [
            0,                 // r15
            0,                 // r14
            entry_fn as usize, // r13
            header,            // r12
            closure,           // rbx
            0,                 // rbp: where `switch` keeps the stack pointer
            tramp,             // return address
            header,            // read by the trampoline's unwind rule
            0,
        ];
        let fresh = Header {
            parent_sp: 0,
            link_ip: tramp,
            co_sp: frame_at + 5 * 8,
            host: std::ptr::null_mut(),
            hook: 0,
            started: false,
            done: false,
        };
        // SAFETY: every address written lies in the stack's mapping, above its guard page
        // (checked by the assertion above), and the stack is not in use.
        unsafe {
            std::ptr::write(closure as *mut F, f);
            std::ptr::write(frame_at as *mut [usize; 9], frame);
            std::ptr::write(header as *mut Header, fresh);
        }
        Coroutine {
            stack: ManuallyDrop::new(stack),
            header: header as *mut Header,
            drop_closure: drop_in_place_as::<F>,
            closure: closure as *mut u8,
            _types: PhantomData,
        }
    }

    /// Let a host of type `H` handle this coroutine's suspends in [`resume_hosted`].
    pub(crate) fn set_host<H: Host<I, Y>>(&mut self) {
        let hook: unsafe fn(&Yielder<I, Y>, *mut Y, *mut I) -> *const I = hosted_suspend::<H, I, Y>;
        // SAFETY: the header is this coroutine's, which is not running.
        unsafe { (*self.header).hook = hook as usize };
    }

    /// Whether the closure has returned (or panicked, or was unwound).
    pub(crate) fn done(&self) -> bool {
        // SAFETY: the header is this coroutine's, alive as long as it is.
        unsafe { (*self.header).done }
    }

    /// This coroutine's address for [`resume_hosted`] and [`Next::Switch`].
    #[inline(always)]
    pub(crate) fn handle(&self) -> CoHandle {
        CoHandle(self.header)
    }

    /// Run the coroutine until it suspends or ends, its suspends going to this caller. A
    /// panic that escaped its closure is raised again here.
    ///
    /// # Panics
    ///
    /// If the coroutine is done.
    #[inline(always)]
    pub(crate) fn resume(&mut self, input: I) -> CoroutineResult<Y, R> {
        // The handle of this live coroutine, which nothing else resumes: this holds it mutably.
        resume_plain(self.handle(), input)
    }

    /// The stack, once the coroutine is done, for another coroutine.
    pub(crate) fn into_stack(self) -> DefaultStack {
        assert!(self.done(), "the stack of a live coroutine taken");
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the stack is moved out once.
        unsafe { ManuallyDrop::take(&mut this.stack) }
    }
}

/// Resume the coroutine `co` with `input`, its suspends (and those of the coroutines it
/// switches to directly) handled by `host` on their stacks (see [`Host`]). Returns the step
/// of the coroutine that comes back to this caller, which may be another than `co`: the host
/// keeps track. A panic of the closure or of the host is raised again here.
///
/// `co` must be the handle of a live coroutine, not done, taken just before from its
/// [`Coroutine`] (whose `set_host` named `H`), that nothing else resumes meanwhile.
#[inline(always)]
pub(crate) fn resume_hosted<H: Host<I, Y>, I, Y, R>(co: CoHandle, host: &mut H, input: I) -> CoroutineResult<Y, R> {
    // SAFETY: per this function's contract; `host` is derived from the caller's unique
    // reference and only used through the coroutines' hooks until this returns.
    unsafe { enter(co.0, host as *mut H as *mut (), input) }
}

/// [`Coroutine::resume`] through the coroutine's handle, taken just before from the live
/// [`Coroutine`] (not done), that nothing else resumes meanwhile: its suspends go to this
/// caller. Lets the caller take the handle where it already holds the coroutine.
///
/// # Panics
///
/// If the coroutine is done.
#[inline(always)]
pub(crate) fn resume_plain<I, Y, R>(co: CoHandle, input: I) -> CoroutineResult<Y, R> {
    // SAFETY: per this function's contract, the header is a live coroutine's.
    assert!(!unsafe { (*co.0).done }, "a finished coroutine resumed");
    // SAFETY: per this function's contract: not running, not done; no host.
    unsafe { enter(co.0, std::ptr::null_mut(), input) }
}

/// Switch to the coroutine at `h` with `input` and `host`, and read the step handed back.
///
/// # Safety
///
/// `h` is a live coroutine's header, not running and not done; `host` is null or the host its
/// hook expects.
#[inline(always)]
unsafe fn enter<I, Y, R>(h: *mut Header, host: *mut (), input: I) -> CoroutineResult<Y, R> {
    let input = ManuallyDrop::new(input);
    // SAFETY: per this function's contract; the coroutine moves `input` out before it
    // switches anywhere, and hands back a tagged address `read_step` reads once.
    let step = unsafe {
        (*h).host = host;
        let out = switch(&raw mut (*h).parent_sp, (*h).co_sp, &raw const input as usize);
        read_step::<Y, R>(out)
    };
    match step {
        Step::Yield(y) => CoroutineResult::Yield(y),
        Step::Return(r) => CoroutineResult::Return(r),
        Step::Handled => CoroutineResult::Handled,
        Step::Panicked(payload) => resume_unwind(payload),
        Step::Unwound => panic!("a coroutine unwound by force outside its drop"),
    }
}

/// Read the step a coroutine handed back at `addr` (tagged, see `TAG_*`).
///
/// # Safety
///
/// `addr` is such an address, of a value the coroutine will not read again.
#[inline(always)]
unsafe fn read_step<Y, R>(addr: usize) -> Step<Y, R> {
    let p = addr & !3;
    // SAFETY: per the caller: the value the tag names, moved out once.
    unsafe {
        match addr & 3 {
            TAG_YIELD => Step::Yield(std::ptr::read(p as *const Aligned<Y>).0),
            TAG_HANDLED => Step::Handled,
            TAG_PANIC => Step::Panicked(std::ptr::read(p as *const Aligned<Box<dyn Any + Send>>).0),
            _ => match std::ptr::read(p as *const Aligned<Last<R>>).0 {
                Last::Return(r) => Step::Return(r),
                Last::Panicked(payload) => Step::Panicked(payload),
                Last::Unwound => Step::Unwound,
            },
        }
    }
}

impl<I, Y, R> Drop for Coroutine<I, Y, R> {
    fn drop(&mut self) {
        // SAFETY: the header is this coroutine's.
        let started = unsafe { (*self.header).started };
        if !started {
            // SAFETY: the closure was written by `with_stack` and never moved out.
            unsafe { (self.drop_closure)(self.closure) };
        } else if !self.done() {
            // Unwind it by force; a closure that catches the unwind and suspends again is
            // unwound again, a few times, then its stack is leaked rather than reused.
            for _ in 0..64 {
                // SAFETY: the coroutine is suspended; 0 asks its suspend point to unwind, and
                // the step it hands back is read once. No host: it comes back here.
                let step = unsafe {
                    let h = self.header;
                    (*h).host = std::ptr::null_mut();
                    let out = switch(&raw mut (*h).parent_sp, (*h).co_sp, 0);
                    read_step::<Y, R>(out)
                };
                drop(step);
                if self.done() {
                    break;
                }
            }
            if !self.done() {
                return;
            }
        }
        // SAFETY: dropped once, here, and no frame on it will run again.
        unsafe { ManuallyDrop::drop(&mut self.stack) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::rc::Rc;

    fn stack() -> DefaultStack {
        DefaultStack::new(64 * 1024).expect("a stack")
    }

    struct Counted(Rc<Cell<u32>>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn values_cross_both_ways_and_the_end_is_returned() {
        let mut co = Coroutine::with_stack(stack(), |y: &Yielder<String, String>, first: String| {
            let second = y.suspend(format!("{first}!"));
            second.len()
        });
        assert!(matches!(co.resume("a".into()), CoroutineResult::Yield(s) if s == "a!"));
        assert!(!co.done());
        assert!(matches!(co.resume("four".into()), CoroutineResult::Return(4)));
        assert!(co.done());
        let _stack = co.into_stack();
    }

    #[test]
    fn a_panic_in_the_closure_reaches_the_resumer() {
        let mut co = Coroutine::with_stack(stack(), |_: &Yielder<(), ()>, ()| -> () { panic!("boom") });
        let r = catch_unwind(AssertUnwindSafe(|| co.resume(())));
        assert_eq!(r.err().and_then(|p| p.downcast_ref::<&str>().copied()), Some("boom"));
        assert!(co.done());
    }

    #[test]
    fn a_suspended_coroutine_dropped_is_unwound_and_one_never_started_drops_its_closure() {
        let drops = Rc::new(Cell::new(0));
        let held = Counted(drops.clone());
        let mut co = Coroutine::with_stack(stack(), move |y: &Yielder<(), ()>, ()| {
            let _on_stack = held;
            loop {
                y.suspend(());
            }
        });
        assert!(matches!(co.resume(()), CoroutineResult::Yield(())));
        assert_eq!(drops.get(), 0);
        drop(co);
        assert_eq!(drops.get(), 1);
        let held = Counted(drops.clone());
        let co = Coroutine::with_stack(stack(), move |_: &Yielder<(), ()>, ()| drop(held));
        drop(co);
        assert_eq!(drops.get(), 2);
    }
}
