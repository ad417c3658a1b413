/* q01.c: TPC-H Q1, Pricing Summary Report, as a TensorPlan baseline.
 *
 * For the line items shipped at least DELTA days before 1998-12-01, the
 * quantity, prices, charges and discount totalled and averaged per return
 * flag and line status:
 *
 *   select l_returnflag, l_linestatus,
 *          sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price,
 *          sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
 *          sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
 *          avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price,
 *          avg(l_discount) as avg_disc, count(*) as count_order
 *   from lineitem
 *   where l_shipdate <= date '1998-12-01' - interval '90' day
 *   group by l_returnflag, l_linestatus
 *   order by l_returnflag, l_linestatus;
 *
 * Plan: filter, compress the six columns, one packed group key of the two
 * dictionary codes, exact sums (I128; the charge is a scale-6 product) and
 * a count; the averages are avg aggregates (exact sum over count, rounded
 * once to a double, as DuckDB's avg). Dictionary
 * codes sort as their strings, so the ORDER BY sorts codes. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, parameter setters)

static const dkb_param_def params[] = {
    {"delta", DKB_PARAM_INT, 0, "days before 1998-12-01 that the last ship date lies (60..120)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_int(out, "delta", 90);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 1);
    dkb__qgen_put_int(out, "delta", dkb__qgen_int(&q, 60, 120));
}

/* Any delta from 0 to 36500 days (100 years) is meaningful SQL. */
static int check(const dkb_params *p, dkb_error *err) {
    int64_t delta = dkb_params_get(p, "delta")->i;
    if (delta < 0 || delta > 36500)
        return dkb_fail(err, DKB_EINVAL, "q01: delta %lld out of range 0..36500 days", (long long)delta);
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_shipdate", "l_returnflag", "l_linestatus", "l_quantity",
                                       "l_extendedprice", "l_discount", "l_tax"};
/* Core outputs, named as the result columns. */
enum { NOUT = 10 };
static const char *const OUT[NOUT] = {"l_returnflag", "l_linestatus", "sum_qty", "sum_base_price",
                                      "sum_disc_price", "sum_charge", "avg_qty", "avg_price",
                                      "avg_disc", "count_order"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    int32_t end = dkb__qgen_date(1998, 12, 1);
    dkb_set_put_i64(tp, in, "ship_hi", end - dkb_params_get(p, "delta")->i);
    return dkb_tp_status(tp, NULL);
}

/* The qualifying rows: the two codes, quantity, price, discount and the
 * two products (scale 4 and 6). */
enum { FLAG, STATUS, QTY, PRICE, DISC, DISC_PRICE, CHARGE, NROW };
static void qualifying(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **r) {
    /* where l_shipdate <= :hi */
    dkb_tensor *keep = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "l_shipdate"), DKB_CMP_LE,
                                      dkb_set_get_i64(tp, in, "ship_hi"));
    r[FLAG] = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_returnflag"), keep);
    r[STATUS] = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_linestatus"), keep);
    r[QTY] = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_quantity"), keep);
    r[PRICE] = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_extendedprice"), keep);
    r[DISC] = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_discount"), keep);
    dkb_tensor *tax = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_tax"), keep);

    /* l_extendedprice * (1 - l_discount) (scale 4), times (1 + l_tax) (scale 6) */
    r[DISC_PRICE] = dkb_tp_arith(tp, r[PRICE], DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, r[DISC]));
    r[CHARGE] = dkb_tp_arith(tp, r[DISC_PRICE], DKB_OP_MUL, dkb_tp_arith_i64(tp, tax, DKB_OP_ADD, 100, 2));
}

/* Put cols (in OUT order) into out ordered by l_returnflag, l_linestatus. */
static void put_ordered(dkb_tp *tp, dkb_tensor_set *out, dkb_tensor *const *cols) {
    dkb_sort_key by[] = {{cols[0], false}, {cols[1], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *r[NROW];
    qualifying(tp, in, r);
    /* group by l_returnflag, l_linestatus (codes packed into one key) */
    dkb_tensor *key = dkb_tp_pack2(tp, r[FLAG], r[STATUS], 255);
    const dkb_tensor *keys[] = {key};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *count = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, r[QTY]);
    dkb_tensor *sum_qty = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[QTY]);
    dkb_tensor *sum_price = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[PRICE]);
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, r[FLAG], g.first_row, 0),
        dkb_tp_gather(tp, r[STATUS], g.first_row, 0),
        sum_qty,
        sum_price,
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[DISC_PRICE]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[CHARGE]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_AVG, r[QTY]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_AVG, r[PRICE]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_AVG, r[DISC]),
        count,
    };
    /* order by l_returnflag, l_linestatus */
    put_ordered(tp, out, cols);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions and group: the codes, exact sums and the count
 * (named as in dkb__q01_part below). */
