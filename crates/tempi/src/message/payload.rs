//! Typed payloads: a value of the application's own type carried by a message, held in a pool
//! sized before the run ([`crate::Runtime::payload_pool`]) so that attaching one never
//! allocates.
//!
//! A message carries only a [`Payload`] handle (pool, slot, stamp); the value waits in its
//! pool's slot until the recipient takes it ([`PayloadPool::take`]), which checks that the
//! handle is of this pool (so of this type) and not taken already. Whatever the runtime does
//! not deliver gives the slot back: the kernel releases the payload of every message it drops
//! (refused, read past, left in a queue or timed when its recipient or the run ends), through
//! the [`PayloadStore`] each kernel holds for every pool of its runtime, or, for a pool made by
//! another runtime of the process, through the process's list of pools. A stale handle (a
//! payload taken or released already) is harmless: the slot's stamp has moved on.
//!
//! Owns the pools and their slots. Must not: reach kernel state (what a kernel knows of a
//! pool, [`PayloadStore`], and the process's list of pools are the kernel's:
//! `kernel/messaging/payload_stores.rs`).

use std::any::type_name;
use std::fmt;

use std::sync::{Arc, Mutex, MutexGuard};

use super::{Message, MsgError, Payload};
use crate::kernel::{next_pool_id, register_pool, PayloadStore};

/// The most slots a payload pool has ([`crate::Runtime::payload_pool`]): 2^24, 16 Mi. Each
/// slot holds an `Option<T>` and two words of bookkeeping, all allocated when the pool is made.
///
/// ```
/// let mut rt = tempi::Runtime::simulated(1);
/// assert!(rt.payload_pool::<u8>(tempi::message::MAX_PAYLOAD_SLOTS + 1).is_err());
/// ```
pub const MAX_PAYLOAD_SLOTS: usize = 1 << 24;

struct Slots<T> {
    values: Vec<Option<T>>,
    /// Bumped on every release or take: a handle names one use of its slot.
    stamps: Vec<u32>,
    free: Vec<u32>,
}

struct Store<T> {
    id: u32,
    slots: Mutex<Slots<T>>,
}

impl<T> Store<T> {
    fn locked(&self) -> MutexGuard<'_, Slots<T>> {
        self.slots.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take the value `p` names out of its slot, freeing the slot.
    fn take(&self, p: Payload) -> Result<T, MsgError> {
        if p.pool != self.id {
            return Err(MsgError::WrongPayload);
        }
        let mut s = self.locked();
        let i = p.slot as usize;
        if s.stamps.get(i) != Some(&p.stamp) {
            return Err(MsgError::StalePayload);
        }
        let value = s.values[i].take().ok_or(MsgError::StalePayload)?;
        s.stamps[i] = s.stamps[i].wrapping_add(1);
        s.free.push(p.slot);
        Ok(value)
    }
}

impl<T: Send> PayloadStore for Store<T> {
    fn id(&self) -> u32 {
        self.id
    }
    fn release(&self, p: Payload) {
        // Dropped outside the lock: a value's destructor may take time.
        let value = self.take(p).ok();
        drop(value);
    }
}

/// A pool of values of type `T` that messages carry ([`Message::payload`]), made by
/// [`crate::Runtime::payload_pool`] with a fixed number of slots. Cloning gives another handle
/// on the same pool (to move into a thread's body).
///
/// Any runtime of the process may carry its payloads: whichever runtime drops a message that
/// carries one (refused, read past, left in a queue or timed when its recipient or the run
/// ends) gives the slot back to this pool, as the runtime that made the pool does.
///
/// ```
/// use tempi::message::{Message, Read};
/// use tempi::{Runtime, ThreadSpec};
/// let mut rt = Runtime::simulated(1);
/// let names = rt.payload_pool::<String>(4).unwrap();
/// let rx = names.clone();
/// let r = rt.spawn(ThreadSpec::new("r"), move |cx| {
///     let m = cx.read(Read::Wait).unwrap();
///     assert_eq!(rx.take(&m).unwrap(), "ada");
/// }).unwrap();
/// rt.spawn(ThreadSpec::new("s"), move |cx| {
///     let m = names.attach(Message::new(1, 0, 0), "ada".to_string()).unwrap();
///     cx.send(r, m).unwrap();
/// }).unwrap();
/// rt.run().unwrap();
/// ```
pub struct PayloadPool<T> {
    store: Arc<Store<T>>,
}

