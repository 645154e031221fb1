/*
 * fathom outputs: the one rule every file a command writes follows, and the
 * temporary files and trees that must not outlive the process.
 *
 * Output rule (tracer_output_open/commit): a user-named output path
 *  - must not exist yet (nothing is ever overwritten; a symlink at the final
 *    path, dangling or not, counts as existing and is never followed);
 *  - must not be one of the command's inputs (same path, or the same inode
 *    through another name), nor lie inside an input that is a directory;
 *  - is written to a temporary name in the same folder and published with
 *    link() (no-clobber) only once complete; on failure, on abort and on
 *    SIGINT/SIGTERM/SIGHUP the temporary file is removed.
 *
 * Cleanup registry: paths registered here (temporary files, temporary
 * trees) are removed by an async-signal-safe handler when the process gets
 * SIGINT, SIGTERM or SIGHUP, after which the signal is re-raised with its
 * default action (the exit status stays "killed by signal N", 128+N in a
 * shell).  The handler is installed when the first path is registered, for
 * each of those signals whose disposition is still the default (a caller
 * with its own handler keeps it).  A SIGKILLed process cannot clean up:
 * temporary names carry the owner's pid so that a later process removes
 * the leftovers of dead ones (tracer_cleanup_stale).
 *
 * Depends on libc alone; part of libfathom-archive.  No function calls exit().
 */
#ifndef FATHOM_TRACER_OUTPUT_H
#define FATHOM_TRACER_OUTPUT_H

#include "base/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tracer_output_status {
    TRACER_OUTPUT_OK = 0,
    TRACER_OUTPUT_EINVAL, /* bad argument */
    TRACER_OUTPUT_EEXIST, /* the path exists (or is a symlink) */
    TRACER_OUTPUT_EALIAS, /* the path is (or is inside) an input */
    TRACER_OUTPUT_EIO,    /* a system call failed (message names it) */
    TRACER_OUTPUT_ENOSPC, /* the file system is full */
    TRACER_OUTPUT_ENOMEM,
} tracer_output_status;

/* ---- cleanup registry -------------------------------------------------- */

/* Register a temporary file (is_tree false) or directory tree (true) to be
 * removed if a SIGINT/SIGTERM/SIGHUP ends the process.  Returns a slot id
 * (>= 0) for tracer_cleanup_forget, or -1 when the registry is full (64
 * slots) or the path is too long; the path is then simply not covered. */
int tracer_cleanup_add(const char *path, bool is_tree);
/* Stop covering slot id (does not remove anything).  -1 is a no-op. */
void tracer_cleanup_forget(int id);

/* In a forked child: forget every registered path (they belong to the
 * parent, which removes them), so that a signal ending the child leaves
 * them alone.  Async-signal-safe. */
void tracer_cleanup_disown(void);

/* Block / restore SIGINT, SIGTERM and SIGHUP in the calling thread, so that
 * creating a temporary path and registering it is one step.  */
typedef struct tracer_cleanup_mask {
    unsigned char saved[128]; /* an opaque sigset_t */
} tracer_cleanup_mask;
void tracer_cleanup_block(tracer_cleanup_mask *m);
void tracer_cleanup_unblock(const tracer_cleanup_mask *m);

/* Remove a directory tree without following symlinks; async-signal-safe. */
void tracer_remove_tree(const char *path);

/*
 * Remove the leftovers of dead processes in folder `dir`: entries named
 * `<prefix><pid>-...` (pid in decimal) owned by this user whose pid is not
 * a live process (kill(pid, 0) fails with ESRCH).  Directories are removed
 * with their contents.  Returns how many were removed.
 */
int tracer_cleanup_stale(const char *dir, const char *prefix);

/* ---- outputs ----------------------------------------------------------- */

typedef struct tracer_output tracer_output;

/*
 * Start writing `path` (checked against the rule above and the `ninputs`
 * paths of `inputs`, which may be NULL/0).  On success *out holds an open
 * stream on the temporary file (tracer_output_file) with the permissions a
 * plain fopen would give.  `what` (may be NULL) prefixes messages, e.g.
 * "--dump-ops".
 */
tracer_output_status tracer_output_open(const char *path, const char *const *inputs, size_t ninputs, const char *what,
                                        tracer_output **out);

/* The stream to write (borrowed; closed by commit or abort). */
FILE *tracer_output_file(tracer_output *o);
/* The final path (borrowed). */
const char *tracer_output_path(const tracer_output *o);

/* Flush, close and publish the file under its final name; frees o.  On
 * error the temporary file is removed and nothing is published. */
tracer_output_status tracer_output_commit(tracer_output *o);
/* Close and remove the temporary file; frees o.  NULL is a no-op. */
void tracer_output_abort(tracer_output *o);

/*
 * The checks of the output rule alone, for outputs written by other means
 * (a folder, an archive written by the archive library): EEXIST if path
 * exists, EALIAS if it is (or is inside) one of the inputs.
 */
tracer_output_status tracer_output_check(const char *path, const char *const *inputs, size_t ninputs, const char *what);

/*
 * Whether files can be made in folder dir, or in the folders `mkdir -p dir`
 * would make: its deepest part that exists is a folder this process may
 * write in (EIO, naming it, where not). tracer_output_check checks a new
 * path's folder so; a command checks its --dir so before it runs, not
 * after a recording it then cannot keep.
 */
tracer_output_status tracer_output_check_folder(const char *dir, const char *what);

#ifdef __cplusplus
}
#endif

#endif /* FATHOM_TRACER_OUTPUT_H */
