/* bench_replay.c -- replay fidelity on this machine, in one run: for each
 * workload (train, small preset), record it, replay the archive with the
 * same settings, and compare the predicted step time with the recorded one
 * (target: within 5%) and every class's share of op time (target: within
 * 2 percentage points).
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
    printf("replay fidelity: %s preset, %d steps (first and last skipped), same machine, same settings\n", preset, steps);
    printf("%-10s %12s %12s %8s %10s %8s\n", "workload", "recorded ms", "predicted ms", "ratio", "max dshare", "verdict");
    int bad = 0;
    for (int m = 0; m < nmodels; m++) {
        char cmd[2048], out[1024];
        snprintf(out, sizeof out, "%s/%s.tar.zst", dir, models[m]);
        snprintf(cmd, sizeof cmd, "%s record %s --preset %s --steps %d %s -o %s >/dev/null 2>&1", bin, models[m], preset,
                 steps, thr, out);
        if (system(cmd) != 0) {
            printf("%-10s record failed\n", models[m]);
            bad++;
            continue;
        }
        snprintf(cmd, sizeof cmd, "%s replay %s --skip-first 1 --skip-last 1 %s --format json 2>/dev/null", bin, out, thr);
        char *js = slurp_cmd(cmd);
        json_t *j = js ? json_loads(js, 0, NULL) : NULL;
        free(js);
        if (!j) {
            printf("%-10s replay failed\n", models[m]);
            bad++;
            unlink(out);
            continue;
        }
        double rec = json_number_value(json_object_get(j, "recorded_step_ns"));
        double pred = json_number_value(json_object_get(j, "predicted_step_ns"));
        double rec_op = json_number_value(json_object_get(j, "recorded_op_ns"));
        double rep_op = json_number_value(json_object_get(j, "replayed_op_ns"));
        double maxd = 0;
        json_t *cls = json_object_get(j, "classes"), *c;
        size_t i;
        json_array_foreach(cls, i, c) {
            double a = json_number_value(json_object_get(c, "recorded_ns")) / rec_op;
            double b = json_number_value(json_object_get(c, "replayed_ns")) / rep_op;
            maxd = fmax(maxd, fabs(a - b) * 100);
        }
        int ok = fabs(pred / rec - 1) <= 0.05 && maxd <= 2.0;
        bad += !ok;
        printf("%-10s %12.2f %12.2f %8.3f %9.2fpp %8s\n", models[m], rec / 1e6, pred / 1e6, pred / rec, maxd,
               ok ? "ok" : "MISSED");
        json_decref(j);
        unlink(out);
    }
    rmdir(dir);
    printf("%d of %d workloads within the targets (5%% step time, 2pp class shares)\n", nmodels - bad, nmodels);
    return 0;
}
