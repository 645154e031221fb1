/* gpu.c -- what a GPU trace's devices did in each kept step: busy and idle
 * time, what the idle time waited on (launched work, a sync, the host),
 * how much of the communication kernels' time ran under compute kernels,
 * and how the host launched the device's work (device.h's windows and
 * launch statistics; fathom-analyze(1), gpu). */
#include "analyze/analysis.h"
#include "analyze/device.h"
#include "analyze/gpu.h"
#include "analyze/out.h"
#include "analyze/plot.h"
#include "base/alloc.h"

#include <jansson.h>
#include <string.h>

/* One device of one trace: its kept steps' windows. */
typedef struct gpu_device {
    char name[48];
    size_t n;
    analyze_device_window *w;
    uint32_t *num;                                       /* each window's step (its ordinal, from 0) */
    uint64_t step_ns, busy_ns, comm_ns, comm_overlap_ns; /* over the windows */
    uint64_t between_ns, sync_ns, host_ns;               /* the idle time's parts, over the windows */
    int calls;                                           /* the trace has its runtime calls: the parts are known */
    analyze_device_launches *l;                          /* per window, then over all of them (n + 1) */
} gpu_device;

typedef struct gpu_trace {
    const analyze_profile *p;
    size_t n;
    gpu_device *d;
} gpu_trace;

typedef struct analyze_gpu {
    size_t n;
    gpu_trace *t;
} gpu_result;

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

static void destroy(void *r)
{
    gpu_result *g = r;
    for (size_t i = 0; g && i < g->n; i++) {
        for (size_t k = 0; k < g->t[i].n; k++)
            base_free(g->t[i].d[k].w), base_free(g->t[i].d[k].num), base_free(g->t[i].d[k].l);
        base_free(g->t[i].d);
    }
    if (g)
        base_free(g->t);
    base_free(g);
}

/* The kept steps of p (the trace's steps less --skip-first and --skip-last
 * ones; a trace without steps: one window, the device's activity) into
 * dev's windows.  0 or -1 out of memory. */
static int windows(const analyze_profile *p, gpu_device *dev)
{
    const analyze_step_span *v = NULL;
    size_t kept = analyze_profile_kept_spans(p, &v);
    int none = !p->nstep_spans;
    dev->n = none ? 1 : kept;
    dev->w = base_calloc(dev->n ? dev->n : 1, sizeof *dev->w);
    dev->num = base_calloc(dev->n ? dev->n : 1, sizeof *dev->num);
    dev->l = base_calloc(dev->n + 1, sizeof *dev->l);
    if (!dev->w || !dev->num || !dev->l)
        return -1;
    for (size_t i = 0; !none && i < dev->n; i++) {
        dev->w[i].b = v[i].begin, dev->w[i].e = v[i].end;
        dev->num[i] = (uint32_t)v[i].ordinal;
    }
    if (analyze_devices_windows(p->devices, dev->name, dev->w, dev->n) ||
        analyze_devices_launch_stats(p->devices, dev->name, dev->w, dev->n, dev->l))
        return -1;
    dev->calls = analyze_devices_has_calls(p->devices);
    for (size_t i = 0; i < dev->n; i++) {
        const analyze_device_window *x = &dev->w[i];
        dev->step_ns += x->e - x->b, dev->busy_ns += x->busy_ns;
        dev->comm_ns += x->comm_ns, dev->comm_overlap_ns += x->comm_overlap_ns;
        dev->between_ns += x->idle_between_ns, dev->sync_ns += x->idle_sync_ns, dev->host_ns += x->idle_host_ns;
    }
    return 0;
}

static analyze_status create(analyze_profile *const *p, size_t n, const analyze_options *o, void **out)
{
    (void)o;
    *out = NULL;
    gpu_result *g = base_calloc(1, sizeof *g);
    if (!g || !(g->t = base_calloc(n ? n : 1, sizeof *g->t)))
        goto oom;
    for (size_t i = 0; i < n; i++) {
        gpu_trace *t = &g->t[g->n++];
        t->p = p[i];
        size_t nd = 0;
        analyze_device *v = analyze_devices_summary(p[i]->devices, &nd);
        if (!v && nd)
            goto oom;
        t->d = base_calloc(nd ? nd : 1, sizeof *t->d);
        if (!t->d) {
            analyze_devices_summary_free(v, nd);
            goto oom;
        }
        for (size_t k = 0; k < nd; k++) {
            gpu_device *dv = &t->d[t->n++];
            memcpy(dv->name, v[k].name, sizeof dv->name);
            if (windows(p[i], dv)) {
                analyze_devices_summary_free(v, nd);
                goto oom;
            }
        }
        analyze_devices_summary_free(v, nd);
    }
    *out = g;
    return ANALYZE_OK;
oom:
    destroy(g);
    return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
}

