/* test_models_seq.c -- the sequence and generative workloads (seq2seq,
 * memnet, speech, autoenc) and their data sources: every model learns on
 * its tiny preset, infer runs forward-phase ops only, the speech model's
 * backward-direction RNN is built and executed, autoenc has the paper's
 * parameter count, and the loaders take real-format files the test writes
 * (and reject malformed ones with a clear error). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/alloc.h"
#include "exec/exec.h"
#include "models/model.h"
#include "models/seqdata.h"
#include "tests/fixtures/graph_probe.h"

static char tmpdir[256];

static int setup_tmp(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/fathom-test-seq-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown_tmp(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

static const char *tmpfile_write(const char *name, const void *data, size_t len)
{
    static char path[64][320];
    static int slot;
    char *p = path[slot++ % 64];
    snprintf(p, 320, "%s/%s", tmpdir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    fclose(f);
    return p;
}
#define WRITE_STR(name, s) tmpfile_write(name, s, strlen(s))

static model_config cfg_of(model_mode mode, model_preset preset)
{
    return (model_config){ .mode = mode, .preset = preset, .seed = 42, .inter = 1, .plan = true };
}

/* ---- every model learns on tiny ---------------------------------------- */

/* Runs `steps` train steps; the loss must be finite and the mean of the last
 * five below `ratio` times the mean of the first three. */
static void learns_seed(const char *name, int steps, double ratio, uint64_t seed)
{
    const model_def *d = model_find(name);
    assert_non_null(d);
    model_config c = cfg_of(MODEL_TRAIN, MODEL_TINY);
    c.seed = seed;
    model *m = NULL;
    exec_status s = model_create(d, &c, &m);
    if (s)
        fail_msg("%s: %s", name, exec_errmsg());
    double first = 0, last = 0;
    for (int i = 0; i < steps; i++) {
        float loss = NAN;
        s = model_step(m, &loss);
        if (s)
            fail_msg("%s step %d: %s", name, i, exec_errmsg());
        assert_true(isfinite(loss));
        if (i < 3)
            first += loss / 3.0;
        if (i >= steps - 5)
            last += loss / 5.0;
    }
    printf("%s tiny, seed %llu: loss %.4f -> %.4f over %d steps (ratio %.3f, must be < %.2f)\n", name,
           (unsigned long long)seed, first, last, steps, last / first, ratio);
    assert_true(last < ratio * first);
    model_destroy(m);
}

/* at the tests' seed and at the CLI's default (1), which a user meets first */
static void learns(const char *name, int steps, double ratio)
{
    learns_seed(name, steps, ratio, 42);
    learns_seed(name, steps, ratio, 1);
}

static void test_seq2seq_learns(void **state)
{
    (void)state;
    learns("seq2seq", 60, 0.75);
}
static void test_memnet_learns(void **state)
{
    (void)state;
    learns("memnet", 250, 0.5);
}
static void test_speech_learns(void **state)
{
    (void)state;
    learns("speech", 40, 0.7);
}
static void test_autoenc_learns(void **state)
{
    (void)state;
    learns("autoenc", 60, 0.6);
}

/* ---- phases: infer is forward only ------------------------------------- */

static void test_infer_forward_only(void **state)
{
    (void)state;
    static const char *const names[] = { "seq2seq", "memnet", "speech", "autoenc" };
    exec_hooks h = { .ops = count_phase };
    for (int i = 0; i < 4; i++) {
        for (int mode = 0; mode < MODEL_MODE_COUNT; mode++) {
            model_config c = cfg_of((model_mode)mode, MODEL_TINY);
            model *m = NULL;
            if (model_create(model_find(names[i]), &c, &m))
                fail_msg("%s: %s", names[i], exec_errmsg());
            memset(phase_count, 0, sizeof phase_count);
            exec_hooks_set(&h);
            float loss;
            exec_status s = model_step(m, &loss);
            exec_hooks_set(NULL);
            assert_int_equal(s, EXEC_OK);
            assert_true(phase_count[EXEC_PHASE_forward] > 0);
            if (mode == MODEL_INFER) {
                assert_int_equal(phase_count[EXEC_PHASE_backward], 0);
                assert_int_equal(phase_count[EXEC_PHASE_update], 0);
                for (uint32_t j = 0; j < exec_node_count(m->g); j++)
                    assert_int_equal(exec_node_get(m->g, j)->phase, EXEC_PHASE_forward);
            } else {
                assert_true(phase_count[EXEC_PHASE_backward] > 0);
                assert_true(phase_count[EXEC_PHASE_update] > 0);
                assert_true(isfinite(loss));
            }
            model_destroy(m);
        }
    }
}

