/* bench_replay.c -- replay fidelity on this machine, in one run: for each
 * workload (train, small preset), record it, replay the archive with the
 * same settings, and compare the predicted step time with the recorded one
 * (target: within 5%) and every class's share of op time (target: within
 * 2 percentage points).
 *
 * Two comparisons, because the recording is traced and a plain replay is
 * not:
 *   plain   `fathom replay` as a user runs it: predicted step time (recorded
 *           step with the recorded op time replaced by the replayed one)
 *           against the recorded step time; class shares of op time.
 *   traced  `fathom replay --record`, both traces read by the same analyzer
 *           (`fathom analyze breakdown`): op time per step and class shares,
 *           tracing cost on both sides.
 * First and last recorded steps are left out (warm-up, the last step); the
 * traced replay's warm-up pass too.
 * A workload whose kept steps last less than MIN_KEPT_NS is re-recorded with
 * more steps, and every workload is measured in --rounds rounds (record,
 * replay, traced replay), the table showing the median of each column: the
 * speed of this shared machine drifts by several percent between seconds.
 *   bench_replay [FATHOM_BIN] [--preset P] [--steps N] [--threads T] [--rounds R] [MODEL...]
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIN_KEPT_NS 0.5e9 /* recorded time kept per workload, at least */
#define MAX_STEPS 400

