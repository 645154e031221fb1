/* optim.c -- optimizers: append one update node per trained weight. */
#include "internal.h"

#include <stdio.h>

exec_status exec_optimizer_sgd(exec_graph *g, float lr)
{
    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_update;
    for (uint32_t i = 0; i < g->nweights && !g->status; i++) {
        uint32_t w = g->weights[i], dw = g->grad[w];
        if (!dw)
            continue;
        int64_t attrs[] = { exec_attr_f(lr) };
        exec_op_add_inplace(g, EXEC_OP_ApplyGradientDescent, 2, (uint32_t[]){ w, dw }, 1, attrs, 1, &w);
    }
    g->phase = saved;
    return g->status;
}

/* Every optimizer's update op keeps its learning rate in attribute 0. */
exec_status exec_optimizer_set_lr(exec_graph *g, float lr)
{
    if (!(lr >= 0) || !isfinite(lr))
        return exec_fail(EXEC_ERR_ARG, "optimizer: learning rate %g is not a finite number >= 0", (double)lr);
    for (uint32_t i = 0; i < g->nnodes; i++) {
        exec_node *n = &g->nodes[i];
        if (n->phase == EXEC_PHASE_update && (n->op == EXEC_OP_ApplyGradientDescent || n->op == EXEC_OP_ApplyMomentum ||
                                              n->op == EXEC_OP_ApplyAdam || n->op == EXEC_OP_ApplyRMSProp))
            n->attrs[0] = exec_attr_f(lr);
    }
    return EXEC_OK;
}

/* ==== momentum, Adam, RMSProp and gradient clipping ===================== */

/* A zero-filled optimizer-state tensor shaped like w, named "<w>/<what>". */
static uint32_t slot(exec_graph *g, uint32_t w, const char *what, int ndim, const int64_t *shape)
{
    char name[48];
    snprintf(name, sizeof name, "%.30s/%s", g->tensors[w].name, what);
    return exec_tensor_new(g, EXEC_ROLE_optimizer, EXEC_F32, ndim, shape, name);
}

static uint32_t slot_like(exec_graph *g, uint32_t w, const char *what)
{
    int64_t shape[EXEC_MAX_DIMS];
    memcpy(shape, g->tensors[w].shape, sizeof shape);
    return slot(g, w, what, g->tensors[w].ndim, shape);
}

exec_status exec_optimizer_momentum(exec_graph *g, float lr, float momentum)
{
    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_update;
    for (uint32_t i = 0; i < g->nweights && !g->status; i++) {
        uint32_t w = g->weights[i], dw = g->grad ? g->grad[w] : 0;
        if (!dw)
            continue;
        uint32_t acc = slot_like(g, w, "Momentum");
        if (!acc)
            break;
        int64_t attrs[] = { exec_attr_f(lr), exec_attr_f(momentum) };
        exec_op_add_inplace(g, EXEC_OP_ApplyMomentum, 3, (uint32_t[]){ w, acc, dw }, 2, attrs, 2,
                            (uint32_t[]){ w, acc });
    }
    g->phase = saved;
    return g->status;
}

exec_status exec_optimizer_adam(exec_graph *g, float lr, float beta1, float beta2, float epsilon)
{
    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_update;
    for (uint32_t i = 0; i < g->nweights && !g->status; i++) {
        uint32_t w = g->weights[i], dw = g->grad ? g->grad[w] : 0;
        if (!dw)
            continue;
        uint32_t m = slot_like(g, w, "Adam_m"), v = slot_like(g, w, "Adam_v");
        uint32_t bp = slot(g, w, "Adam_beta_powers", 1, (int64_t[]){ 2 }); /* zero: t = 0 */
        if (!m || !v || !bp)
            break;
        int64_t attrs[] = { exec_attr_f(lr), exec_attr_f(beta1), exec_attr_f(beta2), exec_attr_f(epsilon) };
        exec_op_add_inplace(g, EXEC_OP_ApplyAdam, 5, (uint32_t[]){ w, m, v, bp, dw }, 4, attrs, 4,
                            (uint32_t[]){ w, m, v, bp });
    }
    g->phase = saved;
    return g->status;
}

exec_status exec_optimizer_rmsprop(exec_graph *g, float lr, float decay, float momentum, float epsilon)
{
    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_update;
    for (uint32_t i = 0; i < g->nweights && !g->status; i++) {
        uint32_t w = g->weights[i], dw = g->grad ? g->grad[w] : 0;
        if (!dw)
            continue;
        uint32_t ms = slot_like(g, w, "RMSProp_ms"), mom = slot_like(g, w, "RMSProp_mom");
        if (!ms || !mom)
            break;
        g->init[ms] = EXEC_INIT_ONE + 1; /* TF 1.x's RMSPropOptimizer starts ms at 1 */
        int64_t attrs[] = { exec_attr_f(lr), exec_attr_f(decay), exec_attr_f(momentum), exec_attr_f(epsilon) };
        exec_op_add_inplace(g, EXEC_OP_ApplyRMSProp, 4, (uint32_t[]){ w, ms, mom, dw }, 4, attrs, 3,
                            (uint32_t[]){ w, ms, mom });
    }
    g->phase = saved;
    return g->status;
}

exec_status exec_clip_global_norm(exec_graph *g, float clip_norm)
{
    if (g->status)
        return g->status;
    uint32_t n = 0;
    for (uint32_t i = 0; i < g->nweights; i++)
        n += g->grad && g->grad[g->weights[i]] != 0;
    if (!n)
        return EXEC_OK;
    uint32_t *w = base_malloc(n * sizeof *w), *in = base_malloc(n * sizeof *in), *out = base_malloc(n * sizeof *out);
    if (!w || !in || !out) {
        base_free(w);
        base_free(in);
        base_free(out);
        return exec_graph_fail(g, EXEC_ERR_NOMEM, "clip_global_norm: out of memory"), g->status;
    }
    n = 0;
    for (uint32_t i = 0; i < g->nweights; i++) {
        uint32_t id = g->weights[i];
        if (g->grad[id]) {
            w[n] = id;
            in[n++] = g->grad[id];
        }
    }
    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_update;
    int64_t attrs[] = { exec_attr_f(clip_norm) };
    if (exec_op_add(g, EXEC_OP_ClipByGlobalNorm, (int)n, in, 1, attrs, out))
        for (uint32_t i = 0; i < n; i++)
            exec_grad_set(g, w[i], out[i]);
    g->phase = saved;
    base_free(w);
    base_free(in);
    base_free(out);
    return g->status;
}

exec_status exec_clip_by_norm(exec_graph *g, float clip_norm)
{
    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_update;
    int64_t attrs[] = { exec_attr_f(clip_norm) };
    for (uint32_t i = 0; i < g->nweights && !g->status; i++) {
        uint32_t w = g->weights[i], dw = g->grad ? g->grad[w] : 0;
        if (!dw)
            continue;
        uint32_t c = exec_op1(g, EXEC_OP_ClipByNorm, 1, &dw, 1, attrs);
        if (c)
            exec_grad_set(g, w, c);
    }
    g->phase = saved;
    return g->status;
}
