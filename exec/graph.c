/* graph.c -- building static graphs: tensors, weights, nodes. */
#include "internal.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>

#define GROW(ptr, n, cap, extra)                                                                         \
    do {                                                                                                 \
        if ((n) + (extra) > (cap)) {                                                                     \
            uint32_t nc = (cap) ? (cap)*2 : 64;                                                          \
            while (nc < (n) + (extra))                                                                   \
                nc *= 2;                                                                                 \
            void *np = base_realloc((ptr), (size_t)nc * sizeof *(ptr));                                  \
            if (!np)                                                                                     \
                return exec_fail(EXEC_ERR_NOMEM, "graph: cannot grow " #ptr);                            \
            memset((char *)np + (size_t)(cap) * sizeof *(ptr), 0, (size_t)(nc - (cap)) * sizeof *(ptr)); \
            (ptr) = np;                                                                                  \
            (cap) = nc;                                                                                  \
        }                                                                                                \
    } while (0)

exec_status exec_graph_create(exec_graph **out, uint64_t seed)
{
    *out = NULL;
    exec_graph *g = base_calloc(1, sizeof *g);
    if (!g)
        return exec_fail(EXEC_ERR_NOMEM, "graph: out of memory");
    static _Atomic uint32_t next_base;
    g->seed = seed;
    uint32_t index = next_base++;
    g->trace_id = index;
    g->trace_base = index * EXEC_MAX_TENSORS % 0xfff00000u;
    g->ntensors = 1; /* id 0 is "none" */
    *out = g;
    return EXEC_OK;
}

void exec_graph_destroy(exec_graph *g)
{
    if (!g)
        return;
    extern void exec_memory_release(exec_graph * g);
    exec_memory_release(g);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        base_free(g->nodes[i].in);
        base_free(g->nodes[i].out);
    }
    base_free(g->nodes);
    base_free(g->tensors);
    base_free(g->weights);
    base_free(g->init);
    base_free(g->init_scale);
    base_free(g->init_value);
    base_free(g->grad);
    base_free(g->order_deps);
    base_free(g->dep_start);
    base_free(g->succ);
    base_free(g->succ_start);
    base_free(g);
}

exec_status exec_graph_status(const exec_graph *g) { return g->status; }

uint32_t exec_graph_fail(exec_graph *g, exec_status s, const char *fmt, ...)
{
    if (g->status == EXEC_OK) {
        char buf[480];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(buf, sizeof buf, fmt, ap);
        va_end(ap);
        exec_fail(s, "%s", buf);
        g->status = s;
    }
    return 0;
}

int64_t exec_numel(int ndim, const int64_t *shape)
{
    int64_t n = 1;
    for (int i = 0; i < ndim; i++)
        n *= shape[i];
    return n;
}

bool exec_same_shape(const exec_tensor *a, const exec_tensor *b)
{
    if (a->ndim != b->ndim)
        return false;
    for (int i = 0; i < a->ndim; i++)
        if (a->shape[i] != b->shape[i])
            return false;
    return true;
}

int64_t exec_bcast_period(const exec_tensor *a, const exec_tensor *b)
{
    if (b->numel == 1)
        return 1;
    if (b->ndim > a->ndim)
        return 0;
    for (int i = 0; i < b->ndim; i++)
        if (b->shape[b->ndim - 1 - i] != a->shape[a->ndim - 1 - i])
            return 0;
    return b->numel;
}

static exec_status grow_tensors(exec_graph *g)
{
    uint32_t cap = g->cap_tensors;
    GROW(g->tensors, g->ntensors, g->cap_tensors, 1);
    if (g->cap_tensors != cap) {
        cap = g->cap_tensors;
        uint32_t c2;
#define GROW_PARALLEL(arr)                                                                      \
    c2 = g->ntensors;                                                                           \
    {                                                                                           \
        void *np = base_realloc(arr, (size_t)cap * sizeof *(arr));                              \
        if (!np)                                                                                \
            return exec_fail(EXEC_ERR_NOMEM, "graph: out of memory");                           \
        memset((char *)np + (size_t)c2 * sizeof *(arr), 0, (size_t)(cap - c2) * sizeof *(arr)); \
        arr = np;                                                                               \
    }
        GROW_PARALLEL(g->init)
        GROW_PARALLEL(g->init_scale)
        GROW_PARALLEL(g->init_value)
        GROW_PARALLEL(g->grad)
#undef GROW_PARALLEL
    }
    return EXEC_OK;
}

