/* parallelism.h -- the average parallelism of a trace's data-flow graph
 * (what inter-op workers can gain): per step, the total op time over the
 * time of the critical path, the longest chain of ops in which each reads
 * a tensor the previous one wrote (node_def's inputs and outputs give the
 * edges, the recorded op times the weights; tracer/critpath.h).  A chain
 * gives 1.0, two equal independent branches 2.0.  Needs schema 2 (or any
 * trace whose nodes carry their inputs and outputs): the profiles follow
 * the data flow when read for this analysis (its row takes
 * ANALYZE_TAKES_FLOW); a trace without data flow is an error. */
#ifndef FATHOM_ANALYZE_PARALLELISM_H
#define FATHOM_ANALYZE_PARALLELISM_H

#include "analyze/analysis.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct analyze_par_trace {
    const char *source, *model, *mode, *preset; /* borrowed from the profile; "" when the trace does not say */
    uint32_t threads, inter;
    uint64_t steps;            /* kept steps with ops (a trace without steps: 1) */
    double op_ns, critical_ns; /* per kept step, means */
    double ops, critical_ops;  /* op invocations per step: all, on the critical path */
    double parallelism;        /* sum of op time / sum of critical-path time */
    double min_step, max_step; /* the kept steps' own parallelism: lowest, highest */
} analyze_par_trace;

typedef struct analyze_parallelism {
    size_t n;
    analyze_par_trace *t; /* in argument order */
} analyze_parallelism;

/* The parallelism of each profile (read with the data flow followed), or
 * NULL with e's status and message: a schema-1 trace or one whose ops name
 * no tensors ("no data flow"), no op in the kept steps, out of memory. */
analyze_status analyze_parallelism_create(analyze_profile *const *p, size_t n, analyze_parallelism **out);
/* Whether a profile has what analyze_parallelism_create needs: a schema-2
 * data flow with ops in its kept steps (out of memory aside). */
int analyze_parallelism_has_flow(const analyze_profile *q);
void analyze_parallelism_destroy(analyze_parallelism *a);
/* 0, or -1 on an output error. */
int analyze_parallelism_print(FILE *f, const analyze_parallelism *a, cli_format fmt);

#endif
