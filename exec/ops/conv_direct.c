/* conv_direct.c -- Conv2D and its gradients by direct AVX2 or AVX-512
 * kernels: no im2col.
 *
 * im2col + GEMM writes every input float KH*KW/(SH*SW) times into col, and
 * the BLAS packs col once more before its kernel runs: for DQN's layers
 * (8x8/4 on 4 channels, 4x4/2 on 32) that copying took a third of the
 * convolution's time. This kernel reads the image in place, the way oneDNN's
 * direct convolutions do:
 *
 *   the filter is packed once per call into blocks of ob output channels,
 *       wp[block][c][kh][kw][ob]   (the last block narrower, whole vectors)
 *   each output block of ob channels x 6 output pixels (pixels in row-major
 *   order, a block may span two output rows) lives in registers; per
 *   (c, kh, kw): ob/L filter vectors, six broadcast input floats, 6 ob/L
 *   FMAs; then the ob x 6 sums are written out per channel.
 *   AVX2: vectors of L = 8, ob = 16 (12 accumulators); AVX-512: L = 16,
 *   ob = 64 (24 of the 32 zmm registers), which covers DQN's 64-channel
 *   layers in one block: each broadcast input float feeds four FMAs.
 *
 * Layers with few output channels (or few filter taps) run the other way
 * round: a block is up to 3 (AVX2: 2) vectors of consecutive output pixels,
 * each inside one output row (stride 1 across), x 8 (AVX2: 6) output
 * channels; per (c, kh, kw) one unaligned load of the image per vector and
 * one broadcast filter float per channel, and the sums are stored straight
 * into y's rows, with no transposing copy. A row's last vector ends at its
 * end, overlapping the one before where the vector does not divide it.
 *
 * Padding is done by copying the image into a zero-bordered buffer, so the
 * kernel never tests bounds. Threads take (image, chunk of output pixels,
 * channel block) items in that order, each thread with its own padded copy,
 * so a thread's channel blocks reuse a chunk of the image in cache.
 *
 * The same register blocking serves the two gradients: a stride-1 input
 * gradient is a forward convolution of dy (conv_direct_bwd_input), and the
 * filter gradient sums, per block of ob channels x 6 filter taps, dy
 * (transposed to [pixel][channel]) times the taps' inputs over the pixels
 * (conv_direct_bwd_filter).
 *
 * The register block is written once (conv_direct_kern.h) and compiled per
 * instruction set by function attributes; the widest the CPU has runs
 * (exec_simd_set can narrow it, to compare or test), and without AVX2+FMA
 * conv_direct_supported() says no and conv.c's im2col path runs. On a CPU
 * other than x86-64 it says no and the kernels are not built. */
#include "conv.h"

#include <omp.h>

/* A stride-1 convolution's input gradient is itself a convolution: dy
 * padded by KH-1-ph, KW-1-pw, under the filter with in and out channels
 * swapped and taps flipped, gives dx. */
conv_geom conv_direct_transposed(const conv_geom *q)
{
    return (conv_geom){ .n = q->n,
                        .c = q->oc,
                        .h = q->oh,
                        .w = q->ow,
                        .oc = q->c,
                        .kh = q->kh,
                        .kw = q->kw,
                        .sh = 1,
                        .sw = 1,
                        .ph = q->kh - 1 - q->ph,
                        .pw = q->kw - 1 - q->pw,
                        .oh = q->h,
                        .ow = q->w };
}

#if defined(__x86_64__)
#include <immintrin.h>

#define UR 6 /* output pixels (taps) per block */

/* The forward's block arguments: the (padded) image, the pixels' offsets
 * into it, the packed filter block, the filter's sizes, the image's row and
 * plane strides, and where the [UR][ob] sums go. */
typedef struct dk_args {
    const float *x;
    const int64_t *off;
    const float *wp;
    int64_t c, kh, kw, wd, hw;
    int64_t kh0, kh1; /* the filter rows [kh0, kh1) that reach the image's rows from the block's */
    float *out;
} dk_args;

/* The filter gradient turns the roles around: a block is output channels x
 * filter taps, summed over the pixels of an image. Per pixel: nb vectors
 * of dy (dy transposed to [pixel][channel]), up to six broadcast input
 * floats (the taps' offsets from the pixel's window corner), nb x 6 FMAs.
 * The sums start from and go back to acc ([6][ob]), so a block adds up
 * image after image. */
typedef struct fk_args {
    const float *x;                   /* the (padded) image */
    const int64_t *off;               /* the taps' offsets */
    const float *g;                   /* dy^T at pixel 0, this block's first channel */
    int64_t gstride;                  /* floats from a pixel's dy^T row to the next */
    int64_t oh0, oh1, ow, sh, sw, wd; /* output rows [oh0, oh1) ... */
    int64_t nimg, ximg, gimg;         /* ... of nimg images, x and g that far apart */
    float *acc;
} fk_args;

/* The pixel-vector forward's block arguments: the (padded) image, each
 * pixel vector's offset into it (its first pixel's window corner) and into
 * y's plane, the packed filter block [K][PR], the filter's sizes, the
 * image's row and plane strides, y at the block's first channel, y's plane
 * and the channels of the block that exist. */
typedef struct pk_args {
    const float *x;
    const int64_t *xoff, *yoff;
    const float *wp;
    int64_t c, kh, kw, wd, hw;
    float *y;
    int64_t P, live;
} pk_args;

/* The filter gradient's pixel-vector block arguments: the (padded) image,
 * the taps' offsets, dy at the block's first channel, the output's rows,
 * row width and row stride in the image's rows, the image's row stride,
 * the lanes of a row's last vector not yet summed (all-ones floats, else
 * zero), and where the sums are added: dw at the block's first channel and
 * tap, rows K apart. */
typedef struct pf_args {
    const float *x;
    const int64_t *off;
    const float *g;
    int64_t oh, ow, sh, wd, K;
    const float *mask;
    float *dw;
} pf_args;

