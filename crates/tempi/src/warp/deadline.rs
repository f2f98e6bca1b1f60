//! Commit deadlines: one cell per event slot of a worker, shared between the worker thread
//! (which arms a cell when an event with a deadline enters its pool, and commits or disarms it)
//! and the reactive watcher thread of the worker's CPU (which drops a cell whose deadline has
//! passed and runs the fallback). Exactly one of commit and drop wins each armed cell: both are
//! a compare-and-swap on the cell's state word, which carries a generation so a cell re-armed
//! for another event is never dropped by a look at its previous one.
//!
//! Owns the cells and their protocol (a seqlock: the fields are written only while the cell is
//! not pending, and a reader keeps what it read only if the state word did not change). The
//! watcher's loop is in `parallel.rs`.

use std::sync::atomic::{fence, AtomicU32, AtomicU64, AtomicUsize, Ordering};

use super::{EventKey, LpId};

const FREE: u64 = 0;
const PENDING: u64 = 1;
const COMMITTED: u64 = 2;
const DROPPED: u64 = 3;
const TAG: u64 = 3;

#[derive(Default)]
struct Cell {
    /// `generation << 2 | tag`.
    state: AtomicU64,
    deadline_ns: AtomicU64,
    lp: AtomicU32,
    time: AtomicU64,
    depth: AtomicU32,
    sender: AtomicU32,
    seq: AtomicU64,
}

/// A worker's deadline cells, one per event slot.
pub(super) struct Cells {
    cells: Box<[Cell]>,
    /// Cells pending now (the watcher skips its scan when there are none).
    armed: AtomicUsize,
}

/// What a watcher dropped: the event and its deadline.
pub(super) struct Dropped {
    pub(super) lp: LpId,
    pub(super) key: EventKey,
    pub(super) deadline_ns: u64,
}

impl Cells {
    pub(super) fn new(slots: usize) -> Self {
        Cells { cells: (0..slots).map(|_| Cell::default()).collect(), armed: AtomicUsize::new(0) }
    }

    /// The worker: the event in `slot` must be committed by `deadline_ns` (runtime time).
    pub(super) fn arm(&self, slot: u32, lp: LpId, key: EventKey, deadline_ns: u64) {
        let Some(c) = self.cells.get(slot as usize) else { return };
        let old = c.state.load(Ordering::Relaxed);
        if old & TAG == PENDING {
            return; // armed already (a bug elsewhere would show as a missing fallback, not a crash)
        }
        // The fields change only while the cell is not pending; a reader that saw the old
        // pending state sees a different state word afterwards.
        fence(Ordering::Release);
        c.deadline_ns.store(deadline_ns, Ordering::Relaxed);
        c.lp.store(lp.0, Ordering::Relaxed);
        c.time.store(key.time, Ordering::Relaxed);
        c.depth.store(key.depth, Ordering::Relaxed);
        c.sender.store(key.sender.0, Ordering::Relaxed);
        c.seq.store(key.seq, Ordering::Relaxed);
        let generation = (old >> 2).wrapping_add(1);
        self.armed.fetch_add(1, Ordering::Relaxed);
        c.state.store(generation << 2 | PENDING, Ordering::Release);
    }

    /// The worker commits the event in `slot`: `true` when its deadline had already passed
    /// and the watcher dropped it (the result is late; a fallback ran instead).
    pub(super) fn commit(&self, slot: u32) -> bool {
        let Some(c) = self.cells.get(slot as usize) else { return false };
        let s = c.state.load(Ordering::Acquire);
        match s & TAG {
            PENDING => {
                match c.state.compare_exchange(s, (s & !TAG) | COMMITTED, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(_) => {
                        self.armed.fetch_sub(1, Ordering::Relaxed);
                        false
                    }
                    // The watcher dropped it just now.
                    Err(now) => now & TAG == DROPPED,
                }
            }
            DROPPED => true,
            _ => false,
        }
    }

    /// The worker frees `slot` (committed, or annihilated): the cell is free for the next event.
    pub(super) fn disarm(&self, slot: u32) {
        let Some(c) = self.cells.get(slot as usize) else { return };
        let s = c.state.load(Ordering::Acquire);
        if s & TAG == FREE {
            return;
        }
        if s & TAG == PENDING && c.state.compare_exchange(s, s & !TAG, Ordering::AcqRel, Ordering::Acquire).is_ok() {
            self.armed.fetch_sub(1, Ordering::Relaxed);
            return;
        }
        // Committed or dropped (possibly just now): only the worker writes from here on.
        let s = c.state.load(Ordering::Acquire);
        c.state.store(s & !TAG, Ordering::Release);
    }

    /// The watcher: drops every pending cell whose deadline is at or before `now_ns` and calls
    /// `f` for each; returns how many.
    pub(super) fn expire(&self, now_ns: u64, mut f: impl FnMut(&Dropped)) -> u64 {
        if self.armed.load(Ordering::Relaxed) == 0 {
            return 0;
        }
        let mut n = 0;
        for c in self.cells.iter() {
            let s = c.state.load(Ordering::Acquire);
            if s & TAG != PENDING {
                continue;
            }
            let deadline_ns = c.deadline_ns.load(Ordering::Relaxed);
            let seen = Dropped {
                lp: LpId(c.lp.load(Ordering::Relaxed)),
                key: EventKey {
                    time: c.time.load(Ordering::Relaxed),
                    depth: c.depth.load(Ordering::Relaxed),
                    sender: LpId(c.sender.load(Ordering::Relaxed)),
                    seq: c.seq.load(Ordering::Relaxed),
                },
                deadline_ns,
            };
            fence(Ordering::Acquire);
            if c.state.load(Ordering::Relaxed) != s || deadline_ns > now_ns {
                continue; // changed while read (looked at again next time), or not due
            }
            if c.state.compare_exchange(s, (s & !TAG) | DROPPED, Ordering::AcqRel, Ordering::Relaxed).is_ok() {
                self.armed.fetch_sub(1, Ordering::Relaxed);
                n += 1;
                f(&seen);
            }
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::Cells;
    use crate::warp::{EventKey, LpId};

    fn key(t: u64) -> EventKey {
        EventKey { time: t, depth: 0, sender: LpId(1), seq: t }
    }

    #[test]
    fn commit_and_drop_exclude_each_other() {
        let cells = Cells::new(4);
        cells.arm(0, LpId(2), key(5), 100);
        cells.arm(1, LpId(3), key(6), 200);
        assert!(!cells.commit(1)); // in time
        let mut seen = Vec::new();
        assert_eq!(cells.expire(150, |d| seen.push((d.lp, d.key, d.deadline_ns))), 1);
        assert_eq!(seen, vec![(LpId(2), key(5), 100)]);
        assert!(cells.commit(0)); // late: dropped at 150
        assert_eq!(cells.expire(1_000, |_| {}), 0); // nothing pending: slot 1 committed
        cells.disarm(0);
        cells.disarm(1);
        // Re-armed for another event, annihilated before its deadline: no fallback.
        cells.arm(0, LpId(2), key(9), 300);
        cells.disarm(0);
        assert_eq!(cells.expire(1_000, |_| {}), 0);
    }
}
