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

int cmd_record(int argc, char **argv)
{
    runopts ro = { 0 };
    const char *model = NULL, *out_path = NULL, *dir = NULL, *relay = NULL, *modes = NULL, *buffer = NULL;
    const char *live_timer = NULL, *session = NULL, *restate = NULL;
    bool all = false, verbose = false, quiet = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(a, "--all")) {
            all = true;
            continue;
        }
        if (!strcmp(a, "--verbose")) {
            verbose = true;
            continue;
        }
        if (!strcmp(a, "--quiet")) {
            quiet = true;
            continue;
        }
        const char **slot = !strcmp(a, "--mode")         ? &ro.mode
                            : !strcmp(a, "--preset")     ? &ro.preset
                            : !strcmp(a, "--steps")      ? &ro.steps
                            : !strcmp(a, "--batch")      ? &ro.batch
                            : !strcmp(a, "--threads")    ? &ro.threads
                            : !strcmp(a, "--inter")      ? &ro.inter
                            : !strcmp(a, "--seed")       ? &ro.seed
                            : !strcmp(a, "--depth")      ? &ro.depth
                            : !strcmp(a, "--data")       ? &ro.data
                            : !strcmp(a, "--conv-algo")  ? &ro.conv_algo
                            : !strcmp(a, "--bind")       ? &ro.bind
                            : !strcmp(a, "--denormals")  ? &ro.denormals
                            : !strcmp(a, "-o")           ? &out_path
                            : !strcmp(a, "--dir")        ? &dir
                            : !strcmp(a, "--relay")      ? &relay
                            : !strcmp(a, "--modes")      ? &modes
                            : !strcmp(a, "--buffer")     ? &buffer
                            : !strcmp(a, "--live-timer") ? &live_timer
                            : !strcmp(a, "--session")    ? &session
                            : !strcmp(a, "--restate")    ? &restate
                                                         : NULL;
        if (slot) {
            if (i + 1 >= argc)
                return cli_usage_error(CMD, "%s wants a value", a);
            *slot = argv[++i];
            continue;
        }
        if (a[0] == '-')
            return cli_usage_error(CMD, "unknown option '%s'; see 'fathom record --help'", a);
        if (model)
            return cli_usage_error(CMD, "unexpected argument '%s'", a);
        model = a;
    }
    /* validate what we can before starting anything */
    long v;
    if (ro.mode && model_mode_from_name(ro.mode) < 0)
        return cli_usage_error(CMD, "unknown mode '%s' (train or infer)", ro.mode);
    if (ro.preset && model_preset_from_name(ro.preset) < 0)
        return cli_usage_error(CMD, "unknown preset '%s' (tiny, small or full)", ro.preset);
    if ((ro.steps && cli_parse_run_option(CMD, CLI_RUN_steps, ro.steps, &v)) ||
        (ro.batch && cli_parse_run_option(CMD, CLI_RUN_batch, ro.batch, &v)) ||
        (ro.threads && cli_parse_run_option(CMD, CLI_RUN_threads, ro.threads, &v)) ||
        (ro.depth && cli_parse_run_option(CMD, CLI_RUN_depth, ro.depth, &v)) ||
        (ro.inter && cli_parse_run_option(CMD, CLI_RUN_inter, ro.inter, &v)))
        return 2;
    exec_conv_algo algo;
    exec_bind bind;
    if ((ro.conv_algo && exec_conv_algo_parse(ro.conv_algo, &algo)) || (ro.bind && exec_bind_parse(ro.bind, &bind)))
        return cli_usage_error(CMD, "%s", exec_errmsg());
    if (ro.denormals && exec_denormals_from_name(ro.denormals) < 0)
        return cli_usage_error(CMD, "unknown --denormals '%s' (use flush or keep)", ro.denormals);
    long trace_buffer = 0;
    if (buffer && cli_parse_int(CMD, "--buffer", buffer, 1, EXEC_TRACE_BUFFER_MAX, &trace_buffer))
        return 2;
    ro.trace_buffer = (unsigned)trace_buffer;
    long timer = 0;
    if (live_timer && (!relay || cli_parse_int(CMD, "--live-timer", live_timer, 1000, 3600L * 1000000, &timer)))
        return relay ? 2 : cli_usage_error(CMD, "--live-timer goes with --relay");
    ro.live_timer_us = (unsigned long long)timer;
    if (restate) {
        char *end = NULL;
        double sec = strtod(restate, &end);
        if (!relay)
            return cli_usage_error(CMD, "--restate goes with --relay");
        if (!end || *end || end == restate || !(sec >= 0 && sec <= 86400))
            return cli_usage_error(CMD, "--restate wants seconds from 0 to 86400, not '%s'", restate);
        ro.restate_s = sec > 0 ? sec : -1;
    }
    if (session) {
        size_t n = strlen(session);
        if (!n || n > 100 ||
            strspn(session, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-") != n ||
            session[0] == '.' || session[0] == '-')
            return cli_usage_error(CMD, "--session wants a name of letters, digits, '_', '.' and '-', not '%s'",
                                   session);
    }
    if (session && all)
        return cli_usage_error(CMD, "--session names one recording: not with --all");
    ro.session = session;
    unsigned long long seed;
    if (ro.seed && cli_parse_u64(CMD, "--seed", ro.seed, &seed))
        return 2;
    if (relay && strncmp(relay, "net://", 6) && strncmp(relay, "net6://", 7) && strncmp(relay, "tcp://", 6) &&
        strncmp(relay, "tcp6://", 7))
        return cli_usage_error(CMD, "--relay wants net://HOST[:CTRL[:DATA]], not '%s'", relay);
    if (out_path && (relay || dir))
        return cli_usage_error(CMD, "-o cannot be combined with %s", relay ? "--relay" : "--dir");
    if (all && model)
        return cli_usage_error(CMD, "--all records every workload: no MODEL");
    if (all && out_path)
        return cli_usage_error(CMD, "-o names one archive: use --dir with --all");
    if (modes && !all)
        return cli_usage_error(CMD, "--modes goes with --all (use --mode for one workload)");
    if (!all && !model)
        return cli_usage_error(CMD, "which workload? usage: fathom record MODEL [options] | --all; see --help");
    if (model && !model_find(model))
        return cli_usage_error(CMD, "unknown model '%s'; see 'fathom record --help' for the workloads", model);
    if (all && ro.data)
        return cli_usage_error(CMD, "--data names one workload's file: record that workload alone");
    if (model && ro.data && !model_find(model)->data_format)
        return cli_usage_error(CMD, "%s has no real-format loader: it runs on its built-in generator (drop --data)",
                               model);

    if (dir && tracer_archive_check_dir(dir))
        return cli_usage_error(CMD, "--dir: %s", base_errmsg());
    if (!out_path && !relay && tracer_output_check_folder(dir ? dir : "traces", "--dir")) /* before the run */
        return cli_error(CMD, "%s", base_errmsg());
    if (out_path) { /* the output rule (tracer/output.h), checked before the run */
        const char *inputs[] = { ro.data };
        if (tracer_output_check(out_path, inputs, ro.data ? 1 : 0, "-o"))
            return cli_error(CMD, "%s", base_errmsg());
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cli_error(CMD, "cannot find the fathom executable (/proc/self/exe)");
    exe[n] = '\0';

    if (!all)
        return record_one(exe, model, ro.mode, &ro, out_path, dir, relay, verbose, quiet);

    /* --all: every workload in every mode, one session daemon for them all */
    const char *mode_list[MODEL_MODE_COUNT];
    int nmodes = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", modes ? modes : "train,infer");
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
    if (ro.mode)
        return cli_usage_error(CMD, "use --modes with --all");
    if (model_registry_count == 0)
        return cli_error(CMD, "no workloads are built in");
    signal(SIGPIPE, SIG_IGN); /* liblttng-ctl's sockets (children get it back) */
    if (tracer_sessiond_acquire() != TRACER_RECORD_OK)
        return cli_error(CMD, "%s", base_errmsg());
    int failed = 0, rc = 0, total = model_registry_count * nmodes;
    for (int i = 0; i < model_registry_count && rc < 128; i++)
        for (int j = 0; j < nmodes && rc < 128; j++) { /* 128 + a signal: interrupted, stop */
            snprintf(ro.of, sizeof ro.of, "%d/%d ", i * nmodes + j + 1, total);
            rc = record_one(exe, model_registry[i]->name, mode_list[j], &ro, NULL, dir, relay, verbose, quiet);
            failed += rc != 0;
        }
    tracer_sessiond_release();
    if (rc >= 128)
        return rc;
    if (failed)
        return cli_error(CMD, "%d of %d recordings failed", failed, model_registry_count * nmodes);
    return 0;
}
