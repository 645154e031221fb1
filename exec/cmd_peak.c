/* cmd_peak.c -- `fathom peak`: this machine's measured compute and memory
 * peaks (the roofline's ceilings): sgemm GFLOP/s at 1..N threads, and a
 * STREAM-style triad's bandwidth. */
#include "base/alloc.h"
#include "base/cli.h"
#include "base/clock.h"
#include "exec_cmds.h"
#include "exec.h"

#include <cblas.h>
#include <getopt.h>
#include <jansson.h>
#include <omp.h>
#include <time.h>
#include <unistd.h>

/* Best of `reps` sgemm runs of n x n x n. */
static double sgemm_gflops(int n, int reps, const float *a, const float *b, float *c)
{
    double best = 0;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n); /* warm-up */
    for (int r = 0; r < reps; r++) {
        double t0 = base_now_s();
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
        double dt = base_now_s() - t0, gf = 2.0 * n * (double)n * n / dt * 1e-9;
        if (gf > best)
            best = gf;
    }
    return best;
}

/* Best of `reps` triads a = b + s*c over n floats: 12 bytes per element. */
static double triad_gbs(int64_t n, int reps, int threads, float *a, const float *b, const float *c)
{
    double best = 0;
    for (int r = 0; r <= reps; r++) {
        double t0 = base_now_s();
#pragma omp parallel for simd num_threads(threads) schedule(static)
        for (int64_t i = 0; i < n; i++)
            a[i] = b[i] + 3.0f * c[i];
        double dt = base_now_s() - t0, gbs = 12.0 * (double)n / dt * 1e-9;
        if (r && gbs > best)
            best = gbs;
    }
    return best;
}

static const char usage_text[] = "usage: fathom peak [--threads N] [--size N] [--format text|json]\n\n"
                                 "Measures this machine's peaks for roofline analysis: single-precision GEMM\n"
                                 "throughput (cblas_sgemm, N x N x N, best of several runs) at 1..T threads,\n"
                                 "and memory bandwidth (a STREAM-style triad over 3 x 128 MiB) at T threads.\n"
                                 "  --threads N   highest thread count to measure (default: all cores)\n"
                                 "  --size N      GEMM size (default 2048)\n"
                                 "  --format json writes what `fathom analyze roofline --peak FILE` reads.\n";

int cmd_peak(int argc, char **argv)
{
    static const struct option opts[] = { { "format", required_argument, 0, 'f' },
                                          { "threads", required_argument, 0, 't' },
                                          { "size", required_argument, 0, 's' },
                                          { "help", no_argument, 0, 'h' },
                                          { 0, 0, 0, 0 } };
    int fmt = CLI_TEXT, c, rc = 1;
    long maxt = exec_cpus(), size = 2048;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "f:t:s:h", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if ((fmt = cli_parse_format("peak", optarg, 0)) < 0)
                return 2;
            break;
        case 't':
            if (cli_parse_int("peak", "--threads", optarg, 1, 1024, &maxt))
                return 2;
            break;
        case 's':
            if (cli_parse_int("peak", "--size", optarg, 64, 16384, &size))
                return 2;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default: return cli_usage_error("peak", "unknown option '%s'; see 'fathom peak --help'", argv[optind - 1]);
        }
    }
    if (optind < argc)
        return cli_usage_error("peak", "unexpected argument '%s'", argv[optind]);

    int n = (int)size;
    int64_t sn = 32ll << 20; /* 128 MiB per array */
    float *a = base_malloc_aligned((size_t)n * n * sizeof *a), *b = base_malloc_aligned((size_t)n * n * sizeof *b),
          *cc = base_malloc_aligned((size_t)n * n * sizeof *cc);
    float *x = base_malloc_aligned((size_t)sn * 4), *y = base_malloc_aligned((size_t)sn * 4),
          *z = base_malloc_aligned((size_t)sn * 4);
    json_t *root = NULL, *arr = NULL;
    if (!a || !b || !cc || !x || !y || !z) {
        cli_error("peak", "out of memory");
        goto end;
    }
    for (int64_t i = 0; i < (int64_t)n * n; i++) {
        a[i] = (float)(i % 7) * 0.1f;
        b[i] = (float)(i % 5) * 0.1f;
    }
    for (int64_t i = 0; i < sn; i++) {
        y[i] = 1.0f;
        z[i] = 2.0f;
        x[i] = 0.0f;
    }
    int tty = isatty(2);
    arr = json_array();
    if (fmt == CLI_TEXT)
        printf("sgemm %dx%dx%d (%s)\n%8s %12s %8s\n", n, n, n, exec_blas_config(), "threads", "GFLOP/s", "speedup");
    double one = 0, best = 0;
    for (int t = 1; t <= maxt; t++) {
        exec_threads_set(t);
        if (tty)
            fprintf(stderr, "\rfathom peak: sgemm at %d thread%s...", t, t > 1 ? "s" : "");
        double gf = sgemm_gflops(n, 3, a, b, cc);
        if (t == 1)
            one = gf;
        if (gf > best)
            best = gf;
        if (fmt == CLI_TEXT)
            printf("%8d %12.1f %8.2f\n", t, gf, gf / one);
        json_array_append_new(arr, json_pack("{s:i, s:f}", "threads", t, "gflops", gf));
    }
    if (tty)
        fprintf(stderr, "\rfathom peak: memory bandwidth...          ");
    double bw = triad_gbs(sn, 3, (int)maxt, x, y, z);
    if (tty)
        fprintf(stderr, "\r%40s\r", "");
    if (fmt == CLI_TEXT) {
        printf("peak sgemm: %.1f GFLOP/s\nmemory bandwidth (triad, %ld thread%s): %.1f GB/s\n", best, maxt,
               maxt == 1 ? "" : "s", bw);
        printf("ridge point: %.1f FLOP/byte\ncpu: %s\n", best / bw, exec_cpu_model());
    } else {
        root = json_pack("{s:i, s:s, s:s, s:i, s:o, s:f, s:f, s:i, s:f}", "schema", 1, "cpu", exec_cpu_model(), "blas",
                         exec_blas_config(), "gemm_size", n, "sgemm", arr, "peak_gflops", best, "bandwidth_gbs", bw,
                         "bandwidth_threads", (int)maxt, "ridge_flop_per_byte", best / bw);
        arr = NULL;
        json_dumpf(root, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    }
    rc = 0;
end:
    json_decref(root);
    json_decref(arr);
    base_free_aligned(a);
    base_free_aligned(b);
    base_free_aligned(cc);
    base_free_aligned(x);
    base_free_aligned(y);
    base_free_aligned(z);
    return rc;
}
