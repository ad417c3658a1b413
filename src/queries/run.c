/* run.c: run one query's baseline plan: check the parameters, prepare the
 * inputs, compute the core, finish the result; each step's failure (its
 * own return code or the context's sticky error) reported with the query
 * and the step. */
#include <string.h>

#include "dkb/query.h"

/* Turn a step's outcome into 0 or an error "qNN step: message". */
static int step_status(const dkb_query *q, dkb_tp *tp, const char *step, int rc, dkb_error *err) {
    dkb_error tperr = {0};
    int st = dkb_tp_status(tp, &tperr);
    if (!rc && !st) return 0;
    if (st) return dkb_fail(err, st, "%s %s: %s", q->name, step, tperr.msg[0] ? tperr.msg : dkb_strerror(st));
    return dkb_fail(err, rc, "%s %s: failed (%s)", q->name, step, dkb_err_name(rc));
}

int dkb_query_run(const dkb_query *q, dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_result *res,
                  dkb_error *err) {
    if (!q || !tp || !db || !p || !res) return dkb_fail(err, DKB_EINVAL, "query run: missing argument");
    if (!q->prepare || !q->core || !q->finish)
        return dkb_fail(err, DKB_EINTERNAL, "%s: the plan lacks a step", q->name);
    int rc;
    if (q->check && (rc = q->check(p, err))) {
        if (err && !err->msg[0]) dkb_fail(err, rc, "%s: parameters rejected", q->name);
        return rc;
    }
    dkb_tensor_set in, out;
    memset(&in, 0, sizeof in);
    memset(&out, 0, sizeof out);
    if ((rc = step_status(q, tp, "prepare", q->prepare(tp, db, p, &in), err))) return rc;
    if ((rc = step_status(q, tp, "core", q->core(tp, &in, &out), err))) return rc;
    rc = step_status(q, tp, "finish", q->finish(tp, &out, p, res), err);
    if (!rc && res->nbad)
        rc = dkb_fail(err, DKB_EINTERNAL, "%s finish: %lld bad result cell write%s (first: %s)", q->name,
                      (long long)res->nbad, res->nbad == 1 ? "" : "s", res->bad);
    if (rc) dkb_result_free(res);
    return rc;
}
