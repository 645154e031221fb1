/* arith.c -- more elementwise arithmetic (Sub, Div, Pow, Neg, Square, Sqrt,
 * Exp, Log, Equal) and the elementwise data movers (Select, ZerosLike, Cast,
 * Identity). Binary ops broadcast b onto a (same shape, a scalar, or a's
 * trailing dims); the output has a's shape and b's gradient is summed back
 * with exec_unbroadcast. */
#include "mathkern.h"

#include <limits.h>

/* ---- Sub / Div / Pow: y[A] = a[A] op b[A or trailing or 1] ------------- */
exec_status op_shape_Sub(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_binary(g, n, o); }
exec_status op_shape_Div(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_binary(g, n, o); }
exec_status op_shape_Pow(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_binary(g, n, o); }
MATH_BINARY_KERNEL(Sub, a - b)
MATH_BINARY_KERNEL(Div, a / b)
MATH_BINARY_KERNEL(Pow, powf(a, b))

/* da = dy; db = -sum_broadcast(dy) */
exec_status op_grad_Sub(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = dout[0];
    if (din[1])
        din[1] = exec_unbroadcast(g, MATH_UN(g, Neg, dout[0]), n->in[1]);
    return g->status;
}

/* da = dy / b; db = -sum_broadcast(dy * y / b) with y = a / b */
exec_status op_grad_Div(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    uint32_t b = n->in[1], y = n->out[0];
    if (din[0])
        din[0] = MATH_BIN(g, Div, dout[0], b);
    if (din[1]) {
        uint32_t t = MATH_BIN(g, Div, MATH_BIN(g, Mul, dout[0], y), b);
        din[1] = exec_unbroadcast(g, MATH_UN(g, Neg, t), b);
    }
    return g->status;
}

/* da = dy * b * a^(b-1); db = sum_broadcast(dy * y * log a) (defined for a > 0,
 * as the real power is) */
exec_status op_grad_Pow(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    uint32_t a = n->in[0], b = n->in[1], y = n->out[0];
    if (din[0]) {
        uint32_t bm1 = MATH_BIN(g, Sub, b, math_scalar(g, "pow_one", 1.0f));
        uint32_t p = MATH_BIN(g, Pow, a, bm1);
        din[0] = MATH_BIN(g, Mul, MATH_BIN(g, Mul, dout[0], p), b);
    }
    if (din[1]) {
        uint32_t t = MATH_BIN(g, Mul, MATH_BIN(g, Mul, dout[0], y), MATH_UN(g, Log, a));
        din[1] = exec_unbroadcast(g, t, b);
    }
    return g->status;
}

/* ---- Equal: y = a == b ? 1 : 0 (float mask; b broadcasts) -------------- */
exec_status op_shape_Equal(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return math_shape_binary(g, n, o);
}
MATH_BINARY_KERNEL(Equal, a == b ? 1.0f : 0.0f)

/* ---- unary: Neg, Square, Sqrt, Exp, Log -------------------------------- */
exec_status op_shape_Neg(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_unary(g, n, o); }
exec_status op_shape_Square(const exec_graph *g, const exec_node *n, exec_shape *o)
{
    return math_shape_unary(g, n, o);
}
exec_status op_shape_Sqrt(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_unary(g, n, o); }
exec_status op_shape_Exp(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_unary(g, n, o); }
exec_status op_shape_Log(const exec_graph *g, const exec_node *n, exec_shape *o) { return math_shape_unary(g, n, o); }
MATH_UNARY_KERNEL(Neg, -x)
MATH_UNARY_KERNEL(Square, x *x)
MATH_UNARY_KERNEL(Sqrt, sqrtf(x))
MATH_UNARY_KERNEL_TRANSCENDENTAL(Exp, expf(x))
MATH_UNARY_KERNEL_TRANSCENDENTAL(Log, logf(x))

exec_status op_grad_Neg(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    (void)n;
    if (din[0])
        din[0] = MATH_UN(g, Neg, dout[0]);
    return g->status;
}

/* dx = dy * (x + x) */
exec_status op_grad_Square(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, Mul, dout[0], MATH_BIN(g, Add, n->in[0], n->in[0]));
    return g->status;
}