/* ---- autoenc: the paper's parameter count, built without allocating ---- */
static void test_autoenc_params(void **state)
{
    (void)state;
    model_config c = cfg_of(MODEL_TRAIN, MODEL_FULL);
    c.plan = false;
    model *m = NULL;
    assert_int_equal(model_create(model_find("autoenc"), &c, &m), EXEC_OK);
    assert_int_equal(exec_param_count(m->g), 815824);
    model_destroy(m);
}

/* Full presets build (without allocating) and have plausible sizes. */
static void test_full_presets_build(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int64_t lo, hi;
    } want[] = {
        { "seq2seq", 30000000, 40000000 }, /* 2 embeddings + projection of 40000 x 256, LSTMs, attention */
        { "memnet", 1000, 100000 },        /* 4 embeddings V x 20 + 4 temporal 50 x 20 */
        { "speech", 5000000, 8000000 },    /* 26x1024 + 4 x 1024^2 + 1024^2 x 2 (U) + 1024x62 */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        for (int mode = 0; mode < MODEL_MODE_COUNT; mode++) {
            model_config c = cfg_of((model_mode)mode, MODEL_FULL);
            c.plan = false;
            model *m = NULL;
            if (model_create(model_find(want[i].name), &c, &m))
                fail_msg("%s full: %s", want[i].name, exec_errmsg());
            int64_t n = exec_param_count(m->g);
            printf("%s full %s: %lld parameters, %u nodes\n", want[i].name, model_mode_name((model_mode)mode),
                   (long long)n, exec_node_count(m->g));
            assert_true(n >= want[i].lo && n <= want[i].hi);
            model_destroy(m);
        }
    }
}

/* ---- speech: the backward direction exists and runs --------------------- */
static uint32_t bw_u, fw_u;
static int bw_runs, fw_runs;
static void count_rnn(void *ctx, const exec_graph *g, uint32_t nrec, const uint32_t *nodes, const uint64_t *begins,
                      const uint64_t *ends)
{
    (void)ctx;
    (void)begins, (void)ends;
    for (uint32_t i = 0; i < nrec; i++) {
        const exec_node *n = exec_node_get(g, nodes[i]);
        if (n->op != EXEC_OP_MatMul || n->phase != EXEC_PHASE_forward)
            continue;
        bw_runs += n->in[1] == bw_u;
        fw_runs += n->in[1] == fw_u;
    }
}

static void test_speech_birnn(void **state)
{
    (void)state;
    model_config c = cfg_of(MODEL_TRAIN, MODEL_TINY);
    model *m = NULL;
    assert_int_equal(model_create(model_find("speech"), &c, &m), EXEC_OK);
    exec_graph *g = m->g;
    bw_u = weight_named(g, "birnn/bw/U");
    fw_u = weight_named(g, "birnn/fw/U");
    assert_true(bw_u && fw_u);
    /* T - 1 recurrent MatMuls per direction in the forward graph */
    const exec_tensor *frames = exec_tensor_get(g, 1);
    int64_t T = frames->shape[0] / m->batch;
    int built_bw = 0;
    for (uint32_t j = 0; j < exec_node_count(g); j++) {
        const exec_node *n = exec_node_get(g, j);
        built_bw += n->op == EXEC_OP_MatMul && n->phase == EXEC_PHASE_forward && n->in[1] == bw_u;
    }
    assert_int_equal(built_bw, T - 1);
    /* the backward direction feeds the loss: its weight has a gradient */
    assert_true(exec_grad_of(g, bw_u) != 0);
    size_t nu = (size_t)exec_tensor_get(g, bw_u)->numel;
    float *before = malloc(nu * sizeof *before);
    assert_non_null(before);
    memcpy(before, exec_dataf(g, bw_u), nu * sizeof *before);
    exec_hooks h = { .ops = count_rnn };
    bw_runs = fw_runs = 0;
    exec_hooks_set(&h);
    float loss;
    exec_status s = model_step(m, &loss);
    exec_hooks_set(NULL);
    assert_int_equal(s, EXEC_OK);
    assert_int_equal(bw_runs, T - 1);
    assert_int_equal(fw_runs, T - 1);
    /* and it is trained */
    assert_true(memcmp(before, exec_dataf(g, bw_u), nu * sizeof *before) != 0);
    free(before);
    model_destroy(m);
}

