/*
 * test_hostile.c -- what an attacker or an impatient user does to a reader
 * and to a writer: interrupt it (SIGINT, SIGTERM, SIGKILL) mid-extraction,
 * feed it a decompression bomb, fill the disk, point an output at an input.
 * Nothing may be left behind and nothing overwritten.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "tracer/archive.h"
#include "tracer/output.h"
#include "fixtures/zbomb.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ERRLEN 1024

typedef struct fixture {
    char base[PATH_MAX];
    char tmp[PATH_MAX]; /* $TMPDIR of the readers */
    char out[PATH_MAX];
} fixture;

static void pjoin(char *dst, const char *a, const char *b)
{
    int n = snprintf(dst, PATH_MAX, "%s/%s", a, b);

    assert_true(n > 0 && n < PATH_MAX);
}

static size_t count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t n = 0;

    assert_non_null(d);
    while ((de = readdir(d)) != NULL)
        n += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
    closedir(d);
    return n;
}

/* The name of the first entry of dir starting with prefix, or false. */
static bool find_entry(const char *dir, const char *prefix, char *name, size_t len)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    bool found = false;

    if (!d)
        return false;
    while (!found && (de = readdir(d)) != NULL)
        if (strncmp(de->d_name, prefix, strlen(prefix)) == 0) {
            snprintf(name, len, "%s", de->d_name);
            found = true;
        }
    closedir(d);
    return found;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof(*f));
    const char *root = getenv("FATHOM_TEST_TMP");

    assert_non_null(f);
    snprintf(f->base, sizeof(f->base), "%s/hostile-XXXXXX", root && *root ? root : "/tmp");
    assert_non_null(mkdtemp(f->base));
    pjoin(f->tmp, f->base, "tmp");
    pjoin(f->out, f->base, "out");
    assert_int_equal(mkdir(f->tmp, 0700), 0);
    assert_int_equal(mkdir(f->out, 0700), 0);
    setenv("TMPDIR", f->tmp, 1);
    unsetenv(TRACER_TRACE_MAX_ENV);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;

    tracer_remove_tree(f->base);
    free(f);
    return 0;
}

/* A small valid archive (a CTF-looking tree and a MANIFEST). */
static void small_archive(const char *path, uint64_t chan_bytes)
{
    const zbomb_entry es[] = {
        { "MANIFEST", 0, 0, '0' },
        { "trace/", 0, 0, '5' },
        { "trace/metadata", 100, '/', '0' },
        { "trace/chan_0", chan_bytes, 'x', '0' },
    };

    assert_int_equal(zbomb_write(path, es, 4), 0);
}

/* ---- the output rule ---------------------------------------------------- */

