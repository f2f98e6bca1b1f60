/* Admission with a NACK and a resubmission, from C. One CPU under EDF has a PORTS admission
 * test. A submitter, due 1 ns after its release so that nothing it starts runs ahead of it,
 * asks how much idle time there is before 10 ms, submits "first" (WCET 6 ms), then "big"
 * (WCET 5 ms), which no longer fits: the answer is TEMPI_NACK with the idle time left, 4 ms.
 * It resubmits "big" with that WCET, which fits. "first" uses 5 ms of its 6 (the rest goes
 * back to the later jobs), "big" its 4 ms; no deadline is missed. The program prints the
 * answers, the decisions the admission logged, and every job of the run.
 *
 *   ./admission      (virtual time, until every thread has ended) */
#include <stdio.h>
#include <stdlib.h>

#include "tempi.h"

#define MS 1000000ull

static void check(tempi_status status, const char *what) {
    if (status != TEMPI_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, tempi_status_str(status), tempi_last_error());
        exit(1);
    }
}

static void job(tempi_ctx *cx, void *userdata) {
    const uint64_t *work = (const uint64_t *)userdata;
    (void)tempi_work(cx, *work); /* killed at its WCET if it ran past it: nothing more to do */
}

static const uint64_t first_work = 5 * MS, big_work = 4 * MS;

/* Submit `name` with `wcet`, due at 10 ms; prints the answer and returns its status. */
static tempi_status submit(tempi_ctx *cx, tempi_admission *adm, const char *name, uint64_t wcet,
                           const uint64_t *work, tempi_admit_answer *answer) {
    tempi_job_request r;
    tempi_status s;
    r.size = sizeof r;
    r.name = name;
    r.wcet_ns = wcet;
    r.deadline_ns = 10 * MS;
    r.body = job;
    r.userdata = (void *)work;
    answer->size = sizeof *answer;
    s = tempi_admit(cx, adm, &r, answer);
    printf("admit %s wcet %llu: %s admitted %u cpu %u idle %llu\n", name, (unsigned long long)wcet,
           tempi_status_str(s), answer->admitted, answer->cpu, (unsigned long long)answer->idle_ns);
    return s;
}

static void submitter(tempi_ctx *cx, void *userdata) {
    tempi_admission *adm = (tempi_admission *)userdata;
    tempi_admit_answer answer;
    uint64_t idle;
    if (tempi_admission_idle_before(cx, adm, 10 * MS, &idle) != TEMPI_OK) {
        return;
    }
    printf("idle before %llu: %llu\n", (unsigned long long)(10 * MS), (unsigned long long)idle);
    if (submit(cx, adm, "first", 6 * MS, &first_work, &answer) != TEMPI_OK) {
        return;
    }
    if (submit(cx, adm, "big", 5 * MS, &big_work, &answer) == TEMPI_NACK) {
        /* The NACK says how much would fit: resubmit a job of that WCET. */
        (void)submit(cx, adm, "big", answer.idle_ns, &big_work, &answer);
    }
}

int main(void) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_admission_params ap;
    tempi_runtime *rt;
    tempi_admission *adm;
    tempi_outcome *out;
    size_t i, n;

    check(tempi_runtime_params_init(&rp), "tempi_runtime_params_init");
    rp.scheduler = "edf";
    check(tempi_runtime_new(&rp, &rt), "tempi_runtime_new");
    check(tempi_admission_params_init(&ap), "tempi_admission_params_init");
    ap.engine = "tree";
    check(tempi_runtime_create_admission(rt, &ap, &adm), "tempi_runtime_create_admission");

    check(tempi_thread_params_init(&tp), "tempi_thread_params_init");
    tp.name = "submitter";
    tp.deadline_ns = 1;
    check(tempi_runtime_spawn(rt, &tp, submitter, adm, NULL), "tempi_runtime_spawn");

    check(tempi_runtime_run(rt, UINT64_MAX, &out), "tempi_runtime_run");

    check(tempi_admission_decision_count(adm, &n), "tempi_admission_decision_count");
    for (i = 0; i < n; i++) {
        tempi_decision_record d;
        d.size = sizeof d;
        check(tempi_admission_decision(adm, i, &d), "tempi_admission_decision");
        printf("decision %s at %llu cpu %u target %u wcet %llu deadline %llu idle %llu accepted %u\n", d.request,
               (unsigned long long)d.time_ns, d.cpu, d.target_cpu, (unsigned long long)d.wcet_ns,
               (unsigned long long)d.deadline_ns, (unsigned long long)d.idle_ns, d.accepted);
    }
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
