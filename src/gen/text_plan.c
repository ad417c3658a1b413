/* text_plan.c: planning comment slices ahead of use (see dkb_plan in
 * gen_internal.h), so that their pool bytes are fetched from memory while
 * earlier rows are generated. */
#include "gen/gen_internal.h"

void dkb__plan_block(dkb_plan *p, dkb_plan_block *b) {
    int units = p->unplanned < DKB_PLAN_UNITS ? (int)p->unplanned : DKB_PLAN_UNITS;
    int k = 0;
    for (int j = 0; j < units; j++) {
        int n = p->per_unit;
        if (n == 0) {
            uint32_t y = p->lines.row;
            n = (int)dkb__pm_draw(&y, 1, DKB_PLAN_MAX_PER_UNIT);
            dkb__stream_next_row(&p->lines);
        }
        b->count[j] = (uint8_t)n;
        b->start[j] = (uint16_t)k;
        uint32_t x = p->cmnt.row;
        for (int i = 0; i < n; i++, k++) {
            b->slice[k] = dkb__text_slice(&x, p->min, p->max);
            dkb__slice_prefetch(p->g, b->slice[k]);
        }
        dkb__stream_next_row(&p->cmnt);
    }
    b->units = units;
    p->unplanned -= units;
}

void dkb__plan_init(dkb_plan *p, const dkb_gen *g, int stream, int64_t first, int64_t count,
                    int per_unit, int min, int max) {
    p->g = g;
    dkb__stream_at(&p->cmnt, stream, first);
    dkb__stream_at(&p->lines, DKB_S_O_LCNT, first);
    p->per_unit = per_unit;
    p->min = min;
    p->max = max;
    p->unplanned = count;
    p->cur = 0;
    p->pos = 0;
    dkb__plan_block(p, &p->blk[0]);
    dkb__plan_block(p, &p->blk[1]);
}
