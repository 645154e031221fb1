/* plot.c -- the report's charts (plot.h), drawn with cairo through chart.h. */
#include "analyze/plot.h"

#include "analyze/chart.h"
#include "analyze/out.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FONT 11.0
#define TITLE 14.0

/* The seven op classes in a fixed order, so a class has one colour in
 * every chart; a label the list does not know comes after them. */
static const char *const class_order[] = { "convolution", "matrix",       "elementwise", "reduction",
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


static int oom(char *err, size_t errlen)
{
    snprintf(err, errlen, "out of memory");
    return -1;
}

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

/* A row of legend swatches from (x, y), wrapping at width w; returns the y below it. */
static double legend(analyze_chart *c, double x, double y, double w, const char *const *labels, const size_t *colours,
                     size_t n)
{
    double cx = x;
    for (size_t i = 0; i < n; i++) {
        double tw = analyze_chart_text_width(c, FONT, labels[i]) + 30;
        if (cx + tw > x + w && cx > x)
            cx = x, y += 18;
        analyze_chart_palette(c, colours[i]);
        cairo_rectangle(c->cr, cx, y - 10, 12, 12);
        cairo_fill(c->cr);
        analyze_chart_rgb(c, 0.1, 0.1, 0.1);
        analyze_chart_text(c, cx + 16, y, FONT, -1, 0, labels[i]);
        cx += tw;
    }
    return y + 18;
}

/* Stacked horizontal bars: one per trace, value[i * ncol + j] in part j,
 * scaled to `full` (the longest bar); `unit` formats the total at the end. */
static int stacked_bars(const char *path, const char *title, analyze_profile *const *p, size_t n, const char **col,
                        size_t ncol, size_t (*colour)(const char *), const double *value, double full, int as_share,
                        char *err, size_t errlen)
{
    analyze_chart c;
    double rowh = 26, barw = 560;
    if (analyze_chart_create(&c, NULL, 1, 1, err, errlen)) /* a scratch surface to measure the labels */
        return -1;
    double lw = max_label_width(&c, p, n) + 16;
    analyze_chart_discard(&c);
    double w = lw + barw + 90, h = 50 + rowh * (double)n + 30 + 18 * (1 + (double)ncol / 5);
    if (analyze_chart_create(&c, path, w, h, err, errlen))
        return -1;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, title);
    size_t *colours = malloc((ncol ? ncol : 1) * sizeof *colours);
    if (!colours) {
        analyze_chart_discard(&c);
        return oom(err, errlen);
    }
    for (size_t j = 0; j < ncol; j++)
        colours[j] = colour(col[j]);
    char lb[512], num[64];
    for (size_t i = 0; i < n; i++) {
        double y = 40 + rowh * (double)i, x = lw, total = 0;
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, lw - 8, y + 16, FONT, 1, 0, analyze_out_label(p[i], lb, sizeof lb));
        for (size_t j = 0; j < ncol; j++) {
            double v = value[i * ncol + j], bw = full > 0 ? v / full * barw : 0;
            total += v;
            if (bw <= 0)
                continue;
            analyze_chart_palette(&c, colours[j]);
            cairo_rectangle(c.cr, x, y + 3, bw, rowh - 6);
            cairo_fill(c.cr);
            if (as_share && bw > 34) {
                snprintf(num, sizeof num, "%.0f%%", 100 * v / (full > 0 ? full : 1));
                analyze_chart_rgb(&c, 1, 1, 1);
                analyze_chart_text(&c, x + bw / 2, y + 17, 9.5, 0, 0, num);
            }
            x += bw;
        }
        if (!as_share) {
            snprintf(num, sizeof num, "%.1f MiB", total / (1024.0 * 1024.0));
            analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
            analyze_chart_text(&c, x + 6, y + 17, FONT, -1, 0, num);
        }
    }
    legend(&c, lw, 40 + rowh * (double)n + 22, barw, col, colours, ncol);
    free(colours);
    return analyze_chart_finish(&c, err, errlen);
}

