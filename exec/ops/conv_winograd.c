/* conv_winograd.c -- 3x3 stride-1 convolutions and both their gradients by
 * Winograd's minimal filtering F(4x4, 3x3) (Lavin and Gray, "Fast
 * Algorithms for Convolutional Neural Networks", 2016).
 *
 * A 6x6 input tile d and a 3x3 filter g give a 4x4 output tile
 *     y = A^T [ (G g G^T) (.) (B^T d B) ] A          ((.): elementwise)
 * with 36 multiplications instead of 144. Summed over input channels, the
 * elementwise product becomes, for each of the 36 tile positions xi, one
 * GEMM:  M[xi] [OC, T] = U[xi] [OC, C] x V[xi] [C, T]  over T tiles, where
 * U = G g G^T is the transformed filter and V = B^T d B the transformed
 * input. A 3x3 convolution thus runs 2.25 multiply-adds per output and
 * channel pair where direct and im2col run 9, at the price of the
 * transforms (additions, O(C + OC) per tile) and a larger rounding error:
 * the interpolation points 0, +-1, +-2 and infinity scale values by up to 8
 * before they cancel, so results differ from the direct sum by a few units
 * of 1e-6 relative to the sum of |terms| (the tests allow 1e-4).
 *
 *   forward          y  = Winograd(x, w)
 *   input gradient   dx = Winograd(dy padded by 2 - pad, w flipped with its
 *                    channels swapped): the forward of the transposed
 *                    geometry (conv_direct_transposed)
 *   filter gradient  F(3x3, 4x4), the same identity read the other way:
 *                    dw = G^T [ sum over tiles (A dy A^T) (.) (B^T x B) ] G
 *                    per 4x4 tile of dy and the 6x6 input tile under it;
 *                    the sum over tiles is, per xi, the GEMM
 *                    S[xi] [OC, C] += DY[xi] [OC, T] x X[xi]^T [T, C].
 *
 * Threads take chunks of TC tiles (across images): each transforms its
 * chunk's inputs into its own V, runs the 36 GEMMs single-threaded (OpenBLAS
 * runs one thread inside a parallel region) and transforms the results out.
 * TC is chosen so that a chunk's V and M stay within about 1 MB, but at
 * least 128 tiles: OpenBLAS packs U again for every GEMM, a cost of about
 * 1/TC of the GEMM's (14x14 maps of 256 channels ran 1.3x faster with 128
 * tiles than with 32). The filter
 * gradient keeps one S per thread and sums them at the end.
 *
 * The transforms (conv_wino_kern.h) run on vectors of 16 (AVX-512), 8
 * (AVX2) or 1 (plain C) tiles or filters, chosen from the CPU at run time
 * (exec_simd_set can narrow it). A chunk is cut where a row of tiles ends;
 * within a row, the six input rows under it are first combined down the
 * columns (B^T d, contiguous loads), then each vector of tiles reads its
 * columns with a stride-4 de-interleave of those rows (in registers) and
 * is combined along them; the output side runs the same steps backwards
 * and writes each output row with a 4-way interleave. */
#include "conv.h"

#include <omp.h>
#include <stdatomic.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define WM 4  /* output tile */
#define WA 6  /* input tile: WM + 3 - 1 */
#define WT 36 /* WA * WA transformed positions */
#define WL 16 /* the widest vector of tiles */

bool conv_wino_applies(const conv_geom *q)
{
    return q->kh == 3 && q->kw == 3 && q->sh == 1 && q->sw == 1 && q->ph <= 2 && q->pw <= 2;
}

/* ---- the 1-D transforms, on any type with arithmetic (a float, a vector);
 *      each 2-D one is a 1-D one down the columns, then along the rows */

