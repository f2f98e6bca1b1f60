/* Misuse of the C API's admission, messages and handlers: every call answers its status,
 * leaves its out-parameters alone (but for TEMPI_NACK and TEMPI_CANCELLED, which write their
 * answer), and sets tempi_last_error(). Prints "N passed, N failed" and exits 1 on any
 * failure. */
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

static void short_job(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    (void)tempi_work(cx, 1 * MS);
}

typedef struct admission_probe {
    tempi_admission *mine;
    tempi_admission *foreign;
} admission_probe;

static void request_init(tempi_job_request *r, uint64_t wcet, uint64_t deadline) {
    r->size = sizeof *r;
    r->name = "j";
    r->wcet_ns = wcet;
    r->deadline_ns = deadline;
    r->body = short_job;
    r->userdata = NULL;
}

static void submitter(tempi_ctx *cx, void *userdata) {
    admission_probe *p = (admission_probe *)userdata;
    tempi_job_request r;
    tempi_admit_answer a;
    uint64_t idle = 77;

    EXPECT(tempi_admission_idle_before(cx, NULL, 10 * MS, &idle), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admission_idle_before(cx, p->mine, 10 * MS, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admission_idle_before(NULL, p->mine, 10 * MS, &idle), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admission_idle_before(cx, p->foreign, 10 * MS, &idle), TEMPI_FOREIGN);
    EXPECT_TRUE(idle == 77);
    EXPECT(tempi_admission_idle_before(cx, p->mine, 10 * MS, &idle), TEMPI_OK);
    EXPECT_TRUE(idle == 10 * MS);

    request_init(&r, 2 * MS, 10 * MS);
    a.size = sizeof a;
    a.thread = 99;
    EXPECT(tempi_admit(cx, p->mine, NULL, &a), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admit(cx, p->mine, &r, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admit(cx, NULL, &r, &a), TEMPI_NULL_ARGUMENT);
    r.size = 3;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_BAD_SIZE);
    r.size = sizeof r;
    a.size = 2;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_BAD_SIZE);
    a.size = sizeof a;
    r.body = NULL;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_NULL_ARGUMENT);
    r.body = short_job;
    r.wcet_ns = 0;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_INVALID_ARGUMENT);
    r.wcet_ns = 2 * MS;
    r.deadline_ns = (uint64_t)1 << 63;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_INVALID_ARGUMENT);
    r.deadline_ns = 10 * MS;
    EXPECT(tempi_admit(cx, p->foreign, &r, &a), TEMPI_FOREIGN);
    EXPECT_TRUE(a.thread == 99); /* untouched by every failure so far */
    EXPECT_TRUE(strncmp(tempi_last_error(), "tempi_admit: ", 13) == 0);

    /* Admitted; a NACK writes its answer; max_live is 1: a second job alive is refused. */
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_OK);
    EXPECT_TRUE(a.admitted == 1 && a.thread != 0 && a.idle_ns == 10 * MS);
    r.wcet_ns = 9 * MS;
    a.thread = 99;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_NACK);
    EXPECT_TRUE(a.admitted == 0 && a.thread == 0 && a.idle_ns == 8 * MS && a.cpu == 0);
    r.wcet_ns = 1 * MS;
    a.thread = 99;
    EXPECT(tempi_admit(cx, p->mine, &r, &a), TEMPI_FULL);
    EXPECT_TRUE(a.thread == 99);
}

static void idle_thread(tempi_ctx *cx, void *userdata) {
    (void)userdata;
    (void)tempi_work(cx, 1 * MS);
}

