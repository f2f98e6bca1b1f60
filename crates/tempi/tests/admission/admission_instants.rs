//! What happens at one instant when a budget runs out, in virtual time: a job killed by its
//! budget at `t` ends at `t` — before a request or a preemption at `t`, on its own CPU or
//! another — and frees its `max_live` slot then; a job its budget ends at its deadline did not
//! miss it, for admitted jobs and plain threads alike; a budget refilled at the instant it runs
//! out is not exhausted.

use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempi::admission::{Admission, AdmissionSpec, Decision, JobEventKind, JobRequest};
use tempi::clock::VirtualClock;
use tempi::policy::budget::{Kill, Suspend};
use tempi::sets::{Budget, Replenishment};
use tempi::trace::report::{jobs, JobRecord};
use tempi::trace::JobEnd;
use tempi::{Ctx, RunOutcome, Runtime, ThreadOutcome, ThreadSpec, Time, TimerSpec};

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn at(n: u64) -> Time {
    Time::from_millis(n)
}

fn edf(cpus: usize) -> Runtime<VirtualClock> {
    let mut rt = Runtime::simulated(cpus);
    rt.set_scheduler(|| Box::new(tempi::policy::sched::Edf::new()));
    rt
}

/// A sporadic thread on `cpu` with a 1 ns deadline whose job `k` runs `body(cx, k)` at
/// `times[k]` ms: it runs ahead of every admitted job and takes no time.
fn submitter(
    rt: &mut Runtime<VirtualClock>,
    cpu: usize,
    times: &[u64],
    mut body: impl FnMut(&Ctx<'_>, usize) + Send + 'static,
) {
    let n = times.len();
    let spec = ThreadSpec::new(format!("submit{cpu}"))
        .cpu(cpu)
        .sporadic(Duration::ZERO)
        .deadline(Duration::from_nanos(1))
        .max_jobs(n as u32)
        .release_queue(n);
    let s = rt.spawn(spec, move |cx| body(cx, cx.job().number as usize)).unwrap();
    for &t in times {
        rt.add_timer(TimerSpec::at(at(t)).cpu(cpu), move |ev| ev.release(s).unwrap()).unwrap();
    }
}

/// A job of `wcet` ms due at `deadline` ms (absolute) that needs `work` ms.
fn job(name: &str, wcet: u64, deadline: u64, work: u64) -> JobRequest {
    JobRequest::new(name, ms(wcet), at(deadline), move |cx| cx.work(ms(work)))
}

/// The only job of the thread named `name`.
fn job_of(out: &RunOutcome, name: &str) -> JobRecord {
    let mut of: Vec<JobRecord> = jobs(out).into_iter().filter(|j| j.thread == name).collect();
    assert_eq!(of.len(), 1, "{name}: {of:?}");
    of.remove(0)
}

/// `(request, time, accepted)` of every decision, in order.
fn decided(decisions: &[Decision]) -> Vec<(String, Time, bool)> {
    decisions.iter().map(|d| (d.request.to_string(), d.time, d.accepted)).collect()
}

/// The scenario of a report: "a" overruns its 1 ms budget at 1 ms, the instant "b" is
/// admitted and preempts it. "a" is killed at 1 ms, so only "b" is alive at 2 ms and "c" is
/// admitted under `max_live = 2`.
#[test]
fn a_job_preempted_at_the_instant_its_budget_runs_out_ends_then_and_frees_its_slot() {
    let mut rt = edf(1);
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0).max_live(2)).unwrap();
    let a = adm.clone();
    let refusals: Arc<Mutex<Vec<String>>> = Arc::default();
    let seen = refusals.clone();
    submitter(&mut rt, 0, &[0, 1, 2], move |cx, k| {
        let request = [job("a", 1, 10, 2), job("b", 2, 4, 2), job("c", 1, 7, 1)];
        let request = request.into_iter().nth(k).unwrap();
        if let Err(e) = a.admit(cx, request) {
            seen.lock().unwrap().push(e.to_string());
        }
    });
    let out = rt.run().unwrap();
    assert_eq!(*refusals.lock().unwrap(), Vec::<String>::new());
    let ja = job_of(&out, "a");
    assert_eq!((ja.finish, ja.aborted, ja.ended_by, ja.missed), (Some(at(1)), true, Some(JobEnd::Killed), false));
    let a_thread = out.thread_named("a").unwrap();
    assert_eq!((a_thread.outcome.clone(), a_thread.stats.cpu_time), (Some(ThreadOutcome::Killed), ms(1)));
    assert_eq!(
        decided(&adm.decisions()),
        [("a".into(), at(0), true), ("b".into(), at(1), true), ("c".into(), at(2), true)]
    );
    let events = adm.job_events();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((&*events[0].request, events[0].at, &events[0].kind), ("a", at(1), &JobEventKind::Overrun));
    // b runs 1–3; c, admitted at 2 and due at 7, after b's 4, runs 3–4.
    assert_eq!(job_of(&out, "b").finish, Some(at(3)));
    assert_eq!(job_of(&out, "c").finish, Some(at(4)));
    assert_eq!(out.total_misses(), 0);
}

