//! Thread sets and their execution-time budgets from C, with C callbacks for exhaustion and
//! replenishment; set up on a runtime before it runs.
//!
//! Owns the `tempi_set` ids (one word: the runtime handle's serial and the set's index) and
//! the budget parameters; must not reach into the kernel.

use std::collections::HashMap;
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{PoisonError, RwLock};
use std::time::Duration;

use tempi::{Budget, BudgetEvent, BudgetEventKind, Replenishment, SetId, ThreadId};

use crate::ctx::{tempi_ctx, thread_call};
use crate::params::{put, read_sized, text, Sized0};
use crate::runtime::{tempi_runtime, tempi_thread, State};
use crate::status::{guard, tempi_status, Failure};

/// A thread set of one runtime: non-zero, refused by every other runtime with `TEMPI_FOREIGN`.
pub type tempi_set = u64;

/// How a budget comes back (`tempi_budget_params.replenish`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_replenish {
    /// Never by itself.
    TEMPI_REPLENISH_MANUAL = 0,
    /// Refilled to the full amount every `period_ns` (a deferrable server with `"suspend"`).
    TEMPI_REPLENISH_PERIODIC = 1,
    /// The sporadic-server rule, period `period_ns`.
    TEMPI_REPLENISH_SPORADIC = 2,
    /// A constant bandwidth server (EDF), period `period_ns`.
    TEMPI_REPLENISH_CONSTANT_BANDWIDTH = 3,
}

/// What a budget callback is told.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_budget_event {
    /// `sizeof(tempi_budget_event)` of this library.
    pub size: usize,
    /// The set.
    pub set: tempi_set,
    /// 0: exhausted; 1: replenished.
    pub replenished: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// When, in ns.
    pub at_ns: u64,
    /// The set's CPU time consumed since the budget was set, in ns.
    pub consumed_ns: u64,
    /// What is left of the budget, in ns.
    pub remaining_ns: u64,
}

/// A budget callback: called inside the runtime at each exhaustion or replenishment; it
/// must not call the runtime and must return promptly.
pub type tempi_budget_callback = Option<unsafe extern "C" fn(event: *const tempi_budget_event, userdata: *mut c_void)>;

/// What `tempi_runtime_set_budget` sets. Set `size` to `sizeof(tempi_budget_params)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_budget_params {
    /// `sizeof(tempi_budget_params)` as the caller compiled it.
    pub size: usize,
    /// The budget's amount of CPU time, in ns.
    pub amount_ns: u64,
    /// A `tempi_replenish` value.
    pub replenish: u32,
    /// Reserved, zero.
    pub reserved: u32,
    /// The replenishment period in ns (not for `TEMPI_REPLENISH_MANUAL`).
    pub period_ns: u64,
    /// The action on exhaustion by name: `"notify"` (NULL), `"kill"`, `"suspend"`, `"demote"`.
    pub action: *const c_char,
    /// Called at each exhaustion and replenishment; NULL for none.
    pub on_event: tempi_budget_callback,
    /// Passed to `on_event`.
    pub userdata: *mut c_void,
}

// SAFETY: repr(C), size first, integer, pointer and nullable function-pointer fields only
// (every bit pattern of those is valid: null is None).
unsafe impl Sized0 for tempi_budget_params {
    fn defaults() -> tempi_budget_params {
        tempi_budget_params {
            size: std::mem::size_of::<tempi_budget_params>(),
            amount_ns: 0,
            replenish: 0,
            reserved: 0,
            period_ns: 0,
            action: std::ptr::null(),
            on_event: None,
            userdata: std::ptr::null_mut(),
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_budget_params>();
}

/// Every runtime handle's serial, the top half of its sets' ids.
static NEXT_SERIAL: AtomicU32 = AtomicU32::new(1);

/// The sets a runtime handle made, in order.
#[derive(Default)]
pub(crate) struct Sets {
    serial: u32,
    ids: Vec<SetId>,
}

impl Sets {
    pub(crate) fn new() -> Sets {
        Sets { serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed), ids: Vec::new() }
    }

    fn word(&self, index: usize) -> tempi_set {
        (u64::from(self.serial) << 32) | (index as u64 + 1)
    }

    /// Keep a set the runtime just made: its C id, also known to the thread-side calls.
    fn register(&mut self, id: SetId) -> tempi_set {
        self.ids.push(id);
        let word = self.word(self.ids.len() - 1);
        live_sets(|m| m.insert(word, id));
        word
    }

    pub(crate) fn id(&self, set: tempi_set) -> Result<SetId, Failure> {
        if (set >> 32) as u32 != self.serial {
            return Err(Failure::new(tempi_status::TEMPI_FOREIGN, format!("set {set:#x} is not of this runtime")));
        }
        let index = (set as u32 as usize).wrapping_sub(1);
        self.ids
            .get(index)
            .copied()
            .ok_or_else(|| Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, format!("set {set:#x} names no set")))
    }
}

