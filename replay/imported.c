/* imported.c -- the engine nodes of an imported framework op (imported.h).
 *
 * What runs: the engine op(s) of the op's table entry, with the recorded
 * input shapes, in float32 (indices in int32). Arguments a trace does not
 * record and that change no shape (batch norm's epsilon and momentum, a
 * clip's bound, a dropout's rate) take PyTorch's defaults; arguments that
 * change shapes or work (a convolution's stride and padding, a pool's
 * window) must be recorded or the op is demoted. Bias terms the framework
 * fuses into a matrix product (addmm, linear) are not replayed: the engine's
 * MatMul has none. */
#include "replay/imported.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum {
#define C(name) LAYOUT_##name,
#include "tracer/import_costs.def"
#undef C
};

static const replay_fw_op fw_table[] = {
#define X(name, cls, engine, cost, attrs) { name, #cls, engine, LAYOUT_##cost },
#include "tracer/import_ops.def"
#undef X
};
#define FW_COUNT (sizeof fw_table / sizeof fw_table[0])

static const replay_fw_op *fw_sorted[FW_COUNT];
static pthread_once_t fw_once = PTHREAD_ONCE_INIT;

static int by_name(const void *a, const void *b)
{
    return strcmp((*(const replay_fw_op *const *)a)->name, (*(const replay_fw_op *const *)b)->name);
}

static void fw_sort(void)
{
    for (size_t i = 0; i < FW_COUNT; i++)
        fw_sorted[i] = &fw_table[i];
    qsort(fw_sorted, FW_COUNT, sizeof fw_sorted[0], by_name);
}

const replay_fw_op *replay_fw_lookup(const char *name)
{
    pthread_once(&fw_once, fw_sort);
    replay_fw_op key = { .name = name };
    const replay_fw_op *k = &key, *const *hit = bsearch(&k, fw_sorted, FW_COUNT, sizeof fw_sorted[0], by_name);
    return hit ? *hit : NULL;
}

int replay_fw_dtype(const char *label, int *converted)
{
    static const struct {
        const char *name;
        exec_dtype dt;
        int conv;
    } map[] = {
        { "float32", EXEC_F32, 0 }, { "int32", EXEC_I32, 0 },    { "other", EXEC_F32, 0 }, { "float64", EXEC_F32, 1 },
        { "float16", EXEC_F32, 1 }, { "bfloat16", EXEC_F32, 1 }, { "int64", EXEC_I32, 1 }, { "int16", EXEC_I32, 1 },
        { "int8", EXEC_I32, 1 },    { "uint8", EXEC_I32, 1 },    { "bool", EXEC_I32, 1 },
    };
    for (size_t i = 0; label && i < sizeof map / sizeof map[0]; i++)
        if (strcmp(label, map[i].name) == 0) {
            *converted = map[i].conv;
            return (int)map[i].dt;
        }
    return -1;
}

/* ---- reasons an op is demoted ------------------------------------------- */
static const char R_NO_ENGINE[] = "the engine has no such op";
static const char R_NO_SHAPES[] = "input shapes not recorded";
static const char R_NO_ATTRS[] = "stride, padding or window not recorded";
static const char R_SHAPES[] = "shapes do not fit the engine op";
static const char R_NO_MAPPING[] = "arguments not derivable from the trace";
static const char R_LISTS[] = "tensor-list arguments of unequal lengths or shapes";
static const char R_MANY[] = "more tensors in its lists than one call may run";

/* ---- building a plan ----------------------------------------------------- */

static replay_fw_node *node_new(replay_fw_plan *pl, exec_op op)
{
    if (pl->nnodes >= REPLAY_FW_MAX_NODES) /* callers check the count first */
        pl->nnodes = REPLAY_FW_MAX_NODES - 1;
    replay_fw_node *n = &pl->node[pl->nnodes++];
    memset(n, 0, sizeof *n);
    n->op = op;
    return n;
}

