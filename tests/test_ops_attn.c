/* test_ops_attn.c -- the attention ops (LayerNorm and LayerNormGrad,
 * MaskedFill, LabelSmoothedCrossEntropy: label smoothing, padding rows
 * ignored) against reference loops in double precision, on odd shapes and
 * with two threads over enough rows for the parallel paths, and the
 * learning-rate setter a schedule uses. Each check prints its max abs diff. */
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

static uint64_t g_seed = 2017;
static float frand(float lo, float hi)
{
    g_seed = g_seed * 6364136223846793005ull + 1442695040888963407ull;
    return lo + (hi - lo) * (float)((g_seed >> 33) % 1000003) / 1000003.0f;
}

static void fill(float *p, int64_t n, float lo, float hi)
{
    for (int64_t i = 0; i < n; i++)
        p[i] = frand(lo, hi);
}

/* ---- LayerNorm forward and backward (through autodiff) ----------------- */
static void layer_norm_case(int64_t rows_a, int64_t rows_b, int64_t D)
{
    const int64_t R = rows_a * rows_b, n = R * D;
    const float eps = 1e-5f;
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t x = exec_weight(g, "x", 3, (int64_t[]){ rows_a, rows_b, D }, EXEC_INIT_ZERO);
    uint32_t gm = exec_weight(g, "gamma", 1, (int64_t[]){ D }, EXEC_INIT_ZERO);
    uint32_t bt = exec_weight(g, "beta", 1, (int64_t[]){ D }, EXEC_INIT_ZERO);
    uint32_t y = ex_layer_norm(g, x, gm, bt, eps);
    uint32_t r = exec_input(g, "r", EXEC_F32, 3, (int64_t[]){ rows_a, rows_b, D });
    uint32_t loss = ex_sum(g, ex_mul(g, y, r), 0, NULL, 0);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *X = exec_dataf(g, x), *G = exec_dataf(g, gm), *B = exec_dataf(g, bt), *RR = exec_dataf(g, r);
    fill(X, n, -3, 5);
    fill(G, D, 0.5f, 1.5f);
    fill(B, D, -1, 1);
    fill(RR, n, -1, 1);
    exec_run_opts o = { .max_phase = EXEC_PHASE_backward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);

    double *ry = calloc((size_t)n, sizeof *ry), *rdx = calloc((size_t)n, sizeof *rdx);
    double *rdg = calloc((size_t)D, sizeof *rdg), *rdb = calloc((size_t)D, sizeof *rdb);
    assert_true(ry && rdx && rdg && rdb);
    for (int64_t i = 0; i < R; i++) {
        const float *xr = X + i * D, *dy = RR + i * D;
        double mu = 0, var = 0, sh = 0, shx = 0;
        for (int64_t e = 0; e < D; e++)
            mu += xr[e];
        mu /= (double)D;
        for (int64_t e = 0; e < D; e++)
            var += (xr[e] - mu) * (xr[e] - mu);
        double is = 1.0 / sqrt(var / (double)D + eps);
        for (int64_t e = 0; e < D; e++) {
            double xh = (xr[e] - mu) * is;
            ry[i * D + e] = xh * G[e] + B[e];
            rdg[e] += dy[e] * xh;
            rdb[e] += dy[e];
            sh += dy[e] * G[e];
            shx += dy[e] * G[e] * xh;
        }
        for (int64_t e = 0; e < D; e++)
            rdx[i * D + e] = is * (dy[e] * G[e] - sh / (double)D - (xr[e] - mu) * is * shx / (double)D);
    }
    char what[96];
    snprintf(what, sizeof what, "LayerNorm y [%lld,%lld,%lld]", (long long)rows_a, (long long)rows_b, (long long)D);
    refcheck_compare(what, exec_dataf(g, y), ry, n, 1e-5);
    snprintf(what, sizeof what, "LayerNormGrad dx [%lld,%lld,%lld]", (long long)rows_a, (long long)rows_b,
             (long long)D);
    refcheck_compare(what, exec_dataf(g, exec_grad_of(g, x)), rdx, n, 1e-4);
    refcheck_compare("LayerNormGrad dgamma", exec_dataf(g, exec_grad_of(g, gm)), rdg, D, 1e-4);
    refcheck_compare("LayerNormGrad dbeta", exec_dataf(g, exec_grad_of(g, bt)), rdb, D, 1e-4);
    free(ry);
    free(rdx);
    free(rdg);
    free(rdb);
    exec_graph_destroy(g);
}