impl Drop for Sets {
    fn drop(&mut self) {
        let words: Vec<tempi_set> = (0..self.ids.len()).map(|i| self.word(i)).collect();
        live_sets(|m| {
            for w in &words {
                m.remove(w);
            }
        });
    }
}

/// The sets of every live runtime handle by C id, for the calls of running threads (which
/// do not see their runtime's handle): written when a set is made and when its runtime
/// handle is freed, read by the thread-side budget calls.
static LIVE_SETS: RwLock<Option<HashMap<tempi_set, SetId>>> = RwLock::new(None);

fn live_sets<R>(f: impl FnOnce(&mut HashMap<tempi_set, SetId>) -> R) -> R {
    let mut g = LIVE_SETS.write().unwrap_or_else(PoisonError::into_inner);
    f(g.get_or_insert_with(HashMap::new))
}

/// The set C id `set` names, for a running thread (its runtime checks it is its own).
fn live_set(set: tempi_set) -> Result<SetId, Failure> {
    let g = LIVE_SETS.read().unwrap_or_else(PoisonError::into_inner);
    g.as_ref()
        .and_then(|m| m.get(&set).copied())
        .ok_or_else(|| Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, format!("set {set:#x} names no set")))
}

/// A callback and its user pointer, moved into the runtime.
struct CCallback {
    call: unsafe extern "C" fn(*const tempi_budget_event, *mut c_void),
    userdata: *mut c_void,
}

// SAFETY: the header's contract: a callback and its userdata may be called from the OS
// thread that runs the set's CPU.
unsafe impl Send for CCallback {}

impl CCallback {
    fn invoke(&self, event: &tempi_budget_event) {
        // SAFETY: the callback is a C function of this signature (the header's contract);
        // event outlives the call. A C function does not unwind.
        unsafe { (self.call)(event, self.userdata) };
    }
}

/// Create thread set `name` on `cpu` (its members must share the CPU in real time); its id
/// into `*out` (only on success).
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_set(
    rt: *mut tempi_runtime,
    name: *const c_char,
    cpu: u32,
    out: *mut tempi_set,
) -> tempi_status {
    guard("tempi_runtime_create_set", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or live (the header's contract).
        let (state, sets) = unsafe { tempi_runtime::live_with_sets(rt) }?;
        // SAFETY: name is null or NUL-terminated.
        let Some(name) = (unsafe { text(name, "name") })? else { return Err(Failure::null("name")) };
        let id = match state {
            State::Virtual(r) => r.create_set(name, cpu as usize)?,
            State::Real(r) => r.create_set(name, cpu as usize)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        };
        let word = sets.register(id);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, word, "out") }
    })
}

/// Make thread `thread` a member of `set` (a thread belongs to at most one set).
///
/// Not thread-safe with other calls on the same runtime.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_add_to_set(
    rt: *mut tempi_runtime,
    set: tempi_set,
    thread: tempi_thread,
) -> tempi_status {
    guard("tempi_runtime_add_to_set", || {
        // SAFETY: rt is null or live (the header's contract).
        let (state, sets) = unsafe { tempi_runtime::live_with_sets(rt) }?;
        let set = sets.id(set)?;
        let thread = ThreadId::from_raw(thread)
            .ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))?;
        match state {
            State::Virtual(r) => r.add_to_set(set, thread)?,
            State::Real(r) => r.add_to_set(set, thread)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        }
        Ok(())
    })
}

/// Make thread `thread` a member of `set` from a running thread (`Ctx::add_to_set`): the
/// thread may be the caller (`tempi_self`) and may run on another CPU in virtual time. A
/// thread already in a set is `TEMPI_REFUSED`; a set or thread of another runtime
/// `TEMPI_FOREIGN`; a set id no live runtime made `TEMPI_INVALID_ARGUMENT`.
///
/// Only from the running body of a thread of the set's runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_add_to_set; // see tests/c/membership.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_add_to_set(cx: *mut tempi_ctx, set: tempi_set, thread: tempi_thread) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_add_to_set", cx, |h| {
            let set = live_set(set)?;
            Ok(h.rust().add_to_set(set, thread_id(thread)?)?)
        })
    }
}

