/* Misuse of the C API: every call answers its status, leaves its out-parameters alone, and
 * sets tempi_last_error(). Prints "N passed, N failed" and exits 1 on any failure. */
#include <stdio.h>
#include <string.h>

#include "tempi.h"

#define MS 1000000ull

static int passed, failed;

#define EXPECT(call, status)                                                                       \
    do {                                                                                           \
        tempi_status got_ = (call);                                                                \
        if (got_ == (status)) {                                                                    \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL line %d: %s gave %s, not %s (%s)\n", __LINE__, #call, tempi_status_str(got_), \
                   tempi_status_str(status), tempi_last_error());                                  \
        }                                                                                          \
    } while (0)

#define EXPECT_TRUE(cond)                                                  \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            printf("FAIL line %d: %s\n", __LINE__, #cond);                 \
        }                                                                  \
    } while (0)

typedef struct probe {
    tempi_thread foreign_thread;
    tempi_thread periodic;
    tempi_mutex *mine;
    tempi_mutex *foreign_mutex;
    tempi_set foreign_set;
} probe;

static void misuser(tempi_ctx *cx, void *userdata) {
    probe *p = (probe *)userdata;
    uint64_t now = 77;
    EXPECT(tempi_work(NULL, 1), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_now(cx, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_now(cx, &now), TEMPI_OK);
    EXPECT_TRUE(now == 0);
    EXPECT(tempi_kill(cx, 0), TEMPI_UNKNOWN_THREAD);
    EXPECT(tempi_kill(cx, p->foreign_thread), TEMPI_FOREIGN);
    EXPECT(tempi_release(cx, p->periodic), TEMPI_NOT_SPORADIC);
    EXPECT(tempi_mutex_unlock(cx, p->mine), TEMPI_NOT_OWNER);
    EXPECT(tempi_mutex_lock(cx, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_mutex_lock(cx, p->foreign_mutex), TEMPI_FOREIGN);
    EXPECT(tempi_mutex_lock(cx, p->mine), TEMPI_OK);
    EXPECT(tempi_mutex_lock(cx, p->mine), TEMPI_NOT_OWNER);
    EXPECT(tempi_mutex_unlock(cx, p->mine), TEMPI_OK);
    EXPECT(tempi_mutex_critical(cx, p->mine, NULL, NULL), TEMPI_NULL_ARGUMENT);
    {
        tempi_job j;
        j.size = 2;
        EXPECT(tempi_current_job(cx, &j), TEMPI_BAD_SIZE);
        j.size = sizeof j;
        EXPECT(tempi_current_job(cx, &j), TEMPI_OK);
        EXPECT_TRUE(j.number == 0 && j.has_deadline == 0);
    }
    /* The runaway part: a budget of 1 ms kills it; it ignores the status a few times. */
    tempi_interrupt why = TEMPI_INTERRUPT_STOP;
    EXPECT(tempi_interrupt_cause(cx, &why), TEMPI_OK);
    EXPECT_TRUE(why == TEMPI_INTERRUPT_NONE);
    EXPECT(tempi_interrupt_cause(NULL, &why), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_interrupt_cause(cx, NULL), TEMPI_NULL_ARGUMENT);
    for (;;) {
        tempi_status s = tempi_work(cx, 100000);
        if (s != TEMPI_OK) {
            EXPECT_TRUE(s == TEMPI_INTERRUPTED);
            EXPECT(tempi_interrupt_cause(cx, &why), TEMPI_OK);
            EXPECT_TRUE(why == TEMPI_INTERRUPT_KILL);
            EXPECT(tempi_work(cx, 100000), TEMPI_INTERRUPTED);
            EXPECT(tempi_yield(cx), TEMPI_INTERRUPTED);
            EXPECT(tempi_now(cx, &now), TEMPI_INTERRUPTED);
            return;
        }
    }
}

static void idle(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    (void)tempi_work(cx, 1 * MS);
}

int main(void) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_mutex_params mp;
    tempi_semaphore_params sp;
    tempi_budget_params bp;
    tempi_runtime *rt, *other;
    tempi_runtime *untouched = (tempi_runtime *)&passed;
    tempi_outcome *out;
    tempi_set sandbox;
    tempi_thread victim;
    tempi_mutex *m;
    tempi_semaphore *sem;
    probe p;
    unsigned char big[sizeof(tempi_runtime_params) + 16];

    setvbuf(stdout, NULL, _IONBF, 0); /* a crash still shows what failed before it */

    /* Runtime creation. */
    EXPECT(tempi_runtime_params_init(NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(NULL, &rt), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_new(&rp, NULL), TEMPI_NULL_ARGUMENT);
    rp.size = 3;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_BAD_SIZE);
    EXPECT_TRUE(untouched == (tempi_runtime *)&passed);
    EXPECT_TRUE(strncmp(tempi_last_error(), "tempi_runtime_new: ", 19) == 0);
    rp.size = 1 << 20;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_BAD_SIZE);
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    memset(big, 0, sizeof big);
    memcpy(big, &rp, sizeof rp);
    ((tempi_runtime_params *)(void *)big)->size = sizeof big;
    EXPECT(tempi_runtime_new((tempi_runtime_params *)(void *)big, &rt), TEMPI_OK); /* a zero tail is fine */
    tempi_runtime_free(rt);
    big[sizeof big - 1] = 1;
    EXPECT(tempi_runtime_new((tempi_runtime_params *)(void *)big, &untouched), TEMPI_BAD_SIZE);
    rp.scheduler = "lottery";
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_UNKNOWN_NAME);
    rp.scheduler = "rr"; /* without a quantum */
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_UNKNOWN_NAME);
    rp.quantum_ns = 1 * MS;
    EXPECT(tempi_runtime_new(&rp, &rt), TEMPI_OK);
    tempi_runtime_free(rt);
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    rp.cpus = 0;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_INVALID_ARGUMENT);
    rp.cpus = 1;
    rp.clock = 7;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_INVALID_ARGUMENT);
    rp.clock = TEMPI_CLOCK_VIRTUAL;
    rp.trace_capacity = (uint64_t)1 << 40;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_INVALID_ARGUMENT);
    rp.trace_off = 1;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_INVALID_ARGUMENT); /* both: choose one */
    rp.trace_capacity = 0;
    rp.trace_off = 2;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_INVALID_ARGUMENT);
    rp.trace_off = 0;
    rp.max_threads = 1u << 30;
    EXPECT(tempi_runtime_new(&rp, &untouched), TEMPI_INVALID_ARGUMENT);
    EXPECT_TRUE(untouched == (tempi_runtime *)&passed);
    rp.max_threads = 0;

    EXPECT(tempi_runtime_new(&rp, &rt), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &other), TEMPI_OK);

    /* Spawning. */
    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    EXPECT(tempi_runtime_spawn(NULL, &tp, idle, NULL, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_spawn(rt, NULL, idle, NULL, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_spawn(rt, &tp, NULL, NULL, NULL), TEMPI_NULL_ARGUMENT);
    tp.cpu = 5;
    EXPECT(tempi_runtime_spawn(rt, &tp, idle, NULL, NULL), TEMPI_NO_SUCH_CPU);
    tp.cpu = 0;
    tp.timing = 9;
    EXPECT(tempi_runtime_spawn(rt, &tp, idle, NULL, NULL), TEMPI_INVALID_ARGUMENT);
    tp.timing = TEMPI_PERIODIC; /* without a period */
    EXPECT(tempi_runtime_spawn(rt, &tp, idle, NULL, NULL), TEMPI_INVALID_ARGUMENT);
    tp.period_ns = 10 * MS;
    tp.name = "periodic";
    EXPECT(tempi_runtime_spawn(rt, &tp, idle, NULL, &p.periodic), TEMPI_OK);
    EXPECT(tempi_runtime_spawn(other, &tp, idle, NULL, &p.foreign_thread), TEMPI_OK);

    /* Objects. */
    mp.size = sizeof mp;
    mp.name = "m";
    mp.protocol = "nope";
    mp.cpu = 0;
    mp.has_ceiling = 0;
    mp.ceiling = 0;
    mp.reserved = 0;
    EXPECT(tempi_runtime_create_mutex(rt, &mp, &m), TEMPI_UNKNOWN_NAME);
    mp.protocol = "pcp";
    mp.has_ceiling = 1;
    mp.ceiling = 5;
    EXPECT(tempi_runtime_create_mutex(rt, &mp, &p.mine), TEMPI_OK);
    EXPECT(tempi_runtime_create_mutex(other, &mp, &p.foreign_mutex), TEMPI_OK);
    sp.size = sizeof sp;
    sp.name = "s";
    sp.count = 1;
    sp.queue = "nope";
    sp.cpu = 0;
    sp.reserved = 0;
    EXPECT(tempi_runtime_create_semaphore(rt, &sp, &sem), TEMPI_UNKNOWN_NAME);
    sp.queue = "deadline";
    EXPECT(tempi_runtime_create_semaphore(rt, &sp, &sem), TEMPI_OK);
    EXPECT(tempi_runtime_create_set(other, "theirs", 0, &p.foreign_set), TEMPI_OK);

    /* The misuser in a set whose budget kills it. */
    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    tp.name = "misuser";
    EXPECT(tempi_runtime_spawn(rt, &tp, misuser, &p, &victim), TEMPI_OK);
    EXPECT(tempi_runtime_create_set(rt, NULL, 0, &sandbox), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_create_set(rt, "sandbox", 0, &sandbox), TEMPI_OK);
    EXPECT(tempi_runtime_add_to_set(rt, p.foreign_set, victim), TEMPI_FOREIGN);
    EXPECT(tempi_runtime_add_to_set(rt, sandbox, p.foreign_thread), TEMPI_FOREIGN);
    EXPECT(tempi_runtime_add_to_set(rt, sandbox, victim), TEMPI_OK);
    memset(&bp, 0, sizeof bp);
    bp.size = sizeof bp;
    bp.amount_ns = 1 * MS;
    bp.action = "explode";
    EXPECT(tempi_runtime_set_budget(rt, sandbox, &bp), TEMPI_UNKNOWN_NAME);
    bp.action = "kill";
    bp.replenish = 12;
    EXPECT(tempi_runtime_set_budget(rt, sandbox, &bp), TEMPI_INVALID_ARGUMENT);
    bp.replenish = TEMPI_REPLENISH_MANUAL;
    EXPECT(tempi_runtime_set_budget(rt, sandbox, &bp), TEMPI_OK);

    /* Running, then the ended runtime. */
    EXPECT(tempi_runtime_run(rt, 20 * MS, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_run(rt, 20 * MS, &out), TEMPI_OK);
    EXPECT(tempi_runtime_run(rt, 20 * MS, &out), TEMPI_ENDED);
    EXPECT(tempi_runtime_spawn(rt, &tp, idle, NULL, NULL), TEMPI_ENDED);
    EXPECT(tempi_runtime_create_set(rt, "late", 0, &sandbox), TEMPI_ENDED);
    EXPECT(tempi_runtime_create_mutex(rt, &mp, &m), TEMPI_ENDED);
    EXPECT(tempi_runtime_create_condvar(rt, 0, NULL), TEMPI_NULL_ARGUMENT);

    /* The outcome. */
    {
        uint64_t kills = 0;
        size_t n = 99;
        tempi_thread_stats t;
        EXPECT(tempi_outcome_kills(out, &kills), TEMPI_OK);
        EXPECT_TRUE(kills == 1);
        EXPECT(tempi_outcome_thread_count(NULL, &n), TEMPI_NULL_ARGUMENT);
        EXPECT(tempi_outcome_thread_count(out, &n), TEMPI_OK);
        EXPECT_TRUE(n == 2);
        t.size = sizeof t;
        EXPECT(tempi_outcome_thread(out, 2, &t), TEMPI_OUT_OF_RANGE);
        EXPECT(tempi_outcome_thread(out, 1, &t), TEMPI_OK);
        EXPECT_TRUE(strcmp(t.name, "misuser") == 0 && t.end == TEMPI_END_KILLED);
        EXPECT(tempi_outcome_write_report(out, "/nonexistent/dir/report.json"), TEMPI_IO);
        EXPECT(tempi_outcome_write_gantt(out, NULL), TEMPI_NULL_ARGUMENT);
    }
    EXPECT_TRUE(strcmp(tempi_status_str(TEMPI_INTERRUPTED), "TEMPI_INTERRUPTED") == 0);
    EXPECT_TRUE(strcmp(tempi_status_str(-1), "TEMPI_?") == 0);

    tempi_outcome_free(out);
    tempi_outcome_free(NULL);
    tempi_runtime_free(rt);
    tempi_runtime_free(other);
    tempi_runtime_free(NULL);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