static char *slurp_cmd(const char *cmd)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return NULL;
    size_t cap = 1 << 16, len = 0, n;
    char *buf = malloc(cap);
    while (buf && (n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
        len += n;
        if (cap - len < 4096) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            }
            buf = nb;
        }
    }
    int st = pclose(p);
    if (!buf)
        return NULL;
    buf[len] = 0;
    if (st != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static json_t *run_json(const char *cmd)
{
    char *js = slurp_cmd(cmd);
    json_t *j = js ? json_loads(js, 0, NULL) : NULL;
    free(js);
    return j;
}

/* Max |share difference| in percentage points between two class arrays
 * ({"class","ns"|"recorded_ns"|"replayed_ns"}) over their totals. */
static double max_dshare(json_t *a, const char *ka, double ta, json_t *b, const char *kb, double tb)
{
    double m = 0;
    size_t i, j;
    json_t *x, *y;
    json_array_foreach(a, i, x)
    {
        const char *c = json_string_value(json_object_get(x, "class"));
        double sa = json_number_value(json_object_get(x, ka)) / ta, sb = 0;
        json_array_foreach(b, j, y) if (c && strcmp(c, json_string_value(json_object_get(y, "class"))) == 0) sb =
            json_number_value(json_object_get(y, kb)) / tb;
        m = fmax(m, fabs(sa - sb) * 100);
    }
    json_array_foreach(b, j, y)
    { /* classes only the second has */
        const char *c = json_string_value(json_object_get(y, "class"));
        int found = 0;
        json_array_foreach(a, i, x) found |= c && strcmp(c, json_string_value(json_object_get(x, "class"))) == 0;
        if (!found)
            m = fmax(m, json_number_value(json_object_get(y, kb)) / tb * 100);
    }
    return m;
}

typedef struct round_result {
    double rec, ratio1, d1; /* plain: recorded step (ns), predicted / recorded, max share difference (pp) */
    double na, ratio2, d2;  /* traced: recorded op time per step (ns), replayed / recorded, share difference */
    int traced;             /* the traced half was measured */
    int steps;              /* steps recorded */
} round_result;

/* Last line of a file, for an error message. */
static void last_line(const char *path, char *line, size_t n)
{
    *line = 0;
    FILE *f = fopen(path, "r");
    while (f && fgets(line, (int)n, f))
        ;
    if (f)
        fclose(f);
    line[strcspn(line, "\n")] = 0;
}

/* One round for one workload: record, replay (plain), replay --record, and
 * both traces through `analyze breakdown`.  0 on success, else the message. */
static int one_round(const char *bin, const char *model, const char *preset, int steps, const char *thr,
                     const char *dir, round_result *r, char *why, size_t whylen)
{
    char cmd[4096], out[1024], rep[1024], log[1100];
    snprintf(out, sizeof out, "%s/%s.tar.zst", dir, model);
    snprintf(rep, sizeof rep, "%s/%s-replay.tar.zst", dir, model);
    snprintf(log, sizeof log, "%s/record.log", dir);
    memset(r, 0, sizeof *r);
    int rc = -1;
    json_t *j = NULL, *a = NULL, *b = NULL;
    /* A short step is re-recorded with more steps, so that each side
     * measures at least MIN_KEPT_NS. */
    int msteps = steps;
    for (int attempt = 0; attempt < 2; attempt++) {
        snprintf(cmd, sizeof cmd, "%s record %s --preset %s --steps %d %s -o %s >%s 2>&1", bin, model, preset, msteps,
                 thr, out, log);
        if (system(cmd) != 0)
            break;
        snprintf(cmd, sizeof cmd, "%s replay %s --skip-first 1 --skip-last 1 %s --format json 2>/dev/null", bin, out,
                 thr);
        json_decref(j);
        j = run_json(cmd);
        double step_ns = j ? json_number_value(json_object_get(j, "recorded_step_ns")) : 0;
        if (attempt || !j || step_ns <= 0 || step_ns * (msteps - 2) >= MIN_KEPT_NS || msteps >= MAX_STEPS)
            break;
        int want = (int)ceil(MIN_KEPT_NS / step_ns) + 2;
        msteps = want > MAX_STEPS ? MAX_STEPS : want;
        unlink(out);
    }
    if (access(out, R_OK) != 0) {
        char line[512];
        last_line(log, line, sizeof line);
        snprintf(why, whylen, "record failed: %s", *line ? line : "(no message)");
        goto end;
    }
    if (!j) {
        snprintf(why, whylen, "replay failed");
        goto end;
    }
    r->steps = msteps;
    r->rec = json_number_value(json_object_get(j, "recorded_step_ns"));
    r->ratio1 = json_number_value(json_object_get(j, "predicted_step_ns")) / r->rec;
    double rec_op = json_number_value(json_object_get(j, "recorded_op_ns"));
    double rep_op = json_number_value(json_object_get(j, "replayed_op_ns"));
    r->d1 = max_dshare(json_object_get(j, "classes"), "recorded_ns", rec_op, json_object_get(j, "classes"),
                       "replayed_ns", rep_op);
    rc = 0;
    /* traced: one warm-up pass and one timed pass of the kept steps, then both traces analyzed alike */
    snprintf(cmd, sizeof cmd,
             "%s replay %s --skip-first 1 --skip-last 1 %s --warmup 1 --iterations 1 --record -o %s >/dev/null 2>&1",
             bin, out, thr, rep);
    if (system(cmd) != 0)
        goto end;
    snprintf(cmd, sizeof cmd, "%s analyze breakdown --format json --skip-first 1 --skip-last 1 %s 2>/dev/null", bin,
             out);
    a = run_json(cmd);
    snprintf(cmd, sizeof cmd, "%s analyze breakdown --format json --skip-first %d %s 2>/dev/null", bin, msteps - 2,
             rep);
    b = run_json(cmd);
    json_t *ta = a ? json_array_get(json_object_get(a, "traces"), 0) : NULL;
    json_t *tb = b ? json_array_get(json_object_get(b, "traces"), 0) : NULL;
    if (ta && tb) {
        double sa = (double)json_integer_value(json_object_get(ta, "steps"));
        double sb = (double)json_integer_value(json_object_get(tb, "steps"));
        r->na = json_number_value(json_object_get(ta, "total_ns")) / sa;
        double nb = json_number_value(json_object_get(tb, "total_ns")) / sb;
        r->ratio2 = nb / r->na;
        r->d2 =
            max_dshare(json_object_get(ta, "classes"), "ns", r->na * sa, json_object_get(tb, "classes"), "ns", nb * sb);
        r->traced = 1;
    }
end:
    json_decref(j), json_decref(a), json_decref(b);
    unlink(out), unlink(rep), unlink(log);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of field `off` over n results (those with `traced` set if only_traced). */
static double median_of(const round_result *r, int n, size_t off, int only_traced)
{
    double v[64];
    int k = 0;
    for (int i = 0; i < n && k < 64; i++)
        if (!only_traced || r[i].traced)
            v[k++] = *(const double *)((const char *)&r[i] + off);
    if (!k)
        return NAN;
    qsort(v, (size_t)k, sizeof *v, cmp_double);
    return k & 1 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

int main(int argc, char **argv)
{
    const char *bin = argc > 1 && argv[1][0] != '-' ? argv[1] : FATHOM_BIN;
    const char *preset = "small";
    int steps = 8, threads = 0, rounds = 3, first_model = argc > 1 && argv[1][0] != '-' ? 2 : 1;
    const char *models[16];
    int nmodels = 0;
    for (int i = first_model; i < argc; i++) {
        if (strcmp(argv[i], "--preset") == 0 && i + 1 < argc)
            preset = argv[++i];
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
        else if (argv[i][0] == '-') {
            fprintf(stderr, "bench_replay: unknown option %s\n", argv[i]);
            return 2;
        } else if (nmodels < 16)
            models[nmodels++] = argv[i];
    }
    if (steps < 3) {
        fprintf(stderr, "bench_replay: --steps must be at least 3 (first and last are left out)\n");
        return 2;
    }
    if (rounds < 1 || rounds > 64) {
        fprintf(stderr, "bench_replay: --rounds must be 1 to 64\n");
        return 2;
    }
    if (!nmodels) {
        static const char *const all[] = { "seq2seq",  "memnet", "speech",  "autoenc",
                                           "residual", "vgg",    "alexnet", "deepq" };
        for (int i = 0; i < 8; i++)
            models[nmodels++] = all[i];
    }
    char dir[] = "/tmp/fathom-bench-replay-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    char thr[32] = "";
    if (threads > 0)
        snprintf(thr, sizeof thr, "--threads %d", threads);
    printf("replay fidelity: %s preset, train, %d steps or more (first and last left out; at least %.1f s kept per "
           "side), %s, same machine, same settings; median of %d rounds\n",
           preset, steps, MIN_KEPT_NS / 1e9, threads > 0 ? thr : "all cores", rounds);
    printf("%-9s | %9s %9s %6s %7s | %9s %9s %6s %7s | %s\n", "", "plain:", "", "", "", "traced:", "", "", "", "");
    printf("%-9s | %9s %9s %6s %7s | %9s %9s %6s %7s | %s\n", "workload", "rec step", "predicted", "ratio", "max dsh",
           "rec op", "replay op", "ratio", "max dsh", "verdict (plain, traced)");
    printf("%-9s | %9s %9s %6s %7s | %9s %9s %6s %7s |\n", "", "ms", "ms", "", "pp", "ms", "ms", "", "pp");
    int bad_plain = 0, bad_traced = 0, done = 0;
    for (int m = 0; m < nmodels; m++) {
        round_result res[64];
        int n = 0;
        char why[640] = "";
        for (int k = 0; k < rounds; k++)
            if (one_round(bin, models[m], preset, steps, thr, dir, &res[n], why, sizeof why) == 0)
                n++;
        if (!n) {
            printf("%-9s %s\n", models[m], why);
            bad_plain++, bad_traced++;
            continue;
        }
        /* medians of the ratios, not ratios of medians */
        double rec = median_of(res, n, offsetof(round_result, rec), 0);
        double ratio1 = median_of(res, n, offsetof(round_result, ratio1), 0);
        double d1 = median_of(res, n, offsetof(round_result, d1), 0);
        double na = median_of(res, n, offsetof(round_result, na), 1);
        double ratio2 = median_of(res, n, offsetof(round_result, ratio2), 1);
        double d2 = median_of(res, n, offsetof(round_result, d2), 1);
        int ok1 = fabs(ratio1 - 1) <= 0.05 && d1 <= 2.0;
        int ok2 = !isnan(ratio2) && fabs(ratio2 - 1) <= 0.05 && d2 <= 2.0;
        bad_plain += !ok1;
        bad_traced += !ok2;
        done++;
        char traced[128] = "   (traced replay failed)          ";
        if (!isnan(ratio2))
            snprintf(traced, sizeof traced, "%9.2f %9.2f %6.3f %7.2f", na / 1e6, na * ratio2 / 1e6, ratio2, d2);
        printf("%-9s | %9.2f %9.2f %6.3f %7.2f | %s | %s, %s  (%d steps, %d rounds)\n", models[m], rec / 1e6,
               rec * ratio1 / 1e6, ratio1, d1, traced, ok1 ? "ok" : "MISSED", ok2 ? "ok" : "MISSED", res[0].steps, n);
        fflush(stdout);
    }
    rmdir(dir);
    printf("within the targets (5%% step/op time, 2pp class shares): plain %d of %d, traced %d of %d\n",
           nmodels - bad_plain, nmodels, nmodels - bad_traced, nmodels);
    return done ? 0 : 1;
}
