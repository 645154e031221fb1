/* matrix.c -- MatMul and BatchMatMul on OpenBLAS. */
#include "../internal.h"
#include "conv.h"

#include <cblas.h>
#include <string.h>

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

/* Skinny products: a of at most SKINNY_M rows against a large b, as in
 * greedy decoding of a few sequences, where every step multiplies a handful
 * of rows by every weight matrix. sgemm packs b into panels before its
 * kernel reads them (about three passes over b, each from memory once the
 * weights outgrow the caches); these loops read b once, in column blocks of
 * SKINNY_W (b [K,N]) or row by row (b^T: [N,K]), with the rows' sums in
 * registers. m is a constant in each instance (skinny_nn/nt below, inlined
 * per m), so the accumulators stay in registers. */
enum { SKINNY_M = 8, SKINNY_W = 16, SKINNY_MIN = 1 << 17 /* k*n below this: sgemm */ };
/* the most rows of a for which MatMul keeps an unchanged b packed */
enum { PACK_MAX_M = 256 };

typedef float skinny_vec __attribute__((vector_size(SKINNY_W * sizeof(float))));

/* c[m, j0:j0+w] = a[m,K] b[K, j0:j0+w], w <= SKINNY_W */
static inline __attribute__((always_inline)) void skinny_nn(int m, float *restrict c, const float *restrict a,
                                                            const float *restrict b, int64_t K, int64_t N, int64_t j0,
                                                            int64_t w)
{
    skinny_vec acc[SKINNY_M] = { 0 };
    if (w == SKINNY_W) {
        for (int64_t p = 0; p < K; p++) {
            skinny_vec bv;
            memcpy(&bv, b + p * N + j0, sizeof bv);
#pragma GCC unroll 8
            for (int i = 0; i < m; i++)
                acc[i] += a[i * K + p] * bv;
        }
        for (int i = 0; i < m; i++)
            memcpy(c + i * N + j0, &acc[i], sizeof acc[i]);
        return;
    }
    for (int i = 0; i < m; i++)
        for (int64_t l = 0; l < w; l++) {
            float sum = 0.0f;
            for (int64_t p = 0; p < K; p++)
                sum += a[i * K + p] * b[p * N + j0 + l];
            c[i * N + j0 + l] = sum;
        }
}

/* c[m, j] = a[m,K] . b[j,K] */
static inline __attribute__((always_inline)) void skinny_nt(int m, float *restrict c, const float *restrict a,
                                                            const float *restrict b, int64_t K, int64_t N, int64_t j)
{
    skinny_vec acc[SKINNY_M] = { 0 };
    float tail[SKINNY_M] = { 0 };
    const float *restrict bj = b + j * K;
    int64_t p = 0;
    for (; p + SKINNY_W <= K; p += SKINNY_W) {
        skinny_vec bv;
        memcpy(&bv, bj + p, sizeof bv);
#pragma GCC unroll 8
        for (int i = 0; i < m; i++) {
            skinny_vec av;
            memcpy(&av, a + i * K + p, sizeof av);
            acc[i] += av * bv;
        }
    }
    for (; p < K; p++)
        for (int i = 0; i < m; i++)
            tail[i] += a[i * K + p] * bj[p];
    for (int i = 0; i < m; i++) {
        float sum = tail[i];
        for (int l = 0; l < SKINNY_W; l++)
            sum += acc[i][l];
        c[i * N + j] = sum;
    }
}

#define SKINNY_CASE(M)                                                                                            \
    case M:                                                                                                       \
        if (tb) {                                                                                                 \
            _Pragma("omp parallel for num_threads(nthreads) schedule(static)") for (int64_t j = 0; j < N; j++)    \
                skinny_nt(M, c, a, b, K, N, j);                                                                   \
        } else {                                                                                                  \
            _Pragma("omp parallel for num_threads(nthreads) schedule(static)") for (int64_t jb = 0; jb < nblocks; \
                                                                                    jb++)                         \
                skinny_nn(M, c, a, b, K, N, jb *SKINNY_W,                                                         \
                          N - jb * SKINNY_W < SKINNY_W ? N - jb * SKINNY_W : SKINNY_W);                           \
        }                                                                                                         \
        break;

