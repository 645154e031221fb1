/* plot.h -- the report's charts, one function per chart, each writing one
 * SVG or PNG file (by the path's extension) with cairo:
 *
 *   classes     one bar per trace, its op time split by op class
 *   optypes     traces x op types heat map of time shares (the Fathom
 *               paper's op-type heat map)
 *   similarity  the cosine similarity matrix in dendrogram order, with the
 *               average-linkage dendrogram beside it
 *   roofline    log-log roofline: the ceilings, each op type a disc (colour:
 *               class, area: time share), trajectories across traces
 *   memory      one bar per trace, its peak tensor memory split by role
 *   compare     per model, the training and the inference step time side
 *               by side, with their ratio (the Fathom paper's comparison)
 *   scaling     one model at several thread counts: the speedup of its op
 *               time and of its largest op types against the ideal
 *   parallelism per trace, a bar of its data flow's average parallelism
 *               (a line at 1, a chain), a whisker over its steps' own
 *   ranks       one bar per rank of a job, its mean step split into device
 *               busy without communication, communication and idle
 *   stacked     bars of any rows: a GPU trace's steps split into busy and
 *               the idle time's causes, its kernel time into short kernels
 *               and the rest (analyze/gpu.c, analyze_gpu_plot)
 *
 * Each returns ANALYZE_OK, or ANALYZE_ERR_NOMEM or ANALYZE_ERR_IO with a
 * one-line message in base_errmsg() (nothing left behind). */
#ifndef FATHOM_ANALYZE_PLOT_H
#define FATHOM_ANALYZE_PLOT_H

#include "analyze/profile.h"
#include "analyze/compare.h"
#include "analyze/parallelism.h"
#include "analyze/ranks.h"
#include "analyze/scaling.h"
#include "analyze/similarity.h"
#include "analyze/roofline.h"

#include <stddef.h>

analyze_status analyze_plot_classes(const char *path, analyze_profile *const *p, size_t n);
/* top: at most this many op types (the largest over all traces). */
analyze_status analyze_plot_optypes(const char *path, analyze_profile *const *p, size_t n, size_t top);
analyze_status analyze_plot_similarity(const char *path, const analyze_sim *s);
/* top: op types per trace (the largest). */
analyze_status analyze_plot_roofline(const char *path, const analyze_roofline *r, size_t top);
analyze_status analyze_plot_memory(const char *path, analyze_profile *const *p, size_t n);
/* top: op types drawn (the largest at the baseline). */
analyze_status analyze_plot_scaling(const char *path, const analyze_scaling *s, size_t top);
/* pairs from analyze_pairs(). */
analyze_status analyze_plot_compare(const char *path, analyze_profile *const *p, const analyze_pair *pairs,
                                    size_t npairs);
analyze_status analyze_plot_parallelism(const char *path, const analyze_parallelism *a);
analyze_status analyze_plot_ranks(const char *path, const analyze_ranks *a);
/* Stacked bars of any rows (a GPU trace's steps, analyze/gpu.c): row i
 * labelled labels[i], its parts value[i * nparts + j] as shares of the
 * row's whole; colour(part) a palette index; `of`: what a share is of. */
analyze_status analyze_plot_stacked(const char *path, const char *title, const char *axis, const char *const *labels,
                                    size_t n, const char *const *parts, size_t nparts, size_t (*colour)(const char *),
                                    const double *value, const char *of);

#endif
