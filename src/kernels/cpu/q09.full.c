/* q09.full.c: expert CPU candidate for TPC-H Q9 (Product Type Profit Measure).
 *
 *   select nation, o_year, sum(amount) as sum_profit
 *   from (select n_name as nation, extract(year from o_orderdate) as o_year,
 *                l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
 *         from part, supplier, lineitem, partsupp, orders, nation
 *         where s_suppkey = l_suppkey and ps_suppkey = l_suppkey
 *           and ps_partkey = l_partkey and p_partkey = l_partkey
 *           and o_orderkey = l_orderkey and s_nationkey = n_nationkey
 *           and p_name like '%:color%') as profit
 *   group by nation, o_year order by nation, o_year desc;
 *
 * Plan: LIKE on p_name (a substring search, or a general LIKE matcher when
 * the word holds wildcards), in parallel, into a bitmap over the dense
 * partkeys; the matching parts' partsupp rows go into a compact
 * open-addressing table keyed by (partkey, suppkey) holding the cost (and
 * the multiplicity of the pair, see slot); the
 * supplier's nation is an array over the dense suppkeys. Then lineitem is
 * scanned in chunks: each block of 1024 items selects, branch-free, those
 * whose part is in the bitmap (dkb_select_bits), prefetches the selected rows' wide columns
 * a few ahead, looks up the cost, and finds the item's order by galloping
 * forward in o_orderkey (lineitem and orders are both sorted by
 * orderkey); the exact scale-4 amount goes to per-chunk __int128 sums per
 * (nation key, order year); orderdates lie in 1992..1998 by the spec
 * (others are refused). Groups
 * are sorted by nation name (code order is string order), year desc.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders and lineitem are
 * co-partitioned by orderkey (part, partsupp, supplier, nation whole on every
 * rank), so each rank joins its share locally; the (nation, year) exact sums
 * and which groups occur are summed over the ranks in one all-reduce; rank 0
 * writes.
 */
#include <stdlib.h>
#include <string.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS, dkb_days_from_civil, dkb_find_row, dkb_gallop_i32,
                              dkb_like, dkb_lower_bound_i32, dkb_max_i32, dkb_put_dec, dkb_put_dict,
                              dkb_select_bits */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { YEAR0 = 1992, NYEAR = 8, NAT = 256, SUB = 1024, AHEAD = 8 };

/* One (partkey, suppkey) of the matching parts' partsupp rows. The pair
 * is partsupp's key by the spec, but dbgen repeats pairs below SF 0.01 (4
 * suppliers drawn from under 100); the join then yields one row per copy,
 * so a slot holds how many rows have the pair and the sum of their costs:
 * the copies' amounts add up to n * price * (1 - discount) - costs * quantity. */
typedef struct {
    uint64_t key; /* partkey << 32 | suppkey, or EMPTY */
    int64_t cost; /* sum of the rows' ps_supplycost */
    int64_t n;    /* rows with this pair */
} slot;

