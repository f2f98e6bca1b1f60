/* Spring thread groups from C: a group declared before the run (two threads, the second after
 * the first and holding a resource), and a thread that spawns groups while the run goes on:
 * synchronously (accepted, then killed by id before it starts), asynchronously (refused,
 * learnt once the planner's time has passed) and synchronously again (refused:
 * TEMPI_REJECTED), then kills the declared group while its first task runs. Two CPUs, virtual time; prints the answers, then the plan's records.
 * crates/tempi-c/tests/c/examples.rs runs the same scenario through the Rust API and
 * compares the output line for line. */
#include <stdio.h>

#include "tempi.h"

#define MS 1000000ull

static tempi_spring *spring;

/* The C code of task "sense/read#0": works its WCET, scaled to its window. */
static void read_sensor(tempi_ctx *cx, const tempi_task_info *task, void *userdata) {
    uint64_t demand, now = 0;
    (void)userdata;
    tempi_task_scaled(task, 3 * MS, &demand);
    tempi_now(cx, &now);
    printf("task %u/%u#%u starts at %llu (planned %llu..%llu)\n", (unsigned)task->group, task->thread, task->task,
           (unsigned long long)now, (unsigned long long)task->planned_start_ns,
           (unsigned long long)task->planned_finish_ns);
    if (tempi_work(cx, demand) != TEMPI_OK) {
        return;
    }
}

/* A group of one thread "name" with `tasks` tasks working `work_ns` each. */
static tempi_group *group_of(const char *group, uint64_t deadline_ns, int tasks, uint64_t work_ns) {
    tempi_group *g;
    tempi_task_params tk = {0};
    uint32_t t;
    int i;
    tempi_group_new(group, 0, deadline_ns, &g);
    tempi_group_add_thread(g, "b", NULL, 0, 0, 0, &t);
    tk.size = sizeof tk;
    tk.wcet_ns = work_ns;
    tk.work_ns = work_ns;
    for (i = 0; i < tasks; i++) {
        tempi_group_add_task(g, t, &tk);
    }
    return g;
}

static void app(tempi_ctx *cx, void *userdata) {
    tempi_plan_answer answer;
    tempi_plan_status status;
    uint64_t ticket, removed, now;
    tempi_status s;
    (void)userdata;
    if (tempi_sleep_until(cx, 1 * MS) != TEMPI_OK) {
        return;
    }
    answer.size = sizeof answer;
    s = tempi_spring_spawn_sync(cx, spring, group_of("burst", 12 * MS, 2, 1 * MS), &answer);
    tempi_now(cx, &now);
    printf("at %llu: burst %s (group %llu)\n", (unsigned long long)now, tempi_status_str(s),
           (unsigned long long)answer.group);
    s = tempi_spring_kill_id(cx, spring, answer.group, &removed);
    printf("kill burst: %s, %llu task(s) removed\n", tempi_status_str(s), (unsigned long long)removed);
    s = tempi_spring_spawn_async(cx, spring, group_of("late", 4 * MS, 1, 3 * MS), &ticket);
    tempi_spring_status(cx, spring, ticket, &status);
    printf("late: %s, ticket %s, status %d\n", tempi_status_str(s), ticket != 0 ? "given" : "none", (int)status);
    if (tempi_sleep(cx, 2 * MS) != TEMPI_OK) {
        return;
    }
    tempi_spring_status(cx, spring, ticket, &status);
    tempi_now(cx, &now);
    printf("at %llu: late status %d\n", (unsigned long long)now, (int)status);
    s = tempi_spring_spawn_sync(cx, spring, group_of("never", 6 * MS, 1, 5 * MS), &answer);
    tempi_now(cx, &now);
    printf("at %llu: never %s (rejection %u)\n", (unsigned long long)now, tempi_status_str(s), answer.rejection);
    s = tempi_spring_kill(cx, spring, "sense", &removed);
    printf("kill sense: %s, %llu task(s) removed\n", tempi_status_str(s), (unsigned long long)removed);
    s = tempi_spring_kill(cx, spring, "nobody", &removed);
    printf("kill nobody: %s\n", tempi_status_str(s));
}

