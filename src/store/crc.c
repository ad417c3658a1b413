/* crc.c: zlib crc32 helpers for buffers larger than zlib's uInt and for
 * multi-threaded checksums of large mapped files. */
#include "store/crc.h"

#include <stdlib.h>
#include <zlib.h>

enum { PIECE = 1u << 30 };             /* below UINT_MAX: one zlib call */
#define PAR_CHUNK ((size_t)8 << 20)    /* per-thread chunk in parallel crc */

uint32_t dkb__crc32(uint32_t crc, const void *p, size_t n) {
    const unsigned char *s = p;
    uLong c = crc;
    while (n > 0) {
        size_t k = n < PIECE ? n : PIECE;
        c = crc32(c, s, (uInt)k);
        s += k;
        n -= k;
    }
    return (uint32_t)c;
}

uint32_t dkb__crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b) {
    return (uint32_t)crc32_combine(crc_a, crc_b, (z_off_t)len_b); /* z_off_t is 64-bit on LP64 */
}

uint32_t dkb__crc32_parallel(const void *p, size_t n) {
    size_t nchunks = (n + PAR_CHUNK - 1) / PAR_CHUNK;
    if (nchunks <= 1) return dkb__crc32(0, p, n);
    uint32_t *crcs = malloc(nchunks * sizeof *crcs);
    if (!crcs) return dkb__crc32(0, p, n);
    const unsigned char *s = p;
#pragma omp parallel for schedule(dynamic, 1)
    for (size_t i = 0; i < nchunks; i++) {
        size_t at = i * PAR_CHUNK, k = n - at < PAR_CHUNK ? n - at : PAR_CHUNK;
        crcs[i] = dkb__crc32(0, s + at, k);
    }
    uint32_t crc = crcs[0];
    for (size_t i = 1; i < nchunks; i++) {
        size_t at = i * PAR_CHUNK, k = n - at < PAR_CHUNK ? n - at : PAR_CHUNK;
        crc = dkb__crc32_combine(crc, crcs[i], k);
    }
    free(crcs);
    return crc;
}
