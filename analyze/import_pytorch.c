/* import_pytorch.c -- PyTorch traces into the importer's in-memory trace
 * (import_trace.h).
 *
 * Two inputs, told apart by their top-level shape:
 *
 *  - profiler traces (Chrome-trace JSON): Kineto's `{"traceEvents": [...]}`
 *    or the autograd profiler's bare array of events.  Complete events
 *    (`ph` "X") only.  An op is a CPU span whose name is a namespaced op
 *    (`aten::addmm`, `torchvision::nms`; not `autograd::...`); only the
 *    outermost op of a nest on its thread counts, the ops inside it are its
 *    parts.  `ProfilerStep#N` spans are the steps.  Spans named
 *    `autograd::engine::evaluate_function: ...` make the ops inside them
 *    backward ops, `Optimizer.step#...` and `Optimizer.zero_grad#...` spans
 *    update ops (class optimization).  GPU kernels, memcpys and memsets
 *    (cat `kernel`, `gpu_memcpy`, `gpu_memset`) are ops of their own track
 *    (one per device stream), named by the kernel, classed by its name,
 *    in the phase of the CPU op that launched it (the same "External id").
 *
 *  - execution traces (`ExecutionGraphObserver`, `ExecutionTraceObserver`,
 *    Chakra ET JSON): `{"nodes": [...]}`, each node with its parent, op
 *    name, input and output tensor ids, shapes and types.  The outermost
 *    op nodes of each subtree are the ops, in node id order; a node
 *    `ProfilerStep#N` is a step.  An execution trace records no start
 *    times: the ops' spans follow one another in node order, each as long
 *    as the node's `dur` where it has one, else empty and 1 us apart (a
 *    warning says so).
 *
 * Nodes: in a profiler trace one node_def per distinct (op name, input
 * shapes, types and scalar arguments, phase); in an execution trace one
 * per op call (its tensors are its own).  Tensors: an execution trace's
 * tensor ids are kept; a profiler trace records no tensor identities, so
 * each distinct (dtype, shape) of an op input becomes one tensor.
 *
 * Hostile input: every shape dimension is checked (0 <= d < 2^31, at most
 * ANALYZE_IMPORT_MAX_DIMS, numel < 2^40), every time (finite, >= 0, under
 * 2^63 ns); spans failing the checks are dropped and counted in one
 * warning each. */
#define _GNU_SOURCE
#include "analyze/analyze_status.h"
#include "analyze/device.h"
#include "analyze/import_json.h"
#include "analyze/import_scan.h"
#include "analyze/import_trace.h"
#include "analyze/import_et.h"
#include "base/alloc.h"
#include "base/error.h"
#include "base/table.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const analyze_import_dtype_names[IMP_DTYPE_COUNT] = {
    "float32", "int32", "float64", "float16", "bfloat16", "int64", "int16", "int8", "uint8", "bool", "other",
};
const char *const analyze_import_phase_names[IMP_PHASE_COUNT] = { "forward", "backward", "update" };
const char *const analyze_import_role_names[IMP_ROLE_COUNT] = {
    "input", "weight", "activation", "gradient", "optimizer", "workspace",
};
static const uint8_t dtype_size[IMP_DTYPE_COUNT] = { 4, 4, 8, 2, 2, 8, 2, 1, 1, 1, 4 };

#define MAX_NUMEL (UINT64_C(1) << 40)
#define IO_BUF (256 << 10) /* the buffer of a pass over the records */
#define MAX_LABEL 200      /* an op label longer than this (a templated kernel name) is cut */

/* ---- interned strings --------------------------------------------------- */

struct imp_strtab {
    char **str;
    uint32_t n, cap; /* strings */
    base_table ids;  /* struct strid by the string's bytes */
};

/* A string's id: its key points at its copy in str[]. */
struct strid {
    base_table_bytes key;
    uint32_t id;
};

static imp_strtab *strtab_create(void)
{
    imp_strtab *s = base_calloc(1, sizeof(imp_strtab));
    if (s)
        s->ids = BASE_TABLE(struct strid, 0);
    return s;
}

static void strtab_destroy(imp_strtab *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        base_free(s->str[i]);
    base_free(s->str);
    base_table_free(&s->ids);
    base_free(s);
}

static int grow_strs(imp_strtab *s)
{
    uint32_t nc = s->cap ? s->cap * 2 : 64;
    char **ns = nc > s->cap ? base_realloc(s->str, nc * sizeof *ns) : NULL;
    if (!ns)
        return -1;
    s->str = ns;
    s->cap = nc;
    return 0;
}

/* The id of s[0..len); *added says whether it is new.  -1: out of memory. */
static int64_t intern(imp_strtab *s, const char *str, size_t len, int *added)
{
    *added = 0;
    struct strid *e;
    base_table_status st = base_table_put(&s->ids, &(base_table_bytes){ str, len }, (void **)&e);
    if (st == BASE_TABLE_FOUND)
        return e->id;
    if (st == BASE_TABLE_NOMEM)
        return -1;
    char *copy = NULL;
    if (s->n == UINT32_MAX || (s->n == s->cap && grow_strs(s)) || !(copy = base_malloc(len + 1))) {
        base_table_del(&s->ids, e);
        return -1;
    }
    memcpy(copy, str, len), copy[len] = '\0';
    s->str[s->n] = copy;
    e->key.p = copy;
    e->id = s->n;
    *added = 1;
    return s->n++;
}

const char *imp_str(const imp_strtab *s, uint32_t id) { return id < s->n ? s->str[id] : "?"; }
uint32_t imp_strcount(const imp_strtab *s) { return s->n; }

void imp_trace_destroy(imp_trace *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nprotos; i++)
        base_free(t->protos[i].in), base_free(t->protos[i].out);
    for (size_t i = 0; i < t->ntracks; i++)
        base_free(t->tracks[i].procname);
    base_free(t->protos), base_free(t->nodes), base_free(t->tensors), base_free(t->tracks), base_free(t->steps);
    imp_spill_release(&t->recspill), imp_spill_release(&t->cpu_spill), imp_spill_release(&t->kern_spill);
    imp_spill_release(&t->rt_spill), imp_spill_release(&t->launch_spill);
    base_free(t->track_at), base_free(t->recw.buf);
    strtab_destroy(t->names), strtab_destroy(t->protokeys), strtab_destroy(t->nodekeys);
    strtab_destroy(t->trackkeys), strtab_destroy(t->tensorkeys);
    base_free(t->path), base_free(t->key);
    base_free(t);
}

/* ---- shapes, dtypes, tensors -------------------------------------------- */

static int dtype_of(const char *s)
{
    if (!s)
        return -1;
    if (strncmp(s, "Tensor(", 7) == 0) /* execution traces: Tensor(float) */
        s += 7;
    static const struct {
        const char *name;
        int dt;
    } map[] = {
        { "float", IMP_F32 },          { "double", IMP_F64 },       { "c10::Half", IMP_F16 }, { "Half", IMP_F16 },
        { "c10::BFloat16", IMP_BF16 }, { "BFloat16", IMP_BF16 },    { "long int", IMP_I64 },  { "long", IMP_I64 },
        { "int64_t", IMP_I64 },        { "int", IMP_I32 },          { "short int", IMP_I16 }, { "short", IMP_I16 },
        { "signed char", IMP_I8 },     { "unsigned char", IMP_U8 }, { "bool", IMP_BOOL },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].name);
        if (strncmp(s, map[i].name, n) == 0 && (s[n] == '\0' || s[n] == ')'))
            return map[i].dt;
    }
    return -1;
}

/* A JSON shape ([d0, d1, ...]) into a; -1 if it is not one, -2 if absurd. */
static int shape_of(const json_t *dims, analyze_import_arg *a)
{
    if (!json_is_array(dims))
        return -1;
    size_t n = json_array_size(dims);
    if (n > ANALYZE_IMPORT_MAX_DIMS)
        return -2;
    a->ndim = (int)n;
    a->numel = 1;
    a->is_list = 0;
    for (size_t i = 0; i < n; i++) {
        const json_t *d = json_array_get(dims, i);
        if (!json_is_integer(d))
            return json_is_array(d) ? -1 : -2;
        json_int_t v = json_integer_value(d);
        if (v < 0 || v > INT32_MAX)
            return -2;
        a->d[i] = v;
        a->numel *= (uint64_t)v;
        if (a->numel > MAX_NUMEL)
            return -2;
    }
    return 0;
}

/* An argument: a tensor's dims, or a list of tensors' ([[..], [..]]). */
static int arg_of(const json_t *dims, analyze_import_arg *a)
{
    memset(a, 0, sizeof *a);
    int r = shape_of(dims, a);
    if (r != -1)
        return r;
    if (!json_is_array(dims) || !json_array_size(dims))
        return -1;
    uint64_t total = 0;
    for (size_t i = 0; i < json_array_size(dims); i++) {
        analyze_import_arg e;
        memset(&e, 0, sizeof e);
        int er = shape_of(json_array_get(dims, i), &e);
        if (er)
            return er == -2 ? -2 : -1;
        if (i == 0)
            *a = e;
        total += e.numel;
        if (total > MAX_NUMEL)
            return -2;
    }
    a->is_list = 1;
    a->numel = total;
    return 0;
}

