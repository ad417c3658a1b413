/* stream.c: the plain-C parts of streaming partitions to a device
 * (stream.h): the plan of runs and slots, the order of a streamed run,
 * the stager thread and the host-memory device. CUDA's device primitives
 * are in src/tensor/cuda_stream.cu. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "queries/stream.h"
#include "common/timing.h"  // defines: dkb__now_ms

/* ---- planning ---- */

int dkb__stream_plan_chunks(dkb__stream_bytes_fn bytes, void *arg, int lo, int hi, int64_t resident,
                            int64_t budget, int maxslots, dkb__stream_plan *pl) {
    memset(pl, 0, sizeof *pl);
    pl->nslots = 1;
    if (!bytes || maxslots < 1 || maxslots > DKB__STREAM_MAXSLOTS || hi - lo > DKB__STREAM_MAXRUNS)
        return DKB_EINVAL;
    pl->peak = resident;
    if (hi <= lo) return 0;
    for (int i = lo; i < hi; i++) {
        int64_t b = bytes(arg, i, i);
        if (b > pl->largest) pl->largest = b;
    }
    if (resident + pl->largest > budget) return DKB_ENOMEM;
    int ns = maxslots;
    while (ns > 1 && resident + ns * pl->largest > budget) ns--;
    int64_t cap = (budget - resident) / ns;
    int k = 0;
    pl->first[0] = lo;
    for (int i = lo; i < hi; i++) {
        if (i > pl->first[k] && bytes(arg, pl->first[k], i) > cap) pl->first[++k] = i;
        int64_t b = bytes(arg, pl->first[k], i);
        if (b > pl->slot_bytes) pl->slot_bytes = b;
    }
    pl->nslots = ns;
    pl->nchunks = k + 1;
    pl->first[pl->nchunks] = hi;
    pl->peak = resident + ns * pl->slot_bytes;
    return 0;
}

/* ---- the order of a streamed run ---- */

int dkb__pipe_run(const dkb__pipe_ops *ops, void *arg, int nchunks, int npasses, int nslots) {
    if (nchunks <= 0 || npasses <= 0) return 0;
    if (nslots < 1) nslots = 1;
    int nsteps = nchunks * npasses;
    int keep = nchunks <= nslots; /* every run in a slot of its own, all passes */
    int pre = keep ? nchunks : (nslots < nsteps ? nslots : nsteps);
    int rc = 0;
    for (int j = 0; j < pre && !rc; j++) rc = ops->stage(arg, j % nchunks, j % nslots);
    for (int j = 0; j < nsteps && !rc; j++) {
        int k = j % nchunks, s = keep ? k : j % nslots;
        if (!keep || j < nchunks) rc = ops->acquire(arg, k, s);
        if (!rc) rc = ops->compute(arg, j, k, s);
        if (rc) break;
        if (keep) {
            if (j >= nsteps - nchunks) rc = ops->release(arg, k, s);
            continue;
        }
        rc = ops->release(arg, k, s);
        if (!rc && j + nslots < nsteps) rc = ops->stage(arg, (j + nslots) % nchunks, s);
    }
    return rc;
}

/* ---- the stream ---- */

typedef struct job {
    int slot, n;
    dkb__stream_piece p[DKB__STREAM_MAXPIECES];
} job;

enum { SLOT_FREE = 0, SLOT_QUEUED, SLOT_READY, SLOT_HELD };

struct dkb__stream {
    const dkb__sdev_ops *ops;
    void *dev;
    int nslots, fill_threads;
    int64_t slot_bytes;
    void *slot[DKB__STREAM_MAXSLOTS];
    void *stage[DKB__STREAM_NSTAGE];
    int next_b;                      /* the stager's next staging buffer */
    pthread_t thread;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    job q[DKB__STREAM_MAXSLOTS];     /* queued loads, in order */
    int qhead, qlen;
    int state[DKB__STREAM_MAXSLOTS];
    int slot_rc[DKB__STREAM_MAXSLOTS];
    int closing;
    int rc;                          /* the stager's first failure, and its message */
    dkb_error err;
    dkb__stream_stats st;
};