enum { NPART = 8 };
extern const dkb__part_plan dkb__q01_part;

static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *r[NROW];
    qualifying(tp, in, r);
    const dkb_tensor *keys[] = {dkb_tp_pack2(tp, r[FLAG], r[STATUS], 255)};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *cols[NPART] = {
        dkb_tp_gather(tp, r[FLAG], g.first_row, 0),
        dkb_tp_gather(tp, r[STATUS], g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[QTY]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[PRICE]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[DISC_PRICE]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[CHARGE]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, r[DISC]),
        dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, r[QTY]),
    };
    for (int i = 0; i < NPART; i++) dkb_set_put(tp, out, dkb__q01_part.pass[0].cols[i].name, cols[i]);
    return dkb_tp_status(tp, NULL);
}

/* The averages from the merged exact sums and counts, as avg gives them. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *count = dkb_set_get(tp, in, "count_order");
    dkb_tensor *cols[NOUT] = {
        dkb_set_get(tp, in, "l_returnflag"),
        dkb_set_get(tp, in, "l_linestatus"),
        dkb_set_get(tp, in, "sum_qty"),
        dkb_set_get(tp, in, "sum_base_price"),
        dkb_set_get(tp, in, "sum_disc_price"),
        dkb_set_get(tp, in, "sum_charge"),
        dkb__part_avg(tp, dkb_set_get(tp, in, "sum_qty"), count),
        dkb__part_avg(tp, dkb_set_get(tp, in, "sum_base_price"), count),
        dkb__part_avg(tp, dkb_set_get(tp, in, "sum_disc"), count),
        count,
    };
    put_ordered(tp, out, cols);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q01_part = {
    .stream = {"lineitem"},
    .npasses = 1,
    .pass = {{partial, NPART,
              {{"l_returnflag", DKB__MERGE_KEY}, {"l_linestatus", DKB__MERGE_KEY}, {"sum_qty", DKB__MERGE_SUM},
               {"sum_base_price", DKB__MERGE_SUM}, {"sum_disc_price", DKB__MERGE_SUM},
               {"sum_charge", DKB__MERGE_SUM}, {"sum_disc", DKB__MERGE_SUM}, {"count_order", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING,  DKB_RES_STRING,  DKB_RES_DECIMAL, DKB_RES_DECIMAL,
                                         DKB_RES_DECIMAL, DKB_RES_DECIMAL, DKB_RES_FLOAT,   DKB_RES_FLOAT,
                                         DKB_RES_FLOAT,   DKB_RES_INT};
    const int scales[] = {0, 0, t[2]->scale, t[3]->scale, t[4]->scale, t[5]->scale, 6, 6, 6, 0};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{0, false}, {1, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        rc = dkb__plan_set_code(tp, "q01", res, r, 0, t[0], i);
        if (!rc) rc = dkb__plan_set_code(tp, "q01", res, r, 1, t[1], i);
        for (int c = 2; c < 6; c++) dkb_result_set_dec(res, r, c, dkb_tp_get_i128(tp, t[c], i));
        for (int c = 6; c < 9; c++) dkb_result_set_float(res, r, c, dkb_tp_get_f64(tp, t[c], i));
        dkb_result_set_int(res, r, 9, dkb_tp_get_i64(tp, t[9], i));
    }
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q01 = {
    .number = 1,
    .name = "q01",
    .title = "Pricing Summary Report",
    .sql = "select\n"
           "\tl_returnflag,\n"
           "\tl_linestatus,\n"
           "\tsum(l_quantity) as sum_qty,\n"
           "\tsum(l_extendedprice) as sum_base_price,\n"
           "\tsum(l_extendedprice * (1 - l_discount)) as sum_disc_price,\n"
           "\tsum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,\n"
           "\tavg(l_quantity) as avg_qty,\n"
           "\tavg(l_extendedprice) as avg_price,\n"
           "\tavg(l_discount) as avg_disc,\n"
           "\tcount(*) as count_order\n"
           "from\n"
           "\tlineitem\n"
           "where\n"
           "\tl_shipdate <= date '1998-12-01' - interval ':delta' day\n"
           "group by\n"
           "\tl_returnflag,\n"
           "\tl_linestatus\n"
           "order by\n"
           "\tl_returnflag,\n"
           "\tl_linestatus;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