static void admission_misuse(void) {
    tempi_runtime_params rp;
    tempi_admission_params ap;
    tempi_thread_params tp;
    tempi_runtime *fp, *rt, *other;
    tempi_admission *untouched = (tempi_admission *)&passed;
    tempi_outcome *out;
    admission_probe p;
    size_t n = 0;

    EXPECT(tempi_admission_params_init(NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admission_params_init(&ap), TEMPI_OK);
    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &fp), TEMPI_OK);
    EXPECT(tempi_runtime_create_admission(fp, &ap, &untouched), TEMPI_REFUSED); /* not EDF */
    tempi_runtime_free(fp);

    rp.scheduler = "edf";
    EXPECT(tempi_runtime_new(&rp, &rt), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &other), TEMPI_OK);
    EXPECT(tempi_runtime_create_admission(NULL, &ap, &untouched), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_create_admission(rt, NULL, &untouched), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_create_admission(rt, &ap, NULL), TEMPI_NULL_ARGUMENT);
    ap.size = 1;
    EXPECT(tempi_runtime_create_admission(rt, &ap, &untouched), TEMPI_BAD_SIZE);
    ap.size = sizeof ap;
    ap.engine = "oracle";
    EXPECT(tempi_runtime_create_admission(rt, &ap, &untouched), TEMPI_UNKNOWN_NAME);
    ap.engine = "linear";
    ap.cpu = 3;
    EXPECT(tempi_runtime_create_admission(rt, &ap, &untouched), TEMPI_NO_SUCH_CPU);
    ap.cpu = 0;
    ap.capacity = (uint64_t)1 << 21;
    EXPECT(tempi_runtime_create_admission(rt, &ap, &untouched), TEMPI_INVALID_ARGUMENT);
    ap.capacity = 0;
    /* max_sets is 64 per CPU; the sets made before the refusal stay taken, hence a
     * runtime of its own. */
    EXPECT(tempi_runtime_new(&rp, &fp), TEMPI_OK);
    ap.max_live = 1000;
    EXPECT(tempi_runtime_create_admission(fp, &ap, &untouched), TEMPI_FULL);
    EXPECT_TRUE(untouched == (tempi_admission *)&passed);
    tempi_runtime_free(fp);
    ap.max_live = 1;
    EXPECT(tempi_runtime_create_admission(rt, &ap, &p.mine), TEMPI_OK);
    EXPECT(tempi_runtime_create_admission(other, &ap, &p.foreign), TEMPI_OK);

    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    tp.name = "submitter";
    tp.deadline_ns = 1;
    EXPECT(tempi_runtime_spawn(rt, &tp, submitter, &p, NULL), TEMPI_OK);
    EXPECT(tempi_runtime_spawn(other, &tp, idle_thread, NULL, NULL), TEMPI_OK);
    EXPECT(tempi_runtime_run(rt, UINT64_MAX, &out), TEMPI_OK);
    EXPECT(tempi_runtime_create_admission(rt, &ap, &untouched), TEMPI_ENDED);

    /* The decisions stay readable after the run. */
    EXPECT(tempi_admission_decision_count(NULL, &n), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admission_decision_count(p.mine, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_admission_decision_count(p.mine, &n), TEMPI_OK);
    EXPECT_TRUE(n == 2); /* the admitted job and the NACK: max_live refused before any test */
    {
        tempi_decision_record d;
        d.size = sizeof d;
        d.time_ns = 5;
        EXPECT(tempi_admission_decision(p.mine, 2, &d), TEMPI_OUT_OF_RANGE);
        EXPECT(tempi_admission_decision(p.mine, 0, NULL), TEMPI_NULL_ARGUMENT);
        EXPECT_TRUE(d.time_ns == 5);
        d.size = 1;
        EXPECT(tempi_admission_decision(p.mine, 0, &d), TEMPI_BAD_SIZE);
        d.size = sizeof d;
        EXPECT(tempi_admission_decision(p.mine, 1, &d), TEMPI_OK);
        EXPECT_TRUE(strcmp(d.request, "j") == 0 && d.accepted == 0 && d.wcet_ns == 9 * MS && d.idle_ns == 8 * MS);
    }
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
    tempi_runtime_free(other);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0); /* a crash still shows what failed before it */
    admission_misuse();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
