/* test_roofline.c -- the roofline analysis on traces with known flops,
 * bytes and times (the ctfgen "roofline" recipe): intensity, achieved
 * throughput, roof, fraction of the roof and bound of every op type, class
 * and the total; the ceilings from a `fathom peak` JSON file (and its
 * errors); the thread-count ceiling; trajectories across batch sizes; the
 * CPU mismatch warning; the JSON, CSV and text outputs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "analyze/profile.h"
#include "analyze/read_trace.h"
#include "analyze/roofline.h"
#include "fixtures/ctfgen.h"
#include "fixtures/capture.h"
#include "fixtures/scenario.h"
#include "fixtures/testdir.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REL(x, y) assert_true(fabs((double)(x) - (double)(y)) <= 1e-9 * fabs((double)(y)) + 1e-12)

/* The roofline recipe as a trace of `steps` steps; returns its profile. */
static analyze_profile *roofline_trace(const char *name, uint32_t batch, uint32_t threads, uint32_t steps)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", testdir_path, name);
    scen s = { .model = "mlp",
               .mode = CTFGEN_INFER,
               .steps = steps,
               .run_begin = 1,
               .batch = batch,
               .threads = threads,
               .uuid_seed = 4242 + batch * 31 + threads };
    s.ops = scen_recipe("roofline", s.mode, &s.nops);
    assert_non_null(s.ops);
    assert_int_equal(scen_write(path, &s), 0);
    analyze_profile *p = NULL;
    assert_int_equal(analyze_read(path, NULL, &p), 0);
    return p;
}

static const analyze_roof_row *row_named(const analyze_roof_row *rows, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(rows[i].name, name) == 0)
            return &rows[i];
    fail_msg("no row %s", name);
    return NULL;
}

static void check_row(const analyze_roof_row *r, double intensity, double gflops, double gbs, double roof,
                      double of_roof, analyze_bound bound)
{
    if (isnan(intensity))
        assert_true(isnan(r->intensity));
    else
        REL(r->intensity, intensity);
    REL(r->gflops, gflops);
    REL(r->gbs, gbs);
    if (isnan(roof))
        assert_true(isnan(r->roof));
    else
        REL(r->roof, roof);
    if (isnan(of_roof))
        assert_true(isnan(r->of_roof));
    else
        REL(r->of_roof, of_roof);
    assert_int_equal(r->bound, bound);
}

static const analyze_peaks ceilings = { .gflops = 100, .gbs = 10 };