/* dx = dy / (y + y) */
exec_status op_grad_Sqrt(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, Div, dout[0], MATH_BIN(g, Add, n->out[0], n->out[0]));
    return g->status;
}

/* dx = dy * y */
exec_status op_grad_Exp(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, Mul, dout[0], n->out[0]);
    return g->status;
}

/* dx = dy / x */
exec_status op_grad_Log(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = MATH_BIN(g, Div, dout[0], n->in[0]);
    return g->status;
}

/* ---- Select: in [cond f32, a, b] (one shape) -> cond != 0 ? a : b ------ */
exec_status op_shape_Select(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *c = exec_gin(g, n, 0), *a = exec_gin(g, n, 1), *b = exec_gin(g, n, 2);
    if (c->dtype != EXEC_F32 || a->dtype != b->dtype || !exec_same_shape(c, a) || !exec_same_shape(a, b))
        return exec_fail(EXEC_ERR_SHAPE, "Select: wants a float condition and two values, all of one shape");
    exec_shape_of(out, a);
    return EXEC_OK;
}

exec_status op_fwd_Select(exec_kctx *k, const exec_node *n)
{
    const float *restrict C = exec_inf(k, n, 0);
    const uint32_t *restrict A = exec_in(k, n, 1)->data, *restrict B = exec_in(k, n, 2)->data;
    uint32_t *restrict Y = exec_out(k, n, 0)->data;
    int64_t total = exec_out(k, n, 0)->numel;
    EXEC_PAR_FOR(k, total, MATH_PAR_MIN, Y[i] = C[i] != 0.0f ? A[i] : B[i];);
    return EXEC_OK;
}

/* da = Select(cond, dy, 0); db = Select(cond, 0, dy) */
exec_status op_grad_Select(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = 0; /* the condition is not differentiable */
    if (!din[1] && !din[2])
        return g->status;
    uint32_t c = n->in[0], z = MATH_UN(g, ZerosLike, dout[0]);
    if (din[1])
        din[1] = exec_op1(g, EXEC_OP_Select, 3, (uint32_t[]){ c, dout[0], z }, 0, NULL);
    if (din[2])
        din[2] = exec_op1(g, EXEC_OP_Select, 3, (uint32_t[]){ c, z, dout[0] }, 0, NULL);
    return g->status;
}

/* ---- ZerosLike: zeros of x's shape and dtype --------------------------- */
exec_status op_shape_ZerosLike(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    exec_shape_of(out, exec_gin(g, n, 0));
    return EXEC_OK;
}

exec_status op_fwd_ZerosLike(exec_kctx *k, const exec_node *n)
{
    memset(exec_out(k, n, 0)->data, 0, exec_out(k, n, 0)->bytes);
    return EXEC_OK;
}

/* ---- Cast: attrs dtype (exec_dtype). float -> int32 truncates toward zero
 * as TF does; out-of-range values saturate and NaN becomes 0 (C leaves those
 * undefined). ---------------------------------------------------------------- */
exec_status op_shape_Cast(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    if (n->nattrs < 1 || n->attrs[0] < 0 || n->attrs[0] >= EXEC_DTYPE_COUNT)
        return exec_fail(EXEC_ERR_SHAPE, "Cast: attribute 0 must name a dtype (0 float32, 1 int32)");
    exec_shape_of(out, exec_gin(g, n, 0));
    out->dtype = (exec_dtype)n->attrs[0];
    return EXEC_OK;
}

exec_status op_fwd_Cast(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *y = exec_out(k, n, 0);
    int64_t total = x->numel;
    if (x->dtype == y->dtype) {
        memcpy(y->data, x->data, x->bytes);
    } else if (x->dtype == EXEC_F32) {
        const float *restrict X = x->data;
        int32_t *restrict Y = y->data;
#pragma omp parallel for num_threads(k->nthreads) if (total > MATH_PAR_MIN)
        for (int64_t i = 0; i < total; i++) {
            float v = X[i];
            Y[i] = v != v ? 0 : v >= 2147483647.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)v;
        }
    } else {
        const int32_t *restrict X = x->data;
        float *restrict Y = y->data;
        EXEC_PAR_FOR(k, total, MATH_PAR_MIN, Y[i] = (float)X[i];);
    }
    return EXEC_OK;
}

