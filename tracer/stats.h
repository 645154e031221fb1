/* stats.h -- summarizes a recorded `fathom` trace through the one trace
 * reader (reader.h, decode.h): events per name, discarded events and
 * packets, steps, op records and their total time, what the decoder found
 * inconsistent, the run_begin metadata and run_end's op count.
 *
 * Used by the recorder (MANIFEST event counts, the no-loss check) and by
 * `fathom info`; depends on nothing of analyze/. */
#ifndef FATHOM_TRACER_STATS_H
#define FATHOM_TRACER_STATS_H
#include "tracer/tracer_status.h"

#include <stddef.h>
#include <stdint.h>

#define TRACER_STATS_MAX_NAMES 64

typedef struct tracer_stats_count {
    char name[96]; /* full event name, "fathom:op_begin" */
    uint64_t count;
} tracer_stats_count;

typedef struct tracer_stats {
    /* events per name, in order of first appearance */
    size_t nnames;
    tracer_stats_count names[TRACER_STATS_MAX_NAMES];
    uint64_t other_names;          /* events past TRACER_STATS_MAX_NAMES distinct names */
    uint64_t events;               /* all events */
    uint64_t discarded_events;     /* sum over discarded-events messages (unknown count: 1) */
    uint64_t discarded_event_msgs; /* number of such messages */
    uint64_t discarded_packets;
    uint64_t first_ns, last_ns; /* time of the first and last event (ns from origin) */

    /* the fathom schema */
    uint64_t runs; /* run_begin events */
    uint64_t run_ends;
    uint64_t steps;                 /* step_end events */
    uint64_t op_begins, op_ends;    /* schema 1: op_begin and op_end events */
    uint64_t node_defs, ops_events; /* schema 2: node_def and ops events */
    uint64_t op_pairs;              /* op records (schema 1: op_end matched with its op_begin) */
    uint64_t op_unmatched;          /* schema 1: op_begin or op_end without its partner */
    uint64_t op_time_ns;            /* sum over records of end - begin */
    uint64_t undefined_nodes;       /* schema 2: records naming a node no node_def describes */
    uint64_t malformed;             /* fathom events with missing or mistyped fields */
    uint64_t negative_time;         /* records ending before they begin */
    uint64_t run_end_ops;           /* sum of run_end.ops */
    int32_t run_end_status;         /* the last run_end's status */
    /* the first run_begin */
    uint32_t schema, batch, steps_planned, threads, inter;
    uint64_t seed;
    char model[128], mode[32], preset[64], version[64], blas[512], cpu[256];
} tracer_stats;

/* Reads an opened trace (archive.h) into *out: TRACER_OK, or a status
 * and the thread's message (base/error.h). */
typedef struct tracer_trace tracer_trace;
tracer_status tracer_stats_collect(const tracer_trace *t, tracer_stats *out);
/* The count of events named `name` (0 if none). */
uint64_t tracer_stats_count_of(const tracer_stats *s, const char *name);
#endif
