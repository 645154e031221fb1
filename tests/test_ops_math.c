/* test_ops_math.c -- the math family's forward kernels against naive
 * references on odd shapes (every Transpose perm of 3-, 4- and 5-D tensors,
 * Concat/Split/Slice/Pad along each axis, Gather/UnsortedSegmentSum with
 * repeated indices, Softmax rows, ArgMax ties, Cast), sizes large enough to
 * take the threaded paths, and bad input: an out-of-range index is an error
 * status, not a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/build.h"
#include "exec/exec.h"
#include "exec/ops/mathkern.h"

/* ---- helpers ------------------------------------------------------------ */
static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}
static float urand(uint64_t *s, float lo, float hi) { return lo + (hi - lo) * (float)(lcg(s) % 1000003) / 1000003.0f; }

static exec_graph *newg(void)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 3), EXEC_OK);
    return g;
}

static void fill_f(exec_graph *g, uint32_t id, uint64_t *seed, float lo, float hi)
{
    exec_tensor *t = exec_tensor_get(g, id);
    float *p = t->data;
    for (int64_t i = 0; i < t->numel; i++)
        p[i] = urand(seed, lo, hi);
}

static void fill_i(exec_graph *g, uint32_t id, uint64_t *seed, int32_t lo, int32_t hi)
{
    exec_tensor *t = exec_tensor_get(g, id);
    int32_t *p = t->data;
    for (int64_t i = 0; i < t->numel; i++)
        p[i] = lo + (int32_t)(lcg(seed) % (uint64_t)(hi - lo));
}

static void plan(exec_graph *g)
{
    if (exec_graph_status(g))
        fprintf(stderr, "build: %s\n", exec_errmsg());
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
}

static exec_status run_fwd(exec_graph *g)
{
    exec_run_opts o = { .inter = 1, .max_phase = EXEC_PHASE_forward };
    return exec_graph_run(g, &o);
}

static void run_ok(exec_graph *g)
{
    exec_status s = run_fwd(g);
    if (s)
        fprintf(stderr, "run: %s\n", exec_errmsg());
    assert_int_equal(s, EXEC_OK);
}

/* element offset of multi-index idx in a row-major tensor of shape */
static int64_t offset_of(int nd, const int64_t *shape, const int64_t *idx)
{
    int64_t o = 0;
    for (int i = 0; i < nd; i++)
        o = o * shape[i] + idx[i];
    return o;
}

static void unravel(int64_t lin, int nd, const int64_t *shape, int64_t *idx)
{
    for (int i = nd - 1; i >= 0; i--) {
        idx[i] = lin % shape[i];
        lin /= shape[i];
    }
}

static uint32_t exec_op1_public(exec_graph *g, exec_op op, uint32_t x)
{
    return exec_op_add(g, op, 1, &x, 0, NULL, NULL);
}

static void assert_shape(exec_graph *g, uint32_t id, int nd, const int64_t *shape)
{
    exec_tensor *t = exec_tensor_get(g, id);
    assert_non_null(t);
    assert_int_equal(t->ndim, nd);
    for (int i = 0; i < nd; i++)
        assert_int_equal(t->shape[i], shape[i]);
}

static void assert_close(const float *got, const float *want, int64_t n, float tol)
{
    for (int64_t i = 0; i < n; i++) {
        float d = fabsf(got[i] - want[i]);
        if (!(d <= tol * fmaxf(1.0f, fabsf(want[i])))) {
            fprintf(stderr, "element %lld: got %.9g want %.9g\n", (long long)i, (double)got[i], (double)want[i]);
            fail();
        }
    }
}

/* ---- Transpose ------------------------------------------------------------ */
/* every permutation of nd dims, by Heap's algorithm */
static int all_perms(int nd, int64_t perms[][EXEC_MAX_DIMS])
{
    int64_t a[EXEC_MAX_DIMS];
    int c[EXEC_MAX_DIMS] = { 0 }, count = 0;
    for (int i = 0; i < nd; i++)
        a[i] = i;
    memcpy(perms[count++], a, sizeof a);
    for (int i = 1; i < nd;) {
        if (c[i] < i) {
            int j = i % 2 ? c[i] : 0;
            int64_t t = a[j];
            a[j] = a[i];
            a[i] = t;
            memcpy(perms[count++], a, sizeof a);
            c[i]++;
            i = 1;
        } else {
            c[i++] = 0;
        }
    }
    return count;
}

