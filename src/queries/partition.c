/* partition.c: run a query's baseline plan under a memory budget: as one
 * piece when its columns fit, else partition by partition with exact
 * merges (partition.h; docs/partitions.md).
 *
 * The partials run on a context of their own that is reset after every
 * run of partitions, so what one run of partitions computes is freed
 * before the next; their outputs (a few groups, or the rows a top-k or
 * HAVING kept) travel through host memory, where they are concatenated in
 * partition order, and are merged there on the same context by TensorPlan
 * group-by and aggregation. The merged outputs are uploaded once to the
 * query's context for the next pass or `final`. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "queries/partition.h"
#include "queries/stream.h"       // defines: dkb__stream, dkb__pipe_run, dkb__stream_plan_chunks
#include "common/timing.h"        // defines: dkb__now_ms
#include "tensor/cuda_avg.h"      // defines: dkb__exact_avg (the backends' exact average, plain C on the host)
#include "tensor/tp_internal.h"   // defines: dkb__tp_host_tables

/* ---- the table of partitioned plans ---- */

extern const dkb__part_plan dkb__q01_part, dkb__q02_part, dkb__q03_part, dkb__q04_part, dkb__q05_part, dkb__q06_part,
    dkb__q07_part, dkb__q08_part, dkb__q09_part, dkb__q10_part, dkb__q11_part, dkb__q12_part, dkb__q13_part,
    dkb__q14_part, dkb__q15_part, dkb__q16_part, dkb__q17_part, dkb__q18_part, dkb__q19_part, dkb__q20_part,
    dkb__q21_part, dkb__q22_part;

/* plans[n - 1]: query n's partitioned form, NULL where it has none yet */
static const dkb__part_plan *const plans[DKB_NQUERIES] = {
    [0] = &dkb__q01_part,  [1] = &dkb__q02_part,  [2] = &dkb__q03_part,  [3] = &dkb__q04_part,  [4] = &dkb__q05_part,
    [5] = &dkb__q06_part,  [6] = &dkb__q07_part,  [7] = &dkb__q08_part,  [8] = &dkb__q09_part,
    [9] = &dkb__q10_part,  [10] = &dkb__q11_part, [11] = &dkb__q12_part, [12] = &dkb__q13_part,
    [13] = &dkb__q14_part, [14] = &dkb__q15_part, [15] = &dkb__q16_part, [16] = &dkb__q17_part,
    [17] = &dkb__q18_part, [18] = &dkb__q19_part, [19] = &dkb__q20_part, [20] = &dkb__q21_part,
    [21] = &dkb__q22_part,
};

const dkb__part_plan *dkb__part_plan_get(int number) {
    return number >= 1 && number <= DKB_NQUERIES ? plans[number - 1] : NULL;
}

int dkb__part_streamable(const char *table) {
    for (int q = 0; table && q < DKB_NQUERIES; q++)
        for (int s = 0; plans[q] && s < 2; s++)
            if (plans[q]->stream[s] && !strcmp(plans[q]->stream[s], table)) return 1;
    return 0;
}

/* ---- sizes ---- */

static int64_t tensor_bytes(const dkb_tensor *t) {
    if (!t) return 0;
    if (t->dtype == DKB_TP_STR) return (t->n + 1) * 8 + t->nbytes;
    return t->n * (int64_t)dkb_tp_dtype_size(t->dtype);
}

/* "64.0M" style text of a byte count, for messages. */
static const char *size_text(int64_t b, char *buf, size_t n) {
    const char *u = "KMGT";
    double v = (double)b;
    int i = -1;
    while (v >= 1024 && i < 3) v /= 1024, i++;
    if (i < 0) snprintf(buf, n, "%lld bytes", (long long)b);
    else snprintf(buf, n, "%.1f%c", v, u[i]);
    return buf;
}

/* Which streamed table (0 or 1) input tensor `name` is a whole column of,
 * or -1 when it is resident. */
static int streamed_of(const dkb__part_plan *pl, const dkb_store *db, const char *name, const dkb_tensor *t) {
    for (int s = 0; s < 2; s++) {
        if (!pl || !pl->stream[s]) continue;
        const dkb_store_table *tb = dkb_store_table_find(db, pl->stream[s]);
        if (tb && t && dkb_store_table_column(tb, name) && t->n == dkb_store_table_rows(tb)) return s;
    }
    return -1;
}

/* ---- host tables: the merged outputs between runs of partitions ---- */

typedef struct hcol {
    const char *name;
    dkb_tp_dtype dtype;
    int scale;
    const dkb_tp_dict *dict;
    int64_t n;
    unsigned char *data;  /* malloc'ed, n elements */
} hcol;

typedef struct htable {
    int ncols;
    int have;   /* 0 before the first partition */
    hcol c[DKB__PART_MAXCOLS];
} htable;

static void htable_free(htable *h) {
    for (int i = 0; i < h->ncols; i++) free(h->c[i].data), h->c[i].data = NULL;
    h->have = 0;
}

/* Copy the pass's outputs of `out` (on tp) into h, replacing what it held. */
static int download(dkb_tp *tp, const dkb__part_pass *ps, const dkb_tensor_set *out, htable *h, dkb_error *err) {
    htable_free(h);
    h->ncols = ps->ncols;
    for (int i = 0; i < ps->ncols; i++) {
        dkb_tensor *t = dkb_set_get(tp, out, ps->cols[i].name);
        if (!t) return dkb_tp_status(tp, err);
        if (t->dtype == DKB_TP_STR)
            return dkb_fail(err, DKB_EINTERNAL, "partial output %s is text (partials merge numbers)", ps->cols[i].name);
        size_t bytes = (size_t)t->n * dkb_tp_dtype_size(t->dtype);
        hcol *c = &h->c[i];
        *c = (hcol){ps->cols[i].name, t->dtype, t->scale, t->dict, t->n, malloc(bytes ? bytes : 1)};
        if (!c->data) return dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
        if (bytes && dkb_tp_to_host(tp, t, c->data)) return dkb_tp_status(tp, err);
    }
    h->have = 1;
    return 0;
}

