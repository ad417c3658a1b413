/* gen_customer.c: the customer table. */
#include "gen/gen_internal.h"

/* Columns 0..5 are the party columns: key, name, address, nation, phone,
 * acctbal (DKB_PARTY_*). */
enum { C_SEGMENT = DKB_PARTY_NCOLS, C_COMMENT };

#define CMNT_MIN DKB_TEXT_MIN(73)
#define CMNT_MAX DKB_TEXT_MAX(73)

/* The party streams (address, nation, phone, balance) first, then our own. */
enum { ST_SEGMENT = DKB_PARTY_NSTREAMS, ST_COUNT };
static const int stream_ids[ST_COUNT] = {
    DKB_S_C_ADDR, DKB_S_C_NTRG, DKB_S_C_PHNE, DKB_S_C_ABAL, DKB_S_C_MSEG,
};

int dkb__gen_customer(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count;
    if ((rc = dkb__party_reserve(b, n)) || (rc = dkb__gen_reserve(b, C_SEGMENT, n * 32)) ||
        (rc = dkb__gen_reserve(b, C_COMMENT, n * CMNT_MAX)))
        return rc;
    dkb_stream st[ST_COUNT];
    dkb__streams_at(st, stream_ids, ST_COUNT, first);
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_C_CMNT, first, count, 1, CMNT_MIN, CMNT_MAX);
    dkb_party_w party = dkb__party_w(b);
    dkb_strw seg_w = dkb__strw(b, C_SEGMENT), cmnt_w = dkb__strw(b, C_COMMENT);
    size_t row = b->nrows;
    for (int64_t key = first + 1; key <= first + count; key++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        dkb__party_row(&party, st, "Customer#", key, row);

        x = st[ST_SEGMENT].row;
        dkb__strw_put_sstr(&seg_w, row, &g->segments[dkb__pm_draw(&x, 1, 5) - 1]);

        dkb__strw_commit(&cmnt_w, row, dkb__slice_copy(g, cmnt[0], dkb__strw_tail(&cmnt_w)));

        dkb__streams_next_row(st, ST_COUNT);
    }
    dkb__party_done(b, &party);
    dkb__strw_done(b, C_SEGMENT, &seg_w);
    dkb__strw_done(b, C_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}
