/* q02.full.c: expert CPU candidate for TPC-H Q2 (Minimum Cost Supplier).
 *
 *   select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
 *   from part, supplier, partsupp, nation, region
 *   where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *     and p_size = :size and p_type like '%:type'
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey and r_name = ':region'
 *     and ps_supplycost = (select min(ps_supplycost)
 *         from partsupp, supplier, nation, region
 *         where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *           and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *           and r_name = ':region')
 *   order by s_acctbal desc, n_name, s_name, p_partkey limit 100;
 *
 * Plan: predicates on dictionary codes: LIKE is evaluated once per p_type
 * dictionary entry (a code lookup table), the region is a code. The parts
 * of the size and type get a compact index in an array over the dense
 * partkeys; the region's suppliers their row in an array over the dense
 * suppkeys. One parallel pass over partsupp keeps the (few) rows of a
 * selected part and a region supplier in each chunk's own slice; the
 * decorrelated subquery is the minimum cost per compact part index over
 * those rows, and the rows at the minimum are sorted on the ORDER BY keys
 * (acctbal, name code = string order, s_name bytes, partkey) for the top
 * 100. Only those rows' text columns are read (late materialization).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): part and partsupp are split
 * together by partkey (supplier, nation, region whole on every rank), so a
 * part's minimum cost is found on one rank; each rank's first 100 rows are
 * gathered in rank order (dkb_ranks_gather), their supplier name pointers
 * made again from the supplier row (an address is the rank's own), and
 * sorted by the same total order; rank 0 writes the first 100.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_like, dkb_max_i32, dkb_put_dec, dkb_put_dict,
                              dkb_put_str, dkb_put_text */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

enum { LIMIT = 100 };

typedef struct {
    int64_t acctbal;
    int ncode;
    int64_t partkey;
    int64_t srow;
    int mfgr;             /* its part's p_mfgr code */
    const char *sname;
    int64_t sname_len;
    int64_t cost;
    int64_t pidx;
} cand;