/* ---- classes --------------------------------------------------------------------------- */
int analyze_plot_classes(const char *path, analyze_profile *const *p, size_t n, char *err, size_t errlen)
{
    analyze_names col = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p[i]->nclasses; k++)
            if (analyze_names_add(&col, p[i]->classes[k]))
                goto nomem;
    sort_by_colour(col.v, col.n, class_colour);
    double *value = calloc((n ? n : 1) * (col.n ? col.n : 1), sizeof *value);
    if (!value)
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        analyze_stat *cs = calloc(p[i]->nclasses ? p[i]->nclasses : 1, sizeof *cs);
        if (!cs) {
            free(value);
            goto nomem;
        }
        analyze_profile_class_stats(p[i], cs);
        double total = (double)analyze_profile_total_ns(p[i]);
        for (size_t k = 0; k < p[i]->nclasses; k++)
            for (size_t j = 0; j < col.n; j++)
                if (strcmp(col.v[j], p[i]->classes[k]) == 0 && total > 0)
                    value[i * col.n + j] = (double)cs[k].ns / total;
        free(cs);
    }
    int rc = stacked_bars(path, "Op time by class", p, n, col.v, col.n, class_colour, value, 1.0, 1, err, errlen);
    free(value);
    analyze_names_free(&col);
    return rc;
nomem:
    analyze_names_free(&col);
    return oom(err, errlen);
}

/* ---- memory ---------------------------------------------------------------------------- */
int analyze_plot_memory(const char *path, analyze_profile *const *p, size_t n, char *err, size_t errlen)
{
    analyze_names col = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < p[i]->nroles; r++)
            if (analyze_names_add(&col, p[i]->roles[r])) {
                analyze_names_free(&col);
                return oom(err, errlen);
            }
    sort_by_colour(col.v, col.n, role_colour);
    double *value = calloc((n ? n : 1) * (col.n ? col.n : 1), sizeof *value), full = 0;
    if (!value) {
        analyze_names_free(&col);
        return oom(err, errlen);
    }
    for (size_t i = 0; i < n; i++) {
        for (size_t r = 0; r < p[i]->nroles; r++)
            for (size_t j = 0; j < col.n; j++)
                if (strcmp(col.v[j], p[i]->roles[r]) == 0)
                    value[i * col.n + j] = (double)p[i]->role_at_peak[r];
        if ((double)p[i]->peak_bytes > full)
            full = (double)p[i]->peak_bytes;
    }
    int rc = stacked_bars(path, "Tensor memory at the peak, by role", p, n, col.v, col.n, role_colour, value, full, 0,
                          err, errlen);
    free(value);
    analyze_names_free(&col);
    return rc;
}

/* ---- training vs inference ------------------------------------------------------------ */
int analyze_plot_compare(const char *path, analyze_profile *const *p, const analyze_pair *pairs, size_t npairs,
                         char *err, size_t errlen)
{
    analyze_chart c;
    if (analyze_chart_create(&c, NULL, 1, 1, err, errlen))
        return -1;
    double lw = 0, full = 0;
    for (size_t i = 0; i < npairs; i++) {
        double t = analyze_chart_text_width(&c, FONT, analyze_profile_model(p[pairs[i].train]));
        lw = fmax(lw, t);
        full = fmax(full, fmax(analyze_step_ns(p[pairs[i].train]), analyze_step_ns(p[pairs[i].infer])));
    }
    analyze_chart_discard(&c);
    lw += 16;
    double barw = 480, rowh = 44, h = 50 + rowh * (double)npairs + 40;
    if (analyze_chart_create(&c, path, lw + barw + 200, h, err, errlen))
        return -1;
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
    legend(&c, lw, 40 + rowh * (double)npairs + 20, barw, keys, colours, 2);
    return analyze_chart_finish(&c, err, errlen);
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
            cairo_arc(c->cr, analyze_scale_at(sx, s->threads[i]), analyze_scale_at(sy, r->speedup[i]), 3, 0, 2 * M_PI);
            cairo_fill(c->cr);
        }
}

int analyze_plot_scaling(const char *path, const analyze_scaling *s, size_t top, char *err, size_t errlen)
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
    if (analyze_chart_create(&c, path, L + W + 260, T + H + 60, err, errlen))
        return -1;
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
    return analyze_chart_finish(&c, err, errlen);
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

int analyze_plot_optypes(const char *path, analyze_profile *const *p, size_t n, size_t top, char *err, size_t errlen)
{
    analyze_names all = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t k = 0; k < p[i]->nops; k++)
            if (p[i]->ops[k].all.count && analyze_names_add(&all, p[i]->ops[k].name)) {
                analyze_names_free(&all);
                return oom(err, errlen);
            }
    op_total *ot = calloc(all.n ? all.n : 1, sizeof *ot);
    if (!ot) {
        analyze_names_free(&all);
        return oom(err, errlen);
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
    if (analyze_chart_create(&c, NULL, 1, 1, err, errlen))
        goto fail;
    double lw = max_label_width(&c, p, n) + 16, head = 0;
    for (size_t j = 0; j < ncol; j++) {
        double t = analyze_chart_text_width(&c, FONT, ot[j].name) * 0.71 + 10;
        if (t > head)
            head = t;
    }
    analyze_chart_discard(&c);
    double cw = 46, ch = 24, top0 = 36 + head;
    if (analyze_chart_create(&c, path, lw + cw * (double)ncol + head * 0.71 + 20, top0 + ch * (double)n + 30, err,
                             errlen))
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
    free(ot);
    analyze_names_free(&all);
    return analyze_chart_finish(&c, err, errlen);
fail:
    free(ot);
    analyze_names_free(&all);
    return -1;
}

