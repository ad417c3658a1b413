/* q10.c: TPC-H Q10, Returned Item Reporting, as a TensorPlan baseline.
 *
 * The 20 customers who lost the most revenue to returned items of one
 * quarter's orders, with their details:
 *
 *   select c_custkey, c_name, sum(l_extendedprice * (1 - l_discount)) as revenue,
 *          c_acctbal, n_name, c_address, c_phone, c_comment
 *   from customer, orders, lineitem, nation
 *   where c_custkey = o_custkey and l_orderkey = o_orderkey
 *     and o_orderdate >= date '1993-10-01'
 *     and o_orderdate < date '1993-10-01' + interval '3' month
 *     and l_returnflag = 'R' and c_nationkey = n_nationkey
 *   group by c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
 *   order by revenue desc
 *   limit 20;
 *
 * Plan: the quarter's orders; the returned items joined to them (the
 * orders are the build side; the flag test first, as it is far cheaper per
 * row than a probe); revenue per customer key (every other group column
 * depends on it); the top 20; only then those 20 customers' rows (joined
 * with the 20 keys as the build side, put back in rank order) and nation
 * names. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, month windows, parameter setters)

static const dkb_param_def params[] = {
    {"date", DKB_PARAM_DATE, 0, "first day of the 3-month window (a month of 1993-02..1995-01)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_date(out, "date", 1993, 10, 1);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 10);
    dkb__qgen_put_days(out, "date", dkb__qgen_month(&q, 1993, 2, 1995, 1));
}

/* Any date starts a valid window. */
static int check(const dkb_params *p, dkb_error *err) {
    (void)p, (void)err;
    return 0;
}

/* ---- plan ---- */

static const char *const CUSTOMER[] = {"c_custkey", "c_name",    "c_address", "c_nationkey",
                                       "c_phone",   "c_acctbal", "c_comment"};
static const char *const ORDERS[] = {"o_orderkey", "o_custkey", "o_orderdate"};
static const char *const LINEITEM[] = {"l_orderkey", "l_returnflag", "l_extendedprice", "l_discount"};
static const char *const NATION[] = {"n_nationkey", "n_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 8 };
static const char *const OUT[NOUT] = {"c_custkey", "c_name",  "revenue", "c_acctbal",
                                      "n_name",    "c_address", "c_phone", "c_comment"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    int32_t date = (int32_t)dkb_params_get(p, "date")->i;
    dkb_set_put_i64(tp, in, "date_lo", date);
    dkb_set_put_i64(tp, in, "date_hi", dkb__qgen_add_months(date, 3) - 1);   /* inclusive */
    /* l_returnflag = 'R': a store without returned items gives an empty answer */
    dkb_tensor *flag = dkb_set_get(tp, in, "l_returnflag");
    dkb_set_put_i64(tp, in, "flag", flag && flag->dict ? dkb_tp_dict_code(flag->dict, "R") : -1);
    return dkb_tp_status(tp, NULL);
}

/* The revenue per customer (groups in order of first appearance). */
static void by_customer(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **custkey_out, dkb_tensor **revenue_out) {
    /* the quarter's orders */
    dkb_tensor *o_keep = dkb_tp_between(tp, dkb_set_get(tp, in, "o_orderdate"), dkb_set_get_i64(tp, in, "date_lo"),
                                        dkb_set_get_i64(tp, in, "date_hi"));
    dkb_tensor *o_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_orderkey"), o_keep);
    dkb_tensor *o_cust = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_custkey"), o_keep);
    /* returned items of those orders */
    dkb_tensor *returned =
        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "l_returnflag"), DKB_CMP_EQ, dkb_set_get_i64(tp, in, "flag"));
    dkb_tensor *l_row = dkb_tp_nonzero(tp, returned);
    dkb_join_result lo =
        dkb_tp_join(tp, o_key, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_orderkey"), l_row, 0), DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, lo.probe_idx, 0);
    dkb_tensor *cust = dkb_tp_gather(tp, o_cust, lo.build_idx, 0);
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), l_row, 0);
    dkb_tensor *disc = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_discount"), l_row, 0);
    dkb_tensor *volume = dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
    /* group by c_custkey (the other group columns follow from it) */
    const dkb_tensor *keys[] = {cust};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    *custkey_out = dkb_tp_gather(tp, cust, g.first_row, 0);
    *revenue_out = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, volume);
}

