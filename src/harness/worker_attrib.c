/* worker_attrib.c: the worker's kernel attribution (harness_cuda.h,
 * attrib.h): one extra, untimed candidate call recorded with CUPTI's
 * activity API (kernels with their names and start/end times, memory
 * copies, memsets), tallied into own and library kernel time.
 *
 * libcupti is loaded with dlopen only here, when the call is recorded, so
 * no other worker (and no timed call) ever has CUPTI in its process; the
 * build needs CUPTI's headers (found at configure time, DKB_HAVE_CUPTI).
 * Only activity that starts after dkb__wcuda_time_begin's synchronisation
 * and ends before dkb__wcuda_time_end's (dkb__wcuda_attrib_mark) counts:
 * the harness's L2 flush, output poisoning and copies back lie outside that
 * window, so what is tallied is the candidate's own work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/timing.h"   // defines: dkb__now_s
#include "harness/harness_cuda.h"

#if defined(DKB_HAVE_CUDA) && defined(DKB_HAVE_CUPTI)

#include <dlfcn.h>
#include <pthread.h>

#include <cuda_runtime_api.h>
#include <cupti_activity.h>
#include <cupti_result.h>

#ifndef DKB_CUPTI_LIBRARY
#define DKB_CUPTI_LIBRARY "libcupti.so"
#endif

/* The newest record layouts of this toolkit's CUPTI (the library loaded is
 * the one found with these headers, so the layouts agree). Only kind,
 * start, end and name are read. */
#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 kernel_rec;
typedef CUpti_ActivityMemcpy6 memcpy_rec;
typedef CUpti_ActivityMemset4 memset_rec;
#else
typedef CUpti_ActivityKernel9 kernel_rec;
typedef CUpti_ActivityMemcpy5 memcpy_rec;
typedef CUpti_ActivityMemset4 memset_rec;
#endif

#define BUF_BYTES ((size_t)8 << 20)
#define MAX_RECORDS (1 << 20)

typedef struct rec {
    int kind;                  /* 0 kernel, 1 memcpy, 2 memset */
    uint64_t start, end;       /* ns, CUPTI's clock */
    char *name;                /* kernels: malloc'd */
} rec;

static struct {
    void *lib;
    __typeof__(cuptiActivityRegisterCallbacks) *register_callbacks;
    __typeof__(cuptiActivityEnable) *enable;
    __typeof__(cuptiActivityDisable) *disable;
    __typeof__(cuptiActivityFlushAll) *flush_all;
    __typeof__(cuptiActivityGetNextRecord) *next_record;
    __typeof__(cuptiActivityGetNumDroppedRecords) *dropped;
    __typeof__(cuptiGetTimestamp) *timestamp;
    __typeof__(cuptiGetResultString) *result_string;
    int registered;
    volatile int active;       /* between begin and end */
    uint64_t lo, hi;           /* the window (0: not marked) */
    pthread_mutex_t lock;      /* CUPTI may call on_complete from its own thread */
    rec *recs;
    int n, cap;
    int64_t lost;              /* dropped by CUPTI, or by us (too many, no memory) */
    double t0;                 /* when begin started (s) */
} g = {.lock = PTHREAD_MUTEX_INITIALIZER};

static int cupti_fail(dkb_error *err, const char *what, CUptiResult r) {
    const char *s = NULL;
    if (!g.result_string || g.result_string(r, &s) != CUPTI_SUCCESS || !s) s = "unknown CUPTI error";
    return dkb_fail(err, DKB_EIO, "%s: %s (%d)", what, s, (int)r);
}

