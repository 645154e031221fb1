/* plot.c -- the report's charts (plot.h), drawn with cairo through chart.h. */
#include "analyze/plot.h"
#include "analyze/analyze_status.h"

#include "analyze/chart.h"
#include "analyze/out.h"
#include "base/alloc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FONT 11.0
#define TITLE 14.0

/* The seven op classes in a fixed order, so a class has one colour in
 * every chart; a label the list does not know comes after them. */
static const char *const class_order[] = { "convolution",   "matrix",       "elementwise", "reduction",
                                           "data_movement", "optimization", "random" };
#define NCLASS_ORDER (sizeof class_order / sizeof class_order[0])

/* The palette index of `name` in `order`; a name the list lacks gets one of
 * the colours after it (by a hash of the name). */
static size_t colour_in(const char *const *order, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(name, order[i]) == 0)
            return i;
    size_t h = 0;
    for (const char *c = name; *c; c++)
        h = h * 31 + (unsigned char)*c;
    return n + h % 5;
}

static size_t class_colour(const char *name) { return colour_in(class_order, NCLASS_ORDER, name); }

/* The same for tensor roles. */
static const char *const role_order[] = { "weight", "activation", "gradient", "optimizer", "input", "workspace" };
#define NROLE_ORDER (sizeof role_order / sizeof role_order[0])

static size_t role_colour(const char *name) { return colour_in(role_order, NROLE_ORDER, name); }

/* Names in their colour order (the fixed list first), then by name. */
static size_t (*sort_colour)(const char *);
static int cmp_colour_order(const void *x, const void *y)
{
    const char *a = *(const char *const *)x, *b = *(const char *const *)y;
    size_t ca = sort_colour(a), cb = sort_colour(b);
    return ca != cb ? (ca < cb ? -1 : 1) : strcmp(a, b);
}

static void sort_by_colour(const char **v, size_t n, size_t (*colour)(const char *))
{
    if (n < 2) /* v may be NULL */
        return;
    sort_colour = colour;
    qsort(v, n, sizeof *v, cmp_colour_order);
}

static analyze_status oom(void) { return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory"); }

static double max_label_width(analyze_chart *c, analyze_profile *const *p, size_t n)
{
    char lb[512];
    double w = 0;
    for (size_t i = 0; i < n; i++) {
        double t = analyze_chart_text_width(c, FONT, analyze_out_label(p[i], lb, sizeof lb));
        if (t > w)
            w = t;
    }
    return w;
}

/* A row of legend swatches from (x, y), wrapping at width w; returns the y
 * below it.  draw 0: only measures. */
static double legend(analyze_chart *c, double x, double y, double w, const char *const *labels, const size_t *colours,
                     size_t n, int draw)
{
    double cx = x;
    for (size_t i = 0; i < n; i++) {
        double tw = analyze_chart_text_width(c, FONT, labels[i]) + 30;
        if (cx + tw > x + w && cx > x)
            cx = x, y += 18;
        if (draw) {
            analyze_chart_palette(c, colours[i]);
            cairo_rectangle(c->cr, cx, y - 10, 12, 12);
            cairo_fill(c->cr);
            analyze_chart_rgb(c, 0.1, 0.1, 0.1);
            analyze_chart_text(c, cx + 16, y, FONT, -1, 0, labels[i]);
        }
        cx += tw;
    }
    return y + 18;
}

/* Text on a fill of palette colour i: white on a dark colour, else near black. */
static void ink_on_palette(analyze_chart *c, size_t i)
{
    double r, g, b, a;
    analyze_chart_palette(c, i);
    cairo_pattern_get_rgba(cairo_get_source(c->cr), &r, &g, &b, &a);
    if (0.299 * r + 0.587 * g + 0.114 * b < 0.6)
        analyze_chart_rgb(c, 1, 1, 1);
    else
        analyze_chart_rgb(c, 0.1, 0.1, 0.1);
}

/* A step of 1, 2 or 5 times a power of ten giving at most `ticks` steps over range. */
static double nice_step(double range, int ticks)
{
    if (!(range > 0))
        return 1;
    double raw = range / ticks, p = pow(10, floor(log10(raw)));
    return raw <= p ? p : raw <= 2 * p ? 2 * p : raw <= 5 * p ? 5 * p : 10 * p;
}

static double decade_down(double v) { return pow(10, floor(log10(v))); }
static double decade_up(double v) { return pow(10, ceil(log10(v))); }

/* A 0-100% axis under [x0, x0 + w] at y, with its title below. */
static void share_axis(analyze_chart *c, double x0, double w, double y, const char *title)
{
    char num[32];
    analyze_chart_rgb(c, 0.4, 0.4, 0.4);
    cairo_set_line_width(c->cr, 1);
    cairo_move_to(c->cr, x0, y);
    cairo_line_to(c->cr, x0 + w, y);
    for (int k = 0; k <= 4; k++) {
        cairo_move_to(c->cr, x0 + w * k / 4, y);
        cairo_line_to(c->cr, x0 + w * k / 4, y + 4);
    }
    cairo_stroke(c->cr);
    analyze_chart_rgb(c, 0.1, 0.1, 0.1);
    for (int k = 0; k <= 4; k++) {
        snprintf(num, sizeof num, "%d%%", 25 * k);
        analyze_chart_text(c, x0 + w * k / 4, y + 16, 10, 0, 0, num);
    }
    analyze_chart_rgb(c, 0.3, 0.3, 0.3);
    analyze_chart_text(c, x0 + w / 2, y + 32, 10, 0, 0, title);
}

/* Stacked horizontal bars: one per trace, value[i * ncol + j] in part j, each
 * bar its row's whole (100%), on a 0-100% axis; a value inside each part
 * wide enough for it, every part's exact value in its hover title.
 * memory: the values are bytes, and a second panel gives each row's total
 * (its peak) on a log scale, so small and large models both read. */
static analyze_status stacked_bars(const char *path, const char *title, const char *axis, analyze_profile *const *p,
                                   size_t n, const char **col, size_t ncol, size_t (*colour)(const char *),
                                   const double *value, int memory, const char *of)
{
    analyze_chart c;
    analyze_status st;
    double rowh = 26, barw = 520, pw = memory ? 200 : 0, vw = memory ? 80 : 0, gap = 36;
    if ((st = analyze_chart_create(&c, NULL, 1, 1))) /* a scratch surface to measure the labels */
        return st;
    double lw = max_label_width(&c, p, n) + 16;
    double axis_y = 40 + rowh * (double)n + 4;
    double legend_h = legend(&c, 0, 0, barw + pw + vw, col, NULL, ncol, 0);
    analyze_chart_discard(&c);
    double w = lw + barw + (memory ? gap + pw + vw : 20), h = axis_y + 40 + 14 + legend_h + 6;
    if ((st = analyze_chart_create(&c, path, w, h)))
        return st;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, title);
    size_t *colours = base_malloc((ncol ? ncol : 1) * sizeof *colours);
    double *total = base_calloc(n ? n : 1, sizeof *total);
    if (!colours || !total) {
        base_free(colours), base_free(total);
        analyze_chart_discard(&c);
        return oom();
    }
    for (size_t j = 0; j < ncol; j++)
        colours[j] = colour(col[j]);
    double tmin = INFINITY, tmax = 0;
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < ncol; j++)
            total[i] += value[i * ncol + j];
        if (total[i] > 0)
            tmin = fmin(tmin, total[i]), tmax = fmax(tmax, total[i]);
    }
    char lb[512], num[64], mib[32];
    for (size_t i = 0; i < n; i++) {
        double y = 40 + rowh * (double)i, x = lw;
        analyze_out_label(p[i], lb, sizeof lb);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw - 8, y + 17, FONT, 1, 0, lb);
        for (size_t j = 0; j < ncol; j++) {
            double v = value[i * ncol + j], sh = total[i] > 0 ? v / total[i] : 0, bw = sh * barw;
            if (bw <= 0)
                continue;
            analyze_chart_palette(&c, colours[j]);
            cairo_rectangle(c.cr, x, y + 3, bw, rowh - 6);
            cairo_fill(c.cr);
            /* the value inside its part: "12%", else a bare "3" in smaller type */
            snprintf(num, sizeof num, sh >= 0.095 || sh < 0.005 ? "%.0f%%" : "%.1f%%", 100 * sh);
            double fs = 9.5;
            if (analyze_chart_text_width(&c, fs, num) + 4 > bw) {
                snprintf(num, sizeof num, "%.0f", 100 * sh);
                fs = 8;
            }
            if (sh >= 0.005 && analyze_chart_text_width(&c, fs, num) + 3 <= bw) {
                ink_on_palette(&c, colours[j]);
                analyze_chart_text(&c, x + bw / 2, y + 17, fs, 0, 0, num);
            }
            if (memory)
                analyze_chart_title_rect(&c, x, y + 3, bw, rowh - 6, "%s: %s %s, %.1f%% of its peak", lb, col[j],
                                         analyze_out_bytes((uint64_t)v, mib, sizeof mib), 100 * sh);
            else
                analyze_chart_title_rect(&c, x, y + 3, bw, rowh - 6, "%s: %s %.1f%% of %s", lb, col[j], 100 * sh, of);
            x += bw;
        }
    }
    share_axis(&c, lw, barw, axis_y, axis);
    if (memory && tmax > 0) { /* each peak on a log axis */
        analyze_scale sx = { decade_down(tmin / 1048576.0), decade_up(tmax / 1048576.0), lw + barw + gap,
                             lw + barw + gap + pw, 1 };
        if (sx.hi <= sx.lo)
            sx.hi = sx.lo * 10;
        for (size_t i = 0; i < n; i++) {
            if (!(total[i] > 0))
                continue;
            double y = 40 + rowh * (double)i, x1 = analyze_scale_at(&sx, total[i] / 1048576.0);
            analyze_chart_rgb(&c, 0.55, 0.55, 0.55);
            cairo_rectangle(c.cr, sx.p0, y + 6, fmax(x1 - sx.p0, 1), rowh - 12);
            cairo_fill(c.cr);
            analyze_out_bytes((uint64_t)total[i], mib, sizeof mib);
            analyze_chart_title_rect(&c, sx.p0, y + 6, fmax(x1 - sx.p0, 1), rowh - 12, "%s: peak %s", lb, mib);
            analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
            analyze_chart_text(&c, x1 + 4, y + 17, 10, -1, 0, mib);
        }
        analyze_chart_rgb(&c, 0.4, 0.4, 0.4);
        cairo_move_to(c.cr, sx.p0, axis_y);
        cairo_line_to(c.cr, sx.p1, axis_y);
        for (double v = sx.lo; v <= sx.hi * 1.0001; v *= 10) {
            cairo_move_to(c.cr, analyze_scale_at(&sx, v), axis_y);
            cairo_line_to(c.cr, analyze_scale_at(&sx, v), axis_y + 4);
        }
        cairo_stroke(c.cr);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        for (double v = sx.lo; v <= sx.hi * 1.0001; v *= 10) {
            snprintf(num, sizeof num, "%g", v);
            analyze_chart_text(&c, analyze_scale_at(&sx, v), axis_y + 16, 10, 0, 0, num);
        }
        analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
        analyze_chart_text(&c, sx.p0 + pw / 2, axis_y + 32, 10, 0, 0, "peak, MiB (log scale)");
    }
    legend(&c, lw, axis_y + 40 + 14 + 10, barw + pw + vw, col, colours, ncol, 1);
    base_free(colours);
    base_free(total);
    return analyze_chart_finish(&c);
}

