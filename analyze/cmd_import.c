/* cmd_import.c -- `fathom import FILE... [-o ARCHIVE | --dir DIR]`: each
 * PyTorch trace through src.fathom.pytorch -> sink.ctf.fs into a private
 * temporary directory, then archived (tracer/archive.h) with a MANIFEST
 * saying where it came from.  Nothing is written at the output path unless
 * the whole import succeeded; an existing file is never overwritten. */
#define _GNU_SOURCE /* mkdtemp */
#include "analyze/import.h"
#include "analyze/analyze_status.h"
#include "base/cli.h"
#include "base/error.h"
#include "tracer/archive.h"
#include "tracer/output.h"

#include <babeltrace2/babeltrace.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: fathom import [-o ARCHIVE | --dir DIR] [--model NAME] [--profile KINETO] FILE...\n"
               "\n"
               "Turn PyTorch traces into fathom archives (schema 2), one per FILE:\n"
               "  a profiler trace (torch.profiler's Chrome-trace JSON, plain or .gz, or the\n"
               "  autograd profiler's export_chrome_trace array), or an execution trace\n"
               "  (ExecutionGraphObserver / ExecutionTraceObserver JSON).\n"
               "\n"
               "  -o ARCHIVE    write this archive (one FILE only; never overwritten)\n"
               "  --dir DIR     write archives into DIR under default names (default: traces)\n"
               "  --model NAME  the model name the archive gives (default: from the file name)\n"
               "  --profile KINETO  link the execution trace FILE with the profiler trace of\n"
               "                the same run: its ops take the measured times\n"
               "\n"
               "Prints each archive's path. See fathom-import(1).\n");
}

static int usage_error(const char *msg, const char *arg)
{
    return cli_usage_error("import", "%s%s%s (fathom import --help)", msg, arg ? arg : "", arg ? "'" : "");
}

/* The first cause of the current thread's Babeltrace2 error (then cleared). */
static void bt_error_message(analyze_status st, const char *dflt)
{
    char buf[BASE_ERRMSG_MAX];
    const bt_error *e = bt_current_thread_take_error();
    const char *msg = NULL;
    if (e && bt_error_get_cause_count(e) > 0) /* the first cause names the problem, the later ones its callers */
        msg = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0));
    snprintf(buf, sizeof buf, "%s", msg && *msg ? msg : dflt);
    for (char *p = buf; *p; p++) /* one line */
        if (*p == '\n')
            *p = ' ';
    bt_error_release(e);
    analyze_fail(st, "%s", buf);
}

