/* q20.full.c: expert CPU candidate for TPC-H Q20 (Potential Part Promotion).
 *
 *   select s_name, s_address from supplier, nation
 *   where s_suppkey in (select ps_suppkey from partsupp
 *           where ps_partkey in (select p_partkey from part where p_name like ':color%')
 *             and ps_availqty > (select 0.5 * sum(l_quantity) from lineitem
 *                                where l_partkey = ps_partkey and l_suppkey = ps_suppkey
 *                                  and l_shipdate >= date ':date'
 *                                  and l_shipdate < date ':date' + interval '1' year))
 *     and s_nationkey = n_nationkey and n_name = ':nation'
 *   order by s_name;
 *
 * Plan: the parts whose name starts with the color (a prefix compare on
 * the free text) become a bitmap over partkey - 1 (part keys are dense
 * 1..N); their partsupp rows (about 1%) go into a compact open-addressing
 * table keyed by (partkey, suppkey). One parallel pass over lineitem tests
 * the ship year and the part bit (a vectorized byte mask per block, with
 * gathers from the bitmap), and only those lines probe the table and
 * add their quantity into the thread's array of sums per table slot. After
 * the merge, a partsupp row qualifies when it has lines and
 * 200 * availqty > sum (hundredths): exact, and a row without lines drops
 * out as SQL's comparison with NULL does. Its supplier's bit is set; the
 * nation's suppliers with the bit come out sorted by s_name.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): lineitem is split but part and
 * partsupp are not split with it (whole on every rank), so the lines of a
 * (part, supplier) are on every rank. No shuffle: the sums are over the few
 * partsupp rows of the named parts only, so each rank sums its lines per
 * table slot, every rank's (key, sum) entries of the slots it saw are
 * gathered in rank order (dkb_ranks_gather; by key, as the tables' slots
 * need not be laid out alike) and added into the local table by lookup
 * before the test against availqty; rank 0 writes.
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_add_months, dkb_put_strcol, dkb_select_mask */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144, BLOCK = 1 << 13 };

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

static inline uint64_t slot_of(uint64_t key, int shift) { return (key * 0x9E3779B97F4A7C15ull) >> shift; }

static const dkb_cand_vec *g_names; /* for the sort's comparison only (set, used and done in one call) */

