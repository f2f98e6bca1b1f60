//! Building and running C programs against the library this test was built with.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// The directory of the library's artifacts (`libtempi_c.a`, `libtempi_c.so`): the profile
/// directory this test binary was built into.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/<test binary>
    exe.parent().and_then(Path::parent).unwrap().to_path_buf()
}

/// What `libtempi_c.a` needs from the system (`--print native-static-libs`).
pub const NATIVE_LIBS: &[&str] = &["-lgcc_s", "-lutil", "-lrt", "-lpthread", "-lm", "-ldl", "-lc"];

/// A scratch directory for this test, emptied first.
pub fn scratch(name: &str) -> PathBuf {
    let dir = lib_dir().join("c-tests").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Run `cmd`, panicking with its output if it fails; its stdout.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Compile C source `src` (a path under the workspace) with the system `cc` as C11 with
/// every warning an error, linked statically with the library, into `dir`; the program's path.
pub fn build_c(src: &str, dir: &Path) -> PathBuf {
    build_with("cc", "-std=c11", src, dir)
}

/// Compile C++ source `src` with the system `g++` as C++17 with every warning an error,
/// linked statically with the library, into `dir`; the program's path.
pub fn build_cpp(src: &str, dir: &Path) -> PathBuf {
    build_with("g++", "-std=c++17", src, dir)
}

/// Compile `src` with `compiler` under language standard `std`, every warning an error, linked
/// statically with the library, into `dir`; the program's path.
fn build_with(compiler: &str, std: &str, src: &str, dir: &Path) -> PathBuf {
    build_library();
    let root = root();
    let exe = dir.join(Path::new(src).file_stem().unwrap());
    let mut cmd = Command::new(compiler);
    cmd.args([std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-g", "-I"])
        .arg(root.join("include"))
        .arg(root.join(src))
        .arg(test_lib_dir().join("libtempi_c_static.a"))
        .args(NATIVE_LIBS)
        .arg("-o")
        .arg(&exe);
    run(&mut cmd);
    exe
}

/// Where the C tests' copies of the libraries are: `libtempi_c_static.a` and
/// `libtempi_c_shared.so`, the crate's two examples (`examples/static_lib.rs`), which
/// `cargo test` builds with the tests' own features.
pub fn test_lib_dir() -> PathBuf {
    lib_dir().join("examples")
}

/// Make sure the libraries are those of this build, once per test process. A whole
/// `cargo test` has just built them; a run of this test alone (`--test c`) builds no
/// examples, so when they are missing or older than the crate's rlib they are built here, by
/// a second `cargo build` (slower: it resolves features for this crate alone and compiles
/// `tempi` again, which is why a whole run does not go this way).
pub fn build_library() {
    static BUILT: std::sync::Once = std::sync::Once::new();
    BUILT.call_once(|| {
        let modified = |p: PathBuf| std::fs::metadata(p).and_then(|m| m.modified()).ok();
        let rlib = modified(lib_dir().join("deps").join("libtempi_c.rlib"));
        let fresh = ["libtempi_c_static.a", "libtempi_c_shared.so"]
            .iter()
            .all(|f| matches!((modified(test_lib_dir().join(f)), rlib), (Some(lib), Some(rlib)) if lib >= rlib));
        if fresh {
            return;
        }
        let profile = if lib_dir().ends_with("release") { "release" } else { "dev" };
        let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
        run(Command::new(cargo)
            .args(["build", "-q", "-p", "tempi-c", "--lib", "--examples", "--profile", profile])
            .current_dir(root()));
    });
}

/// Whether `valgrind` is on PATH.
pub fn have_valgrind() -> bool {
    Command::new("valgrind").arg("--version").output().is_ok_and(|o| o.status.success())
}
