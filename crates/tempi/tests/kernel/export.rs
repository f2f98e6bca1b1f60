//! Exporters on virtual-time runs: the JSON report and the Perfetto trace are parsed back and
//! checked value by value; the SVG chart and the text summary are checked for content and
//! well-formedness. Odd outcomes (empty, truncated, hand-damaged) must export without panicking.
//! Thread sets and budgets: exact set figures and budget events in the report, named budget
//! instants in the Perfetto trace, exhaustion, replenishment and suspension markers in the SVG.
#![cfg(feature = "export")]

use std::time::Duration;

use serde_json::Value;
use tempi::clock::VirtualClock;
use tempi::policy::budget::Kill;
use tempi::trace::{gantt, perfetto, report, StopReason, TraceKind};
use tempi::{
    assign_rate_monotonic, Budget, Config, MissPolicy, Replenishment, RunOutcome, Runtime, ThreadSpec, Time, TimerSpec,
};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

const MS: u64 = 1_000_000;

/// The textbook rate-monotonic set: C/T = 1/4, 2/6, 3/12 over one hyperperiod.
fn rm_set(rt: &mut Runtime<VirtualClock>) {
    let mut specs = vec![
        ThreadSpec::new("t1").periodic(ms(4)).wcet(ms(1)),
        ThreadSpec::new("t2").periodic(ms(6)).wcet(ms(2)),
        ThreadSpec::new("t3").periodic(ms(12)).wcet(ms(3)),
    ];
    assign_rate_monotonic(&mut specs);
    for s in specs {
        let c = s.wcet_value();
        rt.spawn(s, move |cx| cx.work(c)).unwrap();
    }
}

fn rm_run() -> RunOutcome {
    let mut rt = Runtime::simulated(1);
    rm_set(&mut rt);
    rt.run_until(Time::from_millis(12)).unwrap()
}

/// A one-shot job that overruns its 1 ms deadline, and a thread that panics.
fn miss_run() -> RunOutcome {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("late").deadline(ms(1)), |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("boom"), |_| panic!("bad <sensor>")).unwrap();
    rt.run().unwrap()
}

/// Two CPUs: an aborting thread on CPU 0, a periodic thread and a timer-released sporadic one on
/// CPU 1.
fn two_cpu_run() -> RunOutcome {
    let mut rt = Runtime::simulated(2);
    let abort = ThreadSpec::new("a").periodic(ms(4)).deadline(ms(2)).miss_policy(MissPolicy::AbortJob);
    rt.spawn(abort, |cx| cx.work(ms(3))).unwrap();
    rt.spawn(ThreadSpec::new("b").cpu(1).periodic(ms(5)), |cx| cx.work(ms(2))).unwrap();
    let s = rt.spawn(ThreadSpec::new("s").cpu(1).sporadic(Duration::ZERO), |cx| cx.work(ms(1))).unwrap();
    rt.add_timer(TimerSpec::every(ms(3)).cpu(1), move |ev| {
        ev.release(s).unwrap();
    })
    .unwrap();
    rt.run_until(Time::from_millis(12)).unwrap()
}

fn parse(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("invalid JSON ({e}):\n{json}"))
}

fn count(out: &RunOutcome, kind: TraceKind) -> usize {
    out.trace.iter().filter(|r| r.kind == kind).count()
}

/// Jobs as compact `name#job rel/start/finish/deadline miss abort preempt` strings, times in ms.
fn job_lines(report: &Value) -> Vec<String> {
    let ms = |v: &Value| v.as_u64().map_or("-".to_string(), |n| format!("{}", n as f64 / 1e6));
    report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| {
            format!(
                "{}#{} {}/{}/{}/{}{}{} p{}",
                j["thread"].as_str().unwrap(),
                j["job"],
                ms(&j["release"]),
                ms(&j["start"]),
                ms(&j["finish"]),
                ms(&j["deadline"]),
                if j["missed"] == true { " miss" } else { "" },
                if j["aborted"] == true { " abort" } else { "" },
                j["preemptions"]
            )
        })
        .collect()
}

