//! Global EDF and global fixed priority in virtual time: exact timelines with migrations,
//! the Dhall effect against the same set partitioned, and what a global policy refuses.

use crate::common;

use std::time::Duration;

use common::{cpu_segments, markers, ms, us};
use tempi::analysis::{CpuTest, Fit, SortKey, TaskSet};
use tempi::clock::VirtualClock;
use tempi::policy::sched::{Edf, GlobalEdf, GlobalFp};
use tempi::sync::{LockSpec, SemSpec};
use tempi::trace::TraceKind;
use tempi::{Error, GlobalRefusal, Runtime, ThreadSpec, Time};

/// `m` light tasks (C = 0.2 ms, T = D = 10 ms) and one heavy task (C = 10 ms, T = D =
/// 10.1 ms): U = 0.02 m + 0.990.
fn dhall_specs(m: usize) -> Vec<ThreadSpec> {
    let mut specs: Vec<ThreadSpec> =
        (0..m).map(|i| ThreadSpec::new(format!("light{i}")).periodic(ms(10)).wcet(us(200)).cpu(i)).collect();
    specs.push(ThreadSpec::new("heavy").periodic(us(10_100)).wcet(ms(10)));
    specs
}

fn spawn_all(rt: &mut Runtime<VirtualClock>, specs: Vec<ThreadSpec>) {
    for s in specs {
        let c = s.wcet_value();
        rt.spawn(s, move |cx| cx.work(c)).unwrap();
    }
}

fn dhall_global(m: usize) -> tempi::RunOutcome {
    let mut rt = Runtime::simulated(m);
    rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    spawn_all(&mut rt, dhall_specs(m));
    rt.run_until(Time::from_millis(20)).unwrap()
}

#[test]
fn global_edf_dhall_effect_misses_the_heavy_deadline() {
    for m in [2, 3, 4] {
        let out = dhall_global(m);
        // The light jobs (deadline 10 ms) take every CPU first; the heavy job (deadline
        // 10.1 ms) starts at 0.2 ms and needs 10 ms: it misses at 10.1 ms, ends at 10.2 ms.
        let misses = markers(&out, TraceKind::Miss);
        assert_eq!(misses[0], "heavy#0@10.1", "m = {m}");
        // Its second job (deadline 20.2 ms) ends beyond the run.
        assert_eq!(out.thread_named("heavy").unwrap().stats.misses, 1, "m = {m}");
        let heavy = tempi::trace::report::jobs(&out).into_iter().find(|j| j.thread == "heavy").unwrap();
        assert_eq!((heavy.start, heavy.finish), (Some(Time::from_micros(200)), Some(Time::from_micros(10_200))));
        for i in 0..m {
            assert_eq!(out.thread_named(&format!("light{i}")).unwrap().stats.misses, 0, "m = {m}");
        }
        let u: f64 = m as f64 * 0.02 + 10.0 / 10.1;
        assert!(u < 1.1, "total utilisation {u} is barely above 1 on {m} CPUs");
    }
}

#[test]
fn global_edf_dhall_exact_timeline_and_migrations() {
    let out = dhall_global(2);
    // The lights on both CPUs, then the heavy job on CPU 0 (CPU 0 picks first). At 10 the
    // lights' second jobs come: light0 takes the idle CPU 1 (a migration); at 10.2 CPU 0 is
    // free and light1 (deadline 20) goes before heavy's second job (20.2), which takes CPU 1:
    // two more migrations.
    assert_eq!(
        cpu_segments(&out),
        [
            "cpu0/light0:0-0.2",
            "cpu1/light1:0-0.2",
            "cpu0/heavy:0.2-10.2",
            "cpu1/light0:10-10.2",
            "cpu0/light1:10.2-10.4",
        ]
    );
    assert_eq!(markers(&out, TraceKind::Miss), ["heavy#0@10.1"]);
    let moved: Vec<u64> = ["light0", "light1", "heavy"].map(|n| out.thread_named(n).unwrap().stats.migrations).into();
    assert_eq!(moved, [1, 1, 1]);
    assert_eq!(out.migrations(), 3);
    // The heavy job's CPU time is whole although its jobs ran on both CPUs.
    assert_eq!(out.thread_named("heavy").unwrap().stats.cpu_time, ms(10) + ms(9) + us(800));
}

