/* ranks.c -- the ranks of one distributed job side by side, and the
 * stragglers (ranks.h). */
#include "analyze/ranks.h"

#include "analyze/device.h"
#include "analyze/out.h"
#include "base/alloc.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

static int by_rank(const void *a, const void *b)
{
    const analyze_rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static int by_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The spans of r's steps (the whole trace as one when it has no steps)
 * into *v (caller frees) and their number; 0 with *v NULL out of memory. */
static size_t spans_of(analyze_rank *r, const analyze_device_union *all, analyze_step_span **v)
{
    const analyze_profile *p = r->p;
    const analyze_step_span *kept;
    size_t n = p->steps_seen ? analyze_profile_kept_spans(p, &kept) : 0;
    if (!p->steps_seen) { /* the first op or activity to the last */
        uint64_t b = p->first_ns, e = p->last_ns, db, de;
        if (analyze_device_union_range(all, &db, &de)) {
            b = db < b ? db : b;
            e = de > e ? de : e;
        }
        if (b > e)
            b = e = 0;
        if ((*v = base_malloc(sizeof **v)))
            **v = (analyze_step_span){ 0, b, e };
        r->whole = 1;
        return *v ? 1 : 0;
    }
    if ((*v = base_malloc((n ? n : 1) * sizeof **v)))
        memcpy(*v, kept, n * sizeof **v);
    return *v ? n : 0;
}

/* r's compared steps from its spans. */
static void measure(analyze_rank *r, const analyze_step_span *sp, size_t steps, const analyze_device_union *all,
                    const analyze_device_union *comm)
{
    analyze_rank_step sum = { 0 };
    for (size_t k = 0; k < steps; k++) {
        analyze_rank_step *s = &r->s[k];
        uint64_t b = sp[k].begin, e = sp[k].end >= sp[k].begin ? sp[k].end : sp[k].begin;
        s->step_ns = e - b;
        s->busy_ns = analyze_device_union_within(all, b, e);
        s->comm_ns = analyze_device_union_within(comm, b, e);
        s->idle_ns = s->step_ns - s->busy_ns;
        sum.step_ns += s->step_ns, sum.busy_ns += s->busy_ns, sum.comm_ns += s->comm_ns, sum.idle_ns += s->idle_ns;
    }
    if (steps)
        r->mean =
            (analyze_rank_step){ sum.step_ns / steps, sum.busy_ns / steps, sum.comm_ns / steps, sum.idle_ns / steps };
}

/* Step k's straggler among a's ranks; tmp holds a->n values. */
static void straggler_of(analyze_ranks *a, size_t k, uint64_t *tmp)
{
    analyze_straggler *st = &a->st[k];
    st->slowest = 0, st->least_comm = -1;
    for (size_t i = 0; i < a->n; i++) {
        const analyze_rank_step *s = &a->r[i].s[k];
        tmp[i] = s->step_ns;
        if (s->step_ns > a->r[st->slowest].s[k].step_ns)
            st->slowest = i;
        if (s->comm_ns && (st->least_comm < 0 || s->comm_ns < a->r[st->least_comm].s[k].comm_ns))
            st->least_comm = (long long)i;
    }
    qsort(tmp, a->n, sizeof *tmp, by_u64);
    st->median_ns = a->n % 2 ? tmp[a->n / 2] : tmp[a->n / 2 - 1] + (tmp[a->n / 2] - tmp[a->n / 2 - 1]) / 2;
    st->behind_ns = a->r[st->slowest].s[k].step_ns - st->median_ns;
    st->behind = share(st->behind_ns, st->median_ns);
    a->r[st->slowest].slowest++;
    a->r[st->slowest].behind_ns += st->behind_ns;
}

analyze_status analyze_ranks_create(analyze_profile *const *p, size_t n, analyze_ranks **out)
{
    analyze_status rc = ANALYZE_ERR_NOMEM;
    analyze_step_span **spans = base_calloc(n ? n : 1, sizeof *spans);
    uint64_t *tmp = base_malloc((n ? n : 1) * sizeof *tmp);
    analyze_ranks *a = base_calloc(1, sizeof *a);
    *out = NULL;
    if (!spans || !tmp || !a || !(a->r = base_calloc(n ? n : 1, sizeof *a->r)))
        goto nomem;
    a->n = n;
    a->world_size = -1;
    for (size_t i = 0; i < n; i++) {
        a->r[i].p = p[i];
        a->r[i].rank = p[i]->rank;
        a->by_order |= p[i]->rank < 0;
        if (p[i]->world_size > 0 && a->world_size > 0 && p[i]->world_size != a->world_size)
            a->world_differs = 1;
        if (p[i]->world_size > 0 && a->world_size < 0)
            a->world_size = p[i]->world_size;
    }
    for (size_t i = 0; a->by_order && i < n; i++)
        a->r[i].rank = (int64_t)i;
    qsort(a->r, n, sizeof *a->r, by_rank);
    for (size_t i = 1; i < n; i++)
        if (a->r[i].rank == a->r[i - 1].rank) {
            rc = analyze_fail(ANALYZE_ERR_INPUT, "rank %lld twice: %s and %s (one trace a rank)",
                              (long long)a->r[i].rank, a->r[i - 1].p->source, a->r[i].p->source);
            goto fail;
        }
    a->steps = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        analyze_rank *r = &a->r[i];
        analyze_device_union *all = analyze_devices_union(r->p->devices, -1);
        if (!all)
            goto nomem;
        r->nkept = spans_of(r, all, &spans[i]);
        analyze_device_union_destroy(all);
        if (!spans[i])
            goto nomem;
        if (!r->nkept) {
            rc = analyze_fail(ANALYZE_ERR_INPUT, "%s: no kept step", r->p->source);
            goto fail;
        }
        if (r->nkept < a->steps)
            a->steps = r->nkept;
    }
    if (!n)
        a->steps = 0;
    if (!(a->st = base_calloc(a->steps ? a->steps : 1, sizeof *a->st)))
        goto nomem;
    for (size_t i = 0; i < n; i++) {
        analyze_rank *r = &a->r[i];
        analyze_device_union *all = analyze_devices_union(r->p->devices, -1),
                             *comm = analyze_devices_union(r->p->devices, ANALYZE_DEVICE_communication);
        r->s = base_calloc(a->steps ? a->steps : 1, sizeof *r->s);
        if (all && comm && r->s)
            measure(r, spans[i], a->steps, all, comm);
        analyze_device_union_destroy(all), analyze_device_union_destroy(comm);
        if (!r->s || !all || !comm)
            goto nomem;
    }
    for (size_t k = 0; n && k < a->steps; k++) {
        straggler_of(a, k, tmp);
        a->st[k].step = spans[0][k].ordinal;
    }
    for (size_t i = 1; i < n; i++)
        if (a->r[i].slowest > a->r[a->most_slowest].slowest)
            a->most_slowest = i;
    for (size_t i = 0; i < n; i++)
        base_free(spans[i]);
    base_free(spans), base_free(tmp);
    *out = a;
    return ANALYZE_OK;
nomem:
    rc = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
fail:
    for (size_t i = 0; spans && i < n; i++)
        base_free(spans[i]);
    base_free(spans), base_free(tmp);
    analyze_ranks_destroy(a);
    return rc;
}