/* ---- data: the generators' structure ----------------------------------- */
static void test_frames_recoverable(void **state)
{
    (void)state;
    model_frames *f = NULL;
    assert_int_equal(model_frames_create(61, 26, 5, &f), EXEC_OK);
    enum { T = 120, N = 6, C = 2, L = 12, W = 26 * (2 * C + 1) };
    float *x = malloc(sizeof(float) * T * N * W);
    int32_t lab[N * L], ll[N], sl[N];
    assert_non_null(x);
    model_frames_fill(f, 3, T, N, C, L, x, lab, ll, sl);
    int exact = 0;
    for (int n = 0; n < N; n++) {
        assert_int_equal(sl[n], T);
        assert_true(ll[n] >= L / 2 && ll[n] <= L);
        int dec[T], nd = 0, prev = -1;
        for (int t = 0; t < T; t++) {
            int c = model_frames_nearest(f, x + ((size_t)t * N + n) * W + C * 26);
            if (c != prev)
                dec[nd++] = c;
            prev = c;
        }
        exact += nd == ll[n] && memcmp(dec, lab + n * L, (size_t)nd * sizeof *dec) == 0;
        /* the context window holds the neighbours' base features */
        const float *mid = x + ((size_t)5 * N + n) * W, *next = x + ((size_t)6 * N + n) * W;
        assert_memory_equal(mid + (C + 1) * 26, next + C * 26, 26 * sizeof(float));
        const float *first = x + (size_t)n * W;
        for (int j = 0; j < C * 26; j++)
            assert_true(first[j] == 0.0f);
    }
    assert_int_equal(exact, N);
    free(x);
    model_frames_destroy(f);
}

static void test_text_synth(void **state)
{
    (void)state;
    model_text_corpus *c = NULL;
    assert_int_equal(model_text_synth(200, 10, 15, 500, 400, 9, &c), EXEC_OK);
    for (int i = 0; i < c->n; i++) {
        const int32_t *s = c->src + i * 10;
        int len = 0;
        while (len < 10 && s[len] != MODEL_TEXT_PAD)
            len++;
        assert_true(len >= 3);
        int32_t want[16] = { 0 };
        int tl = model_text_synth_translate(s, len, 500, 400, want);
        assert_memory_equal(c->tgt + i * 15, want, (size_t)tl * sizeof *want);
        for (int t = 0; t < tl; t++)
            assert_true(want[t] >= 0 && want[t] < 400);
    }
    model_text_destroy(c);
}

static void test_babi_generator(void **state)
{
    (void)state;
    model_babi_set *s = NULL;
    assert_int_equal(model_babi_generate(50, 3, 10, &s), EXEC_OK);
    assert_int_equal(s->n, 250);
    /* every answer is the place in the most recent memory naming the person */
    int name_pos = 2; /* "where is NAME" */
    int32_t *mem = calloc((size_t)s->mem * s->sent_len, sizeof *mem);
    assert_non_null(mem);
    for (int q = 0; q < s->n; q++) {
        int32_t who = s->queries[q * s->sent_len + name_pos];
        int found = 0;
        model_babi_memory(s, q, mem);
        for (int slot = 0; slot < s->mem && !found; slot++) {
            const int32_t *m = mem + (size_t)slot * s->sent_len;
            if (m[0] != who)
                continue;
            int last = 0;
            while (last + 1 < s->sent_len && m[last + 1])
                last++;
            assert_int_equal(m[last], s->answers[q]);
            found = 1;
        }
        assert_true(found);
    }
    free(mem);
    model_babi_destroy(s);
}