/* The tensor of host column c (on tp). */
static dkb_tensor *upload(dkb_tp *tp, const hcol *c) {
    dkb_tensor *t = dkb_tp_from_host(tp, c->dtype, c->n, c->data);
    if (t) t->scale = c->scale, t->dict = c->dict;
    return t;
}

/* acc := acc followed by add, column by column (same dtypes). */
static int concat(htable *acc, htable *add, dkb_error *err) {
    if (!acc->have) {
        *acc = *add;
        memset(add, 0, sizeof *add);
        return 0;
    }
    for (int i = 0; i < acc->ncols; i++) {
        hcol *a = &acc->c[i], *b = &add->c[i];
        if (a->dtype != b->dtype || a->scale != b->scale)
            return dkb_fail(err, DKB_EINTERNAL, "partial output %s changes type between partitions", a->name);
        size_t w = dkb_tp_dtype_size(a->dtype);
        unsigned char *d = realloc(a->data, (size_t)(a->n + b->n) * w + 1);
        if (!d) return dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
        memcpy(d + (size_t)a->n * w, b->data, (size_t)b->n * w);
        a->data = d;
        a->n += b->n;
    }
    htable_free(add);
    return 0;
}

/* Merge the concatenated partials of h on tp (reset by the caller) by
 * their merge kinds, back into h. */
static int merge(dkb_tp *tp, const dkb__part_pass *ps, htable *h, dkb_error *err) {
    const dkb_tensor *keys[DKB__PART_MAXCOLS];
    dkb_tensor *in[DKB__PART_MAXCOLS];
    int nkeys = 0;
    int ncat = 0;
    for (int i = 0; i < ps->ncols; i++) ncat += ps->cols[i].how == DKB__MERGE_CAT;
    if (ncat == ps->ncols) return 0;  /* concatenated already */
    if (ncat) return dkb_fail(err, DKB_EINTERNAL, "%s: CAT beside other merge kinds", ps->cols[0].name);
    for (int i = 0; i < ps->ncols; i++) {
        dkb__merge how = ps->cols[i].how;
        if (how == DKB__MERGE_SUM && h->c[i].dtype == DKB_TP_F64)
            return dkb_fail(err, DKB_EINTERNAL, "%s: float sums would not merge exactly", ps->cols[i].name);
        in[i] = upload(tp, &h->c[i]);
        if (how == DKB__MERGE_KEY) keys[nkeys++] = in[i];
    }
    for (int i = 0; i < ps->ncols; i++)
        if (!nkeys && ps->cols[i].how == DKB__MERGE_FIRST)
            return dkb_fail(err, DKB_EINTERNAL, "%s: FIRST needs keys", ps->cols[i].name);
    dkb_tensor_set out = {0};
    dkb_groups g = {0};
    if (nkeys) g = dkb_tp_group(tp, keys, nkeys);
    for (int i = 0; i < ps->ncols; i++) {
        dkb__merge how = ps->cols[i].how;
        dkb_agg agg = how == DKB__MERGE_MIN ? DKB_AGG_MIN : how == DKB__MERGE_MAX ? DKB_AGG_MAX : DKB_AGG_SUM;
        dkb_tensor *r;
        if (how == DKB__MERGE_KEY || how == DKB__MERGE_FIRST) r = dkb_tp_gather(tp, in[i], g.first_row, 0);
        else if (nkeys) r = dkb_tp_aggregate(tp, &g, agg, in[i]);
        else r = dkb_tp_reduce(tp, agg, in[i]);
        /* a sum of I64 counts comes back I128: the partials' dtype again (exact) */
        if (r && agg == DKB_AGG_SUM && r->dtype != in[i]->dtype) r = dkb_tp_cast(tp, r, in[i]->dtype);
        dkb_set_put(tp, &out, ps->cols[i].name, r);
    }
    if (dkb_tp_status(tp, err)) return dkb_tp_status(tp, err);
    return download(tp, ps, &out, h, err);
}

/* ---- the budgeted run ---- */

/* Several ranks share the partitions (NULL or one rank: this process runs
 * them all, as without ranks). */
static int ranked(const dkb__comm *comm) { return comm && dkb__comm_size(comm) > 1; }

/* A step's outcome as dkb_query_run reports it: "qNN step: message". */
static int step_status(const dkb_query *q, dkb_tp *tp, const char *step, int rc, dkb_error *err) {
    dkb_error tperr = {0};
    int st = dkb_tp_status(tp, &tperr);
    if (!rc && !st) return 0;
    if (st) return dkb_fail(err, st, "%s %s: %s", q->name, step, tperr.msg[0] ? tperr.msg : dkb_strerror(st));
    return dkb_fail(err, rc, "%s %s: failed (%s)", q->name, step, dkb_err_name(rc));
}

/* How the runs of partitions reach the partials: views of the mapped
 * store (the CPU backend, as always), or copied into slots through the
 * stream (CUDA; the CPU backend with DKB_PARTITION_STAGING=host, which
 * runs the same staging through host memory, for tests). */
typedef enum { XFER_VIEW = 0, XFER_HOST, XFER_CUDA } xfer_mode;

static xfer_mode xfer_of(const dkb_tp *tp) {
    if (dkb_tp_backend_of(tp) == DKB_TP_CUDA) return XFER_CUDA;
    const char *e = getenv("DKB_PARTITION_STAGING");
    return e && !strcmp(e, "host") ? XFER_HOST : XFER_VIEW;
}

