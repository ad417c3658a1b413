/* q13.c: TPC-H Q13, Customer Distribution, as a TensorPlan baseline.
 *
 * How many customers have 0, 1, 2, ... orders, leaving out orders whose
 * comment mentions WORD1 and later WORD2 (customers with no other order
 * count as having 0):
 *
 *   select c_count, count(*) as custdist
 *   from (select c_custkey, count(o_orderkey)
 *         from customer left outer join orders on
 *              c_custkey = o_custkey
 *              and o_comment not like '%special%requests%'
 *         group by c_custkey) as c_orders (c_custkey, c_count)
 *   group by c_count
 *   order by custdist desc, c_count desc;
 *
 * Plan: LIKE on the order comments (free text), compress the customer keys
 * of the other orders, left-join every customer (probe: the preserved side)
 * against them (build), count the matched rows per customer, then count
 * customers per order count. */
#include <stdio.h>
#include <string.h>

#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"word1", DKB_PARAM_STRING, 0, "first comment word (special, pending, unusual, express)"},
    {"word2", DKB_PARAM_STRING, 0, "second comment word (packages, requests, accounts, deposits)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "word1", "special");
        dkb__qgen_put_str(out, "word2", "requests");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 13);
    dkb__qgen_put_str(out, "word1", dkb__qgen_pick(&q, dkb__qgen_q13_word1, DKB__QGEN_NQ13));
    dkb__qgen_put_str(out, "word2", dkb__qgen_pick(&q, dkb__qgen_q13_word2, DKB__QGEN_NQ13));
}

/* Any word is valid SQL as long as it holds no LIKE wildcard or quote
 * (the pattern '%:word1%:word2%' could not express it). */
static int check(const dkb_params *p, dkb_error *err) {
    static const char *const names[] = {"word1", "word2"};
    for (int i = 0; i < 2; i++) {
        const char *s = dkb_params_get(p, names[i])->s;
        if (!*s || strpbrk(s, "%_'"))
            return dkb_fail(err, DKB_EINVAL, "q13: %s '%s' must be a non-empty word without %%, _ or '", names[i],
                            s);
    }
    return 0;
}

/* ---- plan ---- */

static const char *const CUSTOMER[] = {"c_custkey"};
static const char *const ORDERS[] = {"o_custkey", "o_comment"};
/* Core outputs, named as the result columns. */
static const char *const OUT[] = {"c_count", "custdist"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "customer", CUSTOMER, DKB_COUNTOF(CUSTOMER));
    dkb__plan_put_columns(tp, db, in, "orders", ORDERS, DKB_COUNTOF(ORDERS));
    char pattern[2 * DKB_PARAM_STRLEN + 4];
    snprintf(pattern, sizeof pattern, "%%%s%%%s%%", dkb_params_get(p, "word1")->s, dkb_params_get(p, "word2")->s);
    dkb_set_put_str(tp, in, "comment_like", pattern);
    return dkb_tp_status(tp, NULL);
}

/* The orders counted per customer: c_row (every customer row, in order)
 * and c_count. */
static void orders_per_customer(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **c_row, dkb_tensor **c_count_out) {
    /* orders with o_comment not like '%:1%:2%' */
    dkb_tensor *special = dkb_tp_like(tp, dkb_set_get(tp, in, "o_comment"), dkb_set_get_str(tp, in, "comment_like"));
    dkb_tensor *ocust = dkb_tp_compress(tp, dkb_set_get(tp, in, "o_custkey"), dkb_tp_not(tp, special));

    /* customer left outer join orders on c_custkey = o_custkey,
     * group by c_custkey (one customer row per key): count(o_orderkey)
     * counts the rows that found an order */
    dkb_join_result j = dkb_tp_join(tp, ocust, dkb_set_get(tp, in, "c_custkey"), DKB_JOIN_LEFT);
    dkb_tensor *found = dkb_tp_cast(tp, dkb_tp_cmp_i64(tp, j.build_idx, DKB_CMP_GE, 0), DKB_TP_I64);
    const dkb_tensor *cust[] = {j.probe_idx};
    dkb_groups gc = dkb_tp_group(tp, cust, DKB_COUNTOF(cust));
    *c_row = dkb_tp_gather(tp, j.probe_idx, gc.first_row, 0);
    *c_count_out = dkb_tp_cast(tp, dkb_tp_aggregate(tp, &gc, DKB_AGG_SUM, found), DKB_TP_I64);
}

/* The customers counted per c_count, ordered, into out. */
static void put_distribution(dkb_tp *tp, dkb_tensor *c_count, dkb_tensor_set *out) {

    /* group by c_count: count(*) */
    const dkb_tensor *count[] = {c_count};
    dkb_groups g = dkb_tp_group(tp, count, DKB_COUNTOF(count));
    dkb_tensor *cols[2] = {
        dkb_tp_gather(tp, c_count, g.first_row, 0),
        dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, c_count),
    };

    /* order by custdist desc, c_count desc */
    dkb_sort_key by[] = {{cols[1], true}, {cols[0], true}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, DKB_COUNTOF(OUT), perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *c_row, *c_count;
    orders_per_customer(tp, in, &c_row, &c_count);
    put_distribution(tp, c_count, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Orders stream (o_comment copied per run of partitions); customer stays
 * whole. Every run counts each customer's orders there (0 included), in
 * customer order; the counts add up, then the distribution as in the core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *c_row, *c_count;
    orders_per_customer(tp, in, &c_row, &c_count);
    dkb_set_put(tp, out, "cust_row", c_row);
    dkb_set_put(tp, out, "cust_orders", c_count);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_distribution(tp, dkb_set_get(tp, in, "cust_orders"), out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q13_part = {
    .stream = {"orders"},
    .npasses = 1,
    .pass = {{partial, 2, {{"cust_row", DKB__MERGE_KEY}, {"cust_orders", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[2];
    int rc = dkb__plan_get_outputs(tp, out, OUT, DKB_COUNTOF(OUT), t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_INT};
    static const int scales[] = {0, 0};
    rc = dkb_result_init(res, DKB_COUNTOF(OUT), OUT, types, scales);
    if (rc) return rc;
    static const dkb_sort_spec order[] = {{1, true}, {0, true}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, r, 0, dkb_tp_get_i64(tp, t[0], i));
        dkb_result_set_int(res, r, 1, dkb_tp_get_i64(tp, t[1], i));
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q13 = {
    .number = 13,
    .name = "q13",
    .title = "Customer Distribution",
    .sql = "select\n"
           "\tc_count,\n"
           "\tcount(*) as custdist\n"
           "from\n"
           "\t(\n"
           "\t\tselect\n"
           "\t\t\tc_custkey,\n"
           "\t\t\tcount(o_orderkey)\n"
           "\t\tfrom\n"
           "\t\t\tcustomer left outer join orders on\n"
           "\t\t\t\tc_custkey = o_custkey\n"
           "\t\t\t\tand o_comment not like '%:word1%:word2%'\n"
           "\t\tgroup by\n"
           "\t\t\tc_custkey\n"
           "\t) as c_orders (c_custkey, c_count)\n"
           "group by\n"
           "\tc_count\n"
           "order by\n"
           "\tcustdist desc,\n"
           "\tc_count desc;\n",
    .nparams = 2,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
