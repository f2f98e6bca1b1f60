//! The check mode (forward, reverse, forward again) and the errors for bad input.

use tempi::warp::{
    check, phold::Phold, sequential, Emit, Engine, LpId, LpSpec, Model, Rollback, Scenario, Schedule, SendError,
    WarpConfig, WarpError,
};

/// A model whose reverse handler is wrong only for events at multiples of 7: a bug the check
/// must find at exactly that event.
struct Sloppy;

#[derive(Clone, Debug, PartialEq, Default)]
struct Tally {
    sum: u64,
    last: u64,
}

impl Model for Sloppy {
    type State = Tally;
    type Event = u64;
    type Saved = u64;
    const HAS_REVERSE: bool = true;

    fn event(&self, lp: LpId, t: &mut Tally, v: &u64, saved: &mut u64, out: &mut Emit<'_, u64>) {
        *saved = t.last;
        t.sum += v;
        t.last = out.time();
        let next = out.random_below(5) + 1;
        out.send(LpId((lp.0 + 1) % 3), out.time() + next, v + 1);
    }

    fn reverse(&self, _: LpId, t: &mut Tally, v: &u64, saved: &u64) {
        t.sum -= v;
        if !t.last.is_multiple_of(7) {
            t.last = *saved; // forgets to restore `last` at multiples of 7
        }
    }
}

fn sloppy_scenario() -> Scenario<Sloppy> {
    let mut s = Scenario::new(Sloppy);
    for w in 0..3 {
        s.add_lp(LpSpec { state: Tally::default(), rollback: Rollback::Reverse, worker: w % 2 });
    }
    s.schedule(LpId(0), 1, 1).unwrap();
    s
}

#[test]
fn the_check_finds_a_wrong_reverse_handler_at_its_first_bad_event() {
    let config = WarpConfig { workers: 2, end_time: 200, ..WarpConfig::default() };
    let mut first_bad = None;
    sequential(&sloppy_scenario(), &config, |c| {
        if first_bad.is_none() && c.key.time.is_multiple_of(7) {
            first_bad = Some((c.lp, c.key));
        }
    })
    .unwrap();
    let (lp, key) = first_bad.expect("some event lands on a multiple of 7");
    assert_eq!(check(&sloppy_scenario(), &config), Err(WarpError::ReverseMismatch { lp, key, stage: "reverse" }));
}

#[test]
fn the_check_passes_a_correct_reverse_handler() {
    let s = Phold { lps: 12, remote_fraction: 0.5, ..Phold::default() }.scenario(3, 1, 4);
    let report = check(&s, &WarpConfig { end_time: 300, ..WarpConfig::default() }).unwrap();
    assert!(report.events > 100);
    assert_eq!(report.checked, report.events);
}

#[test]
fn state_saving_lps_are_not_checked() {
    let s = Phold { lps: 4, ..Phold::default() }.scenario_with(1, 1, 0, |lp| {
        if lp.0 % 2 == 0 {
            Rollback::StateSaving
        } else {
            Rollback::Reverse
        }
    });
    let report = check(&s, &WarpConfig { end_time: 100, ..WarpConfig::default() }).unwrap();
    assert!(report.checked > 0 && report.checked < report.events);
}

#[test]
fn bad_configurations_are_errors() {
    let s = || Phold { lps: 4, ..Phold::default() }.scenario(1, 2, 0);
    for bad in [
        WarpConfig { workers: 0, ..WarpConfig::default() },
        WarpConfig { workers: 2, history_per_lp: 0, ..WarpConfig::default() },
        WarpConfig { workers: 2, events_per_worker: 4, max_sends_per_event: 4, ..WarpConfig::default() },
        WarpConfig { workers: 2, outbox_capacity: 0, ..WarpConfig::default() },
        WarpConfig { workers: 2, inbox_capacity: 0, ..WarpConfig::default() },
        WarpConfig { workers: 2, gvt_interval: 0, ..WarpConfig::default() },
        WarpConfig { workers: 2, events_per_worker: 1024, inbox_capacity: 1024, ..WarpConfig::default() },
        WarpConfig { workers: 2, max_sends_per_event: 0, ..WarpConfig::default() },
    ] {
        assert!(matches!(Engine::new(s(), bad.clone()), Err(WarpError::BadConfig { .. })), "{bad:?}");
        assert!(matches!(sequential(&s(), &bad, |_| {}), Err(WarpError::BadConfig { .. })), "{bad:?}");
    }
    let small_pool = WarpConfig {
        workers: 2,
        events_per_worker: 5,
        max_sends_per_event: 1,
        inbox_capacity: 2,
        ..WarpConfig::default()
    };
    let crowded = Phold { lps: 4, ..Phold::default() }.scenario(4, 2, 0);
    assert_eq!(Engine::new(crowded, small_pool).err(), Some(WarpError::PoolTooSmall { worker: 0, needed: 8 }));
}

struct Plain;
impl Model for Plain {
    type State = u64;
    type Event = u64;
    type Saved = ();
    fn event(&self, lp: LpId, n: &mut u64, ev: &u64, _: &mut (), out: &mut Emit<'_, u64>) {
        *n += 1;
        // Event 3 sends too early: an error the run must report, once it is final.
        let delay = if *ev == 3 { 0 } else { 2 };
        out.send(lp, out.time() + delay, ev + 1);
    }
}

#[test]
fn a_reverse_lp_without_a_reverse_handler_is_refused() {
    let mut s = Scenario::new(Plain);
    s.add_lp(LpSpec { state: 0, rollback: Rollback::Reverse, worker: 0 });
    assert_eq!(Engine::new(s, WarpConfig::default()).err(), Some(WarpError::NoReverseHandler { lp: LpId(0) }));
}

#[test]
fn a_refused_send_fails_the_run_when_its_event_commits() {
    let make = || {
        let mut s = Scenario::new(Plain);
        s.add_lp(LpSpec { state: 0, rollback: Rollback::StateSaving, worker: 0 });
        s.schedule(LpId(0), 0, 0).unwrap();
        s
    };
    let config = WarpConfig { lookahead: 1, end_time: 100, ..WarpConfig::default() };
    let expected = |e: WarpError| matches!(e, WarpError::Send { lp: LpId(0), key, error: SendError::BeforeLookahead { time: 6, earliest: 7 } } if key.time == 6);
    assert!(expected(sequential(&make(), &config, |_| {}).unwrap_err()));
    let mut e = Engine::new(make(), config).unwrap();
    assert!(expected(e.run(Schedule::RoundRobin, |_| {}).unwrap_err()));
}

#[test]
fn an_exhausted_pool_is_an_error_not_an_abort() {
    // Every event sends two: the population doubles until the pool cannot hold it.
    struct Doubling;
    impl Model for Doubling {
        type State = ();
        type Event = ();
        type Saved = ();
        fn event(&self, lp: LpId, _: &mut (), _: &(), _: &mut (), out: &mut Emit<'_, ()>) {
            out.send(lp, out.time() + 1, ());
            out.send(lp, out.time() + 1, ());
        }
    }
    let mut s = Scenario::new(Doubling);
    s.add_lp(LpSpec { state: (), rollback: Rollback::StateSaving, worker: 0 });
    s.schedule(LpId(0), 0, ()).unwrap();
    let config =
        WarpConfig { events_per_worker: 64, max_sends_per_event: 2, inbox_capacity: 8, ..WarpConfig::default() };
    let mut e = Engine::new(s, config).unwrap();
    assert!(matches!(e.run(Schedule::RoundRobin, |_| {}), Err(WarpError::Stalled { .. })));
}
