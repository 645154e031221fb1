/* cmd_replay.c -- `fathom replay TRACE`: what would this recorded workload's
 * ops cost on this machine? */
#include "base/alloc.h"
#include "base/cli.h"
#include "exec/exec.h"
#include "replay/replay_cmds.h"
#include "replay/load.h"
#include "replay/run.h"
#include "tracer/output.h"
#include "tracer/record.h"

#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: fathom replay TRACE [--threads N] [--inter M] [--conv-algo A] [--bind none|close|spread]\n"
    "                    [--denormals flush|keep] [--steps K] [--skip-first N] [--skip-last N]\n"
    "                    [--ops A-B]\n"
    "                    [--iterations I] [--warmup W] [--seed S] [--format text|csv|json]\n"
    "                    [--dump-ops FILE] [--record [-o ARCHIVE | --dir DIR]]\n\n"
    "Rebuilds the op program of a recorded trace (an archive or a CTF directory) from the\n"
    "trace alone: tensors from tensor_alloc, ops from op_begin in their recorded order and\n"
    "data flow. Fills inputs and weights with synthetic data of the recorded shapes, re-\n"
    "executes every op with this machine's kernels, and prints per op type and class the\n"
    "recorded and replayed time per step, their ratio, and the predicted step time here.\n"
    "An archive of `fathom import` replays each framework op the op table maps to an\n"
    "engine op with its recorded shapes; the others are demoted (not run, their recorded\n"
    "time carried over). The report ends with its coverage: ops and recorded time\n"
    "replayed, and the op types not replayed with the reason. See fathom-replay(1).\n"
    "  --threads N      intra-op threads (default: all cores)\n"
    "  --inter M        inter-op workers (default 1)\n"
    "  --conv-algo A    convolution algorithm: auto (default), im2col, direct, winograd\n"
    "  --bind B         thread binding: none (default), close, spread, as fathom run's\n"
    "                   (`fathom tune TRACE` recommends these four)\n"
    "  --denormals D    flush (default: denormal floats become 0 on the engine's\n"
    "                   threads, as fathom run's) or keep (IEEE gradual underflow)\n"
    "  --steps K        replay K recorded steps (default: all kept steps)\n"
    "  --skip-first N   leave out the first N recorded steps (default 0)\n"
    "  --skip-last N    leave out the last N recorded steps (default 0)\n"
    "  --ops A-B        replay recorded ops A to B (counted from 1, in the kept\n"
    "                   steps) as one pass: a trace whose live tensors exceed\n"
    "                   the memory a plan may take, a range at a time\n"
    "  --iterations I   timed passes over the program (default 3)\n"
    "  --warmup W       untimed passes first (default 1)\n"
    "  --dump-ops FILE  write every op the first pass executes, one line each:\n"
    "                   OP PHASE IN_SHAPES -> OUT_SHAPES : ATTRS (\"-\": stdout)\n"
    "  --record         trace the replay itself with LTTng into a new archive (its\n"
    "                   MANIFEST names the source: replay_of=...); every pass is\n"
    "                   traced, as steps\n"
    "  -o ARCHIVE       with --record: the archive (an error if it exists)\n"
    "  --dir DIR        with --record: folder for a default-named archive (traces)\n";

/* The coverage statement: how much of the recording the replay represents. */
static void print_coverage(const replay_report *r)
{
    double all_ns = r->rec_op_ns + r->demoted_rec_ns;
    if (r->rep_ops == r->rec_ops) {
        printf("coverage:           all %llu recorded ops replayed (100%% of the recorded op time)\n",
               (unsigned long long)r->rec_ops);
    } else {
        printf("coverage:           %llu of %llu recorded ops replayed (%.1f%%), %.3f of %.3f ms recorded op time per "
               "step (%.1f%%)\n",
               (unsigned long long)r->rep_ops, (unsigned long long)r->rec_ops,
               r->rec_ops ? 100.0 * (double)r->rep_ops / (double)r->rec_ops : 0.0, r->rec_op_ns / 1e6, all_ns / 1e6,
               all_ns > 0 ? 100.0 * r->rec_op_ns / all_ns : 0.0);
    }
    if (r->converted_ops)
        printf("                    %llu of the replayed ops have inputs recorded in dtypes the engine lacks "
               "(float64, int64, ...): replayed in float32 and int32\n",
               (unsigned long long)r->converted_ops);
    if (!r->demoted_types) {
        printf("op types not replayed: none\n");
        return;
    }
    printf("\nop types not replayed (class, count, recorded ms per step, share, why; their recorded time is carried "
           "over into the prediction): %u\n",
           r->demoted_types);
    /* by recorded time, descending */
    int order[REPLAY_MAX_TYPES], n = 0;
    for (int i = 0; i < r->ntypes; i++)
        if (r->types[i].why)
            order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && r->types[order[j]].demoted_ns > r->types[order[j - 1]].demoted_ns; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        const replay_row *w = &r->types[order[i]];
        printf("%-38s %-13s %7llu %12.3f %6.1f%%  %s\n", w->name, w->cls, (unsigned long long)w->demoted,
               w->demoted_ns / 1e6, all_ns > 0 ? 100.0 * w->demoted_ns / all_ns : 0.0, w->why);
    }
}

