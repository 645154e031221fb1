/* test_graph.c -- graphs end to end: an MLP built with the builders, its
 * backward graph from autodiff, SGD updates; the loss must fall, and the
 * inter-op scheduler must give the very same numbers as the sequential loop.
 * Also: phases, dependency-respecting order, allocation failure, thread
 * binding read back from the threads' affinity. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <fenv.h>
#include <math.h>
#include <omp.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/clock.h"
#include "exec/build.h"
#include "exec/exec.h"
#include "fixtures/tasks.h"

enum { B = 32, D = 12, H = 24, C = 3 };

typedef struct mlp {
    exec_graph *g;
    uint32_t x, y, loss;
} mlp;

static exec_status mlp_build(mlp *m, int plan)
{
    memset(m, 0, sizeof *m);
    exec_status s = exec_graph_create(&m->g, 42);
    if (s)
        return s;
    exec_graph *g = m->g;
    m->x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ B, D });
    m->y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ D, H }, EXEC_INIT_GLOROT);
    uint32_t b1 = exec_weight(g, "b1", 1, (int64_t[]){ H }, EXEC_INIT_ZERO);
    uint32_t w2 = exec_weight(g, "w2", 2, (int64_t[]){ H, H }, EXEC_INIT_GLOROT);
    uint32_t b2 = exec_weight(g, "b2", 1, (int64_t[]){ H }, EXEC_INIT_ZERO);
    uint32_t w3 = exec_weight(g, "w3", 2, (int64_t[]){ H, C }, EXEC_INIT_GLOROT);
    /* two branches off h1 give the inter-op scheduler real parallel work */
    uint32_t h1 = ex_relu(g, ex_bias_add(g, ex_matmul(g, m->x, w1, 0, 0), b1, 1));
    uint32_t h2a = ex_relu(g, ex_bias_add(g, ex_matmul(g, h1, w2, 0, 0), b2, 1));
    uint32_t h2b = ex_relu(g, ex_matmul(g, h1, w2, 0, 0));
    uint32_t h2 = ex_add(g, h2a, h2b);
    m->loss = ex_sparse_softmax_xent(g, ex_matmul(g, h2, w3, 0, 0), m->y);
    exec_gradients(g, m->loss);
    exec_optimizer_sgd(g, 0.1f);
    if ((s = exec_graph_status(g)))
        return s;
    return plan ? exec_graph_plan(g) : EXEC_OK;
}

/* A learnable task: the class is the argmax of three fixed projections. */
static void fill_batch(mlp *m, int step)
{
    float *x = exec_dataf(m->g, m->x);
    int32_t *y = exec_datai(m->g, m->y);
    uint32_t s = 1234u + (uint32_t)step * 7919u;
    for (int i = 0; i < B; i++) {
        float best = -1e9f;
        for (int d = 0; d < D; d++) {
            s = s * 1664525u + 1013904223u;
            x[i * D + d] = (float)(s >> 8) / 16777216.0f * 2.0f - 1.0f;
        }
        for (int c = 0; c < C; c++) {
            float v = 0;
            for (int d = 0; d < D; d++)
                v += x[i * D + d] * (float)(((c + 1) * (d + 3)) % 5 - 2);
            if (v > best) {
                best = v;
                y[i] = c;
            }
        }
    }
}

static void train(int inter, float *losses, int steps)
{
    mlp m;
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    exec_run_opts o = { .inter = inter, .max_phase = EXEC_PHASE_update };
    for (int s = 0; s < steps; s++) {
        fill_batch(&m, s);
        assert_int_equal(exec_graph_run(m.g, &o), EXEC_OK);
        losses[s] = exec_dataf(m.g, m.loss)[0];
    }
    exec_graph_destroy(m.g);
}

static void test_mlp_learns(void **state)
{
    (void)state;
    enum { STEPS = 200 };
    float l[STEPS];
    train(1, l, STEPS);
    float first = 0, last = 0;
    for (int i = 0; i < 10; i++) {
        first += l[i] / 10;
        last += l[STEPS - 10 + i] / 10;
    }
    printf("mlp: mean loss of the first 10 steps %.4f, of the last 10 %.4f\n", first, last);
    assert_true(last < 0.5f * first);
}

/* A small CNN: conv, max-pool, conv (stride 2, padding), global average
 * pool, FC; trained on images whose class sets a bright quadrant. */
typedef struct cnn {
    exec_graph *g;
    uint32_t x, y, loss;
} cnn;
enum { CB = 16, CH = 12, CC = 4 };

static void cnn_build(cnn *m)
{
    assert_int_equal(exec_graph_create(&m->g, 5), EXEC_OK);
    exec_graph *g = m->g;
    m->x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ CB, 1, CH, CH });
    m->y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ CB });
    uint32_t k1 = exec_weight(g, "k1", 4, (int64_t[]){ 8, 1, 3, 3 }, EXEC_INIT_HE);
    uint32_t c1 = exec_weight(g, "c1", 1, (int64_t[]){ 8 }, EXEC_INIT_ZERO);
    uint32_t k2 = exec_weight(g, "k2", 4, (int64_t[]){ 16, 8, 3, 3 }, EXEC_INIT_HE);
    uint32_t w = exec_weight(g, "w", 2, (int64_t[]){ 16, CC }, EXEC_INIT_GLOROT);
    uint32_t h = ex_relu(g, ex_bias_add(g, ex_conv2d(g, m->x, k1, 1, 1, 1, 1), c1, 1));
    h = ex_max_pool(g, h, 2, 2, 2, 2, 0, 0);
    h = ex_relu(g, ex_conv2d(g, h, k2, 2, 2, 1, 1));
    h = ex_reshape(g, ex_global_avg_pool(g, h), 2, (int64_t[]){ CB, 16 });
    m->loss = ex_sparse_softmax_xent(g, ex_matmul(g, h, w, 0, 0), m->y);
    exec_gradients(g, m->loss);
    exec_optimizer_sgd(g, 0.2f);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
}

static void cnn_fill(cnn *m, int step)
{
    float *x = exec_dataf(m->g, m->x);
    int32_t *y = exec_datai(m->g, m->y);
    uint32_t s = 99u + (uint32_t)step * 131u;
    for (int i = 0; i < CB; i++) {
        s = s * 1664525u + 1013904223u;
        int c = (int)(s >> 24) % CC;
        y[i] = c;
        for (int r = 0; r < CH; r++)
            for (int q = 0; q < CH; q++) {
                s = s * 1664525u + 1013904223u;
                int quad = (r >= CH / 2) * 2 + (q >= CH / 2);
                x[(i * CH + r) * CH + q] = (quad == c ? 1.0f : 0.0f) + 0.3f * ((float)(s >> 8) / 16777216.0f - 0.5f);
            }
    }
}

static void cnn_train(int inter, float *losses, int steps)
{
    cnn m;
    cnn_build(&m);
    exec_run_opts o = { .inter = inter, .max_phase = EXEC_PHASE_update };
    for (int s = 0; s < steps; s++) {
        cnn_fill(&m, s);
        assert_int_equal(exec_graph_run(m.g, &o), EXEC_OK);
        losses[s] = exec_dataf(m.g, m.loss)[0];
    }
    exec_graph_destroy(m.g);
}

