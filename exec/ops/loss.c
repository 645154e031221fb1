/* loss.c -- losses: dense softmax cross-entropy, sampled softmax, CTC (and
 * its greedy decoder), Huber, sigmoid cross-entropy.
 *
 * Every loss returns its scalar [1] first. Where the gradient is cheapest to
 * form inside the forward pass (as TF's SoftmaxCrossEntropyWithLogits does),
 * the op also returns that "backprop", already divided by the batch; the
 * gradient rule scales it by dloss with one Mul (none when dloss is the
 * gradients' seed, the constant 1: the loss is the graph's own). */
#include "mathkern.h"
#include "../rng.h"

#include <cblas.h>
#include <float.h>
#include <omp.h>

#define PAR_MIN 32768 /* elements below which a kernel stays single-threaded */

static inline float lse2(float a, float b)
{
    if (a == -INFINITY)
        return b;
    if (b == -INFINITY)
        return a;
    return a > b ? a + log1pf(expf(b - a)) : b + log1pf(expf(a - b));
}

/* din[i] = dout * backprop (a [1] dloss broadcast onto it; the backprop
 * itself when dloss is the gradients' seed, the constant 1) */
static uint32_t scale_by(exec_graph *g, uint32_t backprop, uint32_t dloss)
{
    if (dloss == g->grad_seed)
        return backprop;
    return exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ backprop, dloss }, 0, NULL);
}

/* ---- SoftmaxCrossEntropyWithLogits --------------------------------------
 * in: logits [N,C], labels f32 [N,C] (a distribution per row); out: loss
 * [1] = mean_i -sum_j z_ij log softmax(x_i)_j, backprop [N,C] =
 * (softmax(x_i) * sum_j z_ij - z_i) / N (= (p - z)/N for normalized rows,
 * TF's form; exact for any labels). The labels' gradient is
 * -log_softmax(x) / N (TF's softmax_cross_entropy_with_logits_v2). */
exec_status op_shape_SoftmaxCrossEntropyWithLogits(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *z = exec_gin(g, n, 1);
    if (x->ndim != 2 || x->dtype != EXEC_F32 || z->dtype != EXEC_F32 || !exec_same_shape(x, z))
        return exec_fail(EXEC_ERR_SHAPE, "SoftmaxCrossEntropyWithLogits: wants logits [N,C] and float labels [N,C]");
    exec_shape_set(&out[0], EXEC_F32, 1, (int64_t[]){ 1 });
    exec_shape_of(&out[1], x);
    return EXEC_OK;
}

exec_status op_fwd_SoftmaxCrossEntropyWithLogits(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    int64_t N = x->shape[0], C = x->shape[1];
    const float *X = x->data, *Z = exec_inf(k, n, 1);
    float *loss = exec_outf(k, n, 0), *BP = exec_outf(k, n, 1);
    float invn = 1.0f / (float)N;
    double total = 0;
#pragma omp parallel for reduction(+ : total) num_threads(k->nthreads) if (N * C > PAR_MIN)
    for (int64_t i = 0; i < N; i++) {
        const float *xr = X + i * C, *zr = Z + i * C;
        float *br = BP + i * C;
        float m = xr[0];
        for (int64_t j = 1; j < C; j++)
            m = xr[j] > m ? xr[j] : m;
        float s = 0, zs = 0, zx = 0; /* zx: sum z (x - m), small and exact-ish */
#pragma omp simd reduction(+ : s, zs, zx)
        for (int64_t j = 0; j < C; j++) {
            br[j] = math_expf(xr[j] - m);
            s += br[j];
            zs += zr[j];
            zx += zr[j] * (xr[j] - m);
        }
        float scale = zs / s;
        for (int64_t j = 0; j < C; j++)
            br[j] = (br[j] * scale - zr[j]) * invn;
        total += (double)zs * log((double)s) - (double)zx;
    }
    loss[0] = (float)(total / (double)N);
    return EXEC_OK;
}

