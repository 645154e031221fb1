/* breakdown.c -- the breakdown: time by op type, class and phase, a models x classes table (text, CSV, JSON). */
#include "analyze/breakdown.h"

#include "analyze/device.h"
#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

/* What every output of one trace reads: its op types and classes by time. */
typedef struct views {
    size_t *ord;      /* op types, by time descending */
    analyze_stat *cs; /* per class */
    size_t *cord;     /* classes, by time descending */
} views;

/* A GPU trace's device time by the host op type that launched it
 * (device.h): per op type, and what no host op launched; ns NULL when the
 * trace links no device activity to its host ops. */
typedef struct launched {
    uint64_t *ns, *count;
    uint64_t un_ns, un_count;
} launched;

/* 0, or -1 out of memory. */
static int launched_make(const analyze_profile *p, launched *l)
{
    memset(l, 0, sizeof *l);
    if (!analyze_devices_any(p->devices))
        return 0;
    l->ns = base_malloc((p->nops ? p->nops : 1) * sizeof *l->ns);
    l->count = base_malloc((p->nops ? p->nops : 1) * sizeof *l->count);
    if (!l->ns || !l->count) {
        base_free(l->ns), base_free(l->count);
        return -1;
    }
    analyze_devices_by_op(p->devices, p->nops, l->ns, l->count, &l->un_ns, &l->un_count);
    return 0;
}

static void launched_free(launched *l) { base_free(l->ns), base_free(l->count); }

static void views_free(views *v) { base_free(v->ord), base_free(v->cs), base_free(v->cord); }

/* 0, or -1 (nothing held) on out of memory. */
static int views_make(const analyze_profile *p, views *v)
{
    v->ord = base_malloc((p->nops ? p->nops : 1) * sizeof *v->ord);
    v->cs = base_malloc((p->nclasses ? p->nclasses : 1) * sizeof *v->cs);
    v->cord = v->cs ? analyze_profile_classes_by_time(p, v->cs) : NULL;
    if (!v->ord || !v->cord) {
        views_free(v);
        return -1;
    }
    analyze_profile_ops_by_time(p, v->ord);
    return 0;
}

/* The devices array of a GPU trace: one entry per device; an empty array
 * when the trace has no device activity, NULL out of memory. */
static json_t *devices_json(const analyze_profile *p)
{
    size_t n;
    analyze_device *v = analyze_devices_summary(p->devices, &n);
    json_t *arr = json_array();
    if ((!v && n) || !arr) {
        json_decref(arr);
        analyze_devices_summary_free(v, v ? n : 0);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        const analyze_device *d = &v[i];
        json_t *cls = json_array(), *ks = json_array();
        uint64_t all = 0;
        for (int c = 0; c < ANALYZE_DEVICE_NCLASS; c++)
            all += d->class_ns[c];
        for (int c = 0; c < ANALYZE_DEVICE_NCLASS; c++)
            if (d->class_count[c])
                json_array_append_new(cls,
                                      json_pack("{s:s, s:I, s:I, s:f}", "class", analyze_device_class_name(c), "ns",
                                                (json_int_t)d->class_ns[c], "count", (json_int_t)d->class_count[c],
                                                "share", share(d->class_ns[c], all)));
        for (size_t k = 0; k < d->nkernels; k++)
            json_array_append_new(ks,
                                  json_pack("{s:s, s:s, s:I, s:I}", "name", d->kernels[k].name, "class",
                                            analyze_device_class_name(d->kernels[k].cls), "ns",
                                            (json_int_t)d->kernels[k].ns, "count", (json_int_t)d->kernels[k].count));
        json_array_append_new(arr, json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}", "device", d->name,
                                             "streams", (json_int_t)d->streams, "count", (json_int_t)d->count,
                                             "kernel_ns", (json_int_t)d->kernel_ns, "busy_ns", (json_int_t)d->busy_ns,
                                             "idle_ns", (json_int_t)d->idle_ns, "span_ns", (json_int_t)d->span_ns,
                                             "classes", cls, "kernels", ks));
    }
    analyze_devices_summary_free(v, n);
    return arr;
}

/* The devices of a GPU trace as text: per device its totals, its time by
 * class and its top kernels (all when top is 0). 0, or -1 out of memory. */
