/* test_ops_core.c -- the core kernels against naive references on odd
 * shapes (non-multiples of 8, batch 1, every transpose); prints max diffs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/build.h"
#include "exec/exec.h"
#include "exec/internal.h"

static void fill(float *p, int64_t n, uint32_t seed)
{
    for (int64_t i = 0; i < n; i++) {
        seed = seed * 1664525u + 1013904223u;
        p[i] = (float)(seed >> 8) / 16777216.0f * 2.0f - 1.0f;
    }
}

static double maxdiff(const float *a, const double *b, int64_t n)
{
    double m = 0;
    for (int64_t i = 0; i < n; i++)
        m = fmax(m, fabs((double)a[i] - b[i]));
    return m;
}

static void run_fwd(exec_graph *g)
{
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
}

static void check_matmul(int M, int N, int K, int ta, int tb, int batch)
{
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    int64_t as[3] = { batch, ta ? K : M, ta ? M : K }, bs[3] = { batch, tb ? N : K, tb ? K : N };
    uint32_t a, b, c;
    if (batch) {
        a = exec_input(g, "a", EXEC_F32, 3, as);
        b = exec_input(g, "b", EXEC_F32, 3, bs);
        c = ex_batch_matmul(g, a, b, ta, tb);
    } else {
        a = exec_input(g, "a", EXEC_F32, 2, as + 1);
        b = exec_input(g, "b", EXEC_F32, 2, bs + 1);
        c = ex_matmul(g, a, b, ta, tb);
    }
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    int nb = batch ? batch : 1;
    float *A = exec_dataf(g, a), *Bm = exec_dataf(g, b);
    fill(A, (int64_t)nb * M * K, 3);
    fill(Bm, (int64_t)nb * K * N, 5);
    run_fwd(g);
    double ref[nb * M * N];
    for (int q = 0; q < nb; q++)
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double s = 0;
                for (int k = 0; k < K; k++) {
                    double av = ta ? A[q * M * K + k * M + i] : A[q * M * K + i * K + k];
                    double bv = tb ? Bm[q * K * N + j * K + k] : Bm[q * K * N + k * N + j];
                    s += av * bv;
                }
                ref[(q * M + i) * N + j] = s;
            }
    double d = maxdiff(exec_dataf(g, c), ref, (int64_t)nb * M * N);
    printf("%s %dx%dx%d ta=%d tb=%d batch=%d: max diff %.2e\n", batch ? "BatchMatMul" : "MatMul", M, N, K, ta, tb,
           batch, d);
    assert_true(d < 1e-4);
    exec_graph_destroy(g);
}

static void test_matmul(void **state)
{
    (void)state;
    for (int t = 0; t < 4; t++) {
        check_matmul(37, 29, 41, t & 1, t >> 1, 0);
        check_matmul(1, 13, 7, t & 1, t >> 1, 0);
        check_matmul(5, 11, 9, t & 1, t >> 1, 3);
        check_matmul(67, 65, 70, t & 1, t >> 1, 1);
    }
}

/* MatMul's general path as tried (not forced): a shape larger than the
 * probe's (32 x 512 x 256; smaller ones follow the probe, untried) tries
 * the tiles and the BLAS at its first EXEC_MATMUL_TRIAL_CALLS runs and then
 * keeps the faster. Every run's output is right (against the double
 * reference); the choice is made at the last trial run, not before, and
 * the next run gives the same bits as that one; a product narrower than a
 * vector is the BLAS's at once (the tiles do not take it). */
