/* worker_cuda.c: the worker's side of `dkb eval --backend cuda`
 * (harness_cuda.h): open the columns the evaluating process exported (CUDA
 * IPC), adopt them as the resident columns of the worker's CUDA contexts,
 * point the candidate's views at them, give it device outputs (poisoned
 * before every call), time calls with CUDA events after an L2 flush and a
 * device-wide synchronisation, watch input checksums, measure device
 * bandwidth, and around every candidate call make the device state
 * pristine again (registered variables restored, the stream's attributes
 * reset, kernel attributes put back; after the call what it allocated
 * poisoned and freed: cuda_interpose.c). The fault handling, checks and
 * report stay in worker.c. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/harness_cuda.h"

#ifdef DKB_HAVE_CUDA

#include <cuda_runtime_api.h>
#include <cjson/cJSON.h>

#include "harness/cuda_interpose.h"  // defines: dkb__cuda_interpose_*
#include "tensor/tp_internal.h"        // defines: dkb__cuda_adopt_column

#define MAX_WATCH 8192
#define BW_MAX ((size_t)1 << 30)
#define MAX_STREAM_ATTR 64         /* cudaLaunchAttributeID values probed on streams */

typedef struct wcol {
    const dkb_store_column *col;
    const char *table, *name;  /* the store's strings */
    void *data;
    size_t data_size;
    char *bytes;
    int64_t nbytes;
} wcol;

typedef struct watch {
    const void *dev;
    size_t bytes;
    char *label;
    uint64_t sum;
} watch;

typedef struct dev_out {
    void *data;                /* cap (STR: cap + 1) elements */
    char *bytes;               /* STR: bytes_cap characters */
    size_t data_size, bytes_size;
    size_t data_alloc, bytes_alloc;   /* the sizes allocated (and poisoned): OUT_GRAIN multiples */
} dev_out;

/* Core outputs are allocated in whole 2 MiB pages and poisoned whole: the
 * slack past `cap` elements, which the candidate may write but the harness
 * never reads, would otherwise carry data from one call to the next. */
#define OUT_GRAIN ((size_t)2 << 20)
static size_t out_alloc_size(size_t bytes) {
    const size_t pages = bytes ? (bytes + OUT_GRAIN - 1) / OUT_GRAIN : 1;
    return pages * OUT_GRAIN;
}

struct dkb__wcuda {
    int n;
    wcol *cols;
    cudaStream_t stream;
    /* a stream as created, never handed out: the default attributes */
    cudaStream_t pristine;
    int nsattr, copy_attrs;
    cudaLaunchAttributeID sattr_id[MAX_STREAM_ATTR];
    cudaLaunchAttributeValue sattr_val[MAX_STREAM_ATTR];
    /* the candidate's registered variables: their addresses, and their
     * initial device image (taken before the first call) */
    int vars_ready, batch_off;
    size_t nvar;
    void **var_dst, **var_src;
    size_t *var_size;
    char *var_image;
    cudaMemPool_t pool;        /* the device's default memory pool */
    cudaEvent_t start, stop;
    void *flush;               /* L2 flush buffer */
    size_t flush_size, l2;
    int flush_round;
    int nout;
    dev_out *outs;
    int nwatch;
    watch *watch;
};

static int cu_fail(dkb_error *err, const char *what, cudaError_t e) {
    return dkb_fail(err, DKB_EIO, "%s: %s (%s)", what, cudaGetErrorString(e), cudaGetErrorName(e));
}
#define CU_TRY(what, call)                                     \
    do {                                                       \
        cudaError_t e_ = (call);                               \
        if (e_ != cudaSuccess) return cu_fail(err, what, e_);  \
    } while (0)

static int parse_handle(const char *hex, cudaIpcMemHandle_t *h) {
    if (!hex || strlen(hex) != 2 * CUDA_IPC_HANDLE_SIZE) return -1;
    memset(h, 0, sizeof *h);
    for (int i = 0; i < CUDA_IPC_HANDLE_SIZE; i++) {
        int v = 0;
        for (int k = 0; k < 2; k++) {
            char ch = hex[2 * i + k];
            int d = ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
            if (d < 0) return -1;
            v = v * 16 + d;
        }
        ((unsigned char *)h->reserved)[i] = (unsigned char)v;
    }
    return 0;
}

