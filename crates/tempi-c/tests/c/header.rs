//! `include/tempi.h` is what cbindgen makes of the crate today, and compiles cleanly as C11
//! and as C++17.

use std::process::Command;

use super::support::{root, run, scratch};

#[test]
fn the_committed_header_is_fresh() {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let config = cbindgen::Config::from_file(format!("{crate_dir}/cbindgen.toml")).unwrap();
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen reads the crate")
        .write(&mut generated);
    let path = root().join("include/tempi.h");
    if std::env::var_os("TEMPI_BLESS").is_some_and(|v| v == "1") {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/tempi.h is stale: regenerate it with `TEMPI_BLESS=1 cargo test -p tempi-c --test c header` and commit it"
    );
}

#[test]
fn the_header_compiles_as_c11_and_cpp17() {
    let dir = scratch("header");
    let include = root().join("include");
    let c = dir.join("use.c");
    std::fs::write(
        &c,
        "#include \"tempi.h\"\nint main(void) { return tempi_status_str(TEMPI_OK)[0] == 'T' ? 0 : 1; }\n",
    )
    .unwrap();
    run(Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I"])
        .arg(&include)
        .arg(&c)
        .arg("-o")
        .arg(dir.join("use_c.o")));
    let cpp = dir.join("use.cpp");
    std::fs::write(&cpp, "#include \"tempi.h\"\nint main() { return tempi_status_str(TEMPI_OK)[0] == 'T' ? 0 : 1; }\n")
        .unwrap();
    run(Command::new("g++")
        .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c", "-I"])
        .arg(&include)
        .arg(&cpp)
        .arg("-o")
        .arg(dir.join("use_cpp.o")));
}
