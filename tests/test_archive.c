/*
 * Tests for the archive library (tracer/archive.h): manifest, write, open,
 * and hostile archives built here with libarchive's writer or raw bytes.
 */
#define _GNU_SOURCE /* mkdtemp, setenv, nftw */

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "base/alloc.h"
#include "tracer/archive.h"

#include <archive.h>
#include <archive_entry.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define ERRLEN 512

/* Per-test scratch area:  base/{ctf,tmp,out,outside}; TMPDIR=base/tmp. */
typedef struct fixture {
    char base[PATH_MAX];
    char ctf[PATH_MAX];
    char tmp[PATH_MAX];
    char out[PATH_MAX];
    char outside[PATH_MAX];
} fixture;

/* ---------------------------------------------------------------- helpers */

static void xmkdir(const char *p) { assert_int_equal(mkdir(p, 0755), 0); }

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    if (len)
        assert_int_equal(fwrite(data, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    long n;

    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = '\0';
    fclose(f);
    if (len)
        *len = (size_t)n;
    return buf;
}

static bool exists(const char *p)
{
    struct stat sb;

    return lstat(p, &sb) == 0;
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL) {
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
            n++;
    }
    closedir(d);
    return n;
}

static int rm_cb(const char *p, const struct stat *sb, int fl, struct FTW *f)
{
    (void)sb;
    (void)fl;
    (void)f;
    return remove(p);
}

static void rm_rf(const char *p) { nftw(p, rm_cb, 16, FTW_DEPTH | FTW_PHYS); }

static void pjoin(char *dst, const char *a, const char *b)
{
    int n = snprintf(dst, PATH_MAX, "%s/%s", a, b);

    assert_true(n > 0 && n < PATH_MAX);
}

/* An LTTng-like output tree with two CTF traces (64- and 32-bit). */
static void make_ctf(const char *root)
{
    static const char *dirs[] = {
        "ust", "ust/uid", "ust/uid/0", "ust/uid/0/64-bit", "ust/uid/0/64-bit/index", "ust/uid/0/32-bit",
    };
    char p[PATH_MAX];
    char big[100000];

    for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++) {
        pjoin(p, root, dirs[i]);
        xmkdir(p);
    }
    for (size_t i = 0; i < sizeof(big); i++)
        big[i] = (char)(i * 7 + i / 251);
    pjoin(p, root, "ust/uid/0/64-bit/metadata");
    write_file(p, "/* CTF 1.8 */ trace { major = 1; };\n", 36);
    pjoin(p, root, "ust/uid/0/64-bit/chan_0_0");
    write_file(p, big, sizeof(big));
    pjoin(p, root, "ust/uid/0/64-bit/index/chan_0_0.idx");
    write_file(p, "idx", 3);
    pjoin(p, root, "ust/uid/0/32-bit/metadata");
    write_file(p, "/* CTF 1.8 */ 32\n", 17);
    pjoin(p, root, "ust/uid/0/32-bit/chan_0_0");
    write_file(p, "", 0);
}

/* Recursively check every file under a also exists with equal content
 * under b, and vice versa (by counts). */
static void assert_same_tree(const char *a, const char *b)
{
    DIR *d = opendir(a);
    struct dirent *de;

    assert_non_null(d);
    assert_int_equal(count_entries(a), count_entries(b));
    while ((de = readdir(d)) != NULL) {
        char pa[PATH_MAX], pb[PATH_MAX];
        struct stat sa, sb;

        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        pjoin(pa, a, de->d_name);
        pjoin(pb, b, de->d_name);
        assert_int_equal(lstat(pa, &sa), 0);
        assert_int_equal(lstat(pb, &sb), 0);
        if (S_ISDIR(sa.st_mode)) {
            assert_true(S_ISDIR(sb.st_mode));
            assert_same_tree(pa, pb);
        } else {
            size_t la, lb;
            char *ca = read_file(pa, &la), *cb = read_file(pb, &lb);

            assert_true(S_ISREG(sb.st_mode));
            assert_non_null(ca);
            assert_non_null(cb);
            assert_int_equal(la, lb);
            assert_memory_equal(ca, cb, la);
            free(ca);
            free(cb);
        }
    }
    closedir(d);
}

static tracer_manifest *sample_manifest(void)
{
    tracer_manifest *m = tracer_manifest_create();

    assert_non_null(m);
    assert_int_equal(tracer_manifest_set_u64(m, "schema", 1), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "model", "alexnet"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "mode", "train"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "preset", "tiny"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "host", "node/7 lab"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "cpu", "Intel(R) Xeon(R) \\ 2.0GHz"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "blas", "OpenBLAS 0.3.21\nDYNAMIC_ARCH"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_set_u64(m, "threads", 8), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "created", "2024-05-01T12:00:00Z"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_set_u64(m, "events.fathom:op_begin", 123), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_set_u64(m, "events.fathom:op_end", 123), TRACER_ARCHIVE_OK);
    return m;
}

