/* program.c -- turning a recorded op program into an engine graph. */
#include "replay/program.h"

#include "base/alloc.h"
#include "base/error.h"
#include "replay/imported.h"
#include "exec/rng.h"

#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

exec_status replay_program_init(replay_program *p)
{
    memset(p, 0, sizeof *p);
    return EXEC_OK;
}

void replay_program_destroy(replay_program *p)
{
    for (uint32_t i = 0; i < p->nops; i++) {
        base_free(p->ops[i].in_more);
        base_free(p->ops[i].out_more);
    }
    base_free(p->tensors);
    base_free(p->ops);
    base_free(p->unknown);
    base_free(p->dev);
    base_free(p->step_first);
    base_free(p->kept_ids);
    base_free(p->kept);
    exec_graph_destroy(p->g);
    memset(p, 0, sizeof *p);
}

exec_status replay_program_keep_ops(replay_program *p, uint32_t a, uint32_t b)
{
    if (a < 1 || b < a || a > p->nops)
        return exec_fail(EXEC_ERR_ARG, "--ops %u-%u: the trace has ops 1 to %u", a, b, p->nops);
    if (b > p->nops)
        b = p->nops;
    for (uint32_t k = 0; k < p->nops; k++)
        if (k < a - 1 || k >= b) {
            base_free(p->ops[k].in_more);
            base_free(p->ops[k].out_more);
        }
    memmove(p->ops, p->ops + (a - 1), (size_t)(b - a + 1) * sizeof *p->ops);
    p->nops = b - a + 1;
    /* the range is one pass: its recorded time is its ops'; device time
     * is measured per step, none of it is the range's */
    for (uint32_t i = 0; i < p->ndev; i++)
        p->dev[i].ns = 0;
    p->rec_dev_ns = 0;
    p->nsteps = 0;
    p->rec_step_ns = p->rec_op_ns = 0;
    for (uint32_t k = 0; k < p->nops; k++) {
        p->ops[k].step = 0;
        p->rec_op_ns += p->ops[k].rec_ns;
    }
    return EXEC_OK;
}

exec_status replay_program_add_tensor(replay_program *p, const replay_tensor *t)
{
    if (t->ndim < 0 || t->ndim > EXEC_MAX_DIMS)
        return exec_fail(EXEC_ERR_ARG, "tensor %u: %d dimensions (at most %d)", t->id, t->ndim, EXEC_MAX_DIMS);
    if ((unsigned)t->role >= EXEC_ROLE_COUNT || (unsigned)t->dtype >= EXEC_DTYPE_COUNT)
        return exec_fail(EXEC_ERR_ARG, "tensor %u: unknown role or dtype", t->id);
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] <= 0 || t->shape[d] > (1ll << 32))
            return exec_fail(EXEC_ERR_ARG, "tensor %u: dimension %d is %lld", t->id, d, (long long)t->shape[d]);
    if (base_grow(&p->tensors, &p->cap_tensors, (size_t)p->ntensors + 1, sizeof *p->tensors))
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    p->tensors[p->ntensors++] = *t;
    return EXEC_OK;
}

static uint32_t *op_ids(replay_op *o, int out)
{
    return out ? (o->out_more ? o->out_more : o->out) : (o->in_more ? o->in_more : o->in);
}

/* Room for one more op in p. */
static exec_status ops_grow(replay_program *p)
{
    if (base_grow(&p->ops, &p->cap_ops, (size_t)p->nops + 1, sizeof *p->ops))
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    return EXEC_OK;
}

/* Appends an op of the engine (fw NULL: op) or of a framework (fw), its
 * phase by name, after checking the counts; `name` names it in errors. */
static exec_status op_append(replay_program *p, const char *name, exec_op op, const replay_fw_op *fw, const char *phase,
                             uint32_t step, int nin, const uint32_t *in, int nout, const uint32_t *out, int nattrs,
                             const int64_t *attrs, uint64_t rec_ns)
{
    int ph = -1;
    for (int i = 0; i < EXEC_PHASE_COUNT; i++)
        if (strcmp(phase, exec_phase_name((exec_phase)i)) == 0)
            ph = i;
    if (ph < 0)
        return exec_fail(EXEC_ERR_ARG, "%s: unknown phase '%s'", name, phase);
    if (nattrs < 0 || nattrs > EXEC_MAX_ATTRS)
        return exec_fail(EXEC_ERR_ARG, "%s: %d attributes (at most %d)", name, nattrs, EXEC_MAX_ATTRS);
    if (nin < 0 || nout < 0 || nin > 4096 || nout > 4096)
        return exec_fail(EXEC_ERR_ARG, "%s: %d inputs, %d outputs", name, nin, nout);
    exec_status s = ops_grow(p);
    if (s)
        return s;
    replay_op *o = &p->ops[p->nops];
    memset(o, 0, sizeof *o);
    o->op = op;
    o->fw = fw;
    o->phase = (exec_phase)ph;
    o->step = step;
    o->nin = nin;
    o->nout = nout;
    o->nattrs = nattrs;
    o->rec_ns = rec_ns;
    o->unknown = -1;
    o->node = UINT32_MAX; /* until the graph is built */
    if (nin > EXEC_MAX_ATTRS && !(o->in_more = base_malloc((size_t)nin * sizeof *in)))
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    if (nout > EXEC_MAX_ATTRS && !(o->out_more = base_malloc((size_t)nout * sizeof *out))) {
        base_free(o->in_more);
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    }
    if (nin)
        memcpy(op_ids(o, 0), in, (size_t)nin * sizeof *in);
    if (nout)
        memcpy(op_ids(o, 1), out, (size_t)nout * sizeof *out);
    if (nattrs)
        memcpy(o->attrs, attrs, (size_t)nattrs * sizeof *attrs);
    p->nops++;
    return EXEC_OK;
}

