/* conv.c -- Conv2D and its two backprops, by im2col + GEMM on OpenBLAS (or
 * by conv_direct.c's kernels where they are faster).
 *
 * Layout: x [N,C,H,W], filter [OC,C,KH,KW], y [N,OC,OH,OW] with
 * OH = (H + 2*pad_h - KH) / stride_h + 1 (symmetric zero padding). Per image
 * the filter is a [OC, K] matrix (K = C*KH*KW) and im2col turns the image
 * into col [K, P] (P = OH*OW), so
 *     forward          y[n]  = W x col(x[n])                  [OC,P]
 *     backprop input   dx[n] = col2im(W^T x dy[n])             [K,P] -> [C,H,W]
 *     backprop filter  dW    = sum_n dy[n] x col(x[n])^T       [OC,K]
 * A 1x1 stride-1 unpadded convolution needs no im2col: col(x[n]) is x[n]
 * itself viewed as [C, H*W].
 *
 * Threads: with at least as many images as threads, each thread takes whole
 * images (its own im2col buffer, a single-threaded sgemm: OpenBLAS runs one
 * thread inside a parallel region), which avoids a fork/join per GEMM and
 * parallelizes im2col for free. With fewer images (batch 1), images run one
 * after another, im2col/col2im split over channels, sgemm threaded.
 * Every buffer comes from the kernel's scratch (exec_kscratch): no mallocs.
 *
 * Each op runs one of three algorithms: this im2col way, conv_direct.c's
 * kernels (which write no col) or conv_winograd.c's (3x3 stride 1 only).
 * `auto` measures the ones that apply the first time it meets a shape and
 * keeps the fastest for that shape (conv_pick, at the end of this file);
 * exec_conv_algo_set and FATHOM_CONV_ALGO can force one. */
#include "conv.h"

#include <cblas.h>
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static bool conv_is_1x1(const conv_geom *q)
{
    return q->kh == 1 && q->kw == 1 && q->sh == 1 && q->sw == 1 && q->ph == 0 && q->pw == 0;
}

/* The process default; a graph's or a run's settings override it (the
 * kernel context carries the one in force). */
static _Atomic int conv_algo = EXEC_CONV_AUTO;
void exec_conv_algo_set(exec_conv_algo a)
{
    atomic_store(&conv_algo, a == EXEC_CONV_DEFAULT ? EXEC_CONV_AUTO : (int)a);
}
exec_conv_algo exec_conv_algo_get(void) { return (exec_conv_algo)atomic_load(&conv_algo); }

static const char *const conv_algo_names[] = { "default", "auto", "im2col", "direct", "winograd" };
int exec_conv_algo_from_name(const char *name)
{
    for (size_t i = EXEC_CONV_AUTO; i < sizeof conv_algo_names / sizeof conv_algo_names[0]; i++)
        if (strcmp(name, conv_algo_names[i]) == 0)
            return (int)i;
    return -1;
}
exec_status exec_conv_algo_parse(const char *name, exec_conv_algo *a)
{
    int x = name ? exec_conv_algo_from_name(name) : -1;
    if (x < 0)
        return exec_fail(EXEC_ERR_ARG, "unknown convolution algorithm '%s' (use auto, im2col, direct or winograd)",
                         name ? name : "");
    *a = (exec_conv_algo)x;
    return EXEC_OK;
}
const char *exec_conv_algo_name(exec_conv_algo a)
{
    return (unsigned)a < sizeof conv_algo_names / sizeof conv_algo_names[0] ? conv_algo_names[a] : "?";
}

/* Fills oh/ow from the rest and checks everything; `who` names the op. */
static exec_status conv_geom_check(conv_geom *q, const char *who)
{
    if (q->n <= 0 || q->c <= 0 || q->h <= 0 || q->w <= 0 || q->oc <= 0 || q->kh <= 0 || q->kw <= 0)
        return exec_fail(EXEC_ERR_SHAPE, "%s: empty input or filter", who);
    if (q->sh <= 0 || q->sw <= 0 || q->ph < 0 || q->pw < 0)
        return exec_fail(EXEC_ERR_SHAPE, "%s: stride %lldx%lld and padding %lldx%lld must be >0 and >=0", who,
                         (long long)q->sh, (long long)q->sw, (long long)q->ph, (long long)q->pw);
    if (q->ph >= q->kh || q->pw >= q->kw)
        return exec_fail(EXEC_ERR_SHAPE, "%s: padding %lldx%lld must be smaller than the %lldx%lld kernel", who,
                         (long long)q->ph, (long long)q->pw, (long long)q->kh, (long long)q->kw);
    if (q->h + 2 * q->ph < q->kh || q->w + 2 * q->pw < q->kw)
        return exec_fail(EXEC_ERR_SHAPE, "%s: %lldx%lld kernel larger than the padded %lldx%lld input", who,
                         (long long)q->kh, (long long)q->kw, (long long)q->h, (long long)q->w);
    q->oh = (q->h + 2 * q->ph - q->kh) / q->sh + 1;
    q->ow = (q->w + 2 * q->pw - q->kw) / q->sw + 1;
    if (conv_k(q) > INT32_MAX || conv_p(q) > INT32_MAX || q->oc > INT32_MAX)
        return exec_fail(EXEC_ERR_SHAPE, "%s: matrices too large for BLAS", who);
    return EXEC_OK;
}

static int64_t attr(const exec_node *n, int i) { return i < n->nattrs ? n->attrs[i] : 0; }

/* stride/padding from attrs 0..3 (a missing stride is 1) */
/* The geometry of node n: input [nb,c,h,w], filter [oc,c,kh,kw], and the
 * stride and padding of its first four attributes (oh, ow: 0, for
 * conv_geom_check to compute, or the caller to set). */
static conv_geom conv_geom_of(int64_t nb, int64_t c, int64_t h, int64_t w, int64_t oc, int64_t kh, int64_t kw,
                              const exec_node *n)
{
    return (conv_geom){ .n = nb,
                        .c = c,
                        .h = h,
                        .w = w,
                        .oc = oc,
                        .kh = kh,
                        .kw = kw,
                        .sh = n->nattrs > 0 ? n->attrs[0] : 1,
                        .sw = n->nattrs > 1 ? n->attrs[1] : 1,
                        .ph = attr(n, 2),
                        .pw = attr(n, 3) };
}

/* The [ow_lo, ow_hi) range of output columns whose input column
 * ow*sw - pw + kw falls inside [0, W). */
static void col_range(const conv_geom *q, int64_t kw, int64_t *lo, int64_t *hi)
{
    int64_t a = q->pw - kw, b = q->w + q->pw - kw; /* need a <= ow*sw < b */
    int64_t l = a <= 0 ? 0 : (a + q->sw - 1) / q->sw;
    int64_t h = b <= 0 ? 0 : (b + q->sw - 1) / q->sw;
    if (h > q->ow)
        h = q->ow;
    if (l > h)
        l = h;
    *lo = l;
    *hi = h;
}

/* A strided convolution reads every sw-th input column. Rather than gather
 * with a stride in every one of the K*OH row segments of col, each input row
 * is first split once into its sw phases, planes of Wm = ceil(W/sw) floats:
 *     xs[c][ih][r][m] = x[c][ih][m*sw + r]
 * so input column ow*sw + t (t = kw - pw) is plane r = t mod sw, float
 * ow + (t - r)/sw, and every segment becomes a short contiguous copy. The
 * planes of channels [c0, c1) take phase_floats() floats. */
static int64_t phase_w(const conv_geom *q) { return (q->w + q->sw - 1) / q->sw; }

/* A 1x1 window without padding reads one input float per output: im2col
 * gathers it straight from x with the strides (ResNet's downsampling
 * projections, stride 2: a quarter of the input), and col2im scatters
 * back; no phase planes. */
static bool conv_gather(const conv_geom *q) { return q->kh == 1 && q->kw == 1 && q->ph == 0 && q->pw == 0; }
static bool conv_planes(const conv_geom *q) { return q->sw > 1 && !conv_gather(q); }
static int64_t phase_floats(const conv_geom *q, int64_t nc)
{
    return conv_planes(q) ? nc * q->h * q->sw * phase_w(q) : 0;
}

