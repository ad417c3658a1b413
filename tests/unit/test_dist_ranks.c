/* test_dist_ranks.c: the communicator helpers (src/dist/comm.c) and the
 * ranks' gather of partials (partition.c, dkb__query_run_ranks) in one
 * process, so that the sanitizers, leak checks included, watch them: K
 * threads play K ranks through a communicator of this file (the same
 * dkb__comm_ops table that comm_single.c and comm_mpi.c fill; the
 * collectives meet at a barrier and copy through shared slots).
 *
 * Checked: dkb__comm_share's ranges (uneven, empty), allreduce, broadcast,
 * variable-length gathers (empty buffers too), dkb__comm_agree (one rank
 * failing: "rank R: ..." everywhere; all failing alike: the message
 * alone); and on an SF 0.01 store of 8 partitions, the 22 queries for
 * seeds 0 and 1 on 2, 3 and 9 ranks (9: one rank without partitions),
 * without and with a budget: every rank's result prints, as CSV, byte for
 * byte what dkb_query_run gives. */
#include <ftw.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/comm.h"
#include "dkb/query.h"
#include "dkb/result.h"
#include "driver/gen_driver.h"
#include "queries/partition.h"
#include "test_check.h"

#define MAXR 16

/* ---- K threads as K ranks ---- */

typedef struct shared {
    int size;
    pthread_barrier_t bar;
    const void *ptr[MAXR];
    int64_t val[MAXR];
} shared;

typedef struct trank {
    shared *sh;
} trank;

static shared *sh_of(dkb__comm *c) { return ((trank *)c->impl)->sh; }
static void meet(dkb__comm *c) { pthread_barrier_wait(&sh_of(c)->bar); }

static int t_barrier(dkb__comm *c, dkb_error *err) {
    (void)err;
    meet(c);
    return 0;
}

static int t_bcast(dkb__comm *c, void *buf, size_t bytes, int root, dkb_error *err) {
    (void)err;
    shared *s = sh_of(c);
    if (c->rank == root) s->ptr[root] = buf;
    meet(c);
    if (c->rank != root && bytes) memcpy(buf, s->ptr[root], bytes);
    meet(c);
    return 0;
}

static int t_allreduce(dkb__comm *c, void *buf, size_t count, dkb__comm_dtype dtype, dkb__comm_op op,
                       dkb_error *err) {
    (void)err;
    shared *s = sh_of(c);
    void *mine = malloc(count * 8 + 1);
    memcpy(mine, buf, count * 8);
    s->ptr[c->rank] = mine;
    meet(c);
    for (size_t i = 0; i < count; i++) {
        for (int r = 0; r < c->size; r++) {
            if (dtype == DKB__COMM_I64) {
                int64_t v = ((const int64_t *)s->ptr[r])[i], *o = (int64_t *)buf + i;
                if (!r) *o = v;
                else *o = op == DKB__COMM_SUM ? *o + v : op == DKB__COMM_MIN ? (v < *o ? v : *o) : (v > *o ? v : *o);
            } else {
                double v = ((const double *)s->ptr[r])[i], *o = (double *)buf + i;
                if (!r) *o = v;
                else *o = op == DKB__COMM_SUM ? *o + v : op == DKB__COMM_MIN ? (v < *o ? v : *o) : (v > *o ? v : *o);
            }
        }
    }
    meet(c);
    free(mine);
    return 0;
}

static int t_allgather_sizes(dkb__comm *c, int64_t mine, int64_t *all, dkb_error *err) {
    (void)err;
    shared *s = sh_of(c);
    s->val[c->rank] = mine;
    meet(c);
    for (int r = 0; r < c->size; r++) all[r] = s->val[r];
    meet(c);
    return 0;
}

static int t_allgatherv(dkb__comm *c, const void *send, int64_t bytes, void *recv, const int64_t *counts,
                        dkb_error *err) {
    (void)err, (void)bytes;
    shared *s = sh_of(c);
    s->ptr[c->rank] = send;
    meet(c);
    int64_t off = 0;
    for (int r = 0; r < c->size; r++) {
        if (counts[r]) memcpy((char *)recv + off, s->ptr[r], (size_t)counts[r]);
        off += counts[r];
    }
    meet(c);
    return 0;
}

static void t_abort(dkb__comm *c, int code) {
    (void)c;
    fprintf(stderr, "test_dist_ranks: abort %d\n", code);
    abort();
}

static void t_close(dkb__comm *c) {
    free(c->impl);
    free(c);
}

static const dkb__comm_ops thread_ops = {"threads", t_barrier, t_bcast, t_allreduce, t_allgather_sizes,
                                         t_allgatherv, t_abort, t_close, NULL, NULL};

static dkb__comm *thread_comm(shared *s, int rank) {
    dkb__comm *c = calloc(1, sizeof *c);
    trank *t = calloc(1, sizeof *t);
    t->sh = s;
    *c = (dkb__comm){&thread_ops, rank, s->size, rank, t};
    return c;
}

