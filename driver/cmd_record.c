/* cmd_record.c -- `fathom record`: run a workload under LTTng and archive
 * its trace (man fathom-record(1)). */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "base/cli.h"
#include "models/model.h"
#include "driver/driver_cmds.h"
#include "tracer/output.h"
#include "tracer/record.h"

#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CMD "record"

static void usage(FILE *f)
{
    fprintf(f, "usage: fathom record MODEL [run options] [-o ARCHIVE | --dir DIR] [--relay net://HOST[:PORTS]]\n"
               "       fathom record --all [--modes train,infer] [run options] [--dir DIR] [--relay URL]\n\n"
               "Runs a workload (`fathom run`) as a child process traced by LTTng and archives the\n"
               "trace with a MANIFEST as one .tar.zst (default folder traces/, never overwriting).\n\n"
               "run options (passed to `fathom run`):\n"
               "  --mode train|infer   --preset tiny|small|full   --steps N   --batch B\n"
               "  --threads N          --inter M                  --seed S   --depth D (residual)\n"
               "  --conv-algo A        --bind none|close|spread   --denormals flush|keep\n"
               "                       (as `fathom tune` recommends them; in the MANIFEST too)\n"
               "  --data PATH          a real-format data file (see 'fathom run --help')\n"
               "options:\n"
               "  -o ARCHIVE           write the archive here (an error if it exists)\n"
               "  --dir DIR            folder for default-named archives (default traces)\n"
               "  --relay URL          stream to a running lttng-relayd (net://HOST[:CTRL[:DATA]])\n"
               "                       as an LTTng live session instead of archiving locally; prints\n"
               "                       the net://HOST/host/HOSTNAME/SESSION URL to analyze it with\n"
               "  --live-timer US      with --relay: how often the buffers go to the relay (default\n"
               "                       1000000 us)\n"
               "  --restate S          with --relay: every S seconds (default 1; 0: never) and when\n"
               "                       a viewer attaches, re-announce the run, its nodes and their\n"
               "                       totals so far, for viewers that join late\n"
               "  --session NAME       the LTTng session's name (default fathom-PID-TIME-RANDOM)\n"
               "  --all                record every workload, in every mode of --modes\n"
               "  --modes LIST         with --all: comma-separated modes (default train,infer)\n"
               "  --buffer RECORDS     op records each thread buffers before emitting them as one\n"
               "                       fathom:ops event (default 256, at most 16384): larger means\n"
               "                       fewer events; a crash loses at most the unflushed buffers\n"
               "                       (a Ctrl-C loses nothing: the run stops at an op, flushed)\n"
               "  --verbose            show the workload's own output\n"
               "  --quiet              no progress line\n\n"
               "Starts lttng-sessiond if no session daemon answers (and stops it afterwards).\n"
               "See fathom-record(1) and fathom-trace(5).\n\nworkloads:");
    for (int i = 0; i < model_registry_count; i++)
        fprintf(f, " %s", model_registry[i]->name);
    fprintf(f, "%s\n", model_registry_count ? "" : " (none built in)");
}

typedef struct runopts {
    const char *mode, *preset, *steps, *batch, *threads, *inter, *seed, *depth, *data;
    const char *conv_algo, *bind, *denormals; /* checked: a name each parses */
    unsigned trace_buffer;                    /* --buffer (0: the default) */
    unsigned long long live_timer_us;         /* --live-timer */
    double restate_s;                         /* --restate (0: the default; < 0: never) */
    const char *session;                      /* --session */
    char of[32];                              /* --all: "K/N " before the label (workload K of N) */
} runopts;