typedef struct chunking {
    xfer_mode xfer;
    int nparts;                  /* store partitions of the streamed tables */
    int nchunks;
    int first[DKB__STREAM_MAXRUNS + 1]; /* chunk k covers partitions first[k] .. first[k + 1] - 1 */
    int nslots;                  /* streamed: device buffers, each of slot_bytes */
    int64_t slot_bytes;
    int64_t rowbytes[2];         /* bytes per row of each streamed table's input columns */
    const dkb_store_table *tb[2];
    int ntext[2];                /* and their text columns (characters counted apart) */
    const dkb_store_column *text[2][DKB_SET_MAX];
    /* the streamed inputs: index in the input set, the whole column's
     * tensor (a host view when streamed), its table */
    int nin;
    int idx[DKB_SET_MAX];
    const dkb_tensor *whole[DKB_SET_MAX];
    int table[DKB_SET_MAX];
} chunking;

static int64_t chunk_bytes(const chunking *ck, int from, int to) {
    int64_t b = 0;
    for (int s = 0; s < 2; s++) {
        if (!ck->tb[s] || !ck->rowbytes[s]) continue;
        const dkb_store_partition *a = dkb_store_table_partition(ck->tb[s], from);
        const dkb_store_partition *z = dkb_store_table_partition(ck->tb[s], to);
        b += (z->row_start + z->rows - a->row_start) * ck->rowbytes[s];
        for (int c = 0; c < ck->ntext[s]; c++) {
            const int64_t *off = dkb_column_text_offsets(ck->text[s][c]);
            b += off[z->row_start + z->rows] - off[a->row_start];
        }
    }
    return b;
}

/* Rows [*row, *row + *rows) of streamed table s in chunk [from, to]. */
static void chunk_rows(const chunking *ck, int s, int from, int to, int64_t *row, int64_t *rows) {
    const dkb_store_partition *a = dkb_store_table_partition(ck->tb[s], from);
    const dkb_store_partition *z = dkb_store_table_partition(ck->tb[s], to);
    *row = a->row_start;
    *rows = z->row_start + z->rows - a->row_start;
}

/* The layout of partitions [from, to] in a slot: per streamed input its
 * values (text: its rows + 1 offsets, rebased to 0, then its characters),
 * each piece at a multiple of DKB__STREAM_ALIGN. Fills p (NULL: only
 * sizes) and off_data / off_bytes per streamed input; the slot bytes. */
static int64_t slot_layout(const chunking *ck, int from, int to, dkb__stream_piece *p, int *np, int64_t *off_data,
                           int64_t *off_bytes) {
    int64_t at = 0;
    int n = 0;
    for (int j = 0; j < ck->nin; j++) {
        const dkb_tensor *t = ck->whole[j];
        int64_t row, rows;
        chunk_rows(ck, ck->table[j], from, to, &row, &rows);
        if (t->dtype == DKB_TP_STR) {
            const int64_t *o = (const int64_t *)t->data;
            int64_t base = o[row], chars = o[row + rows] - base;
            if (p) {
                p[n++] = (dkb__stream_piece){o + row, (rows + 1) * 8, at, base, 1};
                p[n++] = (dkb__stream_piece){t->bytes + base, chars, dkb__stream_align(at + (rows + 1) * 8), 0, 0};
            }
            if (off_data) off_data[j] = at;
            at = dkb__stream_align(at + (rows + 1) * 8);
            if (off_bytes) off_bytes[j] = at;
            at = dkb__stream_align(at + chars);
        } else {
            int64_t w = (int64_t)dkb_tp_dtype_size(t->dtype);
            if (p) p[n++] = (dkb__stream_piece){(const char *)t->data + row * w, rows * w, at, 0, 0};
            if (off_data) off_data[j] = at;
            at = dkb__stream_align(at + rows * w);
        }
    }
    if (np) *np = n;
    return at;
}

static int64_t view_bytes_fn(void *arg, int from, int to) { return chunk_bytes(arg, from, to); }
static int64_t slot_bytes_fn(void *arg, int from, int to) { return slot_layout(arg, from, to, NULL, NULL, NULL, NULL); }

/* The input set of chunk k: `in` with every streamed column cut to its
 * rows: views into the mapped column (text, whose offsets must start at
 * 0, copied onto `work`), or streamed: its place in `slot`. slices[] holds
 * the tensor structs. */
static void chunk_inputs(dkb_tp *work, const dkb__part_plan *pl, const dkb_store *db, const chunking *ck, int k,
                         void *slot, const dkb_tensor_set *in, dkb_tensor_set *cin, dkb_tensor *slices) {
    *cin = *in;
    if (ck->xfer != XFER_VIEW) {
        int64_t off_data[DKB_SET_MAX], off_bytes[DKB_SET_MAX];
        slot_layout(ck, ck->first[k], ck->first[k + 1] - 1, NULL, NULL, off_data, off_bytes);
        for (int j = 0; j < ck->nin; j++) {
            int i = ck->idx[j];
            if (in->t[i] != ck->whole[j]) continue;  /* replaced by a pass's output */
            int64_t row, rows;
            chunk_rows(ck, ck->table[j], ck->first[k], ck->first[k + 1] - 1, &row, &rows);
            slices[i] = *in->t[i];
            slices[i].n = rows;
            slices[i].data = (char *)slot + off_data[j];
            if (slices[i].dtype == DKB_TP_STR) {
                const int64_t *o = (const int64_t *)in->t[i]->data;
                slices[i].bytes = (char *)slot + off_bytes[j];
                slices[i].nbytes = o[row + rows] - o[row];
            }
            cin->t[i] = &slices[i];
        }
        return;
    }
    for (int i = 0; i < in->n; i++) {
        int s = streamed_of(pl, db, in->name[i], in->t[i]);
        if (s < 0) continue;
        const dkb_store_partition *a = dkb_store_table_partition(ck->tb[s], ck->first[k]);
        const dkb_store_partition *z = dkb_store_table_partition(ck->tb[s], ck->first[k + 1] - 1);
        int64_t rows = z->row_start + z->rows - a->row_start;
        if (in->t[i]->dtype == DKB_TP_STR) {
            dkb_tensor *idx = dkb_tp_arith_i64(work, dkb_tp_arange(work, rows), DKB_OP_ADD, a->row_start, 0);
            cin->t[i] = dkb_tp_gather(work, in->t[i], idx, 0);
            continue;
        }
        slices[i] = *in->t[i];
        slices[i].data = (char *)in->t[i]->data + a->row_start * (int64_t)dkb_tp_dtype_size(in->t[i]->dtype);
        slices[i].n = rows;
        cin->t[i] = &slices[i];
    }
}

