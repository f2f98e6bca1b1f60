//! Running a runtime: [`Runtime::run`] and [`Runtime::run_until`], in virtual time one kernel
//! on the calling OS thread, in real time one dispatcher OS thread per CPU, built and met at a
//! start gate before time zero; then the run's result assembled from every kernel's part
//! ([`RunOutcome`]).
//!
//! Owns the run itself, from the seeds a runtime holds to its outcome. Must not: add to a
//! runtime before its run (spawning, timing events, objects: `runtime.rs`) or reach into a
//! kernel past the parts it hands back.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::clock::{Clock, ClockMode, RealClock, VirtualClock};
use crate::error::{Error, GlobalRefusal, PanicSource};
use crate::kernel::{Kernel, KernelPart, KernelSeed};
use crate::plain::ThreadId;
use crate::runtime::{RunOutcome, Runtime, ThreadSummary};
use crate::time::Time;

impl<C: Clock> Runtime<C> {
    /// Run until every thread has ended (or nothing can happen any more).
    ///
    /// # Errors
    /// In virtual time, [`Error::InvalidConfig`] before anything runs when something added
    /// before the run repeats with no end of its own (a periodic thread without
    /// [`ThreadSpec::max_jobs`](crate::ThreadSpec::max_jobs), a periodic timing event),
    /// naming it: the clock would jump from release to release and the call would never
    /// return. Give a horizon with [`Runtime::run_until`] instead, or call
    /// `run_until(Time::MAX)` when the program ends such threads itself (a kill). Otherwise
    /// the errors of [`Runtime::run_until`].
    ///
    /// ```
    /// use std::time::Duration;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("x"), |_| {}).unwrap();
    /// assert_eq!(rt.run().unwrap().threads.len(), 1);
    ///
    /// let mut rt = tempi::Runtime::simulated(1);
    /// rt.spawn(tempi::ThreadSpec::new("tick").periodic(Duration::from_millis(1)), |_| {}).unwrap();
    /// let e = rt.run().unwrap_err();
    /// assert!(e.to_string().contains("periodic thread `tick` has no `max_jobs`"), "{e}");
    /// ```
    pub fn run(self) -> Result<RunOutcome, Error> {
        if C::MODE == ClockMode::Virtual
            && let Some(what) = self.seeds.iter().find_map(|s| s.endless())
        {
            return Err(Error::InvalidConfig(format!(
                "Runtime::run in virtual time would never return: {what}, and the clock only moves on; \
                     give a horizon with run_until (or run_until(Time::MAX) if the program ends it by a kill)"
            )));
        }
        self.run_until(Time::MAX)
    }

