/* q11.c: TPC-H Q11, Important Stock Identification, as a TensorPlan baseline.
 *
 * The parts whose stock value at one nation's suppliers is more than a
 * fraction of that nation's total stock value:
 *
 *   select ps_partkey, sum(ps_supplycost * ps_availqty) as value
 *   from partsupp, supplier, nation
 *   where ps_suppkey = s_suppkey and s_nationkey = n_nationkey
 *     and n_name = 'GERMANY'
 *   group by ps_partkey
 *   having sum(ps_supplycost * ps_availqty) > (
 *       select sum(ps_supplycost * ps_availqty) * 0.0001000000
 *       from partsupp, supplier, nation
 *       where ps_suppkey = s_suppkey and s_nationkey = n_nationkey
 *         and n_name = 'GERMANY')
 *   order by value desc;
 *
 * FRACTION is 0.0001 / SF (qgen prints it with 10 decimals).
 *
 * Plan: the nation's suppliers, their partsupp rows, value at scale 2; the
 * uncorrelated subquery is the sum of the same values (I128), computed once
 * and scaled by the fraction exactly on the host: value > total * fraction
 * exactly when value (hundredths) > floor(total * fraction), as values are
 * whole hundredths; sums per part, the HAVING as a mask, sorted. */
#include "dkb/query.h"

#include <math.h>

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

enum { FRACTION_SCALE = 10 };

static const dkb_param_def params[] = {
    {"nation", DKB_PARAM_STRING, 0, "nation of the suppliers (any of the 25)"},
    {"fraction", DKB_PARAM_DECIMAL, FRACTION_SCALE, "share of the total stock value (0.0001 / SF)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    /* FRACTION: 0.0001 / SF with 10 decimals, as qgen prints it */
    int64_t fraction = sf > 0 ? llround(1e6 / sf) : 0;
    if (seed == 0) {
        dkb__qgen_put_str(out, "nation", "GERMANY");
        dkb__qgen_put_dec(out, "fraction", FRACTION_SCALE, fraction);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 11);
    dkb__qgen_put_str(out, "nation", dkb__qgen_pick(&q, dkb__qgen_nation, DKB__QGEN_NNATION));
    dkb__qgen_put_dec(out, "fraction", FRACTION_SCALE, fraction);
}

/* A nation name, and a fraction from 0 to 1. */
static int check(const dkb_params *p, dkb_error *err) {
    const char *nation = dkb_params_get(p, "nation")->s;
    int64_t fraction = dkb_params_get(p, "fraction")->i;
    if (dkb__qgen_find(dkb__qgen_nation, DKB__QGEN_NNATION, nation) < 0)
        return dkb_fail(err, DKB_EINVAL, "q11: nation '%s' is not a nation name", nation);
    if (fraction < 0 || fraction > 10000000000LL)
        return dkb_fail(err, DKB_EINVAL, "q11: fraction must lie in 0..1");
    return 0;
}

/* ---- plan ---- */

static const char *const PARTSUPP[] = {"ps_partkey", "ps_suppkey", "ps_availqty", "ps_supplycost"};
static const char *const SUPPLIER[] = {"s_suppkey", "s_nationkey"};
static const char *const NATION[] = {"n_nationkey", "n_name"};
/* Core outputs, named as the result columns. */
enum { NOUT = 2 };
static const char *const OUT[NOUT] = {"ps_partkey", "value"};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "partsupp", PARTSUPP, DKB_COUNTOF(PARTSUPP));
    dkb__plan_put_columns(tp, db, in, "supplier", SUPPLIER, DKB_COUNTOF(SUPPLIER));
    dkb__plan_put_columns(tp, db, in, "nation", NATION, DKB_COUNTOF(NATION));
    dkb_set_put_i64(tp, in, "nation", dkb__plan_code_required(tp, "q11", in, "n_name", dkb_params_get(p, "nation")->s));
    dkb_set_put_i64(tp, in, "fraction", dkb_params_get(p, "fraction")->i);   /* scale 10 */
    return dkb_tp_status(tp, NULL);
}

/* floor(total * fraction / 10^FRACTION_SCALE) for total >= 0: the HAVING
 * bound in the units of total. */
static int64_t threshold(__int128 total, int64_t fraction) {
    __int128 t = total * fraction;
    __int128 unit = 1;
    for (int i = 0; i < FRACTION_SCALE; i++) unit *= 10;
    t /= unit;
    return t > INT64_MAX ? INT64_MAX : (int64_t)t;
}

/* The value of the nation's stock per part (groups in order of first
 * appearance). */
