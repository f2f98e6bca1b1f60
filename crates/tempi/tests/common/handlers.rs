//! A logging handler for exact timelines of handler invocations, and its log.

use std::sync::{Arc, Mutex};

use tempi::message::{Handler, Message};

use super::ms;

/// What the application wrote, in order.
pub type Log = Arc<Mutex<Vec<String>>>;

/// Append `s` to `log`.
pub fn push(log: &Log, s: String) {
    log.lock().unwrap().push(s);
}

/// What `log` holds now.
pub fn take(log: &Log) -> Vec<String> {
    log.lock().unwrap().clone()
}

/// A handler of CPU 0 with room for 4 queued messages that logs each message (by value) and
/// when it runs (`run V@MS`), works 4 ms for value 0 and 1 ms for the others, and replies
/// with ten times the value.
pub fn logging(log: &Log) -> Handler {
    let l = log.clone();
    Handler::new("h", 0, 4, move |hcx, m| {
        push(&l, format!("run {}@{}", m.value, hcx.now().as_nanos() / 1_000_000));
        hcx.work(ms(if m.value == 0 { 4 } else { 1 }));
        hcx.reply(Message::new(m.id, m.value * 10, 0));
    })
}
