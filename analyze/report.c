/* report.c -- breakdown, compare, similarity, diff and scaling, in text, CSV and JSON. */
#include "analyze/report.h"

#include "analyze/import.h"

#include "analyze/out.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int analyze_format_parse(const char *s)
{
    if (!s)
        return -1;
    if (strcmp(s, "text") == 0)
        return ANALYZE_TEXT;
    if (strcmp(s, "csv") == 0)
        return ANALYZE_CSV;
    if (strcmp(s, "json") == 0)
        return ANALYZE_JSON;
    return -1;
}

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

size_t analyze_ops_for_share(const analyze_profile *p, double target)
{
    uint64_t total = analyze_profile_total_ns(p);
    if (!total || !p->nops)
        return 0;
    size_t *ord = malloc(p->nops * sizeof *ord);
    if (!ord)
        return 0;
    analyze_profile_ops_by_time(p, ord);
    uint64_t cum = 0;
    size_t k = 0;
    while (k < p->nops) {
        cum += p->ops[ord[k++]].all.ns;
        if ((double)cum >= target * (double)total - 1e-9)
            break;
    }
    free(ord);
    return k;
}

/* Classes sorted by descending time. */
static size_t *classes_by_time(const analyze_profile *p, analyze_stat *cs)
{
    size_t *ord = malloc((p->nclasses ? p->nclasses : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    analyze_profile_class_stats(p, cs);
    for (size_t i = 0; i < p->nclasses; i++)
        ord[i] = i;
    for (size_t i = 1; i < p->nclasses; i++) /* insertion sort: few classes */
        for (size_t j = i; j > 0 && cs[ord[j]].ns > cs[ord[j - 1]].ns; j--) {
            size_t t = ord[j];
            ord[j] = ord[j - 1], ord[j - 1] = t;
        }
    return ord;
}

/* ---- breakdown ---------------------------------------------------------------------- */
static json_t *breakdown_json_trace(const analyze_profile *p)
{
    uint64_t total = analyze_profile_total_ns(p);
    json_t *t = json_object(), *ops = json_array(), *cls = json_array();
    size_t *ord = malloc((p->nops ? p->nops : 1) * sizeof *ord);
    analyze_stat *cs = malloc((p->nclasses ? p->nclasses : 1) * sizeof *cs);
    size_t *cord = cs ? classes_by_time(p, cs) : NULL;
    if (!t || !ops || !cls || !ord || !cord) {
        json_decref(t), json_decref(ops), json_decref(cls);
        free(ord), free(cs), free(cord);
        return NULL;
    }
    analyze_profile_ops_by_time(p, ord);
    for (size_t i = 0; i < p->nops; i++) {
        const analyze_optype *o = &p->ops[ord[i]];
        if (!o->all.count)
            continue;
        json_array_append_new(ops, json_pack("{s:s, s:s, s:I, s:I, s:f}", "op", o->name, "class",
                                             p->classes[o->cls], "ns", (json_int_t)o->all.ns, "count",
                                             (json_int_t)o->all.count, "share", share(o->all.ns, total)));
    }
    for (size_t i = 0; i < p->nclasses; i++) {
        const analyze_stat *c = &cs[cord[i]];
        if (!c->count)
            continue;
        json_array_append_new(cls, json_pack("{s:s, s:I, s:f}", "class", p->classes[cord[i]], "ns",
                                             (json_int_t)c->ns, "share", share(c->ns, total)));
    }
    json_object_set_new(t, "model", json_string(analyze_profile_model(p)));
    json_object_set_new(t, "mode", json_string(analyze_profile_mode(p)));
    json_object_set_new(t, "steps", json_integer((json_int_t)analyze_profile_steps_kept(p)));
    json_object_set_new(t, "total_ns", json_integer((json_int_t)total));
    json_object_set_new(t, "op_types", ops);
    json_object_set_new(t, "classes", cls);
    free(ord), free(cs), free(cord);
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
    fprintf(f, ",%llu,%llu,%.9f,%.1f,%llu,%llu,%llu,%llu\n", (unsigned long long)s->count,
            (unsigned long long)s->ns, share(s->ns, total), analyze_stat_mean(s),
            (unsigned long long)(s->count ? s->min_ns : 0), (unsigned long long)s->max_ns,
            (unsigned long long)s->flops, (unsigned long long)s->bytes);
}

static int breakdown_csv(FILE *f, analyze_profile *const *pp, size_t n)
{
    fputs("trace,model,mode,level,name,class,count,ns,share,mean_ns,min_ns,max_ns,flops,bytes\n", f);
    for (size_t k = 0; k < n; k++) {
        const analyze_profile *p = pp[k];
        uint64_t total = analyze_profile_total_ns(p);
        size_t *ord = malloc((p->nops ? p->nops : 1) * sizeof *ord);
        analyze_stat *cs = malloc((p->nclasses ? p->nclasses : 1) * sizeof *cs);
        size_t *cord = cs ? classes_by_time(p, cs) : NULL;
        if (!ord || !cord) {
            free(ord), free(cs), free(cord);
            return -1;
        }
        analyze_profile_ops_by_time(p, ord);
        for (size_t i = 0; i < p->nops; i++)
            if (p->ops[ord[i]].all.count)
                csv_row(f, p, "op", p->ops[ord[i]].name, p->classes[p->ops[ord[i]].cls], &p->ops[ord[i]].all,
                        total);
        for (size_t i = 0; i < p->nclasses; i++)
            if (cs[cord[i]].count)
                csv_row(f, p, "class", p->classes[cord[i]], p->classes[cord[i]], &cs[cord[i]], total);
        analyze_stat ph[ANALYZE_NPHASE];
        analyze_profile_phase_stats(p, ph);
        for (int i = 0; i < ANALYZE_NPHASE; i++)
            if (ph[i].count)
                csv_row(f, p, "phase", analyze_phase_name((analyze_phase)i), "", &ph[i], total);
        free(ord), free(cs), free(cord);
    }
    return 0;
}

static void breakdown_text_trace(FILE *f, const analyze_profile *p, size_t top, size_t *ord, analyze_stat *cs,
                                 size_t *cord)
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
        fprintf(f, "steps: %llu kept of %llu (skipped first %u, last %u); step time mean %.3f ms, min %.3f, "
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
    fprintf(f, "\n%-*s %-13s %8s %11s %7s %7s %10s %10s %10s\n", nw, "op type", "class", "count", "total ms",
            "share", "cum", "mean us", "min us", "max us");
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
        fprintf(f, "%-*s %-13s %8llu %11.3f %6.1f%% %6.1f%% %10.2f %10.2f %10.2f\n", nw, o->name, p->classes[o->cls],
                (unsigned long long)o->all.count, (double)o->all.ns / 1e6, 100.0 * share(o->all.ns, total),
                100.0 * cum, analyze_stat_mean(&o->all) / 1e3, (double)o->all.min_ns / 1e3,
                (double)o->all.max_ns / 1e3);
    }
    if (shown < live)
        fprintf(f, "(%zu more op types)\n", live - shown);
    fprintf(f, "%zu of %zu op types make %.0f%% of the op time.\n", analyze_ops_for_share(p, ANALYZE_CUMULATIVE_SHARE),
            live, 100 * ANALYZE_CUMULATIVE_SHARE);

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
    static const char *const std[] = { "elementwise", "matrix",      "reduction",    "convolution",
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
        analyze_stat *cs = malloc((p->nclasses ? p->nclasses : 1) * sizeof *cs);
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
        free(cs);
    }
    analyze_names_free(&cls);
    return 0;
}

int analyze_breakdown(FILE *f, analyze_profile *const *pp, size_t n, analyze_format fmt, size_t top)
{
    if (fmt == ANALYZE_JSON) {
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
    if (fmt == ANALYZE_CSV)
        return breakdown_csv(f, pp, n) || ferror(f) ? -1 : 0;
    for (size_t k = 0; k < n; k++) {
        const analyze_profile *p = pp[k];
        size_t *ord = malloc((p->nops ? p->nops : 1) * sizeof *ord);
        analyze_stat *cs = malloc((p->nclasses ? p->nclasses : 1) * sizeof *cs);
        size_t *cord = cs ? classes_by_time(p, cs) : NULL;
        if (!ord || !cord) {
            free(ord), free(cs), free(cord);
            return -1;
        }
        analyze_profile_ops_by_time(p, ord);
        breakdown_text_trace(f, p, top, ord, cs, cord);
        free(ord), free(cs), free(cord);
    }
    if (n > 1 && heatmap_text(f, pp, n))
        return -1;
    return ferror(f) ? -1 : 0;
}

/* ---- compare ---------------------------------------------------------------------------- */
static int is_mode(const analyze_profile *p, const char *mode)
{
    return p->meta.mode && strcmp(p->meta.mode, mode) == 0;
}

int analyze_pairs(analyze_profile *const *p, size_t n, int in_order, analyze_pair *out, int *used, char *err,
                  size_t errlen)
{
    int np = 0;
    for (size_t i = 0; i < n; i++)
        used[i] = 0;
    if (in_order) {
        if (n % 2) {
            snprintf(err, errlen, "--pairs wants an even number of traces (training, inference, ...), not %zu", n);
            return -1;
        }
        for (size_t i = 0; i < n; i += 2) {
            if (!is_mode(p[i], "train") || !is_mode(p[i + 1], "infer")) {
                snprintf(err, errlen, "%s (%s) and %s (%s) are not a training, inference pair", p[i]->source,
                         analyze_profile_mode(p[i]), p[i + 1]->source, analyze_profile_mode(p[i + 1]));
                return -1;
            }
            out[np].train = i, out[np].infer = i + 1;
            used[i] = used[i + 1] = 1;
            np++;
        }
        return np;
    }
    for (size_t i = 0; i < n; i++) {
        if (used[i] || !is_mode(p[i], "train") || !p[i]->meta.model)
            continue;
        for (size_t j = 0; j < n; j++) {
            if (used[j] || !is_mode(p[j], "infer") || !p[j]->meta.model ||
                strcmp(p[i]->meta.model, p[j]->meta.model) != 0)
                continue;
            out[np].train = i, out[np].infer = j;
            used[i] = used[j] = 1;
            np++;
            break;
        }
    }
    if (!np) {
        snprintf(err, errlen, "no training/inference pair among the traces (pairs are matched by the model "
                              "name of run_begin; or give --pairs TRAIN INFER ...)");
        return -1;
    }
    return np;
}

double analyze_step_ns(const analyze_profile *p) { return analyze_stat_mean(&p->step); }

/* Share of class `name` in p (0 if absent). */
static double class_share(const analyze_profile *p, const char *name, const analyze_stat *cs)
{
    uint64_t total = analyze_profile_total_ns(p);
    for (size_t c = 0; c < p->nclasses; c++)
        if (strcmp(p->classes[c], name) == 0)
            return share(cs[c].ns, total);
    return 0.0;
}

/* Does class `name` have kept ops in p? */
static int class_used(const analyze_profile *p, const char *name, const analyze_stat *cs)
{
    for (size_t c = 0; c < p->nclasses; c++)
        if (strcmp(p->classes[c], name) == 0)
            return cs[c].count > 0;
    return 0;
}

static int op_in(const analyze_profile *p, const char *name)
{
    for (size_t i = 0; i < p->nops; i++)
        if (p->ops[i].all.count && strcmp(p->ops[i].name, name) == 0)
            return 1;
    return 0;
}

/* The union of both profiles' class names, in a stable order. */
static size_t class_union(const analyze_profile *a, const analyze_profile *b, const char **out)
{
    size_t n = 0;
    const analyze_profile *ps[2] = { a, b };
    for (int k = 0; k < 2; k++)
        for (size_t c = 0; c < ps[k]->nclasses; c++) {
            size_t j = 0;
            while (j < n && strcmp(out[j], ps[k]->classes[c]) != 0)
                j++;
            if (j == n)
                out[n++] = ps[k]->classes[c];
        }
    return n;
}

int analyze_compare(FILE *f, analyze_profile *const *pp, const analyze_pair *pairs, size_t npairs,
                    analyze_format fmt)
{
    json_t *root = NULL, *jpairs = NULL;
    if (fmt == ANALYZE_JSON) {
        root = json_object();
        jpairs = json_array();
        if (!root || !jpairs) {
            json_decref(root), json_decref(jpairs);
            return -1;
        }
        json_object_set_new(root, "schema", json_integer(1));
        json_object_set_new(root, "pairs", jpairs);
    } else if (fmt == ANALYZE_CSV) {
        fputs("model,kind,name,class,train,infer,ratio\n", f);
    }
    for (size_t k = 0; k < npairs; k++) {
        const analyze_profile *tr = pp[pairs[k].train], *in = pp[pairs[k].infer];
        double ts = analyze_step_ns(tr), is = analyze_step_ns(in);
        double ratio = is > 0 ? ts / is : 0.0;
        uint64_t ttot = analyze_profile_total_ns(tr);
        size_t ncl = tr->nclasses + in->nclasses;
        const char **cls = malloc((ncl ? ncl : 1) * sizeof *cls);
        analyze_stat *tcs = malloc((tr->nclasses ? tr->nclasses : 1) * sizeof *tcs);
        analyze_stat *ics = malloc((in->nclasses ? in->nclasses : 1) * sizeof *ics);
        size_t *ord = malloc((tr->nops ? tr->nops : 1) * sizeof *ord);
        if (!cls || !tcs || !ics || !ord) {
            free(cls), free(tcs), free(ics), free(ord);
            json_decref(root);
            return -1;
        }
        ncl = class_union(tr, in, cls);
        analyze_profile_class_stats(tr, tcs);
        analyze_profile_class_stats(in, ics);
        analyze_profile_ops_by_time(tr, ord);
        const char *model = analyze_profile_model(tr);
        uint64_t only_ns = 0;
        for (size_t i = 0; i < tr->nops; i++)
            if (tr->ops[ord[i]].all.count && !op_in(in, tr->ops[ord[i]].name))
                only_ns += tr->ops[ord[i]].all.ns;

        if (fmt == ANALYZE_JSON) {
            json_t *p = json_object(), *jc = json_array(), *jo = json_array();
            json_object_set_new(p, "model", json_string(model));
            json_object_set_new(p, "train", json_pack("{s:s, s:I, s:f, s:I}", "trace", tr->source, "steps",
                                                      (json_int_t)tr->step.count, "step_ns", ts, "total_ns",
                                                      (json_int_t)ttot));
            json_object_set_new(p, "infer", json_pack("{s:s, s:I, s:f, s:I}", "trace", in->source, "steps",
                                                      (json_int_t)in->step.count, "step_ns", is, "total_ns",
                                                      (json_int_t)analyze_profile_total_ns(in)));
            json_object_set_new(p, "step_ratio", is > 0 ? json_real(ratio) : json_null());
            for (size_t c = 0; c < ncl; c++)
                if (class_used(tr, cls[c], tcs) || class_used(in, cls[c], ics))
                    json_array_append_new(jc, json_pack("{s:s, s:f, s:f}", "class", cls[c], "train_share",
                                                    class_share(tr, cls[c], tcs), "infer_share",
                                                    class_share(in, cls[c], ics)));
            json_object_set_new(p, "classes", jc);
            for (size_t i = 0; i < tr->nops; i++) {
                const analyze_optype *o = &tr->ops[ord[i]];
                if (o->all.count && !op_in(in, o->name))
                    json_array_append_new(jo, json_pack("{s:s, s:s, s:I, s:I, s:f}", "op", o->name, "class",
                                                        tr->classes[o->cls], "ns", (json_int_t)o->all.ns, "count",
                                                        (json_int_t)o->all.count, "share", share(o->all.ns, ttot)));
            }
            json_object_set_new(p, "train_only", jo);
            json_object_set_new(p, "train_only_share", json_real(share(only_ns, ttot)));
            json_array_append_new(jpairs, p);
        } else if (fmt == ANALYZE_CSV) {
            analyze_out_csv_str(f, model);
            fprintf(f, ",step,step_ns,,%.1f,%.1f,%.6f\n", ts, is, ratio);
            for (size_t c = 0; c < ncl; c++) {
                if (!class_used(tr, cls[c], tcs) && !class_used(in, cls[c], ics))
                    continue;
                double a = class_share(tr, cls[c], tcs), b = class_share(in, cls[c], ics);
                analyze_out_csv_str(f, model);
                fputs(",class,", f);
                analyze_out_csv_str(f, cls[c]);
                fputc(',', f);
                analyze_out_csv_str(f, cls[c]);
                fprintf(f, ",%.9f,%.9f,%.6f\n", a, b, b > 0 ? a / b : 0.0);
            }
            for (size_t i = 0; i < tr->nops; i++) {
                const analyze_optype *o = &tr->ops[ord[i]];
                if (!o->all.count || op_in(in, o->name))
                    continue;
                analyze_out_csv_str(f, model);
                fputs(",train_only,", f);
                analyze_out_csv_str(f, o->name);
                fputc(',', f);
                analyze_out_csv_str(f, tr->classes[o->cls]);
                fprintf(f, ",%.9f,0,0\n", share(o->all.ns, ttot));
            }
        } else {
            fprintf(f, "== %s: training %s vs inference %s\n", model, tr->source, in->source);
            if (ts > 0 && is > 0)
                fprintf(f, "step time: training %.3f ms, inference %.3f ms: training is %.2fx inference\n",
                        ts / 1e6, is / 1e6, ratio);
            else
                fprintf(f, "step time: %s has no kept steps\n", ts > 0 ? "the inference trace" : "a trace");
            fprintf(f, "\n%-30s %12s %12s\n", "class", "train share", "infer share");
            for (size_t c = 0; c < ncl; c++)
                if (class_used(tr, cls[c], tcs) || class_used(in, cls[c], ics))
                    fprintf(f, "%-30s %11.1f%% %11.1f%%\n", cls[c], 100 * class_share(tr, cls[c], tcs),
                        100 * class_share(in, cls[c], ics));
            fprintf(f, "\nops only in training: %.1f%% of the training op time\n", 100 * share(only_ns, ttot));
            for (size_t i = 0; i < tr->nops; i++) {
                const analyze_optype *o = &tr->ops[ord[i]];
                if (o->all.count && !op_in(in, o->name))
                    fprintf(f, "  %-28s %-13s %6.1f%%\n", o->name, tr->classes[o->cls], 100 * share(o->all.ns, ttot));
            }
            fputc('\n', f);
        }
        free(cls), free(tcs), free(ics), free(ord);
    }
    if (fmt == ANALYZE_JSON)
        return analyze_out_json(f, root);
    return ferror(f) ? -1 : 0;
}

/* ---- similarity ------------------------------------------------------------------------- */
double analyze_cosine(const double *a, const double *b, size_t dim)
{
    double ab = 0, aa = 0, bb = 0;
    for (size_t i = 0; i < dim; i++)
        ab += a[i] * b[i], aa += a[i] * a[i], bb += b[i] * b[i];
    if (aa <= 0 || bb <= 0)
        return 0.0;
    double c = ab / (sqrt(aa) * sqrt(bb));
    return c > 1.0 ? 1.0 : c < 0.0 ? 0.0 : c;
}

void analyze_sim_destroy(analyze_sim *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        free(s->labels[i]);
    for (size_t i = 0; i < s->dim; i++)
        free(s->dims[i]);
    free(s->labels), free(s->dims), free(s->vec), free(s->cos), free(s->merges), free(s->order);
    free(s);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static size_t find_str(char **v, size_t n, const char *s)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], s) == 0)
            return i;
    return n;
}

