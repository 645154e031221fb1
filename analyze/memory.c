/* memory.c -- the memory analysis (memory.h) in text, CSV and JSON. */
#include "analyze/memory.h"

#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* ---- views of one profile --------------------------------------------------------- */
/* Role indices by bytes at the peak, then by their own peak, then by name. */
static const analyze_profile *sort_p;
static int cmp_role(const void *x, const void *y)
{
    size_t a = *(const size_t *)x, b = *(const size_t *)y;
    const analyze_profile *p = sort_p;
    if (p->role_at_peak[a] != p->role_at_peak[b])
        return p->role_at_peak[a] > p->role_at_peak[b] ? -1 : 1;
    if (p->role_peak[a] != p->role_peak[b])
        return p->role_peak[a] > p->role_peak[b] ? -1 : 1;
    return strcmp(p->roles[a], p->roles[b]);
}

static size_t *roles_by_size(const analyze_profile *p)
{
    size_t *ord = base_malloc((p->nroles ? p->nroles : 1) * sizeof *ord);
    if (!ord)
        return NULL;
    for (size_t i = 0; i < p->nroles; i++)
        ord[i] = i;
    sort_p = p;
    qsort(ord, p->nroles, sizeof *ord, cmp_role);
    sort_p = NULL;
    return ord;
}

static double of_peak(const analyze_profile *p, uint64_t b)
{
    return p->peak_bytes ? (double)b / (double)p->peak_bytes : 0.0;
}

/* The step summary: extremes over the recorded steps. */
typedef struct mem_summary {
    uint64_t start_min, start_max, peak_max, end_min, end_max;
    size_t peak_step; /* index of the step with the most live */
} mem_summary;

static mem_summary summarize(const analyze_profile *p)
{
    mem_summary m = { UINT64_MAX, 0, 0, UINT64_MAX, 0, 0 };
    for (size_t i = 0; i < p->nmem_steps; i++) {
        const analyze_mem_step *s = &p->mem_steps[i];
        if (s->start < m.start_min)
            m.start_min = s->start;
        if (s->start > m.start_max)
            m.start_max = s->start;
        if (s->peak > m.peak_max)
            m.peak_max = s->peak, m.peak_step = i;
        if (s->end < m.end_min)
            m.end_min = s->end;
        if (s->end > m.end_max)
            m.end_max = s->end;
    }
    return m;
}

/* "in step 3", "before step 0", "after step 5" */
static const char *peak_where(const analyze_profile *p, char *buf, size_t len)
{
    if (!p->tensors)
        snprintf(buf, len, "never (no tensor allocated)");
    else if (p->peak_in_step)
        snprintf(buf, len, "in step %llu", (unsigned long long)p->peak_step);
    else if (p->peak_step == 0)
        snprintf(buf, len, "before the first step");
    else if (p->peak_step >= p->steps_seen)
        snprintf(buf, len, "after the last step");
    else
        snprintf(buf, len, "between steps %llu and %llu", (unsigned long long)p->peak_step - 1,
                 (unsigned long long)p->peak_step);
    return buf;
}

/* ---- text ---------------------------------------------------------------------------- */
static void text_range(FILE *f, const char *what, uint64_t lo, uint64_t hi)
{
    char a[32], b[32];
    if (lo == hi)
        fprintf(f, "%s %s", what, analyze_out_bytes(lo, a, sizeof a));
    else
        fprintf(f, "%s %s to %s", what, analyze_out_bytes(lo, a, sizeof a), analyze_out_bytes(hi, b, sizeof b));
}

