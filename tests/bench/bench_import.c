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
 * Prints per trace: events, JSON bytes, seconds, events per second, peak
 * RSS, and RSS bytes per event; the growth of RSS between the two sizes
 * per extra event shows what memory an event costs (the importer keeps a
 * 24-byte record per span, never the JSON).
 * Exit status: 0, or 2 on an error (the import failed, wrong counts).
 *
 *   bench_import [--fathom BIN] [--events N] [--factor F] [--gzip] [--keep]
 *
 * Files go to $TMPDIR (or /tmp) and are deleted at the end (--keep keeps
 * them).  3M events are about 500 MB of JSON (--gzip: about 40 MB). */
#define _GNU_SOURCE
#include "tracer/archive.h"

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

/* A trace of about `events` events into path (through gzip when z). */
static int generate(const char *path, uint64_t events, int z, gen_counts *c)
{
    char cmd[4400];
    FILE *f;
    if (z) {
        snprintf(cmd, sizeof cmd, "gzip -1 > '%s'", path);
        f = popen(cmd, "w");
    } else {
        f = fopen(path, "w");
    }
    if (!f)
        return -1;
    memset(c, 0, sizeof *c);
    int first = 1;
    double t = 1700000000000000.0; /* us since the epoch, as Kineto writes */
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
    fprintf(f, "\n]}\n");
    return z ? (pclose(f) == 0 ? 0 : -1) : (fclose(f) == 0 ? 0 : -1);
}

typedef struct run_result {
    double wall, cpu;
    long rss_kb;
    int status;
} run_result;

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

int main(int argc, char **argv)
{
    const char *fathom = FATHOM_BIN;
    uint64_t events = 3000000;
    int factor = 10, z = 0, keep = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--fathom") == 0 && i + 1 < argc)
            fathom = argv[++i];
        else if (strcmp(argv[i], "--events") == 0 && i + 1 < argc)
            events = strtoull(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--factor") == 0 && i + 1 < argc)
            factor = atoi(argv[++i]);
        else if (strcmp(argv[i], "--gzip") == 0)
            z = 1;
        else if (strcmp(argv[i], "--keep") == 0)
            keep = 1;
        else {
            fprintf(stderr, "usage: bench_import [--fathom BIN] [--events N] [--factor F] [--gzip] [--keep]\n");
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
    printf("%10s %10s %9s %9s %12s %9s %10s\n", "events", "json_MB", "wall_s", "cpu_s", "events/s", "rss_MB",
           "rss_B/ev");
    fflush(stdout); /* before the children inherit the buffer */
    uint64_t sizes[2] = { events / (uint64_t)factor, events };
    long rss[2] = { 0, 0 };
    uint64_t got[2] = { 0, 0 };
    for (int k = 0; k < 2; k++) {
        char in[4200], out[4200];
        gen_counts c;
        snprintf(in, sizeof in, "%s/big%d.pt.trace.json%s", dir, k, z ? ".gz" : "");
        snprintf(out, sizeof out, "%s/big%d.tar.zst", dir, k);
        if (generate(in, sizes[k], z, &c)) {
            fprintf(stderr, "bench_import: cannot write %s: %s\n", in, strerror(errno));
            rc = 2;
            break;
        }
        struct stat sb;
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
        rss[k] = r.rss_kb;
        got[k] = c.events;
        printf("%10llu %10.1f %9.2f %9.2f %12.0f %9.1f %10.1f\n", (unsigned long long)c.events,
               (double)sb.st_size / 1e6, r.wall, r.cpu, (double)c.events / r.wall, (double)r.rss_kb / 1024.0,
               (double)r.rss_kb * 1024.0 / (double)c.events);
        fflush(stdout);
        if (!keep)
            remove(in), remove(out);
    }
    if (rc == 0 && got[1] > got[0])
        printf("RSS growth: %.1f bytes per extra event (%.1f MB at %llu events, %.1f MB at %llu)\n",
               (double)(rss[1] - rss[0]) * 1024.0 / (double)(got[1] - got[0]), (double)rss[0] / 1024.0,
               (unsigned long long)got[0], (double)rss[1] / 1024.0, (unsigned long long)got[1]);
    if (!keep)
        nftw(dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    else
        printf("kept in %s\n", dir);
    return rc;
}