/* The tensor named key in keys: found, or made of dtype dt and shape a. */
static int64_t keyed_tensor(imp_trace *t, imp_strtab *keys, const char *key, size_t n, int dt,
                            const analyze_import_arg *a)
{
    int added;
    int64_t id = intern(keys, key, n, &added);
    if (id < 0 || !added)
        return id;
    if (base_grow(&t->tensors, &t->ctensors, t->ntensors + 1, sizeof *t->tensors))
        return -1;
    imp_tensor *x = &t->tensors[t->ntensors++];
    memset(x, 0, sizeof *x);
    x->dtype = (uint8_t)(dt < 0 ? IMP_DTYPE_OTHER : dt);
    x->role = IMP_ROLE_ACTIVATION;
    x->ndim = (uint8_t)a->ndim;
    for (int i = 0; i < a->ndim; i++)
        x->shape[i] = (uint32_t)a->d[i];
    x->bytes = a->numel * dtype_size[x->dtype];
    return id;
}

/* The tensor of (dtype, shape) of a profiler trace: one per distinct pair. */
static int64_t shape_tensor(imp_trace *t, int dt, const analyze_import_arg *a)
{
    char key[256];
    int n = snprintf(key, sizeof key, "%d|", dt);
    for (int i = 0; i < a->ndim && n < (int)sizeof key - 24; i++)
        n += snprintf(key + n, sizeof key - (size_t)n, "%lld,", (long long)a->d[i]);
    return keyed_tensor(t, t->tensorkeys, key, (size_t)n, dt, a);
}

/* ---- protos, nodes, tracks ---------------------------------------------- */

/* The label of an op name: at most MAX_LABEL bytes, control bytes as '?'
 * (a label is one line of every table that prints it). */
static int64_t name_id(imp_trace *t, const char *name)
{
    char label[MAX_LABEL + 1];
    snprintf(label, sizeof label, "%s", name);
    base_scrub(label);
    size_t len = strlen(label);
    int added;
    return intern(t->names, label, len, &added);
}

/* A convolution's output from its input x[N,C,H,W], filter w[OC,C/g,KH,KW]
 * and attrs (stride_h, stride_w, pad_h, pad_w); 0 if they do not give one. */
static int conv_out(const analyze_import_arg *x, const analyze_import_arg *w, const int64_t *a, analyze_import_arg *o)
{
    if (x->ndim != 4 || w->ndim != 4 || x->is_list || w->is_list)
        return 0;
    int64_t h = (x->d[2] + 2 * a[2] - w->d[2]) / a[0] + 1, wd = (x->d[3] + 2 * a[3] - w->d[3]) / a[1] + 1;
    if (h <= 0 || wd <= 0)
        return 0;
    memset(o, 0, sizeof *o);
    o->ndim = 4;
    o->d[0] = x->d[0], o->d[1] = w->d[0], o->d[2] = h, o->d[3] = wd;
    o->numel = (uint64_t)(x->d[0] * w->d[0]) * (uint64_t)(h * wd);
    return 1;
}

/* A new proto for (name, args); in: the arguments by position, in_id
 * their tensor ids (-1: not a tensor); sc[nsc]: the arguments as integers
 * (the source of the attrs). */
static int64_t add_proto(imp_trace *t, const char *name, int cls, const analyze_import_arg *in, const int64_t *in_id,
                         size_t nin, const analyze_import_arg *out, const int64_t *out_id, size_t nout,
                         const analyze_import_scalar *sc, size_t nsc, int es)
{
    int64_t nm = name_id(t, name);
    if (nm < 0 || base_grow(&t->protos, &t->cprotos, t->nprotos + 1, sizeof *t->protos))
        return -1;
    imp_proto *p = &t->protos[t->nprotos];
    memset(p, 0, sizeof *p);
    p->name = (uint32_t)nm;
    const analyze_import_op *op = cls < 0 ? analyze_import_lookup(name) : NULL;
    p->cls = (uint8_t)(cls >= 0 ? cls : op ? (int)op->cls : ANALYZE_IMPORT_OTHER);
    if (op)
        p->nattrs = (uint8_t)analyze_import_attrs_of(op->attrs, sc, nsc, p->attrs);
    analyze_import_arg conv;
    if (op && op->cost == ANALYZE_IMPORT_COST_CONV && !nout && op->attrs == ANALYZE_IMPORT_ATTRS_CONV &&
        p->nattrs == 4 && nin >= 2 && conv_out(&in[0], &in[1], p->attrs, &conv))
        out = &conv, nout = 1, out_id = NULL; /* the output's shape, not a tensor of the trace */
    if (op)
        analyze_import_cost_of(op->cost, in, nin, out, nout, (uint32_t)es, &p->flops, &p->bytes);
    if (!out_id)
        nout = 0;
    p->in = base_calloc(nin ? nin : 1, sizeof *p->in);
    p->out = base_calloc(nout ? nout : 1, sizeof *p->out);
    if (!p->in || !p->out)
        return base_free(p->in), base_free(p->out), -1;
    for (size_t i = 0; i < nin; i++)
        if (in_id[i] >= 0)
            p->in[p->nin++] = (uint32_t)in_id[i];
    for (size_t i = 0; i < nout; i++)
        if (out_id[i] >= 0)
            p->out[p->nout++] = (uint32_t)out_id[i];
    return (int64_t)t->nprotos++;
}

static int64_t track_lookup(imp_trace *t, const json_t *pid, const json_t *tid, int gpu);

static int64_t track_of(imp_trace *t, const json_t *pid, const json_t *tid, int gpu)
{
    /* consecutive events are mostly of one thread: the last one answers */
    if (json_is_integer(pid) && json_is_integer(tid) && t->last_track >= 0 && t->last_gpu == gpu &&
        t->last_pid == json_integer_value(pid) && t->last_tid == json_integer_value(tid))
        return t->last_track;
    int64_t id = track_lookup(t, pid, tid, gpu);
    if (id >= 0 && json_is_integer(pid) && json_is_integer(tid)) {
        t->last_track = id;
        t->last_gpu = gpu;
        t->last_pid = json_integer_value(pid);
        t->last_tid = json_integer_value(tid);
    }
    return id;
}

static int64_t track_lookup(imp_trace *t, const json_t *pid, const json_t *tid, int gpu)
{
    char key[160], pk[64], tk[64];
    if (json_is_integer(pid))
        snprintf(pk, sizeof pk, "%lld", (long long)json_integer_value(pid));
    else
        snprintf(pk, sizeof pk, "%.60s", json_is_string(pid) ? json_string_value(pid) : "?");
    if (json_is_integer(tid))
        snprintf(tk, sizeof tk, "%lld", (long long)json_integer_value(tid));
    else
        snprintf(tk, sizeof tk, "%.60s", json_is_string(tid) ? json_string_value(tid) : "?");
    int n = snprintf(key, sizeof key, "%d|%s|%s", gpu, pk, tk);
    int added;
    int64_t id = intern(t->trackkeys, key, (size_t)n, &added);
    if (id < 0 || !added)
        return id;
    if (t->ntracks >= IMP_MAX_TRACKS || base_grow(&t->tracks, &t->ctracks, t->ntracks + 1, sizeof *t->tracks))
        return -1;
    imp_track *k = &t->tracks[t->ntracks++];
    memset(k, 0, sizeof *k);
    k->gpu = gpu;
    k->vpid = json_is_integer(pid) ? json_integer_value(pid) : 0;
    k->vtid = json_is_integer(tid) && !gpu ? json_integer_value(tid) : -1; /* -1: given one at the end */
    char name[160];
    if (gpu)
        snprintf(name, sizeof name, "gpu %s stream %s", pk, tk);
    else
        snprintf(name, sizeof name, "pytorch");
    if (!(k->procname = base_strdup(name)))
        return -1;
    return id;
}

static int add_rec(imp_trace *t, uint64_t b, uint64_t e, uint32_t track, uint32_t ref, int kind)
{
    imp_rec r = { .b = b, .e = e, .track = track & (IMP_MAX_TRACKS - 1), .kind = (uint32_t)kind, .ref = ref };
    if (imp_spill_put(&t->recw, &r, sizeof r))
        return -1;
    t->nrecs++;
    return 0;
}

/* Appends l to a launch array (s, its elements *arr, *n of them). */
static int add_launch(imp_spill *s, imp_launch **arr, size_t *n, imp_launch l)
{
    if (imp_spill_reserve(s, (*n + 1) * sizeof l))
        return -1;
    *arr = s->p;
    (*arr)[(*n)++] = l;
    imp_spill_touch(s, sizeof l);
    return 0;
}

static int push_step(imp_trace *t, uint64_t b, uint64_t e, uint32_t num)
{
    if (base_grow(&t->steps, &t->csteps, t->nsteps + 1, sizeof *t->steps))
        return -1;
    t->steps[t->nsteps++] = (imp_step){ .b = b, .e = e, .num = num };
    return 0;
}

/* A step from a `ProfilerStep#N` span. */
static int add_step(imp_trace *t, uint64_t b, uint64_t e, const char *name)
{
    char *end;
    unsigned long n = strtoul(name + strlen("ProfilerStep#"), &end, 10);
    if (end == name + strlen("ProfilerStep#") || n > UINT32_MAX) {
        t->bad_step++;
        return 0;
    }
    return push_step(t, b, e, (uint32_t)n);
}

/* ---- profiler traces ---------------------------------------------------- */