/* Leaves of cluster c in dendrogram order. */
static void leaves(const analyze_sim *s, size_t c, size_t **out)
{
    if (c < s->n) {
        *(*out)++ = c;
        return;
    }
    const analyze_merge *m = &s->merges[c - s->n];
    leaves(s, m->a, out);
    leaves(s, m->b, out);
}

analyze_sim *analyze_sim_create(analyze_profile *const *pp, size_t np, int by_class)
{
    analyze_sim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    /* groups by label, dimensions by name */
    s->labels = calloc(np ? np : 1, sizeof *s->labels);
    size_t *group = calloc(np ? np : 1, sizeof *group);
    size_t dcap = 0;
    for (size_t k = 0; k < np; k++)
        dcap += by_class ? pp[k]->nclasses : pp[k]->nops;
    s->dims = calloc(dcap ? dcap : 1, sizeof *s->dims);
    if (!s->labels || !group || !s->dims)
        goto fail;
    for (size_t k = 0; k < np; k++) {
        char lb[256];
        analyze_out_label(pp[k], lb, sizeof lb);
        size_t g = find_str(s->labels, s->n, lb);
        if (g == s->n && !(s->labels[s->n++] = strdup(lb)))
            goto fail;
        group[k] = g;
        size_t nd = by_class ? pp[k]->nclasses : pp[k]->nops;
        for (size_t i = 0; i < nd; i++) {
            const char *name = by_class ? pp[k]->classes[i] : pp[k]->ops[i].name;
            if (!by_class && !pp[k]->ops[i].all.count)
                continue; /* no kept time: not a dimension */
            if (find_str(s->dims, s->dim, name) == s->dim && !(s->dims[s->dim++] = strdup(name)))
                goto fail;
        }
    }
    qsort(s->dims, s->dim, sizeof *s->dims, cmp_str);
    size_t n = s->n;
    s->vec = calloc(n * (s->dim ? s->dim : 1), sizeof *s->vec);
    s->cos = calloc(n ? n * n : 1, sizeof *s->cos);
    s->merges = calloc(n ? n : 1, sizeof *s->merges);
    s->order = calloc(n ? n : 1, sizeof *s->order);
    if (!s->vec || !s->cos || !s->merges || !s->order)
        goto fail;
    for (size_t k = 0; k < np; k++) {
        const analyze_profile *p = pp[k];
        double *v = &s->vec[group[k] * s->dim];
        for (size_t i = 0; i < p->nops; i++) {
            const char *name = by_class ? p->classes[p->ops[i].cls] : p->ops[i].name;
            char **hit = bsearch(&name, s->dims, s->dim, sizeof *s->dims, cmp_str);
            if (hit)
                v[hit - s->dims] += (double)p->ops[i].all.ns;
        }
    }
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) {
            double c = analyze_cosine(&s->vec[i * s->dim], &s->vec[j * s->dim], s->dim);
            if (i == j && c > 0)
                c = 1.0;
            s->cos[i * n + j] = c;
        }
    /* average linkage (UPGMA) on d = 1 - cosine */
    if (n > 1) {
        size_t m = 2 * n - 1;
        double *d = malloc(m * m * sizeof *d);
        size_t *size = calloc(m, sizeof *size);
        int *alive = calloc(m, sizeof *alive);
        if (!d || !size || !alive) {
            free(d), free(size), free(alive);
            goto fail;
        }
        for (size_t i = 0; i < n; i++) {
            size[i] = 1, alive[i] = 1;
            for (size_t j = 0; j < n; j++)
                d[i * m + j] = 1.0 - s->cos[i * n + j];
        }
        for (size_t step = 0; step < n - 1; step++) {
            size_t ba = 0, bb = 0;
            double best = INFINITY;
            for (size_t i = 0; i < n + step; i++)
                for (size_t j = i + 1; alive[i] && j < n + step; j++)
                    if (alive[j] && d[i * m + j] < best - 1e-15)
                        best = d[i * m + j], ba = i, bb = j;
            size_t c = n + step;
            s->merges[step] = (analyze_merge){ ba, bb, best, size[ba] + size[bb] };
            alive[ba] = alive[bb] = 0;
            alive[c] = 1;
            size[c] = size[ba] + size[bb];
            for (size_t k = 0; k < c; k++) {
                if (!alive[k])
                    continue;
                double v = ((double)size[ba] * d[k * m + ba] + (double)size[bb] * d[k * m + bb]) / (double)size[c];
                d[k * m + c] = d[c * m + k] = v;
            }
            d[c * m + c] = 0;
        }
        free(d), free(size), free(alive);
        size_t *o = s->order;
        leaves(s, 2 * n - 2, &o);
    } else if (n == 1) {
        s->order[0] = 0;
    }
    free(group);
    return s;
