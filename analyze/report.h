/* report.h -- the analyses over profiles and their outputs (text, CSV,
 * JSON).  Shared by `fathom analyze` and the Babeltrace2 plugin.
 * Layouts are documented in fathom-analyze(1). */
#ifndef FATHOM_ANALYZE_REPORT_H
#define FATHOM_ANALYZE_REPORT_H

#include "analyze/profile.h"

#include <stddef.h>
#include <stdio.h>

typedef enum analyze_format { ANALYZE_TEXT, ANALYZE_CSV, ANALYZE_JSON } analyze_format;

/* "text" | "csv" | "json" -> format, -1 otherwise. */
int analyze_format_parse(const char *s);

/* The share of time that makes "most" of it in the cumulative view. */
#define ANALYZE_CUMULATIVE_SHARE 0.9

/* How many op types (largest first) make `share` of p's op time. */
size_t analyze_ops_for_share(const analyze_profile *p, double share);

/* ---- breakdown -------------------------------------------------------------------- */
/* top: text rows of op types per trace (0: all).  0, or -1 on I/O or memory error. */
int analyze_breakdown(FILE *f, analyze_profile *const *p, size_t n, analyze_format fmt, size_t top);

/* ---- compare ---------------------------------------------------------------------- */
typedef struct analyze_pair {
    size_t train, infer; /* indices into the profiles */
} analyze_pair;

/* Pairs training and inference traces: by model name (first training
 * trace with the first inference trace of the same model, in argument
 * order), or, when `in_order`, as consecutive (training, inference)
 * arguments.  Returns the number of pairs written to out (room for n/2), or
 * -1 with a message in err.  used[i] is set for every paired trace. */
int analyze_pairs(analyze_profile *const *p, size_t n, int in_order, analyze_pair *out, int *used, char *err,
                  size_t errlen);
/* Mean kept step time, or 0 when the trace has no steps. */
double analyze_step_ns(const analyze_profile *p);
int analyze_compare(FILE *f, analyze_profile *const *p, const analyze_pair *pairs, size_t npairs,
                    analyze_format fmt);

/* ---- similarity ---------------------------------------------------------------------- */
typedef struct analyze_merge {
    size_t a, b;     /* clusters merged: < n leaves, >= n earlier merges (n + index) */
    double distance; /* average-linkage distance (1 - cosine) */
    size_t size;     /* leaves in the new cluster */
} analyze_merge;

typedef struct analyze_sim {
    size_t n;          /* groups (models): traces with the same label are summed */
    char **labels;     /* "model/mode" */
    size_t dim;
    char **dims;       /* op types (or classes), sorted by name */
    double *vec;       /* n x dim: op time in ns */
    double *cos;       /* n x n cosine similarity */
    analyze_merge *merges; /* n - 1 merges, in order */
    size_t *order;     /* leaves in dendrogram order */
} analyze_sim;

analyze_sim *analyze_sim_create(analyze_profile *const *p, size_t n, int by_class);
void analyze_sim_destroy(analyze_sim *s);
double analyze_cosine(const double *a, const double *b, size_t dim);
int analyze_similarity(FILE *f, const analyze_sim *s, int by_class, analyze_format fmt);

/* ---- diff -------------------------------------------------------------------------- */
/* Two traces of one model (a recording and its replay, two machines, two
 * settings): A is the baseline, B the other.  Every time and count is per
 * kept step of its own trace, or the whole trace's total when it has no
 * steps (the side's `per` is then 1). */
typedef struct analyze_diff_row {
    const char *name;  /* op type or class (borrowed from a or b) */
    const char *cls;   /* op types: the class (A's when in both); classes: the name */
    int in_a, in_b;    /* kept ops on that side */
    double a_ns, b_ns; /* time per step */
    double ratio;      /* b_ns / a_ns; NAN unless on both sides with a_ns > 0 */
    double delta_ns;   /* b_ns - a_ns */
    double a_share, b_share; /* of the side's op time */
    double dshare_pp;  /* 100 * (b_share - a_share): percentage points */
    double a_count, b_count; /* invocations per step */
} analyze_diff_row;

