/* bench_import.c -- `fathom import` throughput and memory on a large
 * generated PyTorch profiler trace (Kineto's layout).
 *
 * Writes a trace of EVENTS events (and one of EVENTS/FACTOR): steps of
 * ProfilerStep spans, each of forward ops on the main thread (aten::linear
 * around aten::t and aten::addmm, aten::relu around aten::clamp_min: one op
 * in two or three events) and backward ops on a second thread inside
 * autograd::engine::evaluate_function spans, with four input shapes; then
 * runs `fathom import -o OUT TRACE` on each, timing the child (wall clock,
 * user+sys from wait4) and taking its peak RSS (ru_maxrss), and checks the
 * archive's MANIFEST (ops, steps) against what it wrote.
 *
 * Per trace it prints the whole import (events, JSON MB, seconds, MB/s,
 * events/s, peak RSS) and its phases, each timed in this process on the
 * same file: decompress (libarchive's read of the input, as the importer
 * reads it), parse (each event's syntax: jansson's tree, and the fast
 * path's scanner, analyze/import_scan.c), read (imp_trace_read: decompress,
 * parse, interpret and resolve into the in-memory trace) and write (the
 * rest of the import: the CTF through sink.ctf.fs and the archive).  Then
 * Python's json.load of the same file (a fixed reference: the ratio is the
 * figure to compare across runs on a loaded machine).  The two references
 * (jansson's tree, json.load) run for traces up to --python-mb MB of JSON
 * (default 600; json.load holds the whole tree: 1.3 GB for 200 MB).
 * The growth of RSS between the two sizes shows what memory an event costs.
 * Exit status: 0, or 2 on an error (the import failed, wrong counts).
 *
 *   bench_import [--fathom BIN] [--events N] [--factor F] [--gzip] [--keep]
 *                [--cache DIR] [--python-mb MB]
 *
 * Files go to $TMPDIR (or /tmp) and are deleted at the end (--keep keeps
 * them; --cache DIR keeps the traces in DIR and reuses them on the next
 * run).  3M events are about 580 MB of JSON (--gzip: about 40 MB). */
#define _GNU_SOURCE
#include "analyze/import_json.h"
#include "analyze/import_scan.h"
#include "analyze/import_trace.h"
#include "base/error.h"
#include "tracer/archive.h"

#include <archive.h>
#include <jansson.h>

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef FATHOM_BIN
#define FATHOM_BIN "fathom"
#endif

typedef struct gen_counts {
    uint64_t events, ops, steps;
} gen_counts;

static const int shapes[4][2] = { { 64, 512 }, { 64, 1024 }, { 128, 512 }, { 32, 256 } };

static void span(FILE *f, int *first, const char *cat, const char *name, int tid, double ts, double dur,
                 const int *dims)
{
    if (!f) { /* counting only */
        *first = 0;
        return;
    }
    fprintf(f,
            "%s\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": \"%s\", \"pid\": 4242, \"tid\": %d, \"ts\": %.3f, "
            "\"dur\": %.3f",
            *first ? "" : ",", cat, name, tid, ts, dur);
    if (dims)
        fprintf(f, ", \"args\": {\"Input Dims\": [[%d, %d], [%d, %d]], \"Input type\": [\"float\", \"float\"]}",
                dims[0], dims[1], dims[1], dims[0]);
    fputc('}', f);
    *first = 0;
}

/* A trace of about `events` events into path (through gzip when z); with
 * path NULL its counts only. */