/* ---- similarity ------------------------------------------------------------------------ */
int analyze_plot_similarity(const char *path, const analyze_sim *s, char *err, size_t errlen)
{
    size_t n = s->n;
    analyze_chart c;
    if (analyze_chart_create(&c, NULL, 1, 1, err, errlen))
        return -1;
    double lw = 0;
    for (size_t i = 0; i < n; i++) {
        double t = analyze_chart_text_width(&c, FONT, s->labels[i]);
        if (t > lw)
            lw = t;
    }
    analyze_chart_discard(&c);
    lw += 16;
    double cell = 40, head = lw * 0.71 + 10, top0 = 36 + head, dw = 220;
    double w = lw + cell * (double)n + 20 + dw + 20, h = top0 + cell * (double)n + 40;
    if (analyze_chart_create(&c, path, w, h, err, errlen))
        return -1;
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
    double *nx = malloc((2 * n) * sizeof *nx), *ny = malloc((2 * n) * sizeof *ny);
    if (!nx || !ny) {
        free(nx), free(ny);
        analyze_chart_discard(&c);
        return oom(err, errlen);
    }
    for (size_t a = 0; a < n; a++)
        nx[s->order[a]] = x0, ny[s->order[a]] = top0 + cell * (double)a + cell / 2;
    analyze_chart_rgb(&c, 0.2, 0.2, 0.2);
    cairo_set_line_width(c.cr, 1.5);
    for (size_t k = 0; k + 1 < n; k++) {
        const analyze_merge *m = &s->merges[k];
        double x = x0 + m->distance / dmax * dw;
        cairo_move_to(c.cr, nx[m->a], ny[m->a]);
        cairo_line_to(c.cr, x, ny[m->a]);
        cairo_line_to(c.cr, x, ny[m->b]);
        cairo_line_to(c.cr, nx[m->b], ny[m->b]);
        cairo_stroke(c.cr);
        nx[n + k] = x, ny[n + k] = (ny[m->a] + ny[m->b]) / 2;
    }
    free(nx), free(ny);
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    snprintf(num, sizeof num, "1 - cosine, 0 to %.3f", dmax);
    analyze_chart_text(&c, x0, top0 + cell * (double)n + 20, 10, -1, 0, num);
    return analyze_chart_finish(&c, err, errlen);
}

/* ---- roofline -------------------------------------------------------------------------- */
static int plottable(const analyze_roof_row *r)
{
    return isfinite(r->intensity) && r->intensity > 0 && isfinite(r->gflops) && r->gflops > 0;
}

static double decade_down(double v) { return pow(10, floor(log10(v))); }
static double decade_up(double v) { return pow(10, ceil(log10(v))); }

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

/* Labels the plotted points, largest time share first, each op type once
 * and at most 16, each only where it overlaps no label placed before it
 * (placed[0..nplaced): the ceilings' labels). */
typedef struct box {
    double x0, y0, x1, y1;
} box;

enum { MAX_LABELS = 16, MAX_BOXES = MAX_LABELS + 8 };

