/* compare.c -- training vs inference of each model: step time ratio, class shares, ops only in training. */
#include "analyze/compare.h"

#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

static int is_mode(const analyze_profile *p, const char *mode)
{
    return p->meta.mode && strcmp(p->meta.mode, mode) == 0;
}

int analyze_pairs(analyze_profile *const *p, size_t n, int in_order, analyze_pair *out, int *used)
{
    int np = 0;
    for (size_t i = 0; i < n; i++)
        used[i] = 0;
    if (in_order) {
        if (n % 2) {
            analyze_fail(ANALYZE_ERR_INPUT,
                         "--pairs wants an even number of traces (training, inference, ...), not %zu", n);
            return -1;
        }
        for (size_t i = 0; i < n; i += 2) {
            if (!is_mode(p[i], "train") || !is_mode(p[i + 1], "infer")) {
                analyze_fail(ANALYZE_ERR_INPUT, "%s (%s) and %s (%s) are not a training, inference pair", p[i]->source,
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
        analyze_fail(ANALYZE_ERR_INPUT, "no training/inference pair among the traces (pairs are matched by the model "
                                        "name of run_begin; or give --pairs TRAIN INFER ...)");
        return -1;
    }
    return np;
}

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

/* The union of both profiles' class names, in a stable order: 0, or -1 on
 * out of memory. */
static int class_union(const analyze_profile *a, const analyze_profile *b, analyze_names *out)
{
    const analyze_profile *ps[2] = { a, b };
    for (int k = 0; k < 2; k++)
        for (size_t c = 0; c < ps[k]->nclasses; c++)
            if (analyze_names_add(out, ps[k]->classes[c]))
                return -1;
    return 0;
}

int analyze_compare(FILE *f, analyze_profile *const *pp, const analyze_pair *pairs, size_t npairs, cli_format fmt)
{
    json_t *root = NULL, *jpairs = NULL;
    if (fmt == CLI_JSON) {
        root = json_object();
        jpairs = json_array();
        if (!root || !jpairs) {
            json_decref(root), json_decref(jpairs);
            return -1;
        }
        json_object_set_new(root, "schema", json_integer(1));
        json_object_set_new(root, "pairs", jpairs);
    } else if (fmt == CLI_CSV) {
        fputs("model,kind,name,class,train,infer,ratio\n", f);
    }
    for (size_t k = 0; k < npairs; k++) {
        const analyze_profile *tr = pp[pairs[k].train], *in = pp[pairs[k].infer];
        double ts = analyze_step_ns(tr), is = analyze_step_ns(in);
        double ratio = is > 0 ? ts / is : 0.0;
        uint64_t ttot = analyze_profile_total_ns(tr);
        analyze_names un = { 0 };
        analyze_stat *tcs = base_malloc((tr->nclasses ? tr->nclasses : 1) * sizeof *tcs);
        analyze_stat *ics = base_malloc((in->nclasses ? in->nclasses : 1) * sizeof *ics);
        size_t *ord = base_malloc((tr->nops ? tr->nops : 1) * sizeof *ord);
        if (!tcs || !ics || !ord || class_union(tr, in, &un)) {
            analyze_names_free(&un), base_free(tcs), base_free(ics), base_free(ord);
            json_decref(root);
            return -1;
        }
        const char **cls = un.v;
        size_t ncl = un.n;
        analyze_profile_class_stats(tr, tcs);
        analyze_profile_class_stats(in, ics);
        analyze_profile_ops_by_time(tr, ord);
        const char *model = analyze_profile_model(tr);
        uint64_t only_ns = 0;
        for (size_t i = 0; i < tr->nops; i++)
            if (tr->ops[ord[i]].all.count && !op_in(in, tr->ops[ord[i]].name))
                only_ns += tr->ops[ord[i]].all.ns;

        if (fmt == CLI_JSON) {
            json_t *p = json_object(), *jc = json_array(), *jo = json_array();
            json_object_set_new(p, "model", json_string(model));
            json_object_set_new(p, "train",
                                json_pack("{s:s, s:I, s:f, s:I}", "trace", tr->source, "steps",
                                          (json_int_t)tr->step.count, "step_ns", ts, "total_ns", (json_int_t)ttot));
            json_object_set_new(p, "infer",
                                json_pack("{s:s, s:I, s:f, s:I}", "trace", in->source, "steps",
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
        } else if (fmt == CLI_CSV) {
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
                fprintf(f, "step time: training %.3f ms, inference %.3f ms: training is %.2fx inference\n", ts / 1e6,
                        is / 1e6, ratio);
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
        analyze_names_free(&un), base_free(tcs), base_free(ics), base_free(ord);
    }
    if (fmt == CLI_JSON)
        return analyze_out_json(f, root);
    return ferror(f) ? -1 : 0;
}

/* ---- the row ------------------------------------------------------------------------- */
typedef struct compare_result {
    analyze_profile *const *p;
    size_t n, npairs;
    analyze_pair *pairs;
    int *used; /* per trace: paired */
} compare_result;

static void destroy(void *r)
{
    compare_result *c = r;
    if (!c)
        return;
    base_free(c->pairs);
    base_free(c->used);
    base_free(c);
}

static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    compare_result *c = base_calloc(1, sizeof *c);
    if (!c || !(c->pairs = base_calloc(n ? n : 1, sizeof *c->pairs)) ||
        !(c->used = base_calloc(n ? n : 1, sizeof *c->used))) {
        destroy(c);
        return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    }
    c->p = p, c->n = n;
    int np = analyze_pairs(p, n, o->in_order, c->pairs, c->used);
    if (np < 0) {
        destroy(c);
        return ANALYZE_ERR_INPUT; /* its message: analyze_pairs said why */
    }
    c->npairs = (size_t)np;
    *out = c;
    return ANALYZE_OK;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    const compare_result *c = r;
    (void)o;
    return analyze_out_status(f, analyze_compare(f, c->p, c->pairs, c->npairs, fmt));
}

/* the traces left out: no partner */
static void notes(const void *r, cli_format fmt, analyze_note_fn fn, void *ctx)
{
    const compare_result *c = r;
    (void)fmt;
    for (size_t i = 0; i < c->n; i++) {
        if (c->used[i])
            continue;
        const analyze_profile *p = c->p[i];
        char line[2048];
        snprintf(line, sizeof line, "%s (%s %s) has no %s partner; left out", p->source, analyze_profile_model(p),
                 analyze_profile_mode(p),
                 p->meta.mode && strcmp(p->meta.mode, "train") == 0 ? "inference" : "training");
        fn(ctx, line);
    }
}

const analyze_analysis analyze_row_compare = {
    .name = "compare",
    .args = "[options] [--pairs] TRACE...",
    .summary = "training vs inference of each model: step time ratio, class\n"
               "shares side by side, the ops only training runs",
    .about = "Training vs inference of each model: the step time ratio, the class shares side\n"
             "by side and the op types only training runs. Traces are paired by model name.\n",
    .options = "  --pairs                 the traces are TRAIN INFER [TRAIN INFER...], in that order\n",
    .takes = ANALYZE_TAKES_PAIRS | ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = create,
    .print = print,
    .destroy = destroy,
    .notes = notes,
};
