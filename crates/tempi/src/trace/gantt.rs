//! SVG Gantt chart of a run, written as plain text (no drawing crate).
//!
//! Owns the chart layout: one lane per thread with its name on the left, a time axis with
//! 1/2/5 × 10^k ticks, execution segments as bars coloured per thread (with the CPU number
//! inside when the run had several CPUs and the bar is wide enough), and job markers: release
//! (upward triangle at the lane bottom), deadline (downward triangle at the lane top), miss (red
//! dot with a tooltip) and abort (cross). Timing events get a lane of their own.
//!
//! Thread sets with a budget show it on the lanes of their members: an exhaustion is a red
//! vertical bar across the lane, a replenishment a green diamond, and a member stopped because
//! its set is suspended gets a pause sign (two short bars) where its execution bar ends. A set
//! whose members have all gone by the end of the run (killed, ended) gets a lane of its own,
//! `set NAME`, so its events are not lost.
//!
//! Output is deterministic: coordinates are printed with two decimals and everything is drawn
//! in trace order. Bars and markers carry a `class` (`run`, `release`, `deadline`, `miss`,
//! `abort`, `timer`, `budget-exhausted`, `budget-replenished`, `suspend`) so a stylesheet or a
//! script can pick them out.

use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

use crate::plain::ThreadId;
use crate::plain::{StopReason, TraceKind};
use crate::stats::RunOutcome;
use crate::time::Time;
use crate::trace::report::{display_name, display_set, names, segments, set_names};

/// Width of the plot area in pixels; the time scale is chosen so the run fills it.
const PLOT_W: f64 = 1200.0;
const LANE_H: f64 = 30.0;
/// Bars sit inside the lane, clear of the release and deadline markers at its edges.
const BAR_TOP: f64 = 7.0;
const BAR_H: f64 = 16.0;
const TOP: f64 = 36.0;
const RIGHT: f64 = 40.0;
/// Colour-blind friendly and distinct from the pure red used for misses.
const PALETTE: [&str; 10] =
    ["#4e79a7", "#f28e2b", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#86bcb6"];
const MISS_COLOUR: &str = "#d00000";
/// Budget exhaustion shares the miss red: both say "this ran out of time".
const EXHAUSTED_COLOUR: &str = MISS_COLOUR;
const REPLENISHED_COLOUR: &str = "#1a9641";
const SUSPEND_COLOUR: &str = "#5a0000";

/// Text made safe for XML content and attribute values. Control characters XML 1.0 forbids
/// outright become U+FFFD, since no escape can carry them.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&apos;"),
            '\t' | '\n' | '\r' => o.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => o.push('\u{fffd}'),
            c => o.push(c),
        }
    }
    o
}

/// The points of a small diamond centred on (`cx`, `cy`).
fn diamond(cx: f64, cy: f64) -> String {
    format!("{:.2},{:.2} {:.2},{:.2} {:.2},{:.2} {:.2},{:.2}", cx, cy - 5.0, cx + 4.0, cy, cx, cy + 5.0, cx - 4.0, cy)
}

/// A pause sign (two vertical strokes 4 px apart) starting at `x`, centred on `cy`.
fn pause_path(x: f64, cy: f64) -> String {
    format!(
        "M{:.2},{:.2} L{:.2},{:.2} M{:.2},{:.2} L{:.2},{:.2}",
        x,
        cy - 5.0,
        x,
        cy + 5.0,
        x + 4.0,
        cy - 5.0,
        x + 4.0,
        cy + 5.0
    )
}

/// The smallest 1/2/5 × 10^k nanoseconds giving at most about ten ticks over `span`.
fn tick_step(span: u64) -> u64 {
    let target = span.div_ceil(10).max(1);
    let mut magnitude: u64 = 1;
    loop {
        for f in [1, 2, 5] {
            match magnitude.checked_mul(f) {
                Some(step) if step >= target => return step,
                Some(_) => {}
                None => return target,
            }
        }
        match magnitude.checked_mul(10) {
            Some(m) => magnitude = m,
            None => return target,
        }
    }
}

