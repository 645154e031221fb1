/* test_models_conv.c -- the convolutional workloads (alexnet, vgg, residual,
 * deepq), the Breakout-like game, and `fathom run` / `fathom list`:
 * parameter counts at full (from the built graphs), learning on tiny,
 * deepq's TD loss on a fixed replay batch, the game on its own, infer
 * running forward-phase ops only, and the CLI's errors and JSON. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "models/breakout.h"
#include "models/deepq.h"
#include "models/images.h"
#include "models/model.h"

static int64_t params(const char *name, model_mode mode, model_preset p, int depth)
{
    const model_def *d = model_find(name);
    assert_non_null(d);
    model_config cfg = { .mode = mode, .preset = p, .depth = depth, .seed = 1, .plan = false };
    model *m = NULL;
    exec_status s = model_create(d, &cfg, &m);
    if (s)
        fprintf(stderr, "%s: %s\n", name, exec_errmsg());
    assert_int_equal(s, EXEC_OK);
    int64_t n = exec_param_count(m->g);
    model_destroy(m);
    return n;
}

static void test_params_full(void **state)
{
    (void)state;
    /* the papers' figures (torchvision's counts for the same architectures) */
    assert_int_equal(params("alexnet", MODEL_INFER, MODEL_FULL, 0), 61100840);
    assert_int_equal(params("alexnet", MODEL_TRAIN, MODEL_FULL, 0), 61100840);
    assert_int_equal(params("vgg", MODEL_INFER, MODEL_FULL, 0), 143667240);
    assert_int_equal(params("residual", MODEL_INFER, MODEL_FULL, 0), 25557032);
    assert_int_equal(params("residual", MODEL_TRAIN, MODEL_FULL, 50), 25557032);
    assert_int_equal(params("residual", MODEL_INFER, MODEL_FULL, 18), 11689512);
    assert_int_equal(params("residual", MODEL_INFER, MODEL_FULL, 34), 21797672);
    assert_int_equal(params("residual", MODEL_INFER, MODEL_FULL, 101), 44549160);
    assert_int_equal(params("residual", MODEL_INFER, MODEL_FULL, 152), 60192808);
    assert_int_equal(params("deepq", MODEL_INFER, MODEL_FULL, 0), 1686180);
    assert_int_equal(params("deepq", MODEL_TRAIN, MODEL_FULL, 0), 1686180);
    /* presets shrink */
    assert_true(params("vgg", MODEL_INFER, MODEL_TINY, 0) < params("vgg", MODEL_INFER, MODEL_SMALL, 0));
    /* a bad depth is an error, not a crash */
    model_config cfg = { .mode = MODEL_INFER, .preset = MODEL_FULL, .depth = 42, .plan = false };
    model *m = NULL;
    assert_int_equal(model_create(model_find("residual"), &cfg, &m), EXEC_ERR_ARG);
    assert_null(m);
    assert_non_null(strstr(exec_errmsg(), "42"));
}

static double mean(const float *x, int from, int n)
{
    double s = 0;
    for (int i = from; i < from + n; i++)
        s += x[i];
    return s / n;
}

/* Trains NAME on tiny for `steps`; returns the losses in out[]. */
static void train_tiny(const char *name, int steps, float *out)
{
    model_config cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY, .seed = 1, .plan = true };
    model *m = NULL;
    assert_int_equal(model_create(model_find(name), &cfg, &m), EXEC_OK);
    for (int i = 0; i < steps; i++) {
        assert_int_equal(model_step(m, &out[i]), EXEC_OK);
        assert_true(isfinite(out[i]));
    }
    model_destroy(m);
}

/* Threshold: the mean loss of the last 10 of 60 steps is below 0.7 x the
 * mean of the first 10 (10 classes: ln 10 = 2.30 at chance). */
static void test_alexnet_learns(void **state)
{
    (void)state;
    float l[60];
    train_tiny("alexnet", 60, l);
    printf("alexnet: first 10 %.3f, last 10 %.3f\n", mean(l, 0, 10), mean(l, 50, 10));
    assert_true(mean(l, 50, 10) < 0.7 * mean(l, 0, 10));
}

static void test_residual_learns(void **state)
{
    (void)state;
    float l[60];
    train_tiny("residual", 60, l);
    printf("residual: first 10 %.3f, last 10 %.3f\n", mean(l, 0, 10), mean(l, 50, 10));
    assert_true(mean(l, 50, 10) < 0.7 * mean(l, 0, 10));
}

