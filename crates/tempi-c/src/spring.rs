//! Spring thread groups from C: a plan executor on a runtime (`tempi_runtime_create_spring`),
//! groups declared with a builder (`tempi_group_new`, threads, tasks with C bodies or plain
//! work, predecessors, resources, locality, dependents), declared before the run or spawned
//! by a running thread synchronously or asynchronously, kills, and the plan's records in the
//! run's outcome.
//!
//! Owns the `tempi_spring` and `tempi_group` handles and the translation to
//! `tempi::spring`; must not reach into the executor or the planner.

use std::ffi::{c_char, c_void, CString};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tempi::policy::admit::planner::{
    Capacity, CostModel, Decision, GroupId, Heuristic, Locality, Placement, PlannerConfig, Rejection, ResourceId,
    TaskRequest,
};
use tempi::spring::{GroupDecision, GroupSpec, GroupThread, Spring, SpringSpec, Status, TaskCx, TaskOutcome, Ticket};
use tempi::{Ctx, Time};

use crate::ctx::{run_c, tempi_ctx, thread_call};
use crate::params::{put, read_sized, text, writable_size, write_sized, Sized0};
use crate::runtime::{tempi_runtime, State};
use crate::status::{guard, tempi_status, Failure};

/// What `tempi_runtime_create_spring` sets up. `tempi_spring_params_init` fills the defaults
/// (those of `PlannerConfig::new` and `SpringSpec::new`); every field is then taken as it is,
/// except the NULL names.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_spring_params {
    /// `sizeof(tempi_spring_params)` as the caller compiled it.
    pub size: usize,
    /// Resources tasks may hold (at most 65 536; default 0).
    pub resources: u32,
    /// Enforcement sets per CPU: planned threads alive at once per CPU that are held to
    /// their windows (default 8).
    pub sets_per_cpu: u32,
    /// Group releases declared before the run that may be pending at once (default 256).
    pub max_groups: u32,
    /// Backtracks allowed per request (default 8).
    pub max_backtracks: u32,
    /// The heuristic by name: `"d+w*est"` (NULL), `"min-d"`, `"min-s"` (`"est"`), `"min-l"`.
    pub heuristic: *const c_char,
    /// W of `"d+w*est"`, in thousandths (default 1000).
    pub weight_milli: u64,
    /// The placement rule by name: `"earliest"` (NULL) or `"only-local"`.
    pub placement: *const c_char,
    /// 1: prefer candidates whose CPU last ran a task of their own process (default 0).
    pub stay_within_process: u32,
    /// A task on its process's home CPU runs in this percentage of its WCET (default 100).
    pub local_percent: u32,
    /// The planner's declared worst-case time per request, in ns (default 450 ms).
    pub planner_wcet_ns: u64,
    /// Taken off that WCET to make the budget, in ns (default 50 ms).
    pub safety_ns: u64,
    /// The modelled cost of a request, whatever its size, in ns (default 1 µs).
    pub cost_fixed_ns: u64,
    /// The modelled cost of one evaluation, in ns (default 100 ns).
    pub cost_per_evaluation_ns: u64,
    /// Switching a CPU between tasks of one process, in ns (default 0).
    pub fast_switch_ns: u64,
    /// Switching a CPU between processes, in ns (default 0).
    pub slow_switch_ns: u64,
    /// Room in the plan's tables, in tasks (default 1024).
    pub max_tasks: u64,
    /// Real time: how often an answer owed is looked for, in ns (default 200 µs).
    pub poll_ns: u64,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_spring_params {
    fn defaults() -> tempi_spring_params {
        let p = PlannerConfig::new(1, 0);
        let s = SpringSpec::new(p);
        let ns = |d: Duration| d.as_nanos() as u64;
        tempi_spring_params {
            size: std::mem::size_of::<tempi_spring_params>(),
            resources: 0,
            sets_per_cpu: s.sets_per_cpu as u32,
            max_groups: s.max_groups as u32,
            max_backtracks: p.max_backtracks,
            heuristic: std::ptr::null(),
            weight_milli: 1000,
            placement: std::ptr::null(),
            stay_within_process: u32::from(p.stay_within_process),
            local_percent: p.local_percent,
            planner_wcet_ns: ns(p.planner_wcet),
            safety_ns: ns(p.safety),
            cost_fixed_ns: ns(p.cost.fixed),
            cost_per_evaluation_ns: ns(p.cost.per_evaluation),
            fast_switch_ns: ns(p.fast_switch),
            slow_switch_ns: ns(p.slow_switch),
            max_tasks: p.capacity.tasks as u64,
            poll_ns: ns(s.poll),
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_spring_params>();
}

/// A runtime's plan executor: owned by its runtime handle, valid until `tempi_runtime_free`.
pub struct tempi_spring {
    spring: Spring,
    /// The runtime it was made on: a thread of another is refused before its tickets are
    /// looked at.
    runtime: tempi::RuntimeId,
    /// This executor's serial, the top half of its tickets' words.
    serial: u32,
    /// The asynchronous requests' tickets, numbered from 1 in the bottom half of their words.
    tickets: Mutex<Vec<Ticket>>,
}

/// Every executor's serial, the top half of its tickets.
static NEXT_SERIAL: AtomicU32 = AtomicU32::new(1);

/// What a task's C body is told about its task.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_task_info {
    /// `sizeof(tempi_task_info)` of this library.
    pub size: usize,
    /// The task's group, as the plan numbers it.
    pub group: u64,
    /// Its thread, by index in the group.
    pub thread: u32,
    /// The task, by index in its thread.
    pub task: u32,
    /// Where the plan starts it, in ns.
    pub planned_start_ns: u64,
    /// Where the plan ends it, in ns: the task is stopped if it runs longer than its window.
    pub planned_finish_ns: u64,
    /// Its declared WCET, in ns.
    pub wcet_ns: u64,
}

/// A task's code: called once, at its planned start, on its thread. Its runtime calls are
/// those of a body (`cx`); after one answered `TEMPI_INTERRUPTED` it must return.
pub type tempi_task_fn =
    Option<unsafe extern "C" fn(cx: *mut tempi_ctx, task: *const tempi_task_info, userdata: *mut c_void)>;

/// A resource a task holds for its whole window (`tempi_task_params.uses`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_resource_use {
    /// The resource, below `tempi_spring_params.resources`.
    pub resource: u32,
    /// 1: exclusively; 0: shared.
    pub exclusive: u32,
}