/// The largest of s/ms/µs/ns not above `step`. Because `step` is 1/2/5 × 10^k, every multiple
/// of it is a whole number of that unit, so tick labels need no decimals.
fn tick_unit(step: u64) -> (u64, &'static str) {
    [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")].into_iter().find(|&(u, _)| step >= u).unwrap_or((1, "ns"))
}

/// A lane: a thread, the timing events, or a thread set with no member left to carry its
/// budget markers.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Lane {
    Thread(ThreadId),
    Timers,
    Set(usize),
}

fn is_budget(kind: TraceKind) -> bool {
    matches!(kind, TraceKind::BudgetExhausted | TraceKind::BudgetReplenished)
}

/// The run as an SVG Gantt chart.
///
/// ```
/// use std::time::Duration;
/// use tempi::{Runtime, ThreadSpec, Time};
/// let ms = Duration::from_millis;
/// let mut rt = Runtime::simulated(1);
/// rt.spawn(ThreadSpec::new("sensor").periodic(ms(4)), move |cx| cx.work(ms(1))).unwrap();
/// let svg = tempi::trace::gantt::to_svg(&rt.run_until(Time::from_millis(8)).unwrap());
/// assert!(svg.starts_with("<svg"));
/// assert!(svg.trim_end().ends_with("</svg>"));
/// assert!(svg.contains(">sensor</text>"));
/// ```
pub fn to_svg(out: &RunOutcome) -> String {
    render(out, None)
}

/// [`to_svg`] with a Spring plan drawn over it: each task's planned window as an outlined
/// box (class `planned`) on its executing thread's lane, and each planning's cutoff line as
/// a dashed vertical line across the chart (class `cutoff`).
///
/// ```
/// use tempi::trace::plans::{PlanOverlay, PlannedWindow};
/// use tempi::Time;
/// let mut rt = tempi::Runtime::simulated(1);
/// rt.spawn(tempi::ThreadSpec::new("g/a"), |cx| cx.work(std::time::Duration::from_millis(2))).unwrap();
/// let out = rt.run().unwrap();
/// let w = PlannedWindow { thread: "g/a".into(), task: 0, cpu: 0, start: Time::ZERO,
///     finish: Time::from_millis(2), actual_start: Some(Time::ZERO), actual_finish: Some(Time::from_millis(2)) };
/// let plan = PlanOverlay { windows: vec![w], cutoffs: vec![("g".into(), Time::ZERO, Time::ZERO)] };
/// let svg = tempi::trace::gantt::to_svg_with_plan(&out, &plan);
/// assert!(svg.contains(r#"class="planned""#) && svg.contains(r#"class="cutoff""#));
/// ```
pub fn to_svg_with_plan(out: &RunOutcome, plan: &crate::trace::plans::PlanOverlay) -> String {
    render(out, Some(plan))
}

