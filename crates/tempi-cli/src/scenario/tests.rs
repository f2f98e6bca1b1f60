//! Unit tests of the scenario module: durations, the error positions and messages of every
//! check, the validated form, and example scenarios run in virtual time.
//!
//! Owns no production code; it must not be needed by anything outside `#[cfg(test)]`.

use std::path::Path;

use toml::Value;

use tempi::{Runtime, Time};

use super::duration::work_value;
use super::runtime::SplitMix64;
use super::source::Source;
use super::*;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn durations_with_units() {
    assert_eq!(parse_duration("12ms"), Ok(ms(12)));
    assert_eq!(parse_duration("500us"), Ok(Duration::from_micros(500)));
    assert_eq!(parse_duration("500µs"), Ok(Duration::from_micros(500)));
    assert_eq!(parse_duration("250ns"), Ok(Duration::from_nanos(250)));
    assert_eq!(parse_duration("2s"), Ok(Duration::from_secs(2)));
    assert_eq!(parse_duration("1.5s"), Ok(ms(1500)));
    assert_eq!(parse_duration("0.25ms"), Ok(Duration::from_micros(250)));
    assert_eq!(parse_duration("1.000ms"), Ok(ms(1)));
    assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
}

#[test]
fn bare_integers_are_nanoseconds() {
    assert_eq!(parse_duration("1500"), Ok(Duration::from_nanos(1500)));
    assert!(parse_duration("1.5").is_err());
}

#[test]
fn malformed_durations_are_rejected() {
    for bad in ["", "4 ms", " 4ms", "4ms ", "ms", "4m", "4min", "-1ms", "1..2ms", ".5ms", "5.ms", "1e3ns", "4MS"] {
        let e = parse_duration(bad).unwrap_err();
        assert!(e.contains("invalid duration"), "{bad:?}: {e}");
    }
    assert_eq!(
        parse_duration("4 ms").unwrap_err(),
        "invalid duration \"4 ms\" (expected e.g. 12ms, 500us, 1.5s): did you mean \"4ms\" (no space)?"
    );
}

#[test]
fn near_miss_durations_get_the_right_spelling() {
    let hint = |text: &str| {
        let e = parse_duration(text).unwrap_err();
        e.split_once(": did you mean ").map(|(_, h)| h.trim_end_matches('?').to_string())
    };
    assert_eq!(hint("10sec").as_deref(), Some("\"10s\""));
    assert_eq!(hint("10 ms").as_deref(), Some("\"10ms\" (no space)"));
    assert_eq!(hint(" 4ms").as_deref(), Some("\"4ms\" (no space around it)"));
    assert_eq!(hint("4MS").as_deref(), Some("\"4ms\""));
    assert_eq!(hint("2.5 msec").as_deref(), Some("\"2.5ms\" (no space)"));
    assert_eq!(hint("250 micros").as_deref(), Some("\"250us\" (no space)"));
    assert_eq!(hint("2min").as_deref(), Some("\"120s\" (durations have no unit above seconds)"));
    assert_eq!(hint("1h").as_deref(), Some("\"3600s\" (durations have no unit above seconds)"));
    // Nothing close: no guess.
    for far in ["", "ms", "fast", "1..2ms", "-1ms", "1e3ns", "1.5"] {
        assert_eq!(hint(far), None, "{far:?}");
    }
}

#[test]
fn sub_nanosecond_and_overflow_are_rejected() {
    assert!(parse_duration("1.5ns").unwrap_err().contains("finer than a nanosecond"));
    assert!(parse_duration("0.0000000001s").unwrap_err().contains("finer than a nanosecond"));
    assert_eq!(parse_duration("0.000000001s"), Ok(Duration::from_nanos(1)));
    assert!(parse_duration("99999999999999999999s").unwrap_err().contains("too large"));
    assert!(parse_duration("18446744074s").unwrap_err().contains("too large"));
}