static void phase_split(const conv_geom *q, const float *restrict x, float *restrict xs, int64_t c0, int64_t c1)
{
    const int64_t W = q->w, sw = q->sw, Wm = phase_w(q);
    for (int64_t row = c0 * q->h; row < c1 * q->h; row++) {
        const float *restrict s = x + row * W;
        float *restrict d = xs + (row - c0 * q->h) * sw * Wm;
        for (int64_t r = 0; r < sw; r++)
            for (int64_t m = 0, nm = (W - r + sw - 1) / sw; m < nm; m++)
                d[r * Wm + m] = s[m * sw + r];
    }
}

/* x[c][ih][m*sw + r] = xs[c][ih][r][m], the inverse of phase_split */
static void phase_merge(const conv_geom *q, const float *restrict xs, float *restrict x, int64_t c0, int64_t c1)
{
    const int64_t W = q->w, sw = q->sw, Wm = phase_w(q);
    for (int64_t row = c0 * q->h; row < c1 * q->h; row++) {
        float *restrict d = x + row * W;
        const float *restrict s = xs + (row - c0 * q->h) * sw * Wm;
        for (int64_t r = 0; r < sw; r++)
            for (int64_t m = 0, nm = (W - r + sw - 1) / sw; m < nm; m++)
                d[m * sw + r] = s[r * Wm + m];
    }
}

/* Where row (c, kh, kw) of col reads input row ih = 0: the offset of the
 * float that output column ow = 0 would read, so that column ow of input row
 * ih reads [seg_at + ih * seg_rows + ow] (valid for ow in the col_range of
 * kw). Into x itself at stride 1, else into the planes xs of channels from
 * c0. */
static int64_t seg_at(const conv_geom *q, int64_t c, int64_t c0, int64_t kw)
{
    int64_t t = kw - q->pw;
    if (q->sw == 1)
        return c * q->h * q->w + t;
    int64_t r = ((t % q->sw) + q->sw) % q->sw;
    return ((c - c0) * q->h * q->sw + r) * phase_w(q) + (t - r) / q->sw;
}
static int64_t seg_rows(const conv_geom *q) { return q->sw == 1 ? q->w : q->sw * phase_w(q); }

/* Short row segments (OW is often 7..56): a call to memcpy/memset costs
 * more than the copy, and GCC turns a plain copy loop back into one. These
 * move 8 floats a step in fixed-size pieces the compiler inlines. */
static inline void copy_seg(float *restrict d, const float *restrict s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        __builtin_memcpy(d + i, s + i, 8 * sizeof *d);
    if (i + 4 <= n) {
        __builtin_memcpy(d + i, s + i, 4 * sizeof *d);
        i += 4;
    }
    switch (n - i) {
    case 3: d[i + 2] = s[i + 2]; /* fall through */
    case 2: d[i + 1] = s[i + 1]; /* fall through */
    case 1: d[i] = s[i];
    }
}
static inline void zero_seg(float *d, int64_t n)
{
    static const float z[8];
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        __builtin_memcpy(d + i, z, sizeof z);
    for (; i < n; i++)
        d[i] = 0;
}

/* What im2col reads: x itself at stride 1, else the phase planes of
 * channels [c0, c1), split into xs (phase_floats(q, c1 - c0) floats). */
static const float *conv_src(const conv_geom *q, const float *x, float *xs, int64_t c0, int64_t c1)
{
    if (!conv_planes(q))
        return x;
    phase_split(q, x, xs, c0, c1);
    return xs;
}

/* The columns of output rows [oh0, oh1) of col[K,P], channels [c0, c1),
 * from src (conv_src): into col[K, (oh1-oh0)*OW], rows ld floats apart (ld =
 * P for a whole image, G*P when G images share one col buffer, the tile's
 * width for a tile). */
static void im2col_rows(const conv_geom *q, const float *src, float *restrict col, int64_t ld, int64_t c0, int64_t c1,
                        int64_t oh0, int64_t oh1)
{
    const int64_t H = q->h, OW = q->ow, rs = seg_rows(q);
    const bool same = q->sh == 1 && q->sw == 1 && OW == q->w;
    if (conv_gather(q)) { /* col[c][oh OW + ow] = x[c][oh sh][ow sw] */
        const int64_t W = q->w, sh = q->sh, sw = q->sw;
        for (int64_t c = c0; c < c1; c++)
            for (int64_t oh = oh0; oh < oh1; oh++) {
                const float *restrict s = src + (c * H + oh * sh) * W;
                float *restrict d = col + c * ld + (oh - oh0) * OW;
                if (sw == 1)
                    copy_seg(d, s, OW);
                else
                    for (int64_t ow = 0; ow < OW; ow++)
                        d[ow] = s[ow * sw];
            }
        return;
    }
    for (int64_t c = c0; c < c1; c++)
        for (int64_t kh = 0; kh < q->kh; kh++)
            for (int64_t kw = 0; kw < q->kw; kw++) {
                float *restrict row = col + ((c * q->kh + kh) * q->kw + kw) * ld - oh0 * OW;
                const float *from = src + seg_at(q, c, c0, kw);
                int64_t lo, hi;
                col_range(q, kw, &lo, &hi);
                if (same) {
                    /* "same" stride-1 rows are as long in col as in x: the
                     * valid output rows [a, b) are one contiguous copy, then
                     * the padding columns it wrapped over are zeroed */
                    int64_t a = q->ph - kh > oh0 ? q->ph - kh : oh0, b = H + q->ph - kh < oh1 ? H + q->ph - kh : oh1;
                    if (b < a)
                        b = a;
                    zero_seg(row + oh0 * OW, (a - oh0) * OW);
                    zero_seg(row + b * OW, (oh1 - b) * OW);
                    if (b == a || hi <= lo) {
                        zero_seg(row + a * OW, (b - a) * OW);
                        continue;
                    }
                    float *restrict d = row + a * OW;
                    const float *s = from + (a - q->ph + kh) * rs;
                    memcpy(d + lo, s + lo, (size_t)((b - a) * OW - lo - (OW - hi)) * sizeof *d);
                    if (lo > 0 || hi < OW)
                        for (int64_t r = 0; r < b - a; r++) {
                            zero_seg(d + r * OW, lo);
                            zero_seg(d + r * OW + hi, OW - hi);
                        }
                    continue;
                }
                for (int64_t oh = oh0; oh < oh1; oh++) {
                    float *restrict d = row + oh * OW;
                    int64_t ih = oh * q->sh - q->ph + kh;
                    if (ih < 0 || ih >= H) {
                        zero_seg(d, OW);
                        continue;
                    }
                    zero_seg(d, lo);
                    copy_seg(d + lo, from + ih * rs + lo, hi - lo);
                    zero_seg(d + hi, OW - hi);
                }
            }
}

/* col[K,P] of channels [c0, c1) of one whole image x [C,H,W], rows ld apart */
static void im2col(const conv_geom *q, const float *x, float *restrict col, float *xs, int64_t ld, int64_t c0,
                   int64_t c1)
{
    im2col_rows(q, conv_src(q, x, xs, c0, c1), col, ld, c0, c1, 0, q->oh);
}

/* col2im in three steps, so that tiles of output rows can be added one by
 * one: col2im_begin zeroes the accumulator of channels [c0, c1) (dx itself
 * at stride 1, else the phase planes xs) and returns it; col2im_rows adds
 * the columns of output rows [oh0, oh1) (rows ld apart) onto it; col2im_end
 * writes the planes back into dx. Every cell of those channels is written
 * (cells no window covers get zero). */
static float *col2im_begin(const conv_geom *q, float *dx, float *xs, int64_t c0, int64_t c1)
{
    bool planes = conv_planes(q);
    float *acc = planes ? xs : dx;
    int64_t n = planes ? phase_floats(q, c1 - c0) : (c1 - c0) * q->h * q->w;
    memset(acc + (planes ? 0 : c0 * q->h * q->w), 0, (size_t)n * sizeof *acc);
    return acc;
}

