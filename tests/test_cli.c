/* test_cli.c -- the `fathom` driver as a user meets it: help, errors,
 * `fathom ops` listing the whole table, `fathom peak` measuring for real. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "exec/exec.h"

/* Runs `fathom ARGS`, capturing stdout (and stderr into *err when given). */
static int run(const char *args, char **out, char **err)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s %s 2>%s/cli.err", FATHOM_BIN, args, FATHOM_TEST_TMP);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    size_t n;
    while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 4096)
            buf = realloc(buf, cap *= 2);
    }
    buf[len] = 0;
    int st = pclose(p);
    *out = buf;
    if (err) {
        char path[512];
        snprintf(path, sizeof path, "%s/cli.err", FATHOM_TEST_TMP);
        FILE *f = fopen(path, "r");
        char *e = calloc(1, 8192);
        if (f) {
            size_t r = fread(e, 1, 8191, f);
            e[r] = 0;
            fclose(f);
        }
        *err = e;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_ops_lists_table(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run("ops", &out, NULL), 0);
    assert_int_equal(count_lines(out), EXEC_OP_COUNT);
    for (int i = 0; i < EXEC_OP_COUNT; i++)
        assert_non_null(strstr(out, exec_op_table[i].name));
    free(out);
    assert_int_equal(run("ops --format csv", &out, NULL), 0);
    assert_int_equal(count_lines(out), EXEC_OP_COUNT + 1);
    free(out);
    assert_int_equal(run("ops --format json", &out, NULL), 0);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    assert_non_null(j);
    assert_int_equal(json_array_size(json_object_get(j, "ops")), EXEC_OP_COUNT);
    json_decref(j);
    free(out);
}

static void test_peak_measures(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run("peak --size 256 --threads 1 --format json", &out, NULL), 0);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    assert_non_null(j);
    double gf = json_number_value(json_object_get(j, "peak_gflops"));
    double bw = json_number_value(json_object_get(j, "bandwidth_gbs"));
    printf("peak (256^3, 1 thread): %.1f GFLOP/s, %.1f GB/s\n", gf, bw);
    assert_true(gf > 0.5 && gf < 1e5);
    assert_true(bw > 0.1 && bw < 1e4);
    json_decref(j);
    free(out);
}

static void test_bad_input(void **state)
{
    (void)state;
    static const char *const bad[] = { "bogus",           "ops --format xml", "ops --nope",     "peak --threads 0",
                                       "peak --size abc", "version extra",    "help nosuchcmd", "" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char *out, *err;
        int rc = run(bad[i], &out, &err);
        printf("fathom %-18s -> %d: %s", bad[i], rc, err);
        assert_int_equal(rc, 2);
        assert_true(strncmp(err, "fathom", 6) == 0 || strncmp(err, "usage", 5) == 0);
        free(out);
        free(err);
    }
}

/* `var=value fathom version`: a one-line error naming the variable and
 * the value, nothing on stdout, exit 1 */
static void env_rejected(const char *var, const char *value)
{
    char *out, *err;
    setenv(var, value, 1);
    int rc = run("version", &out, &err);
    unsetenv(var);
    printf("%s=%s fathom version -> %d: %s", var, value, rc, err);
    char quoted[64];
    snprintf(quoted, sizeof quoted, "'%s'", value);
    assert_int_equal(rc, 1);
    assert_non_null(strstr(err, var));
    assert_non_null(strstr(err, quoted));
    assert_int_equal(count_lines(err), 1);
    assert_string_equal(out, "");
    free(out);
    free(err);
}

/* A run's JSON gives each step's CPU time beside its wall time: above 0,
 * and with one thread no more than the wall time (a clock tick of slack) */
static void test_run_cpu_ms(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run("run memnet --preset tiny --steps 3 --threads 1 --format json", &out, NULL), 0);
    int steps = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        assert_non_null(j);
        if (json_object_get(j, "step")) {
            double cpu = json_real_value(json_object_get(j, "cpu_ms"));
            double ms = json_real_value(json_object_get(j, "ms"));
            printf("step: %.3f ms, %.3f ms of CPU\n", ms, cpu);
            assert_true(cpu > 0 && cpu <= ms + 0.1);
            steps++;
        }
        json_decref(j);
    }
    assert_int_equal(steps, 3);
    free(out);
}

/* FATHOM_DENORMALS and --denormals: flush and keep work (fathom version
 * and a run's JSON say which), anything else is a one-line error naming
 * the variable or the flag */