static void check_transpose(int nd, const int64_t *shape, const int64_t *perm, exec_dtype dt)
{
    exec_graph *g = newg();
    uint32_t x = exec_input(g, "x", dt, nd, shape);
    uint32_t y = ex_transpose(g, x, perm);
    plan(g);
    uint64_t seed = 99;
    if (dt == EXEC_F32)
        fill_f(g, x, &seed, -1, 1);
    else
        fill_i(g, x, &seed, -1000000, 1000000);
    run_ok(g);
    int64_t ys[EXEC_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        ys[i] = shape[perm[i]];
    assert_shape(g, y, nd, ys);
    const uint32_t *X = exec_data(g, x), *Y = exec_data(g, y);
    int64_t numel = exec_tensor_get(g, x)->numel;
    for (int64_t o = 0; o < numel; o++) {
        int64_t oi[EXEC_MAX_DIMS], ii[EXEC_MAX_DIMS];
        unravel(o, nd, ys, oi);
        for (int i = 0; i < nd; i++)
            ii[perm[i]] = oi[i];
        if (Y[o] != X[offset_of(nd, shape, ii)]) {
            fprintf(stderr, "Transpose %dD perm", nd);
            for (int i = 0; i < nd; i++)
                fprintf(stderr, " %lld", (long long)perm[i]);
            fprintf(stderr, ": output %lld wrong\n", (long long)o);
            fail();
        }
    }
    exec_graph_destroy(g);
}

static void test_transpose(void **state)
{
    (void)state;
    static int64_t perms[120][EXEC_MAX_DIMS];
    /* 2-D, partial tiles, big enough for the threaded path */
    check_transpose(2, (int64_t[]){ 67, 45 }, (int64_t[]){ 1, 0 }, EXEC_F32);
    check_transpose(2, (int64_t[]){ 301, 257 }, (int64_t[]){ 1, 0 }, EXEC_F32);
    check_transpose(2, (int64_t[]){ 1, 45 }, (int64_t[]){ 1, 0 }, EXEC_F32);
    /* every perm of 3-D and 4-D (with and without size-1 dims), int32 too */
    int n3 = all_perms(3, perms);
    assert_int_equal(n3, 6);
    for (int p = 0; p < n3; p++) {
        check_transpose(3, (int64_t[]){ 3, 5, 7 }, perms[p], EXEC_F32);
        check_transpose(3, (int64_t[]){ 37, 41, 45 }, perms[p], EXEC_F32);
    }
    int n4 = all_perms(4, perms);
    assert_int_equal(n4, 24);
    for (int p = 0; p < n4; p++) {
        check_transpose(4, (int64_t[]){ 2, 3, 5, 7 }, perms[p], EXEC_F32);
        check_transpose(4, (int64_t[]){ 3, 1, 5, 2 }, perms[p], EXEC_I32);
        check_transpose(4, (int64_t[]){ 5, 17, 19, 23 }, perms[p], EXEC_F32);
    }
    int n5 = all_perms(5, perms);
    assert_int_equal(n5, 120);
    for (int p = 0; p < n5; p++)
        check_transpose(5, (int64_t[]){ 2, 3, 1, 5, 3 }, perms[p], EXEC_F32);
    /* threaded, with runs of rows: every fourth 5-D perm (the Transformer's
     * heads among them) on 68,112 elements */
    for (int p = 0; p < n5; p += 4)
        check_transpose(5, (int64_t[]){ 6, 11, 3, 8, 43 }, perms[p], EXEC_F32);
    check_transpose(5, (int64_t[]){ 6, 11, 3, 8, 43 }, (int64_t[]){ 2, 0, 3, 1, 4 }, EXEC_F32);
    check_transpose(5, (int64_t[]){ 1, 6, 8, 11, 43 }, (int64_t[]){ 1, 3, 0, 2, 4 }, EXEC_F32);
}

/* ---- Concat / Split / Slice / Pad along each axis ------------------------- */
static void test_concat_split(void **state)
{
    (void)state;
    const int64_t base[3] = { 3, 4, 5 };
    for (int ax = 0; ax < 3; ax++) {
        exec_graph *g = newg();
        int64_t s0[3], s1[3], s2[3];
        memcpy(s0, base, sizeof s0);
        memcpy(s1, base, sizeof s1);
        memcpy(s2, base, sizeof s2);
        s0[ax] = 2;
        s1[ax] = 1;
        s2[ax] = 3;
        uint32_t xs[3] = { exec_input(g, "a", EXEC_F32, 3, s0), exec_input(g, "b", EXEC_F32, 3, s1),
                           exec_input(g, "c", EXEC_F32, 3, s2) };
        uint32_t y = ex_concat(g, 3, xs, ax - 3); /* negative axis */
        uint32_t parts[3];
        assert_int_equal(ex_split(g, y, ax, 3, parts), EXEC_OK); /* 6 along ax: 3 parts of 2 */
        plan(g);
        uint64_t seed = 5 + (uint64_t)ax;
        for (int i = 0; i < 3; i++)
            fill_f(g, xs[i], &seed, -1, 1);
        run_ok(g);
        int64_t ys[3];
        memcpy(ys, base, sizeof ys);
        ys[ax] = 6;
        assert_shape(g, y, 3, ys);
        const float *Y = exec_dataf(g, y);
        const int64_t *ss[3] = { s0, s1, s2 };
        /* reference concat */
        for (int64_t o = 0; o < 3 * 4 * 5 / base[ax] * 6; o++) {
            int64_t idx[3];
            unravel(o, 3, ys, idx);
            int k = 0;
            int64_t a = idx[ax];
            while (a >= ss[k][ax]) {
                a -= ss[k][ax];
                k++;
            }
            idx[ax] = a;
            assert_true(Y[o] == exec_dataf(g, xs[k])[offset_of(3, ss[k], idx)]);
        }
        /* reference split: part p holds rows [2p, 2p+2) along ax */
        int64_t ps[3];
        memcpy(ps, base, sizeof ps);
        ps[ax] = 2;
        for (int p = 0; p < 3; p++) {
            assert_shape(g, parts[p], 3, ps);
            const float *P = exec_dataf(g, parts[p]);
            for (int64_t o = 0; o < exec_tensor_get(g, parts[p])->numel; o++) {
                int64_t idx[3];
                unravel(o, 3, ps, idx);
                idx[ax] += 2 * p;
                assert_true(P[o] == Y[offset_of(3, ys, idx)]);
            }
        }
        exec_graph_destroy(g);
    }
}

/* Large copies, threaded: ConcatV2 and Split along the first axis (one
 * slice of each part per thread; odd sizes), and Reshape */
static void test_concat_split_large(void **state)
{
    (void)state;
    exec_graph *g = newg();
    const int64_t C = 1001;
    int64_t s[3][2] = { { 37, C }, { 1, C }, { 40, C } };
    uint32_t xs[3];
    for (int i = 0; i < 3; i++)
        xs[i] = exec_input(g, "x", EXEC_F32, 2, s[i]);
    uint32_t y = ex_concat(g, 3, xs, 0); /* [78, C] */
    uint32_t parts[3];
    assert_int_equal(ex_split(g, y, 0, 3, parts), EXEC_OK); /* 26 rows each */
    uint32_t r = ex_reshape(g, y, 3, (int64_t[]){ 2, 39, C });
    plan(g);
    uint64_t seed = 17;
    for (int i = 0; i < 3; i++)
        fill_f(g, xs[i], &seed, -1, 1);
    run_ok(g);
    const float *Y = exec_dataf(g, y);
    int64_t row = 0;
    for (int i = 0; i < 3; i++) {
        assert_memory_equal(Y + row * C, exec_dataf(g, xs[i]), (size_t)(s[i][0] * C) * sizeof(float));
        row += s[i][0];
    }
    for (int p = 0; p < 3; p++)
        assert_memory_equal(exec_dataf(g, parts[p]), Y + 26 * C * p, (size_t)(26 * C) * sizeof(float));
    assert_memory_equal(exec_dataf(g, r), Y, (size_t)(78 * C) * sizeof(float));
    exec_graph_destroy(g);
}

static void test_split_errors(void **state)
{
    (void)state;
    exec_graph *g = newg();
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 5 });
    uint32_t out[3];
    assert_int_not_equal(ex_split(g, x, 1, 3, out), EXEC_OK); /* 5 does not split in 3 */
    assert_int_equal(out[0], 0);
    exec_graph_destroy(g);
    g = newg();
    x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 5 });
    assert_int_not_equal(ex_split(g, x, 0, 0, out), EXEC_OK); /* zero outputs */
    exec_graph_destroy(g);
    g = newg();
    x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 5 });
    exec_op_add(g, EXEC_OP_Split, 1, &x, 1, (int64_t[]){ 0 }, out); /* no count attribute */
    assert_int_equal(exec_graph_status(g), EXEC_ERR_ARG);
    exec_graph_destroy(g);
}

