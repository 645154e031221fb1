/* device.c -- a GPU trace's device activity (see device.h). */
#include "analyze/device.h"

#include "base/alloc.h"
#include "base/table.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const class_names[ANALYZE_DEVICE_NCLASS] = {
#define DEVICE_CLASS(id) #id,
#include "analyze/device_classes.def"
#undef DEVICE_CLASS
};
static const char *const class_labels[ANALYZE_DEVICE_NCLASS] = {
#define DEVICE_CLASS(id) ANALYZE_DEVICE_PREFIX #id,
#include "analyze/device_classes.def"
#undef DEVICE_CLASS
};
static const struct match {
    analyze_device_class cls;
    const char *text;
} matches[] = {
#define DEVICE_MATCH(id, text) { ANALYZE_DEVICE_##id, text },
#include "analyze/device_classes.def"
#undef DEVICE_MATCH
};

const char *analyze_device_class_name(int c) { return c >= 0 && c < ANALYZE_DEVICE_NCLASS ? class_names[c] : "?"; }
const char *analyze_device_class_label(int c) { return c >= 0 && c < ANALYZE_DEVICE_NCLASS ? class_labels[c] : "?"; }

analyze_device_class analyze_device_class_of(const char *name, const char *cat)
{
    if (cat && (!strcmp(cat, "gpu_memcpy") || !strcmp(cat, "Memcpy")))
        return ANALYZE_DEVICE_memcpy;
    if (cat && (!strcmp(cat, "gpu_memset") || !strcmp(cat, "Memset")))
        return ANALYZE_DEVICE_memset;
    for (size_t i = 0; name && i < sizeof matches / sizeof *matches; i++)
        if (strstr(name, matches[i].text))
            return matches[i].cls;
    return ANALYZE_DEVICE_other;
}

int analyze_device_class_parse(const char *label)
{
    if (!label || strncmp(label, ANALYZE_DEVICE_PREFIX, sizeof ANALYZE_DEVICE_PREFIX - 1) != 0)
        return -1;
    for (int c = 0; c < ANALYZE_DEVICE_NCLASS; c++)
        if (!strcmp(label, class_labels[c]))
            return c;
    return ANALYZE_DEVICE_other;
}

typedef struct span {
    uint64_t b, e;
    uint32_t k;
} span;

typedef struct stream {
    uint64_t tid;
    char device[48];
    span *v;
    size_t n, cap;
} stream;

/* A launch number's host op type and the activities it launched so far
 * (they may come before the op: each stream's records are emitted apart). */
typedef struct launch {
    uint64_t id; /* not 0 */
    int32_t op;  /* -1: no host op seen yet */
    uint64_t ns, count;
} launch;

struct analyze_devices {
    struct kern {
        char *name;
        int cls;
    } * k;
    size_t nk, capk;
    stream *s;
    size_t ns, caps;
    size_t last;                          /* the stream of the last activity */
    base_table l;                         /* launch by id */
    uint64_t nolaunch_ns, nolaunch_count; /* activities of launch number 0 */
};

analyze_devices *analyze_devices_create(void)
{
    analyze_devices *d = base_calloc(1, sizeof(analyze_devices));
    if (d)
        d->l = BASE_TABLE(launch, sizeof(uint64_t));
    return d;
}

void analyze_devices_destroy(analyze_devices *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->nk; i++)
        base_free(d->k[i].name);
    base_free(d->k);
    for (size_t i = 0; i < d->ns; i++)
        base_free(d->s[i].v);
    base_free(d->s);
    base_table_free(&d->l);
    base_free(d);
}

int analyze_devices_kernel(analyze_devices *d, const char *name, int cls)
{
    for (size_t i = d->nk; i-- > 0;)
        if (d->k[i].cls == cls && !strcmp(d->k[i].name, name))
            return (int)i;
    if (d->nk >= INT32_MAX || base_grow(&d->k, &d->capk, d->nk + 1, sizeof *d->k))
        return -1;
    char *c = base_strdup(name);
    if (!c)
        return -1;
    d->k[d->nk] = (struct kern){ c, cls };
    return (int)d->nk++;
}

