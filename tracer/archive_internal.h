/* archive_internal.h -- what the archive library's files share (manifest.c,
 * archive_write.c, archive_open.c, archive_common.c); not for its users,
 * who include "tracer/archive.h". */
#ifndef FATHOM_TRACER_ARCHIVE_INTERNAL_H
#define FATHOM_TRACER_ARCHIVE_INTERNAL_H

#include "tracer/archive.h"
#include "base/error.h"

#include <stdarg.h>
#include <stddef.h>

#define COPY_BUF_SIZE (64 * 1024) /* one read/write chunk when copying entries */
#define MAX_DEPTH 64              /* folders deep, writing or extracting */
#define MAX_NAME_COMPONENT 255    /* bytes of one path component */

/* Sets the thread's message (base/error.h) from fmt, control bytes made
 * '?' (names from an archive are untrusted: the message stays one line);
 * returns st. */
#define tracer_archive_fail(st, ...) ((tracer_archive_status)base_fail_oneline((int)(st), __VA_ARGS__))
/* The status of a failed system call's errno. */
tracer_archive_status tracer_archive_errno_status(int e);
/* "a/b" (a without trailing slashes, unless it is "/"), from base_malloc;
 * NULL when out of memory. */
char *tracer_archive_path_join(const char *a, const char *b);
/* The sorted names of dirfd's entries except . and .. (each and the array
 * from base_malloc; tracer_archive_free_names frees them); closes dirfd. */
tracer_archive_status tracer_archive_list_dir(int dirfd, const char *shown, char ***names_out, size_t *n_out);
void tracer_archive_free_names(char **names, size_t n);
/* qsort's comparison of two char * by strcmp. */
int tracer_archive_cmp_str(const void *a, const void *b);
/* Reads at most 1 MiB from fd and parses it as a MANIFEST named `name`;
 * takes no ownership of fd. */
tracer_archive_status tracer_manifest_read_fd(int fd, const char *name, tracer_manifest **out);

#endif
