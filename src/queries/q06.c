/* q06.c: TPC-H Q6, Forecasting Revenue Change, as a TensorPlan baseline.
 *
 * The revenue that discounts within 0.01 of DISCOUNT on small orders
 * (quantity below QUANTITY) gave away in one year:
 *
 *   select sum(l_extendedprice * l_discount) as revenue
 *   from lineitem
 *   where l_shipdate >= date '1994-01-01'
 *     and l_shipdate < date '1994-01-01' + interval '1' year
 *     and l_discount between .06 - 0.01 and .06 + 0.01
 *     and l_quantity < 24;
 *
 * Plan: three masks and-ed, compress price and discount, multiply (scale
 * 4), exact sum (NULL over no rows, as in SQL). */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, parameter setters)

static const dkb_param_def params[] = {
    {"date", DKB_PARAM_DATE, 0, "first day of the 1-year window (Jan 1 of 1993..1997)"},
    {"discount", DKB_PARAM_DECIMAL, 2, "centre of the discount range +/- 0.01 (0.02..0.09)"},
    {"quantity", DKB_PARAM_INT, 0, "l_quantity below this (24 or 25)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_date(out, "date", 1994, 1, 1);
        dkb__qgen_put_dec(out, "discount", 2, 6);
        dkb__qgen_put_int(out, "quantity", 24);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 6);
    dkb__qgen_put_days(out, "date", dkb__qgen_year(&q, 1993, 1997));
    dkb__qgen_put_dec(out, "discount", 2, dkb__qgen_int(&q, 2, 9));
    dkb__qgen_put_int(out, "quantity", dkb__qgen_int(&q, 24, 25));
}

/* Any window start; a discount from 0.00 to 1.00; a quantity from 0 to
 * 1000 (l_quantity is 1..50). */
static int check(const dkb_params *p, dkb_error *err) {
    int64_t discount = dkb_params_get(p, "discount")->i;
    int64_t quantity = dkb_params_get(p, "quantity")->i;
    if (discount < 0 || discount > 100)
        return dkb_fail(err, DKB_EINVAL, "q06: discount must lie in 0.00..1.00");
    if (quantity < 0 || quantity > 1000)
        return dkb_fail(err, DKB_EINVAL, "q06: quantity %lld out of range 0..1000", (long long)quantity);
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_shipdate", "l_discount", "l_quantity", "l_extendedprice"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    int64_t discount = dkb_params_get(p, "discount")->i;
    dkb_set_put_i64(tp, in, "ship_lo", date);
    dkb_set_put_i64(tp, in, "ship_hi", dkb__qgen_add_months(date, 12) - 1);   /* inclusive */
    dkb_set_put_i64(tp, in, "disc_lo", discount - 1);                 /* hundredths */
    dkb_set_put_i64(tp, in, "disc_hi", discount + 1);
    dkb_set_put_i64(tp, in, "qty_lt", dkb_params_get(p, "quantity")->i * 100);
    return dkb_tp_status(tp, NULL);
}

/* The qualifying rows' prices and discounts. */
static void qualifying(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **price, dkb_tensor **disc) {
    dkb_tensor *keep = dkb_tp_between(tp, dkb_set_get(tp, in, "l_shipdate"), dkb_set_get_i64(tp, in, "ship_lo"),
                                      dkb_set_get_i64(tp, in, "ship_hi"));
    keep = dkb_tp_and(tp, keep,
                      dkb_tp_between(tp, dkb_set_get(tp, in, "l_discount"), dkb_set_get_i64(tp, in, "disc_lo"),
                                     dkb_set_get_i64(tp, in, "disc_hi")));
    keep = dkb_tp_and(tp, keep,
                      dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "l_quantity"), DKB_CMP_LT,
                                     dkb_set_get_i64(tp, in, "qty_lt")));
    *price = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_extendedprice"), keep);
    *disc = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_discount"), keep);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *price, *disc;
    qualifying(tp, in, &price, &disc);
    /* sum(l_extendedprice * l_discount), exact at scale 4; a sum over no
     * rows is NULL: then the output is empty */
    dkb_tensor *revenue = dkb_tp_reduce(tp, DKB_AGG_SUM, dkb_tp_arith(tp, price, DKB_OP_MUL, disc));
    dkb__plan_put_aggregate(tp, out, "revenue", revenue, price);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions: the exact sum and the rows it covers, added up. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *price, *disc;
    qualifying(tp, in, &price, &disc);
    dkb_set_put(tp, out, "revenue_sum", dkb_tp_reduce(tp, DKB_AGG_SUM, dkb_tp_arith(tp, price, DKB_OP_MUL, disc)));
    dkb_set_put(tp, out, "rows", dkb_tp_reduce(tp, DKB_AGG_COUNT, price));
    return dkb_tp_status(tp, NULL);
}

/* The sum, NULL when no partition had a row. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *some = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "rows"), DKB_CMP_GT, 0);
    dkb_set_put(tp, out, "revenue", dkb_tp_compress(tp, dkb_set_get(tp, in, "revenue_sum"), some));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q06_part = {
    .stream = {"lineitem"},
    .npasses = 1,
    .pass = {{partial, 2, {{"revenue_sum", DKB__MERGE_SUM}, {"rows", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    return dkb__plan_finish_single(tp, out, res, "revenue", DKB_RES_DECIMAL);
}

const dkb_query dkb__q06 = {
    .number = 6,
    .name = "q06",
    .title = "Forecasting Revenue Change",
    .sql = "select\n"
           "\tsum(l_extendedprice * l_discount) as revenue\n"
           "from\n"
           "\tlineitem\n"
           "where\n"
           "\tl_shipdate >= date ':date'\n"
           "\tand l_shipdate < date ':date' + interval '1' year\n"
           "\tand l_discount between :discount - 0.01 and :discount + 0.01\n"
           "\tand l_quantity < :quantity;\n",
    .nparams = 3,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
