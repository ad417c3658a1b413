/* q16.full.c: expert CPU candidate for TPC-H Q16 (Parts/Supplier
 * Relationship).
 *
 *   select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
 *   from partsupp, part
 *   where p_partkey = ps_partkey and p_brand <> ':brand' and p_type not like ':type%'
 *     and p_size in (:size1, ..., :size8)
 *     and ps_suppkey not in (select s_suppkey from supplier where s_comment like '%Customer%Complaints%')
 *   group by p_brand, p_type, p_size
 *   order by supplier_cnt desc, p_brand, p_type, p_size;
 *
 * Plan: the complaint suppliers become a byte per suppkey - 1 (one scan of
 * s_comment's bytes for the leftmost Customer, dkb_find_row, then
 * Complaints after it: exactly the two-word LIKE); the type prefix becomes
 * a mask over the type dictionary, the sizes a 64-bit mask. Each part's
 * group (the dense index (brand code, type code, rank of the size among
 * the 8), or -1 when the part fails the tests) is computed once,
 * branch-free; then a parallel pass over partsupp in chunks reads it at
 * ps_partkey - 1 (part keys are dense 1..N; partsupp is grouped by part, so
 * this is sequential) and keeps the pairs (group, suppkey), branch-free. A
 * counting sort groups the pairs; distinct suppliers per group are counted
 * with a "last group seen" array over suppliers (linear). Groups are walked in (brand, type, size)
 * order (codes sort as strings), so a stable counting sort by count
 * descending gives the ORDER BY. Integer counts: exact.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): part and partsupp are split
 * together by partkey (supplier whole on every rank), so a rank's partsupp
 * rows look their part up in its own share (part keys dense, from the
 * share's first p_partkey); but a group (brand, type, size) holds parts of
 * every rank and a supplier may supply parts of several, so COUNT(DISTINCT)
 * cannot be summed: every rank's kept (group, supplier) pairs are gathered in
 * rank order (dkb_ranks_gather; a rank that failed sends a marker pair) and
 * rank 0 runs the counting sort and the distinct count over their union.
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/PARAMS/RES, dkb_find, dkb_find_row, dkb_put_dict */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

static const char *const SIZE_NAME[8] = {"size1", "size2", "size3", "size4", "size5", "size6", "size7", "size8"};