static void test_cnn_learns(void **state)
{
    (void)state;
    enum { STEPS = 60 };
    float a[STEPS], b[STEPS];
    /* one convolution algorithm for both runs: `auto` measures per shape
     * and thread count, and the algorithms round differently (im2col's and
     * Winograd's filter gradients also sum per-thread partials); the
     * direct kernels give the same sums on any number of threads */
    exec_conv_algo_set(EXEC_CONV_DIRECT);
    exec_threads_set(1);
    cnn_train(1, a, STEPS);
    exec_threads_set(2);
    cnn_train(2, b, STEPS);
    exec_threads_set(1);
    exec_conv_algo_set(EXEC_CONV_AUTO);
    float first = 0, last = 0;
    double maxdiff = 0;
    for (int i = 0; i < 5; i++) {
        first += a[i] / 5;
        last += a[STEPS - 5 + i] / 5;
    }
    for (int i = 0; i < STEPS; i++)
        maxdiff = fmax(maxdiff, fabs((double)a[i] - b[i]));
    printf("cnn: mean loss of the first 5 steps %.4f, of the last 5 %.4f; inter 2 max diff %.3g\n", first, last,
           maxdiff);
    assert_true(last < 0.5f * first);
    assert_true(maxdiff == 0.0);
}

static void test_inter_same_result(void **state)
{
    (void)state;
    enum { STEPS = 20 };
    float a[STEPS], b[STEPS], c[STEPS];
    exec_threads_set(1);
    train(1, a, STEPS);
    exec_threads_set(2);
    train(2, b, STEPS); /* two workers, one intra-op thread each: idle workers spin (2 CPUs or more) */
    exec_threads_set(8);
    train(8, c, STEPS); /* more workers than CPUs (on fewer than 8): idle workers sleep at once */
    exec_threads_set(1);
    exec_workers_release();
    double maxdiff = 0, maxdiff8 = 0;
    for (int i = 0; i < STEPS; i++) {
        maxdiff = fmax(maxdiff, fabs((double)a[i] - b[i]));
        maxdiff8 = fmax(maxdiff8, fabs((double)a[i] - c[i]));
    }
    printf("inter 1 vs inter 2: max loss diff %.3g; vs inter 8: %.3g\n", maxdiff, maxdiff8);
    assert_true(maxdiff == 0.0);
    assert_true(maxdiff8 == 0.0);
}

/* Phases: forward nodes first, then backward, then update; ops count. */
static void test_phases(void **state)
{
    (void)state;
    mlp m;
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    int counts[EXEC_PHASE_COUNT] = { 0 };
    exec_phase prev = EXEC_PHASE_forward;
    for (uint32_t i = 0; i < exec_node_count(m.g); i++) {
        const exec_node *n = exec_node_get(m.g, i);
        assert_true(n->phase >= prev);
        prev = n->phase;
        counts[n->phase]++;
    }
    assert_true(counts[0] > 0 && counts[1] > 0);
    assert_int_equal(counts[2], 5); /* one update per weight */
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    fill_batch(&m, 0);
    assert_int_equal(exec_graph_run(m.g, &o), EXEC_OK);
    assert_int_equal(exec_graph_ops_run(m.g), (uint64_t)counts[0]);
    exec_graph_destroy(m.g);
}

/* The inter-op workers are this thread (worker 0) and one pool for the
 * process, the same threads from run to run: over five runs at inter 2 the
 * ops run on at most two distinct threads (a pool started per run would
 * show up to six), this one among them; a run at inter 1 (this thread) and
 * one more at inter 2 add none; five at inter 3 add at most the two of a
 * new pool (this thread may take every op of a small graph before they
 * wake). */
#define MAX_SEEN 64
static _Atomic long seen_tid[MAX_SEEN];
static _Atomic int nseen;
static void note_thread(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *begins,
                        const uint64_t *ends)
{
    (void)ctx;
    (void)g, (void)n, (void)nodes, (void)begins, (void)ends;
    long tid = (long)syscall(SYS_gettid);
    int k = atomic_load(&nseen);
    for (int i = 0; i < k; i++)
        if (atomic_load(&seen_tid[i]) == tid)
            return;
    int slot = atomic_fetch_add(&nseen, 1);
    if (slot < MAX_SEEN)
        atomic_store(&seen_tid[slot], tid);
}
static int distinct_threads(void)
{
    int k = atomic_load(&nseen) < MAX_SEEN ? atomic_load(&nseen) : MAX_SEEN, d = 0;
    for (int i = 0; i < k; i++) {
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = seen_tid[j] == seen_tid[i];
        d += !dup;
    }
    return d;
}

static void test_inter_workers_persist(void **state)
{
    (void)state;
    mlp m;
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    exec_hooks h = { .ops = note_thread };
    exec_hooks_set(&h);
    exec_run_opts two = { .inter = 2, .max_phase = EXEC_PHASE_update }, one = two, three = two;
    one.inter = 1, three.inter = 3;
    long main_tid = (long)syscall(SYS_gettid);
    for (int r = 0; r < 5; r++)
        assert_int_equal(exec_graph_run(m.g, &two), EXEC_OK);
    int after_five = distinct_threads();
    assert_int_equal(exec_graph_run(m.g, &one), EXEC_OK); /* the sequential loop: this thread */
    assert_int_equal(exec_graph_run(m.g, &two), EXEC_OK);
    int after_more = distinct_threads();
    for (int r = 0; r < 5; r++)
        assert_int_equal(exec_graph_run(m.g, &three), EXEC_OK);
    int after_three = distinct_threads();
    exec_hooks_set(NULL);
    exec_graph_destroy(m.g);
    printf("ops ran on %d threads over 5 runs at inter 2, %d after 2 more runs, %d after 5 at inter 3\n", after_five,
           after_more, after_three);
    assert_true(after_five >= 1 && after_five <= 2);
    int main_seen = 0;
    for (int i = 0; i < after_more; i++)
        main_seen |= seen_tid[i] == main_tid;
    assert_true(main_seen);
    assert_true(after_more >= after_five && after_more <= 2);
    assert_true(after_three >= after_more && after_three <= after_more + 2);
}

/* The process's threads (polled for a second while above `most`: threads
 * told to exit take a moment to go). */
static int process_threads(int most)
{
    int n = 0;
    for (int tries = 0; tries < 100; tries++) {
        n = each_task(NULL, NULL);
        assert_true(n > 0);
        if (n <= most)
            break;
        usleep(10000);
    }
    return n;
}

/* No OpenMP team waits idle beside an inter-op run (libgomp stops spinning
 * between regions once its threads outnumber the CPUs, and every region
 * then pays their wake-ups): after this thread's team of 4, a run of 4
 * threads on 2 workers (close binding: each worker opens a region of its 2
 * at the start) holds 4 threads in all, its own; a caller that waited
 * beside a pool of 2 workers held 4 more. exec_workers_release() ends the
 * pool's thread and its team. */
