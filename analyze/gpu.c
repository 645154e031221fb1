/* gpu.c -- what a GPU trace's devices did in each kept step: busy and idle
 * time, and how much of the communication kernels' time ran under compute
 * kernels (device.h's windows; fathom-analyze(1), gpu). */
#include "analyze/analysis.h"
#include "analyze/device.h"
#include "analyze/out.h"
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
} gpu_device;

typedef struct gpu_trace {
    const analyze_profile *p;
    size_t n;
    gpu_device *d;
} gpu_trace;

typedef struct gpu_result {
    size_t n;
    gpu_trace *t;
} gpu_result;

static double share(uint64_t part, uint64_t whole) { return whole ? (double)part / (double)whole : 0.0; }

static void destroy(void *r)
{
    gpu_result *g = r;
    for (size_t i = 0; g && i < g->n; i++) {
        for (size_t k = 0; k < g->t[i].n; k++)
            base_free(g->t[i].d[k].w), base_free(g->t[i].d[k].num);
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
    if (!dev->w || !dev->num)
        return -1;
    for (size_t i = 0; !none && i < dev->n; i++) {
        dev->w[i].b = v[i].begin, dev->w[i].e = v[i].end;
        dev->num[i] = (uint32_t)v[i].ordinal;
    }
    if (analyze_devices_windows(p->devices, dev->name, dev->w, dev->n))
        return -1;
    for (size_t i = 0; i < dev->n; i++) {
        const analyze_device_window *x = &dev->w[i];
        dev->step_ns += x->e - x->b, dev->busy_ns += x->busy_ns;
        dev->comm_ns += x->comm_ns, dev->comm_overlap_ns += x->comm_overlap_ns;
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

static json_t *device_json(const gpu_device *d)
{
    json_t *steps = json_array();
    for (size_t i = 0; steps && i < d->n; i++) {
        const analyze_device_window *x = &d->w[i];
        json_array_append_new(steps,
                              json_pack("{s:I, s:I, s:I, s:I, s:I, s:I}", "step", (json_int_t)d->num[i], "ns",
                                        (json_int_t)(x->e - x->b), "busy_ns", (json_int_t)x->busy_ns, "idle_ns",
                                        (json_int_t)(x->e - x->b - x->busy_ns), "comm_ns", (json_int_t)x->comm_ns,
                                        "comm_overlap_ns", (json_int_t)x->comm_overlap_ns));
    }
    return json_pack("{s:s, s:I, s:I, s:I, s:I, s:I, s:f, s:o}", "device", d->name, "step_ns", (json_int_t)d->step_ns,
                     "busy_ns", (json_int_t)d->busy_ns, "idle_ns", (json_int_t)(d->step_ns - d->busy_ns), "comm_ns",
                     (json_int_t)d->comm_ns, "comm_overlap_ns", (json_int_t)d->comm_overlap_ns, "overlap_share",
                     share(d->comm_overlap_ns, d->comm_ns), "steps", steps);
}

static analyze_status print(FILE *f, const void *r, cli_format fmt, const analyze_options *o)
{
    (void)o;
    const gpu_result *g = r;
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
        fputs("trace,model,mode,device,step,ns,busy_ns,idle_ns,comm_ns,comm_overlap_ns\n", f);
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
                    fprintf(f, ",%u,%llu,%llu,%llu,%llu,%llu\n", d->num[s], (unsigned long long)(x->e - x->b),
                            (unsigned long long)x->busy_ns, (unsigned long long)(x->e - x->b - x->busy_ns),
                            (unsigned long long)x->comm_ns, (unsigned long long)x->comm_overlap_ns);
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
            fprintf(f, "%10s %11s %11s %11s %7s %11s %9s\n", "step", "time ms", "busy ms", "idle ms", "busy", "comm ms",
                    "overlap");
            for (size_t s = 0; s < d->n; s++) {
                const analyze_device_window *x = &d->w[s];
                uint64_t ns = x->e - x->b;
                fprintf(f, "%10u %11.3f %11.3f %11.3f %6.1f%% %11.3f %8.1f%%\n", d->num[s], (double)ns / 1e6,
                        (double)x->busy_ns / 1e6, (double)(ns - x->busy_ns) / 1e6, 100.0 * share(x->busy_ns, ns),
                        (double)x->comm_ns / 1e6, 100.0 * share(x->comm_overlap_ns, x->comm_ns));
            }
        }
    }
    return analyze_out_status(f, 0);
}

const analyze_analysis analyze_row_gpu = {
    .name = "gpu",
    .args = "[options] TRACE...",
    .summary = "a GPU trace's devices per step: busy and idle time, and the\n"
               "share of communication kernel time under compute kernels",
    .about = "Per device of each GPU trace (an imported PyTorch profiler trace) and per kept\n"
             "step: the step's time, the time some device activity ran (busy: the union of\n"
             "its kernels, copies and fills on all streams), the rest (idle), the time of its\n"
             "communication kernels (NCCL, RCCL) and how much of it ran while a compute\n"
             "kernel ran too (overlap). A trace without steps is one step, from its first op\n"
             "or activity to its last.\n",
    .options = "",
    .takes = ANALYZE_TAKES_WINDOW,
    .min_traces = 1,
    .create = create,
    .print = print,
    .destroy = destroy,
};
