/* splitmix64: the small, fast pseudo-random generator the targets use to pick offsets,
 * objects and delays (not the payload's pattern generator). */
#ifndef CEPHMARK_SPLITMIX_H
#define CEPHMARK_SPLITMIX_H

#include <stdint.h>

static inline uint64_t cm_splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
