/* q21.c: TPC-H Q21, Suppliers Who Kept Orders Waiting, as a TensorPlan
 * baseline.
 *
 * The suppliers of one nation who, in multi-supplier orders that were
 * finalised (status F), were the only supplier to deliver late:
 *
 *   select s_name, count(*) as numwait
 *   from supplier, lineitem l1, orders, nation
 *   where s_suppkey = l1.l_suppkey
 *     and o_orderkey = l1.l_orderkey
 *     and o_orderstatus = 'F'
 *     and l1.l_receiptdate > l1.l_commitdate
 *     and exists (select * from lineitem l2
 *                 where l2.l_orderkey = l1.l_orderkey
 *                   and l2.l_suppkey <> l1.l_suppkey)
 *     and not exists (select * from lineitem l3
 *                     where l3.l_orderkey = l1.l_orderkey
 *                       and l3.l_suppkey <> l1.l_suppkey
 *                       and l3.l_receiptdate > l3.l_commitdate)
 *     and s_nationkey = n_nationkey
 *     and n_name = 'SAUDI ARABIA'
 *   group by s_name
 *   order by numwait desc, s_name
 *   limit 100;
 *
 * Plan (decorrelated with distinct-supplier counts per order): l1 is a
 * late line of the nation's suppliers in an F order. Since l1's own
 * supplier is among its order's suppliers, the EXISTS holds exactly when
 * the order has at least 2 distinct suppliers, and since l1 is late, the
 * NOT EXISTS holds exactly when the order's late lines have 1 distinct
 * supplier. Both counts are group-bys over the lines of the candidate
 * orders only (a semi-join of lineitem with l1's order keys). Then count
 * the surviving l1 lines per supplier; supplier names are unique, so
 * grouping by the supplier key groups by s_name. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"nation", DKB_PARAM_STRING, 0, "supplier nation (one of the 25)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "nation", "SAUDI ARABIA");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 21);
    dkb__qgen_put_str(out, "nation", dkb__qgen_pick(&q, dkb__qgen_nation, DKB__QGEN_NNATION));
}

static int check(const dkb_params *p, dkb_error *err) {
    const char *nation = dkb_params_get(p, "nation")->s;
    if (dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, nation) < 0)
        return dkb_fail(err, DKB_EINVAL, "q21: nation '%s' is not one of the 25 nations", nation);
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_orderkey", "l_suppkey", "l_commitdate", "l_receiptdate"};
static const char *const ORDERS[] = {"o_orderkey", "o_orderstatus"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_name", "s_nationkey"};
static const char *const NATION[] = {"n_nationkey", "n_name"};
/* Core outputs, named as the result columns. */
static const char *const OUT[] = {"s_name", "numwait"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    dkb_set_put_i64(tp, in, "nation", dkb__plan_code_or_none(tp, "q21", in, "n_name", dkb_params_get(p, "nation")->s));
    dkb_set_put_i64(tp, in, "status_f", dkb__plan_code_or_none(tp, "q21", in, "o_orderstatus", "F"));
    return dkb_tp_status(tp, NULL);
}

/* Group rows by order key; the keys whose count of distinct suppliers
 * compares to `value` by `op`. */
static dkb_tensor *orders_by_suppliers(dkb_tp *tp, const dkb_tensor *order, const dkb_tensor *supp, dkb_cmp op,
                                       int64_t value) {
    const dkb_tensor *keys[] = {order};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *nsupp = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT_DISTINCT, supp);
    return dkb_tp_compress(tp, dkb_tp_gather(tp, order, g.first_row, 0), dkb_tp_cmp_i64(tp, nsupp, op, value));
}

/* The waiting lines counted per supplier key. */
static void waits(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **gsupp_out, dkb_tensor **numwait_out) {
    dkb_tensor *l_orderkey = dkb_set_get(tp, in, "l_orderkey");
    dkb_tensor *l_suppkey = dkb_set_get(tp, in, "l_suppkey");
    dkb_tensor *o_orderkey = dkb_set_get(tp, in, "o_orderkey");
    dkb_tensor *s_suppkey = dkb_set_get(tp, in, "s_suppkey");

    /* the nation's suppliers: s_nationkey = n_nationkey and n_name = :1 */
    dkb_tensor *nation = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"),
                                         dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "n_name"), DKB_CMP_EQ,
                                                        dkb_set_get_i64(tp, in, "nation")));
    dkb_tensor *supp = dkb_tp_compress(tp, s_suppkey, dkb_tp_semi_join(tp, nation, dkb_set_get(tp, in, "s_nationkey")));

    /* l1: l_receiptdate > l_commitdate, of those suppliers */
    dkb_tensor *late = dkb_tp_cmp(tp, dkb_set_get(tp, in, "l_receiptdate"), DKB_CMP_GT,
                                  dkb_set_get(tp, in, "l_commitdate"));
    dkb_tensor *keep = dkb_tp_and(tp, late, dkb_tp_semi_join(tp, supp, l_suppkey));
    dkb_tensor *l1_order = dkb_tp_compress(tp, l_orderkey, keep);
    dkb_tensor *l1_supp = dkb_tp_compress(tp, l_suppkey, keep);

    /* o_orderkey = l1.l_orderkey and o_orderstatus = 'F' */
    dkb_tensor *f = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "o_orderstatus"), DKB_CMP_EQ,
                                   dkb_set_get_i64(tp, in, "status_f"));
    f = dkb_tp_and(tp, f, dkb_tp_semi_join(tp, l1_order, o_orderkey));
    dkb_tensor *l1_keep = dkb_tp_semi_join(tp, dkb_tp_compress(tp, o_orderkey, f), l1_order);
    l1_order = dkb_tp_compress(tp, l1_order, l1_keep);
    l1_supp = dkb_tp_compress(tp, l1_supp, l1_keep);

    /* all lines (l2, l3) of the candidate orders */
    dkb_tensor *cand = dkb_tp_semi_join(tp, l1_order, l_orderkey);
    dkb_tensor *order = dkb_tp_compress(tp, l_orderkey, cand);
    dkb_tensor *osupp = dkb_tp_compress(tp, l_suppkey, cand);
    dkb_tensor *olate = dkb_tp_compress(tp, late, cand);

    /* exists l2: at least 2 distinct suppliers in the order;
     * not exists l3: its late lines have exactly 1 distinct supplier */
    dkb_tensor *multi = orders_by_suppliers(tp, order, osupp, DKB_CMP_GE, 2);
    dkb_tensor *alone = orders_by_suppliers(tp, dkb_tp_compress(tp, order, olate), dkb_tp_compress(tp, osupp, olate),
                                            DKB_CMP_EQ, 1);
    dkb_tensor *wait = dkb_tp_and(tp, dkb_tp_semi_join(tp, multi, l1_order), dkb_tp_semi_join(tp, alone, l1_order));
    dkb_tensor *wsupp = dkb_tp_compress(tp, l1_supp, wait);

    /* group by s_name (one per supplier key): count(*) */
    const dkb_tensor *keys[] = {wsupp};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    *gsupp_out = dkb_tp_gather(tp, wsupp, g.first_row, 0);
    *numwait_out = dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, wsupp);
}