fail:
    free(group);
    analyze_sim_destroy(s);
    return NULL;
}

static void dendrogram_text(FILE *f, const analyze_sim *s)
{
    size_t n = s->n;
    if (n < 2) {
        fprintf(f, "(one group: no clustering)\n");
        return;
    }
    size_t lw = 0;
    for (size_t i = 0; i < n; i++)
        if (strlen(s->labels[i]) > lw)
            lw = strlen(s->labels[i]);
    const size_t W = 48, rows = 2 * n - 1, cols = lw + 2 + W + 1;
    double maxh = s->merges[n - 2].distance > 0 ? s->merges[n - 2].distance : 1.0;
    char *g = malloc(rows * (cols + 1));
    size_t *row = malloc((2 * n - 1) * sizeof *row), *col = malloc((2 * n - 1) * sizeof *col);
    if (!g || !row || !col) {
        free(g), free(row), free(col);
        return;
    }
    memset(g, ' ', rows * (cols + 1));
    for (size_t r = 0; r < n; r++) {
        size_t leaf = s->order[r];
        row[leaf] = 2 * r;
        col[leaf] = lw + 1;
        memcpy(&g[2 * r * (cols + 1)], s->labels[leaf], strlen(s->labels[leaf]));
    }
    for (size_t k = 0; k < n - 1; k++) {
        const analyze_merge *m = &s->merges[k];
        size_t c = n + k;
        size_t x = lw + 2 + (size_t)lround(m->distance / maxh * (double)(W - 1));
        size_t ra = row[m->a], rb = row[m->b];
        if (ra > rb) {
            size_t t = ra;
            ra = rb, rb = t;
        }
        row[c] = (ra + rb) / 2;
        col[c] = x;
        size_t ch[2] = { m->a, m->b };
        for (int i = 0; i < 2; i++) {
            size_t r = row[ch[i]];
            for (size_t xx = col[ch[i]]; xx < x; xx++)
                if (g[r * (cols + 1) + xx] == ' ')
                    g[r * (cols + 1) + xx] = '-';
        }
        for (size_t r = ra; r <= rb; r++)
            g[r * (cols + 1) + x] = (r == ra || r == rb) ? '+' : '|';
    }
    for (size_t r = 0; r < rows; r++) {
        char *line = &g[r * (cols + 1)];
        size_t e = cols;
        while (e > 0 && line[e - 1] == ' ')
            e--;
        fprintf(f, "  %.*s\n", (int)e, line);
    }
    fprintf(f, "  %*s0%*s%.3f  (distance = 1 - cosine)\n", (int)(lw + 2), "", (int)(W - 2), "", maxh);
    free(g), free(row), free(col);
}