exec_status op_grad_SoftmaxCrossEntropyWithLogits(exec_graph *g, const exec_node *n, const uint32_t *dout,
                                                  uint32_t *din)
{
    if (!dout[0]) {
        din[0] = din[1] = 0;
        return g->status;
    }
    din[0] = din[0] ? scale_by(g, n->out[1], dout[0]) : 0;
    if (din[1]) { /* d/dz = -log_softmax(x) / N */
        const exec_tensor *x = exec_t(g, n->in[0]);
        uint32_t c = exec_const(g, "softmax_xent/-1/N", 1, (int64_t[]){ 1 }, -1.0f / (float)x->shape[0]);
        uint32_t ls = exec_op1(g, EXEC_OP_LogSoftmax, 1, &n->in[0], 0, NULL);
        din[1] = scale_by(g, exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ ls, c }, 0, NULL), dout[0]);
    }
    return g->status;
}

/* ---- SampledSoftmaxLoss (TF's sampled_softmax_loss, Jean et al. 2015) ---
 * in: weights [V,D], biases [V], inputs [N,D], labels int32 [N];
 * attrs: num_sampled S (1..V), seed (0 or absent: new draws every run;
 * nonzero: the same draws every run).
 * S distinct candidates come from TF's log-uniform (Zipfian) sampler,
 * P(c) = log((c+2)/(c+1)) / log(V+1), drawn until S are unique; the expected
 * count of class c is then 1 - (1-P(c))^tries (TF's unique=True form).
 * Row i scores its true class and the S candidates: z = w_c.x_i + b_c -
 * log(expected count of c); a candidate equal to the row's label (an
 * accidental hit) is removed. loss = mean_i (logsumexp(z_i) - z_i0).
 * out: loss [1], sampled ids int32 [S], their expected counts f32 [S],
 * backprop [N,S+1] = (softmax(z_i) - onehot(0)) / N (0 at removed hits). */
typedef struct ssm_dims {
    int64_t V, D, N, S;
} ssm_dims;

exec_status op_shape_SampledSoftmaxLoss(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *w = exec_gin(g, n, 0), *b = exec_gin(g, n, 1), *x = exec_gin(g, n, 2), *y = exec_gin(g, n, 3);
    if (w->ndim != 2 || x->ndim != 2 || w->dtype != EXEC_F32 || x->dtype != EXEC_F32 || b->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "SampledSoftmaxLoss: wants weights [V,D], biases [V], inputs [N,D]");
    int64_t V = w->shape[0], D = w->shape[1], N = x->shape[0];
    if (x->shape[1] != D || b->numel != V || y->dtype != EXEC_I32 || y->numel != N)
        return exec_fail(EXEC_ERR_SHAPE,
                         "SampledSoftmaxLoss: weights [%lld,%lld] need biases [%lld], inputs [N,%lld], int labels [N]",
                         (long long)V, (long long)D, (long long)V, (long long)D);
    int64_t S = n->nattrs > 0 ? n->attrs[0] : 0;
    if (S < 1 || S > V || V > INT32_MAX)
        return exec_fail(EXEC_ERR_SHAPE, "SampledSoftmaxLoss: num_sampled %lld outside [1,%lld]", (long long)S,
                         (long long)V);
    exec_shape_set(&out[0], EXEC_F32, 1, (int64_t[]){ 1 });
    exec_shape_set(&out[1], EXEC_I32, 1, (int64_t[]){ S });
    exec_shape_set(&out[2], EXEC_F32, 1, (int64_t[]){ S });
    exec_shape_set(&out[3], EXEC_F32, 2, (int64_t[]){ N, S + 1 });
    return EXEC_OK;
}

static inline double logu_prob(int64_t c, double log_range)
{
    return log((double)(c + 2) / (double)(c + 1)) / log_range;
}
static inline float expected_count(int64_t c, double log_range, int64_t tries)
{
    return (float)-expm1((double)tries * log1p(-logu_prob(c, log_range)));
}

