/* matrix.c -- MatMul and BatchMatMul on OpenBLAS. */
#include "../internal.h"

#include <cblas.h>

/* ---- MatMul: c[M,N] = op(a) op(b); a [M,K] ([K,M] if transpose_a),
 *      b [K,N] ([N,K] if transpose_b) ------------------------------------ */
exec_status op_shape_MatMul(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0), *b = exec_gin(g, n, 1);
    if (a->ndim != 2 || b->ndim != 2 || a->dtype != EXEC_F32 || b->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "MatMul: wants two float matrices (got %d-D and %d-D)", a->ndim, b->ndim);
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    int64_t m = ta ? a->shape[1] : a->shape[0], ka = ta ? a->shape[0] : a->shape[1];
    int64_t kb = tb ? b->shape[1] : b->shape[0], nn = tb ? b->shape[0] : b->shape[1];
    if (ka != kb)
        return exec_fail(EXEC_ERR_SHAPE, "MatMul: inner dimensions differ (%lld vs %lld)", (long long)ka,
                         (long long)kb);
    exec_shape_set(out, EXEC_F32, 2, (int64_t[]){ m, nn });
    return EXEC_OK;
}

exec_status op_fwd_MatMul(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *a = exec_in(k, n, 0), *b = exec_in(k, n, 1), *c = exec_out(k, n, 0);
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    int64_t m = c->shape[0], nn = c->shape[1], kk = ta ? a->shape[0] : a->shape[1];
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)nn, (int)kk,
                1.0f, a->data, (int)a->shape[1], b->data, (int)b->shape[1], 0.0f, c->data, (int)nn);
    return EXEC_OK;
}

/* The gradients of c = op(a) op(b), for each transpose combination, as
 * MatMuls: row [ta][tb] gives (x, y, tx, ty) for da and for db. */
static uint32_t matmul_grad_part(exec_graph *g, exec_op op, uint32_t a, uint32_t b, uint32_t dc, int ta, int tb,
                                 int which)
{
    /* which = 0: da, 1: db. Operands: 'A', 'B' or 'C' (= dc). */
    static const char rule[2][2][2][4] = {
        { { "CB01", "AC10" }, { "CB00", "CA10" } }, /* ta=0: tb=0, tb=1 */
        { { "BC01", "AC00" }, { "BC11", "CA11" } }, /* ta=1 */
    };
    const char *r = rule[ta][tb][which];
    uint32_t x = r[0] == 'A' ? a : r[0] == 'B' ? b : dc;
    uint32_t y = r[1] == 'A' ? a : r[1] == 'B' ? b : dc;
    int64_t attrs[] = { r[2] - '0', r[3] - '0' };
    return exec_op1(g, op, 2, (uint32_t[]){ x, y }, 2, attrs);
}

exec_status op_grad_MatMul(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    int ta = n->nattrs > 0 && n->attrs[0] != 0, tb = n->nattrs > 1 && n->attrs[1] != 0;
    uint32_t a = n->in[0], b = n->in[1];
    if (din[0])
        din[0] = matmul_grad_part(g, EXEC_OP_MatMul, a, b, dout[0], ta, tb, 0);
    if (din[1])
        din[1] = matmul_grad_part(g, EXEC_OP_MatMul, a, b, dout[0], ta, tb, 1);
    return g->status;
}

/* ---- BatchMatMul: c[B,M,N] = op(a[i]) op(b[i]) for each i < B ---------- */
exec_status op_shape_BatchMatMul(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0), *b = exec_gin(g, n, 1);
    if (a->ndim != 3 || b->ndim != 3 || a->shape[0] != b->shape[0])
        return exec_fail(EXEC_ERR_SHAPE, "BatchMatMul: wants two [B,.,.] tensors with the same B");
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    int64_t m = ta ? a->shape[2] : a->shape[1], ka = ta ? a->shape[1] : a->shape[2];
    int64_t kb = tb ? b->shape[2] : b->shape[1], nn = tb ? b->shape[1] : b->shape[2];
    if (ka != kb)
        return exec_fail(EXEC_ERR_SHAPE, "BatchMatMul: inner dimensions differ (%lld vs %lld)", (long long)ka,
                         (long long)kb);
    exec_shape_set(out, EXEC_F32, 3, (int64_t[]){ a->shape[0], m, nn });
    return EXEC_OK;
}

exec_status op_fwd_BatchMatMul(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *a = exec_in(k, n, 0), *b = exec_in(k, n, 1), *c = exec_out(k, n, 0);
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    int64_t bs = c->shape[0], m = c->shape[1], nn = c->shape[2], kk = ta ? a->shape[1] : a->shape[2];
    int64_t sa = a->shape[1] * a->shape[2], sb = b->shape[1] * b->shape[2], sc = m * nn;
    const float *A = a->data, *B = b->data;
    float *C = c->data;
    /* Small matrices: the batch entries split over the threads (OpenBLAS
     * then runs single threaded inside the parallel region) once the op has
     * 4M multiply-adds: below that the parallel region costs more than it
     * saves (2 threads on 32 x 32x32x32, Transformer attention at the small
     * preset: 81 us against 53 us on one; on 128 x 64x64x64 they win, 1.0
     * ms against 1.3-1.6 ms). Large matrices: threaded sgemm. */
    int small = m * nn * kk < 64 * 64 * 64, split = small && bs > 1 && bs * m * nn * kk >= (1 << 22);
#pragma omp parallel for num_threads(k->nthreads) if (split) schedule(static)
    for (int64_t i = 0; i < bs; i++)
        cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)m, (int)nn,
                    (int)kk, 1.0f, A + i * sa, (int)a->shape[2], B + i * sb, (int)b->shape[2], 0.0f, C + i * sc,
                    (int)nn);
    return EXEC_OK;
}

exec_status op_grad_BatchMatMul(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    int ta = n->nattrs > 0 && n->attrs[0] != 0, tb = n->nattrs > 1 && n->attrs[1] != 0;
    uint32_t a = n->in[0], b = n->in[1]; /* n moves when the first part grows the node array */
    if (din[0])
        din[0] = matmul_grad_part(g, EXEC_OP_BatchMatMul, a, b, dout[0], ta, tb, 0);
    if (din[1])
        din[1] = matmul_grad_part(g, EXEC_OP_BatchMatMul, a, b, dout[0], ta, tb, 1);
    return g->status;
}