static void assert_same_manifest(const tracer_manifest *a, const tracer_manifest *b)
{
    assert_non_null(a);
    assert_non_null(b);
    assert_int_equal(tracer_manifest_count(a), tracer_manifest_count(b));
    for (size_t i = 0; i < tracer_manifest_count(a); i++) {
        assert_string_equal(tracer_manifest_key_at(a, i), tracer_manifest_key_at(b, i));
        assert_string_equal(tracer_manifest_value_at(a, i), tracer_manifest_value_at(b, i));
    }
}

/* A one-line, non-empty message that names `what`. */
static void assert_message(const char *err, const char *what)
{
    assert_true(strlen(err) > 0);
    assert_null(strchr(err, '\n'));
    if (what)
        assert_non_null(strstr(base_errmsg(), what));
}

/* ---------------------------------------------------------------- fixture */

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    const char *tb = getenv("FATHOM_TEST_TMP");

    if (!f)
        return -1;
    snprintf(f->base, sizeof(f->base), "%s/fathom-test-XXXXXX", tb && *tb ? tb : "/tmp");
    if (!mkdtemp(f->base))
        return -1;
    pjoin(f->ctf, f->base, "ctf");
    pjoin(f->tmp, f->base, "tmp");
    pjoin(f->out, f->base, "out");
    pjoin(f->outside, f->base, "outside");
    xmkdir(f->ctf);
    xmkdir(f->tmp);
    xmkdir(f->out);
    xmkdir(f->outside);
    make_ctf(f->ctf);
    setenv("TMPDIR", f->tmp, 1);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    rm_rf(f->base);
    free(f);
    return 0;
}

/* -------------------------------------------------------------- manifest */

static void test_manifest_roundtrip(void **state)
{
    tracer_manifest *m = sample_manifest(), *p = NULL;
    char *text = NULL;
    size_t len = 0, lines = 0;
    uint64_t v = 0;

    (void)state;
    assert_int_equal(tracer_manifest_add(m, "ctl",
                                         "a\tb\rc\x01"
                                         "d"),
                     TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_serialize(m, &text, &len), TRACER_ARCHIVE_OK);
    assert_int_equal(strlen(text), len);
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    assert_int_equal(lines, tracer_manifest_count(m)); /* one per entry */
    assert_non_null(strstr(text, "schema=1\n"));
    assert_non_null(strstr(text, "events.fathom:op_begin=123\n"));
    assert_non_null(strstr(text, "blas=OpenBLAS 0.3.21\\nDYNAMIC_ARCH\n"));
    assert_non_null(strstr(text, "ctl=a\\tb\\rc\\x01d\n"));
    assert_int_equal(tracer_manifest_parse(text, len, "t", &p), TRACER_ARCHIVE_OK);
    assert_same_manifest(m, p);
    assert_string_equal(tracer_manifest_get(p, "blas"), "OpenBLAS 0.3.21\nDYNAMIC_ARCH");
    assert_int_equal(tracer_manifest_get_u64(p, "events.fathom:op_begin", &v), TRACER_ARCHIVE_OK);
    assert_int_equal(v, 123);
    assert_int_equal(tracer_manifest_get_u64(p, "model", &v), TRACER_ARCHIVE_EFORMAT);
    assert_int_equal(tracer_manifest_get_u64(p, "nope", &v), TRACER_ARCHIVE_EINVAL);
    assert_null(tracer_manifest_get(p, "nope"));
    base_free(text);
    tracer_manifest_destroy(m);
    tracer_manifest_destroy(p);
}

