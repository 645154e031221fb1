/* cmd_tune.c -- `fathom tune MODEL [run options] | TRACE`: faster engine
 * settings for this machine, measured (replay/tune.h; fathom-tune(1)).
 * A MODEL target builds the workload (models/) once per candidate; a TRACE
 * target replays the program rebuilt from it, every candidate running the
 * one graph with its own settings. Compiled into the driver, which sees
 * models/ and replay/ both. */
#include "analyze/roofline.h"
#include "base/alloc.h"
#include "base/cli.h"
#include "base/clock.h"
#include "base/error.h"
#include "models/model.h"
#include "replay/load.h"
#include "replay/tune.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: fathom tune MODEL [--mode train|infer] [--preset tiny|small|full] [--batch B]\n"
    "                         [--batches B1,B2,...] [--depth D] [--seed S] [options]\n"
    "       fathom tune TRACE [--skip-first N] [--skip-last N] [--steps K (default 1)] [options]\n"
    "options: [--budget SECONDS] [--sweep | --compare SETTINGS...] [--rounds N] [--peak FILE]\n"
    "         [--format text|json]\n\n"
    "Finds faster engine settings for this machine and checks them by measured runs:\n"
    "measures the op time at each intra-op thread count, the data flow's average\n"
    "parallelism and the dominant op types against this machine's ridge point;\n"
    "proposes inter-op workers, intra-op threads, the convolution algorithm, thread\n"
    "binding (and the batch, given --batches) with one line each saying why;\n"
    "measures the best few beside fathom's defaults and the vendors' settings\n"
    "(intra-op = physical cores, inter-op = sockets) in alternating rounds; prints\n"
    "the recommendation as flags of `fathom run`, with the step times and speedups\n"
    "of that same run, and where its own time went.\n\n"
    "  --budget SECONDS   wall-clock time to spend, all of it (default 60); the\n"
    "                     defaults' first steps run whatever it is, and what\n"
    "                     is predicted to overrun it is left out\n"
    "  --batches LIST     batch sizes to measure as throughput (a MODEL)\n"
    "  --sweep            measure every point of the knob space instead (the\n"
    "                     exhaustive baseline; ignores --budget), --rounds each\n"
    "                     (default 5)\n"
    "  --compare SETTINGS measure these settings instead, flags of `fathom run`\n"
    "                     as one argument ('--threads 1 --bind close'; the rest\n"
    "                     the defaults'), beside the defaults and the vendors'\n"
    "                     settings: repeat it for each point (up to 16), --rounds\n"
    "                     each (default 5), alternating, no race, no budget\n"
    "  --peak FILE        this machine's ceilings, from 'fathom peak --format json'\n"
    "                     run here: the ridge without measuring it (else a short\n"
    "                     sgemm and a read stream over the workload's tensors,\n"
    "                     where a dominant op type's bound depends on it)\n"
    "  --format json      one JSON object\n\n"
    "Progress goes to stderr when it is a terminal. See fathom-tune(1).\n";

/* ---- a MODEL target ----------------------------------------------------------- */
typedef struct model_target {
    const model_def *def;
    model_config cfg;
} model_target;

static exec_status model_open(void *ctx, const replay_tune_knobs *k, const exec_hooks *hooks, void **out)
{
    model_target *mt = ctx;
    model_config cfg = mt->cfg;
    cfg.batch = k->batch;
    cfg.inter = k->inter;
    cfg.settings = (exec_settings){ .threads = k->threads, .conv_algo = k->conv_algo, .bind = k->bind, .hooks = hooks };
    model *m = NULL;
    exec_status s = model_create(mt->def, &cfg, &m);
    if (!s)
        *out = m;
    return s;
}

static exec_status model_retune(void *inst, const replay_tune_knobs *k, const exec_hooks *hooks)
{
    exec_settings set = { .threads = k->threads, .conv_algo = k->conv_algo, .bind = k->bind, .hooks = hooks };
    model_settings_set(inst, &set, k->inter);
    return EXEC_OK;
}

static exec_status model_tstep(void *inst, uint64_t *ns)
{
    float loss;
    uint64_t t0 = base_now_ns();
    exec_status s = model_step(inst, &loss);
    *ns = base_now_ns() - t0;
    return s;
}

static void model_close(void *inst) { model_destroy(inst); }

static const exec_graph *model_tgraph(void *inst) { return ((const model *)inst)->g; }

