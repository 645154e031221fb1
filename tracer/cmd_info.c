/* cmd_info.c -- `fathom info ARCHIVE|DIR`: what a recorded trace holds
 * (man fathom-info(1)). */
#define _GNU_SOURCE
#include "base/alloc.h"
#include "base/cli.h"
#include "base/error.h"
#include "tracer/archive.h"
#include "tracer/tracer_cmds.h"
#include "tracer/reader.h"
#include "tracer/stats.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "info"

static void usage(FILE *f)
{
    fprintf(f, "usage: fathom info ARCHIVE|DIR [--format text|json] [--strict]\n\n"
               "Shows what a recorded trace holds: its MANIFEST, the events per name, discarded\n"
               "events, steps, and the ops with their total time (op_end - op_begin of each seq).\n"
               "Reads a .tar.zst archive (extracted safely into a temporary directory) or a CTF\n"
               "directory. The MANIFEST's typed keys are range-checked and its schema compared\n"
               "with the trace's: each problem is a warning naming the key, an error with\n"
               "--strict. See fathom-info(1).\n");
}

static const char *kind_name(tracer_trace_kind k)
{
    return k == TRACER_TRACE_ARCHIVE ? "archive" : k == TRACER_TRACE_DIR ? "directory" : "live";
}

static int print_json(const tracer_trace *t, const tracer_stats *s)
{
    json_t *o = json_object(), *man = json_object(), *ev = json_object(), *ops = json_object(), *run = json_object();
    const tracer_manifest *m = tracer_trace_manifest(t);
    json_object_set_new(o, "source", json_string(tracer_trace_source(t)));
    json_object_set_new(o, "kind", json_string(kind_name(tracer_trace_get_kind(t))));
    for (size_t i = 0; m && i < tracer_manifest_count(m); i++)
        json_object_set_new(man, tracer_manifest_key_at(m, i), json_string(tracer_manifest_value_at(m, i)));
    json_object_set_new(o, "manifest", m ? man : json_null());
    if (!m)
        json_decref(man);
    for (size_t i = 0; i < s->nnames; i++)
        json_object_set_new(ev, s->names[i].name, json_integer((json_int_t)s->names[i].count));
    json_object_set_new(o, "events", ev);
    json_object_set_new(o, "events_total", json_integer((json_int_t)s->events));
    json_object_set_new(o, "discarded_events", json_integer((json_int_t)s->discarded_events));
    json_object_set_new(o, "discarded_packets", json_integer((json_int_t)s->discarded_packets));
    json_object_set_new(o, "steps", json_integer((json_int_t)s->steps));
    json_object_set_new(o, "duration_ns", json_integer((json_int_t)(s->last_ns - s->first_ns)));
    if (s->schema == 1 || (s->op_begins + s->op_ends && !s->ops_events)) {
        json_object_set_new(ops, "begun", json_integer((json_int_t)s->op_begins));
        json_object_set_new(ops, "ended", json_integer((json_int_t)s->op_ends));
        json_object_set_new(ops, "pairs", json_integer((json_int_t)s->op_pairs));
        json_object_set_new(ops, "unmatched", json_integer((json_int_t)s->op_unmatched));
    } else {
        json_object_set_new(ops, "records", json_integer((json_int_t)s->op_pairs));
        json_object_set_new(ops, "ops_events", json_integer((json_int_t)s->ops_events));
        json_object_set_new(ops, "nodes_defined", json_integer((json_int_t)s->node_defs));
        json_object_set_new(ops, "undefined_nodes", json_integer((json_int_t)s->undefined_nodes));
        json_object_set_new(ops, "malformed_events", json_integer((json_int_t)s->malformed));
    }
    json_object_set_new(ops, "run_end_ops", json_integer((json_int_t)s->run_end_ops));
    json_object_set_new(ops, "time_ns", json_integer((json_int_t)s->op_time_ns));
    json_object_set_new(o, "ops", ops);
    if (s->runs) {
        json_object_set_new(run, "schema", json_integer(s->schema));
        json_object_set_new(run, "model", json_string(s->model));
        json_object_set_new(run, "mode", json_string(s->mode));
        json_object_set_new(run, "preset", json_string(s->preset));
        json_object_set_new(run, "batch", json_integer(s->batch));
        json_object_set_new(run, "steps", json_integer(s->steps_planned));
        json_object_set_new(run, "threads", json_integer(s->threads));
        json_object_set_new(run, "inter", json_integer(s->inter));
        json_object_set_new(run, "seed", json_integer((json_int_t)s->seed));
        json_object_set_new(run, "version", json_string(s->version));
        json_object_set_new(run, "blas", json_string(s->blas));
        json_object_set_new(run, "cpu", json_string(s->cpu));
        json_object_set_new(run, "status", json_integer(s->run_end_status));
        json_object_set_new(o, "run", run);
    } else {
        json_decref(run);
        json_object_set_new(o, "run", json_null());
    }
    int rc = json_dumpf(o, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
    fputc('\n', stdout);
    json_decref(o);
    return rc == 0 ? 0 : cli_error(CMD, "cannot write JSON");
}

static void print_text(const tracer_trace *t, const tracer_stats *s)
{
    const tracer_manifest *m = tracer_trace_manifest(t);
    printf("source: %s (%s)\n", tracer_trace_source(t), kind_name(tracer_trace_get_kind(t)));
    if (m) {
        printf("manifest:\n");
        for (size_t i = 0; i < tracer_manifest_count(m); i++) {
            const char *k = tracer_manifest_key_at(m, i);
            char buf[1024];
            if (strncmp(k, "events.", 7) != 0) /* counts come below, from the trace itself */
                printf("  %-12s %s\n", k, base_printable(tracer_manifest_value_at(m, i), buf, sizeof buf));
        }
    } else {
        printf("manifest: none\n");
    }
    if (s->runs)
        printf("run: %s %s %s, batch %" PRIu32 ", %" PRIu32 " step%s, %" PRIu32 " thread%s, %" PRIu32
               " inter, seed %" PRIu64 ", schema %" PRIu32 ", status %" PRId32 "\n",
               s->model, s->mode, s->preset, s->batch, s->steps_planned, s->steps_planned == 1 ? "" : "s", s->threads,
               s->threads == 1 ? "" : "s", s->inter, s->seed, s->schema, s->run_end_status);
    printf("events:\n");
    for (size_t i = 0; i < s->nnames; i++) {
        char buf[256];
        printf("  %-22s %12" PRIu64 "\n", base_printable(s->names[i].name, buf, sizeof buf), s->names[i].count);
    }
    if (s->other_names)
        printf("  %-22s %12" PRIu64 "\n", "(other)", s->other_names);
    printf("  %-22s %12" PRIu64 "\n", "total", s->events);
    printf("discarded events: %" PRIu64 "%s\n", s->discarded_events,
           s->discarded_events ? "  <-- THIS TRACE IS INCOMPLETE" : "");
    if (s->discarded_packets)
        printf("discarded packets: %" PRIu64 "  <-- THIS TRACE IS INCOMPLETE\n", s->discarded_packets);
    printf("steps: %" PRIu64 "\n", s->steps);
    if (s->schema == 1 || (s->op_begins + s->op_ends && !s->ops_events))
        printf("ops: %" PRIu64 " begun, %" PRIu64 " ended, %" PRIu64 " matched", s->op_begins, s->op_ends, s->op_pairs);
    else
        printf("ops: %" PRIu64 " records in %" PRIu64 " ops events, %" PRIu64 " nodes defined", s->op_pairs,
               s->ops_events, s->node_defs);
    if (s->op_unmatched)
        printf(", %" PRIu64 " unmatched", s->op_unmatched);
    if (s->undefined_nodes)
        printf(", %" PRIu64 " naming undefined nodes", s->undefined_nodes);
    if (s->malformed)
        printf(", %" PRIu64 " malformed events", s->malformed);
    if (s->negative_time)
        printf(", %" PRIu64 " with impossible times (0 ns)", s->negative_time);
    if (s->run_ends)
        printf("; run_end says %" PRIu64, s->run_end_ops);
    printf("\ntotal op time: %.6f s\n", (double)s->op_time_ns * 1e-9);
    if (s->events)
        printf("duration: %.6f s\n", (double)(s->last_ns - s->first_ns) * 1e-9);
}

/* The MANIFEST's typed keys and its schema against the trace's, one warning
 * line each on stderr; returns the count of problems. */
static size_t manifest_problems(const char *path, const tracer_trace *t, const tracer_stats *s, int strict)
{
    const tracer_manifest *m = tracer_trace_manifest(t);
    char lines[4096], msg[256];
    if (!m)
        return 0; /* "manifest: none" says it */
    size_t n = tracer_manifest_check(m, lines, sizeof lines);
    for (char *sv = NULL, *l = strtok_r(lines, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv))
        fprintf(stderr, "fathom info: %s: %s: MANIFEST %s\n", strict ? "error" : "warning", path, l);
    if (s->runs && tracer_manifest_check_schema(m, s->schema, msg, sizeof msg)) {
        fprintf(stderr, "fathom info: %s: %s: %s\n", strict ? "error" : "warning", path, msg);
        n++;
    }
    return strict ? n : 0;
}

int cmd_info(int argc, char **argv)
{
    const char *path = NULL;
    int fmt = CLI_TEXT, strict = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(argv[i], "--format")) {
            if (i + 1 >= argc)
                return cli_usage_error(CMD, "--format wants text or json");
            if ((fmt = cli_parse_format(CMD, argv[++i], 0)) < 0)
                return 2;
            continue;
        }
        if (!strcmp(argv[i], "--strict")) {
            strict = 1;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            return cli_usage_error(CMD, "unknown option '%s'", argv[i]);
        if (path)
            return cli_usage_error(CMD, "one trace at a time ('%s' is extra)", argv[i]);
        path = argv[i];
    }
    if (!path)
        return cli_usage_error(CMD, "which trace? usage: fathom info ARCHIVE|DIR [--format text|json]");
    if (!strncmp(path, "net://", 6) || !strncmp(path, "net6://", 7))
        return cli_usage_error(CMD, "%s: a live session; fathom info reads archives and CTF directories", path);
    tracer_trace *t = NULL;
    if (tracer_read_open(path, &t) != TRACER_OK)
        return cli_error(CMD, "%s", base_errmsg());
    for (size_t i = 0; i < tracer_trace_skipped_count(t); i++) {
        char buf[1024]; /* a folder's name: no control byte reaches the terminal */
        fprintf(stderr, "fathom info: warning: %s: skipped %s\n", path,
                base_printable(tracer_trace_skipped(t, i), buf, sizeof buf));
    }
    tracer_stats *s = base_calloc(1, sizeof *s);
    int rc = 0;
    if (!s)
        rc = cli_error(CMD, "out of memory");
    else if (tracer_stats_collect(t, s) != TRACER_OK)
        rc = strstr(base_errmsg(), path) ? cli_error(CMD, "%s", base_errmsg())
                                         : cli_error(CMD, "%s: %s", path, base_errmsg());
    else if (manifest_problems(path, t, s, strict))
        rc = cli_error(CMD, "%s: --strict: giving up on the MANIFEST problems above", path);
    else if (fmt == CLI_JSON)
        rc = print_json(t, s);
    else
        print_text(t, s);
    if (rc == 0 && s && (s->discarded_events || s->discarded_packets))
        fprintf(stderr, "fathom info: warning: %s: %" PRIu64 " events were discarded; this trace is incomplete\n", path,
                s->discarded_events);
    base_free(s);
    tracer_trace_close(t);
    return rc;
}