#[test]
fn work_ranges() {
    assert_eq!(work_value(&Value::String("1ms..3ms".into())), Ok(Step::WorkBetween(ms(1), ms(3))));
    assert_eq!(work_value(&Value::String("2ms..2ms".into())), Ok(Step::Work(ms(2))));
    assert!(work_value(&Value::String("3ms..1ms".into())).is_err());
    assert_eq!(work_value(&Value::Integer(7)), Ok(Step::Work(Duration::from_nanos(7))));
}

#[test]
fn generator_is_deterministic_and_in_range() {
    let mut a = SplitMix64::for_thread(42, 3);
    let mut b = SplitMix64::for_thread(42, 3);
    let mut c = SplitMix64::for_thread(42, 4);
    let xs: Vec<Duration> = (0..100).map(|_| a.between(ms(1), ms(3))).collect();
    let ys: Vec<Duration> = (0..100).map(|_| b.between(ms(1), ms(3))).collect();
    let zs: Vec<Duration> = (0..100).map(|_| c.between(ms(1), ms(3))).collect();
    assert_eq!(xs, ys);
    assert_ne!(xs, zs);
    assert!(xs.iter().all(|d| (ms(1)..=ms(3)).contains(d)));
}

fn error(text: &str) -> ScenarioError {
    Scenario::parse("s.toml", text).unwrap_err()
}

#[test]
fn errors_name_line_thread_and_field() {
    let e = error("[runtime]\npolicy = \"fp\"\n\n[[thread]]\nname = \"t2\"\nwcet = \"1ms\"\nperiod = \"4 ms\"\n");
    assert_eq!(
        e.to_string(),
        "s.toml:7: thread \"t2\": field `period`: invalid duration \"4 ms\" (expected e.g. 12ms, 500us, 1.5s): did \
         you mean \"4ms\" (no space)?"
    );
}

#[test]
fn toml_errors_get_lines_and_context() {
    let e = error("[[thread]]\nname = \"a\"\nperiod = \"4ms\"\nperod = \"4ms\"\n");
    assert_eq!(e.line, Some(4));
    assert!(e.message.contains("thread \"a\"") && e.message.contains("perod"), "{e}");
    let e = error("[[thread]]\nname = \"a\"\npriority = \"high\"\n");
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("field `priority`"), "{e}");
    let e = error("[runtime]\ncpus = \n");
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn semantic_checks() {
    let cases: &[(&str, usize, &str)] = &[
        ("[runtime]\npolicy = \"lottery\"\n", 2, "unknown policy"),
        ("[runtime]\npolicy = \"rr\"\n", 2, "field `quantum`"),
        ("[[thread]]\nname = \"a\"\n[[thread]]\nname = \"a\"\n", 4, "duplicate"),
        ("[[thread]]\nname = \"a\"\ncpu = 1\n", 3, "field `cpu`"),
        ("[[thread]]\nname = \"a\"\nperiod = \"0ms\"\n", 3, "must be positive"),
        ("[[thread]]\nname = \"a\"\nsteps = [{ work = \"1ms\", sleep = \"1ms\" }]\n", 3, "exactly one"),
        ("[[thread]]\nname = \"a\"\nsteps = [{}]\n", 3, "exactly one"),
        ("[[thread]]\nname = \"a\"\nkind = \"sporadic\"\nperiod = \"1ms\"\n", 4, "field `period`"),
        ("[[thread]]\nname = \"a\"\nkind = \"periodic\"\n", 3, "required"),
        ("[[timer]]\nevery = \"1ms\"\nrelease = [\"ghost\"]\n", 3, "no thread named"),
        ("[[thread]]\nname = \"p\"\nperiod = \"2ms\"\n[[timer]]\nat = \"1ms\"\nrelease = [\"p\"]\n", 6, "not sporadic"),
        ("[[timer]]\nevery = \"1ms\"\nat = \"1ms\"\n", 2, "not both"),
        ("[[thread]]\nname = \"a\"\nmax_jobs = 0\n", 3, "max_jobs"),
        ("[runtime]\ncpus = 0\n", 2, "field `cpus`"),
        ("[runtime]\naccounting = \"some\"\n", 2, "field `accounting`"),
        ("[[thread]]\nname = \"a\"\nforever = true\nsteps = [{ yield = true }]\n", 3, "field `forever`"),
    ];
    for &(text, line, needle) in cases {
        let e = error(text);
        assert_eq!(e.line, Some(line), "{text:?} -> {e}");
        assert!(e.message.contains(needle), "{text:?} -> {e}");
    }
}