/* ---- classes --------------------------------------------------------------------------- */
analyze_status analyze_plot_classes(const char *path, analyze_profile *const *p, size_t n)
{
    analyze_names col = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p[i]->nclasses; k++)
            if (analyze_names_add(&col, p[i]->classes[k]))
                goto nomem;
    sort_by_colour(col.v, col.n, class_colour);
    double *value = base_calloc((n ? n : 1) * (col.n ? col.n : 1), sizeof *value);
    if (!value)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        analyze_stat *cs = base_calloc(p[i]->nclasses ? p[i]->nclasses : 1, sizeof *cs);
        if (!cs) {
            base_free(value);
            goto nomem;
        }
        analyze_profile_class_stats(p[i], cs);
        double total = (double)analyze_profile_total_ns(p[i]);
        for (size_t k = 0; k < p[i]->nclasses; k++)
            for (size_t j = 0; j < col.n; j++)
                if (strcmp(col.v[j], p[i]->classes[k]) == 0 && total > 0)
                    value[i * col.n + j] = (double)cs[k].ns / total;
        base_free(cs);
    }
    analyze_status rc = stacked_bars(path, "Op time by class", "share of each trace's op time", p, n, col.v, col.n,
                                     class_colour, value, 0, "op time");
    base_free(value);
    analyze_names_free(&col);
    return rc;
nomem:
    analyze_names_free(&col);
    return oom();
}

/* ---- memory ---------------------------------------------------------------------------- */
analyze_status analyze_plot_memory(const char *path, analyze_profile *const *p, size_t n)
{
    analyze_names col = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < p[i]->nroles; r++)
            if (analyze_names_add(&col, p[i]->roles[r])) {
                analyze_names_free(&col);
                return oom();
            }
    sort_by_colour(col.v, col.n, role_colour);
    double *value = base_calloc((n ? n : 1) * (col.n ? col.n : 1), sizeof *value);
    if (!value) {
        analyze_names_free(&col);
        return oom();
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0; r < p[i]->nroles; r++)
            for (size_t j = 0; j < col.n; j++)
                if (strcmp(col.v[j], p[i]->roles[r]) == 0)
                    value[i * col.n + j] = (double)p[i]->role_at_peak[r];
    }
    analyze_status rc = stacked_bars(path, "Tensor memory at the peak, by role", "share of each trace's peak", p, n,
                                     col.v, col.n, role_colour, value, 1, "its peak");
    base_free(value);
    analyze_names_free(&col);
    return rc;
}

/* ---- ranks ------------------------------------------------------------------------------ */
static const char *const rank_parts[] = { "busy, no communication", "communication", "idle" };
static size_t rank_colour(const char *name)
{
    return strcmp(name, rank_parts[0]) == 0 ? 0 : strcmp(name, rank_parts[1]) == 0 ? 3 : 7;
}

analyze_status analyze_plot_ranks(const char *path, const analyze_ranks *a)
{
    analyze_profile **pp = base_calloc(a->n ? a->n : 1, sizeof *pp);
    double *value = base_calloc(a->n ? a->n * 3 : 1, sizeof *value);
    if (!pp || !value) {
        base_free(pp), base_free(value);
        return oom();
    }
    for (size_t i = 0; i < a->n; i++) { /* each rank's mean step, split in three */
        const analyze_rank_step *m = &a->r[i].mean;
        pp[i] = (analyze_profile *)a->r[i].p; /* read only: its label */
        value[i * 3] = (double)(m->busy_ns - m->comm_ns);
        value[i * 3 + 1] = (double)m->comm_ns;
        value[i * 3 + 2] = (double)m->idle_ns;
    }
    analyze_status rc =
        stacked_bars(path, "Each rank's step: device busy, communication, idle", "share of each rank's mean step time",
                     pp, a->n, (const char **)rank_parts, 3, rank_colour, value, 0, "its step");
    base_free(pp), base_free(value);
    return rc;
}

