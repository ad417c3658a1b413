/* q05.c: TPC-H Q5, Local Supplier Volume, as a TensorPlan baseline.
 *
 * Revenue of one year's orders whose customer and supplier are of the same
 * nation, per nation of one region:
 *
 *   select n_name, sum(l_extendedprice * (1 - l_discount)) as revenue
 *   from customer, orders, lineitem, supplier, nation, region
 *   where c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and l_suppkey = s_suppkey and c_nationkey = s_nationkey
 *     and s_nationkey = n_nationkey and n_regionkey = r_regionkey
 *     and r_name = 'ASIA'
 *     and o_orderdate >= date '1994-01-01'
 *     and o_orderdate < date '1994-01-01' + interval '1' year
 *   group by n_name
 *   order by revenue desc;
 *
 * Plan: the region's nations; their customers and suppliers (joins on the
 * nation keys); the year's orders of those customers (carrying the
 * customer's nation); their line items (the orders are the build side);
 * then one join on the packed key (suppkey, nationkey) for
 * l_suppkey = s_suppkey and c_nationkey = s_nationkey; revenue per nation
 * name code. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"region", DKB_PARAM_STRING, 0, "region name (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)"},
    {"date", DKB_PARAM_DATE, 0, "first day of the 1-year window (Jan 1 of 1993..1997)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "region", "ASIA");
        dkb__qgen_put_date(out, "date", 1994, 1, 1);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 5);
    dkb__qgen_put_str(out, "region", dkb__qgen_pick(&q, dkb__qgen_region, DKB__QGEN_NREGION));
    dkb__qgen_put_days(out, "date", dkb__qgen_year(&q, 1993, 1997));
}

/* The region must be one of the five; any date. */
static int check(const dkb_params *p, dkb_error *err) {
    const char *region = dkb_params_get(p, "region")->s;
    if (dkb__qgen_find(dkb__qgen_region, DKB__QGEN_NREGION, region) < 0)
        return dkb_fail(err, DKB_EINVAL, "q05: unknown region '%s' (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)",
                        region);
    return 0;
}

/* ---- plan ---- */

static const char *const CUSTOMER[] = {"c_custkey", "c_nationkey"};
static const char *const ORDERS[] = {"o_orderkey", "o_custkey", "o_orderdate"};
static const char *const LINEITEM[] = {"l_orderkey", "l_suppkey", "l_extendedprice", "l_discount"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_nationkey"};
static const char *const NATION[] = {"n_nationkey", "n_name", "n_regionkey"};
static const char *const REGION[] = {"r_regionkey", "r_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 2 };
static const char *const OUT[NOUT] = {"n_name", "revenue"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    dkb__plan_put_columns(tp, db, in, "region", REGION, DKB_COUNTOF(REGION));
    dkb_set_put_i64(tp, in, "region", dkb__plan_code_required(tp, "q05", in, "r_name", dkb_params_get(p, "region")->s));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "date_lo", date);
    dkb_set_put_i64(tp, in, "date_hi", dkb__qgen_add_months(date, 12) - 1);   /* inclusive */
    return dkb_tp_status(tp, NULL);
}

/* The revenue per supplier nation, cols in OUT order, groups in order of
 * first appearance. */
static void by_nation(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **cols) {
    /* the region's nations */
    dkb_tensor *r_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "r_regionkey"),
                                        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "r_name"), DKB_CMP_EQ,
                                                       dkb_set_get_i64(tp, in, "region")));
    dkb_tensor *n_keep = dkb_tp_semi_join(tp, r_key, dkb_set_get(tp, in, "n_regionkey"));
    dkb_tensor *n_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"), n_keep);
    dkb_tensor *n_name = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_name"), n_keep);
    /* their customers and suppliers */
    dkb_tensor *c_nation = dkb_set_get(tp, in, "c_nationkey");
    dkb_tensor *c_keep = dkb_tp_semi_join(tp, n_key, c_nation);
    dkb_tensor *c_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "c_custkey"), c_keep);
    c_nation = dkb_tp_compress(tp, c_nation, c_keep);
    dkb_join_result sn = dkb_tp_join(tp, n_key, dkb_set_get(tp, in, "s_nationkey"), DKB_JOIN_INNER);
    dkb_tensor *s_key = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_suppkey"), sn.probe_idx, 0);
    dkb_tensor *s_nation = dkb_tp_gather(tp, n_key, sn.build_idx, 0);
    dkb_tensor *s_name = dkb_tp_gather(tp, n_name, sn.build_idx, 0);
    /* the year's orders of those customers, with the customer's nation */
    dkb_tensor *o_keep = dkb_tp_between(tp, dkb_set_get(tp, in, "o_orderdate"), dkb_set_get_i64(tp, in, "date_lo"),
                                        dkb_set_get_i64(tp, in, "date_hi"));
    dkb_tensor *o_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderkey"), o_keep);
    dkb_join_result oc = dkb_tp_join(tp, c_key, dkb_tp_compress(tp, dkb_set_get(tp, in, "o_custkey"), o_keep),
                                     DKB_JOIN_INNER);
    o_key = dkb_tp_gather(tp, o_key, oc.probe_idx, 0);
    dkb_tensor *o_nation = dkb_tp_gather(tp, c_nation, oc.build_idx, 0);
    /* their line items */
    dkb_join_result lo = dkb_tp_join(tp, o_key, dkb_set_get(tp, in, "l_orderkey"), DKB_JOIN_INNER);
    dkb_tensor *l_supp = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_suppkey"), lo.probe_idx, 0);
    dkb_tensor *l_nation = dkb_tp_gather(tp, o_nation, lo.build_idx, 0);
    /* l_suppkey = s_suppkey and c_nationkey = s_nationkey: one packed key */
    dkb_tensor *nmax = dkb_tp_reduce(tp, DKB_AGG_MAX, n_key);
    int64_t bound = nmax && nmax->n ? dkb_tp_get_i64(tp, nmax, 0) : 0;
    dkb_join_result ls = dkb_tp_join(tp, dkb_tp_pack2(tp, s_key, s_nation, bound),
                                     dkb_tp_pack2(tp, l_supp, l_nation, bound), DKB_JOIN_INNER);
    dkb_tensor *l_row = dkb_tp_gather(tp, lo.probe_idx, ls.probe_idx, 0);
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), l_row, 0);
    dkb_tensor *disc = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_discount"), l_row, 0);
    dkb_tensor *volume = dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
    /* group by n_name, order by revenue desc */
    const dkb_tensor *keys[] = {dkb_tp_gather(tp, s_name, ls.build_idx, 0)};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    cols[0] = dkb_tp_gather(tp, keys[0], g.first_row, 0);
    cols[1] = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, volume);
}

