/* pool.c -- MaxPool, AvgPool and their gradients (TF's names and inputs).
 *
 * x [N,C,H,W] -> y [N,C,OH,OW], OH = (H + 2*ph - KH) / sh + 1; attrs
 * "kh,kw,sh,sw,ph,pw". Padding is symmetric and never takes part: a max
 * ignores pad cells, an average divides by the number of real cells in its
 * window (TF's SAME average). Padding must be smaller than the window, so
 * every window holds at least one real cell. Global average pooling is
 * AvgPool with the window the whole image (ex_global_avg_pool).
 * Kernels split over the N*C planes. */
#include "../internal.h"

#define PAR_MIN 16384 /* output elements below which a kernel stays single-threaded */

typedef struct pool_geom {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw, oh, ow;
} pool_geom;

static exec_status pool_geom_make(pool_geom *q, const exec_node *n, const int64_t *nchw, const char *who)
{
    if (n->nattrs < 6)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants attrs kh,kw,sh,sw,ph,pw", who);
    *q = (pool_geom){ .n = nchw[0],
                      .c = nchw[1],
                      .h = nchw[2],
                      .w = nchw[3],
                      .kh = n->attrs[0],
                      .kw = n->attrs[1],
                      .sh = n->attrs[2],
                      .sw = n->attrs[3],
                      .ph = n->attrs[4],
                      .pw = n->attrs[5] };
    if (q->n <= 0 || q->c <= 0 || q->h <= 0 || q->w <= 0)
        return exec_fail(EXEC_ERR_SHAPE, "%s: empty input", who);
    if (q->kh <= 0 || q->kw <= 0 || q->sh <= 0 || q->sw <= 0 || q->ph < 0 || q->pw < 0)
        return exec_fail(EXEC_ERR_SHAPE, "%s: bad window %lldx%lld / stride %lldx%lld / padding %lldx%lld", who,
                         (long long)q->kh, (long long)q->kw, (long long)q->sh, (long long)q->sw, (long long)q->ph,
                         (long long)q->pw);
    if (q->ph >= q->kh || q->pw >= q->kw)
        return exec_fail(EXEC_ERR_SHAPE, "%s: padding %lldx%lld must be smaller than the %lldx%lld window", who,
                         (long long)q->ph, (long long)q->pw, (long long)q->kh, (long long)q->kw);
    if (q->h + 2 * q->ph < q->kh || q->w + 2 * q->pw < q->kw)
        return exec_fail(EXEC_ERR_SHAPE, "%s: %lldx%lld window larger than the padded %lldx%lld input", who,
                         (long long)q->kh, (long long)q->kw, (long long)q->h, (long long)q->w);
    q->oh = (q->h + 2 * q->ph - q->kh) / q->sh + 1;
    q->ow = (q->w + 2 * q->pw - q->kw) / q->sw + 1;
    return EXEC_OK;
}

/* The window of output (oh, ow), clipped to the image: rows [*h0, *h1),
 * columns [*w0, *w1). */
static inline void window(const pool_geom *q, int64_t oh, int64_t ow, int64_t *h0, int64_t *h1, int64_t *w0,
                          int64_t *w1)
{
    int64_t hs = oh * q->sh - q->ph, ws = ow * q->sw - q->pw;
    int64_t he = hs + q->kh, we = ws + q->kw;
    *h0 = hs < 0 ? 0 : hs;
    *w0 = ws < 0 ? 0 : ws;
    *h1 = he > q->h ? q->h : he;
    *w1 = we > q->w ? q->w : we;
}

