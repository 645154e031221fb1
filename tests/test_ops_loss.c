/* test_ops_loss.c -- the loss, random-sampling and optimization families
 * checked against independent naive computations:
 *  - CTC loss and its gradient vs a brute-force sum over every alignment;
 *  - sampled softmax: with num_sampled = V every class is a candidate and
 *    the loss equals the full softmax loss over the corrected logits
 *    z_c - log Q(c) (Q from the op's expected-count output); with S < V the
 *    loss equals a naive recomputation from the drawn ids (accidental hits
 *    removed), and with S = 1 the sampler's class frequencies match TF's
 *    log-uniform distribution;
 *  - dense softmax, sigmoid and Huber losses vs naive formulas (double);
 *  - Momentum / Adam / RMSProp steps vs TF's update rules, in double;
 *  - ClipByGlobalNorm / ClipByNorm vs the formula;
 *  - random ops: moments, determinism per seed and per thread count;
 *  - dropout keep rate and scale;
 *  - an MLP trained with Adam, RMSProp and momentum (+ global-norm clip):
 *    its loss falls. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "exec/build.h"
#include "exec/exec.h"

static uint64_t lcg(uint64_t *s)
{
    *s = *s * 6364136223846793005ull + 1442695040888963407ull;
    return *s >> 33;
}
static float urand(uint64_t *s, float lo, float hi) { return lo + (hi - lo) * (float)(lcg(s) % 1000003) / 1000003.0f; }

static exec_graph *new_graph(uint64_t seed)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, seed), EXEC_OK);
    return g;
}

static void plan(exec_graph *g)
{
    if (exec_graph_status(g) || exec_graph_plan(g))
        fail_msg("plan: %s", exec_errmsg());
}

static void run(exec_graph *g, exec_phase max)
{
    exec_run_opts o = { .max_phase = max };
    if (exec_graph_run(g, &o))
        fail_msg("run: %s", exec_errmsg());
}

/* ---- CTC vs brute force ------------------------------------------------ */
/* -log p(label | logits) and d/dlogits for one example, by enumerating all
 * C^T paths. x: [T][C] logits of the example (stride C). */
static double ctc_brute(const float *x, int T, int C, const int *lab, int L, double *grad)
{
    int blank = C - 1;
    double y[8][8];
    for (int t = 0; t < T; t++) {
        double m = x[t * C], s = 0;
        for (int j = 1; j < C; j++)
            m = fmax(m, x[t * C + j]);
        for (int j = 0; j < C; j++)
            s += exp(x[t * C + j] - m);
        for (int j = 0; j < C; j++)
            y[t][j] = exp(x[t * C + j] - m) / s;
    }
    double p = 0, occ[8][8] = { { 0 } };
    int npaths = 1;
    for (int t = 0; t < T; t++)
        npaths *= C;
    for (int code = 0; code < npaths; code++) {
        int path[8], c = code;
        for (int t = 0; t < T; t++) {
            path[t] = c % C;
            c /= C;
        }
        int out[8], no = 0, prev = -1;
        for (int t = 0; t < T; t++) {
            if (path[t] != blank && path[t] != prev)
                out[no++] = path[t];
            prev = path[t];
        }
        if (no != L)
            continue;
        int ok = 1;
        for (int i = 0; i < L; i++)
            ok &= out[i] == lab[i];
        if (!ok)
            continue;
        double pr = 1;
        for (int t = 0; t < T; t++)
            pr *= y[t][path[t]];
        p += pr;
        for (int t = 0; t < T; t++)
            occ[t][path[t]] += pr;
    }
    for (int t = 0; t < T; t++)
        for (int j = 0; j < C; j++)
            grad[t * C + j] = p > 0 ? y[t][j] - occ[t][j] / p : 0;
    return -log(p);
}

