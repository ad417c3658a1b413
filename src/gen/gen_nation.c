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
        dkb_strw w = dkb__strw(b, N_NAME);
        dkb__strw_put(&w, row, name, strlen(name));
        dkb__strw_done(b, N_NAME, &w);
        b->col[N_REGION].v[row] = dkb__nation_region[i];
        uint32_t x = cmnt.row;
        w = dkb__strw(b, N_COMMENT);
        dkb__strw_commit(&w, row, dkb__gen_text(g, &x, CMNT_MIN, CMNT_MAX, dkb__strw_tail(&w)));
        dkb__strw_done(b, N_COMMENT, &w);
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
        dkb_strw w = dkb__strw(b, R_NAME);
        dkb__strw_put(&w, row, name, strlen(name));
        dkb__strw_done(b, R_NAME, &w);
        uint32_t x = cmnt.row;
        w = dkb__strw(b, R_COMMENT);
        dkb__strw_commit(&w, row, dkb__gen_text(g, &x, CMNT_MIN, CMNT_MAX, dkb__strw_tail(&w)));
        dkb__strw_done(b, R_COMMENT, &w);
        dkb__stream_next_row(&cmnt);
    }
    b->nrows = row;
    return 0;
}