static int open_handle(const char *hex, const char *label, void **p, dkb_error *err) {
    cudaIpcMemHandle_t h;
    if (parse_handle(hex, &h)) return dkb_fail(err, DKB_EPARSE, "worker: bad IPC handle for %s", label);
    cudaError_t e = cudaIpcOpenMemHandle(p, h, cudaIpcMemLazyEnablePeerAccess);
    if (e != cudaSuccess) {
        char what[256];
        snprintf(what, sizeof what, "worker: cudaIpcOpenMemHandle %s", label);
        return cu_fail(err, what, e);
    }
    return 0;
}

/* Give the worker its own copy of every column when the device has room.
 * Kernels read memory imported by CUDA IPC at about half the bandwidth of
 * the process's own allocations (bench/gpu/scan_probe.cu --ipc; docs/gpu.md),
 * and baseline and candidate both read these columns, so the copy makes
 * the timings those of ordinary resident data. A device-to-device copy of
 * all columns takes milliseconds. Without room (free memory under the
 * copies plus 1 GiB) the imported memory is used as it is.
 * DKB_WORKER_IPC_DIRECT=1 keeps the imported memory (for comparisons). */
static int private_copies(dkb__wcuda *c, dkb_error *err) {
    const char *direct = getenv("DKB_WORKER_IPC_DIRECT");
    if (direct && !strcmp(direct, "1")) return 0;
    size_t need = 0, free_b = 0, total_b = 0;
    for (int i = 0; i < c->n; i++) need += c->cols[i].data_size + (c->cols[i].bytes ? (size_t)c->cols[i].nbytes : 0);
    CU_TRY("worker: cudaMemGetInfo", cudaMemGetInfo(&free_b, &total_b));
    if (need + ((size_t)1 << 30) > free_b) return 0;
    for (int i = 0; i < c->n; i++) {
        wcol *w = &c->cols[i];
        void *d = NULL;
        CU_TRY("worker: cudaMalloc (column copy)", cudaMalloc(&d, w->data_size ? w->data_size : 1));
        CU_TRY("worker: copying a column", cudaMemcpy(d, w->data, w->data_size, cudaMemcpyDeviceToDevice));
        w->data = d;
        if (w->bytes) {
            char *b = NULL;
            CU_TRY("worker: cudaMalloc (column copy)", cudaMalloc((void **)&b, w->nbytes ? (size_t)w->nbytes : 1));
            CU_TRY("worker: copying a column",
                   cudaMemcpy(b, w->bytes, (size_t)w->nbytes, cudaMemcpyDeviceToDevice));
            w->bytes = b;
        }
    }
    return 0;
}

/* Every stream attribute the runtime lets us read from a fresh stream and
 * set on the candidate's stream (the access-policy window, the
 * synchronisation policy, the priority, the memory synchronisation domain
 * and its map, ...: whatever cudaLaunchAttributeID values apply to streams
 * in this runtime), with the value a fresh stream has: what
 * dkb__wcuda_call_prepare puts back before every call. */
