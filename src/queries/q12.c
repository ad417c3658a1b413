/* q12.c: TPC-H Q12, Shipping Modes and Order Priority, as a TensorPlan
 * baseline.
 *
 * For the line items of two ship modes received within one year, shipped
 * before their commit date and received after it, count per ship mode the
 * lines whose order had a high priority (1-URGENT, 2-HIGH) and the others:
 *
 *   select l_shipmode,
 *          sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH'
 *                   then 1 else 0 end) as high_line_count,
 *          sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH'
 *                   then 1 else 0 end) as low_line_count
 *   from orders, lineitem
 *   where o_orderkey = l_orderkey
 *     and l_shipmode in ('MAIL', 'SHIP')
 *     and l_commitdate < l_receiptdate
 *     and l_shipdate < l_commitdate
 *     and l_receiptdate >= date '1994-01-01'
 *     and l_receiptdate < date '1994-01-01' + interval '1' year
 *   group by l_shipmode
 *   order by l_shipmode;
 *
 * Plan: filter lineitem, join the surviving lines (build, the small side)
 * with orders (probe), test the priority codes, group by ship mode code
 * (codes sort as their strings). */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"shipmode1", DKB_PARAM_STRING, 0, "first ship mode (REG AIR, AIR, RAIL, TRUCK, MAIL, FOB, SHIP)"},
    {"shipmode2", DKB_PARAM_STRING, 0, "second ship mode (drawn different from the first)"},
    {"date", DKB_PARAM_DATE, 0, "first day of the 1-year receipt window (Jan 1 of 1993..1997)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "shipmode1", "MAIL");
        dkb__qgen_put_str(out, "shipmode2", "SHIP");
        dkb__qgen_put_date(out, "date", 1994, 1, 1);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 12);
    int a, b;
    dkb__qgen_pick2(&q, DKB__QGEN_NSHIPMODE, &a, &b);
    dkb__qgen_put_str(out, "shipmode1", dkb__qgen_shipmode[a]);
    dkb__qgen_put_str(out, "shipmode2", dkb__qgen_shipmode[b]);
    dkb__qgen_put_days(out, "date", dkb__qgen_year(&q, 1993, 1997));
}

/* Both modes must be ship modes (equal modes are valid SQL); any date. */
static int check(const dkb_params *p, dkb_error *err) {
    static const char *const names[] = {"shipmode1", "shipmode2"};
    for (int i = 0; i < 2; i++) {
        const char *s = dkb_params_get(p, names[i])->s;
        if (dkb__qgen_find(dkb__qgen_shipmode, DKB__QGEN_NSHIPMODE, s) < 0)
            return dkb_fail(err, DKB_EINVAL,
                            "q12: %s '%s' is not a ship mode (REG AIR, AIR, RAIL, TRUCK, MAIL, FOB, SHIP)",
                            names[i], s);
    }
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_orderkey", "l_shipmode", "l_shipdate", "l_commitdate",
                                       "l_receiptdate"};
