/* status.c -- status codes and the per-thread error message. */
#include "exec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char g_msg[512];

const char *exec_status_str(exec_status s)
{
    static const char *const names[] = {
        [EXEC_OK] = "ok",
        [EXEC_ERR_NOMEM] = "out of memory",
        [EXEC_ERR_SHAPE] = "bad shape",
        [EXEC_ERR_ARG] = "bad argument",
        [EXEC_ERR_STATE] = "bad state",
        [EXEC_ERR_NUMERIC] = "numeric error",
        [EXEC_ERR_IO] = "I/O error",
        [EXEC_ERR_INTERRUPTED] = "interrupted",
    };
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "unknown status";
}

const char *exec_errmsg(void) { return g_msg[0] ? g_msg : "no error"; }

exec_status exec_fail(exec_status s, const char *fmt, ...)
{
    /* format aside first: callers may pass exec_errmsg() as an argument */
    char buf[sizeof g_msg];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    memcpy(g_msg, buf, sizeof g_msg);
    return s;
}