static void test_no_idle_team(void **state)
{
    (void)state;
    if (exec_bind_unavailable(EXEC_BIND_CLOSE)) {
        printf("binding not available here: %s\n", exec_bind_unavailable(EXEC_BIND_CLOSE));
        skip();
    }
    exec_workers_release();
    int member[4] = { 0 };
#pragma omp parallel num_threads(4)
    member[omp_get_thread_num() & 3] = 1;
    assert_int_equal(member[0] + member[1] + member[2] + member[3], 4);
    int team4 = process_threads(1 << 20);
    mlp m;
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    exec_settings four = { .threads = 4, .bind = EXEC_BIND_CLOSE };
    exec_run_opts o = { .inter = 2, .max_phase = EXEC_PHASE_update, .settings = &four };
    assert_int_equal(exec_graph_run(m.g, &o), EXEC_OK);
    int during = process_threads(team4);
    exec_workers_release();
    int released = process_threads(team4 - 2);
    four.bind = EXEC_BIND_NONE; /* unbinds this thread's team again */
    o.inter = 1;
    assert_int_equal(exec_graph_run(m.g, &o), EXEC_OK);
    exec_graph_destroy(m.g);
    printf("threads: %d with this thread's team of 4, %d after a run of 4 on 2 workers, %d once released\n", team4,
           during, released);
    assert_true(during <= team4);
    assert_true(released <= team4 - 2);
}

/* A plan larger than the process's memory limit (a cgroup's; here given)
 * is an error before any arena is allocated: inside the cgroup the
 * allocation would succeed and touching it get the process killed. */
static void test_plan_over_memory_limit(void **state)
{
    (void)state;
    size_t before = base_alloc_bytes();
    mlp m;
    assert_int_equal(mlp_build(&m, 0), EXEC_OK);
    exec_memory_limit_set(1024); /* the MLP's tensors take more than 1 KiB */
    size_t built = base_alloc_bytes();
    assert_int_equal(exec_graph_plan(m.g), EXEC_ERR_NOMEM);
    printf("%s\n", exec_errmsg());
    assert_non_null(strstr(exec_errmsg(), "memory limit of 1.0 KiB"));
    assert_int_equal(base_alloc_bytes(), built); /* no arena allocated */
    exec_graph_destroy(m.g);
    exec_memory_limit_set(64 << 20); /* room enough: it plans and runs */
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    exec_graph_destroy(m.g);
    exec_memory_limit_set(0); /* the cgroup's again */
    assert_int_equal(base_alloc_bytes(), before);
}

/* Every allocation failure becomes an error status: never a crash, never a
 * leak (the sanitizer build checks the latter). */
static void test_alloc_failure(void **state)
{
    (void)state;
    int failures = 0;
    for (uint64_t n = 1; n < 100000; n++) {
        size_t before = base_alloc_bytes();
        mlp m;
        base_alloc_fail_after(n, 1);
        exec_status s = mlp_build(&m, 1);
        if (!s) {
            exec_run_opts o = { .inter = (n & 1) ? 2 : 1 };
            s = exec_graph_run(m.g, &o);
        }
        base_alloc_fail_after(0, 0);
        exec_graph_destroy(m.g);
        assert_int_equal(base_alloc_bytes(), before);
        if (!s)
            break; /* n is past the last allocation: everything succeeded */
        assert_int_equal(s, EXEC_ERR_NOMEM);
        assert_true(strlen(exec_errmsg()) > 0);
        failures++;
    }
    printf("allocation failure injected at %d points, each an EXEC_ERR_NOMEM\n", failures);
    assert_true(failures > 20);
}

static void test_bad_build(void **state)
{
    (void)state;
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 1), EXEC_OK);
    uint32_t a = exec_input(g, "a", EXEC_F32, 2, (int64_t[]){ 3, 4 });
    uint32_t b = exec_input(g, "b", EXEC_F32, 2, (int64_t[]){ 5, 6 });
    assert_int_equal(ex_matmul(g, a, b, 0, 0), 0);
    assert_int_equal(exec_graph_status(g), EXEC_ERR_SHAPE);
    assert_non_null(strstr(exec_errmsg(), "MatMul"));
    /* sticky: later builders do nothing */
    assert_int_equal(ex_relu(g, a), 0);
    assert_int_equal(exec_graph_plan(g), EXEC_ERR_SHAPE);
    exec_graph_destroy(g);
}

/* A small convolution graph: y = conv3x3(x, w), x [4,3,8,8], w [4,3,3,3]. */
static exec_graph *conv_graph(const exec_settings *set, uint32_t *x, uint32_t *y)
{
    exec_graph *g = NULL;
    assert_int_equal(exec_graph_create(&g, 9), EXEC_OK);
    if (set)
        exec_graph_settings_set(g, set);
    *x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ 4, 3, 8, 8 });
    uint32_t w = exec_weight(g, "w", 4, (int64_t[]){ 4, 3, 3, 3 }, EXEC_INIT_HE);
    *y = ex_conv2d(g, *x, w, 1, 1, 1, 1);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *xd = exec_dataf(g, *x);
    for (int i = 0; i < 4 * 3 * 8 * 8; i++)
        xd[i] = (float)((i * 37) % 101) / 101.0f - 0.5f;
    return g;
}

/* Two graphs of one process run with different settings: the convolution
 * algorithm and the thread count each graph carries reach its kernels (the
 * im2col and the direct kernels keep workspaces of different sizes, per
 * thread), the results agree, and the process defaults stay as they were. */
