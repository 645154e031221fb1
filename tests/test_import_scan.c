/* test_import_scan.c -- the importer's fast path (analyze/import_scan.c):
 * what the scanner takes and what it leaves to jansson, hostile input in
 * bounded memory, and the two readings of every PyTorch fixture, of a
 * generated trace and of mutated copies compared field by field (the fast
 * path must change no archive). */
#include "analyze/import_json.h"
#include "analyze/import_scan.h"
#include "analyze/import_trace.h"
#include "base/error.h"

#include <archive.h>
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#ifndef PYTORCH_FIXTURES
#error "PYTORCH_FIXTURES: the folder of the PyTorch fixtures"
#endif

static int scan(const char *s, analyze_scan_event *e) { return analyze_scan_event_text(s, strlen(s), e); }

static int text_is(analyze_scan_text t, const char *want)
{
    return want ? t.p && t.n == strlen(want) && memcmp(t.p, want, t.n) == 0 : t.p == NULL;
}

static void members(void **state)
{
    (void)state;
    analyze_scan_event e;
    const char *ev = " {\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::mm\", \"pid\": 7, \"tid\": -3, \"ts\": "
                     "1700000000000.125, \"dur\": 12, \"x\": {\"ph\": 1, \"args\": [true, false, null]}, \"args\": "
                     "{\"Input Dims\": [[4, 8], [8, 16]], \"Input type\": [\"float\", \"float\"], \"External id\": "
                     "42, \"Concrete Inputs\": [\"\", \"1\"], \"Input Dims2\": 0}} ";
    assert_int_equal(scan(ev, &e), 0);
    assert_true(text_is(e.ph, "\"X\""));
    assert_true(text_is(e.cat, "\"cpu_op\""));
    assert_true(text_is(e.name, "\"aten::mm\""));
    assert_true(text_is(e.ts, "1700000000000.125"));
    assert_true(text_is(e.dur, "12"));
    assert_true(text_is(e.dims, "[[4, 8], [8, 16]]"));
    assert_true(text_is(e.types, "[\"float\", \"float\"]"));
    assert_true(text_is(e.concrete, "[\"\", \"1\"]"));
    assert_true(text_is(e.ext, "42"));
    int64_t x;
    assert_true(analyze_scan_integer(e.pid, &x) && x == 7);
    assert_true(analyze_scan_integer(e.tid, &x) && x == -3);
    assert_false(analyze_scan_integer(e.ts, &x));
    /* args that are not an object: none of its members */
    assert_int_equal(scan("{\"args\": [1], \"name\": \"a\"}", &e), 0);
    assert_true(text_is(e.args, "[1]") && text_is(e.dims, NULL) && text_is(e.ph, NULL));
    /* a prefix: the object's length, wherever the buffer ends after it */
    const char *two = "{\"a\": 1}, {\"b\": 2}";
    assert_int_equal(analyze_scan_event_prefix(two, strlen(two), &e), 8);
    assert_int_equal(analyze_scan_event_prefix(two, 7, &e), 0);
}

/* What the scanner leaves to jansson: outside the subset, or not JSON. */
static void leaves_to_jansson(void **state)
{
    (void)state;
    static const char *const left[] = {
        "[1, 2]",
        "\"a string\"",
        "{\"name\": \"a\\\"b\"}",         /* an escape */
        "{\"name\": \"caf\xc3\xa9\"}",    /* beyond ASCII */
        "{\"name\": \"\xff\xfe\"}",       /* invalid UTF-8 */
        "{\"name\": \"tab\tin\"}",        /* a control byte */
        "{\"ph\": \"X\", \"ph\": \"X\"}", /* a member twice */
        "{\"args\": {\"External id\": 1, \"External id\": 2}}",
        "{\"ts\": 1e3}",                  /* an exponent */
        "{\"id\": 18446744073709551615}", /* beyond 64 bits */
        "{\"id\": 1234567890123456789}",  /* 19 digits */
        "{\"x\": 1.}",                    /* not JSON */
        "{\"x\": 01}",
        "{\"x\": -}",
        "{\"x\": tru}",
        "{\"x\": 1,}",
        "{\"x\" 1}",
        "{\"x\": [1 2]}",
        "{\"x\": 1",
        "{\"x\": \"abc",
        "{\"x\": 1} x",
        "{'x': 1}",
        "",
    };
    analyze_scan_event e;
    for (size_t i = 0; i < sizeof left / sizeof *left; i++) {
        if (scan(left[i], &e) != 1)
            fail_msg("the scanner took %s", left[i]);
    }
    /* a name of 18 digits is an integer of the subset, 19 are not */
    analyze_scan_text t = { "-123456789012345678", 19 };
    int64_t x;
    assert_true(analyze_scan_integer(t, &x) && x == -123456789012345678LL);
    assert_int_equal(scan("{\"id\": 123456789012345678}", &e), 0);
}

