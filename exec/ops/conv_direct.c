/* conv_direct.c -- Conv2D and its gradients by direct AVX2 kernels: no im2col.
 *
 * im2col + GEMM writes every input float KH*KW/(SH*SW) times into col, and
 * the BLAS packs col once more before its kernel runs: for DQN's layers
 * (8x8/4 on 4 channels, 4x4/2 on 32) that copying took a third of the
 * convolution's time. This kernel reads the image in place, the way oneDNN's
 * direct convolutions do:
 *
 *   the filter is packed once per call into blocks of 16 output channels,
 *       wp[block][c][kh][kw][16]   (the last block 8 wide when OC % 16 <= 8)
 *   each output block of 16 channels x 6 output pixels (pixels in row-major
 *   order, a block may span two output rows) lives in 12 AVX registers;
 *   per (c, kh, kw): two filter vectors, six broadcast input floats, twelve
 *   FMAs; then the 16 x 6 sums are written out per channel.
 *
 * Padding is done by copying the image into a zero-bordered buffer, so the
 * kernel never tests bounds. Threads take (image, chunk of output pixels,
 * channel block) items in that order, each thread with its own padded copy,
 * so a thread's channel blocks reuse a chunk of the image in cache.
 *
 * The same register blocking serves the two gradients: a stride-1 input
 * gradient is a forward convolution of dy (conv_direct_bwd_input), and the
 * filter gradient sums, per block of 16 channels x 6 filter taps, dy
 * (transposed to [pixel][channel]) times the taps' inputs over the pixels
 * (conv_direct_bwd_filter).
 *
 * Compiled for AVX2+FMA by function attributes; conv_direct_supported() says
 * whether the machine has them (otherwise conv.c's im2col path runs). On a
 * CPU other than x86-64 it says no and the kernel is not built. */
#include "conv.h"

#include <omp.h>

#if defined(__x86_64__)
#include <immintrin.h>

#define UR 6  /* output pixels per block */
#define OB 16 /* output channels per block: two 8-float vectors */

#define AVX2_FN __attribute__((target("avx2,fma")))

bool conv_direct_supported(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }

/* The register block both kernels share: nb vectors of 8 channels x ut
 * positions (pixels for the forward, taps for the filter gradient), sums in
 * s0 (channels 0-7) and s1 (8-15). */
typedef struct rblock {
    __m256 s0[UR], s1[UR];
} rblock;

#define KERNEL_INLINE AVX2_FN static inline __attribute__((always_inline))

/* the block's ut broadcast offsets, copied where the compiler keeps them in
 * registers */
KERNEL_INLINE void rb_offsets(int64_t o[UR], const int64_t *off, const int ut)
{
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
        o[j] = j < ut ? off[j] : 0;
}

/* the sums from acc ([ut][16]), or zero when acc is NULL */
KERNEL_INLINE void rb_load(rblock *b, const float *acc, const int nb, const int ut)
{
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++) {
        b->s0[j] = acc && j < ut ? _mm256_loadu_ps(acc + j * OB) : _mm256_setzero_ps();
        b->s1[j] = acc && j < ut && nb == 2 ? _mm256_loadu_ps(acc + j * OB + 8) : _mm256_setzero_ps();
    }
}

KERNEL_INLINE void rb_store(const rblock *b, float *acc, const int nb, const int ut)
{
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
        if (j < ut) {
            _mm256_storeu_ps(acc + j * OB, b->s0[j]);
            if (nb == 2)
                _mm256_storeu_ps(acc + j * OB + 8, b->s1[j]);
        }
}

/* n steps of: the channel vectors at v times the ut floats at r + o[j];
 * v moves vstride floats a step, r rstride. */
KERNEL_INLINE void rb_run(rblock *b, const float *restrict v, int64_t vstride, const float *restrict r, int64_t rstride,
                          const int64_t *o, int64_t n, const int nb, const int ut)
{
    for (int64_t i = 0; i < n; i++, v += vstride, r += rstride) {
        __m256 w0 = _mm256_loadu_ps(v), w1 = nb == 2 ? _mm256_loadu_ps(v + 8) : w0;
#pragma GCC unroll 6
        for (int j = 0; j < UR; j++)
            if (j < ut) {
                __m256 x = _mm256_broadcast_ss(r + o[j]);
                b->s0[j] = _mm256_fmadd_ps(w0, x, b->s0[j]);
                if (nb == 2)
                    b->s1[j] = _mm256_fmadd_ps(w1, x, b->s1[j]);
            }
    }
}

