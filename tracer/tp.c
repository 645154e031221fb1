/* tp.c -- the probes of the `fathom` provider (tp.h), built as the shared
 * object libfathom-tp.so.  A traced `fathom` process dlopen()s it (hooks.c);
 * loading it starts lttng-ust, which registers with the session daemon. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#include "tracer/tp.h"