static void test_output_rule(void **state)
{
    fixture *f = *state;
    char in[PATH_MAX], out[PATH_MAX], p[PATH_MAX];
    const char *inputs[1];
    tracer_output *o = NULL;
    struct stat sb;

    pjoin(in, f->out, "input.tar.zst");
    write_text(in, "the input\n");
    inputs[0] = in;
    /* a fresh path: written under a temporary name, published whole */
    pjoin(out, f->out, "new.txt");
    assert_int_equal(tracer_output_open(out, inputs, 1, "-o", &o), TRACER_OUTPUT_OK);
    fputs("hello\n", tracer_output_file(o));
    assert_int_equal(stat(out, &sb), -1); /* not before commit */
    assert_int_equal(count_entries(f->out), 2);
    assert_int_equal(tracer_output_commit(o), TRACER_OUTPUT_OK);
    assert_int_equal(stat(out, &sb), 0);
    assert_int_equal(sb.st_size, 6);
    assert_int_equal(count_entries(f->out), 2); /* no temporary left */
    /* an existing path, a symlink (even dangling), the input itself */
    assert_int_equal(tracer_output_open(out, inputs, 1, "-o", &o), TRACER_OUTPUT_EEXIST);
    assert_non_null(strstr(base_errmsg(), "nothing is overwritten"));
    pjoin(p, f->out, "dangling");
    assert_int_equal(symlink("/nonexistent/target", p), 0);
    assert_int_equal(tracer_output_open(p, inputs, 1, "-o", &o), TRACER_OUTPUT_EEXIST);
    assert_non_null(strstr(base_errmsg(), "symbolic link"));
    assert_int_equal(tracer_output_open(in, inputs, 1, "-o", &o), TRACER_OUTPUT_EALIAS);
    assert_non_null(strstr(base_errmsg(), "is the input"));
    pjoin(p, f->out, "hard");
    assert_int_equal(link(in, p), 0);
    assert_int_equal(tracer_output_check(p, inputs, 1, NULL), TRACER_OUTPUT_EALIAS);
    /* a new file inside an input folder */
    inputs[0] = f->out;
    pjoin(p, f->out, "sub/inside.txt");
    assert_int_equal(tracer_output_check(p, inputs, 1, NULL), TRACER_OUTPUT_EALIAS);
    assert_non_null(strstr(base_errmsg(), "inside the input"));
    /* abort: nothing published, nothing left */
    pjoin(p, f->base, "aborted.txt");
    assert_int_equal(tracer_output_open(p, NULL, 0, NULL, &o), TRACER_OUTPUT_OK);
    fputs("partial", tracer_output_file(o));
    tracer_output_abort(o);
    assert_int_equal(stat(p, &sb), -1);
    assert_int_equal(count_entries(f->base), 2); /* tmp/ and out/ */
    /* a missing folder: the message says it cannot write */
    pjoin(p, f->base, "no/such/dir/x");
    assert_int_equal(tracer_output_open(p, NULL, 0, NULL, &o), TRACER_OUTPUT_EIO);
    assert_non_null(strstr(base_errmsg(), "cannot write"));
    assert_int_equal(tracer_output_check(p, NULL, 0, "-o"), TRACER_OUTPUT_EIO); /* checked before any work */
    assert_non_null(strstr(base_errmsg(), "no/such/dir: No such file or directory"));
    /* a folder to make: its deepest existing part must be a folder */
    pjoin(p, f->base, "to/be/made");
    assert_int_equal(tracer_output_check_folder(p, "--dir"), TRACER_OUTPUT_OK);
    assert_int_equal(tracer_output_check_folder(f->base, "--dir"), TRACER_OUTPUT_OK);
    pjoin(p, f->out, "hard/sub/deeper"); /* "hard" is a file */
    assert_int_equal(tracer_output_check_folder(p, "--dir"), TRACER_OUTPUT_EIO);
    assert_non_null(strstr(base_errmsg(), "hard: Not a directory"));
}

/* Fork a child running fn(f, fd) with fd the write end of a pipe. */
static pid_t spawn(fixture *f, void (*fn)(fixture *, int), int *rfd)
{
    int pfd[2];
    pid_t pid;

    assert_int_equal(pipe(pfd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(pfd[0]);
        fn(f, pfd[1]);
        _exit(0);
    }
    close(pfd[1]);
    *rfd = pfd[0];
    return pid;
}

static void child_output(fixture *f, int fd)
{
    char p[PATH_MAX];
    tracer_output *o = NULL;

    pjoin(p, f->out, "interrupted.json");
    if (tracer_output_open(p, NULL, 0, NULL, &o))
        _exit(3);
    fputs("{\"partial\":", tracer_output_file(o));
    fflush(tracer_output_file(o));
    if (write(fd, "r", 1) != 1)
        _exit(4);
    for (;;)
        pause();
}

/* SIGTERM and SIGINT while an output is being written: the process dies
 * of that signal (128+N in a shell) and its temporary file goes with it. */
static void test_output_signals(void **state)
{
    fixture *f = *state;
    const int sigs[] = { SIGTERM, SIGINT, SIGHUP };

    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        int rfd, ws;
        char c;
        pid_t pid = spawn(f, child_output, &rfd);

        assert_int_equal(read(rfd, &c, 1), 1);
        close(rfd);
        assert_int_equal(count_entries(f->out), 1); /* the temporary */
        kill(pid, sigs[i]);
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        assert_true(WIFSIGNALED(ws));
        assert_int_equal(WTERMSIG(ws), sigs[i]);
        assert_int_equal(count_entries(f->out), 0);
    }
}

/* SIGKILL cannot be caught: the next writer in that folder removes the
 * leftover of the dead one (its name carries the dead pid). */
static void test_output_sigkill(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    tracer_output *o = NULL;
    int rfd, ws;
    char c;
    pid_t pid = spawn(f, child_output, &rfd);

    assert_int_equal(read(rfd, &c, 1), 1);
    close(rfd);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_int_equal(count_entries(f->out), 1);
    pjoin(p, f->out, "next.json");
    assert_int_equal(tracer_output_open(p, NULL, 0, NULL, &o), TRACER_OUTPUT_OK);
    assert_int_equal(tracer_output_commit(o), TRACER_OUTPUT_OK);
    assert_int_equal(count_entries(f->out), 1); /* next.json alone */
}