/// A small XML well-formedness check: balanced, properly nested tags, quoted attributes, and no
/// bare `&` or `<` in text. Enough to catch unescaped names and broken output.
fn assert_well_formed(svg: &str) {
    let mut stack: Vec<&str> = Vec::new();
    let mut rest = svg;
    while let Some(lt) = rest.find('<') {
        let text = &rest[..lt];
        check_text(text);
        let close = rest[lt..].find('>').expect("unterminated tag") + lt;
        let tag = &rest[lt + 1..close];
        assert!(!tag.contains('<'), "'<' inside tag: {tag}");
        assert_eq!(tag.matches('"').count() % 2, 0, "unbalanced quotes: {tag}");
        if let Some(name) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(name.trim()), "mismatched </{name}>");
        } else if !tag.ends_with('/') {
            stack.push(tag.split_whitespace().next().expect("tag name"));
        }
        if tag.starts_with("svg") || tag == "/svg" {
            // The root may only be opened first and closed last.
            assert!(stack.len() <= 1);
        }
        rest = &rest[close + 1..];
    }
    check_text(rest);
    assert!(stack.is_empty(), "unclosed tags: {stack:?}");

    fn check_text(text: &str) {
        for (i, _) in text.match_indices('&') {
            let entity = &text[i..text[i..].find(';').map_or(text.len(), |e| i + e + 1)];
            assert!(["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"].contains(&entity), "bare '&' in {text:?}");
        }
    }
}

#[test]
fn export_report_rm_jobs_are_exact() {
    let out = rm_run();
    let v = parse(&report::to_json(&out));
    assert_eq!(v["mode"], "virtual");
    assert_eq!(v["scheduler"], out.scheduler.as_str());
    assert_eq!(v["cpus"], 1);
    assert_eq!(v["end"], 12 * MS);
    assert_eq!(v["trace_dropped"], 0);
    assert!(v.get("jobs_truncated").is_none());
    assert_eq!(v["warnings"], Value::Array(vec![]));
    assert_eq!(
        job_lines(&v),
        [
            "t1#0 0/0/1/4 p0",
            "t2#0 0/1/3/6 p0",
            "t3#0 0/3/10/12 p2",
            "t1#1 4/4/5/8 p0",
            "t2#1 6/6/8/12 p0",
            "t1#2 8/8/9/12 p0",
        ]
    );
    // The brief's example, field by field.
    let t2_1 = &v["jobs"][4];
    assert_eq!((t2_1["thread"].as_str(), t2_1["thread_id"].as_u64()), (Some("t2"), Some(1)));
    assert_eq!(
        (t2_1["release"].as_u64(), t2_1["start"].as_u64(), t2_1["finish"].as_u64()),
        (Some(6 * MS), Some(6 * MS), Some(8 * MS))
    );
}

