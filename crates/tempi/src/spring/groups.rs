//! Group admission: declaring groups before the run ([`Spring::add_group`]), spawning them
//! from threads ([`Spring::spawn_sync`], [`Spring::spawn_async`]) and the answers to those
//! requests ([`Spring::status`]); planning a group entry now (with its dependents, all or
//! nothing) and spawning the threads of an accepted one. It must not touch plan execution
//! (task boundaries, the enforcement pool: `exec.rs`), the planner's OS thread (`realtime.rs`)
//! or the planner's search.

use crate::clock::Clock;
use crate::error::Error;
use crate::kernel::Ctx;
use crate::policy::admit::planner::Decision;
use crate::runtime::Runtime;
use crate::{Time, TimerSpec};

use super::{decide, exec, lock, GroupEntry, GroupSpec, Spring, Status, Ticket};

impl Spring {
    /// Declare a group before the run: it is planned at its release time, by the planner's
    /// thread.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] when more than [`SpringSpec::max_groups`](super::SpringSpec::max_groups) releases are
    /// pending, or when the group or one of its dependents is malformed, naming it: no
    /// thread, a thread with no task, a deadline before the release, an `after` that names
    /// the thread itself, a later one or no thread of the group, a resource or a home CPU the
    /// planner does not have (what the planner would refuse at the release, refused now so
    /// that it is not found only in [`Spring::events`]); [`Error::ForeignRuntime`] if `rt` is
    /// not the runtime this executor was made on; the runtime's errors adding the timer.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
    /// use tempi::Time;
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let spring = Spring::new(&mut rt, SpringSpec::new(PlannerConfig::new(1, 0))).unwrap();
    /// assert!(spring.add_group(&mut rt, GroupSpec::new("empty", Time::ZERO, Time::MAX)).is_err());
    /// let selfish = GroupSpec::new("selfish", Time::ZERO, Time::MAX)
    ///     .thread(GroupThread::new("a").after(0).work(TaskRequest::new(Duration::from_millis(1)), Duration::ZERO));
    /// let e = spring.add_group(&mut rt, selfish).unwrap_err();
    /// assert!(e.to_string().contains("group \"selfish\""), "{e}");
    /// ```
    pub fn add_group<C: Clock>(&self, rt: &mut Runtime<C>, group: GroupSpec) -> Result<(), Error> {
        if rt.id() != self.runtime {
            return Err(Error::ForeignRuntime);
        }
        if group.threads.is_empty() {
            return Err(Error::InvalidConfig(format!("group \"{}\" has no thread", group.name)));
        }
        {
            let st = lock(&self.state);
            let config = st.planner.config();
            check_group(&group, None, config.cpus, config.resources)?;
        }
        let release = group.release;
        let (planner_thread, new_instant) = {
            let mut st = lock(&self.state);
            if st.pending.len() == st.pending.capacity() {
                return Err(Error::InvalidConfig(format!(
                    "more than {} group releases declared",
                    st.pending.capacity()
                )));
            }
            let index = st.groups.len();
            st.groups.push(GroupEntry::new(group.name.clone(), Some(group)));
            let at = st.pending.partition_point(|&(r, _)| r <= release);
            st.pending.insert(at, (release, index));
            let new_instant = !st.timed.contains(&release);
            if new_instant {
                st.timed.push(release);
            }
            (st.planner_thread, new_instant)
        };
        if let (Some(planner), true) = (planner_thread, new_instant) {
            rt.add_timer(TimerSpec::at(release), move |ev| {
                // The queue is sized to every declared release, so this cannot fail.
                let _ = ev.release(planner);
            })?;
        }
        Ok(())
    }

