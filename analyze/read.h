/* read.h -- reading a trace source into a profile, in-process, through
 * the one trace reader (tracer/read.h) with the fathom sink (sink.h).
 *
 * Sources: a trace archive (extracted by tracer/archive.h's safe reader),
 * a CTF directory (every CTF trace below it: per-process buffers of one
 * recording are read together), or a net:// lttng-live URL (read until the
 * session ends). */
#ifndef FATHOM_ANALYZE_READ_H
#define FATHOM_ANALYZE_READ_H

#include "analyze/profile.h"

#include <babeltrace2/babeltrace.h>
#include <stddef.h>
#include <stdint.h>

typedef struct analyze_read_options {
    uint32_t skip_first, skip_last;
} analyze_read_options;

/* 0 and a finished profile in *out (destroy it), or -1 and a one-line
 * message "SOURCE: why" in err.  A trace with no fathom event, or with a
 * schema version this analyzer does not know, is an error; everything else
 * that is wrong shows in the profile's diag (analyze_profile_warnings). */
int analyze_read(const char *source, const analyze_read_options *o, analyze_profile **out, char *err,
                 size_t errlen);

#endif