static int record_one(const char *exe, const char *model, const char *mode, const runopts *ro, const char *out_path,
                      const char *dir, const char *relay, bool verbose, bool quiet)
{
    char *argv[32];
    int n = 0;
    argv[n++] = (char *)exe;
    argv[n++] = "run";
    argv[n++] = (char *)model;
#define OPT(flag, v)                \
    if (v) {                        \
        argv[n++] = (char *)(flag); \
        argv[n++] = (char *)(v);    \
    }
    OPT("--mode", mode)
    OPT("--preset", ro->preset)
    OPT("--steps", ro->steps)
    OPT("--batch", ro->batch)
    OPT("--threads", ro->threads)
    OPT("--inter", ro->inter)
    OPT("--seed", ro->seed)
    OPT("--depth", ro->depth)
    OPT("--data", ro->data)
    OPT("--conv-algo", ro->conv_algo)
    OPT("--bind", ro->bind)
    OPT("--denormals", ro->denormals)
#undef OPT
    argv[n] = NULL;

    char label[256];
    tracer_manifest *base = tracer_manifest_create();
    if (!base)
        return cli_error(CMD, "out of memory");
    tracer_manifest_set(base, "model", model);
    tracer_manifest_set(base, "mode", mode ? mode : "train");
    if (ro->preset)
        tracer_manifest_set(base, "preset", ro->preset);
    if (ro->threads)
        tracer_manifest_set(base, "threads", ro->threads);
    if (ro->data)
        tracer_manifest_set(base, "data", ro->data);
    /* the child's engine settings that the trace does not carry: the flags
     * given, else what it inherits (FATHOM_CONV_ALGO and FATHOM_DENORMALS
     * set this process's too) */
    tracer_manifest_set(base, "conv_algo", ro->conv_algo ? ro->conv_algo : exec_conv_algo_name(exec_conv_algo_get()));
    tracer_manifest_set(base, "bind", ro->bind ? ro->bind : exec_bind_name(exec_bind_get()));
    tracer_manifest_set(base, "denormals", ro->denormals ? ro->denormals : exec_denormals_name(exec_denormals_get()));
    snprintf(label, sizeof label, "%s%s %s%s%s", ro->of, model, mode ? mode : "train", ro->preset ? " " : "",
             ro->preset ? ro->preset : "");
    tracer_record_opts o = {
        .argv = argv,
        .trace_buffer = ro->trace_buffer,
        .live_timer_us = ro->live_timer_us,
        .restate_s = ro->restate_s,
        .session_name = ro->session,
        .out_path = out_path,
        .out_dir = dir,
        .relay_url = relay,
        .manifest = base,
        .label = label,
        .progress = !quiet,
        .show_output = verbose,
    };
    tracer_record_result *r = base_calloc(1, sizeof *r);
    if (!r) {
        tracer_manifest_destroy(base);
        return cli_error(CMD, "out of memory");
    }
    tracer_record_status st = tracer_record(&o, r);
    const char *err = base_errmsg();
    tracer_manifest_destroy(base);
    int rc = 0;
    switch (st) {
    case TRACER_RECORD_OK:
        if (relay)
            printf("%s: streamed to %s (session %s, live at %s)\n", label, relay, r->session, r->live_url);
        else
            printf("%s\n", r->archive);
        if (!quiet && !relay)
            fprintf(stderr, "%s: %" PRIu64 " events, %" PRIu64 " ops, %" PRIu64 " step%s, 0 discarded, %.1f s\n", label,
                    r->stats.events, r->stats.op_pairs, r->stats.steps, r->stats.steps == 1 ? "" : "s", r->seconds);
        if (r->interrupted && relay) {
            cli_error(CMD, "%s: interrupted by signal %d; the relay has its trace, with status=interrupted", label,
                      r->interrupted);
            rc = 128 + r->interrupted;
        } else if (r->interrupted) {
            cli_error(CMD, "%s: interrupted by signal %d after %" PRIu64 " steps; archived with status=interrupted",
                      label, r->interrupted, r->stats.steps);
            rc = 128 + r->interrupted;
        }
        break;
    case TRACER_RECORD_INCOMPLETE:
        printf("%s\n", r->archive);
        rc = cli_error(CMD, "%s: %s (archived as %s)", label, err, r->archive);
        break;
    case TRACER_RECORD_INTERRUPTED:
        cli_error(CMD, "%s: %s", label, err);
        rc = 128 + (r->interrupted ? r->interrupted : SIGINT);
        break;
    default: rc = cli_error(CMD, "%s: %s", label, err); break;
    }
    base_free(r);
    return rc;
}

/* What `fathom record` was asked. */
typedef struct record_args {
    runopts ro;
    const char *model, *out_path, *dir, *relay, *modes, *buffer;
    const char *live_timer, *session, *restate;
    bool all, verbose, quiet;
} record_args;

/* The options and the operand of argv into a.  -1 to go on; otherwise the
 * exit status: 0 after the help, 2 after a usage error. */
