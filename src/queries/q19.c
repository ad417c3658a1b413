/* q19.c: TPC-H Q19, Discounted Revenue, as a TensorPlan baseline.
 *
 * The revenue of air shipments delivered in person, for three kinds of
 * part (brand, container sizes, part sizes) each in its own quantity range:
 *
 *   select sum(l_extendedprice * (1 - l_discount)) as revenue
 *   from lineitem, part
 *   where (p_partkey = l_partkey and p_brand = 'Brand#12'
 *          and p_container in ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG')
 *          and l_quantity >= 1 and l_quantity <= 1 + 10
 *          and p_size between 1 and 5
 *          and l_shipmode in ('AIR', 'AIR REG')
 *          and l_shipinstruct = 'DELIVER IN PERSON')
 *      or (p_partkey = l_partkey and p_brand = 'Brand#23'
 *          and p_container in ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK')
 *          and l_quantity >= 10 and l_quantity <= 10 + 10
 *          and p_size between 1 and 10
 *          and l_shipmode in ('AIR', 'AIR REG')
 *          and l_shipinstruct = 'DELIVER IN PERSON')
 *      or (p_partkey = l_partkey and p_brand = 'Brand#34'
 *          and p_container in ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG')
 *          and l_quantity >= 20 and l_quantity <= 20 + 10
 *          and p_size between 1 and 15
 *          and l_shipmode in ('AIR', 'AIR REG')
 *          and l_shipinstruct = 'DELIVER IN PERSON');
 *
 * ('AIR REG' is not a ship mode, so only AIR lines qualify; the text is
 * the benchmark's.) Plan: the join key and the ship conditions are common
 * to the three branches, so lineitem is filtered by them first; each
 * branch's part conditions become a mask on part, the parts of any branch
 * build the join, the filtered lines probe, and each pair then needs its
 * branch's quantity range. */
#include "dkb/query.h"

#include "common/countof.h"    // defines: DKB_COUNTOF
#include "queries/partition.h"  // defines: dkb__part_plan
#include "queries/plan_util.h"  // defines: dkb__plan_* (store columns, dictionary codes, outputs, result cells)
#include "queries/qgen.h"  // defines: dkb__qgen_* (seeded draws, lists, parameter setters)

enum { NBRANCH = 3, NCONT = 4 };
static const char *const BRAND[NBRANCH] = {"brand1", "brand2", "brand3"};
static const char *const QUANTITY[NBRANCH] = {"quantity1", "quantity2", "quantity3"};

static const dkb_param_def params[] = {
    {"brand1", DKB_PARAM_STRING, 0, "brand of the SM containers (Brand#MN, M and N in 1..5)"},
    {"brand2", DKB_PARAM_STRING, 0, "brand of the MED containers (Brand#MN)"},
    {"brand3", DKB_PARAM_STRING, 0, "brand of the LG containers (Brand#MN)"},
    {"quantity1", DKB_PARAM_INT, 0, "SM quantities from this to this + 10 (1..10)"},
    {"quantity2", DKB_PARAM_INT, 0, "MED quantities from this to this + 10 (10..20)"},
    {"quantity3", DKB_PARAM_INT, 0, "LG quantities from this to this + 10 (20..30)"},
};

/* ---- parameters ---- */

static void draw(uint64_t seed, double sf, dkb_params *out) {
    (void)sf;
    if (seed == 0) {
        static const char *const brands[NBRANCH] = {"Brand#12", "Brand#23", "Brand#34"};
        static const int quantities[NBRANCH] = {1, 10, 20};
        for (int i = 0; i < NBRANCH; i++) dkb__qgen_put_str(out, BRAND[i], brands[i]);
        for (int i = 0; i < NBRANCH; i++) dkb__qgen_put_int(out, QUANTITY[i], quantities[i]);
        return;
    }
    dkb__qgen q;
    dkb__qgen_init(&q, seed, 19);
    char buf[DKB_PARAM_STRLEN];
    for (int i = 0; i < NBRANCH; i++) {
        dkb__qgen_brand(&q, buf, sizeof buf);
        dkb__qgen_put_str(out, BRAND[i], buf);
    }
    dkb__qgen_put_int(out, QUANTITY[0], dkb__qgen_int(&q, 1, 10));
    dkb__qgen_put_int(out, QUANTITY[1], dkb__qgen_int(&q, 10, 20));
    dkb__qgen_put_int(out, QUANTITY[2], dkb__qgen_int(&q, 20, 30));
}

static int check(const dkb_params *p, dkb_error *err) {
    for (int i = 0; i < NBRANCH; i++) {
        const char *brand = dkb_params_get(p, BRAND[i])->s;
        int64_t quantity = dkb_params_get(p, QUANTITY[i])->i;
        if (!dkb__qgen_is_brand(brand))
            return dkb_fail(err, DKB_EINVAL, "q19: %s '%s' is not Brand#MN with M and N in 1..5", BRAND[i], brand);
        if (quantity < 0 || quantity > 1000)
            return dkb_fail(err, DKB_EINVAL, "q19: %s %lld out of range 0..1000", QUANTITY[i], (long long)quantity);
    }
    return 0;
}

