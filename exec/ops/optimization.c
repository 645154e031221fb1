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
#pragma omp parallel for simd num_threads(k->nthreads) if (total > 65536)
    for (int64_t i = 0; i < total; i++)
        V[i] -= lr * D[i];
    return EXEC_OK;
}
