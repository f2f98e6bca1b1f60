//! What a run reports: the outcome of a whole run ([`RunOutcome`]), and per thread its summary
//! ([`ThreadSummary`]) and statistics ([`ThreadStats`]).
//!
//! Plain data below the kernel, which fills the statistics as it runs; the runtime assembles
//! the outcome and the trace exporters read it. This module must not reach up into `kernel`,
//! `sync` or `runtime`.

use std::time::Duration;

use crate::clock::ClockMode;
use crate::plain::TraceRecord;
use crate::plain::{ThreadDistributions, ThreadId};
use crate::sets::SetSummary;
use crate::thread::{Criticality, ThreadOutcome, Timing};
use crate::time::Time;

/// Per-thread statistics, exact whatever the trace capacity.
///
/// ```
/// let s = tempi::ThreadStats::default();
/// assert_eq!(s.mean_response(), None);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThreadStats {
    /// Jobs released (skipped releases not counted).
    pub released: u64,
    /// Jobs that ran to completion.
    pub completed: u64,
    /// Jobs abandoned: by the miss policy or the abort time, or cut short by the end of their
    /// thread (a kill, a panic of its body), which ends its job in progress and its waiting
    /// jobs. Each leaves a [`crate::trace::TraceKind::JobAbort`] record saying which.
    pub aborted: u64,
    /// Deadlines missed.
    pub misses: u64,
    /// Releases dropped by the [`crate::MissPolicy::SkipNext`] policy before they became jobs.
    /// (A job already waiting when the policy drops it is counted in `aborted`.)
    pub skipped: u64,
    /// Releases of a sporadic thread dropped because its queue of waiting releases was full
    /// ([`crate::ThreadSpec::release_queue`]); each leaves a
    /// [`crate::trace::TraceKind::ReleaseOverflow`] record.
    pub overflows: u64,
    /// Releases of a sporadic thread asked after all of its [`crate::ThreadSpec::max_jobs`]
    /// jobs were released: no job is made; each leaves a
    /// [`crate::trace::TraceKind::ReleaseBeyondLimit`] record.
    pub beyond_limit: u64,
    /// Times the thread was preempted.
    pub preemptions: u64,
    /// Times the thread was dispatched on another CPU than the one it last ran on (only a
    /// global policy moves threads; see [`crate::policy::sched::Scheduler::global`]). Its
    /// first dispatch is not a migration, whatever CPU it gets.
    pub migrations: u64,
    /// Shortest response time (release to completion) of a completed job.
    pub response_min: Option<Duration>,
    /// Longest response time of a completed job.
    pub response_max: Option<Duration>,
    /// Sum of the response times of completed jobs.
    pub response_total: Duration,
    /// CPU time consumed.
    pub cpu_time: Duration,
    /// Of that CPU time, the part spent spinning for global locks (protocol `msrp`): exact
    /// in virtual time; in real time as the thread measured it around its spin, added when
    /// it releases the lock.
    pub spin_time: Duration,
}

impl ThreadStats {
    /// Mean response time of completed jobs.
    ///
    /// ```
    /// let mut s = tempi::ThreadStats::default();
    /// s.completed = 2;
    /// s.response_total = std::time::Duration::from_millis(6);
    /// assert_eq!(s.mean_response(), Some(std::time::Duration::from_millis(3)));
    /// ```
    pub fn mean_response(&self) -> Option<Duration> {
        let n = u128::from(self.completed);
        (n > 0).then(|| Duration::from_nanos((self.response_total.as_nanos() / n).try_into().unwrap_or(u64::MAX)))
    }
}

