/* test_gen_pool.c: the text pool built in parallel from its precomputed
 * starting points equals the pool built serially from the first draw. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gen/gen_internal.h"

int main(void) {
    size_t bytes = DKB_TEXT_POOL_SIZE + DKB_TEXT_POOL_PAD;
    char *serial = malloc(bytes), *parallel = malloc(bytes);
    if (!serial || !parallel) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    int failures = 0;
    dkb__text_pool_build_serial(serial);
    /* The first sentence, as an anchor against accidental changes (the
     * .tbl hash tests are what tie the pool to dbgen's). */
    const char *start = "furiously special foxes haggle furiously blithely ironic deposits. ";
    if (memcmp(serial, start, strlen(start)) != 0) {
        fprintf(stderr, "FAIL: pool starts with \"%.68s\"\n", serial);
        failures++;
    }
    const int threads[] = {1, 3};
    for (size_t i = 0; i < sizeof threads / sizeof threads[0]; i++) {
        memset(parallel, 0, bytes);
        dkb__text_pool_build(parallel, threads[i]);
        for (size_t off = 0; off < DKB_TEXT_POOL_SIZE; off += 1u << 20) {
            size_t n = DKB_TEXT_POOL_SIZE - off < (1u << 20) ? DKB_TEXT_POOL_SIZE - off : 1u << 20;
            if (memcmp(serial + off, parallel + off, n) != 0) {
                size_t j = off;
                while (serial[j] == parallel[j]) j++;
                fprintf(stderr, "FAIL: %d threads: pools differ at byte %zu\n", threads[i], j);
                failures++;
                break;
            }
        }
    }
    free(serial);
    free(parallel);
    if (failures) return 1;
    printf("test_gen_pool: all checks passed\n");
    return 0;
}
