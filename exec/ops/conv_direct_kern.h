/* conv_direct_kern.h -- the register block of conv_direct.c's kernels,
 * written once for a vector of DK_L floats and included once per
 * instruction set (AVX2, AVX-512). Before each inclusion the includer
 * defines:
 *   DK(name)       the name with the set's suffix
 *   DK_L           floats a vector
 *   DK_NB          vectors of output channels a block holds at most
 *   DK_PV, DK_PR   the pixel-vector block: vectors of pixels, channels
 *   DK_FN          the function attributes (the target of the set)
 *   dk_v           the vector type
 *   DK_LD(p), DK_ST(p, v)   unaligned load and store
 *   DK_BC(p)       the float at p in every lane
 *   DK_FMA(a, b, c)         a * b + c
 *   DK_ZERO()      a vector of zeros
 *   DK_FO          output channels a pixel-vector filter-gradient block holds
 *   DK_AND(v, m)   v's bits and m's (a mask of all-ones or zero lanes)
 *   DK_HSUM(v)     the sum of v's lanes
 * (the end of this file undefines them, ready for the next set)
 * and, from conv_direct.c, UR (positions a block), dk_args, fk_args,
 * pk_args and pf_args.
 * A block is nb <= DK_NB vectors of channels x ut <= UR positions (output
 * pixels for the forward, filter taps for the filter gradient): nb * ut
 * sums in registers, nb vector loads and ut broadcasts a step. The
 * forward's other block turns this around for layers with few channels:
 * nv <= DK_PV vectors of DK_L consecutive output pixels x DK_PR output
 * channels, nv vector loads of the image and DK_PR broadcast filter floats
 * a step, its sums stored straight into y's rows. Internal to exec/ops. */

#define DK_INLINE DK_FN static inline __attribute__((always_inline))

typedef struct DK(rblock) {
    dk_v s[DK_NB][UR];
} DK(rblock);

/* the block's ut broadcast offsets, copied where the compiler keeps them in
 * registers */
DK_INLINE void DK(rb_offsets)(int64_t o[UR], const int64_t *off, const int ut)
{
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
        o[j] = j < ut ? off[j] : 0;
}

/* the sums from acc ([ut][DK_NB * DK_L]), or zero when acc is NULL */
DK_INLINE void DK(rb_load)(DK(rblock) * b, const float *acc, const int nb, const int ut)
{
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
#pragma GCC unroll 4
        for (int v = 0; v < DK_NB; v++)
            b->s[v][j] = acc && j < ut && v < nb ? DK_LD(acc + (j * DK_NB + v) * DK_L) : DK_ZERO();
}

DK_INLINE void DK(rb_store)(const DK(rblock) * b, float *acc, const int nb, const int ut)
{
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
#pragma GCC unroll 4
        for (int v = 0; v < DK_NB; v++)
            if (j < ut && v < nb)
                DK_ST(acc + (j * DK_NB + v) * DK_L, b->s[v][j]);
}

/* n steps of: the nb channel vectors at v times the ut floats at r + o[j];
 * v moves vstride floats a step, r rstride. */
DK_INLINE void DK(rb_run)(DK(rblock) * b, const float *restrict v, int64_t vstride, const float *restrict r,
                          int64_t rstride, const int64_t *o, int64_t n, const int nb, const int ut)
{
    for (int64_t i = 0; i < n; i++, v += vstride, r += rstride) {
        dk_v w[DK_NB];
#pragma GCC unroll 4
        for (int c = 0; c < DK_NB; c++)
            w[c] = c < nb ? DK_LD(v + c * DK_L) : DK_ZERO();
#pragma GCC unroll 6
        for (int j = 0; j < UR; j++)
            if (j < ut) {
                dk_v x = DK_BC(r + o[j]);
#pragma GCC unroll 4
                for (int c = 0; c < DK_NB; c++)
                    if (c < nb)
                        b->s[c][j] = DK_FMA(w[c], x, b->s[c][j]);
            }
    }
}

/* The forward's block: nb vectors of output channels x ur output pixels,
 * over every (c, kw) of the filter and its rows [a->kh0, a->kh1) (the
 * others reach only the image's zero border from these pixels); the sums
 * to a->out ([UR][DK_NB * DK_L]). */
DK_INLINE void DK(dk_body)(const dk_args *a, const int nb, const int ur)
{
    DK(rblock) b;
    int64_t o[UR];
    DK(rb_offsets)(o, a->off, ur);
    DK(rb_load)(&b, NULL, nb, ur);
    const int64_t row = DK_L * nb * a->kw; /* the packed floats of a filter row */
    for (int64_t c = 0; c < a->c; c++)
        for (int64_t kh = a->kh0; kh < a->kh1; kh++) {
            const float *w = a->wp + (c * a->kh + kh) * row, *x = a->x + c * a->hw + kh * a->wd;
            DK(rb_run)(&b, w, DK_L * nb, x, 1, o, a->kw, nb, ur);
        }
    DK(rb_store)(&b, a->out, nb, ur);
}

/* The filter gradient's block: nb vectors of output channels x ut filter
 * taps, summed over the pixels of a->nimg images, from and back to a->acc. */
