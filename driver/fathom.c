/* fathom.c -- the `fathom` driver, git style: `fathom <subcommand> ...`.
 * The top floor: the one place that sees every folder (each subcommand lives
 * in the folder that owns it; this table names them all); nothing includes
 * it. */
#include "analyze/analysis.h" /* the analyses, named in the help */
#include "analyze/analyze_cmds.h"
#include "analyze/import.h"
#include "driver/driver_cmds.h" /* record: the workloads under the tracer */
#include "base/cli.h"
#include "exec/exec_cmds.h" /* engine: ops, peak */
#include "exec/exec.h"
#include "models/models_cmds.h"
#include "replay/replay_cmds.h"
#include "tracer/tracer_cmds.h" /* tracer: info */
#include "tracer/hooks.h"       /* tracer: FATHOM_TRACE=1 traces this process */
#include "tracer/locate.h"      /* tracer: where the probe and the plugin are */
#include "tracer/decode.h"      /* tracer: the trace schema versions */

#include <limits.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmd_version(int argc, char **argv);

/* A traced run's SIGINT/SIGTERM: the engine stops at the next op boundary;
 * a second one ends the process at once. */
static void on_stop_signal(int sig)
{
    if (exec_interrupted()) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    exec_interrupt(sig);
}
static int cmd_help(int argc, char **argv);

static const struct subcommand {
    const char *name;
    cli_main_fn fn;
    const char *summary;
} subcommands[] = {
    { "run", cmd_run, "run a workload for some steps (train or infer), print step times" },
    { "list", cmd_list, "list the workloads: paper, class, parameters per preset" },
    { "record", cmd_record, "run a workload under LTTng and archive its trace" },
    { "info", cmd_info, "summarize a recorded trace: manifest, events, ops, discards" },
    { "analyze", cmd_analyze, "analyze traces offline:" }, /* usage() names the analyses (analyses.def) */
    { "report", cmd_report, "write the analyses of traces as charts (SVG/PNG) and one HTML page" },
    { "export", cmd_export, "write a trace as a Chrome/Perfetto timeline (JSON)" },
    { "import", cmd_import, "turn PyTorch profiler or execution traces into fathom archives" },
    { "replay", cmd_replay, "re-execute a recorded op sequence on this machine" },
    { "tune", cmd_tune, "find faster engine settings for a workload or trace here, measured" },
    { "ops", cmd_ops, "list the op table: name, class, gradient, FLOP formula" },
    { "peak", cmd_peak, "measure this machine's sgemm GFLOP/s and memory bandwidth" },
    { "version", cmd_version, "print the version, BLAS configuration and CPU" },
    { "help", cmd_help, "show this help, or a subcommand's (fathom help CMD)" },
};
#define NSUB (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: fathom <command> [options]\n\n"
               "Record, archive, analyze and replay the op-level behaviour of Fathom's\n"
               "eight deep-learning workloads and a Transformer.\n\ncommands:\n");
    for (size_t i = 0; i < NSUB; i++) {
        fprintf(f, "  %-10s %s", subcommands[i].name, subcommands[i].summary);
        if (subcommands[i].fn == cmd_analyze)
            for (size_t a = 0; a < analyze_nanalyses; a++)
                fprintf(f, "%s %s", a ? "," : "", analyze_analyses[a]->name);
        fputc('\n', f);
    }
    fprintf(f, "\n`fathom <command> --help` describes a command; see also fathom(1).\n");
}

static const struct subcommand *find(const char *name)
{
    for (size_t i = 0; i < NSUB; i++)
        if (strcmp(subcommands[i].name, name) == 0)
            return &subcommands[i];
    return NULL;
}

