/* test_ops_nn.c -- the convolution / pooling / normalization kernels
 * (exec/ops/conv.c, pool.c, norm.c) against naive reference loops in
 * double precision, on odd shapes: sizes that are no multiple of 8,
 * stride 2, padding, batch 1 (the channel-parallel path) and batches of
 * several images (the image-parallel path, two threads), the 1x1 fast path.
 * Each check prints its max abs diff. */
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
#include "tests/fixtures/refcheck.h"
#include "exec/internal.h"

static uint64_t g_seed = 99;
static float frand(float lo, float hi)
{
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((g_seed >> 33) % 1000003) / 1000003.0f;
}

static float *rand_buf(int64_t n, float lo, float hi)
{
    float *p = malloc((size_t)n * sizeof *p);
    assert_non_null(p);
    for (int64_t i = 0; i < n; i++)
        p[i] = frand(lo, hi);
    return p;
}

typedef struct tin {
    int ndim;
    int64_t shape[4];
    const float *data;
} tin;

/* A graph with one node of `op` on inputs filled from `ins`, planned and
 * run once (forward). Output ids go to outs. */
static exec_graph *run_one(const char *opname, int nin, const tin *ins, int nattrs, const int64_t *attrs,
                           uint32_t *outs)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t ids[8];
    for (int i = 0; i < nin; i++)
        ids[i] = exec_input(g, "in", EXEC_F32, ins[i].ndim, ins[i].shape);
    int op = exec_op_from_name(opname);
    assert_true(op >= 0);
    exec_op_add(g, (exec_op)op, nin, ids, nattrs, attrs, outs);
    if (exec_graph_status(g))
        fprintf(stderr, "%s: %s\n", opname, exec_errmsg());
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    for (int i = 0; i < nin; i++) {
        exec_tensor *t = exec_tensor_get(g, ids[i]);
        memcpy(t->data, ins[i].data, t->bytes);
    }
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    return g;
}

/* ---- convolution -------------------------------------------------------- */
typedef struct cv {
    int64_t n, c, h, w, oc, kh, kw, sh, sw, ph, pw;
} cv;
static int64_t cv_oh(const cv *q) { return (q->h + 2 * q->ph - q->kh) / q->sh + 1; }
static int64_t cv_ow(const cv *q) { return (q->w + 2 * q->pw - q->kw) / q->sw + 1; }
#define X4(a, b, c, d, B, C, D) ((((a) * (B) + (b)) * (C) + (c)) * (D) + (d))

/* the 7-loop direct convolution */
static void ref_conv(const cv *q, const float *x, const float *f, double *y)
{
    int64_t OH = cv_oh(q), OW = cv_ow(q);
    for (int64_t n = 0; n < q->n; n++)
        for (int64_t o = 0; o < q->oc; o++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double s = 0;
                    for (int64_t c = 0; c < q->c; c++)
                        for (int64_t kh = 0; kh < q->kh; kh++)
                            for (int64_t kw = 0; kw < q->kw; kw++) {
                                int64_t ih = oh * q->sh - q->ph + kh, iw = ow * q->sw - q->pw + kw;
                                if (ih >= 0 && ih < q->h && iw >= 0 && iw < q->w)
                                    s += (double)x[X4(n, c, ih, iw, q->c, q->h, q->w)] *
                                         f[X4(o, c, kh, kw, q->c, q->kh, q->kw)];
                            }
                    y[X4(n, o, oh, ow, q->oc, OH, OW)] = s;
                }
}

/* dx and dw of the same loops, scattered */
static void ref_conv_back(const cv *q, const float *x, const float *f, const float *dy, double *dx, double *dw)
{
    int64_t OH = cv_oh(q), OW = cv_ow(q);
    memset(dx, 0, (size_t)(q->n * q->c * q->h * q->w) * sizeof *dx);
    memset(dw, 0, (size_t)(q->oc * q->c * q->kh * q->kw) * sizeof *dw);
    for (int64_t n = 0; n < q->n; n++)
        for (int64_t o = 0; o < q->oc; o++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    double g = dy[X4(n, o, oh, ow, q->oc, OH, OW)];
                    for (int64_t c = 0; c < q->c; c++)
                        for (int64_t kh = 0; kh < q->kh; kh++)
                            for (int64_t kw = 0; kw < q->kw; kw++) {
                                int64_t ih = oh * q->sh - q->ph + kh, iw = ow * q->sw - q->pw + kw;
                                if (ih >= 0 && ih < q->h && iw >= 0 && iw < q->w) {
                                    dx[X4(n, c, ih, iw, q->c, q->h, q->w)] +=
                                        g * f[X4(o, c, kh, kw, q->c, q->kh, q->kw)];
                                    dw[X4(o, c, kh, kw, q->c, q->kh, q->kw)] +=
                                        g * x[X4(n, c, ih, iw, q->c, q->h, q->w)];
                                }
                            }
                }
}

/* q's three ops by the algorithms in the bit set `algos` (bit a: algos[a]
 * below) against the reference loops */
