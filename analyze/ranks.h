/* ranks.h -- the ranks of one distributed job side by side: per rank and
 * step, the step time and what the rank's GPUs did in it (busy,
 * communication, idle); per step the slowest rank and how far behind the
 * median rank it is (the stragglers).
 *
 * A step is a kept step's span on the host (ProfilerStep#N of an imported
 * trace); a trace without steps is one step, from its first op or device
 * activity to its last.  Within a step: busy is the time some device
 * activity of the rank ran (the union over its devices and streams, cut to
 * the step), communication the time some communication kernel ran
 * (device_classes.def), idle the step time less busy.  Ranks are compared
 * step by step in trace order, over the steps every rank kept; each trace
 * is the rank its MANIFEST gives (source.rank, from `fathom import`), or,
 * when one trace gives none, each is its place in the arguments. */
#ifndef FATHOM_ANALYZE_RANKS_H
#define FATHOM_ANALYZE_RANKS_H

#include "analyze/analysis.h"

#include <stddef.h>
#include <stdint.h>

typedef struct analyze_rank_step {
    uint64_t step_ns, busy_ns, comm_ns, idle_ns;
} analyze_rank_step;

typedef struct analyze_rank {
    const analyze_profile *p; /* borrowed */
    int64_t rank;
    size_t nkept;           /* the steps it kept (1 for a trace without steps) */
    int whole;              /* no steps: the whole trace is its one step */
    analyze_rank_step *s;   /* per compared step */
    analyze_rank_step mean; /* over the compared steps */
    uint64_t slowest;       /* compared steps in which it was the slowest */
    uint64_t behind_ns;     /* the sum of its lag behind the median in those */
} analyze_rank;

typedef struct analyze_straggler {
    uint64_t step;        /* the step's number: the steps begun before it in the first rank's trace */
    size_t slowest;       /* the slowest rank (an index into ranks) */
    uint64_t median_ns;   /* the ranks' median step time */
    uint64_t behind_ns;   /* the slowest one's step time less the median */
    double behind;        /* behind_ns over median_ns */
    long long least_comm; /* the rank with the least communication (index), -1: none has any */
} analyze_straggler;

typedef struct analyze_ranks {
    size_t n;
    analyze_rank *r; /* by rank */
    size_t steps;    /* compared steps: the fewest any rank kept */
    analyze_straggler *st;
    int64_t world_size;  /* the traces' (-1: none says) */
    int world_differs;   /* two traces say different world sizes */
    int by_order;        /* some trace gave no rank: ranks are the arguments' order */
    size_t most_slowest; /* the rank slowest in the most steps (an index) */
} analyze_ranks;

/* Ranks of p[0..n-1] (n >= 2), or NULL with a status and message: a rank
 * given twice, out of memory. */
analyze_status analyze_ranks_create(analyze_profile *const *p, size_t n, analyze_ranks **out);
void analyze_ranks_destroy(analyze_ranks *a);
/* 0, or -1 on an output error. */
int analyze_ranks_print(FILE *f, const analyze_ranks *a, cli_format fmt);

#endif