/// With one job alive at most, a request at the instant the live job's budget kills it finds
/// the slot free, as it does when the job completes at that instant.
#[test]
fn a_request_at_the_instant_a_budget_kills_the_live_job_finds_its_slot_free() {
    for work in [2, 5] {
        let mut rt = edf(1);
        let adm = Admission::new(&mut rt, AdmissionSpec::new(0).max_live(1)).unwrap();
        let a = adm.clone();
        let answers: Arc<Mutex<Vec<Result<(), String>>>> = Arc::default();
        let seen = answers.clone();
        submitter(&mut rt, 0, &[0, 2], move |cx, k| {
            let request = if k == 0 { job("j", 2, 10, work) } else { job("k", 1, 7, 1) };
            seen.lock().unwrap().push(a.admit(cx, request).map(|_| ()).map_err(|e| e.to_string()));
        });
        let out = rt.run().unwrap();
        assert_eq!(*answers.lock().unwrap(), [Ok(()), Ok(())], "work {work}");
        let j = job_of(&out, "j");
        assert_eq!((j.finish, j.aborted), (Some(at(2)), work > 2), "work {work}");
        assert_eq!(job_of(&out, "k").finish, Some(at(3)), "work {work}");
    }
}

/// The same across CPUs: a submitter of CPU 0 asks CPU 1 at the instant CPU 1's only live job
/// is killed by its budget. The kill is carried out before any CPU runs a thread at that
/// instant, whatever the CPUs' order.
#[test]
fn a_request_from_another_cpu_at_the_kill_instant_finds_the_slot_free() {
    let mut rt = edf(2);
    let adm1 = Admission::new(&mut rt, AdmissionSpec::new(1).max_live(1)).unwrap();
    let (local, remote) = (adm1.clone(), adm1.clone());
    let answers: Arc<Mutex<Vec<Result<(), String>>>> = Arc::default();
    let seen = answers.clone();
    submitter(&mut rt, 1, &[0], move |cx, _| {
        local.admit(cx, job("j", 2, 10, 5)).unwrap();
    });
    submitter(&mut rt, 0, &[2], move |cx, _| {
        seen.lock().unwrap().push(remote.admit(cx, job("k", 1, 7, 1)).map(|_| ()).map_err(|e| e.to_string()));
    });
    let out = rt.run().unwrap();
    assert_eq!(*answers.lock().unwrap(), [Ok(())]);
    assert_eq!(job_of(&out, "j").finish, Some(at(2)));
    assert_eq!(job_of(&out, "k").finish, Some(at(3)));
    assert_eq!(out.thread_named("j").unwrap().outcome, Some(ThreadOutcome::Killed));
}

