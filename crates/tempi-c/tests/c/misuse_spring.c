/* Misuse of the C API's Spring thread groups, timing events and execution-time timers,
 * servers, budgets and set membership from a running thread: every call answers its exact
 * status, leaves its out-parameters alone (but for TEMPI_REJECTED, which writes its answer),
 * and sets tempi_last_error() to "<the call>: <what is wrong>". Prints "N passed, N failed"
 * and exits 1 on any failure. */
#include <stdio.h>
#include <string.h>

#include "tempi.h"

#define MS 1000000ull

static int passed, failed;

/* Whether the last error is "<name of the call in `call`>: ..." and contains `part`. */
static int names(const char *call, const char *part) {
    const char *err = tempi_last_error();
    size_t n = strcspn(call, "(");
    return strncmp(err, call, n) == 0 && err[n] == ':' && strstr(err, part) != NULL;
}

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

/* The call answers `status` and the last error names it and contains `part`. */
#define EXPECT_ERR(call, status, part)                                                             \
    do {                                                                                           \
        tempi_status got_ = (call);                                                                \
        if (got_ == (status) && names(#call, part)) {                                              \
            passed++;                                                                              \
        } else {                                                                                   \
            failed++;                                                                              \
            printf("FAIL line %d: %s gave %s, not %s with \"%s\" (%s)\n", __LINE__, #call,          \
                   tempi_status_str(got_), tempi_status_str(status), part, tempi_last_error());     \
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

/* What the threads and handlers of the run use. */
typedef struct probe {
    tempi_spring *mine, *foreign;
    tempi_thread foreign_thread, sporadic;
    tempi_set server, plain, foreign_set, freed_set;
    uint64_t yonder_ticket; /* an asynchronous request's ticket of another executor */
    int handler_ran;
} probe;

static probe p;

static void idle(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    (void)tempi_work(cx, 1 * MS);
}

static void noop_event(tempi_event *ev, void *userdata) {
    (void)ev;
    (void)userdata;
}

static void task_params(tempi_task_params *t, uint64_t wcet) {
    memset(t, 0, sizeof *t);
    t->size = sizeof *t;
    t->wcet_ns = wcet;
    t->work_ns = wcet;
}

/* A group of one thread with one task of `wcet`, or NULL. */
static tempi_group *one_task(const char *name, uint64_t release, uint64_t deadline, uint64_t wcet) {
    tempi_group *g = NULL;
    tempi_task_params t;
    uint32_t a = 0;
    if (tempi_group_new(name, release, deadline, &g) != TEMPI_OK) {
        return NULL;
    }
    task_params(&t, wcet);
    if (tempi_group_add_thread(g, "a", NULL, 0, 0, 0, &a) != TEMPI_OK || tempi_group_add_task(g, a, &t) != TEMPI_OK) {
        tempi_group_free(g);
        return NULL;
    }
    return g;
}

static void event_misuse(tempi_event *ev, void *userdata) {
    uint64_t now = 77;
    (void)userdata;
    p.handler_ran = 1;
    EXPECT_ERR(tempi_event_now(NULL, &now), TEMPI_NULL_ARGUMENT, "ev is null");
    EXPECT_ERR(tempi_event_now(ev, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_TRUE(now == 77);
    EXPECT(tempi_event_now(ev, &now), TEMPI_OK);
    EXPECT_TRUE(now == 1 * MS);
    EXPECT_ERR(tempi_event_release(NULL, p.sporadic), TEMPI_NULL_ARGUMENT, "ev is null");
    EXPECT_ERR(tempi_event_release(ev, 0), TEMPI_UNKNOWN_THREAD, "thread 0 names no thread");
    EXPECT_ERR(tempi_event_release(ev, p.foreign_thread), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT(tempi_event_release(ev, p.sporadic), TEMPI_OK);
    EXPECT_ERR(tempi_event_cancel(NULL), TEMPI_NULL_ARGUMENT, "ev is null");
    EXPECT(tempi_event_cancel(ev), TEMPI_OK);
}

static void app(tempi_ctx *cx, void *userdata) {
    tempi_plan_answer a;
    tempi_plan_status st = TEMPI_PLAN_NO;
    uint64_t ticket = 77, n = 77, left = 77;
    tempi_thread me = 0;
    tempi_group *g;
    (void)userdata;

    EXPECT(tempi_self(cx, &me), TEMPI_OK);

    /* Synchronous spawns: the group is consumed by every call, failed or not. */
    a.size = sizeof a;
    a.group = 99;
    EXPECT_ERR(tempi_spring_spawn_sync(NULL, p.mine, one_task("g", 0, 50 * MS, 1 * MS), &a), TEMPI_NULL_ARGUMENT,
               "cx is null");
    EXPECT_ERR(tempi_spring_spawn_sync(cx, NULL, one_task("g", 0, 50 * MS, 1 * MS), &a), TEMPI_NULL_ARGUMENT,
               "s is null");
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, NULL, &a), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, one_task("g", 0, 50 * MS, 1 * MS), NULL), TEMPI_NULL_ARGUMENT,
               "out is null");
    a.size = 0;
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, one_task("g", 0, 50 * MS, 1 * MS), &a), TEMPI_BAD_SIZE,
               "out->size is 0");
    a.size = 3;
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, one_task("g", 0, 50 * MS, 1 * MS), &a), TEMPI_BAD_SIZE,
               "out->size is 3");
    a.size = 1 << 20;
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, one_task("g", 0, 50 * MS, 1 * MS), &a), TEMPI_BAD_SIZE,
               "it must be between");
    a.size = sizeof a;
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.foreign, one_task("g", 0, 50 * MS, 1 * MS), &a), TEMPI_FOREIGN,
               "another runtime");
    g = NULL;
    EXPECT(tempi_group_new("empty", 0, 50 * MS, &g), TEMPI_OK);
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, g, &a), TEMPI_INVALID_ARGUMENT, "empty");
    EXPECT_TRUE(a.group == 99);
    /* Refused: it cannot fit before its deadline. The answer is written. */
    EXPECT_ERR(tempi_spring_spawn_sync(cx, p.mine, one_task("late", 0, 3 * MS, 5 * MS), &a), TEMPI_REJECTED,
               "the planner refused the group");
    EXPECT_TRUE(a.accepted == 0 && a.group == 0 && a.rejection == TEMPI_REJECTION_INFEASIBLE);
    EXPECT(tempi_spring_spawn_sync(cx, p.mine, one_task("fits", 0, 200 * MS, 1 * MS), &a), TEMPI_OK);
    EXPECT_TRUE(a.accepted == 1 && a.group != 0);

    /* Asynchronous spawns and their tickets. */
    EXPECT_ERR(tempi_spring_spawn_async(cx, p.mine, one_task("g", 0, 50 * MS, 1 * MS), NULL), TEMPI_NULL_ARGUMENT,
               "out is null");
    EXPECT_ERR(tempi_spring_spawn_async(cx, NULL, one_task("g", 0, 50 * MS, 1 * MS), &ticket), TEMPI_NULL_ARGUMENT,
               "s is null");
    EXPECT_ERR(tempi_spring_spawn_async(cx, p.mine, NULL, &ticket), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT_ERR(tempi_spring_spawn_async(NULL, p.mine, one_task("g", 0, 50 * MS, 1 * MS), &ticket),
               TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_spring_spawn_async(cx, p.foreign, one_task("g", 0, 50 * MS, 1 * MS), &ticket), TEMPI_FOREIGN,
               "another runtime");
    EXPECT_TRUE(ticket == 77);
    EXPECT(tempi_spring_spawn_async(cx, p.mine, one_task("later", 0, 300 * MS, 1 * MS), &ticket), TEMPI_OK);
    EXPECT_TRUE(ticket != 0 && ticket != 77);
    EXPECT_ERR(tempi_spring_status(cx, p.mine, 0, &st), TEMPI_FOREIGN, "ticket 0x0 is not of this executor");
    EXPECT_ERR(tempi_spring_status(cx, p.mine, p.yonder_ticket, &st), TEMPI_FOREIGN, "is not of this executor");
    EXPECT_ERR(tempi_spring_status(cx, p.mine, ticket + 1, &st), TEMPI_OUT_OF_RANGE, "no ticket 0x");
    EXPECT_ERR(tempi_spring_status(cx, p.mine, ticket - 1, &st), TEMPI_OUT_OF_RANGE, "no ticket 0x");
    EXPECT_ERR(tempi_spring_status(cx, p.mine, ticket, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_spring_status(cx, NULL, ticket, &st), TEMPI_NULL_ARGUMENT, "s is null");
    EXPECT_ERR(tempi_spring_status(NULL, p.mine, ticket, &st), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_spring_status(cx, p.foreign, ticket, &st), TEMPI_FOREIGN, "another runtime");
    EXPECT_TRUE(st == TEMPI_PLAN_NO);
    EXPECT(tempi_spring_status(cx, p.mine, ticket, &st), TEMPI_OK);
    EXPECT_TRUE(st == TEMPI_PLAN_UNKNOWN);

    /* Kills. */
    EXPECT_ERR(tempi_spring_kill(cx, p.mine, NULL, &n), TEMPI_NULL_ARGUMENT, "name is null");
    EXPECT_ERR(tempi_spring_kill(cx, p.mine, "fits", NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_spring_kill(cx, NULL, "fits", &n), TEMPI_NULL_ARGUMENT, "s is null");
    EXPECT_ERR(tempi_spring_kill(NULL, p.mine, "fits", &n), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_spring_kill(cx, p.mine, "ghost", &n), TEMPI_NO_MATCH, "no live group \"ghost\"");
    EXPECT_ERR(tempi_spring_kill(cx, p.mine, "\xff", &n), TEMPI_INVALID_ARGUMENT, "name is not UTF-8");
    EXPECT_ERR(tempi_spring_kill(cx, p.foreign, "fits", &n), TEMPI_FOREIGN, "another runtime");
    EXPECT_ERR(tempi_spring_kill_id(cx, p.mine, 12345, &n), TEMPI_NO_MATCH, "no live group 12345");
    EXPECT_ERR(tempi_spring_kill_id(cx, p.mine, a.group, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_spring_kill_id(cx, NULL, a.group, &n), TEMPI_NULL_ARGUMENT, "s is null");
    EXPECT_ERR(tempi_spring_kill_id(NULL, p.mine, a.group, &n), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_spring_kill_id(cx, p.foreign, a.group, &n), TEMPI_FOREIGN, "another runtime");
    EXPECT_TRUE(n == 77);
    EXPECT(tempi_spring_kill_id(cx, p.mine, a.group, &n), TEMPI_OK);
    EXPECT_TRUE(n == 1);

    /* Execution-time timers and CPU-time clocks. */
    EXPECT_ERR(tempi_arm_thread_timer(NULL, me, 1 * MS, noop_event, NULL), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_arm_thread_timer(cx, me, 1 * MS, NULL, NULL), TEMPI_NULL_ARGUMENT, "handler is null");
    EXPECT_ERR(tempi_arm_thread_timer(cx, 0, 1 * MS, noop_event, NULL), TEMPI_UNKNOWN_THREAD,
               "thread 0 names no thread");
    EXPECT_ERR(tempi_arm_thread_timer(cx, p.foreign_thread, 1 * MS, noop_event, NULL), TEMPI_FOREIGN,
               "belongs to another runtime");
    EXPECT(tempi_arm_thread_timer(cx, me, 100 * MS, noop_event, NULL), TEMPI_OK);
    EXPECT_ERR(tempi_thread_cpu_time(NULL, me, &n), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_thread_cpu_time(cx, me, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_thread_cpu_time(cx, 0, &n), TEMPI_UNKNOWN_THREAD, "thread 0 names no thread");
    EXPECT_ERR(tempi_thread_cpu_time(cx, p.foreign_thread, &n), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_TRUE(n == 1);

    /* Budgets of sets: a server's, a plain set without one, another runtime's, a freed one's. */
    EXPECT_ERR(tempi_budget_remaining(NULL, p.server, &left), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_budget_remaining(cx, p.server, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_budget_remaining(cx, p.plain, &left), TEMPI_REFUSED, "has no budget");
    EXPECT_ERR(tempi_budget_remaining(cx, p.foreign_set, &left), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_budget_remaining(cx, p.freed_set, &left), TEMPI_INVALID_ARGUMENT, "names no set");
    EXPECT_ERR(tempi_budget_remaining(cx, 0, &left), TEMPI_INVALID_ARGUMENT, "names no set");
    EXPECT_TRUE(left == 77);
    EXPECT(tempi_budget_remaining(cx, p.server, &left), TEMPI_OK);
    EXPECT_TRUE(left == 2 * MS);
    EXPECT_ERR(tempi_replenish_budget(NULL, p.server, 1 * MS), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_replenish_budget(cx, p.plain, 1 * MS), TEMPI_REFUSED, "has no budget");
    EXPECT_ERR(tempi_replenish_budget(cx, p.foreign_set, 1 * MS), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_replenish_budget(cx, p.freed_set, 1 * MS), TEMPI_INVALID_ARGUMENT, "names no set");
    EXPECT_ERR(tempi_add_budget(NULL, p.server, 1), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_add_budget(cx, p.plain, 1), TEMPI_REFUSED, "has no budget");
    EXPECT_ERR(tempi_add_budget(cx, p.foreign_set, 1), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_add_budget(cx, p.freed_set, 1), TEMPI_INVALID_ARGUMENT, "names no set");
    EXPECT(tempi_budget_remaining(cx, p.server, &left), TEMPI_OK);
    EXPECT_TRUE(left == 2 * MS); /* nothing changed it */

    /* Membership from a running thread. */
    EXPECT_ERR(tempi_add_to_set(NULL, p.plain, me), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_add_to_set(cx, p.plain, 0), TEMPI_UNKNOWN_THREAD, "thread 0 names no thread");
    EXPECT_ERR(tempi_add_to_set(cx, p.foreign_set, me), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_add_to_set(cx, p.plain, p.foreign_thread), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_add_to_set(cx, p.freed_set, me), TEMPI_INVALID_ARGUMENT, "names no set");
    EXPECT_ERR(tempi_remove_from_set(NULL, p.plain, me), TEMPI_NULL_ARGUMENT, "cx is null");
    EXPECT_ERR(tempi_remove_from_set(cx, p.plain, me), TEMPI_REFUSED, "is not a member of set");
    EXPECT_ERR(tempi_remove_from_set(cx, p.plain, 0), TEMPI_UNKNOWN_THREAD, "thread 0 names no thread");
    EXPECT_ERR(tempi_remove_from_set(cx, p.foreign_set, me), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_remove_from_set(cx, p.plain, p.foreign_thread), TEMPI_FOREIGN, "belongs to another runtime");
    EXPECT_ERR(tempi_remove_from_set(cx, p.freed_set, me), TEMPI_INVALID_ARGUMENT, "names no set");
    EXPECT(tempi_add_to_set(cx, p.plain, me), TEMPI_OK);
    EXPECT_ERR(tempi_add_to_set(cx, p.server, me), TEMPI_REFUSED, "already belongs to set");
    EXPECT(tempi_remove_from_set(cx, p.plain, me), TEMPI_OK);
}

/* On a third runtime, run first: a ticket of its executor. */
static void yonder_app(tempi_ctx *cx, void *userdata) {
    tempi_spring *s = (tempi_spring *)userdata;
    EXPECT(tempi_spring_spawn_async(cx, s, one_task("far", 0, 50 * MS, 1 * MS), &p.yonder_ticket), TEMPI_OK);
}

static void yonder(void) {
    tempi_runtime_params rp;
    tempi_spring_params sp;
    tempi_thread_params tp;
    tempi_runtime *rt;
    tempi_spring *s;
    tempi_outcome *out;
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &rt), TEMPI_OK);
    EXPECT(tempi_spring_params_init(&sp), TEMPI_OK);
    EXPECT(tempi_runtime_create_spring(rt, &sp, &s), TEMPI_OK);
    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    EXPECT(tempi_runtime_spawn(rt, &tp, yonder_app, s, NULL), TEMPI_OK);
    EXPECT(tempi_runtime_run(rt, 1 * MS, &out), TEMPI_OK);
    EXPECT_TRUE(p.yonder_ticket != 0);
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
}

static void spring_before_the_run(tempi_runtime *rt, tempi_runtime *other, tempi_runtime *ended) {
    tempi_spring_params sp;
    tempi_spring *untouched = (tempi_spring *)&passed;
    tempi_runtime *fresh, *global;
    tempi_runtime_params rp;
    unsigned char big[sizeof(tempi_spring_params) + 16];

    EXPECT_ERR(tempi_spring_params_init(NULL), TEMPI_NULL_ARGUMENT, "params is null");
    EXPECT(tempi_spring_params_init(&sp), TEMPI_OK);
    EXPECT_ERR(tempi_runtime_create_spring(NULL, &sp, &untouched), TEMPI_NULL_ARGUMENT, "rt is null");
    EXPECT_ERR(tempi_runtime_create_spring(rt, NULL, &untouched), TEMPI_NULL_ARGUMENT, "params is null");
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_runtime_create_spring(ended, &sp, &untouched), TEMPI_ENDED, "the runtime has already run");
    sp.size = 0;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_BAD_SIZE, "params->size is 0");
    sp.size = sizeof sp - 8;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_BAD_SIZE, "it must be between");
    sp.size = 1 << 20;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_BAD_SIZE, "it must be between");
    sp.size = sizeof sp;
    memset(big, 0, sizeof big);
    memcpy(big, &sp, sizeof sp);
    ((tempi_spring_params *)(void *)big)->size = sizeof big;
    big[sizeof big - 1] = 1;
    EXPECT_ERR(tempi_runtime_create_spring(rt, (tempi_spring_params *)(void *)big, &untouched), TEMPI_BAD_SIZE,
               "the rest is not zero");
    sp.heuristic = "nope";
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_UNKNOWN_NAME, "no heuristic \"nope\"");
    sp.heuristic = "\xff";
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_INVALID_ARGUMENT,
               "params->heuristic is not UTF-8");
    sp.heuristic = "min-d";
    sp.placement = "nope";
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_UNKNOWN_NAME, "no placement \"nope\"");
    sp.placement = NULL;
    sp.sets_per_cpu = 1u << 30;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_INVALID_ARGUMENT, "sets_per_cpu");
    sp.sets_per_cpu = 8;
    sp.max_groups = 1u << 30;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_INVALID_ARGUMENT, "max_groups");
    sp.max_groups = 256;
    sp.resources = 1u << 20;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_INVALID_ARGUMENT, "planner");
    sp.resources = 0;
    sp.max_tasks = UINT64_MAX;
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_INVALID_ARGUMENT, "planner");
    sp.max_tasks = 1024;
    /* A global scheduler migrates threads: a plan cannot hold them to a CPU. */
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    rp.scheduler = "global-edf";
    EXPECT(tempi_runtime_new(&rp, &global), TEMPI_OK);
    EXPECT_ERR(tempi_runtime_create_spring(global, &sp, &untouched), TEMPI_INVALID_ARGUMENT, "per-CPU scheduler");
    tempi_runtime_free(global);
    EXPECT_TRUE(untouched == (tempi_spring *)&passed);
    /* A larger struct with a zero tail is accepted. */
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &fresh), TEMPI_OK);
    big[sizeof big - 1] = 0;
    EXPECT(tempi_runtime_create_spring(fresh, (tempi_spring_params *)(void *)big, &untouched), TEMPI_OK);
    tempi_runtime_free(fresh);

    sp.planner_wcet_ns = 2 * MS;
    sp.safety_ns = 0;
    EXPECT(tempi_runtime_create_spring(rt, &sp, &p.mine), TEMPI_OK);
    EXPECT_ERR(tempi_runtime_create_spring(rt, &sp, &untouched), TEMPI_REFUSED, "already has a plan executor");
    EXPECT(tempi_runtime_create_spring(other, &sp, &p.foreign), TEMPI_OK);
}