/// What a run reports about one thread.
///
/// ```
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// let t = rt.spawn(ThreadSpec::new("w"), |cx| cx.work(std::time::Duration::from_millis(2))).unwrap();
/// let out = rt.run().unwrap();
/// let s = out.thread(t).unwrap();
/// assert_eq!(s.name, "w");
/// assert_eq!(s.stats.cpu_time, std::time::Duration::from_millis(2));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSummary {
    /// The thread.
    pub id: ThreadId,
    /// Its name.
    pub name: String,
    /// Its CPU (under a global policy, the CPU it was spawned on; it may have run on others).
    pub cpu: usize,
    /// Release pattern.
    pub timing: Timing,
    /// Base priority.
    pub priority: i32,
    /// Declared WCET.
    pub wcet: Duration,
    /// Relative deadline.
    pub deadline: Option<Duration>,
    /// Hard or soft: whether its misses are faults of the run ([`RunOutcome::hard_misses`]).
    pub criticality: Criticality,
    /// How it ended; `None` if it was still alive when the run stopped.
    pub outcome: Option<ThreadOutcome>,
    /// Statistics.
    pub stats: ThreadStats,
    /// Per job: response time, start latency, tardiness and execution time, as histograms
    /// (recorded without allocation, in both clocks).
    pub distributions: ThreadDistributions,
}