/* Cut the streamed tables into runs of partitions that fit beside the
 * resident columns (fewest runs, greedily; streamed: in slots, two when
 * two of the largest partition fit). */
static int plan_chunks(const dkb_query *q, const dkb__part_plan *pl, const dkb_store *db, const dkb_tensor_set *in,
                       int64_t budget, int64_t resident, dkb__comm *comm, xfer_mode xfer, chunking *ck,
                       dkb__part_info *info, dkb_error *err) {
    char b1[32], b2[32];
    memset(ck, 0, sizeof *ck);
    ck->xfer = xfer;
    ck->nparts = -1;
    for (int i = 0; i < in->n; i++) {
        int s = streamed_of(pl, db, in->name[i], in->t[i]);
        if (s < 0) continue;
        ck->tb[s] = dkb_store_table_find(db, pl->stream[s]);
        ck->rowbytes[s] += (int64_t)dkb_tp_dtype_size(in->t[i]->dtype);
        if (in->t[i]->dtype == DKB_TP_STR)
            ck->text[s][ck->ntext[s]++] = dkb_store_table_column(ck->tb[s], in->name[i]);
        ck->idx[ck->nin] = i, ck->whole[ck->nin] = in->t[i], ck->table[ck->nin] = s;
        ck->nin++;
    }
    for (int s = 0; s < 2; s++) {
        if (!ck->tb[s]) continue;
        int np = dkb_store_table_npartitions(ck->tb[s]);
        if (ck->nparts >= 0 && np != ck->nparts)
            return dkb_fail(err, DKB_ECORRUPT, "%s: %s and %s have %d and %d partitions (co-partitioned tables agree)",
                            q->name, pl->stream[0], pl->stream[1], ck->nparts, np);
        ck->nparts = np;
    }
    if (ck->nparts > DKB__STREAM_MAXRUNS)
        return dkb_fail(err, DKB_EINVAL, "%s: %d partitions (at most %d)", q->name, ck->nparts, DKB__STREAM_MAXRUNS);
    dkb__stream_bytes_fn bytes = xfer == XFER_VIEW ? view_bytes_fn : slot_bytes_fn;
    int64_t largest = 0;
    for (int i = 0; i < ck->nparts; i++) {
        int64_t b = bytes(ck, i, i);
        if (b > largest) largest = b;
    }
    info->partitions = ck->nparts;
    char streamed[64];
    snprintf(streamed, sizeof streamed, "%s%s%s", ck->tb[0] ? pl->stream[0] : "",
             ck->tb[0] && ck->tb[1] ? " and " : "", ck->tb[1] ? pl->stream[1] : "");
    if (ck->nparts < 1)
        return dkb_fail(err, DKB_EINTERNAL, "%s: none of its inputs is a column of a streamed table", q->name);
    if (ck->nparts <= 1 && !ranked(comm))
        return dkb_fail(err, DKB_EINVAL,
                        "%s: not partitioned: its columns need %s, over --mem-budget %s, and the store has one "
                        "partition of %s (make it with dkb gen --partitions P)",
                        q->name, size_text(resident + largest, b2, sizeof b2), size_text(budget, b1, sizeof b1),
                        streamed);
    if (resident + largest > budget)
        return dkb_fail(err, DKB_ENOMEM,
                        "%s: --mem-budget %s is too small: it needs at least %s (%lld bytes: resident tables %lld + "
                        "the largest partition of %s %lld)",
                        q->name, size_text(budget, b1, sizeof b1), size_text(resident + largest, b2, sizeof b2),
                        (long long)(resident + largest), (long long)resident, streamed, (long long)largest);
    int lo = 0, hi = ck->nparts;
    if (ranked(comm)) dkb__comm_share(comm, ck->nparts, &lo, &hi);  /* this rank's partitions */
    info->part_lo = lo, info->part_hi = hi;
    dkb__stream_plan sp;
    int rc = dkb__stream_plan_chunks(bytes, ck, lo, hi, resident, budget, xfer == XFER_VIEW ? 1 : 2, &sp);
    if (rc) return dkb_fail(err, rc == DKB_ENOMEM ? DKB_ENOMEM : DKB_EINTERNAL, "%s: cannot plan the runs of partitions",
                            q->name);
    ck->nchunks = sp.nchunks;
    memcpy(ck->first, sp.first, sizeof ck->first);
    ck->nslots = sp.nslots;
    ck->slot_bytes = sp.slot_bytes;
    if (hi > lo) info->peak_bytes = sp.peak;
    return 0;
}

/* A merge step's failure as "qNN merge: message" (tp's error, or the one
 * the step left in err). */
static int merge_status(const dkb_query *q, dkb_tp *tp, int rc, dkb_error *err) {
    if (!rc) return 0;
    if (dkb_tp_status(tp, NULL) || !err) return step_status(q, tp, "merge", rc, err);
    char msg[sizeof err->msg];
    snprintf(msg, sizeof msg, "%s", err->msg);
    return dkb_fail(err, rc, "%s merge: %s", q->name, msg);
}

