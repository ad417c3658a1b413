/* q21.full.c: expert CPU candidate for TPC-H Q21 (Suppliers Who Kept Orders
 * Waiting).
 *
 *   select s_name, count(*) as numwait
 *   from supplier, lineitem l1, orders, nation
 *   where s_suppkey = l1.l_suppkey and o_orderkey = l1.l_orderkey and o_orderstatus = 'F'
 *     and l1.l_receiptdate > l1.l_commitdate
 *     and exists (select * from lineitem l2
 *                 where l2.l_orderkey = l1.l_orderkey and l2.l_suppkey <> l1.l_suppkey)
 *     and not exists (select * from lineitem l3
 *                     where l3.l_orderkey = l1.l_orderkey and l3.l_suppkey <> l1.l_suppkey
 *                       and l3.l_receiptdate > l3.l_commitdate)
 *     and s_nationkey = n_nationkey and n_name = ':nation'
 *   group by s_name order by numwait desc, s_name limit 100;
 *
 * Plan: an order counts when it is F, has a second supplier (EXISTS) and all
 * its late lines share one supplier (NOT EXISTS) of the nation; it then adds
 * its number of late lines (each an l1 row) to that supplier. Such an order
 * has a late line of a nation supplier, so the scan of lineitem first
 * selects, branch-free, only the late lines whose supplier is of the nation
 * (a byte per supplier over the dense suppkeys 1..N; about 1 line in 50),
 * reading neither orderkeys nor orders; only the orders of those lines are
 * then examined whole: their run of lines (adjacent: lineitem is grouped by
 * orderkey in the order of orders) walked back and forth from the line,
 * the order found by galloping forward in o_orderkey. Chunks of orders and
 * their lines (dkb_chunk_runs) are taken by the threads as they come;
 * counts per chunk per nation supplier, merged, sorted by (numwait desc,
 * s_name) and cut to 100. Integer counts: exact.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey, so an order's lines (all that EXISTS and NOT
 * EXISTS look at) are on one rank and each rank decides its orders locally
 * (supplier and nation whole on every rank); the counts per nation supplier
 * (and the error flag) are summed over the ranks in one all-reduce; rank 0
 * sorts, cuts to 100 and writes.
 */
#include <stdlib.h>
#if defined(__AVX512F__)
#include <immintrin.h> /* defines: _mm512_* (select_late) */
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_chunk_runs, dkb_gallop_i32, dkb_put_strcol */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

enum { SUB = 1024, AHEAD = 4 }; /* lines per selection block; prefetch distance */

typedef struct {
    int64_t supp; /* row in supplier */
    int64_t count;
} wait_row;

static const dkb_cand_vec *g_names; /* for the sort's comparison only (set, used and done in one call) */

static int by_count_then_name(const void *a, const void *b) {
    const wait_row *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    const int64_t *off = g_names->data;
    const int64_t lx = off[x->supp + 1] - off[x->supp], ly = off[y->supp + 1] - off[y->supp];
    const int c = memcmp(g_names->bytes + off[x->supp], g_names->bytes + off[y->supp], (size_t)(lx < ly ? lx : ly));
    if (c) return c;
    return (lx > ly) - (lx < ly);
}

/* The lines i of [0, n) (from line base) that are late (receipt after
 * commit) and whose supplier's bit is set in nat (suppkeys 1..ns, bit
 * suppkey - 1) into sel[0..) (sel holds n + 16); their number. *bad := 1
 * for a suppkey outside 1..ns. 16 lines at a time where built with AVX-512
 * (a gather of the bitmap words of the late lines only, a compress of the
 * selected indices), then one by one. */
static int select_late(const int32_t *ls, const int32_t *rd, const int32_t *cd, const uint32_t *nat, uint32_t ns,
                       int n, int32_t *sel, int *bad) {
    int m = 0, i = 0;
#if defined(__AVX512F__)
    const __m512i one = _mm512_set1_epi32(1), vns = _mm512_set1_epi32((int)ns), low = _mm512_set1_epi32(31);
    __m512i idx = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    for (; i + 16 <= n; i += 16, idx = _mm512_add_epi32(idx, _mm512_set1_epi32(16))) {
        const __m512i s = _mm512_sub_epi32(_mm512_loadu_si512(ls + i), one);
        const __mmask16 in = _mm512_cmplt_epu32_mask(s, vns);
        *bad |= in != 0xFFFF;
        const __mmask16 late = _mm512_mask_cmpgt_epi32_mask(in, _mm512_loadu_si512(rd + i), _mm512_loadu_si512(cd + i));
        const __m512i w = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), late, _mm512_srli_epi32(s, 5), nat, 4);
        const __m512i bit = _mm512_and_si512(_mm512_srlv_epi32(w, _mm512_and_si512(s, low)), one);
        const __mmask16 hit = _mm512_mask_test_epi32_mask(late, bit, bit);
        _mm512_storeu_si512(sel + m, _mm512_maskz_compress_epi32(hit, idx));
        m += __builtin_popcount(hit);
    }