static int parse_args(int argc, char **argv, record_args *a)
{
    runopts *ro = &a->ro;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(arg, "--all")) {
            a->all = true;
            continue;
        }
        if (!strcmp(arg, "--verbose")) {
            a->verbose = true;
            continue;
        }
        if (!strcmp(arg, "--quiet")) {
            a->quiet = true;
            continue;
        }
        const char **slot = !strcmp(arg, "--mode")         ? &ro->mode
                            : !strcmp(arg, "--preset")     ? &ro->preset
                            : !strcmp(arg, "--steps")      ? &ro->steps
                            : !strcmp(arg, "--batch")      ? &ro->batch
                            : !strcmp(arg, "--threads")    ? &ro->threads
                            : !strcmp(arg, "--inter")      ? &ro->inter
                            : !strcmp(arg, "--seed")       ? &ro->seed
                            : !strcmp(arg, "--depth")      ? &ro->depth
                            : !strcmp(arg, "--data")       ? &ro->data
                            : !strcmp(arg, "--conv-algo")  ? &ro->conv_algo
                            : !strcmp(arg, "--bind")       ? &ro->bind
                            : !strcmp(arg, "--denormals")  ? &ro->denormals
                            : !strcmp(arg, "-o")           ? &a->out_path
                            : !strcmp(arg, "--dir")        ? &a->dir
                            : !strcmp(arg, "--relay")      ? &a->relay
                            : !strcmp(arg, "--modes")      ? &a->modes
                            : !strcmp(arg, "--buffer")     ? &a->buffer
                            : !strcmp(arg, "--live-timer") ? &a->live_timer
                            : !strcmp(arg, "--session")    ? &a->session
                            : !strcmp(arg, "--restate")    ? &a->restate
                                                           : NULL;
        if (slot) {
            if (i + 1 >= argc)
                return cli_usage_error(CMD, "%s wants a value", arg);
            *slot = argv[++i];
            continue;
        }
        if (arg[0] == '-')
            return cli_usage_error(CMD, "unknown option '%s'; see 'fathom record --help'", arg);
        if (a->model)
            return cli_usage_error(CMD, "unexpected argument '%s'", arg);
        a->model = arg;
    }
    return -1;
}

/* Each option's value, checked before anything starts (the run options
 * again by the workload's own run); the recorder's own into a->ro.  -1 to
 * go on, or 2 after a usage error. */