static const char *outcome_name(uint32_t o) {
    static const char *names[] = {"planned", "running", "completed", "overrun", "killed", "panicked"};
    return o < 6 ? names[o] : "?";
}

int main(void) {
    tempi_runtime_params rp;
    tempi_spring_params sp;
    tempi_thread_params tp;
    tempi_task_params tk = {0};
    tempi_resource_use fuse_uses[1] = {{0, 1}};
    tempi_runtime *rt;
    tempi_outcome *out;
    tempi_group *g;
    uint32_t read, fuse;
    size_t n, i;

    tempi_runtime_params_init(&rp);
    rp.cpus = 2;
    if (tempi_runtime_new(&rp, &rt) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        return 1;
    }
    tempi_spring_params_init(&sp);
    sp.resources = 1;
    sp.planner_wcet_ns = 2 * MS;
    sp.safety_ns = 0;
    if (tempi_runtime_create_spring(rt, &sp, &spring) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        return 1;
    }

    /* "sense": read (C code), then fuse (2 ms of work against a 4 ms WCET, resource 0). */
    tempi_group_new("sense", 0, 20 * MS, &g);
    tempi_group_add_thread(g, "read", NULL, 0, 0, 0, &read);
    tempi_group_add_thread(g, "fuse", &read, 1, 0, 0, &fuse);
    tk.size = sizeof tk;
    tk.wcet_ns = 3 * MS;
    tk.body = read_sensor;
    tempi_group_add_task(g, read, &tk);
    tk.body = NULL;
    tk.wcet_ns = 4 * MS;
    tk.work_ns = 2 * MS;
    tk.uses = fuse_uses;
    tk.use_count = 1;
    tempi_group_add_task(g, fuse, &tk);
    if (tempi_spring_add_group(rt, spring, g) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        return 1;
    }

    tempi_thread_params_init(&tp);
    tp.name = "app";
    tp.cpu = 1;
    tp.priority = 1;
    tempi_runtime_spawn(rt, &tp, app, NULL, NULL);

    if (tempi_runtime_run(rt, UINT64_MAX, &out) != TEMPI_OK) {
        fprintf(stderr, "%s\n", tempi_last_error());
        return 1;
    }
    tempi_outcome_spring_decision_count(out, &n);
    for (i = 0; i < n; i++) {
        tempi_spring_decision d;
        d.size = sizeof d;
        tempi_outcome_spring_decision(out, i, &d);
        printf("decision %s: accepted %u rejection %u id %llu requested %llu decided %llu tasks %llu k %llu "
               "evaluations %llu cost %llu budget %llu cutoff %llu\n",
               d.group, d.accepted, d.rejection, (unsigned long long)d.id, (unsigned long long)d.requested_ns,
               (unsigned long long)d.decided_ns, (unsigned long long)d.tasks, (unsigned long long)d.k,
               (unsigned long long)d.evaluations, (unsigned long long)d.cost_ns, (unsigned long long)d.budget_ns,
               (unsigned long long)d.cutoff_ns);
    }
    tempi_outcome_spring_task_count(out, &n);
    for (i = 0; i < n; i++) {
        tempi_spring_task t;
        t.size = sizeof t;
        tempi_outcome_spring_task(out, i, &t);
        printf("task %s/%s#%u cpu %u planned %llu..%llu actual %llu..%llu %s\n", t.group, t.thread, t.task, t.cpu,
               (unsigned long long)t.planned_start_ns, (unsigned long long)t.planned_finish_ns,
               (unsigned long long)t.actual_start_ns, (unsigned long long)t.actual_finish_ns,
               outcome_name(t.outcome));
    }
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    return 0;
}
