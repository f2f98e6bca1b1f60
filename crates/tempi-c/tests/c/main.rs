//! The C API from C: the generated header (fresh, compiling as C11 and C++17), the C
//! examples built with the system compiler and checked against the same scenarios through
//! the Rust API, and misuse from C.

mod examples;
mod header;
mod ignore;
mod membership;
mod misuse;
mod support;
mod timers;
mod valgrind;