static void check_conv_by(const cv *q, unsigned algos_run, const char *tag)
{
    int64_t OH = cv_oh(q), OW = cv_ow(q);
    int64_t nx = q->n * q->c * q->h * q->w, nf = q->oc * q->c * q->kh * q->kw, ny = q->n * q->oc * OH * OW;
    float *x = rand_buf(nx, -1, 1), *f = rand_buf(nf, -1, 1), *dy = rand_buf(ny, -1, 1);
    double *y = malloc((size_t)ny * sizeof *y), *dx = malloc((size_t)nx * sizeof *dx),
           *dw = malloc((size_t)nf * sizeof *dw);
    char what[160];
    snprintf(what, sizeof what, "[%lld,%lld,%lld,%lld] k%lldx%lld oc%lld s%lldx%lld p%lldx%lld", (long long)q->n,
             (long long)q->c, (long long)q->h, (long long)q->w, (long long)q->kh, (long long)q->kw, (long long)q->oc,
             (long long)q->sh, (long long)q->sw, (long long)q->ph, (long long)q->pw);
    ref_conv(q, x, f, y);
    ref_conv_back(q, x, f, dy, dx, dw);

    /* the three ops, each every way: im2col + GEMM, the direct kernels
     * (which run im2col where the machine lacks AVX2; a strided input
     * gradient by phases), Winograd (3x3 stride 1; im2col elsewhere) and auto
     * (the fastest of those that apply, measured on the first run) */
    const struct {
        const char *op;
        tin in[2];
        int64_t attrs[8], out[4];
        const double *ref;
        int64_t n;
    } ops[] = {
        { "Conv2D",
          { { 4, { q->n, q->c, q->h, q->w }, x }, { 4, { q->oc, q->c, q->kh, q->kw }, f } },
          { q->sh, q->sw, q->ph, q->pw },
          { q->n, q->oc, OH, OW },
          y,
          ny },
        { "Conv2DBackpropInput",
          { { 4, { q->oc, q->c, q->kh, q->kw }, f }, { 4, { q->n, q->oc, OH, OW }, dy } },
          { q->sh, q->sw, q->ph, q->pw, q->n, q->c, q->h, q->w },
          { q->n, q->c, q->h, q->w },
          dx,
          nx },
        { "Conv2DBackpropFilter",
          { { 4, { q->n, q->c, q->h, q->w }, x }, { 4, { q->n, q->oc, OH, OW }, dy } },
          { q->sh, q->sw, q->ph, q->pw, q->oc, q->c, q->kh, q->kw },
          { q->oc, q->c, q->kh, q->kw },
          dw,
          nf },
    };
    static const exec_conv_algo algos[] = { EXEC_CONV_IM2COL, EXEC_CONV_DIRECT, EXEC_CONV_WINOGRAD, EXEC_CONV_AUTO };
    static const char *const names[] = { "im2col", "direct", "winograd", "auto" };
    /* Winograd F(4x4, 3x3) rounds more than the direct sums: its transforms
     * scale terms by up to 8x8 before they cancel */
    static const double tols[] = { 1e-5, 1e-5, 1e-4, 1e-4 };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++) {
            if (!(algos_run >> a & 1))
                continue;
            exec_conv_algo_set(algos[a]);
            int shapes0[4], same0[4]; /* auto's agreement with each forced algorithm, before */
            for (int f = 0; f < 3; f++)
                exec_conv_auto_agreement(algos[f], exec_threads_get(), &shapes0[f], &same0[f]);
            uint32_t out[1];
            exec_graph *g = run_one(ops[o].op, 2, ops[o].in, o ? 8 : 4, ops[o].attrs, out);
            exec_tensor *t = exec_tensor_get(g, out[0]);
            assert_int_equal(t->ndim, 4);
            for (int d = 0; d < 4; d++)
                assert_int_equal(t->shape[d], ops[o].out[d]);
            char buf[200];
            snprintf(buf, sizeof buf, "%s (%s%s) %s", ops[o].op, names[a], tag, what);
            refcheck_compare(buf, t->data, ops[o].ref, ops[o].n, tols[a]);
            exec_graph_destroy(g);
            if (algos[a] == EXEC_CONV_AUTO) {
                /* auto chose, and only among the algorithms that apply */
                const int64_t geom[11] = { q->n, q->c, q->h, q->w, q->oc, q->kh, q->kw, q->sh, q->sw, q->ph, q->pw };
                exec_conv_algo c = exec_conv_algo_chosen((int)o, geom, exec_threads_get());
                assert_int_not_equal(c, EXEC_CONV_AUTO);
                if (c == EXEC_CONV_WINOGRAD)
                    assert_true(q->kh == 3 && q->kw == 3 && q->sh == 1 && q->sw == 1);
                /* a shape new to auto counts once for every forced algorithm, and agrees with the one it chose */
                for (int f = 0; f < 3; f++) {
                    int shapes, same;
                    exec_conv_auto_agreement(algos[f], exec_threads_get(), &shapes, &same);
                    assert_true(shapes - shapes0[f] == shapes - shapes0[0] && shapes - shapes0[f] <= 1);
                    assert_true(same - same0[f] >= 0 && same - same0[f] <= shapes - shapes0[f]);
                    if (algos[f] == c)
                        assert_int_equal(same - same0[f], shapes - shapes0[f]);
                }
            }
        }
    exec_conv_algo_set(EXEC_CONV_AUTO);
    free(x), free(f), free(dy), free(y), free(dx), free(dw);
}

static void check_conv(const cv *q) { check_conv_by(q, 0xF, ""); }