#[test]
fn export_report_rm_threads_match_stats() {
    let out = rm_run();
    let v = parse(&report::to_json(&out));
    let threads = v["threads"].as_array().unwrap();
    assert_eq!(threads.len(), 3);
    let t2 = &threads[1];
    assert_eq!(t2["id"], 1);
    assert_eq!(t2["name"], "t2");
    assert_eq!(t2["cpu"], 0);
    assert_eq!(t2["jobs"], 2);
    assert_eq!(t2["completed"], 2);
    assert_eq!(t2["aborted"], 0);
    assert_eq!(t2["misses"], 0);
    assert_eq!(t2["skipped"], 0);
    assert_eq!(t2["response_min"], 2 * MS);
    assert_eq!(t2["response_mean"], 5 * MS / 2);
    assert_eq!(t2["response_max"], 3 * MS);
    assert_eq!(t2["cpu_time"], 4 * MS);
    assert_eq!(t2["outcome"], Value::Null);
    let t3 = &threads[2];
    assert_eq!((t3["preemptions"].as_u64(), t3["response_max"].as_u64()), (Some(2), Some(10 * MS)));
    // The per-thread and per-job views agree.
    for t in threads {
        let preempts: u64 = v["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|j| j["thread_id"] == t["id"])
            .map(|j| j["preemptions"].as_u64().unwrap())
            .sum();
        assert_eq!(Some(preempts), t["preemptions"].as_u64());
    }
}

#[test]
fn export_report_miss_panic_and_outcomes() {
    let out = miss_run();
    let v = parse(&report::to_json(&out));
    // The job the panic cut short ends at the panic, abandoned.
    assert_eq!(job_lines(&v), ["late#0 0/0/3/1 miss p0", "boom#0 0/3/3/- abort p0"]);
    assert_eq!((v["jobs"][0].get("ended_by"), v["jobs"][1]["ended_by"].as_str()), (None, Some("panic")));
    assert_eq!(v["threads"][0]["misses"], 1);
    assert_eq!(v["threads"][0]["outcome"], "completed");
    assert_eq!(v["threads"][1]["outcome"], "panicked: bad <sensor>");
    assert_eq!(v["threads"][1]["response_min"], Value::Null);
    assert_eq!(v["threads"][1]["response_mean"], Value::Null);

    let text = report::summary_text(&out);
    assert!(text.contains("total misses: 1"), "{text}");
    assert!(text.contains("panicked threads:\n  boom: bad <sensor>\n"), "{text}");
    let late = text.lines().find(|l| l.starts_with("late ")).unwrap();
    assert_eq!(
        late.split_whitespace().collect::<Vec<_>>(),
        ["late", "0", "1", "1", "1", "3.000", "3.000", "3.000", "3.000"]
    );
}

#[test]
fn export_report_aborts_and_deadlines_two_cpus() {
    let out = two_cpu_run();
    let v = parse(&report::to_json(&out));
    assert_eq!(v["cpus"], 2);
    assert_eq!(
        job_lines(&v),
        [
            "a#0 0/0/2/2 miss abort p0",
            "b#0 0/0/2/5 p0",
            "s#0 3/3/4/- p0",
            "a#1 4/4/6/6 miss abort p0",
            "b#1 5/5/7/10 p0",
            "s#1 6/7/8/- p0",
            "a#2 8/8/10/10 miss abort p0",
            "s#2 9/9/10/- p0",
            "b#2 10/10/-/15 p0",
        ]
    );
    assert_eq!(v["threads"][0]["aborted"], 3);
    assert_eq!(v["threads"][2]["response_mean"], 4 * MS / 3);
}

#[test]
fn export_summary_is_an_aligned_table() {
    let text = report::summary_text(&rm_run());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("virtual") && lines[0].contains("1 CPU") && lines[0].contains("12.000 ms"), "{text}");
    let header = lines[1];
    assert!(header.starts_with("thread") && header.contains("misses") && header.contains("cpu time"));
    // Right-aligned columns: every row ends where the header ends.
    for row in &lines[3..6] {
        assert_eq!(row.len(), header.len(), "{text}");
    }
    assert_eq!(
        lines[5].split_whitespace().collect::<Vec<_>>(),
        ["t3", "0", "1", "1", "0", "10.000", "10.000", "10.000", "3.000"]
    );
    assert!(text.contains("total misses: 0"));
    assert!(!text.contains("warning") && !text.contains("dropped") && !text.contains("panicked"));
}