static void test_rows(void **state)
{
    (void)state;
    analyze_profile *p = roofline_trace("rows", 4, 2, 3);
    analyze_roofline *r = NULL;
    analyze_roofline_create(&p, 1, &ceilings, &r);
    assert_non_null(r);
    const analyze_roofline_trace *t = &r->t[0];
    REL(t->peak_gflops, 100);
    REL(t->peak_gbs, 10);
    REL(t->ridge, 10);
    assert_int_equal(t->peak_at_threads, 0);
    assert_int_equal(t->nops, 5);
    /* by time: Conv2D 2000, MatMul 1000 / Relu 1000 (by name), Reshape 500, Tile 250 */
    assert_string_equal(t->ops[0].name, "Conv2D");
    assert_string_equal(t->ops[1].name, "MatMul");
    assert_string_equal(t->ops[2].name, "Relu");
    assert_string_equal(t->ops[4].name, "Tile");
    const analyze_roof_row *mm = row_named(t->ops, t->nops, "MatMul");
    assert_int_equal(mm->count, 3);
    assert_int_equal(mm->ns, 3000);
    assert_int_equal(mm->flops, 150000);
    assert_int_equal(mm->bytes, 3000);
    assert_string_equal(mm->cls, "matrix");
    REL(mm->share, 1000.0 / 4750.0);
    check_row(mm, 50, 50, 1, 100, 0.5, ANALYZE_BOUND_COMPUTE);
    check_row(row_named(t->ops, t->nops, "Relu"), 0.125, 1, 8, 1.25, 0.8, ANALYZE_BOUND_MEMORY);
    check_row(row_named(t->ops, t->nops, "Reshape"), 0, 0, 4, 0, 0.4, ANALYZE_BOUND_MEMORY);
    check_row(row_named(t->ops, t->nops, "Tile"), NAN, 0, 0, NAN, NAN, ANALYZE_BOUND_NONE);
    check_row(row_named(t->ops, t->nops, "Conv2D"), NAN, 50, 0, 100, 0.5, ANALYZE_BOUND_COMPUTE);
    /* classes: data_movement is Reshape + Tile */
    assert_int_equal(t->nclasses, 4);
    const analyze_roof_row *dm = row_named(t->classes, t->nclasses, "data_movement");
    assert_int_equal(dm->ns, 2250);
    check_row(dm, 0, 0, 2000.0 / 750.0, 0, 2000.0 / 750.0 / 10, ANALYZE_BOUND_MEMORY);
    /* all ops: 151000 flops, 11000 bytes over 4750 ns a step */
    assert_int_equal(t->total.count, 15);
    check_row(&t->total, 151000.0 / 11000.0, 151000.0 / 4750.0, 11000.0 / 4750.0, 100, 151000.0 / 4750.0 / 100,
              ANALYZE_BOUND_COMPUTE);
    REL(t->total.share, 1);
    analyze_roofline_destroy(r);

    /* a lower compute ceiling moves MatMul's ridge: P 5, B 10 -> ridge 0.5; Relu stays memory-bound */
    analyze_peaks low = { .gflops = 5, .gbs = 10 };
    analyze_roofline_create(&p, 1, &low, &r);
    assert_non_null(r);
    check_row(row_named(r->t[0].ops, r->t[0].nops, "MatMul"), 50, 50, 1, 5, 10, ANALYZE_BOUND_COMPUTE);
    check_row(row_named(r->t[0].ops, r->t[0].nops, "Relu"), 0.125, 1, 8, 1.25, 0.8, ANALYZE_BOUND_MEMORY);
    analyze_roofline_destroy(r);

    /* ceilings that are not positive */
    analyze_peaks bad = { .gflops = 0, .gbs = 10 };
    assert_int_not_equal(analyze_roofline_create(&p, 1, &bad, &(analyze_roofline *){ NULL }), ANALYZE_OK);
    assert_non_null(strstr(base_errmsg(), "positive"));
    assert_int_not_equal(analyze_roofline_create(&p, 0, &ceilings, &(analyze_roofline *){ NULL }), ANALYZE_OK);
    analyze_profile_destroy(p);
}