static stream *stream_of(analyze_devices *d, uint64_t tid)
{
    if (d->ns && d->s[d->last].tid == tid)
        return &d->s[d->last];
    for (size_t i = 0; i < d->ns; i++)
        if (d->s[i].tid == tid)
            return &d->s[d->last = i];
    if (base_grow(&d->s, &d->caps, d->ns + 1, sizeof *d->s))
        return NULL;
    stream *s = &d->s[d->ns];
    memset(s, 0, sizeof *s);
    s->tid = tid;
    snprintf(s->device, sizeof s->device, "gpu");
    d->last = d->ns++;
    return s;
}

/* The slot of launch number id (not 0), added when new; NULL out of memory. */
static launch *launch_of(analyze_devices *d, uint64_t id)
{
    launch *l;
    base_table_status st = base_table_put(&d->l, &id, (void **)&l);
    if (st == BASE_TABLE_NOMEM)
        return NULL;
    if (st == BASE_TABLE_ADDED)
        l->op = -1;
    return l;
}

int analyze_devices_add(analyze_devices *d, uint64_t tid, int k, uint64_t b, uint64_t e, uint64_t launch_id)
{
    stream *s = stream_of(d, tid);
    if (!s || base_grow(&s->v, &s->cap, s->n + 1, sizeof *s->v))
        return -1;
    s->v[s->n++] = (span){ b, e >= b ? e : b, (uint32_t)k };
    uint64_t ns = e >= b ? e - b : 0;
    if (!launch_id) {
        d->nolaunch_ns += ns, d->nolaunch_count++;
        return 0;
    }
    launch *l = launch_of(d, launch_id);
    if (!l)
        return -1;
    l->ns += ns, l->count++;
    return 0;
}

int analyze_devices_launcher(analyze_devices *d, uint64_t launch_id, int op)
{
    launch *l = launch_id ? launch_of(d, launch_id) : NULL;
    if (launch_id && !l)
        return -1;
    if (l && l->op < 0)
        l->op = op;
    return 0;
}

void analyze_devices_by_op(const analyze_devices *d, size_t nops, uint64_t *ns, uint64_t *count, uint64_t *un_ns,
                           uint64_t *un_count)
{
    memset(ns, 0, nops * sizeof *ns);
    memset(count, 0, nops * sizeof *count);
    *un_ns = d ? d->nolaunch_ns : 0;
    *un_count = d ? d->nolaunch_count : 0;
    size_t pos = 0;
    for (const launch *l; d && (l = base_table_next(&d->l, &pos));) {
        if (l->op >= 0 && (size_t)l->op < nops) {
            ns[l->op] += l->ns, count[l->op] += l->count;
        } else {
            *un_ns += l->ns, *un_count += l->count;
        }
    }
}

int analyze_devices_any(const analyze_devices *d) { return d && (d->l.len > 0 || d->ns > 0); }

int analyze_devices_name_streams(analyze_devices *d, const char *map)
{
    for (const char *p = map; p && *p;) {
        char *end;
        unsigned long long tid = strtoull(p, &end, 10);
        const char *eq = end, *slash = eq && *eq == '=' ? strchr(eq, '/') : NULL;
        const char *next = strchr(p, ',');
        if (slash && (!next || slash < next)) {
            for (size_t i = 0; i < d->ns; i++)
                if (d->s[i].tid == tid) {
                    size_t n = (size_t)(slash - eq - 1);
                    if (n >= sizeof d->s[i].device)
                        n = sizeof d->s[i].device - 1;
                    memcpy(d->s[i].device, eq + 1, n);
                    d->s[i].device[n] = '\0';
                }
        }
        p = next ? next + 1 : NULL;
    }
    return 0;
}

static int by_begin(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int by_ns(const void *a, const void *b)
{
    const analyze_device_kernel *x = a, *y = b;
    if (x->ns != y->ns)
        return x->ns < y->ns ? 1 : -1;
    return strcmp(x->name, y->name);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const analyze_device *)a)->name, ((const analyze_device *)b)->name);
}

