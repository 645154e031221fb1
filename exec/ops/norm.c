/* norm.c -- local response normalization, batch normalization and layer
 * normalization.
 *
 * LRN and FusedBatchNorm work on the channel axis 1 of x [N,C,...] (NCHW
 * images, or [N,C]); LayerNorm on the last axis (its comment below).
 *
 * LRN (TF's, across channels as AlexNet uses it): attrs
 * "depth_radius,bias(f),alpha(f),beta(f)";
 *     y[n,c,s] = x[n,c,s] / (bias + alpha * sum_{|c'-c| <= r} x[n,c',s]^2)^beta
 * (alpha is not divided by the window size, as in TF; Caffe's differs).
 *
 * FusedBatchNorm (TF's): in [x, scale, offset, running_mean, running_var],
 * attrs "epsilon(f),momentum(f),training"; out [y, saved_mean, saved_inv_std].
 * Statistics are per channel over N and the spatial dims.
 *   training=1: mean/var of the batch (biased var for normalizing);
 *     running_mean <- momentum*running_mean + (1-momentum)*mean and
 *     running_var  <- momentum*running_var  + (1-momentum)*var*M/(M-1)
 *     (unbiased, as TF), written IN PLACE into the two inputs: a side
 *     effect the graph does not see; nothing else writes those tensors, so
 *     no ordering is lost.
 *   training=0: the running statistics normalize; nothing is written.
 *   saved_mean / saved_inv_std are the statistics used (1/sqrt(var+eps)),
 *   the inputs of FusedBatchNormGrad. */
#include "../internal.h"

#include <omp.h>

/* Elements below which a kernel stays single-threaded: the threshold
 * measured for a streaming loop (threads.c), since every kernel here does
 * at least a multiply-add per element, and never more than 16384. */
static int64_t par_min(void)
{
    int64_t m = exec_par_min(EXEC_WORK_STREAM);
    return m < 16384 ? m : 16384;
}

/* outer = N, c = C, inner = product of the dims after the channel axis */
static void nci(const exec_tensor *x, int64_t *outer, int64_t *c, int64_t *inner)
{
    *outer = x->shape[0];
    *c = x->shape[1];
    *inner = x->numel / (x->shape[0] * x->shape[1]);
}

static int64_t attr(const exec_node *n, int i) { return i < n->nattrs ? n->attrs[i] : 0; }

/* t^-beta, with the AlexNet exponent done without powf */
static inline float neg_pow(float t, float beta)
{
    if (beta == 0.75f) {
        float r = sqrtf(t);
        return 1.0f / (r * sqrtf(r));
    }
    if (beta == 0.5f)
        return 1.0f / sqrtf(t);
    if (beta == 1.0f)
        return 1.0f / t;
    return powf(t, -beta);
}

/* y[s] = x[s] * t[s]^-beta (t[s] > 0), a loop per exponent so that each
 * vectorizes (sqrt and division have vector instructions; the branch of
 * neg_pow inside the loop would keep it scalar). x may be NULL: then
 * y = t^-beta. y may be t. */
static void lrn_pow(float *y, const float *t, const float *x, int64_t n, float beta)
{
    if (beta == 0.75f && x) {
#pragma omp simd
        for (int64_t s = 0; s < n; s++) {
            float r = sqrtf(t[s]);
            y[s] = x[s] / (r * sqrtf(r));
        }
    } else if (beta == 0.75f) {
#pragma omp simd
        for (int64_t s = 0; s < n; s++) {
            float r = sqrtf(t[s]);
            y[s] = 1.0f / (r * sqrtf(r));
        }
    } else {
        for (int64_t s = 0; s < n; s++)
            y[s] = (x ? x[s] : 1.0f) * neg_pow(t[s], beta);
    }
}

typedef struct lrn_p {
    int64_t r;
    float bias, alpha, beta;
} lrn_p;

static lrn_p lrn_params(const exec_node *n)
{
    return (lrn_p){ .r = attr(n, 0),
                    .bias = exec_attr_getf(attr(n, 1)),
                    .alpha = exec_attr_getf(attr(n, 2)),
                    .beta = exec_attr_getf(attr(n, 3)) };
}

/* norm[s] = bias + alpha * sum of x^2 over the channel window of c, for
 * one image x [C, inner] */
