/* rng.h -- a small deterministic generator (splitmix64-seeded xorshift64*),
 * shared by weight initialization and the random ops. */
#ifndef FATHOM_EXEC_RNG_H
#define FATHOM_EXEC_RNG_H
#include <math.h>
#include <stdint.h>

typedef struct exec_rng {
    uint64_t s;
} exec_rng;

static inline uint64_t exec_splitmix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
static inline exec_rng exec_rng_make(uint64_t seed)
{
    exec_rng r = { exec_splitmix64(seed) | 1 };
    return r;
}
static inline uint64_t exec_rng_u64(exec_rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return r->s * 0x2545f4914f6cdd1dull;
}
/* uniform in [0, 1) */
static inline float exec_rng_uniform(exec_rng *r) { return (float)(exec_rng_u64(r) >> 40) * (1.0f / 16777216.0f); }
/* standard normal (Box-Muller) */
static inline float exec_rng_normal(exec_rng *r)
{
    float u1 = exec_rng_uniform(r), u2 = exec_rng_uniform(r);
    if (u1 < 1e-12f)
        u1 = 1e-12f;
    return sqrtf(-2.0f * logf(u1)) * cosf(6.28318530718f * u2);
}
/* uniform integer in [0, n) */
static inline uint32_t exec_rng_below(exec_rng *r, uint32_t n)
{
    return (uint32_t)((exec_rng_u64(r) >> 32) * (uint64_t)n >> 32);
}
#endif