/// A task of a group's thread (`tempi_group_add_task`). Set `size` to
/// `sizeof(tempi_task_params)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_task_params {
    /// `sizeof(tempi_task_params)` as the caller compiled it.
    pub size: usize,
    /// Its worst-case execution time, what the planner reserves, in ns.
    pub wcet_ns: u64,
    /// Without a body: the CPU time it works, stated against its WCET and scaled to its
    /// window as `tempi_task_scaled` does, in ns.
    pub work_ns: u64,
    /// Its code; NULL: it works `work_ns`.
    pub body: tempi_task_fn,
    /// Passed to `body`.
    pub userdata: *mut c_void,
    /// The resources it holds (`use_count` of them; NULL for none).
    pub uses: *const tempi_resource_use,
    /// How many `uses` has.
    pub use_count: usize,
}

// SAFETY: repr(C), size first, integer, pointer and nullable function-pointer fields only.
unsafe impl Sized0 for tempi_task_params {
    fn defaults() -> tempi_task_params {
        tempi_task_params {
            size: std::mem::size_of::<tempi_task_params>(),
            wcet_ns: 0,
            work_ns: 0,
            body: None,
            userdata: std::ptr::null_mut(),
            uses: std::ptr::null(),
            use_count: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_task_params>();
}

/// A task's C code and its user pointer, moved into the group.
#[derive(Clone, Copy)]
struct CTask {
    body: unsafe extern "C" fn(*mut tempi_ctx, *const tempi_task_info, *mut c_void),
    userdata: *mut c_void,
}

// SAFETY: the header's contract: a task's code and userdata are used by the OS thread that
// runs its planned CPU.
unsafe impl Send for CTask {}

/// What a task runs.
enum TaskCode {
    Work(Duration),
    C(CTask),
}

/// A declared thread of a group.
struct ThreadDecl {
    name: String,
    after: Vec<usize>,
    locality: Option<Locality>,
    tasks: Vec<(TaskRequest, TaskCode)>,
}

/// A thread group being declared (`tempi_group_new`), consumed by the call that plans it.
pub struct tempi_group {
    name: String,
    release: Time,
    deadline: Time,
    importance: u32,
    max_wait: Option<Duration>,
    threads: Vec<ThreadDecl>,
    dependents: Vec<tempi_group>,
}

impl tempi_group {
    /// The Rust group it declares.
    fn into_spec(self) -> GroupSpec {
        let mut g = GroupSpec::new(self.name, self.release, self.deadline).importance(self.importance);
        if let Some(w) = self.max_wait {
            g = g.max_wait(w);
        }
        for t in self.threads {
            let mut thread = GroupThread::new(t.name);
            for a in t.after {
                thread = thread.after(a);
            }
            if let Some(l) = t.locality {
                thread = thread.locality(l);
            }
            for (request, code) in t.tasks {
                thread = match code {
                    TaskCode::Work(actual) => thread.work(request, actual),
                    TaskCode::C(c) => thread.task(request, move |cx, task| run_task(cx, task, c)),
                };
            }
            g = g.thread(thread);
        }
        for d in self.dependents {
            g = g.dependent(d.into_spec());
        }
        g
    }
}

/// Run task code `c` for `task` on `cx`.
fn run_task(cx: &Ctx<'_>, task: &TaskCx<'_>, c: CTask) {
    let info = tempi_task_info {
        size: std::mem::size_of::<tempi_task_info>(),
        group: task.group.0,
        thread: task.thread as u32,
        task: task.task as u32,
        planned_start_ns: task.planned_start.as_nanos(),
        planned_finish_ns: task.planned_finish.as_nanos(),
        wcet_ns: task.wcet.as_nanos() as u64,
    };
    // SAFETY: the body is a C function taking (tempi_ctx *, const tempi_task_info *, void *)
    // (the header's contract); info outlives the call.
    unsafe { run_c(cx, c.body as usize, std::ptr::from_ref(&info) as usize, c.userdata as usize) }
}

/// Fill `params` with the defaults.
///
/// Thread-safe (touches only `*params`).
///
/// ```
/// let mut p = std::mem::MaybeUninit::uninit();
/// // SAFETY: p is writable.
/// assert_eq!(unsafe { tempi_c::tempi_spring_params_init(p.as_mut_ptr()) }, tempi_c::tempi_status::TEMPI_OK);
/// assert_eq!(unsafe { p.assume_init() }.planner_wcet_ns, 450_000_000);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_params_init(params: *mut tempi_spring_params) -> tempi_status {
    guard("tempi_spring_params_init", || {
        // SAFETY: params is null or writable (the header's contract).
        unsafe { put(params, tempi_spring_params::defaults(), "params") }
    })
}

/// The planner configuration `p` describes, for `cpus` CPUs.
///
/// # Safety
///
/// `p`'s names are null or NUL-terminated.
unsafe fn planner_of(p: &tempi_spring_params, cpus: usize) -> Result<PlannerConfig, Failure> {
    let ns = Duration::from_nanos;
    let unknown = |m: String| Failure::new(tempi_status::TEMPI_UNKNOWN_NAME, m);
    // SAFETY: the caller's contract.
    let h = unsafe { text(p.heuristic, "params->heuristic") }?.unwrap_or("d+w*est");
    let heuristic = Heuristic::by_name(h)
        .ok_or_else(|| unknown(format!("no heuristic \"{h}\" (known: d+w*est, min-d, min-s, est, min-l)")))?
        .with_weight_milli(p.weight_milli);
    // SAFETY: the caller's contract.
    let pl = unsafe { text(p.placement, "params->placement") }?.unwrap_or("earliest");
    let placement = Placement::by_name(pl)
        .ok_or_else(|| unknown(format!("no placement \"{pl}\" (known: earliest, only-local)")))?;
    let tasks = usize::try_from(p.max_tasks).unwrap_or(usize::MAX);
    Ok(PlannerConfig {
        heuristic,
        placement,
        stay_within_process: p.stay_within_process != 0,
        max_backtracks: p.max_backtracks,
        planner_wcet: ns(p.planner_wcet_ns),
        safety: ns(p.safety_ns),
        cost: CostModel { fixed: ns(p.cost_fixed_ns), per_evaluation: ns(p.cost_per_evaluation_ns) },
        local_percent: p.local_percent,
        fast_switch: ns(p.fast_switch_ns),
        slow_switch: ns(p.slow_switch_ns),
        capacity: Capacity::for_tasks(tasks),
        ..PlannerConfig::new(cpus, p.resources as usize)
    })
}

/// Set up Spring plan execution on `rt` as `params` says (its scheduler, which must be a
/// per-CPU one, is wrapped so that planned threads run above every other); `*out` (only on
/// success) is valid until the runtime is freed. One per runtime: a second is
/// `TEMPI_REFUSED`. An invalid planner configuration is `TEMPI_INVALID_ARGUMENT`.
///
/// Not thread-safe with other calls on the same runtime.
///
/// ```
/// use tempi_c::*;
/// let (mut p, mut sp, mut rt) = (std::mem::MaybeUninit::uninit(), std::mem::MaybeUninit::uninit(), std::ptr::null_mut());
/// let mut s = std::ptr::null_mut();
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     tempi_spring_params_init(sp.as_mut_ptr());
///     assert_eq!(tempi_runtime_create_spring(rt, sp.as_ptr(), &mut s), tempi_status::TEMPI_OK);
///     assert_eq!(tempi_runtime_create_spring(rt, sp.as_ptr(), &mut s), tempi_status::TEMPI_REFUSED);
///     tempi_runtime_free(rt);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_runtime_create_spring(
    rt: *mut tempi_runtime,
    params: *const tempi_spring_params,
    out: *mut *mut tempi_spring,
) -> tempi_status {
    guard("tempi_runtime_create_spring", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: rt is null or a live handle (the header's contract).
        let handle = unsafe { tempi_runtime::live_handle(rt) }?;
        if handle.owned.spring.is_some() {
            return Err(Failure::new(tempi_status::TEMPI_REFUSED, "the runtime already has a plan executor"));
        }
        // SAFETY: params is null or holds `size` readable bytes (the header's contract).
        let p = unsafe { read_sized(params, "params") }?;
        let cpus = match &handle.state {
            State::Virtual(r) => r.config().cpus(),
            State::Real(r) => r.config().cpus(),
            State::Ended => unreachable!("live_handle refuses an ended runtime"),
        };
        // SAFETY: p's names are null or NUL-terminated (the header's contract).
        let planner = unsafe { planner_of(&p, cpus) }?;
        let spec = SpringSpec {
            sets_per_cpu: p.sets_per_cpu as usize,
            max_groups: p.max_groups as usize,
            poll: Duration::from_nanos(p.poll_ns),
            ..SpringSpec::new(planner)
        };
        let (spring, runtime) = match &mut handle.state {
            State::Virtual(r) => (Spring::new(r, spec)?, r.id()),
            State::Real(r) => (Spring::new(r, spec)?, r.id()),
            State::Ended => unreachable!("live_handle refuses an ended runtime"),
        };
        let s = Arc::new(tempi_spring {
            spring,
            runtime,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            tickets: Mutex::new(Vec::new()),
        });
        let ptr = Arc::as_ptr(&s).cast_mut();
        handle.owned.spring = Some(s);
        // SAFETY: out is non-null and writable (checked above).
        unsafe { put(out, ptr, "out") }
    })
}