static void col2im_rows(const conv_geom *q, const float *restrict col, float *acc, int64_t ld, int64_t c0, int64_t c1,
                        int64_t oh0, int64_t oh1)
{
    const int64_t H = q->h, OW = q->ow, rs = seg_rows(q);
    if (conv_gather(q)) { /* dx[c][oh sh][ow sw] += col[c][oh OW + ow]: each cell once at most */
        const int64_t W = q->w, sh = q->sh, sw = q->sw;
        for (int64_t c = c0; c < c1; c++)
            for (int64_t oh = oh0; oh < oh1; oh++) {
                const float *restrict s = col + c * ld + (oh - oh0) * OW;
                float *restrict d = acc + (c * H + oh * sh) * W;
                for (int64_t ow = 0; ow < OW; ow++)
                    d[ow * sw] += s[ow];
            }
        return;
    }
    for (int64_t c = c0; c < c1; c++)
        for (int64_t kh = 0; kh < q->kh; kh++)
            for (int64_t kw = 0; kw < q->kw; kw++) {
                const float *restrict row = col + ((c * q->kh + kh) * q->kw + kw) * ld - oh0 * OW;
                float *to = acc + seg_at(q, c, c0, kw);
                int64_t lo, hi;
                col_range(q, kw, &lo, &hi);
                for (int64_t oh = oh0; oh < oh1; oh++) {
                    int64_t ih = oh * q->sh - q->ph + kh;
                    if (ih < 0 || ih >= H)
                        continue;
                    const float *restrict s = row + oh * OW;
                    float *restrict d = to + ih * rs;
#pragma omp simd
                    for (int64_t ow = lo; ow < hi; ow++)
                        d[ow] += s[ow];
                }
            }
}

static void col2im_end(const conv_geom *q, float *dx, const float *xs, int64_t c0, int64_t c1)
{
    if (conv_planes(q))
        phase_merge(q, xs, dx, c0, c1);
}

/* dx[C,H,W] (channels [c0, c1)) = col[K,P] of a whole image (rows ld
 * apart) summed back onto the image */
static void col2im(const conv_geom *q, const float *restrict col, float *dx, float *xs, int64_t ld, int64_t c0,
                   int64_t c1)
{
    col2im_rows(q, col, col2im_begin(q, dx, xs, c0, c1), ld, c0, c1, 0, q->oh);
    col2im_end(q, dx, xs, c0, c1);
}

/* A wide image (G = 1 below) is done in tiles of output rows, so that its
 * col buffer stays near the cache (VGG's first layers at 224x224 would
 * otherwise need 115 MB of col per image): TILE_FLOATS of col per tile, but
 * at least TILE_MIN_COLS columns, for GEMMs that are not too thin. */
#define TILE_FLOATS (256 * 1024)
#define TILE_MIN_COLS 512
static int64_t tile_rows(const conv_geom *q)
{
    int64_t by_size = TILE_FLOATS / (conv_k(q) * q->ow), by_cols = (TILE_MIN_COLS + q->ow - 1) / q->ow;
    int64_t r = by_size > by_cols ? by_size : by_cols;
    return r < 1 ? 1 : r > q->oh ? q->oh : r;
}

/* Enough work that splitting im2col / col2im over channels pays. */
static bool par_channels(const conv_geom *q, int nthreads) { return nthreads > 1 && conv_k(q) * conv_p(q) > 32768; }

/* Whole images per thread when there are enough of them. */
static bool par_images(const conv_geom *q, int nthreads) { return nthreads > 1 && q->n >= nthreads; }

/* Small images make thin GEMMs (N = P columns): a thread then stacks the
 * columns of G of its images side by side into one [K, G*P] buffer, so one
 * GEMM has G*P columns (at the price of a copy of the output in or out).
 * G = 1 when P is wide enough on its own. */
#define GROUP_COLS 1024
/* A 1x1 stride-1 convolution's product reads x and writes y in place: the
 * forward and input-gradient GEMMs take each image alone (no copy in or
 * out) once it has ONE_MIN_COLS columns and ONE_MIN_K channels to sum
 * (ResNet's 16x16 and 8x8 stages; below, the copies into one wider GEMM
 * measured faster). The filter gradient, whose images are its sum, keeps
 * its groups. */
#define ONE_MIN_COLS 64
#define ONE_MIN_K 32
/* A 1x1 group's col is a plain copy of its images, which the GEMM streams
 * through once: its bound is 4x an im2col tile's. ResNet-50's 7x7 maps at
 * batch 16 (49 columns an image): 2048 -> 512 channels ran in groups of 2
 * images under the tile's bound, 98 columns a GEMM (2 blocks of 48 and 2
 * columns in a block of 32), 7.4-7.8 ms; in groups of 8, 5.1-5.2 ms. */
#define ONE_GROUP_FLOATS (4 * TILE_FLOATS)
static int64_t conv_group(const conv_geom *q, int nthreads)
{
    int64_t P = conv_p(q), per = (q->n + nthreads - 1) / nthreads;
    if (P >= GROUP_COLS / 2)
        return 1;
    int64_t G = (GROUP_COLS + P - 1) / P, fit = (conv_is_1x1(q) ? ONE_GROUP_FLOATS : TILE_FLOATS) / (conv_k(q) * P);
    G = G < fit ? G : fit;
    G = G < per ? G : per;
    if (G <= 1)
        return 1;
    /* groups of equal size: 4 images capped at 3 a group make 2 + 2, not
     * 3 + a thin GEMM of 1 */
    int64_t groups = (per + G - 1) / G;
    return (per + groups - 1) / groups;
}

/* Small maps at a small batch: a thread's group of images would still make
 * a GEMM of fewer than WHOLE_COLS columns (VGG small's 4x4 maps at batch 8:
 * 4 images of 16 pixels, 64 columns, where the AVX-512 tiles' blocks are 48
 * wide). The whole batch then goes side by side into one col [K, N*P] (at
 * most WHOLE_FLOATS floats), and one GEMM on all the threads computes every
 * image: im2col, the copies in or out and col2im split by image. */
#define WHOLE_COLS 128
#define WHOLE_FLOATS (4 * TILE_FLOATS)

static bool whole_padded(const conv_geom *q) { return q->sh == 1 && q->sw == 1; }
static int64_t padded_floats(const conv_geom *q) { return q->c * (q->h + 2 * q->ph) * (q->w + 2 * q->pw); }
/* a thread's scratch in whole mode: the padded copy or the phase planes */
static int64_t whole_xs_floats(const conv_geom *q)
{
    return whole_padded(q) ? padded_floats(q) : phase_floats(q, q->c);
}

/* How a conv op lays out its per-thread scratch (the same for all three):
 * col [K, cw] (none for a 1x1 on whole images), grouped, the stacked
 * y or dy [OC, G*P] (yb floats), strided, the phase planes; per floats in
 * all. The whole batch (whole): one col [K, N*P] and one [OC, N*P], then
 * each thread's phase planes; per floats in all, shared. */
typedef struct conv_bufs {
    bool one, pimg, whole;      /* 1x1 without im2col; whole images per thread; the whole batch in one GEMM */
    int64_t G, tr, cw, yb, per; /* images per GEMM, tile rows, col width */
} conv_bufs;

/* sum: the channels a 1x1 product sums over (C forward, OC for the input
 * gradient; 0 for the filter gradient, which keeps the groups) */
static conv_bufs conv_bufs_of(const conv_geom *q, int nthreads, int64_t sum)
{
    conv_bufs b = { .one = conv_is_1x1(q), .pimg = par_images(q, nthreads), .tr = tile_rows(q) };
    int64_t P = conv_p(q);
    b.G = b.pimg && !(b.one && P >= ONE_MIN_COLS && sum >= ONE_MIN_K) ? conv_group(q, nthreads) : 1;
    b.cw = b.G > 1 ? b.G * P : b.pimg ? b.tr * q->ow : P;
    b.yb = b.G > 1 ? q->oc * b.G * P : 0;
    b.per = (b.one && b.G == 1 ? 0 : conv_k(q) * b.cw) + b.yb + (b.one ? 0 : phase_floats(q, q->c));
    const int64_t NP = q->n * P;
    if (b.pimg && !b.one && b.G * P < WHOLE_COLS && NP >= WHOLE_COLS && conv_k(q) * NP <= WHOLE_FLOATS) {
        b.whole = true, b.pimg = false, b.G = q->n, b.cw = NP, b.yb = q->oc * NP;
        b.per = conv_k(q) * NP + b.yb + nthreads * whole_xs_floats(q);
    }
    return b;
}