typedef void (*dk_fn)(const dk_args *);
typedef void (*fk_fn)(const fk_args *);
typedef void (*pk_fn)(const pk_args *);
typedef void (*pf_fn)(const pf_args *);

/* One instruction set's kernels: blocks of up to nb vectors of l channels
 * (ob = nb * l channels) x UR positions; dk[vectors - 1][count - 1] the
 * forward's, fk[...] the filter gradient's; pk[vectors - 1] the forward's
 * pixel-vector blocks of up to pv vectors of l pixels x pr channels;
 * pf[channels - 1][count - 1] the filter gradient's pixel-vector blocks of
 * up to fo output channels x UR taps. */
#define NB_MAX 4
#define PV_MAX 3
#define FO_MAX 4
typedef struct dkern {
    int64_t l, nb, pv, pr, fo;
    dk_fn dk[NB_MAX][UR];
    fk_fn fk[NB_MAX][UR];
    pk_fn pk[PV_MAX];
    pf_fn pf[FO_MAX][UR];
} dkern;

#define avx2_FN __attribute__((target("avx2,fma")))
#define avx512_FN __attribute__((target("avx512f,avx2,fma")))

avx2_FN static inline float hsum_avx2(__m256 v)
{
    __m128 h = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    h = _mm_add_ps(h, _mm_movehl_ps(h, h));
    return _mm_cvtss_f32(_mm_add_ss(h, _mm_movehdup_ps(h)));
}

/* AVX2: 2 vectors of 8 (16 channels) x 6 pixels in 12 registers; pixel
 * blocks of 2 vectors of 8 pixels x 6 channels, 12 registers; filter
 * gradient pixel blocks of 2 channels x 6 taps, 12 registers */
#define DK(name) name##_avx2
#define DK_L 8
#define DK_NB 2
#define DK_PV 2
#define DK_PR 6
#define DK_FN avx2_FN
#define dk_v __m256
#define DK_LD(p) _mm256_loadu_ps(p)
#define DK_ST(p, v) _mm256_storeu_ps((p), (v))
#define DK_BC(p) _mm256_broadcast_ss(p)
#define DK_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define DK_ZERO() _mm256_setzero_ps()
#define DK_FO 2
#define DK_AND(v, m) _mm256_and_ps((v), (m))
#define DK_HSUM(v) hsum_avx2(v)
#include "conv_direct_kern.h" /* it undefines the parameters above */

/* AVX-512: 4 vectors of 16 (64 channels) x 6 pixels in 24 registers; pixel
 * blocks of 3 vectors of 16 pixels x 8 channels, 24 registers; filter
 * gradient pixel blocks of 4 channels x 6 taps, 24 registers */
#define DK(name) name##_avx512
#define DK_L 16
#define DK_NB 4
#define DK_PV 3
#define DK_PR 8
#define DK_FN avx512_FN
#define dk_v __m512
#define DK_LD(p) _mm512_loadu_ps(p)
#define DK_ST(p, v) _mm512_storeu_ps((p), (v))
#define DK_BC(p) _mm512_set1_ps(*(p))
#define DK_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define DK_ZERO() _mm512_setzero_ps()
#define DK_FO 4
#define DK_AND(v, m) _mm512_castsi512_ps(_mm512_and_si512(_mm512_castps_si512(v), _mm512_castps_si512(m)))
#define DK_HSUM(v) _mm512_reduce_add_ps(v)
#include "conv_direct_kern.h" /* it undefines the parameters above */

/* One function per (vectors, count) of kernel NAME on set ISA, whose
 * NAME##_body_##ISA's loops are thereby unrolled into registers, and the
 * row of a table that picks one by count. */
/* clang-format off */
#define RB_K(NAME, ISA, ARGS, NB, U)                                                                           \
    ISA##_FN static void NAME##_##ISA##_##NB##_##U(const ARGS *a) { NAME##_body_##ISA(a, NB, U); }
#define RB_ROW(NAME, ISA, ARGS, NB)                                                                            \
    RB_K(NAME, ISA, ARGS, NB, 1) RB_K(NAME, ISA, ARGS, NB, 2) RB_K(NAME, ISA, ARGS, NB, 3)                     \
    RB_K(NAME, ISA, ARGS, NB, 4) RB_K(NAME, ISA, ARGS, NB, 5) RB_K(NAME, ISA, ARGS, NB, 6)
