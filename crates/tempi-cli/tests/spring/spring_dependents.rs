//! Scenario files: dependents of dependents are accepted, and a chain of dependents that
//! loops is refused with the loop named; an unplanned thread may not take the planned band.

fn file(extra: &str) -> String {
    let g = |name: &str, deps: &str| {
        format!(
            "[[group]]\nname = \"{name}\"\ndeadline = \"1s\"\n{deps}\n[[group.thread]]\nname = \"t\"\n\
             [[group.thread.task]]\nwcet = \"2ms\"\n"
        )
    };
    format!("{}{}{}", g("a", "dependent = [\"b\"]"), g("b", extra), g("c", "spawned = true"))
}

#[test]
fn a_dependent_may_have_dependents() {
    let sc = tempi_cli::parse("s.toml", &file("spawned = true\ndependent = [\"c\"]")).unwrap();
    let mut rt = sc.runtime::<tempi::clock::VirtualClock>(sc.config()).unwrap();
    let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
    rt.run().unwrap();
    let groups: Vec<String> = spring.decisions().iter().map(|d| d.group.clone()).collect();
    assert_eq!(groups, ["a", "b", "c"]);
    assert!(spring.decisions().iter().all(|d| d.outcome.decision.is_accepted()));
    assert_eq!(spring.tasks().len(), 3);
}

#[test]
fn a_loop_of_dependents_is_refused() {
    let err = tempi_cli::parse("s.toml", &file("spawned = true\ndependent = [\"a\"]")).err().unwrap();
    assert!(err.to_string().contains("dependent groups form a cycle: a -> b -> a"), "{err}");
}

#[test]
fn an_unplanned_thread_in_the_planned_band_is_refused_clearly() {
    let text = format!(
        "[[thread]]\nname = \"rogue\"\npriority = {}\nsteps = [{{ work = \"1ms\" }}]\nkind = \"oneshot\"\n{}",
        i32::MAX - 1,
        file("spawned = true")
    );
    let sc = tempi_cli::parse("s.toml", &text).unwrap();
    let mut rt = sc.runtime::<tempi::clock::VirtualClock>(sc.config()).unwrap();
    let err = sc.populate_groups(&mut rt).err().unwrap();
    assert!(err.to_string().contains("thread \"rogue\": priority 2147483646 is in the band reserved"), "{err}");
    assert_eq!(err.line, Some(1));
}
