/* The textbook rate-monotonic set of examples/rm-textbook.toml, from C: three periodic
 * threads with C/T = 1/4, 2/6 and 3/12 ms, shorter period higher priority, run for two
 * 12 ms hyperperiods in virtual time. U = 0.83 is above the Liu & Layland bound for three
 * tasks, yet no deadline is missed (worst responses 1, 3 and 10 ms).
 *
 *   cc -std=c11 -Iinclude examples/c/rm_textbook.c $(pkg-config --cflags --libs tempi) -o rm_textbook
 *   ./rm_textbook [report.json]
 *
 * Prints every job (release, start, finish, deadline, in ns) and each thread's totals. */
#include <stdio.h>
#include <stdlib.h>

#include "tempi.h"

#define MS 1000000ull

typedef struct task {
    const char *name;
    uint64_t period_ns;
    uint64_t wcet_ns;
    int32_t priority;
} task;

static void check(tempi_status status, const char *what) {
    if (status != TEMPI_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, tempi_status_str(status), tempi_last_error());
        exit(1);
    }
}

/* One job: compute for the task's WCET. A non-OK status (the run stopping) ends the job. */
static void job(tempi_ctx *cx, void *userdata) {
    const task *t = (const task *)userdata;
    if (tempi_work(cx, t->wcet_ns) != TEMPI_OK) {
        return;
    }
}

int main(int argc, char **argv) {
    static const task set[] = {
        {"t1", 4 * MS, 1 * MS, 3},
        {"t2", 6 * MS, 2 * MS, 2},
        {"t3", 12 * MS, 3 * MS, 1},
    };
    tempi_runtime_params rp;
    tempi_runtime *rt;
    tempi_outcome *out;
    size_t i, n;
    uint64_t misses;

    check(tempi_runtime_params_init(&rp), "tempi_runtime_params_init");
    rp.scheduler = "fp";
    check(tempi_runtime_new(&rp, &rt), "tempi_runtime_new");
    for (i = 0; i < sizeof set / sizeof set[0]; i++) {
        tempi_thread_params tp;
        check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
        tp.name = set[i].name;
        tp.timing = TEMPI_PERIODIC;
        tp.period_ns = set[i].period_ns;
        tp.wcet_ns = set[i].wcet_ns;
        tp.priority = set[i].priority;
        check(tempi_runtime_spawn(rt, &tp, job, (void *)&set[i], NULL), "tempi_runtime_spawn");
    }
    check(tempi_runtime_run(rt, 24 * MS, &out), "tempi_runtime_run");

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
    check(tempi_outcome_total_misses(out, &misses), "tempi_outcome_total_misses");
    printf("misses %llu\n", (unsigned long long)misses);
    if (argc > 1) {
        check(tempi_outcome_write_report(out, argv[1]), "tempi_outcome_write_report");
    }
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}
