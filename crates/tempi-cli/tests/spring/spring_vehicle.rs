//! The Spring vehicle (examples/spring-vehicle.toml): `react` spawns a turn asynchronously
//! and has `halt` guaranteed with it as a dependent; a guaranteed turn kills `halt`. Under
//! light and heavy load, exactly one of the two actions runs, and `halt` is guaranteed
//! whenever `react` runs.

use tempi::clock::VirtualClock;
use tempi::spring::{Spring, TaskOutcome};

const VEHICLE: &str = include_str!("../../../../examples/spring-vehicle.toml");

/// Two long convoy threads released with `react`: after them no turn fits in its 2 s.
const CONVOY: &str = r#"
[[group]]
name = "convoy"
deadline = "2.2s"
  [[group.thread]]
  name = "a"
    [[group.thread.task]]
    wcet = "1900ms"
  [[group.thread]]
  name = "b"
    [[group.thread.task]]
    wcet = "1900ms"
"#;

fn run(text: &str) -> Spring {
    let sc = tempi_cli::parse("vehicle.toml", text).unwrap();
    let mut rt = sc.runtime::<VirtualClock>(sc.config().trace_capacity(0)).unwrap();
    let spring = sc.populate_groups(&mut rt).unwrap().unwrap();
    rt.run_until(tempi::Time::from_secs(5)).unwrap();
    spring
}

fn accepted(spring: &Spring, group: &str) -> bool {
    spring.decisions().iter().any(|d| d.group == group && d.outcome.decision.is_accepted())
}

/// Whether every task of `group` completed (and it has some).
fn ran(spring: &Spring, group: &str) -> bool {
    let tasks: Vec<_> = spring.tasks().into_iter().filter(|t| t.group == group).collect();
    !tasks.is_empty() && tasks.iter().all(|t| t.outcome == TaskOutcome::Completed)
}

/// Whether no task of `group` ran at all.
fn never_ran(spring: &Spring, group: &str) -> bool {
    spring.tasks().iter().filter(|t| t.group == group).all(|t| t.actual_start.is_none())
}

fn check(spring: &Spring, turn: &str) -> bool {
    assert!(ran(spring, "react"), "react runs in every variant");
    assert!(accepted(spring, "halt"), "halt is guaranteed with react");
    let turned = ran(spring, turn);
    let halted = ran(spring, "halt");
    assert!(turned != halted, "exactly one action runs: turn {turned}, halt {halted}");
    assert!(if turned { never_ran(spring, "halt") } else { never_ran(spring, turn) });
    assert!(spring.events().is_empty(), "{:?}", spring.events());
    turned
}

#[test]
fn light_load_turns_and_withdraws_halt() {
    let spring = run(VEHICLE);
    assert!(check(&spring, "turn-left"));
    // The turn was asked for as `decide` started (60 ms) and answered after the planner's
    // modelled time; its first task starts at the 70 ms cutoff and kills halt there.
    let d = spring.decisions().into_iter().find(|d| d.group == "turn-left").unwrap();
    assert_eq!(d.requested, tempi::Time::from_millis(60));
    assert_eq!(d.outcome.cutoff, tempi::Time::from_millis(70));
    let halt = spring.tasks().into_iter().find(|t| t.group == "halt").unwrap();
    assert_eq!(halt.outcome, TaskOutcome::Killed);
    assert!(!spring.planner().plan().tasks().any(|t| t.start >= tempi::Time::from_millis(570)));
}

#[test]
fn heavy_load_refuses_the_turn_and_halts() {
    let spring = run(&format!("{VEHICLE}{CONVOY}"));
    assert!(accepted(&spring, "convoy"));
    assert!(!accepted(&spring, "turn-left"));
    assert!(!check(&spring, "turn-left"));
    let halt = spring.tasks().into_iter().find(|t| t.group == "halt").unwrap();
    assert_eq!(
        (halt.actual_start, halt.actual_finish),
        (Some(tempi::Time::from_secs(2)), Some(tempi::Time::from_millis(2300)))
    );
}

#[test]
fn the_other_turn_behaves_the_same() {
    let right = VEHICLE.replace(
        r#"spawn = [{ group = "turn-left", mode = "async" }]"#,
        r#"spawn = [{ group = "turn-right", mode = "sync" }]"#,
    );
    assert_ne!(right, VEHICLE);
    assert!(check(&run(&right), "turn-right"));
    assert!(!check(&run(&format!("{right}{CONVOY}")), "turn-right"));
}

#[test]
fn a_react_that_cannot_have_halt_is_refused_whole() {
    // halt cannot fit in its window: react is refused with it, and nothing runs.
    let text = VEHICLE.replace("wcet = \"300ms\"", "wcet = \"2500ms\"");
    let spring = run(&text);
    assert!(!accepted(&spring, "react") && !accepted(&spring, "halt"));
    assert!(spring.tasks().is_empty());
}
