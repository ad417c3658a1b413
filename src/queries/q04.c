/* q04.c: TPC-H Q4, Order Priority Checking, as a TensorPlan baseline.
 *
 * How many orders of one quarter had at least one line item received
 * after its commit date, per order priority:
 *
 *   select o_orderpriority, count(*) as order_count
 *   from orders
 *   where o_orderdate >= date '1993-07-01'
 *     and o_orderdate < date '1993-07-01' + interval '3' month
 *     and exists (select * from lineitem
 *                 where l_orderkey = o_orderkey and l_commitdate < l_receiptdate)
 *   group by o_orderpriority
 *   order by o_orderpriority;
 *
 * Plan: the quarter's orders; their line items (a join with the orders as
 * the small build side); the late ones; the EXISTS as a semi-join of the
 * orders' positions against the positions those items matched; count per
 * priority code (codes sort as their strings). */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, month windows, parameter setters)

static const dkb_param_def params[] = {
    {"date", DKB_PARAM_DATE, 0, "first day of the 3-month window (a month of 1993-02..1997-11)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_date(out, "date", 1993, 7, 1);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 4);
    dkb__qgen_put_days(out, "date", dkb__qgen_month(&q, 1993, 2, 1997, 11));
}

/* Any date starts a valid window. */
static int check(const dkb_params *p, dkb_error *err) {
    (void)p, (void)err;
    return 0;
}

/* ---- plan ---- */

static const char *const ORDERS[] = {"o_orderkey", "o_orderdate", "o_orderpriority"};
static const char *const LINEITEM[] = {"l_orderkey", "l_commitdate", "l_receiptdate"};
/* Core outputs, named as the result columns. */
enum { NOUT = 2 };
static const char *const OUT[NOUT] = {"o_orderpriority", "order_count"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "date_lo", date);
    dkb_set_put_i64(tp, in, "date_hi", dkb__qgen_add_months(date, 3) - 1);   /* inclusive */
    return dkb_tp_status(tp, NULL);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    /* the quarter's orders */
    dkb_tensor *o_keep = dkb_tp_between(tp, dkb_set_get(tp, in, "o_orderdate"), dkb_set_get_i64(tp, in, "date_lo"),
                                        dkb_set_get_i64(tp, in, "date_hi"));
    dkb_tensor *o_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderkey"), o_keep);
    dkb_tensor *o_prio = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderpriority"), o_keep);
    /* their line items (the orders are the build side) with l_commitdate <
     * l_receiptdate */
    dkb_join_result j = dkb_tp_join(tp, o_key, dkb_set_get(tp, in, "l_orderkey"), DKB_JOIN_INNER);
    dkb_tensor *commit = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_commitdate"), j.probe_idx, 0);
    dkb_tensor *receipt = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_receiptdate"), j.probe_idx, 0);
    dkb_tensor *late_order = dkb_tp_compress(tp, j.build_idx, dkb_tp_cmp(tp, commit, DKB_CMP_LT, receipt));
    /* exists: the orders (by position) that have such an item */
    dkb_tensor *o_pos = dkb_tp_arange(tp, o_key ? o_key->n : 0);
    dkb_tensor *prio = dkb_tp_compress(tp, o_prio, dkb_tp_semi_join(tp, late_order, o_pos));
    /* group by o_orderpriority, order by it */
    const dkb_tensor *keys[] = {prio};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, prio, g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, prio),
    };
    dkb_sort_key by[] = {{cols[0], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* An order and its line items share a partition: each run of partitions'
 * core counts its own orders per priority; the counts add up. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT] = {dkb_set_get(tp, in, OUT[0]), dkb_set_get(tp, in, OUT[1])};
    dkb_sort_key by[] = {{cols[0], false}};
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, dkb_tp_sort(tp, by, DKB_COUNTOF(by)));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q04_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{core, NOUT, {{"o_orderpriority", DKB__MERGE_KEY}, {"order_count", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT};
    static const int scales[] = {0, 0};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        rc = dkb__plan_set_code(tp, "q04", res, r, 0, t[0], i);
        dkb_result_set_int(res, r, 1, dkb_tp_get_i64(tp, t[1], i));
    }
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q04 = {
    .number = 4,
    .name = "q04",
    .title = "Order Priority Checking",
    .sql = "select\n"
           "\to_orderpriority,\n"
           "\tcount(*) as order_count\n"
           "from\n"
           "\torders\n"
           "where\n"
           "\to_orderdate >= date ':date'\n"
           "\tand o_orderdate < date ':date' + interval '3' month\n"
           "\tand exists (\n"
           "\t\tselect\n"
           "\t\t\t*\n"
           "\t\tfrom\n"
           "\t\t\tlineitem\n"
           "\t\twhere\n"
           "\t\t\tl_orderkey = o_orderkey\n"
           "\t\t\tand l_commitdate < l_receiptdate\n"
           "\t)\n"
           "group by\n"
           "\to_orderpriority\n"
           "order by\n"
           "\to_orderpriority;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
