/* tensor.h: TensorPlan, generic columnar tensor operations for the baseline
 * query plans (the paper's "TorchPlan", in C).
 *
 * A plan is a straight sequence of generic operations, each materialising
 * its output tensor, with no query-specific fusion. Operations run on a
 * backend chosen when the context is created (dkb_tp_create): the CPU
 * (OpenMP over all cores) or CUDA (one GPU, where built and usable:
 * dkb_tp_cuda_available); plans never see which one, so the same plan runs
 * on both. Tensors live in the backend's memory; the few values a plan needs on
 * the host (scalars, small results for the finish step) are fetched with
 * dkb_tp_to_host / dkb_tp_get_*.
 *
 * Memory: every tensor comes from the context's arena and lives until
 * dkb_tp_reset (end of one query run) or dkb_tp_destroy. Plans never free,
 * except a plan that works through an input in chunks: dkb_tp_release
 * frees every tensor made since a dkb_tp_mark (its memory is reused by
 * the next chunk).
 * Tensors are immutable: an operation may return a view sharing its input's
 * data (e.g. a cast to the same dtype); never write through ->data.
 *
 * Errors are sticky, so a plan reads like its SQL: when an operation fails
 * (out of memory, bad argument, an integer result that does not fit) it
 * records "op: reason" in the context (the first failure wins) and returns
 * NULL; every operation given a NULL tensor returns NULL at once (and
 * records DKB_EINVAL if nothing failed before). A plan checks
 * dkb_tp_status once at the end.
 *
 * Determinism: results never depend on the thread count (float sums
 * included: they add fixed chunks in a fixed order).
 *
 * Shapes: "n" is a tensor's length; every elementwise operation needs equal
 * lengths. Index tensors are I64 row numbers into another tensor (-1 means
 * "no row" where an operation says so). Masks are BOOL (or U8: nonzero is
 * true). */
#ifndef DKB_TENSOR_H
#define DKB_TENSOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dkb/error.h"
#include "dkb/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- types ---- */

typedef enum {
    DKB_TP_BOOL = 0, /* uint8 0/1: masks */
    DKB_TP_U8,       /* uint8: dictionary codes */
    DKB_TP_I8,
    DKB_TP_I16,
    DKB_TP_I32,      /* keys, dates (days since 1970-01-01), counts */
    DKB_TP_I64,      /* keys, decimals (scaled integers), indices */
    DKB_TP_I128,     /* exact sums of scaled decimals (__int128) */
    DKB_TP_F64,      /* averages, ratios, the documented float paths */
    DKB_TP_STR,      /* variable strings: n + 1 int64 offsets + bytes */
    DKB_TP_NTYPES
} dkb_tp_dtype;

/* A dictionary: sorted strings that U8 codes index (from a store DICT column). */
typedef struct dkb_tp_dict {
    int size;
    const char *const *str;  /* size entries, host memory, not NUL-terminated */
    const size_t *len;
} dkb_tp_dict;

typedef struct dkb_tensor {
    dkb_tp_dtype dtype;
    int64_t n;
    void *data;              /* n elements (STR: n + 1 int64 offsets), backend memory */
    char *bytes;             /* STR: the characters, backend memory */
    int64_t nbytes;          /* STR: length of bytes */
    int scale;               /* decimal scale of integer values: 2 = hundredths
                              * (DECIMAL(15,2)), 4 after one decimal product, ... */
    const dkb_tp_dict *dict; /* U8 codes: their dictionary (host), else NULL */
} dkb_tensor;

/* A context: backend, arena, threads, sticky error. */
typedef struct dkb_tp dkb_tp;

typedef enum { DKB_TP_CPU = 0, DKB_TP_CUDA } dkb_tp_backend;

/* Create a context on backend (DKB_TP_CPU; DKB_TP_CUDA where built) with
 * `threads` worker threads (0: all cores, as omp_get_max_threads). DKB_EINVAL
 * for an unavailable backend or threads < 0. Small inputs (under about 256K
 * rows) run on one thread. A context is used by one thread at a time. */
