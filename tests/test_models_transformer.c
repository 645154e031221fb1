/* test_models_transformer.c -- the Transformer workload (models/transformer.c)
 * and its data (models/tokens.c): the base model's parameter count, the loss
 * falls on tiny, greedy decoding copies after that training, infer runs
 * forward ops only, independent branches give the same result on inter-op
 * workers, the copy task, and the token-id loader on files the test writes
 * (malformed ones rejected with a one-line error naming file and line). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "models/model.h"
#include "models/seqdata.h"
#include "models/transformer.h"
#include "tests/fixtures/graph_probe.h"
#include "tests/fixtures/testdir.h"

static const char *write_file(const char *name, const char *text)
{
    static char path[16][4200];
    static int slot;
    char *p = path[slot++ % 16];
    snprintf(p, sizeof path[0], "%s/%s", testdir_path, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    fclose(f);
    return p;
}

static model_config cfg_of(model_mode mode, model_preset preset, uint64_t seed)
{
    return (model_config){ .mode = mode, .preset = preset, .seed = seed, .inter = 1, .plan = true };
}

static model *create(model_config c)
{
    model *m = NULL;
    if (model_create(&model_transformer, &c, &m))
        fail_msg("transformer %s %s: %s", model_mode_name(c.mode), model_preset_name(c.preset), exec_errmsg());
    return m;
}

/* ---- the base model's parameters ---------------------------------------- */
static void test_params(void **state)
{
    (void)state;
    for (int mode = 0; mode < MODEL_MODE_COUNT; mode++) {
        model_config c = cfg_of((model_mode)mode, MODEL_FULL, 1);
        c.plan = false;
        model *m = create(c);
        uint32_t emb = weight_named(m->g, "embedding");
        assert_true(emb != 0);
        const exec_tensor *e = exec_tensor_get(m->g, emb);
        assert_int_equal(e->shape[0], 37000);
        assert_int_equal(e->shape[1], 512);
        int64_t total = exec_param_count(m->g), stacks = 0;
        for (uint32_t i = 0; i < exec_weight_count(m->g); i++)
            if (exec_weight_id(m->g, i) != emb)
                stacks += exec_tensor_get(m->g, exec_weight_id(m->g, i))->numel;
        printf("transformer full %s: %lld parameters, %lld in the stacks, %u nodes\n",
               model_mode_name((model_mode)mode), (long long)total, (long long)stacks, exec_node_count(m->g));
        /* nn.Transformer(512, 8, 6, 6, 2048): attention, FFN, layer norms
         * with the two final ones; plus the one shared 37000 x 512 embedding */
        assert_int_equal(stacks, 44140544);
        assert_int_equal(total, 44140544 + 37000 * 512);
        model_destroy(m);
    }
}

/* ---- training on tiny, then greedy decoding ----------------------------- */
#define TRAIN_STEPS 600
static model *trained; /* shared by the two tests below */
static double first_loss, last_loss;

static void train_tiny(void)
{
    if (trained)
        return;
    trained = create(cfg_of(MODEL_TRAIN, MODEL_TINY, 42));
    first_loss = last_loss = 0;
    for (int i = 0; i < TRAIN_STEPS; i++) {
        float loss = NAN;
        if (model_step(trained, &loss))
            fail_msg("step %d: %s", i, exec_errmsg());
        assert_true(isfinite(loss));
        if (i < 3)
            first_loss += loss / 3.0;
        if (i >= TRAIN_STEPS - 10)
            last_loss += loss / 10.0;
    }
}

static void test_learns(void **state)
{
    (void)state;
    train_tiny();
    printf("transformer tiny: loss %.4f -> %.4f over %d steps (ratio %.3f, must be < 0.6)\n", first_loss, last_loss,
           TRAIN_STEPS, last_loss / first_loss);
    assert_true(last_loss < 0.6 * first_loss);
}

/* The trained weights in an infer model of another seed (sequences it has
 * not seen): greedy decoding copies most tokens, EOS included. */