/* The top 20 customers by revenue with their rows, into out. */
static void put_top(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *custkey, dkb_tensor *revenue,
                    dkb_tensor_set *out) {
    /* order by revenue desc limit 20 */
    dkb_sort_key by[] = {{revenue, true}};
    dkb_tensor *top = dkb_tp_topk(tp, by, DKB_COUNTOF(by), 20);
    custkey = dkb_tp_gather(tp, custkey, top, 0);
    revenue = dkb_tp_gather(tp, revenue, top, 0);
    /* those customers' rows, back in rank order */
    dkb_join_result cj = dkb_tp_join(tp, custkey, dkb_set_get(tp, in, "c_custkey"), DKB_JOIN_INNER);
    dkb_sort_key rank[] = {{cj.build_idx, false}};
    dkb_tensor *perm = dkb_tp_sort(tp, rank, DKB_COUNTOF(rank));
    dkb_tensor *c_row = dkb_tp_gather(tp, cj.probe_idx, perm, 0);
    dkb_tensor *c_rank = dkb_tp_gather(tp, cj.build_idx, perm, 0);
    dkb_join_result cn = dkb_tp_join(tp, dkb_set_get(tp, in, "n_nationkey"),
                                     dkb_tp_gather(tp, dkb_set_get(tp, in, "c_nationkey"), c_row, 0), DKB_JOIN_LEFT);
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, custkey, c_rank, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "c_name"), c_row, 0),
        dkb_tp_gather(tp, revenue, c_rank, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "c_acctbal"), c_row, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "n_name"), cn.build_idx, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "c_address"), c_row, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "c_phone"), c_row, 0),
        dkb_tp_gather(tp, dkb_set_get(tp, in, "c_comment"), c_row, 0),
    };
    dkb__plan_put_outputs(tp, out, OUT, cols, NOUT);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *custkey, *revenue;
    by_customer(tp, in, &custkey, &revenue);
    put_top(tp, in, custkey, revenue, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions: the revenue per customer; merged by customer key
 * (in order of first appearance, as the whole run groups), then the top
 * 20 as in the core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *custkey, *revenue;
    by_customer(tp, in, &custkey, &revenue);
    dkb_set_put(tp, out, "cust_key", custkey);
    dkb_set_put(tp, out, "cust_revenue", revenue);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_top(tp, in, dkb_set_get(tp, in, "cust_key"), dkb_set_get(tp, in, "cust_revenue"), out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q10_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{partial, 2, {{"cust_key", DKB__MERGE_KEY}, {"cust_revenue", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_INT,    DKB_RES_STRING, DKB_RES_DECIMAL, DKB_RES_DECIMAL,
                                         DKB_RES_STRING, DKB_RES_STRING, DKB_RES_STRING,  DKB_RES_STRING};
    const int scales[] = {0, 0, t[2]->scale, t[3]->scale, 0, 0, 0, 0};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{2, true}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, r, 0, dkb_tp_get_i64(tp, t[0], i));
        dkb_result_set_dec(res, r, 2, dkb_tp_get_i128(tp, t[2], i));
        dkb_result_set_dec(res, r, 3, dkb_tp_get_i128(tp, t[3], i));
        rc = dkb__plan_set_code(tp, "q10", res, r, 4, t[4], i);
    }
    const int text[] = {1, 5, 6, 7};
    for (int k = 0; k < 4 && !rc; k++) rc = dkb__plan_set_texts(tp, res, text[k], t[text[k]]);
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q10 = {
    .number = 10,
    .name = "q10",
    .title = "Returned Item Reporting",
    .sql = "select\n"
           "\tc_custkey,\n"
           "\tc_name,\n"
           "\tsum(l_extendedprice * (1 - l_discount)) as revenue,\n"
           "\tc_acctbal,\n"
           "\tn_name,\n"
           "\tc_address,\n"
           "\tc_phone,\n"
           "\tc_comment\n"
           "from\n"
           "\tcustomer,\n"
           "\torders,\n"
           "\tlineitem,\n"
           "\tnation\n"
           "where\n"
           "\tc_custkey = o_custkey\n"
           "\tand l_orderkey = o_orderkey\n"
           "\tand o_orderdate >= date ':date'\n"
           "\tand o_orderdate < date ':date' + interval '3' month\n"
           "\tand l_returnflag = 'R'\n"
           "\tand c_nationkey = n_nationkey\n"
           "group by\n"
           "\tc_custkey,\n"
           "\tc_name,\n"
           "\tc_acctbal,\n"
           "\tc_phone,\n"
           "\tn_name,\n"
           "\tc_address,\n"
           "\tc_comment\n"
           "order by\n"
           "\trevenue desc\n"
           "limit 20;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
