/* hash.h -- the one hash of bytes: 64-bit FNV-1a. Fast on short keys (op
 * names, words, ids) and enough for open-addressing tables and digests;
 * not for input chosen to collide. Header-only. */
#ifndef FATHOM_BASE_HASH_H
#define FATHOM_BASE_HASH_H
#include <stddef.h>
#include <stdint.h>

#define BASE_FNV1A_INIT 0xcbf29ce484222325ull

/* h, the hash of the bytes before, carried over n more bytes at p: a hash
 * of several pieces, as if they were one. */
static inline uint64_t base_fnv1a_more(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* The hash of n bytes at p. */
static inline uint64_t base_fnv1a(const void *p, size_t n) { return base_fnv1a_more(BASE_FNV1A_INIT, p, n); }

/* x with every bit stirred into every other (murmur3's finalizer). One to
 * one: distinct x give distinct results. FNV-1a's low bits depend only on
 * the low bits of each byte; a table takes its slot from the low bits of
 * this instead. */
static inline uint64_t base_mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}
#endif