static void in_set(replay_fw_node *n, exec_dtype dt, int ndim, const int64_t *shape)
{
    int i = n->nin++;
    n->in[i].dtype = dt;
    n->in[i].ndim = ndim;
    memcpy(n->in[i].shape, shape, (size_t)ndim * sizeof *shape);
}

static void in_arg(replay_fw_node *n, const replay_fw_arg *a) { in_set(n, EXEC_F32, a->ndim, a->shape); }

static void in_vec(replay_fw_node *n, exec_dtype dt, int64_t len) { in_set(n, dt, 1, &len); }

static void attr(replay_fw_node *n, int64_t v) { n->attrs[n->nattrs++] = v; }

static void attrs(replay_fw_node *n, const int64_t *v, int k)
{
    for (int i = 0; i < k; i++)
        attr(n, v[i]);
}

static int64_t numel(const replay_fw_arg *a)
{
    int64_t e = 1;
    for (int d = 0; d < a->ndim; d++)
        e *= a->shape[d];
    return e;
}

/* ---- the planners, one per engine op (its argument order) ---------------- */
typedef struct call {
    const replay_fw_op *op;
    exec_op eop;
    int nin, nout;
    const replay_fw_arg *in, *out;
    int nattrs;
    const int64_t *attrs;
    int training;
} call;

typedef const char *(*planner)(const call *c, replay_fw_plan *pl);

/* MatMul: mm(a, b), addmm(c, a, b), matmul(a[...,K], b[K,N]),
 * linear(x[...,K], w[N,K]), mv(A, x), addmv(v, A, x), dot(x, y). */
static const char *plan_matmul(const call *c, replay_fw_plan *pl)
{
    int first = c->op->layout == LAYOUT_ADDMM || c->op->layout == LAYOUT_ADDMV ? 1 : 0;
    if (c->nin < first + 2)
        return R_NO_SHAPES;
    const replay_fw_arg *a = &c->in[first], *b = &c->in[first + 1];
    replay_fw_node *n = node_new(pl, c->eop);
    int64_t m, k;
    switch (c->op->layout) {
    case LAYOUT_MM:
    case LAYOUT_ADDMM:
        if (a->ndim != 2 || b->ndim != 2)
            return R_SHAPES;
        in_arg(n, a), in_arg(n, b);
        attr(n, 0), attr(n, 0);
        return NULL;
    case LAYOUT_MATMUL:
    case LAYOUT_LINEAR: /* leading dims of x flattened into rows */
        if (a->ndim < 1 || b->ndim != 2)
            return R_SHAPES;
        k = a->shape[a->ndim - 1];
        m = numel(a) / (k ? k : 1);
        in_set(n, EXEC_F32, 2, (int64_t[]){ m, k });
        in_arg(n, b);
        attr(n, 0), attr(n, c->op->layout == LAYOUT_LINEAR);
        return NULL;
    case LAYOUT_MV:
    case LAYOUT_ADDMV:
        if (a->ndim != 2 || b->ndim != 1)
            return R_SHAPES;
        in_arg(n, a);
        in_set(n, EXEC_F32, 2, (int64_t[]){ b->shape[0], 1 });
        attr(n, 0), attr(n, 0);
        return NULL;
    case LAYOUT_DOT:
        if (a->ndim != 1 || b->ndim != 1)
            return R_SHAPES;
        in_set(n, EXEC_F32, 2, (int64_t[]){ 1, a->shape[0] });
        in_set(n, EXEC_F32, 2, (int64_t[]){ b->shape[0], 1 });
        attr(n, 0), attr(n, 0);
        return NULL;
    }
    return R_NO_MAPPING;
}

/* An argument [..., R, C] as [B, R, C]: the leading dims flattened. */
static int batched(const replay_fw_arg *a, int64_t *b3)
{
    if (a->ndim < 2)
        return -1;
    b3[1] = a->shape[a->ndim - 2], b3[2] = a->shape[a->ndim - 1];
    b3[0] = b3[1] > 0 && b3[2] > 0 ? numel(a) / (b3[1] * b3[2]) : 0;
    return b3[0] > 0 ? 0 : -1;
}