#[test]
fn dhall_set_partitioned_runs_without_misses() {
    for m in [2, 3, 4] {
        let mut specs = dhall_specs(m);
        let ts = TaskSet::from_specs(&specs).unwrap();
        let p = ts.partition(m, Fit::First, SortKey::Utilisation, CpuTest::Edf).unwrap();
        p.apply(&mut specs);
        let heavy_cpu = specs.last().unwrap().cpu_index();
        assert!(specs[..m].iter().all(|s| s.cpu_index() != heavy_cpu), "the heavy task is alone on its CPU");
        let mut rt = Runtime::simulated(m);
        rt.set_scheduler(|| Box::new(Edf::new()));
        spawn_all(&mut rt, specs);
        let out = rt.run_until(Time::from_micros(101_000)).unwrap();
        assert_eq!(out.total_misses(), 0, "m = {m}");
        assert_eq!(out.thread_named("heavy").unwrap().stats.completed, 10);
    }
}

#[test]
fn global_edf_exact_timeline_with_one_migration() {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    // a: D = 10, C = 6; b: D = 8, C = 3; x released at 2 with D = 3 (absolute 5), C = 2.
    rt.spawn(ThreadSpec::new("a").deadline(ms(10)), |cx| cx.work(ms(6))).unwrap();
    rt.spawn(ThreadSpec::new("b").deadline(ms(8)), |cx| cx.work(ms(3))).unwrap();
    let x = ThreadSpec::new("x").periodic(ms(100)).phase(ms(2)).deadline(ms(3)).max_jobs(1);
    rt.spawn(x, |cx| cx.work(ms(2))).unwrap();
    let out = rt.run().unwrap();
    // CPU 0 picks first: b (D 8), CPU 1 gets a (D 10). At 2, x preempts a, the least urgent
    // running thread, on CPU 1. At 3, b ends and CPU 0 takes a back: a migrated.
    assert_eq!(cpu_segments(&out), ["cpu1/a:0-2", "cpu0/b:0-3", "cpu1/x:2-4", "cpu0/a:3-7"]);
    let a = out.thread_named("a").unwrap();
    assert_eq!(a.stats.migrations, 1);
    assert_eq!(a.stats.preemptions, 1);
    assert_eq!(a.stats.cpu_time, ms(6));
    assert_eq!(a.stats.response_max, Some(ms(7)));
    assert_eq!(out.thread_named("b").unwrap().stats.migrations, 0);
    assert_eq!(out.thread_named("x").unwrap().stats.migrations, 0);
    assert_eq!(out.migrations(), 1);
    assert_eq!(out.total_misses(), 0);
    // The report carries the counts; the run's records name the CPU each segment ran on.
    let json: serde_json::Value = serde_json::from_str(&tempi::trace::report::to_json(&out)).unwrap();
    assert_eq!(json["migrations"], 1);
    let row = json["threads"].as_array().unwrap().iter().find(|t| t["name"] == "a").unwrap();
    assert_eq!(row["migrations"], 1);
    assert!(tempi::trace::report::summary_text(&out).contains("total migrations: 1: a (1)"));
}

#[test]
fn partitioned_report_has_no_migration_keys() {
    let mut rt = Runtime::simulated(1);
    rt.spawn(ThreadSpec::new("w"), |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert!(!out.global);
    let json: serde_json::Value = serde_json::from_str(&tempi::trace::report::to_json(&out)).unwrap();
    assert!(json.get("migrations").is_none());
    assert!(json["threads"][0].get("migrations").is_none());
}

#[test]
fn global_fp_exact_timeline() {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalFp::new()));
    // Priorities: hi 3 (released at 1), mid 2, lo 1; lo and mid start at 0.
    rt.spawn(ThreadSpec::new("lo").priority(1), |cx| cx.work(ms(4))).unwrap();
    rt.spawn(ThreadSpec::new("mid").priority(2), |cx| cx.work(ms(2))).unwrap();
    let hi = ThreadSpec::new("hi").priority(3).periodic(ms(100)).phase(ms(1)).max_jobs(1);
    rt.spawn(hi, |cx| cx.work(ms(3))).unwrap();
    let out = rt.run().unwrap();
    // CPU 0 takes mid, CPU 1 lo. At 1 hi preempts lo (the least urgent running). At 2 mid
    // ends on CPU 0 and lo resumes there (a migration); hi ends at 4 on CPU 1.
    assert_eq!(cpu_segments(&out), ["cpu1/lo:0-1", "cpu0/mid:0-2", "cpu1/hi:1-4", "cpu0/lo:2-5"]);
    assert_eq!(out.thread_named("lo").unwrap().stats.migrations, 1);
    assert_eq!(out.migrations(), 1);
    assert_eq!(out.end, Time::from_millis(5));
}