/* ---- training vs inference ------------------------------------------------------------ */
analyze_status analyze_plot_compare(const char *path, analyze_profile *const *p, const analyze_pair *pairs,
                                    size_t npairs)
{
    analyze_chart c;
    analyze_status st;
    if ((st = analyze_chart_create(&c, NULL, 1, 1)))
        return st;
    double lw = 0, full = 0;
    for (size_t i = 0; i < npairs; i++) {
        double t = analyze_chart_text_width(&c, FONT, analyze_profile_model(p[pairs[i].train]));
        lw = fmax(lw, t);
        full = fmax(full, fmax(analyze_step_ns(p[pairs[i].train]), analyze_step_ns(p[pairs[i].infer])));
    }
    analyze_chart_discard(&c);
    lw += 16;
    double barw = 480, rowh = 44, h = 50 + rowh * (double)npairs + 40;
    if ((st = analyze_chart_create(&c, path, lw + barw + 200, h)))
        return st;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, "Step time: training vs inference");
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    analyze_chart_text(&c, lw + barw + 120, 36, 10, 1, 0, "train / infer");
    char num[96];
    for (size_t i = 0; i < npairs; i++) {
        double y = 40 + rowh * (double)i;
        double tr = analyze_step_ns(p[pairs[i].train]), in = analyze_step_ns(p[pairs[i].infer]);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw - 8, y + 24, FONT, 1, 0, analyze_profile_model(p[pairs[i].train]));
        const double v[2] = { tr, in };
        for (int k = 0; k < 2; k++) {
            double bw = full > 0 ? v[k] / full * barw : 0;
            analyze_chart_palette(&c, k ? 4 : 0);
            cairo_rectangle(c.cr, lw, y + 4 + 18 * k, bw, 16);
            cairo_fill(c.cr);
            analyze_chart_title_rect(&c, lw, y + 4 + 18 * k, fmax(bw, 1), 16, "%s %s step: %.3f ms",
                                     analyze_profile_model(p[pairs[i].train]), k ? "inference" : "training",
                                     v[k] / 1e6);
            analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
            snprintf(num, sizeof num, "%.2f ms", v[k] / 1e6);
            analyze_chart_text(&c, lw + bw + 6, y + 17 + 18 * k, 10, -1, 0, num);
        }
        if (in > 0) {
            snprintf(num, sizeof num, "%.2fx", tr / in);
            analyze_chart_text(&c, lw + barw + 120, y + 26, FONT, 1, 0, num);
        }
    }
    static const char *const keys[] = { "training step", "inference step" };
    static const size_t colours[] = { 0, 4 };
    legend(&c, lw, 40 + rowh * (double)npairs + 20, barw, keys, colours, 2, 1);
    return analyze_chart_finish(&c);
}

/* ---- parallelism ------------------------------------------------------------------------- */
/* A trace's label: "model/mode" ("?" for what the trace does not say). */
static void par_label(char *buf, size_t len, const analyze_par_trace *t)
{
    snprintf(buf, len, "%s/%s", t->model[0] ? t->model : "?", t->mode[0] ? t->mode : "?");
}

analyze_status analyze_plot_parallelism(const char *path, const analyze_parallelism *a)
{
    analyze_chart c;
    analyze_status st;
    char label[160], num[96];
    if ((st = analyze_chart_create(&c, NULL, 1, 1)))
        return st;
    double lw = 0, top = 2;
    for (size_t i = 0; i < a->n; i++) {
        par_label(label, sizeof label, &a->t[i]);
        lw = fmax(lw, analyze_chart_text_width(&c, FONT, label));
        top = fmax(top, fmax(a->t[i].parallelism, a->t[i].max_step));
    }
    analyze_chart_discard(&c);
    lw += 16;
    top = ceil(top);
    double barw = 440, rowh = 26, T = 56, h = T + rowh * (double)a->n + 40;
    analyze_scale sx = { 0, top, lw, lw + barw, 0 };
    if ((st = analyze_chart_create(&c, path, lw + barw + 230, h)))
        return st;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0,
                       "Average parallelism of the data flow: op time over the critical path");
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    analyze_chart_text(&c, lw + barw + 220, T - 8, 10, 1, 0, "op time / critical path per step");
    for (double v = 0; v <= top + 1e-9; v += top > 6 ? 2 : 1) { /* the axis: a line at each unit */
        double x = analyze_scale_at(&sx, v);
        analyze_chart_rgb(&c, v == 1 ? 0.2 : 0.85, v == 1 ? 0.2 : 0.85, v == 1 ? 0.2 : 0.85);
        cairo_set_line_width(c.cr, v == 1 ? 1.2 : 0.8);
        cairo_move_to(c.cr, x, T - 4);
        cairo_line_to(c.cr, x, T + rowh * (double)a->n);
        cairo_stroke(c.cr);
        analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
        snprintf(num, sizeof num, "%g", v);
        analyze_chart_text(&c, x, T + rowh * (double)a->n + 14, 10, 0, 0, num);
    }
    analyze_chart_text(&c, analyze_scale_at(&sx, 1) + 4, T - 8, 10, -1, 0, "1: a chain");
    for (size_t i = 0; i < a->n; i++) {
        const analyze_par_trace *t = &a->t[i];
        double y = T + rowh * (double)i, x0 = analyze_scale_at(&sx, 0), x = analyze_scale_at(&sx, t->parallelism);
        par_label(label, sizeof label, t);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw - 8, y + 17, FONT, 1, 0, label);
        analyze_chart_palette(&c, 0);
        cairo_rectangle(c.cr, x0, y + 5, x - x0, 16);
        cairo_fill(c.cr);
        analyze_chart_title_rect(&c, x0, y + 5, fmax(x - x0, 1), 16,
                                 "%s: average parallelism %.2f; op time %.3f ms in %.0f ops, critical path %.3f ms in "
                                 "%.0f ops per step",
                                 label, t->parallelism, t->op_ns / 1e6, t->ops, t->critical_ns / 1e6, t->critical_ops);
        if (t->max_step > t->min_step) { /* the steps' own: lowest to highest */
            double a0 = analyze_scale_at(&sx, t->min_step), a1 = analyze_scale_at(&sx, t->max_step);
            analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
            cairo_set_line_width(c.cr, 1);
            cairo_move_to(c.cr, a0, y + 13);
            cairo_line_to(c.cr, a1, y + 13);
            cairo_move_to(c.cr, a0, y + 9);
            cairo_line_to(c.cr, a0, y + 17);
            cairo_move_to(c.cr, a1, y + 9);
            cairo_line_to(c.cr, a1, y + 17);
            cairo_stroke(c.cr);
            analyze_chart_title_rect(&c, a0, y + 9, fmax(a1 - a0, 1), 8, "%s: steps from %.2f to %.2f", label,
                                     t->min_step, t->max_step);
        }
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        snprintf(num, sizeof num, "%.2f", t->parallelism);
        analyze_chart_text(&c, fmax(x, analyze_scale_at(&sx, t->max_step)) + 6, y + 17, 10, -1, 0, num);
        snprintf(num, sizeof num, "%.3f / %.3f ms", t->op_ns / 1e6, t->critical_ns / 1e6);
        analyze_chart_text(&c, lw + barw + 220, y + 17, 10, 1, 0, num);
    }
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    analyze_chart_text(&c, lw, h - 8, 10, -1, 0,
                       "bar: the trace's average parallelism; whisker: its steps' lowest to highest");
    return analyze_chart_finish(&c);
}

/* ---- scaling ----------------------------------------------------------------------------- */
static void speedup_line(analyze_chart *c, const analyze_scaling *s, const analyze_scaling_row *r,
                         const analyze_scale *sx, const analyze_scale *sy)
{
    int started = 0;
    for (size_t i = 0; i < s->n; i++) {
        if (!isfinite(r->speedup[i]))
            continue;
        double x = analyze_scale_at(sx, s->threads[i]), y = analyze_scale_at(sy, r->speedup[i]);
        if (started)
            cairo_line_to(c->cr, x, y);
        else
            cairo_move_to(c->cr, x, y);
        started = 1;
    }
    cairo_stroke(c->cr);
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(r->speedup[i])) {
            double x = analyze_scale_at(sx, s->threads[i]), y = analyze_scale_at(sy, r->speedup[i]);
            cairo_new_path(c->cr);
            cairo_arc(c->cr, x, y, 3, 0, 2 * M_PI);
            cairo_fill(c->cr);
            analyze_chart_title_rect(c, x - 4, y - 4, 8, 8, "%s at %u thread%s: speedup %.2f", r->name, s->threads[i],
                                     s->threads[i] == 1 ? "" : "s", r->speedup[i]);
        }
}

