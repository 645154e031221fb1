/* hooks.h -- the engine's hook table (exec_hooks) firing the `fathom`
 * tracepoints (tp.h).  Linked into `fathom` and into programs that trace
 * their own engine runs; the probe library libfathom-tp.so is loaded only
 * when tracing is asked for, so an untraced process never starts lttng-ust.
 *
 * A traced run: the recorder (`fathom record`, record.h) starts the
 * workload with FATHOM_TRACE=1 in its environment; the driver calls
 * tracer_hooks_install_from_env() first thing in main(). */
#ifndef FATHOM_TRACER_HOOKS_H
#define FATHOM_TRACER_HOOKS_H
#include "exec/exec.h"
#include "tracer/tracer_status.h"

#include <stddef.h>

/* The environment variable that asks a process to trace itself ("1"). */
#define TRACER_ENV_TRACE "FATHOM_TRACE"
/* Op records a thread buffers per `ops` event (exec_trace_buffer_set), set
 * by `fathom record --buffer`. */
#define TRACER_ENV_BUFFER "FATHOM_TRACE_BUFFER"
/* Seconds between statedumps for live viewers that join late (run_state,
 * node_defs, graph_totals; fathom-trace(5)); unset or 0: none.  Set by
 * `fathom record --relay`; SIGUSR1 then asks for one at the next step. */
#define TRACER_ENV_RESTATE "FATHOM_TRACE_RESTATE"
/* An explicit path of the probe library (overrides the search). */
#define TRACER_ENV_TP_LIB "FATHOM_TP_LIB"
#define TRACER_TP_LIB_NAME "libfathom-tp.so"

/* Loads the probe library (once) and installs the hooks.  The library is
 * $FATHOM_TP_LIB when set, else the first of locate.h's candidates that
 * loads (next to the executable, in the install layout relative to it, at
 * the configured install path, in the build tree).  TRACER_OK, or a status
 * and the thread's message (base/error.h). */
tracer_status tracer_hooks_install(void);
/* If FATHOM_TRACE=1: tracer_hooks_install(), *installed 1 when it did (0
 * when tracing was not asked for); a bad FATHOM_TRACE or
 * FATHOM_TRACE_BUFFER, or a failed install, is a status and its message. */
tracer_status tracer_hooks_install_from_env(int *installed);
/* Uninstalls the hooks (the probe library stays loaded). */
void tracer_hooks_remove(void);
/* The hook table tracer_hooks_install() sets (for benchmarks). */
const exec_hooks *tracer_hooks_table(void);
/* Path of the probe library that was loaded, or NULL. */
const char *tracer_hooks_probe_path(void);
#endif
