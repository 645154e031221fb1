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
#include "analyze/analyze_status.h"
#include "base/alloc.h"
#include "base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* Ancestors looked at above a node: real traces nest a few tens deep; a
 * longer chain stops here (a cycle is refused before). */
#define ET_MAX_DEPTH 256

typedef struct et_node {
    int64_t id, parent;
    int64_t dur_ns;  /* -1: none */
    int64_t rf_id;   /* the record function id a profiler trace may share; -1 */
    uint32_t proto;  /* ops */
    int32_t step;    /* ProfilerStep#N: N; -1 */
    uint8_t kind;    /* IMP_REC_OP, _BWD, _UPD, or 255: other */
    uint8_t cycled;  /* in a cycle of parents: skipped */
    uint8_t phase;   /* an outermost op's */
    int32_t in_step; /* an outermost op's step (its own or an ancestor's); -1 */
    int64_t link_b;  /* linked: the profiler op's begin (ns from the first matched); -1 */
    uint64_t dev_ns; /* linked: its kernels' device time; 0: none */
    int dev_cls;     /* their class (the longest kernel's) */
    int64_t tid;
} et_node;

/* The node layouts: ExecutionGraphObserver and ExecutionTraceObserver up to
 * 1.0.1 write flat nodes (`parent`, `inputs`, `input_shapes`,
 * `input_types`, `tid` ...); the Chakra layout (1.0.2-chakra.0.0.4 and on)
 * writes `ctrl_deps` for the parent, `inputs` as {values, shapes, types}
 * and the rest as `attrs` [{name, type, value}]. */
enum { ET_FLAT, ET_CHAKRA, ET_LAYOUTS };

/* Tensor arguments kept of one side of a node (a list counts each). */
#define ET_MAX_ARGS 1024

struct imp_et {
    et_node *n;
    size_t count, cap;
    imp_strtab *ids;      /* ET tensor (id, storage, offset, dtype, shape) -> our tensor id */
    imp_strtab *last;     /* ET tensor (id, storage) -> its last key's tensor, for refs without a shape */
    int64_t *last_tensor; /* by id of `last` */
    size_t nlast, clast;
    imp_strtab *storages; /* ET storage (id, device) -> its extent in bytes */
    uint64_t *extent;     /* by id of `storages` */
    size_t nstor, cstor;
    uint64_t layout[ET_LAYOUTS];                          /* nodes of each layout */
    uint64_t views;                                       /* tensors on a storage an earlier tensor holds */
    uint64_t derived;                                     /* tensor refs without a shape, shaped from an earlier ref */
    uint64_t cycled;                                      /* nodes in a cycle of parents */
    uint64_t scopes;                                      /* op nodes read as scopes (et_scopes) */
    char schema[64];                                      /* the document's "schema", "" if none */
    analyze_import_arg in[ET_MAX_ARGS], out[ET_MAX_ARGS]; /* one node's tensor arguments */
    int64_t iid[ET_MAX_ARGS], oid[ET_MAX_ARGS];
};

/* The schema versions whose layout this version knows. */
static const char *const known_schemas[] = {
    "1.0.0", "1.0.1", "1.0.2-chakra.0.0.4", "1.0.3-chakra.0.0.4", "1.1.0-chakra.0.0.4", "1.1.1-chakra.0.0.4",
};

void imp_et_schema(imp_et *s, const json_t *v)
{
    const char *str = json_string_value(v);
    snprintf(s->schema, sizeof s->schema, "%s", str ? str : json_is_integer(v) ? "(a number)" : "?");
    base_scrub(s->schema);
}

/* Member key of a node: itself, or (Chakra layout) the value of the attr
 * of that name. */
static const json_t *et_member(const json_t *node, const char *key)
{
    const json_t *v = json_object_get(node, key);
    if (v)
        return v;
    const json_t *attrs = json_object_get(node, "attrs");
    for (size_t i = 0; i < json_array_size(attrs); i++) {
        const json_t *a = json_array_get(attrs, i);
        const char *name = json_string_value(json_object_get(a, "name"));
        if (name && strcmp(name, key) == 0)
            return json_object_get(a, "value");
    }
    return NULL;
}

static int64_t et_int(const json_t *v, int64_t dflt) { return json_is_integer(v) ? json_integer_value(v) : dflt; }