/// Begin declaring thread group `name`, released at `release_ns` and done by `deadline_ns`
/// (absolute, from the run's start); `*out` (only on success) is the caller's until a call
/// consumes it (`tempi_spring_add_group`, `tempi_spring_spawn_sync`,
/// `tempi_spring_spawn_async`, `tempi_group_add_dependent`) or `tempi_group_free`.
///
/// Thread-safe.
///
/// ```
/// let mut g = std::ptr::null_mut();
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     assert_eq!(tempi_c::tempi_group_new(c"g".as_ptr(), 0, 10_000_000, &mut g), tempi_c::tempi_status::TEMPI_OK);
///     tempi_c::tempi_group_free(g);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_group_new(
    name: *const c_char,
    release_ns: u64,
    deadline_ns: u64,
    out: *mut *mut tempi_group,
) -> tempi_status {
    guard("tempi_group_new", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: name is null or NUL-terminated (the header's contract).
        let Some(name) = (unsafe { text(name, "name") })? else { return Err(Failure::null("name")) };
        let g = Box::new(tempi_group {
            name: name.to_string(),
            release: Time::from_nanos(release_ns),
            deadline: Time::from_nanos(deadline_ns),
            importance: 0,
            max_wait: None,
            threads: Vec::new(),
            dependents: Vec::new(),
        });
        // SAFETY: out is non-null and writable.
        unsafe { put(out, Box::into_raw(g), "out") }
    })
}

