/* gen.h: the TPC-H data generator (internal API), byte-identical to dbgen 2.14.
 *
 * A table is generated in "units", each depending only on the scale factor
 * and its unit number, so any range of units can be generated independently
 * (threads, --part K --parts N):
 *   part, supplier, customer, nation, region: one unit = one row
 *   partsupp: one unit = one part = 4 partsupp rows (SUPP_PER_PART)
 *   orders:   one unit = one order row
 *   lineitem: one unit = one order = its 1..7 lineitem rows
 * Units are numbered from 0 (unit u is dbgen's row number u + 1). */
#ifndef DKB_GEN_H
#define DKB_GEN_H

#include <stdint.h>

#include "dkb/error.h"
#include "dkb/schema.h"
#include "table/batch.h"

/* Shared read-only state of a generation run: the scale factor as dbgen
 * interprets it, distributions and the 300 MiB text pool. Build once, then
 * use from any number of threads. */
typedef struct dkb_gen dkb_gen;

/* Validate sf and build the shared state. Scale factors follow dbgen: below 1
 * in steps of 0.001 (row counts base * int(1000 * sf) / 1000, at least 1),
 * from 1 up the integer part. Errors: DKB_ERANGE for sf <= 0 or > 100000
 * (message says why), DKB_ENOMEM. */
int dkb__gen_create(double sf, dkb_gen **out, dkb_error *err);
/* The same, building the text pool on `threads` threads (< 1: OpenMP's
 * default); dkb__gen_create uses the default. */
int dkb__gen_create_threads(double sf, int threads, dkb_gen **out, dkb_error *err);
void dkb__gen_destroy(dkb_gen *g);   /* accepts NULL */

/* The scale factor in effect (1.5 -> 1, 0.0015 -> 0.001; 0 below 0.001,
 * where the scaled tables get one row each, as in dbgen). */
double dkb__gen_scale(const dkb_gen *g);
/* Number of units of table t. */
int64_t dkb__gen_units(const dkb_gen *g, dkb_table_id t);
/* Most rows one unit of t produces (1, 4 for partsupp, 7 for lineitem). */
int dkb__gen_max_rows_per_unit(dkb_table_id t);

/* Append the rows of units [first, first + count) of table t to batch b
 * (b->table must be t's definition; b->cap - b->nrows must be at least
 * count * dkb__gen_max_rows_per_unit(t)). Thread-safe for distinct batches.
 * Returns 0, DKB_EINVAL for a range outside the table, or DKB_ENOMEM. */
int dkb__gen_fill(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count, dkb_batch *b);

#endif