/// The CPU time the members of `set` have consumed (its group clock, `Ctx::set_cpu_time`),
/// in ns, into `*out` (only on success), including the running members' parts. A set of
/// another runtime is `TEMPI_FOREIGN`; a set id no live runtime made
/// `TEMPI_INVALID_ARGUMENT`.
///
/// Only from the running body of a thread of the set's runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_set_cpu_time; // see tests/c/membership.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_set_cpu_time(cx: *mut tempi_ctx, set: tempi_set, out: *mut u64) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe {
        thread_call("tempi_set_cpu_time", cx, |h| {
            let set = live_set(set)?;
            let d = h.rust().set_cpu_time(set)?;
            put(out, u64::try_from(d.as_nanos()).unwrap_or(u64::MAX), "out")
        })
    }
}

/// Remove thread `thread` from `set` from a running thread (`Ctx::remove_from_set`). A
/// thread that is not a member is `TEMPI_REFUSED`; otherwise the errors of
/// `tempi_add_to_set`.
///
/// Only from the running body of a thread of the set's runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_remove_from_set; // see tests/c/membership.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_remove_from_set(
    cx: *mut tempi_ctx,
    set: tempi_set,
    thread: tempi_thread,
) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_remove_from_set", cx, |h| {
            let set = live_set(set)?;
            Ok(h.rust().remove_from_set(set, thread_id(thread)?)?)
        })
    }
}

/// The thread `t` names, or the failure of a zero id.
fn thread_id(t: tempi_thread) -> Result<ThreadId, Failure> {
    ThreadId::from_raw(t).ok_or_else(|| Failure::new(tempi_status::TEMPI_UNKNOWN_THREAD, "thread 0 names no thread"))
}

/// Give `set` an execution-time budget as `params` says. A C body of a member killed or
/// stopped by it sees `TEMPI_INTERRUPTED` at its next call and must return.
///
/// Not thread-safe with other calls on the same runtime. The callback runs on the OS thread
/// that runs the set's CPU.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_set_budget(
    rt: *mut tempi_runtime,
    set: tempi_set,
    params: *const tempi_budget_params,
) -> tempi_status {
    guard("tempi_runtime_set_budget", || {
        // SAFETY: rt is null or live (the header's contract).
        let (state, sets) = unsafe { tempi_runtime::live_with_sets(rt) }?;
        let id = sets.id(set)?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        let period = Duration::from_nanos(p.period_ns);
        let invalid = |m: String| Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, m);
        let rule = match p.replenish {
            0 => Replenishment::Manual,
            1 => Replenishment::Periodic { period },
            2 => Replenishment::Sporadic { period },
            3 => Replenishment::ConstantBandwidth { period },
            other => return Err(invalid(format!("params->replenish is {other}: not a tempi_replenish"))),
        };
        // SAFETY: p.action is null or NUL-terminated.
        let action_name = unsafe { text(p.action, "params->action") }?.unwrap_or("notify");
        let Some(action) = tempi::policy::budget::by_name(action_name) else {
            let known = tempi::policy::budget::names().join(", ");
            return Err(Failure::new(
                tempi_status::TEMPI_UNKNOWN_NAME,
                format!("no budget action \"{action_name}\" (known: {known})"),
            ));
        };
        let mut budget = Budget::new(Duration::from_nanos(p.amount_ns)).replenish(rule).boxed_action(action);
        if let Some(call) = p.on_event {
            let cb = CCallback { call, userdata: p.userdata };
            budget = budget.on_event(move |e: &BudgetEvent| {
                let event = tempi_budget_event {
                    size: std::mem::size_of::<tempi_budget_event>(),
                    set,
                    replenished: u32::from(e.kind == BudgetEventKind::Replenished),
                    reserved: 0,
                    at_ns: e.at.as_nanos(),
                    consumed_ns: e.consumed.as_nanos() as u64,
                    remaining_ns: e.remaining.as_nanos() as u64,
                };
                cb.invoke(&event);
            });
        }
        match state {
            State::Virtual(r) => r.set_budget(id, budget)?,
            State::Real(r) => r.set_budget(id, budget)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        }
        Ok(())
    })
}

/// A server's kind (`tempi_runtime_create_server`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_server {
    /// Fixed priority: `capacity` every `period`, refilled to full at each period boundary;
    /// the members are suspended while it is used up (`Budget::deferrable_server`).
    TEMPI_SERVER_DEFERRABLE = 0,
    /// Fixed priority: the sporadic-server rule, time consumed comes back `period` after the
    /// active interval began; the members are suspended while it is used up
    /// (`Budget::sporadic_server`).
    TEMPI_SERVER_SPORADIC = 1,
    /// EDF: a constant bandwidth server, `capacity`/`period` of the CPU, its members scheduled
    /// by the server's deadline (`Budget::constant_bandwidth_server`).
    TEMPI_SERVER_CONSTANT_BANDWIDTH = 2,
}