/* The suppliers' names and the top 100, into out. */
static void put_top(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *gsupp, dkb_tensor *numwait,
                    dkb_tensor_set *out) {
    dkb_tensor *s_suppkey = dkb_set_get(tp, in, "s_suppkey");
    dkb_join_result j = dkb_tp_join(tp, gsupp, s_suppkey, DKB_JOIN_INNER);
    dkb_tensor *cols[2] = {
        dkb_tp_gather(tp, dkb_set_get(tp, in, "s_name"), j.probe_idx, 0),
        dkb_tp_gather(tp, numwait, j.build_idx, 0),
    };

    /* order by numwait desc, s_name limit 100 */
    dkb_sort_key by[] = {{cols[1], true}, {cols[0], false}};
    dkb_tensor *top = dkb_tp_topk(tp, by, DKB_COUNTOF(by), 100);
    dkb__plan_put_gathered(tp, out, OUT, cols, DKB_COUNTOF(OUT), top);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *gsupp, *numwait;
    waits(tp, in, &gsupp, &numwait);
    put_top(tp, in, gsupp, numwait, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* All lines of an order share its partition, so the exists / not exists
 * tests are whole in every run of partitions; the counts per supplier add
 * up, then the names and the top 100 as in the core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *gsupp, *numwait;
    waits(tp, in, &gsupp, &numwait);
    dkb_set_put(tp, out, "wait_supp", gsupp);
    dkb_set_put(tp, out, "wait_count", numwait);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_top(tp, in, dkb_set_get(tp, in, "wait_supp"), dkb_set_get(tp, in, "wait_count"), out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q21_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{partial, 2, {{"wait_supp", DKB__MERGE_KEY}, {"wait_count", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[2];
    int rc = dkb__plan_get_outputs(tp, out, OUT, DKB_COUNTOF(OUT), t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT};
    static const int scales[] = {0, 0};
    rc = dkb_result_init(res, DKB_COUNTOF(OUT), OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{1, true}, {0, false}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        if (dkb_result_add_row(res) < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, i, 1, dkb_tp_get_i64(tp, t[1], i));
    }
    rc = dkb__plan_set_texts(tp, res, 0, t[0]);
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q21 = {
    .number = 21,
    .name = "q21",
    .title = "Suppliers Who Kept Orders Waiting",
    .sql = "select\n"
           "\ts_name,\n"
           "\tcount(*) as numwait\n"
           "from\n"
           "\tsupplier,\n"
           "\tlineitem l1,\n"
           "\torders,\n"
           "\tnation\n"
           "where\n"
           "\ts_suppkey = l1.l_suppkey\n"
           "\tand o_orderkey = l1.l_orderkey\n"
           "\tand o_orderstatus = 'F'\n"
           "\tand l1.l_receiptdate > l1.l_commitdate\n"
           "\tand exists (\n"
           "\t\tselect\n"
           "\t\t\t*\n"
           "\t\tfrom\n"
           "\t\t\tlineitem l2\n"
           "\t\twhere\n"
           "\t\t\tl2.l_orderkey = l1.l_orderkey\n"
           "\t\t\tand l2.l_suppkey <> l1.l_suppkey\n"
           "\t)\n"
           "\tand not exists (\n"
           "\t\tselect\n"
           "\t\t\t*\n"
           "\t\tfrom\n"
           "\t\t\tlineitem l3\n"
           "\t\twhere\n"
           "\t\t\tl3.l_orderkey = l1.l_orderkey\n"
           "\t\t\tand l3.l_suppkey <> l1.l_suppkey\n"
           "\t\t\tand l3.l_receiptdate > l3.l_commitdate\n"
           "\t)\n"
           "\tand s_nationkey = n_nationkey\n"
           "\tand n_name = ':nation'\n"
           "group by\n"
           "\ts_name\n"
           "order by\n"
           "\tnumwait desc,\n"
           "\ts_name\n"
           "limit 100;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