static void test_ctc_vs_bruteforce(void **state)
{
    (void)state;
    for (int trial = 0; trial < 6; trial++) {
        int T = 3 + trial % 3, N = 4, C = 2 + trial % 2, Lmax = 3;
        if (C == 2 && T > 4)
            T = 4;
        exec_graph *g = new_graph(1);
        uint32_t x = exec_input(g, "x", EXEC_F32, 3, (int64_t[]){ T, N, C });
        uint32_t lab = exec_input(g, "lab", EXEC_I32, 2, (int64_t[]){ N, Lmax });
        uint32_t ll = exec_input(g, "ll", EXEC_I32, 1, (int64_t[]){ N });
        uint32_t sl = exec_input(g, "sl", EXEC_I32, 1, (int64_t[]){ N });
        uint32_t outs[2];
        exec_op_add(g, EXEC_OP_CTCLoss, 4, (uint32_t[]){ x, lab, ll, sl }, 0, NULL, outs);
        plan(g);
        uint64_t s = 100 + (uint64_t)trial;
        float *X = exec_dataf(g, x);
        for (int i = 0; i < T * N * C; i++)
            X[i] = urand(&s, -2, 2);
        int32_t *LAB = exec_datai(g, lab), *LL = exec_datai(g, ll), *SL = exec_datai(g, sl);
        for (int b = 0; b < N; b++) {
            SL[b] = T - (b == 3); /* one shorter sequence */
            LL[b] = b % 3;        /* lengths 0, 1, 2 */
            for (int i = 0; i < Lmax; i++)
                LAB[b * Lmax + i] = (int32_t)(lcg(&s) % (uint64_t)(C - 1));
        }
        if (C > 2) { /* a repeated label: needs a blank between */
            LAB[2 * Lmax] = LAB[2 * Lmax + 1] = 1;
        }
        run(g, EXEC_PHASE_forward);
        double want = 0;
        float *G = exec_dataf(g, outs[1]);
        double maxg = 0;
        for (int b = 0; b < N; b++) {
            float xb[8 * 8];
            for (int t = 0; t < SL[b]; t++)
                for (int j = 0; j < C; j++)
                    xb[t * C + j] = X[(t * N + b) * C + j];
            int lb[3] = { LAB[b * Lmax], LAB[b * Lmax + 1], LAB[b * Lmax + 2] };
            double gb[64];
            want += ctc_brute(xb, SL[b], C, lb, LL[b], gb);
            for (int t = 0; t < T; t++)
                for (int j = 0; j < C; j++) {
                    double gw = t < SL[b] ? gb[t * C + j] / N : 0.0;
                    maxg = fmax(maxg, fabs(G[(t * N + b) * C + j] - gw));
                }
        }
        want /= N;
        float got = exec_dataf(g, outs[0])[0];
        printf("ctc T=%d C=%d: loss %.6f brute force %.6f, max |grad diff| %.2e\n", T, C, (double)got, want, maxg);
        assert_true(fabs(got - want) <= 1e-4 * fmax(1.0, fabs(want)));
        assert_true(maxg < 1e-5);
        exec_graph_destroy(g);
    }
}

/* labels [0,0] in 2 frames: no valid alignment -> +inf, zero gradient */
static void test_ctc_infeasible(void **state)
{
    (void)state;
    exec_graph *g = new_graph(1);
    uint32_t x = exec_input(g, "x", EXEC_F32, 3, (int64_t[]){ 2, 1, 3 });
    uint32_t lab = exec_input(g, "lab", EXEC_I32, 2, (int64_t[]){ 1, 2 });
    uint32_t ll = exec_input(g, "ll", EXEC_I32, 1, (int64_t[]){ 1 });
    uint32_t sl = exec_input(g, "sl", EXEC_I32, 1, (int64_t[]){ 1 });
    uint32_t outs[2];
    exec_op_add(g, EXEC_OP_CTCLoss, 4, (uint32_t[]){ x, lab, ll, sl }, 0, NULL, outs);
    plan(g);
    for (int i = 0; i < 6; i++)
        exec_dataf(g, x)[i] = 0.1f * (float)i;
    exec_datai(g, lab)[0] = exec_datai(g, lab)[1] = 0;
    exec_datai(g, ll)[0] = 2;
    exec_datai(g, sl)[0] = 2;
    run(g, EXEC_PHASE_forward);
    assert_true(isinf(exec_dataf(g, outs[0])[0]));
    for (int i = 0; i < 6; i++)
        assert_true(exec_dataf(g, outs[1])[i] == 0.0f);
    /* a label outside [0, blank) is an error, not a crash */
    exec_datai(g, lab)[0] = 2;
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_ERR_ARG);
    exec_graph_destroy(g);
}

static void test_ctc_greedy_decoder(void **state)
{
    (void)state;
    /* T 6, N 2, C 3 (blank 2): argmax paths a a _ b b a  and  _ a _ a b (len 5) */
    int path[2][6] = { { 0, 0, 2, 1, 1, 0 }, { 2, 0, 2, 0, 1, 1 } };
    exec_graph *g = new_graph(1);
    uint32_t x = exec_input(g, "x", EXEC_F32, 3, (int64_t[]){ 6, 2, 3 });
    uint32_t sl = exec_input(g, "sl", EXEC_I32, 1, (int64_t[]){ 2 });
    uint32_t d = ex_ctc_greedy_decoder(g, x, sl);
    plan(g);
    float *X = exec_dataf(g, x);
    for (int t = 0; t < 6; t++)
        for (int b = 0; b < 2; b++)
            for (int j = 0; j < 3; j++)
                X[(t * 2 + b) * 3 + j] = j == path[b][t] ? 1.0f : -0.5f * (float)j;
    exec_datai(g, sl)[0] = 6;
    exec_datai(g, sl)[1] = 5;
    run(g, EXEC_PHASE_forward);
    int32_t want[2][6] = { { 0, 1, 0, -1, -1, -1 }, { 0, 0, 1, -1, -1, -1 } };
    assert_memory_equal(exec_datai(g, d), want, sizeof want);
    exec_graph_destroy(g);
}

