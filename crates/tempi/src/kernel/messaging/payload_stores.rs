//! What a kernel knows of the payload pools of messages: a [`PayloadStore`] per pool, enough
//! to give back the slot of a message it drops, the stores of its runtime
//! ([`PayloadStores`]), and the process's list of every pool alive, for a payload of a pool
//! another runtime made. The pools themselves, typed, are `message/payload.rs`'s, built on
//! this. Must not: know a pool's value type.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::plain::Payload;

/// Pool identities, unique in the process, so a handle is never read by the wrong pool.
static POOL_IDS: AtomicU32 = AtomicU32::new(1);

/// Every pool of the process still alive, by identity: a runtime that drops a message carrying
/// a payload of a pool another runtime made finds the pool here to give the slot back. Weak, so
/// the list keeps no pool alive; dead entries are swept when a pool is made.
static EVERY_POOL: Mutex<Vec<(u32, Weak<dyn PayloadStore>)>> = Mutex::new(Vec::new());

fn every_pool() -> MutexGuard<'static, Vec<(u32, Weak<dyn PayloadStore>)>> {
    EVERY_POOL.lock().unwrap_or_else(|e| e.into_inner())
}

/// What a kernel knows of a payload pool: enough to give back the slot of a message it drops.
pub(crate) trait PayloadStore: Send + Sync {
    /// The pool's identity.
    fn id(&self) -> u32;
    /// Drop the value `p` names, if it is still there; its slot is free again.
    fn release(&self, p: Payload);
}

/// A new pool's identity, never handed out before in the process.
pub(crate) fn next_pool_id() -> u32 {
    POOL_IDS.fetch_add(1, Ordering::Relaxed)
}

/// Add the pool `id` to the process's list (sweeping the dead entries first).
pub(crate) fn register_pool(id: u32, store: &Arc<dyn PayloadStore>) {
    let mut every = every_pool();
    every.retain(|(_, pool)| pool.strong_count() > 0);
    every.push((id, Arc::downgrade(store)));
}

/// The payload stores of one runtime, as each of its kernels holds them.
#[derive(Clone, Default)]
pub(crate) struct PayloadStores(Vec<Arc<dyn PayloadStore>>);

impl PayloadStores {
    pub(crate) fn push(&mut self, s: Arc<dyn PayloadStore>) {
        self.0.push(s);
    }

    /// Whether no message of this runtime can carry a payload: no pool was ever made in the
    /// process (a thread may attach a payload of another runtime's pool).
    pub(crate) fn no_pool_exists() -> bool {
        POOL_IDS.load(Ordering::Relaxed) == 1
    }

    /// Release `p` into its pool: one of this runtime's, or one another runtime made, found
    /// in the process's list (a pool dropped since has nothing to give back to).
    pub(crate) fn release(&self, p: Payload) {
        if let Some(s) = self.0.iter().find(|s| s.id() == p.pool) {
            s.release(p);
            return;
        }
        let pool = every_pool().iter().find(|(id, _)| *id == p.pool).and_then(|(_, pool)| pool.upgrade());
        if let Some(pool) = pool {
            pool.release(p);
        }
    }
}