/* A small stride-1 image (the whole batch's) goes through a zero-padded
 * copy xp [C, H + 2 PH, W + 2 PW]: each row of col is then OH plain copies
 * of OW floats (im2col_rows zeroes the padding segment by segment, and at
 * OW = 4 that costs more than the copies: 20 us an image of VGG small's
 * 4x4x128). col2im adds into the padded copy the same way. Strided
 * convolutions keep im2col_rows' phase planes. */
static void im2col_padded(const conv_geom *q, const float *restrict x, float *restrict col, float *restrict xp,
                          int64_t ld)
{
    const int64_t H = q->h, W = q->w, Hp = H + 2 * q->ph, Wp = W + 2 * q->pw, OH = q->oh, OW = q->ow;
    memset(xp, 0, (size_t)padded_floats(q) * sizeof *xp);
    for (int64_t c = 0; c < q->c; c++) {
        for (int64_t ih = 0; ih < H; ih++)
            copy_seg(xp + (c * Hp + ih + q->ph) * Wp + q->pw, x + (c * H + ih) * W, W);
    }
    /* rows of 4 and 8 floats (VGG small's 4x4 and 8x8 maps) as fixed-size
     * copies the compiler turns into one vector move each */
#define PADDED_ROWS(COPY)                                                         \
    for (int64_t c = 0; c < q->c; c++)                                            \
        for (int64_t kh = 0; kh < q->kh; kh++)                                    \
            for (int64_t kw = 0; kw < q->kw; kw++) {                              \
                float *restrict row = col + ((c * q->kh + kh) * q->kw + kw) * ld; \
                const float *restrict s = xp + (c * Hp + kh) * Wp + kw;           \
                for (int64_t oh = 0; oh < OH; oh++)                               \
                    COPY;                                                         \
            }
    if (OW == 4)
        PADDED_ROWS(__builtin_memcpy(row + oh * 4, s + oh * Wp, 4 * sizeof *row))
    else if (OW == 8)
        PADDED_ROWS(__builtin_memcpy(row + oh * 8, s + oh * Wp, 8 * sizeof *row))
    else
        PADDED_ROWS(copy_seg(row + oh * OW, s + oh * Wp, OW))
#undef PADDED_ROWS
}

static void col2im_padded(const conv_geom *q, const float *restrict col, float *restrict dx, float *restrict xp,
                          int64_t ld)
{
    const int64_t H = q->h, W = q->w, Hp = H + 2 * q->ph, Wp = W + 2 * q->pw, OH = q->oh, OW = q->ow;
    memset(xp, 0, (size_t)padded_floats(q) * sizeof *xp);
    /* OW a constant where it is 4 or 8: each row's sum one vector add */
#define PADDED_ADD(OWC)                                                                           \
    for (int64_t c = 0; c < q->c; c++)                                                            \
        for (int64_t kh = 0; kh < q->kh; kh++)                                                    \
            for (int64_t kw = 0; kw < q->kw; kw++) {                                              \
                const float *restrict row = col + ((c * q->kh + kh) * q->kw + kw) * ld;           \
                float *restrict d = xp + (c * Hp + kh) * Wp + kw;                                 \
                for (int64_t oh = 0; oh < OH; oh++)                                               \
                    _Pragma("omp simd") for (int64_t ow = 0; ow < (OWC); ow++) d[oh * Wp + ow] += \
                        row[oh * (OWC) + ow];                                                     \
            }
    if (OW == 4)
        PADDED_ADD(4)
    else if (OW == 8)
        PADDED_ADD(8)
    else
        PADDED_ADD(OW)
#undef PADDED_ADD
    for (int64_t c = 0; c < q->c; c++)
        for (int64_t ih = 0; ih < H; ih++)
            copy_seg(dx + (c * H + ih) * W, xp + (c * Hp + ih + q->ph) * Wp + q->pw, W);
}

/* The whole batch's col [K, N*P] (whole), images side by side, on nthreads
 * threads; xs: each thread's whole_xs_floats. With dy: dyb [OC, N*P]
 * gathered from dy [N, OC, P] too (the filter gradient). */
static void whole_im2col(const conv_geom *q, int nthreads, const float *X, float *col, float *xs, const float *DY,
                         float *dyb)
{
    const int64_t P = conv_p(q), NP = q->n * P, CHW = q->c * q->h * q->w, xsn = whole_xs_floats(q);
#pragma omp parallel for num_threads(nthreads) schedule(static)
    for (int64_t i = 0; i < q->n; i++) {
        float *xt = xs + omp_get_thread_num() * xsn;
        if (whole_padded(q))
            im2col_padded(q, X + i * CHW, col + i * P, xt, NP);
        else
            im2col(q, X + i * CHW, col + i * P, xt, NP, 0, q->c);
        for (int64_t o = 0; DY && o < q->oc; o++)
            memcpy(dyb + o * NP + i * P, DY + (i * q->oc + o) * P, (size_t)P * sizeof *dyb);
    }
}

/* Between y [N, OC, P] and yb [OC, N*P]: into yb (to_batch), else out of it */
static void whole_copy(const conv_geom *q, int nthreads, float *dst, const float *src, bool to_batch)
{
    const int64_t P = conv_p(q), NP = q->n * P;
#pragma omp parallel for collapse(2) num_threads(nthreads) schedule(static)
    for (int64_t i = 0; i < q->n; i++)
        for (int64_t o = 0; o < q->oc; o++) {
            const int64_t img = (i * q->oc + o) * P, bat = o * NP + i * P;
            memcpy(dst + (to_batch ? bat : img), src + (to_batch ? img : bat), (size_t)P * sizeof *dst);
        }
}

static void gemm(bool ta, bool tb, int64_t m, int64_t nn, int64_t kk, const float *a, int64_t lda, const float *b,
                 int64_t ldb, float beta, float *c, int64_t ldc)
{
    /* inside an image-parallel region one thread each; outside, the team
     * the BLAS would take */
    exec_gemm(NULL, omp_in_parallel() ? 1 : omp_get_max_threads(), ta, tb, m, nn, kk, a, lda, b, ldb, beta, c, ldc);
}

/* ---- Conv2D: y [N,OC,OH,OW] = x [N,C,H,W] (*) filter [OC,C,KH,KW] ------- */
exec_status op_shape_Conv2D(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *f = exec_gin(g, n, 1);
    if (x->ndim != 4 || f->ndim != 4 || x->dtype != EXEC_F32 || f->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "Conv2D: wants float x [N,C,H,W] and filter [OC,C,KH,KW] (got %d-D, %d-D)",
                         x->ndim, f->ndim);
    if (x->shape[1] != f->shape[1])
        return exec_fail(EXEC_ERR_SHAPE, "Conv2D: input has %lld channels, the filter %lld", (long long)x->shape[1],
                         (long long)f->shape[1]);
    conv_geom q =
        conv_geom_of(x->shape[0], x->shape[1], x->shape[2], x->shape[3], f->shape[0], f->shape[2], f->shape[3], n);
    exec_status s = conv_geom_check(&q, "Conv2D");
    if (s)
        return s;
    exec_shape_set(out, EXEC_F32, 4, (int64_t[]){ q.n, q.oc, q.oh, q.ow });
    return EXEC_OK;
}

static conv_geom geom_of(const exec_tensor *x, const exec_tensor *f, const exec_tensor *y, const exec_node *n)
{
    conv_geom q =
        conv_geom_of(x->shape[0], x->shape[1], x->shape[2], x->shape[3], f->shape[0], f->shape[2], f->shape[3], n);
    q.oh = y->shape[2], q.ow = y->shape[3];
    return q;
}

