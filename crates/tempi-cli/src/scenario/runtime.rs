//! A validated scenario onto a runtime: the [`Config`] it asks for, every thread's
//! [`ThreadSpec`], and [`Scenario::populate`], which spawns the threads with their step bodies
//! and creates the locks, timing events, thread sets and budgets.
//!
//! Owns the job bodies and the seeded generator their work ranges draw from ([`SplitMix64`]),
//! so the same file and seed give the same run everywhere. It relies on validation instead of
//! re-checking the file; its only errors are the runtime's, placed at the table's line, and
//! what a real-time clock cannot do yet. It must not parse or validate (`validate.rs`,
//! `threads.rs`, `sets.rs`).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tempi::clock::{Clock, ClockMode};
use tempi::policy::lock::LockCeiling;
use tempi::sync::{LockSpec, Mutex, MutexGuard};
use tempi::{
    assign_deadline_monotonic, assign_rate_monotonic, Budget, Config, Replenishment, Runtime, ThreadId, ThreadSpec,
    Timing,
};

use super::names;
use super::{BudgetDef, PriorityRule, Scenario, ScenarioError, ServerKind, Step, ThreadDef};

impl Scenario {
    /// Every thread's spawn description, with the priority rule and explicit priorities
    /// applied (what [`Scenario::populate`] spawns).
    ///
    /// ```
    /// let text = "[runtime]\npriorities = \"rm\"\n[[thread]]\nname = \"a\"\nperiod = \"8ms\"\n\
    ///             [[thread]]\nname = \"b\"\nperiod = \"4ms\"\n";
    /// let specs = tempi_cli::parse("s.toml", text).unwrap().specs();
    /// assert!(specs[1].priority_value() > specs[0].priority_value());
    /// ```
    pub fn specs(&self) -> Vec<ThreadSpec> {
        let mut specs: Vec<ThreadSpec> = self.threads.iter().map(ThreadDef::spec).collect();
        match self.priorities {
            Some(PriorityRule::RateMonotonic) => assign_rate_monotonic(&mut specs),
            Some(PriorityRule::DeadlineMonotonic) => assign_deadline_monotonic(&mut specs),
            None => {}
        }
        specs
            .into_iter()
            .zip(&self.threads)
            .map(|(spec, def)| match def.priority {
                Some(p) => spec.priority(p),
                None => spec,
            })
            .collect()
    }

    /// Every resource's ceiling, computed once from its declaration and its users' specs
    /// ([`LockCeiling::of`], the runtime's own rule): what [`Scenario::populate`] gives each
    /// lock and what `tempi analyze` gives each resource, so the run and its analysis judge a
    /// lock by the same ceiling. `None` for a resource with no ceiling and no users.
    ///
    /// ```
    /// let text = "[[resource]]\nname = \"m\"\nprotocol = \"pcp\"\n\
    ///             [[thread]]\nname = \"a\"\nperiod = \"8ms\"\npriority = 3\n\
    ///             steps = [{ lock = \"m\" }, { work = \"1ms\" }, { unlock = \"m\" }]\n";
    /// let sc = tempi_cli::parse("s.toml", text).unwrap();
    /// assert_eq!(sc.lock_ceilings()[0].map(|c| c.priority()), Some(3));
    /// ```
    pub fn lock_ceilings(&self) -> Vec<Option<LockCeiling>> {
        let specs = self.specs();
        self.resources
            .iter()
            .map(|r| {
                let users = r.users.iter().map(|&i| (specs[i].priority_value(), specs[i].relative_deadline()));
                LockCeiling::of(r.ceiling, users)
            })
            .collect()
    }

    /// Whether the scenario would run forever without a horizon: a periodic thread without
    /// `max_jobs`, a `forever` thread, or a periodic timer keeps producing work.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"p\"\nperiod = \"1ms\"\n").unwrap();
    /// assert!(sc.never_ends());
    /// ```
    pub fn never_ends(&self) -> bool {
        self.threads.iter().any(|t| t.forever || (matches!(t.timing, Timing::Periodic { .. }) && t.max_jobs.is_none()))
            || self.timers.iter().any(|t| t.periodic)
    }

