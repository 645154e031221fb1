/* lifetimes.c -- buffer reuse at plan time (exec_graph_set_reuse): the
 * buffer of an intermediate holds another while the first is dead, as the
 * planners of TFLite and XLA lay tensors out by their lifetimes.
 *
 * After forwarding (forwarding.c) each storage group is one buffer. A
 * group is an intermediate when its tensors are activations, gradients or
 * workspace, none kept (exec_tensor_keep) or initialized at plan, and the
 * first node (in node order) using any of them writes it: its contents
 * never cross from one run of the graph to the next. It is live from each
 * write to the last read before the next write (a replayed program writes
 * the same tensors again at every step: one live range a step). In order
 * of first use, each intermediate takes a buffer none of whose ranges meet
 * its own: the smallest one as large as it, else the largest one (grown to
 * its size), else a new one. Its tensors then name that buffer's first
 * tensor as their storage. The executor orders nodes by storage
 * (executor.c): a node writing a buffer waits for the readers of what it
 * held before, so inter-op workers keep the ranges too (at the cost of
 * that order). */
#include "internal.h"

#include <stdlib.h>

typedef struct group {
    uint32_t root;             /* its first tensor */
    uint32_t first;            /* the node of its first use; UINT32_MAX: none */
    uint32_t b, e;             /* its open live range */
    uint32_t at, n;            /* its ranges in the sorted list */
    size_t bytes;              /* its largest tensor's, aligned */
    bool written_first, other; /* the first use writes it; not an intermediate */
} group;

typedef struct range {
    uint32_t group, b, e; /* nodes b to e, both in */
} range;

typedef struct buffer {
    uint32_t root;
    size_t bytes;
    range *r; /* its ranges, by begin */
    uint32_t n;
} buffer;

typedef struct plan {
    group *gr;
    range *r;
    size_t nr, cr;
} plan;

