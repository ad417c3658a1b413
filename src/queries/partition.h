/* partition.h: partitioned execution of the baseline plans under a memory
 * budget (internal; docs/partitions.md describes the design).
 *
 * When the store columns a query's prepare step puts into its input set
 * do not fit the budget, the query runs partition by partition: the
 * streamed tables (lineitem and orders, co-partitioned by orderkey; or
 * partsupp and part, by partkey) are cut into runs of the store's
 * partitions that fit beside the resident tables, a pass's partial runs on
 * each run of partitions, and its outputs are merged exactly (integer sums
 * and counts, min/max, the value that follows from a key, or rows simply
 * concatenated), in partition order. A query may take two passes (a global
 * aggregate that a later filter or join needs); then `final` turns the
 * merged outputs into the core's outputs, and the query's own finish
 * builds the result. Everything runs on TensorPlan, so on both backends.
 *
 * A query's partitioned form is a dkb__part_plan next to its plan
 * (src/queries/qNN.c, `const dkb__part_plan dkb__qNN_part`), listed in
 * partition.c's table. */
#ifndef DKB_QUERIES_PARTITION_H
#define DKB_QUERIES_PARTITION_H

#include <stdint.h>

#include "dkb/query.h"  // defines: dkb_query, dkb_tp, dkb_tensor_set, dkb_store, dkb_result
#include "dist/comm.h"  // defines: dkb__comm (the ranks of a distributed run)

/* How one output of a partial merges with the same output of the other
 * partitions. Within one pass either some outputs are KEYs (rows with
 * equal keys merge; the others are SUM, MIN, MAX or FIRST), or none are
 * (SUM, MIN, MAX reduce to one row), or all are CAT. */
typedef enum {
    DKB__MERGE_KEY = 0, /* integer group key */
    DKB__MERGE_SUM,     /* exact integer sum (counts too); the dtype is kept */
    DKB__MERGE_MIN,
    DKB__MERGE_MAX,
    DKB__MERGE_FIRST,   /* follows from the keys: the first partition's value */
    DKB__MERGE_CAT,     /* rows concatenated in partition order */
} dkb__merge;

#define DKB__PART_MAXCOLS 16
#define DKB__PART_MAXPASSES 2

typedef struct dkb__part_col {
    const char *name;   /* the partial's output name (static) */
    dkb__merge how;
} dkb__part_col;

typedef struct dkb__part_pass {
    /* IN in: the prepared inputs, streamed columns cut to the partitions
     * at hand, plus the merged outputs of the earlier passes. OUT out
     * (zeroed): the outputs listed in cols, integer or F64 tensors, with
     * the same dtypes and scales for every partition. May be the query's
     * core when its outputs merge as listed. */
    int (*partial)(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out);
    int ncols;
    dkb__part_col cols[DKB__PART_MAXCOLS];
} dkb__part_pass;

typedef struct dkb__part_plan {
    const char *stream[2];  /* the tables streamed by partition (NULL: none) */
    int npasses;
    dkb__part_pass pass[DKB__PART_MAXPASSES];
    /* IN in: the prepared inputs (whole columns) plus every pass's merged
     * outputs under their names. OUT out (zeroed): exactly what the core
     * would have put there (names, dtypes, scales, rows, order). */
    int (*final)(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out);
} dkb__part_plan;

/* The partitioned form of query `number` (1..22), or NULL when it has none
 * yet. */
const dkb__part_plan *dkb__part_plan_get(int number);
/* 1 when some query's partitioned form streams store table `table`
 * (lineitem, orders, part, partsupp), else 0. */
int dkb__part_streamable(const char *table);

