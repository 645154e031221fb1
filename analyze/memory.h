/* memory.h -- the memory analysis: how much tensor memory a run holds, of
 * which role (weights, activations, gradients, optimizer state, workspace:
 * the trace's role labels), when the most is live, and how it moves over
 * the steps.  From tensor_alloc / tensor_free alone (docs/design.md, "Analyses", the
 * TBD memory profiler's view), over the whole run whatever steps are
 * skipped.  Text, CSV and JSON; with several traces, a table of traces x
 * roles at their peaks. */
#ifndef FATHOM_ANALYZE_MEMORY_H
#define FATHOM_ANALYZE_MEMORY_H

#include "analyze/profile.h"
#include "analyze/analysis.h"

#include <stddef.h>
#include <stdio.h>

/* 0, or -1 on I/O or memory error. */
int analyze_memory_print(FILE *f, analyze_profile *const *p, size_t n, cli_format fmt);

#endif