static void bmm_node(replay_fw_plan *pl, const int64_t *a, const int64_t *b, int ta, int tb)
{
    replay_fw_node *n = node_new(pl, EXEC_OP_BatchMatMul);
    in_set(n, EXEC_F32, 3, a), in_set(n, EXEC_F32, 3, b);
    attr(n, ta), attr(n, tb);
}

/* scaled_dot_product_attention(q[..., L, E], k[..., S, E], v[..., S, Ev])
 * as its formula: P = softmax(q k^T), y = P v (the scale and a mask are
 * elementwise work left out). Its backward (dy, q, k, v, ...) recomputes P
 * and runs the four products of the gradients: dV = P^T dy, dP = dy v^T,
 * dS = softmax's gradient, dQ = dS k, dK = dS^T q. */
static const char *plan_attention(const call *c, replay_fw_plan *pl)
{
    int bwd = c->op->layout == LAYOUT_ATTN_BWD, q = bwd;
    int64_t Q[3], K[3], V[3];
    if (c->nin < q + 3)
        return R_NO_SHAPES;
    if (batched(&c->in[q], Q) || batched(&c->in[q + 1], K) || batched(&c->in[q + 2], V) || Q[0] != K[0] ||
        K[0] != V[0] || Q[2] != K[2] || K[1] != V[1])
        return R_SHAPES;
    int64_t P[3] = { Q[0], Q[1], K[1] };
    bmm_node(pl, Q, K, 0, 1);
    replay_fw_node *n = node_new(pl, bwd ? EXEC_OP_SoftmaxGrad : EXEC_OP_Softmax);
    in_set(n, EXEC_F32, 3, P);
    if (bwd)
        in_set(n, EXEC_F32, 3, P);
    if (!bwd) {
        bmm_node(pl, P, V, 0, 0);
        pl->outs = REPLAY_FW_OUT_LAST;
        return NULL;
    }
    int64_t DY[3] = { Q[0], Q[1], V[2] };
    bmm_node(pl, P, DY, 1, 0); /* dV */
    bmm_node(pl, DY, V, 0, 1); /* dP */
    bmm_node(pl, P, K, 0, 0);  /* dQ */
    bmm_node(pl, P, Q, 1, 0);  /* dK */
    pl->outs = REPLAY_FW_OUT_NONE;
    return NULL;
}

/* BatchMatMul: bmm(a, b), baddbmm(c, a, b). */
static const char *plan_bmm(const call *c, replay_fw_plan *pl)
{
    if (c->op->layout == LAYOUT_ATTN || c->op->layout == LAYOUT_ATTN_BWD)
        return plan_attention(c, pl);
    int first = c->op->layout == LAYOUT_BADDBMM ? 1 : 0;
    if (c->nin < first + 2)
        return R_NO_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[first]), in_arg(n, &c->in[first + 1]);
    attr(n, 0), attr(n, 0);
    return NULL;
}

/* Conv2D: conv2d(x, w, bias, stride, padding, ...): the attrs as recorded
 * (stride_h, stride_w, pad_h, pad_w). */
static const char *plan_conv(const call *c, replay_fw_plan *pl)
{
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[0]), in_arg(n, &c->in[1]);
    attrs(n, c->attrs, 4);
    return NULL;
}

/* convolution_backward(dy, x, w, ...): the input's and the filter's
 * gradients (program.c runs the filter's alone where the recorded outputs
 * say the framework computed no input gradient; a profiler trace does not
 * record it: both run). */