/* Run fn(comm, arg) on `size` threads, one per rank. */
typedef void (*rank_fn)(dkb__comm *c, void *arg);
typedef struct thread_arg {
    dkb__comm *c;
    rank_fn fn;
    void *arg;
} thread_arg;

static void *thread_main(void *p) {
    thread_arg *a = p;
    a->fn(a->c, a->arg);
    return NULL;
}

static void run_ranks(int size, rank_fn fn, void *arg) {
    shared s;
    memset(&s, 0, sizeof s);
    s.size = size;
    pthread_barrier_init(&s.bar, NULL, (unsigned)size);
    pthread_t th[MAXR];
    thread_arg ta[MAXR];
    for (int r = 0; r < size; r++) {
        ta[r] = (thread_arg){thread_comm(&s, r), fn, arg};
        pthread_create(&th[r], NULL, thread_main, &ta[r]);
    }
    for (int r = 0; r < size; r++) {
        pthread_join(th[r], NULL);
        dkb__comm_close(ta[r].c);
    }
    pthread_barrier_destroy(&s.bar);
}

static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
/* CHECK from a rank's thread (the failure counter is shared) */
#define TCHECK(...)                                   \
    do {                                              \
        pthread_mutex_lock(&check_lock);              \
        CHECK(__VA_ARGS__);                           \
        pthread_mutex_unlock(&check_lock);            \
    } while (0)

/* ---- the helpers ---- */

static void test_share(void) {
    int want[3][2] = {{0, 2}, {2, 5}, {5, 8}};
    for (int r = 0; r < 3; r++) {
        dkb__comm c = {&thread_ops, r, 3, r, NULL};
        int lo, hi;
        dkb__comm_share(&c, 8, &lo, &hi);
        CHECK(lo == want[r][0] && hi == want[r][1], "8 over 3, rank %d: %d-%d", r, lo, hi);
        dkb__comm_share(&c, 1, &lo, &hi);
        CHECK(hi - lo == (r == 2), "1 over 3, rank %d: %d-%d", r, lo, hi);
    }
    dkb__comm *one = NULL;
    dkb_error err = {0};
    CHECK(dkb__comm_open_single(&one, &err) == 0 && one->size == 1 && one->rank == 0);
    int lo, hi;
    dkb__comm_share(one, 8, &lo, &hi);
    CHECK(lo == 0 && hi == 8);
    CHECK(dkb__comm_agree(one, DKB_EIO, &err) == DKB_EIO, "one rank: its own outcome");
    dkb__comm_close(one);
}

/* (TCHECK holds a lock: every collective runs before its check) */
static void collectives(dkb__comm *c, void *arg) {
    (void)arg;
    dkb_error err = {0};
    int r = c->rank, k = c->size, rc;
    int64_t v[2] = {r + 1, -r};
    rc = dkb__comm_allreduce(c, v, 2, DKB__COMM_I64, DKB__COMM_SUM, &err);
    TCHECK(rc == 0 && v[0] == (int64_t)k * (k + 1) / 2 && v[1] == -(int64_t)k * (k - 1) / 2);
    double d = r + 0.5;
    rc = dkb__comm_allreduce(c, &d, 1, DKB__COMM_F64, DKB__COMM_MAX, &err);
    TCHECK(rc == 0 && d == k - 0.5);
    int64_t b = r == 1 ? 42 : 0;
    rc = dkb__comm_bcast(c, &b, sizeof b, 1, &err);
    TCHECK(rc == 0 && b == 42);
    rc = dkb__comm_bcast(c, &b, sizeof b, k, &err);
    TCHECK(rc == DKB_EINVAL, "a root beyond the ranks");
    /* rank r sends r bytes of value r (rank 0: none) */
    unsigned char mine[MAXR], *all = NULL;
    memset(mine, r, sizeof mine);
    int64_t lens[MAXR];
    rc = dkb__comm_allgather_bytes(c, mine, r, &all, lens, &err);
    TCHECK(rc == 0);
    int64_t at = 0;
    for (int q = 0; all && q < k; q++) {
        TCHECK(lens[q] == q);
        for (int i = 0; i < q; i++) TCHECK(all[at + i] == q, "rank %d's byte %d from rank %d", r, i, q);
        at += q;
    }
    free(all);
    /* agree: rank 1 fails alone, then every rank alike */
    err = (dkb_error){0};
    rc = r == 1 ? dkb_fail(&err, DKB_EIO, "boom on %s", "one") : 0;
    rc = dkb__comm_agree(c, rc, &err);
    TCHECK(rc == DKB_EIO && !strcmp(err.msg, "rank 1: boom on one"), "rank %d: %d %s", r, rc, err.msg);
    rc = dkb__comm_agree(c, 0, &err);
    TCHECK(rc == 0, "all ok");
    rc = dkb__comm_agree(c, dkb_fail(&err, DKB_ENOMEM, "the same"), &err);
    TCHECK(rc == DKB_ENOMEM && !strcmp(err.msg, "the same"), "alike: %s", err.msg);
    rc = dkb__comm_agree(c, dkb_fail(&err, DKB_EINVAL, "rank %d's own", r), &err);
    TCHECK(rc == DKB_EINVAL && !strcmp(err.msg, "rank 0: rank 0's own"), "differing: %s", err.msg);
    rc = dkb__comm_barrier(c, &err);
    TCHECK(rc == 0);
}

