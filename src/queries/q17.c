/* q17.c: TPC-H Q17, Small-Quantity-Order Revenue, as a TensorPlan baseline.
 *
 * The average yearly revenue lost if small orders (below 20% of a part's
 * average quantity) of the parts of one brand and container were dropped:
 *
 *   select sum(l_extendedprice) / 7.0 as avg_yearly
 *   from lineitem, part
 *   where p_partkey = l_partkey
 *     and p_brand = 'Brand#23'
 *     and p_container = 'MED BOX'
 *     and l_quantity < (select 0.2 * avg(l_quantity) from lineitem
 *                       where l_partkey = p_partkey);
 *
 * Plan: filter part by two dictionary codes, join the few parts (build)
 * with lineitem (probe); the correlated average is a group-by over those
 * lines by part key, gathered back to each line (decorrelation). avg is a
 * float in SQL (DuckDB: DOUBLE), and so is the result. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan, dkb__part_avg
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

static const dkb_param_def params[] = {
    {"brand", DKB_PARAM_STRING, 0, "part brand (Brand#MN, M and N in 1..5)"},
    {"container", DKB_PARAM_STRING, 0, "part container (one of the 40: SM CASE .. WRAP DRUM)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        dkb__qgen_put_str(out, "brand", "Brand#23");
        dkb__qgen_put_str(out, "container", "MED BOX");
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 17);
    char buf[DKB_PARAM_STRLEN];
    dkb__qgen_brand(&q, buf, sizeof buf);
    dkb__qgen_put_str(out, "brand", buf);
    dkb__qgen_container(&q, buf, sizeof buf);
    dkb__qgen_put_str(out, "container", buf);
}

static int check(const dkb_params *p, dkb_error *err) {
    const char *brand = dkb_params_get(p, "brand")->s, *container = dkb_params_get(p, "container")->s;
    if (!dkb__qgen_is_brand(brand))
        return dkb_fail(err, DKB_EINVAL, "q17: brand '%s' is not Brand#MN with M and N in 1..5", brand);
    if (!dkb__qgen_is_container(container))
        return dkb_fail(err, DKB_EINVAL, "q17: container '%s' is not a part container (SM CASE .. WRAP DRUM)",
                        container);
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_partkey", "l_quantity", "l_extendedprice"};
static const char *const PART[] = {"p_partkey", "p_brand", "p_container"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb_set_put_i64(tp, in, "brand", dkb__plan_code_or_none(tp, "q17", in, "p_brand", dkb_params_get(p, "brand")->s));
    dkb_set_put_i64(tp, in, "container",
                    dkb__plan_code_or_none(tp, "q17", in, "p_container", dkb_params_get(p, "container")->s));
    return dkb_tp_status(tp, NULL);
}

/* The lines of the brand's and container's parts: partkey, quantity, price. */
static void part_lines(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **part_out, dkb_tensor **qty_out,
                       dkb_tensor **price_out) {
    /* part: p_brand = :1 and p_container = :2 */
    dkb_tensor *keep = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "p_brand"), DKB_CMP_EQ, dkb_set_get_i64(tp, in, "brand"));
    keep = dkb_tp_and(tp, keep,
                      dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "p_container"), DKB_CMP_EQ,
                                     dkb_set_get_i64(tp, in, "container")));
    dkb_tensor *pkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "p_partkey"), keep);

    /* p_partkey = l_partkey: the parts build, lineitem probes */
    dkb_join_result j = dkb_tp_join(tp, pkey, dkb_set_get(tp, in, "l_partkey"), DKB_JOIN_INNER);
    dkb_tensor *part = dkb_tp_gather(tp, pkey, j.build_idx, 0);
    dkb_tensor *qty = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_quantity"), j.probe_idx, 0);
    dkb_tensor *price = dkb_tp_gather(tp, dkb_set_get(tp, in, "l_extendedprice"), j.probe_idx, 0);
    *part_out = part, *qty_out = qty, *price_out = price;
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *part, *qty, *price;
    part_lines(tp, in, &part, &qty, &price);

    /* (select 0.2 * avg(l_quantity) ... where l_partkey = p_partkey): per
     * part over the same lines, then back to each line */
    const dkb_tensor *keys[] = {part};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_tensor *limit = dkb_tp_arith_i64(tp, dkb_tp_aggregate(tp, &g, DKB_AGG_AVG, qty), DKB_OP_MUL, 2, 1);
    dkb_tensor *small = dkb_tp_cmp(tp, qty, DKB_CMP_LT, dkb_tp_gather(tp, limit, g.group_id, 0));

    /* sum(l_extendedprice) / 7.0; a sum over no rows is NULL: then the
     * output is empty */
    dkb_tensor *lost = dkb_tp_compress(tp, price, small);
    dkb_tensor *avg_yearly = dkb_tp_arith_i64(tp, dkb_tp_reduce(tp, DKB_AGG_SUM, lost), DKB_OP_DIV, 70, 1);
    dkb__plan_put_aggregate(tp, out, "avg_yearly", avg_yearly, lost);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Two passes. 1: per part, the exact sum and count of its lines'
 * quantities (they add up over the runs of partitions). 2: each line
 * against 0.2 * its part's average (the exact average of the merged sum
 * and count, as avg gives it), the qualifying prices summed. */