static exec_status shape_pool(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const char *who = exec_op_name(n->op);
    const exec_tensor *x = exec_gin(g, n, 0);
    if (x->ndim != 4 || x->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants a float [N,C,H,W] input (got %d-D)", who, x->ndim);
    pool_geom q = { 0 };
    exec_status s = pool_geom_make(&q, n, x->shape, who);
    if (s)
        return s;
    exec_shape_set(out, EXEC_F32, 4, (int64_t[]){ q.n, q.c, q.oh, q.ow });
    return EXEC_OK;
}

/* The first maximum of the window (the forward's choice, the gradient's
 * target): its offset in the plane. */
static inline int64_t argmax_window(const pool_geom *q, const float *plane, int64_t oh, int64_t ow)
{
    int64_t h0, h1, w0, w1;
    window(q, oh, ow, &h0, &h1, &w0, &w1);
    int64_t best = h0 * q->w + w0;
    float m = plane[best];
    for (int64_t h = h0; h < h1; h++)
        for (int64_t w = w0; w < w1; w++)
            if (plane[h * q->w + w] > m) {
                m = plane[h * q->w + w];
                best = h * q->w + w;
            }
    return best;
}

/* Over nr (1 to 3) rows from x, W floats apart, the 3-wide windows at
 * columns 2j, 2j+1, 2j+2 (j < n), folded in the window's order (rows, then
 * columns, `v > m ? v : m`): y[j] their maximum and, where idx is given,
 * idx[j] its cell (row * 3 + column), the first maximum. NR constant in
 * each call of fold3, so its loops unroll into the cells. */
static inline __attribute__((always_inline)) void fold3(float *restrict y, int32_t *restrict idx,
                                                        const float *restrict x, int64_t W, int64_t n, const int NR,
                                                        const bool want_idx)
{
#pragma omp simd
    for (int64_t j = 0; j < n; j++) {
        float m = x[2 * j];
        int32_t at = 0;
#pragma GCC unroll 3
        for (int r = 0; r < NR; r++)
#pragma GCC unroll 3
            for (int c = r ? 0 : 1; c < 3; c++) {
                const float v = x[r * W + 2 * j + c];
                at = v > m ? r * 3 + c : at;
                m = v > m ? v : m;
            }
        y[j] = m;
        if (want_idx)
            idx[j] = at;
    }
}

static void fold3_rows(float *restrict y, int32_t *restrict idx, const float *restrict x, int64_t W, int64_t nr,
                       int64_t n)
{
    if (idx && nr == 3)
        fold3(y, idx, x, W, n, 3, true);
    else if (idx && nr == 2)
        fold3(y, idx, x, W, n, 2, true);
    else if (idx)
        fold3(y, idx, x, W, n, 1, true);
    else if (nr == 3)
        fold3(y, NULL, x, W, n, 3, false);
    else if (nr == 2)
        fold3(y, NULL, x, W, n, 2, false);
    else
        fold3(y, NULL, x, W, n, 1, false);
}

/* the inside columns [*lo, *hi) of AlexNet's and ResNet's 3x3 windows of
 * stride 2 (vectors of outputs); none for other windows */
static void fold3_span(const pool_geom *q, int64_t *lo, int64_t *hi)
{
    const bool vec3 = q->kw == 3 && q->sw == 2 && q->kh <= 3;
    const int64_t last = vec3 && q->w + q->pw >= 3 ? (q->w + q->pw - 3) / 2 + 1 : 0;
    *lo = vec3 ? (q->pw + 1) / 2 : 0;
    *hi = last < q->ow ? last : q->ow;
}

/* ---- MaxPool ------------------------------------------------------------ */
exec_status op_shape_MaxPool(const exec_graph *g, const exec_node *n, exec_shape *out) { return shape_pool(g, n, out); }

/* Every maximum compares the window's cells in one order (rows, then
 * columns, from its first cell: `v > m ? v : m`), so every way below gives
 * the same result, NaN included: VGG's 2x2 windows, the inside columns of
 * 3x3 windows of stride 2 (fold3: the window's cells in registers), and
 * every other window one at a time. (Vectors over the output columns with
 * a read-modify-write of the row once per window cell measured slower on
 * AlexNet's rows of 3 to 31 outputs.) */
exec_status op_fwd_MaxPool(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0), *yt = exec_out(k, n, 0);
    pool_geom q;
    pool_geom_make(&q, n, xt->shape, "MaxPool");
    const float *X = xt->data;
    float *Y = yt->data;
    const int64_t planes = q.n * q.c, HW = q.h * q.w, OHW = q.oh * q.ow, W = q.w;
    if (q.kh == 2 && q.kw == 2 && q.sh == 2 && q.sw == 2 && q.ph == 0 && q.pw == 0) {
        /* VGG's 2x2 windows of stride 2: every window inside, two input
         * rows an output row, whole vectors (the stride known here) */
#pragma omp parallel for num_threads(k->nthreads) if (yt->numel > PAR_MIN) schedule(static)
        for (int64_t p = 0; p < planes; p++)
            for (int64_t oh = 0; oh < q.oh; oh++) {
                const float *restrict r0 = X + p * HW + 2 * oh * W, *restrict r1 = r0 + W;
                float *restrict yr = Y + p * OHW + oh * q.ow;
#pragma omp simd
                for (int64_t ow = 0; ow < q.ow; ow++) {
                    float m = r0[2 * ow], v = r0[2 * ow + 1];
                    m = v > m ? v : m;
                    v = r1[2 * ow];
                    m = v > m ? v : m;
                    v = r1[2 * ow + 1];
                    yr[ow] = v > m ? v : m;
                }
            }
        return EXEC_OK;
    }
    /* AlexNet's and ResNet's 3x3 windows of stride 2: the columns whose
     * windows lie inside the row ([lo, hi)) a vector of outputs at a time
     * (stride-2 loads, the window's cells in registers, in the same order),
     * the edges a window at a time; other windows a window at a time (lo =
     * hi = 0). One window at a time everywhere took 12 ms a step on
     * ResNet-50's [16,64,112,112] (4 GB/s). */
    int64_t lo, hi;
    fold3_span(&q, &lo, &hi);
#pragma omp parallel for num_threads(k->nthreads) if (yt->numel > PAR_MIN) schedule(static)
    for (int64_t p = 0; p < planes; p++) {
        const float *x = X + p * HW;
        float *y = Y + p * OHW;
        for (int64_t oh = 0; oh < q.oh; oh++) {
            float *restrict yr = y + oh * q.ow;
            for (int64_t ow = 0; ow < q.ow; ow++) {
                int64_t h0, h1, w0, w1;
                window(&q, oh, ow, &h0, &h1, &w0, &w1);
                if (ow == lo && lo < hi) {
                    fold3_rows(yr + lo, NULL, x + h0 * W + 2 * lo - q.pw, W, h1 - h0, hi - lo);
                    ow = hi - 1;
                    continue;
                }
                float m = x[h0 * W + w0];
                for (int64_t h = h0; h < h1; h++)
                    for (int64_t w = w0; w < w1; w++)
                        m = x[h * W + w] > m ? x[h * W + w] : m;
                yr[ow] = m;
            }
        }
    }
    return EXEC_OK;
}