static void test_conv(void **state)
{
    (void)state;
    static const cv cases[] = {
        /* n  c   h   w  oc kh kw sh sw ph pw */
        { 1, 3, 11, 13, 5, 3, 3, 1, 1, 1, 1 },   /* batch 1 */
        { 3, 3, 11, 13, 5, 3, 3, 1, 1, 1, 1 },   /* odd batch, image-parallel */
        { 2, 5, 9, 7, 6, 3, 3, 2, 2, 1, 1 },     /* stride 2 */
        { 3, 2, 10, 10, 4, 3, 3, 2, 2, 0, 0 },   /* a row and column no window covers */
        { 2, 3, 7, 9, 5, 5, 3, 2, 1, 2, 1 },     /* non-square kernel and stride */
        { 1, 7, 6, 5, 9, 1, 1, 1, 1, 0, 0 },     /* 1x1 fast path, batch 1 */
        { 4, 13, 5, 7, 11, 1, 1, 1, 1, 0, 0 },   /* 1x1 fast path, batched */
        { 3, 6, 9, 9, 5, 1, 1, 2, 2, 0, 0 },     /* 1x1 stride 2 (im2col): a strided gather */
        { 4, 33, 8, 9, 40, 1, 1, 1, 1, 0, 0 },   /* 1x1 in place per image (72 columns, 33 and 40 summed) */
        { 8, 2048, 7, 7, 8, 1, 1, 1, 1, 0, 0 },  /* 1x1 on 7x7 maps, 2048 channels: 4 images a group, past an
                                                    im2col tile's bound (a 1x1's copy is bounded at four) */
        { 3, 32, 8, 8, 32, 1, 1, 1, 1, 0, 0 },   /* 1x1 in place, whole column blocks, odd batch */
        { 1, 64, 47, 47, 5, 1, 1, 2, 2, 0, 0 },  /* 1x1 stride 2, batch 1: channel-parallel gather */
        { 2, 3, 50, 48, 4, 1, 1, 2, 2, 0, 0 },   /* 1x1 stride 2, wide: gathered in tiles of rows */
        { 2, 3, 9, 10, 4, 1, 1, 1, 2, 0, 0 },    /* 1x1 strided across only */
        { 3, 4, 9, 10, 5, 1, 1, 3, 1, 0, 0 },    /* 1x1 strided down only */
        { 1, 16, 21, 19, 9, 3, 3, 1, 1, 1, 1 },  /* batch 1, large enough for channel-parallel im2col */
        { 2, 3, 23, 23, 7, 11, 11, 4, 4, 2, 2 }, /* AlexNet conv1-like */
        { 3, 4, 25, 23, 5, 3, 3, 1, 1, 1, 1 },   /* wide images: one image per GEMM */
        { 2, 5, 24, 23, 6, 1, 1, 1, 1, 0, 0 },   /* wide 1x1: no copy at all */
        { 5, 4, 36, 36, 6, 8, 8, 4, 4, 0, 0 },   /* DQN conv1-like: stride 4 phases, grouped, uneven split */
        { 3, 3, 17, 16, 4, 5, 5, 3, 3, 2, 2 },   /* stride 3 with padding: negative phase offsets */
        { 2, 2, 15, 15, 3, 4, 4, 2, 3, 1, 2 },   /* different strides across and down */
        { 1, 16, 41, 41, 5, 3, 3, 2, 2, 1, 1 },  /* batch 1, strided channel-parallel */
        { 2, 32, 45, 41, 4, 3, 3, 1, 1, 1, 1 },  /* wide images in tiles of rows: 22 + 22 + 1 */
        { 3, 40, 61, 61, 3, 5, 5, 2, 2, 2, 2 },  /* strided, in tiles of 17 + 14 rows */
        { 3, 5, 12, 11, 40, 3, 3, 1, 1, 1, 1 },  /* direct: 2 blocks of 16 channels and one of 8 */
        { 1, 3, 9, 9, 17, 2, 3, 1, 2, 1, 2 },    /* direct: 17 channels (a block of 16 + 1 of 8), batch 1 */
        { 5, 2, 13, 10, 8, 4, 2, 3, 2, 0, 1 },   /* direct: one 8-wide block, pixel blocks across rows */
        { 2, 19, 8, 9, 6, 3, 2, 1, 1, 2, 0 },    /* direct input gradient: 19 channels out, padding 2 of 3 */
        { 2, 64, 9, 9, 64, 3, 3, 1, 1, 0, 0 },   /* DQN conv3: its input gradient's dy padded by 2, blocks whose
                                                    rows reach the image through 1, 2 or 3 filter rows */
        { 2, 32, 20, 20, 64, 4, 4, 2, 2, 0, 0 }, /* DQN conv2: the input gradient's phases merged, padded by 1 */
        { 1, 1, 3, 3, 1, 3, 3, 1, 1, 0, 0 },     /* Winograd: one output, one partial tile */
        { 2, 3, 4, 6, 2, 3, 3, 1, 1, 2, 2 },     /* Winograd: padding 2 (its input gradient pads 0) */
        { 1, 5, 13, 11, 7, 3, 3, 1, 1, 0, 1 },   /* Winograd: odd sizes, batch 1, partial tiles both ways */
        { 3, 20, 30, 29, 24, 3, 3, 1, 1, 1, 1 }, /* Winograd: several chunks of tiles over both threads */
        { 2, 4, 130, 67, 3, 3, 3, 1, 1, 1, 0 },  /* Winograd: many chunks of its largest size */
        /* the whole batch in one GEMM (small maps: a thread's images under 128 columns) */
        { 8, 16, 4, 4, 24, 3, 3, 1, 1, 1, 1 }, /* VGG small's 4x4 maps: rows of 4 through the padded copy */
        { 6, 3, 3, 8, 5, 3, 3, 1, 1, 1, 1 },   /* rows of 8 */
        { 9, 5, 4, 5, 7, 3, 3, 1, 1, 1, 1 },   /* rows of 5, odd batch over two threads */
        { 10, 2, 3, 5, 3, 3, 3, 1, 1, 2, 0 },  /* padding 2 down, none across: rows of 3 */
        { 8, 4, 7, 7, 6, 3, 3, 2, 2, 1, 1 },   /* strided: phase planes, no padded copy */
        /* the filter gradient's pixel-vector blocks (at most 32 channels out, rows of a vector or more) */
        { 1, 3, 20, 32, 5, 3, 3, 2, 1, 1, 1 },  /* stride 2 down only, rows of 2 vectors, batch 1: one image's
                                                   blocks over both threads, channels 4 + 1 */
        { 3, 7, 17, 16, 30, 2, 3, 1, 1, 0, 1 }, /* rows of exactly one vector (AVX-512), 30 channels, 42 taps */
        { 2, 2, 9, 37, 32, 3, 3, 1, 1, 1, 1 },  /* 32 channels, rows of 37: the last vector masked */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_conv(&cases[i]);
    /* every shape (3 op kinds of each case) is auto's, and agrees with at least one forced algorithm */
    int shapes = 0, same = 0, any = 0;
    for (int f = EXEC_CONV_IM2COL; f <= EXEC_CONV_WINOGRAD; f++) {
        exec_conv_auto_agreement((exec_conv_algo)f, exec_threads_get(), &shapes, &same);
        any += same;
    }
    print_message("auto's shapes: %d, agreeing with a forced algorithm %d times\n", shapes, any);
    assert_true(shapes >= (int)(3 * (sizeof cases / sizeof cases[0])) && any >= shapes);
}

/* auto where every measurement run looks disturbed (the clean fraction set
 * above 1): each call measures again, the third settles, and every call's
 * output is right whichever algorithm ran last */
static void test_conv_auto_void(void **state)
{
    (void)state;
    const cv q = { 2, 3, 9, 11, 4, 3, 3, 1, 1, 1, 1 }; /* a shape no other case uses */
    const int64_t OH = q.h, OW = q.w, nx = q.n * q.c * q.h * q.w, nf = q.oc * q.c * 9, ny = q.n * q.oc * OH * OW;
    float *x = rand_buf(nx, -1, 1), *f = rand_buf(nf, -1, 1);
    double *y = malloc((size_t)ny * sizeof *y);
    assert_non_null(y);
    ref_conv(&q, x, f, y);
    const int64_t geom[11] = { q.n, q.c, q.h, q.w, q.oc, q.kh, q.kw, q.sh, q.sw, q.ph, q.pw };
    exec_conv_algo_set(EXEC_CONV_AUTO);
    exec_conv_pick_clean_set(2.0);
    uint32_t out[1];
    const tin in[2] = { { 4, { q.n, q.c, q.h, q.w }, x }, { 4, { q.oc, q.c, 3, 3 }, f } };
    const int64_t attrs[4] = { 1, 1, 1, 1 };
    exec_graph *g = run_one("Conv2D", 2, in, 4, attrs, out);
    for (int call = 1; call <= 4; call++) {
        if (call > 1) {
            exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
            assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
        }
        char what[80];
        snprintf(what, sizeof what, "Conv2D (auto, every run disturbed) call %d", call);
        refcheck_compare(what, exec_dataf(g, out[0]), y, ny, 1e-4);
        const int tries = exec_conv_algo_tries(0, geom, exec_threads_get());
        printf("  measurements after call %d: %d\n", call, tries);
        assert_int_equal(tries, call < 3 ? call : 3);
        assert_int_not_equal(exec_conv_algo_chosen(0, geom, exec_threads_get()), EXEC_CONV_AUTO);
    }
    exec_graph_destroy(g);
    exec_conv_pick_clean_set(0);
    free(x), free(f), free(y);
}

/* check_conv_by on each case with `algos`, at every vector set from `first`
 * to the widest this CPU has; returns that widest set */
static exec_simd check_conv_by_sets(const cv *cases, size_t n, exec_simd first, unsigned algos)
{
    static const char *const names[] = { "", ", plain C", ", AVX2", ", AVX-512" };
    const exec_simd best = exec_simd_best();
    for (exec_simd s = first; s <= best; s++) {
        assert_int_equal(exec_simd_set(s), s);
        for (size_t i = 0; i < n; i++)
            check_conv_by(&cases[i], algos, names[s]);
    }
    return best;
}

/* The Winograd transforms on each vector width this CPU has (plain C,
 * AVX2, AVX-512), on shapes whose rows of tiles end inside a vector of 8
 * and of 16 tiles, chunks that start and end inside a row of tiles, and
 * every padding the kernels take */
static void test_conv_winograd_simd(void **state)
{
    (void)state;
    static const cv cases[] = {
        /* n  c   h   w  oc kh kw sh sw ph pw */
        { 1, 1, 3, 3, 1, 3, 3, 1, 1, 0, 0 },     /* one output, one partial tile */
        { 2, 3, 4, 6, 2, 3, 3, 1, 1, 2, 2 },     /* padding 2 */
        { 1, 5, 13, 11, 7, 3, 3, 1, 1, 0, 1 },   /* partial tiles both ways, batch 1 */
        { 2, 3, 9, 70, 5, 3, 3, 1, 1, 1, 1 },    /* 18 tiles a row: 16 + 2, 8 + 8 + 2 */
        { 3, 4, 38, 37, 6, 3, 3, 1, 1, 1, 0 },   /* 9 tiles a row, rows split by chunks */
        { 2, 17, 22, 66, 19, 3, 3, 1, 1, 2, 1 }, /* odd channels, 17 filter pairs past a vector */
        { 3, 20, 30, 29, 24, 3, 3, 1, 1, 1, 1 }, /* several chunks over both threads */
        { 8, 24, 8, 8, 40, 3, 3, 1, 1, 1, 1 },   /* 32 tiles (VGG's 8x8 maps): the threads share the chunk */
        { 8, 17, 4, 4, 20, 3, 3, 1, 1, 1, 1 },   /* 8 tiles, shared: GEMMs narrower than a vector */
        { 6, 35, 4, 5, 100, 3, 3, 1, 1, 1, 1 },  /* 12 tiles (narrow: products transposed), 100 channels out:
                                                    48 + 48 + 4 of them across the lanes, 35 back */
        { 1, 40, 13, 21, 33, 3, 3, 1, 1, 0, 1 }, /* 24 tiles of one image: narrow, not shared (one image) */
    };
    const exec_simd best = check_conv_by_sets(cases, sizeof cases / sizeof cases[0], EXEC_SIMD_SCALAR, 1u << 2);
    assert_int_equal(exec_simd_set(EXEC_SIMD_AUTO), best);
    assert_int_equal(exec_simd_set(EXEC_SIMD_AVX512), best); /* capped at the CPU's */
    exec_simd_set(EXEC_SIMD_AUTO);
}

/* One convolution q of an inference graph under auto, run twice against
 * the naive result: after each run the graph keeps Winograd's transformed
 * filters exactly where auto chose Winograd. */
static void auto_inference(cv q, uint64_t seed)
{
    const int64_t qx[4] = { q.n, q.c, q.h, q.w }, qf[4] = { q.oc, q.c, 3, 3 };
    const int64_t nx = q.n * q.c * q.h * q.w, ny = q.n * q.oc * cv_oh(&q) * cv_ow(&q);
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, seed), EXEC_OK);
    uint32_t x = exec_input(g, "x", EXEC_F32, 4, qx), w = exec_weight(g, "w", 4, qf, EXEC_INIT_GLOROT);
    uint32_t y = ex_conv2d(g, x, w, 1, 1, 1, 1);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *xd = rand_buf(nx, -1, 1);
    memcpy(exec_dataf(g, x), xd, (size_t)nx * sizeof *xd);
    double *ref = malloc((size_t)ny * sizeof *ref);
    assert_non_null(ref);
    ref_conv(&q, xd, exec_dataf(g, w), ref);
    const int64_t geom[11] = { q.n, q.c, q.h, q.w, q.oc, 3, 3, 1, 1, 1, 1 };
    const exec_run_opts fwd = { .max_phase = EXEC_PHASE_forward };
    for (int run = 1; run <= 2; run++) {
        assert_int_equal(exec_graph_run(g, &fwd), EXEC_OK);
        char what[80];
        snprintf(what, sizeof what, "auto, %lld channels in, run %d", (long long)q.c, run);
        refcheck_compare(what, exec_dataf(g, y), ref, ny, 1e-4);
        const exec_conv_algo chosen = exec_conv_algo_chosen(0, geom, exec_threads_get());
        printf("  auto chose %s; kept after run %d: %zu bytes\n", exec_conv_algo_name(chosen), run, g->kcache_bytes);
        assert_int_not_equal(chosen, EXEC_CONV_AUTO);
        if (chosen == EXEC_CONV_WINOGRAD)
            assert_true(g->kcache_bytes >= (size_t)(36 * q.oc * q.c) * sizeof(float));
        else
            assert_int_equal(g->kcache_bytes, 0);
    }
    exec_graph_destroy(g);
    free(xd), free(ref);
}