    /// Run until `until` on the runtime's clock, or until every thread has ended. The horizon
    /// is exclusive: events due exactly at `until` (a release, a work completion) are not
    /// processed, so a run to the hyperperiod shows exactly one hyperperiod.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let out = rt.run_until(tempi::Time::from_millis(1)).unwrap();
    /// assert!(out.threads.is_empty());
    /// ```
    pub fn run_until(self, until: Time) -> Result<RunOutcome, Error> {
        let Runtime { executors, config, seeds, spawned, notes, .. } = self;
        // The messages its handlers still hold when the run ends, however it ends.
        let mut handlers_at_end = crate::message::AtEnd::new(executors, seeds.len(), seeds[0].payloads().clone());
        let (scheduler, global) = catch_unwind(AssertUnwindSafe(|| {
            let s = (config.scheduler)();
            (s.name().to_string(), s.global())
        }))
        .map_err(|payload| Error::Panicked {
            source: PanicSource::Scheduler,
            what: "the scheduler factory".into(),
            message: crate::kernel::panic_message(&*payload),
        })?;
        if global && C::MODE == ClockMode::Real {
            return Err(Error::Global { scheduler, reason: GlobalRefusal::RealTime });
        }
        let mut warnings = notes;
        let mut leftovers = 0;
        let parts = match C::MODE {
            ClockMode::Virtual => {
                let seed = seeds.into_iter().next().expect("one kernel");
                let built =
                    catch_unwind(AssertUnwindSafe(|| Kernel::<VirtualClock>::new(seed, VirtualClock::default())))
                        .unwrap_or_else(|payload| Err(building_panicked(0, &*payload)));
                vec![built?.run(until)?]
            }
            ClockMode::Real => {
                // The first real clock of a process calibrates the TSC, which takes a while: do
                // it before time zero, so the run does not start late.
                RealClock::calibrate();
                let gate = Arc::new(StartGate::new(seeds.len()));
                let threads = seeds.iter().map(KernelSeed::thread_count).sum();
                let crossing = Arc::new(crate::kernel::Crossing::new(config.cpus, config.cross_cpu_queue, threads));
                let halt = Arc::new(AtomicBool::new(false));
                let mut handles = Vec::new();
                let mut failure = None;
                for seed in seeds {
                    let setup = crate::os::DispatcherSetup {
                        pin: config.pin,
                        fifo_priority: config.fifo_priority,
                        lock_memory: config.lock_memory,
                    };
                    let cpu = seed.first_cpu();
                    let (gate2, halt2, crossing2) = (gate.clone(), halt.clone(), crossing.clone());
                    let crossing3 = crossing.clone();
                    let spawned = std::thread::Builder::new().name(format!("tempi-cpu{cpu}")).spawn(move || {
                        let notes = crate::os::prepare_dispatcher(cpu, setup);
                        let part = catch_unwind(AssertUnwindSafe(|| dispatch(seed, until, &gate2, &halt2, crossing2)))
                            .unwrap_or_else(|payload| {
                                gate2.fail();
                                halt2.store(true, Ordering::Relaxed);
                                // The others may be waiting for a post: wake them to stop.
                                crossing3.ring_all();
                                Err(Error::Panicked {
                                    source: PanicSource::Dispatcher,
                                    what: format!("the dispatcher of CPU {cpu}"),
                                    message: crate::kernel::panic_message(&*payload),
                                })
                            });
                        (part, notes)
                    });
                    match spawned {
                        Ok(h) => handles.push(h),
                        Err(e) => {
                            // The dispatchers started so far must not wait for this one.
                            gate.fail();
                            failure = Some(Error::Os(format!("cannot start a dispatcher thread: {e}")));
                            break;
                        }
                    }
                }
                let mut parts = Vec::new();
                for h in handles {
                    match h.join() {
                        Ok((part, notes)) => {
                            warnings.extend(notes);
                            match part {
                                Ok(p) => parts.push(p),
                                Err(e) => {
                                    failure.get_or_insert(e);
                                }
                            }
                        }
                        Err(payload) => {
                            failure.get_or_insert(Error::Panicked {
                                source: PanicSource::Dispatcher,
                                what: "a real-time dispatcher".into(),
                                message: crate::kernel::panic_message(&*payload),
                            });
                        }
                    }
                }
                if let Some(e) = failure {
                    return Err(e);
                }
                if config.fifo_priority.is_none() {
                    // Once per run: without it, the OS shares the dispatchers' CPUs with other
                    // work while a thread's clock runs, and charges none of it elsewhere.
                    warnings.push(NO_FIFO_WARNING.to_string());
                }
                leftovers = crossing.take_leftovers();
                parts
            }
        };
        let mut threads = Vec::new();
        let mut sets = Vec::new();
        let mut per_cpu = Vec::new();
        let mut dropped = 0;
        let mut cross_cpu = crate::stats::CrossCpuStats { pending_at_end: leftovers, ..Default::default() };
        let mut end = Time::ZERO;
        let mut event_releases_refused = 0;
        let mut messages = crate::stats::MessageStats::default();
        let mut direct_switches = 0;
        let mut kernel_time = vec![Duration::ZERO; config.cpus];
        let mut os_backed_left_stopped = Vec::new();
        if let Some(e) = parts.iter().find_map(|p| p.error.clone()) {
            return Err(e);
        }
        for p in parts {
            threads.extend(p.threads);
            sets.extend(p.sets);
            per_cpu.push(p.trace);
            dropped += p.trace_dropped;
            cross_cpu.add(p.cross_cpu);
            event_releases_refused += p.event_releases_refused;
            messages.add(p.messages);
            direct_switches += p.direct_switches;
            for (cpu, spent) in p.kernel_time {
                if let Some(k) = kernel_time.get_mut(cpu) {
                    *k += spent;
                }
            }
            os_backed_left_stopped.extend(p.os_backed_left_stopped);
            end = end.max(p.end);
        }
        messages.queued_at_end += handlers_at_end.settle();
        os_backed_left_stopped.sort_unstable();
        if threads.iter().any(|t| t.cpu != 0) && C::MODE == ClockMode::Real {
            // Kernels report separately: present the threads spawned before the run in the
            // order they were spawned, as the one kernel of virtual time does, and those
            // spawned during the run after them, by CPU (their order across CPUs is that of
            // events on separate clocks, which no run repeats).
            let before_run: std::collections::HashMap<ThreadId, usize> =
                spawned.iter().enumerate().map(|(k, &id)| (id, k)).collect();
            threads.sort_by_key(|t: &ThreadSummary| (before_run.get(&t.id).copied().unwrap_or(usize::MAX), t.id));
        }
        Ok(RunOutcome {
            mode: C::MODE,
            cpus: config.cpus,
            scheduler,
            global,
            end,
            threads,
            sets,
            trace: crate::trace::merge_kernels(per_cpu),
            trace_dropped: dropped,
            warnings,
            cross_cpu,
            event_releases_refused,
            messages,
            direct_switches,
            kernel_time,
            os_backed_left_stopped,
        })
    }
}

