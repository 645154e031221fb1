/* opspack.h -- schema 3's packed op records (tracer/schema.def, ops; man
 * fathom-trace(5)): how a thread's batch of records, u64 ns begins and
 * ends, becomes ops events of 12 bytes a record.
 *
 * An event packs records from its first on, each record's gap (its begin
 * minus the end of the record before it; the first's, minus the event's
 * base, its own begin) and duration in a u32 of ns each. A gap, not an
 * offset from the base: a thread's ops follow each other within a few
 * hundred ns, so the gaps take a byte or two and the archive's compressor
 * takes the rest (a memnet archive of 29,800 ops: 3.2 bytes an op, against
 * 5.7 with offsets from the base and 4.6 in schema 2's u64 begins and
 * ends). The
 * first record whose gap does not fit (4.29 s or more; a begin before the
 * end before it) starts the next event, with a base of its own. A record
 * whose own duration does not fit (2^32 ns or more; an end before its
 * begin) goes exact, in an event of u64 begins and ends whose gaps and
 * durations are empty, with the records after it that do not fit either.
 * Nothing is clamped.
 *
 * The provider (tracer/hooks.c) and the test generator
 * (tests/fixtures/ctfgen.c) split by this one function. */
#ifndef FATHOM_TRACER_OPSPACK_H
#define FATHOM_TRACER_OPSPACK_H

#include <stdint.h>

/* The first event of records [0, n), n > 0: *packed 1, the number of
 * records it packs at base begins[0], their gaps and durations written
 * to gap and dur; *packed 0, the number of records from 0 whose duration
 * does not fit (they go exact). */
static inline uint32_t tracer_ops_next(uint32_t n, const uint64_t *begins, const uint64_t *ends, uint32_t *gap,
                                       uint32_t *dur, int *packed)
{
    uint32_t i = 0;
    if ((ends[0] - begins[0]) >> 32) { /* an end before its begin wraps to a large difference */
        while (i < n && (ends[i] - begins[i]) >> 32)
            i++;
        *packed = 0;
        return i;
    }
    uint64_t prev = begins[0]; /* the base: the first record's gap is 0 */
    for (; i < n; i++) {
        uint64_t g = begins[i] - prev, d = ends[i] - begins[i];
        if ((g | d) >> 32) /* a begin before the end before it wraps likewise */
            break;
        gap[i] = (uint32_t)g;
        dur[i] = (uint32_t)d;
        prev = ends[i];
    }
    *packed = 1;
    return i;
}

#endif
