/* html.h -- `fathom report`: every analysis of a set of traces as charts
 * (plot.h) and one HTML page, written into a new folder:
 *
 *   DIR/index.html      the traces, each chart, and the text tables of
 *                       breakdown, compare, similarity, roofline and memory
 *   DIR/classes.svg     DIR/optypes.svg     DIR/memory.svg
 *   DIR/compare.svg     (a training and an inference trace of one model)
 *   DIR/similarity.svg  (two models or more)
 *   DIR/scaling-MODEL-MODE.svg  (a model and mode at several thread counts)
 *   DIR/roofline.svg    (with ceilings)
 *
 * (.png instead of .svg with png).  The folder must not exist, or be
 * empty: nothing is overwritten.  On an error everything written so far is
 * removed again. */
#ifndef FATHOM_ANALYZE_HTML_H
#define FATHOM_ANALYZE_HTML_H

#include "analyze/profile.h"
#include "analyze/roofline.h"
#include "analyze/analyze_status.h"

#include <stddef.h>

typedef struct analyze_html_opts {
    const char *dir;            /* the folder to create */
    int png;                    /* 1: PNG charts; 0: SVG */
    size_t top;                 /* op types in the heat map, the roofline and the tables (0: all) */
    const analyze_peaks *peaks; /* NULL: no roofline */
} analyze_html_opts;

/* ANALYZE_OK, or a status with a one-line message in base_errmsg() (the
 * files written so far and a folder it created are removed). */
analyze_status analyze_html_write(analyze_profile *const *p, size_t n, const analyze_html_opts *o);

#endif
