#!/usr/bin/env bash
# Install the C API under PREFIX (default /usr/local): include/tempi.h, lib/libtempi_c.a,
# lib/libtempi_c.so and lib/pkgconfig/tempi.pc. Run from anywhere:
#
#   cargo build --release -p tempi-c && sudo crates/tempi-c/install.sh /usr/local
#   cc prog.c $(pkg-config --cflags --libs tempi)
set -euo pipefail
prefix="${1:-/usr/local}"
root="$(cd "$(dirname "$0")/../.." && pwd)"
lib="${CARGO_TARGET_DIR:-$root/target}/release"
install -d "$prefix/include" "$prefix/lib/pkgconfig"
install -m 644 "$root/include/tempi.h" "$prefix/include/tempi.h"
install -m 644 "$lib/libtempi_c.a" "$prefix/lib/libtempi_c.a"
install -m 755 "$lib/libtempi_c.so" "$prefix/lib/libtempi_c.so"
version="$(sed -n 's/^version = "\(.*\)"/\1/p' "$root/Cargo.toml" | head -1)"
cat >"$prefix/lib/pkgconfig/tempi.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: tempi
Description: Real-time threads (the C API of tempi)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -ltempi_c
Libs.private: -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
PC
echo "installed tempi under $prefix"
