/* conv_wino_kern.h -- the Winograd transforms of conv_winograd.c, written
 * once for a vector of WK_L floats and included once per instruction set
 * (AVX-512, AVX2, plain C with WK_L = 1). Before each inclusion the
 * includer defines:
 *   WK(name)          the name with the set's suffix
 *   WK_L              floats a vector
 *   WK_FN             the function attributes (the target of the set)
 *   wk_v              the vector type (GCC vector arithmetic applies)
 *   WK_LD(p), WK_ST(p, v)          unaligned load and store
 *   WK_LDN(p, n), WK_STN(p, v, n)  the first n lanes only (others read 0)
 *   WK_DEINT4(t, s)   s[b][l] = t[4 l + b] for b < 4 (reads 4 WK_L floats)
 *   WK_INTER(y, o)    o[4 l + b] = y[b][l] for b < 4 (writes 4 WK_L floats)
 * (the end of this file undefines them, ready for the next set)
 * and, from conv_winograd.c, WB (tiles a block), WR (floats a buffered
 * row: 4 WB + 4 WK_L at least), wtiles and FOR_SEGMENTS.
 * Lanes are tiles (consecutive in a chunk, across rows of tiles and
 * images): the input side reads them from rows that a column pass has
 * already transformed, so no scalar gather is left; the output side does
 * the same backwards. Internal to exec/ops. */

/* Columns [0, n) of the six rows t (stride ts) from the six rows d (B^T
 * down the columns). */
WK_FN static void WK(bt_cols)(float *t, int64_t ts, const float *const d[6], int64_t n)
{
    int64_t u = 0;
    for (; u + WK_L <= n; u += WK_L) {
        wk_v d0 = WK_LD(d[0] + u), d1 = WK_LD(d[1] + u), d2 = WK_LD(d[2] + u), d3 = WK_LD(d[3] + u),
             d4 = WK_LD(d[4] + u), d5 = WK_LD(d[5] + u), o[6];
        WINO_BT(o, d0, d1, d2, d3, d4, d5);
        for (int i = 0; i < 6; i++)
            WK_ST(t + i * ts + u, o[i]);
    }
    if (u < n) { /* the last columns, in lanes */
        const int r = (int)(n - u);
        wk_v d0 = WK_LDN(d[0] + u, r), d1 = WK_LDN(d[1] + u, r), d2 = WK_LDN(d[2] + u, r), d3 = WK_LDN(d[3] + u, r),
             d4 = WK_LDN(d[4] + u, r), d5 = WK_LDN(d[5] + u, r), o[6];
        WINO_BT(o, d0, d1, d2, d3, d4, d5);
        for (int i = 0; i < 6; i++)
            WK_STN(t + i * ts + u, o[i], r);
    }
}

/* The input tiles of a chunk's tiles j0 .. j0 + jn in channel c of x
 * [N, C, H, W], transformed (B^T d B) into v[xi * vs + j], j < jn. In
 * blocks of WB tiles: each segment of a row of tiles is first combined
 * down the columns into r1 (six rows of WR floats; tile j's columns at 4 j,
 * so the segments of a block lie end to end), its columns 4 and 5 copied
 * to r2 where the next tile's 0 and 1 would be; then vectors of tiles read
 * columns 0-3 from r1 and 4-5 from r2 by a stride-4 de-interleave.
 * zero: at least W zeros. */