/* cols ordered by revenue desc into out. */
static void put_ordered(dkb_tp *tp, dkb_tensor_set *out, dkb_tensor *const *cols) {
    dkb_sort_key by[] = {{cols[1], true}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    by_nation(tp, in, cols);
    put_ordered(tp, out, cols);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions: the revenue per nation in group order; merged by
 * nation (in order of first appearance, as the whole run groups), then
 * ordered as the core orders. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    by_nation(tp, in, cols);
    dkb__plan_put_outputs(tp, out, OUT, cols, NOUT);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT] = {dkb_set_get(tp, in, OUT[0]), dkb_set_get(tp, in, OUT[1])};
    put_ordered(tp, out, cols);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q05_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{partial, NOUT, {{"n_name", DKB__MERGE_KEY}, {"revenue", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_DECIMAL};
    const int scales[] = {0, t[1]->scale};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{1, true}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        rc = dkb__plan_set_code(tp, "q05", res, r, 0, t[0], i);
        dkb_result_set_dec(res, r, 1, dkb_tp_get_i128(tp, t[1], i));
    }
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q05 = {
    .number = 5,
    .name = "q05",
    .title = "Local Supplier Volume",
    .sql = "select\n"
           "\tn_name,\n"
           "\tsum(l_extendedprice * (1 - l_discount)) as revenue\n"
           "from\n"
           "\tcustomer,\n"
           "\torders,\n"
           "\tlineitem,\n"
           "\tsupplier,\n"
           "\tnation,\n"
           "\tregion\n"
           "where\n"
           "\tc_custkey = o_custkey\n"
           "\tand l_orderkey = o_orderkey\n"
           "\tand l_suppkey = s_suppkey\n"
           "\tand c_nationkey = s_nationkey\n"
           "\tand s_nationkey = n_nationkey\n"
           "\tand n_regionkey = r_regionkey\n"
           "\tand r_name = ':region'\n"
           "\tand o_orderdate >= date ':date'\n"
           "\tand o_orderdate < date ':date' + interval '1' year\n"
           "group by\n"
           "\tn_name\n"
           "order by\n"
           "\trevenue desc;\n",
    .nparams = 2,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