static int generate(const char *path, uint64_t events, int z, gen_counts *c)
{
    char cmd[4400];
    FILE *f = NULL;
    if (!path) {
    } else if (z) {
        snprintf(cmd, sizeof cmd, "gzip -1 > '%s'", path);
        f = popen(cmd, "w");
    } else {
        f = fopen(path, "w");
    }
    if (path && !f)
        return -1;
    memset(c, 0, sizeof *c);
    int first = 1;
    double t = 1700000000000000.0; /* us since the epoch, as Kineto writes */
    if (f)
        fprintf(f, "{\"schemaVersion\": 1, \"deviceProperties\": [], \"traceEvents\": [");
    const int ops_per_step = 200;
    while (c->events < events) {
        double step_b = t;
        uint64_t ev0 = c->events;
        t += 1.0;
        for (int i = 0; i < ops_per_step; i++) { /* forward on thread 1 */
            const int *d = shapes[i % 4];
            if (i % 2 == 0) {
                span(f, &first, "cpu_op", "aten::linear", 1, t, 10.0, d);
                span(f, &first, "cpu_op", "aten::t", 1, t + 0.5, 1.0, d);
                span(f, &first, "cpu_op", "aten::addmm", 1, t + 2.0, 7.0, d);
                c->events += 3;
            } else {
                span(f, &first, "cpu_op", "aten::relu", 1, t, 4.0, d);
                span(f, &first, "cpu_op", "aten::clamp_min", 1, t + 0.5, 3.0, d);
                c->events += 2;
            }
            c->ops++;
            t += 11.0;
        }
        for (int i = 0; i < ops_per_step / 2; i++) { /* backward on thread 2 */
            const int *d = shapes[i % 4];
            span(f, &first, "cpu_op", "autograd::engine::evaluate_function: AddmmBackward0", 2, t, 12.0, NULL);
            span(f, &first, "cpu_op", "aten::mm", 2, t + 1.0, 10.0, d);
            c->events += 2;
            c->ops++;
            t += 13.0;
        }
        char name[64];
        snprintf(name, sizeof name, "ProfilerStep#%llu", (unsigned long long)c->steps);
        span(f, &first, "user_annotation", name, 1, step_b, t - step_b, NULL);
        c->events++;
        c->steps++;
        t += 5.0;
        (void)ev0;
    }
    if (!f)
        return 0;
    fprintf(f, "\n]}\n");
    return z ? (pclose(f) == 0 ? 0 : -1) : (fclose(f) == 0 ? 0 : -1);
}

typedef struct run_result {
    double wall, cpu;
    long rss_kb;
    int status;
} run_result;

/* argv run as a child: its wall clock, CPU seconds (user+sys), peak RSS. */
static int run(char *const argv[], run_result *r)
{
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        if (!freopen("/dev/null", "w", stdout))
            _exit(127);
        execv(argv[0], argv);
        _exit(127);
    }
    int st;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) < 0)
        return -1;
    clock_gettime(CLOCK_MONOTONIC, &b);
    r->wall = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    r->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
             (double)ru.ru_stime.tv_usec / 1e6;
    r->rss_kb = ru.ru_maxrss;
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    return 0;
}

/* CPU seconds of this process: the phases' cost on one core, whatever
 * else the machine runs. */
static double now(void)
{
    struct timespec a;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    return (double)a.tv_sec + (double)a.tv_nsec / 1e9;
}

/* Seconds to read the whole (decompressed) input as the importer does:
 * libarchive's raw format with all filters, 1 MiB at a time. */
static double phase_decompress(const char *path, uint64_t *bytes)
{
    struct archive *a = archive_read_new();
    struct archive_entry *entry;
    static char buf[1 << 20];
    double t0 = now();
    *bytes = 0;
    archive_read_support_filter_all(a);
    archive_read_support_format_raw(a);
    if (archive_read_open_filename(a, path, 1 << 16) != ARCHIVE_OK ||
        archive_read_next_header(a, &entry) != ARCHIVE_OK) {
        archive_read_free(a);
        return -1;
    }
    la_ssize_t n;
    while ((n = archive_read_data(a, buf, sizeof buf)) > 0)
        *bytes += (uint64_t)n;
    archive_read_free(a);
    return n < 0 ? -1 : now() - t0;
}

/* Seconds to walk traceEvents element by element (import_json.h) and
 * parse each: with jansson (a tree per event) when tree, else with the
 * fast path's scanner; *fast counts the events the scanner took. */