analyze_status analyze_plot_scaling(const char *path, const analyze_scaling *s, size_t top)
{
    double tmax = s->threads[s->n - 1], t0 = s->threads[0], ymax = tmax / t0;
    size_t k = top && top < s->nops ? top : s->nops;
    for (size_t j = 0; j < k; j++)
        for (size_t i = 0; i < s->n; i++)
            if (isfinite(s->ops[j].speedup[i]))
                ymax = fmax(ymax, s->ops[j].speedup[i]);
    double L = 60, T = 40, W = 520, H = 360;
    analyze_scale sx = { t0, tmax, L, L + W, tmax / t0 >= 4 }, sy = { 0, ceil(ymax * 1.1), T + H, T, 0 };
    analyze_chart c;
    analyze_status st;
    if ((st = analyze_chart_create(&c, path, L + W + 260, T + H + 60)))
        return st;
    cairo_t *cr = c.cr;
    char num[160];
    snprintf(num, sizeof num, "Speedup over %u thread%s: %s/%s", s->threads[0], s->threads[0] == 1 ? "" : "s",
             analyze_profile_model(s->p[0]), analyze_profile_mode(s->p[0]));
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, num);
    /* axes: a tick at every thread count, speedup in whole numbers */
    cairo_set_line_width(cr, 0.5);
    for (size_t i = 0; i < s->n; i++) {
        double x = analyze_scale_at(&sx, s->threads[i]);
        analyze_chart_rgb(&c, 0.88, 0.88, 0.88);
        cairo_move_to(cr, x, T);
        cairo_line_to(cr, x, T + H);
        cairo_stroke(cr);
        snprintf(num, sizeof num, "%u", s->threads[i]);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, x, T + H + 16, 10, 0, 0, num);
    }
    double step = sy.hi > 10 ? ceil(sy.hi / 10) : 1;
    for (double v = 0; v <= sy.hi; v += step) {
        double y = analyze_scale_at(&sy, v);
        analyze_chart_rgb(&c, 0.88, 0.88, 0.88);
        cairo_move_to(cr, L, y);
        cairo_line_to(cr, L + W, y);
        cairo_stroke(cr);
        snprintf(num, sizeof num, "%g", v);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, L - 6, y + 4, 10, 1, 0, num);
    }
    analyze_chart_rgb(&c, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, L, T, W, H);
    cairo_stroke(cr);
    analyze_chart_text(&c, L + W / 2, T + H + 40, FONT, 0, 0, "threads");
    analyze_chart_text(&c, 20, T + H / 2, FONT, 0, 90, "speedup");
    /* the ideal, the op time, the op types */
    double ly = T + 10;
    cairo_set_line_width(cr, 1.5);
    double dash = 4;
    cairo_set_dash(cr, &dash, 1, 0);
    analyze_chart_rgb(&c, 0.6, 0.6, 0.6);
    /* speedup = T / T0: a line on linear axes, a curve on the log thread axis */
    for (int i = 0; i <= 64; i++) {
        double t = sx.log ? t0 * pow(tmax / t0, i / 64.0) : t0 + (tmax - t0) * i / 64.0;
        double x = analyze_scale_at(&sx, t), y = analyze_scale_at(&sy, t / t0);
        if (i)
            cairo_line_to(cr, x, y);
        else
            cairo_move_to(cr, x, y);
    }
    cairo_move_to(cr, L + W + 16, ly - 4); /* its legend sample */
    cairo_line_to(cr, L + W + 32, ly - 4);
    cairo_stroke(cr);
    cairo_set_dash(cr, NULL, 0, 0);
    analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
    analyze_chart_text(&c, L + W + 36, ly, FONT, -1, 0, "ideal (threads / baseline)");
    cairo_set_line_width(cr, 3);
    analyze_chart_rgb(&c, 0, 0, 0);
    speedup_line(&c, s, &s->total, &sx, &sy);
    ly += 18;
    cairo_move_to(cr, L + W + 16, ly - 4);
    cairo_line_to(cr, L + W + 32, ly - 4);
    cairo_stroke(cr);
    analyze_chart_text(&c, L + W + 36, ly, FONT, -1, 0, "all ops");
    cairo_set_line_width(cr, 1.5);
    for (size_t j = 0; j < k; j++) {
        analyze_chart_palette(&c, j);
        speedup_line(&c, s, &s->ops[j], &sx, &sy);
        cairo_rectangle(cr, L + W + 18, (ly += 18) - 9, 12, 10);
        cairo_fill(cr);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, L + W + 36, ly, FONT, -1, 0, s->ops[j].name);
    }
    return analyze_chart_finish(&c);
}

/* ---- op types heat map ----------------------------------------------------------------- */
typedef struct op_total {
    const char *name;
    double share; /* summed over the traces */
} op_total;

static int cmp_op_total(const void *x, const void *y)
{
    const op_total *a = x, *b = y;
    if (a->share != b->share)
        return a->share > b->share ? -1 : 1;
    return strcmp(a->name, b->name);
}

static double op_share(const analyze_profile *p, const char *name)
{
    uint64_t total = analyze_profile_total_ns(p);
    for (size_t k = 0; k < p->nops; k++)
        if (strcmp(p->ops[k].name, name) == 0)
            return total ? (double)p->ops[k].all.ns / (double)total : 0;
    return 0;
}

analyze_status analyze_plot_optypes(const char *path, analyze_profile *const *p, size_t n, size_t top)
{
    analyze_names all = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p[i]->nops; k++)
            if (p[i]->ops[k].all.count && analyze_names_add(&all, p[i]->ops[k].name)) {
                analyze_names_free(&all);
                return oom();
            }
    op_total *ot = base_calloc(all.n ? all.n : 1, sizeof *ot);
    if (!ot) {
        analyze_names_free(&all);
        return oom();
    }
    double vmax = 0;
    for (size_t j = 0; j < all.n; j++) {
        ot[j].name = all.v[j];
        for (size_t i = 0; i < n; i++) {
            double s = op_share(p[i], all.v[j]);
            ot[j].share += s;
            if (s > vmax)
                vmax = s;
        }
    }
    qsort(ot, all.n, sizeof *ot, cmp_op_total);
    size_t ncol = top && top < all.n ? top : all.n;
    analyze_chart c;
    if (analyze_chart_create(&c, NULL, 1, 1))
        goto fail;
    double lw = max_label_width(&c, p, n) + 16, head = 0;
    for (size_t j = 0; j < ncol; j++) {
        double t = analyze_chart_text_width(&c, FONT, ot[j].name) * 0.71 + 10;
        if (t > head)
            head = t;
    }
    analyze_chart_discard(&c);
    double cw = 46, ch = 24, top0 = 36 + head;
    double kw = 240, w = fmax(lw + cw * (double)ncol + head * 0.71 + 20, lw + kw + 40);
    if (analyze_chart_create(&c, path, w, top0 + ch * (double)n + 84))
        goto fail;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, "Share of op time by op type");
    char lb[512], num[32];
    for (size_t j = 0; j < ncol; j++) {
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw + cw * (double)j + cw / 2, top0 - 6, FONT, -1, 45, ot[j].name);
    }
    for (size_t i = 0; i < n; i++) {
        double y = top0 + ch * (double)i;
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw - 8, y + 16, FONT, 1, 0, analyze_out_label(p[i], lb, sizeof lb));
        for (size_t j = 0; j < ncol; j++) {
            double s = op_share(p[i], ot[j].name), v = vmax > 0 ? s / vmax : 0;
            analyze_chart_ramp(&c, v);
            cairo_rectangle(c.cr, lw + cw * (double)j, y, cw - 1, ch - 1);
            cairo_fill(c.cr);
            analyze_chart_title_rect(&c, lw + cw * (double)j, y, cw - 1, ch - 1, "%s: %s %.2f%% of op time", lb,
                                     ot[j].name, 100 * s);
            if (s >= 0.005) {
                snprintf(num, sizeof num, "%.0f", 100 * s);
                if (v > 0.5)
                    analyze_chart_rgb(&c, 1, 1, 1);
                else
                    analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
                analyze_chart_text(&c, lw + cw * (double)j + cw / 2, y + 16, 10, 0, 0, num);
            }
        }
    }
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    char note[96];
    snprintf(note, sizeof note, "%% of each trace's op time; %zu op type%s", ncol, ncol == 1 ? "" : "s");
    analyze_chart_text(&c, lw, top0 + ch * (double)n + 20, 10, -1, 0, note);
    /* the colour scale: 0 to the largest share shown */
    double ky = top0 + ch * (double)n + 34;
    for (int k = 0; k < 48; k++) {
        analyze_chart_ramp(&c, (k + 0.5) / 48);
        cairo_rectangle(c.cr, lw + kw * k / 48, ky, kw / 48 + 0.5, 12);
        cairo_fill(c.cr);
    }
    analyze_chart_rgb(&c, 0.4, 0.4, 0.4);
    cairo_rectangle(c.cr, lw, ky, kw, 12);
    cairo_stroke(c.cr);
    double kstep = nice_step(100 * vmax, 4);
    for (double v = 0; v <= 100 * vmax * 1.0001 && vmax > 0; v += kstep) {
        double x = lw + kw * v / (100 * vmax);
        analyze_chart_rgb(&c, 0.4, 0.4, 0.4);
        cairo_move_to(c.cr, x, ky + 12);
        cairo_line_to(c.cr, x, ky + 16);
        cairo_stroke(c.cr);
        snprintf(num, sizeof num, "%g%%", v);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, x, ky + 28, 10, 0, 0, num);
    }
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    analyze_chart_text(&c, lw + kw + 10, ky + 10, 10, -1, 0, "share of op time");
    base_free(ot);
    analyze_names_free(&all);
    return analyze_chart_finish(&c);
