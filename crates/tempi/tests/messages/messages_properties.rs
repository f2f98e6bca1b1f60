//! Property tests of the message queues: a new queue under a deadline policy is read in
//! (earliest constraint, arrival) order whatever the sending order; a save queue hands
//! messages back in (value, save) order; no message is lost or duplicated, and every message
//! goes back to the pool (a pool exactly as large as the traffic never runs out).

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use tempi::message::{Message, Read, Selection};
use tempi::policy::queue::ByDeadline;
use tempi::{Config, Runtime, ThreadSpec};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn messages_queues_keep_their_order_and_lose_nothing(
        constraints in proptest::collection::vec(0i64..6, 1..24),
        rounds in 1usize..4,
    ) {
        let n = constraints.len();
        let cfg = Config::new(1).message_pool(n);
        let mut rt = Runtime::<tempi::clock::VirtualClock>::new(cfg).unwrap();
        let read = Arc::new(Mutex::new(Vec::new()));
        let saved = Arc::new(Mutex::new(Vec::new()));
        let (r1, s1) = (read.clone(), saved.clone());
        let receiver = rt
            .spawn(ThreadSpec::new("r").priority(1).mailbox(n).message_queue(ByDeadline), move |cx| {
                for _ in 0..rounds {
                    for _ in 0..n {
                        let m = cx.read(Read::Wait).unwrap();
                        r1.lock().unwrap().push((m.constraint, m.id));
                        // Saved with the constraint as the value.
                        cx.save(0, Message::new(m.id, m.constraint, m.constraint)).unwrap();
                    }
                    for _ in 0..n {
                        let m = cx.read_saved(0, Selection::any()).unwrap();
                        s1.lock().unwrap().push((m.value, m.id));
                    }
                    assert!(cx.read_saved(0, Selection::any()).is_err());
                }
            })
            .unwrap();
        let cs = constraints.clone();
        rt.spawn(ThreadSpec::new("s").priority(2), move |cx| {
            for _ in 0..rounds {
                for (id, &c) in cs.iter().enumerate() {
                    cx.send(receiver, Message::new(id as i64, 0, c)).unwrap();
                }
                cx.sleep(std::time::Duration::from_millis(1));
            }
        })
        .unwrap();
        rt.run().unwrap();
        // Constraint 0 means "none": after every deadline.
        let mut expected: Vec<(i64, i64)> = constraints.iter().enumerate().map(|(i, &c)| (c, i as i64)).collect();
        expected.sort_by_key(|&(c, i)| (if c > 0 { c } else { i64::MAX }, i));
        let mut by_value: Vec<(i64, i64)> = expected.clone();
        by_value.sort_by_key(|&(c, i)| (c, expected.iter().position(|e| *e == (c, i)).unwrap()));
        let read = read.lock().unwrap();
        let saved = saved.lock().unwrap();
        for k in 0..rounds {
            prop_assert_eq!(&read[k * n..(k + 1) * n], &expected[..]);
            prop_assert_eq!(&saved[k * n..(k + 1) * n], &by_value[..]);
        }
    }
}