static void test_manifest_add_set(void **state)
{
    tracer_manifest *m = tracer_manifest_create();
    char longv[TRACER_MANIFEST_VALUE_MAX + 2];

    (void)state;
    assert_int_equal(tracer_manifest_add(m, "a", "1"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "b", "2"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_add(m, "a", "3"), TRACER_ARCHIVE_EEXIST);
    assert_message(base_errmsg(), "'a'");
    assert_int_equal(tracer_manifest_set(m, "a", "4"), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_count(m), 2);
    assert_string_equal(tracer_manifest_key_at(m, 0), "a"); /* in place */
    assert_string_equal(tracer_manifest_value_at(m, 0), "4");
    assert_null(tracer_manifest_key_at(m, 2));
    /* invalid keys */
    assert_int_equal(tracer_manifest_add(m, "", "x"), TRACER_ARCHIVE_EINVAL);
    assert_int_equal(tracer_manifest_add(m, "a=b", "x"), TRACER_ARCHIVE_EINVAL);
    assert_int_equal(tracer_manifest_add(m, "a\nb", "x"), TRACER_ARCHIVE_EINVAL);
    assert_message(base_errmsg(), "invalid key");
    assert_int_equal(tracer_manifest_add(m, "sp ace", "x"), TRACER_ARCHIVE_EINVAL);
    memset(longv, 'v', sizeof(longv) - 1);
    longv[sizeof(longv) - 1] = '\0';
    assert_int_equal(tracer_manifest_add(m, "long", longv), TRACER_ARCHIVE_EINVAL);
    assert_int_equal(tracer_manifest_add(m, NULL, "x"), TRACER_ARCHIVE_EINVAL);
    assert_int_equal(tracer_manifest_count(m), 2);
    tracer_manifest_destroy(m);
    tracer_manifest_destroy(NULL);
}

static void expect_parse_error(const char *text, const char *what)
{
    tracer_manifest *m = (tracer_manifest *)&m; /* must be reset */

    assert_int_not_equal(tracer_manifest_parse(text, strlen(text), "MF", &m), TRACER_ARCHIVE_OK);
    assert_null(m);
    assert_message(base_errmsg(), what);
    assert_non_null(strstr(base_errmsg(), "MF"));
}

static void test_manifest_parse(void **state)
{
    const char ok[] = "# comment\r\n\nschema=1\r\nempty=\nk.e-y_:1=a=b\n"
                      "last=no newline";
    const char nul[] = "a=1\n\0b=2\n";
    tracer_manifest *m = NULL;

    (void)state;
    assert_int_equal(tracer_manifest_parse(ok, strlen(ok), NULL, &m), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_count(m), 4);
    assert_string_equal(tracer_manifest_get(m, "schema"), "1");
    assert_string_equal(tracer_manifest_get(m, "empty"), "");
    assert_string_equal(tracer_manifest_get(m, "k.e-y_:1"), "a=b");
    assert_string_equal(tracer_manifest_get(m, "last"), "no newline");
    tracer_manifest_destroy(m);
    m = NULL;
    assert_int_equal(tracer_manifest_parse("", 0, NULL, &m), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_manifest_count(m), 0);
    tracer_manifest_destroy(m);

    expect_parse_error("a=1\nno equals sign\n", "MF:2");
    expect_parse_error("bad key=1\n", "invalid key");
    expect_parse_error("=1\n", "invalid key");
    expect_parse_error("a=1\na=2\n", "duplicate key");
    expect_parse_error("a=x\\q\n", "unknown escape");
    expect_parse_error("a=x\\\n", "dangling");
    expect_parse_error("a=x\\x4\n", "\\x escape");
    expect_parse_error("a=x\\x00\n", "\\x escape");
    expect_parse_error("a=x\x01y\n", "control byte");
    m = (tracer_manifest *)&m;
    assert_int_equal(tracer_manifest_parse(nul, sizeof(nul) - 1, "MF", &m), TRACER_ARCHIVE_EFORMAT);
    assert_null(m);
    assert_message(base_errmsg(), "NUL");
}

/* ----------------------------------------------------------- write / open */

static void test_roundtrip(void **state)
{
    fixture *f = *state;
    tracer_manifest *m = sample_manifest();
    tracer_trace *t = NULL;
    char out[PATH_MAX], exp[PATH_MAX], tdir[PATH_MAX];

    pjoin(out, f->out, "run.tar.zst");
    assert_int_equal(tracer_archive_write(out, f->ctf, m), TRACER_ARCHIVE_OK);
    assert_true(exists(out));
    assert_int_equal(count_entries(f->out), 1); /* no temp file left */

    assert_int_equal(tracer_trace_open(out, &t), TRACER_ARCHIVE_OK);
    assert_non_null(t);
    assert_int_equal(tracer_trace_get_kind(t), TRACER_TRACE_ARCHIVE);
    assert_string_equal(tracer_trace_source(t), out);
    assert_int_equal(count_entries(f->tmp), 1); /* our private dir */
    snprintf(tdir, sizeof(tdir), "%s", tracer_trace_root(t));
    assert_int_equal(strncmp(tdir, f->tmp, strlen(f->tmp)), 0);
    assert_same_manifest(m, tracer_trace_manifest(t));

    assert_int_equal(tracer_trace_ctf_count(t), 2);
    pjoin(exp, tdir, "trace/ust/uid/0/32-bit");
    assert_string_equal(tracer_trace_ctf_path(t, 0), exp);
    pjoin(exp, tdir, "trace/ust/uid/0/64-bit");
    assert_string_equal(tracer_trace_ctf_path(t, 1), exp);
    assert_null(tracer_trace_ctf_path(t, 2));

    pjoin(exp, tdir, "trace");
    assert_same_tree(f->ctf, exp);
    pjoin(exp, tdir, "MANIFEST");
    assert_true(exists(exp));

    tracer_trace_close(t);
    assert_false(exists(tdir));
    assert_int_equal(count_entries(f->tmp), 0);
    tracer_manifest_destroy(m);
}

static void test_no_overwrite(void **state)
{
    fixture *f = *state;
    tracer_manifest *m = sample_manifest();
    char out[PATH_MAX];
    char *content;

    pjoin(out, f->out, "existing.tar.zst");
    write_file(out, "precious", 8);
    assert_int_equal(tracer_archive_write(out, f->ctf, m), TRACER_ARCHIVE_EEXIST);
    assert_message(base_errmsg(), out);
    content = read_file(out, NULL);
    assert_string_equal(content, "precious");
    free(content);
    assert_int_equal(count_entries(f->out), 1);

    /* a source that cannot be archived leaves nothing behind */
    {
        char bad[PATH_MAX], lnk[PATH_MAX];

        pjoin(lnk, f->ctf, "ust/uid/0/64-bit/evil");
        assert_int_equal(symlink("/etc/passwd", lnk), 0);
        pjoin(bad, f->out, "bad.tar.zst");
        assert_int_equal(tracer_archive_write(bad, f->ctf, m), TRACER_ARCHIVE_EINVAL);
        assert_message(base_errmsg(), "evil");
        assert_false(exists(bad));
        assert_int_equal(count_entries(f->out), 1);
        unlink(lnk);
    }
    /* missing source directory */
    {
        char bad[PATH_MAX], nodir[PATH_MAX];

        pjoin(bad, f->out, "bad.tar.zst");
        pjoin(nodir, f->base, "nodir");
        assert_int_not_equal(tracer_archive_write(bad, nodir, m), TRACER_ARCHIVE_OK);
        assert_message(base_errmsg(), "nodir");
        assert_int_equal(count_entries(f->out), 1);
    }
    tracer_manifest_destroy(m);
}

static void test_default_name(void **state)
{
    fixture *f = *state;
    tracer_manifest *m = sample_manifest();
    const time_t when = 1714564800; /* 2024-05-01T12:00:00Z */
    char name[256], p1[PATH_MAX], p2[PATH_MAX], pp[PATH_MAX], dir[PATH_MAX];
    tracer_trace *t = NULL;

    assert_int_equal(tracer_archive_default_name(m, when, name, sizeof(name)), TRACER_ARCHIVE_OK);
    assert_string_equal(name, "alexnet-train-tiny-node_7_lab-20240501T120000Z"
                              ".tar.zst");
    assert_int_equal(tracer_archive_default_name(m, when, name, 10), TRACER_ARCHIVE_EINVAL);

    pjoin(dir, f->out, "traces/nested"); /* created on demand */
    assert_int_equal(tracer_archive_default_path(dir, m, when, pp, sizeof(pp)), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_archive_write_default(dir, f->ctf, m, when, p1, sizeof(p1)), TRACER_ARCHIVE_OK);
    assert_string_equal(p1, pp);
    assert_int_equal(tracer_archive_write_default(dir, f->ctf, m, when, p2, sizeof(p2)), TRACER_ARCHIVE_OK);
    assert_string_not_equal(p1, p2);
    assert_non_null(strstr(p2, "20240501T120000Z-1.tar.zst"));
    assert_true(exists(p1));
    assert_true(exists(p2));
    assert_int_equal(count_entries(dir), 2);
    assert_int_equal(tracer_archive_default_path(dir, m, when, pp, sizeof(pp)), TRACER_ARCHIVE_OK);
    assert_non_null(strstr(pp, "-2.tar.zst"));

    assert_int_equal(tracer_trace_open(p2, &t), TRACER_ARCHIVE_OK);
    assert_string_equal(tracer_manifest_get(tracer_trace_manifest(t), "model"), "alexnet");
    tracer_trace_close(t);

    /* missing fields fall back to "unknown" */
    {
        tracer_manifest *e = tracer_manifest_create();

        assert_int_equal(tracer_archive_default_name(e, when, name, sizeof(name)), TRACER_ARCHIVE_OK);
        assert_string_equal(name, "unknown-unknown-unknown-unknown-"
                                  "20240501T120000Z.tar.zst");
        tracer_manifest_destroy(e);
    }
    assert_int_equal(count_entries(f->tmp), 0);
    tracer_manifest_destroy(m);
}

static void test_open_dir(void **state)
{
    fixture *f = *state;
    tracer_trace *t = NULL;
    char exp[PATH_MAX], mf[PATH_MAX], slash[PATH_MAX];

    pjoin(slash, f->ctf, "/");
    assert_int_equal(tracer_trace_open(slash, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_trace_get_kind(t), TRACER_TRACE_DIR);
    assert_int_equal(tracer_trace_ctf_count(t), 2);
    pjoin(exp, f->ctf, "ust/uid/0/64-bit");
    assert_string_equal(tracer_trace_ctf_path(t, 1), exp);
    assert_null(tracer_trace_manifest(t));
    tracer_trace_close(t);

    /* a directory that is itself a CTF trace, with a MANIFEST beside */
    pjoin(mf, f->ctf, "ust/uid/0/64-bit/MANIFEST");
    write_file(mf, "schema=1\nmodel=vgg\n", 19);
    pjoin(exp, f->ctf, "ust/uid/0/64-bit");
    assert_int_equal(tracer_trace_open(exp, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_trace_ctf_count(t), 1);
    assert_string_equal(tracer_trace_ctf_path(t, 0), exp);
    assert_string_equal(tracer_manifest_get(tracer_trace_manifest(t), "model"), "vgg");
    tracer_trace_close(t);

    /* a broken MANIFEST is an error */
    write_file(mf, "schema 1\n", 9);
    assert_int_equal(tracer_trace_open(exp, &t), TRACER_ARCHIVE_EFORMAT);
    assert_null(t);
    assert_message(base_errmsg(), "MANIFEST:1");

    /* a symlink to a CTF directory is followed at the top only */
    pjoin(exp, f->base, "link-to-ctf");
    assert_int_equal(symlink(f->ctf, exp), 0);
    assert_int_equal(tracer_trace_open(exp, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_trace_ctf_count(t), 2);
    tracer_trace_close(t);

    /* an extracted archive: <run>/trace plus <run>/MANIFEST beside it */
    {
        char run[PATH_MAX], tr[PATH_MAX], p[PATH_MAX];

        pjoin(run, f->base, "run");
        pjoin(tr, run, "trace");
        xmkdir(run);
        xmkdir(tr);
        pjoin(p, tr, "metadata");
        write_file(p, "m", 1);
        pjoin(p, run, "MANIFEST");
        write_file(p, "model=memnet\\n\\\\x\n", 18);
        assert_int_equal(tracer_trace_open(tr, &t), TRACER_ARCHIVE_OK);
        assert_string_equal(tracer_trace_ctf_path(t, 0), tr);
        assert_string_equal(tracer_manifest_get(tracer_trace_manifest(t), "model"), "memnet\n\\x");
        tracer_trace_close(t);
    }

    /* no metadata anywhere */
    assert_int_equal(tracer_trace_open(f->outside, &t), TRACER_ARCHIVE_ENOTRACE);
    assert_null(t);
    assert_message(base_errmsg(), f->outside);

    /* missing path */
    pjoin(exp, f->base, "does-not-exist");
    assert_int_equal(tracer_trace_open(exp, &t), TRACER_ARCHIVE_EIO);
    assert_message(base_errmsg(), "does-not-exist");
    assert_int_equal(count_entries(f->tmp), 0);
}

static void test_open_live(void **state)
{
    fixture *f = *state;
    tracer_trace *t = NULL;
    const char *url = "net://relay.example/host/node7/fathom-session";

    assert_int_equal(tracer_trace_open(url, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_trace_get_kind(t), TRACER_TRACE_LIVE);
    assert_string_equal(tracer_trace_source(t), url);
    assert_string_equal(tracer_trace_root(t), url);
    assert_int_equal(tracer_trace_ctf_count(t), 0);
    assert_null(tracer_trace_manifest(t));
    tracer_trace_close(t);
    tracer_trace_close(NULL);
    assert_int_equal(tracer_trace_open(NULL, &t), TRACER_ARCHIVE_EINVAL);
    assert_int_equal(count_entries(f->tmp), 0);
}

/* ------------------------------------------------------------- hostile */

typedef enum entry_kind { E_FILE, E_DIR, E_SYMLINK, E_HARDLINK, E_CHR, E_FIFO } entry_kind;

typedef struct hentry {
    entry_kind kind;
    const char *name;
    const char *target; /* link target */
    size_t size;        /* E_FILE: size (content: repeated 'A') */
} hentry;

/* Write a tar (zstd-compressed if zstd) with the given entries. */
static void make_tar(const char *path, const hentry *es, size_t n, bool zstd)
{
    struct archive *a = archive_write_new();
    char chunk[65536];

    memset(chunk, 'A', sizeof(chunk));
    assert_non_null(a);
    if (zstd)
        assert_true(archive_write_add_filter_zstd(a) >= ARCHIVE_WARN);
    assert_int_equal(archive_write_set_format_pax_restricted(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, path), ARCHIVE_OK);
    for (size_t i = 0; i < n; i++) {
        struct archive_entry *e = archive_entry_new();

        archive_entry_set_pathname(e, es[i].name);
        archive_entry_set_perm(e, 0644);
        switch (es[i].kind) {
        case E_FILE:
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_size(e, (la_int64_t)es[i].size);
            break;
        case E_DIR: archive_entry_set_filetype(e, AE_IFDIR); break;
        case E_SYMLINK:
            archive_entry_set_filetype(e, AE_IFLNK);
            archive_entry_set_symlink(e, es[i].target);
            break;
        case E_HARDLINK:
            archive_entry_set_filetype(e, AE_IFREG);
            archive_entry_set_hardlink(e, es[i].target);
            break;
        case E_CHR:
            archive_entry_set_filetype(e, AE_IFCHR);
            archive_entry_set_rdevmajor(e, 1);
            archive_entry_set_rdevminor(e, 3);
            break;
        case E_FIFO: archive_entry_set_filetype(e, AE_IFIFO); break;
        }
        assert_true(archive_write_header(a, e) >= ARCHIVE_WARN);
        if (es[i].kind == E_FILE) {
            size_t left = es[i].size;

            while (left) {
                size_t k = left < sizeof(chunk) ? left : sizeof(chunk);

                assert_int_equal(archive_write_data(a, chunk, k), (la_ssize_t)k);
                left -= k;
            }
        }
        archive_entry_free(e);
    }
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
}

/* Open must fail with st (or any failure if st is OK), a one-line message
 * naming the archive and containing `what`, and leave nothing behind. */
static void expect_reject(fixture *f, const char *path, const tracer_trace_limits *lim, tracer_archive_status st,
                          const char *what)
{
    tracer_trace *t = (tracer_trace *)&t;
    tracer_archive_status got;

    got = tracer_trace_open_ex(path, lim, &t);
    print_message("    %s -> %s\n", strrchr(path, '/') + 1, base_errmsg());
    assert_int_not_equal(got, TRACER_ARCHIVE_OK);
    if (st != TRACER_ARCHIVE_OK)
        assert_int_equal(got, st);
    assert_null(t);
    assert_message(base_errmsg(), path);
    if (what)
        assert_non_null(strstr(base_errmsg(), what));
    assert_int_equal(count_entries(f->tmp), 0); /* temp dir removed */
    assert_int_equal(count_entries(f->outside), 0);
}

static void test_hostile_dotdot(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], esc[PATH_MAX];
    const hentry es[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_FILE, "trace/../../outside/escaped", NULL, 10 },
    };
    const hentry es2[] = {
        { E_FILE, "../escaped", NULL, 10 },
    };
    const hentry es3[] = {
        /* control bytes never reach the message */
        { E_FILE, "trace/a\nb\x1b[2J/../../escaped", NULL, 10 },
    };

    pjoin(p, f->out, "dotdot.tar.zst");
    make_tar(p, es, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "'..'");
    pjoin(p, f->out, "dotdot2.tar");
    make_tar(p, es2, 1, false);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "'..'");
    pjoin(p, f->out, "dotdot3.tar.zst");
    make_tar(p, es3, 1, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "a?b?[2J");
    pjoin(esc, f->tmp, "escaped");
    assert_false(exists(esc));
    pjoin(esc, f->base, "escaped");
    assert_false(exists(esc));
}

static void test_hostile_absolute(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], target[PATH_MAX];
    hentry es[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_FILE, NULL, NULL, 10 },
    };

    pjoin(target, f->outside, "abs_target");
    es[1].name = target;
    pjoin(p, f->out, "absolute.tar.zst");
    make_tar(p, es, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "absolute path");
    assert_false(exists(target));
}

