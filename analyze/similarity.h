/* similarity.h -- the similarity analysis (analyze/similarity.c); layouts in fathom-analyze(1). */
#ifndef FATHOM_ANALYZE_SIMILARITY_H
#define FATHOM_ANALYZE_SIMILARITY_H

#include "analyze/analysis.h"
#include "analyze/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct analyze_merge {
    size_t a, b;     /* clusters merged: < n leaves, >= n earlier merges (n + index) */
    double distance; /* average-linkage distance (1 - cosine) */
    size_t size;     /* leaves in the new cluster */
} analyze_merge;

typedef struct analyze_sim {
    size_t n;      /* groups (models): traces with the same label are summed */
    char **labels; /* "model/mode" */
    size_t dim;
    char **dims;           /* op types (or classes), sorted by name */
    double *vec;           /* n x dim: op time in ns */
    double *cos;           /* n x n cosine similarity */
    analyze_merge *merges; /* n - 1 merges, in order */
    size_t *order;         /* leaves in dendrogram order */
} analyze_sim;

analyze_sim *analyze_sim_create(analyze_profile *const *p, size_t n, int by_class);
void analyze_sim_destroy(analyze_sim *s);
double analyze_cosine(const double *a, const double *b, size_t dim);
int analyze_similarity(FILE *f, const analyze_sim *s, int by_class, cli_format fmt);

#endif