/* float -> float passes the gradient; a cast through int32 stops it */
exec_status op_grad_Cast(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = exec_t(g, n->in[0])->dtype == EXEC_F32 && exec_t(g, n->out[0])->dtype == EXEC_F32 ? dout[0] : 0;
    return g->status;
}

/* ---- Identity: a copy --------------------------------------------------- */
exec_status op_shape_Identity(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    exec_shape_of(out, exec_gin(g, n, 0));
    return EXEC_OK;
}

exec_status op_fwd_Identity(exec_kctx *k, const exec_node *n)
{
    memcpy(exec_out(k, n, 0)->data, exec_in(k, n, 0)->data, exec_in(k, n, 0)->bytes);
    return EXEC_OK;
}

exec_status op_grad_Identity(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    (void)n;
    if (din[0])
        din[0] = dout[0];
    return g->status;
}

/* ---- MaskedFill: in [x f32, mask (f32 or int32)] -> mask != 0 ? value : x;
 *      mask has x's rank, each dim x's or 1 (broadcast); attrs value(f) ---- */
exec_status op_shape_MaskedFill(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *m = exec_gin(g, n, 1);
    if (x->dtype != EXEC_F32 || x->ndim < 1 || m->ndim != x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "MaskedFill: wants a float x and a mask of its rank");
    for (int i = 0; i < x->ndim; i++)
        if (m->shape[i] != x->shape[i] && m->shape[i] != 1)
            return exec_fail(EXEC_ERR_SHAPE, "MaskedFill: mask dim %d is %lld, wants %lld or 1", i,
                             (long long)m->shape[i], (long long)x->shape[i]);
    if (n->nattrs != 1)
        return exec_fail(EXEC_ERR_SHAPE, "MaskedFill: wants attr value");
    exec_shape_of(out, x);
    return EXEC_OK;
}

exec_status op_fwd_MaskedFill(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *m = exec_in(k, n, 1);
    const int nd = x->ndim;
    const int64_t C = x->shape[nd - 1], rows = x->numel / C, mc = m->shape[nd - 1] == 1 ? 0 : 1;
    const float value = exec_attr_getf(n->attrs[0]);
    const float *X = x->data;
    float *Y = exec_outf(k, n, 0);
    const bool fmask = m->dtype == EXEC_F32;
#pragma omp parallel for num_threads(k->nthreads) if (x->numel > MATH_PAR_MIN && rows > 1) schedule(static)
    for (int64_t r = 0; r < rows; r++) {
        /* the mask row of x's row r: its index over the leading dims, with
         * the mask's broadcast dims left out */
        int64_t rem = r, mo = 0;
        for (int d = nd - 2; d >= 0; d--) {
            int64_t i = rem % x->shape[d];
            rem /= x->shape[d];
            if (m->shape[d] != 1)
                mo += i * m->strides[d];
        }
        const float *restrict xr = X + r * C;
        float *restrict yr = Y + r * C;
        if (fmask) {
            const float *restrict mr = (const float *)m->data + mo;
#pragma omp simd
            for (int64_t j = 0; j < C; j++)
                yr[j] = mr[j * mc] != 0.0f ? value : xr[j];
        } else {
            const int32_t *restrict mr = (const int32_t *)m->data + mo;
#pragma omp simd
            for (int64_t j = 0; j < C; j++)
                yr[j] = mr[j * mc] != 0 ? value : xr[j];
        }
    }
    return EXEC_OK;
}

/* dx = MaskedFill(dy, mask, 0): the filled elements do not depend on x */
exec_status op_grad_MaskedFill(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] =
            exec_op1(g, EXEC_OP_MaskedFill, 2, (uint32_t[]){ dout[0], n->in[1] }, 1, (int64_t[]){ exec_attr_f(0.0f) });
    if (din[1])
        din[1] = 0; /* the mask is not differentiable */
    return g->status;
}