/* ---- plan ---- */

static const char *const LINEITEM[] = {"l_partkey", "l_quantity", "l_extendedprice", "l_discount", "l_shipmode",
                                       "l_shipinstruct"};
static const char *const PART[] = {"p_partkey", "p_brand", "p_container", "p_size"};
/* The branches' fixed conditions: containers and the largest size. */
static const char *const CONTAINER[NBRANCH][NCONT] = {
    {"SM CASE", "SM BOX", "SM PACK", "SM PKG"},
    {"MED BAG", "MED BOX", "MED PKG", "MED PACK"},
    {"LG CASE", "LG BOX", "LG PACK", "LG PKG"},
};
static const char *const CONTAINER_CODE[NBRANCH][NCONT] = {
    {"cont1a", "cont1b", "cont1c", "cont1d"},
    {"cont2a", "cont2b", "cont2c", "cont2d"},
    {"cont3a", "cont3b", "cont3c", "cont3d"},
};
static const int64_t MAX_SIZE[NBRANCH] = {5, 10, 15};

static int prepare(dkb_tp *tp, const dkb_store *db, const dkb_params *p, dkb_tensor_set *in) {
    dkb__plan_put_columns(tp, db, in, "lineitem", LINEITEM, DKB_COUNTOF(LINEITEM));
    dkb__plan_put_columns(tp, db, in, "part", PART, DKB_COUNTOF(PART));
    dkb_set_put_i64(tp, in, "air", dkb__plan_code_or_none(tp, "q19", in, "l_shipmode", "AIR"));
    dkb_set_put_i64(tp, in, "air_reg", dkb__plan_code_or_none(tp, "q19", in, "l_shipmode", "AIR REG"));
    dkb_set_put_i64(tp, in, "in_person", dkb__plan_code_or_none(tp, "q19", in, "l_shipinstruct", "DELIVER IN PERSON"));
    for (int b = 0; b < NBRANCH; b++) {
        dkb_set_put_i64(tp, in, BRAND[b],
                        dkb__plan_code_or_none(tp, "q19", in, "p_brand", dkb_params_get(p, BRAND[b])->s));
        dkb_set_put_i64(tp, in, QUANTITY[b], dkb_params_get(p, QUANTITY[b])->i * 100);  /* hundredths */
        for (int c = 0; c < NCONT; c++)
            dkb_set_put_i64(tp, in, CONTAINER_CODE[b][c],
                            dkb__plan_code_or_none(tp, "q19", in, "p_container", CONTAINER[b][c]));
    }
    return dkb_tp_status(tp, NULL);
}

/* Part rows of branch b: p_brand = :b and p_container in (...) and
 * p_size between 1 and MAX_SIZE[b]. */
static dkb_tensor *part_branch(dkb_tp *tp, const dkb_tensor_set *in, int b) {
    int64_t containers[NCONT];
    for (int c = 0; c < NCONT; c++) containers[c] = dkb_set_get_i64(tp, in, CONTAINER_CODE[b][c]);
    dkb_tensor *m = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "p_brand"), DKB_CMP_EQ, dkb_set_get_i64(tp, in, BRAND[b]));
    m = dkb_tp_and(tp, m, dkb_tp_in_i64(tp, dkb_set_get(tp, in, "p_container"), containers, NCONT));
    return dkb_tp_and(tp, m, dkb_tp_between(tp, dkb_set_get(tp, in, "p_size"), 1, MAX_SIZE[b]));
}

/* The qualifying pairs' revenue, l_extendedprice * (1 - l_discount) at scale 4. */
static dkb_tensor *revenue_rows(dkb_tp *tp, const dkb_tensor_set *in) {
    /* common: l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON' */
    int64_t modes[2] = {dkb_set_get_i64(tp, in, "air"), dkb_set_get_i64(tp, in, "air_reg")};
    dkb_tensor *keep = dkb_tp_in_i64(tp, dkb_set_get(tp, in, "l_shipmode"), modes, 2);
    keep = dkb_tp_and(tp, keep,
                      dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "l_shipinstruct"), DKB_CMP_EQ,
                                     dkb_set_get_i64(tp, in, "in_person")));
    dkb_tensor *lkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_partkey"), keep);
    dkb_tensor *qty = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_quantity"), keep);
    dkb_tensor *price = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_extendedprice"), keep);
    dkb_tensor *disc = dkb_tp_compress(tp, dkb_set_get(tp, in, "l_discount"), keep);

    /* each branch's part conditions; the parts of any branch */
    dkb_tensor *branch[NBRANCH], *any = NULL;
    for (int b = 0; b < NBRANCH; b++) {
        branch[b] = part_branch(tp, in, b);
        any = b ? dkb_tp_or(tp, any, branch[b]) : branch[b];
    }
    dkb_tensor *pkey = dkb_tp_compress(tp, dkb_set_get(tp, in, "p_partkey"), any);

    /* p_partkey = l_partkey: those parts build, the filtered lines probe */
    dkb_join_result j = dkb_tp_join(tp, pkey, lkey, DKB_JOIN_INNER);
    qty = dkb_tp_gather(tp, qty, j.probe_idx, 0);

    /* a pair qualifies when its part meets branch b and its quantity lies
     * in [:qb, :qb + 10] */
    dkb_tensor *hit = NULL;
    for (int b = 0; b < NBRANCH; b++) {
        int64_t lo = dkb_set_get_i64(tp, in, QUANTITY[b]);
        dkb_tensor *part_ok = dkb_tp_gather(tp, dkb_tp_compress(tp, branch[b], any), j.build_idx, 0);
        dkb_tensor *h = dkb_tp_and(tp, part_ok, dkb_tp_between(tp, qty, lo, lo + 1000));
        hit = b ? dkb_tp_or(tp, hit, h) : h;
    }
    dkb_tensor *row = dkb_tp_compress(tp, j.probe_idx, hit);
    price = dkb_tp_gather(tp, price, row, 0);
    disc = dkb_tp_gather(tp, disc, row, 0);

    return dkb_tp_arith(tp, price, DKB_OP_MUL, dkb_tp_rsub_i64(tp, 100, 2, disc));
}

