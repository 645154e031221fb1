/* reduction.c -- reductions and expansions: BiasAddGrad, Sum, softmax losses. */
#include "mathkern.h"

#include <omp.h>

/* ---- BiasAddGrad: db[C] = sum of dy over every axis but `axis` --------- */
exec_status op_shape_BiasAddGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *dy = exec_gin(g, n, 0);
    int64_t ax = n->nattrs > 0 ? n->attrs[0] : dy->ndim - 1;
    if (ax < 0)
        ax += dy->ndim;
    if (ax < 0 || ax >= dy->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "BiasAddGrad: axis %lld out of range", (long long)ax);
    exec_shape_set(out, EXEC_F32, 1, &dy->shape[ax]);
    return EXEC_OK;
}

exec_status op_fwd_BiasAddGrad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *dy = exec_in(k, n, 0);
    int64_t ax = n->nattrs > 0 ? n->attrs[0] : dy->ndim - 1;
    if (ax < 0)
        ax += dy->ndim;
    int64_t c = dy->shape[ax], inner = dy->strides[ax], outer = dy->numel / (c * inner);
    const float *restrict D = dy->data;
    float *restrict B = exec_outf(k, n, 0);
    if (inner == 1) {
        double *acc = exec_kscratch(k, (size_t)c * sizeof *acc);
        if (!acc)
            return exec_fail(EXEC_ERR_NOMEM, "BiasAddGrad: no memory for %lld sums", (long long)c);
            /* the bias on the last axis: walk the rows in memory order, each
         * thread summing its own range of columns (a column at a time would
         * stride through all of dy once per column) */
#pragma omp parallel num_threads(k->nthreads) if (dy->numel > 65536)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            int64_t j0 = c * t / nt, j1 = c * (t + 1) / nt;
            memset(acc + j0, 0, (size_t)(j1 - j0) * sizeof *acc);
            for (int64_t o = 0; o < outer; o++) {
                const float *restrict r = D + o * c;
#pragma omp simd
                for (int64_t j = j0; j < j1; j++)
                    acc[j] += r[j];
            }
            for (int64_t j = j0; j < j1; j++)
                B[j] = (float)acc[j];
        }
        return EXEC_OK;
    }
#pragma omp parallel for num_threads(k->nthreads) if (dy->numel > 65536)
    for (int64_t j = 0; j < c; j++) {
        double s = 0;
        for (int64_t o = 0; o < outer; o++) {
            const float *r = D + (o * c + j) * inner;
            float part = 0;
#pragma omp simd reduction(+ : part)
            for (int64_t i = 0; i < inner; i++)
                part += r[i];
            s += part;
        }
        B[j] = (float)s;
    }
    return EXEC_OK;
}

/* ---- Sum: attrs keep_dims, then the axes to reduce --------------------- */
static exec_status reduce_axes(const exec_tensor *x, const exec_node *n, bool *red, bool *keep)
{
    *keep = n->nattrs > 0 && n->attrs[0];
    for (int i = 0; i < EXEC_MAX_DIMS; i++)
        red[i] = false;
    if (n->nattrs <= 1)
        for (int i = 0; i < x->ndim; i++)
            red[i] = true; /* no axes: reduce everything */
    for (int i = 1; i < n->nattrs; i++) {
        int64_t ax = n->attrs[i] < 0 ? n->attrs[i] + x->ndim : n->attrs[i];
        if (ax < 0 || ax >= x->ndim)
            return exec_fail(EXEC_ERR_SHAPE, "%s: axis %lld out of range for %d dims", exec_op_name(n->op),
                             (long long)n->attrs[i], x->ndim);
        red[ax] = true;
    }
    return EXEC_OK;
}

/* The output's stride along each of x's dims (0 along a reduced one). */
static void out_strides(const exec_tensor *x, const bool *red, int64_t *ostride)
{
    int64_t s = 1;
    for (int i = x->ndim - 1; i >= 0; i--) {
        ostride[i] = red[i] ? 0 : s;
        if (!red[i])
            s *= x->shape[i];
    }
}

/* The index of x's next row (its dims but the last), odometer-wise. */
static void next_row(const exec_tensor *x, int64_t *idx)
{
    for (int i = x->ndim - 2; i >= 0; i--) {
        if (++idx[i] < x->shape[i])
            break;
        idx[i] = 0;
    }
}

/* A reduction's gradient broadcast back to x: dy reshaped to the
 * keep-dims form (kd: 1 along each reduced dim), then tiled by mult (the
 * reduced dims' sizes); x's dims. */
