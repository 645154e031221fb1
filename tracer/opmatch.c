/* opmatch.c -- the pending-op map (see opmatch.h): linear probing, load at
 * most one half, backward-shift deletion (no tombstones). */
#include "tracer/opmatch.h"

#include "base/alloc.h"

#include <stdlib.h>

struct tracer_opmatch_slot {
    tracer_opmatch_entry e;
    int used;
};

static size_t hash(uint64_t vtid, uint64_t seq)
{
    uint64_t x = vtid * 0x9E3779B97F4A7C15ULL ^ seq; /* the murmur3 finalizer */
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    x ^= x >> 33;
    return (size_t)x;
}

static tracer_opmatch_slot *find(const tracer_opmatch *m, uint64_t vtid, uint64_t seq)
{
    if (!m->cap)
        return NULL;
    size_t mask = m->cap - 1;
    for (size_t h = hash(vtid, seq) & mask; m->slots[h].used; h = (h + 1) & mask)
        if (m->slots[h].e.vtid == vtid && m->slots[h].e.seq == seq)
            return &m->slots[h];
    return NULL;
}

static tracer_opmatch_slot *free_slot(tracer_opmatch_slot *slots, size_t cap, uint64_t vtid, uint64_t seq)
{
    size_t h = hash(vtid, seq) & (cap - 1);
    while (slots[h].used)
        h = (h + 1) & (cap - 1);
    return &slots[h];
}

static int grow(tracer_opmatch *m)
{
    size_t cap = m->cap ? m->cap * 2 : 64;
    tracer_opmatch_slot *t = base_calloc(cap, sizeof *t);
    if (!t)
        return -1;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].used)
            *free_slot(t, cap, m->slots[i].e.vtid, m->slots[i].e.seq) = m->slots[i];
    base_free(m->slots);
    m->slots = t;
    m->cap = cap;
    return 0;
}

tracer_opmatch_status tracer_opmatch_begin(tracer_opmatch *m, const tracer_opmatch_entry *e, tracer_opmatch_entry *old)
{
    tracer_opmatch_slot *s = find(m, e->vtid, e->seq);
    if (s) {
        if (old)
            *old = s->e;
        s->e = *e;
        return TRACER_OPMATCH_REPLACED;
    }
    if (m->len >= TRACER_OPMATCH_MAX)
        return TRACER_OPMATCH_FULL;
    if ((m->len + 1) * 2 > m->cap && grow(m))
        return TRACER_OPMATCH_NOMEM;
    s = free_slot(m->slots, m->cap, e->vtid, e->seq);
    s->e = *e;
    s->used = 1;
    m->len++;
    return TRACER_OPMATCH_ADDED;
}

int tracer_opmatch_end(tracer_opmatch *m, uint64_t vtid, uint64_t seq, tracer_opmatch_entry *out)
{
    tracer_opmatch_slot *s = find(m, vtid, seq);
    if (!s)
        return 0;
    if (out)
        *out = s->e;
    /* backward-shift deletion: later entries of the probe run fill the hole */
    size_t mask = m->cap - 1, i = (size_t)(s - m->slots), j = i;
    m->slots[i].used = 0;
    for (;;) {
        j = (j + 1) & mask;
        if (!m->slots[j].used)
            break;
        size_t k = hash(m->slots[j].e.vtid, m->slots[j].e.seq) & mask;
        if (tracer_probe_shifts(i, j, k)) {
            m->slots[i] = m->slots[j];
            m->slots[j].used = 0;
            i = j;
        }
    }
    m->len--;
    return 1;
}

void tracer_opmatch_clear(tracer_opmatch *m)
{
    base_free(m->slots);
    m->slots = NULL;
    m->cap = m->len = 0;
}
