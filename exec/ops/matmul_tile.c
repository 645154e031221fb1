/* matmul_tile.c -- MatMul c[M,N] = a[M,K] op(b) in register tiles of the
 * CPU's widest vectors, for the products of the recurrent and
 * fully-connected workloads (a few dozen to tens of thousands of rows
 * against a weight matrix).
 *
 * a is read in place, plain or transposed (a [K,M]: a weight gradient's
 * activations). Each tile is MR rows by NV vectors of columns, its sums
 * held in registers over a slice of K (TILE_KC), the rows taken TILE_MC at
 * a time: per k, NV loads of b's row and MR broadcasts of a feed NV MR
 * fused multiply-adds. b is read in place (b [K,N]: a panel of the tile's
 * columns, row after row) or, at a partial last block or transposed under
 * many rows of a, copied once per column block into a [K, NV vectors]
 * panel of the thread's scratch. Threads split
 * the column blocks, or the row blocks when there are fewer column blocks
 * than threads. b transposed under at most TILE_TR_MAX_M rows of a (an
 * output projection [V, U] of a batch): c^T = b a^T instead, b's rows as
 * the tiles' rows read in place, a^T the (small) panel, each tile stored
 * transposed.
 *
 * One set per instruction set, chosen from the CPU's features at run time:
 * AVX-512 (16 floats a vector, 8 rows x 3 vectors: 24 of its 32 registers
 * hold sums, and 8 x 2 for a block of two vectors: 3 measured 12-15%
 * faster than 2 on DQN's fc4, 32 x 512 x 3136, one thread), AVX2 (8
 * floats, 6 rows x 2 vectors: 12 of 16). Whether the tiles beat the BLAS's
 * sgemm is measured once per process (matmul_tile_init): the same product
 * both ways on one thread; the tiles are used only where they were faster
 * (an OpenBLAS whose kernels know the CPU, or a CPU whose vectors the
 * BLAS's kernel does not use, decide differently). MatMul's general path
 * (exec_matmul_tiled) measures both again for each shape it meets and
 * keeps the faster for it (exec_matmul_choice). */
#include "../internal.h"

#include <cblas.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* TILE_KC: the slice of K one pass of tiles covers (its panel, 512 x 32
 * floats, and a row block's 512 x 8 of a: 80 KiB, within any x86-64 core's
 * L2); TILE_MC: the rows of a one pass covers (their slice of K, 512 KiB,
 * stays in L2 while every column panel passes over it) */
enum { TILE_KC = 512, TILE_MC = 256, TILE_TR_MAX_M = 256 };
/* the probe's product (matmul_tile_init): a batch of 32 against an LSTM's gate weights */
enum { MM_PROBE_M = 32, MM_PROBE_N = 512, MM_PROBE_K = 256 };

/* the widest set's block of columns (AVX-512: 3 x 16), which bounds every set's */
enum { WS_BW = 48 };
/* the panels of a packed b (exec_matmul_pack): every set's block width
 * divides it (AVX-512 48, AVX2 16), so one packing serves any set */
enum { PACK_W = 48 };

typedef void (*tile_fn)(float *restrict c, const float *restrict a, const float *restrict p, int64_t mr, int64_t K,
                        int64_t ai, int64_t aq, int64_t ldp, int64_t rs, int64_t cs, int64_t w, int acc, int pf);

/* pf: the first row block over a slice of b prefetches p's rows
 * TILE_PF_ROWS ahead; the row blocks after it find the slice in the
 * core's cache. A block's rows are a few cache lines each, half a page
 * or more apart where b is read in place, 192 bytes apart in a panel:
 * from memory the hardware's prefetchers fell behind on both. AVX-512
 * Xeon VM, 2 threads: DQN's fc4 forward from its packed weights out of
 * cache (bench_kernels, 32 x 512 x 3136, two alternating runs each) at
 * 0.45-0.46 of the peak sgemm before, 0.54-0.56 after (16 rows ahead;
 * 8 and 32 were slower); whole steps against the build before
 * (bench_ab.sh, 4 alternating rounds, new/old): deepq's inference 0.967
 * and training 0.978, seq2seq's inference 0.941, the Transformer's 0.963,
 * speech's 0.984, residual's training 0.979. Every row block prefetching
 * cost speech's inference 4% (3200 rows: 400 blocks over a slice in L2). */
enum { TILE_PF_ROWS = 16 };

/* A tile's ROWS rows over K (MR, unrolled, or a partial block's mr; PF:
 * with b's rows prefetched, a constant) */
