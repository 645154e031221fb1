/* bench_analyze.c -- `fathom analyze breakdown` against Babeltrace2's own
 * dummy sink on the same large trace, in one run.
 *
 * Writes two fathom-schema CTF traces with the test fixture writer
 * (tests/fixtures: ctfgen + the "conv" training scenario, two streams as
 * a two-thread recording has): EVENTS events and FACTOR times as many.
 * For each size it runs, interleaved, `babeltrace2 TRACE -c
 * sink.utils.dummy` (decoding and muxing only: the floor any Babeltrace2
 * analysis pays) and `fathom analyze breakdown --format json TRACE` (the
 * format changes only how the ~20 result lines are printed; JSON lets the
 * bench check the counts), timing each child (wall clock, and user+sys
 * from wait4) and taking its peak RSS (ru_maxrss).  A warm-up read runs
 * first so the page cache holds the trace for both programs.
 *
 * Prints events, seconds of each program (best and median), the ratio
 * (target: <= 1.3), events per second, and the analyzer's peak RSS at 1x and
 * FACTORx (target: flat, i.e. memory does not grow with the events).
 *
 * Both programs run one thread.  On a shared machine (a VM whose other
 * tenants come and go) the wall clock also counts the time a program waits
 * for a core, and even user+sys time swings by 30% from run to run, so the
 * verdict on the ratio uses the median over the runs of the paired ratio
 * analyze[i] / dummy[i] of user+sys time (the two runs of a pair are
 * adjacent, under similar load); the best and median wall-clock and the
 * best user+sys ratios are printed beside it.  The dummy
 * sink's RSS is printed too: Babeltrace2's own memory (src.ctf.fs's packet
 * index, the mapped windows of the stream files) grows a little with the
 * trace, in both programs.
 * Exit status: 0 when every target is met, 1 when one is missed, 2 on an
 * error (a program failed, or the analyzer's counts are wrong).
 *
 *   bench_analyze [--fathom BIN] [--babeltrace2 BIN] [--events N]
 *                 [--factor F] [--runs R] [--streams S] [--keep]
 *
 * Traces go to $TMPDIR (or /tmp) and are deleted at the end (--keep keeps
 * them).  The 10M-event trace takes about 0.8 GB.
 */
#define _GNU_SOURCE
#include "fixtures/ctfgen.h"
#include "fixtures/scenario.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_stats.h"

#ifndef FATHOM_BIN
#define FATHOM_BIN "fathom"
#endif

#define MAX_RUNS 32
#define RATIO_TARGET 1.3
/* "flat": the larger trace's peak RSS within 10% (+ 2 MiB of allocator
 * slack) of the smaller one's */
#define RSS_SLACK_FRAC 0.10
#define RSS_SLACK_KB 2048

typedef struct sample {
    double wall, cpu; /* seconds */
    long rss_kb;
} sample;

typedef struct size_result {
    uint64_t events, steps, bytes;
    sample dummy[MAX_RUNS], analyze[MAX_RUNS];
    int n;
} size_result;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs argv with stdout to `out` (NULL: /dev/null) and stderr to `err`;
 * fills s. Returns the exit status, or -1 if it could not run / was killed. */
static int run(char *const argv[], const char *out, const char *err, sample *s)
{
    double t0 = now();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        int fe = open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fo < 0 || fe < 0 || dup2(fo, 1) < 0 || dup2(fe, 2) < 0)
            _exit(127);
        execvp(argv[0], argv);
        dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    while (wait4(pid, &st, 0, &ru) < 0)
        if (errno != EINTR)
            return -1;
    s->wall = now() - t0;
    s->cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
             (double)ru.ru_stime.tv_usec * 1e-6;
    s->rss_kb = ru.ru_maxrss;
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void show_log(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[512];
    int n = 0;
    while (f && n++ < 20 && fgets(line, sizeof line, f))
        fprintf(stderr, "  | %s", line);
    if (f)
        fclose(f);
}

/* which: 0 wall, 1 cpu; want: 0 best, 1 median */
static double pick(const sample *v, int n, int which, int want)
{
    double t[MAX_RUNS];
    for (int i = 0; i < n; i++)
        t[i] = which ? v[i].cpu : v[i].wall;
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    if (!want)
        return t[0];
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

/* Median over the runs of a[i] / d[i] (user+sys time). */
static double paired_ratio(const sample *a, const sample *d, int n)
{
    double t[MAX_RUNS];
    for (int i = 0; i < n; i++)
        t[i] = a[i].cpu / d[i].cpu;
    qsort(t, (size_t)n, sizeof *t, bench_cmp_double);
    return n % 2 ? t[n / 2] : (t[n / 2 - 1] + t[n / 2]) / 2;
}

static long max_rss(const sample *v, int n)
{
    long m = 0;
    for (int i = 0; i < n; i++)
        if (v[i].rss_kb > m)
            m = v[i].rss_kb;
    return m;
}

static uint64_t tree_bytes;
static int add_size(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)path, (void)ftw;
    if (flag == FTW_F)
        tree_bytes += (uint64_t)st->st_size;
    return 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    if (remove(path) != 0)
        fprintf(stderr, "bench_analyze: cannot remove %s: %s\n", path, strerror(errno));
    return 0;
}

