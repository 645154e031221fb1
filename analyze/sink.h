/* sink.h -- the fathom sink: Babeltrace2 messages -> profiles.
 *
 * Shared by the in-process graph of `fathom analyze` (analyze/read_trace.c, a
 * simple sink) and the Babeltrace2 plugin (analyze/plugin.c, sink
 * component classes sink.fathom.*).  Knows the trace schema (docs/design.md,
 * "The trace") by event and field names only: enum labels give op, class,
 * phase, mode and role names, so a trace from any version is readable.
 */
#ifndef FATHOM_ANALYZE_SINK_H
#define FATHOM_ANALYZE_SINK_H

#include "analyze/profile.h"

#include <babeltrace2/babeltrace.h>

typedef struct analyze_sink analyze_sink;

typedef struct analyze_sink_options {
    uint32_t skip_first, skip_last;
    /* 0: every message goes into one profile named `source` (one recording,
     * possibly several CTF traces: per-process buffers).  1: one profile per
     * Babeltrace2 trace object, named after the trace (the plugin). */
    int per_trace;
    const char *source;
    /* 1: the profiles follow the data flow (the parallelism analysis); the
     * decoder must then pass the nodes' inputs and outputs (no_dataflow 0) */
    int dataflow;
} analyze_sink_options;

analyze_sink *analyze_sink_create(const analyze_sink_options *o);
void analyze_sink_destroy(analyze_sink *s);

/* Feeds one message.  0, or -1 with a one-line message in
 * analyze_sink_error() (out of memory, unknown schema version). */
int analyze_sink_consume(analyze_sink *s, const bt_message *msg);
const char *analyze_sink_error(const analyze_sink *s);

/* Finishes every profile and hands them over (the caller destroys them and
 * frees the array); the sink keeps none.  *n may be 0. */
analyze_profile **analyze_sink_take(analyze_sink *s, size_t *n);

/* The sink as a decoder's consumer (tracer/decode.h), for decoding done
 * elsewhere (tracer/isolate.h): its callbacks, with the sink as their ctx;
 * analyze_sink_take_decoded() then finishes the profiles with that
 * decoding's diagnostics (one profile: per_trace 0). */
#include "tracer/decode.h"
const tracer_decode_cbs *analyze_sink_callbacks(void);
analyze_profile **analyze_sink_take_decoded(analyze_sink *s, const tracer_decode_diag *diag, size_t *n);
/* 1 when a callback failed with a message of its own (analyze_sink_error). */
int analyze_sink_failed(const analyze_sink *s);
/* While decoding goes on (a live trace): fn gets a finished snapshot of
 * the first profile at each analyze_sink_tick() (a tick callback for the
 * decoder: ctx is the sink); fn returns 0, or -1 to stop. */
typedef int (*analyze_progress_fn)(void *ctx, const analyze_profile *snapshot);
void analyze_sink_set_progress(analyze_sink *s, analyze_progress_fn fn, void *ctx);
/* 1 when the sink's (first) trace has its run's description (run_begin,
 * or a late viewer's run_state). */
int analyze_sink_described(const analyze_sink *s);
int analyze_sink_tick(void *sink);

#endif
