//! Inputs a user gets wrong, end to end through the `tempi` binary: command-line overrides
//! meet the file's own checks, every input error exits 2 naming the file and line, output
//! paths are checked before the run, and valid but doubtful files get warnings on stderr.

use crate::common;
use common::{example, scratch, tempi, text};

/// Every per-CPU locking protocol given by `--lock-protocol` to the MSRP example, whose `bus`
/// is locked from both CPUs, is refused as the same protocol written in the file is: exit 2
/// at the lock step of the thread on the other CPU, for each command.
#[test]
fn lock_protocol_flag_meets_the_files_own_checks() {
    let dir = scratch("inputs", "lock_protocol_flag");
    let msrp = example("locks-msrp.toml");
    let at = format!(
        "{msrp}:55: thread \"control\": field `lock`: resource \"bus\" is on CPU 0 but the thread runs on CPU 1"
    );
    for protocol in ["bpi", "km", "bp", "pcp", "srp", "rcs"] {
        // The file saying it itself.
        let own = dir.join(format!("{protocol}.toml"));
        let body = std::fs::read_to_string(&msrp)
            .unwrap()
            .replace("protocol = \"msrp\"", &format!("protocol = \"{protocol}\""));
        std::fs::write(&own, body).unwrap();
        let out = tempi(&["simulate", own.to_str().unwrap()]);
        let own_err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{protocol}: {own_err}");
        assert!(own_err.contains(&format!("{}:55: thread \"control\": field `lock`", own.display())), "{own_err}");

        for command in ["simulate", "analyze", "run"] {
            let out = tempi(&[command, &msrp, "--lock-protocol", protocol]);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{command} {protocol}: {err}");
            assert_eq!(
                err,
                format!(
                    "tempi: {at} (set the resource's `cpu`); the protocol \"{protocol}\" comes from --lock-protocol\n"
                ),
                "{command} {protocol}"
            );
            assert!(out.stdout.is_empty(), "{command} {protocol}: {}", text(&out.stdout));
        }
    }
    // The protocol the file has is still fine, and an unknown one names the flag.
    assert!(tempi(&["simulate", &msrp, "--lock-protocol", "msrp", "--quiet"]).status.success());
    let out = tempi(&["analyze", &msrp, "--lock-protocol", "spin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!("tempi: {msrp}: --lock-protocol: unknown locking protocol \"spin\""))
    );
}