exec_status op_grad_MaxPool(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_MaxPoolGrad, 3, (uint32_t[]){ n->in[0], n->out[0], dout[0] }, 6, n->attrs);
    return g->status;
}

/* ---- MaxPoolGrad: dx [N,C,H,W] from x, y [N,C,OH,OW] and dy (TF's
 *      inputs); each dy goes to its window's first maximum ---------------- */
exec_status op_shape_MaxPoolGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    exec_shape ys;
    exec_status s = shape_pool(g, n, &ys);
    if (s)
        return s;
    for (int i = 1; i < 3; i++) {
        const exec_tensor *t = exec_gin(g, n, i);
        if (t->ndim != 4 || t->dtype != EXEC_F32 || t->shape[0] != ys.d[0] || t->shape[1] != ys.d[1] ||
            t->shape[2] != ys.d[2] || t->shape[3] != ys.d[3])
            return exec_fail(EXEC_ERR_SHAPE, "MaxPoolGrad: input %d must be [%lld,%lld,%lld,%lld]", i,
                             (long long)ys.d[0], (long long)ys.d[1], (long long)ys.d[2], (long long)ys.d[3]);
    }
    exec_shape_of(out, exec_gin(g, n, 0));
    return EXEC_OK;
}

exec_status op_fwd_MaxPoolGrad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0), *dyt = exec_in(k, n, 2);
    pool_geom q;
    pool_geom_make(&q, n, xt->shape, "MaxPoolGrad");
    const float *X = xt->data, *DY = dyt->data;
    float *DX = exec_outf(k, n, 0);
    const int64_t planes = q.n * q.c, HW = q.h * q.w, OHW = q.oh * q.ow, W = q.w;
    if (q.kh == 2 && q.kw == 2 && q.sh == 2 && q.sw == 2 && q.ph == 0 && q.pw == 0) {
        /* VGG's 2x2 windows of stride 2 do not overlap: each output row
         * writes its two input rows whole, dy at the window's first
         * maximum (the forward's order) and zero elsewhere, in one pass
         * with no zeroing first; a last odd row or column, which no window
         * covers, is zero. A window at a time into a zeroed plane took 344 us
         * on VGG small's first (batch 8, 15 GB/s); this, 33 us. */
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > PAR_MIN) schedule(static)
        for (int64_t p = 0; p < planes; p++) {
            const float *dy = DY + p * OHW;
            for (int64_t oh = 0; oh < q.oh; oh++) {
                const float *restrict r0 = X + p * HW + 2 * oh * W, *restrict r1 = r0 + W, *restrict g = dy + oh * q.ow;
                float *restrict d0 = DX + p * HW + 2 * oh * W, *restrict d1 = d0 + W;
#pragma omp simd
                for (int64_t ow = 0; ow < q.ow; ow++) {
                    const float a = r0[2 * ow], b = r0[2 * ow + 1], c = r1[2 * ow], e = r1[2 * ow + 1];
                    /* the winner from the last cell back: dy goes to a cell
                     * that beats the maximum of the cells before it, and
                     * what it leaves to the cells before; float selects
                     * only, so the loop vectorizes (with bools GCC kept it
                     * scalar, with branches: 720 us) */
                    const float mb = b > a ? b : a, mc = c > mb ? c : mb, v = g[ow];
                    d1[2 * ow + 1] = e > mc ? v : 0.0f;
                    const float ve = e > mc ? 0.0f : v;
                    d1[2 * ow] = c > mb ? ve : 0.0f;
                    const float vc = c > mb ? 0.0f : ve;
                    d0[2 * ow + 1] = b > a ? vc : 0.0f;
                    d0[2 * ow] = b > a ? 0.0f : vc;
                }
                if (W & 1)
                    d0[W - 1] = d1[W - 1] = 0.0f;
            }
            if (q.h & 1)
                memset(DX + p * HW + (q.h - 1) * W, 0, (size_t)W * sizeof *DX);
        }
        return EXEC_OK;
    }
    /* other windows a window at a time into a zeroed plane; 3x3 of stride
     * 2 (AlexNet's, ResNet's) find the first maxima of the inside columns
     * a vector at a time (fold3), then add dy at them one by one (adjacent
     * windows share a column). ResNet-50's [8,64,112,112] in bench_kernels:
     * 6.26 ms a window at a time everywhere, 3.2-3.4 this way. */
    int64_t lo, hi;
    fold3_span(&q, &lo, &hi);
    enum { RUN = 256 };
    const int64_t cell[9] = { 0, 1, 2, W, W + 1, W + 2, 2 * W, 2 * W + 1, 2 * W + 2 }; /* fold3's cells' offsets */
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > PAR_MIN) schedule(static)
    for (int64_t p = 0; p < planes; p++) {
        const float *x = X + p * HW, *dy = DY + p * OHW;
        float *dx = DX + p * HW;
        memset(dx, 0, (size_t)HW * sizeof *dx);
        for (int64_t oh = 0; oh < q.oh; oh++)
            for (int64_t ow = 0; ow < q.ow; ow++) {
                if (ow == lo && lo < hi) {
                    int64_t h0, h1, w0, w1;
                    window(&q, oh, ow, &h0, &h1, &w0, &w1);
                    for (int64_t j0 = lo; j0 < hi; j0 += RUN) {
                        const int64_t nj = hi - j0 < RUN ? hi - j0 : RUN;
                        float m[RUN];
                        int32_t at[RUN];
                        const int64_t c0 = 2 * j0 - q.pw;
                        fold3_rows(m, at, x + h0 * W + c0, W, h1 - h0, nj);
                        float *restrict d = dx + h0 * W + c0;
                        const float *restrict g = dy + oh * q.ow + j0;
                        for (int64_t j = 0; j < nj; j++)
                            d[2 * j + cell[at[j]]] += g[j];
                    }
                    ow = hi - 1;
                    continue;
                }
                dx[argmax_window(&q, x, oh, ow)] += dy[oh * q.ow + ow];
            }
    }
    return EXEC_OK;
}