#define TILE_ROWS(VEC, VW, ROWS, NV, PF)                                                                           \
    for (int64_t q = 0; q < K; q++) {                                                                              \
        VEC b[NV];                                                                                                 \
        if (PF)                                                                                                    \
            _Pragma("GCC unroll 4") for (int v = 0; v < (NV); v++)                                                 \
                __builtin_prefetch(p + (q + TILE_PF_ROWS) * ldp + v * (VW));                                       \
        _Pragma("GCC unroll 4") for (int v = 0; v < (NV); v++) memcpy(&b[v], p + q * ldp + v * (VW), sizeof b[v]); \
        _Pragma("GCC unroll 8") for (int i = 0; i < (ROWS); i++)                                                   \
        {                                                                                                          \
            float x = a[i * ai + q * aq];                                                                          \
            _Pragma("GCC unroll 4") for (int v = 0; v < (NV); v++) s[v][i] += x * b[v];                            \
        }                                                                                                          \
    }

/* One tile: c[mr, w] = a[mr, K] p[K, 0:w] (acc: c +=), mr <= MR, w <= NV VW
 * (columns past w are computed from p's padding and not stored); c's
 * element (i, l) at c[i rs + l cs]. NV vectors of columns: per k, NV loads
 * of p's row and MR broadcasts of a feed NV MR fused multiply-adds. */
#define TILE_DEFINE(NAME, VEC, TARGET, VW, MR, NV)                                                                     \
    __attribute__((target(TARGET))) static void NAME(                                                                  \
        float *restrict c, const float *restrict a, const float *restrict p, int64_t mr, int64_t K, int64_t ai,        \
        int64_t aq, int64_t ldp, int64_t rs, int64_t cs, int64_t w, int acc, int pf)                                   \
    {                                                                                                                  \
        VEC s[NV][MR];                                                                                                 \
        _Pragma("GCC unroll 4") for (int v = 0; v < (NV); v++) _Pragma("GCC unroll 8") for (int i = 0; i < (MR); i++)  \
            s[v][i] = (VEC){ 0 };                                                                                      \
        if (mr == (MR) && pf) {                                                                                        \
            TILE_ROWS(VEC, VW, MR, NV, 1)                                                                              \
        } else if (mr == (MR)) {                                                                                       \
            TILE_ROWS(VEC, VW, MR, NV, 0)                                                                              \
        } else {                                                                                                       \
            TILE_ROWS(VEC, VW, mr, NV, 0)                                                                              \
        }                                                                                                              \
        /* i < MR as well: mr <= MR, which the compiler cannot see (at -O3 it                                        \
         * warned of s[0][MR] when NV is 1) */ \
        if (w == (NV) * (VW) && cs == 1) { /* whole vectors, in place */                                               \
            for (int i = 0; i < mr && i < (MR); i++) {                                                                 \
                float *ci = c + i * rs;                                                                                \
                _Pragma("GCC unroll 4") for (int v = 0; v < (NV); v++)                                                 \
                {                                                                                                      \
                    VEC cv;                                                                                            \
                    if (acc) {                                                                                         \
                        memcpy(&cv, ci + v * (VW), sizeof cv);                                                         \
                        s[v][i] += cv;                                                                                 \
                    }                                                                                                  \
                    memcpy(ci + v * (VW), &s[v][i], sizeof cv);                                                        \
                }                                                                                                      \
            }                                                                                                          \
            return;                                                                                                    \
        }                                                                                                              \
        for (int i = 0; i < mr && i < (MR); i++) {                                                                     \
            float t[(NV) * (VW)], *ci = c + i * rs;                                                                    \
            for (int v = 0; v < (NV); v++)                                                                             \
                memcpy(t + v * (VW), &s[v][i], sizeof s[v][i]);                                                        \
            if (cs != 1)                                                                                               \
                for (int64_t l = 0; l < w; l++)                                                                        \
                    ci[l * cs] = acc ? ci[l * cs] + t[l] : t[l];                                                       \
            else if (acc)                                                                                              \
                for (int64_t l = 0; l < w; l++)                                                                        \
                    ci[l] += t[l];                                                                                     \
            else                                                                                                       \
                memcpy(ci, t, (size_t)w * sizeof *t);                                                                  \
        }                                                                                                              \
    }

#if defined(__x86_64__)
typedef float vec16 __attribute__((vector_size(16 * sizeof(float))));
typedef float vec8 __attribute__((vector_size(8 * sizeof(float))));
TILE_DEFINE(tile_avx512, vec16, "avx512f,avx2,fma", 16, 8, 3)
TILE_DEFINE(tile_avx512_2, vec16, "avx512f,avx2,fma", 16, 8, 2)
TILE_DEFINE(tile_avx512_1, vec16, "avx512f,avx2,fma", 16, 8, 1)
TILE_DEFINE(tile_avx2, vec8, "avx2,fma", 8, 6, 2)
#endif

/* A set: tiles of mr rows x nv vectors of vw columns (fn), of 2 vectors
 * (fn2: a block of 2 vw columns or fewer, where nv > 2) and of one (fn1: a
 * block of vw columns or fewer: the last few columns of ResNet-50's 14x14
 * maps, 196 = 4 x 48 + 4, which a 2-vector tile computed 32 wide) */