static void test_settings_per_graph(void **state)
{
    (void)state;
    exec_settings im2col = { .threads = 1, .conv_algo = EXEC_CONV_IM2COL };
    exec_settings direct = { .threads = 2, .conv_algo = EXEC_CONV_DIRECT };
    exec_settings im2col2 = { .threads = 2, .conv_algo = EXEC_CONV_IM2COL };
    uint32_t x1, y1, x2, y2, x3, y3, x4, y4;
    exec_graph *g1 = conv_graph(&im2col, &x1, &y1), *g2 = conv_graph(&direct, &x2, &y2);
    exec_graph *g3 = conv_graph(NULL, &x3, &y3), *g4 = conv_graph(&im2col, &x4, &y4);
    exec_settings got = exec_graph_settings(g2);
    assert_int_equal(got.threads, 2);
    assert_int_equal(got.conv_algo, EXEC_CONV_DIRECT);
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g1, &o), EXEC_OK);
    assert_int_equal(exec_graph_run(g2, &o), EXEC_OK);
    exec_run_opts over = { .max_phase = EXEC_PHASE_forward, .settings = &direct }; /* the run's settings win */
    assert_int_equal(exec_graph_run(g3, &over), EXEC_OK);
    exec_run_opts twice = { .max_phase = EXEC_PHASE_forward, .settings = &im2col2 };
    assert_int_equal(exec_graph_run(g4, &twice), EXEC_OK);
    exec_mem_stats m1, m2, m3, m4;
    exec_graph_mem(g1, &m1), exec_graph_mem(g2, &m2), exec_graph_mem(g3, &m3), exec_graph_mem(g4, &m4);
    printf(
        "workspace: im2col 1 thread %zu B, direct 2 threads %zu B, direct by the run %zu B, im2col 2 threads %zu B\n",
        m1.peak_workspace, m2.peak_workspace, m3.peak_workspace, m4.peak_workspace);
    assert_true(m1.peak_workspace > 0 && m2.peak_workspace > 0);
    /* AVX2 and FMA (x86-64 alone): without them DIRECT runs im2col */
    if (exec_simd_best() >= EXEC_SIMD_AVX2)
        assert_true(m1.peak_workspace != m2.peak_workspace);
    assert_int_equal(m3.peak_workspace, m2.peak_workspace);
    assert_true(m4.peak_workspace > m1.peak_workspace); /* one image buffer per thread */
    const float *a = exec_dataf(g1, y1), *b = exec_dataf(g2, y2), *c = exec_dataf(g3, y3), *d = exec_dataf(g4, y4);
    for (int i = 0; i < 4 * 4 * 8 * 8; i++) {
        assert_float_equal(a[i], b[i], 1e-5);
        assert_float_equal(a[i], c[i], 1e-5);
        assert_float_equal(a[i], d[i], 1e-5);
    }
    assert_int_equal(exec_threads_get(), 1);
    assert_int_equal(exec_conv_algo_get(), EXEC_CONV_AUTO);
    exec_graph_destroy(g1), exec_graph_destroy(g2), exec_graph_destroy(g3), exec_graph_destroy(g4);
}

/* Hooks as a run's setting: each hook set counts, in its own ctx, the
 * node_def and ops calls it received and the graphs they named. */
typedef struct hk_count {
    _Atomic uint32_t defs, ops;
    const exec_graph *_Atomic other; /* a graph other than `mine` seen */
    const exec_graph *mine;          /* the only graph this set should see (NULL: any) */
} hk_count;
static void hk_def(void *ctx, const exec_graph *g, const exec_node *n, uint64_t f, uint64_t b)
{
    (void)n, (void)f, (void)b;
    hk_count *c = ctx;
    c->defs++;
    if (c->mine && g != c->mine)
        c->other = g;
}
static void hk_ops(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *b,
                   const uint64_t *e)
{
    (void)nodes, (void)b, (void)e;
    hk_count *c = ctx;
    c->ops += n;
    if (c->mine && g != c->mine)
        c->other = g;
}

/* A run's hooks see that run's ops, whatever the process's are; the
 * process's see the others; each node_def hook gets the graph's nodes once. */
static void test_hooks_per_run(void **state)
{
    (void)state;
    uint32_t x, y;
    exec_graph *g = conv_graph(NULL, &x, &y);
    uint32_t nodes = exec_node_count(g);
    hk_count c[2] = { 0 };
    /* the same callbacks: the ctx alone tells the two sets apart */
    exec_hooks proc = { .ctx = &c[0], .node_def = hk_def, .ops = hk_ops };
    exec_hooks mine = { .ctx = &c[1], .node_def = hk_def, .ops = hk_ops };
    exec_settings with_mine = { .hooks = &mine };
    exec_run_opts plain = { .max_phase = EXEC_PHASE_forward };
    exec_run_opts own = { .max_phase = EXEC_PHASE_forward, .settings = &with_mine };
    uint32_t fwd = 0;
    for (uint32_t i = 0; i < nodes; i++)
        fwd += exec_node_get(g, i)->phase <= EXEC_PHASE_forward;
    /* no process hooks: only the run's see anything */
    assert_int_equal(exec_graph_run(g, &own), EXEC_OK);
    assert_int_equal(exec_graph_run(g, &plain), EXEC_OK);
    assert_int_equal(c[1].ops, fwd);
    assert_int_equal(c[1].defs, nodes);
    /* process hooks installed: a plain run goes to them, an own run to its own */
    exec_hooks_set(&proc);
    assert_int_equal(exec_graph_run(g, &plain), EXEC_OK);
    assert_int_equal(exec_graph_run(g, &own), EXEC_OK);
    exec_run_opts own2 = own;
    own2.inter = 2; /* the inter-op workers' records go to the run's hooks too */
    assert_int_equal(exec_graph_run(g, &own2), EXEC_OK);
    exec_hooks_set(NULL);
    printf("hooks per run: %u nodes (%u forward); process hooks %u defs %u ops, the run's %u defs %u ops\n", nodes, fwd,
           (unsigned)c[0].defs, (unsigned)c[0].ops, (unsigned)c[1].defs, (unsigned)c[1].ops);
    assert_int_equal(c[0].ops, fwd);
    assert_int_equal(c[1].ops, 3 * fwd);
    assert_int_equal(c[0].defs, nodes);     /* described to the process's hooks once */
    assert_int_equal(c[1].defs, 2 * nodes); /* and again to the run's after them */
    exec_graph_destroy(g);
}

/* The CPU a thread is bound to (-1: more than one), by its affinity. */
static int only_cpu(const cpu_set_t *set)
{
    int cpu = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set)) {
            if (cpu >= 0)
                return -1;
            cpu = c;
        }
    return cpu;
}

/* The process's threads bound to one CPU: how many, and a mask of the CPUs (below 64). */
typedef struct bound_count {
    int n;
    uint64_t cpus;
} bound_count;
static void count_bound(pid_t tid, void *ctx)
{
    bound_count *b = ctx;
    cpu_set_t set;
    if (sched_getaffinity(tid, sizeof set, &set) != 0)
        return; /* exited meanwhile */
    int c = only_cpu(&set);
    if (c >= 0) {
        b->n++;
        b->cpus |= c < 64 ? UINT64_C(1) << c : 0;
    }
}
static int bound_threads(uint64_t *cpus)
{
    bound_count b = { 0, 0 };
    assert_true(each_task(count_bound, &b) > 0);
    *cpus = b.cpus;
    return b.n;
}

/* --bind: a run's threads (the caller and its OpenMP team, or the inter-op
 * workers) are pinned where exec_bind_cpu says, as their affinity reads
 * back; NONE gives them every CPU again; SPREAD and CLOSE agree when the
 * threads fill the places. */