static void lrn_norm(const lrn_p *p, const float *restrict x, int64_t C, int64_t inner, int64_t c, float *restrict norm)
{
    int64_t c0 = c - p->r < 0 ? 0 : c - p->r, c1 = c + p->r >= C ? C - 1 : c + p->r;
    for (int64_t s = 0; s < inner; s++)
        norm[s] = 0;
    for (int64_t cc = c0; cc <= c1; cc++) {
        const float *restrict xr = x + cc * inner;
#pragma omp simd
        for (int64_t s = 0; s < inner; s++)
            norm[s] += xr[s] * xr[s];
    }
#pragma omp simd
    for (int64_t s = 0; s < inner; s++)
        norm[s] = p->bias + p->alpha * norm[s];
}

static exec_status lrn_check(const exec_graph *g, const exec_node *n, const exec_tensor *x)
{
    const char *who = exec_op_name(n->op);
    if (x->ndim < 2 || x->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants a float [N,C,...] tensor", who);
    lrn_p p = lrn_params(n);
    if (n->nattrs != 4 || p.r < 0 || !(p.bias > 0) || !(p.alpha >= 0))
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants depth_radius >= 0, bias > 0, alpha >= 0", who);
    (void)g;
    return EXEC_OK;
}

/* ---- LRN: y = x / (bias + alpha * window sum of x^2)^beta --------------- */
exec_status op_shape_LRN(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    exec_status s = lrn_check(g, n, x);
    if (s)
        return s;
    exec_shape_of(out, x);
    return EXEC_OK;
}

exec_status op_fwd_LRN(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0);
    const lrn_p p = lrn_params(n);
    int64_t N, C, inner;
    nci(xt, &N, &C, &inner);
    const float *X = xt->data;
    float *Y = exec_outf(k, n, 0);
    /* y's plane holds the normalizer first, then the result */
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > par_min()) schedule(static)
    for (int64_t nc = 0; nc < N * C; nc++) {
        int64_t i = nc / C, c = nc % C;
        const float *x = X + i * C * inner;
        float *restrict y = Y + nc * inner;
        const float *restrict xc = X + nc * inner;
        lrn_norm(&p, x, C, inner, c, y);
        lrn_pow(y, y, xc, inner, p.beta);
    }
    return EXEC_OK;
}

exec_status op_grad_LRN(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_LRNGrad, 3, (uint32_t[]){ dout[0], n->in[0], n->out[0] }, 4, n->attrs);
    return g->status;
}

/* ---- LRNGrad: dx from dy, x, y (TF's inputs). With norm_c = bias + alpha *
 *      window sum of x^2:
 *      dx_c = dy_c * norm_c^-beta
 *             - 2*alpha*beta * x_c * sum_{c' within r of c} dy_c' * y_c' / norm_c' */
exec_status op_shape_LRNGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *dy = exec_gin(g, n, 0), *x = exec_gin(g, n, 1), *y = exec_gin(g, n, 2);
    exec_status s = lrn_check(g, n, x);
    if (s)
        return s;
    if (!exec_same_shape(dy, x) || !exec_same_shape(y, x))
        return exec_fail(EXEC_ERR_SHAPE, "LRNGrad: dy, x and y must have one shape");
    exec_shape_of(out, x);
    return EXEC_OK;
}

exec_status op_fwd_LRNGrad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 1);
    const lrn_p p = lrn_params(n);
    int64_t N, C, inner;
    nci(xt, &N, &C, &inner);
    const float *DY = exec_inf(k, n, 0), *X = xt->data, *Y = exec_inf(k, n, 2);
    float *DX = exec_outf(k, n, 0);
    /* scratch: t = dy*y/norm for every element; dx holds norm^-beta meanwhile */
    float *T = exec_kscratch(k, (size_t)xt->numel * sizeof *T);
    if (!T)
        return exec_fail(EXEC_ERR_NOMEM, "LRNGrad: no memory for %lld elements of scratch", (long long)xt->numel);
    const float k2ab = 2.0f * p.alpha * p.beta;
