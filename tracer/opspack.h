/* opspack.h -- schema 3's packed op records (tracer/schema.def, ops; man
 * fathom-trace(5)): how a thread's batch of records, u64 ns begins and
 * ends, becomes ops events of 12 bytes a record.
 *
 * An event packs records from its first on: its base is the first's begin,
 * and each record's offset from the base and duration take a u32 of ns.
 * The first record whose offset or duration does not fit starts the next
 * event, with a base of its own. A record whose own duration does not fit
 * (2^32 ns, 4.29 s, or more; an end before its begin) goes exact, in an
 * event of u64 begins and ends whose offsets and durations are empty, with
 * the records after it that do not fit either. Nothing is clamped.
 *
 * The provider (tracer/hooks.c) and the test generator
 * (tests/fixtures/ctfgen.c) split by this one function. */
#ifndef FATHOM_TRACER_OPSPACK_H
#define FATHOM_TRACER_OPSPACK_H

#include <stdint.h>

/* The first event of records [0, n), n > 0: *packed 1, the number of
 * records it packs at base begins[0], their offsets and durations written
 * to off and dur; *packed 0, the number of records from 0 whose duration
 * does not fit (they go exact). */
static inline uint32_t tracer_ops_next(uint32_t n, const uint64_t *begins, const uint64_t *ends, uint32_t *off,
                                       uint32_t *dur, int *packed)
{
    uint32_t i = 0;
    if ((ends[0] - begins[0]) >> 32) { /* an end before its begin wraps to a large difference */
        while (i < n && (ends[i] - begins[i]) >> 32)
            i++;
        *packed = 0;
        return i;
    }
    const uint64_t base = begins[0];
    for (; i < n; i++) {
        uint64_t o = begins[i] - base, d = ends[i] - begins[i];
        if ((o | d) >> 32) /* a begin before the base wraps likewise */
            break;
        off[i] = (uint32_t)o;
        dur[i] = (uint32_t)d;
    }
    *packed = 1;
    return i;
}

#endif
