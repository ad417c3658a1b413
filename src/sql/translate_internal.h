/* translate_internal.h: the translator's shared types (internal to
 * src/sql/translate_*.c): SQL types read from DuckDB's plan JSON, columns
 * with a validity mask (SQL NULL), relations (the rows an operator
 * produces), and the translation context.
 *
 * The translator walks DuckDB's optimized logical plan depth first and
 * executes each operator as TensorPlan operations on the context's backend
 * (each operation materialises its output; the operations are generic, so
 * the same walk runs on the CPU and CUDA backends). A column is a tensor in
 * the encoding of the store (exact scaled decimals, dates as days,
 * dictionary codes or free text) plus an optional BOOL validity mask: NULL
 * means every row is valid, as for every store column; outer joins,
 * aggregates over no rows and CASE without ELSE make masks. A construct the
 * translator does not handle fails the whole translation with one line
 * naming the operator or function (and the SQL position DuckDB gives),
 * never a partial answer. */
#ifndef DKB_SQL_TRANSLATE_INTERNAL_H
#define DKB_SQL_TRANSLATE_INTERNAL_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "dkb/error.h"
#include "dkb/result.h"
#include "dkb/store.h"
#include "dkb/tensor.h"

/* SQL types of DuckDB's plan ("return_type": {"id": ...}). */
typedef enum {
    TY_BOOL = 0,
    TY_INT,       /* TINYINT, SMALLINT, INTEGER */
    TY_BIGINT,
    TY_HUGEINT,
    TY_DECIMAL,   /* scale in tr_type.scale */
    TY_DOUBLE,    /* DOUBLE, FLOAT */
    TY_DATE,
    TY_VARCHAR,
    TY_NULL,      /* the type of an untyped NULL constant */
    TY_OTHER      /* anything else: refused where it is used */
} tr_tyid;

typedef struct tr_type {
    tr_tyid id;
    int width, scale;  /* DECIMAL */
    char name[24];     /* DuckDB's id, for messages */
} tr_type;

/* A column: n values (the relation's row count). Gathers are late: a
 * join, filter or sort only composes row numbers (rows), and the values
 * are gathered when an expression first reads the column (tr_col_ready),
 * so columns that only pass through are never copied. */
typedef struct tr_col {
    dkb_tensor *v;      /* values; VARCHAR: U8 codes with a sorted dictionary, or STR */
    dkb_tensor *valid;  /* BOOL, 1 = not NULL; NULL: every row valid */
    tr_type ty;
    dkb_tensor *rows;   /* pending: the column is v[rows], valid[rows] (I64; -1: NULL
                         * when miss); NULL: v and valid are the column */
    bool miss;
} tr_col;

/* A relation: ncols columns of n rows. norder > 0 when the rows are in the
 * order of an ORDER BY / TOP_N over columns order[] (kept through
 * projections that pass those columns on). */
typedef struct tr_rel {
    int ncols;
    tr_col *c;
    int64_t n;
    int norder;
    dkb_sort_spec order[8];
} tr_rel;

/* A constant (BOUND_CONSTANT, table-filter constants, CHUNK_GET values). */
typedef struct tr_const {
    tr_type ty;
    bool null;
    __int128 i;       /* integers, DECIMAL (unscaled), DATE (days), BOOL */
    double f;         /* DOUBLE */
    const char *s;    /* VARCHAR (the JSON's text) */
    size_t slen;
} tr_const;

/* An expression's value: a column, or a constant not yet broadcast. */
typedef struct tr_val {
    bool is_const;
    tr_const k;
    tr_col c;
} tr_val;

#define TR_MAX_CTE 32
#define TR_MAX_DELIM 16
#define TR_MAX_MEMO 8
#define TR_MAX_BOUND 256

/* A hash join already run over a large probe side (translate_join.c):
 * a later join probing the same tensor with build keys that are a subset
 * of these (DuckDB's decorrelated subqueries join the same table again
 * with the distinct keys the first join produced) takes its pairs from
 * these instead of probing again. */
typedef struct tr_join_memo {
    const dkb_tensor *probe;   /* the probe keys as passed to dkb_tp_join */
    dkb_tensor *build;         /* the build keys */
    dkb_tensor *probe_idx, *build_idx;
    int unique;                /* build keys distinct: -1 not known yet, 0 no, 1 yes */
} tr_join_memo;

/* A table filter already evaluated (translate_ops.c): DuckDB scans a table
 * twice with the same filter for a subquery over the same rows (TPC-H
 * Q22's customers), and the second scan reuses the mask. */
typedef struct tr_filter_memo {
    const dkb_store_table *table;
    int64_t key;     /* the filtered column's index into the GET's names */
    const cJSON *filter;  /* the filter in the plan */
    dkb_tensor *mask;
} tr_filter_memo;