static void test_matmul_per_shape(void **state)
{
    (void)state;
    /* past the packed path's 256 rows where neither is transposed (b, which no node writes, would be packed) */
    const int shapes[][5] = { { 300, 96, 300, 0, 0 },
                              { 200, 96, 500, 0, 1 },
                              { 64, 256, 300, 1, 0 },
                              { 333, 7, 4000, 1, 1 },
                              { 37, 48, 41, 1, 0 } };
    const int vectors = exec_simd_best() >= EXEC_SIMD_AVX2;
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        const int M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], ta = shapes[s][3], tb = shapes[s][4];
        assert_int_equal(exec_matmul_choice(M, N, K, ta, tb), 0);
        const int measured = vectors && (double)M * N * K > 32.0 * 512 * 256; /* past the probe's product */
        exec_graph *g;
        assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
        uint32_t a = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ ta ? K : M, ta ? M : K });
        uint32_t b = exec_input(g, "b", EXEC_F32, 2, (int64_t[]){ tb ? N : K, tb ? K : N });
        uint32_t c = ex_matmul(g, a, b, ta, tb);
        assert_int_equal(exec_graph_plan(g), EXEC_OK);
        float *A = exec_dataf(g, a), *Bm = exec_dataf(g, b), *C = exec_dataf(g, c);
        fill(A, (int64_t)M * K, 3);
        fill(Bm, (int64_t)K * N, 5);
        double *ref = malloc((size_t)M * N * sizeof *ref);
        float *last = malloc((size_t)M * N * sizeof *last);
        assert_non_null(ref);
        assert_non_null(last);
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                double x = 0;
                for (int q = 0; q < K; q++)
                    x += (double)(ta ? A[q * M + i] : A[i * K + q]) * (double)(tb ? Bm[j * K + q] : Bm[q * N + j]);
                ref[i * N + j] = x;
            }
        double d = 0;
        int choice = 0;
        for (int run = 1; run <= EXEC_MATMUL_TRIAL_CALLS; run++) {
            memset(C, 0, (size_t)M * N * sizeof *C);
            run_fwd(g);
            const double dr = maxdiff(C, ref, (int64_t)M * N);
            d = dr > d ? dr : d;
            choice = exec_matmul_choice(M, N, K, ta, tb);
            /* chosen at the last trial run, not before (the narrow one at once) */
            if (measured && N >= 8)
                assert_int_equal(choice != 0, run == EXEC_MATMUL_TRIAL_CALLS);
        }
        memcpy(last, C, (size_t)M * N * sizeof *last);
        memset(C, 0, (size_t)M * N * sizeof *C);
        run_fwd(g);
        const int same = memcmp(last, C, (size_t)M * N * sizeof *C) == 0;
        printf("MatMul %dx%dx%d ta=%d tb=%d as tried: %s, max diff %.2e, the run after the trial %s\n", M, N, K, ta, tb,
               choice == 1   ? "the tiles"
               : choice == 2 ? "the BLAS"
                             : "not tried",
               d, same ? "the same bits" : "different");
        assert_true(d < 1e-4);
        assert_true(same);
        if (!measured)
            assert_int_equal(choice, 0);
        else if (N < 8)
            assert_int_equal(choice, 2);
        else
            assert_true(choice == 1 || choice == 2);
        free(last);
        free(ref);
        exec_graph_destroy(g);
    }
}

/* MatMul's skinny path: a of at most 8 rows against a b of 2^17 elements
 * or more, b plain or transposed; odd N (a partial column block) and odd K
 * (the dot products' tails) */
static void test_matmul_skinny(void **state)
{
    (void)state;
    for (int tb = 0; tb < 2; tb++) {
        check_matmul(1, 4099, 33, 0, tb, 0);
        check_matmul(3, 517, 301, 0, tb, 0);
        check_matmul(5, 129, 1030, 0, tb, 0);
        check_matmul(8, 1003, 263, 0, tb, 0);
        check_matmul(9, 1003, 263, 0, tb, 0); /* one row too many: sgemm */
        check_matmul(8, 1003, 263, 1, tb, 0); /* a transposed: sgemm */
    }
}

/* exec_gemm c[M,N] = op(a) op(b) + beta c on strided operands (lda, ldb,
 * ldc each past the tight width), beta 0 and 1, against a double reference
 * (c's padding columns must stay untouched) */