static int order(const void *a, const void *b) {
    const cand *x = a, *y = b;
    if (x->acctbal != y->acctbal) return x->acctbal > y->acctbal ? -1 : 1;
    if (x->ncode != y->ncode) return x->ncode < y->ncode ? -1 : 1;
    const int64_t m = x->sname_len < y->sname_len ? x->sname_len : y->sname_len;
    const int c = memcmp(x->sname, y->sname, (size_t)m);
    if (c) return c;
    if (x->sname_len != y->sname_len) return x->sname_len < y->sname_len ? -1 : 1;
    return (x->partkey > y->partkey) - (x->partkey < y->partkey);
}

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: part and partsupp load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *rkey, *rname, *nkey, *nname, *nreg, *pkey, *pmfgr, *psize, *ptype, *skey, *sname, *saddr,
        *snat, *sphone, *sbal, *scomment, *pspart, *pssupp, *pscost;
    const dkb_cand_param *size, *type, *region;
    dkb_cand_res_col *r_bal, *r_sname, *r_nname, *r_pkey, *r_mfgr, *r_addr, *r_phone, *r_comment;
    if (DKB_BIND_COLS(db, "region", "r_regionkey:i32 r_name:dict", &rkey, &rname) ||
        DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict n_regionkey:i32", &nkey, &nname, &nreg) ||
        DKB_BIND_COLS(db, "part", "p_partkey:i32 p_mfgr:dict p_size:i32 p_type:dict", &pkey, &pmfgr, &psize, &ptype) ||
        DKB_BIND_COLS(db, "supplier",
                      "s_suppkey:i32 s_name:str s_address:str s_nationkey:i32 s_phone:str s_acctbal:i64 s_comment:str",
                      &skey, &sname, &saddr, &snat, &sphone, &sbal, &scomment) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_supplycost:i64", &pspart, &pssupp, &pscost) ||
        DKB_BIND_PARAMS(params, "size type:str region:str", &size, &type, &region) ||
        DKB_BIND_RES(res, "s_acctbal:dec s_name:str n_name:str p_partkey:int p_mfgr:str s_address:str s_phone:str "
                          "s_comment:str",
                     &r_bal, &r_sname, &r_nname, &r_pkey, &r_mfgr, &r_addr, &r_phone, &r_comment) ||
        r_bal->scale < sbal->scale || ptype->dict->size > 256)
        return DKB_CAND_EINVAL;

    /* the region's nations (name code per nation key) */
    const int rcode = dkb_cand_dict_code(rname->dict, region->s);
    int ncode_of[256];
    uint8_t nat_ok[256] = {0};
    {
        const int32_t *rk = rkey->data, *nk = nkey->data, *nr = nreg->data;
        const uint8_t *rn = rname->data, *nn = nname->data;
        for (int64_t i = 0; i < nkey->n; i++) {
            if (nk[i] < 0 || nk[i] > 255) return DKB_CAND_EINTERNAL;
            ncode_of[nk[i]] = nn[i];
            for (int64_t j = 0; j < rkey->n; j++)
                if (rn[j] == rcode && rk[j] == nr[i]) nat_ok[nk[i]] = 1;
        }
    }
    /* p_type like '%:type', once per dictionary entry */
    uint8_t type_ok[256] = {0};
    {
        const size_t tl = strlen(type->s);
        char *pattern = malloc(tl + 2);
        if (!pattern) return DKB_CAND_ENOMEM;
        pattern[0] = '%';
        memcpy(pattern + 1, type->s, tl + 1);
        for (int c = 0; c < ptype->dict->size; c++)
            type_ok[c] = (uint8_t)dkb_like(ptype->dict->str[c], (int64_t)ptype->dict->len[c], pattern);
        free(pattern);
    }
    const int64_t maxs = dkb_max_i32(skey->data, skey->n);
    int32_t *srow = malloc(((size_t)maxs + 1) * sizeof(int32_t));
    if (!srow) return DKB_CAND_ENOMEM;
    {
        const int32_t *sk = skey->data, *sn = snat->data;
        for (int64_t k = 0; k <= maxs; k++) srow[k] = -1;
        for (int64_t i = 0; i < skey->n; i++)
            if (sk[i] >= 0 && sn[i] >= 0 && sn[i] < 256 && nat_ok[sn[i]]) srow[sk[i]] = (int32_t)i;
    }
    /* the whole columns, or under a memory budget part and partsupp load by
     * load (co-partitioned by partkey, so each part's minimum is whole in a
     * load): each selected part's cheapest region suppliers, appended to cs */
    const int64_t want_size = size->i;
    const int32_t *sn = snat->data;
    const int64_t *sb = sbal->data, *soff = sname->data;
    const char *sbytes = sname->bytes;
    const int nt = env->threads > 0 ? env->threads : 1;
    cand *cs = NULL;
    int64_t nbest = 0, cap = 0;
    int rc = DKB_CAND_OK;
    static const char *const COLS[] = {"p_partkey",  "p_mfgr",     "p_size",       "p_type",
                                       "ps_partkey", "ps_suppkey", "ps_supplycost"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 7, COLS); !rc && dkb_stream_next(&st);) {
        const int32_t *pk = st.cols[0].data, *ps = st.cols[2].data, *pp = st.cols[4].data, *psu = st.cols[5].data;
        const uint8_t *pm = st.cols[1].data, *pt = st.cols[3].data;
        const int64_t *pc = st.cols[6].data;
        const int64_t np = st.cols[0].n, nps = st.cols[4].n, maxp = dkb_max_i32(pk, np);
        const int64_t nchunks = nps < 1024 ? 1 : (int64_t)nt * 8;
        int32_t *pidx = malloc(((size_t)maxp + 1) * sizeof(int32_t));
        uint8_t *mfgr = malloc((size_t)np + 1);
        int64_t *hitrow = malloc(((size_t)nps + 1) * sizeof(int64_t));
        int64_t *nhit = calloc((size_t)nchunks, sizeof(int64_t));
        int64_t *mincost = malloc(((size_t)np + 1) * sizeof(int64_t));
        rc = !pidx || !mfgr || !hitrow || !nhit || !mincost ? DKB_CAND_ENOMEM : DKB_CAND_OK;
        int64_t nsel = 0;
        if (!rc) {
            for (int64_t k = 0; k <= maxp; k++) pidx[k] = -1;
            for (int64_t i = 0; i < np; i++)
                if (ps[i] == want_size && type_ok[pt[i]] && pk[i] >= 0) {
                    pidx[pk[i]] = (int32_t)nsel;
                    mfgr[nsel] = pm[i];
                    mincost[nsel++] = INT64_MAX;
                }
            /* partsupp rows of a selected part from a region supplier */
#pragma omp parallel for num_threads(nt) schedule(static) if(nps >= PAR_MIN)
            for (int64_t c = 0; c < nchunks; c++) {
                const int64_t i0 = c * nps / nchunks, i1 = (c + 1) * nps / nchunks;
                int64_t *out = hitrow + i0, n = 0;
                for (int64_t i = i0; i < i1; i++) {
                    const int64_t p = pp[i], s = psu[i];
                    if (p < 0 || p > maxp || pidx[p] < 0 || s < 0 || s > maxs || srow[s] < 0) continue;
                    out[n++] = i;
                }
                nhit[c] = n;
            }
            for (int64_t c = 0; c < nchunks; c++)
                for (int64_t h = 0; h < nhit[c]; h++) {
                    const int64_t i = hitrow[c * nps / nchunks + h], k = pidx[pp[i]];
                    if (pc[i] < mincost[k]) mincost[k] = pc[i];
                }
        }
        for (int64_t c = 0; !rc && c < nchunks; c++)
            for (int64_t h = 0; !rc && h < nhit[c]; h++) {
                const int64_t i = hitrow[c * nps / nchunks + h], k = pidx[pp[i]], sr = srow[psu[i]];
                if (pc[i] != mincost[k]) continue;
                if (nbest == cap) {
                    const int64_t grown = cap ? 2 * cap : 256;
                    cand *v = realloc(cs, (size_t)grown * sizeof(cand));
                    if (!v) {
                        rc = DKB_CAND_ENOMEM;
                        break;
                    }
                    cs = v, cap = grown;
                }
                cs[nbest++] = (cand){sb[sr], ncode_of[sn[sr]], pp[i], sr, mfgr[k], sbytes + soff[sr],
                                     soff[sr + 1] - soff[sr], pc[i], k};
            }
        free(pidx), free(mfgr), free(hitrow), free(nhit), free(mincost);
    }
    const int end = dkb_stream_end(&st);
    free(srow);
    if (rc || end) {
        free(cs);
        return rc ? rc : end;
    }
    qsort(cs, (size_t)nbest, sizeof(cand), order);
    if (dkb_ranks_many(env)) { /* every rank's first 100, in one total order */
        void *every;
        int64_t ne;
        const int mrc = dkb_ranks_gather(env, cs, nbest < LIMIT ? nbest : LIMIT, sizeof(cand), &every, &ne);
        free(cs);
        if (mrc) return mrc;
        cs = every, nbest = ne;
        for (int64_t i = 0; i < nbest; i++) /* pointers into this rank's supplier column */
            cs[i].sname = sbytes + soff[cs[i].srow], cs[i].sname_len = soff[cs[i].srow + 1] - soff[cs[i].srow];
        qsort(cs, (size_t)nbest, sizeof(cand), order);
        if (!dkb_ranks_writes(env, res)) {
            free(cs);
            return 0;
        }
    }

    const int64_t nout = nbest < LIMIT ? nbest : LIMIT;
    if (nout > res->cap) {
        free(cs);
        return DKB_CAND_ECAP;
    }
    int bad = 0;
    for (int64_t r = 0; r < nout && !bad; r++) {
        const cand *x = &cs[r];
        dkb_put_dec(r_bal, r, x->acctbal, sbal->scale);
        r_pkey->i64[r] = x->partkey;
        r_pkey->is_null[r] = 0;
        const int mc = x->mfgr;
        bad = dkb_put_str(r_sname, r, x->sname, x->sname_len) ||
              dkb_put_dict(r_nname, r, nname->dict, x->ncode) ||
              dkb_put_dict(r_mfgr, r, pmfgr->dict, mc) ||
              dkb_put_text(r_addr, r, saddr, x->srow) || dkb_put_text(r_phone, r, sphone, x->srow) ||
              dkb_put_text(r_comment, r, scomment, x->srow);
    }
    free(cs);
    if (bad) return DKB_CAND_ECAP;
    res->nrows = nout;
    return 0;
}