static inline uint64_t hash_key(uint64_t k) {
    k ^= k >> 31;
    k *= 0x9e3779b97f4a7c15ull;
    return k ^ (k >> 29);
}

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: lineitem and orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *pkey, *pname, *skey, *snat, *pspart, *pssupp, *pscost, *okey, *odate, *lkey,
        *lpart, *lsupp, *lqty, *lprice, *ldisc;
    const dkb_cand_param *color;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_name:str", &pkey, &pname) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_supplycost:dec2", &pspart, &pssupp, &pscost) ||
        DKB_BIND_COLS(db, "orders", "o_orderkey:i32 o_orderdate:i32", &okey, &odate) ||
        DKB_BIND_COLS(db, "lineitem",
                      "l_orderkey:i32 l_partkey:i32 l_suppkey:i32 l_quantity:dec2 l_extendedprice:dec2 l_discount:dec2",
                      &lkey, &lpart, &lsupp, &lqty, &lprice, &ldisc) ||
        DKB_BIND_PARAMS(params, "color:str", &color))
        return DKB_CAND_EINVAL;
    if (res->ncols != 3 || res->cols[0].type != DKB_CAND_RES_STRING || res->cols[1].type != DKB_CAND_RES_INT ||
        res->cols[2].type != DKB_CAND_RES_DECIMAL || res->cols[2].scale < 4)
        return DKB_CAND_EINVAL;
    const int nt = env->threads > 0 ? env->threads : 1;

    /* p_name like '%color%' -> a byte per partkey (threads never share a
     * word), then a bitmap for the lineitem scan */
    const int64_t np = pkey->n, maxp = dkb_max_i32(pkey->data, np);
    uint8_t *pmatch = calloc((size_t)maxp + 1, 1);
    uint64_t *pbits = calloc((size_t)(maxp >> 6) + 1, sizeof(uint64_t));
    const size_t clen = strlen(color->s);
    const int wild = strpbrk(color->s, "%_") != NULL;
    char *pattern = malloc(clen + 3);
    if (!pmatch || !pbits || !pattern) {
        free(pmatch), free(pbits), free(pattern);
        return DKB_CAND_ENOMEM;
    }
    pattern[0] = '%';
    memcpy(pattern + 1, color->s, clen);
    pattern[clen + 1] = '%', pattern[clen + 2] = 0;
    {
        const int32_t *pk = pkey->data;
        const int64_t *off = pname->data, nlike = np < PAR_MIN ? 1 : (int64_t)nt * 8;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(np >= PAR_MIN)
        for (int64_t c = 0; c < nlike; c++) {
            const int64_t r1 = np * (c + 1) / nlike;
            for (int64_t r = np * c / nlike; r < r1; r++) {
                if (wild) {
                    if (!dkb_like(pname->bytes + off[r], off[r + 1] - off[r], pattern)) continue;
                } else if ((r = dkb_find_row(pname, r, r1, color->s, clen, NULL)) == r1)
                    break;
                if (pk[r] >= 0) pmatch[pk[r]] = 1;
            }
        }
        for (int64_t p = 0; p <= maxp; p++) pbits[p >> 6] |= (uint64_t)pmatch[p] << (p & 63);
    }
    free(pattern);

    /* the matching parts' partsupp rows: (partkey, suppkey) -> cost. Their
     * row numbers first: partsupp is sorted by partkey as dbgen writes it
     * (checked), so each matching part's rows are found by galloping (one
     * part in ~18) instead of testing every row; otherwise every row. */
    const int32_t *psp = pspart->data, *pss = pssupp->data;
    const int64_t *psc = pscost->data, nps = pspart->n;
    int32_t *psrow = malloc(((size_t)nps + 1) * sizeof(int32_t));
    int64_t nsel = 0;
    int sorted = nps < INT32_MAX;
    for (int64_t i = 1; i < nps; i++) sorted &= psp[i - 1] <= psp[i];
    if (psrow && sorted)
        for (int64_t p = 0, at = 0; p <= maxp && at < nps; p++) {
            if (!pmatch[p]) continue;
            for (at = dkb_gallop_i32(psp, at, nps, p); at < nps && psp[at] == p; at++) psrow[nsel++] = (int32_t)at;
        }
    else if (psrow)
        for (int64_t i = 0; i < nps; i++)
            if ((uint32_t)psp[i] <= (uint64_t)maxp && pmatch[psp[i]]) psrow[nsel++] = (int32_t)i;
    uint64_t cap = 16;
    while (cap < 2 * (uint64_t)nsel) cap <<= 1;
    slot *table = malloc(cap * sizeof(slot)); /* key and cost side by side: one miss per probe */
    const int64_t maxs = dkb_max_i32(skey->data, skey->n);
    int16_t *s_nat = malloc(((size_t)maxs + 1) * sizeof(int16_t));
    const int64_t nl = lkey->n; /* the whole table's rows (also under a budget) */
    const int64_t nchunks = nl < 64 ? 1 : (int64_t)nt * 16;
    __int128 *sums = calloc((size_t)nchunks * NAT * NYEAR, sizeof(__int128));
    uint8_t *seen = calloc((size_t)nchunks * NAT * NYEAR, 1);
    if (!psrow || !table || !s_nat || !sums || !seen) {
        free(pmatch), free(pbits), free(psrow), free(table), free(s_nat), free(sums), free(seen);
        return DKB_CAND_ENOMEM;
    }
    const uint64_t mask = cap - 1, EMPTY = ~0ull;
    for (uint64_t h = 0; h < cap; h++) table[h].key = EMPTY;
    for (int64_t r = 0; r < nsel; r++) {
        const int64_t i = psrow[r];
        const uint64_t k = (uint64_t)(uint32_t)psp[i] << 32 | (uint32_t)pss[i];
        uint64_t h = hash_key(k) & mask;
        while (table[h].key != EMPTY && table[h].key != k) h = (h + 1) & mask;
        if (table[h].key == EMPTY) table[h].key = k, table[h].cost = 0, table[h].n = 0;
        table[h].cost += psc[i];
        table[h].n++;
    }
    {
        const int32_t *sk = skey->data, *sn = snat->data;
        for (int64_t i = 0; i <= maxs; i++) s_nat[i] = -1;
        for (int64_t i = 0; i < skey->n; i++)
            if (sk[i] >= 0 && sn[i] >= 0 && sn[i] < NAT) s_nat[sk[i]] = (int16_t)sn[i];
    }
    int32_t jan1[NYEAR + 1];
    for (int y = 0; y <= NYEAR; y++) jan1[y] = (int32_t)dkb_days_from_civil(YEAR0 + y, 1, 1);

    /* the whole columns, or under a memory budget orders and lineitem load by
     * load (co-partitioned by orderkey: a load's lines' orders are in its
     * orders): the profit per nation and year into the chunks' sums */
    static const char *const COLS[] = {"o_orderkey", "o_orderdate", "l_orderkey",      "l_partkey",
                                       "l_suppkey",  "l_quantity",  "l_extendedprice", "l_discount"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 8, COLS); dkb_stream_next(&st);) {
        const int32_t *ok = st.cols[0].data, *od = st.cols[1].data;
        const int32_t *lk = st.cols[2].data, *lpa = st.cols[3].data, *lsu = st.cols[4].data;
        const int64_t *lq = st.cols[5].data, *lp = st.cols[6].data, *ld = st.cols[7].data;
        const int64_t nol = st.cols[0].n, nll = st.cols[2].n;
        /* this load's lines decide the chunks (at most the whole table's nchunks) */
        const int64_t nch = nll < 64 ? 1 : nchunks;
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) reduction(| : bad) if(nll >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            /* a range of line items; their orders found by galloping forward in
             * orders (both sorted by orderkey) */
            const int64_t j0 = c * nll / nch, j1 = (c + 1) * nll / nch;
            if (j0 >= j1) continue;
            int64_t o = dkb_lower_bound_i32(ok, nol, lk[j0]);
            __int128 *sum = sums + c * NAT * NYEAR;
            uint8_t *sn = seen + c * NAT * NYEAR;
            int32_t sel[SUB + 16];
            for (int64_t b = j0; b < j1 && !bad; b += SUB) {
                const int ns = dkb_select_bits(lpa + b, (int)(b + SUB < j1 ? SUB : j1 - b), pbits, maxp + 1, sel);
                for (int x = 0; x < ns; x++) {
                    if (x + 2 * AHEAD < ns) { /* the selected rows' wide columns, well ahead */
                        const int64_t jn = b + sel[x + 2 * AHEAD];
                        __builtin_prefetch(&lp[jn]);
                        __builtin_prefetch(&ld[jn]);
                        __builtin_prefetch(&lq[jn]);
                        __builtin_prefetch(&lsu[jn]);
                    }
                    if (x + AHEAD < ns) { /* and the slot of a row nearer */
                        const int64_t jn = b + sel[x + AHEAD];
                        const uint64_t kn = (uint64_t)(uint32_t)lpa[jn] << 32 | (uint32_t)lsu[jn];
                        __builtin_prefetch(&table[hash_key(kn) & mask]);
                    }
                    const int64_t j = b + sel[x];
                    const int64_t pa = lpa[j], su = lsu[j];
                    const uint64_t key = (uint64_t)(uint32_t)pa << 32 | (uint32_t)su;
                    uint64_t h = hash_key(key) & mask;
                    while (table[h].key != key && table[h].key != EMPTY) h = (h + 1) & mask;
                    if (table[h].key == EMPTY || su < 0 || su > maxs || s_nat[su] < 0) continue;
                    o = dkb_gallop_i32(ok, o, nol, lk[j]);
                    if (o >= nol || ok[o] != lk[j]) continue; /* no such order: no join row */
                    const int32_t d = od[o];
                    if (d < jan1[0] || d >= jan1[NYEAR]) { bad = 1; break; }
                    int y = 0;
                    while (d >= jan1[y + 1]) y++;
                    const int g = s_nat[su] * NYEAR + y;
                    sum[g] += (__int128)table[h].n * (lp[j] * (100 - ld[j])) - (__int128)table[h].cost * lq[j];
                    sn[g] = 1;
                }
            }
        }
    }
    const int st_rc = dkb_stream_end(&st);
    if (st_rc) {
        free(pmatch), free(pbits), free(psrow), free(table), free(s_nat), free(sums), free(seen);
        return st_rc;
    }
    free(pmatch), free(pbits), free(psrow), free(table), free(s_nat);
    /* the chunks' sums into chunk 0's, then the ranks' (with the groups
     * seen, as 0/1 sums, and the error flag, in one all-reduce) */
    __int128 *merged = calloc((size_t)NAT * NYEAR * 2 + 1, sizeof *merged);
    if (!merged) {
        free(sums), free(seen);
        return DKB_CAND_ENOMEM;
    }
    for (int64_t c = 0; c < nchunks; c++)
        for (int g = 0; g < NAT * NYEAR; g++) merged[g] += sums[c * NAT * NYEAR + g], merged[NAT * NYEAR + g] |= seen[c * NAT * NYEAR + g];
    merged[2 * NAT * NYEAR] = bad;
    {
        const int mrc = dkb_ranks_sum_i128(env, merged, (int64_t)NAT * NYEAR * 2 + 1);
        if (mrc) {
            free(merged), free(sums), free(seen);
            return mrc;
        }
    }
    bad = merged[2 * NAT * NYEAR] != 0;
    for (int g = 0; g < NAT * NYEAR; g++) sums[g] = merged[g], seen[g] = merged[NAT * NYEAR + g] != 0;
    free(merged);
    if (!bad && !dkb_ranks_writes(env, res)) {
        free(sums), free(seen);
        return 0;
    }
    if (bad) {
        free(sums), free(seen);
        return DKB_CAND_EINTERNAL;
    }

    /* groups by nation name code, year desc */
    int code_of[NAT];
    for (int n = 0; n < NAT; n++) code_of[n] = -1;
    const int32_t *nk = nkey->data;
    const uint8_t *nn = nname->data;
    for (int64_t i = 0; i < nkey->n; i++)
        if (nk[i] >= 0 && nk[i] < NAT) code_of[nk[i]] = nn[i];
    int64_t r = 0;
    dkb_cand_res_col *c_nat = &res->cols[0], *c_year = &res->cols[1], *c_sum = &res->cols[2];
    for (int code = 0; code < nname->dict->size && !bad; code++)
        for (int n = 0; n < NAT && !bad; n++) {
            if (code_of[n] != code) continue;
            for (int y = NYEAR - 1; y >= 0; y--) {
                __int128 s = 0;
                int any = 0;
                s = sums[n * NYEAR + y];
                any = seen[n * NYEAR + y];
                if (!any) continue;
                if (r >= res->cap || dkb_put_dict(c_nat, r, nname->dict, code)) { bad = 1; break; }
                c_year->i64[r] = YEAR0 + y;
                c_year->is_null[r] = 0;
                dkb_put_dec(c_sum, r, s, 4);
                r++;
            }
        }
    free(sums), free(seen);
    if (bad) return DKB_CAND_ECAP;
    res->nrows = r;
    return 0;
}
