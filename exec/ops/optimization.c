/* optimization.c -- parameter updates (in place) and gradient clipping. */
#include "../internal.h"

static exec_status shape_apply(const exec_graph *g, const exec_node *n, exec_shape *out, int grad_in)
{
    const exec_tensor *v = exec_gin(g, n, 0), *dv = exec_gin(g, n, grad_in);
    if (!exec_same_shape(v, dv))
        return exec_fail(EXEC_ERR_SHAPE, "%s: gradient shape differs from the variable's", exec_op_name(n->op));
    for (int i = 0; i < n->nout; i++)
        exec_shape_of(&out[i], exec_gin(g, n, i));
    return EXEC_OK;
}

/* ---- ApplyGradientDescent: var -= lr * grad; in [var, grad] ------------ */
exec_status op_shape_ApplyGradientDescent(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return shape_apply(g, n, out, 1);
}

exec_status op_fwd_ApplyGradientDescent(exec_kctx *k, const exec_node *n)
{
    float *restrict V = exec_inf(k, n, 0);
    const float *restrict D = exec_inf(k, n, 1);
    float lr = exec_attr_getf(n->attrs[0]);
    int64_t total = exec_in(k, n, 0)->numel;
    EXEC_PAR_FOR(k, total, 65536, V[i] -= lr * D[i];);
    return EXEC_OK;
}

/* ==== optimizers and clipping ========================================== */
#define OPT_PAR_MIN 65536

/* the optimizer-state inputs 1..nstate must have the variable's shape */
static exec_status check_state(const exec_graph *g, const exec_node *n, int first, int last)
{
    const exec_tensor *v = exec_gin(g, n, 0);
    for (int i = first; i <= last; i++)
        if (!exec_same_shape(v, exec_gin(g, n, i)) || exec_gin(g, n, i)->dtype != EXEC_F32)
            return exec_fail(EXEC_ERR_SHAPE, "%s: state input %d differs from the variable's shape",
                             exec_op_name(n->op), i);
    return EXEC_OK;
}

/* ---- ApplyMomentum (TF, use_nesterov false): in [var, accum, grad];
 * accum = momentum * accum + grad; var -= lr * accum; out in place [var, accum] */
exec_status op_shape_ApplyMomentum(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    exec_status s = check_state(g, n, 1, 1);
    return s ? s : shape_apply(g, n, out, 2);
}

exec_status op_fwd_ApplyMomentum(exec_kctx *k, const exec_node *n)
{
    float *restrict V = exec_inf(k, n, 0), *restrict A = exec_inf(k, n, 1);
    const float *restrict D = exec_inf(k, n, 2);
    float lr = exec_attr_getf(n->attrs[0]), mu = exec_attr_getf(n->attrs[1]);
    int64_t total = exec_in(k, n, 0)->numel;
    EXEC_PAR_FOR(k, total, OPT_PAR_MIN, float a = mu * A[i] + D[i]; A[i] = a; V[i] -= lr * a;);
    return EXEC_OK;
}

/* ---- ApplyAdam (TF's bias-corrected form): in [var, m, v, beta_powers[2],
 * grad]; out in place [var, m, v, beta_powers].
 * beta_powers holds the bias corrections [1 - beta1^t, 1 - beta2^t] of the
 * steps done so far, so the planner's zero fill is exactly t = 0; each step
 * advances them to t+1 (c' = (1-beta) + beta c) and then
 *   lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
 *   m = beta1 m + (1-beta1) g;  v = beta2 v + (1-beta2) g^2
 *   var -= lr_t * m / (sqrt(v) + epsilon) */
exec_status op_shape_ApplyAdam(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    exec_status s = check_state(g, n, 1, 2);
    if (s)
        return s;
    const exec_tensor *bp = exec_gin(g, n, 3);
    if (bp->numel != 2 || bp->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "ApplyAdam: beta_powers must be a float [2]");
    return shape_apply(g, n, out, 4);
}

exec_status op_fwd_ApplyAdam(exec_kctx *k, const exec_node *n)
{
    float *restrict V = exec_inf(k, n, 0), *restrict M = exec_inf(k, n, 1), *restrict S = exec_inf(k, n, 2);
    float *BP = exec_inf(k, n, 3);
    const float *restrict D = exec_inf(k, n, 4);
    float lr = exec_attr_getf(n->attrs[0]), b1 = exec_attr_getf(n->attrs[1]), b2 = exec_attr_getf(n->attrs[2]),
          eps = exec_attr_getf(n->attrs[3]);
    float c1 = (1.0f - b1) + b1 * BP[0], c2 = (1.0f - b2) + b2 * BP[1];
    BP[0] = c1;
    BP[1] = c2;
    float lr_t = lr * sqrtf(c2) / c1;
    int64_t total = exec_in(k, n, 0)->numel;
    EXEC_PAR_FOR(k, total, OPT_PAR_MIN, float gr = D[i]; float m = M[i] + (gr - M[i]) * (1.0f - b1);
                 float v = S[i] + (gr * gr - S[i]) * (1.0f - b2); M[i] = m; S[i] = v;
                 V[i] -= lr_t * m / (sqrtf(v) + eps););
    return EXEC_OK;
}

