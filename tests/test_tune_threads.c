/* test_tune_threads.c -- a point of the knob space runs with its own
 * threads alone, in `fathom tune` as in `fathom run`: in a sweep of a tiny
 * model (every point, inter-op workers among them), no step of a point
 * without inter-op workers runs beside the pool's threads (named
 * fathom-inter*: an idle OpenMP team beside a running one slows its every
 * region), while steps of points with them do see those threads; and a
 * model's own parallel work between its runs keeps to the calling thread's
 * share, so no step makes threads. */
#define _GNU_SOURCE /* RTLD_NEXT */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
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

/* The pool's threads that stay: a thread joined (exec_workers_release)
 * may still be listed in /proc/self/task for a moment after pthread_join
 * returns -- the kernel wakes the joiner before it removes the task, and
 * a loaded machine stretches that moment (one step in 424 saw one, under
 * ctest -j2) -- so a count above 0 is looked at again for up to 200 ms. */
static int pool_threads_staying(void)
{
    static int stayed; /* once one stayed (the pool not released), no more waiting */
    int n = pool_threads();
    for (int i = 0; i < 200 && n > 0 && !stayed; i++) {
        nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
        n = pool_threads();
    }
    stayed |= n > 0;
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
        g_alone_beside += pool_threads_staying() > 0;
    }
    float loss;
    uint64_t t0 = base_now_ns();
    exec_status s = model_step(i->m, &loss);
    *ns = base_now_ns() - t0;
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
    assert_int_equal(pool_threads_staying(), 0); /* released when the tuner ends */
    replay_tune_result_release(r);
    free(r);
}

/* Threads made in this process: pthread_create, interposed (libgomp's
 * team threads and the engine's workers come through it). */
static atomic_int g_created;
int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *), void *arg)
{
    static int (*real)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
    if (!real)
        *(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
    atomic_fetch_add(&g_created, 1);
    return real(t, attr, fn, arg);
}

/* A model's own parallel work between its runs (the batch's images, deepq's
 * games) runs on model_threads(m), the calling thread's share in an
 * inter-op run: at 4 threads on 2 workers with a process default of 4, its
 * regions of 2 leave the calling thread's team as the runs use it, and no
 * step makes a thread (regions of 4 would end two threads at every run and
 * make two at every batch). */
static void test_model_threads_steady(void **state)
{
    (void)state;
    const char *names[] = { "alexnet", "deepq" };
    exec_threads_set(4);
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const model_def *def = model_find(names[i]);
        assert_non_null(def);
        model_config cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY, .seed = 1, .plan = true, .inter = 2 };
        cfg.settings.threads = 4;
        model *m = NULL;
        assert_int_equal(model_create(def, &cfg, &m), EXEC_OK);
        assert_int_equal(model_threads(m), 2);
        float loss;
        for (int s = 0; s < 2; s++)
            assert_int_equal(model_step(m, &loss), EXEC_OK);
        int made = atomic_load(&g_created);
        for (int s = 0; s < 4; s++)
            assert_int_equal(model_step(m, &loss), EXEC_OK);
        made = atomic_load(&g_created) - made;
        model_destroy(m);
        printf("%s at 4 threads on 2 workers: %d threads made in steps 3-6 (%d in this process so far)\n", names[i],
               made, atomic_load(&g_created));
        assert_true(atomic_load(&g_created) > 0); /* the count sees the threads made */
        assert_int_equal(made, 0);
    }
    exec_workers_release();
    exec_threads_set(0);
    model_config one = { .settings = { .threads = 3 }, .inter = 1 };
    model fake = { .cfg = one };
    assert_int_equal(model_threads(&fake), 3);
    fake.cfg.inter = 4; /* more workers than threads: one each */
    assert_int_equal(model_threads(&fake), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = { cmocka_unit_test(test_point_alone),
                                        cmocka_unit_test(test_model_threads_steady) };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
