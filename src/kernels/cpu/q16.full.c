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
 * Plan: the complaint suppliers become a bitmap over suppkey - 1 (an exact
 * two-word LIKE matcher on s_comment, AVX2-filtered); the type prefix
 * becomes a mask over the type dictionary, the sizes a 64-bit mask. One
 * parallel pass over partsupp reads each row's part columns directly at
 * ps_partkey - 1 (part keys are dense 1..N; partsupp is grouped by part, so
 * this is sequential) and keeps the pairs (group, suppkey), the group being
 * the dense index (brand code, type code, rank of the size among the 8). A
 * counting sort groups the pairs; distinct suppliers per group are counted
 * with a "last group seen" array over suppliers (linear). Groups are walked in (brand, type, size)
 * order (codes sort as strings), so a stable counting sort by count
 * descending gives the ORDER BY. Integer counts: exact. */
#ifdef __AVX2__
#endif
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_util.h" /* defines: dkb_find, dkb_put_dict, dkb_res_col */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

/* s like '%w1%w2%' for one row: the leftmost w1, then w2 after it. */
static int like_two_words(const char *s, const char *end, const char *w1, size_t l1, const char *w2, size_t l2) {
    const char *x = dkb_find(s, end, w1, l1);
    return x && dkb_find(x + l1, end, w2, l2) != NULL;
}

static const char *const SIZE_NAME[8] = {"size1", "size2", "size3", "size4", "size5", "size6", "size7", "size8"};

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *pbrand = dkb_cand_column(db, "part", "p_brand");
    const dkb_cand_vec *ptype = dkb_cand_column(db, "part", "p_type");
    const dkb_cand_vec *psize = dkb_cand_column(db, "part", "p_size");
    const dkb_cand_vec *pspart = dkb_cand_column(db, "partsupp", "ps_partkey");
    const dkb_cand_vec *pssupp = dkb_cand_column(db, "partsupp", "ps_suppkey");
    const dkb_cand_vec *scomment = dkb_cand_column(db, "supplier", "s_comment");
    const dkb_cand_param *pb = dkb_cand_param_find(params, "brand");
    const dkb_cand_param *pt = dkb_cand_param_find(params, "type");
    if (!pbrand || !ptype || !psize || !pspart || !pssupp || !scomment || !pb || !pt || !pb->s || !pt->s)
        return DKB_CAND_EINVAL;
    if (pbrand->type != DKB_CAND_U8 || ptype->type != DKB_CAND_U8 || !pbrand->dict || !ptype->dict ||
        psize->type != DKB_CAND_I32 || pspart->type != DKB_CAND_I32 || pssupp->type != DKB_CAND_I32 ||
        scomment->type != DKB_CAND_STR)
        return DKB_CAND_EINVAL;
    dkb_cand_res_col *c_brand = dkb_res_col(res, "p_brand", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_type = dkb_res_col(res, "p_type", DKB_CAND_RES_STRING);
    dkb_cand_res_col *c_size = dkb_res_col(res, "p_size", DKB_CAND_RES_INT);
    dkb_cand_res_col *c_cnt = dkb_res_col(res, "supplier_cnt", DKB_CAND_RES_INT);
    if (!c_brand || !c_type || !c_size || !c_cnt) return DKB_CAND_EINVAL;

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
    const int nt = nps < 4 * PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1); /* cheap rows: 4x */
    uint8_t *complained = malloc((size_t)nsupp + 1);
    uint64_t *pairs = malloc((size_t)(nps + 1) * sizeof(uint64_t)); /* thread t's at [start_t, ...) */
    int64_t *used = calloc(2 * (size_t)nt + 1, sizeof(int64_t)); /* pairs kept, first row: per thread */
    int32_t *gstart = calloc((size_t)ngroups + 1, sizeof(int32_t));
    int32_t *supps = malloc((size_t)(nps + 1) * sizeof(int32_t));
    int32_t *last = malloc((size_t)(nsupp + 1) * sizeof(int32_t));
    int bad = !complained || !pairs || !used || !gstart || !supps || !last || nps >= INT32_MAX;
    if (!bad) {
        const int64_t *off = scomment->data;
        const char *txt = scomment->bytes;
#pragma omp parallel for num_threads(nsupp < PAR_MIN / 16 ? 1 : nt) schedule(static)
        for (int64_t s = 0; s < nsupp; s++)
            complained[s] = (uint8_t)like_two_words(txt + off[s], txt + off[s + 1], "Customer", 8, "Complaints", 10);

        const int32_t *pk = pspart->data, *sk = pssupp->data, *sz = psize->data;
        const uint8_t *br = pbrand->data, *ty = ptype->data;
#pragma omp parallel num_threads(nt) reduction(| : bad)
        {
            int tid = 0, tn = 1;
#ifdef _OPENMP
            tid = omp_get_thread_num();
            tn = omp_get_num_threads();
#endif
            const int64_t r0 = nps * tid / tn, r1 = nps * (tid + 1) / tn;
            uint64_t *out = pairs + r0;
            int64_t m = 0;
            for (int64_t i = r0; i < r1; i++) {
                const uint32_t p = (uint32_t)pk[i] - 1u, s = (uint32_t)sk[i] - 1u;
                if (p >= (uint64_t)nparts || s >= (uint64_t)nsupp) { bad = 1; continue; }
                const int32_t size = sz[p];
                const int keep = brand_ok[br[p]] & type_ok[ty[p]] & ((uint32_t)size < 64u) &
                                 (int)((size_mask >> (size & 63)) & 1) & !complained[s];
                if (!keep) continue;
                const uint64_t g = ((uint64_t)br[p] * (uint64_t)ntype + ty[p]) * (uint64_t)nsizes +
                                   (uint64_t)size_rank[size & 63];
                out[m++] = g << 32 | s;
            }
            used[tid] = m;
            used[nt + tid] = r0;
        }
    }
    int64_t nrows = 0;
    if (!bad) {
        /* counting sort of the pairs by group */
        for (int t = 0; t < nt; t++) {
            const uint64_t *pp = pairs + used[nt + t];
            for (int64_t k = 0; k < used[t]; k++) gstart[(pp[k] >> 32) + 1]++;
        }
        for (int64_t g = 0; g < ngroups; g++) gstart[g + 1] += gstart[g];
        int32_t *fill = malloc((size_t)(ngroups + 1) * sizeof(int32_t));
        if (!fill) bad = 1;
        else {
            memcpy(fill, gstart, (size_t)(ngroups + 1) * sizeof(int32_t));
            for (int t = 0; t < nt; t++) {
                const uint64_t *pp = pairs + used[nt + t];
                for (int64_t k = 0; k < used[t]; k++) supps[fill[pp[k] >> 32]++] = (int32_t)(pp[k] & 0xffffffffu);
            }
            free(fill);
        }
    }
    int32_t *order = NULL, *bucket = NULL;
    if (!bad) {
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
    free(pairs);
    free(used);
    free(gstart);
    free(supps);
    free(last);
    free(order);
    free(bucket);
    if (bad) return DKB_CAND_EINTERNAL;
    res->nrows = nrows;
    return 0;
}