static void print_text(const replay_program *p, const replay_report *r, int threads, int inter)
{
    printf("recorded on: %s, %u thread%s, %u inter-op; %s\n", p->rec.cpu[0] ? p->rec.cpu : "?", p->rec.threads,
           p->rec.threads == 1 ? "" : "s", p->rec.inter, p->rec.blas[0] ? p->rec.blas : "?");
    printf("replayed on: %s, %d thread%s, %d inter-op; %s\n", exec_cpu_model(), threads, threads == 1 ? "" : "s", inter,
           exec_blas_config());
    printf("workload:    %s %s (%s), %u steps replayed, %llu engine ops per step\n\n", p->rec.model, p->rec.mode,
           p->rec.preset, r->steps, (unsigned long long)(r->ops / r->steps));
    int dev = r->rec_dev_ns > 0; /* a GPU trace: the measured device time beside the host time */
    if (dev)
        printf("%-38s %-13s %7s %12s %12s %12s %7s\n", "op type", "class", "count", "recorded ms", "device ms",
               "replayed ms", "ratio");
    else
        printf("%-38s %-13s %7s %12s %12s %7s\n", "op type", "class", "count", "recorded ms", "replayed ms", "ratio");
    /* the replayed op types, by replayed time, descending */
    int order[REPLAY_MAX_TYPES], n = 0;
    for (int i = 0; i < r->ntypes; i++)
        if (r->types[i].count)
            order[n++] = i;
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && r->types[order[j]].rep_ns > r->types[order[j - 1]].rep_ns; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    for (int i = 0; i < n; i++) {
        const replay_row *w = &r->types[order[i]];
        if (dev)
            printf("%-38s %-13s %7llu %12.3f %12.3f %12.3f %7.2f\n", w->name, w->cls, (unsigned long long)w->count,
                   w->rec_ns / 1e6, w->dev_ns / 1e6, w->rep_ns / 1e6, w->rec_ns > 0 ? w->rep_ns / w->rec_ns : 0.0);
        else
            printf("%-38s %-13s %7llu %12.3f %12.3f %7.2f\n", w->name, w->cls, (unsigned long long)w->count,
                   w->rec_ns / 1e6, w->rep_ns / 1e6, w->rec_ns > 0 ? w->rep_ns / w->rec_ns : 0.0);
    }
    printf("\n%-38s %7s %12s %12s %7s %8s %8s\n", "class", "count", "recorded ms", "replayed ms", "ratio", "rec %",
           "rep %");
    for (int c = 0; c < EXEC_CLASS_COUNT; c++) {
        const replay_row *w = &r->classes[c];
        if (!w->count)
            continue;
        printf("%-38s %7llu %12.3f %12.3f %7.2f %7.1f%% %7.1f%%\n", w->name, (unsigned long long)w->count,
               w->rec_ns / 1e6, w->rep_ns / 1e6, w->rec_ns > 0 ? w->rep_ns / w->rec_ns : 0.0,
               r->rec_op_ns > 0 ? 100 * w->rec_ns / r->rec_op_ns : 0.0,
               r->rep_op_ns > 0 ? 100 * w->rep_ns / r->rep_op_ns : 0.0);
    }
    printf("\nop time per step:   recorded %.3f ms, replayed %.3f ms (ratio %.3f)%s\n", r->rec_op_ns / 1e6,
           r->rep_op_ns / 1e6, r->rec_op_ns > 0 ? r->rep_op_ns / r->rec_op_ns : 0.0,
           r->rep_ops == r->rec_ops ? "" : " (the replayed ops)");
    printf("step time:          recorded %.3f ms, predicted here %.3f ms (ratio %.3f)\n", r->rec_step_ns / 1e6,
           r->predicted_step_ns / 1e6, r->rec_step_ns > 0 ? r->predicted_step_ns / r->rec_step_ns : 0.0);
    if (dev)
        printf("device time:        measured %.3f ms per step, %.3f ms of it by the op types above (device ms; "
               "recorded ms and the ratio are host op time)\n",
               r->rec_dev_ns / 1e6, r->typed_dev_ns / 1e6);
    if (r->rec_op_ns + r->demoted_rec_ns <= 0)
        printf("note:               the trace records no op times (an execution trace): recorded times and ratios "
               "are 0\n");
    else if (p->imported && p->rec.cpu[0] && strcmp(p->rec.cpu, exec_cpu_model()) != 0)
        printf("note:               recorded on %s, replayed on this CPU: the ratios are a cross-hardware "
               "prediction, not a check of the replay\n",
               p->rec.cpu);
    exec_mem_stats m;
    exec_graph_mem(p->g, &m);
    double sum = 0, planned = 0;
    for (int i = 0; i < EXEC_ROLE_COUNT; i++)
        sum += (double)m.bytes[i], planned += (double)m.arena[i];
    sum -= (double)m.peak_workspace;
    char a[32], b[32];
    printf("memory:             tensors planned in %s, their sizes summing to %s%s\n",
           exec_bytes_text(a, sizeof a, planned), exec_bytes_text(b, sizeof b, sum),
           p->reuse ? " (a buffer reused once its last reader ran)" : "");
    print_coverage(r);
}

