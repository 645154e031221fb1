/* test_gradcheck.c -- every op with a gradient rule, checked against central
 * finite differences through the real graph path (builder, autodiff, the
 * executor). The loss is sum(out * r) for fixed random r, so every output
 * element's gradient is exercised. Prints the max relative error per case. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec/build.h"
#include "exec/exec.h"
#include "tests/gradcheck.h"

static const gc_case cases[] = {
#include "tests/ops/core.cases"
#if __has_include("tests/ops/nn.cases")
#include "tests/ops/nn.cases"
#endif
#if __has_include("tests/ops/math.cases")
#include "tests/ops/math.cases"
#endif
#if __has_include("tests/ops/loss.cases")
#include "tests/ops/loss.cases"
#endif
#include "tests/ops/attn.cases"
};
#define NCASES (sizeof cases / sizeof cases[0])

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}
static float urand(uint64_t *s, float lo, float hi) { return lo + (hi - lo) * (float)(lcg(s) % 1000003) / 1000003.0f; }

typedef struct built {
    exec_graph *g;
    uint32_t in[8], loss;
} built;

/* Differentiable inputs are weights (so autodiff differentiates them). */
static int build_case(const gc_case *c, built *b, int with_grad)
{
    memset(b, 0, sizeof *b);
    if (exec_graph_create(&b->g, 7))
        return -1;
    exec_graph *g = b->g;
    int op = exec_op_from_name(c->op);
    assert_true(op >= 0);
    for (int i = 0; i < c->nin; i++) {
        char name[16];
        snprintf(name, sizeof name, "in%d", i);
        const gc_input *in = &c->in[i];
        b->in[i] = in->fixed ? exec_input(g, name, in->dtype, in->ndim, in->shape)
                             : exec_weight(g, name, in->ndim, in->shape, EXEC_INIT_ZERO);
    }
    uint32_t outs[8] = { 0 };
    exec_op_add(g, (exec_op)op, c->nin, b->in, c->nattrs, c->attrs, outs);
    if (exec_graph_status(g)) {
        fprintf(stderr, "%s: build failed: %s\n", c->op, exec_errmsg());
        return -1;
    }
    unsigned mask = c->out_mask ? c->out_mask : 1u;
    uint32_t terms[8];
    int nterms = 0;
    for (int o = 0; o < 8; o++) {
        if (!(mask & (1u << o)) || !outs[o])
            continue;
        exec_tensor *t = exec_tensor_get(g, outs[o]);
        uint32_t r = exec_input(g, "r", EXEC_F32, t->ndim, t->shape);
        terms[nterms++] = ex_sum(g, ex_mul(g, outs[o], r), 0, NULL, 0);
    }
    b->loss = nterms > 1 ? ex_addn(g, nterms, terms) : terms[0];
    if (with_grad)
        exec_gradients(g, b->loss);
    if (exec_graph_status(g) || exec_graph_plan(g)) {
        fprintf(stderr, "%s: plan failed: %s\n", c->op, exec_errmsg());
        return -1;
    }
    /* fill inputs and the r tensors deterministically */
    uint64_t seed = 12345;
    for (uint32_t id = 1; id <= exec_tensor_count(g); id++) {
        exec_tensor *t = exec_tensor_get(g, id);
        int k = -1;
        for (int i = 0; i < c->nin; i++)
            if (b->in[i] == id)
                k = i;
        if (k >= 0) {
            const gc_input *in = &c->in[k];
            for (int64_t e = 0; e < t->numel; e++) {
                if (in->dtype == EXEC_I32)
                    ((int32_t *)t->data)[e] = (int32_t)in->lo + (int32_t)(lcg(&seed) % (uint64_t)(in->hi - in->lo));
                else
                    ((float *)t->data)[e] = urand(&seed, in->lo, in->hi);
            }
        } else if (strcmp(t->name, "r") == 0) {
            for (int64_t e = 0; e < t->numel; e++)
                ((float *)t->data)[e] = urand(&seed, -1.0f, 1.0f);
        }
    }
    return 0;
}

static double loss_now(built *b)
{
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(b->g, &o), EXEC_OK);
    return exec_dataf(b->g, b->loss)[0];
}

/* The convolution algorithm of the finite differences' forward runs, when
 * not 0 (AUTO): the analytic gradient then comes from the algorithm set
 * before check_case, the numeric one from this. */
static exec_conv_algo fd_conv_algo;