/* y = x (*) w by im2col + GEMM */
static exec_status fwd_im2col(exec_kctx *k, const conv_geom *qp, const float *X, const float *Wt, float *Y)
{
    const conv_geom q = *qp;
    const int64_t K = conv_k(&q), P = conv_p(&q), CHW = q.c * q.h * q.w, T = k->nthreads;
    const conv_bufs cb = conv_bufs_of(&q, k->nthreads, q.c); /* the scratch layout */
    const bool one = cb.one, pimg = cb.pimg;
    const int64_t G = cb.G, TR = cb.tr, CW = cb.cw, YB = cb.yb, per = cb.per;
    float *buf = NULL;
    if (per && !(buf = exec_kscratch(k, (size_t)((pimg ? T : 1) * per) * sizeof *buf)))
        return exec_fail(EXEC_ERR_NOMEM, "Conv2D: no memory for the %lldx%lld im2col buffer", (long long)K,
                         (long long)CW);
    if (cb.whole) { /* y [OC, N*P] = W x col */
        float *yb = buf + K * CW;
        whole_im2col(&q, (int)T, X, buf, yb + YB, NULL, NULL);
        exec_gemm(NULL, (int)T, 0, 0, q.oc, CW, K, Wt, K, buf, CW, 0.0f, yb, CW);
        whole_copy(&q, (int)T, Y, yb, false);
        return EXEC_OK;
    }
    if (pimg) {
#pragma omp parallel num_threads(k->nthreads)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            float *col = buf + t * per, *yb = col + K * CW, *xs = yb + YB;
            int64_t lo = q.n * t / nt, hi = q.n * (t + 1) / nt;
            for (int64_t i0 = lo; i0 < hi; i0 += G) {
                int64_t g = hi - i0 < G ? hi - i0 : G, ld = g * P;
                if (G == 1) {
                    float *y = Y + i0 * q.oc * P;
                    if (one) {
                        gemm(false, false, q.oc, P, K, Wt, K, X + i0 * CHW, P, 0.0f, y, P);
                        continue;
                    }
                    /* tiles of TR output rows: y[:, tile] = W x col(tile) */
                    const float *src = conv_src(&q, X + i0 * CHW, xs, 0, q.c);
                    for (int64_t r0 = 0; r0 < q.oh; r0 += TR) {
                        int64_t r1 = r0 + TR < q.oh ? r0 + TR : q.oh, w = (r1 - r0) * q.ow;
                        im2col_rows(&q, src, col, w, 0, q.c, r0, r1);
                        gemm(false, false, q.oc, w, K, Wt, K, col, w, 0.0f, y + r0 * q.ow, P);
                    }
                    continue;
                }
                for (int64_t j = 0; j < g; j++)
                    im2col(&q, X + (i0 + j) * CHW, col + j * P, xs, ld, 0, q.c);
                gemm(false, false, q.oc, ld, K, Wt, K, col, ld, 0.0f, yb, ld);
                for (int64_t j = 0; j < g; j++)
                    for (int64_t o = 0; o < q.oc; o++)
                        memcpy(Y + ((i0 + j) * q.oc + o) * P, yb + o * ld + j * P, (size_t)P * sizeof *Y);
            }
        }
        return EXEC_OK;
    }
    for (int64_t i = 0; i < q.n; i++) {
        const float *src = X + i * CHW;
        if (!one) {
#pragma omp parallel for num_threads(k->nthreads) if (par_channels(&q, k->nthreads)) schedule(static)
            for (int64_t c = 0; c < q.c; c++)
                im2col(&q, src, buf, buf + K * P + phase_floats(&q, c), P, c, c + 1);
            src = buf;
        }
        gemm(false, false, q.oc, P, K, Wt, K, src, P, 0.0f, Y + i * q.oc * P, P);
    }
    return EXEC_OK;
}

exec_status op_grad_Conv2D(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    const exec_tensor *x = exec_t(g, n->in[0]), *f = exec_t(g, n->in[1]);
    int64_t sh = n->nattrs > 0 ? n->attrs[0] : 1, sw = n->nattrs > 1 ? n->attrs[1] : 1;
    int64_t ph = attr(n, 2), pw = attr(n, 3);
    int64_t xs[4], fs[4];
    memcpy(xs, x->shape, sizeof xs);
    memcpy(fs, f->shape, sizeof fs);
    uint32_t xid = n->in[0], fid = n->in[1], dy = dout[0];
    if (din[0])
        din[0] = exec_op1(g, EXEC_OP_Conv2DBackpropInput, 2, (uint32_t[]){ fid, dy }, 8,
                          (int64_t[]){ sh, sw, ph, pw, xs[0], xs[1], xs[2], xs[3] });
    if (din[1])
        din[1] = exec_op1(g, EXEC_OP_Conv2DBackpropFilter, 2, (uint32_t[]){ xid, dy }, 8,
                          (int64_t[]){ sh, sw, ph, pw, fs[0], fs[1], fs[2], fs[3] });
    return g->status;
}

/* Checks dy against the conv of geometry q; `who` names the op. */
static exec_status check_dy(const exec_tensor *dy, const conv_geom *q, const char *who)
{
    if (dy->ndim != 4 || dy->dtype != EXEC_F32 || dy->shape[0] != q->n || dy->shape[1] != q->oc ||
        dy->shape[2] != q->oh || dy->shape[3] != q->ow)
        return exec_fail(EXEC_ERR_SHAPE, "%s: dy must be [%lld,%lld,%lld,%lld]", who, (long long)q->n, (long long)q->oc,
                         (long long)q->oh, (long long)q->ow);
    return EXEC_OK;
}

/* ---- Conv2DBackpropInput: dx [n,c,h,w] from filter [OC,C,KH,KW] and
 *      dy [N,OC,OH,OW]; attrs stride_h,stride_w,pad_h,pad_w,n,c,h,w ------ */
exec_status op_shape_Conv2DBackpropInput(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *f = exec_gin(g, n, 0), *dy = exec_gin(g, n, 1);
    if (n->nattrs != 8 || f->ndim != 4 || f->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "Conv2DBackpropInput: wants a 4-D filter and 8 attributes");
    conv_geom q =
        conv_geom_of(n->attrs[4], n->attrs[5], n->attrs[6], n->attrs[7], f->shape[0], f->shape[2], f->shape[3], n);
    if (f->shape[1] != q.c)
        return exec_fail(EXEC_ERR_SHAPE, "Conv2DBackpropInput: filter has %lld channels, input_sizes %lld",
                         (long long)f->shape[1], (long long)q.c);
    exec_status s = conv_geom_check(&q, "Conv2DBackpropInput");
    if (s || (s = check_dy(dy, &q, "Conv2DBackpropInput")))
        return s;
    exec_shape_set(out, EXEC_F32, 4, (int64_t[]){ q.n, q.c, q.h, q.w });
    return EXEC_OK;
}