/// Release a group that no call consumed. NULL is ignored.
///
/// Not thread-safe with other calls on the same group.
///
/// ```
/// // SAFETY: NULL is ignored.
/// unsafe { tempi_c::tempi_group_free(std::ptr::null_mut()) };
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_group_free(g: *mut tempi_group) {
    guard("tempi_group_free", || {
        if !g.is_null() {
            // SAFETY: g came from Box::into_raw in tempi_group_new and is freed once.
            drop(unsafe { Box::from_raw(g) });
        }
        Ok(())
    });
}

/// # Safety
///
/// `g` is null or a live group of the caller's.
unsafe fn group<'a>(g: *mut tempi_group) -> Result<&'a mut tempi_group, Failure> {
    // SAFETY: the caller's contract.
    unsafe { g.as_mut() }.ok_or_else(|| Failure::null("g"))
}

/// Take group `g` back from C.
///
/// # Safety
///
/// `g` is null or a live group of the caller's, not used again.
unsafe fn consume(g: *mut tempi_group) -> Result<tempi_group, Failure> {
    if g.is_null() {
        return Err(Failure::null("g"));
    }
    // SAFETY: g came from Box::into_raw in tempi_group_new (the caller's contract).
    Ok(*unsafe { Box::from_raw(g) })
}

/// Set the group's importance (recorded with the plan) and the most its request may wait for
/// an answer, in ns (0: the planner's WCET).
///
/// Not thread-safe with other calls on the same group.
///
/// ```
/// let mut g = std::ptr::null_mut();
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_c::tempi_group_new(c"g".as_ptr(), 0, 10_000_000, &mut g);
///     assert_eq!(tempi_c::tempi_group_set(g, 3, 1_000_000), tempi_c::tempi_status::TEMPI_OK);
///     tempi_c::tempi_group_free(g);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_group_set(g: *mut tempi_group, importance: u32, max_wait_ns: u64) -> tempi_status {
    guard("tempi_group_set", || {
        // SAFETY: g is null or live (the header's contract).
        let g = unsafe { group(g) }?;
        g.importance = importance;
        g.max_wait = (max_wait_ns != 0).then(|| Duration::from_nanos(max_wait_ns));
        Ok(())
    })
}

/// Add thread `name` to the group; its index (from 0, in order of addition) into `*out`
/// (only on success). It starts after every task of the threads `after` lists (`after_count`
/// indices, each smaller than its own; NULL for none). `process` other than 0 places it in
/// that process with home CPU `home_cpu` (the planner's locality model).
///
/// Not thread-safe with other calls on the same group.
///
/// ```
/// let (mut g, mut a, mut b) = (std::ptr::null_mut(), 9, 9);
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_c::tempi_group_new(c"g".as_ptr(), 0, 10_000_000, &mut g);
///     tempi_c::tempi_group_add_thread(g, c"a".as_ptr(), std::ptr::null(), 0, 0, 0, &mut a);
///     tempi_c::tempi_group_add_thread(g, c"b".as_ptr(), &a, 1, 0, 0, &mut b);
///     assert_eq!((a, b), (0, 1));
///     tempi_c::tempi_group_free(g);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_group_add_thread(
    g: *mut tempi_group,
    name: *const c_char,
    after: *const u32,
    after_count: usize,
    process: u32,
    home_cpu: u32,
    out: *mut u32,
) -> tempi_status {
    guard("tempi_group_add_thread", || {
        if out.is_null() {
            return Err(Failure::null("out"));
        }
        // SAFETY: g is null or live (the header's contract).
        let g = unsafe { group(g) }?;
        // SAFETY: name is null or NUL-terminated.
        let Some(name) = (unsafe { text(name, "name") })? else { return Err(Failure::null("name")) };
        let after: Vec<usize> = if after_count == 0 {
            Vec::new()
        } else if after.is_null() {
            return Err(Failure::null("after"));
        } else {
            // SAFETY: after holds after_count readable indices (the header's contract).
            unsafe { std::slice::from_raw_parts(after, after_count) }.iter().map(|&a| a as usize).collect()
        };
        let locality = match u16::try_from(home_cpu) {
            _ if process == 0 => None,
            Ok(home_cpu) => Some(Locality { process, home_cpu }),
            Err(_) => {
                return Err(Failure::new(
                    tempi_status::TEMPI_INVALID_ARGUMENT,
                    format!("home_cpu {home_cpu} is too large"),
                ))
            }
        };
        let index = g.threads.len() as u32;
        g.threads.push(ThreadDecl { name: name.to_string(), after, locality, tasks: Vec::new() });
        // SAFETY: out is non-null and writable.
        unsafe { put(out, index, "out") }
    })
}

/// Add a task to thread `thread` of the group, as `params` says: after its thread's earlier
/// tasks. A thread index the group does not have is `TEMPI_OUT_OF_RANGE`; a resource beyond
/// the planner's is found when the group is planned (`TEMPI_INVALID_ARGUMENT` there).
///
/// Not thread-safe with other calls on the same group.
///
/// ```
/// use tempi_c::*;
/// let (mut g, mut a) = (std::ptr::null_mut(), 0);
/// let mut t = std::mem::MaybeUninit::<tempi_task_params>::zeroed();
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_group_new(c"g".as_ptr(), 0, 10_000_000, &mut g);
///     tempi_group_add_thread(g, c"a".as_ptr(), std::ptr::null(), 0, 0, 0, &mut a);
///     let t = t.as_mut_ptr();
///     (*t).size = std::mem::size_of::<tempi_task_params>();
///     (*t).wcet_ns = 1_000_000;
///     (*t).work_ns = 1_000_000;
///     assert_eq!(tempi_group_add_task(g, a, t), tempi_status::TEMPI_OK);
///     assert_eq!(tempi_group_add_task(g, 7, t), tempi_status::TEMPI_OUT_OF_RANGE);
///     tempi_group_free(g);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_group_add_task(
    g: *mut tempi_group,
    thread: u32,
    params: *const tempi_task_params,
) -> tempi_status {
    guard("tempi_group_add_task", || {
        // SAFETY: g is null or live (the header's contract).
        let g = unsafe { group(g) }?;
        // SAFETY: params is null or holds `size` readable bytes.
        let p = unsafe { read_sized(params, "params") }?;
        let count = g.threads.len();
        let Some(t) = g.threads.get_mut(thread as usize) else {
            return Err(Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("thread {thread}: the group has {count} threads"),
            ));
        };
        let mut request = TaskRequest::new(Duration::from_nanos(p.wcet_ns));
        if p.use_count != 0 {
            if p.uses.is_null() {
                return Err(Failure::null("params->uses"));
            }
            // SAFETY: uses holds use_count readable entries (the header's contract).
            for u in unsafe { std::slice::from_raw_parts(p.uses, p.use_count) } {
                let r = u16::try_from(u.resource).map_err(|_| {
                    Failure::new(tempi_status::TEMPI_INVALID_ARGUMENT, format!("resource {} is too large", u.resource))
                })?;
                request =
                    if u.exclusive != 0 { request.exclusive(ResourceId(r)) } else { request.shared(ResourceId(r)) };
            }
        }
        let code = match p.body {
            Some(body) => TaskCode::C(CTask { body, userdata: p.userdata }),
            None => TaskCode::Work(Duration::from_nanos(p.work_ns)),
        };
        t.tasks.push((request, code));
        Ok(())
    })
}