static void test_slice_pad(void **state)
{
    (void)state;
    const int64_t xs[4] = { 3, 4, 5, 2 };
    for (int ax = 0; ax < 4; ax++) {
        exec_graph *g = newg();
        uint32_t x = exec_input(g, "x", EXEC_F32, 4, xs);
        int64_t begin[4] = { 0, 0, 0, 0 }, size[4] = { -1, -1, -1, -1 }, before[4] = { 0 }, after[4] = { 0 };
        begin[ax] = 1;
        size[ax] = xs[ax] - 1 > 1 ? xs[ax] - 2 : 1;
        before[ax] = 2;
        after[ax] = 1;
        before[(ax + 1) % 4] = 1; /* and a second padded axis */
        uint32_t s = ex_slice(g, x, begin, size);
        uint32_t p = ex_pad(g, x, before, after);
        plan(g);
        uint64_t seed = 17;
        fill_f(g, x, &seed, -1, 1);
        run_ok(g);
        const float *X = exec_dataf(g, x), *S = exec_dataf(g, s), *P = exec_dataf(g, p);
        int64_t ss[4], pshape[4];
        for (int i = 0; i < 4; i++) {
            ss[i] = size[i] == -1 ? xs[i] - begin[i] : size[i];
            pshape[i] = xs[i] + before[i] + after[i];
        }
        assert_shape(g, s, 4, ss);
        assert_shape(g, p, 4, pshape);
        for (int64_t o = 0; o < exec_tensor_get(g, s)->numel; o++) {
            int64_t idx[4];
            unravel(o, 4, ss, idx);
            for (int i = 0; i < 4; i++)
                idx[i] += begin[i];
            assert_true(S[o] == X[offset_of(4, xs, idx)]);
        }
        for (int64_t o = 0; o < exec_tensor_get(g, p)->numel; o++) {
            int64_t idx[4];
            unravel(o, 4, pshape, idx);
            int inside = 1;
            for (int i = 0; i < 4; i++) {
                idx[i] -= before[i];
                inside &= idx[i] >= 0 && idx[i] < xs[i];
            }
            assert_true(P[o] == (inside ? X[offset_of(4, xs, idx)] : 0.0f));
        }
        exec_graph_destroy(g);
    }
    /* out-of-range slices and negative pads are build errors */
    exec_graph *g = newg();
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 5 });
    assert_int_equal(ex_slice(g, x, (int64_t[]){ 2, 0 }, (int64_t[]){ 3, 5 }), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    exec_graph_destroy(g);
    g = newg();
    x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 5 });
    assert_int_equal(ex_pad(g, x, (int64_t[]){ -1, 0 }, (int64_t[]){ 0, 0 }), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    exec_graph_destroy(g);
}

/* ---- Gather / UnsortedSegmentSum with repeated indices -------------------- */
/* small, and big: 600 thousand elements, past the measured parallel
 * threshold (about 100 thousand here, 300 thousand with passive waiting) */
