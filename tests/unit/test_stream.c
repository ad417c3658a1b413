/* test_stream.c: the plain-C parts of streaming partitions to a device
 * (src/queries/stream.h), on the CPU:
 *   - dkb__stream_plan_chunks: runs cover the partitions in order, each
 *     within its slot's share of the budget, greedy (fewest runs), two
 *     slots only when two of the largest partition fit, the too-small
 *     budget, and with one slot exactly the CPU path's chunking;
 *   - dkb__pipe_run with a recording fake: every step computed once, in
 *     order, on its run, in a slot that was staged with that run after its
 *     last release and acquired; no slot staged while held; with two slots
 *     run i + 1 staged before run i computes (the overlap); slots reused
 *     (at most nslots), each run staged once when every run has a slot;
 *     an error stops the run with its code;
 *   - the stream over the host device (a stager thread, staging buffers,
 *     text offsets rebased): the slots hold exactly the pieces, pieces
 *     larger than a staging buffer, slots reused across runs without a
 *     slot overwritten while read, and misuse refused. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "queries/stream.h"
#include "test_check.h"

/* ---- planning ---- */

typedef struct sizes {
    int n;
    int64_t b[64];
} sizes;

static int64_t sum_fn(void *arg, int from, int to) {
    const sizes *s = arg;
    int64_t t = 0;
    for (int i = from; i <= to; i++) t += s->b[i];
    return t;
}

/* The CPU path's chunking before streaming (partition.c's loop). */
static int old_chunks(const sizes *s, int64_t resident, int64_t budget, int *first) {
    int k = 0;
    first[0] = 0;
    for (int i = 0; i < s->n; i++)
        if (i > first[k] && resident + sum_fn((void *)s, first[k], i) > budget) first[++k] = i;
    first[k + 1] = s->n;
    return k + 1;
}

static void test_plan(void) {
    static dkb__stream_plan pl;
    unsigned seed = 12345;
    for (int iter = 0; iter < 2000; iter++) {
        sizes s = {0};
        seed = seed * 1103515245u + 12345u;
        s.n = 1 + (int)(seed >> 16) % 20;
        int64_t largest = 0, total = 0;
        for (int i = 0; i < s.n; i++) {
            seed = seed * 1103515245u + 12345u;
            s.b[i] = 1 + (seed >> 8) % 1000;
            if (s.b[i] > largest) largest = s.b[i];
            total += s.b[i];
        }
        seed = seed * 1103515245u + 12345u;
        int64_t resident = (seed >> 12) % 500;
        seed = seed * 1103515245u + 12345u;
        int64_t budget = resident + largest / 2 + (int64_t)((seed >> 8) % (uint64_t)(total + largest));
        for (int maxslots = 1; maxslots <= 2; maxslots++) {
            int rc = dkb__stream_plan_chunks(sum_fn, &s, 0, s.n, resident, budget, maxslots, &pl);
            if (resident + largest > budget) {
                CHECK(rc == DKB_ENOMEM, "iter %d: rc %d, expected DKB_ENOMEM", iter, rc);
                CHECK(pl.largest == largest);
                continue;
            }
            CHECK(rc == 0, "iter %d: rc %d", iter, rc);
            int want_slots = maxslots == 2 && resident + 2 * largest <= budget ? 2 : 1;
            CHECK(pl.nslots == want_slots, "iter %d: %d slots, expected %d", iter, pl.nslots, want_slots);
            int64_t cap = (budget - resident) / pl.nslots, slot = 0;
            CHECK(pl.first[0] == 0 && pl.first[pl.nchunks] == s.n);
            for (int k = 0; k < pl.nchunks; k++) {
                CHECK(pl.first[k] < pl.first[k + 1], "iter %d: run %d empty", iter, k);
                int64_t b = sum_fn(&s, pl.first[k], pl.first[k + 1] - 1);
                CHECK(b <= cap, "iter %d: run %d has %lld bytes over %lld", iter, k, (long long)b, (long long)cap);
                if (k + 1 < pl.nchunks)
                    CHECK(sum_fn(&s, pl.first[k], pl.first[k + 1]) > cap, "iter %d: run %d not greedy", iter, k);
                if (b > slot) slot = b;
            }
            CHECK(pl.slot_bytes == slot);
            CHECK(pl.peak == resident + pl.nslots * slot && pl.peak <= budget, "iter %d: peak %lld budget %lld", iter,
                  (long long)pl.peak, (long long)budget);
            if (maxslots == 1) {
                int first[65];
                int n = old_chunks(&s, resident, budget, first);
                CHECK(n == pl.nchunks && !memcmp(first, pl.first, sizeof(int) * (size_t)(n + 1)),
                      "iter %d: one slot differs from the CPU path's chunking", iter);
            }
        }
    }
    sizes s = {.n = 4, .b = {10, 10, 10, 10}};
    CHECK(dkb__stream_plan_chunks(sum_fn, &s, 0, 4, 5, 14, 2, &pl) == DKB_ENOMEM && pl.largest == 10);
    CHECK(dkb__stream_plan_chunks(sum_fn, &s, 0, 4, 5, 15, 2, &pl) == 0 && pl.nslots == 1 && pl.nchunks == 4);
    CHECK(dkb__stream_plan_chunks(sum_fn, &s, 0, 4, 5, 45, 2, &pl) == 0 && pl.nslots == 2 && pl.nchunks == 2 &&
          pl.peak == 45);
    CHECK(dkb__stream_plan_chunks(sum_fn, &s, 2, 2, 5, 45, 2, &pl) == 0 && pl.nchunks == 0);
    CHECK(dkb__stream_plan_chunks(sum_fn, &s, 0, 4, 5, 45, 9, &pl) == DKB_EINVAL);
}

