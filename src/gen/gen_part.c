/* gen_part.c: the part table and partsupp (4 rows per part, drawn from the
 * part's own streams, so both tables are generated per part unit). */
#include "gen/dists.h"
#include "gen/gen_internal.h"

enum { P_KEY, P_NAME, P_MFGR, P_BRAND, P_TYPE, P_SIZE, P_CONTAINER, P_PRICE, P_COMMENT };
enum { PS_PART, PS_SUPP, PS_QTY, PS_COST, PS_COMMENT };

#define NAME_WORDS 5
#define NAME_MAX (NAME_WORDS * 11 + 16)
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
static size_t part_name(const dkb_gen *g, uint32_t x, char *dst) {
    uint8_t perm[DKB_NCOLORS];
    for (int i = 0; i < DKB_NCOLORS; i++) perm[i] = (uint8_t)i;
    char *p = dst;
    for (int i = 0; i < NAME_WORDS; i++) {
        int64_t j = dkb__pm_draw(&x, i, DKB_NCOLORS - 1);
        uint8_t t = perm[j];
        perm[j] = perm[i];
        perm[i] = t;
        const dkb_sstr *w = &g->colors[t];
        memcpy(p, w->s, 16); /* colors have at most 10 letters */
        p[w->len] = ' ';
        p += w->len + 1;
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
    dkb__streams_at(st, stream_ids, ST_COUNT, first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_P_CMNT, first, count, 1, P_CMNT_MIN, P_CMNT_MAX);
    int64_t *const okey = b->col[P_KEY].v, *const osize = b->col[P_SIZE].v;
    int64_t *const oprice = b->col[P_PRICE].v;
    dkb_strw name_w = dkb__strw(b, P_NAME), mfgr_w = dkb__strw(b, P_MFGR);
    dkb_strw brand_w = dkb__strw(b, P_BRAND), type_w = dkb__strw(b, P_TYPE);
    dkb_strw cont_w = dkb__strw(b, P_CONTAINER), cmnt_w = dkb__strw(b, P_COMMENT);
    size_t row = b->nrows;
    for (int64_t key = first + 1; key <= first + count; key++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        okey[row] = key;
        dkb__strw_commit(&name_w, row, part_name(g, st[ST_NAME].row, dkb__strw_tail(&name_w)));

        x = st[ST_MFG].row;
        int64_t mfg = dkb__pm_draw(&x, 1, 5);
        char *p = dkb__strw_tail(&mfgr_w);
        memcpy(p, "Manufacturer#", 13);
        p[13] = (char)('0' + mfg);
        dkb__strw_commit(&mfgr_w, row, 14);

        x = st[ST_BRAND].row;
        int64_t brand = mfg * 10 + dkb__pm_draw(&x, 1, 5);
        p = dkb__strw_tail(&brand_w);
        memcpy(p, "Brand#", 6);
        p[6] = (char)('0' + brand / 10);
        p[7] = (char)('0' + brand % 10);
        dkb__strw_commit(&brand_w, row, 8);

        x = st[ST_TYPE].row;
        dkb__strw_put_sstr(&type_w, row, &g->types[dkb__pm_draw(&x, 1, DKB_NTYPES) - 1]);
        x = st[ST_SIZE].row;
        osize[row] = dkb__pm_draw(&x, 1, 50);
        x = st[ST_CNTR].row;
        dkb__strw_put_sstr(&cont_w, row, &g->containers[dkb__pm_draw(&x, 1, DKB_NCONTAINERS) - 1]);
        oprice[row] = dkb__retail_price(key);
        dkb__strw_commit(&cmnt_w, row, dkb__slice_copy(g, cmnt[0], dkb__strw_tail(&cmnt_w)));

        dkb__streams_next_row(st, ST_COUNT);
    }
    dkb__strw_done(b, P_NAME, &name_w);
    dkb__strw_done(b, P_MFGR, &mfgr_w);
    dkb__strw_done(b, P_BRAND, &brand_w);
    dkb__strw_done(b, P_TYPE, &type_w);
    dkb__strw_done(b, P_CONTAINER, &cont_w);
    dkb__strw_done(b, P_COMMENT, &cmnt_w);
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
    int64_t *const opart = b->col[PS_PART].v, *const osupp = b->col[PS_SUPP].v;
    int64_t *const oqty = b->col[PS_QTY].v, *const ocost = b->col[PS_COST].v;
    dkb_strw cmnt_w = dkb__strw(b, PS_COMMENT);
    const int64_t nsupps = g->nsupps;
    size_t row = b->nrows;
    for (int64_t part = first + 1; part <= first + count; part++) {
        uint32_t xq = qty.row, xc = cost.row;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        for (int s = 0; s < SUPP_PER_PART; s++, row++) {
            opart[row] = part;
            osupp[row] = dkb__part_supp(part, s, nsupps);
            oqty[row] = dkb__pm_draw(&xq, 1, 9999);
            ocost[row] = dkb__pm_draw(&xc, 100, 100000);
            dkb__strw_commit(&cmnt_w, row, dkb__slice_copy(g, cmnt[s], dkb__strw_tail(&cmnt_w)));
        }
        dkb__stream_next_row(&qty);
        dkb__stream_next_row(&cost);
    }
    dkb__strw_done(b, PS_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}