void dkb__stream_fill(void *dst, const void *src, int64_t len, int offsets, int64_t rebase, int threads) {
    const int64_t piece = (int64_t)1 << 20;
    int64_t n = (len + piece - 1) / piece;
#pragma omp parallel for num_threads(threads) schedule(static) if (n > 1 && threads > 1)
    for (int64_t i = 0; i < n; i++) {
        int64_t a = i * piece, l = len - a < piece ? len - a : piece;
        if (!offsets) {
            memcpy((char *)dst + a, (const char *)src + a, (size_t)l);
        } else {
            int64_t *d = (int64_t *)((char *)dst + a);
            const int64_t *s = (const int64_t *)((const char *)src + a);
            for (int64_t k = 0; k < l / 8; k++) d[k] = s[k] - rebase;
        }
    }
}

/* The stager's work for one load: fence the slot, then every piece
 * through the staging buffers in turn, then mark it staged. */
static int load(dkb__stream *s, const job *j, int64_t *bytes, dkb_error *err) {
    const dkb__sdev_ops *o = s->ops;
    int rc = o->fence(s->dev, j->slot, err);
    for (int i = 0; !rc && i < j->n; i++) {
        const dkb__stream_piece *p = &j->p[i];
        if (p->bytes < 0 || p->dst_off < 0 || p->dst_off + p->bytes > s->slot_bytes || (p->is_offsets && p->bytes % 8))
            return dkb_fail(err, DKB_EINTERNAL, "stream: piece %d of slot %d (%lld bytes at %lld) does not fit its %lld bytes",
                            i, j->slot, (long long)p->bytes, (long long)p->dst_off, (long long)s->slot_bytes);
        for (int64_t off = 0; !rc && off < p->bytes; off += DKB__STREAM_STAGE_BYTES) {
            int64_t len = p->bytes - off < DKB__STREAM_STAGE_BYTES ? p->bytes - off : DKB__STREAM_STAGE_BYTES;
            int b = s->next_b;
            s->next_b = (b + 1) % DKB__STREAM_NSTAGE;
            rc = o->stage_wait(s->dev, b, err);
            if (rc) break;
            dkb__stream_fill(s->stage[b], (const char *)p->src + off, len, p->is_offsets, p->rebase, s->fill_threads);
            rc = o->copy(s->dev, b, j->slot, p->dst_off + off, len, err);
            if (!rc) *bytes += len;
        }
    }
    if (!rc) rc = o->staged(s->dev, j->slot, err);
    return rc;
}