/* The recommendation's command up to its flags: "fathom run MODEL ..." or
 * "fathom replay TRACE", the trace's path quoted for the shell. */
#define TUNE_PREFIX_MAX (4 * PATH_MAX + 64)

/* s as one shell word: as it is where it holds no character the shell
 * reads, else in single quotes ('\'' for a quote); into buf. */
static const char *shell_quote(const char *s, char *buf, size_t len)
{
    if (s[0] && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-=:,@%") == strlen(s)) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    size_t n = 0;
    if (len < 3)
        return "''";
    buf[n++] = '\'';
    for (; *s && n + 5 < len; s++) {
        if (*s == '\'') {
            memcpy(buf + n, "'\\''", 4);
            n += 4;
        } else {
            buf[n++] = *s;
        }
    }
    buf[n++] = '\'';
    buf[n] = 0;
    return buf;
}

/* ---- output ------------------------------------------------------------------------ */
static double speedup(const replay_tune_result *r, int over)
{
    return r->c[r->best].per_sample_ns > 0 ? r->c[over].per_sample_ns / r->c[r->best].per_sample_ns : 0;
}

static void print_text(const replay_tune_result *r, const replay_tune_target *t, const char *run_prefix, int with_batch)
{
    printf("fathom tune: %s, batch %d, on %s (%d cores: %d physical, %d socket%s", t->what, t->batch, exec_cpu_model(),
           r->cores, r->physical, r->sockets, r->sockets == 1 ? "" : "s");
    if (r->cores < exec_cores()) /* under a quota: r->cores of exec_cores() CPUs' time */
        printf("; a CPU quota of %.2f of the %d CPUs", exec_cpu_quota(), exec_cores());
    printf(")\n");
    printf(
        "\nmeasured:\n  average parallelism %.2f (per step at %d thread%s: op time %.2f ms, critical path %.2f ms)\n",
        r->parallelism, r->flow_threads, r->flow_threads == 1 ? "" : "s", r->op_ns / 1e6, r->critical_ns / 1e6);
    printf("  op time per step by intra-op threads:");
    for (int i = 0; i < r->nlevels; i++) {
        printf("%s %d: %.2f ms", i ? "," : "", r->level_threads[i], r->level_op_ns[i] / 1e6);
        if (r->level_steps[i] > 1)
            printf(" (mean of %d steps)", r->level_steps[i]);
    }
    char ceil_text[160];
    if (replay_tune_ceilings_text(r, ceil_text, sizeof ceil_text))
        printf("\n  convolutions: %.1f%% of op time; ceilings: %s (ridge %.1f FLOP/byte)\n", 100 * r->conv_share,
               ceil_text, r->ridge);
    else
        printf("\n  convolutions: %.1f%% of op time; ceilings not measured (%s)\n", 100 * r->conv_share,
               strcmp(r->mode, "tune") != 0 ? "a sweep or --compare measures none; --peak gives them"
                                            : "no dominant op type near a CPU's ridge");
    printf("  preemptions while profiling: %.0f a second; bindings that take effect here:", r->preempt_per_s);
    for (int i = 0; i < r->nbinds; i++)
        printf(" %s", exec_bind_name((exec_bind)r->binds[i]));
    putchar('\n');
    for (int i = 0; i < r->ntop; i++) {
        printf("  %-28s %5.1f%% of op time, %7.2f FLOP/byte (%s)", r->top[i].op, 100 * r->top[i].share,
               r->top[i].intensity, replay_tune_bound_name(r->top[i].bound));
        if (r->top[i].speedup > 0)
            printf(", %.3gx from 1 thread to %d", r->top[i].speedup, r->cores);
        putchar('\n');
    }
    printf("\nproposed:\n");
    for (int i = 0; i < r->nlines; i++)
        printf("  %s\n", r->lines[i]);
    printf("\nmeasured runs: %d candidate%s, %d round%s alternating (a sample: steps enough for %.0f ms", r->n,
           r->n == 1 ? "" : "s", r->rounds, r->rounds == 1 ? "" : "s", REPLAY_TUNE_SAMPLE_MS);
    if (r->settle_ms > 0)
        printf(", after untimed steps of its point: %.0f ms of them after other threads ran, else one", r->settle_ms);
    int profiled = 0;
    for (int i = 0; i < r->n; i++)
        profiled += r->c[i].profiled;
    if (profiled > 0)
        printf("; the first sample of %d point%s: %s profiled steps", profiled, profiled == 1 ? "" : "s",
               profiled == 1 ? "its" : "their");
    printf("), median step time\n");
    printf("  time: %.2f s in all: profiling %.2f s, ceilings %.2f s, starting candidates %.2f s, alternating runs "
           "%.2f s\n",
           r->wall_s, r->profile_s, r->ceilings_s, r->start_s, r->measure_s);
    int width = (int)strlen("settings"); /* the settings column: its widest flags */
    for (int i = 0; i < r->n; i++) {
        char flags[160];
        replay_tune_flags(&r->c[i].k, with_batch, flags, sizeof flags);
        if ((int)strlen(flags) > width)
            width = (int)strlen(flags);
    }
    printf("  %-20s %-*s %10s %12s %8s\n", "", width, "settings", "step ms", "samples/s", "vs best");
    for (int i = 0; i < r->n; i++) {
        char flags[160];
        replay_tune_flags(&r->c[i].k, with_batch, flags, sizeof flags);
        printf("  %-20s %-*s %10.2f %12.1f %8.3f%s\n", r->c[i].role, width, flags, r->c[i].median_ns / 1e6,
               r->c[i].per_sample_ns > 0 ? 1e9 / r->c[i].per_sample_ns : 0,
               r->c[r->best].per_sample_ns > 0 ? r->c[i].per_sample_ns / r->c[r->best].per_sample_ns : 0,
               i == r->best ? "  <- recommended" : "");
    }
    if (r->budget_s > 0 && r->wall_s > r->budget_s)
        printf("  over the %.0f s budget by %.1f s: a step runs to its end (%.2f s at the defaults)%s\n", r->budget_s,
               r->wall_s - r->budget_s, r->default_step_ns / 1e9,
               r->profile_s > r->budget_s ? ", and the profile at the defaults (the build, a warm-up step and a "
                                            "profiled one, which every tuning needs) took it past the budget"
                                          : "");
    char flags[160];
    replay_tune_flags(&r->c[r->best].k, with_batch, flags, sizeof flags);
    printf("\nrecommendation: %s %s\n", run_prefix, flags);
    printf("  step %.2f ms: %.2fx over fathom's defaults (%.2f ms), %.2fx over the vendors' settings (%.2f ms)%s\n",
           r->c[r->best].median_ns / 1e6, speedup(r, r->defaults), r->c[r->defaults].median_ns / 1e6,
           speedup(r, r->vendors), r->c[r->vendors].median_ns / 1e6,
           with_batch && r->c[r->best].k.batch != r->c[r->defaults].k.batch ? " (per sample)" : "");
}

static json_t *knobs_json(const replay_tune_knobs *k)
{
    return json_pack("{s:i, s:i, s:s, s:s, s:i}", "threads", k->threads, "inter", k->inter, "conv_algo",
                     exec_conv_algo_name(k->conv_algo), "bind", exec_bind_name(k->bind), "batch", k->batch);
}

static int print_json(const replay_tune_result *r, const replay_tune_target *t, const char *run_prefix, int with_batch)
{
    json_t *cands = json_array(), *lines = json_array(), *levels = json_array(), *top = json_array();
    for (int i = 0; i < r->n; i++) {
        char flags[160];
        replay_tune_flags(&r->c[i].k, with_batch, flags, sizeof flags);
        json_t *samples = json_array(); /* in the order of the rounds */
        for (int k = 0; r->samples && k < r->c[i].rounds && k < REPLAY_TUNE_SAMPLES_MAX; k++)
            json_array_append_new(samples, json_real(r->samples[(size_t)i * REPLAY_TUNE_SAMPLES_MAX + k] / 1e6));
        json_array_append_new(
            cands, json_pack("{s:s, s:o, s:s, s:f, s:f, s:f, s:o, s:f, s:f, s:i, s:i, s:b}", "role", r->c[i].role,
                             "knobs", knobs_json(&r->c[i].k), "flags", flags, "step_ms", r->c[i].median_ns / 1e6,
                             "min_ms", r->c[i].min_ns / 1e6, "max_ms", r->c[i].max_ns / 1e6, "samples_ms", samples,
                             "predicted_ms", r->c[i].predicted_ns / 1e6, "samples_per_s",
                             r->c[i].per_sample_ns > 0 ? 1e9 / r->c[i].per_sample_ns : 0.0, "rounds", r->c[i].rounds,
                             "steps", r->c[i].steps, "profiled_sample", r->c[i].profiled));
    }
    for (int i = 0; i < r->nlines; i++)
        json_array_append_new(lines, json_string(r->lines[i]));
    json_t *binds = json_array();
    for (int i = 0; i < r->nbinds; i++)
        json_array_append_new(binds, json_string(exec_bind_name((exec_bind)r->binds[i])));
    for (int i = 0; i < r->nlevels; i++)
        json_array_append_new(levels, json_pack("{s:i, s:f, s:i}", "threads", r->level_threads[i], "op_ms",
                                                r->level_op_ns[i] / 1e6, "steps", r->level_steps[i]));
    for (int i = 0; i < r->ntop; i++)
        json_array_append_new(top, json_pack("{s:s, s:f, s:f, s:s, s:f}", "op", r->top[i].op, "share", r->top[i].share,
                                             "intensity", r->top[i].intensity, "bound",
                                             replay_tune_bound_key(r->top[i].bound), "speedup", r->top[i].speedup));
    char flags[160];
    replay_tune_flags(&r->c[r->best].k, with_batch, flags, sizeof flags);
    char cmd[TUNE_PREFIX_MAX + 200];
    snprintf(cmd, sizeof cmd, "%s %s", run_prefix, flags);
    json_t *root = json_pack(
        "{s:i, s:s, s:s, s:i, s:{s:s, s:i, s:i, s:i, s:f, s:o}, s:{s:f, s:i, s:f, s:f, s:o, s:f, s:f, s:f, s:f, s:f, s:o}, s:o, s:o,"
        " s:i, s:f, s:f, s:{s:s, s:s, s:o, s:f, s:f, s:f, s:f, s:f}, s:f, s:f, s:f, s:f, s:{s:f, s:f, s:f, s:f}}",
        "schema", 1, "mode", r->mode, "target", t->what, "batch", t->batch, "machine", "cpu", exec_cpu_model(), "cores",
        r->cores, "physical_cores", r->physical, "sockets", r->sockets, "cpu_quota", exec_cpu_quota(), "binds", binds,
        "measured", "parallelism", r->parallelism, "flow_threads", r->flow_threads, "op_ms", r->op_ns / 1e6,
        "critical_ms", r->critical_ns / 1e6, "levels", levels, "conv_share", r->conv_share, "peak_gflops",
        r->peak_gflops, "peak_gbs", r->peak_gbs, "ridge", r->ridge, "preempt_per_s", r->preempt_per_s, "top", top,
        "proposals", lines, "candidates", cands, "rounds", r->rounds, "sample_ms", REPLAY_TUNE_SAMPLE_MS, "settle_ms",
        r->settle_ms, "recommendation", "flags", flags, "command", cmd, "knobs", knobs_json(&r->c[r->best].k),
        "step_ms", r->c[r->best].median_ns / 1e6, "defaults_ms", r->c[r->defaults].median_ns / 1e6, "vendors_ms",
        r->c[r->vendors].median_ns / 1e6, "speedup_defaults", speedup(r, r->defaults), "speedup_vendors",
        speedup(r, r->vendors), "measure_s", r->measure_s, "wall_s", r->wall_s, "budget_s", r->budget_s,
        "default_step_ms", r->default_step_ns / 1e6, "phases", "profile_s", r->profile_s, "ceilings_s", r->ceilings_s,
        "start_s", r->start_s, "measure_s", r->measure_s);
    if (!root)
        return -1;
    json_t *measured = json_object_get(root, "measured");
    json_object_set_new(measured, "ceilings",
                        json_string(r->ceilings_given ? "given"
                                    : r->ridge > 0    ? "measured"
                                                      : "not measured"));
    json_object_set_new(measured, "stream_mib", json_real(r->stream_mb));
    int rc = json_dumpf(root, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    putchar('\n');
    return rc;
}

/* "8,16,32" -> batches; -1 after an error. */
static int parse_batches(const char *arg, int *out, int max)
{
    int n = 0;
    const char *p = arg;
    while (*p) {
        char num[24];
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof num || n == max)
            return cli_usage_error("tune", "--batches wants up to %d batch sizes like 8,16,32, not '%s'", max, arg), -1;
        memcpy(num, p, len);
        num[len] = 0;
        long v;
        if (cli_parse_int("tune", "--batches", num, cli_run_options[CLI_RUN_batch].lo,
                          cli_run_options[CLI_RUN_batch].hi, &v))
            return -1;
        out[n++] = (int)v;
        p += len;
        if (*p == ',' && !*++p)
            return cli_usage_error("tune", "--batches ends with a comma: '%s'", arg), -1;
    }
    return n;
}

/* What `fathom tune` was asked. */
typedef struct tune_args {
    const char *name; /* a model or a trace */
    model_config cfg;
    long budget, rounds, skip_first, skip_last, steps;
    int fmt, sweep, nbatches, npoints;
    int batches[16];
    int model_opts, trace_opts; /* 1: an option of a model's, of a trace's given */
    const char *peak_file;
    replay_tune_knobs points[REPLAY_TUNE_MAX_POINTS];
} tune_args;

/* The options and the operand of argv into a.  -1 to go on; otherwise the
 * exit status: 0 after the help, 2 after a usage error. */
static int parse_args(int argc, char **argv, tune_args *a)
{
    long v = 0;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0) {
            fputs(usage_text, stdout);
            return 0;
        }
        if (arg[0] != '-') {
            if (a->name)
                return cli_usage_error("tune", "unexpected argument '%s' (one model or trace at a time)", arg);
            a->name = arg;
            continue;
        }
        if (strcmp(arg, "--sweep") == 0) {
            a->sweep = 1;
            continue;
        }
        if (i + 1 >= argc)
            return cli_usage_error("tune", "%s needs a value, or is not an option; see 'fathom tune --help'", arg);
        const char *val = argv[++i];
        if (strcmp(arg, "--mode") == 0) {
            int x = model_mode_from_name(val);
            if (x < 0)
                return cli_usage_error("tune", "unknown mode '%s' (use train or infer)", val);
            a->cfg.mode = (model_mode)x, a->model_opts = 1;
        } else if (strcmp(arg, "--preset") == 0) {
            int x = model_preset_from_name(val);
            if (x < 0)
                return cli_usage_error("tune", "unknown preset '%s' (use tiny, small or full)", val);
            a->cfg.preset = (model_preset)x, a->model_opts = 1;
        } else if (strcmp(arg, "--batch") == 0) {
            if (cli_parse_run_option("tune", CLI_RUN_batch, val, &v))
                return 2;
            a->cfg.batch = (int)v, a->model_opts = 1;
        } else if (strcmp(arg, "--batches") == 0) {
            if ((a->nbatches = parse_batches(val, a->batches, 16)) < 0)
                return 2;
            a->model_opts = 1;
        } else if (strcmp(arg, "--depth") == 0) {
            if (cli_parse_run_option("tune", CLI_RUN_depth, val, &v))
                return 2;
            if (v != 18 && v != 34 && v != 50 && v != 101 && v != 152)
                return cli_usage_error("tune", "--depth must be 18, 34, 50, 101 or 152, not %ld", v);
            a->cfg.depth = (int)v, a->model_opts = 1;
        } else if (strcmp(arg, "--seed") == 0) {
            unsigned long long sd;
            if (cli_parse_u64("tune", arg, val, &sd))
                return 2;
            a->cfg.seed = sd, a->model_opts = 1;
        } else if (strcmp(arg, "--skip-first") == 0) {
            if (cli_parse_int("tune", arg, val, 0, 1 << 20, &a->skip_first))
                return 2;
            a->trace_opts = 1;
        } else if (strcmp(arg, "--skip-last") == 0) {
            if (cli_parse_int("tune", arg, val, 0, 1 << 20, &a->skip_last))
                return 2;
            a->trace_opts = 1;
        } else if (strcmp(arg, "--steps") == 0) {
            if (cli_parse_run_option("tune", CLI_RUN_steps, val, &a->steps))
                return 2;
            a->trace_opts = 1;
        } else if (strcmp(arg, "--budget") == 0) {
            if (cli_parse_int("tune", arg, val, 1, 86400, &a->budget))
                return 2;
        } else if (strcmp(arg, "--rounds") == 0) {
            if (cli_parse_int("tune", arg, val, 1, 64, &a->rounds))
                return 2;
        } else if (strcmp(arg, "--compare") == 0) {
            if (a->npoints == REPLAY_TUNE_MAX_POINTS)
                return cli_usage_error("tune", "at most %d --compare settings", REPLAY_TUNE_MAX_POINTS);
            if (replay_tune_point_parse(val, &a->points[a->npoints++]))
                return cli_usage_error("tune", "--compare: %s", exec_errmsg());
        } else if (strcmp(arg, "--peak") == 0) {
            a->peak_file = val;
        } else if (strcmp(arg, "--format") == 0) {
            if ((a->fmt = cli_parse_format("tune", val, 0)) < 0)
                return 2;
        } else {
            return cli_usage_error("tune", "unknown option '%s'; see 'fathom tune --help'", arg);
        }
    }
    return -1;
}