/* ---- sampled softmax ---------------------------------------------------- */
typedef struct ssm {
    exec_graph *g;
    uint32_t w, b, x, y, outs[4];
} ssm;

static void ssm_build(ssm *m, int V, int D, int N, int S, int64_t seed_attr, uint64_t fill_seed)
{
    m->g = new_graph(3);
    m->w = exec_input(m->g, "w", EXEC_F32, 2, (int64_t[]){ V, D });
    m->b = exec_input(m->g, "b", EXEC_F32, 1, (int64_t[]){ V });
    m->x = exec_input(m->g, "x", EXEC_F32, 2, (int64_t[]){ N, D });
    m->y = exec_input(m->g, "y", EXEC_I32, 1, (int64_t[]){ N });
    exec_op_add(m->g, EXEC_OP_SampledSoftmaxLoss, 4, (uint32_t[]){ m->w, m->b, m->x, m->y }, 2,
                (int64_t[]){ S, seed_attr }, m->outs);
    plan(m->g);
    uint64_t s = fill_seed;
    for (int i = 0; i < V * D; i++)
        exec_dataf(m->g, m->w)[i] = urand(&s, -1, 1);
    for (int i = 0; i < V; i++)
        exec_dataf(m->g, m->b)[i] = urand(&s, -0.5f, 0.5f);
    for (int i = 0; i < N * D; i++)
        exec_dataf(m->g, m->x)[i] = urand(&s, -1, 1);
    for (int i = 0; i < N; i++)
        exec_datai(m->g, m->y)[i] = (int32_t)(lcg(&s) % (uint64_t)V);
}

static double logit(const ssm *m, int D, int i, int c)
{
    const float *W = exec_dataf(m->g, m->w), *X = exec_dataf(m->g, m->x);
    double z = exec_dataf(m->g, m->b)[c];
    for (int d = 0; d < D; d++)
        z += (double)W[c * D + d] * X[i * D + d];
    return z;
}

static double logu_p(int c, int V) { return log((c + 2.0) / (c + 1.0)) / log(V + 1.0); }

static void test_sampled_softmax_full_vocab(void **state)
{
    (void)state;
    int V = 7, D = 4, N = 5;
    ssm m;
    ssm_build(&m, V, D, N, V, 0, 42);
    for (int rep = 0; rep < 3; rep++) {
        run(m.g, EXEC_PHASE_forward);
        const int32_t *ids = exec_datai(m.g, m.outs[1]);
        const float *Q = exec_dataf(m.g, m.outs[2]);
        double q[16] = { 0 };
        int seen[16] = { 0 };
        for (int j = 0; j < V; j++) {
            assert_true(ids[j] >= 0 && ids[j] < V);
            assert_false(seen[ids[j]]);
            seen[ids[j]] = 1;
            q[ids[j]] = Q[j];
        }
        /* the full softmax over corrected logits z_c - log Q(c) */
        double want = 0;
        for (int i = 0; i < N; i++) {
            int yi = exec_datai(m.g, m.y)[i];
            double zs[16], mx = -1e300, s = 0;
            for (int c = 0; c < V; c++) {
                zs[c] = logit(&m, D, i, c) - log(q[c]);
                mx = fmax(mx, zs[c]);
            }
            for (int c = 0; c < V; c++)
                s += exp(zs[c] - mx);
            want += log(s) + mx - zs[yi];
        }
        want /= N;
        float got = exec_dataf(m.g, m.outs[0])[0];
        printf("sampled softmax, S = V: loss %.6f, full softmax over corrected logits %.6f\n", (double)got, want);
        assert_true(fabs(got - want) < 1e-5 * fmax(1, fabs(want)));
    }
    exec_graph_destroy(m.g);
}