/* ---- loaders on files the test writes ---------------------------------- */
static void expect_error(exec_status s, const char *needle)
{
    assert_int_not_equal(s, EXEC_OK);
    const char *msg = exec_errmsg();
    if (!strstr(msg, needle))
        fail_msg("error '%s' does not mention '%s'", msg, needle);
    printf("  rejected: %s\n", msg);
}

static void test_babi_loader(void **state)
{
    (void)state;
    const char *good = "1 Mary moved to the bathroom.\n"
                       "2 John went to the hallway.\n"
                       "3 Where is Mary? \tbathroom\t1\n"
                       "4 Daniel went back to the hallway.\n"
                       "5 Mary travelled to the office.\n"
                       "6 Where is Mary? \toffice\t5\n"
                       "1 Sandra journeyed to the garden.\n"
                       "2 Where is Sandra? \tgarden\t1\n";
    model_babi_set *s = NULL;
    assert_int_equal(model_babi_load(WRITE_STR("qa1.txt", good), 3, &s), EXEC_OK);
    assert_int_equal(s->n, 3);
    assert_int_equal(s->mem, 3);
    assert_int_equal(s->sent_len, 6); /* "daniel went back to the hallway" */
    /* vocabulary: sorted, nil first, lower-cased, punctuation dropped */
    assert_string_equal(s->words[0], "<nil>");
    for (int i = 2; i < s->vocab; i++)
        assert_true(strcmp(s->words[i - 1], s->words[i]) < 0);
    assert_true(model_babi_word(s, "where") > 0);
    assert_true(model_babi_word(s, "Mary") < 0 && model_babi_word(s, "mary") > 0);
    assert_int_equal(s->answers[0], model_babi_word(s, "bathroom"));
    assert_int_equal(s->answers[1], model_babi_word(s, "office"));
    assert_int_equal(s->answers[2], model_babi_word(s, "garden"));
    /* question 2's memory: the most recent statement first, questions skipped */
    const int J = s->sent_len;
    int32_t m1[3 * 6], m2[3 * 6];
    assert_int_equal(s->nsent, 5); /* the statements once each */
    model_babi_memory(s, 0, m1);   /* question 1: two statements before it */
    assert_int_equal(m1[0], model_babi_word(s, "john"));
    assert_int_equal(m1[J], model_babi_word(s, "mary"));
    for (int i = 2 * J; i < 3 * J; i++)
        assert_int_equal(m1[i], 0);
    model_babi_memory(s, 1, m1);
    assert_int_equal(m1[0], model_babi_word(s, "mary"));
    assert_int_equal(m1[4], model_babi_word(s, "office"));
    assert_int_equal(m1[J + 0], model_babi_word(s, "daniel"));
    assert_int_equal(m1[2 * J + 0], model_babi_word(s, "john")); /* mem 3: sentence 1 dropped */
    /* question 3 starts a new story: one sentence, the rest nil */
    for (int i = 0; i < 3 * 6; i++)
        m2[i] = -1; /* every slot written: the nil ones too */
    model_babi_memory(s, 2, m2);
    assert_int_equal(m2[0], model_babi_word(s, "sandra"));
    for (int i = J; i < s->mem * J; i++)
        assert_int_equal(m2[i], 0);
    assert_int_equal(s->queries[2 * J + 2], model_babi_word(s, "sandra"));
    assert_int_equal(s->queries[2 * J + 3], 0);
    model_babi_destroy(s);

    /* the generator's text goes through the same parser */
    size_t len;
    char *text = model_babi_generate_text(4, 1, &len);
    assert_non_null(text);
    assert_int_equal(model_babi_load(tmpfile_write("gen.txt", text, len), 50, &s), EXEC_OK);
    assert_int_equal(s->n, 20);
    model_babi_destroy(s);
    base_free(text);

    /* malformed files: a clear error naming the file and line */
    static const struct {
        const char *text, *needle;
    } bad[] = {
        { "Mary moved to the bathroom.\n", "expected a sentence number" },
        { "1 Mary moved to the bathroom.\n3 Where is Mary?\tbathroom\t1\n", "sentence number 3 follows 1" },
        { "1 Mary moved to the bathroom.\n2 Where is Mary?\t\t1\n", "without an answer" },
        { "1 Mary moved to the bathroom.\n2 John went to the hallway.\n", "no questions" },
        { "1 Mary moved.\n2 ...\n3 Where is Mary?\tbathroom\n", ":2: empty sentence" },
        { "1Mary moved.\n", "expected a space" },
        { "99999999999 Mary moved.\n", "too large" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        s = (model_babi_set *)1;
        expect_error(model_babi_load(WRITE_STR("bad.txt", bad[i].text), 10, &s), bad[i].needle);
        assert_null(s);
    }
    expect_error(model_babi_load(tmpfile_write("empty.txt", "", 0), 10, &s), "empty file");
    expect_error(model_babi_load(tmpfile_write("nul.txt", "1 Mary\0 moved\n", 14), 10, &s), "NUL");
    char longline[6000];
    memset(longline, 'a', sizeof longline);
    memcpy(longline, "1 ", 2);
    longline[sizeof longline - 1] = '\n';
    expect_error(model_babi_load(tmpfile_write("long.txt", longline, sizeof longline), 10, &s), "longer than");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "%s/no-such-file", tmpdir);
    expect_error(model_babi_load(cmd, 10, &s), "no-such-file");
    /* and the model reports the loader's error */
    model_config c = cfg_of(MODEL_TRAIN, MODEL_TINY);
    c.data_path = WRITE_STR("bad2.txt", "1 Mary moved to the bathroom.\n3 Where is Mary?\tbathroom\t1\n");
    model *m = (model *)1;
    expect_error(model_create(model_find("memnet"), &c, &m), "bad2.txt:2");
    assert_null(m);
    /* a good file trains */
    c.data_path = WRITE_STR("qa1b.txt", good);
    assert_int_equal(model_create(model_find("memnet"), &c, &m), EXEC_OK);
    float loss;
    assert_int_equal(model_step(m, &loss), EXEC_OK);
    assert_true(isfinite(loss));
    model_destroy(m);
}