/* FILE -> CTF trace in ctf_dir; sum filled.  0, or -1 with the thread's message. */
static int convert(const char *file, const char *model, const char *profile, const char *ctf_dir,
                   analyze_import_summary *sum)
{
    int rc = -1;
    const bt_plugin *ctf = NULL;
    bt_component_class_source *src_cls = analyze_import_source_class();
    bt_graph *graph = bt_graph_create(0);
    bt_value *sp = bt_value_map_create(), *kp = bt_value_map_create(), *inputs = bt_value_array_create();
    const bt_component_source *src = NULL;
    const bt_component_sink *sink = NULL;
    if (!src_cls || !graph || !sp || !kp || !inputs || bt_value_array_append_string_element(inputs, file) ||
        bt_value_map_insert_entry(sp, "inputs", inputs) ||
        (model && bt_value_map_insert_string_entry(sp, "model", model)) ||
        (profile && bt_value_map_insert_string_entry(sp, "profile", profile)) ||
        bt_value_map_insert_string_entry(kp, "path", ctf_dir) ||
        bt_value_map_insert_bool_entry(kp, "assume-single-trace", BT_TRUE) ||
        bt_value_map_insert_bool_entry(kp, "quiet", BT_TRUE)) {
        analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", file);
        goto end;
    }
    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) != BT_PLUGIN_FIND_STATUS_OK) {
        bt_current_thread_clear_error();
        analyze_fail(ANALYZE_ERR_INPUT, "Babeltrace2's ctf plugin not found (is babeltrace2 installed?)");
        goto end;
    }
    const bt_component_class_sink *sink_cls = bt_plugin_borrow_sink_component_class_by_name_const(ctf, "fs");
    if (!sink_cls) {
        analyze_fail(ANALYZE_ERR_INPUT, "Babeltrace2 lacks sink.ctf.fs");
        goto end;
    }
    if (bt_graph_add_source_component_with_initialize_method_data(
            graph, src_cls, "pytorch", sp, sum, BT_LOGGING_LEVEL_NONE, &src) != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        bt_error_message(ANALYZE_ERR_INPUT, "cannot read the trace");
        goto end;
    }
    if (bt_graph_add_sink_component(graph, sink_cls, "ctf", kp, BT_LOGGING_LEVEL_NONE, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_connect_ports(graph, bt_component_source_borrow_output_port_by_index_const(src, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        bt_error_message(ANALYZE_ERR_INPUT, "cannot build the graph");
        goto end;
    }
    bt_graph_run_status st;
    while ((st = bt_graph_run(graph)) == BT_GRAPH_RUN_STATUS_AGAIN)
        ;
    if (st != BT_GRAPH_RUN_STATUS_OK) {
        bt_error_message(st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR ? ANALYZE_ERR_NOMEM : ANALYZE_ERR_IO,
                         st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR ? "out of memory" : "cannot write the CTF trace");
        goto end;
    }
    rc = 0;
end:
    bt_graph_put_ref(graph);
    bt_component_class_source_put_ref(src_cls);
    bt_plugin_put_ref(ctf);
    bt_value_put_ref(inputs);
    bt_value_put_ref(sp);
    bt_value_put_ref(kp);
    return rc;
}

/* The rank a file's name gives: "rank3", "rank-70", "RANK_2" ("rank" not
 * after a letter, then at most one of '-', '_', '.', then digits); -1 when
 * it gives none. */
static int64_t rank_of_name(const char *base)
{
    for (const char *p = base; (p = strcasestr(p, "rank")); p++) {
        if (p > base && isalpha((unsigned char)p[-1]))
            continue;
        const char *d = p + 4;
        if (*d == '-' || *d == '_' || *d == '.')
            d++;
        if (!isdigit((unsigned char)*d))
            continue;
        int64_t r = 0;
        for (int n = 0; isdigit((unsigned char)*d) && n < 9; d++, n++)
            r = r * 10 + (*d - '0');
        if (!isdigit((unsigned char)*d))
            return r;
    }
    return -1;
}

/* What the traces of one command said of their ranks: for the one note
 * on those without distributedInfo. */
typedef struct ranks_seen {
    int ranked;        /* traces with a rank (distributedInfo or the file's name) */
    int undistributed; /* traces without distributedInfo */
    char first[256];   /* the first of those */
} ranks_seen;

static int import_one(const char *file, const char *model, const char *profile, const char *out, const char *dir,
                      ranks_seen *rs)
{
    char tmpl[4096], ctf_dir[4200], path[4096], host[128];
    const char *tmp = getenv("TMPDIR");
    struct stat sb;
    analyze_import_summary sum;
    tracer_manifest *m = NULL;
    int rc = 1;
    memset(&sum, 0, sizeof sum);
    if (stat(file, &sb) != 0) {
        fprintf(stderr, "fathom import: %s: %s\n", file, strerror(errno));
        return 1;
    }
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr, "fathom import: %s: not a regular file\n", file);
        return 1;
    }
    /* the temporary tree is registered for removal on SIGINT/SIGTERM/SIGHUP;
     * its name carries the pid, so a later import removes what a SIGKILLed
     * one left */
    const char *tmpbase = tmp && *tmp ? tmp : "/tmp";
    tracer_cleanup_stale(tmpbase, "fathom-import-");
    snprintf(tmpl, sizeof tmpl, "%s/fathom-import-%ld-XXXXXX", tmpbase, (long)getpid());
    tracer_cleanup_mask mask;
    tracer_cleanup_block(&mask);
    if (!mkdtemp(tmpl)) {
        int e = errno;
        tracer_cleanup_unblock(&mask);
        fprintf(stderr, "fathom import: cannot create a temporary directory in %s: %s\n", tmpbase, strerror(e));
        return 1;
    }
    int cleanup_id = tracer_cleanup_add(tmpl, true);
    tracer_cleanup_unblock(&mask);
    snprintf(ctf_dir, sizeof ctf_dir, "%s/trace", tmpl);
    if (convert(file, model, profile, ctf_dir, &sum)) {
        fprintf(stderr, "fathom import: %s\n", base_errmsg());
        goto end;
    }
    const char *base = strrchr(file, '/');
    base = base ? base + 1 : file;
    /* the rank: distributedInfo's, else the file name's (the world size
     * then unknown) */
    int64_t rank = sum.world_size ? sum.rank : rank_of_name(base);
    if (!sum.world_size && !strcmp(sum.format, "pytorch-profiler") && !rs->undistributed++)
        snprintf(rs->first, sizeof rs->first, "%s", base);
    rs->ranked += rank >= 0;
    if (gethostname(host, sizeof host) != 0)
        snprintf(host, sizeof host, "unknown");
    host[sizeof host - 1] = '\0';
    char created[32];
    time_t now = time(NULL);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    if (!(m = tracer_manifest_create()) || tracer_manifest_set_u64(m, "schema", 2) ||
        tracer_manifest_set(m, "source", sum.format) || tracer_manifest_set(m, "source.file", base) ||
        tracer_manifest_set_u64(m, "source.size", (uint64_t)sb.st_size) ||
        tracer_manifest_set_u64(m, "source.events", sum.events) || tracer_manifest_set(m, "model", sum.model) ||
        tracer_manifest_set(m, "mode", sum.mode) || tracer_manifest_set(m, "preset", "imported") ||
        tracer_manifest_set(m, "host", host) || tracer_manifest_set(m, "created", created) ||
        tracer_manifest_set_u64(m, "steps", sum.steps) || tracer_manifest_set_u64(m, "ops", sum.ops) ||
        tracer_manifest_set_u64(m, "nodes", sum.nodes) || tracer_manifest_set_u64(m, "threads", sum.tracks) ||
        (sum.devices && (tracer_manifest_set(m, "source.device", sum.device) ||
                         tracer_manifest_set_u64(m, "source.devices", sum.devices))) ||
        (profile &&
         (tracer_manifest_set(m, "source.profile", strrchr(profile, '/') ? strrchr(profile, '/') + 1 : profile) ||
          tracer_manifest_set_u64(m, "source.linked", sum.linked))) ||
        (sum.device_streams[0] && tracer_manifest_set(m, "device.streams", sum.device_streams)) ||
        (rank >= 0 && (tracer_manifest_set_u64(m, "source.rank", (uint64_t)rank) ||
                       tracer_manifest_set(m, "source.rank_from", sum.world_size ? "distributedInfo" : "file name"))) ||
        (sum.world_size && tracer_manifest_set_u64(m, "source.world_size", (uint64_t)sum.world_size)) ||
        (sum.backend[0] && tracer_manifest_set(m, "source.backend", sum.backend)) ||
        (sum.pg_count && tracer_manifest_set_u64(m, "source.pg_count", (uint64_t)sum.pg_count)) ||
        (sum.nccl_version[0] && tracer_manifest_set(m, "source.nccl_version", sum.nccl_version))) {
        fprintf(stderr, "fathom import: %s: %s\n", file, m ? base_errmsg() : "out of memory");
        goto end;
    }
    tracer_archive_status st;
    if (out) {
        st = tracer_archive_write(out, ctf_dir, m);
        snprintf(path, sizeof path, "%s", out);
    } else {
        st = tracer_archive_write_default(dir, ctf_dir, m, (time_t)-1, path, sizeof path);
    }
    if (st != TRACER_ARCHIVE_OK) {
        if (st == TRACER_ARCHIVE_EEXIST && out)
            fprintf(stderr, "fathom import: %s exists: nothing is overwritten; choose another -o\n", out);
        else
            fprintf(stderr, "fathom import: %s\n", base_errmsg());
        goto end;
    }
    printf("%s\n", path);
    rc = 0;
end:
    tracer_manifest_destroy(m);
    tracer_cleanup_block(&mask); /* not while a signal removes it */
    tracer_remove_tree(tmpl);
    tracer_cleanup_forget(cleanup_id);
    tracer_cleanup_unblock(&mask);
    return rc;
}