#pragma omp parallel num_threads(k->nthreads) if (xt->numel > par_min())
    {
#pragma omp for schedule(static)
        for (int64_t nc = 0; nc < N * C; nc++) {
            int64_t i = nc / C, c = nc % C;
            float *restrict dx = DX + nc * inner, *restrict t = T + nc * inner;
            const float *restrict dy = DY + nc * inner, *restrict y = Y + nc * inner;
            lrn_norm(&p, X + i * C * inner, C, inner, c, dx);
#pragma omp simd
            for (int64_t s = 0; s < inner; s++)
                t[s] = dy[s] * y[s] / dx[s];
            lrn_pow(dx, dx, NULL, inner, p.beta);
        }
#pragma omp for schedule(static)
        for (int64_t nc = 0; nc < N * C; nc++) {
            int64_t i = nc / C, c = nc % C;
            int64_t c0 = c - p.r < 0 ? 0 : c - p.r, c1 = c + p.r >= C ? C - 1 : c + p.r;
            float *restrict dx = DX + nc * inner;
            const float *restrict dy = DY + nc * inner, *restrict x = X + nc * inner;
            /* each plane's dx only needs its own norm^-beta and t of the
             * window: t is complete after the barrier above. Plane by
             * plane of the window, so that the loops run along s. */
#pragma omp simd
            for (int64_t s = 0; s < inner; s++)
                dx[s] *= dy[s];
            for (int64_t cc = c0; cc <= c1; cc++) {
                const float *restrict t = T + (i * C + cc) * inner;
#pragma omp simd
                for (int64_t s = 0; s < inner; s++)
                    dx[s] -= k2ab * x[s] * t[s];
            }
        }
    }
    return EXEC_OK;
}

/* ---- FusedBatchNorm ----------------------------------------------------- */
static exec_status check_vec(const exec_tensor *v, int64_t c, const char *who, const char *what)
{
    if (v->dtype != EXEC_F32 || v->numel != c)
        return exec_fail(EXEC_ERR_SHAPE, "%s: %s must hold %lld floats (one per channel), has %lld", who, what,
                         (long long)c, (long long)v->numel);
    return EXEC_OK;
}

exec_status op_shape_FusedBatchNorm(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    if (x->ndim < 2 || x->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "FusedBatchNorm: wants a float [N,C,...] tensor");
    static const char *const what[] = { "", "scale", "offset", "running_mean", "running_var" };
    for (int i = 1; i < 5; i++) {
        exec_status s = check_vec(exec_gin(g, n, i), x->shape[1], "FusedBatchNorm", what[i]);
        if (s)
            return s;
    }
    if (n->nattrs != 3 || !(exec_attr_getf(n->attrs[0]) > 0))
        return exec_fail(EXEC_ERR_SHAPE, "FusedBatchNorm: wants attrs epsilon (> 0), momentum, training");
    if (n->attrs[2] && x->numel / x->shape[1] < 2)
        return exec_fail(EXEC_ERR_SHAPE, "FusedBatchNorm: training needs at least 2 values per channel");
    exec_shape_of(&out[0], x);
    exec_shape_set(&out[1], EXEC_F32, 1, &x->shape[1]);
    exec_shape_set(&out[2], EXEC_F32, 1, &x->shape[1]);
    return EXEC_OK;
}

/* Short rows: where a channel holds fewer than BN_ROW values an image
 * (inner: 7x7 maps and smaller, [N,C] tensors), a loop per row runs a
 * vector or less; the kernels then take blocks of BN_ROW / inner channels,
 * whose values lie side by side in each image, and run each image's block
 * as one vector loop against per-value copies of the channels' constants.
 * A block holds fewer than 2 BN_ROW values. */
#define BN_ROW 64

/* The running statistics' update and the saved ones of channel c from the
 * shifted sums s = sum (x - k0), s2 = sum (x - k0)^2 over its M values:
 * one pass for both moments, the shift k0 (the channel's first value)
 * keeping the variance's difference of squares from cancelling when
 * |mean| >> std. */
static void bn_moments(double s, double s2, float k0, int64_t M, float mom, float *mean, float *var, float *rmean,
                       float *rvar)
{
    double dm = s / (double)M, v = s2 - s * dm; /* sum (x - mean)^2 */
    if (v < 0)
        v = 0;
    *mean = (float)(k0 + dm);
    *var = (float)(v / (double)M);
    *rmean = mom * *rmean + (1.0f - mom) * *mean;
    *rvar = mom * *rvar + (1.0f - mom) * (float)(v / (double)(M - 1));
}