exec_status op_fwd_SampledSoftmaxLoss(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *w = exec_in(k, n, 0), *x = exec_in(k, n, 2);
    int64_t V = w->shape[0], D = w->shape[1], N = x->shape[0], S = n->attrs[0], S1 = S + 1;
    const float *W = w->data, *B = exec_inf(k, n, 1), *X = x->data;
    const int32_t *L = exec_in(k, n, 3)->data;
    float *loss = exec_outf(k, n, 0), *Q = exec_outf(k, n, 2), *BP = exec_outf(k, n, 3);
    int32_t *ids = exec_out(k, n, 1)->data;
    for (int64_t i = 0; i < N; i++)
        if (L[i] < 0 || L[i] >= V)
            return exec_fail(EXEC_ERR_ARG, "SampledSoftmaxLoss: label %d outside [0,%lld)", L[i], (long long)V);

    /* scratch: a seen-mark per class, then the gathered candidate weights [S,D] */
    size_t mark_bytes = ((size_t)V + 63) / 64 * 64;
    uint8_t *seen = exec_kscratch(k, mark_bytes + (size_t)(S * D) * sizeof(float));
    if (!seen)
        return exec_fail(EXEC_ERR_NOMEM, "SampledSoftmaxLoss: no scratch");
    float *WS = (float *)(seen + mark_bytes);
    memset(seen, 0, (size_t)V);

    uint64_t seed = n->nattrs > 1 && n->attrs[1]
                        ? exec_splitmix64(k->g->seed ^ exec_splitmix64((uint64_t)n->attrs[1] + n->id))
                        : exec_kseed(k, n);
    exec_rng r = exec_rng_make(seed);
    double log_range = log((double)V + 1.0);
    int64_t got = 0, tries = 0, limit = 1000 * V + 1000000;
    while (got < S) {
        if (++tries > limit)
            return exec_fail(EXEC_ERR_ARG, "SampledSoftmaxLoss: %lld draws found only %lld of %lld distinct classes",
                             (long long)limit, (long long)got, (long long)S);
        double u = (double)(exec_rng_u64(&r) >> 11) * (1.0 / 9007199254740992.0);
        int64_t c = ((int64_t)exp(u * log_range) - 1) % V; /* TF's LogUniformSampler::Sample */
        if (!seen[c]) {
            seen[c] = 1;
            ids[got++] = (int32_t)c;
        }
    }
    for (int64_t j = 0; j < S; j++) {
        Q[j] = expected_count(ids[j], log_range, tries);
        memcpy(WS + j * D, W + (int64_t)ids[j] * D, (size_t)D * sizeof *WS);
    }
    /* sampled logits: BP[:,1:] = X WS^T (ld S+1); the true column below */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)N, (int)S, (int)D, 1.0f, X, (int)D, WS, (int)D, 0.0f,
                BP + 1, (int)S1);
    float invn = 1.0f / (float)N;
    double total = 0;
#pragma omp parallel for reduction(+ : total) num_threads(k->nthreads) if (N * S1 * 4 > PAR_MIN)
    for (int64_t i = 0; i < N; i++) {
        float *br = BP + i * S1;
        const float *xr = X + i * D, *wr = W + (int64_t)L[i] * D;
        float t = 0;
        for (int64_t d = 0; d < D; d++)
            t += wr[d] * xr[d];
        br[0] = t + B[L[i]] - logf(expected_count(L[i], log_range, tries));
        float m = br[0];
        for (int64_t j = 1; j < S1; j++) {
            if (ids[j - 1] == L[i]) {
                br[j] = -INFINITY; /* accidental hit: removed */
                continue;
            }
            br[j] += B[ids[j - 1]] - logf(Q[j - 1]);
            m = br[j] > m ? br[j] : m;
        }
        float z0 = br[0], s = 0;
        for (int64_t j = 0; j < S1; j++) {
            float e = br[j] == -INFINITY ? 0.0f : expf(br[j] - m);
            br[j] = e;
            s += e;
        }
        total += (double)(logf(s) + m - z0);
        float inv = invn / s;
        for (int64_t j = 0; j < S1; j++)
            br[j] *= inv;
        br[0] -= invn;
    }
    loss[0] = (float)(total / (double)N);
    return EXEC_OK;
}