/* ---- extraction: signals ------------------------------------------------ */

static char big_archive[PATH_MAX];

static void child_reader(fixture *f, int fd)
{
    tracer_trace *t = NULL;

    (void)f;
    if (tracer_trace_open(big_archive, &t) != TRACER_ARCHIVE_OK)
        _exit(3);
    if (write(fd, "d", 1) != 1) /* extraction done */
        _exit(4);
    for (;;)
        pause();
}

/* Start a reader of a 1 GiB archive and return once its extraction tree
 * holds data (mid-extraction). */
static pid_t reader_mid_extraction(fixture *f, int *rfd, char *tree, size_t len)
{
    char name[256], p[PATH_MAX] = "", prefix[64];
    pid_t pid = spawn(f, child_reader, rfd);
    struct timespec ms = { 0, 1000000 };

    snprintf(prefix, sizeof prefix, "fathom-trace-%ld-", (long)pid);
    for (int i = 0; i < 60000; i++) {
        struct stat sb;

        if (find_entry(f->tmp, prefix, name, sizeof name)) {
            pjoin(p, f->tmp, name);
            snprintf(tree, len, "%s/trace/chan_0", p);
            if (stat(tree, &sb) == 0 && sb.st_size > 0)
                break;
        }
        nanosleep(&ms, NULL);
    }
    snprintf(tree, len, "%s", p);
    return pid;
}

static void test_extract_sigint(void **state)
{
    fixture *f = *state;
    const int sigs[] = { SIGINT, SIGTERM };

    pjoin(big_archive, f->out, "big.tar.zst");
    small_archive(big_archive, UINT64_C(1) << 30);
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        char tree[PATH_MAX], c;
        int rfd, ws, fl;
        struct stat sb;
        pid_t pid = reader_mid_extraction(f, &rfd, tree, sizeof tree);

        assert_int_equal(stat(tree, &sb), 0);
        fl = fcntl(rfd, F_GETFL);
        fcntl(rfd, F_SETFL, fl | O_NONBLOCK);
        /* still extracting (1 GiB does not extract in a millisecond) */
        assert_int_equal(read(rfd, &c, 1), -1);
        kill(pid, sigs[i]);
        assert_int_equal(waitpid(pid, &ws, 0), pid);
        close(rfd);
        assert_true(WIFSIGNALED(ws));
        assert_int_equal(WTERMSIG(ws), sigs[i]);
        assert_int_equal(count_entries(f->tmp), 0);
    }
}

static void test_extract_sigkill(void **state)
{
    fixture *f = *state;
    char tree[PATH_MAX], small[PATH_MAX];
    int rfd, ws;
    struct stat sb;
    tracer_trace *t = NULL;
    pid_t pid;

    pjoin(big_archive, f->out, "big.tar.zst");
    small_archive(big_archive, UINT64_C(1) << 30);
    pid = reader_mid_extraction(f, &rfd, tree, sizeof tree);
    kill(pid, SIGKILL);
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    close(rfd);
    assert_int_equal(stat(tree, &sb), 0); /* SIGKILL: left behind */
    /* the next reader removes the tree of the dead one */
    pjoin(small, f->out, "small.tar.zst");
    small_archive(small, 1000);
    assert_int_equal(tracer_trace_open(small, &t), TRACER_ARCHIVE_OK);
    assert_int_equal(stat(tree, &sb), -1);
    assert_int_equal(count_entries(f->tmp), 1); /* its own */
    tracer_trace_close(t);
    assert_int_equal(count_entries(f->tmp), 0);
    /* the tree of a live process (pid 1) and names of another pattern
	 * are left alone */
    pjoin(tree, f->tmp, "fathom-trace-1-live");
    assert_int_equal(mkdir(tree, 0700), 0);
    pjoin(tree, f->tmp, "fathom-trace-XYZ");
    assert_int_equal(mkdir(tree, 0700), 0);
    assert_int_equal(tracer_trace_open(small, &t), TRACER_ARCHIVE_OK);
    tracer_trace_close(t);
    assert_int_equal(count_entries(f->tmp), 2);
}

/* ---- extraction: bounds ------------------------------------------------- */