void analyze_ranks_destroy(analyze_ranks *a)
{
    if (!a)
        return;
    for (size_t i = 0; a->r && i < a->n; i++)
        base_free(a->r[i].s);
    base_free(a->r), base_free(a->st);
    base_free(a);
}

static int print_json(FILE *f, const analyze_ranks *a)
{
    json_t *ranks = json_array(), *strag = json_array();
    json_t *root =
        json_pack("{s:i, s:I, s:I, s:b, s:o, s:o}", "schema", 1, "world_size", (json_int_t)a->world_size, "steps",
                  (json_int_t)a->steps, "ranks_by_order", a->by_order, "ranks", ranks, "stragglers", strag);
    if (!root)
        return -1;
    for (size_t i = 0; i < a->n; i++) {
        const analyze_rank *r = &a->r[i];
        json_t *steps = json_array();
        for (size_t k = 0; k < a->steps; k++)
            json_array_append_new(steps, json_pack("{s:I, s:I, s:I, s:I, s:I}", "step", (json_int_t)a->st[k].step,
                                                   "step_ns", (json_int_t)r->s[k].step_ns, "busy_ns",
                                                   (json_int_t)r->s[k].busy_ns, "comm_ns", (json_int_t)r->s[k].comm_ns,
                                                   "idle_ns", (json_int_t)r->s[k].idle_ns));
        json_array_append_new(
            ranks, json_pack("{s:I, s:s, s:o, s:I, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:o}", "rank",
                             (json_int_t)r->rank, "source", r->p->source, "model", analyze_out_jstr(r->p->meta.model),
                             "steps_kept", (json_int_t)r->nkept, "whole_trace", r->whole, "step_ns",
                             (json_int_t)r->mean.step_ns, "busy_ns", (json_int_t)r->mean.busy_ns, "comm_ns",
                             (json_int_t)r->mean.comm_ns, "idle_ns", (json_int_t)r->mean.idle_ns, "slowest_steps",
                             (json_int_t)r->slowest, "behind_ns", (json_int_t)r->behind_ns, "steps", steps));
    }
    for (size_t k = 0; k < a->steps; k++) {
        const analyze_straggler *s = &a->st[k];
        json_array_append_new(
            strag, json_pack("{s:I, s:I, s:I, s:I, s:I, s:f, s:o}", "step", (json_int_t)s->step, "rank",
                             (json_int_t)a->r[s->slowest].rank, "step_ns", (json_int_t)a->r[s->slowest].s[k].step_ns,
                             "median_ns", (json_int_t)s->median_ns, "behind_ns", (json_int_t)s->behind_ns, "behind",
                             s->behind, "least_comm_rank",
                             s->least_comm < 0 ? json_null() : json_integer((json_int_t)a->r[s->least_comm].rank)));
    }
    if (a->n) {
        const analyze_rank *r = &a->r[a->most_slowest];
        json_object_set_new(root, "slowest",
                            json_pack("{s:I, s:I, s:I}", "rank", (json_int_t)r->rank, "steps", (json_int_t)r->slowest,
                                      "behind_ns", (json_int_t)(r->slowest ? r->behind_ns / r->slowest : 0)));
    }
    return analyze_out_json(f, root);
}

