/* Bodies that ignore their interrupt forever: a periodic thread whose jobs are aborted, a
 * thread killed by another, and a thread still computing when the run ends. Each keeps
 * calling tempi_work after TEMPI_INTERRUPTED; the library abandons it after
 * TEMPI_IGNORED_INTERRUPT_LIMIT further calls, the run ends at its horizon, and the outcome
 * names each thread. `ignore virtual` prints the outcome (checked line for line by
 * ignore.rs); `ignore real` runs the same on the real clock and checks its properties.
 * Optional second argument: a path for the JSON report. */
#include <stdio.h>
#include <string.h>

#include "tempi.h"

#define MS 1000000ull

typedef struct counts {
    tempi_thread victim;  /* for the killer */
    struct counts *of_victim; /* for the killer */
    unsigned long calls;  /* calls made */
    unsigned long interrupted; /* calls answered TEMPI_INTERRUPTED */
    unsigned long bodies; /* body calls */
} counts;

/* Works forever, whatever the runtime answers. */
static void stubborn(tempi_ctx *cx, void *userdata) {
    counts *c = (counts *)userdata;
    c->bodies++;
    for (;;) {
        c->calls++;
        if (tempi_work(cx, 1 * MS) == TEMPI_INTERRUPTED) {
            c->interrupted++;
        }
    }
}

static void killer(tempi_ctx *cx, void *userdata) {
    counts *c = (counts *)userdata;
    if (tempi_sleep_until(cx, 5 * MS) != TEMPI_OK) {
        return;
    }
    /* On the real clock the victim may not have started by then. */
    while (c->of_victim->bodies == 0) {
        if (tempi_sleep(cx, 1 * MS) != TEMPI_OK) {
            return;
        }
    }
    tempi_kill(cx, c->victim);
}

static const char *end_name(uint32_t end) {
    switch (end) {
    case TEMPI_END_RUNNING: return "running";
    case TEMPI_END_COMPLETED: return "completed";
    case TEMPI_END_PANICKED: return "panicked";
    case TEMPI_END_KILLED: return "killed";
    default: return "not-started";
    }
}

int main(int argc, char **argv) {
    int real = argc > 1 && strcmp(argv[1], "real") == 0;
    const char *report = argc > 2 ? argv[2] : NULL;
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_runtime *rt;
    tempi_outcome *out;
    counts aborted = {0, NULL, 0, 0, 0}, killed = {0, NULL, 0, 0, 0}, stopped = {0, NULL, 0, 0, 0};
    counts k = {0, &killed, 0, 0, 0};
    counts *all[3];
    uint64_t end, abandoned, horizon;
    size_t n, w, i, ignoring = 0;
    int failures = 0;

    all[0] = &aborted;
    all[1] = &killed;
    all[2] = &stopped;
    tempi_runtime_params_init(&rp);
    rp.clock = real ? TEMPI_CLOCK_REAL : TEMPI_CLOCK_VIRTUAL;
    if (tempi_runtime_new(&rp, &rt) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        return 1;
    }
    /* Aborted 3 ms after each release, every 10 ms. */
    tempi_thread_params_init(&tp);
    tp.name = "aborted";
    tp.timing = TEMPI_PERIODIC;
    tp.period_ns = 10 * MS;
    tp.abort_after_ns = 3 * MS;
    tp.priority = 3;
    tempi_runtime_spawn(rt, &tp, stubborn, &aborted, NULL);
    /* Killed at 5 ms. */
    tempi_thread_params_init(&tp);
    tp.name = "killed";
    tp.priority = 1;
    tempi_runtime_spawn(rt, &tp, stubborn, &killed, &k.victim);
    tempi_thread_params_init(&tp);
    tp.name = "killer";
    tp.priority = 2;
    tempi_runtime_spawn(rt, &tp, killer, &k, NULL);
    /* Computing when the run ends. */
    tempi_thread_params_init(&tp);
    tp.name = "stopped";
    tp.priority = 0;
    tempi_runtime_spawn(rt, &tp, stubborn, &stopped, NULL);

    /* On the real clock ten times longer: on a loaded machine every thread must still have
     * started its body, and been interrupted, before the run ends. */
    horizon = real ? 250 * MS : 25 * MS;
    if (tempi_runtime_run(rt, horizon, &out) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        return 1;
    }
    tempi_outcome_end(out, &end);
    tempi_outcome_abandoned(out, &abandoned);
    tempi_outcome_thread_count(out, &n);
    if (!real) {
        printf("end %llu ms, threads abandoned %llu, limit %u\n", (unsigned long long)(end / MS),
               (unsigned long long)abandoned, (unsigned)TEMPI_IGNORED_INTERRUPT_LIMIT);
    }
    for (i = 0; i < n; i++) {
        tempi_thread_stats s;
        s.size = sizeof s;
        tempi_outcome_thread(out, i, &s);
        if (i == 2) {
            if (!real) {
                printf("%s: %s, released %llu, completed %llu\n", s.name, end_name(s.end),
                       (unsigned long long)s.released, (unsigned long long)s.completed);
            }
            continue;
        }
        {
            counts *c = all[i < 2 ? i : 2];
            if (!real) {
                printf("%s: %s, released %llu, completed %llu, aborted %llu, abandoned %llu, bodies %lu, "
                       "calls %lu, interrupted %lu\n",
                       s.name, end_name(s.end), (unsigned long long)s.released, (unsigned long long)s.completed,
                       (unsigned long long)s.aborted, (unsigned long long)s.abandoned, c->bodies, c->calls,
                       c->interrupted);
            }
            /* Both clocks: every body was abandoned after exactly the limit of further calls,
             * and never got control again. */
            if (s.abandoned != c->bodies || c->interrupted != s.abandoned * (TEMPI_IGNORED_INTERRUPT_LIMIT + 1) ||
                s.abandoned == 0) {
                printf("FAIL %s: abandoned %llu, bodies %lu, interrupted %lu\n", s.name,
                       (unsigned long long)s.abandoned, c->bodies, c->interrupted);
                failures++;
            }
        }
    }
    tempi_outcome_warning_count(out, &w);
    for (i = 0; i < w; i++) {
        const char *text;
        tempi_outcome_warning(out, i, &text);
        if (strstr(text, "ignored its interrupt") != NULL) {
            ignoring++;
        }
        /* In real time the run may warn of other things too (SCHED_FIFO refused, ...). */
        if (!real) {
            printf("warning: %s\n", text);
        }
    }
    if (ignoring != 3 || abandoned != 3) {
        printf("FAIL: %zu warnings of ignored interrupts, %llu threads abandoned\n", ignoring,
               (unsigned long long)abandoned);
        failures++;
    }
    if (real) {
        tempi_thread_stats s;
        s.size = sizeof s;
        tempi_outcome_thread(out, 1, &s);
        if (s.end != TEMPI_END_KILLED) {
            printf("FAIL: killed ended %s\n", end_name(s.end));
            failures++;
        }
        if (end < horizon) {
            printf("FAIL: the run ended at %llu ns\n", (unsigned long long)end);
            failures++;
        }
        printf("real: %s\n", failures == 0 ? "ok" : "failed");
    }
    if (report != NULL && tempi_outcome_write_report(out, report) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        failures++;
    }
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return failures == 0 ? 0 : 1;
}
