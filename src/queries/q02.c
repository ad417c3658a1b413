/* q02.c: TPC-H Q2, Minimum Cost Supplier, as a TensorPlan baseline.
 *
 * For each part of one size and type suffix, the suppliers of one region
 * that offer it at the region's lowest cost, richest suppliers first:
 *
 *   select s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment
 *   from part, supplier, partsupp, nation, region
 *   where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *     and p_size = 15 and p_type like '%BRASS'
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *     and r_name = 'EUROPE'
 *     and ps_supplycost = (
 *         select min(ps_supplycost)
 *         from partsupp, supplier, nation, region
 *         where p_partkey = ps_partkey and s_suppkey = ps_suppkey
 *           and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *           and r_name = 'EUROPE')
 *   order by s_acctbal desc, n_name, s_name, p_partkey
 *   limit 100;
 *
 * Plan: the region's nations and suppliers (carrying the nation name
 * code); the parts of the size whose type matches (LIKE on the type
 * dictionary, once per entry, then a code mask); their partsupp rows (parts
 * built) from the region's suppliers (suppliers built). The correlated
 * subquery is decorrelated: the minimum cost per part over those rows
 * (group by part), gathered back to each row and compared. Top 100 on the
 * sort keys; the wide text columns are gathered for those rows only. */
#include "dkb/query.h"

#include <stdio.h>

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"size", DKB_PARAM_INT, 0, "part size (1..50)"},
    {"type", DKB_PARAM_STRING, 0, "last word of the part type (TIN, NICKEL, BRASS, STEEL, COPPER)"},
    {"region", DKB_PARAM_STRING, 0, "region name (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_int(out, "size", 15);
        dkb__qgen_put_str(out, "type", "BRASS");
        dkb__qgen_put_str(out, "region", "EUROPE");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 2);
    dkb__qgen_put_int(out, "size", dkb__qgen_int(&q, 1, 50));
    dkb__qgen_put_str(out, "type", dkb__qgen_pick(&q, dkb__qgen_type_syl3, 5));
    dkb__qgen_put_str(out, "region", dkb__qgen_pick(&q, dkb__qgen_region, DKB__QGEN_NREGION));
}

/* A size from 1 to 50 (p_size's range), any type suffix, one of the five
 * regions. */
static int check(const dkb_params *p, dkb_error *err) {
    int64_t size = dkb_params_get(p, "size")->i;
    const char *region = dkb_params_get(p, "region")->s;
    if (size < 1 || size > 50) return dkb_fail(err, DKB_EINVAL, "q02: size %lld out of range 1..50", (long long)size);
    if (dkb__qgen_find(dkb__qgen_region, DKB__QGEN_NREGION, region) < 0)
        return dkb_fail(err, DKB_EINVAL, "q02: unknown region '%s' (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)",
                        region);
    return 0;
}

/* ---- plan ---- */

static const char *const PART[] = {"p_partkey", "p_mfgr", "p_size", "p_type"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_name",    "s_address", "s_nationkey",
                                       "s_phone",   "s_acctbal", "s_comment"};
static const char *const PARTSUPP[] = {"ps_partkey", "ps_suppkey", "ps_supplycost"};
static const char *const NATION[] = {"n_nationkey", "n_name", "n_regionkey"};
static const char *const REGION[] = {"r_regionkey", "r_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 8 };
static const char *const OUT[NOUT] = {"s_acctbal", "s_name",    "n_name",  "p_partkey",
                                      "p_mfgr",    "s_address", "s_phone", "s_comment"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "partsupp", PARTSUPP, DKB_COUNTOF(PARTSUPP));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    dkb__plan_put_columns(tp, db, in, "region", REGION, DKB_COUNTOF(REGION));
    dkb_set_put_i64(tp, in, "size", dkb_params_get(p, "size")->i);
    dkb_set_put_i64(tp, in, "region", dkb__plan_code_required(tp, "q02", in, "r_name", dkb_params_get(p, "region")->s));
    /* p_type like '%:type': evaluated once per dictionary entry, kept as a
     * BOOL tensor over the codes */
    char pattern[DKB_PARAM_STRLEN + 2];
    snprintf(pattern, sizeof pattern, "%%%s", dkb_params_get(p, "type")->s);
    dkb__plan_put_like_lut(tp, "q02", in, "p_type", pattern, "type_lut");
    return dkb_tp_status(tp, NULL);
}

