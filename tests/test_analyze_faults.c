/* test_analyze_faults.c -- every analysis of the table (analyze/analysis.h)
 * under allocation failure: the n-th allocation through the accounting
 * allocator (base/alloc.h) and every later one fail, for n = 1, 2, ... until
 * the analysis no longer meets a failure.  Each time: create answers
 * ANALYZE_ERR_NOMEM with a one-line message, or print answers -1; nothing
 * is left allocated (the allocator's byte count, and LeakSanitizer in the
 * sanitizer build); and once past the last allocation the output is the
 * one printed without injection, byte for byte.  (Jansson's own
 * allocations, inside the JSON builders, are not injected.)  On reference traces
 * (traces/reference) and, for scaling, on generated traces at 1, 2 and 4
 * threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "analyze/analysis.h"
#include "analyze/profile.h"
#include "analyze/read_trace.h"
#include "analyze/roofline.h"
#include "base/alloc.h"
#include "fixtures/capture.h"
#include "fixtures/ctfgen.h"
#include "fixtures/scenario.h"
#include "fixtures/testdir.h"

#include <glob.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char tmpdir[4096];
static analyze_profile *ref[4]; /* alexnet train, alexnet infer, memnet train, deepq train */
static analyze_profile *thr[3]; /* one generated model at 1, 2, 4 threads */

static analyze_profile *read_ok(const char *path, uint32_t skip_first)
{
    /* the data flow followed, as the parallelism row reads its traces */
    analyze_read_options o = { .skip_first = skip_first, .dataflow = 1 };
    analyze_profile *p = NULL;
    if (analyze_read(path, &o, &p) != 0) {
        fprintf(stderr, "%s: %s\n", path, base_errmsg());
        return NULL;
    }
    return p;
}

static analyze_profile *read_reference(const char *stem)
{
    char pattern[4200];
    glob_t g;
    snprintf(pattern, sizeof pattern, "%s/%s-*.tar.zst", FATHOM_REFERENCE_DIR, stem);
    if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc != 1) {
        fprintf(stderr, "no single reference trace %s\n", pattern);
        return NULL;
    }
    analyze_profile *p = read_ok(g.gl_pathv[0], 1);
    globfree(&g);
    return p;
}

static int setup_all(void **state)
{
    (void)state;
    if (testdir_create(tmpdir, sizeof tmpdir, "analyze-faults"))
        return -1;
    const char *stems[4] = { "alexnet-train", "alexnet-infer", "memnet-train", "deepq-train" };
    for (int i = 0; i < 4; i++)
        if (!(ref[i] = read_reference(stems[i])))
            return -1;
    const uint32_t threads[3] = { 1, 2, 4 }, pct[3] = { 100, 60, 40 };
    for (int i = 0; i < 3; i++) {
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/t%u", tmpdir, threads[i]);
        scen s = { .model = "alexnet",
                   .mode = CTFGEN_TRAIN,
                   .steps = 3,
                   .run_begin = 1,
                   .threads = threads[i],
                   .scale_pct = pct[i],
                   .uuid_seed = 11 + (uint64_t)i };
        s.ops = scen_recipe("conv", CTFGEN_TRAIN, &s.nops);
        if (!s.ops || scen_write(dir, &s) || !(thr[i] = read_ok(dir, 0)))
            return -1;
    }
    return 0;
}

static int teardown_all(void **state)
{
    (void)state;
    for (int i = 0; i < 4; i++)
        analyze_profile_destroy(ref[i]);
    for (int i = 0; i < 3; i++)
        analyze_profile_destroy(thr[i]);
    return testdir_remove(tmpdir);
}

/* One run of the row: create, print into a string, destroy.  *out: the
 * output when print succeeded (caller frees), else NULL. */
static analyze_status run_once(const analyze_analysis *an, analyze_profile *const *p, size_t n,
                               const analyze_options *o, cli_format fmt, int *io, char **out)
{
    void *res = NULL;
    *out = NULL;
    *io = -1;
    analyze_status st = an->create(p, n, o, &res);
    if (st != ANALYZE_OK)
        return st;
    capture c;
    *io = an->print(capture_open(&c), res, fmt, o);
    an->destroy(res);
    char *text = capture_close(&c);
    if (*io == 0)
        *out = text;
    else
        free(text);
    return st;
}

/* Failure injected at every allocation of the row's create and print in
 * turn: that one and every later one (which counts the allocations of a
 * run), then that one alone (a failure the code passed over silently
 * shows as an output that differs). */
