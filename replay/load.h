/* load.h -- reading a recorded op program out of a trace (an archive or a
 * CTF directory) with Babeltrace2. */
#ifndef FATHOM_REPLAY_LOAD_H
#define FATHOM_REPLAY_LOAD_H
#include "replay/program.h"

typedef struct replay_load_opts {
    uint32_t skip_first, skip_last; /* recorded steps left out */
    uint32_t max_steps;             /* 0: every kept step */
} replay_load_opts;

/* Fills p (initialized) from the trace at `source`. Errors name the problem
 * (exec_errmsg): not a trace, events lost, a truncated trace, an op this
 * version does not know, a tensor id that does not resolve. */
exec_status replay_load(const char *source, const replay_load_opts *o, replay_program *p);
#endif
