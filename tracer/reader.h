/* reader.h -- the one trace reader: opens a trace source and runs the
 * Babeltrace2 graph over it, in-process:
 *     src.ctf.fs (or src.ctf.lttng-live) -> flt.utils.muxer -> a sink
 * whose messages, in time order, go to a consumer -- a tracer_decoder
 * (decode.h) for everything that wants op records, run in a child process
 * for untrusted input (isolate.h).
 *
 * Sources: a trace archive (extracted by the archive library's safe
 * reader, archive.h), a CTF directory (every CTF trace below it: the
 * per-process buffers of one recording are read together), or a net://
 * lttng-live URL (read until the session ends).  Nothing else in fathom
 * builds a Babeltrace2 graph over a trace. */
#ifndef FATHOM_TRACER_READER_H
#define FATHOM_TRACER_READER_H

#include "tracer/archive.h"
#include "tracer/decode.h"
#include "tracer/tracer_status.h"

#include <babeltrace2/babeltrace.h>
#include <stddef.h>
#include <stdint.h>

/* A message consumer: 0, or non-zero with the thread's message set
 * (base_fail), which ends the reading. Messages are borrowed for the call. */
typedef int (*tracer_message_fn)(void *ctx, const bt_message *msg);

/* Opens source safely: TRACER_OK, or a status with "SOURCE: why" in
 * base_errmsg().  The CTF traces in it that are not fathom's are set aside
 * from their metadata (metadata.h: tracer_trace_skipped names them); a
 * source holding none of fathom's is an error ("not a fathom trace: an
 * LTTng kernel trace (...)"). */
tracer_status tracer_read_open(const char *source, tracer_trace **t);
/* Runs the graph over an opened trace, each message to fn; `label` names
 * the trace in messages. TRACER_OK, or a status and its message
 * (TRACER_ERR_STOPPED: fn's). */
tracer_status tracer_read_run(const tracer_trace *t, const char *label, tracer_message_fn fn, void *ctx);
/* A live source is read with session-not-found-action=continue: a reader
 * started before the recording waits for its session and sees all of it.
 * lttng-live never ends by itself then; when this is set, the graph ends
 * as soon as it returns non-zero while no message is ready (the isolated
 * decoder's child: the run ended and nothing came for a while). */
extern int (*tracer_read_live_idle)(void);
/* Babeltrace2 2.0 logs why a trace's metadata does not parse ("At line 116
 * in metadata stream: syntax error, ...") but makes no error cause of it;
 * its metadata parser logs at the level BABELTRACE_PLUGIN_CTF_METADATA_LOG_LEVEL
 * gives when the ctf plugin loads.  When this is set, fd 2 goes into a
 * memory file while tracer_read_run creates the source, and where that
 * fails the logged line is the cause.  fd 2 is the process's: the isolated
 * decoder's child sets it (and the variable), no other reader. */
extern int tracer_read_capture_log;

/* The live sessions an lttng-relayd holds (url: net://HOST[:PORT]): fn
 * gets each one's lttng-live URL, host name, session name, live timer
 * (us), streams and clients.  TRACER_OK, or a status and its message
 * (TRACER_ERR_STOPPED: fn returned non-zero, its message if it set one). */
typedef struct tracer_live_session {
    const char *url, *host, *name;
    uint64_t timer_us, streams, clients;
} tracer_live_session;
tracer_status tracer_live_sessions(const char *url, int (*fn)(void *ctx, const tracer_live_session *s), void *ctx);

/* Decoding a source into op records: isolate.h (in a child process). */

#endif