static int load(dkb_error *err) {
    if (g.lib) return 0;
    void *h = dlopen(DKB_CUPTI_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!h) h = dlopen("libcupti.so", RTLD_NOW | RTLD_LOCAL);
    if (!h) return dkb_fail(err, DKB_ENOENT, "libcupti cannot be loaded: %s", dlerror());
#define SYM(field, name)                                                                          \
    do {                                                                                          \
        void *s_ = dlsym(h, name);                                                                \
        if (!s_) {                                                                                \
            dlclose(h);                                                                           \
            return dkb_fail(err, DKB_ENOENT, "libcupti lacks %s", name);                          \
        }                                                                                         \
        memcpy(&g.field, &s_, sizeof g.field);                                                    \
    } while (0)
    SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
    SYM(enable, "cuptiActivityEnable");
    SYM(disable, "cuptiActivityDisable");
    SYM(flush_all, "cuptiActivityFlushAll");
    SYM(next_record, "cuptiActivityGetNextRecord");
    SYM(dropped, "cuptiActivityGetNumDroppedRecords");
    SYM(timestamp, "cuptiGetTimestamp");
    SYM(result_string, "cuptiGetResultString");
#undef SYM
    g.lib = h;
    return 0;
}

static void CUPTIAPI on_request(uint8_t **buffer, size_t *size, size_t *max_records) {
    *buffer = aligned_alloc(8, BUF_BYTES);
    *size = *buffer ? BUF_BYTES : 0;
    *max_records = 0;
}

static void keep(int kind, uint64_t start, uint64_t end, const char *name) {
    if (g.n == g.cap) {
        int ncap = g.cap ? 2 * g.cap : 1024;
        rec *nr = ncap <= MAX_RECORDS ? realloc(g.recs, (size_t)ncap * sizeof *nr) : NULL;
        if (!nr) {
            g.lost++;
            return;
        }
        g.recs = nr, g.cap = ncap;
    }
    rec *r = &g.recs[g.n++];
    r->kind = kind, r->start = start, r->end = end;
    r->name = name ? strdup(name) : NULL;
}

static void CUPTIAPI on_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
    (void)size;
    pthread_mutex_lock(&g.lock);
    CUpti_Activity *a = NULL;
    while (valid && g.next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
        switch (a->kind) {
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            const kernel_rec *k = (const kernel_rec *)a;
            keep(0, k->start, k->end, k->name ? k->name : "(unnamed)");
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const memcpy_rec *m = (const memcpy_rec *)a;
            keep(1, m->start, m->end, NULL);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const memset_rec *m = (const memset_rec *)a;
            keep(2, m->start, m->end, NULL);
            break;
        }
        default: break;
        }
    }
    size_t dropped = 0;
    if (g.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS) g.lost += (int64_t)dropped;
    pthread_mutex_unlock(&g.lock);
    free(buffer);
}

static const CUpti_ActivityKind KINDS[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
                                           CUPTI_ACTIVITY_KIND_MEMSET};
#define NKINDS (sizeof KINDS / sizeof KINDS[0])

static void stop(void) {
    g.active = 0;
    for (size_t i = 0; i < NKINDS; i++) g.disable(KINDS[i]);
}

static void drop_records(void) {
    for (int i = 0; i < g.n; i++) free(g.recs[i].name);
    g.n = 0;
    g.lost = 0;
}

int dkb__wcuda_attrib_begin(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    g.t0 = dkb__now_s();
    int rc = load(err);
    if (rc) return rc;
    CUptiResult r;
    if (!g.registered) {
        if ((r = g.register_callbacks(on_request, on_complete)) != CUPTI_SUCCESS)
            return cupti_fail(err, "CUPTI: registering the activity buffers", r);
        g.registered = 1;
    }
    /* the device idle, so nothing from before is recorded */
    cudaError_t ce = cudaDeviceSynchronize();
    if (ce != cudaSuccess)
        return dkb_fail(err, DKB_EIO, "before kernel attribution: %s (%s)", cudaGetErrorString(ce), cudaGetErrorName(ce));
    pthread_mutex_lock(&g.lock);
    drop_records();
    pthread_mutex_unlock(&g.lock);
    g.lo = g.hi = 0;
    for (size_t i = 0; i < NKINDS; i++)
        if ((r = g.enable(KINDS[i])) != CUPTI_SUCCESS) {
            stop();
            return cupti_fail(err, "CUPTI: enabling activity records", r);
        }
    g.active = 1;
    return 0;
}

