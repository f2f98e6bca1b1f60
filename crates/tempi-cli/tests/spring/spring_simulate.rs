//! `tempi simulate` executes a scenario's thread groups: exact planned and actual times in the
//! report, the unplanned threads in the gaps, the overrun policy, the plan in the Gantt chart
//! and the trace; `tempi run` executes them in real time.

use std::path::Path;
use std::process::Command;

fn example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name).to_string_lossy().into_owned()
}

fn out_dir(name: &str) -> std::path::PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("spring_simulate").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A task row: name, CPU, planned start and finish, actual start and finish, outcome.
type Row = (String, u64, u64, u64, Option<u64>, Option<u64>, String);

#[test]
fn simulate_executes_the_plan_and_reports_planned_and_actual_times() {
    let dir = out_dir("exec");
    let (report, gantt, trace) = (dir.join("r.json"), dir.join("g.svg"), dir.join("t.json"));
    let out = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .args(["simulate", &example("spring-exec.toml"), "--quiet", "--report"])
        .arg(&report)
        .arg("--gantt")
        .arg(&gantt)
        .arg("--trace")
        .arg(&trace)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    let tasks: Vec<Row> = v["spring"]["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                format!("{}/{}/{}", t["group"].as_str().unwrap(), t["thread"].as_str().unwrap(), t["task"]),
                t["cpu"].as_u64().unwrap(),
                t["planned_start"].as_u64().unwrap(),
                t["planned_finish"].as_u64().unwrap(),
                t["actual_start"].as_u64(),
                t["actual_finish"].as_u64(),
                t["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let m = 1_000_000u64;
    let us = 1_000u64;
    let row = |n: &str, cpu, ps, pf, a: Option<u64>, f: Option<u64>, o: &str| -> Row {
        (n.to_string(), cpu, ps * us, pf * us, a.map(|a| a * us), f.map(|f| f * us), o.to_string())
    };
    // Every window is its task's WCET plus the example's 50 µs job overhead.
    assert_eq!(
        tasks,
        [
            // Planned at 0 with a 1 ms budget: nothing before 1 ms. `read` needs 2 of its 3 ms.
            row("sample/read/0", 0, 1_000, 4_050, Some(1_000), Some(3_000), "completed"),
            row("sample/filter/0", 0, 4_050, 6_100, Some(4_050), Some(6_050), "completed"),
            row("sample/store/0", 1, 1_000, 5_050, Some(1_000), Some(5_000), "completed"),
            // Planned at 15 ms; asks 5 ms of a 2.05 ms window and is stopped at its end.
            row("greedy/spin/0", 0, 16_000, 18_050, Some(16_000), Some(18_050), "overrun"),
            row("greedy/spin/1", 0, 18_050, 20_100, None, None, "killed"),
        ]
    );
    let decisions = v["spring"]["decisions"].as_array().unwrap();
    assert_eq!(decisions.len(), 2);
    assert!(decisions.iter().all(|d| d["decision"] == "accepted"));
    assert_eq!(decisions[1]["requested"], 15 * m);
    assert_eq!(decisions[1]["cutoff"], 16 * m);
    // The unplanned threads fill the gaps: the logger's first job ran [0,1], [3,4] and
    // [6,7]; the batch job on CPU 1 ran [0,1] and [5,16].
    let job = |thread: &str, n: u64| {
        v["jobs"].as_array().unwrap().iter().find(|j| j["thread"] == thread && j["job"] == n).unwrap().clone()
    };
    assert_eq!(job("logger", 0)["finish"], 7 * m);
    assert_eq!(job("batch", 0)["finish"], 16 * m);
    let svg = std::fs::read_to_string(&gantt).unwrap();
    assert_eq!(svg.matches(r#"class="planned""#).count(), 5);
    assert_eq!(svg.matches(r#"class="cutoff""#).count(), 2);
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let planned = t["traceEvents"].as_array().unwrap().iter().filter(|e| e["cat"] == "plan" && e["ph"] == "X").count();
    assert_eq!(planned, 5);
}

#[test]
fn real_time_runs_execute_thread_groups_and_report_planned_and_actual_times() {
    let dir = out_dir("run");
    let report = dir.join("r.json");
    let out = Command::new(env!("CARGO_BIN_EXE_tempi"))
        .args(["run", &example("spring-vehicle.toml"), "--until", "300ms", "--no-pin", "--quiet", "--report"])
        .arg(&report)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    // `react` (with `halt`, its dependent) is planned on the planner's own thread, answered
    // with its measured time, well inside its 10 ms budget on any machine.
    let d = &v["spring"]["decisions"];
    assert_eq!((d[0]["group"].as_str(), d[0]["decision"].as_str()), (Some("react"), Some("accepted")), "{d}");
    assert_eq!(d[1]["group"].as_str(), Some("halt"));
    assert!(d[0]["cutoff"].as_u64() > d[0]["requested"].as_u64());
    let tasks = v["spring"]["tasks"].as_array().unwrap();
    let names: Vec<String> =
        tasks.iter().map(|t| format!("{}/{}", t["group"].as_str().unwrap(), t["thread"].as_str().unwrap())).collect();
    assert!(names.starts_with(&["react/sense".into(), "react/decide".into(), "halt/brake".into()]), "{names:?}");
    for t in tasks {
        let planned = t["planned_start"].as_u64().unwrap();
        assert!(planned >= d[0]["cutoff"].as_u64().unwrap(), "{t}");
        assert!(t["planned_finish"].as_u64().unwrap() > planned);
        if let Some(actual) = t["actual_start"].as_u64() {
            assert!(actual >= planned, "never before its planned start: {t}");
        }
    }
    // `sense` starts within the run's 300 ms.
    assert!(tasks[0]["actual_start"].as_u64().is_some(), "{}", tasks[0]);
}

/// A task whose code panics is `panicked` in the report's `spring` key and named in the text
/// summary, with the tasks that overran or were killed.
#[test]
fn a_panicking_task_is_reported_as_panicked_in_the_json_and_the_text() {
    use std::time::Duration;
    use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
    use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec};
    use tempi::{Runtime, Time};
    let ms = Duration::from_millis;
    let mut rt = Runtime::simulated(1);
    let planner = PlannerConfig { planner_wcet: ms(1), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
    let g = GroupSpec::new("bad", Time::ZERO, Time::from_millis(30)).thread(
        GroupThread::new("a")
            .task(TaskRequest::new(ms(4)), |cx, _| {
                cx.work(Duration::from_millis(2));
                panic!("sensor gone");
            })
            .work(TaskRequest::new(ms(2)), ms(2)),
    );
    spring.add_group(&mut rt, g).unwrap();
    let out = rt.run().unwrap();
    let report = tempi_cli::scenario::report_with_groups(&tempi::trace::report::to_json(&out), &spring);
    let v: serde_json::Value = serde_json::from_str(&report).unwrap();
    let outcomes: Vec<&str> =
        v["spring"]["tasks"].as_array().unwrap().iter().map(|t| t["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes, ["panicked", "killed"]);
    assert_eq!(v["spring"]["tasks"][0]["actual_finish"], 3_000_000);
    assert_eq!(
        tempi_cli::scenario::spring_summary(&spring),
        "spring tasks killed: bad/a#1\nspring tasks panicked: bad/a#0\n"
    );
}