static void label_points(analyze_chart *c, const analyze_roofline *r, size_t top, const analyze_scale *sx,
                         const analyze_scale *sy, box *placed, size_t nplaced)
{
    enum { MAX_TRIES = 256 };
    const analyze_roof_row *done[MAX_TRIES];
    size_t labels = 0;
    for (size_t tries = 0; tries < MAX_TRIES && labels < MAX_LABELS && nplaced < MAX_BOXES; tries++) {
        const analyze_roof_row *best = NULL;
        for (size_t i = 0; i < r->n; i++) {
            size_t k = top && top < r->t[i].nops ? top : r->t[i].nops;
            for (size_t j = 0; j < k; j++) {
                const analyze_roof_row *o = &r->t[i].ops[j];
                int seen = 0; /* tried already, or its op type was */
                for (size_t d = 0; d < tries && !seen; d++)
                    seen = done[d] == o || strcmp(done[d]->name, o->name) == 0;
                if (!seen && plottable(o) && (!best || o->share > best->share))
                    best = o;
            }
        }
        if (!best)
            break;
        done[tries] = best;
        double rad = 3 + 14 * sqrt(best->share), tw = analyze_chart_text_width(c, 9.5, best->name);
        double px = analyze_scale_at(sx, best->intensity), py = analyze_scale_at(sy, best->gflops);
        /* right of the disc, left of it, above, below: the first spot inside the plot that is free */
        const double spot[4][2] = { { px + rad + 3, py + 4 }, { px - rad - 3 - tw, py + 4 },
                                    { px - tw / 2, py - rad - 4 }, { px - tw / 2, py + rad + 12 } };
        for (int k = 0; k < 4; k++) {
            box b = { spot[k][0], spot[k][1] - 10, spot[k][0] + tw, spot[k][1] + 2 };
            int clash = b.x0 < sx->p0 || b.x1 > sx->p1 || b.y0 < sy->p1 || b.y1 > sy->p0;
            for (size_t q = 0; q < nplaced && !clash; q++)
                clash = b.x0 < placed[q].x1 && placed[q].x0 < b.x1 && b.y0 < placed[q].y1 && placed[q].y0 < b.y1;
            if (clash)
                continue;
            placed[nplaced++] = b;
            labels++;
            analyze_chart_rgb(c, 0.1, 0.1, 0.1);
            analyze_chart_text(c, spot[k][0], spot[k][1], 9.5, -1, 0, best->name);
            break;
        }
    }
}