int cmd_import(int argc, char **argv)
{
    const char *out = NULL, *dir = NULL, *model = NULL, *profile = NULL;
    int nfiles = 0, i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (++i == argc)
                return usage_error("-o wants a file", NULL);
            out = argv[i];
        } else if (strcmp(a, "--dir") == 0) {
            if (++i == argc)
                return usage_error("--dir wants a directory", NULL);
            dir = argv[i];
        } else if (strcmp(a, "--model") == 0) {
            if (++i == argc || !*argv[i])
                return usage_error("--model wants a name", NULL);
            char shown[64];
            if (base_printable(argv[i], shown, sizeof shown) != argv[i])
                return usage_error("--model wants a name without control characters, not '", shown);
            model = argv[i];
        } else if (strcmp(a, "--profile") == 0) {
            if (++i == argc || !*argv[i])
                return usage_error("--profile wants a profiler trace", NULL);
            profile = argv[i];
        } else if (strcmp(a, "--") == 0) {
            nfiles += argc - i - 1;
            break;
        } else if (a[0] == '-' && a[1]) {
            return usage_error("unknown option '", a);
        } else {
            nfiles++;
        }
    }
    if (!nfiles)
        return usage_error("import wants a FILE", NULL);
    if (out && dir)
        return usage_error("-o and --dir exclude each other", NULL);
    if (out && nfiles > 1)
        return usage_error("-o names one archive: give one FILE, or --dir for several", NULL);
    if (profile && nfiles > 1)
        return usage_error("--profile links one execution trace: give one FILE", NULL);
    if (!out && tracer_output_check_folder(dir ? dir : "traces", "--dir")) /* before any conversion */
        return cli_error("import", "%s", base_errmsg());
    int rc = 0, after_dashes = 0;
    ranks_seen rs = { 0 };
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!after_dashes) {
            if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0 || strcmp(a, "--dir") == 0 ||
                strcmp(a, "--model") == 0 || strcmp(a, "--profile") == 0) {
                i++;
                continue;
            }
            if (strcmp(a, "--") == 0) {
                after_dashes = 1;
                continue;
            }
        }
        if (import_one(a, model, profile, out, dir, &rs))
            rc = 1;
    }
    /* one note for the traces of a distributed job that lack distributedInfo */
    if (rs.ranked && rs.undistributed) {
        char shown[256];
        fprintf(stderr,
                "fathom import: %d trace%s without distributedInfo (the first: %s): the rank is the file "
                "name's (rankN) or unknown, the world size unknown\n",
                rs.undistributed, rs.undistributed == 1 ? "" : "s", base_printable(rs.first, shown, sizeof shown));
    }
    return rc;
}