/* Hostile elements: each scanned in bounded time, with no allocation. */
static void hostile(void **state)
{
    (void)state;
    analyze_scan_event e;
    size_t n = 100u << 20; /* a string of 100 MB */
    char *s = malloc(n + 32);
    assert_non_null(s);
    memcpy(s, "{\"name\": \"", 10);
    memset(s + 10, 'a', n);
    memcpy(s + 10 + n, "\"}", 3);
    assert_int_equal(scan(s, &e), 0);
    assert_int_equal(e.name.n, n + 2);
    s[10 + n / 2] = '\xc0'; /* invalid UTF-8 within it */
    assert_int_equal(scan(s, &e), 1);
    free(s);
    /* a key repeated a million times: fine unless it is one the event reads */
    size_t reps = 1000000, len = 0;
    s = malloc(reps * 8 + 16);
    assert_non_null(s);
    s[len++] = '{';
    for (size_t i = 0; i < reps; i++)
        len += (size_t)sprintf(s + len, "%s\"k\": 1", i ? "," : "");
    s[len++] = '}', s[len] = '\0';
    assert_int_equal(scan(s, &e), 0);
    len = 0;
    s[len++] = '{';
    for (size_t i = 0; i < reps; i++)
        len += (size_t)sprintf(s + len, "%s\"ts\":1", i ? "," : "");
    s[len++] = '}', s[len] = '\0';
    assert_int_equal(scan(s, &e), 1);
    free(s);
    /* deep nesting: left to jansson beyond ANALYZE_SCAN_DEPTH */
    size_t depth = 100000;
    s = malloc(2 * depth + 32);
    assert_non_null(s);
    len = (size_t)sprintf(s, "{\"x\": ");
    memset(s + len, '[', depth);
    memset(s + len + depth, ']', depth);
    strcpy(s + len + 2 * depth, "}");
    assert_int_equal(scan(s, &e), 1);
    free(s);
    char ok[256];
    len = (size_t)sprintf(ok, "{\"x\": ");
    memset(ok + len, '[', ANALYZE_SCAN_DEPTH - 1);
    memset(ok + len + ANALYZE_SCAN_DEPTH - 1, ']', ANALYZE_SCAN_DEPTH - 1);
    strcpy(ok + len + 2 * (ANALYZE_SCAN_DEPTH - 1), "}");
    assert_int_equal(scan(ok, &e), 0);
    /* absurd numbers */
    assert_int_equal(scan("{\"ts\": 99999999999999999999999999999999999999999999.5}", &e), 1);
    assert_int_equal(scan("{\"ts\": 1e999999}", &e), 1);
    assert_int_equal(scan("{\"ts\": -0.000000000000000000000000000001}", &e), 0);
}

/* ---- the two readings ------------------------------------------------------ */

/* The whole (decompressed) file; NULL if unreadable. */
static char *slurp(const char *path, size_t *len)
{
    struct archive *a = archive_read_new();
    struct archive_entry *entry;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    archive_read_support_filter_all(a);
    archive_read_support_format_raw(a);
    if (archive_read_open_filename(a, path, 1 << 16) == ARCHIVE_OK &&
        archive_read_next_header(a, &entry) == ARCHIVE_OK) {
        for (;;) {
            if (*len + 65536 > cap) {
                cap = cap ? cap * 2 : 1 << 20;
                buf = realloc(buf, cap + 1);
                assert_non_null(buf);
            }
            la_ssize_t n = archive_read_data(a, buf + *len, 65536);
            if (n <= 0)
                break;
            *len += (size_t)n;
        }
        buf[*len] = '\0';
    }
    archive_read_free(a);
    return buf;
}