static void test_sampled_softmax_partial(void **state)
{
    (void)state;
    int V = 40, D = 6, N = 16, S = 8, hits = 0;
    ssm m;
    ssm_build(&m, V, D, N, S, 0, 7);
    uint32_t first[8];
    for (int rep = 0; rep < 20; rep++) {
        run(m.g, EXEC_PHASE_forward);
        const int32_t *ids = exec_datai(m.g, m.outs[1]);
        const float *Q = exec_dataf(m.g, m.outs[2]);
        if (rep == 0)
            memcpy(first, ids, sizeof first);
        /* the number of draws, from Q = 1 - (1 - p)^tries of any candidate */
        double tries = log1p(-(double)Q[0]) / log1p(-logu_p(ids[0], V));
        double rt = round(tries);
        assert_true(rt >= S && fabs(tries - rt) < 1e-2 * rt);
        for (int j = 1; j < S; j++)
            assert_true(fabs(Q[j] - -expm1(rt * log1p(-logu_p(ids[j], V)))) < 1e-5);
        double want = 0;
        for (int i = 0; i < N; i++) {
            int yi = exec_datai(m.g, m.y)[i];
            double z0 = logit(&m, D, i, yi) - log(-expm1(rt * log1p(-logu_p(yi, V))));
            double zs[9], mx = z0, s = 0;
            int keep[9];
            zs[0] = z0;
            keep[0] = 1;
            for (int j = 0; j < S; j++) {
                keep[j + 1] = ids[j] != yi;
                hits += !keep[j + 1];
                zs[j + 1] = logit(&m, D, i, ids[j]) - log(Q[j]);
                if (keep[j + 1])
                    mx = fmax(mx, zs[j + 1]);
            }
            for (int j = 0; j <= S; j++)
                s += keep[j] ? exp(zs[j] - mx) : 0;
            want += log(s) + mx - z0;
            /* the backprop row: (softmax - onehot0)/N, 0 at removed hits */
            const float *bp = exec_dataf(m.g, m.outs[3]) + i * (S + 1);
            for (int j = 0; j <= S; j++) {
                double bw = keep[j] ? exp(zs[j] - mx) / s / N - (j == 0 ? 1.0 / N : 0) : 0;
                assert_true(fabs(bp[j] - bw) < 1e-5);
            }
        }
        want /= N;
        assert_true(fabs(exec_dataf(m.g, m.outs[0])[0] - want) < 1e-5 * fmax(1, fabs(want)));
    }
    /* new draws every run */
    assert_memory_not_equal(first, exec_datai(m.g, m.outs[1]), sizeof first);
    printf("sampled softmax, S < V: 20 runs match the naive loss (%d accidental hits removed)\n", hits);
    assert_true(hits > 0);
    exec_graph_destroy(m.g);
}

/* with one candidate per draw, its frequency is P(c) = log((c+2)/(c+1)) / log(V+1) */
static void test_sampled_softmax_sampler(void **state)
{
    (void)state;
    int V = 10, runs = 20000;
    ssm m;
    ssm_build(&m, V, 2, 1, 1, 0, 1);
    int count[10] = { 0 };
    for (int r = 0; r < runs; r++) {
        run(m.g, EXEC_PHASE_forward);
        count[exec_datai(m.g, m.outs[1])[0]]++;
    }
    double worst = 0;
    for (int c = 0; c < V; c++) {
        double p = logu_p(c, V), f = (double)count[c] / runs, sd = sqrt(p * (1 - p) / runs);
        worst = fmax(worst, fabs(f - p) / sd);
        assert_true(fabs(f - p) < 5 * sd);
    }
    printf("log-uniform sampler: %d draws, worst class off by %.2f sigma\n", runs, worst);
    exec_graph_destroy(m.g);
}

/* ---- dense softmax, sigmoid, Huber vs naive ---------------------------- */
static void test_softmax_xent_dense(void **state)
{
    (void)state;
    int N = 4, C = 6;
    exec_graph *g = new_graph(1);
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ N, C });
    uint32_t z = exec_input(g, "z", EXEC_F32, 2, (int64_t[]){ N, C });
    uint32_t outs[2];
    exec_op_add(g, EXEC_OP_SoftmaxCrossEntropyWithLogits, 2, (uint32_t[]){ x, z }, 0, NULL, outs);
    plan(g);
    uint64_t s = 5;
    float *X = exec_dataf(g, x), *Z = exec_dataf(g, z);
    for (int i = 0; i < N; i++) {
        float sum = 0;
        for (int j = 0; j < C; j++)
            sum += Z[i * C + j] = urand(&s, 0, 1);
        for (int j = 0; j < C; j++) {
            Z[i * C + j] /= sum;
            X[i * C + j] = urand(&s, -30, 30); /* large logits: stability */
        }
    }
    run(g, EXEC_PHASE_forward);
    double want = 0;
    for (int i = 0; i < N; i++) {
        double mx = -1e300, se = 0;
        for (int j = 0; j < C; j++)
            mx = fmax(mx, X[i * C + j]);
        for (int j = 0; j < C; j++)
            se += exp(X[i * C + j] - mx);
        for (int j = 0; j < C; j++) {
            double lsm = X[i * C + j] - mx - log(se);
            want -= Z[i * C + j] * lsm;
            double bp = (exp(lsm) - Z[i * C + j]) / N;
            assert_true(fabs(exec_dataf(g, outs[1])[i * C + j] - bp) < 1e-6);
        }
    }
    want /= N;
    assert_true(fabs(exec_dataf(g, outs[0])[0] - want) < 1e-5 * fmax(1, fabs(want)));
    exec_graph_destroy(g);
}