static int range_order(const void *a, const void *b)
{
    const range *x = a, *y = b;
    if (x->group != y->group)
        return x->group < y->group ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static const group *g_sort_groups;
static int by_first_use(const void *a, const void *b)
{
    const group *x = &g_sort_groups[*(const uint32_t *)a], *y = &g_sort_groups[*(const uint32_t *)b];
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->root < y->root ? -1 : x->root > y->root;
}

/* Group id used at node j: a write begins a range (the one open ends,
 * unless it was read by the same node), a read extends it. 0, or -1. */
static int use(plan *p, uint32_t id, uint32_t j, bool write)
{
    group *x = &p->gr[id];
    if (x->first == UINT32_MAX) {
        x->first = x->b = x->e = j, x->written_first = write;
        return 0;
    }
    if (write && x->e != j) {
        if (base_grow(&p->r, &p->cr, p->nr + 1, sizeof *p->r))
            return -1;
        p->r[p->nr++] = (range){ .group = id, .b = x->b, .e = x->e };
        x->b = j;
    }
    x->e = j;
    return 0;
}

/* Whether sorted ranges a[0..na) and b[0..nb) share a node. */
static bool meet(const range *a, uint32_t na, const range *b, uint32_t nb)
{
    for (uint32_t i = 0, k = 0; i < na && k < nb;) {
        if (a[i].e < b[k].b)
            i++;
        else if (b[k].e < a[i].b)
            k++;
        else
            return true;
    }
    return false;
}

/* Buffer f takes ranges a[0..na): merged in begin order. 0, or -1. */
static int take(buffer *f, const range *a, uint32_t na)
{
    range *m = base_malloc((size_t)(f->n + na) * sizeof *m);
    if (!m)
        return -1;
    uint32_t i = 0, k = 0, n = 0;
    while (i < f->n || k < na)
        m[n++] = k == na || (i < f->n && f->r[i].b < a[k].b) ? f->r[i++] : a[k++];
    base_free(f->r);
    f->r = m;
    f->n = n;
    return 0;
}

exec_status exec_plan_lifetimes(exec_graph *g, size_t (*aligned)(size_t))
{
    const uint32_t T = g->ntensors;
    plan p = { .gr = base_calloc(T ? T : 1, sizeof *p.gr) };
    uint32_t *order = base_malloc((T ? T : 1) * sizeof *order), *to = base_calloc(T ? T : 1, sizeof *to), nb = 0;
    buffer *buf = base_calloc(T ? T : 1, sizeof *buf);
    exec_status st = EXEC_OK;
    if (!p.gr || !order || !to || !buf)
        goto oom;
    for (uint32_t id = 1; id < T; id++)
        p.gr[id] = (group){ .root = id, .first = UINT32_MAX };
    for (uint32_t id = 1; id < T; id++) {
        const exec_tensor *t = &g->tensors[id];
        group *r = &p.gr[t->storage];
        size_t b = aligned(t->bytes);
        if (b > r->bytes)
            r->bytes = b;
        r->other |=
            (t->role != EXEC_ROLE_activation && t->role != EXEC_ROLE_gradient && t->role != EXEC_ROLE_workspace) ||
            t->kept || g->init[id];
    }
    /* a node's reads come before its writes: an op that updates a tensor
     * in place reads it first */
    for (uint32_t j = 0; j < g->nnodes; j++) {
        const exec_node *n = &g->nodes[j];
        for (int i = 0; i < n->nin; i++)
            if (use(&p, g->tensors[n->in[i]].storage, j, false))
                goto oom;
        for (int o = 0; o < n->nout; o++)
            if (use(&p, g->tensors[n->out[o]].storage, j, true))
                goto oom;
    }
    uint32_t ng = 0;
    for (uint32_t id = 1; id < T; id++) {
        group *x = &p.gr[id];
        if (g->tensors[id].storage != id || x->other || !x->written_first || x->first == UINT32_MAX)
            continue;
        if (base_grow(&p.r, &p.cr, p.nr + 1, sizeof *p.r))
            goto oom;
        p.r[p.nr++] = (range){ .group = id, .b = x->b, .e = x->e }; /* the last one */
        order[ng++] = id;
    }
    if (p.nr)
        qsort(p.r, p.nr, sizeof *p.r, range_order);
    for (size_t i = 0; i < p.nr; i++) {
        group *x = &p.gr[p.r[i].group];
        if (!x->n)
            x->at = (uint32_t)i;
        x->n++;
    }
    g_sort_groups = p.gr;
    qsort(order, ng, sizeof *order, by_first_use);
    for (uint32_t k = 0; k < ng; k++) {
        group *x = &p.gr[order[k]];
        const range *xr = p.r + x->at;
        uint32_t best = UINT32_MAX, big = UINT32_MAX;
        for (uint32_t i = 0; i < nb; i++) {
            if (meet(buf[i].r, buf[i].n, xr, x->n))
                continue;
            if (buf[i].bytes >= x->bytes && (best == UINT32_MAX || buf[i].bytes < buf[best].bytes))
                best = i;
            if (big == UINT32_MAX || buf[i].bytes > buf[big].bytes)
                big = i;
        }
        if (best == UINT32_MAX)
            best = big;
        if (best == UINT32_MAX) {
            best = nb++;
            buf[best].root = x->root;
        } else {
            to[x->root] = buf[best].root;
        }
        if (take(&buf[best], xr, x->n))
            goto oom;
        if (x->bytes > buf[best].bytes)
            buf[best].bytes = x->bytes;
    }
    for (uint32_t id = 1; id < T; id++) {
        exec_tensor *t = &g->tensors[id];
        if (to[t->storage])
            t->storage = to[t->storage];
    }
    goto end;
oom:
    st = exec_fail(EXEC_ERR_NOMEM, "plan: out of memory");
end:
    for (uint32_t i = 0; buf && i < nb; i++)
        base_free(buf[i].r);
    base_free(p.gr), base_free(p.r), base_free(order), base_free(to), base_free(buf);
    return st;
}

void exec_graph_set_reuse(exec_graph *g, bool on) { g->reuse = on; }