static int devices_text(FILE *f, const analyze_profile *p, size_t top)
{
    size_t n;
    analyze_device *v = analyze_devices_summary(p->devices, &n);
    if (!v)
        return n ? -1 : 0;
    for (size_t i = 0; i < n; i++) {
        const analyze_device *d = &v[i];
        fprintf(f,
                "\ndevice %s: %llu stream%s, %llu activities; kernels %.3f ms, busy %.3f ms, idle %.3f ms of "
                "%.3f ms (first activity to last; never in the op time above)\n",
                d->name, (unsigned long long)d->streams, d->streams == 1 ? "" : "s", (unsigned long long)d->count,
                (double)d->kernel_ns / 1e6, (double)d->busy_ns / 1e6, (double)d->idle_ns / 1e6,
                (double)d->span_ns / 1e6);
        uint64_t all = 0;
        for (int c = 0; c < ANALYZE_DEVICE_NCLASS; c++)
            all += d->class_ns[c];
        fprintf(f, "%-30s %8s %11s %7s\n", "device class", "count", "total ms", "share");
        for (int c = 0; c < ANALYZE_DEVICE_NCLASS; c++)
            if (d->class_count[c])
                fprintf(f, "%-30s %8llu %11.3f %6.1f%%\n", analyze_device_class_name(c),
                        (unsigned long long)d->class_count[c], (double)d->class_ns[c] / 1e6,
                        100.0 * share(d->class_ns[c], all));
        int nw = 30;
        size_t shown = top && top < d->nkernels ? top : d->nkernels;
        for (size_t k = 0; k < shown; k++)
            nw = analyze_out_width(nw, d->kernels[k].name);
        fprintf(f, "%-*s %-13s %8s %11s %7s\n", nw, "kernel", "class", "count", "total ms", "share");
        for (size_t k = 0; k < shown; k++)
            fprintf(f, "%-*s %-13s %8llu %11.3f %6.1f%%\n", nw, d->kernels[k].name,
                    analyze_device_class_name(d->kernels[k].cls), (unsigned long long)d->kernels[k].count,
                    (double)d->kernels[k].ns / 1e6, 100.0 * share(d->kernels[k].ns, all));
        if (shown < d->nkernels)
            fprintf(f, "(%zu more kernels)\n", d->nkernels - shown);
    }
    analyze_devices_summary_free(v, n);
    return 0;
}

static json_t *breakdown_json_trace(const analyze_profile *p)
{
    uint64_t total = analyze_profile_total_ns(p);
    json_t *t = json_object(), *ops = json_array(), *cls = json_array();
    views v = { 0 };
    launched l;
    if (!t || !ops || !cls || launched_make(p, &l)) {
        json_decref(t), json_decref(ops), json_decref(cls);
        return NULL;
    }
    if (views_make(p, &v)) { /* views_make holds nothing when it fails */
        json_decref(t), json_decref(ops), json_decref(cls), launched_free(&l);
        return NULL;
    }
    size_t *ord = v.ord, *cord = v.cord;
    const analyze_stat *cs = v.cs;
    for (size_t i = 0; i < p->nops; i++) {
        const analyze_optype *o = &p->ops[ord[i]];
        if (!o->all.count)
            continue;
        json_t *e =
            json_pack("{s:s, s:s, s:I, s:I, s:f}", "op", o->name, "class", p->classes[o->cls], "ns",
                      (json_int_t)o->all.ns, "count", (json_int_t)o->all.count, "share", share(o->all.ns, total));
        if (e && l.ns) { /* the device time of what its ops launched, never in ns */
            json_object_set_new(e, "device_ns", json_integer((json_int_t)l.ns[ord[i]]));
            json_object_set_new(e, "device_count", json_integer((json_int_t)l.count[ord[i]]));
        }
        json_array_append_new(ops, e);
    }
    for (size_t i = 0; i < p->nclasses; i++) {
        const analyze_stat *c = &cs[cord[i]];
        if (!c->count)
            continue;
        json_array_append_new(cls, json_pack("{s:s, s:I, s:f}", "class", p->classes[cord[i]], "ns", (json_int_t)c->ns,
                                             "share", share(c->ns, total)));
    }
    json_object_set_new(t, "model", json_string(analyze_profile_model(p)));
    json_object_set_new(t, "mode", json_string(analyze_profile_mode(p)));
    json_object_set_new(t, "steps", json_integer((json_int_t)analyze_profile_steps_kept(p)));
    json_object_set_new(t, "total_ns", json_integer((json_int_t)total));
    json_object_set_new(t, "op_types", ops);
    json_object_set_new(t, "classes", cls);
    if (l.ns) {
        json_object_set_new(t, "device_unlaunched_ns", json_integer((json_int_t)l.un_ns));
        json_object_set_new(t, "device_unlaunched", json_integer((json_int_t)l.un_count));
    }
    views_free(&v);
    launched_free(&l);
    if (p->devices) { /* a trace with device activity */
        json_t *dev = devices_json(p);
        if (!dev) {
            json_decref(t);
            return NULL;
        }
        json_object_set_new(t, "devices", dev);
    }
    return t;
}

