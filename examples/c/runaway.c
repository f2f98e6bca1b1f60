/* A runaway thread contained by a budget, from C. "control" runs 1 ms every 5 ms at the
 * higher priority; "runaway" computes forever in 100 us steps inside the thread set
 * "sandbox", whose budget of 3 ms (replenished by hand only) kills it when used up. A C body
 * cannot be unwound: the kill reaches it as TEMPI_INTERRUPTED from its next tempi_work, and
 * it returns. The budget's callback prints the exhaustion.
 *
 *   ./runaway      (virtual time, 20 ms) */
#include <stdio.h>
#include <stdlib.h>

#include "tempi.h"

#define US 1000ull
#define MS 1000000ull

static void check(tempi_status status, const char *what) {
    if (status != TEMPI_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, tempi_status_str(status), tempi_last_error());
        exit(1);
    }
}

static void control(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    (void)tempi_work(cx, 1 * MS);
}

typedef struct runaway_state {
    unsigned steps;
    tempi_status last;
} runaway_state;

static void runaway(tempi_ctx *cx, void *userdata) {
    runaway_state *st = (runaway_state *)userdata;
    for (;;) {
        st->last = tempi_work(cx, 100 * US);
        if (st->last != TEMPI_OK) {
            return; /* killed: return at once, no more runtime calls */
        }
        st->steps++;
    }
}

static void on_budget(const tempi_budget_event *e, void *userdata) {
    (void)userdata;
    printf("budget %s at %llu consumed %llu remaining %llu\n", e->replenished ? "replenished" : "exhausted",
           (unsigned long long)e->at_ns, (unsigned long long)e->consumed_ns, (unsigned long long)e->remaining_ns);
}

int main(void) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_budget_params bp;
    tempi_runtime *rt;
    tempi_outcome *out;
    tempi_thread hog;
    tempi_set sandbox;
    runaway_state st = {0, TEMPI_OK};
    size_t i, n;

    check(tempi_runtime_params_init(&rp), "tempi_runtime_params_init");
    check(tempi_runtime_new(&rp, &rt), "tempi_runtime_new");

    check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
    tp.name = "control";
    tp.timing = TEMPI_PERIODIC;
    tp.period_ns = 5 * MS;
    tp.wcet_ns = 1 * MS;
    tp.priority = 2;
    check(tempi_runtime_spawn(rt, &tp, control, NULL, NULL), "tempi_runtime_spawn");

    check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
    tp.name = "runaway";
    tp.priority = 1;
    check(tempi_runtime_spawn(rt, &tp, runaway, &st, &hog), "tempi_runtime_spawn");

    check(tempi_runtime_create_set(rt, "sandbox", 0, &sandbox), "tempi_runtime_create_set");
    check(tempi_runtime_add_to_set(rt, sandbox, hog), "tempi_runtime_add_to_set");
    bp.size = sizeof bp;
    bp.amount_ns = 3 * MS;
    bp.replenish = TEMPI_REPLENISH_MANUAL;
    bp.reserved = 0;
    bp.period_ns = 0;
    bp.action = "kill";
    bp.on_event = on_budget;
    bp.userdata = NULL;
    check(tempi_runtime_set_budget(rt, sandbox, &bp), "tempi_runtime_set_budget");

    check(tempi_runtime_run(rt, 20 * MS, &out), "tempi_runtime_run");
    printf("runaway made %u steps, then got %s\n", st.steps, tempi_status_str(st.last));

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
