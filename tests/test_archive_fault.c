/* test_archive_fault.c -- allocation failure injected at every allocation of
 * the archive library in turn (base_alloc_fail_after), while writing,
 * opening and reading a MANIFEST: each failure is a clean ENOMEM with a
 * message, gives back every byte it took (base_alloc_bytes) and leaves no
 * file behind, neither a half-written archive nor a temporary one nor an
 * extraction folder.  Injection stops counting at the first success: every
 * allocation of the operation was then reached and survived. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/alloc.h"
#include "tracer/archive.h"
#include "tracer/output.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERRLEN 512
#define MAX_POINTS 100000

/* base/{ctf,out,tmp}: a CTF tree, where archives go, TMPDIR */
static char base[PATH_MAX], ctf[PATH_MAX], out[PATH_MAX], tmp[PATH_MAX];

static void path(char *dst, const char *a, const char *b)
{
    int n = snprintf(dst, PATH_MAX, "%s/%s", a, b);
    assert_true(n > 0 && n < PATH_MAX);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char p[PATH_MAX];
    path(p, dir, name);
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    assert_int_equal(fputs(text, f) >= 0, 1);
    assert_int_equal(fclose(f), 0);
}

static void make_dir(const char *dir, const char *name)
{
    char p[PATH_MAX];
    path(p, dir, name);
    assert_int_equal(mkdir(p, 0755), 0);
}

/* Entries of dir other than . and .., their names into names (may be NULL). */
static size_t entries(const char *dir, char *names, size_t len)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    if (names && len)
        names[0] = '\0';
    for (struct dirent *de; (de = readdir(d));) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        n++;
        if (names)
            snprintf(names + strlen(names), len - strlen(names), " %s", de->d_name);
    }
    closedir(d);
    return n;
}

static tracer_manifest *manifest(void)
{
    tracer_manifest *m = tracer_manifest_create();
    assert_non_null(m);
    static const char *const kv[][2] = { { "schema", "2" },
                                         { "model", "mlp" },
                                         { "mode", "train" },
                                         { "preset", "tiny" },
                                         { "host", "testhost" },
                                         { "threads", "1" },
                                         { "blas", "a\tvalue\\with\nescapes" } };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        assert_int_equal(tracer_manifest_add(m, kv[i][0], kv[i][1]), TRACER_ARCHIVE_OK);
    return m;
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("FATHOM_TEST_TMP");
    snprintf(base, sizeof base, "%s/archive_fault-%ld", t && *t ? t : "/tmp", (long)getpid());
    tracer_remove_tree(base);
    assert_int_equal(mkdir(base, 0755), 0);
    path(ctf, base, "ctf");
    path(out, base, "out");
    path(tmp, base, "tmp");
    assert_int_equal(mkdir(ctf, 0755), 0);
    assert_int_equal(mkdir(out, 0755), 0);
    assert_int_equal(mkdir(tmp, 0755), 0);
    setenv("TMPDIR", tmp, 1);
    /* an LTTng-like tree: two CTF traces, a few folders deep */
    make_dir(ctf, "ust");
    make_dir(ctf, "ust/uid");
    make_dir(ctf, "ust/uid/0");
    make_dir(ctf, "ust/uid/0/64-bit");
    make_dir(ctf, "ust/uid/0/64-bit/index");
    make_dir(ctf, "ust/uid/0/32-bit");
    write_file(ctf, "ust/uid/0/64-bit/metadata", "/* CTF 1.8 */ trace { major = 1; };\n");
    write_file(ctf, "ust/uid/0/64-bit/chan_0_0", "stream 0");
    write_file(ctf, "ust/uid/0/64-bit/chan_0_1", "stream 1");
    write_file(ctf, "ust/uid/0/64-bit/index/chan_0_0.idx", "index");
    write_file(ctf, "ust/uid/0/32-bit/metadata", "/* CTF 1.8 */ trace { major = 1; };\n");
    write_file(ctf, "ust/uid/0/32-bit/chan_0_0", "stream");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    base_alloc_fail_after(0, 0);
    tracer_remove_tree(base);
    return 0;
}

/* The failure of one injected run: ENOMEM, a one-line message saying so. */
static void assert_nomem(int st, const char *err, uint64_t n)
{
    if (st != TRACER_ARCHIVE_ENOMEM || !strstr(err, "out of memory"))
        fail_msg("allocation %llu failed: status %d (%s), message '%s'", (unsigned long long)n, st,
                 tracer_archive_strstatus((tracer_archive_status)st), err);
    assert_null(strchr(err, '\n'));
}

