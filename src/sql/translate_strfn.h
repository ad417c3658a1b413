/* translate_strfn.h: string functions for the translator (internal):
 * LIKE, ILIKE, LIKE ... ESCAPE, prefix/suffix/contains, substring (a start
 * from 1, a length from 0), left/right, length, upper/lower, trim, reverse,
 * concat, replace, strpos, and numbers or dates formatted as text. A
 * dictionary-coded argument is evaluated once per dictionary entry (the
 * result is a new sorted dictionary, or a lookup table of booleans or
 * integers over the codes); free text row by row (LIKE through TensorPlan's
 * dkb_tp_like, the rest on the host). */
#ifndef DKB_SQL_TRANSLATE_STRFN_H
#define DKB_SQL_TRANSLATE_STRFN_H

#include "sql/translate_internal.h"

/* True for the names tr_strfn handles. */
bool tr_strfn_known(const char *name);
/* name(v[0..k)) over n rows, DuckDB's result type rt; node for messages. */
bool tr_strfn(tr_ctx *x, const char *name, const tr_val *v, int k, tr_type rt, int64_t n, const cJSON *node,
              tr_val *out);
/* CAST(c AS VARCHAR) of an exact number or a date column. */
bool tr_strfn_format(tr_ctx *x, const tr_col *c, int64_t n, tr_col *out);

#endif