/* A Winograd forward keeps its transformed filters across runs while the
 * filter is unchanged. The cache must follow every change: a training
 * step between two inferences (the new weights copied in through
 * exec_dataf, as deepq syncs its target network), a write through
 * exec_tensor_get, and, in the training graph itself, the optimizer's
 * update (a filter a node writes is transformed at every run). */
static void test_conv_winograd_cache(void **state)
{
    (void)state;
    const cv q = { 2, 5, 9, 10, 6, 3, 3, 1, 1, 1, 1 };
    const int64_t OH = cv_oh(&q), OW = cv_ow(&q), nx = q.n * q.c * q.h * q.w, nf = q.oc * q.c * 9,
                  ny = q.n * q.oc * OH * OW;
    const int64_t xs[4] = { q.n, q.c, q.h, q.w }, fs[4] = { q.oc, q.c, 3, 3 };
    float *x = rand_buf(nx, -1, 1);
    double *ref = malloc((size_t)ny * sizeof *ref);
    float *before = malloc((size_t)ny * sizeof *before);
    assert_non_null(ref);
    assert_non_null(before);
    exec_conv_algo_set(EXEC_CONV_WINOGRAD);

    /* training graph: y = conv(x, w), loss = sum(y * t), plain SGD */
    exec_graph *tg = NULL, *ig = NULL;
    assert_int_equal(exec_graph_create(&tg, 3), EXEC_OK);
    uint32_t tx = exec_input(tg, "x", EXEC_F32, 4, xs),
             tt = exec_input(tg, "t", EXEC_F32, 4, (int64_t[]){ q.n, q.oc, OH, OW });
    uint32_t tw = exec_weight(tg, "w", 4, fs, EXEC_INIT_GLOROT);
    uint32_t ty = ex_conv2d(tg, tx, tw, 1, 1, 1, 1);
    uint32_t loss = ex_sum(tg, ex_mul(tg, ty, tt), 4, (int64_t[]){ 0, 1, 2, 3 }, 0);
    assert_int_equal(exec_gradients(tg, loss), EXEC_OK);
    assert_int_equal(exec_optimizer_sgd(tg, 0.5f), EXEC_OK);
    assert_int_equal(exec_graph_status(tg), EXEC_OK);
    assert_int_equal(exec_graph_plan(tg), EXEC_OK);
    memcpy(exec_dataf(tg, tx), x, (size_t)nx * sizeof *x);
    float *t = exec_dataf(tg, tt);
    for (int64_t i = 0; i < ny; i++)
        t[i] = frand(-1, 1);

    /* inference graph: the same convolution, its own copy of the weights */
    assert_int_equal(exec_graph_create(&ig, 4), EXEC_OK);
    uint32_t ix = exec_input(ig, "x", EXEC_F32, 4, xs), iw = exec_weight(ig, "w", 4, fs, EXEC_INIT_ZERO);
    uint32_t iy = ex_conv2d(ig, ix, iw, 1, 1, 1, 1);
    assert_int_equal(exec_graph_status(ig), EXEC_OK);
    assert_int_equal(exec_graph_plan(ig), EXEC_OK);
    memcpy(exec_dataf(ig, ix), x, (size_t)nx * sizeof *x);
    exec_run_opts fwd = { .max_phase = EXEC_PHASE_forward }, all = { .max_phase = EXEC_PHASE_update };
    /* read (never written) through a pointer got once: only the update
     * writes the training graph's filter from here on */
    const float *tws = exec_dataf(tg, tw);

    for (int round = 0; round < 3; round++) {
        /* infer twice with the training graph's current weights */
        memcpy(exec_dataf(ig, iw), tws, (size_t)nf * sizeof(float));
        ref_conv(&q, x, tws, ref);
        for (int rep = 0; rep < 2; rep++) {
            assert_int_equal(exec_graph_run(ig, &fwd), EXEC_OK);
            char what[80];
            snprintf(what, sizeof what, "Winograd kept filters, round %d run %d", round, rep);
            refcheck_compare(what, exec_dataf(ig, iy), ref, ny, 1e-4);
        }
        if (round > 0) { /* the step changed the result: the check above could fail */
            double moved = 0;
            const float *y = exec_dataf(ig, iy);
            for (int64_t i = 0; i < ny; i++)
                moved = fmax(moved, fabs((double)y[i] - before[i]));
            assert_true(moved > 1e-2);
        }
        memcpy(before, exec_dataf(ig, iy), (size_t)ny * sizeof *before);
        /* a training step; its forward must see the previous step's update */
        ref_conv(&q, x, tws, ref);
        assert_int_equal(exec_graph_run(tg, &all), EXEC_OK);
        refcheck_compare("Winograd in training, after an update", exec_dataf(tg, ty), ref, ny, 1e-4);
    }

    /* a write through exec_tensor_get: the filter doubled */
    exec_tensor *wt = exec_tensor_get(ig, iw);
    float *w = wt->data;
    for (int64_t i = 0; i < nf; i++)
        w[i] *= 2;
    ref_conv(&q, x, w, ref);
    assert_int_equal(exec_graph_run(ig, &fwd), EXEC_OK);
    refcheck_compare("Winograd kept filters, after a write", exec_dataf(ig, iy), ref, ny, 1e-4);

    /* the kept filters are workspace memory of the inference graph */
    exec_mem_stats m;
    exec_graph_mem(ig, &m);
    assert_true(m.peak_workspace >= (size_t)(36 * q.oc * q.c) * sizeof(float));

    exec_conv_algo_set(EXEC_CONV_AUTO);
    exec_graph_destroy(tg);
    exec_graph_destroy(ig);
    free(x), free(ref), free(before);

    /* auto, on shapes this process has not met, in an inference graph:
     * - VGG small's 16x16x64 layer, which Winograd wins on the machines
     *   here (1.27 against 0.93 of the peak): the first run, which
     *   measured, has also made the kept filters (else the second run pays
     *   for them);
     * - three channels in, where the transforms outweigh the products
     *   (Winograd 5-6x slower than direct here): Winograd is measured from
     *   the filters it keeps, made in its first measured run, and they are
     *   freed where another algorithm wins */
    auto_inference((cv){ 8, 64, 16, 16, 64, 3, 3, 1, 1, 1, 1 }, 5);
    auto_inference((cv){ 8, 3, 32, 32, 16, 3, 3, 1, 1, 1, 1 }, 6);
}