/// Two threads, then `extra` (set tables).
fn set_error(extra: &str) -> ScenarioError {
    error(&format!("[[thread]]\nname = \"a\"\n[[thread]]\nname = \"b\"\n{extra}"))
}

#[test]
fn set_checks_name_line_and_field() {
    let cases: &[(&str, usize, &str)] = &[
        ("[[set]]\nname = \"s\"\nmembers = [\"a\",\n  \"ghost\"]\n", 8, "field `members`: no thread named \"ghost\""),
        ("[[set]]\nname = \"s\"\nmembers = [\"a\", \"a\"]\n", 7, "listed twice"),
        (
            "[[set]]\nname = \"s\"\nmembers = [\"a\"]\n[[set]]\nname = \"t\"\nmembers = [\"b\", \"a\"]\n",
            10,
            "set \"t\": field `members`: thread \"a\" is already in set \"s\" (line 5)",
        ),
        (
            "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"periodic\"\n",
            8,
            "field `period`: required when replenish = \"periodic\"",
        ),
        ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nserver = \"cbs\"\n", 8, "field `period`: required by server"),
        (
            "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"5ms\"\nserver = \"sporadic\"\nreplenish = \"periodic\"\n",
            10,
            "field `replenish`: give either `server` or `replenish`/`action`",
        ),
        (
            "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"5ms\"\nserver = \"deferrable\"\naction = \"kill\"\n",
            10,
            "field `action`: give either",
        ),
        ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\naction = \"explode\"\n", 8, "unknown action \"explode\""),
        ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nserver = \"polling\"\n", 8, "unknown server"),
        ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"weekly\"\n", 8, "unknown replenishment"),
        (
            "[[set]]\nname = \"s\"\nbudget = \"2ms\"\nreplenish = \"periodic\"\nperiod = \"0ms\"\n",
            9,
            "field `period`: must be positive",
        ),
        ("[[set]]\nname = \"s\"\nbudget = \"2ms\"\nperiod = \"5ms\"\n", 8, "a manual budget has no period"),
        ("[[set]]\nname = \"s\"\nbudget = \"0ms\"\n", 7, "field `budget`: must be positive"),
        ("[[set]]\nname = \"s\"\naction = \"kill\"\n", 7, "field `action`: only applies with a `budget`"),
        (
            "[[set]]\nname = \"s\"\nbudget = \"1ms\"\nreplenish = \"cbs\"\nperiod = \"4ms\"\naction = \"demote\"\n",
            10,
            "only supports action = \"notify\"",
        ),
        ("[[set]]\nname = \"s\"\ncpu = 1\n", 7, "field `cpu`"),
        ("[[set]]\nname = \"s\"\n[[set]]\nname = \"s\"\n", 8, "duplicate set name (first used at line 5)"),
        ("[[set]]\nname = \"s\"\nbugdet = \"1ms\"\n", 7, "set \"s\": unknown field `bugdet`"),
        (
            "[runtime]\naccounting = \"thread\"\n[[set]]\nname = \"s\"\nbudget = \"1ms\"\n",
            6,
            "field `accounting`: set \"s\" (line 7) has a budget",
        ),
    ];
    for &(extra, line, needle) in cases {
        let e = set_error(extra);
        assert_eq!(e.line, Some(line), "{extra:?} -> {e}");
        assert!(e.message.contains(needle), "{extra:?} -> {e}");
        assert!(e.message.starts_with("set \"") || e.message.starts_with("[runtime]"), "{extra:?} -> {e}");
    }
}

