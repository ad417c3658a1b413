/* q16.c: TPC-H Q16, Parts/Supplier Relationship, as a TensorPlan baseline.
 *
 * How many suppliers (without customer complaints) can supply parts of
 * each brand, type and size, for parts of eight sizes, not of one brand
 * and not of one type prefix:
 *
 *   select p_brand, p_type, p_size, count(distinct ps_suppkey) as supplier_cnt
 *   from partsupp, part
 *   where p_partkey = ps_partkey
 *     and p_brand <> 'Brand#45'
 *     and p_type not like 'MEDIUM POLISHED%'
 *     and p_size in (49, 14, 23, 45, 19, 3, 36, 9)
 *     and ps_suppkey not in (select s_suppkey from supplier
 *                            where s_comment like '%Customer%Complaints%')
 *   group by p_brand, p_type, p_size
 *   order by supplier_cnt desc, p_brand, p_type, p_size;
 *
 * Plan: filter part (brand code, type LIKE on the dictionary, size list),
 * join the parts (build) with partsupp (probe), anti-join the pairs'
 * suppliers against the complained-about ones (LIKE on free text; no key
 * is NULL, so NOT IN is a plain anti-join), count distinct suppliers per
 * (brand, type, size) group. */
#include <stdio.h>
#include <string.h>

#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

enum { NSIZE = 8 };
static const char *const SIZE[NSIZE] = {"size1", "size2", "size3", "size4", "size5", "size6", "size7", "size8"};

static const dkb_param_def params[] = {
    {"brand", DKB_PARAM_STRING, 0, "brand left out (Brand#MN, M and N in 1..5)"},
    {"type", DKB_PARAM_STRING, 0, "type prefix left out: the first two words of a type (MEDIUM POLISHED)"},
    {"size1", DKB_PARAM_INT, 0, "part size 1..50 (the 8 sizes: a random permutation's first 8)"},
    {"size2", DKB_PARAM_INT, 0, "part size 1..50"},
    {"size3", DKB_PARAM_INT, 0, "part size 1..50"},
    {"size4", DKB_PARAM_INT, 0, "part size 1..50"},
    {"size5", DKB_PARAM_INT, 0, "part size 1..50"},
    {"size6", DKB_PARAM_INT, 0, "part size 1..50"},
    {"size7", DKB_PARAM_INT, 0, "part size 1..50"},
    {"size8", DKB_PARAM_INT, 0, "part size 1..50"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        static const int sizes[NSIZE] = {49, 14, 23, 45, 19, 3, 36, 9};
        dkb__qgen_put_str(out, "brand", "Brand#45");
        dkb__qgen_put_str(out, "type", "MEDIUM POLISHED");
        for (int i = 0; i < NSIZE; i++) dkb__qgen_put_int(out, SIZE[i], sizes[i]);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 16);
    char buf[DKB_PARAM_STRLEN];
    dkb__qgen_brand(&q, buf, sizeof buf);
    dkb__qgen_put_str(out, "brand", buf);
    dkb__qgen_type_prefix(&q, buf, sizeof buf);
    dkb__qgen_put_str(out, "type", buf);
    int sizes[NSIZE];
    dkb__qgen_sample(&q, 1, 50, NSIZE, sizes);
    for (int i = 0; i < NSIZE; i++) dkb__qgen_put_int(out, SIZE[i], sizes[i]);
}

static int check(const dkb_params *p, dkb_error *err) {
    const char *brand = dkb_params_get(p, "brand")->s, *type = dkb_params_get(p, "type")->s;
    if (!dkb__qgen_is_brand(brand))
        return dkb_fail(err, DKB_EINVAL, "q16: brand '%s' is not Brand#MN with M and N in 1..5", brand);
    if (!dkb__qgen_is_type_prefix(type))
        return dkb_fail(err, DKB_EINVAL, "q16: type '%s' is not the first two words of a part type", type);
    for (int i = 0; i < NSIZE; i++) {
        int64_t size = dkb_params_get(p, SIZE[i])->i;
        if (size < 1 || size > 50)
            return dkb_fail(err, DKB_EINVAL, "q16: %s %lld out of range 1..50", SIZE[i], (long long)size);
    }
    return 0;
}

/* ---- plan ---- */