static void test_denormals_env(void **state)
{
    (void)state;
    char *out, *err;
    assert_int_equal(run("version", &out, NULL), 0);
    assert_non_null(strstr(out, "denormals: flushed to zero"));
    free(out);
    setenv("FATHOM_DENORMALS", "keep", 1);
    assert_int_equal(run("version", &out, NULL), 0);
    assert_non_null(strstr(out, "denormals: kept"));
    free(out);
    assert_int_equal(run("run memnet --steps 1 --format json", &out, NULL), 0);
    assert_non_null(strstr(out, "\"denormals\":\"keep\""));
    free(out);
    env_rejected("FATHOM_DENORMALS", "ftz");
    int rc;
    assert_int_equal(run("run memnet --steps 1 --denormals keep --format json", &out, NULL), 0);
    assert_non_null(strstr(out, "\"denormals\":\"keep\""));
    free(out);
    assert_int_equal(run("run memnet --steps 1 --format json", &out, NULL), 0);
    assert_non_null(strstr(out, "\"denormals\":\"flush\""));
    free(out);
    for (int i = 0; i < 2; i++) {
        rc = run(i ? "replay x.tar --denormals off" : "run memnet --denormals off", &out, &err);
        printf("--denormals off -> %d: %s", rc, err);
        assert_int_equal(rc, 2);
        assert_non_null(strstr(err, "--denormals 'off'"));
        assert_int_equal(count_lines(err), 1);
        free(out);
        free(err);
    }
}

/* FATHOM_CONV_ALGO: the four names work, anything else is a one-line
 * error naming the variable */
static void test_conv_algo_env(void **state)
{
    (void)state;
    static const char *const good[] = { "auto", "im2col", "direct", "winograd" };
    char *out;
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        setenv("FATHOM_CONV_ALGO", good[i], 1);
        assert_int_equal(run("version", &out, NULL), 0);
        free(out);
    }
    env_rejected("FATHOM_CONV_ALGO", "fastest");
}

static void test_help(void **state)
{
    (void)state;
    static const char *const cmds[] = { "--help",   "ops --help",  "peak --help", "version --help",
                                        "help ops", "help --help", "help -h" };
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char *out;
        assert_int_equal(run(cmds[i], &out, NULL), 0);
        assert_non_null(strstr(out, "usage"));
        free(out);
    }
}

/* Each analysis has its own help: its usage line alone, not the list of all */
static void test_analysis_help(void **state)
{
    (void)state;
    static const char *const names[] = {
        "breakdown", "compare", "similarity", "diff", "scaling", "roofline", "memory"
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char cmd[64], want[64], *out;
        snprintf(cmd, sizeof cmd, "analyze %s --help", names[i]);
        snprintf(want, sizeof want, "usage: fathom analyze %s ", names[i]);
        assert_int_equal(run(cmd, &out, NULL), 0);
        printf("fathom %s -> %.*s\n", cmd, (int)strcspn(out, "\n"), out);
        assert_true(strncmp(out, want, strlen(want)) == 0);
        assert_int_equal(count_lines(out) > 8, 1);
        for (size_t j = 0; j < sizeof names / sizeof names[0]; j++) { /* no other analysis's usage */
            char other[64];
            snprintf(other, sizeof other, "fathom analyze %s ", names[j]);
            if (j != i)
                assert_null(strstr(out, other));
        }
        free(out);
    }
}

/* Counts agree with their nouns: "1 thread", "2 threads" */
static void test_thread_counts(void **state)
{
    (void)state;
    char *out;
    assert_int_equal(run("run autoenc --preset tiny --steps 1 --threads 1", &out, NULL), 0);
    printf("%.*s\n", (int)strcspn(out, "\n"), out);
    assert_non_null(strstr(out, " 1 thread,"));
    assert_null(strstr(out, " 1 threads"));
    free(out);
    assert_int_equal(run("run autoenc --preset tiny --steps 1 --threads 2", &out, NULL), 0);
    assert_non_null(strstr(out, " 2 threads,"));
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ops_lists_table), cmocka_unit_test(test_peak_measures),
        cmocka_unit_test(test_bad_input),       cmocka_unit_test(test_help),
        cmocka_unit_test(test_analysis_help),   cmocka_unit_test(test_thread_counts),
        cmocka_unit_test(test_conv_algo_env),   cmocka_unit_test(test_denormals_env),
        cmocka_unit_test(test_run_cpu_ms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