exec_status replay_program_add_op(replay_program *p, const char *op_name, const char *phase, uint32_t step, int nin,
                                  const uint32_t *in, int nout, const uint32_t *out, int nattrs, const int64_t *attrs,
                                  uint64_t rec_ns)
{
    int op = exec_op_from_name(op_name);
    if (op < 0)
        return exec_fail(EXEC_ERR_ARG, "op '%s' is not known to this version of fathom", op_name);
    return op_append(p, op_name, (exec_op)op, NULL, phase, step, nin, in, nout, out, nattrs, attrs, rec_ns);
}

exec_status replay_program_add_framework(replay_program *p, const replay_fw_op *fw, const char *phase, uint32_t step,
                                         int nin, const uint32_t *in, int nout, const uint32_t *out, int nattrs,
                                         const int64_t *attrs, uint64_t rec_ns)
{
    return op_append(p, fw->name, (exec_op)0, fw, phase, step, nin, in, nout, out, nattrs, attrs, rec_ns);
}

exec_status replay_program_add_unknown(replay_program *p, const char *op_name, uint32_t step, uint64_t rec_ns)
{
    uint32_t u = 0;
    while (u < p->nunknown && strcmp(p->unknown[u].name, op_name) != 0)
        u++;
    if (u == p->nunknown) {
        if (p->nunknown >= 4096)
            return exec_fail(EXEC_ERR_ARG, "the trace names more than 4096 op types this version does not know");
        replay_unknown *nu = base_realloc(p->unknown, (p->nunknown + 1) * sizeof *nu);
        if (!nu)
            return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
        p->unknown = nu;
        snprintf(p->unknown[p->nunknown++].name, sizeof nu->name, "%s", op_name);
    }
    exec_status s = ops_grow(p);
    if (s)
        return s;
    replay_op *o = &p->ops[p->nops++];
    memset(o, 0, sizeof *o);
    o->step = step;
    o->rec_ns = rec_ns;
    o->unknown = (int)u;
    o->node = UINT32_MAX;
    return EXEC_OK;
}

/* The number of attributes an op's layout (exec_op_info.attrs, e.g.
 * "stride_h,stride_w,pad_h,pad_w" or "lr(f),momentum(f)") fixes, or -1 where
 * the layout has a variable part ("axis...", "dims..."). Parenthesized notes
 * do not count. */
static int layout_count(const char *layout)
{
    int n = 0, depth = 0, in_name = 0;
    if (strstr(layout, "..."))
        return -1;
    for (const char *c = layout; *c; c++) {
        if (*c == '(')
            depth++;
        else if (*c == ')')
            depth -= depth > 0;
        else if (depth == 0 && *c == ',')
            in_name = 0;
        else if (depth == 0 && *c != ' ' && !in_name)
            in_name = 1, n++;
    }
    return n;
}

/* The bytes of recorded tensor t as replayed (float32 and int32), saturating. */
static uint64_t tensor_bytes(const replay_tensor *t)
{
    uint64_t b = 4;
    for (int d = 0; d < t->ndim; d++)
        b = (uint64_t)t->shape[d] > UINT64_MAX / b ? UINT64_MAX : b * (uint64_t)t->shape[d];
    return b;
}

static uint32_t *op_ids(replay_op *o, int out);
static replay_tensor *find(replay_program *p, uint32_t id);

/* The most bytes the recorded tensors hold at once: each is live from an
 * op that writes it (or the first op that names it) to the last op that
 * reads it before the next write (a buffer is free again once its last
 * reader ran; a recording writes the same tensors again every step); *at:
 * the op where the peak is. Tensors no op names count nothing.
 * Saturating. */