/* tracer_trace_open in a child that may not write files over 1 MiB:
 * if the reader wrote the bulk of an archive before refusing it, the write
 * fails (EFBIG) and the status is EIO instead of the refusal. */
static void open_capped(const char *path, tracer_archive_status want, const char *want_msg)
{
    int pfd[2], ws;
    pid_t pid;
    char err[ERRLEN] = "";
    ssize_t n;

    assert_int_equal(pipe(pfd), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit rl = { 1 << 20, 1 << 20 };
        tracer_trace *t = NULL;
        tracer_archive_status st;

        close(pfd[0]);
        signal(SIGXFSZ, SIG_IGN);
        setrlimit(RLIMIT_FSIZE, &rl);
        st = tracer_trace_open(path, &t);
        if (write(pfd[1], base_errmsg(), strlen(base_errmsg()) + 1) < 0)
            _exit(100);
        tracer_trace_close(t);
        _exit((int)st);
    }
    close(pfd[1]);
    n = read(pfd[0], err, sizeof err - 1);
    close(pfd[0]);
    err[n > 0 ? n : 0] = '\0';
    assert_int_equal(waitpid(pid, &ws, 0), pid);
    assert_true(WIFEXITED(ws));
    if (WEXITSTATUS(ws) != (int)want || !strstr(err, want_msg))
        fail_msg("status %d (want %d), message: %s", WEXITSTATUS(ws), (int)want, err);
}

/* The bomb of the report: two entries of 2.6 GB of zeros in 168 KB. */
static void test_bomb(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    struct stat sb;
    const zbomb_entry es[] = {
        { "trace/metadata", UINT64_C(2600000000), 0, '0' },
        { "trace/chan_0", UINT64_C(2600000000), 0, '0' },
    };

    pjoin(p, f->out, "bomb.tar.zst");
    assert_int_equal(zbomb_write(p, es, 2), 0);
    assert_int_equal(stat(p, &sb), 0);
    assert_true(sb.st_size > 150000 && sb.st_size < 180000);
    open_capped(p, TRACER_ARCHIVE_ELIMIT, "refused before extracting");
    assert_int_equal(count_entries(f->tmp), 0);
    /* a lower bound from the environment stops it at the first entry */
    setenv(TRACER_TRACE_MAX_ENV, "1M", 1);
    open_capped(p, TRACER_ARCHIVE_ELIMIT, TRACER_TRACE_MAX_ENV);
    unsetenv(TRACER_TRACE_MAX_ENV);
    assert_int_equal(count_entries(f->tmp), 0);
}

static void test_max_extract_env(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX];
    tracer_trace *t = NULL;
    static const char *const bad[] = {
        "", "x", "-1", "0", " 5", "5 ", "12X", "99999999999999999999999", "20000000000G"
    };

    pjoin(p, f->out, "two-mib.tar.zst");
    small_archive(p, 2u << 20);
    setenv(TRACER_TRACE_MAX_ENV, "1048576", 1);
    assert_int_equal(tracer_trace_open(p, &t), TRACER_ARCHIVE_ELIMIT);
    setenv(TRACER_TRACE_MAX_ENV, "3M", 1);
    assert_int_equal(tracer_trace_open(p, &t), TRACER_ARCHIVE_OK);
    tracer_trace_close(t);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(TRACER_TRACE_MAX_ENV, bad[i], 1);
        assert_int_equal(tracer_trace_open(p, &t), TRACER_ARCHIVE_EINVAL);
        assert_non_null(strstr(base_errmsg(), TRACER_TRACE_MAX_ENV));
    }
    unsetenv(TRACER_TRACE_MAX_ENV);
    assert_int_equal(count_entries(f->tmp), 0);
}

/* A full $TMPDIR is named as such: declared sizes past its free space are
 * refused before writing; running out of inodes mid-way says so too.  Needs
 * a small tmpfs (root); skipped where mounting one is not allowed. */
