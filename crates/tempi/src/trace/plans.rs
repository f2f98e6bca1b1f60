//! A Spring plan beside a run's trace: the planned windows of guaranteed tasks and the cutoff
//! line of each planning, for the Gantt chart ([`crate::trace::gantt::to_svg_with_plan`])
//! and the Perfetto trace ([`perfetto_with_plan`]).
//!
//! Owns the overlay's data and its drawing; it reads the run only through the exporters and
//! must not change what they write for a run without a plan.

use std::fmt::Write as _;

#[cfg(feature = "export")]
use crate::stats::RunOutcome;
use crate::Time;

/// One guaranteed task's planned window and what actually happened.
///
/// ```
/// let w = tempi::trace::plans::PlannedWindow { thread: "g/a".into(), task: 0, cpu: 0,
///     start: tempi::Time::ZERO, finish: tempi::Time::from_millis(1), actual_start: None, actual_finish: None };
/// assert_eq!(w.finish - w.start, std::time::Duration::from_millis(1));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PlannedWindow {
    /// The executing thread's name (`group/thread`).
    pub thread: String,
    /// The task's index in its thread.
    pub task: usize,
    /// Its CPU.
    pub cpu: usize,
    /// Planned start.
    pub start: Time,
    /// Planned finish.
    pub finish: Time,
    /// Actual start, if it ran.
    pub actual_start: Option<Time>,
    /// Actual finish, if it ended.
    pub actual_finish: Option<Time>,
}

/// Everything of a plan the outputs show.
///
/// ```
/// let p = tempi::trace::plans::PlanOverlay { windows: vec![], cutoffs: vec![] };
/// assert_eq!(p.last(), tempi::Time::ZERO);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlanOverlay {
    /// Planned windows, in plan order.
    pub windows: Vec<PlannedWindow>,
    /// Each planning: the group, the planning instant and its cutoff line.
    pub cutoffs: Vec<(String, Time, Time)>,
}