/* Nothing in dir: no archive, no temporary file, no extraction folder. */
static void assert_empty(const char *dir, uint64_t n)
{
    char names[1024];
    if (entries(dir, names, sizeof names) != 0)
        fail_msg("allocation %llu failed: left behind in %s:%s", (unsigned long long)n, dir, names);
}

/* One run of the operation under test, with injection armed; the status. */
typedef int (*op_fn)(uint64_t n);

/* Sticky injection (the n-th allocation and all later ones fail) for n =
 * 1, 2, ... until a run succeeds: then one-shot injection (the n-th alone
 * fails) at each of those points.  Every failure passes check(); returns the
 * number of allocation points. */
static uint64_t inject(op_fn op, void (*check)(uint64_t n), void (*undo)(void))
{
    uint64_t points = 0;
    for (int sticky = 1; sticky >= 0; sticky--) {
        for (uint64_t n = 1; n < MAX_POINTS; n++) {
            if (!sticky && n >= points)
                break;
            size_t before = base_alloc_bytes();
            base_errmsg_clear();
            base_alloc_fail_after(n, sticky);
            int st = op(n);
            base_alloc_fail_after(0, 0);
            if (st == TRACER_ARCHIVE_OK) {
                undo();
                assert_int_equal(base_alloc_bytes(), before);
                if (!sticky)
                    fail_msg("allocation %llu of %llu failed once and the operation succeeded", (unsigned long long)n,
                             (unsigned long long)points);
                points = n; /* past the last allocation */
                break;
            }
            assert_nomem(st, base_errmsg(), n);
            if (base_alloc_bytes() != before)
                fail_msg("allocation %llu failed: %zu bytes not given back", (unsigned long long)n,
                         base_alloc_bytes() - before);
            check(n);
        }
    }
    assert_true(points > 1);
    return points - 1;
}

/* ---- writing ------------------------------------------------------------ */

static tracer_manifest *g_m;

static int op_write(uint64_t n)
{
    (void)n;
    char p[PATH_MAX];
    path(p, out, "t.tar.zst");
    return tracer_archive_write(p, ctf, g_m);
}

static void check_out_empty(uint64_t n) { assert_empty(out, n); }

static void undo_out(void)
{
    tracer_remove_tree(out);
    assert_int_equal(mkdir(out, 0755), 0);
}

static void test_write(void **state)
{
    (void)state;
    g_m = manifest();
    uint64_t points = inject(op_write, check_out_empty, undo_out);
    printf("tracer_archive_write: %llu allocation points, each a clean ENOMEM\n", (unsigned long long)points);
    tracer_manifest_destroy(g_m);
}

/* the default name in a folder still to be made */
static int op_write_default(uint64_t n)
{
    (void)n;
    char dir[PATH_MAX], p[PATH_MAX];
    path(dir, out, "new/traces");
    return tracer_archive_write_default(dir, ctf, g_m, 1700000000, p, sizeof p);
}

/* The folders may have been made; no file in them. */
static void check_no_file(uint64_t n)
{
    char dir[PATH_MAX];
    path(dir, out, "new/traces");
    if (access(dir, F_OK) == 0)
        assert_empty(dir, n);
}

static void test_write_default(void **state)
{
    (void)state;
    g_m = manifest();
    uint64_t points = inject(op_write_default, check_no_file, undo_out);
    printf("tracer_archive_write_default: %llu allocation points, each a clean ENOMEM\n", (unsigned long long)points);
    tracer_manifest_destroy(g_m);
}

/* ---- opening ------------------------------------------------------------ */

static char g_source[PATH_MAX];

static int op_open(uint64_t n)
{
    (void)n;
    tracer_trace *t = (tracer_trace *)1;
    int st = tracer_trace_open(g_source, &t);
    if (st != TRACER_ARCHIVE_OK) {
        assert_null(t);
        return st;
    }
    /* what a reader looks at, then closed: the extraction folder goes */
    assert_int_equal(tracer_trace_ctf_count(t), 2);
    assert_non_null(tracer_trace_manifest(t));
    assert_string_equal(tracer_manifest_get(tracer_trace_manifest(t), "model"), "mlp");
    tracer_trace_close(t);
    return st;
}

static void check_tmp_empty(uint64_t n) { assert_empty(tmp, n); }

static void undo_nothing(void) { assert_int_equal(entries(tmp, NULL, 0), 0); }

