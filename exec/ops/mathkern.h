/* mathkern.h -- kernel macros and shape rules shared by the elementwise
 * families (elementwise.c, arith.c, activation.c): b broadcasts onto a when
 * it is a scalar or matches a's trailing dims. */
#ifndef FATHOM_EXEC_OPS_MATHKERN_H
#define FATHOM_EXEC_OPS_MATHKERN_H
#include "../internal.h"

#define MATH_PAR_MIN 32768 /* elements below which a kernel stays single-threaded */

static inline exec_status math_shape_unary(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    if (x->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants a float tensor", exec_op_name(n->op));
    exec_shape_of(out, x);
    return EXEC_OK;
}

static inline exec_status math_shape_binary(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0), *b = exec_gin(g, n, 1);
    if (a->dtype != EXEC_F32 || b->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants float tensors", exec_op_name(n->op));
    if (!exec_bcast_period(a, b))
        return exec_fail(EXEC_ERR_SHAPE, "%s: %lld elements do not broadcast onto %lld", exec_op_name(n->op),
                         (long long)b->numel, (long long)a->numel);
    exec_shape_of(out, a);
    return EXEC_OK;
}

/* Two float tensors of one shape (the *Grad ops). */
static inline exec_status math_shape_same2(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0), *b = exec_gin(g, n, 1);
    if (a->dtype != EXEC_F32 || b->dtype != EXEC_F32 || !exec_same_shape(a, b))
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants two float tensors of one shape", exec_op_name(n->op));
    exec_shape_of(out, a);
    return EXEC_OK;
}

/* out[i] = expr(a = a[i], b = b[i % period]) */
#define MATH_BINARY_KERNEL(name, expr)                                                         \
    exec_status op_fwd_##name(exec_kctx *k, const exec_node *n)                                \
    {                                                                                          \
        const exec_tensor *at = exec_in(k, n, 0), *bt = exec_in(k, n, 1);                      \
        const float *restrict A = at->data, *restrict B = bt->data;                            \
        float *restrict Y = exec_outf(k, n, 0);                                                \
        int64_t total = at->numel, p = exec_bcast_period(at, bt);                              \
        if (p == total) {                                                                      \
            _Pragma("omp parallel for simd num_threads(k->nthreads) if (total > MATH_PAR_MIN)") \
            for (int64_t i = 0; i < total; i++) {                                              \
                float a = A[i], b = B[i];                                                      \
                Y[i] = (expr);                                                                 \
            }                                                                                  \
        } else {                                                                               \
            int64_t outer = total / p;                                                         \
            _Pragma("omp parallel for num_threads(k->nthreads) if (total > MATH_PAR_MIN)")     \
            for (int64_t o = 0; o < outer; o++) {                                              \
                const float *ar = A + o * p;                                                   \
                float *yr = Y + o * p;                                                         \
                _Pragma("omp simd")                                                            \
                for (int64_t i = 0; i < p; i++) {                                              \
                    float a = ar[i], b = B[i];                                                 \
                    yr[i] = (expr);                                                            \
                }                                                                              \
            }                                                                                  \
        }                                                                                      \
        return EXEC_OK;                                                                        \
    }

/* y[i] = expr(x = x[i]) */
#define MATH_UNARY_KERNEL(name, expr)                                                          \
    exec_status op_fwd_##name(exec_kctx *k, const exec_node *n)                                \
    {                                                                                          \
        const float *restrict X = exec_inf(k, n, 0);                                           \
        float *restrict Y = exec_outf(k, n, 0);                                                \
        int64_t total = exec_in(k, n, 0)->numel;                                               \
        _Pragma("omp parallel for simd num_threads(k->nthreads) if (total > MATH_PAR_MIN)")     \
        for (int64_t i = 0; i < total; i++) {                                                  \
            float x = X[i];                                                                    \
            Y[i] = (expr);                                                                     \
        }                                                                                      \
        return EXEC_OK;                                                                        \
    }

#define MATH_BIN(g, op, a, b) exec_op1((g), EXEC_OP_##op, 2, (uint32_t[]){ (a), (b) }, 0, NULL)
#define MATH_UN(g, op, a) exec_op1((g), EXEC_OP_##op, 1, (uint32_t[]){ (a) }, 0, NULL)

/* A float scalar constant [1] for gradient rules (role input, 4 bytes). */
static inline uint32_t math_scalar(exec_graph *g, const char *name, float v)
{
    return exec_const(g, name, 1, (int64_t[]){ 1 }, v);
}
#endif