/* The direct kernels on each vector width this CPU has (AVX2: blocks of 16
 * channels in vectors of 8; AVX-512: up to 64 channels in vectors of 16):
 * every block width (1 to 4 vectors) with a partial last vector, pixel
 * blocks that cross output rows, padding, strides, batch 1, and a filter
 * gradient too large to run over the whole batch at once; and the
 * pixel-vector blocks (AVX2: 2 vectors of 8 pixels x 6 channels; AVX-512:
 * 3 of 16 x 8) with partial channel blocks, rows that end inside a vector,
 * every count of vectors a block */
static void test_conv_direct_simd(void **state)
{
    (void)state;
    static const cv cases[] = {
        /* n  c   h   w  oc kh kw sh sw ph pw */
        { 1, 3, 9, 9, 5, 2, 3, 1, 2, 1, 2 },     /* one partial vector, batch 1 */
        { 2, 4, 11, 10, 17, 3, 3, 1, 1, 1, 1 },  /* a vector and one channel */
        { 3, 5, 12, 11, 40, 3, 3, 1, 1, 1, 1 },  /* 40: 16 + 16 + 8, or 48 in vectors of 16 */
        { 2, 6, 13, 13, 64, 4, 4, 2, 2, 0, 0 },  /* 64: one AVX-512 block, stride 2 */
        { 2, 7, 10, 9, 70, 3, 2, 1, 1, 2, 0 },   /* a block of 64 and one of 6, padding 2 of 3 */
        { 1, 9, 21, 20, 100, 5, 5, 3, 2, 2, 1 }, /* 64 + 36 (three vectors), uneven strides */
        { 5, 4, 36, 36, 32, 8, 8, 4, 4, 0, 0 },  /* DQN conv1-like: 32 channels, stride 4 */
        { 4, 16, 40, 40, 48, 3, 3, 1, 1, 1, 1 }, /* filter gradient image by image, in rows */
        { 3, 32, 20, 20, 64, 4, 4, 2, 2, 0, 0 }, /* DQN conv2-like: its input gradient in 4 phases */
        { 2, 5, 17, 16, 7, 5, 5, 3, 3, 2, 2 },   /* stride 3, padding: phases with offsets */
        { 2, 3, 10, 11, 9, 2, 3, 3, 2, 1, 0 },   /* kernel shorter than the stride: a phase no tap reaches */
        { 1, 6, 15, 15, 20, 4, 4, 2, 2, 1, 1 },  /* stride 2, padding 1, batch 1 */
        { 2, 4, 14, 13, 10, 4, 6, 2, 3, 2, 3 },  /* 6 phases merged, padding a multiple of the stride */
        { 2, 2, 15, 15, 3, 4, 4, 2, 3, 1, 2 },   /* different strides across and down */
        /* pixel-vector blocks (stride 1 across, rows of 8 or 16 pixels or
         * more, few channels or few taps); their input gradients too */
        { 2, 3, 20, 19, 13, 3, 3, 1, 1, 1,
          1 }, /* rows of 19: the last vector overlaps; 13 channels: 8 + 5, 6 + 6 + 1 */
        { 1, 5, 17, 35, 32, 3, 3, 1, 1, 0, 0 },  /* batch 1, three vectors a row, 45 vectors in blocks of 3 or 2 */
        { 3, 4, 30, 24, 20, 3, 5, 2, 1, 1, 2 },  /* stride 2 down, 1 across */
        { 2, 2, 18, 18, 40, 3, 3, 1, 1, 1, 1 },  /* many channels but 18 taps */
        { 2, 32, 64, 64, 16, 3, 3, 1, 1, 1, 1 }, /* VGG small conv1_2-like: rows in chunks */
    };
    check_conv_by_sets(cases, sizeof cases / sizeof cases[0], EXEC_SIMD_AVX2, 1u << 1);
    exec_simd_set(EXEC_SIMD_AUTO);
}

/* ---- pools -------------------------------------------------------------- */
typedef struct pl {
    int64_t n, c, h, w, kh, kw, sh, sw, ph, pw;
    bool relu; /* x through a ReLU first: windows with ties at 0, as after VGG's convolutions */
} pl;