uint32_t exec_tensor_new(exec_graph *g, exec_role role, exec_dtype dt, int ndim, const int64_t *shape, const char *name)
{
    if (g->status)
        return 0;
    if (g->planned)
        return exec_graph_fail(g, EXEC_ERR_STATE, "graph: tensor '%s' added after plan", name ? name : "");
    if (ndim < 0 || ndim > EXEC_MAX_DIMS)
        return exec_graph_fail(g, EXEC_ERR_SHAPE, "tensor '%s': %d dims (max %d)", name ? name : "", ndim,
                               EXEC_MAX_DIMS);
    for (int i = 0; i < ndim; i++)
        if (shape[i] <= 0)
            return exec_graph_fail(g, EXEC_ERR_SHAPE, "tensor '%s': dim %d is %lld", name ? name : "", i,
                                   (long long)shape[i]);
    if (g->ntensors >= EXEC_MAX_TENSORS)
        return exec_graph_fail(g, EXEC_ERR_ARG, "graph: more than %u tensors", EXEC_MAX_TENSORS);
    if (grow_tensors(g))
        return exec_graph_fail(g, EXEC_ERR_NOMEM, "%s", exec_errmsg());
    uint32_t id = g->ntensors++;
    exec_tensor *t = &g->tensors[id];
    memset(t, 0, sizeof *t);
    t->id = id;
    t->role = role;
    t->dtype = dt;
    t->ndim = ndim;
    int64_t stride = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        t->shape[i] = shape[i];
        t->strides[i] = stride;
        stride *= shape[i];
    }
    t->numel = stride;
    t->bytes = (size_t)stride * 4; /* f32 and i32 */
    snprintf(t->name, sizeof t->name, "%s", name ? name : "");
    return id;
}

uint32_t exec_input(exec_graph *g, const char *name, exec_dtype dt, int ndim, const int64_t *shape)
{
    return exec_tensor_new(g, EXEC_ROLE_input, dt, ndim, shape, name);
}

uint32_t exec_weight_scaled(exec_graph *g, const char *name, int ndim, const int64_t *shape, exec_init init,
                            float scale)
{
    uint32_t id = exec_tensor_new(g, EXEC_ROLE_weight, EXEC_F32, ndim, shape, name);
    if (!id)
        return 0;
    uint32_t n = g->nweights;
    if (n + 1 > g->cap_weights) {
        uint32_t nc = g->cap_weights ? g->cap_weights * 2 : 32;
        uint32_t *np = base_realloc(g->weights, nc * sizeof *np);
        if (!np)
            return exec_graph_fail(g, EXEC_ERR_NOMEM, "graph: out of memory");
        g->weights = np;
        g->cap_weights = nc;
    }
    g->weights[g->nweights++] = id;
    g->init[id] = (uint8_t)(init + 1);
    g->init_scale[id] = scale;
    return id;
}

uint32_t exec_weight(exec_graph *g, const char *name, int ndim, const int64_t *shape, exec_init init)
{
    return exec_weight_scaled(g, name, ndim, shape, init, 0.0f);
}

uint32_t exec_const(exec_graph *g, const char *name, int ndim, const int64_t *shape, float value)
{
    uint32_t id = exec_tensor_new(g, EXEC_ROLE_input, EXEC_F32, ndim, shape, name);
    if (id) {
        g->init[id] = EXEC_INIT_ZERO + 1;
        g->init_value[id] = value;
    }
    return id;
}

void exec_set_phase(exec_graph *g, exec_phase p) { g->phase = p; }

static exec_status grow_nodes(exec_graph *g)
{
    GROW(g->nodes, g->nnodes, g->cap_nodes, 1);
    return EXEC_OK;
}