static void csv_row(FILE *f, const analyze_profile *p, const char *level, const char *name, const char *cls,
                    const analyze_stat *s, uint64_t total)
{
    analyze_out_csv_str(f, p->source);
    fputc(',', f);
    analyze_out_csv_str(f, analyze_profile_model(p));
    fputc(',', f);
    analyze_out_csv_str(f, analyze_profile_mode(p));
    fprintf(f, ",%s,", level);
    analyze_out_csv_str(f, name);
    fputc(',', f);
    analyze_out_csv_str(f, cls);
    fprintf(f, ",%llu,%llu,%.9f,%.1f,%llu,%llu,%llu,%llu\n", (unsigned long long)s->count, (unsigned long long)s->ns,
            share(s->ns, total), analyze_stat_mean(s), (unsigned long long)(s->count ? s->min_ns : 0),
            (unsigned long long)s->max_ns, (unsigned long long)s->flops, (unsigned long long)s->bytes);
}

static int breakdown_csv(FILE *f, analyze_profile *const *pp, size_t n)
{
    fputs("trace,model,mode,level,name,class,count,ns,share,mean_ns,min_ns,max_ns,flops,bytes\n", f);
    for (size_t k = 0; k < n; k++) {
        const analyze_profile *p = pp[k];
        uint64_t total = analyze_profile_total_ns(p);
        views v;
        if (views_make(p, &v))
            return -1;
        size_t *ord = v.ord, *cord = v.cord;
        const analyze_stat *cs = v.cs;
        for (size_t i = 0; i < p->nops; i++)
            if (p->ops[ord[i]].all.count)
                csv_row(f, p, "op", p->ops[ord[i]].name, p->classes[p->ops[ord[i]].cls], &p->ops[ord[i]].all, total);
        for (size_t i = 0; i < p->nclasses; i++)
            if (cs[cord[i]].count)
                csv_row(f, p, "class", p->classes[cord[i]], p->classes[cord[i]], &cs[cord[i]], total);
        analyze_stat ph[ANALYZE_NPHASE];
        analyze_profile_phase_stats(p, ph);
        for (int i = 0; i < ANALYZE_NPHASE; i++)
            if (ph[i].count)
                csv_row(f, p, "phase", analyze_phase_name((analyze_phase)i), "", &ph[i], total);
        views_free(&v);
    }
    return 0;
}