#[test]
fn sets_budgets_and_servers() {
    let s = Scenario::parse(
        "s.toml",
        "[runtime]\naccounting = \"group\"\n[[thread]]\nname = \"a\"\nforever = true\nsteps = [{ work = \"1ms\" }]\n\
         [[thread]]\nname = \"b\"\n[[set]]\nname = \"box\"\nmembers = [\"a\"]\nbudget = \"2ms\"\n\
         replenish = \"sporadic\"\nperiod = \"10ms\"\naction = \"kill\"\n[[set]]\nname = \"srv\"\n\
         members = [\"b\"]\nbudget = \"1ms\"\nperiod = \"4ms\"\nserver = \"cbs\"\n[[set]]\nname = \"plain\"\n",
    )
    .unwrap();
    assert!(s.threads[0].forever && !s.threads[1].forever);
    assert!(s.never_ends(), "a runaway never ends");
    assert_eq!(s.sets.len(), 3);
    assert_eq!((s.sets[0].line, s.sets[0].cpu, s.sets[0].members.clone()), (9, 0, vec![0]));
    let b = s.sets[0].budget.as_ref().unwrap();
    assert_eq!(
        (b.amount, b.replenish, b.action.as_str(), b.server),
        (ms(2), Replenishment::Sporadic { period: ms(10) }, "kill", None)
    );
    assert_eq!(b.budget().action_name(), "kill");
    let c = s.sets[1].budget.as_ref().unwrap();
    assert_eq!(c.server, Some(ServerKind::ConstantBandwidth));
    assert_eq!(c.budget().replenishment(), Replenishment::ConstantBandwidth { period: ms(4) });
    assert!(s.sets[2].budget.is_none() && s.sets[2].members.is_empty());
    let d = Scenario::parse(
        "d.toml",
        "[[set]]\nname = \"d\"\nbudget = \"2ms\"\nperiod = \"10ms\"\nserver = \"deferrable\"\n",
    )
    .unwrap();
    let b = d.sets[0].budget.as_ref().unwrap().budget();
    assert_eq!((b.replenishment(), b.action_name()), (Replenishment::Periodic { period: ms(10) }, "suspend"));
}

#[test]
fn resources_record_their_users_and_take_overrides() {
    let mut s = Scenario::parse(
        "s.toml",
        "[[resource]]\nname = \"R\"\n[[thread]]\nname = \"a\"\nsteps = [{ lock = \"R\" }, { work = \"1ms\" }]\n\
         [[thread]]\nname = \"b\"\n",
    )
    .unwrap();
    let r = &s.resources[0];
    assert_eq!((r.protocol.as_str(), r.ceiling, r.users.clone(), r.line), ("bpi", None, vec![0], 1));
    assert_eq!(s.threads[0].steps, vec![Step::Lock(0), Step::Work(ms(1))]);
    let text = "[[resource]]\nname = \"R\"\n[[thread]]\nname = \"a\"\nsteps = [{ lock = \"R\" }, { work = \"1ms\" }]\n";
    let over = |p: &str| super::Overrides { lock_protocol: Some(p.to_string()) };
    s = Scenario::parse_with("s.toml", text, &over("pcp")).unwrap();
    assert_eq!(s.resources[0].protocol, "pcp");
    let e = Scenario::parse_with("s.toml", text, &over("spin")).unwrap_err();
    assert_eq!(e.line, None);
    assert!(e.message.starts_with("--lock-protocol: unknown locking protocol \"spin\""), "{}", e.message);
}

