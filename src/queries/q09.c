/* q09.c: TPC-H Q9, Product Type Profit Measure, as a TensorPlan baseline.
 *
 * The profit on parts whose name contains a colour, per supplier nation
 * and order year:
 *
 *   select nation, o_year, sum(amount) as sum_profit
 *   from (select n_name as nation, extract(year from o_orderdate) as o_year,
 *                l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount
 *         from part, supplier, lineitem, partsupp, orders, nation
 *         where s_suppkey = l_suppkey and ps_suppkey = l_suppkey
 *           and ps_partkey = l_partkey and p_partkey = l_partkey
 *           and o_orderkey = l_orderkey and s_nationkey = n_nationkey
 *           and p_name like '%green%'
 *        ) as profit
 *   group by nation, o_year
 *   order by nation, o_year desc;
 *
 * Plan: LIKE on p_name; the parts' line items and partsupp rows (parts
 * built); the supply cost through one join on the packed key (partkey,
 * suppkey); the supplier's nation name (supplier, nation joins); the order
 * year (a join with the items as the smaller, build side against all
 * orders); the amount exactly at scale 4; sums per (name code, year). */
#include "dkb/query.h"

#include <stdio.h>

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"color", DKB_PARAM_STRING, 0, "word that p_name contains (one of the 92 colours, e.g. green)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "color", "green");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 9);
    dkb__qgen_put_str(out, "color", dkb__qgen_pick(&q, dkb__qgen_color, DKB__QGEN_NCOLOR));
}

/* Any text: it is matched as written (LIKE wildcards in it act as such). */
static int check(const dkb_params *p, dkb_error *err) {
    (void)p, (void)err;
    return 0;
}

/* ---- plan ---- */