exec_status op_grad_SampledSoftmaxLoss(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    din[3] = 0;
    if (!dout[0] || !(din[0] || din[1] || din[2])) {
        din[0] = din[1] = din[2] = 0;
        return g->status;
    }
    uint32_t scaled = scale_by(g, n->out[3], dout[0]);
    uint32_t outs[3] = { 0 };
    exec_op_add(g, EXEC_OP_SampledSoftmaxLossGrad, 5, (uint32_t[]){ n->in[0], n->in[2], n->in[3], n->out[1], scaled },
                0, NULL, outs);
    for (int i = 0; i < 3; i++)
        din[i] = din[i] ? outs[i] : 0;
    return g->status;
}

/* ---- SampledSoftmaxLossGrad ---------------------------------------------
 * in: weights [V,D], inputs [N,D], labels int32 [N], sampled int32 [S],
 * dlogits [N,S+1] (column 0: the true class); out: dweights [V,D] (dense,
 * zero outside the touched rows), dbiases [V], dinputs [N,D]. */
exec_status op_shape_SampledSoftmaxLossGrad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *w = exec_gin(g, n, 0), *x = exec_gin(g, n, 1), *y = exec_gin(g, n, 2), *s = exec_gin(g, n, 3),
                      *dz = exec_gin(g, n, 4);
    if (w->ndim != 2 || x->ndim != 2 || x->shape[1] != w->shape[1] || y->numel != x->shape[0] || s->dtype != EXEC_I32 ||
        dz->ndim != 2 || dz->shape[0] != x->shape[0] || dz->shape[1] != s->numel + 1)
        return exec_fail(
            EXEC_ERR_SHAPE,
            "SampledSoftmaxLossGrad: wants weights [V,D], inputs [N,D], labels [N], sampled [S], dlogits [N,S+1]");
    exec_shape_of(&out[0], w);
    exec_shape_set(&out[1], EXEC_F32, 1, &w->shape[0]);
    exec_shape_of(&out[2], x);
    return EXEC_OK;
}

exec_status op_fwd_SampledSoftmaxLossGrad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *w = exec_in(k, n, 0), *x = exec_in(k, n, 1), *s = exec_in(k, n, 3);
    int64_t V = w->shape[0], D = w->shape[1], N = x->shape[0], S = s->numel, S1 = S + 1;
    const float *W = w->data, *X = x->data, *G = exec_inf(k, n, 4);
    const int32_t *L = exec_in(k, n, 2)->data, *ids = s->data;
    float *DW = exec_outf(k, n, 0), *DB = exec_outf(k, n, 1), *DX = exec_outf(k, n, 2);
    float *WS = exec_kscratch(k, (size_t)(2 * S * D) * sizeof(float));
    if (!WS)
        return exec_fail(EXEC_ERR_NOMEM, "SampledSoftmaxLossGrad: no scratch");
    float *DWS = WS + S * D;
    for (int64_t j = 0; j < S; j++)
        memcpy(WS + j * D, W + (int64_t)ids[j] * D, (size_t)D * sizeof *WS);
    /* dinputs = G[:,1:] WS + G[:,0] w_label */
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)N, (int)D, (int)S, 1.0f, G + 1, (int)S1, WS, (int)D,
                0.0f, DX, (int)D);
    /* dWS = G[:,1:]^T X */
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, (int)S, (int)D, (int)N, 1.0f, G + 1, (int)S1, X, (int)D, 0.0f,
                DWS, (int)D);
    memset(DW, 0, (size_t)(V * D) * sizeof *DW);
    memset(DB, 0, (size_t)V * sizeof *DB);
    for (int64_t j = 0; j < S; j++) { /* the sampled ids are distinct */
        memcpy(DW + (int64_t)ids[j] * D, DWS + j * D, (size_t)D * sizeof *DW);
        float b = 0;
        for (int64_t i = 0; i < N; i++)
            b += G[i * S1 + 1 + j];
        DB[ids[j]] = b;
    }
    for (int64_t i = 0; i < N; i++) { /* labels may repeat: serial */
        float gi = G[i * S1];
        const float *xr = X + i * D, *wr = W + (int64_t)L[i] * D;
        float *dwr = DW + (int64_t)L[i] * D, *dxr = DX + i * D;
        for (int64_t d = 0; d < D; d++) {
            dwr[d] += gi * xr[d];
            dxr[d] += gi * wr[d];
        }
        DB[L[i]] += gi;
    }
    return EXEC_OK;
}