static void test_text_loader(void **state)
{
    (void)state;
    /* "the" is the most frequent source word, then "cat"; targets likewise */
    const char *src = "the cat sat\nthe cat ran\nthe dog\n  \nthe end of a very long sentence indeed here\n";
    const char *tgt = "le chat assis\nle chat couru\nle chien\nvide\nla fin\n";
    const char *sp = WRITE_STR("train.src", src), *tp = WRITE_STR("train.tgt", tgt);
    model_text_corpus *c = NULL;
    /* vocab 7: the specials and three words; rarer words are UNK */
    assert_int_equal(model_text_load(sp, tp, 4, 5, 7, 7, &c), EXEC_OK);
    assert_int_equal(c->n, 3); /* the blank line and the long sentence skipped */
    const int32_t F = MODEL_TEXT_FIRST;
    /* source ids by frequency: the(4) cat(2), then ties alphabetically: a(F+2), dog, ... */
    int32_t s0[4] = { F + 0, F + 1, MODEL_TEXT_UNK, MODEL_TEXT_PAD };
    assert_memory_equal(c->src, s0, sizeof s0);
    int32_t s2[4] = { F + 0, MODEL_TEXT_UNK, MODEL_TEXT_PAD, MODEL_TEXT_PAD }; /* "the dog" */
    assert_memory_equal(c->src + 2 * 4, s2, sizeof s2);
    /* target: le(3) chat(2) then chien/couru/... ; EOS then PAD */
    int32_t t0[5] = { F + 0, F + 1, F + 2, MODEL_TEXT_EOS, MODEL_TEXT_PAD };
    assert_memory_equal(c->tgt, t0, sizeof t0); /* assis is the first of the ties */
    assert_int_equal(c->tgt[2 * 5 + 2], MODEL_TEXT_EOS);
    model_text_destroy(c);

    /* malformed input */
    c = (model_text_corpus *)1;
    expect_error(model_text_load(sp, WRITE_STR("short.tgt", "le chat\n"), 4, 5, 100, 100, &c), "not parallel");
    assert_null(c);
    expect_error(model_text_load(tmpfile_write("empty.src", "", 0), tp, 4, 5, 100, 100, &c), "empty file");
    expect_error(model_text_load(tmpfile_write("nul.src", "a\0b\nc\nd\ne\nf\n", 12), tp, 4, 5, 100, 100, &c), "NUL");
    expect_error(model_text_load(sp, tp, 1, 2, 100, 100, &c), "no sentence pair fits");
    expect_error(model_text_load(WRITE_STR("blank.src", "\n \n"), WRITE_STR("blank.tgt", "\n\n"), 4, 5, 100, 100, &c),
                 "no tokens");
    char missing[320];
    snprintf(missing, sizeof missing, "%s/missing.src", tmpdir);
    expect_error(model_text_load(missing, tp, 4, 5, 100, 100, &c), "missing.src");

    /* the model takes SOURCE,TARGET */
    char pair[700];
    snprintf(pair, sizeof pair, "%s,%s", sp, tp);
    model_config cfg = cfg_of(MODEL_TRAIN, MODEL_TINY);
    cfg.data_path = pair;
    model *m = NULL;
    assert_int_equal(model_create(model_find("seq2seq"), &cfg, &m), EXEC_OK);
    float loss;
    assert_int_equal(model_step(m, &loss), EXEC_OK);
    assert_true(isfinite(loss));
    model_destroy(m);
    cfg.data_path = sp;
    m = (model *)1;
    expect_error(model_create(model_find("seq2seq"), &cfg, &m), "SOURCE,TARGET");
    assert_null(m);
}

