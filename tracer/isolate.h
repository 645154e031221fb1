/* isolate.h -- decoding untrusted traces where a decoder crash or hang
 * cannot take fathom down.
 *
 * Babeltrace2's CTF reader (Debian's 2.0.4) can crash or spin on corrupt
 * input.  tracer_read_decode_isolated() opens the source in the calling
 * process (the archive library's safe extraction: the caller's process owns
 * the temporary tree and removes it on every path), then decodes it in a
 * child process: the child runs the Babeltrace2 graph and the decoder
 * (decode.h) and streams the decoder's callbacks back through a pipe, and
 * the parent calls the caller's callbacks with them, exactly as an
 * in-process decoder would.  A child that dies becomes "the CTF decoder
 * crashed on SOURCE (signal N)"; one that sends nothing for the stall
 * limit while still running becomes "the CTF decoder stopped making
 * progress on SOURCE" (it is killed); one that exceeds its CPU-time or
 * memory limit is stopped by the kernel and reported the same way.
 *
 * Limits, each following the trace's size, each a one-line error naming
 * it and the variable that raises it (environment, for users with unusual
 * traces):
 *   FATHOM_DECODE_EVENTS_PER_BYTE  events (Babeltrace2 messages) a byte of
 *                         CTF (default 8, and 10000 more): an event takes
 *                         a bit at least, so a trace of events of no size,
 *                         decoded without end, stops at once
 *   FATHOM_DECODE_CPU     CPU seconds of the decoder (default 1 s and a
 *                         second per 4 MiB of CTF, 4 times that in
 *                         sanitizer builds; an hour for a live session)
 *   FATHOM_DECODE_STALL   seconds without a decoded record (default 10 s
 *                         and twice the CPU limit; none for a live session)
 *   FATHOM_DECODE_MEMORY  bytes of address space (default 2 GiB and 64
 *                         bytes a byte of the trace's CTF files, at most
 *                         16 GiB; 16 GiB for a live session; not set in
 *                         sanitizer builds, whose shadow memory needs more)
 * FATHOM_DECODE_INPROCESS=1 decodes in the calling process, and
 * FATHOM_DECODE_DEBUG=1 keeps the decoder's stderr (debugging). */
#ifndef FATHOM_TRACER_ISOLATE_H
#define FATHOM_TRACER_ISOLATE_H

#include "tracer/decode.h"
#include "tracer/tracer_status.h"

#include <stddef.h>

/* Decodes an opened trace (reader.h) with a decoder calling cbs with ctx,
 * isolated as above: TRACER_OK, or a status with "SOURCE: why" in
 * base_errmsg() (TRACER_ERR_STOPPED: a callback stopped the decoding,
 * "stopped by its reader").  The diagnostics of all its traces are added into *diag (when
 * not NULL).  A trace without any fathom event, or whose run_begin has a
 * schema this fathom does not read, is an error.  trace_begin receives
 * NULL for the trace. */
typedef struct tracer_trace tracer_trace;
tracer_status tracer_decode_trace_isolated(const tracer_trace *t, const char *source, const tracer_decode_cbs *cbs,
                                           void *ctx, tracer_decode_diag *diag);
/* Several decodings at once, each in its own child: their callbacks
 * interleave as records come (live sessions read side by side).  Each
 * job's status is TRACER_OK, or a status with the job's own message in its
 * err (side by side, the jobs cannot share the thread's); the result is
 * TRACER_OK when every job succeeded, else the first failed job's status,
 * its message made the thread's. */
typedef struct tracer_decode_job {
    const tracer_trace *t;
    const char *source;
    const tracer_decode_cbs *cbs;
    void *ctx;
    tracer_decode_diag *diag; /* added into (may be NULL) */
    tracer_status status;
    char err[1024];
} tracer_decode_job;
tracer_status tracer_decode_jobs_isolated(tracer_decode_job *jobs, size_t n);
/* tracer_read_open + tracer_decode_trace_isolated + close. */
tracer_status tracer_read_decode_isolated(const char *source, const tracer_decode_cbs *cbs, void *ctx,
                                          tracer_decode_diag *diag);

#endif