fn render(out: &RunOutcome, plan: Option<&crate::trace::plans::PlanOverlay>) -> String {
    let names = names(out);
    let sets = set_names(out);
    let segs = segments(out);

    // Lanes: the run's threads in id order, then any thread the trace mentions but the run
    // does not list (defensive), then timing events.
    let mut lanes: Vec<Lane> = out.threads.iter().map(|t| Lane::Thread(t.id)).collect();
    let mut seen: BTreeSet<ThreadId> = out.threads.iter().map(|t| t.id).collect();
    let mut has_timers = false;
    let mut budget_sets: BTreeSet<usize> = BTreeSet::new();
    for r in &out.trace {
        if r.kind == TraceKind::Timer {
            has_timers = true;
        } else if is_budget(r.kind) {
            // Budget records name a set in `job`; their thread is only a placeholder.
            budget_sets.insert(r.job as usize);
        } else if seen.insert(r.thread) {
            lanes.push(Lane::Thread(r.thread));
        }
    }
    if has_timers {
        lanes.push(Lane::Timers);
    }
    // Where each set's budget markers go: its members' lanes, or a lane of its own.
    let mut set_members: HashMap<usize, Vec<ThreadId>> = HashMap::new();
    for set in &out.sets {
        set_members.entry(set.id.index()).or_default().extend(set.members.iter().copied());
    }
    for &set in &budget_sets {
        let has_lane = set_members.get(&set).is_some_and(|m| m.iter().any(|id| seen.contains(id)));
        if !has_lane {
            lanes.push(Lane::Set(set));
        }
    }
    let lane_of: HashMap<Lane, usize> = lanes.iter().enumerate().map(|(i, &l)| (l, i)).collect();
    let label = |l: Lane| match l {
        Lane::Thread(id) => display_name(&names, id),
        Lane::Timers => String::from("timers"),
        Lane::Set(i) => format!("set {}", display_set(&sets, i)),
    };
    let budget_lanes = |set: usize| -> Vec<usize> {
        match lane_of.get(&Lane::Set(set)) {
            Some(&l) => vec![l],
            None => set_members
                .get(&set)
                .into_iter()
                .flatten()
                .filter_map(|id| lane_of.get(&Lane::Thread(*id)).copied())
                .collect(),
        }
    };

    // Scale: the whole run, at least 1 ns so the division below is defined.
    let last_record = out.trace.iter().map(|r| r.time).max().unwrap_or(Time::ZERO);
    let last_seg = segs.iter().map(|s| s.end).max().unwrap_or(Time::ZERO);
    let last_planned = plan.map_or(Time::ZERO, crate::trace::plans::PlanOverlay::last);
    let span = out.end.max(last_record).max(last_seg).max(last_planned).as_nanos().max(1);
    let longest = lanes.iter().map(|&l| label(l).chars().count()).max().unwrap_or(0);
    let left = (longest as f64 * 7.0 + 20.0).clamp(80.0, 260.0);
    let scale = PLOT_W / span as f64;
    let x = |t: u64| left + t as f64 * scale;
    let lane_top = |i: usize| TOP + i as f64 * LANE_H;
    let axis_y = lane_top(lanes.len());
    let width = left + PLOT_W + RIGHT;
    let height = axis_y + 64.0;

    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0}" height="{height:.0}" viewBox="0 0 {width:.0} {height:.0}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(s, r#"<rect x="0" y="0" width="{width:.0}" height="{height:.0}" fill="white"/>"#);
    let _ = writeln!(
        s,
        r#"<text x="{left:.2}" y="20" font-size="14">{}</text>"#,
        esc(&format!(
            "{} scheduler, {} CPU{}, {} time, end {}",
            out.scheduler,
            out.cpus,
            if out.cpus == 1 { "" } else { "s" },
            out.mode.name(),
            out.end
        ))
    );

    // Lanes: alternate shading and labels.
    for (i, &l) in lanes.iter().enumerate() {
        let y = lane_top(i);
        if i % 2 == 1 {
            let _ = writeln!(
                s,
                r##"<rect x="{left:.2}" y="{y:.2}" width="{PLOT_W:.2}" height="{LANE_H:.2}" fill="#f4f4f4"/>"##
            );
        }
        let _ = writeln!(
            s,
            r#"<text x="{:.2}" y="{:.2}" text-anchor="end" dominant-baseline="middle">{}</text>"#,
            left - 8.0,
            y + LANE_H / 2.0,
            esc(&label(l))
        );
    }

    // Axis, ticks and grid lines.
    let step = tick_step(span);
    let (unit, unit_name) = tick_unit(step);
    let _ = writeln!(
        s,
        r#"<line x1="{left:.2}" y1="{axis_y:.2}" x2="{:.2}" y2="{axis_y:.2}" stroke="black"/>"#,
        left + PLOT_W
    );
    let mut t = 0u64;
    loop {
        let tx = x(t);
        let _ = writeln!(s, r##"<line x1="{tx:.2}" y1="{TOP:.2}" x2="{tx:.2}" y2="{axis_y:.2}" stroke="#dddddd"/>"##);
        let _ = writeln!(
            s,
            r#"<line x1="{tx:.2}" y1="{axis_y:.2}" x2="{tx:.2}" y2="{:.2}" stroke="black"/>"#,
            axis_y + 5.0
        );
        let _ = writeln!(
            s,
            r#"<text x="{tx:.2}" y="{:.2}" text-anchor="middle">{}{unit_name}</text>"#,
            axis_y + 18.0,
            t / unit
        );
        match t.checked_add(step) {
            Some(n) if n <= span => t = n,
            _ => break,
        }
    }

    // Execution bars.
    for seg in &segs {
        let Some(&lane) = lane_of.get(&Lane::Thread(seg.thread)) else { continue };
        let colour = PALETTE[lane % PALETTE.len()];
        let (start, end) = (seg.start.as_nanos(), seg.end.as_nanos());
        let bx = x(start);
        // Zero-length segments stay visible as hairlines.
        let bw = (end.saturating_sub(start) as f64 * scale).max(0.5);
        let by = lane_top(lane) + BAR_TOP;
        let tip = format!(
            "{} job {}: {} - {}, CPU {}, {}",
            label(Lane::Thread(seg.thread)),
            seg.job,
            seg.start,
            seg.end,
            seg.cpu,
            seg.stop.map_or("open", StopReason::name)
        );
        let _ = writeln!(
            s,
            r#"<rect class="run" x="{bx:.2}" y="{by:.2}" width="{bw:.2}" height="{BAR_H:.2}" fill="{colour}"><title>{}</title></rect>"#,
            esc(&tip)
        );
        if out.cpus > 1 {
            let text = if bw >= 40.0 {
                Some(format!("CPU {}", seg.cpu))
            } else if bw >= 12.0 {
                Some(seg.cpu.to_string())
            } else {
                None
            };
            if let Some(text) = text {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.2}" y="{:.2}" text-anchor="middle" dominant-baseline="middle" font-size="10" fill="white">{text}</text>"#,
                    bx + bw / 2.0,
                    by + BAR_H / 2.0
                );
            }
        }
        if seg.stop == Some(StopReason::Suspended) {
            // A pause sign just after the bar: the thread did not finish, it was held.
            let tip = esc(&format!(
                "{} job {} suspended at {}: its set's budget ran out",
                label(Lane::Thread(seg.thread)),
                seg.job,
                seg.end
            ));
            let _ = writeln!(
                s,
                r#"<path class="suspend" d="{}" stroke="{SUSPEND_COLOUR}" stroke-width="2"><title>{tip}</title></path>"#,
                pause_path(bx + bw + 3.0, by + BAR_H / 2.0)
            );
        }
    }

    if let Some(plan) = plan {
        let lane_named = |name: &str| {
            out.threads.iter().find(|t| t.name == name).and_then(|t| lane_of.get(&Lane::Thread(t.id))).copied()
        };
        crate::trace::plans::draw(&mut s, plan, &lane_named, &x, &lane_top, (TOP, axis_y, BAR_TOP, BAR_H));
    }

    // Markers, drawn after the bars so they stay on top.
    for r in &out.trace {
        if is_budget(r.kind) {
            let set = r.job as usize;
            let name = display_set(&sets, set);
            let at = x(r.time.as_nanos());
            let value = Time::from_nanos(r.arg);
            for lane in budget_lanes(set) {
                let top = lane_top(lane);
                if r.kind == TraceKind::BudgetExhausted {
                    let tip = esc(&format!("budget of set {name} exhausted at {} (consumed {value})", r.time));
                    let _ = writeln!(
                        s,
                        r#"<rect class="budget-exhausted" x="{:.2}" y="{:.2}" width="3.00" height="{:.2}" fill="{EXHAUSTED_COLOUR}"><title>{tip}</title></rect>"#,
                        at - 1.5,
                        top + 2.0,
                        LANE_H - 4.0
                    );
                } else {
                    let tip = esc(&format!("budget of set {name} replenished at {} ({value} left)", r.time));
                    let _ = writeln!(
                        s,
                        r#"<polygon class="budget-replenished" points="{}" fill="{REPLENISHED_COLOUR}" stroke="white" stroke-width="1"><title>{tip}</title></polygon>"#,
                        diamond(at, top + LANE_H / 2.0)
                    );
                }
            }
            continue;
        }
        let lane = match r.kind {
            TraceKind::Timer => lane_of.get(&Lane::Timers),
            _ => lane_of.get(&Lane::Thread(r.thread)),
        };
        let Some(&lane) = lane else { continue };
        let (top, bottom) = (lane_top(lane), lane_top(lane) + LANE_H);
        let name = label(Lane::Thread(r.thread));
        let at = x(r.time.as_nanos());
        match r.kind {
            TraceKind::Release => {
                let tip = esc(&format!("{name} job {} released at {}", r.job, r.time));
                let _ = writeln!(
                    s,
                    r##"<polygon class="release" points="{:.2},{:.2} {:.2},{:.2} {at:.2},{:.2}" fill="#333333"><title>{tip}</title></polygon>"##,
                    at - 4.0,
                    bottom - 1.0,
                    at + 4.0,
                    bottom - 1.0,
                    bottom - 7.0
                );
                // Deadlines past the end of the chart would be drawn outside it.
                if r.arg != u64::MAX && r.arg <= span {
                    let dx = x(r.arg);
                    let tip = esc(&format!("{name} job {} deadline {}", r.job, Time::from_nanos(r.arg)));
                    let _ = writeln!(
                        s,
                        r##"<polygon class="deadline" points="{:.2},{:.2} {:.2},{:.2} {dx:.2},{:.2}" fill="#777777"><title>{tip}</title></polygon>"##,
                        dx - 4.0,
                        top + 1.0,
                        dx + 4.0,
                        top + 1.0,
                        top + 7.0
                    );
                }
            }
            TraceKind::Miss => {
                let tip = esc(&format!("{name} job {} missed its deadline {}", r.job, Time::from_nanos(r.arg)));
                let _ = writeln!(
                    s,
                    r#"<circle class="miss" cx="{at:.2}" cy="{:.2}" r="4" fill="{MISS_COLOUR}" stroke="white" stroke-width="1"><title>{tip}</title></circle>"#,
                    top + 5.0
                );
            }
            TraceKind::JobAbort => {
                let why = match crate::plain::JobEnd::from_code(r.arg) {
                    Some(crate::plain::JobEnd::Killed) => " (thread killed)",
                    Some(crate::plain::JobEnd::Panicked) => " (thread panicked)",
                    Some(crate::plain::JobEnd::NotStarted) => " (thread not started)",
                    None => "",
                };
                let tip = esc(&format!("{name} job {} aborted at {}{why}", r.job, r.time));
                let (cy, d) = (top + LANE_H / 2.0, 5.0);
                let _ = writeln!(
                    s,
                    r#"<path d="M{:.2},{:.2} L{:.2},{:.2} M{:.2},{:.2} L{:.2},{:.2}" stroke="black" stroke-width="2" class="abort"><title>{tip}</title></path>"#,
                    at - d,
                    cy - d,
                    at + d,
                    cy + d,
                    at - d,
                    cy + d,
                    at + d,
                    cy - d
                );
            }
            TraceKind::PreemptionDeferred => {
                let what = if r.arg == 1 { "time slice end" } else { "preemption" };
                let tip = esc(&format!("{name}: held-back {what} carried out at {}", r.time));
                let _ = writeln!(
                    s,
                    r#"<line x1="{at:.2}" y1="{:.2}" x2="{at:.2}" y2="{:.2}" stroke="black" stroke-width="1.5" stroke-dasharray="2,2" class="preemption-deferred"><title>{tip}</title></line>"#,
                    top + 1.0,
                    bottom - 1.0
                );
            }
            TraceKind::Timer => {
                let tip = esc(&format!("timing event {} at {}", r.arg, r.time));
                let _ = writeln!(
                    s,
                    r#"<line x1="{at:.2}" y1="{:.2}" x2="{at:.2}" y2="{:.2}" stroke="black" stroke-width="1.5" class="timer"><title>{tip}</title></line>"#,
                    top + 6.0,
                    bottom - 6.0
                );
            }
            _ => {}
        }
    }

    // Legend.
    let ly = axis_y + 44.0;
    let mut lx = left;
    let _ = writeln!(
        s,
        r##"<polygon points="{:.2},{:.2} {:.2},{:.2} {lx:.2},{:.2}" fill="#333333"/>"##,
        lx - 4.0,
        ly + 3.0,
        lx + 4.0,
        ly + 3.0,
        ly - 4.0
    );
    let _ = writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">release</text>"#, lx + 8.0);
    lx += 80.0;
    let _ = writeln!(
        s,
        r##"<polygon points="{:.2},{:.2} {:.2},{:.2} {lx:.2},{:.2}" fill="#777777"/>"##,
        lx - 4.0,
        ly - 3.0,
        lx + 4.0,
        ly - 3.0,
        ly + 4.0
    );
    let _ = writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">deadline</text>"#, lx + 8.0);
    lx += 85.0;
    let _ = writeln!(s, r#"<circle cx="{lx:.2}" cy="{ly:.2}" r="4" fill="{MISS_COLOUR}"/>"#);
    let _ = writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">miss</text>"#, lx + 8.0);
    lx += 60.0;
    let _ = writeln!(
        s,
        r#"<path d="M{:.2},{:.2} L{:.2},{:.2} M{:.2},{:.2} L{:.2},{:.2}" stroke="black" stroke-width="2"/>"#,
        lx - 4.0,
        ly - 4.0,
        lx + 4.0,
        ly + 4.0,
        lx - 4.0,
        ly + 4.0,
        lx + 4.0,
        ly - 4.0
    );
    let _ = writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">abort</text>"#, lx + 8.0);
    // Budget entries only when there is something of the kind to explain, so charts of runs
    // without sets look as they always did.
    let has_budget = !budget_sets.is_empty();
    let has_suspend = segs.iter().any(|g| g.stop == Some(StopReason::Suspended));
    if has_budget {
        lx += 70.0;
        let _ = writeln!(
            s,
            r#"<rect x="{:.2}" y="{:.2}" width="3.00" height="12.00" fill="{EXHAUSTED_COLOUR}"/>"#,
            lx - 1.5,
            ly - 6.0
        );
        let _ =
            writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">budget exhausted</text>"#, lx + 8.0);
        lx += 130.0;
        let _ = writeln!(s, r#"<polygon points="{}" fill="{REPLENISHED_COLOUR}"/>"#, diamond(lx, ly));
        let _ = writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">replenished</text>"#, lx + 8.0);
        lx += 35.0;
    }
    if has_suspend {
        lx += 60.0;
        let _ = writeln!(s, r#"<path d="{}" stroke="{SUSPEND_COLOUR}" stroke-width="2"/>"#, pause_path(lx - 2.0, ly));
        let _ = writeln!(s, r#"<text x="{:.2}" y="{ly:.2}" dominant-baseline="middle">suspended</text>"#, lx + 8.0);
        lx += 25.0;
    }
    if out.trace_dropped > 0 {
        lx += 70.0;
        let _ = writeln!(
            s,
            r#"<text x="{lx:.2}" y="{ly:.2}" dominant-baseline="middle" fill="{MISS_COLOUR}">{} trace records dropped: chart incomplete</text>"#,
            out.trace_dropped
        );
    }
    s.push_str("</svg>\n");
    s
}