static const char *const ORDERS[] = {"o_orderkey", "o_orderpriority"};
/* Core outputs, named as the result columns. */
static const char *const OUT[] = {"l_shipmode", "high_line_count", "low_line_count"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "mode1",
                    dkb__plan_code_or_none(tp, "q12", in, "l_shipmode", dkb_params_get(p, "shipmode1")->s));
    dkb_set_put_i64(tp, in, "mode2",
                    dkb__plan_code_or_none(tp, "q12", in, "l_shipmode", dkb_params_get(p, "shipmode2")->s));
    dkb_set_put_i64(tp, in, "receipt_lo", date);
    dkb_set_put_i64(tp, in, "receipt_hi", dkb__qgen_add_months(date, 12) - 1);  /* inclusive */
    dkb_set_put_i64(tp, in, "urgent", dkb__plan_code_or_none(tp, "q12", in, "o_orderpriority", "1-URGENT"));
    dkb_set_put_i64(tp, in, "high", dkb__plan_code_or_none(tp, "q12", in, "o_orderpriority", "2-HIGH"));
    return dkb_tp_status(tp, NULL);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *l_shipmode = dkb_set_get(tp, in, "l_shipmode");
    dkb_tensor *l_commitdate = dkb_set_get(tp, in, "l_commitdate");
    dkb_tensor *l_receiptdate = dkb_set_get(tp, in, "l_receiptdate");
    int64_t modes[2] = {dkb_set_get_i64(tp, in, "mode1"), dkb_set_get_i64(tp, in, "mode2")};
    int64_t high_prio[2] = {dkb_set_get_i64(tp, in, "urgent"), dkb_set_get_i64(tp, in, "high")};

    /* where l_shipmode in (:1, :2) and l_commitdate < l_receiptdate
     *   and l_shipdate < l_commitdate and l_receiptdate in the year */
    dkb_tensor *keep = dkb_tp_in_i64(tp, l_shipmode, modes, 2);
    keep = dkb_tp_and(tp, keep, dkb_tp_cmp(tp, l_commitdate, DKB_CMP_LT, l_receiptdate));
    keep = dkb_tp_and(tp, keep, dkb_tp_cmp(tp, dkb_set_get(tp, in, "l_shipdate"), DKB_CMP_LT, l_commitdate));
    keep = dkb_tp_and(tp, keep,
                      dkb_tp_between(tp, l_receiptdate, dkb_set_get_i64(tp, in, "receipt_lo"),
                                     dkb_set_get_i64(tp, in, "receipt_hi")));
    dkb_tensor *lkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_orderkey"), keep);
    dkb_tensor *lmode = dkb_tp_compress(tp, l_shipmode, keep);

    /* o_orderkey = l_orderkey: the filtered lines build, orders probe */
    dkb_join_result j = dkb_tp_join(tp, lkey, dkb_set_get(tp, in, "o_orderkey"), DKB_JOIN_INNER);
    dkb_tensor *mode = dkb_tp_gather(tp, lmode, j.build_idx, 0);
    dkb_tensor *prio = dkb_tp_gather(tp, dkb_set_get(tp, in, "o_orderpriority"), j.probe_idx, 0);
    dkb_tensor *high = dkb_tp_in_i64(tp, prio, high_prio, 2);

    /* group by l_shipmode: sum(case ... then 1 else 0) */
    const dkb_tensor *keys[] = {mode};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *cols[3] = {
        dkb_tp_gather(tp, mode, g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, dkb_tp_cast(tp, high, DKB_TP_I64)),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, dkb_tp_cast(tp, dkb_tp_not(tp, high), DKB_TP_I64)),
    };

    /* order by l_shipmode */
    dkb_sort_key by[] = {{cols[0], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, DKB_COUNTOF(OUT), perm);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* A line item and its order share a partition: each run of partitions'
 * core counts its own lines per mode; the counts add up. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[3];
    for (int i = 0; i < 3; i++) cols[i] = dkb_set_get(tp, in, OUT[i]);
    dkb_sort_key by[] = {{cols[0], false}};
    dkb__plan_put_gathered(tp, out, OUT, cols, 3, dkb_tp_sort(tp, by, DKB_COUNTOF(by)));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q12_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{core, 3,
              {{"l_shipmode", DKB__MERGE_KEY}, {"high_line_count", DKB__MERGE_SUM},
               {"low_line_count", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[3];
    int rc = dkb__plan_get_outputs(tp, out, OUT, DKB_COUNTOF(OUT), t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT, DKB_RES_INT};
    static const int scales[] = {0, 0, 0};
    rc = dkb_result_init(res, DKB_COUNTOF(OUT), OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        rc = dkb__plan_set_code(tp, "q12", res, r, 0, t[0], i);
        if (rc) return rc;
        dkb_result_set_int(res, r, 1, (int64_t)dkb_tp_get_i128(tp, t[1], i));
        dkb_result_set_int(res, r, 2, (int64_t)dkb_tp_get_i128(tp, t[2], i));
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q12 = {
    .number = 12,
    .name = "q12",
    .title = "Shipping Modes and Order Priority",
    .sql = "select\n"
           "\tl_shipmode,\n"
           "\tsum(case\n"
           "\t\twhen o_orderpriority = '1-URGENT'\n"
           "\t\t\tor o_orderpriority = '2-HIGH'\n"
           "\t\t\tthen 1\n"
           "\t\telse 0\n"
           "\tend) as high_line_count,\n"
           "\tsum(case\n"
           "\t\twhen o_orderpriority <> '1-URGENT'\n"
           "\t\t\tand o_orderpriority <> '2-HIGH'\n"
           "\t\t\tthen 1\n"
           "\t\telse 0\n"
           "\tend) as low_line_count\n"
           "from\n"
           "\torders,\n"
           "\tlineitem\n"
           "where\n"
           "\to_orderkey = l_orderkey\n"
           "\tand l_shipmode in (':shipmode1', ':shipmode2')\n"
           "\tand l_commitdate < l_receiptdate\n"
           "\tand l_shipdate < l_commitdate\n"
           "\tand l_receiptdate >= date ':date'\n"
           "\tand l_receiptdate < date ':date' + interval '1' year\n"
           "group by\n"
           "\tl_shipmode\n"
           "order by\n"
           "\tl_shipmode;\n",
    .nparams = 3,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
