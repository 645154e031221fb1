/* report.c -- breakdown, compare and similarity, in text, CSV and JSON. */
#include "analyze/report.h"

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

static int json_out(FILE *f, json_t *root)
{
    if (!root)
        return -1;
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
    json_decref(root);
    if (rc == 0 && fputc('\n', f) == EOF)
        rc = -1;
    return rc;
}

/* CSV field: quoted when it holds a comma, quote or newline. */
static void csv_str(FILE *f, const char *s)
{
    if (!s)
        s = "";
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static const char *label_of(const analyze_profile *p, char *buf, size_t len)
{
    snprintf(buf, len, "%s/%s", analyze_profile_model(p), analyze_profile_mode(p));
    return buf;
}

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
    csv_str(f, p->source);
    fputc(',', f);
    csv_str(f, analyze_profile_model(p));
    fputc(',', f);
    csv_str(f, analyze_profile_mode(p));
    fprintf(f, ",%s,", level);
    csv_str(f, name);
    fputc(',', f);
    csv_str(f, cls);
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

static const char *human_bytes(uint64_t b, char *buf, size_t len)
{
    if (b >= (1ull << 30))
        snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
    else if (b >= (1ull << 20))
        snprintf(buf, len, "%.2f MiB", (double)b / (double)(1ull << 20));
    else if (b >= 1024)
        snprintf(buf, len, "%.2f KiB", (double)b / 1024.0);
    else
        snprintf(buf, len, "%llu B", (unsigned long long)b);
    return buf;
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
        fprintf(f, ", %u threads x %u inter-op", m->threads, m->inter);
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
        if ((int)strlen(p->ops[i].name) > nw)
            nw = (int)strlen(p->ops[i].name);
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
        fprintf(f, "\nmemory: peak %s over %llu tensors;", human_bytes(p->peak_bytes, b, sizeof b),
                (unsigned long long)p->tensors);
        for (size_t r = 0; r < p->nroles; r++)
            fprintf(f, " %s %s%s", p->roles[r], human_bytes(p->role_peak[r], b, sizeof b),
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
    size_t ncol = 7, cap = 16;
    const char **col = malloc(cap * sizeof *col);
    if (!col)
        return -1;
    for (size_t i = 0; i < ncol; i++)
        col[i] = std[i];
    for (size_t k = 0; k < n; k++) /* classes from other versions, too */
        for (size_t c = 0; c < pp[k]->nclasses; c++) {
            size_t j = 0;
            while (j < ncol && strcmp(col[j], pp[k]->classes[c]) != 0)
                j++;
            if (j < ncol)
                continue;
            if (ncol == cap) {
                const char **t = realloc(col, (cap *= 2) * sizeof *t);
                if (!t) {
                    free(col);
                    return -1;
                }
                col = t;
            }
            col[ncol++] = pp[k]->classes[c];
        }
    fprintf(f, "== share of op time by class (%%)\n%-24s", "model/mode");
    for (size_t j = 0; j < ncol; j++)
        fprintf(f, " %6s", col[j]);
    fputc('\n', f);
    for (size_t k = 0; k < n; k++) {
        const analyze_profile *p = pp[k];
        char lb[128];
        analyze_stat *cs = malloc((p->nclasses ? p->nclasses : 1) * sizeof *cs);
        if (!cs) {
            free(col);
            return -1;
        }
        analyze_profile_class_stats(p, cs);
        uint64_t total = analyze_profile_total_ns(p);
        fprintf(f, "%-24s", label_of(p, lb, sizeof lb));
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
    free(col);
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
        return json_out(f, root);
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
            csv_str(f, model);
            fprintf(f, ",step,step_ns,,%.1f,%.1f,%.6f\n", ts, is, ratio);
            for (size_t c = 0; c < ncl; c++) {
                if (!class_used(tr, cls[c], tcs) && !class_used(in, cls[c], ics))
                    continue;
                double a = class_share(tr, cls[c], tcs), b = class_share(in, cls[c], ics);
                csv_str(f, model);
                fputs(",class,", f);
                csv_str(f, cls[c]);
                fputc(',', f);
                csv_str(f, cls[c]);
                fprintf(f, ",%.9f,%.9f,%.6f\n", a, b, b > 0 ? a / b : 0.0);
            }
            for (size_t i = 0; i < tr->nops; i++) {
                const analyze_optype *o = &tr->ops[ord[i]];
                if (!o->all.count || op_in(in, o->name))
                    continue;
                csv_str(f, model);
                fputs(",train_only,", f);
                csv_str(f, o->name);
                fputc(',', f);
                csv_str(f, tr->classes[o->cls]);
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
        return json_out(f, root);
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
        label_of(pp[k], lb, sizeof lb);
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
        return json_out(f, root);
    }
    if (fmt == ANALYZE_CSV) {
        fputs("label", f);
        for (size_t j = 0; j < n; j++) {
            fputc(',', f);
            csv_str(f, s->labels[j]);
        }
        fputc('\n', f);
        for (size_t i = 0; i < n; i++) {
            csv_str(f, s->labels[i]);
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
