/* critpath.c -- the critical path of one step's op records (critpath.h). */
#include "tracer/critpath.h"

#include "base/alloc.h"
#include "base/table.h"

#include <stdlib.h>
#include <string.h>

int tracer_flow_add(tracer_flow *f, uint64_t begin, uint64_t end, const uint32_t *in, uint32_t nin, const uint32_t *out,
                    uint32_t nout)
{
    if (!in)
        nin = 0;
    if (!out)
        nout = 0;
    if (base_grow(&f->recs, &f->caprecs, f->nrecs + 1, sizeof *f->recs) ||
        base_grow(&f->ids, &f->capids, f->nids + nin + nout, sizeof *f->ids))
        return -1;
    f->recs[f->nrecs++] = (tracer_flow_rec){
        .begin = begin, .end = end >= begin ? end : begin, .first = (uint32_t)f->nids, .nin = nin, .nout = nout
    };
    if (nin)
        memcpy(f->ids + f->nids, in, nin * sizeof *f->ids);
    if (nout)
        memcpy(f->ids + f->nids + nin, out, nout * sizeof *f->ids);
    f->nids += nin + nout;
    f->has_flow |= nin + nout > 0;
    return 0;
}

static int cmp_begin(const void *a, const void *b)
{
    const tracer_flow_rec *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin ? 1 : (x->end > y->end) - (x->end < y->end);
}

/* The latest finish of each tensor written in the step, and the length in
 * ops of the longest chain ending there, by the tensor's id. */
typedef struct slot {
    uint32_t id, path;
    uint64_t finish;
} slot;

int tracer_flow_step(tracer_flow *f, tracer_critpath *cp)
{
    memset(cp, 0, sizeof *cp);
    if (!f->nrecs)
        return 0;
    base_table t = BASE_TABLE(slot, sizeof(uint32_t));
    if (base_table_reserve(&t, f->nids + 32)) /* then no put fails */
        return -1;
    qsort(f->recs, f->nrecs, sizeof *f->recs, cmp_begin);
    for (size_t r = 0; r < f->nrecs; r++) {
        const tracer_flow_rec *x = &f->recs[r];
        uint64_t ready = 0, dur = x->end - x->begin;
        uint32_t path = 0;
        for (uint32_t i = 0; i < x->nin; i++) {
            const slot *e = base_table_get(&t, &f->ids[x->first + i]);
            if (e && (e->finish > ready || (e->finish == ready && e->path > path)))
                ready = e->finish, path = e->path;
        }
        uint64_t fin = ready + dur;
        cp->total_ns += dur;
        for (uint32_t o = 0; o < x->nout; o++) {
            slot *e;
            (void)base_table_put(&t, &f->ids[x->first + x->nin + o], (void **)&e);
            e->finish = fin;
            e->path = path + 1;
        }
        if (fin > cp->critical_ns || (fin == cp->critical_ns && path + 1 > cp->critical_ops))
            cp->critical_ns = fin, cp->critical_ops = path + 1;
    }
    cp->ops = (uint32_t)f->nrecs;
    base_table_free(&t);
    tracer_flow_clear(f);
    return 0;
}

void tracer_flow_clear(tracer_flow *f) { f->nrecs = f->nids = 0; }

void tracer_flow_free(tracer_flow *f)
{
    base_free(f->recs);
    base_free(f->ids);
    memset(f, 0, sizeof *f);
}