/// Make `child` a dependent of `g`: planned with it, whenever it is planned, and guaranteed
/// with it or not at all. `child` is consumed (even when the call fails).
///
/// Not thread-safe with other calls on the same groups.
///
/// ```
/// let (mut g, mut d) = (std::ptr::null_mut(), std::ptr::null_mut());
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_c::tempi_group_new(c"g".as_ptr(), 0, 10_000_000, &mut g);
///     tempi_c::tempi_group_new(c"d".as_ptr(), 0, 20_000_000, &mut d);
///     assert_eq!(tempi_c::tempi_group_add_dependent(g, d), tempi_c::tempi_status::TEMPI_OK);
///     tempi_c::tempi_group_free(g);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_group_add_dependent(g: *mut tempi_group, child: *mut tempi_group) -> tempi_status {
    guard("tempi_group_add_dependent", || {
        // SAFETY: child is null or a live group of the caller's, consumed here.
        let child = unsafe { consume(child) }?;
        // SAFETY: g is null or live.
        let g = unsafe { group(g) }?;
        g.dependents.push(child);
        Ok(())
    })
}

/// # Safety
///
/// `s` is null or a live executor.
unsafe fn spring<'a>(s: *mut tempi_spring) -> Result<&'a tempi_spring, Failure> {
    // SAFETY: the caller's contract.
    unsafe { s.cast_const().as_ref() }.ok_or_else(|| Failure::null("s"))
}

/// Declare group `g` before the run: it is planned at its release by the planner's thread.
/// `g` is consumed (even when the call fails). A malformed group (no thread, a thread without
/// a task, a deadline before the release, a bad predecessor, resource or home CPU) is
/// `TEMPI_INVALID_ARGUMENT`, naming it; an executor of another runtime `TEMPI_FOREIGN`.
///
/// Not thread-safe with other calls on the same runtime.
///
/// ```
/// use tempi_c::*;
/// let (mut p, mut sp, mut rt, mut s, mut g) =
///     (std::mem::MaybeUninit::uninit(), std::mem::MaybeUninit::uninit(), std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut());
/// // SAFETY: the pointers are valid for the calls.
/// unsafe {
///     tempi_runtime_params_init(p.as_mut_ptr());
///     tempi_runtime_new(p.as_ptr(), &mut rt);
///     tempi_spring_params_init(sp.as_mut_ptr());
///     tempi_runtime_create_spring(rt, sp.as_ptr(), &mut s);
///     tempi_group_new(c"empty".as_ptr(), 0, 10_000_000, &mut g);
///     assert_eq!(tempi_spring_add_group(rt, s, g), tempi_status::TEMPI_INVALID_ARGUMENT);
///     tempi_runtime_free(rt);
/// }
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_add_group(
    rt: *mut tempi_runtime,
    s: *mut tempi_spring,
    g: *mut tempi_group,
) -> tempi_status {
    guard("tempi_spring_add_group", || {
        // SAFETY: g is null or a live group of the caller's, consumed here.
        let g = unsafe { consume(g) }?;
        // SAFETY: s is null or a live executor; rt null or live (the header's contract).
        let s = unsafe { spring(s) }?;
        // SAFETY: as above.
        let state = unsafe { tempi_runtime::live(rt) }?;
        let spec = g.into_spec();
        match state {
            State::Virtual(r) => s.spring.add_group(r, spec)?,
            State::Real(r) => s.spring.add_group(r, spec)?,
            State::Ended => unreachable!("live refuses an ended runtime"),
        }
        Ok(())
    })
}

/// Why the planner refused a group (`tempi_plan_answer.rejection`,
/// `tempi_spring_decision.rejection`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_rejection {
    /// Not refused: accepted.
    TEMPI_REJECTION_NONE = 0,
    /// The budget did not cover one evaluation per task: the search did not start.
    TEMPI_REJECTION_BUDGET_TOO_SMALL = 1,
    /// The search ran out of budget before finding a plan.
    TEMPI_REJECTION_BUDGET_EXHAUSTED = 2,
    /// Every schedule tried missed a deadline.
    TEMPI_REJECTION_INFEASIBLE = 3,
}

fn rejection_of(d: Decision) -> tempi_rejection {
    match d {
        Decision::Accepted(_) => tempi_rejection::TEMPI_REJECTION_NONE,
        Decision::Rejected(Rejection::BudgetTooSmall { .. }) => tempi_rejection::TEMPI_REJECTION_BUDGET_TOO_SMALL,
        Decision::Rejected(Rejection::BudgetExhausted) => tempi_rejection::TEMPI_REJECTION_BUDGET_EXHAUSTED,
        Decision::Rejected(Rejection::Infeasible) => tempi_rejection::TEMPI_REJECTION_INFEASIBLE,
    }
}