static int starts(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

/* A namespaced operator name: `ns::op`, no blanks or control bytes. */
static int is_op_name(const char *n)
{
    for (const unsigned char *p = (const unsigned char *)n; *p; p++)
        if (*p <= ' ' || *p == 0x7f)
            return 0;
    const char *c = strstr(n, "::");
    return c && c != n && !starts(n, "autograd::") && !starts(n, "torch::autograd::") && !starts(n, "profiler::");
}

/* Microseconds (a JSON number) to ns; -1 if not a usable time. */
static int64_t us_to_ns(const json_t *v)
{
    if (!json_is_number(v))
        return -1;
    double x = json_number_value(v) * 1000.0;
    if (!(x >= 0 && x < 9.2e18))
        return -1;
    return (int64_t)llround(x);
}

/* A Kineto "Concrete Inputs" string ("1", "[1, 1]", "[]", "", "True") as
 * integers (a boolean as 1 or 0). */
static void scalar_of_text(const char *s, analyze_import_scalar *sc)
{
    sc->n = -1;
    if (!s)
        return;
    if (strcmp(s, "True") == 0 || strcmp(s, "False") == 0) {
        sc->n = 1;
        sc->v[0] = *s == 'T';
        return;
    }
    int list = *s == '[';
    const char *p = s + list;
    int n = 0;
    for (;;) {
        while (*p == ' ')
            p++;
        if (list && *p == ']' && n == 0) {
            sc->n = 0;
            return;
        }
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            return;
        if (n < 4)
            sc->v[n] = v;
        n++;
        p = end;
        while (*p == ' ')
            p++;
        if (list && *p == ',') {
            p++;
            continue;
        }
        if ((list && *p == ']' && p[1] == '\0') || (!list && *p == '\0'))
            break;
        return;
    }
    sc->n = n < 4 ? n : 4;
}

/* An execution trace's argument value (by its type: Int, GenericList[Int...])
 * as integers. */
static void scalar_of_json(const json_t *v, const char *type, analyze_import_scalar *sc)
{
    sc->n = -1;
    if (!type)
        return;
    if (strcmp(type, "Int") == 0 && json_is_integer(v)) {
        sc->n = 1;
        sc->v[0] = json_integer_value(v);
    } else if (strcmp(type, "Bool") == 0 && json_is_boolean(v)) {
        sc->n = 1;
        sc->v[0] = json_is_true(v);
    } else if (starts(type, "GenericList[Int") && json_is_array(v)) {
        size_t n = json_array_size(v);
        for (size_t i = 0; i < n && i < 4; i++) {
            if (!json_is_integer(json_array_get(v, i)))
                return;
            sc->v[i] = json_integer_value(json_array_get(v, i));
        }
        sc->n = n < 4 ? (int)n : 4;
    } else if (strcmp(type, "GenericList[]") == 0 && json_is_array(v) && !json_array_size(v)) {
        sc->n = 0;
    }
}

/* A growing key string. */
typedef struct keybuf {
    char *s;
    size_t len, cap;
    int oom;
} keybuf;

static void key_put(keybuf *k, const char *p, size_t n)
{
    if (k->oom)
        return;
    if (k->len + n + 1 > k->cap) {
        size_t nc = k->cap ? k->cap : 256;
        while (nc < k->len + n + 1)
            nc *= 2;
        char *ns = base_realloc(k->s, nc);
        if (!ns) {
            k->oom = 1;
            return;
        }
        k->s = ns;
        k->cap = nc;
    }
    memcpy(k->s + k->len, p, n);
    k->len += n;
    k->s[k->len] = '\0';
}

/* The compact text of a JSON value of arrays, integers and strings (the
 * shapes and types of an op's arguments), without printf: this runs once
 * per op event. */
static void key_int(keybuf *k, int64_t x)
{
    char d[24], *p = d + sizeof d;
    uint64_t u = x < 0 ? (uint64_t)0 - (uint64_t)x : (uint64_t)x;
    do
        *--p = (char)('0' + u % 10);
    while (u /= 10);
    if (x < 0)
        *--p = '-';
    key_put(k, p, (size_t)(d + sizeof d - p));
}

static void key_json(keybuf *k, const json_t *v, int depth)
{
    if (json_is_integer(v)) {
        key_int(k, json_integer_value(v));
    } else if (json_is_string(v)) {
        key_put(k, "\"", 1);
        key_put(k, json_string_value(v), json_string_length(v));
        key_put(k, "\"", 1);
    } else if (json_is_array(v) && depth < 8) {
        key_put(k, "[", 1);
        for (size_t i = 0; i < json_array_size(v); i++) {
            if (i)
                key_put(k, ",", 1);
            key_json(k, json_array_get(v, i), depth + 1);
        }
        key_put(k, "]", 1);
    } else {
        key_put(k, "?", 1);
    }
}

static int64_t proto_made(imp_trace *t, int64_t id, const char *name, const json_t *args);

/* The proto of a profiler op event: name + "Input Dims" + "Input type". */
static int64_t profiler_proto(imp_trace *t, const char *name, const json_t *args)
{
    const json_t *dims = json_object_get(args, "Input Dims"), *types = json_object_get(args, "Input type");
    const json_t *concrete = json_object_get(args, "Concrete Inputs");
    keybuf key = { 0 };
    int64_t r = -1;
    key_put(&key, name, strlen(name));
    key_put(&key, "|", 1);
    if (dims)
        key_json(&key, dims, 0);
    key_put(&key, "|", 1);
    if (types)
        key_json(&key, types, 0);
    if (concrete) { /* the scalar arguments: a convolution's stride */
        key_put(&key, "|", 1);
        key_json(&key, concrete, 0);
    }
    if (key.oom)
        goto end;
    int added;
    int64_t id = intern(t->protokeys, key.s, key.len, &added);
    r = id < 0 || !added ? id : proto_made(t, id, name, args);
end:
    base_free(key.s);
    return r;
}

/* The proto of a new key id (protos and protokeys stay in step). */
static int64_t proto_made(imp_trace *t, int64_t id, const char *name, const json_t *args)
{
    const json_t *dims = json_object_get(args, "Input Dims"), *types = json_object_get(args, "Input type");
    const json_t *concrete = json_object_get(args, "Concrete Inputs");
    size_t nin = json_is_array(dims) ? json_array_size(dims) : 0;
    if (nin > 64)
        nin = 64;
    analyze_import_arg in[64];
    int dt[64];
    int64_t ids[64];
    int es = 0, absurd = 0;
    for (size_t i = 0; i < nin; i++) {
        const char *ty = json_string_value(json_array_get(types, i));
        int s = arg_of(json_array_get(dims, i), &in[i]);
        dt[i] = dtype_of(ty);
        ids[i] = -1;
        if (s == -2) {
            absurd = 1;
            memset(&in[i], 0, sizeof in[i]);
            continue;
        }
        if (s < 0 || (in[i].ndim == 0 && dt[i] < 0)) { /* not a tensor: a scalar or None */
            memset(&in[i], 0, sizeof in[i]);
            continue;
        }
        if (dt[i] < 0)
            dt[i] = IMP_DTYPE_OTHER;
        if (!es)
            es = dtype_size[dt[i]];
        if (!in[i].is_list && (ids[i] = shape_tensor(t, dt[i], &in[i])) < 0)
            return -1; /* out of memory */
    }
    if (absurd) {
        t->bad_shape++;
        nin = 0; /* no shapes: no cost */
    }
    analyze_import_scalar sc[64];
    size_t nsc = json_array_size(concrete) < 64 ? json_array_size(concrete) : 64;
    for (size_t i = 0; i < nsc; i++)
        scalar_of_text(json_string_value(json_array_get(concrete, i)), &sc[i]);
    int64_t r = add_proto(t, name, -1, in, ids, nin, NULL, NULL, 0, sc, nsc, es ? es : 4);
    return r >= 0 && r != id ? -1 : r;
}

/* A device activity's proto: its class is a device class (device.h),
 * numbered after the host classes. */
static int64_t kernel_proto(imp_trace *t, const char *name, const char *cat)
{
    char key[MAX_LABEL + 8];
    int n = snprintf(key, sizeof key, "%.*s|k", MAX_LABEL, name);
    int added;
    int64_t id = intern(t->protokeys, key, (size_t)n, &added);
    if (id < 0 || !added)
        return id;
    int cls = ANALYZE_IMPORT_CLASS_COUNT + (int)analyze_device_class_of(name, cat);
    int64_t r = add_proto(t, name, cls, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, 4);
    return r == id ? r : -1;
}

int64_t imp_device_proto(imp_trace *t, const char *name, int cls)
{
    char key[MAX_LABEL + 16];
    int n = snprintf(key, sizeof key, "%.*s|d%d", MAX_LABEL, name, cls);
    int added;
    int64_t id = intern(t->protokeys, key, (size_t)n, &added);
    if (id < 0 || !added)
        return id;
    int64_t r = add_proto(t, name, cls, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, 4);
    return r == id ? r : -1;
}

static int is_kernel_cat(const char *cat)
{
    return cat && (strcmp(cat, "kernel") == 0 || strcmp(cat, "gpu_memcpy") == 0 || strcmp(cat, "gpu_memset") == 0 ||
                   strcmp(cat, "Kernel") == 0 || strcmp(cat, "Memcpy") == 0 || strcmp(cat, "Memset") == 0);
}

/* The categories of Kineto traces from PyTorch 1.8 to 2.x (and the
 * autograd profiler's): an event of another is counted, once in a warning,
 * and read as its name says. */
static const char *const known_cats[] = {
    "cpu_op",
    "user_annotation",
    "python_function",
    "cuda_runtime",
    "cuda_driver",
    "kernel",
    "gpu_memcpy",
    "gpu_memset",
    "gpu_user_annotation",
    "ac2g",
    "cpu_instant_event",
    "Trace",
    "Operator",
    "Runtime",
    "Kernel",
    "Memcpy",
    "Memset",
    "Python",
    "operator",
    "python",
    "overhead",
    "Overhead",
    "mtia_runtime",
    "mtia_ccp_events",
    "fwdbwd",
    "async",
    "gpu_sync",
    "cuda_sync",
    "privateuse1_runtime",
    "privateuse1_driver",
};

static void note_cat(imp_trace *t, const char *cat)
{
    if (!cat || (t->last_cat && !strcmp(cat, t->last_cat)))
        return;
    for (size_t i = 0; i < sizeof known_cats / sizeof *known_cats; i++)
        if (!strcmp(cat, known_cats[i])) {
            t->last_cat = known_cats[i];
            return;
        }
    if (!t->unknown_cats++)
        snprintf(t->first_unknown_cat, sizeof t->first_unknown_cat, "%s", cat);
}

/* The time member key of event e (text raw[0..len)) in ns, exactly; -1 if
 * it is missing or not a usable time. */
static int64_t event_time(const json_t *e, const char *raw, size_t len, const char *key)
{
    char quoted[16];
    int64_t ns = -1;
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    int r = analyze_json_us_to_ns(raw, len, quoted, &ns);
    return r == 0 ? ns : r == 1 ? us_to_ns(json_object_get(e, key)) : -1;
}

/* The key text of the value at p (the subset of import_scan.h, checked
 * already), as key_json writes the same value's tree.  The byte after it. */
static const char *key_text(keybuf *k, const char *p, const char *end, int depth)
{
    const char *q;
    if (p < end && *p == '[' && depth < 8) {
        key_put(k, "[", 1);
        for (p++;; p++) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
                p++;
            if (p < end && *p == ']')
                break;
            if (p < end && *p == ',')
                key_put(k, ",", 1);
            else if (p < end)
                p = key_text(k, p, end, depth + 1) - 1;
            else
                return k->oom = 1, end;
        }
        key_put(k, "]", 1);
        return p + 1;
    }
    if (!(q = analyze_scan_value(p, end, 0)))
        return k->oom = 1, end;
    int64_t x;
    if (*p == '"')
        key_put(k, p, (size_t)(q - p)); /* no escapes: the text is the string */
    else if (analyze_scan_integer((analyze_scan_text){ p, (size_t)(q - p) }, &x))
        key_int(k, x);
    else
        key_put(k, "?", 1);
    return q;
}