typedef struct tile_set {
    tile_fn fn, fn2, fn1;
    int vw, mr, nv;
} tile_set;

/* the columns of the set's blocks */
static int64_t tile_cols(const tile_set *s) { return s->nv * s->vw; }

/* the tile for a block of w columns */
static tile_fn tile_for(const tile_set *s, int64_t w) { return w <= s->vw ? s->fn1 : w <= 2 * s->vw ? s->fn2 : s->fn; }

/* The set's blocks for N columns: nv vectors where the last block is whole
 * or exactly two vectors (read in place), or where two-vector blocks would
 * also leave a partial one (a panel either way); two-vector blocks
 * otherwise (N = 64 or 128 on AVX-512: in place, no panel) */
static tile_set blocks_for(tile_set s, int64_t N)
{
    const int64_t b2 = 2 * s.vw, r = N % tile_cols(&s);
    if (s.nv > 2 && r != 0 && r != b2 && N % b2 == 0)
        s.fn = s.fn2, s.nv = 2;
    return s;
}

static struct {
    pthread_once_t once;
    tile_set set;       /* fn NULL: no vector set on this CPU */
    double tile_gflops; /* one thread, at the probe's shape */
    double blas_gflops;
    double fork_ns; /* entering and leaving a parallel region of the team */
    int chosen;     /* the tiles measured faster than sgemm */
} T = { .once = PTHREAD_ONCE_INIT };
static _Atomic int g_force = -1; /* exec_matmul_tiles_force */

/* Thread t of n's share of c[M,N] = a[M,K] op(b) with the set s: its
 * column blocks (or row blocks when there are fewer column blocks than
 * threads); panel: K x 2 vw floats of its own. */
static void tiled_part(const tile_set *s, int t, int n, float *c, int64_t ldc, const float *a, int64_t ai, int64_t aq,
                       const float *b, int64_t ldb, int64_t M, int64_t N, int64_t K, int tb, int beta, float *panel,
                       bool packed)
{
    const int64_t bw = tile_cols(s), nb = (N + bw - 1) / bw, mb = (M + s->mr - 1) / s->mr;
    const bool by_cols = nb >= 2 * n || mb < n;
    /* this thread's columns [c0, c1) and row blocks [i0, i1): the columns
     * in whole blocks of bw (the last may be partial: a panel copy), or,
     * with b packed (its panels zero-padded: no copy), in whole vectors,
     * blocks of bw from c0 that stay inside a panel, narrower where a
     * share ends inside one: 512 columns in blocks of 48 split 256 + 256,
     * not 240 + 272 */
    int64_t c0 = 0, c1 = N, i0 = 0, i1 = mb;
    if (by_cols) {
        const int64_t unit = packed ? s->vw : bw, nu = (N + unit - 1) / unit;
        c0 = nu * t / n * unit, c1 = nu * (t + 1) / n * unit;
        c1 = c1 < N ? c1 : N;
    } else {
        i0 = mb * t / n, i1 = mb * (t + 1) / n;
    }
    for (int64_t col = c0, w; col < c1; col += w) {
        w = c1 - col < bw ? c1 - col : bw;
        if (packed && w > PACK_W - col % PACK_W)
            w = PACK_W - col % PACK_W;
        const float *p = b + col;
        int64_t ldp = ldb;
        if (packed) { /* b in PACK_W-column panels (exec_matmul_pack): this block's columns within one */
            p = b + (col / PACK_W) * K * PACK_W + col % PACK_W, ldp = PACK_W;
        } else if (tb) { /* the panel: b's rows [col, col + w) as its columns, read along K, zero-padded */
            for (int64_t l = 0; l < w; l++) {
                const float *src = b + (col + l) * ldb;
                for (int64_t q = 0; q < K; q++)
                    panel[q * bw + l] = src[q];
            }
            for (int64_t q = 0; w < bw && q < K; q++)
                memset(panel + q * bw + w, 0, (size_t)(bw - w) * sizeof *panel);
            p = panel, ldp = bw;
        } else if (w < bw && w != 2 * s->vw) { /* the last, partial block: its columns zero-padded (two
                                                  * whole vectors: read in place by fn2) */
            for (int64_t q = 0; q < K; q++) {
                memcpy(panel + q * bw, b + q * ldb + col, (size_t)w * sizeof *panel);
                memset(panel + q * bw + w, 0, (size_t)(bw - w) * sizeof *panel);
            }
            p = panel, ldp = bw;
        }
        const tile_fn fn = tile_for(s, w);
        /* K in slices: a slice of the panel stays in the core's cache
         * while every row block passes over it */
        for (int64_t k0 = 0; k0 < K; k0 += TILE_KC) {
            const int64_t kl = K - k0 < TILE_KC ? K - k0 : TILE_KC;
            for (int64_t ib = i0; ib < i1; ib++) {
                const int64_t row = ib * s->mr, mr = M - row < s->mr ? M - row : s->mr;
                fn(c + row * ldc + col, a + row * ai + k0 * aq, p + k0 * ldp, mr, kl, ai, aq, ldp, ldc, 1, w,
                   k0 > 0 || beta, ib == i0);
            }
        }
    }
}