/// The planner's answer to a synchronous spawn.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_plan_answer {
    /// Set by the caller to `sizeof(tempi_plan_answer)`.
    pub size: usize,
    /// The group's id in the plan when accepted (for `tempi_spring_kill_id`); 0 otherwise.
    pub group: u64,
    /// 1 if accepted.
    pub accepted: u32,
    /// A `tempi_rejection` value.
    pub rejection: u32,
}

// SAFETY: repr(C), size first, integer fields only.
unsafe impl Sized0 for tempi_plan_answer {
    fn defaults() -> tempi_plan_answer {
        tempi_plan_answer { size: std::mem::size_of::<tempi_plan_answer>(), group: 0, accepted: 0, rejection: 0 }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_plan_answer>();
}

/// Synchronous spawn from a running thread: plan group `g` now (a release before now is
/// raised to now), wait until the planner's answer is known (its modelled time in virtual
/// time, at most the group's `max_wait` in real time), and write it to `*out`, whose `size`
/// the caller set. **`TEMPI_OK`**: guaranteed, its threads spawned; **`TEMPI_REJECTED`**:
/// refused, nothing changed, and `*out` says why (like `TEMPI_NACK`, a failure that writes
/// its answer). `g` is consumed (even when the call fails). A malformed group or full tables
/// are `TEMPI_INVALID_ARGUMENT`, an executor of another runtime `TEMPI_FOREIGN`.
///
/// Only from the running body of a thread of `s`'s runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_spring_spawn_sync; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_spawn_sync(
    cx: *mut tempi_ctx,
    s: *mut tempi_spring,
    g: *mut tempi_group,
    out: *mut tempi_plan_answer,
) -> tempi_status {
    // SAFETY: g is null or a live group of the caller's, consumed here (also when cx is
    // null or interrupted: the call's closure, which owns it, is dropped then).
    let group = unsafe { consume(g) };
    // SAFETY: forwarded contract; s null or live, out null or holding (*out).size bytes.
    unsafe {
        thread_call("tempi_spring_spawn_sync", cx, move |h| {
            let g = group?;
            let s = spring(s)?;
            writable_size(out, "out")?;
            let d = s.spring.spawn_sync(h.rust(), g.into_spec())?;
            let answer = tempi_plan_answer {
                size: std::mem::size_of::<tempi_plan_answer>(),
                group: match d {
                    Decision::Accepted(GroupId(id)) => id,
                    Decision::Rejected(_) => 0,
                },
                accepted: u32::from(d.is_accepted()),
                rejection: rejection_of(d) as u32,
            };
            write_sized(out, &answer, "out")?;
            if d.is_accepted() {
                Ok(())
            } else {
                Err(Failure::new(tempi_status::TEMPI_REJECTED, "the planner refused the group"))
            }
        })
    }
}

/// Asynchronous spawn from a running thread: plan group `g` now and return at once with a
/// ticket into `*out` (only on success) for `tempi_spring_status`. `g` is consumed (even
/// when the call fails). Errors as for `tempi_spring_spawn_sync`.
///
/// Only from the running body of a thread of `s`'s runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_spring_spawn_async; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_spawn_async(
    cx: *mut tempi_ctx,
    s: *mut tempi_spring,
    g: *mut tempi_group,
    out: *mut u64,
) -> tempi_status {
    // SAFETY: as in tempi_spring_spawn_sync.
    let group = unsafe { consume(g) };
    // SAFETY: forwarded contract; s null or live, out null or writable.
    unsafe {
        thread_call("tempi_spring_spawn_async", cx, move |h| {
            let g = group?;
            let s = spring(s)?;
            if out.is_null() {
                return Err(Failure::null("out"));
            }
            let ticket = s.spring.spawn_async(h.rust(), g.into_spec())?;
            let mut tickets = s.tickets.lock().unwrap_or_else(PoisonError::into_inner);
            tickets.push(ticket);
            let word = (u64::from(s.serial) << 32) | tickets.len() as u64;
            drop(tickets);
            put(out, word, "out")
        })
    }
}

/// The answer to an asynchronous request (`tempi_spring_status`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_plan_status {
    /// The planner's answer is not known yet (its modelled time has not passed).
    TEMPI_PLAN_UNKNOWN = 0,
    /// Guaranteed.
    TEMPI_PLAN_YES = 1,
    /// Refused.
    TEMPI_PLAN_NO = 2,
}

/// The answer to the asynchronous request `ticket` as known now, into `*out` (only on
/// success). A ticket is a non-zero word of its executor's: one another executor gave (or
/// 0) is `TEMPI_FOREIGN`, as is an executor of another runtime than the caller's; a ticket
/// of `s`'s it did not give `TEMPI_OUT_OF_RANGE`.
///
/// Only from the running body of a thread of `s`'s runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_spring_status; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_status(
    cx: *mut tempi_ctx,
    s: *mut tempi_spring,
    ticket: u64,
    out: *mut tempi_plan_status,
) -> tempi_status {
    // SAFETY: forwarded contract; s null or live, out null or writable.
    unsafe {
        thread_call("tempi_spring_status", cx, |h| {
            let s = spring(s)?;
            if out.is_null() {
                return Err(Failure::null("out"));
            }
            if h.rust().runtime_id() != s.runtime {
                return Err(Failure::from(tempi::Error::ForeignRuntime));
            }
            if (ticket >> 32) as u32 != s.serial {
                return Err(Failure::new(
                    tempi_status::TEMPI_FOREIGN,
                    format!("ticket {ticket:#x} is not of this executor"),
                ));
            }
            let t = {
                let tickets = s.tickets.lock().unwrap_or_else(PoisonError::into_inner);
                (ticket as u32 as usize).checked_sub(1).and_then(|i| tickets.get(i).copied())
            };
            let Some(t) = t else {
                return Err(Failure::new(tempi_status::TEMPI_OUT_OF_RANGE, format!("no ticket {ticket:#x}")));
            };
            let status = match s.spring.status(h.rust(), t)? {
                Status::Unknown => tempi_plan_status::TEMPI_PLAN_UNKNOWN,
                Status::Yes => tempi_plan_status::TEMPI_PLAN_YES,
                Status::No => tempi_plan_status::TEMPI_PLAN_NO,
            };
            put(out, status, "out")
        })
    }
}