static void test_layer_norm(void **state)
{
    (void)state;
    layer_norm_case(2, 3, 7);
    layer_norm_case(1, 5, 1);    /* one value a row: y = beta */
    layer_norm_case(8, 33, 130); /* parallel rows, column blocks of the parameter gradients */
}

/* A multi-output op whose first output feeds two ops: autodiff sums the two
 * gradients with an AddN while it walks the op's outputs, and that AddN may
 * be the node that grows (moves) the node array: the graphs of pad = 0..72
 * extra nodes put that growth at every point of the walk (the sanitizer
 * build checks the walk). d/dx of sum(y + y*y) with y = LayerNorm(x)
 * equals LayerNormGrad of 1 + 2y. */
static void layer_norm_reused_case(int pad)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t x = exec_weight(g, "x", 2, (int64_t[]){ 3, 5 }, EXEC_INIT_ZERO);
    for (int i = 0; i < pad; i++)
        ex_identity(g, x);
    uint32_t gm = exec_weight(g, "gamma", 1, (int64_t[]){ 5 }, EXEC_INIT_ONE);
    uint32_t bt = exec_weight(g, "beta", 1, (int64_t[]){ 5 }, EXEC_INIT_ZERO);
    uint32_t y = ex_layer_norm(g, x, gm, bt, 1e-5f);
    uint32_t loss = ex_sum(g, ex_add(g, y, ex_mul(g, y, y)), 0, NULL, 0);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    fill(exec_dataf(g, x), 15, -2, 2);
    exec_run_opts o = { .max_phase = EXEC_PHASE_backward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    const float *Y = exec_dataf(g, y), *X = exec_dataf(g, x);
    double ref[15];
    for (int r = 0; r < 3; r++) {
        double mu = 0, var = 0, sh = 0, shx = 0;
        for (int e = 0; e < 5; e++)
            mu += X[r * 5 + e] / 5.0;
        for (int e = 0; e < 5; e++)
            var += (X[r * 5 + e] - mu) * (X[r * 5 + e] - mu) / 5.0;
        double is = 1.0 / sqrt(var + 1e-5);
        for (int e = 0; e < 5; e++) {
            double h = 1.0 + 2.0 * Y[r * 5 + e];
            sh += h / 5.0;
            shx += h * (X[r * 5 + e] - mu) * is / 5.0;
        }
        for (int e = 0; e < 5; e++)
            ref[r * 5 + e] = is * (1.0 + 2.0 * Y[r * 5 + e] - sh - (X[r * 5 + e] - mu) * is * shx);
    }
    if (pad == 0)
        refcheck_compare("LayerNorm output used twice: dx", exec_dataf(g, exec_grad_of(g, x)), ref, 15, 1e-4);
    else
        for (int i = 0; i < 15; i++)
            assert_true(fabs(exec_dataf(g, exec_grad_of(g, x))[i] - ref[i]) <= 1e-4 * (1 + fabs(ref[i])));
    exec_graph_destroy(g);
}

static void test_layer_norm_output_reused(void **state)
{
    (void)state;
    for (int pad = 0; pad <= 72; pad++)
        layer_norm_reused_case(pad);
}