/* The extent in bytes a tensor reference [tensor_id, storage_id, offset,
 * numel, elem_size, device] covers of its storage: (offset + numel) *
 * elem_size; 0 if not all given or absurd. */
static uint64_t ref_extent(const json_t *ref)
{
    int64_t off = et_int(json_array_get(ref, 2), -1), numel = et_int(json_array_get(ref, 3), -1),
            es = et_int(json_array_get(ref, 4), -1);
    if (off < 0 || numel < 0 || es <= 0 || es > 16 || off > (INT64_C(1) << 40) || numel > (INT64_C(1) << 40))
        return 0;
    return (uint64_t)(off + numel) * (uint64_t)es;
}

/* Our tensor for an ET tensor reference of shape a (NULL: not recorded,
 * take the shape the same tensor had before) and dtype dt.  A reference is
 * the tuple [tensor_id, storage_id, offset, numel, elem_size, device] (from
 * 1.0.1 on) or the bare tensor id (ExecutionGraphObserver before).  An
 * in-place op names its input's tuple again: the same tensor.  A view names
 * a new tensor id on a storage an earlier tensor holds: a tensor of its
 * own, whose bytes are only what it adds to the storage's extent (views
 * cost no memory).  The framework reuses a freed tensor's id: an id seen
 * again with another dtype or shape is another tensor.  -2: not a tensor
 * reference (or no shape known), -1: out of memory. */
static int64_t et_tensor(imp_trace *t, imp_et *s, const json_t *ref, int dt, const analyze_import_arg *a)
{
    const json_t *tid = json_is_array(ref) ? json_array_get(ref, 0) : ref;
    if (!json_is_integer(tid))
        return -2;
    long long sid = json_is_array(ref) ? (long long)et_int(json_array_get(ref, 1), -1) : -1;
    const char *dev = json_is_array(ref) ? json_string_value(json_array_get(ref, 5)) : NULL;
    char lk[64];
    int ln = snprintf(lk, sizeof lk, "%lld|%lld", (long long)json_integer_value(tid), sid);
    int added;
    int64_t li = imp_intern(s->last, lk, (size_t)ln, &added);
    if (li < 0)
        return -1;
    if (added) {
        if (base_grow(&s->last_tensor, &s->clast, s->nlast + 1, sizeof *s->last_tensor))
            return -1;
        s->last_tensor[s->nlast++] = -2;
    }
    if (!a) { /* no shape recorded: the tensor as last seen */
        s->derived += s->last_tensor[li] >= 0;
        return s->last_tensor[li];
    }
    char key[256];
    int n = snprintf(key, sizeof key, "%s|%d|%lld|", lk, dt,
                     json_is_array(ref) ? (long long)et_int(json_array_get(ref, 2), 0) : 0LL);
    for (int i = 0; i < a->ndim && n < (int)sizeof key - 24; i++)
        n += snprintf(key + n, sizeof key - (size_t)n, "%lld,", (long long)a->d[i]);
    size_t before = t->ntensors;
    int64_t id = imp_keyed_tensor(t, s->ids, key, (size_t)n, dt, a);
    if (id < 0)
        return id;
    s->last_tensor[li] = id;
    if (t->ntensors == before || sid < 0)
        return id;
    /* a new tensor: what it adds to its storage */
    char sk[96];
    int sn = snprintf(sk, sizeof sk, "%lld|%.60s", sid, dev ? dev : "");
    int64_t si = imp_intern(s->storages, sk, (size_t)sn, &added);
    if (si < 0)
        return -1;
    uint64_t ext = ref_extent(ref);
    if (added) {
        if (base_grow(&s->extent, &s->cstor, s->nstor + 1, sizeof *s->extent))
            return -1;
        s->extent[s->nstor++] = ext;
        return id;
    }
    imp_tensor *x = &t->tensors[id];
    x->bytes = ext > s->extent[si] ? ext - s->extent[si] : 0;
    if (ext > s->extent[si])
        s->extent[si] = ext;
    s->views++;
    return id;
}