/* c[m,N] = a[m,K] op(b), 1 <= m <= SKINNY_M */
static void skinny_gemm(int nthreads, float *c, const float *a, const float *b, int m, int64_t K, int64_t N, int tb)
{
    const int64_t nblocks = (N + SKINNY_W - 1) / SKINNY_W;
    switch (m) {
        SKINNY_CASE(1)
        SKINNY_CASE(2)
        SKINNY_CASE(3)
        SKINNY_CASE(4)
        SKINNY_CASE(5)
        SKINNY_CASE(6)
        SKINNY_CASE(7)
        SKINNY_CASE(8)
    }
}

exec_status op_fwd_MatMul(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *a = exec_in(k, n, 0), *b = exec_in(k, n, 1), *c = exec_out(k, n, 0);
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    int64_t m = c->shape[0], nn = c->shape[1], kk = ta ? a->shape[0] : a->shape[1];
    if (!ta && m <= SKINNY_M && kk * nn >= SKINNY_MIN) {
        skinny_gemm(k->nthreads, c->data, a->data, b->data, (int)m, kk, nn, tb);
        return EXEC_OK;
    }
    /* a weight no node of this graph writes (an inference graph's): packed
     * once into the tiles' panels and kept while it is unchanged, for the
     * products of a batch's few rows (at most PACK_MAX_M; past that each
     * panel of b in place serves many row blocks) */
    if (!ta && !tb && m <= PACK_MAX_M) {
        bool have = false;
        float *bp = exec_kcache(k, n, n->in[1], 0, (size_t)exec_matmul_packed_floats(kk, nn) * sizeof(float), &have);
        if (bp) {
            if (!have) {
                exec_matmul_pack(bp, b->data, kk, nn, k->nthreads);
                exec_kcache_filled(k, n, true);
            }
            if (exec_matmul_tiled_packed(k, c->data, a->data, bp, m, nn, kk))
                return EXEC_OK;
        }
    }
    if (exec_matmul_tiled(k, c->data, a->data, b->data, m, nn, kk, ta, tb))
        return EXEC_OK;
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

/* ---- BatchMatMul: c[..., M, N] = op(a[i]) op(b[i]) for each index i of
 *      the leading (batch) dims, which a and b share (TF's BatchMatMulV2
 *      without broadcasting): a [..., M, K], b [..., K, N] ------------ */
enum {
    BMM_SMALL_ROWS = 4,       /* m at most this: the plain loops */
    BMM_SMALL_MACS = 1 << 16, /* and at most this many multiply-adds a product */
};

exec_status op_shape_BatchMatMul(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0), *b = exec_gin(g, n, 1);
    const int nd = a->ndim;
    bool same = nd >= 3 && b->ndim == nd && a->dtype == EXEC_F32 && b->dtype == EXEC_F32;
    for (int i = 0; same && i < nd - 2; i++)
        same = a->shape[i] == b->shape[i];
    if (!same)
        return exec_fail(EXEC_ERR_SHAPE, "BatchMatMul: wants two float [..., M, K] tensors with the same batch dims");
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    int64_t m = ta ? a->shape[nd - 1] : a->shape[nd - 2], ka = ta ? a->shape[nd - 2] : a->shape[nd - 1];
    int64_t kb = tb ? b->shape[nd - 1] : b->shape[nd - 2], nn = tb ? b->shape[nd - 2] : b->shape[nd - 1];
    if (ka != kb)
        return exec_fail(EXEC_ERR_SHAPE, "BatchMatMul: inner dimensions differ (%lld vs %lld)", (long long)ka,
                         (long long)kb);
    int64_t d[EXEC_MAX_DIMS];
    memcpy(d, a->shape, (size_t)nd * sizeof *d);
    d[nd - 2] = m;
    d[nd - 1] = nn;
    exec_shape_set(out, EXEC_F32, nd, d);
    return EXEC_OK;
}

/* One small product c[m,n] = op(a) op(b), a [m,kk] ([kk,m] if ta), b [kk,n]
 * ([n,kk] if tb), in plain loops that vectorize: rows of c as sums of rows
 * of b (b not transposed), dot products along kk (b transposed, a not), or
 * columns of c as sums of rows of a (both transposed). Each cblas_sgemm call
 * costs about 0.25 us before any arithmetic, more than the whole product
 * for one decoded token's query against its keys (1 x 64 x 32). */
