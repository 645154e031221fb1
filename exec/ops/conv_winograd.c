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
 * TC is chosen so that a chunk's V and M stay within about 1 MB. The filter
 * gradient keeps one S per thread and sums them at the end. */
#include "conv.h"

#include <cblas.h>
#include <omp.h>

#define WM 4  /* output tile */
#define WA 6  /* input tile: WM + 3 - 1 */
#define WT 36 /* WA * WA transformed positions */

bool conv_wino_applies(const conv_geom *q)
{
    return q->kh == 3 && q->kw == 3 && q->sh == 1 && q->sw == 1 && q->ph <= 2 && q->pw <= 2;
}

/* ---- the 1-D transforms; each 2-D one is a 1-D one down the columns, then
 *      along the rows. s: the stride between the elements read, t: written.
 *      The input and output sides work on WL tiles at once, one a lane. */
#define WL 8
typedef float v8 __attribute__((vector_size(WL * sizeof(float))));
typedef union lanes {
    v8 v[WT];
    float f[WT][WL];
} lanes;

/* B^T d: six inputs to six */
static inline void wino_bt(v8 *restrict o, int t, const v8 *restrict d, int s)
{
    v8 d0 = d[0], d1 = d[s], d2 = d[2 * s], d3 = d[3 * s], d4 = d[4 * s], d5 = d[5 * s];
    o[0] = 4 * d0 - 5 * d2 + d4;
    o[t] = -4 * (d1 + d2) + d3 + d4;
    o[2 * t] = 4 * (d1 - d2) - d3 + d4;
    o[3 * t] = 2 * (d3 - d1) - d2 + d4;
    o[4 * t] = 2 * (d1 - d3) - d2 + d4;
    o[5 * t] = 4 * d1 - 5 * d3 + d5;
}

/* G g: three filter taps to six (products with the reciprocals: a
 * division costs ten times a multiplication) */
static inline void wino_g(v8 *restrict o, int t, const v8 *restrict g, int s)
{
    const float r6 = 1.0f / 6, r12 = 1.0f / 12, r24 = 1.0f / 24;
    v8 g0 = g[0], g1 = g[s], g2 = g[2 * s], a = g0 * r24 + g2 * r6, b = g1 * r12;
    o[0] = g0 * 0.25f;
    o[t] = -(g0 + g1 + g2) * r6;
    o[2 * t] = -(g0 - g1 + g2) * r6;
    o[3 * t] = a + b;
    o[4 * t] = a - b;
    o[5 * t] = g2;
}

/* A^T m: six to four outputs */
static inline void wino_at(v8 *restrict o, int t, const v8 *restrict m, int s)
{
    v8 m0 = m[0], m1 = m[s], m2 = m[2 * s], m3 = m[3 * s], m4 = m[4 * s], m5 = m[5 * s];
    v8 a = m1 + m2, b = m1 - m2, c = m3 + m4, e = m3 - m4;
    o[0] = m0 + a + c;
    o[t] = b + 2 * e;
    o[2 * t] = a + 4 * c;
    o[3 * t] = b + 8 * e + m5;
}

/* A y: four output gradients to six (the filter gradient's dy tile) */
static inline void wino_a(v8 *restrict o, int t, const v8 *restrict y, int s)
{
    v8 y0 = y[0], y1 = y[s], y2 = y[2 * s], y3 = y[3 * s];
    o[0] = y0;
    o[t] = y0 + y1 + y2 + y3;
    o[2 * t] = y0 - y1 + y2 - y3;
    o[3 * t] = y0 + 2 * y1 + 4 * y2 + 8 * y3;
    o[4 * t] = y0 - 2 * y1 + 4 * y2 - 8 * y3;
    o[5 * t] = y3;
}

/* G^T m: six to the three filter taps */
static inline void wino_gt(v8 *restrict o, int t, const v8 *restrict m, int s)
{
    const float r6 = 1.0f / 6, r12 = 1.0f / 12, r24 = 1.0f / 24;
    v8 m0 = m[0], m1 = m[s], m2 = m[2 * s], m3 = m[3 * s], m4 = m[4 * s], m5 = m[5 * s];
    o[0] = m0 * 0.25f - (m1 + m2) * r6 + (m3 + m4) * r24;
    o[t] = (m2 - m1) * r6 + (m3 - m4) * r12;
    o[2 * t] = (m3 + m4 - m1 - m2) * r6 + m5;
}