/* v, or null where the trace lacks its runtime calls. */
static json_t *known(int calls, uint64_t v) { return calls ? json_integer((json_int_t)v) : json_null(); }

/* A window's (or all windows') launch statistics; null without calls. */
static json_t *launches_json(int calls, const analyze_device_launches *l, int top)
{
    if (!calls)
        return json_null();
    json_t *o =
        json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f}", "activities",
                  (json_int_t)l->activities, "launched", (json_int_t)l->launched, "unpaired", (json_int_t)l->unpaired,
                  "calls", (json_int_t)l->calls, "call_ns", (json_int_t)l->call_ns, "launched_ns",
                  (json_int_t)l->launched_ns, "kernel_ns", (json_int_t)l->kernel_ns, "delay_median_ns",
                  (json_int_t)l->delay_median_ns, "delay_p90_ns", (json_int_t)l->delay_p90_ns, "delay_max_ns",
                  (json_int_t)l->delay_max_ns, "short_kernels", (json_int_t)l->short_count, "short_ns",
                  (json_int_t)l->short_ns, "short_share", share(l->short_ns, l->kernel_ns));
    if (o && top) {
        json_t *v = json_array();
        for (size_t i = 0; v && i < l->nshort_top; i++)
            json_array_append_new(v,
                                  json_pack("{s:s, s:s, s:I, s:I}", "name", l->short_top[i].name, "class",
                                            analyze_device_class_name(l->short_top[i].cls), "count",
                                            (json_int_t)l->short_top[i].count, "ns", (json_int_t)l->short_top[i].ns));
        json_object_set_new(o, "short_top", v ? v : json_null());
    }
    return o;
}

static json_t *device_json(const gpu_device *d)
{
    json_t *steps = json_array();
    for (size_t i = 0; steps && i < d->n; i++) {
        const analyze_device_window *x = &d->w[i];
        json_array_append_new(
            steps,
            json_pack("{s:I, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:o}", "step", (json_int_t)d->num[i], "ns",
                      (json_int_t)(x->e - x->b), "busy_ns", (json_int_t)x->busy_ns, "idle_ns",
                      (json_int_t)(x->e - x->b - x->busy_ns), "idle_between_ns", known(d->calls, x->idle_between_ns),
                      "idle_sync_ns", known(d->calls, x->idle_sync_ns), "idle_host_ns",
                      known(d->calls, x->idle_host_ns), "comm_ns", (json_int_t)x->comm_ns, "comm_overlap_ns",
                      (json_int_t)x->comm_overlap_ns, "launches", launches_json(d->calls, &d->l[i], 0)));
    }
    return json_pack("{s:s, s:I, s:I, s:I, s:o, s:o, s:o, s:I, s:I, s:f, s:o, s:o}", "device", d->name, "step_ns",
                     (json_int_t)d->step_ns, "busy_ns", (json_int_t)d->busy_ns, "idle_ns",
                     (json_int_t)(d->step_ns - d->busy_ns), "idle_between_ns", known(d->calls, d->between_ns),
                     "idle_sync_ns", known(d->calls, d->sync_ns), "idle_host_ns", known(d->calls, d->host_ns),
                     "comm_ns", (json_int_t)d->comm_ns, "comm_overlap_ns", (json_int_t)d->comm_overlap_ns,
                     "overlap_share", share(d->comm_overlap_ns, d->comm_ns), "launches",
                     launches_json(d->calls, &d->l[d->n], 1), "steps", steps);
}

/* A CSV cell of v, empty where the trace lacks its runtime calls. */
static void csv_known(FILE *f, int calls, uint64_t v)
{
    if (calls)
        fprintf(f, ",%llu", (unsigned long long)v);
    else
        fputc(',', f);
}

static void ms_or_na(char *buf, size_t size, int calls, uint64_t ns)
{
    if (calls)
        snprintf(buf, size, "%.3f", (double)ns / 1e6);
    else
        snprintf(buf, size, "n/a");
}

#define NAME_MAX_TEXT 72 /* a kernel name in the text is cut there (a template's arguments) */