static void test_greedy_copies(void **state)
{
    (void)state;
    train_tiny();
    model *m = create(cfg_of(MODEL_INFER, MODEL_TINY, 4242));
    assert_int_equal(exec_weight_count(m->g), exec_weight_count(trained->g));
    for (uint32_t i = 0; i < exec_weight_count(m->g); i++) {
        const exec_tensor *w = exec_tensor_get(m->g, exec_weight_id(m->g, i));
        uint32_t src = weight_named(trained->g, w->name);
        assert_true(src != 0);
        assert_int_equal(exec_tensor_get(trained->g, src)->bytes, w->bytes);
        memcpy(w->data, exec_data(trained->g, src), w->bytes);
    }
    int64_t right = 0, total = 0, exact = 0;
    for (int step = 0; step < 4; step++) {
        float loss;
        assert_int_equal(model_step(m, &loss), EXEC_OK);
        const int32_t *src, *out;
        int len;
        assert_int_equal(model_transformer_last_batch(m, &src, &out, &len), EXEC_OK);
        for (int b = 0; b < m->batch; b++) {
            int ok = 1;
            for (int t = 0; t < len; t++) {
                int32_t want = src[b * len + t];
                if (want == MODEL_TEXT_PAD)
                    break;
                right += out[b * len + t] == want;
                ok &= out[b * len + t] == want;
                total++;
            }
            exact += ok;
        }
    }
    printf("greedy decoding after %d steps: %lld of %lld tokens right (%.1f%%), %lld of %d sequences exact\n",
           TRAIN_STEPS, (long long)right, (long long)total, 100.0 * (double)right / (double)total, (long long)exact,
           4 * m->batch);
    assert_true(right * 4 > total * 3); /* most: over 75% */
    model_destroy(m);
}

static int teardown_trained(void **state)
{
    (void)state;
    model_destroy(trained);
    trained = NULL;
    return 0;
}

/* ---- infer is forward only; branches on inter-op workers ---------------- */

static void test_modes(void **state)
{
    (void)state;
    exec_hooks h = { .ops = count_phase };
    for (int mode = 0; mode < MODEL_MODE_COUNT; mode++) {
        model *m = create(cfg_of((model_mode)mode, MODEL_TINY, 7));
        memset(phase_count, 0, sizeof phase_count);
        exec_hooks_set(&h);
        float loss = NAN;
        exec_status s = model_step(m, &loss);
        exec_hooks_set(NULL);
        assert_int_equal(s, EXEC_OK);
        assert_true(phase_count[EXEC_PHASE_forward] > 0);
        if (mode == MODEL_INFER) {
            assert_int_equal(phase_count[EXEC_PHASE_backward] + phase_count[EXEC_PHASE_update], 0);
            assert_true(isnan(loss));
        } else {
            assert_true(phase_count[EXEC_PHASE_backward] > 0 && phase_count[EXEC_PHASE_update] > 0);
            assert_true(isfinite(loss));
        }
        model_destroy(m);
    }
}

/* The graph's independent branches (Q, K and V; every layer's
 * encoder-decoder keys and values) on two inter-op workers: the losses of a
 * few steps are the ones one worker computes. */
static void test_inter_op(void **state)
{
    (void)state;
    float loss[2][3];
    for (int w = 0; w < 2; w++) {
        model_config c = cfg_of(MODEL_TRAIN, MODEL_TINY, 9);
        c.inter = w + 1;
        model *m = create(c);
        for (int i = 0; i < 3; i++)
            assert_int_equal(model_step(m, &loss[w][i]), EXEC_OK);
        model_destroy(m);
    }
    for (int i = 0; i < 3; i++) {
        printf("step %d: loss %.6f (1 worker), %.6f (2 workers)\n", i, (double)loss[0][i], (double)loss[1][i]);
        assert_true(fabsf(loss[0][i] - loss[1][i]) <= 1e-5f * fabsf(loss[0][i]));
    }
}

/* ---- the copy task ------------------------------------------------------ */
static void test_copy_task(void **state)
{
    (void)state;
    for (int reverse = 0; reverse < 2; reverse++) {
        model_text_corpus *a = NULL, *b = NULL, *c = NULL;
        assert_int_equal(model_tokens_copy_task(200, 9, 20, reverse, 5, &a), EXEC_OK);
        assert_int_equal(model_tokens_copy_task(200, 9, 20, reverse, 5, &b), EXEC_OK);
        assert_int_equal(model_tokens_copy_task(200, 9, 20, reverse, 6, &c), EXEC_OK);
        assert_memory_equal(a->src, b->src, 200 * 9 * sizeof *a->src); /* deterministic for the seed */
        assert_memory_not_equal(a->src, c->src, 200 * 9 * sizeof *a->src);
        int minlen = 9, maxlen = 0;
        for (int i = 0; i < a->n; i++) {
            const int32_t *s = a->src + i * 9, *t = a->tgt + i * 9;
            int k = 0;
            while (k < 9 && s[k] >= MODEL_TEXT_FIRST) {
                assert_true(s[k] < 20);
                k++;
            }
            assert_true(k < 9);
            assert_int_equal(s[k], MODEL_TEXT_EOS);
            assert_int_equal(t[k], MODEL_TEXT_EOS);
            for (int j = 0; j < k; j++)
                assert_int_equal(t[j], s[reverse ? k - 1 - j : j]);
            for (int j = k + 1; j < 9; j++)
                assert_true(s[j] == MODEL_TEXT_PAD && t[j] == MODEL_TEXT_PAD);
            minlen = k < minlen ? k : minlen;
            maxlen = k > maxlen ? k : maxlen;
        }
        assert_int_equal(minlen, 4); /* lengths fill [len/2, len-1] */
        assert_int_equal(maxlen, 8);
        model_text_destroy(a);
        model_text_destroy(b);
        model_text_destroy(c);
    }
    model_text_corpus *x = NULL;
    assert_int_not_equal(model_tokens_copy_task(10, 2, 20, false, 1, &x), EXEC_OK);
    assert_null(x);
}