/// Kill the most recently accepted live group called `name`: its tasks that have not
/// started leave the plan and its threads end at their next task boundary. How many tasks
/// left the plan into `*out` (only on success); no live group of that name is
/// `TEMPI_NO_MATCH`.
///
/// Only from the running body of a thread of `s`'s runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_spring_kill; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_kill(
    cx: *mut tempi_ctx,
    s: *mut tempi_spring,
    name: *const c_char,
    out: *mut u64,
) -> tempi_status {
    // SAFETY: forwarded contract; s null or live, name null or NUL-terminated, out null or
    // writable.
    unsafe {
        thread_call("tempi_spring_kill", cx, |h| {
            let s = spring(s)?;
            let Some(name) = text(name, "name")? else { return Err(Failure::null("name")) };
            if out.is_null() {
                return Err(Failure::null("out"));
            }
            match s.spring.kill(h.rust(), name)? {
                Some((_, removed)) => put(out, removed as u64, "out"),
                None => Err(Failure::new(tempi_status::TEMPI_NO_MATCH, format!("no live group \"{name}\""))),
            }
        })
    }
}

/// Kill the live group `group` (its id from `tempi_plan_answer.group` or a decision), as
/// `tempi_spring_kill` does by name.
///
/// Only from the running body of a thread of `s`'s runtime, with its own `cx`.
///
/// ```
/// let _ = tempi_c::tempi_spring_kill_id; // see examples/c/spring.c
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_spring_kill_id(
    cx: *mut tempi_ctx,
    s: *mut tempi_spring,
    group: u64,
    out: *mut u64,
) -> tempi_status {
    // SAFETY: forwarded contract; s null or live, out null or writable.
    unsafe {
        thread_call("tempi_spring_kill_id", cx, |h| {
            let s = spring(s)?;
            if out.is_null() {
                return Err(Failure::null("out"));
            }
            match s.spring.kill_id(h.rust(), GroupId(group))? {
                Some((_, removed)) => put(out, removed as u64, "out"),
                None => Err(Failure::new(tempi_status::TEMPI_NO_MATCH, format!("no live group {group}"))),
            }
        })
    }
}

/// `demand`, stated against the task's WCET, scaled to its planned window (`demand × window
/// / wcet`, rounded down), into `*out`: what a task working its WCET works to fill its window.
///
/// Thread-safe.
///
/// ```
/// use tempi_c::*;
/// let t = tempi_task_info { size: std::mem::size_of::<tempi_task_info>(), group: 1, thread: 0, task: 0,
///     planned_start_ns: 0, planned_finish_ns: 4, wcet_ns: 5 };
/// let mut n = 0;
/// // SAFETY: the pointers are valid.
/// assert_eq!(unsafe { tempi_task_scaled(&t, 5, &mut n) }, tempi_status::TEMPI_OK);
/// assert_eq!(n, 4);
/// ```
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tempi_task_scaled(
    task: *const tempi_task_info,
    demand_ns: u64,
    out: *mut u64,
) -> tempi_status {
    guard("tempi_task_scaled", || {
        // SAFETY: task is null or readable (the header's contract).
        let Some(t) = (unsafe { task.as_ref() }) else { return Err(Failure::null("task")) };
        let window = u128::from(t.planned_finish_ns.saturating_sub(t.planned_start_ns));
        let scaled = if t.wcet_ns == 0 {
            demand_ns
        } else {
            u64::try_from(u128::from(demand_ns) * window / u128::from(t.wcet_ns)).unwrap_or(u64::MAX)
        };
        // SAFETY: out is null or writable.
        unsafe { put(out, scaled, "out") }
    })
}

/// What became of a planned task (`tempi_spring_task.outcome`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum tempi_task_outcome {
    /// Not started.
    TEMPI_TASK_PLANNED = 0,
    /// Started, not finished when the run ended.
    TEMPI_TASK_RUNNING = 1,
    /// Ran to its end within its window.
    TEMPI_TASK_COMPLETED = 2,
    /// Reached the end of its window unfinished and was stopped there; its group was killed.
    TEMPI_TASK_OVERRUN = 3,
    /// Never ran (its group was killed first), or stopped by a kill of its thread.
    TEMPI_TASK_KILLED = 4,
    /// Its code panicked.
    TEMPI_TASK_PANICKED = 5,
}