static void print_csv(const replay_report *r)
{
    printf("kind,name,class,count,recorded_ns,replayed_ns,ratio\n");
    for (int i = 0; i < r->ntypes; i++) {
        const replay_row *w = &r->types[i];
        if (w->count)
            printf("op,%s,%s,%llu,%.0f,%.0f,%.4f\n", w->name, w->cls, (unsigned long long)w->count, w->rec_ns,
                   w->rep_ns, w->rec_ns > 0 ? w->rep_ns / w->rec_ns : 0.0);
    }
    /* measured device time (a GPU trace's): its recorded_ns, by op type */
    for (int i = 0; i < r->ntypes; i++) {
        const replay_row *w = &r->types[i];
        if (w->count && w->dev_ns > 0)
            printf("device,%s,%s,%llu,%.0f,%.0f,%.4f\n", w->name, w->cls, (unsigned long long)w->count, w->dev_ns,
                   w->rep_ns, w->rep_ns / w->dev_ns);
    }
    if (r->rec_dev_ns > 0)
        printf("device,all,,,%.0f,,\n", r->rec_dev_ns);
    for (int c = 0; c < EXEC_CLASS_COUNT; c++) {
        const replay_row *w = &r->classes[c];
        if (w->count)
            printf("class,%s,%s,%llu,%.0f,%.0f,%.4f\n", w->name, w->name, (unsigned long long)w->count, w->rec_ns,
                   w->rep_ns, w->rec_ns > 0 ? w->rep_ns / w->rec_ns : 0.0);
    }
    for (int i = 0; i < r->ntypes; i++) {
        const replay_row *w = &r->types[i];
        if (w->why)
            printf("not_replayed,%s,%s,%llu,%.0f,,\n", w->name, w->cls, (unsigned long long)w->demoted, w->demoted_ns);
    }
    printf("step,step,,%u,%.0f,%.0f,%.4f\n", r->steps, r->rec_step_ns, r->predicted_step_ns,
           r->rec_step_ns > 0 ? r->predicted_step_ns / r->rec_step_ns : 0.0);
    /* coverage: invocations over all replayed steps, recorded time per step */
    printf("coverage,replayed,,%llu,%.0f,%.0f,\n", (unsigned long long)r->rep_ops, r->rec_op_ns, r->rep_op_ns);
    printf("coverage,demoted,,%llu,%.0f,,\n", (unsigned long long)(r->rec_ops - r->rep_ops), r->demoted_rec_ns);
}

