/* q12.full.c: expert CPU candidate for TPC-H Q12 (Shipping Modes and Order
 * Priority).
 *
 *   select l_shipmode, sum(case when o_orderpriority in ('1-URGENT', '2-HIGH') then 1 else 0 end),
 *          sum(case when o_orderpriority not in ('1-URGENT', '2-HIGH') then 1 else 0 end)
 *   from orders, lineitem
 *   where o_orderkey = l_orderkey and l_shipmode in (':shipmode1', ':shipmode2')
 *     and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
 *     and l_receiptdate >= date ':date' and l_receiptdate < date ':date' + interval '1' year
 *   group by l_shipmode order by l_shipmode;
 *
 * Plan: one fused pass over lineitem: ship mode codes, the three date tests
 * and the receipt window (one unsigned compare) make a byte mask per block
 * (vectorized), whose few set bytes are then visited 8 at a time. Only a
 * passing line (about 1 in 200) touches orders: lineitem is grouped by
 * orderkey in the order of orders (both ascending), so each thread walks its contiguous lineitem range and finds the order by
 * galloping forward from the previous hit; the priority code goes through a
 * 256-entry "high" mask. Counts are per thread per mode code, merged at the
 * end; groups come out in code order, which is string order. Integer
 * counts: exact.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): lineitem and orders are
 * co-partitioned by orderkey, so each rank joins its share locally; the 2 x
 * 256 counts per ship mode are summed over the ranks in one all-reduce; rank
 * 0 writes.
 */
#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_months, dkb_gallop_i32, dkb_put_dict,
                                       dkb_select_mask */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

enum { BLOCK = 1 << 14 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *lkey, *lmode, *lship, *lcommit, *lreceipt, *okey, *oprio;
    const dkb_cand_param *pm1, *pm2, *pdate;
    dkb_cand_res_col *c_mode, *c_high, *c_low;
    if (DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_shipmode:dict l_shipdate l_commitdate l_receiptdate", &lkey,
                      &lmode, &lship, &lcommit, &lreceipt) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderpriority:dict", &okey, &oprio) ||
        DKB_BIND_PARAMS(params, "shipmode1:str shipmode2:str date", &pm1, &pm2, &pdate) ||
        DKB_BIND_RES(res, "l_shipmode:str high_line_count:int low_line_count:int", &c_mode, &c_high, &c_low))
        return DKB_CAND_EINVAL;

    uint8_t mode_ok[256] = {0}, high[256] = {0};
    const int m1 = dkb_cand_dict_code(lmode->dict, pm1->s), m2 = dkb_cand_dict_code(lmode->dict, pm2->s);
    if (m1 >= 0) mode_ok[m1] = 1;
    if (m2 >= 0) mode_ok[m2] = 1;
    const int urgent = dkb_cand_dict_code(oprio->dict, "1-URGENT"), hi2 = dkb_cand_dict_code(oprio->dict, "2-HIGH");
    if (urgent >= 0) high[urgent] = 1;
    if (hi2 >= 0) high[hi2] = 1;
    const int32_t lo = (int32_t)pdate->i;
    const uint32_t span = (uint32_t)(dkb_add_months(pdate->i, 12) - 1 - pdate->i);

    const int mode1 = m1 >= 0 ? m1 : 256, mode2 = m2 >= 0 ? m2 : 256; /* 256: no code */
    /* the whole columns, or under a memory budget lineitem and orders load by
     * load (co-partitioned by orderkey: a load's orders hold every order of
     * its lines): the qualifying lines counted per mode (none without a mode) */
    const int threads = env->threads > 0 ? env->threads : 1;
    int64_t cnt_high[256] = {0}, cnt_low[256] = {0};
    static const char *const COLS[] = {"l_orderkey",    "l_shipmode", "l_shipdate",     "l_commitdate",
                                       "l_receiptdate", "o_orderkey", "o_orderpriority"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 7, COLS); (m1 >= 0 || m2 >= 0) && dkb_stream_next(&st);) {
        const int32_t *lk = st.cols[0].data, *sd = st.cols[2].data, *cd = st.cols[3].data, *rd = st.cols[4].data;
        const uint8_t *md = st.cols[1].data, *pr = st.cols[6].data;
        const int32_t *ok = st.cols[5].data;
        const int64_t n = st.cols[0].n, no = st.cols[5].n, nblocks = (n + BLOCK - 1) / BLOCK;
        /* threads only for enough work (like the baseline): a region's barrier can wait
         * milliseconds for a second thread on a busy machine */
        const int nt = n < PAR_MIN ? 1 : threads;
#pragma omp parallel num_threads(nt)
        {
            int64_t my_high[256] = {0}, my_low[256] = {0};
            int64_t pos = 0;
#pragma omp for schedule(dynamic, 4)
            for (int64_t b = 0; b < nblocks; b++) {
                const int64_t from = b * BLOCK, to = from + BLOCK < n ? from + BLOCK : n;
                /* the filter as a byte mask (vectorized), then its few set bytes */
                const int len = (int)(to - from);
                uint8_t m[BLOCK + 8];
                for (int j = 0; j < len; j++) {
                    const int32_t r = rd[from + j], c = cd[from + j];
                    m[j] = (((int)md[from + j] == mode1) | ((int)md[from + j] == mode2)) & (c < r) &
                           (sd[from + j] < c) & ((uint32_t)r - (uint32_t)lo <= span);
                }
                int32_t sel[BLOCK + 16];
                const int nsel = dkb_select_mask(m, len, sel);
                for (int x = 0; x < nsel; x++) {
                    const int64_t i = from + sel[x];
                    const int32_t key = lk[i];
                    pos = dkb_gallop_i32(ok, pos, no, key);
                    if (pos >= no || ok[pos] != key) {
                        pos = dkb_gallop_i32(ok, 0, no, key); /* not ascending after all: search it all */
                        if (pos >= no || ok[pos] != key) { pos = 0; continue; }
                    }
                    if (high[pr[pos]]) my_high[md[i]]++;
                    else my_low[md[i]]++;
                }
            }
#pragma omp critical
            for (int m = 0; m < 256; m++) {
                cnt_high[m] += my_high[m];
                cnt_low[m] += my_low[m];
            }
        }
    }
    int rc = dkb_stream_end(&st);
    if (!rc && dkb_ranks_many(env)) { /* one all-reduce of both */
        int64_t both[512];
        memcpy(both, cnt_high, sizeof cnt_high), memcpy(both + 256, cnt_low, sizeof cnt_low);
        rc = dkb_ranks_sum_i64(env, both, 512);
        memcpy(cnt_high, both, sizeof cnt_high), memcpy(cnt_low, both + 256, sizeof cnt_low);
    }
    if (rc || !dkb_ranks_writes(env, res)) return rc;

    int64_t row = 0;
    for (int m = 0; m < lmode->dict->size && m < 256; m++) {
        if (!mode_ok[m] || cnt_high[m] + cnt_low[m] == 0) continue;
        if (row >= res->cap || dkb_put_dict(c_mode, row, lmode->dict, m))
            return DKB_CAND_ECAP;
        c_high->i64[row] = cnt_high[m];
        c_low->i64[row] = cnt_low[m];
        c_high->is_null[row] = c_low->is_null[row] = 0;
        row++;
    }
    res->nrows = row;
    return 0;
}