int analyze_similarity(FILE *f, const analyze_sim *s, int by_class, analyze_format fmt)
{
    size_t n = s->n;
    if (fmt == ANALYZE_JSON) {
        json_t *root = json_object(), *labels = json_array(), *dims = json_array(), *mat = json_array(),
               *merges = json_array(), *order = json_array();
        if (!root || !labels || !dims || !mat || !merges || !order) {
            json_decref(root), json_decref(labels), json_decref(dims), json_decref(mat), json_decref(merges),
                json_decref(order);
            return -1;
        }
        json_object_set_new(root, "schema", json_integer(1));
        json_object_set_new(root, "by", json_string(by_class ? "class" : "type"));
        for (size_t i = 0; i < n; i++)
            json_array_append_new(labels, json_string(s->labels[i]));
        for (size_t i = 0; i < s->dim; i++)
            json_array_append_new(dims, json_string(s->dims[i]));
        for (size_t i = 0; i < n; i++) {
            json_t *r = json_array();
            for (size_t j = 0; j < n; j++)
                json_array_append_new(r, json_real(s->cos[i * n + j]));
            json_array_append_new(mat, r);
        }
        for (size_t k = 0; k + 1 < n; k++)
            json_array_append_new(merges, json_pack("{s:I, s:I, s:f, s:I}", "a", (json_int_t)s->merges[k].a, "b",
                                                    (json_int_t)s->merges[k].b, "distance", s->merges[k].distance,
                                                    "size", (json_int_t)s->merges[k].size));
        for (size_t i = 0; i < n; i++)
            json_array_append_new(order, json_integer((json_int_t)s->order[i]));
        json_object_set_new(root, "labels", labels);
        json_object_set_new(root, "dimensions", dims);
        json_object_set_new(root, "cosine", mat);
        json_object_set_new(root, "merges", merges);
        json_object_set_new(root, "order", order);
        return analyze_out_json(f, root);
    }
    if (fmt == ANALYZE_CSV) {
        fputs("label", f);
        for (size_t j = 0; j < n; j++) {
            fputc(',', f);
            analyze_out_csv_str(f, s->labels[j]);
        }
        fputc('\n', f);
        for (size_t i = 0; i < n; i++) {
            analyze_out_csv_str(f, s->labels[i]);
            for (size_t j = 0; j < n; j++)
                fprintf(f, ",%.6f", s->cos[i * n + j]);
            fputc('\n', f);
        }
        return ferror(f) ? -1 : 0;
    }
    fprintf(f, "== cosine similarity of op %s time vectors (%zu %s)\n", by_class ? "class" : "type", s->dim,
            by_class ? "classes" : "op types");
    size_t lw = 10;
    for (size_t i = 0; i < n; i++)
        if (strlen(s->labels[i]) > lw)
            lw = strlen(s->labels[i]);
    fprintf(f, "%-*s", (int)lw, "");
    for (size_t j = 0; j < n; j++)
        fprintf(f, " %6zu", j + 1);
    fputc('\n', f);
    for (size_t i = 0; i < n; i++) {
        fprintf(f, "%-*s", (int)lw, s->labels[i]);
        for (size_t j = 0; j < n; j++)
            fprintf(f, " %6.3f", s->cos[i * n + j]);
        fprintf(f, "   (%zu)\n", i + 1);
    }
    fprintf(f, "\n== average-linkage clustering\n");
    for (size_t k = 0; k + 1 < n; k++) {
        const analyze_merge *m = &s->merges[k];
        fprintf(f, "  %2zu: distance %.4f  {", k + 1, m->distance);
        /* print the leaves of both sides */
        size_t *buf = malloc(n * sizeof *buf), *e = buf;
        if (buf) {
            leaves(s, n + k, &e);
            for (size_t *q = buf; q < e; q++)
                fprintf(f, "%s%s", q == buf ? "" : ", ", s->labels[*q]);
            free(buf);
        }
        fprintf(f, "}\n");
    }
    fputc('\n', f);
    dendrogram_text(f, s);
    return ferror(f) ? -1 : 0;
}

/* ---- diff ------------------------------------------------------------------------------- */
void analyze_diff_destroy(analyze_diff *d)
{
    if (!d)
        return;
    free(d->ops), free(d->classes);
    free(d);
}

/* The row named `name` in rows[0..*n), appended when absent (room is the caller's). */
static analyze_diff_row *diff_row(analyze_diff_row *rows, size_t *n, const char *name, const char *cls)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    analyze_diff_row *r = &rows[(*n)++];
    memset(r, 0, sizeof *r);
    r->name = name, r->cls = cls;
    return r;
}

/* Raw totals of one side into a row (per-step values come in diff_rows_finish). */
static void diff_row_add(analyze_diff_row *r, int side_b, const analyze_stat *s)
{
    if (side_b)
        r->in_b = 1, r->b_ns += (double)s->ns, r->b_count += (double)s->count;
    else
        r->in_a = 1, r->a_ns += (double)s->ns, r->a_count += (double)s->count;
}

static void diff_rows_finish(analyze_diff_row *rows, size_t n, const analyze_diff *d)
{
    double at = (double)analyze_profile_total_ns(d->a), bt = (double)analyze_profile_total_ns(d->b);
    for (size_t i = 0; i < n; i++) {
        analyze_diff_row *r = &rows[i];
        r->a_share = at > 0 ? r->a_ns / at : 0.0;
        r->b_share = bt > 0 ? r->b_ns / bt : 0.0;
        r->dshare_pp = 100.0 * (r->b_share - r->a_share);
        r->a_ns /= d->a_per, r->b_ns /= d->b_per;
        r->a_count /= d->a_per, r->b_count /= d->b_per;
        r->delta_ns = r->b_ns - r->a_ns;
        r->ratio = r->in_a && r->in_b && r->a_ns > 0 ? r->b_ns / r->a_ns : NAN;
    }
}

/* By |delta| descending, ties by name. */
static int cmp_diff_row(const void *x, const void *y)
{
    const analyze_diff_row *a = x, *b = y;
    double da = fabs(a->delta_ns), db = fabs(b->delta_ns);
    if (da != db)
        return da > db ? -1 : 1;
    return strcmp(a->name, b->name);
}

