//! The reference runs: the sequential mode (every event in key order, no speculation) and the
//! check mode (each reverse-handled event forward, reverse, forward again). Owns only these two
//! loops; they share the model interface and key rule with the optimistic engine, so their
//! results are what the engine must reproduce.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{
    validate_scenario, Committed, Emit, EventKey, LpId, Model, Rollback, Scenario, Sent, WarpConfig, WarpError,
};

/// The result of [`sequential`].
///
/// ```
/// use tempi::warp::{phold::Phold, sequential, WarpConfig};
/// let s = Phold { lps: 4, ..Phold::default() }.scenario(1, 1, 3);
/// let out = sequential(&s, &WarpConfig { end_time: 50, ..Default::default() }, |_| {}).unwrap();
/// assert_eq!(out.states.len(), 4);
/// assert!(out.committed > 0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SequentialOutcome<S> {
    /// Events processed (all committed).
    pub committed: u64,
    /// Each LP's final state.
    pub states: Vec<S>,
    /// Events left unprocessed at or after the end time.
    pub left: usize,
}

/// The result of [`check`].
///
/// ```
/// use tempi::warp::{check, phold::Phold, WarpConfig};
/// let s = Phold { lps: 4, ..Phold::default() }.scenario(1, 1, 3);
/// let report = check(&s, &WarpConfig { end_time: 50, ..Default::default() }).unwrap();
/// assert_eq!(report.checked, report.events); // every PHOLD LP uses its reverse handler
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckReport {
    /// Events processed.
    pub events: u64,
    /// Events whose reverse handler was checked (those of [`Rollback::Reverse`] LPs).
    pub checked: u64,
}

struct Pending<E> {
    key: EventKey,
    to: LpId,
    event: E,
}

impl<E> PartialEq for Pending<E> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}
impl<E> Eq for Pending<E> {}
impl<E> PartialOrd for Pending<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Pending<E> {
    // Reversed: `BinaryHeap` is a max-heap and the least key runs first.
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
}

struct SeqLp<S> {
    state: S,
    rng_index: u64,
    send_seq: u64,
}

