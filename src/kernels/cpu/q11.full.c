/* q11.full.c: expert CPU candidate for TPC-H Q11 (Important Stock Identification).
 *
 *   select ps_partkey, sum(ps_supplycost * ps_availqty) as value
 *   from partsupp, supplier, nation
 *   where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':nation'
 *   group by ps_partkey
 *   having sum(ps_supplycost * ps_availqty) > (
 *       select sum(ps_supplycost * ps_availqty) * :fraction
 *       from partsupp, supplier, nation
 *       where ps_suppkey = s_suppkey and s_nationkey = n_nationkey and n_name = ':nation')
 *   order by value desc;
 *
 * Plan: the nation is a dictionary code; its suppliers a byte mask over the
 * dense suppkeys (a semi-join). One parallel pass over partsupp keeps the
 * rows of those suppliers as (partkey, value), branch-free, in each chunk's
 * own slice of an array (no shared writes), and the largest partkey kept;
 * the slices are then added sequentially into an array over the partkeys,
 * which also gives the subquery's total (both exact, scale 2, in int64 /
 * __int128), and walked again to emit each part once. As values are whole
 * hundredths, value > total * fraction exactly when value >
 * floor(total * fraction) in hundredths, computed in __int128. The parts
 * above it are sorted by value desc (partkey breaks ties, a fixed order).
 *
 * Across ranks (DKB_CANDIDATE_RANKS): partsupp is split by partkey
 * (supplier and nation whole on every rank), so a part's rows, and its
 * group's sum, are on one rank; the subquery's total is summed over the
 * ranks (one all-reduce of __int128), each rank keeps its parts above the
 * bound, and those are gathered in rank order (dkb_ranks_gather) and sorted
 * by the same total order; rank 0 writes.
 */
#include <stdlib.h>

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_max_i32, dkb_put_dec */

/* below this many rows one thread is faster than waking a team */
enum { PAR_MIN = 1 << 17 };

typedef struct {
    int64_t value;
    int64_t key;
} entry;