/* ---- the queries across ranks ---- */

typedef struct query_job {
    const dkb_store *db;
    int64_t budget;
    char *want[DKB_NQUERIES][2]; /* dkb_query_run's CSV per query and seed */
    int checked;
} query_job;

/* res as CSV, malloc'ed */
static char *csv_of(const dkb_result *res) {
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m) return NULL;
    dkb_result_print(res, DKB_RES_FMT_CSV, m);
    fclose(m);
    return text;
}

static void queries(dkb__comm *c, void *arg) {
    query_job *j = arg;
    dkb_tp *tp = NULL;
    dkb_error err = {0};
    int rc = dkb_tp_create(DKB_TP_CPU, 1, &tp, &err);
    TCHECK(rc == 0, "%s", err.msg);
    if (!tp) dkb__comm_abort(c, 2);
    for (int n = 1; n <= DKB_NQUERIES; n++) {
        const dkb_query *q = dkb_query_get(n);
        for (int s = 0; s < 2; s++) {
            dkb_params p;
            dkb_result res = {0};
            dkb__part_info info;
            rc = dkb_query_params(q, (uint64_t)s, 0.01, NULL, 0, &p, &err);
            TCHECK(rc == 0);
            dkb_tp_reset(tp);
            rc = dkb__query_run_ranks(q, tp, j->db, &p, j->budget, 1, c, &res, &info, &err);
            TCHECK(rc == 0, "%d ranks, %s seed %d: %s", c->size, q->name, s, err.msg);
            if (rc) continue;
            TCHECK(info.partitioned && info.partitions == 8, "%s: split", q->name);
            char *got = csv_of(&res);
            TCHECK(got && j->want[n - 1][s] && !strcmp(got, j->want[n - 1][s]),
                   "%d ranks (budget %lld), rank %d, %s seed %d: result differs from dkb_query_run's", c->size,
                   (long long)j->budget, c->rank, q->name, s);
            free(got);
            dkb_result_free(&res);
            if (!c->rank) j->checked++;
        }
    }
    dkb_tp_destroy(tp);
}

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(p);
}

int main(void) {
    test_share();
    for (int k = 2; k <= 5; k++) run_ranks(k, collectives, NULL);

    const char *base = getenv("TMPDIR");
    char dir[4096], out[4200];
    snprintf(dir, sizeof dir, "%s/dkb-dist-XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir)) return 2;
    snprintf(out, sizeof out, "%s/store", dir);
    dkb_gen_opts opts = {.sf = 0.01, .threads = 2, .tables = (1u << DKB_TABLE_COUNT) - 1, .part = 1, .parts = 1,
                         .partitions = 8, .format = DKB_OUT_STORE, .out = out};
    dkb_gen_summary sum;
    dkb_error err = {0};
    dkb_store *db = NULL;
    dkb_tp *tp = NULL;
    if (dkb__gen_run(&opts, &sum, &err) || dkb_store_open(out, 0, &db, &err) ||
        dkb_tp_create(DKB_TP_CPU, 1, &tp, &err)) {
        fprintf(stderr, "setup: %s\n", err.msg);
        return 1;
    }
    query_job j = {.db = db};
    for (int n = 1; n <= DKB_NQUERIES; n++) {
        for (int s = 0; s < 2; s++) {
            dkb_params p;
            dkb_result res = {0};
            dkb_tp_reset(tp);
            CHECK(dkb_query_params(dkb_query_get(n), (uint64_t)s, 0.01, NULL, 0, &p, &err) == 0);
            CHECK(dkb_query_run(dkb_query_get(n), tp, db, &p, &res, &err) == 0, "%s", err.msg);
            j.want[n - 1][s] = csv_of(&res);
            dkb_result_free(&res);
        }
    }
    int ranks[] = {2, 3, 9};
    int64_t budgets[] = {0, 540000}; /* none; below two of q01's partitions (docs/distributed.md) */
    int runs = 0;
    for (size_t b = 0; b < 2; b++) {
        for (size_t k = 0; k < sizeof ranks / sizeof ranks[0]; k++) {
            j.budget = budgets[b];
            run_ranks(ranks[k], queries, &j);
            runs++;
        }
    }
    CHECK(j.checked == runs * DKB_NQUERIES * 2, "%d results checked", j.checked);
    for (int n = 0; n < DKB_NQUERIES; n++) free(j.want[n][0]), free(j.want[n][1]);
    dkb_tp_destroy(tp);
    dkb_store_close(db);
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);

    if (failures) fprintf(stderr, "%d check(s) failed\n", failures);
    else printf("test_dist_ranks: ok (%d results across ranks)\n", j.checked);
    return failures != 0;
}
