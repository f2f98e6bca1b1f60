/* Set membership from a running thread (tempi_add_to_set, tempi_remove_from_set), in
 * virtual time. Prints what each call answered, every job, each thread's and each set's
 * summary; crates/tempi-c/tests/c/membership.rs runs the same scenario through the Rust API
 * (Ctx::add_to_set, Ctx::remove_from_set) and compares the output line for line.
 *
 * One CPU, "fp": a worker (priority 1) wants 8 ms of CPU. A manager (priority 2) puts it in
 * a deferrable server ("pool", 2 ms every 10 ms) at 1 ms, where its budget holds it from 3 ms
 * to the refill at 10 ms; at 11 ms the manager takes it out again, so that it runs to its
 * end unheld, and joins a plain set itself. A second set for a member, and a removal of a
 * thread that is not a member, are refused. */
#include <stdio.h>

#include "tempi.h"

#define MS 1000000ull

typedef struct world {
    tempi_thread worker;
    tempi_set pool, other;
} world;

static world w;

static void say(tempi_ctx *cx, const char *what, tempi_status s) {
    uint64_t now = 0;
    tempi_now(cx, &now);
    printf("%llu: %s: %s\n", (unsigned long long)now, what, tempi_status_str(s));
}

static void worker(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    tempi_work(cx, 8 * MS);
}

static void manager(tempi_ctx *cx, void *userdata) {
    tempi_thread me = 0;
    (void)userdata;
    tempi_self(cx, &me);
    if (tempi_sleep_until(cx, 1 * MS) != TEMPI_OK) {
        return;
    }
    say(cx, "add worker to pool", tempi_add_to_set(cx, w.pool, w.worker));
    say(cx, "add worker to other", tempi_add_to_set(cx, w.other, w.worker));
    if (tempi_sleep_until(cx, 11 * MS) != TEMPI_OK) {
        return;
    }
    {
        uint64_t used = 0;
        tempi_status s = tempi_set_cpu_time(cx, w.pool, &used);
        printf("%s: pool clock %llu\n", tempi_status_str(s), (unsigned long long)used);
    }
    say(cx, "remove worker from pool", tempi_remove_from_set(cx, w.pool, w.worker));
    say(cx, "remove worker from pool", tempi_remove_from_set(cx, w.pool, w.worker));
    say(cx, "add manager to other", tempi_add_to_set(cx, w.other, me));
    tempi_work(cx, 1 * MS);
}

static int check(tempi_status s, const char *what) {
    if (s != TEMPI_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, tempi_status_str(s), tempi_last_error());
        return 1;
    }
    return 0;
}

static void listing(tempi_outcome *out) {
    size_t n = 0, i;
    tempi_outcome_job_count(out, &n);
    for (i = 0; i < n; i++) {
        tempi_job_record j;
        tempi_thread_stats t;
        j.size = sizeof j;
        t.size = sizeof t;
        tempi_outcome_job(out, i, &j);
        tempi_outcome_thread(out, j.thread_index, &t);
        printf("job %s#%u release %llu start %llu finish %llu preemptions %u\n", t.name, j.number,
               (unsigned long long)j.release_ns, (unsigned long long)j.start_ns, (unsigned long long)j.finish_ns,
               j.preemptions);
    }
    tempi_outcome_thread_count(out, &n);
    for (i = 0; i < n; i++) {
        tempi_thread_stats t;
        t.size = sizeof t;
        tempi_outcome_thread(out, i, &t);
        printf("thread %s: cpu %llu, released %llu, completed %llu, preemptions %llu\n", t.name,
               (unsigned long long)t.cpu_time_ns, (unsigned long long)t.released, (unsigned long long)t.completed,
               (unsigned long long)t.preemptions);
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

int main(void) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_runtime *rt;
    tempi_outcome *out;
    int bad = 0;

    tempi_runtime_params_init(&rp);
    bad |= check(tempi_runtime_new(&rp, &rt), "new");
    tempi_thread_params_init(&tp);
    tp.name = "worker";
    tp.priority = 1;
    bad |= check(tempi_runtime_spawn(rt, &tp, worker, NULL, &w.worker), "spawn worker");
    bad |= check(tempi_runtime_create_server(rt, "pool", 0, TEMPI_SERVER_DEFERRABLE, 2 * MS, 10 * MS, &w.pool),
                 "pool");
    bad |= check(tempi_runtime_create_set(rt, "other", 0, &w.other), "other");
    tempi_thread_params_init(&tp);
    tp.name = "manager";
    tp.priority = 2;
    bad |= check(tempi_runtime_spawn(rt, &tp, manager, NULL, NULL), "spawn manager");
    if (bad || check(tempi_runtime_run(rt, 30 * MS, &out), "run")) {
        tempi_runtime_free(rt);
        return 1;
    }
    listing(out);
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}