/// Everything a finished run reports.
///
/// ```
/// use tempi::{Runtime, ThreadSpec, Time};
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("p").periodic(std::time::Duration::from_millis(10)), |cx| {
///     cx.work(std::time::Duration::from_millis(1))
/// }).unwrap();
/// let out = rt.run_until(Time::from_millis(100)).unwrap();
/// assert_eq!(out.end, Time::from_millis(100));
/// assert_eq!(out.threads[0].stats.completed, 10);
/// ```
#[derive(Clone, Debug)]
pub struct RunOutcome {
    /// Which clock ran.
    pub mode: ClockMode,
    /// Number of CPUs.
    pub cpus: usize,
    /// The scheduling policy's name.
    pub scheduler: String,
    /// Whether the policy was global: one ready set for every CPU, threads migrate
    /// ([`crate::policy::sched::Scheduler::global`]).
    pub global: bool,
    /// When the run stopped.
    pub end: Time,
    /// Every thread ever spawned: those spawned before the run in the order of
    /// [`crate::Runtime::spawn`], on both clocks; those spawned during the run after them, in
    /// spawn order in virtual time and by CPU in real time.
    pub threads: Vec<ThreadSummary>,
    /// Every thread set, in id order.
    pub sets: Vec<SetSummary>,
    /// All trace records, ordered by time, then write order.
    pub trace: Vec<TraceRecord>,
    /// Records lost because a CPU's buffer was full.
    pub trace_dropped: u64,
    /// Things the runtime could not do as configured (e.g. `SCHED_FIFO` refused).
    pub warnings: Vec<String>,
    /// Requests between real-time CPUs that did not take effect (always zero in virtual time,
    /// where such requests are carried out at once and fail to their caller).
    pub cross_cpu: CrossCpuStats,
    /// Releases asked by timing events and execution-time timers' handlers
    /// ([`crate::EventCtx::release`]) that could not be carried out: the thread had ended or
    /// is not sporadic. The handler cannot get an error back, so
    /// each is counted here and leaves a [`crate::trace::TraceKind::EventReleaseRefused`]
    /// record.
    pub event_releases_refused: u64,
    /// Messages the runtime could not hand on and reports here because nobody else would
    /// see them: refusals by busy handlers' full queues, timed messages still waiting for
    /// their instant when the run ended.
    pub messages: MessageStats,
    /// Thread switches made straight from one thread's stack to the next thread's, without
    /// going through the dispatcher's stack: after a yield, a call or a reply on a one-CPU
    /// kernel when nothing else is due ([`crate::Config::direct_switch`]). Diagnostic only:
    /// the schedule is the same either way.
    pub direct_switches: u64,
    /// Per CPU, by index: the time its dispatcher spent in the runtime's own code (dispatch,
    /// accounting, timers, requests), which is charged to no thread: a thread's
    /// [`ThreadStats::cpu_time`], its set's group clock and budget count its own code and
    /// its `work` only (see docs/ARCHITECTURE.md, "Where time is charged"). Real time only:
    /// zero in virtual time, where the kernel takes no time (simulated costs,
    /// [`crate::config::Costs`], are charged to the threads as `work`).
    ///
    /// ```
    /// let out = tempi::Runtime::simulated(2).run().unwrap();
    /// assert_eq!(out.kernel_time, vec![std::time::Duration::ZERO; 2]);
    /// ```
    pub kernel_time: Vec<Duration>,
    /// Real time: the OS-backed threads ([`crate::ThreadSpec::os_backed`]) that the end of
    /// the run left stopped, in id order: still in their own code, without runtime calls,
    /// when [`crate::Config::os_backed_grace`] had passed (or still catching the runtime's
    /// stop). They were not unwound: their bodies are never dropped, and their OS threads
    /// stay blocked until the process ends. Empty in virtual time. [`RunOutcome::thread`]
    /// gives each one's name.
    ///
    /// ```
    /// let out = tempi::Runtime::simulated(1).run().unwrap();
    /// assert!(out.os_backed_left_stopped.is_empty());
    /// ```
    pub os_backed_left_stopped: Vec<ThreadId>,
}

/// Messages that did not reach their recipient, or were never served, and that no caller's
/// error shows alone, summed over the kernels of the run. Each refused or timed one also
/// leaves a [`crate::trace::TraceKind::MessageRefused`] record (see its `arg` codes).
///
/// ```
/// let s = tempi::MessageStats::default();
/// assert_eq!((s.handler_queue_full, s.timed_pending_at_end, s.queued_at_end), (0, 0, 0));
/// assert_eq!((s.unserved_at_receiver_end, s.handler_panicked), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MessageStats {
    /// Messages refused because the handler they were sent to was busy and its queue full
    /// ([`crate::message::Handler::new`]'s capacity): the sender got
    /// [`crate::message::MsgError::QueueFull`]; traced with `arg` 5.
    pub handler_queue_full: u64,
    /// Timed messages ([`crate::Ctx::send_at`]) whose instant had not come when the run
    /// ended: never delivered, their pool slots taken back; traced with `arg` 6 on their
    /// sender at the run's end.
    pub timed_pending_at_end: u64,
    /// Messages still held in a queue when the run ended, never served: in a thread's message
    /// queue or save queues, or in a handler's queue or save queues (sent or called while it
    /// was busy, or saved and never taken back). Their pool and payload slots are taken back;
    /// a caller waiting for one had ended with the run.
    pub queued_at_end: u64,
    /// Messages still held in a thread's message queue or save queues when that thread ended
    /// before the run did: never served. A caller waiting for one is answered
    /// [`crate::message::MsgError::Unanswered`]; the pool slots are taken back.
    pub unserved_at_receiver_end: u64,
    /// Messages a handler did not serve because its function had panicked
    /// ([`crate::message::Handler::is_poisoned`]): the one it was serving, those queued or
    /// saved there then, and every one sent or called to it afterwards. A caller is answered
    /// [`crate::message::MsgError::HandlerPanicked`], at the instant of the panic for one
    /// that waited; each is traced with `arg` 7 on its sender and its payload given back.
    pub handler_panicked: u64,
    /// Timed messages ([`crate::Ctx::send_at`]) refused at their instant because the
    /// recipient's queue was full ([`crate::message::MsgError::QueueFull`]). This and the
    /// four counts below are also told to the sender ([`crate::Ctx::timed_refusals`]), and
    /// each is traced with the `arg` of its error on the sender.
    pub timed_refused_queue_full: u64,
    /// Timed messages the recipient's queue policy refused at their instant.
    pub timed_refused_by_policy: u64,
    /// Timed messages whose recipient had ended: dropped at its end (or, for a recipient of
    /// another real-time CPU, at the instant).
    pub timed_refused_recipient_ended: u64,
    /// Real time: timed messages for a thread of another CPU that found that CPU's request
    /// queue full at their instant (also counted in [`CrossCpuStats::queue_full`]).
    pub timed_refused_cpu_queue_full: u64,
    /// Real time: timed messages for a thread of another CPU whose message pool was full
    /// when they arrived there.
    pub timed_refused_pool_full: u64,
}

