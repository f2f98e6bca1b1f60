//! Ids as plain words, for bindings in other languages (the C API): a [`ThreadId`] crosses
//! such a boundary as one `u64` and is checked again where it comes back in.
//!
//! Owns only the two conversions; must not touch kernel state. A word that no runtime made
//! (a stale or forged one) converts back to an id that every runtime call refuses with the
//! error it gives any id of a thread it does not know ([`crate::Error::UnknownThread`] or
//! [`crate::Error::ForeignThread`]), as it does for ids of ended runtimes.

use crate::thread::ThreadId;

impl ThreadId {
    /// The id as one non-zero word, stable while the process lives; [`ThreadId::from_raw`]
    /// gives it back.
    ///
    /// ```
    /// use tempi::{Runtime, ThreadId, ThreadSpec};
    /// let mut rt = Runtime::simulated(1);
    /// let t = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    /// assert_ne!(t.to_raw(), 0);
    /// assert_eq!(ThreadId::from_raw(t.to_raw()), Some(t));
    /// ```
    pub fn to_raw(self) -> u64 {
        self.to_word()
    }

    /// The id whose word is `raw` ([`ThreadId::to_raw`]); `None` for zero. Any other word
    /// converts: the runtime refuses one it did not make when it is used.
    ///
    /// ```
    /// assert!(tempi::ThreadId::from_raw(0).is_none());
    /// assert!(tempi::ThreadId::from_raw(7).is_some());
    /// ```
    pub fn from_raw(raw: u64) -> Option<ThreadId> {
        ThreadId::from_word(raw)
    }
}
