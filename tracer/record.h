/* record.h -- recording a traced run with LTTng, through liblttng-ctl.
 *
 * tracer_record(): make sure a session daemon answers (start one if none
 * does, and stop it afterwards), create a uniquely named session writing to
 * a private temporary directory (or streaming to an lttng-relayd), a
 * user-space channel that blocks instead of discarding, enable `fathom:*`,
 * add the vpid, vtid and procname contexts, start, run the workload as a
 * child process with FATHOM_TRACE=1, stop, destroy, check the trace
 * (Babeltrace2: nothing discarded, every op begun and ended, as many as the
 * run says it executed) and archive it with its MANIFEST.  Every error path
 * (and SIGINT/SIGTERM/SIGHUP) destroys the session and removes the
 * temporary directory. */
#ifndef FATHOM_TRACER_RECORD_H
#define FATHOM_TRACER_RECORD_H
#include "tracer/archive.h"
#include "tracer/stats.h"

#include <limits.h>
#include <stddef.h>

/* The file in which the workload (`fathom run`, models/runner.h's
 * MODEL_ENV_STEP_FILE: the same name) rewrites "STEPS_DONE STEPS" after
 * each step: the recorder's progress line shows step k of N and an ETA. */
#define TRACER_ENV_STEP_FILE "FATHOM_STEP_FILE"

typedef enum tracer_record_status {
    TRACER_RECORD_OK = 0,
    TRACER_RECORD_ERROR,       /* could not record (the message: base_errmsg()) */
    TRACER_RECORD_CHILD,       /* the workload failed (no archive) */
    TRACER_RECORD_INCOMPLETE,  /* recorded and archived, but the check failed */
    TRACER_RECORD_INTERRUPTED, /* a signal stopped the recording */
} tracer_record_status;

typedef struct tracer_record_opts {
    char *const *argv;                /* the workload command; argv[0] is a path */
    const char *out_path;             /* explicit archive path (never overwritten), or NULL */
    const char *out_dir;              /* folder for the default name; NULL: "traces" */
    const char *relay_url;            /* net://HOST[:CTRL[:DATA]]: stream to a relay, no archive */
    const tracer_manifest *manifest;  /* keys known from the command line (may be NULL) */
    const char *label;                /* shown in the progress line */
    int progress;                     /* 0: silent; 1: a progress line on stderr */
    int show_output;                  /* 1: the workload's stdout/stderr are ours; 0: logged, shown on failure */
    size_t subbuf_size;               /* 0: default (1 MiB) */
    size_t num_subbuf;                /* 0: default (8) */
    unsigned trace_buffer;            /* op records per thread buffer (0: the engine's default) */
    unsigned long long live_timer_us; /* with relay_url: the live timer (0: 1 s) */
    const char *session_name;         /* the LTTng session's name (NULL: fathom-PID-TIME-RANDOM) */
    double restate_s;                 /* with relay_url: seconds between statedumps for viewers that
                                         join late (0: the default, 1 s; < 0: none); and one as soon
                                         as the relay counts a new viewer */
    int discard;                      /* tests only: a channel that discards when full instead of
                                       blocking, to show that the loss check catches losses */
    int no_contexts;                  /* benchmarks only: no vpid/vtid/procname contexts, to
                                       measure lttng-ust's own per-event floor (the trace then
                                       fails the check: its ops carry no thread) */
} tracer_record_opts;

typedef struct tracer_record_result {
    char archive[PATH_MAX]; /* the archive written ("" if none) */
    char session[128];      /* the LTTng session's name */
    char live_url[512];     /* with a relay: the lttng-live URL to analyze it with */
    int child_status;       /* the workload's wait status */
    double seconds;         /* wall time of the workload */
    int sessiond_pid;       /* the session daemon this recording started (and
                                       stopped), or 0 if it used a running one */
    tracer_stats stats;     /* what the trace holds (not with a relay) */
    int interrupted;        /* the signal that stopped the workload early (its
                                       trace archived with status=interrupted), or 0 */
} tracer_record_result;

/* Records o's workload. TRACER_RECORD_OK; or a status with the thread's
 * message (base/error.h): ERROR (nothing recorded), CHILD, INCOMPLETE
 * (archived: what the check found), INTERRUPTED. */
tracer_record_status tracer_record(const tracer_record_opts *o, tracer_record_result *r);

/* A session daemon for the caller: if none answers, one is started (and
 * waited for) and stopped again when the last reference goes.  Nestable. */
tracer_record_status tracer_sessiond_acquire(void);
void tracer_sessiond_release(void);
/* 1 if a session daemon answers. */
int tracer_sessiond_alive(void);

/* A fresh session name: fathom-<pid>-<UTC time>-<random hex>. */
void tracer_session_name(char *buf, size_t len);

/* Fill the keys of the MANIFEST that `fathom record` writes from the trace's
 * stats, falling back on `base` (command-line values), adding host,
 * created, schema and the event counts. */
tracer_archive_status tracer_record_manifest(tracer_manifest *m, const tracer_manifest *base, const tracer_stats *s,
                                             const char *session);
#endif
