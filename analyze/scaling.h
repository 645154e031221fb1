/* scaling.h -- the scaling analysis (analyze/scaling.c); layouts in fathom-analyze(1). */
#ifndef FATHOM_ANALYZE_SCALING_H
#define FATHOM_ANALYZE_SCALING_H

#include "analyze/analysis.h"
#include "analyze/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Traces of one model and mode at different thread counts (run_begin's
 * `threads`), sorted by thread count; the first (fewest threads, T0) is the
 * baseline.  Every time is per kept step of its own trace, or the whole
 * trace's total when it has no steps.  Amdahl fit: least squares of
 * t(T) = a + b/T over the traces where the item ran (a, b clamped to >= 0;
 * exact with two points); serial fraction f = a / (a + b/T0), limit speedup
 * 1/f. */
typedef struct analyze_scaling_row {
    const char *name;       /* op type, class or "op time" (borrowed) */
    const char *cls;        /* op types: the class (the first trace's that has it); classes: the name */
    double *ns;             /* per thread count: time per step; NAN where the item did not run */
    double *speedup;        /* ns[0] / ns[i]; NAN unless both are > 0 */
    double *efficiency;     /* speedup[i] / (T_i / T0) */
    double a_ns, b_ns;      /* the fit: serial time, parallel time at one thread (NAN: fewer than 2 points) */
    double serial_fraction; /* a / (a + b/T0); NAN when there is no fit or it is 0 at T0 */
    double limit_speedup;   /* 1 / serial_fraction; INFINITY when it is 0 */
} analyze_scaling_row;

typedef struct analyze_scaling {
    size_t n;                  /* traces (>= 2) */
    const analyze_profile **p; /* borrowed, sorted by threads */
    uint32_t *threads;
    double *per;                            /* kept steps, or 1 when the trace has none */
    double *step_ns;                        /* mean kept step (0 without steps) */
    double *step_speedup, *step_efficiency; /* NAN where a step time is 0 */
    analyze_scaling_row total;              /* op time per step */
    size_t nops;
    analyze_scaling_row *ops; /* union by name; by baseline time descending, ties by name */
    size_t nclasses;
    analyze_scaling_row *classes; /* same */
} analyze_scaling;

/* NULL with e's status and one-line message: fewer than two traces, a
 * trace without a threads value (no run_begin), two traces with the same
 * thread count (named): ANALYZE_ERR_INPUT; or ANALYZE_ERR_NOMEM. */
analyze_status analyze_scaling_create(analyze_profile *const *p, size_t n, analyze_scaling **out);
void analyze_scaling_destroy(analyze_scaling *s);
/* Writes a one-line warning into buf (no newline) and returns 1 when the
 * traces that name their model and mode do not all name the same; 0 otherwise. */
int analyze_scaling_mismatch(const analyze_scaling *s, char *buf, size_t len);
/* The least-squares fit of t = a + b/T (a, b >= 0) over the points with a
 * finite t; -1 (a, b NAN) when fewer than two. */
int analyze_amdahl_fit(const uint32_t *threads, const double *t, size_t n, double *a, double *b);
/* top: text rows of op types (0: all; the rest summed in one line). */
int analyze_scaling_print(FILE *f, const analyze_scaling *s, cli_format fmt, size_t top);

#endif
