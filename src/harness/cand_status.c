/* cand_status.c: the text the report gives for a candidate's nonzero
 * return value: the DKB_CAND_E* code's name and meaning from candidate.h's
 * table, or the bare number for any other value. */
#include <stdio.h>

#include "harness/adapter.h"

typedef struct cand_status {
    int value;
    const char *name, *text;
} cand_status;

static const cand_status STATUS[] = {
#define DKB__CAND_STATUS_ROW(name, value, text) {value, #name, text},
    DKB_CAND_STATUS_MAP(DKB__CAND_STATUS_ROW)
#undef DKB__CAND_STATUS_ROW
};

const char *dkb__cand_status_name(int rc) {
    for (size_t i = 0; i < sizeof STATUS / sizeof STATUS[0]; i++)
        if (STATUS[i].value == rc) return STATUS[i].name;
    return NULL;
}

const char *dkb__cand_status_text(int rc, char *buf, size_t n) {
    if (!buf || !n) return "";
    for (size_t i = 0; i < sizeof STATUS / sizeof STATUS[0]; i++)
        if (STATUS[i].value == rc && rc != DKB_CAND_OK) {
            snprintf(buf, n, "returned %d (%s: %s)", rc, STATUS[i].name, STATUS[i].text);
            return buf;
        }
    snprintf(buf, n, "returned %d", rc);
    return buf;
}
