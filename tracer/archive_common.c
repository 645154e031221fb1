/* archive_common.c -- what the archive library's jobs share: its errors,
 * joining paths and listing a folder in a stable order. */
#define _GNU_SOURCE

#include "tracer/archive_internal.h"

#include "base/alloc.h"
#include "base/error.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tracer_archive_strstatus(tracer_archive_status st)
{
    switch (st) {
    case TRACER_ARCHIVE_OK: return "ok";
    case TRACER_ARCHIVE_EINVAL: return "invalid argument";
    case TRACER_ARCHIVE_ENOMEM: return "out of memory";
    case TRACER_ARCHIVE_EIO: return "I/O error";
    case TRACER_ARCHIVE_EEXIST: return "already exists";
    case TRACER_ARCHIVE_EFORMAT: return "bad format";
    case TRACER_ARCHIVE_EUNSAFE: return "unsafe archive entry";
    case TRACER_ARCHIVE_ELIMIT: return "limit exceeded";
    case TRACER_ARCHIVE_ENOTRACE: return "no CTF trace found";
    case TRACER_ARCHIVE_ENOSPC: return "no space left on device";
    }
    return "unknown status";
}

tracer_archive_status tracer_archive_errno_status(int e)
{
    if (e == ENOMEM)
        return TRACER_ARCHIVE_ENOMEM;
    if (e == EEXIST)
        return TRACER_ARCHIVE_EEXIST;
    return TRACER_ARCHIVE_EIO;
}

/* malloc'd "a/b" (a without trailing slashes, unless it is "/"). */
char *tracer_archive_path_join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p;

    while (la > 1 && a[la - 1] == '/')
        la--;
    p = base_malloc(la + 1 + lb + 1);
    if (!p)
        return NULL;
    memcpy(p, a, la);
    if (la == 0 || a[la - 1] != '/')
        p[la++] = '/';
    memcpy(p + la, b, lb + 1);
    return p;
}

int tracer_archive_cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Sorted malloc'd names of dirfd's entries except . and ..; closes dirfd. */
tracer_archive_status tracer_archive_list_dir(int dirfd, const char *shown, char ***names_out, size_t *n_out)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    DIR *d = fdopendir(dirfd);
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *de;

    if (!d) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", shown, strerror(errno));
        close(dirfd);
        goto cleanup;
    }
    for (;;) {
        errno = 0;
        de = readdir(d);
        if (!de) {
            if (errno) {
                st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", shown, strerror(errno));
                goto cleanup;
            }
            break;
        }
        if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
            continue;
        if (base_grow(&names, &cap, n + 1, sizeof(*names))) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", shown);
            goto cleanup;
        }
        names[n] = base_strdup(de->d_name);
        if (!names[n]) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", shown);
            goto cleanup;
        }
        n++;
    }
    if (n > 1)
        qsort(names, n, sizeof(*names), tracer_archive_cmp_str);
    *names_out = names;
    *n_out = n;
    names = NULL;
    n = 0;
cleanup:
    for (size_t i = 0; i < n; i++)
        base_free(names[i]);
    base_free(names);
    if (d)
        closedir(d);
    return st;
}

void tracer_archive_free_names(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        base_free(names[i]);
    base_free(names);
}