static void test_hostile_symlink(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], target[PATH_MAX];
    hentry es[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_SYMLINK, "trace/link", NULL, 0 },
        { E_FILE, "trace/link/evil", NULL, 10 },
    };

    es[1].target = f->outside;
    pjoin(p, f->out, "symlink.tar.zst");
    make_tar(p, es, 3, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "symbolic link");
    pjoin(target, f->outside, "evil");
    assert_false(exists(target));
}

static void test_hostile_hardlink(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], target[PATH_MAX];
    hentry es[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_HARDLINK, "trace/hl", NULL, 0 },
    };

    pjoin(target, f->base, "secret");
    write_file(target, "secret", 6);
    es[1].target = target;
    pjoin(p, f->out, "hardlink.tar.zst");
    make_tar(p, es, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "hard link");
    /* a hard link to an earlier member is refused as well */
    es[1].target = "trace/metadata";
    pjoin(p, f->out, "hardlink2.tar");
    make_tar(p, es, 2, false);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "hard link");
}

static void test_hostile_special(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    const hentry dev[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_CHR, "trace/null", NULL, 0 },
    };
    const hentry fifo[] = {
        { E_FIFO, "trace/fifo", NULL, 0 },
    };

    pjoin(p, f->out, "device.tar.zst");
    make_tar(p, dev, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "character device");
    pjoin(p, f->out, "fifo.tar.zst");
    make_tar(p, fifo, 1, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "fifo");
}

