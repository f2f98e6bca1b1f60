/* Misuse of the C API's admission, messages and handlers: every call answers its status,
 * leaves its out-parameters alone (but for TEMPI_NACK and TEMPI_CANCELLED, which write their
 * answer), and sets tempi_last_error(). Prints "N passed, N failed" and exits 1 on any
 * failure. */
#include <stddef.h>
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


/* Messages and handlers. */

typedef struct messaging {
    tempi_thread deaf;
    tempi_handler *h;
    tempi_status aborted_call;  /* what the aborted thread's handler call answered */
    tempi_status handler_work[2]; /* what the handler's work answered there, then after */
    int handler_ran_misuse;
} messaging;

static messaging msgs;

static void handler_fn(tempi_handler_ctx *hcx, const tempi_message *msg, void *userdata) {
    messaging *w = (messaging *)userdata;
    tempi_message r, fields, got;
    tempi_selection sel;
    uint64_t now = 7;
    tempi_thread invoker = 0;
    switch (msg->id) {
    case 1:
        tempi_message_init(&r, 1, msg->value + 1, 0);
        (void)tempi_handler_reply(hcx, &r);
        break;
    case 2: /* no reply: the caller is answered TEMPI_UNANSWERED */
        break;
    case 3:
        w->handler_ran_misuse = 1;
        EXPECT(tempi_handler_now(NULL, &now), TEMPI_NULL_ARGUMENT);
        EXPECT(tempi_handler_now(hcx, NULL), TEMPI_NULL_ARGUMENT);
        EXPECT(tempi_handler_now(hcx, &now), TEMPI_OK);
        EXPECT(tempi_handler_invoker(hcx, &invoker), TEMPI_OK);
        EXPECT_TRUE(invoker == msg->from && invoker != 0);
        EXPECT(tempi_handler_reply(hcx, NULL), TEMPI_NULL_ARGUMENT);
        tempi_message_init(&fields, 3, 0, 0);
        EXPECT(tempi_handler_save(hcx, 7, &fields), TEMPI_OUT_OF_RANGE);
        memset(&sel, 0, sizeof sel);
        sel.size = sizeof sel;
        got.size = sizeof got;
        EXPECT(tempi_handler_read_saved(hcx, 0, &sel, &got), TEMPI_NO_MATCH);
        EXPECT(tempi_handler_read_saved(hcx, 0, NULL, &got), TEMPI_NULL_ARGUMENT);
        EXPECT(tempi_handler_call_handler(hcx, w->h, &fields, &got), TEMPI_WOULD_BLOCK); /* itself: busy */
        EXPECT(tempi_handler_call_handler(hcx, NULL, &fields, &got), TEMPI_NULL_ARGUMENT);
        EXPECT(tempi_handler_send_thread(hcx, 0, &fields), TEMPI_UNKNOWN_THREAD);
        /* Saved, then taken back and answered: the caller gets the reply. */
        EXPECT(tempi_handler_save(hcx, 0, &fields), TEMPI_OK);
        EXPECT(tempi_handler_read_saved(hcx, 0, &sel, &got), TEMPI_OK);
        EXPECT_TRUE(got.id == 3 && got.from == invoker);
        tempi_message_init(&r, 3, 33, 0);
        EXPECT(tempi_handler_reply(hcx, &r), TEMPI_OK);
        break;
    case 4: /* the invoking thread's job is aborted while the handler works */
        w->handler_work[0] = tempi_handler_work(hcx, 5 * MS);
        w->handler_work[1] = tempi_handler_work(hcx, 1 * MS);
        break;
    default:
        break;
    }
}

static void deaf(tempi_ctx *cx, void *userdata) {
    tempi_message m;
    (void)userdata;
    m.size = sizeof m;
    (void)tempi_read(cx, TEMPI_READ_WAIT, 0, &m); /* and ends without replying */
}

static void aborted(tempi_ctx *cx, void *userdata) {
    messaging *w = (messaging *)userdata;
    tempi_message m, r;
    tempi_message_init(&m, 4, 0, 0);
    r.size = sizeof r;
    w->aborted_call = tempi_handler_call(cx, w->h, &m, &r);
}

