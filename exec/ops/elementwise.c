/* elementwise.c -- elementwise arithmetic and activations.
 * Binary ops broadcast b onto a (same shape, a scalar, or a's trailing
 * dims); the output has a's shape. */
#include "mathkern.h"

/* Sum the gradient over the dims b was broadcast along. */
uint32_t exec_unbroadcast(exec_graph *g, uint32_t grad, uint32_t like)
{
    const exec_tensor *gt = exec_t(g, grad), *lt = exec_t(g, like);
    if (gt->numel == lt->numel)
        return grad;
    int64_t period = lt->numel;
    uint32_t r = exec_op1(g, EXEC_OP_Reshape, 1, &grad, 2, (int64_t[]){ gt->numel / period, period });
    uint32_t s = exec_op1(g, EXEC_OP_Sum, 1, &r, 2, (int64_t[]){ 0, 0 });
    if (!s)
        return 0;
    lt = exec_t(g, like);
    int64_t dims[EXEC_MAX_DIMS];
    memcpy(dims, lt->shape, sizeof dims);
    return exec_op1(g, EXEC_OP_Reshape, 1, &s, lt->ndim, dims);
}

/* ---- Add / Mul ---------------------------------------------------------- */
exec_status op_shape_Add(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_binary(g, n, o); }
exec_status op_shape_Mul(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_binary(g, n, o); }
MATH_BINARY_KERNEL(Add, a + b)
MATH_BINARY_KERNEL(Mul, a *b)

exec_status op_grad_Add(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = dout[0];
    if (din[1])
        din[1] = exec_unbroadcast(g, dout[0], n->in[1]);
    return g->status;
}

exec_status op_grad_Mul(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    uint32_t a = n->in[0], b = n->in[1];
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ dout[0], b }, 0, NULL);
    if (din[1])
        din[1] = exec_unbroadcast(g, exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ dout[0], a }, 0, NULL), b);
    return g->status;
}

/* ---- AddN: y = sum of n same-shaped tensors ----------------------------- */
exec_status op_shape_AddN(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0);
    for (int i = 1; i < n->nin; i++)
        if (!exec_same_shape(a, exec_gin(g, n, i)))
            return exec_fail(EXEC_ERR_SHAPE, "AddN: input %d's shape differs from input 0's", i);
    exec_shape_of(out, a);
    return EXEC_OK;
}

exec_status op_fwd_AddN(exec_kctx *k, const exec_node *n)
{
    float *restrict Y = exec_outf(k, n, 0);
    int64_t total = exec_out(k, n, 0)->numel;
    const float *X0 = exec_inf(k, n, 0);
    memcpy(Y, X0, (size_t)total * sizeof *Y);
    for (int j = 1; j < n->nin; j++) {
        const float *restrict X = exec_inf(k, n, j);
        EXEC_PAR_FOR(k, total, MATH_PAR_MIN, Y[i] += X[i];);
    }
    return EXEC_OK;
}

exec_status op_grad_AddN(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    for (int i = 0; i < n->nin; i++)
        if (din[i])
            din[i] = dout[0];
    return g->status;
}

/* ---- BiasAdd: y = x + b along `axis` (1 for NCHW, last for [N,C]) ------- */
static int64_t bias_axis(const exec_tensor *x, const exec_node *n)
{
    int64_t ax = n->nattrs > 0 ? n->attrs[0] : x->ndim - 1;
    return ax < 0 ? ax + x->ndim : ax;
}

exec_status op_shape_BiasAdd(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *b = exec_gin(g, n, 1);
    int64_t ax = bias_axis(x, n);
    if (ax < 0 || ax >= x->ndim || b->ndim != 1 || b->shape[0] != x->shape[ax])
        return exec_fail(EXEC_ERR_SHAPE, "BiasAdd: bias of %lld does not match axis %lld", (long long)b->numel,
                         (long long)ax);
    exec_shape_of(out, x);
    return EXEC_OK;
}

/* yr = xr + B over one row of c */
static inline void bias_row(float *yr, const float *xr, const float *restrict B, int64_t c)
{
#pragma omp simd
    for (int64_t j = 0; j < c; j++)
        yr[j] = xr[j] + B[j];
}

exec_status op_fwd_BiasAdd(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    int64_t ax = bias_axis(x, n), c = x->shape[ax], inner = x->strides[ax], outer = x->numel / (c * inner);
    const float *X = x->data, *restrict B = exec_inf(k, n, 1);
    float *Y = exec_outf(k, n, 0);                               /* may be X's buffer (forwarding.c) */
    const bool par = x->numel > MATH_PAR_MIN && k->nthreads > 1; /* else no parallel region at all */
    if (inner == 1) { /* the bias on the last axis (the usual [rows, c]): a row at a time */
        if (par) {
#pragma omp parallel for num_threads(k->nthreads)
            for (int64_t o = 0; o < outer; o++)
                bias_row(Y + o * c, X + o * c, B, c);
        } else {
            for (int64_t o = 0; o < outer; o++)
                bias_row(Y + o * c, X + o * c, B, c);
        }
        return EXEC_OK;
    }
#pragma omp parallel for collapse(2) num_threads(k->nthreads) if (par)
    for (int64_t o = 0; o < outer; o++)
        for (int64_t j = 0; j < c; j++) {
            const float *xr = X + (o * c + j) * inner;
            float *yr = Y + (o * c + j) * inner;
            float bj = B[j];
#pragma omp simd
            for (int64_t i = 0; i < inner; i++)
                yr[i] = xr[i] + bj;
        }
    return EXEC_OK;
}

exec_status op_grad_BiasAdd(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = dout[0];
    if (din[1])
        din[1] = exec_op1(g, EXEC_OP_BiasAddGrad, 1, &dout[0], 1, (int64_t[]){ bias_axis(exec_t(g, n->in[0]), n) });
    return g->status;
}

/* ---- Relu / ReluGrad(dy, features) --------------------------------------
 * ReluGrad's features may be the Relu's input or its output (as in TF: y >
 * 0 exactly where x > 0); the gradient takes the output, so the input's
 * only reader is the Relu, which may then write over it (forwarding.c: a
 * training graph's FusedBatchNorm -> Relu in one buffer). */
exec_status op_shape_Relu(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_unary(g, n, o); }
MATH_UNARY_KERNEL(Relu, x > 0.0f ? x : 0.0f)

exec_status op_grad_Relu(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_ReluGrad, 2, (uint32_t[]){ dout[0], n->out[0] }, 0, NULL);
    return g->status;
}

exec_status op_shape_ReluGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    if (!exec_same_shape(exec_gin(g, n, 0), exec_gin(g, n, 1)))
        return exec_fail(EXEC_ERR_SHAPE, "ReluGrad: gradient and features differ in shape");
    exec_shape_of(out, exec_gin(g, n, 0));
    return EXEC_OK;
}
MATH_BINARY_KERNEL(ReluGrad, b > 0.0f ? a : 0.0f)