/* ---- CTCLoss (Graves et al. 2006; TF's ctc_loss) ------------------------
 * in: logits [T,N,C] (unnormalized; blank = C-1), labels int32 [N,L]
 * (padded), label_lengths int32 [N], seq_lengths int32 [N];
 * out: loss [1] = mean_b -log p(labels_b | x_b), grad [T,N,C] = d loss /
 * d logits (0 for t >= seq_length). Forward-backward in log space over the
 * 2L'+1 blank-extended states (repeats merged, TF's defaults). An example
 * with no valid alignment (seq too short) contributes +inf to the loss and
 * a zero gradient, as TF ("No valid path found"). */
exec_status op_shape_CTCLoss(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *l = exec_gin(g, n, 1), *ll = exec_gin(g, n, 2), *sl = exec_gin(g, n, 3);
    if (x->ndim != 3 || x->dtype != EXEC_F32 || x->shape[2] < 2)
        return exec_fail(EXEC_ERR_SHAPE, "CTCLoss: wants logits [T,N,C] with C >= 2 (blank = C-1)");
    int64_t N = x->shape[1];
    if (l->ndim != 2 || l->shape[0] != N || l->dtype != EXEC_I32 || ll->numel != N || ll->dtype != EXEC_I32 ||
        sl->numel != N || sl->dtype != EXEC_I32)
        return exec_fail(EXEC_ERR_SHAPE,
                         "CTCLoss: wants int labels [N,L], label_lengths [N], seq_lengths [N] (N = %lld)",
                         (long long)N);
    exec_shape_set(&out[0], EXEC_F32, 1, (int64_t[]){ 1 });
    exec_shape_of(&out[1], x);
    return EXEC_OK;
}