#define RB_FNS(NAME, ISA, NB)                                                                                  \
    { NAME##_##ISA##_##NB##_1, NAME##_##ISA##_##NB##_2, NAME##_##ISA##_##NB##_3,                               \
      NAME##_##ISA##_##NB##_4, NAME##_##ISA##_##NB##_5, NAME##_##ISA##_##NB##_6 }
#define PK_K(ISA, NV) ISA##_FN static void pk_##ISA##_##NV(const pk_args *a) { pk_body_##ISA(a, NV); }

RB_ROW(dk, avx2, dk_args, 1) RB_ROW(dk, avx2, dk_args, 2)
RB_ROW(fk, avx2, fk_args, 1) RB_ROW(fk, avx2, fk_args, 2)
RB_ROW(dk, avx512, dk_args, 1) RB_ROW(dk, avx512, dk_args, 2)
RB_ROW(dk, avx512, dk_args, 3) RB_ROW(dk, avx512, dk_args, 4)
RB_ROW(fk, avx512, fk_args, 1) RB_ROW(fk, avx512, fk_args, 2)
RB_ROW(fk, avx512, fk_args, 3) RB_ROW(fk, avx512, fk_args, 4)
PK_K(avx2, 1) PK_K(avx2, 2) PK_K(avx512, 1) PK_K(avx512, 2) PK_K(avx512, 3)
RB_ROW(pf, avx2, pf_args, 1) RB_ROW(pf, avx2, pf_args, 2)
RB_ROW(pf, avx512, pf_args, 1) RB_ROW(pf, avx512, pf_args, 2)
RB_ROW(pf, avx512, pf_args, 3) RB_ROW(pf, avx512, pf_args, 4)

static const dkern dkern_avx2 = {
    .l = 8, .nb = 2, .pv = 2, .pr = 6, .fo = 2,
    .dk = { RB_FNS(dk, avx2, 1), RB_FNS(dk, avx2, 2) },
    .fk = { RB_FNS(fk, avx2, 1), RB_FNS(fk, avx2, 2) },
    .pk = { pk_avx2_1, pk_avx2_2 },
    .pf = { RB_FNS(pf, avx2, 1), RB_FNS(pf, avx2, 2) },
};
static const dkern dkern_avx512 = {
    .l = 16, .nb = 4, .pv = 3, .pr = 8, .fo = 4,
    .dk = { RB_FNS(dk, avx512, 1), RB_FNS(dk, avx512, 2), RB_FNS(dk, avx512, 3), RB_FNS(dk, avx512, 4) },
    .fk = { RB_FNS(fk, avx512, 1), RB_FNS(fk, avx512, 2), RB_FNS(fk, avx512, 3), RB_FNS(fk, avx512, 4) },
    .pk = { pk_avx512_1, pk_avx512_2, pk_avx512_3 },
    .pf = { RB_FNS(pf, avx512, 1), RB_FNS(pf, avx512, 2), RB_FNS(pf, avx512, 3), RB_FNS(pf, avx512, 4) },
};
/* clang-format on */

bool conv_direct_supported(void) { return conv_simd() >= EXEC_SIMD_AVX2; }

/* the kernels of the level in force (conv_direct_supported() first) */
static const dkern *dkern_now(void) { return conv_simd() >= EXEC_SIMD_AVX512 ? &dkern_avx512 : &dkern_avx2; }

/* the widest kernels this CPU has: scratch sized for them fits any level */
static const dkern *dkern_widest(void) { return exec_simd_best() >= EXEC_SIMD_AVX512 ? &dkern_avx512 : &dkern_avx2; }

static int64_t padded_h(const conv_geom *q) { return q->h + 2 * q->ph; }
static int64_t padded_w(const conv_geom *q) { return q->w + 2 * q->pw; }
static bool padded(const conv_geom *q) { return q->ph || q->pw; }
static int64_t pad_floats(const conv_geom *q) { return padded(q) ? q->c * padded_h(q) * padded_w(q) : 0; }
/* OC rounded up to whole vectors, and a block's channels */
static int64_t oc_rounded(const conv_geom *q, const dkern *d) { return (q->oc + d->l - 1) / d->l * d->l; }
static int64_t ob_of(const dkern *d) { return d->l * d->nb; }
/* the width of the block from channel b0 (the last may be narrower) */
static int64_t block_width(int64_t ocr, int64_t b0, int64_t ob) { return ocr - b0 < ob ? ocr - b0 : ob; }

/* the packed filter's floats at any level this CPU has: OC rounded up to
 * whole blocks of channel vectors or of pixel blocks' channels */
static int64_t packed_floats(const conv_geom *q)
{
    const dkern *ks[2] = { &dkern_avx2, &dkern_avx512 };
    int64_t most = 0;
    for (int i = 0; i < (exec_simd_best() >= EXEC_SIMD_AVX512 ? 2 : 1); i++) {
        int64_t a = oc_rounded(q, ks[i]), b = (q->oc + ks[i]->pr - 1) / ks[i]->pr * ks[i]->pr;
        most = a > most ? a : most;
        most = b > most ? b : most;
    }
    return most * conv_k(q);
}

int64_t conv_direct_scratch(const conv_geom *q, int nthreads)
{
    return packed_floats(q) + (int64_t)nthreads * pad_floats(q);
}

/* The filter a forward packs: w itself [q->oc][K], or (flip) the filter of
 * the convolution this one transposes, [q->c][ocw][KH][KW], read with its
 * channels swapped and the taps kh0 + sh t, kw0 + sw u (t < q->kh, u <
 * q->kw) turned by 180 degrees: all of them at stride 1, a phase's at a
 * larger stride (conv_direct_bwd_input). Output channel o is channel o %
 * ocw of phase o / ocw: phase p adds p / pw to kh0 and p % pw to kw0 (the
 * phases side by side as channels; one phase: q->oc = ocw). */
typedef struct fview {
    const float *w;
    bool flip;
    int64_t ocw, pw, kh0, kw0, sh, sw, KH, KW;
} fview;

/* wp[block][k][width] = the filter's [block*ob + l][k] (blocks of ob
 * channels, the last of what is left of ocr), zero past OC */
static void pack_filter(const conv_geom *q, int64_t ob, int64_t ocr, const fview *f, float *restrict wp, int64_t oc0,
                        int64_t oc1)
{
    const int64_t K = conv_k(q);
    const float *restrict w = f->w;
    for (int64_t o = oc0; o < oc1; o++) {
        int64_t b0 = o / ob * ob, width = block_width(ocr, b0, ob), l = o - b0;
        float *restrict d = wp + b0 * K + l;
        if (o >= q->oc) {
            for (int64_t k = 0; k < K; k++)
                d[k * width] = 0.0f;
        } else if (!f->flip) {
            for (int64_t k = 0; k < K; k++)
                d[k * width] = w[o * K + k];
        } else {
            const int64_t ph = o / f->ocw, oo = o % f->ocw, kh0 = f->kh0 + ph / f->pw, kw0 = f->kw0 + ph % f->pw;
            for (int64_t c = 0, k = 0; c < q->c; c++)
                for (int64_t t = q->kh - 1; t >= 0; t--)
                    for (int64_t u = q->kw - 1; u >= 0; u--, k++)
                        d[k * width] = w[((c * f->ocw + oo) * f->KH + kh0 + f->sh * t) * f->KW + kw0 + f->sw * u];
        }
    }
}

static void pad_image(const conv_geom *q, const float *restrict x, float *restrict xp)
{
    const int64_t Hp = padded_h(q), Wp = padded_w(q);
    memset(xp, 0, (size_t)(q->c * Hp * Wp) * sizeof *xp);
    for (int64_t c = 0; c < q->c; c++)
        for (int64_t i = 0; i < q->h; i++)
            memcpy(xp + (c * Hp + i + q->ph) * Wp + q->pw, x + (c * q->h + i) * q->w, (size_t)q->w * sizeof *x);
}

/* image i of x, or its copy into the thread's zero-bordered xp where the
 * convolution pads (*have: the image now in xp, copied only when another) */
static const float *image_at(const conv_geom *q, const float *x, int64_t i, float *xp, int64_t *have)
{
    const float *xi = x + i * q->c * q->h * q->w;
    if (!padded(q))
        return xi;
    if (*have != i)
        pad_image(q, xi, xp);
    *have = i;
    return xp;
}

/* y[l P + j] = s[j ob + l] (j < n pixels, l < live channels): a run of
 * blocks' sums, [pixel][channel], into y's planes, 8 x 8 at a time through
 * registers (AVX: unpack, shuffle, swap the lanes); the rest one float at a
 * time. A float at a time for everything was 6% of DQN inference's
 * samples. */
avx2_FN static void store_transposed_avx2(float *restrict y, int64_t P, const float *restrict s, int64_t ob, int64_t n,
                                          int64_t live)
{
    int64_t j0 = 0;
    for (; j0 + 8 <= n; j0 += 8) {
        int64_t l0 = 0;
        for (; l0 + 8 <= live; l0 += 8) {
            const float *r = s + j0 * ob + l0;
            __m256 r0 = _mm256_loadu_ps(r), r1 = _mm256_loadu_ps(r + ob), r2 = _mm256_loadu_ps(r + 2 * ob);
            __m256 r3 = _mm256_loadu_ps(r + 3 * ob), r4 = _mm256_loadu_ps(r + 4 * ob), r5 = _mm256_loadu_ps(r + 5 * ob);
            __m256 r6 = _mm256_loadu_ps(r + 6 * ob), r7 = _mm256_loadu_ps(r + 7 * ob);
            __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1);
            __m256 t2 = _mm256_unpacklo_ps(r2, r3), t3 = _mm256_unpackhi_ps(r2, r3);
            __m256 t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5);
            __m256 t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *d = y + l0 * P + j0;
            _mm256_storeu_ps(d, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(d + P, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(d + 2 * P, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(d + 3 * P, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(d + 4 * P, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(d + 5 * P, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(d + 6 * P, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(d + 7 * P, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
        for (; l0 < live; l0++)
            for (int64_t j = j0; j < j0 + 8; j++)
                y[l0 * P + j] = s[j * ob + l0];
    }
    for (int64_t l = 0; l < live; l++)
        for (int64_t j = j0; j < n; j++)
            y[l * P + j] = s[j * ob + l];
}

/* Pixels a run of blocks' sums gathers before they go to y together */
#define RUN_PX 48

/* y[oc0 .. oc0+ob)[p_lo .. p_hi) of one image, from its (padded) planes xi */
static void run_block(const conv_geom *q, const dkern *dk, const float *xi, const float *wp, int64_t oc0,
                      float *restrict yi, int64_t p_lo, int64_t p_hi)
{
    const int64_t K = conv_k(q), P = conv_p(q), Wp = padded_w(q), ocr = oc_rounded(q, dk), ob = ob_of(dk);
    const int64_t width = block_width(ocr, oc0, ob), live = q->oc - oc0 < width ? q->oc - oc0 : width;
    /* the sums of the blocks since the last store, [pixel][ob] */
    float run[(RUN_PX + UR) * NB_MAX * 16];
    int64_t off[UR], have = 0, first = p_lo; /* pixels in run, from pixel first */
    dk_args a = { .x = xi,
                  .off = off,
                  .wp = wp + oc0 * K,
                  .c = q->c,
                  .kh = q->kh,
                  .kw = q->kw,
                  .wd = Wp,
                  .hw = padded_h(q) * Wp,
                  .out = run };
    const dk_fn *fns = dk->dk[width / dk->l - 1];
    float *restrict yb = yi + oc0 * P;
    /* blocks as equal as they can be (49 pixels: 4 x 6 + 5 x 5, not 8 x 6 + 1:
     * a 1-pixel block does 2 FMAs a filter tap for 3 loads) */
    const int64_t npx = p_hi - p_lo, nblk = (npx + UR - 1) / UR, base = npx / nblk, extra = npx % nblk;
    int64_t oh = p_lo / q->ow, ow = p_lo % q->ow; /* of pixel p0 */
    for (int64_t bi = 0, ur, p0 = p_lo; bi < nblk; bi++, p0 += ur) {
        ur = base + (bi < extra);
        /* the filter rows that read any of the image's rows, not only its
         * zero border, from the block's output rows: a padded layer's top and
         * bottom rows, and most of all a stride-1 input gradient's (its dy
         * padded by KH - 1: DQN's conv3, 9 output rows of 3 taps, 18% of
         * the multiply-adds on zeros left out) */
        const int64_t r_first = p0 / q->ow, r_last = (p0 + ur - 1) / q->ow;
        a.kh0 = q->ph - r_last * q->sh > 0 ? q->ph - r_last * q->sh : 0;
        a.kh1 = q->ph + q->h - r_first * q->sh < q->kh ? q->ph + q->h - r_first * q->sh : q->kh;
        for (int j = 0, h = (int)oh, w = (int)ow; j < ur; j++) {
            off[j] = h * q->sh * Wp + w * q->sw;
            if (++w == q->ow)
                w = 0, h++;
        }
        a.out = run + have * ob;
        fns[ur - 1](&a);
        have += ur;
        ow += ur;
        oh += ow / q->ow;
        ow %= q->ow;
        /* whole groups of 8 pixels out once RUN_PX have gathered; all at the end */
        const int64_t done = bi == nblk - 1 ? have : have >= RUN_PX ? have / 8 * 8 : 0;
        if (done) {
            store_transposed_avx2(yb + first, P, run, ob, done, live);
            memmove(run, run + done * ob, (size_t)((have - done) * ob) * sizeof *run);
            have -= done;
            first += done;
        }
    }
}

/* y[oc0 .. oc0+pr)[rows r_lo .. r_hi) of one image by pixel-vector blocks:
 * a row's vectors start every l pixels, its last at ow - l (overlapping
 * the one before where l does not divide ow; ow >= l) */
static void run_pixels(const conv_geom *q, const dkern *dk, const float *xi, const float *wp, int64_t oc0,
                       float *restrict yi, int64_t r_lo, int64_t r_hi)
{
    const int64_t K = conv_k(q), Wp = padded_w(q), L = dk->l, per_row = (q->ow + L - 1) / L;
    int64_t xoff[PV_MAX], yoff[PV_MAX];
    pk_args a = { .x = xi,
                  .xoff = xoff,
                  .yoff = yoff,
                  .wp = wp + oc0 * K,
                  .c = q->c,
                  .kh = q->kh,
                  .kw = q->kw,
                  .wd = Wp,
                  .hw = padded_h(q) * Wp,
                  .y = yi + oc0 * conv_p(q),
                  .P = conv_p(q),
                  .live = q->oc - oc0 < dk->pr ? q->oc - oc0 : dk->pr };
    const int64_t nvec = (r_hi - r_lo) * per_row;
    for (int64_t v0 = 0; v0 < nvec; v0 += dk->pv) {
        int nv = nvec - v0 < dk->pv ? (int)(nvec - v0) : (int)dk->pv;
        for (int v = 0; v < nv; v++) {
            int64_t oh = r_lo + (v0 + v) / per_row, ow = (v0 + v) % per_row * L;
            ow = ow + L <= q->ow ? ow : q->ow - L;
            xoff[v] = oh * q->sh * Wp + ow;
            yoff[v] = oh * q->ow + ow;
        }
        dk->pk[nv - 1](&a);
    }
}

/* Whether the forward runs pixel-vector blocks: stride 1 across and rows
 * of a vector or more, where a block of channel vectors would be narrow
 * (at most two vectors of output channels: few FMAs a load) or its
 * transposing store dear (few filter taps a sum). Measured on AVX-512 (one
 * thread, batch 8): 64x64 16->16 3x3 137 -> 206 GFLOP/s, 32x32 32->32
 * 173 -> 233, 16x16 64->64 223 -> 228, but 56x56 64->64 slower; on AVX2
 * (blocks of 6 channels) about even. */
static bool pixel_blocks(const conv_geom *q, const dkern *dk)
{
    return q->sw == 1 && q->ow >= dk->l && (q->oc <= 2 * dk->l || conv_k(q) < 4 * dk->l);
}

/* Output rows per chunk: the input rows a chunk reads stay in cache while
 * every channel block runs over them. */
#define CHUNK_BYTES (256 * 1024)
static int64_t chunk_rows(const conv_geom *q)
{
    int64_t row_bytes = q->c * padded_w(q) * q->sh * (int64_t)sizeof(float);
    int64_t rows = (CHUNK_BYTES - q->c * padded_w(q) * q->kh * (int64_t)sizeof(float)) / row_bytes;
    return rows < 1 ? 1 : rows < q->oh ? rows : q->oh;
}

/* Output pixels per chunk of the channel-vector blocks (a multiple of UR,
 * or all of P). */
static int64_t chunk_pixels(const conv_geom *q)
{
    int64_t px = chunk_rows(q) * q->ow;
    px = (px + UR - 1) / UR * UR;
    return px < conv_p(q) ? px : conv_p(q);
}

static void direct_run(const conv_geom *q, const float *x, const fview *f, float *y, float *scratch, int nthreads)
{
    const dkern *dk = dkern_now();
    const bool pix = pixel_blocks(q, dk);
    const int64_t ob = pix ? dk->pr : ob_of(dk), ocr = pix ? (q->oc + ob - 1) / ob * ob : oc_rounded(q, dk);
    const int64_t nblk = (ocr + ob - 1) / ob, P = conv_p(q);
    /* chunks of output pixels (channel-vector blocks) or rows (pixel-vector) */
    const int64_t cp = pix ? chunk_rows(q) : chunk_pixels(q), all = pix ? q->oh : P, nch = (all + cp - 1) / cp;
    const int64_t items = q->n * nch * nblk;
    /* the padded images after the packed filter of the widest kernels */
    const int64_t wfloats = packed_floats(q);
    float *wp = scratch;
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        pack_filter(q, ob, ocr, f, wp, ocr * t / nt, ocr * (t + 1) / nt);
#pragma omp barrier
        float *xp = scratch + wfloats + t * pad_floats(q);
        int64_t have = -1; /* the image now in xp */
        /* items (image, chunk, block) in that order: a thread's run of
         * blocks reuses one chunk of one image */
        for (int64_t it = items * t / nt, end = items * (t + 1) / nt; it < end; it++) {
            int64_t i = it / (nch * nblk), ch = it / nblk % nch, b = it % nblk;
            const float *xi = image_at(q, x, i, xp, &have);
            int64_t lo = ch * cp, hi = lo + cp < all ? lo + cp : all;
            if (pix)
                run_pixels(q, dk, xi, wp, b * ob, y + i * q->oc * P, lo, hi);
            else
                run_block(q, dk, xi, wp, b * ob, y + i * q->oc * P, lo, hi);
        }
    }
}

void conv_direct_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads)
{
    const fview f = { .w = w, .ocw = q->oc, .pw = 1 };
    direct_run(q, x, &f, y, scratch, nthreads);
}

/* A strided one's splits by phase: the inputs x[c][a sh + rh][b sw + rw]
 * of one phase (rh, rw) are reached by the taps kh = kh0 + sh t (kh0 = (rh
 * + ph) mod sh, t < Th = ceil((KH - kh0) / sh)) from output row oh = a +
 * eh - t (eh = (rh + ph - kh0) / sh), and likewise across. So the phase is
 * a stride-1 convolution of dy padded by Th-1, Tw-1 under those taps
 * flipped (a "full" correlation of (OH + Th - 1) x (OW + Tw - 1) pixels),
 * whose pixel (a + eh, b + ew) is dx's (a sh + rh, b sw + rw): every input
 * pixel in exactly one phase, the phases' FLOPs the convolution's and a
 * border. Where the stride divides the kernel and the padding (DQN's 4x4/2),
 * every phase has the same tap counts and offsets: the sh sw phases run as
 * one convolution with sh sw C output channels (wider register blocks, one
 * pass over dy); otherwise phase by phase. Per phase: its geometry (of all
 * phases when merged), taps and offsets. */
typedef struct phase {
    conv_geom t;
    int64_t kh0, kw0, eh, ew, ha, wa; /* ha x wa: the phase's pixels of dx */
} phase;

static bool phases_merge(const conv_geom *q)
{
    return q->kh % q->sh == 0 && q->kw % q->sw == 0 && q->ph % q->sh == 0 && q->pw % q->sw == 0;
}

static phase phase_of(const conv_geom *q, int64_t rh, int64_t rw)
{
    phase p = { .kh0 = (rh + q->ph) % q->sh, .kw0 = (rw + q->pw) % q->sw };
    int64_t th = p.kh0 < q->kh ? (q->kh - p.kh0 + q->sh - 1) / q->sh : 0;
    int64_t tw = p.kw0 < q->kw ? (q->kw - p.kw0 + q->sw - 1) / q->sw : 0;
    p.eh = (rh + q->ph - p.kh0) / q->sh;
    p.ew = (rw + q->pw - p.kw0) / q->sw;
    p.ha = rh < q->h ? (q->h - rh + q->sh - 1) / q->sh : 0;
    p.wa = rw < q->w ? (q->w - rw + q->sw - 1) / q->sw : 0;
    p.t = (conv_geom){ .n = q->n,
                       .c = q->oc,
                       .h = q->oh,
                       .w = q->ow,
                       .oc = phases_merge(q) ? q->sh * q->sw * q->c : q->c,
                       .kh = th,
                       .kw = tw,
                       .sh = 1,
                       .sw = 1,
                       .ph = th ? th - 1 : 0,
                       .pw = tw ? tw - 1 : 0,
                       .oh = q->oh + th - 1,
                       .ow = q->ow + tw - 1 };
    return p;
}

/* the largest run's direct scratch and full-correlation output */
static void phase_floats(const conv_geom *q, int nthreads, int64_t *scratch, int64_t *out)
{
    *scratch = *out = 0;
    for (int64_t rh = 0; rh < q->sh; rh++)
        for (int64_t rw = 0; rw < q->sw; rw++) {
            phase p = phase_of(q, rh, rw);
            if (!p.t.kh || !p.t.kw)
                continue;
            int64_t s = conv_direct_scratch(&p.t, nthreads), o = p.t.n * p.t.oc * conv_p(&p.t);
            *scratch = s > *scratch ? s : *scratch;
            *out = o > *out ? o : *out;
        }
    *out = (*out + 15) / 16 * 16; /* the direct scratch after it stays 64-byte aligned */
}

int64_t conv_direct_input_scratch(const conv_geom *q, int nthreads)
{
    if (q->sh == 1 && q->sw == 1) {
        const conv_geom t = conv_direct_transposed(q);
        return conv_direct_scratch(&t, nthreads);
    }
    int64_t s, o;
    phase_floats(q, nthreads, &s, &o);
    return s + o;
}

/* dx's pixels of phase (rh, rw) from its full correlation: channel c of
 * image i at full + i * fimg + c * (its pixels), or zero where no tap
 * reaches them (full NULL: none at all) */
static void phase_scatter(const conv_geom *q, const phase *p, int64_t rh, int64_t rw, const float *full, int64_t fimg,
                          float *dx, int nthreads)
{
    const int64_t H = q->h, W = q->w, OH = p->t.oh, OW = p->t.ow;
    int64_t nb = OW - p->ew < p->wa ? OW - p->ew : p->wa;
    nb = nb < 0 ? 0 : nb;
#pragma omp parallel for num_threads(nthreads) if (nthreads > 1) schedule(static)
    for (int64_t ic = 0; ic < q->n * q->c; ic++) {
        const float *restrict src = full ? full + ic / q->c * fimg + ic % q->c * OH * OW : NULL;
        float *restrict d = dx + ic * H * W + rh * W + rw;
        for (int64_t a = 0; a < p->ha; a++) {
            const int64_t r = a + p->eh;
            float *restrict drow = d + a * q->sh * W;
            int64_t b = 0;
            if (src && r < OH)
                for (const float *restrict srow = src + r * OW + p->ew; b < nb; b++)
                    drow[b * q->sw] = srow[b];
            for (; b < p->wa; b++)
                drow[b * q->sw] = 0.0f;
        }
    }
}

void conv_direct_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch, int nthreads)
{
    if (q->sh == 1 && q->sw == 1) {
        const conv_geom t = conv_direct_transposed(q);
        const fview f = { .w = w, .flip = true, .ocw = q->c, .pw = 1, .sh = 1, .sw = 1, .KH = q->kh, .KW = q->kw };
        direct_run(&t, dy, &f, dx, scratch, nthreads);
        return;
    }
    int64_t sfloats, ofloats;
    phase_floats(q, nthreads, &sfloats, &ofloats);
    float *full = scratch, *ds = scratch + ofloats;
    const bool merged = phases_merge(q);
    for (int64_t rh = 0; rh < q->sh; rh++)
        for (int64_t rw = 0; rw < q->sw; rw++) {
            const phase p = phase_of(q, rh, rw);
            const bool taps = p.t.kh && p.t.kw;
            if (taps && (!merged || (rh == 0 && rw == 0))) {
                const fview f = { .w = w,
                                  .flip = true,
                                  .ocw = q->c,
                                  .pw = merged ? q->sw : 1,
                                  .kh0 = p.kh0,
                                  .kw0 = p.kw0,
                                  .sh = q->sh,
                                  .sw = q->sw,
                                  .KH = q->kh,
                                  .KW = q->kw };
                direct_run(&p.t, dy, &f, full, ds, nthreads);
            }
            const int64_t fimg = p.t.oc * conv_p(&p.t), at = merged ? (rh * q->sw + rw) * q->c * conv_p(&p.t) : 0;
            phase_scatter(q, &p, rh, rw, taps ? full + at : NULL, fimg, dx, nthreads);
        }
}

/* Whether the filter gradient runs pixel-vector blocks (pf_body): stride 1
 * across, rows of a vector or more, and at most 32 output channels, where
 * a block of channel vectors is one or two vectors wide (one or two dy
 * loads a step for six broadcasts: the loads bound it). Measured (2
 * threads, batch 8, GFLOP/s, pixel against channel-vector blocks): AVX-512
 * 32x32 32->32 238 / 163-195, 16x16 64->64 155 / 240; AVX2 32x32 32->32
 * 139-170 / 116-120, 16x16 64->64 134-140 / 153. */
static bool pixel_filter(const conv_geom *q, const dkern *dk) { return q->sw == 1 && q->ow >= dk->l && q->oc <= 32; }

/* blocks (fo output channels x UR taps) of one image */
static int64_t pf_blocks(const conv_geom *q, const dkern *dk)
{
    return (q->oc + dk->fo - 1) / dk->fo * ((conv_k(q) + UR - 1) / UR);
}

/* Scratch for conv_direct_bwd_filter (from exec_kscratch: 64-byte aligned):
 * the taps' offsets, then for the channel-vector blocks dy^T of every
 * image, every padded image and the packed gradient [block][K][ob], for
 * the pixel-vector blocks the tail mask and per thread its sums [OC][K]
 * and a padded image; whichever is larger, at any level this CPU has. */
static int64_t pf_floats(const conv_geom *q, int nthreads, const dkern *dk)
{
    return dk->l + nthreads * (q->oc * conv_k(q) + pad_floats(q));
}

int64_t conv_direct_filter_scratch(const conv_geom *q, int nthreads)
{
    const dkern *dk = dkern_widest();
    const int64_t ocr = oc_rounded(q, dk), ob = ob_of(dk), nblk = (ocr + ob - 1) / ob;
    const int64_t vec = q->n * conv_p(q) * ocr + q->n * pad_floats(q) + nblk * conv_k(q) * ob;
    int64_t pix = pf_floats(q, nthreads, &dkern_avx2);
    if (dk != &dkern_avx2 && pf_floats(q, nthreads, dk) > pix)
        pix = pf_floats(q, nthreads, dk);
    return 2 * conv_k(q) + (vec > pix ? vec : pix);
}

/* The filter gradient by pixel-vector blocks: items (image, block of fo
 * output channels x UR taps), image-major, split over the threads. A
 * thread pads an image once, runs its blocks of it (each over the whole
 * image: its sums stay in registers) and adds their sums into its own
 * [OC][K]; the threads' sums are added into dw at the end. Measured on
 * AVX-512 (2 threads, batch 8, GFLOP/s, against the channel-vector blocks
 * in the same runs): VGG small's 64x64 3->16 155 (40-56), 64x64 16->16
 * 216-236 (118-144), 32x32 16->32 229 (118-162), 32x32 32->32 238
 * (163-195); in chunks of rows that fit the first-level cache, with the
 * sums in memory between chunks, all were slower (2 rows: 60-158). */
static void bwd_filter_pixels(const conv_geom *q, const dkern *dk, const float *x, const float *dy, float *dw,
                              float *scratch, int nthreads)
{
    const int64_t K = conv_k(q), P = conv_p(q), KK = q->kh * q->kw;
    const int64_t Hp = padded_h(q), Wp = padded_w(q), ntap = (K + UR - 1) / UR, per = pf_blocks(q, dk);
    const int64_t items = q->n * per, sums = q->oc * K, mine_floats = sums + pad_floats(q);
    int64_t *toff = (int64_t *)scratch;
    float *mask = scratch + 2 * K, *part = mask + dk->l;
    for (int64_t k = 0; k < K; k++)
        toff[k] = (k / KK * Hp + k % KK / q->kw) * Wp + k % q->kw;
    const int64_t done = q->ow % dk->l ? dk->l - q->ow % dk->l : 0; /* lanes the last vector repeats */
    for (int64_t l = 0; l < dk->l; l++) {
        const uint32_t bits = l < done ? 0u : 0xffffffffu;
        memcpy(mask + l, &bits, sizeof bits);
    }
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        const int t = omp_get_thread_num(), nt = omp_get_num_threads();
        float *mine = part + t * mine_floats, *xt = mine + sums;
        memset(mine, 0, (size_t)sums * sizeof *mine);
        int64_t have = -1; /* the image now in xt */
        for (int64_t it = items * t / nt, end = items * (t + 1) / nt; it < end; it++) {
            const int64_t i = it / per, b = it % per, o0 = b / ntap * dk->fo, t0 = b % ntap * UR;
            const int64_t no = q->oc - o0 < dk->fo ? q->oc - o0 : dk->fo;
            const int ut = K - t0 < UR ? (int)(K - t0) : UR;
            const float *xi = image_at(q, x, i, xt, &have);
            const pf_args a = { .x = xi,
                                .off = toff + t0,
                                .g = dy + (i * q->oc + o0) * P,
                                .oh = q->oh,
                                .ow = q->ow,
                                .sh = q->sh,
                                .wd = Wp,
                                .K = K,
                                .mask = mask,
                                .dw = mine + o0 * K + t0 };
            dk->pf[no - 1][ut - 1](&a);
        }
#pragma omp barrier
#pragma omp for schedule(static)
        for (int64_t j = 0; j < sums; j++) {
            float v = 0.0f;
            for (int u = 0; u < nt; u++)
                v += part[u * mine_floats + j];
            dw[j] = v;
        }
    }
}

void conv_direct_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch,
                            int nthreads)
{
    const dkern *dk = dkern_now();
    if (pixel_filter(q, dk)) {
        bwd_filter_pixels(q, dk, x, dy, dw, scratch, nthreads);
        return;
    }
    const int64_t ocr = oc_rounded(q, dk), ob = ob_of(dk), nblk = (ocr + ob - 1) / ob, K = conv_k(q), P = conv_p(q);
    const int64_t CHW = q->c * q->h * q->w, Hp = padded_h(q), Wp = padded_w(q), KK = q->kh * q->kw;
    const int64_t ntap = (K + UR - 1) / UR, items = nblk * ntap;
    const int64_t ximg = padded(q) ? pad_floats(q) : CHW;
    const int64_t row_bytes = (q->ow * ocr + q->c * Wp * q->sh) * (int64_t)sizeof(float);
    const bool whole = q->n * (P * ocr + ximg) * (int64_t)sizeof(float) <= CHUNK_BYTES;
    int64_t rows = (CHUNK_BYTES - q->c * Wp * q->kh * (int64_t)sizeof(float)) / row_bytes;
    rows = whole ? q->oh : rows < 1 ? 1 : rows;
    int64_t *toff = (int64_t *)scratch; /* tap k's offset from a window's corner (first: aligned) */
    float *gT = scratch + 2 * K, *xp = gT + q->n * P * ocr, *acc = xp + q->n * pad_floats(q);
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        /* dy^T [n][p][ocr] (zero past OC), the padded images, acc = 0 */
#pragma omp for schedule(static)
        for (int64_t i = 0; i < q->n; i++) {
            float *restrict d = gT + i * P * ocr;
            const float *restrict s = dy + i * q->oc * P;
            for (int64_t p = 0; p < P; p++)
                for (int64_t o = 0; o < ocr; o++)
                    d[p * ocr + o] = o < q->oc ? s[o * P + p] : 0.0f;
            if (padded(q))
                pad_image(q, x + i * CHW, xp + i * pad_floats(q));
        }
#pragma omp for schedule(static)
        for (int64_t b = 0; b < nblk; b++)
            memset(acc + b * K * ob, 0, (size_t)(K * ob) * sizeof *acc);
#pragma omp for schedule(static)
        for (int64_t k = 0; k < K; k++)
            toff[k] = (k / KK * Hp + k % KK / q->kw) * Wp + k % q->kw;
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        int64_t lo = items * t / nt, hi = items * (t + 1) / nt;
        const float *xs = padded(q) ? xp : x;
        for (int64_t i = 0; i < q->n; i += whole ? q->n : 1)
            for (int64_t r0 = 0, r1; r0 < q->oh; r0 = r1) {
                r1 = r0 + rows < q->oh ? r0 + rows : q->oh;
                for (int64_t it = lo; it < hi; it++) {
                    int64_t b = it / ntap, t0 = it % ntap * UR, width = block_width(ocr, b * ob, ob);
                    int ut = K - t0 < UR ? (int)(K - t0) : UR;
                    fk_args a = { .x = xs + i * ximg,
                                  .off = toff + t0,
                                  .g = gT + i * P * ocr + b * ob,
                                  .gstride = ocr,
                                  .oh0 = r0,
                                  .oh1 = r1,
                                  .ow = q->ow,
                                  .sh = q->sh,
                                  .sw = q->sw,
                                  .wd = Wp,
                                  .nimg = whole ? q->n : 1,
                                  .ximg = ximg,
                                  .gimg = P * ocr,
                                  .acc = acc + (b * K + t0) * ob };
                    dk->fk[width / dk->l - 1][ut - 1](&a);
                }
            }
#pragma omp barrier
            /* unpack: dw[o][k] = acc[o/ob][k][o%ob] */
#pragma omp for schedule(static)
        for (int64_t o = 0; o < q->oc; o++) {
            const float *restrict s = acc + (o / ob) * K * ob + o % ob;
            for (int64_t k = 0; k < K; k++)
                dw[o * K + k] = s[k * ob];
        }
    }
}

#else /* not x86-64: no direct kernels; conv.c asks conv_direct_supported() first and never calls the rest */
bool conv_direct_supported(void) { return false; }
int64_t conv_direct_scratch(const conv_geom *q, int nthreads)
{
    (void)q, (void)nthreads;
    return 0;
}
int64_t conv_direct_input_scratch(const conv_geom *q, int nthreads)
{
    (void)q, (void)nthreads;
    return 0;
}
int64_t conv_direct_filter_scratch(const conv_geom *q, int nthreads)
{
    (void)q, (void)nthreads;
    return 0;
}
void conv_direct_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads)
{
    (void)q, (void)x, (void)w, (void)y, (void)scratch, (void)nthreads;
}
void conv_direct_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch, int nthreads)
{
    (void)q, (void)w, (void)dy, (void)dx, (void)scratch, (void)nthreads;
}
void conv_direct_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch,
                            int nthreads)
{
    (void)q, (void)x, (void)dy, (void)dw, (void)scratch, (void)nthreads;
}
#endif