/// A job its budget kills at its deadline was stopped by its own budget at that instant: it is
/// no miss, as a job killed earlier or one that completes at its deadline is none.
#[test]
fn an_admitted_job_killed_by_its_budget_at_its_deadline_has_not_missed() {
    let mut rt = edf(1);
    let adm = Admission::new(&mut rt, AdmissionSpec::new(0)).unwrap();
    let a = adm.clone();
    // "edge" has no laxity: its 2 ms budget runs out at its deadline. "exact" (due 6) runs
    // 2–6 and completes at its deadline; "early" (due 9) runs next and is killed at 7.
    submitter(&mut rt, 0, &[0, 2], move |cx, k| {
        if k == 0 {
            a.admit(cx, job("edge", 2, 2, 3)).unwrap();
        } else {
            a.admit(cx, job("early", 1, 9, 4)).unwrap();
            a.admit(cx, job("exact", 4, 6, 4)).unwrap();
        }
    });
    let out = rt.run().unwrap();
    let edge = job_of(&out, "edge");
    assert_eq!((edge.finish, edge.aborted, edge.missed), (Some(at(2)), true, false));
    let early = job_of(&out, "early");
    assert_eq!((early.finish, early.aborted, early.missed), (Some(at(7)), true, false));
    let exact = job_of(&out, "exact");
    assert_eq!((exact.finish, exact.aborted, exact.missed), (Some(at(6)), false, false));
    assert_eq!(out.total_misses(), 0);
    let overruns: Vec<(String, Time)> = adm.job_events().iter().map(|e| (e.request.to_string(), e.at)).collect();
    assert_eq!(overruns, [("edge".into(), at(2)), ("early".into(), at(7))]);
}

/// The kernel's rule, for any thread: a job that a `kill` budget ends at its deadline has not
/// missed it; one whose budget only suspends it at its deadline has (its work is still
/// outstanding).
#[test]
fn a_plain_thread_killed_by_its_budget_at_its_deadline_has_not_missed() {
    for kill in [true, false] {
        let mut rt = edf(1);
        let set = rt.create_set("cap", 0).unwrap();
        let budget = Budget::new(ms(2));
        let budget = if kill { budget.action(Kill) } else { budget.action(Suspend) };
        rt.set_budget(set, budget).unwrap();
        let t = rt.spawn(ThreadSpec::new("t").deadline(ms(2)), |cx| cx.work(ms(3))).unwrap();
        rt.add_to_set(set, t).unwrap();
        let out = rt.run_until(at(20)).unwrap();
        let job = job_of(&out, "t");
        if kill {
            assert_eq!((job.finish, job.missed, job.ended_by), (Some(at(2)), false, Some(JobEnd::Killed)));
            assert_eq!(out.total_misses(), 0);
        } else {
            assert_eq!((job.finish, job.missed), (None, true));
            assert_eq!(out.total_misses(), 1);
        }
    }
}

/// A periodic budget as large as its period, used to the last nanosecond at each
/// replenishment: the refill due at the instant it would run out comes first, so it never runs
/// out and its `kill` never strikes. The job's deadline at that instant is a miss: it goes on.
#[test]
fn a_budget_refilled_at_the_instant_it_runs_out_is_not_exhausted() {
    let mut rt = edf(1);
    let set = rt.create_set("full", 0).unwrap();
    let budget = Budget::new(ms(10)).replenish(Replenishment::Periodic { period: ms(10) }).action(Kill);
    rt.set_budget(set, budget).unwrap();
    let t = rt.spawn(ThreadSpec::new("t").deadline(ms(10)), |cx| cx.work(ms(25))).unwrap();
    rt.add_to_set(set, t).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(out.thread_named("t").unwrap().outcome, Some(ThreadOutcome::Completed));
    assert_eq!(out.sets[0].exhaustions, 0);
    let job = job_of(&out, "t");
    assert_eq!((job.finish, job.missed, job.aborted), (Some(at(25)), true, false));
    assert_eq!(out.total_misses(), 1);
}
