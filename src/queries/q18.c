/* q18.c: TPC-H Q18, Large Volume Customer, as a TensorPlan baseline.
 *
 * The customers who placed large orders (total quantity above QUANTITY),
 * with those orders, the 100 most expensive first:
 *
 *   select c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, sum(l_quantity)
 *   from customer, orders, lineitem
 *   where o_orderkey in (select l_orderkey from lineitem
 *                        group by l_orderkey having sum(l_quantity) > 300)
 *     and c_custkey = o_custkey
 *     and o_orderkey = l_orderkey
 *   group by c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice
 *   order by o_totalprice desc, o_orderdate
 *   limit 100;
 *
 * Plan: group all of lineitem by order key (the subquery), keep the orders
 * over the limit; they build the joins with orders and then customer. The
 * outer group-by is one group per order (its other keys follow from
 * o_orderkey), and its sum(l_quantity) runs over the same lines as the
 * subquery's, so the subquery's sums are reused. Top 100 by price, date. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"quantity", DKB_PARAM_INT, 0, "orders of a total quantity above this (312..315; qualification 300)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 18);
    dkb__qgen_put_int(out, "quantity", seed ? dkb__qgen_int(&q, 312, 315) : 300);
}

/* An order has at most 7 lines of quantity 1..50 each: any limit from 0 to
 * 1000 is meaningful. */
