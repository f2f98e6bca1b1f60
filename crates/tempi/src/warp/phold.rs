//! PHOLD, the standard synthetic benchmark of parallel discrete-event simulation: a fixed
//! population of events hops between LPs; each event, when processed, sends one event to
//! itself or (with probability `remote_fraction`) to a random LP, `lookahead` plus a random
//! delay later. Owns the model only; it runs on any of the engine's modes.

use super::{Emit, LpId, LpSpec, Model, Rollback, Scenario};

/// The PHOLD parameters.
///
/// ```
/// use tempi::warp::{phold::Phold, sequential, WarpConfig};
/// let model = Phold { lps: 100, remote_fraction: 0.1, lookahead: 1, mean_delay: 8 };
/// let out = sequential(&model.scenario(4, 1, 0), &WarpConfig { end_time: 100, ..Default::default() }, |_| {}).unwrap();
/// assert_eq!(out.states.iter().map(|s| s.events).sum::<u64>(), out.committed);
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Phold {
    /// Number of LPs.
    pub lps: u32,
    /// Probability that an event goes to a random LP rather than back to its own.
    pub remote_fraction: f64,
    /// Least delay of a sent event, in ticks (should match [`super::WarpConfig::lookahead`] or
    /// exceed it).
    pub lookahead: u64,
    /// Extra delay drawn uniformly from `[0, 2 * mean_delay)` ticks.
    pub mean_delay: u64,
}

impl Default for Phold {
    fn default() -> Self {
        Phold { lps: 16, remote_fraction: 0.1, lookahead: 1, mean_delay: 4 }
    }
}

/// One PHOLD LP's state: its event count and a checksum over the events it processed, in
/// order (a wrong order or a missed rollback changes it).
///
/// ```
/// let s = tempi::warp::phold::PholdState::default();
/// assert_eq!((s.events, s.checksum), (0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PholdState {
    /// Events processed.
    pub events: u64,
    /// Order-sensitive hash of their keys.
    pub checksum: u64,
}

/// A PHOLD event: how many hops it has made.
///
/// ```
/// assert_eq!(tempi::warp::phold::PholdEvent::default().hops, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PholdEvent {
    /// Hops so far.
    pub hops: u32,
}

/// What the reverse handler needs: the checksum before the event.
///
/// ```
/// assert_eq!(tempi::warp::phold::PholdSaved::default().checksum, 0);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PholdSaved {
    /// The checksum before the event.
    pub checksum: u64,
}

impl Phold {
    /// A scenario: `population` events per LP at random times below `mean_delay` (drawn from
    /// `seed`), LPs in contiguous blocks over `workers`, every LP on its reverse handler.
    ///
    /// ```
    /// let s = tempi::warp::phold::Phold { lps: 10, ..Default::default() }.scenario(3, 2, 0);
    /// assert_eq!(s.initial_events().len(), 30);
    /// assert_eq!(s.lps()[9].worker, 1);
    /// ```
    pub fn scenario(&self, population: u32, workers: usize, seed: u64) -> Scenario<Phold> {
        self.scenario_with(population, workers, seed, |_| Rollback::Reverse)
    }

    /// As [`Phold::scenario`], with each LP's rollback chosen by `rollback`.
    ///
    /// ```
    /// use tempi::warp::{phold::Phold, Rollback};
    /// let s = Phold::default().scenario_with(1, 1, 0, |_| Rollback::StateSaving);
    /// assert!(s.lps().iter().all(|l| l.rollback == Rollback::StateSaving));
    /// ```
    pub fn scenario_with(
        &self,
        population: u32,
        workers: usize,
        seed: u64,
        mut rollback: impl FnMut(LpId) -> Rollback,
    ) -> Scenario<Phold> {
        let mut s = Scenario::new(*self);
        let workers = workers.max(1) as u64;
        for i in 0..self.lps {
            let worker = (i as u64 * workers / self.lps.max(1) as u64) as usize;
            s.add_lp(LpSpec { state: PholdState::default(), rollback: rollback(LpId(i)), worker });
        }
        for i in 0..self.lps {
            for j in 0..population {
                let spread = self.mean_delay.max(1);
                let time = super::stream_draw(seed, LpId(i), j as u64) % spread;
                // The LP exists, so scheduling cannot fail.
                let _ = s.schedule(LpId(i), time, PholdEvent::default());
            }
        }
        s
    }
}

fn mix(checksum: u64, time: u64, hops: u32) -> u64 {
    (checksum.rotate_left(5) ^ time ^ ((hops as u64) << 40)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl Model for Phold {
    type State = PholdState;
    type Event = PholdEvent;
    type Saved = PholdSaved;
    const HAS_REVERSE: bool = true;

    fn event(
        &self,
        lp: LpId,
        state: &mut PholdState,
        event: &PholdEvent,
        saved: &mut PholdSaved,
        out: &mut Emit<'_, PholdEvent>,
    ) {
        saved.checksum = state.checksum;
        state.events += 1;
        state.checksum = mix(state.checksum, out.time(), event.hops);
        let to =
            if out.random_f64() < self.remote_fraction { LpId(out.random_below(self.lps as u64) as u32) } else { lp };
        let delay = self.lookahead + out.random_below(2 * self.mean_delay);
        out.send(to, out.time() + delay, PholdEvent { hops: event.hops.wrapping_add(1) });
    }

    fn reverse(&self, _: LpId, state: &mut PholdState, _: &PholdEvent, saved: &PholdSaved) {
        state.events -= 1;
        state.checksum = saved.checksum;
    }

    fn same_event(&self, a: &PholdEvent, b: &PholdEvent) -> bool {
        a == b
    }
}
