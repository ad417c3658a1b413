/* q22.full.c: expert CPU candidate for TPC-H Q22 (Global Sales Opportunity).
 *
 *   select cntrycode, count(*) as numcust, sum(c_acctbal) as totacctbal
 *   from (select substring(c_phone from 1 for 2) as cntrycode, c_acctbal from customer
 *         where substring(c_phone from 1 for 2) in (':code1', ..., ':code7')
 *           and c_acctbal > (select avg(c_acctbal) from customer
 *                            where c_acctbal > 0.00
 *                              and substring(c_phone from 1 for 2) in (':code1', ..., ':code7'))
 *           and not exists (select * from orders where o_custkey = c_custkey)) as custsale
 *   group by cntrycode order by cntrycode;
 *
 * Plan: NOT EXISTS is a byte per custkey - 1 (customer keys are dense
 * 1..N): each thread stores 1 for its range of o_custkey in its own bytes
 * (plain stores, no atomics). The phone's two-digit prefix indexes a
 * 100-entry mask of the wanted codes. In the same parallel region a pass
 * over customer keeps each customer's wanted code (100: none) and sums the
 * positive balances of those codes exactly, branch-free; the average is
 * computed as the baseline does (long double quotient rounded once to
 * double; the balance compared as a double). A last pass counts and sums
 * (exactly, __int128) per code the customers above it without orders (the
 * others into a 101st bin); codes come out in numeric order, which is the
 * string order of two-digit codes.
 *
 * Across ranks (DKB_CANDIDATE_RANKS): orders is split (customer whole on
 * every rank) and a customer's orders are on several ranks, so each rank
 * marks the customers with an order in its share, the marks go as one bitmap
 * over the dense custkeys per rank (with the error flag), gathered in rank
 * order (dkb_ranks_gather) and ORed; rank 0 then does the customer passes on
 * the merged marks and writes.
 */
#include <stdlib.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "dkb/candidate.h"
#include "dkb/cand_ranks.h" /* defines: dkb_ranks_* (the ranks' partials merged) */
#include "dkb/cand_stream.h" /* defines: dkb_stream_begin/next/end (whole columns, or loads under a budget) */
#include "dkb/cand_util.h" /* defines: DKB_BIND_COLS/RES, dkb_put_dec, dkb_put_str */

/* work (rows) below which one thread does it all, as the baseline's backend */
enum { PAR_MIN = 262144 };

enum { NCODE = 7 };
DKB_CANDIDATE_STREAMS; /* runs under a memory budget: orders load by load */
DKB_CANDIDATE_RANKS;   /* runs across ranks: its partials merged through env->comm */

static const char *const CODE[NCODE] = {"code1", "code2", "code3", "code4", "code5", "code6", "code7"};