/* B^T d: six inputs to six */
#define WINO_BT(o, x0, x1, x2, x3, x4, x5)                                                     \
    do {                                                                                       \
        __typeof__(x0) d0_ = (x0), d1_ = (x1), d2_ = (x2), d3_ = (x3), d4_ = (x4), d5_ = (x5); \
        (o)[0] = 4 * d0_ - 5 * d2_ + d4_;                                                      \
        (o)[1] = -4 * (d1_ + d2_) + d3_ + d4_;                                                 \
        (o)[2] = 4 * (d1_ - d2_) - d3_ + d4_;                                                  \
        (o)[3] = 2 * (d3_ - d1_) - d2_ + d4_;                                                  \
        (o)[4] = 2 * (d1_ - d3_) - d2_ + d4_;                                                  \
        (o)[5] = 4 * d1_ - 5 * d3_ + d5_;                                                      \
    } while (0)

/* G g: three filter taps to six (products with the reciprocals: a
 * division costs ten times a multiplication) */
#define WINO_G(o, x0, x1, x2)                                                                         \
    do {                                                                                              \
        __typeof__(x0) g0_ = (x0), g1_ = (x1), g2_ = (x2), a_ = g0_ * (1.0f / 24) + g2_ * (1.0f / 6), \
                       b_ = g1_ * (1.0f / 12);                                                        \
        (o)[0] = g0_ * 0.25f;                                                                         \
        (o)[1] = -(g0_ + g1_ + g2_) * (1.0f / 6);                                                     \
        (o)[2] = -(g0_ - g1_ + g2_) * (1.0f / 6);                                                     \
        (o)[3] = a_ + b_;                                                                             \
        (o)[4] = a_ - b_;                                                                             \
        (o)[5] = g2_;                                                                                 \
    } while (0)

/* A^T m: six to four outputs */
#define WINO_AT(o, x0, x1, x2, x3, x4, x5)                                                     \
    do {                                                                                       \
        __typeof__(x0) m0_ = (x0), m1_ = (x1), m2_ = (x2), m3_ = (x3), m4_ = (x4), m5_ = (x5); \
        __typeof__(x0) a_ = m1_ + m2_, b_ = m1_ - m2_, c_ = m3_ + m4_, e_ = m3_ - m4_;         \
        (o)[0] = m0_ + a_ + c_;                                                                \
        (o)[1] = b_ + 2 * e_;                                                                  \
        (o)[2] = a_ + 4 * c_;                                                                  \
        (o)[3] = b_ + 8 * e_ + m5_;                                                            \
    } while (0)

/* A y: four output gradients to six (the filter gradient's dy tile) */
#define WINO_A(o, x0, x1, x2, x3)                                      \
    do {                                                               \
        __typeof__(x0) y0_ = (x0), y1_ = (x1), y2_ = (x2), y3_ = (x3); \
        (o)[0] = y0_;                                                  \
        (o)[1] = y0_ + y1_ + y2_ + y3_;                                \
        (o)[2] = y0_ - y1_ + y2_ - y3_;                                \
        (o)[3] = y0_ + 2 * y1_ + 4 * y2_ + 8 * y3_;                    \
        (o)[4] = y0_ - 2 * y1_ + 4 * y2_ - 8 * y3_;                    \
        (o)[5] = y3_;                                                  \
    } while (0)

/* G^T m: six to the three filter taps */
#define WINO_GT(o, x0, x1, x2, x3, x4, x5)                                                     \
    do {                                                                                       \
        __typeof__(x0) m0_ = (x0), m1_ = (x1), m2_ = (x2), m3_ = (x3), m4_ = (x4), m5_ = (x5); \
        (o)[0] = m0_ * 0.25f - (m1_ + m2_) * (1.0f / 6) + (m3_ + m4_) * (1.0f / 24);           \
        (o)[1] = (m2_ - m1_) * (1.0f / 6) + (m3_ - m4_) * (1.0f / 12);                         \
        (o)[2] = (m3_ + m4_ - m1_ - m2_) * (1.0f / 6) + m5_;                                   \
    } while (0)

/* The tiling of an output of OH x OW into 4x4 tiles, over n images; chunks
 * of tc tiles (a multiple of WL). */
typedef struct wtiles {
    int64_t th, tw, per, total; /* tile rows, columns, tiles an image, in all */
    int64_t tc, chunks;         /* tiles a chunk, chunks */
    int64_t zw;                 /* zeros a thread keeps */
    bool shared;                /* the threads share each chunk (below) */
} wtiles;

