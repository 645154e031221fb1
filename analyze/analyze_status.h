/* analyze_status.h -- what analyze/'s functions return: the convention of every
 * library (base/error.h), a status and the thread's one-line message. */
#ifndef FATHOM_ANALYZE_ANALYZE_STATUS_H
#define FATHOM_ANALYZE_ANALYZE_STATUS_H
#include "base/error.h"

/* What went wrong, in the convention of every library (base/error.h): a
 * status, and the thread's one-line message in base_errmsg(). */
typedef enum analyze_status {
    ANALYZE_OK = 0,
    ANALYZE_ERR_NOMEM, /* an allocation failed */
    ANALYZE_ERR_INPUT, /* traces the analysis cannot take (no pair, one thread count twice...), or cannot read */
    ANALYZE_ERR_IO,    /* an output (a file, a chart, the page) could not be written */
} analyze_status;

const char *analyze_status_str(analyze_status s);

/* Sets the thread's message (base_fail); returns s, for
 * `return analyze_fail(...)`. */
#define analyze_fail(s, ...) ((analyze_status)base_fail((int)(s), __VA_ARGS__))
/* The same for the file's own helpers that answer 0 or -1 (the trace
 * decoder's callbacks, whose contract that is): sets the message, returns
 * -1. */
#define analyze_fail_rc(s, ...) (base_fail((int)(s), __VA_ARGS__), -1)

#endif