/* The options that go together, and the operand: a model (*def) or a
 * trace (*def NULL).  -1 to go on; otherwise the exit status. */
static int check_args(const tune_args *a, const model_def **def)
{
    if (!a->name)
        return cli_usage_error("tune", "which model or trace? (see 'fathom list')");
    if (a->rounds && !a->sweep && !a->npoints)
        return cli_usage_error("tune", "--rounds applies to --sweep and --compare (the tuner races its rounds within "
                                       "--budget)");
    if (a->npoints && a->sweep)
        return cli_usage_error("tune", "--compare measures the settings given, --sweep every point: not both");
    if (a->npoints && a->nbatches)
        return cli_usage_error("tune",
                               "--batches applies to the tuner and --sweep; a --compare point names its --batch");
    *def = model_find(a->name);
    struct stat st;
    if (!*def && stat(a->name, &st) != 0) {
        /* a path (a slash or a dot in it) that is not there is a missing
         * file, as in every other command; a bare word a misspelt model */
        if (strpbrk(a->name, "/."))
            return cli_error("tune", "%s: %s", a->name, strerror(errno));
        return cli_usage_error("tune", "'%s' is neither a model (see 'fathom list') nor a trace", a->name);
    }
    if (*def && a->trace_opts)
        return cli_usage_error("tune", "--skip-first, --skip-last and --steps apply to a trace, not to a model");
    if (!*def && a->model_opts)
        return cli_usage_error("tune", "--mode, --preset, --batch, --batches, --depth and --seed apply to a model; "
                                       "a trace's are its own");
    if (*def && a->cfg.depth && strcmp((*def)->name, "residual") != 0)
        return cli_usage_error("tune", "--depth applies to residual only");
    return -1;
}

