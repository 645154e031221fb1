/* mathkern.h -- kernel macros and shape rules shared by the elementwise
 * families (elementwise.c, arith.c, activation.c): b broadcasts onto a when
 * it is a scalar or matches a's trailing dims. */
#ifndef FATHOM_EXEC_OPS_MATHKERN_H
#define FATHOM_EXEC_OPS_MATHKERN_H
#include "../internal.h"

/* elements below which a kernel stays single-threaded (measured: threads.c) */
#define MATH_PAR_MIN exec_par_min(EXEC_WORK_STREAM)
#define MATH_PAR_MIN_TRANSCENDENTAL exec_par_min(EXEC_WORK_MATH)

/* exp and tanh for float kernels: branch-free, so `omp simd` loops vectorize
 * them (libm's expf/tanhf are scalar calls, 5-12 ns an element here), and
 * their cost does not depend on the values (a replay on synthetic data times
 * what the recording timed).
 * math_expf: Cephes' expf (Cody-Waite reduction by ln 2, degree-6
 * polynomial); max relative error 8e-8 over [-87, 88]; the argument is
 * clamped to [-87.34, 88.38] (exp(-100) gives 1.2e-38, not a denormal).
 * math_tanhf: a [13/6] rational minimax approximation on [-7.905, 7.905]
 * (Eigen's fast tanh; +-1 beyond), x itself below 4e-4; max relative error
 * 4e-7. tests/test_ops_math.c checks both against libm. */
static inline float math_expf(float x)
{
    x = x > 88.3762626647949f ? 88.3762626647949f : x;
    x = x < -87.3365447505531f ? -87.3365447505531f : x;
    float n = __builtin_rintf(x * 1.44269504088896341f); /* nearest (even): inlined, unlike roundf */
    float r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float y = 1.9875691500e-4f;
    y = y * r + 1.3981999507e-3f;
    y = y * r + 8.3334519073e-3f;
    y = y * r + 4.1665795894e-2f;
    y = y * r + 1.6666665459e-1f;
    y = y * r + 5.0000001201e-1f;
    y = y * (r * r) + r + 1.0f;
    /* unsigned: a NaN x (n undefined) must not make the shift undefined;
     * y is NaN then and so is the result */
    union {
        uint32_t i;
        float f;
    } two_n = { .i = (uint32_t)((int32_t)n + 127) << 23 };
    return y * two_n.f;
}

static inline float math_tanhf(float x)
{
    const float c = 7.90531110763549805f;
    float xc = x > c ? c : (x < -c ? -c : x), x2 = xc * xc;
    float p = -2.76076847742355e-16f;
    p = p * x2 + 2.00018790482477e-13f;
    p = p * x2 + -8.60467152213735e-11f;
    p = p * x2 + 5.12229709037114e-08f;
    p = p * x2 + 1.48572235717979e-05f;
    p = p * x2 + 6.37261928875436e-04f;
    p = p * x2 + 4.89352455891786e-03f;
    float q = 1.19825839466702e-06f;
    q = q * x2 + 1.18534705686654e-04f;
    q = q * x2 + 2.26843463243900e-03f;
    q = q * x2 + 4.89352518554385e-03f;
    float t = xc * p / q;
    return (x < 4e-4f && x > -4e-4f) ? x : t;
}

/* math_logf: Cephes' logf (exponent from the bits, mantissa in
 * [sqrt(1/2), sqrt(2)), degree-9 polynomial); x > 0 and normal; max relative
 * error 1e-7. math_log1pf(x) = log(1 + x) for x >= 0 (1 + x rounded: below
 * 6e-8 it returns 0, an absolute error under 6e-8). */
static inline float math_logf(float x)
{
    union {
        float f;
        uint32_t i;
    } u = { .f = x };
    int32_t e = (int32_t)((u.i >> 23) & 0xff) - 126;
    u.i = (u.i & 0x007fffffu) | 0x3f000000u; /* mantissa in [0.5, 1) */
    float m = u.f;
    int small = m < 0.707106781186547524f;
    e -= small;
    m = small ? m + m - 1.0f : m - 1.0f;
    float z = m * m, fe = (float)e;
    float y = 7.0376836292e-2f;
    y = y * m - 1.1514610310e-1f;
    y = y * m + 1.1676998740e-1f;
    y = y * m - 1.2420140846e-1f;
    y = y * m + 1.4249322787e-1f;
    y = y * m - 1.6668057665e-1f;
    y = y * m + 2.0000714765e-1f;
    y = y * m - 2.4999993993e-1f;
    y = y * m + 3.3333331174e-1f;
    y = y * m * z;
    y += -2.12194440e-4f * fe;
    y += -0.5f * z;
    return m + y + 0.693359375f * fe;
}