static uint64_t live_peak(replay_program *p, uint32_t *at)
{
    uint32_t *first = base_malloc((p->ntensors + 1) * sizeof *first),
             *last = base_malloc((p->ntensors + 1) * sizeof *last);
    int64_t *delta = base_calloc(p->nops + 1, sizeof *delta);
    uint64_t peak = 0;
    int absurd = 0;
    *at = 0;
    if (!first || !last || !delta) {
        base_free(first), base_free(last), base_free(delta);
        return UINT64_MAX;
    }
    /* a range ends: its bytes live from its first op to its last */
#define END_RANGE(j)                                    \
    do {                                                \
        uint64_t b_ = tensor_bytes(&p->tensors[j]);     \
        absurd |= b_ > (UINT64_C(1) << 60);             \
        delta[first[j]] += absurd ? 0 : (int64_t)b_;    \
        delta[last[j] + 1] -= absurd ? 0 : (int64_t)b_; \
    } while (0)
    for (uint32_t i = 0; i < p->ntensors; i++)
        first[i] = UINT32_MAX, last[i] = 0;
    for (uint32_t k = 0; k < p->nops; k++) {
        replay_op *o = &p->ops[k];
        for (int side = 0; side < 2; side++)
            for (int i = 0; i < (side ? o->nout : o->nin); i++) {
                replay_tensor *t = find(p, op_ids(o, side)[i]);
                if (!t)
                    continue;
                size_t j = (size_t)(t - p->tensors);
                if (first[j] == UINT32_MAX) {
                    first[j] = k;
                } else if (side && last[j] != k) { /* written again: a new range */
                    END_RANGE(j);
                    first[j] = k;
                }
                last[j] = k;
            }
    }
    for (uint32_t i = 0; i < p->ntensors; i++)
        if (first[i] != UINT32_MAX)
            END_RANGE(i);
#undef END_RANGE
    /* bytes live at op k: what began at or before k less what ended
     * before k, one pass over per-op changes */
    uint64_t live = 0;
    for (uint32_t k = 0; k < p->nops && !absurd; k++) {
        live += (uint64_t)delta[k];
        if (live > peak)
            peak = live, *at = k;
    }
    base_free(first), base_free(last), base_free(delta);
    return absurd ? UINT64_MAX : peak;
}

static int cmp_tensor(const void *a, const void *b)
{
    uint32_t x = ((const replay_tensor *)a)->id, y = ((const replay_tensor *)b)->id;
    return x < y ? -1 : x > y;
}

static replay_tensor *find(replay_program *p, uint32_t id)
{
    replay_tensor key = { .id = id };
    if (!p->ntensors)
        return NULL;
    return bsearch(&key, p->tensors, p->ntensors, sizeof key, cmp_tensor);
}

/* ---- synthetic inputs ------------------------------------------------------
 * A tensor that the program reads before any op writes it (a graph input, a
 * weight, optimizer state) gets synthetic data of its recorded shape. Most
 * get small normal values; the consumers below need a valid domain. */
typedef enum domain {
    DOM_ANY,
    DOM_POSITIVE,
    DOM_UNIT,
    DOM_BOOL,
    DOM_INDEX_DIM,
    DOM_INDEX_ATTR,
    DOM_FULL_LENGTH,
    DOM_LABEL_LENGTH
} domain;

static const struct input_rule {
    const char *op;
    int input;
    domain dom;
    int ref_input, ref_dim; /* DOM_INDEX_DIM: [0, shape(in[ref_input])[ref_dim]); DOM_INDEX_ATTR: [0, attrs[ref_dim]) */
} input_rules[] = {
    { "Gather", 1, DOM_INDEX_DIM, 0, 0 },
    { "UnsortedSegmentSum", 1, DOM_INDEX_ATTR, 0, 0 },
    { "SparseSoftmaxCrossEntropyWithLogits", 1, DOM_INDEX_DIM, 0, 1 },
    { "LabelSmoothedCrossEntropy", 1, DOM_INDEX_DIM, 0, 1 },
    { "SampledSoftmaxLoss", 3, DOM_INDEX_DIM, 0, 0 },
    { "CTCLoss", 1, DOM_INDEX_DIM, 0, -1 }, /* labels below the blank (C-1) */
    { "CTCLoss", 2, DOM_LABEL_LENGTH, 1, 1 },
    { "CTCLoss", 3, DOM_FULL_LENGTH, 0, 0 },
    { "CTCGreedyDecoder", 1, DOM_FULL_LENGTH, 0, 0 },
    { "Log", 0, DOM_POSITIVE, 0, 0 },
    { "Sqrt", 0, DOM_POSITIVE, 0, 0 },
    { "Pow", 0, DOM_POSITIVE, 0, 0 },
    { "Select", 0, DOM_BOOL, 0, 0 },
    { "FusedBatchNorm", 4, DOM_POSITIVE, 0, 0 },
    { "FusedBatchNormGrad", 4, DOM_POSITIVE, 0, 0 },
    { "LayerNormGrad", 4, DOM_POSITIVE, 0, 0 }, /* inv_std */
    { "ApplyAdam", 3, DOM_UNIT, 0, 0 },
    { "ApplyRMSProp", 1, DOM_POSITIVE, 0, 0 },
    { "Div", 1, DOM_POSITIVE, 0, 0 },
};