/* The tiling of an output of OH x OW into 4x4 tiles, over n images; chunks
 * of tc tiles (a multiple of WL). */
typedef struct wtiles {
    int64_t th, tw, per, total; /* tile rows, columns, tiles an image, in all */
    int64_t tc, chunks;         /* tiles a chunk, chunks */
} wtiles;

static wtiles wino_tiles(const conv_geom *q, int64_t cin, int64_t cout, int nthreads)
{
    wtiles t = { .th = (q->oh + WM - 1) / WM, .tw = (q->ow + WM - 1) / WM };
    t.per = t.th * t.tw;
    t.total = q->n * t.per;
    int64_t tc = (1 << 20) / (WT * (cin + cout) * (int64_t)sizeof(float));
    tc = tc < 32 ? 32 : tc > 512 ? 512 : tc;
    int64_t chunks = (t.total + tc - 1) / tc;
    if (chunks < nthreads && t.total >= nthreads * WL)
        chunks = nthreads; /* every thread gets a chunk */
    else if (chunks % nthreads)
        chunks += nthreads - chunks % nthreads; /* equal shares */
    t.tc = (t.total + chunks - 1) / chunks;
    t.tc = (t.tc + WL - 1) / WL * WL;
    t.chunks = (t.total + t.tc - 1) / t.tc;
    return t;
}

/* Where a tile starts in the output: image n, row r0, column c0. A chunk
 * works them out once for all its channels (three divisions a tile). */
typedef struct wpos {
    int64_t n, r0, c0;
} wpos;

static void tiles_at(const wtiles *t, int64_t j0, int64_t jn, wpos *pos)
{
    for (int64_t j = 0; j < jn; j++) {
        int64_t tile = j0 + j, r = tile % t->per;
        pos[j] = (wpos){ .n = tile / t->per, .r0 = r / t->tw * WM, .c0 = r % t->tw * WM };
    }
}

/* The 6x6 input tiles of the nl tiles at pos (zero in the lanes past
 * them) in channel c of x [N, C, H, W], transformed (B^T d B) into
 * v[xi * vs], WL floats each. */
static void wino_in_tiles(float *v, int64_t vs, const conv_geom *q, const wpos *pos, int64_t nl, const float *x,
                          int64_t c)
{
    const int64_t H = q->h, W = q->w;
    lanes d, m;
    for (int l = 0; l < WL; l++) {
        if (l >= nl) {
            for (int e = 0; e < WT; e++)
                d.f[e][l] = 0.0f;
            continue;
        }
        int64_t r0 = pos[l].r0 - q->ph, c0 = pos[l].c0 - q->pw;
        const float *p = x + (pos[l].n * q->c + c) * H * W;
        if (r0 >= 0 && c0 >= 0 && r0 + WA <= H && c0 + WA <= W) {
            for (int i = 0; i < WA; i++)
                for (int k = 0; k < WA; k++)
                    d.f[i * WA + k][l] = p[(r0 + i) * W + c0 + k];
        } else {
            for (int i = 0; i < WA; i++)
                for (int k = 0; k < WA; k++) {
                    int64_t r = r0 + i, cc = c0 + k;
                    d.f[i * WA + k][l] = r >= 0 && r < H && cc >= 0 && cc < W ? p[r * W + cc] : 0.0f;
                }
        }
    }
    for (int i = 0; i < WA; i++)
        wino_bt(m.v + i, WA, d.v + i * WA, 1); /* row i of d, B^T'd along it: m[k][i] */
    for (int k = 0; k < WA; k++)
        wino_bt(d.v + k, WA, m.v + k * WA, 1); /* column k of d B, B^T'd down it */
    for (int e = 0; e < WT; e++)
        memcpy(v + e * vs, &d.v[e], sizeof d.v[e]);
}

/* ---- forward ------------------------------------------------------------ */

int64_t conv_wino_scratch(const conv_geom *q, int nthreads)
{
    wtiles t = wino_tiles(q, q->c, q->oc, nthreads);
    return WT * q->oc * q->c + (int64_t)nthreads * WT * (q->c + q->oc) * t.tc;
}

/* y = x (*) w on q (3x3, stride 1); with flip, w is the filter of the
 * convolution whose transposed geometry q is: w[c][o][2-kh][2-kw] for q's
 * output channel o and input channel c. */
