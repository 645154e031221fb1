/* diff.c -- two traces of one model: per op type and class, time per step in A and B, ratio, change. */
#include "analyze/diff.h"

#include "analyze/import.h"
#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void analyze_diff_destroy(analyze_diff *d)
{
    if (!d)
        return;
    base_free(d->ops), base_free(d->classes);
    base_free(d);
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
    analyze_diff *d = base_calloc(1, sizeof *d);
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
    d->ops = base_malloc((nops ? nops : 1) * sizeof *d->ops);
    d->classes = base_malloc((ncls ? ncls : 1) * sizeof *d->classes);
    cs[0] = base_malloc((a->nclasses ? a->nclasses : 1) * sizeof *cs[0]);
    cs[1] = base_malloc((b->nclasses ? b->nclasses : 1) * sizeof *cs[1]);
    if (!d->ops || !d->classes || !cs[0] || !cs[1]) {
        analyze_diff_destroy(d);
        d = NULL;
        goto end;
    }
    const analyze_profile *side[2] = { a, b };
    /* an imported trace against a fathom trace (its replay): the framework's
     * op types under the engine ops that compute them (tracer/import_ops.def) */
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
    base_free(cs[0]), base_free(cs[1]);
    return d;
}

int analyze_diff_mismatch(const analyze_diff *d, char *buf, size_t len)
{
    const analyze_meta *a = &d->a->meta, *b = &d->b->meta;
    if (!analyze_profile_named_differently(a->model, b->model) && !analyze_profile_named_differently(a->mode, b->mode))
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
        bad |= json_array_append_new(
            ops, json_pack("{s:s, s:s, s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:f}", "op", r->name, "class", r->cls, "a_ns",
                           r->a_ns, "b_ns", r->b_ns, "ratio", analyze_out_jreal(r->ratio), "delta_ns", r->delta_ns,
                           "a_share", r->a_share, "b_share", r->b_share, "a_count", r->a_count, "b_count", r->b_count));
    }
    for (size_t i = 0; i < d->nclasses && !bad; i++) {
        const analyze_diff_row *r = &d->classes[i];
        bad |= json_array_append_new(cls,
                                     json_pack("{s:s, s:f, s:f, s:o, s:f, s:f, s:f}", "class", r->name, "a_ns", r->a_ns,
                                               "b_ns", r->b_ns, "ratio", analyze_out_jreal(r->ratio), "a_share",
                                               r->a_share, "b_share", r->b_share, "dshare_pp", r->dshare_pp));
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
            analyze_profile_model(p), analyze_profile_mode(p), analyze_out_or_unknown(m->preset), threads,
            analyze_out_or_unknown(m->blas), analyze_out_or_unknown(m->cpu));
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

int analyze_diff_print(FILE *f, const analyze_diff *d, cli_format fmt, size_t top)
{
    if (fmt == CLI_JSON)
        return diff_json(f, d);
    if (fmt == CLI_CSV)
        return diff_csv(f, d);
    return diff_text(f, d, top);
}

/* ---- the row ------------------------------------------------------------------------- */
static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    (void)o;
    if (n != 2)
        return analyze_fail(ANALYZE_ERR_INPUT, "diff wants exactly two traces (A, the baseline, then B), not %zu", n);
    analyze_diff *d = analyze_diff_create(p[0], p[1]);
    if (!d)
        return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
    *out = d;
    return ANALYZE_OK;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    return analyze_out_status(f, analyze_diff_print(f, r, fmt, o->top));
}

static void destroy(void *r) { analyze_diff_destroy(r); }

static int mismatch(const void *r, char *buf, size_t len) { return analyze_diff_mismatch(r, buf, len); }

/* a side without kept steps (the text output says so itself) */
static void notes(const void *r, cli_format fmt, analyze_note_fn fn, void *ctx)
{
    const analyze_diff *d = r;
    for (int i = 0; i < 2 && fmt != CLI_TEXT; i++) {
        const analyze_profile *p = i ? d->b : d->a;
        if (analyze_profile_steps_kept(p))
            continue;
        char line[2048];
        snprintf(line, sizeof line, "%s (%s) has no kept steps: its whole-trace totals are compared", i ? "B" : "A",
                 p->source);
        fn(ctx, line);
    }
}

const analyze_analysis analyze_row_diff = {
    .name = "diff",
    .args = "[options] A B",
    .summary = "two traces of one model (a recording and its replay, two\n"
               "machines or settings): step time and, per op type and class,\n"
               "time per step in A (the baseline) and in B, ratio B/A, delta",
    .about = "Two traces of one model (a recording and its replay, two machines or settings):\n"
             "the step time and, per op type and class, the time per step in A (the baseline)\n"
             "and in B, their ratio B/A and the change.\n",
    .options = "  --top N                 show only the first N op types (text)\n",
    .takes = ANALYZE_TAKES_TOP | ANALYZE_TAKES_WINDOW,
    .min_traces = 2,
    .max_traces = 2,
    .traces_rule = "exactly two traces (A, the baseline, then B)",
    .create = create,
    .print = print,
    .destroy = destroy,
    .mismatch = mismatch,
    .notes = notes,
};
