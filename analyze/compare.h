/* compare.h -- the compare analysis (analyze/compare.c); layouts in fathom-analyze(1). */
#ifndef FATHOM_ANALYZE_COMPARE_H
#define FATHOM_ANALYZE_COMPARE_H

#include "analyze/analysis.h"
#include "analyze/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct analyze_pair {
    size_t train, infer; /* indices into the profiles */
} analyze_pair;

/* Pairs training and inference traces: by model name (first training
 * trace with the first inference trace of the same model, in argument
 * order), or, when `in_order`, as consecutive (training, inference)
 * arguments.  Returns the number of pairs written to out (room for n/2), or
 * -1 with e's status (ANALYZE_ERR_INPUT) and message.  used[i] is set for
 * every paired trace. */
int analyze_pairs(analyze_profile *const *p, size_t n, int in_order, analyze_pair *out, int *used);
int analyze_compare(FILE *f, analyze_profile *const *p, const analyze_pair *pairs, size_t npairs, cli_format fmt);

#endif
