/* test_tune_threads.c -- the tuner measures a point with its own threads alone: in
 * a sweep of a tiny model (every point, inter-op workers among them), no
 * step of a point without inter-op workers runs beside the pool's threads
 * (named fathom-inter*: an idle OpenMP team beside a running one slows its
 * every region), while steps of points with them do see those threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/exec.h"
#include "models/model.h"
#include "replay/tune.h"
#include "fixtures/tasks.h"

/* The process's threads named fathom-inter* (the pool's). */
static void count_pool(pid_t tid, void *ctx)
{
    char path[64], comm[64] = "";
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", (int)tid);
    FILE *f = fopen(path, "r");
    if (!f)
        return; /* exited meanwhile */
    if (fgets(comm, sizeof comm, f))
        *(int *)ctx += strncmp(comm, "fathom-inter", 12) == 0;
    fclose(f);
}
static int pool_threads(void)
{
    int n = 0;
    assert_true(each_task(count_pool, &n) > 0);
    return n;
}

typedef struct inst {
    model *m;
    int inter;
} inst;

static const model_def *g_def;
static int g_alone_steps, g_alone_beside, g_pool_steps, g_pool_seen;

static exec_status t_open(void *ctx, const replay_tune_knobs *k, const exec_hooks *hooks, void **out)
{
    (void)ctx;
    inst *i = calloc(1, sizeof *i);
    if (!i)
        return EXEC_ERR_NOMEM;
    model_config cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY, .batch = k->batch, .seed = 1, .plan = true };
    cfg.inter = k->inter;
    cfg.settings = (exec_settings){ .threads = k->threads, .conv_algo = k->conv_algo, .bind = k->bind, .hooks = hooks };
    exec_status s = model_create(g_def, &cfg, &i->m);
    if (s) {
        free(i);
        return s;
    }
    i->inter = k->inter;
    *out = i;
    return EXEC_OK;
}

static exec_status t_retune(void *p, const replay_tune_knobs *k, const exec_hooks *hooks)
{
    inst *i = p;
    exec_settings set = { .threads = k->threads, .conv_algo = k->conv_algo, .bind = k->bind, .hooks = hooks };
    model_settings_set(i->m, &set, k->inter);
    i->inter = k->inter;
    return EXEC_OK;
}

static exec_status t_step(void *p, uint64_t *ns)
{
    inst *i = p;
    if (i->inter <= 1) {
        g_alone_steps++;
        g_alone_beside += pool_threads() > 0;
    }
    struct timespec a, b;
    float loss;
    clock_gettime(CLOCK_MONOTONIC, &a);
    exec_status s = model_step(i->m, &loss);
    clock_gettime(CLOCK_MONOTONIC, &b);
    *ns = (uint64_t)((b.tv_sec - a.tv_sec) * 1000000000ll + (b.tv_nsec - a.tv_nsec));
    if (i->inter > 1) {
        g_pool_steps++;
        g_pool_seen += pool_threads() > 0;
    }
    return s;
}

static void t_close(void *p)
{
    inst *i = p;
    model_destroy(i->m);
    free(i);
}

static void test_point_alone(void **state)
{
    (void)state;
    if (exec_cores() < 2) {
        printf("one CPU: no inter-op workers to measure\n");
        skip();
    }
    g_def = model_find("memnet");
    assert_non_null(g_def);
    model_config cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY };
    replay_tune_target t = { .batch = model_batch(g_def, &cfg),
                             .steps_per_run = 1,
                             .open = t_open,
                             .retune = t_retune,
                             .step = t_step,
                             .close = t_close };
    snprintf(t.what, sizeof t.what, "memnet train (tiny)");
    replay_tune_opts o = { .sweep = 1, .rounds = 3 };
    replay_tune_result *r = calloc(1, sizeof *r);
    assert_non_null(r);
    exec_status s = replay_tune(&t, &o, r);
    if (s)
        printf("tune: %s\n", exec_errmsg());
    assert_int_equal(s, EXEC_OK);
    int with_workers = 0;
    for (int i = 0; i < r->n; i++)
        with_workers += r->c[i].k.inter > 1;
    printf("sweep of %d points (%d with inter-op workers): %d steps without workers, %d beside the pool's threads; "
           "%d steps with workers, %d saw them; %d pool threads after the tuner\n",
           r->n, with_workers, g_alone_steps, g_alone_beside, g_pool_steps, g_pool_seen, pool_threads());
    assert_true(with_workers > 0 && g_pool_steps > 0 && g_alone_steps > 0);
    assert_int_equal(g_pool_seen, g_pool_steps); /* the threads are there to be seen */
    assert_int_equal(g_alone_beside, 0);
    assert_int_equal(pool_threads(), 0); /* released when the tuner ends */
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_point_alone) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
