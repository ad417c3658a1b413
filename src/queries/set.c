/* set.c: named sets of tensors and host scalars, the calling convention
 * between a plan's prepare, core and finish steps. Failures go into the
 * TensorPlan context's sticky error, so plans check once at the end. */
#include <string.h>

#include "dkb/query.h"

static int find(const char *const *names, int n, const char *name) {
    for (int i = 0; i < n; i++)
        if (names[i] && !strcmp(names[i], name)) return i;
    return -1;
}

void dkb_set_put(dkb_tp *tp, dkb_tensor_set *s, const char *name, dkb_tensor *t) {
    if (!s || !name) {
        if (tp) dkb_tp_fail(tp, DKB_EINVAL, "tensor set: put without a set or a name");
        return;
    }
    int i = find(s->name, s->n, name);
    if (i < 0) {
        if (s->n >= DKB_SET_MAX) {
            if (tp) dkb_tp_fail(tp, DKB_EINVAL, "tensor set full (%d tensors) putting '%s'", DKB_SET_MAX, name);
            return;
        }
        i = s->n++;
        s->name[i] = name;
    }
    s->t[i] = t;
}

/* The scalar slot for name, added when missing (-1 when the set is full). */
static int scalar_slot(dkb_tp *tp, dkb_tensor_set *s, const char *name) {
    if (!s || !name) {
        if (tp) dkb_tp_fail(tp, DKB_EINVAL, "tensor set: put without a set or a name");
        return -1;
    }
    int i = find(s->sname, s->nscalar, name);
    if (i >= 0) return i;
    if (s->nscalar >= DKB_SET_MAX) {
        if (tp) dkb_tp_fail(tp, DKB_EINVAL, "tensor set full (%d scalars) putting '%s'", DKB_SET_MAX, name);
        return -1;
    }
    i = s->nscalar++;
    s->sname[i] = name;
    s->ival[i] = 0;
    s->fval[i] = 0;
    s->sval[i] = NULL;
    return i;
}

void dkb_set_put_i64(dkb_tp *tp, dkb_tensor_set *s, const char *name, int64_t v) {
    int i = scalar_slot(tp, s, name);
    if (i >= 0) s->ival[i] = v, s->fval[i] = (double)v, s->sval[i] = NULL;
}

void dkb_set_put_f64(dkb_tp *tp, dkb_tensor_set *s, const char *name, double v) {
    int i = scalar_slot(tp, s, name);
    if (i >= 0) s->fval[i] = v, s->ival[i] = 0, s->sval[i] = NULL;
}

void dkb_set_put_str(dkb_tp *tp, dkb_tensor_set *s, const char *name, const char *v) {
    int i = scalar_slot(tp, s, name);
    if (i < 0) return;
    s->sval[i] = NULL;
    if (!v) {
        dkb_tp_fail(tp, DKB_EINVAL, "tensor set: string scalar '%s' put as NULL", name);
        return;
    }
    /* A copy in the context's arena (host memory, freed by dkb_tp_reset). */
    dkb_tensor *bytes = dkb_tp_from_host(tp, DKB_TP_U8, (int64_t)strlen(v) + 1, v);
    s->sval[i] = bytes ? dkb_tp_host_copy(tp, bytes) : NULL;
}

dkb_tensor *dkb_set_get(dkb_tp *tp, const dkb_tensor_set *s, const char *name) {
    int i = s && name ? find(s->name, s->n, name) : -1;
    if (i < 0) {
        if (tp) dkb_tp_fail(tp, DKB_EINVAL, "tensor set has no tensor '%s'", name ? name : "(null)");
        return NULL;
    }
    return s->t[i]; /* NULL when an earlier operation failed: its error stands */
}

/* The scalar slot for name, or -1 with tp failed. */
static int get_scalar(dkb_tp *tp, const dkb_tensor_set *s, const char *name) {
    int i = s && name ? find(s->sname, s->nscalar, name) : -1;
    if (i < 0 && tp) dkb_tp_fail(tp, DKB_EINVAL, "tensor set has no scalar '%s'", name ? name : "(null)");
    return i;
}

int64_t dkb_set_get_i64(dkb_tp *tp, const dkb_tensor_set *s, const char *name) {
    int i = get_scalar(tp, s, name);
    return i < 0 ? 0 : s->ival[i];
}

double dkb_set_get_f64(dkb_tp *tp, const dkb_tensor_set *s, const char *name) {
    int i = get_scalar(tp, s, name);
    return i < 0 ? 0 : s->fval[i];
}

const char *dkb_set_get_str(dkb_tp *tp, const dkb_tensor_set *s, const char *name) {
    int i = get_scalar(tp, s, name);
    if (i < 0) return NULL;
    if (!s->sval[i] && tp && !dkb_tp_status(tp, NULL))
        dkb_tp_fail(tp, DKB_EINVAL, "tensor set scalar '%s' is not a string", name);
    return s->sval[i];
}

dkb_tensor *dkb_set_put_column(dkb_tp *tp, dkb_tensor_set *s, const dkb_store *db, const char *table,
                               const char *column) {
    const dkb_store_table *t = db && table ? dkb_store_table_find(db, table) : NULL;
    if (!t)
        return dkb_tp_fail(tp, DKB_ENOENT, "store %s has no table %s", db ? dkb_store_dir(db) : "(none)",
                           table ? table : "(null)");
    const dkb_store_column *c = column ? dkb_store_table_column(t, column) : NULL;
    if (!c)
        return dkb_tp_fail(tp, DKB_ENOENT, "store %s has no column %s.%s", dkb_store_dir(db), table,
                           column ? column : "(null)");
    dkb_tensor *x = dkb_tp_column(tp, c);
    dkb_set_put(tp, s, dkb_column_name(c), x);
    return x;
}
