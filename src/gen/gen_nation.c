/* gen_nation.c: the nation and region tables (fixed rows, generated text). */
#include "gen/dists.h"
#include "gen/gen_internal.h"

enum { N_KEY, N_NAME, N_REGION, N_COMMENT };
enum { R_KEY, R_NAME, R_COMMENT };

#define CMNT_MIN DKB_TEXT_MIN(72)
#define CMNT_MAX DKB_TEXT_MAX(72)

/* Rows [first, first + count) of a fixed table: key, name from `names`, then
 * (nation only, region_c >= 0) the nation's region, and a comment from
 * stream `stream` in column cmnt_c. */
static int fixed_rows(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b,
                      const char *const *names, int key_c, int name_c, int region_c, int cmnt_c,
                      int stream) {
    int rc;
    if ((rc = dkb__gen_reserve(b, name_c, (size_t)count * 16)) ||
        (rc = dkb__gen_reserve(b, cmnt_c, (size_t)count * CMNT_MAX)))
        return rc;
    dkb_stream cmnt;
    dkb__stream_at(&cmnt, stream, first);
    dkb_strw name_w = dkb__strw(b, name_c), cmnt_w = dkb__strw(b, cmnt_c);
    size_t row = b->nrows;
    for (int64_t i = first; i < first + count; i++, row++) {
        b->col[key_c].v[row] = i;
        dkb__strw_put(&name_w, row, names[i], strlen(names[i]));
        if (region_c >= 0) b->col[region_c].v[row] = dkb__nation_region[i];
        uint32_t x = cmnt.row;
        dkb__strw_commit(&cmnt_w, row,
                         dkb__gen_text(g, &x, CMNT_MIN, CMNT_MAX, dkb__strw_tail(&cmnt_w)));
        dkb__stream_next_row(&cmnt);
    }
    dkb__strw_done(b, name_c, &name_w);
    dkb__strw_done(b, cmnt_c, &cmnt_w);
    b->nrows = row;
    return 0;
}

int dkb__gen_nation(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    return fixed_rows(g, first, count, b, dkb__nation_names, N_KEY, N_NAME, N_REGION, N_COMMENT,
                      DKB_S_N_CMNT);
}

int dkb__gen_region(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    return fixed_rows(g, first, count, b, dkb__region_names, R_KEY, R_NAME, -1, R_COMMENT,
                      DKB_S_R_CMNT);
}