static void test_hostile_names(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], longname[3000];
    hentry es[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_FILE, NULL, NULL, 1 },
    };
    const hentry dup[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_FILE, "trace/./metadata", NULL, 10 },
    };
    const hentry dot[] = {
        { E_FILE, "trace/metadata", NULL, 10 },
        { E_FILE, ".", NULL, 0 },
    };
    const hentry conflict[] = {
        { E_FILE, "trace", NULL, 10 },
        { E_FILE, "trace/metadata", NULL, 10 },
    };

    memset(longname, 'n', sizeof(longname) - 1);
    longname[sizeof(longname) - 1] = '\0';
    es[1].name = longname;
    pjoin(p, f->out, "longname.tar.zst");
    make_tar(p, es, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "longer than");
    pjoin(p, f->out, "duplicate.tar.zst");
    make_tar(p, dup, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "duplicate");
    pjoin(p, f->out, "dotfile.tar.zst");
    make_tar(p, dot, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "empty name");
    pjoin(p, f->out, "conflict.tar.zst");
    make_tar(p, conflict, 2, true);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EUNSAFE, "conflicts");
}

/* A raw ustar header whose name field is empty. */
static void test_hostile_empty_name(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    unsigned char blk[1536];
    unsigned sum = 0;

    memset(blk, 0, sizeof(blk));
    memcpy(blk + 100, "0000644", 7);      /* mode */
    memcpy(blk + 108, "0000000", 7);      /* uid */
    memcpy(blk + 116, "0000000", 7);      /* gid */
    memcpy(blk + 124, "00000000000", 11); /* size */
    memcpy(blk + 136, "00000000000", 11); /* mtime */
    blk[156] = '0';                       /* regular file */
    memcpy(blk + 257, "ustar", 6);        /* magic */
    memcpy(blk + 263, "00", 2);           /* version */
    memset(blk + 148, ' ', 8);
    for (size_t i = 0; i < 512; i++)
        sum += blk[i];
    snprintf((char *)blk + 148, 8, "%06o", sum);
    pjoin(p, f->out, "emptyname.tar");
    write_file(p, blk, sizeof(blk));
    expect_reject(f, p, NULL, TRACER_ARCHIVE_OK, NULL);
}