int dkb_tp_create(dkb_tp_backend backend, int threads, dkb_tp **out, dkb_error *err);
void dkb_tp_destroy(dkb_tp *tp);          /* accepts NULL */
/* Free every tensor of the context and clear its error (between runs). */
void dkb_tp_reset(dkb_tp *tp);
/* A position in the context's memory (dkb_tp_mark), to release back to. */
typedef struct dkb_tp_mark {
    const void *block[2];
    size_t used[2];
} dkb_tp_mark;
/* The current position. */
dkb_tp_mark dkb_tp_mark_get(const dkb_tp *tp);
/* Free every tensor made after mark m (their headers included: no pointer
 * to one may be used afterwards); tensors made before it stay. Marks nest:
 * releasing to an earlier mark releases the later ones too. */
void dkb_tp_release(dkb_tp *tp, dkb_tp_mark m);
/* 0, or the first error's code (message in *err when err is non-NULL). */
int dkb_tp_status(const dkb_tp *tp, dkb_error *err);
/* Record a failure from plan code (e.g. a parameter that matches nothing
 * it must match); returns NULL so plans can `return dkb_tp_fail(...)`. */
dkb_tensor *dkb_tp_fail(dkb_tp *tp, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
dkb_tp_backend dkb_tp_backend_of(const dkb_tp *tp);
/* True when this build has the CUDA backend and a usable GPU. */
bool dkb_tp_cuda_available(void);

/* Store columns made resident by the backend: CUDA copies a column to the
 * device on its first dkb_tp_column (pinned staging, async copies) and keeps
 * it until dkb_tp_destroy, across resets, queries and runs; the CPU backend
 * maps columns in place (all zero). */
typedef struct dkb_tp_resident_stats {
    int64_t columns;   /* columns resident now */
    int64_t bytes;     /* their bytes on the device */
    double seconds;    /* wall time spent copying them */
} dkb_tp_resident_stats;
void dkb_tp_resident(const dkb_tp *tp, dkb_tp_resident_stats *st);
/* The distinct store columns passed to dkb_tp_column since the last
 * dkb_tp_reset (or create), on any backend: their number in *columns and
 * their bytes in *bytes (rows x element size; TEXT: the rows + 1 int64
 * offsets plus the characters), the least a run must read once ("floor
 * bytes"). Either pointer may be NULL; a NULL tp gives 0 and 0. */
void dkb_tp_touched(const dkb_tp *tp, int64_t *columns, int64_t *bytes);

/* Profiling: time every operation of tp (each one waits for the backend to
 * finish, so a profiled run is slower than a plain one), to find what
 * dominates a plan. start begins (or resumes) timing, stop ends it; read
 * fills up to max entries, the operations that ran sorted by total time,
 * and returns how many it filled; clear zeroes the totals. Copies to the
 * host count as "to_host", store columns (CUDA: resident loads) as "column". */
typedef struct dkb_tp_profile_entry {
    const char *op;    /* "join", "group", ... (static) */
    int64_t calls;
    double seconds;    /* wall time, the backend's work included */
} dkb_tp_profile_entry;
int dkb_tp_profile_start(dkb_tp *tp);
void dkb_tp_profile_stop(dkb_tp *tp);
int dkb_tp_profile_read(const dkb_tp *tp, dkb_tp_profile_entry *out, int max);
void dkb_tp_profile_clear(dkb_tp *tp);

/* The GPU a CUDA context would use (device 0, or $CUDA_VISIBLE_DEVICES'
 * first): for reports and the hardware context of prompts. DKB_ENOENT with
 * a message when there is none or CUDA is not built. */
typedef struct dkb_tp_device_info {
    char name[256];        /* "NVIDIA H200" */
    int cc_major, cc_minor;/* compute capability */
    int sms;               /* streaming multiprocessors */
    int64_t mem_bytes;     /* global memory */
    int64_t l2_bytes;      /* L2 cache */
    int mem_bus_bits;      /* memory bus width (0 when unknown) */
    double mem_clock_khz;  /* memory clock (0 when unknown) */
} dkb_tp_device_info;
int dkb_tp_device_query(dkb_tp_device_info *out, dkb_error *err);
size_t dkb_tp_dtype_size(dkb_tp_dtype t);  /* bytes per element (STR: 8, offsets) */

/* ---- moving data in and out ---- */

/* A store column as a tensor (CPU: zero-copy view of the mapped file; CUDA:
 * the resident device copy). INT -> I32/I64, DECIMAL -> I64 scale 2,
 * DATE -> I32, DICT -> U8 with dict, TEXT -> STR. */
dkb_tensor *dkb_tp_column(dkb_tp *tp, const dkb_store_column *col);
/* A tensor of n elements copied from host memory (STR: data holds n + 1
 * int64 offsets starting at 0, immediately followed by the bytes; the
 * layout dkb_tp_host_copy returns). */
dkb_tensor *dkb_tp_from_host(dkb_tp *tp, dkb_tp_dtype t, int64_t n, const void *data);
/* A STR tensor of n strings copied from host memory: string i is
 * bytes[offsets[i] .. offsets[i + 1]) (offsets need not start at 0). */
dkb_tensor *dkb_tp_from_host_str(dkb_tp *tp, int64_t n, const int64_t *offsets, const char *bytes);
/* Copy a tensor's elements to host memory the caller owns (n * size bytes;
 * STR: n + 1 offsets, then dkb_tp_str_to_host for the bytes). 0 or error.
 * Every STR tensor's offsets start at 0. */
int dkb_tp_to_host(dkb_tp *tp, const dkb_tensor *a, void *dst);
/* Copy a STR tensor's bytes (offsets[n] of them) to host memory. 0 or error. */
int dkb_tp_str_to_host(dkb_tp *tp, const dkb_tensor *a, char *dst);
/* A host copy allocated from the context's arena (freed by reset); STR:
 * n + 1 offsets, then the bytes, then a NUL. */
void *dkb_tp_host_copy(dkb_tp *tp, const dkb_tensor *a);
/* Element i of a tensor, on the host (for finish steps and scalars); an
 * index outside [0, n) records DKB_ERANGE and gives 0. */
int64_t dkb_tp_get_i64(dkb_tp *tp, const dkb_tensor *a, int64_t i);   /* any integer dtype, raw
                                                                        * (scaled) value; ERANGE
                                                                        * beyond int64 */
double dkb_tp_get_f64(dkb_tp *tp, const dkb_tensor *a, int64_t i);    /* any numeric dtype,
                                                                        * divided by 10^scale */
__int128 dkb_tp_get_i128(dkb_tp *tp, const dkb_tensor *a, int64_t i); /* any integer dtype, raw */
/* New constant tensors (scale 0; set ->scale after, or use a scale-0 value
 * such as 0 that any scale aligns to). */
dkb_tensor *dkb_tp_full_i64(dkb_tp *tp, dkb_tp_dtype t, int64_t n, int64_t value);
dkb_tensor *dkb_tp_arange(dkb_tp *tp, int64_t n);   /* I64 0, 1, ..., n - 1 */

/* ---- elementwise ---- */

typedef enum { DKB_CMP_EQ = 0, DKB_CMP_NE, DKB_CMP_LT, DKB_CMP_LE, DKB_CMP_GT, DKB_CMP_GE } dkb_cmp;
typedef enum {
    DKB_OP_ADD = 0, DKB_OP_SUB, DKB_OP_MUL, /* integers: exact, result I64 (I128 if either is);
                                             * scales add for MUL; ADD/SUB (and MIN/MAX) scale
                                             * the lower-scale side up; a result beyond int64
                                             * fails with DKB_ERANGE (cast to I128 first) */
    DKB_OP_DIV,                             /* always F64 (values divided by 10^scale first) */
    DKB_OP_MIN, DKB_OP_MAX
} dkb_arith;

/* BOOL: a OP b (same length, any numeric dtypes; compared as values with
 * their scales applied, exactly for integers; F64 against an integer
 * compares doubles). */
dkb_tensor *dkb_tp_cmp(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, const dkb_tensor *b);
/* BOOL: a OP value, value an integer in a's units (for a DATE: days; for a
 * DECIMAL of scale 2: hundredths; for U8 codes: a code). */
dkb_tensor *dkb_tp_cmp_i64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, int64_t value);
/* BOOL: a / 10^scale OP value, in doubles (the division is correctly
 * rounded, so 7 hundredths equals the literal 0.07). */
