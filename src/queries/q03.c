/* q03.c: TPC-H Q3, Shipping Priority, as a TensorPlan baseline.
 *
 * The ten unshipped orders of highest revenue for customers of one market
 * segment, as of DATE:
 *
 *   select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue,
 *          o_orderdate, o_shippriority
 *   from customer, orders, lineitem
 *   where c_mktsegment = 'BUILDING' and c_custkey = o_custkey
 *     and l_orderkey = o_orderkey
 *     and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
 *   group by l_orderkey, o_orderdate, o_shippriority
 *   order by revenue desc, o_orderdate
 *   limit 10;
 *
 * Plan: segment customers; orders before DATE of those customers
 * (semi-join); line items shipped after DATE joined to those orders (the
 * orders are the smaller, build side; the date test first, as it is far
 * cheaper per row than a probe); revenue summed per order key.
 * o_orderdate and o_shippriority depend on the order key, so the group key
 * is the order key alone and they are read at each group's first row. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"segment", DKB_PARAM_STRING, 0, "market segment (AUTOMOBILE, BUILDING, FURNITURE, HOUSEHOLD, MACHINERY)"},
    {"date", DKB_PARAM_DATE, 0, "orders before and items shipped after this day (1995-03-01..31)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "segment", "BUILDING");
        dkb__qgen_put_date(out, "date", 1995, 3, 15);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 3);
    dkb__qgen_put_str(out, "segment", dkb__qgen_pick(&q, dkb__qgen_segment, DKB__QGEN_NSEGMENT));
    dkb__qgen_put_days(out, "date", dkb__qgen_day(&q, dkb__qgen_date(1995, 3, 1), dkb__qgen_date(1995, 3, 31)));
}

/* The segment must be one of the five; any date. */
static int check(const dkb_params *p, dkb_error *err) {
    const char *segment = dkb_params_get(p, "segment")->s;
    if (dkb__qgen_find(dkb__qgen_segment, DKB__QGEN_NSEGMENT, segment) < 0)
        return dkb_fail(err, DKB_EINVAL,
                        "q03: unknown segment '%s' (AUTOMOBILE, BUILDING, FURNITURE, HOUSEHOLD, MACHINERY)", segment);
    return 0;
}

/* ---- plan ---- */

static const char *const CUSTOMER[] = {"c_custkey", "c_mktsegment"};
static const char *const ORDERS[] = {"o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"};
static const char *const LINEITEM[] = {"l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"};
/* Core outputs, named as the result columns. */
enum { NOUT = 4 };
static const char *const OUT[NOUT] = {"l_orderkey", "revenue", "o_orderdate", "o_shippriority"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb_set_put_i64(tp, in, "segment",
                    dkb__plan_code_required(tp, "q03", in, "c_mktsegment", dkb_params_get(p, "segment")->s));
    dkb_set_put_i64(tp, in, "date", dkb_params_get(p, "date")->i);
    return dkb_tp_status(tp, NULL);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    int64_t date = dkb_set_get_i64(tp, in, "date");
    /* customers of the segment */
    dkb_tensor *cust = dkb_tp_compress(tp, dkb_set_get(tp, in, "c_custkey"),
                                       dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "c_mktsegment"), DKB_CMP_EQ,
                                                      dkb_set_get_i64(tp, in, "segment")));
    /* their orders before the date */
    dkb_tensor *o_keep = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "o_orderdate"), DKB_CMP_LT, date);
    o_keep = dkb_tp_and(tp, o_keep, dkb_tp_semi_join(tp, cust, dkb_set_get(tp, in, "o_custkey")));
    dkb_tensor *o_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderkey"), o_keep);
    dkb_tensor *o_date = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderdate"), o_keep);
    dkb_tensor *o_prio = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_shippriority"), o_keep);
    /* line items shipped after the date, of those orders */
    dkb_tensor *late = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "l_shipdate"), DKB_CMP_GT, date);
    dkb_tensor *l_row = dkb_tp_nonzero(tp, late);
    dkb_join_result j =
        dkb_tp_join(tp, o_key, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_orderkey"), l_row, 0), DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, j.probe_idx, 0);
    dkb_tensor *o_row = j.build_idx;
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), l_row, 0);
    dkb_tensor *disc = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_discount"), l_row, 0);
    dkb_tensor *volume = dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
    /* group by l_orderkey (= o_orderkey; o_orderdate, o_shippriority follow from it) */
    const dkb_tensor *keys[] = {dkb_tp_gather(tp, o_key, o_row, 0)};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *order_row = dkb_tp_gather(tp, o_row, g.first_row, 0);
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, keys[0], g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, volume),
        dkb_tp_gather(tp, o_date, order_row, 0),
        dkb_tp_gather(tp, o_prio, order_row, 0),
    };
    /* order by revenue desc, o_orderdate limit 10 */
    dkb_sort_key by[] = {{cols[1], true}, {cols[2], false}};
    dkb_tensor *top = dkb_tp_topk(tp, by, DKB_COUNTOF(by), 10);
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, top);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* An order's line items share its partition, so each run of partitions'
 * core gives its own top 10 whole; the top 10 of their concatenation (in
 * partition order, which is the group order of the whole run) is the
 * core's. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    for (int i = 0; i < NOUT; i++) cols[i] = dkb_set_get(tp, in, OUT[i]);
    dkb_sort_key by[] = {{cols[1], true}, {cols[2], false}};
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, dkb_tp_topk(tp, by, DKB_COUNTOF(by), 10));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q03_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{core, NOUT,
              {{"l_orderkey", DKB__MERGE_CAT}, {"revenue", DKB__MERGE_CAT}, {"o_orderdate", DKB__MERGE_CAT},
               {"o_shippriority", DKB__MERGE_CAT}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_DECIMAL, DKB_RES_DATE, DKB_RES_INT};
    const int scales[] = {0, t[1]->scale, 0, 0};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{1, true}, {2, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, r, 0, dkb_tp_get_i64(tp, t[0], i));
        dkb_result_set_dec(res, r, 1, dkb_tp_get_i128(tp, t[1], i));
        dkb_result_set_date(res, r, 2, (int32_t)dkb_tp_get_i64(tp, t[2], i));
        dkb_result_set_int(res, r, 3, dkb_tp_get_i64(tp, t[3], i));
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q03 = {
    .number = 3,
    .name = "q03",
    .title = "Shipping Priority",
    .sql = "select\n"
           "\tl_orderkey,\n"
           "\tsum(l_extendedprice * (1 - l_discount)) as revenue,\n"
           "\to_orderdate,\n"
           "\to_shippriority\n"
           "from\n"
           "\tcustomer,\n"
           "\torders,\n"
           "\tlineitem\n"
           "where\n"
           "\tc_mktsegment = ':segment'\n"
           "\tand c_custkey = o_custkey\n"
           "\tand l_orderkey = o_orderkey\n"
           "\tand o_orderdate < date ':date'\n"
           "\tand l_shipdate > date ':date'\n"
           "group by\n"
           "\tl_orderkey,\n"
           "\to_orderdate,\n"
           "\to_shippriority\n"
           "order by\n"
           "\trevenue desc,\n"
           "\to_orderdate\n"
           "limit 10;\n",
    .nparams = 2,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