static const char *plan_conv_bwd(const call *c, replay_fw_plan *pl)
{
    const replay_fw_arg *dy = &c->in[0], *x = &c->in[1], *w = &c->in[2];
    if (x->ndim != 4 || w->ndim != 4 || dy->ndim != 4)
        return R_SHAPES;
    replay_fw_node *n = node_new(pl, EXEC_OP_Conv2DBackpropInput);
    in_arg(n, w), in_arg(n, dy);
    attrs(n, c->attrs, 4);
    attrs(n, x->shape, 4);
    n = node_new(pl, EXEC_OP_Conv2DBackpropFilter);
    in_arg(n, x), in_arg(n, dy);
    attrs(n, c->attrs, 4);
    attrs(n, w->shape, 4);
    return NULL;
}

/* MaxPool, AvgPool: pool(x, kernel, stride, padding): kh,kw,sh,sw,ph,pw. */
static const char *plan_pool(const call *c, replay_fw_plan *pl)
{
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[0]);
    attrs(n, c->attrs, 6);
    return NULL;
}

/* MaxPoolGrad: max_pool2d_with_indices_backward(dy, x, kernel, stride,
 * padding, ...) -> the engine's (x, y, dy), y of dy's shape. */
static const char *plan_pool_grad(const call *c, replay_fw_plan *pl)
{
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[1]), in_arg(n, &c->in[0]), in_arg(n, &c->in[0]);
    attrs(n, c->attrs, 6);
    return NULL;
}

/* One input, no attrs: activations, softmax over the last axis, copies,
 * zero fills; ClippedRelu at hardtanh's default bound 1; Cast to float32;
 * Dropout at PyTorch's default rate 0.5; reductions over every axis (the
 * trace does not record the axes; the work reads every element either
 * way). */
static const char *plan_unary(const call *c, replay_fw_plan *pl)
{
    if (c->in[0].ndim < 1)
        return R_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[0]);
    switch (c->eop) {
    case EXEC_OP_ClippedRelu: attr(n, exec_attr_f(1.0f)); break;
    case EXEC_OP_Cast: attr(n, 0); break;
    case EXEC_OP_Dropout: attr(n, exec_attr_f(0.5f)), attr(n, 0); break;
    case EXEC_OP_Sum:
    case EXEC_OP_Mean:
    case EXEC_OP_Max: attr(n, 0); break;
    default: break;
    }
    if (strchr(c->op->engine, ',')) { /* gelu, silu: x times the activation */
        n = node_new(pl, EXEC_OP_Mul);
        in_arg(n, &c->in[0]), in_arg(n, &c->in[0]);
        pl->outs = REPLAY_FW_OUT_LAST;
    }
    return NULL;
}

/* Two inputs, b broadcast onto a; a scalar other operand is [1]. */
static const char *plan_binary(const call *c, replay_fw_plan *pl)
{
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[0]);
    if (c->nin >= 2)
        in_arg(n, &c->in[1]);
    else
        in_vec(n, EXEC_F32, 1);
    return NULL;
}

/* Gradients of activations: the framework passes (grad_output, x or y);
 * the engine takes (dy, features) for ReluGrad (x or y alike), (dy, x) for
 * ClippedReluGrad, (y, dy) for the others. */
static const char *plan_act_grad(const call *c, replay_fw_plan *pl)
{
    replay_fw_node *n = node_new(pl, c->eop);
    int swap = c->eop != EXEC_OP_ReluGrad && c->eop != EXEC_OP_ClippedReluGrad;
    in_arg(n, &c->in[swap ? 1 : 0]);
    in_arg(n, &c->in[swap ? 0 : 1]);
    if (c->eop == EXEC_OP_ClippedReluGrad)
        attr(n, exec_attr_f(1.0f));
    if (strchr(c->op->engine, ',')) { /* gelu's, silu's backward: times x */
        n = node_new(pl, EXEC_OP_Mul);
        in_arg(n, &c->in[0]), in_arg(n, &c->in[1]);
        pl->outs = REPLAY_FW_OUT_LAST;
    }
    return NULL;
}

/* batch_norm(x, weight, bias, running_mean, running_var, ...): per-channel
 * vectors of x's dimension 1 (made when the framework passed None). */