static void test_hostile_bomb(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    const hentry es[] = {
        { E_FILE, "trace/metadata", NULL, 10 }, { E_FILE, "trace/chan_0", NULL, 64u << 20 }, /* 64 MiB of 'A' */
    };
    const tracer_trace_limits lim = { .max_total_bytes = 1u << 20 };
    struct stat sb;

    pjoin(p, f->out, "bomb.tar.zst");
    make_tar(p, es, 2, true);
    assert_int_equal(stat(p, &sb), 0);
    assert_true(sb.st_size < 64 * 1024); /* highly compressible */
    expect_reject(f, p, &lim, TRACER_ARCHIVE_ELIMIT, "limit");
}

/* Many modest entries that together exceed the bound; entry count. */
static void test_hostile_bomb_many(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], names[40][32];
    hentry es[40];
    const tracer_trace_limits lim = { .max_total_bytes = 1u << 20 };
    const tracer_trace_limits few = { .max_entries = 5 };

    for (size_t i = 0; i < 40; i++) {
        snprintf(names[i], sizeof(names[i]), "trace/f%zu", i);
        es[i] = (hentry){ E_FILE, names[i], NULL, 60000 };
    }
    pjoin(p, f->out, "many.tar.zst");
    make_tar(p, es, 40, true);
    expect_reject(f, p, &lim, TRACER_ARCHIVE_ELIMIT, "limit");
    expect_reject(f, p, &few, TRACER_ARCHIVE_ELIMIT, "entries");
}