/* c[M,N] = a[M,K] op(b) on `nt` threads with the set s; scratch holds nt
 * panels of K x 2 vw floats. One thread: no parallel region (entering one,
 * even for a team of one, costs a quarter of a microsecond). */
static void tiled(const tile_set *s, int nt, float *c, int64_t ldc, const float *a, int64_t ai, int64_t aq,
                  const float *b, int64_t ldb, int64_t M, int64_t N, int64_t K, int tb, int beta, float *scratch,
                  bool packed)
{
    if (nt <= 1) {
        tiled_part(s, 0, 1, c, ldc, a, ai, aq, b, ldb, M, N, K, tb, beta, scratch, packed);
        return;
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num();
        tiled_part(s, t, omp_get_num_threads(), c, ldc, a, ai, aq, b, ldb, M, N, K, tb, beta,
                   scratch ? scratch + (size_t)t * (size_t)K * (size_t)tile_cols(s) : NULL, packed);
    }
}

/* b transposed and a of few rows: c^T[N,M] = b[N,K] a^T[K,M], b's rows as
 * the tiles' rows (read in place, each once per block of 2 vw of a's rows)
 * against a^T, copied once into the panel at (K x Mp floats, Mp: M rounded
 * up to 2 vw, zero-padded); each tile stored transposed into c. Thread t
 * of n takes its share of b's row blocks. */
static void tiled_tr_part(const tile_set *s, int t, int n, float *c, int64_t ldc, const float *b, int64_t ldb,
                          int64_t M, int64_t N, int64_t K, int beta, const float *at, int64_t Mp)
{
    const int64_t bw = tile_cols(s), nb = (N + s->mr - 1) / s->mr;
    const int64_t r0 = nb * t / n, r1 = nb * (t + 1) / n;
    for (int64_t m0 = 0; m0 < M; m0 += bw) {
        const int64_t w = M - m0 < bw ? M - m0 : bw;
        const tile_fn fn = tile_for(s, w);
        for (int64_t k0 = 0; k0 < K; k0 += TILE_KC) {
            const int64_t kl = K - k0 < TILE_KC ? K - k0 : TILE_KC;
            for (int64_t rb = r0; rb < r1; rb++) {
                const int64_t row = rb * s->mr, mr = N - row < s->mr ? N - row : s->mr;
                fn(c + m0 * ldc + row, b + row * ldb + k0, at + k0 * Mp + m0, mr, kl, ldb, 1, Mp, 1, ldc, w,
                   k0 > 0 || beta, 0); /* the small panel stays in cache; b's rows stream */
            }
        }
    }
}

static void tiled_tr(const tile_set *s, int nt, float *c, int64_t ldc, const float *a, int64_t lda, int ta,
                     const float *b, int64_t ldb, int64_t M, int64_t N, int64_t K, int beta, float *at)
{
    const int64_t bw = tile_cols(s), Mp = (M + bw - 1) / bw * bw;
    /* at[K, Mp] = a^T, its columns past M zero. a [K, M] (ta): rows copied.
     * a [M, K]: 16 columns of a (a cache line of each row) at a time, so
     * the reads run along a's rows and the 16 rows of at written stay in
     * cache; a column at a time read one float a cache line (vgg
     * training: 4.5% of its samples, one thread) */
    for (int64_t q = 0; q < K; q++) {
        float *r = at + q * Mp;
        if (ta)
            memcpy(r, a + q * lda, (size_t)M * sizeof *r);
        memset(r + M, 0, (size_t)(Mp - M) * sizeof *r);
    }
    for (int64_t q0 = 0; !ta && q0 < K; q0 += 16) {
        const int64_t q1 = K - q0 < 16 ? K : q0 + 16;
        for (int64_t i = 0; i < M; i++)
            for (int64_t q = q0; q < q1; q++)
                at[q * Mp + i] = a[i * lda + q];
    }
    if (nt <= 1) {
        tiled_tr_part(s, 0, 1, c, ldc, b, ldb, M, N, K, beta, at, Mp);
        return;
    }
#pragma omp parallel num_threads(nt)
    tiled_tr_part(s, omp_get_thread_num(), omp_get_num_threads(), c, ldc, b, ldb, M, N, K, beta, at, Mp);
}