/* dx from w and dy by GEMM + col2im */
static exec_status bwd_input_im2col(exec_kctx *k, const conv_geom *qp, const float *Wt, const float *DY, float *DX)
{
    const conv_geom q = *qp;
    const int64_t K = conv_k(&q), P = conv_p(&q), CHW = q.c * q.h * q.w, T = k->nthreads;
    const conv_bufs cb = conv_bufs_of(&q, k->nthreads, q.oc); /* the scratch layout */
    const bool one = cb.one, pimg = cb.pimg;
    const int64_t G = cb.G, TR = cb.tr, CW = cb.cw, YB = cb.yb, per = cb.per;
    float *buf = NULL;
    if (per && !(buf = exec_kscratch(k, (size_t)((pimg ? T : 1) * per) * sizeof *buf)))
        return exec_fail(EXEC_ERR_NOMEM, "Conv2DBackpropInput: no memory for the %lldx%lld col buffer", (long long)K,
                         (long long)CW);
    if (cb.whole) { /* col [K, N*P] = W^T x dy, then col2im image by image */
        float *dyb = buf + K * CW, *xs = dyb + YB;
        const int64_t xsn = whole_xs_floats(&q);
        whole_copy(&q, (int)T, dyb, DY, true);
        exec_gemm(NULL, (int)T, 1, 0, K, CW, q.oc, Wt, K, dyb, CW, 0.0f, buf, CW);
#pragma omp parallel for num_threads(k->nthreads) schedule(static)
        for (int64_t i = 0; i < q.n; i++) {
            float *xt = xs + omp_get_thread_num() * xsn;
            if (whole_padded(&q))
                col2im_padded(&q, buf + i * P, DX + i * CHW, xt, CW);
            else
                col2im(&q, buf + i * P, DX + i * CHW, xt, CW, 0, q.c);
        }
        return EXEC_OK;
    }
    if (pimg) {
#pragma omp parallel num_threads(k->nthreads)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            float *col = buf + t * per, *dyb = col + K * CW, *xs = dyb + YB;
            int64_t lo = q.n * t / nt, hi = q.n * (t + 1) / nt;
            for (int64_t i0 = lo; i0 < hi; i0 += G) {
                int64_t g = hi - i0 < G ? hi - i0 : G, ld = g * P;
                if (G == 1) {
                    float *dx = DX + i0 * CHW;
                    const float *dy = DY + i0 * q.oc * P;
                    if (one) { /* W^T [K,OC] x dy[i] [OC,P] */
                        gemm(true, false, K, P, q.oc, Wt, K, dy, P, 0.0f, dx, P);
                        continue;
                    }
                    /* tiles of TR output rows: col(tile) = W^T x dy[:, tile], added onto dx */
                    float *acc = col2im_begin(&q, dx, xs, 0, q.c);
                    for (int64_t r0 = 0; r0 < q.oh; r0 += TR) {
                        int64_t r1 = r0 + TR < q.oh ? r0 + TR : q.oh, w = (r1 - r0) * q.ow;
                        gemm(true, false, K, w, q.oc, Wt, K, dy + r0 * q.ow, P, 0.0f, col, w);
                        col2im_rows(&q, col, acc, w, 0, q.c, r0, r1);
                    }
                    col2im_end(&q, dx, xs, 0, q.c);
                    continue;
                }
                for (int64_t j = 0; j < g; j++)
                    for (int64_t o = 0; o < q.oc; o++)
                        memcpy(dyb + o * ld + j * P, DY + ((i0 + j) * q.oc + o) * P, (size_t)P * sizeof *dyb);
                gemm(true, false, K, ld, q.oc, Wt, K, dyb, ld, 0.0f, col, ld);
                for (int64_t j = 0; j < g; j++) {
                    float *dx = DX + (i0 + j) * CHW;
                    if (one) {
                        for (int64_t c = 0; c < q.c; c++)
                            memcpy(dx + c * P, col + c * ld + j * P, (size_t)P * sizeof *dx);
                    } else {
                        col2im(&q, col + j * P, dx, xs, ld, 0, q.c);
                    }
                }
            }
        }
        return EXEC_OK;
    }
    for (int64_t i = 0; i < q.n; i++) {
        float *dx = DX + i * CHW;
        gemm(true, false, K, P, q.oc, Wt, K, DY + i * q.oc * P, P, 0.0f, one ? dx : buf, P);
        if (!one) {
#pragma omp parallel for num_threads(k->nthreads) if (par_channels(&q, k->nthreads)) schedule(static)
            for (int64_t c = 0; c < q.c; c++)
                col2im(&q, buf, dx, buf + K * P + phase_floats(&q, c), P, c, c + 1);
        }
    }
    return EXEC_OK;
}

/* ---- Conv2DBackpropFilter: dW [oc,c,kh,kw] from x [N,C,H,W] and
 *      dy [N,OC,OH,OW]; attrs stride_h,stride_w,pad_h,pad_w,oc,c,kh,kw --- */
exec_status op_shape_Conv2DBackpropFilter(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0), *dy = exec_gin(g, n, 1);
    if (n->nattrs != 8 || x->ndim != 4 || x->dtype != EXEC_F32)
        return exec_fail(EXEC_ERR_SHAPE, "Conv2DBackpropFilter: wants a 4-D input and 8 attributes");
    conv_geom q =
        conv_geom_of(x->shape[0], x->shape[1], x->shape[2], x->shape[3], n->attrs[4], n->attrs[6], n->attrs[7], n);
    if (n->attrs[5] != q.c)
        return exec_fail(EXEC_ERR_SHAPE, "Conv2DBackpropFilter: input has %lld channels, filter_sizes %lld",
                         (long long)q.c, (long long)n->attrs[5]);
    exec_status s = conv_geom_check(&q, "Conv2DBackpropFilter");
    if (s || (s = check_dy(dy, &q, "Conv2DBackpropFilter")))
        return s;
    exec_shape_set(out, EXEC_F32, 4, (int64_t[]){ q.oc, q.c, q.kh, q.kw });
    return EXEC_OK;
}

/* dw from x and dy by im2col + GEMM */
static exec_status bwd_filter_im2col(exec_kctx *k, const conv_geom *qp, const float *X, const float *DY, float *DW)
{
    const conv_geom q = *qp;
    const int64_t K = conv_k(&q), P = conv_p(&q), CHW = q.c * q.h * q.w, T = k->nthreads, OK_ = q.oc * K;
    const conv_bufs cb = conv_bufs_of(&q, k->nthreads, 0); /* the scratch layout */
    const bool one = cb.one, pimg = cb.pimg;
    const int64_t G = cb.G, TR = cb.tr, CW = cb.cw, YB = cb.yb, per = cb.per, nbuf = pimg ? T : 1;
    /* after the threads' scratch: a private dW for every thread but 0, which
     * accumulates into dW itself */
    float *buf = NULL;
    size_t need = (size_t)(nbuf * per + (nbuf - 1) * OK_) * sizeof *buf;
    if (need && !(buf = exec_kscratch(k, need)))
        return exec_fail(EXEC_ERR_NOMEM, "Conv2DBackpropFilter: no memory for the col buffers");
    if (cb.whole) { /* dW = dy [OC, N*P] x col^T [N*P, K] */
        float *dyb = buf + K * CW;
        whole_im2col(&q, (int)T, X, buf, dyb + YB, DY, dyb);
        exec_gemm(NULL, (int)T, 0, 1, q.oc, K, CW, dyb, CW, buf, CW, 0.0f, DW, K);
        return EXEC_OK;
    }
    if (pimg) {
#pragma omp parallel num_threads(k->nthreads)
        {
            int t = omp_get_thread_num(), nt = omp_get_num_threads();
            float *col = buf + t * per, *dyb = col + K * CW, *xs = dyb + YB;
            float *acc = t == 0 ? DW : buf + nbuf * per + (int64_t)(t - 1) * OK_;
            float beta = 0.0f;
            int64_t lo = q.n * t / nt, hi = q.n * (t + 1) / nt;
            for (int64_t i0 = lo; i0 < hi; i0 += G) {
                int64_t g = hi - i0 < G ? hi - i0 : G, ld = g * P;
                if (G == 1) {
                    const float *dy = DY + i0 * q.oc * P;
                    if (one) { /* dy[i] [OC,P] x x[i]^T [P,K] */
                        gemm(false, true, q.oc, K, P, dy, P, X + i0 * CHW, P, beta, acc, K);
                        beta = 1.0f;
                        continue;
                    }
                    /* tiles of TR output rows: dW += dy[:, tile] x col(tile)^T */
                    const float *src = conv_src(&q, X + i0 * CHW, xs, 0, q.c);
                    for (int64_t r0 = 0; r0 < q.oh; r0 += TR) {
                        int64_t r1 = r0 + TR < q.oh ? r0 + TR : q.oh, w = (r1 - r0) * q.ow;
                        im2col_rows(&q, src, col, w, 0, q.c, r0, r1);
                        gemm(false, true, q.oc, K, w, dy + r0 * q.ow, P, col, w, beta, acc, K);
                        beta = 1.0f;
                    }
                    continue;
                }
                /* g images side by side: dy [OC, g*P] x col^T [g*P, K] */
                for (int64_t j = 0; j < g; j++) {
                    if (one)
                        for (int64_t c = 0; c < q.c; c++)
                            memcpy(col + c * ld + j * P, X + (i0 + j) * CHW + c * P, (size_t)P * sizeof *col);
                    else
                        im2col(&q, X + (i0 + j) * CHW, col + j * P, xs, ld, 0, q.c);
                    for (int64_t o = 0; o < q.oc; o++)
                        memcpy(dyb + o * ld + j * P, DY + ((i0 + j) * q.oc + o) * P, (size_t)P * sizeof *dyb);
                }
                gemm(false, true, q.oc, K, ld, dyb, ld, col, ld, beta, acc, K);
                beta = 1.0f;
            }
            if (beta == 0.0f) /* a thread with no image */
                memset(acc, 0, (size_t)OK_ * sizeof *acc);
#pragma omp barrier
            /* dW += the other threads' partial sums, split by element */
            int64_t e0 = OK_ * t / nt, e1 = OK_ * (t + 1) / nt;
            for (int u = 1; u < nt; u++) {
                const float *restrict part = buf + nbuf * per + (int64_t)(u - 1) * OK_;
#pragma omp simd
                for (int64_t e = e0; e < e1; e++)
                    DW[e] += part[e];
            }
        }
        return EXEC_OK;
    }
    for (int64_t i = 0; i < q.n; i++) {
        const float *src = X + i * CHW;
        if (!one) {
#pragma omp parallel for num_threads(k->nthreads) if (par_channels(&q, k->nthreads)) schedule(static)
            for (int64_t c = 0; c < q.c; c++)
                im2col(&q, src, buf, buf + K * P + phase_floats(&q, c), P, c, c + 1);
            src = buf;
        }
        gemm(false, true, q.oc, K, P, DY + i * q.oc * P, P, src, P, i ? 1.0f : 0.0f, DW, K);
    }
    return EXEC_OK;
}