static int text_trace(FILE *f, const analyze_profile *p)
{
    const analyze_meta *m = &p->meta;
    char b1[32], b2[32], w[64];
    fprintf(f, "== %s %s", analyze_profile_model(p), analyze_profile_mode(p));
    if (m->have_begin)
        fprintf(f, " (%s, batch %u)", analyze_out_or_unknown(m->preset), m->batch);
    fprintf(f, " -- %s\n", p->source ? p->source : "?");
    fprintf(f, "peak %s of tensors (%llu allocated in all), reached %s\n",
            analyze_out_bytes(p->peak_bytes, b1, sizeof b1), (unsigned long long)p->tensors,
            peak_where(p, w, sizeof w));
    size_t *ord = roles_by_size(p);
    if (!ord)
        return -1;
    int nw = analyze_out_width(13, "total");
    for (size_t i = 0; i < p->nroles; i++)
        nw = analyze_out_width(nw, p->roles[i]);
    fprintf(f, "%-*s %12s %12s %12s %8s\n", nw, "role", "at the peak", "of the peak", "own peak", "tensors");
    for (size_t i = 0; i < p->nroles; i++) {
        size_t r = ord[i];
        fprintf(f, "%-*s %12s %11.1f%% %12s %8llu\n", nw, p->roles[r],
                analyze_out_bytes(p->role_at_peak[r], b1, sizeof b1), 100 * of_peak(p, p->role_at_peak[r]),
                analyze_out_bytes(p->role_peak[r], b2, sizeof b2), (unsigned long long)p->role_tensors[r]);
    }
    fprintf(f, "%-*s %12s %11.1f%% %12s %8llu\n", nw, "total", analyze_out_bytes(p->peak_bytes, b1, sizeof b1),
            p->peak_bytes ? 100.0 : 0.0, analyze_out_bytes(p->peak_bytes, b2, sizeof b2),
            (unsigned long long)p->tensors);
    base_free(ord);
    if (!p->nmem_steps) {
        fprintf(f, "steps: none\n");
        return 0;
    }
    mem_summary s = summarize(p);
    fprintf(f, "steps: %zu", p->nmem_steps);
    if (p->mem_steps_dropped)
        fprintf(f, " (and %llu more, not kept)", (unsigned long long)p->mem_steps_dropped);
    text_range(f, "; live at the start", s.start_min, s.start_max);
    text_range(f, ", at the end", s.end_min, s.end_max);
    fprintf(f, "; the most within a step %s (step %zu)", analyze_out_bytes(s.peak_max, b1, sizeof b1), s.peak_step);
    const analyze_mem_step *first = &p->mem_steps[0], *last = &p->mem_steps[p->nmem_steps - 1];
    if (s.start_min == s.start_max && s.end_min == s.end_max && s.peak_max == s.start_max && s.end_max == s.start_max)
        fprintf(f, "; flat\n");
    else if (last->end > first->end)
        fprintf(f, "; grew by %s from the end of the first step to the end of the last\n",
                analyze_out_bytes(last->end - first->end, b1, sizeof b1));
    else
        fputc('\n', f);
    return 0;
}

/* traces x roles at each trace's peak (MiB) */
static int text_table(FILE *f, analyze_profile *const *pp, size_t n)
{
    analyze_names roles = { 0 };
    for (size_t i = 0; i < n; i++)
        for (size_t r = 0; r < pp[i]->nroles; r++)
            if (analyze_names_add(&roles, pp[i]->roles[r])) {
                analyze_names_free(&roles);
                return -1;
            }
    const char **col = roles.v;
    size_t ncol = roles.n;
    char lb[512];
    int lw = 24;
    for (size_t i = 0; i < n; i++)
        lw = analyze_out_width(lw, analyze_out_label(pp[i], lb, sizeof lb));
    fprintf(f, "\n== at each trace's peak (MiB)\n%-*s", lw, "trace");
    for (size_t j = 0; j < ncol; j++)
        fprintf(f, " %*s", analyze_out_width(9, col[j]), col[j]);
    fprintf(f, " %9s\n", "total");
    for (size_t i = 0; i < n; i++) {
        const analyze_profile *p = pp[i];
        fprintf(f, "%-*s", lw, analyze_out_label(p, lb, sizeof lb));
        for (size_t j = 0; j < ncol; j++) {
            int w = analyze_out_width(9, col[j]);
            size_t r = 0;
            while (r < p->nroles && strcmp(p->roles[r], col[j]) != 0)
                r++;
            if (r < p->nroles)
                fprintf(f, " %*.1f", w, (double)p->role_at_peak[r] / (1024.0 * 1024.0));
            else
                fprintf(f, " %*s", w, ".");
        }
        fprintf(f, " %9.1f\n", (double)p->peak_bytes / (1024.0 * 1024.0));
    }
    analyze_names_free(&roles);
    return 0;
}

/* ---- JSON ---------------------------------------------------------------------------- */
static json_t *trace_json(const analyze_profile *p)
{
    const analyze_meta *m = &p->meta;
    size_t *ord = roles_by_size(p);
    json_t *roles = json_array(), *steps = json_array();
    if (!ord || !roles || !steps) {
        base_free(ord), json_decref(roles), json_decref(steps);
        return NULL;
    }
    for (size_t i = 0; i < p->nroles; i++) {
        size_t r = ord[i];
        json_array_append_new(
            roles, json_pack("{s:s, s:I, s:I, s:f, s:I}", "role", p->roles[r], "at_peak_bytes",
                             (json_int_t)p->role_at_peak[r], "peak_bytes", (json_int_t)p->role_peak[r], "share_of_peak",
                             of_peak(p, p->role_at_peak[r]), "tensors", (json_int_t)p->role_tensors[r]));
    }
    base_free(ord);
    for (size_t i = 0; i < p->nmem_steps; i++) {
        const analyze_mem_step *s = &p->mem_steps[i];
        json_array_append_new(steps, json_pack("{s:I, s:I, s:I, s:I}", "step", (json_int_t)i, "start_bytes",
                                               (json_int_t)s->start, "peak_bytes", (json_int_t)s->peak, "end_bytes",
                                               (json_int_t)s->end));
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:I, s:I, s:b, s:I, s:I, s:o, s:o, s:I}", "source",
                     p->source ? p->source : "", "model", analyze_profile_model(p), "mode", analyze_profile_mode(p),
                     "preset", analyze_out_jstr(m->preset), "batch",
                     m->have_begin ? json_integer(m->batch) : json_null(), "peak_bytes", (json_int_t)p->peak_bytes,
                     "peak_step", (json_int_t)p->peak_step, "peak_in_step", p->peak_in_step, "tensors",
                     (json_int_t)p->tensors, "tensors_live_at_end", (json_int_t)p->tensors_live, "roles", roles,
                     "steps", steps, "steps_not_kept", (json_int_t)p->mem_steps_dropped);
}

