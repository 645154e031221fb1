/* read.c -- a trace source into a profile (see read.h): tracer/read.h's
 * graph with the fathom sink (sink.h) as its consumer. */
#include "analyze/read.h"

#include "analyze/sink.h"
#include "tracer/read.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int fill_from_manifest(analyze_profile *p, const tracer_manifest *m)
{
    if (p->meta.have_begin || !m)
        return 0;
    char **dst[] = { &p->meta.model, &p->meta.mode, &p->meta.preset, &p->meta.cpu, &p->meta.blas };
    const char *keys[] = { "model", "mode", "preset", "cpu", "blas" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = tracer_manifest_get(m, keys[i]);
        if (v && !*dst[i] && !(*dst[i] = strdup(v)))
            return -1;
    }
    return 0;
}

static int sink_message(void *ctx, const bt_message *msg, char *err, size_t errlen)
{
    analyze_sink *sink = ctx;
    if (analyze_sink_consume(sink, msg) == 0)
        return 0;
    snprintf(err, errlen, "%s", analyze_sink_error(sink));
    return -1;
}

int analyze_read(const char *source, const analyze_read_options *o, analyze_profile **out, char *err,
                 size_t errlen)
{
    *out = NULL;
    tracer_trace *t = NULL;
    if (tracer_read_open(source, &t, err, errlen))
        return -1;
    analyze_read_options none = { 0, 0 };
    if (!o)
        o = &none;
    analyze_sink_options so = { .skip_first = o->skip_first, .skip_last = o->skip_last, .per_trace = 0,
                                .source = source };
    analyze_sink *sink = analyze_sink_create(&so);
    int rc = -1;
    size_t n = 0;
    analyze_profile **v = NULL;
    if (!sink) {
        fail(err, errlen, "%s: out of memory", source);
        goto end;
    }
    if (tracer_read_run(t, source, sink_message, sink, err, errlen))
        goto end;
    v = analyze_sink_take(sink, &n);
    if (!v) {
        fail(err, errlen, "%s: out of memory", source);
        goto end;
    }
    analyze_profile *p = n ? v[0] : NULL;
    if (!p || p->diag.events == p->diag.foreign_events) {
        fail(err, errlen, "%s: no fathom events in the trace (%" PRIu64 " events of other providers)", source,
             p ? p->diag.foreign_events : 0);
        goto end;
    }
    if (fill_from_manifest(p, tracer_trace_manifest(t))) {
        fail(err, errlen, "%s: out of memory", source);
        goto end;
    }
    *out = p;
    v[0] = NULL;
    rc = 0;
end:
    for (size_t i = 0; i < n; i++)
        analyze_profile_destroy(v[i]);
    free(v);
    analyze_sink_destroy(sink);
    tracer_trace_close(t);
    return rc;
}