void dkb__wcuda_attrib_mark(int end) {
    if (!g.active) return;
    uint64_t t = 0;
    if (g.timestamp(&t) != CUPTI_SUCCESS) return;
    if (end) g.hi = t;
    else g.lo = t, g.hi = 0;
}

int dkb__wcuda_attrib_end(dkb__wcuda *c, int python, dkb_attribution *out, dkb_error *err) {
    (void)c;
    dkb__attrib_init(out);
    if (!g.lib || !g.active) return dkb_fail(err, DKB_EINVAL, "kernel attribution was not started");
    int rc = 0;
    cudaError_t ce = cudaDeviceSynchronize();
    CUptiResult r = g.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    stop();
    if (ce != cudaSuccess)
        rc = dkb_fail(err, DKB_EIO, "after the attribution call: %s (%s)", cudaGetErrorString(ce), cudaGetErrorName(ce));
    else if (r != CUPTI_SUCCESS)
        rc = cupti_fail(err, "CUPTI: flushing the activity records", r);
    pthread_mutex_lock(&g.lock);
    if (!rc) {
        int windowed = g.lo && g.hi && g.hi >= g.lo;
        dkb_attrib_tally t;
        dkb__attrib_tally_init(&t, dkb__attrib_demangler());
        t.python = python;
        uint64_t (*iv)[2] = windowed && g.n ? malloc(sizeof *iv * (size_t)g.n) : NULL;
        int niv = 0;
        for (int i = 0; i < g.n; i++) {
            const rec *x = &g.recs[i];
            /* by its midpoint: robust to the small skew between CUPTI's
             * device timestamps and its host clock */
            uint64_t mid = x->start + (x->end > x->start ? (x->end - x->start) / 2 : 0);
            if (windowed && (mid < g.lo || mid > g.hi)) continue;
            double ms = x->end > x->start ? (double)(x->end - x->start) / 1e6 : 0;
            if (iv) iv[niv][0] = x->start, iv[niv][1] = x->end, niv++;
            if (x->kind == 0) dkb__attrib_tally_kernel(&t, x->name ? x->name : "(unnamed)", ms);
            else if (x->kind == 1) dkb__attrib_tally_copy(&t, ms);
            else dkb__attrib_tally_memset(&t, ms);
        }
        dkb__attrib_tally_finish(&t, out);
        /* the device's idle time in the window (no records: all of it) */
        if (windowed && (iv || !g.n)) dkb__attrib_busy(iv, niv, g.lo, g.hi, out);
        free(iv);
        out->dropped = g.lost;
        for (int i = 0; i < out->ntop; i++) dkb__text_sanitize(out->top[i].name, strlen(out->top[i].name));
        out->wall_s = dkb__now_s() - g.t0;
        if (!windowed) snprintf(out->note, sizeof out->note, "the call's window was not marked: all activity counted");
        else if (g.lost)
            snprintf(out->note, sizeof out->note, "%lld activity records lost: the sums are low", (long long)g.lost);
    }
    drop_records();
    pthread_mutex_unlock(&g.lock);
    return rc;
}

#else /* no CUPTI in this build */

int dkb__wcuda_attrib_begin(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    return dkb_fail(err, DKB_EINVAL, "not available in this build (no CUPTI headers found when it was configured)");
}

void dkb__wcuda_attrib_mark(int end) { (void)end; }

int dkb__wcuda_attrib_end(dkb__wcuda *c, int python, dkb_attribution *out, dkb_error *err) {
    (void)c, (void)python;
    dkb__attrib_init(out);
    return dkb_fail(err, DKB_EINVAL, "not available in this build (no CUPTI headers found when it was configured)");
}

#endif
