/* registry.c: the table of the 22 TPC-H query plans (src/queries/qNN.c,
 * each defining `const dkb_query dkb__qNN`), looked up by number or name.
 * The table references every plan, so every plan is linked: a build
 * without one of them fails to link. */
#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "common/countof.h"  // defines: DKB_COUNTOF
#include "dkb/query.h"

extern const dkb_query dkb__q01, dkb__q02, dkb__q03, dkb__q04, dkb__q05, dkb__q06, dkb__q07, dkb__q08, dkb__q09,
    dkb__q10, dkb__q11, dkb__q12, dkb__q13, dkb__q14, dkb__q15, dkb__q16, dkb__q17, dkb__q18, dkb__q19, dkb__q20,
    dkb__q21, dkb__q22;

/* queries[n - 1] is query n */
static const dkb_query *const queries[] = {
    &dkb__q01, &dkb__q02, &dkb__q03, &dkb__q04, &dkb__q05, &dkb__q06, &dkb__q07, &dkb__q08,
    &dkb__q09, &dkb__q10, &dkb__q11, &dkb__q12, &dkb__q13, &dkb__q14, &dkb__q15, &dkb__q16,
    &dkb__q17, &dkb__q18, &dkb__q19, &dkb__q20, &dkb__q21, &dkb__q22,
};
_Static_assert(DKB_COUNTOF(queries) == DKB_NQUERIES, "one plan per TPC-H query");

const dkb_query *dkb_query_get(int number) {
    if (number < 1 || number > DKB_NQUERIES) return NULL;
    const dkb_query *q = queries[number - 1];
    assert(q->number == number);   /* the table is in query order */
    return q;
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