static void test_gather_segment_sum(void **state)
{
    (void)state;
    for (int big = 0; big < 2; big++) {
        int64_t V = big ? 1000 : 7, D = big ? 300 : 3, N = big ? 2000 : 11;
        exec_graph *g = newg();
        uint32_t params = exec_input(g, "params", EXEC_F32, 2, (int64_t[]){ V, D });
        uint32_t ix = exec_input(g, "ix", EXEC_I32, 2, (int64_t[]){ 1, N });
        uint32_t y = ex_gather(g, params, ix);
        uint32_t data = exec_input(g, "data", EXEC_F32, 3, (int64_t[]){ 1, N, D });
        uint32_t seg = ex_unsorted_segment_sum(g, data, ix, V);
        plan(g);
        assert_shape(g, y, 3, (int64_t[]){ 1, N, D });
        assert_shape(g, seg, 2, (int64_t[]){ V, D });
        uint64_t seed = 23;
        fill_f(g, params, &seed, -1, 1);
        fill_f(g, data, &seed, -1, 1);
        int32_t *I = exec_datai(g, ix);
        for (int64_t i = 0; i < N; i++)
            I[i] = (int32_t)(lcg(&seed) % (uint64_t)(big ? V : 4)); /* small: many repeats */
        I[0] = I[N - 1] = I[N / 2];                                 /* certainly repeated */
        run_ok(g);
        const float *P = exec_dataf(g, params), *Y = exec_dataf(g, y), *Dd = exec_dataf(g, data);
        for (int64_t i = 0; i < N; i++)
            for (int64_t d = 0; d < D; d++)
                assert_true(Y[i * D + d] == P[(int64_t)I[i] * D + d]);
        float *want = calloc((size_t)(V * D), sizeof *want);
        for (int64_t i = 0; i < N; i++)
            for (int64_t d = 0; d < D; d++)
                want[(int64_t)I[i] * D + d] += Dd[i * D + d];
        assert_close(exec_dataf(g, seg), want, V * D, 1e-6f);
        /* a second run gives the same sums (the output is reset, not accumulated) */
        run_ok(g);
        assert_close(exec_dataf(g, seg), want, V * D, 1e-6f);
        free(want);
        exec_graph_destroy(g);
    }
}