static void test_damaged(void **state)
{
    fixture *f = *state;
    tracer_manifest *m = sample_manifest();
    char good[PATH_MAX], p[PATH_MAX];
    char *data;
    size_t len;
    unsigned char rnd[8192];
    uint32_t x = 2463534242u;

    pjoin(good, f->out, "good.tar.zst");
    assert_int_equal(tracer_archive_write(good, f->ctf, m), TRACER_ARCHIVE_OK);
    data = read_file(good, &len);
    assert_non_null(data);

    pjoin(p, f->out, "truncated.tar.zst");
    write_file(p, data, len / 2);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "truncated");

    pjoin(p, f->out, "corrupt.tar.zst");
    for (size_t i = len / 3; i < len / 3 + 64 && i < len; i++)
        data[i] ^= 0x5a;
    write_file(p, data, len);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_OK, NULL);

    for (size_t i = 0; i < sizeof(rnd); i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        rnd[i] = (unsigned char)x;
    }
    /* a plain tar cut inside a member, and one of only zero blocks */
    {
        const hentry es[] = {
            { E_FILE, "trace/metadata", NULL, 10 },
            { E_FILE, "trace/chan_0", NULL, 50000 },
        };
        char *tar;
        size_t tlen;
        char zeros[1024] = { 0 };

        pjoin(p, f->out, "whole.tar");
        make_tar(p, es, 2, false);
        tar = read_file(p, &tlen);
        assert_non_null(tar);
        pjoin(p, f->out, "cut.tar");
        write_file(p, tar, tlen / 2);
        expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "truncated");
        pjoin(p, f->out, "cut-header.tar");
        write_file(p, tar, 700);
        expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "truncated");
        free(tar);
        pjoin(p, f->out, "zeros.tar");
        write_file(p, zeros, sizeof(zeros));
        expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "empty archive");
    }

    pjoin(p, f->out, "random.bin");
    write_file(p, rnd, sizeof(rnd));
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "unrecognized");

    pjoin(p, f->out, "empty.tar.zst");
    write_file(p, "", 0);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "empty file");

    pjoin(p, f->out, "notes.txt");
    write_file(p, "hello\nthis is not an archive\n", 29);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_EFORMAT, "unrecognized");

    free(data);
    tracer_manifest_destroy(m);
}

