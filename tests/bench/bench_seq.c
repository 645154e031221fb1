/* bench_seq.c -- step times of the sequence and generative workloads
 * (seq2seq, memnet, speech, autoenc) against their PyTorch references
 * (tests/bench/torch_seq.py: same architecture, batch and threads).
 *
 * For each workload, preset and mode, R rounds (default 3), fathom then
 * PyTorch in each: a fresh model on each side, one warm-up step, then at
 * least K timed steps and until they took --min-ms (default 200: steps of
 * under a millisecond, memnet's, are too few to time in K alone); each
 * side's median per-step wall time in the round, and the round's fathom /
 * PyTorch ratio. Printed: the medians over the rounds and the range of the
 * rounds' ratios (lowest-highest): on a shared machine whose speed moves, a
 * single pair of runs can land on different sides of a slowdown.
 *
 *   bench_seq [--presets small,full] [--models seq2seq,...] [--modes train,infer]
 *             [--steps K] [--rounds R] [--min-ms MS] [--threads N] [--cpu]
 *             [--json FILE]
 *
 * --cpu times both sides in the process's CPU time instead of the clock's:
 * with --threads 1 on a machine other processes load, that leaves out the
 * time each waited for a core (with more threads it would count the time
 * idle threads spin).
 *
 * FATHOM_PYTHON names the Python with torch (default /usr/bin/python3). */
#include "exec/exec.h"
#include "models/model.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_stats.h"

