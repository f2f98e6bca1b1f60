//! A Spring executor belongs to the runtime it was made on: another runtime, and every thread
//! of another runtime, is refused with `Error::ForeignRuntime` at every entry point, and the
//! executor's plan, records and events are left as they were.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tempi::policy::admit::planner::{PlannerConfig, TaskRequest};
use tempi::spring::{GroupSpec, GroupThread, Spring, SpringSpec, TaskOutcome, Ticket};
use tempi::{Error, Runtime, ThreadSpec, Time};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn group(name: &str) -> GroupSpec {
    GroupSpec::new(name, Time::ZERO, Time::from_millis(20))
        .thread(GroupThread::new(format!("{name}-t")).work(TaskRequest::new(ms(1)), ms(1)))
}

#[test]
fn foreign_spring_every_entry_point_refuses_another_runtime() {
    let mut a = Runtime::simulated(1);
    let planner = PlannerConfig { planner_wcet: ms(1), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
    let spring = Spring::new(&mut a, SpringSpec::new(planner)).unwrap();
    spring.add_group(&mut a, group("g")).unwrap();
    let ticket = Arc::new(Mutex::new(None::<Ticket>));
    let (s, t) = (spring.clone(), ticket.clone());
    a.spawn(ThreadSpec::new("app"), move |cx| *t.lock().unwrap() = Some(s.spawn_async(cx, group("async")).unwrap()))
        .unwrap();

    // Declared on another runtime: refused, nothing queued.
    let mut b = Runtime::simulated(1);
    assert_eq!(spring.add_group(&mut b, group("declared-on-b")), Err(Error::ForeignRuntime));

    a.run().unwrap();
    let ticket = ticket.lock().unwrap().expect("the async request was made");
    let id = spring.decisions()[0].id.expect("g was accepted");
    let (tasks, decisions, events) = (spring.tasks(), spring.decisions().len(), spring.events());
    assert_eq!(decisions, 2);
    assert!(tasks.iter().all(|t| t.outcome == TaskOutcome::Completed));

    // From a thread of B.
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (s, log) = (spring.clone(), seen.clone());
    b.spawn(ThreadSpec::new("intruder"), move |cx| {
        let mut log = log.lock().unwrap();
        log.push(("spawn_sync", s.spawn_sync(cx, group("h")).err()));
        log.push(("spawn_async", s.spawn_async(cx, group("h")).err()));
        log.push(("status", s.status(cx, ticket).err()));
        log.push(("kill", s.kill(cx, "g").err()));
        log.push(("kill_id", s.kill_id(cx, id).err()));
    })
    .unwrap();
    let out = b.run().unwrap();
    let refused = Some(Error::ForeignRuntime);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            ("spawn_sync", refused.clone()),
            ("spawn_async", refused.clone()),
            ("status", refused.clone()),
            ("kill", refused.clone()),
            ("kill_id", refused)
        ]
    );
    // Nothing was spawned into B, and A's plan, records and events are as they were.
    assert_eq!(out.threads.len(), 1);
    assert_eq!(spring.decisions().len(), decisions);
    assert_eq!(spring.tasks(), tasks);
    assert_eq!(spring.events(), events);
}

/// Two runtimes running the same program number their requests alike: B's executor, asked
/// by B's own thread about A's ticket, refuses it rather than answer for its own request.
#[test]
fn foreign_spring_a_ticket_of_another_runtime_is_refused() {
    fn runtime_with_spring() -> (Runtime<tempi::clock::VirtualClock>, Spring, Arc<Mutex<Option<Ticket>>>) {
        let mut rt = Runtime::simulated(1);
        let planner = PlannerConfig { planner_wcet: ms(1), safety: Duration::ZERO, ..PlannerConfig::new(1, 0) };
        let spring = Spring::new(&mut rt, SpringSpec::new(planner)).unwrap();
        (rt, spring, Arc::new(Mutex::new(None)))
    }
    let (mut a, a_spring, a_ticket) = runtime_with_spring();
    let (s, t) = (a_spring.clone(), a_ticket.clone());
    a.spawn(ThreadSpec::new("app"), move |cx| *t.lock().unwrap() = Some(s.spawn_async(cx, group("g")).unwrap()))
        .unwrap();
    a.run().unwrap();
    let a_ticket = a_ticket.lock().unwrap().expect("asked");

    let (mut b, b_spring, _) = runtime_with_spring();
    let seen = Arc::new(Mutex::new(None));
    let (s, log) = (b_spring.clone(), seen.clone());
    b.spawn(ThreadSpec::new("app"), move |cx| {
        let own = s.spawn_async(cx, group("g")).unwrap();
        cx.sleep(ms(2));
        *log.lock().unwrap() = Some((own == a_ticket, s.status(cx, a_ticket), s.status(cx, own)));
    })
    .unwrap();
    b.run().unwrap();
    let seen = seen.lock().unwrap().take().unwrap();
    assert_eq!(seen, (false, Err(Error::ForeignRuntime), Ok(tempi::spring::Status::Yes)));
}