static void value_by_part(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor **part_out, dkb_tensor **sum_out) {
    /* the nation's suppliers, their partsupp rows */
    dkb_tensor *n_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "n_nationkey"),
                                        dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "n_name"), DKB_CMP_EQ,
                                                       dkb_set_get_i64(tp, in, "nation")));
    dkb_tensor *s_key = dkb_tp_compress(tp, dkb_set_get(tp, in, "s_suppkey"),
                                        dkb_tp_semi_join(tp, n_key, dkb_set_get(tp, in, "s_nationkey")));
    dkb_tensor *ps_keep = dkb_tp_semi_join(tp, s_key, dkb_set_get(tp, in, "ps_suppkey"));
    dkb_tensor *part = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_partkey"), ps_keep);
    dkb_tensor *cost = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_supplycost"), ps_keep);
    dkb_tensor *qty = dkb_tp_compress(tp, dkb_set_get(tp, in, "ps_availqty"), ps_keep);
    dkb_tensor *value = dkb_tp_arith(tp, cost, DKB_OP_MUL, qty);   /* scale 2 */
    const dkb_tensor *keys[] = {part};
    dkb_groups g = dkb_tp_group(tp, keys, DKB_COUNTOF(keys));
    *part_out = dkb_tp_gather(tp, part, g.first_row, 0);
    *sum_out = dkb_tp_aggregate(tp, &g, DKB_AGG_SUM, value);
}

/* The parts whose value exceeds the fraction of the total, by value, into out. */
static void put_important(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor *part, dkb_tensor *sum,
                          dkb_tensor_set *out) {
    /* the subquery: sum(value) * :fraction (the sum of the exact per-part sums) */
    dkb_tensor *total = dkb_tp_reduce(tp, DKB_AGG_SUM, sum);
    int64_t bound = total ? threshold(dkb_tp_get_i128(tp, total, 0), dkb_set_get_i64(tp, in, "fraction")) : 0;
    /* group by ps_partkey having sum(value) > bound */
    dkb_tensor *keep = dkb_tp_cmp_i64(tp, sum, DKB_CMP_GT, bound);
    dkb_tensor *cols[NOUT] = {
        dkb_tp_compress(tp, part, keep),
        dkb_tp_compress(tp, sum, keep),
    };
    /* order by value desc */
    dkb_sort_key by[] = {{cols[1], true}};
    dkb_tensor *perm = dkb_tp_sort(tp, by, DKB_COUNTOF(by));
    dkb__plan_put_gathered(tp, out, OUT, cols, NOUT, perm);
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *part, *sum;
    value_by_part(tp, in, &part, &sum);
    put_important(tp, in, part, sum, out);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Partsupp streams (by partkey: a part's rows share a partition). The
 * value per part adds up over the runs of partitions; the total (their
 * sum) and the HAVING bound come after, over the merged parts, as in the
 * core. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *part, *sum;
    value_by_part(tp, in, &part, &sum);
    dkb_set_put(tp, out, "value_part", part);
    dkb_set_put(tp, out, "value_sum", sum);
    return dkb_tp_status(tp, NULL);
}

static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    put_important(tp, in, dkb_set_get(tp, in, "value_part"), dkb_set_get(tp, in, "value_sum"), out);
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q11_part = {
    .stream = {"partsupp"},
    .npasses = 1,
    .pass = {{partial, 2, {{"value_part", DKB__MERGE_KEY}, {"value_sum", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    dkb_tensor *t[NOUT];
    int rc = dkb__plan_get_outputs(tp, out, OUT, NOUT, t);
    if (rc) return rc;
    static const dkb_res_type types[] = {DKB_RES_INT, DKB_RES_DECIMAL};
    const int scales[] = {0, t[1]->scale};
    rc = dkb_result_init(res, NOUT, OUT, types, scales);
    if (rc) return rc;
    const dkb_sort_spec order[] = {{1, true}};
    dkb_result_set_order(res, DKB_COUNTOF(order), order);
    for (int64_t i = 0; i < t[0]->n; i++) {
        int64_t r = dkb_result_add_row(res);
        if (r < 0) return DKB_ENOMEM;
        dkb_result_set_int(res, r, 0, dkb_tp_get_i64(tp, t[0], i));
        dkb_result_set_dec(res, r, 1, dkb_tp_get_i128(tp, t[1], i));
    }
    return dkb_tp_status(tp, NULL);
}

const dkb_query dkb__q11 = {
    .number = 11,
    .name = "q11",
    .title = "Important Stock Identification",
    .sql = "select\n"
           "\tps_partkey,\n"
           "\tsum(ps_supplycost * ps_availqty) as value\n"
           "from\n"
           "\tpartsupp,\n"
           "\tsupplier,\n"
           "\tnation\n"
           "where\n"
           "\tps_suppkey = s_suppkey\n"
           "\tand s_nationkey = n_nationkey\n"
           "\tand n_name = ':nation'\n"
           "group by\n"
           "\tps_partkey having\n"
           "\t\tsum(ps_supplycost * ps_availqty) > (\n"
           "\t\t\tselect\n"
           "\t\t\t\tsum(ps_supplycost * ps_availqty) * :fraction\n"
           "\t\t\tfrom\n"
           "\t\t\t\tpartsupp,\n"
           "\t\t\t\tsupplier,\n"
           "\t\t\t\tnation\n"
           "\t\t\twhere\n"
           "\t\t\t\tps_suppkey = s_suppkey\n"
           "\t\t\t\tand s_nationkey = n_nationkey\n"
           "\t\t\t\tand n_name = ':nation'\n"
           "\t\t)\n"
           "order by\n"
           "\tvalue desc;\n",
    .nparams = 2,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