static int stream_attrs_init(dkb__wcuda *c, dkb_error *err) {
    CU_TRY("worker: cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&c->pristine, cudaStreamNonBlocking));
    for (int id = 1; id < MAX_STREAM_ATTR; id++) {
        cudaLaunchAttributeValue v;
        memset(&v, 0, sizeof v);
        if (cudaStreamGetAttribute(c->pristine, (cudaLaunchAttributeID)id, &v) != cudaSuccess ||
            cudaStreamSetAttribute(c->stream, (cudaLaunchAttributeID)id, &v) != cudaSuccess) {
            (void)cudaGetLastError(); /* not a stream attribute here */
            continue;
        }
        c->sattr_id[c->nsattr] = (cudaLaunchAttributeID)id;
        c->sattr_val[c->nsattr++] = v;
    }
    /* and, for any the probe does not know, the runtime's own copy */
    c->copy_attrs = cudaStreamCopyAttributes(c->stream, c->pristine) == cudaSuccess;
    if (!c->copy_attrs) (void)cudaGetLastError();
    return 0;
}

int dkb__wcuda_open(const char *columns_json, const dkb_store *db, dkb__wcuda **out, dkb_error *err) {
    *out = NULL;
    dkb__wcuda *c = calloc(1, sizeof *c);
    if (!c) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    *out = c;
    /* no persisting L2 lines: every call starts from the same cold cache */
    cudaError_t le = cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
    if (le != cudaSuccess && le != cudaErrorUnsupportedLimit) return cu_fail(err, "worker: persisting L2 limit", le);
    cudaGetLastError();
    cJSON *arr = cJSON_Parse(columns_json ? columns_json : "");
    if (!cJSON_IsArray(arr)) {
        cJSON_Delete(arr);
        return dkb_fail(err, DKB_EPARSE, "worker: cuda_columns is not a JSON array");
    }
    int n = cJSON_GetArraySize(arr), rc = 0;
    c->cols = calloc((size_t)(n ? n : 1), sizeof *c->cols);
    if (!c->cols) rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
    const cJSON *o;
    cJSON_ArrayForEach(o, arr) {
        if (rc) break;
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "table"), *k = cJSON_GetObjectItemCaseSensitive(o, "column"),
                    *d = cJSON_GetObjectItemCaseSensitive(o, "data"), *ds = cJSON_GetObjectItemCaseSensitive(o, "data_size"),
                    *b = cJSON_GetObjectItemCaseSensitive(o, "bytes"), *nb = cJSON_GetObjectItemCaseSensitive(o, "nbytes");
        if (!cJSON_IsString(t) || !cJSON_IsString(k) || !cJSON_IsString(d) || !cJSON_IsNumber(ds) || !cJSON_IsNumber(nb)) {
            rc = dkb_fail(err, DKB_EPARSE, "worker: cuda_columns entry %d is incomplete", c->n);
            break;
        }
        const dkb_store_table *tab = dkb_store_table_find(db, t->valuestring);
        const dkb_store_column *col = tab ? dkb_store_table_column(tab, k->valuestring) : NULL;
        if (!col) {
            rc = dkb_fail(err, DKB_EPARSE, "worker: the store has no column %s.%s", t->valuestring, k->valuestring);
            break;
        }
        wcol *w = &c->cols[c->n++];
        w->col = col;
        w->table = dkb_store_table_name(tab);
        w->name = dkb_column_name(col);
        w->data_size = (size_t)ds->valuedouble;
        w->nbytes = (int64_t)nb->valuedouble;
        rc = open_handle(d->valuestring, w->name, &w->data, err);
        if (!rc && cJSON_IsString(b)) rc = open_handle(b->valuestring, w->name, (void **)&w->bytes, err);
    }
    cJSON_Delete(arr);
    if (!rc) rc = private_copies(c, err);
    if (rc) return rc;
    CU_TRY("worker: cudaStreamCreateWithFlags", cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    CU_TRY("worker: cudaEventCreate", cudaEventCreate(&c->start));
    CU_TRY("worker: cudaEventCreate", cudaEventCreate(&c->stop));
    int dev = 0, l2 = 0;
    CU_TRY("worker: cudaGetDevice", cudaGetDevice(&dev));
    if ((rc = stream_attrs_init(c, err)) || (rc = dkb__cuda_interpose_enable(dev, err))) return rc;
    CU_TRY("worker: L2 size", cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    c->l2 = l2 > 0 ? (size_t)l2 : ((size_t)64 << 20);
    c->flush_size = 2 * c->l2;
    CU_TRY("worker: cudaMalloc (L2 flush buffer)", cudaMalloc(&c->flush, c->flush_size));
    /* Stream-ordered allocations (cudaMallocAsync) come from the device's
     * default pool. Its default release threshold (0) hands freed memory back
     * to the driver at every synchronisation, so each call would map its
     * temporaries afresh (an allocate/free/synchronise cycle: 117-216 us
     * against 9.6 us on the H200, bench/gpu/scan_probe.cu) while the
     * baseline reuses its arena: keep what the pool holds for the worker's
     * lifetime, as the baseline keeps its arena. */
    cudaMemPool_t pool;
    uint64_t keep = UINT64_MAX;
    CU_TRY("worker: cudaDeviceGetDefaultMemPool", cudaDeviceGetDefaultMemPool(&pool, dev));
    CU_TRY("worker: cudaMemPoolSetAttribute (release threshold)",
           cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    c->pool = pool;
    return 0;
}

int dkb__wcuda_adopt(dkb__wcuda *c, dkb_tp *tp, dkb_error *err) {
    for (int i = 0; i < c->n; i++) {
        const wcol *w = &c->cols[i];
        int rc = dkb__cuda_adopt_column(tp, w->col, w->data, w->bytes, w->nbytes, err);
        if (rc) return rc;
    }
    return 0;
}

/* The opened column table.column, or NULL. */
static const wcol *opened(const dkb__wcuda *c, const char *table, const char *name) {
    for (int i = 0; i < c->n; i++)
        if (!strcmp(c->cols[i].table, table) && !strcmp(c->cols[i].name, name)) return &c->cols[i];
    return NULL;
}

/* Under a budget: the column the baseline's context made resident itself,
 * as one more watched column (tp's memory: not freed here); NULL when tp
 * does not hold it. */
static const wcol *resident_in_tp(dkb__wcuda *c, const dkb_tp *tp, const dkb_store_table *tab,
                                  const dkb_store_column *col, dkb_error *err, int *rc) {
    void *data = NULL;
    char *bytes = NULL;
    size_t size = 0;
    int64_t nbytes = 0;
    if (!dkb__cuda_resident_get(tp, col, &data, &size, &bytes, &nbytes)) return NULL;
    wcol *grown = realloc(c->cols, (size_t)(c->n + 1) * sizeof *c->cols);
    if (!grown) {
        *rc = dkb_fail(err, DKB_ENOMEM, "out of memory");
        return NULL;
    }
    c->cols = grown;
    wcol *w = &c->cols[c->n++];
    memset(w, 0, sizeof *w);
    w->col = col;
    w->table = dkb_store_table_name(tab);
    w->name = dkb_column_name(col);
    w->data = data;
    w->data_size = size;
    w->bytes = bytes;
    w->nbytes = nbytes;
    return w;
}

int dkb__wcuda_patch_db(dkb__wcuda *c, const dkb_cand_db *cdb, const dkb_store *db, const dkb_tp *tp, int budgeted,
                        dkb_error *err) {
    for (int t = 0; t < cdb->ntables; t++)
        for (int k = 0; k < cdb->tables[t].ncols; k++) {
            dkb_cand_vec *v = (dkb_cand_vec *)&cdb->tables[t].cols[k];
            const char *table = cdb->tables[t].name;
            const wcol *w = opened(c, table, v->name);
            int rc = 0;
            if (!w && budgeted) {
                const dkb_store_table *tab = dkb_store_table_find(db, table);
                const dkb_store_column *col = tab ? dkb_store_table_column(tab, v->name) : NULL;
                if (col) w = resident_in_tp(c, tp, tab, col, err, &rc);
                if (rc) return rc;
                if (!w) {   /* not read by the query, or streamed: hidden */
                    v->data = NULL;
                    v->bytes = NULL;
                    v->nbytes = 0;
                    continue;
                }
            }
            if (!w) return dkb_fail(err, DKB_EINVAL, "worker: column %s.%s is not resident on the GPU", table, v->name);
            v->data = w->data;
            if (w->bytes) v->bytes = w->bytes;
        }
    return 0;
}

void *dkb__wcuda_stream(const dkb__wcuda *c) { return (void *)c->stream; }

int dkb__wcuda_outs_init(dkb__wcuda *c, const dkb_cand_out_set *o, dkb_error *err) {
    c->outs = calloc((size_t)(o->n ? o->n : 1), sizeof *c->outs);
    if (!c->outs) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    c->nout = o->n;
    for (int i = 0; i < o->n; i++) {
        const dkb_cand_vec *s = &o->saved[i];
        dev_out *d = &c->outs[i];
        size_t es = dkb_tp_dtype_size((dkb_tp_dtype)s->type);
        d->data_size = (size_t)(s->type == DKB_CAND_STR ? s->cap + 1 : s->cap) * es;
        d->data_alloc = out_alloc_size(d->data_size);
        CU_TRY("worker: cudaMalloc (core output)", cudaMalloc(&d->data, d->data_alloc));
        if (s->type == DKB_CAND_STR) {
            d->bytes_size = (size_t)s->bytes_cap;
            d->bytes_alloc = out_alloc_size(d->bytes_size);
            CU_TRY("worker: cudaMalloc (core output)", cudaMalloc((void **)&d->bytes, d->bytes_alloc));
        }
    }
    return 0;
}

int dkb__wcuda_outs_point(dkb__wcuda *c, dkb_cand_out_set *o, uint8_t poison, dkb_error *err) {
    for (int i = 0; i < c->nout; i++) {
        dev_out *d = &c->outs[i];
        CU_TRY("worker: poisoning a core output", cudaMemset(d->data, poison, d->data_alloc));
        if (d->bytes) CU_TRY("worker: poisoning a core output", cudaMemset(d->bytes, poison, d->bytes_alloc));
        o->vec[i].data = d->data;
        o->vec[i].bytes = d->bytes;
    }
    CU_TRY("worker: poisoning the core outputs", cudaDeviceSynchronize());
    return 0;
}

int dkb__wcuda_outs_fetch(dkb__wcuda *c, const dkb_cand_out_set *o, dkb_error *err) {
    for (int i = 0; i < c->nout; i++) {
        dev_out *d = &c->outs[i];
        CU_TRY("worker: copying a core output back", cudaMemcpy(o->saved[i].data, d->data, d->data_size,
                                                                 cudaMemcpyDeviceToHost));
        if (d->bytes)
            CU_TRY("worker: copying a core output back", cudaMemcpy(o->saved[i].bytes, d->bytes, d->bytes_size,
                                                                     cudaMemcpyDeviceToHost));
    }
    return 0;
}

int dkb__wcuda_time_begin(dkb__wcuda *c, dkb_error *err) {
    /* a different value each time, so the writes cannot be elided */
    CU_TRY("worker: L2 flush", cudaMemsetAsync(c->flush, (c->flush_round++ & 0x7f) + 1, c->flush_size, c->stream));
    CU_TRY("worker: synchronising before a timed call", cudaDeviceSynchronize());
    dkb__wcuda_attrib_mark(0);   /* kernel attribution: the call's window opens */
    CU_TRY("worker: cudaEventRecord", cudaEventRecord(c->start, c->stream));
    return 0;
}

int dkb__wcuda_time_end(dkb__wcuda *c, double *ms, dkb_error *err) {
    *ms = NAN;
    /* every stream: work the call left on side streams counts */
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) return dkb_fail(err, DKB_EIO, "CUDA error %s (%s)", cudaGetErrorString(e), cudaGetErrorName(e));
    dkb__wcuda_attrib_mark(1);   /* ... and closes */
    CU_TRY("worker: cudaEventRecord", cudaEventRecord(c->stop, c->stream));
    CU_TRY("worker: cudaEventSynchronize", cudaEventSynchronize(c->stop));
    float f = 0;
    CU_TRY("worker: cudaEventElapsedTime", cudaEventElapsedTime(&f, c->start, c->stop));
    *ms = f;
    return 0;
}

/* A variable's slot in the image: its size rounded up to 256 bytes. */
static size_t var_slot(size_t size) { return (size + 255) & ~(size_t)255; }

/* The candidate's registered variables (__device__, __constant__: what
 * __cudaRegisterVar recorded while it loaded): their device addresses, and
 * a copy of their initial contents in one device buffer. Once, before the
 * first call (its constructors have run: what they wrote is part of the
 * initial state, the same for every call). */
static int vars_snapshot(dkb__wcuda *c, dkb_error *err) {
    bool lost = false;
    size_t n = 0;
    const dkb__cuda_var *v = dkb__cuda_interpose_vars(&n, &lost);
    if (lost) return dkb_fail(err, DKB_ENOMEM, "worker: out of memory recording the candidate's device variables");
    c->vars_ready = 1;
    if (!n) return 0;
    c->var_dst = calloc(n, sizeof *c->var_dst);
    c->var_src = calloc(n, sizeof *c->var_src);
    c->var_size = calloc(n, sizeof *c->var_size);
    if (!c->var_dst || !c->var_src || !c->var_size) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        char what[300];
        snprintf(what, sizeof what, "worker: the address of the candidate's variable %.200s",
                 v[i].name ? v[i].name : "?");
        CU_TRY(what, cudaGetSymbolAddress(&c->var_dst[i], v[i].host));
        c->var_size[i] = v[i].size;
        total += var_slot(v[i].size);
    }
    CU_TRY("worker: cudaMalloc (initial image of the candidate's variables)",
           cudaMalloc((void **)&c->var_image, total ? total : 1));
    for (size_t i = 0, off = 0; i < n; i++) {
        c->var_src[i] = c->var_image + off;
        off += var_slot(v[i].size);
        if (c->var_size[i])
            CU_TRY("worker: copying the candidate's variables",
                   cudaMemcpyAsync(c->var_src[i], c->var_dst[i], c->var_size[i], cudaMemcpyDeviceToDevice, c->stream));
    }
    CU_TRY("worker: copying the candidate's variables", cudaStreamSynchronize(c->stream));
    c->nvar = n;
    return 0;
}

/* Every registered variable back to its initial image: one batched copy
 * (cudaMemcpyBatchAsync, CUDA 13) or, where the runtime refuses that, one
 * device-to-device copy per variable; then wait for them. */
static int vars_restore(dkb__wcuda *c, dkb_error *err) {
    if (!c->nvar) return 0;
#if CUDART_VERSION >= 13000
    if (!c->batch_off) {
        struct cudaMemcpyAttributes a;
        memset(&a, 0, sizeof a);
        a.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
        size_t first = 0;
        if (cudaMemcpyBatchAsync((void *const *)c->var_dst, (const void *const *)c->var_src, c->var_size, c->nvar, &a,
                                 &first, 1, c->stream) == cudaSuccess) {
            CU_TRY("worker: restoring the candidate's variables", cudaStreamSynchronize(c->stream));
            return 0;
        }
        (void)cudaGetLastError();
        c->batch_off = 1;
    }
#endif
    for (size_t i = 0; i < c->nvar; i++)
        if (c->var_size[i])
            CU_TRY("worker: restoring the candidate's variables",
                   cudaMemcpyAsync(c->var_dst[i], c->var_src[i], c->var_size[i], cudaMemcpyDeviceToDevice, c->stream));
    CU_TRY("worker: restoring the candidate's variables", cudaStreamSynchronize(c->stream));
    return 0;
}

/* Before a call (outside the timed region, device idle): the device state
 * the call starts from is the same whatever earlier calls did. Cost per
 * call, counted in runtime calls: the variables 1 batched copy (n copies
 * without batching) + 1 synchronisation when the candidate has any; the
 * stream 1 attribute copy + one set per stream attribute the probe at open
 * found (stream_attrs_init: as many as this runtime lets it set); kernels
 * 1-3 sets per kernel whose attributes the last call changed; 1 shared
 * memory scrub kernel. Host-side calls but the copies and the scrub; their
 * time is not measured yet (docs/harness.md). */
int dkb__wcuda_call_prepare(dkb__wcuda *c, dkb_error *err) {
    int rc = 0;
    if (!c->vars_ready && (rc = vars_snapshot(c, err))) return rc;
    if ((rc = vars_restore(c, err))) return rc;
    if (c->copy_attrs) CU_TRY("worker: resetting the stream's attributes", cudaStreamCopyAttributes(c->stream, c->pristine));
    for (int i = 0; i < c->nsattr; i++)
        CU_TRY("worker: resetting the stream's attributes", cudaStreamSetAttribute(c->stream, c->sattr_id[i], &c->sattr_val[i]));
    if ((rc = dkb__cuda_interpose_funcs_restore(err))) return rc;
    /* shared memory holds what the last kernels left: zeroed (time_begin
     * then waits for the device) */
    if ((rc = dkb__cuda_scrub_shared((void *)c->stream, err))) return rc;
    dkb__cuda_interpose_call_begin();
    return 0;
}

/* After a call (outside the timed region, device idle): every block the
 * call allocated, freed (deferred) or leaked, poisoned and freed
 * (cuda_interpose.c: one memset and one free per block, two
 * synchronisations); the default pool's high-water marks reset, so they
 * tell the next call nothing about this one. */
int dkb__wcuda_call_cleanup(dkb__wcuda *c, dkb_error *err) {
    int rc = dkb__cuda_interpose_call_end(c->stream, err);
    if (rc) return rc;
    uint64_t zero = 0;
    CU_TRY("worker: resetting the pool's high-water marks",
           cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrUsedMemHigh, &zero));
    CU_TRY("worker: resetting the pool's high-water marks",
           cudaMemPoolSetAttribute(c->pool, cudaMemPoolAttrReservedMemHigh, &zero));
    return 0;
}

