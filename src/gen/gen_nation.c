/* gen_nation.c: the nation and region tables (fixed rows, generated text). */
#include "gen/dists.h"
#include "gen/gen_internal.h"

enum { N_KEY, N_NAME, N_REGION, N_COMMENT };
enum { R_KEY, R_NAME, R_COMMENT };

#define CMNT_MIN DKB_TEXT_MIN(72)
#define CMNT_MAX DKB_TEXT_MAX(72)

int dkb__gen_nation(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    if ((rc = dkb__gen_reserve(b, N_NAME, (size_t)count * 16)) ||
        (rc = dkb__gen_reserve(b, N_COMMENT, (size_t)count * CMNT_MAX)))
        return rc;
    dkb_stream cmnt;
    dkb__stream_at(&cmnt, DKB_S_N_CMNT, first);
    size_t row = b->nrows;
    for (int64_t i = first; i < first + count; i++, row++) {
        b->col[N_KEY].v[row] = i;
        const char *name = dkb__nation_names[i];
        dkb__col_put(b, N_NAME, row, name, strlen(name));
        b->col[N_REGION].v[row] = dkb__nation_region[i];
        uint32_t x = cmnt.row;
        size_t n = dkb__gen_text(g, &x, CMNT_MIN, CMNT_MAX, dkb__col_end(b, N_COMMENT));
        dkb__col_commit(b, N_COMMENT, row, n);
        dkb__stream_next_row(&cmnt);
    }
    b->nrows = row;
    return 0;
}

int dkb__gen_region(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    if ((rc = dkb__gen_reserve(b, R_NAME, (size_t)count * 16)) ||
        (rc = dkb__gen_reserve(b, R_COMMENT, (size_t)count * CMNT_MAX)))
        return rc;
    dkb_stream cmnt;
    dkb__stream_at(&cmnt, DKB_S_R_CMNT, first);
    size_t row = b->nrows;
    for (int64_t i = first; i < first + count; i++, row++) {
        b->col[R_KEY].v[row] = i;
        const char *name = dkb__region_names[i];
        dkb__col_put(b, R_NAME, row, name, strlen(name));
        uint32_t x = cmnt.row;
        size_t n = dkb__gen_text(g, &x, CMNT_MIN, CMNT_MAX, dkb__col_end(b, R_COMMENT));
        dkb__col_commit(b, R_COMMENT, row, n);
        dkb__stream_next_row(&cmnt);
    }
    b->nrows = row;
    return 0;
}
