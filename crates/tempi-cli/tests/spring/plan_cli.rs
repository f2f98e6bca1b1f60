//! `tempi plan`: the example's exact plan (CPUs, starts, finishes, resources), the decision of
//! every request, and clear errors for bad `[[group]]` and `[planner]` tables.

use std::path::Path;

use serde_json::Value;

use crate::common;
use common::tempi;

fn example() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/spring-plan.toml").display().to_string()
}

fn plan_json(file: &str) -> Value {
    let out = tempi(&["plan", file, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

#[test]
fn example_plan_is_exact() {
    let doc = plan_json(&example());
    let ms = 1_000_000u64;
    let tasks: Vec<(String, String, u64, u64, u64, u64)> = doc["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["group"].as_str().unwrap().to_string(),
                t["thread"].as_str().unwrap().to_string(),
                t["task"].as_u64().unwrap(),
                t["cpu"].as_u64().unwrap(),
                t["start"].as_u64().unwrap(),
                t["finish"].as_u64().unwrap(),
            )
        })
        .collect();
    let want = [
        ("move-linear", "compute", 0, 0, ms, 5 * ms),
        ("move-linear", "move", 0, 0, 5 * ms, 11 * ms),
        ("move-linear", "move", 1, 0, 11 * ms, 13 * ms),
        ("move-linear", "log", 0, 1, ms, 3 * ms),
        // The camera is free for an exclusive holder only once `compute` (shared) ends.
        ("inspect", "grab", 0, 1, 5 * ms, 8 * ms),
        ("inspect", "grab", 1, 1, 8 * ms, 10 * ms),
        // The table is held exclusively by `move` until 11 ms.
        ("inspect", "analyse", 0, 1, 11 * ms, 16 * ms),
        // Planned at 10 ms with a 1 ms budget: nothing starts before the 11 ms cutoff.
        ("report", "send", 0, 2, 11 * ms, 14 * ms),
    ];
    let want: Vec<_> = want.iter().map(|&(g, th, k, c, s, f)| (g.to_string(), th.to_string(), k, c, s, f)).collect();
    assert_eq!(tasks, want);
    let move0 = &doc["plan"][1]["resources"];
    assert_eq!(move0[0]["name"], "table");
    assert_eq!(move0[0]["mode"], "exclusive");
    assert_eq!(doc["plan"][0]["resources"][0]["mode"], "shared");
}

#[test]
fn example_requests_report_decision_k_and_cost() {
    let doc = plan_json(&example());
    let reqs = doc["requests"].as_array().unwrap();
    let summary: Vec<(&str, &str, u64, u64, u64)> = reqs
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap(),
                r["decision"].as_str().unwrap(),
                r["k"].as_u64().unwrap(),
                r["evaluations"].as_u64().unwrap(),
                r["planner_time"].as_u64().unwrap(),
            )
        })
        .collect();
    // Modelled cost: 10 us fixed + 1 us per evaluation.
    assert_eq!(
        summary,
        [
            ("move-linear", "accepted", 4, 10, 20_000),
            ("inspect", "accepted", 5, 15, 25_000),
            ("overload", "rejected", 7, 1, 11_000),
            ("report", "accepted", 3, 6, 16_000),
        ]
    );
    assert_eq!(reqs[2]["reason"], "infeasible");
    for r in reqs {
        assert!(r["planner_time"].as_u64() <= r["budget"].as_u64());
    }
}

#[test]
fn table_output_names_every_group_and_the_rejection() {
    let out = tempi(&["plan", &example()]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("3 of 4 groups accepted"), "{text}");
    assert!(text.contains("rejected (infeasible)"), "{text}");
    assert!(text.contains("table (exclusive), arm (exclusive)"), "{text}");
}