/* Plain .tar and .tar.gz are accepted, detected by content. */
static void test_other_compressions(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    const hentry es[] = {
        { E_DIR, "./", NULL, 0 },
        { E_FILE, "./x/metadata", NULL, 10 },
    };
    const hentry none[] = {
        { E_FILE, "readme", NULL, 10 },
    };
    tracer_trace *t = NULL;
    struct archive *a;
    struct archive_entry *e;

    pjoin(p, f->out, "plain.weird-extension");
    make_tar(p, es, 2, false);
    assert_int_equal(tracer_trace_open(p, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_trace_ctf_count(t), 1);
    assert_null(tracer_trace_manifest(t));
    tracer_trace_close(t);

    pjoin(p, f->out, "g.tar.gz");
    a = archive_write_new();
    assert_int_equal(archive_write_add_filter_gzip(a), ARCHIVE_OK);
    assert_int_equal(archive_write_set_format_ustar(a), ARCHIVE_OK);
    assert_int_equal(archive_write_open_filename(a, p), ARCHIVE_OK);
    e = archive_entry_new();
    archive_entry_set_pathname(e, "t/metadata");
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, 3);
    assert_int_equal(archive_write_header(a, e), ARCHIVE_OK);
    assert_int_equal(archive_write_data(a, "abc", 3), 3);
    archive_entry_free(e);
    assert_int_equal(archive_write_close(a), ARCHIVE_OK);
    archive_write_free(a);
    assert_int_equal(tracer_trace_open(p, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(tracer_trace_ctf_count(t), 1);
    tracer_trace_close(t);

    pjoin(p, f->out, "nometa.tar");
    make_tar(p, none, 1, false);
    expect_reject(f, p, NULL, TRACER_ARCHIVE_ENOTRACE, "metadata");
    assert_int_equal(count_entries(f->tmp), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_manifest_roundtrip),
        cmocka_unit_test(test_manifest_add_set),
        cmocka_unit_test(test_manifest_parse),
        cmocka_unit_test_setup_teardown(test_roundtrip, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_overwrite, setup, teardown),
        cmocka_unit_test_setup_teardown(test_default_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_dir, setup, teardown),
        cmocka_unit_test_setup_teardown(test_open_live, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_dotdot, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_absolute, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_symlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_hardlink, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_special, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_names, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_empty_name, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_bomb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hostile_bomb_many, setup, teardown),
        cmocka_unit_test_setup_teardown(test_damaged, setup, teardown),
        cmocka_unit_test_setup_teardown(test_other_compressions, setup, teardown),
    };

    return cmocka_run_group_tests_name("archive", tests, NULL, NULL);
}