static void print_json(const replay_program *p, const replay_report *r, int threads, int inter)
{
    json_t *types = json_array(), *classes = json_array();
    for (int i = 0; i < r->ntypes; i++) {
        const replay_row *w = &r->types[i];
        if (!w->count)
            continue;
        json_array_append_new(types,
                              json_pack("{s:s, s:s, s:I, s:f, s:f, s:f, s:I}", "op", w->name, "class", w->cls, "count",
                                        (json_int_t)w->count, "recorded_ns", w->rec_ns, "device_ns", w->dev_ns,
                                        "replayed_ns", w->rep_ns, "converted", (json_int_t)w->converted));
    }
    for (int c = 0; c < EXEC_CLASS_COUNT; c++) {
        const replay_row *w = &r->classes[c];
        if (w->count)
            json_array_append_new(classes,
                                  json_pack("{s:s, s:I, s:f, s:f}", "class", w->name, "count", (json_int_t)w->count,
                                            "recorded_ns", w->rec_ns, "replayed_ns", w->rep_ns));
    }
    json_t *demoted = json_array();
    for (int i = 0; i < r->ntypes; i++) {
        const replay_row *w = &r->types[i];
        if (w->why)
            json_array_append_new(demoted,
                                  json_pack("{s:s, s:I, s:f, s:s, s:s}", "op", w->name, "count", (json_int_t)w->demoted,
                                            "recorded_ns", w->demoted_ns, "class", w->cls, "why", w->why));
    }
    double all_ns = r->rec_op_ns + r->demoted_rec_ns;
    json_t *cov = json_pack("{s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f}", "recorded_ops", (json_int_t)r->rec_ops,
                            "replayed_ops", (json_int_t)r->rep_ops, "converted_ops", (json_int_t)r->converted_ops,
                            "recorded_op_ns", all_ns, "replayed_recorded_ns", r->rec_op_ns, "demoted_recorded_ns",
                            r->demoted_rec_ns, "op_share", r->rec_ops ? (double)r->rep_ops / (double)r->rec_ops : 0.0,
                            "time_share", all_ns > 0 ? r->rec_op_ns / all_ns : 0.0);
    json_t *root = json_pack(
        "{s:i, s:s, s:s, s:s, s:{s:s, s:s, s:i, s:i}, s:{s:s, s:s, s:i, s:i}, s:i, s:I, s:f, s:f, s:f, s:f, s:o, s:o, s:o}",
        "schema", 1, "model", p->rec.model, "mode", p->rec.mode, "preset", p->rec.preset, "recorded_on", "cpu",
        p->rec.cpu, "blas", p->rec.blas, "threads", (int)p->rec.threads, "inter", (int)p->rec.inter, "replayed_on",
        "cpu", exec_cpu_model(), "blas", exec_blas_config(), "threads", threads, "inter", inter, "steps", (int)r->steps,
        "ops_per_step", (json_int_t)(r->ops / r->steps), "recorded_step_ns", r->rec_step_ns, "predicted_step_ns",
        r->predicted_step_ns, "recorded_op_ns", r->rec_op_ns, "replayed_op_ns", r->rep_op_ns, "op_types", types,
        "classes", classes, "not_replayed", demoted);
    json_object_set_new(root, "coverage", cov);
    json_object_set_new(root, "ops_executed", json_integer((json_int_t)r->ops_executed));
    json_object_set_new(root, "recorded_device_ns", json_real(r->rec_dev_ns));
    exec_mem_stats m;
    exec_graph_mem(p->g, &m);
    size_t sum = 0, planned = 0;
    for (int i = 0; i < EXEC_ROLE_COUNT; i++)
        sum += m.bytes[i], planned += m.arena[i];
    json_object_set_new(root, "tensor_bytes", json_integer((json_int_t)(sum - m.peak_workspace)));
    json_object_set_new(root, "planned_bytes", json_integer((json_int_t)planned));
    json_object_set_new(root, "replayed_step_ns", json_real(r->rep_wall_step_ns));
    json_dumpf(root, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(root);
}

/* `--record`: run this replay again as a child traced by the recorder
 * (tracer_record: a session of its own, the trace checked and archived). The
 * child's run_begin names the source's model, mode and preset, so the
 * MANIFEST does; replay_of names the source. The child's report is ours. */
static int record_replay(const char *trace, char **child_args, int nargs, const char *out, const char *dir)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return cli_error("replay", "cannot find the fathom executable (/proc/self/exe)");
    exe[n] = '\0';
    char *argv[48];
    int k = 0;
    argv[k++] = exe;
    argv[k++] = "replay";
    argv[k++] = (char *)trace;
    for (int i = 0; i < nargs && k < 47; i++)
        argv[k++] = child_args[i];
    argv[k] = NULL;
    char src[PATH_MAX];
    const char *base = strrchr(trace, '/');
    snprintf(src, sizeof src, "%s", base && base[1] ? base + 1 : trace);
    tracer_manifest *m = tracer_manifest_create();
    if (!m)
        return cli_error("replay", "out of memory");
    /* the child's: --denormals, passed on, or FATHOM_DENORMALS set this process's too */
    if (tracer_manifest_set(m, "replay_of", src) ||
        tracer_manifest_set(m, "denormals", exec_denormals_name(exec_denormals_get()))) {
        tracer_manifest_destroy(m);
        return cli_error("replay", "%s", base_errmsg());
    }
    char label[PATH_MAX + 16];
    snprintf(label, sizeof label, "replay of %s", src);
    tracer_record_opts o = {
        .argv = argv,
        .out_path = out,
        .out_dir = dir,
        .manifest = m,
        .label = label,
        .progress = isatty(2),
        .show_output = 1,
    };
    tracer_record_result *r = base_calloc(1, sizeof *r);
    if (!r) {
        tracer_manifest_destroy(m);
        return cli_error("replay", "out of memory");
    }
    signal(SIGPIPE, SIG_IGN); /* liblttng-ctl's sockets */
    fflush(stdout);
    tracer_record_status st = tracer_record(&o, r);
    const char *err = base_errmsg();
    tracer_manifest_destroy(m);
    int rc = 0;
    switch (st) {
    case TRACER_RECORD_OK:
        fprintf(stderr, "fathom replay: recorded the replay in %s (%llu ops, %llu steps)\n", r->archive,
                (unsigned long long)r->stats.op_pairs, (unsigned long long)r->stats.steps);
        break;
    case TRACER_RECORD_INCOMPLETE: rc = cli_error("replay", "%s: %s (archived as %s)", label, err, r->archive); break;
    case TRACER_RECORD_INTERRUPTED:
        cli_error("replay", "%s: %s", label, err);
        rc = 128 + (r->interrupted > 0 ? r->interrupted : SIGINT);
        break;
    case TRACER_RECORD_CHILD: /* the replay said why on our stderr */
        rc = WIFEXITED(r->child_status) && WEXITSTATUS(r->child_status) ? WEXITSTATUS(r->child_status) : 1;
        break;
    default: rc = cli_error("replay", "%s: %s", label, err); break;
    }
    base_free(r);
    return rc;
}