/* ---- the order of a streamed run ---- */

enum { EV_STAGE, EV_ACQUIRE, EV_COMPUTE, EV_RELEASE };
typedef struct ev {
    int kind, chunk, slot, step;
} ev;
typedef struct rec {
    int n;
    ev e[512];
    int fail_step; /* compute returns DKB_EIO there (-1: never) */
} rec;

static int r_add(rec *r, int kind, int chunk, int slot, int step) {
    if (r->n < 512) r->e[r->n++] = (ev){kind, chunk, slot, step};
    return 0;
}
static int r_stage(void *a, int c, int s) { return r_add(a, EV_STAGE, c, s, -1); }
static int r_acquire(void *a, int c, int s) { return r_add(a, EV_ACQUIRE, c, s, -1); }
static int r_release(void *a, int c, int s) { return r_add(a, EV_RELEASE, c, s, -1); }
static int r_compute(void *a, int step, int c, int s) {
    rec *r = a;
    r_add(r, EV_COMPUTE, c, s, step);
    return step == r->fail_step ? DKB_EIO : 0;
}
static const dkb__pipe_ops rec_ops = {r_stage, r_acquire, r_compute, r_release};

/* Replay the recording against the rules. */
static void check_order(const rec *r, int nchunks, int npasses, int nslots) {
    int nsteps = nchunks * npasses, keep = nchunks <= nslots;
    int holds[DKB__STREAM_MAXSLOTS], staged[DKB__STREAM_MAXSLOTS], held[DKB__STREAM_MAXSLOTS];
    for (int s = 0; s < DKB__STREAM_MAXSLOTS; s++) holds[s] = -1, staged[s] = 0, held[s] = 0;
    int next_step = 0, nstage = 0, computed_at[512];
    int staged_at[64][8]; /* event index of run c's stagings */
    int nstaged_c[64] = {0};
    for (int i = 0; i < r->n; i++) {
        const ev *e = &r->e[i];
        CHECK(e->slot >= 0 && e->slot < nslots, "slot %d out of %d", e->slot, nslots);
        switch (e->kind) {
        case EV_STAGE:
            CHECK(!held[e->slot] && !staged[e->slot], "slot %d staged while in use (event %d)", e->slot, i);
            holds[e->slot] = e->chunk, staged[e->slot] = 1;
            if (nstaged_c[e->chunk] < 8) staged_at[e->chunk][nstaged_c[e->chunk]++] = i;
            nstage++;
            break;
        case EV_ACQUIRE:
            CHECK(staged[e->slot] && holds[e->slot] == e->chunk, "acquire of run %d in slot %d, not staged there",
                  e->chunk, e->slot);
            staged[e->slot] = 0, held[e->slot] = 1;
            break;
        case EV_COMPUTE:
            CHECK(e->step == next_step, "step %d computed, expected %d", e->step, next_step);
            CHECK(e->chunk == e->step % nchunks, "step %d on run %d", e->step, e->chunk);
            CHECK(held[e->slot] && holds[e->slot] == e->chunk, "step %d computed on slot %d not holding run %d",
                  e->step, e->slot, e->chunk);
            if (e->step < 512) computed_at[e->step] = i;
            next_step++;
            break;
        case EV_RELEASE:
            CHECK(held[e->slot], "slot %d released but not held", e->slot);
            held[e->slot] = 0;
            break;
        }
    }
    CHECK(next_step == nsteps, "%d of %d steps computed", next_step, nsteps);
    for (int s = 0; s < nslots; s++) CHECK(!held[s] && !staged[s], "slot %d not released at the end", s);
    CHECK(nstage == (keep ? nchunks : nsteps), "%d stagings for %d runs x %d passes, %d slots", nstage, nchunks,
          npasses, nslots);
    /* the overlap: with two slots the next step's run is staged before this step computes */
    if (nslots >= 2 && !keep)
        for (int j = 0; j + 1 < nsteps; j++) {
            int c = (j + 1) % nchunks, pass = (j + 1) / nchunks, found = 0;
            if (pass < nstaged_c[c]) found = staged_at[c][pass] < computed_at[j];
            CHECK(found, "step %d (run %d) staged only after step %d computed", j + 1, c, j);
        }
}