#[test]
fn run_with_a_global_policy_and_no_threads_is_an_input_error_at_the_policy_line() {
    let dir = scratch("inputs", "run_global");
    let file = dir.join("global.toml");
    std::fs::write(&file, "[runtime]\ncpus = 2\npolicy = \"global-edf\"\nuntil = \"10ms\"\n").unwrap();
    let out = tempi(&["run", file.to_str().unwrap(), "--no-pin"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "tempi: {}:3: [runtime]: field `policy`: policy \"global-edf\" is global (threads migrate between CPUs): it \
             runs in virtual time only (use `tempi simulate`, or a per-CPU policy such as fp or edf)\n",
            file.display()
        )
    );
    // From the flag: no line, and the flag is named.
    let plain = dir.join("plain.toml");
    std::fs::write(&plain, "[runtime]\ncpus = 2\nuntil = \"10ms\"\n").unwrap();
    let out = tempi(&["run", plain.to_str().unwrap(), "--policy", "global-edf", "--no-pin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr)
        .starts_with(&format!("tempi: {}: --policy: policy \"global-edf\" is global", plain.display())));
    // With threads too, before any is spawned.
    let out = tempi(&["run", &example("global-dhall.toml"), "--until", "10ms", "--no-pin"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr)
        .starts_with(&format!("tempi: {}:18: [runtime]: field `policy`", example("global-dhall.toml"))));
}

#[test]
fn output_paths_are_checked_before_the_run_and_no_directory_is_created() {
    let dir = scratch("inputs", "output_paths");
    let rm = example("rm-textbook.toml");
    let missing = dir.join("no").join("such");
    let gantt = missing.join("g.svg");
    let out = tempi(&["simulate", &rm, "--gantt", gantt.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "tempi: --gantt {}: directory {} does not exist (tempi does not create directories)\n",
            gantt.display(),
            missing.display()
        )
    );
    assert!(!dir.join("no").exists(), "a directory was created");
    assert!(out.stdout.is_empty(), "the run went ahead: {}", text(&out.stdout));

    // A report onto a directory.
    let out = tempi(&["simulate", &rm, "--report", dir.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("tempi: --report {}: is a directory; give the name of a file to write\n", dir.display())
    );

    // A file in place of a directory.
    let file = dir.join("plain");
    std::fs::write(&file, "x").unwrap();
    let under = file.join("r.json");
    let out = tempi(&["run", &rm, "--until", "1ms", "--no-pin", "--trace", under.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("tempi: --trace {}: {} is not a directory\n", under.display(), file.display())
    );

    // Two outputs on one file.
    let same = dir.join("same.json");
    let out = tempi(&["simulate", &rm, "--report", same.to_str().unwrap(), "--trace", same.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!("tempi: --report and --trace both name {}: give each output its own file\n", same.display())
    );
    assert!(!same.exists());
}

#[test]
fn doubtful_timing_gets_warnings_on_stderr_and_still_runs() {
    let dir = scratch("inputs", "warnings");
    let file = dir.join("w.toml");
    std::fs::write(
        &file,
        "[runtime]\nuntil = \"10ms\"\n[[thread]]\nname = \"t\"\nperiod = 10\nwcet = \"1ms\"\n\
         [[thread]]\nname = \"idle\"\nperiod = \"5ms\"\n\
         [[thread]]\nname = \"o\"\nperiod = \"5ms\"\nwcet = \"4ms\"\nsteps = [{ work = \"2ms..4ms\" }, { work = \"2ms\" }]\n\
         [[thread]]\nname = \"meant\"\nperiod = \"5ms\"\nwcet = \"6ms\"\nmiss_policy = \"abort\"\nsteps = [{ work = \"1ms..6ms\" }]\n\
         [[thread]]\nname = \"over\"\nperiod = \"5ms\"\nwcet = \"6ms\"\nsteps = [{ work = \"1ms..6ms\" }]\n",
    )
    .unwrap();
    let f = file.display();
    let out = tempi(&["simulate", file.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    let expected = [
        format!(
            "tempi: warning: {f}:5: thread \"t\": field `period`: the bare integer 10 is read as 10 ns (a bare integer \
             is nanoseconds); write it with a unit, e.g. \"10ms\" or \"10ns\", to say which is meant"
        ),
        format!(
            "tempi: warning: {f}:6: thread \"t\": every job works at least 1ms, longer than its period 10ns: no job can \
             meet its deadline"
        ),
        format!(
            "tempi: warning: {f}:8: thread \"idle\": a periodic thread with no work: its jobs complete at once (give \
             `wcet` or `work` steps)"
        ),
        format!(
            "tempi: warning: {f}:13: thread \"o\": the steps can work 6ms, more than the declared wcet 4ms: the \
             analysis and the policies trust the declared figure"
        ),
        format!(
            "tempi: warning: {f}:24: thread \"over\": wcet 6ms is longer than its period 5ms: a job that works its \
             wcet misses its deadline (set `miss_policy` if the overload is meant)"
        ),
    ];
    assert_eq!(text(&out.stderr).lines().collect::<Vec<_>>(), expected);
    // A bare number in a string is nanoseconds too, and warned about alike.
    let quoted = dir.join("quoted.toml");
    std::fs::write(&quoted, "[[thread]]\nname = \"q\"\nperiod = \"20\"\nwcet = \"5ns\"\nmax_jobs = 1\n").unwrap();
    let out = tempi(&["simulate", quoted.to_str().unwrap(), "--quiet"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        text(&out.stderr),
        format!(
            "tempi: warning: {}:3: thread \"q\": field `period`: the bare integer 20 is read as 20 ns (a bare integer \
             is nanoseconds); write it with a unit, e.g. \"20ms\" or \"20ns\", to say which is meant\n",
            quoted.display()
        )
    );
    // `analyze` and `run` warn alike.
    let out = tempi(&["analyze", file.to_str().unwrap()]);
    assert_eq!(text(&out.stderr).lines().filter(|l| l.starts_with("tempi: warning: ")).count(), 5);
}

#[test]
fn no_shipped_example_warns() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 18, "{names:?}");
    for path in names {
        let out = tempi(&["simulate", path.to_str().unwrap(), "--until", "1ms", "--quiet"]);
        assert!(out.status.success(), "{}: {}", path.display(), text(&out.stderr));
        let err = text(&out.stderr);
        assert!(!err.contains("warning"), "{}: {err}", path.display());
    }
}

#[test]
fn typos_get_a_did_you_mean() {
    let dir = scratch("inputs", "typos");
    let cases = [
        ("[[thread]]\nname = \"a\"\nperod = \"4ms\"\n", 3, "unknown field `perod`", "; did you mean `period`?"),
        (
            "[[thread]]\nname = \"a\"\nkind = \"sporadc\"\n",
            3,
            "unknown variant `sporadc`",
            "; did you mean `sporadic`?",
        ),
        ("[runtime]\nuntil = \"10sec\"\n", 2, "invalid duration \"10sec\"", ": did you mean \"10s\"?"),
        (
            "[[thread]]\nname = \"a\"\nperiod = \"10 ms\"\n",
            3,
            "invalid duration \"10 ms\"",
            ": did you mean \"10ms\" (no space)?",
        ),
    ];
    for (i, (body, line, what, hint)) in cases.iter().enumerate() {
        let file = dir.join(format!("{i}.toml"));
        std::fs::write(&file, body).unwrap();
        let out = tempi(&["simulate", file.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.starts_with(&format!("tempi: {}:{line}: ", file.display())), "{err}");
        assert!(err.contains(what), "{err}");
        assert!(err.trim_end().ends_with(hint), "{err}");
    }
    // A key nothing resembles gets the list only.
    let file = dir.join("far.toml");
    std::fs::write(&file, "[[thread]]\nname = \"a\"\nxyzzy = 1\n").unwrap();
    let err = text(&tempi(&["simulate", file.to_str().unwrap()]).stderr);
    assert!(err.contains("unknown field `xyzzy`, expected one of") && !err.contains("did you mean"), "{err}");
}

/// Malformed `[[group]]` tables are refused before anything runs, at their line.
#[test]
fn malformed_groups_exit_2_at_their_line() {
    let dir = scratch("inputs", "groups");
    let head = "[[group]]\nname = \"g\"\ndeadline = \"10ms\"\n[[group.thread]]\nname = \"a\"\n";
    let cases = [
        (
            "after = [\"a\"]\n[[group.thread.task]]\nwcet = \"1ms\"\n",
            6,
            "group \"g\": thread \"a\": field `after`: a thread cannot come after itself",
        ),
        (
            "after = [\"zz\"]\n[[group.thread.task]]\nwcet = \"1ms\"\n",
            6,
            "group \"g\": thread \"a\": field `after`: unknown predecessor \"zz\" (not a thread of this group)",
        ),
        ("", 5, "group \"g\": thread \"a\": needs at least one [[group.thread.task]]"),
        (
            "[[group.thread.task]]\nwcet = \"1ms\"\nresources = [{ name = \"bus\" }]\n",
            8,
            "group \"g\": thread \"a\": field `resources`: unknown resource \"bus\" (declare it in [planner] resources; \
             known: none declared)",
        ),
    ];
    for (i, (rest, line, message)) in cases.iter().enumerate() {
        let file = dir.join(format!("{i}.toml"));
        std::fs::write(&file, format!("{head}{rest}")).unwrap();
        for command in ["simulate", "plan"] {
            let out = tempi(&[command, file.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(2), "{command}: {}", text(&out.stderr));
            assert_eq!(text(&out.stderr), format!("tempi: {}:{line}: {message}\n", file.display()), "{command}");
        }
    }
}