/* The rule for a tensor read first as input `i` of op `op`, if any. */
static const struct input_rule *rule_for(exec_op op, int i)
{
    const char *name = exec_op_name(op);
    for (size_t r = 0; r < sizeof input_rules / sizeof input_rules[0]; r++)
        if (input_rules[r].input == i && strcmp(input_rules[r].op, name) == 0)
            return &input_rules[r];
    return NULL;
}

/* The spread of a tensor's plain values. Weights as the workloads initialise
 * them (Glorot: sd sqrt(2 / (fan_in + fan_out)); [in, out] matrices and
 * [OC, C, KH, KW] filters), so that activations, and with them the cost of
 * data-dependent kernels (tanh, exp, sigmoid), have their trained range;
 * biases and other vectors small; inputs and state of unit order. */
static float fill_scale(const exec_tensor *t)
{
    if (t->role != EXEC_ROLE_weight)
        return 0.5f;
    if (t->ndim < 2)
        return 0.01f;
    double rf = 1.0; /* receptive field of a filter */
    for (int d = 2; d < t->ndim; d++)
        rf *= (double)t->shape[d];
    double fan_a = (double)t->shape[0] * rf, fan_b = (double)t->shape[1] * rf;
    return (float)sqrt(2.0 / (fan_a + fan_b));
}

/* Fills t, read first by node n as the input `r` describes. */
static void fill_tensor(const exec_graph *g, const exec_tensor *t, const exec_node *n, const struct input_rule *r,
                        exec_rng *rng)
{
    int64_t lo = 0, hi = 1;
    if (r && (r->dom == DOM_INDEX_DIM || r->dom == DOM_FULL_LENGTH || r->dom == DOM_LABEL_LENGTH)) {
        const exec_tensor *ref = exec_tensor_get(g, n->in[r->ref_input]);
        int dim = r->ref_dim < 0 ? ref->ndim - 1 : r->ref_dim;
        hi = ref->shape[dim] - (r->ref_dim < 0 ? 1 : 0); /* CTC: below the blank */
        if (r->dom == DOM_LABEL_LENGTH)
            lo = hi / 2 > 0 ? hi / 2 : 1;
        if (hi < 1)
            hi = 1;
    } else if (r && r->dom == DOM_INDEX_ATTR) {
        hi = n->attrs[r->ref_dim] > 0 ? n->attrs[r->ref_dim] : 1;
    }
    float scale = fill_scale(t);
    for (int64_t e = 0; e < t->numel; e++) {
        if (t->dtype == EXEC_I32) {
            int32_t v = 0;
            if (r && r->dom == DOM_FULL_LENGTH)
                v = (int32_t)hi;
            else if (r && (r->dom == DOM_INDEX_DIM || r->dom == DOM_INDEX_ATTR || r->dom == DOM_LABEL_LENGTH))
                v = (int32_t)(lo + exec_rng_below(rng, (uint32_t)(hi - lo)));
            ((int32_t *)t->data)[e] = v;
        } else {
            float v;
            switch (r ? r->dom : DOM_ANY) {
            case DOM_POSITIVE: v = 0.5f + exec_rng_uniform(rng); break;
            case DOM_UNIT: v = 0.5f + 0.4f * exec_rng_uniform(rng); break;
            case DOM_BOOL: v = exec_rng_uniform(rng) < 0.5f ? 0.0f : 1.0f; break;
            default: v = scale * exec_rng_normal(rng); break;
            }
            ((float *)t->data)[e] = v;
        }
    }
}

/* ---- framework ops (imported traces) ---------------------------------------
 * Their tensors come from two pools: inputs, one per distinct dtype, shape
 * and value domain (filled once, never written: every reader gets valid
 * values), and outputs, one per distinct dtype and shape (written, never
 * read). */
typedef struct pool_entry {
    int out;
    exec_dtype dtype;
    int ndim;
    int64_t shape[EXEC_MAX_DIMS];
    const struct input_rule *rule;
    int64_t bound;
    uint32_t id;
} pool_entry;

typedef struct pool {
    pool_entry *e;
    uint32_t n, cap;
} pool;