/* One tensor argument (ref, its shape, its type) into a[*n], ids[*n]. */
static int et_arg(imp_trace *t, imp_et *s, const json_t *ref, const json_t *shape, const char *ty,
                  analyze_import_arg *a, int64_t *ids, size_t *n, int *es, int *absurd)
{
    analyze_import_arg *x = &a[*n];
    int r = imp_arg_of(shape, x);
    if (r == -2) {
        *absurd = 1;
        return 0;
    }
    int dt = imp_dtype_of(ty);
    int64_t id = et_tensor(t, s, ref, dt, r < 0 ? NULL : x);
    if (id == -1)
        return -1;
    if (r < 0) { /* no shape: the tensor's, where an earlier node gave it */
        if (id < 0)
            return 0;
        const imp_tensor *k = &t->tensors[id];
        memset(x, 0, sizeof *x);
        x->ndim = k->ndim;
        x->numel = 1;
        for (int d = 0; d < k->ndim; d++)
            x->d[d] = k->shape[d], x->numel *= k->shape[d];
    }
    if (!*es)
        *es = imp_dtype_size(dt);
    ids[*n] = id == -2 ? -1 : id;
    (*n)++;
    return 0;
}

/* The tensor arguments of one side of an ET node: refs, shapes and types
 * (arrays of one element per argument). A list of tensors
 * (GenericList[Tensor(float),...], a _foreach_ op's) gives one argument
 * per tensor. */
static int et_args(imp_trace *t, imp_et *s, const json_t *refs, const json_t *shapes, const json_t *types,
                   analyze_import_arg *a, int64_t *ids, size_t *n, int *es, int *absurd)
{
    size_t m = json_array_size(types);
    *n = 0;
    for (size_t i = 0; i < m && *n < ET_MAX_ARGS; i++) {
        const char *ty = json_string_value(json_array_get(types, i));
        const json_t *ref = json_array_get(refs, i), *shape = json_array_get(shapes, i);
        if (ty && starts(ty, "Tensor(")) {
            if (et_arg(t, s, ref, shape, ty, a, ids, n, es, absurd))
                return -1;
        } else if (ty && starts(ty, "GenericList[Tensor(") && json_is_array(ref)) {
            for (size_t k = 0; k < json_array_size(ref) && *n < ET_MAX_ARGS; k++)
                if (et_arg(t, s, json_array_get(ref, k), json_array_get(shape, k), ty + 12, a, ids, n, es, absurd))
                    return -1;
        }
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
    const json_t *ins = json_object_get(node, "inputs"), *outs = json_object_get(node, "outputs");
    int chakra = json_is_object(ins) || json_object_get(node, "ctrl_deps") || json_object_get(node, "attrs");
    if (!parent) { /* Chakra: the parent is the control dependency */
        parent = json_object_get(node, "ctrl_deps");
        if (json_is_array(parent))
            parent = json_array_get(parent, 0);
    }
    if (!name || !json_is_integer(id)) {
        t->no_name++;
        return 0;
    }
    if (base_grow(&s->n, &s->cap, s->count + 1, sizeof *s->n)) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
        return -1;
    }
    et_node *n = &s->n[s->count];
    memset(n, 0, sizeof *n);
    n->id = json_integer_value(id);
    n->parent = json_is_integer(parent) ? json_integer_value(parent) : -1;
    n->step = -1;
    n->kind = 255;
    n->tid = et_int(et_member(node, "tid"), 0);
    n->rf_id = et_int(et_member(node, "rf_id"), -1);
    n->link_b = -1;
    s->layout[chakra ? ET_CHAKRA : ET_FLAT]++;
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
        analyze_import_arg *in = s->in, *out = s->out;
        int64_t *iid = s->iid, *oid = s->oid;
        size_t nin = 0, nout = 0;
        int es = 0, absurd = 0;
        const json_t *ivals = chakra ? json_object_get(ins, "values") : ins,
                     *ishapes = chakra ? json_object_get(ins, "shapes") : json_object_get(node, "input_shapes"),
                     *itypes = chakra ? json_object_get(ins, "types") : json_object_get(node, "input_types");
        const json_t *ovals = chakra ? json_object_get(outs, "values") : outs,
                     *oshapes = chakra ? json_object_get(outs, "shapes") : json_object_get(node, "output_shapes"),
                     *otypes = chakra ? json_object_get(outs, "types") : json_object_get(node, "output_types");
        if (et_args(t, s, ivals, ishapes, itypes, in, iid, &nin, &es, &absurd) ||
            et_args(t, s, ovals, oshapes, otypes, out, oid, &nout, &es, &absurd)) {
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
        size_t nsc = json_array_size(ivals) < 64 ? json_array_size(ivals) : 64;
        for (size_t i = 0; i < nsc; i++)
            imp_scalar_of_json(json_array_get(ivals, i), json_string_value(json_array_get(itypes, i)), &sc[i]);
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
/* Refuses a trace whose node ids repeat (0, or -1 with the message); the
 * nodes of a cycle of parents (each its own ancestor) are made roots and
 * skipped, counted in s->cycled. */
static int et_check(imp_trace *t, imp_et *s)
{
    for (size_t i = 1; i < s->count; i++)
        if (s->n[i].id == s->n[i - 1].id) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: node id %lld appears twice: not one execution trace", t->path,
                         (long long)s->n[i].id);
            return -1;
        }
    /* each node's walk towards its root, marking: 1 on this walk, 2 done */
    uint8_t *mark = base_calloc(s->count ? s->count : 1, 1);
    if (!mark) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
        return -1;
    }