static const char *write_file(const char *name, const char *text)
{
    static char path[4200];
    snprintf(path, sizeof path, "%s/%s", testdir_path, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_peaks_file(void **state)
{
    (void)state;
    analyze_peaks pk;
    const char *good = write_file("peak.json", "{\"schema\": 1, \"cpu\": \"Test CPU @ 1.0GHz\", \"sgemm\": "
                                               "[{\"threads\": 1, \"gflops\": 50}, {\"threads\": 2, \"gflops\": 90.5}],"
                                               " \"peak_gflops\": 90.5, \"bandwidth_gbs\": 12.5}");
    assert_int_equal(analyze_peaks_load(good, &pk), 0);
    REL(pk.gflops, 90.5);
    REL(pk.gbs, 12.5);
    assert_string_equal(pk.cpu, "Test CPU @ 1.0GHz");
    assert_int_equal(pk.nsgemm, 2);
    int at;
    REL(analyze_peaks_gflops_at(&pk, 1, &at), 50);
    assert_int_equal(at, 1);
    REL(analyze_peaks_gflops_at(&pk, 4, &at), 90.5);
    assert_int_equal(at, 0);

    /* the trace ran at 1 thread: its ceiling is sgemm at 1 thread */
    analyze_profile *p = roofline_trace("one-thread", 4, 1, 2);
    analyze_roofline *r = NULL;
    analyze_roofline_create(&p, 1, &pk, &r);
    assert_non_null(r);
    REL(r->t[0].peak_gflops, 50);
    assert_int_equal(r->t[0].peak_at_threads, 1);
    REL(r->t[0].ridge, 4);
    char w[512];
    assert_int_equal(analyze_roofline_mismatch(r, w, sizeof w), 0); /* same CPU */
    analyze_roofline_destroy(r);
    analyze_peaks other = pk;
    snprintf(other.cpu, sizeof other.cpu, "Other CPU");
    analyze_roofline_create(&p, 1, &other, &r);
    assert_int_equal(analyze_roofline_mismatch(r, w, sizeof w), 1);
    assert_non_null(strstr(w, "Other CPU"));
    assert_non_null(strstr(w, "Test CPU @ 1.0GHz"));
    assert_null(strchr(w, '\n'));
    analyze_roofline_destroy(r);
    analyze_profile_destroy(p);

    /* bad files: each a one-line error naming the file */
    static const struct {
        const char *name, *text, *says;
    } bad[] = {
        { "empty.json", "", "not JSON" },
        { "text.json", "peak 100 GFLOP/s\n", "not JSON" },
        { "array.json", "[1, 2]", "fathom peak" },
        { "nobw.json", "{\"peak_gflops\": 100}", "fathom peak" },
        { "neg.json", "{\"peak_gflops\": -1, \"bandwidth_gbs\": 10}", "must each lie in" },
        { "str.json", "{\"peak_gflops\": \"100\", \"bandwidth_gbs\": 10}", "fathom peak" },
        { "dup.json", "{\"peak_gflops\": 1, \"peak_gflops\": 2, \"bandwidth_gbs\": 10}", "not JSON" },
        { "sgemm.json", "{\"peak_gflops\": 1, \"bandwidth_gbs\": 10, \"sgemm\": {}}", "sgemm" },
        { "entry.json", "{\"peak_gflops\": 1, \"bandwidth_gbs\": 10, \"sgemm\": [{\"threads\": 0, \"gflops\": 1}]}",
          "sgemm entry 0" },
        /* numbers no machine has: the ridge and roofs would be nonsense */
        { "tiny.json", "{\"peak_gflops\": 1e-300, \"bandwidth_gbs\": 10}", "must each lie in [0.001, 1e+09]" },
        { "huge.json", "{\"peak_gflops\": 1e300, \"bandwidth_gbs\": 1e-300}", "must each lie in" },
        { "bwzero.json", "{\"peak_gflops\": 100, \"bandwidth_gbs\": 0}", "must each lie in" },
        { "entryhuge.json",
          "{\"peak_gflops\": 1, \"bandwidth_gbs\": 10, \"sgemm\": [{\"threads\": 1, \"gflops\": 1e12}]}",
          "sgemm entry 0" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *path = write_file(bad[i].name, bad[i].text);
        base_errmsg_clear();
        assert_int_equal(analyze_peaks_load(path, &pk), ANALYZE_ERR_INPUT);
        if (!strstr(base_errmsg(), bad[i].says) || !strstr(base_errmsg(), bad[i].name) || strchr(base_errmsg(), '\n'))
            fail_msg("%s: %s", bad[i].name, base_errmsg());
    }
    char missing[4200];
    snprintf(missing, sizeof missing, "%s/no-such-peak.json", testdir_path);
    assert_int_equal(analyze_peaks_load(missing, &pk), ANALYZE_ERR_INPUT);
    assert_non_null(strstr(base_errmsg(), "no-such-peak.json"));
}

static char *output(const analyze_roofline *r, cli_format fmt, size_t top)
{
    capture c;
    assert_int_equal(analyze_roofline_print(capture_open(&c), r, fmt, top), 0);
    return capture_close(&c);
}

/* Three traces of one model: batch 16, 4 and 8 (argument order); the
 * trajectories go by batch. */
static void test_outputs_and_trajectories(void **state)
{
    (void)state;
    analyze_profile *p[3] = { roofline_trace("b16", 16, 2, 2), roofline_trace("b4", 4, 2, 2),
                              roofline_trace("b8", 8, 2, 2) };
    analyze_roofline *r = NULL;
    analyze_roofline_create(p, 3, &ceilings, &r);
    assert_non_null(r);
    assert_int_equal(r->order[0], 1);
    assert_int_equal(r->order[1], 2);
    assert_int_equal(r->order[2], 0);

    char *js = output(r, CLI_JSON, 0);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    assert_non_null(root);
    assert_int_equal(json_integer_value(json_object_get(root, "schema")), 1);
    REL(json_number_value(json_object_get(json_object_get(root, "peaks"), "gbs")), 10);
    json_t *traces = json_object_get(root, "traces");
    assert_int_equal(json_array_size(traces), 3);
    json_t *t0 = json_array_get(traces, 0);
    assert_int_equal(json_integer_value(json_object_get(t0, "batch")), 16);
    json_t *ops = json_object_get(t0, "op_types");
    assert_int_equal(json_array_size(ops), 5);
    json_t *conv = json_array_get(ops, 0);
    assert_string_equal(json_string_value(json_object_get(conv, "op")), "Conv2D");
    assert_true(json_is_null(json_object_get(conv, "intensity"))); /* no bytes */
    assert_string_equal(json_string_value(json_object_get(conv, "bound")), "compute");
    REL(json_number_value(json_object_get(conv, "of_roof")), 0.5);
    json_t *traj = json_object_get(root, "trajectories");
    assert_int_equal(json_array_size(traj), 5);
    json_t *pts = json_object_get(json_array_get(traj, 0), "points");
    assert_int_equal(json_array_size(pts), 3);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(pts, 0), "batch")), 4);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(pts, 0), "trace")), 1);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(pts, 2), "batch")), 16);
    json_decref(root);
    free(js);

    char *csv = output(r, CLI_CSV, 0);
    size_t lines = 0;
    for (char *c = csv; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1 + 3 * (1 + 5 + 4)); /* header; per trace total, op types, classes */
    assert_non_null(strstr(csv, "source,trace,level,name,class,batch,threads,count,ns,flops,bytes,share,intensity,"));
    assert_non_null(strstr(csv, ",op,Relu,elementwise,16,2,2,2000,2000,16000,"));
    assert_non_null(strstr(csv, ",0.800000,memory,100,10\n"));
    free(csv);

    char *txt = output(r, CLI_TEXT, 2);
    assert_non_null(strstr(txt, "ceilings: 100.0 GFLOP/s (peak), 10.0 GB/s; ridge point 10.00 FLOP/byte"));
    assert_non_null(strstr(txt, "\nConv2D "));
    assert_non_null(strstr(txt, "\nMatMul "));
    assert_null(strstr(txt, "\nRelu")); /* --top 2: Relu ties MatMul's time and sorts after it by name */
    assert_non_null(strstr(txt, "(3 more op types: --top 0 shows them all)"));
    assert_non_null(strstr(txt, "== trajectories"));
    char *b4 = strstr(txt, "  mlp/infer"), *line_end = b4 ? strchr(b4, '\n') : NULL;
    assert_non_null(line_end);
    *line_end = '\0';
    assert_non_null(strstr(b4, "      4       2")); /* the first point is batch 4 */
    free(txt);
    analyze_roofline_destroy(r);
    for (int i = 0; i < 3; i++)
        analyze_profile_destroy(p[i]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rows),
        cmocka_unit_test(test_peaks_file),
        cmocka_unit_test(test_outputs_and_trajectories),
    };
    return cmocka_run_group_tests(tests, testdir_setup_all, testdir_teardown_all);
}