static uint32_t pool_get(exec_graph *g, pool *pl, int out, exec_dtype dt, int ndim, const int64_t *shape,
                         const struct input_rule *rule, int64_t bound)
{
    for (uint32_t i = 0; i < pl->n; i++) {
        const pool_entry *e = &pl->e[i];
        if (e->out == out && e->dtype == dt && e->ndim == ndim && e->rule == rule && e->bound == bound &&
            memcmp(e->shape, shape, (size_t)ndim * sizeof *shape) == 0)
            return e->id;
    }
    if (pl->n == pl->cap) {
        uint32_t nc = pl->cap ? pl->cap * 2 : 64;
        pool_entry *ne = base_realloc(pl->e, nc * sizeof *ne);
        if (!ne) {
            exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
            return 0;
        }
        pl->e = ne;
        pl->cap = nc;
    }
    char name[32];
    snprintf(name, sizeof name, "%s%u", out ? "fw_out" : "fw_in", pl->n);
    uint32_t id = exec_tensor_new(g, EXEC_ROLE_activation, dt, ndim, shape, name);
    if (!id) {
        exec_fail(exec_graph_status(g), "%s", exec_errmsg());
        return 0;
    }
    pool_entry *e = &pl->e[pl->n++];
    memset(e, 0, sizeof *e);
    e->out = out, e->dtype = dt, e->ndim = ndim, e->rule = rule, e->bound = bound, e->id = id;
    memcpy(e->shape, shape, (size_t)ndim * sizeof *shape);
    return id;
}

/* The bound a rule's values depend on (an index range), for the pool key. */
static int64_t rule_bound(const struct input_rule *r, const replay_fw_node *n)
{
    if (!r)
        return 0;
    if (r->dom == DOM_INDEX_ATTR)
        return r->ref_dim < n->nattrs ? n->attrs[r->ref_dim] : 0;
    if (r->dom == DOM_INDEX_DIM || r->dom == DOM_FULL_LENGTH || r->dom == DOM_LABEL_LENGTH) {
        if (r->ref_input >= n->nin)
            return 0;
        int nd = n->in[r->ref_input].ndim, d = r->ref_dim < 0 ? nd - 1 : r->ref_dim;
        return d >= 0 && d < nd ? n->in[r->ref_input].shape[d] : 0;
    }
    return 0;
}

static const char R_NO_TENSORS[] = "inputs not recorded";
static const char R_NO_FIT[] = "shapes do not fit the engine op";

/* The number of elements of recorded output i of o; -1 if not recorded or
 * of no dimension (a scalar, or an output the framework left undefined). */
static int64_t out_numel(replay_program *p, replay_op *o, int i)
{
    const replay_tensor *t = i < o->nout ? find(p, op_ids(o, 1)[i]) : NULL;
    if (!t || !t->ndim)
        return -1;
    int64_t e = 1;
    for (int d = 0; d < t->ndim; d++)
        e *= t->shape[d];
    return e;
}

static int64_t shape_numel(const exec_shape *s)
{
    int64_t e = 1;
    for (int d = 0; d < s->ndim; d++)
        e *= s->d[d];
    return e;
}

/* The recorded shapes of tensor ids[0..n) into args; a tensor the trace
 * left out (an empty one, one of more dimensions than the engine's) as a
 * scalar: the planners that need it find it does not fit. */
static void fw_args(replay_program *p, replay_op *o, const uint32_t *ids, int n, replay_fw_arg *args)
{
    for (int i = 0; i < n; i++) {
        const replay_tensor *t = find(p, ids[i]);
        args[i].ndim = t ? t->ndim : 0;
        if (t) {
            memcpy(args[i].shape, t->shape, sizeof t->shape);
            o->converted |= t->converted;
        }
    }
}

