/* q14.c: TPC-H Q14, Promotion Effect, as a TensorPlan baseline.
 *
 * The percentage of one month's revenue that came from promotional parts
 * (types PROMO ...):
 *
 *   select 100.00 * sum(case when p_type like 'PROMO%'
 *                            then l_extendedprice * (1 - l_discount)
 *                            else 0 end)
 *          / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
 *   from lineitem, part
 *   where l_partkey = p_partkey
 *     and l_shipdate >= date '1995-09-01'
 *     and l_shipdate < date '1995-09-01' + interval '1' month;
 *
 * Plan: filter lineitem by the month, join the month's lines (build, the
 * small side) with part (probe), LIKE on the type dictionary, two exact
 * sums of the scale-4 revenue, and the one float division SQL makes. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"date", DKB_PARAM_DATE, 0, "first day of the 1-month ship window (a month of 1993..1997)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_date(out, "date", 1995, 9, 1);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 14);
    dkb__qgen_put_days(out, "date", dkb__qgen_month(&q, 1993, 1, 1997, 12));
}

/* Any date starts a valid window. */
static int check(const dkb_params *p, dkb_error *err) {
    (void)p, (void)err;
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_partkey", "l_extendedprice", "l_discount", "l_shipdate"};
static const char *const PART[] = {"p_partkey", "p_type"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "ship_lo", date);
    dkb_set_put_i64(tp, in, "ship_hi", dkb__qgen_add_months(date, 1) - 1);  /* inclusive */
    dkb__plan_put_like_lut(tp, "q14", in, "p_type", "PROMO%", "promo_lut");
    return dkb_tp_status(tp, NULL);
}

/* The month's revenue per joined line and whether its part is a promotion. */
static dkb_tensor *revenue_rows(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **promo_out) {
    /* where l_shipdate in the month */
    dkb_tensor *keep = dkb_tp_between(tp, dkb_set_get(tp, in, "l_shipdate"), dkb_set_get_i64(tp, in, "ship_lo"),
                                      dkb_set_get_i64(tp, in, "ship_hi"));
    dkb_tensor *lkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_partkey"), keep);
    dkb_tensor *price = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_extendedprice"), keep);
    dkb_tensor *disc = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_discount"), keep);

    /* l_partkey = p_partkey: the month's lines build, part probes */
    dkb_join_result j = dkb_tp_join(tp, lkey, dkb_set_get(tp, in, "p_partkey"), DKB_JOIN_INNER);
    dkb_tensor *type = dkb_tp_gather(tp, dkb_set_get(tp, in, "p_type"), j.probe_idx, 0);
    dkb_tensor *promo = dkb__plan_lut_mask(tp, in, "promo_lut", type);  /* p_type like 'PROMO%' */

    /* l_extendedprice * (1 - l_discount), scale 4 */
    price = dkb_tp_gather(tp, price, j.build_idx, 0);
    disc = dkb_tp_gather(tp, disc, j.build_idx, 0);
    *promo_out = promo;
    return dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
}

/* 100.00 * promo_sum / total into out, or nothing (NULL) where `some` is false. */
static void put_ratio(dkb_tp *tp, dkb_tensor_set *out, dkb_tensor *promo_sum, dkb_tensor *total,
                      dkb_tensor *some) {
    dkb_tensor *hundred_promo = dkb_tp_arith_i64(tp, promo_sum, DKB_OP_MUL, 10000, 2);
    dkb_tensor *ratio = dkb_tp_arith(tp, hundred_promo, DKB_OP_DIV, total);
    dkb_set_put(tp, out, "promo_revenue", dkb_tp_compress(tp, ratio, some));
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *promo;
    dkb_tensor *revenue = revenue_rows(tp, in, &promo);
    /* 100.00 * sum(case when promo then revenue else 0 end) / sum(revenue) */
    dkb_tensor *promo_sum = dkb_tp_reduce(tp, DKB_AGG_SUM, dkb_tp_compress(tp, revenue, promo));
    dkb_tensor *total = dkb_tp_reduce(tp, DKB_AGG_SUM, revenue);
    /* sums over no rows are NULL, and so is the ratio: then the output is empty */
    put_ratio(tp, out, promo_sum, total, dkb_tp_full_i64(tp, DKB_TP_BOOL, 1, revenue && revenue->n > 0));
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions: the two exact sums and the rows they cover. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *promo;
    dkb_tensor *revenue = revenue_rows(tp, in, &promo);
    dkb_set_put(tp, out, "promo_sum", dkb_tp_reduce(tp, DKB_AGG_SUM, dkb_tp_compress(tp, revenue, promo)));
    dkb_set_put(tp, out, "total", dkb_tp_reduce(tp, DKB_AGG_SUM, revenue));
    dkb_set_put(tp, out, "rows", dkb_tp_reduce(tp, DKB_AGG_COUNT, revenue));
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_ratio(tp, out, dkb_set_get(tp, in, "promo_sum"), dkb_set_get(tp, in, "total"),
              dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "rows"), DKB_CMP_GT, 0));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q14_part = {
    .stream = {"lineitem"},
    .npasses = 1,
    .pass = {{partial, 3, {{"promo_sum", DKB__MERGE_SUM}, {"total", DKB__MERGE_SUM}, {"rows", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    return dkb__plan_finish_single(tp, out, res, "promo_revenue", DKB_RES_FLOAT);
}

const dkb_query dkb__q14 = {
    .number = 14,
    .name = "q14",
    .title = "Promotion Effect",
    .sql = "select\n"
           "\t100.00 * sum(case\n"
           "\t\twhen p_type like 'PROMO%'\n"
           "\t\t\tthen l_extendedprice * (1 - l_discount)\n"
           "\t\telse 0\n"
           "\tend) / sum(l_extendedprice * (1 - l_discount)) as promo_revenue\n"
           "from\n"
           "\tlineitem,\n"
           "\tpart\n"
           "where\n"
           "\tl_partkey = p_partkey\n"
           "\tand l_shipdate >= date ':date'\n"
           "\tand l_shipdate < date ':date' + interval '1' month;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