/* ---- MaskedFill: float and int32 masks, broadcast over each dim ------- */
static void masked_fill_case(exec_dtype mdt, const int64_t *xs, const int64_t *ms)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t x = exec_input(g, "x", EXEC_F32, 3, xs);
    uint32_t m = exec_input(g, "m", mdt, 3, ms);
    const float value = -1e9f;
    uint32_t y = ex_masked_fill(g, x, m, value);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    int64_t n = xs[0] * xs[1] * xs[2], nm = ms[0] * ms[1] * ms[2];
    float *X = exec_dataf(g, x);
    fill(X, n, -1, 1);
    for (int64_t i = 0; i < nm; i++) {
        int set = frand(0, 1) < 0.4f;
        if (mdt == EXEC_F32)
            exec_dataf(g, m)[i] = set ? frand(0.5f, 2.0f) : 0.0f;
        else
            exec_datai(g, m)[i] = set ? (int32_t)(1 + i % 3) : 0;
    }
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    double *ref = malloc((size_t)n * sizeof *ref);
    assert_non_null(ref);
    int64_t filled = 0;
    for (int64_t a = 0; a < xs[0]; a++)
        for (int64_t b = 0; b < xs[1]; b++)
            for (int64_t c = 0; c < xs[2]; c++) {
                int64_t mi = ((ms[0] == 1 ? 0 : a) * ms[1] + (ms[1] == 1 ? 0 : b)) * ms[2] + (ms[2] == 1 ? 0 : c);
                int set = mdt == EXEC_F32 ? exec_dataf(g, m)[mi] != 0 : exec_datai(g, m)[mi] != 0;
                int64_t i = (a * xs[1] + b) * xs[2] + c;
                ref[i] = set ? value : X[i];
                filled += set;
            }
    char what[96];
    snprintf(what, sizeof what, "MaskedFill %s mask [%lld,%lld,%lld] on [%lld,%lld,%lld]", exec_dtype_name(mdt),
             (long long)ms[0], (long long)ms[1], (long long)ms[2], (long long)xs[0], (long long)xs[1],
             (long long)xs[2]);
    refcheck_compare(what, exec_dataf(g, y), ref, n, 0);
    assert_true(filled > 0 && filled < n); /* the case exercises both branches */
    free(ref);
    exec_graph_destroy(g);
}

static void test_masked_fill(void **state)
{
    (void)state;
    masked_fill_case(EXEC_F32, (int64_t[]){ 3, 4, 5 }, (int64_t[]){ 3, 4, 5 });
    masked_fill_case(EXEC_I32, (int64_t[]){ 3, 4, 5 }, (int64_t[]){ 3, 1, 5 });      /* key padding */
    masked_fill_case(EXEC_F32, (int64_t[]){ 3, 6, 6 }, (int64_t[]){ 1, 6, 6 });      /* causal */
    masked_fill_case(EXEC_I32, (int64_t[]){ 2, 3, 7 }, (int64_t[]){ 2, 3, 1 });      /* whole rows */
    masked_fill_case(EXEC_F32, (int64_t[]){ 16, 40, 64 }, (int64_t[]){ 16, 1, 64 }); /* parallel */
}

/* ---- label smoothing and ignored rows ---------------------------------- */
static void xent_case(int64_t N, int64_t C, float eps, int ignore)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t x = exec_input(g, "logits", EXEC_F32, 2, (int64_t[]){ N, C });
    uint32_t l = exec_input(g, "labels", EXEC_I32, 1, (int64_t[]){ N });
    uint32_t out[2] = { 0 };
    int64_t attrs[] = { exec_attr_f(eps), ignore ? 0 : -1 };
    exec_op_add(g, EXEC_OP_LabelSmoothedCrossEntropy, 2, (uint32_t[]){ x, l }, 2, attrs, out);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *X = exec_dataf(g, x);
    int32_t *L = exec_datai(g, l);
    fill(X, N * C, -4, 4);
    for (int64_t i = 0; i < N; i++)
        L[i] = (int32_t)(frand(0, 1) * (float)C) % (int32_t)C;
    L[0] = 0;
    L[1] = 1;
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    double total = 0;
    int64_t M = 0;
    double *bp = calloc((size_t)(N * C), sizeof *bp);
    assert_non_null(bp);
    for (int64_t i = 0; i < N; i++)
        M += !(ignore && L[i] == 0);
    for (int64_t i = 0; i < N; i++) {
        if (ignore && L[i] == 0)
            continue;
        const float *xr = X + i * C;
        double mx = xr[0], s = 0;
        for (int64_t j = 1; j < C; j++)
            mx = fmax(mx, xr[j]);
        for (int64_t j = 0; j < C; j++)
            s += exp(xr[j] - mx);
        for (int64_t j = 0; j < C; j++) {
            double q = (j == L[i] ? 1.0 - eps : 0.0) + eps / (double)C;
            double logp = xr[j] - mx - log(s);
            total -= q * logp;
            bp[i * C + j] = (exp(logp) - q) / (double)M;
        }
    }
    double ref = total / (double)M;
    char what[96];
    snprintf(what, sizeof what, "LabelSmoothedCrossEntropy loss N=%lld C=%lld eps=%.2f%s", (long long)N, (long long)C,
             (double)eps, ignore ? " ignore 0" : "");
    refcheck_compare(what, exec_dataf(g, out[0]), &ref, 1, 1e-5);
    refcheck_compare("  backprop", exec_dataf(g, out[1]), bp, N * C, 1e-5);
    free(bp);
    exec_graph_destroy(g);
}

