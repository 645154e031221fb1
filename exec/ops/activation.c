/* activation.c -- Sigmoid, Tanh, ClippedRelu (Deep Speech's min(max(x,0),20)),
 * Softmax and LogSoftmax over the last axis, and their *Grad ops in TF's
 * argument orders: SigmoidGrad/TanhGrad/SoftmaxGrad/LogSoftmaxGrad (y, dy),
 * ClippedReluGrad (dy, x) as ReluGrad. */
#include "mathkern.h"

/* ---- Sigmoid / SigmoidGrad(y, dy) = dy * y * (1 - y) ------------------ */
exec_status op_shape_Sigmoid(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return math_shape_unary(g, n, o);
}
/* exp's argument is -|x| (<= 0: no overflow), both forms from one exp */
MATH_UNARY_KERNEL_TRANSCENDENTAL(Sigmoid, math_sigmoid(x))

exec_status op_grad_Sigmoid(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, SigmoidGrad, n->out[0], dout[0]);
    return g->status;
}

exec_status op_shape_SigmoidGrad(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return math_shape_same2(g, n, o);
}
MATH_BINARY_KERNEL(SigmoidGrad, b *a *(1.0f - a))

/* ---- Tanh / TanhGrad(y, dy) = dy * (1 - y*y) --------------------------- */
exec_status op_shape_Tanh(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_unary(g, n, o); }
MATH_UNARY_KERNEL_TRANSCENDENTAL(Tanh, math_tanhf(x))

exec_status op_grad_Tanh(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, TanhGrad, n->out[0], dout[0]);
    return g->status;
}

exec_status op_shape_TanhGrad(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return math_shape_same2(g, n, o);
}
MATH_BINARY_KERNEL(TanhGrad, b *(1.0f - a * a))

/* ---- ClippedRelu: y = min(max(x, 0), cap); attrs cap(f) ---------------- */
static float relu_cap(const exec_node *n) { return exec_attr_getf(n->attrs[0]); }

exec_status op_shape_ClippedRelu(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    if (n->nattrs < 1 || !(relu_cap(n) > 0.0f))
        return exec_fail(EXEC_ERR_SHAPE, "ClippedRelu: attribute 0 must be a positive cap");
    return math_shape_unary(g, n, o);
}

exec_status op_fwd_ClippedRelu(exec_kctx *k, const exec_node *n)
{
    const float *restrict X = exec_inf(k, n, 0);
    float *restrict Y = exec_outf(k, n, 0);
    int64_t total = exec_in(k, n, 0)->numel;
    float cap = relu_cap(n);
    EXEC_PAR_FOR(k, total, MATH_PAR_MIN, float v = X[i] > 0.0f ? X[i] : 0.0f; Y[i] = v < cap ? v : cap;);
    return EXEC_OK;
}

exec_status op_grad_ClippedRelu(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_ClippedReluGrad, 2, (uint32_t[]){ dout[0], n->in[0] }, 1, n->attrs);
    return g->status;
}

/* dx = 0 < x < cap ? dy : 0 */
exec_status op_shape_ClippedReluGrad(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    if (n->nattrs < 1)
        return exec_fail(EXEC_ERR_SHAPE, "ClippedReluGrad: attribute 0 must be the cap");
    return math_shape_same2(g, n, o);
}

exec_status op_fwd_ClippedReluGrad(exec_kctx *k, const exec_node *n)
{
    const float *restrict D = exec_inf(k, n, 0), *restrict X = exec_inf(k, n, 1);
    float *restrict Y = exec_outf(k, n, 0);
    int64_t total = exec_in(k, n, 0)->numel;
    float cap = relu_cap(n);
    EXEC_PAR_FOR(k, total, MATH_PAR_MIN, Y[i] = X[i] > 0.0f && X[i] < cap ? D[i] : 0.0f;);
    return EXEC_OK;
}