static int cmd_version(int argc, char **argv)
{
    if (argc > 1) {
        if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
            printf("usage: fathom version\n\nPrints fathom's version, the trace schema version, the BLAS\n"
                   "configuration, the CPU model (and the cgroup's CPU quota where one is set:\n"
                   "the default thread count follows it), how the engine's threads take denormal\n"
                   "floats (flushed to zero unless FATHOM_DENORMALS=keep), the vector instruction set\n"
                   "the engine's kernels picked on this CPU and the sets this build carries, the memory a\n"
                   "model's tensors may\n"
                   "take (the cgroup's limit or the machine's memory and swap), the trace\n"
                   "probe `fathom record` loads\n"
                   "(FATHOM_TP_LIB overrides it) and the folder of the Babeltrace2 plugin\n"
                   "(for babeltrace2 --plugin-path=DIR or BABELTRACE_PLUGIN_PATH=DIR).\n");
            return 0;
        }
        return cli_usage_error("version", "unexpected argument '%s'", argv[1]);
    }
    printf("fathom %s\ntrace schema %d (reads " TRACER_SCHEMA_READS ")\nblas: %s\ncpu: %s (%d cores)\n", FATHOM_VERSION,
           TRACER_SCHEMA_CURRENT, exec_blas_config(), exec_cpu_model(), exec_cores());
    double quota = exec_cpu_quota();
    if (quota > 0)
        printf("cpu quota: %.2f CPUs (cgroup): %d thread%s by default\n", quota, exec_cpus(),
               exec_cpus() == 1 ? "" : "s");
    printf("denormals: %s\n", exec_denormals_get() ? "flushed to zero on the engine's threads"
                                                   : "kept (IEEE gradual underflow: FATHOM_DENORMALS=keep)");
    /* the engine's vector kernels: the widest set this CPU has of those built */
    exec_simd simd = exec_simd_set(EXEC_SIMD_AUTO);
    printf("kernels: %s (this build carries %s)\n", exec_simd_name(simd), exec_simd_built());
    const char *mem_source = NULL;
    double mem = exec_memory_limit(&mem_source);
    char mem_text[32];
    if (mem > 0) /* what a model's tensors may take at most */
        printf("memory: %s (%s)\n", exec_bytes_text(mem_text, sizeof mem_text, mem), mem_source);
    char path[PATH_MAX];
    const char *env = getenv(TRACER_ENV_TP_LIB);
    if (env && *env)
        printf("probe: %s (from %s)\n", env, TRACER_ENV_TP_LIB);
    else if (tracer_probe_locate(path, sizeof path) == 0)
        printf("probe: %s\n", path);
    else
        printf("probe: %s not found (set %s to its path)\n", TRACER_TP_LIB_NAME, TRACER_ENV_TP_LIB);
    if (tracer_plugin_locate(path, sizeof path) == 0)
        printf("plugin: %s/%s (babeltrace2 --plugin-path=%s)\n", path, TRACER_PLUGIN_NAME, path);
    else
        printf("plugin: %s not found\n", TRACER_PLUGIN_NAME);
    return 0;
}

static int cmd_help(int argc, char **argv)
{
    if (argc < 2) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        printf("usage: fathom help [COMMAND]\n\nPrints the list of commands, or COMMAND's own help (the same as\n"
               "'fathom COMMAND --help').\n");
        return 0;
    }
    if (argc > 2)
        return cli_usage_error("help", "one command at a time, not '%s'", argv[2]);
    const struct subcommand *s = find(argv[1]);
    if (!s)
        return cli_usage_error("help", "no such command '%s'", argv[1]);
    char *args[] = { argv[1], "--help", NULL };
    return s->fn(2, args);
}

int main(int argc, char **argv)
{
    int traced = 0; /* tracer: a traced run (FATHOM_TRACE=1, set by `fathom record`) */
    if (tracer_hooks_install_from_env(&traced) != TRACER_OK)
        return cli_error(NULL, "%s", base_errmsg());
    if (traced) { /* a recorded run: a signal stops it at the next op boundary, flushed */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_stop_signal;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
    }
    const char *algo = getenv("FATHOM_CONV_ALGO"); /* engine: how convolutions run, for A/B runs */
    if (algo && *algo) {
        int a = exec_conv_algo_from_name(algo);
        if (a < 0)
            return cli_error(NULL, "FATHOM_CONV_ALGO must be auto, im2col, direct or winograd, not '%s'", algo);
        exec_conv_algo_set((exec_conv_algo)a);
    }
    const char *simd = getenv("FATHOM_SIMD"); /* engine: the widest kernels, to compare the sets on one CPU */
    if (simd && *simd && exec_simd_from_name(simd) < 0)
        return cli_error(NULL, "FATHOM_SIMD must be avx512, avx2 or baseline, not '%s'", simd);
    const char *denorm = getenv("FATHOM_DENORMALS"); /* engine: denormal floats flushed or kept */
    if (denorm && *denorm) {
        int d = exec_denormals_from_name(denorm);
        if (d < 0)
            return cli_error(NULL, "FATHOM_DENORMALS must be flush or keep, not '%s'", denorm);
        exec_denormals_set(d);
    }
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0)
        return cmd_version(1, argv + 1);
    const struct subcommand *s = find(argv[1]);
    if (!s)
        return cli_usage_error(NULL, "'%s' is not a fathom command; see 'fathom --help'", argv[1]);
    return s->fn(argc - 1, argv + 1);
}