/* ---- choosing the algorithm ---------------------------------------------- */

typedef enum conv_kind { CONV_FWD, CONV_BWD_INPUT, CONV_BWD_FILTER } conv_kind;
static const char *const conv_kind_names[] = { "Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter" };

static bool conv_applies(conv_kind kind, const conv_geom *q, exec_conv_algo a)
{
    (void)kind; /* the direct kernels and Winograd run all three ops */
    switch (a) {
    case EXEC_CONV_DIRECT: return conv_direct_supported();
    case EXEC_CONV_WINOGRAD: return conv_wino_applies(q);
    default: return true;
    }
}

/* Runs op `kind` of q by algorithm a (one that applies): out from in0, in1
 * (x and w; w and dy; x and dy). n: the Conv2D node, whose filter (input 1)
 * Winograd transforms once and keeps across runs while it is unchanged
 * (exec_kcache: an inference graph's filters, which no node writes), else
 * NULL. */
static exec_status conv_run(exec_kctx *k, conv_kind kind, const conv_geom *q, exec_conv_algo a, const exec_node *n,
                            const float *in0, const float *in1, float *out)
{
    const int T = k->nthreads;
    int64_t need = 0;
    float *u = NULL;
    bool have_u = false;
    if (a == EXEC_CONV_WINOGRAD && kind == CONV_FWD && n)
        u = exec_kcache(k, n, n->in[1], n->id + 1, (size_t)conv_wino_filter_floats(q) * sizeof *u, &have_u);
    if (a == EXEC_CONV_IM2COL)
        return kind == CONV_FWD         ? fwd_im2col(k, q, in0, in1, out)
               : kind == CONV_BWD_INPUT ? bwd_input_im2col(k, q, in0, in1, out)
                                        : bwd_filter_im2col(k, q, in0, in1, out);
    conv_geom tq = conv_direct_transposed(q);
    if (a == EXEC_CONV_DIRECT)
        need = kind == CONV_FWD         ? conv_direct_scratch(q, T)
               : kind == CONV_BWD_INPUT ? conv_direct_input_scratch(q, T)
                                        : conv_direct_filter_scratch(q, T);
    else
        need = kind == CONV_FWD         ? conv_wino_scratch(q, T)
               : kind == CONV_BWD_INPUT ? conv_wino_scratch(&tq, T)
                                        : conv_wino_filter_scratch(q, T);
    if (u)
        need -= conv_wino_filter_floats(q);
    float *s = exec_kscratch(k, (size_t)need * sizeof *s);
    if (!s && u && !have_u)
        exec_kcache_filled(k, n, false);
    if (!s)
        return exec_fail(EXEC_ERR_NOMEM, "%s: no memory for the %s kernel's %lld floats of scratch",
                         conv_kind_names[kind], conv_algo_names[a], (long long)need);
    if (a == EXEC_CONV_DIRECT) {
        if (kind == CONV_FWD)
            conv_direct_fwd(q, in0, in1, out, s, T);
        else if (kind == CONV_BWD_INPUT)
            conv_direct_bwd_input(q, in0, in1, out, s, T);
        else
            conv_direct_bwd_filter(q, in0, in1, out, s, T);
    } else {
        if (kind == CONV_FWD)
            conv_wino_fwd(q, in0, in1, out, s, T, u, have_u);
        else if (kind == CONV_BWD_INPUT)
            conv_wino_bwd_input(q, in0, in1, out, s, T);
        else
            conv_wino_bwd_filter(q, in0, in1, out, s, T);
    }
    if (u && !have_u)
        exec_kcache_filled(k, n, true);
    return EXEC_OK;
}

/* What `auto` measured: per op kind, geometry and thread count, the fastest
 * algorithm. A process meets a few dozen shapes; past CHOICES the choice
 * is measured again at every call (correct, only slower). */
#define CHOICES 512
typedef struct conv_choice {
    conv_kind kind;
    bool kept; /* Winograd measured from filters transformed once (an inference graph's) */
    int nthreads;
    conv_geom q;
    exec_conv_algo algo; /* the last measurement's winner */
    bool settled;        /* false: that measurement was void, the next call measures again */
    int tries;           /* measurements made */
} conv_choice;
static conv_choice choices[CHOICES];
static int nchoices;
static pthread_mutex_t choices_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_geom(const conv_geom *a, const conv_geom *b)
{
    return a->n == b->n && a->c == b->c && a->h == b->h && a->w == b->w && a->oc == b->oc && a->kh == b->kh &&
           a->kw == b->kw && a->sh == b->sh && a->sw == b->sw && a->ph == b->ph && a->pw == b->pw;
}

/* the entry of (kind, kept, q, nthreads), or -1; under choices_lock */
static int choice_at(conv_kind kind, bool kept, const conv_geom *q, int nthreads)
{
    for (int i = 0; i < nchoices; i++)
        if (choices[i].kind == kind && choices[i].kept == kept && choices[i].nthreads == nthreads &&
            same_geom(&choices[i].q, q))
            return i;
    return -1;
}

/* the settled algorithm (any measured one, settled or not, if `any`), or
 * -1; *tries: the measurements made so far */
static int choice_find_tries(conv_kind kind, bool kept, const conv_geom *q, int nthreads, bool any, int *tries)
{
    pthread_mutex_lock(&choices_lock);
    const int i = choice_at(kind, kept, q, nthreads);
    const int r = i >= 0 && (any || choices[i].settled) ? (int)choices[i].algo : -1;
    *tries = i >= 0 ? choices[i].tries : 0;
    pthread_mutex_unlock(&choices_lock);
    return r;
}

/* a measurement's winner a; settled false: the measurement was void */
static void choice_put(conv_kind kind, bool kept, const conv_geom *q, int nthreads, exec_conv_algo a, bool settled)
{
    pthread_mutex_lock(&choices_lock);
    int i = choice_at(kind, kept, q, nthreads);
    if (i < 0 && nchoices < CHOICES) {
        i = nchoices++;
        choices[i] = (conv_choice){ .kind = kind, .kept = kept, .nthreads = nthreads, .q = *q };
    }
    if (i >= 0 && !choices[i].settled) {
        choices[i].algo = a;
        choices[i].settled = settled;
        choices[i].tries++;
    }
    pthread_mutex_unlock(&choices_lock);
}