static void test_bad_indices(void **state)
{
    (void)state;
    const int32_t bad[] = { 7, -1, 1 << 30 };
    for (int b = 0; b < 3; b++) {
        exec_graph *g = newg();
        uint32_t params = exec_input(g, "params", EXEC_F32, 2, (int64_t[]){ 7, 3 });
        uint32_t ix = exec_input(g, "ix", EXEC_I32, 1, (int64_t[]){ 5 });
        ex_gather(g, params, ix);
        plan(g);
        int32_t *I = exec_datai(g, ix);
        for (int i = 0; i < 5; i++)
            I[i] = i;
        I[3] = bad[b];
        assert_int_equal(run_fwd(g), EXEC_ERR_ARG);
        assert_non_null(strstr(exec_errmsg(), "Gather"));
        /* the graph stays usable: fix the index and run again */
        I[3] = 6;
        run_ok(g);
        exec_graph_destroy(g);
    }
    exec_graph *g = newg();
    uint32_t data = exec_input(g, "data", EXEC_F32, 2, (int64_t[]){ 4, 3 });
    uint32_t ix = exec_input(g, "ix", EXEC_I32, 1, (int64_t[]){ 4 });
    ex_unsorted_segment_sum(g, data, ix, 5);
    plan(g);
    int32_t *I = exec_datai(g, ix);
    I[0] = 0, I[1] = 5, I[2] = 1, I[3] = 2;
    assert_int_equal(run_fwd(g), EXEC_ERR_ARG);
    assert_non_null(strstr(exec_errmsg(), "UnsortedSegmentSum"));
    exec_graph_destroy(g);
    /* float indices are a build error */
    g = newg();
    uint32_t params = exec_input(g, "params", EXEC_F32, 2, (int64_t[]){ 7, 3 });
    uint32_t fx = exec_input(g, "fx", EXEC_F32, 1, (int64_t[]){ 5 });
    assert_int_equal(ex_gather(g, params, fx), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    exec_graph_destroy(g);
}

/* ---- Softmax / LogSoftmax ------------------------------------------------- */
static void test_softmax(void **state)
{
    (void)state;
    const int64_t shape[3] = { 3, 5, 37 };
    exec_graph *g = newg();
    uint32_t x = exec_input(g, "x", EXEC_F32, 3, shape);
    uint32_t y = ex_softmax(g, x), ly = ex_log_softmax(g, x);
    uint32_t big = exec_input(g, "big", EXEC_F32, 2, (int64_t[]){ 300, 301 }); /* threaded path */
    uint32_t by = ex_softmax(g, big);
    plan(g);
    uint64_t seed = 31;
    fill_f(g, x, &seed, -5, 5);
    fill_f(g, big, &seed, -5, 5);
    float *X = exec_dataf(g, x);
    for (int j = 0; j < 37; j++) /* a row of huge logits: no overflow */
        X[j] = 1000.0f + (float)j;
    X[37] = -1000.0f; /* one tiny logit */
    run_ok(g);
    const float *Y = exec_dataf(g, y), *LY = exec_dataf(g, ly);
    for (int64_t r = 0; r < 15; r++) {
        const float *xr = X + r * 37;
        double m = xr[0], s = 0, sum = 0, lsum = 0;
        for (int j = 1; j < 37; j++)
            m = fmax(m, xr[j]);
        for (int j = 0; j < 37; j++)
            s += exp(xr[j] - m);
        for (int j = 0; j < 37; j++) {
            double want = exp(xr[j] - m) / s, lwant = xr[j] - m - log(s);
            assert_true(fabs(Y[r * 37 + j] - want) <= 1e-6 + 1e-5 * want);
            assert_true(fabs(LY[r * 37 + j] - lwant) <= 1e-4 * fmax(1.0, fabs(lwant)));
            assert_true(Y[r * 37 + j] >= 0.0f);
            sum += Y[r * 37 + j];
            lsum += exp(LY[r * 37 + j]);
        }
        assert_true(fabs(sum - 1.0) < 1e-5);
        assert_true(fabs(lsum - 1.0) < 1e-5);
    }
    const float *BY = exec_dataf(g, by);
    for (int64_t r = 0; r < 300; r++) {
        double sum = 0;
        for (int j = 0; j < 301; j++)
            sum += BY[r * 301 + j];
        assert_true(fabs(sum - 1.0) < 1e-5);
    }
    exec_graph_destroy(g);
}

/* ---- ArgMax (ties: the first index), Max, Mean ---------------------------- */
static void test_argmax_max_mean(void **state)
{
    (void)state;
    const int64_t shape[3] = { 3, 4, 5 };
    for (int ax = 0; ax < 3; ax++) {
        exec_graph *g = newg();
        uint32_t x = exec_input(g, "x", EXEC_F32, 3, shape);
        uint32_t am = ex_argmax(g, x, ax);
        uint32_t mx = ex_max(g, x, 1, (int64_t[]){ ax }, 0);
        uint32_t mn = ex_mean(g, x, 1, (int64_t[]){ ax }, 1);
        plan(g);
        float *X = exec_dataf(g, x);
        uint64_t seed = 41;
        for (int64_t i = 0; i < 60; i++)
            X[i] = (float)(lcg(&seed) % 3); /* values 0..2: ties everywhere */
        run_ok(g);
        const int32_t *A = exec_datai(g, am);
        const float *M = exec_dataf(g, mx), *MN = exec_dataf(g, mn);
        int64_t os[2];
        for (int i = 0, k = 0; i < 3; i++)
            if (i != ax)
                os[k++] = shape[i];
        assert_shape(g, am, 2, os);
        assert_int_equal(exec_tensor_get(g, am)->dtype, EXEC_I32);
        for (int64_t o = 0; o < 60 / shape[ax]; o++) {
            int64_t oi[2], idx[3];
            unravel(o, 2, os, oi);
            float best = -INFINITY, sum = 0;
            int32_t first = -1;
            for (int64_t j = 0; j < shape[ax]; j++) {
                for (int i = 0, k = 0; i < 3; i++)
                    idx[i] = i == ax ? j : oi[k++];
                float v = X[offset_of(3, shape, idx)];
                sum += v;
                if (v > best) {
                    best = v;
                    first = (int32_t)j;
                }
            }
            assert_int_equal(A[o], first);
            assert_true(M[o] == best);
            assert_true(fabsf(MN[o] - sum / (float)shape[ax]) < 1e-6f);
        }
        exec_graph_destroy(g);
    }
    /* an explicit tie: the first maximum wins */
    exec_graph *g = newg();
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 2, 5 });
    uint32_t am = ex_argmax(g, x, -1);
    uint32_t all = ex_max(g, x, 0, NULL, 0);
    uint32_t avg = ex_mean(g, x, 0, NULL, 0);
    plan(g);
    memcpy(exec_dataf(g, x), (float[]){ 1, 7, 3, 7, 7, -2, -1, -2, -1, -5 }, 10 * sizeof(float));
    run_ok(g);
    assert_int_equal(exec_datai(g, am)[0], 1);
    assert_int_equal(exec_datai(g, am)[1], 1);
    assert_true(exec_dataf(g, all)[0] == 7.0f);
    assert_true(fabsf(exec_dataf(g, avg)[0] - 1.4f) < 1e-6f);
    exec_graph_destroy(g);

    /* long rows (the vectorized last axis): ties, the maximum last, NaN
     * first (index 0, as a scan gives) and NaN inside (skipped) */
    enum { R = 5, C = 1001 };
    g = newg();
    x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ R, C });
    am = ex_argmax(g, x, -1);
    plan(g);
    float *X = exec_dataf(g, x);
    uint64_t seed = 7;
    for (int64_t i = 0; i < R * C; i++)
        X[i] = (float)(lcg(&seed) % 50) - 60.0f;
    X[0 * C + 700] = X[0 * C + 300] = 5.0f; /* tie: 300 */
    X[1 * C + C - 1] = 9.0f;
    X[2 * C + 0] = NAN, X[2 * C + 10] = 3.0f;
    X[3 * C + 17] = NAN, X[3 * C + 400] = 2.0f;
    X[4 * C + 0] = 4.0f;
    run_ok(g);
    const int32_t want[R] = { 300, C - 1, 0, 400, 0 };
    for (int r = 0; r < R; r++)
        assert_int_equal(exec_datai(g, am)[r], want[r]);
    exec_graph_destroy(g);
}

/* ---- Cast ------------------------------------------------------------------ */
static void test_cast(void **state)
{
    (void)state;
    exec_graph *g = newg();
    uint32_t x = exec_input(g, "x", EXEC_F32, 1, (int64_t[]){ 9 });
    uint32_t xi = ex_cast(g, x, EXEC_I32);
    uint32_t back = ex_cast(g, xi, EXEC_F32);
    uint32_t same = ex_cast(g, x, EXEC_F32);
    plan(g);
    const float in[9] = { 2.7f, -2.7f, 0.0f, -0.5f, 1e10f, -1e10f, NAN, 16777216.0f, 3.0f };
    const int32_t want[9] = { 2, -2, 0, 0, INT32_MAX, INT32_MIN, 0, 16777216, 3 };
    memcpy(exec_dataf(g, x), in, sizeof in);
    run_ok(g);
    assert_int_equal(exec_tensor_get(g, xi)->dtype, EXEC_I32);
    assert_int_equal(exec_tensor_get(g, back)->dtype, EXEC_F32);
    for (int i = 0; i < 9; i++) {
        assert_int_equal(exec_datai(g, xi)[i], want[i]);
        assert_true(exec_dataf(g, back)[i] == (float)want[i]);
        assert_memory_equal(&exec_dataf(g, same)[i], &in[i], sizeof(float));
    }
    exec_graph_destroy(g);
    g = newg();
    x = exec_input(g, "x", EXEC_F32, 1, (int64_t[]){ 9 });
    assert_int_equal(ex_cast(g, x, (exec_dtype)7), 0); /* no such dtype */
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    exec_graph_destroy(g);
}