static void test_sigmoid_xent(void **state)
{
    (void)state;
    int N = 3, F = 5;
    exec_graph *g = new_graph(1);
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ N, F });
    uint32_t z = exec_input(g, "z", EXEC_F32, 2, (int64_t[]){ N, F });
    uint32_t outs[2];
    exec_op_add(g, EXEC_OP_SigmoidCrossEntropyWithLogits, 2, (uint32_t[]){ x, z }, 0, NULL, outs);
    plan(g);
    uint64_t s = 9;
    float *X = exec_dataf(g, x), *Z = exec_dataf(g, z);
    for (int i = 0; i < N * F; i++) {
        X[i] = urand(&s, -8, 8);
        Z[i] = urand(&s, 0, 1);
    }
    X[0] = 80.0f; /* exp overflows in the naive float form */
    X[1] = -80.0f;
    run(g, EXEC_PHASE_forward);
    double want = 0;
    for (int i = 0; i < N * F; i++) {
        double xd = X[i], sig = 1 / (1 + exp(-xd));
        double l = -(Z[i] * log(sig) + (1 - Z[i]) * log1p(-sig));
        if (!isfinite(l)) /* |x| = 80: sigmoid rounds to 0/1 in double too */
            l = xd > 0 ? xd * (1 - Z[i]) : -xd * Z[i];
        want += l;
        assert_true(fabs(exec_dataf(g, outs[1])[i] - (sig - Z[i]) / N) < 1e-6);
    }
    want /= N;
    float got = exec_dataf(g, outs[0])[0];
    printf("sigmoid xent: %.6f naive %.6f\n", (double)got, want);
    assert_true(fabs(got - want) < 1e-5 * fmax(1, fabs(want)));
    exec_graph_destroy(g);
}

static void test_huber(void **state)
{
    (void)state;
    int n = 11;
    float delta = 0.7f;
    exec_graph *g = new_graph(1);
    uint32_t p = exec_weight(g, "p", 1, (int64_t[]){ n }, EXEC_INIT_ZERO);
    uint32_t t = exec_input(g, "t", EXEC_F32, 1, (int64_t[]){ n });
    uint32_t l = ex_huber_loss(g, p, t, delta);
    exec_gradients(g, l);
    plan(g);
    uint64_t s = 3;
    for (int i = 0; i < n; i++) {
        exec_dataf(g, p)[i] = urand(&s, -2, 2);
        exec_dataf(g, t)[i] = urand(&s, -2, 2);
    }
    run(g, EXEC_PHASE_backward);
    double want = 0;
    int small = 0;
    for (int i = 0; i < n; i++) {
        double d = (double)exec_dataf(g, p)[i] - exec_dataf(g, t)[i];
        small += fabs(d) <= delta;
        want += fabs(d) <= delta ? 0.5 * d * d : delta * (fabs(d) - 0.5 * delta);
        double gw = (fabs(d) <= delta ? d : (d > 0 ? delta : -delta)) / n;
        assert_true(fabs(exec_dataf(g, exec_grad_of(g, p))[i] - gw) < 1e-6);
    }
    want /= n;
    assert_true(small > 0 && small < n); /* both branches exercised */
    assert_true(fabs(exec_dataf(g, l)[0] - want) < 1e-6);
    exec_graph_destroy(g);
}

/* ---- optimizers: steps vs TF's rules (in double) ----------------------- */
enum { OPT_MOMENTUM, OPT_ADAM, OPT_RMSPROP };