/* VGG-19 is a plain 19-layer net with dropout 0.5: it starts slowly (the
 * paper trained its deep configurations from shallower ones). Threshold:
 * the mean of the last 20 of 100 steps is below 0.9 x the first 10's. */
static void test_vgg_learns(void **state)
{
    (void)state;
    float l[100];
    train_tiny("vgg", 100, l);
    printf("vgg: first 10 %.3f, last 20 %.3f\n", mean(l, 0, 10), mean(l, 80, 20));
    assert_true(mean(l, 80, 20) < 0.9 * mean(l, 0, 10));
}

/* deepq: the TD (Huber) loss on one fixed replay minibatch, against a fixed
 * target network, falls below half its first value in 100 updates. The
 * training loop (act, store, sample, learn) runs and grows the replay. */
static void test_deepq_td_fixed_batch(void **state)
{
    (void)state;
    model_config cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY, .seed = 3, .plan = true };
    model *m = NULL;
    assert_int_equal(model_create(model_find("deepq"), &cfg, &m), EXEC_OK);
    int64_t n0 = model_deepq_replay_size(m);
    assert_true(n0 >= 200);
    float first = NAN, last = NAN;
    assert_int_equal(model_deepq_learn(m, true, &first), EXEC_OK);
    for (int i = 0; i < 100; i++)
        assert_int_equal(model_deepq_learn(m, false, &last), EXEC_OK);
    printf("deepq TD loss on a fixed batch: %.5f -> %.5f\n", first, last);
    assert_true(first > 0);
    assert_true(last < 0.5f * first);
    float l;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(model_step(m, &l), EXEC_OK);
        assert_true(isfinite(l));
    }
    assert_true(model_deepq_replay_size(m) >= n0 + 12); /* 4 actions a step (plus episode starts) */
    /* the acting network lags the updates until it acts greedily, then
     * holds the online weights */
    int lag = model_deepq_act_lag(m, false), synced = model_deepq_act_lag(m, true);
    printf("deepq acting network after updates: %d weights differ, %d after its sync\n", lag, synced);
    assert_true(lag > 0);
    assert_int_equal(synced, 0);
    model_destroy(m);
}

/* deepq infer: the batch of games steps on the engine's threads; they play
 * exactly the same games with 1 thread and with 2 (same seed). */
static uint64_t play_infer(int threads, int steps, int64_t *score)
{
    model_config cfg = { .mode = MODEL_INFER, .preset = MODEL_TINY, .seed = 5, .plan = true };
    model *m = NULL;
    exec_threads_set(threads);
    assert_int_equal(model_create(model_find("deepq"), &cfg, &m), EXEC_OK);
    uint64_t h0 = model_deepq_games_digest(m, score);
    float l;
    for (int i = 0; i < steps; i++)
        assert_int_equal(model_step(m, &l), EXEC_OK);
    uint64_t h = model_deepq_games_digest(m, score);
    assert_true(h != h0); /* the games moved */
    model_destroy(m);
    exec_threads_set(0);
    return h;
}

static void test_deepq_infer_threads(void **state)
{
    (void)state;
    int64_t s1, s2;
    uint64_t h1 = play_infer(1, 60, &s1), h2 = play_infer(2, 60, &s2);
    printf("deepq infer, 60 steps: digest %016llx (1 thread) %016llx (2 threads), score %lld %lld\n",
           (unsigned long long)h1, (unsigned long long)h2, (long long)s1, (long long)s2);
    assert_true(h1 == h2);
    assert_int_equal(s1, s2);
}

/* ---- the game on its own ---- */

static void test_breakout_deterministic(void **state)
{
    (void)state;
    model_breakout a, b, c;
    model_breakout_reset(&a, 7);
    model_breakout_reset(&b, 7);
    model_breakout_reset(&c, 8);
    uint8_t fa[MODEL_BREAKOUT_SIZE * MODEL_BREAKOUT_SIZE], fb[sizeof fa];
    uint64_t s = 12345;
    bool differs = false;
    for (int t = 0; t < 3000; t++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        int act = (int)((s >> 33) % 4);
        int ra = model_breakout_step(&a, act), rb = model_breakout_step(&b, act);
        model_breakout_step(&c, act);
        assert_int_equal(ra, rb);
        model_breakout_render(&a, fa);
        model_breakout_render(&b, fb);
        assert_memory_equal(fa, fb, sizeof fa);
        differs |= a.ball_x != c.ball_x || a.ball_y != c.ball_y;
    }
    assert_int_equal(a.score, b.score);
    assert_int_equal(a.lives, b.lives);
    assert_true(differs);                                       /* another seed plays another game */
    assert_true(a.score > 0 || a.lives < MODEL_BREAKOUT_LIVES); /* something happened */
}