/* Framework op o (program op k) as engine nodes, or demoted (o->why). */
static exec_status add_framework(replay_program *p, replay_op *o, pool *pl, replay_fw_plan *plan)
{
    replay_fw_arg args[o->nin ? o->nin : 1], outs[o->nout ? o->nout : 1];
    o->nnodes = 0;
    o->why = NULL;
    int missing = 0;
    for (int i = 0; i < o->nin; i++)
        missing += !find(p, op_ids(o, 0)[i]);
    if (missing == o->nin && o->nin) {
        o->why = R_NO_TENSORS;
        return EXEC_OK;
    }
    fw_args(p, o, op_ids(o, 0), o->nin, args);
    int nout = 0; /* the recorded outputs, up to the first the trace left out */
    while (nout < o->nout && find(p, op_ids(o, 1)[nout]))
        nout++;
    fw_args(p, o, op_ids(o, 1), nout, outs);
    int training = strcmp(p->rec.mode, "train") == 0;
    if ((o->why = replay_fw_plan_of(o->fw, o->nin, args, nout, outs, o->nattrs, o->attrs, training, plan)))
        return EXEC_OK;
    const int nn = plan->nnodes;
    uint32_t in[nn][REPLAY_FW_MAX_IN];
    exec_shape shapes[nn][4];
    for (int k = 0; k < nn; k++) {
        const replay_fw_node *pn = &plan->node[k];
        const exec_op_info *info = &exec_op_table[pn->op];
        if (info->nin != pn->nin || info->nout < 1 || info->nout > 4) {
            o->why = R_NO_FIT;
            return EXEC_OK;
        }
        for (int i = 0; i < pn->nin; i++) {
            const struct input_rule *r = rule_for(pn->op, i);
            if (!(in[k][i] =
                      pool_get(p->g, pl, 0, pn->in[i].dtype, pn->in[i].ndim, pn->in[i].shape, r, rule_bound(r, pn))))
                return exec_graph_status(p->g) ? exec_graph_status(p->g) : EXEC_ERR_NOMEM;
        }
        /* the engine's shape rule on a node not yet in the graph: the op
         * runs only with shapes its kernels accept */
        exec_node tmp = {
            .op = pn->op, .phase = o->phase, .nin = pn->nin, .in = in[k], .nattrs = pn->nattrs, .nout = info->nout
        };
        memcpy(tmp.attrs, pn->attrs, sizeof tmp.attrs);
        memset(shapes[k], 0, sizeof shapes[k]);
        if (info->shape(p->g, &tmp, shapes[k])) {
            o->why = R_NO_FIT;
            return EXEC_OK;
        }
    }
    /* recorded outputs (an execution trace's) say what the framework
     * computed: a convolution backward whose first output (the input's
     * gradient) is undefined computed the filter's alone (its output mask),
     * and the filter's alone runs. Any other output of another size than
     * the engine's is another computation (a transposed convolution):
     * demoted. Reductions are excepted (their axes are not recorded: they
     * reduce all). */
    const replay_tensor *out0 = o->nout >= 1 ? find(p, op_ids(o, 1)[0]) : NULL;
    int skip = 0, first = 0;
    if (nn == 2 && plan->outs == REPLAY_FW_OUT_EACH && out0 && out0->ndim == 0) {
        first = 1;
        skip = 1;
    }
    for (int k = first; k < nn && plan->outs != REPLAY_FW_OUT_NONE; k++) {
        if (plan->outs == REPLAY_FW_OUT_LAST && k != nn - 1)
            continue;
        exec_op op = plan->node[k].op;
        int64_t want = out_numel(p, o, plan->outs == REPLAY_FW_OUT_LAST ? 0 : k - first + skip);
        if (want >= 0 && op != EXEC_OP_Sum && op != EXEC_OP_Mean && op != EXEC_OP_Max &&
            want != shape_numel(&shapes[k][0])) {
            o->why = R_NO_FIT;
            return EXEC_OK;
        }
    }
    for (int k = first; k < nn; k++) {
        const replay_fw_node *pn = &plan->node[k];
        int nout = exec_op_table[pn->op].nout;
        uint32_t out[4];
        for (int i = 0; i < nout; i++)
            if (!(out[i] = pool_get(p->g, pl, 1, shapes[k][i].dtype, shapes[k][i].ndim, shapes[k][i].d, NULL, 0)))
                return exec_graph_status(p->g) ? exec_graph_status(p->g) : EXEC_ERR_NOMEM;
        uint32_t node = exec_node_count(p->g);
        exec_status s = exec_op_add_recorded(p->g, pn->op, o->phase, pn->nin, in[k], pn->nattrs, pn->attrs, nout, out);
        if (s)
            return exec_fail(s, "%s as %s: %s", o->fw->name, exec_op_name(pn->op), exec_errmsg());
        if (k == first)
            o->node = node;
        o->nnodes++;
    }
    return EXEC_OK;
}

/* The filled tensors whose storage a node writes (over filled, which it
 * clears for the others), and their bytes now (replay_program.kept). */
static exec_status keep_state(replay_program *p, uint8_t *filled)
{
    const uint32_t nt = exec_tensor_count(p->g) + 1;
    uint8_t *hit = base_calloc(nt, 1); /* storages written */
    if (!hit)
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    for (uint32_t nd = 0; nd < exec_node_count(p->g); nd++) {
        const exec_node *n = exec_node_get(p->g, nd);
        for (int i = 0; i < n->nout; i++)
            hit[exec_tensor_get(p->g, n->out[i])->storage] = 1;
    }
    size_t bytes = 0;
    uint32_t n = 0;
    for (uint32_t id = 1; id < nt; id++) {
        const exec_tensor *t = exec_tensor_get(p->g, id);
        filled[id] = filled[id] && hit[t->storage];
        n += filled[id], bytes += filled[id] ? t->bytes : 0;
    }
    base_free(hit);
    if (!n)
        return EXEC_OK;
    if (!(p->kept_ids = base_calloc(n, sizeof *p->kept_ids)) || !(p->kept = base_malloc(bytes)))
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory for the %zu bytes of state it puts back every pass",
                         bytes);
    size_t at = 0;
    for (uint32_t id = 1; id < nt; id++)
        if (filled[id]) {
            const exec_tensor *t = exec_tensor_get(p->g, id);
            memcpy(p->kept + at, t->data, t->bytes);
            at += t->bytes;
            p->kept_ids[p->nkept++] = id;
        }
    return EXEC_OK;
}