/* ---- the ranks of a distributed run (src/dist/comm.h) ---- */

/* The index in `in` of an input with dictionary d (dictionaries are the
 * store's, at other addresses on every rank; the inputs are the same), or
 * -1. */
static int dict_index(const dkb_tensor_set *in, const dkb_tp_dict *d) {
    for (int i = 0; d && i < in->n; i++)
        if (in->t[i] && in->t[i]->dict == d) return i;
    return -1;
}

/* h as bytes: have, then per column dtype, scale, dictionary (index in
 * `in`), rows and the values. OUT *buf (malloc'ed), *len. */
static int htable_pack(const htable *h, const dkb_tensor_set *in, unsigned char **buf, int64_t *len,
                       dkb_error *err) {
    int64_t n = 8;
    for (int i = 0; h->have && i < h->ncols; i++)
        n += 20 + h->c[i].n * (int64_t)dkb_tp_dtype_size(h->c[i].dtype);
    unsigned char *b = malloc((size_t)n), *w = b;
    if (!b) return dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
    int32_t hdr[2] = {h->have, h->have ? h->ncols : 0};
    memcpy(w, hdr, 8), w += 8;
    for (int i = 0; h->have && i < h->ncols; i++) {
        const hcol *c = &h->c[i];
        int32_t m[3] = {(int32_t)c->dtype, c->scale, dict_index(in, c->dict)};
        if (c->dict && m[2] < 0) {
            free(b);
            return dkb_fail(err, DKB_EINTERNAL, "partial output %s: its dictionary is no input's", c->name);
        }
        size_t bytes = (size_t)c->n * dkb_tp_dtype_size(c->dtype);
        memcpy(w, m, 12), w += 12;
        memcpy(w, &c->n, 8), w += 8;
        if (bytes) memcpy(w, c->data, bytes), w += bytes;
    }
    *buf = b, *len = n;
    return 0;
}

/* The htable of pass ps that `rank` packed into b[0, len). */
static int htable_unpack(const dkb__part_pass *ps, const dkb_tensor_set *in, int rank, const unsigned char *b,
                         int64_t len, htable *h, dkb_error *err) {
    const unsigned char *r = b, *end = b + len;
    int32_t hdr[2];
    memset(h, 0, sizeof *h);
    h->ncols = ps->ncols;
    if (len < 8) return dkb_fail(err, DKB_ECORRUPT, "partials of rank %d: %lld bytes", rank, (long long)len);
    memcpy(hdr, r, 8), r += 8;
    if (!hdr[0]) return 0; /* a rank without partitions */
    if (hdr[1] != ps->ncols)
        return dkb_fail(err, DKB_ECORRUPT, "partials of rank %d: %d columns, the pass has %d", rank, hdr[1], ps->ncols);
    for (int i = 0; i < ps->ncols; i++) {
        int32_t m[3];
        int64_t n;
        if (end - r < 20) return dkb_fail(err, DKB_ECORRUPT, "partials of rank %d: truncated", rank);
        memcpy(m, r, 12), r += 12;
        memcpy(&n, r, 8), r += 8;
        if (m[0] < 0 || m[0] >= DKB_TP_NTYPES || m[0] == DKB_TP_STR || m[2] >= in->n || n < 0 ||
            n > (end - r) / (int64_t)dkb_tp_dtype_size((dkb_tp_dtype)m[0]))
            return dkb_fail(err, DKB_ECORRUPT, "partials of rank %d: column %s malformed", rank, ps->cols[i].name);
        size_t bytes = (size_t)n * dkb_tp_dtype_size((dkb_tp_dtype)m[0]);
        hcol *c = &h->c[i];
        *c = (hcol){ps->cols[i].name, (dkb_tp_dtype)m[0], m[1], m[2] >= 0 ? in->t[m[2]]->dict : NULL, n,
                    malloc(bytes ? bytes : 1)};
        if (!c->data) {
            htable_free(h);
            return dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
        }
        if (bytes) memcpy(c->data, r, bytes), r += bytes;
    }
    h->have = 1;
    return 0;
}

/* After a pass's runs of partitions: every rank's merged partials (*acc,
 * or nothing for a rank without partitions), gathered in rank order, so
 * partition order, concatenated and merged as one process merges its
 * runs; *acc then holds the merge of all partitions, on every rank. rc:
 * this rank's outcome so far (every rank takes part whatever it is; the
 * lowest failing rank's error is everyone's). *gathered grows by the bytes
 * of all ranks' partials. */
static int gather_ranks(const dkb_query *q, dkb_tp *work, const dkb__part_pass *ps, dkb__comm *comm,
                        const dkb_tensor_set *in, htable *acc, int rc, int64_t *gathered, dkb_error *err) {
    unsigned char *mine = NULL, *all = NULL;
    int64_t len = 0, *lens = calloc((size_t)dkb__comm_size(comm), sizeof *lens);
    if (!rc) rc = lens ? htable_pack(acc, in, &mine, &len, err) : dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
    /* one agreement on the pass and the packing */
    if ((rc = dkb__comm_agree(comm, rc, err))) goto done;
    if ((rc = dkb__comm_allgather_bytes(comm, mine, len, &all, lens, err))) goto done;
    htable_free(acc);
    int64_t at = 0;
    int parts = 0;
    for (int r = 0; r < dkb__comm_size(comm); r++) *gathered += lens[r];
    for (int r = 0; r < dkb__comm_size(comm) && !rc; r++) {
        htable h;
        rc = htable_unpack(ps, in, r, all + at, lens[r], &h, err);
        at += lens[r];
        if (!rc && h.have) {
            parts++;
            rc = concat(acc, &h, err);
        }
        htable_free(&h);
    }
    if (!rc && !parts) rc = dkb_fail(err, DKB_EINTERNAL, "no rank ran a partition");
    if (!rc && parts > 1) {
        dkb_tp_reset(work);
        rc = merge(work, ps, acc, err);
    }
    rc = merge_status(q, work, rc, err);
done:
    free(mine);
    free(all);
    free(lens);
    return rc;
}