static void test_pipe(void) {
    static rec r;
    for (int nslots = 1; nslots <= 3; nslots++)
        for (int npasses = 1; npasses <= 2; npasses++)
            for (int nchunks = 1; nchunks <= 9; nchunks++) {
                memset(&r, 0, sizeof r);
                r.fail_step = -1;
                int rc = dkb__pipe_run(&rec_ops, &r, nchunks, npasses, nslots);
                CHECK(rc == 0, "%d runs, %d passes, %d slots: rc %d", nchunks, npasses, nslots, rc);
                int failures0 = failures;
                check_order(&r, nchunks, npasses, nslots);
                if (failures != failures0)
                    fprintf(stderr, "  (in %d runs, %d passes, %d slots)\n", nchunks, npasses, nslots);
            }
    /* an error stops the run with its code, nothing computed after it */
    memset(&r, 0, sizeof r);
    r.fail_step = 3;
    CHECK(dkb__pipe_run(&rec_ops, &r, 6, 1, 2) == DKB_EIO);
    int last = -1;
    for (int i = 0; i < r.n; i++)
        if (r.e[i].kind == EV_COMPUTE) last = r.e[i].step;
    CHECK(last == 3, "computed up to step %d after a failure at 3", last);
    CHECK(dkb__pipe_run(&rec_ops, &r, 0, 1, 2) == 0);
}

/* ---- the stream over the host device ---- */

typedef struct srun {
    dkb__stream *st;
    int nchunks;
    int npieces[8];
    dkb__stream_piece p[8][6];
    int checked, bad;
    dkb_error err;
} srun;

static int s_stage(void *a, int c, int s) {
    srun *r = a;
    return dkb__stream_stage(r->st, s, r->p[c], r->npieces[c], &r->err);
}
static int s_acquire(void *a, int c, int s) {
    (void)c;
    return dkb__stream_acquire(((srun *)a)->st, s, &((srun *)a)->err);
}
static int s_release(void *a, int c, int s) {
    (void)c;
    return dkb__stream_release(((srun *)a)->st, s, &((srun *)a)->err);
}
static int s_compute(void *a, int step, int c, int s) {
    srun *r = a;
    (void)step;
    const char *slot = dkb__stream_slot(r->st, s);
    for (int i = 0; i < r->npieces[c]; i++) {
        const dkb__stream_piece *p = &r->p[c][i];
        if (p->is_offsets) {
            const int64_t *src = p->src, *dst = (const int64_t *)(slot + p->dst_off);
            for (int64_t k = 0; k < p->bytes / 8; k++)
                if (dst[k] != src[k] - p->rebase) {
                    r->bad++;
                    break;
                }
        } else if (memcmp(slot + p->dst_off, p->src, (size_t)p->bytes)) {
            r->bad++;
        }
        r->checked++;
    }
    return 0;
}
static const dkb__pipe_ops s_ops = {s_stage, s_acquire, s_compute, s_release};