analyze_diff *analyze_diff_create(const analyze_profile *a, const analyze_profile *b)
{
    analyze_diff *d = calloc(1, sizeof *d);
    analyze_stat *cs[2] = { NULL, NULL };
    if (!d)
        return NULL;
    d->a = a, d->b = b;
    uint64_t ka = analyze_profile_steps_kept(a), kb = analyze_profile_steps_kept(b);
    d->a_per = ka ? (double)ka : 1.0;
    d->b_per = kb ? (double)kb : 1.0;
    d->a_step_ns = analyze_step_ns(a);
    d->b_step_ns = analyze_step_ns(b);
    d->step_ratio = d->a_step_ns > 0 && d->b_step_ns > 0 ? d->b_step_ns / d->a_step_ns : NAN;
    d->a_op_ns = (double)analyze_profile_total_ns(a) / d->a_per;
    d->b_op_ns = (double)analyze_profile_total_ns(b) / d->b_per;
    d->op_ratio = d->a_op_ns > 0 ? d->b_op_ns / d->a_op_ns : NAN;
    size_t nops = a->nops + b->nops, ncls = a->nclasses + b->nclasses;
    d->ops = malloc((nops ? nops : 1) * sizeof *d->ops);
    d->classes = malloc((ncls ? ncls : 1) * sizeof *d->classes);
    cs[0] = malloc((a->nclasses ? a->nclasses : 1) * sizeof *cs[0]);
    cs[1] = malloc((b->nclasses ? b->nclasses : 1) * sizeof *cs[1]);
    if (!d->ops || !d->classes || !cs[0] || !cs[1]) {
        analyze_diff_destroy(d);
        d = NULL;
        goto end;
    }
    const analyze_profile *side[2] = { a, b };
    /* an imported trace against a fathom trace (its replay): the framework's
     * op types under the engine ops that compute them (analyze/import_ops.def) */
    int fw[2] = { 0, 0 };
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; i < side[k]->nops && !fw[k]; i++)
            fw[k] = analyze_import_lookup(side[k]->ops[i].name) != NULL;
    int relabel = fw[0] != fw[1];
    for (int k = 0; k < 2; k++) {
        const analyze_profile *p = side[k];
        for (size_t i = 0; i < p->nops; i++)
            if (p->ops[i].all.count) {
                const char *name = relabel ? analyze_import_diff_label(p->ops[i].name, fw[k]) : p->ops[i].name;
                diff_row_add(diff_row(d->ops, &d->nops, name, p->classes[p->ops[i].cls]), k, &p->ops[i].all);
            }
        analyze_profile_class_stats(p, cs[k]);
        for (size_t c = 0; c < p->nclasses; c++)
            if (cs[k][c].count)
                diff_row_add(diff_row(d->classes, &d->nclasses, p->classes[c], p->classes[c]), k, &cs[k][c]);
    }
    diff_rows_finish(d->ops, d->nops, d);
    diff_rows_finish(d->classes, d->nclasses, d);
    qsort(d->ops, d->nops, sizeof *d->ops, cmp_diff_row);
    qsort(d->classes, d->nclasses, sizeof *d->classes, cmp_diff_row);
end:
    free(cs[0]), free(cs[1]);
    return d;
}

static int named_differently(const char *x, const char *y) { return x && y && *x && *y && strcmp(x, y) != 0; }

int analyze_diff_mismatch(const analyze_diff *d, char *buf, size_t len)
{
    const analyze_meta *a = &d->a->meta, *b = &d->b->meta;
    if (!named_differently(a->model, b->model) && !named_differently(a->mode, b->mode))
        return 0;
    char la[128], lb[128];
    if (buf && len)
        snprintf(buf, len, "A is %s, B is %s: not two traces of the same model and mode",
                 analyze_out_label(d->a, la, sizeof la), analyze_out_label(d->b, lb, sizeof lb));
    return 1;
}

static json_t *diff_json_side(const analyze_profile *p, double step_ns, double op_ns)
{
    const analyze_meta *m = &p->meta;
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:o, s:o, s:I, s:f, s:f}", "source", p->source ? p->source : "",
                     "model", analyze_profile_model(p), "mode", analyze_profile_mode(p), "preset",
                     analyze_out_jstr(m->preset), "threads",
                     m->have_begin ? json_integer((json_int_t)m->threads) : json_null(), "blas",
                     analyze_out_jstr(m->blas), "cpu", analyze_out_jstr(m->cpu), "steps",
                     (json_int_t)analyze_profile_steps_kept(p), "step_ns", step_ns, "op_ns", op_ns);
}

static int diff_json(FILE *f, const analyze_diff *d)
{
    json_t *root = json_object(), *ops = json_array(), *cls = json_array();
    int bad = !root || !ops || !cls;
    if (bad) {
        json_decref(root), json_decref(ops), json_decref(cls);
        return -1;
    }
    bad |= json_object_set_new(root, "schema", json_integer(1));
    bad |= json_object_set_new(root, "analysis", json_string("diff"));
    bad |= json_object_set_new(root, "a", diff_json_side(d->a, d->a_step_ns, d->a_op_ns));
    bad |= json_object_set_new(root, "b", diff_json_side(d->b, d->b_step_ns, d->b_op_ns));
    bad |= json_object_set_new(root, "step_ratio", analyze_out_jreal(d->step_ratio));
    bad |= json_object_set_new(root, "op_ratio", analyze_out_jreal(d->op_ratio));
    bad |= json_object_set_new(root, "op_types", ops);
    bad |= json_object_set_new(root, "classes", cls);
    for (size_t i = 0; i < d->nops && !bad; i++) {
        const analyze_diff_row *r = &d->ops[i];
        bad |= json_array_append_new(ops, json_pack("{s:s, s:s, s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:f}", "op",
                                                    r->name, "class", r->cls, "a_ns", r->a_ns, "b_ns", r->b_ns,
                                                    "ratio", analyze_out_jreal(r->ratio), "delta_ns", r->delta_ns,
                                                    "a_share", r->a_share, "b_share", r->b_share, "a_count",
                                                    r->a_count, "b_count", r->b_count));
    }
    for (size_t i = 0; i < d->nclasses && !bad; i++) {
        const analyze_diff_row *r = &d->classes[i];
        bad |= json_array_append_new(cls, json_pack("{s:s, s:f, s:f, s:o, s:f, s:f, s:f}", "class", r->name,
                                                    "a_ns", r->a_ns, "b_ns", r->b_ns, "ratio",
                                                    analyze_out_jreal(r->ratio), "a_share", r->a_share, "b_share",
                                                    r->b_share, "dshare_pp", r->dshare_pp));
    }
    if (bad) {
        json_decref(root);
        return -1;
    }
    return analyze_out_json(f, root);
}

static void diff_csv_row(FILE *f, const char *level, const analyze_diff_row *r)
{
    fprintf(f, "%s,", level);
    analyze_out_csv_str(f, r->name);
    fputc(',', f);
    analyze_out_csv_str(f, r->cls);
    fprintf(f, ",%.1f,%.1f", r->a_ns, r->b_ns);
    analyze_out_csv_num(f, "%.6f", r->ratio);
    fprintf(f, ",%.1f,%.9f,%.9f,%.6f,%.3f,%.3f\n", r->delta_ns, r->a_share, r->b_share, r->dshare_pp, r->a_count,
            r->b_count);
}

static int diff_csv(FILE *f, const analyze_diff *d)
{
    fputs("level,name,class,a_ns,b_ns,ratio,delta_ns,a_share,b_share,dshare_pp,a_count,b_count\n", f);
    const char *name[2] = { "step_ns", "op_ns" };
    double av[2] = { d->a_step_ns, d->a_op_ns }, bv[2] = { d->b_step_ns, d->b_op_ns };
    double rv[2] = { d->step_ratio, d->op_ratio };
    for (int i = 0; i < 2; i++) {
        fprintf(f, "step,%s,,%.1f,%.1f", name[i], av[i], bv[i]);
        analyze_out_csv_num(f, "%.6f", rv[i]);
        fprintf(f, ",%.1f,,,,,\n", bv[i] - av[i]);
    }
    for (size_t i = 0; i < d->nops; i++)
        diff_csv_row(f, "op_type", &d->ops[i]);
    for (size_t i = 0; i < d->nclasses; i++)
        diff_csv_row(f, "class", &d->classes[i]);
    return ferror(f) ? -1 : 0;
}

static void diff_text_side(FILE *f, const char *tag, const analyze_profile *p)
{
    const analyze_meta *m = &p->meta;
    char threads[16] = "?";
    if (m->have_begin)
        snprintf(threads, sizeof threads, "%u", m->threads);
    fprintf(f, "%s: %s\n   %s %s, preset %s, threads %s, BLAS %s, CPU %s; ", tag, p->source ? p->source : "?",
            analyze_profile_model(p), analyze_profile_mode(p), analyze_out_or_unknown(m->preset), threads, analyze_out_or_unknown(m->blas),
            analyze_out_or_unknown(m->cpu));
    uint64_t k = analyze_profile_steps_kept(p);
    if (k)
        fprintf(f, "%llu steps kept\n", (unsigned long long)k);
    else
        fprintf(f, "no kept steps: whole-trace totals\n");
}

static void diff_text_op(FILE *f, int nw, const analyze_diff_row *r)
{
    fprintf(f, "%-*s %-13s %10.4f %10.4f", nw, r->name, r->cls ? r->cls : "", r->a_ns / 1e6, r->b_ns / 1e6);
    analyze_out_text_real(f, 7, 3, r->ratio);
    fprintf(f, " %+10.4f %7.1f%% %7.1f%% %9.2f %9.2f\n", r->delta_ns / 1e6, 100 * r->a_share, 100 * r->b_share,
            r->a_count, r->b_count);
}