/* ---- every pass over every run of partitions ---- */

/* The state of a partitioned run, for the steps of dkb__pipe_run. */
typedef struct pass_run {
    const dkb_query *q;
    const dkb__part_plan *pl;
    dkb_tp *tp, *work;
    const dkb_store *db;
    const chunking *ck;
    dkb__comm *comm;
    dkb_tensor_set *in;
    int64_t *gathered;
    dkb_error *err;
    dkb__stream *st;    /* NULL: the runs are views */
    htable acc, part;
    int rc;
    double compute_ms;
    dkb_tensor slices[DKB_SET_MAX];
} pass_run;

/* A step's outcome: the first failure is kept in r->rc (and its message
 * in r->err); with ranks the steps go on (their collectives agree on the
 * failure), else the run stops. */
static int pr_status(pass_run *r, int rc, const dkb_error *e) {
    if (!rc) return 0;
    if (!r->rc) {
        r->rc = rc;
        if (r->err && e && e != r->err) *r->err = *e;
    }
    return ranked(r->comm) ? 0 : rc;
}

static int pr_stage(void *arg, int k, int slot) {
    pass_run *r = arg;
    if (!r->st || (r->rc && ranked(r->comm))) return 0;
    dkb__stream_piece p[DKB__STREAM_MAXPIECES];
    int n = 0;
    dkb_error e = {0};
    slot_layout(r->ck, r->ck->first[k], r->ck->first[k + 1] - 1, p, &n, NULL, NULL);
    int rc = dkb__stream_stage(r->st, slot, p, n, &e);
    if (rc) {
        char msg[sizeof e.msg];
        snprintf(msg, sizeof msg, "%s", e.msg);
        dkb_fail(&e, rc, "%s stream: %s", r->q->name, msg);
    }
    return pr_status(r, rc, &e);
}

static int pr_acquire(void *arg, int k, int slot) {
    pass_run *r = arg;
    (void)k;
    if (!r->st || (r->rc && ranked(r->comm))) return 0;
    dkb_error e = {0};
    int rc = dkb__stream_acquire(r->st, slot, &e);
    if (rc) {
        char msg[sizeof e.msg];
        snprintf(msg, sizeof msg, "%s", e.msg);
        dkb_fail(&e, rc, "%s stream: %s", r->q->name, msg);
    }
    return pr_status(r, rc, &e);
}

static int pr_release(void *arg, int k, int slot) {
    pass_run *r = arg;
    (void)k;
    if (!r->st || (r->rc && ranked(r->comm))) return 0;
    dkb_error e = {0};
    return pr_status(r, dkb__stream_release(r->st, slot, &e), &e);
}

/* After a pass's last run: with ranks every rank's merged partials
 * gathered and merged; the merged outputs into `in`. */
static int pr_end_pass(pass_run *r, int ps) {
    const dkb__part_pass *pass = &r->pl->pass[ps];
    if (ranked(r->comm) &&
        (r->rc = gather_ranks(r->q, r->work, pass, r->comm, r->in, &r->acc, r->rc, r->gathered, r->err)))
        return r->rc;
    for (int i = 0; i < pass->ncols && !r->rc; i++)
        dkb_set_put(r->tp, r->in, pass->cols[i].name, upload(r->tp, &r->acc.c[i]));
    if (!r->rc) r->rc = step_status(r->q, r->tp, "merge", 0, r->err);
    return ranked(r->comm) ? 0 : r->rc;
}

static int pr_compute(void *arg, int step, int k, int slot) {
    pass_run *r = arg;
    const chunking *ck = r->ck;
    int ps = step / ck->nchunks;
    const dkb__part_pass *pass = &r->pl->pass[ps];
    if (k == 0) {
        /* with ranks a failure after the last gather (an upload) is agreed
         * in the next pass's gather: the others are already there */
        if (r->rc && !ranked(r->comm)) return r->rc;
        htable_free(&r->acc);
    }
    if (!r->rc) {
        double t0 = dkb__now_ms();
        dkb_tensor_set cin, out = {0};
        char name[32];
        int rc;
        dkb_tp_reset(r->work);
        chunk_inputs(r->work, r->pl, r->db, ck, k, r->st ? dkb__stream_slot(r->st, slot) : NULL, r->in, &cin,
                     r->slices);
        snprintf(name, sizeof name, "partial %d/%d", k + 1, ck->nchunks);
        rc = step_status(r->q, r->work, name, pass->partial(r->work, &cin, &out), r->err);
        if (!rc) rc = merge_status(r->q, r->work, download(r->work, pass, &out, &r->part, r->err), r->err);
        if (!rc) rc = merge_status(r->q, r->work, concat(&r->acc, &r->part, r->err), r->err);
        if (!rc && k > 0) {
            dkb_tp_reset(r->work);
            rc = merge_status(r->q, r->work, merge(r->work, pass, &r->acc, r->err), r->err);
        }
        r->rc = rc;
        r->compute_ms += dkb__now_ms() - t0;
    }
    if (k == ck->nchunks - 1) return pr_end_pass(r, ps);
    return ranked(r->comm) ? 0 : r->rc;
}

/* Every pass of the plan over every chunk, merged into `in`; through the
 * stream st when not NULL. */