/* The device's idle split and launch statistics, in words. */
static void print_launches(FILE *f, const gpu_device *d)
{
    if (!d->calls) {
        fprintf(f, "  idle time's causes and launch statistics: n/a (the archive holds no runtime calls: the "
                   "trace had none, or an older fathom imported it)\n");
        return;
    }
    const analyze_device_launches *l = &d->l[d->n];
    fprintf(f,
            "  idle %.3f ms: %.3f ms between kernels (launched work waiting), %.3f ms in host syncs, %.3f ms "
            "waiting on the host\n",
            (double)(d->step_ns - d->busy_ns) / 1e6, (double)d->between_ns / 1e6, (double)d->sync_ns / 1e6,
            (double)d->host_ns / 1e6);
    fprintf(f,
            "  launches: %llu calls, %.3f ms on the host, started %llu of %llu activities (%.3f ms on the device); "
            "%llu with no launch call (CUDA graphs, flows pointing nowhere)\n",
            (unsigned long long)l->calls, (double)l->call_ns / 1e6, (unsigned long long)l->launched,
            (unsigned long long)l->activities, (double)l->launched_ns / 1e6, (unsigned long long)l->unpaired);
    fprintf(f, "  launch to start: median %.3f us, p90 %.3f us, max %.3f us\n", (double)l->delay_median_ns / 1e3,
            (double)l->delay_p90_ns / 1e3, (double)l->delay_max_ns / 1e3);
    fprintf(f, "  short kernels (shorter than their launch call): %llu, %.3f ms, %.1f%% of kernel time%s",
            (unsigned long long)l->short_count, (double)l->short_ns / 1e6, 100.0 * share(l->short_ns, l->kernel_ns),
            l->nshort_top ? ":" : "");
    for (size_t i = 0; i < l->nshort_top; i++)
        fprintf(f, "%s %.*s%s (%llu)", i ? "," : "", NAME_MAX_TEXT, l->short_top[i].name,
                strlen(l->short_top[i].name) > NAME_MAX_TEXT ? "..." : "", (unsigned long long)l->short_top[i].count);
    fputc('\n', f);
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    (void)o;
    return analyze_gpu_print(f, r, fmt);
}

int analyze_gpu_print(FILE *f, const analyze_gpu *g, cli_format fmt)
{
    if (fmt == CLI_JSON) {
        json_t *arr = json_array(), *root = json_pack("{s:i, s:o}", "schema", 1, "traces", arr);
        if (!root)
            return analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        for (size_t i = 0; i < g->n; i++) {
            const gpu_trace *t = &g->t[i];
            json_t *devs = json_array();
            for (size_t k = 0; devs && k < t->n; k++)
                json_array_append_new(devs, device_json(&t->d[k]));
            json_array_append_new(arr, json_pack("{s:o, s:s, s:s, s:o}", "source", analyze_out_jstr(t->p->source),
                                                 "model", analyze_profile_model(t->p), "mode",
                                                 analyze_profile_mode(t->p), "devices", devs));
        }
        return analyze_out_status(f, analyze_out_json(f, root));
    }
    if (fmt == CLI_CSV) {
        fputs("trace,model,mode,device,step,ns,busy_ns,idle_ns,comm_ns,comm_overlap_ns,idle_between_ns,idle_sync_ns,"
              "idle_host_ns,launch_calls,launch_call_ns,launched_ns,delay_median_ns,delay_p90_ns,delay_max_ns,"
              "short_kernels,short_ns\n",
              f);
        for (size_t i = 0; i < g->n; i++)
            for (size_t k = 0; k < g->t[i].n; k++) {
                const gpu_device *d = &g->t[i].d[k];
                for (size_t s = 0; s < d->n; s++) {
                    const analyze_device_window *x = &d->w[s];
                    analyze_out_csv_str(f, g->t[i].p->source);
                    fputc(',', f);
                    analyze_out_csv_str(f, analyze_profile_model(g->t[i].p));
                    fputc(',', f);
                    analyze_out_csv_str(f, analyze_profile_mode(g->t[i].p));
                    fputc(',', f);
                    analyze_out_csv_str(f, d->name);
                    fprintf(f, ",%u,%llu,%llu,%llu,%llu,%llu", d->num[s], (unsigned long long)(x->e - x->b),
                            (unsigned long long)x->busy_ns, (unsigned long long)(x->e - x->b - x->busy_ns),
                            (unsigned long long)x->comm_ns, (unsigned long long)x->comm_overlap_ns);
                    const analyze_device_launches *l = &d->l[s];
                    const uint64_t v[] = { x->idle_between_ns, x->idle_sync_ns, x->idle_host_ns,    l->calls,
                                           l->call_ns,         l->launched_ns,  l->delay_median_ns, l->delay_p90_ns,
                                           l->delay_max_ns,    l->short_count,  l->short_ns };
                    for (size_t c = 0; c < sizeof v / sizeof *v; c++)
                        csv_known(f, d->calls, v[c]);
                    fputc('\n', f);
                }
            }
        return analyze_out_status(f, 0);
    }
    for (size_t i = 0; i < g->n; i++) {
        const gpu_trace *t = &g->t[i];
        fprintf(f, "%s== %s %s  %s\n", i ? "\n" : "", analyze_profile_model(t->p), analyze_profile_mode(t->p),
                t->p->source);
        if (!t->n)
            fprintf(f, "no device activity (a CPU trace)\n");
        for (size_t k = 0; k < t->n; k++) {
            const gpu_device *d = &t->d[k];
            fprintf(f,
                    "device %s: %zu step%s%s; busy %.3f ms of %.3f ms (%.1f%%), idle %.3f ms; communication "
                    "%.3f ms, %.3f ms of it under compute kernels (%.1f%%)\n",
                    d->name, d->n, d->n == 1 ? "" : "s", t->p->nstep_spans ? "" : " (no steps: the whole trace)",
                    (double)d->busy_ns / 1e6, (double)d->step_ns / 1e6, 100.0 * share(d->busy_ns, d->step_ns),
                    (double)(d->step_ns - d->busy_ns) / 1e6, (double)d->comm_ns / 1e6, (double)d->comm_overlap_ns / 1e6,
                    100.0 * share(d->comm_overlap_ns, d->comm_ns));
            print_launches(f, d);
            fprintf(f, "%10s %11s %11s %11s %7s %11s %9s %11s %11s %11s\n", "step", "time ms", "busy ms", "idle ms",
                    "busy", "comm ms", "overlap", "between ms", "sync ms", "host ms");
            for (size_t s = 0; s < d->n; s++) {
                const analyze_device_window *x = &d->w[s];
                uint64_t ns = x->e - x->b;
                char bt[32], sy[32], ho[32];
                ms_or_na(bt, sizeof bt, d->calls, x->idle_between_ns);
                ms_or_na(sy, sizeof sy, d->calls, x->idle_sync_ns);
                ms_or_na(ho, sizeof ho, d->calls, x->idle_host_ns);
                fprintf(f, "%10u %11.3f %11.3f %11.3f %6.1f%% %11.3f %8.1f%% %11s %11s %11s\n", d->num[s],
                        (double)ns / 1e6, (double)x->busy_ns / 1e6, (double)(ns - x->busy_ns) / 1e6,
                        100.0 * share(x->busy_ns, ns), (double)x->comm_ns / 1e6,
                        100.0 * share(x->comm_overlap_ns, x->comm_ns), bt, sy, ho);
            }
        }
    }
    return analyze_out_status(f, 0);
}