static const char *plan_batch_norm(const call *c, replay_fw_plan *pl)
{
    const replay_fw_arg *x = &c->in[0];
    if (x->ndim < 2)
        return R_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, x);
    for (int i = 0; i < 4; i++)
        in_vec(n, EXEC_F32, x->shape[1]);
    attr(n, exec_attr_f(1e-5f)), attr(n, exec_attr_f(0.1f)), attr(n, c->training);
    return NULL;
}

/* native_batch_norm_backward(dy, x, weight, running_mean, running_var,
 * save_mean, save_invstd, ...): the engine's (dy, x, scale, saved_mean,
 * saved_inv_std). */
static const char *plan_batch_norm_grad(const call *c, replay_fw_plan *pl)
{
    int xf = c->op->layout == LAYOUT_NORM_BWD_XF; /* cudnn_, miopen_: (x, dy, ...) */
    const replay_fw_arg *x = &c->in[xf ? 0 : 1], *dy = &c->in[xf ? 1 : 0];
    if (x->ndim < 2)
        return R_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, dy), in_arg(n, x);
    for (int i = 0; i < 3; i++)
        in_vec(n, EXEC_F32, x->shape[1]);
    attr(n, exec_attr_f(1e-5f)), attr(n, c->training);
    return NULL;
}

/* embedding(weight[V,D], indices[...]): Gather with int32 indices;
 * index_select(x, dim, index) the same where the recorded output says
 * the dim is 0; nll_loss(logp[N,C], target[N]): one element per row, a
 * Gather from logp as [N*C, 1] (the indices in range of it). */
static const char *plan_gather(const call *c, replay_fw_plan *pl)
{
    const replay_fw_arg *x = &c->in[0], *idx = &c->in[1];
    if (c->op->layout == LAYOUT_INDEX) {
        if (c->nout < 1 || x->ndim < 1 || idx->ndim != 1 || c->out[0].ndim != x->ndim ||
            c->out[0].shape[0] != idx->shape[0] || numel(&c->out[0]) != idx->shape[0] * (numel(x) / x->shape[0]))
            return R_NO_MAPPING;
    } else if (c->op->layout != LAYOUT_EMBED) { /* nll_loss */
        replay_fw_node *n = node_new(pl, c->eop);
        in_set(n, EXEC_F32, 2, (int64_t[]){ numel(x), 1 });
        in_set(n, EXEC_I32, idx->ndim, idx->shape);
        pl->outs = REPLAY_FW_OUT_NONE; /* a scalar (or per-row) loss */
        return NULL;
    }
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, x);
    in_set(n, EXEC_I32, idx->ndim, idx->shape);
    return NULL;
}

/* embedding_dense_backward(dy[..., D], indices[...], num_weights, ...):
 * UnsortedSegmentSum of dy's rows into the recorded output's V rows. */
static const char *plan_segment_sum(const call *c, replay_fw_plan *pl)
{
    const replay_fw_arg *dy = &c->in[0], *idx = &c->in[1];
    if (c->nout < 1 || c->out[0].ndim != 2 || dy->ndim < 1)
        return R_NO_MAPPING;
    int64_t d = dy->shape[dy->ndim - 1], rows = d ? numel(dy) / d : 0;
    if (rows != numel(idx) || d != c->out[0].shape[1])
        return R_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    in_set(n, EXEC_F32, 2, (int64_t[]){ rows, d });
    in_set(n, EXEC_I32, 1, &rows);
    attr(n, c->out[0].shape[0]);
    return NULL;
}

/* layer_norm(x, normalized_shape, weight, bias, eps): the engine's
 * LayerNorm over x as [rows, D], D the weight's size (else x's last dim);
 * native_layer_norm_backward(dy, x, normalized_shape, mean, rstd, weight,
 * bias, mask): LayerNormGrad(dy, x, gamma, mean, inv_std). */
