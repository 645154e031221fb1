/* read_trace.c -- a trace source into a profile (see read_trace.h): the one decoder,
 * isolated in a child process (tracer/isolate.h), feeding the fathom sink's
 * callbacks (sink.h). */
#include "analyze/read_trace.h"
#include "analyze/analyze_status.h"

#include "analyze/device.h"
#include "analyze/sink.h"
#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "tracer/isolate.h"
#include "tracer/reader.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A MANIFEST's number under key, or -1. */
static int64_t manifest_int(const tracer_manifest *m, const char *key)
{
    const char *v = tracer_manifest_get(m, key);
    char *end;
    if (!v || !isdigit((unsigned char)*v))
        return -1;
    unsigned long long x = strtoull(v, &end, 10);
    return *end || x > INT64_MAX ? -1 : (int64_t)x;
}

static int fill_from_manifest(analyze_profile *p, const tracer_manifest *m)
{
    if (m) { /* one rank of a distributed job (fathom import) */
        p->rank = manifest_int(m, "source.rank");
        p->world_size = manifest_int(m, "source.world_size");
    }
    if (p->meta.have_begin || !m)
        return 0;
    char **dst[] = { &p->meta.model, &p->meta.mode, &p->meta.preset, &p->meta.cpu, &p->meta.blas };
    const char *keys[] = { "model", "mode", "preset", "cpu", "blas" };
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        const char *v = tracer_manifest_get(m, keys[i]);
        if (v && !*dst[i] && !(*dst[i] = base_strdup(v)))
            return -1;
        if (*dst[i])
            base_scrub(*dst[i]); /* the archive's: printed as text */
    }
    return 0;
}

/* The source's CTF traces that are not fathom's (set aside when it was
 * opened, tracer/metadata.h), named in the profile's warnings. */
static int note_skipped(analyze_profile *p, const tracer_trace *t)
{
    size_t len = 1;
    for (size_t i = 0; i < tracer_trace_skipped_count(t); i++)
        len += strlen(tracer_trace_skipped(t, i)) + 2;
    if (len == 1)
        return 0;
    if (!(p->meta.skipped = base_malloc(len)))
        return -1;
    p->meta.skipped[0] = '\0';
    for (size_t i = 0; i < tracer_trace_skipped_count(t); i++) {
        if (i)
            strcat(p->meta.skipped, "; ");
        strcat(p->meta.skipped, tracer_trace_skipped(t, i));
    }
    base_scrub(p->meta.skipped); /* a folder's names: printed as text */
    return 0;
}

/* One source being read: its trace, its sink and its decoding. */
typedef struct reading {
    tracer_trace *t;
    analyze_sink *sink;
    tracer_decode_cbs cbs;
    tracer_decode_diag diag;
} reading;

/* Closes n readings' traces and sinks, and frees the array (NULL: none). */
static void readings_free(reading *rs, size_t n)
{
    for (size_t i = 0; rs && i < n; i++) {
        analyze_sink_destroy(rs[i].sink);
        tracer_trace_close(rs[i].t);
    }
    base_free(rs);
}

/* The finished profile of a decoded source into *out; or a status and the
 * thread's message. */
static analyze_status profile_of(reading *r, const char *source, analyze_profile **out)
{
    size_t n = 0;
    analyze_status st = ANALYZE_OK;
    analyze_profile **v = analyze_sink_take_decoded(r->sink, &r->diag, &n);
    *out = NULL;
    if (!v)
        return analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", source);
    if (!n || v[0]->diag.events == v[0]->diag.foreign_events)
        st =
            analyze_fail(ANALYZE_ERR_INPUT, "%s: no fathom events in the trace (%" PRIu64 " events of other providers)",
                         source, n ? v[0]->diag.foreign_events : 0);
    else if (fill_from_manifest(v[0], tracer_trace_manifest(r->t)) || note_skipped(v[0], r->t))
        st = analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", source);
    else if (v[0]->devices && tracer_trace_manifest(r->t) &&
             analyze_devices_name_streams(v[0]->devices,
                                          tracer_manifest_get(tracer_trace_manifest(r->t), "device.streams")))
        st = analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", source);
    else
        *out = v[0], v[0] = NULL;
    for (size_t i = 0; i < n; i++)
        analyze_profile_destroy(v[i]);
    base_free(v);
    return st;
}