exec_status op_fwd_CTCLoss(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *lt = exec_in(k, n, 1);
    int64_t T = x->shape[0], N = x->shape[1], C = x->shape[2], Lmax = lt->shape[1], Smax = 2 * Lmax + 1;
    int blank = (int)C - 1;
    const float *X = x->data;
    const int32_t *LAB = lt->data, *LL = exec_in(k, n, 2)->data, *SL = exec_in(k, n, 3)->data;
    float *loss = exec_outf(k, n, 0), *G = exec_outf(k, n, 1);
    for (int64_t b = 0; b < N; b++) {
        if (LL[b] < 0 || LL[b] > Lmax || SL[b] < 0 || SL[b] > T)
            return exec_fail(EXEC_ERR_ARG,
                             "CTCLoss: example %lld: label length %d (max %lld), sequence length %d (max %lld)",
                             (long long)b, LL[b], (long long)Lmax, SL[b], (long long)T);
        for (int32_t i = 0; i < LL[b]; i++)
            if (LAB[b * Lmax + i] < 0 || LAB[b * Lmax + i] >= blank)
                return exec_fail(EXEC_ERR_ARG, "CTCLoss: label %d outside [0,%d) (blank is %d)", LAB[b * Lmax + i],
                                 blank, blank);
    }
    int nth = k->nthreads > 0 ? k->nthreads : 1;
    if (nth > N)
        nth = (int)N;
    /* per thread: alpha [T,Smax], two beta rows [Smax], an accumulator [C], labels' [Smax] */
    size_t per = (size_t)(T * Smax + 2 * Smax + C) * sizeof(float) + (size_t)Smax * sizeof(int);
    per = (per + 63) / 64 * 64;
    char *scratch = exec_kscratch(k, per * (size_t)nth);
    if (!scratch)
        return exec_fail(EXEC_ERR_NOMEM, "CTCLoss: no scratch");
    float invn = 1.0f / (float)N;
    double total = 0;
#pragma omp parallel for reduction(+ : total) num_threads(nth) schedule(dynamic, 1) if (nth > 1)
    for (int64_t b = 0; b < N; b++) {
        char *mine = scratch + per * (size_t)omp_get_thread_num();
        float *la = (float *)mine, *lb = la + T * Smax, *lbn = lb + Smax, *acc = lbn + Smax;
        int *lab = (int *)(acc + C);
        int64_t Tb = SL[b], S = 2 * (int64_t)LL[b] + 1;
        for (int64_t s = 0; s < S; s++)
            lab[s] = s % 2 ? LAB[b * Lmax + s / 2] : blank;
        /* log softmax into G (rows t < Tb), zeros after */
        for (int64_t t = 0; t < T; t++) {
            const float *xr = X + (t * N + b) * C;
            float *gr = G + (t * N + b) * C;
            if (t >= Tb) {
                memset(gr, 0, (size_t)C * sizeof *gr);
                continue;
            }
            float m = xr[0], s = 0;
            for (int64_t j = 1; j < C; j++)
                m = xr[j] > m ? xr[j] : m;
#pragma omp simd reduction(+ : s)
            for (int64_t j = 0; j < C; j++)
                s += math_expf(xr[j] - m);
            float lz = logf(s) + m;
            for (int64_t j = 0; j < C; j++)
                gr[j] = xr[j] - lz;
        }
        if (Tb == 0) {
            total += S == 1 ? 0.0 : INFINITY;
            continue;
        }
#define LOGY(t, s) G[((t)*N + b) * C + lab[s]]
        /* alpha: paths ending in state s at time t, emissions 0..t included */
        for (int64_t s = 0; s < S; s++)
            la[s] = s < 2 ? LOGY(0, s) : -INFINITY;
        for (int64_t t = 1; t < Tb; t++) {
            const float *prev = la + (t - 1) * Smax;
            float *cur = la + t * Smax;
            for (int64_t s = 0; s < S; s++) {
                float a = prev[s];
                if (s >= 1)
                    a = lse2(a, prev[s - 1]);
                if (s >= 2 && lab[s] != blank && lab[s] != lab[s - 2])
                    a = lse2(a, prev[s - 2]);
                cur[s] = a == -INFINITY ? -INFINITY : a + LOGY(t, s);
            }
        }
        const float *last = la + (Tb - 1) * Smax;
        float logp = S > 1 ? lse2(last[S - 1], last[S - 2]) : last[0];
        if (logp == -INFINITY) { /* no valid alignment */
            total += INFINITY;
            for (int64_t t = 0; t < Tb; t++)
                memset(G + (t * N + b) * C, 0, (size_t)C * sizeof *G);
            continue;
        }
        total += (double)-logp;
        /* beta: completions from state s at time t, emissions after t only */
        for (int64_t s = 0; s < S; s++)
            lb[s] = s >= S - 2 ? 0.0f : -INFINITY;
        for (int64_t t = Tb - 1; t >= 0; t--) {
            const float *cur = la + t * Smax;
            for (int64_t j = 0; j < C; j++)
                acc[j] = -INFINITY;
            for (int64_t s = 0; s < S; s++)
                if (cur[s] != -INFINITY && lb[s] != -INFINITY)
                    acc[lab[s]] = lse2(acc[lab[s]], cur[s] + lb[s]);
            if (t > 0) {
                for (int64_t s = 0; s < S; s++) {
                    float v = lb[s] == -INFINITY ? -INFINITY : lb[s] + LOGY(t, s);
                    if (s + 1 < S && lb[s + 1] != -INFINITY)
                        v = lse2(v, lb[s + 1] + LOGY(t, s + 1));
                    if (s + 2 < S && lab[s + 2] != blank && lab[s + 2] != lab[s] && lb[s + 2] != -INFINITY)
                        v = lse2(v, lb[s + 2] + LOGY(t, s + 2));
                    lbn[s] = v;
                }
            }
            /* d(-log p)/d logit_j = y_j - (1/p) sum_{s: lab s = j} alpha beta */
            float *gr = G + (t * N + b) * C;
            for (int64_t j = 0; j < C; j++)
                gr[j] = (expf(gr[j]) - expf(acc[j] - logp)) * invn;
            float *tmp = lb;
            lb = lbn;
            lbn = tmp;
        }
#undef LOGY
    }
    loss[0] = (float)(total / (double)N);
    return EXEC_OK;
}