impl MessageStats {
    /// Add another kernel's counts.
    ///
    /// ```
    /// let mut a = tempi::MessageStats { handler_queue_full: 1, queued_at_end: 4, ..Default::default() };
    /// a.add(tempi::MessageStats { timed_pending_at_end: 3, queued_at_end: 1, unserved_at_receiver_end: 2, ..a });
    /// assert_eq!(a.queued_at_end, 5);
    /// assert_eq!((a.handler_queue_full, a.timed_pending_at_end, a.unserved_at_receiver_end), (2, 3, 2));
    /// ```
    pub fn add(&mut self, other: MessageStats) {
        self.handler_queue_full += other.handler_queue_full;
        self.timed_pending_at_end += other.timed_pending_at_end;
        self.queued_at_end += other.queued_at_end;
        self.unserved_at_receiver_end += other.unserved_at_receiver_end;
        self.handler_panicked += other.handler_panicked;
        self.timed_refused_queue_full += other.timed_refused_queue_full;
        self.timed_refused_by_policy += other.timed_refused_by_policy;
        self.timed_refused_recipient_ended += other.timed_refused_recipient_ended;
        self.timed_refused_cpu_queue_full += other.timed_refused_cpu_queue_full;
        self.timed_refused_pool_full += other.timed_refused_pool_full;
    }

    /// Timed messages refused, whatever the cause (the sum of the `timed_refused_` counts).
    ///
    /// ```
    /// let s = tempi::MessageStats { timed_refused_queue_full: 2, timed_refused_recipient_ended: 1, ..Default::default() };
    /// assert_eq!(s.timed_refused(), 3);
    /// ```
    pub fn timed_refused(&self) -> u64 {
        self.timed_refused_queue_full
            + self.timed_refused_by_policy
            + self.timed_refused_recipient_ended
            + self.timed_refused_cpu_queue_full
            + self.timed_refused_pool_full
    }
}

/// Requests between the CPUs of a real-time run that did not take effect, summed over the
/// CPUs that made them. Each also leaves a trace record on the sender's CPU.
///
/// ```
/// let s = tempi::CrossCpuStats::default();
/// assert_eq!((s.refused, s.queue_full, s.pending_at_end), (0, 0, 0));
/// assert_eq!((s.proxies_full, s.proxies_at_end, s.stale_answers), (0, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CrossCpuStats {
    /// Releases, kills, priority changes and semaphore units the target CPU could not carry
    /// out when they arrived (the thread had ended, or a release named a thread that is not
    /// sporadic; the semaphore's count was at its maximum); the caller had already gone on. Each is a
    /// [`crate::trace::TraceKind::CrossCpuRefused`] record.
    pub refused: u64,
    /// Posts that found the target CPU's queue full: a request then fails to its caller with
    /// [`crate::Error::QueueFull`], an answer waits in its kernel's outbox and is posted
    /// again. Each is a [`crate::trace::TraceKind::QueueFull`] record.
    pub queue_full: u64,
    /// Requests still queued when the run ended: posted before the horizon to a CPU whose
    /// dispatcher had already stopped there. Not carried out.
    pub pending_at_end: u64,
    /// Waits on a condition variable or semaphore of another CPU refused with
    /// [`crate::sync::LockError::ProxiesFull`]: that CPU held as many waiters of other CPUs as
    /// it has room for. Each is a [`crate::trace::TraceKind::CrossCpuRefused`] record
    /// (request 4) on the waiter's CPU.
    pub proxies_full: u64,
    /// Waiters of other CPUs still queued in a condition variable or semaphore when the run
    /// ended (their threads were still waiting), counted on the object's CPU.
    pub proxies_at_end: u64,
    /// Answers to spawns onto another CPU, or to joins of a thread of another CPU, that came
    /// back after their thread had stopped waiting (its job was aborted, or it was killed,
    /// meanwhile): dropped, never taken for the answer to a later request. A thread such a
    /// spawn created runs and is reported as any other. Each is a
    /// [`crate::trace::TraceKind::StaleAnswer`] record on the waiting thread's CPU.
    pub stale_answers: u64,
}