/* ---- elementwise math, activations, Select, Equal, Identity ---------------- */
static void test_elementwise(void **state)
{
    (void)state;
    const int64_t shape[3] = { 3, 7, 5 };
    exec_graph *g = newg();
    uint32_t a = exec_input(g, "a", EXEC_F32, 3, shape);
    uint32_t b = exec_input(g, "b", EXEC_F32, 3, shape);
    uint32_t row = exec_input(g, "row", EXEC_F32, 1, (int64_t[]){ 5 });
    uint32_t pos = exec_input(g, "pos", EXEC_F32, 3, shape);
    uint32_t cond = exec_input(g, "cond", EXEC_F32, 3, shape);
    uint32_t r_sub = ex_sub(g, a, row), r_div = ex_div(g, a, b), r_pow = ex_pow(g, pos, row);
    uint32_t r_neg = ex_neg(g, a), r_sq = ex_square(g, a), r_sqrt = ex_sqrt(g, pos);
    uint32_t r_exp = ex_exp(g, a), r_log = ex_log(g, pos), r_sig = ex_sigmoid(g, a), r_tanh = ex_tanh(g, a);
    uint32_t r_crelu = ex_clipped_relu(g, a, 20.0f), r_sel = ex_select(g, cond, a, b);
    uint32_t r_eq = ex_equal(g, a, b), r_id = ex_identity(g, a), r_zero = ex_zeros_like(g, a);
    plan(g);
    uint64_t seed = 47;
    fill_f(g, a, &seed, -30, 30);
    fill_f(g, b, &seed, 0.5f, 3);
    fill_f(g, row, &seed, -2, 2);
    fill_f(g, pos, &seed, 0.1f, 4);
    float *A = exec_dataf(g, a), *B = exec_dataf(g, b), *R = exec_dataf(g, row), *P = exec_dataf(g, pos);
    float *C = exec_dataf(g, cond);
    A[0] = -200.0f; /* sigmoid and tanh saturate without NaN */
    A[1] = 200.0f;
    A[2] = 0.0f;
    for (int i = 0; i < 105; i++) {
        C[i] = (float)(i % 3) - 1.0f; /* -1, 0, 1: two of three pick a */
        if (i % 4 == 0)
            B[i] = A[i]; /* some equal pairs */
    }
    run_ok(g);
    for (int i = 0; i < 105; i++) {
        float x = A[i], y = B[i], r = R[i % 5], p = P[i];
        const float tol = 1e-5f;
        assert_true(exec_dataf(g, r_sub)[i] == x - r);
        assert_true(exec_dataf(g, r_div)[i] == x / y);
        assert_true(fabsf(exec_dataf(g, r_pow)[i] - powf(p, r)) <= tol * fmaxf(1, powf(p, r)));
        assert_true(exec_dataf(g, r_neg)[i] == -x);
        assert_true(exec_dataf(g, r_sq)[i] == x * x);
        assert_true(fabsf(exec_dataf(g, r_sqrt)[i] - sqrtf(p)) <= tol);
        if (isinf(expf(x)))
            assert_true(exec_dataf(g, r_exp)[i] == expf(x));
        else
            assert_true(fabsf(exec_dataf(g, r_exp)[i] - expf(x)) <= tol * fmaxf(1, expf(x)));
        assert_true(fabsf(exec_dataf(g, r_log)[i] - logf(p)) <= tol);
        double sig = 1.0 / (1.0 + exp(-(double)x));
        assert_true(fabs(exec_dataf(g, r_sig)[i] - sig) <= 1e-6);
        assert_true(fabs(exec_dataf(g, r_tanh)[i] - tanh((double)x)) <= 1e-6);
        assert_true(exec_dataf(g, r_crelu)[i] == fminf(fmaxf(x, 0), 20.0f));
        assert_true(exec_dataf(g, r_sel)[i] == (C[i] != 0.0f ? x : y));
        assert_true(exec_dataf(g, r_eq)[i] == (x == y ? 1.0f : 0.0f));
        assert_true(exec_dataf(g, r_id)[i] == x);
        assert_true(exec_dataf(g, r_zero)[i] == 0.0f);
    }
    assert_true(exec_dataf(g, r_sig)[0] == 0.0f || exec_dataf(g, r_sig)[0] < 1e-30f);
    assert_true(exec_dataf(g, r_sig)[1] == 1.0f);
    assert_true(exec_dataf(g, r_sig)[2] == 0.5f);
    exec_graph_destroy(g);
    /* shape errors */
    g = newg();
    a = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ 3, 5 });
    b = exec_input(g, "b", EXEC_F32, 1, (int64_t[]){ 3 });
    assert_int_equal(ex_sub(g, a, b), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    exec_graph_destroy(g);
}

