/* parallelism.h -- the average parallelism of a trace's data-flow graph
 * (what inter-op workers can gain): per step, the total op time over the
 * time of the critical path, the longest chain of ops in which each reads
 * a tensor the previous one wrote (node_def's inputs and outputs give the
 * edges, the recorded op times the weights). A chain gives 1.0, two equal
 * independent branches 2.0. Dependencies on tensors written before the
 * step (weights, the previous step's updates) count as met at its start.
 * Read-after-write edges only: the engine's extra ordering of writes after
 * reads is not data flow. Needs schema 2 (or any trace whose nodes carry
 * their inputs and outputs); a trace without data flow is an error. */
#ifndef FATHOM_ANALYZE_PARALLELISM_H
#define FATHOM_ANALYZE_PARALLELISM_H

#include "analyze/analysis.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct analyze_par_trace {
    char *source, *model, *mode, *preset; /* "" when the trace does not say */
    uint32_t threads, inter;
    uint64_t steps;                       /* kept steps (a trace without steps: 1) */
    double op_ns, critical_ns;            /* per kept step, means */
    double ops, critical_ops;             /* op invocations per step: all, on the critical path */
    double parallelism;                   /* sum of op time / sum of critical-path time */
    double min_step, max_step;            /* the kept steps' own parallelism: lowest, highest */
} analyze_par_trace;

typedef struct analyze_parallelism {
    size_t n;
    analyze_par_trace *t; /* in argument order */
} analyze_parallelism;

/* Reads each source (archive, CTF directory) through the isolated decoder
 * and computes its parallelism over the steps kept (the first skip_first
 * and the last skip_last dropped). NULL with a one-line message in err: a
 * source that cannot be read, a schema-1 trace or one whose nodes carry no
 * inputs and outputs ("no data flow"), no op in the kept steps, or out of
 * memory. */
analyze_parallelism *analyze_parallelism_create(const char *const *sources, size_t n, uint32_t skip_first,
                                                uint32_t skip_last, char *err, size_t errlen);
void analyze_parallelism_destroy(analyze_parallelism *a);
/* 0, or -1 on an output error. */
int analyze_parallelism_print(FILE *f, const analyze_parallelism *a, analyze_format fmt);
/* `fathom analyze parallelism [options] TRACE...` (argv[0] is "parallelism"). */
int analyze_parallelism_main(int argc, char **argv);

#endif
