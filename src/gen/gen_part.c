/* gen_part.c: the part table and partsupp (4 rows per part, drawn from the
 * part's own streams, so both tables are generated per part unit). */
#include "gen/dists.h"
#include "gen/gen_internal.h"

enum { P_KEY, P_NAME, P_MFGR, P_BRAND, P_TYPE, P_SIZE, P_CONTAINER, P_PRICE, P_COMMENT };
enum { PS_PART, PS_SUPP, PS_QTY, PS_COST, PS_COMMENT };

#define NAME_WORDS 5
#define NAME_MAX (NAME_WORDS * 11)
#define P_CMNT_MIN DKB_TEXT_MIN(14)
#define P_CMNT_MAX DKB_TEXT_MAX(14)
#define PS_CMNT_MIN DKB_TEXT_MIN(124)
#define PS_CMNT_MAX DKB_TEXT_MAX(124)
#define SUPP_PER_PART 4

enum { ST_NAME, ST_MFG, ST_BRAND, ST_TYPE, ST_SIZE, ST_CNTR, ST_COUNT };
static const int stream_ids[ST_COUNT] = {
    DKB_S_P_NAME, DKB_S_P_MFG, DKB_S_P_BRND, DKB_S_P_TYPE, DKB_S_P_SIZE, DKB_S_P_CNTR,
};

/* The part name: dbgen shuffles all 92 colors (92 draws, one per position,
 * position i swapped with a draw from [i, 91]) and joins the first five. */
static size_t part_name(uint32_t x, char *dst) {
    uint8_t perm[DKB_NCOLORS];
    for (int i = 0; i < DKB_NCOLORS; i++) perm[i] = (uint8_t)i;
    char *p = dst;
    for (int i = 0; i < NAME_WORDS; i++) {
        int64_t j = dkb__pm_draw(&x, i, DKB_NCOLORS - 1);
        uint8_t t = perm[j];
        perm[j] = perm[i];
        perm[i] = t;
        const char *w = dkb__colors[t];
        size_t n = strlen(w);
        memcpy(p, w, n);
        p += n;
        *p++ = ' ';
    }
    return (size_t)(p - dst) - 1;
}

int dkb__gen_part(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count;
    if ((rc = dkb__gen_reserve(b, P_NAME, n * NAME_MAX)) ||
        (rc = dkb__gen_reserve(b, P_MFGR, n * 16)) || (rc = dkb__gen_reserve(b, P_BRAND, n * 8)) ||
        (rc = dkb__gen_reserve(b, P_TYPE, n * 32)) ||
        (rc = dkb__gen_reserve(b, P_CONTAINER, n * 32)) ||
        (rc = dkb__gen_reserve(b, P_COMMENT, n * P_CMNT_MAX)))
        return rc;
    dkb_stream st[ST_COUNT];
    for (int s = 0; s < ST_COUNT; s++) dkb__stream_at(&st[s], stream_ids[s], first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_P_CMNT, first, count, 1, P_CMNT_MIN, P_CMNT_MAX);
    size_t row = b->nrows;
    for (int64_t key = first + 1; key <= first + count; key++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        b->col[P_KEY].v[row] = key;
        dkb__col_commit(b, P_NAME, row, part_name(st[ST_NAME].row, dkb__col_end(b, P_NAME)));

        x = st[ST_MFG].row;
        int64_t mfg = dkb__pm_draw(&x, 1, 5);
        char *p = dkb__col_end(b, P_MFGR);
        memcpy(p, "Manufacturer#", 13);
        p[13] = (char)('0' + mfg);
        dkb__col_commit(b, P_MFGR, row, 14);

        x = st[ST_BRAND].row;
        int64_t brand = mfg * 10 + dkb__pm_draw(&x, 1, 5);
        p = dkb__col_end(b, P_BRAND);
        memcpy(p, "Brand#", 6);
        p[6] = (char)('0' + brand / 10);
        p[7] = (char)('0' + brand % 10);
        dkb__col_commit(b, P_BRAND, row, 8);

        x = st[ST_TYPE].row;
        const dkb_sstr *type = &g->types[dkb__pm_draw(&x, 1, DKB_NTYPES) - 1];
        dkb__col_put(b, P_TYPE, row, type->s, type->len);

        x = st[ST_SIZE].row;
        b->col[P_SIZE].v[row] = dkb__pm_draw(&x, 1, 50);

        x = st[ST_CNTR].row;
        const dkb_sstr *cont = &g->containers[dkb__pm_draw(&x, 1, DKB_NCONTAINERS) - 1];
        dkb__col_put(b, P_CONTAINER, row, cont->s, cont->len);

        b->col[P_PRICE].v[row] = dkb__retail_price(key);

        dkb__col_commit(b, P_COMMENT, row, dkb__slice_copy(g, cmnt[0], dkb__col_end(b, P_COMMENT)));

        for (int s = 0; s < ST_COUNT; s++) dkb__stream_next_row(&st[s]);
    }
    b->nrows = row;
    return 0;
}

int dkb__gen_partsupp(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc = dkb__gen_reserve(b, PS_COMMENT, (size_t)count * SUPP_PER_PART * PS_CMNT_MAX);
    if (rc) return rc;
    dkb_stream qty, cost;
    dkb__stream_at(&qty, DKB_S_PS_QTY, first);
    dkb__stream_at(&cost, DKB_S_PS_SCST, first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_PS_CMNT, first, count, SUPP_PER_PART, PS_CMNT_MIN, PS_CMNT_MAX);
    size_t row = b->nrows;
    for (int64_t part = first + 1; part <= first + count; part++) {
        uint32_t xq = qty.row, xc = cost.row;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        for (int s = 0; s < SUPP_PER_PART; s++, row++) {
            b->col[PS_PART].v[row] = part;
            b->col[PS_SUPP].v[row] = dkb__part_supp(part, s, g->nsupps);
            b->col[PS_QTY].v[row] = dkb__pm_draw(&xq, 1, 9999);
            b->col[PS_COST].v[row] = dkb__pm_draw(&xc, 100, 100000);
            dkb__col_commit(b, PS_COMMENT, row,
                            dkb__slice_copy(g, cmnt[s], dkb__col_end(b, PS_COMMENT)));
        }
        dkb__stream_next_row(&qty);
        dkb__stream_next_row(&cost);
    }
    b->nrows = row;
    return 0;
}