static void test_breakout_score(void **state)
{
    (void)state;
    model_breakout b;
    model_breakout_reset(&b, 1);
    assert_false(b.launched);
    assert_int_equal(model_breakout_step(&b, MODEL_BREAKOUT_NOOP), 0);
    assert_false(b.launched); /* the ball waits for FIRE */
    model_breakout_step(&b, MODEL_BREAKOUT_FIRE);
    assert_true(b.launched);
    /* put the ball just under the bottom row's brick in column 3, moving up */
    int row = MODEL_BREAKOUT_ROWS - 1, col = 3;
    b.ball_x = (MODEL_BREAKOUT_WALL_X0 + col * MODEL_BREAKOUT_BRICK_W + 3) * 16;
    b.ball_y = (MODEL_BREAKOUT_BRICK_Y0 + (row + 1) * MODEL_BREAKOUT_BRICK_H + 1) * 16;
    b.ball_vx = 0;
    b.ball_vy = -32;
    int r = model_breakout_step(&b, MODEL_BREAKOUT_NOOP);
    assert_int_equal(r, model_breakout_row_points(row));
    assert_int_equal(r, 1);
    assert_int_equal(b.bricks[row][col], 0);
    assert_int_equal(b.bricks_left, MODEL_BREAKOUT_ROWS * MODEL_BREAKOUT_COLS - 1);
    assert_int_equal(b.score, 1);
    assert_true(b.ball_vy > 0); /* bounced */
    /* the top row is worth 7 */
    assert_int_equal(model_breakout_row_points(0), 7);
    /* rendering: the ball is white, the paddle grey, the missing brick black */
    uint8_t f[MODEL_BREAKOUT_SIZE * MODEL_BREAKOUT_SIZE];
    model_breakout_render(&b, f);
    assert_int_equal(f[(b.ball_y / 16) * MODEL_BREAKOUT_SIZE + b.ball_x / 16], 255);
    assert_int_equal(f[MODEL_BREAKOUT_PADDLE_Y * MODEL_BREAKOUT_SIZE + b.paddle_x + 1], 200);
    int by = MODEL_BREAKOUT_BRICK_Y0 + row * MODEL_BREAKOUT_BRICK_H,
        bx = MODEL_BREAKOUT_WALL_X0 + col * MODEL_BREAKOUT_BRICK_W;
    assert_int_equal(f[by * MODEL_BREAKOUT_SIZE + bx], 0);
    assert_int_not_equal(f[by * MODEL_BREAKOUT_SIZE + bx + MODEL_BREAKOUT_BRICK_W], 0);
}

static void test_breakout_terminal(void **state)
{
    (void)state;
    model_breakout b;
    /* the paddle runs away left: every ball is lost; five lives, then over */
    model_breakout_reset(&b, 5);
    int lost = 0, t = 0;
    while (!b.over && t < 100000) {
        int lives = b.lives;
        int act = b.launched ? MODEL_BREAKOUT_LEFT : MODEL_BREAKOUT_FIRE;
        /* keep the paddle away from the ball */
        if (b.launched && b.ball_x / 16 < 40)
            act = MODEL_BREAKOUT_RIGHT;
        model_breakout_step(&b, act);
        lost += b.lives < lives;
        t++;
    }
    assert_true(b.over);
    assert_int_equal(b.lives, 0);
    assert_int_equal(lost, MODEL_BREAKOUT_LIVES);
    int score = b.score;
    assert_int_equal(model_breakout_step(&b, MODEL_BREAKOUT_FIRE), 0); /* over: nothing moves */
    assert_int_equal(b.score, score);
    /* clearing the wall ends the game */
    model_breakout_reset(&b, 5);
    memset(b.bricks, 0, sizeof b.bricks);
    b.bricks[0][0] = 1;
    b.bricks_left = 1;
    model_breakout_step(&b, MODEL_BREAKOUT_FIRE);
    b.ball_x = (MODEL_BREAKOUT_WALL_X0 + 2) * 16;
    b.ball_y = (MODEL_BREAKOUT_BRICK_Y0 + MODEL_BREAKOUT_BRICK_H + 1) * 16;
    b.ball_vx = 0;
    b.ball_vy = -32;
    assert_int_equal(model_breakout_step(&b, MODEL_BREAKOUT_NOOP), 7);
    assert_true(b.over);
    assert_int_equal(b.bricks_left, 0);
}