/* Device dev's summary from its streams. 0 or -1. */
static int summarize(const analyze_devices *d, analyze_device *dev)
{
    size_t n = 0;
    for (size_t i = 0; i < d->ns; i++)
        if (!strcmp(d->s[i].device, dev->name))
            n += d->s[i].n, dev->streams++;
    span *all = base_malloc((n ? n : 1) * sizeof *all);
    uint64_t *kns = base_calloc(d->nk ? d->nk : 1, sizeof *kns),
             *kcount = base_calloc(d->nk ? d->nk : 1, sizeof *kcount);
    int rc = -1;
    if (!all || !kns || !kcount)
        goto end;
    n = 0;
    for (size_t i = 0; i < d->ns; i++)
        if (!strcmp(d->s[i].device, dev->name)) {
            memcpy(all + n, d->s[i].v, d->s[i].n * sizeof *all);
            n += d->s[i].n;
        }
    qsort(all, n, sizeof *all, by_begin);
    uint64_t cb = 0, ce = 0, first = n ? all[0].b : 0, last = 0;
    for (size_t i = 0; i < n; i++) {
        const span *x = &all[i];
        uint64_t ns = x->e - x->b;
        int cls = d->k[x->k].cls;
        dev->count++;
        dev->class_ns[cls] += ns, dev->class_count[cls]++;
        if (cls != ANALYZE_DEVICE_memcpy && cls != ANALYZE_DEVICE_memset)
            dev->kernel_ns += ns;
        kns[x->k] += ns, kcount[x->k]++;
        if (x->e > last)
            last = x->e;
        if (i == 0 || x->b > ce) { /* a gap: the run before is done */
            dev->busy_ns += ce - cb;
            cb = x->b, ce = x->e;
        } else if (x->e > ce) {
            ce = x->e;
        }
    }
    dev->busy_ns += ce - cb;
    dev->span_ns = n ? last - first : 0;
    dev->idle_ns = dev->span_ns - dev->busy_ns;
    for (size_t k = 0; k < d->nk; k++)
        dev->nkernels += kcount[k] > 0;
    dev->kernels = base_calloc(dev->nkernels ? dev->nkernels : 1, sizeof *dev->kernels);
    if (!dev->kernels)
        goto end;
    size_t j = 0;
    for (size_t k = 0; k < d->nk; k++)
        if (kcount[k])
            dev->kernels[j++] = (analyze_device_kernel){ d->k[k].name, d->k[k].cls, kns[k], kcount[k] };
    qsort(dev->kernels, dev->nkernels, sizeof *dev->kernels, by_ns);
    rc = 0;
end:
    base_free(all), base_free(kns), base_free(kcount);
    return rc;
}

/* The union of spans v[0..n) (sorted by begin) into v itself: the number
 * of disjoint spans left, in time order. */
static size_t merge(span *v, size_t n)
{
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (m && v[i].b <= v[m - 1].e) {
            if (v[i].e > v[m - 1].e)
                v[m - 1].e = v[i].e;
        } else {
            v[m++] = v[i];
        }
    }
    return m;
}