#endif
    for (; i < n; i++) {
        const uint32_t s = (uint32_t)ls[i] - 1u, in = s < ns, k = in ? s : 0;
        *bad |= !in;
        sel[m] = i;
        m += (rd[i] > cd[i]) & (int)(nat[k >> 5] >> (k & 31)) & (int)in;
    }
    return m;
}

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *lkey, *lsupp, *lcommit, *lreceipt, *okey, *ostatus, *skey, *sname, *snation, *nkey, *nname;
    const dkb_cand_param *pnation;
    dkb_cand_res_col *c_name, *c_wait;
    if (DKB_BIND_COLS(db, "lineitem", "l_orderkey:i32 l_suppkey:i32 l_commitdate:i32 l_receiptdate:i32", &lkey, &lsupp,
                      &lcommit, &lreceipt) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderstatus:dict", &okey, &ostatus) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_name:str s_nationkey:i32", &skey, &sname, &snation) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_PARAMS(params, "nation:str", &pnation) ||
        DKB_BIND_RES(res, "s_name:str numwait:int", &c_name, &c_wait))
        return DKB_CAND_EINVAL;
    res->nrows = 0;

    const int ncode = dkb_cand_dict_code(nname->dict, pnation->s);
    const int fcode = dkb_cand_dict_code(ostatus->dict, "F");
    int64_t nation = -1;
    for (int64_t r = 0; ncode >= 0 && r < nname->n; r++)
        if (((const uint8_t *)nname->data)[r] == ncode) nation = ((const int32_t *)nkey->data)[r];
    if (nation < 0 || fcode < 0) return 0;

    /* the nation's suppliers: a slot per supplier row (suppkey - 1), and
     * whether it is of the nation */
    const int64_t ns = skey->n, nl = lkey->n; /* nl: the whole table's rows (also under a budget) */
    const int32_t *sn = snation->data, *sk = skey->data;
    int32_t *slot = malloc((size_t)(ns + 1) * sizeof(int32_t));
    uint32_t *in_nat = calloc((size_t)(ns >> 5) + 1, sizeof(uint32_t)); /* bit per supplier */
    int64_t *slot_supp = malloc((size_t)(ns + 1) * sizeof(int64_t));
    const int nt = nl < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const int64_t nchunks = nl < PAR_MIN ? 1 : (int64_t)nt * 16;
    int32_t nslots = 0;
    int bad = 0;
    for (int64_t s = 0; slot && in_nat && slot_supp && s < ns; s++) {
        bad |= sk[s] != s + 1;
        slot[s] = sn[s] == nation ? nslots : -1;
        if (sn[s] == nation) in_nat[s >> 5] |= 1u << (s & 31), slot_supp[nslots++] = s;
    }
    int64_t *counts =
        slot && in_nat && slot_supp ? calloc((size_t)nchunks * (size_t)(nslots + 1), sizeof(int64_t)) : NULL;
    if (!counts) {
        free(slot), free(in_nat), free(slot_supp);
        return DKB_CAND_ENOMEM;
    }
    /* the whole columns, or under a memory budget lineitem and orders load by
     * load (co-partitioned by orderkey: an order's lines are whole in a
     * load): the late lines counted per supplier of the nation */
    const uint8_t f = (uint8_t)fcode; /* the 'F' order status code */
    static const char *const COLS[] = {"l_orderkey",    "l_suppkey",  "l_commitdate",
                                       "l_receiptdate", "o_orderkey", "o_orderstatus"};
    if (!bad && nslots > 0) {
        dkb_stream st;
        for (dkb_stream_begin(&st, db, env, 6, COLS); dkb_stream_next(&st);) {
            const int32_t *lk = st.cols[0].data, *ls = st.cols[1].data, *cd = st.cols[2].data, *rd = st.cols[3].data;
            const int32_t *ok = st.cols[4].data;
            const uint8_t *ost = st.cols[5].data;
            const int64_t nll = st.cols[0].n, nol = st.cols[4].n;
            /* this load's rows decide the team and its chunks (at most the whole tables' nchunks) */
            const int team = nll < PAR_MIN ? 1 : nt;
            const int64_t nch = nll < PAR_MIN ? 1 : (int64_t)team * 16;
#pragma omp parallel for num_threads(team) schedule(dynamic, 1) reduction(| : bad) if(nslots > 0)
            for (int64_t c = 0; c < nch; c++) {
                int64_t o0, o1, j0, j1;
                if (nslots == 0 || !dkb_chunk_runs(ok, nol, lk, nll, c, nch, &o0, &o1, &j0, &j1)) continue;
                int64_t *cnt = counts + c * (nslots + 1);
                int64_t o = o0, prev_key = -1;
                int32_t sel[SUB + 16];
                for (int64_t b = j0; b < j1; b += SUB) {
                    const int n = (int)(b + SUB < j1 ? SUB : j1 - b);
                    const int nsel = select_late(ls + b, rd + b, cd + b, in_nat, (uint32_t)ns, n, sel, &bad);
                    for (int x = 0; x < nsel; x++) { /* the order of such a line, whole */
                        if (x + AHEAD < nsel) __builtin_prefetch(&lk[b + sel[x + AHEAD]]);
                        const int64_t j = b + sel[x];
                        const int32_t key = lk[j];
                        if (key == prev_key) continue; /* its order was seen at an earlier line */
                        prev_key = key;
                        o = dkb_gallop_i32(ok, o, o1, key);
                        if (o >= o1 || ok[o] != key || ost[o] != f) continue;
                        int64_t a = j, e = j + 1;
                        while (a > j0 && lk[a - 1] == key) a--;
                        while (e < j1 && lk[e] == key) e++;
                        const int32_t late = ls[j];
                        int multi = 0, late_multi = 0, nlate = 0;
                        for (int64_t i = a; i < e; i++) {
                            const int lt = rd[i] > cd[i], other = ls[i] != late;
                            multi |= other;
                            late_multi |= lt & other;
                            nlate += lt;
                        }
                        if (multi && !late_multi) cnt[slot[late - 1]] += nlate;
                    }
                }
            }
        }
        const int rc = dkb_stream_end(&st);
        if (rc) {
            free(slot), free(in_nat), free(slot_supp), free(counts);
            return rc;
        }
    }
    /* per nation supplier: the chunks' counts, then the ranks' (with the error flag) */
    int64_t *tot = calloc((size_t)nslots + 2, sizeof(int64_t));
    if (!tot) {
        free(slot), free(in_nat), free(slot_supp), free(counts);
        return DKB_CAND_ENOMEM;
    }
    for (int32_t k = 0; k < nslots; k++)
        for (int64_t c = 0; c < nchunks; c++) tot[k] += counts[c * (nslots + 1) + k];
    tot[nslots] = bad;
    const int mrc = dkb_ranks_sum_i64(env, tot, (int64_t)nslots + 1);
    bad = tot[nslots] != 0;
    if (mrc || (!bad && !dkb_ranks_writes(env, res))) {
        free(tot), free(slot), free(in_nat), free(slot_supp), free(counts);
        return mrc;
    }
    wait_row *rows = malloc((size_t)(nslots + 1) * sizeof(wait_row));
    int64_t m = 0;
    if (!rows) bad = 1;
    for (int32_t k = 0; !bad && k < nslots; k++)
        if (tot[k] > 0) rows[m++] = (wait_row){slot_supp[k], tot[k]};
    free(tot);
    free(slot), free(in_nat), free(slot_supp), free(counts);
    if (bad) {
        free(rows);
        return DKB_CAND_EINTERNAL;
    }
    g_names = sname;
    qsort(rows, (size_t)m, sizeof(wait_row), by_count_then_name);
    g_names = NULL;
    const int64_t nout = m < 100 ? m : 100;
    int rc = nout > res->cap ? DKB_CAND_ECAP : DKB_CAND_OK;
    for (int64_t r = 0; r < nout && !rc; r++) {
        rc = dkb_put_strcol(c_name, r, sname, rows[r].supp);
        c_wait->i64[r] = rows[r].count;
        c_wait->is_null[r] = 0;
    }
    free(rows);
    if (!rc) res->nrows = nout;
    return rc;
}
