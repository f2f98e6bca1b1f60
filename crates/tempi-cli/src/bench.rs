//! `tempi bench` (placeholder until the benchmarks land).

/// Run every benchmark and print a table, or JSON with `json`.
pub fn run(_json: bool, _quick: bool) -> Result<(), String> {
    Err("benchmarks are not built yet".into())
}