static void *stager(void *arg) {
    dkb__stream *s = arg;
    dkb_error e = {0};
    int rc = s->ops->thread_init ? s->ops->thread_init(s->dev, &e) : 0;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        while (!s->qlen && !s->closing) pthread_cond_wait(&s->cv, &s->mu);
        if (!s->qlen) break;
        job *j = &s->q[s->qhead];
        pthread_mutex_unlock(&s->mu);
        double t0 = dkb__now_ms();
        int64_t bytes = 0;
        if (!rc) rc = load(s, j, &bytes, &e);
        double ms = dkb__now_ms() - t0;
        pthread_mutex_lock(&s->mu);
        s->st.fill_ms += ms;
        s->st.bytes += bytes;
        s->st.loads++;
        if (rc && !s->rc) s->rc = rc, s->err = e;
        s->slot_rc[j->slot] = rc;
        s->state[j->slot] = SLOT_READY;
        s->qhead = (s->qhead + 1) % DKB__STREAM_MAXSLOTS;
        s->qlen--;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

int dkb__stream_open(const dkb__sdev_ops *ops, void *dev, int nslots, int64_t slot_bytes, int fill_threads,
                     dkb__stream **out, dkb_error *err) {
    *out = NULL;
    if (!ops || nslots < 1 || nslots > DKB__STREAM_MAXSLOTS || slot_bytes < 0) {
        if (ops && dev) ops->close(dev);
        return dkb_fail(err, DKB_EINVAL, "stream: bad arguments (%d slots of %lld bytes)", nslots, (long long)slot_bytes);
    }
    dkb__stream *s = calloc(1, sizeof *s);
    if (!s) {
        ops->close(dev);
        return dkb_fail(err, DKB_ENOMEM, "stream: out of memory");
    }
    s->ops = ops, s->dev = dev, s->nslots = nslots, s->slot_bytes = slot_bytes;
    s->fill_threads = fill_threads < 1 ? 1 : fill_threads;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
    int rc = ops->open(dev, nslots, slot_bytes, DKB__STREAM_NSTAGE, DKB__STREAM_STAGE_BYTES, s->slot, s->stage, err);
    if (!rc && pthread_create(&s->thread, NULL, stager, s))
        rc = dkb_fail(err, DKB_ENOMEM, "stream: cannot start the stager thread");
    if (rc) {
        dkb__stream_close(s, NULL);
        return rc;
    }
    s->started = 1;
    *out = s;
    return 0;
}

void *dkb__stream_slot(const dkb__stream *s, int slot) {
    return s && slot >= 0 && slot < s->nslots ? s->slot[slot] : NULL;
}

int dkb__stream_stage(dkb__stream *s, int slot, const dkb__stream_piece *p, int n, dkb_error *err) {
    if (!s || slot < 0 || slot >= s->nslots || n < 0 || n > DKB__STREAM_MAXPIECES)
        return dkb_fail(err, DKB_EINTERNAL, "stream: stage: bad slot %d or %d pieces", slot, n);
    pthread_mutex_lock(&s->mu);
    int rc = 0;
    if (s->state[slot] != SLOT_FREE)
        rc = dkb_fail(err, DKB_EINTERNAL, "stream: slot %d staged again before its release", slot);
    else if (s->qlen == DKB__STREAM_MAXSLOTS)
        rc = dkb_fail(err, DKB_EINTERNAL, "stream: too many loads queued");
    if (!rc) {
        job *j = &s->q[(s->qhead + s->qlen) % DKB__STREAM_MAXSLOTS];
        j->slot = slot, j->n = n;
        if (n) memcpy(j->p, p, sizeof *p * (size_t)n);
        s->qlen++;
        s->state[slot] = SLOT_QUEUED;
        pthread_cond_broadcast(&s->cv);
    }
    pthread_mutex_unlock(&s->mu);
    return rc;
}

int dkb__stream_acquire(dkb__stream *s, int slot, dkb_error *err) {
    if (!s || slot < 0 || slot >= s->nslots) return dkb_fail(err, DKB_EINTERNAL, "stream: acquire: bad slot %d", slot);
    double t0 = dkb__now_ms();
    pthread_mutex_lock(&s->mu);
    while (s->state[slot] == SLOT_QUEUED) pthread_cond_wait(&s->cv, &s->mu);
    int st = s->state[slot], rc = s->slot_rc[slot];
    if (rc && err) *err = s->err;
    pthread_mutex_unlock(&s->mu);
    if (st != SLOT_READY) return dkb_fail(err, DKB_EINTERNAL, "stream: slot %d acquired but not staged", slot);
    if (rc) return rc;
    double ms = 0;
    rc = s->ops->wait(s->dev, slot, &ms, err);
    s->st.stall_ms += dkb__now_ms() - t0;
    if (rc) return rc;
    s->st.copy_ms += ms;
    pthread_mutex_lock(&s->mu);
    s->state[slot] = SLOT_HELD;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

int dkb__stream_release(dkb__stream *s, int slot, dkb_error *err) {
    if (!s || slot < 0 || slot >= s->nslots) return dkb_fail(err, DKB_EINTERNAL, "stream: release: bad slot %d", slot);
    pthread_mutex_lock(&s->mu);
    int held = s->state[slot] == SLOT_HELD;
    pthread_mutex_unlock(&s->mu);
    if (!held) return dkb_fail(err, DKB_EINTERNAL, "stream: slot %d released but not acquired", slot);
    int rc = s->ops->release(s->dev, slot, err);
    if (rc) return rc;
    pthread_mutex_lock(&s->mu);
    s->state[slot] = SLOT_FREE;
    pthread_mutex_unlock(&s->mu);
    return 0;
}

void dkb__stream_close(dkb__stream *s, dkb__stream_stats *st) {
    if (!s) return;
    if (s->started) {
        pthread_mutex_lock(&s->mu);
        s->closing = 1;
        pthread_cond_broadcast(&s->cv);
        pthread_mutex_unlock(&s->mu);
        pthread_join(s->thread, NULL);
    }
    s->ops->close(s->dev);
    if (st) *st = s->st;
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
    free(s);
}

/* ---- the host-memory device ---- */

typedef struct hdev {
    int nslots, nstage;
    void *slot[DKB__STREAM_MAXSLOTS];
    void *stage[DKB__STREAM_NSTAGE];
    pthread_mutex_t mu;
    int reading[DKB__STREAM_MAXSLOTS]; /* between wait and release */
    int staged[DKB__STREAM_MAXSLOTS];  /* since the last fence */
} hdev;

void *dkb__sdev_host_new(void) {
    hdev *h = calloc(1, sizeof *h);
    if (h) pthread_mutex_init(&h->mu, NULL);
    return h;
}

static int h_open(void *dev, int nslots, int64_t slot_bytes, int nstage, int64_t stage_bytes, void **slots,
                  void **stage, dkb_error *err) {
    hdev *h = dev;
    if (!h) return dkb_fail(err, DKB_ENOMEM, "stream: out of memory");
    if (nslots > DKB__STREAM_MAXSLOTS || nstage > DKB__STREAM_NSTAGE)
        return dkb_fail(err, DKB_EINVAL, "stream: %d slots, %d staging buffers", nslots, nstage);
    for (int i = 0; i < nslots; i++) {
        /* malloc's alignment is 16; the pieces are aligned within the slot */
        if (!(h->slot[i] = aligned_alloc((size_t)DKB__STREAM_ALIGN, (size_t)dkb__stream_align(slot_bytes ? slot_bytes : 1))))
            return dkb_fail(err, DKB_ENOMEM, "stream: out of memory for a slot of %lld bytes", (long long)slot_bytes);
        h->nslots = i + 1;
        slots[i] = h->slot[i];
    }
    for (int i = 0; i < nstage; i++) {
        if (!(h->stage[i] = malloc((size_t)stage_bytes))) return dkb_fail(err, DKB_ENOMEM, "stream: out of memory");
        h->nstage = i + 1;
        stage[i] = h->stage[i];
    }
    return 0;
}

static int h_fence(void *dev, int slot, dkb_error *err) {
    hdev *h = dev;
    pthread_mutex_lock(&h->mu);
    int bad = h->reading[slot];
    h->staged[slot] = 0;
    pthread_mutex_unlock(&h->mu);
    return bad ? dkb_fail(err, DKB_EINTERNAL, "stream: slot %d fenced while its compute reads it", slot) : 0;
}

static int h_stage_wait(void *dev, int b, dkb_error *err) { return (void)dev, (void)b, (void)err, 0; }

static int h_copy(void *dev, int b, int slot, int64_t off, int64_t len, dkb_error *err) {
    hdev *h = dev;
    pthread_mutex_lock(&h->mu);
    int bad = h->reading[slot];
    pthread_mutex_unlock(&h->mu);
    if (bad) return dkb_fail(err, DKB_EINTERNAL, "stream: slot %d overwritten while its compute reads it", slot);
    memcpy((char *)h->slot[slot] + off, h->stage[b], (size_t)len);
    return 0;
}

static int h_staged(void *dev, int slot, dkb_error *err) {
    hdev *h = dev;
    (void)err;
    pthread_mutex_lock(&h->mu);
    h->staged[slot] = 1;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static int h_wait(void *dev, int slot, double *ms, dkb_error *err) {
    hdev *h = dev;
    pthread_mutex_lock(&h->mu);
    int ok = h->staged[slot];
    if (ok) h->reading[slot] = 1;
    pthread_mutex_unlock(&h->mu);
    *ms = 0;
    return ok ? 0 : dkb_fail(err, DKB_EINTERNAL, "stream: slot %d waited for before it was staged", slot);
}

static int h_release(void *dev, int slot, dkb_error *err) {
    hdev *h = dev;
    (void)err;
    pthread_mutex_lock(&h->mu);
    h->reading[slot] = 0;
    pthread_mutex_unlock(&h->mu);
    return 0;
}

static void h_close(void *dev) {
    hdev *h = dev;
    if (!h) return;
    for (int i = 0; i < h->nslots; i++) free(h->slot[i]);
    for (int i = 0; i < h->nstage; i++) free(h->stage[i]);
    pthread_mutex_destroy(&h->mu);
    free(h);
}

const dkb__sdev_ops dkb__sdev_host = {
    .name = "host",
    .open = h_open,
    .thread_init = NULL,
    .fence = h_fence,
    .stage_wait = h_stage_wait,
    .copy = h_copy,
    .staged = h_staged,
    .wait = h_wait,
    .release = h_release,
    .close = h_close,
};

#ifndef DKB_HAVE_CUDA
int dkb__cuda_sdev_open(dkb_tp *work, const dkb__sdev_ops **ops, void **dev, dkb_error *err) {
    (void)work;
    *ops = NULL, *dev = NULL;
    return dkb_fail(err, DKB_EINVAL, "stream: this dkb was built without CUDA");
}
double dkb__cuda_h2d_gbs(void) { return NAN; }
int64_t dkb__cuda_free_bytes(void) { return -1; }
int dkb__cuda_stream_scrub(dkb_error *err) {
    (void)err;
    return 0;
}
#endif