/* The forward's block: 16 output channels x 6 output pixels. Its arguments:
 * the (padded) image, the pixels' offsets into it, the packed filter block,
 * the filter's sizes, the image's row and plane strides, and where the
 * [UR][OB] sums go. */
typedef struct dk_args {
    const float *x;
    const int64_t *off;
    const float *wp;
    int64_t c, kh, kw, wd, hw;
    float *out;
} dk_args;

KERNEL_INLINE void dk_body(const dk_args *a, const int nb, const int ur)
{
    rblock b;
    int64_t o[UR];
    rb_offsets(o, a->off, ur);
    rb_load(&b, NULL, nb, ur);
    const float *wp = a->wp;
    for (int64_t c = 0; c < a->c; c++)
        for (int64_t kh = 0; kh < a->kh; kh++, wp += 8 * nb * a->kw)
            rb_run(&b, wp, 8 * nb, a->x + c * a->hw + kh * a->wd, 1, o, a->kw, nb, ur);
    rb_store(&b, a->out, nb, ur);
}

/* One function per (vectors, pixels or taps) of a kernel NAME, whose
 * NAME##_body's loops are thereby unrolled into registers, and the table
 * that picks one: NAME##_table[vectors - 1][count - 1], of type NAME##_fn. */
/* clang-format off */
#define RB_K(NAME, ARGS, NB, U) AVX2_FN static void NAME##_##NB##_##U(const ARGS *a) { NAME##_body(a, NB, U); }
#define RB_KERNELS(NAME, ARGS)                                                                                 \
    RB_K(NAME, ARGS, 1, 1) RB_K(NAME, ARGS, 1, 2) RB_K(NAME, ARGS, 1, 3)                                     \
    RB_K(NAME, ARGS, 1, 4) RB_K(NAME, ARGS, 1, 5) RB_K(NAME, ARGS, 1, 6)                                     \
    RB_K(NAME, ARGS, 2, 1) RB_K(NAME, ARGS, 2, 2) RB_K(NAME, ARGS, 2, 3)                                     \
    RB_K(NAME, ARGS, 2, 4) RB_K(NAME, ARGS, 2, 5) RB_K(NAME, ARGS, 2, 6)                                     \
    typedef void (*NAME##_fn)(const ARGS *);                                                                  \
    static const NAME##_fn NAME##_table[2][UR] = {                                                            \
        { NAME##_1_1, NAME##_1_2, NAME##_1_3, NAME##_1_4, NAME##_1_5, NAME##_1_6 },                           \
        { NAME##_2_1, NAME##_2_2, NAME##_2_3, NAME##_2_4, NAME##_2_5, NAME##_2_6 },                           \
    };
/* clang-format on */

RB_KERNELS(dk, dk_args)

/* The filter gradient turns the roles around: a block is 16 output
 * channels x 6 filter taps, summed over the pixels of an image. Per pixel:
 * two vectors of dy (dy transposed to [pixel][channel]), six broadcast input
 * floats (the taps' offsets from the pixel's window corner), twelve FMAs.
 * The sums start from and go back to acc ([6][16]), so a block adds up
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

KERNEL_INLINE void fk_body(const fk_args *a, const int nb, const int ut)
{
    rblock b;
    int64_t o[UR];
    rb_offsets(o, a->off, ut);
    rb_load(&b, a->acc, nb, ut);
    for (int64_t i = 0; i < a->nimg; i++) {
        const float *g = a->g + i * a->gimg + a->oh0 * a->ow * a->gstride;
        for (int64_t oh = a->oh0; oh < a->oh1; oh++, g += a->ow * a->gstride)
            rb_run(&b, g, a->gstride, a->x + i * a->ximg + oh * a->sh * a->wd, a->sw, o, a->ow, nb, ut);
    }
    rb_store(&b, a->acc, nb, ut);
}

RB_KERNELS(fk, fk_args)

static int64_t padded_h(const conv_geom *q) { return q->h + 2 * q->ph; }
static int64_t padded_w(const conv_geom *q) { return q->w + 2 * q->pw; }
static bool padded(const conv_geom *q) { return q->ph || q->pw; }
static int64_t oc_rounded(const conv_geom *q) { return (q->oc + 7) / 8 * 8; }
static int64_t pad_floats(const conv_geom *q) { return padded(q) ? q->c * padded_h(q) * padded_w(q) : 0; }

int64_t conv_direct_scratch(const conv_geom *q, int nthreads)
{
    return oc_rounded(q) * conv_k(q) + (int64_t)nthreads * pad_floats(q);
}

/* wp[block][k][width] = w[block*16 + l][k], zero past OC. With `flip`, w is
 * the filter of the convolution this one transposes, [q->c][q->oc][KH][KW],
 * read with its channels swapped and its taps turned by 180 degrees. */
static void pack_filter(const conv_geom *q, const float *restrict w, bool flip, float *restrict wp, int64_t oc0,
                        int64_t oc1)
{
    const int64_t K = conv_k(q), ocr = oc_rounded(q), KK = q->kh * q->kw;
    for (int64_t o = oc0; o < oc1; o++) {
        int64_t b0 = o / OB * OB, width = ocr - b0 < OB ? ocr - b0 : OB, l = o - b0;
        float *restrict d = wp + b0 * K + l;
        if (o >= q->oc) {
            for (int64_t k = 0; k < K; k++)
                d[k * width] = 0.0f;
        } else if (!flip) {
            for (int64_t k = 0; k < K; k++)
                d[k * width] = w[o * K + k];
        } else {
            for (int64_t c = 0, k = 0; c < q->c; c++)
                for (int64_t t = KK - 1; t >= 0; t--, k++)
                    d[k * width] = w[(c * q->oc + o) * KK + t];
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

/* y[oc0 .. oc0+16)[p_lo .. p_hi) of one image, from its (padded) planes xi */
static void run_block(const conv_geom *q, const float *xi, const float *wp, int64_t oc0, float *restrict yi,
                      int64_t p_lo, int64_t p_hi)
{
    const int64_t K = conv_k(q), P = conv_p(q), Wp = padded_w(q), ocr = oc_rounded(q);
    const int64_t width = ocr - oc0 < OB ? ocr - oc0 : OB, live = q->oc - oc0 < width ? q->oc - oc0 : width;
    float out[UR * OB];
    int64_t off[UR];
    dk_args a = { .x = xi,
                  .off = off,
                  .wp = wp + oc0 * K,
                  .c = q->c,
                  .kh = q->kh,
                  .kw = q->kw,
                  .wd = Wp,
                  .hw = padded_h(q) * Wp,
                  .out = out };
    const dk_fn *fns = dk_table[width / 8 - 1];
    /* blocks as equal as they can be (49 pixels: 4 x 6 + 5 x 5, not 8 x 6 + 1:
     * a 1-pixel block does 2 FMAs a filter tap for 3 loads) */
    const int64_t npx = p_hi - p_lo, nblk = (npx + UR - 1) / UR, base = npx / nblk, extra = npx % nblk;
    int64_t oh = p_lo / q->ow, ow = p_lo % q->ow; /* of pixel p0 */
    for (int64_t bi = 0, p0 = p_lo, ur; bi < nblk; bi++, p0 += ur) {
        ur = base + (bi < extra);
        for (int j = 0, h = (int)oh, w = (int)ow; j < ur; j++) {
            off[j] = h * q->sh * Wp + w * q->sw;
            if (++w == q->ow)
                w = 0, h++;
        }
        fns[ur - 1](&a);
        for (int64_t l = 0; l < live; l++) {
            float *restrict yo = yi + (oc0 + l) * P + p0;
            for (int j = 0; j < ur; j++)
                yo[j] = out[j * OB + l];
        }
        ow += ur;
        oh += ow / q->ow;
        ow %= q->ow;
    }
}

/* Output pixels per chunk: the input rows a chunk reads stay in cache while
 * every channel block runs over them (a multiple of UR, or all of P). */
#define CHUNK_BYTES (256 * 1024)
static int64_t chunk_pixels(const conv_geom *q)
{
    int64_t row_bytes = q->c * padded_w(q) * q->sh * (int64_t)sizeof(float);
    int64_t rows = (CHUNK_BYTES - q->c * padded_w(q) * q->kh * (int64_t)sizeof(float)) / row_bytes;
    int64_t px = (rows < 1 ? 1 : rows) * q->ow;
    px = (px + UR - 1) / UR * UR;
    return px < conv_p(q) ? px : conv_p(q);
}

static void direct_run(const conv_geom *q, const float *x, const float *w, bool flip, float *y, float *scratch,
                       int nthreads)
{
    const int64_t ocr = oc_rounded(q), nblk = (ocr + OB - 1) / OB, P = conv_p(q), cp = chunk_pixels(q);
    const int64_t nch = (P + cp - 1) / cp, items = q->n * nch * nblk, CHW = q->c * q->h * q->w;
    float *wp = scratch;
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        int t = omp_get_thread_num(), nt = omp_get_num_threads();
        pack_filter(q, w, flip, wp, ocr * t / nt, ocr * (t + 1) / nt);
#pragma omp barrier
        float *xp = scratch + ocr * conv_k(q) + t * pad_floats(q);
        int64_t have = -1; /* the image now in xp */
        /* items (image, chunk, block) in that order: a thread's run of
         * blocks reuses one chunk of one image */
        for (int64_t it = items * t / nt, end = items * (t + 1) / nt; it < end; it++) {
            int64_t i = it / (nch * nblk), ch = it / nblk % nch, b = it % nblk;
            const float *xi = x + i * CHW;
            if (padded(q)) {
                if (have != i)
                    pad_image(q, xi, xp);
                have = i;
                xi = xp;
            }
            int64_t lo = ch * cp, hi = lo + cp < P ? lo + cp : P;
            run_block(q, xi, wp, b * OB, y + i * q->oc * P, lo, hi);
        }
    }
}

void conv_direct_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads)
{
    direct_run(q, x, w, false, y, scratch, nthreads);
}

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

void conv_direct_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch, int nthreads)
{
    const conv_geom t = conv_direct_transposed(q);
    direct_run(&t, dy, w, true, dx, scratch, nthreads);
}

/* Scratch for conv_direct_bwd_filter (from exec_kscratch: 64-byte aligned):
 * the taps' offsets, dy^T of every image, every padded image, and the
 * packed gradient [block][K][16]. */
int64_t conv_direct_filter_scratch(const conv_geom *q)
{
    const int64_t nblk = (oc_rounded(q) + OB - 1) / OB;
    return q->n * conv_p(q) * oc_rounded(q) + q->n * pad_floats(q) + nblk * conv_k(q) * OB + 2 * conv_k(q);
}

/* dw = sum over images of dy[n] x col(x[n])^T, [OC][C][KH][KW], overwritten.
 * Items (channel block, 6 taps) are split over the threads. A batch whose
 * dy^T and images fit CHUNK_BYTES runs each item over all of it in one call;
 * a bigger one goes image by image, in chunks of output rows that every
 * item reads while they are in cache. */
void conv_direct_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch,
                            int nthreads)
{
    const int64_t ocr = oc_rounded(q), nblk = (ocr + OB - 1) / OB, K = conv_k(q), P = conv_p(q);
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
            memset(acc + b * K * OB, 0, (size_t)(K * OB) * sizeof *acc);
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
                    int64_t b = it / ntap, t0 = it % ntap * UR, width = ocr - b * OB < OB ? ocr - b * OB : OB;
                    int ut = K - t0 < UR ? (int)(K - t0) : UR;
                    fk_args a = { .x = xs + i * ximg,
                                  .off = toff + t0,
                                  .g = gT + i * P * ocr + b * OB,
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
                                  .acc = acc + (b * K + t0) * OB };
                    fk_table[width / 8 - 1][ut - 1](&a);
                }
            }
#pragma omp barrier
            /* unpack: dw[o][k] = acc[o/16][k][o%16] */
#pragma omp for schedule(static)
        for (int64_t o = 0; o < q->oc; o++) {
            const float *restrict s = acc + (o / OB) * K * OB + o % OB;
            for (int64_t k = 0; k < K; k++)
                dw[o * K + k] = s[k * OB];
        }
    }
}

#else /* not x86-64: no direct kernel; conv.c asks conv_direct_supported() first */
bool conv_direct_supported(void) { return false; }
int64_t conv_direct_scratch(const conv_geom *q, int nthreads)
{
    (void)q, (void)nthreads;
    return 0;
}
static void direct_run(const conv_geom *q, const float *x, const float *w, bool flip, float *y, float *scratch,
                       int nthreads)
{
    (void)q, (void)x, (void)w, (void)y, (void)scratch, (void)nthreads;
}
#endif