static inline float math_log1pf(float x) { return math_logf(1.0f + x); }

static inline float math_sigmoid(float x)
{
    float e = math_expf(x < 0.0f ? x : -x); /* exp(-|x|) */
    return x >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}

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

/* out[i] = expr(a = a[i], b = b[i % period]): b of a's shape, a scalar
 * (period 1: b in a register), or rows of `period` (the rows split over the
 * threads when there are enough of them; one thread with no parallel region
 * otherwise) */
#define MATH_BINARY_KERNEL(name, expr)                                                                   \
    /* y[i] = expr(a = a[i], b = b[i]) over one row of n */                                              \
    static inline void name##_row(float *yr, const float *ar, const float *B, int64_t n)                 \
    {                                                                                                    \
        _Pragma("omp simd") for (int64_t i = 0; i < n; i++)                                              \
        {                                                                                                \
            float a = ar[i], b = B[i];                                                                   \
            yr[i] = (expr);                                                                              \
        }                                                                                                \
    }                                                                                                    \
    exec_status op_fwd_##name(exec_kctx *k, const exec_node *n)                                          \
    {                                                                                                    \
        const exec_tensor *at = exec_in(k, n, 0), *bt = exec_in(k, n, 1);                                \
        const float *A = at->data, *B = bt->data; /* y may be a's or b's buffer (forwarding.c) */        \
        float *Y = exec_outf(k, n, 0);                                                                   \
        int64_t total = at->numel, p = exec_bcast_period(at, bt);                                        \
        if (p == total) {                                                                                \
            EXEC_PAR_FOR(k, total, MATH_PAR_MIN, float a = A[i], b = B[i]; Y[i] = (expr););              \
        } else if (p == 1) {                                                                             \
            const float b0 = B[0];                                                                       \
            EXEC_PAR_FOR(k, total, MATH_PAR_MIN, float a = A[i], b = b0; Y[i] = (expr););                \
        } else if (total > MATH_PAR_MIN && k->nthreads > 1) {                                            \
            _Pragma("omp parallel for num_threads(k->nthreads)") for (int64_t o = 0; o < total / p; o++) \
                name##_row(Y + o * p, A + o * p, B, p);                                                  \
        } else { /* no parallel region at all */                                                         \
            for (int64_t o = 0; o < total / p; o++)                                                      \
                name##_row(Y + o * p, A + o * p, B, p);                                                  \
        }                                                                                                \
        return EXEC_OK;                                                                                  \
    }

/* y[i] = expr(x = x[i]); _TRANSCENDENTAL: an expr of exp or tanh, whose
 * serial time per element makes fewer elements worth a second thread */
#define MATH_UNARY_KERNEL_AT(name, expr, min)                          \
    exec_status op_fwd_##name(exec_kctx *k, const exec_node *n)        \
    {                                                                  \
        const float *X = exec_inf(k, n, 0); /* y may be x's buffer */  \
        float *Y = exec_outf(k, n, 0);                                 \
        int64_t total = exec_in(k, n, 0)->numel;                       \
        EXEC_PAR_FOR(k, total, (min), float x = X[i]; Y[i] = (expr);); \
        return EXEC_OK;                                                \
    }
#define MATH_UNARY_KERNEL(name, expr) MATH_UNARY_KERNEL_AT(name, expr, MATH_PAR_MIN)
#define MATH_UNARY_KERNEL_TRANSCENDENTAL(name, expr) MATH_UNARY_KERNEL_AT(name, expr, MATH_PAR_MIN_TRANSCENDENTAL)

#define MATH_BIN(g, op, a, b) exec_op1((g), EXEC_OP_##op, 2, (uint32_t[]){ (a), (b) }, 0, NULL)
#define MATH_UN(g, op, a) exec_op1((g), EXEC_OP_##op, 1, (uint32_t[]){ (a) }, 0, NULL)

/* A float scalar constant [1] for gradient rules (role input, 4 bytes). */
static inline uint32_t math_scalar(exec_graph *g, const char *name, float v)
{
    return exec_const(g, name, 1, (int64_t[]){ 1 }, v);
}
#endif
