/* import_et.c -- PyTorch execution traces into the importer's in-memory
 * trace (import_et.h).
 *
 * Execution traces (`ExecutionGraphObserver`, `ExecutionTraceObserver`,
 * Chakra ET JSON): `{"nodes": [...]}`, each node with its parent, op name,
 * input and output tensor ids, shapes and types.  The outermost op nodes of
 * each subtree are the ops, in node id order; a node `ProfilerStep#N` is a
 * step.  An execution trace records no start times: the ops' spans follow
 * one another in node order, each as long as the node's `dur` where it has
 * one, else empty and 1 us apart (a warning says so).  Each op call is one
 * proto (its tensors are its own); the trace's tensor ids are kept. */
#include "analyze/import_et.h"
#include "analyze/status.h"
#include "base/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Ancestors looked at above a node: real traces nest a few tens deep; a
 * longer chain (or a cycle of parents) stops here. */
#define ET_MAX_DEPTH 256

typedef struct et_node {
    int64_t id, parent;
    int64_t dur_ns; /* -1: none */
    uint32_t proto; /* ops */
    int32_t step;   /* ProfilerStep#N: N; -1 */
    uint8_t kind;   /* IMP_REC_OP, _BWD, _UPD, or 255: other */
    int64_t tid;
} et_node;

struct imp_et {
    et_node *n;
    size_t count, cap;
    imp_strtab *ids; /* ET tensor id -> our tensor id */
};

/* Our tensor for an ET tensor reference [tensor_id, storage_id, offset,
 * numel, elem_size, device] of shape a and dtype dt.  The framework reuses a
 * freed tensor's id: an id seen again with another dtype or shape is
 * another tensor. */
static int64_t et_tensor(imp_trace *t, imp_et *s, const json_t *ref, int dt, const analyze_import_arg *a)
{
    if (!json_is_array(ref) || json_array_size(ref) < 2 || !json_is_integer(json_array_get(ref, 0)))
        return -2;
    char key[256];
    int n = snprintf(key, sizeof key, "%lld|%d|", (long long)json_integer_value(json_array_get(ref, 0)), dt);
    for (int i = 0; i < a->ndim && n < (int)sizeof key - 24; i++)
        n += snprintf(key + n, sizeof key - (size_t)n, "%lld,", (long long)a->d[i]);
    return imp_keyed_tensor(t, s->ids, key, (size_t)n, dt, a);
}

/* The tensor arguments of one side (inputs or outputs) of an ET node. */
static int et_args(imp_trace *t, imp_et *s, const json_t *node, const char *side, analyze_import_arg *a, int64_t *ids,
                   size_t *n, int *es, int *absurd)
{
    char k1[32], k2[32], k3[32];
    snprintf(k1, sizeof k1, "%ss", side);
    snprintf(k2, sizeof k2, "%s_shapes", side);
    snprintf(k3, sizeof k3, "%s_types", side);
    const json_t *refs = json_object_get(node, k1), *shapes = json_object_get(node, k2),
                 *types = json_object_get(node, k3);
    size_t m = json_array_size(shapes);
    *n = 0;
    for (size_t i = 0; i < m && *n < 64; i++) {
        const char *ty = json_string_value(json_array_get(types, i));
        if (!ty || !starts(ty, "Tensor("))
            continue;
        analyze_import_arg *x = &a[*n];
        int r = imp_arg_of(json_array_get(shapes, i), x);
        if (r == -2) {
            *absurd = 1;
            continue;
        }
        if (r < 0)
            continue;
        int dt = imp_dtype_of(ty);
        if (!*es)
            *es = imp_dtype_size(dt);
        int64_t id = et_tensor(t, s, json_array_get(refs, i), dt, x);
        if (id == -1)
            return -1;
        ids[*n] = id == -2 ? -1 : id;
        (*n)++;
    }
    return 0;
}