/// 20,000 threads that lock one resource, one set over half of them, a timer: every
/// table's line, and the line of an error near the end of the file, are still exact.
#[test]
fn many_threads_load_and_errors_keep_their_lines() {
    let n = 20_000;
    let mut text = String::from("[runtime]\nuntil = \"1ms\"\n\n[[resource]]\nname = \"bus\"\n\n");
    for i in 0..n {
        text.push_str(&format!(
            "[[thread]]\nname = \"t{i}\"\nperiod = \"{}ms\"\nsteps = [{{ lock = \"bus\" }}, {{ work = \"1us\" }}, \
             {{ unlock = \"bus\" }}]\n\n",
            1000 + i
        ));
    }
    let members: Vec<String> = (0..n).step_by(2).map(|i| format!("\"t{i}\"")).collect();
    text.push_str(&format!("[[set]]\nname = \"half\"\nmembers = [{}]\n", members.join(", ")));
    text.push_str("[[thread]]\nname = \"s\"\nkind = \"sporadic\"\n[[timer]]\nat = \"1ms\"\nrelease = [\"s\"]\n");
    let header = |i: usize| 7 + 5 * i;
    let s = Scenario::parse("big.toml", &text).unwrap();
    assert_eq!(s.threads.len(), n + 1);
    for i in [0, 1, n / 2, n - 1] {
        assert_eq!((s.threads[i].name.clone(), s.threads[i].line), (format!("t{i}"), header(i)));
    }
    assert_eq!((s.sets[0].line, s.sets[0].members.len()), (header(n), n / 2));
    assert_eq!((s.threads[n].line, s.timers[0].line), (header(n) + 3, header(n) + 6));
    assert_eq!(s.resources[0].users, (0..n).collect::<Vec<_>>());

    let last = format!("period = \"{}ms\"", 1000 + n - 1);
    let e = error(&text.replace(&last, "period = \"4 ms\""));
    assert_eq!(e.line, Some(header(n - 1) + 2), "{e}");
    assert!(e.message.starts_with(&format!("thread \"t{}\": field `period`", n - 1)), "{e}");
    let e = error(&text.replace("name = \"s\"", "name = \"t7\""));
    assert_eq!(e.line, Some(header(n) + 4), "{e}");
    assert!(e.message.contains("duplicate thread name"), "{e}");
    let e = error(&text.replace("\"t0\", \"t2\"", "\"t0\", \"t0\""));
    assert_eq!(e.line, Some(header(n) + 2), "{e}");
    assert!(e.message.contains("thread \"t0\" is listed twice"), "{e}");
}

#[test]
fn line_lookup_counts_the_newlines_before_the_offset() {
    let text = "a\n\nbc\nd";
    let src = Source::new("s.toml", text);
    let naive = |offset: usize| text.as_bytes()[..offset.min(text.len())].iter().filter(|&&b| b == b'\n').count() + 1;
    for offset in 0..=text.len() + 2 {
        assert_eq!(src.line(offset), naive(offset), "offset {offset}");
    }
}

#[test]
fn accounting_reaches_the_config() {
    let s = Scenario::parse("s.toml", "[runtime]\naccounting = \"off\"\n[[set]]\nname = \"x\"\n").unwrap();
    assert_eq!(s.accounting, Accounting::Off);
    assert_eq!(Scenario::parse("s.toml", "").unwrap().accounting, Accounting::Group);
}

#[test]
fn defaults_and_kinds() {
    let s = Scenario::parse(
        "s.toml",
        "[[thread]]\nname = \"p\"\nperiod = \"4ms\"\nwcet = \"1ms\"\n[[thread]]\nname = \"o\"\n\
         steps = [{ work = \"1ms\" }, { sleep = \"2ms\" }, { yield = true }, { work = \"1ms..3ms\" }]\n",
    )
    .unwrap();
    assert_eq!(s.cpus, 1);
    assert_eq!(s.policy, "fp");
    assert_eq!(s.threads[0].timing, Timing::Periodic { period: ms(4), phase: Duration::ZERO });
    assert_eq!(s.threads[0].steps, vec![Step::Work(ms(1))]);
    assert_eq!(s.threads[1].timing, Timing::OneShot);
    assert_eq!(s.threads[1].wcet, ms(4));
    assert_eq!(s.threads[1].line, 5);
    assert!(s.never_ends());
}

fn example(name: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples").join(name);
    Scenario::load(&path).unwrap()
}

fn simulate(s: &Scenario) -> tempi::RunOutcome {
    let mut rt = Runtime::<tempi::clock::VirtualClock>::new(s.config()).unwrap();
    s.populate(&mut rt).unwrap();
    rt.run_until(Time::ZERO + s.until.unwrap()).unwrap()
}

#[test]
fn rm_textbook_meets_every_deadline() {
    let out = simulate(&example("rm-textbook.toml"));
    assert_eq!(out.total_misses(), 0);
    assert_eq!(out.thread_named("t1").unwrap().stats.completed, 6);
}

