/* roofline.h -- the roofline analysis (Williams et al. 2009; for DL
 * workloads, Javed et al.): where each op type sits against the recording
 * machine's two ceilings.
 *
 * From the trace alone: an op type's arithmetic intensity is the sum of its
 * op_end `flops` over the sum of its op_end `bytes` (the ideal bytes read
 * and written), and its achieved throughput is flops (or bytes) over its op
 * time.  The ceilings are the machine's, measured by `fathom peak` where the
 * trace was recorded: a compute peak P (sgemm GFLOP/s, at the trace's thread
 * count when peak measured it) and a bandwidth B (a triad's GB/s).  The roof
 * at intensity I is min(P, I x B); the ridge point P / B splits
 * memory-bound (I < ridge: judged by GB/s against B) from compute-bound
 * (judged by GFLOP/s against P).  `of_roof` is the fraction of the roof an
 * op type reached.
 *
 * Several traces (one model at several batch sizes or thread counts) also
 * give each op type's trajectory: its points across the traces, ordered by
 * model, mode, batch and threads. */
#ifndef FATHOM_ANALYZE_ROOFLINE_H
#define FATHOM_ANALYZE_ROOFLINE_H

#include "analyze/profile.h"
#include "analyze/analysis.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ANALYZE_PEAKS_MAX 256 /* thread counts kept from a peak file */

/* A ceiling fathom believes, GFLOP/s or GB/s: 1 MFLOP/s (MB/s) to 1
 * EFLOP/s (EB/s). Outside it a peak file or --gflops/--gbs is refused: its
 * ridge point and roofs would be nonsense (1e-300 printed a 300-digit roof,
 * 1e300 over 1e-300 an infinite ridge). */
#define ANALYZE_RATE_MIN 1e-3
#define ANALYZE_RATE_MAX 1e9
int analyze_rate_ok(double v);

/* The ceilings, from `fathom peak --format json` and/or the command line. */
typedef struct analyze_peaks {
    double gflops; /* compute ceiling, GFLOP/s (peak's best sgemm) */
    double gbs;    /* memory ceiling, GB/s (peak's triad) */
    char cpu[256]; /* the machine peak measured ("" unknown) */
    size_t nsgemm; /* peak's sgemm at each thread count (0: none) */
    uint32_t sgemm_threads[ANALYZE_PEAKS_MAX];
    double sgemm_gflops[ANALYZE_PEAKS_MAX];
} analyze_peaks;

/* Reads the JSON that `fathom peak --format json` writes into pk (replacing
 * all of it).  ANALYZE_OK, or ANALYZE_ERR_INPUT with a one-line message in
 * base_errmsg(): unreadable, not JSON, or missing/invalid peak_gflops,
 * bandwidth_gbs or sgemm entries. */
analyze_status analyze_peaks_load(const char *path, analyze_peaks *pk);
/* The ceilings given beside (or instead of) a peak file: gflops (when not
 * 0) is the compute ceiling at every thread count, gbs (when not 0) the
 * memory ceiling.  -1 when there is no peak file and not both. */
int analyze_peaks_override(analyze_peaks *pk, int have_file, double gflops, double gbs);
/* The compute ceiling for a run at `threads`: peak's sgemm at exactly that
 * thread count when it measured one (*at_threads = 1), else pk->gflops. */
double analyze_peaks_gflops_at(const analyze_peaks *pk, uint32_t threads, int *at_threads);

typedef enum analyze_bound {
    ANALYZE_BOUND_NONE,    /* neither flops nor bytes: not on the chart */
    ANALYZE_BOUND_MEMORY,  /* intensity below the ridge point */
    ANALYZE_BOUND_COMPUTE, /* at or above it (or bytes 0 with flops) */
} analyze_bound;

const char *analyze_bound_name(analyze_bound b);

typedef struct analyze_roof_row {
    const char *name;                 /* op type, class, or "all ops" (borrowed) */
    const char *cls;                  /* op types: the class; else the name */
    uint64_t count, ns, flops, bytes; /* kept ops of the trace */
    double share;                     /* of the trace's op time */
    double intensity;                 /* FLOP/byte: NAN when bytes is 0 */
    double gflops;                    /* achieved: flops / ns; NAN when ns is 0 */
    double gbs;                       /* achieved: bytes / ns; NAN when ns is 0 */
    double roof;    /* attainable GFLOP/s at this intensity: min(P, I x B); NAN without flops and bytes */
    double of_roof; /* gbs / B when memory-bound, gflops / P when compute-bound; NAN when NONE or ns 0 */
    analyze_bound bound;
} analyze_roof_row;

typedef struct analyze_roofline_trace {
    const analyze_profile *p;            /* borrowed */
    double peak_gflops, peak_gbs, ridge; /* the ceilings used for this trace */
    int peak_at_threads;                 /* 1: peak_gflops is sgemm at the trace's thread count */
    analyze_roof_row total;              /* all kept ops */
    size_t nops;
    analyze_roof_row *ops; /* op types, by time descending (ties: by name) */
    size_t nclasses;
    analyze_roof_row *classes; /* same order */
} analyze_roofline_trace;

typedef struct analyze_roofline {
    analyze_peaks peaks;
    size_t n;
    analyze_roofline_trace *t; /* in argument order */
    size_t *order;             /* trajectory order of the traces: model, mode, batch, threads */
} analyze_roofline;

/* NULL with e's status and one-line message: no traces, ceilings that
 * are not positive and finite (ANALYZE_ERR_INPUT), or ANALYZE_ERR_NOMEM. */
analyze_status analyze_roofline_create(analyze_profile *const *p, size_t n, const analyze_peaks *pk,
                                       analyze_roofline **out);
void analyze_roofline_destroy(analyze_roofline *r);
/* Writes a one-line warning into buf (no newline) and returns 1 when the
 * peaks name a CPU and a trace names another (ceilings of one machine
 * against a trace of another); 0 otherwise. */
int analyze_roofline_mismatch(const analyze_roofline *r, char *buf, size_t len);
/* top: text rows of op types per trace and trajectories (0: all). */
int analyze_roofline_print(FILE *f, const analyze_roofline *r, cli_format fmt, size_t top);

#endif