/* ---- the token-id loader ------------------------------------------------ */
static void test_tokens_loader(void **state)
{
    (void)state;
    const char *path = write_file("pairs.txt", "5 6 7 ||| 7 6 5\n"
                                               "\n"
                                               "0 1\t2 3 4\r\n"
                                               "1 2 3 4 5 6 7 8 9 ||| 1\n" /* source too long: skipped */
                                               "9 100000 ||| 15 16\n");    /* 100000 and 16: beyond the vocabulary */
    model_text_corpus *c = NULL;
    if (model_tokens_load(path, 5, 5, 20, &c))
        fail_msg("%s", exec_errmsg());
    assert_int_equal(c->n, 3);
    const int F = MODEL_TEXT_FIRST, E = MODEL_TEXT_EOS, U = MODEL_TEXT_UNK;
    const int32_t src[3][5] = { { 5 + F, 6 + F, 7 + F, E, 0 }, { 0 + F, 1 + F, E, 0, 0 }, { 9 + F, U, E, 0, 0 } };
    const int32_t tgt[3][5] = { { 7 + F, 6 + F, 5 + F, E, 0 }, { 2 + F, 3 + F, 4 + F, E, 0 }, { 15 + F, U, E, 0, 0 } };
    assert_memory_equal(c->src, src, sizeof src);
    assert_memory_equal(c->tgt, tgt, sizeof tgt);
    model_text_destroy(c);

    static const struct {
        const char *text, *want;
    } bad[] = {
        { "1 2 3\n", "bad.txt:1: no ' ||| ' or tab" },
        { "1 2 ||| 3\n4 x5 ||| 6\n", "bad.txt:2: 'x5' is not a token id" },
        { "1 -2 ||| 3\n", "bad.txt:1: '-2' is not a token id" },
        { "1 2 ||| 3 99999999999\n", "bad.txt:1: '99999999999' is not a token id" },
        { " ||| 3\n", "bad.txt:1: the source side has no token ids" },
        { "1 2\t\n", "bad.txt:1: the target side has no token ids" },
        { "1 2 3 4 5 6 ||| 1\n", "no sentence pair fits 4 source and 4 target tokens" },
        { "", "no sentence pair fits" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *p = write_file("bad.txt", bad[i].text);
        c = NULL;
        assert_int_not_equal(model_tokens_load(p, 5, 5, 20, &c), EXEC_OK);
        assert_null(c);
        printf("rejected: %s\n", exec_errmsg());
        assert_non_null(strstr(exec_errmsg(), bad[i].want));
    }
    assert_int_not_equal(model_tokens_load("/nonexistent/pairs.txt", 5, 5, 20, &c), EXEC_OK);
    assert_non_null(strstr(exec_errmsg(), "/nonexistent/pairs.txt"));

    /* the workload reads it with --data */
    model_config mc = cfg_of(MODEL_TRAIN, MODEL_TINY, 1);
    mc.data_path = write_file("train.txt", "4 5 6 ||| 4 5 6\n7 8 ||| 7 8\n9 10 11 4 ||| 9 10 11 4\n");
    model *m = create(mc);
    float loss = NAN;
    assert_int_equal(model_step(m, &loss), EXEC_OK);
    assert_true(isfinite(loss));
    model_destroy(m);
}

int main(void)
{
    exec_threads_set(2);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_params),        cmocka_unit_test(test_copy_task), cmocka_unit_test(test_tokens_loader),
        cmocka_unit_test(test_modes),         cmocka_unit_test(test_inter_op),  cmocka_unit_test(test_learns),
        cmocka_unit_test(test_greedy_copies),
    };
    int r = cmocka_run_group_tests(tests, testdir_setup_all, testdir_teardown_all);
    teardown_trained(NULL);
    return r;
}