static void check_pool(const pl *q)
{
    int64_t OH = (q->h + 2 * q->ph - q->kh) / q->sh + 1, OW = (q->w + 2 * q->pw - q->kw) / q->sw + 1;
    int64_t nx = q->n * q->c * q->h * q->w, ny = q->n * q->c * OH * OW;
    float *x = rand_buf(nx, -1, 1), *dy = rand_buf(ny, -1, 1);
    for (int64_t i = 0; q->relu && i < nx; i++)
        x[i] = x[i] > 0.0f ? x[i] : 0.0f;
    double *ymax = calloc((size_t)ny, sizeof(double)), *yavg = calloc((size_t)ny, sizeof(double));
    double *dxmax = calloc((size_t)nx, sizeof(double)), *dxavg = calloc((size_t)nx, sizeof(double));
    for (int64_t p = 0; p < q->n * q->c; p++)
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow = 0; ow < OW; ow++) {
                double m = -INFINITY, s = 0;
                int64_t cnt = 0, arg = -1;
                for (int64_t kh = 0; kh < q->kh; kh++)
                    for (int64_t kw = 0; kw < q->kw; kw++) {
                        int64_t ih = oh * q->sh - q->ph + kh, iw = ow * q->sw - q->pw + kw;
                        if (ih < 0 || ih >= q->h || iw < 0 || iw >= q->w)
                            continue;
                        double v = x[(p * q->h + ih) * q->w + iw];
                        if (v > m)
                            m = v, arg = (p * q->h + ih) * q->w + iw;
                        s += v;
                        cnt++;
                    }
                int64_t o = (p * OH + oh) * OW + ow;
                ymax[o] = m;
                yavg[o] = s / (double)cnt;
                dxmax[arg] += dy[o];
                for (int64_t kh = 0; kh < q->kh; kh++)
                    for (int64_t kw = 0; kw < q->kw; kw++) {
                        int64_t ih = oh * q->sh - q->ph + kh, iw = ow * q->sw - q->pw + kw;
                        if (ih >= 0 && ih < q->h && iw >= 0 && iw < q->w)
                            dxavg[(p * q->h + ih) * q->w + iw] += dy[o] / (double)cnt;
                    }
            }
    char what[160], buf[200];
    snprintf(what, sizeof what, "[%lld,%lld,%lld,%lld] k%lldx%lld s%lldx%lld p%lldx%lld", (long long)q->n,
             (long long)q->c, (long long)q->h, (long long)q->w, (long long)q->kh, (long long)q->kw, (long long)q->sh,
             (long long)q->sw, (long long)q->ph, (long long)q->pw);
    int64_t at[10] = { q->kh, q->kw, q->sh, q->sw, q->ph, q->pw, q->n, q->c, q->h, q->w };
    uint32_t out[1];
    tin xin[1] = { { 4, { q->n, q->c, q->h, q->w }, x } };
    exec_graph *g = run_one("MaxPool", 1, xin, 6, at, out);
    float *ymax_f = malloc((size_t)ny * sizeof *ymax_f);
    memcpy(ymax_f, exec_dataf(g, out[0]), (size_t)ny * sizeof *ymax_f);
    snprintf(buf, sizeof buf, "MaxPool %s", what);
    refcheck_compare(buf, ymax_f, ymax, ny, 0);
    exec_graph_destroy(g);

    g = run_one("AvgPool", 1, xin, 6, at, out);
    snprintf(buf, sizeof buf, "AvgPool %s", what);
    refcheck_compare(buf, exec_dataf(g, out[0]), yavg, ny, 1e-6);
    exec_graph_destroy(g);

    tin gin[3] = { xin[0], { 4, { q->n, q->c, OH, OW }, ymax_f }, { 4, { q->n, q->c, OH, OW }, dy } };
    g = run_one("MaxPoolGrad", 3, gin, 6, at, out);
    snprintf(buf, sizeof buf, "MaxPoolGrad %s", what);
    refcheck_compare(buf, exec_dataf(g, out[0]), dxmax, nx, 1e-6);
    exec_graph_destroy(g);

    g = run_one("AvgPoolGrad", 1, &gin[2], 10, at, out);
    snprintf(buf, sizeof buf, "AvgPoolGrad %s", what);
    refcheck_compare(buf, exec_dataf(g, out[0]), dxavg, nx, 1e-6);
    exec_graph_destroy(g);
    free(x), free(dy), free(ymax), free(yavg), free(dxmax), free(dxavg), free(ymax_f);
}

static void test_pool(void **state)
{
    (void)state;
    static const pl cases[] = {
        /* n  c   h   w kh kw sh sw ph pw */
        { 1, 3, 13, 11, 3, 3, 2, 2, 0, 0 },        /* AlexNet-style overlapping */
        { 3, 5, 9, 7, 3, 3, 2, 2, 1, 1 },          /* padded */
        { 2, 4, 8, 9, 2, 2, 2, 2, 0, 0 },          /* VGG-style, odd width */
        { 2, 3, 7, 10, 3, 2, 1, 3, 1, 1 },         /* non-square */
        { 3, 7, 5, 6, 5, 6, 1, 1, 0, 0 },          /* global */
        { 16, 300, 2, 2, 2, 2, 1, 1, 0, 0 },       /* global, 2x2 planes over the threads */
        { 3, 40, 7, 7, 7, 7, 1, 1, 0, 0 },         /* global, 7x7: a vector sum */
        { 2, 70, 15, 17, 3, 3, 2, 2, 1, 1 },       /* enough planes for the parallel path */
        { 2, 3, 9, 37, 3, 3, 2, 2, 1, 1 },         /* wide rows, padded edges */
        { 1, 2, 6, 64, 2, 2, 2, 2, 0, 0 },         /* VGG-style rows of 32 outputs */
        { 2, 2, 7, 29, 3, 4, 2, 3, 2, 3 },         /* stride 3, padding 3 of a 4-wide window */
        { 1, 2, 5, 3, 3, 3, 1, 1, 1, 1 },          /* stride 1, padded */
        { 3, 5, 9, 8, 2, 2, 2, 2, 0, 0, true },    /* VGG-style, odd height: a last row no window covers; ties */
        { 2, 40, 16, 16, 2, 2, 2, 2, 0, 0, true }, /* VGG-style over the threads, ties at 0 */
        { 2, 4, 12, 40, 3, 3, 2, 2, 1, 1, true },  /* ResNet-style 3x3/2: vectors of inside windows, ties */
        { 2, 3, 8, 21, 2, 3, 3, 2, 0, 1 },         /* 2 rows x 3 columns, stride 3 down */
        { 1, 2, 5, 2, 3, 3, 2, 2, 1, 1 },          /* rows of 2: no window inside */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        check_pool(&cases[i]);
}

/* ---- LRN ---------------------------------------------------------------- */
static void check_lrn(int64_t n, int64_t c, int64_t inner_h, int64_t inner_w, int r, float bias, float alpha,
                      float beta)
{
    int64_t inner = inner_h * inner_w, nx = n * c * inner;
    float *x = rand_buf(nx, -2, 2), *dy = rand_buf(nx, -1, 1);
    double *y = malloc((size_t)nx * sizeof *y), *dx = calloc((size_t)nx, sizeof *dx);
    double *nrm = malloc((size_t)nx * sizeof *nrm);
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t s = 0; s < inner; s++) {
                double q = 0;
                for (int64_t cc = ch - r; cc <= ch + r; cc++)
                    if (cc >= 0 && cc < c) {
                        double v = x[(i * c + cc) * inner + s];
                        q += v * v;
                    }
                int64_t e = (i * c + ch) * inner + s;
                nrm[e] = bias + alpha * q;
                y[e] = x[e] * pow(nrm[e], -beta);
            }
    /* dx_j = sum_i dy_i dy_i/dx_j, with dy_i/dx_j = [i==j] N_i^-b - 2 a b x_i x_j N_i^(-b-1) for j in i's window */
    for (int64_t i = 0; i < n; i++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t s = 0; s < inner; s++) {
                int64_t e = (i * c + ch) * inner + s;
                for (int64_t cc = ch - r; cc <= ch + r; cc++) {
                    if (cc < 0 || cc >= c)
                        continue;
                    int64_t j = (i * c + cc) * inner + s;
                    double d = (j == e ? pow(nrm[e], -beta) : 0.0) -
                               2.0 * alpha * beta * x[e] * x[j] * pow(nrm[e], -beta - 1.0);
                    dx[j] += dy[e] * d;
                }
            }
    int64_t at[4] = { r, exec_attr_f(bias), exec_attr_f(alpha), exec_attr_f(beta) };
    char buf[160];
    uint32_t out[1];
    tin xin[1] = { { 4, { n, c, inner_h, inner_w }, x } };
    exec_graph *g = run_one("LRN", 1, xin, 4, at, out);
    float *yf = malloc((size_t)nx * sizeof *yf);
    memcpy(yf, exec_dataf(g, out[0]), (size_t)nx * sizeof *yf);
    snprintf(buf, sizeof buf, "LRN [%lld,%lld,%lld,%lld] r%d bias %g alpha %g beta %g", (long long)n, (long long)c,
             (long long)inner_h, (long long)inner_w, r, (double)bias, (double)alpha, (double)beta);
    refcheck_compare(buf, yf, y, nx, 1e-5);
    exec_graph_destroy(g);
    tin gin[3] = { { 4, { n, c, inner_h, inner_w }, dy }, xin[0], { 4, { n, c, inner_h, inner_w }, yf } };
    g = run_one("LRNGrad", 3, gin, 4, at, out);
    snprintf(buf, sizeof buf, "LRNGrad [%lld,%lld,%lld,%lld] r%d beta %g", (long long)n, (long long)c,
             (long long)inner_h, (long long)inner_w, r, (double)beta);
    refcheck_compare(buf, exec_dataf(g, out[0]), dx, nx, 1e-5);
    exec_graph_destroy(g);
    free(x), free(dy), free(y), free(dx), free(nrm), free(yf);
}

