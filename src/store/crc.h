/* crc.h: zlib crc32 over buffers of any size, serially or in parallel
 * chunks combined with crc32_combine (internal). */
#ifndef DKB_STORE_CRC_H
#define DKB_STORE_CRC_H

#include <stddef.h>
#include <stdint.h>

/* crc32 of p[0, n) continuing from crc (start with 0). */
uint32_t dkb__crc32(uint32_t crc, const void *p, size_t n);
/* crc32(0, p, n) computed as combined chunks; call from inside an OpenMP
 * worksharing-free context (it opens its own parallel region) or serially
 * when n is small. */
uint32_t dkb__crc32_parallel(const void *p, size_t n);
/* crc32 of a ++ b given crc(a), crc(b) and the length of b. */
uint32_t dkb__crc32_combine(uint32_t crc_a, uint32_t crc_b, uint64_t len_b);

#endif
