/* test_memory.c -- the memory analysis on a trace with known tensors (the
 * scenario fixture: four 512 B weights before the steps, a 2048 B
 * activation allocated at the start of every step and freed at its end):
 * the peak, its composition and where it is reached, each role's tensors,
 * the live bytes over the steps, and the three output formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "analyze/memory.h"
#include "analyze/profile.h"
#include "analyze/read_trace.h"
#include "fixtures/ctfgen.h"
#include "fixtures/capture.h"
#include "fixtures/scenario.h"
#include "fixtures/testdir.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static analyze_profile *trace(const char *name, const char *model, int mode, uint32_t steps, uint32_t skip_first)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", testdir_path, name);
    scen s = { .model = model, .mode = mode, .steps = steps, .run_begin = 1, .uuid_seed = 99 + steps };
    s.ops = scen_recipe("fc", mode, &s.nops);
    assert_int_equal(scen_write(path, &s), 0);
    analyze_profile *p = NULL;
    analyze_read_options ro = { skip_first, 0 };
    assert_int_equal(analyze_read(path, &ro, &p), 0);
    return p;
}

static size_t role(const analyze_profile *p, const char *name)
{
    for (size_t r = 0; r < p->nroles; r++)
        if (strcmp(p->roles[r], name) == 0)
            return r;
    fail_msg("no role %s", name);
    return 0;
}

static void test_profile_memory(void **state)
{
    (void)state;
    /* skipping steps changes nothing: memory covers the whole run */
    analyze_profile *p = trace("mem", "mlp", CTFGEN_TRAIN, 5, 2);
    assert_int_equal(p->peak_bytes, 4 * 512 + 2048);
    assert_int_equal(p->peak_in_step, 1);
    assert_int_equal(p->peak_step, 0);
    size_t w = role(p, "weight"), a = role(p, "activation");
    assert_int_equal(p->role_at_peak[w], 2048);
    assert_int_equal(p->role_at_peak[a], 2048);
    assert_int_equal(p->role_peak[a], 2048);
    assert_int_equal(p->role_tensors[w], 4);
    assert_int_equal(p->role_tensors[a], 5);
    assert_int_equal(p->tensors, 9);
    assert_int_equal(p->nmem_steps, 5);
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(p->mem_steps[i].start, 2048);
        assert_int_equal(p->mem_steps[i].peak, 4096);
        assert_int_equal(p->mem_steps[i].end, 2048);
    }
    assert_int_equal(p->mem_steps_dropped, 0);

    analyze_profile *q = analyze_profile_create("direct", 0, 0);
    assert_non_null(q);
    int rw = analyze_profile_intern_role(q, "weight"), ra = analyze_profile_intern_role(q, "activation");
    /* 100 before any step, then a step that allocates 50 and frees it, then 300 after it */
    assert_int_equal(analyze_profile_tensor_alloc(q, 1, rw, 100), 0);
    assert_int_equal(analyze_profile_step_begin(q, 10, 0), 0);
    assert_int_equal(analyze_profile_tensor_alloc(q, 2, ra, 50), 0);
    analyze_profile_tensor_free(q, 2);
    assert_int_equal(analyze_profile_step_end(q, 20, 0), 0);
    assert_int_equal(q->peak_bytes, 150);
    assert_int_equal(q->peak_in_step, 1);
    assert_int_equal(analyze_profile_tensor_alloc(q, 3, ra, 300), 0);
    assert_int_equal(q->peak_bytes, 400);
    assert_int_equal(q->peak_in_step, 0);
    assert_int_equal(q->peak_step, 1); /* after step 0: before a step 1 */
    assert_int_equal(q->role_at_peak[ra], 300);
    assert_int_equal(q->role_peak[ra], 300);
    analyze_profile_finish(q);
    assert_int_equal(q->nmem_steps, 1);
    assert_int_equal(q->mem_steps[0].peak, 150);
    assert_int_equal(q->mem_steps[0].end, 100);
    capture c;
    assert_int_equal(analyze_memory_print(capture_open(&c), &q, 1, CLI_TEXT), 0);
    char *buf = capture_close(&c);
    assert_non_null(strstr(buf, "peak 400 B of tensors (3 allocated in all), reached after the last step\n"));
    free(buf);
    analyze_profile_destroy(q);
    analyze_profile_destroy(p);
}

static char *output(analyze_profile *const *p, size_t n, cli_format fmt)
{
    capture c;
    assert_int_equal(analyze_memory_print(capture_open(&c), p, n, fmt), 0);
    return capture_close(&c);
}

static void test_outputs(void **state)
{
    (void)state;
    analyze_profile *p[2] = { trace("tr", "mlp", CTFGEN_TRAIN, 3, 0), trace("in", "mlp", CTFGEN_INFER, 4, 0) };
    char *txt = output(p, 2, CLI_TEXT);
    assert_non_null(strstr(txt, "peak 4.00 KiB of tensors (7 allocated in all), reached in step 0\n"));
    assert_non_null(strstr(txt, "steps: 3; live at the start 2.00 KiB, at the end 2.00 KiB; the most within a step "
                                "4.00 KiB (step 0)\n"));
    assert_non_null(strstr(txt, "== at each trace's peak (MiB)"));
    free(txt);

    char *js = output(p, 2, CLI_JSON);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    assert_non_null(root);
    assert_string_equal(json_string_value(json_object_get(root, "analysis")), "memory");
    json_t *t1 = json_array_get(json_object_get(root, "traces"), 1);
    assert_string_equal(json_string_value(json_object_get(t1, "mode")), "infer");
    assert_int_equal(json_integer_value(json_object_get(t1, "peak_bytes")), 4096);
    assert_true(json_is_true(json_object_get(t1, "peak_in_step")));
    json_t *roles = json_object_get(t1, "roles");
    assert_int_equal(json_array_size(roles), 2);
    assert_string_equal(json_string_value(json_object_get(json_array_get(roles, 0), "role")), "activation");
    assert_int_equal(json_integer_value(json_object_get(json_array_get(roles, 0), "tensors")), 4);
    assert_int_equal(json_array_size(json_object_get(t1, "steps")), 4);
    assert_int_equal(json_integer_value(json_object_get(json_array_get(json_object_get(t1, "steps"), 3), "end_bytes")),
                     2048);
    json_decref(root);
    free(js);

    char *csv = output(p, 2, CLI_CSV);
    assert_non_null(strstr(csv, "source,trace,level,name,at_peak_bytes,peak_bytes,share_of_peak,tensors,start_bytes,"
                                "end_bytes\n"));
    assert_non_null(strstr(csv, ",mlp/train,role,activation,2048,2048,0.500000,3,,\n"));
    assert_non_null(strstr(csv, ",mlp/infer,total,total,4096,4096,1.000000,8,,\n"));
    assert_non_null(strstr(csv, ",mlp/infer,step,3,,4096,,,2048,2048\n"));
    size_t lines = 0;
    for (char *c = csv; *c; c++)
        lines += *c == '\n';
    assert_int_equal(lines, 1 + (2 + 1 + 3) + (2 + 1 + 4));
    free(csv);
    analyze_profile_destroy(p[0]);
    analyze_profile_destroy(p[1]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_memory),
        cmocka_unit_test(test_outputs),
    };
    return cmocka_run_group_tests(tests, testdir_setup_all, testdir_teardown_all);
}