/* ---- infer runs forward-phase ops only ---- */

static uint64_t g_ops, g_bad, g_backward;
static void count_ops(void *ctx, const exec_graph *g, uint32_t nrec, const uint32_t *nodes, const uint64_t *begins,
                      const uint64_t *ends)
{
    (void)ctx;
    (void)begins, (void)ends;
    for (uint32_t i = 0; i < nrec; i++) {
        const exec_node *n = exec_node_get(g, nodes[i]);
        g_ops++;
        g_bad += n->phase != EXEC_PHASE_forward;
        g_backward += n->phase == EXEC_PHASE_backward;
    }
}

static void run_steps(const char *name, model_mode mode, int steps)
{
    model_config cfg = { .mode = mode, .preset = MODEL_TINY, .seed = 2, .plan = true };
    model *m = NULL;
    assert_int_equal(model_create(model_find(name), &cfg, &m), EXEC_OK);
    float l;
    for (int i = 0; i < steps; i++)
        assert_int_equal(model_step(m, &l), EXEC_OK);
    model_destroy(m);
}

static void test_infer_forward_only(void **state)
{
    (void)state;
    exec_hooks h = { .ops = count_ops };
    const char *names[] = { "alexnet", "vgg", "residual", "deepq" };
    for (int i = 0; i < 4; i++) {
        g_ops = g_bad = g_backward = 0;
        exec_hooks_set(&h);
        run_steps(names[i], MODEL_INFER, 2);
        exec_hooks_set(NULL);
        printf("%s infer: %llu ops, %llu not forward\n", names[i], (unsigned long long)g_ops,
               (unsigned long long)g_bad);
        assert_true(g_ops > 10);
        assert_int_equal(g_bad, 0);
        /* the hook does see other phases: one train step has backward ops */
        g_ops = g_bad = g_backward = 0;
        exec_hooks_set(&h);
        run_steps(names[i], MODEL_TRAIN, 1);
        exec_hooks_set(NULL);
        assert_true(g_backward > 0);
    }
}

/* ---- the images ---- */

static void test_images_deterministic(void **state)
{
    (void)state;
    model_images a, b, c;
    model_images_init(&a, 10, 3, 16, 16, 4);
    model_images_init(&b, 10, 3, 16, 16, 4);
    model_images_init(&c, 10, 3, 16, 16, 5);
    float xa[4 * 768], xb[4 * 768], xc[4 * 768];
    int32_t la[4], lb[4], lc[4];
    model_images_fill(&a, 4, xa, la, 2);
    model_images_fill(&b, 4, xb, lb, 1);
    model_images_fill(&c, 4, xc, lc, 2);
    assert_memory_equal(xa, xb, sizeof xa);
    assert_memory_equal(la, lb, sizeof la);
    assert_memory_not_equal(xa, xc, sizeof xa);
    for (int i = 0; i < 4; i++)
        assert_true(la[i] >= 0 && la[i] < 10);
    /* a batch renders its images in parallel: the same as one at a time */
    model_images e;
    model_images_init(&e, 10, 3, 16, 16, 4);
    float xe[4 * 768];
    int32_t le[4];
    for (int i = 0; i < 4; i++)
        model_images_fill(&e, 1, xe + i * 768, le + i, 2);
    assert_memory_equal(xa, xe, sizeof xa);
    assert_memory_equal(la, le, sizeof la);
}

/* ---- the CLI ---- */

static int sh(const char *args, char **out)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s/models_conv.err", FATHOM_BIN, args, FATHOM_TEST_TMP);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 20, len = 0, n;
    char *buf = malloc(cap);
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0)
        len += n;
    buf[len] = 0;
    int st = pclose(p);
    if (out)
        *out = buf;
    else
        free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *err_text(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/models_conv.err", FATHOM_TEST_TMP);
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char *e = calloc(1, 4096);
    size_t r = fread(e, 1, 4095, f);
    (void)r;
    fclose(f);
    return e;
}