typedef struct tr_ctx {
    dkb_tp *tp;
    const dkb_store *db;
    const char *sql;      /* for positions in messages */
    dkb_error *err;
    bool failed;
    int ncte;
    int64_t cte_index[TR_MAX_CTE];
    tr_rel *cte_rel[TR_MAX_CTE];
    int ndelim;
    tr_rel *delim[TR_MAX_DELIM];  /* DELIM_GET's rows: innermost DELIM_JOIN last */
    void **blocks;                /* everything tr_alloc gave (freed at the end) */
    int nblocks, capblocks;
    FILE *trace;                  /* --explain: one line per operator, or NULL */
    int depth;
    int nmemo;
    tr_join_memo memo[TR_MAX_MEMO];
    int nfmemo;
    tr_filter_memo fmemo[TR_MAX_MEMO];
    /* row numbers composed by tr_col_gather: rows[idx] once per pair, so
     * the columns of one relation keep one row tensor through joins */
    int nrmemo;
    struct tr_rows_memo {
        const dkb_tensor *rows, *idx;
        dkb_tensor *out;
    } rmemo[4 * TR_MAX_MEMO];
    /* the rows of a filter (nonzero of its mask, tr_rel_filter): a column
     * of the filtered relation's length is then compressed, not gathered */
    int nsmemo;
    struct tr_sel_memo {
        const dkb_tensor *rows, *mask;
    } smemo[4 * TR_MAX_MEMO];
    /* constant tensors made (tr_full): one per (dtype, rows, value) */
    int nfull;
    struct tr_full_memo {
        dkb_tp_dtype dt;
        int64_t n, value;
        dkb_tensor *t;
    } full[16];
    /* columns made ready (tr_col_ready): the values of v[rows] once per
     * (v, valid, rows, miss), so two copies of one pending column (a
     * projection passes columns on as copies) gather once */
    int nready;
    struct tr_ready_memo {
        const dkb_tensor *v, *valid, *rows;
        bool miss;
        dkb_tensor *out_v, *out_valid;
    } ready[64];
    /* known bounds of integer tensors (translate_stats.c), by their data */
    int nbound;
    struct tr_bound {
        const void *data;
        int64_t n, lo, hi;
    } bound[TR_MAX_BOUND];
    /* STR tensors whose strings have at most maxlen bytes (substrings) */
    int nmaxlen;
    struct tr_maxlen {
        const dkb_tensor *t;
        int maxlen;
    } maxlen[16];
    /* tensors made by tr_arange (0..n-1) */
    int nident;
    const dkb_tensor *ident[16];
    /* integer tensors whose values are all distinct (translate_stats.c) */
    int ndist;
    struct tr_dist {
        const void *data;
        int64_t n;
    } dist[TR_MAX_BOUND];
    /* the free-text store columns read, by their tensors' data */
    int nstext;
    struct tr_stext {
        const void *data;
        int64_t n;
        const dkb_store_column *col;
    } stext[TR_MAX_BOUND];
} tr_ctx;