static void test_bind(void **state)
{
    (void)state;
    assert_int_equal(exec_bind_from_name("close"), EXEC_BIND_CLOSE);
    assert_int_equal(exec_bind_from_name("spread"), EXEC_BIND_SPREAD);
    assert_int_equal(exec_bind_from_name("none"), EXEC_BIND_NONE);
    assert_int_equal(exec_bind_from_name("tight"), -1);
    assert_null(exec_bind_unavailable(EXEC_BIND_NONE));
    const char *why = exec_bind_unavailable(EXEC_BIND_CLOSE);
    int cpus[CPU_SETSIZE], np = exec_bind_places(cpus, CPU_SETSIZE);
    /* the places are the CPUs "all cores" counts, as cores of sockets */
    int physical = 0, sockets = 0;
    exec_cpu_topology(&physical, &sockets);
    assert_int_equal(np, exec_cores());
    assert_true(sockets >= 1 && sockets <= physical && physical <= exec_cores());
    if (why) {
        printf("binding not available here: %s\n", why);
        skip();
    }
    assert_true(np >= 2);
    for (int n = 1; n <= np; n++)
        for (int i = 0; i < n; i++) {
            assert_int_equal(exec_bind_cpu(EXEC_BIND_CLOSE, i, n), cpus[i]);
            assert_int_equal(exec_bind_cpu(EXEC_BIND_SPREAD, i, n), cpus[i * np / n]);
        }
    assert_int_equal(exec_bind_cpu(EXEC_BIND_NONE, 0, 2), -1);
    uint32_t x, y;
    exec_graph *g = conv_graph(NULL, &x, &y);
    uint64_t mask = 0;
    /* sequential, 2 threads, close: this thread on place 0, its team's second on place 1 */
    exec_settings close2 = { .threads = 2, .bind = EXEC_BIND_CLOSE }, none2 = { .threads = 2, .bind = EXEC_BIND_NONE };
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward, .settings = &close2 };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    int team[2] = { -2, -2 };
#pragma omp parallel num_threads(2)
    {
        cpu_set_t set;
        if (pthread_getaffinity_np(pthread_self(), sizeof set, &set) == 0)
            team[omp_get_thread_num()] = only_cpu(&set);
    }
    printf("bind close, 2 threads: places %d (first %d, %d); the team on %d and %d\n", np, cpus[0], cpus[1], team[0],
           team[1]);
    assert_int_equal(team[0], cpus[0]);
    assert_int_equal(team[1], cpus[1]);
    /* none: back to every CPU */
    o.settings = &none2;
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    assert_int_equal(bound_threads(&mask), 0);
    /* two inter-op workers of one thread each, close: one on each of the first two places */
    o.settings = &close2;
    o.inter = 2;
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    int nb = bound_threads(&mask);
    printf("bind close, 2 inter-op workers: %d threads bound, CPU mask %#llx\n", nb, (unsigned long long)mask);
    assert_int_equal(nb, 2);
    if (cpus[0] < 64 && cpus[1] < 64)
        assert_true(mask == ((UINT64_C(1) << cpus[0]) | (UINT64_C(1) << cpus[1])));
    /* the graph's own setting (no run settings) binds too, and none unbinds the workers */
    exec_graph_settings_set(g, &none2);
    o.settings = NULL;
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    assert_int_equal(bound_threads(&mask), 0);
    exec_graph_destroy(g);
}

/* Two graphs run side by side, each with a hook set of its own (one ctx
 * each, the same callbacks, carried by the graph): each set sees its own
 * graph's ops alone, in the number its runs executed. */
typedef struct side_run {
    exec_graph *g;
    int runs, inter;
} side_run;
static void *side_runner(void *arg)
{
    side_run *r = arg;
    exec_run_opts o = { .max_phase = EXEC_PHASE_update, .inter = r->inter };
    for (int i = 0; i < r->runs; i++)
        if (exec_graph_run(r->g, &o) != EXEC_OK)
            return arg;
    return NULL;
}

/* The op records' clock: whichever the executor reads (the TSC where the
 * kernel's clocksource is it), the hook sees CLOCK_MONOTONIC ns, each
 * record inside the run that made it, begin <= end, and a sequential run's
 * records one after the other. */
typedef struct clk_seen {
    uint64_t lo; /* the run's start */
    uint64_t last_end;
    uint32_t n, bad_order, outside, backwards;
    double op_ns;
} clk_seen;
static void clk_ops(void *ctx, const exec_graph *g, uint32_t n, const uint32_t *nodes, const uint64_t *b,
                    const uint64_t *e)
{
    (void)g, (void)nodes;
    clk_seen *c = ctx;
    for (uint32_t i = 0; i < n; i++) {
        c->backwards += e[i] < b[i];
        c->outside += b[i] < c->lo;
        c->bad_order += b[i] < c->last_end;
        c->last_end = e[i];
        c->op_ns += (double)(e[i] - b[i]);
    }
    c->n += n;
}
static void test_trace_clock(void **state)
{
    (void)state;
    mlp m;
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    const exec_trace_clock clocks[] = { EXEC_TRACE_CLOCK_MONOTONIC, EXEC_TRACE_CLOCK_AUTO };
    exec_run_opts o = { .max_phase = EXEC_PHASE_update };
    for (int k = 0; k < 2; k++) {
        exec_trace_clock_set(clocks[k]);
        clk_seen c = { 0 };
        exec_hooks h = { .ctx = &c, .ops = clk_ops };
        exec_hooks_set(&h);
        for (int r = 0; r < 6; r++) {
            if (r == 3) /* an idle thread's buffer: its next interval is long */
                nanosleep(&(struct timespec){ 0, 3000000 }, NULL);
            c.lo = base_now_ns();
            c.last_end = c.lo;
            assert_int_equal(exec_graph_run(m.g, &o), EXEC_OK);
            c.outside += c.last_end > base_now_ns(); /* flushed at the run's end */
        }
        exec_hooks_set(NULL);
        printf("trace clock %s: %u records, %.1f us of ops a run; %u outside their run, %u backwards, %u out of "
               "order\n",
               exec_trace_clock_get() == EXEC_TRACE_CLOCK_TSC ? "tsc" : "monotonic", c.n, c.op_ns / 6e3, c.outside,
               c.backwards, c.bad_order);
        assert_true(c.n > 0);
        assert_int_equal(c.outside, 0);
        assert_int_equal(c.backwards, 0);
        assert_int_equal(c.bad_order, 0);
    }
    exec_trace_clock_set(EXEC_TRACE_CLOCK_AUTO);
    exec_graph_destroy(m.g);
}

static void test_hooks_two_contexts(void **state)
{
    (void)state;
    mlp m;
    uint32_t x, y;
    assert_int_equal(mlp_build(&m, 1), EXEC_OK);
    exec_graph *g2 = conv_graph(NULL, &x, &y);
    hk_count c[3] = { { .mine = m.g }, { .mine = g2 }, { 0 } };
    exec_hooks a = { .ctx = &c[0], .node_def = hk_def, .ops = hk_ops };
    exec_hooks b = { .ctx = &c[1], .node_def = hk_def, .ops = hk_ops };
    exec_hooks proc = { .ctx = &c[2], .node_def = hk_def, .ops = hk_ops };
    exec_graph_settings_set(m.g, &(exec_settings){ .threads = 1, .hooks = &a });
    exec_graph_settings_set(g2, &(exec_settings){ .threads = 1, .hooks = &b });
    exec_hooks_set(&proc); /* the process's set sees neither graph */
    side_run ra = { .g = m.g, .runs = 3, .inter = 2 }, rb = { .g = g2, .runs = 5, .inter = 1 };
    pthread_t th;
    assert_int_equal(pthread_create(&th, NULL, side_runner, &ra), 0);
    void *failed_b = side_runner(&rb), *failed_a = NULL;
    pthread_join(th, &failed_a);
    exec_hooks_set(NULL);
    assert_null(failed_a);
    assert_null(failed_b);
    uint32_t na = exec_node_count(m.g), nb = exec_node_count(g2);
    printf("two hook contexts side by side: A %u defs %u ops (graph of %u nodes, 3 runs), B %u defs %u ops "
           "(%u nodes, 5 runs), the process's %u defs %u ops\n",
           (unsigned)c[0].defs, (unsigned)c[0].ops, na, (unsigned)c[1].defs, (unsigned)c[1].ops, nb,
           (unsigned)c[2].defs, (unsigned)c[2].ops);
    assert_null(c[0].other);
    assert_null(c[1].other);
    assert_int_equal(c[0].defs, na);
    assert_int_equal(c[1].defs, nb);
    assert_int_equal(c[0].ops, 3 * na);
    assert_int_equal(c[1].ops, 5 * nb);
    assert_int_equal(c[2].defs + c[2].ops, 0);
    exec_graph_destroy(m.g);
    exec_graph_destroy(g2);
}