/* ---- hostile attributes, as a replayed trace may carry them --------------- */
static void test_hostile_attrs(void **state)
{
    (void)state;
    struct {
        exec_op op;
        int nattrs;
        int64_t attrs[4];
        int nout;
    } cases[] = {
        { EXEC_OP_Split, 0, { 0 }, 2 },    /* no count: no division by zero */
        { EXEC_OP_Split, 2, { 0, 3 }, 2 }, /* count disagrees with the outputs */
        { EXEC_OP_Slice, 4, { INT64_MAX, 0, INT64_MAX, 1 }, 1 },
        { EXEC_OP_Slice, 4, { 1, 0, INT64_MAX, 1 }, 1 },
        { EXEC_OP_Pad, 4, { INT64_MAX, INT64_MAX, 0, 0 }, 1 },
        { EXEC_OP_Transpose, 2, { 0, 0 }, 1 },
        { EXEC_OP_Transpose, 2, { 0, 64 }, 1 },
        { EXEC_OP_ConcatV2, 1, { 7 }, 1 },
        { EXEC_OP_ArgMax, 1, { -9 }, 1 },
        { EXEC_OP_Max, 2, { 0, 5 }, 1 },
        { EXEC_OP_Cast, 1, { -1 }, 1 },
        { EXEC_OP_ClippedRelu, 0, { 0 }, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        exec_graph *g = newg();
        uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 6 });
        uint32_t outs[2] = { exec_tensor_new(g, EXEC_ROLE_activation, EXEC_F32, 2, (int64_t[]){ 4, 3 }, "o0"),
                             exec_tensor_new(g, EXEC_ROLE_activation, EXEC_F32, 2, (int64_t[]){ 4, 3 }, "o1") };
        exec_status s = exec_op_add_recorded(g, cases[c].op, EXEC_PHASE_forward, 1, &x, cases[c].nattrs, cases[c].attrs,
                                             cases[c].nout, outs);
        if (s == EXEC_OK)
            fprintf(stderr, "hostile case %zu (%s) accepted\n", c, exec_op_name(cases[c].op));
        assert_int_not_equal(s, EXEC_OK);
        exec_graph_destroy(g);
    }
    /* a 0-dim tensor is refused by the ops that index its last dim */
    const exec_op ops[] = {
        EXEC_OP_Softmax, EXEC_OP_LogSoftmax, EXEC_OP_Mean, EXEC_OP_Max, EXEC_OP_Slice, EXEC_OP_Pad
    };
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        exec_graph *g = newg();
        uint32_t x = exec_input(g, "x", EXEC_F32, 0, NULL);
        assert_int_equal(exec_op1_public(g, ops[i], x), 0);
        assert_int_not_equal(exec_graph_status(g), EXEC_OK);
        exec_graph_destroy(g);
    }
}

/* ---- the costs: FLOPs per the table, data movement 0 ---------------------- */
static void test_costs(void **state)
{
    (void)state;
    exec_graph *g = newg();
    uint32_t a = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ 3, 5 });
    uint32_t t = ex_transpose(g, a, (int64_t[]){ 1, 0 });
    uint32_t e = ex_exp(g, a);
    uint32_t z = ex_zeros_like(g, a);
    (void)t, (void)e, (void)z;
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    uint64_t flops, bytes;
    exec_node_cost(g, exec_node_get(g, 0), &flops, &bytes);
    assert_int_equal(flops, 0);
    assert_int_equal(bytes, 2 * 15 * 4);
    exec_node_cost(g, exec_node_get(g, 1), &flops, &bytes);
    assert_int_equal(flops, 4 * 15);
    assert_int_equal(bytes, 2 * 15 * 4);
    exec_node_cost(g, exec_node_get(g, 2), &flops, &bytes);
    assert_int_equal(flops, 0);
    assert_int_equal(bytes, 15 * 4);
    exec_graph_destroy(g);
}

/* the kernels' exp, tanh and sigmoid against libm in double, over their
 * whole useful range, printing the max relative error */
static void test_fast_math(void **state)
{
    (void)state;
    double e_exp = 0, e_tanh = 0, e_sig = 0;
    for (double v = -87.0; v <= 88.0; v += 3e-4) {
        float x = (float)v;
        double r = exp((double)x);
        e_exp = fmax(e_exp, fabs(math_expf(x) - r) / r);
    }
    for (double v = -20.0; v <= 20.0; v += 1e-4) {
        float x = (float)v;
        double t = tanh((double)x), sg = 1.0 / (1.0 + exp(-(double)x));
        if (t != 0)
            e_tanh = fmax(e_tanh, fabs(math_tanhf(x) - t) / fabs(t));
        e_sig = fmax(e_sig, fabs(math_sigmoid(x) - sg) / sg);
    }
    double e_log = 0, e_l1p = 0;
    for (double v = -80.0; v <= 80.0; v += 1e-3) {
        float x = (float)exp(v);
        e_log = fmax(e_log, fabs(math_logf(x) - log((double)x)) / fmax(fabs(log((double)x)), 1e-30));
    }
    for (double v = 0; v <= 1.0; v += 1e-5) {
        float x = (float)v;
        e_l1p = fmax(e_l1p, fabs(math_log1pf(x) - log1p((double)x)));
    }
    printf("max relative error: exp %.3g, tanh %.3g, sigmoid %.3g, log %.3g; log1p absolute %.3g\n", e_exp, e_tanh,
           e_sig, e_log, e_l1p);
    assert_true(e_log < 2e-7);
    assert_true(e_l1p < 1e-7);
    assert_true(e_exp < 2e-7);
    assert_true(e_tanh < 1e-6);
    assert_true(e_sig < 1e-6);
    /* the edges: tiny, huge, saturated; no inf or nan */
    assert_true(math_tanhf(1e-30f) == 1e-30f && math_tanhf(-1e-30f) == -1e-30f);
    assert_true(math_tanhf(50.0f) == 1.0f && math_tanhf(-50.0f) == -1.0f);
    assert_true(math_sigmoid(-200.0f) >= 0.0f && math_sigmoid(-200.0f) < 1e-37f && math_sigmoid(200.0f) == 1.0f);
    assert_true(isfinite(math_expf(1000.0f)) && math_expf(-1000.0f) > 0.0f && math_expf(0.0f) == 1.0f);
    /* NaN in, NaN out (and no undefined shift under UBSan) */
    assert_true(isnan(math_expf(NAN)) && isnan(math_tanhf(NAN)) && isnan(math_sigmoid(NAN)));
}