/* Inference (training false): y = x a[c] + b[c], a = scale / sqrt(var +
 * eps), b = offset - mean a, one pass at streaming speed. The constants of
 * all channels first, in vector loops over the channels (per channel, the
 * square root and division alone cost more than a short row); then threads
 * split x as one flat array. Rows of BN_VEC values or more take their
 * channel's constants as scalars; shorter rows (3x3 maps and smaller) use
 * per-value copies of the constants over one image, CI = C x inner values
 * (at most BN_PATTERN: else rows), so that a loop runs along whole images. */
#define BN_VEC 16
#define BN_PATTERN 8192
static exec_status bn_infer(exec_kctx *k, const exec_node *n, int64_t N, int64_t C, int64_t inner)
{
    const float eps = exec_attr_getf(n->attrs[0]);
    /* Y may be X's buffer (forwarding.c): each y[i] is written after x[i] is read */
    const float *X = exec_inf(k, n, 0), *restrict scale = exec_inf(k, n, 1), *restrict offset = exec_inf(k, n, 2),
                *restrict rmean = exec_inf(k, n, 3), *restrict rvar = exec_inf(k, n, 4);
    float *Y = exec_outf(k, n, 0), *restrict smean = exec_outf(k, n, 1), *restrict sinv = exec_outf(k, n, 2);
    const int64_t CI = C * inner, total = N * CI;
    const bool pattern = inner < BN_VEC && CI <= BN_PATTERN;
    float *a = exec_kscratch(k, (size_t)(pattern ? 2 * CI + 2 * C : 2 * C) * sizeof *a);
    if (!a)
        return exec_fail(EXEC_ERR_NOMEM, "FusedBatchNorm: no memory for %lld channels' constants", (long long)C);
    float *restrict A = a, *restrict B = a + C;
#pragma omp simd
    for (int64_t c = 0; c < C; c++) {
        float inv = 1.0f / sqrtf(rvar[c] + eps), m = rmean[c], sc = scale[c] * inv;
        smean[c] = m;
        sinv[c] = inv;
        A[c] = sc;
        B[c] = offset[c] - m * sc;
    }
    if (pattern) {
        float *restrict PA = a + 2 * C, *restrict PB = PA + CI;
        for (int64_t c = 0; c < C; c++)
            for (int64_t e = 0; e < inner; e++)
                PA[c * inner + e] = A[c], PB[c * inner + e] = B[c];
#pragma omp parallel num_threads(k->nthreads) if (total > par_min() && k->nthreads > 1)
        {
            const int t = omp_get_thread_num(), nt = omp_get_num_threads();
            const int64_t lo = total * t / nt, hi = total * (t + 1) / nt;
            for (int64_t pos = lo; pos < hi;) {
                const int64_t off = pos % CI, len = CI - off < hi - pos ? CI - off : hi - pos;
                const float *x = X + pos, *restrict pa = PA + off, *restrict pb = PB + off;
                float *y = Y + pos;
#pragma omp simd
                for (int64_t j = 0; j < len; j++)
                    y[j] = x[j] * pa[j] + pb[j];
                pos += len;
            }
        }
        return EXEC_OK;
    }
    const int64_t rows = N * C;
#pragma omp parallel num_threads(k->nthreads) if (total > par_min() && k->nthreads > 1 && rows > 1)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        const int64_t r0 = rows * t / nt, r1 = rows * (t + 1) / nt;
        for (int64_t r = r0, c = r0 % C; r < r1; r++, c = c + 1 < C ? c + 1 : 0) {
            const float ar = A[c], br = B[c];
            const float *x = X + r * inner;
            float *y = Y + r * inner;
#pragma omp simd
            for (int64_t e = 0; e < inner; e++)
                y[e] = x[e] * ar + br;
        }
    }
    return EXEC_OK;
}