static tile_set set_of(exec_simd s)
{
#if defined(__x86_64__)
    if (s == EXEC_SIMD_AVX512)
        return (tile_set){ tile_avx512, tile_avx512_2, tile_avx512_1, 16, 8, 3 };
    if (s == EXEC_SIMD_AVX2)
        return (tile_set){ tile_avx2, tile_avx2, tile_avx2, 8, 6, 2 };
#else
    (void)s;
#endif
    return (tile_set){ NULL, NULL, NULL, 0, 0, 0 };
}

static _Atomic int g_force_simd = EXEC_SIMD_AUTO;

/* The least of r timings of f on the calling thread's CPU clock: the probe
 * runs on one thread while other processes may hold the cores, and its CPU
 * time leaves out the time they held it. */
#define LEAST_NS(r, out, ...)                               \
    do {                                                    \
        (out) = 1e30;                                       \
        for (int rep_ = 0; rep_ < (r); rep_++) {            \
            double t0_ = (double)base_thread_cpu_ns();      \
            __VA_ARGS__;                                    \
            double d_ = (double)base_thread_cpu_ns() - t0_; \
            if (d_ < (out))                                 \
                (out) = d_;                                 \
        }                                                   \
    } while (0)

/* Measures, once per process: the tiles against sgemm on one thread at a
 * recurrent cell's shape (32 x 256 x 512: a batch of 32 against an LSTM's
 * gate weights). */
static void matmul_tile_init(void)
{
    T.set = set_of(exec_simd_best());
    const int64_t M = MM_PROBE_M, N = MM_PROBE_N, K = MM_PROBE_K;
    /* plain malloc: a probe's buffer, freed at once, stays out of the
     * engine's byte accounting and its injected failures */
    float *a = malloc((size_t)(M * K + K * N + M * N + K * WS_BW) * sizeof *a);
    if (!a)
        return;
    float *b = a + M * K, *c = b + K * N, *scratch = c + M * N;
    for (int64_t i = 0; i < M * K + K * N; i++)
        a[i] = (float)(i % 13) * 0.125f - 0.75f;
    const double flop = 2.0 * (double)(M * N * K);
    double blas_ns, tile_ns = 1e30;
    /* sgemm on one thread: OpenBLAS's OpenMP build takes the calling
     * thread's OpenMP thread count */
    const int was = omp_get_max_threads();
    omp_set_num_threads(1);
    LEAST_NS(15, blas_ns,
             cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)M, (int)N, (int)K, 1.0f, a, (int)K, b, (int)N,
                         0.0f, c, (int)N));
    omp_set_num_threads(was);
    if (T.set.fn) {
        const tile_set ps = blocks_for(T.set, N);
        LEAST_NS(15, tile_ns, tiled(&ps, 1, c, N, a, K, 1, b, N, M, N, K, 0, 0, scratch, false));
    }
    free(a);
    T.blas_gflops = flop / blas_ns;
    T.tile_gflops = T.set.fn ? flop / tile_ns : 0.0;
    T.fork_ns = exec_fork_ns();
    /* a clear margin: a near tie goes to the BLAS, whose blocking also
     * covers shapes the probe does not */
    T.chosen = T.set.fn && tile_ns < 0.85 * blas_ns;
}

void exec_matmul_tiles_force(int mode, exec_simd s)
{
    exec_simd best = exec_simd_best();
    atomic_store(&g_force_simd, (int)(s == EXEC_SIMD_AUTO || s > best ? best : s));
    atomic_store(&g_force, mode < 0 ? -1 : mode > 0);
}

int exec_matmul_tiles_probe(double *tile_gflops, double *blas_gflops)
{
    pthread_once(&T.once, matmul_tile_init);
    if (tile_gflops)
        *tile_gflops = T.tile_gflops;
    if (blas_gflops)
        *blas_gflops = T.blas_gflops;
    return T.chosen;
}

/* The set the tiles run with now (exec_matmul_tiles_force's, else the
 * CPU's best); fn NULL where the probe (or the force) chose the BLAS. */
static tile_set active_set(void)
{
    pthread_once(&T.once, matmul_tile_init);
    const int force = atomic_load_explicit(&g_force, memory_order_relaxed);
    const tile_set set = force > 0 ? set_of((exec_simd)atomic_load(&g_force_simd)) : T.set;
    return set.fn && (force < 0 ? T.chosen : force) ? set : (tile_set){ NULL, NULL, NULL, 0, 0, 0 };
}

/* threads for an M x N x K product: nthreads where one thread's estimated
 * time is well past a parallel region's cost, else 1 */
static int team_for(int nthreads, int64_t M, int64_t N, int64_t K)
{
    const double est_ns = 2.0 * (double)M * (double)N * (double)K / (T.tile_gflops > 0 ? T.tile_gflops : 1.0);
    return nthreads > 1 && est_ns >= 8.0 * T.fork_ns ? nthreads : 1;
}

