/* diff.h -- the diff analysis (analyze/diff.c); layouts in fathom-analyze(1). */
#ifndef FATHOM_ANALYZE_DIFF_H
#define FATHOM_ANALYZE_DIFF_H

#include "analyze/analysis.h"
#include "analyze/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Two traces of one model (a recording and its replay, two machines, two
 * settings): A is the baseline, B the other.  Every time and count is per
 * kept step of its own trace, or the whole trace's total when it has no
 * steps (the side's `per` is then 1). */
typedef struct analyze_diff_row {
    const char *name;        /* op type or class (borrowed from a or b) */
    const char *cls;         /* op types: the class (A's when in both); classes: the name */
    int in_a, in_b;          /* kept ops on that side */
    double a_ns, b_ns;       /* time per step */
    double ratio;            /* b_ns / a_ns; NAN unless on both sides with a_ns > 0 */
    double delta_ns;         /* b_ns - a_ns */
    double a_share, b_share; /* of the side's op time */
    double dshare_pp;        /* 100 * (b_share - a_share): percentage points */
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
    analyze_diff_row *ops; /* union by name; by |delta_ns| descending, ties by name */
    size_t nclasses;
    analyze_diff_row *classes; /* union by name; same order */
} analyze_diff;

/* NULL on out of memory. */
analyze_diff *analyze_diff_create(const analyze_profile *a, const analyze_profile *b);
void analyze_diff_destroy(analyze_diff *d);
/* Writes a one-line warning into buf (no newline) and returns 1 when both
 * traces name their model and mode and these differ; 0 otherwise. */
int analyze_diff_mismatch(const analyze_diff *d, char *buf, size_t len);
/* top: text rows of op types (0: all; the rest summed in one line). */
int analyze_diff_print(FILE *f, const analyze_diff *d, cli_format fmt, size_t top);

#endif