impl CrossCpuStats {
    /// Add another CPU's counts.
    ///
    /// ```
    /// use tempi::CrossCpuStats;
    /// let mut a = CrossCpuStats { refused: 1, queue_full: 2, proxies_full: 1, ..Default::default() };
    /// a.add(CrossCpuStats { refused: 3, pending_at_end: 1, proxies_at_end: 2, ..Default::default() });
    /// let sum = CrossCpuStats {
    ///     refused: 4,
    ///     queue_full: 2,
    ///     pending_at_end: 1,
    ///     proxies_full: 1,
    ///     proxies_at_end: 2,
    ///     stale_answers: 0,
    /// };
    /// assert_eq!(a, sum);
    /// ```
    pub fn add(&mut self, other: CrossCpuStats) {
        self.refused += other.refused;
        self.queue_full += other.queue_full;
        self.pending_at_end += other.pending_at_end;
        self.proxies_full += other.proxies_full;
        self.proxies_at_end += other.proxies_at_end;
        self.stale_answers += other.stale_answers;
    }
}

impl RunOutcome {
    /// Migrations of every thread of the run, summed ([`ThreadStats::migrations`]).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::sched::GlobalEdf;
    /// use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(2);
    /// rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    /// rt.spawn(ThreadSpec::new("w"), |cx| cx.work(Duration::from_millis(2))).unwrap();
    /// let out = rt.run().unwrap();
    /// assert!(out.global);
    /// assert_eq!(out.migrations(), 0);
    /// ```
    pub fn migrations(&self) -> u64 {
        self.threads.iter().map(|t| t.stats.migrations).fold(0, u64::saturating_add)
    }

    /// The summary of one thread.
    ///
    /// ```
    /// # use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let t = rt.spawn(ThreadSpec::new("x"), |_| {}).unwrap();
    /// assert!(rt.run().unwrap().thread(t).is_some());
    /// ```
    pub fn thread(&self, id: ThreadId) -> Option<&ThreadSummary> {
        self.threads.iter().find(|t| t.id == id)
    }

    /// The summary of the first thread with this name.
    ///
    /// ```
    /// # use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("x"), |_| {}).unwrap();
    /// assert!(rt.run().unwrap().thread_named("x").is_some());
    /// ```
    pub fn thread_named(&self, name: &str) -> Option<&ThreadSummary> {
        self.threads.iter().find(|t| t.name == name)
    }

    /// Total deadline misses.
    ///
    /// ```
    /// # use tempi::{Runtime, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// rt.spawn(ThreadSpec::new("x"), |_| {}).unwrap();
    /// assert_eq!(rt.run().unwrap().total_misses(), 0);
    /// ```
    pub fn total_misses(&self) -> u64 {
        self.threads.iter().map(|t| t.stats.misses).sum()
    }

    /// Deadline misses by hard threads ([`crate::Criticality::Hard`]): the faults of the run.
    /// A soft thread's misses are targets missed, counted in [`RunOutcome::total_misses`] only.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::{Criticality, Runtime, ThreadSpec, Time};
    /// let ms = Duration::from_millis;
    /// // 3 ms of work every 10 ms, due within 5 ms; the thread that runs second ends at 6 ms.
    /// let run = |second: Criticality| {
    ///     let mut rt = Runtime::simulated(1);
    ///     let spec = |name| ThreadSpec::new(name).periodic(ms(10)).deadline(ms(5));
    ///     rt.spawn(spec("first").priority(2), move |cx| cx.work(ms(3))).unwrap();
    ///     rt.spawn(spec("second").priority(1).criticality(second), move |cx| cx.work(ms(3))).unwrap();
    ///     rt.run_until(Time::from_millis(100)).unwrap()
    /// };
    /// let out = run(Criticality::Hard);
    /// assert_eq!((out.total_misses(), out.hard_misses()), (10, 10));
    /// let out = run(Criticality::Soft);
    /// assert_eq!(out.thread_named("second").unwrap().criticality, Criticality::Soft);
    /// assert_eq!((out.total_misses(), out.hard_misses()), (10, 0));
    /// ```
    pub fn hard_misses(&self) -> u64 {
        self.threads.iter().filter(|t| t.criticality == Criticality::Hard).map(|t| t.stats.misses).sum()
    }
}