/* c[M,N] = a op(b) (beta 1: c +=) with the tiles; false where the probe
 * (or exec_matmul_tiles_force) chose the BLAS or the shape does not suit
 * them. nthreads > 1 opens a parallel region: inside one, pass 1. Scratch
 * from k when given, else from the allocation wrapper for the call (its
 * failure, injected or real, leaves the product to the BLAS). */
static bool gemm_tiled_with(tile_set any, exec_kctx *k, float *ws, int nthreads, int ta, int tb, int64_t M, int64_t N,
                            int64_t K, const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c,
                            int64_t ldc)
{
    if (M < 1 || N < 1 || K < 1 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX || (beta != 0.0f && beta != 1.0f))
        return false;
    if (!any.fn)
        return false;
    if (N < any.vw) /* a few columns: most of every tile's lanes would be padding (the BLAS's gemv is better) */
        return false;
    /* a^T in one shared panel (a few rows, copied once), each tile stored transposed: where K is at least
     * M, those scalar stores (M N) cost no more than copying b transposed into panels (N K) */
    const bool tr = tb && M <= TILE_TR_MAX_M && K >= M;
    /* the blocks of the tiles' columns: c's (a's rows, transposed) */
    const tile_set set = blocks_for(any, tr ? M : N);
    const int64_t bw = tile_cols(&set), tail = N % bw;
    const int acc = beta != 0.0f;
    const int nt = team_for(ws ? 1 : nthreads, M, N, K);
    const size_t bytes = tr ? (size_t)K * (size_t)((M + bw - 1) / bw * bw) * sizeof(float)
                            : (size_t)nt * (size_t)K * (size_t)bw * sizeof(float);
    /* b read in place in whole blocks (a last one of two whole vectors
     * too) needs no panel: no scratch (a call per image inside a parallel
     * region would otherwise allocate each time) */
    const bool panels = tb || (tail != 0 && tail != 2 * set.vw);
    float *scratch = !panels ? NULL : ws ? ws : k ? exec_kscratch(k, bytes) : base_malloc_aligned(bytes);
    if (panels && !scratch)
        return false; /* sgemm needs no scratch */
    if (tr)
        tiled_tr(&set, nt, c, ldc, a, lda, ta, b, ldb, M, N, K, acc, scratch);
    else
        for (int64_t m0 = 0; m0 < M; m0 += TILE_MC)
            tiled(&set, nt, c + m0 * ldc, ldc, ta ? a + m0 : a + m0 * lda, ta ? 1 : lda, ta ? lda : 1, b, ldb,
                  M - m0 < TILE_MC ? M - m0 : TILE_MC, N, K, tb, acc, scratch, false);
    if (!k && !ws && scratch)
        base_free_aligned(scratch);
    return true;
}

static bool gemm_tiled(exec_kctx *k, float *ws, int nthreads, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    return gemm_tiled_with(active_set(), k, ws, nthreads, ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc);
}

/* ---- the tiles or the BLAS, per shape ----------------------------------
 * The probe's one shape (a batch of 32 rows) does not speak for every
 * product: on an AVX-512 Xeon VM the tiles won it (172-195 GFLOP/s against
 * OpenBLAS's SkylakeX sgemm's 110-130, one thread) and were faster for
 * seq2seq's recurrent cells and the Transformer's decoding (a row a
 * sequence), but OpenBLAS was for the Transformer's training products
 * (1024 rows against 256 to 8000 columns: 200-300 GFLOP/s against 300-365
 * at two threads, 130-160 against 340 with a transposed). So MatMul's
 * general path tries both for each shape (M, N, K and the transposes) at
 * its first MM_MEETS calls and keeps the faster for that shape in this
 * process, whatever the thread count (one choice a shape: a run's results
 * do not depend on its threads). A shape being measured by another thread
 * runs as the probe chose. */
enum { MM_SLOTS = 1024, MM_MEETS = EXEC_MATMUL_TRIAL_CALLS };

/* c[M,N] = op(a) op(b) + beta c by the BLAS (OpenBLAS's OpenMP build
 * threads by the calling thread's OpenMP count: one inside a parallel
 * region) */
static void blas_gemm(int ta, int tb, int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b,
                      int64_t ldb, float beta, float *c, int64_t ldc)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (int)M, (int)N, (int)K,
                1.0f, a, (int)lda, b, (int)ldb, beta, c, (int)ldc);
}
enum mm_state { MM_FREE, MM_MEASURING, MM_TILES, MM_BLAS, MM_TRYING };
typedef struct mm_choice {
    int64_t M, N, K;
    int ta, tb;
    enum mm_state state; /* MM_TRYING: between two of its first calls */
    int meets;           /* calls tried so far */
    double least[2];     /* the least run so far: the tiles, the BLAS */
} mm_choice;
static mm_choice g_mm[MM_SLOTS];
static pthread_mutex_t g_mm_lock = PTHREAD_MUTEX_INITIALIZER;