#define UP(p) ((p)->parent == (p)->id ? NULL : et_find(s, (p)->parent)) /* a node its own parent: a root */
    for (size_t i = 0; i < s->count; i++) {
        et_node *p = &s->n[i];
        while (p && !mark[p - s->n]) {
            mark[p - s->n] = 1;
            p = UP(p);
        }
        et_node *cyc = p && mark[p - s->n] == 1 ? p : NULL; /* back on this walk: p is in a cycle */
        for (p = &s->n[i]; p && mark[p - s->n] == 1; p = UP(p))
            mark[p - s->n] = 2;
        for (et_node *q = cyc; q;) { /* its nodes made roots */
            et_node *up = UP(q);
            q->cycled = 1;
            q->parent = q->id;
            s->cycled++;
            q = up == cyc ? NULL : up;
        }
    }
#undef UP
    base_free(mark);
    return 0;
}

/* The notes of a read: the schema when it is not a known one, what views
 * and shapeless references came to. */
static void et_notes(imp_trace *t, const imp_et *s)
{
    size_t n = strlen(t->notes);
    int known = 0;
    for (size_t i = 0; i < sizeof known_schemas / sizeof *known_schemas; i++)
        known |= strcmp(s->schema, known_schemas[i]) == 0;
    const char *layout = s->layout[ET_CHAKRA] >= s->layout[ET_FLAT] ? "Chakra (attrs, ctrl_deps)" : "flat";
    if (!known && n < sizeof t->notes)
        n += (size_t)snprintf(t->notes + n, sizeof t->notes - n,
                              "%s: execution trace schema %s%s%s is not one this version knows (%s to %s): read by "
                              "its layout, %s\n",
                              t->path, s->schema[0] ? "\"" : "", s->schema[0] ? s->schema : "(none)",
                              s->schema[0] ? "\"" : "", known_schemas[0],
                              known_schemas[sizeof known_schemas / sizeof *known_schemas - 1], layout);
    if (s->cycled && n < sizeof t->notes)
        n += (size_t)snprintf(t->notes + n, sizeof t->notes - n,
                              "%s: %llu nodes are their own ancestors (a cycle of parents or ctrl_deps): skipped\n",
                              t->path, (unsigned long long)s->cycled);
}

/* ---- linking with a profiler trace of the same run ----------------------
 * As Chakra's trace_link: the profiler trace's outermost host ops (each
 * thread's, merged in time order) and the execution trace's outermost op
 * nodes (in node id order: the order they began) are the same calls where
 * their names agree in sequence. The alignment that matches the most ops
 * wins (of those, the one skipping the fewest profiler ops): from each
 * profiler op named as the first ET op, a greedy walk that matches equal
 * names and, where they differ, looks a few profiler ops ahead for the ET
 * op's name before giving the ET op up. A matched node
 * takes the profiler op's begin and its time: the device time of the
 * kernels it launched (Kineto's External id; a GPU run) or else its host
 * time. */

#define LINK_AHEAD 16

typedef struct link_op {
    const char *name;
    uint64_t b, ns;      /* host op */
    imp_device_time dev; /* its kernels */
} link_op;