/* A model as the tuner's target, and the command its recommendation
 * starts with (prefix, TUNE_PREFIX_MAX bytes). */
static void model_target_setup(model_target *mt, replay_tune_target *t, char *prefix)
{
    const model_def *def = mt->def;
    const model_config *cfg = &mt->cfg;
    memset(t, 0, sizeof *t);
    t->ctx = mt;
    t->batch = model_batch(def, cfg);
    t->steps_per_run = 1;
    t->open = model_open, t->retune = model_retune, t->step = model_tstep, t->close = model_close;
    t->graph = model_tgraph;
    snprintf(t->what, sizeof t->what, "%s %s (%s)", def->name, model_mode_name(cfg->mode),
             model_preset_name(cfg->preset));
    int n = snprintf(prefix, TUNE_PREFIX_MAX, "fathom run %s --mode %s --preset %s", def->name,
                     model_mode_name(cfg->mode), model_preset_name(cfg->preset));
    if (cfg->depth)
        n += snprintf(prefix + n, TUNE_PREFIX_MAX - (size_t)n, " --depth %d", cfg->depth);
    if (cfg->seed != 1)
        snprintf(prefix + n, TUNE_PREFIX_MAX - (size_t)n, " --seed %llu", (unsigned long long)cfg->seed);
}