static void check_gemm(int threads, int ta, int tb, int M, int N, int K, float beta)
{
    const int64_t lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 5, ldc = N + 7;
    const int64_t ar = ta ? K : M, br = tb ? N : K;
    float *a = malloc((size_t)(ar * lda) * sizeof *a), *b = malloc((size_t)(br * ldb) * sizeof *b);
    float *c = malloc((size_t)(M * ldc) * sizeof *c);
    double *ref = malloc((size_t)(M * ldc) * sizeof *ref);
    assert_non_null(a);
    assert_non_null(b);
    assert_non_null(c);
    assert_non_null(ref);
    for (int64_t i = 0; i < ar * lda; i++)
        a[i] = (float)((i * 7) % 23) * 0.0625f - 0.7f;
    for (int64_t i = 0; i < br * ldb; i++)
        b[i] = (float)((i * 5) % 19) * 0.0625f - 0.5f;
    for (int64_t i = 0; i < M * ldc; i++)
        ref[i] = c[i] = (float)(i % 11) * 0.25f - 1.0f;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0;
            for (int q = 0; q < K; q++)
                s += (double)(ta ? a[q * lda + i] : a[i * lda + q]) * (double)(tb ? b[j * ldb + q] : b[q * ldb + j]);
            ref[i * ldc + j] = s + (beta != 0.0f ? ref[i * ldc + j] : 0.0);
        }
    exec_gemm(NULL, threads, ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc);
    double d = 0;
    for (int64_t i = 0; i < M * ldc; i++)
        d = fabs(c[i] - ref[i]) > d ? fabs(c[i] - ref[i]) : d;
    printf("gemm %dx%dx%d ta=%d tb=%d beta=%g strided: max diff %.2e\n", M, N, K, ta, tb, (double)beta, d);
    assert_true(d < 1e-4);
    free(a);
    free(b);
    free(c);
    free(ref);
}

/* body(threads) with the tiles forced on, at each vector set the CPU has
 * and on one and two threads; then back to the probe's choice */
static void for_each_tile_set(void (*body)(int threads))
{
    const exec_simd sets[] = { EXEC_SIMD_AVX2, EXEC_SIMD_AVX512 };
    for (size_t v = 0; v < sizeof sets / sizeof sets[0]; v++) {
        if (sets[v] > exec_simd_best())
            continue;
        for (int threads = 1; threads <= 2; threads++) {
            exec_threads_set(threads);
            exec_matmul_tiles_force(1, sets[v]);
            printf("tiles of set %d, %d thread(s)\n", (int)sets[v], threads);
            body(threads);
        }
    }
    exec_matmul_tiles_force(-1, EXEC_SIMD_AUTO);
    exec_threads_set(2); /* as main sets it */
}

/* MatMul's register tiles (forced on, each vector set the CPU has, one and
 * two threads): partial row blocks (M not a multiple of 6 or 8), partial
 * column blocks (N not a multiple of 16, 32 or 48, N below one block),
 * AVX-512's blocks of 3 vectors and of 2 (N or, transposed, M of 64, 96,
 * 144, 160: all two-vector blocks, all three-vector, three with a last
 * block of two read in place), K of 1,
 * a and b each plain and transposed (a^T the panel up to 256 rows of a, b
 * packed past them), batch-1 rows, K past one slice (the sums carried from
 * slice to slice), rows past one pass of 256 */
static void matmul_tile_shapes(int threads)
{
    static const int shapes[][3] = { { 9, 33, 17 },  { 13, 1, 7 },    { 32, 512, 256 }, { 33, 100, 65 },
                                     { 1, 47, 129 }, { 64, 31, 1 },   { 17, 20, 500 },  { 7, 65, 3 },
                                     { 50, 96, 40 }, { 128, 20, 31 }, { 9, 40, 1100 },  { 300, 37, 20 },
                                     { 16, 64, 70 }, { 48, 160, 96 }, { 64, 144, 80 },  { 96, 64, 100 } };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 0; t < 4; t++)
            check_matmul(shapes[i][0], shapes[i][1], shapes[i][2], t & 1, t >> 1, 0);
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        for (int t = 0; t < 8; t++)
            check_gemm(threads, t & 1, (t >> 1) & 1, shapes[i][0], shapes[i][1], shapes[i][2], (float)(t >> 2));
}

static void test_matmul_tiles(void **state)
{
    (void)state;
    for_each_tile_set(matmul_tile_shapes);
    double tile = 0, blas = 0;
    int chosen = exec_matmul_tiles_probe(&tile, &blas);
    printf("probe: tiles %.1f GFLOP/s, sgemm %.1f GFLOP/s on one thread: %s\n", tile, blas, chosen ? "tiles" : "sgemm");
    assert_true(blas > 0);
    assert_true(!chosen || tile > blas);
}