analyze_status analyze_gpu_create(analyze_profile *const *p, size_t n, analyze_gpu **out)
{
    void *r = NULL;
    analyze_status st = create(p, n, NULL, &r);
    *out = r;
    return st;
}

void analyze_gpu_destroy(analyze_gpu *g) { destroy(g); }

int analyze_gpu_any(const analyze_gpu *g)
{
    for (size_t i = 0; g && i < g->n; i++)
        if (g->t[i].n)
            return 1;
    return 0;
}

int analyze_gpu_any_calls(const analyze_gpu *g)
{
    for (size_t i = 0; g && i < g->n; i++)
        for (size_t k = 0; k < g->t[i].n; k++)
            if (g->t[i].d[k].calls)
                return 1;
    return 0;
}

/* The parts of the idle chart, and their colours. */
static const char *const idle_parts[] = { "busy", "idle: between kernels", "idle: host sync",
                                          "idle: waiting on the host", "idle: cause unknown" };
static size_t idle_colour(const char *part)
{
    static const size_t colour[] = { 0, 1, 5, 9, 8 };
    for (size_t i = 0; i < sizeof idle_parts / sizeof *idle_parts; i++)
        if (!strcmp(part, idle_parts[i]))
            return colour[i];
    return 9;
}
static const char *const launch_parts[] = { "short kernels (shorter than their launch call)", "other kernels" };
static size_t launch_colour(const char *part) { return strcmp(part, launch_parts[0]) ? 0 : 5; }

/* Room for n rows: their labels and nv values each. */
typedef struct rows {
    size_t n;
    char (*label)[96];
    const char **labels;
    double *value;
} rows;

static int rows_alloc(rows *r, size_t n, size_t nv)
{
    r->n = 0;
    r->label = base_calloc(n ? n : 1, sizeof *r->label);
    r->labels = base_calloc(n ? n : 1, sizeof *r->labels);
    r->value = base_calloc((n ? n : 1) * nv, sizeof *r->value);
    return r->label && r->labels && r->value ? 0 : -1;
}