/* Buffer forwarding (exec/forwarding.c): an elementwise node whose input
 * dies there writes its output over it. h = sigmoid(x) feeds an inference
 * FusedBatchNorm, a Relu, an Add (its second input), a Relu, a Sigmoid (k)
 * and a Relu, which all run in h's buffer; t = tanh(x), the Add's first
 * input, is read again after it, so only that last Relu may write over it;
 * k kept keeps its own buffer, and so does the Relu after it. The results must be those of separate buffers,
 * sequential and on two inter-op workers. */
enum { FW_N = 2, FW_C = 3, FW_HW = 20 };
typedef struct fw_graph {
    exec_graph *g;
    uint32_t x, h, b, r, s, o, t, u, k, kr;
} fw_graph;

static void fw_build(fw_graph *f, bool keep)
{
    assert_int_equal(exec_graph_create(&f->g, 7), EXEC_OK);
    exec_graph *g = f->g;
    const int64_t sh[4] = { FW_N, FW_C, FW_HW, FW_HW }, ch[1] = { FW_C };
    f->x = exec_input(g, "x", EXEC_F32, 4, sh);
    uint32_t sc = exec_const(g, "scale", 1, ch, 1.5f), off = exec_const(g, "offset", 1, ch, -0.6f);
    uint32_t mean = exec_const(g, "mean", 1, ch, 0.25f), var = exec_const(g, "var", 1, ch, 4.0f);
    f->h = ex_sigmoid(g, f->x);
    f->b = ex_fused_batch_norm(g, f->h, sc, off, mean, var, 1e-3f, 0.9f, 0);
    f->r = ex_relu(g, f->b);
    f->t = ex_tanh(g, f->x);
    f->s = ex_add(g, f->t, f->r);
    f->o = ex_relu(g, f->s);
    f->u = ex_relu(g, f->t); /* t read again after the Add */
    f->k = ex_sigmoid(g, f->o);
    f->kr = ex_relu(g, f->k);
    if (keep)
        assert_int_equal(exec_tensor_keep(g, f->k), EXEC_OK);
    if (exec_graph_status(g))
        printf("forwarding graph: %s\n", exec_errmsg());
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *x = exec_dataf(g, f->x);
    for (int i = 0; i < FW_N * FW_C * FW_HW * FW_HW; i++)
        x[i] = (float)((i * 37) % 101) / 25.0f - 2.0f;
}

static double fw_check(const fw_graph *f, bool keep)
{
    const float *x = exec_dataf(f->g, f->x), *o = exec_dataf(f->g, f->o), *u = exec_dataf(f->g, f->u);
    const float *kr = exec_dataf(f->g, f->kr), *k = exec_dataf(f->g, f->k);
    double md = 0;
    for (int i = 0; i < FW_N * FW_C * FW_HW * FW_HW; i++) {
        double h = 1.0 / (1.0 + exp(-(double)x[i])), b = (h - 0.25) * 1.5 / sqrt(4.0 + 1e-3) - 0.6;
        double r = b > 0 ? b : 0, t = tanh((double)x[i]), s = r + t, oo = s > 0 ? s : 0;
        double kk = 1.0 / (1.0 + exp(-oo));
        md = fmax(md, fabs(u[i] - (t > 0 ? t : 0)));
        md = fmax(md, fabs(kr[i] - kk));
        if (keep) /* k's own buffer, and o's holds o (not k) */
            md = fmax(md, fmax(fabs(k[i] - kk), fabs(o[i] - oo)));
    }
    return md;
}

static void test_buffer_forwarding(void **state)
{
    (void)state;
    for (int keep = 0; keep < 2; keep++)
        for (int inter = 1; inter <= 2; inter++) {
            fw_graph f;
            exec_threads_set(inter == 2 ? 2 : 1);
            fw_build(&f, keep);
            const exec_tensor *T = exec_tensor_get(f.g, 1) - 1; /* T[id] */
            /* one buffer for h, b, r, s, o; one for t and u (t is read after the Add) */
            assert_int_equal(T[f.b].storage, f.h);
            assert_int_equal(T[f.r].storage, f.h);
            assert_int_equal(T[f.s].storage, f.h);
            assert_int_equal(T[f.o].storage, f.h);
            assert_int_equal(T[f.t].storage, f.t);
            assert_int_equal(T[f.u].storage, f.t);
            assert_int_equal(T[f.k].storage, keep ? f.k : f.h);
            assert_int_equal(T[f.kr].storage, keep ? f.kr : f.h);
            assert_ptr_equal(T[f.o].data, T[f.h].data);
            exec_mem_stats ms;
            exec_graph_mem(f.g, &ms);
            const size_t one = (size_t)FW_N * FW_C * FW_HW * FW_HW * sizeof(float);
            printf("activations %zu bytes in tensors, %zu in the arena\n", ms.bytes[EXEC_ROLE_activation],
                   ms.arena[EXEC_ROLE_activation]);
            const size_t saved = (keep ? 5 : 7) * one; /* b r s o u, and k kr unless k is kept */
            assert_true(ms.arena[EXEC_ROLE_activation] + saved >= ms.bytes[EXEC_ROLE_activation]);
            assert_true(ms.arena[EXEC_ROLE_activation] + saved < ms.bytes[EXEC_ROLE_activation] + one);
            exec_run_opts ro = { .inter = inter, .max_phase = EXEC_PHASE_forward };
            for (int run = 0; run < 2; run++) {
                assert_int_equal(exec_graph_run(f.g, &ro), EXEC_OK);
                double md = fw_check(&f, keep);
                printf("forwarding keep %d inter %d run %d: max diff %.3g\n", keep, inter, run, md);
                assert_true(md < 1e-5);
            }
            exec_graph_destroy(f.g);
        }
    exec_threads_set(1);
    fw_graph f;
    fw_build(&f, false);
    assert_int_equal(exec_tensor_keep(f.g, f.h), EXEC_ERR_STATE); /* after plan */
    assert_int_equal(exec_tensor_keep(f.g, 100000), EXEC_ERR_ARG);
    exec_graph_destroy(f.g);
}

