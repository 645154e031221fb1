/* opmatch.c -- the pending-op map (see opmatch.h): a base/table.h table
 * keyed by (vtid, seq). */
#include "tracer/opmatch.h"

#include <stddef.h>

_Static_assert(offsetof(tracer_opmatch_entry, seq) == sizeof(uint64_t), "the key is (vtid, seq), unpadded");
#define KEY_SIZE (2 * sizeof(uint64_t))

tracer_opmatch_status tracer_opmatch_begin(tracer_opmatch *m, const tracer_opmatch_entry *e, tracer_opmatch_entry *old)
{
    if (!m->t.size)
        base_table_init(&m->t, sizeof *e, KEY_SIZE);
    tracer_opmatch_entry *s = base_table_get(&m->t, e);
    if (s) {
        if (old)
            *old = *s;
        *s = *e;
        return TRACER_OPMATCH_REPLACED;
    }
    if (m->t.len >= TRACER_OPMATCH_MAX)
        return TRACER_OPMATCH_FULL;
    if (base_table_put(&m->t, e, (void **)&s) == BASE_TABLE_NOMEM)
        return TRACER_OPMATCH_NOMEM;
    *s = *e;
    return TRACER_OPMATCH_ADDED;
}

int tracer_opmatch_end(tracer_opmatch *m, uint64_t vtid, uint64_t seq, tracer_opmatch_entry *out)
{
    const uint64_t key[2] = { vtid, seq };
    tracer_opmatch_entry *s = m->t.size ? base_table_get(&m->t, key) : NULL;
    if (!s)
        return 0;
    if (out)
        *out = *s;
    base_table_del(&m->t, s);
    return 1;
}

void tracer_opmatch_clear(tracer_opmatch *m) { base_table_free(&m->t); }