/// Runs `scenario` one event at a time in global key order up to `config.end_time`, calling
/// `commit` for each event as it is processed: the reference the optimistic engine must
/// match. Only `lookahead`, `end_time`, `seed` and `max_sends_per_event` of `config` matter.
///
/// ```
/// use tempi::warp::{phold::Phold, sequential, WarpConfig};
/// let s = Phold { lps: 16, ..Phold::default() }.scenario(4, 1, 1);
/// let mut times = Vec::new();
/// sequential(&s, &WarpConfig { end_time: 100, ..Default::default() }, |c| times.push(c.key.time)).unwrap();
/// assert!(times.windows(2).all(|w| w[0] <= w[1]));
/// ```
pub fn sequential<M: Model>(
    scenario: &Scenario<M>,
    config: &WarpConfig,
    mut commit: impl FnMut(&Committed<'_, M>),
) -> Result<SequentialOutcome<M::State>, WarpError> {
    run_inner(scenario, config, &mut commit, None).map(|(out, _)| out)
}

/// The reverse-handler check: runs the scenario in key order, and for every event of a
/// [`Rollback::Reverse`] LP runs the forward handler, the reverse handler and the forward
/// handler again, comparing the state after the reverse with the state before, and after the
/// redo with the first forward's. The first difference is a [`WarpError::ReverseMismatch`]
/// naming the LP and the event.
///
/// ```
/// use tempi::warp::{check, Emit, LpId, LpSpec, Model, Rollback, Scenario, WarpConfig, WarpError};
/// struct Leaky;
/// impl Model for Leaky {
///     type State = u64;
///     type Event = ();
///     type Saved = ();
///     const HAS_REVERSE: bool = true;
///     fn event(&self, lp: LpId, n: &mut u64, _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
///         *n += 2;
///         out.send(lp, out.time() + 1, ());
///     }
///     fn reverse(&self, _: LpId, n: &mut u64, _: &(), _: &()) {
///         *n -= 1; // wrong: forward added 2
///     }
/// }
/// let mut s = Scenario::new(Leaky);
/// let lp = s.add_lp(LpSpec { state: 0, rollback: Rollback::Reverse, worker: 0 });
/// s.schedule(lp, 3, ()).unwrap();
/// let err = check(&s, &WarpConfig { end_time: 10, ..Default::default() }).unwrap_err();
/// assert!(matches!(err, WarpError::ReverseMismatch { lp: LpId(0), key, stage: "reverse" } if key.time == 3));
/// ```
pub fn check<M: Model>(scenario: &Scenario<M>, config: &WarpConfig) -> Result<CheckReport, WarpError>
where
    M::State: PartialEq,
{
    let mut discard = |_: &Committed<'_, M>| {};
    run_checked(scenario, config, &mut discard)
}

fn run_checked<M: Model>(
    scenario: &Scenario<M>,
    config: &WarpConfig,
    commit: &mut dyn FnMut(&Committed<'_, M>),
) -> Result<CheckReport, WarpError>
where
    M::State: PartialEq,
{
    // The comparison needs `PartialEq`, which the plain run does not require: the checked
    // loop is the same loop with the comparison passed in.
    let compare = |a: &M::State, b: &M::State| a == b;
    run_inner(scenario, config, commit, Some(&compare)).map(|(_, report)| report)
}

type Compare<'a, S> = Option<&'a dyn Fn(&S, &S) -> bool>;

fn run_inner<M: Model>(
    scenario: &Scenario<M>,
    config: &WarpConfig,
    commit: &mut dyn FnMut(&Committed<'_, M>),
    compare: Compare<'_, M::State>,
) -> Result<(SequentialOutcome<M::State>, CheckReport), WarpError> {
    validate_scenario(scenario, config)?;
    let model = &scenario.model;
    let n = scenario.lps().len();
    let mut lps: Vec<SeqLp<M::State>> =
        scenario.lps().iter().map(|spec| SeqLp { state: spec.state.clone(), rng_index: 0, send_seq: 0 }).collect();
    let mut heap: BinaryHeap<Pending<M::Event>> = BinaryHeap::with_capacity(scenario.initial_events().len() + 64);
    for (to, key, event) in scenario.initial_events() {
        heap.push(Pending { key: *key, to: *to, event: event.clone() });
    }
    let mut sends: Vec<(LpId, EventKey, M::Event)> = Vec::with_capacity(config.max_sends_per_event);
    let mut sent: Vec<Sent> = Vec::with_capacity(config.max_sends_per_event);
    let mut report = CheckReport { events: 0, checked: 0 };
    let mut committed = 0u64;
    while let Some(next) = heap.peek() {
        if next.key.time >= config.end_time {
            break;
        }
        let Some(Pending { key, to, event }) = heap.pop() else { break };
        let lp = &mut lps[to.index()];
        let mut saved = M::Saved::default();
        let mut error = None;
        sends.clear();
        let (rng0, seq0) = (lp.rng_index, lp.send_seq);
        let check_this = compare.is_some() && scenario.lps()[to.index()].rollback == Rollback::Reverse;
        let before = if check_this { Some(lp.state.clone()) } else { None };
        {
            let mut out = Emit::new(key, to, config, n, &mut lp.rng_index, &mut lp.send_seq, &mut sends, &mut error);
            model.event(to, &mut lp.state, &event, &mut saved, &mut out);
        }
        if let (Some(before), Some(same)) = (before, compare) {
            let after = lp.state.clone();
            model.reverse(to, &mut lp.state, &event, &saved);
            if !same(&lp.state, &before) {
                return Err(WarpError::ReverseMismatch { lp: to, key, stage: "reverse" });
            }
            lp.rng_index = rng0;
            lp.send_seq = seq0;
            sends.clear();
            error = None;
            saved = M::Saved::default();
            let mut out = Emit::new(key, to, config, n, &mut lp.rng_index, &mut lp.send_seq, &mut sends, &mut error);
            model.event(to, &mut lp.state, &event, &mut saved, &mut out);
            if !same(&lp.state, &after) {
                return Err(WarpError::ReverseMismatch { lp: to, key, stage: "redo" });
            }
            report.checked += 1;
        }
        if let Some(error) = error {
            return Err(WarpError::Send { lp: to, key, error });
        }
        sent.clear();
        sent.extend(sends.iter().map(|(to, key, _)| Sent { to: *to, key: *key }));
        commit(&Committed { lp: to, key, event: &event, saved: &saved, sent: &sent, late: false });
        committed += 1;
        report.events += 1;
        for (to, key, event) in sends.drain(..) {
            heap.push(Pending { key, to, event });
        }
    }
    let left = heap.len();
    let states = lps.into_iter().map(|lp| lp.state).collect();
    Ok((SequentialOutcome { committed, states, left }, report))
}