/* The slot of a shape and its state into *state. A shape not there yet
 * goes in a free slot with claim, else NULL (NULL too where the table is
 * full). With claim, a new shape's slot or one being tried is claimed
 * (MM_MEASURING from now) and *state is MM_FREE: the caller tries it. */
static mm_choice *mm_find(int64_t M, int64_t N, int64_t K, int ta, int tb, int claim, int *state)
{
    uint64_t h = (uint64_t)M * 0x9e3779b97f4a7c15u ^ (uint64_t)N * 0xc2b2ae3d27d4eb4fu ^
                 (uint64_t)K * 0x165667b19e3779f9u ^ (uint64_t)(ta * 2 + tb);
    mm_choice *got = NULL;
    *state = MM_FREE;
    pthread_mutex_lock(&g_mm_lock);
    for (int i = 0; i < MM_SLOTS; i++) {
        mm_choice *s = &g_mm[(h + (uint64_t)i) % MM_SLOTS];
        if (s->state == MM_FREE) {
            if (claim)
                *s = (mm_choice){ M, N, K, ta, tb, MM_MEASURING, 0, { 1e30, 1e30 } }, got = s;
            break;
        }
        if (s->M == M && s->N == N && s->K == K && s->ta == ta && s->tb == tb) {
            got = s;
            if (claim && s->state == MM_TRYING)
                s->state = MM_MEASURING;
            else
                *state = (int)s->state;
            break;
        }
    }
    pthread_mutex_unlock(&g_mm_lock);
    return got;
}

int exec_matmul_choice(int64_t M, int64_t N, int64_t K, int ta, int tb)
{
    int state;
    mm_find(M, N, K, ta, tb, 0, &state);
    return state == MM_TILES ? 1 : state == MM_BLAS ? 2 : 0;
}

static void mm_set(mm_choice *s, enum mm_state state)
{
    pthread_mutex_lock(&g_mm_lock);
    s->state = state;
    pthread_mutex_unlock(&g_mm_lock);
}

/* One call of a shape's trial: the tiles and the BLAS once each, each
 * writing the whole of c, the one ahead so far last (its product stays in
 * c). Each keeps its least run over the calls; the MM_MEETS-th call keeps
 * the faster for the shape. A run is timed by the thread's CPU clock on
 * one thread (the time other processes held the core left out), else by
 * the wall clock. The first calls of a shape come at different moments
 * (a later op of the step, the next step), so one busy moment cannot
 * decide: tried inside one call, four runs by the wall clock, deepq's
 * training in two processes of one machine ran its products 9.4% and 3.4%
 * of the time in the tiles (bench_portable.sh, perf). True where c holds
 * the product; false where the BLAS won and the caller's runs it. */
static bool mm_trial(exec_kctx *k, mm_choice *slot, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *a,
                     int64_t lda, const float *b, int64_t ldb, float *c)
{
    const bool one = k->nthreads == 1;
    /* 0 the tiles, 1 the BLAS: the one ahead so far runs last; at the
     * first call the BLAS, so that a shape the tiles do not take is the
     * BLAS's at once */
    const int last = slot->meets == 0 || slot->least[1] < slot->least[0];
    const int was = omp_get_max_threads();
    omp_set_num_threads(k->nthreads); /* the BLAS's threads, as the tiles' */
    for (int i = 0; i < 2; i++) {
        const int who = i == 0 ? !last : last;
        const uint64_t t0 = one ? base_thread_cpu_ns() : base_now_ns();
        if (who == 0 && !gemm_tiled_with(T.set, k, NULL, k->nthreads, ta, tb, M, N, K, a, lda, b, ldb, 0.0f, c, N)) {
            omp_set_num_threads(was);
            mm_set(slot, MM_BLAS);
            return i == 1; /* the BLAS ran first: c holds its product */
        }
        if (who == 1)
            blas_gemm(ta, tb, M, N, K, a, lda, b, ldb, 0.0f, c, N);
        const double t = (double)((one ? base_thread_cpu_ns() : base_now_ns()) - t0);
        slot->least[who] = t < slot->least[who] ? t : slot->least[who];
    }
    omp_set_num_threads(was);
    if (++slot->meets < MM_MEETS) {
        mm_set(slot, MM_TRYING);
        return true;
    }
    const bool tiles = slot->least[0] < slot->least[1];
    mm_set(slot, tiles ? MM_TILES : MM_BLAS);
    if (tiles && last == 1) /* the BLAS's product in c, the tiles kept */
        gemm_tiled_with(T.set, k, NULL, k->nthreads, ta, tb, M, N, K, a, lda, b, ldb, 0.0f, c, N);
    return tiles || last == 1;
}