#[test]
fn edf_example_misses_only_under_fixed_priority() {
    let mut s = example("edf-full-utilisation.toml");
    assert_eq!(simulate(&s).total_misses(), 0);
    s.set_policy("fp").unwrap();
    assert!(simulate(&s).total_misses() > 0);
}

#[test]
fn sporadic_timer_releases_the_handler() {
    let out = simulate(&example("sporadic-timer.toml"));
    assert!(out.thread_named("handler").unwrap().stats.completed > 0);
}

#[test]
fn temporal_isolation_caps_the_runaway() {
    let out = simulate(&example("temporal-isolation.toml"));
    assert_eq!(out.total_misses(), 0);
    assert_eq!(out.thread_named("runaway").unwrap().stats.cpu_time, ms(40));
    assert_eq!((out.sets[0].name.as_str(), out.sets[0].cpu_time, out.sets[0].exhaustions), ("sandbox", ms(40), 20));
}

#[test]
fn sporadic_server_serves_the_requests() {
    let out = simulate(&example("servers.toml"));
    assert_eq!(out.total_misses(), 0);
    let requests = out.thread_named("requests").unwrap().stats;
    assert_eq!((requests.completed, requests.response_max), (2, Some(ms(6))));
    // Swapping the server for a deferrable one shortens the first response to 4 ms.
    let mut s = example("servers.toml");
    let b = s.sets[0].budget.as_mut().unwrap();
    b.server = Some(ServerKind::Deferrable);
    b.replenish = Replenishment::Periodic { period: ms(5) };
    let out = simulate(&s);
    assert_eq!(out.thread_named("requests").unwrap().stats.response_min, Some(ms(4)));
}

#[test]
fn miss_policies_differ() {
    let out = simulate(&example("miss-policies.toml"));
    let stats = |n: &str| out.thread_named(n).unwrap().stats;
    assert!(stats("continue").misses > 0);
    assert!(stats("abort").aborted > 0);
    assert!(stats("skip-next").skipped > 0);
}

mod cost_tests {
    use super::*;

    #[test]
    fn costs_reach_the_config_and_bad_ones_name_their_field() {
        let s = Scenario::parse("c.toml", "[runtime]\n[runtime.costs]\ncontext_switch = \"50us\"\nunlock = \"10us\"\n")
            .unwrap();
        assert_eq!(s.costs.context_switch, Duration::from_micros(50));
        assert_eq!(s.costs.unlock, Duration::from_micros(10));
        assert_eq!(s.costs.lock_acquired, Duration::ZERO);
        let err = Scenario::parse("c.toml", "[runtime]\n[runtime.costs]\nabort = \"fast\"\n").unwrap_err();
        let text = err.to_string();
        assert!(text.contains("c.toml:3") && text.contains("costs.abort"), "{text}");
    }
}

#[test]
fn admission_tables_are_checked_with_their_lines() {
    let edf = "[runtime]\ncpus = 2\npolicy = \"edf\"\n";
    let req = "[[request]]\nname = \"j\"\ntime = \"0ms\"\nwcet = \"1ms\"\ndeadline = \"2ms\"\n";
    let err = |text: &str| Scenario::parse("s.toml", text).unwrap_err().to_string();
    assert_eq!(err(&format!("{edf}{req}")), "s.toml:4: [[request]] needs an [admission] table");
    assert!(err(&format!("[admission]\n{req}")).contains("set policy = \"edf\""));
    assert!(err(&format!("{edf}[admission]\nengine = \"fast\"\n"))
        .contains("s.toml:5: [admission]: field `engine`: unknown engine"));
    let bad_cpu = format!("{edf}[admission]\n{req}target = 2\n");
    assert!(err(&bad_cpu).contains("s.toml:10: [[request]] \"j\": field `target`: CPU 2 does not exist"));
    let lonely = format!("{edf}[admission]\n{req}resubmit_wcet = \"1ms\"\n");
    assert!(err(&lonely).contains("`resubmit_wcet` needs `resubmit`"));
    let sc = Scenario::parse(
        "s.toml",
        &format!("{edf}[admission]\nengine = \"min-laxity\"\n{req}work = \"3ms\"\ncpu = 1\n"),
    )
    .unwrap();
    let def = sc.admission.unwrap();
    assert_eq!(def.engine, "min_laxity");
    let r = &def.requests[0];
    assert_eq!((r.cpu, r.target, r.wcet, r.deadline, r.work, r.line), (1, 1, ms(1), ms(2), ms(3), 6));
}