/* Checks the analyzer's JSON: the step count and the op invocations. */
static int check_json(const char *path, uint64_t steps, uint64_t ops)
{
    json_error_t je;
    json_t *root = json_load_file(path, 0, &je);
    if (!root) {
        fprintf(stderr, "bench_analyze: %s: not JSON: %s\n", path, je.text);
        return -1;
    }
    json_t *tr = json_array_get(json_object_get(root, "traces"), 0);
    json_t *types = json_object_get(tr, "op_types");
    uint64_t count = 0;
    for (size_t i = 0; i < json_array_size(types); i++)
        count += (uint64_t)json_integer_value(json_object_get(json_array_get(types, i), "count"));
    uint64_t got_steps = (uint64_t)json_integer_value(json_object_get(tr, "steps"));
    json_decref(root);
    if (got_steps != steps || count != ops) {
        fprintf(stderr,
                "bench_analyze: %s: the analyzer counted %" PRIu64 " steps and %" PRIu64
                " ops, the trace holds %" PRIu64 " and %" PRIu64 "\n",
                path, got_steps, count, steps, ops);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *fathom = FATHOM_BIN, *bt2 = "babeltrace2";
    uint64_t events = 1000000;
    unsigned factor = 10, streams = 2;
    int runs = 5, keep = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--keep") == 0) {
            keep = 1;
            continue;
        }
        if (!v) {
            fprintf(stderr, "usage: bench_analyze [--fathom BIN] [--babeltrace2 BIN] [--events N] [--factor F] "
                            "[--runs R] [--streams S] [--keep]\n");
            return 2;
        }
        i++;
        if (strcmp(a, "--fathom") == 0)
            fathom = v;
        else if (strcmp(a, "--babeltrace2") == 0)
            bt2 = v;
        else if (strcmp(a, "--events") == 0)
            events = strtoull(v, NULL, 10);
        else if (strcmp(a, "--factor") == 0)
            factor = (unsigned)strtoul(v, NULL, 10);
        else if (strcmp(a, "--runs") == 0)
            runs = atoi(v);
        else if (strcmp(a, "--streams") == 0)
            streams = (unsigned)strtoul(v, NULL, 10);
        else {
            fprintf(stderr, "bench_analyze: unknown option %s\n", a);
            return 2;
        }
    }
    if (runs < 1 || runs > MAX_RUNS || factor < 1 || events < 1000 || streams < 1) {
        fprintf(stderr, "bench_analyze: bad option value\n");
        return 2;
    }

    scen sc = { .model = "bench", .mode = CTFGEN_TRAIN, .run_begin = 1, .nstreams = streams, .packet_size = 64 * 1024 };
    sc.ops = scen_recipe("conv", CTFGEN_TRAIN, &sc.nops);
    /* what scen_write writes: run_begin, 4 weight allocs, per step
     * step_begin/end, an activation alloc/free and a begin/end per op,
     * run_end */
    const uint64_t fixed = 6, per_step = 4 + 2 * (uint64_t)sc.nops;

    const char *tmp = getenv("TMPDIR");
    char root[4096];
    snprintf(root, sizeof root, "%s/fathom-bench-analyze-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(root)) {
        fprintf(stderr, "bench_analyze: cannot create a folder under %s: %s\n", tmp && *tmp ? tmp : "/tmp",
                strerror(errno));
        return 2;
    }
    char errlog[4200], jsonout[4200];
    snprintf(errlog, sizeof errlog, "%s/stderr.log", root);
    snprintf(jsonout, sizeof jsonout, "%s/breakdown.json", root);

    printf("fathom analyze breakdown vs babeltrace2 -c sink.utils.dummy\n");
    printf("fathom: %s\nbabeltrace2: %s\ntrace: conv training scenario, %u stream(s), %d interleaved runs per "
           "program and size\n\n",
           fathom, bt2, streams, runs);
    fflush(stdout);

    size_result res[2];
    memset(res, 0, sizeof res);
    int rc = 0;
    for (int k = 0; k < 2 && rc == 0; k++) {
        size_result *r = &res[k];
        uint64_t want = events * (k ? factor : 1);
        sc.steps = (uint32_t)((want - fixed + per_step / 2) / per_step);
        r->steps = sc.steps;
        r->events = fixed + per_step * sc.steps;
        char dir[4200];
        snprintf(dir, sizeof dir, "%s/trace-%ux", root, k ? factor : 1);
        double t0 = now();
        if (scen_write(dir, &sc) != 0) {
            fprintf(stderr, "bench_analyze: cannot write the trace %s\n", dir);
            rc = 2;
            break;
        }
        double gen = now() - t0;
        tree_bytes = 0;
        nftw(dir, add_size, 16, FTW_PHYS);
        r->bytes = tree_bytes;
        printf("[%ux] %" PRIu64 " events (%" PRIu64 " steps), %.1f MB written in %.1f s\n", k ? factor : 1, r->events,
               r->steps, (double)r->bytes / 1e6, gen);
        fflush(stdout);

        char *dummy_argv[] = { (char *)bt2, dir, "-c", "sink.utils.dummy", NULL };
        char *an_argv[] = { (char *)fathom, "analyze", "breakdown", "--format", "json", dir, NULL };
        sample warm;
        if (run(dummy_argv, NULL, errlog, &warm) != 0) { /* warm-up: fills the page cache */
            fprintf(stderr, "bench_analyze: %s failed:\n", bt2);
            show_log(errlog);
            rc = 2;
            break;
        }
        for (int i = 0; i < runs; i++) {
            if (run(dummy_argv, NULL, errlog, &r->dummy[i]) != 0) {
                fprintf(stderr, "bench_analyze: %s failed:\n", bt2);
                show_log(errlog);
                rc = 2;
                break;
            }
            if (run(an_argv, jsonout, errlog, &r->analyze[i]) != 0) {
                fprintf(stderr, "bench_analyze: %s analyze breakdown failed:\n", fathom);
                show_log(errlog);
                rc = 2;
                break;
            }
            if (check_json(jsonout, r->steps, r->steps * sc.nops) != 0) {
                rc = 2;
                break;
            }
            r->n++;
            printf("  run %d: dummy %.3f s (cpu %.3f), analyze %.3f s (cpu %.3f), analyze RSS %ld KB\n", i + 1,
                   r->dummy[i].wall, r->dummy[i].cpu, r->analyze[i].wall, r->analyze[i].cpu, r->analyze[i].rss_kb);
            fflush(stdout);
        }
        if (!keep)
            nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    }

    if (rc == 0) {
        printf("\n%-5s %10s | %-23s | %-23s | %-23s | %7s | %10s | %-21s\n", "", "", "best wall s (ratio)",
               "median wall s (ratio)", "best cpu s (ratio)", "paired", "", "peak RSS KB");
        printf("%-5s %10s | %7s %7s %7s | %7s %7s %7s | %7s %7s %7s | %7s | %10s | %10s %10s\n", "size", "events",
               "dummy", "analyze", "ratio", "dummy", "analyze", "ratio", "dummy", "analyze", "ratio", "cpu rat",
               "events/s", "dummy", "analyze");
        double ratio[2];
        for (int k = 0; k < 2; k++) {
            size_result *r = &res[k];
            double db = pick(r->dummy, r->n, 0, 0), ab = pick(r->analyze, r->n, 0, 0);
            double dm = pick(r->dummy, r->n, 0, 1), am = pick(r->analyze, r->n, 0, 1);
            double dc = pick(r->dummy, r->n, 1, 0), ac = pick(r->analyze, r->n, 1, 0);
            ratio[k] = paired_ratio(r->analyze, r->dummy, r->n);
            char label[16];
            snprintf(label, sizeof label, "%ux", k ? factor : 1);
            printf("%-5s %10" PRIu64 " | %7.3f %7.3f %7.3f | %7.3f %7.3f %7.3f | %7.3f %7.3f %7.3f | %7.3f | %10.0f | "
                   "%10ld %10ld\n",
                   label, r->events, db, ab, ab / db, dm, am, am / dm, dc, ac, ac / dc, ratio[k],
                   (double)r->events / ac, max_rss(r->dummy, r->n), max_rss(r->analyze, r->n));
        }
        long rss1 = max_rss(res[0].analyze, res[0].n), rss10 = max_rss(res[1].analyze, res[1].n);
        long rss_limit = (long)((double)rss1 * (1.0 + RSS_SLACK_FRAC)) + RSS_SLACK_KB;
        int ratio_ok = ratio[0] <= RATIO_TARGET && ratio[1] <= RATIO_TARGET;
        int rss_ok = rss10 <= rss_limit;
        printf(
            "\nratio (median of paired user+sys ratios, analyze / dummy): %.3f at 1x, %.3f at %ux; target <= %.2f: %s\n",
            ratio[0], ratio[1], factor, RATIO_TARGET, ratio_ok ? "met" : "MISSED");
        printf("analyze peak RSS: %ld KB at 1x, %ld KB at %ux (%+.1f%%); target flat (<= %ld KB): %s\n", rss1, rss10,
               factor, 100.0 * ((double)rss10 / (double)rss1 - 1.0), rss_limit, rss_ok ? "met" : "MISSED");
        printf("analyze throughput at %ux: %.0f events/s of cpu time (%.1f MB/s of CTF), %.0f events/s of best "
               "wall time\n",
               factor, (double)res[1].events / pick(res[1].analyze, res[1].n, 1, 0),
               (double)res[1].bytes / 1e6 / pick(res[1].analyze, res[1].n, 1, 0),
               (double)res[1].events / pick(res[1].analyze, res[1].n, 0, 0));
        if (!ratio_ok || !rss_ok)
            rc = 1;
    }
    if (!keep) {
        nftw(root, remove_entry, 16, FTW_DEPTH | FTW_PHYS); /* also after an error */
    } else {
        printf("traces kept under %s\n", root);
    }
    return rc;
}