    /// Synchronous spawn from a thread: plan `group` now (its release is raised to now if
    /// earlier), wait until the planner's answer is known (the modelled planner time, within
    /// the group's `max_wait` if it has one) and return it.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] if the planner refuses the request as malformed or too large
    /// for its tables; [`Error::ForeignRuntime`] for a thread of another runtime; the
    /// runtime's errors spawning the group's threads.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// let s = spring.clone();
    /// rt.spawn(ThreadSpec::new("app"), move |cx| {
    ///     let g = GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
    ///         .thread(GroupThread::new("a").work(TaskRequest::new(ms(1)), ms(1)));
    ///     assert!(s.spawn_sync(cx, g).unwrap().is_accepted());
    /// }).unwrap();
    /// rt.run().unwrap();
    /// assert_eq!(spring.tasks()[0].actual_finish, Some(Time::from_millis(3)));
    /// ```
    pub fn spawn_sync(&self, cx: &Ctx<'_>, group: GroupSpec) -> Result<Decision, Error> {
        self.check_caller(cx)?;
        if self.real_time() {
            let config = lock(&self.state).planner.config().planner_wcet;
            let wait = group.max_wait.map_or(config, |w| w.min(config));
            let until = cx.now().saturating_add(wait);
            let g = self.plan_now(cx, group)?;
            return self.wait_answer(cx, g, until);
        }
        let g = self.plan_now(cx, group)?;
        let d = {
            let st = lock(&self.state);
            let row = st.groups[g].decision.ok_or_else(|| Error::InvalidConfig("the group was not planned".into()))?;
            st.decisions[row].clone()
        };
        if d.decided > cx.now() {
            cx.sleep_until(d.decided);
        }
        Ok(d.outcome.decision)
    }