static int link_by_begin(const void *a, const void *b)
{
    const link_op *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

static const char *prof_name(const imp_trace *p, uint32_t node)
{
    return imp_str(p->names, p->protos[p->nodes[node].proto].name);
}

/* The outermost host ops of profiler trace p, by begin, with their
 * kernels' device time. NULL when out of memory. */
static link_op *link_ops(const imp_trace *p, size_t *n)
{
    link_op *ops = base_calloc(p->nrecs ? p->nrecs : 1, sizeof *ops);
    imp_device_time *dev = base_calloc(p->nrecs ? p->nrecs : 1, sizeof *dev); /* per kept record */
    *n = 0;
    if (!ops || !dev || imp_kernel_times(p, dev)) {
        base_free(ops), base_free(dev);
        return NULL;
    }
    for (size_t i = 0; i < p->nrecs; i++) {
        const imp_rec *r = &p->recs[i];
        if (r->kind != IMP_REC_KEPT || p->tracks[r->track].gpu)
            continue;
        ops[(*n)++] = (link_op){ .name = prof_name(p, r->ref), .b = r->b, .ns = r->e - r->b, .dev = dev[i] };
    }
    base_free(dev);
    qsort(ops, *n, sizeof *ops, link_by_begin);
    return ops;
}

/* Greedy walk of et[0..ne) against ops from j0; match[i]: the op of et
 * node i or SIZE_MAX; *span: profiler ops from the first matched to the
 * last. The number matched. */
static size_t link_walk(const char *const *et, size_t ne, const link_op *ops, size_t nops, size_t j0, size_t *match,
                        size_t *span)
{
    size_t got = 0, j = j0;
    for (size_t i = 0; i < ne; i++) {
        if (match)
            match[i] = SIZE_MAX;
        for (size_t k = j; k < nops && k < j + LINK_AHEAD; k++)
            if (strcmp(ops[k].name, et[i]) == 0) {
                if (match)
                    match[i] = k;
                got++;
                j = k + 1;
                break;
            }
    }
    *span = j - j0;
    return got;
}

/* Links the outermost op nodes sel[0..nsel) of s with t->profile: their
 * link_b, dur_ns (host time) and device time. 0, or -1 with the message
 * (nothing matches, or the profile cannot be read). */
static int et_link(imp_trace *t, imp_et *s, const size_t *sel, size_t nsel)
{
    imp_trace *p = imp_trace_read(t->profile, NULL);
    if (!p) {
        analyze_fail(ANALYZE_ERR_INPUT, "--profile %s", base_errmsg());
        return -1;
    }
    int rc = -1;
    size_t nops = 0, *match = NULL, best = 0, best_j = 0, best_span = SIZE_MAX, span;
    link_op *ops = NULL;
    const char **et = base_calloc(nsel ? nsel : 1, sizeof *et);
    if (strcmp(p->sum.format, "pytorch-profiler") != 0) {
        analyze_fail(ANALYZE_ERR_INPUT, "--profile %s: an execution trace, not a profiler trace", t->profile);
        goto end;
    }
    if (!et || !(ops = link_ops(p, &nops)) || !(match = base_calloc(nsel ? nsel : 1, sizeof *match))) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
        goto end;
    }
    for (size_t i = 0; i < nsel; i++)
        et[i] = imp_str(t->names, t->protos[s->n[sel[i]].proto].name);
    for (size_t j = 0; nsel && j < nops; j++)
        if (strcmp(ops[j].name, et[0]) == 0) {
            size_t got = link_walk(et, nsel, ops, nops, j, NULL, &span);
            if (got > best || (got == best && span < best_span)) /* as many matched, fewer skipped */
                best = got, best_j = j, best_span = span;
        }
    if (!best) {
        analyze_fail(ANALYZE_ERR_INPUT,
                     "--profile %s: none of its %zu host ops matches the execution trace's %zu ops in name and "
                     "order: not a profile of the same run",
                     t->profile, nops, nsel);
        goto end;
    }
    link_walk(et, nsel, ops, nops, best_j, match, &span);
    uint64_t base = ops[best_j].b, dev_ns = 0;
    size_t with = 0;
    for (size_t i = 0; i < nsel; i++)
        if (match[i] != SIZE_MAX) {
            et_node *n = &s->n[sel[i]];
            const link_op *o = &ops[match[i]];
            n->link_b = (int64_t)(o->b - base);
            n->dur_ns = (int64_t)o->ns;
            n->dev_ns = o->dev.ns;
            n->dev_cls = o->dev.cls;
            with += o->dev.kernels > 0;
            dev_ns += o->dev.ns;
        }
    size_t len = strlen(t->notes);
    const char *base_name = strrchr(t->profile, '/');
    len += (size_t)snprintf(t->notes + len, sizeof t->notes - len,
                            "%s: linked with %s: %zu of %zu ops matched by name and order; their times are the host "
                            "op times measured there%s%s\n",
                            t->path, base_name ? base_name + 1 : t->profile, best, nsel, p->sum.device[0] ? " on " : "",
                            p->sum.device);
    if (with && len < sizeof t->notes)
        snprintf(t->notes + len, sizeof t->notes - len,
                 "%s: %zu of the matched ops launched kernels (by correlation id): their device time, %.3f ms, "
                 "is on a device track\n",
                 t->path, with, (double)dev_ns / 1e6);
    t->sum.linked = best;
    snprintf(t->sum.device, sizeof t->sum.device, "%s", p->sum.device);
    t->sum.devices = p->sum.devices;
    rc = 0;
end:
    base_free(et), base_free(ops), base_free(match);
    imp_trace_destroy(p);
    return rc;
}