static void wino_run(const conv_geom *q, const float *x, const float *w, bool flip, float *y, float *scratch,
                     int nthreads)
{
    const int64_t C = q->c, OC = q->oc, OH = q->oh, OW = q->ow;
    const wtiles t = wino_tiles(q, C, OC, nthreads);
    float *U = scratch, *bufs = U + WT * OC * C;
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        /* U[xi][o][c] = G g G^T, WL pairs (o, c) at a time */
#pragma omp for schedule(static)
        for (int64_t e0 = 0; e0 < OC * C; e0 += WL) {
            lanes g, m;
            for (int l = 0; l < WL; l++) {
                int64_t e = e0 + l, o = e / C, c = e % C;
                for (int k = 0; k < 9; k++)
                    g.f[k][l] = e >= OC * C ? 0.0f : flip ? w[(c * OC + o) * 9 + 8 - k] : w[e * 9 + k];
            }
            for (int j = 0; j < 3; j++)
                wino_g(m.v + j * WA, 1, g.v + j, 3); /* column j of g, transformed: m[j][.] */
            for (int i = 0; i < WA; i++)
                wino_g(g.v + i * WA, 1, m.v + i, WA); /* row i of G g, transformed */
            for (int e = 0; e < WT; e++)
                for (int l = 0; l < WL && e0 + l < OC * C; l++)
                    U[e * OC * C + e0 + l] = g.f[e][l];
        }
        int tid = omp_get_thread_num();
        float *V = bufs + (int64_t)tid * WT * (C + OC) * t.tc, *M = V + WT * C * t.tc;
#pragma omp for schedule(static)
        for (int64_t ch = 0; ch < t.chunks; ch++) {
            int64_t j0 = ch * t.tc, jn = t.total - j0 < t.tc ? t.total - j0 : t.tc;
            int64_t jr = (jn + WL - 1) / WL * WL; /* columns written: whole lane groups */
            wpos pos[t.tc];
            tiles_at(&t, j0, jn, pos);
            for (int64_t c = 0; c < C; c++)
                for (int64_t j = 0; j < jn; j += WL)
                    wino_in_tiles(V + c * t.tc + j, C * t.tc, q, pos + j, jn - j, x, c);
            for (int xi = 0; xi < WT; xi++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)OC, (int)jr, (int)C, 1.0f, U + xi * OC * C,
                            (int)C, V + xi * C * t.tc, (int)t.tc, 0.0f, M + xi * OC * t.tc, (int)t.tc);
            for (int64_t o = 0; o < OC; o++)
                for (int64_t j = 0; j < jn; j += WL) {
                    lanes mm, m;
                    for (int e = 0; e < WT; e++)
                        memcpy(&mm.v[e], M + (e * OC + o) * t.tc + j, sizeof mm.v[e]);
                    for (int k = 0; k < WA; k++)
                        wino_at(m.v + k, WA, mm.v + k, WA); /* column k, A^T'd: m[a][k] */
                    for (int a = 0; a < WM; a++)
                        wino_at(mm.v + a * WM, 1, m.v + a * WA, 1); /* row a: mm[a][b] */
                    for (int l = 0; l < WL && j + l < jn; l++) {
                        int64_t r0 = pos[j + l].r0, c0 = pos[j + l].c0;
                        float *dst = y + (pos[j + l].n * OC + o) * OH * OW;
                        int64_t rh = OH - r0 < WM ? OH - r0 : WM, cw = OW - c0 < WM ? OW - c0 : WM;
                        for (int64_t a = 0; a < rh; a++)
                            for (int64_t b = 0; b < cw; b++)
                                dst[(r0 + a) * OW + c0 + b] = mm.f[a * WM + b][l];
                    }
                }
        }
    }
}

void conv_wino_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads)
{
    wino_run(q, x, w, false, y, scratch, nthreads);
}

void conv_wino_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch, int nthreads)
{
    const conv_geom t = conv_direct_transposed(q);
    wino_run(&t, dy, w, true, dx, scratch, nthreads);
}

/* ---- filter gradient ---------------------------------------------------- */

int64_t conv_wino_filter_scratch(const conv_geom *q, int nthreads)
{
    wtiles t = wino_tiles(q, q->c, q->oc, nthreads);
    return (int64_t)nthreads * (WT * (q->c + q->oc) * t.tc + WT * q->oc * q->c);
}