/* ---- Softmax / LogSoftmax over the last axis: x [..., C] --------------- */
static exec_status shape_rows(const exec_graph *g, const exec_node *n, exec_shape *o, int nin)
{
    for (int i = 0; i < nin; i++)
        if (exec_gin(g, n, i)->ndim < 1)
            return exec_fail(EXEC_ERR_SHAPE, "%s: wants at least 1 dim", exec_op_name(n->op));
    return nin == 1 ? math_shape_unary(g, n, o) : math_shape_same2(g, n, o);
}
exec_status op_shape_Softmax(const exec_graph *g, const exec_node *n, exec_shape *o) { return shape_rows(g, n, o, 1); }
exec_status op_shape_LogSoftmax(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return shape_rows(g, n, o, 1);
}

static exec_status softmax_rows(exec_kctx *k, const exec_node *n, int logform)
{
    const exec_tensor *x = exec_in(k, n, 0);
    int64_t C = x->shape[x->ndim - 1], rows = x->numel / C;
    const float *X = x->data;
    float *Y = exec_outf(k, n, 0);
#pragma omp parallel for num_threads(k->nthreads) if (x->numel > MATH_PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = X + r * C;
        float *yr = Y + r * C;
        float m = xr[0];
        for (int64_t j = 1; j < C; j++)
            m = xr[j] > m ? xr[j] : m;
        float s = 0;
        if (logform) {
#pragma omp simd reduction(+ : s)
            for (int64_t j = 0; j < C; j++)
                s += math_expf(xr[j] - m);
            float ls = logf(s); /* (x - m) - log s: no rounding at m's magnitude */
#pragma omp simd
            for (int64_t j = 0; j < C; j++)
                yr[j] = (xr[j] - m) - ls;
        } else {
#pragma omp simd reduction(+ : s)
            for (int64_t j = 0; j < C; j++) {
                yr[j] = math_expf(xr[j] - m);
                s += yr[j];
            }
            float inv = 1.0f / s;
#pragma omp simd
            for (int64_t j = 0; j < C; j++)
                yr[j] *= inv;
        }
    }
    return EXEC_OK;
}

exec_status op_fwd_Softmax(exec_kctx *k, const exec_node *n) { return softmax_rows(k, n, 0); }
exec_status op_fwd_LogSoftmax(exec_kctx *k, const exec_node *n) { return softmax_rows(k, n, 1); }

exec_status op_grad_Softmax(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, SoftmaxGrad, n->out[0], dout[0]);
    return g->status;
}

exec_status op_grad_LogSoftmax(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, LogSoftmaxGrad, n->out[0], dout[0]);
    return g->status;
}

exec_status op_shape_SoftmaxGrad(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return shape_rows(g, n, o, 2);
}
exec_status op_shape_LogSoftmaxGrad(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return shape_rows(g, n, o, 2);
}

/* SoftmaxGrad(y, dy): dx = y * (dy - sum_j dy_j y_j)
 * LogSoftmaxGrad(y, dy): dx = dy - exp(y) * sum_j dy_j */
static exec_status softmax_grad_rows(exec_kctx *k, const exec_node *n, int logform)
{
    const exec_tensor *y = exec_in(k, n, 0);
    int64_t C = y->shape[y->ndim - 1], rows = y->numel / C;
    const float *Yv = y->data, *D = exec_inf(k, n, 1);
    float *DX = exec_outf(k, n, 0);
#pragma omp parallel for num_threads(k->nthreads) if (y->numel > MATH_PAR_MIN)
    for (int64_t r = 0; r < rows; r++) {
        const float *yr = Yv + r * C, *dr = D + r * C;
        float *xr = DX + r * C;
        float s = 0;
        if (logform) {
#pragma omp simd reduction(+ : s)
            for (int64_t j = 0; j < C; j++)
                s += dr[j];
#pragma omp simd
            for (int64_t j = 0; j < C; j++)
                xr[j] = dr[j] - math_expf(yr[j]) * s;
        } else {
#pragma omp simd reduction(+ : s)
            for (int64_t j = 0; j < C; j++)
                s += dr[j] * yr[j];
#pragma omp simd
            for (int64_t j = 0; j < C; j++)
                xr[j] = yr[j] * (dr[j] - s);
        }
    }
    return EXEC_OK;
}

exec_status op_fwd_SoftmaxGrad(exec_kctx *k, const exec_node *n) { return softmax_grad_rows(k, n, 0); }
exec_status op_fwd_LogSoftmaxGrad(exec_kctx *k, const exec_node *n) { return softmax_grad_rows(k, n, 1); }
