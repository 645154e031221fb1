/* export.h -- `fathom export --perfetto`: one trace as a timeline in the
 * Chrome trace-event JSON format, which the Perfetto UI (ui.perfetto.dev)
 * and chrome://tracing open, as PyTorch's profiler exports:
 *
 *   {"traceEvents":[
 *     {"name":"process_name","ph":"M","pid":P,"args":{"name":"fathom alexnet train"}},
 *     {"name":"thread_name","ph":"M","pid":P,"tid":T,"args":{"name":"vtid T"}},
 *     {"name":"step 0","cat":"step","ph":"B","ts":..,"pid":P,"tid":T,"args":{"step":0}},
 *     {"name":"MatMul","cat":"matrix","ph":"B","ts":..,"pid":P,"tid":T,
 *      "args":{"seq":..,"node":..,"phase":"forward","inputs":[..],"outputs":[..],"attrs":[..]}},
 *     {"ph":"E","ts":..,"pid":P,"tid":T,"args":{"flops":..,"bytes":..}},
 *     {"name":"tensor memory","ph":"C","ts":..,"pid":P,"args":{"weight":..,"activation":..}},
 *     ...],
 *   "displayTimeUnit":"ns",
 *   "otherData":{"source":..,"model":..,"mode":..,"preset":..,"schema":1,...}}
 *
 * ts in microseconds from the trace's first event; pid the vpid context,
 * tid the vtid context (0 without them).  Streams: memory grows with the
 * threads and live tensors, never with the events.  Each event is encoded
 * with jansson. */
#ifndef FATHOM_ANALYZE_EXPORT_H
#define FATHOM_ANALYZE_EXPORT_H

#include "analyze/analyze_status.h"

#include <stdint.h>
#include <stdio.h>

typedef struct analyze_export_stats {
    uint64_t events;  /* trace-event objects written */
    uint64_t ops;     /* op slices begun */
    uint64_t steps;   /* step slices begun */
    uint64_t foreign; /* events of other providers (left out) */
} analyze_export_stats;

/* Writes the timeline of `source` (archive, CTF directory or net:// URL)
 * to out.  ANALYZE_OK, or a status with a one-line message in base_errmsg()
 * (the output is then incomplete: the caller removes it). */
analyze_status analyze_export_perfetto(const char *source, FILE *out, analyze_export_stats *st);

#endif
