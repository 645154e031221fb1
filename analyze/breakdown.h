/* breakdown.h -- the breakdown analysis (analyze/breakdown.c); layouts in fathom-analyze(1). */
#ifndef FATHOM_ANALYZE_BREAKDOWN_H
#define FATHOM_ANALYZE_BREAKDOWN_H

#include "analyze/analysis.h"
#include "analyze/profile.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* top: text rows of op types per trace (0: all).  0, or -1 on I/O or memory error. */
int analyze_breakdown(FILE *f, analyze_profile *const *p, size_t n, cli_format fmt, size_t top);

#endif