/* may_share: the threads may share each chunk, where a chunk each would be
 * narrower than a block of the GEMMs' tile columns (2 WL: small images or
 * batches, as VGG's 8x8 and 4x4 maps at batch 8): a chunk's input
 * transforms split by channel, its 36 GEMMs by position, its output
 * transforms by output channel, a barrier between (wino_run). */
static wtiles wino_tiles(const conv_geom *q, int64_t cin, int64_t cout, int nthreads, bool may_share)
{
    wtiles t = { .th = (q->oh + WM - 1) / WM, .tw = (q->ow + WM - 1) / WM };
    t.per = t.th * t.tw;
    t.total = q->n * t.per;
    if (may_share && nthreads > 1 && t.total < 2 * WL * nthreads) {
        t = wino_tiles(q, cin, cout, 1, false);
        t.shared = true;
        return t;
    }
    int64_t tc = (1 << 20) / (WT * (cin + cout) * (int64_t)sizeof(float));
    tc = tc < 128 ? 128 : tc > 512 ? 512 : tc;
    int64_t chunks = (t.total + tc - 1) / tc;
    if (chunks < nthreads && t.total >= nthreads * WL)
        chunks = nthreads; /* every thread gets a chunk */
    else if (chunks % nthreads)
        chunks += nthreads - chunks % nthreads; /* equal shares */
    t.tc = (t.total + chunks - 1) / chunks;
    int64_t tc2 = (t.tc + 2 * WL - 1) / (2 * WL) * (2 * WL);
    t.tc = (t.tc + WL - 1) / WL * WL;
    if (tc2 <= t.total && (t.total + tc2 - 1) / tc2 == (t.total + t.tc - 1) / t.tc)
        t.tc = tc2; /* whole column blocks of the GEMMs' tiles, where the chunks stay as many */
    t.chunks = (t.total + t.tc - 1) / t.tc;
    t.zw = (q->w > q->ow ? q->w : q->ow) + 16;
    return t;
}

/* The tiles j0 .. j0 + jn cut where a row of tiles ends: calls body with
 * the image n, the output row r0 and column c0 of the segment's first
 * tile, its tiles nt and its first column j (of the chunk). */
#define FOR_SEGMENTS(t, j0, jn, ...)                                                                   \
    for (int64_t j = 0, nt; j < (jn); j += nt) {                                                       \
        int64_t tile_ = (j0) + j, r_ = tile_ % (t)->per, n = tile_ / (t)->per, r0 = r_ / (t)->tw * WM, \
                tc_ = r_ % (t)->tw, c0 = tc_ * WM;                                                     \
        nt = (t)->tw - tc_ < (jn)-j ? (t)->tw - tc_ : (jn)-j;                                          \
        __VA_ARGS__;                                                                                   \
    }

/* The transforms work on blocks of WB tiles of a chunk; a buffered row
 * holds a block's 4 WB columns, and a vector's reads past them. */
#define WB 64
#define WR (4 * WB + 4 * WL)

/* ---- the transforms, once per instruction set ---------------------------- */

/* plain C: one tile a "vector" */
#define WK(name) name##_c
#define WK_L 1
#define WK_FN
#define wk_v float
#define WK_LD(p) (*(p))
#define WK_ST(p, v) (*(p) = (v))
#define WK_LDN(p, n) ((void)(n), *(p))
#define WK_STN(p, v, n) ((void)(n), *(p) = (v))
#define WK_DEINT4(t, s) memcpy((s), (t), 4 * sizeof(float))
#define WK_INTER(y, o) memcpy((o), (y), 4 * sizeof(float))
#include "conv_wino_kern.h" /* it undefines the parameters above */

#if defined(__x86_64__)
/* AVX2: eight tiles a vector */
#define AVX2_FN __attribute__((target("avx2,fma")))
#define AVX2_INLINE AVX2_FN static inline __attribute__((always_inline))

/* s[b][l] = t[4 l + b]: a 4x4 transpose in each 128-bit half (the tiles
 * land in the order 0 2 4 6 1 3 5 7), one permutation to put them in
 * order */
