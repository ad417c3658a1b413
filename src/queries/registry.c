/* registry.c: the table of the 22 TPC-H query plans (src/queries/qNN.c,
 * each defining `const dkb_query dkb__qNN`), looked up by number or name.
 *
 * DKB__PLAN_REF marks how the plans are referenced. Weak references let
 * the library link while plan files are missing (a missing plan reads as
 * "not available"), but a weak reference never pulls an object out of a
 * static library, so with weak references no plan is linked unless
 * something else references it. All 22 plans exist now, so the references
 * are strong; define DKB__PLAN_REF as __attribute__((weak)) to go back. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "dkb/query.h"

#ifndef DKB__PLAN_REF
#define DKB__PLAN_REF
#endif

extern const dkb_query dkb__q01 DKB__PLAN_REF, dkb__q02 DKB__PLAN_REF, dkb__q03 DKB__PLAN_REF,
    dkb__q04 DKB__PLAN_REF, dkb__q05 DKB__PLAN_REF, dkb__q06 DKB__PLAN_REF, dkb__q07 DKB__PLAN_REF,
    dkb__q08 DKB__PLAN_REF, dkb__q09 DKB__PLAN_REF, dkb__q10 DKB__PLAN_REF, dkb__q11 DKB__PLAN_REF,
    dkb__q12 DKB__PLAN_REF, dkb__q13 DKB__PLAN_REF, dkb__q14 DKB__PLAN_REF, dkb__q15 DKB__PLAN_REF,
    dkb__q16 DKB__PLAN_REF, dkb__q17 DKB__PLAN_REF, dkb__q18 DKB__PLAN_REF, dkb__q19 DKB__PLAN_REF,
    dkb__q20 DKB__PLAN_REF, dkb__q21 DKB__PLAN_REF, dkb__q22 DKB__PLAN_REF;

static const dkb_query *const queries[DKB_NQUERIES] = {
    &dkb__q01, &dkb__q02, &dkb__q03, &dkb__q04, &dkb__q05, &dkb__q06, &dkb__q07, &dkb__q08,
    &dkb__q09, &dkb__q10, &dkb__q11, &dkb__q12, &dkb__q13, &dkb__q14, &dkb__q15, &dkb__q16,
    &dkb__q17, &dkb__q18, &dkb__q19, &dkb__q20, &dkb__q21, &dkb__q22,
};

const dkb_query *dkb_query_get(int number) {
    if (number < 1 || number > DKB_NQUERIES) return NULL;
    const dkb_query *q = queries[number - 1];
    return q && q->number == number ? q : NULL;
}

int dkb_query_number(const char *name) {
    if (!name) return 0;
    const char *s = name + (name[0] == 'q' || name[0] == 'Q');
    size_t len = strlen(s);
    if (len < 1 || len > 2 || !isdigit((unsigned char)s[0]) || (len == 2 && !isdigit((unsigned char)s[1])))
        return 0;
    int n = atoi(s);
    return n >= 1 && n <= DKB_NQUERIES ? n : 0;
}

const dkb_query *dkb_query_find(const char *name) { return dkb_query_get(dkb_query_number(name)); }