static void test_lrn(void **state)
{
    (void)state;
    check_lrn(2, 11, 5, 7, 2, 2.0f, 1e-1f, 0.75f);   /* AlexNet's exponent, exaggerated alpha */
    check_lrn(1, 5, 3, 3, 3, 1.0f, 0.3f, 0.6f);      /* window wider than half the channels */
    check_lrn(3, 96, 13, 13, 2, 1.0f, 1e-4f, 0.75f); /* AlexNet's constants, parallel path */
    check_lrn(2, 9, 4, 3, 1, 1.5f, 0.2f, 1.0f);
}

/* ---- FusedBatchNorm ----------------------------------------------------- */
static void check_bn(int64_t n, int64_t c, int64_t h, int64_t w, int training)
{
    int64_t inner = h * w, nx = n * c * inner, m = n * inner;
    const float eps = 1e-3f, mom = 0.9f;
    float *x = rand_buf(nx, -2, 3), *dy = rand_buf(nx, -1, 1);
    float *scale = rand_buf(c, 0.5f, 1.5f), *offset = rand_buf(c, -1, 1);
    float *rm = rand_buf(c, -0.5f, 0.5f), *rv = rand_buf(c, 0.5f, 1.5f);
    double *y = malloc((size_t)nx * sizeof *y), *dx = malloc((size_t)nx * sizeof *dx);
    double *mean = malloc((size_t)c * sizeof *mean), *inv = malloc((size_t)c * sizeof *inv);
    double *rm2 = malloc((size_t)c * sizeof *rm2), *rv2 = malloc((size_t)c * sizeof *rv2);
    double *dsc = malloc((size_t)c * sizeof *dsc), *dof = malloc((size_t)c * sizeof *dof);
    for (int64_t ch = 0; ch < c; ch++) {
        double s = 0, v = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = 0; e < inner; e++)
                s += x[(i * c + ch) * inner + e];
        double mu = s / (double)m;
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = 0; e < inner; e++) {
                double d = x[(i * c + ch) * inner + e] - mu;
                v += d * d;
            }
        double var = v / (double)m;
        if (training) {
            rm2[ch] = mom * rm[ch] + (1 - mom) * mu;
            rv2[ch] = mom * rv[ch] + (1 - mom) * v / (double)(m - 1);
        } else {
            rm2[ch] = rm[ch], rv2[ch] = rv[ch];
            mu = rm[ch], var = rv[ch];
        }
        mean[ch] = mu;
        inv[ch] = 1.0 / sqrt(var + eps);
        double sdy = 0, sdyxh = 0;
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = 0; e < inner; e++) {
                int64_t k = (i * c + ch) * inner + e;
                double xh = (x[k] - mu) * inv[ch];
                y[k] = xh * scale[ch] + offset[ch];
                sdy += dy[k];
                sdyxh += dy[k] * xh;
            }
        dof[ch] = sdy;
        dsc[ch] = sdyxh;
        for (int64_t i = 0; i < n; i++)
            for (int64_t e = 0; e < inner; e++) {
                int64_t k = (i * c + ch) * inner + e;
                double xh = (x[k] - mu) * inv[ch];
                dx[k] = training ? scale[ch] * inv[ch] * (dy[k] - sdy / (double)m - xh * sdyxh / (double)m)
                                 : scale[ch] * inv[ch] * dy[k];
            }
    }
    char buf[160], what[100];
    snprintf(what, sizeof what, "[%lld,%lld,%lld,%lld] %s", (long long)n, (long long)c, (long long)h, (long long)w,
             training ? "training" : "inference");
    uint32_t out[3];
    int ndim = h * w > 1 || h > 1 ? 4 : 2;
    tin in[5] = {
        { ndim, { n, c, h, w }, x }, { 1, { c }, scale }, { 1, { c }, offset }, { 1, { c }, rm }, { 1, { c }, rv }
    };
    exec_graph *g =
        run_one("FusedBatchNorm", 5, in, 3, (int64_t[]){ exec_attr_f(eps), exec_attr_f(mom), training }, out);
    snprintf(buf, sizeof buf, "FusedBatchNorm y %s", what);
    refcheck_compare(buf, exec_dataf(g, out[0]), y, nx, 1e-5);
    snprintf(buf, sizeof buf, "FusedBatchNorm saved_mean %s", what);
    refcheck_compare(buf, exec_dataf(g, out[1]), mean, c, 1e-5);
    snprintf(buf, sizeof buf, "FusedBatchNorm saved_inv_std %s", what);
    refcheck_compare(buf, exec_dataf(g, out[2]), inv, c, 1e-5);
    /* the running statistics, updated in place (inputs 3 and 4 are ids 4 and 5) */
    snprintf(buf, sizeof buf, "FusedBatchNorm running_mean %s", what);
    refcheck_compare(buf, exec_dataf(g, 4), rm2, c, 1e-5);
    snprintf(buf, sizeof buf, "FusedBatchNorm running_var %s", what);
    refcheck_compare(buf, exec_dataf(g, 5), rv2, c, 1e-5);
    float *sm = malloc((size_t)c * sizeof *sm), *si = malloc((size_t)c * sizeof *si);
    memcpy(sm, exec_dataf(g, out[1]), (size_t)c * sizeof *sm);
    memcpy(si, exec_dataf(g, out[2]), (size_t)c * sizeof *si);
    exec_graph_destroy(g);

    tin gin[5] = { { ndim, { n, c, h, w }, dy }, in[0], in[1], { 1, { c }, sm }, { 1, { c }, si } };
    g = run_one("FusedBatchNormGrad", 5, gin, 2, (int64_t[]){ exec_attr_f(eps), training }, out);
    snprintf(buf, sizeof buf, "FusedBatchNormGrad dx %s", what);
    refcheck_compare(buf, exec_dataf(g, out[0]), dx, nx, 1e-5);
    snprintf(buf, sizeof buf, "FusedBatchNormGrad dscale %s", what);
    refcheck_compare(buf, exec_dataf(g, out[1]), dsc, c, 1e-5);
    snprintf(buf, sizeof buf, "FusedBatchNormGrad doffset %s", what);
    refcheck_compare(buf, exec_dataf(g, out[2]), dof, c, 1e-5);
    exec_graph_destroy(g);
    free(x), free(dy), free(scale), free(offset), free(rm), free(rv), free(y), free(dx), free(mean), free(inv);
    free(rm2), free(rv2), free(dsc), free(dof), free(sm), free(si);
}