static double phase_parse(const char *path, int tree, uint64_t *events, uint64_t *fast)
{
    analyze_json_in *j = analyze_json_open(path);
    double t0 = now();
    *events = *fast = 0;
    if (!j)
        return -1;
    /* {"schemaVersion": 1, "deviceProperties": [], "traceEvents": [ ... as generate() writes */
    int c;
    while ((c = analyze_json_peek(j)) >= 0 && c != '[')
        analyze_json_skip(j);
    if (c == '[') /* deviceProperties' */
        analyze_json_skip(j);
    while ((c = analyze_json_peek(j)) >= 0 && c != '[')
        analyze_json_skip(j);
    analyze_json_skip(j);
    for (;;) {
        size_t len;
        const char *v = analyze_json_value(j, &len);
        if (!v)
            break;
        if (tree) {
            json_t *e = json_loadb(v, len, JSON_DECODE_ANY, NULL);
            *fast += e != NULL;
            json_decref(e);
        } else {
            analyze_scan_event ev;
            *fast += analyze_scan_event_text(v, len, &ev) == 0;
        }
        ++*events;
        analyze_json_consume(j, len);
        if (analyze_json_peek(j) != ',')
            break;
        analyze_json_skip(j);
    }
    analyze_json_close(j);
    return now() - t0;
}

/* Seconds of imp_trace_read (decompress, parse, interpret, resolve). */
static double phase_read(const char *path, uint64_t *ops)
{
    double t0 = now();
    imp_trace *t = imp_trace_read(path, NULL);
    if (!t) {
        fprintf(stderr, "bench_import: %s\n", base_errmsg());
        return -1;
    }
    double s = now() - t0;
    *ops = t->sum.ops;
    imp_trace_destroy(t);
    return s;
}

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(p);
}

static int check_manifest(const char *archive, const gen_counts *c)
{
    tracer_trace *t = NULL;
    if (tracer_trace_open(archive, &t) != TRACER_ARCHIVE_OK) {
        fprintf(stderr, "bench_import: %s\n", base_errmsg());
        return -1;
    }
    uint64_t ops = 0, steps = 0;
    const tracer_manifest *m = tracer_trace_manifest(t);
    int bad = !m || tracer_manifest_get_u64(m, "ops", &ops) || tracer_manifest_get_u64(m, "steps", &steps) ||
              ops != c->ops || steps != c->steps;
    if (bad)
        fprintf(stderr, "bench_import: %s holds %llu ops in %llu steps, the trace %llu in %llu\n", archive,
                (unsigned long long)ops, (unsigned long long)steps, (unsigned long long)c->ops,
                (unsigned long long)c->steps);
    tracer_trace_close(t);
    return bad ? -1 : 0;
}

/* Seconds of Python's json.load of path (gzip.open for .gz); -1 when it
 * failed or there is no python3. */
static double python_load(const char *path, int z, long *rss_kb)
{
    char code[256];
    snprintf(code, sizeof code, "import json, sys, gzip\njson.load(%s(sys.argv[1]%s))", z ? "gzip.open" : "open",
             z ? ", 'rt'" : "");
    char *const av[] = { "/usr/bin/python3", "-c", code, (char *)path, NULL };
    run_result r;
    if (access(av[0], X_OK) || run(av, &r) || r.status != 0)
        return -1;
    *rss_kb = r.rss_kb;
    return r.cpu;
}