static uint32_t node_append(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs,
                            int nout, exec_node **out)
{
    if ((unsigned)op >= EXEC_OP_COUNT)
        return exec_graph_fail(g, EXEC_ERR_ARG, "graph: op %d out of range", (int)op);
    const exec_op_info *info = &exec_op_table[op];
    if ((info->nin >= 0 && nin != info->nin) || (info->nin < 0 && nin < 1))
        return exec_graph_fail(g, EXEC_ERR_ARG, "%s: %d inputs (wants %d)", info->name, nin, info->nin);
    if (nattrs < 0 || nattrs > EXEC_MAX_ATTRS)
        return exec_graph_fail(g, EXEC_ERR_ARG, "%s: %d attributes (max %d)", info->name, nattrs, EXEC_MAX_ATTRS);
    for (int i = 0; i < nin; i++)
        if (in[i] == 0 || in[i] >= g->ntensors)
            return exec_graph_fail(g, EXEC_ERR_ARG, "%s: input %d is not a tensor (id %u)", info->name, i, in[i]);
    if (grow_nodes(g))
        return exec_graph_fail(g, EXEC_ERR_NOMEM, "%s: out of memory", info->name);
    exec_node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->in = base_malloc((size_t)(nin ? nin : 1) * sizeof *n->in);
    n->out = base_malloc((size_t)(nout ? nout : 1) * sizeof *n->out);
    if (!n->in || !n->out) {
        base_free(n->in);
        base_free(n->out);
        return exec_graph_fail(g, EXEC_ERR_NOMEM, "%s: out of memory", info->name);
    }
    n->id = g->nnodes;
    n->op = op;
    n->phase = g->phase;
    n->nin = nin;
    n->nout = nout;
    n->nattrs = nattrs;
    if (nin)
        memcpy(n->in, in, (size_t)nin * sizeof *in);
    if (nattrs)
        memcpy(n->attrs, attrs, (size_t)nattrs * sizeof *attrs);
    *out = n;
    return 1;
}

uint32_t exec_op_add(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs,
                     uint32_t *out)
{
    if (g->status)
        return 0;
    if (g->planned)
        return exec_graph_fail(g, EXEC_ERR_STATE, "graph: node added after plan");
    const exec_op_info *info = (unsigned)op < EXEC_OP_COUNT ? &exec_op_table[op] : NULL;
    int nout = info ? (info->nout == -1 ? nin : info->nout) : 0;
    if (info && info->nout == -2) { /* output count from attrs[1] (Split) */
        if (nattrs < 2 || attrs[1] < 1 || attrs[1] > 4096)
            return exec_graph_fail(g, EXEC_ERR_ARG, "%s: attribute 1 must give the output count (1..4096)", info->name);
        nout = (int)attrs[1];
    }
    exec_node *n = NULL;
    if (!node_append(g, op, nin, in, nattrs, attrs, nout, &n))
        return 0;
    exec_shape shapes[nout > 0 ? nout : 1];
    memset(shapes, 0, sizeof shapes);
    exec_status s = info->shape(g, n, shapes);
    if (s) {
        base_free(n->in);
        base_free(n->out);
        return exec_graph_fail(g, s, "%s", exec_errmsg());
    }
    for (int i = 0; i < nout; i++) {
        exec_role role = g->phase == EXEC_PHASE_forward    ? EXEC_ROLE_activation
                         : g->phase == EXEC_PHASE_backward ? EXEC_ROLE_gradient
                                                           : EXEC_ROLE_optimizer;
        char name[48];
        snprintf(name, sizeof name, "%s:%u:%d", info->name, g->nnodes, i);
        uint32_t id = exec_tensor_new(g, role, shapes[i].dtype, shapes[i].ndim, shapes[i].d, name);
        n = &g->nodes[g->nnodes]; /* tensors may not move nodes, but stay safe */
        if (!id) {
            base_free(n->in);
            base_free(n->out);
            return 0;
        }
        n->out[i] = id;
        if (out)
            out[i] = id;
    }
    g->nnodes++;
    return nout > 0 ? n->out[0] : 0;
}

uint32_t exec_op_add_inplace(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs,
                             int nout, const uint32_t *out)
{
    if (g->status)
        return 0;
    if (g->planned)
        return exec_graph_fail(g, EXEC_ERR_STATE, "graph: node added after plan");
    for (int i = 0; i < nout; i++)
        if (out[i] == 0 || out[i] >= g->ntensors)
            return exec_graph_fail(g, EXEC_ERR_ARG, "in-place node: output %d is not a tensor", i);
    exec_node *n = NULL;
    if (!node_append(g, op, nin, in, nattrs, attrs, nout, &n))
        return 0;
    memcpy(n->out, out, (size_t)nout * sizeof *out);
    exec_shape shapes[nout > 0 ? nout : 1];
    exec_status s = exec_op_table[op].shape(g, n, shapes);
    if (s) {
        base_free(n->in);
        base_free(n->out);
        return exec_graph_fail(g, s, "%s", exec_errmsg());
    }
    g->nnodes++;
    return nout > 0 ? out[0] : 0;
}

uint32_t exec_op1(exec_graph *g, exec_op op, int nin, const uint32_t *in, int nattrs, const int64_t *attrs)
{
    return exec_op_add(g, op, nin, in, nattrs, attrs, NULL);
}

