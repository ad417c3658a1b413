/* gen.c: the generator's shared state (scale factor rules, row counts, text
 * pool) and dispatch of unit ranges to the per-table generators. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/date.h"
#include "gen/dists.h"
#include "gen/gen_internal.h"

/* Rows per unit of scale factor (dbgen's base counts). */
#define BASE_PART 200000
#define BASE_SUPP 10000
#define BASE_CUST 150000
#define BASE_ORDERS 1500000

#define HUGE_PAGE (2u << 20)

static void sstr_set(dkb_sstr *d, const char *a, const char *b, const char *c) {
    memset(d, 0, sizeof *d);
    int n = snprintf(d->s, sizeof d->s, "%s%s%s%s%s", a, b ? " " : "", b ? b : "", c ? " " : "",
                     c ? c : "");
    d->len = (uint8_t)n;
}

static int64_t scaled(int64_t base, int int_scale) {
    int64_t n = (int64_t)int_scale * base / 1000;
    return n < 1 ? 1 : n;
}

int dkb__gen_create(double sf, dkb_gen **out, dkb_error *err) {
    return dkb__gen_create_threads(sf, 0, out, err);
}

int dkb__gen_create_threads(double sf, int threads, dkb_gen **out, dkb_error *err) {
    *out = NULL;
    if (!(sf > 0))
        return dkb_fail(err, DKB_ERANGE, "scale factor %g: must be greater than 0", sf);
    if (sf > 100000)
        return dkb_fail(err, DKB_ERANGE, "scale factor %g: dbgen supports at most 100000", sf);
    dkb_gen *g = calloc(1, sizeof *g);
    if (!g) return dkb_fail(err, DKB_ENOMEM, "out of memory");

    /* dbgen: below 1 the base row counts are scaled by int(1000 * sf) / 1000
     * (at least one row) and `scale` stays 1; from 1 up, scale = int(sf). */
    if (sf < 1) {
        int int_scale = (int)(1000 * sf);
        g->scale = 1;
        g->scale_eff = int_scale / 1000.0;
        g->nparts = scaled(BASE_PART, int_scale);
        g->nsupps = scaled(BASE_SUPP, int_scale);
        g->ncusts = scaled(BASE_CUST, int_scale);
        g->units[DKB_TABLE_ORDERS] = scaled(BASE_ORDERS, int_scale);
    } else {
        g->scale = (int64_t)sf;
        g->scale_eff = (double)g->scale;
        g->nparts = BASE_PART * g->scale;
        g->nsupps = BASE_SUPP * g->scale;
        g->ncusts = BASE_CUST * g->scale;
        g->units[DKB_TABLE_ORDERS] = BASE_ORDERS * g->scale;
    }
    g->units[DKB_TABLE_PART] = g->units[DKB_TABLE_PARTSUPP] = g->nparts;
    g->units[DKB_TABLE_SUPPLIER] = g->nsupps;
    g->units[DKB_TABLE_CUSTOMER] = g->ncusts;
    g->units[DKB_TABLE_LINEITEM] = g->units[DKB_TABLE_ORDERS];
    g->units[DKB_TABLE_NATION] = DKB_NNATIONS;
    g->units[DKB_TABLE_REGION] = DKB_NREGIONS;
    g->nclerks = g->scale * 1000 > 1000 ? g->scale * 1000 : 1000;
    g->wide_rng = g->scale >= 30000;
    g->start_day = dkb__days_from_civil(1992, 1, 1);
    g->current_day = dkb__days_from_civil(1995, 6, 17);

    for (int i = 0; i < DKB_NCOLORS; i++) sstr_set(&g->colors[i], dkb__colors[i], NULL, NULL);
    for (int i = 0; i < DKB_NTYPES; i++)
        sstr_set(&g->types[i], dkb__type_syl1[i / 25], dkb__type_syl2[i / 5 % 5],
                 dkb__type_syl3[i % 5]);
    for (int i = 0; i < DKB_NCONTAINERS; i++)
        sstr_set(&g->containers[i], dkb__container_size[i / 8], dkb__container_kind[i % 8], NULL);
    for (int i = 0; i < 5; i++) sstr_set(&g->priorities[i], dkb__priorities[i], NULL, NULL);
    for (int i = 0; i < 4; i++) sstr_set(&g->instructions[i], dkb__instructions[i], NULL, NULL);
    for (int i = 0; i < 7; i++) sstr_set(&g->ship_modes[i], dkb__ship_modes[i], NULL, NULL);
    for (int i = 0; i < 5; i++) sstr_set(&g->segments[i], dkb__segments[i], NULL, NULL);

    /* The pool: on huge pages where the kernel offers them (fewer faults). */
    size_t bytes = (DKB_TEXT_POOL_SIZE + DKB_TEXT_POOL_PAD + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
    void *mem = NULL;
    if (posix_memalign(&mem, HUGE_PAGE, bytes) != 0) {
        free(g);
        return dkb_fail(err, DKB_ENOMEM, "out of memory for the %u MiB text pool",
                        DKB_TEXT_POOL_SIZE >> 20);
    }
#ifdef MADV_HUGEPAGE
    madvise(mem, bytes, MADV_HUGEPAGE);
#endif
    g->pool_mem = mem;
    dkb__text_pool_build(g->pool_mem, threads);
    g->pool = g->pool_mem;
    *out = g;
    return 0;
}

void dkb__gen_destroy(dkb_gen *g) {
    if (!g) return;
    free(g->pool_mem);
    free(g);
}

double dkb__gen_scale(const dkb_gen *g) { return g->scale_eff; }

int64_t dkb__gen_units(const dkb_gen *g, dkb_table_id t) {
    if ((int)t < 0 || t >= DKB_TABLE_COUNT) return 0;
    return g->units[t];
}

int dkb__gen_max_rows_per_unit(dkb_table_id t) {
    switch (t) {
    case DKB_TABLE_PARTSUPP: return 4;
    case DKB_TABLE_LINEITEM: return 7;
    default: return 1;
    }
}

int dkb__gen_reserve(dkb_batch *b, int c, size_t bytes) {
    int rc = dkb__batch_reserve_bytes(b, c, bytes + DKB_GEN_SLACK);
    return rc == DKB_ENOMEM ? DKB_ENOMEM : rc ? DKB_EINVAL : 0;
}

int dkb__gen_fill(const dkb_gen *g, dkb_table_id t, int64_t first, int64_t count, dkb_batch *b) {
    if ((int)t < 0 || t >= DKB_TABLE_COUNT || !b || !b->table || b->table->id != t)
        return DKB_EINVAL;
    if (first < 0 || count < 0 || first > g->units[t] || count > g->units[t] - first)
        return DKB_EINVAL;
    if (b->nrows > b->cap || (uint64_t)count * (uint64_t)dkb__gen_max_rows_per_unit(t) >
                                 (uint64_t)(b->cap - b->nrows))
        return DKB_EINVAL;
    if (count == 0) return 0;
    switch (t) {
    case DKB_TABLE_PART: return dkb__gen_part(g, first, count, b);
    case DKB_TABLE_PARTSUPP: return dkb__gen_partsupp(g, first, count, b);
    case DKB_TABLE_SUPPLIER: return dkb__gen_supplier(g, first, count, b);
    case DKB_TABLE_CUSTOMER: return dkb__gen_customer(g, first, count, b);
    case DKB_TABLE_ORDERS: return dkb__gen_orders(g, first, count, b);
    case DKB_TABLE_LINEITEM: return dkb__gen_lineitem(g, first, count, b);
    case DKB_TABLE_NATION: return dkb__gen_nation(g, first, count, b);
    case DKB_TABLE_REGION: return dkb__gen_region(g, first, count, b);
    default: return DKB_EINVAL;
    }
}
