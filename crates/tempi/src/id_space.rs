//! The process-wide space of thread ids: which runtime holds each id tag, and from which
//! generation the next holder of a tag numbers its threads.
//!
//! Owns the tag table and the [`IdSpace`] lease a runtime holds while it (or any of its
//! kernels) lives. A [`ThreadId`] is one word: the runtime's tag and the slot index, then
//! the slot's generation. Two runtimes alive at once hold different tags, so their ids never
//! share a word; a runtime that takes a tag after an earlier one let it go numbers its
//! generations from above every generation the earlier one used (its *floor*), so an id of
//! the earlier runtime never names one of its threads and is told from its own by its
//! generation ([`IdCheck::owns`]). The hot paths thus compare one word, and the runtime is
//! checked once, where an id enters the runtime.
//!
//! Must not touch kernel state: the kernel asks a lease for its tag and floor when it is
//! built and tells it the highest generation it handed out.
//!
//! Limits: at most [`IdSpace::TAGS`] runtimes alive at once (`Runtime::new` refuses the next
//! with [`Error::TooManyRuntimes`]); a tag whose floor passes 2^31 is retired, so one
//! process may spawn some 2^43 threads over all its runtimes; and a slot reused more than
//! 2^31 times by one runtime wraps its generation (as any finite generation does).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::error::Error;
use crate::plain::ThreadId;

/// A tag's floor is retired once it passes this: every runtime keeps at least 2^31
/// generations per slot above its floor.
const RETIRE_AT: u32 = 1 << 31;

/// Whether an id was made by one runtime: its tag and its floor, copied where ids enter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct IdCheck {
    tag: u16,
    floor: u32,
}

impl IdCheck {
    /// Whether `id` was made by the runtime this check is of: its tag, and a generation at
    /// or above the runtime's floor (the generations below it are earlier holders' of the tag).
    #[inline]
    pub(crate) fn owns(self, id: ThreadId) -> bool {
        id.tag() == self.tag && id.generation() >= self.floor
    }

    /// The slot field's high bits: the tag above the slot index.
    #[inline]
    pub(crate) fn slot_tag(self) -> u32 {
        (self.tag as u32) << ThreadId::TAG_SHIFT
    }

    /// The generation a slot's `local`-th use gets.
    #[inline]
    pub(crate) fn generation(self, local: u32) -> u32 {
        self.floor.wrapping_add(local)
    }
}

/// One runtime's hold on a tag; the tag goes back to the table, with its floor raised past
/// every generation used under it, when the last holder (the runtime or one of its kernels)
/// drops it.
#[derive(Debug)]
pub(crate) struct IdSpace {
    check: IdCheck,
    /// The highest local generation (above the floor) any slot has had.
    highest: AtomicU32,
}

struct TagTable {
    live: [bool; IdSpace::TAGS],
    floor: [u32; IdSpace::TAGS],
    /// Where the search for a free tag starts: tags are handed out in turn, so consecutive
    /// runtimes have different tags (and their ids different words) even when the earlier
    /// one is gone.
    next: usize,
}

static TABLE: Mutex<TagTable> =
    Mutex::new(TagTable { live: [false; IdSpace::TAGS], floor: [0; IdSpace::TAGS], next: 0 });

impl IdSpace {
    /// How many tags there are, and so how many runtimes may be alive at once (4 096): the
    /// tag fills the bits of the slot field above the slot index.
    pub(crate) const TAGS: usize = 1 << (32 - ThreadId::TAG_SHIFT);

    /// Take a free tag for a new runtime.
    pub(crate) fn lease() -> Result<Arc<IdSpace>, Error> {
        let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        let start = table.next;
        let found =
            (0..Self::TAGS).map(|k| (start + k) % Self::TAGS).find(|&t| !table.live[t] && table.floor[t] < RETIRE_AT);
        let Some(tag) = found else {
            return Err(Error::TooManyRuntimes { max: Self::TAGS });
        };
        table.live[tag] = true;
        table.next = (tag + 1) % Self::TAGS;
        let check = IdCheck { tag: tag as u16, floor: table.floor[tag] };
        Ok(Arc::new(IdSpace { check, highest: AtomicU32::new(0) }))
    }

    /// The runtime's tag and floor.
    #[inline]
    pub(crate) fn check(&self) -> IdCheck {
        self.check
    }

    /// A slot was given its `local`-th generation.
    pub(crate) fn note_generation(&self, local: u32) {
        self.highest.fetch_max(local, Ordering::Relaxed);
    }
}

impl Drop for IdSpace {
    fn drop(&mut self) {
        let mut table = TABLE.lock().unwrap_or_else(|e| e.into_inner());
        let tag = self.check.tag as usize;
        let used = self.highest.load(Ordering::Relaxed);
        table.floor[tag] = self.check.floor.saturating_add(used).saturating_add(1);
        table.live[tag] = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_comes_back_with_its_floor_above_every_generation_used_under_it() {
        let a = IdSpace::lease().unwrap();
        let ca = a.check();
        a.note_generation(5);
        let a_id = ThreadId::new(ca.slot_tag() | 3, ca.generation(5));
        assert!(ca.owns(a_id));
        drop(a);
        // Lease and give back tags in turn until the search comes round to `a`'s again
        // (holding none, so that runtimes other tests make meanwhile find tags free).
        let mut tries = 0;
        let again = loop {
            let l = IdSpace::lease().unwrap();
            if l.check().tag == ca.tag {
                break l;
            }
            tries += 1;
            assert!(tries < 100 * IdSpace::TAGS, "the tag comes round");
        };
        let cb = again.check();
        assert!(cb.floor > ca.generation(5));
        assert!(!cb.owns(a_id), "an id of the tag's earlier holder is not the new holder's");
        let b_id = ThreadId::new(cb.slot_tag() | 3, cb.generation(0));
        assert!(cb.owns(b_id));
        assert_ne!(a_id, b_id);
    }
}