#[test]
fn export_perfetto_events_match_the_trace() {
    let out = rm_run();
    let json = perfetto::to_json(&out);
    let v = parse(&json);
    assert_eq!(v["displayTimeUnit"], "ns");
    let events = v["traceEvents"].as_array().unwrap();
    let of = |ph: &str, name: Option<&str>| -> Vec<&Value> {
        events.iter().filter(|e| e["ph"] == ph && name.is_none_or(|n| e["name"] == n)).collect()
    };
    let runs = of("X", None);
    assert_eq!(runs.len(), count(&out, TraceKind::Run));
    assert_eq!(of("i", Some("release")).len(), count(&out, TraceKind::Release));
    assert_eq!(of("i", Some("complete")).len(), count(&out, TraceKind::JobComplete));
    assert!(of("i", None).iter().all(|e| e["s"] == "t"));

    // t2's second job: 6 ms to 8 ms, on CPU 0, track slot 1 + 1.
    let t2 = runs.iter().find(|e| e["name"] == "t2" && e["args"]["job"] == 1).unwrap();
    assert_eq!((t2["pid"].as_u64(), t2["tid"].as_u64()), (Some(0), Some(2)));
    assert_eq!((t2["ts"].as_f64(), t2["dur"].as_f64()), (Some(6000.0), Some(2000.0)));
    assert_eq!(t2["args"]["stop"], "done");
    let preempted = runs.iter().filter(|e| e["args"]["stop"] == "preempt").count();
    assert_eq!(preempted, 2);

    let meta = of("M", None);
    assert!(meta.iter().any(|e| e["name"] == "process_name" && e["pid"] == 0 && e["args"]["name"] == "CPU 0"));
    for (tid, name) in [(1, "t1"), (2, "t2"), (3, "t3")] {
        assert!(meta.iter().any(|e| e["name"] == "thread_name" && e["tid"] == tid && e["args"]["name"] == name));
    }
    // Timestamps never go backwards after the metadata.
    let ts: Vec<f64> = events.iter().filter(|e| e["ph"] != "M").map(|e| e["ts"].as_f64().unwrap()).collect();
    assert!(ts.windows(2).all(|w| w[0] <= w[1]));
}

