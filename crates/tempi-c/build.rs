//! Writes `tempi.pc` (pkg-config) next to the library in the build's profile directory
//! (`target/release/tempi.pc`), pointing at this build tree: with
//! `PKG_CONFIG_PATH=target/release`, `cc prog.c $(pkg-config --cflags --libs tempi)` links the
//! shared library, with an rpath to it. `crates/tempi-c/install.sh PREFIX` installs the
//! header, the libraries and a `tempi.pc` for PREFIX instead.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // OUT_DIR is target/<profile>/build/tempi-c-<hash>/out.
    let Some(profile_dir) = out_dir.ancestors().nth(3) else { return };
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let include = manifest.join("../../include");
    let include = include.canonicalize().unwrap_or(include);
    let version = std::env::var("CARGO_PKG_VERSION").unwrap_or_default();
    let pc = format!(
        "# Written by crates/tempi-c/build.rs for this build tree.\n\
         libdir={libdir}\n\
         includedir={includedir}\n\
         \n\
         Name: tempi\n\
         Description: Real-time threads (the C API of tempi)\n\
         Version: {version}\n\
         Cflags: -I${{includedir}}\n\
         Libs: -L${{libdir}} -Wl,-rpath,${{libdir}} -ltempi_c\n\
         Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc\n",
        libdir = profile_dir.display(),
        includedir = include.display(),
    );
    // A read-only target directory leaves the file out; the library builds all the same.
    let _ = std::fs::write(profile_dir.join("tempi.pc"), pc);
}
