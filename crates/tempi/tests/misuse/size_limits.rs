//! Every size a constructor accepts is checked against its limit before anything is
//! allocated: 2^32 (the value that aborted the process with "capacity overflow" or "memory
//! allocation of … bytes failed") is an error naming the field, the value and the limit.
//! Under a memory limit, a pool the allocator refuses is an error too.

use std::panic::{catch_unwind, AssertUnwindSafe};

use tempi::admission::{Admission, AdmissionError, AdmissionSpec};
use tempi::clock::{RealClock, VirtualClock};
use tempi::message::{Handler, MAX_PAYLOAD_SLOTS};
use tempi::policy::admit::planner::PlannerConfig;
use tempi::policy::admit::{LinearEngine, MinLaxityEngine, TreeEngine};
use tempi::spring::{Spring, SpringSpec};
use tempi::{Config, Error, Runtime, ThreadSpec};

const HUGE: usize = 1 << 32;

fn config_error(cfg: Config) -> Error {
    let real = Runtime::<RealClock>::new(cfg.clone()).err();
    let virt = Runtime::<VirtualClock>::new(cfg).err().expect("refused");
    assert_eq!(real.as_ref(), Some(&virt), "both clocks check the same limits");
    virt
}

fn invalid(why: &str) -> Error {
    Error::InvalidConfig(why.to_string())
}

#[test]
fn config_sizes_above_their_limits_are_refused() {
    let c = || Config::new(1);
    assert_eq!(
        config_error(c().max_locks(HUGE)),
        invalid("cpus × max_locks = 1 × 4294967296 is above its limit of 1048576 (Config::MAX_LOCKS)")
    );
    assert_eq!(
        config_error(c().max_timers(HUGE)),
        invalid("cpus × max_timers = 1 × 4294967296 is above its limit of 1048576 (Config::MAX_TIMERS)")
    );
    assert_eq!(
        config_error(c().message_pool(HUGE)),
        invalid("cpus × message_pool = 1 × 4294967296 is above its limit of 4194304 (Config::MAX_MESSAGES)")
    );
    assert_eq!(
        config_error(c().trace_capacity(HUGE)),
        invalid("trace_capacity = 4294967296 is above its limit of 16777216 (Config::MAX_TRACE_CAPACITY)")
    );
    assert_eq!(
        config_error(c().cross_cpu_queue(HUGE)),
        invalid("cross_cpu_queue = 4294967296 is above its limit of 1048576 (Config::MAX_CROSS_CPU_QUEUE)")
    );
    // Pooled limits count every CPU's share, and a product that overflows is refused too.
    assert_eq!(
        config_error(Config::new(4).max_timers(Config::MAX_TIMERS / 4 + 1)),
        invalid("cpus × max_timers = 4 × 262145 is above its limit of 1048576 (Config::MAX_TIMERS)")
    );
    assert!(matches!(config_error(Config::new(2).max_locks(usize::MAX)), Error::InvalidConfig(_)));
}

#[test]
fn config_sizes_at_their_limits_are_accepted() {
    let cfg = Config::new(1)
        .max_locks(Config::MAX_LOCKS)
        .max_timers(Config::MAX_TIMERS)
        .message_pool(Config::MAX_MESSAGES)
        .trace_capacity(Config::MAX_TRACE_CAPACITY)
        .cross_cpu_queue(Config::MAX_CROSS_CPU_QUEUE);
    // Nothing is allocated until the run starts.
    assert!(Runtime::<VirtualClock>::new(cfg).is_ok());
}

fn spec_error(spec: ThreadSpec) -> (String, String) {
    let mut rt = Runtime::simulated(1);
    match rt.spawn(spec, |_| {}) {
        Err(Error::InvalidSpec { thread, reason }) => (thread, reason),
        other => panic!("{other:?}"),
    }
}