/* ref[M,N] = A[M,K] B[K,N] in double */
static void ref_product(double *ref, const float *A, const float *B, int M, int N, int K)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double sum = 0;
            for (int q = 0; q < K; q++)
                sum += (double)A[i * K + q] * (double)B[q * N + j];
            ref[i * N + j] = sum;
        }
}

/* MatMul's packed b: a b that no node writes (an inference graph's weight)
 * is packed once into the tiles' panels and kept (exec_kcache) while it is
 * unchanged. A write to b through exec_dataf must be seen by the next run
 * (the packing made again), a write to a alone must not need one; shapes
 * with a partial panel (N = 70, 130) and whole ones (96), shares of the
 * threads that begin inside a panel (512, 80), one and two threads, each
 * vector set. */
static void check_matmul_packed(int M, int N, int K)
{
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t a = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ M, K });
    uint32_t b = exec_input(g, "b", EXEC_F32, 2, (int64_t[]){ K, N });
    uint32_t c = ex_matmul(g, a, b, 0, 0);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    double *ref = malloc((size_t)(M * N) * sizeof *ref);
    assert_non_null(ref);
    for (int round = 0; round < 3; round++) {
        /* round 0: both written; 1: b rewritten; 2: a alone rewritten */
        if (round != 1)
            fill(exec_dataf(g, a), (int64_t)M * K, 11u + (uint32_t)round);
        if (round != 2)
            fill(exec_dataf(g, b), (int64_t)K * N, 17u + (uint32_t)round);
        run_fwd(g);
        const float *A = exec_dataf(g, a), *B = exec_dataf(g, b);
        ref_product(ref, A, B, M, N, K);
        double d = maxdiff(exec_dataf(g, c), ref, (int64_t)M * N);
        printf("MatMul packed b %dx%dx%d, round %d: max diff %.2e\n", M, N, K, round, d);
        assert_true(d < 1e-4);
    }
    /* the packing ran: kept as workspace */
    exec_mem_stats ms;
    exec_graph_mem(g, &ms);
    assert_true(ms.peak_workspace >= (size_t)exec_matmul_packed_floats(K, N) * sizeof(float));
    free(ref);
    exec_graph_destroy(g);
}

static void matmul_packed_shapes(int threads)
{
    (void)threads;
    check_matmul_packed(32, 70, 300);
    check_matmul_packed(9, 96, 40);
    check_matmul_packed(20, 130, 600);
    /* two threads split the columns in whole vectors: inside a panel (512:
     * at 256, 16 into the sixth; 80: at 32 or 40, a two-vector block read
     * across the panel's end) */
    check_matmul_packed(64, 512, 512);
    check_matmul_packed(60, 80, 4000);
}

static void test_matmul_packed(void **state)
{
    (void)state;
    for_each_tile_set(matmul_packed_shapes);
}

/* Nodes that multiply by the same weight (an unrolled recurrent net's
 * steps) share one packing of it: the graph keeps one, and each product is
 * right, run in order or by two inter-op workers at once (a node that
 * finds the packing being made by another goes without it), before and
 * after the weight is rewritten. */