static const char *const PART[] = {"p_partkey", "p_brand", "p_type", "p_size"};
static const char *const PARTSUPP[] = {"ps_partkey", "ps_suppkey"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_comment"};
/* Core outputs, named as the result columns. */
enum { NOUT = 4 };
static const char *const OUT[NOUT] = {"p_brand", "p_type", "p_size", "supplier_cnt"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb__plan_put_columns(tp, db, in, "partsupp", PARTSUPP, DKB_COUNTOF(PARTSUPP));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb_set_put_i64(tp, in, "brand", dkb__plan_code_or_none(tp, "q16", in, "p_brand", dkb_params_get(p, "brand")->s));
    char pattern[DKB_PARAM_STRLEN + 2];
    snprintf(pattern, sizeof pattern, "%s%%", dkb_params_get(p, "type")->s);
    dkb__plan_put_like_lut(tp, "q16", in, "p_type", pattern, "type_lut");
    for (int i = 0; i < NSIZE; i++) dkb_set_put_i64(tp, in, SIZE[i], dkb_params_get(p, SIZE[i])->i);
    dkb_set_put_str(tp, in, "comment_like", "%Customer%Complaints%");
    return dkb_tp_status(tp, NULL);
}

/* The qualifying (part, supplier) pairs: p[0..2] brand, type, size of the
 * part, *supp_out the supplier. */
static void pairs(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **p, dkb_tensor **supp_out) {
    dkb_tensor *p_brand = dkb_set_get(tp, in, "p_brand");
    dkb_tensor *p_type = dkb_set_get(tp, in, "p_type");
    dkb_tensor *p_size = dkb_set_get(tp, in, "p_size");
    int64_t sizes[NSIZE];
    for (int i = 0; i < NSIZE; i++) sizes[i] = dkb_set_get_i64(tp, in, SIZE[i]);

    /* part: p_brand <> :1 and p_type not like ':2%' and p_size in (...) */
    dkb_tensor *keep = dkb_tp_cmp_i64(tp, p_brand, DKB_CMP_NE, dkb_set_get_i64(tp, in, "brand"));
    keep = dkb_tp_and(tp, keep, dkb_tp_not(tp, dkb__plan_lut_mask(tp, in, "type_lut", p_type)));
    keep = dkb_tp_and(tp, keep, dkb_tp_in_i64(tp, p_size, sizes, NSIZE));
    dkb_tensor *pkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "p_partkey"), keep);
    dkb_tensor *brand = dkb_tp_compress(tp, p_brand, keep);
    dkb_tensor *type = dkb_tp_compress(tp, p_type, keep);
    dkb_tensor *size = dkb_tp_compress(tp, p_size, keep);

    /* p_partkey = ps_partkey: the parts build, partsupp probes */
    dkb_join_result j = dkb_tp_join(tp, pkey, dkb_set_get(tp, in, "ps_partkey"), DKB_JOIN_INNER);
    dkb_tensor *supp = dkb_tp_gather(tp, dkb_set_get(tp, in, "ps_suppkey"), j.probe_idx, 0);

    /* ps_suppkey not in (suppliers with s_comment like '%Customer%Complaints%') */
    dkb_tensor *complaint =
        dkb_tp_like(tp, dkb_set_get(tp, in, "s_comment"), dkb_set_get_str(tp, in, "comment_like"));
    dkb_tensor *bad = dkb_tp_compress(tp, dkb_set_get(tp, in, "s_suppkey"), complaint);
    dkb_tensor *ok = dkb_tp_not(tp, dkb_tp_semi_join(tp, bad, supp));
    supp = dkb_tp_compress(tp, supp, ok);
    dkb_tensor *row = dkb_tp_compress(tp, j.build_idx, ok);  /* the part of each pair */
    brand = dkb_tp_gather(tp, brand, row, 0);
    type = dkb_tp_gather(tp, type, row, 0);
    size = dkb_tp_gather(tp, size, row, 0);
    p[0] = brand, p[1] = type, p[2] = size, *supp_out = supp;
}