dkb_tensor *dkb_tp_cmp_f64(dkb_tp *tp, const dkb_tensor *a, dkb_cmp op, double value);
/* BOOL: lo <= a <= hi (integers in a's units). */
dkb_tensor *dkb_tp_between(dkb_tp *tp, const dkb_tensor *a, int64_t lo, int64_t hi);
/* BOOL: a is one of values[0..n) (integers in a's units). */
dkb_tensor *dkb_tp_in_i64(dkb_tp *tp, const dkb_tensor *a, const int64_t *values, int n);
/* BOOL: lut[a[i]] for U8 codes (lut has a->dict->size entries, host memory;
 * codes must carry their dictionary: store columns and gathers/compresses of
 * them do; codes beyond the dictionary give false). */
dkb_tensor *dkb_tp_lookup_mask(dkb_tp *tp, const dkb_tensor *codes, const bool *lut);
dkb_tensor *dkb_tp_and(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b);
dkb_tensor *dkb_tp_or(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b);
dkb_tensor *dkb_tp_not(dkb_tp *tp, const dkb_tensor *a);
/* a OP b elementwise. With an F64 operand every op gives F64 (integers
 * divided by 10^scale first). */
dkb_tensor *dkb_tp_arith(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, const dkb_tensor *b);
/* a OP value, value an integer at scale `scale` (e.g. 100 at scale 2 = 1.00);
 * the common case 1 - discount is dkb_tp_rsub_i64(tp, 100, 2, disc). */