static double seconds(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs op `kind` of q by the forced algorithm (im2col where it does not
 * apply) or, under `auto`, by the fastest for this shape. The first call
 * with a shape runs the algorithms that apply in turn and keeps the one of
 * the shortest run. On a shared machine a run may lose a core for a while
 * (its wall time then says little about the kernel), and the first run of
 * each also pays for fresh scratch pages and cold caches, so each runs
 * until it has had PICK_CLEAN clean runs, PICK_MAX runs at most: clean
 * when the calling thread's CPU time in it is at least 0.7 x its wall
 * time, i.e. it kept its core and did not sleep waiting for a team-mate
 * that lost its own. (The process's CPU time, compared with threads x
 * wall until 2026-11-27, lags: a running thread's time reaches it at the
 * scheduler's tick, so runs of a few hundred microseconds on two threads
 * never looked clean and every algorithm ran PICK_MAX times.) Where an
 * algorithm had no clean run the measurement is void: this call keeps its
 * winner's output and the next call measures again, PICK_TRIES
 * measurements at most. On one thread the process's CPU time is the run's
 * length with the waits left out, and it decides instead. Every
 * run writes the whole output, so the op's result is right whichever ran
 * last. Winograd is measured as the steps run it: with its filter
 * transform in every run where a node writes the filters (training), from
 * the filters transformed in its first run and kept (exec_kcache) where
 * none does (inference; a choice apart from training's for the same
 * shape). Measured with the transform every time, it lost VGG small
 * inference's 16x16 and 8x8 layers to direct, 487-583 us against 441-510
 * forced. */
static _Atomic double pick_clean = 0.7; /* exec_conv_pick_clean_set */
void exec_conv_pick_clean_set(double fraction) { atomic_store(&pick_clean, fraction > 0 ? fraction : 0.7); }

#define PICK_CLEAN 3
#define PICK_MAX 8
#define PICK_TRIES 3
static exec_status conv_exec(exec_kctx *k, conv_kind kind, const conv_geom *q, const exec_node *n, const float *in0,
                             const float *in1, float *out)
{
    /* the run's algorithm (its graph's or its own settings), else the process's */
    exec_conv_algo a = k->conv_algo != EXEC_CONV_DEFAULT
                           ? k->conv_algo
                           : (exec_conv_algo)atomic_load_explicit(&conv_algo, memory_order_relaxed);
    if (a != EXEC_CONV_AUTO)
        return conv_run(k, kind, q, conv_applies(kind, q, a) ? a : EXEC_CONV_IM2COL, n, in0, in1, out);
    /* an inference graph's filters, which no node writes: Winograd
     * transforms them once and keeps them, and is measured so */
    const bool kept =
        kind == CONV_FWD && n && conv_applies(kind, q, EXEC_CONV_WINOGRAD) && exec_kcache_keeps(k, n->in[1]);
    int tries;
    const int known = choice_find_tries(kind, kept, q, k->nthreads, false, &tries);
    if (known >= 0)
        return conv_run(k, kind, q, (exec_conv_algo)known, n, in0, in1, out);
    exec_conv_algo cand[3];
    int nc = 0;
    for (int c = EXEC_CONV_IM2COL; c <= EXEC_CONV_WINOGRAD; c++)
        if (conv_applies(kind, q, (exec_conv_algo)c))
            cand[nc++] = (exec_conv_algo)c;
    if (nc == 1) {
        choice_put(kind, kept, q, k->nthreads, cand[0], true);
        return conv_run(k, kind, q, cand[0], n, in0, in1, out);
    }
    /* one thread: the process's CPU time, which leaves the waits out, is
     * the run's length; more: the calling thread's says whether it kept
     * its core */
    const clockid_t cpu = k->nthreads == 1 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_THREAD_CPUTIME_ID;
    double best[3] = { 1e30, 1e30, 1e30 };
    int nclean[3] = { 0 };
    for (int rep = 0; rep < PICK_MAX; rep++) {
        bool more = false;
        for (int i = 0; i < nc; i++) {
            if (nclean[i] >= PICK_CLEAN)
                continue;
            double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(cpu);
            const exec_node *keep = kept && cand[i] == EXEC_CONV_WINOGRAD ? n : NULL;
            exec_status s = conv_run(k, kind, q, cand[i], keep, in0, in1, out);
            if (s)
                return s;
            double w = seconds(CLOCK_MONOTONIC) - w0, c = seconds(cpu) - c0;
            double t = k->nthreads == 1 ? c : w;
            best[i] = t < best[i] ? t : best[i];
            nclean[i] += c >= atomic_load_explicit(&pick_clean, memory_order_relaxed) * w;
            more |= nclean[i] < PICK_CLEAN;
        }
        if (!more)
            break;
    }
    int win = 0;
    bool disturbed = false; /* an algorithm without a clean run: the measurement is void */
    for (int i = 0; i < nc; i++) {
        win = best[i] < best[win] ? i : win;
        disturbed |= nclean[i] == 0;
    }
    choice_put(kind, kept, q, k->nthreads, cand[win], !disturbed || tries + 1 >= PICK_TRIES);
    /* Winograd's kept filters, made in its first measured run, stay where
     * it won and go where it lost */
    if (kept && cand[win] != EXEC_CONV_WINOGRAD)
        exec_kcache_drop(k, n);
    return EXEC_OK;
}

void exec_conv_auto_agreement(exec_conv_algo a, int nthreads, int *shapes, int *same)
{
    *shapes = *same = 0;
    pthread_mutex_lock(&choices_lock);
    for (int i = 0; i < nchoices; i++) {
        const conv_choice *c = &choices[i];
        if (c->nthreads != nthreads)
            continue;
        const exec_conv_algo forced = conv_applies(c->kind, &c->q, a) ? a : EXEC_CONV_IM2COL;
        (*shapes)++;
        *same += c->algo == forced;
    }
    pthread_mutex_unlock(&choices_lock);
}

/* the choice's entry key from the public geometry array */
static conv_geom geom_from(const int64_t geom[11])
{
    return (conv_geom){ .n = geom[0],
                        .c = geom[1],
                        .h = geom[2],
                        .w = geom[3],
                        .oc = geom[4],
                        .kh = geom[5],
                        .kw = geom[6],
                        .sh = geom[7],
                        .sw = geom[8],
                        .ph = geom[9],
                        .pw = geom[10] };
}

/* The measured choice of a public (kind, geom, nthreads): a training
 * graph's, else an inference graph's; -1 where none; *tries its
 * measurements (0: none) */
static int choice_public(int kind, const int64_t geom[11], int nthreads, int *tries)
{
    const conv_geom q = geom_from(geom);
    int a = -1;
    *tries = 0;
    for (int kept = 0; kept < 2 && a < 0 && kind >= 0 && kind <= 2; kept++)
        a = choice_find_tries((conv_kind)kind, kept, &q, nthreads, true, tries);
    return a;
}

exec_conv_algo exec_conv_algo_chosen(int kind, const int64_t geom[11], int nthreads)
{
    int tries;
    const int a = choice_public(kind, geom, nthreads, &tries);
    return a < 0 ? EXEC_CONV_AUTO : (exec_conv_algo)a;
}

int exec_conv_algo_tries(int kind, const int64_t geom[11], int nthreads)
{
    int tries;
    choice_public(kind, geom, nthreads, &tries);
    return tries;
}

exec_status op_fwd_Conv2D(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0), *ft = exec_in(k, n, 1), *yt = exec_out(k, n, 0);
    const conv_geom q = geom_of(xt, ft, yt, n);
    return conv_exec(k, CONV_FWD, &q, n, xt->data, ft->data, yt->data);
}

exec_status op_fwd_Conv2DBackpropInput(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *ft = exec_in(k, n, 0), *dyt = exec_in(k, n, 1), *dxt = exec_out(k, n, 0);
    const conv_geom q = geom_of(dxt, ft, dyt, n);
    return conv_exec(k, CONV_BWD_INPUT, &q, NULL, ft->data, dyt->data, dxt->data);
}

exec_status op_fwd_Conv2DBackpropFilter(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *xt = exec_in(k, n, 0), *dyt = exec_in(k, n, 1), *dwt = exec_out(k, n, 0);
    const conv_geom q = geom_of(xt, dwt, dyt, n);
    return conv_exec(k, CONV_BWD_FILTER, &q, NULL, xt->data, dyt->data, dwt->data);
}
