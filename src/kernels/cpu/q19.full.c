/* q19.full.c: expert CPU candidate for TPC-H Q19 (Discounted Revenue).
 *
 *   select sum(l_extendedprice * (1 - l_discount)) as revenue
 *   from lineitem, part
 *   where p_partkey = l_partkey and l_shipmode in ('AIR', 'AIR REG')
 *     and l_shipinstruct = 'DELIVER IN PERSON'
 *     and (   (p_brand = ':brand1' and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
 *              and l_quantity between :quantity1 and :quantity1 + 10 and p_size between 1 and 5)
 *          or (p_brand = ':brand2' and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
 *              and l_quantity between :quantity2 and :quantity2 + 10 and p_size between 1 and 10)
 *          or (p_brand = ':brand3' and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
 *              and l_quantity between :quantity3 and :quantity3 + 10 and p_size between 1 and 15));
 *
 * Plan: one fused pass over lineitem. The common conditions (ship mode and
 * instruction codes compared with the parameters' codes) drop all but about
 * 1 line in 28 (a vectorized byte mask per block, whose set bytes are visited 8 at a
 * time). Each branch is a bit: a pass over part computes each part's bits
 * (256-entry brand and container masks, the size bounds) into one byte per
 * part, read at row partkey - 1 (part keys are dense 1..N); the quantity
 * ranges clear the bits they exclude. Revenue (scale 4) is summed in int64 per
 * block and in __int128 per thread: exact. No line: NULL.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): each rank scans its share of
 * lineitem (part is whole on every rank); the exact sum, the count and the
 * error flag are summed over the ranks in one all-reduce; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_put_dec, dkb_select_mask */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

enum { BLOCK = 1 << 13, NBRANCH = 3, NCONT = 4 };

static const char *const CONTAINER[NBRANCH][NCONT] = {
    {"SM CASE", "SM BOX", "SM PACK", "SM PKG"},
    {"MED BAG", "MED BOX", "MED PKG", "MED PACK"},
    {"LG CASE", "LG BOX", "LG PACK", "LG PKG"},
};
static const int MAX_SIZE[NBRANCH] = {5, 10, 15};

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *lpart, *lqty, *lprice, *ldisc, *lmode, *linstr, *pbrand, *pcont, *psize;
    const dkb_cand_param *pb[NBRANCH], *pq[NBRANCH];
    dkb_cand_res_col *out;
    if (DKB_BIND_COLS(db, "lineitem",
                      "l_partkey:i32 l_quantity:dec2 l_extendedprice:dec2 l_discount:dec2 l_shipmode:dict "
                      "l_shipinstruct:dict",
                      &lpart, &lqty, &lprice, &ldisc, &lmode, &linstr) ||
        DKB_BIND_COLS(db, "part", "p_brand:dict p_container:dict p_size:i32", &pbrand, &pcont, &psize) ||
        DKB_BIND_PARAMS(params, "brand1:str brand2:str brand3:str quantity1 quantity2 quantity3", &pb[0], &pb[1],
                        &pb[2], &pq[0], &pq[1], &pq[2]) ||
        DKB_BIND_RES(res, "revenue:dec4", &out) || res->cap < 1)
        return DKB_CAND_EINVAL;

    /* common conditions: the mode and instruction codes (-1: absent, matches nothing) */
    uint8_t brand_bits[256] = {0}, cont_bits[256] = {0};
    const int air = dkb_cand_dict_code(lmode->dict, "AIR"), air_reg = dkb_cand_dict_code(lmode->dict, "AIR REG");
    const int in_person = dkb_cand_dict_code(linstr->dict, "DELIVER IN PERSON");
    int64_t qlo[NBRANCH], qhi[NBRANCH];
    for (int b = 0; b < NBRANCH; b++) {
        if (pq[b]->i > INT64_MAX / 100 - 10 || pq[b]->i < INT64_MIN / 100) return DKB_CAND_EINVAL;
        const int bc = dkb_cand_dict_code(pbrand->dict, pb[b]->s);
        if (bc >= 0) brand_bits[bc] |= (uint8_t)(1u << b);
        for (int c = 0; c < NCONT; c++) {
            const int cc = dkb_cand_dict_code(pcont->dict, CONTAINER[b][c]);
            if (cc >= 0) cont_bits[cc] |= (uint8_t)(1u << b);
        }
        qlo[b] = pq[b]->i * 100;
        qhi[b] = (pq[b]->i + 10) * 100;
    }

    const int32_t *ps = psize->data;
    const uint8_t *pbr = pbrand->data, *pco = pcont->data;
    const int64_t n = lpart->n, nparts = pbrand->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = n < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    __int128 total = 0;
    int64_t hits = 0;
    int bad = 0;
    /* each part's branch bits (brand, container, size): one byte per part */
    uint8_t *part_bits = malloc((size_t)nparts + 1);
    if (!part_bits) return DKB_CAND_ENOMEM;