void replay_program_restore(replay_program *p)
{
    size_t at = 0;
    for (uint32_t i = 0; i < p->nkept; i++) {
        exec_tensor *t = exec_tensor_get(p->g, p->kept_ids[i]);
        memcpy(t->data, p->kept + at, t->bytes);
        at += t->bytes;
    }
}

/* The recorded program checked before anything is built: tensors sorted by
 * id and each allocated once, their live peak within the memory a plan may
 * take (have bytes, from source; a trace is untrusted input), and each
 * engine op's attributes as many as this version's layout.  *has_fw: 1 if
 * it holds framework ops. */
static exec_status check_recorded(replay_program *p, double have, const char *source, int *has_fw)
{
    if (p->ntensors) /* an imported trace without shapes has none */
        qsort(p->tensors, p->ntensors, sizeof *p->tensors, cmp_tensor);
    for (uint32_t i = 1; i < p->ntensors; i++)
        if (p->tensors[i].id == p->tensors[i - 1].id)
            return exec_fail(EXEC_ERR_ARG, "the trace allocates tensor %u twice", p->tensors[i].id);
    uint32_t at;
    uint64_t need = live_peak(p, &at);
    char a[32], b[32];
    if (have > 0 && (double)need > have)
        return exec_fail(EXEC_ERR_NOMEM,
                         "the trace's live tensors peak at %s (at op %u of %u), more than the %s a plan may take "
                         "(%s): replay a range of its ops (--ops A-B)",
                         exec_bytes_text(a, sizeof a, (double)need), at + 1, p->nops,
                         exec_bytes_text(b, sizeof b, have), source);
    *has_fw = 0;
    for (uint32_t k = 0; k < p->nops; k++) {
        const replay_op *o = &p->ops[k];
        *has_fw |= o->fw != NULL;
        if (o->unknown >= 0 || o->fw)
            continue;
        int want = layout_count(exec_op_table[o->op].attrs);
        if (want >= 0 && o->nattrs != want)
            return exec_fail(EXEC_ERR_ARG,
                             "op %u (%s): %d attributes recorded, this version's layout has %d (%s): a trace of "
                             "another version?",
                             k, exec_op_name(o->op), o->nattrs, want, exec_op_table[o->op].attrs);
    }
    return EXEC_OK;
}

/* An engine tensor for each recorded tensor that engine ops read or write
 * (with framework ops about, only those: framework ops get tensors of
 * their own); its engine_id, 0 for the others. */
static exec_status add_tensors(replay_program *p, int has_fw)
{
    uint8_t *needed = base_calloc(p->ntensors + 1, 1);
    if (!needed)
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    for (uint32_t i = 0; i < p->ntensors; i++)
        needed[i] = !has_fw;
    for (uint32_t k = 0; k < p->nops && has_fw; k++) {
        replay_op *o = &p->ops[k];
        if (o->unknown >= 0 || o->fw)
            continue;
        for (int side = 0; side < 2; side++)
            for (int i = 0; i < (side ? o->nout : o->nin); i++) {
                replay_tensor *t = find(p, op_ids(o, side)[i]);
                if (t)
                    needed[t - p->tensors] = 1;
            }
    }
    exec_status s = EXEC_OK;
    for (uint32_t i = 0; i < p->ntensors && !s; i++) {
        replay_tensor *t = &p->tensors[i];
        t->engine_id = 0;
        if (!needed[i])
            continue;
        char name[32];
        snprintf(name, sizeof name, "t%u", t->id);
        t->engine_id = exec_tensor_new(p->g, t->role, t->dtype, t->ndim, t->shape, name);
        if (!t->engine_id)
            s = exec_graph_status(p->g);
    }
    base_free(needed);
    return s;
}

/* Each replayed op as a node (a framework op as the engine ops that stand
 * for it, planned in *plan over pl); unknown ops are left out. */