static void put(const char *path, const char *s, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(s, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

#define SAME(x) same &= (a->x) == (b->x)

/* Whether two read traces are the same, field by field. */
static int same_trace(const imp_trace *a, const imp_trace *b)
{
    int same = 1;
    SAME(sum.events), SAME(sum.ops), SAME(sum.steps), SAME(sum.nodes), SAME(sum.tracks), SAME(sum.tensors);
    SAME(sum.warnings), SAME(sum.devices), SAME(sum.rank), SAME(sum.world_size);
    same &= !strcmp(a->sum.format, b->sum.format) && !strcmp(a->sum.mode, b->sum.mode) &&
            !strcmp(a->sum.model, b->sum.model) && !strcmp(a->sum.device, b->sum.device);
    SAME(nprotos), SAME(nnodes), SAME(ntensors), SAME(ntracks), SAME(nrecs), SAME(nsteps), SAME(t0), SAME(t1);
    SAME(main_track), SAME(bad_time), SAME(bad_shape), SAME(not_x), SAME(overlap), SAME(bad_step), SAME(no_name);
    if (!same)
        return 0;
    same &= imp_strcount(a->names) == imp_strcount(b->names);
    for (uint32_t i = 0; same && i < imp_strcount(a->names); i++)
        same &= !strcmp(imp_str(a->names, i), imp_str(b->names, i));
    for (size_t i = 0; same && i < a->nprotos; i++) {
        SAME(protos[i].name), SAME(protos[i].cls), SAME(protos[i].nin), SAME(protos[i].nout);
        SAME(protos[i].flops), SAME(protos[i].bytes), SAME(protos[i].nattrs);
        for (uint32_t k = 0; same && k < a->protos[i].nin; k++)
            SAME(protos[i].in[k]);
        for (uint32_t k = 0; same && k < a->protos[i].nout; k++)
            SAME(protos[i].out[k]);
        for (uint32_t k = 0; same && k < a->protos[i].nattrs; k++)
            SAME(protos[i].attrs[k]);
    }
    for (size_t i = 0; same && i < a->nnodes; i++)
        SAME(nodes[i].proto), SAME(nodes[i].phase), SAME(nodes[i].cls);
    for (size_t i = 0; same && i < a->ntensors; i++) {
        SAME(tensors[i].dtype), SAME(tensors[i].role), SAME(tensors[i].ndim), SAME(tensors[i].bytes);
        for (int k = 0; same && k < a->tensors[i].ndim; k++)
            SAME(tensors[i].shape[k]);
    }
    for (size_t i = 0; same && i < a->ntracks; i++) {
        SAME(tracks[i].vpid), SAME(tracks[i].vtid), SAME(tracks[i].gpu);
        same &= !strcmp(a->tracks[i].procname, b->tracks[i].procname);
    }
    for (size_t i = 0; same && i < a->nrecs; i++)
        SAME(recs[i].b), SAME(recs[i].e), SAME(recs[i].track), SAME(recs[i].kind), SAME(recs[i].ref);
    for (size_t i = 0; same && i < a->nsteps; i++)
        SAME(steps[i].b), SAME(steps[i].e), SAME(steps[i].num);
    char wa[4096], wb[4096];
    imp_trace_warnings(a, wa, sizeof wa);
    imp_trace_warnings(b, wb, sizeof wb);
    return same && !strcmp(wa, wb);
}

/* path read twice, set(0) before the first reading and set(1) before the
 * second: the same trace, or the same one-line error.  The second reading,
 * or NULL. */
static imp_trace *read_twice(const char *path, const char *what, void (*set)(int), const char *otherwise)
{
    imp_trace *t[2];
    char err[2][512];
    for (int i = 0; i < 2; i++) {
        set(i);
        t[i] = imp_trace_read(path, "m");
        snprintf(err[i], sizeof err[i], "%s", t[i] ? "" : base_errmsg());
    }
    set(0);
    if (!t[0] != !t[1] || (!t[0] && strcmp(err[0], err[1])) || (t[0] && !same_trace(t[0], t[1])))
        fail_msg("%s: %s: '%s' / '%s'", what, otherwise, err[0], err[1]);
    imp_trace_destroy(t[0]);
    return t[1];
}

static void fast_then_jansson(int second) { imp_trace_fast_path(!second); }

/* path read both ways (the fast path, jansson alone). */
static void both_ways(const char *path, const char *what)
{
    imp_trace_destroy(read_twice(path, what, fast_then_jansson, "the fast path reads it otherwise"));
}

static void memory_then_file(int second) { imp_spill_window(second ? 1024 : 0); }

/* path read with its spans in memory and through the temporary file
 * (import_spill.h: a window of 1 KB, 42 spans, sorted in chunks and merged
 * where the input is out of order). */
static void spill_ways(const char *path, const char *what)
{
    imp_trace *file = read_twice(path, what, memory_then_file, "read otherwise through the file");
    if (file && file->nrecs * sizeof *file->recs > 4096 && file->recspill.fd < 0)
        fail_msg("%s: %zu spans but no temporary file", what, file->nrecs);
    imp_trace_destroy(file);
}

/* The JSON files of the fixtures' folder, every one (a new fixture is
 * read both ways too); their number. */
static size_t fixtures(char names[][256], size_t max)
{
    DIR *d = opendir(PYTORCH_FIXTURES);
    struct dirent *de;
    size_t n = 0;
    assert_non_null(d);
    while ((de = readdir(d)) && n < max)
        if (strstr(de->d_name, ".json"))
            snprintf(names[n++], 256, "%s", de->d_name);
    closedir(d);
    assert_true(n >= 5);
    return n;
}

static void tmp_path(char *buf, size_t size, const char *name)
{
    const char *d = getenv("FATHOM_TEST_TMP");
    snprintf(buf, size, "%s/import_scan-%ld-%s", d && *d ? d : "/tmp", (long)getpid(), name);
}

/* A new file of the test's own (its path into path), open for writing. */
static FILE *tmp_open(char *path, size_t size, const char *name)
{
    tmp_path(path, size, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    return f;
}

static void fixtures_both_ways(void **state)
{
    (void)state;
    char path[4096], names[64][256];
    size_t n = fixtures(names, 64);
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof path, "%s/%.255s", PYTORCH_FIXTURES, names[i]);
        both_ways(path, names[i]);
        spill_ways(path, names[i]);
    }
}

/* A trace whose spans come in no order (each thread's shuffled, ops in
 * ops, in backward spans, across steps): the file's chunks merged read it
 * as memory does. */
static void unordered_spilled(void **state)
{
    (void)state;
    char path[4096];
    FILE *f = tmp_open(path, sizeof path, "unordered.json");
    fprintf(f, "{\"traceEvents\": [\n");
    for (int s = 0; s < 4; s++)
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 1, "
                "\"tid\": 1, \"ts\": %d, \"dur\": 2500},\n",
                s, 10000 + 2500 * s);
    unsigned r = 99;
    for (int i = 0; i < 1500; i++) {
        r = r * 1103515245u + 12345u;
        int tid = 1 + (int)((r >> 16) % 3), ts = 9000 + (int)((r >> 4) % 12000);
        static const char *const outer[] = { "aten::linear", "autograd::engine::evaluate_function: AddmmBackward0",
                                             "Optimizer.step#SGD.step" };
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"aten::addmm\", \"pid\": 1, \"tid\": %d, "
                "\"ts\": %d.5, \"dur\": 2, \"args\": {\"Input Dims\": [[%d, 4]], \"Input type\": [\"float\"]}},\n",
                tid, ts, 1 + (int)(r % 5));
        fprintf(f,
                "{\"ph\": \"X\", \"cat\": \"cpu_op\", \"name\": \"%s\", \"pid\": 1, \"tid\": %d, \"ts\": %d, "
                "\"dur\": 4}%s\n",
                outer[(r >> 8) % 3], tid, ts, i < 1499 ? "," : "");
    }
    fprintf(f, "]}\n");
    assert_int_equal(fclose(f), 0);
    spill_ways(path, "the unordered trace");
    unlink(path);
}

