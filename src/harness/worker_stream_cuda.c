/* worker_stream_cuda.c: the device side of the loader on the CUDA backend
 * (worker_stream_cuda.h; candidate.h, "On CUDA"): one device region for
 * the loads, allocated once per worker; pinned staging buffers the rows
 * pass through (filled from the store's mapping on the worker's threads by
 * dkb__stream_fill, as the baseline's streaming fills, text offsets rebased
 * on the way), copied with cudaMemcpyAsync on a copy
 * stream of the loader's own; the candidate's stream made to wait for a
 * load's copies; a released load overwritten on the candidate's stream
 * (after the work it enqueued before the release), and every later copy
 * into the region ordered after that; the whole region overwritten after
 * every call. Nothing here is managed memory or host registration. */
#include "harness/worker_stream_cuda.h"

#include <stdlib.h>

#include "queries/stream.h"  // defines: dkb__stream_fill

int dkb__wsdev_place(const size_t *off, const size_t *len, int n, size_t size, size_t want, size_t align,
                     size_t *out) {
    int found = 0;
    size_t best = 0, best_dist = 0;
    /* the gaps: from each load's end (or 0) to the next load's start above it (or size) */
    for (int g = -1; g < n; g++) {
        const size_t lo = g < 0 ? 0 : off[g] + len[g];
        size_t hi = size;
        int hi_load = 0;
        int inside = 0;
        for (int i = 0; i < n; i++) {
            if (off[i] < lo && off[i] + len[i] > lo) inside = 1; /* lo lies inside a load: not a gap */
            if (off[i] >= lo && off[i] < hi) hi = off[i], hi_load = 1;
        }
        if (inside || hi < lo || hi - lo < want) continue;
        const size_t at[2] = {lo, (hi - want) / align * align};
        for (int k = 0; k < 2; k++) {
            if (at[k] < lo || at[k] + want > hi) continue;
            /* distance to the nearest load held: the gap's ends that are loads */
            const size_t below = g < 0 ? (size_t)-1 : at[k] - lo;
            const size_t above = hi_load ? hi - (at[k] + want) : (size_t)-1;
            const size_t dist = below < above ? below : above;
            if (!found || dist > best_dist || (dist == best_dist && at[k] < best)) found = 1, best = at[k], best_dist = dist;
        }
    }
    if (found) *out = best;
    return found;
}

#ifdef DKB_HAVE_CUDA

#include <cuda_runtime_api.h>

#define NSTAGE 2
#define STAGE_BYTES ((size_t)64 << 20)
#define POISON 0xa5

struct dkb__wsdev {
    char *region;          /* device */
    size_t size;
    cudaStream_t copy;
    void *stage[NSTAGE];   /* pinned host */
    cudaEvent_t stage_done[NSTAGE];
    int stage_used[NSTAGE];
    int next_b;
    cudaEvent_t ready;     /* a load's last copy */
    cudaEvent_t released;  /* the candidate stream after the latest release's overwrite */
    int wait_released;
    int threads;
};

static int cu_fail(dkb_error *err, const char *what, cudaError_t e) {
    (void)cudaGetLastError();
    return dkb_fail(err, e == cudaErrorMemoryAllocation ? DKB_ENOMEM : DKB_EIO, "the loader: %s: %s (%s)", what,
                    cudaGetErrorName(e), cudaGetErrorString(e));
}
#define WS_TRY(what, call)                                  \
    do {                                                    \
        cudaError_t e_ = (call);                            \
        if (e_ != cudaSuccess) return cu_fail(err, what, e_); \
    } while (0)

int dkb__wsdev_open(size_t size, int threads, dkb__wsdev **out, dkb_error *err) {
    *out = NULL;
    dkb__wsdev *d = calloc(1, sizeof *d);
    if (!d) return dkb_fail(err, DKB_ENOMEM, "the loader: out of memory");
    d->threads = threads < 1 ? 1 : threads;
    *out = d; /* closed by the caller also on failure */
    d->size = size ? size : 256;
    WS_TRY("device memory for the loads", cudaMalloc((void **)&d->region, d->size));
    WS_TRY("a copy stream", cudaStreamCreateWithFlags(&d->copy, cudaStreamNonBlocking));
    for (int b = 0; b < NSTAGE; b++) {
        WS_TRY("pinned staging", cudaHostAlloc(&d->stage[b], STAGE_BYTES, cudaHostAllocDefault));
        WS_TRY("an event", cudaEventCreateWithFlags(&d->stage_done[b], cudaEventDisableTiming));
    }
    WS_TRY("an event", cudaEventCreateWithFlags(&d->ready, cudaEventDisableTiming));
    WS_TRY("an event", cudaEventCreateWithFlags(&d->released, cudaEventDisableTiming));
    WS_TRY("overwriting the loads' memory", cudaMemsetAsync(d->region, POISON, d->size, d->copy));
    WS_TRY("overwriting the loads' memory", cudaStreamSynchronize(d->copy));
    return 0;
}

char *dkb__wsdev_region(const dkb__wsdev *d) { return d->region; }
size_t dkb__wsdev_size(const dkb__wsdev *d) { return d->size; }