/// The warning of a real-time run whose dispatchers were not asked to run under `SCHED_FIFO`
/// ([`crate::Config::fifo_priority`]), given once per run.
pub(crate) const NO_FIFO_WARNING: &str = "no SCHED_FIFO priority asked for (fifo_priority): the dispatchers run under \
     the OS's time-sharing policy, so a thread's cpu_time and budget include any time the OS gave to other work \
     while the thread ran";

/// Where the real-time dispatchers of a run meet before time zero: each builds its kernel
/// (threads, stacks, pools), then waits for the others; the last to arrive takes the epoch,
/// so every CPU counts from the same instant and none starts before all are ready.
struct StartGate {
    dispatchers: usize,
    /// (arrived, some dispatcher failed, the epoch)
    state: std::sync::Mutex<(usize, bool, Option<Instant>)>,
    ready: std::sync::Condvar,
}

impl StartGate {
    fn new(dispatchers: usize) -> StartGate {
        StartGate { dispatchers, state: std::sync::Mutex::new((0, false, None)), ready: std::sync::Condvar::new() }
    }

    /// Arrive (`ok`: this dispatcher is ready) and wait for the others. Returns the shared
    /// epoch, or `None` if some dispatcher failed.
    fn arrive(&self, ok: bool) -> Option<Instant> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.0 += 1;
        if !ok {
            s.1 = true;
        }
        if s.0 == self.dispatchers && !s.1 {
            s.2 = Some(Instant::now());
        }
        self.ready.notify_all();
        while s.0 < self.dispatchers && !s.1 {
            s = self.ready.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.1 {
            None
        } else {
            s.2
        }
    }

    /// A dispatcher will not arrive: release the others.
    fn fail(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 = true;
        self.ready.notify_all();
    }
}

/// The scheduler panicked while a kernel was being built (its factory, or the policy placing
/// the threads registered before the run). A lock policy's panic there is caught and named
/// by the kernel itself.
fn building_panicked(cpu: usize, payload: &(dyn std::any::Any + Send)) -> Error {
    Error::Panicked {
        source: PanicSource::Scheduler,
        what: format!("the scheduler of CPU {cpu}, while the kernel was built"),
        message: crate::kernel::panic_message(payload),
    }
}

/// A real-time dispatcher's run: build the kernel on this OS thread, meet the others at the
/// gate, run from the shared epoch.
fn dispatch(
    seed: KernelSeed,
    until: Time,
    gate: &StartGate,
    halt: &Arc<AtomicBool>,
    crossing: Arc<crate::kernel::Crossing>,
) -> Result<KernelPart, Error> {
    let cpu = seed.first_cpu();
    let built = catch_unwind(AssertUnwindSafe(|| Kernel::<RealClock>::new(seed, RealClock::starting_now())))
        .unwrap_or_else(|payload| Err(building_panicked(cpu, &*payload)));
    // Known to the others before the gate opens, which orders it before any post to this
    // CPU: a post that saw no dispatcher to unpark could otherwise leave it asleep on a bell
    // it read before the ring (until its wait's periodic recheck).
    crossing.register(cpu);
    let Some(epoch) = gate.arrive(built.is_ok()) else {
        return Err(built.err().unwrap_or_else(|| Error::Os("another dispatcher of the run failed to start".into())));
    };
    let mut kernel = built?;
    kernel.join_crossing(crossing);
    kernel.set_clock(RealClock::with_epoch(epoch));
    kernel.halt_with(halt.clone());
    kernel.prepare_threads();
    kernel.run(until)
}
