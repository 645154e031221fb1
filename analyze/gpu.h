/* gpu.h -- the gpu analysis (analyze/gpu.c, fathom-analyze(1)) as the
 * report draws it: its result, its table and its two charts. */
#ifndef FATHOM_ANALYZE_GPU_H
#define FATHOM_ANALYZE_GPU_H

#include "analyze/profile.h"
#include "analyze/analyze_status.h"
#include "base/cli.h"

#include <stdio.h>

typedef struct analyze_gpu analyze_gpu;

/* The analysis of traces p[0..n); ANALYZE_OK or ANALYZE_ERR_NOMEM. */
analyze_status analyze_gpu_create(analyze_profile *const *p, size_t n, analyze_gpu **out);
void analyze_gpu_destroy(analyze_gpu *g);
/* Whether some trace has device activity. */
int analyze_gpu_any(const analyze_gpu *g);
/* `fathom analyze gpu`'s output; 0 or -1 (a write failed). */
int analyze_gpu_print(FILE *f, const analyze_gpu *g, cli_format fmt);
/* Each device's kept steps (the first ANALYZE_GPU_PLOT_STEPS of each), a
 * bar each: busy, and the idle time by its cause (unknown where the trace
 * lacks its runtime calls). */
#define ANALYZE_GPU_PLOT_STEPS 24
analyze_status analyze_gpu_plot_idle(const analyze_gpu *g, const char *path);
/* Whether some device's trace holds its runtime calls (launch statistics). */
int analyze_gpu_any_calls(const analyze_gpu *g);
/* Each device whose trace holds its runtime calls, a bar of its kernel
 * time: the short kernels (shorter than their launch call) and the rest,
 * the median launch-to-start delay in its label. */
analyze_status analyze_gpu_plot_launches(const analyze_gpu *g, const char *path);

#endif