/* A generated trace with what the subset leaves out among what it takes:
 * escapes, non-ASCII names, exponents, big ids, blanks, odd members. */
static void generated_both_ways(void **state)
{
    (void)state;
    char path[4096];
    FILE *f = tmp_open(path, sizeof path, "gen.json");
    fprintf(f, "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": 0, \"name\": \"GPU\"}],\n\"traceEvents\": [\n");
    static const char *const names[] = { "aten::linear", "aten::addmm",      "aten::t",        "aten::relu", "aten::mm",
                                         "aten::conv2d", "aten::caf\\u00e9", "aten::na\\\"me", "x::y" };
    static const char *const cats[] = { "cpu_op",          "cpu_op",   "kernel",    "user_annotation",
                                        "python_function", "Operator", "gpu_memcpy" };
    unsigned r = 12345;
    double ts = 1700000000000000.0;
    for (int i = 0; i < 4000; i++) {
        r = r * 1103515245u + 12345u;
        const char *name = names[(r >> 8) % 9], *cat = cats[(r >> 12) % 7];
        int tid = 1 + (int)((r >> 16) % 3), d0 = 1 << ((r >> 20) % 8);
        if (i % 500 == 0)
            fprintf(f,
                    "%s{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%d\", \"pid\": 1, "
                    "\"tid\": 1, \"ts\": %.3f, \"dur\": 6000000}",
                    i ? ",\n" : "", i / 500, ts);
        fprintf(f, ",\n{ \"ph\" : \"X\",\"cat\":\"%s\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d,", cat, name,
                (r >> 24) % 5 ? 1 : 0, tid);
        if ((r >> 4) % 17 == 0)
            fprintf(f, " \"ts\": %.6e, \"dur\": 1.5e1,", ts);
        else
            fprintf(f, " \"ts\": %.3f, \"dur\": %d.%03d,", ts, (int)((r >> 3) % 50), (int)(r % 1000));
        if ((r >> 5) % 29 == 0) /* args twice: jansson keeps the last */
            fprintf(f, " \"args\": {\"External id\": 7, \"Input Dims\": [[%d]]},", d0);
        fprintf(f,
                " \"args\" : {\"External id\" : %d, \"Input Dims\": [[%d, -0], [ %d , 3 ], [], [[1, 2]]],"
                " \"Input type\": [\"float\", \"c10::Half\", \"\", \"TensorList\"], \"Concrete Inputs\": [\"\", "
                "\"[1, 1]\", \"True\", \"\"], \"Sequence number\": 1.25}}",
                i / 3, d0, d0 * 2);
        ts += (double)((r >> 7) % 40) + 0.125;
    }
    fprintf(f, "\n]}\n");
    assert_int_equal(fclose(f), 0);
    both_ways(path, "the generated trace");
    spill_ways(path, "the generated trace");
    unlink(path);
}