static int keep_dims_form(const exec_tensor *x, const bool *red, int64_t *kd, int64_t *mult)
{
    for (int i = 0; i < x->ndim; i++) {
        kd[i] = red[i] ? 1 : x->shape[i];
        mult[i] = red[i] ? x->shape[i] : 1;
    }
    return x->ndim;
}

exec_status op_shape_Sum(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    bool red[EXEC_MAX_DIMS], keep;
    exec_status s = reduce_axes(x, n, red, &keep);
    if (s)
        return s;
    int64_t d[EXEC_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (!red[i])
            d[nd++] = x->shape[i];
        else if (keep)
            d[nd++] = 1;
    }
    if (nd == 0)
        d[nd++] = 1; /* a scalar is [1] */
    exec_shape_set(out, x->dtype, nd, d);
    return EXEC_OK;
}

/* y[0:I] = x[0, 0:I] + ... + x[R-1, 0:I] (the rows added in order): in
 * blocks of RB rows, 16 columns at a time, their sums kept in one vector
 * over the block's rows (a row at a time over all I took memnet's
 * [1600, 6, 20] 42 us, this 14) */
typedef float sum_v16 __attribute__((vector_size(64)));
/* v += p[0:16] (through a pointer: a 64-byte vector returned by value has
 * another ABI in the AVX2 copy of this file, which GCC warns of) */
static inline void sum_add(sum_v16 *v, const float *p)
{
    sum_v16 t;
    memcpy(&t, p, sizeof t);
    *v += t;
}

static inline void sum_rows(float *restrict y, const float *restrict x, int64_t R, int64_t I)
{
    enum { W = 16, RB = 64 };
    for (int64_t r0 = 0; r0 < R; r0 += RB) {
        const int64_t r1 = r0 + RB < R ? r0 + RB : R;
        int64_t i0 = 0;
        for (; i0 < I && I >= W; i0 += W) {
            if (i0 + W > I) { /* the first block's last vector ends at I, its repeated columns get the
                                 same sums; a later block's would add its rows to them twice */
                if (r0)
                    break;
                i0 = I - W;
            }
            sum_v16 a = { 0 };
            if (r0)
                sum_add(&a, y + i0);
            sum_add(&a, x + r0 * I + i0);
            for (int64_t r = r0 + 1; r < r1; r++)
                sum_add(&a, x + r * I + i0);
            memcpy(y + i0, &a, sizeof a);
        }
        for (int64_t i = i0; i < I; i++) {
            float a = r0 ? y[i] + x[r0 * I + i] : x[i];
            for (int64_t r = r0 + 1; r < r1; r++)
                a += x[r * I + i];
            y[i] = a;
        }
    }
}

exec_status op_fwd_Sum(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    bool red[EXEC_MAX_DIMS], keep;
    reduce_axes(x, n, red, &keep);
    const float *X = x->data;
    float *Y = exec_outf(k, n, 0);
    int64_t ototal = exec_out(k, n, 0)->numel;
    int64_t ostride[EXEC_MAX_DIMS];
    out_strides(x, red, ostride);
    /* reduced axes in one run [a0, a1] before the last: x as [O, R, I],
     * y[o, :] = x[o, 0, :] + ... + x[o, R-1, :] in rows of I (the same
     * order of additions as the general loop below, which pays an index
     * computation per row of the last dim) */
    int a0 = -1, a1 = -1;
    bool run = !red[x->ndim - 1];
    for (int i = 0; i < x->ndim && run; i++)
        if (red[i]) {
            if (a0 < 0)
                a0 = i;
            else if (a1 != i - 1)
                run = false;
            a1 = i;
        }
    if (run && a0 >= 0) {
        int64_t O = 1, R = 1, I = 1;
        for (int i = 0; i < x->ndim; i++)
            *(i < a0 ? &O : i <= a1 ? &R : &I) *= x->shape[i];
        if (x->numel > MATH_PAR_MIN && k->nthreads > 1) {
#pragma omp parallel for num_threads(k->nthreads)
            for (int64_t o = 0; o < O; o++)
                sum_rows(Y + o * I, X + o * R * I, R, I);
        } else {
            for (int64_t o = 0; o < O; o++)
                sum_rows(Y + o * I, X + o * R * I, R, I);
        }
        return EXEC_OK;
    }
    memset(Y, 0, (size_t)ototal * sizeof *Y);
    int64_t inner = x->shape[x->ndim - 1];
    int64_t idx[EXEC_MAX_DIMS] = { 0 };
    for (int64_t base = 0; base < x->numel; base += inner) {
        int64_t o = 0;
        for (int i = 0; i < x->ndim - 1; i++)
            o += idx[i] * ostride[i];
        const float *xr = X + base;
        if (red[x->ndim - 1]) {
            float acc = 0;
#pragma omp simd reduction(+ : acc)
            for (int64_t i = 0; i < inner; i++)
                acc += xr[i];
            Y[o] += acc;
        } else {
            float *yr = Y + o;
#pragma omp simd
            for (int64_t i = 0; i < inner; i++)
                yr[i] += xr[i];
        }
        next_row(x, idx);
    }
    return EXEC_OK;
}

