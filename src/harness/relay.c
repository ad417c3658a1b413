/* relay.c: the evaluating process's side of the relay (relay.h): rounds of
 * non-blocking all-gathers between the ranks' parents, requests read from
 * the worker's pipe, answers written back. */
#include "harness/relay.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/timing.h"   // defines: dkb__now_s

enum { ST_RUNNING = 0, ST_REQUEST = 1, ST_DONE = 2 };
enum { PH_IDLE = 0, PH_HEADERS, PH_PAYLOAD };

/* what one parent tells the others every round */
typedef struct hdr {
    int32_t state, kind, op, redop;
    int64_t count, bytes, seq;
} hdr;

struct dkb__relay {
    dkb__comm *c;
    int K, me;
    int state;
    int req_fd, ans_fd;
    double deadline;
    dkb__relay_req req;        /* the request being served */
    unsigned char *payload;    /* its bytes */
    int phase;
    void *mreq;                /* the round in flight */
    hdr mine, *all;
    int64_t *hlens, *plens;
    unsigned char *recv;
    int all_done;              /* the last header round: every rank had ended */
    /* the job's outcome */
    int follower, blamed, killed_waiting;
    dkb_verdict bl_v;
    char bl_detail[512];
};

static void relay_abort(dkb__relay *r, const char *what, const dkb_error *e) {
    fprintf(stderr, "dkb eval: error: rank %d: the relay of the workers' collectives: %s: %s\n", r->me, what,
            e->msg[0] ? e->msg : "failed");
    dkb__comm_abort(r->c, 1);
}

int dkb__relay_open(dkb__comm *comm, dkb__relay **out, dkb_error *err) {
    *out = NULL;
    dkb__relay *r = calloc(1, sizeof *r);
    int K = dkb__comm_size(comm);
    if (r) {
        r->all = calloc((size_t)K, sizeof *r->all);
        r->hlens = calloc((size_t)K, sizeof *r->hlens);
        r->plens = calloc((size_t)K, sizeof *r->plens);
    }
    if (!r || !r->all || !r->hlens || !r->plens) {
        if (r) free(r->all), free(r->hlens), free(r->plens);
        free(r);
        return dkb_fail(err, DKB_ENOMEM, "relay: out of memory");
    }
    r->c = comm, r->K = K, r->me = dkb__comm_rank(comm);
    for (int i = 0; i < K; i++) r->hlens[i] = (int64_t)sizeof(hdr);
    r->req_fd = r->ans_fd = -1;
    r->state = ST_DONE;
    /* a worker gone while its answer is written: EPIPE, not a signal */
    signal(SIGPIPE, SIG_IGN);
    *out = r;
    return 0;
}

void dkb__relay_close(dkb__relay *r) {
    if (!r) return;
    free(r->payload);
    free(r->recv);
    free(r->all), free(r->hlens), free(r->plens);
    free(r);
}

void dkb__relay_job_begin(dkb__relay *r) {
    r->state = ST_RUNNING;
    r->req_fd = r->ans_fd = -1;
    r->deadline = 0;
    r->follower = r->blamed = r->killed_waiting = 0;
    r->bl_v = DKB_VERDICT_OK;
    r->bl_detail[0] = 0;
    r->all_done = 0;
}

void dkb__relay_attach(dkb__relay *r, int req_fd, int ans_fd, double deadline) {
    r->req_fd = req_fd, r->ans_fd = ans_fd, r->deadline = deadline;
    int fl = fcntl(req_fd, F_GETFL);
    if (fl >= 0) fcntl(req_fd, F_SETFL, fl | O_NONBLOCK);
    fl = fcntl(ans_fd, F_GETFL);
    if (fl >= 0) fcntl(ans_fd, F_SETFL, fl | O_NONBLOCK);
}

int dkb__relay_req_fd(const dkb__relay *r) { return r->state == ST_RUNNING ? r->req_fd : -1; }

void dkb__relay_killed(dkb__relay *r) {
    if (r->state == ST_REQUEST) r->killed_waiting = 1, r->follower = 1;
}