AVX2_INLINE void deint_avx2(const float *t, __m256 s[4])
{
    __m256 a0 = _mm256_loadu_ps(t), a1 = _mm256_loadu_ps(t + 8), a2 = _mm256_loadu_ps(t + 16),
           a3 = _mm256_loadu_ps(t + 24);
    __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1), t2 = _mm256_unpacklo_ps(a2, a3),
           t3 = _mm256_unpackhi_ps(a2, a3);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    s[0] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(t0, t2, 0x44), order);
    s[1] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(t0, t2, 0xEE), order);
    s[2] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(t1, t3, 0x44), order);
    s[3] = _mm256_permutevar8x32_ps(_mm256_shuffle_ps(t1, t3, 0xEE), order);
}

/* o[4 l + b] = y[b][l]: deint_avx2's transpose backwards */
AVX2_INLINE void inter_avx2(const __m256 y[4], float *o)
{
    const __m256i order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    __m256 q0 = _mm256_permutevar8x32_ps(y[0], order), q1 = _mm256_permutevar8x32_ps(y[1], order),
           q2 = _mm256_permutevar8x32_ps(y[2], order), q3 = _mm256_permutevar8x32_ps(y[3], order);
    __m256 t0 = _mm256_unpacklo_ps(q0, q1), t1 = _mm256_unpackhi_ps(q0, q1), t2 = _mm256_unpacklo_ps(q2, q3),
           t3 = _mm256_unpackhi_ps(q2, q3);
    _mm256_storeu_ps(o, _mm256_shuffle_ps(t0, t2, 0x44));
    _mm256_storeu_ps(o + 8, _mm256_shuffle_ps(t0, t2, 0xEE));
    _mm256_storeu_ps(o + 16, _mm256_shuffle_ps(t1, t3, 0x44));
    _mm256_storeu_ps(o + 24, _mm256_shuffle_ps(t1, t3, 0xEE));
}

AVX2_INLINE __m256i lanes_below_avx2(int n)
{
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#define WK(name) name##_avx2
#define WK_L 8
#define WK_FN AVX2_FN
#define wk_v __m256
#define WK_LD(p) _mm256_loadu_ps(p)
#define WK_ST(p, v) _mm256_storeu_ps((p), (v))
#define WK_LDN(p, n) _mm256_maskload_ps((p), lanes_below_avx2(n))
#define WK_STN(p, v, n) _mm256_maskstore_ps((p), lanes_below_avx2(n), (v))
#define WK_DEINT4(t, s) deint_avx2((t), (s))
#define WK_INTER(y, o) inter_avx2((y), (o))
#include "conv_wino_kern.h" /* it undefines the parameters above */

/* AVX-512: sixteen tiles a vector */
#define AVX512_FN __attribute__((target("avx512f,avx2,fma")))
#define AVX512_INLINE AVX512_FN static inline __attribute__((always_inline))

/* s[b][l] = t[4 l + b]: two-table permutations pick every fourth float of
 * t[0, 32) into lanes 0-7 and of t[32, 64) into lanes 8-15 */
AVX512_INLINE void deint_avx512(const float *t, __m512 s[4])
{
    __m512 a0 = _mm512_loadu_ps(t), a1 = _mm512_loadu_ps(t + 16), a2 = _mm512_loadu_ps(t + 32),
           a3 = _mm512_loadu_ps(t + 48);
    const __m512i idx = _mm512_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28, 0, 4, 8, 12, 16, 20, 24, 28);
    for (int b = 0; b < 4; b++) {
        __m512i ib = _mm512_add_epi32(idx, _mm512_set1_epi32(b));
        s[b] = _mm512_mask_blend_ps(0xFF00, _mm512_permutex2var_ps(a0, ib, a1), _mm512_permutex2var_ps(a2, ib, a3));
    }
}

/* o[4 l + b] = y[b][l]: pairs (y0, y1) and (y2, y3) interleaved, then the
 * pairs of pairs */
