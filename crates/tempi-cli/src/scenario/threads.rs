//! Checking one `[[thread]]` table: its kind and timing, CPU, stack, and its steps (durations,
//! work ranges, properly nested `lock`/`unlock` of declared resources).
//!
//! Owns [`thread_def`]; `validate.rs` calls it in file order and keeps the name index. It must
//! not look at other tables beyond the resources it is handed, nor spawn anything
//! (`runtime.rs`).

use std::collections::HashMap;
use std::time::Duration;

use toml::{Spanned, Value};

use tempi::{Criticality, MissPolicy, Timing};

use super::duration::{work_value, written};
use super::names;
use super::raw::{RawCriticality, RawKind, RawMissPolicy, RawStep, RawThread};
use super::source::Source;
use super::{ResourceDef, ScenarioError, Step, ThreadDef};

/// Smallest stack a thread may ask for: what the runtime needs to unwind and report a panic.
const MIN_STACK: usize = tempi::MIN_STACK_SIZE;
/// Largest stack a thread may ask for: 1 GiB.
const MAX_STACK: usize = 1 << 30;

pub(super) fn thread_def(
    src: &Source<'_>,
    t: &Spanned<RawThread>,
    cpus: usize,
    resources: &[ResourceDef],
    resource_index: &HashMap<String, usize>,
    lock_override: Option<&str>,
) -> Result<ThreadDef, ScenarioError> {
    let line = src.line(t.span().start);
    let t = t.get_ref();
    let name = t.name.get_ref().clone();
    if name.trim().is_empty() {
        return Err(src.field("thread: ", "name", &t.name, "must not be empty"));
    }
    let what = format!("thread \"{name}\": ");
    let what = what.as_str();

    let kind = match (&t.kind, &t.period) {
        (Some(k), _) => *k.get_ref(),
        (None, Some(_)) => RawKind::Periodic,
        (None, None) if t.min_interarrival.is_some() => RawKind::Sporadic,
        (None, None) => RawKind::Oneshot,
    };
    // Keys that belong to one kind only are errors elsewhere: silently ignoring `period` on a
    // sporadic thread would hide a mistake.
    let only_for = |v: &Option<Spanned<Value>>, field: &str, kind_name: &str, wanted: RawKind| match v {
        Some(v) if kind != wanted => Err(src.field(what, field, v, format!("only applies to {kind_name} threads"))),
        _ => Ok(()),
    };
    only_for(&t.period, "period", "periodic", RawKind::Periodic)?;
    only_for(&t.phase, "phase", "periodic", RawKind::Periodic)?;
    only_for(&t.min_interarrival, "min_interarrival", "sporadic", RawKind::Sporadic)?;

    let timing = match kind {
        RawKind::Periodic => {
            let Some(p) = &t.period else {
                let at = t.kind.as_ref().map_or(t.name.span().start, |k| k.span().start);
                return Err(src.err(at, format!("{what}field `period`: required for a periodic thread")));
            };
            let period = src.positive(what, "period", p)?;
            let phase = src.opt_duration(what, "phase", &t.phase)?.unwrap_or(Duration::ZERO);
            Timing::Periodic { period, phase }
        }
        RawKind::Sporadic => Timing::Sporadic {
            min_interarrival: src
                .opt_duration(what, "min_interarrival", &t.min_interarrival)?
                .unwrap_or(Duration::ZERO),
        },
        RawKind::Oneshot => Timing::OneShot,
    };

    let deadline = match &t.deadline {
        Some(d) => Some(src.positive(what, "deadline", d)?),
        None => None,
    };
    let abort_after = match &t.abort_after {
        Some(a) => Some(src.positive(what, "abort_after", a)?),
        None => None,
    };
    let wcet = src.opt_duration(what, "wcet", &t.wcet)?;
    let cpu = match &t.cpu {
        Some(c) if *c.get_ref() >= cpus => {
            return Err(src.field(
                what,
                "cpu",
                c,
                format!("CPU {} does not exist: [runtime] has cpus = {cpus}, numbered from 0", c.get_ref()),
            ))
        }
        Some(c) => *c.get_ref(),
        None => 0,
    };
    if let Some(j) = &t.max_jobs
        && *j.get_ref() == 0
    {
        return Err(src.field(what, "max_jobs", j, "must be at least 1"));
    }
    if let Some(s) = &t.stack {
        // Stacks are mapped when the thread is spawned; an absurd size would only fail there,
        // far from the line that asked for it.
        if !(MIN_STACK..=MAX_STACK).contains(s.get_ref()) {
            return Err(src.field(what, "stack", s, format!("must be between {MIN_STACK} and {MAX_STACK} bytes")));
        }
    }

    let steps = match &t.steps {
        None => vec![Step::Work(wcet.unwrap_or(Duration::ZERO))],
        Some(list) => {
            let mut steps = Vec::with_capacity(list.get_ref().len());
            // The locks held so far, innermost last, to check that the steps nest.
            let mut held: Vec<usize> = Vec::new();
            for s in list.get_ref() {
                let st = step(src, what, s, resource_index)?;
                match st {
                    Step::Lock(r) => {
                        let at = s.get_ref().lock.as_ref().unwrap_or(&t.name);
                        // A global resource (`msrp`) is shared by every CPU.
                        if resources[r].cpu != cpu && !names::lock_protocol_is_global(&resources[r].protocol) {
                            let e = src.field(
                                what,
                                "lock",
                                at,
                                format!(
                                    "resource \"{}\" is on CPU {} but the thread runs on CPU {cpu} (set the resource's \
                                     `cpu`)",
                                    resources[r].name, resources[r].cpu
                                ),
                            );
                            return Err(super::validate::from_lock_override(e, lock_override));
                        }
                        if held.contains(&r) {
                            return Err(src.field(
                                what,
                                "lock",
                                at,
                                format!(
                                    "resource \"{}\" is already held here (locks are not recursive)",
                                    resources[r].name
                                ),
                            ));
                        }
                        held.push(r);
                    }
                    Step::Unlock(r) => {
                        let at = s.get_ref().unlock.as_ref().unwrap_or(&t.name);
                        match held.last() {
                            Some(&top) if top == r => {
                                held.pop();
                            }
                            Some(&top) => {
                                return Err(src.field(
                                    what,
                                    "unlock",
                                    at,
                                    format!(
                                        "resource \"{}\" is not the innermost lock held (that is \"{}\"): unlock in \
                                         reverse order of locking",
                                        resources[r].name, resources[top].name
                                    ),
                                ))
                            }
                            None => {
                                return Err(src.field(
                                    what,
                                    "unlock",
                                    at,
                                    format!("resource \"{}\" is not held at this step", resources[r].name),
                                ))
                            }
                        }
                    }
                    _ => {}
                }
                steps.push(st);
            }
            steps
        }
    };
    let forever = t.forever.as_ref().is_some_and(|f| *f.get_ref());
    if let Some(f) = t.forever.as_ref().filter(|_| forever) {
        // Repeating steps that take no time would loop at one instant: the simulation would
        // never advance and the run would hang instead of failing.
        let least: Duration = steps
            .iter()
            .map(|s| match *s {
                Step::Work(d) | Step::WorkBetween(d, _) | Step::Sleep(d) => d,
                Step::Yield | Step::Lock(_) | Step::Unlock(_) => Duration::ZERO,
            })
            .sum();
        if least.is_zero() {
            return Err(src.field(
                what,
                "forever",
                f,
                "the repeated steps must take time (some `work` or `sleep` with a positive lower bound)",
            ));
        }
    }
    // Without a declared WCET, the largest amount of work a job can ask for is the honest
    // figure for reports and laxity-based policies.
    let declared_wcet = wcet;
    let wcet = wcet.unwrap_or_else(|| {
        steps
            .iter()
            .map(|s| match *s {
                Step::Work(d) | Step::WorkBetween(_, d) => d,
                _ => Duration::ZERO,
            })
            .sum()
    });

    warn_about_timing(src, what, t, &timing, declared_wcet, wcet, deadline, &steps, forever);

    Ok(ThreadDef {
        name,
        line,
        timing,
        wcet,
        deadline,
        abort_after,
        priority: t.priority,
        importance: t.importance.unwrap_or(0),
        cpu,
        criticality: match t.criticality {
            Some(RawCriticality::Soft) => Criticality::Soft,
            _ => Criticality::Hard,
        },
        miss_policy: match t.miss_policy {
            None | Some(RawMissPolicy::Continue) => MissPolicy::Continue,
            Some(RawMissPolicy::Abort) => MissPolicy::AbortJob,
            Some(RawMissPolicy::SkipNext) => MissPolicy::SkipNext,
        },
        max_jobs: t.max_jobs.as_ref().map(|j| *j.get_ref()),
        stack: t.stack.as_ref().map(|s| *s.get_ref()),
        steps,
        forever,
        os_backed: t.os_backed.unwrap_or(false),
    })
}