static const char *plan_layer_norm(const call *c, replay_fw_plan *pl)
{
    int bwd = c->eop == EXEC_OP_LayerNormGrad;
    const replay_fw_arg *x = &c->in[bwd];
    if (x->ndim < 1)
        return R_SHAPES;
    int64_t d = x->shape[x->ndim - 1];
    for (int i = bwd ? 4 : 1; i < c->nin; i++)
        if (c->in[i].ndim >= 1 && numel(&c->in[i]) > 1) { /* the weight */
            d = numel(&c->in[i]);
            break;
        }
    int64_t rows = d ? numel(x) / d : 0;
    if (rows * d != numel(x) || rows < 1)
        return R_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    if (bwd)
        in_set(n, EXEC_F32, 2, (int64_t[]){ rows, d });
    in_set(n, EXEC_F32, 2, (int64_t[]){ rows, d });
    in_vec(n, EXEC_F32, d);
    if (bwd) {
        in_vec(n, EXEC_F32, rows), in_vec(n, EXEC_F32, rows);
    } else {
        in_vec(n, EXEC_F32, d);
        attr(n, exec_attr_f(1e-5f));
    }
    pl->outs = REPLAY_FW_OUT_NONE; /* x's shape, as [rows, D] */
    return NULL;
}

/* Views and allocations (view, reshape, expand, slice, t, empty...): the
 * framework computes nothing, the engine's Reshape of the recorded output
 * shape neither (it shares its input's bytes). Fills (zeros, ones, full,
 * *_like, fill_, arange) as ZerosLike, copies and concatenations (copy_,
 * clone, cat, stack) as Identity, of the recorded output (else the first
 * input): the bytes written are the output's. */
static const char *plan_shaped(const call *c, replay_fw_plan *pl)
{
    const replay_fw_arg *src = c->nout >= 1 ? &c->out[0] : c->nin >= 1 ? &c->in[0] : NULL;
    if (!src)
        return R_NO_SHAPES;
    int64_t one = 1;
    int nd = src->ndim ? src->ndim : 1;
    const int64_t *shape = src->ndim ? src->shape : &one;
    for (int d = 0; d < nd; d++)
        if (shape[d] < 1)
            return R_SHAPES;
    replay_fw_node *n = node_new(pl, c->eop);
    in_set(n, EXEC_F32, nd, shape);
    if (c->eop == EXEC_OP_Reshape)
        attrs(n, shape, nd);
    if (!src->ndim)
        pl->outs = REPLAY_FW_OUT_NONE;
    return NULL;
}

/* _foreach_OP(list, [list...,] [scalar]) and the fused optimizers: one
 * engine op per tensor of the lists. The lists arrive one tensor after
 * another; their number is the most (4, 3, 2, 1) that splits the inputs
 * into lists of one length whose shapes agree element by element. */
static const char *plan_foreach(const call *c, replay_fw_plan *pl)
{
    if (c->nin < 1)
        return R_NO_SHAPES;
    int lists = 1;
    for (int k = 4; k > 1 && lists == 1; k--) {
        if (c->nin % k)
            continue;
        int len = c->nin / k, same = 1;
        for (int j = 0; j < len && same; j++)
            for (int g = 1; g < k && same; g++)
                same = c->in[g * len + j].ndim == c->in[j].ndim &&
                       memcmp(c->in[g * len + j].shape, c->in[j].shape, (size_t)c->in[j].ndim * sizeof(int64_t)) == 0;
        if (same)
            lists = k;
    }
    int len = c->nin / lists;
    if (len > REPLAY_FW_MAX_NODES)
        return R_MANY;
    const int nin = exec_op_table[c->eop].nin;
    if (c->eop == EXEC_OP_ApplyAdam && lists < 4)
        return R_LISTS;
    for (int j = 0; j < len; j++) {
        const replay_fw_arg *x = &c->in[j];
        if (x->ndim < 1)
            return R_SHAPES;
        replay_fw_node *n = node_new(pl, c->eop);
        switch (c->eop) {
        case EXEC_OP_ApplyGradientDescent: /* param += alpha * grad */
            in_arg(n, x), in_arg(n, &c->in[(lists > 1) * len + j]);
            attr(n, exec_attr_f(0.01f));
            break;
        case EXEC_OP_ApplyAdam: /* params, grads, exp_avgs, exp_avg_sqs: var, m, v, grad, step */
            in_arg(n, x), in_arg(n, &c->in[2 * len + j]), in_arg(n, &c->in[3 * len + j]), in_arg(n, &c->in[len + j]);
            in_vec(n, EXEC_F32, 1);
            attr(n, exec_attr_f(1e-3f)), attr(n, exec_attr_f(0.9f)), attr(n, exec_attr_f(0.999f)),
                attr(n, exec_attr_f(1e-8f));
            break;
        default: /* elementwise: with the next list's tensor, or a scalar */
            in_arg(n, x);
            if (nin == 2) {
                if (lists > 1)
                    in_arg(n, &c->in[len + j]);
                else
                    in_vec(n, EXEC_F32, 1);
            }
            break;
        }
    }
    return NULL;
}