static void put_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24);
    p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);
    p[3] = (unsigned char)v;
}

/* The digit generator against the values of its first version (which
 * measured every pixel against every stroke; now each stroke inks only
 * within its reach): 1024 images of seed 1, their ink and inked pixels,
 * and the same images again for the same seed on three threads. */
static void test_mnist_generator(void **state)
{
    (void)state;
    model_mnist_set *a = NULL, *b = NULL;
    assert_int_equal(model_mnist_generate(1024, 1, 1, &a), EXEC_OK);
    assert_int_equal(model_mnist_generate(1024, 1, 3, &b), EXEC_OK);
    double ink = 0;
    long inked = 0;
    for (size_t i = 0; i < (size_t)1024 * 784; i++) {
        assert_true(a->images[i] >= 0.0f && a->images[i] <= 1.0f);
        ink += a->images[i];
        inked += a->images[i] > 0;
    }
    printf("mnist generator: ink %.4f (first version 72284.4577), inked pixels %ld (121618)\n", ink, inked);
    assert_true(fabs(ink - 72284.4577) < 72284.4577 * 1e-5);
    assert_true(labs(inked - 121618) <= 12);
    assert_memory_equal(a->images, b->images, (size_t)1024 * 784 * sizeof *a->images);
    assert_memory_equal(a->labels, b->labels, 1024);
    model_mnist_destroy(a);
    model_mnist_destroy(b);
}