/* ---- ApplyRMSProp (TF's form): in [var, ms, mom, grad];
 *   ms = decay ms + (1-decay) g^2
 *   mom = momentum mom + lr g / sqrt(ms + epsilon)
 *   var -= mom
 * out in place [var, ms, mom]. (exec_optimizer_rmsprop starts ms at 1, as
 * TF 1.x's RMSPropOptimizer does.) */
exec_status op_shape_ApplyRMSProp(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    exec_status s = check_state(g, n, 1, 2);
    return s ? s : shape_apply(g, n, out, 3);
}

exec_status op_fwd_ApplyRMSProp(exec_kctx *k, const exec_node *n)
{
    float *restrict V = exec_inf(k, n, 0), *restrict MS = exec_inf(k, n, 1), *restrict MOM = exec_inf(k, n, 2);
    const float *restrict D = exec_inf(k, n, 3);
    float lr = exec_attr_getf(n->attrs[0]), decay = exec_attr_getf(n->attrs[1]), mu = exec_attr_getf(n->attrs[2]),
          eps = exec_attr_getf(n->attrs[3]);
    int64_t total = exec_in(k, n, 0)->numel;
    EXEC_PAR_FOR(k, total, OPT_PAR_MIN, float gr = D[i]; float ms = MS[i] + (gr * gr - MS[i]) * (1.0f - decay);
                 float mom = mu * MOM[i] + lr * gr / sqrtf(ms + eps); MS[i] = ms; MOM[i] = mom; V[i] -= mom;);
    return EXEC_OK;
}

/* ---- clipping (TF's clip_by_global_norm / clip_by_norm) -----------------
 * g' = g * clip_norm / max(norm, clip_norm); a non-finite global norm makes
 * every output NaN, as TF does. */
static float clip_norm_attr(const exec_node *n) { return n->nattrs > 0 ? exec_attr_getf(n->attrs[0]) : 0.0f; }

static exec_status shape_clip(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    if (!(clip_norm_attr(n) > 0))
        return exec_fail(EXEC_ERR_SHAPE, "%s: clip_norm must be positive", exec_op_name(n->op));
    for (int i = 0; i < n->nin; i++) {
        if (exec_gin(g, n, i)->dtype != EXEC_F32)
            return exec_fail(EXEC_ERR_SHAPE, "%s: input %d is not float", exec_op_name(n->op), i);
        exec_shape_of(&out[i], exec_gin(g, n, i));
    }
    return EXEC_OK;
}

static double sumsq(const exec_kctx *k, const float *restrict x, int64_t total)
{
    double s = 0;
    EXEC_PAR_SUM(k, total, OPT_PAR_MIN, s, s += (double)x[i] * (double)x[i];);
    return s;
}

static void scale_into(const exec_kctx *k, float *restrict y, const float *restrict x, int64_t total, float scale)
{
    EXEC_PAR_FOR(k, total, OPT_PAR_MIN, y[i] = x[i] * scale;);
}

static exec_status clip_run(exec_kctx *k, const exec_node *n)
{
    double ss = 0;
    for (int i = 0; i < n->nin; i++)
        ss += sumsq(k, exec_inf(k, n, i), exec_in(k, n, i)->numel);
    double norm = sqrt(ss), clip = clip_norm_attr(n);
    float scale = isfinite(norm) ? (float)(clip / (norm > clip ? norm : clip)) : NAN;
    for (int i = 0; i < n->nout; i++)
        scale_into(k, exec_outf(k, n, i), exec_inf(k, n, i), exec_in(k, n, i)->numel, scale);
    return EXEC_OK;
}

/* ClipByGlobalNorm: in [g...] -> out [g'...], norm over all inputs */
exec_status op_shape_ClipByGlobalNorm(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return shape_clip(g, n, out);
}
exec_status op_fwd_ClipByGlobalNorm(exec_kctx *k, const exec_node *n) { return clip_run(k, n); }

/* ClipByNorm: in [g] -> [g'], norm of the one tensor */
exec_status op_shape_ClipByNorm(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    return shape_clip(g, n, out);
}
exec_status op_fwd_ClipByNorm(exec_kctx *k, const exec_node *n) { return clip_run(k, n); }
