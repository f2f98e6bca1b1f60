/* The classic priority inversion of examples/locks-inversion.toml, from C: "low" locks the
 * shared object at 0, "high" wants it at 1 ms and blocks, and "medium", which never touches
 * the lock, preempts "low" at 2 ms. Under basic priority ("bp") high waits for all of medium
 * and misses its 5 ms deadline (response 9 ms); under priority inheritance ("bpi") low runs
 * at high's priority while it holds the lock, and high answers in 4 ms.
 *
 *   ./inversion [protocol]      (virtual time, 40 ms; protocol "bp" by default) */
#include <stdio.h>
#include <stdlib.h>

#include "tempi.h"

#define MS 1000000ull

static tempi_mutex *object;

static void check(tempi_status status, const char *what) {
    if (status != TEMPI_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, tempi_status_str(status), tempi_last_error());
        exit(1);
    }
}

static void high(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    if (tempi_mutex_lock(cx, object) != TEMPI_OK) return;
    if (tempi_work(cx, 1 * MS) != TEMPI_OK) return; /* the mutex is unlocked when the body returns */
    (void)tempi_mutex_unlock(cx, object);
}

static void medium(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    (void)tempi_work(cx, 5 * MS);
}

static void low(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    if (tempi_mutex_lock(cx, object) != TEMPI_OK) return;
    if (tempi_work(cx, 4 * MS) != TEMPI_OK) return;
    if (tempi_mutex_unlock(cx, object) != TEMPI_OK) return;
    (void)tempi_work(cx, 1 * MS);
}

static void spawn(tempi_runtime *rt, const char *name, uint64_t phase, uint64_t deadline, int32_t priority,
                  tempi_body body) {
    tempi_thread_params tp;
    check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
    tp.name = name;
    tp.timing = TEMPI_PERIODIC;
    tp.period_ns = 20 * MS;
    tp.phase_ns = phase;
    tp.deadline_ns = deadline;
    tp.priority = priority;
    check(tempi_runtime_spawn(rt, &tp, body, NULL, NULL), "tempi_runtime_spawn");
}

int main(int argc, char **argv) {
    tempi_runtime_params rp;
    tempi_mutex_params mp;
    tempi_runtime *rt;
    tempi_outcome *out;
    size_t i, n;

    check(tempi_runtime_params_init(&rp), "tempi_runtime_params_init");
    check(tempi_runtime_new(&rp, &rt), "tempi_runtime_new");
    mp.size = sizeof mp;
    mp.name = "object";
    mp.protocol = argc > 1 ? argv[1] : "bp";
    mp.cpu = 0;
    mp.has_ceiling = 0;
    mp.ceiling = 0;
    mp.reserved = 0;
    check(tempi_runtime_create_mutex(rt, &mp, &object), "tempi_runtime_create_mutex");
    spawn(rt, "high", 1 * MS, 5 * MS, 3, high);
    spawn(rt, "medium", 2 * MS, 0, 2, medium);
    spawn(rt, "low", 0, 0, 1, low);
    check(tempi_runtime_run(rt, 40 * MS, &out), "tempi_runtime_run");

    check(tempi_outcome_job_count(out, &n), "tempi_outcome_job_count");
    for (i = 0; i < n; i++) {
        tempi_job_record j;
        tempi_thread_stats t;
        j.size = sizeof j;
        t.size = sizeof t;
        check(tempi_outcome_job(out, i, &j), "tempi_outcome_job");
        check(tempi_outcome_thread(out, j.thread_index, &t), "tempi_outcome_thread");
        printf("job %s#%u release %llu start %llu finish %llu deadline %llu missed %u\n", t.name, j.number,
               (unsigned long long)j.release_ns, (unsigned long long)j.start_ns, (unsigned long long)j.finish_ns,
               (unsigned long long)j.deadline_ns, j.missed);
    }
    check(tempi_outcome_thread_count(out, &n), "tempi_outcome_thread_count");
    for (i = 0; i < n; i++) {
        tempi_thread_stats t;
        t.size = sizeof t;
        check(tempi_outcome_thread(out, i, &t), "tempi_outcome_thread");
        printf("thread %s released %llu completed %llu misses %llu worst %llu end %u\n", t.name,
               (unsigned long long)t.released, (unsigned long long)t.completed, (unsigned long long)t.misses,
               (unsigned long long)t.response_max_ns, t.end);
    }
    {
        uint64_t misses;
        check(tempi_outcome_total_misses(out, &misses), "tempi_outcome_total_misses");
        printf("misses %llu\n", (unsigned long long)misses);
    }
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}
