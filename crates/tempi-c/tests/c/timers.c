/* Timing events, execution-time timers and servers from C, in virtual time. Prints a log
 * and each run's thread and set summaries; crates/tempi-c/tests/c/timers.rs runs the same
 * two scenarios through the Rust API and compares the output line for line.
 *
 * Run 1 (one CPU, "fp"): a periodic timing event from 2 ms every 5 ms releases a sporadic
 * thread and cancels itself at 17 ms; a one-shot event at 4 ms; a deferrable server (2 ms
 * every 10 ms) and a sporadic server (3 ms every 10 ms), each with a thread that wants
 * more; execution-time timers on a thread (armed before the run and from a thread) and on
 * the deferrable server's group clock; a watcher reading budgets and CPU times, and adding
 * to a budget.
 *
 * Run 2 (one CPU, "edf"): a constant bandwidth server (2 ms every 10 ms) holding a thread
 * that computes forever, beside a periodic thread (2 ms every 5 ms). */
#include <stdio.h>
#include <string.h>

#include "tempi.h"

#define MS 1000000ull

typedef struct world {
    tempi_thread on_demand, background, spare, watch;
    tempi_set ds, ss;
} world;

static world w;

static void say_at(const char *what, uint64_t at) {
    printf("%llu: %s\n", (unsigned long long)at, what);
}

static void tick(tempi_event *ev, void *userdata) {
    uint64_t now = 0;
    (void)userdata;
    tempi_event_now(ev, &now);
    say_at("tick: release on-demand", now);
    tempi_event_release(ev, w.on_demand);
    if (now >= 17 * MS) {
        tempi_event_cancel(ev);
        say_at("tick: cancelled", now);
    }
}

static void once(tempi_event *ev, void *userdata) {
    uint64_t now = 0;
    tempi_event_now(ev, &now);
    say_at((const char *)userdata, now);
}

static void work_ms(tempi_ctx *cx, void *userdata) {
    const uint64_t *ms = userdata;
    tempi_work(cx, *ms * MS);
}

static void forever(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    while (tempi_work(cx, 1 * MS) == TEMPI_OK) {
    }
}

static void watcher(tempi_ctx *cx, void *userdata) {
    uint64_t now = 0, ds_left = 0, ss_left = 0, bg_cpu = 0, sp_cpu = 0;
    char line[160];
    (void)userdata;
    if (tempi_sleep_until(cx, 11 * MS) != TEMPI_OK) {
        return;
    }
    tempi_now(cx, &now);
    tempi_budget_remaining(cx, w.ds, &ds_left);
    tempi_budget_remaining(cx, w.ss, &ss_left);
    tempi_thread_cpu_time(cx, w.background, &bg_cpu);
    tempi_thread_cpu_time(cx, w.spare, &sp_cpu);
    snprintf(line, sizeof line, "watch: ds left %llu, ss left %llu, background cpu %llu, spare cpu %llu",
             (unsigned long long)ds_left, (unsigned long long)ss_left, (unsigned long long)bg_cpu,
             (unsigned long long)sp_cpu);
    say_at(line, now);
    /* Ada's Group_Budgets.Add: one more millisecond for the deferrable server now. */
    tempi_add_budget(cx, w.ds, (int64_t)(1 * MS));
    tempi_arm_thread_timer(cx, w.background, 4 * MS, once, "background reached 4 ms of cpu (armed by watch)");
    if (tempi_sleep_until(cx, 25 * MS) != TEMPI_OK) {
        return;
    }
    tempi_now(cx, &now);
    tempi_replenish_budget(cx, w.ss, 1 * MS);
    say_at("watch: ss replenished to 1 ms", now);
}

static const char *end_names[] = {"running", "completed", "panicked", "killed", "not-started"};

static void summary(tempi_outcome *out) {
    size_t n, i;
    tempi_outcome_thread_count(out, &n);
    for (i = 0; i < n; i++) {
        tempi_thread_stats s;
        s.size = sizeof s;
        tempi_outcome_thread(out, i, &s);
        printf("thread %s: cpu %llu, released %llu, completed %llu, end %s\n", s.name,
               (unsigned long long)s.cpu_time_ns, (unsigned long long)s.released, (unsigned long long)s.completed,
               s.end < 5 ? end_names[s.end] : "?");
    }
    tempi_outcome_set_count(out, &n);
    for (i = 0; i < n; i++) {
        tempi_set_stats s;
        s.size = sizeof s;
        tempi_outcome_set(out, i, &s);
        printf("set %s: cpu %llu, exhaustions %llu, replenishments %llu, members %llu\n", s.name,
               (unsigned long long)s.cpu_time_ns, (unsigned long long)s.exhaustions,
               (unsigned long long)s.replenishments, (unsigned long long)s.members);
    }
}