#[test]
fn the_admission_example_refuses_nacks_resubmits_and_stops_an_overrun() {
    let sc =
        Scenario::load(Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/ports-admission.toml"))).unwrap();
    let (rt, adm) = sc.runtime_with_admission::<tempi::clock::VirtualClock>(sc.config()).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.total_misses(), 0);
    let v: serde_json::Value = serde_json::from_str(&adm.unwrap().report_json(&out)).unwrap();
    let rows: Vec<(String, bool, u64, Option<u64>)> = v["admissions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["request"].as_str().unwrap().to_string(),
                a["accepted"].as_bool().unwrap(),
                a["idle"].as_u64().unwrap(),
                a["target_cpu"].as_u64(),
            )
        })
        .collect();
    let us_ns = |n: u64| n * 1_000;
    // The example reserves 50 µs per job (`job_overhead`): each job admitted before a request
    // takes 50 µs more of the idle time it finds, and probe's budget is 1.05 ms.
    assert_eq!(rows[3], ("replan".into(), false, us_ns(2_900), None));
    assert_eq!(rows[4], ("sim".into(), false, us_ns(1_950), Some(1)));
    assert_eq!(rows[5], ("sim".into(), true, us_ns(2_900), None));
    assert_eq!(v["admission_events"][0]["request"], "probe");
    assert_eq!(v["admission_events"][0]["time"], us_ns(13_050));
}

