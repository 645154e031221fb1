/* parallelism.c -- the average parallelism of a trace's data-flow graph
 * (parallelism.h), from the per-step critical paths the profile kept. */
#include "analyze/parallelism.h"
#include "analyze/out.h"

#include "base/alloc.h"

#include <jansson.h>
#include <string.h>

static const char *or_empty(const char *s) { return s ? s : ""; }

int analyze_parallelism_has_flow(const analyze_profile *q)
{
    return q->meta.schema != 1 && q->flow_seen && q->flow_steps;
}

analyze_status analyze_parallelism_create(analyze_profile *const *p, size_t n, analyze_parallelism **out)
{
    *out = NULL;
    analyze_parallelism *a = base_calloc(1, sizeof *a);
    if (!a || !(a->t = base_calloc(n ? n : 1, sizeof *a->t))) {
        base_free(a);
        analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        return ANALYZE_ERR_NOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const analyze_profile *q = p[i];
        if (q->meta.schema == 1) {
            analyze_fail(ANALYZE_ERR_INPUT,
                         "%s: a schema-1 trace has no data flow (node_def); record it with this fathom", q->source);
            goto fail;
        }
        if (q->flow_nomem) {
            analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory for its data flow", q->source);
            goto fail;
        }
        if (!q->flow_seen) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: no data flow (its ops name no input or output tensors)", q->source);
            goto fail;
        }
        if (!q->flow_steps) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: no op in the kept steps (%llu steps, skipping %u first and %u last)",
                         q->source, (unsigned long long)q->steps_seen, q->skip_first, q->skip_last);
            goto fail;
        }
        analyze_par_trace *t = &a->t[a->n++];
        t->source = q->source;
        t->model = or_empty(q->meta.model), t->mode = or_empty(q->meta.mode), t->preset = or_empty(q->meta.preset);
        t->threads = q->meta.threads, t->inter = q->meta.inter;
        t->steps = q->flow_steps;
        t->op_ns = q->flow_op_ns / (double)t->steps;
        t->critical_ns = q->flow_critical_ns / (double)t->steps;
        t->ops = q->flow_ops / (double)t->steps;
        t->critical_ops = q->flow_critical_ops / (double)t->steps;
        t->parallelism = q->flow_critical_ns > 0 ? q->flow_op_ns / q->flow_critical_ns : 1.0;
        t->min_step = q->flow_min, t->max_step = q->flow_max;
    }
    *out = a;
    return ANALYZE_OK;
fail:
    analyze_parallelism_destroy(a);
    return ANALYZE_ERR_INPUT;
}

void analyze_parallelism_destroy(analyze_parallelism *a)
{
    if (!a)
        return;
    base_free(a->t);
    base_free(a);
}

int analyze_parallelism_print(FILE *f, const analyze_parallelism *a, cli_format fmt)
{
    if (fmt == CLI_JSON) {
        json_t *arr = json_array(), *root = json_pack("{s:i, s:o}", "schema", 1, "traces", arr);
        if (!root)
            return -1;
        for (size_t i = 0; i < a->n; i++) {
            const analyze_par_trace *t = &a->t[i];
            json_array_append_new(
                arr, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "source",
                               t->source, "model", t->model, "mode", t->mode, "preset", t->preset, "threads",
                               (int)t->threads, "inter", (int)t->inter, "steps", (json_int_t)t->steps, "op_ns",
                               t->op_ns, "critical_ns", t->critical_ns, "ops", t->ops, "critical_ops", t->critical_ops,
                               "parallelism", t->parallelism, "min_step", t->min_step, "max_step", t->max_step));
        }
        int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
        json_decref(root);
        fputc('\n', f);
        return rc || ferror(f) ? -1 : 0;
    }
    if (fmt == CLI_CSV) {
        fprintf(f, "source,model,mode,preset,threads,inter,steps,op_ms,critical_ms,ops,critical_ops,parallelism,"
                   "min_step,max_step\n");
        for (size_t i = 0; i < a->n; i++) {
            const analyze_par_trace *t = &a->t[i];
            fprintf(f, "\"%s\",%s,%s,%s,%u,%u,%llu,%.6f,%.6f,%.1f,%.1f,%.4f,%.4f,%.4f\n", t->source, t->model, t->mode,
                    t->preset, t->threads, t->inter, (unsigned long long)t->steps, t->op_ns / 1e6, t->critical_ns / 1e6,
                    t->ops, t->critical_ops, t->parallelism, t->min_step, t->max_step);
        }
        return ferror(f) ? -1 : 0;
    }
    for (size_t i = 0; i < a->n; i++) {
        const analyze_par_trace *t = &a->t[i];
        fprintf(f, "%s== %s %s (%s, %u thread%s x %u inter-op)  %s\n", i ? "\n" : "", t->model[0] ? t->model : "?",
                t->mode, t->preset, t->threads, t->threads == 1 ? "" : "s", t->inter, t->source);
        fprintf(f, "steps: %llu; per step: op time %.3f ms in %.0f ops, critical path %.3f ms in %.0f ops\n",
                (unsigned long long)t->steps, t->op_ns / 1e6, t->ops, t->critical_ns / 1e6, t->critical_ops);
        fprintf(f, "average parallelism %.2f (steps: lowest %.2f, highest %.2f)\n", t->parallelism, t->min_step,
                t->max_step);
    }
    return ferror(f) ? -1 : 0;
}

static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    (void)o;
    analyze_parallelism *a = NULL;
    analyze_status st = analyze_parallelism_create(p, n, &a);
    if (st)
        return st;
    *out = a;
    return ANALYZE_OK;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    (void)o;
    return analyze_out_status(f, analyze_parallelism_print(f, r, fmt));
}

static void destroy(void *r) { analyze_parallelism_destroy(r); }

const analyze_analysis analyze_row_parallelism = {
    .name = "parallelism",
    .args = "[options] TRACE...",
    .summary = "the data flow's average parallelism: op time over the critical\n"
               "path's per step (what inter-op workers can gain)",
    .about = "The average parallelism of each trace's data-flow graph: per step, the total op\n"
             "time over the time of the critical path (the longest chain of ops each reading\n"
             "what the previous one wrote, weighted by the recorded op times). 1.0 is a chain;\n"
             "an inter-op worker per unit above 1 has work to do. Needs the data flow of trace\n"
             "schema 2 or 3.\n",
    .options = "",
    .takes = ANALYZE_TAKES_FLOW | ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = create,
    .print = print,
    .destroy = destroy,
};
