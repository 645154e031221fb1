/* critpath.h -- the critical path of one step's op records, over their data
 * flow: what `fathom analyze parallelism` reports from a trace and what
 * `fathom tune` measures from the engine.
 *
 * An op is ready when the last of the tensors it reads has been written in
 * the step (read-after-write edges only: the engine's extra ordering of
 * writes after reads is not data flow); tensors not written in the step
 * (weights, the previous step's updates) are ready at its start.  Its
 * finish is ready + its own duration; the step's critical path is the
 * latest finish.  A chain gives total/critical 1.0, two equal independent
 * branches 2.0.  Records are taken in the order of their begin times, which
 * a valid execution keeps for producers and consumers.
 *
 *     tracer_flow f = { 0 };
 *     tracer_flow_add(&f, begin, end, ins, nin, outs, nout);  // each op
 *     tracer_critpath cp;
 *     tracer_flow_step(&f, &cp);    // the step's numbers; f is empty again
 *     tracer_flow_free(&f);
 *
 * Allocation through base/alloc.h; -1 on out of memory. */
#ifndef FATHOM_TRACER_CRITPATH_H
#define FATHOM_TRACER_CRITPATH_H

#include <stddef.h>
#include <stdint.h>

typedef struct tracer_flow_rec {
    uint64_t begin, end;
    uint32_t first, nin, nout; /* its tensor ids: ids[first .. first+nin+nout), inputs first */
} tracer_flow_rec;

/* One step's records being gathered (zero-initialized to start). */
typedef struct tracer_flow {
    tracer_flow_rec *recs;
    size_t nrecs, caprecs;
    uint32_t *ids;
    size_t nids, capids;
    int has_flow; /* some record named a tensor (ever, not only this step) */
} tracer_flow;

typedef struct tracer_critpath {
    uint64_t total_ns;     /* the sum of the ops' durations */
    uint64_t critical_ns;  /* the critical path's length */
    uint32_t ops;          /* op records in the step */
    uint32_t critical_ops; /* ops on the critical path */
} tracer_critpath;

/* Adds one op record (end before begin counts as a zero duration). */
int tracer_flow_add(tracer_flow *f, uint64_t begin, uint64_t end, const uint32_t *in, uint32_t nin, const uint32_t *out,
                    uint32_t nout);
/* The critical path of the records added since the last call, into *cp
 * (all zero when there were none); the records are dropped. */
int tracer_flow_step(tracer_flow *f, tracer_critpath *cp);
/* Drops the records of the step under way. */
void tracer_flow_clear(tracer_flow *f);
void tracer_flow_free(tracer_flow *f);

#endif
