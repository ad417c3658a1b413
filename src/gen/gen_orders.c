/* gen_orders.c: the orders and lineitem tables. One unit is one order; its
 * 1..7 line items come from the lineitem streams, which advance 7 draws per
 * order. An order's total price and status depend on its lines, so orders
 * generation draws the few line columns those need. */
#include "gen/gen_internal.h"

enum { O_KEY, O_CUST, O_STATUS, O_TOTAL, O_DATE, O_PRIO, O_CLERK, O_SHIPPRIO, O_COMMENT };
enum { L_ORDER, L_PART, L_SUPP, L_LINENO, L_QTY, L_EPRICE, L_DISC, L_TAX, L_RFLAG, L_STATUS,
       L_SHIPDATE, L_COMMITDATE, L_RECEIPTDATE, L_INSTRUCT, L_MODE, L_COMMENT };

#define O_CMNT_MIN DKB_TEXT_MIN(49)
#define O_CMNT_MAX DKB_TEXT_MAX(49)
#define L_CMNT_MIN DKB_TEXT_MIN(27)
#define L_CMNT_MAX DKB_TEXT_MAX(27)
#define MAX_LINES 7
#define ORDER_DAYS 2406 /* order dates: the first 2406 days from 1992-01-01 */
#define CUST_MORTALITY 3 /* customers whose key is a multiple of 3 have no orders */

/* Order number i (1-based) -> its key: dbgen leaves 3 of every 4 blocks of
 * 8 keys unused ("sparse" keys): bits 3-4 are zero. */
static inline int64_t order_key(int64_t i) { return ((i >> 3) << 5) | (i & 7); }

/* l_partkey's stream, Park-Miller or (scale >= 30000) 64-bit. */
typedef struct partkey_stream {
    dkb_stream pm;
    uint64_t wide_row;
    int wide;
} partkey_stream;

/* dbgen itself (serial) cannot skip this stream at scale >= 30000: after
 * each order it advances the 64-bit state with the 31-bit skip function,
 * which makes every order depend on all before it. Here the 64-bit stream
 * advances 7 draws per order instead, so l_partkey (and what derives from
 * it) differs from dbgen's there; all scale factors below 30000 are exact. */
static void partkey_at(partkey_stream *s, const dkb_gen *g, int64_t order) {
    s->wide = g->wide_rng;
    dkb__stream_at(&s->pm, DKB_S_L_PKEY, order);
    s->wide_row = s->wide ? dkb__lcg64_skip(dkb__stream_seed(DKB_S_L_PKEY),
                                            (uint64_t)order * MAX_LINES)
                          : 0;
}

static void partkey_next_row(partkey_stream *s) {
    if (s->wide)
        s->wide_row = dkb__lcg64_skip(s->wide_row, MAX_LINES);
    else
        dkb__stream_next_row(&s->pm);
}

/* Draws from one order's partkey stream. */
typedef struct partkey_draws {
    uint32_t x;
    uint64_t wx;
    int wide;
} partkey_draws;

static inline partkey_draws partkey_start(const partkey_stream *s) {
    return (partkey_draws){s->pm.row, s->wide_row, s->wide};
}

static inline int64_t partkey_draw(partkey_draws *d, int64_t nparts) {
    return d->wide ? dkb__lcg64_draw(&d->wx, 1, nparts) : dkb__pm_draw(&d->x, 1, nparts);
}