static void test_open_archive(void **state)
{
    (void)state;
    tracer_manifest *m = manifest();
    path(g_source, out, "open.tar.zst");
    assert_int_equal(tracer_archive_write(g_source, ctf, m), TRACER_ARCHIVE_OK);
    tracer_manifest_destroy(m);
    uint64_t points = inject(op_open, check_tmp_empty, undo_nothing);
    printf("tracer_trace_open (archive): %llu allocation points, each a clean ENOMEM\n", (unsigned long long)points);
    assert_int_equal(unlink(g_source), 0);
}

static void test_open_dir(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len;
    tracer_manifest *m = manifest();
    assert_int_equal(tracer_manifest_serialize(m, &text, &len), TRACER_ARCHIVE_OK);
    write_file(ctf, TRACER_MANIFEST_FILE, text);
    base_free(text);
    tracer_manifest_destroy(m);
    snprintf(g_source, sizeof g_source, "%s", ctf);
    uint64_t points = inject(op_open, check_tmp_empty, undo_nothing);
    printf("tracer_trace_open (folder): %llu allocation points, each a clean ENOMEM\n", (unsigned long long)points);
    char p[PATH_MAX];
    path(p, ctf, TRACER_MANIFEST_FILE);
    assert_int_equal(unlink(p), 0);
}

/* ---- the MANIFEST --------------------------------------------------------- */

static int op_manifest(uint64_t n)
{
    (void)n;
    tracer_manifest *m = NULL;
    char *text = NULL;
    size_t len;
    int st = tracer_manifest_read_file(g_source, &m);
    if (st == TRACER_ARCHIVE_OK)
        st = tracer_manifest_set_u64(m, "steps", 12);
    if (st == TRACER_ARCHIVE_OK)
        st = tracer_manifest_serialize(m, &text, &len);
    base_free(text);
    tracer_manifest_destroy(m);
    return st;
}

static void check_nothing(uint64_t n) { (void)n; }

static void undo_none(void) {}

static void test_manifest(void **state)
{
    (void)state;
    char *text = NULL;
    size_t len;
    tracer_manifest *m = manifest();
    assert_int_equal(tracer_manifest_serialize(m, &text, &len), TRACER_ARCHIVE_OK);
    write_file(out, "MANIFEST", text);
    base_free(text);
    tracer_manifest_destroy(m);
    path(g_source, out, "MANIFEST");
    uint64_t points = inject(op_manifest, check_nothing, undo_none);
    printf("MANIFEST read, set, serialize: %llu allocation points, each a clean ENOMEM\n", (unsigned long long)points);
    assert_int_equal(unlink(g_source), 0);
}

/* ---- an output file (output.c: temporary, renamed into place) ----------- */

static int op_output(uint64_t n)
{
    (void)n;
    char p[PATH_MAX], in[PATH_MAX];
    path(p, out, "result.txt");
    path(in, out, "input");
    const char *inputs[] = { in, ctf };
    tracer_output *o = NULL;
    int st = (int)tracer_output_open(p, inputs, 2, "test", &o);
    if (st != TRACER_OUTPUT_OK)
        return st == TRACER_OUTPUT_ENOMEM ? TRACER_ARCHIVE_ENOMEM : TRACER_ARCHIVE_EIO;
    fputs("result\n", tracer_output_file(o));
    st = (int)tracer_output_commit(o);
    return st == TRACER_OUTPUT_OK       ? TRACER_ARCHIVE_OK
           : st == TRACER_OUTPUT_ENOMEM ? TRACER_ARCHIVE_ENOMEM
                                        : TRACER_ARCHIVE_EIO;
}

static void undo_output(void)
{
    char p[PATH_MAX];
    path(p, out, "result.txt");
    assert_int_equal(unlink(p), 0);
    assert_int_equal(entries(out, NULL, 0), 1); /* the input alone */
}

static void check_input_alone(uint64_t n)
{
    char names[1024];
    if (entries(out, names, sizeof names) != 1)
        fail_msg("allocation %llu failed: left behind in %s:%s", (unsigned long long)n, out, names);
}

static void test_output(void **state)
{
    (void)state;
    write_file(out, "input", "input\n");
    uint64_t points = inject(op_output, check_input_alone, undo_output);
    printf("tracer_output_open, commit: %llu allocation points, each a clean ENOMEM\n", (unsigned long long)points);
    char p[PATH_MAX];
    path(p, out, "input");
    assert_int_equal(unlink(p), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_write, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_default, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_archive, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_manifest, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