/* Each fixture with bytes changed at random (fixed seeds): both readings
 * agree, trace or error. */
static void mutated_both_ways(void **state)
{
    (void)state;
    static const char bytes[] = "\"\\{}[],:0-9e.x \xff\t";
    char in[4096], path[4096], names[64][256];
    size_t n = fixtures(names, 64);
    tmp_path(path, sizeof path, "mut.json");
    unsigned r = 7;
    for (size_t i = 0; i < n; i++) {
        if (strstr(names[i], ".et."))
            continue; /* the fast path is the profiler's */
        snprintf(in, sizeof in, "%s/%.255s", PYTORCH_FIXTURES, names[i]);
        size_t len;
        char *doc = slurp(in, &len);
        assert_non_null(doc);
        char *m = malloc(len + 1);
        assert_non_null(m);
        for (int k = 0; k < 40; k++) {
            memcpy(m, doc, len);
            for (int c = 0; c < 1 + k % 3; c++) {
                r = r * 1103515245u + 12345u;
                size_t at = (r >> 4) % len;
                r = r * 1103515245u + 12345u;
                m[at] = bytes[(r >> 8) % (sizeof bytes - 1)];
            }
            put(path, m, len);
            char what[320];
            snprintf(what, sizeof what, "%.255s mutation %d", names[i], k);
            both_ways(path, what);
        }
        free(m);
        free(doc);
    }
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(members),
        cmocka_unit_test(leaves_to_jansson),
        cmocka_unit_test(hostile),
        cmocka_unit_test(fixtures_both_ways),
        cmocka_unit_test(generated_both_ways),
        cmocka_unit_test(unordered_spilled),
        cmocka_unit_test(mutated_both_ways),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
