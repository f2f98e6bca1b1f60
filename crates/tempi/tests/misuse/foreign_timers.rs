//! A timed message's handle belongs to the runtime that armed it. Two runtimes that run the
//! same program arm their timed messages in the same slot with the same stamp; the second's
//! thread, given the first's handle, must be refused rather than cancel its own message.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::message::{Message, MsgError, MsgTimer, Read};
use tempi::{Runtime, ThreadSpec};

#[test]
fn foreign_timers_a_handle_of_another_runtime_is_refused() {
    let ms = Duration::from_millis;
    let mut a = Runtime::simulated(1);
    let handle = Arc::new(Mutex::new(None::<MsgTimer>));
    let h = handle.clone();
    a.spawn(ThreadSpec::new("t"), move |cx| {
        *h.lock().unwrap() = Some(cx.bounce_after(ms(5), Message::new(1, 0, 0)).unwrap())
    })
    .unwrap();
    a.run().unwrap();
    let a_timer = handle.lock().unwrap().expect("armed");

    let mut b = Runtime::simulated(1);
    let seen = Arc::new(Mutex::new(None));
    let s = seen.clone();
    b.spawn(ThreadSpec::new("t"), move |cx| {
        let own = cx.bounce_after(ms(5), Message::new(2, 0, 0)).unwrap();
        let refused = cx.cancel_timer(a_timer);
        // B's own message is still armed and arrives at its instant.
        let arrived = cx.read(Read::Wait).map(|m| (m.id, cx.now()));
        *s.lock().unwrap() = Some((own == a_timer, refused.map(|m| m.id), arrived));
    })
    .unwrap();
    b.run().unwrap();
    let (same_handle_but_runtime, refused, arrived) = seen.lock().unwrap().take().unwrap();
    assert!(!same_handle_but_runtime);
    assert_eq!(refused, Err(MsgError::ForeignRuntime));
    assert_eq!(arrived, Ok((2, tempi::Time::from_millis(5))));
}
