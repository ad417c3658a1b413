/* worker_ranks.c: env->comm on one rank and over the relay, and the
 * worker's own exchanges across ranks (worker_ranks.h; the wire format
 * and the parent's side: relay.h). */
#include "harness/worker_ranks.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/relay.h"

static int op_ok(dkb_cand_op op) { return op == DKB_CAND_SUM || op == DKB_CAND_MIN || op == DKB_CAND_MAX; }

/* A buffer of n elements: n >= 0, and a pointer when n > 0. */
static int buf_ok(const void *buf, int64_t n) { return n >= 0 && (n == 0 || buf); }

/* ---- one rank ---- */

/* One rank: the op over one buffer is the buffer. */
static int s_allreduce_i64(const dkb_cand_env *env, int64_t *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return buf_ok(buf, n) && op_ok(op) ? DKB_CAND_OK : DKB_CAND_EINVAL;
}

static int s_allreduce_f64(const dkb_cand_env *env, double *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return buf_ok(buf, n) && op_ok(op) ? DKB_CAND_OK : DKB_CAND_EINVAL;
}

static int s_allreduce_i128(const dkb_cand_env *env, __int128 *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return buf_ok(buf, n) && op_ok(op) ? DKB_CAND_OK : DKB_CAND_EINVAL;
}

static int s_allgather_sizes(const dkb_cand_env *env, int64_t mine, int64_t *all) {
    (void)env;
    if (!all) return DKB_CAND_EINVAL;
    all[0] = mine;
    return DKB_CAND_OK;
}

static int s_allgatherv(const dkb_cand_env *env, const void *send, int64_t bytes, void *recv, const int64_t *counts) {
    (void)env;
    if (!counts || counts[0] != bytes || !buf_ok(send, bytes) || !buf_ok(recv, bytes)) return DKB_CAND_EINVAL;
    if (bytes) memmove(recv, send, (size_t)bytes);
    return DKB_CAND_OK;
}

static int s_barrier(const dkb_cand_env *env) {
    (void)env;
    return DKB_CAND_OK;
}

static const dkb_cand_comm SINGLE = {s_allreduce_i64, s_allreduce_f64, s_allreduce_i128,
                                     s_allgather_sizes, s_allgatherv, s_barrier};

const dkb_cand_comm *dkb__wranks_single(void) { return &SINGLE; }

/* ---- the relay ---- */

#define MAXR 4096   /* ranks a worker can take part with */

static struct {
    int rank, nranks;
    int64_t seq;
    int broken, blamed;
    char why[DKB__RELAY_MSG + 64];
    int64_t lens[MAXR];
    unsigned char scratch[1 << 16];
} R;

void dkb__wranks_init(int rank, int nranks) {
    R.rank = rank, R.nranks = nranks > MAXR ? MAXR : nranks;
    R.seq = 0, R.broken = R.blamed = 0, R.why[0] = 0;
}

int dkb__wranks_broken(char *msg, size_t n) {
    if (R.broken && msg) snprintf(msg, n, "%s", R.why);
    return R.broken;
}

int dkb__wranks_blamed(void) { return R.blamed; }

static int put(const void *buf, size_t n) {
    size_t at = 0;
    while (at < n) {
        ssize_t w = write(DKB__RELAY_REQ_FD, (const char *)buf + at, n - at);
        if (w > 0) at += (size_t)w;
        else if (w < 0 && errno == EINTR) continue;
        else return -1;
    }
    return 0;
}

static int get(void *buf, size_t n) {
    size_t at = 0;
    while (at < n) {
        ssize_t r = read(DKB__RELAY_ANS_FD, (char *)buf + at, n - at);
        if (r > 0) at += (size_t)r;
        else if (r < 0 && errno == EINTR) continue;
        else return -1;
    }
    return 0;
}

static int fail(const char *why) {
    R.broken = 1;
    snprintf(R.why, sizeof R.why, "%s", why);
    return -1;
}

/* Where each rank's bytes of an answer go: sink(ctx, rank, offset in that
 * rank's bytes, chunk, length). */
typedef void (*sink_fn)(void *ctx, int rank, int64_t at, const unsigned char *p, int64_t n);

/* One relayed exchange: send[0, bytes) out; every rank's bytes in rank
 * order to sink (each rank's in pieces of at most the scratch buffer, at
 * element-aligned offsets); the lengths in R.lens. 0, or -1 (broken). */