static void check_optimizer(int kind)
{
    int n = 9, steps = 4;
    exec_graph *g = new_graph(1);
    uint32_t w = exec_weight(g, "w", 1, (int64_t[]){ n }, EXEC_INIT_ZERO);
    uint32_t x = exec_input(g, "x", EXEC_F32, 1, (int64_t[]){ n });
    /* loss = sum(w * w * x): dw = 2 w x, so gradients change per step */
    uint32_t loss = ex_sum(g, ex_mul(g, ex_mul(g, w, w), x), 0, NULL, 0);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    double lr = 0.05, mu = 0.9, b1 = 0.9, b2 = 0.999, eps = 1e-7, decay = 0.9, reps = 1e-3;
    if (kind == OPT_MOMENTUM)
        exec_optimizer_momentum(g, (float)lr, (float)mu);
    else if (kind == OPT_ADAM)
        exec_optimizer_adam(g, (float)lr, (float)b1, (float)b2, (float)eps);
    else
        exec_optimizer_rmsprop(g, (float)lr, (float)decay, (float)mu, (float)reps);
    plan(g);
    double W[9], A[9] = { 0 }, M[9] = { 0 }, Vv[9] = { 0 }, MS[9], MOM[9] = { 0 }, X[9];
    double b1p = b1, b2p = b2; /* TF's beta powers start at beta */
    uint64_t s = 77;
    for (int i = 0; i < n; i++) {
        W[i] = exec_dataf(g, w)[i] = urand(&s, -1, 1);
        X[i] = exec_dataf(g, x)[i] = urand(&s, 0.5f, 2.0f);
        MS[i] = 1.0; /* TF 1.x RMSProp */
    }
    for (int step = 0; step < steps; step++) {
        run(g, EXEC_PHASE_update);
        double lr_t = lr * sqrt(1 - b2p) / (1 - b1p);
        for (int i = 0; i < n; i++) {
            double gr = 2 * W[i] * X[i];
            if (kind == OPT_MOMENTUM) {
                A[i] = mu * A[i] + gr;
                W[i] -= lr * A[i];
            } else if (kind == OPT_ADAM) {
                M[i] = b1 * M[i] + (1 - b1) * gr;
                Vv[i] = b2 * Vv[i] + (1 - b2) * gr * gr;
                W[i] -= lr_t * M[i] / (sqrt(Vv[i]) + eps);
            } else {
                MS[i] = decay * MS[i] + (1 - decay) * gr * gr;
                MOM[i] = mu * MOM[i] + lr * gr / sqrt(MS[i] + reps);
                W[i] -= MOM[i];
            }
        }
        b1p *= b1;
        b2p *= b2;
        double maxd = 0;
        for (int i = 0; i < n; i++)
            maxd = fmax(maxd, fabs(exec_dataf(g, w)[i] - W[i]));
        if (maxd > 2e-5)
            fail_msg("optimizer %d step %d: max |w - naive| %.3g", kind, step, maxd);
    }
    exec_graph_destroy(g);
}

static void test_optimizer_momentum(void **state)
{
    (void)state;
    check_optimizer(OPT_MOMENTUM);
}
static void test_optimizer_adam(void **state)
{
    (void)state;
    check_optimizer(OPT_ADAM);
}
static void test_optimizer_rmsprop(void **state)
{
    (void)state;
    check_optimizer(OPT_RMSPROP);
}

/* ---- clipping ----------------------------------------------------------- */
static void check_clip(int global, float clip, float xscale)
{
    exec_graph *g = new_graph(1);
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ 3, 4 }, EXEC_INIT_ZERO);
    uint32_t w2 = exec_weight(g, "w2", 1, (int64_t[]){ 5 }, EXEC_INIT_ZERO);
    uint32_t x1 = exec_input(g, "x1", EXEC_F32, 2, (int64_t[]){ 3, 4 });
    uint32_t x2 = exec_input(g, "x2", EXEC_F32, 1, (int64_t[]){ 5 });
    /* gradients are x1 and x2 */
    uint32_t loss = ex_addn(
        g, 2, (uint32_t[]){ ex_sum(g, ex_mul(g, w1, x1), 0, NULL, 0), ex_sum(g, ex_mul(g, w2, x2), 0, NULL, 0) });
    exec_gradients(g, loss);
    uint32_t raw1 = exec_grad_of(g, w1), raw2 = exec_grad_of(g, w2);
    assert_int_equal(global ? exec_clip_global_norm(g, clip) : exec_clip_by_norm(g, clip), EXEC_OK);
    assert_true(exec_grad_of(g, w1) != raw1 && exec_grad_of(g, w2) != raw2);
    exec_optimizer_sgd(g, 1.0f);
    plan(g);
    uint64_t s = 11;
    double n1 = 0, n2 = 0;
    for (int i = 0; i < 12; i++) {
        float v = urand(&s, -1, 1) * xscale;
        exec_dataf(g, x1)[i] = v;
        n1 += (double)v * v;
    }
    for (int i = 0; i < 5; i++) {
        float v = urand(&s, -1, 1) * xscale;
        exec_dataf(g, x2)[i] = v;
        n2 += (double)v * v;
    }
    run(g, EXEC_PHASE_update);
    double gn = sqrt(n1 + n2);
    double f1 = global ? clip / fmax(gn, clip) : clip / fmax(sqrt(n1), clip);
    double f2 = global ? f1 : clip / fmax(sqrt(n2), clip);
    for (int i = 0; i < 12; i++) {
        double want = exec_dataf(g, x1)[i] * f1;
        assert_true(fabs(exec_dataf(g, exec_grad_of(g, w1))[i] - want) < 1e-6);
        assert_true(fabs(exec_dataf(g, w1)[i] + want) < 1e-6); /* sgd lr 1 from 0 */
    }
    for (int i = 0; i < 5; i++)
        assert_true(fabs(exec_dataf(g, exec_grad_of(g, w2))[i] - exec_dataf(g, x2)[i] * f2) < 1e-6);
    exec_graph_destroy(g);
}

static void test_clip(void **state)
{
    (void)state;
    check_clip(1, 1.0f, 3.0f);  /* clipped */
    check_clip(1, 50.0f, 1.0f); /* below the threshold: unchanged */
    check_clip(0, 1.0f, 3.0f);
    check_clip(0, 1.5f, 0.5f); /* w1 clipped, w2 not (norms ~1.0 and ~0.6) */
}