#[test]
fn thread_queue_sizes_above_their_limits_are_refused_at_spawn() {
    let t = || ThreadSpec::new("t");
    let reason = |r: &str| ("t".to_string(), r.to_string());
    assert_eq!(
        spec_error(t().mailbox(HUGE)),
        reason("mailbox = 4294967296 is above its limit of 1048576 (ThreadSpec::MAX_MAILBOX)")
    );
    assert_eq!(
        spec_error(t().save_queues(HUGE)),
        reason("save_queues = 4294967296 is above its limit of 1024 (ThreadSpec::MAX_SAVE_QUEUES)")
    );
    assert_eq!(
        spec_error(t().sporadic(std::time::Duration::ZERO).release_queue(HUGE)),
        reason("release_queue = 4294967296 is above its limit of 1048576 (ThreadSpec::MAX_RELEASE_QUEUE)")
    );
    assert_eq!(
        spec_error(t().save_queues(1024).mailbox(4097)),
        reason("save_queues × mailbox = 1024 × 4097 is above its limit of 4194304 (ThreadSpec::MAX_SAVED)")
    );
    let mut rt = Runtime::simulated(1);
    assert!(rt.spawn(t().save_queues(1024).mailbox(4096), |_| {}).is_ok());
    rt.run().unwrap();
}

#[test]
fn a_thread_spawning_a_thread_with_a_huge_mailbox_gets_the_error() {
    let mut rt = Runtime::simulated(1);
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let s = seen.clone();
    rt.spawn(ThreadSpec::new("parent"), move |cx| {
        *s.lock().unwrap() = Some(cx.spawn(ThreadSpec::new("child").mailbox(HUGE), |_| {}));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.threads.len(), 1);
    let got = seen.lock().unwrap().take().expect("the parent ran");
    assert_eq!(
        got,
        Err(Error::InvalidSpec {
            thread: "child".into(),
            reason: "mailbox = 4294967296 is above its limit of 1048576 (ThreadSpec::MAX_MAILBOX)".into()
        })
    );
}

#[test]
fn handler_sizes_above_their_limits_are_errors_of_the_fallible_constructors() {
    assert_eq!(
        Handler::try_new("h", 0, HUGE, |_, _| {}).unwrap_err(),
        invalid("handler `h`: capacity = 4294967296 is above its limit of 1048576 (Handler::MAX_CAPACITY)")
    );
    // Capacity 0 and 2^32 save queues grew to 24 GB before being killed.
    let h = Handler::try_new("h", 0, 0, |_, _| {}).unwrap();
    assert_eq!(
        h.clone().try_save_queues(HUGE).unwrap_err(),
        invalid("handler `h`: save_queues = 4294967296 is above its limit of 1024 (Handler::MAX_SAVE_QUEUES)")
    );
    let wide = Handler::try_new("w", 0, 8192, |_, _| {}).unwrap();
    assert_eq!(
        wide.try_save_queues(513).unwrap_err(),
        invalid("handler `w`: save_queues × capacity = 513 × 8192 is above its limit of 4194304 (Handler::MAX_SAVED)")
    );
    assert!(h.try_save_queues(Handler::MAX_SAVE_QUEUES).is_ok());
}

#[test]
fn the_infallible_handler_constructors_panic_instead_of_aborting() {
    let caught = catch_unwind(|| Handler::new("h", 0, HUGE, |_, _| {})).unwrap_err();
    let message = caught.downcast_ref::<String>().expect("a formatted message");
    assert_eq!(
        message,
        "Handler::new: invalid configuration: handler `h`: capacity = 4294967296 is above its limit of 1048576 \
         (Handler::MAX_CAPACITY)"
    );
    let h = Handler::new("h", 0, 0, |_, _| {});
    let caught = catch_unwind(AssertUnwindSafe(|| h.save_queues(HUGE))).unwrap_err();
    assert!(caught.downcast_ref::<String>().unwrap().contains("save_queues = 4294967296"));
}

fn admission_error(spec: AdmissionSpec) -> AdmissionError {
    let mut rt = Runtime::simulated(1);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    Admission::new(&mut rt, spec).expect_err("refused")
}

#[test]
fn admission_sizes_above_their_limits_are_refused() {
    let a = || AdmissionSpec::new(0);
    let refused = |why: &str| AdmissionError::Runtime(invalid(why));
    assert_eq!(
        admission_error(a().capacity(HUGE)),
        refused(
            "admission of CPU 0: capacity = 4294967296 is above its limit of 1048576 (AdmissionSpec::MAX_CAPACITY)"
        )
    );
    assert_eq!(
        admission_error(a().max_live(HUGE)),
        refused("admission of CPU 0: max_live = 4294967296 is above its limit of 1048576 (AdmissionSpec::MAX_LIVE)")
    );
    assert_eq!(
        admission_error(a().log_capacity(HUGE)),
        refused(
            "admission of CPU 0: log_capacity = 4294967296 is above its limit of 1048576 \
             (AdmissionSpec::MAX_LOG_CAPACITY)"
        )
    );
    // Within its limit, `max_live` is still bounded by the sets the runtime has.
    assert_eq!(admission_error(a().max_live(65)), AdmissionError::Runtime(Error::TooManySets { max: 64 }));
}

/// The message of the panic `f` raises.
fn panic_of<R>(f: impl FnOnce() -> R) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).err().expect("a panic");
    payload.downcast_ref::<String>().cloned().expect("a formatted message")
}