/* ---- AvgPool ------------------------------------------------------------ */
exec_status op_shape_AvgPool(const exec_graph *g, const exec_node *n, exec_shape *out) { return shape_pool(g, n, out); }

exec_status op_fwd_AvgPool(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0), *yt = exec_out(k, n, 0);
    pool_geom q;
    pool_geom_make(&q, n, xt->shape, "AvgPool");
    const float *X = xt->data;
    float *Y = yt->data;
    const int64_t planes = q.n * q.c, HW = q.h * q.w, OHW = q.oh * q.ow;
    if (q.kh == q.h && q.kw == q.w && q.ph == 0 && q.pw == 0) {
        /* global average pooling (ResNet's head): a plane is one contiguous
         * sum, a plain loop where it is shorter than a vector or two (the
         * window loop below spent most of a 2x2 plane's time on its
         * bounds and its vector reduction's set-up) */
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > PAR_MIN) schedule(static)
        for (int64_t p = 0; p < planes; p++) {
            const float *restrict x = X + p * HW;
            float s = 0;
            if (HW < 32) {
                for (int64_t e = 0; e < HW; e++)
                    s += x[e];
            } else {
#pragma omp simd reduction(+ : s)
                for (int64_t e = 0; e < HW; e++)
                    s += x[e];
            }
            Y[p] = s / (float)HW;
        }
        return EXEC_OK;
    }
