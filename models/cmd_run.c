/* cmd_run.c -- `fathom run MODEL [options]`: run a workload for some steps. */
#include "base/cli.h"
#include "models/models_cmds.h"
#include "models/runner.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] = "usage: fathom run MODEL [--mode train|infer] [--preset tiny|small|full] [--steps N]\n"
                                 "                  [--batch B] [--threads N] [--inter M] [--conv-algo A]\n"
                                 "                  [--bind none|close|spread] [--denormals flush|keep]\n"
                                 "                  [--seed S] [--depth D] [--data PATH] [--format text|json]\n\n"
                                 "Runs a workload (see `fathom list`) on its built-in data for N steps and prints\n"
                                 "the mean step time (the first step skipped). With --format json: one JSON\n"
                                 "object describing the run, one per step {step, loss, ms}, then a summary.\n"
                                 "Defaults: train, tiny, 20 steps (12 at small and full), the preset's batch,\n"
                                 "all cores, 1 inter-op worker, convolution algorithm auto (or FATHOM_CONV_ALGO),\n"
                                 "threads not bound to CPUs (--bind close|spread pins each engine thread to one),\n"
                                 "denormal floats flushed to zero on the engine's threads, as TensorFlow's\n"
                                 "(--denormals keep, or FATHOM_DENORMALS=keep: IEEE gradual underflow),\n"
                                 "seed 1, residual depth 50. `fathom tune` recommends --threads, --inter,\n"
                                 "--conv-algo, --bind and --batch for this machine. See fathom-run(1).\n\n"
                                 "--data PATH reads a real-format file instead of the generator:\n";

/* "--opt value" or "--opt=value": returns the value or NULL (after an error) */
static const char *optval(int argc, char **argv, int *i, const char *opt, bool *matched)
{
    size_t n = strlen(opt);
    *matched = false;
    if (strncmp(argv[*i], opt, n) != 0)
        return NULL;
    if (argv[*i][n] == '=') {
        *matched = true;
        return argv[*i] + n + 1;
    }
    if (argv[*i][n] != '\0')
        return NULL;
    *matched = true;
    if (*i + 1 >= argc) {
        cli_usage_error("run", "%s needs a value", opt);
        return NULL;
    }
    return argv[++*i];
}

int cmd_run(int argc, char **argv)
{
    const char *name = NULL;
    model_config cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY, .seed = 1, .inter = 1, .plan = true };
    long steps = 0, threads = 0, v = 0;
    int format = CLI_TEXT;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val;
        bool m;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage_text, stdout);
            model_print_data_formats(stdout);
            return 0;
        }
        if (a[0] != '-') {
            if (name)
                return cli_usage_error("run", "unexpected argument '%s' (one model at a time)", a);
            name = a;
            continue;
        }
#define OPT(o) ((val = optval(argc, argv, &i, o, &m)), m)
        if (OPT("--mode")) {
            if (!val)
                return 2;
            int x = model_mode_from_name(val);
            if (x < 0)
                return cli_usage_error("run", "unknown mode '%s' (use train or infer)", val);
            cfg.mode = (model_mode)x;
        } else if (OPT("--preset")) {
            if (!val)
                return 2;
            int x = model_preset_from_name(val);
            if (x < 0)
                return cli_usage_error("run", "unknown preset '%s' (use tiny, small or full)", val);
            cfg.preset = (model_preset)x;
        } else if (OPT("--steps")) {
            if (!val || cli_parse_run_option("run", CLI_RUN_steps, val, &steps))
                return 2;
        } else if (OPT("--batch")) {
            if (!val || cli_parse_run_option("run", CLI_RUN_batch, val, &v))
                return 2;
            cfg.batch = (int)v;
        } else if (OPT("--threads")) {
            if (!val || cli_parse_run_option("run", CLI_RUN_threads, val, &threads))
                return 2;
        } else if (OPT("--inter")) {
            if (!val || cli_parse_run_option("run", CLI_RUN_inter, val, &v))
                return 2;
            cfg.inter = (int)v;
        } else if (OPT("--conv-algo")) {
            if (!val)
                return 2;
            exec_conv_algo a;
            if (exec_conv_algo_parse(val, &a))
                return cli_usage_error("run", "%s", exec_errmsg());
            cfg.settings.conv_algo = (int)a;
        } else if (OPT("--bind")) {
            if (!val)
                return 2;
            exec_bind b;
            if (exec_bind_parse(val, &b))
                return cli_usage_error("run", "%s", exec_errmsg());
            cfg.settings.bind = (int)b;
        } else if (OPT("--denormals")) {
            if (!val)
                return 2;
            int d = exec_denormals_from_name(val);
            if (d < 0)
                return cli_usage_error("run", "unknown --denormals '%s' (use flush or keep)", val);
            exec_denormals_set(d);
        } else if (OPT("--seed")) {
            if (!val)
                return 2;
            unsigned long long sd;
            if (cli_parse_u64("run", "--seed", val, &sd))
                return 2;
            cfg.seed = sd;
        } else if (OPT("--depth")) {
            if (!val || cli_parse_run_option("run", CLI_RUN_depth, val, &v))
                return 2;
            if (v != 18 && v != 34 && v != 50 && v != 101 && v != 152)
                return cli_usage_error("run", "--depth must be 18, 34, 50, 101 or 152, not %ld", v);
            cfg.depth = (int)v;
        } else if (OPT("--data")) {
            if (!val)
                return 2;
            if (!*val)
                return cli_usage_error("run", "--data wants a path");
            cfg.data_path = val;
        } else if (OPT("--format")) {
            if (!val || (format = cli_parse_format("run", val, 0)) < 0)
                return 2;
        } else {
            return cli_usage_error("run", "unknown option '%s'; see 'fathom run --help'", a);
        }
#undef OPT
    }
    if (!name)
        return cli_usage_error("run", "which model? (see 'fathom list')");
    const model_def *def = model_find(name);
    if (!def)
        return cli_usage_error("run", "unknown model '%s' (see 'fathom list')", name);
    if (cfg.depth && strcmp(def->name, "residual") != 0)
        return cli_usage_error("run", "--depth applies to residual only");
    if (cfg.data_path && !def->data_format)
        return cli_usage_error("run", "%s has no real-format loader: it runs on its built-in generator (drop --data)",
                               def->name);
    model_run_opts o = {
        .steps = steps ? (int)steps : model_default_steps(cfg.preset),
        .threads = (int)threads,
        .format = (cli_format)format,
        .out = stdout,
        .progress = isatty(STDERR_FILENO) ? stderr : NULL,
    };
    /* a recorder watching the steps (fathom record sets it) */
    const char *sf = getenv(MODEL_ENV_STEP_FILE);
    if (sf && *sf)
        o.step_fd = open(sf, O_WRONLY | O_CLOEXEC); /* -1 when it cannot: no progress, no harm */
    model_run_result r;
    exec_status s = model_runner(def, &cfg, &o, &r);
    if (o.step_fd > 0)
        close(o.step_fd);
    if (s)
        return cli_error("run", "%s: %s", def->name, exec_errmsg());
    return 0;
}
