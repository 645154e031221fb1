/* chart.c -- see chart.h. */
#include "analyze/chart.h"

#include <cairo-svg.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

int analyze_chart_create(analyze_chart *c, const char *path, double w, double h, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->png = path && ends_with(path, ".png");
    c->w = w, c->h = h;
    c->path = path ? strdup(path) : NULL;
    c->surface = !path || c->png ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(w), (int)ceil(h))
                                 : cairo_svg_surface_create(path, w, h);
    if ((path && !c->path) || cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "%s: cannot create the chart: %s", path ? path : "a scratch surface",
                 cairo_status_to_string(cairo_surface_status(c->surface)));
        cairo_surface_destroy(c->surface);
        free(c->path);
        if (path && !c->png)
            unlink(path);
        memset(c, 0, sizeof *c);
        return -1;
    }
    c->cr = cairo_create(c->surface);
    cairo_set_source_rgb(c->cr, 1, 1, 1);
    cairo_paint(c->cr);
    cairo_select_font_face(c->cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_line_width(c->cr, 1);
    return 0;
}

static void chart_free(analyze_chart *c)
{
    cairo_destroy(c->cr);
    cairo_surface_destroy(c->surface);
    free(c->path);
    memset(c, 0, sizeof *c);
}

int analyze_chart_finish(analyze_chart *c, char *err, size_t errlen)
{
    cairo_status_t st = cairo_status(c->cr);
    if (st == CAIRO_STATUS_SUCCESS && c->png)
        st = cairo_surface_write_to_png(c->surface, c->path);
    cairo_surface_finish(c->surface); /* SVG: writes the file */
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(c->surface);
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(err, errlen, "%s: cannot write the chart: %s", c->path, cairo_status_to_string(st));
        unlink(c->path);
        chart_free(c);
        return -1;
    }
    chart_free(c);
    return 0;
}

void analyze_chart_discard(analyze_chart *c)
{
    if (!c->cr)
        return;
    cairo_surface_finish(c->surface);
    if (c->path)
        unlink(c->path);
    chart_free(c);
}

void analyze_chart_text(analyze_chart *c, double x, double y, double size, int align, double angle, const char *s)
{
    cairo_t *cr = c->cr;
    cairo_text_extents_t te;
    cairo_set_font_size(cr, size);
    cairo_text_extents(cr, s, &te);
    cairo_save(cr);
    cairo_translate(cr, x, y);
    cairo_rotate(cr, -angle * M_PI / 180.0);
    double dx = align < 0 ? 0 : align == 0 ? -te.x_advance / 2 : -te.x_advance;
    cairo_move_to(cr, dx, 0);
    cairo_show_text(cr, s);
    cairo_restore(cr);
}

double analyze_chart_text_width(analyze_chart *c, double size, const char *s)
{
    cairo_text_extents_t te;
    cairo_set_font_size(c->cr, size);
    cairo_text_extents(c->cr, s, &te);
    return te.x_advance;
}

void analyze_chart_rgb(analyze_chart *c, double r, double g, double b) { cairo_set_source_rgb(c->cr, r, g, b); }

void analyze_chart_palette(analyze_chart *c, size_t i)
{
    /* Okabe-Ito, then Tableau: distinguishable, colour-blind safe first */
    static const unsigned rgb[] = { 0x0072B2, 0xE69F00, 0x009E73, 0xCC79A7, 0x56B4E9, 0xD55E00,
                                    0xF0E442, 0x000000, 0x8C564B, 0x7F7F7F, 0xBCBD22, 0x17BECF };
    unsigned v = rgb[i % (sizeof rgb / sizeof rgb[0])];
    cairo_set_source_rgb(c->cr, ((v >> 16) & 255) / 255.0, ((v >> 8) & 255) / 255.0, (v & 255) / 255.0);
}

void analyze_chart_ramp(analyze_chart *c, double v)
{
    if (!(v > 0))
        v = 0;
    if (v > 1)
        v = 1;
    /* white -> #08306B */
    cairo_set_source_rgb(c->cr, 1 - v * (1 - 0x08 / 255.0), 1 - v * (1 - 0x30 / 255.0), 1 - v * (1 - 0x6B / 255.0));
}

double analyze_scale_at(const analyze_scale *s, double v)
{
    double a = s->lo, b = s->hi;
    if (s->log) {
        a = log10(a), b = log10(b), v = log10(v);
    }
    return b == a ? s->p0 : s->p0 + (v - a) / (b - a) * (s->p1 - s->p0);
}