/// Warnings about a valid thread that is probably not what was meant: a WCET longer than the
/// time it has (every job misses), a periodic thread that does no work, and steps that can
/// work longer than the declared WCET (the analysis and laxity-based policies use the
/// declared figure).
#[allow(clippy::too_many_arguments)]
fn warn_about_timing(
    src: &Source<'_>,
    what: &str,
    t: &RawThread,
    timing: &Timing,
    declared_wcet: Option<Duration>,
    wcet: Duration,
    deadline: Option<Duration>,
    steps: &[Step],
    forever: bool,
) {
    let wcet_at = t.wcet.as_ref().map_or(t.name.span().start, |w| w.span().start);
    let (room, room_name) = match (deadline, timing) {
        (Some(d), _) => (Some(d), "deadline"),
        (None, Timing::Periodic { period, .. }) => (Some(*period), "period"),
        (None, Timing::Sporadic { min_interarrival }) if !min_interarrival.is_zero() => {
            (Some(*min_interarrival), "min_interarrival")
        }
        _ => (None, ""),
    };
    // The least a job can work: when even that does not fit, every job misses, which no
    // file means; a WCET alone above the room is an overload a file may mean, and saying
    // what a late job does (`miss_policy`) shows that it does.
    let least: Duration = steps
        .iter()
        .map(|s| match *s {
            Step::Work(d) | Step::WorkBetween(d, _) => d,
            _ => Duration::ZERO,
        })
        .sum();
    if let Some(room) = room {
        if least > room {
            src.warn(
                wcet_at,
                format!(
                    "{what}every job works at least {}, longer than its {room_name} {}: no job can meet its deadline",
                    written(least),
                    written(room)
                ),
            );
        } else if wcet > room && t.miss_policy.is_none() {
            src.warn(
                wcet_at,
                format!(
                    "{what}wcet {} is longer than its {room_name} {}: a job that works its wcet misses its deadline \
                     (set `miss_policy` if the overload is meant)",
                    written(wcet),
                    written(room)
                ),
            );
        }
    }
    let works = steps.iter().any(|s| match *s {
        Step::Work(d) | Step::WorkBetween(_, d) => !d.is_zero(),
        _ => false,
    });
    if matches!(timing, Timing::Periodic { .. }) && !works && !forever {
        src.warn(
            t.name.span().start,
            format!("{what}a periodic thread with no work: its jobs complete at once (give `wcet` or `work` steps)"),
        );
    }
    let longest: Duration = steps
        .iter()
        .map(|s| match *s {
            Step::Work(d) | Step::WorkBetween(_, d) => d,
            _ => Duration::ZERO,
        })
        .sum();
    if let (Some(declared), Some(_), false) = (declared_wcet, &t.steps, forever)
        && longest > declared
    {
        src.warn(
            wcet_at,
            format!(
                "{what}the steps can work {}, more than the declared wcet {}: the analysis and the policies \
                     trust the declared figure",
                written(longest),
                written(declared)
            ),
        );
    }
}