/* A label outside [0, C) is an error, -1 included where nothing is ignored */
static void xent_bad_label(exec_op op, int nattrs, int32_t bad)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t x = exec_input(g, "logits", EXEC_F32, 2, (int64_t[]){ 3, 4 });
    uint32_t l = exec_input(g, "labels", EXEC_I32, 1, (int64_t[]){ 3 });
    exec_op_add(g, op, 2, (uint32_t[]){ x, l }, nattrs, (int64_t[]){ exec_attr_f(0.1f), -1 }, NULL);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    exec_datai(g, l)[1] = bad;
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_not_equal(exec_graph_run(g, &o), EXEC_OK);
    printf("rejected: %s\n", exec_errmsg());
    assert_non_null(strstr(exec_errmsg(), "outside [0,4)"));
    exec_graph_destroy(g);
}

static void test_xent_smoothed(void **state)
{
    (void)state;
    xent_bad_label(EXEC_OP_SparseSoftmaxCrossEntropyWithLogits, 0, -1);
    xent_bad_label(EXEC_OP_LabelSmoothedCrossEntropy, 2, -1);
    xent_bad_label(EXEC_OP_LabelSmoothedCrossEntropy, 2, 4);
    xent_case(9, 7, 0.1f, 0);
    xent_case(9, 7, 0.1f, 1);
    xent_case(11, 5, 0.0f, 1);
    xent_case(64, 3000, 0.1f, 1); /* the parallel path */
}

/* ---- exec_optimizer_set_lr: the schedule's rate reaches the updates ---- */
static void test_set_lr(void **state)
{
    (void)state;
    for (int adam = 0; adam < 2; adam++) {
        exec_graph *g = NULL;
        assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
        uint32_t w = exec_weight(g, "w", 1, (int64_t[]){ 4 }, EXEC_INIT_ZERO);
        uint32_t r = exec_input(g, "r", EXEC_F32, 1, (int64_t[]){ 4 });
        uint32_t loss = ex_sum(g, ex_mul(g, w, r), 0, NULL, 0);
        assert_int_equal(exec_gradients(g, loss), EXEC_OK);
        assert_int_equal(adam ? exec_optimizer_adam(g, 0.1f, 0.9f, 0.98f, 1e-9f) : exec_optimizer_sgd(g, 0.1f),
                         EXEC_OK);
        assert_int_equal(exec_graph_plan(g), EXEC_OK);
        const float rv[4] = { 1, -2, 0.5f, 4 };
        memcpy(exec_dataf(g, r), rv, sizeof rv);
        assert_int_equal(exec_optimizer_set_lr(g, 0.5f), EXEC_OK);
        exec_run_opts o = { .max_phase = EXEC_PHASE_update };
        assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
        /* SGD: w = -0.5 r; Adam's first step moves every weight by lr
         * against the sign of its gradient */
        for (int i = 0; i < 4; i++) {
            double want = adam ? (rv[i] > 0 ? -0.5 : 0.5) : -0.5 * rv[i];
            assert_true(fabs(exec_dataf(g, w)[i] - want) < 1e-4);
        }
        assert_int_not_equal(exec_optimizer_set_lr(g, -1.0f), EXEC_OK);
        assert_int_not_equal(exec_optimizer_set_lr(g, NAN), EXEC_OK);
        exec_graph_destroy(g);
    }
    printf("exec_optimizer_set_lr: SGD and Adam steps taken at the new rate\n");
}

int main(void)
{
    exec_threads_set(2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layer_norm),  cmocka_unit_test(test_layer_norm_output_reused),
        cmocka_unit_test(test_masked_fill), cmocka_unit_test(test_xent_smoothed),
        cmocka_unit_test(test_set_lr),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
