/* q15.c: TPC-H Q15, Top Supplier, as a TensorPlan baseline.
 *
 * The supplier(s) with the largest revenue over three months:
 *
 *   with revenue0 (supplier_no, total_revenue) as (
 *       select l_suppkey, sum(l_extendedprice * (1 - l_discount))
 *       from lineitem
 *       where l_shipdate >= date '1996-01-01'
 *         and l_shipdate < date '1996-01-01' + interval '3' month
 *       group by l_suppkey)
 *   select s_suppkey, s_name, s_address, s_phone, total_revenue
 *   from supplier, revenue0
 *   where s_suppkey = supplier_no
 *     and total_revenue = (select max(total_revenue) from revenue0)
 *   order by s_suppkey;
 *
 * Plan: filter lineitem by the window, exact revenue (scale 4) summed per
 * supplier, the maximum broadcast back over the groups and compared
 * exactly, then the few top suppliers (build) joined with supplier
 * (probe). */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan, dkb__part_avg
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"date", DKB_PARAM_DATE, 0, "first day of the 3-month ship window (a month of 1993-01..1997-10)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_date(out, "date", 1996, 1, 1);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 15);
    dkb__qgen_put_days(out, "date", dkb__qgen_month(&q, 1993, 1, 1997, 10));
}

/* Any date starts a valid window. */
static int check(const dkb_params *p, dkb_error *err) {
    (void)p, (void)err;
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_suppkey", "l_extendedprice", "l_discount", "l_shipdate"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_name", "s_address", "s_phone"};
/* Core outputs, named as the result columns. */
enum { NOUT = 5 };
static const char *const OUT[NOUT] = {"s_suppkey", "s_name", "s_address", "s_phone", "total_revenue"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "ship_lo", date);
    dkb_set_put_i64(tp, in, "ship_hi", dkb__qgen_add_months(date, 3) - 1);  /* inclusive */
    return dkb_tp_status(tp, NULL);
}

/* revenue0: the exact revenue per supplier (groups in order of first
 * appearance). */
static void revenue0(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **supplier_no, dkb_tensor **total) {
    /* revenue0: where l_shipdate in the window */
    dkb_tensor *keep = dkb_tp_between(tp, dkb_set_get(tp, in, "l_shipdate"), dkb_set_get_i64(tp, in, "ship_lo"),
                                      dkb_set_get_i64(tp, in, "ship_hi"));
    dkb_tensor *supp = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_suppkey"), keep);
    dkb_tensor *price = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_extendedprice"), keep);
    dkb_tensor *disc = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_discount"), keep);
    dkb_tensor *revenue = dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));

    /* group by l_suppkey: sum(...) as total_revenue (exact, scale 4) */
    const dkb_tensor *keys[] = {supp};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    *supplier_no = dkb_tp_gather(tp, supp, g.first_row, 0);
    *total = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, revenue);
}

/* The suppliers whose revenue is the maximum, by s_suppkey, into out. */
static void put_top(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *supplier_no, dkb_tensor *total,
                    dkb_tensor_set *out) {
    int64_t ngroups = total ? total->n : 0;

    /* total_revenue = (select max(total_revenue) from revenue0): the
     * maximum gathered to every group, compared exactly */
    dkb_tensor *max = dkb_tp_reduce(tp, DKB_AGG_MAX, total);
    dkb_tensor *max_each = dkb_tp_gather(tp, max, dkb_tp_full_i64(tp, DKB_TP_I64, ngroups, 0), 0);
    dkb_tensor *top = dkb_tp_cmp(tp, total, DKB_CMP_EQ, max_each);
    dkb_tensor *top_no = dkb_tp_compress(tp, supplier_no, top);
    dkb_tensor *top_total = dkb_tp_compress(tp, total, top);

    /* s_suppkey = supplier_no: the top suppliers build, supplier probes */
    dkb_join_result j = dkb_tp_join(tp, top_no, dkb_set_get(tp, in, "s_suppkey"), DKB_JOIN_INNER);
    dkb_tensor *cols[NOUT];
    for (int i = 0; i < 4; i++) cols[i] = dkb_tp_gather(tp, dkb_set_get(tp, in, SUPPLIER[i]), j.probe_idx, 0);
    cols[4] = dkb_tp_gather(tp, top_total, j.build_idx, 0);

    /* order by s_suppkey */
    dkb_sort_key by[] = {{cols[0], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *supplier_no, *total;
    revenue0(tp, in, &supplier_no, &total);
    put_top(tp, in, supplier_no, total, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* The view's sums per supplier add up over the runs of partitions; the
 * maximum is then taken over the merged view, as in the core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *supplier_no, *total;
    revenue0(tp, in, &supplier_no, &total);
    dkb_set_put(tp, out, "supplier_no", supplier_no);
    dkb_set_put(tp, out, "total_revenue", total);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_top(tp, in, dkb_set_get(tp, in, "supplier_no"), dkb_set_get(tp, in, "total_revenue"), out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q15_part = {
    .stream = {"lineitem"},
    .npasses = 1,
    .pass = {{partial, 2, {{"supplier_no", DKB__MERGE_KEY}, {"total_revenue", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_STRING, DKB_RES_STRING, DKB_RES_STRING,
                                         DKB_RES_DECIMAL};
    const int scales[] = {0, 0, 0, 0, t[4]->scale};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        if (dkb_result_add_row(res) < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, i, 0, dkb_tp_get_i64(tp, t[0], i));
        dkb_result_set_dec(res, i, 4, dkb_tp_get_i128(tp, t[4], i));
    }
    for (int c = 1; c <= 3; c++) {
        rc = dkb__plan_set_texts(tp, res, c, t[c]);
        if (rc) return rc;
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q15 = {
    .number = 15,
    .name = "q15",
    .title = "Top Supplier",
    .sql = "with revenue0 (supplier_no, total_revenue) as (\n"
           "\tselect\n"
           "\t\tl_suppkey,\n"
           "\t\tsum(l_extendedprice * (1 - l_discount))\n"
           "\tfrom\n"
           "\t\tlineitem\n"
           "\twhere\n"
           "\t\tl_shipdate >= date ':date'\n"
           "\t\tand l_shipdate < date ':date' + interval '3' month\n"
           "\tgroup by\n"
           "\t\tl_suppkey\n"
           ")\n"
           "select\n"
           "\ts_suppkey,\n"
           "\ts_name,\n"
           "\ts_address,\n"
           "\ts_phone,\n"
           "\ttotal_revenue\n"
           "from\n"
           "\tsupplier,\n"
           "\trevenue0\n"
           "where\n"
           "\ts_suppkey = supplier_no\n"
           "\tand total_revenue = (\n"
           "\t\tselect\n"
           "\t\t\tmax(total_revenue)\n"
           "\t\tfrom\n"
           "\t\t\trevenue0\n"
           "\t)\n"
           "order by\n"
           "\ts_suppkey;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