fn step(
    src: &Source<'_>,
    what: &str,
    s: &Spanned<RawStep>,
    resource_index: &HashMap<String, usize>,
) -> Result<Step, ScenarioError> {
    let r = s.get_ref();
    let keys = r.work.is_some() as u8
        + r.sleep.is_some() as u8
        + r.yield_now.is_some() as u8
        + r.lock.is_some() as u8
        + r.unlock.is_some() as u8;
    if keys != 1 {
        let how = if keys == 0 { "has none" } else { "has several" };
        return Err(src.field(
            what,
            "steps",
            s,
            format!("each step needs exactly one of `work`, `sleep`, `yield`, `lock`, `unlock`; this one {how}"),
        ));
    }
    for (key, name, make) in [("lock", &r.lock, Step::Lock as fn(usize) -> Step), ("unlock", &r.unlock, Step::Unlock)] {
        if let Some(n) = name {
            let Some(&i) = resource_index.get(n.get_ref()) else {
                return Err(src.field(
                    what,
                    key,
                    n,
                    format!("no resource named \"{}\" (declare it in a [[resource]] table)", n.get_ref()),
                ));
            };
            return Ok(make(i));
        }
    }
    if let Some(w) = &r.work {
        src.warn_bare_integer(what, "work", w);
        return work_value(w.get_ref()).map_err(|m| src.field(what, "work", w, m));
    }
    if let Some(d) = &r.sleep {
        return src.duration(what, "sleep", d).map(Step::Sleep);
    }
    match &r.yield_now {
        Some(y) if !*y.get_ref() => Err(src.field(what, "yield", y, "must be true (remove the step to not yield)")),
        _ => Ok(Step::Yield),
    }
}