/* A trace loaded into p as the tuner's target, and the command its
 * recommendation starts with (prefix, TUNE_PREFIX_MAX bytes; *with_batch
 * 1 where it takes --batch).  0, or 1 after saying why not. */
static int trace_target_setup(const tune_args *a, replay_program *p, replay_tune_target *t, char *prefix,
                              int *with_batch)
{
    /* one recorded step by default: every candidate replays it in each round */
    replay_load_opts lo = { .skip_first = (uint32_t)a->skip_first,
                            .skip_last = (uint32_t)a->skip_last,
                            .max_steps = a->steps ? (uint32_t)a->steps : 1 };
    if (isatty(STDERR_FILENO))
        fprintf(stderr, "fathom tune: reading %s...\r", a->name);
    const exec_status ls = replay_load(a->name, &lo, p); /* its messages name the trace */
    if (ls || replay_program_build(p, 1) || replay_tune_trace_target(p, t)) {
        if (isatty(STDERR_FILENO))
            fprintf(stderr, "\33[K");
        if (ls)
            return cli_error("tune", "%s", exec_errmsg());
        return cli_error("tune", "%s: %s", a->name, exec_errmsg());
    }
    /* the recommendation: for a recording of one of fathom's workloads,
     * that workload at the recorded batch; for any other (an import, a
     * program of another tool) the replay of the trace itself */
    if (model_find(p->rec.model) && model_preset_from_name(p->rec.preset) >= 0 &&
        (!strcmp(p->rec.mode, "train") || !strcmp(p->rec.mode, "infer"))) {
        snprintf(prefix, TUNE_PREFIX_MAX, "fathom run %s --mode %s --preset %s", p->rec.model, p->rec.mode,
                 p->rec.preset);
        *with_batch = 1;
    } else {
        char q[4 * PATH_MAX + 3]; /* a path the loader opened, each character quoted at worst */
        snprintf(prefix, TUNE_PREFIX_MAX, "fathom replay %s", shell_quote(a->name, q, sizeof q));
    }
    return 0;
}

