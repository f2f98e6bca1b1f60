//! Chrome/Perfetto trace JSON (placeholder until the exporter lands).

use crate::runtime::RunOutcome;

/// The run as Chrome trace-event JSON, loadable in ui.perfetto.dev.
///
/// ```
/// let out = tempi::Runtime::simulated(1).run().unwrap();
/// let _ = tempi::trace::perfetto::to_json(&out);
/// ```
pub fn to_json(_out: &RunOutcome) -> String {
    String::from("{\"traceEvents\":[]}")
}
