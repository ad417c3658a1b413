/* q07.c: TPC-H Q7, Volume Shipping, as a TensorPlan baseline.
 *
 * The value of goods shipped between two nations in 1995 and 1996, per
 * supplier nation, customer nation and year:
 *
 *   select supp_nation, cust_nation, l_year, sum(volume) as revenue
 *   from (select n1.n_name as supp_nation, n2.n_name as cust_nation,
 *                extract(year from l_shipdate) as l_year,
 *                l_extendedprice * (1 - l_discount) as volume
 *         from supplier, lineitem, orders, customer, nation n1, nation n2
 *         where s_suppkey = l_suppkey and o_orderkey = l_orderkey
 *           and c_custkey = o_custkey
 *           and s_nationkey = n1.n_nationkey and c_nationkey = n2.n_nationkey
 *           and ((n1.n_name = 'FRANCE' and n2.n_name = 'GERMANY')
 *             or (n1.n_name = 'GERMANY' and n2.n_name = 'FRANCE'))
 *           and l_shipdate between date '1995-01-01' and date '1996-12-31'
 *        ) as shipping
 *   group by supp_nation, cust_nation, l_year
 *   order by supp_nation, cust_nation, l_year;
 *
 * Plan: the two nations; their suppliers and customers (joins carrying the
 * nation name code); the customers' orders; line items shipped in the
 * window (the cheap date test before any probe), of the suppliers
 * (supplier side built), joined to the orders (order side built); then the
 * pair condition on the two name codes as written; revenue per (supplier
 * nation, customer nation, year). */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"nation1", DKB_PARAM_STRING, 0, "first nation name (any of the 25)"},
    {"nation2", DKB_PARAM_STRING, 0, "second nation name (any of the 25; qgen draws it unlike nation1)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "nation1", "FRANCE");
        dkb__qgen_put_str(out, "nation2", "GERMANY");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 7);
    int a, b;
    dkb__qgen_pick2(&q, DKB__QGEN_NNATION, &a, &b);
    dkb__qgen_put_str(out, "nation1", dkb__qgen_nation[a]);
    dkb__qgen_put_str(out, "nation2", dkb__qgen_nation[b]);
}

/* Both must be nation names (the same name twice is valid SQL: the trade
 * within that nation). */
static int check(const dkb_params *p, dkb_error *err) {
    static const char *const names[] = {"nation1", "nation2"};
    for (int i = 0; i < 2; i++) {
        const char *s = dkb_params_get(p, names[i])->s;
        if (dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, s) < 0)
            return dkb_fail(err, DKB_EINVAL, "q07: %s '%s' is not a nation name", names[i], s);
    }
    return 0;
}

/* ---- plan ---- */

