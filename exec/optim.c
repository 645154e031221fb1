/* optim.c -- optimizers: append one update node per trained weight. */
#include "internal.h"

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