int analyze_plot_roofline(const char *path, const analyze_roofline *r, size_t top, char *err, size_t errlen)
{
    /* the axes' ranges: every plotted point and the ridges, in whole decades */
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    size_t skipped = 0;
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        size_t k = top && top < t->nops ? top : t->nops;
        for (size_t j = 0; j < k; j++) {
            const analyze_roof_row *o = &t->ops[j];
            if (!plottable(o)) {
                skipped++;
                continue;
            }
            xlo = fmin(xlo, o->intensity), xhi = fmax(xhi, o->intensity);
            ylo = fmin(ylo, o->gflops), yhi = fmax(yhi, o->gflops);
        }
        xlo = fmin(xlo, t->ridge / 10), xhi = fmax(xhi, t->ridge * 10);
        ylo = fmin(ylo, t->peak_gflops / 1000), yhi = fmax(yhi, t->peak_gflops * 1.5);
    }
    analyze_scale sx = { decade_down(xlo), decade_up(xhi), 0, 0, 1 };
    analyze_scale sy = { decade_down(ylo), decade_up(yhi), 0, 0, 1 };
    double L = 70, T = 40, W = 640, H = 440, w = L + W + 220, h = T + H + 60;
    sx.p0 = L, sx.p1 = L + W, sy.p0 = T + H, sy.p1 = T;
    analyze_chart c;
    if (analyze_chart_create(&c, path, w, h, err, errlen))
        return -1;
    cairo_t *cr = c.cr;
    analyze_chart_rgb(&c, 0, 0, 0);
    analyze_chart_text(&c, 10, 22, TITLE, -1, 0, "Roofline: achieved GFLOP/s against arithmetic intensity");
    /* grid and axes */
    cairo_set_line_width(cr, 0.5);
    analyze_chart_rgb(&c, 0.88, 0.88, 0.88);
    for (double v = sx.lo; v <= sx.hi * 1.0001; v *= 10) {
        cairo_move_to(cr, analyze_scale_at(&sx, v), T);
        cairo_line_to(cr, analyze_scale_at(&sx, v), T + H);
    }
    for (double v = sy.lo; v <= sy.hi * 1.0001; v *= 10) {
        cairo_move_to(cr, L, analyze_scale_at(&sy, v));
        cairo_line_to(cr, L + W, analyze_scale_at(&sy, v));
    }
    cairo_stroke(cr);
    analyze_chart_rgb(&c, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1);
    cairo_rectangle(cr, L, T, W, H);
    cairo_stroke(cr);
    log_axis_labels(&c, &sx, 0, T + H);
    log_axis_labels(&c, &sy, 1, L);
    analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
    analyze_chart_text(&c, L + W / 2, T + H + 40, FONT, 0, 0, "arithmetic intensity (FLOP/byte)");
    analyze_chart_text(&c, 22, T + H / 2, FONT, 0, 90, "GFLOP/s");
    cairo_save(cr);
    cairo_rectangle(cr, L, T, W, H);
    cairo_clip(cr);
    /* the roofs: min(P, I x B) for each distinct pair of ceilings */
    cairo_set_line_width(cr, 2);
    char num[128];
    box placed[MAX_BOXES];
    size_t nplaced = 0;
    for (size_t i = 0; i < r->n; i++) {
        const analyze_roofline_trace *t = &r->t[i];
        int seen = 0;
        for (size_t j = 0; j < i; j++)
            seen |= r->t[j].peak_gflops == t->peak_gflops && r->t[j].peak_gbs == t->peak_gbs;
        if (seen)
            continue;
        analyze_chart_rgb(&c, 0.75, 0.1, 0.1);
        double x_start = sx.lo, y_start = x_start * t->peak_gbs;
        cairo_move_to(cr, analyze_scale_at(&sx, x_start), analyze_scale_at(&sy, y_start));
        cairo_line_to(cr, analyze_scale_at(&sx, t->ridge), analyze_scale_at(&sy, t->peak_gflops));
        cairo_line_to(cr, analyze_scale_at(&sx, sx.hi), analyze_scale_at(&sy, t->peak_gflops));
        cairo_stroke(cr);
        snprintf(num, sizeof num, "%.1f GFLOP/s, %.1f GB/s", t->peak_gflops, t->peak_gbs);
        double ty = analyze_scale_at(&sy, t->peak_gflops) - 6, tw = analyze_chart_text_width(&c, 10, num);
        analyze_chart_text(&c, L + W - 6, ty, 10, 1, 0, num);
        if (nplaced < MAX_BOXES - MAX_LABELS)
            placed[nplaced++] = (box){ L + W - 6 - tw, ty - 11, L + W - 6, ty + 2 };
    }
    /* trajectories: an op type's points across the traces of one model and
     * mode (batch sizes, thread counts), in trajectory order */
    cairo_set_line_width(cr, 1);
    analyze_chart_rgb(&c, 0.55, 0.55, 0.55);
    int trajectories = 0;
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
                    cairo_move_to(cr, analyze_scale_at(&sx, from->intensity), analyze_scale_at(&sy, from->gflops));
                    cairo_line_to(cr, analyze_scale_at(&sx, to->intensity), analyze_scale_at(&sy, to->gflops));
                    cairo_stroke(cr);
                    trajectories = 1;
                }
    }
    /* the points: colour by class, area by time share */
    analyze_names cls = { 0 };
    for (size_t a = 0; a < r->n; a++) {
        const analyze_roofline_trace *t = &r->t[r->order[a]];
        size_t k = top && top < t->nops ? top : t->nops;
        for (size_t j = 0; j < k; j++) {
            const analyze_roof_row *o = &t->ops[j];
            if (!plottable(o))
                continue;
            if (analyze_names_add(&cls, o->cls)) {
                cairo_restore(cr);
                analyze_chart_discard(&c);
                analyze_names_free(&cls);
                return oom(err, errlen);
            }
            double x = analyze_scale_at(&sx, o->intensity), y = analyze_scale_at(&sy, o->gflops);
            double rad = 3 + 14 * sqrt(o->share);
            analyze_chart_palette(&c, class_colour(o->cls));
            cairo_arc(cr, x, y, rad, 0, 2 * M_PI);
            cairo_fill_preserve(cr);
            analyze_chart_rgb(&c, 1, 1, 1);
            cairo_stroke(cr);
        }
    }
    /* labels: the largest shares first, each where it overlaps none placed before */
    label_points(&c, r, top, &sx, &sy, placed, nplaced);
    cairo_restore(cr);
    /* the legend: classes, then what the discs say */
    sort_by_colour(cls.v, cls.n, class_colour);
    double ly = T + 10;
    for (size_t j = 0; j < cls.n; j++, ly += 18) {
        analyze_chart_palette(&c, class_colour(cls.v[j]));
        cairo_arc(cr, L + W + 24, ly - 4, 6, 0, 2 * M_PI);
        cairo_fill(cr);
        analyze_chart_rgb(&c, 0.1, 0.1, 0.1);
        analyze_chart_text(&c, L + W + 36, ly, FONT, -1, 0, cls.v[j]);
    }
    analyze_names_free(&cls);
    analyze_chart_rgb(&c, 0.3, 0.3, 0.3);
    analyze_chart_text(&c, L + W + 18, ly += 10, 9.5, -1, 0, "disc area: share of op time");
    if (trajectories)
        analyze_chart_text(&c, L + W + 18, ly += 16, 9.5, -1, 0, "grey lines: trajectories");
    if (skipped) {
        snprintf(num, sizeof num, "%zu point%s without flops", skipped, skipped == 1 ? "" : "s");
        analyze_chart_text(&c, L + W + 18, ly += 16, 9.5, -1, 0, num);
        analyze_chart_text(&c, L + W + 18, ly += 14, 9.5, -1, 0, "or bytes: not drawn");
    }
    return analyze_chart_finish(&c, err, errlen);
}
