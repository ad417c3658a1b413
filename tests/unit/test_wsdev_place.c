/* test_wsdev_place.c: where the CUDA loader puts a load in its device
 * region beside the loads still held (dkb__wsdev_place,
 * src/harness/worker_stream_cuda.h): in a gap, never over a load held,
 * never past the region; with two loads held in turn (the overlapped walk
 * of dkb/cand_stream.h) every next load fits whatever the sizes, as long
 * as any two fit together: the walk that failed on the H200 at SF 100
 * (loads of slightly different sizes, a region of 1.25 x load_limit). */
#include <stdint.h>
#include <stdio.h>

#include "harness/worker_stream_cuda.h"
#include "test_check.h"

static int overlaps(size_t a, size_t al, size_t b, size_t bl) { return a < b + bl && b < a + al; }

int main(void) {
    size_t off[4] = {0}, len[4] = {0}, at = 0;
    /* nothing held: the region's start */
    CHECK(dkb__wsdev_place(off, len, 0, 1000, 100, 8, &at) && at == 0, "empty region: at 0 (%zu)", at);
    CHECK(!dkb__wsdev_place(off, len, 0, 1000, 1001, 8, &at), "a load larger than the region does not fit");
    /* one held at the start: the next goes to the far end */
    off[0] = 0, len[0] = 400;
    CHECK(dkb__wsdev_place(off, len, 1, 1000, 400, 8, &at) && at == 600, "second load at the top (%zu)", at);
    /* one held at the top: the next goes to the start */
    off[0] = 600, len[0] = 400;
    CHECK(dkb__wsdev_place(off, len, 1, 1000, 450, 8, &at) && at == 0, "after the top one: at 0 (%zu)", at);
    /* no gap holds it */
    off[0] = 300, len[0] = 400;
    CHECK(!dkb__wsdev_place(off, len, 1, 1000, 350, 8, &at), "350 bytes fit neither gap of 300");
    CHECK(dkb__wsdev_place(off, len, 1, 1000, 300, 8, &at) && (at == 0 || at == 700), "an exact gap (%zu)", at);

    /* the overlapped walk: loads of varying size, each loaded while the one
     * before is held, then that one released; any two fit together
     * (a + b <= limit) in a region of limit * 1.25 */
    const size_t limit = 8000, size = limit + limit / 4;
    size_t held_off = 0, held_len = 0;
    int nheld = 0, ok = 1;
    unsigned x = 12345;
    for (int step = 0; step < 2000 && ok; step++) {
        x = x * 1103515245u + 12345u;
        size_t want = limit / 2 - 200 + (x >> 8) % 400; /* around half the limit, either side */
        if (nheld && held_len + want > limit) want = limit - held_len;
        off[0] = held_off, len[0] = held_len;
        size_t got = 0;
        if (!dkb__wsdev_place(off, len, nheld, size, want, 8, &got)) {
            ok = 0;
            fprintf(stderr, "step %d: %zu bytes beside [%zu, %zu) did not fit %zu\n", step, want, held_off,
                    held_off + held_len, size);
            break;
        }
        if (got + want > size || (nheld && overlaps(got, want, held_off, held_len))) {
            ok = 0;
            fprintf(stderr, "step %d: placed [%zu, %zu) over a load or past the region\n", step, got, got + want);
        }
        held_off = got, held_len = want, nheld = 1; /* the earlier one released */
    }
    CHECK(ok, "2000 overlapped loads of varying sizes each fit beside the one held");

    /* several held: never over one of them */
    off[0] = 100, len[0] = 100, off[1] = 500, len[1] = 50, off[2] = 800, len[2] = 150;
    ok = 1;
    for (size_t want = 1; want <= 400 && ok; want += 7) {
        if (!dkb__wsdev_place(off, len, 3, 1000, want, 1, &at)) {
            ok = want > 300; /* the largest gap, [200, 500), holds 300 */
            continue;
        }
        for (int i = 0; i < 3; i++)
            if (overlaps(at, want, off[i], len[i]) || at + want > 1000) ok = 0;
    }
    CHECK(ok, "three held: placements avoid them and stay in the region");
    if (failures) fprintf(stderr, "%d failure(s)\n", failures);
    else printf("test_wsdev_place: ok\n");
    return failures != 0;
}