int dkb__wcuda_watch_add(dkb__wcuda *c, const void *dev, size_t bytes, const char *label, dkb_error *err) {
    if (!dev || !bytes) return 0;
    for (int i = 0; i < c->nwatch; i++)
        if (c->watch[i].dev == dev && c->watch[i].bytes == bytes) return 0;
    if (!c->watch && !(c->watch = calloc(MAX_WATCH, sizeof *c->watch))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    if (c->nwatch == MAX_WATCH) return dkb_fail(err, DKB_ERANGE, "worker: more than %d inputs to watch", MAX_WATCH);
    watch *w = &c->watch[c->nwatch];
    w->dev = dev;
    w->bytes = bytes;
    if (!(w->label = strdup(label))) return dkb_fail(err, DKB_ENOMEM, "out of memory");
    c->nwatch++;
    return 0;
}

int dkb__wcuda_watch_columns(dkb__wcuda *c, dkb_error *err) {
    for (int i = 0; i < c->n; i++) {
        const wcol *w = &c->cols[i];
        char label[200];
        snprintf(label, sizeof label, "column %s.%s", w->table, w->name);
        int rc = dkb__wcuda_watch_add(c, w->data, w->data_size, label, err);
        if (!rc && w->bytes) {
            snprintf(label, sizeof label, "column %s.%s (characters)", w->table, w->name);
            rc = dkb__wcuda_watch_add(c, w->bytes, (size_t)w->nbytes, label, err);
        }
        if (rc) return rc;
    }
    return 0;
}

int dkb__wcuda_watch_snapshot(dkb__wcuda *c, dkb_error *err) {
    for (int i = 0; i < c->nwatch; i++) {
        int rc = dkb__cuda_checksum(c->watch[i].dev, c->watch[i].bytes, c->stream, &c->watch[i].sum, err);
        if (rc) return rc;
    }
    return 0;
}

int dkb__wcuda_watch_check(dkb__wcuda *c, char *changed, size_t n, int *nchanged, dkb_error *err) {
    if (n) changed[0] = 0;
    *nchanged = 0;
    for (int i = 0; i < c->nwatch; i++) {
        uint64_t s = 0;
        int rc = dkb__cuda_checksum(c->watch[i].dev, c->watch[i].bytes, c->stream, &s, err);
        if (rc) return rc;
        if (s == c->watch[i].sum) continue;
        if (*nchanged == 0) snprintf(changed, n, "%s", c->watch[i].label);
        else if (*nchanged == 1 && strlen(changed) + 8 < n) strcat(changed, ", ...");
        (*nchanged)++;
    }
    return 0;
}

double dkb__wcuda_bandwidth(dkb__wcuda *c, size_t bytes) {
    size_t size = bytes > 4 * c->l2 ? bytes : 4 * c->l2;
    if (size > BW_MAX) size = BW_MAX;
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, size) != cudaSuccess || cudaMalloc(&b, size) != cudaSuccess) {
        cudaFree(a);
        cudaGetLastError();
        return NAN;
    }
    double best = INFINITY;
    int ok = cudaMemset(a, 0x5a, size) == cudaSuccess && cudaMemset(b, 0, size) == cudaSuccess &&
             cudaDeviceSynchronize() == cudaSuccess;
    for (int r = 0; ok && r < 10; r++) {
        float f = 0;
        ok = cudaEventRecord(c->start, c->stream) == cudaSuccess &&
             cudaMemcpyAsync(b, a, size, cudaMemcpyDeviceToDevice, c->stream) == cudaSuccess &&
             cudaEventRecord(c->stop, c->stream) == cudaSuccess && cudaEventSynchronize(c->stop) == cudaSuccess &&
             cudaEventElapsedTime(&f, c->start, c->stop) == cudaSuccess;
        if (ok && f > 0 && f < best) best = f;
    }
    cudaFree(a);
    cudaFree(b);
    cudaGetLastError();
    /* a copy reads size bytes and writes size bytes */
    return ok && isfinite(best) ? 2.0 * (double)size / (best * 1e-3) / 1e9 : NAN;
}