exec_status op_fwd_FusedBatchNorm(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0);
    int64_t N, C, inner;
    nci(xt, &N, &C, &inner);
    const float eps = exec_attr_getf(n->attrs[0]), mom = exec_attr_getf(n->attrs[1]);
    if (n->attrs[2] == 0)
        return bn_infer(k, n, N, C, inner);
    const float *X = xt->data, *scale = exec_inf(k, n, 1), *offset = exec_inf(k, n, 2);
    float *rmean = exec_inf(k, n, 3), *rvar = exec_inf(k, n, 4);
    float *Y = exec_outf(k, n, 0), *smean = exec_outf(k, n, 1), *sinv = exec_outf(k, n, 2);
    const int64_t M = N * inner;
    if (inner < BN_ROW) {
        /* blocks of cb channels; y = x * A + B with A, B per value */
        const int64_t cb = (BN_ROW + inner - 1) / inner, nb = (C + cb - 1) / cb, CI = C * inner;
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > par_min() && nb > 1) schedule(static)
        for (int64_t bi = 0; bi < nb; bi++) {
            const int64_t c0 = bi * cb, c1 = c0 + cb < C ? c0 + cb : C, L = (c1 - c0) * inner, j0 = c0 * inner;
            float A[2 * BN_ROW], B[2 * BN_ROW];
            float K[2 * BN_ROW], S[2 * BN_ROW], S2[2 * BN_ROW];
            for (int64_t j = 0; j < L; j++) {
                K[j] = X[j0 + j / inner * inner];
                S[j] = S2[j] = 0;
            }
            for (int64_t i = 0; i < N; i++) {
                const float *restrict x = X + i * CI + j0;
#pragma omp simd
                for (int64_t j = 0; j < L; j++) {
                    float d = x[j] - K[j];
                    S[j] += d;
                    S2[j] += d * d;
                }
            }
            for (int64_t c = c0; c < c1; c++) {
                double s = 0, s2 = 0;
                for (int64_t e = (c - c0) * inner; e < (c - c0 + 1) * inner; e++)
                    s += S[e], s2 += S2[e];
                bn_moments(s, s2, K[(c - c0) * inner], M, mom, &smean[c], &sinv[c], &rmean[c], &rvar[c]);
            }
            for (int64_t c = c0; c < c1; c++) { /* sinv holds the variance until here */
                float inv = 1.0f / sqrtf(sinv[c] + eps), a = scale[c] * inv, b = offset[c] - smean[c] * a;
                sinv[c] = inv;
                for (int64_t e = (c - c0) * inner; e < (c - c0 + 1) * inner; e++)
                    A[e] = a, B[e] = b;
            }
            for (int64_t i = 0; i < N; i++) {
                const float *restrict x = X + i * CI + j0;
                float *restrict y = Y + i * CI + j0;
#pragma omp simd
                for (int64_t j = 0; j < L; j++)
                    y[j] = x[j] * A[j] + B[j];
            }
        }
        return EXEC_OK;
    }
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > par_min() && C > 1) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        float mean, var;
        const float k0 = X[c * inner];
        double s = 0, s2 = 0;
        for (int64_t i = 0; i < N; i++) {
            const float *restrict x = X + (i * C + c) * inner;
            float part = 0, part2 = 0;
#pragma omp simd reduction(+ : part, part2)
            for (int64_t e = 0; e < inner; e++) {
                float d = x[e] - k0;
                part += d;
                part2 += d * d;
            }
            s += part;
            s2 += part2;
        }
        bn_moments(s, s2, k0, M, mom, &mean, &var, &rmean[c], &rvar[c]);
        float inv = 1.0f / sqrtf(var + eps);
        smean[c] = mean;
        sinv[c] = inv;
        /* y = x * a + b */
        float a = scale[c] * inv, b = offset[c] - mean * a;
        for (int64_t i = 0; i < N; i++) {
            const float *restrict x = X + (i * C + c) * inner;
            float *restrict y = Y + (i * C + c) * inner;
#pragma omp simd
            for (int64_t e = 0; e < inner; e++)
                y[e] = x[e] * a + b;
        }
    }
    return EXEC_OK;
}

/* Gradients flow through y only; saved_mean / saved_inv_std are statistics
 * for FusedBatchNormGrad, not differentiable outputs here. The running
 * statistics get no gradient. */
exec_status op_grad_FusedBatchNorm(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (dout[1] || dout[2])
        return exec_fail(EXEC_ERR_ARG, "FusedBatchNorm: no gradient through saved_mean / saved_inv_std");
    uint32_t outs[3] = { 0 };
    exec_op_add(g, EXEC_OP_FusedBatchNormGrad, 5, (uint32_t[]){ dout[0], n->in[0], n->in[1], n->out[1], n->out[2] }, 2,
                (int64_t[]){ n->attrs[0], n->attrs[2] }, outs);
    if (g->status)
        return g->status;
    for (int i = 0; i < 3; i++)
        if (din[i])
            din[i] = outs[i];
    din[3] = din[4] = 0;
    return EXEC_OK;
}