static int by_name(const void *a, const void *b) {
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    const int64_t *off = g_names->data;
    const int64_t lx = off[x + 1] - off[x], ly = off[y + 1] - off[y];
    const int c = memcmp(g_names->bytes + off[x], g_names->bytes + off[y], (size_t)(lx < ly ? lx : ly));
    if (c) return c;
    return (lx > ly) - (lx < ly);
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *pname, *pspart, *pssupp, *psavail, *lpart, *lsupp, *lqty, *lship, *sname, *saddr, *snation,
        *nkey, *nname;
    const dkb_cand_param *pcolor, *pdate, *pnation;
    dkb_cand_res_col *c_name, *c_addr;
    if (DKB_BIND_COLS(db, "part", "p_name:str", &pname) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_availqty:i32", &pspart, &pssupp, &psavail) ||
        DKB_BIND_COLS(db, "lineitem", "l_partkey:i32 l_suppkey:i32 l_quantity:dec2 l_shipdate:i32", &lpart, &lsupp,
                      &lqty, &lship) ||
        DKB_BIND_COLS(db, "supplier", "s_name:str s_address s_nationkey:i32", &sname, &saddr, &snation) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_PARAMS(params, "color:str date nation:str", &pcolor, &pdate, &pnation) ||
        DKB_BIND_RES(res, "s_name:str s_address:str", &c_name, &c_addr))
        return DKB_CAND_EINVAL;
    res->nrows = 0;

    /* the nation's key */
    const int ncode = dkb_cand_dict_code(nname->dict, pnation->s);
    int64_t nation = -1;
    for (int64_t r = 0; ncode >= 0 && r < nname->n; r++)
        if (((const uint8_t *)nname->data)[r] == ncode) nation = ((const int32_t *)nkey->data)[r];
    if (nation < 0) return 0;

    const int64_t np = pname->n, nwords = (np + 63) / 64, nps = pspart->n, nl = lpart->n, ns = sname->n;
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = nl < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const char *color = pcolor->s;
    const size_t clen = strlen(color);
    const int64_t *noff = pname->data;
    const char *ntxt = pname->bytes;
    uint32_t *bits = malloc((size_t)(nwords + 1) * sizeof(uint64_t)); /* bit p: word p >> 5, bit p & 31 */
    uint8_t *supp_ok = calloc((size_t)ns + 1, 1);
    if (!bits || !supp_ok) { free(bits); free(supp_ok); return DKB_CAND_ENOMEM; }

    /* part bitmap: p_name like 'color%' */
    int64_t nsel = 0;
#pragma omp parallel for num_threads(np < PAR_MIN ? 1 : nt) schedule(static) reduction(+ : nsel)
    for (int64_t w = 0; w < nwords; w++) {
        uint64_t m = 0;
        const int64_t hi = (w + 1) * 64 < np ? (w + 1) * 64 : np;
        for (int64_t r = w * 64; r < hi; r++)
            if ((size_t)(noff[r + 1] - noff[r]) >= clen && memcmp(ntxt + noff[r], color, clen) == 0)
                m |= 1ull << (r - w * 64);
        bits[2 * w] = (uint32_t)m;
        bits[2 * w + 1] = (uint32_t)(m >> 32);
        nsel += __builtin_popcountll(m);
    }

    /* those parts' partsupp rows (partsupp holds 4 per part in TPC-H;
     * counted, not assumed): each thread lists its range's rows in its own
     * stretch of `sel` */
    const int32_t *pk = pspart->data, *sk = pssupp->data, *av = psavail->data;
    int64_t *sel = malloc((size_t)(nps + 1) * sizeof(int64_t));
    int64_t *sel_n = calloc(2 * (size_t)nt + 1, sizeof(int64_t)); /* rows listed, first row: per thread */
    if (!sel || !sel_n) { free(bits); free(supp_ok); free(sel); free(sel_n); return DKB_CAND_ENOMEM; }
#pragma omp parallel num_threads(nps < PAR_MIN ? 1 : nt)
    {
        int tid = 0, tn = 1;
#ifdef _OPENMP
        tid = omp_get_thread_num();
        tn = omp_get_num_threads();
#endif
        const int64_t r0 = nps * tid / tn, r1 = nps * (tid + 1) / tn;
        int64_t m = 0;
        for (int64_t i = r0; i < r1; i++) {
            const uint64_t p = (uint64_t)((uint32_t)pk[i] - 1u);
            if (p < (uint64_t)np && ((bits[p >> 5] >> (p & 31)) & 1)) sel[r0 + m++] = i;
        }
        sel_n[tid] = m;
        sel_n[nt + tid] = r0;
    }
    int64_t nrows_sel = 0;
    for (int t = 0; t < nt; t++) nrows_sel += sel_n[t];
    int sh = 64;
    int64_t sz = 1;
    while (sz < 2 * nrows_sel + 2) sz <<= 1, sh--;
    const int shift = sh; /* the table's slots: size, slot_of(key, shift) */
    const int64_t size = sz;
    uint64_t *tkey = malloc((size_t)size * sizeof(uint64_t));
    int64_t *tsum = malloc((size_t)size * (size_t)(nt + 1) * sizeof(int64_t));
    int32_t *tavail = malloc((size_t)size * sizeof(int32_t));
    uint8_t *tseen = malloc((size_t)size * (size_t)(nt + 1));
    int bad = !tkey || !tsum || !tavail || !tseen;
    if (!bad) {
        memset(tkey, 0, (size_t)size * sizeof(uint64_t)); /* 0: empty (keys are >= 1) */
        for (int t = 0; t < nt; t++)
            for (int64_t k = 0; k < sel_n[t]; k++) {
                const int64_t i = sel[sel_n[nt + t] + k];
                const uint64_t key = (uint64_t)(uint32_t)pk[i] << 32 | (uint32_t)sk[i];
                uint64_t s = slot_of(key, shift);
                while (tkey[s] && tkey[s] != key) s = (s + 1) & (uint64_t)(size - 1);
                tkey[s] = key;
                tavail[s] = av[i];
            }
    }
    free(sel);
    free(sel_n);

    /* lineitem: the year's lines of those parts, summed per table slot */
    const int32_t lo = (int32_t)pdate->i;
    const uint32_t span = (uint32_t)(dkb_add_months(pdate->i, 12) - 1 - pdate->i);
    if (!bad && nrows_sel > 0) {
        memset(tsum, 0, (size_t)size * (size_t)nt * sizeof(int64_t)); /* all nt: the team may be smaller */
        memset(tseen, 0, (size_t)size * (size_t)nt);
        /* the whole columns, or under a memory budget lineitem load by load:
         * the year's lines of the named parts, summed into their (part,
         * supplier) slots per thread */
        static const char *const COLS[] = {"l_partkey", "l_suppkey", "l_quantity", "l_shipdate"};
        dkb_stream st;
        for (dkb_stream_begin(&st, db, env, 4, COLS); dkb_stream_next(&st);) {
            const int32_t *lp = st.cols[0].data, *ls = st.cols[1].data, *sd = st.cols[3].data;
            const int64_t *lq = st.cols[2].data;
            const int64_t nll = st.cols[0].n, nblocks = (nll + BLOCK - 1) / BLOCK;
            /* this load's rows decide the team (at most the nt there are sums for) */
            const int team = nll < PAR_MIN ? 1 : nt;
#pragma omp parallel num_threads(team)
            {
                int tid = 0;
#ifdef _OPENMP
                tid = omp_get_thread_num();
#endif
                int64_t *sum = tsum + (size_t)tid * (size_t)size;
                uint8_t *seen = tseen + (size_t)tid * (size_t)size;
#pragma omp for schedule(dynamic, 8)
                for (int64_t b = 0; b < nblocks; b++) {
                    /* the year and the part bit as a
                     * byte mask (vectorized, with gathers), then its set bytes */
                    const int64_t from = b * BLOCK, to = from + BLOCK < nll ? from + BLOCK : nll;
                    const int len = (int)(to - from);
                    uint8_t m[BLOCK + 8];
                    for (int j = 0; j < len; j++) {
                        const uint32_t p = (uint32_t)lp[from + j] - 1u, in = p < (uint64_t)np, pc = in ? p : 0;
                        m[j] = ((uint32_t)sd[from + j] - (uint32_t)lo <= span) & in &
                               ((bits[pc >> 5] >> (pc & 31)) & 1);
                    }
                    int32_t sel[BLOCK + 16];
                    const int nsel = dkb_select_mask(m, len, sel);
                    for (int x = 0; x < nsel; x++) {
                        const int64_t i = from + sel[x];
                        const uint64_t key = (uint64_t)(uint32_t)lp[i] << 32 | (uint32_t)ls[i];
                        uint64_t s = slot_of(key, shift);
                        while (tkey[s] && tkey[s] != key) s = (s + 1) & (uint64_t)(size - 1);
                        if (!tkey[s]) continue; /* no partsupp row: no subquery row matches */
                        sum[s] += lq[i];
                        seen[s] = 1;
                    }
                }
            }
        }
        const int rc = dkb_stream_end(&st);
        if (rc) {
            free(bits);
            free(tkey);
            free(tsum);
            free(tavail);
            free(tseen);
            free(supp_ok);
            return rc;
        }
        for (int64_t s = 0; s < size; s++) { /* the threads' sums into thread 0's */
            if (!tkey[s]) continue;
            int64_t total = 0;
            int was = 0;
            for (int t = 0; t < nt; t++) {
                total += tsum[(size_t)t * (size_t)size + (size_t)s];
                was |= tseen[(size_t)t * (size_t)size + (size_t)s];
            }
            tsum[s] = total, tseen[s] = (uint8_t)was;
        }
        if (dkb_ranks_many(env)) { /* every rank's sums by (part, supplier) key, added up */
            typedef struct { uint64_t key; int64_t total; } key_sum;
            int64_t nm = 0;
            for (int64_t s = 0; s < size; s++) nm += tkey[s] && tseen[s];
            key_sum *mine = malloc((size_t)(nm + 1) * sizeof *mine);
            void *every = NULL;
            int64_t ne = 0;
            int mrc = mine ? 0 : DKB_CAND_ENOMEM;
            for (int64_t s = 0, k = 0; mine && s < size; s++)
                if (tkey[s] && tseen[s]) mine[k++] = (key_sum){tkey[s], tsum[s]};
            if (!mrc) mrc = dkb_ranks_gather(env, mine, nm, sizeof *mine, &every, &ne);
            free(mine);
            if (mrc) {
                free(bits), free(tkey), free(tsum), free(tavail), free(tseen), free(supp_ok);
                return mrc;
            }
            memset(tsum, 0, (size_t)size * sizeof(int64_t));
            memset(tseen, 0, (size_t)size);
            const key_sum *e = every;
            for (int64_t i = 0; i < ne; i++) {
                uint64_t s = slot_of(e[i].key, shift);
                while (tkey[s] && tkey[s] != e[i].key) s = (s + 1) & (uint64_t)(size - 1);
                if (!tkey[s]) continue;
                tsum[s] += e[i].total, tseen[s] = 1;
            }
            dkb_ranks_gather_free(every, NULL);
        }
        for (int64_t s = 0; s < size; s++) {
            if (!tkey[s]) continue;
            const uint64_t supp = (uint64_t)((uint32_t)(tkey[s] & 0xffffffffu) - 1u);
            if (tseen[s] && (int64_t)tavail[s] * 200 > tsum[s] && supp < (uint64_t)ns) supp_ok[supp] = 1;
        }
    }
    free(bits);
    free(tkey);
    free(tsum);
    free(tavail);
    free(tseen);
    if (bad) { free(supp_ok); return DKB_CAND_ENOMEM; }

    /* the nation's suppliers with the bit, by name */
    const int32_t *sn = snation->data;
    int64_t m = 0;
    for (int64_t s = 0; s < ns; s++) m += supp_ok[s] && sn[s] == nation;
    int64_t *rows = malloc((size_t)(m > 0 ? m : 1) * sizeof(int64_t));
    if (!rows) { free(supp_ok); return DKB_CAND_ENOMEM; }
    m = 0;
    for (int64_t s = 0; s < ns; s++)
        if (supp_ok[s] && sn[s] == nation) rows[m++] = s;
    free(supp_ok);
    g_names = sname;
    qsort(rows, (size_t)m, sizeof(int64_t), by_name);
    g_names = NULL;
    if (!dkb_ranks_writes(env, res)) { free(rows); return 0; }
    if (m > res->cap) { free(rows); return DKB_CAND_ECAP; }
    for (int64_t r = 0; r < m; r++)
        if (dkb_put_strcol(c_name, r, sname, rows[r]) || dkb_put_strcol(c_addr, r, saddr, rows[r])) {
            free(rows);
            return DKB_CAND_ECAP;
        }
    free(rows);
    res->nrows = m;
    return 0;
}
