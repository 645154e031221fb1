/* opmatch.h -- pairs each op_begin with its op_end.
 *
 * docs/design.md, "The trace": an op's time is op_end minus op_begin of the same seq
 * and the same vtid.  Every reader of traces (the recorder's summary, the
 * analyzer, replay) keeps the op_begins still waiting for their op_end in
 * this map: open addressing keyed by (vtid, seq), O(1) per event.
 *
 * Bounded: a trace whose ops never end (cut short, or hostile) fills it to
 * TRACER_OPMATCH_MAX pending ops; later begins are refused (FULL) and the
 * caller counts them as unmatched.  Memory and time stay linear in the
 * number of events whatever the trace holds.  A base/table.h table, no
 * engine or Babeltrace2 dependency. */
#ifndef FATHOM_TRACER_OPMATCH_H
#define FATHOM_TRACER_OPMATCH_H

#include <stddef.h>
#include <stdint.h>

#include "base/table.h"

#define TRACER_OPMATCH_MAX ((size_t)1 << 16)

typedef struct tracer_opmatch_entry {
    uint64_t vtid, seq; /* the key */
    uint64_t ts;
    uint64_t a, b; /* the caller's own values (op index, step ordinal...) */
} tracer_opmatch_entry;

typedef struct tracer_opmatch {
    base_table t; /* of tracer_opmatch_entry */
} tracer_opmatch; /* zero-initialized: empty */

typedef enum tracer_opmatch_status {
    TRACER_OPMATCH_ADDED,    /* a new pending op */
    TRACER_OPMATCH_REPLACED, /* (vtid, seq) was pending: the earlier begin never ended (*old) */
    TRACER_OPMATCH_FULL,     /* TRACER_OPMATCH_MAX ops pending: not added */
    TRACER_OPMATCH_NOMEM,
} tracer_opmatch_status;

/* Adds e as pending; on REPLACED, *old (if not NULL) is the entry it replaced. */
tracer_opmatch_status tracer_opmatch_begin(tracer_opmatch *m, const tracer_opmatch_entry *e, tracer_opmatch_entry *old);
/* 1: the pending begin of (vtid, seq) is removed and copied to *out (if not
 * NULL); 0: none is pending. */
int tracer_opmatch_end(tracer_opmatch *m, uint64_t vtid, uint64_t seq, tracer_opmatch_entry *out);
/* Ops still pending. */
static inline size_t tracer_opmatch_pending(const tracer_opmatch *m) { return m->t.len; }
/* Frees the map; it is empty (and reusable) afterwards. */
void tracer_opmatch_clear(tracer_opmatch *m);

#endif