/* ---- FusedBatchNormGrad: [dx, dscale, doffset] from dy, x, scale,
 *      saved_mean, saved_inv_std; attrs epsilon(f), training. Per channel,
 *      with xhat = (x - mean) * inv_std over its M values:
 *        doffset = sum dy, dscale = sum dy*xhat,
 *        training: dx = scale*inv_std/M * (M*dy - doffset - xhat*dscale)
 *        inference: dx = scale*inv_std * dy (the statistics are constants) */
exec_status op_shape_FusedBatchNormGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *dy = exec_gin(g, n, 0), *x = exec_gin(g, n, 1);
    if (x->ndim < 2 || x->dtype != EXEC_F32 || !exec_same_shape(dy, x) || dy->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "FusedBatchNormGrad: wants dy and x of one float [N,C,...] shape");
    static const char *const what[] = { "", "", "scale", "saved_mean", "saved_inv_std" };
    for (int i = 2; i < 5; i++) {
        exec_status s = check_vec(exec_gin(g, n, i), x->shape[1], "FusedBatchNormGrad", what[i]);
        if (s)
            return s;
    }
    exec_shape_of(&out[0], x);
    exec_shape_set(&out[1], EXEC_F32, 1, &x->shape[1]);
    exec_shape_set(&out[2], EXEC_F32, 1, &x->shape[1]);
    return EXEC_OK;
}

exec_status op_fwd_FusedBatchNormGrad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 1);
    int64_t N, C, inner;
    nci(xt, &N, &C, &inner);
    const bool training = n->nattrs > 1 && n->attrs[1];
    const float *DY = exec_inf(k, n, 0), *X = xt->data, *scale = exec_inf(k, n, 2), *mean = exec_inf(k, n, 3),
                *inv = exec_inf(k, n, 4);
    float *DX = exec_outf(k, n, 0), *dscale = exec_outf(k, n, 1), *doffset = exec_outf(k, n, 2);
    const int64_t M = N * inner;
    if (inner < BN_ROW) { /* blocks of channels, as the forward's */
        const int64_t cb = (BN_ROW + inner - 1) / inner, nb = (C + cb - 1) / cb, CI = C * inner;
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > par_min() && nb > 1) schedule(static)
        for (int64_t bi = 0; bi < nb; bi++) {
            const int64_t c0 = bi * cb, c1 = c0 + cb < C ? c0 + cb : C, L = (c1 - c0) * inner, j0 = c0 * inner;
            float MU[2 * BN_ROW], SA[2 * BN_ROW], SB[2 * BN_ROW];
            for (int64_t j = 0; j < L; j++) {
                MU[j] = mean[c0 + j / inner];
                SA[j] = SB[j] = 0;
            }
            for (int64_t i = 0; i < N; i++) {
                const float *restrict dy = DY + i * CI + j0, *restrict x = X + i * CI + j0;
#pragma omp simd
                for (int64_t j = 0; j < L; j++) {
                    SA[j] += dy[j];
                    SB[j] += dy[j] * (x[j] - MU[j]);
                }
            }
            /* dx = dy * G + x * U + V, the channels' constants per value */
            float *G = MU, *U = SA, *V = SB;
            for (int64_t c = c0; c < c1; c++) {
                const int64_t e0 = (c - c0) * inner, e1 = e0 + inner;
                double sdy = 0, sdyx = 0;
                for (int64_t e = e0; e < e1; e++)
                    sdy += SA[e], sdyx += SB[e];
                const float is = inv[c], db = (float)sdy, ds = (float)(sdyx * is), gsc = scale[c] * is;
                doffset[c] = db;
                dscale[c] = ds;
                const float u = training ? -gsc * ds * is / (float)M : 0.0f;
                const float v = training ? -gsc * db / (float)M - mean[c] * u : 0.0f;
                for (int64_t e = e0; e < e1; e++)
                    G[e] = gsc, U[e] = u, V[e] = v;
            }
            for (int64_t i = 0; i < N; i++) {
                const float *restrict dy = DY + i * CI + j0, *restrict x = X + i * CI + j0;
                float *restrict dx = DX + i * CI + j0;
#pragma omp simd
                for (int64_t j = 0; j < L; j++)
                    dx[j] = dy[j] * G[j] + x[j] * U[j] + V[j];
            }
        }
        return EXEC_OK;
    }
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > par_min() && C > 1) schedule(static)
    for (int64_t c = 0; c < C; c++) {
        const float mu = mean[c], is = inv[c];
        double sdy = 0, sdyx = 0;
        for (int64_t i = 0; i < N; i++) {
            const float *restrict dy = DY + (i * C + c) * inner, *restrict x = X + (i * C + c) * inner;
            float a = 0, b = 0;
#pragma omp simd reduction(+ : a, b)
            for (int64_t e = 0; e < inner; e++) {
                a += dy[e];
                b += dy[e] * (x[e] - mu);
            }
            sdy += a;
            sdyx += b;
        }
        float db = (float)sdy, ds = (float)(sdyx * is);
        doffset[c] = db;
        dscale[c] = ds;
        float gsc = scale[c] * is;
        /* training: dx = gsc * (dy - db/M - xhat*ds/M) = dy*gsc + x*u + v */
        float u = training ? -gsc * ds * is / (float)M : 0.0f;
        float v = training ? -gsc * db / (float)M - mu * u : 0.0f;
        for (int64_t i = 0; i < N; i++) {
            const float *restrict dy = DY + (i * C + c) * inner, *restrict x = X + (i * C + c) * inner;
            float *restrict dx = DX + (i * C + c) * inner;
#pragma omp simd
            for (int64_t j = 0; j < inner; j++)
                dx[j] = dy[j] * gsc + x[j] * u + v;
        }
    }
    return EXEC_OK;
}