exec_status op_grad_CTCLoss(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    din[0] = din[0] && dout[0] ? scale_by(g, n->out[1], dout[0]) : 0;
    din[1] = din[2] = din[3] = 0;
    return g->status;
}

/* ---- CTCGreedyDecoder (TF's ctc_greedy_decoder, merge_repeated) ---------
 * in: logits [T,N,C] (blank = C-1), seq_lengths int32 [N]; out: int32
 * [N,T]: per example, the argmax path with repeats merged and blanks
 * dropped, padded with -1. */
exec_status op_shape_CTCGreedyDecoder(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *sl = exec_gin(g, n, 1);
    if (x->ndim != 3 || x->dtype != EXEC_F32 || sl->dtype != EXEC_I32 || sl->numel != x->shape[1])
        return exec_fail(EXEC_ERR_SHAPE, "CTCGreedyDecoder: wants logits [T,N,C] and int seq_lengths [N]");
    exec_shape_set(out, EXEC_I32, 2, (int64_t[]){ x->shape[1], x->shape[0] });
    return EXEC_OK;
}

exec_status op_fwd_CTCGreedyDecoder(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    int64_t T = x->shape[0], N = x->shape[1], C = x->shape[2];
    const float *X = x->data;
    const int32_t *SL = exec_in(k, n, 1)->data;
    int32_t *Y = exec_out(k, n, 0)->data;
    for (int64_t b = 0; b < N; b++)
        if (SL[b] < 0 || SL[b] > T)
            return exec_fail(EXEC_ERR_ARG, "CTCGreedyDecoder: sequence length %d outside [0,%lld]", SL[b],
                             (long long)T);
#pragma omp parallel for num_threads(k->nthreads) if (x->numel > PAR_MIN)
    for (int64_t b = 0; b < N; b++) {
        int32_t *yr = Y + b * T;
        int64_t o = 0;
        int prev = -1;
        for (int64_t t = 0; t < SL[b]; t++) {
            const float *xr = X + (t * N + b) * C;
            int best = 0;
            for (int64_t j = 1; j < C; j++)
                if (xr[j] > xr[best])
                    best = (int)j;
            if (best != C - 1 && best != prev)
                yr[o++] = best;
            prev = best;
        }
        for (; o < T; o++)
            yr[o] = -1;
    }
    return EXEC_OK;
}

/* ---- HuberLoss (TF's losses.huber_loss, mean reduction) -----------------
 * in: pred, target (same shape); attrs: delta (default 1). d = pred -
 * target; loss [1] = mean(0.5 d^2 if |d| <= delta else delta (|d| - delta/2));
 * backprop [like pred] = clip(d, -delta, delta) / numel. */
static float huber_delta(const exec_node *n) { return n->nattrs > 0 ? exec_attr_getf(n->attrs[0]) : 1.0f; }

exec_status op_shape_HuberLoss(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *p = exec_gin(g, n, 0), *t = exec_gin(g, n, 1);
    if (p->dtype != EXEC_F32 || t->dtype != EXEC_F32 || !exec_same_shape(p, t))
        return exec_fail(EXEC_ERR_SHAPE, "HuberLoss: wants float pred and target of one shape");
    if (!(huber_delta(n) > 0))
        return exec_fail(EXEC_ERR_SHAPE, "HuberLoss: delta must be positive");
    exec_shape_set(&out[0], EXEC_F32, 1, (int64_t[]){ 1 });
    exec_shape_of(&out[1], p);
    return EXEC_OK;
}