static void solo(tempi_ctx *cx, void *userdata) {
    messaging *w = (messaging *)userdata;
    tempi_message m, got, fields;
    tempi_selection sel;
    tempi_thread me = 0;

    EXPECT(tempi_self(cx, &me), TEMPI_OK);
    tempi_message_init(&m, 1, 2, 0);
    got.size = sizeof got;
    got.id = 55;

    /* Thread messages. */
    EXPECT(tempi_message_init(NULL, 0, 0, 0), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_send(NULL, me, &m), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_send(cx, me, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_send(cx, 0, &m), TEMPI_UNKNOWN_THREAD);
    m.size = 4;
    EXPECT(tempi_send(cx, me, &m), TEMPI_BAD_SIZE);
    m.size = sizeof m;
    EXPECT(tempi_call(cx, me, &m, &got), TEMPI_INVALID_ARGUMENT); /* itself */
    EXPECT(tempi_call(cx, me, &m, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_reply(cx, &m), TEMPI_NO_CURRENT);
    EXPECT(tempi_save(cx, 0, &m), TEMPI_NO_CURRENT);
    EXPECT(tempi_read(cx, TEMPI_READ_POLL, 0, &got), TEMPI_WOULD_BLOCK);
    EXPECT(tempi_read(cx, 9, 0, &got), TEMPI_INVALID_ARGUMENT);
    EXPECT(tempi_read(cx, TEMPI_READ_POLL, 0, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_read(cx, TEMPI_READ_TIMEOUT, 1 * MS, &got), TEMPI_TIMEOUT);
    EXPECT_TRUE(got.id == 55);
    memset(&sel, 0, sizeof sel);
    sel.size = sizeof sel;
    EXPECT(tempi_read_saved(cx, 3, &sel, &got), TEMPI_OUT_OF_RANGE);
    EXPECT(tempi_read_saved(cx, 0, &sel, &got), TEMPI_NO_MATCH);
    sel.match = 64;
    EXPECT(tempi_read_saved(cx, 0, &sel, &got), TEMPI_INVALID_ARGUMENT);
    sel.match = TEMPI_MATCH_FROM;
    sel.from = 0;
    EXPECT(tempi_read_saved(cx, 0, &sel, &got), TEMPI_UNKNOWN_THREAD);
    EXPECT_TRUE(got.id == 55);

    /* A mailbox of one: the second send is refused. */
    EXPECT(tempi_send(cx, me, &m), TEMPI_OK);
    EXPECT(tempi_send(cx, me, &m), TEMPI_FULL);
    EXPECT(tempi_read(cx, TEMPI_READ_POLL, 0, &got), TEMPI_OK);
    EXPECT_TRUE(got.from == me && got.id == 1 && got.value == 2 && got.expects_reply == 0);
    EXPECT(tempi_save(cx, 2, &m), TEMPI_OUT_OF_RANGE);
    tempi_message_init(&fields, 9, 4, 0);
    EXPECT(tempi_save(cx, 0, &fields), TEMPI_OK);
    sel.match = TEMPI_MATCH_ID;
    sel.id = 8;
    EXPECT(tempi_read_saved(cx, 0, &sel, &got), TEMPI_NO_MATCH);
    sel.id = 9;
    EXPECT(tempi_read_saved(cx, 0, &sel, &got), TEMPI_OK);
    EXPECT_TRUE(got.id == 9 && got.value == 4 && got.from == me);
    EXPECT(tempi_reply(cx, &m), TEMPI_OK); /* it was sent: the reply comes back as a message */
    EXPECT(tempi_read(cx, TEMPI_READ_POLL, 0, &got), TEMPI_OK);
    EXPECT_TRUE(got.id == 1 && got.from == me);

    /* A call its recipient ends without answering. */
    got.id = 55;
    EXPECT(tempi_call(cx, w->deaf, &m, &got), TEMPI_UNANSWERED);
    EXPECT_TRUE(got.id == 55);
    EXPECT(tempi_send(cx, w->deaf, &m), TEMPI_UNKNOWN_THREAD); /* it has ended */

    /* Handlers. */
    EXPECT(tempi_handler_call(cx, NULL, &m, &got), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_handler_call(cx, w->h, &m, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_handler_send(NULL, w->h, &m), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_handler_call(cx, w->h, &m, &got), TEMPI_OK);
    EXPECT_TRUE(got.value == 3);
    tempi_message_init(&m, 2, 0, 0);
    got.id = 55;
    EXPECT(tempi_handler_call(cx, w->h, &m, &got), TEMPI_UNANSWERED);
    EXPECT_TRUE(got.id == 55);
    EXPECT(tempi_handler_send(cx, w->h, &m), TEMPI_OK); /* a send needs no reply */
    tempi_message_init(&m, 3, 0, 0);
    EXPECT(tempi_handler_call(cx, w->h, &m, &got), TEMPI_OK);
    EXPECT_TRUE(got.value == 33 && w->handler_ran_misuse == 1);
}

static void messages_misuse(void) {
    tempi_runtime_params rp;
    tempi_thread_params tp;
    tempi_handler_params hp;
    tempi_runtime *rt;
    tempi_handler *untouched = (tempi_handler *)&passed;
    tempi_outcome *out;

    EXPECT(tempi_runtime_params_init(&rp), TEMPI_OK);
    EXPECT(tempi_runtime_new(&rp, &rt), TEMPI_OK);

    memset(&hp, 0, sizeof hp);
    hp.size = sizeof hp;
    hp.name = "h";
    hp.capacity = 2;
    hp.save_queues = 1;
    hp.userdata = &msgs;
    EXPECT(tempi_runtime_create_handler(rt, &hp, &untouched), TEMPI_NULL_ARGUMENT); /* no function */
    hp.function = handler_fn;
    EXPECT(tempi_runtime_create_handler(rt, &hp, NULL), TEMPI_NULL_ARGUMENT);
    EXPECT(tempi_runtime_create_handler(NULL, &hp, &untouched), TEMPI_NULL_ARGUMENT);
    hp.capacity = (uint64_t)1 << 40;
    EXPECT(tempi_runtime_create_handler(rt, &hp, &untouched), TEMPI_INVALID_ARGUMENT);
    hp.capacity = 2;
    hp.save_queues = 5000;
    EXPECT(tempi_runtime_create_handler(rt, &hp, &untouched), TEMPI_INVALID_ARGUMENT);
    hp.size = 5;
    EXPECT(tempi_runtime_create_handler(rt, &hp, &untouched), TEMPI_BAD_SIZE);
    EXPECT_TRUE(untouched == (tempi_handler *)&passed);
    hp.size = sizeof hp;
    hp.save_queues = 1;
    EXPECT(tempi_runtime_create_handler(rt, &hp, &msgs.h), TEMPI_OK);

    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    tp.name = "deaf";
    tp.priority = 3;
    EXPECT(tempi_runtime_spawn(rt, &tp, deaf, NULL, &msgs.deaf), TEMPI_OK);
    tp.name = "aborted";
    tp.priority = 2;
    tp.abort_after_ns = 1 * MS;
    EXPECT(tempi_runtime_spawn(rt, &tp, aborted, &msgs, NULL), TEMPI_OK);
    EXPECT(tempi_thread_params_init(&tp), TEMPI_OK);
    tp.name = "solo";
    tp.priority = 1;
    tp.mailbox = 1;
    tp.save_queues = 1;
    EXPECT(tempi_runtime_spawn(rt, &tp, solo, &msgs, NULL), TEMPI_OK);
    tp.mailbox = 1u << 30;
    EXPECT(tempi_runtime_spawn(rt, &tp, solo, &msgs, NULL), TEMPI_INVALID_ARGUMENT);
    /* A struct of the first version, without mailbox and save_queues, is accepted. */
    tp.size = offsetof(tempi_thread_params, mailbox);
    tp.name = "old";
    EXPECT(tempi_runtime_spawn(rt, &tp, deaf, NULL, NULL), TEMPI_OK);

    EXPECT(tempi_runtime_run(rt, 50 * MS, &out), TEMPI_OK);
    EXPECT(tempi_runtime_create_handler(rt, &hp, &untouched), TEMPI_ENDED);
    /* The handler's work in the aborted job: interrupted, then at once again; the thread's
     * call that invoked it saw the interrupt too. */
    EXPECT_TRUE(msgs.handler_work[0] == TEMPI_INTERRUPTED && msgs.handler_work[1] == TEMPI_INTERRUPTED);
    EXPECT_TRUE(msgs.aborted_call == TEMPI_INTERRUPTED);
    tempi_outcome_free(out);
    tempi_runtime_free(rt);
}

int main(void) {
    setvbuf(stdout, NULL, _IONBF, 0); /* a crash still shows what failed before it */
    admission_misuse();
    messages_misuse();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