/* ---- LayerNorm: per row r of x [R, D] (x [...,D] flattened):
 *      mean_r, var_r over the D values (biased), inv_std_r = 1/sqrt(var_r + eps),
 *      y = (x - mean_r) * inv_std_r * gamma + beta; attrs epsilon(f);
 *      out [y, mean [R], inv_std [R]] (R = product of the leading dims) ---- */
static exec_status ln_rows(const exec_tensor *x, int64_t *rows, int64_t *d, const char *who)
{
    if (x->ndim < 1 || x->dtype != EXEC_F32 || x->shape[x->ndim - 1] < 1)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants a float [...,D] tensor", who);
    *d = x->shape[x->ndim - 1];
    *rows = x->numel / *d;
    return EXEC_OK;
}

exec_status op_shape_LayerNorm(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    int64_t R = 0, D = 0;
    exec_status s = ln_rows(x, &R, &D, "LayerNorm");
    if (s || (s = check_vec(exec_gin(g, n, 1), D, "LayerNorm", "gamma")) ||
        (s = check_vec(exec_gin(g, n, 2), D, "LayerNorm", "beta")))
        return s;
    if (n->nattrs != 1 || !(exec_attr_getf(n->attrs[0]) > 0))
        return exec_fail(EXEC_ERR_SHAPE, "LayerNorm: wants attr epsilon (> 0)");
    exec_shape_of(&out[0], x);
    exec_shape_set(&out[1], EXEC_F32, 1, &R);
    exec_shape_set(&out[2], EXEC_F32, 1, &R);
    return EXEC_OK;
}

exec_status op_fwd_LayerNorm(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0);
    const int64_t D = xt->shape[xt->ndim - 1], R = xt->numel / D;
    const float eps = exec_attr_getf(n->attrs[0]), invd = 1.0f / (float)D;
    const float *X = xt->data, *restrict gamma = exec_inf(k, n, 1), *restrict beta = exec_inf(k, n, 2);
    float *Y = exec_outf(k, n, 0), *mean = exec_outf(k, n, 1), *inv = exec_outf(k, n, 2);
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > par_min() && R > 1) schedule(static)
    for (int64_t r = 0; r < R; r++) {
        const float *restrict x = X + r * D;
        float *restrict y = Y + r * D;
        float s = 0, v = 0;
#pragma omp simd reduction(+ : s)
        for (int64_t e = 0; e < D; e++)
            s += x[e];
        const float mu = s * invd;
#pragma omp simd reduction(+ : v)
        for (int64_t e = 0; e < D; e++)
            v += (x[e] - mu) * (x[e] - mu);
        const float is = 1.0f / sqrtf(v * invd + eps);
        mean[r] = mu;
        inv[r] = is;
#pragma omp simd
        for (int64_t e = 0; e < D; e++)
            y[e] = (x[e] - mu) * is * gamma[e] + beta[e];
    }
    return EXEC_OK;
}