static int check(tempi_status s, const char *what) {
    if (s != TEMPI_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, tempi_status_str(s), tempi_last_error());
        return 1;
    }
    return 0;
}

static int run_fp(void) {
    static const uint64_t one = 1, ten = 10, six = 6;
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_timer_params ti;
    tempi_runtime *rt;
    tempi_outcome *out;
    int bad = 0;

    tempi_runtime_params_init(&rp);
    bad |= check(tempi_runtime_new(&rp, &rt), "new");
    tempi_thread_params_init(&tp);
    tp.name = "on-demand";
    tp.timing = TEMPI_SPORADIC;
    tp.priority = 3;
    bad |= check(tempi_runtime_spawn(rt, &tp, work_ms, (void *)&one, &w.on_demand), "spawn on-demand");
    tempi_thread_params_init(&tp);
    tp.name = "background";
    tp.priority = 1;
    bad |= check(tempi_runtime_spawn(rt, &tp, work_ms, (void *)&ten, &w.background), "spawn background");
    tempi_thread_params_init(&tp);
    tp.name = "spare";
    tp.priority = 2;
    bad |= check(tempi_runtime_spawn(rt, &tp, work_ms, (void *)&six, &w.spare), "spawn spare");
    tempi_thread_params_init(&tp);
    tp.name = "watch";
    tp.priority = 4;
    bad |= check(tempi_runtime_spawn(rt, &tp, watcher, NULL, &w.watch), "spawn watch");

    bad |= check(tempi_runtime_create_server(rt, "ds", 0, TEMPI_SERVER_DEFERRABLE, 2 * MS, 10 * MS, &w.ds), "ds");
    bad |= check(tempi_runtime_add_to_set(rt, w.ds, w.background), "ds member");
    bad |= check(tempi_runtime_create_server(rt, "ss", 0, TEMPI_SERVER_SPORADIC, 3 * MS, 10 * MS, &w.ss), "ss");
    bad |= check(tempi_runtime_add_to_set(rt, w.ss, w.spare), "ss member");

    memset(&ti, 0, sizeof ti);
    ti.size = sizeof ti;
    ti.first_ns = 2 * MS;
    ti.period_ns = 5 * MS;
    bad |= check(tempi_runtime_add_timer(rt, &ti, tick, NULL), "tick");
    ti.first_ns = 4 * MS;
    ti.period_ns = 0;
    bad |= check(tempi_runtime_add_timer(rt, &ti, once, "once: at 4 ms"), "once");
    bad |= check(tempi_runtime_arm_thread_timer(rt, w.background, 1 * MS, once, "background reached 1 ms of cpu"),
                 "thread timer");
    bad |= check(tempi_runtime_arm_set_timer(rt, w.ds, 3 * MS, once, "ds members reached 3 ms of cpu"), "set timer");
    if (bad) {
        return 1;
    }
    if (check(tempi_runtime_run(rt, 40 * MS, &out), "run")) {
        return 1;
    }
    printf("run 1 (fp)\n");
    summary(out);
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}

static int run_edf(void) {
    static const uint64_t two = 2;
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_runtime *rt;
    tempi_outcome *out;
    tempi_thread hog;
    tempi_set cbs;
    int bad = 0;

    tempi_runtime_params_init(&rp);
    rp.scheduler = "edf";
    bad |= check(tempi_runtime_new(&rp, &rt), "new");
    tempi_thread_params_init(&tp);
    tp.name = "control";
    tp.timing = TEMPI_PERIODIC;
    tp.period_ns = 5 * MS;
    tp.wcet_ns = 2 * MS;
    bad |= check(tempi_runtime_spawn(rt, &tp, work_ms, (void *)&two, NULL), "spawn control");
    tempi_thread_params_init(&tp);
    tp.name = "hog";
    tp.deadline_ns = 1 * MS;
    bad |= check(tempi_runtime_spawn(rt, &tp, forever, NULL, &hog), "spawn hog");
    bad |= check(tempi_runtime_create_server(rt, "cbs", 0, TEMPI_SERVER_CONSTANT_BANDWIDTH, 2 * MS, 10 * MS, &cbs),
                 "cbs");
    bad |= check(tempi_runtime_add_to_set(rt, cbs, hog), "cbs member");
    if (bad || check(tempi_runtime_run(rt, 30 * MS, &out), "run")) {
        return 1;
    }
    printf("run 2 (edf)\n");
    summary(out);
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}

int main(void) {
    if (run_fp() != 0 || run_edf() != 0) {
        return 1;
    }
    return 0;
}