static int run_passes(const dkb_query *q, const dkb__part_plan *pl, dkb_tp *tp, dkb_tp *work, const dkb_store *db,
                      const chunking *ck, dkb__comm *comm, dkb__stream *st, dkb_tensor_set *in, int64_t *gathered,
                      double *compute_ms, dkb_error *err) {
    static const dkb__pipe_ops ops = {pr_stage, pr_acquire, pr_compute, pr_release};
    pass_run *r = calloc(1, sizeof *r);
    if (!r) return dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
    *r = (pass_run){.q = q, .pl = pl, .tp = tp, .work = work, .db = db, .ck = ck, .comm = comm, .in = in,
                    .gathered = gathered, .err = err, .st = st};
    if (ck->nchunks > 0) {
        int rc = dkb__pipe_run(&ops, r, ck->nchunks, pl->npasses, st ? ck->nslots : 1);
        if (rc && !r->rc) r->rc = rc;
    } else {
        /* a rank without partitions: it still takes part in every gather */
        for (int ps = 0; ps < pl->npasses; ps++) {
            htable_free(&r->acc);
            if (pr_end_pass(r, ps)) break;
        }
    }
    int rc = r->rc;
    *compute_ms = r->compute_ms;
    dkb_tp_reset(work);
    htable_free(&r->acc);
    htable_free(&r->part);
    free(r);
    return rc;
}

/* The streamed tables of pl in db (NULL where none). */
static void streamed_tables(const dkb__part_plan *pl, const dkb_store *db, const dkb_store_table **t) {
    for (int s = 0; s < 2; s++) t[s] = pl && pl->stream[s] ? dkb_store_table_find(db, pl->stream[s]) : NULL;
}

void dkb__part_host_views(dkb_tp *tp, const dkb_query *q, const dkb_store *db, int on) {
    const dkb__part_plan *pl = q ? dkb__part_plan_get(q->number) : NULL;
    const dkb_store_table *t[2] = {NULL, NULL};
    if (on && pl && tp && xfer_of(tp) != XFER_VIEW) streamed_tables(pl, db, t);
    dkb__tp_host_tables(tp, t, 2);
}

/* The query fits: every host view prepare made of a streamed column
 * becomes the backend's column (CUDA: resident, as without a budget). */
static int materialize(const dkb_query *q, dkb_tp *tp, const dkb__part_plan *pl, const dkb_store *db,
                       dkb_tensor_set *in, dkb_error *err) {
    const dkb_store_table *t[2];
    streamed_tables(pl, db, t);
    for (int i = 0; i < in->n; i++) {
        int s = streamed_of(pl, db, in->name[i], in->t[i]);
        if (s < 0) continue;
        in->t[i] = dkb_tp_column(tp, dkb_store_table_column(t[s], in->name[i]));
    }
    return step_status(q, tp, "prepare", 0, err);
}

/* Drop the host views of the streamed columns from `in` (final must not
 * read them: a missing name fails cleanly). */
static void drop_views(const chunking *ck, dkb_tensor_set *in) {
    int n = 0;
    for (int i = 0; i < in->n; i++) {
        int view = 0;
        for (int j = 0; j < ck->nin; j++) view |= in->t[i] == ck->whole[j];
        if (view) continue;
        in->name[n] = in->name[i], in->t[n] = in->t[i];
        n++;
    }
    in->n = n;
}

/* Open the stream of a partitioned run on `work`. */
static int open_stream(const dkb_query *q, dkb_tp *work, const chunking *ck, int threads, dkb__part_info *info,
                       dkb__stream **st, dkb_error *err) {
    const dkb__sdev_ops *ops = NULL;
    void *dev = NULL;
    int rc = 0;
    *st = NULL;
    if (ck->xfer == XFER_CUDA) {
        info->h2d_gbs = dkb__cuda_h2d_gbs();  /* before the slots take their memory */
        rc = dkb__cuda_sdev_open(work, &ops, &dev, err);
    } else {
        ops = &dkb__sdev_host;
        dev = dkb__sdev_host_new();
    }
    int fill = threads > 0 ? threads : omp_get_max_threads();
    if (fill > 16) fill = 16; /* the H200 machine's fills from 8 threads ran at 37 GB/s, under PCIe's 55 */
    if (!rc) rc = dkb__stream_open(ops, dev, ck->nslots, ck->slot_bytes, fill, st, err);
    if (rc) {
        char msg[sizeof err->msg];
        snprintf(msg, sizeof msg, "%s", err ? err->msg : "");
        return dkb_fail(err, rc, "%s stream: %s", q->name, msg);
    }
    return 0;
}

int dkb__query_run_budget(const dkb_query *q, dkb_tp *tp, const dkb_store *db, const dkb_params *p,
                          int64_t budget, int threads, dkb_result *res, dkb__part_info *info, dkb_error *err) {
    return dkb__query_run_ranks(q, tp, db, p, budget, threads, NULL, res, info, err);
}