/* ---- translate_util.c ---- */
void *tr_alloc(tr_ctx *x, size_t bytes);          /* zeroed; NULL + failed on OOM */
char *tr_strndup(tr_ctx *x, const char *s, size_t n);
void tr_free_all(tr_ctx *x);
/* Record the first failure (later ones are ignored); returns NULL. */
void *tr_fail(tr_ctx *x, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* "unsupported WHAT" with the SQL position of node's query_location. */
void *tr_unsupported(tr_ctx *x, const cJSON *node, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* True when the context (or tp's sticky error) has failed; copies tp's
 * error into x->err the first time. */
bool tr_bad(tr_ctx *x);
const char *tr_str(const cJSON *o, const char *key);   /* "" when absent */
int64_t tr_int(const cJSON *o, const char *key, int64_t dflt);
const cJSON *tr_get(const cJSON *o, const char *key);
tr_type tr_parse_type(const cJSON *t);                /* {"id":..., "type_info":...} */
tr_type tr_ty(tr_tyid id);
bool tr_is_int(tr_tyid id);  /* BOOL, INT, BIGINT, HUGEINT */
/* A constant's value from {"type", "is_null", "value"}; false + failed when
 * its type is not handled. */
bool tr_parse_const(tr_ctx *x, const cJSON *v, tr_const *out);
/* A tensor header like t with another scale and/or dictionary (same data). */
dkb_tensor *tr_relabel(tr_ctx *x, const dkb_tensor *t, int scale, const dkb_tp_dict *dict);
/* Constant k broadcast to n rows in the encoding of type ty. */
bool tr_broadcast(tr_ctx *x, const tr_const *k, int64_t n, tr_col *out);
/* A one-entry dictionary of s (for string constants as columns). */
const dkb_tp_dict *tr_dict_of(tr_ctx *x, const char *const *s, const size_t *len, int n);
dkb_tensor *tr_ones(tr_ctx *x, int64_t n);            /* BOOL all 1 */
/* BOOL lut[codes[i]] for U8 dictionary codes (lut: one entry per
 * dictionary entry): one comparison when the true entries are one run of
 * codes (codes sort as their strings), else dkb_tp_lookup_mask. */
dkb_tensor *tr_lut_mask(tr_ctx *x, const dkb_tensor *codes, const bool *lut);
/* 0, 1, ..., n - 1 (dkb_tp_arange), known as such: distinct, within
 * [0, n), and as row numbers the identity (gathering through it is a
 * no-op, tr_is_identity). */
dkb_tensor *tr_arange(tr_ctx *x, int64_t n);
bool tr_is_identity(tr_ctx *x, const dkb_tensor *rows, int64_t n);
/* STR tensor t's strings have at most maxlen bytes (get: INT32_MAX when not known). */
void tr_maxlen_set(tr_ctx *x, const dkb_tensor *t, int maxlen);
int tr_maxlen_get(tr_ctx *x, const dkb_tensor *t);
/* n copies of value (dkb_tp_full_i64), made once per (dtype, n, value). */
dkb_tensor *tr_full(tr_ctx *x, dkb_tp_dtype dt, int64_t n, int64_t value);
/* t is a tensor tr_full made: its value in *value. */
bool tr_full_value(tr_ctx *x, const dkb_tensor *t, int64_t *value);
dkb_tensor *tr_valid_or_ones(tr_ctx *x, const tr_col *c, int64_t n);
/* a AND b of validity masks (either NULL: all valid). */
dkb_tensor *tr_and_valid(tr_ctx *x, dkb_tensor *a, dkb_tensor *b);
/* The rows idx (I64; -1 gives NULL when may_miss) of every column. */
tr_rel *tr_rel_gather(tr_ctx *x, const tr_rel *r, const dkb_tensor *idx, bool may_miss);
/* Gather a pending column's values now (in place); no-op when not pending. */
bool tr_col_ready(tr_ctx *x, tr_col *c);
/* A copy of r's columns, every one ready (tr_alloc'ed array of r->ncols). */
tr_col *tr_rel_ready_cols(tr_ctx *x, const tr_rel *r);
bool tr_col_gather(tr_ctx *x, const tr_col *c, int64_t n, const dkb_tensor *idx, bool may_miss, tr_col *out);
/* A column's pending rows as a tensor (composed rows are made when first
 * read: tr_col_gather only notes the composition). */
dkb_tensor *tr_rows(tr_ctx *x, dkb_tensor *rows);
tr_rel *tr_rel_new(tr_ctx *x, int ncols, int64_t n);
/* The rows where mask (BOOL) is true. */
tr_rel *tr_rel_filter(tr_ctx *x, const tr_rel *r, const dkb_tensor *mask);
/* A predicate's rows: value AND valid (NULL is false). */
dkb_tensor *tr_truth(tr_ctx *x, const tr_col *c);
/* Rows of a then rows of b (same column types). */
tr_rel *tr_rel_concat(tr_ctx *x, const tr_rel *a, const tr_rel *b);
dkb_tensor *tr_concat_i64(tr_ctx *x, const dkb_tensor *a, const dkb_tensor *b);
/* Rescale an exact integer column to `scale` (down: rounded half away from
 * zero, as DuckDB's casts). */
dkb_tensor *tr_rescale(tr_ctx *x, const dkb_tensor *t, int scale);
void tr_trace(tr_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- translate_stats.c: store column statistics and value bounds ---- */
/* Store column c was read as tensor t: its range (and, for free text, the
 * column) is noted for t. */
void tr_store_column_seen(tr_ctx *x, const dkb_store_column *c, const dkb_tensor *t);
/* lo <= every value of t <= hi (bounds, not necessarily attained). */
void tr_bound_set(tr_ctx *x, const dkb_tensor *t, int64_t lo, int64_t hi);
bool tr_bound_get(tr_ctx *x, const dkb_tensor *t, int64_t *lo, int64_t *hi);
/* to's values are from's (a gather or compress of it; with_zero: or 0, a
 * gather's fill). */
void tr_bound_derive(tr_ctx *x, const dkb_tensor *from, const dkb_tensor *to, bool with_zero);
/* Integer tensors whose values are all distinct: store columns whose
 * values increase row by row (keys such as o_orderkey), row numbers of a
 * filter; to = from[idx] (idx NULL: a compress of from) keeps it when idx
 * is itself distinct and never -1. */
void tr_distinct_set(tr_ctx *x, const dkb_tensor *t);
bool tr_distinct_get(tr_ctx *x, const dkb_tensor *t);
void tr_distinct_derive(tr_ctx *x, const dkb_tensor *from, const dkb_tensor *idx, const dkb_tensor *to);
/* t is a free-text store column whose strings are all distinct. */
bool tr_distinct_text(tr_ctx *x, const dkb_tensor *t);

/* ---- translate_host.c: host-side helpers for strings and keys ---- */
/* Row strings of a VARCHAR column on the host (dictionary codes resolved). */
typedef struct tr_hstr {
    int64_t n;
    const char **p;
    size_t *len;
} tr_hstr;
bool tr_host_strings(tr_ctx *x, const tr_col *c, tr_hstr *out);
/* A STR tensor of the host strings h. */
dkb_tensor *tr_str_from_host(tr_ctx *x, const tr_hstr *h);
/* Integer keys for equal-value grouping or joining: one column (or, for a
 * join, its two sides, in one key space: the ids agree across them). */
dkb_tensor *tr_key_of(tr_ctx *x, const tr_col *c, int64_t n);
bool tr_key_pair(tr_ctx *x, const tr_col *a, int64_t na, const tr_col *b, int64_t nb, dkb_tensor **ka,
                 dkb_tensor **kb);
/* The values of an integer tensor widened on the host (tr_alloc'ed). */
__int128 *tr_host_i128(tr_ctx *x, const dkb_tensor *t);
int64_t *tr_host_i64(tr_ctx *x, const dkb_tensor *t);
double *tr_host_f64(tr_ctx *x, const dkb_tensor *t);
int tr_strcmp(const char *a, size_t la, const char *b, size_t lb);
bool tr_like(const char *s, size_t n, const char *pat, size_t pn);

/* ---- translate_expr.c ---- */
bool tr_eval(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_val *out);
/* Evaluate and broadcast a constant: a column of in->n rows. */
bool tr_eval_col(tr_ctx *x, const cJSON *e, const tr_rel *in, tr_col *out);
bool tr_val_col(tr_ctx *x, const tr_val *v, int64_t n, tr_col *out);
/* Comparison of two values (op a DuckDB COMPARE_* name). */
bool tr_compare(tr_ctx *x, const char *op, const tr_val *a, const tr_val *b, int64_t n, const cJSON *node,
                tr_col *out);
bool tr_cast(tr_ctx *x, const tr_val *a, tr_type to, int64_t n, const cJSON *node, tr_val *out);

/* ---- translate_ops.c / translate_join.c / translate_agg.c ---- */
tr_rel *tr_op(tr_ctx *x, const cJSON *op);
/* An operator of one input (FILTER, PROJECTION, AGGREGATE, ORDER_BY, ...) over in. */
tr_rel *tr_unary(tr_ctx *x, const cJSON *op, tr_rel *in);
/* An inner join of l and r as COMPARISON_JOIN op joins its children. */
tr_rel *tr_join_rels(tr_ctx *x, const cJSON *op, const tr_rel *l, const tr_rel *r);
/* Per row of l, how many rows of r share its keys under op's equality
 * conditions (I64; an upper bound of its pairs when op has others), their
 * sum in *total. NULL, not failing, when op has no equality, a side is
 * empty, one side's keys are known distinct (then the other side's rows
 * bound the pairs), or samples of both sides estimate at most limit / 4
 * pairs. */
dkb_tensor *tr_join_fanout(tr_ctx *x, const cJSON *op, const tr_rel *l, const tr_rel *r, int64_t limit,
                           int64_t *total);
/* translate_chunk.c: AGGREGATE op over an inner join (through projections
 * and filters) whose pairs exceed the pair limit, run over runs of the
 * join's left rows; *done false (nothing evaluated) when op is not such an
 * aggregate, else the result (NULL on failure). */
tr_rel *tr_aggregate_join_chunked(tr_ctx *x, const cJSON *op, bool *done);
/* COMPARISON_JOIN, DELIM_JOIN, CROSS_PRODUCT (op's children evaluated here). */
tr_rel *tr_join(tr_ctx *x, const cJSON *op);
/* Rows of a that occur (anti: do not occur) in b, NULLs equal to NULLs
 * (INTERSECT / EXCEPT over distinct rows). */
tr_rel *tr_setop_semi(tr_ctx *x, const tr_rel *a, const tr_rel *b, bool anti);
/* Group n rows by the columns keys[0..nkeys) (NULL a group of its own). */
bool tr_group(tr_ctx *x, const tr_col *keys, int nkeys, int64_t n, dkb_groups *g);
tr_rel *tr_aggregate(tr_ctx *x, const cJSON *op, const tr_rel *in);
/* The distinct rows of r (DELIM_GET's input, DISTINCT, UNION). */
tr_rel *tr_distinct(tr_ctx *x, const tr_rel *r);

/* Every dkb_tp_* call below goes through the recorder of `dkb sql --emit c`
 * (emit_rec.h; a plain call when no recording is on). */
#include "sql/emit_rec.h"

#endif