/* keeps tensor `keep` (0: none), plans g, fills x [B, D floats] and the
 * labels y [B] and runs one training step's forward and backward on
 * `inter` inter-op workers */
static void fw_plan_run(exec_graph *g, uint32_t x, uint32_t y, uint32_t keep, int inter)
{
    if (keep)
        assert_int_equal(exec_tensor_keep(g, keep), EXEC_OK);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *xd = exec_dataf(g, x);
    int32_t *yd = exec_datai(g, y);
    for (int i = 0; i < B * D; i++)
        xd[i] = (float)((i * 29) % 31) / 8.0f - 2.0f;
    for (int i = 0; i < B; i++)
        yd[i] = i % C;
    exec_run_opts o = { .inter = inter, .max_phase = EXEC_PHASE_backward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
}

/* In a training graph Relu's gradient reads the Relu's output (y > 0
 * exactly where x > 0), so the Relu is its input's only reader and writes
 * over it: a Linear -> Relu layer runs in one buffer. The weights' gradients
 * are those of the graph whose Relu input is kept apart. */
static void fw_train(bool keep, uint32_t *storage_of_h, uint32_t *mm, uint32_t *h, float *dw)
{
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 5), EXEC_OK);
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ B, D });
    uint32_t y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w1 = exec_weight(g, "w1", 2, (int64_t[]){ D, H }, EXEC_INIT_GLOROT);
    uint32_t b1 = exec_weight(g, "b1", 1, (int64_t[]){ H }, EXEC_INIT_ONE);
    uint32_t w2 = exec_weight(g, "w2", 2, (int64_t[]){ H, C }, EXEC_INIT_GLOROT);
    *mm = ex_matmul(g, x, w1, 0, 0);
    uint32_t ba = ex_bias_add(g, *mm, b1, 1);
    *h = ex_relu(g, ba);
    uint32_t loss = ex_sparse_softmax_xent(g, ex_matmul(g, *h, w2, 0, 0), y);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    fw_plan_run(g, x, y, keep ? ba : 0, 1);
    *storage_of_h = exec_tensor_get(g, *h)->storage;
    memcpy(dw, exec_dataf(g, exec_grad_of(g, w1)), sizeof(float) * D * H);
    exec_graph_destroy(g);
}

static void test_forwarding_training(void **state)
{
    (void)state;
    static float dw_fw[D * H], dw_kept[D * H];
    uint32_t st_fw, st_kept, mm, h;
    fw_train(false, &st_fw, &mm, &h, dw_fw);
    assert_int_equal(st_fw, mm); /* MatMul, BiasAdd and Relu in one buffer */
    fw_train(true, &st_kept, &mm, &h, dw_kept);
    assert_int_equal(st_kept, h);
    double md = 0, mag = 0;
    for (int i = 0; i < D * H; i++)
        md = fmax(md, fabs((double)dw_fw[i] - dw_kept[i])), mag = fmax(mag, fabs((double)dw_kept[i]));
    printf("training forwarding: dW1 max diff %.3g (max |dW1| %.3g)\n", md, mag);
    assert_true(mag > 1e-3 && md == 0.0);
}

/* A flattening Reshape before a dense layer (DQN's conv3 -> fc4) shares
 * its input's buffer where the input dies there, and copies nothing; so
 * does its gradient's Reshape. h = relu(tanh(x) + b0) [B, 2, 2, 3] -> [B, 12]
 * -> a MatMul and a loss: the weight's gradient is that of the graph whose
 * h is kept apart (each Reshape then a copy). *shared: the Reshapes whose
 * output shares their input's buffer. */
static void fw_flatten(bool keep, int inter, int *reshapes, int *shared, float *dw)
{
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 9), EXEC_OK);
    uint32_t x = exec_input(g, "x", EXEC_F32, 4, (int64_t[]){ B, 2, 2, 3 });
    uint32_t y = exec_input(g, "y", EXEC_I32, 1, (int64_t[]){ B });
    uint32_t w = exec_weight(g, "w", 2, (int64_t[]){ D, C }, EXEC_INIT_GLOROT);
    uint32_t b0 = exec_weight(g, "b0", 1, (int64_t[]){ 2 }, EXEC_INIT_ONE); /* so h's gradient is made */
    uint32_t h = ex_relu(g, ex_bias_add(g, ex_tanh(g, x), b0, 1));
    uint32_t flat = ex_reshape(g, h, 2, (int64_t[]){ B, D });
    uint32_t loss = ex_sparse_softmax_xent(g, ex_matmul(g, flat, w, 0, 0), y);
    assert_int_equal(exec_gradients(g, loss), EXEC_OK);
    fw_plan_run(g, x, y, keep ? h : 0, inter);
    *reshapes = *shared = 0;
    for (uint32_t i = 0; i < exec_node_count(g); i++) {
        const exec_node *n = exec_node_get(g, i);
        if (n->op != EXEC_OP_Reshape)
            continue;
        ++*reshapes;
        *shared += exec_tensor_get(g, n->in[0])->data == exec_tensor_get(g, n->out[0])->data;
    }
    memcpy(dw, exec_dataf(g, exec_grad_of(g, w)), sizeof(float) * D * C);
    exec_graph_destroy(g);
}

static void test_forwarding_reshape(void **state)
{
    (void)state;
    float dw_fw[D * C], dw_kept[D * C];
    int reshapes, shared;
    fw_flatten(true, 1, &reshapes, &shared, dw_kept);
    assert_int_equal(shared, 1); /* h kept: the forward's copies */
    for (int inter = 1; inter <= 2; inter++) {
        exec_threads_set(inter);
        fw_flatten(false, inter, &reshapes, &shared, dw_fw);
        printf("flattening, %d inter-op worker(s): %d Reshapes, %d in their input's buffer\n", inter, reshapes, shared);
        assert_int_equal(reshapes, 2); /* the forward's and its gradient's */
        assert_int_equal(shared, 2);
        double md = 0, mag = 0;
        for (int i = 0; i < D * C; i++)
            md = fmax(md, fabs((double)dw_fw[i] - dw_kept[i])), mag = fmax(mag, fabs((double)dw_kept[i]));
        printf("flattening Reshape forwarded: dW max diff %.3g (max |dW| %.3g)\n", md, mag);
        assert_true(mag > 1e-3 && md == 0.0);
    }
    exec_threads_set(1);
}

/* Of two inputs an Add may write over, it takes the one touched last (its
 * lines the likeliest in cache): s = a + b writes over b, made after a. */
