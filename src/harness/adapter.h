/* adapter.h: TensorPlan sets, the store, parameters and results <-> the
 * candidate ABI (dkb/candidate.h), for the worker.
 *
 * Inputs a candidate gets (the database view and parameters of full mode,
 * the prepared set of core mode, with every descriptor, name, dictionary
 * and copied vector) live in a read-only arena: anonymous mappings filled
 * by the harness and then sealed PROT_READ, so a candidate's write faults
 * (the worker's SIGSEGV handler names it WROTE_INPUT). Store columns are
 * not copied: the store's own mappings are already read-only.
 *
 * Outputs are harness-owned buffers: the descriptors the candidate sees are
 * rewritten from the harness's copy before every call, the buffers are
 * poisoned, and after the call only the counts the candidate set (n,
 * nbytes, nrows) are read from the descriptors: a pointer it changed is
 * ignored. Collecting validates the counts and the string offsets before
 * anything reads the data. */
#ifndef DKB_HARNESS_ADAPTER_H
#define DKB_HARNESS_ADAPTER_H

#include <stddef.h>
#include <stdint.h>

#include "dkb/candidate.h"
#include "dkb/query.h"
#include "dkb/result.h"
#include "dkb/store.h"
#include "harness/harness.h"

/* ---- read-only arena ---- */

typedef struct dkb_ro_chunk {
    char *base;
    size_t size, used;
} dkb_ro_chunk;

typedef struct dkb_ro_arena {
    dkb_ro_chunk *chunks;
    int n, cap;
    int sealed;
} dkb_ro_arena;

/* bytes (64-byte aligned, zeroed) from the arena; NULL when out of memory
 * or sealed. An empty arena needs no init beyond zeroing. */
void *dkb__ro_alloc(dkb_ro_arena *a, size_t bytes);
/* A copy of s (NUL-terminated) / of n bytes. */
char *dkb__ro_strdup(dkb_ro_arena *a, const char *s);
void *dkb__ro_memdup(dkb_ro_arena *a, const void *p, size_t n);
/* Make every chunk read-only. 0 or an error (mprotect failed). */
int dkb__ro_seal(dkb_ro_arena *a, dkb_error *err);
/* Unmap everything (accepts a zeroed arena). */
void dkb__ro_free(dkb_ro_arena *a);

/* An address range [lo, hi). */
typedef struct dkb_range {
    uintptr_t lo, hi;
} dkb_range;

/* Append the arena's chunks / the store's file mappings to r (at most max
 * in all); returns the new count. */
int dkb__ro_ranges(const dkb_ro_arena *a, dkb_range *r, int n, int max);
int dkb__store_ranges(const dkb_store *s, dkb_range *r, int n, int max);

/* Store bytes of the columns whose data the set's tensors are views of
 * (data, codes, offsets and text files; dictionaries not counted). */
uint64_t dkb__set_store_bytes(const dkb_tensor_set *in, const dkb_store *s);
/* The bytes any correct implementation must read: of the store columns the
 * set holds (matched by name, so device views count too), those of the table
 * with the most rows, and of them the smallest column (a query reads at
 * least its driving table's filter column whole). 0 when none. */
uint64_t dkb__set_store_must_read(const dkb_tensor_set *in, const dkb_store *s);

/* ---- full mode: database, parameters, result ---- */

/* The whole store as a candidate database (every table, every column, in
 * store order), built in ro. *out points into ro. */
int dkb__adapt_db(const dkb_store *s, dkb_ro_arena *ro, const dkb_cand_db **out, dkb_error *err);
/* Parameters in q->params order, built in ro. */
int dkb__adapt_params(const dkb_params *p, dkb_ro_arena *ro, const dkb_cand_params **out, dkb_error *err);

/* A result the candidate fills: columns as `like`'s (names, types,
 * scales), cap rows, bytes_cap characters per STRING column. */
typedef struct dkb_cand_out_result {
    dkb_cand_result res;       /* what the candidate gets */
    dkb_cand_res_col *cols;    /* the descriptors it gets (rewritten before every call) */
    dkb_cand_res_col *saved;   /* the harness's copy */
    char **names;              /* ncols: the column names as declared (the
                                * copies the candidate gets are writable
                                * memory, put back before every call) */
    int ncols;
    int64_t cap;
} dkb_cand_out_result;

/* Declare o from like. 0, DKB_ENOMEM, DKB_EINVAL (bad like). */
int dkb__out_result_init(dkb_cand_out_result *o, const dkb_result *like, int64_t cap, int64_t bytes_cap,
                         dkb_error *err);
