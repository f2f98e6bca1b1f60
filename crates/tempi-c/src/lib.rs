//! # tempi-c: the C API of tempi
//!
//! Real-time threads from C and C++: runtimes on virtual or real time, threads whose bodies
//! are C functions, runs and their outcomes, through the header `include/tempi.h` (generated
//! from this crate by cbindgen) and `libtempi_c.a` / `libtempi_c.so`. `docs/C-API.md` is the
//! guide.
//!
//! ## Conventions
//!
//! - Every fallible call returns one [`tempi_status`]; results go through out-parameters,
//!   written only on success. [`tempi_status_str`] names a status and [`tempi_last_error`]
//!   gives the calling OS thread's last failure message.
//! - Handles are opaque, created by `tempi_X_new` (or the call that makes them) and released
//!   by `tempi_X_free`.
//! - Parameter and result structs carry their `size` first, so that the ABI can grow.
//! - Times are `uint64_t` nanoseconds; callbacks take a `void *userdata`.
//! - Every pointer argument is checked for null; no panic crosses the boundary: each entry
//!   point runs under `catch_unwind` and answers `TEMPI_PANIC`.
//! - The runtime's unwinds (abort, kill, stop) reach a C body as `TEMPI_INTERRUPTED` (see
//!   the `ctx` module).
//!
//! ```
//! use tempi_c::*;
//! let mut p = std::mem::MaybeUninit::<tempi_runtime_params>::uninit();
//! let mut rt = std::ptr::null_mut();
//! let mut out = std::ptr::null_mut();
//! // SAFETY: the pointers are valid for the calls.
//! unsafe {
//!     assert_eq!(tempi_runtime_params_init(p.as_mut_ptr()), tempi_status::TEMPI_OK);
//!     assert_eq!(tempi_runtime_new(p.as_ptr(), &mut rt), tempi_status::TEMPI_OK);
//!     assert_eq!(tempi_runtime_run(rt, 1_000_000, &mut out), tempi_status::TEMPI_OK);
//!     assert_eq!(tempi_runtime_run(rt, 1_000_000, &mut out), tempi_status::TEMPI_ENDED);
//!     tempi_outcome_free(out);
//!     tempi_runtime_free(rt);
//! }
//! ```
//!
//! Owns only the translation between C and `tempi`'s Rust API; must not reach into the
//! runtime's internals.

#![allow(clippy::missing_safety_doc)] // the header documents each call's contract
#![allow(non_camel_case_types)] // C names: tempi_runtime, tempi_status, ...

mod abandon;
pub mod admission;
pub mod ctx;
pub mod message;
pub mod outcome;
mod params;
pub mod runtime;
pub mod sets;
pub mod spring;
pub mod status;
pub mod sync;
pub mod timers;

pub use admission::*;
pub use ctx::*;
pub use message::*;
pub use outcome::*;
pub use runtime::*;
pub use sets::*;
pub use spring::*;
pub use status::*;
pub use sync::*;
pub use timers::*;