static int by_value_desc(const void *a, const void *b) {
    const entry *x = a, *y = b;
    if (x->value != y->value) return x->value > y->value ? -1 : 1;
    return (x->key > y->key) - (x->key < y->key);
}

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: partsupp load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *nkey, *nname, *skey, *snat, *pspart, *pssupp, *psqty, *pscost;
    const dkb_cand_param *nation, *fraction;
    dkb_cand_res_col *c_key, *c_val;
    if (DKB_BIND_COLS(db, "nation", "n_nationkey:i32 n_name:dict", &nkey, &nname) ||
        DKB_BIND_COLS(db, "supplier", "s_suppkey:i32 s_nationkey:i32", &skey, &snat) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32 ps_availqty:i32 ps_supplycost:i64", &pspart,
                      &pssupp, &psqty, &pscost) ||
        DKB_BIND_PARAMS(params, "nation:str fraction", &nation, &fraction) ||
        DKB_BIND_RES(res, "ps_partkey:int value:dec", &c_key, &c_val) || c_val->scale < pscost->scale ||
        fraction->scale < 0 || fraction->scale > 30 || fraction->i < 0)
        return DKB_CAND_EINVAL;

    /* the nation's suppliers: a byte mask over suppkey */
    const int code = dkb_cand_dict_code(nname->dict, nation->s);
    int64_t nk = -2;
    for (int64_t i = 0; i < nkey->n; i++)
        if (((const uint8_t *)nname->data)[i] == code) nk = ((const int32_t *)nkey->data)[i];
    const int32_t *sk = skey->data, *sn = snat->data;
    const int64_t maxs = dkb_max_i32(sk, skey->n);
    const int64_t nps = pspart->n; /* the whole table's rows (also under a budget) */
    uint8_t *s_in = calloc((size_t)maxs + 1, 1);
    const int nt = env->threads > 0 ? env->threads : 1;
    const int64_t nchunks = nps < 1024 ? 1 : (int64_t)nt * 8;
    entry *ent = malloc(sizeof(entry) * (size_t)(nps + 1));
    int64_t *nent = calloc((size_t)nchunks, sizeof(int64_t)), *maxk = calloc((size_t)nchunks, sizeof(int64_t));
    if (!s_in || !ent || !nent || !maxk) {
        free(s_in), free(ent), free(nent), free(maxk);
        return DKB_CAND_ENOMEM;
    }
    for (int64_t i = 0; i < skey->n; i++)
        if (sk[i] >= 0 && sn[i] == nk) s_in[sk[i]] = 1;

    /* the whole columns, or under a memory budget partsupp load by load: the
     * nation's rows as (value, partkey) in ent[0, used), in row order */
    int64_t used = 0, maxp = 0; /* entries kept so far, their largest partkey */
    static const char *const COLS[] = {"ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost"};
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 4, COLS); dkb_stream_next(&st);) {
        const int32_t *pp = st.cols[0].data, *psu = st.cols[1].data, *pq = st.cols[2].data;
        const int64_t *pc = st.cols[3].data, npl = st.cols[0].n;
        /* at most the whole table's chunks; each writes into its rows' slice of ent */
        const int64_t nch = npl < 1024 ? 1 : nchunks;
        entry *const slice = ent + st.row_start;

        /* the nation's rows as (value, partkey), branch-free, in each chunk's slice */
#pragma omp parallel for num_threads(nt) schedule(dynamic, 1) if(npl >= PAR_MIN)
        for (int64_t c = 0; c < nch; c++) {
            const int64_t i0 = c * npl / nch, i1 = (c + 1) * npl / nch;
            entry *out = slice + i0;
            int64_t n = 0, m = 0;
            for (int64_t i = i0; i < i1; i++) {
                const uint64_t s = (uint32_t)psu[i];
                const int keep = (s <= (uint64_t)maxs) & (pp[i] >= 0) && s_in[s]; /* keys are >= 1 by the schema */
                out[n] = (entry){pc[i] * pq[i], pp[i]};
                n += keep;
                m = keep && pp[i] > m ? pp[i] : m;
            }
            nent[c] = n;
            maxk[c] = m;
        }
        /* the chunks' entries moved down to the end of the earlier ones (never past their rows) */
        for (int64_t c = 0; c < nch; c++) {
            memmove(ent + used, slice + c * npl / nch, (size_t)nent[c] * sizeof(entry));
            used += nent[c];
            maxp = maxk[c] > maxp ? maxk[c] : maxp;
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) {
        free(s_in), free(ent), free(nent), free(maxk);
        return rc;
    }
    int64_t *sum = calloc((size_t)maxp + 1, sizeof(int64_t));
    uint8_t *has = calloc((size_t)maxp + 1, 1);
    if (!sum || !has) {
        free(s_in), free(ent), free(nent), free(maxk), free(sum), free(has);
        return DKB_CAND_ENOMEM;
    }
    __int128 total = 0;
    for (int64_t i = 0; i < used; i++) {
        sum[ent[i].key] += ent[i].value;
        has[ent[i].key] = 1;
        total += ent[i].value;
    }
    {
        const int mrc = dkb_ranks_sum_i128(env, &total, 1); /* the subquery over every rank's rows */
        if (mrc) {
            free(s_in), free(ent), free(nent), free(maxk), free(sum), free(has);
            return mrc;
        }
    }
    /* bound = floor(total * fraction), at the values' scale */
    __int128 unit = 1;
    for (int i = 0; i < fraction->scale; i++) unit *= 10;
    const __int128 bound = total * fraction->i / unit;

    /* each part once (at its first entry) when above the bound; written over
     * the entries already read */
    entry *out = ent;
    int64_t n = 0;
    for (int64_t i = 0; i < used; i++) {
        const int64_t k = ent[i].key;
        if (!has[k]) continue;
        has[k] = 0;
        if ((__int128)sum[k] > bound) out[n++] = (entry){sum[k], k};
    }
    qsort(out, (size_t)n, sizeof(entry), by_value_desc);
    free(s_in), free(nent), free(maxk), free(sum), free(has);
    if (dkb_ranks_many(env)) { /* every rank's parts above the bound, in one order */
        void *every;
        int64_t ne;
        const int mrc = dkb_ranks_gather(env, out, n, sizeof(entry), &every, &ne);
        free(ent);
        if (mrc) return mrc;
        ent = out = every, n = ne;
        qsort(out, (size_t)n, sizeof(entry), by_value_desc);
        if (!dkb_ranks_writes(env, res)) {
            free(ent);
            return 0;
        }
    }
    if (n > res->cap) {
        free(ent);
        return DKB_CAND_ECAP;
    }
    for (int64_t r = 0; r < n; r++) {
        dkb_put_dec(c_val, r, out[r].value, pscost->scale);
        c_key->i64[r] = out[r].key;
        c_key->is_null[r] = 0;
    }
    free(ent);
    res->nrows = n;
    return 0;
}