    /// The runtime configuration: CPUs, policy, accounting, and enough thread, set and
    /// timing-event slots for every thread, set, `[[timer]]` and `[[request]]`.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[runtime]\ncpus = 3\n").unwrap();
    /// assert_eq!(sc.config().cpus(), 3);
    /// ```
    pub fn config(&self) -> Config {
        Config::new(self.cpus)
            .scheduler_factory(self.scheduler.clone())
            .max_threads((self.threads.len() + self.group_threads()).max(256))
            .max_timers(self.timing_events_per_cpu().max(256))
            .max_sets(self.sets.len().max(64) + self.admission_sets() + self.group_sets())
            .accounting(self.accounting)
            .costs(self.costs)
            .job_overhead(self.job_overhead)
    }

    /// The timing events the busiest CPU needs: its `[[timer]]`s and one per `[[request]]`
    /// arriving on it (each arrival releases that CPU's submitter).
    fn timing_events_per_cpu(&self) -> usize {
        let mut per_cpu = vec![0usize; self.cpus];
        let arrivals = self.admission.iter().flat_map(|a| a.requests.iter().map(|r| r.cpu));
        for cpu in self.timers.iter().map(|t| t.cpu).chain(arrivals) {
            if let Some(n) = per_cpu.get_mut(cpu) {
                *n += 1;
            }
        }
        per_cpu.into_iter().max().unwrap_or(0)
    }