static int exchange(int kind, int op, int redop, int64_t count, const void *send, int64_t bytes, sink_fn sink,
                    void *ctx) {
    if (R.broken) return -1;
    if (bytes < 0 || bytes > DKB__RELAY_MAX_BYTES) return fail("a collective of more than 2^28 bytes on one rank");
    dkb__relay_req q = {DKB__RELAY_MAGIC, kind, op, redop, count, bytes, ++R.seq};
    if (put(&q, sizeof q) || put(send, (size_t)bytes)) return fail("the relay's pipe is closed (write)");
    dkb__relay_ans a;
    if (get(&a, sizeof a)) return fail("the relay's pipe is closed (read)");
    a.msg[sizeof a.msg - 1] = 0;
    if (a.status != DKB__RELAY_OK) {
        R.blamed = a.status == DKB__RELAY_BLAMED;
        return fail(a.msg[0] ? a.msg : "the exchange failed");
    }
    if (a.nranks != R.nranks || get(R.lens, sizeof *R.lens * (size_t)R.nranks))
        return fail("the relay's answer is malformed");
    for (int r = 0; r < R.nranks; r++) {
        if (R.lens[r] < 0 || R.lens[r] > DKB__RELAY_MAX_BYTES) return fail("the relay's answer is malformed");
        for (int64_t at = 0; at < R.lens[r];) {
            int64_t n = R.lens[r] - at < (int64_t)sizeof R.scratch ? R.lens[r] - at : (int64_t)sizeof R.scratch;
            if (get(R.scratch, (size_t)n)) return fail("the relay's pipe is closed (read)");
            if (sink) sink(ctx, r, at, R.scratch, n);
            at += n;
        }
    }
    return 0;
}

/* ---- sinks ---- */

typedef struct red_ctx {
    void *buf;
    int dtype;   /* 0 i64, 1 f64, 2 i128 */
    int op;      /* DKB_CAND_SUM, MIN, MAX */
    int64_t n;
    int bad;
} red_ctx;

#define REDUCE(T)                                                                                    \
    do {                                                                                             \
        T *d = (T *)((char *)c->buf + at);                                                           \
        int64_t k = n / (int64_t)sizeof(T);                                                          \
        for (int64_t i = 0; i < k; i++) {                                                            \
            T v;                                                                                     \
            memcpy(&v, p + i * (int64_t)sizeof(T), sizeof v);                                        \
            if (rank == 0) d[i] = v;                                                                 \
            else if (c->op == DKB_CAND_SUM) d[i] = d[i] + v;                                         \
            else if (c->op == DKB_CAND_MIN) d[i] = v < d[i] ? v : d[i];                              \
            else d[i] = v > d[i] ? v : d[i];                                                         \
        }                                                                                            \
    } while (0)

/* Reduce in rank order: rank 0's values, then each next rank's combined
 * in (so double sums are the same on every rank). Integer sums wrap as
 * two's complement (unsigned arithmetic), as MPI's do in practice. */
static void reduce_sink(void *ctx, int rank, int64_t at, const unsigned char *p, int64_t n) {
    red_ctx *c = ctx;
    int64_t es = c->dtype == 2 ? 16 : 8;
    if (R.lens[rank] != c->n * es || at + n > c->n * es) {
        c->bad = 1;
        return;
    }
    if (c->dtype == 1) {
        REDUCE(double);
    } else if (c->dtype == 0) {
        if (c->op == DKB_CAND_SUM) {
            uint64_t *d = (uint64_t *)((char *)c->buf + at);
            for (int64_t i = 0; i < n / 8; i++) {
                uint64_t v;
                memcpy(&v, p + i * 8, 8);
                d[i] = rank == 0 ? v : d[i] + v;
            }
        } else {
            REDUCE(int64_t);
        }
    } else {
        if (c->op == DKB_CAND_SUM) {
            unsigned __int128 *d = (unsigned __int128 *)((char *)c->buf + at);
            for (int64_t i = 0; i < n / 16; i++) {
                unsigned __int128 v;
                memcpy(&v, p + i * 16, 16);
                d[i] = rank == 0 ? v : d[i] + v;
            }
        } else {
            REDUCE(__int128);
        }
    }
}

typedef struct gather_ctx {
    unsigned char *recv;
    const int64_t *counts;   /* what the caller expects of each rank (NULL: as they come) */
    int64_t cap;             /* bytes recv holds */
    int bad;
} gather_ctx;

static void gather_sink(void *ctx, int rank, int64_t at, const unsigned char *p, int64_t n) {
    gather_ctx *g = ctx;
    int64_t off = 0;
    for (int r = 0; r < rank; r++) off += g->counts ? g->counts[r] : R.lens[r];
    if ((g->counts && R.lens[rank] != g->counts[rank]) || off + at + n > g->cap) {
        g->bad = 1;
        return;
    }
    memcpy(g->recv + off + at, p, (size_t)n);
}