int imp_et_node(imp_trace *t, imp_et *s, const json_t *node, uint64_t idx)
{
    if (!json_is_object(node)) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: node %llu is not an object: not an execution trace", t->path,
                     (unsigned long long)idx);
        return -1;
    }
    t->sum.events++;
    const char *name = json_string_value(json_object_get(node, "name"));
    const json_t *id = json_object_get(node, "id"), *parent = json_object_get(node, "parent");
    if (!name || !json_is_integer(id)) {
        t->no_name++;
        return 0;
    }
    if (imp_grow(&s->n, &s->cap, s->count, sizeof *s->n)) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
        return -1;
    }
    et_node *n = &s->n[s->count];
    memset(n, 0, sizeof *n);
    n->id = json_integer_value(id);
    n->parent = json_is_integer(parent) ? json_integer_value(parent) : -1;
    n->step = -1;
    n->kind = 255;
    n->tid = json_is_integer(json_object_get(node, "tid")) ? json_integer_value(json_object_get(node, "tid")) : 0;
    const json_t *dur = json_object_get(node, "dur");
    n->dur_ns = dur ? imp_us_to_ns(dur) : -1;
    if (dur && n->dur_ns < 0)
        t->bad_time++;
    if (starts(name, "ProfilerStep#")) {
        char *end;
        unsigned long v = strtoul(name + 13, &end, 10);
        if (end != name + 13 && v <= INT32_MAX)
            n->step = (int32_t)v;
        else
            t->bad_step++;
    } else if (starts(name, "autograd::engine::evaluate_function")) {
        n->kind = IMP_REC_BWD;
    } else if (starts(name, "Optimizer.step#") || starts(name, "Optimizer.zero_grad#")) {
        n->kind = IMP_REC_UPD;
    } else if (imp_is_op_name(name)) {
        analyze_import_arg in[64], out[64];
        int64_t iid[64], oid[64];
        size_t nin = 0, nout = 0;
        int es = 0, absurd = 0;
        if (et_args(t, s, node, "input", in, iid, &nin, &es, &absurd) ||
            et_args(t, s, node, "output", out, oid, &nout, &es, &absurd)) {
            analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
            return -1;
        }
        if (absurd)
            t->bad_shape++;
        char key[64];
        int kl = snprintf(key, sizeof key, "et%zu", s->count);
        int added;
        int64_t pk = imp_intern(t->protokeys, key, (size_t)kl, &added);
        analyze_import_scalar sc[64];
        const json_t *vals = json_object_get(node, "inputs"), *types = json_object_get(node, "input_types");
        size_t nsc = json_array_size(vals) < 64 ? json_array_size(vals) : 64;
        for (size_t i = 0; i < nsc; i++)
            imp_scalar_of_json(json_array_get(vals, i), json_string_value(json_array_get(types, i)), &sc[i]);
        int64_t p = pk < 0 ? -1 : imp_add_proto(t, name, -1, in, iid, nin, out, oid, nout, sc, nsc, es ? es : 4);
        if (p < 0 || p != pk) {
            analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
            return -1;
        }
        n->kind = IMP_REC_OP;
        n->proto = (uint32_t)p;
    }
    s->count++;
    return 0;
}

static int by_id(const void *a, const void *b)
{
    const et_node *x = a, *y = b;
    return x->id < y->id ? -1 : x->id > y->id;
}

static et_node *et_find(imp_et *s, int64_t id)
{
    if (!s->count)
        return NULL;
    et_node key = { .id = id };
    return bsearch(&key, s->n, s->count, sizeof *s->n, by_id);
}

/* The ET nodes into records: each op whose ancestors hold no op, in node id
 * order (the order the observer saw them start). */
int imp_et_finish(imp_trace *t, imp_et *s)
{
    if (s->count)
        qsort(s->n, s->count, sizeof *s->n, by_id);
    uint64_t now = 0, untimed = 0;
    int64_t cur_step = -1;
    uint64_t step_b = 0;
    json_t *pid = json_integer(0);
    for (size_t i = 0; i < s->count; i++) {
        et_node *n = &s->n[i];
        int inner = 0, bwd = 0, upd = 0;
        int32_t step = n->step;
        int depth = 0;
        for (et_node *p = et_find(s, n->parent); p && depth < ET_MAX_DEPTH; p = et_find(s, p->parent), depth++) {
            if (p->kind == IMP_REC_OP)
                inner = 1;
            bwd |= p->kind == IMP_REC_BWD;
            upd |= p->kind == IMP_REC_UPD;
            if (p->step >= 0 && step < 0)
                step = p->step;
            if (p->id == n->id)
                break; /* a cycle */
        }
        if (n->kind != IMP_REC_OP || inner)
            continue;
        if (step != cur_step) { /* steps are contiguous runs of ops in id order */
            if (cur_step >= 0 && imp_push_step(t, step_b, now, (uint32_t)cur_step))
                goto oom;
            cur_step = step;
            step_b = now;
        }
        uint64_t d = n->dur_ns >= 0 ? (uint64_t)n->dur_ns : 0;
        untimed += n->dur_ns < 0;
        json_t *tid = json_integer(n->tid);
        int64_t track = tid ? imp_track_of(t, pid, tid, 0) : -1;
        json_decref(tid);
        int64_t node = imp_node_of(t, n->proto, upd ? IMP_UPDATE : bwd ? IMP_BACKWARD : IMP_FORWARD);
        if (track < 0 || node < 0 || imp_add_rec(t, now, now + d, (uint32_t)track, (uint32_t)node, IMP_REC_KEPT))
            goto oom;
        now += d ? d : 1000;
    }
    if (cur_step >= 0 && imp_push_step(t, step_b, now, (uint32_t)cur_step))
        goto oom;
    json_decref(pid);
    t->untimed = untimed;
    return 0;
oom:
    json_decref(pid);
    analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
    return -1;
}

imp_et *imp_et_create(void)
{
    imp_et *s = exec_calloc(1, sizeof *s);
    if (s && !(s->ids = imp_strtab_create()))
        exec_free(s), s = NULL;
    return s;
}

void imp_et_destroy(imp_et *s)
{
    if (!s)
        return;
    exec_free(s->n);
    imp_strtab_destroy(s->ids);
    exec_free(s);
}
