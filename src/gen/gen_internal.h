/* gen_internal.h: what the per-table generators share: the generator state,
 * dbgen's text and string helpers, and direct writes into batch columns. */
#ifndef DKB_GEN_INTERNAL_H
#define DKB_GEN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "gen/gen.h"
#include "gen/rng.h"

/* dbgen's text pool: 300 MiB of generated sentences; comments are slices. */
#define DKB_TEXT_POOL_SIZE (300u * 1024u * 1024u)
/* Bytes readable past the pool's end and writable past a string's end (the
 * helpers below copy in whole blocks of up to 48 bytes). */
#define DKB_GEN_SLACK 64

/* Comment and address length limits: dbgen's average length * 0.4 and * 1.6. */
#define DKB_TEXT_MIN(avg) ((int)((avg) * 0.4))
#define DKB_TEXT_MAX(avg) ((int)((avg) * 1.6))

/* A short constant string with its length, copied as a whole 32 bytes. */
typedef struct dkb_sstr {
    char s[31];
    uint8_t len;
} dkb_sstr;

struct dkb_gen {
    double scale_eff;            /* the scale factor in effect */
    int64_t scale;               /* dbgen's integer scale (1 below SF 1) */
    int64_t units[DKB_TABLE_COUNT];
    int64_t nparts, nsupps, ncusts; /* key ranges */
    int64_t nclerks;
    int wide_rng;                /* scale >= 30000: 64-bit o_custkey/l_partkey draws */
    int32_t start_day;           /* 1992-01-01, dbgen's first date, in days since 1970 */
    int32_t current_day;         /* 1995-06-17: shipped and returned up to this day */
    char *pool_mem;              /* the allocation holding the pool */
    const char *pool;            /* DKB_TEXT_POOL_SIZE bytes, readable beyond */
    dkb_sstr colors[92];         /* p_name words */
    dkb_sstr types[150];         /* p_type values */
    dkb_sstr containers[40];     /* p_container values */
    dkb_sstr priorities[5], instructions[4], ship_modes[7], segments[5];
};

/* Build the text pool into pool (DKB_TEXT_POOL_SIZE bytes, writable up to
 * DKB_TEXT_POOL_PAD bytes beyond) on `threads` threads (< 1: OpenMP's
 * default). The serial version builds it from the first draw on, without the
 * precomputed parallel starting points. */
#define DKB_TEXT_POOL_PAD (1u << 16)
void dkb__text_pool_build(char *pool, int threads);
void dkb__text_pool_build_serial(char *pool);

