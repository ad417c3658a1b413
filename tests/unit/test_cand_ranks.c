/* test_cand_ranks.c: the candidate toolkit's ranks helpers
 * (include/dkb/cand_ranks.h) over a fake communicator of 3 ranks seen from
 * rank 0: the other ranks' contributions are fixtures the fake's
 * collectives add in (all-reduce) or place after rank 0's (gathers, in
 * rank order); and on one rank every helper is a no-op that calls nothing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/cand_ranks.h"
#include "test_check.h"

static int calls;            /* collectives called */
static int64_t other_n[3];   /* records of ranks 1 and 2 (gathers) */
static const void *other[3]; /* ... their bytes */

static int f_i64(const dkb_cand_env *env, int64_t *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    calls++;
    for (int64_t i = 0; i < n; i++) buf[i] = op == DKB_CAND_SUM ? buf[i] * 3 : buf[i]; /* every rank the same */
    return 0;
}
static int f_f64(const dkb_cand_env *env, double *buf, int64_t n, dkb_cand_op op) {
    (void)env, (void)op;
    calls++;
    for (int64_t i = 0; i < n; i++) buf[i] *= 3;
    return 0;
}
static int f_i128(const dkb_cand_env *env, __int128 *buf, int64_t n, dkb_cand_op op) {
    (void)env;
    calls++;
    for (int64_t i = 0; i < n; i++) buf[i] = op == DKB_CAND_SUM ? buf[i] * 3 : buf[i];
    return 0;
}
static int f_sizes(const dkb_cand_env *env, int64_t mine, int64_t *all) {
    (void)env;
    calls++;
    all[0] = mine, all[1] = other_n[1], all[2] = other_n[2];
    return 0;
}
static int f_gatherv(const dkb_cand_env *env, const void *send, int64_t bytes, void *recv, const int64_t *counts) {
    (void)env;
    calls++;
    if (counts[0] != bytes) return DKB_CAND_EINVAL;
    if (bytes) memcpy(recv, send, (size_t)bytes);
    memcpy((char *)recv + counts[0], other[1], (size_t)counts[1]);
    memcpy((char *)recv + counts[0] + counts[1], other[2], (size_t)counts[2]);
    return 0;
}
static int f_barrier(const dkb_cand_env *env) {
    (void)env;
    calls++;
    return 0;
}
static const dkb_cand_comm FAKE = {f_i64, f_f64, f_i128, f_sizes, f_gatherv, f_barrier};

typedef struct {
    int64_t v, key;
} rec;

static int rec_before(const void *a, const void *b) { return ((const rec *)a)->v > ((const rec *)b)->v; }

int main(void) {
    dkb_cand_env one = {.abi_version = DKB_CANDIDATE_ABI_VERSION, .threads = 1, .rank = 0, .nranks = 1, .comm = &FAKE};
    dkb_cand_env three = one;
    three.nranks = 3;

    /* one rank: nothing is called, nothing copied */
    int64_t a[2] = {5, 7};
    __int128 b[1] = {11};
    CHECK(dkb_ranks_sum_i64(&one, a, 2) == 0 && dkb_ranks_sum_mixed(&one, a, 2, b, 1) == 0);
    CHECK(a[0] == 5 && a[1] == 7 && b[0] == 11 && calls == 0);
    void *all;
    int64_t total;
    CHECK(dkb_ranks_gather(&one, a, 2, sizeof a[0], &all, &total) == 0 && all == a && total == 2 && calls == 0);
    dkb_ranks_gather_free(all, a);
    dkb_cand_result res = {.nrows = 4};
    CHECK(dkb_ranks_writes(&one, &res) == 1 && res.nrows == 4);

    /* three ranks: sums (every rank contributes the same here: x 3) */
    CHECK(dkb_ranks_sum_i64(&three, a, 2) == 0 && a[0] == 15 && a[1] == 21 && calls == 1);
    int64_t c[2] = {1, 2};
    __int128 d[2] = {(__int128)1 << 70, 3};
    CHECK(dkb_ranks_sum_mixed(&three, c, 2, d, 2) == 0 && calls == 2); /* one collective */
    CHECK(c[0] == 3 && c[1] == 6 && d[0] == ((__int128)3 << 70) && d[1] == 9);
    double e[1] = {0.5};
    CHECK(dkb_ranks_sum_f64(&three, e, 1) == 0 && e[0] == 1.5);
    CHECK(dkb_ranks_sum_i64(&three, a, 0) == 0 && calls == 3); /* n == 0: no call */

    /* gather: rank 0's records, then rank 1's, then rank 2's */
    const rec mine[2] = {{9, 1}, {4, 2}}, r1[1] = {{7, 3}}, r2[3] = {{9, 4}, {8, 5}, {1, 6}};
    other_n[1] = sizeof r1, other_n[2] = sizeof r2, other[1] = r1, other[2] = r2;
    calls = 0;
    CHECK(dkb_ranks_gather(&three, mine, 2, sizeof(rec), &all, &total) == 0 && calls == 2 && total == 6);
    const rec *g = all;
    const int64_t want_keys[6] = {1, 2, 3, 4, 5, 6};
    for (int i = 0; i < 6; i++) CHECK(g[i].key == want_keys[i]);
    dkb_ranks_gather_free(all, mine);
    /* an empty share gathers too */
    CHECK(dkb_ranks_gather(&three, NULL, 0, sizeof(rec), &all, &total) == 0 && total == 4);
    dkb_ranks_gather_free(all, NULL);

    /* top 3 of every rank's top lists: ties in rank order (9 of rank 0, then of rank 2) */
    rec top[3] = {{9, 1}, {4, 2}};
    int n = 2;
    CHECK(dkb_ranks_topk(&three, top, &n, 3, sizeof(rec), rec_before) == 0 && n == 3);
    CHECK(top[0].key == 1 && top[1].key == 4 && top[2].key == 5);

    /* only rank 0 writes */
    dkb_cand_env r1env = three;
    r1env.rank = 1;
    res.nrows = 4;
    CHECK(dkb_ranks_writes(&three, &res) == 1 && res.nrows == 4);
    CHECK(dkb_ranks_writes(&r1env, &res) == 0 && res.nrows == 0);
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_cand_ranks: ok\n");
    return failures != 0;
}