static void check_case(const gc_case *c)
{
    built b;
    assert_int_equal(build_case(c, &b, 1), 0);
    exec_run_opts o = { .max_phase = EXEC_PHASE_backward };
    assert_int_equal(exec_graph_run(b.g, &o), EXEC_OK);
    if (fd_conv_algo != EXEC_CONV_AUTO)
        exec_conv_algo_set(fd_conv_algo);
    double maxrel = 0;
    int64_t kinks = 0, checked = 0;
    double l0 = loss_now(&b);
    float tol = c->tol > 0 ? c->tol : 2e-2f;
    for (int i = 0; i < c->nin; i++) {
        if (c->in[i].fixed)
            continue;
        uint32_t gid = exec_grad_of(b.g, b.in[i]);
        assert_true(gid != 0);
        exec_tensor *x = exec_tensor_get(b.g, b.in[i]);
        float *xd = x->data;
        /* copy the analytic gradient: the forward re-runs reuse buffers */
        int64_t n = x->numel;
        float ana[n];
        memcpy(ana, exec_dataf(b.g, gid), sizeof ana);
        /* each write through a fresh exec_tensor_get, which marks x changed:
         * a kernel's kept derivation of x (Winograd's transformed filter,
         * where auto picked it) is then made again, as after any write */
        for (int64_t e = 0; e < n; e++) {
            float save = xd[e], h = 1e-3f * fmaxf(1.0f, fabsf(save));
            xd = exec_tensor_get(b.g, b.in[i])->data;
            xd[e] = save + h;
            double lp = loss_now(&b);
            xd = exec_tensor_get(b.g, b.in[i])->data;
            xd[e] = save - h;
            double lm = loss_now(&b);
            xd = exec_tensor_get(b.g, b.in[i])->data;
            xd[e] = save;
            double num = (lp - lm) / (2.0 * h);
            /* a kink (Relu at 0, a max pool tie) inside [x-h, x+h]: the one-
             * sided slopes disagree; such points have no derivative to check */
            double right = (lp - l0) / h, left = (l0 - lm) / h;
            checked++;
            if (fabs(right - left) > 0.1 * fmax(1.0, fabs(right) + fabs(left))) {
                kinks++;
                continue;
            }
            double rel = fabs(num - ana[e]) / fmax(1e-2, fabs(num) + fabs(ana[e]));
            if (rel > maxrel)
                maxrel = rel;
            if (rel > tol)
                fprintf(stderr, "%s input %d element %lld: analytic %.6g numeric %.6g\n", c->op, i, (long long)e,
                        (double)ana[e], num);
        }
    }
    printf("gradcheck %-38s max rel diff %.2e (%lld of %lld points at a kink)\n", c->op, maxrel, (long long)kinks,
           (long long)checked);
    exec_graph_destroy(b.g);
    assert_true(maxrel <= tol);
    assert_true(kinks * 10 <= checked);
}

static void test_every_case(void **state)
{
    (void)state;
    for (size_t i = 0; i < NCASES; i++)
        check_case(&cases[i]);
}

/* The convolution cases once per algorithm forced (the gradient of Conv2D
 * runs Conv2DBackpropInput and Conv2DBackpropFilter by the same one):
 * Winograd, where it applies (3x3 stride 1), and the others everywhere.
 * The finite differences take their forward runs from im2col: Winograd's
 * forward rounds to about 1e-6 of the sum's terms, which in a difference
 * of losses over 2h = 2e-3 is a few percent of a small gradient (its
 * forward itself is checked against the 7-loop sum in test_ops_nn). */
static void test_conv_algos(void **state)
{
    (void)state;
    static const exec_conv_algo algos[] = { EXEC_CONV_IM2COL, EXEC_CONV_DIRECT, EXEC_CONV_WINOGRAD };
    fd_conv_algo = EXEC_CONV_IM2COL;
    for (size_t a = 0; a < sizeof algos / sizeof algos[0]; a++)
        for (size_t i = 0; i < NCASES; i++)
            if (strncmp(cases[i].op, "Conv2D", 6) == 0) {
                exec_conv_algo_set(algos[a]);
                check_case(&cases[i]);
            }
    fd_conv_algo = EXEC_CONV_AUTO;
    exec_conv_algo_set(EXEC_CONV_AUTO);
}

/* Every op with a gradient rule has at least one case; no case names an
 * unknown op. */
static void test_table_covered(void **state)
{
    (void)state;
    int missing = 0;
    for (int op = 0; op < EXEC_OP_COUNT; op++) {
        if (!exec_op_table[op].grad)
            continue;
        int found = 0;
        for (size_t i = 0; i < NCASES; i++)
            found |= strcmp(cases[i].op, exec_op_table[op].name) == 0;
        if (!found) {
            fprintf(stderr, "no gradient-check case for %s\n", exec_op_table[op].name);
            missing++;
        }
    }
    for (size_t i = 0; i < NCASES; i++)
        assert_true(exec_op_from_name(cases[i].op) >= 0);
    assert_int_equal(missing, 0);
}

int main(void)
{
    exec_threads_set(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_covered),
        cmocka_unit_test(test_every_case),
        cmocka_unit_test(test_conv_algos),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