dkb_tensor *dkb_tp_arith_i64(dkb_tp *tp, const dkb_tensor *a, dkb_arith op, int64_t value, int scale);
/* value - a (value at scale `scale`). */
dkb_tensor *dkb_tp_rsub_i64(dkb_tp *tp, int64_t value, int scale, const dkb_tensor *a);
/* Convert: integers to F64 (divided by 10^scale), integer widths (scale
 * kept; a value that does not fit fails with DKB_ERANGE), BOOL to I64, any
 * numeric to BOOL (nonzero), F64 to integers (truncated toward zero,
 * scale 0). The same dtype gives a view. */
dkb_tensor *dkb_tp_cast(dkb_tp *tp, const dkb_tensor *a, dkb_tp_dtype to);
/* cond ? a : b (BOOL cond; a and b the same dtype and scale give that dtype;
 * otherwise values are aligned as arith does: I64 / I128 at the larger
 * scale, or F64). */
dkb_tensor *dkb_tp_where(dkb_tp *tp, const dkb_tensor *cond, const dkb_tensor *a, const dkb_tensor *b);
/* I32 year of DATE days. */
dkb_tensor *dkb_tp_year(dkb_tp *tp, const dkb_tensor *days);
/* I64 key combining integer columns: a * (b_max + 1) + b, for multi-column
 * join and group keys (b_max: an upper bound of b, b >= 0; a b outside
 * [0, b_max] or an int64 overflow fails with DKB_ERANGE). */
dkb_tensor *dkb_tp_pack2(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b, int64_t b_max);

/* ---- strings ---- */

/* SQL LIKE with % and _ (no escapes), byte-wise: _ is one byte, '' matches
 * only the empty string. */
/* On a dictionary: a host LUT of dict->size entries (evaluated once per
 * entry), for dkb_tp_lookup_mask. Allocated from the arena. */
bool *dkb_tp_like_dict(dkb_tp *tp, const dkb_tp_dict *dict, const char *pattern);
/* On free text: BOOL per row. */
dkb_tensor *dkb_tp_like(dkb_tp *tp, const dkb_tensor *str, const char *pattern);
/* Code of an exact dictionary entry, or -1 (host). */
int dkb_tp_dict_code(const dkb_tp_dict *dict, const char *s);
/* STR of the substrings [start, start + len) (0-based byte positions,
 * clipped to [0, length): a negative start keeps the part from 0; len <= 0
 * gives empty strings). */
dkb_tensor *dkb_tp_substr(dkb_tp *tp, const dkb_tensor *str, int start, int len);
/* I64 of each string parsed as a decimal integer (Q22's phone country code):
 * leading blanks, an optional sign, then digits up to the first non-digit
 * (none: 0); a value beyond int64 fails with DKB_ERANGE. */
dkb_tensor *dkb_tp_str_to_i64(dkb_tp *tp, const dkb_tensor *str);
/* I64 of each string of at most DKB_TP_STR_PACK_MAX (7) bytes packed into
 * one integer, in byte order: its bytes from the highest byte down, zero
 * padded, and its length in the lowest byte, the top bit flipped, so equal
 * strings give equal keys and keys compare (signed) as the strings do
 * (unsigned bytes, then length): a short
 * string's GROUP BY or join key without its bytes leaving the backend.
 * A longer string: with fits, *fits = false and NULL with no error (the
 * caller takes another way); without (fits NULL), DKB_ERANGE. */
#define DKB_TP_STR_PACK_MAX 7
dkb_tensor *dkb_tp_str_pack(dkb_tp *tp, const dkb_tensor *str, bool *fits);

/* ---- selection ---- */