WK_FN static void WK(in_chunk)(float *v, int64_t vs, const conv_geom *q, const wtiles *t, int64_t j0, int64_t jn,
                               const float *x, int64_t c, float *r1, float *r2, const float *zero)
{
    const int64_t H = q->h, W = q->w;
    for (int64_t b0 = 0; b0 < jn; b0 += WB) {
        const int64_t bn = jn - b0 < WB ? jn - b0 : WB;
        FOR_SEGMENTS(t, j0 + b0, bn, {
            const float *xc = x + (n * q->c + c) * H * W;
            const int64_t nw = 4 * nt + 2, off = c0 - q->pw, y0 = r0 - q->ph;
            /* the segment's columns [0, nw): input columns off + u */
            int64_t ua = off < 0 ? -off : 0, ub = W - off < nw ? W - off : nw;
            if (ub < ua)
                ub = ua;
            const float *d[6];
            for (int r = 0; r < 6; r++) {
                const bool in = y0 + r >= 0 && y0 + r < H;
                d[r] = (in ? xc + (y0 + r) * W : zero) + (off + ua);
                /* the same rows of the next channel, which the next call
                 * reads: into L2 now, while this chunk's segments run
                 * (ResNet-50's 14x14 256->256 layer at batch 16 with kept
                 * filters: 6.07-6.30 -> 5.39-5.66 ms; the first loads of
                 * each row were a fifth of the transform's time) */
                for (int64_t u = 0; in && c + 1 < q->c && u < ub - ua; u += 64 / (int64_t)sizeof(float))
                    __builtin_prefetch(d[r] + H * W + u, 0, 2);
            }
            float *dst = r1 + 4 * j;
            for (int i = 0; i < 6; i++) {
                memset(dst + i * WR, 0, (size_t)ua * sizeof *dst);
                memset(dst + i * WR + ub, 0, (size_t)(nw - ub) * sizeof *dst);
            }
            WK(bt_cols)(dst + ua, WR, d, ub - ua);
            for (int i = 0; i < 6; i++)
                memcpy(r2 + i * WR + 4 * j, dst + i * WR + 4, (size_t)(4 * nt - 2) * sizeof *dst);
        });
        for (int i = 0; i < 6; i++)
            for (int64_t g = 0; g < bn; g += WK_L) {
                wk_v s[4], s2[4], o[6];
                WK_DEINT4(r1 + i * WR + 4 * g, s);
                WK_DEINT4(r2 + i * WR + 4 * g, s2);
                WINO_BT(o, s[0], s[1], s[2], s[3], s2[0], s2[1]);
                float *dst = v + i * WA * vs + b0 + g;
                if (bn - g >= WK_L)
                    for (int k = 0; k < 6; k++)
                        WK_ST(dst + k * vs, o[k]);
                else
                    for (int k = 0; k < 6; k++)
                        WK_STN(dst + k * vs, o[k], (int)(bn - g));
            }
    }
}

/* The output tiles of a chunk's tiles j0 .. j0 + jn for output channel o:
 * m[xi * ms + j] (j < jn) transformed (A^T m A) into y [N, OC, OH, OW].
 * In blocks of WB tiles: vectors of tiles are transformed and interleaved
 * into four rows of r (WR floats each; tile j's columns at 4 j), which
 * each segment copies out. */
WK_FN static void WK(out_chunk)(float *y, const conv_geom *q, const wtiles *t, int64_t j0, int64_t jn, const float *m,
                                int64_t ms, int64_t o, float *r)
{
    const int64_t OH = q->oh, OW = q->ow;
    for (int64_t b0 = 0; b0 < jn; b0 += WB) {
        const int64_t bn = jn - b0 < WB ? jn - b0 : WB;
        for (int64_t g = 0; g < bn; g += WK_L) {
            const int n = bn - g < WK_L ? (int)(bn - g) : WK_L;
            const float *mg = m + b0 + g;
            wk_v z[WM][WA], yv[WM][WM];
            for (int k = 0; k < WA; k++) {
                wk_v cv[6], ov[4];
                for (int i = 0; i < 6; i++)
                    cv[i] = n == WK_L ? WK_LD(mg + (i * WA + k) * ms) : WK_LDN(mg + (i * WA + k) * ms, n);
                WINO_AT(ov, cv[0], cv[1], cv[2], cv[3], cv[4], cv[5]);
                for (int a = 0; a < WM; a++)
                    z[a][k] = ov[a];
            }
            for (int a = 0; a < WM; a++) {
                WINO_AT(yv[a], z[a][0], z[a][1], z[a][2], z[a][3], z[a][4], z[a][5]);
                WK_INTER(yv[a], r + a * WR + 4 * g);
            }
        }
        FOR_SEGMENTS(t, j0 + b0, bn, {
            const int64_t rh = OH - r0 < WM ? OH - r0 : WM, cw = OW - c0 < 4 * nt ? OW - c0 : 4 * nt;
            float *yc = y + (n * q->oc + o) * OH * OW;
            for (int64_t a = 0; a < rh; a++) {
                memcpy(yc + (r0 + a) * OW + c0, r + a * WR + 4 * j, (size_t)cw * sizeof *yc);
                for (int64_t u = 0; o + 1 < q->oc && u < cw; u += 64 / (int64_t)sizeof(float))
                    __builtin_prefetch(yc + OH * OW + (r0 + a) * OW + c0 + u, 1, 2); /* the next channel's rows */
            }
        });
    }
}