/* Gradients flow through y only (mean / inv_std are LayerNormGrad's inputs). */
exec_status op_grad_LayerNorm(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (dout[1] || dout[2])
        return exec_fail(EXEC_ERR_ARG, "LayerNorm: no gradient through mean / inv_std");
    uint32_t outs[3] = { 0 };
    exec_op_add(g, EXEC_OP_LayerNormGrad, 5, (uint32_t[]){ dout[0], n->in[0], n->in[1], n->out[1], n->out[2] }, 0, NULL,
                outs);
    if (g->status)
        return g->status;
    for (int i = 0; i < 3; i++)
        if (din[i])
            din[i] = outs[i];
    return EXEC_OK;
}

/* ---- LayerNormGrad: [dx, dgamma, dbeta] from dy, x, gamma, mean, inv_std.
 *      Per row, with xhat = (x - mean) * inv_std and h = dy * gamma:
 *        dx = inv_std * (h - mean(h) - xhat * mean(h * xhat));
 *      over the rows: dgamma = sum dy * xhat, dbeta = sum dy. ---- */
exec_status op_shape_LayerNormGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *dy = exec_gin(g, n, 0), *x = exec_gin(g, n, 1);
    int64_t R = 0, D = 0;
    exec_status s = ln_rows(x, &R, &D, "LayerNormGrad");
    if (s)
        return s;
    if (dy->dtype != EXEC_F32 || !exec_same_shape(dy, x))
        return exec_fail(EXEC_ERR_SHAPE, "LayerNormGrad: wants dy and x of one float [...,D] shape");
    if ((s = check_vec(exec_gin(g, n, 2), D, "LayerNormGrad", "gamma")) ||
        (s = check_vec(exec_gin(g, n, 3), R, "LayerNormGrad", "mean")) ||
        (s = check_vec(exec_gin(g, n, 4), R, "LayerNormGrad", "inv_std")))
        return s;
    exec_shape_of(&out[0], x);
    exec_shape_set(&out[1], EXEC_F32, 1, &D);
    exec_shape_set(&out[2], EXEC_F32, 1, &D);
    return EXEC_OK;
}

exec_status op_fwd_LayerNormGrad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 1);
    const int64_t D = xt->shape[xt->ndim - 1], R = xt->numel / D;
    const float invd = 1.0f / (float)D;
    const float *DY = exec_inf(k, n, 0), *X = xt->data, *restrict gamma = exec_inf(k, n, 2), *mean = exec_inf(k, n, 3),
                *inv = exec_inf(k, n, 4);
    float *DX = exec_outf(k, n, 0), *dgamma = exec_outf(k, n, 1), *dbeta = exec_outf(k, n, 2);
    const bool par = xt->numel > par_min();
#pragma omp parallel for num_threads(k->nthreads) if (par && R > 1) schedule(static)
    for (int64_t r = 0; r < R; r++) {
        const float *restrict dy = DY + r * D, *restrict x = X + r * D;
        float *restrict dx = DX + r * D;
        const float mu = mean[r], is = inv[r];
        float sh = 0, shx = 0;
#pragma omp simd reduction(+ : sh, shx)
        for (int64_t e = 0; e < D; e++) {
            float h = dy[e] * gamma[e];
            sh += h;
            shx += h * (x[e] - mu) * is;
        }
        sh *= invd;
        shx *= invd;
#pragma omp simd
        for (int64_t e = 0; e < D; e++)
            dx[e] = is * (dy[e] * gamma[e] - sh - (x[e] - mu) * is * shx);
    }
    /* the parameter gradients: column blocks, each summed over every row */
    const int64_t blk = 64, nblk = (D + blk - 1) / blk;
#pragma omp parallel for num_threads(k->nthreads) if (par && nblk > 1) schedule(static)
    for (int64_t b = 0; b < nblk; b++) {
        const int64_t e0 = b * blk, e1 = e0 + blk < D ? e0 + blk : D;
        float *restrict dg = dgamma + e0, *restrict db = dbeta + e0;
        for (int64_t e = 0; e < e1 - e0; e++)
            dg[e] = db[e] = 0;
        for (int64_t r = 0; r < R; r++) {
            const float *restrict dy = DY + r * D + e0, *restrict x = X + r * D + e0;
            const float mu = mean[r], is = inv[r];
#pragma omp simd
            for (int64_t e = 0; e < e1 - e0; e++) {
                dg[e] += dy[e] * (x[e] - mu) * is;
                db[e] += dy[e];
            }
        }
    }
    return EXEC_OK;
}