#define SHARED_USERS 6
static void matmul_packed_shared_run(int threads)
{
    (void)threads;
    const int M = 24, N = 100, K = 70;
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t b = exec_input(g, "b", EXEC_F32, 2, (int64_t[]){ K, N }), a[SHARED_USERS], c[SHARED_USERS];
    for (int i = 0; i < SHARED_USERS; i++) {
        a[i] = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ M, K });
        c[i] = ex_matmul(g, a[i], b, 0, 0);
    }
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    double *ref = malloc((size_t)(M * N) * sizeof *ref);
    assert_non_null(ref);
    for (int round = 0; round < 4; round++) {
        /* every round writes the a's, all but round 2 b (rounds 1 and 3
         * pack it while two workers run the products) */
        for (int i = 0; i < SHARED_USERS; i++)
            fill(exec_dataf(g, a[i]), (int64_t)M * K, 31u * (uint32_t)round + (uint32_t)i);
        if (round != 2)
            fill(exec_dataf(g, b), (int64_t)K * N, 7u + (uint32_t)round);
        exec_run_opts o = { .max_phase = EXEC_PHASE_forward, .inter = 1 + round % 2 };
        assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
        const float *B = exec_dataf(g, b);
        double worst = 0;
        for (int u = 0; u < SHARED_USERS; u++) {
            const float *A = exec_dataf(g, a[u]);
            ref_product(ref, A, B, M, N, K);
            worst = fmax(worst, maxdiff(exec_dataf(g, c[u]), ref, (int64_t)M * N));
        }
        printf("MatMul, %d nodes of one packed b, round %d (%d inter-op): max diff %.2e\n", SHARED_USERS, round,
               o.inter, worst);
        assert_true(worst < 1e-4);
    }
    /* one packing kept, not one a node */
    printf("  kept: %zu bytes, one packing %zu\n", g->kcache_bytes,
           (size_t)exec_matmul_packed_floats(K, N) * sizeof(float));
    assert_true(exec_matmul_packed_floats(K, N) > 0);
    assert_int_equal(g->kcache_bytes, (size_t)exec_matmul_packed_floats(K, N) * sizeof(float));
    free(ref);
    exec_graph_destroy(g);
}

static void test_matmul_packed_shared(void **state)
{
    (void)state;
    for_each_tile_set(matmul_packed_shared_run);
}

/* BatchMatMul's small paths: the plain loops for c of at most 4 rows
 * (a decoded token's query against its keys, its weights against the
 * values), each transpose and its column buffer; the tiles for products of
 * at most 64 in every dim (a head's attention); batches split over the
 * threads or not */
static void test_batch_matmul_small(void **state)
{
    (void)state;
    for (int t = 0; t < 4; t++) {
        check_matmul(1, 37, 33, t & 1, t >> 1, 5);
        check_matmul(3, 1, 70, t & 1, t >> 1, 2);
        check_matmul(4, 29, 301, t & 1, t >> 1, 7);
        check_matmul(250, 2, 9, t & 1, t >> 1, 3);   /* many rows, few columns: sgemm */
        check_matmul(50, 1, 20, t & 1, t >> 1, 32);  /* memnet's attention: sgemm */
        check_matmul(50, 8, 20, t & 1, t >> 1, 3);   /* half a vector of columns: the tiles */
        check_matmul(1, 65, 64, t & 1, t >> 1, 300); /* 1.2M multiply-adds: threaded */
        check_matmul(5, 5, 5, t & 1, t >> 1, 4);     /* past the loops, few columns: sgemm */
        check_matmul(33, 17, 64, t & 1, t >> 1, 3);  /* partial vectors and row blocks */
        check_matmul(64, 64, 64, t & 1, t >> 1, 65); /* 17M multiply-adds: threaded */
        check_matmul(7, 40, 1, t & 1, t >> 1, 2);
        check_matmul(65, 8, 8, t & 1, t >> 1, 2); /* past the tiles: sgemm */
        check_matmul(9, 7, 8, t & 1, t >> 1, 2);  /* too few columns: sgemm */
    }
}

/* BatchMatMul over two batch dims [P, Q, M, K] x [P, Q, N, K]^T against
 * the 3-D op on the same data (the sgemm path and the plain loops); batch
 * dims that differ are a shape error */
