/* cmd_export.c -- `fathom export --perfetto [-o FILE] TRACE`: a trace as a
 * Chrome trace-event JSON timeline (export.h).  FILE follows the output rule
 * of tracer/output.h: never an existing path nor the input, written under a
 * temporary name beside it and published when complete; a failed or
 * interrupted export leaves nothing. */
#define _GNU_SOURCE
#include "analyze/analyze_cmds.h"

#include "analyze/export.h"
#include "base/cli.h"
#include "tracer/output.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "usage: fathom export --perfetto [-o FILE] TRACE\n"
               "\n"
               "Writes the trace (an archive, a CTF directory or a net:// lttng-live URL) as a\n"
               "timeline in the Chrome trace-event JSON format, which ui.perfetto.dev and\n"
               "chrome://tracing open: every op a slice on its thread (name: the op type,\n"
               "category: its class; arguments: seq, node, phase, inputs, outputs, attrs, and\n"
               "flops and bytes at its end), every step a slice around its ops, and the live\n"
               "tensor memory by role as a counter.\n"
               "\n"
               "  --perfetto      the format (the only one)\n"
               "  -o FILE         the file to write (default: the trace's name with .json, in\n"
               "                  this folder); '-' writes to standard output.  An existing\n"
               "                  file is never overwritten.\n"
               "\nSee fathom-export(1).\n");
}

/* The default output: the trace's last path component, less .tar.zst /
 * .tar / a trailing slash, plus .json. */
static void default_name(const char *trace, char *buf, size_t len)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s", trace);
    size_t n = strlen(tmp);
    while (n > 1 && tmp[n - 1] == '/')
        tmp[--n] = '\0';
    char *base = basename(tmp);
    static const char *const ext[] = { ".tar.zst", ".tar.gz", ".tar.xz", ".tar", ".zst" };
    for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
        size_t b = strlen(base), e = strlen(ext[i]);
        if (b > e && strcmp(base + b - e, ext[i]) == 0) {
            base[b - e] = '\0';
            break;
        }
    }
    snprintf(buf, len, "%s.json", strcmp(base, "/") == 0 || strcmp(base, ".") == 0 ? "trace" : base);
}

int cmd_export(int argc, char **argv)
{
    const char *trace = NULL, *out_path = NULL;
    int perfetto = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--perfetto") == 0) {
            perfetto = 1;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (i + 1 >= argc || !*argv[i + 1])
                return cli_usage_error("export", "-o wants a file");
            out_path = argv[++i];
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("export", "unknown option '%s'", a);
        } else if (trace) {
            return cli_usage_error("export", "export takes one trace; a second: '%s'", a);
        } else {
            trace = a;
        }
    }
    if (!perfetto)
        return cli_usage_error("export", "export wants a format: --perfetto");
    if (!trace)
        return cli_usage_error("export", "export wants a TRACE");
    char dflt[4200];
    if (!out_path) {
        default_name(trace, dflt, sizeof dflt);
        out_path = dflt;
    }
    analyze_export_stats st;
    if (strcmp(out_path, "-") == 0) {
        if (analyze_export_perfetto(trace, stdout, &st) != 0 || fflush(stdout) != 0) {
            fprintf(stderr, "fathom export: %s\n", base_errmsg());
            return 1;
        }
        return 0;
    }
    tracer_output *o = NULL;
    const char *inputs[] = { trace };
    if (tracer_output_open(out_path, inputs, 1, NULL, &o)) {
        fprintf(stderr, "fathom export: %s; choose another -o\n", base_errmsg());
        return 1;
    }
    if (analyze_export_perfetto(trace, tracer_output_file(o), &st) != 0) {
        tracer_output_abort(o);
        fprintf(stderr, "fathom export: %s\n", base_errmsg());
        return 1;
    }
    if (tracer_output_commit(o)) {
        fprintf(stderr, "fathom export: %s\n", base_errmsg());
        return 1;
    }
    printf("%s: %llu events (%llu ops, %llu steps)\n", out_path, (unsigned long long)st.events,
           (unsigned long long)st.ops, (unsigned long long)st.steps);
    return 0;
}