static int partial1(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *part, *qty, *price;
    part_lines(tp, in, &part, &qty, &price);
    const dkb_tensor *keys[] = {part};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    dkb_set_put(tp, out, "avg_part", dkb_tp_gather(tp, part, g.first_row, 0));
    dkb_set_put(tp, out, "qty_sum", dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, qty));
    dkb_set_put(tp, out, "qty_count", dkb_tp_aggregate(tp, &g, DKB_AGG_COUNT, qty));
    return dkb_tp_status(tp, NULL);
}

static int partial2(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *part, *qty, *price;
    part_lines(tp, in, &part, &qty, &price);
    dkb_tensor *avg = dkb__part_avg(tp, dkb_set_get(tp, in, "qty_sum"), dkb_set_get(tp, in, "qty_count"));
    dkb_tensor *limit = dkb_tp_arith_i64(tp, avg, DKB_OP_MUL, 2, 1);
    /* every line's part is among the merged parts: one match per line, in line order */
    dkb_join_result j = dkb_tp_join(tp, dkb_set_get(tp, in, "avg_part"), part, DKB_JOIN_INNER);
    dkb_tensor *small = dkb_tp_cmp(tp, dkb_tp_gather(tp, qty, j.probe_idx, 0), DKB_CMP_LT,
                                   dkb_tp_gather(tp, limit, j.build_idx, 0));
    dkb_tensor *lost = dkb_tp_compress(tp, dkb_tp_gather(tp, price, j.probe_idx, 0), small);
    dkb_set_put(tp, out, "lost_sum", dkb_tp_reduce(tp, DKB_AGG_SUM, lost));
    dkb_set_put(tp, out, "lost_rows", dkb_tp_reduce(tp, DKB_AGG_COUNT, lost));
    return dkb_tp_status(tp, NULL);
}

/* sum / 7.0, NULL when no line qualified. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *avg_yearly = dkb_tp_arith_i64(tp, dkb_set_get(tp, in, "lost_sum"), DKB_OP_DIV, 70, 1);
    dkb_tensor *some = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "lost_rows"), DKB_CMP_GT, 0);
    dkb_set_put(tp, out, "avg_yearly", dkb_tp_compress(tp, avg_yearly, some));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q17_part = {
    .stream = {"lineitem"},
    .npasses = 2,
    .pass = {{partial1, 3, {{"avg_part", DKB__MERGE_KEY}, {"qty_sum", DKB__MERGE_SUM}, {"qty_count", DKB__MERGE_SUM}}},
             {partial2, 2, {{"lost_sum", DKB__MERGE_SUM}, {"lost_rows", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    return dkb__plan_finish_single(tp, out, res, "avg_yearly", DKB_RES_FLOAT);
}

const dkb_query dkb__q17 = {
    .number = 17,
    .name = "q17",
    .title = "Small-Quantity-Order Revenue",
    .sql = "select\n"
           "\tsum(l_extendedprice) / 7.0 as avg_yearly\n"
           "from\n"
           "\tlineitem,\n"
           "\tpart\n"
           "where\n"
           "\tp_partkey = l_partkey\n"
           "\tand p_brand = ':brand'\n"
           "\tand p_container = ':container'\n"
           "\tand l_quantity < (\n"
           "\t\tselect\n"
           "\t\t\t0.2 * avg(l_quantity)\n"
           "\t\tfrom\n"
           "\t\t\tlineitem\n"
           "\t\twhere\n"
           "\t\t\tl_partkey = p_partkey\n"
           "\t);\n",
    .nparams = 2,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