static void breakdown_text_trace(FILE *f, const analyze_profile *p, size_t top, size_t *ord, analyze_stat *cs,
                                 size_t *cord, const launched *l)
{
    const analyze_meta *m = &p->meta;
    uint64_t total = analyze_profile_total_ns(p);
    fprintf(f, "== %s %s", analyze_profile_model(p), analyze_profile_mode(p));
    if (m->preset)
        fprintf(f, " (%s", m->preset);
    if (m->preset && m->batch)
        fprintf(f, ", batch %u", m->batch);
    if (m->preset && m->threads)
        fprintf(f, ", %u thread%s x %u inter-op", m->threads, m->threads == 1 ? "" : "s", m->inter);
    fprintf(f, "%s  %s\n", m->preset ? ")" : "", p->source);
    if (p->steps_seen)
        fprintf(f,
                "steps: %llu kept of %llu (skipped first %u, last %u); step time mean %.3f ms, min %.3f, "
                "max %.3f\n",
                (unsigned long long)p->step.count, (unsigned long long)p->steps_seen, p->skip_first, p->skip_last,
                analyze_stat_mean(&p->step) / 1e6, p->step.count ? (double)p->step.min_ns / 1e6 : 0.0,
                (double)p->step.max_ns / 1e6);
    else
        fprintf(f, "steps: none in the trace; every op counts\n");
    uint64_t count = 0;
    for (size_t i = 0; i < p->nops; i++)
        count += p->ops[i].all.count;
    fprintf(f, "op time: %.3f ms in %llu ops", (double)total / 1e6, (unsigned long long)count);
    if (p->step.ns)
        fprintf(f, " (%.1f%% of step time)", 100.0 * share(total, p->step.ns));
    if (p->steps_seen && p->outside.count)
        fprintf(f, "; outside steps: %.3f ms in %llu ops", (double)p->outside.ns / 1e6,
                (unsigned long long)p->outside.count);
    fputc('\n', f);
    int nw = 30; /* the op name column fits the longest name */
    for (size_t i = 0; i < p->nops; i++)
        nw = analyze_out_width(nw, p->ops[i].name);
    fprintf(f, "\n%-*s %-13s %8s %11s %7s %7s %10s %10s %10s%s\n", nw, "op type", "class", "count", "total ms", "share",
            "cum", "mean us", "min us", "max us", l->ns ? "   device ms" : "");
    double cum = 0;
    size_t shown = 0, live = 0;
    for (size_t i = 0; i < p->nops; i++) {
        const analyze_optype *o = &p->ops[ord[i]];
        if (!o->all.count)
            continue;
        live++;
        cum += share(o->all.ns, total);
        if (top && shown >= top)
            continue;
        shown++;
        fprintf(f, "%-*s %-13s %8llu %11.3f %6.1f%% %6.1f%% %10.2f %10.2f %10.2f", nw, o->name, p->classes[o->cls],
                (unsigned long long)o->all.count, (double)o->all.ns / 1e6, 100.0 * share(o->all.ns, total), 100.0 * cum,
                analyze_stat_mean(&o->all) / 1e3, (double)o->all.min_ns / 1e3, (double)o->all.max_ns / 1e3);
        if (l->ns)
            fprintf(f, " %11.3f", (double)l->ns[ord[i]] / 1e6);
        fputc('\n', f);
    }
    if (shown < live)
        fprintf(f, "(%zu more op types)\n", live - shown);
    fprintf(f, "%zu of %zu op types make %.0f%% of the op time.\n",
            analyze_ops_for_share(p, ord, ANALYZE_CUMULATIVE_SHARE), live, 100 * ANALYZE_CUMULATIVE_SHARE);
    if (l->ns) { /* the op that launched most device time, in words */
        size_t best = SIZE_MAX;
        uint64_t sum = 0;
        for (size_t i = 0; i < p->nops; i++) {
            sum += l->ns[i];
            if (l->ns[i] && (best == SIZE_MAX || l->ns[i] > l->ns[best]))
                best = i;
        }
        if (best != SIZE_MAX)
            fprintf(f,
                    "device ms: the device activity each op type launched (never in total ms); the most: %s, "
                    "%.3f ms on the CPU, %.3f ms of GPU activity.\n",
                    p->ops[best].name, (double)p->ops[best].all.ns / 1e6, (double)l->ns[best] / 1e6);
        fprintf(f, "device activity launched by host ops: %.3f ms", (double)sum / 1e6);
        if (l->un_count)
            fprintf(f,
                    "; by none (CUDA graph replays, launches outside any op, archives older than the link): "
                    "%.3f ms in %llu",
                    (double)l->un_ns / 1e6, (unsigned long long)l->un_count);
        fputc('\n', f);
    }

    fprintf(f, "\n%-30s %8s %11s %7s\n", "class", "count", "total ms", "share");
    for (size_t i = 0; i < p->nclasses; i++) {
        const analyze_stat *c = &cs[cord[i]];
        if (c->count)
            fprintf(f, "%-30s %8llu %11.3f %6.1f%%\n", p->classes[cord[i]], (unsigned long long)c->count,
                    (double)c->ns / 1e6, 100.0 * share(c->ns, total));
    }
    analyze_stat ph[ANALYZE_NPHASE];
    analyze_profile_phase_stats(p, ph);
    fprintf(f, "\n%-30s %8s %11s %7s\n", "phase", "count", "total ms", "share");
    for (int i = 0; i < ANALYZE_NPHASE; i++)
        if (ph[i].count)
            fprintf(f, "%-30s %8llu %11.3f %6.1f%%\n", analyze_phase_name((analyze_phase)i),
                    (unsigned long long)ph[i].count, (double)ph[i].ns / 1e6, 100.0 * share(ph[i].ns, total));
    if (p->tensors) {
        char b[32];
        fprintf(f, "\nmemory: peak %s over %llu tensors;", analyze_out_bytes(p->peak_bytes, b, sizeof b),
                (unsigned long long)p->tensors);
        for (size_t r = 0; r < p->nroles; r++)
            fprintf(f, " %s %s%s", p->roles[r], analyze_out_bytes(p->role_peak[r], b, sizeof b),
                    r + 1 < p->nroles ? "," : "");
        fprintf(f, " (peaks by role)\n");
    }
    fputc('\n', f);
}