fail:
    base_free(ot);
    analyze_names_free(&all);
    return ANALYZE_ERR_IO; /* a chart that could not be created (base_errmsg() says why) */
}

/* ---- similarity ------------------------------------------------------------------------ */
analyze_status analyze_plot_similarity(const char *path, const analyze_sim *s)
{
    size_t n = s->n;
    analyze_chart c;
    analyze_status st;
    if ((st = analyze_chart_create(&c, NULL, 1, 1)))
        return st;
    double lw = 0;
    for (size_t i = 0; i < n; i++) {
        double t = analyze_chart_text_width(&c, FONT, s->labels[i]);
        if (t > lw)
            lw = t;
    }
    analyze_chart_discard(&c);
    lw += 16;
    double cell = 40, head = lw * 0.71 + 10, top0 = 36 + head, dw = 220;
    double w = lw + cell * (double)n + 20 + dw + 30, h = top0 + cell * (double)n + 56;
    if ((st = analyze_chart_create(&c, path, w, h)))
        return st;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, "Cosine similarity of op-type time, average-linkage clustering");
    char num[32];
    for (size_t a = 0; a < n; a++) {
        size_t i = s->order[a];
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw - 8, top0 + cell * (double)a + cell / 2 + 4, FONT, 1, 0, s->labels[i]);
        analyze_chart_text(&c, lw + cell * (double)a + cell / 2, top0 - 6, FONT, -1, 45, s->labels[i]);
        for (size_t b = 0; b < n; b++) {
            double v = s->cos[i * n + s->order[b]];
            analyze_chart_ramp(&c, v);
            cairo_rectangle(c.cr, lw + cell * (double)b, top0 + cell * (double)a, cell - 1, cell - 1);
            cairo_fill(c.cr);
            analyze_chart_title_rect(&c, lw + cell * (double)b, top0 + cell * (double)a, cell - 1, cell - 1,
                                     "%s vs %s: cosine %.4f", s->labels[i], s->labels[s->order[b]], v);
            snprintf(num, sizeof num, "%.2f", v);
            if (v > 0.5)
                analyze_chart_rgb(&c, 1, 1, 1);
            else
                analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
            analyze_chart_text(&c, lw + cell * (double)b + cell / 2, top0 + cell * (double)a + cell / 2 + 4, 10, 0, 0,
                               num);
        }
    }
    /* the dendrogram: leaves at the rows, merges at their distance */
    double x0 = lw + cell * (double)n + 20, dmax = 0;
    for (size_t k = 0; k + 1 < n; k++)
        if (s->merges[k].distance > dmax)
            dmax = s->merges[k].distance;
    if (dmax <= 0)
        dmax = 1;
    double step = nice_step(dmax, 4);
    dmax = ceil(dmax / step - 1e-9) * step; /* the axis ends on a tick */
    double *nx = base_malloc((2 * n) * sizeof *nx), *ny = base_malloc((2 * n) * sizeof *ny);
    if (!nx || !ny) {
        base_free(nx), base_free(ny);
        analyze_chart_discard(&c);
        return oom();
    }
    for (size_t a = 0; a < n; a++)
        nx[s->order[a]] = x0, ny[s->order[a]] = top0 + cell * (double)a + cell / 2;
    /* a merge sits at its distance, but at least a few pixels right of
     * both its children: a merge at distance ~0 stays visible */
    analyze_chart_rgb(&c, 0.2, 0.2, 0.2);
    cairo_set_line_width(c.cr, 1.5);
    for (size_t k = 0; k + 1 < n; k++) {
        const analyze_merge *m = &s->merges[k];
        double x = fmax(x0 + m->distance / dmax * dw, fmax(nx[m->a], nx[m->b]) + 5);
        cairo_move_to(c.cr, nx[m->a], ny[m->a]);
        cairo_line_to(c.cr, x, ny[m->a]);
        cairo_line_to(c.cr, x, ny[m->b]);
        cairo_line_to(c.cr, nx[m->b], ny[m->b]);
        cairo_stroke(c.cr);
        nx[n + k] = x, ny[n + k] = (ny[m->a] + ny[m->b]) / 2;
        cairo_arc(c.cr, x, ny[n + k], 2.5, 0, 2 * M_PI);
        cairo_fill(c.cr);
        analyze_chart_title_disc(&c, x, ny[n + k], 6, "merge of %zu traces at distance %.4f (1 - cosine)", m->size,
                                 m->distance);
    }
    base_free(nx), base_free(ny);
    /* its distance axis */
    double ay = top0 + cell * (double)n + 6;
    analyze_chart_rgb(&c, 0.4, 0.4, 0.4);
    cairo_set_line_width(c.cr, 1);
    cairo_move_to(c.cr, x0, ay);
    cairo_line_to(c.cr, x0 + dw, ay);
    for (double v = 0; v <= dmax * 1.0001; v += step) {
        cairo_move_to(c.cr, x0 + v / dmax * dw, ay);
        cairo_line_to(c.cr, x0 + v / dmax * dw, ay + 4);
    }
    cairo_stroke(c.cr);
    analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
    for (double v = 0; v <= dmax * 1.0001; v += step) {
        snprintf(num, sizeof num, "%g", v);
        analyze_chart_text(&c, x0 + v / dmax * dw, ay + 16, 10, 0, 0, num);
    }
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    analyze_chart_text(&c, x0 + dw / 2, ay + 32, 10, 0, 0, "distance (1 - cosine)");
    return analyze_chart_finish(&c);
}

/* ---- roofline -------------------------------------------------------------------------- */
static int plottable(const analyze_roof_row *r)
{
    return isfinite(r->intensity) && r->intensity > 0 && isfinite(r->gflops) && r->gflops > 0;
}

static void log_axis_labels(analyze_chart *c, const analyze_scale *s, int vertical, double at)
{
    char num[32];
    for (double v = s->lo; v <= s->hi * 1.0001; v *= 10) {
        double q = analyze_scale_at(s, v);
        snprintf(num, sizeof num, "%g", v);
        analyze_chart_rgb(c, 0.1, 0.1, 0.1);
        if (vertical)
            analyze_chart_text(c, at - 6, q + 4, 10, 1, 0, num);
        else
            analyze_chart_text(c, q, at + 16, 10, 0, 0, num);
    }
}

/* ---- the roofline's marks and labels ---- */
typedef struct box {
    double x0, y0, x1, y1;
} box;

/* One plotted op type of one trace: its disc (or the trace's shape). */
typedef struct mark {
    const analyze_roof_row *o;
    const char *trace; /* the trace's label */
    double x, y, r;
    size_t shape;
    int hollow;
} mark;

