//! `libtempi_c_static.a`: the C API as a static library, built by `cargo test` itself (which
//! builds every example) with the same features as the tests, so the C tests link against the
//! library of this very build without a second `cargo build` that would resolve features anew
//! and compile `tempi` again. Users build the library's own `libtempi_c.a`
//! (`cargo build --release -p tempi-c`); this copy holds the same object code.

extern crate tempi_c;
