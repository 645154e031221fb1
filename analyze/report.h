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

#endif