/* profiler_proto from the scanner's text: the key without a tree; the tree
 * of args only for a key not seen before. */
static int64_t proto_of_text(imp_trace *t, const char *name, const analyze_scan_event *x)
{
    keybuf key = { t->key, 0, t->ckey, 0 }; /* one buffer for all events */
    const analyze_scan_text *part[3] = { &x->dims, &x->types, &x->concrete };
    int64_t r = -1;
    key_put(&key, name, strlen(name));
    for (int i = 0; i < 3; i++) {
        if (i < 2 || part[i]->p)
            key_put(&key, "|", 1);
        if (part[i]->p)
            key_text(&key, part[i]->p, part[i]->p + part[i]->n, 0);
    }
    t->key = key.s, t->ckey = key.cap;
    if (key.oom)
        return -1;
    int added;
    int64_t id = intern(t->protokeys, key.s, key.len, &added);
    if (id < 0 || !added)
        return id;
    json_t *args = x->args.p ? json_loadb(x->args.p, x->args.n, JSON_DECODE_ANY, NULL) : NULL;
    if (!x->args.p || args)
        r = proto_made(t, id, name, args);
    json_decref(args);
    return r;
}

/* A track from integer pid and tid (the scanner's), as track_of. */
static int64_t track_of_ints(imp_trace *t, int64_t pid, int64_t tid, int gpu)
{
    if (t->last_track >= 0 && t->last_gpu == gpu && t->last_pid == pid && t->last_tid == tid)
        return t->last_track;
    json_t *p = json_integer(pid), *d = json_integer(tid);
    int64_t id = p && d ? track_of(t, p, d, gpu) : -1;
    json_decref(p), json_decref(d);
    return id;
}

/* What the interpretation of a profiler event reads: from jansson's tree
 * (e) or from the scanner's text (x, pid, tid). */
typedef struct pt_event {
    const char *ph, *name, *cat;
    int64_t ts, dur;
    int has_ext, has_corr;
    int64_t ext, corr;
    const json_t *e;
    const analyze_scan_event *x;
    int64_t pid, tid;
} pt_event;

/* One event of traceEvents. 0, or -1 with the thread's message set. */
static int profiler_interpret(imp_trace *t, const pt_event *v)
{
    t->sum.events++;
    const char *ph = v->ph, *name = v->name, *cat = v->cat;
    note_cat(t, cat);
    if (!ph || strcmp(ph, "X") != 0) {
        t->not_x++;
        return 0;
    }
    if (!name || !*name) {
        t->no_name++;
        return 0;
    }
    if (cat && (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "Runtime") || !strcmp(cat, "cuda_driver")) &&
        starts(name, "hip"))
        t->hip_runtime = 1; /* ROCm: the devices are HIP's */
    int64_t ts = v->ts, dur = v->dur;
    if (ts < 0 || dur < 0 || (uint64_t)ts + (uint64_t)dur > (uint64_t)INT64_MAX) {
        t->bad_time++;
        return 0;
    }
    uint64_t b = (uint64_t)ts, en = (uint64_t)(ts + dur);
    int kernel = is_kernel_cat(cat);
    int kind;
    int64_t ref = 0;
    if (starts(name, "ProfilerStep#")) {
        if (cat && strcmp(cat, "gpu_user_annotation") == 0)
            return 0;
        return add_step(t, b, en, name) ? analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path), -1 : 0;
    } else if (kernel) {
        kind = IMP_REC_KERNEL;
        ref = kernel_proto(t, name, cat);
    } else if (starts(name, "autograd::engine::evaluate_function")) {
        kind = IMP_REC_BWD;
    } else if (starts(name, "Optimizer.step#") || starts(name, "Optimizer.zero_grad#")) {
        kind = IMP_REC_UPD;
    } else if (is_op_name(name) &&
               (!cat || strcmp(cat, "cpu_op") == 0 || strcmp(cat, "Operator") == 0 || strcmp(cat, "operator") == 0)) {
        kind = IMP_REC_OP;
        ref = v->e ? profiler_proto(t, name, json_object_get(v->e, "args")) : proto_of_text(t, name, v->x);
    } else if (v->has_corr && cat &&
               (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "Runtime") || !strcmp(cat, "cuda_driver") ||
                !strcmp(cat, "privateuse1_runtime") || !strcmp(cat, "mtia_runtime"))) {
        /* a runtime call: what its correlation launched is its enclosing op's */
        int64_t track = v->e ? track_of(t, json_object_get(v->e, "pid"), json_object_get(v->e, "tid"), 0)
                             : track_of_ints(t, v->pid, v->tid, 0);
        imp_launch l = { .corr = v->corr, .b = b, .track = (uint32_t)track, .has_corr = 1 };
        if (track < 0 || add_launch(&t->rt_spill, &t->rt, &t->nrt, l))
            goto oom;
        return 0;
    } else {
        return 0; /* python frames, runtime calls, other annotations */
    }
    int64_t track = v->e ? track_of(t, json_object_get(v->e, "pid"), json_object_get(v->e, "tid"), kernel)
                         : track_of_ints(t, v->pid, v->tid, kernel);
    if (ref < 0 || track < 0 || add_rec(t, b, en, (uint32_t)track, (uint32_t)ref, kind))
        goto oom;
    /* a GPU trace (deviceProperties comes first) links kernels to the CPU
     * ops that launched them: the kernel's phase is its op's */
    if ((kind == IMP_REC_OP && v->has_ext && t->sum.devices) ||
        (kind == IMP_REC_KERNEL && (v->has_ext || v->has_corr))) {
        imp_launch l = { .ext = v->ext,
                         .corr = v->corr,
                         .b = b,
                         .track = (uint32_t)track,
                         .proto = (uint32_t)ref,
                         .has_ext = (uint8_t)v->has_ext,
                         .has_corr = (uint8_t)v->has_corr };
        if (kernel ? add_launch(&t->kern_spill, &t->kern_ext, &t->nkern_ext, l)
                   : add_launch(&t->cpu_spill, &t->cpu_ext, &t->ncpu_ext, l))
            goto oom;
    }
    return 0;
oom:
    analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
    return -1;
}

/* One element of traceEvents through jansson's tree e (its text:
 * raw[0..len)).  0, or -1 with the thread's message set. */
static int profiler_event(imp_trace *t, const json_t *e, const char *raw, size_t len, uint64_t idx)
{
    if (!json_is_object(e)) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: event %llu is not an object: not a Chrome trace", t->path,
                     (unsigned long long)idx);
        return -1;
    }
    const json_t *ext = json_object_get(json_object_get(e, "args"), "External id"),
                 *corr = json_object_get(json_object_get(e, "args"), "correlation");
    pt_event v = {
        .ph = json_string_value(json_object_get(e, "ph")),
        .name = json_string_value(json_object_get(e, "name")),
        .cat = json_string_value(json_object_get(e, "cat")),
        .ts = event_time(e, raw, len, "ts"),
        .dur = event_time(e, raw, len, "dur"),
        .has_ext = json_is_integer(ext),
        .ext = json_integer_value(ext),
        .has_corr = json_is_integer(corr),
        .corr = json_integer_value(corr),
        .e = e,
    };
    return profiler_interpret(t, &v);
}