int dkb__gen_orders(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count;
    if ((rc = dkb__gen_reserve(b, O_STATUS, n)) || (rc = dkb__gen_reserve(b, O_PRIO, n * 32)) ||
        (rc = dkb__gen_reserve(b, O_CLERK, n * 32)) ||
        (rc = dkb__gen_reserve(b, O_COMMENT, n * O_CMNT_MAX)))
        return rc;
    dkb_stream date, lines, cust, prio, clerk, qty, disc, tax, ship;
    partkey_stream pkey;
    dkb__stream_at(&date, DKB_S_O_ODATE, first);
    dkb__stream_at(&lines, DKB_S_O_LCNT, first);
    dkb__stream_at(&cust, DKB_S_O_CKEY, first);
    dkb__stream_at(&prio, DKB_S_O_PRIO, first);
    dkb__stream_at(&clerk, DKB_S_O_CLRK, first);
    dkb__stream_at(&qty, DKB_S_L_QTY, first);
    dkb__stream_at(&disc, DKB_S_L_DCNT, first);
    dkb__stream_at(&tax, DKB_S_L_TAX, first);
    dkb__stream_at(&ship, DKB_S_L_SDTE, first);
    partkey_at(&pkey, g, first);
    /* o_custkey's 64-bit stream (scale >= 30000) is one draw per order. */
    uint64_t wide_cust =
        g->wide_rng ? dkb__lcg64_skip(dkb__stream_seed(DKB_S_O_CKEY), (uint64_t)first) : 0;
    const int64_t shipped_max = g->current_day - g->start_day; /* last "shipped" day index */
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_O_CMNT, first, count, 1, O_CMNT_MIN, O_CMNT_MAX);

    int64_t *const okey = b->col[O_KEY].v, *const ocust = b->col[O_CUST].v;
    int64_t *const ototal = b->col[O_TOTAL].v, *const odate = b->col[O_DATE].v;
    int64_t *const oship = b->col[O_SHIPPRIO].v;
    dkb_strw status_w = dkb__strw(b, O_STATUS), prio_w = dkb__strw(b, O_PRIO);
    dkb_strw clerk_w = dkb__strw(b, O_CLERK), cmnt_w = dkb__strw(b, O_COMMENT);
    size_t row = b->nrows;
    for (int64_t i = first + 1; i <= first + count; i++, row++) {
        uint32_t x;
        int ns;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &ns);
        okey[row] = order_key(i);

        int64_t ck;
        if (g->wide_rng) {
            ck = dkb__lcg64_draw(&wide_cust, 1, g->ncusts);
        } else {
            x = cust.row;
            ck = dkb__pm_draw(&x, 1, g->ncusts);
        }
        for (int64_t delta = 1; ck % CUST_MORTALITY == 0; delta = -delta) {
            ck += delta;
            if (ck > g->ncusts) ck = g->ncusts;
        }
        ocust[row] = ck;

        x = date.row;
        int64_t day = dkb__pm_draw(&x, 0, ORDER_DAYS - 1);
        odate[row] = g->start_day + day;

        x = prio.row;
        dkb__strw_put_sstr(&prio_w, row, &g->priorities[dkb__pm_draw(&x, 1, 5) - 1]);

        x = clerk.row;
        int64_t ck_num = dkb__pm_draw(&x, 1, g->nclerks);
        dkb__strw_commit(&clerk_w, row,
                         dkb__put_tagged(dkb__strw_tail(&clerk_w), "Clerk#", 6, ck_num));

        oship[row] = 0;
        dkb__strw_commit(&cmnt_w, row, dkb__slice_copy(g, cmnt[0], dkb__strw_tail(&cmnt_w)));

        x = lines.row;
        int64_t nl = dkb__pm_draw(&x, 1, MAX_LINES);
        uint32_t xq = qty.row, xd = disc.row, xt = tax.row, xs = ship.row;
        partkey_draws pk = partkey_start(&pkey);
        int64_t total = 0, shipped = 0;
        for (int64_t l = 0; l < nl; l++) {
            int64_t q = dkb__pm_draw(&xq, 1, 50);
            int64_t d = dkb__pm_draw(&xd, 0, 10);
            int64_t t = dkb__pm_draw(&xt, 0, 8);
            int64_t price = dkb__retail_price(partkey_draw(&pk, g->nparts)) * q;
            total += price * (100 - d) / 100 * (100 + t) / 100;
            shipped += day + dkb__pm_draw(&xs, 1, 121) <= shipped_max;
        }
        ototal[row] = total;
        dkb__strw_put_char(&status_w, row, shipped == nl ? 'F' : shipped > 0 ? 'P' : 'O');

        dkb__stream_next_row(&date);
        dkb__stream_next_row(&lines);
        dkb__stream_next_row(&cust);
        dkb__stream_next_row(&prio);
        dkb__stream_next_row(&clerk);
        dkb__stream_next_row(&qty);
        dkb__stream_next_row(&disc);
        dkb__stream_next_row(&tax);
        dkb__stream_next_row(&ship);
        partkey_next_row(&pkey);
    }
    dkb__strw_done(b, O_STATUS, &status_w);
    dkb__strw_done(b, O_PRIO, &prio_w);
    dkb__strw_done(b, O_CLERK, &clerk_w);
    dkb__strw_done(b, O_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}

enum { ST_QTY, ST_DISC, ST_TAX, ST_INSTR, ST_MODE, ST_SUPP, ST_SHIP, ST_COMMIT, ST_RECEIPT,
       ST_RFLAG, ST_DATE, ST_COUNT };
static const int line_stream_ids[ST_COUNT] = {
    DKB_S_L_QTY,  DKB_S_L_DCNT, DKB_S_L_TAX,  DKB_S_L_SHIP, DKB_S_L_SMODE, DKB_S_L_SKEY,
    DKB_S_L_SDTE, DKB_S_L_CDTE, DKB_S_L_RDTE, DKB_S_L_RFLG, DKB_S_O_ODATE,
};

