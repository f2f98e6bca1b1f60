//! The peers: what a user would reach for instead of tempi, measured on OS threads pinned to
//! [`BENCH_CPU`] (`std` mutexes, condition variables and channels, `std::thread::spawn`,
//! pthread priority-inheritance mutexes, a POSIX CPU-time timer with a real-time signal, the
//! cyclictest loop, and rt-tests' `cyclictest` itself when it is installed), and the bare
//! `corosensei` coroutine round trip tempi's own switch is built on.
//!
//! Owns every OS-thread side of a comparison; the tempi side and the metric built from both
//! live in the group's file (`switch.rs`, `budget.rs`, `spawn.rs`, `lock.rs`, `latency.rs`).
//! It must not use a tempi runtime, and it reaches the OS only through `posix.rs` and `std`.

use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use tempi::clock::RealClock;

use super::budget::{NotifyRun, NOTIFY_BUDGET, NOTIFY_FIFO};
use super::latency::{LatencyRun, LATENCY_FIFO, LATENCY_PERIOD, LATENCY_WARMUP};
use super::lock::{HandoffRun, HandoffState, HANDOFF_HIGH, HANDOFF_LOW, HANDOFF_PERIOD};
use super::posix;
use super::BENCH_CPU;

/// Pin the calling OS thread to `cpu`, as tempi's dispatchers are pinned.
fn pin_current(cpu: usize) -> Result<(), String> {
    tempi::os::pin_to_cpu(cpu).map_err(|e| e.to_string())
}

/// Run `a` and `b` on two OS threads, each first pinned to `BENCH_CPU`. Returns what `a`
/// returned and the pinning errors, if any.
fn pinned_pair<A, B>(a: A, b: B) -> Result<(f64, Vec<String>), String>
where
    A: FnOnce() -> f64 + Send + 'static,
    B: FnOnce() + Send + 'static,
{
    pinned_pair_on((BENCH_CPU, BENCH_CPU), a, b)
}

/// Run `a` pinned to CPU `cpus.0` and `b` pinned to `cpus.1`, each on its own OS thread.
fn pinned_pair_on<A, B>(cpus: (usize, usize), a: A, b: B) -> Result<(f64, Vec<String>), String>
where
    A: FnOnce() -> f64 + Send + 'static,
    B: FnOnce() + Send + 'static,
{
    let hb = std::thread::spawn(move || {
        let pinned = pin_current(cpus.1);
        b();
        pinned
    });
    let ha = std::thread::spawn(move || {
        let pinned = pin_current(cpus.0);
        (a(), pinned)
    });
    let (ns, pa) = ha.join().map_err(|_| "peer thread panicked".to_string())?;
    let pb = hb.join().map_err(|_| "peer thread panicked".to_string())?;
    let notes = [pa, pb].into_iter().filter_map(Result::err).collect();
    Ok((ns, notes))
}

/// Peer: two pinned OS threads passing a token through `Mutex<bool>` + `Condvar`.
pub(super) fn condvar_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    condvar_token(n, (BENCH_CPU, BENCH_CPU))
}

/// Peer of `xcpu.wake`: the same token passing between OS threads on CPUs 0 and 1.
pub(super) fn condvar_across(n: u64) -> Result<(f64, Vec<String>), String> {
    condvar_token(n, (0, 1))
}