int analyze_ranks_print(FILE *f, const analyze_ranks *a, cli_format fmt)
{
    if (fmt == CLI_JSON)
        return print_json(f, a);
    if (fmt == CLI_CSV) {
        fprintf(f, "rank,step,step_ms,busy_ms,comm_ms,idle_ms,slowest,behind_median_ms,source\n");
        for (size_t i = 0; i < a->n; i++)
            for (size_t k = 0; k < a->steps; k++) {
                const analyze_rank_step *s = &a->r[i].s[k];
                fprintf(f, "%lld,%llu,%.6f,%.6f,%.6f,%.6f,%d,%.6f,", (long long)a->r[i].rank,
                        (unsigned long long)a->st[k].step, s->step_ns / 1e6, s->busy_ns / 1e6, s->comm_ns / 1e6,
                        s->idle_ns / 1e6, a->st[k].slowest == i,
                        ((double)s->step_ns - (double)a->st[k].median_ns) / 1e6);
                analyze_out_csv_str(f, a->r[i].p->source);
                fputc('\n', f);
            }
        return ferror(f) ? -1 : 0;
    }
    char world[32] = "?";
    if (a->world_size > 0)
        snprintf(world, sizeof world, "%lld", (long long)a->world_size);
    fprintf(f, "%zu ranks of %s, %zu step%s compared%s\n", a->n, world, a->steps, a->steps == 1 ? "" : "s",
            a->by_order ? " (ranks: the traces' order)" : "");
    fprintf(f, "%6s %10s %10s %6s %10s %6s %10s %8s  %s\n", "rank", "step ms", "busy ms", "busy", "comm ms", "comm",
            "idle ms", "slowest", "trace");
    for (size_t i = 0; i < a->n; i++) {
        const analyze_rank *r = &a->r[i];
        fprintf(f, "%6lld %10.3f %10.3f %5.1f%% %10.3f %5.1f%% %10.3f %8llu  %s\n", (long long)r->rank,
                r->mean.step_ns / 1e6, r->mean.busy_ns / 1e6, 100 * share(r->mean.busy_ns, r->mean.step_ns),
                r->mean.comm_ns / 1e6, 100 * share(r->mean.comm_ns, r->mean.step_ns), r->mean.idle_ns / 1e6,
                (unsigned long long)r->slowest, r->p->source);
    }
    fprintf(f, "\nstragglers: the slowest rank of each step, against the median rank\n");
    fprintf(f, "%6s %8s %10s %10s %10s %7s %11s\n", "step", "slowest", "step ms", "median ms", "behind ms", "behind",
            "least comm");
    for (size_t k = 0; k < a->steps; k++) {
        const analyze_straggler *s = &a->st[k];
        char least[32] = "-";
        if (s->least_comm >= 0)
            snprintf(least, sizeof least, "%lld", (long long)a->r[s->least_comm].rank);
        fprintf(f, "%6llu %8lld %10.3f %10.3f %10.3f %6.1f%% %11s\n", (unsigned long long)s->step,
                (long long)a->r[s->slowest].rank, a->r[s->slowest].s[k].step_ns / 1e6, s->median_ns / 1e6,
                s->behind_ns / 1e6, 100 * s->behind, least);
    }
    if (a->n && a->steps) {
        const analyze_rank *r = &a->r[a->most_slowest];
        uint64_t behind = r->slowest ? r->behind_ns / r->slowest : 0;
        uint64_t med = 0;
        for (size_t k = 0; k < a->steps; k++)
            if (a->st[k].slowest == a->most_slowest)
                med += a->st[k].median_ns;
        fprintf(f, "\nslowest most often: rank %lld, in %llu of %zu steps, %.3f ms (%.1f%%) behind the median\n",
                (long long)r->rank, (unsigned long long)r->slowest, a->steps, behind / 1e6,
                100 * share(r->behind_ns, med));
    }
    return ferror(f) ? -1 : 0;
}