#else /* no CUDA in this build: every entry fails */

struct dkb__wcuda {
    int unused;
};

static int no_cuda(dkb_error *err) { return dkb_fail(err, DKB_EINVAL, "worker: this dkb was built without CUDA"); }

int dkb__wcuda_open(const char *columns_json, const dkb_store *db, dkb__wcuda **out, dkb_error *err) {
    (void)columns_json, (void)db;
    *out = NULL;
    return no_cuda(err);
}
int dkb__wcuda_adopt(dkb__wcuda *c, dkb_tp *tp, dkb_error *err) {
    (void)c, (void)tp;
    return no_cuda(err);
}
int dkb__wcuda_patch_db(dkb__wcuda *c, const dkb_cand_db *cdb, const dkb_store *db, const dkb_tp *tp, int budgeted,
                        dkb_error *err) {
    (void)c, (void)cdb, (void)db, (void)tp, (void)budgeted;
    return no_cuda(err);
}
void *dkb__wcuda_stream(const dkb__wcuda *c) {
    (void)c;
    return NULL;
}
int dkb__wcuda_outs_init(dkb__wcuda *c, const dkb_cand_out_set *o, dkb_error *err) {
    (void)c, (void)o;
    return no_cuda(err);
}
int dkb__wcuda_outs_point(dkb__wcuda *c, dkb_cand_out_set *o, uint8_t poison, dkb_error *err) {
    (void)c, (void)o, (void)poison;
    return no_cuda(err);
}
int dkb__wcuda_outs_fetch(dkb__wcuda *c, const dkb_cand_out_set *o, dkb_error *err) {
    (void)c, (void)o;
    return no_cuda(err);
}
int dkb__wcuda_time_begin(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    return no_cuda(err);
}
int dkb__wcuda_time_end(dkb__wcuda *c, double *ms, dkb_error *err) {
    (void)c;
    *ms = 0;
    return no_cuda(err);
}
int dkb__wcuda_call_prepare(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    return no_cuda(err);
}

int dkb__wcuda_call_cleanup(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    return no_cuda(err);
}

int dkb__wcuda_watch_add(dkb__wcuda *c, const void *dev, size_t bytes, const char *label, dkb_error *err) {
    (void)c, (void)dev, (void)bytes, (void)label;
    return no_cuda(err);
}
int dkb__wcuda_watch_columns(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    return no_cuda(err);
}
int dkb__wcuda_watch_snapshot(dkb__wcuda *c, dkb_error *err) {
    (void)c;
    return no_cuda(err);
}
int dkb__wcuda_watch_check(dkb__wcuda *c, char *changed, size_t n, int *nchanged, dkb_error *err) {
    (void)c;
    if (n) changed[0] = 0;
    *nchanged = 0;
    return no_cuda(err);
}
double dkb__wcuda_bandwidth(dkb__wcuda *c, size_t bytes) {
    (void)c, (void)bytes;
    return NAN;
}

#endif