#[test]
fn engine_constructors_above_their_limit_panic_with_the_limit_instead_of_aborting() {
    let limit = "capacity = 4294967296 is above its limit of 16777216 (policy::admit::MAX_CAPACITY)";
    assert_eq!(panic_of(|| TreeEngine::with_capacity(HUGE)), format!("tree: {limit}"));
    assert_eq!(panic_of(|| LinearEngine::with_capacity(HUGE)), format!("linear: {limit}"));
    assert_eq!(panic_of(|| MinLaxityEngine::with_capacity(HUGE)), format!("min_laxity: {limit}"));
    assert_eq!(panic_of(|| MinLaxityEngine::hashed(HUGE)), format!("hashed: {limit}"));
    assert_eq!(panic_of(|| tempi::policy::sched::Collator::standard().with_capacity(HUGE)), format!("tree: {limit}"));
}

#[test]
fn planner_tables_above_their_limit_are_refused() {
    use tempi::policy::admit::planner::{Capacity, PlanError, Planner};
    let mut config = PlannerConfig::new(1, 0);
    config.capacity.groups = HUGE;
    let err = Planner::new(config).expect_err("refused");
    assert_eq!(err, PlanError::TooLarge { field: "capacity.groups", value: HUGE, max: Capacity::MAX });
    assert_eq!(
        err.to_string(),
        "bad planner configuration: capacity.groups = 4294967296 is above its limit of 16777216 (Capacity::MAX)"
    );
    // The links and uses of so many tasks saturate instead of overflowing.
    let c = Capacity::for_tasks(usize::MAX / 2);
    assert_eq!((c.links, c.uses), (usize::MAX - 1, usize::MAX));
    config.capacity = Capacity { links: HUGE, ..Capacity::for_tasks(8) };
    assert_eq!(
        Planner::new(config).err(),
        Some(PlanError::TooLarge { field: "capacity.links", value: HUGE, max: Capacity::MAX })
    );
    let mut rt = Runtime::simulated(1);
    config.capacity = Capacity::for_tasks(HUGE);
    let spring = Spring::new(&mut rt, SpringSpec::new(config)).err().expect("refused");
    assert_eq!(
        spring,
        invalid("planner: bad planner configuration: capacity.groups = 4294967296 is above its limit of 16777216 (Capacity::MAX)")
    );
}

#[test]
fn a_ready_queue_larger_than_a_runtime_can_fill_is_sized_to_what_it_can() {
    // 2^32 entries would be 96 GiB; a runtime has at most 2^20 threads to queue.
    let q = tempi::policy::sched::ReadyQueue::with_capacity(HUGE);
    assert!(q.is_empty());
}

fn spring_error(spec: SpringSpec) -> Error {
    let mut rt = Runtime::simulated(1);
    Spring::new(&mut rt, spec).err().expect("refused")
}

#[test]
fn spring_sizes_above_their_limits_are_refused() {
    let s = || SpringSpec::new(PlannerConfig::new(1, 0));
    assert_eq!(
        spring_error(SpringSpec { sets_per_cpu: HUGE, ..s() }),
        invalid("spring: sets_per_cpu = 4294967296 is above its limit of 1048576 (SpringSpec::MAX_SETS_PER_CPU)")
    );
    assert_eq!(
        spring_error(SpringSpec { max_groups: HUGE, ..s() }),
        invalid("spring: max_groups = 4294967296 is above its limit of 65536 (SpringSpec::MAX_GROUPS)")
    );
}

#[test]
fn payload_pools_above_their_limit_are_refused() {
    let mut rt = Runtime::simulated(1);
    // u32::MAX was the documented maximum: 40 GB of slots for one-byte values.
    assert_eq!(
        rt.payload_pool::<u8>(u32::MAX as usize).unwrap_err(),
        invalid("payload_pool capacity = 4294967295 is above its limit of 16777216 (message::MAX_PAYLOAD_SLOTS)")
    );
    // Within the limit, values too large for the address space are the allocator's refusal.
    let Error::InvalidConfig(why) = rt.payload_pool::<[u8; 1 << 30]>(MAX_PAYLOAD_SLOTS).unwrap_err() else {
        panic!("not InvalidConfig")
    };
    assert!(why.starts_with("cannot allocate the payload pool (16777216 entries, "), "{why}");
}

