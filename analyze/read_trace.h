/* read_trace.h -- reading a trace source into a profile, in-process, through
 * the one trace reader (tracer/reader.h) with the fathom sink (sink.h).
 *
 * Sources: a trace archive (extracted by tracer/archive.h's safe reader),
 * a CTF directory (every CTF trace below it: per-process buffers of one
 * recording are read together), or a net:// lttng-live URL (read until the
 * session ends). */
#ifndef FATHOM_ANALYZE_READ_TRACE_H
#define FATHOM_ANALYZE_READ_TRACE_H

#include "analyze/profile.h"
#include "analyze/analyze_status.h"

#include <babeltrace2/babeltrace.h>
#include <stddef.h>
#include <stdint.h>

typedef struct analyze_read_options {
    uint32_t skip_first, skip_last;
    /* a live source: progress gets the profile so far every interval
     * seconds (analyze_profile_snapshot), before the final one is returned */
    int (*progress)(void *ctx, const analyze_profile *snapshot);
    void *progress_ctx;
    double interval;
    /* 1: the profiles follow the data flow (analyze_profile_follow_flow) */
    int dataflow;
    /* 1: progress applies to every source, not only to one alone (the
     * snapshot's source says which) */
    int progress_each;
} analyze_read_options;

/* Live sessions (net:// URLs) described: each one's model and mode (NULL
 * where none came), read from its run_begin or the recorder's next
 * statedump, for at most `seconds`; the strings are the caller's to free.
 * ANALYZE_OK, or a status and its message. */
analyze_status analyze_live_describe(const char *const *urls, size_t n, double seconds, char **model, char **mode);

/* ANALYZE_OK and a finished profile in *out (destroy it), or a status
 * (ANALYZE_ERR_INPUT, ANALYZE_ERR_NOMEM) and the one-line message
 * "SOURCE: why" in base_errmsg().  A trace with no fathom event, or with a
 * schema version this analyzer does not know, is an error; everything else
 * that is wrong shows in the profile's diag (analyze_profile_warnings). */
analyze_status analyze_read(const char *source, const analyze_read_options *o, analyze_profile **out);

/* analyze_read() of n sources at once (each decoded in its own child
 * process, side by side: several live sessions, or archives on every core):
 * ANALYZE_OK and n profiles in out, or the first failing source's status and message
 * (no profile kept). progress applies when n is 1. */
analyze_status analyze_read_many(const char *const *sources, size_t n, const analyze_read_options *o,
                                 analyze_profile **out);

#endif