/// Two OS threads pinned to `cpus` passing a token through `Mutex<bool>` + `Condvar`; ns per
/// round trip.
fn condvar_token(n: u64, cpus: (usize, usize)) -> Result<(f64, Vec<String>), String> {
    // `true`: A's turn; `false`: B's turn.
    let pair = Arc::new((Mutex::new(true), Condvar::new()));
    let pb = pair.clone();
    let b = move || {
        let (m, cv) = &*pb;
        for _ in 0..=n {
            let mut turn = m.lock().unwrap();
            while *turn {
                turn = cv.wait(turn).unwrap();
            }
            *turn = true;
            cv.notify_one();
        }
    };
    let a = move || {
        let (m, cv) = &*pair;
        let mut t0 = Instant::now();
        for i in 0..=n {
            // Round 0 is a warm-up that also waits for B to be running.
            if i == 1 {
                t0 = Instant::now();
            }
            let mut turn = m.lock().unwrap();
            *turn = false;
            cv.notify_one();
            while !*turn {
                turn = cv.wait(turn).unwrap();
            }
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    };
    pinned_pair_on(cpus, a, b)
}

/// Peer: two pinned OS threads passing a token through two `mpsc` channels.
pub(super) fn channel_switch(n: u64) -> Result<(f64, Vec<String>), String> {
    let (to_b, from_a) = mpsc::channel::<u64>();
    let (to_a, from_b) = mpsc::channel::<u64>();
    let b = move || {
        while let Ok(x) = from_a.recv() {
            if to_a.send(black_box(x)).is_err() {
                break;
            }
        }
    };
    let a = move || {
        let mut t0 = Instant::now();
        for i in 0..=n {
            if i == 1 {
                t0 = Instant::now();
            }
            to_b.send(i).expect("peer alive");
            black_box(from_b.recv().expect("peer alive"));
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        // Dropping `to_b` ends B's loop.
        drop(to_b);
        ns
    };
    pinned_pair(a, b)
}

/// Peer: the POSIX route the seed paper compares against. A spinner thread (the consumer)
/// runs; a POSIX timer on its CPU-time clock (`pthread_getcpuclockid`) is armed at its current
/// CPU time plus [`NOTIFY_BUDGET`] and sends `SIGRTMIN` to a handler thread
/// (`SIGEV_THREAD_ID`) that has the signal blocked and waits in `sigtimedwait`. Both threads
/// are pinned to [`BENCH_CPU`], the spinner under `SCHED_FIFO` [`NOTIFY_FIFO`], the handler
/// one above. The first overrun is a warm-up and is dropped.
///
/// The spinner reads its CPU clock and the wall clock together when it starts spinning, so the
/// wall instant its CPU clock reached the timer value is known; the handler thread reads the
/// wall clock first thing after waking, then the spinner's CPU clock.
pub(super) fn posix_notify(overruns: usize) -> Result<NotifyRun, String> {
    let base = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    // Where the spinner's timeline starts: (wall ns since `base`, own CPU-time ns).
    let start_wall = Arc::new(AtomicU64::new(0));
    let start_cpu = Arc::new(AtomicU64::new(0));
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let (ready_tx, ready_rx) = mpsc::channel::<Result<(libc::clockid_t, Vec<String>), String>>();
    let (s_stop, s_wall, s_cpu) = (stop.clone(), start_wall.clone(), start_cpu.clone());
    let spinner = std::thread::spawn(move || {
        let mut notes = Vec::new();
        if let Err(e) = pin_current(BENCH_CPU) {
            notes.push(format!("spinner not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(NOTIFY_FIFO) {
            notes.push(format!("spinner: SCHED_FIFO refused ({e})"));
        }
        let clock = match posix::this_thread() {
            Ok((clock, _)) => clock,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        let _ = ready_tx.send(Ok((clock, notes)));
        while go_rx.recv().is_ok() {
            let w0 = base.elapsed().as_nanos() as u64;
            let c = posix::read(clock).unwrap_or(0);
            let w1 = base.elapsed().as_nanos() as u64;
            s_wall.store(w0 + (w1 - w0) / 2, Ordering::Relaxed);
            s_cpu.store(c, Ordering::Release);
            // Spin until the handler thread has run (or, should the timer never fire, 2 s).
            let cap = Instant::now() + Duration::from_secs(2);
            while !s_stop.load(Ordering::Acquire) && Instant::now() < cap {
                std::hint::spin_loop();
            }
            if done_tx.send(()).is_err() {
                break;
            }
        }
    });
    let waiter = std::thread::spawn(move || -> Result<NotifyRun, String> {
        let mut run = NotifyRun::default();
        if let Err(e) = pin_current(BENCH_CPU) {
            run.notes.push(format!("handler thread not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(NOTIFY_FIFO + 1) {
            run.notes.push(format!("handler thread: SCHED_FIFO refused ({e})"));
        }
        let sig = libc::SIGRTMIN();
        let blocked = posix::BlockedSignal::new(sig)?;
        let (_, tid) = posix::this_thread()?;
        let (clock, spin_notes) = ready_rx.recv().map_err(|_| "spinner thread died".to_string())??;
        run.notes.extend(spin_notes);
        let timer = posix::CpuTimer::new(clock, sig, tid)?;
        let budget = NOTIFY_BUDGET.as_nanos() as u64;
        for i in 0..=overruns {
            // Linux checks CPU-time timers at the scheduler tick. Back to back, every overrun
            // would start just after the tick that ended the previous one, so its delay would
            // always be nearly a full tick; a pause spread evenly over [0, 4 ms) (golden-ratio
            // sequence) puts the overrun at every phase of a 250 Hz or 1000 Hz tick instead.
            let phase = (i as f64 * 0.618_033_988_75).fract();
            std::thread::sleep(Duration::from_secs_f64(phase * 0.004));
            // The spinner is parked (or preempted by us on the shared CPU): its clock is still.
            let expiry = posix::read(clock)? + budget;
            timer.arm_at(expiry)?;
            stop.store(false, Ordering::Release);
            go_tx.send(()).map_err(|_| "spinner thread died".to_string())?;
            let fired = blocked.wait(Duration::from_secs(1));
            let woke = base.elapsed().as_nanos() as i64;
            let cpu_then = posix::read(clock);
            stop.store(true, Ordering::Release);
            done_rx.recv().map_err(|_| "spinner thread died".to_string())?;
            if !fired? {
                return Err("budget.notify: the POSIX CPU-time timer did not fire within 1 s".into());
            }
            let cpu_then = cpu_then? as i64;
            if i == 0 {
                continue;
            }
            let (c0, w0) = (start_cpu.load(Ordering::Acquire) as i64, start_wall.load(Ordering::Relaxed) as i64);
            let expired_wall = w0 + (expiry as i64 - c0);
            run.total.push((woke - expired_wall) as f64);
            run.clock.push((cpu_then - expiry as i64) as f64);
        }
        drop(timer);
        // Dropping `go_tx` ends the spinner's loop.
        Ok(run)
    });
    let run = waiter.join().map_err(|_| "peer thread panicked".to_string())?;
    spinner.join().map_err(|_| "peer thread panicked".to_string())?;
    run
}

/// Run `f` on an OS thread pinned to [`BENCH_CPU`]; returns its result and the pinning error.
fn on_pinned_thread(f: impl FnOnce() -> f64 + Send + 'static) -> Result<(f64, Vec<String>), String> {
    let h = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        (f(), pinned)
    });
    let (ns, pinned) = h.join().map_err(|_| "peer thread panicked".to_string())?;
    Ok((ns, pinned.err().into_iter().collect()))
}

/// Peer: `std::sync::Mutex` lock + unlock `n` times on a pinned OS thread.
pub(super) fn std_uncontended(n: u64) -> Result<(f64, Vec<String>), String> {
    on_pinned_thread(move || {
        let m = Mutex::new(0u64);
        drop(m.lock());
        let t0 = Instant::now();
        for _ in 0..n {
            drop(black_box(black_box(&m).lock()));
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    })
}

/// Peer: pthread mutex with `PTHREAD_PRIO_INHERIT`, lock + unlock `n` times on a pinned OS
/// thread.
pub(super) fn pthread_pi_uncontended(n: u64) -> Result<(f64, Vec<String>), String> {
    let m = posix::PiMutex::new()?;
    on_pinned_thread(move || {
        m.lock();
        m.unlock();
        let t0 = Instant::now();
        for _ in 0..n {
            let m = black_box(&m);
            m.lock();
            m.unlock();
        }
        t0.elapsed().as_nanos() as f64 / n as f64
    })
}

/// Peer: two OS threads pinned to [`BENCH_CPU`], the owner under `SCHED_FIFO` [`HANDOFF_LOW`]
/// and the waiter under `SCHED_FIFO` [`HANDOFF_HIGH`], sharing a `PTHREAD_PRIO_INHERIT`
/// mutex. The owner holds it and spins; the waiter sleeps [`HANDOFF_PERIOD`], wakes
/// (preempting the owner), and blocks on the mutex (the kernel boosts the owner). The owner
/// sees it waiting, reads the clock and unlocks; the kernel hands the mutex to the waiter, which
/// preempts the owner and reads the clock. Both read the same [`RealClock`].
pub(super) fn pthread_handoff(n: usize) -> Result<HandoffRun, String> {
    let m = Arc::new(posix::PiMutex::new()?);
    let st = Arc::new(HandoffState::default());
    let clock = RealClock::starting_now();
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let (hm, hs, hc) = (m.clone(), st.clone(), clock.clone());
    let high = std::thread::spawn(move || {
        let mut run = HandoffRun { lat: Vec::with_capacity(n), notes: Vec::new() };
        if let Err(e) = pin_current(BENCH_CPU) {
            run.notes.push(format!("waiter not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(HANDOFF_HIGH) {
            run.notes.push(format!("waiter: SCHED_FIFO refused ({e}), measured under the default policy"));
        }
        let _ = ready_tx.send(());
        // Bounded, should the owner never be holding the mutex when the waiter wakes.
        for _ in 0..n * 4 + 16 {
            if run.lat.len() >= n {
                break;
            }
            std::thread::sleep(HANDOFF_PERIOD);
            hs.waiting.store(true, Ordering::SeqCst);
            hm.lock();
            let t = hc.raw();
            hs.waiting.store(false, Ordering::SeqCst);
            let u = hs.unlock_at.swap(0, Ordering::SeqCst);
            hm.unlock();
            if u != 0 {
                run.lat.push(hc.raw_delta(u, t).as_nanos() as f64);
            }
        }
        hs.done.store(true, Ordering::SeqCst);
        run
    });
    // The owner spins under SCHED_FIFO on the waiter's CPU: start it only once the waiter is
    // pinned and real-time, or the waiter could starve behind it.
    let _ = ready_rx.recv();
    let low = std::thread::spawn(move || {
        let mut notes = Vec::new();
        if let Err(e) = pin_current(BENCH_CPU) {
            notes.push(format!("owner not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(HANDOFF_LOW) {
            notes.push(format!("owner: SCHED_FIFO refused ({e}), measured under the default policy"));
        }
        while !st.done.load(Ordering::SeqCst) {
            m.lock();
            while !st.waiting.load(Ordering::SeqCst) && !st.done.load(Ordering::SeqCst) {
                std::hint::spin_loop();
            }
            if st.waiting.load(Ordering::SeqCst) {
                st.unlock_at.store(clock.raw().max(1), Ordering::SeqCst);
            }
            m.unlock();
        }
        notes
    });
    let mut run = high.join().map_err(|_| "peer thread panicked".to_string())?;
    run.notes.extend(low.join().map_err(|_| "peer thread panicked".to_string())?);
    if run.lat.len() < n / 2 {
        return Err(format!("lock.handoff.bpi: only {} of {n} pthread hand-offs found the mutex held", run.lat.len()));
    }
    Ok(run)
}

/// Peer: `std::thread::spawn(|| {}).join()` `n` times from a thread pinned to the same CPU
/// (children inherit the affinity, as tempi's threads share their dispatcher's CPU).
pub(super) fn os_spawn(n: u64) -> Result<(f64, Vec<String>), String> {
    let h = std::thread::spawn(move || {
        let pinned = pin_current(BENCH_CPU);
        let t0 = Instant::now();
        for _ in 0..n {
            std::thread::spawn(|| black_box(())).join().expect("empty thread");
        }
        (t0.elapsed().as_nanos() as f64 / n as f64, pinned)
    });
    let (ns, pinned) = h.join().map_err(|_| "peer thread panicked".to_string())?;
    Ok((ns, pinned.err().into_iter().collect()))
}

/// Peer of `latency`: what cyclictest does with one thread (`cyclictest -t1 -p`
/// [`LATENCY_FIFO`] `-a` [`BENCH_CPU`] `-i 1000`). An OS thread pinned to [`BENCH_CPU`] under
/// `SCHED_FIFO` [`LATENCY_FIFO`] sleeps with `clock_nanosleep(CLOCK_MONOTONIC,
/// TIMER_ABSTIME)` until each release, a [`LATENCY_PERIOD`] apart, and reads
/// `CLOCK_MONOTONIC` as soon as it wakes; latency = that reading - the release. The first
/// [`LATENCY_WARMUP`] releases are dropped.
pub(super) fn cyclictest_latency(releases: usize) -> Result<LatencyRun, String> {
    let h = std::thread::spawn(move || -> Result<LatencyRun, String> {
        let mut run = LatencyRun { ns: Vec::with_capacity(releases), notes: Vec::new() };
        if let Err(e) = pin_current(BENCH_CPU) {
            run.notes.push(format!("cyclictest-style thread not pinned: {e}"));
        }
        if let Err(e) = posix::set_fifo(LATENCY_FIFO) {
            run.notes.push(format!("cyclictest-style thread: SCHED_FIFO refused ({e})"));
        }
        let period = LATENCY_PERIOD.as_nanos() as u64;
        let mut release = posix::monotonic_ns()? + period;
        for i in 0..LATENCY_WARMUP + releases {
            posix::sleep_until_monotonic(release)?;
            let woke = posix::monotonic_ns()?;
            if i >= LATENCY_WARMUP {
                run.ns.push(woke.saturating_sub(release) as f64);
            }
            release += period;
        }
        Ok(run)
    });
    h.join().map_err(|_| "cyclictest-style thread panicked".to_string())?
}

/// The cyclictest of rt-tests itself, when it is installed: `cyclictest -q -t1 -p`
/// [`LATENCY_FIFO`] `-a` [`BENCH_CPU`] `-i 1000 -l releases -h 10000` (one thread, absolute
/// `clock_nanosleep` on `CLOCK_MONOTONIC`, which is its default). Its latencies come from its
/// histogram (1 µs buckets, each value taken at its bucket's lower end; those past 10 ms at
/// its reported maximum). Unlike the loop above it also holds `/dev/cpu_dma_latency` at 0 while
/// it runs, which keeps the CPU out of deep idle states. `None` when there is no `cyclictest`
/// to run; an error when it ran and failed.
pub(super) fn rt_tests_cyclictest(releases: usize) -> Option<Result<LatencyRun, String>> {
    let out = std::process::Command::new("cyclictest")
        .args(["-q", "-t1", "-p", &LATENCY_FIFO.to_string(), "-a", &BENCH_CPU.to_string()])
        .args(["-i", &LATENCY_PERIOD.as_micros().to_string(), "-l", &releases.to_string(), "-h", "10000"])
        .output();
    let out = match out {
        Ok(out) => out,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => return Some(Err(format!("cyclictest: {e}"))),
    };
    if !out.status.success() {
        return Some(Err(format!(
            "cyclictest failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Some(parse_cyclictest_histogram(&String::from_utf8_lossy(&out.stdout), releases))
}

/// Latencies (ns) from the histogram cyclictest prints with `-h`: lines `BUCKET COUNT` (µs),
/// then `# Max Latencies: N` and `# Histogram Overflows: N`.
pub(super) fn parse_cyclictest_histogram(text: &str, releases: usize) -> Result<LatencyRun, String> {
    let mut ns = Vec::with_capacity(releases);
    let (mut max_us, mut overflows) = (None, 0usize);
    let field = |line: &str, key: &str| -> Option<u64> { line.strip_prefix(key)?.trim().parse().ok() };
    for line in text.lines() {
        if let Some(m) = field(line, "# Max Latencies:") {
            max_us = Some(m);
        } else if let Some(o) = field(line, "# Histogram Overflows:") {
            overflows = o as usize;
        } else if !line.starts_with('#') {
            let mut parts = line.split_whitespace();
            if let (Some(bucket), Some(count), None) = (parts.next(), parts.next(), parts.next()) {
                let bucket: u64 =
                    bucket.parse().map_err(|_| format!("cyclictest: unreadable histogram line `{line}`"))?;
                let count: usize =
                    count.parse().map_err(|_| format!("cyclictest: unreadable histogram line `{line}`"))?;
                ns.extend(std::iter::repeat_n(bucket as f64 * 1000.0, count));
            }
        }
    }
    let max_us = max_us.ok_or("cyclictest: no `# Max Latencies` line in its output")?;
    ns.extend(std::iter::repeat_n(max_us as f64 * 1000.0, overflows));
    if ns.len() != releases {
        return Err(format!("cyclictest: its histogram holds {} latencies, {releases} were asked for", ns.len()));
    }
    Ok(LatencyRun { ns, notes: Vec::new() })
}

/// Peer of `switch.roundtrip.corosensei` (`CLOCKED` false) and of
/// `switch.roundtrip.corosensei_clocked` (`CLOCKED` true): `n` round trips of a bare
/// `corosensei` coroutine on an OS thread pinned to [`BENCH_CPU`] (one `resume` into a
/// coroutine that at once `suspend`s back: two stack switches), the first round excluded; ns
/// per round trip. Bare, it is what tempi's thread switch is built on, without the kernel
/// around it. Clocked, it also reads tempi's real-time clock at each of its two switches and
/// charges the time since the last one to the side that ran, as a kernel that accounts every
/// thread's execution time must at the least.
pub(super) fn coroutine_roundtrip<const CLOCKED: bool>(n: u64) -> Result<(f64, Vec<String>), String> {
    // Its own OS thread, so the pinning does not stay with the caller.
    let run = std::thread::spawn(move || {
        use corosensei::{Coroutine, CoroutineResult};
        let mut notes = Vec::new();
        if let Err(e) = pin_current(BENCH_CPU) {
            notes.push(format!("peer: could not pin to CPU {BENCH_CPU}: {e}"));
        }
        let clock = tempi::clock::RealClock::starting_now();
        // Execution time charged to each side, and the instant of the last switch.
        let mut charged = [0u64; 2];
        let mut last = clock.read();
        let mut charge = |side: usize| {
            if CLOCKED {
                let now = clock.read();
                charged[side] += now.as_nanos().saturating_sub(last.as_nanos());
                last = now;
            }
        };
        let mut co = Coroutine::new(|y, mut x: u64| loop {
            x = y.suspend(black_box(x));
        });
        // The first resume starts the coroutine (its stack is set up): not timed.
        let _ = co.resume(0);
        let t0 = Instant::now();
        for i in 0..n {
            charge(0);
            match co.resume(black_box(i)) {
                CoroutineResult::Yield(v) => {
                    black_box(v);
                }
                CoroutineResult::Return(()) => return Err("the bare coroutine ended".to_string()),
            }
            charge(1);
        }
        let ns = t0.elapsed().as_nanos() as f64 / n as f64;
        black_box(charged);
        // The coroutine never returns: dropping it unwinds its stack.
        drop(co);
        Ok((ns, notes))
    });
    run.join().map_err(|_| "the coroutine peer panicked".to_string())?
}