void dkb__relay_detach(dkb__relay *r) {
    r->req_fd = r->ans_fd = -1;
    if (r->state != ST_REQUEST) r->state = ST_DONE;
    /* a request in flight still takes part in its round; it ends after */
}

/* Read n bytes from fd (non-blocking) before the deadline: 0, or -1 (EOF,
 * error, deadline). */
static int read_full(int fd, void *buf, size_t n, double deadline) {
    size_t at = 0;
    while (at < n) {
        ssize_t got = read(fd, (char *)buf + at, n - at);
        if (got > 0) {
            at += (size_t)got;
            continue;
        }
        if (got == 0) return -1;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        if (dkb__now_s() > deadline) return -1;
        struct pollfd p = {fd, POLLIN, 0};
        poll(&p, 1, 5);
    }
    return 0;
}

static int write_full(int fd, const void *buf, size_t n, double deadline) {
    size_t at = 0;
    while (at < n) {
        ssize_t put = write(fd, (const char *)buf + at, n - at);
        if (put > 0) {
            at += (size_t)put;
            continue;
        }
        if (put < 0 && errno == EINTR) continue;
        if (put < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        if (dkb__now_s() > deadline) return -1;
        struct pollfd p = {fd, POLLOUT, 0};
        poll(&p, 1, 5);
    }
    return 0;
}

/* A request from the worker when one is there. A malformed one (it cannot
 * be the harness's) becomes a request of kind 0, which matches nobody's:
 * the row fails on every rank. */
static void read_request(dkb__relay *r) {
    if (r->state != ST_RUNNING || r->req_fd < 0) return;
    struct pollfd p = {r->req_fd, POLLIN, 0};
    if (poll(&p, 1, 0) <= 0) return;
    if (!(p.revents & POLLIN)) {
        if (p.revents & (POLLHUP | POLLERR)) r->req_fd = -1;
        return;
    }
    dkb__relay_req q;
    double dl = r->deadline > 0 ? r->deadline : dkb__now_s() + 5;
    if (read_full(r->req_fd, &q, sizeof q, dl)) {
        r->req_fd = -1; /* the worker is gone or stuck mid-request: the sandbox will tell */
        return;
    }
    free(r->payload);
    r->payload = NULL;
    if (q.magic != DKB__RELAY_MAGIC || q.bytes < 0 || q.bytes > DKB__RELAY_MAX_BYTES ||
        (q.kind != DKB__RELAY_HARNESS && q.kind != DKB__RELAY_CAND)) {
        memset(&q, 0, sizeof q);
        r->req = q;
        r->state = ST_REQUEST;
        r->req_fd = -1; /* nothing more is read from it */
        return;
    }
    r->payload = malloc((size_t)q.bytes + 1);
    if (!r->payload || read_full(r->req_fd, r->payload, (size_t)q.bytes, dl)) {
        free(r->payload);
        r->payload = NULL;
        memset(&q, 0, sizeof q);
        r->req_fd = -1;
    }
    r->req = q;
    r->state = ST_REQUEST;
}

/* Answer the worker's request (status, and with OK the gathered bytes). */
static void answer(dkb__relay *r, int status, const char *msg) {
    if (r->ans_fd >= 0) {
        dkb__relay_ans a;
        memset(&a, 0, sizeof a);
        a.status = status;
        a.nranks = r->K;
        snprintf(a.msg, sizeof a.msg, "%s", msg ? msg : "");
        double dl = r->deadline > 0 ? r->deadline : dkb__now_s() + 5;
        int bad = write_full(r->ans_fd, &a, sizeof a, dl);
        if (!bad && status == DKB__RELAY_OK) {
            int64_t total = 0;
            for (int i = 0; i < r->K; i++) total += r->plens[i];
            bad = write_full(r->ans_fd, r->plens, sizeof *r->plens * (size_t)r->K, dl) ||
                  write_full(r->ans_fd, r->recv, (size_t)total, dl);
        }
        if (bad) r->ans_fd = -1;
    }
    if (status == DKB__RELAY_PEER_GONE || status == DKB__RELAY_VICTIM) r->follower = 1;
    free(r->payload);
    free(r->recv);
    r->payload = r->recv = NULL;
    /* a worker reaped while it waited ends now */
    r->state = r->req_fd < 0 && r->ans_fd < 0 ? ST_DONE : ST_RUNNING;
}

static const char *op_name(int op) {
    switch (op) {
    case DKB__RELAY_BARRIER: return "barrier";
    case DKB__RELAY_BCAST: return "broadcast";
    case DKB__RELAY_ALLREDUCE_I64: return "allreduce_i64";
    case DKB__RELAY_ALLREDUCE_F64: return "allreduce_f64";
    case DKB__RELAY_ALLREDUCE_I128: return "allreduce_i128";
    case DKB__RELAY_ALLGATHER_SIZES: return "allgather_sizes";
    case DKB__RELAY_ALLGATHERV: return "allgatherv";
    case DKB__RELAY_AGREE: return "agreement after a candidate call";
    default: return "unknown request";
    }
}

/* "the candidate's allreduce_i64 of 2 (its collective #3)" */
static void describe(const hdr *h, char *s, size_t n) {
    if (h->kind == DKB__RELAY_CAND)
        snprintf(s, n, "the candidate's %s%s%.0lld (call #%lld)", op_name(h->op), h->count ? " of " : "",
                 h->count ? (long long)h->count : 0LL, (long long)h->seq);
    else if (h->kind == DKB__RELAY_HARNESS)
        snprintf(s, n, "the harness's %s (call #%lld)", op_name(h->op), (long long)h->seq);
    else
        snprintf(s, n, "a malformed request");
}

static int same(const hdr *a, const hdr *b) {
    return a->kind == b->kind && a->op == b->op && a->redop == b->redop && a->count == b->count && a->seq == b->seq &&
           a->kind != 0 && (a->op == DKB__RELAY_ALLGATHERV || a->bytes == b->bytes);
}

/* Every rank in a request, not the same one: who is out of step. */
static void mismatch(dkb__relay *r) {
    const hdr *m = &r->all[r->me];
    int any_cand = 0, any_harness = 0;
    for (int i = 0; i < r->K; i++) {
        any_cand |= r->all[i].kind == DKB__RELAY_CAND;
        any_harness |= r->all[i].kind != DKB__RELAY_CAND;
    }
    char list[400];
    size_t used = 0;
    list[0] = 0;
    for (int i = 0; i < r->K && used + 1 < sizeof list; i++) {
        char d[160];
        describe(&r->all[i], d, sizeof d);
        used += (size_t)snprintf(list + used, sizeof list - used, "%srank %d in %s", i ? ", " : "", i, d);
    }
    if (used >= sizeof list) used = sizeof list - 1;
    char msg[DKB__RELAY_MSG];
    if (m->kind == DKB__RELAY_CAND && any_harness) {
        /* this rank waits in the candidate's collective; another returned without it */
        snprintf(msg, sizeof msg, "another rank returned without this collective (%.200s)", list);
        answer(r, DKB__RELAY_VICTIM, msg);
        return;
    }
    r->blamed = 1;
    if (m->kind == DKB__RELAY_HARNESS && any_cand) {
        r->bl_v = DKB_VERDICT_RETURNED_ERROR;
        snprintf(r->bl_detail, sizeof r->bl_detail,
                 "returned without the collective the other ranks wait in (%.400s)", list);
    } else if (!any_harness) {
        r->bl_v = DKB_VERDICT_RETURNED_ERROR;
        snprintf(r->bl_detail, sizeof r->bl_detail, "the ranks called different collectives (%.400s)", list);
    } else {
        r->bl_v = DKB_VERDICT_HARNESS_ERROR;
        snprintf(r->bl_detail, sizeof r->bl_detail, "the ranks' workers are out of step (%.400s)", list);
    }
    snprintf(msg, sizeof msg, "%.250s", r->bl_detail);
    answer(r, DKB__RELAY_BLAMED, msg);
}

/* A header round has completed: what it means for this rank. */
static void headers_done(dkb__relay *r) {
    int all_req = 1, all_done = 1, gone = -1;
    for (int i = 0; i < r->K; i++) {
        all_req &= r->all[i].state == ST_REQUEST;
        all_done &= r->all[i].state == ST_DONE;
        if (r->all[i].state == ST_DONE && gone < 0) gone = i;
    }
    r->all_done = all_done;
    if (r->mine.state != ST_REQUEST) return;
    if (all_req) {
        int match = 1;
        for (int i = 1; i < r->K; i++) match &= same(&r->all[0], &r->all[i]);
        if (!match) {
            mismatch(r);
            return;
        }
        int64_t total = 0;
        for (int i = 0; i < r->K; i++) total += r->plens[i] = r->all[i].bytes;
        dkb_error e = {0};
        if (total >= (int64_t)1 << 30) {
            /* every rank sees the same sizes: all answer alike */
            answer(r, DKB__RELAY_BLAMED, "the ranks' payloads together are over 2^30 bytes");
            r->blamed = 1, r->bl_v = DKB_VERDICT_RETURNED_ERROR;
            snprintf(r->bl_detail, sizeof r->bl_detail, "a collective of %lld bytes over the ranks (at most 2^30)",
                     (long long)total);
            return;
        }
        r->recv = malloc((size_t)total + 1);
        if (!r->recv) {
            e.code = DKB_ENOMEM;
            snprintf(e.msg, sizeof e.msg, "out of memory for %lld bytes", (long long)total);
            relay_abort(r, "a payload", &e);
        }
        if (dkb__comm_iallgatherv(r->c, r->payload ? (void *)r->payload : (void *)"", r->all[r->me].bytes, r->recv,
                                  r->plens, &r->mreq, &e))
            relay_abort(r, "posting the payloads", &e);
        r->phase = PH_PAYLOAD;
        return;
    }
    if (gone >= 0) {
        char msg[DKB__RELAY_MSG];
        snprintf(msg, sizeof msg, "rank %d's worker has ended (it crashed, timed out, failed or returned early)", gone);
        answer(r, DKB__RELAY_PEER_GONE, msg);
    }
    /* else: some rank is still computing; the next round */
}

/* Move the rounds on: post one when none is in flight, test the one that
 * is. */
static void progress(dkb__relay *r) {
    dkb_error e = {0};
    if (r->phase == PH_IDLE) {
        memset(&r->mine, 0, sizeof r->mine);
        r->mine.state = r->state;
        if (r->state == ST_REQUEST) {
            r->mine.kind = r->req.kind, r->mine.op = r->req.op, r->mine.redop = r->req.redop;
            r->mine.count = r->req.count, r->mine.bytes = r->req.bytes, r->mine.seq = r->req.seq;
        }
        if (dkb__comm_iallgatherv(r->c, &r->mine, (int64_t)sizeof r->mine, r->all, r->hlens, &r->mreq, &e))
            relay_abort(r, "posting a round", &e);
        r->phase = PH_HEADERS;
    }
    int done = 0;
    if (dkb__comm_test(r->c, r->mreq, &done, &e)) relay_abort(r, "a round", &e);
    if (!done) return;
    r->mreq = NULL;
    if (r->phase == PH_HEADERS) {
        r->phase = PH_IDLE;
        headers_done(r);
    } else {
        r->phase = PH_IDLE;
        answer(r, DKB__RELAY_OK, NULL);
    }
}

void dkb__relay_poll(dkb__relay *r) {
    read_request(r);
    progress(r);
}

void dkb__relay_job_end(dkb__relay *r) {
    dkb__relay_detach(r);
    for (;;) {
        progress(r);
        if (r->phase == PH_IDLE && r->all_done) break;
        if (r->phase != PH_IDLE) {
            struct timespec ts = {0, 500 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    r->all_done = 0;
    r->state = ST_DONE;
}

int dkb__relay_outcome(const dkb__relay *r, int *follower, dkb_verdict *v, char *detail, size_t n) {
    *follower = r->blamed ? 0 : r->follower;
    if (!r->blamed) return 0;
    *v = r->bl_v;
    snprintf(detail, n, "%s", r->bl_detail);
    return 1;
}