/* dx = dy broadcast back: reshape to keep_dims form, then Tile. */
exec_status op_grad_Sum(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    const exec_tensor *x = exec_t(g, n->in[0]);
    bool red[EXEC_MAX_DIMS], keep;
    reduce_axes(x, n, red, &keep);
    int64_t kd[EXEC_MAX_DIMS], mult[EXEC_MAX_DIMS];
    int nd = keep_dims_form(x, red, kd, mult);
    uint32_t r = exec_op1(g, EXEC_OP_Reshape, 1, &dout[0], nd, kd);
    din[0] = exec_op1(g, EXEC_OP_Tile, 1, &r, nd, mult);
    return g->status;
}

/* ---- SparseSoftmaxCrossEntropyWithLogits and LabelSmoothedCrossEntropy --
 * in: logits [N,C], labels int32 [N]; out: loss [1] (mean over the rows
 * that count), backprop [N,C] = (softmax(logits) - q) / M.
 * SparseSoftmaxCrossEntropyWithLogits: q = onehot(label), every row counts.
 * LabelSmoothedCrossEntropy, attrs label_smoothing(f) eps, ignore_label:
 * q = (1 - eps) onehot(label) + eps / C (Szegedy et al.'s smoothing as
 * PyTorch's CrossEntropyLoss does it), and rows whose label is ignore_label
 * (padding) add nothing, so M is the number of the other rows (loss 0 when
 * none). */
static exec_status xent_shape(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const char *who = exec_op_name(n->op);
    const exec_tensor *x = exec_gin(g, n, 0), *y = exec_gin(g, n, 1);
    if (x->ndim != 2 || x->dtype != EXEC_F32 || y->dtype != EXEC_I32 || y->numel != x->shape[0])
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants logits [N,C] and int labels [N]", who);
    if (n->op == EXEC_OP_LabelSmoothedCrossEntropy &&
        (n->nattrs != 2 || !(exec_attr_getf(n->attrs[0]) >= 0 && exec_attr_getf(n->attrs[0]) < 1)))
        return exec_fail(EXEC_ERR_SHAPE, "%s: wants attrs label_smoothing in [0,1) and ignore_label", who);
    exec_shape_set(&out[0], EXEC_F32, 1, (int64_t[]){ 1 });
    exec_shape_of(&out[1], x);
    return EXEC_OK;
}

static exec_status xent_fwd(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    int64_t N = x->shape[0], C = x->shape[1];
    const float *X = x->data;
    const int32_t *L = exec_in(k, n, 1)->data;
    float *loss = exec_outf(k, n, 0), *BP = exec_outf(k, n, 1);
    const bool smoothed = n->op == EXEC_OP_LabelSmoothedCrossEntropy;
    const float eps = smoothed ? exec_attr_getf(n->attrs[0]) : 0.0f;
    const int64_t ignore = smoothed ? n->attrs[1] : -1;
    const bool ignoring = ignore >= 0; /* -1 (and the plain op): every label counts and must be valid */
    int64_t M = 0;
    for (int64_t i = 0; i < N; i++) {
        if (ignoring && L[i] == ignore)
            continue;
        if (L[i] < 0 || L[i] >= C)
            return exec_fail(EXEC_ERR_ARG, "%s: label %d outside [0,%lld)", exec_op_name(n->op), L[i], (long long)C);
        M++;
    }
    double total = 0;
    const float invn = M ? 1.0f / (float)M : 0.0f, on = 1.0f - eps, off = eps / (float)C;
#pragma omp parallel for reduction(+ : total) num_threads(k->nthreads) if (N * C > 65536)
    for (int64_t i = 0; i < N; i++) {
        const float *xr = X + i * C;
        float *br = BP + i * C;
        if (ignoring && L[i] == ignore) {
            for (int64_t j = 0; j < C; j++)
                br[j] = 0;
            continue;
        }
        float m = xr[0];
        for (int64_t j = 1; j < C; j++)
            m = xr[j] > m ? xr[j] : m;
        float s = 0, sx = 0;
#pragma omp simd reduction(+ : s, sx)
        for (int64_t j = 0; j < C; j++) {
            br[j] = math_expf(xr[j] - m);
            s += br[j];
            sx += xr[j];
        }
        float inv = 1.0f / s;
#pragma omp simd
        for (int64_t j = 0; j < C; j++)
            br[j] = (br[j] * inv - off) * invn;
        br[L[i]] -= on * invn;
        /* -sum_j q_j log p_j with log p_j = x_j - m - log s */
        double lse = (double)logf(s) + m;
        total += lse - on * (double)xr[L[i]] - (eps > 0 ? off * (double)sx : 0.0);
    }
    loss[0] = M ? (float)(total / (double)M) : 0.0f;
    return EXEC_OK;
}