DKB_CANDIDATE_STREAMS; /* runs under a memory budget: part and partsupp load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *pbrand, *ptype, *psize, *pspart, *pssupp, *scomment, *pkey;
    const dkb_cand_param *pb, *pt;
    dkb_cand_res_col *c_brand, *c_type, *c_size, *c_cnt;
    if (DKB_BIND_COLS(db, "part", "p_partkey:i32 p_brand:dict p_type:dict p_size:i32", &pkey, &pbrand, &ptype, &psize) ||
        DKB_BIND_COLS(db, "partsupp", "ps_partkey:i32 ps_suppkey:i32", &pspart, &pssupp) ||
        DKB_BIND_COLS(db, "supplier", "s_comment:str", &scomment) ||
        DKB_BIND_PARAMS(params, "brand:str type:str", &pb, &pt) ||
        DKB_BIND_RES(res, "p_brand:str p_type:str p_size:int supplier_cnt:int", &c_brand, &c_type, &c_size, &c_cnt))
        return DKB_CAND_EINVAL;

    uint64_t size_mask = 0;
    for (int k = 0; k < 8; k++) {
        const dkb_cand_param *ps = dkb_cand_param_find(params, SIZE_NAME[k]);
        if (!ps) return DKB_CAND_EINVAL;
        if (ps->i >= 0 && ps->i < 64) size_mask |= 1ull << ps->i;
    }
    const int nbrand = pbrand->dict->size, ntype = ptype->dict->size;
    const int bad_brand = dkb_cand_dict_code(pbrand->dict, pb->s);
    uint8_t brand_ok[256], type_ok[256];
    for (int c = 0; c < 256; c++) brand_ok[c] = c < nbrand && c != bad_brand;
    const size_t tl = strlen(pt->s);
    for (int c = 0; c < 256; c++)
        type_ok[c] = c < ntype && !(ptype->dict->len[c] >= tl && memcmp(ptype->dict->str[c], pt->s, tl) == 0);

    const int64_t nsupp = scomment->n, nps = pspart->n, nparts = pbrand->n;
    /* across ranks this rank's parts are keys [pbase + 1, pbase + nparts] (dense) */
    const int64_t pbase = dkb_ranks_many(env) && nparts > 0 ? (int64_t)((const int32_t *)pkey->data)[0] - 1 : 0;
    /* the wanted sizes in ascending order: a group's size is its rank here */
    int nsizes = 0, size_value[8];
    int8_t size_rank[64];
    for (int v = 0; v < 64; v++) {
        size_rank[v] = (int8_t)((size_mask >> v) & 1 ? nsizes : -1);
        if ((size_mask >> v) & 1) size_value[nsizes++] = v;
    }
    const int64_t ngroups = (int64_t)nbrand * ntype * (nsizes > 0 ? nsizes : 1);
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = nps < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    const int64_t nchunks = nt == 1 ? 1 : (int64_t)nt * 8;
    uint8_t *complained = calloc((size_t)nsupp + 1, 1);
    int32_t *pgroup = malloc((size_t)(nparts + 1) * sizeof(int32_t)); /* part row -> group, or -1 */
    uint64_t *pairs = malloc((size_t)(nps + 1) * sizeof(uint64_t));  /* chunk c's from its first row */
    int64_t *used = calloc((size_t)nchunks + 1, sizeof(int64_t));    /* pairs kept per chunk */
    int32_t *gstart = calloc((size_t)ngroups + 1, sizeof(int32_t));
    int32_t *supps = malloc((size_t)(nps + 1) * sizeof(int32_t));
    int32_t *last = malloc((size_t)(nsupp + 1) * sizeof(int32_t));
    int bad = !complained || !pgroup || !pairs || !used || !gstart || !supps || !last || nps >= INT32_MAX;
    int stream_rc = 0;   /* the loader's error, under a memory budget */
    int64_t npairs = 0;
    if (!bad) {
        /* s_comment like '%Customer%Complaints%': the leftmost Customer, then Complaints after it */
        const int64_t *off = scomment->data;
        int64_t at;
        for (int64_t s = 0; (s = dkb_find_row(scomment, s, nsupp, "Customer", 8, &at)) < nsupp; s++)
            complained[s] = dkb_find(scomment->bytes + at + 8, scomment->bytes + off[s + 1], "Complaints", 10) != NULL;

        /* the whole columns, or under a memory budget part and partsupp load by
         * load (co-partitioned by partkey: a load's partsupp rows are of its
         * parts): the (group, suppkey - 1) pairs kept, in pairs[0, npairs) */
        for (int64_t p = 0; p < nparts; p++) pgroup[p] = -1;
        static const char *const COLS[] = {"p_brand", "p_type", "p_size", "ps_partkey", "ps_suppkey"};
        dkb_stream st;
        for (dkb_stream_begin(&st, db, env, 5, COLS); dkb_stream_next(&st);) {
            int32_t *const pgroup_here = pgroup + st.row_start;
            const uint8_t *br = st.cols[0].data, *ty = st.cols[1].data;
            const int32_t *sz = st.cols[2].data, *pk = st.cols[3].data, *sk = st.cols[4].data;
            const int64_t nparts_here = st.cols[0].n, npl = st.cols[3].n;
            /* this load's rows decide the team and its chunks (at most the whole table's nchunks) */
            const int team = npl < PAR_MIN ? 1 : nt;
            const int64_t nch = team == 1 ? 1 : (int64_t)team * 8;
            const int64_t base = npairs; /* this load's rows write their pairs from here on */
#pragma omp parallel num_threads(team) reduction(| : bad)
            {
#pragma omp for schedule(static)
                for (int64_t p = 0; p < nparts_here; p++) { /* the part's group, branch-free */
                    const uint32_t size = (uint32_t)sz[p], sv = size & 63;
                    const int keep = brand_ok[br[p]] & type_ok[ty[p]] & (size < 64u) & (int)((size_mask >> sv) & 1);
                    pgroup_here[p] = keep ? (int32_t)(((int64_t)br[p] * ntype + ty[p]) * nsizes + size_rank[sv]) : -1;
                }
#pragma omp for schedule(dynamic, 1)
                for (int64_t c = 0; c < nch; c++) { /* (group, suppkey - 1) of the rows kept */
                    const int64_t r0 = npl * c / nch, r1 = npl * (c + 1) / nch;
                    uint64_t *out = pairs + base + r0; /* never past the rows not yet read */
                    int64_t m = 0;
                    for (int64_t i = r0; i < r1; i++) {
                        const uint32_t p = (uint32_t)(pk[i] - pbase) - 1u, s = (uint32_t)sk[i] - 1u;
                        const int in = (p < (uint64_t)nparts) & (s < (uint64_t)nsupp);
                        bad |= !in;
                        const int32_t g = pgroup[in ? p : 0];
                        out[m] = (uint64_t)(uint32_t)g << 32 | s;
                        m += in & (g >= 0) & !complained[in ? s : 0];
                    }
                    used[c] = m;
                }
            }
            /* the chunks' pairs moved down to the end of the earlier ones (chunk c's
             * were written from base + its first row, whatever has moved since) */
            for (int64_t c = 0; c < nch; c++) {
                memmove(pairs + npairs, pairs + base + npl * c / nch, (size_t)used[c] * sizeof(uint64_t));
                npairs += used[c];
            }
        }
        const int rc = dkb_stream_end(&st);
        if (rc) bad = 1, stream_rc = rc;
    }
    int64_t nrows = 0;
    int idle = 0; /* across ranks: not rank 0 (it merges) */
    if (dkb_ranks_many(env)) { /* every rank's pairs (a failed rank's: the marker) to rank 0 */
        const uint64_t marker = ~(uint64_t)0; /* group 0xffffffff: never kept */
        const int here = bad || !pairs;
        void *every = NULL;
        int64_t ne = 0;
        const int mrc = dkb_ranks_gather(env, here ? &marker : pairs, here ? 1 : npairs, sizeof(uint64_t), &every, &ne);
        idle = !dkb_ranks_writes(env, res);
        if (mrc) bad = 1, stream_rc = mrc;
        const uint64_t *all = every;
        for (int64_t k = 0; !mrc && k < ne; k++) bad |= all[k] == marker;
        int32_t *more = !bad && !idle ? realloc(supps, (size_t)(ne + 1) * sizeof(int32_t)) : NULL;
        if (!bad && !idle && !more) bad = 1;
        if (more) supps = more;
        if (!bad && !idle) {
            free(pairs);
            pairs = every, npairs = ne, every = NULL;
        }
        dkb_ranks_gather_free(every, NULL);
    }
    if (!bad && !idle) {
        /* counting sort of the pairs by group */
        for (int64_t k = 0; k < npairs; k++) gstart[(pairs[k] >> 32) + 1]++;
        for (int64_t g = 0; g < ngroups; g++) gstart[g + 1] += gstart[g];
        int32_t *fill = malloc((size_t)(ngroups + 1) * sizeof(int32_t));
        if (!fill) bad = 1;
        else {
            memcpy(fill, gstart, (size_t)(ngroups + 1) * sizeof(int32_t));
            for (int64_t k = 0; k < npairs; k++) supps[fill[pairs[k] >> 32]++] = (int32_t)(pairs[k] & 0xffffffffu);
            free(fill);
        }
    }
    int32_t *order = NULL, *bucket = NULL;
    if (!bad && !idle) {
        /* distinct suppliers per group; `pairs` now holds (group << 32 | count) */
        memset(last, 0xff, (size_t)nsupp * sizeof(int32_t));
        int32_t maxc = 0;
        int64_t ng = 0;
        for (int64_t g = 0; !bad && g < ngroups; g++) {
            int32_t c = 0;
            for (int32_t k = gstart[g]; k < gstart[g + 1]; k++)
                if (last[supps[k]] != (int32_t)g) last[supps[k]] = (int32_t)g, c++;
            if (c) {
                pairs[ng++] = (uint64_t)g << 32 | (uint32_t)c;
                if (c > maxc) maxc = c;
            }
        }
        /* stable counting sort by count, descending */
        bucket = bad ? NULL : calloc((size_t)maxc + 2, sizeof(int32_t));
        order = bad ? NULL : malloc((size_t)(ng > 0 ? ng : 1) * sizeof(int32_t));
        if (!bucket || !order) bad = 1;
        if (!bad) {
            for (int64_t k = 0; k < ng; k++) bucket[maxc - (int32_t)(pairs[k] & 0xffffffffu) + 1]++;
            for (int32_t c = 0; c <= maxc; c++) bucket[c + 1] += bucket[c];
            for (int64_t k = 0; k < ng; k++) order[bucket[maxc - (int32_t)(pairs[k] & 0xffffffffu)]++] = (int32_t)k;
            if (ng > res->cap) bad = 1;
            for (int64_t r = 0; !bad && r < ng; r++) {
                const uint64_t e = pairs[order[r]];
                const int64_t g = (int64_t)(e >> 32);
                const int size = size_value[g % nsizes], t = (int)(g / nsizes % ntype), b = (int)(g / nsizes / ntype);
                if (dkb_put_dict(c_brand, r, pbrand->dict, b) ||
                    dkb_put_dict(c_type, r, ptype->dict, t)) {
                    bad = 1;
                    break;
                }
                c_size->i64[r] = size;
                c_cnt->i64[r] = (int64_t)(e & 0xffffffffu);
                c_size->is_null[r] = c_cnt->is_null[r] = 0;
            }
            nrows = ng;
        }
    }
    free(complained);
    free(pgroup);
    free(pairs);
    free(used);
    free(gstart);
    free(supps);
    free(last);
    free(order);
    free(bucket);
    if (bad) return stream_rc ? stream_rc : DKB_CAND_EINTERNAL;
    if (idle) return 0;
    res->nrows = nrows;
    return 0;
}