/// One task of an accepted group, planned and actual (`tempi_outcome_spring_task`). Times in
/// ns; `UINT64_MAX` for an instant that did not come.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_spring_task {
    /// Set by the caller to `sizeof(tempi_spring_task)`.
    pub size: usize,
    /// The group's name, valid while the outcome lives.
    pub group: *const c_char,
    /// The thread's name, valid while the outcome lives.
    pub thread: *const c_char,
    /// The task's index in its thread.
    pub task: u32,
    /// Its CPU.
    pub cpu: u32,
    /// Planned start (as the plan stood when it started).
    pub planned_start_ns: u64,
    /// Planned finish.
    pub planned_finish_ns: u64,
    /// When it started running.
    pub actual_start_ns: u64,
    /// When it ended.
    pub actual_finish_ns: u64,
    /// A `tempi_task_outcome` value.
    pub outcome: u32,
    /// Reserved, zero.
    pub reserved: u32,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_spring_task {
    fn defaults() -> tempi_spring_task {
        tempi_spring_task {
            size: std::mem::size_of::<tempi_spring_task>(),
            group: std::ptr::null(),
            thread: std::ptr::null(),
            task: 0,
            cpu: 0,
            planned_start_ns: 0,
            planned_finish_ns: 0,
            actual_start_ns: u64::MAX,
            actual_finish_ns: u64::MAX,
            outcome: 0,
            reserved: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_spring_task>();
}

/// One planner answer (`tempi_outcome_spring_decision`). Times in ns.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct tempi_spring_decision {
    /// Set by the caller to `sizeof(tempi_spring_decision)`.
    pub size: usize,
    /// The group's name, valid while the outcome lives.
    pub group: *const c_char,
    /// Its id in the plan if accepted, else 0.
    pub id: u64,
    /// 1 if accepted.
    pub accepted: u32,
    /// A `tempi_rejection` value.
    pub rejection: u32,
    /// When the request was made.
    pub requested_ns: u64,
    /// When the answer was known (the request plus the planner's time).
    pub decided_ns: u64,
    /// Tasks planned: the request's and the replanned guaranteed ones.
    pub tasks: u64,
    /// Candidates per step.
    pub k: u64,
    /// Evaluations made.
    pub evaluations: u64,
    /// Backtracks made.
    pub backtracks: u64,
    /// The planner's time (modelled in virtual time, measured in real time).
    pub cost_ns: u64,
    /// The budget the request had.
    pub budget_ns: u64,
    /// The cutoff line.
    pub cutoff_ns: u64,
}

// SAFETY: repr(C), size first, integer and pointer fields only.
unsafe impl Sized0 for tempi_spring_decision {
    fn defaults() -> tempi_spring_decision {
        tempi_spring_decision {
            size: std::mem::size_of::<tempi_spring_decision>(),
            group: std::ptr::null(),
            id: 0,
            accepted: 0,
            rejection: 0,
            requested_ns: 0,
            decided_ns: 0,
            tasks: 0,
            k: 0,
            evaluations: 0,
            backtracks: 0,
            cost_ns: 0,
            budget_ns: 0,
            cutoff_ns: 0,
        }
    }
    const FIRST_VERSION: usize = std::mem::size_of::<tempi_spring_decision>();
}

/// A run's plan records, kept in its outcome: the tasks and decisions with their names.
#[derive(Default)]
pub(crate) struct PlanRecords {
    tasks: Vec<(tempi_spring_task, CString, CString)>,
    decisions: Vec<(tempi_spring_decision, CString)>,
}

fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', "")).unwrap_or_default()
}

impl PlanRecords {
    /// The records of executor `s` after its run.
    pub(crate) fn of(s: &tempi_spring) -> PlanRecords {
        let ns = |t: Option<Time>| t.map_or(u64::MAX, Time::as_nanos);
        let tasks = s
            .spring
            .tasks()
            .into_iter()
            .map(|t| {
                let record = tempi_spring_task {
                    task: t.task as u32,
                    cpu: t.cpu as u32,
                    planned_start_ns: t.planned_start.as_nanos(),
                    planned_finish_ns: t.planned_finish.as_nanos(),
                    actual_start_ns: ns(t.actual_start),
                    actual_finish_ns: ns(t.actual_finish),
                    outcome: match t.outcome {
                        TaskOutcome::Planned => 0,
                        TaskOutcome::Running => 1,
                        TaskOutcome::Completed => 2,
                        TaskOutcome::Overrun => 3,
                        TaskOutcome::Killed => 4,
                        TaskOutcome::Panicked => 5,
                    },
                    ..tempi_spring_task::defaults()
                };
                (record, c_string(&t.group), c_string(&t.thread))
            })
            .collect();
        let decisions = s
            .spring
            .decisions()
            .into_iter()
            .map(|d: GroupDecision| {
                let o = d.outcome;
                let record = tempi_spring_decision {
                    id: d.id.map_or(0, |GroupId(id)| id),
                    accepted: u32::from(o.decision.is_accepted()),
                    rejection: rejection_of(o.decision) as u32,
                    requested_ns: d.requested.as_nanos(),
                    decided_ns: d.decided.as_nanos(),
                    tasks: o.tasks as u64,
                    k: o.k as u64,
                    evaluations: o.evaluations,
                    backtracks: u64::from(o.backtracks),
                    cost_ns: o.cost.as_nanos() as u64,
                    budget_ns: o.budget.as_nanos() as u64,
                    cutoff_ns: o.cutoff.as_nanos(),
                    ..tempi_spring_decision::defaults()
                };
                (record, c_string(&d.group))
            })
            .collect();
        PlanRecords { tasks, decisions }
    }

    pub(crate) fn task_count(&self) -> usize {
        self.tasks.len()
    }

    pub(crate) fn decision_count(&self) -> usize {
        self.decisions.len()
    }

    /// Task record `index`, its names pointing into these records.
    pub(crate) fn task(&self, index: usize) -> Result<tempi_spring_task, Failure> {
        let (r, g, t) = self.tasks.get(index).ok_or_else(|| {
            Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("task index {index}: the run has {} planned tasks", self.tasks.len()),
            )
        })?;
        Ok(tempi_spring_task { group: g.as_ptr(), thread: t.as_ptr(), ..*r })
    }

    /// Decision `index`, its name pointing into these records.
    pub(crate) fn decision(&self, index: usize) -> Result<tempi_spring_decision, Failure> {
        let (r, g) = self.decisions.get(index).ok_or_else(|| {
            Failure::new(
                tempi_status::TEMPI_OUT_OF_RANGE,
                format!("decision index {index}: the run has {} planner answers", self.decisions.len()),
            )
        })?;
        Ok(tempi_spring_decision { group: g.as_ptr(), ..*r })
    }
}