/* ---- CSV ----------------------------------------------------------------------------- */
static void csv_head(FILE *f, const analyze_profile *p, const char *level, const char *name)
{
    char lb[512];
    analyze_out_csv_str(f, p->source);
    fputc(',', f);
    analyze_out_csv_str(f, analyze_out_label(p, lb, sizeof lb));
    fprintf(f, ",%s,", level);
    analyze_out_csv_str(f, name);
}

static int memory_csv(FILE *f, analyze_profile *const *pp, size_t n)
{
    fputs("source,trace,level,name,at_peak_bytes,peak_bytes,share_of_peak,tensors,start_bytes,end_bytes\n", f);
    for (size_t i = 0; i < n; i++) {
        const analyze_profile *p = pp[i];
        size_t *ord = roles_by_size(p);
        if (!ord)
            return -1;
        for (size_t k = 0; k < p->nroles; k++) {
            size_t r = ord[k];
            csv_head(f, p, "role", p->roles[r]);
            fprintf(f, ",%llu,%llu,%.6f,%llu,,\n", (unsigned long long)p->role_at_peak[r],
                    (unsigned long long)p->role_peak[r], of_peak(p, p->role_at_peak[r]),
                    (unsigned long long)p->role_tensors[r]);
        }
        base_free(ord);
        csv_head(f, p, "total", "total");
        fprintf(f, ",%llu,%llu,%.6f,%llu,,\n", (unsigned long long)p->peak_bytes, (unsigned long long)p->peak_bytes,
                p->peak_bytes ? 1.0 : 0.0, (unsigned long long)p->tensors);
        for (size_t k = 0; k < p->nmem_steps; k++) {
            char step[32];
            snprintf(step, sizeof step, "%zu", k);
            csv_head(f, p, "step", step);
            fprintf(f, ",,%llu,,,%llu,%llu\n", (unsigned long long)p->mem_steps[k].peak,
                    (unsigned long long)p->mem_steps[k].start, (unsigned long long)p->mem_steps[k].end);
        }
    }
    return ferror(f) ? -1 : 0;
}

int analyze_memory_print(FILE *f, analyze_profile *const *p, size_t n, cli_format fmt)
{
    if (fmt == CLI_JSON) {
        json_t *traces = json_array();
        for (size_t i = 0; traces && i < n; i++)
            if (json_array_append_new(traces, trace_json(p[i]))) {
                json_decref(traces);
                return -1;
            }
        return analyze_out_json(f, json_pack("{s:i, s:s, s:o}", "schema", 1, "analysis", "memory", "traces", traces));
    }
    if (fmt == CLI_CSV)
        return memory_csv(f, p, n);
    for (size_t i = 0; i < n; i++) {
        if (i)
            fputc('\n', f);
        if (text_trace(f, p[i]))
            return -1;
    }
    if (n > 1 && text_table(f, p, n))
        return -1;
    return ferror(f) ? -1 : 0;
}

/* ---- the row ------------------------------------------------------------------------- */
static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    const analyze_profile_set *s = r;
    (void)o;
    return analyze_out_status(f, analyze_memory_print(f, s->p, s->n, fmt));
}

const analyze_analysis analyze_row_memory = {
    .name = "memory",
    .args = "[options] TRACE...",
    .summary = "tensor memory by role (weights, activations, gradients...): at the\n"
               "peak and each role's own peak, when the peak is reached, and the\n"
               "live bytes over the steps",
    .about = "Tensor memory by role (weights, activations, gradients, optimizer state, inputs,\n"
             "workspace): at the peak and each role's own peak, when the peak is reached, and\n"
             "the live bytes over the steps.\n",
    .options = "",
    .takes = ANALYZE_TAKES_LIVE,
    .min_traces = 1,
    .create = analyze_profile_set_create,
    .print = print,
    .destroy = analyze_profile_set_destroy,
};