/* Marker shapes by trace: circle, square, triangle up, diamond, triangle
 * down, pentagon, hexagon, star; then the same again hollow. */
enum { NSHAPES = 8, MAX_LABELS = 32 };

static void marker_path(cairo_t *cr, size_t shape, double x, double y, double r)
{
    static const int sides[NSHAPES] = { 0, 4, 3, 4, 3, 5, 6, 10 };
    static const double start[NSHAPES] = { 0, 45, -90, 0, 90, -90, 0, -90 };         /* degrees, y down */
    static const double scale[NSHAPES] = { 1, 1.2, 1.3, 1.2, 1.3, 1.1, 1.05, 1.45 }; /* about a circle's area */
    shape %= NSHAPES;
    cairo_new_path(cr);
    if (!sides[shape]) {
        cairo_arc(cr, x, y, r, 0, 2 * M_PI);
        return;
    }
    for (int k = 0; k < sides[shape]; k++) {
        double a = (start[shape] + 360.0 * k / sides[shape]) * M_PI / 180;
        double rr = r * scale[shape] * (sides[shape] == 10 && k % 2 ? 0.45 : 1); /* the star's inner points */
        cairo_line_to(cr, x + rr * cos(a), y + rr * sin(a));
    }
    cairo_close_path(cr);
}

/* A marker filled with the current source (hollow: white inside, the
 * current source as a thick outline). */
static void marker(analyze_chart *c, size_t shape, int hollow, double x, double y, double r)
{
    double cr_, cg, cb, ca;
    cairo_pattern_get_rgba(cairo_get_source(c->cr), &cr_, &cg, &cb, &ca);
    marker_path(c->cr, shape, x, y, r);
    if (hollow) {
        analyze_chart_rgb(c, 1, 1, 1);
        cairo_fill_preserve(c->cr);
        analyze_chart_rgb(c, cr_, cg, cb);
        cairo_set_line_width(c->cr, 2);
        cairo_stroke(c->cr);
    } else {
        cairo_fill_preserve(c->cr);
        analyze_chart_rgb(c, 0.25, 0.25, 0.25);
        cairo_set_line_width(c->cr, 0.6);
        cairo_stroke(c->cr);
    }
    cairo_set_line_width(c->cr, 1);
}

static double disc_radius(double share) { return 3 + 14 * sqrt(share > 0 ? share : 0); }

static int box_hits_disc(const box *b, double cx, double cy, double r)
{
    double dx = fmax(fmax(b->x0 - cx, 0), cx - b->x1), dy = fmax(fmax(b->y0 - cy, 0), cy - b->y1);
    return dx * dx + dy * dy < r * r;
}

static int boxes_meet(const box *a, const box *b)
{
    return a->x0 < b->x1 && b->x0 < a->x1 && a->y0 < b->y1 && b->y0 < a->y1;
}

/* The box a line of text at (x, y) (baseline, left) of width tw covers. */
static box text_box(double x, double y, double tw, double size)
{
    return (box){ x - 1, y - ANALYZE_CHART_ASCENT * size - 0.5, x + tw + 1, y + ANALYZE_CHART_DESCENT * size + 0.5 };
}

/* Inside the frame, clear of every mark and of every box placed before. */
static int spot_free(const box *b, const box *frame, const mark *m, size_t nm, const box *placed, size_t np)
{
    if (b->x0 < frame->x0 || b->x1 > frame->x1 || b->y0 < frame->y0 || b->y1 > frame->y1)
        return 0;
    for (size_t i = 0; i < nm; i++)
        if (box_hits_disc(b, m[i].x, m[i].y, m[i].r + 1.5))
            return 0;
    for (size_t i = 0; i < np; i++)
        if (boxes_meet(b, &placed[i]))
            return 0;
    return 1;
}

static int cmp_mark_share(const void *x, const void *y)
{
    const mark *a = *(const mark *const *)x, *b = *(const mark *const *)y;
    return a->o->share != b->o->share ? (a->o->share > b->o->share ? -1 : 1) : strcmp(a->o->name, b->o->name);
}

/* One label per op type, at its largest point, largest shares first: the
 * first of eight spots around the mark (then twelve on a ring further out,
 * and for the ten largest on two more, with a leader line that crosses no
 * label) that is inside the
 * frame and clear of every mark and every label placed before.  An op type with no free spot keeps its hover title
 * alone. */
static int label_marks(analyze_chart *c, const mark *m, size_t nm, const box *frame, box *placed, size_t np, size_t cap)
{
    const double fs = 9.5;
    const mark **by = base_malloc((nm ? nm : 1) * sizeof *by);
    analyze_names tried = { 0 };
    if (!by)
        return -1;
    for (size_t i = 0; i < nm; i++)
        by[i] = &m[i];
    qsort(by, nm, sizeof *by, cmp_mark_share);
    int rc = 0;
    for (size_t i = 0; i < nm && np < cap; i++) {
        const mark *k = by[i];
        int seen = 0;
        for (size_t t = 0; t < tried.n && !seen; t++)
            seen = strcmp(tried.v[t], k->o->name) == 0;
        if (seen)
            continue;
        if (analyze_names_add(&tried, k->o->name)) {
            rc = -1;
            break;
        }
        double tw = analyze_chart_text_width(c, fs, k->o->name);
        static const double dir[12] = { 0, 180, -90, 90, -40, 40, -140, 140, -65, 65, -115, 115 };
        static const double ring_gap[4] = { 2.5, 16, 30, 48 };
        int rings = tried.n <= 10 ? 4 : 2; /* far labels for the ten largest op types alone */
        for (int ring = 0; ring < rings; ring++) {
            double d = k->r * (k->shape % NSHAPES ? 1.3 : 1) + ring_gap[ring];
            int done = 0;
            for (int q = 0; q < (ring ? 12 : 8) && !done; q++) {
                double a = dir[q] * M_PI / 180, ax = k->x + d * cos(a), ay = k->y + d * sin(a);
                double x = ax - tw * (cos(a) < -0.3 ? 1 : cos(a) > 0.3 ? 0 : 0.5);
                double y = sin(a) < -0.3  ? ay - ANALYZE_CHART_DESCENT * fs - 1
                           : sin(a) > 0.3 ? ay + ANALYZE_CHART_ASCENT * fs + 1
                                          : ay + (ANALYZE_CHART_ASCENT - ANALYZE_CHART_DESCENT) * fs / 2;
                box b = text_box(x, y, tw, fs);
                if (!spot_free(&b, frame, m, nm, placed, np))
                    continue;
                int crosses = 0; /* a leader through a label placed before */
                for (int t = 1; ring && t < 12 && !crosses; t++) {
                    double x0 = k->x + (k->r + 1) * cos(a), y0 = k->y + (k->r + 1) * sin(a);
                    double lx = x0 + (ax - x0) * t / 12, ly = y0 + (ay - y0) * t / 12;
                    box dot = { lx - 0.5, ly - 0.5, lx + 0.5, ly + 0.5 };
                    for (size_t q = 0; q < np && !crosses; q++)
                        crosses = boxes_meet(&dot, &placed[q]);
                }
                if (crosses)
                    continue;
                if (ring) { /* a leader from the mark's edge towards the label */
                    analyze_chart_rgb(c, 0.45, 0.45, 0.45);
                    cairo_set_line_width(c->cr, 0.7);
                    cairo_move_to(c->cr, k->x + (k->r + 1) * cos(a), k->y + (k->r + 1) * sin(a));
                    cairo_line_to(c->cr, ax, ay);
                    cairo_stroke(c->cr);
                }
                analyze_chart_rgb(c, 0.1, 0.1, 0.1);
                analyze_chart_text(c, x, y, fs, -1, 0, k->o->name);
                placed[np++] = b;
                done = 1;
            }
            if (done)
                break;
        }
    }
    analyze_names_free(&tried);
    base_free(by);
    return rc;
}

/* 1 if no trace before i has the same ceilings as trace i (each pair of
 * ceilings is drawn once). */
static int first_ceilings(const analyze_roofline *r, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (r->t[j].peak_gflops == r->t[i].peak_gflops && r->t[j].peak_gbs == r->t[i].peak_gbs)
            return 0;
    return 1;
}