static const struct option replay_long_opts[] = {
    { "threads", required_argument, 0, 't' },   { "inter", required_argument, 0, 'i' },
    { "steps", required_argument, 0, 's' },     { "skip-first", required_argument, 0, 'F' },
    { "skip-last", required_argument, 0, 'L' }, { "iterations", required_argument, 0, 'n' },
    { "warmup", required_argument, 0, 'w' },    { "seed", required_argument, 0, 'S' },
    { "format", required_argument, 0, 'f' },    { "help", no_argument, 0, 'h' },
    { "dump-ops", required_argument, 0, 'D' },  { "record", no_argument, 0, 'R' },
    { "dir", required_argument, 0, 'd' },       { "conv-algo", required_argument, 0, 'A' },
    { "bind", required_argument, 0, 'B' },      { "denormals", required_argument, 0, 'Z' },
    { "ops", required_argument, 0, 'O' },       { 0, 0, 0, 0 },
};

/* What `fathom replay` was asked. */
typedef struct replay_args {
    long threads, inter, steps, skip_first, skip_last, iters, warmup;
    unsigned long long seed;
    unsigned long ops_a, ops_b; /* --ops A-B; 0: all */
    int fmt, record;
    exec_conv_algo algo;
    exec_bind bind;
    const char *dump_path, *out, *dir;
    char *child_args[32]; /* the options a --record child gets again */
    char child_flags[16][24];
    int nchild;
} replay_args;

/* The options of argv into a (optind then at the first operand).  -1 to
 * go on; otherwise the exit status: 0 after the help, 2 after a usage
 * error. */