int main(int argc, char **argv)
{
    const char *fathom = FATHOM_BIN, *cache = NULL;
    uint64_t events = 3000000;
    int factor = 10, z = 0, keep = 0;
    double python_mb = 600;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fathom") == 0 && i + 1 < argc)
            fathom = argv[++i];
        else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            events = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--factor") == 0 && i + 1 < argc)
            factor = atoi(argv[++i]);
        else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc)
            cache = argv[++i];
        else if (strcmp(argv[i], "--python-mb") == 0 && i + 1 < argc)
            python_mb = atof(argv[++i]);
        else if (strcmp(argv[i], "--gzip") == 0)
            z = 1;
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else {
            fprintf(stderr, "usage: bench_import [--fathom BIN] [--events N] [--factor F] [--gzip] [--keep] "
                            "[--cache DIR] [--python-mb MB]\n");
            return 2;
        }
    }
    if (events < 1000 || factor < 1) {
        fprintf(stderr, "bench_import: --events wants at least 1000, --factor at least 1\n");
        return 2;
    }
    const char *tmp = getenv("TMPDIR");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/fathom-bench-import-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror(dir);
        return 2;
    }
    int rc = 0;
    uint64_t sizes[2] = { events / (uint64_t)factor, events };
    long rss[2] = { 0, 0 };
    uint64_t got[2] = { 0, 0 };
    double mbps[2] = { 0, 0 }, py_ratio = 0;
    for (int k = 0; k < 2; k++) {
        char in[4200], out[4200];
        gen_counts c;
        struct stat sb;
        if (cache)
            snprintf(in, sizeof in, "%s/bench-import-%llu.pt.trace.json%s", cache, (unsigned long long)sizes[k],
                     z ? ".gz" : "");
        else
            snprintf(in, sizeof in, "%s/big%d.pt.trace.json%s", dir, k, z ? ".gz" : "");
        snprintf(out, sizeof out, "%s/big%d.tar.zst", dir, k);
        int have = cache && stat(in, &sb) == 0;
        if (generate(have ? NULL : in, sizes[k], z, &c)) {
            fprintf(stderr, "bench_import: cannot write %s: %s\n", in, strerror(errno));
            rc = 2;
            break;
        }
        stat(in, &sb);
        char *const av[] = { (char *)fathom, "import", "-o", out, in, NULL };
        run_result r;
        if (run(av, &r) || r.status != 0) {
            fprintf(stderr, "bench_import: fathom import %s failed (status %d)\n", in, r.status);
            rc = 2;
            break;
        }
        if (check_manifest(out, &c)) {
            rc = 2;
            break;
        }
        uint64_t bytes = 0, nev = 0, nfast = 0, ops = 0;
        double dec = phase_decompress(in, &bytes);
        double mb = (double)bytes / 1e6;
        double parse_tree = mb <= python_mb ? phase_parse(in, 1, &nev, &nfast) : -1;
        double parse_scan = phase_parse(in, 0, &nev, &nfast);
        double rd = phase_read(in, &ops);
        long py_rss = 0;
        double py = mb <= python_mb ? python_load(in, z, &py_rss) : -1;
        rss[k] = r.rss_kb;
        got[k] = c.events;
        mbps[k] = mb / r.cpu;
        printf("%s: %llu events, %.1f MB of JSON (%.1f MB on disk)\n", in, (unsigned long long)c.events, mb,
               (double)sb.st_size / 1e6);
        printf("  %-38s %8s %9s %12s\n", "phase (CPU seconds)", "s", "MB/s", "events/s");
#define ROW(label, s)                                                                         \
    if ((s) > 0)                                                                              \
        printf("  %-38s %8.2f %9.1f %12.0f\n", label, (s), mb / (s), (double)c.events / (s)); \
    else                                                                                      \
        printf("  %-38s %8s\n", label, "-");
        ROW("decompress (read the input)", dec);
        ROW("parse: jansson tree per event", parse_tree);
        ROW("parse: scanner (fast path)", parse_scan);
        ROW("read: imp_trace_read, all phases", rd);
        ROW("write: CTF and archive (import - read)", r.cpu - rd);
        ROW("fathom import, end to end", r.cpu);
        ROW("python3 json.load", py);
#undef ROW
        printf("  scanner took %llu of %llu events; import wall %.2f s, peak RSS %.1f MB (%.1f B/event)\n",
               (unsigned long long)nfast, (unsigned long long)nev, r.wall, (double)r.rss_kb / 1024.0,
               (double)r.rss_kb * 1024.0 / (double)c.events);
        if (py > 0) {
            py_ratio = py / r.cpu;
            printf("  fathom import / json.load speed: %.2fx (json.load peak RSS %.1f MB)\n", py_ratio,
                   (double)py_rss / 1024.0);
        }
        fflush(stdout);
        if (!keep && !cache)
            remove(in);
        if (!keep)
            remove(out);
    }
    if (rc == 0 && got[1] > got[0])
        printf("RSS: %.1f MB at %llu events, %.1f MB at %llu (ratio %.2f, %.1f bytes per extra event); "
               "end to end %.1f and %.1f MB/s of CPU\n",
               (double)rss[0] / 1024.0, (unsigned long long)got[0], (double)rss[1] / 1024.0, (unsigned long long)got[1],
               (double)rss[1] / (double)rss[0], (double)(rss[1] - rss[0]) * 1024.0 / (double)(got[1] - got[0]), mbps[0],
               mbps[1]);
    if (!keep)
        nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    else
        printf("kept in %s\n", dir);
    return rc;
}