#pragma omp parallel for num_threads(k->nthreads) if (xt->numel > PAR_MIN) schedule(static)
    for (int64_t p = 0; p < planes; p++) {
        const float *x = X + p * HW;
        float *y = Y + p * OHW;
        for (int64_t oh = 0; oh < q.oh; oh++)
            for (int64_t ow = 0; ow < q.ow; ow++) {
                int64_t h0, h1, w0, w1;
                window(&q, oh, ow, &h0, &h1, &w0, &w1);
                float s = 0;
                for (int64_t h = h0; h < h1; h++) {
                    const float *r = x + h * q.w;
#pragma omp simd reduction(+ : s)
                    for (int64_t w = w0; w < w1; w++)
                        s += r[w];
                }
                y[oh * q.ow + ow] = s / (float)((h1 - h0) * (w1 - w0));
            }
    }
    return EXEC_OK;
}

exec_status op_grad_AvgPool(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0]) {
        const exec_tensor *x = exec_t(g, n->in[0]);
        int64_t a[10];
        memcpy(a, n->attrs, 6 * sizeof *a);
        memcpy(a + 6, x->shape, 4 * sizeof *a);
        din[0] = exec_op1(g, EXEC_OP_AvgPoolGrad, 1, &dout[0], 10, a);
    }
    return g->status;
}

/* ---- AvgPoolGrad: dx [n,c,h,w] from dy [N,C,OH,OW]; attrs
 *      kh,kw,sh,sw,ph,pw,n,c,h,w (the input's shape) --------------------- */
exec_status op_shape_AvgPoolGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *dy = exec_gin(g, n, 0);
    if (n->nattrs != 10)
        return exec_fail(EXEC_ERR_SHAPE, "AvgPoolGrad: wants attrs kh,kw,sh,sw,ph,pw,n,c,h,w");
    pool_geom q;
    exec_status s = pool_geom_make(&q, n, n->attrs + 6, "AvgPoolGrad");
    if (s)
        return s;
    if (dy->ndim != 4 || dy->dtype != EXEC_F32 || dy->shape[0] != q.n || dy->shape[1] != q.c || dy->shape[2] != q.oh ||
        dy->shape[3] != q.ow)
        return exec_fail(EXEC_ERR_SHAPE, "AvgPoolGrad: dy must be [%lld,%lld,%lld,%lld]", (long long)q.n,
                         (long long)q.c, (long long)q.oh, (long long)q.ow);
    exec_shape_set(out, EXEC_F32, 4, n->attrs + 6);
    return EXEC_OK;
}

exec_status op_fwd_AvgPoolGrad(exec_kctx *k, const exec_node *n)
{
    pool_geom q;
    pool_geom_make(&q, n, n->attrs + 6, "AvgPoolGrad");
    const float *DY = exec_inf(k, n, 0);
    float *DX = exec_outf(k, n, 0);
    const int64_t planes = q.n * q.c, HW = q.h * q.w, OHW = q.oh * q.ow;
#pragma omp parallel for num_threads(k->nthreads) if (planes * HW > PAR_MIN) schedule(static)
    for (int64_t p = 0; p < planes; p++) {
        const float *dy = DY + p * OHW;
        float *dx = DX + p * HW;
        memset(dx, 0, (size_t)HW * sizeof *dx);
        for (int64_t oh = 0; oh < q.oh; oh++)
            for (int64_t ow = 0; ow < q.ow; ow++) {
                int64_t h0, h1, w0, w1;
                window(&q, oh, ow, &h0, &h1, &w0, &w1);
                float v = dy[oh * q.ow + ow] / (float)((h1 - h0) * (w1 - w0));
                for (int64_t h = h0; h < h1; h++) {
                    float *r = dx + h * q.w;
#pragma omp simd
                    for (int64_t w = w0; w < w1; w++)
                        r[w] += v;
                }
            }
    }
    return EXEC_OK;
}