static const char *const PART[] = {"p_partkey", "p_name"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_nationkey"};
static const char *const LINEITEM[] = {"l_orderkey", "l_partkey",       "l_suppkey",
                                       "l_quantity", "l_extendedprice", "l_discount"};
static const char *const PARTSUPP[] = {"ps_partkey", "ps_suppkey", "ps_supplycost"};
static const char *const ORDERS[] = {"o_orderkey", "o_orderdate"};
static const char *const NATION[] = {"n_nationkey", "n_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 3 };
static const char *const OUT[NOUT] = {"nation", "o_year", "sum_profit"};

/* The larger of the maxima of two integer tensors (0 when both are empty). */
static int64_t max_of(dkb_tp *tp, const dkb_tensor *a, const dkb_tensor *b) {
    int64_t m = 0;
    const dkb_tensor *ab[] = {a, b};
    for (int i = 0; i < 2; i++) {
        dkb_tensor *r = dkb_tp_reduce(tp, DKB_AGG_MAX, ab[i]);
        if (r && r->n) {
            int64_t v = dkb_tp_get_i64(tp, r, 0);
            if (v > m) m = v;
        }
    }
    return m;
}

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "partsupp", PARTSUPP, DKB_COUNTOF(PARTSUPP));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    char pattern[DKB_PARAM_STRLEN + 3];
    snprintf(pattern, sizeof pattern, "%%%s%%", dkb_params_get(p, "color")->s);
    dkb_set_put_str(tp, in, "pattern", pattern);
    return dkb_tp_status(tp, NULL);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    /* p_name like '%:color%' */
    dkb_tensor *p_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "p_partkey"),
                                        dkb_tp_like(tp, dkb_set_get(tp, in, "p_name"),
                                                    dkb_set_get_str(tp, in, "pattern")));
    /* their line items, and partsupp rows */
    dkb_join_result lp = dkb_tp_join(tp, p_key, dkb_set_get(tp, in, "l_partkey"), DKB_JOIN_INNER);
    dkb_tensor *l_row = lp.probe_idx;
    dkb_tensor *l_part = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_partkey"), l_row, 0);
    dkb_tensor *l_supp = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_suppkey"), l_row, 0);
    dkb_tensor *ps_keep = dkb_tp_semi_join(tp, p_key, dkb_set_get(tp, in, "ps_partkey"));
    dkb_tensor *ps_part = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_partkey"), ps_keep);
    dkb_tensor *ps_supp = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_suppkey"), ps_keep);
    dkb_tensor *ps_cost = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_supplycost"), ps_keep);
    /* ps_partkey = l_partkey and ps_suppkey = l_suppkey: one packed key */
    int64_t bound = max_of(tp, ps_supp, l_supp);
    dkb_join_result lps = dkb_tp_join(tp, dkb_tp_pack2(tp, ps_part, ps_supp, bound),
                                      dkb_tp_pack2(tp, l_part, l_supp, bound), DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, lps.probe_idx, 0);
    l_supp = dkb_tp_gather(tp, l_supp, lps.probe_idx, 0);
    dkb_tensor *cost = dkb_tp_gather(tp, ps_cost, lps.build_idx, 0);
    /* s_suppkey = l_suppkey, s_nationkey = n_nationkey */
    dkb_join_result ls = dkb_tp_join(tp, dkb_set_get(tp, in, "s_suppkey"), l_supp, DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, ls.probe_idx, 0);
    cost = dkb_tp_gather(tp, cost, ls.probe_idx, 0);
    dkb_tensor *s_nation = dkb_tp_gather(tp, dkb_set_get(tp, in, "s_nationkey"), ls.build_idx, 0);
    dkb_join_result sn = dkb_tp_join(tp, dkb_set_get(tp, in, "n_nationkey"), s_nation, DKB_JOIN_INNER);
    l_row = dkb_tp_gather(tp, l_row, sn.probe_idx, 0);
    cost = dkb_tp_gather(tp, cost, sn.probe_idx, 0);
    dkb_tensor *nation = dkb_tp_gather(tp, dkb_set_get(tp, in, "n_name"), sn.build_idx, 0);
    /* o_orderkey = l_orderkey (the items are the build side) */
    dkb_join_result lo = dkb_tp_join(tp, dkb_tp_gather(tp, dkb_set_get(tp, in, "l_orderkey"), l_row, 0),
                                     dkb_set_get(tp, in, "o_orderkey"), DKB_JOIN_INNER);
    dkb_tensor *year = dkb_tp_year(tp, dkb_tp_gather(tp, dkb_set_get(tp, in, "o_orderdate"), lo.probe_idx, 0));
    l_row = dkb_tp_gather(tp, l_row, lo.build_idx, 0);
    cost = dkb_tp_gather(tp, cost, lo.build_idx, 0);
    nation = dkb_tp_gather(tp, nation, lo.build_idx, 0);
    /* amount = l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity (scale 4) */
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), l_row, 0);
    dkb_tensor *disc = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_discount"), l_row, 0);
    dkb_tensor *qty = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_quantity"), l_row, 0);
    dkb_tensor *amount = dkb_tp_arith(tp, dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc)),
                                      DKB_OP_SUB, dkb_tp_arith(tp, cost, DKB_OP_MUL, qty));
    /* group by nation, o_year; order by nation, o_year desc */
    const dkb_tensor *keys[] = {nation, year};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *cols[NOUT] = {
        dkb_tp_gather(tp, nation, g.first_row, 0),
        dkb_tp_gather(tp, year, g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, amount),
    };
    dkb_sort_key by[] = {{cols[0], false}, {cols[1], true}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Each run of partitions' core gives its own profit per (nation, o_year);
 * the sums add up, then are ordered by the keys again. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *cols[NOUT];
    for (int i = 0; i < NOUT; i++) cols[i] = dkb_set_get(tp, in, OUT[i]);
    dkb_sort_key by[] = {{cols[0], false}, {cols[1], true}};
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, dkb_tp_sort(tp, by, DKB_COUNTOF(by)));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q09_part = {
    .stream = {"lineitem", "orders"},
    .npasses = 1,
    .pass = {{core, NOUT, {{"nation", DKB__MERGE_KEY}, {"o_year", DKB__MERGE_KEY}, {"sum_profit", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_STRING, DKB_RES_INT, DKB_RES_DECIMAL};
    const int scales[] = {0, 0, t[2]->scale};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{0, false}, {1, true}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n && !rc; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        rc = dkb__plan_set_code(tp, "q09", res, r, 0, t[0], i);
        dkb_result_set_int(res, r, 1, dkb_tp_get_i64(tp, t[1], i));
        dkb_result_set_dec(res, r, 2, dkb_tp_get_i128(tp, t[2], i));
    }
    return rc ? rc : dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q09 = {
    .number = 9,
    .name = "q09",
    .title = "Product Type Profit Measure",
    .sql = "select\n"
           "\tnation,\n"
           "\to_year,\n"
           "\tsum(amount) as sum_profit\n"
           "from\n"
           "\t(\n"
           "\t\tselect\n"
           "\t\t\tn_name as nation,\n"
           "\t\t\textract(year from o_orderdate) as o_year,\n"
           "\t\t\tl_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity as amount\n"
           "\t\tfrom\n"
           "\t\t\tpart,\n"
           "\t\t\tsupplier,\n"
           "\t\t\tlineitem,\n"
           "\t\t\tpartsupp,\n"
           "\t\t\torders,\n"
           "\t\t\tnation\n"
           "\t\twhere\n"
           "\t\t\ts_suppkey = l_suppkey\n"
           "\t\t\tand ps_suppkey = l_suppkey\n"
           "\t\t\tand ps_partkey = l_partkey\n"
           "\t\t\tand p_partkey = l_partkey\n"
           "\t\t\tand o_orderkey = l_orderkey\n"
           "\t\t\tand s_nationkey = n_nationkey\n"
           "\t\t\tand p_name like '%:color%'\n"
           "\t) as profit\n"
           "group by\n"
           "\tnation,\n"
           "\to_year\n"
           "order by\n"
           "\tnation,\n"
           "\to_year desc;\n",
    .nparams = 1,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