/// Write `body` as a scenario, plan it, and check exit code 2 and the message.
fn bad(name: &str, body: &str, message: &str) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(format!("{name}.toml"));
    std::fs::write(&file, body).unwrap();
    let out = tempi(&["plan", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{name}: {err}");
    assert!(err.contains(message), "{name}: expected {message:?} in {err:?}");
}

const GROUP: &str = "[[group]]\nname = \"g\"\ndeadline = \"10ms\"\n";

#[test]
fn bad_groups_are_clear_errors() {
    bad(
        "heuristic",
        "[planner]\nheuristic = \"fastest\"\n",
        ":2: [planner]: field `heuristic`: unknown heuristic \"fastest\" (known: min-d, min-s, est, min-l, d+w*est)",
    );
    bad(
        "placement",
        "[planner]\nplacement = \"nearest\"\n",
        "unknown placement \"nearest\" (known: earliest, only-local)",
    );
    let cycle = format!(
        "{GROUP}[[group.thread]]\nname = \"a\"\nafter = [\"b\"]\n[[group.thread.task]]\nwcet = \"1ms\"\n\
         [[group.thread]]\nname = \"b\"\nafter = [\"a\"]\n[[group.thread.task]]\nwcet = \"1ms\"\n"
    );
    bad("cycle", &cycle, "group \"g\": threads wait for each other in a cycle: a -> b -> a");
    let pred =
        format!("{GROUP}[[group.thread]]\nname = \"a\"\nafter = [\"z\"]\n[[group.thread.task]]\nwcet = \"1ms\"\n");
    bad("pred", &pred, ":6: group \"g\": thread \"a\": field `after`: unknown predecessor \"z\"");
    let res = format!(
        "[planner]\nresources = [\"bus\"]\n{GROUP}[[group.thread]]\nname = \"a\"\n[[group.thread.task]]\nwcet = \"1ms\"\n\
         resources = [{{ name = \"disk\", mode = \"shared\" }}]\n"
    );
    bad("resource", &res, "unknown resource \"disk\" (declare it in [planner] resources; known: bus)");
    let mode = format!(
        "[planner]\nresources = [\"bus\"]\n{GROUP}[[group.thread]]\nname = \"a\"\n[[group.thread.task]]\nwcet = \"1ms\"\n\
         resources = [{{ name = \"bus\", mode = \"sometimes\" }}]\n"
    );
    bad("mode", &mode, "unknown mode \"sometimes\" (expected shared or exclusive)");
    bad("empty", GROUP, "group \"g\": needs at least one [[group.thread]]");
    bad("none", "[runtime]\ncpus = 2\n", "no [[group]] tables: nothing to plan");
    bad("home", "[[planner.process]]\nname = \"p\"\nhome_cpu = 3\n", "CPU 3 does not exist");
    bad("unknown-key", &format!("{GROUP}colour = \"red\"\n"), "colour");
}

#[test]
fn threads_listed_before_their_predecessors_are_reordered() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("order.toml");
    let body = format!(
        "{GROUP}[[group.thread]]\nname = \"second\"\nafter = [\"first\"]\n[[group.thread.task]]\nwcet = \"2ms\"\n\
         [[group.thread]]\nname = \"first\"\n[[group.thread.task]]\nwcet = \"3ms\"\n\
         [planner]\nwcet = \"2ms\"\nsafety = \"1ms\"\n"
    );
    std::fs::write(&file, body).unwrap();
    let doc = plan_json(file.to_str().unwrap());
    let plan = doc["plan"].as_array().unwrap();
    let got: Vec<(&str, u64, u64)> = plan
        .iter()
        .map(|t| (t["thread"].as_str().unwrap(), t["start"].as_u64().unwrap(), t["finish"].as_u64().unwrap()))
        .collect();
    assert_eq!(got, [("first", 1_000_000, 4_000_000), ("second", 4_000_000, 6_000_000)]);
}

// ---------------------------------------------------------------------------------------------
// `tempi experiment spring-*` (quick runs: 5 runs per point, fixed seeds).

fn experiment(name: &str) -> (String, Value) {
    let out = tempi(&["experiment", name, "--quick"]);
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let out = tempi(&["experiment", name, "--quick", "--json"]);
    assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
    (text, serde_json::from_slice(&out.stdout).expect("one JSON object"))
}

fn holds(v: &Value, starts_with: &str) -> bool {
    let c = v["conclusions"].as_array().unwrap().iter().find(|c| c["claim"].as_str().unwrap().starts_with(starts_with));
    c.unwrap_or_else(|| panic!("no conclusion {starts_with:?}"))["holds"].as_bool().unwrap()
}

#[test]
fn spring_planner_time_stays_within_budget_and_knee_is_at_42_tasks() {
    let (text, v) = experiment("spring-planner");
    assert!(text.contains("Paper's conclusions"), "{text}");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 8 * 100);
    for p in points {
        let budget = p["wcet_ms"].as_f64().unwrap() - 50.0;
        assert!(p["max_ms"].as_f64().unwrap() <= budget + 1e-9, "{p}");
    }
    // k = all up to the knee the cost bound predicts: 42 tasks at 450 ms (903 x 442 us).
    let at = |b: u64, n: u64| points.iter().find(|p| p["wcet_ms"] == b && p["tasks"] == n).unwrap();
    assert_eq!(at(450, 42)["runs_k_all"], 5);
    assert_eq!(at(450, 42)["max_ms"].as_f64().unwrap(), 399.126);
    assert!(at(450, 43)["runs_k_all"].as_u64().unwrap() < 5);
    assert_eq!(at(50, 10)["accepted"], 0);
    for claim in ["The planner never runs past", "Below the knee", "At a 450 ms budget", "A 50 ms WCET"] {
        assert!(holds(&v, claim), "{claim}");
    }
}