typedef struct bcast_ctx {
    unsigned char *buf;
    int root;
    int64_t bytes;
    int bad;
} bcast_ctx;

static void bcast_sink(void *ctx, int rank, int64_t at, const unsigned char *p, int64_t n) {
    bcast_ctx *b = ctx;
    if (rank != b->root) return;
    if (R.lens[rank] != b->bytes) {
        b->bad = 1;
        return;
    }
    memcpy(b->buf + at, p, (size_t)n);
}

/* ---- the candidate's table ---- */

static int c_reduce(void *buf, int64_t n, dkb_cand_op op, int dtype, int relay_op) {
    if (!buf_ok(buf, n) || !op_ok(op)) return DKB_CAND_EINVAL;
    int64_t es = dtype == 2 ? 16 : 8;
    if (n > DKB__RELAY_MAX_BYTES / es) return DKB_CAND_EINVAL;
    red_ctx c = {buf, dtype, op, n, 0};
    if (exchange(DKB__RELAY_CAND, relay_op, op, n, buf, n * es, reduce_sink, &c)) return DKB_CAND_ERANKS;
    return c.bad ? DKB_CAND_ERANKS : DKB_CAND_OK;
}

static int r_allreduce_i64(const dkb_cand_env *env, int64_t *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return c_reduce(buf, n, op, 0, DKB__RELAY_ALLREDUCE_I64);
}

static int r_allreduce_f64(const dkb_cand_env *env, double *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return c_reduce(buf, n, op, 1, DKB__RELAY_ALLREDUCE_F64);
}

static int r_allreduce_i128(const dkb_cand_env *env, __int128 *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    return c_reduce(buf, n, op, 2, DKB__RELAY_ALLREDUCE_I128);
}

static int r_allgather_sizes(const dkb_cand_env *env, int64_t mine, int64_t *all) {
    (void)env;
    if (!all) return DKB_CAND_EINVAL;
    gather_ctx g = {(unsigned char *)all, NULL, 8 * (int64_t)R.nranks, 0};
    if (exchange(DKB__RELAY_CAND, DKB__RELAY_ALLGATHER_SIZES, 0, 1, &mine, 8, gather_sink, &g) || g.bad)
        return DKB_CAND_ERANKS;
    return DKB_CAND_OK;
}

static int r_allgatherv(const dkb_cand_env *env, const void *send, int64_t bytes, void *recv, const int64_t *counts) {
    (void)env;
    if (!counts || counts[R.rank] != bytes || !buf_ok(send, bytes)) return DKB_CAND_EINVAL;
    int64_t total = 0;
    for (int r = 0; r < R.nranks; r++) {
        if (counts[r] < 0 || counts[r] > DKB__RELAY_MAX_BYTES) return DKB_CAND_EINVAL;
        total += counts[r];
    }
    if (!buf_ok(recv, total)) return DKB_CAND_EINVAL;
    gather_ctx g = {recv, counts, total, 0};
    if (exchange(DKB__RELAY_CAND, DKB__RELAY_ALLGATHERV, 0, 0, send, bytes, gather_sink, &g)) return DKB_CAND_ERANKS;
    return g.bad ? DKB_CAND_ERANKS : DKB_CAND_OK;
}

static int r_barrier(const dkb_cand_env *env) {
    (void)env;
    return exchange(DKB__RELAY_CAND, DKB__RELAY_BARRIER, 0, 0, NULL, 0, NULL, NULL) ? DKB_CAND_ERANKS : DKB_CAND_OK;
}

static const dkb_cand_comm RELAYED = {r_allreduce_i64, r_allreduce_f64, r_allreduce_i128,
                                      r_allgather_sizes, r_allgatherv, r_barrier};

const dkb_cand_comm *dkb__wranks_table(void) { return &RELAYED; }

/* ---- the harness's communicator ---- */

static int h_fail(dkb_error *err) {
    return dkb_fail(err, DKB_EIO, "ranks: %s", R.why[0] ? R.why : "the exchange failed");
}

static int h_barrier(dkb__comm *c, dkb_error *err) {
    (void)c;
    return exchange(DKB__RELAY_HARNESS, DKB__RELAY_BARRIER, 0, 0, NULL, 0, NULL, NULL) ? h_fail(err) : 0;
}