static void rows_free(rows *r) { base_free(r->label), base_free(r->labels), base_free(r->value); }

analyze_status analyze_gpu_plot_idle(const analyze_gpu *g, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->t[i].n; k++)
            n += g->t[i].d[k].n < ANALYZE_GPU_PLOT_STEPS ? g->t[i].d[k].n : ANALYZE_GPU_PLOT_STEPS;
    rows r;
    analyze_status st = ANALYZE_ERR_NOMEM;
    if (rows_alloc(&r, n, 5)) {
        st = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->t[i].n; k++) {
            const gpu_device *d = &g->t[i].d[k];
            for (size_t s = 0; s < d->n && s < ANALYZE_GPU_PLOT_STEPS; s++) {
                const analyze_device_window *x = &d->w[s];
                double *v = &r.value[r.n * 5];
                snprintf(r.label[r.n], sizeof r.label[r.n], "%s/%s %s step %u", analyze_profile_model(g->t[i].p),
                         analyze_profile_mode(g->t[i].p), d->name, d->num[s]);
                r.labels[r.n] = r.label[r.n];
                v[0] = (double)x->busy_ns;
                if (d->calls) {
                    v[1] = (double)x->idle_between_ns, v[2] = (double)x->idle_sync_ns, v[3] = (double)x->idle_host_ns;
                } else {
                    v[4] = (double)(x->e - x->b - x->busy_ns);
                }
                r.n++;
            }
        }
    st = analyze_plot_stacked(path, "Each GPU step: device busy, and what the idle time waited on",
                              "share of each step's time", r.labels, r.n, idle_parts, 5, idle_colour, r.value,
                              "its step");
end:
    rows_free(&r);
    return st;
}

analyze_status analyze_gpu_plot_launches(const analyze_gpu *g, const char *path)
{
    size_t n = 0;
    for (size_t i = 0; i < g->n; i++)
        n += g->t[i].n;
    rows r;
    analyze_status st = ANALYZE_ERR_NOMEM;
    if (rows_alloc(&r, n, 2)) {
        st = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }
    for (size_t i = 0; i < g->n; i++)
        for (size_t k = 0; k < g->t[i].n; k++) {
            const gpu_device *d = &g->t[i].d[k];
            const analyze_device_launches *l = &d->l[d->n];
            if (!d->calls)
                continue;
            snprintf(r.label[r.n], sizeof r.label[r.n], "%s/%s %s (launch delay p50 %.1f us)",
                     analyze_profile_model(g->t[i].p), analyze_profile_mode(g->t[i].p), d->name,
                     (double)l->delay_median_ns / 1e3);
            r.labels[r.n] = r.label[r.n];
            r.value[r.n * 2] = (double)l->short_ns;
            r.value[r.n * 2 + 1] = (double)(l->kernel_ns - l->short_ns);
            r.n++;
        }
    st = analyze_plot_stacked(path, "Kernel time: the kernels shorter than their launch call",
                              "share of each device's kernel time", r.labels, r.n, launch_parts, 2, launch_colour,
                              r.value, "its kernel time");
end:
    rows_free(&r);
    return st;
}

const analyze_analysis analyze_row_gpu = {
    .name = "gpu",
    .args = "[options] TRACE...",
    .summary = "a GPU trace's devices per step: busy and idle time and what the\n"
               "idle time waited on, communication under compute kernels, and\n"
               "kernel launch statistics",
    .about = "Per device of each GPU trace (an imported PyTorch profiler trace) and per kept\n"
             "step: the step's time, the time some device activity ran (busy: the union of\n"
             "its kernels, copies and fills on all streams), the rest (idle), the time of its\n"
             "communication kernels (NCCL, RCCL) and how much of it ran while a compute\n"
             "kernel ran too (overlap). A trace without steps is one step, from its first op\n"
             "or activity to its last.\n"
             "\n"
             "Where the trace holds its runtime calls (cudaLaunchKernel, cudaDeviceSynchronize...;\n"
             "imported by this fathom), the idle time splits into: between kernels (work the\n"
             "host launched has not started yet), host syncs (a host thread is inside a\n"
             "synchronizing call: cudaDeviceSynchronize, cudaStreamSynchronize, cudaMemcpy...)\n"
             "and waiting on the host (the rest: nothing launched). Launch statistics pair each\n"
             "activity with its runtime call: the delay from a call's begin to its first\n"
             "activity's start (median, p90, max), the calls' host time against the device time\n"
             "they launched, and the short kernels: those shorter than the call that launched\n"
             "them, which the host cannot keep up with. Older archives say n/a.\n",
    .options = "",
    .takes = ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = create,
    .print = print,
    .destroy = destroy,
};