static void groups_before_the_run(tempi_runtime *rt, tempi_runtime *ended) {
    tempi_group *g = NULL, *untouched = (tempi_group *)&passed, *child;
    tempi_task_params t;
    tempi_resource_use use;
    uint32_t a = 77, after = 0;
    unsigned char big[sizeof(tempi_task_params) + 16];

    EXPECT_ERR(tempi_group_new(NULL, 0, 10 * MS, &untouched), TEMPI_NULL_ARGUMENT, "name is null");
    EXPECT_ERR(tempi_group_new("g", 0, 10 * MS, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_group_new("\xff", 0, 10 * MS, &untouched), TEMPI_INVALID_ARGUMENT, "name is not UTF-8");
    EXPECT_TRUE(untouched == (tempi_group *)&passed);
    EXPECT(tempi_group_new("g", 0, 100 * MS, &g), TEMPI_OK);
    EXPECT_ERR(tempi_group_set(NULL, 1, 0), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT(tempi_group_set(g, 1, 0), TEMPI_OK);

    EXPECT_ERR(tempi_group_add_thread(NULL, "a", NULL, 0, 0, 0, &a), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT_ERR(tempi_group_add_thread(g, NULL, NULL, 0, 0, 0, &a), TEMPI_NULL_ARGUMENT, "name is null");
    EXPECT_ERR(tempi_group_add_thread(g, "a", NULL, 0, 0, 0, NULL), TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_group_add_thread(g, "a", NULL, 1, 0, 0, &a), TEMPI_NULL_ARGUMENT, "after is null");
    EXPECT_ERR(tempi_group_add_thread(g, "a", NULL, 0, 1, 1u << 20, &a), TEMPI_INVALID_ARGUMENT,
               "home_cpu 1048576 is too large");
    EXPECT_TRUE(a == 77);
    EXPECT(tempi_group_add_thread(g, "a", NULL, 0, 0, 0, &a), TEMPI_OK);
    EXPECT_TRUE(a == 0);

    task_params(&t, 1 * MS);
    EXPECT_ERR(tempi_group_add_task(NULL, a, &t), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT_ERR(tempi_group_add_task(g, a, NULL), TEMPI_NULL_ARGUMENT, "params is null");
    EXPECT_ERR(tempi_group_add_task(g, 7, &t), TEMPI_OUT_OF_RANGE, "thread 7: the group has 1 threads");
    t.size = 0;
    EXPECT_ERR(tempi_group_add_task(g, a, &t), TEMPI_BAD_SIZE, "params->size is 0");
    t.size = sizeof t - 8;
    EXPECT_ERR(tempi_group_add_task(g, a, &t), TEMPI_BAD_SIZE, "it must be between");
    t.size = sizeof t;
    memset(big, 0, sizeof big);
    memcpy(big, &t, sizeof t);
    ((tempi_task_params *)(void *)big)->size = sizeof big;
    big[sizeof big - 1] = 1;
    EXPECT_ERR(tempi_group_add_task(g, a, (tempi_task_params *)(void *)big), TEMPI_BAD_SIZE, "the rest is not zero");
    t.use_count = 1;
    EXPECT_ERR(tempi_group_add_task(g, a, &t), TEMPI_NULL_ARGUMENT, "params->uses is null");
    use.resource = 1u << 20;
    use.exclusive = 1;
    t.uses = &use;
    EXPECT_ERR(tempi_group_add_task(g, a, &t), TEMPI_INVALID_ARGUMENT, "resource 1048576 is too large");
    t.uses = NULL;
    t.use_count = 0;
    big[sizeof big - 1] = 0;
    EXPECT(tempi_group_add_task(g, a, (tempi_task_params *)(void *)big), TEMPI_OK); /* a zero tail is fine */

    /* Dependents: the child is consumed by every call. */
    EXPECT(tempi_group_new("child", 0, 100 * MS, &child), TEMPI_OK);
    EXPECT_ERR(tempi_group_add_dependent(NULL, child), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT_ERR(tempi_group_add_dependent(g, NULL), TEMPI_NULL_ARGUMENT, "g is null");

    /* Declaring groups. */
    EXPECT_ERR(tempi_spring_add_group(NULL, p.mine, one_task("d", 0, 10 * MS, 1 * MS)), TEMPI_NULL_ARGUMENT,
               "rt is null");
    EXPECT_ERR(tempi_spring_add_group(rt, NULL, one_task("d", 0, 10 * MS, 1 * MS)), TEMPI_NULL_ARGUMENT, "s is null");
    EXPECT_ERR(tempi_spring_add_group(rt, p.mine, NULL), TEMPI_NULL_ARGUMENT, "g is null");
    EXPECT_ERR(tempi_spring_add_group(rt, p.foreign, one_task("d", 0, 10 * MS, 1 * MS)), TEMPI_FOREIGN,
               "another runtime");
    EXPECT_ERR(tempi_spring_add_group(ended, p.mine, one_task("d", 0, 10 * MS, 1 * MS)), TEMPI_ENDED,
               "the runtime has already run");
    EXPECT_ERR(tempi_spring_add_group(rt, p.mine, one_task("backwards", 10 * MS, 5 * MS, 1 * MS)),
               TEMPI_INVALID_ARGUMENT, "backwards");
    {
        tempi_group *h = NULL;
        task_params(&t, 1 * MS);
        EXPECT(tempi_group_new("selfish", 0, 10 * MS, &h), TEMPI_OK);
        EXPECT(tempi_group_add_thread(h, "a", &after, 1, 0, 0, &a), TEMPI_OK);
        EXPECT(tempi_group_add_task(h, a, &t), TEMPI_OK);
        EXPECT_ERR(tempi_spring_add_group(rt, p.mine, h), TEMPI_INVALID_ARGUMENT, "selfish");
        EXPECT(tempi_group_new("hoarder", 0, 10 * MS, &h), TEMPI_OK);
        EXPECT(tempi_group_add_thread(h, "a", NULL, 0, 0, 0, &a), TEMPI_OK);
        use.resource = 3;
        use.exclusive = 0;
        t.uses = &use;
        t.use_count = 1;
        EXPECT(tempi_group_add_task(h, a, &t), TEMPI_OK);
        EXPECT_ERR(tempi_spring_add_group(rt, p.mine, h), TEMPI_INVALID_ARGUMENT, "hoarder");
    }
    EXPECT(tempi_spring_add_group(rt, p.mine, g), TEMPI_OK);

    {
        tempi_task_info info;
        uint64_t n = 77;
        memset(&info, 0, sizeof info);
        info.size = sizeof info;
        info.planned_finish_ns = 4;
        info.wcet_ns = 5;
        EXPECT_ERR(tempi_task_scaled(NULL, 5, &n), TEMPI_NULL_ARGUMENT, "task is null");
        EXPECT_ERR(tempi_task_scaled(&info, 5, NULL), TEMPI_NULL_ARGUMENT, "out is null");
        EXPECT_TRUE(n == 77);
        EXPECT(tempi_task_scaled(&info, 5, &n), TEMPI_OK);
        EXPECT_TRUE(n == 4);
    }
}

static void timers_before_the_run(tempi_runtime *rt, tempi_runtime *ended, tempi_thread app_thread) {
    tempi_timer_params ti;
    tempi_runtime_params rp;
    tempi_runtime *small;
    unsigned char big[sizeof(tempi_timer_params) + 16];

    memset(&ti, 0, sizeof ti);
    ti.size = sizeof ti;
    ti.first_ns = 1 * MS;
    EXPECT_ERR(tempi_runtime_add_timer(NULL, &ti, event_misuse, NULL), TEMPI_NULL_ARGUMENT, "rt is null");
    EXPECT_ERR(tempi_runtime_add_timer(rt, NULL, event_misuse, NULL), TEMPI_NULL_ARGUMENT, "params is null");
    EXPECT_ERR(tempi_runtime_add_timer(rt, &ti, NULL, NULL), TEMPI_NULL_ARGUMENT, "handler is null");
    EXPECT_ERR(tempi_runtime_add_timer(ended, &ti, event_misuse, NULL), TEMPI_ENDED, "the runtime has already run");
    ti.size = 0;
    EXPECT_ERR(tempi_runtime_add_timer(rt, &ti, event_misuse, NULL), TEMPI_BAD_SIZE, "params->size is 0");
    ti.size = sizeof ti - 8;
    EXPECT_ERR(tempi_runtime_add_timer(rt, &ti, event_misuse, NULL), TEMPI_BAD_SIZE, "it must be between");
    ti.size = 1 << 20;
    EXPECT_ERR(tempi_runtime_add_timer(rt, &ti, event_misuse, NULL), TEMPI_BAD_SIZE, "it must be between");
    ti.size = sizeof ti;
    memset(big, 0, sizeof big);
    memcpy(big, &ti, sizeof ti);
    ((tempi_timer_params *)(void *)big)->size = sizeof big;
    big[sizeof big - 1] = 1;
    EXPECT_ERR(tempi_runtime_add_timer(rt, (tempi_timer_params *)(void *)big, event_misuse, NULL), TEMPI_BAD_SIZE,
               "the rest is not zero");
    ti.cpu = 3;
    EXPECT_ERR(tempi_runtime_add_timer(rt, &ti, event_misuse, NULL), TEMPI_NO_SUCH_CPU, "CPU 3 does not exist");
    ti.cpu = 0;
    big[sizeof big - 1] = 0;
    EXPECT(tempi_runtime_add_timer(rt, (tempi_timer_params *)(void *)big, event_misuse, NULL), TEMPI_OK);
    /* More events than the runtime's configuration holds. */
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    rp.max_timers = 1;
    rp.max_threads = 1;
    rp.max_sets = 1;
    EXPECT(tempi_runtime_new(&rp, &small), TEMPI_OK);
    {
        tempi_status s = TEMPI_OK;
        int i;
        for (i = 0; i < 64 && s == TEMPI_OK; i++) {
            s = tempi_runtime_add_timer(small, &ti, noop_event, NULL);
        }
        /* The first fits, the second does not: the configuration holds one per CPU. */
        EXPECT(s, TEMPI_INVALID_ARGUMENT);
        EXPECT_TRUE(i == 2 && names("tempi_runtime_add_timer", "more than 1 timing events"));
    }
    tempi_runtime_free(small);

    EXPECT_ERR(tempi_runtime_arm_thread_timer(NULL, app_thread, 1 * MS, noop_event, NULL), TEMPI_NULL_ARGUMENT,
               "rt is null");
    EXPECT_ERR(tempi_runtime_arm_thread_timer(rt, app_thread, 1 * MS, NULL, NULL), TEMPI_NULL_ARGUMENT,
               "handler is null");
    EXPECT_ERR(tempi_runtime_arm_thread_timer(rt, 0, 1 * MS, noop_event, NULL), TEMPI_UNKNOWN_THREAD,
               "thread 0 names no thread");
    EXPECT_ERR(tempi_runtime_arm_thread_timer(rt, p.foreign_thread, 1 * MS, noop_event, NULL), TEMPI_FOREIGN,
               "belongs to another runtime");
    EXPECT_ERR(tempi_runtime_arm_thread_timer(ended, app_thread, 1 * MS, noop_event, NULL), TEMPI_ENDED,
               "the runtime has already run");
    EXPECT(tempi_runtime_arm_thread_timer(rt, app_thread, 100 * MS, noop_event, NULL), TEMPI_OK);

    EXPECT_ERR(tempi_runtime_arm_set_timer(NULL, p.server, 1 * MS, noop_event, NULL), TEMPI_NULL_ARGUMENT,
               "rt is null");
    EXPECT_ERR(tempi_runtime_arm_set_timer(rt, p.server, 1 * MS, NULL, NULL), TEMPI_NULL_ARGUMENT, "handler is null");
    EXPECT_ERR(tempi_runtime_arm_set_timer(rt, p.foreign_set, 1 * MS, noop_event, NULL), TEMPI_FOREIGN,
               "is not of this runtime");
    EXPECT_ERR(tempi_runtime_arm_set_timer(rt, p.freed_set, 1 * MS, noop_event, NULL), TEMPI_FOREIGN,
               "is not of this runtime");
    EXPECT_ERR(tempi_runtime_arm_set_timer(rt, p.server + 100, 1 * MS, noop_event, NULL), TEMPI_INVALID_ARGUMENT,
               "names no set");
    EXPECT_ERR(tempi_runtime_arm_set_timer(ended, p.server, 1 * MS, noop_event, NULL), TEMPI_ENDED,
               "the runtime has already run");
    EXPECT(tempi_runtime_arm_set_timer(rt, p.server, 100 * MS, noop_event, NULL), TEMPI_OK);
}

static void servers_before_the_run(tempi_runtime *rt, tempi_runtime *other, tempi_runtime *ended) {
    tempi_set untouched = 77;
    tempi_runtime_params rp;
    tempi_runtime *gone;

    EXPECT_ERR(tempi_runtime_create_server(NULL, "s", 0, TEMPI_SERVER_DEFERRABLE, 2 * MS, 10 * MS, &untouched),
               TEMPI_NULL_ARGUMENT, "rt is null");
    EXPECT_ERR(tempi_runtime_create_server(rt, NULL, 0, TEMPI_SERVER_DEFERRABLE, 2 * MS, 10 * MS, &untouched),
               TEMPI_NULL_ARGUMENT, "name is null");
    EXPECT_ERR(tempi_runtime_create_server(rt, "s", 0, TEMPI_SERVER_DEFERRABLE, 2 * MS, 10 * MS, NULL),
               TEMPI_NULL_ARGUMENT, "out is null");
    EXPECT_ERR(tempi_runtime_create_server(rt, "s", 0, 7, 2 * MS, 10 * MS, &untouched), TEMPI_INVALID_ARGUMENT,
               "kind is 7: not a tempi_server");
    EXPECT_ERR(tempi_runtime_create_server(rt, "s", 0, TEMPI_SERVER_SPORADIC, 2 * MS, 0, &untouched),
               TEMPI_INVALID_ARGUMENT, "period_ns is 0");
    EXPECT_ERR(tempi_runtime_create_server(rt, "s", 4, TEMPI_SERVER_SPORADIC, 2 * MS, 10 * MS, &untouched),
               TEMPI_NO_SUCH_CPU, "CPU 4 does not exist");
    EXPECT_ERR(tempi_runtime_create_server(rt, "\xff", 0, TEMPI_SERVER_SPORADIC, 2 * MS, 10 * MS, &untouched),
               TEMPI_INVALID_ARGUMENT, "name is not UTF-8");
    EXPECT_ERR(tempi_runtime_create_server(ended, "s", 0, TEMPI_SERVER_SPORADIC, 2 * MS, 10 * MS, &untouched),
               TEMPI_ENDED, "the runtime has already run");
    EXPECT_TRUE(untouched == 77);
    EXPECT(tempi_runtime_create_server(rt, "server", 0, TEMPI_SERVER_DEFERRABLE, 2 * MS, 10 * MS, &p.server),
           TEMPI_OK);
    EXPECT(tempi_runtime_create_set(rt, "plain", 0, &p.plain), TEMPI_OK);
    EXPECT(tempi_runtime_create_server(other, "theirs", 0, TEMPI_SERVER_SPORADIC, 2 * MS, 10 * MS, &p.foreign_set),
           TEMPI_OK);
    /* A set whose runtime is freed names no set any more. */
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &gone), TEMPI_OK);
    EXPECT(tempi_runtime_create_server(gone, "gone", 0, TEMPI_SERVER_SPORADIC, 2 * MS, 10 * MS, &p.freed_set),
           TEMPI_OK);
    tempi_runtime_free(gone);
    EXPECT_ERR(tempi_runtime_add_to_set(rt, p.freed_set, 1), TEMPI_FOREIGN, "is not of this runtime");
}

int main(void) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_runtime *rt, *other, *ended;
    tempi_outcome *out;
    tempi_thread app_thread = 0;

    setvbuf(stdout, NULL, _IONBF, 0); /* a crash still shows what failed before it */
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &rt), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &other), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &ended), TEMPI_OK);
    EXPECT(tempi_runtime_run(ended, 1 * MS, &out), TEMPI_OK);
    tempi_outcome_free(out);

    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    tp.name = "theirs";
    EXPECT(tempi_runtime_spawn(other, &tp, idle, NULL, &p.foreign_thread), TEMPI_OK);
    tp.name = "on-demand";
    tp.timing = TEMPI_SPORADIC;
    EXPECT(tempi_runtime_spawn(rt, &tp, idle, NULL, &p.sporadic), TEMPI_OK);
    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    tp.name = "app";
    tp.priority = 5;
    EXPECT(tempi_runtime_spawn(rt, &tp, app, NULL, &app_thread), TEMPI_OK);

    yonder();
    spring_before_the_run(rt, other, ended);
    groups_before_the_run(rt, ended);
    servers_before_the_run(rt, other, ended);
    timers_before_the_run(rt, ended, app_thread);

    EXPECT(tempi_runtime_run(rt, 400 * MS, &out), TEMPI_OK);
    EXPECT_TRUE(p.handler_ran == 1);
    /* The executor and its runtime's ended: declaring is refused, the records stay. */
    EXPECT_ERR(tempi_spring_add_group(rt, p.mine, one_task("late", 0, 10 * MS, 1 * MS)), TEMPI_ENDED,
               "the runtime has already run");
    EXPECT_ERR(tempi_runtime_create_server(rt, "s", 0, TEMPI_SERVER_SPORADIC, 2 * MS, 10 * MS, &app_thread),
               TEMPI_ENDED, "the runtime has already run");
    EXPECT_ERR(tempi_runtime_arm_set_timer(rt, p.server, 1 * MS, noop_event, NULL), TEMPI_ENDED,
               "the runtime has already run");
    {
        size_t n = 0;
        EXPECT(tempi_outcome_spring_decision_count(out, &n), TEMPI_OK);
        EXPECT_TRUE(n == 4); /* the declared group, late, fits and later */
    }
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    tempi_runtime_free(other);
    tempi_runtime_free(ended);
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