static int diff_text(FILE *f, const analyze_diff *d, size_t top)
{
    fprintf(f, "== diff: B against A (the baseline), per kept step\n");
    diff_text_side(f, "A", d->a);
    diff_text_side(f, "B", d->b);
    int sa = analyze_profile_steps_kept(d->a) > 0, sb = analyze_profile_steps_kept(d->b) > 0;
    if (!sa && !sb)
        fprintf(f, "note: neither trace has kept steps: whole-trace totals are compared\n");
    else if (sa != sb)
        fprintf(f, "note: %s has no kept steps: its whole-trace totals are compared with %s's per-step times\n",
                sa ? "B" : "A", sa ? "A" : "B");
    if (sa && sb) {
        fprintf(f, "\nstep time:        A %10.4f ms  B %10.4f ms  B/A", d->a_step_ns / 1e6, d->b_step_ns / 1e6);
        analyze_out_text_real(f, 7, 3, d->step_ratio);
        fputc('\n', f);
    } else {
        fputc('\n', f);
    }
    fprintf(f, "op time per step: A %10.4f ms  B %10.4f ms  B/A", d->a_op_ns / 1e6, d->b_op_ns / 1e6);
    analyze_out_text_real(f, 7, 3, d->op_ratio);
    fputc('\n', f);

    int nw = 30; /* the op name column fits the longest name */
    for (size_t i = 0; i < d->nops; i++)
        nw = analyze_out_width(nw, d->ops[i].name);
    fprintf(f, "\n%-*s %-13s %10s %10s %7s %10s %8s %8s %9s %9s\n", nw, "op type", "class", "A ms/step", "B ms/step",
            "B/A", "delta ms", "A share", "B share", "A n/step", "B n/step");
    size_t shown = top && top < d->nops ? top : d->nops;
    for (size_t i = 0; i < shown; i++)
        diff_text_op(f, nw, &d->ops[i]);
    if (shown < d->nops) {
        char label[64];
        snprintf(label, sizeof label, "(%zu more op types)", d->nops - shown);
        analyze_diff_row rest = { .name = label, .cls = "", .in_a = 1, .in_b = 1 };
        for (size_t i = shown; i < d->nops; i++) {
            const analyze_diff_row *r = &d->ops[i];
            rest.a_ns += r->a_ns, rest.b_ns += r->b_ns, rest.delta_ns += r->delta_ns;
            rest.a_share += r->a_share, rest.b_share += r->b_share;
            rest.a_count += r->a_count, rest.b_count += r->b_count;
        }
        rest.ratio = rest.a_ns > 0 ? rest.b_ns / rest.a_ns : NAN;
        diff_text_op(f, nw, &rest);
    }
    size_t only_a = 0, only_b = 0;
    for (size_t i = 0; i < d->nops; i++)
        only_a += d->ops[i].in_a && !d->ops[i].in_b, only_b += d->ops[i].in_b && !d->ops[i].in_a;
    if (only_a || only_b)
        fprintf(f, "%zu op types only in A, %zu only in B (ratio -)\n", only_a, only_b);

    fprintf(f, "\n%-30s %10s %10s %7s %8s %8s %9s\n", "class", "A ms/step", "B ms/step", "B/A", "A share", "B share",
            "share pp");
    for (size_t i = 0; i < d->nclasses; i++) {
        const analyze_diff_row *r = &d->classes[i];
        fprintf(f, "%-30s %10.4f %10.4f", r->name, r->a_ns / 1e6, r->b_ns / 1e6);
        analyze_out_text_real(f, 7, 3, r->ratio);
        fprintf(f, " %7.1f%% %7.1f%% %+9.1f\n", 100 * r->a_share, 100 * r->b_share, r->dshare_pp);
    }
    fputc('\n', f);
    return ferror(f) ? -1 : 0;
}

int analyze_diff_print(FILE *f, const analyze_diff *d, analyze_format fmt, size_t top)
{
    if (fmt == ANALYZE_JSON)
        return diff_json(f, d);
    if (fmt == ANALYZE_CSV)
        return diff_csv(f, d);
    return diff_text(f, d, top);
}

/* ---- scaling ---------------------------------------------------------------------------- */
static void scaling_row_free(analyze_scaling_row *r)
{
    if (r)
        free(r->ns);
}

void analyze_scaling_destroy(analyze_scaling *s)
{
    if (!s)
        return;
    for (size_t i = 0; s->ops && i < s->nops; i++)
        scaling_row_free(&s->ops[i]);
    for (size_t i = 0; s->classes && i < s->nclasses; i++)
        scaling_row_free(&s->classes[i]);
    scaling_row_free(&s->total);
    free(s->ops), free(s->classes);
    free(s->p), free(s->threads), free(s->per), free(s->step_ns), free(s->step_speedup), free(s->step_efficiency);
    free(s);
}

/* ns, speedup and efficiency in one block of 3n doubles; ns all NAN. 0 or -1. */
static int scaling_row_init(analyze_scaling_row *r, size_t n, const char *name, const char *cls)
{
    memset(r, 0, sizeof *r);
    r->name = name, r->cls = cls;
    r->ns = malloc(3 * n * sizeof *r->ns);
    if (!r->ns)
        return -1;
    r->speedup = r->ns + n, r->efficiency = r->ns + 2 * n;
    for (size_t i = 0; i < 3 * n; i++)
        r->ns[i] = NAN;
    return 0;
}

int analyze_amdahl_fit(const uint32_t *threads, const double *t, size_t n, double *a, double *b)
{
    double sx = 0, st = 0, m = 0;
    *a = *b = NAN;
    for (size_t i = 0; i < n; i++)
        if (isfinite(t[i]) && threads[i] > 0)
            sx += 1.0 / threads[i], st += t[i], m++;
    if (m < 2)
        return -1;
    double mx = sx / m, mt = st / m, sxx = 0, sxt = 0, sxx0 = 0, sxt0 = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(t[i]) && threads[i] > 0) {
            double x = 1.0 / threads[i];
            sxx += (x - mx) * (x - mx), sxt += (x - mx) * (t[i] - mt);
            sxx0 += x * x, sxt0 += x * t[i];
        }
    if (!(sxx > 0)) /* every point at one thread count: no slope to fit */
        return -1;
    double bb = sxt / sxx, aa = mt - bb * mx;
    if (bb < 0) /* slower with more threads: all serial */
        bb = 0, aa = mt;
    else if (aa < 0) /* better than linear: all parallel */
        aa = 0, bb = sxt0 / sxx0;
    /* rounding noise of a fit that is exactly serial or exactly parallel */
    double t0 = aa + bb * mx;
    if (aa < 1e-12 * t0)
        aa = 0;
    if (bb * mx < 1e-12 * t0)
        bb = 0;
    *a = aa, *b = bb;
    return 0;
}

/* Speedups, efficiencies and the fit of a row whose ns are set. */
static void scaling_row_finish(analyze_scaling_row *r, const analyze_scaling *s)
{
    for (size_t i = 0; i < s->n; i++) {
        r->speedup[i] = r->ns[0] > 0 && r->ns[i] > 0 ? r->ns[0] / r->ns[i] : NAN;
        r->efficiency[i] = r->speedup[i] * (double)s->threads[0] / (double)s->threads[i];
    }
    r->serial_fraction = r->limit_speedup = NAN;
    if (analyze_amdahl_fit(s->threads, r->ns, s->n, &r->a_ns, &r->b_ns) != 0)
        return;
    double at0 = r->a_ns + r->b_ns / (double)s->threads[0];
    if (at0 > 0) {
        r->serial_fraction = r->a_ns / at0;
        r->limit_speedup = r->serial_fraction > 0 ? 1.0 / r->serial_fraction : INFINITY;
    }
}