static int parse_args(int argc, char **argv, replay_args *a)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":ho:", replay_long_opts, NULL)) != -1) {
        long *dst = NULL, lo = 0, hi = 1 << 20;
        const char *name = NULL;
        int run_opt = -1; /* a flag of base/run_options.def: its bounds */
        switch (c) {
        case 't': run_opt = CLI_RUN_threads, dst = &a->threads; break;
        case 'i': run_opt = CLI_RUN_inter, dst = &a->inter; break;
        case 's': run_opt = CLI_RUN_steps, dst = &a->steps; break;
        case 'F': dst = &a->skip_first, name = "--skip-first"; break;
        case 'L': dst = &a->skip_last, name = "--skip-last"; break;
        case 'n': dst = &a->iters, lo = 1, name = "--iterations"; break;
        case 'w': dst = &a->warmup, name = "--warmup"; break;
        case 'S':
            if (cli_parse_u64("replay", "--seed", optarg, &a->seed))
                return 2;
            break;
        case 'f':
            if ((a->fmt = cli_parse_format("replay", optarg, 1)) < 0)
                return 2;
            break;
        case 'A':
            if (exec_conv_algo_parse(optarg, &a->algo))
                return cli_usage_error("replay", "%s", exec_errmsg());
            break;
        case 'B':
            if (exec_bind_parse(optarg, &a->bind))
                return cli_usage_error("replay", "%s", exec_errmsg());
            break;
        case 'Z': {
            int d = exec_denormals_from_name(optarg);
            if (d < 0)
                return cli_usage_error("replay", "unknown --denormals '%s' (use flush or keep)", optarg);
            exec_denormals_set(d);
            break;
        }
        case 'O': {
            char *end;
            a->ops_a = strtoul(optarg, &end, 10);
            if (*end == '-' && end[1] >= '0' && end[1] <= '9')
                a->ops_b = strtoul(end + 1, &end, 10);
            if (*end || !a->ops_a || a->ops_b < a->ops_a || a->ops_b > UINT32_MAX || optarg[0] == '-')
                return cli_usage_error("replay", "--ops wants a range of op numbers A-B (1 <= A <= B), not '%s'",
                                       optarg);
            break;
        }
        case 'D':
            if (!*optarg)
                return cli_usage_error("replay", "--dump-ops wants a file (or - for stdout)");
            a->dump_path = optarg;
            break;
        case 'R': a->record = 1; continue;
        case 'o': a->out = optarg; continue;
        case 'd': a->dir = optarg; continue;
        case 'h': fputs(usage_text, stdout); return 0;
        case ':': return cli_usage_error("replay", "%s wants a value", argv[optind - 1]);
        default: return cli_usage_error("replay", "unknown option '%s'; see 'fathom replay --help'", argv[optind - 1]);
        }
        if (run_opt >= 0 && cli_parse_run_option("replay", (cli_run_option)run_opt, optarg, dst))
            return 2;
        if (run_opt < 0 && dst && cli_parse_int("replay", name, optarg, lo, hi, dst))
            return 2;
        for (size_t j = 0; replay_long_opts[j].name; j++) /* again for a --record child */
            if (replay_long_opts[j].val == c &&
                a->nchild + 2 <= (int)(sizeof a->child_args / sizeof a->child_args[0])) {
                char *flag = a->child_flags[a->nchild / 2];
                snprintf(flag, sizeof a->child_flags[0], "--%s", replay_long_opts[j].name);
                a->child_args[a->nchild++] = flag;
                a->child_args[a->nchild++] = optarg;
            }
    }
    return -1;
}

/* A warning naming the op types of the trace that this version does not
 * know (an imported trace's are in its coverage statement instead). */
static void warn_unknown_ops(const replay_program *p)
{
    if (!p->nunknown || p->imported)
        return;
    char names[512] = "";
    size_t len = 0;
    for (uint32_t i = 0; i < p->nunknown && len < sizeof names - 80; i++)
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? ", " : "", p->unknown[i].name);
    fprintf(stderr, "fathom replay: warning: %u op type%s this version does not know, not replayed: %s%s\n",
            p->nunknown, p->nunknown == 1 ? "" : "s", names, len >= sizeof names - 80 ? ", ..." : "");
}

/* The trace loaded, rebuilt into a program and replayed as a asks, and its
 * report printed.  The exit status: 0, or 1. */