typedef struct analyze_diff {
    const analyze_profile *a, *b; /* borrowed */
    double a_per, b_per;          /* kept steps, or 1 when the trace has none */
    double a_step_ns, b_step_ns;  /* mean kept step (analyze_step_ns): 0 without steps */
    double step_ratio;            /* b / a; NAN when either has no step */
    double a_op_ns, b_op_ns;      /* op time per step */
    double op_ratio;              /* b / a; NAN when a_op_ns is 0 */
    size_t nops;
    analyze_diff_row *ops;        /* union by name; by |delta_ns| descending, ties by name */
    size_t nclasses;
    analyze_diff_row *classes;    /* union by name; same order */
} analyze_diff;

/* NULL on out of memory. */
analyze_diff *analyze_diff_create(const analyze_profile *a, const analyze_profile *b);
void analyze_diff_destroy(analyze_diff *d);
/* Writes a one-line warning into buf (no newline) and returns 1 when both
 * traces name their model and mode and these differ; 0 otherwise. */
int analyze_diff_mismatch(const analyze_diff *d, char *buf, size_t len);
/* top: text rows of op types (0: all; the rest summed in one line). */
int analyze_diff_print(FILE *f, const analyze_diff *d, analyze_format fmt, size_t top);

/* ---- scaling ----------------------------------------------------------------------- */
/* Traces of one model and mode at different thread counts (run_begin's
 * `threads`), sorted by thread count; the first (fewest threads, T0) is the
 * baseline.  Every time is per kept step of its own trace, or the whole
 * trace's total when it has no steps.  Amdahl fit: least squares of
 * t(T) = a + b/T over the traces where the item ran (a, b clamped to >= 0;
 * exact with two points); serial fraction f = a / (a + b/T0), limit speedup
 * 1/f. */
typedef struct analyze_scaling_row {
    const char *name;   /* op type, class or "op time" (borrowed) */
    const char *cls;    /* op types: the class (the first trace's that has it); classes: the name */
    double *ns;         /* per thread count: time per step; NAN where the item did not run */
    double *speedup;    /* ns[0] / ns[i]; NAN unless both are > 0 */
    double *efficiency; /* speedup[i] / (T_i / T0) */
    double a_ns, b_ns;  /* the fit: serial time, parallel time at one thread (NAN: fewer than 2 points) */
    double serial_fraction; /* a / (a + b/T0); NAN when there is no fit or it is 0 at T0 */
    double limit_speedup;   /* 1 / serial_fraction; INFINITY when it is 0 */
} analyze_scaling_row;

typedef struct analyze_scaling {
    size_t n;                         /* traces (>= 2) */
    const analyze_profile **p;        /* borrowed, sorted by threads */
    uint32_t *threads;
    double *per;                      /* kept steps, or 1 when the trace has none */
    double *step_ns;                  /* mean kept step (0 without steps) */
    double *step_speedup, *step_efficiency; /* NAN where a step time is 0 */
    analyze_scaling_row total;        /* op time per step */
    size_t nops;
    analyze_scaling_row *ops;         /* union by name; by baseline time descending, ties by name */
    size_t nclasses;
    analyze_scaling_row *classes;     /* same */
} analyze_scaling;

/* NULL with a one-line message in err: fewer than two traces, a trace
 * without a threads value (no run_begin), two traces with the same thread
 * count (named), or out of memory. */
analyze_scaling *analyze_scaling_create(analyze_profile *const *p, size_t n, char *err, size_t errlen);
void analyze_scaling_destroy(analyze_scaling *s);
/* Writes a one-line warning into buf (no newline) and returns 1 when the
 * traces that name their model and mode do not all name the same; 0 otherwise. */
int analyze_scaling_mismatch(const analyze_scaling *s, char *buf, size_t len);
/* The least-squares fit of t = a + b/T (a, b >= 0) over the points with a
 * finite t; -1 (a, b NAN) when fewer than two. */
int analyze_amdahl_fit(const uint32_t *threads, const double *t, size_t n, double *a, double *b);
/* top: text rows of op types (0: all; the rest summed in one line). */
int analyze_scaling_print(FILE *f, const analyze_scaling *s, analyze_format fmt, size_t top);

#endif