analyze_status analyze_read_many(const char *const *sources, size_t n, const analyze_read_options *o,
                                 analyze_profile **out)
{
    analyze_read_options none = { 0 };
    if (!o)
        o = &none;
    analyze_status rc = ANALYZE_ERR_INPUT;
    reading *rs = base_calloc(n ? n : 1, sizeof *rs);
    tracer_decode_job *jobs = base_calloc(n ? n : 1, sizeof *jobs);
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    if (!rs || !jobs) {
        rc = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }
    for (size_t i = 0; i < n; i++) {
        reading *r = &rs[i];
        tracer_status ts = tracer_read_open(sources[i], &r->t);
        if (ts) { /* its message stands */
            rc = ts == TRACER_ERR_NOMEM ? ANALYZE_ERR_NOMEM : ANALYZE_ERR_INPUT;
            goto end;
        }
        analyze_sink_options so = {
            .skip_first = o->skip_first, .skip_last = o->skip_last, .source = sources[i], .dataflow = o->dataflow
        };
        if (!(r->sink = analyze_sink_create(&so))) {
            rc = analyze_fail(ANALYZE_ERR_NOMEM, "%s: out of memory", sources[i]);
            goto end;
        }
        r->cbs = *analyze_sink_callbacks();
        r->cbs.no_dataflow = !o->dataflow;
        if (o->progress && (n == 1 || o->progress_each)) {
            analyze_sink_set_progress(r->sink, o->progress, o->progress_ctx);
            r->cbs.tick = analyze_sink_tick;
            r->cbs.tick_s = o->interval > 0 ? o->interval : 2.0;
        }
        jobs[i] =
            (tracer_decode_job){ .t = r->t, .source = sources[i], .cbs = &r->cbs, .ctx = r->sink, .diag = &r->diag };
    }
    /* every source decoded at once: live sessions side by side, archives on
     * every core */
    tracer_decode_jobs_isolated(jobs, n);
    for (size_t i = 0; i < n; i++) {
        if (jobs[i].status) {
            /* a live session cut short (its relay gone): the table so far first */
            int so_far = 0;
            if (rs[i].cbs.tick && !analyze_sink_failed(rs[i].sink)) {
                so_far = analyze_sink_tick(rs[i].sink) == 0;
                if (!so_far)
                    base_errmsg_clear();
            }
            if (so_far && !analyze_sink_failed(rs[i].sink)) {
                rc = analyze_fail(ANALYZE_ERR_INPUT, "%s (the session was cut short: the table above is what had come)",
                                  jobs[i].err);
                goto end;
            }
            if (analyze_sink_failed(rs[i].sink)) /* the sink's own reason (an unknown schema...) */
                rc = analyze_fail(ANALYZE_ERR_INPUT, "%s", analyze_sink_error(rs[i].sink));
            else
                rc = analyze_fail(jobs[i].status == TRACER_ERR_NOMEM ? ANALYZE_ERR_NOMEM : ANALYZE_ERR_INPUT, "%s",
                                  jobs[i].err);
            goto end;
        }
        if ((rc = profile_of(&rs[i], sources[i], &out[i])))
            goto end;
    }
    rc = ANALYZE_OK;
end:
    for (size_t i = 0; rc && i < n; i++) {
        analyze_profile_destroy(out[i]);
        out[i] = NULL;
    }
    readings_free(rs, n);
    base_free(jobs);
    return rc;
}

analyze_status analyze_read(const char *source, const analyze_read_options *o, analyze_profile **out)
{
    return analyze_read_many(&source, 1, o, out);
}

/* ---- live sessions described ------------------------------------------------ */
static double g_describe_until;

/* A sink's tick: 1 (stop) once its run is described, or time is up. */
static int describe_tick(void *sink) { return analyze_sink_described(sink) || base_now_s() >= g_describe_until; }

analyze_status analyze_live_describe(const char *const *urls, size_t n, double seconds, char **model, char **mode)
{
    analyze_status rc = ANALYZE_OK;
    reading *rs = base_calloc(n ? n : 1, sizeof *rs);
    tracer_decode_job *jobs = base_calloc(n ? n : 1, sizeof *jobs);
    for (size_t i = 0; i < n; i++)
        model[i] = mode[i] = NULL;
    if (!rs || !jobs) {
        rc = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }
    g_describe_until = base_now_s() + seconds;
    for (size_t i = 0; i < n; i++) {
        reading *r = &rs[i];
        analyze_sink_options so = { .source = urls[i] };
        if (tracer_read_open(urls[i], &r->t) || !(r->sink = analyze_sink_create(&so))) {
            rc = analyze_fail(ANALYZE_ERR_INPUT, "%s", base_errmsg());
            goto end;
        }
        r->cbs = *analyze_sink_callbacks();
        r->cbs.tick = describe_tick;
        r->cbs.tick_s = 0.1;
        jobs[i] = (tracer_decode_job){ .t = r->t, .source = urls[i], .cbs = &r->cbs, .ctx = r->sink };
    }
    tracer_decode_jobs_isolated(jobs, n); /* each stops when described (a status of its own: not an error here) */
    for (size_t i = 0; i < n; i++) {
        size_t np = 0;
        analyze_profile **v = analyze_sink_take_decoded(rs[i].sink, NULL, &np);
        if (v && np && v[0]->meta.have_begin) {
            model[i] = v[0]->meta.model ? base_strdup(v[0]->meta.model) : NULL;
            mode[i] = v[0]->meta.mode ? base_strdup(v[0]->meta.mode) : NULL;
        }
        for (size_t k = 0; v && k < np; k++)
            analyze_profile_destroy(v[k]);
        base_free(v);
    }
end:
    readings_free(rs, n);
    base_free(jobs);
    return rc;
}