static void small_gemm(float *restrict c, const float *restrict a, const float *restrict b, int64_t m, int64_t n,
                       int64_t kk, int ta, int tb)
{
    if (!tb) {
        for (int64_t i = 0; i < m; i++) {
            float *restrict ci = c + i * n;
            for (int64_t j = 0; j < n; j++)
                ci[j] = 0.0f;
            for (int64_t p = 0; p < kk; p++) {
                const float aip = ta ? a[p * m + i] : a[i * kk + p];
                const float *restrict bp = b + p * n;
#pragma omp simd
                for (int64_t j = 0; j < n; j++)
                    ci[j] += aip * bp[j];
            }
        }
    } else if (!ta) {
        for (int64_t i = 0; i < m; i++) {
            const float *restrict ai = a + i * kk;
            int64_t j = 0;
            for (; j + 4 <= n; j += 4) { /* four dot products share the loads of a's row */
                const float *restrict b0 = b + j * kk, *restrict b1 = b0 + kk, *restrict b2 = b1 + kk,
                                      *restrict b3 = b2 + kk;
                float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
#pragma omp simd reduction(+ : s0, s1, s2, s3)
                for (int64_t p = 0; p < kk; p++) {
                    s0 += ai[p] * b0[p];
                    s1 += ai[p] * b1[p];
                    s2 += ai[p] * b2[p];
                    s3 += ai[p] * b3[p];
                }
                c[i * n + j] = s0, c[i * n + j + 1] = s1, c[i * n + j + 2] = s2, c[i * n + j + 3] = s3;
            }
            for (; j < n; j++) {
                const float *restrict bj = b + j * kk;
                float sum = 0.0f;
#pragma omp simd reduction(+ : sum)
                for (int64_t p = 0; p < kk; p++)
                    sum += ai[p] * bj[p];
                c[i * n + j] = sum;
            }
        }
    } else {
        float col[BMM_SMALL_ROWS];
        for (int64_t j = 0; j < n; j++) {
            for (int64_t i = 0; i < m; i++)
                col[i] = 0.0f;
            for (int64_t p = 0; p < kk; p++) {
                const float bjp = b[j * kk + p];
                const float *restrict ap = a + p * m;
#pragma omp simd
                for (int64_t i = 0; i < m; i++)
                    col[i] += ap[i] * bjp;
            }
            for (int64_t i = 0; i < m; i++)
                c[i * n + j] = col[i];
        }
    }
}

/* One product of at most TILE_MAX in every dim (one head's attention:
 * 32 x 32 x 32 at the Transformer's small preset, 64 x 64 x 64 at full):
 * b packed into rows of TILE_W-float vectors (transposed when tb; zeros past
 * n), then 4 rows of c at a time in registers, each a(i, p) times b's row p.
 * sgemm's per-call costs (its checks, buffers and packing for large
 * products) are most of such a small product's time. */
enum { TILE_MAX = 64, TILE_W = 16 };
typedef float tile_vec __attribute__((vector_size(TILE_W * sizeof(float))));