#[test]
fn a_request_the_run_ends_before_is_reported_not_tested() {
    let mut text = String::from("[runtime]\npolicy = \"edf\"\n[admission]\n");
    // The run ends at 10 ms (as `until = "10ms"` makes `tempi simulate` end it).
    for (name, t) in [("a", 0), ("b", 20), ("c", 30)] {
        text += &format!("[[request]]\nname = \"{name}\"\ntime = \"{t}ms\"\nwcet = \"1ms\"\ndeadline = \"5ms\"\n");
    }
    let sc = Scenario::parse("s.toml", &text).unwrap();
    let (rt, adm) = sc.runtime_with_admission::<tempi::clock::VirtualClock>(sc.config()).unwrap();
    let out = rt.run_until(tempi::Time::from_millis(10)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&adm.unwrap().report_json(&out)).unwrap();
    let admitted: Vec<&str> =
        v["admissions"].as_array().unwrap().iter().map(|a| a["request"].as_str().unwrap()).collect();
    assert_eq!(admitted, ["a"]);
    let events: Vec<(&str, u64, &str)> = v["admission_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["request"].as_str().unwrap(), e["time"].as_u64().unwrap(), e["kind"].as_str().unwrap()))
        .collect();
    let end = 10_000_000;
    assert_eq!(events, [("b", end, "not tested: the run ended first"), ("c", end, "not tested: the run ended first")]);
}

#[test]
fn a_request_the_run_ends_before_is_reported_even_under_a_name_already_decided() {
    let mut text = String::from("[runtime]\npolicy = \"edf\"\n[admission]\n");
    for t in [0, 20] {
        text += &format!("[[request]]\nname = \"a\"\ntime = \"{t}ms\"\nwcet = \"1ms\"\ndeadline = \"5ms\"\n");
    }
    let sc = Scenario::parse("s.toml", &text).unwrap();
    let (rt, adm) = sc.runtime_with_admission::<tempi::clock::VirtualClock>(sc.config()).unwrap();
    let out = rt.run_until(tempi::Time::from_millis(10)).unwrap();
    let v: serde_json::Value = serde_json::from_str(&adm.unwrap().report_json(&out)).unwrap();
    assert_eq!(v["admissions"].as_array().unwrap().len(), 1);
    let events = v["admission_events"].as_array().unwrap();
    assert_eq!(events.len(), 1, "{v}");
    assert_eq!(
        (&events[0]["request"], &events[0]["time"], &events[0]["kind"]),
        (&"a".into(), &10_000_000.into(), &"not tested: the run ended first".into())
    );
}

#[test]
fn a_request_that_cannot_be_tested_is_reported_and_the_next_ones_go_on() {
    let mut text = String::from("[runtime]\npolicy = \"edf\"\n[admission]\ncapacity = 1\n");
    for (name, t) in [("a", 0), ("b", 1), ("c", 20)] {
        text += &format!("[[request]]\nname = \"{name}\"\ntime = \"{t}ms\"\nwcet = \"1ms\"\ndeadline = \"10ms\"\n");
    }
    let sc = Scenario::parse("s.toml", &text).unwrap();
    let (rt, adm) = sc.runtime_with_admission::<tempi::clock::VirtualClock>(sc.config()).unwrap();
    let out = rt.run().unwrap();
    let v: serde_json::Value = serde_json::from_str(&adm.unwrap().report_json(&out)).unwrap();
    // "b" finds the only entry taken by "a" (due at 10 ms); "c", after it expired, is admitted.
    assert_eq!(v["admission_events"][0]["request"], "b");
    assert_eq!(v["admission_events"][0]["kind"], "error: admission engine full (1 entries)");
    let admitted: Vec<&str> =
        v["admissions"].as_array().unwrap().iter().map(|a| a["request"].as_str().unwrap()).collect();
    assert_eq!(admitted, ["a", "c"]);
}

#[test]
fn os_backed_threads() {
    let s = Scenario::parse(
        "s.toml",
        "[[thread]]\nname = \"a\"\nperiod = \"4ms\"\nwcet = \"1ms\"\nos_backed = true\n\
         [[thread]]\nname = \"b\"\nperiod = \"4ms\"\nwcet = \"1ms\"\n",
    )
    .unwrap();
    assert_eq!((s.threads[0].os_backed, s.threads[1].os_backed), (true, false));
    let e = Scenario::parse("s.toml", "[[thread]]\nname = \"a\"\nos_backed = \"yes\"\n").unwrap_err().to_string();
    assert!(e.contains("os_backed") || e.contains("boolean"), "{e}");
}

/// A guaranteed job whose WCET covers one 100 µs switch, and a best-effort thread that wakes
/// at 1 ms, under the collator with switches charged.
const COLLATOR_SWITCHES: &str = r#"
[runtime]
policy = "collator"
until = "10ms"

[runtime.costs]
context_switch = "100us"

[[thread]]
name = "g"
wcet = "2.1ms"
deadline = "4ms"
steps = [{ work = "2ms" }]

[[thread]]
name = "be"
steps = [{ sleep = "1ms" }, { work = "5ms" }]
"#;

#[test]
fn the_collator_by_name_is_told_the_scenarios_switch_cost() {
    let g = |out: &tempi::RunOutcome| {
        let s = out.thread_named("g").unwrap().stats;
        (s.misses, s.response_max)
    };
    let mut sc = Scenario::parse("switches.toml", COLLATOR_SWITCHES).unwrap();
    // g 0–1, be steals 1–2.7 (1.8 ms of slack less the switch back kept), g 2.7–3.9.
    let out = crate::simulate(&sc, Time::from_millis(10)).unwrap();
    assert_eq!(g(&out), (0, Some(Duration::from_micros(3900))));
    // Set again from the command line, the policy still knows the cost.
    sc.set_policy("collator").unwrap();
    assert_eq!(g(&crate::simulate(&sc, Time::from_millis(10)).unwrap()), (0, Some(Duration::from_micros(3900))));
    // Built without the cost, as the registry used to build it, the collator lets `be` steal
    // the switch back too: g misses its deadline, overruns its reservation and ends at 7.5 ms
    // as best effort.
    sc.scheduler = tempi::policy::sched::by_name("collator", None).unwrap();
    let out = crate::simulate(&sc, Time::from_millis(10)).unwrap();
    assert_eq!(g(&out), (1, Some(Duration::from_micros(7500))));
}
