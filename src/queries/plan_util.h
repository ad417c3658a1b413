/* plan_util.h: helpers the 22 baseline plans (q01.c .. q22.c) share
 * (internal): loading store columns into the input set, turning dictionary
 * strings into codes or LIKE lookup tables, putting and fetching the named
 * core outputs, and writing dictionary codes, strings and single aggregate
 * values into the result table.
 *
 * Only logic that is the same in every plan that uses it lives here; what
 * a query computes stays in its own file. Helpers that can fail record the
 * error in tp (sticky) or return a DKB_* code; `query` ("q02") prefixes
 * their messages. */
#ifndef DKB_QUERIES_PLAN_UTIL_H
#define DKB_QUERIES_PLAN_UTIL_H

#include <stdint.h>

#include "dkb/query.h"  // defines: dkb_tp, dkb_tensor, dkb_tensor_set, dkb_store, dkb_result

/* ---- prepare ---- */

/* Put store columns table.names[0..n) into `in` under their own names
 * (dkb_set_put_column: a missing table or column fails tp). */
void dkb__plan_put_columns(dkb_tp *tp, const dkb_store *db, dkb_tensor_set *in, const char *table,
                           const char *const *names, int n);

/* The code of s in the dictionary of column `name` of `in`, for a value
 * the query requires to occur (Q02, Q03, Q05, Q07, Q08, Q11: a region,
 * segment or nation name their checks have accepted): when s does not
 * occur, or the column has no dictionary, fails tp with DKB_EINVAL
 * "QUERY: 'S' does not occur in NAME" and returns -1. -1 also when `name`
 * is not in the set (dkb_set_get has failed tp). */
int64_t dkb__plan_code_required(dkb_tp *tp, const char *query, const dkb_tensor_set *in, const char *name,
                                const char *s);

/* The code of s in the dictionary of column `name` of `in`, or -1 when s
 * does not occur: an equality with -1 matches no row, as SQL requires for
 * a constant the data lacks (Q12, Q16, Q17, Q19..Q21; e.g. Q19's
 * 'AIR REG'). A column without a dictionary fails tp with DKB_EINVAL
 * "QUERY: NAME is not dictionary-coded" and gives -1; a name not in the
 * set gives -1 (dkb_set_get has failed tp). */
int64_t dkb__plan_code_or_none(dkb_tp *tp, const char *query, const dkb_tensor_set *in, const char *name,
                               const char *s);

/* LIKE `pattern` evaluated once per entry of the dictionary of column
 * `name` of `in`, put into `in` as `lut`: a BOOL tensor over the codes
 * (for dkb__plan_lut_mask in core). A column without a dictionary fails tp
 * with DKB_EINVAL "QUERY: NAME is not dictionary-coded"; nothing is put
 * then, nor when `name` is not in the set or the table cannot be made
 * (tp failed). */
void dkb__plan_put_like_lut(dkb_tp *tp, const char *query, dkb_tensor_set *in, const char *name,
                            const char *pattern, const char *lut);

/* ---- core ---- */

/* The BOOL mask of the rows of dictionary-coded `codes` whose code is true
 * in the lookup table `lut` of `in` (dkb__plan_put_like_lut); NULL (tp
 * failed) when the table is missing. */
dkb_tensor *dkb__plan_lut_mask(dkb_tp *tp, const dkb_tensor_set *in, const char *lut, const dkb_tensor *codes);

/* Put cols[i] into `out` as names[i], i in [0, n). */
void dkb__plan_put_outputs(dkb_tp *tp, dkb_tensor_set *out, const char *const *names, dkb_tensor *const *cols,
                           int n);

/* Put cols[i] gathered by the row indices `idx` (a sort permutation or a
 * top-k) into `out` as names[i], i in [0, n). */
void dkb__plan_put_gathered(dkb_tp *tp, dkb_tensor_set *out, const char *const *names, dkb_tensor *const *cols,
                            int n, const dkb_tensor *idx);

/* Put the one-element aggregate `value` into `out` as `name`, or an empty
 * tensor when `over`, the rows it aggregates, is empty or NULL: an
 * aggregate over no rows is SQL NULL (dkb__plan_finish_single writes it). */
void dkb__plan_put_aggregate(dkb_tp *tp, dkb_tensor_set *out, const char *name, dkb_tensor *value,
                             const dkb_tensor *over);

/* ---- finish ---- */

/* Fetch the core outputs names[0..n) of `out` into t[0..n); 0, or tp's
 * error code when one is missing (or tp failed before). */
int dkb__plan_get_outputs(dkb_tp *tp, const dkb_tensor_set *out, const char *const *names, int n,
                          dkb_tensor **t);

/* Cell (row, col) of res from element i of dictionary-coded tensor
 * `codes`: its dictionary string. A code outside the dictionary (or no
 * dictionary) fails tp with DKB_EINTERNAL "QUERY: code C outside its
 * dictionary" and returns DKB_EINTERNAL; else dkb_result_set_str's code. */
int dkb__plan_set_code(dkb_tp *tp, const char *query, dkb_result *res, int64_t row, int col,
                       const dkb_tensor *codes, int64_t i);

/* Column col of res, rows 0 .. s->n - 1 (already added), from the strings
 * of STR tensor s (one host copy: n + 1 offsets, then the bytes). 0; tp's
 * error code when the copy fails; else the code of the first failed
 * dkb_result_set_str: DKB_ENOMEM, or DKB_EINVAL for a row that was not
 * added (s longer than the result, e.g. a core candidate's output longer
 * than the first). */
int dkb__plan_set_texts(dkb_tp *tp, dkb_result *res, int col, const dkb_tensor *s);

/* The whole finish of a query whose answer is one aggregate value (Q06,
 * Q14, Q17, Q19): a one-column, one-row result named `name` from core
 * output `name` (dkb__plan_put_aggregate): SQL NULL when it is empty, else
 * its element 0. type DKB_RES_DECIMAL: an exact value at the tensor's
 * scale; DKB_RES_FLOAT: an F64 printed at scale 6 (another type is
 * DKB_EINTERNAL). 0 or an error code. */
int dkb__plan_finish_single(dkb_tp *tp, const dkb_tensor_set *out, dkb_result *res, const char *name,
                            dkb_res_type type);

#endif