/* The loops that set the parallel thresholds are the kernels' own copy for
 * each vector set (ops/calibrate.c): the plain functions at the baseline,
 * another copy for each set where the build carries several (a loop timed
 * at the baseline gave the portable build a threshold five times below
 * the native build's). Each set's thresholds lie within their bounds. */
static void test_par_calibration_per_set(void **state)
{
    (void)state;
    const exec_simd best = exec_simd_best();
    const int variants = strstr(exec_simd_built(), "avx2") != NULL;
    exec_calib_fn seen[EXEC_SIMD_AVX512 + 1][EXEC_WORK_COUNT] = { { 0 } };
    for (exec_simd s = EXEC_SIMD_SCALAR; s <= best; s++) {
        assert_int_equal(exec_simd_set(s), s);
        for (int w = 0; w < EXEC_WORK_COUNT; w++) {
            exec_calib_fn f = exec_calib_now((exec_work)w);
            seen[s][w] = f;
            assert_true(f(4096, 2) > 0);
            int64_t m = exec_par_min((exec_work)w);
            assert_true(m >= 2048 && m <= 4194304);
        }
        assert_true(seen[s][EXEC_WORK_STREAM] != seen[s][EXEC_WORK_MATH]);
    }
    assert_ptr_equal(seen[EXEC_SIMD_SCALAR][EXEC_WORK_STREAM], exec_calib_stream);
    assert_ptr_equal(seen[EXEC_SIMD_SCALAR][EXEC_WORK_MATH], exec_calib_math);
    for (exec_simd s = EXEC_SIMD_AVX2; s <= best; s++)
        for (exec_simd t = EXEC_SIMD_SCALAR; t < s; t++)
            for (int w = 0; w < EXEC_WORK_COUNT; w++)
                assert_true(variants ? seen[s][w] != seen[t][w] : seen[s][w] == seen[t][w]);
    exec_simd_set(EXEC_SIMD_AUTO);
}

/* The binary kernels' three forms of b (a's shape, a scalar, rows of a's
 * last dim) and BiasAdd, below the measured threshold (one thread, no
 * parallel region) and past its bound (two threads): exactly the naive
 * result. The threshold itself lies within its bounds. */
static void test_broadcast_paths(void **state)
{
    (void)state;
    for (int w = 0; w < EXEC_WORK_COUNT; w++) {
        int64_t m = exec_par_min((exec_work)w);
        printf("parallel threshold (work %d): %lld elements\n", w, (long long)m);
        assert_true(m >= 2048 && m <= 4194304);
    }
    static const int64_t rows[] = { 3, 37, 4500 }; /* x 1031 columns: 3k, 38k, 4.6M elements */
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
        const int64_t R = rows[r], C = 1031;
        exec_graph *g = newg();
        uint32_t a = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ R, C });
        uint32_t full = exec_input(g, "full", EXEC_F32, 2, (int64_t[]){ R, C });
        uint32_t one = exec_input(g, "one", EXEC_F32, 1, (int64_t[]){ 1 });
        uint32_t row = exec_input(g, "row", EXEC_F32, 1, (int64_t[]){ C });
        uint32_t y[4] = { ex_add(g, a, full), ex_mul(g, a, one), ex_sub(g, a, row), ex_bias_add(g, a, row, 1) };
        plan(g);
        uint64_t seed = 7 + (uint64_t)r;
        fill_f(g, a, &seed, -2, 2);
        fill_f(g, full, &seed, -2, 2);
        fill_f(g, one, &seed, -2, 2);
        fill_f(g, row, &seed, -2, 2);
        run_ok(g);
        const float *A = exec_dataf(g, a), *F = exec_dataf(g, full), *O = exec_dataf(g, one), *W = exec_dataf(g, row);
        int64_t bad = 0;
        for (int64_t i = 0; i < R * C; i++) {
            bad += exec_dataf(g, y[0])[i] != A[i] + F[i];
            bad += exec_dataf(g, y[1])[i] != A[i] * O[0];
            bad += exec_dataf(g, y[2])[i] != A[i] - W[i % C];
            bad += exec_dataf(g, y[3])[i] != A[i] + W[i % C];
        }
        printf("broadcast %lldx%lld: %lld wrong\n", (long long)R, (long long)C, (long long)bad);
        assert_int_equal(bad, 0);
        exec_graph_destroy(g);
    }
}

int main(void)
{
    exec_threads_set(2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_concat_split_large),
        cmocka_unit_test(test_concat_split),
        cmocka_unit_test(test_split_errors),
        cmocka_unit_test(test_slice_pad),
        cmocka_unit_test(test_gather_segment_sum),
        cmocka_unit_test(test_bad_indices),
        cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_fast_math),
        cmocka_unit_test(test_argmax_max_mean),
        cmocka_unit_test(test_par_calibration_per_set),
        cmocka_unit_test(test_broadcast_paths),
        cmocka_unit_test(test_cast),
        cmocka_unit_test(test_elementwise),
        cmocka_unit_test(test_hostile_attrs),
        cmocka_unit_test(test_costs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