/* The roofline chart's plot area (points) and the room to its right that
 * the legend starts at. */
enum { ROOF_LEFT = 70, ROOF_TOP = 40, ROOF_WIDTH = 640, ROOF_HEIGHT = 440, ROOF_LEGEND_GAP = 30 };

/* The axes' scales: every plotted point and the ridges, in whole decades.
 * *skipped counts the points with no flops or bytes, *nplot the others. */
static void roof_scales(const analyze_roofline *r, size_t top, analyze_scale *sx, analyze_scale *sy, size_t *skipped,
                        size_t *nplot)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    *skipped = *nplot = 0;
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        size_t k = top && top < t->nops ? top : t->nops;
        for (size_t j = 0; j < k; j++) {
            const analyze_roof_row *o = &t->ops[j];
            if (!plottable(o)) {
                (*skipped)++;
                continue;
            }
            (*nplot)++;
            xlo = fmin(xlo, o->intensity), xhi = fmax(xhi, o->intensity);
            ylo = fmin(ylo, o->gflops), yhi = fmax(yhi, o->gflops);
        }
        xlo = fmin(xlo, t->ridge / 10), xhi = fmax(xhi, t->ridge * 10);
        ylo = fmin(ylo, t->peak_gflops / 1000), yhi = fmax(yhi, t->peak_gflops * 1.5);
    }
    *sx = (analyze_scale){ decade_down(xlo), decade_up(xhi), ROOF_LEFT, ROOF_LEFT + ROOF_WIDTH, 1 };
    *sy = (analyze_scale){ decade_down(ylo), decade_up(yhi), ROOF_TOP + ROOF_HEIGHT, ROOF_TOP, 1 };
}

/* The marks, in trace order (m, *nm of them), each trace's label (labels)
 * and the classes the marks show (cls). */
static analyze_status roof_marks(const analyze_roofline *r, size_t top, const analyze_scale *sx,
                                 const analyze_scale *sy, mark *m, size_t *nm, char (*labels)[128], analyze_names *cls)
{
    *nm = 0;
    for (size_t a = 0; a < r->n; a++) {
        const analyze_roofline_trace *t = &r->t[r->order[a]];
        analyze_out_label(t->p, labels[a], sizeof labels[a]);
        size_t k = top && top < t->nops ? top : t->nops;
        for (size_t j = 0; j < k; j++) {
            const analyze_roof_row *o = &t->ops[j];
            if (!plottable(o))
                continue;
            if (analyze_names_add(cls, o->cls))
                return oom();
            m[(*nm)++] = (mark){ o,
                                 labels[a],
                                 analyze_scale_at(sx, o->intensity),
                                 analyze_scale_at(sy, o->gflops),
                                 disc_radius(o->share),
                                 a % NSHAPES,
                                 (a / NSHAPES) % 2 };
        }
    }
    sort_by_colour(cls->v, cls->n, class_colour);
    return ANALYZE_OK;
}

/* The legend's width, measured on a scratch chart: the chart's width
 * follows from it. */
static analyze_status roof_legend_width(const analyze_roofline *r, const analyze_names *cls, char (*labels)[128],
                                        double *width)
{
    analyze_chart c = { 0 };
    analyze_status rc = analyze_chart_create(&c, NULL, 1, 1);
    if (rc)
        return rc;
    double lw = analyze_chart_text_width(&c, FONT, "share of op time");
    for (size_t j = 0; j < cls->n; j++)
        lw = fmax(lw, analyze_chart_text_width(&c, FONT, cls->v[j]) + 20);
    for (size_t a = 0; a < r->n && r->n > 1; a++)
        lw = fmax(lw, analyze_chart_text_width(&c, FONT, labels[a]) + 20);
    analyze_chart_discard(&c);
    *width = lw;
    return ANALYZE_OK;
}

/* The title, the grid of decades, the frame and the axes' labels. */
static void roof_axes(analyze_chart *c, const analyze_scale *sx, const analyze_scale *sy)
{
    const double L = ROOF_LEFT, T = ROOF_TOP, W = ROOF_WIDTH, H = ROOF_HEIGHT;
    cairo_t *cr = c->cr;
    analyze_chart_rgb(c, 0, 0, 0);
    analyze_chart_text(c, 10, 22, TITLE, -1, 0, "Roofline: achieved GFLOP/s against arithmetic intensity");
    cairo_set_line_width(cr, 0.5);
    analyze_chart_rgb(c, 0.88, 0.88, 0.88);
    for (double v = sx->lo; v <= sx->hi * 1.0001; v *= 10) {
        cairo_move_to(cr, analyze_scale_at(sx, v), T);
        cairo_line_to(cr, analyze_scale_at(sx, v), T + H);
    }
    for (double v = sy->lo; v <= sy->hi * 1.0001; v *= 10) {
        cairo_move_to(cr, L, analyze_scale_at(sy, v));
        cairo_line_to(cr, L + W, analyze_scale_at(sy, v));
    }
    cairo_stroke(cr);
    analyze_chart_rgb(c, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, L, T, W, H);
    cairo_stroke(cr);
    log_axis_labels(c, sx, 0, T + H);
    log_axis_labels(c, sy, 1, L);
    analyze_chart_rgb(c, 0.1, 0.1, 0.1);
    analyze_chart_text(c, L + W / 2, T + H + 40, FONT, 0, 0, "arithmetic intensity (FLOP/byte)");
    analyze_chart_text(c, 22, T + H / 2, FONT, 0, 90, "GFLOP/s");
}

/* The roofs, min(P, I x B), one for each distinct pair of ceilings. */
static void roof_roofs(analyze_chart *c, const analyze_roofline *r, const analyze_scale *sx, const analyze_scale *sy)
{
    cairo_t *cr = c->cr;
    cairo_set_line_width(cr, 2);
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        if (!first_ceilings(r, i))
            continue;
        analyze_chart_rgb(c, 0.75, 0.1, 0.1);
        cairo_new_path(cr);
        cairo_move_to(cr, analyze_scale_at(sx, sx->lo), analyze_scale_at(sy, sx->lo * t->peak_gbs));
        cairo_line_to(cr, analyze_scale_at(sx, t->ridge), analyze_scale_at(sy, t->peak_gflops));
        cairo_line_to(cr, analyze_scale_at(sx, sx->hi), analyze_scale_at(sy, t->peak_gflops));
        cairo_stroke(cr);
    }
}

/* Trajectories: an op type's points across the traces of one model and
 * mode (batch sizes, thread counts), in trajectory order.  1 if it drew
 * one. */
static int roof_trajectories(analyze_chart *c, const analyze_roofline *r, size_t top, const analyze_scale *sx,
                             const analyze_scale *sy)
{
    cairo_t *cr = c->cr;
    int drawn = 0;
    cairo_set_line_width(cr, 1);
    analyze_chart_rgb(c, 0.55, 0.55, 0.55);
    for (size_t a = 1; a < r->n; a++) {
        const analyze_roofline_trace *t = &r->t[r->order[a]], *u = &r->t[r->order[a - 1]];
        if (strcmp(analyze_profile_model(t->p), analyze_profile_model(u->p)) != 0 ||
            strcmp(analyze_profile_mode(t->p), analyze_profile_mode(u->p)) != 0)
            continue;
        size_t k = top && top < t->nops ? top : t->nops;
        for (size_t j = 0; j < k; j++)
            for (size_t q = 0; q < u->nops; q++)
                if (strcmp(u->ops[q].name, t->ops[j].name) == 0 && plottable(&u->ops[q]) && plottable(&t->ops[j])) {
                    const analyze_roof_row *from = &u->ops[q], *to = &t->ops[j];
                    cairo_move_to(cr, analyze_scale_at(sx, from->intensity), analyze_scale_at(sy, from->gflops));
                    cairo_line_to(cr, analyze_scale_at(sx, to->intensity), analyze_scale_at(sy, to->gflops));
                    cairo_stroke(cr);
                    drawn = 1;
                }
    }
    return drawn;
}

