//! One request planned with its dependents, all or nothing, and its answers recorded: shared
//! by virtual time (planned inline, on the requester's side) and real time (planned on the
//! planner's OS thread, recorded when published).

use std::time::Duration;

use crate::error::Error;
use crate::policy::admit::planner::{Decision, GroupRequest, PlanError, PlanOutcome, Planner, Rejection};
use crate::Time;

use super::exec::ThreadBody;
use super::{GroupDecision, GroupEntry, GroupSpec, State};
use crate::thread::ThreadSpec;

/// The planner's answers to one request: the group's, then each dependent's, with the
/// cumulated planner time in each `cost`.
pub(super) struct Answer {
    pub(super) outcomes: Vec<(PlanOutcome, GroupSpec)>,
    /// Whether every group of the request was accepted (the request is).
    pub(super) all: bool,
}

impl Answer {
    /// The ids the request's groups were accepted under (all of them when `all`).
    pub(super) fn accepted(&self) -> impl Iterator<Item = crate::policy::admit::planner::GroupId> + '_ {
        self.outcomes.iter().filter_map(|(o, _)| match o.decision {
            Decision::Accepted(id) => Some(id),
            Decision::Rejected(_) => None,
        })
    }

    /// Planner time spent on the whole request.
    pub(super) fn spent(&self) -> Duration {
        self.outcomes.last().map_or(Duration::ZERO, |(o, _)| o.cost)
    }
}

/// Submit `spec` and its dependents (theirs too, breadth first) at `now` on `planner` with
/// `submit`. Dependents are tried on a copy of the planner, so a refusal of any of them leaves
/// the plan as it was.
///
/// # Errors
/// [`Error::InvalidConfig`] if the planner refuses a request as malformed or too large.
pub(super) fn decide(
    planner: &mut Planner,
    mut spec: GroupSpec,
    now: Time,
    job_overhead: Duration,
    mut submit: impl FnMut(&mut Planner, &GroupRequest, Option<Duration>) -> Result<PlanOutcome, PlanError>,
) -> Result<Answer, Error> {
    // Dependents of dependents are planned in the same request, breadth first.
    let mut dependents: std::collections::VecDeque<GroupSpec> = std::mem::take(&mut spec.dependents).into();
    let mut trial = if dependents.is_empty() { None } else { Some(planner.clone()) };
    let target = trial.as_mut().unwrap_or(&mut *planner);
    let mut submit = |planner: &mut Planner, spec: &GroupSpec| {
        submit(planner, &spec.request_reserving(job_overhead), spec.max_wait)
            .map_err(|e| Error::InvalidConfig(format!("group \"{}\": {e}", spec.name)))
    };
    let first = submit(target, &spec)?;
    let mut outcomes = vec![(first, spec)];
    let mut spent = first.cost;
    while let Some(mut child) = dependents.pop_front() {
        dependents.extend(std::mem::take(&mut child.dependents));
        child.release = child.release.max(now);
        let accepted_so_far = outcomes.iter().all(|(o, _)| o.decision.is_accepted());
        let mut out = if accepted_so_far {
            submit(target, &child)?
        } else {
            PlanOutcome {
                decision: Decision::Rejected(first_rejection(&outcomes)),
                k: 0,
                evaluations: 0,
                backtracks: 0,
                cost: Duration::ZERO,
                ..first
            }
        };
        spent += out.cost;
        out.cost = spent;
        outcomes.push((out, child));
    }
    let all = outcomes.iter().all(|(o, _)| o.decision.is_accepted());
    if all && let Some(p) = trial {
        *planner = p;
    }
    Ok(Answer { outcomes, all })
}

impl State {
    /// Record the answers to group entry `g`'s request, made at `now`, and prepare the
    /// threads of its accepted groups (from the plan as it stands in `self.planner`).
    pub(super) fn record(&mut self, g: usize, answer: Answer, now: Time) -> Vec<(ThreadSpec, ThreadBody)> {
        let spent = answer.spent();
        let Answer { outcomes, all } = answer;
        let mut spawns = Vec::new();
        for (i, (out, spec)) in outcomes.into_iter().enumerate() {
            let entry = if i == 0 {
                g
            } else {
                self.groups.push(GroupEntry::new(spec.name.clone(), None));
                self.groups.len() - 1
            };
            // A dependent's refusal refuses the whole request.
            let decision = if all { out.decision } else { Decision::Rejected(first_rejection_of(out.decision)) };
            let id = match decision {
                Decision::Accepted(id) => Some(id),
                Decision::Rejected(_) => None,
            };
            let row = self.decisions.len();
            self.decisions.push(GroupDecision {
                group: spec.name.clone(),
                id,
                requested: now,
                decided: now.saturating_add(spent),
                outcome: PlanOutcome { decision, ..out },
            });
            self.groups[entry].decision = Some(row);
            self.groups[entry].id = id;
            if let Some(id) = id {
                spawns.extend(self.prepare(entry, id, spec));
            }
        }
        spawns
    }
}

/// The reason to give a group refused because its request as a whole was.
fn first_rejection(outcomes: &[(PlanOutcome, GroupSpec)]) -> Rejection {
    outcomes
        .iter()
        .find_map(|(o, _)| match o.decision {
            Decision::Rejected(r) => Some(r),
            Decision::Accepted(_) => None,
        })
        .unwrap_or(Rejection::Infeasible)
}

/// A group's own rejection, or `Infeasible` for one the planner accepted on its own but
/// whose request was refused as a whole.
fn first_rejection_of(d: Decision) -> Rejection {
    match d {
        Decision::Rejected(r) => r,
        Decision::Accepted(_) => Rejection::Infeasible,
    }
}