/* d logits = backprop * dloss (the backprop itself when dloss is the
 * gradients' seed, the constant 1); the labels get none */
static exec_status xent_grad(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0] && dout[0])
        din[0] = dout[0] == g->grad_seed ? n->out[1]
                                         : exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ n->out[1], dout[0] }, 0, NULL);
    else if (din[0])
        din[0] = 0;
    if (din[1])
        din[1] = 0;
    return g->status;
}

exec_status op_shape_SparseSoftmaxCrossEntropyWithLogits(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return xent_shape(g, n, out);
}
exec_status op_fwd_SparseSoftmaxCrossEntropyWithLogits(exec_kctx *k, const exec_node *n) { return xent_fwd(k, n); }
exec_status op_grad_SparseSoftmaxCrossEntropyWithLogits(exec_graph *g, const exec_node *n, const uint32_t *dout,
                                                        uint32_t *din)
{
    return xent_grad(g, n, dout, din);
}

exec_status op_shape_LabelSmoothedCrossEntropy(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return xent_shape(g, n, out);
}
exec_status op_fwd_LabelSmoothedCrossEntropy(exec_kctx *k, const exec_node *n) { return xent_fwd(k, n); }
exec_status op_grad_LabelSmoothedCrossEntropy(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    return xent_grad(g, n, dout, din);
}

/* ======== reductions by axis (the math family): Mean, Max, ArgMax,
 * UnsortedSegmentSum. Mean and Max share Sum's attributes and shape rule. */

/* ---- Mean: Sum scaled by (kept elements / input elements) ------------- */
exec_status op_shape_Mean(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    if (exec_gin(g, n, 0)->dtype != EXEC_F32 || exec_gin(g, n, 0)->ndim < 1)
        return exec_fail(EXEC_ERR_SHAPE, "Mean: wants a float tensor of at least 1 dim");
    return op_shape_Sum(g, n, out);
}

exec_status op_fwd_Mean(exec_kctx *k, const exec_node *n)
{
    exec_status s = op_fwd_Sum(k, n);
    if (s)
        return s;
    float *Y = exec_outf(k, n, 0);
    int64_t ototal = exec_out(k, n, 0)->numel;
    float scale = 1.0f / (float)(exec_in(k, n, 0)->numel / ototal); /* 1 / elements per output */
    for (int64_t i = 0; i < ototal; i++)
        Y[i] *= scale;
    return EXEC_OK;
}

/* dx = Sum's gradient of dy / (elements reduced into each output) */
exec_status op_grad_Mean(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    uint32_t nid = n->id;
    const exec_tensor *x = exec_t(g, n->in[0]), *y = exec_t(g, n->out[0]);
    float scale = 1.0f / (float)(x->numel / y->numel);
    uint32_t c = exec_const(g, "mean_scale", 1, (int64_t[]){ 1 }, scale);
    uint32_t d = exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ dout[0], c }, 0, NULL);
    if (!d)
        return g->status;
    n = exec_node_get(g, nid); /* adding nodes may move the node array */
    return op_grad_Sum(g, n, &d, din);
}

/* ---- Max: the largest element over the axes (NaN-free inputs) --------- */
exec_status op_shape_Max(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    if (exec_gin(g, n, 0)->dtype != EXEC_F32 || exec_gin(g, n, 0)->ndim < 1)
        return exec_fail(EXEC_ERR_SHAPE, "Max: wants a float tensor of at least 1 dim");
    return op_shape_Sum(g, n, out);
}