impl PlanOverlay {
    /// The latest instant the overlay marks.
    ///
    /// ```
    /// let p = tempi::trace::plans::PlanOverlay {
    ///     windows: vec![], cutoffs: vec![("g".into(), tempi::Time::ZERO, tempi::Time::from_millis(3))] };
    /// assert_eq!(p.last(), tempi::Time::from_millis(3));
    /// ```
    pub fn last(&self) -> Time {
        let w = self.windows.iter().map(|w| w.finish).max().unwrap_or(Time::ZERO);
        let c = self.cutoffs.iter().map(|c| c.2).max().unwrap_or(Time::ZERO);
        w.max(c)
    }
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

fn opt(t: Option<Time>) -> String {
    t.map_or_else(|| "-".to_string(), |t| t.to_string())
}

/// Draw `plan` into an SVG being written by the Gantt exporter: `lane_of` finds a thread's
/// lane by name, `x` maps nanoseconds to pixels, `lane_top` a lane to its top, and `geometry`
/// is (plot top, axis y, bar offset in a lane, bar height).
pub(super) fn draw(
    s: &mut String,
    plan: &PlanOverlay,
    lane_of: &dyn Fn(&str) -> Option<usize>,
    x: &dyn Fn(u64) -> f64,
    lane_top: &dyn Fn(usize) -> f64,
    geometry: (f64, f64, f64, f64),
) {
    let (top, axis_y, bar_top, bar_h) = geometry;
    for w in &plan.windows {
        let Some(lane) = lane_of(&w.thread) else { continue };
        let (x0, x1) = (x(w.start.as_nanos()), x(w.finish.as_nanos()));
        let y = lane_top(lane) + bar_top - 2.0;
        let tip = esc(&format!(
            "{} task {}: planned {} - {} on CPU {}, ran {} - {}",
            w.thread,
            w.task,
            w.start,
            w.finish,
            w.cpu,
            opt(w.actual_start),
            opt(w.actual_finish)
        ));
        let _ = writeln!(
            s,
            r#"<rect class="planned" x="{x0:.2}" y="{y:.2}" width="{:.2}" height="{:.2}" fill="none" stroke="black" stroke-width="1" stroke-dasharray="3,2"><title>{tip}</title></rect>"#,
            (x1 - x0).max(0.5),
            bar_h + 4.0
        );
    }
    for (group, at, cutoff) in &plan.cutoffs {
        let cx = x(cutoff.as_nanos());
        let tip = esc(&format!("{group} planned at {at}: cutoff line {cutoff}"));
        let _ = writeln!(
            s,
            r##"<line class="cutoff" x1="{cx:.2}" y1="{top:.2}" x2="{cx:.2}" y2="{axis_y:.2}" stroke="#7b3294" stroke-width="1" stroke-dasharray="6,3"><title>{tip}</title></line>"##
        );
    }
}

/// The Perfetto trace of `out` ([`crate::trace::perfetto::to_json`]) with the plan added: a
/// track `NAME (planned)` per executing thread on its CPU holding its planned windows
/// (category `plan`, with the actual start and finish in their arguments), and a `planner`
/// track on CPU 0 with each planning instant and its cutoff line.
///
/// ```
/// let out = tempi::Runtime::simulated(1).run().unwrap();
/// let plan = tempi::trace::plans::PlanOverlay {
///     windows: vec![], cutoffs: vec![("g".into(), tempi::Time::ZERO, tempi::Time::from_millis(1))] };
/// let json = tempi::trace::plans::perfetto_with_plan(&out, &plan);
/// let v: serde_json::Value = serde_json::from_str(&json).unwrap();
/// assert!(v["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "cutoff g"));
/// ```
#[cfg(feature = "export")]
pub fn perfetto_with_plan(out: &RunOutcome, plan: &PlanOverlay) -> String {
    let base = crate::trace::perfetto::to_json(out);
    let js = |s: &str| serde_json::to_string(s).unwrap_or_else(|_| String::from("\"\""));
    let us = |ns: u64| format!("{}.{:03}", ns / 1_000, ns % 1_000);
    // Track ids far above the thread tracks (thread slot + 1).
    const PLAN_TID: u64 = 1 << 40;
    let mut extra: Vec<String> = Vec::new();
    let mut tracks: Vec<(&str, usize)> = Vec::new();
    for w in &plan.windows {
        let key = (w.thread.as_str(), w.cpu);
        let track = match tracks.iter().position(|&k| k == key) {
            Some(i) => i,
            None => {
                tracks.push(key);
                let i = tracks.len() - 1;
                extra.push(format!(
                    r#"{{"name":"thread_name","ph":"M","pid":{},"tid":{},"args":{{"name":{}}}}}"#,
                    w.cpu,
                    PLAN_TID + 1 + i as u64,
                    js(&format!("{} (planned)", w.thread))
                ));
                i
            }
        };
        let (start, dur) = (w.start.as_nanos(), (w.finish - w.start).as_nanos() as u64);
        let opt = |t: Option<Time>| t.map_or_else(|| "null".to_string(), |t| t.as_nanos().to_string());
        extra.push(format!(
            r#"{{"name":{},"cat":"plan","ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"args":{{"planned_start_ns":{start},"planned_finish_ns":{},"actual_start_ns":{},"actual_finish_ns":{}}}}}"#,
            js(&format!("{} task {}", w.thread, w.task)),
            w.cpu,
            PLAN_TID + 1 + track as u64,
            us(start),
            us(dur),
            w.finish.as_nanos(),
            opt(w.actual_start),
            opt(w.actual_finish)
        ));
    }
    if !plan.cutoffs.is_empty() {
        extra
            .push(format!(r#"{{"name":"thread_name","ph":"M","pid":0,"tid":{PLAN_TID},"args":{{"name":"planner"}}}}"#));
    }
    for (group, at, cutoff) in &plan.cutoffs {
        for (name, t) in [(format!("planning {group}"), at), (format!("cutoff {group}"), cutoff)] {
            extra.push(format!(
                r#"{{"name":{},"cat":"plan","ph":"i","s":"t","pid":0,"tid":{PLAN_TID},"ts":{},"args":{{"planned_at_ns":{},"cutoff_ns":{}}}}}"#,
                js(&name),
                us(t.as_nanos()),
                at.as_nanos(),
                cutoff.as_nanos()
            ));
        }
    }
    if extra.is_empty() {
        return base;
    }
    let Some(end) = base.rfind("\n],\"displayTimeUnit\"") else { return base };
    let (head, tail) = base.split_at(end);
    let sep = if head.ends_with('[') { "\n" } else { ",\n" };
    format!("{head}{sep}{}{tail}", extra.join(",\n"))
}