static void test_batch_norm(void **state)
{
    (void)state;
    check_bn(3, 5, 7, 9, 1);
    check_bn(3, 5, 7, 9, 0);
    check_bn(1, 3, 5, 5, 1);    /* batch 1: statistics over space only */
    check_bn(7, 13, 1, 1, 1);   /* [N,C] */
    check_bn(4, 64, 15, 15, 1); /* the parallel path */
    check_bn(4, 64, 15, 15, 0);
    check_bn(16, 200, 3, 3, 1); /* short rows: blocks of 8 channels, over the threads */
    check_bn(16, 200, 3, 3, 0);
    check_bn(5, 77, 2, 2, 1); /* blocks of 16 channels, the last one of 13 */
    check_bn(5, 77, 2, 2, 0);
    check_bn(2, 9, 8, 8, 1); /* rows of 64: one channel at a time */
    /* inference: rows of 16 and more, split over the threads mid-image */
    check_bn(3, 7, 4, 5, 0);
    check_bn(1, 5, 4, 4, 0); /* batch 1 */
    /* inference: short rows by one image's per-value constants, the
     * threads' split falling mid-image and mid-channel */
    check_bn(7, 13, 1, 1, 0);
    check_bn(3, 129, 3, 1, 0);
    check_bn(9, 64, 4, 4, 0);
    check_bn(16, 512, 2, 2, 0);
    check_bn(2, 1100, 3, 3, 0); /* one image past the copies' limit: rows */
}

/* ---- builders and shape errors ----------------------------------------- */
static void test_builders(void **state)
{
    (void)state;
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ 2, 3, 17, 15 });
    uint32_t w = exec_weight(g, "w", 4, (int64_t[]){ 8, 3, 3, 3 }, EXEC_INIT_HE);
    uint32_t y = ex_conv2d(g, x, w, 2, 2, 1, 1);
    exec_tensor *t = exec_tensor_get(g, y);
    assert_int_equal(t->shape[1], 8);
    assert_int_equal(t->shape[2], 9);
    assert_int_equal(t->shape[3], 8);
    uint32_t p = ex_max_pool(g, y, 3, 3, 2, 2, 1, 1);
    assert_int_equal(exec_tensor_get(g, p)->shape[2], 5);
    assert_int_equal(exec_tensor_get(g, p)->shape[3], 4);
    uint32_t a = ex_avg_pool(g, p, 2, 2, 2, 2, 0, 0);
    assert_int_equal(exec_tensor_get(g, a)->shape[2], 2);
    uint32_t l = ex_lrn(g, y, 2, 2.0f, 1e-4f, 0.75f);
    assert_int_equal(exec_tensor_get(g, l)->numel, t->numel);
    uint32_t gp = ex_global_avg_pool(g, l);
    t = exec_tensor_get(g, gp);
    assert_int_equal(t->ndim, 4);
    assert_int_equal(t->shape[2] * t->shape[3], 1);
    uint32_t sc = exec_weight(g, "scale", 1, (int64_t[]){ 8 }, EXEC_INIT_ONE);
    uint32_t of = exec_weight(g, "offset", 1, (int64_t[]){ 8 }, EXEC_INIT_ZERO);
    uint32_t rm = exec_tensor_new(g, EXEC_ROLE_weight, EXEC_F32, 1, (int64_t[]){ 8 }, "rmean");
    uint32_t rv = exec_const(g, "rvar", 1, (int64_t[]){ 8 }, 1.0f);
    uint32_t bn = ex_fused_batch_norm(g, y, sc, of, rm, rv, 1e-3f, 0.99f, 1);
    assert_true(bn != 0);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    /* a padding as large as the kernel is refused, with a message */
    assert_int_equal(ex_max_pool(g, y, 2, 2, 2, 2, 2, 2), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    printf("shape error: %s\n", exec_errmsg());
    exec_graph_destroy(g);

    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ 2, 3, 17, 15 });
    w = exec_weight(g, "w", 4, (int64_t[]){ 8, 4, 3, 3 }, EXEC_INIT_HE);
    assert_int_equal(ex_conv2d(g, x, w, 1, 1, 1, 1), 0); /* channel mismatch */
    printf("shape error: %s\n", exec_errmsg());
    exec_graph_destroy(g);
}

/* a small convnet trains end to end: the family's gradients compose */
static void test_tiny_convnet_learns(void **state)
{
    (void)state;
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 3), EXEC_OK);
    const int64_t B = 8;
    uint32_t x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ B, 1, 9, 9 });
    uint32_t lab = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 4, (int64_t[]){ 6, 1, 3, 3 }, EXEC_INIT_HE);
    uint32_t sc = exec_weight(g, "scale", 1, (int64_t[]){ 6 }, EXEC_INIT_ONE);
    uint32_t of = exec_weight(g, "offset", 1, (int64_t[]){ 6 }, EXEC_INIT_ZERO);
    uint32_t rm = exec_const(g, "rmean", 1, (int64_t[]){ 6 }, 0.0f);
    uint32_t rv = exec_const(g, "rvar", 1, (int64_t[]){ 6 }, 1.0f);
    uint32_t h = ex_conv2d(g, x, w1, 1, 1, 1, 1);
    h = ex_fused_batch_norm(g, h, sc, of, rm, rv, 1e-3f, 0.9f, 1);
    h = ex_relu(g, h);
    h = ex_lrn(g, h, 2, 1.0f, 1e-2f, 0.75f);
    h = ex_max_pool(g, h, 3, 3, 2, 2, 1, 1); /* 5x5 */
    uint32_t w2 = exec_weight(g, "w2", 4, (int64_t[]){ 4, 6, 1, 1 }, EXEC_INIT_GLOROT);
    h = ex_conv2d(g, h, w2, 1, 1, 0, 0);
    h = ex_global_avg_pool(g, h); /* [B,4,1,1] */
    uint32_t logits = ex_reshape(g, h, 2, (int64_t[]){ B, 4 });
    uint32_t loss = ex_sparse_softmax_xent(g, logits, lab);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    assert_int_equal(exec_optimizer_sgd(g, 0.5f), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    /* class k: a short bright stroke (horizontal, vertical, diagonal,
     * anti-diagonal) somewhere in the image, plus noise: position-free, so
     * conv + global pooling can tell them apart */
    float *xd = exec_dataf(g, x);
    int32_t *yd = exec_datai(g, lab);
    static const int dr[4] = { 0, 1, 1, 1 }, dc[4] = { 1, 0, 1, -1 };
    for (int64_t i = 0; i < B; i++) {
        int k = (int)(i % 4);
        yd[i] = k;
        for (int64_t e = 0; e < 81; e++)
            xd[i * 81 + e] = frand(-0.1f, 0.1f);
        int r0 = 2 + (int)(i % 3) * 2, c0 = 2 + (int)(i / 3 % 3) * 2;
        for (int t = -1; t <= 1; t++)
            xd[i * 81 + (r0 + t * dr[k]) * 9 + c0 + t * dc[k]] += 1.0f;
    }
    exec_run_opts o = { .max_phase = EXEC_PHASE_update };
    float first = 0, last = 0;
    for (int step = 0; step < 60; step++) {
        assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
        last = exec_dataf(g, loss)[0];
        if (step == 0)
            first = last;
    }
    printf("tiny convnet: loss %.4f -> %.4f\n", (double)first, (double)last);
    assert_true(last < 0.5f * first);
    exec_graph_destroy(g);
}

int main(void)
{
    exec_threads_set(2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_conv_winograd_simd),
        cmocka_unit_test(test_conv_winograd_cache),
        cmocka_unit_test(test_conv_auto_void),
        cmocka_unit_test(test_conv_direct_simd),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_lrn),
        cmocka_unit_test(test_batch_norm),
        cmocka_unit_test(test_builders),
        cmocka_unit_test(test_tiny_convnet_learns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