impl<T> Clone for PayloadPool<T> {
    fn clone(&self) -> Self {
        PayloadPool { store: self.store.clone() }
    }
}

impl<T> fmt::Debug for PayloadPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PayloadPool").field("type", &type_name::<T>()).field("id", &self.store.id).finish()
    }
}

impl<T: Send + 'static> PayloadPool<T> {
    /// A pool of `capacity` slots (at most [`MAX_PAYLOAD_SLOTS`]), and the kernels' view of
    /// it; an error if the allocator refuses the slots.
    pub(crate) fn new(capacity: u32) -> Result<(PayloadPool<T>, Arc<dyn PayloadStore>), crate::Error> {
        use crate::sizes::{vec_filled, vec_from_fn, vec_with_capacity};
        let n = capacity as usize;
        let what = "the payload pool";
        let values = vec_from_fn(n, |_| None, what)?;
        let stamps = vec_filled(n, 0, what)?;
        let mut free = vec_with_capacity(n, what)?;
        free.extend((0..capacity).rev());
        let store: Arc<Store<T>> =
            Arc::new(Store { id: next_pool_id(), slots: Mutex::new(Slots { values, stamps, free }) });
        let dyn_store: Arc<dyn PayloadStore> = store.clone();
        register_pool(store.id, &dyn_store);
        Ok((PayloadPool { store }, dyn_store))
    }

    /// `msg` carrying `value`: the value goes into a free slot of the pool and the message
    /// gets its handle. A full pool is [`MsgError::PayloadPoolFull`], and the value is given
    /// back with it. A payload the message carried before is released.
    ///
    /// ```
    /// use tempi::message::{Message, MsgError};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let pool = rt.payload_pool::<[u8; 4]>(1).unwrap();
    /// let m = pool.attach(Message::new(0, 0, 0), [1, 2, 3, 4]).unwrap();
    /// assert_eq!(pool.attach(Message::new(0, 0, 0), [5; 4]).unwrap_err(), (MsgError::PayloadPoolFull, [5; 4]));
    /// assert_eq!(pool.take(&m).unwrap(), [1, 2, 3, 4]);
    /// ```
    pub fn attach(&self, mut msg: Message, value: T) -> Result<Message, (MsgError, T)> {
        let mut s = self.store.locked();
        let Some(slot) = s.free.pop() else { return Err((MsgError::PayloadPoolFull, value)) };
        s.values[slot as usize] = Some(value);
        let stamp = s.stamps[slot as usize];
        drop(s);
        if let Some(old) = msg.payload.replace(Payload { pool: self.store.id, slot, stamp })
            && old.pool == self.store.id
        {
            self.store.release(old);
        }
        Ok(msg)
    }

    /// Take the value `msg` carries out of the pool (its slot is free again). Fails with
    /// [`MsgError::NoPayload`] if it carries none, [`MsgError::WrongPayload`] if its payload
    /// is of another pool (another type, or another pool of this type), and
    /// [`MsgError::StalePayload`] if it was taken already or released by the runtime.
    ///
    /// ```
    /// use tempi::message::{Message, MsgError};
    /// let mut rt = tempi::Runtime::simulated(1);
    /// let (ints, texts) = (rt.payload_pool::<i32>(1).unwrap(), rt.payload_pool::<String>(1).unwrap());
    /// let m = ints.attach(Message::new(0, 0, 0), 7).unwrap();
    /// assert_eq!(texts.take(&m), Err(MsgError::WrongPayload));
    /// assert_eq!(texts.take(&Message::new(0, 0, 0)), Err(MsgError::NoPayload));
    /// assert_eq!(ints.take(&m), Ok(7));
    /// assert_eq!(ints.take(&m), Err(MsgError::StalePayload));
    /// ```
    pub fn take(&self, msg: &Message) -> Result<T, MsgError> {
        self.store.take(msg.payload.ok_or(MsgError::NoPayload)?)
    }

    /// Free slots now.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// assert_eq!(rt.payload_pool::<u64>(3).unwrap().available(), 3);
    /// ```
    pub fn available(&self) -> usize {
        self.store.locked().free.len()
    }

    /// The name of the type it holds, for messages.
    ///
    /// ```
    /// let mut rt = tempi::Runtime::simulated(1);
    /// assert_eq!(rt.payload_pool::<u64>(1).unwrap().type_name(), "u64");
    /// ```
    pub fn type_name(&self) -> &'static str {
        type_name::<T>()
    }
}