static void expect_usage(const char *args, const char *needle)
{
    assert_int_equal(sh(args, NULL), 2);
    char *e = err_text();
    if (!strstr(e, needle))
        fprintf(stderr, "fathom %s: '%s' lacks '%s'\n", args, e, needle);
    assert_non_null(strstr(e, needle));
    assert_non_null(strchr(e, '\n'));
    assert_null(strchr(strchr(e, '\n') + 1, '\n')); /* one line */
    free(e);
}

static void test_cli_errors(void **state)
{
    (void)state;
    expect_usage("run nosuchmodel", "nosuchmodel");
    expect_usage("run", "which model");
    expect_usage("run alexnet --preset huge", "huge");
    expect_usage("run alexnet --mode eval", "eval");
    expect_usage("run alexnet --steps 0", "--steps");
    expect_usage("run alexnet --bogus", "--bogus");
    expect_usage("run alexnet --format xml", "xml");
    expect_usage("run residual --depth 42", "--depth");
    expect_usage("run alexnet --depth 50", "residual");
    expect_usage("list --bogus", "--bogus");
}

static void test_cli_run_json(void **state)
{
    (void)state;
    char *out = NULL;
    assert_int_equal(sh("run deepq --mode infer --steps 3 --threads 1 --format json", &out), 0);
    char *save = NULL;
    int lines = 0;
    for (char *l = strtok_r(out, "\n", &save); l; l = strtok_r(NULL, "\n", &save), lines++) {
        json_error_t e;
        json_t *o = json_loads(l, 0, &e);
        assert_non_null(o);
        if (lines == 0) {
            assert_string_equal(json_string_value(json_object_get(o, "model")), "deepq");
            assert_string_equal(json_string_value(json_object_get(o, "mode")), "infer");
            assert_string_equal(json_string_value(json_object_get(o, "preset")), "tiny");
            assert_int_equal(json_integer_value(json_object_get(o, "batch")), 8);
            assert_int_equal(json_integer_value(json_object_get(o, "params")), 56940);
        } else if (lines <= 3) {
            assert_int_equal(json_integer_value(json_object_get(o, "step")), lines - 1);
            assert_true(json_is_null(json_object_get(o, "loss"))); /* no loss when acting */
            double ms = json_real_value(json_object_get(o, "ms"));
            double engine = json_real_value(json_object_get(o, "engine_ms"));
            assert_true(ms > 0);
            /* the forward pass runs in the engine; the game step does not */
            assert_true(engine > 0 && engine <= ms);
        } else {
            assert_true(json_is_true(json_object_get(o, "summary")));
            assert_int_equal(json_integer_value(json_object_get(o, "steps")), 3);
            double mean = json_real_value(json_object_get(o, "mean_ms"));
            double engine = json_real_value(json_object_get(o, "mean_engine_ms"));
            assert_true(engine > 0 && engine <= mean);
        }
        json_decref(o);
    }
    assert_int_equal(lines, 5);
    free(out);
    assert_int_equal(sh("run alexnet --steps 2 --threads 1", &out), 0);
    assert_non_null(strstr(out, "mean step"));
    free(out);
    assert_int_equal(sh("list --format json", &out), 0);
    json_error_t e;
    json_t *arr = json_loads(out, 0, &e);
    assert_true(json_is_array(arr));
    bool seen = false;
    for (size_t i = 0; i < json_array_size(arr); i++) {
        json_t *o = json_array_get(arr, i);
        if (strcmp(json_string_value(json_object_get(o, "name")), "vgg") == 0) {
            seen = true;
            json_t *full = json_object_get(json_object_get(o, "presets"), "full");
            assert_int_equal(json_integer_value(json_object_get(full, "params")), 143667240);
        }
    }
    assert_true(seen);
    json_decref(arr);
    free(out);
}

int main(void)
{
    exec_threads_set(1); /* tiny kernels: threads only add synchronisation */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params_full),
        cmocka_unit_test(test_images_deterministic),
        cmocka_unit_test(test_breakout_deterministic),
        cmocka_unit_test(test_breakout_score),
        cmocka_unit_test(test_breakout_terminal),
        cmocka_unit_test(test_infer_forward_only),
        cmocka_unit_test(test_deepq_td_fixed_batch),
        cmocka_unit_test(test_deepq_infer_threads),
        cmocka_unit_test(test_alexnet_learns),
        cmocka_unit_test(test_residual_learns),
        cmocka_unit_test(test_vgg_learns),
        cmocka_unit_test(test_cli_errors),
        cmocka_unit_test(test_cli_run_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
