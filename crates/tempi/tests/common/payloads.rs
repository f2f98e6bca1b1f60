//! A payload type for the typed-payload tests: it counts its drops, so a test can check that
//! every value the runtime did not deliver was released exactly once.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use tempi::message::{Message, PayloadPool};

/// A payload that counts its drops.
#[derive(Debug)]
pub struct Tracked {
    pub tag: i64,
    pub drops: Arc<AtomicUsize>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

/// `msg` with a [`Tracked`] payload tagged `tag`, from `pool`.
pub fn tracked(pool: &PayloadPool<Tracked>, drops: &Arc<AtomicUsize>, msg: Message, tag: i64) -> Message {
    pool.attach(msg, Tracked { tag, drops: drops.clone() }).unwrap()
}