/* The rows of a where mask is true (same length), in order. Works for STR. */
dkb_tensor *dkb_tp_compress(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *mask);
/* I64 positions where mask is true, in order. */
dkb_tensor *dkb_tp_nonzero(dkb_tp *tp, const dkb_tensor *mask);
/* a[idx[i]] for each i; idx I64 (or I32) in [0, a->n), or -1 giving `fill`
 * (numeric, in a's units) / the empty string (STR); any other index fails
 * with DKB_ERANGE. Works for STR; keeps scale and dictionary. */
dkb_tensor *dkb_tp_gather(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *idx, int64_t fill);
/* Number of true values of a mask (0 and a recorded error for a bad one). */
int64_t dkb_tp_count(dkb_tp *tp, const dkb_tensor *mask);

/* ---- joins (hash joins on integer keys of any width) ---- */

typedef enum {
    DKB_JOIN_INNER = 0, /* every matching pair */
    DKB_JOIN_LEFT,      /* every probe row; build index -1 where no match */
} dkb_join_kind;

typedef struct dkb_join_result {
    dkb_tensor *probe_idx;  /* I64 rows of the probe side */
    dkb_tensor *build_idx;  /* I64 rows of the build side (-1: no match, LEFT) */
} dkb_join_result;

/* Join probe keys against build keys (integer dtypes BOOL..I64, compared as
 * int64 values, widths may differ, scales ignored; duplicates allowed on
 * both sides). Pairs come out grouped by probe row, in probe order, and
 * for one probe row in ascending build row order. On failure both members
 * are NULL. */
dkb_join_result dkb_tp_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys,
                            dkb_join_kind kind);
/* BOOL per probe row: its key occurs among build keys (SEMI); negate for ANTI. */
dkb_tensor *dkb_tp_semi_join(dkb_tp *tp, const dkb_tensor *build_keys, const dkb_tensor *probe_keys);

/* ---- group-by and aggregation ---- */

typedef struct dkb_groups {
    dkb_tensor *group_id;   /* I64 per input row: its group, 0 .. ngroups - 1 */
    dkb_tensor *first_row;  /* I64 per group: the first input row of the group */
    int64_t ngroups;        /* groups numbered in order of first appearance */
} dkb_groups;

/* Group rows by equal values of keys[0..nkeys) (integer dtypes BOOL..I64,
 * equal lengths; nkeys >= 1). Gather a key through first_row to get group
 * keys. */
dkb_groups dkb_tp_group(dkb_tp *tp, const dkb_tensor *const *keys, int nkeys);

typedef enum {
    DKB_AGG_SUM = 0,  /* integers: I128 exact (scale kept); F64: F64 */
    DKB_AGG_COUNT,    /* I64: rows per group (values may be NULL) */
    DKB_AGG_MIN, DKB_AGG_MAX,  /* dtype, scale and dictionary kept */
    DKB_AGG_AVG,      /* F64 (values / 10^scale; integers: the exact sum divided) */
    DKB_AGG_COUNT_DISTINCT     /* I64: distinct values per group (integers BOOL..I64) */
} dkb_agg;

/* One aggregate per group. values has the input rows' length. */
dkb_tensor *dkb_tp_aggregate(dkb_tp *tp, const dkb_groups *g, dkb_agg agg, const dkb_tensor *values);
/* The same over all rows as one group: a 1-element tensor (COUNT of an
 * empty input is 0; SUM of an empty input is 0; MIN/MAX/AVG of empty: n = 0). */
dkb_tensor *dkb_tp_reduce(dkb_tp *tp, dkb_agg agg, const dkb_tensor *values);

/* ---- ordering ---- */

typedef struct dkb_sort_key {
    const dkb_tensor *key;  /* any dtype: integers (I128 too) and F64 by value
                             * (scales ignored), STR byte-wise (a prefix first) */
    bool desc;
} dkb_sort_key;

/* I64 permutation that orders the rows by keys[0], then keys[1], ...;
 * stable (ties keep input order). */
dkb_tensor *dkb_tp_sort(dkb_tp *tp, const dkb_sort_key *keys, int nkeys);
/* The first k rows of that order (fewer if n < k), as I64 row numbers:
 * exactly the first k of dkb_tp_sort, ties included. */
dkb_tensor *dkb_tp_topk(dkb_tp *tp, const dkb_sort_key *keys, int nkeys, int64_t k);

#ifdef __cplusplus
}
#endif

#endif