/* The parts' cheapest suppliers in the region, in partsupp order: c[0]
 * the supplier row, c[1] the nation (code), c[2] p_partkey, c[3] p_mfgr. */
static void cheapest(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **c) {
    /* the region's nations and suppliers */
    dkb_tensor *r_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "r_regionkey"),
                                        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "r_name"), DKB_CMP_EQ,
                                                       dkb_set_get_i64(tp, in, "region")));
    dkb_tensor *n_keep = dkb_tp_semi_join(tp, r_key, dkb_set_get(tp, in, "n_regionkey"));
    dkb_tensor *n_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"), n_keep);
    dkb_tensor *n_name = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_name"), n_keep);
    dkb_join_result sn = dkb_tp_join(tp, n_key, dkb_set_get(tp, in, "s_nationkey"), DKB_JOIN_INNER);
    dkb_tensor *s_row = sn.probe_idx;
    dkb_tensor *s_key = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_suppkey"), s_row, 0);
    dkb_tensor *s_name = dkb_tp_gather(tp, n_name, sn.build_idx, 0);
    /* parts of the size and type */
    dkb_tensor *p_keep =
        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "p_size"), DKB_CMP_EQ, dkb_set_get_i64(tp, in, "size"));
    p_keep = dkb_tp_and(tp, p_keep, dkb__plan_lut_mask(tp, in, "type_lut", dkb_set_get(tp, in, "p_type")));
    dkb_tensor *p_row = dkb_tp_nonzero(tp, p_keep);
    dkb_tensor *p_key = dkb_tp_gather(tp, dkb_set_get(tp, in, "p_partkey"), p_row, 0);
    /* their partsupp rows from the region's suppliers */
    dkb_join_result pp = dkb_tp_join(tp, p_key, dkb_set_get(tp, in, "ps_partkey"), DKB_JOIN_INNER);
    dkb_tensor *ps_supp = dkb_tp_gather(tp, dkb_set_get(tp, in, "ps_suppkey"), pp.probe_idx, 0);
    dkb_join_result ps = dkb_tp_join(tp, s_key, ps_supp, DKB_JOIN_INNER);
    dkb_tensor *ps_row = dkb_tp_gather(tp, pp.probe_idx, ps.probe_idx, 0);
    dkb_tensor *part = dkb_tp_gather(tp, pp.build_idx, ps.probe_idx, 0);   /* index into p_key */
    dkb_tensor *supp = ps.build_idx;                                       /* index into s_key */
    dkb_tensor *cost = dkb_tp_gather(tp, dkb_set_get(tp, in, "ps_supplycost"), ps_row, 0);
    /* ps_supplycost = the part's minimum cost in the region */
    const dkb_tensor *keys[] = {part};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *min_cost = dkb_tp_gather(tp, dkb_tp_aggregate(tp, &g, DKB_AGG_MIN, cost), g.group_id, 0);
    dkb_tensor *best = dkb_tp_cmp(tp, cost, DKB_CMP_EQ, min_cost);
    part = dkb_tp_compress(tp, part, best);
    supp = dkb_tp_compress(tp, supp, best);
    s_row = dkb_tp_gather(tp, s_row, supp, 0);
    p_row = dkb_tp_gather(tp, p_row, part, 0);
    c[0] = s_row;
    c[1] = dkb_tp_gather(tp, s_name, supp, 0);
    c[2] = dkb_tp_gather(tp, p_key, part, 0);
    c[3] = dkb_tp_gather(tp, dkb_set_get(tp, in, "p_mfgr"), p_row, 0);
}