#[test]
fn spring_fastswitch_rule_raises_the_share_of_fast_switches() {
    let (text, v) = experiment("spring-fastswitch");
    assert!(text.contains("arrivals/run"), "{text}");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 3 * 2);
    let fast = |p: f64, stay: bool| {
        points.iter().find(|r| r["p_same_process"] == p && r["stay_within_process"] == stay).unwrap()["fast_pct"]
            .as_f64()
            .unwrap()
    };
    assert!(fast(0.5, true) > fast(0.5, false));
    assert_eq!(fast(1.0, false), 100.0);
    assert!(fast(0.0, false) > 0.0);
    for r in points {
        assert!(r["arrivals"].as_f64().unwrap() > 0.0 && r["accepted_pct"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert!(holds(&v, "The stay-within-process rule raises"));
}

#[test]
fn spring_locality_earliest_accepts_more_than_only_local() {
    let (text, v) = experiment("spring-locality");
    assert!(text.contains("heavy load"), "{text}");
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2 * 3 * 2);
    for r in points.iter().filter(|r| r["placement"] == "only-local") {
        assert_eq!(r["local_pct"].as_f64().unwrap(), 100.0, "{r}");
    }
    assert!(holds(&v, "Only Local greatly sacrifices"));
    assert!(holds(&v, "Earliest still reduces memory costs"));
}

// ---------------------------------------------------------------------------------------------
// Property: whatever the groups, `tempi plan` prints a plan that keeps every guarantee.

use proptest::prelude::*;

/// A generated task: WCET in ms and, per resource, 0 = not held, 1 = shared, 2 = exclusive.
type GenTask = (u64, Vec<u8>);
/// A generated thread: its tasks and the earlier threads (by generation index) it comes after.
type GenThread = (Vec<GenTask>, Vec<usize>);
/// A generated group: release and relative deadline in ms, its threads.
type GenGroup = (u64, u64, Vec<GenThread>);

fn gen_groups() -> impl Strategy<Value = (usize, Vec<GenGroup>)> {
    let task = (1u64..8, prop::collection::vec(0u8..3, 3));
    let thread = (prop::collection::vec(task, 1..4), prop::collection::vec(0usize..4, 0..3));
    let group = (0u64..20, 5u64..60, prop::collection::vec(thread, 1..5));
    (1usize..4, prop::collection::vec(group, 1..5))
}

/// The scenario text; threads are written in reverse so the file lists them before their
/// predecessors, and predecessors point only at earlier generated threads (no cycles).
fn scenario_text(cpus: usize, groups: &[GenGroup]) -> String {
    let mut s = format!(
        "[runtime]\ncpus = {cpus}\n[planner]\nwcet = \"2ms\"\nsafety = \"1ms\"\nresources = [\"r0\", \"r1\", \"r2\"]\n"
    );
    for (g, (release, deadline, threads)) in groups.iter().enumerate() {
        s += &format!("[[group]]\nname = \"g{g}\"\nrelease = \"{release}ms\"\ndeadline = \"{deadline}ms\"\n");
        for (i, (tasks, after)) in threads.iter().enumerate().rev() {
            let mut preds: Vec<usize> = after.iter().filter(|&&p| p < i).copied().collect();
            preds.sort();
            preds.dedup();
            let preds: Vec<String> = preds.iter().map(|p| format!("\"t{p}\"")).collect();
            s += &format!("[[group.thread]]\nname = \"t{i}\"\nafter = [{}]\n", preds.join(", "));
            for (wcet, uses) in tasks {
                let res: Vec<String> = uses
                    .iter()
                    .enumerate()
                    .filter(|&(_, &m)| m > 0)
                    .map(|(r, &m)| {
                        format!("{{ name = \"r{r}\", mode = \"{}\" }}", if m == 1 { "shared" } else { "exclusive" })
                    })
                    .collect();
                s += &format!("[[group.thread.task]]\nwcet = \"{wcet}ms\"\nresources = [{}]\n", res.join(", "));
            }
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_printed_plan_keeps_its_guarantees((cpus, groups) in gen_groups()) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("p.toml");
        std::fs::write(&file, scenario_text(cpus, &groups)).unwrap();
        let doc = plan_json(file.to_str().unwrap());
        let plan = doc["plan"].as_array().unwrap();
        let ns = |v: &Value| v.as_u64().unwrap();
        for r in doc["requests"].as_array().unwrap() {
            prop_assert!(ns(&r["planner_time"]) <= ns(&r["budget"]));
            let name = r["group"].as_str().unwrap();
            let gi: usize = name[1..].parse().unwrap();
            let (_, _, threads) = &groups[gi];
            let mine: Vec<&Value> = plan.iter().filter(|t| t["group"] == name).collect();
            if r["decision"] != "accepted" {
                prop_assert!(mine.is_empty(), "a refused group left tasks in the plan");
                continue;
            }
            prop_assert_eq!(mine.len(), threads.iter().map(|t| t.0.len()).sum::<usize>());
            let task_of = |th: usize, k: usize| {
                *mine.iter().find(|t| t["thread"] == format!("t{th}") && t["task"] == k as u64).unwrap()
            };
            for t in &mine {
                prop_assert!(ns(&t["start"]) >= ns(&r["release"]) && ns(&t["start"]) >= ns(&r["cutoff"]));
                prop_assert!(ns(&t["finish"]) <= ns(&r["deadline"]));
            }
            for (i, (tasks, after)) in threads.iter().enumerate() {
                for k in 1..tasks.len() {
                    let (a, b) = (task_of(i, k - 1), task_of(i, k));
                    prop_assert!(ns(&b["start"]) >= ns(&a["finish"]) && a["cpu"] == b["cpu"]);
                }
                for &p in after.iter().filter(|&&p| p < i) {
                    let last = task_of(p, threads[p].0.len() - 1);
                    prop_assert!(ns(&task_of(i, 0)["start"]) >= ns(&last["finish"]));
                }
            }
        }
        for (x, a) in plan.iter().enumerate() {
            for b in &plan[x + 1..] {
                let overlap = ns(&a["start"]) < ns(&b["finish"]) && ns(&b["start"]) < ns(&a["finish"]);
                if !overlap {
                    continue;
                }
                prop_assert!(a["cpu"] != b["cpu"], "two tasks overlap on CPU {}", a["cpu"]);
                for ua in a["resources"].as_array().unwrap() {
                    for ub in b["resources"].as_array().unwrap() {
                        prop_assert!(
                            ua["name"] != ub["name"] || (ua["mode"] == "shared" && ub["mode"] == "shared"),
                            "{} held with an exclusive holder at the same time", ua["name"]
                        );
                    }
                }
            }
        }
    }
}

/// Dependents are planned in their parent's request, theirs too, releases counted from the
/// parent's, all or nothing, as `tempi simulate` does.
#[test]
fn dependents_are_planned_with_their_parent_all_or_nothing() {
    let group = |name: &str, extra: &str, wcet: &str| {
        format!(
            "[[group]]\nname = \"{name}\"\nrelease = \"1ms\"\ndeadline = \"10ms\"\n{extra}\n[[group.thread]]\nname = \"t\"\n\
             [[group.thread.task]]\nwcet = \"{wcet}\"\n"
        )
    };
    let dir = common::scratch("plan_cli", "dependents");
    let fits = dir.join("fits.toml");
    let text = |c_wcet: &str| {
        format!(
            "[runtime]\ncpus = 1\n[planner]\nwcet = \"2ms\"\nsafety = \"1ms\"\n{}{}{}",
            group("a", "dependent = [\"b\"]", "2ms"),
            group("b", "spawned = true\ndependent = [\"c\"]", "2ms"),
            group("c", "spawned = true", c_wcet)
        )
    };
    std::fs::write(&fits, text("2ms")).unwrap();
    let doc = plan_json(fits.to_str().unwrap());
    let rows: Vec<(String, Value, u64, String)> = doc["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap().to_string(),
                r["dependent_of"].clone(),
                r["release"].as_u64().unwrap(),
                r["decision"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let ms = 1_000_000u64;
    assert_eq!(
        rows,
        [
            ("a".to_string(), Value::Null, ms, "accepted".to_string()),
            ("b".to_string(), Value::from("a"), 2 * ms, "accepted".to_string()),
            ("c".to_string(), Value::from("b"), 3 * ms, "accepted".to_string()),
        ]
    );
    let starts: Vec<u64> = doc["plan"].as_array().unwrap().iter().map(|t| t["start"].as_u64().unwrap()).collect();
    // Nothing starts before the cutoff line (the request at 1 ms plus the 1 ms budget).
    assert_eq!(starts, [2 * ms, 4 * ms, 6 * ms]);

    // A grandchild that cannot fit (20 ms of work due 10 ms after its release) refuses the
    // whole request, and nothing is planned.
    let refused = dir.join("refused.toml");
    std::fs::write(&refused, text("20ms")).unwrap();
    let doc = plan_json(refused.to_str().unwrap());
    let decisions: Vec<&str> =
        doc["requests"].as_array().unwrap().iter().map(|r| r["decision"].as_str().unwrap()).collect();
    assert_eq!(decisions, ["rejected", "rejected", "rejected"]);
    assert_eq!(doc["plan"].as_array().unwrap().len(), 0);
}