void conv_wino_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch, int nthreads)
{
    const int64_t C = q->c, OC = q->oc, OH = q->oh, OW = q->ow, S = WT * OC * C;
    const wtiles t = wino_tiles(q, C, OC, nthreads);
    const int64_t per = WT * (C + OC) * t.tc + S;
    int used = 1;
#pragma omp parallel num_threads(nthreads) if (nthreads > 1)
    {
        int tid = omp_get_thread_num();
#pragma omp single
        used = omp_get_num_threads();
        float *X = scratch + tid * per, *D = X + WT * C * t.tc, *acc = D + WT * OC * t.tc;
        float beta = 0.0f;
#pragma omp for schedule(static)
        for (int64_t ch = 0; ch < t.chunks; ch++) {
            int64_t j0 = ch * t.tc, jn = t.total - j0 < t.tc ? t.total - j0 : t.tc;
            wpos pos[t.tc];
            tiles_at(&t, j0, jn, pos);
            for (int64_t c = 0; c < C; c++)
                for (int64_t j = 0; j < jn; j += WL)
                    wino_in_tiles(X + c * t.tc + j, C * t.tc, q, pos + j, jn - j, x, c);
            for (int64_t o = 0; o < OC; o++)
                for (int64_t j = 0; j < jn; j += WL) {
                    lanes g, m;
                    for (int l = 0; l < WL; l++) {
                        int64_t n = 0, r0 = 0, c0 = 0, rh = 0, cw = 0;
                        if (j + l < jn) {
                            n = pos[j + l].n, r0 = pos[j + l].r0, c0 = pos[j + l].c0;
                            rh = OH - r0 < WM ? OH - r0 : WM;
                            cw = OW - c0 < WM ? OW - c0 : WM;
                        }
                        for (int64_t a = 0; a < WM; a++)
                            for (int64_t b = 0; b < WM; b++)
                                g.f[a * WM + b][l] =
                                    a < rh && b < cw ? dy[((n * OC + o) * OH + r0 + a) * OW + c0 + b] : 0.0f;
                    }
                    for (int i = 0; i < WM; i++)
                        wino_a(m.v + i, WM, g.v + i * WM, 1); /* row i of g, transformed: m[l][i] */
                    for (int l = 0; l < WA; l++)
                        wino_a(g.v + l, WA, m.v + l * WM, 1); /* column l of A g A^T */
                    for (int e = 0; e < WT; e++)
                        memcpy(D + (e * OC + o) * t.tc + j, &g.v[e], sizeof g.v[e]);
                }
            for (int xi = 0; xi < WT; xi++)
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)OC, (int)C, (int)jn, 1.0f, D + xi * OC * t.tc,
                            (int)t.tc, X + xi * C * t.tc, (int)t.tc, beta, acc + xi * OC * C, (int)C);
            beta = 1.0f;
        }
        if (beta == 0.0f) /* a thread with no chunk */
            memset(acc, 0, (size_t)S * sizeof *acc);
#pragma omp barrier
        /* thread 0's S += the others', split by element */
        float *sum = scratch + WT * (C + OC) * t.tc;
#pragma omp for schedule(static)
        for (int64_t e = 0; e < S; e++)
            for (int u = 1; u < used; u++)
                sum[e] += scratch[u * per + WT * (C + OC) * t.tc + e];
                /* dw[o][c] = G^T S G, WL pairs (o, c) at a time */
#pragma omp for schedule(static)
        for (int64_t e0 = 0; e0 < OC * C; e0 += WL) {
            lanes v, m;
            for (int e = 0; e < WT; e++)
                for (int l = 0; l < WL; l++)
                    v.f[e][l] = e0 + l < OC * C ? sum[e * OC * C + e0 + l] : 0.0f;
            for (int i = 0; i < WA; i++)
                wino_gt(m.v + i, WA, v.v + i * WA, 1); /* row i of S: its 3 taps, m[.][i] */
            for (int k = 0; k < 3; k++)
                wino_gt(v.v + k, 3, m.v + k * WA, 1); /* column k of dw */
            for (int l = 0; l < WL && e0 + l < OC * C; l++)
                for (int k = 0; k < 9; k++)
                    dw[(e0 + l) * 9 + k] = v.f[k][l];
        }
    }
}
