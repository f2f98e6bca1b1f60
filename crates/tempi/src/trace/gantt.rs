//! SVG Gantt chart (placeholder until the exporter lands).

use crate::runtime::RunOutcome;

/// The run as an SVG Gantt chart.
///
/// ```
/// let out = tempi::Runtime::simulated(1).run().unwrap();
/// let _ = tempi::trace::gantt::to_svg(&out);
/// ```
pub fn to_svg(_out: &RunOutcome) -> String {
    String::from("<svg xmlns=\"http://www.w3.org/2000/svg\"/>")
}