/* cross_entropy_loss(logits[N,C], target[N]): int32 labels. */
static const char *plan_xent(const call *c, replay_fw_plan *pl)
{
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[0]);
    in_set(n, EXEC_I32, c->in[1].ndim, c->in[1].shape);
    return NULL;
}

/* t(x) and transpose(x, 0, 1) of a matrix: perm 1,0 (other ranks: the
 * dims are not recorded). */
static const char *plan_transpose(const call *c, replay_fw_plan *pl)
{
    if (c->in[0].ndim != 2)
        return R_NO_MAPPING;
    replay_fw_node *n = node_new(pl, c->eop);
    in_arg(n, &c->in[0]);
    attr(n, 1), attr(n, 0);
    return NULL;
}

/* Each engine op's planner and what a call must have before it runs: the
 * framework op's argument layout (ANY: every one the planner takes; else
 * another is R_NO_MAPPING: index_select's dim, say, is not recorded), at
 * least min_in input shapes (R_NO_SHAPES; the matrix products count
 * theirs by layout) and exactly nattrs attributes (ANY: none needed; else
 * R_NO_ATTRS: a convolution's stride and padding, a pool's window). */
#define ANY (-1)
typedef struct planner_entry {
    exec_op op;
    planner plan;
    int layout, min_in, nattrs;
} planner_entry;