static int check(const dkb_params *p, dkb_error *err) {
    int64_t quantity = dkb_params_get(p, "quantity")->i;
    if (quantity < 0 || quantity > 1000)
        return dkb_fail(err, DKB_EINVAL, "q18: quantity %lld out of range 0..1000", (long long)quantity);
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_orderkey", "l_quantity"};
static const char *const ORDERS[] = {"o_orderkey", "o_custkey", "o_orderdate", "o_totalprice"};
static const char *const CUSTOMER[] = {"c_custkey", "c_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 6 };
static const char *const OUT[NOUT] = {"c_name", "c_custkey", "o_orderkey", "o_orderdate", "o_totalprice",
                                      "sum(l_quantity)"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb_set_put_i64(tp, in, "quantity", dkb_params_get(p, "quantity")->i * 100);  /* hundredths */
    return dkb_tp_status(tp, NULL);
}

/* The large orders, in orders' row order: cols[1..5] (custkey, orderkey,
 * date, total price, quantity) as OUT names them. */
static void large_orders(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **cols) {
    dkb_tensor *l_orderkey = dkb_set_get(tp, in, "l_orderkey");

    /* select l_orderkey from lineitem group by l_orderkey
     * having sum(l_quantity) > :1 */
    const dkb_tensor *keys[] = {l_orderkey};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *qty = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, dkb_set_get(tp, in, "l_quantity"));
    dkb_tensor *large = dkb_tp_cmp_i64(tp, qty, DKB_CMP_GT, dkb_set_get_i64(tp, in, "quantity"));
    dkb_tensor *big_key = dkb_tp_compress(tp, dkb_tp_gather(tp, l_orderkey, g.first_row, 0), large);
    dkb_tensor *big_qty = dkb_tp_compress(tp, qty, large);

    /* o_orderkey in (...): the large orders build, orders probes */
    dkb_join_result jo = dkb_tp_join(tp, big_key, dkb_set_get(tp, in, "o_orderkey"), DKB_JOIN_INNER);
    cols[2] = dkb_tp_gather(tp, dkb_set_get(tp, in, "o_orderkey"), jo.probe_idx, 0);
    cols[1] = dkb_tp_gather(tp, dkb_set_get(tp, in, "o_custkey"), jo.probe_idx, 0);
    cols[3] = dkb_tp_gather(tp, dkb_set_get(tp, in, "o_orderdate"), jo.probe_idx, 0);
    cols[4] = dkb_tp_gather(tp, dkb_set_get(tp, in, "o_totalprice"), jo.probe_idx, 0);
    cols[5] = dkb_tp_gather(tp, big_qty, jo.build_idx, 0);
}

/* Their customers' names, then the top 100, into out. */
static void put_top(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **cols, dkb_tensor_set *out) {
    /* c_custkey = o_custkey: those orders build, customer probes */
    dkb_join_result jc = dkb_tp_join(tp, cols[1], dkb_set_get(tp, in, "c_custkey"), DKB_JOIN_INNER);
    cols[0] = dkb_tp_gather(tp, dkb_set_get(tp, in, "c_name"), jc.probe_idx, 0);
    for (int i = 1; i < NOUT; i++) cols[i] = dkb_tp_gather(tp, cols[i], jc.build_idx, 0);

    /* order by o_totalprice desc, o_orderdate limit 100 */
    dkb_sort_key by[] = {{cols[4], true}, {cols[3], false}};
    dkb_tensor *top = dkb_tp_topk(tp, by, DKB_COUNTOF(by), 100);
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, top);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    large_orders(tp, in, cols);
    put_top(tp, in, cols, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* An order's line items share its partition, so each run of partitions
 * finds its own large orders whole; concatenated in partition order they
 * are the core's, in the same order. Named apart from the input columns. */
static const char *const LARGE[NOUT] = {NULL, "large_custkey", "large_orderkey", "large_orderdate",
                                        "large_totalprice", "large_qty"};

static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    large_orders(tp, in, cols);
    for (int i = 1; i < NOUT; i++) dkb_set_put(tp, out, LARGE[i], cols[i]);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT] = {NULL};
    for (int i = 1; i < NOUT; i++) cols[i] = dkb_set_get(tp, in, LARGE[i]);
    put_top(tp, in, cols, out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q18_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{partial, NOUT - 1,
              {{"large_custkey", DKB__MERGE_CAT}, {"large_orderkey", DKB__MERGE_CAT},
               {"large_orderdate", DKB__MERGE_CAT}, {"large_totalprice", DKB__MERGE_CAT},
               {"large_qty", DKB__MERGE_CAT}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT,     DKB_RES_INT,
                                         DKB_RES_DATE,   DKB_RES_DECIMAL, DKB_RES_DECIMAL};
    const int scales[] = {0, 0, 0, 0, t[4]->scale, t[5]->scale};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{4, true}, {3, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        if (dkb_result_add_row(res) < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, i, 1, dkb_tp_get_i64(tp, t[1], i));
        dkb_result_set_int(res, i, 2, dkb_tp_get_i64(tp, t[2], i));
        dkb_result_set_date(res, i, 3, (int32_t)dkb_tp_get_i64(tp, t[3], i));
        dkb_result_set_dec(res, i, 4, dkb_tp_get_i128(tp, t[4], i));
        dkb_result_set_dec(res, i, 5, dkb_tp_get_i128(tp, t[5], i));
    }
    rc = dkb__plan_set_texts(tp, res, 0, t[0]);
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q18 = {
    .number = 18,
    .name = "q18",
    .title = "Large Volume Customer",
    .sql = "select\n"
           "\tc_name,\n"
           "\tc_custkey,\n"
           "\to_orderkey,\n"
           "\to_orderdate,\n"
           "\to_totalprice,\n"
           "\tsum(l_quantity)\n"
           "from\n"
           "\tcustomer,\n"
           "\torders,\n"
           "\tlineitem\n"
           "where\n"
           "\to_orderkey in (\n"
           "\t\tselect\n"
           "\t\t\tl_orderkey\n"
           "\t\tfrom\n"
           "\t\t\tlineitem\n"
           "\t\tgroup by\n"
           "\t\t\tl_orderkey having\n"
           "\t\t\t\tsum(l_quantity) > :quantity\n"
           "\t)\n"
           "\tand c_custkey = o_custkey\n"
           "\tand o_orderkey = l_orderkey\n"
           "group by\n"
           "\tc_name,\n"
           "\tc_custkey,\n"
           "\to_orderkey,\n"
           "\to_orderdate,\n"
           "\to_totalprice\n"
           "order by\n"
           "\to_totalprice desc,\n"
           "\to_orderdate\n"
           "limit 100;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