    /// Asynchronous spawn from a thread: plan `group` now and return at once with a ticket;
    /// [`Spring::status`] tells the answer once the modelled planner time has passed.
    ///
    /// # Errors
    /// As [`Spring::spawn_sync`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, Status};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// let s = spring.clone();
    /// rt.spawn(ThreadSpec::new("app"), move |cx| {
    ///     let g = GroupSpec::new("g", Time::ZERO, Time::from_millis(10))
    ///         .thread(GroupThread::new("a").work(TaskRequest::new(ms(1)), ms(1)));
    ///     let ticket = s.spawn_async(cx, g).unwrap();
    ///     assert_eq!(s.status(cx, ticket), Ok(Status::Unknown)); // the planner's time has not passed
    ///     cx.sleep(ms(1));
    ///     assert_eq!(s.status(cx, ticket), Ok(Status::Yes));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn spawn_async(&self, cx: &Ctx<'_>, group: GroupSpec) -> Result<Ticket, Error> {
        self.check_caller(cx)?;
        self.plan_now(cx, group).map(|group| Ticket { group, runtime: self.runtime })
    }

    /// The answer to an asynchronous request as known at `cx.now()`.
    ///
    /// # Errors
    /// [`Error::ForeignRuntime`] for a thread of another runtime, or a ticket another
    /// runtime's executor gave.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    /// use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, Status};
    /// use tempi::{Runtime, ThreadSpec, Time};
    /// let ms = Duration::from_millis;
    /// let mut rt = Runtime::simulated(1);
    /// let planner = PlannerConfig { planner_wcet: ms(2), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    /// let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    /// let s = spring.clone();
    /// rt.spawn(ThreadSpec::new("app"), move |cx| {
    ///     // Work that cannot fit before its deadline: the answer is no, once the planner's 2 ms
    ///     // have passed.
    ///     let g = GroupSpec::new("late", Time::ZERO, Time::from_millis(4))
    ///         .thread(GroupThread::new("a").work(TaskRequest::new(ms(3)), ms(3)));
    ///     let ticket = s.spawn_async(cx, g).unwrap();
    ///     assert_eq!(s.status(cx, ticket), Ok(Status::Unknown));
    ///     cx.sleep(ms(2));
    ///     assert_eq!(s.status(cx, ticket), Ok(Status::No));
    /// }).unwrap();
    /// rt.run().unwrap();
    /// ```
    pub fn status(&self, cx: &Ctx<'_>, ticket: Ticket) -> Result<Status, Error> {
        self.check_caller(cx)?;
        if ticket.runtime != self.runtime {
            return Err(Error::ForeignRuntime);
        }
        let st = lock(&self.state);
        let Some(d) = st.groups.get(ticket.group).and_then(|g| g.decision).and_then(|row| st.decisions.get(row)) else {
            return Ok(if st.groups.get(ticket.group).is_some_and(|g| g.error.is_some() || g.abandoned) {
                Status::No
            } else {
                Status::Unknown
            });
        };
        // In real time the answer is known once recorded; in virtual time once the modelled
        // planner time has passed.
        Ok(if st.rt.is_none() && cx.now() < d.decided {
            Status::Unknown
        } else if d.outcome.decision.is_accepted() {
            Status::Yes
        } else {
            Status::No
        })
    }

    /// The next declared group whose release has come by `now`, taken from the queue.
    pub(super) fn next_due(&self, now: Time) -> Option<usize> {
        let mut st = lock(&self.state);
        match st.pending.front() {
            Some(&(release, g)) if release <= now => {
                st.pending.pop_front();
                Some(g)
            }
            _ => None,
        }
    }

    /// The planner thread's job: plan every declared group due now.
    pub(super) fn plan_due(&self, cx: &Ctx<'_>) {
        while let Some(g) = self.next_due(cx.now()) {
            if let Err(e) = self.plan_entry(cx, g) {
                lock(&self.state).events.push(format!("{}: {e}", cx.now()));
            }
        }
    }

    /// Whether plans run in real time (the planner on its own OS thread).
    fn real_time(&self) -> bool {
        lock(&self.state).rt.is_some()
    }

    /// Plan a group spawned by a thread now (in real time: post it to the planner); its
    /// group entry.
    fn plan_now(&self, cx: &Ctx<'_>, mut group: GroupSpec) -> Result<usize, Error> {
        group.release = group.release.max(cx.now());
        let (g, real_time) = {
            let mut st = lock(&self.state);
            st.groups.push(GroupEntry::new(group.name.clone(), Some(group)));
            (st.groups.len() - 1, st.rt.is_some())
        };
        if real_time {
            self.post_plan(cx, g)?;
            let planner = lock(&self.state).planner_thread;
            if let Some(planner) = planner {
                // Already released (a job pending or running) is as good.
                let _ = cx.release(planner);
            }
            return Ok(g);
        }
        if let Err(e) = self.plan_entry(cx, g) {
            lock(&self.state).events.push(format!("{}: {e}", cx.now()));
            return Err(e);
        }
        Ok(g)
    }

    /// Submit group entry `g` at `cx.now()` (with its dependent groups, all or nothing),
    /// record the answers and, if accepted, spawn the threads.
    fn plan_entry(&self, cx: &Ctx<'_>, g: usize) -> Result<(), Error> {
        let now = cx.now();
        let spawns = {
            let mut st = lock(&self.state);
            let Some(spec) = st.groups[g].spec.take() else { return Ok(()) };
            st.planner.retire(now);
            let overhead = st.job_overhead;
            let answer = decide::decide(&mut st.planner, spec, now, overhead, |p, r, w| p.submit(r, now, w))?;
            st.record(g, answer, now)
        };
        for (spec, body) in spawns {
            let g = body.g;
            if let Err(e) = cx.spawn(spec, exec::body(self.clone(), body)) {
                let mut st = lock(&self.state);
                let message = format!("{now}: group \"{}\": a thread could not be spawned: {e}", st.groups[g].name);
                st.events.push(message);
                st.kill_group(g, now);
                return Err(e);
            }
        }
        Ok(())
    }
}

/// Refuse a malformed group or dependent, naming it, with the planner's own checks.
fn check_group(group: &GroupSpec, parent: Option<&str>, cpus: usize, resources: usize) -> Result<(), Error> {
    use crate::policy::admit::planner::PlanError;
    group.request().validate(cpus, resources).map_err(|e| {
        let thread = match e {
            PlanError::EmptyThread { thread }
            | PlanError::PredecessorNotEarlier { thread, .. }
            | PlanError::DuplicatePredecessor { thread, .. }
            | PlanError::DuplicateResource { thread, .. }
            | PlanError::UnknownCpu { thread, .. } => group.threads.get(thread).map(|t| (thread, t.name())),
            _ => None,
        };
        let named = thread.map(|(i, name)| format!(" (thread {i} is \"{name}\")")).unwrap_or_default();
        let of = parent.map(|p| format!(" (a dependent of \"{p}\")")).unwrap_or_default();
        Error::InvalidConfig(format!("group \"{}\"{of}: {e}{named}", group.name))
    })?;
    group.dependents.iter().try_for_each(|d| check_group(d, Some(&group.name), cpus, resources))
}
