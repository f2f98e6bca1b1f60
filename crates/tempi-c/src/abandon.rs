//! Leaving a C function that ignores its interrupt: a call into C that can be left again
//! without unwinding the frames in between, and the record of the threads whose C code was
//! left that way.
//!
//! A C frame cannot be unwound, and a body that keeps calling after `TEMPI_INTERRUPTED`
//! never returns by itself: in virtual time (and on a real-time CPU's dispatcher) nothing else
//! would ever run again. So each C function the library calls (a thread body, a critical
//! section, a handler's function) is entered through [`call_c`], which keeps the callee-saved
//! registers and the stack pointer of its own frame; [`leave`] restores them, so that
//! `call_c` returns a second time, with "abandoned", as if the C function had returned.
//! The frames in between (the C function's, and the entry point's Rust frames, which hold
//! nothing to drop at that point) are discarded, never unwound: whatever the C code held is
//! its loss, as it is when a process is killed. The caller then resumes the runtime's unwind
//! in Rust frames only, as if the function had returned.
//!
//! Owns the register save and restore and the record; must not decide when a function is
//! left (`ctx.rs` does).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

/// The registers saved by [`call_c`]: its frame's stack pointer, from which the rest are
/// restored.
#[repr(C)]
pub(crate) struct JumpBuf {
    sp: usize,
}

impl JumpBuf {
    pub(crate) const fn new() -> JumpBuf {
        JumpBuf { sp: 0 }
    }
}

// tempi_c_enter(buf, f, a0, a1, a2) calls f(a0, a1, a2) and returns 0; tempi_c_leave(buf),
// called from inside f (at any depth, on the same stack), returns from that tempi_c_enter
// with 1. The frame keeps rbp, rbx, r12-r15 and the MXCSR and x87 control words (callee-saved
// by the System V ABI), and buf holds its stack pointer.
std::arch::global_asm!(
    ".text",
    ".p2align 4",
    ".globl tempi_c_enter",
    ".hidden tempi_c_enter",
    ".type tempi_c_enter,@function",
    "tempi_c_enter:",
    ".cfi_startproc",
    "push rbp",
    ".cfi_adjust_cfa_offset 8",
    ".cfi_offset rbp, -16",
    "mov rbp, rsp",
    ".cfi_def_cfa_register rbp",
    "push rbx",
    ".cfi_offset rbx, -24",
    "push r12",
    ".cfi_offset r12, -32",
    "push r13",
    ".cfi_offset r13, -40",
    "push r14",
    ".cfi_offset r14, -48",
    "push r15",
    ".cfi_offset r15, -56",
    // 6 pushes and 24 bytes: the stack is 16-byte aligned at the call.
    "sub rsp, 24",
    "stmxcsr [rsp + 8]",
    "fnstcw [rsp + 12]",
    "mov [rdi], rsp",
    "mov rax, rsi",
    "mov rdi, rdx",
    "mov rsi, rcx",
    "mov rdx, r8",
    "call rax",
    "xor eax, eax",
    "add rsp, 24",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    ".cfi_def_cfa rsp, 8",
    "ret",
    ".cfi_endproc",
    ".size tempi_c_enter, . - tempi_c_enter",
    "",
    ".p2align 4",
    ".globl tempi_c_leave",
    ".hidden tempi_c_leave",
    ".type tempi_c_leave,@function",
    "tempi_c_leave:",
    ".cfi_startproc",
    "mov rsp, [rdi]",
    "ldmxcsr [rsp + 8]",
    "fldcw [rsp + 12]",
    "mov eax, 1",
    "add rsp, 24",
    "pop r15",
    "pop r14",
    "pop r13",
    "pop r12",
    "pop rbx",
    "pop rbp",
    "ret",
    ".cfi_endproc",
    ".size tempi_c_leave, . - tempi_c_leave",
);

unsafe extern "sysv64" {
    fn tempi_c_enter(buf: *mut JumpBuf, f: usize, a0: usize, a1: usize, a2: usize) -> u32;
    fn tempi_c_leave(buf: *mut JumpBuf) -> !;
}

/// Call the C function `f` with arguments `a0`, `a1`, `a2` (a function of fewer arguments
/// ignores the rest: they are passed in registers), keeping `buf` so that [`leave`] can
/// return here. Whether the function was left that way (abandoned) rather than returned.
///
/// # Safety
///
/// `f` is a C function taking at most three pointer or integer arguments, these; `buf`
/// stays where it is (and is not reused by another call) until this returns.
pub(crate) unsafe fn call_c(buf: &mut JumpBuf, f: usize, a0: usize, a1: usize, a2: usize) -> bool {
    // SAFETY: the caller's contract; tempi_c_enter is the function above, which preserves
    // every callee-saved register and returns once to here (normally, or through
    // tempi_c_leave from a frame it called).
    unsafe { tempi_c_enter(buf, f, a0, a1, a2) != 0 }
}

/// Leave the C function entered with `buf`: its [`call_c`] returns `true`.
///
/// # Safety
///
/// `buf` is that of a [`call_c`] still running on this stack, and every frame between it and
/// the caller may be discarded: C frames, and Rust frames that hold nothing to drop (what
/// they hold is leaked, never dropped).
pub(crate) unsafe fn leave(buf: *mut JumpBuf) -> ! {
    // SAFETY: the caller's contract.
    unsafe { tempi_c_leave(buf) }
}

/// For every thread whose C code was abandoned (by its raw id): how many times.
static ABANDONED: Mutex<Option<HashMap<u64, u64>>> = Mutex::new(None);

/// Note that C code running on thread `thread` was abandoned (a cold path: it allocates).
pub(crate) fn record(thread: u64) {
    let mut log = ABANDONED.lock().unwrap_or_else(PoisonError::into_inner);
    *log.get_or_insert_with(HashMap::new).entry(thread).or_insert(0) += 1;
}

/// How many times the C code of each of `threads` was abandoned, in their order; their
/// entries are taken out of the record.
pub(crate) fn take(threads: impl Iterator<Item = u64>) -> Vec<u64> {
    let mut log = ABANDONED.lock().unwrap_or_else(PoisonError::into_inner);
    match log.as_mut() {
        None => threads.map(|_| 0).collect(),
        Some(map) => threads.map(|t| map.remove(&t).unwrap_or(0)).collect(),
    }
}