static void test_mnist_loader(void **state)
{
    (void)state;
    enum { N = 5 };
    static unsigned char img[16 + N * 784], lab[8 + N];
    put_be32(img, 0x803);
    put_be32(img + 4, N);
    put_be32(img + 8, 28);
    put_be32(img + 12, 28);
    for (int i = 0; i < N * 784; i++)
        img[16 + i] = (unsigned char)(i * 7 % 256);
    put_be32(lab, 0x801);
    put_be32(lab + 4, N);
    for (int i = 0; i < N; i++)
        lab[8 + i] = (unsigned char)(9 - i);
    const char *ip = tmpfile_write("train-images-idx3-ubyte", img, sizeof img);
    const char *lp = tmpfile_write("train-labels-idx1-ubyte", lab, sizeof lab);
    model_mnist_set *s = NULL;
    assert_int_equal(model_mnist_load(ip, lp, &s), EXEC_OK);
    assert_int_equal(s->n, N);
    assert_int_equal(s->rows, 28);
    assert_int_equal(s->cols, 28);
    for (int i = 0; i < N * 784; i += 97)
        assert_float_equal(s->images[i], (float)(i * 7 % 256) / 255.0f, 1e-7);
    assert_int_equal(s->labels[0], 9);
    assert_int_equal(s->labels[4], 5);
    model_mnist_destroy(s);

    /* the model reads the images */
    model_config c = cfg_of(MODEL_TRAIN, MODEL_TINY);
    c.data_path = ip;
    model *m = NULL;
    assert_int_equal(model_create(model_find("autoenc"), &c, &m), EXEC_OK);
    float loss;
    assert_int_equal(model_step(m, &loss), EXEC_OK);
    assert_true(isfinite(loss));
    model_destroy(m);

    /* malformed files */
    s = (model_mnist_set *)1;
    expect_error(model_mnist_load(tmpfile_write("short", img, 10), NULL, &s), "too short");
    assert_null(s);
    unsigned char bad[sizeof img];
    memcpy(bad, img, sizeof img);
    put_be32(bad, 0x801);
    expect_error(model_mnist_load(tmpfile_write("magic", bad, sizeof bad), NULL, &s), "magic");
    expect_error(model_mnist_load(tmpfile_write("trunc", img, sizeof img - 1), NULL, &s), "truncated");
    memcpy(bad, img, sizeof img);
    put_be32(bad + 4, N - 1);
    expect_error(model_mnist_load(tmpfile_write("trail", bad, sizeof bad), NULL, &s), "trailing");
    put_be32(bad + 4, 0xffffffffu);
    expect_error(model_mnist_load(tmpfile_write("huge", bad, sizeof bad), NULL, &s), "bad dimensions");
    put_be32(bad + 4, N);
    put_be32(bad + 8, 0);
    expect_error(model_mnist_load(tmpfile_write("zero", bad, sizeof bad), NULL, &s), "bad dimensions");
    unsigned char lbad[sizeof lab];
    memcpy(lbad, lab, sizeof lab);
    put_be32(lbad + 4, N + 1);
    expect_error(model_mnist_load(ip, tmpfile_write("lcount", lbad, sizeof lbad), &s), "labels");
    memcpy(lbad, lab, sizeof lab);
    lbad[8 + 2] = 10;
    expect_error(model_mnist_load(ip, tmpfile_write("ldigit", lbad, sizeof lbad), &s), "not a digit");
    expect_error(model_mnist_load(ip, tmpfile_write("lshort", lab, 6), &s), "idx1-ubyte");
    /* a 10x10 idx file loads but the model wants 28x28 */
    static unsigned char small[16 + 100];
    put_be32(small, 0x803);
    put_be32(small + 4, 1);
    put_be32(small + 8, 10);
    put_be32(small + 12, 10);
    c.data_path = tmpfile_write("small-idx", small, sizeof small);
    m = (model *)1;
    expect_error(model_create(model_find("autoenc"), &c, &m), "28x28");
    assert_null(m);
}

static void test_speech_no_loader(void **state)
{
    (void)state;
    model_config c = cfg_of(MODEL_TRAIN, MODEL_TINY);
    c.data_path = "/nonexistent";
    model *m = (model *)1;
    expect_error(model_create(model_find("speech"), &c, &m), "generator");
    assert_null(m);
}

