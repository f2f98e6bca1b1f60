//! The trace: a fixed-size record for every kernel transition, kept in a preallocated buffer
//! per CPU, and the exporters that turn a finished run into files people read.
//!
//! Owns [`TraceRecord`], [`TraceKind`], the per-CPU buffer and the exporters
//! ([`perfetto`], [`gantt`], [`report`]). The kernel writes records; nothing here reads kernel
//! state.
//!
//! # Reading a trace
//!
//! Execution is bracketed: a [`TraceKind::Run`] record starts a segment of a thread on a CPU and
//! the next [`TraceKind::Stop`] record on that CPU ends it; the stop's `arg` is a [`StopReason`].
//! Everything else is an instant marker. Records are ordered by time, then by the order the
//! kernel wrote them (across independent real-time dispatchers: by time, then CPU).
//!
//! # A lock's records are in causal order
//!
//! For every lock, its [`TraceKind::LockAcquired`] and [`TraceKind::LockReleased`] records
//! alternate, holder by holder — an acquisition (or a hand-off to a waiter), then that
//! holder's release, then the next holder's acquisition — and their times never decrease, in
//! the merged trace and in the exports made from it (the Perfetto export keeps the trace's
//! order among equal times). A reader never sees two holders at once.
//!
//! - A CPU-local lock and, in virtual time, every lock are recorded by one kernel, at its
//!   instant, in the order things happen (the hand-off writes the releaser's `unlock` before
//!   the waiter's `lock`, at the same instant); ties are broken by that write order.
//! - A global (MSRP) lock in real time is taken and released by threads of several CPUs in
//!   their own code, and their kernels hear of it later. So the holders stamp the records
//!   themselves: the releaser reads its clock *before* it hands the lock on, and passes the
//!   instant to its kernel; the next holder's acquisition is stamped when it got the lock (the
//!   end of its spin, else its request), and never earlier than 1 ns after the release it
//!   follows, which it reads from the lock. Two CPUs' clocks may tie or differ by a few
//!   nanoseconds; the 1 ns floor keeps the order strict, so the merge by time cannot put
//!   the two CPUs' records the wrong way round. The kernel writes a global lock's `lock`
//!   (and `spin`) record only when the holder releases it, so the records are not in
//!   write order in the CPU's buffer; the merge sorts them by time. An ownership whose
//!   release the kernel never heard of (the run stopped while its thread unwound) is not
//!   traced at all.

pub mod admissions;
pub mod csv;
pub mod gantt;
#[cfg(feature = "export")]
pub mod perfetto;
pub mod plans;
pub mod report;
mod summary;

pub use crate::plain::{JobEnd, StopReason, TraceKind, TraceRecord};

/// A per-CPU record buffer with a capacity fixed at start-up. When full, new records are
/// counted and dropped, never allocated for: the run's statistics stay exact, only the
/// per-job detail is cut (the report says so).
#[derive(Debug)]
pub(crate) struct TraceBuffer {
    records: Vec<TraceRecord>,
    dropped: u64,
    enabled: bool,
}

impl TraceBuffer {
    pub(crate) fn new(capacity: usize) -> Result<TraceBuffer, crate::Error> {
        let records = crate::sizes::vec_with_capacity(capacity, "the trace buffer (Config::trace_capacity)")?;
        Ok(TraceBuffer { records, dropped: 0, enabled: capacity > 0 })
    }

    #[inline]
    pub(crate) fn push(&mut self, record: TraceRecord) {
        if !self.enabled {
            return;
        }
        if self.records.len() < self.records.capacity() {
            self.records.push(record);
        } else {
            self.dropped += 1;
        }
    }

    /// Records kept so far: the place the next one will take.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// The record kept at place `i`, to count more of the same on it.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut TraceRecord> {
        self.records.get_mut(i)
    }

    pub(crate) fn take(&mut self) -> (Vec<TraceRecord>, u64) {
        (std::mem::take(&mut self.records), self.dropped)
    }
}

/// Merge record lists into one list ordered by time, then write order (`seq`). Used within one
/// kernel, whose `seq` is shared by its CPUs, so the merged list keeps cause before effect.
pub(crate) fn merge_by_seq(mut lists: Vec<Vec<TraceRecord>>) -> Vec<TraceRecord> {
    // One CPU's buffer is usually already in order (always, in virtual time): hand it over
    // without copying. Releases are stamped with their nominal instant, which in real time can
    // precede the record before them; then it is sorted like any other.
    if lists.len() == 1 && lists[0].is_sorted_by_key(|r| r.time) {
        return lists.pop().unwrap_or_default();
    }
    let mut all = Vec::with_capacity(lists.iter().map(Vec::len).sum());
    for records in lists {
        all.extend(records);
    }
    all.sort_by_key(|r| (r.time, r.seq));
    all
}

/// Merge the lists of independent kernels (real time: one per CPU) by time, then CPU, keeping
/// each list's own order. A single list is returned as it is. Records of different kernels
/// about one lock (a global lock's) never share an instant (see the module docs), so the CPU
/// tie-break never puts an acquisition before the release it follows.
pub(crate) fn merge_kernels(mut lists: Vec<Vec<TraceRecord>>) -> Vec<TraceRecord> {
    if lists.len() == 1 {
        return lists.pop().unwrap_or_default();
    }
    let mut all = Vec::with_capacity(lists.iter().map(Vec::len).sum());
    for records in lists {
        all.extend(records);
    }
    all.sort_by_key(|r| (r.time, r.cpu));
    all
}