static int core(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    /* sum(l_extendedprice * (1 - l_discount)), exact at scale 4; a sum over
     * no rows is NULL: then the output is empty */
    dkb_tensor *revenue = revenue_rows(tp, in);
    dkb__plan_put_aggregate(tp, out, "revenue", dkb_tp_reduce(tp, DKB_AGG_SUM, revenue), revenue);
    return dkb_tp_status(tp, NULL);
}

/* ---- partitioned (partition.h) ---- */

/* Per run of partitions: the exact sum and the rows it covers, added up. */
static int partial(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *revenue = revenue_rows(tp, in);
    dkb_set_put(tp, out, "revenue_sum", dkb_tp_reduce(tp, DKB_AGG_SUM, revenue));
    dkb_set_put(tp, out, "rows", dkb_tp_reduce(tp, DKB_AGG_COUNT, revenue));
    return dkb_tp_status(tp, NULL);
}

/* The sum, NULL when no partition had a row. */
static int final(dkb_tp *tp, const dkb_tensor_set *in, dkb_tensor_set *out) {
    dkb_tensor *some = dkb_tp_cmp_i64(tp, dkb_set_get(tp, in, "rows"), DKB_CMP_GT, 0);
    dkb_set_put(tp, out, "revenue", dkb_tp_compress(tp, dkb_set_get(tp, in, "revenue_sum"), some));
    return dkb_tp_status(tp, NULL);
}

const dkb__part_plan dkb__q19_part = {
    .stream = {"lineitem"},
    .npasses = 1,
    .pass = {{partial, 2, {{"revenue_sum", DKB__MERGE_SUM}, {"rows", DKB__MERGE_SUM}}}},
    .final = final,
};

/* ---- result ---- */

static int finish(dkb_tp *tp, const dkb_tensor_set *out, const dkb_params *p, dkb_result *res) {
    (void)p;
    return dkb__plan_finish_single(tp, out, res, "revenue", DKB_RES_DECIMAL);
}

#define Q19_BRANCH(brand, c1, c2, c3, c4, qty, size)                           \
    "\t(\n"                                                                    \
    "\t\tp_partkey = l_partkey\n"                                              \
    "\t\tand p_brand = '" brand "'\n"                                          \
    "\t\tand p_container in ('" c1 "', '" c2 "', '" c3 "', '" c4 "')\n"        \
    "\t\tand l_quantity >= " qty " and l_quantity <= " qty " + 10\n"           \
    "\t\tand p_size between 1 and " size "\n"                                  \
    "\t\tand l_shipmode in ('AIR', 'AIR REG')\n"                               \
    "\t\tand l_shipinstruct = 'DELIVER IN PERSON'\n"                           \
    "\t)\n"

const dkb_query dkb__q19 = {
    .number = 19,
    .name = "q19",
    .title = "Discounted Revenue",
    .sql = "select\n"
           "\tsum(l_extendedprice* (1 - l_discount)) as revenue\n"
           "from\n"
           "\tlineitem,\n"
           "\tpart\n"
           "where\n"
           Q19_BRANCH(":brand1", "SM CASE", "SM BOX", "SM PACK", "SM PKG", ":quantity1", "5")
           "\tor\n"
           Q19_BRANCH(":brand2", "MED BAG", "MED BOX", "MED PKG", "MED PACK", ":quantity2", "10")
           "\tor\n"
           Q19_BRANCH(":brand3", "LG CASE", "LG BOX", "LG PACK", "LG PKG", ":quantity3", "15")
           ";\n",
    .nparams = 6,
    .params = params,
    .draw = draw,
    .check = check,
    .prepare = prepare,
    .core = core,
    .finish = finish,
};
