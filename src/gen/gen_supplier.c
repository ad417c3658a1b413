/* gen_supplier.c: the supplier table, including dbgen's "Customer ...
 * Complaints/Recommends" comments (S_CMNT_BBB per 10000 suppliers). */
#include "gen/gen_internal.h"

enum { S_KEY, S_NAME, S_ADDRESS, S_NATION, S_PHONE, S_ACCTBAL, S_COMMENT };

#define ADDR_MIN DKB_TEXT_MIN(25)
#define ADDR_MAX DKB_TEXT_MAX(25)
#define CMNT_MIN DKB_TEXT_MIN(63)
#define CMNT_MAX DKB_TEXT_MAX(63)
#define BBB_PER_10000 10 /* draws of 1..10000 at or below this get a BBB comment */
#define BBB_COMPLAINT_PCT 50
#define BBB_LEN 19       /* "Customer " + "Complaints" */

enum { ST_ADDR, ST_NATION, ST_PHONE, ST_ACCTBAL, ST_BBB, ST_BBB_TYPE, ST_BBB_JNK, ST_BBB_OFFSET,
       ST_COUNT };
static const int stream_ids[ST_COUNT] = {
    DKB_S_S_ADDR,   DKB_S_S_NTRG,   DKB_S_S_PHNE,  DKB_S_S_ABAL,
    DKB_S_BBB_CMNT, DKB_S_BBB_TYPE, DKB_S_BBB_JNK, DKB_S_BBB_OFFSET,
};

int dkb__gen_supplier(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count;
    if ((rc = dkb__gen_reserve(b, S_NAME, n * 32)) ||
        (rc = dkb__gen_reserve(b, S_ADDRESS, n * (ADDR_MAX + 5))) ||
        (rc = dkb__gen_reserve(b, S_PHONE, n * DKB_PHONE_LEN)) ||
        (rc = dkb__gen_reserve(b, S_COMMENT, n * CMNT_MAX)))
        return rc;
    dkb_stream st[ST_COUNT];
    for (int s = 0; s < ST_COUNT; s++) dkb__stream_at(&st[s], stream_ids[s], first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_S_CMNT, first, count, 1, CMNT_MIN, CMNT_MAX);
    int64_t *const okey = b->col[S_KEY].v, *const onation = b->col[S_NATION].v;
    int64_t *const obal = b->col[S_ACCTBAL].v;
    dkb_strw name_w = dkb__strw(b, S_NAME), addr_w = dkb__strw(b, S_ADDRESS);
    dkb_strw phone_w = dkb__strw(b, S_PHONE), cmnt_w = dkb__strw(b, S_COMMENT);
    size_t row = b->nrows;
    for (int64_t key = first + 1; key <= first + count; key++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        okey[row] = key;

        char *p = dkb__strw_tail(&name_w);
        memcpy(p, "Supplier#", 9);
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

        /* A few comments get "Customer ... Complaints" or "... Recommends"
         * written over them at a random place (its own 4 streams). */
        char *c = dkb__strw_tail(&cmnt_w);
        int64_t len = (int64_t)dkb__slice_copy(g, cmnt[0], c);
        x = st[ST_BBB].row;
        int64_t bad = dkb__pm_draw(&x, 1, 10000);
        x = st[ST_BBB_TYPE].row;
        int64_t type = dkb__pm_draw(&x, 0, 100);
        x = st[ST_BBB_JNK].row;
        int64_t noise = dkb__pm_draw(&x, 0, len - BBB_LEN);
        x = st[ST_BBB_OFFSET].row;
        int64_t off = dkb__pm_draw(&x, 0, len - (BBB_LEN + noise));
        if (bad <= BBB_PER_10000) {
            memcpy(c + off, "Customer ", 9);
            memcpy(c + off + 9 + noise, type < BBB_COMPLAINT_PCT ? "Complaints" : "Recommends", 10);
        }
        dkb__strw_commit(&cmnt_w, row, (size_t)len);

        for (int s = 0; s < ST_COUNT; s++) dkb__stream_next_row(&st[s]);
    }
    dkb__strw_done(b, S_NAME, &name_w);
    dkb__strw_done(b, S_ADDRESS, &addr_w);
    dkb__strw_done(b, S_PHONE, &phone_w);
    dkb__strw_done(b, S_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}