/* The ceilings' values: above the flat roof (or under it), right-aligned,
 * moved left until clear of the marks.  The flat roofs themselves are kept
 * clear of labels: their boxes go into placed[] first.  Returns how many
 * boxes placed[] holds then. */
static size_t roof_ceiling_labels(analyze_chart *c, const analyze_roofline *r, const analyze_scale *sx,
                                  const analyze_scale *sy, const box *frame, const mark *m, size_t nm, box *placed)
{
    const double L = ROOF_LEFT, W = ROOF_WIDTH;
    size_t np = 0;
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        double ry = analyze_scale_at(sy, t->peak_gflops);
        if (first_ceilings(r, i))
            placed[np++] = (box){ analyze_scale_at(sx, t->ridge), ry - 1.5, L + W, ry + 1.5 };
    }
    char num[128];
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        if (!first_ceilings(r, i))
            continue;
        snprintf(num, sizeof num, "%.1f GFLOP/s, %.1f GB/s", t->peak_gflops, t->peak_gbs);
        double tw = analyze_chart_text_width(c, 10, num), ry = analyze_scale_at(sy, t->peak_gflops);
        for (int side = 0; side < 2; side++) {
            double y = side ? ry + 3 + ANALYZE_CHART_ASCENT * 10 : ry - 4 - ANALYZE_CHART_DESCENT * 10;
            int done = 0;
            for (double x = L + W - 6 - tw; x >= L + 6 && !done; x -= 10) {
                box b = text_box(x, y, tw, 10);
                if (!spot_free(&b, frame, m, nm, placed, np))
                    continue;
                analyze_chart_rgb(c, 0.75, 0.1, 0.1);
                analyze_chart_text(c, x, y, 10, -1, 0, num);
                placed[np++] = b;
                done = 1;
            }
            if (done)
                break;
        }
    }
    return np;
}

/* The legend right of the plot: classes (colour), traces (shape), disc
 * sizes, and what the chart leaves out. */
static void roof_legend(analyze_chart *c, const analyze_roofline *r, const analyze_names *cls, char (*labels)[128],
                        int trajectories, size_t skipped)
{
    double lx = ROOF_LEFT + ROOF_WIDTH + ROOF_LEGEND_GAP, ly = ROOF_TOP + 8;
    char num[128];
    analyze_chart_rgb(c, 0.3, 0.3, 0.3);
    analyze_chart_text(c, lx - 8, ly, 10, -1, 0, "op class (colour)");
    for (size_t j = 0; j < cls->n; j++) {
        ly += 18;
        analyze_chart_palette(c, class_colour(cls->v[j]));
        marker(c, 0, 0, lx + 4, ly - 4, 6);
        analyze_chart_rgb(c, 0.1, 0.1, 0.1);
        analyze_chart_text(c, lx + 16, ly, FONT, -1, 0, cls->v[j]);
    }
    if (r->n > 1) {
        ly += 26;
        analyze_chart_rgb(c, 0.3, 0.3, 0.3);
        analyze_chart_text(c, lx - 8, ly, 10, -1, 0, "trace (shape)");
        for (size_t a = 0; a < r->n; a++) {
            ly += 18;
            analyze_chart_rgb(c, 0.45, 0.45, 0.45);
            marker(c, a % NSHAPES, (a / NSHAPES) % 2, lx + 4, ly - 4, 5.5);
            analyze_chart_rgb(c, 0.1, 0.1, 0.1);
            analyze_chart_text(c, lx + 16, ly, FONT, -1, 0, labels[a]);
        }
    }

    ly += 26;
    analyze_chart_rgb(c, 0.3, 0.3, 0.3);
    analyze_chart_text(c, lx - 8, ly, 10, -1, 0, "share of op time (area)");
    static const double key[] = { 0.01, 0.1, 0.5 };
    for (int k = 0; k < 3; k++) {
        double rad = disc_radius(key[k]);
        ly += 6 + fmax(2 * rad, 14);
        analyze_chart_rgb(c, 0.6, 0.6, 0.6);
        marker(c, 0, 0, lx + 13, ly - 4, rad);
        snprintf(num, sizeof num, "%g%%", 100 * key[k]);
        analyze_chart_rgb(c, 0.1, 0.1, 0.1);
        analyze_chart_text(c, lx + 32, ly, FONT, -1, 0, num);
    }

    analyze_chart_rgb(c, 0.3, 0.3, 0.3);
    if (trajectories)
        analyze_chart_text(c, lx - 8, ly += 24, 9.5, -1, 0, "grey lines: trajectories");
    if (skipped) {
        snprintf(num, sizeof num, "%zu point%s without flops", skipped, skipped == 1 ? "" : "s");
        analyze_chart_text(c, lx - 8, ly += 18, 9.5, -1, 0, num);
        analyze_chart_text(c, lx - 8, ly += 14, 9.5, -1, 0, "or bytes: not drawn");
    }
}

analyze_status analyze_plot_roofline(const char *path, const analyze_roofline *r, size_t top)
{
    const double L = ROOF_LEFT, T = ROOF_TOP, W = ROOF_WIDTH, H = ROOF_HEIGHT;
    analyze_scale sx, sy;
    size_t skipped, nplot, nm = 0;
    roof_scales(r, top, &sx, &sy, &skipped, &nplot);
    analyze_names cls = { 0 };
    mark *m = base_calloc(nplot ? nplot : 1, sizeof *m);
    char(*tl)[128] = base_calloc(r->n ? r->n : 1, sizeof *tl); /* the traces' labels */
    box *placed = base_calloc(MAX_LABELS + 2 * r->n + 1, sizeof *placed);
    analyze_chart c = { 0 };
    analyze_status rc = ANALYZE_ERR_NOMEM;
    if (!m || !tl || !placed) {
        rc = oom();
        goto end;
    }
    if ((rc = roof_marks(r, top, &sx, &sy, m, &nm, tl, &cls)))
        goto end;

    /* the legend's width and height decide the chart's */
    double lw;
    if ((rc = roof_legend_width(r, &cls, tl, &lw)))
        goto end;
    double legend_h = 18 * (double)(cls.n + 1) + (r->n > 1 ? 18 * (double)(r->n + 1) : 0) + 18 + 3 * 30 + 70;
    double w = L + W + ROOF_LEGEND_GAP + lw + 10, h = fmax(T + H + 60, T + legend_h);
    if ((rc = analyze_chart_create(&c, path, w, h)))
        goto end;
    roof_axes(&c, &sx, &sy);

    /* inside the plot area: roofs, trajectories, marks, then the labels */
    cairo_save(c.cr);
    cairo_rectangle(c.cr, L, T, W, H);
    cairo_clip(c.cr);
    roof_roofs(&c, r, &sx, &sy);
    int trajectories = roof_trajectories(&c, r, top, &sx, &sy);
    for (size_t i = 0; i < nm; i++) { /* colour by class, area by time share, shape by trace */
        analyze_chart_palette(&c, class_colour(m[i].o->cls));
        marker(&c, m[i].shape, m[i].hollow, m[i].x, m[i].y, m[i].r);
        analyze_chart_title_disc(&c, m[i].x, m[i].y, m[i].r,
                                 "%s: %s (%s), %.3g FLOP/byte, %.3g GFLOP/s, %.1f%% of op time", m[i].trace,
                                 m[i].o->name, m[i].o->cls, m[i].o->intensity, m[i].o->gflops, 100 * m[i].o->share);
    }
    box frame = { L + 2, T + 2, L + W - 2, T + H - 2 };
    size_t np = roof_ceiling_labels(&c, r, &sx, &sy, &frame, m, nm, placed);
    int labels_failed = label_marks(&c, m, nm, &frame, placed, np, np + MAX_LABELS); /* one per op type */
    cairo_restore(c.cr);
    if (labels_failed) {
        rc = oom();
        goto end;
    }

    roof_legend(&c, r, &cls, tl, trajectories, skipped);
    rc = analyze_chart_finish(&c);
end:
    if (rc && c.cr)
        analyze_chart_discard(&c);
    analyze_names_free(&cls);
    base_free(m);
    base_free(tl);
    base_free(placed);
    return rc;
}