static void test_batch_matmul_rank4(void **state)
{
    (void)state;
    const int P = 2, Q = 3, K = 7, N = 5;
    for (int M = 1; M <= 9; M += 8) {
        exec_graph *g;
        assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
        uint32_t a = exec_input(g, "a", EXEC_F32, 4, (int64_t[]){ P, Q, M, K });
        uint32_t b = exec_input(g, "b", EXEC_F32, 4, (int64_t[]){ P, Q, N, K });
        uint32_t c4 = ex_batch_matmul(g, a, b, 0, 1);
        uint32_t a3 = ex_reshape(g, a, 3, (int64_t[]){ P * Q, M, K }),
                 b3 = ex_reshape(g, b, 3, (int64_t[]){ P * Q, N, K });
        uint32_t c3 = ex_batch_matmul(g, a3, b3, 0, 1);
        assert_int_equal(exec_graph_plan(g), EXEC_OK);
        const exec_tensor *t4 = exec_tensor_get(g, c4);
        assert_int_equal(t4->ndim, 4);
        assert_true(t4->shape[0] == P && t4->shape[1] == Q && t4->shape[2] == M && t4->shape[3] == N);
        fill(exec_dataf(g, a), (int64_t)P * Q * M * K, 11);
        fill(exec_dataf(g, b), (int64_t)P * Q * N * K, 13);
        run_fwd(g);
        assert_memory_equal(exec_dataf(g, c4), exec_dataf(g, c3), (size_t)P * Q * M * N * sizeof(float));
        exec_graph_destroy(g);
    }
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t a = exec_input(g, "a", EXEC_F32, 4, (int64_t[]){ 2, 3, 4, 5 });
    uint32_t b = exec_input(g, "b", EXEC_F32, 4, (int64_t[]){ 3, 2, 5, 4 });
    assert_int_equal(ex_batch_matmul(g, a, b, 0, 0), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    printf("BatchMatMul [2,3,..] x [3,2,..]: %s\n", exec_errmsg());
    exec_graph_destroy(g);
}

static void test_bias_add_and_grad(void **state)
{
    (void)state;
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    enum { N = 3, C = 5, H = 7, W = 9 };
    uint32_t x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ N, C, H, W });
    uint32_t b = exec_input(g, "b", EXEC_F32, 1, (int64_t[]){ C });
    uint32_t y = ex_bias_add(g, x, b, 1);
    uint32_t db = exec_op_add(g, EXEC_OP_BiasAddGrad, 1, &x, 1, (int64_t[]){ 1 }, NULL);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    fill(exec_dataf(g, x), N * C * H * W, 7);
    fill(exec_dataf(g, b), C, 9);
    run_fwd(g);
    const float *X = exec_dataf(g, x), *Bv = exec_dataf(g, b);
    double ref[N * C * H * W], rdb[C] = { 0 };
    for (int i = 0; i < N * C * H * W; i++) {
        int c = (i / (H * W)) % C;
        ref[i] = (double)X[i] + Bv[c];
        rdb[c] += X[i];
    }
    double d1 = maxdiff(exec_dataf(g, y), ref, N * C * H * W), d2 = maxdiff(exec_dataf(g, db), rdb, C);
    printf("BiasAdd NCHW: max diff %.2e; BiasAddGrad: %.2e\n", d1, d2);
    assert_true(d1 < 1e-6 && d2 < 1e-4);
    exec_graph_destroy(g);

    /* the bias on the last axis, [R, C2] */
    enum { R = 601, C2 = 127 }; /* 76,327 elements: both kernels threaded */
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ R, C2 });
    b = exec_input(g, "b", EXEC_F32, 1, (int64_t[]){ C2 });
    y = ex_bias_add(g, x, b, 1);
    db = exec_op_add(g, EXEC_OP_BiasAddGrad, 1, &x, 1, (int64_t[]){ 1 }, NULL);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    fill(exec_dataf(g, x), R * C2, 3);
    fill(exec_dataf(g, b), C2, 5);
    run_fwd(g);
    X = exec_dataf(g, x), Bv = exec_dataf(g, b);
    static double ref2[R * C2], rdb2[C2];
    memset(rdb2, 0, sizeof rdb2);
    for (int i = 0; i < R * C2; i++) {
        ref2[i] = (double)X[i] + Bv[i % C2];
        rdb2[i % C2] += X[i];
    }
    d1 = maxdiff(exec_dataf(g, y), ref2, R * C2), d2 = maxdiff(exec_dataf(g, db), rdb2, C2);
    printf("BiasAdd [rows, C]: max diff %.2e; BiasAddGrad: %.2e\n", d1, d2);
    assert_true(d1 < 1e-6 && d2 < 1e-3);
    exec_graph_destroy(g);
}

/* Tile on one thread and split over two (rows cut mid-way through the
 * outer dims), against the index formula: memnet's [32,50,1,20] x
 * [1,1,6,1] and multiples on every dim of a 4-D tensor */