/* `fathom run --data`: the loaders reached from the command line */
static int fathom_sh(const char *args, char *err, size_t errcap)
{
    char cmd[1536], errpath[320];
    snprintf(errpath, sizeof errpath, "%s/cli.err", tmpdir);
    snprintf(cmd, sizeof cmd, "%s %s >/dev/null 2>'%s'", FATHOM_BIN, args, errpath);
    int st = system(cmd);
    FILE *f = fopen(errpath, "r");
    assert_non_null(f);
    size_t n = fread(err, 1, errcap - 1, f);
    err[n] = '\0';
    fclose(f);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_data_option(void **state)
{
    (void)state;
    char err[2048], args[1024];
    const char *story = WRITE_STR("cli-qa1.txt", "1 Mary moved to the bathroom.\n"
                                                 "2 John went to the hallway.\n"
                                                 "3 Where is Mary? \tbathroom\t1\n"
                                                 "4 Mary travelled to the office.\n"
                                                 "5 Where is Mary? \toffice\t4\n");
    snprintf(args, sizeof args, "run memnet --steps 2 --threads 1 --data '%s'", story);
    assert_int_equal(fathom_sh(args, err, sizeof err), 0);
    const char *src = WRITE_STR("cli.src", "the cat sat\nthe dog ran\n");
    const char *tgt = WRITE_STR("cli.tgt", "le chat assis\nle chien couru\n");
    snprintf(args, sizeof args, "run seq2seq --steps 2 --threads 1 --data '%s,%s'", src, tgt);
    assert_int_equal(fathom_sh(args, err, sizeof err), 0);
    /* a malformed file: one line naming the problem, exit 1 */
    const char *bad = WRITE_STR("cli-bad.txt", "1 Mary moved to the bathroom.\nnot a numbered line\n");
    snprintf(args, sizeof args, "run memnet --steps 1 --data '%s'", bad);
    assert_int_equal(fathom_sh(args, err, sizeof err), 1);
    assert_non_null(strstr(err, "cli-bad.txt"));
    assert_non_null(strchr(err, '\n'));
    assert_null(strchr(strchr(err, '\n') + 1, '\n'));
    snprintf(args, sizeof args, "run autoenc --steps 1 --data '%s/missing-idx'", tmpdir);
    assert_int_equal(fathom_sh(args, err, sizeof err), 1);
    assert_non_null(strstr(err, "missing-idx"));
    /* seq2seq wants two files */
    snprintf(args, sizeof args, "run seq2seq --steps 1 --data '%s'", src);
    assert_int_equal(fathom_sh(args, err, sizeof err), 1);
    assert_non_null(strstr(err, "SOURCE,TARGET"));
    /* workloads without a loader: a usage error before anything runs */
    assert_int_equal(fathom_sh("run alexnet --data /dev/null", err, sizeof err), 2);
    assert_non_null(strstr(err, "no real-format loader"));
    assert_int_equal(fathom_sh("run speech --data /dev/null", err, sizeof err), 2);
    assert_int_equal(fathom_sh("run memnet --data", err, sizeof err), 2);
    /* --help lists the formats from the registry: the loaders' workloads only */
    char cmd[600];
    snprintf(cmd, sizeof cmd, "%s run --help", FATHOM_BIN);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char text[4096];
    text[fread(text, 1, sizeof text - 1, f)] = '\0';
    assert_int_equal(pclose(f), 0);
    assert_non_null(strstr(text, "  seq2seq   SOURCE,TARGET"));
    assert_non_null(strstr(text, "  memnet    a bAbI"));
    assert_non_null(strstr(text, "  autoenc   an MNIST idx3-ubyte"));
    assert_null(strstr(text, "  alexnet "));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_autoenc_params),     cmocka_unit_test(test_full_presets_build),
        cmocka_unit_test(test_frames_recoverable), cmocka_unit_test(test_text_synth),
        cmocka_unit_test(test_babi_generator),     cmocka_unit_test(test_babi_loader),
        cmocka_unit_test(test_text_loader),        cmocka_unit_test(test_mnist_loader),
        cmocka_unit_test(test_mnist_generator),    cmocka_unit_test(test_speech_no_loader),
        cmocka_unit_test(test_data_option),        cmocka_unit_test(test_infer_forward_only),
        cmocka_unit_test(test_speech_birnn),       cmocka_unit_test(test_autoenc_learns),
        cmocka_unit_test(test_memnet_learns),      cmocka_unit_test(test_speech_learns),
        cmocka_unit_test(test_seq2seq_learns),
    };
    return cmocka_run_group_tests(tests, setup_tmp, teardown_tmp);
}