/// Run test `name` of this file again in a child process with `CHILD` set, and check that it
/// passed there (a process aborted by a failed allocation does not).
fn in_child(name: &str) {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([&test_name(name), "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .expect("the test binary starts");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}: {stdout}\n{}", out.status, String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("1 passed"), "{stdout}");
}

const CHILD: &str = "TEMPI_SIZE_LIMITS_CHILD";

/// The full name of test `name` of this module, as the test harness knows it: its module path
/// without the program's name.
fn test_name(name: &str) -> String {
    let path = module_path!().split_once("::").map_or("", |(_, rest)| rest);
    format!("{path}::{name}")
}

/// Limit this process's address space to what it maps now plus `extra` bytes.
fn limit_address_space(extra: u64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmSize in /proc/self/status");
    let limit = kib * 1024 + extra;
    let rl = libc::rlimit { rlim_cur: limit, rlim_max: limit };
    // SAFETY: setrlimit reads the struct it is given and changes only this process's limit.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_AS, &rl) }, 0);
}

#[test]
fn under_a_memory_limit_pools_the_allocator_refuses_are_errors() {
    if std::env::var_os(CHILD).is_none() {
        return in_child("under_a_memory_limit_pools_the_allocator_refuses_are_errors");
    }
    limit_address_space(128 << 20);
    let mut rt = Runtime::simulated(1);
    // 16 Mi slots of 65-byte values: about 1.1 GB, above the limit.
    let Error::InvalidConfig(why) = rt.payload_pool::<[u8; 64]>(MAX_PAYLOAD_SLOTS).unwrap_err() else {
        panic!("not InvalidConfig")
    };
    assert!(why.starts_with("cannot allocate the payload pool (16777216 entries"), "{why}");
    // The message pool and the timer table it sizes are allocated when the run starts.
    let mut rt = Runtime::<VirtualClock>::new(Config::new(1).message_pool(Config::MAX_MESSAGES)).unwrap();
    rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    let Err(Error::InvalidConfig(why)) = rt.run() else { panic!("the run started") };
    assert!(why.starts_with("cannot allocate the "), "{why}");
    // An engine's arenas refused: a panic naming the engine, not an abort.
    let why = panic_of(|| LinearEngine::with_capacity(tempi::policy::admit::MAX_CAPACITY));
    assert!(why.starts_with("linear: invalid configuration: cannot allocate an arena of the engine"), "{why}");
    // The planner's tables, each within its limit, refused together by the allocator.
    use tempi::policy::admit::planner::{Capacity, PlanError, Planner};
    let mut config = PlannerConfig::new(1, 0);
    let max = Capacity::MAX;
    config.capacity = Capacity { groups: max, threads: max, tasks: max, links: max, uses: max };
    let err = Planner::new(config).expect_err("refused");
    assert!(matches!(err, PlanError::NoMemory { entries, .. } if entries == max), "{err:?}");
    assert!(err.to_string().starts_with("cannot allocate the planner's "), "{err}");
    // Each thread set has room for every thread slot: 4096 sets of 16 384 members (above 256 MiB)
    // do not fit, and the set the allocator refuses stops the run with an error.
    let cfg = Config::new(1).max_threads(1 << 14).max_sets(1 << 12).trace_capacity(0);
    let mut rt = Runtime::<VirtualClock>::new(cfg).unwrap();
    for i in 0..1 << 12 {
        rt.create_set(&format!("s{i}"), 0).unwrap();
    }
    let Err(Error::InvalidConfig(why)) = rt.run() else { panic!("the run started") };
    // Its members or its per-member budget counts, whichever the allocator refuses first.
    assert!(why.starts_with("cannot allocate the ") && why.contains("of a thread set (Config::max_threads)"), "{why}");
    // A small runtime still runs under the same limit.
    let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(1000)).unwrap();
    rt.spawn(ThreadSpec::new("t"), |cx| cx.work(std::time::Duration::from_millis(1))).unwrap();
    assert_eq!(rt.run().unwrap().threads.len(), 1);
}