static void test_tile_paths(void **state)
{
    (void)state;
    static const struct {
        int nd;
        int64_t shape[4], mult[4];
    } cases[] = {
        { 4, { 32, 50, 1, 20 }, { 1, 1, 6, 1 } },
        { 4, { 3, 1, 4, 2 }, { 2, 5, 1, 3 } },
        { 2, { 7, 3 }, { 1, 4 } },
        { 3, { 1, 300, 9 }, { 129, 1, 1 } },
    };
    for (int threads = 1; threads <= 2; threads++)
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            exec_threads_set(threads);
            exec_graph *g;
            assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
            const int nd = cases[c].nd;
            uint32_t x = exec_input(g, "x", EXEC_F32, nd, cases[c].shape);
            uint32_t t = ex_tile(g, x, cases[c].mult);
            assert_int_equal(exec_graph_plan(g), EXEC_OK);
            const exec_tensor *xt = exec_tensor_get(g, x), *yt = exec_tensor_get(g, t);
            fill(exec_dataf(g, x), xt->numel, 5);
            run_fwd(g);
            const float *X = exec_dataf(g, x), *Y = exec_dataf(g, t);
            int64_t bad = 0;
            for (int64_t e = 0; e < yt->numel; e++) {
                int64_t rem = e, xoff = 0;
                for (int i = nd - 1; i >= 0; i--) {
                    xoff += rem % yt->shape[i] % xt->shape[i] * xt->strides[i];
                    rem /= yt->shape[i];
                }
                bad += Y[e] != X[xoff];
            }
            printf("Tile case %zu, %d thread(s): %lld of %lld values wrong\n", c, threads, (long long)bad,
                   (long long)yt->numel);
            assert_int_equal(bad, 0);
            exec_graph_destroy(g);
        }
    exec_threads_set(2); /* as main sets it */
}

static void test_sum_tile_reshape(void **state)
{
    (void)state;
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    enum { A = 3, B = 5, C = 7 };
    uint32_t x = exec_input(g, "x", EXEC_F32, 3, (int64_t[]){ A, B, C });
    uint32_t s02 = ex_sum(g, x, 2, (int64_t[]){ 0, 2 }, 0);
    uint32_t s1k = ex_sum(g, x, 1, (int64_t[]){ 1 }, 1);
    uint32_t sall = ex_sum(g, x, 0, NULL, 0);
    uint32_t t = ex_tile(g, x, (int64_t[]){ 2, 1, 3 });
    uint32_t r = ex_reshape(g, x, 2, (int64_t[]){ -1, C });
    assert_int_equal(exec_tensor_get(g, s1k)->ndim, 3);
    assert_int_equal(exec_tensor_get(g, r)->shape[0], A * B);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    fill(exec_dataf(g, x), A * B * C, 11);
    run_fwd(g);
    const float *X = exec_dataf(g, x);
    double r02[B] = { 0 }, r1[A * C] = { 0 }, rall[1] = { 0 }, rt[2 * A * B * 3 * C];
    for (int i = 0; i < A; i++)
        for (int j = 0; j < B; j++)
            for (int k = 0; k < C; k++) {
                double v = X[(i * B + j) * C + k];
                r02[j] += v;
                r1[i * C + k] += v;
                rall[0] += v;
            }
    for (int i = 0; i < 2 * A; i++)
        for (int j = 0; j < B; j++)
            for (int k = 0; k < 3 * C; k++)
                rt[(i * B + j) * 3 * C + k] = X[((i % A) * B + j) * C + k % C];
    double d = fmax(fmax(maxdiff(exec_dataf(g, s02), r02, B), maxdiff(exec_dataf(g, s1k), r1, A * C)),
                    fmax(maxdiff(exec_dataf(g, sall), rall, 1), maxdiff(exec_dataf(g, t), rt, 2 * A * B * 3 * C)));
    printf("Sum (axes 0,2 / 1 keep / all), Tile: max diff %.2e\n", d);
    assert_true(d < 1e-4);
    assert_memory_equal(exec_dataf(g, r), X, sizeof(float) * A * B * C);
    exec_graph_destroy(g);
}