/* Op nodes of a name the op table lacks whose children hold ops are
 * scopes (record_function's, DDP's reducer: `torch::distributed::reducer::
 * mul_out` around an aten::mul), not ops: their ops are the calls. The
 * number of them. */
static uint64_t et_scopes(imp_trace *t, imp_et *s)
{
    uint64_t n = 0;
    uint8_t *kids = base_calloc(s->count ? s->count : 1, 1);
    if (!kids)
        return 0;
    for (size_t i = 0; i < s->count; i++) {
        et_node *p = s->n[i].parent == s->n[i].id ? NULL : et_find(s, s->n[i].parent);
        if (s->n[i].kind == IMP_REC_OP && p)
            kids[p - s->n] = 1;
    }
    for (size_t i = 0; i < s->count; i++)
        if (kids[i] && s->n[i].kind == IMP_REC_OP &&
            !analyze_import_lookup(imp_str(t->names, t->protos[s->n[i].proto].name))) {
            s->n[i].kind = 255;
            n++;
        }
    base_free(kids);
    return n;
}

/* The outermost ops sel[0..nsel) (in id order) with no step among their
 * ancestors, between two ops of one step: that step's. The autograd
 * engine's thread is a root of its own in an execution trace, its ops
 * under no ProfilerStep node, though they ran (and their ids were given)
 * within the step whose forward and optimizer ops surround them: a
 * training step's backward pass would be outside every step. */
static void et_orphans(imp_et *s, const size_t *sel, size_t nsel)
{
    for (size_t k = 0; k < nsel;) {
        if (s->n[sel[k]].in_step >= 0) {
            k++;
            continue;
        }
        size_t end = k;
        while (end < nsel && s->n[sel[end]].in_step < 0)
            end++;
        int32_t before = k ? s->n[sel[k - 1]].in_step : -1, after = end < nsel ? s->n[sel[end]].in_step : -1;
        for (size_t i = k; i < end && before >= 0 && before == after; i++)
            s->n[sel[i]].in_step = before;
        k = end;
    }
}

/* The device time of linked op n beginning at b: a record of its own on
 * the device track (*gpu, made on first use), from b, named as the op, of
 * its kernels' class and its phase. Its begin is the op's, not the
 * kernels': a replay attributes it to the op's step. 0, or -1. */
static int et_device_rec(imp_trace *t, const et_node *n, uint64_t b, json_t *pid, int64_t *gpu)
{
    if (*gpu < 0)
        *gpu = imp_track_of(t, pid, pid, 1);
    int64_t proto = imp_device_proto(t, imp_str(t->names, t->protos[n->proto].name), n->dev_cls);
    int64_t node = proto < 0 ? -1 : imp_node_of(t, (uint32_t)proto, n->phase);
    return *gpu < 0 || node < 0 ? -1 : imp_add_rec(t, b, b + n->dev_ns, (uint32_t)*gpu, (uint32_t)node, IMP_REC_KEPT);
}