/* A string member's text into buf (NUL-terminated) as *s: NULL where the
 * member is absent or not a string.  1: too long for buf. */
static int text_string(analyze_scan_text x, char *buf, size_t size, const char **s)
{
    *s = NULL;
    if (!x.p || x.p[0] != '"')
        return 0;
    if (x.n - 2 >= size)
        return 1;
    memcpy(buf, x.p + 1, x.n - 2);
    buf[x.n - 2] = '\0';
    *s = buf;
    return 0;
}

/* A time member's text in ns as event_time reads it.  1: in exponent
 * notation (jansson's double reads it). */
static int text_time(analyze_scan_text x, int64_t *ns)
{
    int r = x.p ? analyze_json_text_us_to_ns(x.p, x.p + x.n, ns) : -1;
    if (r < 0)
        *ns = -1;
    return r == 1;
}

/* The element of traceEvents at the start of raw[0..avail) through the
 * scanner (import_scan.h), with no tree: 0 (its length in *used), -1 with
 * the thread's message, or 1 when the event is not one for the fast path
 * or not whole in raw (nothing read: jansson's turn). */
static int profiler_event_text(imp_trace *t, const char *raw, size_t avail, size_t *used)
{
    analyze_scan_event x;
    char ph[8], name[4096], cat[64];
    pt_event v = { .x = &x };
    if (!(*used = analyze_scan_event_prefix(raw, avail, &x)) || text_string(x.ph, ph, sizeof ph, &v.ph) ||
        text_string(x.name, name, sizeof name, &v.name) || text_string(x.cat, cat, sizeof cat, &v.cat) ||
        text_time(x.ts, &v.ts) || text_time(x.dur, &v.dur) || !analyze_scan_integer(x.pid, &v.pid) ||
        !analyze_scan_integer(x.tid, &v.tid))
        return 1;
    v.has_ext = analyze_scan_integer(x.ext, &v.ext);
    v.has_corr = analyze_scan_integer(x.corr, &v.corr);
    return profiler_interpret(t, &v);
}

/* The summary's device.streams: each GPU stream's thread id, device and
 * stream ("12=cuda:0/7,13=cuda:0/20"); the streams past its room are left
 * out (their device reads as "gpu"). */
static void device_streams(imp_trace *t)
{
    size_t n = 0, room = sizeof t->sum.device_streams;
    t->sum.device_streams[0] = '\0';
    for (size_t i = 0; i < t->ntracks; i++) {
        char dev[64], stream[64];
        if (!t->tracks[i].gpu || sscanf(t->tracks[i].procname, "gpu %63s stream %63s", dev, stream) != 2)
            continue;
        int k = snprintf(t->sum.device_streams + n, room - n, "%s%lld=%s:%s/%s", n ? "," : "",
                         (long long)t->tracks[i].vtid, t->hip_runtime ? "hip" : "cuda", dev, stream);
        if (k < 0 || (size_t)k >= room - n) {
            t->sum.device_streams[n] = '\0';
            break;
        }
        n += (size_t)k;
    }
}

/* The node of proto in phase (update nodes are of class optimization). */
static int64_t node_of(imp_trace *t, uint32_t proto, int phase)
{
    uint32_t p = proto;
    char key[16], *k = key + sizeof key; /* "proto|phase", without printf: once per op */
    *--k = (char)('0' + phase);
    *--k = '|';
    do
        *--k = (char)('0' + p % 10);
    while (p /= 10);
    int added;
    int64_t id = intern(t->nodekeys, k, (size_t)(key + sizeof key - k), &added);
    if (id < 0 || !added)
        return id;
    if (base_grow(&t->nodes, &t->cnodes, t->nnodes + 1, sizeof *t->nodes))
        return -1;
    t->nodes[t->nnodes++] = (imp_node){
        .proto = proto,
        .phase = (uint8_t)phase,
        .cls = phase == IMP_UPDATE && t->protos[proto].cls < ANALYZE_IMPORT_CLASS_COUNT ? ANALYZE_IMPORT_OPTIMIZATION
                                                                                        : t->protos[proto].cls,
    };
    return id;
}

/* ---- from spans to ops ---------------------------------------------------- */

static int rec_order(const void *a, const void *b)
{
    const imp_rec *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    if (x->b != y->b)
        return x->b < y->b ? -1 : 1;
    if (x->e != y->e)
        return x->e > y->e ? -1 : 1;                          /* the enclosing span first */
    return (x->kind == IMP_REC_OP) - (y->kind == IMP_REC_OP); /* context spans before ops */
}

uint32_t imp_seg_of(const imp_trace *t, uint64_t b)
{
    size_t lo = 0, hi = t->nsteps; /* the first step beginning after b */
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->steps[mid].b <= b)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo && b < t->steps[lo - 1].e ? (uint32_t)(2 * (lo - 1) + 1) : (uint32_t)(2 * lo);
}