AVX512_INLINE void inter_avx512(const __m512 y[4], float *o)
{
    const __m512i lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23),
                  hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31),
                  p0 = _mm512_setr_epi32(0, 1, 16, 17, 2, 3, 18, 19, 4, 5, 20, 21, 6, 7, 22, 23),
                  p1 = _mm512_setr_epi32(8, 9, 24, 25, 10, 11, 26, 27, 12, 13, 28, 29, 14, 15, 30, 31);
    __m512 e01 = _mm512_permutex2var_ps(y[0], lo, y[1]), f01 = _mm512_permutex2var_ps(y[0], hi, y[1]),
           e23 = _mm512_permutex2var_ps(y[2], lo, y[3]), f23 = _mm512_permutex2var_ps(y[2], hi, y[3]);
    _mm512_storeu_ps(o, _mm512_permutex2var_ps(e01, p0, e23));
    _mm512_storeu_ps(o + 16, _mm512_permutex2var_ps(e01, p1, e23));
    _mm512_storeu_ps(o + 32, _mm512_permutex2var_ps(f01, p0, f23));
    _mm512_storeu_ps(o + 48, _mm512_permutex2var_ps(f01, p1, f23));
}

#define WK(name) name##_avx512
#define WK_L 16
#define WK_FN AVX512_FN
#define wk_v __m512
#define WK_LD(p) _mm512_loadu_ps(p)
#define WK_ST(p, v) _mm512_storeu_ps((p), (v))
#define WK_LDN(p, n) _mm512_maskz_loadu_ps((__mmask16)((1u << (n)) - 1), (p))
#define WK_STN(p, v, n) _mm512_mask_storeu_ps((p), (__mmask16)((1u << (n)) - 1), (v))
#define WK_DEINT4(t, s) deint_avx512((t), (s))
#define WK_INTER(y, o) inter_avx512((y), (o))
#include "conv_wino_kern.h" /* it undefines the parameters above */
#endif

/* The transforms of one instruction set */
typedef struct wkern {
    void (*in_chunk)(float *v, int64_t vs, const conv_geom *q, const wtiles *t, int64_t j0, int64_t jn, const float *x,
                     int64_t c, float *r1, float *r2, const float *zero);
    void (*out_chunk)(float *y, const conv_geom *q, const wtiles *t, int64_t j0, int64_t jn, const float *m, int64_t ms,
                      int64_t o, float *r);
    void (*dy_chunk)(float *dd, int64_t ds, const conv_geom *q, const wtiles *t, int64_t j0, int64_t jn,
                     const float *dy, int64_t o, float *r, const float *zero);
    void (*filter)(float *U, int64_t us, const float *w, int64_t OC, int64_t C, bool flip, bool tr, int64_t e0,
                   int64_t e1);
    void (*filter_out)(float *dw, const float *sum, int64_t ss, int nsum, int64_t us, int64_t e0, int64_t e1);
} wkern;

static const wkern wk_c = { in_chunk_c, out_chunk_c, dy_chunk_c, filter_c, filter_out_c };
#if defined(__x86_64__)
static const wkern wk_avx2 = { in_chunk_avx2, out_chunk_avx2, dy_chunk_avx2, filter_avx2, filter_out_avx2 };
static const wkern wk_avx512 = { in_chunk_avx512, out_chunk_avx512, dy_chunk_avx512, filter_avx512, filter_out_avx512 };
#endif

static const wkern *wino_kern(void)
{
#if defined(__x86_64__)
    exec_simd s = conv_simd();
    if (s == EXEC_SIMD_AVX512)
        return &wk_avx512;
    if (s == EXEC_SIMD_AVX2)
        return &wk_avx2;
#endif
    return &wk_c;
}

/* ---- forward ------------------------------------------------------------ */

/* The floats from one of the 36 positions' blocks to the next, for a
 * block of n floats: n rounded up to a vector, and one vector more. The
 * blocks are the transformed filters (n = OC C), a chunk's transformed
 * inputs (C tc) and its products or output gradients (OC tc). At n a
 * multiple of 4 KiB (VGG's 128 x 128 filter pairs: 64 KiB; 64 channels of
 * 128 tiles: 32 KiB) a vector's 36 stores or loads, one a position, all
 * fell in one set of the L1 and L2 caches; one vector past, they spread
 * over 36. VGG small's 8x8 128->128 forward where the filters change at
 * every run (training): 862-953 us -> 764-806; ResNet-50's 56x56 64->64
 * layer at batch 16 with kept filters: 8.0-8.5 -> 7.2-7.4 ms (its fastest
 * runs; the 14x14 and 7x7 layers within their noise). */
