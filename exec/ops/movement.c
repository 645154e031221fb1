/* movement.c -- data movement: Reshape, Tile. */
#include "../internal.h"

/* ---- Reshape: attrs = the new dims (one may be -1) --------------------- */
exec_status op_shape_Reshape(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    int64_t d[EXEC_MAX_DIMS], known = 1;
    int infer = -1;
    if (n->nattrs < 1 || n->nattrs > EXEC_MAX_DIMS)
        return exec_fail(EXEC_ERR_SHAPE, "Reshape: %d dims", n->nattrs);
    for (int i = 0; i < n->nattrs; i++) {
        d[i] = n->attrs[i];
        if (d[i] == -1 && infer < 0)
            infer = i;
        else if (d[i] <= 0)
            return exec_fail(EXEC_ERR_SHAPE, "Reshape: dim %d is %lld", i, (long long)d[i]);
        else
            known *= d[i];
    }
    if (infer >= 0) {
        if (x->numel % known)
            return exec_fail(EXEC_ERR_SHAPE, "Reshape: %lld elements do not split by %lld", (long long)x->numel, (long long)known);
        d[infer] = x->numel / known;
        known *= d[infer];
    }
    if (known != x->numel)
        return exec_fail(EXEC_ERR_SHAPE, "Reshape: %lld elements into %lld", (long long)x->numel, (long long)known);
    exec_shape_set(out, x->dtype, n->nattrs, d);
    return EXEC_OK;
}

exec_status op_fwd_Reshape(exec_kctx *k, const exec_node *n)
{
    memcpy(exec_out(k, n, 0)->data, exec_in(k, n, 0)->data, exec_in(k, n, 0)->bytes);
    return EXEC_OK;
}

exec_status op_grad_Reshape(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0]) {
        const exec_tensor *x = exec_t(g, n->in[0]);
        int64_t d[EXEC_MAX_DIMS];
        memcpy(d, x->shape, sizeof d);
        din[0] = exec_op1(g, EXEC_OP_Reshape, 1, &dout[0], x->ndim, d);
    }
    return g->status;
}

/* ---- Tile: attrs = multiples per dim ----------------------------------- */
exec_status op_shape_Tile(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    if (n->nattrs != x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "Tile: %d multiples for %d dims", n->nattrs, x->ndim);
    int64_t d[EXEC_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        if (n->attrs[i] < 1)
            return exec_fail(EXEC_ERR_SHAPE, "Tile: multiple %lld", (long long)n->attrs[i]);
        d[i] = x->shape[i] * n->attrs[i];
    }
    exec_shape_set(out, x->dtype, x->ndim, d);
    return EXEC_OK;
}

exec_status op_fwd_Tile(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *y = exec_out(k, n, 0);
    const uint32_t *X = x->data;
    uint32_t *Y = y->data;
    int nd = x->ndim;
    int64_t inner = y->shape[nd - 1], xin = x->shape[nd - 1];
    int64_t rows = y->numel / inner;
#pragma omp parallel for num_threads(k->nthreads) if (y->numel > 65536)
    for (int64_t r = 0; r < rows; r++) {
        /* the input row for output row r */
        int64_t rem = r, xoff = 0;
        for (int i = nd - 2; i >= 0; i--) {
            int64_t yi = rem % y->shape[i];
            rem /= y->shape[i];
            xoff += (yi % x->shape[i]) * x->strides[i];
        }
        uint32_t *yr = Y + r * inner;
        const uint32_t *xr = X + xoff;
        for (int64_t i = 0; i < inner; i++)
            yr[i] = xr[i % xin];
    }
    return EXEC_OK;
}

/* dx = dy reshaped to [m0, d0, m1, d1, ...] and summed over the m axes. */
exec_status op_grad_Tile(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    const exec_tensor *x = exec_t(g, n->in[0]);
    uint32_t cur = dout[0];
    /* one dim at a time keeps every intermediate within EXEC_MAX_DIMS */
    for (int i = 0; i < x->ndim; i++) {
        if (n->attrs[i] == 1)
            continue;
        const exec_tensor *c = exec_t(g, cur);
        int64_t pre = 1, post = 1;
        for (int j = 0; j < i; j++)
            pre *= c->shape[j];
        for (int j = i + 1; j < c->ndim; j++)
            post *= c->shape[j];
        uint32_t r = exec_op1(g, EXEC_OP_Reshape, 1, &cur, 4, (int64_t[]){ pre, n->attrs[i], x->shape[i], post });
        uint32_t s = exec_op1(g, EXEC_OP_Sum, 1, &r, 2, (int64_t[]){ 0, 1 });
        if (!s)
            return g->status;
        int64_t d[EXEC_MAX_DIMS];
        c = exec_t(g, cur);
        memcpy(d, c->shape, sizeof d);
        d[i] = x->shape[i];
        cur = exec_op1(g, EXEC_OP_Reshape, 1, &s, c->ndim, d);
    }
    din[0] = cur;
    return g->status;
}