exec_status op_fwd_Max(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    bool red[EXEC_MAX_DIMS], keep;
    reduce_axes(x, n, red, &keep);
    const float *X = x->data;
    float *Y = exec_outf(k, n, 0);
    int64_t ototal = exec_out(k, n, 0)->numel;
    int64_t ostride[EXEC_MAX_DIMS];
    out_strides(x, red, ostride);
    for (int64_t i = 0; i < ototal; i++)
        Y[i] = -INFINITY;
    int64_t inner = x->shape[x->ndim - 1];
    int64_t idx[EXEC_MAX_DIMS] = { 0 };
    for (int64_t base = 0; base < x->numel; base += inner) {
        int64_t o = 0;
        for (int i = 0; i < x->ndim - 1; i++)
            o += idx[i] * ostride[i];
        const float *xr = X + base;
        if (red[x->ndim - 1]) {
            float m = Y[o];
            for (int64_t i = 0; i < inner; i++)
                m = xr[i] > m ? xr[i] : m;
            Y[o] = m;
        } else {
            float *yr = Y + o;
#pragma omp simd
            for (int64_t i = 0; i < inner; i++)
                yr[i] = xr[i] > yr[i] ? xr[i] : yr[i];
        }
        next_row(x, idx);
    }
    return EXEC_OK;
}

/* TF's rule: the gradient goes to the maxima, split evenly among ties.
 * b(t) = Tile(Reshape(t, keep-dims form)); mask = Equal(x, b(y));
 * dx = mask * b(dy) / b(Sum(mask, axes, keep_dims)). */
exec_status op_grad_Max(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    const exec_tensor *x = exec_t(g, n->in[0]);
    bool red[EXEC_MAX_DIMS], keep;
    reduce_axes(x, n, red, &keep);
    int64_t kd[EXEC_MAX_DIMS], mult[EXEC_MAX_DIMS];
    int nd = keep_dims_form(x, red, kd, mult);
    uint32_t xin = n->in[0], y = n->out[0];
    int64_t sattrs[EXEC_MAX_ATTRS];
    memcpy(sattrs, n->attrs, sizeof sattrs);
    sattrs[0] = 1; /* keep_dims: the count has the keep-dims form */
    int snattrs = n->nattrs > 0 ? n->nattrs : 1;
    uint32_t yb = exec_op1(g, EXEC_OP_Tile, 1, (uint32_t[]){ exec_op1(g, EXEC_OP_Reshape, 1, &y, nd, kd) }, nd, mult);
    uint32_t mask = exec_op1(g, EXEC_OP_Equal, 2, (uint32_t[]){ xin, yb }, 0, NULL);
    uint32_t cnt = exec_op1(g, EXEC_OP_Sum, 1, &mask, snattrs, sattrs);
    uint32_t cntb = exec_op1(g, EXEC_OP_Tile, 1, &cnt, nd, mult);
    uint32_t dyb =
        exec_op1(g, EXEC_OP_Tile, 1, (uint32_t[]){ exec_op1(g, EXEC_OP_Reshape, 1, &dout[0], nd, kd) }, nd, mult);
    uint32_t num = exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ mask, dyb }, 0, NULL);
    din[0] = exec_op1(g, EXEC_OP_Div, 2, (uint32_t[]){ num, cntb }, 0, NULL);
    return g->status;
}

/* ---- ArgMax: attrs axis; int32 index of the first maximum -------------- */
static int64_t argmax_axis(const exec_tensor *x, const exec_node *n)
{
    int64_t ax = n->nattrs > 0 ? n->attrs[0] : 0;
    return ax < 0 ? ax + x->ndim : ax;
}

exec_status op_shape_ArgMax(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    int64_t ax = argmax_axis(x, n);
    if (x->dtype != EXEC_F32 || ax < 0 || ax >= x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "ArgMax: wants a float tensor and an axis in range (axis %lld, %d dims)",
                         (long long)(n->nattrs > 0 ? n->attrs[0] : 0), x->ndim);
    int64_t d[EXEC_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->ndim; i++)
        if (i != ax)
            d[nd++] = x->shape[i];
    if (nd == 0)
        d[nd++] = 1;
    exec_shape_set(out, EXEC_I32, nd, d);
    return EXEC_OK;
}

