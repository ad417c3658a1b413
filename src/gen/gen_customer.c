/* gen_customer.c: the customer table. */
#include "gen/gen_internal.h"

enum { C_KEY, C_NAME, C_ADDRESS, C_NATION, C_PHONE, C_ACCTBAL, C_SEGMENT, C_COMMENT };

#define ADDR_MIN DKB_TEXT_MIN(25)
#define ADDR_MAX DKB_TEXT_MAX(25)
#define CMNT_MIN DKB_TEXT_MIN(73)
#define CMNT_MAX DKB_TEXT_MAX(73)

enum { ST_ADDR, ST_NATION, ST_PHONE, ST_ACCTBAL, ST_SEGMENT, ST_COUNT };
static const int stream_ids[ST_COUNT] = {
    DKB_S_C_ADDR, DKB_S_C_NTRG, DKB_S_C_PHNE, DKB_S_C_ABAL, DKB_S_C_MSEG,
};

int dkb__gen_customer(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count;
    if ((rc = dkb__gen_reserve(b, C_NAME, n * 32)) ||
        (rc = dkb__gen_reserve(b, C_ADDRESS, n * (ADDR_MAX + 5))) ||
        (rc = dkb__gen_reserve(b, C_PHONE, n * DKB_PHONE_LEN)) ||
        (rc = dkb__gen_reserve(b, C_SEGMENT, n * 32)) ||
        (rc = dkb__gen_reserve(b, C_COMMENT, n * CMNT_MAX)))
        return rc;
    dkb_stream st[ST_COUNT];
    for (int s = 0; s < ST_COUNT; s++) dkb__stream_at(&st[s], stream_ids[s], first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_C_CMNT, first, count, 1, CMNT_MIN, CMNT_MAX);
    int64_t *const okey = b->col[C_KEY].v, *const onation = b->col[C_NATION].v;
    int64_t *const obal = b->col[C_ACCTBAL].v;
    dkb_strw name_w = dkb__strw(b, C_NAME), addr_w = dkb__strw(b, C_ADDRESS);
    dkb_strw phone_w = dkb__strw(b, C_PHONE), seg_w = dkb__strw(b, C_SEGMENT);
    dkb_strw cmnt_w = dkb__strw(b, C_COMMENT);
    size_t row = b->nrows;
    for (int64_t key = first + 1; key <= first + count; key++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        okey[row] = key;

        char *p = dkb__strw_tail(&name_w);
        memcpy(p, "Customer#", 9);
        dkb__strw_commit(&name_w, row, (size_t)(dkb__put_zpad(p + 9, (uint64_t)key, 9) - p));

        x = st[ST_ADDR].row;
        size_t alen = dkb__gen_vstr(&x, ADDR_MIN, ADDR_MAX, dkb__strw_tail(&addr_w));
        dkb__strw_commit(&addr_w, row, alen);

        x = st[ST_NATION].row;
        int64_t nation = dkb__pm_draw(&x, 0, 24);
        onation[row] = nation;

        x = st[ST_PHONE].row;
        dkb__gen_phone(&x, nation, dkb__strw_tail(&phone_w));
        dkb__strw_commit(&phone_w, row, DKB_PHONE_LEN);

        x = st[ST_ACCTBAL].row;
        obal[row] = dkb__pm_draw(&x, -99999, 999999);

        x = st[ST_SEGMENT].row;
        dkb__strw_put_sstr(&seg_w, row, &g->segments[dkb__pm_draw(&x, 1, 5) - 1]);

        dkb__strw_commit(&cmnt_w, row, dkb__slice_copy(g, cmnt[0], dkb__strw_tail(&cmnt_w)));

        for (int s = 0; s < ST_COUNT; s++) dkb__stream_next_row(&st[s]);
    }
    dkb__strw_done(b, C_NAME, &name_w);
    dkb__strw_done(b, C_ADDRESS, &addr_w);
    dkb__strw_done(b, C_PHONE, &phone_w);
    dkb__strw_done(b, C_SEGMENT, &seg_w);
    dkb__strw_done(b, C_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}