int dkb__gen_lineitem(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b) {
    int rc;
    size_t n = (size_t)count * MAX_LINES;
    if ((rc = dkb__gen_reserve(b, L_RFLAG, n)) || (rc = dkb__gen_reserve(b, L_STATUS, n)) ||
        (rc = dkb__gen_reserve(b, L_INSTRUCT, n * 32)) ||
        (rc = dkb__gen_reserve(b, L_MODE, n * 32)) ||
        (rc = dkb__gen_reserve(b, L_COMMENT, n * L_CMNT_MAX)))
        return rc;
    dkb_stream st[ST_COUNT];
    for (int s = 0; s < ST_COUNT; s++) dkb__stream_at(&st[s], line_stream_ids[s], first);
    partkey_stream pkey;
    partkey_at(&pkey, g, first);
    const int32_t start = g->start_day, current = g->current_day;
    const int64_t nparts = g->nparts, nsupps = g->nsupps;
    /* The line count of each order comes with its comment slices. */
    dkb_plan plan;
    dkb__plan_init(&plan, g, DKB_S_L_CMNT, first, count, 0, L_CMNT_MIN, L_CMNT_MAX);

    int64_t *const okey = b->col[L_ORDER].v, *const opart = b->col[L_PART].v;
    int64_t *const osupp = b->col[L_SUPP].v, *const oline = b->col[L_LINENO].v;
    int64_t *const oqty = b->col[L_QTY].v, *const oprice = b->col[L_EPRICE].v;
    int64_t *const odisc = b->col[L_DISC].v, *const otax = b->col[L_TAX].v;
    int64_t *const oship = b->col[L_SHIPDATE].v, *const ocommit = b->col[L_COMMITDATE].v;
    int64_t *const oreceipt = b->col[L_RECEIPTDATE].v;
    dkb_strw flag_w = dkb__strw(b, L_RFLAG), status_w = dkb__strw(b, L_STATUS);
    dkb_strw instr_w = dkb__strw(b, L_INSTRUCT), mode_w = dkb__strw(b, L_MODE);
    dkb_strw cmnt_w = dkb__strw(b, L_COMMENT);
    size_t row = b->nrows;
    for (int64_t i = first + 1; i <= first + count; i++) {
        const int64_t key = order_key(i);
        uint32_t x = st[ST_DATE].row;
        const int64_t oday = start + dkb__pm_draw(&x, 0, ORDER_DAYS - 1);
        int nl;
        const dkb_slice *cmnt = dkb__plan_next(&plan, &nl);
        uint32_t xq = st[ST_QTY].row, xd = st[ST_DISC].row, xt = st[ST_TAX].row;
        uint32_t xi = st[ST_INSTR].row, xm = st[ST_MODE].row, xs = st[ST_SUPP].row;
        uint32_t xsh = st[ST_SHIP].row, xc = st[ST_COMMIT].row, xr = st[ST_RECEIPT].row;
        uint32_t xf = st[ST_RFLAG].row;
        partkey_draws pk = partkey_start(&pkey);
        for (int l = 1; l <= nl; l++, row++) {
            okey[row] = key;
            oline[row] = l;
            const int64_t q = dkb__pm_draw(&xq, 1, 50);
            oqty[row] = q * 100;
            odisc[row] = dkb__pm_draw(&xd, 0, 10);
            otax[row] = dkb__pm_draw(&xt, 0, 8);
            dkb__strw_put_sstr(&instr_w, row, &g->instructions[dkb__pm_draw(&xi, 1, 4) - 1]);
            dkb__strw_put_sstr(&mode_w, row, &g->ship_modes[dkb__pm_draw(&xm, 1, 7) - 1]);
            size_t clen = dkb__slice_copy(g, cmnt[l - 1], dkb__strw_tail(&cmnt_w));
            dkb__strw_commit(&cmnt_w, row, clen);
            const int64_t part = partkey_draw(&pk, nparts);
            opart[row] = part;
            osupp[row] = dkb__part_supp(part, dkb__pm_draw(&xs, 0, 3), nsupps);
            oprice[row] = dkb__retail_price(part) * q;
            const int64_t ship = oday + dkb__pm_draw(&xsh, 1, 121);
            const int64_t receipt = ship + dkb__pm_draw(&xr, 1, 30);
            oship[row] = ship;
            ocommit[row] = oday + dkb__pm_draw(&xc, 30, 90);
            oreceipt[row] = receipt;
            dkb__strw_put_char(&flag_w, row,
                               receipt <= current ? "RA"[dkb__pm_draw(&xf, 1, 2) - 1] : 'N');
            dkb__strw_put_char(&status_w, row, ship <= current ? 'F' : 'O');
        }
        for (int s = 0; s < ST_COUNT; s++) dkb__stream_next_row(&st[s]);
        partkey_next_row(&pkey);
    }
    dkb__strw_done(b, L_RFLAG, &flag_w);
    dkb__strw_done(b, L_STATUS, &status_w);
    dkb__strw_done(b, L_INSTRUCT, &instr_w);
    dkb__strw_done(b, L_MODE, &mode_w);
    dkb__strw_done(b, L_COMMENT, &cmnt_w);
    b->nrows = row;
    return 0;
}