/* The first two characters of a phone as a number 0..99, or -1. */
static inline int prefix_code(const char *s, int64_t len) {
    if (len < 2 || s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9') return -1;
    return (s[0] - '0') * 10 + (s[1] - '0');
}

/* C's atoi (leading blanks, a sign, digits), kept small: the baseline parses the codes so. */
static int64_t parse_int(const char *s) {
    while (*s == ' ' || (*s >= '\t' && *s <= '\r')) s++;
    int neg = *s == '-';
    if (*s == '-' || *s == '+') s++;
    int64_t v = 0;
    while (*s >= '0' && *s <= '9' && v < 1000000000) v = v * 10 + (*s++ - '0');
    return neg ? -v : v;
}

int dkb_candidate_full(const dkb_cand_db *db, const dkb_cand_params *params, dkb_cand_result *res,
                       const dkb_cand_env *env) {
    const dkb_cand_vec *ckey, *cphone, *cbal, *ocust;
    dkb_cand_res_col *c_code, *c_num, *c_bal;
    if (DKB_BIND_COLS(db, "customer", "c_custkey:i32 c_phone:str c_acctbal:dec2", &ckey, &cphone, &cbal) ||
        DKB_BIND_COLS(db, "orders", "o_custkey:i32", &ocust) |
            DKB_BIND_RES(res, "cntrycode:str numcust:int totacctbal:dec2", &c_code, &c_num, &c_bal))
        return DKB_CAND_EINVAL;
    res->nrows = 0;

    uint8_t want[100] = {0};
    for (int k = 0; k < NCODE; k++) {
        const dkb_cand_param *pc = dkb_cand_param_find(params, CODE[k]);
        if (!pc || !pc->s) return DKB_CAND_EINVAL;
        const int64_t v = parse_int(pc->s);
        if (v >= 0 && v < 100) want[v] = 1;
    }

    const int64_t nc = ckey->n, no = ocust->n; /* no: the whole table's rows (also under a budget) */
    /* threads only for enough work (like the baseline): a region's barrier can wait
     * milliseconds for a second thread on a busy machine */
    const int nt = no < PAR_MIN ? 1 : (env->threads > 0 ? env->threads : 1);
    uint8_t *has = calloc((size_t)nt * (size_t)(nc + 1), 1); /* per thread: a byte per customer */
    uint8_t *code = malloc((size_t)nc + 1);                  /* the wanted code, or 100 */
    if (!has || !code) {
        free(has), free(code);
        return DKB_CAND_ENOMEM;
    }
    const int32_t *ck = ckey->data;
    const int64_t *off = cphone->data, *bal = cbal->data;
    const char *ph = cphone->bytes;
    /* customers with an order: the whole column, or under a memory budget
     * orders load by load (plain stores into the thread's bytes) */
    static const char *const COLS[] = {"o_custkey"};
    int bad = 0;
    dkb_stream st;
    for (dkb_stream_begin(&st, db, env, 1, COLS); dkb_stream_next(&st);) {
        const int32_t *oc = st.cols[0].data;
        const int64_t nol = st.cols[0].n;
        /* this load's rows decide the team (at most the nt there are bytes for) */
        const int team = nol < PAR_MIN ? 1 : nt;
#pragma omp parallel num_threads(team) reduction(| : bad)
        {
            int tid = 0;
#ifdef _OPENMP
            tid = omp_get_thread_num();
#endif
            uint8_t *mine = has + (size_t)tid * (size_t)(nc + 1);
#pragma omp for schedule(static)
            for (int64_t i = 0; i < nol; i++) {
                const uint64_t c = (uint32_t)oc[i] - 1u, in = c < (uint64_t)nc;
                bad |= !in;
                mine[in ? c : (uint64_t)nc] = 1;
            }
        }
    }
    const int rc = dkb_stream_end(&st);
    if (rc) {
        free(has), free(code);
        return rc;
    }
    if (dkb_ranks_many(env)) { /* the ranks' marks, as bitmaps, ORed into thread 0's bytes */
        const int64_t nw = nc / 64 + 1;
        uint64_t *bits = calloc((size_t)nw + 1, sizeof *bits);
        void *every = NULL;
        int64_t ne = 0;
        int mrc = bits ? 0 : DKB_CAND_ENOMEM;
        for (int t = 0; bits && t < nt; t++)
            for (int64_t c = 0; c < nc; c++)
                bits[c >> 6] |= (uint64_t)has[(size_t)t * (size_t)(nc + 1) + (size_t)c] << (c & 63);
        if (bits) bits[nw] = (uint64_t)bad;
        if (!mrc) mrc = dkb_ranks_gather(env, bits, nw + 1, sizeof *bits, &every, &ne);
        free(bits);
        if (mrc || !dkb_ranks_writes(env, res)) {
            dkb_ranks_gather_free(every, NULL);
            free(has), free(code);
            return mrc;
        }
        const uint64_t *all = every;
        memset(has, 0, (size_t)nt * (size_t)(nc + 1));
        for (int64_t r = 0; r + nw + 1 <= ne; r += nw + 1) {
            for (int64_t c = 0; c < nc; c++) has[c] |= (uint8_t)((all[r + (c >> 6)] >> (c & 63)) & 1);
            bad |= all[r + nw] != 0;
        }
        dkb_ranks_gather_free(every, NULL);
    }
    __int128 pos_sum = 0;
    int64_t pos_cnt = 0;

#pragma omp parallel num_threads(nt) reduction(| : bad)
    {
        /* each customer's wanted code, and the positive balances' sum and count */
        __int128 my_sum = 0;
        int64_t my_cnt = 0;
#pragma omp for schedule(static)
        for (int64_t c = 0; c < nc; c++) {
            bad |= ck[c] != c + 1; /* keys are dense 1..N in row order */
            const int k = prefix_code(ph + off[c], off[c + 1] - off[c]);
            const int w = k >= 0 && want[k], pos = w & (bal[c] > 0);
            code[c] = (uint8_t)(w ? k : 100);
            my_sum += bal[c] & -(int64_t)pos;
            my_cnt += pos;
        }
#pragma omp critical
        {
            pos_sum += my_sum;
            pos_cnt += my_cnt;
        }
    }
    if (bad || pos_cnt == 0) { /* avg of no rows is NULL: nothing compares true */
        free(has), free(code);
        return bad ? DKB_CAND_EINTERNAL : 0;
    }
    const double avg = (double)((long double)pos_sum / ((long double)pos_cnt * (long double)100));

    /* per code: count and exact sum of the customers above it without orders */
    int64_t num[101] = {0};
    __int128 sum[101] = {0};
    for (int64_t c = 0; c < nc; c++) {
        int any = 0;
        for (int t = 0; t < nt; t++) any |= has[(size_t)t * (size_t)(nc + 1) + (size_t)c];
        const int k = !any && (double)bal[c] / (double)100 > avg ? code[c] : 100;
        num[k]++;
        sum[k] += bal[c];
    }
    free(has), free(code);
    int64_t r = 0;
    for (int k = 0; k < 100; k++) {
        if (!num[k]) continue;
        const char text[2] = {(char)('0' + k / 10), (char)('0' + k % 10)};
        if (r >= res->cap || dkb_put_str(c_code, r, text, 2)) return DKB_CAND_ECAP;
        c_num->i64[r] = num[k];
        c_num->is_null[r] = 0;
        dkb_put_dec(c_bal, r, sum[k], 2);
        r++;
    }
    res->nrows = r;
    return 0;
}
