/* chart.h -- the little drawing layer the report's plots stand on: a cairo
 * surface written as SVG or PNG (by the file name's extension), text,
 * a palette, and value-to-pixel scales (linear and log10).  Internal to
 * analyze/.
 *
 * In an SVG, text is real <text> (selectable, searchable, rendered by the
 * viewer's font), not cairo's glyph outlines, and a mark can carry a
 * <title> that the viewer shows on hover; cairo draws the shapes.  A PNG
 * has its text drawn by cairo and no titles. */
#ifndef FATHOM_ANALYZE_CHART_H
#define FATHOM_ANALYZE_CHART_H

#include "analyze/analyze_status.h"

#include <cairo.h>
#include <stddef.h>
#include <stdio.h>

typedef struct analyze_chart {
    cairo_surface_t *surface;
    cairo_t *cr;
    char *path;
    int png; /* 1: written as PNG at finish; 0: SVG */
    double w, h;
    /* SVG: cairo's document (its shapes) in memory, and the <text> and
     * <title> elements laid over it at finish */
    char *svg;
    size_t svg_len, svg_cap;
    int svg_oom;
    FILE *over;
    char *over_buf;
    size_t over_len;
} analyze_chart;

/* A w x h chart for `path` (".png": PNG, else SVG), white background; path
 * NULL: a scratch surface to measure text on (discard it).  ANALYZE_OK, or
 * ANALYZE_ERR_IO with a one-line message in base_errmsg(). */
analyze_status analyze_chart_create(analyze_chart *c, const char *path, double w, double h);
/* Writes the file and frees the chart: ANALYZE_OK, or ANALYZE_ERR_IO with a
 * message (the chart is freed either way). */
analyze_status analyze_chart_finish(analyze_chart *c);
/* Frees without writing (an error path); the partial file is removed. */
void analyze_chart_discard(analyze_chart *c);

/* Text at (x, y) (baseline), size in points; align -1 left, 0 centre, 1
 * right; angle in degrees, counter-clockwise about (x, y). */
void analyze_chart_text(analyze_chart *c, double x, double y, double size, int align, double angle, const char *s);
/* Width of s at size. */
double analyze_chart_text_width(analyze_chart *c, double size, const char *s);
/* The vertical extent of a line of text at size about its baseline (what
 * a browser's text box spans: the font's ascent above, descent below). */
#define ANALYZE_CHART_ASCENT 0.93
#define ANALYZE_CHART_DESCENT 0.24

/* A hover title (SVG <title>) over the rectangle or the disc; the mark is
 * invisible, drawn over what is there.  Nothing in a PNG. */
void analyze_chart_title_rect(analyze_chart *c, double x, double y, double w, double h, const char *fmt, ...)
    __attribute__((format(printf, 6, 7)));
void analyze_chart_title_disc(analyze_chart *c, double x, double y, double r, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* The i-th colour of a qualitative palette (cycles). */
void analyze_chart_palette(analyze_chart *c, size_t i);
/* A sequential colour for v in [0, 1]: white to dark blue. */
void analyze_chart_ramp(analyze_chart *c, double v);
void analyze_chart_rgb(analyze_chart *c, double r, double g, double b);

/* A scale from [lo, hi] to pixels [p0, p1], linear or log10 (lo > 0). */
typedef struct analyze_scale {
    double lo, hi, p0, p1;
    int log;
} analyze_scale;
double analyze_scale_at(const analyze_scale *s, double v);

#endif