/* The time of [b, e) that the disjoint sorted spans u[0..n) cover. */
static uint64_t covered(const span *u, size_t n, uint64_t b, uint64_t e)
{
    size_t lo = 0, hi = n; /* the first span ending after b */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (u[mid].e <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t t = 0;
    for (size_t i = lo; i < n && u[i].b < e; i++) {
        uint64_t x = u[i].b > b ? u[i].b : b, y = u[i].e < e ? u[i].e : e;
        t += y > x ? y - x : 0;
    }
    return t;
}

int analyze_devices_windows(const analyze_devices *d, const char *name, analyze_device_window *w, size_t n)
{
    size_t na = 0;
    for (size_t i = 0; d && i < d->ns; i++)
        if (!strcmp(d->s[i].device, name))
            na += d->s[i].n;
    span *all = base_malloc((na ? na : 1) * sizeof *all), *comp = base_malloc((na ? na : 1) * sizeof *comp),
         *comm = base_malloc((na ? na : 1) * sizeof *comm);
    int rc = -1;
    if (!all || !comp || !comm)
        goto end;
    size_t nall = 0, ncomp = 0, ncomm = 0;
    for (size_t i = 0; d && i < d->ns; i++) {
        if (strcmp(d->s[i].device, name))
            continue;
        for (size_t j = 0; j < d->s[i].n; j++) {
            const span *x = &d->s[i].v[j];
            int cls = d->k[x->k].cls;
            all[nall++] = *x;
            if (cls == ANALYZE_DEVICE_communication)
                comm[ncomm++] = *x;
            else if (cls != ANALYZE_DEVICE_memcpy && cls != ANALYZE_DEVICE_memset)
                comp[ncomp++] = *x;
        }
    }
    qsort(all, nall, sizeof *all, by_begin);
    qsort(comp, ncomp, sizeof *comp, by_begin);
    uint64_t first = nall ? all[0].b : 0, last = 0;
    for (size_t i = 0; i < nall; i++)
        last = all[i].e > last ? all[i].e : last;
    nall = merge(all, nall);
    ncomp = merge(comp, ncomp);
    for (size_t k = 0; k < n; k++) {
        analyze_device_window *x = &w[k];
        if (!x->b && !x->e)
            x->b = first, x->e = last;
        x->busy_ns = covered(all, nall, x->b, x->e);
        x->comm_ns = x->comm_overlap_ns = 0;
        for (size_t i = 0; i < ncomm; i++) {
            uint64_t b = comm[i].b > x->b ? comm[i].b : x->b, e = comm[i].e < x->e ? comm[i].e : x->e;
            if (e <= b)
                continue;
            x->comm_ns += e - b;
            x->comm_overlap_ns += covered(comp, ncomp, b, e);
        }
    }
    rc = 0;
end:
    base_free(all), base_free(comp), base_free(comm);
    return rc;
}

analyze_device *analyze_devices_summary(const analyze_devices *d, size_t *n)
{
    *n = 0;
    if (!d || !d->ns)
        return NULL;
    analyze_device *v = base_calloc(d->ns, sizeof *v);
    if (!v) {
        *n = 1;
        return NULL;
    }
    for (size_t i = 0; i < d->ns; i++) {
        size_t j = 0;
        while (j < *n && strcmp(v[j].name, d->s[i].device))
            j++;
        if (j == *n)
            snprintf(v[(*n)++].name, sizeof v->name, "%s", d->s[i].device);
    }
    qsort(v, *n, sizeof *v, by_name);
    for (size_t j = 0; j < *n; j++)
        if (summarize(d, &v[j])) {
            analyze_devices_summary_free(v, *n);
            *n = 1;
            return NULL;
        }
    return v;
}

void analyze_devices_summary_free(analyze_device *v, size_t n)
{
    for (size_t i = 0; v && i < n; i++)
        base_free(v[i].kernels);
    base_free(v);
}

struct analyze_device_union {
    size_t n;
    span *v; /* disjoint, in time order (k unused) */
};

analyze_device_union *analyze_devices_union(const analyze_devices *d, int cls)
{
    analyze_device_union *u = base_calloc(1, sizeof *u);
    size_t n = 0;
    for (size_t i = 0; d && i < d->ns; i++)
        n += d->s[i].n;
    if (!u || !(u->v = base_malloc((n ? n : 1) * sizeof *u->v))) {
        base_free(u);
        return NULL;
    }
    for (size_t i = 0; d && i < d->ns; i++)
        for (size_t j = 0; j < d->s[i].n; j++)
            if (cls < 0 || d->k[d->s[i].v[j].k].cls == cls)
                u->v[u->n++] = d->s[i].v[j];
    qsort(u->v, u->n, sizeof *u->v, by_begin);
    u->n = merge(u->v, u->n);
    return u;
}

void analyze_device_union_destroy(analyze_device_union *u)
{
    if (u)
        base_free(u->v);
    base_free(u);
}

uint64_t analyze_device_union_within(const analyze_device_union *u, uint64_t b, uint64_t e)
{
    return covered(u->v, u->n, b, e);
}

int analyze_device_union_range(const analyze_device_union *u, uint64_t *b, uint64_t *e)
{
    if (!u->n)
        return 0;
    *b = u->v[0].b, *e = u->v[u->n - 1].e;
    return 1;
}
