/* rng.c -- seeded streams of splitmix64 (see core.h). */
#include "core.h"

/* Spreads consecutive indices of one seed far apart in splitmix64's
 * sequence (an odd constant of the same family as splitmix64's). */
#define STREAM_INDEX_MULTIPLIER 0xd1b54a32d192ed03ull

as_rng as_rng_stream(uint64_t seed, uint64_t index, as_rng_derivation how)
{
    as_rng r = {seed ^ (index * STREAM_INDEX_MULTIPLIER)};
    uint64_t first = as_rng_next(&r);
    if (how == AS_RNG_FROM_FIRST_OUTPUT)
        r.state = first;
    return r;
}