int dkb__query_run_ranks(const dkb_query *q, dkb_tp *tp, const dkb_store *db, const dkb_params *p, int64_t budget,
                         int threads, dkb__comm *comm, dkb_result *res, dkb__part_info *info, dkb_error *err) {
    dkb__part_info dummy;
    if (!info) info = &dummy;
    memset(info, 0, sizeof *info);
    info->chunks = 1;
    info->h2d_gbs = NAN;
    if (ranked(comm) && budget <= 0) budget = INT64_MAX;  /* split over the ranks, no budget */
    if (budget <= 0) return dkb_query_run(q, tp, db, p, res, err);
    if (!q || !tp || !db || !p || !res) return dkb_fail(err, DKB_EINVAL, "query run: missing argument");
    int rc;
    if (q->check && (rc = q->check(p, err))) {
        if (err && !err->msg[0]) dkb_fail(err, rc, "%s: parameters rejected", q->name);
        return rc;
    }
    const dkb__part_plan *pl = dkb__part_plan_get(q->number);
    /* ranks without a budget keep their columns resident whole, as before
     * (they stay so across runs); a budget streams */
    xfer_mode xfer = pl && budget != INT64_MAX ? xfer_of(tp) : XFER_VIEW;
    dkb_tensor_set in, out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    /* streamed: prepare sees host views of the streamed tables' columns,
     * copied to the device only when the query fits, else by runs */
    if (xfer != XFER_VIEW) {
        const dkb_store_table *t[2];
        streamed_tables(pl, db, t);
        dkb__tp_host_tables(tp, t, 2);
    }
    rc = step_status(q, tp, "prepare", q->prepare(tp, db, p, &in), err);
    dkb__tp_host_tables(tp, NULL, 0);
    if (ranked(comm)) rc = dkb__comm_agree(comm, rc, err);
    if (rc) return rc;
    for (int i = 0; i < in.n; i++) {
        int64_t b = tensor_bytes(in.t[i]);
        if (streamed_of(pl, db, in.name[i], in.t[i]) >= 0) info->streamed_bytes += b;
        else info->resident_bytes += b;
    }
    info->peak_bytes = info->resident_bytes + info->streamed_bytes;
    if (info->peak_bytes <= budget && !ranked(comm)) {
        if (xfer != XFER_VIEW) rc = materialize(q, tp, pl, db, &in, err);
        if (!rc) rc = step_status(q, tp, "core", q->core(tp, &in, &out), err);
    } else if (!pl) {
        char b1[32], b2[32];
        return dkb_fail(err, DKB_EINVAL, "%s: not partitioned yet: its columns need %s, over --mem-budget %s",
                        q->name, size_text(info->peak_bytes, b1, sizeof b1), size_text(budget, b2, sizeof b2));
    } else {
        chunking *ck = calloc(1, sizeof *ck);
        info->peak_bytes = 0;
        dkb_tp *work = NULL;
        dkb__stream *st = NULL;
        rc = ck ? plan_chunks(q, pl, db, &in, budget, info->resident_bytes, comm, xfer, ck, info, err)
                : dkb_fail(err, DKB_ENOMEM, "partitions: out of memory");
        if (!rc) rc = dkb_tp_create(dkb_tp_backend_of(tp), threads, &work, err);
        if (!rc && xfer != XFER_VIEW && ck->nchunks > 0) rc = open_stream(q, work, ck, threads, info, &st, err);
        if (ranked(comm)) rc = dkb__comm_agree(comm, rc, err);
        if (rc) {
            dkb__stream_close(st, NULL);
            dkb_tp_destroy(work);
            free(ck);
            return rc;
        }
        info->partitioned = 1;
        info->chunks = ck->nchunks;
        info->passes = pl->npasses;
        if (st) info->slots = ck->nslots, info->slot_bytes = ck->slot_bytes;
        double t0 = dkb__now_ms();
        rc = run_passes(q, pl, tp, work, db, ck, comm, st, &in, &info->gathered_bytes, &info->compute_ms, err);
        dkb__stream_stats ss = {0};
        dkb__stream_close(st, &ss);
        info->wall_ms = dkb__now_ms() - t0;
        info->loads = ss.loads, info->copied_bytes = ss.bytes;
        info->copy_ms = ss.copy_ms, info->fill_ms = ss.fill_ms, info->stall_ms = ss.stall_ms;
        dkb_tp_destroy(work);
        if (xfer != XFER_VIEW) drop_views(ck, &in);
        free(ck);
        if (!rc) rc = step_status(q, tp, "final", pl->final(tp, &in, &out), err);
    }
    if (!rc) rc = step_status(q, tp, "finish", q->finish(tp, &out, p, res), err);
    if (!rc && res->nbad)
        rc = dkb_fail(err, DKB_EINTERNAL, "%s finish: %lld bad result cell write%s (first: %s)", q->name,
                      (long long)res->nbad, res->nbad == 1 ? "" : "s", res->bad);
    /* final and finish run on each rank alone: a rank failing there must
     * not leave the others in the next run's collectives */
    if (ranked(comm)) rc = dkb__comm_agree(comm, rc, err);
    if (rc) dkb_result_free(res);
    return rc;
}

/* ---- helpers ---- */

dkb_tensor *dkb__part_avg(dkb_tp *tp, const dkb_tensor *sum, const dkb_tensor *count) {
    if (!sum || !count) return dkb_tp_fail(tp, DKB_EINVAL, "part_avg: missing input");
    if (sum->n != count->n) return dkb_tp_fail(tp, DKB_EINVAL, "part_avg: lengths differ");
    dkb_tensor *s = dkb_tp_cast(tp, sum, DKB_TP_I128), *c = dkb_tp_cast(tp, count, DKB_TP_I64);
    if (!s || !c) return NULL;
    int64_t n = sum->n;
    __int128 *hs = malloc(sizeof *hs * (size_t)(n + 1));
    int64_t *hc = malloc(sizeof *hc * (size_t)(n + 1));
    double *o = malloc(sizeof *o * (size_t)(n + 1));
    dkb_tensor *r = NULL;
    if (!hs || !hc || !o) {
        dkb_tp_fail(tp, DKB_ENOMEM, "part_avg: out of memory");
    } else if ((n == 0 || (!dkb_tp_to_host(tp, s, hs) && !dkb_tp_to_host(tp, c, hc)))) {
        double p10 = 1;
        for (int i = 0; i < sum->scale; i++) p10 *= 10;
        for (int64_t i = 0; i < n; i++) o[i] = dkb__exact_avg(hs[i], hc[i], p10);
        r = dkb_tp_from_host(tp, DKB_TP_F64, n, o);
    }
    free(hs);
    free(hc);
    free(o);
    return r;
}