static const char *const SUPPLIER[] = {"s_suppkey", "s_nationkey"};
static const char *const LINEITEM[] = {"l_orderkey", "l_suppkey", "l_shipdate", "l_extendedprice", "l_discount"};
static const char *const ORDERS[] = {"o_orderkey", "o_custkey"};
static const char *const CUSTOMER[] = {"c_custkey", "c_nationkey"};
static const char *const NATION[] = {"n_nationkey", "n_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 4 };
static const char *const OUT[NOUT] = {"supp_nation", "cust_nation", "l_year", "revenue"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    dkb_set_put_i64(tp, in, "nation1",
                    dkb__plan_code_required(tp, "q07", in, "n_name", dkb_params_get(p, "nation1")->s));
    dkb_set_put_i64(tp, in, "nation2",
                    dkb__plan_code_required(tp, "q07", in, "n_name", dkb_params_get(p, "nation2")->s));
    dkb_set_put_i64(tp, in, "ship_lo", dkb__qgen_date(1995, 1, 1));
    dkb_set_put_i64(tp, in, "ship_hi", dkb__qgen_date(1996, 12, 31));
    return dkb_tp_status(tp, NULL);
}

/* BOOL: a = x and b = y (codes). */
static dkb_tensor *pair_is(dkb_tp *tp, const dkb_tensor *a, int64_t x, const dkb_tensor *b, int64_t y) {
    return dkb_tp_and(tp, dkb_tp_cmp_i64(tp, a, DKB_CMP_EQ, x), dkb_tp_cmp_i64(tp, b, DKB_CMP_EQ, y));
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    int64_t nation1 = dkb_set_get_i64(tp, in, "nation1"), nation2 = dkb_set_get_i64(tp, in, "nation2");
    /* the two nations, their suppliers and customers */
    const int64_t both[] = {nation1, nation2};
    dkb_tensor *n_keep = dkb_tp_in_i64(tp, dkb_set_get(tp, in, "n_name"), both, 2);
    dkb_tensor *n_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"), n_keep);
    dkb_tensor *n_name = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_name"), n_keep);
    dkb_join_result sn = dkb_tp_join(tp, n_key, dkb_set_get(tp, in, "s_nationkey"), DKB_JOIN_INNER);
    dkb_tensor *s_key = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_suppkey"), sn.probe_idx, 0);
    dkb_tensor *s_name = dkb_tp_gather(tp, n_name, sn.build_idx, 0);
    dkb_join_result cn = dkb_tp_join(tp, n_key, dkb_set_get(tp, in, "c_nationkey"), DKB_JOIN_INNER);
    dkb_tensor *c_key = dkb_tp_gather(tp, dkb_set_get(tp, in, "c_custkey"), cn.probe_idx, 0);
    dkb_tensor *c_name = dkb_tp_gather(tp, n_name, cn.build_idx, 0);
    /* the customers' orders */
    dkb_join_result oc = dkb_tp_join(tp, c_key, dkb_set_get(tp, in, "o_custkey"), DKB_JOIN_INNER);
    dkb_tensor *o_key = dkb_tp_gather(tp, dkb_set_get(tp, in, "o_orderkey"), oc.probe_idx, 0);
    dkb_tensor *o_name = dkb_tp_gather(tp, c_name, oc.build_idx, 0);
    /* line items shipped in 1995..1996, of the suppliers */
    dkb_tensor *l_keep = dkb_tp_between(tp, dkb_set_get(tp, in, "l_shipdate"), dkb_set_get_i64(tp, in, "ship_lo"),
                                        dkb_set_get_i64(tp, in, "ship_hi"));
    dkb_tensor *l_row = dkb_tp_nonzero(tp, l_keep);
    dkb_join_result ls =
        dkb_tp_join(tp, s_key, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_suppkey"), l_row, 0), DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, ls.probe_idx, 0);
    dkb_tensor *l_name = dkb_tp_gather(tp, s_name, ls.build_idx, 0);
    /* of the customers' orders */
    dkb_join_result lo = dkb_tp_join(tp, o_key, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_orderkey"), l_row, 0),
                                     DKB_JOIN_INNER);
    dkb_tensor *supp_nation = dkb_tp_gather(tp, l_name, lo.probe_idx, 0);
    dkb_tensor *cust_nation = dkb_tp_gather(tp, o_name, lo.build_idx, 0);
    l_row = dkb_tp_gather(tp, l_row, lo.probe_idx, 0);
    /* (n1 = :nation1 and n2 = :nation2) or (n1 = :nation2 and n2 = :nation1) */
    dkb_tensor *keep = dkb_tp_or(tp, pair_is(tp, supp_nation, nation1, cust_nation, nation2),
                                 pair_is(tp, supp_nation, nation2, cust_nation, nation1));
    l_row = dkb_tp_compress(tp, l_row, keep);
    supp_nation = dkb_tp_compress(tp, supp_nation, keep);
    cust_nation = dkb_tp_compress(tp, cust_nation, keep);
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), l_row, 0);
    dkb_tensor *disc = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_discount"), l_row, 0);
    dkb_tensor *volume = dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
    dkb_tensor *year = dkb_tp_year(tp, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_shipdate"), l_row, 0));
    /* group by supp_nation, cust_nation, l_year; order by the same */
    const dkb_tensor *keys[] = {supp_nation, cust_nation, year};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, supp_nation, g.first_row, 0),
        dkb_tp_gather(tp, cust_nation, g.first_row, 0),
        dkb_tp_gather(tp, year, g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, volume),
    };
    dkb_sort_key by[] = {{cols[0], false}, {cols[1], false}, {cols[2], false}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Each run of partitions' core gives its own sums per (supp_nation,
 * cust_nation, l_year); they add up, then are ordered by the keys again. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    for (int i = 0; i < NOUT; i++) cols[i] = dkb_set_get(tp, in, OUT[i]);
    dkb_sort_key by[] = {{cols[0], false}, {cols[1], false}, {cols[2], false}};
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, dkb_tp_sort(tp, by, DKB_COUNTOF(by)));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q07_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{core, NOUT,
              {{"supp_nation", DKB__MERGE_KEY}, {"cust_nation", DKB__MERGE_KEY}, {"l_year", DKB__MERGE_KEY},
               {"revenue", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_STRING, DKB_RES_INT, DKB_RES_DECIMAL};
    const int scales[] = {0, 0, 0, t[3]->scale};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{0, false}, {1, false}, {2, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        rc = dkb__plan_set_code(tp, "q07", res, r, 0, t[0], i);
        if (!rc) rc = dkb__plan_set_code(tp, "q07", res, r, 1, t[1], i);
        dkb_result_set_int(res, r, 2, dkb_tp_get_i64(tp, t[2], i));
        dkb_result_set_dec(res, r, 3, dkb_tp_get_i128(tp, t[3], i));
    }
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q07 = {
    .number = 7,
    .name = "q07",
    .title = "Volume Shipping",
    .sql = "select\n"
           "\tsupp_nation,\n"
           "\tcust_nation,\n"
           "\tl_year,\n"
           "\tsum(volume) as revenue\n"
           "from\n"
           "\t(\n"
           "\t\tselect\n"
           "\t\t\tn1.n_name as supp_nation,\n"
           "\t\t\tn2.n_name as cust_nation,\n"
           "\t\t\textract(year from l_shipdate) as l_year,\n"
           "\t\t\tl_extendedprice * (1 - l_discount) as volume\n"
           "\t\tfrom\n"
           "\t\t\tsupplier,\n"
           "\t\t\tlineitem,\n"
           "\t\t\torders,\n"
           "\t\t\tcustomer,\n"
           "\t\t\tnation n1,\n"
           "\t\t\tnation n2\n"
           "\t\twhere\n"
           "\t\t\ts_suppkey = l_suppkey\n"
           "\t\t\tand o_orderkey = l_orderkey\n"
           "\t\t\tand c_custkey = o_custkey\n"
           "\t\t\tand s_nationkey = n1.n_nationkey\n"
           "\t\t\tand c_nationkey = n2.n_nationkey\n"
           "\t\t\tand (\n"
           "\t\t\t\t(n1.n_name = ':nation1' and n2.n_name = ':nation2')\n"
           "\t\t\t\tor (n1.n_name = ':nation2' and n2.n_name = ':nation1')\n"
           "\t\t\t)\n"
           "\t\t\tand l_shipdate between date '1995-01-01' and date '1996-12-31'\n"
           "\t) as shipping\n"
           "group by\n"
           "\tsupp_nation,\n"
           "\tcust_nation,\n"
           "\tl_year\n"
           "order by\n"
           "\tsupp_nation,\n"
           "\tcust_nation,\n"
           "\tl_year;\n",
    .nparams = 2,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