static void inject_each(const analyze_analysis *an, analyze_profile *const *p, size_t n, const analyze_options *o)
{
    static const cli_format fmts[3] = { CLI_TEXT, CLI_CSV, CLI_JSON };
    uint64_t last[3] = { 0 }; /* per format: the allocations of one run */
    for (int pass = 0; pass < 6; pass++) {
        int k = pass % 3, sticky = pass < 3;
        int io;
        char *want;
        assert_int_equal(run_once(an, p, n, o, fmts[k], &io, &want), ANALYZE_OK);
        assert_non_null(want);
        int failures = 0, in_create = 0;
        for (uint64_t at = 1; at < 1000000; at++) {
            size_t before = base_alloc_bytes();
            char *got;
            base_errmsg_clear();
            base_alloc_fail_after(at, sticky);
            analyze_status st = run_once(an, p, n, o, fmts[k], &io, &got);
            base_alloc_fail_after(0, 0);
            assert_int_equal(base_alloc_bytes(), before); /* nothing left behind */
            if (st == ANALYZE_OK && io == 0) {            /* the failure met nothing: the same output */
                int same = strcmp(got, want) == 0;
                free(got);
                if (!same)
                    fail_msg("%s (format %d): allocation %" PRIu64 " failed, and the output differs without an error",
                             an->name, k, at);
                if (sticky)
                    last[k] = at - 1;
                if (sticky || at > last[k])
                    break; /* past the last allocation */
                continue;
            }
            if (st != ANALYZE_OK) {
                if (st != ANALYZE_ERR_NOMEM)
                    fail_msg("%s: allocation %" PRIu64 " failed: status %d (%s)", an->name, at, st, base_errmsg());
                assert_true(strcmp(base_errmsg(), "no error") != 0 && !strchr(base_errmsg(), '\n'));
                in_create++;
            }
            failures++;
        }
        free(want);
        printf("%-10s %-4s %s: allocation failure injected at %d points (%d in create), each a clean error\n", an->name,
               k == 0   ? "text"
               : k == 1 ? "csv"
                        : "json",
               sticky ? "from then on" : "that one   ", failures, in_create);
        assert_true(failures > 0);
    }
}

static void test_every_analysis(void **state)
{
    (void)state;
    analyze_peaks pk = { .gflops = 150, .gbs = 25 };
    size_t rows = 0;
    for (size_t i = 0; i < analyze_nanalyses; i++) {
        const analyze_analysis *an = analyze_analyses[i];
        analyze_options o = { .top = 3, .peaks = &pk };
        if (strcmp(an->name, "scaling") == 0) {
            inject_each(an, thr, 3, &o);
        } else if (an->max_traces == 2) {
            inject_each(an, ref, 2, &o);
        } else {
            inject_each(an, ref, 4, &o);
            if (an->takes & ANALYZE_TAKES_BY) {
                o.by_class = 1;
                inject_each(an, ref, 4, &o);
            }
        }
        rows++;
    }
    assert_int_equal(rows, analyze_nanalyses);
}

/* Reading a trace into a profile (the sink, the profile) under the same
 * injection: a one-line error naming the trace, nothing left allocated. */
static void test_read(void **state)
{
    (void)state;
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/t1", tmpdir);
    int failures = 0;
    uint64_t last = 0; /* the allocations of one read, counted by the first pass */
    for (int sticky = 1; sticky >= 0; sticky--) {
        for (uint64_t at = 1; sticky ? at < 1000000 : at <= last; at++) {
            size_t before = base_alloc_bytes();
            analyze_read_options o = { .skip_first = 1, .dataflow = 1 };
            analyze_profile *p = NULL;
            base_errmsg_clear();
            base_alloc_fail_after(at, sticky);
            int rc = analyze_read(dir, &o, &p);
            base_alloc_fail_after(0, 0);
            if (rc == 0) {
                assert_non_null(p);
                analyze_profile_destroy(p);
                assert_int_equal(base_alloc_bytes(), before);
                if (sticky) {
                    last = at - 1;
                    break; /* past the last allocation */
                }
                continue;
            }
            assert_int_equal(base_alloc_bytes(), before);
            assert_null(p);
            assert_true(strcmp(base_errmsg(), "no error") != 0 && !strchr(base_errmsg(), '\n'));
            failures++;
        }
    }
    printf("reading: allocation failure injected at %d points, each a one-line error\n", failures);
    assert_true(failures > 0);
}

/* The row's own bad input is a status and a message, not a crash. */
static void test_bad_input(void **state)
{
    (void)state;
    analyze_options o = { 0 };
    const analyze_analysis *sc = analyze_analysis_find("scaling");
    assert_non_null(sc);
    void *res = NULL;
    analyze_profile *same[2] = { ref[0], ref[1] }; /* both at the reference's thread count */
    assert_int_equal(sc->create(same, 2, &o, &res), ANALYZE_ERR_INPUT);
    assert_non_null(strstr(base_errmsg(), "both ran with"));
    const analyze_analysis *cmp = analyze_analysis_find("compare");
    analyze_profile *unpaired[2] = { ref[0], ref[2] };
    assert_int_equal(cmp->create(unpaired, 2, &o, &res), ANALYZE_ERR_INPUT);
    assert_non_null(strstr(base_errmsg(), "no training/inference pair"));
    assert_null(analyze_analysis_find("nonsense"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_analysis),
        cmocka_unit_test(test_bad_input),
        cmocka_unit_test(test_read),
    };
    return cmocka_run_group_tests(tests, setup_all, teardown_all);
}
