//! The `tempi` command line.

mod bench;

fn main() {
    if let Err(e) = bench::run(false, true) {
        eprintln!("tempi: {e}");
        std::process::exit(1);
    }
}