#pragma omp parallel for num_threads(nparts < PAR_MIN ? 1 : nt) schedule(static)
    for (int64_t p = 0; p < nparts; p++) {
        unsigned size_bits = 0;
        for (int b = 0; b < NBRANCH; b++) size_bits |= (unsigned)((ps[p] >= 1) & (ps[p] <= MAX_SIZE[b])) << b;
        part_bits[p] = (uint8_t)(brand_bits[pbr[p]] & cont_bits[pco[p]] & size_bits);
    }
    if (in_person >= 0 && (air >= 0 || air_reg >= 0)) {
        const uint8_t ip = (uint8_t)in_person;
        const int mode1 = air >= 0 ? air : 256, mode2 = air_reg >= 0 ? air_reg : 256; /* 256: no code */
        const int threads = env->threads > 0 ? env->threads : 1;
        /* the whole columns, or under a memory budget lineitem load by load:
         * the revenue of the lines that pass a branch */
        static const char *const COLS[] = {"l_partkey",  "l_quantity", "l_extendedprice",
                                           "l_discount", "l_shipmode", "l_shipinstruct"};
        dkb_stream st;
        for (dkb_stream_begin(&st, db, env, 6, COLS); dkb_stream_next(&st);) {
            const int32_t *lp = st.cols[0].data;
            const int64_t *lq = st.cols[1].data, *lpr = st.cols[2].data, *ld = st.cols[3].data;
            const uint8_t *lm = st.cols[4].data, *li = st.cols[5].data;
            const int64_t nrow = st.cols[0].n, nblocks = (nrow + BLOCK - 1) / BLOCK;
            const int team = nrow < PAR_MIN ? 1 : threads;
#pragma omp parallel num_threads(team) reduction(| : bad)
            {
                __int128 my_total = 0;
                int64_t my_hits = 0;
#pragma omp for schedule(dynamic, 8)
                for (int64_t k = 0; k < nblocks; k++) {
                    const int64_t from = k * BLOCK, to = from + BLOCK < nrow ? from + BLOCK : nrow;
                    int64_t sum = 0, h = 0;
                    /* the common conditions as a byte mask (vectorized), then its set bytes */
                    const int len = (int)(to - from);
                    uint8_t m[BLOCK + 8];
                    for (int j = 0; j < len; j++)
                        m[j] = (((int)lm[from + j] == mode1) | ((int)lm[from + j] == mode2)) & (li[from + j] == ip);
                    int32_t sel[BLOCK + 16];
                    const int nsel = dkb_select_mask(m, len, sel);
                    for (int x = 0; x < nsel; x++) {
                        const int64_t i = from + sel[x];
                        const uint32_t p = (uint32_t)lp[i] - 1u;
                        if (p >= (uint64_t)nparts) { bad = 1; continue; }
                        unsigned bits = part_bits[p];
                        if (!bits) continue;
                        const int64_t q = lq[i];
                        for (int b = 0; b < NBRANCH; b++) bits &= ~((unsigned)!((q >= qlo[b]) & (q <= qhi[b])) << b);
                        if (!bits) continue;
                        sum += lpr[i] * (100 - ld[i]);
                        h++;
                    }
                    my_total += sum;
                    my_hits += h;
                }
#pragma omp critical
                {
                    total += my_total;
                    hits += my_hits;
                }
            }
        }
        const int rc = dkb_stream_end(&st);
        if (rc) {
            free(part_bits);
            return rc;
        }
    }
    free(part_bits);
    {
        int64_t cnt[2] = {hits, bad};
        const int mrc = dkb_ranks_sum_mixed(env, cnt, 2, &total, 1);
        if (mrc) return mrc;
        hits = cnt[0], bad = (int)cnt[1];
    }
    if (bad) return DKB_CAND_EINTERNAL;
    if (!dkb_ranks_writes(env, res)) return 0;
    res->nrows = 1;
    if (hits == 0) {
        out->dec[0] = 0;
        out->is_null[0] = 1;
        return 0;
    }
    dkb_put_dec(out, 0, total, 4);
    return 0;
}