static int64_t wino_apart(int64_t n) { return (n + WL - 1) / WL * WL + WL; }
static int64_t wino_ustride(int64_t OC, int64_t C) { return wino_apart(OC * C); }
static int64_t wino_ps(const wtiles *t, int64_t ch) { return wino_apart(ch * t->tc); }

/* Narrow: fewer tiles in all than two vectors of tiles (VGG small's 4x4
 * maps at batch 8: 8 tiles, one chunk). The forward's GEMMs M[xi] [OC, T]
 * = U[xi] [OC, C] x V[xi] [C, T] would then have T columns, 8 of a
 * register tile's 48 lanes (the BLAS's sgemm ran them at 56 GFLOP/s, 128 x
 * 8 x 128 on one thread); instead M^T [T, OC] = V^T [T, C] x U^T [C, OC],
 * the output channels across the lanes (116 GFLOP/s), with the filters
 * transformed as [C, OC] and each product transposed into M after. VGG
 * small's 4x4 128 -> 128 layer with kept filters, alone on 2 threads: 131
 * us before, 87 after (im2col 111). */
static bool wino_narrow(const wtiles *t) { return t->total < 2 * WL; }

/* the GEMMs' scratch: the forward's (M = OC, K = C) and the filter
 * gradient's (b transposed, M = OC, K = a chunk's tiles) */
static int64_t wino_gemm_floats(const wtiles *t, int64_t C, int64_t OC)
{
    int64_t f = exec_gemm1_scratch(0, OC, C), g = exec_gemm1_scratch(1, OC, t->tc);
    return f > g ? f : g;
}

/* a thread's floats beyond U: V, M, twice six buffered rows, a zero row,
 * the GEMMs' scratch (and where narrow, a product M^T) */
static int64_t wino_thread_floats(const wtiles *t, int64_t C, int64_t OC)
{
    return WT * (wino_ps(t, C) + wino_ps(t, OC)) + 12 * WR + t->zw + wino_gemm_floats(t, C, OC) +
           (wino_narrow(t) ? t->total * OC : 0);
}

int64_t conv_wino_scratch(const conv_geom *q, int nthreads)
{
    wtiles t = wino_tiles(q, q->c, q->oc, nthreads, true);
    return WT * wino_ustride(q->oc, q->c) + (int64_t)nthreads * wino_thread_floats(&t, q->c, q->oc);
}

/* U[xi][o][c] (tr: U[xi][c][o]) = G g G^T over the pairs (o, c), split
 * between the threads of the enclosing parallel region in blocks */
static void wino_filters(const wkern *K, float *U, const float *w, int64_t OC, int64_t C, bool flip, bool tr)
{
    const int64_t P = OC * C, blocks = (P + WB - 1) / WB;
#pragma omp for schedule(static)
    for (int64_t bi = 0; bi < blocks; bi++) {
        int64_t e0 = bi * WB, e1 = e0 + WB < P ? e0 + WB : P;
        K->filter(U, wino_ustride(OC, C), w, OC, C, flip, tr, e0, e1);
    }
}

/* M[xi] [OC, tc] = U[xi] V[xi] for a chunk of jn tiles, on one thread;
 * narrow (U[xi] as [C, OC]): M^T in mt first */
static void wino_product(const wtiles *t, int xi, int64_t OC, int64_t C, int64_t jn, const float *U, const float *V,
                         float *M, float *mt, float *ws)
{
    const float *u = U + xi * wino_ustride(OC, C), *v = V + xi * wino_ps(t, C);
    float *m = M + xi * wino_ps(t, OC);
    if (!wino_narrow(t)) {
        exec_gemm1(ws, 0, 0, OC, jn, C, u, C, v, t->tc, 0.0f, m, t->tc);
        return;
    }
    exec_gemm1(ws, 1, 0, jn, OC, C, v, t->tc, u, OC, 0.0f, mt, OC);
    for (int64_t j = 0; j < jn; j++)
        for (int64_t o = 0; o < OC; o++)
            m[o * t->tc + j] = mt[j * OC + o];
}

