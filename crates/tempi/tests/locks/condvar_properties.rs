//! Property tests of a bounded buffer built from a mutex and two condition variables, under
//! random producers and consumers on one or two CPUs (virtual time), every locking protocol
//! that has a condition variable's wait, waits with and without timeouts, and random kills.
//! The kernel's own checks run after every step (`Config::verify`): effective urgencies stay
//! the maximum of what the held locks lend. No item is consumed twice or invented, the buffer
//! never holds more than its room, and without kills every item produced is consumed and
//! every thread completes. The run is exactly the same when repeated.

use crate::common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex as StdMutex};

use common::kills::{spawn_killer, UNIT};
use proptest::prelude::*;
use tempi::sync::{Condvar, LockSpec, Mutex};
use tempi::{Config, Runtime, ThreadId, ThreadOutcome, ThreadSpec, Time};

/// A producer (`true`) or consumer: its CPU, priority, items, work per item (units), and
/// whether it waits with a timeout (then it gives up after three timeouts in a row).
type Party = (bool, usize, i32, u64, u64, bool);

fn party() -> impl Strategy<Value = Party> {
    (any::<bool>(), 0usize..2, 1i32..6, 1u64..6, 0u64..3, any::<bool>())
}

#[derive(Debug)]
struct Seen {
    consumed: Vec<u64>,
    produced: u64,
    outcomes: Vec<Option<ThreadOutcome>>,
}

fn run(cpus: usize, protocol: &'static str, room: usize, parties: &[Party], kills: &[(u64, usize)]) -> Seen {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(Config::new(cpus).verify(true)).unwrap();
    let ceiling = parties.iter().map(|p| p.2).max().unwrap_or(1);
    let buffer: Arc<Mutex<VecDeque<u64>>> = Arc::new(
        rt.create_mutex(VecDeque::with_capacity(room), LockSpec::new("buffer").protocol(protocol).ceiling(ceiling))
            .unwrap(),
    );
    let not_full: Arc<Condvar> = Arc::new(rt.create_condvar(0).unwrap());
    let not_empty: Arc<Condvar> = Arc::new(rt.create_condvar(0).unwrap());
    let consumed = Arc::new(StdMutex::new(Vec::new()));
    let produced = Arc::new(StdMutex::new(0u64));
    let mut ids: Vec<ThreadId> = Vec::new();
    for (i, &(producer, cpu, prio, items, work, timed)) in parties.iter().enumerate() {
        let (buffer, not_full, not_empty) = (buffer.clone(), not_full.clone(), not_empty.clone());
        let (consumed, produced) = (consumed.clone(), produced.clone());
        // Mutexes under single-CPU protocols belong to CPU 0.
        let cpu = if protocol == "msrp" { cpu % cpus } else { 0 };
        let id = rt
            .spawn(ThreadSpec::new(format!("p{i}")).cpu(cpu).priority(prio), move |cx| {
                for k in 0..items {
                    cx.work(UNIT * work as u32);
                    let mut g = buffer.lock(cx).unwrap();
                    let mut timeouts = 0;
                    loop {
                        let blocked = if producer { g.len() >= room } else { g.is_empty() };
                        if !blocked {
                            break;
                        }
                        let cv = if producer { &not_full } else { &not_empty };
                        if timed {
                            let (again, timed_out) = cv.wait_timeout(cx, g, Some(UNIT * 5)).unwrap();
                            g = again;
                            timeouts = if timed_out { timeouts + 1 } else { 0 };
                            if timeouts == 3 {
                                return;
                            }
                        } else {
                            g = cv.wait(cx, g).unwrap();
                        }
                    }
                    assert!(g.len() <= room, "the buffer holds more than its room");
                    if producer {
                        let item = 1000 * i as u64 + k;
                        g.push_back(item);
                        *produced.lock().unwrap() += 1;
                        not_empty.notify_one(cx).unwrap();
                    } else {
                        let item = g.pop_front().unwrap();
                        consumed.lock().unwrap().push(item);
                        not_full.notify_one(cx).unwrap();
                    }
                }
            })
            .unwrap();
        ids.push(id);
    }
    spawn_killer(&mut rt, 100, UNIT, kills.iter().map(|&(at, v)| (at, ids[v % ids.len()])).collect());
    let out = rt.run_until(Time::from_millis(500)).unwrap();

    Seen {
        consumed: consumed.lock().unwrap().clone(),
        produced: *produced.lock().unwrap(),
        outcomes: out.threads.iter().map(|t| t.outcome.clone()).collect(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_bounded_buffer_never_invents_or_repeats_an_item(
        cpus in 1usize..3,
        protocol in prop::sample::select(vec!["bp", "bpi", "pcp", "srp", "km"]),
        room in 1usize..4,
        parties in proptest::collection::vec(party(), 1..6),
        kills in proptest::collection::vec((0u64..80, 0usize..6), 0..3),
    ) {
        let mut kills = kills;
        kills.sort();
        let seen = run(cpus, protocol, room, &parties, &kills);
        // Nothing panicked (an assertion in a body shows as a panicked thread).
        prop_assert!(
            seen.outcomes.iter().all(|o| !matches!(o, Some(ThreadOutcome::Panicked(_)))),
            "{:?}", seen
        );
        let mut once = seen.consumed.clone();
        once.sort();
        once.dedup();
        prop_assert_eq!(once.len(), seen.consumed.len(), "an item consumed twice: {:?}", seen.consumed);
        prop_assert!(seen.consumed.len() as u64 <= seen.produced);
        let made: Vec<u64> = parties
            .iter()
            .enumerate()
            .filter(|(_, p)| p.0)
            .flat_map(|(i, p)| (0..p.3).map(move |k| 1000 * i as u64 + k))
            .collect();
        prop_assert!(seen.consumed.iter().all(|c| made.contains(c)), "an item invented: {:?}", seen.consumed);
        let supply: u64 = parties.iter().filter(|p| p.0).map(|p| p.3).sum();
        let demand: u64 = parties.iter().filter(|p| !p.0).map(|p| p.3).sum();
        if kills.is_empty() && supply == demand && parties.iter().all(|p| !p.5) {
            prop_assert_eq!(seen.consumed.len() as u64, supply);
            prop_assert!(seen.outcomes.iter().all(|o| *o == Some(ThreadOutcome::Completed)), "{:?}", seen);
        }
        let again = run(cpus, protocol, room, &parties, &kills);
        prop_assert_eq!(format!("{:?}", again), format!("{:?}", seen));
    }
}