/* ---- random ops --------------------------------------------------------- */
#define NR 200001 /* odd: the last normal of a pair; several chunks */

static void draw(uint64_t seed, int threads, int inter, int runs, float *out_normal, float *out_uniform)
{
    exec_threads_set(threads);
    exec_graph *g = new_graph(seed);
    uint32_t a = ex_random_normal(g, 2, (int64_t[]){ 1, NR }, 2.0f, 3.0f);
    uint32_t b = ex_random_uniform(g, 1, (int64_t[]){ NR }, -1.0f, 5.0f);
    plan(g);
    for (int r = 0; r < runs; r++) {
        exec_run_opts o = { .max_phase = EXEC_PHASE_forward, .inter = inter };
        assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    }
    memcpy(out_normal, exec_dataf(g, a), NR * sizeof(float));
    memcpy(out_uniform, exec_dataf(g, b), NR * sizeof(float));
    exec_graph_destroy(g);
    exec_threads_set(0);
}

static void test_random_ops(void **state)
{
    (void)state;
    static float n1[NR], u1[NR], n2[NR], u2[NR];
    draw(5, 1, 1, 1, n1, u1);
    double m = 0, v = 0, um = 0, uv = 0, umin = 1e9, umax = -1e9;
    for (int i = 0; i < NR; i++) {
        m += n1[i];
        um += u1[i];
        umin = fmin(umin, u1[i]);
        umax = fmax(umax, u1[i]);
    }
    m /= NR;
    um /= NR;
    for (int i = 0; i < NR; i++) {
        v += (n1[i] - m) * (n1[i] - m);
        uv += (u1[i] - um) * (u1[i] - um);
    }
    double sd = sqrt(v / (NR - 1)), usd = sqrt(uv / (NR - 1));
    printf("normal(2, 3): mean %.4f sd %.4f; uniform[-1,5): mean %.4f sd %.4f (want 2, %.4f) range [%.4f, %.4f]\n", m,
           sd, um, usd, sqrt(36.0 / 12), umin, umax);
    assert_true(fabs(m - 2.0) < 5 * 3.0 / sqrt(NR));
    assert_true(fabs(sd - 3.0) < 0.02 * 3.0);
    assert_true(fabs(um - 2.0) < 5 * sqrt(3.0) / sqrt(NR));
    assert_true(fabs(usd - sqrt(3.0)) < 0.01 * sqrt(3.0));
    assert_true(umin >= -1.0 && umax < 5.0);
    /* the same seed and run: the same draws, for any thread count, and
     * with two inter-op workers (the ops have no inputs) */
    draw(5, 2, 1, 1, n2, u2);
    assert_memory_equal(n1, n2, sizeof n1);
    assert_memory_equal(u1, u2, sizeof u1);
    draw(5, 2, 2, 1, n2, u2);
    assert_memory_equal(n1, n2, sizeof n1);
    assert_memory_equal(u1, u2, sizeof u1);
    /* the next run draws anew */
    draw(5, 1, 1, 2, n2, u2);
    assert_memory_not_equal(n1, n2, sizeof n1);
    assert_memory_not_equal(u1, u2, sizeof u1);
    /* another seed draws anew */
    draw(6, 1, 1, 1, n2, u2);
    assert_memory_not_equal(n1, n2, sizeof n1);
}

static void test_dropout(void **state)
{
    (void)state;
    int n = 100003;
    float rate = 0.3f;
    exec_graph *g = new_graph(8);
    uint32_t x = exec_weight(g, "x", 1, (int64_t[]){ n }, EXEC_INIT_ONE);
    uint32_t outs[2];
    exec_op_add(g, EXEC_OP_Dropout, 1, &x, 2, (int64_t[]){ exec_attr_f(rate), 0 }, outs);
    uint32_t loss = ex_sum(g, outs[0], 0, NULL, 0);
    exec_gradients(g, loss);
    uint32_t yb = ex_dropout(g, x, rate); /* the builder: y only */
    plan(g);
    static float first[100003];
    for (int r = 0; r < 2; r++) {
        run(g, EXEC_PHASE_backward);
        const float *Y = exec_dataf(g, outs[0]), *M = exec_dataf(g, outs[1]), *D = exec_dataf(g, exec_grad_of(g, x));
        int64_t zeros = 0;
        double sum = 0;
        for (int i = 0; i < n; i++) {
            zeros += Y[i] == 0.0f;
            sum += Y[i];
            assert_true(Y[i] == 0.0f || fabsf(Y[i] - 1.0f / (1.0f - rate)) < 1e-6f);
            assert_true(M[i] == Y[i] && D[i] == M[i]); /* x = 1: y = mask = dy/dx */
        }
        double drop = (double)zeros / n, sd = sqrt(rate * (1 - rate) / n);
        printf("dropout run %d: dropped %.4f (rate %.2f), mean %.4f\n", r, drop, (double)rate, sum / n);
        assert_true(fabs(drop - rate) < 5 * sd);
        assert_true(fabs(sum / n - 1.0) < 0.02);
        if (r == 0)
            memcpy(first, M, sizeof first);
        else
            assert_memory_not_equal(first, M, sizeof first); /* a new mask every run */
    }
    /* the builder's node draws its own mask */
    assert_memory_not_equal(exec_dataf(g, yb), exec_dataf(g, outs[0]), (size_t)n * sizeof(float));
    exec_graph_destroy(g);
}