int dkb__wsdev_copy(dkb__wsdev *d, size_t off, const void *src, size_t len, int offsets, int64_t rebase,
                    dkb_error *err) {
    if (off > d->size || len > d->size - off || (offsets && len % 8))
        return dkb_fail(err, DKB_EINTERNAL, "the loader: a copy of %zu bytes at %zu past its %zu", len, off, d->size);
    if (d->wait_released) {
        /* the region's bytes may still be read by work enqueued before a release */
        WS_TRY("ordering a copy after a release", cudaStreamWaitEvent(d->copy, d->released, 0));
        d->wait_released = 0;
    }
    for (size_t at = 0; at < len; at += STAGE_BYTES) {
        const size_t l = len - at < STAGE_BYTES ? len - at : STAGE_BYTES;
        const int b = d->next_b;
        d->next_b = (b + 1) % NSTAGE;
        if (d->stage_used[b]) WS_TRY("waiting for staging", cudaEventSynchronize(d->stage_done[b]));
        dkb__stream_fill(d->stage[b], (const char *)src + at, (int64_t)l, offsets, rebase, d->threads);
        WS_TRY("a copy to the device",
               cudaMemcpyAsync(d->region + off + at, d->stage[b], l, cudaMemcpyHostToDevice, d->copy));
        WS_TRY("an event", cudaEventRecord(d->stage_done[b], d->copy));
        d->stage_used[b] = 1;
    }
    return 0;
}

int dkb__wsdev_issued(dkb__wsdev *d, void *stream, dkb_error *err) {
    WS_TRY("an event", cudaEventRecord(d->ready, d->copy));
    WS_TRY("the candidate's stream waiting for a load", cudaStreamWaitEvent((cudaStream_t)stream, d->ready, 0));
    return 0;
}

int dkb__wsdev_release(dkb__wsdev *d, size_t off, size_t len, void *stream, dkb_error *err) {
    if (off > d->size || len > d->size - off)
        return dkb_fail(err, DKB_EINTERNAL, "the loader: a release of %zu bytes at %zu past its %zu", len, off, d->size);
    WS_TRY("overwriting a released load", cudaMemsetAsync(d->region + off, POISON, len, (cudaStream_t)stream));
    WS_TRY("an event", cudaEventRecord(d->released, (cudaStream_t)stream));
    d->wait_released = 1;
    return 0;
}

int dkb__wsdev_call_end(dkb__wsdev *d, dkb_error *err) {
    /* the call's work is done (the window closed after a device-wide
     * synchronisation); what it left in the region goes */
    WS_TRY("overwriting the loads' memory", cudaMemsetAsync(d->region, POISON, d->size, d->copy));
    WS_TRY("overwriting the loads' memory", cudaStreamSynchronize(d->copy));
    d->wait_released = 0;
    return 0;
}

void dkb__wsdev_close(dkb__wsdev *d) {
    if (!d) return;
    if (d->copy) cudaStreamSynchronize(d->copy);
    for (int b = 0; b < NSTAGE; b++) {
        if (d->stage_done[b]) cudaEventDestroy(d->stage_done[b]);
        if (d->stage[b]) cudaFreeHost(d->stage[b]);
    }
    if (d->ready) cudaEventDestroy(d->ready);
    if (d->released) cudaEventDestroy(d->released);
    if (d->copy) cudaStreamDestroy(d->copy);
    if (d->region) cudaFree(d->region);
    (void)cudaGetLastError();
    free(d);
}

#else /* no CUDA: the CPU loader only */

int dkb__wsdev_open(size_t size, int threads, dkb__wsdev **out, dkb_error *err) {
    (void)size, (void)threads;
    *out = NULL;
    return dkb_fail(err, DKB_EINVAL, "the loader: this build has no CUDA");
}
char *dkb__wsdev_region(const dkb__wsdev *d) { (void)d; return NULL; }
size_t dkb__wsdev_size(const dkb__wsdev *d) { (void)d; return 0; }
int dkb__wsdev_copy(dkb__wsdev *d, size_t off, const void *src, size_t len, int offsets, int64_t rebase,
                    dkb_error *err) {
    (void)d, (void)off, (void)src, (void)len, (void)offsets, (void)rebase;
    return dkb_fail(err, DKB_EINVAL, "the loader: this build has no CUDA");
}
int dkb__wsdev_issued(dkb__wsdev *d, void *stream, dkb_error *err) {
    (void)d, (void)stream;
    return dkb_fail(err, DKB_EINVAL, "the loader: this build has no CUDA");
}
int dkb__wsdev_release(dkb__wsdev *d, size_t off, size_t len, void *stream, dkb_error *err) {
    (void)d, (void)off, (void)len, (void)stream;
    return dkb_fail(err, DKB_EINVAL, "the loader: this build has no CUDA");
}
int dkb__wsdev_call_end(dkb__wsdev *d, dkb_error *err) {
    (void)d;
    return dkb_fail(err, DKB_EINVAL, "the loader: this build has no CUDA");
}
void dkb__wsdev_close(dkb__wsdev *d) { (void)d; }

#endif