#[test]
fn global_fp_equal_priorities_do_not_preempt() {
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalFp::new()));
    for name in ["a", "b"] {
        rt.spawn(ThreadSpec::new(name).priority(1), |cx| cx.work(ms(3))).unwrap();
    }
    let late = ThreadSpec::new("c").priority(1).periodic(ms(100)).phase(ms(1)).max_jobs(1);
    rt.spawn(late, |cx| cx.work(ms(1))).unwrap();
    let out = rt.run().unwrap();
    assert_eq!(cpu_segments(&out), ["cpu0/a:0-3", "cpu1/b:0-3", "cpu0/c:3-4"]);
    assert_eq!(out.migrations(), 0);
}

#[test]
fn global_policy_in_real_time_is_an_error() {
    let mut rt = Runtime::real_time(2);
    rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    let err = rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap_err();
    assert_eq!(err, Error::Global { scheduler: "global-edf".into(), reason: GlobalRefusal::RealTime });
    assert!(err.to_string().contains("virtual time only"));
    // Chosen after the threads: the run refuses to start.
    let mut rt = Runtime::real_time(1);
    rt.spawn(ThreadSpec::new("t"), |_| {}).unwrap();
    rt.set_scheduler(|| Box::new(GlobalFp::new()));
    assert_eq!(rt.run().unwrap_err(), Error::Global { scheduler: "global-fp".into(), reason: GlobalRefusal::RealTime });
}

#[test]
fn global_policy_refuses_locks_and_semaphores() {
    let refused = Error::Global { scheduler: "global-edf".into(), reason: GlobalRefusal::Synchronisation };
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    let _m = rt.create_mutex(0u32, LockSpec::new("m")).unwrap();
    assert_eq!(rt.run().unwrap_err(), refused);

    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    let _s = rt.create_semaphore(SemSpec::new("s", 1)).unwrap();
    assert_eq!(rt.run().unwrap_err(), refused);

    // Created by a thread during the run: the call fails, the run goes on.
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalEdf::new()));
    let seen = std::sync::Arc::new(std::sync::Mutex::new(None));
    let seen2 = seen.clone();
    rt.spawn(ThreadSpec::new("t"), move |cx| {
        *seen2.lock().unwrap() = Some(cx.create_mutex(0u8, LockSpec::new("late")).err());
        cx.work(Duration::from_millis(1));
    })
    .unwrap();
    let out = rt.run().unwrap();
    assert_eq!(*seen.lock().unwrap(), Some(Some(refused)));
    assert_eq!(out.end, Time::from_millis(1));
}

#[test]
fn global_fp_budget_of_a_deferrable_server_holds_across_cpus() {
    use tempi::{Budget, TimerSpec};
    let mut rt = Runtime::simulated(2);
    rt.set_scheduler(|| Box::new(GlobalFp::new()));
    rt.spawn(ThreadSpec::new("a").priority(2), |cx| cx.work(ms(6))).unwrap();
    rt.spawn(ThreadSpec::new("b").priority(1).cpu(1), |cx| cx.work(ms(6))).unwrap();
    let ap =
        rt.spawn(ThreadSpec::new("ap").sporadic(Duration::ZERO).priority(3).max_jobs(1), |cx| cx.work(ms(3))).unwrap();
    rt.add_timer(TimerSpec::at(Time::from_millis(1)), move |ev| ev.release(ap).unwrap()).unwrap();
    let s = rt.create_set("server", 0).unwrap();
    rt.add_to_set(s, ap).unwrap();
    rt.set_budget(s, Budget::deferrable_server(ms(2), ms(5))).unwrap();
    let out = rt.run().unwrap();
    // ap preempts b (the least urgent) at 1, runs out its 2 ms at 3, gets the rest at the
    // refill at 5; at 6 a and ap end together and b, ready, resumes on CPU 0 (CPU 0 picks
    // first): a migration.
    assert_eq!(
        cpu_segments(&out),
        ["cpu1/b:0-1", "cpu1/ap:1-3", "cpu1/b:3-5", "cpu0/a:0-6", "cpu1/ap:5-6", "cpu0/b:6-9"]
    );
    assert_eq!(out.thread_named("ap").unwrap().stats.cpu_time, ms(3));
    assert_eq!(out.thread_named("b").unwrap().stats.migrations, 1);
    assert_eq!(out.sets[0].exhaustions, 1);
    assert_eq!(out.sets[0].cpu_time, ms(3));
}