int imp_et_finish(imp_trace *t, imp_et *s)
{
    if (s->count)
        qsort(s->n, s->count, sizeof *s->n, by_id);
    if (et_check(t, s))
        return -1;
    et_notes(t, s);
    t->sum.views = s->views;
    s->scopes = et_scopes(t, s);
    /* the outermost op nodes, their phase and step */
    size_t *sel = base_calloc(s->count ? s->count : 1, sizeof *sel), nsel = 0;
    if (!sel)
        goto oom_early;
    for (size_t i = 0; i < s->count; i++) {
        et_node *n = &s->n[i];
        int inner = 0, bwd = 0, upd = 0;
        int32_t step = n->step;
        int depth = 0;
        for (et_node *p = n->parent == n->id ? NULL : et_find(s, n->parent); p && depth < ET_MAX_DEPTH;
             p = p->parent == p->id ? NULL : et_find(s, p->parent), depth++) {
            if (p->kind == IMP_REC_OP)
                inner = 1;
            bwd |= p->kind == IMP_REC_BWD;
            upd |= p->kind == IMP_REC_UPD;
            if (p->step >= 0 && step < 0)
                step = p->step;
        }
        if (n->kind != IMP_REC_OP || inner || n->cycled)
            continue;
        n->phase = (uint8_t)(upd ? IMP_UPDATE : bwd ? IMP_BACKWARD : IMP_FORWARD);
        n->in_step = step;
        sel[nsel++] = i;
    }
    et_orphans(s, sel, nsel);
    if (t->profile && et_link(t, s, sel, nsel)) {
        base_free(sel);
        return -1;
    }
    uint64_t now = 0, untimed = 0;
    int64_t cur_step = -1, gpu = -1;
    uint64_t step_b = 0;
    json_t *pid = json_integer(0);
    for (size_t k = 0; k < nsel; k++) {
        et_node *n = &s->n[sel[k]];
        /* linked: the profiler's begin, never before the op before */
        uint64_t b = n->link_b >= 0 && (uint64_t)n->link_b > now ? (uint64_t)n->link_b : now;
        if (n->in_step != cur_step) { /* steps are contiguous runs of ops in id order */
            if (cur_step >= 0 && imp_push_step(t, step_b, now, (uint32_t)cur_step))
                goto oom;
            cur_step = n->in_step;
            step_b = b;
        }
        uint64_t d = n->dur_ns >= 0 ? (uint64_t)n->dur_ns : 0;
        untimed += n->dur_ns < 0;
        json_t *tid = json_integer(n->tid);
        int64_t track = tid ? imp_track_of(t, pid, tid, 0) : -1;
        json_decref(tid);
        int64_t node = imp_node_of(t, n->proto, n->phase);
        if (track < 0 || node < 0 || imp_add_rec(t, b, b + d, (uint32_t)track, (uint32_t)node, IMP_REC_KEPT))
            goto oom;
        if (n->dev_ns && et_device_rec(t, n, b, pid, &gpu))
            goto oom;
        now = b + (d ? d : 1000);
    }
    if (cur_step >= 0 && imp_push_step(t, step_b, now, (uint32_t)cur_step))
        goto oom;
    json_decref(pid);
    base_free(sel);
    t->untimed = untimed;
    return 0;
oom:
    json_decref(pid);
    base_free(sel);
oom_early:
    analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
    return -1;
}

imp_et *imp_et_create(void)
{
    imp_et *s = base_calloc(1, sizeof *s);
    if (s &&
        (!(s->ids = imp_strtab_create()) || !(s->last = imp_strtab_create()) || !(s->storages = imp_strtab_create()))) {
        imp_et_destroy(s);
        s = NULL;
    }
    return s;
}

void imp_et_destroy(imp_et *s)
{
    if (!s)
        return;
    base_free(s->n);
    imp_strtab_destroy(s->ids);
    imp_strtab_destroy(s->last);
    imp_strtab_destroy(s->storages);
    base_free(s->last_tensor);
    base_free(s->extent);
    base_free(s);
}
