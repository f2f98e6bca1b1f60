//! How a global policy chooses the CPU a woken thread is offered
//! ([`Scheduler::select_cpu`]): the CPUs as the policy sees them ([`CpuChoice`], [`CpuView`])
//! and the default choice ([`default_cpu_choice`]). Must not: touch kernel state (the kernel
//! builds the views and carries the choice out, `kernel/cpu/global.rs`).

use super::{SchedInfo, Scheduler};

/// One CPU of a global run as [`Scheduler::select_cpu`] sees it.
///
/// ```
/// let v = tempi::policy::sched::CpuView { index: 1, running: None, offered: false, holds_cpu: false };
/// assert!(v.running.is_none());
/// ```
#[derive(Clone, Copy, Debug)]
pub struct CpuView<'a> {
    /// The CPU's number.
    pub index: usize,
    /// The thread it runs; `None` when it idles.
    pub running: Option<&'a SchedInfo>,
    /// It was offered a thread already and reschedules at its next turn: it cannot be
    /// chosen again until then.
    pub offered: bool,
    /// Its running thread holds it (preemption off, [`crate::Ctx::preemption`]): an offer
    /// waits until that thread switches preemption on.
    pub holds_cpu: bool,
}

/// The CPUs of a global run, in order, as [`Scheduler::select_cpu`] sees them: built by the
/// kernel over its own CPUs at each offer, without allocating.
///
/// ```
/// use tempi::policy::sched::{CpuChoice, CpuView};
/// let views = [CpuView { index: 0, running: None, offered: false, holds_cpu: false }];
/// let c = CpuChoice::new(&views);
/// assert_eq!((c.len(), c.get(0).unwrap().index), (1, 0));
/// assert!(c.get(1).is_none());
/// ```
pub struct CpuChoice<'a> {
    len: usize,
    source: CpuSource<'a>,
}

enum CpuSource<'a> {
    Views(&'a [CpuView<'a>]),
    Kernel(&'a dyn Fn(usize) -> CpuView<'a>),
}

impl<'a> CpuChoice<'a> {
    /// The CPUs `views` describe (to try a policy's choice outside a run).
    pub fn new(views: &'a [CpuView<'a>]) -> CpuChoice<'a> {
        CpuChoice { len: views.len(), source: CpuSource::Views(views) }
    }

    /// `len` CPUs, the `c`th described by `view(c)`: what the kernel hands a policy.
    pub(crate) fn from_fn(len: usize, view: &'a dyn Fn(usize) -> CpuView<'a>) -> CpuChoice<'a> {
        CpuChoice { len, source: CpuSource::Kernel(view) }
    }

    /// How many CPUs the run has.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the run has no CPU (never, in a run).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The `c`th CPU, or `None` past the last.
    pub fn get(&self, c: usize) -> Option<CpuView<'a>> {
        if c >= self.len {
            return None;
        }
        Some(match self.source {
            CpuSource::Views(views) => views[c],
            CpuSource::Kernel(view) => view(c),
        })
    }

    /// Every CPU, in order.
    pub fn iter(&self) -> impl Iterator<Item = CpuView<'a>> + '_ {
        (0..self.len).filter_map(|c| self.get(c))
    }
}

/// The CPU choice every global policy makes unless it says otherwise
/// ([`Scheduler::select_cpu`]): the lowest-numbered idle CPU not offered yet; else, first
/// among the CPUs whose threads may be preempted and then among those holding their CPU, the
/// one not offered yet that runs the least urgent thread (the highest-numbered among equals),
/// if `policy`'s [`Scheduler::should_preempt`] says `woken` preempts that thread; else none.
///
/// ```
/// use tempi::policy::sched::{default_cpu_choice, CpuChoice, CpuView, GlobalEdf, SchedInfo};
/// let views = [CpuView { index: 0, running: None, offered: false, holds_cpu: false }];
/// # use tempi::{policy::sched::Urgency, Runtime, ThreadSpec, Time};
/// # let mut rt = Runtime::simulated(1);
/// # let t = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
/// # let woken = SchedInfo {
/// #     id: t, cpu: 0, priority: 0, urgency: Urgency(0), importance: 0, release: Time::ZERO,
/// #     deadline: None, period: None, relative_deadline: None, wcet: Default::default(),
/// #     job_cpu_time: Default::default(), job: 0,
/// # };
/// assert_eq!(default_cpu_choice(&GlobalEdf::new(), &woken, &CpuChoice::new(&views)), Some(0));
/// ```
pub fn default_cpu_choice<S: Scheduler + ?Sized>(policy: &S, woken: &SchedInfo, cpus: &CpuChoice<'_>) -> Option<usize> {
    if let Some(idle) = cpus.iter().find(|v| v.running.is_none() && !v.offered) {
        return Some(idle.index);
    }
    for holding in [false, true] {
        let mut target: Option<(usize, &SchedInfo)> = None;
        for v in cpus.iter().filter(|v| !v.offered && v.holds_cpu == holding) {
            let Some(running) = v.running else { continue };
            if target.is_none_or(|(_, least)| running.urgency <= least.urgency) {
                target = Some((v.index, running));
            }
        }
        if let Some((c, running)) = target
            && policy.should_preempt(running, woken)
        {
            return Some(c);
        }
    }
    None
}