/* y = x (*) w on q (3x3, stride 1); with flip, w is the filter of the
 * convolution whose transposed geometry q is: w[c][o][2-kh][2-kw] for q's
 * output channel o and input channel c. The transformed filters U are in
 * u (have_u: already w's transform; else made there now), or with u NULL
 * at the head of scratch; as [C, OC] per position where the tiles are
 * narrow (wino_narrow). */
static void wino_run(const conv_geom *q, const float *x, const float *w, bool flip, float *y, float *scratch,
                     int nthreads, float *u, bool have_u)
{
    const int64_t C = q->c, OC = q->oc;
    const wtiles t = wino_tiles(q, C, OC, nthreads, true);
    const wkern *K = wino_kern();
    float *U = u ? u : scratch, *bufs = u ? scratch : U + WT * wino_ustride(OC, C);
    const int64_t per = wino_thread_floats(&t, C, OC);
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        if (!have_u)
            wino_filters(K, U, w, OC, C, flip, wino_narrow(&t)); /* its omp for ends in a barrier */
        int tid = omp_get_thread_num();
        float *V = bufs + (int64_t)tid * per, *M = V + WT * wino_ps(&t, C), *rows = M + WT * wino_ps(&t, OC),
              *zero = rows + 12 * WR, *ws = zero + t.zw, *mt = ws + wino_gemm_floats(&t, C, OC);
        memset(rows, 0, (size_t)(12 * WR + t.zw) * sizeof *rows); /* lanes past a block read zeros */
        if (t.shared) { /* every thread on each chunk, in the first thread's V and M */
            float *V0 = bufs, *M0 = V0 + WT * wino_ps(&t, C);
            for (int64_t ch = 0; ch < t.chunks; ch++) {
                int64_t j0 = ch * t.tc, jn = t.total - j0 < t.tc ? t.total - j0 : t.tc;
#pragma omp for schedule(static)
                for (int64_t c = 0; c < C; c++)
                    K->in_chunk(V0 + c * t.tc, wino_ps(&t, C), q, &t, j0, jn, x, c, rows, rows + 6 * WR, zero);
#pragma omp for schedule(static)
                for (int xi = 0; xi < WT; xi++)
                    wino_product(&t, xi, OC, C, jn, U, V0, M0, mt, ws);
#pragma omp for schedule(static)
                for (int64_t o = 0; o < OC; o++)
                    K->out_chunk(y, q, &t, j0, jn, M0 + o * t.tc, wino_ps(&t, OC), o, rows);
            }
        }
#pragma omp for schedule(static)
        for (int64_t ch = 0; ch < (t.shared ? 0 : t.chunks); ch++) {
            int64_t j0 = ch * t.tc, jn = t.total - j0 < t.tc ? t.total - j0 : t.tc;
            for (int64_t c = 0; c < C; c++)
                K->in_chunk(V + c * t.tc, wino_ps(&t, C), q, &t, j0, jn, x, c, rows, rows + 6 * WR, zero);
            for (int xi = 0; xi < WT; xi++)
                wino_product(&t, xi, OC, C, jn, U, V, M, mt, ws);
            for (int64_t o = 0; o < OC; o++)
                K->out_chunk(y, q, &t, j0, jn, M + o * t.tc, wino_ps(&t, OC), o, rows);
        }
    }
}

int64_t conv_wino_filter_floats(const conv_geom *q) { return WT * wino_ustride(q->oc, q->c); }

void conv_wino_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads, float *u,
                   bool have_u)
{
    wino_run(q, x, w, false, y, scratch, nthreads, u, have_u);
}

void conv_wino_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch, int nthreads)
{
    const conv_geom t = conv_direct_transposed(q);
    wino_run(&t, dy, w, true, dx, scratch, nthreads, NULL, false);
}