bool exec_matmul_tiled(exec_kctx *k, float *c, const float *a, const float *b, int64_t M, int64_t N, int64_t K, int ta,
                       int tb)
{
    const int64_t lda = ta ? M : K, ldb = tb ? K : N;
    pthread_once(&T.once, matmul_tile_init);
    /* the probe's verdict for products no larger than its own (32 x 512 x
     * 256: tens of microseconds, where the measurement's own runs and its
     * noise outweigh a choice) */
    if (atomic_load_explicit(&g_force, memory_order_relaxed) >= 0 || !T.set.fn ||
        (double)M * (double)N * (double)K <= (double)(MM_PROBE_M * MM_PROBE_N * MM_PROBE_K))
        return gemm_tiled(k, NULL, k->nthreads, ta, tb, M, N, K, a, lda, b, ldb, 0.0f, c, N);
    int state;
    mm_choice *slot = mm_find(M, N, K, ta, tb, 1, &state);
    if (state == MM_TILES || state == MM_BLAS)
        return state == MM_TILES &&
               gemm_tiled_with(T.set, k, NULL, k->nthreads, ta, tb, M, N, K, a, lda, b, ldb, 0.0f, c, N);
    if (!slot || state != MM_FREE) /* the table full, or another thread trying it */
        return gemm_tiled(k, NULL, k->nthreads, ta, tb, M, N, K, a, lda, b, ldb, 0.0f, c, N);
    return mm_trial(k, slot, ta, tb, M, N, K, a, lda, b, ldb, c);
}

/* the tiles, else sgemm (OpenBLAS's OpenMP build threads by the calling
 * thread's OpenMP count: one inside a parallel region) */
static void gemm_any(exec_kctx *k, float *ws, int nthreads, int ta, int tb, int64_t M, int64_t N, int64_t K,
                     const float *a, int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    if (!gemm_tiled(k, ws, nthreads, ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc))
        blas_gemm(ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc);
}

void exec_gemm(exec_kctx *k, int nthreads, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *a, int64_t lda,
               const float *b, int64_t ldb, float beta, float *c, int64_t ldc)
{
    gemm_any(k, NULL, nthreads, ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc);
}

int64_t exec_gemm1_scratch(int tb, int64_t M, int64_t K)
{
    const int64_t mp = (M + WS_BW - 1) / WS_BW * WS_BW;
    return K * (tb && M <= TILE_TR_MAX_M && mp > WS_BW ? mp : WS_BW);
}

void exec_gemm1(float *ws, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *a, int64_t lda, const float *b,
                int64_t ldb, float beta, float *c, int64_t ldc)
{
    gemm_any(NULL, ws, 1, ta, tb, M, N, K, a, lda, b, ldb, beta, c, ldc);
}

/* ---- b packed once, for a weight that stays unchanged ------------------- */

/* the set the packed product runs with now; fn NULL where the BLAS does */
static tile_set packed_set(int64_t N)
{
    const tile_set set = active_set();
    if (!set.fn || N < set.vw || PACK_W % tile_cols(&set) != 0)
        return (tile_set){ NULL, NULL, NULL, 0, 0, 0 };
    return set;
}

/* the panels and WS_BW floats past them: a block of two vectors that
 * starts inside a panel (where a thread's share begins) reads past its end */
int64_t exec_matmul_packed_floats(int64_t K, int64_t N)
{
    return packed_set(N).fn ? (N + PACK_W - 1) / PACK_W * PACK_W * K + WS_BW : 0;
}

void exec_matmul_pack(float *bp, const float *b, int64_t K, int64_t N, int nthreads)
{
    const int64_t np = (N + PACK_W - 1) / PACK_W;
#pragma omp parallel for collapse(2) num_threads(nthreads) if (nthreads > 1 && K * N > (1 << 16)) schedule(static)
    for (int64_t j = 0; j < np; j++)
        for (int64_t q = 0; q < K; q++) {
            const int64_t col = j * PACK_W, w = N - col < PACK_W ? N - col : PACK_W;
            float *d = bp + (j * K + q) * PACK_W;
            memcpy(d, b + q * N + col, (size_t)w * sizeof *d);
            for (int64_t l = w; l < PACK_W; l++)
                d[l] = 0.0f;
        }
    memset(bp + np * K * PACK_W, 0, WS_BW * sizeof *bp);
}

bool exec_matmul_tiled_packed(exec_kctx *k, float *c, const float *a, const float *bp, int64_t M, int64_t N, int64_t K)
{
    if (M < 1 || N < 1 || K < 1 || M > INT32_MAX || N > INT32_MAX || K > INT32_MAX)
        return false;
    const tile_set set = packed_set(N);
    if (!set.fn)
        return false;
    const int nt = team_for(k->nthreads, M, N, K);
    for (int64_t m0 = 0; m0 < M; m0 += TILE_MC)
        tiled(&set, nt, c + m0 * N, N, a + m0 * K, K, 1, bp, PACK_W, M - m0 < TILE_MC ? M - m0 : TILE_MC, N, K, 0, 0,
              NULL, true);
    return true;
}
