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
 *   bench_replay [FATHOM_BIN] [--preset P] [--steps N] [--threads T] [MODEL...]
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    json_array_foreach(a, i, x) {
        const char *c = json_string_value(json_object_get(x, "class"));
        double sa = json_number_value(json_object_get(x, ka)) / ta, sb = 0;
        json_array_foreach(b, j, y) if (c && strcmp(c, json_string_value(json_object_get(y, "class"))) == 0) sb =
            json_number_value(json_object_get(y, kb)) / tb;
        m = fmax(m, fabs(sa - sb) * 100);
    }
    json_array_foreach(b, j, y) { /* classes only the second has */
        const char *c = json_string_value(json_object_get(y, "class"));
        int found = 0;
        json_array_foreach(a, i, x) found |= c && strcmp(c, json_string_value(json_object_get(x, "class"))) == 0;
        if (!found)
            m = fmax(m, json_number_value(json_object_get(y, kb)) / tb * 100);
    }
    return m;
}

int main(int argc, char **argv)
{
    const char *bin = argc > 1 && argv[1][0] != '-' ? argv[1] : FATHOM_BIN;
    const char *preset = "small";
    int steps = 8, threads = 0, first_model = argc > 1 && argv[1][0] != '-' ? 2 : 1;
    const char *models[16];
    int nmodels = 0;
    for (int i = first_model; i < argc; i++) {
        if (strcmp(argv[i], "--preset") == 0 && i + 1 < argc)
            preset = argv[++i];
        else if (strcmp(argv[i], "--steps") == 0 && i + 1 < argc)
            steps = atoi(argv[++i]);
        else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc)
            threads = atoi(argv[++i]);
        else if (nmodels < 16)
            models[nmodels++] = argv[i];
    }
    if (steps < 3) {
        fprintf(stderr, "bench_replay: --steps must be at least 3 (first and last are left out)\n");
        return 2;
    }
    if (!nmodels) {
        static const char *const all[] = { "seq2seq", "memnet", "speech", "autoenc", "residual", "vgg", "alexnet", "deepq" };
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
    int kept = steps - 2;
    printf("replay fidelity: %s preset, train, %d steps (first and last left out), %s, same machine, same settings\n",
           preset, steps, threads > 0 ? thr : "all cores");
    printf("%-9s | %9s %9s %6s %7s | %9s %9s %6s %7s | %s\n", "", "plain:", "", "", "", "traced:", "", "", "", "");
    printf("%-9s | %9s %9s %6s %7s | %9s %9s %6s %7s | %s\n", "workload", "rec step", "predicted", "ratio", "max dsh",
           "rec op", "replay op", "ratio", "max dsh", "verdict (plain, traced)");
    printf("%-9s | %9s %9s %6s %7s | %9s %9s %6s %7s |\n", "", "ms", "ms", "", "pp", "ms", "ms", "", "pp");
    int bad_plain = 0, bad_traced = 0, done = 0;
    for (int m = 0; m < nmodels; m++) {
        char cmd[4096], out[1024], rep[1024];
        snprintf(out, sizeof out, "%s/%s.tar.zst", dir, models[m]);
        snprintf(rep, sizeof rep, "%s/%s-replay.tar.zst", dir, models[m]);
        snprintf(cmd, sizeof cmd, "%s record %s --preset %s --steps %d %s -o %s >/dev/null 2>&1", bin, models[m], preset,
                 steps, thr, out);
        if (system(cmd) != 0) {
            printf("%-9s record failed\n", models[m]);
            bad_plain++, bad_traced++;
            continue;
        }
        /* plain */
        snprintf(cmd, sizeof cmd, "%s replay %s --skip-first 1 --skip-last 1 %s --format json 2>/dev/null", bin, out, thr);
        json_t *j = run_json(cmd);
        /* traced: one warm-up pass and one timed pass of the kept steps, then both traces analyzed alike */
        snprintf(cmd, sizeof cmd,
                 "%s replay %s --skip-first 1 --skip-last 1 %s --warmup 1 --iterations 1 --record -o %s >/dev/null 2>&1",
                 bin, out, thr, rep);
        json_t *a = NULL, *b = NULL;
        if (system(cmd) == 0) {
            snprintf(cmd, sizeof cmd, "%s analyze breakdown --format json --skip-first 1 --skip-last 1 %s 2>/dev/null", bin,
                     out);
            a = run_json(cmd);
            snprintf(cmd, sizeof cmd, "%s analyze breakdown --format json --skip-first %d %s 2>/dev/null", bin, kept, rep);
            b = run_json(cmd);
        }
        if (!j) {
            printf("%-9s replay failed\n", models[m]);
            bad_plain++, bad_traced++;
            json_decref(a), json_decref(b);
            unlink(out), unlink(rep);
            continue;
        }
        double rec = json_number_value(json_object_get(j, "recorded_step_ns"));
        double pred = json_number_value(json_object_get(j, "predicted_step_ns"));
        double rec_op = json_number_value(json_object_get(j, "recorded_op_ns"));
        double rep_op = json_number_value(json_object_get(j, "replayed_op_ns"));
        double d1 = max_dshare(json_object_get(j, "classes"), "recorded_ns", rec_op, json_object_get(j, "classes"),
                               "replayed_ns", rep_op);
        int ok1 = fabs(pred / rec - 1) <= 0.05 && d1 <= 2.0;
        bad_plain += !ok1;
        json_t *ta = a ? json_array_get(json_object_get(a, "traces"), 0) : NULL;
        json_t *tb = b ? json_array_get(json_object_get(b, "traces"), 0) : NULL;
        char traced[128] = "   (traced replay failed)";
        int ok2 = 0;
        if (ta && tb) {
            double na = json_number_value(json_object_get(ta, "total_ns")) / json_integer_value(json_object_get(ta, "steps"));
            double nb = json_number_value(json_object_get(tb, "total_ns")) / json_integer_value(json_object_get(tb, "steps"));
            double d2 = max_dshare(json_object_get(ta, "classes"), "ns", na * json_integer_value(json_object_get(ta, "steps")),
                                   json_object_get(tb, "classes"), "ns",
                                   nb * json_integer_value(json_object_get(tb, "steps")));
            ok2 = fabs(nb / na - 1) <= 0.05 && d2 <= 2.0;
            snprintf(traced, sizeof traced, "%9.2f %9.2f %6.3f %6.2f", na / 1e6, nb / 1e6, nb / na, d2);
        }
        bad_traced += !ok2;
        done++;
        printf("%-9s | %9.2f %9.2f %6.3f %6.2f | %s | %s, %s\n", models[m], rec / 1e6, pred / 1e6, pred / rec, d1, traced,
               ok1 ? "ok" : "MISSED", ok2 ? "ok" : "MISSED");
        fflush(stdout);
        json_decref(j), json_decref(a), json_decref(b);
        unlink(out), unlink(rep);
    }
    rmdir(dir);
    printf("within the targets (5%% step/op time, 2pp class shares): plain %d of %d, traced %d of %d\n",
           nmodels - bad_plain, nmodels, nmodels - bad_traced, nmodels);
    return done ? 0 : 1;
}
