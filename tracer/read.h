/* read.h -- the one trace reader: opens a trace source and runs the
 * Babeltrace2 graph over it, in-process:
 *     src.ctf.fs (or src.ctf.lttng-live) -> flt.utils.muxer -> a sink
 * whose messages, in time order, go to a consumer -- a tracer_decoder
 * (decode.h) for everything that wants op records.
 *
 * Sources: a trace archive (extracted by the archive library's safe
 * reader, archive.h), a CTF directory (every CTF trace below it: the
 * per-process buffers of one recording are read together), or a net://
 * lttng-live URL (read until the session ends).  Nothing else in fathom
 * builds a Babeltrace2 graph over a trace. */
#ifndef FATHOM_TRACER_READ_H
#define FATHOM_TRACER_READ_H

#include "tracer/archive.h"
#include "tracer/decode.h"

#include <babeltrace2/babeltrace.h>
#include <stddef.h>

/* A message consumer: 0, or -1 with a one-line message in err (that ends
 * the reading). Messages are borrowed for the call. */
typedef int (*tracer_message_fn)(void *ctx, const bt_message *msg, char *err, size_t errlen);

/* Opens source safely: 0, or -1 with "SOURCE: why" in err. */
int tracer_read_open(const char *source, tracer_trace **t, char *err, size_t errlen);
/* Runs the graph over an opened trace, each message to fn; `label` names
 * the trace in messages. 0, or -1 with a one-line message in err. */
int tracer_read_run(const tracer_trace *t, const char *label, tracer_message_fn fn, void *ctx, char *err,
                    size_t errlen);
/* tracer_read_open + tracer_read_run + close. */
int tracer_read_messages(const char *source, tracer_message_fn fn, void *ctx, char *err, size_t errlen);

/* Decodes source (tracer_read_open, a decoder with cbs and ctx, finish):
 * 0, or -1 with a message in err. The diagnostics of all its traces are
 * added into *diag when not NULL; *manifest_out (when not NULL) receives
 * the trace's MANIFEST values through fn_manifest before decoding. A trace
 * without any fathom event, or whose run_begin has a schema this fathom
 * does not read, is an error. */
int tracer_read_decode(const char *source, const tracer_decode_cbs *cbs, void *ctx, tracer_decode_diag *diag,
                       char *err, size_t errlen);

#endif
