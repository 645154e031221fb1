/* chart.c -- see chart.h. */
#include "analyze/chart.h"

#include "analyze/analyze_status.h"

#include "analyze/out.h"
#include "base/alloc.h"

#include <cairo-svg.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int ends_with(const char *s, const char *tail)
{
    size_t n = strlen(s), k = strlen(tail);
    return n >= k && strcmp(s + n - k, tail) == 0;
}

/* cairo's SVG document, gathered in memory (the text goes in at finish). */
static cairo_status_t svg_write(void *closure, const unsigned char *data, unsigned int len)
{
    analyze_chart *c = closure;
    if (c->svg_len + len > c->svg_cap) {
        size_t cap = c->svg_cap ? c->svg_cap : 1 << 16;
        while (cap < c->svg_len + len)
            cap *= 2;
        char *b = base_realloc(c->svg, cap);
        if (!b) {
            c->svg_oom = 1;
            return CAIRO_STATUS_NO_MEMORY;
        }
        c->svg = b, c->svg_cap = cap;
    }
    memcpy(c->svg + c->svg_len, data, len);
    c->svg_len += len;
    return CAIRO_STATUS_SUCCESS;
}

static void chart_free(analyze_chart *c)
{
    if (c->cr)
        cairo_destroy(c->cr);
    if (c->surface)
        cairo_surface_destroy(c->surface);
    if (c->over)
        fclose(c->over);
    free(c->over_buf); /* open_memstream's */
    base_free(c->svg);
    base_free(c->path);
    memset(c, 0, sizeof *c);
}

analyze_status analyze_chart_create(analyze_chart *c, const char *path, double w, double h)
{
    memset(c, 0, sizeof *c);
    c->png = path && ends_with(path, ".png");
    c->w = w, c->h = h;
    c->path = path ? base_strdup(path) : NULL;
    int svg = path && !c->png;
    c->surface = !svg ? cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)ceil(w), (int)ceil(h))
                      : cairo_svg_surface_create_for_stream(svg_write, c, w, h);
    if (svg)
        c->over = open_memstream(&c->over_buf, &c->over_len);
    if ((path && !c->path) || (svg && !c->over) || cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS) {
        analyze_status st =
            analyze_fail(ANALYZE_ERR_IO, "%s: cannot create the chart: %s", path ? path : "a scratch surface",
                         cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS
                             ? cairo_status_to_string(cairo_surface_status(c->surface))
                             : "out of memory");
        chart_free(c);
        return st;
    }
    c->cr = cairo_create(c->surface);
    cairo_set_source_rgb(c->cr, 1, 1, 1);
    cairo_paint(c->cr);
    cairo_select_font_face(c->cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_line_width(c->cr, 1);
    return ANALYZE_OK;
}

/* cairo's document up to its closing </svg>, the text and titles, the
 * close: into c->path, created here.  0, or -1 (errno set). */
static int svg_save(analyze_chart *c)
{
    if (c->svg_oom || fflush(c->over) != 0) {
        errno = ENOMEM;
        return -1;
    }
    size_t end = c->svg_len;
    while (end >= 6 && memcmp(c->svg + end - 6, "</svg>", 6) != 0)
        end--;
    if (end < 6) {
        errno = EINVAL;
        return -1;
    }
    FILE *f = fopen(c->path, "w");
    if (!f)
        return -1;
    fwrite(c->svg, 1, end - 6, f);
    fwrite(c->over_buf, 1, c->over_len, f);
    fputs("</svg>\n", f);
    int bad = ferror(f);
    if (fclose(f) != 0 || bad) {
        unlink(c->path);
        errno = errno ? errno : EIO;
        return -1;
    }
    return 0;
}

analyze_status analyze_chart_finish(analyze_chart *c)
{
    cairo_status_t st = cairo_status(c->cr);
    if (st == CAIRO_STATUS_SUCCESS && c->png)
        st = cairo_surface_write_to_png(c->surface, c->path);
    cairo_surface_finish(c->surface); /* SVG: completes the document in memory */
    if (st == CAIRO_STATUS_SUCCESS)
        st = cairo_surface_status(c->surface);
    if (st != CAIRO_STATUS_SUCCESS) {
        analyze_fail(ANALYZE_ERR_IO, "%s: cannot write the chart: %s", c->path, cairo_status_to_string(st));
        if (c->png)
            unlink(c->path);
        chart_free(c);
        return ANALYZE_ERR_IO;
    }
    if (!c->png && svg_save(c) != 0) {
        analyze_fail(ANALYZE_ERR_IO, "%s: cannot write the chart: %s", c->path, strerror(errno));
        chart_free(c);
        return ANALYZE_ERR_IO;
    }
    chart_free(c);
    return ANALYZE_OK;
}

void analyze_chart_discard(analyze_chart *c)
{
    if (!c->cr)
        return;
    cairo_surface_finish(c->surface); /* nothing was written to a file yet */
    chart_free(c);
}

/* The current cairo source as #rrggbb (a solid colour: what chart.h sets). */
static void source_hex(analyze_chart *c, char hex[8])
{
    double r = 0, g = 0, b = 0, a = 1;
    cairo_pattern_get_rgba(cairo_get_source(c->cr), &r, &g, &b, &a);
    snprintf(hex, 8, "#%02x%02x%02x", (unsigned)lround(r * 255) & 255, (unsigned)lround(g * 255) & 255,
             (unsigned)lround(b * 255) & 255);
}

void analyze_chart_text(analyze_chart *c, double x, double y, double size, int align, double angle, const char *s)
{
    if (c->over) {
        char hex[8];
        source_hex(c, hex);
        fprintf(
            c->over,
            "<text x=\"%.2f\" y=\"%.2f\" font-family=\"DejaVu Sans,Verdana,sans-serif\" font-size=\"%.2f\" fill=\"%s\"%s",
            x, y, size, hex,
            align < 0    ? ""
            : align == 0 ? " text-anchor=\"middle\""
                         : " text-anchor=\"end\"");
        if (angle != 0)
            fprintf(c->over, " transform=\"rotate(%.2f %.2f %.2f)\"", -angle, x, y);
        fputc('>', c->over);
        analyze_out_xml(c->over, s);
        fputs("</text>\n", c->over);
        return;
    }
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
    cairo_new_path(cr); /* no current point left behind for the next shape */
}

double analyze_chart_text_width(analyze_chart *c, double size, const char *s)
{
    cairo_text_extents_t te;
    cairo_set_font_size(c->cr, size);
    cairo_text_extents(c->cr, s, &te);
    return te.x_advance;
}

static void title_body(analyze_chart *c, const char *fmt, va_list ap)
{
    char buf[512];
    vsnprintf(buf, sizeof buf, fmt, ap);
    fputs("<title>", c->over);
    analyze_out_xml(c->over, buf);
    fputs("</title>", c->over);
}

void analyze_chart_title_rect(analyze_chart *c, double x, double y, double w, double h, const char *fmt, ...)
{
    if (!c->over)
        return;
    fprintf(c->over, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"#000\" fill-opacity=\"0\">", x,
            y, w, h);
    va_list ap;
    va_start(ap, fmt);
    title_body(c, fmt, ap);
    va_end(ap);
    fputs("</rect>\n", c->over);
}

void analyze_chart_title_disc(analyze_chart *c, double x, double y, double r, const char *fmt, ...)
{
    if (!c->over)
        return;
    fprintf(c->over, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%.2f\" fill=\"#000\" fill-opacity=\"0\">", x, y, r);
    va_list ap;
    va_start(ap, fmt);
    title_body(c, fmt, ap);
    va_end(ap);
    fputs("</circle>\n", c->over);
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