/* ---- filter gradient ---------------------------------------------------- */

int64_t conv_wino_filter_scratch(const conv_geom *q, int nthreads)
{
    wtiles t = wino_tiles(q, q->c, q->oc, nthreads, true);
    return (int64_t)nthreads * (wino_thread_floats(&t, q->c, q->oc) + WT * wino_ustride(q->oc, q->c));
}

void conv_wino_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch, int nthreads)
{
    const int64_t C = q->c, OC = q->oc, us = wino_ustride(OC, C), S = WT * us;
    const wtiles t = wino_tiles(q, C, OC, nthreads, true);
    const wkern *K = wino_kern();
    const int64_t tf = wino_thread_floats(&t, C, OC), per = tf + S;
    int used = 1;
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        int tid = omp_get_thread_num();
#pragma omp single
        used = t.shared ? 1 : omp_get_num_threads(); /* the sets of sums filter_out adds */
        float *X = scratch + tid * per, *D = X + WT * wino_ps(&t, C), *rows = D + WT * wino_ps(&t, OC),
              *zero = rows + 12 * WR, *ws = zero + t.zw, *acc = X + tf;
        memset(rows, 0, (size_t)(12 * WR + t.zw) * sizeof *rows);
        float beta = 0.0f;
        if (t.shared) { /* every thread on each chunk, in the first thread's X, D and S; a position's sums are
                         * one thread's */
            float *X0 = scratch, *D0 = X0 + WT * wino_ps(&t, C), *S0 = X0 + tf;
            for (int64_t ch = 0; ch < t.chunks; ch++) {
                int64_t j0 = ch * t.tc, jn = t.total - j0 < t.tc ? t.total - j0 : t.tc;
#pragma omp for schedule(static) nowait
                for (int64_t c = 0; c < C; c++)
                    K->in_chunk(X0 + c * t.tc, wino_ps(&t, C), q, &t, j0, jn, x, c, rows, rows + 6 * WR, zero);
#pragma omp for schedule(static)
                for (int64_t o = 0; o < OC; o++)
                    K->dy_chunk(D0 + o * t.tc, wino_ps(&t, OC), q, &t, j0, jn, dy, o, rows, zero);
#pragma omp for schedule(static)
                for (int xi = 0; xi < WT; xi++)
                    exec_gemm1(ws, 0, 1, OC, C, jn, D0 + xi * wino_ps(&t, OC), t.tc, X0 + xi * wino_ps(&t, C), t.tc,
                               ch ? 1.0f : 0.0f, S0 + xi * us, C);
            }
        }
#pragma omp for schedule(static)
        for (int64_t ch = 0; ch < (t.shared ? 0 : t.chunks); ch++) {
            int64_t j0 = ch * t.tc, jn = t.total - j0 < t.tc ? t.total - j0 : t.tc;
            for (int64_t c = 0; c < C; c++)
                K->in_chunk(X + c * t.tc, wino_ps(&t, C), q, &t, j0, jn, x, c, rows, rows + 6 * WR, zero);
            for (int64_t o = 0; o < OC; o++)
                K->dy_chunk(D + o * t.tc, wino_ps(&t, OC), q, &t, j0, jn, dy, o, rows, zero);
            for (int xi = 0; xi < WT; xi++)
                exec_gemm1(ws, 0, 1, OC, C, jn, D + xi * wino_ps(&t, OC), t.tc, X + xi * wino_ps(&t, C), t.tc, beta,
                           acc + xi * us, C);
            beta = 1.0f;
        }
        if (beta == 0.0f && !t.shared) /* a thread with no chunk */
            memset(acc, 0, (size_t)S * sizeof *acc);
#pragma omp barrier
        /* dw[o][c] = G^T S G of the threads' S summed, split by pairs */
        const int64_t P = OC * C, groups = (P + WL - 1) / WL;
#pragma omp for schedule(static)
        for (int64_t gi = 0; gi < groups; gi++) {
            int64_t e0 = gi * WL, e1 = e0 + WL < P ? e0 + WL : P;
            K->filter_out(dw, scratch + tf, per, used, us, e0, e1);
        }
    }
}
