//! `libtempi_c_shared.so`: the C API as a shared library, built by `cargo test` itself for the
//! pkg-config test (see `static_lib.rs` for why). Users build `libtempi_c.so`
//! (`cargo build --release -p tempi-c`); this copy exports the same symbols.

extern crate tempi_c;