static const planner_entry planners[] = {
    { EXEC_OP_MatMul, plan_matmul, ANY, 0, ANY },
    { EXEC_OP_BatchMatMul, plan_bmm, ANY, 0, ANY },
    { EXEC_OP_Conv2D, plan_conv, LAYOUT_CONV, 2, 4 },
    { EXEC_OP_Conv2DBackpropInput, plan_conv_bwd, LAYOUT_CONV_BWD, 3, 4 },
    { EXEC_OP_MaxPool, plan_pool, LAYOUT_POOL, 1, 6 },
    { EXEC_OP_AvgPool, plan_pool, LAYOUT_POOL, 1, 6 },
    { EXEC_OP_MaxPoolGrad, plan_pool_grad, ANY, 2, 6 },
    { EXEC_OP_Relu, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Sigmoid, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Tanh, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Exp, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Log, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Sqrt, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Neg, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Square, plan_unary, ANY, 1, ANY },
    { EXEC_OP_ClippedRelu, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Softmax, plan_unary, ANY, 1, ANY },
    { EXEC_OP_LogSoftmax, plan_unary, ANY, 1, ANY },
    { EXEC_OP_ZerosLike, plan_shaped, ANY, 0, ANY },
    { EXEC_OP_Identity, plan_shaped, ANY, 0, ANY },
    { EXEC_OP_Cast, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Dropout, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Sum, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Mean, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Max, plan_unary, ANY, 1, ANY },
    { EXEC_OP_Add, plan_binary, ANY, 1, ANY },
    { EXEC_OP_Sub, plan_binary, ANY, 1, ANY },
    { EXEC_OP_Mul, plan_binary, ANY, 1, ANY },
    { EXEC_OP_Div, plan_binary, ANY, 1, ANY },
    { EXEC_OP_Pow, plan_binary, ANY, 1, ANY },
    { EXEC_OP_Equal, plan_binary, ANY, 1, ANY },
    { EXEC_OP_ReluGrad, plan_act_grad, ANY, 2, ANY },
    { EXEC_OP_ClippedReluGrad, plan_act_grad, ANY, 2, ANY },
    { EXEC_OP_SigmoidGrad, plan_act_grad, ANY, 2, ANY },
    { EXEC_OP_TanhGrad, plan_act_grad, ANY, 2, ANY },
    { EXEC_OP_SoftmaxGrad, plan_act_grad, ANY, 2, ANY },
    { EXEC_OP_LogSoftmaxGrad, plan_act_grad, ANY, 2, ANY },
    { EXEC_OP_FusedBatchNorm, plan_batch_norm, ANY, 1, ANY },
    { EXEC_OP_FusedBatchNormGrad, plan_batch_norm_grad, ANY, 2, ANY },
    { EXEC_OP_Gather, plan_gather, ANY, 2, ANY },
    { EXEC_OP_UnsortedSegmentSum, plan_segment_sum, LAYOUT_EMBED_BWD, 2, ANY },
    { EXEC_OP_LayerNorm, plan_layer_norm, ANY, 1, ANY },
    { EXEC_OP_LayerNormGrad, plan_layer_norm, ANY, 2, ANY },
    { EXEC_OP_Reshape, plan_shaped, ANY, 0, ANY },
    { EXEC_OP_ApplyGradientDescent, plan_foreach, LAYOUT_FOREACH, 1, ANY },
    { EXEC_OP_ApplyAdam, plan_foreach, LAYOUT_FOREACH, 1, ANY },
    { EXEC_OP_SparseSoftmaxCrossEntropyWithLogits, plan_xent, ANY, 2, ANY },
    { EXEC_OP_Transpose, plan_transpose, ANY, 1, ANY },
};

/* Why call c cannot go to entry p's planner (NULL: it can). */
static const char *unfit(const planner_entry *p, const call *c)
{
    if (p->layout != ANY && c->op->layout != p->layout)
        return R_NO_MAPPING;
    if (c->nin < p->min_in)
        return R_NO_SHAPES;
    if (p->nattrs != ANY && c->nattrs != p->nattrs)
        return R_NO_ATTRS;
    return NULL;
}

const char *replay_fw_plan_of(const replay_fw_op *op, int nin, const replay_fw_arg *in, int nout,
                              const replay_fw_arg *out, int nattrs, const int64_t *attrs, int training,
                              replay_fw_plan *plan)
{
    plan->nnodes = 0;
    plan->outs = REPLAY_FW_OUT_EACH;
    if (!op->engine[0])
        return R_NO_ENGINE;
    /* the first engine op names the planner (a second one is its partner) */
    char first[64];
    size_t len = strcspn(op->engine, ",");
    if (len >= sizeof first)
        return R_NO_ENGINE;
    memcpy(first, op->engine, len);
    first[len] = '\0';
    int eop = exec_op_from_name(first);
    if (eop < 0)
        return R_NO_ENGINE;
    for (size_t i = 0; i < sizeof planners / sizeof planners[0]; i++)
        if (planners[i].op == (exec_op)eop) {
            call c = { .op = op,
                       .eop = (exec_op)eop,
                       .nin = nin,
                       .in = in,
                       .nout = nout,
                       .out = out,
                       .nattrs = nattrs,
                       .attrs = attrs,
                       .training = training };
            const char *why = op->layout == LAYOUT_FOREACH ? NULL : unfit(&planners[i], &c);
            if (!why)
                why = op->layout == LAYOUT_FOREACH ? plan_foreach(&c, plan) : planners[i].plan(&c, plan);
            if (why)
                plan->nnodes = 0;
            return why;
        }
    return R_NO_MAPPING;
}