    /// A runtime on clock `C` built from `config` (usually [`Scenario::config`], with the
    /// caller's additions), with every thread, lock, timing event and thread set of the
    /// scenario in place, ready to run.
    ///
    /// ```
    /// use tempi::clock::VirtualClock;
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nwcet = \"1ms\"\n").unwrap();
    /// let mut rt = sc.runtime::<VirtualClock>(sc.config().trace_capacity(0)).unwrap();
    /// assert_eq!(rt.run().unwrap().threads.len(), 1);
    /// ```
    pub fn runtime<C: Clock>(&self, config: Config) -> Result<Runtime<C>, ScenarioError> {
        self.runtime_with_admission(config).map(|(rt, _)| rt)
    }

    /// [`Scenario::runtime`], also returning the admissions of `[admission]` (if the file
    /// has one), whose logs the report lists after the run.
    ///
    /// ```
    /// use tempi::clock::VirtualClock;
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nwcet = \"1ms\"\n").unwrap();
    /// let (_, admissions) = sc.runtime_with_admission::<VirtualClock>(sc.config()).unwrap();
    /// assert!(admissions.is_none());
    /// ```
    pub fn runtime_with_admission<C: Clock>(
        &self,
        config: Config,
    ) -> Result<(Runtime<C>, Option<super::Admissions>), ScenarioError> {
        let mut rt = Runtime::<C>::new(config).map_err(|e| self.error(e.to_string()))?;
        self.populate(&mut rt)?;
        let admissions = self.populate_admission(&mut rt)?;
        Ok((rt, admissions))
    }

    /// Spawn every thread and register every timing event on `rt`. Errors the runtime raises
    /// are reported at the line of the thread or timer that caused them.
    ///
    /// ```
    /// let sc = tempi_cli::parse("s.toml", "[[thread]]\nname = \"t\"\nwcet = \"2ms\"\n").unwrap();
    /// let mut rt = tempi::Runtime::simulated(1);
    /// sc.populate(&mut rt).unwrap();
    /// assert_eq!(rt.run().unwrap().end, tempi::Time::from_millis(2));
    /// ```
    pub fn populate<C: Clock>(&self, rt: &mut Runtime<C>) -> Result<(), ScenarioError> {
        let at = |line: usize, message: String| ScenarioError { file: self.file.clone(), line: Some(line), message };
        // The locks need the threads' ids (their ceilings are computed from their users), and
        // the bodies need the locks: the bodies reach them through a cell filled once every
        // thread is spawned, before the run starts.
        let cell: Arc<OnceLock<Vec<Mutex<()>>>> = Arc::new(OnceLock::new());
        let names: Arc<Vec<String>> = Arc::new(self.resources.iter().map(|r| r.name.clone()).collect());
        let mut ids: Vec<ThreadId> = Vec::with_capacity(self.threads.len());
        for (index, (spec, def)) in self.specs().into_iter().zip(&self.threads).enumerate() {
            let steps = def.steps.clone();
            let forever = def.forever;
            let mut rng = SplitMix64::for_thread(self.seed, index);
            let (cell, names) = (cell.clone(), names.clone());
            let body = move |cx: &tempi::Ctx<'_>| loop {
                let locks = cell.get().map(Vec::as_slice).unwrap_or_default();
                // Guards of the locks held, innermost last.
                let mut held: Vec<MutexGuard<'_, ()>> = Vec::new();
                for step in &steps {
                    match *step {
                        Step::Work(d) => cx.work(d),
                        Step::WorkBetween(lo, hi) => cx.work(rng.between(lo, hi)),
                        Step::Sleep(d) => cx.sleep(d),
                        Step::Yield => cx.yield_now(),
                        Step::Lock(r) => match locks[r].lock(cx) {
                            Ok(g) => held.push(g),
                            // A deadlock, a poisoned lock: the job cannot go on as written.
                            Err(e) => panic!("lock \"{}\": {e}", names[r]),
                        },
                        Step::Unlock(_) => drop(held.pop()),
                    }
                }
                // Locks still held at the end of a pass are released innermost first.
                while let Some(g) = held.pop() {
                    drop(g);
                }
                // A runaway never leaves its first job; only the horizon, a budget action or
                // the end of the run stops it. Validation made sure each pass takes time, so
                // virtual time always advances.
                if !forever {
                    break;
                }
            };
            let id = rt.spawn(spec, body).map_err(|e| at(def.line, format!("thread \"{}\": {e}", def.name)))?;
            ids.push(id);
        }
        let mut locks = Vec::with_capacity(self.resources.len());
        for (r, ceiling) in self.resources.iter().zip(self.lock_ceilings()) {
            let users: Vec<ThreadId> = r.users.iter().map(|&i| ids[i]).collect();
            let mut spec = LockSpec::new(r.name.clone()).protocol(&r.protocol).cpu(r.cpu).users(&users);
            if let Some(c) = ceiling {
                spec = spec.ceiling_level(c);
            }
            let m = rt.create_mutex((), spec).map_err(|e| at(r.line, format!("resource \"{}\": {e}", r.name)))?;
            locks.push(m);
        }
        // Filled exactly once, here; no body has run yet.
        let _ = cell.set(locks);
        for (n, timer) in self.timers.iter().enumerate() {
            // A release of a thread of another CPU is posted to that CPU's queue in real time.
            let targets: Vec<ThreadId> = timer.release.iter().map(|&i| ids[i]).collect();
            rt.add_timer(timer.spec, move |ev| {
                for &t in &targets {
                    // The only failure is more releases in one firing than thread slots, which
                    // `config` rules out by sizing the slots to the thread count.
                    let _ = ev.release(t);
                }
            })
            .map_err(|e| at(timer.line, format!("timer #{}: {e}", n + 1)))?;
        }
        for set in &self.sets {
            let fail = |e: tempi::Error| at(set.line, format!("set \"{}\": {e}", set.name));
            // A real-time dispatcher only charges the threads it runs, so a set's members must
            // share its CPU there; virtual time simulates every CPU in one kernel and can mix.
            if C::MODE == ClockMode::Real
                && let Some(&i) = set.members.iter().find(|&&i| self.threads[i].cpu != set.cpu)
            {
                return Err(at(
                    set.line,
                    format!(
                        "set \"{}\": member \"{}\" is on CPU {} but the set is on CPU {}: real-time runs need \
                             every member on the set's CPU (set the set's `cpu`)",
                        set.name, self.threads[i].name, self.threads[i].cpu, set.cpu
                    ),
                ));
            }
            let id = rt.create_set(&set.name, set.cpu).map_err(fail)?;
            for &m in &set.members {
                rt.add_to_set(id, ids[m]).map_err(fail)?;
            }
            if let Some(b) = &set.budget {
                rt.set_budget(id, b.budget()).map_err(fail)?;
            }
        }
        Ok(())
    }
}