DK_INLINE void DK(fk_body)(const fk_args *a, const int nb, const int ut)
{
    DK(rblock) b;
    int64_t o[UR];
    DK(rb_offsets)(o, a->off, ut);
    DK(rb_load)(&b, a->acc, nb, ut);
    for (int64_t i = 0; i < a->nimg; i++) {
        const float *g = a->g + i * a->gimg + a->oh0 * a->ow * a->gstride;
        for (int64_t oh = a->oh0; oh < a->oh1; oh++, g += a->ow * a->gstride)
            DK(rb_run)(&b, g, a->gstride, a->x + i * a->ximg + oh * a->sh * a->wd, a->sw, o, a->ow, nb, ut);
    }
    DK(rb_store)(&b, a->acc, nb, ut);
}

/* The pixel-vector forward's block: nv vectors of DK_L consecutive output
 * pixels (each inside one output row; stride 1 across) x DK_PR output
 * channels, over every (c, kh, kw) of the filter; the sums of the first
 * a->live channels stored to y. */
DK_INLINE void DK(pk_body)(const pk_args *a, const int nv)
{
    dk_v s[DK_PV][DK_PR];
    int64_t o[DK_PV];
#pragma GCC unroll 4
    for (int v = 0; v < DK_PV; v++) {
        o[v] = v < nv ? a->xoff[v] : 0;
#pragma GCC unroll 8
        for (int r = 0; r < DK_PR; r++)
            s[v][r] = DK_ZERO();
    }
    const float *wp = a->wp;
    for (int64_t c = 0; c < a->c; c++)
        for (int64_t kh = 0; kh < a->kh; kh++) {
            const float *xr = a->x + c * a->hw + kh * a->wd;
            for (int64_t kw = 0; kw < a->kw; kw++, xr++, wp += DK_PR) {
                dk_v x[DK_PV];
#pragma GCC unroll 4
                for (int v = 0; v < DK_PV; v++)
                    x[v] = v < nv ? DK_LD(xr + o[v]) : DK_ZERO();
#pragma GCC unroll 8
                for (int r = 0; r < DK_PR; r++) {
                    dk_v w = DK_BC(wp + r);
#pragma GCC unroll 4
                    for (int v = 0; v < DK_PV; v++)
                        if (v < nv)
                            s[v][r] = DK_FMA(x[v], w, s[v][r]);
                }
            }
        }
#pragma GCC unroll 8
    for (int r = 0; r < DK_PR; r++)
        if (r < a->live)
#pragma GCC unroll 4
            for (int v = 0; v < DK_PV; v++)
                if (v < nv)
                    DK_ST(a->y + r * a->P + a->yoff[v], s[v][r]);
}

/* The filter gradient's pixel-vector block, for layers with few output
 * channels: no <= DK_FO output channels x ut <= UR filter taps, summed over
 * the pixels of one image. Per vector of DK_L consecutive output pixels of
 * a row (stride 1 across): no vector loads of dy, read in its planes (no
 * transposed copy), ut unaligned loads of the image at the taps' offsets,
 * no x ut FMAs; a row's last vector ends at its end, its lanes that the
 * vector before already summed masked off in dy. The sums stay in
 * registers over the whole image; their lanes' sums are added to a->dw
 * ([o][k], rows a->K apart) at the end. */
DK_INLINE void DK(pf_step)(dk_v s[DK_FO][UR], const float *g, int64_t P, const float *x, const int64_t *o,
                           const float *mask, const int no, const int ut)
{
    dk_v d[DK_FO];
#pragma GCC unroll 4
    for (int c = 0; c < DK_FO; c++)
        d[c] = c < no ? (mask ? DK_AND(DK_LD(g + c * P), DK_LD(mask)) : DK_LD(g + c * P)) : DK_ZERO();
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
        if (j < ut) {
            dk_v v = DK_LD(x + o[j]);
            /* in a register: GCC would fold the load into each of the no
             * FMAs, no unaligned loads where one does */
            __asm__("" : "+v"(v));
#pragma GCC unroll 4
            for (int c = 0; c < DK_FO; c++)
                if (c < no)
                    s[c][j] = DK_FMA(d[c], v, s[c][j]);
        }
}

DK_INLINE void DK(pf_body)(const pf_args *a, const int no, const int ut)
{
    dk_v s[DK_FO][UR];
    int64_t o[UR];
    DK(rb_offsets)(o, a->off, ut);
#pragma GCC unroll 6
    for (int j = 0; j < UR; j++)
#pragma GCC unroll 4
        for (int c = 0; c < DK_FO; c++)
            s[c][j] = DK_ZERO();
    const int64_t last = a->ow - DK_L, P = a->oh * a->ow;
    for (int64_t oh = 0; oh < a->oh; oh++) {
        const float *g = a->g + oh * a->ow, *x = a->x + oh * a->sh * a->wd;
        int64_t p = 0;
        for (; p <= last; p += DK_L)
            DK(pf_step)(s, g + p, P, x + p, o, NULL, no, ut);
        if (p < a->ow)
            DK(pf_step)(s, g + last, P, x + last, o, a->mask, no, ut);
    }
#pragma GCC unroll 4
    for (int c = 0; c < DK_FO; c++)
#pragma GCC unroll 6
        for (int j = 0; j < UR; j++)
            if (c < no && j < ut)
                a->dw[c * a->K + j] += DK_HSUM(s[c][j]);
}

#undef DK_INLINE
#undef DK
#undef DK_L
#undef DK_NB
#undef DK_PV
#undef DK_PR
#undef DK_FN
#undef dk_v
#undef DK_LD
#undef DK_ST
#undef DK_BC
#undef DK_FMA
#undef DK_ZERO
#undef DK_FO
#undef DK_AND
#undef DK_HSUM
