/* error.h -- the one error convention of fathom's libraries.
 *
 * A library function that can fail returns its module's status enum (0 is
 * OK: exec_status, tracer_archive_status, tracer_output_status,
 * tracer_record_status, tracer_status, analyze_status) and leaves one line
 * saying what went wrong in the calling thread's message, which
 * base_errmsg() reads. A module's `*_fail(status, fmt, ...)` sets the
 * message and returns the status, so a failure is one statement:
 *
 *     if (!f)
 *         return base_fail(TRACER_EIO, "cannot open %s: %s", path, strerror(errno));
 *
 * A caller that adds where it happened prepends to the callee's message
 * (base_fail_cause: "reading X: " + the inner message). The message stays
 * the thread's until the next failure; a status of 0 says nothing about it.
 * Library code never prints and never exits: the driver prints the message.
 *
 * One other shape is right, and only where an object outlives the call
 * that failed: the object's message. The object keeps its own message
 * (base_fail_into formats it), and a function of its module reads it. The thread's message would not do there, because it is
 * read later, or on another thread, or after other calls on the same
 * thread have set it again. These objects are:
 *   - analyze_sink (analyze/sink.c, analyze_sink_error): a Babeltrace2
 *     sink component. Babeltrace2 calls it from its graph, several sinks
 *     run on one thread, and the error is asked for after the graph has
 *     stopped.
 *   - tracer_decode_job (tracer/isolate.h, its `err`): jobs decode side
 *     by side, each in a child process watched by one parent thread, and
 *     each job keeps its message until the caller takes it.
 *   - tracer_decoder (tracer/decode.c, tracer_decoder_error): a decoder
 *     lives across every message of a trace; what it says is "out of
 *     memory" or nothing (what is wrong with the trace is counted in its
 *     diagnostics, not failed on).
 *   - a recording (tracer/record.c): its steps format the first failure
 *     into the recording's buffer, so the cleanup that follows, which may
 *     fail too, cannot overwrite the cause; tracer_record makes it the
 *     thread's message when it returns.
 * Anything else returns a status and sets the thread's message.
 *
 * The trace decoder's callbacks (tracer/decode.h) answer 0, or -1 to stop
 * the decoding: theirs is the thread's message all the same, set by their
 * module's `*_fail` before they return -1 (analyze_fail_rc). */
#ifndef FATHOM_BASE_ERROR_H
#define FATHOM_BASE_ERROR_H
#include <stdarg.h>
#include <stddef.h>

/* The longest message kept (bytes, with the terminating NUL). */
#define BASE_ERRMSG_MAX 8192

/* The calling thread's message ("no error" when none was set). */
const char *base_errmsg(void);
/* Sets the thread's message from fmt (its arguments may include
 * base_errmsg() itself); returns status. */
int base_fail(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int base_vfail(int status, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* base_fail, the message's control bytes then made '?' (text taken from
 * untrusted input, an archive's entry names, stays one line). */
#define base_fail_oneline(status, ...) (base_fail((status), __VA_ARGS__), base_errmsg_oneline(status))
/* Makes the message's control bytes '?'; returns status. */
int base_errmsg_oneline(int status);
/* Text from untrusted input (a trace's strings, an archive's MANIFEST, a
 * PyTorch file's names) as a terminal may show it: s where it holds no
 * control byte (below 0x20, or 0x7f), else its copy in buf (len bytes,
 * truncated) with each one '?': no escape sequence of a hostile trace
 * reaches a terminal or breaks a line of text or CSV. */
const char *base_printable(const char *s, char *buf, size_t len);
/* The same in place. */
void base_scrub(char *s);
/* Prepends fmt's text to the thread's message (a cause: "reading X: " and
 * then what the callee said); returns status. */
int base_fail_cause(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The object's message, the second shape: formats fmt into msg (len bytes;
 * nothing where len is 0); returns status. */
int base_fail_into(char *msg, size_t len, int status, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Empties the thread's message (base_errmsg() says "no error" again). */
void base_errmsg_clear(void);
#endif