void dkb__out_result_free(dkb_cand_out_result *o);   /* accepts a zeroed one */
/* Before a call: descriptors rewritten, nrows = -1, every value buffer
 * filled with byte `poison`, is_null zeroed. */
void dkb__out_result_reset(dkb_cand_out_result *o, uint8_t poison);
/* After a call: the candidate's rows as a result with like's columns and
 * ORDER BY (*got zeroed on entry; on success the caller frees it, on
 * failure it is left zeroed). 0 when collected;
 * else *v = OUTPUT_LIMIT (nrows > cap, strings beyond bytes_cap) or
 * WRONG_ANSWER (nrows < 0, bad string offsets) with a message in msg, and
 * a non-zero return; DKB_ENOMEM with *v = HARNESS_ERROR. */
int dkb__out_result_collect(const dkb_cand_out_result *o, const dkb_result *like, dkb_result *got, dkb_verdict *v,
                            char *msg, size_t n);

/* ---- core mode: prepared inputs, core outputs ---- */

/* The prepared set as a candidate input set: vectors (store views shared,
 * others copied into ro), scalars, dictionaries. *out points into ro. */
int dkb__adapt_inputs(const dkb_tensor_set *in, const dkb_store *s, dkb_ro_arena *ro, const dkb_cand_set **out,
                      dkb_error *err);

/* The same for a set computed by a CUDA context: every vector's data (and
 * STR bytes) is device memory, shared as it is (never copied); the
 * descriptors, names, scalars and dictionaries (host memory) go into ro. */
int dkb__adapt_inputs_device(const dkb_tensor_set *in, dkb_ro_arena *ro, const dkb_cand_set **out, dkb_error *err);

/* What one core output looks like (from the baseline's core runs). */
typedef struct dkb_out_like {
    const char *name;          /* static (the plan's) */
    dkb_tp_dtype dtype;
    int scale;
    const dkb_tp_dict *dict;   /* U8: the dictionary (lives in the prep context) */
    int64_t max_n, max_bytes;  /* largest over the seeds */
} dkb_out_like;

/* Merge the outputs of one baseline core run into likes (first call: *n
 * = 0). Fails (DKB_EINVAL) when a run's outputs differ in names, types or
 * scales from an earlier one's, or the set holds scalars. */
int dkb__out_likes_add(dkb_out_like *likes, int *n, const dkb_tensor_set *out, dkb_error *err);

typedef struct dkb_cand_out_set {
    dkb_cand_set set;          /* what the candidate gets */
    dkb_cand_vec *vec;         /* its descriptors (rewritten before every call) */
    dkb_cand_vec *saved;       /* the harness's copy */
    char **names;              /* n: the output names as declared (put back
                                * into the candidate's copies before every call) */
    dkb_out_like *likes;       /* copied */
    int n;
    dkb_tensor *t;             /* n tensor headers for collect */
} dkb_cand_out_set;

/* Outputs as the likes: cap = 2 * max_n + 64 elements, bytes_cap = 2 *
 * max_bytes + 64 characters. */
int dkb__out_set_init(dkb_cand_out_set *o, const dkb_out_like *likes, int n, dkb_error *err);
void dkb__out_set_free(dkb_cand_out_set *o);
void dkb__out_set_reset(dkb_cand_out_set *o, uint8_t poison);
/* After a call: the outputs as tensors (headers in o, data in o's
 * buffers) put into *out under their names, ready for the baseline's
 * finish. 0, else *v (OUTPUT_LIMIT: n > cap or strings beyond bytes_cap;
 * WRONG_ANSWER: n < 0, bad offsets, a BOOL not 0/1, a code beyond its
 * dictionary) with msg and a non-zero return. */
int dkb__out_set_collect(dkb_cand_out_set *o, dkb_tensor_set *out, dkb_verdict *v, char *msg, size_t n);

/* ---- return codes (cand_status.c) ---- */

/* A candidate's nonzero return as the report gives it, written to buf (n
 * bytes) and returned: "returned 4 (DKB_CAND_ECAP: an output is over its
 * cap)" for a DKB_CAND_E* code of candidate.h, "returned 17" for any other
 * value. */
const char *dkb__cand_status_text(int rc, char *buf, size_t n);
/* "DKB_CAND_ECAP" for a code of candidate.h's table, else NULL. */
const char *dkb__cand_status_name(int rc);

#endif