static clockid_t g_clock = CLOCK_MONOTONIC; /* --cpu: CLOCK_PROCESS_CPUTIME_ID */
static double g_min_ms = 200;               /* --min-ms: each side's timed steps take at least this */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(g_clock, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int listed(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += n)
        if ((p == list || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

/* Median step time of fathom's model, or NAN on error; *engine_ms: the
 * median time of those steps inside the engine's graph runs. */
static double fathom_ms(const char *name, model_preset preset, model_mode mode, int steps, float *loss,
                        double *engine_ms)
{
    *engine_ms = NAN;
    model_config c = { .mode = mode, .preset = preset, .seed = 42, .inter = 1, .plan = true };
    model *m = NULL;
    if (model_create(model_find(name), &c, &m)) {
        fprintf(stderr, "%s %s %s: %s\n", name, model_preset_name(preset), model_mode_name(mode), exec_errmsg());
        return NAN;
    }
    enum { MAX_STEPS = 4096 };
    double *t = malloc(MAX_STEPS * sizeof *t), *e = malloc(MAX_STEPS * sizeof *e);
    int ok = t && e && model_step(m, loss) == EXEC_OK, n = 0;
    for (double sum = 0; ok && n < MAX_STEPS && (n < steps || sum < g_min_ms); n++) {
        uint64_t e0 = exec_engine_ns();
        double t0 = now_ms();
        ok = model_step(m, loss) == EXEC_OK;
        t[n] = now_ms() - t0;
        e[n] = (double)(exec_engine_ns() - e0) / 1e6;
        sum += t[n];
    }
    if (!ok)
        fprintf(stderr, "%s: %s\n", name, t && e ? exec_errmsg() : "out of memory");
    model_destroy(m);
    double r = NAN;
    if (ok) {
        *engine_ms = bench_median(e, n);
        r = bench_median(t, n);
    }
    free(t);
    free(e);
    return r;
}

static double torch_ms(const char *name, const char *preset, const char *mode, int steps, int threads)
{
    const char *py = getenv("FATHOM_PYTHON") ? getenv("FATHOM_PYTHON") : "/usr/bin/python3";
    char cmd[1024];
    snprintf(cmd, sizeof cmd,
             "env -u OMP_WAIT_POLICY '%s' '%s' %s %s %s --steps %d --min-ms %g --warmup 1 --threads %d%s", py,
             TORCH_SEQ_PY, name, preset, mode, steps, g_min_ms, threads, g_clock == CLOCK_MONOTONIC ? "" : " --cpu");
    FILE *f = popen(cmd, "r");
    if (!f)
        return NAN;
    char line[8192] = "";
    double ms = NAN;
    while (fgets(line, sizeof line, f)) {
        json_t *o = json_loads(line, 0, NULL);
        if (o && json_is_number(json_object_get(o, "median_ms")))
            ms = json_number_value(json_object_get(o, "median_ms"));
        json_decref(o);
    }
    if (pclose(f) != 0)
        fprintf(stderr, "%s %s %s: the PyTorch reference failed\n", name, preset, mode);
    return ms;
}

static double min_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static double max_of(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* a positive number from s, or 0 */
static double positive(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    return end != s && !*end && v > 0 ? v : 0;
}

int main(int argc, char **argv)
{
    const char *presets = "small,full", *models = "seq2seq,memnet,speech,autoenc", *modes = "train,infer";
    const char *json_path = NULL;
    int steps = 0, threads = 0, rounds = 3;
    for (int i = 1; i < argc; i++) {
        if (i + 1 < argc && !strcmp(argv[i], "--presets"))
            presets = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--models"))
            models = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--modes"))
            modes = argv[++i];
        else if (i + 1 < argc && !strcmp(argv[i], "--steps"))
            steps = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--threads"))
            threads = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--rounds") && positive(argv[i + 1]) >= 1 &&
                 positive(argv[i + 1]) <= 64 && positive(argv[i + 1]) == (int)positive(argv[i + 1]))
            rounds = (int)positive(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--min-ms") && positive(argv[i + 1]) > 0)
            g_min_ms = positive(argv[++i]);
        else if (!strcmp(argv[i], "--cpu"))
            g_clock = CLOCK_PROCESS_CPUTIME_ID;
        else if (i + 1 < argc && !strcmp(argv[i], "--json"))
            json_path = argv[++i];
        else {
            fprintf(stderr, "usage: bench_seq [--presets small,full] [--models LIST] [--modes train,infer] "
                            "[--steps K] [--rounds R (1-64)] [--min-ms MS] [--threads N] [--cpu] [--json FILE]\n");
            return 2;
        }
    }
    if (threads <= 0)
        threads = exec_cores();
    exec_threads_set(threads);
    static const char *const names[] = { "seq2seq", "memnet", "speech", "autoenc" };
    json_t *rows = json_array();
    printf("fathom vs PyTorch: %d threads, at least %d steps and %g ms a side, median of %d rounds\n"
           "fathom ms: the whole step; engine ms: the part inside fathom's graph runs (the step less its data\n"
           "feeding), which is what the PyTorch step times. ratio = fathom / pytorch (the median of the\n"
           "rounds' ratios; range: the lowest and highest).\n",
           threads, steps > 0 ? steps : 5, g_min_ms, rounds);
    printf("%-8s %-6s %-6s %12s %12s %12s %8s %8s  %s\n", "model", "preset", "mode", "fathom ms", "engine ms",
           "pytorch ms", "ratio", "engine", "range");
    int failed = 0;
    for (int p = MODEL_TINY; p < MODEL_PRESET_COUNT; p++) {
        if (!listed(presets, model_preset_name((model_preset)p)))
            continue;
        for (int i = 0; i < 4; i++) {
            if (!listed(models, names[i]))
                continue;
            for (int md = 0; md < MODEL_MODE_COUNT; md++) {
                if (!listed(modes, model_mode_name((model_mode)md)))
                    continue;
                int k = steps > 0 ? steps : p == MODEL_FULL ? 3 : 5;
                const char *pn = model_preset_name((model_preset)p), *mn = model_mode_name((model_mode)md);
                double f[64], e[64], t[64], r[64], re[64];
                int n = 0;
                for (int round = 0; round < rounds; round++) {
                    float loss = NAN;
                    f[n] = fathom_ms(names[i], (model_preset)p, (model_mode)md, k, &loss, &e[n]);
                    t[n] = torch_ms(names[i], pn, mn, k, threads);
                    if (!isfinite(f[n]) || !isfinite(t[n]))
                        break;
                    r[n] = f[n] / t[n], re[n] = e[n] / t[n];
                    n++;
                }
                json_t *row = json_pack("{s:s,s:s,s:s,s:i,s:i,s:i}", "model", names[i], "preset", pn, "mode", mn,
                                        "threads", threads, "steps", k, "rounds", n);
                if (n < rounds) {
                    failed = 1;
                    printf("%-8s %-6s %-6s failed (see above)\n", names[i], pn, mn);
                    json_object_set_new(row, "ratio", json_real(-1.0));
                } else {
                    json_t *rr = json_array();
                    for (int j = 0; j < n; j++)
                        json_array_append_new(
                            rr, json_pack("{s:f,s:f,s:f}", "fathom_ms", f[j], "engine_ms", e[j], "pytorch_ms", t[j]));
                    double mr = bench_median(r, n), mre = bench_median(re, n), lo = min_of(r, n), hi = max_of(r, n);
                    double mf = bench_median(f, n), me = bench_median(e, n), mt = bench_median(t, n);
                    printf("%-8s %-6s %-6s %12.2f %12.2f %12.2f %8.3f %8.3f  %.2f-%.2f\n", names[i], pn, mn, mf, me, mt,
                           mr, mre, lo, hi);
                    json_t *med =
                        json_pack("{s:f,s:f,s:f,s:f,s:f,s:f,s:f}", "fathom_ms", mf, "engine_ms", me, "pytorch_ms", mt,
                                  "ratio", mr, "engine_ratio", mre, "ratio_min", lo, "ratio_max", hi);
                    json_object_update(row, med);
                    json_decref(med);
                    json_object_set_new(row, "each_round", rr);
                }
                fflush(stdout);
                json_array_append_new(rows, row);
            }
        }
    }
    json_t *doc = json_pack("{s:i,s:s,s:o}", "schema", 1, "cpu", exec_cpu_model(), "rows", rows);
    if (json_path && json_dump_file(doc, json_path, JSON_INDENT(1)) != 0)
        fprintf(stderr, "cannot write %s\n", json_path);
    json_decref(doc);
    return failed;
}