static void test_forwarding_prefers_recent(void **state)
{
    (void)state;
    exec_graph *g;
    assert_int_equal(exec_graph_create(&g, 3), EXEC_OK);
    uint32_t x = exec_input(g, "x", EXEC_F32, 2, (int64_t[]){ 4, 64 });
    uint32_t a = ex_sigmoid(g, x), b = ex_tanh(g, x), s = ex_add(g, a, b);
    assert_int_equal(exec_graph_status(g), EXEC_OK);
    assert_int_equal(exec_graph_plan(g), EXEC_OK);
    float *xd = exec_dataf(g, x);
    for (int i = 0; i < 4 * 64; i++)
        xd[i] = (float)(i % 17) / 4.0f - 2.0f;
    exec_run_opts o = { .max_phase = EXEC_PHASE_forward };
    assert_int_equal(exec_graph_run(g, &o), EXEC_OK);
    assert_int_equal(exec_tensor_get(g, s)->storage, b);
    const float *sd = exec_dataf(g, s);
    double md = 0;
    for (int i = 0; i < 4 * 64; i++)
        md = fmax(md, fabs(sd[i] - (1.0 / (1.0 + exp(-(double)xd[i])) + tanh((double)xd[i]))));
    printf("Add over its later input: max diff %.3g\n", md);
    assert_true(md < 1e-6);
    exec_graph_destroy(g);
}

/* Denormal floats: flushed (the default), x * y of two 1e-20 (1e-40, below
 * FLT_MIN) is 0 in every element, and so is a denormal input times one
 * (read as 0); kept, neither is. Every element: the team's share of the
 * elementwise kernel at two threads, and each inter-op worker's node. The
 * runs' calling thread is a new one, in the default (IEEE) mode, whose
 * OpenMP team starts in a region of its own before any run: a run must
 * set threads that existed before it. */
enum { DN = 1 << 20, DRUNS = 3 };
static const struct {
    int threads, inter;
} denorm_runs[DRUNS] = { { 2, 1 }, { 1, 1 }, { 2, 2 } }; /* two threads first: the team as it started */

typedef struct denorm_result {
    int kept;               /* the team's sum of 1e-20 squared before any run is not 0 */
    int zeros[2][DRUNS][3]; /* [flush][run]: zeros in x*y, y*x, 1e-40*1 */
    exec_status st;
} denorm_result;

/* zeros by their bits: a thread that flushes reads a denormal as 0 */
static int count_zeros(exec_graph *g, uint32_t out)
{
    const uint32_t *o = (const uint32_t *)exec_dataf(g, out);
    int zeros = 0;
    for (int i = 0; i < DN; i++)
        zeros += (o[i] & 0x7fffffffu) == 0;
    return zeros;
}

static void *denorm_thread(void *arg)
{
    denorm_result *r = arg;
    fesetenv(FE_DFL_ENV); /* this thread in the default mode (a new thread copies its creator's) */
    exec_graph *g = NULL;
    if ((r->st = exec_graph_create(&g, 3)))
        return NULL;
    uint32_t x = exec_input(g, "x", EXEC_F32, 1, (int64_t[]){ DN }),
             y = exec_input(g, "y", EXEC_F32, 1, (int64_t[]){ DN });
    uint32_t den = exec_input(g, "den", EXEC_F32, 1, (int64_t[]){ DN }),
             one = exec_input(g, "one", EXEC_F32, 1, (int64_t[]){ DN });
    uint32_t xy = ex_mul(g, x, y), yx = ex_mul(g, y, x); /* denormal products, two nodes for two workers */
    uint32_t dy = ex_mul(g, den, one);                   /* a denormal input */
    if ((r->st = exec_graph_status(g)) || (r->st = exec_graph_plan(g)))
        goto end;
    float *xd = exec_dataf(g, x), *yd = exec_dataf(g, y), *dd = exec_dataf(g, den), *od = exec_dataf(g, one);
    for (int i = 0; i < DN; i++)
        xd[i] = yd[i] = 1e-20f, dd[i] = 1e-40f, od[i] = 1.0f;
    /* the team, as the first run finds it: a region of one thread (the
     * plan's) ends the OpenMP runtime's threads past it, so it starts here */
    volatile float tiny = 1e-20f;
    float sum = 0;
#pragma omp parallel num_threads(2) reduction(+ : sum)
    sum += tiny * tiny;
    r->kept = sum > 0; /* compared here: the test's own thread reads a denormal as 0 */
    for (int flush = 1; flush >= 0; flush--)
        for (int k = 0; k < DRUNS; k++) {
            exec_denormals_set(flush);
            exec_settings set = { .threads = denorm_runs[k].threads };
            exec_run_opts o = { .max_phase = EXEC_PHASE_forward, .settings = &set, .inter = denorm_runs[k].inter };
            if ((r->st = exec_graph_run(g, &o)))
                goto end;
            r->zeros[flush][k][0] = count_zeros(g, xy), r->zeros[flush][k][1] = count_zeros(g, yx);
            r->zeros[flush][k][2] = count_zeros(g, dy);
        }
end:
    exec_denormals_set(1);
    exec_graph_destroy(g);
    return NULL;
}

static void test_denormals(void **state)
{
    (void)state;
    assert_int_equal(exec_denormals_from_name("flush"), 1);
    assert_int_equal(exec_denormals_from_name("keep"), 0);
    assert_int_equal(exec_denormals_from_name("ftz"), -1);
    assert_string_equal(exec_denormals_name(exec_denormals_get()), "flush"); /* the default */
    denorm_result r = { 0 };
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, denorm_thread, &r), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
    assert_int_equal(r.st, EXEC_OK);
    assert_true(r.kept); /* the team kept denormals before the runs */
    for (int flush = 1; flush >= 0; flush--)
        for (int k = 0; k < DRUNS; k++) {
            const int *z = r.zeros[flush][k];
            printf("denormals %s, %d thread%s x %d worker%s: zeros in x*y %d, y*x %d, 1e-40*1 %d of %d\n",
                   exec_denormals_name(flush), denorm_runs[k].threads, denorm_runs[k].threads > 1 ? "s" : "",
                   denorm_runs[k].inter, denorm_runs[k].inter > 1 ? "s" : "", z[0], z[1], z[2], DN);
            for (int j = 0; j < 3; j++)
                assert_int_equal(z[j], flush ? DN : 0);
        }
}

int main(void)
{
    exec_threads_set(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mlp_learns),
        cmocka_unit_test(test_inter_same_result),
        cmocka_unit_test(test_cnn_learns),
        cmocka_unit_test(test_phases),
        cmocka_unit_test(test_alloc_failure),
        cmocka_unit_test(test_plan_over_memory_limit),
        cmocka_unit_test(test_inter_workers_persist),
        cmocka_unit_test(test_bad_build),
        cmocka_unit_test(test_settings_per_graph),
        cmocka_unit_test(test_hooks_per_run),
        cmocka_unit_test(test_bind),
        cmocka_unit_test(test_hooks_two_contexts),
        cmocka_unit_test(test_trace_clock),
        cmocka_unit_test(test_buffer_forwarding),
        cmocka_unit_test(test_forwarding_training),
        cmocka_unit_test(test_forwarding_reshape),
        cmocka_unit_test(test_forwarding_prefers_recent),
        cmocka_unit_test(test_no_idle_team),
        cmocka_unit_test(test_denormals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