/* The top 100 of cheapest()'s rows c with the suppliers' columns, into out. */
static void put_top(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *const *c, dkb_tensor_set *out) {
    dkb_tensor *s_row = c[0], *nation = c[1], *partkey = c[2];
    /* order by s_acctbal desc, n_name, s_name, p_partkey limit 100 */
    dkb_tensor *acctbal = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_acctbal"), s_row, 0);
    dkb_tensor *name = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_name"), s_row, 0);
    dkb_sort_key by[] = {{acctbal, true}, {nation, false}, {name, false}, {partkey, false}};
    dkb_tensor *top = dkb_tp_topk(tp, by, DKB_COUNTOF(by), 100);
    s_row = dkb_tp_gather(tp, s_row, top, 0);
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, acctbal, top, 0),
        dkb_tp_gather(tp, name, top, 0),
        dkb_tp_gather(tp, nation, top, 0),
        dkb_tp_gather(tp, partkey, top, 0),
        dkb_tp_gather(tp, c[3], top, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "s_address"), s_row, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "s_phone"), s_row, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "s_comment"), s_row, 0),
    };
    dkb__plan_put_outputs(tp, out, OUT, cols, NOUT);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *c[4];
    cheapest(tp, in, c);
    put_top(tp, in, c, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Part and partsupp stream (co-partitioned by partkey), so a part's
 * minimum cost is whole in its run of partitions; the supplier side stays
 * whole. The runs' cheapest rows are concatenated in partsupp order (the
 * core's), then ranked as in the core. */
static const char *const CHEAP[4] = {"cheap_srow", "cheap_nation", "cheap_partkey", "cheap_mfgr"};

static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *c[4];
    cheapest(tp, in, c);
    dkb__plan_put_outputs(tp, out, CHEAP, c, 4);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *c[4];
    for (int i = 0; i < 4; i++) c[i] = dkb_set_get(tp, in, CHEAP[i]);
    put_top(tp, in, c, out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q02_part = {
    .stream = {"partsupp", "part"},
    .npasses = 1,
    .pass = {{partial, 4,
              {{"cheap_srow", DKB__MERGE_CAT}, {"cheap_nation", DKB__MERGE_CAT}, {"cheap_partkey", DKB__MERGE_CAT},
               {"cheap_mfgr", DKB__MERGE_CAT}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_DECIMAL, DKB_RES_STRING, DKB_RES_STRING, DKB_RES_INT,
                                         DKB_RES_STRING,  DKB_RES_STRING, DKB_RES_STRING, DKB_RES_STRING};
    const int scales[] = {t[0]->scale, 0, 0, 0, 0, 0, 0, 0};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{0, true}, {2, false}, {1, false}, {3, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        dkb_result_set_dec(res, r, 0, dkb_tp_get_i128(tp, t[0], i));
        dkb_result_set_int(res, r, 3, dkb_tp_get_i64(tp, t[3], i));
        rc = dkb__plan_set_code(tp, "q02", res, r, 2, t[2], i);
        if (!rc) rc = dkb__plan_set_code(tp, "q02", res, r, 4, t[4], i);
    }
    const int text[] = {1, 5, 6, 7};
    for (int k = 0; k < 4 && !rc; k++) rc = dkb__plan_set_texts(tp, res, text[k], t[text[k]]);
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q02 = {
    .number = 2,
    .name = "q02",
    .title = "Minimum Cost Supplier",
    .sql = "select\n"
           "\ts_acctbal,\n"
           "\ts_name,\n"
           "\tn_name,\n"
           "\tp_partkey,\n"
           "\tp_mfgr,\n"
           "\ts_address,\n"
           "\ts_phone,\n"
           "\ts_comment\n"
           "from\n"
           "\tpart,\n"
           "\tsupplier,\n"
           "\tpartsupp,\n"
           "\tnation,\n"
           "\tregion\n"
           "where\n"
           "\tp_partkey = ps_partkey\n"
           "\tand s_suppkey = ps_suppkey\n"
           "\tand p_size = :size\n"
           "\tand p_type like '%:type'\n"
           "\tand s_nationkey = n_nationkey\n"
           "\tand n_regionkey = r_regionkey\n"
           "\tand r_name = ':region'\n"
           "\tand ps_supplycost = (\n"
           "\t\tselect\n"
           "\t\t\tmin(ps_supplycost)\n"
           "\t\tfrom\n"
           "\t\t\tpartsupp,\n"
           "\t\t\tsupplier,\n"
           "\t\t\tnation,\n"
           "\t\t\tregion\n"
           "\t\twhere\n"
           "\t\t\tp_partkey = ps_partkey\n"
           "\t\t\tand s_suppkey = ps_suppkey\n"
           "\t\t\tand s_nationkey = n_nationkey\n"
           "\t\t\tand n_regionkey = r_regionkey\n"
           "\t\t\tand r_name = ':region'\n"
           "\t)\n"
           "order by\n"
           "\ts_acctbal desc,\n"
           "\tn_name,\n"
           "\ts_name,\n"
           "\tp_partkey\n"
           "limit 100;\n",
    .nparams = 3,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