/* The output-gradient tiles (the filter gradient's) of a chunk's tiles j0
 * .. j0 + jn for output channel o: the 4x4 tiles of dy [N, OC, OH, OW]
 * (zero past the plane), transformed (A g A^T) into dd[xi * ds + j],
 * j < jn; blocks, segments and r as in in_chunk (no overlap: one buffer).
 * zero: at least OW zeros. */
WK_FN static void WK(dy_chunk)(float *dd, int64_t ds, const conv_geom *q, const wtiles *t, int64_t j0, int64_t jn,
                               const float *dy, int64_t o, float *r, const float *zero)
{
    const int64_t OH = q->oh, OW = q->ow;
    for (int64_t b0 = 0; b0 < jn; b0 += WB) {
        const int64_t bn = jn - b0 < WB ? jn - b0 : WB;
        FOR_SEGMENTS(t, j0 + b0, bn, {
            const float *dyc = dy + (n * q->oc + o) * OH * OW;
            const int64_t nw = 4 * nt, ub = OW - c0 < nw ? OW - c0 : nw;
            const float *g[4];
            for (int a = 0; a < 4; a++) {
                const bool in = r0 + a < OH;
                g[a] = (in ? dyc + (r0 + a) * OW : zero) + c0;
                for (int64_t u = 0; in && o + 1 < q->oc && u < ub; u += 64 / (int64_t)sizeof(float))
                    __builtin_prefetch(g[a] + OH * OW + u, 0, 2); /* the next channel's (in_chunk's reason) */
            }
            float *dst = r + 4 * j;
            int64_t u = 0;
            for (; u + WK_L <= ub; u += WK_L) {
                wk_v ov[6], y0 = WK_LD(g[0] + u), y1 = WK_LD(g[1] + u), y2 = WK_LD(g[2] + u), y3 = WK_LD(g[3] + u);
                WINO_A(ov, y0, y1, y2, y3);
                for (int i = 0; i < 6; i++)
                    WK_ST(dst + i * WR + u, ov[i]);
            }
            if (u < ub) { /* the last columns, in lanes */
                const int rn = (int)(ub - u);
                wk_v ov[6], y0 = WK_LDN(g[0] + u, rn), y1 = WK_LDN(g[1] + u, rn), y2 = WK_LDN(g[2] + u, rn),
                            y3 = WK_LDN(g[3] + u, rn);
                WINO_A(ov, y0, y1, y2, y3);
                for (int i = 0; i < 6; i++)
                    WK_STN(dst + i * WR + u, ov[i], rn);
            }
            for (int i = 0; i < 6; i++)
                memset(dst + i * WR + ub, 0, (size_t)(nw - ub) * sizeof *dst);
        });
        for (int i = 0; i < 6; i++)
            for (int64_t g = 0; g < bn; g += WK_L) {
                wk_v s[4], ov[6];
                WK_DEINT4(r + i * WR + 4 * g, s);
                WINO_A(ov, s[0], s[1], s[2], s[3]);
                float *dst = dd + i * WA * ds + b0 + g;
                if (bn - g >= WK_L)
                    for (int k = 0; k < 6; k++)
                        WK_ST(dst + k * ds, ov[k]);
                else
                    for (int k = 0; k < 6; k++)
                        WK_STN(dst + k * ds, ov[k], (int)(bn - g));
            }
    }
}

/* U[xi * us + e] = G g G^T for the filter pairs e in [e0, e1) (us >= OC C;
 * pair e = (o, c), or with tr (c, o): U[xi] as [C, OC]): the taps of pair
 * (o, c) are w[(o * C + c) * 9 + k], or with flip w[(c * OC + o) * 9 + 8 - k].
 * In blocks of WB pairs: the taps are first
 * copied tap-major (9 floats apart to WB apart), then read a vector of
 * pairs at a time (a whole block later: by then the scalar stores have
 * left the store queue, which a vector load would otherwise wait for). */
