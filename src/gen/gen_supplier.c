/* gen_supplier.c: the supplier table, including dbgen's "Customer ...
 * Complaints/Recommends" comments (S_CMNT_BBB per 10000 suppliers). */
#include "gen/gen_internal.h"

/* Columns 0..5 are the party columns: key, name, address, nation, phone,
 * acctbal (DKB_PARTY_*). */
enum { S_COMMENT = DKB_PARTY_NCOLS };

#define CMNT_MIN DKB_TEXT_MIN(63)
#define CMNT_MAX DKB_TEXT_MAX(63)
#define BBB_PER_10000 10 /* draws of 1..10000 at or below this get a BBB comment */
#define BBB_COMPLAINT_PCT 50
#define BBB_LEN 19       /* "Customer " + "Complaints" */

/* The party streams (address, nation, phone, balance) first, then our own. */
enum { ST_BBB = DKB_PARTY_NSTREAMS, ST_BBB_TYPE, ST_BBB_JNK, ST_BBB_OFFSET, ST_COUNT };
static const int stream_ids[ST_COUNT] = {
    DKB_S_S_ADDR,   DKB_S_S_NTRG,   DKB_S_S_PHNE,  DKB_S_S_ABAL,
    DKB_S_BBB_CMNT, DKB_S_BBB_TYPE, DKB_S_BBB_JNK, DKB_S_BBB_OFFSET,
};

int dkb__gen_supplier(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count;
    if ((rc = dkb__party_reserve(b, n)) || (rc = dkb__gen_reserve(b, S_COMMENT, n * CMNT_MAX)))
        return rc;
    dkb_stream st[ST_COUNT];
    dkb__streams_at(st, stream_ids, ST_COUNT, first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_S_CMNT, first, count, 1, CMNT_MIN, CMNT_MAX);
    dkb_party_w party = dkb__party_w(b);
    dkb_strw cmnt_w = dkb__strw(b, S_COMMENT);
    size_t row = b->nrows;
    for (int64_t key = first + 1; key <= first + count; key++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        dkb__party_row(&party, st, "Supplier#", key, row);

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

        dkb__streams_next_row(st, ST_COUNT);
    }
    dkb__party_done(b, &party);
    dkb__strw_done(b, S_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}