/* An execution trace's records (nodes already): by track, then begin. */
static int track_begin_order(const void *a, const void *b)
{
    const imp_rec *x = a, *y = b;
    if (x->track != y->track)
        return x->track < y->track ? -1 : 1;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int step_order(const void *a, const void *b)
{
    const imp_step *x = a, *y = b;
    return x->b < y->b ? -1 : x->b > y->b;
}

static int by_ext(const void *a, const void *b)
{
    const imp_launch *x = a, *y = b;
    return x->ext < y->ext ? -1 : x->ext > y->ext;
}

static int by_corr(const void *a, const void *b)
{
    const imp_launch *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

/* The number of kept records (sorted by track, then begin) before or at
 * (track, b): the one at track and b or just before it is that minus one. */
static size_t kept_upto(const imp_trace *t, uint32_t track, uint64_t b)
{
    size_t lo = 0, hi = t->nrecs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const imp_rec *r = &t->recs[mid];
        if (r->track < track || (r->track == track && r->b <= b))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The kept record (its index + 1) of the outermost op on track around
 * time b (kept records in track, begin order), or 0. */
static size_t kept_around(const imp_trace *t, uint32_t track, uint64_t b)
{
    size_t o = kept_upto(t, track, b);
    return o && t->recs[o - 1].track == track && t->recs[o - 1].e >= b ? o : 0;
}

/* The kept record (its index + 1) of the outermost op that launched kernel
 * k, or 0: the op around the runtime call of k's correlation (rt sorted by
 * correlation: the kernels of a CUDA graph have the cudaGraphLaunch's),
 * else the op around the CPU op of k's External id (cpu_ext sorted by it). */
static size_t launcher_of(const imp_trace *t, const imp_launch *k)
{
    const imp_launch *rt = k->has_corr && t->nrt ? bsearch(k, t->rt, t->nrt, sizeof *t->rt, by_corr) : NULL;
    if (rt)
        return kept_around(t, rt->track, rt->b);
    const imp_launch *op =
        k->has_ext && t->ncpu_ext ? bsearch(k, t->cpu_ext, t->ncpu_ext, sizeof *t->cpu_ext, by_ext) : NULL;
    return op ? kept_around(t, op->track, op->b) : 0;
}

/* The kept record (its index + 1) of kernel k, or 0. */
static size_t kernel_rec(const imp_trace *t, const imp_launch *k)
{
    size_t j = kept_upto(t, k->track, k->b), stop = j > 64 ? j - 64 : 0; /* kernels of one stream at one time */
    for (; j > stop && t->recs[j - 1].track == k->track && t->recs[j - 1].b == k->b; j--)
        if (t->nodes[t->recs[j - 1].ref].proto == k->proto)
            return j;
    return 0;
}

/* Each kernel linked to a CPU op takes the phase of the outermost op around
 * it, and that op's launch number (t->launch, from 1) as the op has it;
 * the device records no op launched are counted. */
static int kernel_launches(imp_trace *t)
{
    if (!t->nkern_ext)
        return 0;
    if (imp_spill_sort(&t->cpu_spill, t->ncpu_ext, sizeof *t->cpu_ext, by_ext) ||
        imp_spill_sort(&t->rt_spill, t->nrt, sizeof *t->rt, by_corr) ||
        imp_spill_reserve(&t->launch_spill, (t->nrecs ? t->nrecs : 1) * sizeof *t->launch))
        return -1;
    t->cpu_ext = t->cpu_spill.p, t->rt = t->rt_spill.p, t->launch = t->launch_spill.p; /* zeros */
    uint32_t next = 1;
    for (size_t i = 0; i < t->nkern_ext; i++) {
        const imp_launch *k = &t->kern_ext[i];
        imp_spill_touch(&t->kern_spill, sizeof *k);
        imp_spill_touch(&t->cpu_spill, 4096); /* searches: a few pages of each */
        imp_spill_touch(&t->rt_spill, 4096);
        imp_spill_touch(&t->recspill, 4096);
        imp_spill_touch(&t->launch_spill, 4096);
        size_t o = launcher_of(t, k), j = o ? kernel_rec(t, k) : 0;
        if (!j)
            continue;
        if (!t->launch[o - 1])
            t->launch[o - 1] = next++;
        t->launch[j - 1] = t->launch[o - 1];
        int phase = t->nodes[t->recs[o - 1].ref].phase;
        if (phase == IMP_FORWARD)
            continue;
        int64_t node = node_of(t, k->proto, phase);
        if (node < 0)
            return -1;
        t->recs[j - 1].ref = (uint32_t)node;
    }
    for (size_t i = 0; i < t->nrecs; i++) {
        imp_spill_touch(&t->recspill, sizeof *t->recs);
        imp_spill_touch(&t->launch_spill, sizeof *t->launch);
        if (t->tracks[t->recs[i].track].gpu && !t->launch[i])
            t->unlaunched++, t->unlaunched_ns += t->recs[i].e - t->recs[i].b;
    }
    return 0;
}

/* The records (written by add_rec) in rec_order.  Each thread's spans
 * mostly come in time order: then a stable partition by track (one pass,
 * through a buffer a track) is that order, else a sort (import_spill.h:
 * chunks merged past the window). */
static int sort_by_track(imp_trace *t)
{
    size_t n = t->nrecs, nt = t->ntracks, *at = base_calloc(nt + 1, sizeof *at);
    imp_rec *last = base_malloc((nt ? nt : 1) * sizeof *last);
    char *bufs = NULL;
    imp_spill out = IMP_SPILL_INIT;
    imp_spill_io in = { 0 }, *w = NULL;
    int sorted = 1, rc = -1, err = 0;
    const imp_rec *r;
    if (!at || !last || imp_spill_io_open(&in, &t->recspill, 0, n * sizeof *r, NULL, IO_BUF))
        goto end;
    while (sorted && (r = imp_spill_get(&in, sizeof *r, &err))) {
        uint32_t k = r->track;
        if (k >= nt || (at[k + 1] && rec_order(&last[k], r) > 0))
            sorted = 0;
        else
            at[k + 1]++, last[k] = *r;
    }
    if (err)
        goto end;
    if (!sorted) {
        if (imp_spill_reserve(&t->recspill, (n ? n : 1) * sizeof *r) ||
            imp_spill_sort(&t->recspill, n, sizeof *r, rec_order))
            goto end;
        rc = 0;
        goto end;
    }
    /* one writer a track, their buffers of one block (a record each at least) */
    size_t cap = IO_BUF / (nt ? nt : 1) / sizeof *r * sizeof *r;
    if (cap < sizeof *r)
        cap = sizeof *r;
    if (!(w = base_calloc(nt ? nt : 1, sizeof *w)) || !(bufs = base_malloc((nt ? nt : 1) * cap)) ||
        imp_spill_reserve(&out, (n ? n : 1) * sizeof *r))
        goto end;
    for (size_t k = 0; k < nt; k++) {
        at[k + 1] += at[k];
        imp_spill_io_open(&w[k], &out, at[k] * sizeof *r, IMP_SPILL_WRITER, bufs + k * cap, cap);
    }
    imp_spill_io_close(&in, 1);
    if (imp_spill_io_open(&in, &t->recspill, 0, n * sizeof *r, NULL, IO_BUF))
        goto end;
    while ((r = imp_spill_get(&in, sizeof *r, &err)))
        if (imp_spill_put(&w[r->track], r, sizeof *r))
            goto end;
    if (err)
        goto end;
    for (size_t k = 0; k < nt; k++)
        if (imp_spill_io_close(&w[k], 0))
            goto end;
    imp_spill_release(&t->recspill);
    t->recspill = out;
    out = (imp_spill)IMP_SPILL_INIT;
    rc = 0;
end:
    imp_spill_io_close(&in, 1);
    imp_spill_release(&out);
    base_free(at), base_free(last), base_free(w), base_free(bufs);
    return rc;
}

/* The records of in kept, written to out over the array behind the
 * reader: an execution trace's are nodes already (et_finish); a profiler
 * trace's outermost ops of each thread become node records (nested spans
 * on a stack, by track then begin). Each track's range of them, the first
 * begin and the last end. 0, or -1 out of memory. */
static int keep_records(imp_trace *t, int et, imp_spill_io *in, imp_spill_io *out, size_t *kept)
{
    imp_rec *stack = NULL; /* the spans open around the current one */
    size_t cap = 0, nout = 0, depth = 0;
    int rc = -1, err = 0, ops_open = 0, bwd = 0, upd = 0, first_rec = 1;
    uint32_t prev = 0;
    t->t0 = UINT64_MAX;
    t->t1 = 0;
    for (const imp_rec *next; (next = imp_spill_get(in, sizeof *next, &err));) {
        imp_rec r = *next;
        if (!et) {
            if (first_rec || r.track != prev)
                depth = 0, ops_open = bwd = upd = 0;
            first_rec = 0;
            prev = r.track;
            while (depth && stack[depth - 1].e <= r.b) {
                unsigned k = stack[--depth].kind;
                ops_open -= k == IMP_REC_KEPT || k == IMP_REC_INNER;
                bwd -= k == IMP_REC_BWD;
                upd -= k == IMP_REC_UPD;
            }
            if (depth && r.e > stack[depth - 1].e)
                t->overlap++;
            if (r.kind == IMP_REC_OP && ops_open)
                r.kind = IMP_REC_INNER;
            unsigned k = r.kind;
            ops_open += k == IMP_REC_OP || k == IMP_REC_KERNEL || k == IMP_REC_INNER;
            bwd += k == IMP_REC_BWD;
            upd += k == IMP_REC_UPD;
            if (k == IMP_REC_OP || k == IMP_REC_KERNEL) {
                int64_t node = node_of(t, r.ref, upd ? IMP_UPDATE : bwd ? IMP_BACKWARD : IMP_FORWARD);
                if (node < 0)
                    goto end;
                r.ref = (uint32_t)node;
                r.kind = IMP_REC_KEPT;
            }
            if (base_grow(&stack, &cap, depth + 1, sizeof *stack))
                goto end;
            stack[depth++] = r;
        }
        if (r.kind != IMP_REC_KEPT || r.track >= t->ntracks)
            continue;
        if (imp_spill_put(out, &r, sizeof r))
            goto end;
        nout++;
        t->track_at[r.track + 1]++;
        if (r.b < t->t0)
            t->t0 = r.b;
        if (r.e > t->t1)
            t->t1 = r.e;
    }
    if (err || imp_spill_io_close(out, 1))
        goto end;
    for (size_t k = 0; k < t->ntracks; k++)
        t->track_at[k + 1] += t->track_at[k];
    *kept = nout;
    rc = 0;
end:
    base_free(stack);
    return rc;
}

/* The steps: in time order, none overlapping the one before; a trace
 * without step spans is one step. 0, or -1 out of memory. */
static int order_steps(imp_trace *t)
{
    if (t->nsteps)
        qsort(t->steps, t->nsteps, sizeof *t->steps, step_order);
    size_t ns = 0;
    for (size_t i = 0; i < t->nsteps; i++) {
        if (ns && t->steps[i].b < t->steps[ns - 1].e) {
            t->bad_step++;
            continue;
        }
        t->steps[ns++] = t->steps[i];
    }
    t->nsteps = ns;
    if (!t->nsteps) {
        if (base_grow(&t->steps, &t->csteps, 1, sizeof *t->steps))
            return -1;
        t->steps[0] = (imp_step){ .b = t->t0, .e = t->t1, .num = 0 };
        t->nsteps = 1;
    }
    if (t->steps[0].b < t->t0)
        t->t0 = t->steps[0].b;
    if (t->steps[t->nsteps - 1].e > t->t1)
        t->t1 = t->steps[t->nsteps - 1].e;
    return 0;
}

/* The thread ids: CPU threads keep theirs (0 to 2^31-1) where no other
 * thread has it, the others get new ones above them. 0, or -1 out of
 * memory. */
static int number_threads(imp_trace *t)
{
    int64_t next = 1;
    for (size_t i = 0; i < t->ntracks; i++) {
        if (t->tracks[i].vtid > INT32_MAX)
            t->tracks[i].vtid = -1;
        if (t->tracks[i].vtid >= next)
            next = t->tracks[i].vtid + 1;
    }
    imp_strtab *taken = strtab_create();
    if (!taken)
        return -1;
    for (size_t i = 0; i < t->ntracks; i++) {
        if (t->tracks[i].vtid >= 0) {
            char key[24];
            int n = snprintf(key, sizeof key, "%lld", (long long)t->tracks[i].vtid), added;
            if (intern(taken, key, (size_t)n, &added) < 0) {
                strtab_destroy(taken);
                return -1;
            }
            if (!added)
                t->tracks[i].vtid = -1;
        }
        if (t->tracks[i].vtid < 0)
            t->tracks[i].vtid = next++;
    }
    strtab_destroy(taken);
    return 0;
}

/* The main track: the one whose ops come first in the stream (the first
 * segment with ops, the first track there). One process: readers look node
 * ids up within the process (vpid) of the ops events, and the node_defs
 * are the main thread's. */
static void pick_main_track(imp_trace *t)
{
    uint64_t first = UINT64_MAX;
    for (size_t k = 0; k < t->ntracks; k++) {
        if (t->track_at[k] == t->track_at[k + 1])
            continue;
        uint64_t seg = imp_seg_of(t, t->recs[t->track_at[k]].b);
        if (seg < first)
            first = seg, t->main_track = k;
    }
    for (size_t i = 0; i < t->ntracks; i++)
        t->tracks[i].vpid = t->tracks[t->main_track].vpid;
}

static void summarize(imp_trace *t, int et, size_t nout)
{
    int train = 0;
    for (size_t i = 0; i < t->nnodes; i++)
        train |= t->nodes[i].phase != IMP_FORWARD;
    snprintf(t->sum.mode, sizeof t->sum.mode, "%s", train ? "train" : "infer");
    snprintf(t->sum.format, sizeof t->sum.format, "%s", et ? "pytorch-et" : "pytorch-profiler");
    t->sum.ops = nout;
    t->sum.steps = t->nsteps;
    t->sum.nodes = t->nnodes;
    t->sum.tracks = t->ntracks;
    t->sum.tensors = t->ntensors;
    t->sum.warnings = (t->bad_time > 0) + (t->bad_shape > 0) + (t->overlap > 0) + (t->bad_step > 0) + (t->no_name > 0) +
                      (t->untimed > 0) + (t->big_ints > 0) + (t->unknown_cats > 0) + (t->notes[0] != 0);
}

/* Outermost ops of each thread -> node records, by track then begin (the
 * source emits them step by step: import_source.c); steps. */
static int resolve(imp_trace *t, int et)
{
    imp_spill_io in = { 0 }, out = { 0 };
    int rc = -1;
    size_t nout = 0;
    if (imp_spill_io_close(&t->recw, 1))
        goto oom;
    if (et && t->nrecs &&
        (imp_spill_reserve(&t->recspill, t->nrecs * sizeof *t->recs) ||
         imp_spill_sort(&t->recspill, t->nrecs, sizeof *t->recs, track_begin_order)))
        goto oom;
    if (!et && t->nrecs && sort_by_track(t))
        goto oom;
    if (!(t->track_at = base_calloc(t->ntracks + 1, sizeof *t->track_at)) ||
        imp_spill_io_open(&in, &t->recspill, 0, t->nrecs * sizeof *t->recs, NULL, IO_BUF) ||
        imp_spill_io_open(&out, &t->recspill, 0, IMP_SPILL_WRITER, NULL, IO_BUF))
        goto oom;
    if (keep_records(t, et, &in, &out, &nout))
        goto oom;
    t->nrecs = nout;
    t->recs = t->recspill.p;
    if (kernel_launches(t))
        goto oom;
    if (!nout) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: no PyTorch ops found (%llu events read): not a PyTorch %s trace", t->path,
                     (unsigned long long)t->sum.events, et ? "execution" : "profiler");
        goto end;
    }
    if (order_steps(t) || number_threads(t))
        goto oom;
    device_streams(t);
    pick_main_track(t);
    summarize(t, et, nout);
    rc = 0;
    goto end;
oom:
    analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
end:
    imp_spill_io_close(&in, 1), imp_spill_io_close(&out, 1);
    return rc;
}

int imp_trace_warnings(const imp_trace *t, char *buf, size_t len)
{
    int lines = 0;
    size_t n = 0;
    buf[0] = '\0';
#define W(cond, ...)                                     \
    if (cond && n < len) {                               \
        int k = snprintf(buf + n, len - n, __VA_ARGS__); \
        n += k > 0 ? (size_t)k : 0;                      \
        lines++;                                         \
    }
    int et = strcmp(t->sum.format, "pytorch-et") == 0;
    W(t->bad_time, "%s: %llu spans with a missing, negative or absurd time or duration skipped\n", t->path,
      (unsigned long long)t->bad_time);
    W(t->bad_shape,
      "%s: %llu op call sites with an absurd shape (negative, over 2^31, over 2^40 elements): no "
      "shapes or costs kept for them\n",
      t->path, (unsigned long long)t->bad_shape);
    W(t->overlap, "%s: %llu spans overlapping the end of the span around them\n", t->path,
      (unsigned long long)t->overlap);
    W(t->bad_step, "%s: %llu ProfilerStep spans unnamed or overlapping the step before: skipped\n", t->path,
      (unsigned long long)t->bad_step);
    W(t->no_name, "%s: %llu %s without a name skipped\n", t->path, (unsigned long long)t->no_name,
      et ? "nodes" : "events");
    W(t->unknown_cats,
      "%s: %llu events of categories this importer does not know (the first: \"%s\") read by their names\n", t->path,
      (unsigned long long)t->unknown_cats, t->first_unknown_cat);
    W(t->big_ints, "%s: %llu integers beyond 64 bits (ids such as NCCL's Comms Id) kept as strings\n", t->path,
      (unsigned long long)t->big_ints);
    W(t->unlaunched,
      "%s: %llu device activities (%.3f ms) launched by no host op (CUDA graph replays or launches outside "
      "any op): in no op's device time\n",
      t->path, (unsigned long long)t->unlaunched, (double)t->unlaunched_ns / 1e6);
    W(et && t->notes[0], "%s", t->notes);
    W(et && t->untimed,
      "%s: the execution trace has no op times: %llu ops get empty spans 1 us apart (their "
      "order and shapes are real, their times are not)\n",
      t->path, (unsigned long long)t->untimed);
#undef W
    return lines;
}

/* ---- the document --------------------------------------------------------- */

static int fast_path = 1;
void imp_trace_fast_path(int on) { fast_path = on; }

/* Each element of the array at the reader's position to fn. */
static int stream_array(imp_trace *t, analyze_json_in *j, int et, imp_et *s)
{
    if (analyze_json_peek(j) != '[') {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: %s is not an array", t->path, et ? "nodes" : "traceEvents");
        return -1;
    }
    analyze_json_skip(j);
    for (uint64_t idx = 0;; idx++) {
        int c = analyze_json_peek(j);
        if (c == -2)
            return -1;
        if (c == ']' && idx == 0) {
            analyze_json_skip(j);
            return 0;
        }
        if (!et && fast_path) { /* the fast path first; jansson for the events it leaves */
            size_t avail, used;
            const char *raw = analyze_json_buffered(j, &avail);
            int r = profiler_event_text(t, raw, avail, &used);
            if (r == 0) {
                analyze_json_consume(j, used);
                goto next;
            }
            if (r < 0)
                return -1;
        }
        size_t len;
        const char *v = analyze_json_value(j, &len);
        if (!v)
            return -1;
        json_error_t je;
        json_t *e = json_loadb(v, len, JSON_DECODE_ANY, &je);
        if (!e && strstr(je.text, "too big")) { /* an integer beyond 64 bits: kept as a string */
            size_t qlen;
            uint64_t quoted;
            char *q = analyze_json_quote_big_ints(v, len, &qlen, &quoted);
            if (!q) {
                analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", t->path);
                return -1;
            }
            if ((e = json_loadb(q, qlen, JSON_DECODE_ANY, &je)))
                t->big_ints += quoted;
            base_free(q);
        }
        if (!e) {
            analyze_fail(ANALYZE_ERR_INPUT, "%s: not JSON at byte %llu: %s", t->path,
                         (unsigned long long)(analyze_json_offset(j) + (uint64_t)(je.position > 0 ? je.position : 0)),
                         je.text);
            return -1;
        }
        int r = et ? imp_et_node(t, s, e, idx) : profiler_event(t, e, v, len, idx);
        analyze_json_consume(j, len);
        json_decref(e);
        if (r)
            return -1;
    next:
        c = analyze_json_peek(j);
        if (c == ',') {
            analyze_json_skip(j);
            continue;
        }
        if (c == ']') {
            analyze_json_skip(j);
            return 0;
        }
        if (c == -2)
            return -1;
        analyze_fail(ANALYZE_ERR_INPUT, "%s: %s JSON at byte %llu: expected ',' or ']' after element %llu", t->path,
                     c == -1 ? "truncated" : "not", (unsigned long long)analyze_json_offset(j),
                     (unsigned long long)idx);
        return -1;
    }
}

static char *model_from_path(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char *m = base_strdup(base);
    if (!m)
        return NULL;
    static const char *const suffix[] = { ".gz", ".zst", ".json", ".trace", ".pt", ".et" };
    for (int again = 1; again;) {
        again = 0;
        for (size_t i = 0; i < sizeof suffix / sizeof *suffix; i++) {
            size_t n = strlen(m), k = strlen(suffix[i]);
            if (n > k && strcmp(m + n - k, suffix[i]) == 0)
                m[n - k] = '\0', again = 1;
        }
    }
    return m;
}

/* Kineto's deviceProperties: [{"id": 0, "name": "NVIDIA A100...", ...}]. */
static void devices_of(imp_trace *t, const json_t *d)
{
    size_t n = json_array_size(d);
    const char *name = json_string_value(json_object_get(json_array_get(d, 0), "name"));
    if (n && name)
        snprintf(t->sum.device, sizeof t->sum.device, "%s%s", name, n > 1 ? " (and others)" : "");
    t->sum.devices = n;
}

/* Kineto's distributedInfo: {"backend": "nccl", "rank": 0, "world_size": 8,
 * "pg_count": 2, "pg_config": [...], "nccl_version": "2.18.3"}. */
static void distributed_of(imp_trace *t, const json_t *d)
{
    const json_t *rank = json_object_get(d, "rank"), *world = json_object_get(d, "world_size");
    const json_t *pgs = json_object_get(d, "pg_count"), *cfg = json_object_get(d, "pg_config");
    const char *backend = json_string_value(json_object_get(d, "backend"));
    const char *nccl = json_string_value(json_object_get(d, "nccl_version"));
    if (json_is_integer(rank) && json_is_integer(world) && json_integer_value(rank) >= 0 &&
        json_integer_value(world) > json_integer_value(rank)) {
        t->sum.rank = json_integer_value(rank);
        t->sum.world_size = json_integer_value(world);
    }
    snprintf(t->sum.backend, sizeof t->sum.backend, "%s", backend ? backend : "");
    snprintf(t->sum.nccl_version, sizeof t->sum.nccl_version, "%s", nccl ? nccl : "");
    base_scrub(t->sum.backend), base_scrub(t->sum.nccl_version); /* the trace's: printed as text */
    if (json_is_integer(pgs) && json_integer_value(pgs) > 0)
        t->sum.pg_count = json_integer_value(pgs);
    else if (json_is_array(cfg)) /* older: the groups' list alone */
        t->sum.pg_count = (int64_t)json_array_size(cfg);
}

imp_trace *imp_trace_read(const char *path, const char *model) { return imp_trace_read_linked(path, model, NULL); }

imp_trace *imp_trace_read_linked(const char *path, const char *model, const char *profile)
{
    imp_trace *t = base_calloc(1, sizeof *t);
    analyze_json_in *j = NULL;
    imp_et *s = NULL;
    int et = 0, saw = 0;
    if (t) {
        t->last_track = -1, t->profile = profile;
        t->recspill = t->cpu_spill = t->kern_spill = t->rt_spill = t->launch_spill = (imp_spill)IMP_SPILL_INIT;
    }
    if (t && imp_spill_io_open(&t->recw, &t->recspill, 0, IMP_SPILL_WRITER, NULL, IO_BUF)) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    if (!t || !(t->path = base_strdup(path)) || !(t->names = strtab_create()) || !(t->protokeys = strtab_create()) ||
        !(t->nodekeys = strtab_create()) || !(t->trackkeys = strtab_create()) || !(t->tensorkeys = strtab_create()) ||
        !(s = imp_et_create())) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    char *m = model ? base_strdup(model) : model_from_path(path);
    if (!m) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    snprintf(t->sum.model, sizeof t->sum.model, "%s", m);
    base_scrub(t->sum.model); /* a file's name may hold any byte but '/' */
    base_free(m);
    if (!(j = analyze_json_open(path)))
        goto fail;
    int c = analyze_json_peek(j);
    if (c == -2)
        goto fail;
    if (c == '[') { /* the autograd profiler's bare array of events */
        if (stream_array(t, j, 0, NULL))
            goto fail;
        saw = 1;
    } else if (c == '{') {
        analyze_json_skip(j);
        for (int first = 1;; first = 0) {
            c = analyze_json_peek(j);
            if (c == '}' && first) {
                analyze_json_skip(j);
                break;
            }
            size_t len;
            const char *k = c == '"' ? analyze_json_value(j, &len) : NULL;
            if (!k) {
                if (c != '"' && c != -2)
                    analyze_fail(ANALYZE_ERR_INPUT, "%s: %s JSON at byte %llu: expected a key", path,
                                 c == -1 ? "truncated" : "not", (unsigned long long)analyze_json_offset(j));
                goto fail;
            }
            int is_events = len == 13 && memcmp(k, "\"traceEvents\"", 13) == 0;
            int is_nodes = len == 7 && memcmp(k, "\"nodes\"", 7) == 0;
            int is_devices = (len == 18 && memcmp(k, "\"deviceProperties\"", 18) == 0) ||
                             (len == 19 && memcmp(k, "\"computeProperties\"", 19) == 0); /* Kineto before 1.10 */
            int is_dist = len == 17 && memcmp(k, "\"distributedInfo\"", 17) == 0;
            int is_schema = len == 8 && memcmp(k, "\"schema\"", 8) == 0;
            analyze_json_consume(j, len);
            if (analyze_json_peek(j) != ':') {
                analyze_fail(ANALYZE_ERR_INPUT, "%s: not JSON at byte %llu: expected ':'", path,
                             (unsigned long long)analyze_json_offset(j));
                goto fail;
            }
            analyze_json_skip(j);
            if (is_events || is_nodes) {
                if (saw) {
                    analyze_fail(ANALYZE_ERR_INPUT, "%s: both traceEvents and nodes, or one twice: not a PyTorch trace",
                                 path);
                    goto fail;
                }
                et = is_nodes;
                saw = 1;
                if (stream_array(t, j, et, s))
                    goto fail;
            } else {
                const char *v = analyze_json_value(j, &len);
                if (!v)
                    goto fail;
                if (is_devices || is_dist || is_schema) {
                    json_t *d = json_loadb(v, len, JSON_DECODE_ANY, NULL);
                    if (is_schema)
                        imp_et_schema(s, d);
                    else if (is_devices)
                        devices_of(t, d);
                    else
                        distributed_of(t, d);
                    json_decref(d);
                }
                analyze_json_consume(j, len);
            }
            c = analyze_json_peek(j);
            if (c == ',') {
                analyze_json_skip(j);
                continue;
            }
            if (c == '}') {
                analyze_json_skip(j);
                break;
            }
            if (c != -2)
                analyze_fail(ANALYZE_ERR_INPUT, "%s: %s JSON at byte %llu: expected ',' or '}'", path,
                             c == -1 ? "truncated" : "not", (unsigned long long)analyze_json_offset(j));
            goto fail;
        }
    } else {
        if (c != -1)
            analyze_fail(ANALYZE_ERR_INPUT, "%s: not JSON: it starts with byte 0x%02x", path, (unsigned)c);
        else
            analyze_fail(ANALYZE_ERR_INPUT, "%s: no JSON in the file", path);
        goto fail;
    }
    c = analyze_json_peek(j);
    if (c != -1) {
        if (c != -2)
            analyze_fail(ANALYZE_ERR_INPUT, "%s: not JSON: bytes after the document at byte %llu", path,
                         (unsigned long long)analyze_json_offset(j));
        goto fail;
    }
    if (!saw) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: neither traceEvents nor nodes: not a PyTorch trace", path);
        goto fail;
    }
    if (profile && !et) {
        analyze_fail(ANALYZE_ERR_INPUT, "%s: a profiler trace: --profile links an execution trace", path);
        goto fail;
    }
    if (et && imp_et_finish(t, s))
        goto fail;
    if (resolve(t, et))
        goto fail;
    analyze_json_close(j);
    imp_et_destroy(s);
    return t;
fail:
    analyze_json_close(j);
    imp_et_destroy(s);
    imp_trace_destroy(t);
    return NULL;
}