/* ---- training: an MLP learns a synthetic task -------------------------- */
/* 10 inputs in [-1,1]; class = argmax of a fixed random linear map (4 classes) */
enum { TR_ADAM, TR_RMSPROP, TR_MOMENTUM };

static void train(int kind, double *first, double *last)
{
    int B = 64, In = 10, H = 32, K = 4, steps = 300;
    exec_graph *g = new_graph(21);
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ B, In });
    uint32_t y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ In, H }, EXEC_INIT_GLOROT);
    uint32_t b1 = exec_weight(g, "b1", 1, (int64_t[]){ H }, EXEC_INIT_ZERO);
    uint32_t w2 = exec_weight(g, "w2", 2, (int64_t[]){ H, K }, EXEC_INIT_GLOROT);
    uint32_t b2 = exec_weight(g, "b2", 1, (int64_t[]){ K }, EXEC_INIT_ZERO);
    uint32_t h = ex_relu(g, ex_bias_add(g, ex_matmul(g, x, w1, 0, 0), b1, 1));
    uint32_t loss = ex_sparse_softmax_xent(g, ex_bias_add(g, ex_matmul(g, h, w2, 0, 0), b2, 1), y);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    if (kind == TR_ADAM) {
        exec_optimizer_adam(g, 0.01f, 0.9f, 0.999f, 1e-8f);
    } else if (kind == TR_RMSPROP) {
        exec_optimizer_rmsprop(g, 0.005f, 0.9f, 0.0f, 1e-10f);
    } else {
        exec_clip_global_norm(g, 1.0f);
        exec_optimizer_momentum(g, 0.05f, 0.9f);
    }
    plan(g);
    float T[10][4];
    uint64_t s = 1234;
    for (int i = 0; i < In; i++)
        for (int k = 0; k < K; k++)
            T[i][k] = urand(&s, -1, 1);
    *first = *last = 0;
    for (int step = 0; step < steps; step++) {
        float *X = exec_dataf(g, x);
        int32_t *Y = exec_datai(g, y);
        for (int b = 0; b < B; b++) {
            float sc[4] = { 0 };
            for (int i = 0; i < In; i++) {
                X[b * In + i] = urand(&s, -1, 1);
                for (int k = 0; k < K; k++)
                    sc[k] += X[b * In + i] * T[i][k];
            }
            int best = 0;
            for (int k = 1; k < K; k++)
                best = sc[k] > sc[best] ? k : best;
            Y[b] = best;
        }
        exec_run_opts o = { .max_phase = EXEC_PHASE_update, .inter = step % 2 ? 2 : 1 };
        assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
        double l = exec_dataf(g, loss)[0];
        assert_true(isfinite(l));
        if (step < 20)
            *first += l / 20;
        if (step >= steps - 20)
            *last += l / 20;
    }
    exec_graph_destroy(g);
}

static void test_train_mlp(void **state)
{
    (void)state;
    static const char *names[] = { "adam", "rmsprop", "momentum+clip" };
    for (int kind = 0; kind < 3; kind++) {
        double first, last;
        train(kind, &first, &last);
        printf("mlp with %-14s loss %.4f (first 20 steps) -> %.4f (last 20)\n", names[kind], first, last);
        assert_true(last < 0.5 * first);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ctc_vs_bruteforce),
        cmocka_unit_test(test_ctc_infeasible),
        cmocka_unit_test(test_ctc_greedy_decoder),
        cmocka_unit_test(test_sampled_softmax_full_vocab),
        cmocka_unit_test(test_sampled_softmax_partial),
        cmocka_unit_test(test_sampled_softmax_sampler),
        cmocka_unit_test(test_softmax_xent_dense),
        cmocka_unit_test(test_sigmoid_xent),
        cmocka_unit_test(test_huber),
        cmocka_unit_test(test_optimizer_momentum),
        cmocka_unit_test(test_optimizer_adam),
        cmocka_unit_test(test_optimizer_rmsprop),
        cmocka_unit_test(test_clip),
        cmocka_unit_test(test_random_ops),
        cmocka_unit_test(test_dropout),
        cmocka_unit_test(test_train_mlp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
