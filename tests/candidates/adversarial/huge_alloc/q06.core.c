/* huge_alloc (core mode): allocates 64 MiB blocks without end, touching every
 * page so each becomes resident, "to build a lookup table". Expected:
 * out_of_memory (the worker's resident memory passes the harness's limit and
 * it is killed). Should an allocation fail first (an address-space limit), it
 * returns an error as a careful program would; the harness must still name
 * the cause (out_of_memory), not returned_error. */
#include <stdlib.h>

#include "dkb/candidate.h"


enum { CHUNK = 64 << 20, PAGE = 4096 };

int dkb_candidate_core(const dkb_cand_set *in, dkb_cand_set *out, const dkb_cand_env *env) {
    (void)in;
    (void)out;
    (void)env;
    for (uint64_t total = 0;; total += CHUNK) {
        volatile char *p = malloc(CHUNK);
        if (!p) return 1;
        for (size_t i = 0; i < CHUNK; i += PAGE) p[i] = (char)(i + total);
    }
}