/* This machine's ceilings from --peak's file (none without one).  0, or 1
 * after saying why they cannot be used. */
static int load_peaks(const char *peak_file, analyze_peaks *peaks)
{
    if (peak_file && analyze_peaks_load(peak_file, peaks) != 0)
        return cli_error("tune", "%s", base_errmsg());
    if (peak_file && peaks->cpu[0] && strcmp(peaks->cpu, exec_cpu_model()) != 0)
        return cli_error("tune",
                         "%s: measured on '%s', this machine is '%s': tuning wants this machine's ceilings "
                         "('fathom peak --format json' here)",
                         peak_file, peaks->cpu, exec_cpu_model());
    return 0;
}

int cmd_tune(int argc, char **argv)
{
    tune_args a = {
        .cfg = { .mode = MODEL_TRAIN, .preset = MODEL_TINY, .seed = 1, .inter = 1, .plan = true },
        .budget = 60,
        .fmt = CLI_TEXT,
    };
    const model_def *def = NULL;
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        rc = check_args(&a, &def);
    if (rc >= 0)
        return rc;
    analyze_peaks peaks = { 0 };
    if (load_peaks(a.peak_file, &peaks))
        return 1;

    exec_threads_set(0); /* the process default: all cores (each candidate carries its own) */
    replay_tune_target t;
    model_target mt = { .def = def, .cfg = a.cfg };
    replay_program p;
    replay_program_init(&p);
    replay_tune_result *r = base_calloc(1, sizeof *r);
    int with_batch = 0;
    char prefix[TUNE_PREFIX_MAX];
    rc = 1;
    if (!r) {
        cli_error("tune", "out of memory");
        goto end;
    }
    if (def) {
        model_target_setup(&mt, &t, prefix);
        with_batch = 1;
    } else if (trace_target_setup(&a, &p, &t, prefix, &with_batch)) {
        goto end;
    }

    replay_tune_opts o = { .budget_s = (double)a.budget,
                           .batches = a.batches,
                           .nbatches = a.nbatches,
                           .sweep = a.sweep,
                           .rounds = (int)a.rounds,
                           .points = a.points,
                           .npoints = a.npoints,
                           .progress = isatty(STDERR_FILENO) ? stderr : NULL,
                           .peak_gflops = peaks.gflops,
                           .peak_gbs = peaks.gbs };
    if (replay_tune(&t, &o, r)) {
        cli_error("tune", "%s: %s", t.what, exec_errmsg());
        goto end;
    }
    if (a.fmt == CLI_JSON ? print_json(r, &t, prefix, with_batch) : (print_text(r, &t, prefix, with_batch), 0)) {
        cli_error("tune", "cannot write the output");
        goto end;
    }
    rc = fflush(stdout) ? cli_error("tune", "cannot write the output") : 0;
end:
    if (r)
        replay_tune_result_release(r);
    base_free(r);
    replay_program_destroy(&p);
    return rc;
}