impl ThreadDef {
    fn spec(&self) -> ThreadSpec {
        let mut s = ThreadSpec::new(self.name.clone())
            .wcet(self.wcet)
            .importance(self.importance)
            .cpu(self.cpu)
            .criticality(self.criticality)
            .miss_policy(self.miss_policy);
        s = match self.timing {
            Timing::Periodic { period, phase } => s.periodic(period).phase(phase),
            Timing::Sporadic { min_interarrival } => s.sporadic(min_interarrival),
            Timing::OneShot => s,
        };
        if let Some(d) = self.deadline {
            s = s.deadline(d);
        }
        if let Some(a) = self.abort_after {
            s = s.abort_after(a);
        }
        if let Some(j) = self.max_jobs {
            s = s.max_jobs(j);
        }
        if self.os_backed {
            s = s.os_backed();
        }
        if let Some(b) = self.stack {
            s = s.stack_size(b);
        }
        s
    }
}

impl BudgetDef {
    /// The library budget this describes.
    ///
    /// ```text
    /// BudgetDef { amount: 2ms, server: Some(Deferrable), replenish: Periodic { period: 10ms }, .. }.budget()
    ///   == Budget::deferrable_server(2ms, 10ms)
    /// ```
    pub fn budget(&self) -> Budget {
        let period = match self.replenish {
            Replenishment::Manual => Duration::ZERO,
            Replenishment::Periodic { period }
            | Replenishment::Sporadic { period }
            | Replenishment::ConstantBandwidth { period } => period,
        };
        match self.server {
            // The library's constructors are the reference definition of each server; going
            // through them keeps the file format and the API from drifting apart.
            Some(ServerKind::Deferrable) => Budget::deferrable_server(self.amount, period),
            Some(ServerKind::Sporadic) => Budget::sporadic_server(self.amount, period),
            Some(ServerKind::ConstantBandwidth) => Budget::constant_bandwidth_server(self.amount, period),
            None => {
                // Names were checked when the file was read; notify is the harmless fallback.
                let action =
                    names::budget_action(&self.action).unwrap_or_else(|| Box::new(tempi::policy::budget::Notify));
                Budget::new(self.amount).replenish(self.replenish).boxed_action(action)
            }
        }
    }
}

/// SplitMix64 (Steele, Lea and Flood 2014): a tiny, well-mixed generator, so that work ranges
/// draw the same values for the same file and seed on every machine and every run.
#[derive(Debug, Clone)]
pub(super) struct SplitMix64(u64);

impl SplitMix64 {
    /// One independent stream per thread: the index is mixed into the scenario seed.
    pub(super) fn for_thread(seed: u64, index: usize) -> SplitMix64 {
        SplitMix64(seed ^ (index as u64).wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03))
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[lo, hi]` at nanosecond resolution (multiply-shift: no division, and the
    /// bias is below 2^-64 per value).
    pub(super) fn between(&mut self, lo: Duration, hi: Duration) -> Duration {
        let span = tempi::time::nanos(hi.saturating_sub(lo)) as u128 + 1;
        let offset = ((self.next() as u128 * span) >> 64) as u64;
        lo + Duration::from_nanos(offset)
    }
}