static void test_stream_host(void) {
    /* a source of 80 MiB: pieces up to 40 MiB cross staging buffers */
    int64_t nsrc = (int64_t)80 << 20;
    char *src = malloc((size_t)nsrc);
    CHECK(src != NULL);
    if (!src) return;
    for (int64_t i = 0; i < nsrc / 8; i++) ((int64_t *)src)[i] = i * 7 + 3;
    static srun r;
    for (int nslots = 1; nslots <= 2; nslots++) {
        memset(&r, 0, sizeof r);
        r.nchunks = 5;
        int64_t slot_bytes = 0;
        unsigned seed = 99u + (unsigned)nslots;
        for (int c = 0; c < r.nchunks; c++) {
            int64_t at = 0;
            r.npieces[c] = 1 + c % 5;
            for (int i = 0; i < r.npieces[c]; i++) {
                seed = seed * 1103515245u + 12345u;
                int64_t len = c == 2 && i == 0 ? ((int64_t)40 << 20) + 24 : 8 * (int64_t)(1 + (seed >> 8) % 50000);
                int64_t from = 8 * (int64_t)((seed >> 4) % (uint64_t)((nsrc - len) / 8));
                int offs = i % 2;
                r.p[c][i] = (dkb__stream_piece){src + from, len, at, offs ? ((const int64_t *)(src + from))[0] : 0, offs};
                at = dkb__stream_align(at + len);
            }
            if (at > slot_bytes) slot_bytes = at;
        }
        int rc = dkb__stream_open(&dkb__sdev_host, dkb__sdev_host_new(), nslots, slot_bytes, 3, &r.st, &r.err);
        CHECK(rc == 0, "open: %s", r.err.msg);
        if (rc) break;
        rc = dkb__pipe_run(&s_ops, &r, r.nchunks, 2, nslots);
        CHECK(rc == 0, "%d slots: rc %d: %s", nslots, rc, r.err.msg);
        CHECK(r.bad == 0, "%d slots: %d pieces differ from their source", nslots, r.bad);
        int want = 0;
        for (int c = 0; c < r.nchunks; c++) want += 2 * r.npieces[c];
        CHECK(r.checked == want, "%d pieces checked, expected %d", r.checked, want);
        /* misuse: a held slot staged again, a slot acquired twice, a bad piece */
        dkb_error e = {0};
        CHECK(dkb__stream_stage(r.st, 0, r.p[0], r.npieces[0], &e) == 0);
        CHECK(dkb__stream_acquire(r.st, 0, &e) == 0);
        CHECK_ERR(dkb__stream_stage(r.st, 0, r.p[0], 1, &e), DKB_EINTERNAL, e, "before its release");
        CHECK_ERR(dkb__stream_acquire(r.st, 0, &e), DKB_EINTERNAL, e, "not staged");
        CHECK(dkb__stream_release(r.st, 0, &e) == 0);
        CHECK_ERR(dkb__stream_release(r.st, 0, &e), DKB_EINTERNAL, e, "not acquired");
        dkb__stream_piece big = {src, slot_bytes + 8, 0, 0, 0};
        CHECK(dkb__stream_stage(r.st, 0, &big, 1, &e) == 0);
        CHECK_ERR(dkb__stream_acquire(r.st, 0, &e), DKB_EINTERNAL, e, "does not fit");
        dkb__stream_stats ss;
        dkb__stream_close(r.st, &ss);
        CHECK(ss.loads == (r.nchunks <= nslots ? r.nchunks : 2 * r.nchunks) + 2, "%d loads", ss.loads);
        CHECK(ss.bytes > 0);
    }
    free(src);
}

int main(void) {
    test_plan();
    test_pipe();
    test_stream_host();
    if (failures) fprintf(stderr, "test_stream: %d failures\n", failures);
    else printf("test_stream: ok\n");
    return failures != 0;
}