/* What a budgeted run did (filled by dkb__query_run_budget). */
typedef struct dkb__part_info {
    int partitioned;        /* 1 when it ran partitioned */
    int chunks;             /* runs of partitions per pass (1 when it fit) */
    int partitions;         /* the streamed tables' store partitions */
    int passes;
    int64_t resident_bytes; /* columns of the tables kept whole */
    int64_t streamed_bytes; /* columns of the streamed tables, whole */
    int64_t peak_bytes;     /* resident + the largest run of partitions */
    int part_lo, part_hi;   /* partitions [part_lo, part_hi) ran here (all but with ranks) */
    int64_t gathered_bytes; /* with ranks: the partials every rank received, all passes */
    /* Streaming (src/queries/stream.h): on CUDA (and the CPU backend with
     * DKB_PARTITION_STAGING=host) the runs of partitions are copied into
     * `slots` device buffers of slot_bytes each, reused by every run; the
     * budget then bounds resident + slots x slot_bytes (peak_bytes). 0
     * slots: the runs are views of the mapped store (the CPU backend). */
    int slots;
    int64_t slot_bytes;
    int loads;              /* runs of partitions copied, all passes */
    int64_t copied_bytes;   /* bytes copied to the device, all passes */
    double copy_ms;         /* the device's time in those copies, summed over loads */
    double fill_ms;         /* the stager's wall time filling staging and issuing copies */
    double stall_ms;        /* the query's wall time waiting for a copy */
    double compute_ms;      /* wall time in partials and merges */
    double wall_ms;         /* wall time of all passes */
    double h2d_gbs;         /* pinned host-to-device bandwidth, measured once per process (NaN: none) */
} dkb__part_info;

/* dkb_query_run under a budget of `budget` bytes for the query's columns
 * (0: no budget, exactly dkb_query_run). A query whose columns fit runs
 * as dkb_query_run does; otherwise partitioned, with the same result bit
 * for bit. `threads` as dkb_tp_create's (the partials' context). Errors
 * as dkb_query_run's, plus DKB_ENOMEM "qNN: --mem-budget B is too small:
 * it needs at least N bytes (...)" and DKB_EINVAL "qNN: not partitioned
 * yet: ..." (its columns exceed the budget and it has no partitioned
 * form, or the store has one partition). info may be NULL. */
int dkb__query_run_budget(const dkb_query *q, dkb_tp *tp, const dkb_store *db, const dkb_params *p,
                          int64_t budget, int threads, dkb_result *res, dkb__part_info *info, dkb_error *err);

/* dkb__query_run_budget over the ranks of comm (a collective: every rank
 * calls it with the same query, parameters and budget on the same store).
 * comm NULL or of one rank: exactly dkb__query_run_budget. With several
 * ranks the query always runs partitioned (budget 0: no budget): rank r
 * runs the partials of its share of the streamed tables' partitions
 * (dkb__comm_share: consecutive, in order; none when there are fewer
 * partitions than ranks), in runs of partitions that fit the budget; after
 * each pass the ranks' merged partials are gathered in rank order, so
 * partition order, and merged as one process merges its runs, so every
 * rank has the same result, bit for bit the one-process run's. An error on
 * any rank is every rank's ("rank R: ..." unless all ranks failed alike). */
int dkb__query_run_ranks(const dkb_query *q, dkb_tp *tp, const dkb_store *db, const dkb_params *p, int64_t budget,
                         int threads, dkb__comm *comm, dkb_result *res, dkb__part_info *info, dkb_error *err);

/* While on, dkb_tp_column on tp gives host views of the columns of the
 * tables query q streams under a budget, where dkb__query_run_budget would
 * stream them (the CUDA backend; the CPU's DKB_PARTITION_STAGING=host):
 * for a prepare run ahead of the budgeted runs (dkb run --time's preload),
 * so that it makes only the resident tables resident. Off clears it. */
void dkb__part_host_views(dkb_tp *tp, const dkb_query *q, const dkb_store *db, int on);

/* ---- helpers for partials and finals ---- */

/* F64 exact averages sum[i] / count[i] (sum an integer tensor with its
 * scale, count I64 > 0), bit for bit DKB_AGG_AVG's value for the group
 * whose exact sum and count these are (through the host). */
dkb_tensor *dkb__part_avg(dkb_tp *tp, const dkb_tensor *sum, const dkb_tensor *count);

#endif
