/* status.c -- exec's status codes; the message is the thread's one
 * (base/error.h). */
#include "exec.h"

#include "base/error.h"

#include <stdarg.h>

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

const char *exec_errmsg(void) { return base_errmsg(); }

exec_status exec_fail(exec_status s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vfail((int)s, fmt, ap);
    va_end(ap);
    return s;
}
