//! The sizes an application gives the runtime (pool lengths, queue capacities, log room):
//! their limits, checked before anything is allocated, and the allocation of what they size,
//! which reports a refusal of the allocator as an error instead of aborting the process.
//!
//! Plain helpers below every other module; nothing here runs after start-up. Public so that
//! what is built on the runtime (admission, Spring, an application's own front end) sizes its
//! tables the same way: checked against a limit, allocated up front, refused with an error.

use std::collections::VecDeque;

use crate::error::Error;

/// The most messages a queue sized by the application holds: a thread's new queue
/// ([`crate::ThreadSpec::mailbox`]), its sporadic releases ([`crate::ThreadSpec::release_queue`]),
/// a handler's queue ([`crate::message::Handler::try_new`]).
pub(crate) const MAX_QUEUE: usize = 1 << 20;
/// The most save queues a thread or a handler has.
pub(crate) const MAX_SAVE_QUEUES: usize = 1024;
/// The most messages the save queues of one thread or one handler hold together (the number
/// of queues times the capacity of each).
pub(crate) const MAX_SAVED: usize = 1 << 22;

/// `Error::InvalidConfig` unless `value <= max`; the message names `field`, the value and the
/// limit.
///
/// ```
/// assert!(tempi::sizes::at_most("queue", 8, 16).is_ok());
/// assert!(tempi::sizes::at_most("queue", 32, 16).unwrap_err().to_string().contains("queue = 32"));
/// ```
pub fn at_most(field: &str, value: usize, max: usize) -> Result<(), Error> {
    match value <= max {
        true => Ok(()),
        false => Err(Error::InvalidConfig(too_large(field, value, max))),
    }
}

/// The words of a size refused for being above its limit.
///
/// ```
/// assert_eq!(tempi::sizes::too_large("log", 9, 4), "log = 9 is above its limit of 4");
/// ```
pub fn too_large(field: &str, value: usize, max: usize) -> String {
    format!("{field} = {value} is above its limit of {max}")
}

/// The error of an allocation of `n` entries of `T` for `what` that the allocator refused.
fn refused<T>(what: &str, n: usize, e: std::collections::TryReserveError) -> Error {
    let bytes = n.saturating_mul(std::mem::size_of::<T>());
    Error::InvalidConfig(format!("cannot allocate {what} ({n} entries, {bytes} bytes): {e}"))
}

/// An empty vector with room for exactly `n` entries, or an error naming `what`
/// ([`Error::InvalidConfig`]) when the allocator refuses: never an abort.
///
/// ```
/// let v: Vec<u64> = tempi::sizes::vec_with_capacity(4, "my table").unwrap();
/// assert!(v.capacity() >= 4);
/// assert!(tempi::sizes::vec_with_capacity::<[u8; 4096]>(usize::MAX / 8, "huge").is_err());
/// ```
pub fn vec_with_capacity<T>(n: usize, what: &str) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|e| refused::<T>(what, n, e))?;
    Ok(v)
}

/// `n` copies of `value`, or an error naming `what`.
///
/// ```
/// assert_eq!(tempi::sizes::vec_filled(3, 7u8, "v").unwrap(), [7, 7, 7]);
/// ```
pub fn vec_filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>, Error> {
    let mut v = vec_with_capacity(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// The `n` entries `f` makes, in order, or an error naming `what`.
///
/// ```
/// assert_eq!(tempi::sizes::vec_from_fn(3, |i| i * 2, "v").unwrap(), [0, 2, 4]);
/// ```
pub fn vec_from_fn<T>(n: usize, f: impl FnMut(usize) -> T, what: &str) -> Result<Vec<T>, Error> {
    let mut v = vec_with_capacity(n, what)?;
    v.extend((0..n).map(f));
    Ok(v)
}

/// An empty queue with room for `n` entries, or an error naming `what`.
///
/// ```
/// let q: std::collections::VecDeque<u8> = tempi::sizes::deque_with_capacity(2, "q").unwrap();
/// assert!(q.capacity() >= 2);
/// ```
pub fn deque_with_capacity<T>(n: usize, what: &str) -> Result<VecDeque<T>, Error> {
    let mut q = VecDeque::new();
    q.try_reserve_exact(n).map_err(|e| refused::<T>(what, n, e))?;
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_a_refused_allocation_is_an_error_naming_what() {
        // More bytes than an address space holds: refused before the allocator is asked.
        let err = vec_with_capacity::<[u8; 1 << 20]>(1 << 50, "the test pool").unwrap_err();
        let Error::InvalidConfig(why) = err else { panic!("{err:?}") };
        assert!(why.starts_with("cannot allocate the test pool (1125899906842624 entries"), "{why}");
        assert!(deque_with_capacity::<u64>(usize::MAX, "q").is_err());
        assert_eq!(vec_filled(3, 7u8, "v").unwrap(), [7, 7, 7]);
        assert_eq!(vec_from_fn(3, |i| i * 2, "v").unwrap(), [0, 2, 4]);
    }

    #[test]
    fn sizes_at_most_names_field_value_and_limit() {
        assert_eq!(at_most("f", 4, 4), Ok(()));
        assert_eq!(at_most("f", 5, 4), Err(Error::InvalidConfig("f = 5 is above its limit of 4".into())));
    }
}