#[test]
fn export_perfetto_keeps_nanoseconds_and_shows_timers() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("fine"), |cx| cx.work(Duration::from_nanos(1_234_567))).unwrap();
    let json = perfetto::to_json(&rt.run().unwrap());
    assert!(json.contains(r#""ts":0.000,"dur":1234.567"#), "{json}");

    let out = two_cpu_run();
    let v = parse(&perfetto::to_json(&out));
    let events = v["traceEvents"].as_array().unwrap();
    assert!(events.iter().any(|e| e["ph"] == "M" && e["pid"] == 1 && e["args"]["name"] == "CPU 1"));
    assert!(events.iter().any(|e| e["ph"] == "M" && e["pid"] == 1 && e["tid"] == 0 && e["args"]["name"] == "timers"));
    let timers: Vec<&Value> = events.iter().filter(|e| e["ph"] == "i" && e["cat"] == "timer").collect();
    assert_eq!(timers.len(), count(&out, TraceKind::Timer));
    assert!(timers.iter().all(|e| e["pid"] == 1 && e["tid"] == 0));
    let ms = |e: &&Value| e["ts"].as_f64().unwrap() / 1000.0;
    assert_eq!(timers.iter().map(ms).collect::<Vec<_>>(), [3.0, 6.0, 9.0]);
    assert_eq!(events.iter().filter(|e| e["name"] == "miss").count(), 3);
    assert_eq!(events.iter().filter(|e| e["name"] == "abort").count(), 3);
    let b_runs = events.iter().filter(|e| e["ph"] == "X" && e["name"] == "b").count();
    assert_eq!(b_runs, 3);
    // b's last job is still running when the run stops at 12 ms.
    let open = events.iter().find(|e| e["ph"] == "X" && e["args"]["stop"] == "open").unwrap();
    assert_eq!(
        (open["name"].as_str(), open["ts"].as_f64(), open["dur"].as_f64()),
        (Some("b"), Some(10_000.0), Some(2000.0))
    );
}

#[test]
fn export_gantt_lanes_bars_and_markers() {
    let out = rm_run();
    let svg = gantt::to_svg(&out);
    assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
    assert!(svg.trim_end().ends_with("</svg>"));
    assert_well_formed(&svg);
    for name in ["t1", "t2", "t3"] {
        assert_eq!(svg.matches(&format!(">{name}</text>")).count(), 1, "one lane label for {name}");
    }
    // One bar per execution segment, one marker per release and per deadline within the chart.
    assert_eq!(svg.matches(r#"<rect class="run""#).count(), count(&out, TraceKind::Run));
    assert_eq!(svg.matches(r#"class="release""#).count(), count(&out, TraceKind::Release));
    assert_eq!(svg.matches(r#"class="deadline""#).count(), 6);
    assert!(svg.contains("<title>t2 job 1: 6.000000ms - 8.000000ms, CPU 0, done</title>"));
    // A nice axis: 0, 2, ..., 12 ms.
    for tick in ["0ms", "2ms", "4ms", "6ms", "8ms", "10ms", "12ms"] {
        assert!(svg.contains(&format!(">{tick}</text>")), "tick {tick}");
    }
    assert!(!svg.contains(">1ms</text>"));
    assert!(!svg.contains("CPU 0</text>"), "single-CPU runs need no CPU labels");
    assert!(!svg.contains("missed"));

    let svg = gantt::to_svg(&miss_run());
    assert_well_formed(&svg);
    assert_eq!(svg.matches(r#"class="miss""#).count(), 1);
    assert!(svg.contains("<title>late job 0 missed its deadline 1.000000ms</title>"));

    let svg = gantt::to_svg(&two_cpu_run());
    assert_well_formed(&svg);
    assert!(svg.contains(">CPU 1</text>") && svg.contains(">CPU 0</text>"));
    assert!(svg.contains(">timers</text>"));
    assert_eq!(svg.matches(r#"class="abort""#).count(), 3);
    assert_eq!(svg.matches(r#"class="timer""#).count(), 3);
}

#[test]
fn export_gantt_escapes_names() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("<a & \"b\">").deadline(ms(1)), |cx| cx.work(ms(2))).unwrap();
    let out = rt.run().unwrap();
    let svg = gantt::to_svg(&out);
    assert_well_formed(&svg);
    assert!(svg.contains(">&lt;a &amp; &quot;b&quot;&gt;</text>"));
    let v = parse(&perfetto::to_json(&out));
    assert!(v["traceEvents"].as_array().unwrap().iter().any(|e| e["name"] == "<a & \"b\">"));
    assert_eq!(parse(&report::to_json(&out))["threads"][0]["name"], "<a & \"b\">");
}

#[test]
fn export_is_deterministic() {
    let (a, b) = (two_cpu_run(), two_cpu_run());
    assert_eq!(report::to_json(&a), report::to_json(&b));
    assert_eq!(report::summary_text(&a), report::summary_text(&b));
    assert_eq!(perfetto::to_json(&a), perfetto::to_json(&b));
    assert_eq!(gantt::to_svg(&a), gantt::to_svg(&b));
    let out = rm_run();
    assert_eq!(gantt::to_svg(&out), gantt::to_svg(&out));
    assert_eq!(perfetto::to_json(&out), perfetto::to_json(&rm_run()));
}

#[test]
fn export_empty_run() {
    let out = Runtime::simulated(1).run_until(Time::ZERO).unwrap();
    let v = parse(&report::to_json(&out));
    assert_eq!(v["threads"], Value::Array(vec![]));
    assert_eq!(v["jobs"], Value::Array(vec![]));
    assert_eq!(v["end"], 0);
    let text = report::summary_text(&out);
    assert!(text.contains("total misses: 0"));
    let p = parse(&perfetto::to_json(&out));
    assert!(p["traceEvents"].as_array().unwrap().iter().all(|e| e["ph"] == "M"));
    let svg = gantt::to_svg(&out);
    assert_well_formed(&svg);
    assert!(svg.contains(">0ns</text>"));

    // No CPUs, no threads, no records at all.
    let mut none = out.clone();
    none.cpus = 0;
    assert_eq!(parse(&perfetto::to_json(&none))["traceEvents"], Value::Array(vec![]));
    assert_well_formed(&gantt::to_svg(&none));
    parse(&report::to_json(&none));
}

#[test]
fn export_truncated_trace_is_flagged() {
    let mut rt = Runtime::<VirtualClock>::new(Config::new(1).trace_capacity(12)).unwrap();
    rm_set(&mut rt);
    let out = rt.run_until(Time::from_millis(12)).unwrap();
    assert!(out.trace_dropped > 0);
    let v = parse(&report::to_json(&out));
    assert_eq!(v["jobs_truncated"], true);
    assert_eq!(v["trace_dropped"], out.trace_dropped);
    // Statistics stay exact even though the jobs list is cut.
    assert_eq!(v["threads"][0]["completed"], 3);
    assert!(v["jobs"].as_array().unwrap().len() < 6);
    assert!(report::summary_text(&out).contains(&format!("note: {} trace records were dropped", out.trace_dropped)));
    // An open segment is not stretched to the end of the run: its end is unknown.
    let last = out.trace.last().unwrap().time;
    assert!(report::segments(&out).iter().all(|s| s.end <= last));
    parse(&perfetto::to_json(&out));
    let svg = gantt::to_svg(&out);
    assert_well_formed(&svg);
    assert!(svg.contains("trace records dropped"));
}

#[test]
fn export_survives_damaged_outcomes() {
    let base = two_cpu_run();
    let mut damaged = vec![];
    // Stops lost: every run stays open until the next run on its CPU.
    let mut o = base.clone();
    o.trace.retain(|r| r.kind != TraceKind::Stop);
    damaged.push(o);
    // Runs lost: stops with nothing to close; releases lost: events of unknown jobs.
    let mut o = base.clone();
    o.trace.retain(|r| r.kind != TraceKind::Run && r.kind != TraceKind::Release);
    damaged.push(o);
    // Threads the run does not list, unknown stop codes, CPUs beyond the count, an endless end.
    let mut o = base.clone();
    o.threads.clear();
    o.cpus = 1;
    o.end = Time::MAX;
    for r in &mut o.trace {
        if r.kind == TraceKind::Stop {
            r.arg = 99;
        }
    }
    o.warnings.push("SCHED_FIFO <refused>".into());
    o.trace_dropped = 7;
    damaged.push(o);
    for o in &damaged {
        let v = parse(&report::to_json(o));
        assert!(v["jobs"].is_array());
        let text = report::summary_text(o);
        assert!(text.contains("total misses"));
        parse(&perfetto::to_json(o));
        assert_well_formed(&gantt::to_svg(o));
    }
    let o = &damaged[2];
    assert!(report::summary_text(o).contains("warning: SCHED_FIFO <refused>"));
    assert!(report::segments(o).iter().all(|s| s.stop.is_none()));
    assert!(gantt::to_svg(o).contains(">T0</text>"), "unknown threads get a slot name");
    let first = &damaged[0];
    let segs = report::segments(first);
    assert_eq!(segs.len(), count(first, TraceKind::Run));
    // Without stops, a segment ends where the next one on its CPU starts.
    for w in segs.iter().filter(|s| s.cpu == 1).collect::<Vec<_>>().windows(2) {
        assert_eq!(w[0].end, w[1].start);
    }
    assert_eq!(segs.last().unwrap().stop, None::<StopReason>);
}

/// A runaway (never stops computing, highest priority) in a set `sandbox` with 2 ms every
/// 10 ms, above two periodic threads (C/T = 5/10, 4/20), for 40 ms. `budget` picks the
/// enforcement.
fn sandbox_run(budget: Budget) -> RunOutcome {
    let mut rt = Runtime::simulated(1);
    let runaway = rt
        .spawn(ThreadSpec::new("runaway").priority(9), |cx| loop {
            cx.work(ms(1));
        })
        .unwrap();
    rt.spawn(ThreadSpec::new("control").periodic(ms(10)).priority(5), |cx| cx.work(ms(5))).unwrap();
    rt.spawn(ThreadSpec::new("logger").periodic(ms(20)).priority(4), |cx| cx.work(ms(4))).unwrap();
    let set = rt.create_set("sandbox", 0).unwrap();
    rt.add_to_set(set, runaway).unwrap();
    rt.set_budget(set, budget).unwrap();
    rt.run_until(Time::from_millis(40)).unwrap()
}

fn deferrable_run() -> RunOutcome {
    sandbox_run(Budget::deferrable_server(ms(2), ms(10)))
}

fn kill_run() -> RunOutcome {
    sandbox_run(Budget::new(ms(2)).replenish(Replenishment::Periodic { period: ms(10) }).action(Kill))
}

#[test]
fn export_report_sets_and_budget_events_are_exact() {
    let out = deferrable_run();
    let v = parse(&report::to_json(&out));
    assert_eq!(
        v["sets"],
        serde_json::json!([{
            "id": 0,
            "name": "sandbox",
            "members": ["runaway"],
            "cpu_time": 8 * MS,
            "exhaustions": 4,
            "replenishments": 3,
            "destroyed": false,
            "per_member": [{"thread": "runaway", "exhaustions": 4, "overruns": 0, "overrun_time": 0}]
        }])
    );
    let ev = |kind: &str, time: u64, value: u64| serde_json::json!({"set": "sandbox", "kind": kind, "time": time * MS, "value": value * MS});
    assert_eq!(
        v["budget_events"],
        Value::Array(vec![
            ev("exhausted", 2, 2),
            ev("replenished", 10, 2),
            ev("exhausted", 12, 4),
            ev("replenished", 20, 2),
            ev("exhausted", 22, 6),
            ev("replenished", 30, 2),
            ev("exhausted", 32, 8),
        ])
    );
    assert_eq!(v["threads"][0]["cpu_time"], 8 * MS);
    assert_eq!(v["threads"][0]["outcome"], Value::Null);
    // Suspensions are not preemptions.
    assert_eq!(v["threads"][0]["preemptions"], 0);

    let records = report::budget_events(&out);
    assert_eq!(records.len(), count(&out, TraceKind::BudgetExhausted) + count(&out, TraceKind::BudgetReplenished));
    assert!(records.iter().all(|r| r.set == "sandbox" && r.set_index == 0));

    // Runs without sets still report both lists, empty.
    let v = parse(&report::to_json(&rm_run()));
    assert_eq!((v["sets"].clone(), v["budget_events"].clone()), (Value::Array(vec![]), Value::Array(vec![])));
}

#[test]
fn export_summary_lists_sets_and_killed_threads() {
    let text = report::summary_text(&deferrable_run());
    let lines: Vec<&str> = text.lines().collect();
    let header = lines.iter().position(|l| l.starts_with("set ")).expect("a set table");
    assert_eq!(
        lines[header].split_whitespace().collect::<Vec<_>>(),
        ["set", "cpu", "time", "exhaustions", "replenishments", "members"]
    );
    assert!(lines[header + 1].chars().all(|c| c == '-'));
    assert_eq!(lines[header + 2].split_whitespace().collect::<Vec<_>>(), ["sandbox", "8.000", "4", "3", "runaway"]);
    assert!(!text.contains("killed"));

    let text = report::summary_text(&kill_run());
    assert!(text.contains("killed threads (budget exhausted): runaway\n"), "{text}");
    // The killed thread has left its set: no members are listed.
    let row = text.lines().find(|l| l.starts_with("sandbox")).unwrap();
    assert_eq!(row.split_whitespace().collect::<Vec<_>>(), ["sandbox", "2.000", "1", "3", "-"]);
    assert!(!report::summary_text(&rm_run()).contains("exhaustions"));
}

#[test]
fn export_report_killed_outcome() {
    let out = kill_run();
    let v = parse(&report::to_json(&out));
    assert_eq!(v["threads"][0]["outcome"], "killed");
    assert_eq!(v["threads"][0]["cpu_time"], 2 * MS);
    assert_eq!(v["sets"][0]["members"], Value::Array(vec![]));
    assert_eq!(v["sets"][0]["exhaustions"], 1);
    let p = parse(&perfetto::to_json(&out));
    let exit = p["traceEvents"].as_array().unwrap().iter().find(|e| e["name"] == "exit" && e["tid"] == 1).unwrap();
    assert_eq!((exit["args"]["killed"].as_bool(), exit["args"]["panicked"].as_bool()), (Some(true), Some(false)));
}

#[test]
fn export_perfetto_names_budget_events() {
    let out = deferrable_run();
    let v = parse(&perfetto::to_json(&out));
    let events = v["traceEvents"].as_array().unwrap();
    let budget: Vec<&Value> = events.iter().filter(|e| e["cat"] == "budget").collect();
    assert_eq!(budget.len(), 7);
    assert!(budget.iter().all(|e| e["ph"] == "i" && e["pid"] == 0 && e["tid"] == 0 && e["s"] == "t"));
    let first = budget[0];
    assert_eq!(first["name"], "budget exhausted: sandbox");
    assert_eq!(first["ts"].as_f64(), Some(2000.0));
    assert_eq!(first["args"], serde_json::json!({"set": "sandbox", "set_index": 0, "consumed_ns": 2 * MS}));
    let second = budget[1];
    assert_eq!(second["name"], "budget replenished: sandbox");
    assert_eq!(second["ts"].as_f64(), Some(10_000.0));
    assert_eq!(second["args"], serde_json::json!({"set": "sandbox", "set_index": 0, "remaining_ns": 2 * MS}));
    // The track that carries them is named even though no timing event ran.
    assert_eq!(count(&out, TraceKind::Timer), 0);
    assert!(events.iter().any(|e| e["ph"] == "M" && e["pid"] == 0 && e["tid"] == 0 && e["args"]["name"] == "timers"));
    // Suspended segments say so.
    let suspended: Vec<f64> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["args"]["stop"] == "suspend")
        .map(|e| e["ts"].as_f64().unwrap() / 1000.0)
        .collect();
    assert_eq!(suspended, [0.0, 10.0, 20.0, 30.0]);
}

#[test]
fn export_gantt_budget_markers() {
    let out = deferrable_run();
    let svg = gantt::to_svg(&out);
    assert_well_formed(&svg);
    assert_eq!(svg.matches(r#"class="budget-exhausted""#).count(), 4);
    assert_eq!(svg.matches(r#"class="budget-replenished""#).count(), 3);
    assert_eq!(svg.matches(r#"class="suspend""#).count(), 4);
    // Labels are short, so the plot starts at x = 80 with 1200 px for 40 ms: 30 px per ms.
    // The runaway's lane is the first (top 36): exhaustion at 2 ms is a bar at x = 140.
    assert!(svg.contains(
        r##"<rect class="budget-exhausted" x="138.50" y="38.00" width="3.00" height="26.00" fill="#d00000"><title>budget of set sandbox exhausted at 2.000000ms (consumed 2.000000ms)</title></rect>"##
    ));
    assert!(svg.contains(
        r##"<polygon class="budget-replenished" points="380.00,46.00 384.00,51.00 380.00,56.00 376.00,51.00" fill="#1a9641" stroke="white" stroke-width="1"><title>budget of set sandbox replenished at 10.000000ms (2.000000ms left)</title></polygon>"##
    ));
    // The first segment (0-2 ms) ends in a suspension: a pause sign just after it.
    assert!(svg.contains(
        r##"<path class="suspend" d="M143.00,46.00 L143.00,56.00 M147.00,46.00 L147.00,56.00" stroke="#5a0000" stroke-width="2"><title>runaway job 0 suspended at 2.000000ms: its set&apos;s budget ran out</title></path>"##
    ));
    assert!(svg.contains(">budget exhausted</text>") && svg.contains(">replenished</text>"));
    assert!(svg.contains(">suspended</text>"));
    // Budget records carry no thread: they must not open a lane of their own.
    assert_eq!(svg.matches(r#"text-anchor="end""#).count(), 3);
    assert!(!svg.contains(">T4294967295</text>"));

    // Killed: the set has no member left, so its markers get a lane named after it.
    let svg = gantt::to_svg(&kill_run());
    assert_well_formed(&svg);
    assert!(svg.contains(">set sandbox</text>"));
    assert_eq!(svg.matches(r#"class="budget-exhausted""#).count(), 1);
    assert_eq!(svg.matches(r#"class="budget-replenished""#).count(), 3);
    assert!(!svg.contains(">suspended</text>"));

    // No sets, no budget legend.
    let svg = gantt::to_svg(&rm_run());
    assert!(!svg.contains("budget") && !svg.contains("suspend"));
}