exec_status op_fwd_HuberLoss(exec_kctx *k, const exec_node *n)
{
    const float *P = exec_inf(k, n, 0), *Tg = exec_inf(k, n, 1);
    float *loss = exec_outf(k, n, 0), *BP = exec_outf(k, n, 1);
    int64_t total = exec_in(k, n, 0)->numel;
    float delta = huber_delta(n), inv = 1.0f / (float)total;
    double sum = 0;
    EXEC_PAR_SUM(k, total, PAR_MIN, sum, float d = P[i] - Tg[i], a = fabsf(d);
                 sum += a <= delta ? 0.5f * d * d : delta * (a - 0.5f * delta); BP[i] = (d > delta    ? delta
                                                                                         : d < -delta ? -delta
                                                                                                      : d) *
                                                                                        inv;);
    loss[0] = (float)(sum / (double)total);
    return EXEC_OK;
}

exec_status op_grad_HuberLoss(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!dout[0]) {
        din[0] = din[1] = 0;
        return g->status;
    }
    uint32_t dp = scale_by(g, n->out[1], dout[0]);
    if (din[1]) {
        uint32_t minus = exec_const(g, "huber/-1", 1, (int64_t[]){ 1 }, -1.0f);
        din[1] = exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ dp, minus }, 0, NULL);
    }
    din[0] = din[0] ? dp : 0;
    return g->status;
}

/* ---- SigmoidCrossEntropyWithLogits --------------------------------------
 * in: logits x [N,...], labels z (same shape, in [0,1]); out: loss [1] =
 * (1/N) sum max(x,0) - x z + log(1 + exp(-|x|)) (summed over features,
 * mean over the batch: the VAE's Bernoulli term), backprop = (sigmoid(x) -
 * z) / N. The labels' gradient is -x/N. */
exec_status op_shape_SigmoidCrossEntropyWithLogits(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *z = exec_gin(g, n, 1);
    if (x->dtype != EXEC_F32 || z->dtype != EXEC_F32 || !exec_same_shape(x, z) || x->ndim < 1)
        return exec_fail(EXEC_ERR_SHAPE, "SigmoidCrossEntropyWithLogits: wants float logits and labels of one shape");
    exec_shape_set(&out[0], EXEC_F32, 1, (int64_t[]){ 1 });
    exec_shape_of(&out[1], x);
    return EXEC_OK;
}

exec_status op_fwd_SigmoidCrossEntropyWithLogits(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0);
    const float *X = xt->data, *Z = exec_inf(k, n, 1);
    float *loss = exec_outf(k, n, 0), *BP = exec_outf(k, n, 1);
    int64_t total = xt->numel, N = xt->shape[0];
    float invn = 1.0f / (float)N;
    double sum = 0;
    EXEC_PAR_SUM(k, total, PAR_MIN, sum, float x = X[i], z = Z[i], e = math_expf(-fabsf(x));
                 sum += (x > 0 ? x : 0) - x * z + math_log1pf(e);
                 float sig = x >= 0 ? 1.0f / (1.0f + e) : e / (1.0f + e); BP[i] = (sig - z) * invn;);
    loss[0] = (float)(sum / (double)N);
    return EXEC_OK;
}

exec_status op_grad_SigmoidCrossEntropyWithLogits(exec_graph *g, const exec_node *n, const uint32_t *dout,
                                                  uint32_t *din)
{
    if (!dout[0]) {
        din[0] = din[1] = 0;
        return g->status;
    }
    din[0] = din[0] ? scale_by(g, n->out[1], dout[0]) : 0;
    if (din[1]) {
        const exec_tensor *x = exec_t(g, n->in[0]);
        uint32_t c = exec_const(g, "sigmoid_xent/-1/N", 1, (int64_t[]){ 1 }, -1.0f / (float)x->shape[0]);
        uint32_t xs = exec_op1(g, EXEC_OP_Mul, 2, (uint32_t[]){ n->in[0], c }, 0, NULL);
        din[1] = scale_by(g, xs, dout[0]);
    }
    return g->status;
}