exec_status op_fwd_ArgMax(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    int64_t ax = argmax_axis(x, n), c = x->shape[ax], inner = x->strides[ax], outer = x->numel / (c * inner);
    const float *X = x->data;
    int32_t *Y = exec_out(k, n, 0)->data;
#pragma omp parallel for num_threads(k->nthreads) if (x->numel > 65536 && outer > 1)
    for (int64_t o = 0; o < outer; o++) {
        const float *xo = X + o * c * inner;
        int32_t *yo = Y + o * inner;
        if (inner == 1) { /* the last axis: the maximum vectorized, then its first index */
            float m = xo[0];
            int64_t j = 0;
            if (m == m) { /* xo[0] NaN: 0, as the scan below gives (no x > NaN) */
#pragma omp simd reduction(max : m)
                for (int64_t q = 1; q < c; q++)
                    m = xo[q] > m ? xo[q] : m;
                while (j < c - 1 && xo[j] != m)
                    j++;
            }
            yo[0] = (int32_t)j;
            continue;
        }
        for (int64_t i = 0; i < inner; i++) {
            float m = xo[i];
            int32_t best = 0;
            for (int64_t j = 1; j < c; j++)
                if (xo[j * inner + i] > m) { /* strict: ties keep the first */
                    m = xo[j * inner + i];
                    best = (int32_t)j;
                }
            yo[i] = best;
        }
    }
    return EXEC_OK;
}

/* ---- UnsortedSegmentSum: in [data [I..., D...], indices int32 [I...]],
 * attrs num_segments -> [num_segments, D...]: out[indices[i]] += data[i].
 * Every index must lie in [0, num_segments) (TF drops negative ones; here
 * they are an error, like Gather's). -------------------------------------- */
exec_status op_shape_UnsortedSegmentSum(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *ix = exec_gin(g, n, 1);
    if (n->nattrs < 1 || n->attrs[0] < 1 || n->attrs[0] > INT32_MAX)
        return exec_fail(EXEC_ERR_SHAPE, "UnsortedSegmentSum: attribute 0 must be num_segments in [1, 2^31)");
    if (x->dtype != EXEC_F32 || ix->dtype != EXEC_I32 || ix->ndim > x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "UnsortedSegmentSum: wants float data and int32 indices");
    for (int i = 0; i < ix->ndim; i++)
        if (ix->shape[i] != x->shape[i])
            return exec_fail(EXEC_ERR_SHAPE, "UnsortedSegmentSum: the indices' shape must lead the data's (dim %d)", i);
    int64_t d[EXEC_MAX_DIMS];
    int nd = 0;
    d[nd++] = n->attrs[0];
    for (int i = ix->ndim; i < x->ndim; i++)
        d[nd++] = x->shape[i];
    exec_shape_set(out, EXEC_F32, nd, d);
    return EXEC_OK;
}

exec_status op_fwd_UnsortedSegmentSum(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *ix = exec_in(k, n, 1);
    int64_t nseg = n->attrs[0], rows = ix->numel, D = x->numel / rows;
    const int32_t *I = ix->data;
    const float *X = x->data;
    float *Y = exec_outf(k, n, 0);
    for (int64_t r = 0; r < rows; r++)
        if (I[r] < 0 || I[r] >= nseg)
            return exec_fail(EXEC_ERR_ARG, "UnsortedSegmentSum: index %d at %lld outside [0,%lld)", I[r], (long long)r,
                             (long long)nseg);
    memset(Y, 0, (size_t)nseg * (size_t)D * sizeof *Y);
    /* threads own column blocks, so repeated indices never race */
    int64_t blk = 256, nblk = (D + blk - 1) / blk;
#pragma omp parallel for num_threads(k->nthreads) if (nblk > 1 && x->numel > 65536)
    for (int64_t b = 0; b < nblk; b++) {
        int64_t c0 = b * blk, c1 = c0 + blk < D ? c0 + blk : D;
        for (int64_t r = 0; r < rows; r++) {
            const float *xr = X + r * D;
            float *yr = Y + (int64_t)I[r] * D;
#pragma omp simd
            for (int64_t c = c0; c < c1; c++)
                yr[c] += xr[c];
        }
    }
    return EXEC_OK;
}

/* d data = Gather(dy, indices); the indices get none */
exec_status op_grad_UnsortedSegmentSum(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_Gather, 2, (uint32_t[]){ dout[0], n->in[1] }, 0, NULL);
    if (din[1])
        din[1] = 0;
    return g->status;
}