/* The row named `name` in rows[0..*n), appended when absent (room is the caller's). */
static analyze_scaling_row *scaling_row(analyze_scaling_row *rows, size_t *n, size_t nt, const char *name,
                                        const char *cls)
{
    for (size_t i = 0; i < *n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    if (scaling_row_init(&rows[*n], nt, name, cls) != 0)
        return NULL;
    return &rows[(*n)++];
}

/* By baseline time descending (absent at the baseline: last), ties by name. */
static int cmp_scaling_row(const void *x, const void *y)
{
    const analyze_scaling_row *a = x, *b = y;
    double ta = isfinite(a->ns[0]) ? a->ns[0] : -1, tb = isfinite(b->ns[0]) ? b->ns[0] : -1;
    if (ta != tb)
        return ta > tb ? -1 : 1;
    return strcmp(a->name, b->name);
}

analyze_scaling *analyze_scaling_create(analyze_profile *const *p, size_t n, char *err, size_t errlen)
{
    analyze_scaling *s = NULL;
    analyze_stat *cs = NULL;
    if (n < 2) {
        snprintf(err, errlen, "scaling wants at least two traces at different thread counts, not %zu", n);
        return NULL;
    }
    for (size_t i = 0; i < n; i++)
        if (!p[i]->meta.have_begin || p[i]->meta.threads == 0) {
            snprintf(err, errlen, "%s has no threads value (%s): scaling cannot place it",
                     p[i]->source ? p[i]->source : "?", p[i]->meta.have_begin ? "threads is 0" : "no run_begin");
            return NULL;
        }
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            if (p[i]->meta.threads == p[j]->meta.threads) {
                snprintf(err, errlen, "%s and %s both ran with %u thread%s: scaling wants one trace per thread count",
                         p[i]->source ? p[i]->source : "?", p[j]->source ? p[j]->source : "?",
                         p[i]->meta.threads, p[i]->meta.threads == 1 ? "" : "s");
                return NULL;
            }
    s = calloc(1, sizeof *s);
    if (!s)
        goto oom;
    s->n = n;
    s->p = malloc(n * sizeof *s->p);
    s->threads = malloc(n * sizeof *s->threads);
    s->per = malloc(n * sizeof *s->per);
    s->step_ns = malloc(n * sizeof *s->step_ns);
    s->step_speedup = malloc(n * sizeof *s->step_speedup);
    s->step_efficiency = malloc(n * sizeof *s->step_efficiency);
    size_t nops = 0, ncls = 0, maxcls = 1;
    for (size_t i = 0; i < n; i++) {
        nops += p[i]->nops, ncls += p[i]->nclasses;
        if (p[i]->nclasses > maxcls)
            maxcls = p[i]->nclasses;
    }
    s->ops = calloc(nops ? nops : 1, sizeof *s->ops);
    s->classes = calloc(ncls ? ncls : 1, sizeof *s->classes);
    cs = malloc(maxcls * sizeof *cs);
    if (!s->p || !s->threads || !s->per || !s->step_ns || !s->step_speedup || !s->step_efficiency || !s->ops ||
        !s->classes || !cs || scaling_row_init(&s->total, n, "op time", ""))
        goto oom;
    for (size_t i = 0; i < n; i++) /* insertion sort by threads: few traces */
        s->p[i] = p[i];
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && s->p[j]->meta.threads < s->p[j - 1]->meta.threads; j--) {
            const analyze_profile *t = s->p[j];
            s->p[j] = s->p[j - 1], s->p[j - 1] = t;
        }
    for (size_t i = 0; i < n; i++) {
        const analyze_profile *q = s->p[i];
        uint64_t k = analyze_profile_steps_kept(q);
        s->threads[i] = q->meta.threads;
        s->per[i] = k ? (double)k : 1.0;
        s->step_ns[i] = analyze_step_ns(q);
        s->total.ns[i] = (double)analyze_profile_total_ns(q) / s->per[i];
        for (size_t o = 0; o < q->nops; o++) {
            if (!q->ops[o].all.count)
                continue;
            analyze_scaling_row *r = scaling_row(s->ops, &s->nops, n, q->ops[o].name, q->classes[q->ops[o].cls]);
            if (!r)
                goto oom;
            r->ns[i] = (isfinite(r->ns[i]) ? r->ns[i] : 0) + (double)q->ops[o].all.ns / s->per[i];
        }
        analyze_profile_class_stats(q, cs);
        for (size_t c = 0; c < q->nclasses; c++) {
            if (!cs[c].count)
                continue;
            analyze_scaling_row *r = scaling_row(s->classes, &s->nclasses, n, q->classes[c], q->classes[c]);
            if (!r)
                goto oom;
            r->ns[i] = (isfinite(r->ns[i]) ? r->ns[i] : 0) + (double)cs[c].ns / s->per[i];
        }
    }
    for (size_t i = 0; i < n; i++) {
        s->step_speedup[i] = s->step_ns[0] > 0 && s->step_ns[i] > 0 ? s->step_ns[0] / s->step_ns[i] : NAN;
        s->step_efficiency[i] = s->step_speedup[i] * (double)s->threads[0] / (double)s->threads[i];
    }
    scaling_row_finish(&s->total, s);
    for (size_t i = 0; i < s->nops; i++)
        scaling_row_finish(&s->ops[i], s);
    for (size_t i = 0; i < s->nclasses; i++)
        scaling_row_finish(&s->classes[i], s);
    qsort(s->ops, s->nops, sizeof *s->ops, cmp_scaling_row);
    qsort(s->classes, s->nclasses, sizeof *s->classes, cmp_scaling_row);
    free(cs);
    return s;
oom:
    snprintf(err, errlen, "out of memory");
    free(cs);
    analyze_scaling_destroy(s);
    return NULL;
}

int analyze_scaling_mismatch(const analyze_scaling *s, char *buf, size_t len)
{
    const analyze_profile *first = NULL;
    for (size_t i = 0; i < s->n; i++) {
        const analyze_meta *m = &s->p[i]->meta;
        if (!m->model || !*m->model || !m->mode || !*m->mode)
            continue;
        if (!first) {
            first = s->p[i];
            continue;
        }
        if (named_differently(first->meta.model, m->model) || named_differently(first->meta.mode, m->mode)) {
            char la[128], lb[128];
            if (buf && len)
                snprintf(buf, len, "%s is %s, %s is %s: not traces of one model and mode",
                         first->source ? first->source : "?", analyze_out_label(first, la, sizeof la),
                         s->p[i]->source ? s->p[i]->source : "?", analyze_out_label(s->p[i], lb, sizeof lb));
            return 1;
        }
    }
    return 0;
}

static json_t *json_reals(const double *v, size_t n)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < n; i++)
        if (json_array_append_new(a, analyze_out_jreal(v[i]))) {
            json_decref(a);
            return NULL;
        }
    return a;
}

