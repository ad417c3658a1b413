/* buf.c: the growable byte buffer of tbl.h. */
#include <stdint.h>
#include <stdlib.h>

#include "dkb/error.h"
#include "tbl/tbl.h"

int dkb__buf_reserve(dkb_buf *buf, size_t more) {
    if (more > SIZE_MAX - buf->len) return DKB_ENOMEM;
    size_t need = buf->len + more;
    if (need <= buf->cap) return 0;
    size_t cap = buf->cap ? buf->cap : 4096;
    while (cap < need) cap = cap > SIZE_MAX / 2 ? need : cap * 2;
    char *p = realloc(buf->data, cap);
    if (!p) return DKB_ENOMEM;
    buf->data = p;
    buf->cap = cap;
    return 0;
}

void dkb__buf_free(dkb_buf *buf) {
    if (!buf) return;
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}