static void tile_gemm(float *restrict c, const float *restrict a, const float *restrict b, int64_t m, int64_t n,
                      int64_t kk, int ta, int tb)
{
    tile_vec bp[TILE_MAX * (TILE_MAX / TILE_W)]; /* [kk][nv] */
    const int64_t nv = (n + TILE_W - 1) / TILE_W, ld = nv * TILE_W;
    float *restrict bf = (float *)bp;
    if (n < ld)
        for (int64_t p = 0; p < kk; p++)
            for (int64_t j = n; j < ld; j++)
                bf[p * ld + j] = 0.0f;
    if (tb) {
        for (int64_t j = 0; j < n; j++)
            for (int64_t p = 0; p < kk; p++)
                bf[p * ld + j] = b[j * kk + p];
    } else {
        for (int64_t p = 0; p < kk; p++)
            memcpy(bf + p * ld, b + p * n, (size_t)n * sizeof *bf);
    }
    const int64_t sai = ta ? 1 : kk, sap = ta ? m : 1; /* a(i, p) = a[i * sai + p * sap] */
    for (int64_t v = 0; v < nv; v++) {
        const int64_t j0 = v * TILE_W, w = n - j0 < TILE_W ? n - j0 : TILE_W;
        int64_t i = 0;
        for (; i + 4 <= m; i += 4) {
            tile_vec c0 = { 0 }, c1 = { 0 }, c2 = { 0 }, c3 = { 0 };
            const float *a0 = a + i * sai;
            for (int64_t p = 0; p < kk; p++) {
                const tile_vec bv = bp[p * nv + v];
                const float *ap = a0 + p * sap;
                c0 += ap[0] * bv;
                c1 += ap[sai] * bv;
                c2 += ap[2 * sai] * bv;
                c3 += ap[3 * sai] * bv;
            }
            for (int64_t l = 0; l < w; l++) {
                c[i * n + j0 + l] = c0[l];
                c[(i + 1) * n + j0 + l] = c1[l];
                c[(i + 2) * n + j0 + l] = c2[l];
                c[(i + 3) * n + j0 + l] = c3[l];
            }
        }
        for (; i < m; i++) {
            tile_vec c0 = { 0 };
            for (int64_t p = 0; p < kk; p++)
                c0 += a[i * sai + p * sap] * bp[p * nv + v];
            for (int64_t l = 0; l < w; l++)
                c[i * n + j0 + l] = c0[l];
        }
    }
}

/* f on each of the bs products, on nthreads threads; no parallel region at
 * all for one thread (or one product): a region whose if() is false still
 * costs about a microsecond */
typedef void product_fn(float *restrict c, const float *restrict a, const float *restrict b, int64_t m, int64_t n,
                        int64_t kk, int ta, int tb);
static void each_product(product_fn *f, int nthreads, float *C, const float *A, const float *B, int64_t bs, int64_t sc,
                         int64_t sa, int64_t sb, int64_t m, int64_t n, int64_t kk, int ta, int tb)
{
    if (nthreads > 1 && bs > 1) {
#pragma omp parallel for num_threads(nthreads) schedule(static)
        for (int64_t i = 0; i < bs; i++)
            f(C + i * sc, A + i * sa, B + i * sb, m, n, kk, ta, tb);
        return;
    }
    for (int64_t i = 0; i < bs; i++)
        f(C + i * sc, A + i * sa, B + i * sb, m, n, kk, ta, tb);
}

exec_status op_fwd_BatchMatMul(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *a = exec_in(k, n, 0), *b = exec_in(k, n, 1), *c = exec_out(k, n, 0);
    int ta = n->nattrs > 0 && n->attrs[0], tb = n->nattrs > 1 && n->attrs[1];
    const int nd = c->ndim;
    int64_t m = c->shape[nd - 2], nn = c->shape[nd - 1], kk = ta ? a->shape[nd - 2] : a->shape[nd - 1];
    int64_t sa = a->shape[nd - 2] * a->shape[nd - 1], sb = b->shape[nd - 2] * b->shape[nd - 1], sc = m * nn;
    int64_t bs = sc ? c->numel / sc : 0;
    const float *A = a->data, *B = b->data;
    float *C = c->data;
    /* Products of a few rows of c (a decoded token's attention): the loops
     * above, the batch split over the threads once the op has 32K
     * multiply-adds. (Not a few columns and many rows: the row loops would
     * run a vector loop of one element per multiply-add.) */
    const int64_t macs = bs * m * nn * kk;
    if (m <= BMM_SMALL_ROWS && m * nn * kk <= BMM_SMALL_MACS) {
        each_product(small_gemm, macs >= (1 << 15) ? k->nthreads : 1, C, A, B, bs, sc, sa, sb, m, nn, kk, ta, tb);
        return EXEC_OK;
    }
    /* Small products of at least half a vector of columns: the tiles above,
     * the batch split over the threads once the op has 256K multiply-adds */
    if (m <= TILE_MAX && nn <= TILE_MAX && kk <= TILE_MAX && nn >= TILE_W / 2) {
        each_product(tile_gemm, macs >= (1 << 18) ? k->nthreads : 1, C, A, B, bs, sc, sa, sb, m, nn, kk, ta, tb);
        return EXEC_OK;
    }
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
                    (int)kk, 1.0f, A + i * sa, (int)a->shape[nd - 1], B + i * sb, (int)b->shape[nd - 1], 0.0f,
                    C + i * sc, (int)nn);
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