/* Per (brand, type, size) of p: `agg` of supp (distinct suppliers), ordered, into out. */
static void put_counts(dkb_tp *tp, dkb_tensor *const *p, dkb_tensor *supp, dkb_agg agg, dkb_tensor_set *out) {
    /* group by p_brand, p_type, p_size: count(distinct ps_suppkey) */
    const dkb_tensor *keys[] = {p[0], p[1], p[2]};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, p[0], g.first_row, 0),
        dkb_tp_gather(tp, p[1], g.first_row, 0),
        dkb_tp_gather(tp, p[2], g.first_row, 0),
        dkb_tp_aggregate(tp, &g, agg, supp),
    };

    /* order by supplier_cnt desc, p_brand, p_type, p_size */
    dkb_sort_key by[] = {{cols[3], true}, {cols[0], false}, {cols[1], false}, {cols[2], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *p[3], *supp;
    pairs(tp, in, p, &supp);
    put_counts(tp, p, supp, DKB_AGG_COUNT_DISTINCT, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Part and partsupp stream (co-partitioned by partkey). A group's
 * suppliers can come from several runs of partitions, so each run gives
 * its distinct (brand, type, size, supplier) tuples; merged as keys they
 * stay distinct, and counting them per group is count(distinct). */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *p[3], *supp;
    pairs(tp, in, p, &supp);
    const dkb_tensor *keys[] = {p[0], p[1], p[2], supp};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_set_put(tp, out, "pair_brand", dkb_tp_gather(tp, p[0], g.first_row, 0));
    dkb_set_put(tp, out, "pair_type", dkb_tp_gather(tp, p[1], g.first_row, 0));
    dkb_set_put(tp, out, "pair_size", dkb_tp_gather(tp, p[2], g.first_row, 0));
    dkb_set_put(tp, out, "pair_supp", dkb_tp_gather(tp, supp, g.first_row, 0));
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *p[3] = {dkb_set_get(tp, in, "pair_brand"), dkb_set_get(tp, in, "pair_type"),
                        dkb_set_get(tp, in, "pair_size")};
    put_counts(tp, p, dkb_set_get(tp, in, "pair_supp"), DKB_AGG_COUNT, out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q16_part = {
    .stream = {"partsupp", "part"},
    .npasses = 1,
    .pass = {{partial, 4,
              {{"pair_brand", DKB__MERGE_KEY}, {"pair_type", DKB__MERGE_KEY}, {"pair_size", DKB__MERGE_KEY},
               {"pair_supp", DKB__MERGE_KEY}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_STRING, DKB_RES_INT, DKB_RES_INT};
    static const int scales[] = {0, 0, 0, 0};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{3, true}, {0, false}, {1, false}, {2, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    const uint8_t *brand = dkb_tp_host_copy(tp, t[0]), *type = dkb_tp_host_copy(tp, t[1]);
    const int32_t *size = dkb_tp_host_copy(tp, dkb_tp_cast(tp, t[2], DKB_TP_I32));
    const int64_t *cnt = dkb_tp_host_copy(tp, t[3]);
    rc = dkb_tp_status(tp, NULL);
    if (rc) return rc;
    const dkb_tp_dict *bd = t[0]->dict, *td = t[1]->dict;
    for (int64_t i = 0; i < t[0]->n; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0 || dkb_result_set_str(res, r, 0, bd->str[brand[i]], bd->len[brand[i]]) ||
            dkb_result_set_str(res, r, 1, td->str[type[i]], td->len[type[i]]))
            return DKB_ENOMEM;
        dkb_result_set_int(res, r, 2, size[i]);
        dkb_result_set_int(res, r, 3, cnt[i]);
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q16 = {
    .number = 16,
    .name = "q16",
    .title = "Parts/Supplier Relationship",
    .sql = "select\n"
           "\tp_brand,\n"
           "\tp_type,\n"
           "\tp_size,\n"
           "\tcount(distinct ps_suppkey) as supplier_cnt\n"
           "from\n"
           "\tpartsupp,\n"
           "\tpart\n"
           "where\n"
           "\tp_partkey = ps_partkey\n"
           "\tand p_brand <> ':brand'\n"
           "\tand p_type not like ':type%'\n"
           "\tand p_size in (:size1, :size2, :size3, :size4, :size5, :size6, :size7, :size8)\n"
           "\tand ps_suppkey not in (\n"
           "\t\tselect\n"
           "\t\t\ts_suppkey\n"
           "\t\tfrom\n"
           "\t\t\tsupplier\n"
           "\t\twhere\n"
           "\t\t\ts_comment like '%Customer%Complaints%'\n"
           "\t)\n"
           "group by\n"
           "\tp_brand,\n"
           "\tp_type,\n"
           "\tp_size\n"
           "order by\n"
           "\tsupplier_cnt desc,\n"
           "\tp_brand,\n"
           "\tp_type,\n"
           "\tp_size;\n",
    .nparams = 10,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