/* Per-table generators: units [first, first + count), range already checked. */
int dkb__gen_part(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_partsupp(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_supplier(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_customer(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_orders(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_lineitem(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_nation(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);
int dkb__gen_region(const dkb_gen *g, int64_t first, int64_t count, dkb_batch *b);

/* ---- comments and other strings ---- */

/* A comment: dbgen's dbg_text picks a slice of the pool, offset then length
 * (2 draws). Generators compute the slices of upcoming rows first and
 * prefetch them: the pool is far larger than any cache, so each slice is a
 * memory access that would otherwise stall. */
typedef struct dkb_slice {
    uint32_t off, len;
} dkb_slice;

/* Rows (units) whose slices are computed and prefetched in one go. */
#define DKB_PLAN_UNITS 32

static inline dkb_slice dkb__text_slice(uint32_t *x, int min, int max) {
    dkb_slice s;
    s.off = (uint32_t)dkb__pm_draw(x, 0, (int64_t)DKB_TEXT_POOL_SIZE - max);
    s.len = (uint32_t)dkb__pm_draw(x, min, max);
    return s;
}

static inline void dkb__slice_prefetch(const dkb_gen *g, dkb_slice s) {
    const char *p = g->pool + s.off;
    for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < (uintptr_t)(p + s.len); a += 64)
        __builtin_prefetch((const void *)a);
}

/* Copy a slice to dst (which has DKB_GEN_SLACK bytes of room); its length.
 * One 48-byte block covers most comments without a data-dependent loop. */
static inline size_t dkb__slice_copy(const dkb_gen *g, dkb_slice s, char *dst) {
    const char *src = g->pool + s.off;
    memcpy(dst, src, 48);
    for (size_t i = 48; i < s.len; i += 16) memcpy(dst + i, src + i, 16);
    return s.len;
}

/* The comment slices of a range of units, planned (drawn and prefetched) one
 * block of DKB_PLAN_UNITS units ahead of their use. */
#define DKB_PLAN_MAX_PER_UNIT 7
typedef struct dkb_plan_block {
    int units;
    uint8_t count[DKB_PLAN_UNITS];
    uint16_t start[DKB_PLAN_UNITS];
    dkb_slice slice[DKB_PLAN_UNITS * DKB_PLAN_MAX_PER_UNIT];
} dkb_plan_block;

typedef struct dkb_plan {
    const dkb_gen *g;
    dkb_stream cmnt;     /* the comment stream at the next unit to plan */
    dkb_stream lines;    /* per_unit == 0: draws each unit's slice count (1..7) */
    int per_unit;        /* slices per unit, or 0 */
    int min, max;        /* comment length range */
    int64_t unplanned;   /* units left to plan */
    int cur, pos;        /* block being consumed, its next unit */
    dkb_plan_block blk[2];
} dkb_plan;

/* Plan comments of stream `stream` for units [first, first + count): per_unit
 * slices each, or (per_unit 0, lineitem) as many as dbgen's line count
 * stream gives the unit. */
void dkb__plan_init(dkb_plan *p, const dkb_gen *g, int stream, int64_t first, int64_t count,
                    int per_unit, int min, int max);
void dkb__plan_block(dkb_plan *p, dkb_plan_block *b);

/* The slices of the next unit; *n gets their number. */
static inline const dkb_slice *dkb__plan_next(dkb_plan *p, int *n) {
    if (p->pos == p->blk[p->cur].units) {
        p->cur ^= 1;
        p->pos = 0;
        dkb__plan_block(p, &p->blk[p->cur ^ 1]);
    }
    const dkb_plan_block *b = &p->blk[p->cur];
    int j = p->pos++;
    *n = b->count[j];
    return b->slice + b->start[j];
}

/* A comment drawn and copied at once (for tables too small to plan). */
static inline size_t dkb__gen_text(const dkb_gen *g, uint32_t *x, int min, int max, char *dst) {
    return dkb__slice_copy(g, dkb__text_slice(x, min, max), dst);
}

/* dbgen's a_rnd: random characters of length in [min, max], five per draw
 * after the length draw. Writes up to 4 bytes past the returned length. */
static inline size_t dkb__gen_vstr(uint32_t *x, int min, int max, char *dst) {
    static const char alnum[65] =
        "0123456789abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ,";
    int64_t len = dkb__pm_draw(x, min, max);
    for (int64_t i = 0; i < len; i += 5) {
        uint32_t bits = dkb__pm_draw_bits(x);
        for (int k = 0; k < 5; k++, bits >>= 6) dst[i + k] = alnum[bits & 63];
    }
    return (size_t)len;
}

/* Decimal digits of v, at least `width` of them (zero padded). Returns the
 * end of the written text. */
static inline char *dkb__put_zpad(char *p, uint64_t v, int width) {
    char tmp[24];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n < width) tmp[n++] = '0';
    while (n) *p++ = tmp[--n];
    return p;
}

/* dbgen's "<tag>%09d" names (Customer#, Supplier#, Clerk#): the tag's plen
 * bytes, then v zero padded to 9 digits. Returns the length written. */
static inline size_t dkb__put_tagged(char *dst, const char *tag, size_t plen, int64_t v) {
    memcpy(dst, tag, plen);
    return (size_t)(dkb__put_zpad(dst + plen, (uint64_t)v, 9) - dst);
}

/* dbgen's phone number for nation n: "CC-AAA-EEE-NNNN" (3 draws). */
static inline void dkb__gen_phone(uint32_t *x, int64_t nation, char *dst) {
    int64_t a = dkb__pm_draw(x, 100, 999);
    int64_t e = dkb__pm_draw(x, 100, 999);
    int64_t n = dkb__pm_draw(x, 1000, 9999);
    char *p = dkb__put_zpad(dst, (uint64_t)(10 + nation % 90), 2);
    *p++ = '-';
    p = dkb__put_zpad(p, (uint64_t)a, 3);
    *p++ = '-';
    p = dkb__put_zpad(p, (uint64_t)e, 3);
    *p++ = '-';
    dkb__put_zpad(p, (uint64_t)n, 4);
}
#define DKB_PHONE_LEN 15

/* dbgen's retail price of part p, in cents. */
static inline int64_t dkb__retail_price(int64_t p) {
    return 90000 + (p / 10) % 20001 + (p % 1000) * 100;
}

/* Supplier number s (0..3) of part p: dbgen's part/supplier bridge. */
static inline int64_t dkb__part_supp(int64_t p, int64_t s, int64_t nsupps) {
    return (p + s * (nsupps / 4 + (p - 1) / nsupps)) % nsupps + 1;
}

/* ---- batch columns ---- */

/* Make room for `bytes` more bytes (plus slack) in string column c. */
int dkb__gen_reserve(dkb_batch *b, int c, size_t bytes);

/* Appends to a string column, kept in locals during a fill (no reloads of
 * the batch after every byte written): take it after reserving room, put
 * rows in order, then hand it back with dkb__strw_done. */
typedef struct dkb_strw {
    char *bytes;
    uint32_t *off;
    size_t len;
} dkb_strw;

static inline dkb_strw dkb__strw(dkb_batch *b, int c) {
    dkb_strw w = {b->col[c].bytes, b->col[c].off, b->col[c].bytes_len};
    return w;
}

static inline void dkb__strw_done(dkb_batch *b, int c, const dkb_strw *w) {
    b->col[c].bytes_len = w->len;
}

/* Where the next row's bytes go. */
static inline char *dkb__strw_tail(const dkb_strw *w) { return w->bytes + w->len; }

/* Finish row `row` after writing n bytes at the tail. */
static inline void dkb__strw_commit(dkb_strw *w, size_t row, size_t n) {
    w->len += n;
    w->off[row + 1] = (uint32_t)w->len;
}

static inline void dkb__strw_put(dkb_strw *w, size_t row, const char *s, size_t n) {
    memcpy(dkb__strw_tail(w), s, n);
    dkb__strw_commit(w, row, n);
}

/* A dkb_sstr, as one 32-byte copy (room for 32 bytes must be reserved). */
static inline void dkb__strw_put_sstr(dkb_strw *w, size_t row, const dkb_sstr *s) {
    memcpy(dkb__strw_tail(w), s, sizeof *s);
    dkb__strw_commit(w, row, s->len);
}

static inline void dkb__strw_put_char(dkb_strw *w, size_t row, char ch) {
    w->bytes[w->len] = ch;
    dkb__strw_commit(w, row, 1);
}

/* A table's streams, positioned at row `first` / moved on to the next row. */
static inline void dkb__streams_at(dkb_stream *st, const int *ids, int n, int64_t first) {
    for (int s = 0; s < n; s++) dkb__stream_at(&st[s], ids[s], first);
}

static inline void dkb__streams_next_row(dkb_stream *st, int n) {
    for (int s = 0; s < n; s++) dkb__stream_next_row(&st[s]);
}

/* ---- the columns customer and supplier share ----
 * dbgen's mk_cust and mk_supp start alike: key, "<tag>%09d" name, a_rnd
 * address, nation, phone (from the nation), account balance, each drawn from
 * the table's own stream. Both tables lay these out as columns 0..5 and list
 * the four streams first, in this order. */
enum { DKB_PARTY_KEY, DKB_PARTY_NAME, DKB_PARTY_ADDRESS, DKB_PARTY_NATION, DKB_PARTY_PHONE,
       DKB_PARTY_ACCTBAL, DKB_PARTY_NCOLS };
enum { DKB_PARTY_ST_ADDR, DKB_PARTY_ST_NATION, DKB_PARTY_ST_PHONE, DKB_PARTY_ST_ACCTBAL,
       DKB_PARTY_NSTREAMS };
#define DKB_PARTY_ADDR_MIN DKB_TEXT_MIN(25)
#define DKB_PARTY_ADDR_MAX DKB_TEXT_MAX(25)
#define DKB_PARTY_TAG_LEN 9 /* "Customer#", "Supplier#" */

typedef struct dkb_party_w {
    int64_t *key, *nation, *acctbal;
    dkb_strw name, addr, phone;
} dkb_party_w;

/* Room for n rows of the string columns (the address: a_rnd writes up to 4
 * bytes past its length). */
static inline int dkb__party_reserve(dkb_batch *b, size_t n) {
    int rc = dkb__gen_reserve(b, DKB_PARTY_NAME, n * 32);
    if (!rc) rc = dkb__gen_reserve(b, DKB_PARTY_ADDRESS, n * (DKB_PARTY_ADDR_MAX + 5));
    if (!rc) rc = dkb__gen_reserve(b, DKB_PARTY_PHONE, n * DKB_PHONE_LEN);
    return rc;
}

static inline dkb_party_w dkb__party_w(dkb_batch *b) {
    dkb_party_w w = {b->col[DKB_PARTY_KEY].v,        b->col[DKB_PARTY_NATION].v,
                     b->col[DKB_PARTY_ACCTBAL].v,    dkb__strw(b, DKB_PARTY_NAME),
                     dkb__strw(b, DKB_PARTY_ADDRESS), dkb__strw(b, DKB_PARTY_PHONE)};
    return w;
}

/* Row `row`, key `key`: st holds the four streams at the row's start. */
static inline void dkb__party_row(dkb_party_w *w, const dkb_stream *st, const char *tag,
                                  int64_t key, size_t row) {
    uint32_t x;
    w->key[row] = key;
    dkb__strw_commit(&w->name, row,
                     dkb__put_tagged(dkb__strw_tail(&w->name), tag, DKB_PARTY_TAG_LEN, key));

    x = st[DKB_PARTY_ST_ADDR].row;
    size_t alen =
        dkb__gen_vstr(&x, DKB_PARTY_ADDR_MIN, DKB_PARTY_ADDR_MAX, dkb__strw_tail(&w->addr));
    dkb__strw_commit(&w->addr, row, alen);

    x = st[DKB_PARTY_ST_NATION].row;
    int64_t nation = dkb__pm_draw(&x, 0, 24);
    w->nation[row] = nation;

    x = st[DKB_PARTY_ST_PHONE].row;
    dkb__gen_phone(&x, nation, dkb__strw_tail(&w->phone));
    dkb__strw_commit(&w->phone, row, DKB_PHONE_LEN);

    x = st[DKB_PARTY_ST_ACCTBAL].row;
    w->acctbal[row] = dkb__pm_draw(&x, -99999, 999999);
}

static inline void dkb__party_done(dkb_batch *b, const dkb_party_w *w) {
    dkb__strw_done(b, DKB_PARTY_NAME, &w->name);
    dkb__strw_done(b, DKB_PARTY_ADDRESS, &w->addr);
    dkb__strw_done(b, DKB_PARTY_PHONE, &w->phone);
}

#endif