/* ---- for import_et.c (import_et.h) ---------------------------------------- */

imp_strtab *imp_strtab_create(void) { return strtab_create(); }
void imp_strtab_destroy(imp_strtab *s) { strtab_destroy(s); }
int64_t imp_intern(imp_strtab *s, const char *str, size_t len, int *added) { return intern(s, str, len, added); }
int imp_dtype_of(const char *s) { return dtype_of(s); }
int imp_dtype_size(int dt) { return dtype_size[dt < 0 || dt >= IMP_DTYPE_COUNT ? IMP_DTYPE_OTHER : dt]; }
int imp_arg_of(const json_t *dims, analyze_import_arg *a) { return arg_of(dims, a); }
int64_t imp_keyed_tensor(imp_trace *t, imp_strtab *keys, const char *key, size_t n, int dt, const analyze_import_arg *a)
{
    return keyed_tensor(t, keys, key, n, dt, a);
}
int imp_is_op_name(const char *n) { return is_op_name(n); }
int64_t imp_us_to_ns(const json_t *v) { return us_to_ns(v); }
void imp_scalar_of_json(const json_t *v, const char *type, analyze_import_scalar *sc) { scalar_of_json(v, type, sc); }
int64_t imp_add_proto(imp_trace *t, const char *name, int cls, const analyze_import_arg *in, const int64_t *in_id,
                      size_t nin, const analyze_import_arg *out, const int64_t *out_id, size_t nout,
                      const analyze_import_scalar *sc, size_t nsc, int es)
{
    return add_proto(t, name, cls, in, in_id, nin, out, out_id, nout, sc, nsc, es);
}
int64_t imp_node_of(imp_trace *t, uint32_t proto, int phase) { return node_of(t, proto, phase); }
int64_t imp_track_of(imp_trace *t, const json_t *pid, const json_t *tid, int gpu) { return track_of(t, pid, tid, gpu); }
int imp_add_rec(imp_trace *t, uint64_t b, uint64_t e, uint32_t track, uint32_t ref, int kind)
{
    return add_rec(t, b, e, track, ref, kind);
}
int imp_push_step(imp_trace *t, uint64_t b, uint64_t e, uint32_t num) { return push_step(t, b, e, num); }

int imp_kernel_times(const imp_trace *t, imp_device_time *d)
{
    memset(d, 0, t->nrecs * sizeof *d);
    if (!t->launch)
        return 0;
    /* the records of one launch number: its op and its kernels (the
     * records are in segment order once read: by number, not by search) */
    size_t *op = base_calloc(t->nrecs + 1, sizeof *op);
    if (!op)
        return -1;
    for (size_t i = 0; i < t->nrecs; i++)
        if (t->launch[i] && t->launch[i] <= t->nrecs && !t->tracks[t->recs[i].track].gpu)
            op[t->launch[i]] = i + 1;
    for (size_t i = 0; i < t->nrecs; i++) {
        const imp_rec *r = &t->recs[i];
        if (!t->launch[i] || t->launch[i] > t->nrecs || !t->tracks[r->track].gpu || !op[t->launch[i]])
            continue;
        imp_device_time *x = &d[op[t->launch[i]] - 1];
        uint64_t ns = r->e - r->b;
        if (!x->kernels++ || r->b < x->b)
            x->b = r->b;
        x->ns += ns;
        if (ns >= x->top)
            x->top = ns, x->cls = t->protos[t->nodes[r->ref].proto].cls;
    }
    base_free(op);
    return 0;
}