static int check_values(record_args *a)
{
    runopts *ro = &a->ro;
    long v;
    if (ro->mode && model_mode_from_name(ro->mode) < 0)
        return cli_usage_error(CMD, "unknown mode '%s' (train or infer)", ro->mode);
    if (ro->preset && model_preset_from_name(ro->preset) < 0)
        return cli_usage_error(CMD, "unknown preset '%s' (tiny, small or full)", ro->preset);
    if ((ro->steps && cli_parse_run_option(CMD, CLI_RUN_steps, ro->steps, &v)) ||
        (ro->batch && cli_parse_run_option(CMD, CLI_RUN_batch, ro->batch, &v)) ||
        (ro->threads && cli_parse_run_option(CMD, CLI_RUN_threads, ro->threads, &v)) ||
        (ro->depth && cli_parse_run_option(CMD, CLI_RUN_depth, ro->depth, &v)) ||
        (ro->inter && cli_parse_run_option(CMD, CLI_RUN_inter, ro->inter, &v)))
        return 2;
    exec_conv_algo algo;
    exec_bind bind;
    if ((ro->conv_algo && exec_conv_algo_parse(ro->conv_algo, &algo)) || (ro->bind && exec_bind_parse(ro->bind, &bind)))
        return cli_usage_error(CMD, "%s", exec_errmsg());
    if (ro->denormals && exec_denormals_from_name(ro->denormals) < 0)
        return cli_usage_error(CMD, "unknown --denormals '%s' (use flush or keep)", ro->denormals);

    long trace_buffer = 0;
    if (a->buffer && cli_parse_int(CMD, "--buffer", a->buffer, 1, EXEC_TRACE_BUFFER_MAX, &trace_buffer))
        return 2;
    ro->trace_buffer = (unsigned)trace_buffer;
    long timer = 0;
    if (a->live_timer &&
        (!a->relay || cli_parse_int(CMD, "--live-timer", a->live_timer, 1000, 3600L * 1000000, &timer)))
        return a->relay ? 2 : cli_usage_error(CMD, "--live-timer goes with --relay");
    ro->live_timer_us = (unsigned long long)timer;
    if (a->restate) {
        char *end = NULL;
        double sec = strtod(a->restate, &end);
        if (!a->relay)
            return cli_usage_error(CMD, "--restate goes with --relay");
        if (!end || *end || end == a->restate || !(sec >= 0 && sec <= 86400))
            return cli_usage_error(CMD, "--restate wants seconds from 0 to 86400, not '%s'", a->restate);
        ro->restate_s = sec > 0 ? sec : -1;
    }
    if (a->session) {
        size_t n = strlen(a->session);
        if (!n || n > 100 ||
            strspn(a->session, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n ||
            a->session[0] == '.' || a->session[0] == '-')
            return cli_usage_error(CMD, "--session wants a name of letters, digits, '_', '.' and '-', not '%s'",
                                   a->session);
    }
    if (a->session && a->all)
        return cli_usage_error(CMD, "--session names one recording: not with --all");
    ro->session = a->session;
    unsigned long long seed;
    if (ro->seed && cli_parse_u64(CMD, "--seed", ro->seed, &seed))
        return 2;
    return -1;
}

/* The options that go together, the workload, and where the archives go.
 * -1 to go on; otherwise the exit status. */
static int check_combinations(const record_args *a)
{
    const char *relay = a->relay, *out_path = a->out_path, *dir = a->dir, *model = a->model;
    if (relay && strncmp(relay, "net://", 6) && strncmp(relay, "net6://", 7) && strncmp(relay, "tcp://", 6) &&
        strncmp(relay, "tcp6://", 7))
        return cli_usage_error(CMD, "--relay wants net://HOST[:CTRL[:DATA]], not '%s'", relay);
    if (out_path && (relay || dir))
        return cli_usage_error(CMD, "-o cannot be combined with %s", relay ? "--relay" : "--dir");
    if (a->all && model)
        return cli_usage_error(CMD, "--all records every workload: no MODEL");
    if (a->all && out_path)
        return cli_usage_error(CMD, "-o names one archive: use --dir with --all");
    if (a->modes && !a->all)
        return cli_usage_error(CMD, "--modes goes with --all (use --mode for one workload)");
    if (!a->all && !model)
        return cli_usage_error(CMD, "which workload? usage: fathom record MODEL [options] | --all; see --help");
    if (model && !model_find(model))
        return cli_usage_error(CMD, "unknown model '%s'; see 'fathom record --help' for the workloads", model);
    if (a->all && a->ro.data)
        return cli_usage_error(CMD, "--data names one workload's file: record that workload alone");
    if (model && a->ro.data && !model_find(model)->data_format)
        return cli_usage_error(CMD, "%s has no real-format loader: it runs on its built-in generator (drop --data)",
                               model);

    if (dir && tracer_archive_check_dir(dir))
        return cli_usage_error(CMD, "--dir: %s", base_errmsg());
    if (!out_path && !relay && tracer_output_check_folder(dir ? dir : "traces", "--dir")) /* before the run */
        return cli_error(CMD, "%s", base_errmsg());
    if (out_path) { /* the output rule (tracer/output.h), checked before the run */
        const char *inputs[] = { a->ro.data };
        if (tracer_output_check(out_path, inputs, a->ro.data ? 1 : 0, "-o"))
            return cli_error(CMD, "%s", base_errmsg());
    }
    return -1;
}

/* --all: every workload in every mode of --modes, one session daemon for
 * them all.  The exit status. */
static int record_all(const char *exe, record_args *a)
{
    const char *mode_list[MODEL_MODE_COUNT];
    int nmodes = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", a->modes ? a->modes : "train,infer");
    for (char *sv = NULL, *t = strtok_r(buf, ",", &sv); t; t = strtok_r(NULL, ",", &sv)) {
        int mi = model_mode_from_name(t);
        if (mi < 0)
            return cli_usage_error(CMD, "unknown mode '%s' in --modes", t);
        bool dup = false;
        for (int j = 0; j < nmodes; j++)
            dup |= !strcmp(mode_list[j], model_mode_name((model_mode)mi));
        if (!dup)
            mode_list[nmodes++] = model_mode_name((model_mode)mi);
    }
    if (nmodes == 0)
        return cli_usage_error(CMD, "--modes is empty");
    if (a->ro.mode)
        return cli_usage_error(CMD, "use --modes with --all");
    if (model_registry_count == 0)
        return cli_error(CMD, "no workloads are built in");

    signal(SIGPIPE, SIG_IGN); /* liblttng-ctl's sockets (children get it back) */
    if (tracer_sessiond_acquire() != TRACER_RECORD_OK)
        return cli_error(CMD, "%s", base_errmsg());
    int failed = 0, rc = 0, total = model_registry_count * nmodes;
    for (int i = 0; i < model_registry_count && rc < 128; i++)
        for (int j = 0; j < nmodes && rc < 128; j++) { /* 128 + a signal: interrupted, stop */
            snprintf(a->ro.of, sizeof a->ro.of, "%d/%d ", i * nmodes + j + 1, total);
            rc = record_one(exe, model_registry[i]->name, mode_list[j], &a->ro, NULL, a->dir, a->relay, a->verbose,
                            a->quiet);
            failed += rc != 0;
        }
    tracer_sessiond_release();
    if (rc >= 128)
        return rc;
    if (failed)
        return cli_error(CMD, "%d of %d recordings failed", failed, model_registry_count * nmodes);
    return 0;
}

int cmd_record(int argc, char **argv)
{
    record_args a = { 0 };
    int rc = parse_args(argc, argv, &a);
    if (rc < 0)
        rc = check_values(&a);
    if (rc < 0)
        rc = check_combinations(&a);
    if (rc >= 0)
        return rc;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cli_error(CMD, "cannot find the fathom executable (/proc/self/exe)");
    exe[n] = '\0';
    if (!a.all)
        return record_one(exe, a.model, a.ro.mode, &a.ro, a.out_path, a.dir, a.relay, a.verbose, a.quiet);
    return record_all(exe, &a);
}