/// Create a server on `cpu` before the run: a thread set named `name` with the budget of
/// `kind`, `capacity_ns` every `period_ns`; its id into `*out` (only on success). Its members
/// are added with `tempi_runtime_add_to_set`; give them the server's priority (fixed-priority
/// servers) or run under `"edf"` (constant bandwidth). A zero period or a kind that is not a
/// `tempi_server` is `TEMPI_INVALID_ARGUMENT`.
///
/// Not thread-safe with other calls on the same runtime.
///
/// ```
/// use tempi_c::*;
/// let (mut p, mut rt, mut set) = (std::mem::MaybeUninit::uninit(), std::ptr::null_mut(), 0);
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     let kind = tempi_server::TEMPI_SERVER_SPORADIC as u32;
///     assert_eq!(tempi_runtime_create_server(rt, c"ss".as_ptr(), 0, kind, 2_000_000, 10_000_000, &mut set),
///         tempi_status::TEMPI_OK);
///     assert_ne!(set, 0);
///     tempi_runtime_free(rt);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_server(
    rt: *mut tempi_runtime,
    name: *const c_char,
    cpu: u32,
    kind: u32,
    capacity_ns: u64,
    period_ns: u64,
    out: *mut tempi_set,
) -> tempi_status {
    guard("tempi_runtime_create_server", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        let (capacity, period) = (Duration::from_nanos(capacity_ns), Duration::from_nanos(period_ns));
        let invalid = |m: String| Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, m);
        if period.is_zero() {
            return Err(invalid("period_ns is 0: a server needs a period".into()));
        }
        let budget = match kind {
            0 => Budget::deferrable_server(capacity, period),
            1 => Budget::sporadic_server(capacity, period),
            2 => Budget::constant_bandwidth_server(capacity, period),
            other => return Err(invalid(format!("kind is {other}: not a tempi_server"))),
        };
        // SAFETY: rt is null or live (the header's contract).
        let (state, sets) = unsafe { tempi_runtime::live_with_sets(rt) }?;
        // SAFETY: name is null or NUL-terminated.
        let Some(name) = (unsafe { text(name, "name") })? else { return Err(Failure::null("name")) };
        let id = match state {
            State::Virtual(r) => {
                let id = r.create_set(name, cpu as usize)?;
                r.set_budget(id, budget)?;
                id
            }
            State::Real(r) => {
                let id = r.create_set(name, cpu as usize)?;
                r.set_budget(id, budget)?;
                id
            }
            State::Ended => unreachable!("live refuses an ended runtime"),
        };
        let word = sets.register(id);
        // SAFETY: out is non-null and writable.
        unsafe { put(out, word, "out") }
    })
}

/// What is left of `set`'s budget, in ns, into `*out` (only on success): Ada's
/// `Group_Budgets.Budget_Remaining`. A set without a budget is `TEMPI_REFUSED`.
///
/// Only from the running body of a thread of the set's runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_budget_remaining; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_budget_remaining(cx: *mut tempi_ctx, set: tempi_set, out: *mut u64) -> tempi_status {
    // SAFETY: forwarded contract; out is null or writable.
    unsafe {
        thread_call("tempi_budget_remaining", cx, |h| {
            let d = h.rust().budget_remaining(live_set(set)?)?;
            put(out, d.as_nanos() as u64, "out")
        })
    }
}

/// Set what is left of `set`'s budget to `to_ns` (Ada's `Group_Budgets.Replenish`): members
/// held for an exhausted budget run again.
///
/// Only from the running body of a thread of the set's runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_replenish_budget; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_replenish_budget(cx: *mut tempi_ctx, set: tempi_set, to_ns: u64) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe {
        thread_call("tempi_replenish_budget", cx, |h| {
            Ok(h.rust().replenish_budget(live_set(set)?, Duration::from_nanos(to_ns))?)
        })
    }
}

/// Add `delta_ns` (possibly negative) to what is left of `set`'s budget (Ada's
/// `Group_Budgets.Add`).
///
/// Only from the running body of a thread of the set's runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_add_budget; // see tests/c/timers.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_add_budget(cx: *mut tempi_ctx, set: tempi_set, delta_ns: i64) -> tempi_status {
    // SAFETY: forwarded contract.
    unsafe { thread_call("tempi_add_budget", cx, |h| Ok(h.rust().add_budget(live_set(set)?, delta_ns)?)) }
}
