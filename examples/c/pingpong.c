/* Two CPUs exchanging messages, from C. "ping" on CPU 0 calls "pong" on CPU 1 five times and
 * prints each reply, then sends it three notes and a stop, without waiting. "pong" reads its
 * queue: it answers each call (the value times ten, plus one) after adding the value to a
 * running total kept by the handler "tally" of CPU 1, which runs on pong's stack; it prints
 * the notes in the order they came and ends at the stop.
 *
 *   ./pingpong          (virtual time: the same timeline every run)
 *   ./pingpong real     (real time: one dispatcher thread per CPU; the times vary) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tempi.h"

#define US 1000ull

enum { CALLS = 5, NOTES = 3, STOP = -1 };

static void check(tempi_status status, const char *what) {
    if (status != TEMPI_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, tempi_status_str(status), tempi_last_error());
        exit(1);
    }
}

static uint64_t now(tempi_ctx *cx) {
    uint64_t t = 0;
    (void)tempi_now(cx, &t);
    return t;
}

typedef struct world {
    tempi_thread pong;
    tempi_handler *tally;
} world;

/* The handler: adds each value to the total its userdata points at and replies the total. */
static void tally(tempi_handler_ctx *hcx, const tempi_message *msg, void *userdata) {
    int64_t *total = (int64_t *)userdata;
    tempi_message reply;
    *total += msg->value;
    tempi_message_init(&reply, msg->id, *total, 0);
    (void)tempi_handler_reply(hcx, &reply);
}

static void ping(tempi_ctx *cx, void *userdata) {
    const world *w = (const world *)userdata;
    tempi_message m, r;
    int i;
    for (i = 0; i < CALLS; i++) {
        if (tempi_work(cx, 100 * US) != TEMPI_OK) {
            return;
        }
        tempi_message_init(&m, i, i, 0);
        r.size = sizeof r;
        if (tempi_call(cx, w->pong, &m, &r) != TEMPI_OK) {
            printf("ping: call %d failed: %s\n", i, tempi_last_error());
            return;
        }
        printf("ping: call %d answered %lld at %llu\n", i, (long long)r.value, (unsigned long long)now(cx));
    }
    for (i = 0; i < NOTES; i++) {
        tempi_message_init(&m, 100 + i, i, 0);
        if (tempi_send(cx, w->pong, &m) != TEMPI_OK) {
            printf("ping: note %d failed: %s\n", i, tempi_last_error());
            return;
        }
    }
    tempi_message_init(&m, STOP, 0, 0);
    if (tempi_send(cx, w->pong, &m) == TEMPI_OK) {
        printf("ping: sent %d notes and the stop at %llu\n", NOTES, (unsigned long long)now(cx));
    }
}

static void pong(tempi_ctx *cx, void *userdata) {
    const world *w = (const world *)userdata;
    for (;;) {
        tempi_message m, t, r;
        m.size = sizeof m;
        if (tempi_read(cx, TEMPI_READ_WAIT, 0, &m) != TEMPI_OK) {
            return;
        }
        if (m.id == STOP) {
            printf("pong: stop at %llu\n", (unsigned long long)now(cx));
            return;
        }
        if (!m.expects_reply) {
            printf("pong: note %lld value %lld at %llu\n", (long long)m.id, (long long)m.value,
                   (unsigned long long)now(cx));
            continue;
        }
        if (tempi_work(cx, 50 * US) != TEMPI_OK) {
            return;
        }
        tempi_message_init(&t, m.id, m.value, 0);
        t.size = sizeof t;
        check(tempi_handler_call(cx, w->tally, &t, &t), "tempi_handler_call");
        tempi_message_init(&r, m.id, m.value * 10 + 1, 0);
        check(tempi_reply(cx, &r), "tempi_reply");
        printf("pong: call %lld total %lld at %llu\n", (long long)m.id, (long long)t.value,
               (unsigned long long)now(cx));
    }
}

int main(int argc, char **argv) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_handler_params hp;
    tempi_runtime *rt;
    tempi_outcome *out;
    static world w;
    static int64_t total;
    size_t i, n;

    check(tempi_runtime_params_init(&rp), "tempi_runtime_params_init");
    rp.cpus = 2;
    rp.clock = argc > 1 && strcmp(argv[1], "real") == 0 ? TEMPI_CLOCK_REAL : TEMPI_CLOCK_VIRTUAL;
    check(tempi_runtime_new(&rp, &rt), "tempi_runtime_new");

    memset(&hp, 0, sizeof hp);
    hp.size = sizeof hp;
    hp.name = "tally";
    hp.cpu = 1;
    hp.capacity = 4;
    hp.function = tally;
    hp.userdata = &total;
    check(tempi_runtime_create_handler(rt, &hp, &w.tally), "tempi_runtime_create_handler");

    check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
    tp.name = "pong";
    tp.cpu = 1;
    tp.mailbox = 8;
    check(tempi_runtime_spawn(rt, &tp, pong, &w, &w.pong), "tempi_runtime_spawn");
    check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
    tp.name = "ping";
    tp.cpu = 0;
    check(tempi_runtime_spawn(rt, &tp, ping, &w, NULL), "tempi_runtime_spawn");

    check(tempi_runtime_run(rt, UINT64_MAX, &out), "tempi_runtime_run");
    check(tempi_outcome_thread_count(out, &n), "tempi_outcome_thread_count");
    for (i = 0; i < n; i++) {
        tempi_thread_stats t;
        t.size = sizeof t;
        check(tempi_outcome_thread(out, i, &t), "tempi_outcome_thread");
        printf("thread %s cpu %u completed %llu end %u\n", t.name, t.cpu, (unsigned long long)t.completed, t.end);
    }
    printf("total %lld\n", (long long)total);
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}