static void test_disk_full(void **state)
{
    fixture *f = *state;
    char p[PATH_MAX], many[PATH_MAX], names[40][32];
    zbomb_entry es[41];
    tracer_trace *t = NULL;

    if (mount("tmpfs", f->tmp, "tmpfs", 0, "size=1m,nr_inodes=16") != 0) {
        print_message("no tmpfs (%s): disk-full test skipped\n", strerror(errno));
        skip();
    }
    pjoin(p, f->out, "two-mib.tar.zst");
    small_archive(p, 2u << 20);
    assert_int_equal(tracer_trace_open(p, &t), TRACER_ARCHIVE_ENOSPC);
    assert_non_null(strstr(base_errmsg(), "no space left on device"));
    assert_non_null(strstr(base_errmsg(), "before extracting"));
    es[0] = (zbomb_entry){ "trace/metadata", 10, 'm', '0' };
    for (int i = 0; i < 40; i++) {
        snprintf(names[i], sizeof names[i], "trace/f%d", i);
        es[i + 1] = (zbomb_entry){ names[i], 10, 'x', '0' };
    }
    pjoin(many, f->out, "many.tar.zst");
    assert_int_equal(zbomb_write(many, es, 41), 0);
    assert_int_equal(tracer_trace_open(many, &t), TRACER_ARCHIVE_ENOSPC);
    assert_non_null(strstr(base_errmsg(), "no space left on device"));
    assert_int_equal(count_entries(f->tmp), 0);
    assert_int_equal(umount2(f->tmp, MNT_DETACH), 0);
}

/* ---- MANIFEST typed keys ------------------------------------------------- */

static tracer_manifest *manifest_of(const char *text)
{
    tracer_manifest *m = NULL;

    assert_int_equal(tracer_manifest_parse(text, strlen(text), "test", &m), TRACER_ARCHIVE_OK);
    return m;
}

static void test_manifest_check(void **state)
{
    static const char good[] = "schema=1\nmodel=alexnet\nmode=train\npreset=tiny\n"
                               "threads=2\nbatch=8\nsteps=5\ninter=1\n"
                               "seed=18446744073709551615\ncreated=2024-02-29T23:59:59Z\n"
                               "events=10\nevents.fathom:op_begin=4\n";
    static const struct {
        const char *line, *key;
    } bad[] = {
        { "steps=1e23", "'steps'" },
        { "steps=0", "'steps'" },
        { "steps= 5", "'steps'" },
        { "batch=-5", "'batch'" },
        { "threads=18446744073709551615", "'threads'" },
        { "inter=65", "'inter'" },
        { "seed=18446744073709551616", "'seed'" },
        { "schema=4", "'schema'" },
        { "created=2023-02-29T00:00:00Z", "'created'" },
        { "created=yesterday", "'created'" },
        { "events.fathom:op_end=x", "'events.fathom:op_end'" },
    };
    char text[1024], out[2048], msg[256];
    tracer_manifest *m;

    (void)state;
    m = manifest_of(good);
    assert_int_equal(tracer_manifest_check(m, out, sizeof out), 0);
    assert_string_equal(out, "");
    assert_int_equal(tracer_manifest_check_schema(m, 1, msg, sizeof msg), 0);
    assert_int_equal(tracer_manifest_check_schema(m, 2, msg, sizeof msg), 1);
    assert_non_null(strstr(msg, "schema 1"));
    assert_non_null(strstr(msg, "schema 2"));
    tracer_manifest_destroy(m);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        const char *eq = strchr(bad[i].line, '=');
        size_t kl = (size_t)(eq - bad[i].line);
        size_t n = 0;

        /* the good MANIFEST with this line replacing its key */
        for (const char *l = good; *l;) {
            const char *nl = strchr(l, '\n');

            if (strncmp(l, bad[i].line, kl + 1) != 0)
                n += (size_t)snprintf(text + n, sizeof text - n, "%.*s\n", (int)(nl - l), l);
            l = nl + 1;
        }
        snprintf(text + n, sizeof text - n, "%s\n", bad[i].line);
        m = manifest_of(text);
        assert_int_equal(tracer_manifest_check(m, out, sizeof out), 1);
        if (!strstr(out, bad[i].key))
            fail_msg("%s: '%s' does not name %s", bad[i].line, out, bad[i].key);
        tracer_manifest_destroy(m);
    }
    m = manifest_of("model=x\n");
    assert_int_equal(tracer_manifest_check(m, out, sizeof out), 2);
    assert_non_null(strstr(out, "'schema' is missing"));
    assert_non_null(strstr(out, "'mode' is missing"));
    tracer_manifest_destroy(m);
    assert_int_equal(tracer_manifest_check(NULL, out, 4), 1);
    assert_string_equal(out, "no "); /* truncated, still terminated */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_output_rule, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_signals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_sigint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_extract_sigkill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bomb, setup, teardown),
        cmocka_unit_test_setup_teardown(test_max_extract_env, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disk_full, setup, teardown),
        cmocka_unit_test(test_manifest_check),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
