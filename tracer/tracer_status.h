/* tracer_status.h -- what the tracer's reader, decoder, stats and hooks return
 * (base/error.h's convention: a status, 0 when it went well, and the
 * thread's one-line message in base_errmsg()). The archive library, the
 * output rule and the recorder keep the enums of their own jobs
 * (tracer_archive_status, tracer_output_status, tracer_record_status). */
#ifndef FATHOM_TRACER_TRACER_STATUS_H
#define FATHOM_TRACER_TRACER_STATUS_H

#include "base/error.h"

typedef enum tracer_status {
    TRACER_OK = 0,
    TRACER_ERR_NOMEM,   /* an allocation failed */
    TRACER_ERR_INPUT,   /* a source that cannot be read: missing, unsafe, corrupt, not a fathom trace */
    TRACER_ERR_SYSTEM,  /* Babeltrace2, LTTng or the system refused (a plugin, fork, dlopen, a daemon) */
    TRACER_ERR_STOPPED, /* a consumer or callback stopped the reading (its message kept) */
} tracer_status;

#endif