/* Sum over a run of axes before the last, the rows summed in place (16
 * columns at a time, in blocks of 64 rows), against the naive sum, over
 * axis 2 and over axes 1-2 of [A, B, C, D]: a memory network's [32, 50, 6,
 * 20] over its sentence axis (past the parallel threshold: the rows split
 * over the threads; a last vector that repeats 12 columns), rows narrower
 * than a vector, exactly one vector, and more than one block of rows with
 * and without a vector's worth of columns left over */
static void test_sum_middle_axes(void **state)
{
    (void)state;
    static const struct {
        int a, b, c, d;
    } cases[] = {
        { 32, 50, 6, 20 }, { 3, 2, 5, 7 }, { 2, 3, 70, 33 }, { 1, 4, 130, 16 }, { 5, 1, 1, 48 }, { 2, 2, 200, 5 },
    };
    for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
        const int A = cases[t].a, B = cases[t].b, C = cases[t].c, D = cases[t].d;
        exec_graph *g;
        assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
        uint32_t x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ A, B, C, D });
        uint32_t s2 = ex_sum(g, x, 1, (int64_t[]){ 2 }, 0);
        uint32_t s12 = ex_sum(g, x, 2, (int64_t[]){ 1, 2 }, 1);
        assert_int_equal(exec_graph_plan(g), EXEC_OK);
        fill(exec_dataf(g, x), A * B * C * D, 13);
        run_fwd(g);
        const float *X = exec_dataf(g, x);
        double *r2 = calloc((size_t)(A * B * D), sizeof *r2), *r12 = calloc((size_t)(A * D), sizeof *r12);
        assert_non_null(r2);
        assert_non_null(r12);
        for (int a = 0; a < A; a++)
            for (int b = 0; b < B; b++)
                for (int c = 0; c < C; c++)
                    for (int d = 0; d < D; d++) {
                        double v = X[((a * B + b) * C + c) * D + d];
                        r2[(a * B + b) * D + d] += v;
                        r12[a * D + d] += v;
                    }
        double d2 = maxdiff(exec_dataf(g, s2), r2, A * B * D), d12 = maxdiff(exec_dataf(g, s12), r12, A * D);
        printf("Sum [%d,%d,%d,%d] over axis 2: max diff %.2e; over axes 1,2: %.2e\n", A, B, C, D, d2, d12);
        assert_true(d2 < 1e-4 && d12 < 1e-3);
        free(r2);
        free(r12);
        exec_graph_destroy(g);
    }
}

static void test_sparse_xent(void **state)
{
    (void)state;
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    enum { N = 5, C = 11 };
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ N, C });
    uint32_t y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ N });
    uint32_t l = ex_sparse_softmax_xent(g, x, y);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *X = exec_dataf(g, x);
    fill(X, N * C, 13);
    for (int i = 0; i < N; i++)
        exec_datai(g, y)[i] = (i * 7) % C;
    run_fwd(g);
    double ref = 0;
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < C; j++)
            s += exp(X[i * C + j]);
        ref += -(X[i * C + (i * 7) % C] - log(s)) / N;
    }
    double d = fabs(exec_dataf(g, l)[0] - ref);
    printf("SparseSoftmaxCrossEntropyWithLogits: loss %.6f, max diff %.2e\n", ref, d);
    assert_true(d < 1e-5);
    /* a label out of range is an error, not a crash */
    exec_datai(g, y)[2] = C;
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_ERR_ARG);
    exec_graph_destroy(g);
}

int main(void)
{
    exec_threads_set(2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul),
        cmocka_unit_test(test_batch_matmul_small),
        cmocka_unit_test(test_matmul_skinny),
        cmocka_unit_test(test_matmul_per_shape),
        cmocka_unit_test(test_matmul_tiles),
        cmocka_unit_test(test_matmul_packed),
        cmocka_unit_test(test_matmul_packed_shared),
        cmocka_unit_test(test_batch_matmul_rank4),
        cmocka_unit_test(test_bias_add_and_grad),
        cmocka_unit_test(test_sum_tile_reshape),
        cmocka_unit_test(test_tile_paths),
        cmocka_unit_test(test_sum_middle_axes),
        cmocka_unit_test(test_sparse_xent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