/* models x classes, percent of op time */
static int heatmap_text(FILE *f, analyze_profile *const *pp, size_t n)
{
    static const char *const std[] = { "elementwise", "matrix",       "reduction",    "convolution",
                                       "random",      "optimization", "data_movement" };
    analyze_names cls = { 0 };
    int bad = 0;
    for (size_t i = 0; i < sizeof std / sizeof std[0]; i++)
        bad |= analyze_names_add(&cls, std[i]);
    for (size_t k = 0; k < n; k++) /* classes from other versions, too */
        for (size_t c = 0; c < pp[k]->nclasses; c++)
            bad |= analyze_names_add(&cls, pp[k]->classes[c]);
    if (bad) {
        analyze_names_free(&cls);
        return -1;
    }
    const char **col = cls.v;
    size_t ncol = cls.n;
    fprintf(f, "== share of op time by class (%%)\n%-24s", "model/mode");
    for (size_t j = 0; j < ncol; j++)
        fprintf(f, " %6s", col[j]);
    fputc('\n', f);
    for (size_t k = 0; k < n; k++) {
        const analyze_profile *p = pp[k];
        char lb[128];
        analyze_stat *cs = base_malloc((p->nclasses ? p->nclasses : 1) * sizeof *cs);
        if (!cs) {
            analyze_names_free(&cls);
            return -1;
        }
        analyze_profile_class_stats(p, cs);
        uint64_t total = analyze_profile_total_ns(p);
        fprintf(f, "%-24s", analyze_out_label(p, lb, sizeof lb));
        for (size_t j = 0; j < ncol; j++) {
            uint64_t ns = 0;
            int have = 0;
            for (size_t c = 0; c < p->nclasses; c++)
                if (strcmp(p->classes[c], col[j]) == 0)
                    ns = cs[c].ns, have = cs[c].count > 0;
            int w = strlen(col[j]) > 6 ? (int)strlen(col[j]) : 6;
            if (have)
                fprintf(f, " %*.1f", w, 100.0 * share(ns, total));
            else
                fprintf(f, " %*s", w, ".");
        }
        fputc('\n', f);
        base_free(cs);
    }
    analyze_names_free(&cls);
    return 0;
}

int analyze_breakdown(FILE *f, analyze_profile *const *pp, size_t n, cli_format fmt, size_t top)
{
    if (fmt == CLI_JSON) {
        json_t *root = json_object(), *arr = json_array();
        if (!root || !arr) {
            json_decref(root), json_decref(arr);
            return -1;
        }
        json_object_set_new(root, "schema", json_integer(1));
        json_object_set_new(root, "traces", arr);
        for (size_t k = 0; k < n; k++) {
            json_t *t = breakdown_json_trace(pp[k]);
            if (!t) {
                json_decref(root);
                return -1;
            }
            json_array_append_new(arr, t);
        }
        return analyze_out_json(f, root);
    }
    if (fmt == CLI_CSV)
        return breakdown_csv(f, pp, n) || ferror(f) ? -1 : 0;
    for (size_t k = 0; k < n; k++) {
        const analyze_profile *p = pp[k];
        views v;
        if (views_make(p, &v))
            return -1;
        launched l;
        if (launched_make(p, &l)) {
            views_free(&v);
            return -1;
        }
        breakdown_text_trace(f, p, top, v.ord, v.cs, v.cord, &l);
        views_free(&v);
        launched_free(&l);
        if (devices_text(f, p, top ? top : 10))
            return -1;
    }
    if (n > 1 && heatmap_text(f, pp, n))
        return -1;
    return ferror(f) ? -1 : 0;
}

/* ---- the row ------------------------------------------------------------------------- */
static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    const analyze_profile_set *s = r;
    return analyze_out_status(f, analyze_breakdown(f, s->p, s->n, fmt, o->top));
}

const analyze_analysis analyze_row_breakdown = {
    .name = "breakdown",
    .args = "[options] TRACE...",
    .summary = "time by op type, class and phase; how few op types make 90%;\n"
               "a models x classes table when several traces are given",
    .about = "Time by op type, by class and by phase; the top op types and how few of them make\n"
             "90% of the op time; a models x classes table when several traces are given.\n",
    .options = "  --top N                 show only the first N op types (text)\n",
    .takes = ANALYZE_TAKES_TOP | ANALYZE_TAKES_LIVE | ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = analyze_profile_set_create,
    .print = print,
    .destroy = analyze_profile_set_destroy,
};