static int replay_trace(const char *trace, const replay_args *a)
{
    FILE *dump = NULL;
    tracer_output *dump_out = NULL;
    if (a->dump_path && strcmp(a->dump_path, "-") == 0) {
        dump = stdout;
    } else if (a->dump_path) {
        const char *inputs[] = { trace };
        if (tracer_output_open(a->dump_path, inputs, 1, "--dump-ops", &dump_out))
            return cli_error("replay", "%s", base_errmsg());
        dump = tracer_output_file(dump_out);
    }
    exec_threads_set((int)a->threads);
    replay_program p;
    replay_program_init(&p);
    /* intermediates share buffers by their lifetimes: in node order, one
     * op at a time (more inter-op workers would wait on the buffers) */
    p.reuse = a->inter <= 1;
    replay_load_opts lo = { .skip_first = (uint32_t)a->skip_first,
                            .skip_last = (uint32_t)a->skip_last,
                            .max_steps = (uint32_t)a->steps };
    int rc = 1;
    replay_report *r = base_calloc(1, sizeof *r);
    if (!r) {
        cli_error("replay", "out of memory");
        goto end;
    }

    if (isatty(2))
        fprintf(stderr, "fathom replay: reading %s...\r", trace);
    if (replay_load(trace, &lo, &p) ||
        (a->ops_a && replay_program_keep_ops(&p, (uint32_t)a->ops_a, (uint32_t)a->ops_b)) ||
        replay_program_build(&p, (uint64_t)a->seed)) {
        if (isatty(2))
            fprintf(stderr, "\33[K");
        cli_error("replay", "%s", exec_errmsg());
        goto end;
    }
    warn_unknown_ops(&p);

    if (isatty(2))
        fprintf(stderr, "\33[Kfathom replay: %u ops, %d passes...\r", p.nops, (int)(a->warmup + a->iters));
    replay_opts ro = { .iterations = (int)a->iters,
                       .warmup = (int)a->warmup,
                       .inter = (int)a->inter,
                       .threads = exec_threads_get(),
                       .conv_algo = a->algo,
                       .bind = a->bind,
                       .dump = dump };
    if (replay_run(&p, &ro, r)) {
        cli_error("replay", "%s", exec_errmsg());
        goto end;
    }
    if (isatty(2))
        fprintf(stderr, "\33[K");
    if (dump_out) {
        tracer_output_status ost = tracer_output_commit(dump_out);
        dump_out = NULL;
        if (ost) {
            cli_error("replay", "%s", base_errmsg());
            goto end;
        }
    }

    if (a->fmt == CLI_JSON)
        print_json(&p, r, exec_threads_get(), (int)a->inter);
    else if (a->fmt == CLI_CSV)
        print_csv(r);
    else
        print_text(&p, r, exec_threads_get(), (int)a->inter);
    rc = 0;
end:
    tracer_output_abort(dump_out); /* a failed replay publishes no dump */
    base_free(r);
    replay_program_destroy(&p);
    return rc;
}

int cmd_replay(int argc, char **argv)
{
    replay_args a = {
        .inter = 1,
        .iters = 3,
        .warmup = 1,
        .seed = 1,
        .fmt = CLI_TEXT,
        .algo = EXEC_CONV_DEFAULT,
        .bind = EXEC_BIND_DEFAULT,
    };
    int rc = parse_args(argc, argv, &a);
    if (rc >= 0)
        return rc;
    if (optind != argc - 1)
        return cli_usage_error(
            "replay", optind >= argc ? "which trace? see 'fathom replay --help'" : "one trace at a time (got '%s' too)",
            optind < argc - 1 ? argv[optind + 1] : "");
    if ((a.out || a.dir) && !a.record)
        return cli_usage_error("replay", "%s goes with --record", a.out ? "-o" : "--dir");
    if (a.out && a.dir)
        return cli_usage_error("replay", "-o cannot be combined with --dir");
    if (a.record) {
        if (getenv("FATHOM_TRACE") && strcmp(getenv("FATHOM_TRACE"), "1") == 0)
            return cli_usage_error("replay", "--record inside a traced run");
        const char *inputs[] = { argv[optind] };
        if (a.out && tracer_output_check(a.out, inputs, 1, "-o"))
            return cli_error("replay", "%s", base_errmsg());
        if (a.dir && tracer_archive_check_dir(a.dir))
            return cli_usage_error("replay", "--dir: %s", base_errmsg());
        return record_replay(argv[optind], a.child_args, a.nchild, a.out, a.dir);
    }
    return replay_trace(argv[optind], &a);
}