static json_t *scaling_json_row(const analyze_scaling_row *r, size_t n, const char *key)
{
    json_t *o = json_pack("{s:s}", key, r->name);
    int bad = !o;
    if (!bad && strcmp(key, "op") == 0)
        bad |= json_object_set_new(o, "class", json_string(r->cls ? r->cls : ""));
    if (!bad) {
        bad |= json_object_set_new(o, "ns", json_reals(r->ns, n));
        bad |= json_object_set_new(o, "speedup", json_reals(r->speedup, n));
        bad |= json_object_set_new(o, "efficiency", json_reals(r->efficiency, n));
        bad |= json_object_set_new(o, "serial_ns", analyze_out_jreal(r->a_ns));
        bad |= json_object_set_new(o, "parallel_ns", analyze_out_jreal(r->b_ns));
        bad |= json_object_set_new(o, "serial_fraction", analyze_out_jreal(r->serial_fraction));
        bad |= json_object_set_new(o, "limit_speedup", analyze_out_jreal(r->limit_speedup));
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static int scaling_json(FILE *f, const analyze_scaling *s)
{
    json_t *root = json_object(), *traces = json_array(), *th = json_array(), *ops = json_array(),
           *cls = json_array(), *total = scaling_json_row(&s->total, s->n, "name");
    int bad = !root || !traces || !th || !ops || !cls || !total;
    if (bad) {
        json_decref(root), json_decref(traces), json_decref(th), json_decref(ops), json_decref(cls);
        json_decref(total);
        return -1;
    }
    json_object_del(total, "name");
    bad |= json_object_set_new(total, "step_ns", json_reals(s->step_ns, s->n));
    bad |= json_object_set_new(total, "step_speedup", json_reals(s->step_speedup, s->n));
    bad |= json_object_set_new(total, "step_efficiency", json_reals(s->step_efficiency, s->n));
    bad |= json_object_set_new(root, "schema", json_integer(1));
    bad |= json_object_set_new(root, "analysis", json_string("scaling"));
    bad |= json_object_set_new(root, "traces", traces);
    bad |= json_object_set_new(root, "threads", th);
    bad |= json_object_set_new(root, "op_types", ops);
    bad |= json_object_set_new(root, "classes", cls);
    bad |= json_object_set_new(root, "total", total);
    for (size_t i = 0; i < s->n && !bad; i++) {
        const analyze_profile *q = s->p[i];
        bad |= json_array_append_new(th, json_integer((json_int_t)s->threads[i]));
        bad |= json_array_append_new(
            traces, json_pack("{s:s, s:s, s:s, s:I, s:I, s:f, s:f}", "source", q->source ? q->source : "", "model",
                              analyze_profile_model(q), "mode", analyze_profile_mode(q), "threads",
                              (json_int_t)s->threads[i], "steps", (json_int_t)analyze_profile_steps_kept(q),
                              "step_ns", s->step_ns[i], "op_ns", s->total.ns[i]));
    }
    for (size_t i = 0; i < s->nops && !bad; i++)
        bad |= json_array_append_new(ops, scaling_json_row(&s->ops[i], s->n, "op"));
    for (size_t i = 0; i < s->nclasses && !bad; i++)
        bad |= json_array_append_new(cls, scaling_json_row(&s->classes[i], s->n, "class"));
    if (bad) {
        json_decref(root);
        return -1;
    }
    return analyze_out_json(f, root);
}

/* A CSV number: empty when it is not one, "inf" when infinite. */
static void csv_num_inf(FILE *f, const char *fmt, double v)
{
    if (isinf(v) && v > 0)
        fputs(",inf", f);
    else
        analyze_out_csv_num(f, fmt, v);
}

static void scaling_csv_row(FILE *f, const analyze_scaling *s, const char *level, const analyze_scaling_row *r,
                            int fit)
{
    for (size_t i = 0; i < s->n; i++) {
        fprintf(f, "%s,", level);
        analyze_out_csv_str(f, r->name);
        fputc(',', f);
        analyze_out_csv_str(f, r->cls);
        fprintf(f, ",%u", s->threads[i]);
        analyze_out_csv_num(f, "%.1f", r->ns[i]);
        analyze_out_csv_num(f, "%.6f", r->speedup[i]);
        analyze_out_csv_num(f, "%.6f", r->efficiency[i]);
        if (fit) {
            analyze_out_csv_num(f, "%.9f", r->serial_fraction);
            csv_num_inf(f, "%.6f", r->limit_speedup);
        } else {
            fputs(",,", f);
        }
        fputc('\n', f);
    }
}

static int scaling_csv(FILE *f, const analyze_scaling *s)
{
    fputs("level,name,class,threads,ns,speedup,efficiency,serial_fraction,limit_speedup\n", f);
    analyze_scaling_row step = { .name = "step_ns", .cls = "", .ns = s->step_ns, .speedup = s->step_speedup,
                                 .efficiency = s->step_efficiency };
    analyze_scaling_row op = s->total;
    op.name = "op_ns";
    scaling_csv_row(f, s, "step", &step, 0);
    scaling_csv_row(f, s, "step", &op, 1);
    for (size_t i = 0; i < s->nops; i++)
        scaling_csv_row(f, s, "op_type", &s->ops[i], 1);
    for (size_t i = 0; i < s->nclasses; i++)
        scaling_csv_row(f, s, "class", &s->classes[i], 1);
    return ferror(f) ? -1 : 0;
}

/* "  0.100" / "    inf" / "      -" in `w` columns. */
static void text_limit(FILE *f, int w, double v)
{
    if (isinf(v) && v > 0)
        fprintf(f, " %*s", w, "inf");
    else
        analyze_out_text_real(f, w, 3, v);
}

static void scaling_text_row(FILE *f, const analyze_scaling *s, int nw, int cw, const analyze_scaling_row *r)
{
    fprintf(f, "%-*s", nw, r->name);
    if (cw)
        fprintf(f, " %-*s", cw, r->cls ? r->cls : "");
    for (size_t i = 0; i < s->n; i++)
        if (isfinite(r->ns[i]))
            fprintf(f, " %10.4f", r->ns[i] / 1e6);
        else
            fprintf(f, " %10s", "-");
    analyze_out_text_real(f, 8, 3, r->speedup[s->n - 1]);
    analyze_out_text_real(f, 8, 3, r->serial_fraction);
    text_limit(f, 8, r->limit_speedup);
    fputc('\n', f);
}

static void scaling_text_head(FILE *f, const analyze_scaling *s, int nw, const char *what, int cw)
{
    fprintf(f, "\n%-*s", nw, what);
    if (cw)
        fprintf(f, " %-*s", cw, "class");
    for (size_t i = 0; i < s->n; i++) {
        char h[32];
        snprintf(h, sizeof h, "ms@%u", s->threads[i]);
        fprintf(f, " %10s", h);
    }
    char sp[32];
    snprintf(sp, sizeof sp, "x@%u", s->threads[s->n - 1]);
    fprintf(f, " %8s %8s %8s\n", sp, "serial f", "limit");
}

static int scaling_text(FILE *f, const analyze_scaling *s, size_t top)
{
    char l[128];
    fprintf(f, "== scaling: %s at", analyze_out_label(s->p[0], l, sizeof l));
    for (size_t i = 0; i < s->n; i++)
        fprintf(f, "%s %u", i ? "," : "", s->threads[i]);
    fprintf(f, " threads; baseline %u thread%s; per kept step\n", s->threads[0], s->threads[0] == 1 ? "" : "s");
    fprintf(f, "%7s %6s %10s %8s %8s %10s %8s %8s  %s\n", "threads", "steps", "step ms", "speedup", "effic.",
            "op ms", "speedup", "effic.", "source");
    for (size_t i = 0; i < s->n; i++) {
        uint64_t k = analyze_profile_steps_kept(s->p[i]);
        fprintf(f, "%7u %6llu ", s->threads[i], (unsigned long long)k);
        if (k)
            fprintf(f, "%10.4f", s->step_ns[i] / 1e6);
        else
            fprintf(f, "%10s", "-");
        analyze_out_text_real(f, 8, 3, s->step_speedup[i]);
        analyze_out_text_real(f, 8, 3, s->step_efficiency[i]);
        fprintf(f, " %10.4f", s->total.ns[i] / 1e6);
        analyze_out_text_real(f, 8, 3, s->total.speedup[i]);
        analyze_out_text_real(f, 8, 3, s->total.efficiency[i]);
        fprintf(f, "  %s\n", s->p[i]->source ? s->p[i]->source : "?");
    }
    for (size_t i = 0; i < s->n; i++)
        if (!analyze_profile_steps_kept(s->p[i]))
            fprintf(f, "note: %s has no kept steps: its whole-trace totals are used\n",
                    s->p[i]->source ? s->p[i]->source : "?");
    const analyze_scaling_row *t = &s->total;
    fprintf(f, "op time: speedup");
    analyze_out_text_real(f, 0, 3, t->speedup[s->n - 1]);
    fprintf(f, " at %u threads; Amdahl fit t(T) = a + b/T:", s->threads[s->n - 1]);
    if (isfinite(t->a_ns))
        fprintf(f, " a %.4f ms, b %.4f ms; serial fraction", t->a_ns / 1e6, t->b_ns / 1e6);
    else
        fprintf(f, " none; serial fraction");
    analyze_out_text_real(f, 0, 3, t->serial_fraction);
    fprintf(f, ", limit speedup");
    text_limit(f, 0, t->limit_speedup);
    fputc('\n', f);

    int nw = 30; /* the op name column fits the longest name */
    for (size_t i = 0; i < s->nops; i++)
        nw = analyze_out_width(nw, s->ops[i].name);
    scaling_text_head(f, s, nw, "op type", 13);
    size_t shown = top && top < s->nops ? top : s->nops;
    for (size_t i = 0; i < shown; i++)
        scaling_text_row(f, s, nw, 13, &s->ops[i]);
    if (shown < s->nops) {
        char label[64];
        analyze_scaling_row rest;
        snprintf(label, sizeof label, "(%zu more op types)", s->nops - shown);
        if (scaling_row_init(&rest, s->n, label, "") != 0)
            return -1;
        for (size_t i = shown; i < s->nops; i++)
            for (size_t k = 0; k < s->n; k++)
                if (isfinite(s->ops[i].ns[k]))
                    rest.ns[k] = (isfinite(rest.ns[k]) ? rest.ns[k] : 0) + s->ops[i].ns[k];
        scaling_row_finish(&rest, s);
        scaling_text_row(f, s, nw, 13, &rest);
        scaling_row_free(&rest);
    }
    scaling_text_head(f, s, 30, "class", 0);
    for (size_t i = 0; i < s->nclasses; i++)
        scaling_text_row(f, s, 30, 0, &s->classes[i]);
    fprintf(f, "\nms@T: time per step at T threads; x@%u: speedup over %u thread%s; serial f: Amdahl serial "
               "fraction at %u; limit: 1 / serial f\n\n",
            s->threads[s->n - 1], s->threads[0], s->threads[0] == 1 ? "" : "s", s->threads[0]);
    return ferror(f) ? -1 : 0;
}

int analyze_scaling_print(FILE *f, const analyze_scaling *s, analyze_format fmt, size_t top)
{
    if (fmt == ANALYZE_JSON)
        return scaling_json(f, s);
    if (fmt == ANALYZE_CSV)
        return scaling_csv(f, s);
    return scaling_text(f, s, top);
}