WK_FN static void WK(filter)(float *U, int64_t us, const float *w, int64_t OC, int64_t C, bool flip, bool tr,
                             int64_t e0, int64_t e1)
{
    float g[9][WB];
    /* the pair e0 is (o, c) (tr: the inner index o, the outer c), and each
     * next one the inner index's next: no division a pair */
    const int64_t inner = tr ? OC : C;
    int64_t outer_i = e0 / inner, inner_i = e0 % inner;
    for (int64_t b0 = e0; b0 < e1; b0 += WB) {
        const int64_t bn = e1 - b0 < WB ? e1 - b0 : WB;
        for (int64_t l = 0; l < bn; l++) {
            const int64_t o = tr ? inner_i : outer_i, c = tr ? outer_i : inner_i;
            const float *src = flip ? w + (c * OC + o) * 9 : w + (o * C + c) * 9;
            if (flip)
                for (int k = 0; k < 9; k++)
                    g[k][l] = src[8 - k];
            else
                for (int k = 0; k < 9; k++)
                    g[k][l] = src[k];
            if (++inner_i == inner)
                inner_i = 0, outer_i++;
        }
        for (int64_t l = 0; l < bn; l += WK_L) {
            const int n = bn - l < WK_L ? (int)(bn - l) : WK_L;
            /* the columns of G g, each a named array the loops below
             * unroll over (an array of them indexed by row and column
             * went through the stack: 40% of the transform's time) */
            wk_v c0[WA], c1[WA], c2[WA];
            WINO_G(c0, WK_LD(&g[0][l]), WK_LD(&g[3][l]), WK_LD(&g[6][l]));
            WINO_G(c1, WK_LD(&g[1][l]), WK_LD(&g[4][l]), WK_LD(&g[7][l]));
            WINO_G(c2, WK_LD(&g[2][l]), WK_LD(&g[5][l]), WK_LD(&g[8][l]));
#pragma GCC unroll 6
            for (int i = 0; i < WA; i++) {
                wk_v u[WA];
                WINO_G(u, c0[i], c1[i], c2[i]); /* row i of G g */
#pragma GCC unroll 6
                for (int k = 0; k < WA; k++) {
                    if (n == WK_L)
                        WK_ST(U + (i * WA + k) * us + b0 + l, u[k]);
                    else
                        WK_STN(U + (i * WA + k) * us + b0 + l, u[k], n);
                }
            }
        }
    }
}

/* dw[e * 9 + k] = (G^T S G)[k] for the pairs e in [e0, e1), S[xi * us + e]
 * the sum of the per-thread sums at sum + t * ss, t < nsum. */
WK_FN static void WK(filter_out)(float *dw, const float *sum, int64_t ss, int nsum, int64_t us, int64_t e0, int64_t e1)
{
    for (int64_t e = e0; e < e1; e += WK_L) {
        const int n = e1 - e < WK_L ? (int)(e1 - e) : WK_L;
        wk_v s[WT], m[3][WA];
        for (int x = 0; x < WT; x++) {
            const float *p = sum + x * us + e;
            s[x] = n == WK_L ? WK_LD(p) : WK_LDN(p, n);
            for (int t = 1; t < nsum; t++)
                s[x] += n == WK_L ? WK_LD(p + t * ss) : WK_LDN(p + t * ss, n);
        }
        for (int i = 0; i < WA; i++) {
            wk_v o[3];
            WINO_GT(o, s[i * WA], s[i * WA + 1], s[i * WA + 2], s[i * WA + 3], s[i * WA + 4], s[i * WA + 5]);
            for (int k = 0; k < 3; k++)
                m[k][i] = o[k];
        }
        float out[9][WK_L];
        for (int b = 0; b < 3; b++) {
            wk_v o[3];
            WINO_GT(o, m[b][0], m[b][1], m[b][2], m[b][3], m[b][4], m[b][5]); /* column b of dw */
            for (int a = 0; a < 3; a++)
                memcpy(out[a * 3 + b], &o[a], sizeof o[a]);
        }
        for (int l = 0; l < n; l++)
            for (int k = 0; k < 9; k++)
                dw[(e + l) * 9 + k] = out[k][l];
    }
}

#undef WK
#undef WK_L
#undef WK_FN
#undef WK_LD
#undef WK_ST
#undef WK_LDN
#undef WK_STN
#undef WK_DEINT4
#undef WK_INTER
#undef wk_v