static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    (void)o;
    analyze_ranks *a = NULL;
    analyze_status st = analyze_ranks_create(p, n, &a);
    *out = a;
    return st;
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    (void)o;
    return analyze_out_status(f, analyze_ranks_print(f, r, fmt));
}

static void destroy(void *r) { analyze_ranks_destroy(r); }

static int mismatch(const void *r, char *buf, size_t len)
{
    const analyze_ranks *a = r;
    if (a->world_differs) {
        snprintf(buf, len, "the traces give different world sizes: not the ranks of one job?");
        return 1;
    }
    for (size_t i = 0; a->world_size > 0 && !a->by_order && i < a->n; i++)
        if (a->r[i].rank >= a->world_size) {
            snprintf(buf, len, "rank %lld (%s) is past the world size %lld: not the ranks of one job?",
                     (long long)a->r[i].rank, a->r[i].p->source, (long long)a->world_size);
            return 1;
        }
    return 0;
}

static void notes(const void *res, cli_format fmt, analyze_note_fn fn, void *ctx)
{
    const analyze_ranks *a = res;
    char line[2048];
    (void)fmt;
    for (size_t i = 0; i < a->n; i++) {
        const analyze_rank *r = &a->r[i];
        if (r->p->rank < 0) {
            snprintf(line, sizeof line, "%s gives no rank (source.rank): each trace is the rank of its place",
                     r->p->source);
            fn(ctx, line);
            break;
        }
    }
    for (size_t i = 0; i < a->n; i++) {
        const analyze_rank *r = &a->r[i];
        if (r->whole)
            snprintf(line, sizeof line, "rank %lld (%s) has no steps: its whole trace is one step", (long long)r->rank,
                     r->p->source);
        else if (r->nkept > a->steps)
            snprintf(line, sizeof line, "rank %lld kept %zu steps: its first %zu are compared", (long long)r->rank,
                     r->nkept, a->steps);
        else if (r->p->step_spans_dropped)
            snprintf(line, sizeof line, "rank %lld: steps past the first %d are not compared", (long long)r->rank,
                     ANALYZE_MEM_STEPS_MAX);
        else
            continue;
        fn(ctx, line);
    }
}

const analyze_analysis analyze_row_ranks = {
    .name = "ranks",
    .args = "[options] TRACE TRACE...",
    .summary = "the ranks of one distributed job side by side: per rank and\n"
               "step the step time, GPU busy, communication and idle time;\n"
               "the slowest rank of each step and how far behind (stragglers)",
    .about = "The ranks of one distributed job side by side (one trace a rank, as `fathom\n"
             "import` writes them): per rank and step, the step time, the time its GPUs were\n"
             "busy, the time communication kernels ran (NCCL, RCCL) and the idle time; per\n"
             "step, the slowest rank, how far behind the median rank it is, and the rank with\n"
             "the least communication (the one the others waited for).\n",
    .options = "",
    .takes = ANALYZE_TAKES_WINDOW,
    .min_traces = 2,
    .traces_rule = "two traces or more (the ranks of one job)",
    .create = create,
    .print = print,
    .destroy = destroy,
    .mismatch = mismatch,
    .notes = notes,
};