static int h_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    (void)c;
    bcast_ctx b = {buf, root, (int64_t)bytes, 0};
    if (exchange(DKB__RELAY_HARNESS, DKB__RELAY_BCAST, root, 0, buf, (int64_t)bytes, bcast_sink, &b)) return h_fail(err);
    return b.bad ? (fail("a broadcast of different sizes"), h_fail(err)) : 0;
}

static int h_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op, dkb_error *err) {
    (void)c;
    int cop = op == DKB__COMM_MIN ? DKB_CAND_MIN : op == DKB__COMM_MAX ? DKB_CAND_MAX : DKB_CAND_SUM;
    int dt = dtype == DKB__COMM_F64 ? 1 : 0;
    red_ctx rc = {buf, dt, cop, (int64_t)count, 0};
    if (exchange(DKB__RELAY_HARNESS, dt ? DKB__RELAY_ALLREDUCE_F64 : DKB__RELAY_ALLREDUCE_I64, cop, (int64_t)count, buf,
                 (int64_t)count * 8, reduce_sink, &rc))
        return h_fail(err);
    return rc.bad ? (fail("an all-reduce of different sizes"), h_fail(err)) : 0;
}

static int h_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    gather_ctx g = {(unsigned char *)all, NULL, 8 * (int64_t)c->size, 0};
    if (exchange(DKB__RELAY_HARNESS, DKB__RELAY_ALLGATHER_SIZES, 0, 1, &mine, 8, gather_sink, &g)) return h_fail(err);
    return g.bad ? (fail("a size gather of different sizes"), h_fail(err)) : 0;
}

static int h_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                        dkb_error *err) {
    int64_t total = 0;
    for (int r = 0; r < c->size; r++) total += counts[r];
    gather_ctx g = {recv, counts, total, 0};
    if (exchange(DKB__RELAY_HARNESS, DKB__RELAY_ALLGATHERV, 0, 0, send, bytes, gather_sink, &g)) return h_fail(err);
    return g.bad ? (fail("a gather whose sizes are not the ones agreed"), h_fail(err)) : 0;
}

static void h_abort(dkb__comm *c, int code) {
    (void)c;
    _exit(code);
}

static void h_close(dkb__comm *c) { (void)c; }

static const dkb__comm_ops RELAY_OPS = {
    .name = "relay",
    .barrier = h_barrier,
    .bcast = h_bcast,
    .allreduce = h_allreduce,
    .allgather_sizes = h_allgather_sizes,
    .allgatherv = h_allgatherv,
    .abort = h_abort,
    .close = h_close,
};

static dkb__comm RELAY_COMM;

dkb__comm *dkb__wranks_comm(void) {
    RELAY_COMM.ops = &RELAY_OPS;
    RELAY_COMM.rank = R.rank, RELAY_COMM.size = R.nranks, RELAY_COMM.local_rank = R.rank;
    return &RELAY_COMM;
}

/* ---- the agreement after a candidate call ---- */

typedef struct agree_rec {
    int32_t v, pad;
    double ms;
    char msg[480];
} agree_rec;

typedef struct agree_ctx {
    agree_rec cur;       /* the rank being read */
    int first;           /* the lowest failing rank so far (-1) */
    agree_rec best;
    double ms;
} agree_ctx;

static void agree_sink(void *ctx, int rank, int64_t at, const unsigned char *p, int64_t n) {
    agree_ctx *a = ctx;
    if (at + n > (int64_t)sizeof a->cur) return;
    memcpy((char *)&a->cur + at, p, (size_t)n);
    if (at + n < (int64_t)sizeof a->cur) return;
    a->cur.msg[sizeof a->cur.msg - 1] = 0;
    if (a->cur.ms > a->ms) a->ms = a->cur.ms;
    if (a->cur.v != 0 && a->first < 0) {
        a->first = rank;
        a->best = a->cur;
    }
}

int dkb__wranks_agree(int *v, double *ms, char *msg, size_t n) {
    agree_rec mine;
    memset(&mine, 0, sizeof mine);
    mine.v = *v;
    mine.ms = *ms;
    snprintf(mine.msg, sizeof mine.msg, "%s", msg);
    agree_ctx a;
    memset(&a, 0, sizeof a);
    a.first = -1;
    a.ms = *ms;
    if (exchange(DKB__RELAY_HARNESS, DKB__RELAY_AGREE, 0, 0, &mine, (int64_t)sizeof mine, agree_sink, &a)) return -1;
    *ms = a.ms;
    if (a.first >= 0) {
        *v = a.best.v;
        if (a.first > 0) snprintf(msg, n, "rank %d: %s", a.first, a.best.msg);
        else snprintf(msg, n, "%s", a.best.msg);
    }
    return 0;
}