static exec_status add_ops(replay_program *p, pool *pl, replay_fw_plan **plan)
{
    exec_status s;
    for (uint32_t k = 0; k < p->nops; k++) {
        replay_op *o = &p->ops[k];
        if (o->unknown >= 0)
            continue; /* not replayed (listed in the report) */
        if (o->fw) {
            if (!*plan && !(*plan = base_malloc(sizeof **plan)))
                return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
            if ((s = add_framework(p, o, pl, *plan)))
                return s;
            continue;
        }
        uint32_t in[o->nin ? o->nin : 1], out[o->nout ? o->nout : 1];
        for (int side = 0; side < 2; side++) {
            int n = side ? o->nout : o->nin;
            for (int i = 0; i < n; i++) {
                replay_tensor *t = find(p, op_ids(o, side)[i]);
                if (!t)
                    return exec_fail(EXEC_ERR_ARG, "op %u (%s) %s tensor %u, which the trace never allocated", k,
                                     exec_op_name(o->op), side ? "writes" : "reads", op_ids(o, side)[i]);
                (side ? out : in)[i] = t->engine_id;
            }
        }
        o->node = exec_node_count(p->g);
        o->nnodes = 1;
        if ((s = exec_op_add_recorded(p->g, o->op, o->phase, o->nin, in, o->nattrs, o->attrs, o->nout, out)))
            return exec_fail(s, "op %u (%s, %d attrs): %s", k, exec_op_name(o->op), o->nattrs, exec_errmsg());
    }
    return EXEC_OK;
}

/* Where each recorded step begins (run.c marks steps in a traced replay). */
static exec_status mark_steps(replay_program *p)
{
    base_free(p->step_first);
    p->step_first = base_calloc(exec_node_count(p->g) + 1, 1);
    if (!p->step_first)
        return exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
    uint32_t prev_step = UINT32_MAX;
    for (uint32_t k = 0; k < p->nops; k++) {
        const replay_op *o = &p->ops[k];
        if (o->unknown >= 0 || !o->nnodes)
            continue;
        if (o->step != prev_step)
            p->step_first[o->node] = 1;
        prev_step = o->step;
    }
    return EXEC_OK;
}

/* The graph planned.  The framework ops' tensors must fit too: laid out
 * by lifetimes, the plan's own check answers for what it lays out. */
static exec_status plan_graph(replay_program *p, double have, const char *source)
{
    uint64_t need = 0;
    for (uint32_t id = 1; id <= exec_tensor_count(p->g); id++) {
        uint64_t b = exec_tensor_get(p->g, id)->bytes;
        need = b > UINT64_MAX - need ? UINT64_MAX : need + b;
    }
    if (have > 0 && (double)need > have && !p->reuse) {
        char a[32], b[32];
        return exec_fail(EXEC_ERR_NOMEM,
                         "the replayed ops' tensors need %s, more than the %s a plan may take (%s): replay a range "
                         "of its ops (--ops A-B)",
                         exec_bytes_text(a, sizeof a, (double)need), exec_bytes_text(b, sizeof b, have), source);
    }
    exec_graph_set_reuse(p->g, p->reuse != 0);
    exec_status s = exec_graph_plan(p->g);
    if (s == EXEC_ERR_NOMEM) {
        char why[BASE_ERRMSG_MAX];
        snprintf(why, sizeof why, "%s", exec_errmsg());
        s = exec_fail(s, "%s; or replay a range of its ops (--ops A-B)", why);
    }
    return s;
}

/* Fills what is read before it is written, and keeps the state that a
 * pass changes (keep_state). */
static exec_status fill_inputs(replay_program *p, uint64_t seed)
{
    exec_status s;
    uint32_t nt = exec_tensor_count(p->g) + 1;
    uint8_t *written = base_calloc(nt, 1), *filled = base_calloc(nt, 1);
    if (!written || !filled) {
        s = exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
        goto end;
    }
    exec_rng rng = exec_rng_make(seed);
    for (uint32_t nd = 0; nd < exec_node_count(p->g); nd++) {
        const exec_node *n = exec_node_get(p->g, nd);
        for (int i = 0; i < n->nin; i++) {
            uint32_t id = n->in[i];
            if (written[id] || filled[id])
                continue;
            fill_tensor(p->g, exec_tensor_get(p->g, id), n, rule_for(n->op, i), &rng);
            filled[id] = 1;
        }
        for (int i = 0; i < n->nout; i++)
            written[n->out[i]] = 1;
    }
    s = keep_state(p, filled);
end:
    base_free(written);
    base_free(filled);
    return s;
}

exec_status replay_program_build(replay_program *p, uint64_t seed)
{
    /* a trace is untrusted input: its tensors must fit in the memory a
     * plan may take (the engine's bound: a cgroup's limit or the machine's) */
    const char *source = NULL;
    const double have = exec_memory_limit(&source);
    int has_fw = 0;
    exec_status s = check_recorded(p, have, source, &has_fw);
    if (s || (s = exec_graph_create(&p->g, seed)) || (s = add_tensors(p, has_fw)))
        return s;
    replay_fw_plan *plan = NULL;
    pool pl = { 0 };
    s = add_ops(p, &pl, &plan);
    base_free(plan);
    base_free(pl.e);
    if (s || (s = mark_steps(p)) || (s = plan_graph(p, have, source)))
        return s;
    return fill_inputs(p, seed);
}