exec_tensor *exec_tensor_get(const exec_graph *g, uint32_t id)
{
    if (!id || id >= g->ntensors)
        return NULL;
    g->tensors[id].version = exec_version_next();
    return &g->tensors[id];
}
exec_status exec_tensor_keep(exec_graph *g, uint32_t id)
{
    if (!id || id >= g->ntensors)
        return exec_fail(EXEC_ERR_ARG, "keep: no tensor %u", id);
    if (g->planned)
        return exec_fail(EXEC_ERR_STATE, "keep: tensor %u of a planned graph", id);
    g->tensors[id].kept = true;
    return EXEC_OK;
}
uint32_t exec_tensor_count(const exec_graph *g) { return g->ntensors - 1; }
const exec_node *exec_node_get(const exec_graph *g, uint32_t i) { return i < g->nnodes ? &g->nodes[i] : NULL; }
uint32_t exec_node_count(const exec_graph *g) { return g->nnodes; }
void *exec_data(const exec_graph *g, uint32_t id)
{
    exec_tensor *t = exec_tensor_get(g, id);
    return t ? t->data : NULL;
}
float *exec_dataf(const exec_graph *g, uint32_t id) { return exec_data(g, id); }
int32_t *exec_datai(const exec_graph *g, uint32_t id) { return exec_data(g, id); }
uint32_t exec_weight_count(const exec_graph *g) { return g->nweights; }
uint32_t exec_weight_id(const exec_graph *g, uint32_t i) { return i < g->nweights ? g->weights[i] : 0; }

int64_t exec_param_count(const exec_graph *g)
{
    int64_t n = 0;
    for (uint32_t i = 0; i < g->nweights; i++)
        n += g->tensors[g->weights[i]].numel;
    return n;
}

uint32_t exec_grad_of(const exec_graph *g, uint32_t tensor)
{
    return g->grad && tensor < g->ntensors ? g->grad[tensor] : 0;
}

void exec_grad_set(exec_graph *g, uint32_t tensor, uint32_t grad)
{
    if (tensor < g->ntensors)
        g->grad[tensor] = grad;
}

exec_status exec_op_add_recorded(exec_graph *g, exec_op op, exec_phase phase, int nin, const uint32_t *in, int nattrs,
                                 const int64_t *attrs, int nout, const uint32_t *out)
{
    if (g->status)
        return g->status;
    if ((unsigned)op >= EXEC_OP_COUNT)
        return exec_graph_fail(g, EXEC_ERR_ARG, "op %d out of range", (int)op), g->status;
    const exec_op_info *info = &exec_op_table[op];
    int want = info->nout >= 0 ? info->nout : info->nout == -1 ? nin : nout;
    if (nout != want)
        return exec_graph_fail(g, EXEC_ERR_ARG, "%s: %d outputs (wants %d)", info->name, nout, want), g->status;
    for (int i = 0; i < nout; i++)
        if (out[i] == 0 || out[i] >= g->ntensors)
            return exec_graph_fail(g, EXEC_ERR_ARG, "%s: output %d is not a tensor", info->name, i), g->status;
    exec_node *n = NULL;
    if (!node_append(g, op, nin, in, nattrs, attrs, nout, &n))
        return g->status;
    n->phase = phase;
    memcpy(n->out, out, (size_t)nout * sizeof *out);
    exec_shape shapes[nout > 0 ? nout : 1];
    memset(shapes, 0, sizeof shapes);
    exec_status s = info->shape(g, n, shapes);
    for (int i = 0; i < nout && !s; i++) {
        int inplace = 0;
        for (int j = 0; j < nin; j++)
            inplace |= in[j] == out[i];
        if (inplace)
            continue;
        const exec_tensor *t = &g->tensors[out[i]];
        int same = t->dtype == shapes[i].dtype && t->ndim == shapes[i].ndim;
        for (int d = 0; same && d < t->ndim; d++)
            same = t->shape[d] == shapes[i].d[d];
        if (!same)
            s = exec_fail(EXEC_ERR_SHAPE, "%s: recorded output %d's shape or dtype differs from what the op computes",
                          info->name, i);
    }
    if (s) {
        base_free(n->in);
        base_free(n->out);
        return exec_graph_fail(g, s, "%s", exec_errmsg()), g->status;
    }
    g->nnodes++;
    return EXEC_OK;
}

uint32_t exec_trace_tensor_id(const exec_graph *g, uint32_t id) { return g->trace_base + id; }
uint32_t exec_trace_graph_id(const exec_graph *g) { return g->trace_id; }
