/* conv.h -- what conv.c (Conv2D and its backprops by im2col + GEMM) and
 * conv_direct.c (the same by direct AVX2/AVX-512 kernels) share: the
 * geometry of one convolution. Layout: x [N,C,H,W], filter [OC,C,KH,KW],
 * y [N,OC,OH,OW]. Internal to exec/ops. */
#ifndef FATHOM_EXEC_OPS_CONV_H
#define FATHOM_EXEC_OPS_CONV_H

#include "../internal.h"

typedef struct conv_geom {
    int64_t n, c, h, w;     /* input */
    int64_t oc, kh, kw;     /* filter */
    int64_t sh, sw, ph, pw; /* stride, padding */
    int64_t oh, ow;         /* output */
} conv_geom;

static inline int64_t conv_k(const conv_geom *q) { return q->c * q->kh * q->kw; }
static inline int64_t conv_p(const conv_geom *q) { return q->oh * q->ow; }

/* The vector instructions the engine's kernels use now: exec_simd_set's
 * level, the CPU's best until it is called (exec/isa.c). */
exec_simd conv_simd(void);

/* Whether the direct kernels run (AVX2 and FMA, and a level that allows
 * them). */
bool conv_direct_supported(void);
/* Scratch floats conv_direct_fwd needs (packed filter, padded images). */
int64_t conv_direct_scratch(const conv_geom *q, int nthreads);
/* y = x (*) w, on nthreads OpenMP threads; scratch of conv_direct_scratch()
 * floats. Only where conv_direct_supported(). */
void conv_direct_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads);
/* The forward convolution whose output is a stride-1 convolution's input
 * gradient (conv_direct_bwd_input and conv_wino_bwd_input run it; their
 * scratch is asked of this geometry). */
conv_geom conv_direct_transposed(const conv_geom *q);
/* Scratch floats conv_direct_bwd_input needs. */
int64_t conv_direct_input_scratch(const conv_geom *q, int nthreads);
/* dx = the input gradient of q from dy and q's filter w (stride 1: one
 * forward convolution of dy; a larger stride: one per phase of dx). */
void conv_direct_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch,
                           int nthreads);

/* Scratch floats conv_direct_bwd_filter needs. */
int64_t conv_direct_filter_scratch(const conv_geom *q, int nthreads);
/* dw = q's filter gradient from x and dy (any stride and padding). */
void conv_direct_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch,
                            int nthreads);

/* Whether the Winograd kernels (conv_winograd.c) apply: 3x3, stride 1,
 * padding at most 2 (F(4x4, 3x3), forward and both gradients). */
bool conv_wino_applies(const conv_geom *q);
/* Scratch floats conv_wino_fwd needs; conv_wino_bwd_input asks it of
 * conv_direct_transposed(q). */
int64_t conv_wino_scratch(const conv_geom *q, int nthreads);
/* The floats of q's transformed filters (the head of conv_wino_scratch's,
 * which conv_wino_fwd leaves unused when given u). */
int64_t conv_wino_filter_floats(const conv_geom *q);
/* y = x (*) w; the transformed filters in u when not NULL (have_u: u holds
 * w's transform already, else it is made there), else in scratch. */
void conv_wino_fwd(const conv_geom *q, const float *x, const float *w, float *y, float *scratch, int nthreads, float *u,
                   bool have_u);
void conv_wino_bwd_input(const conv_geom *q, const float *w, const float *dy, float *dx, float *scratch, int nthreads);
int64_t conv_wino_filter_scratch(const conv_geom *q, int nthreads);
/* dw = q's filter gradient, overwritten */
void conv_wino_bwd_filter(const conv_geom *q, const float *x, const float *dy, float *dw, float *scratch, int nthreads);

#endif
