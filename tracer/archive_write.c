/* archive_write.c -- writing a trace archive: a CTF folder and its MANIFEST
 * as one .tar.zst (pax restricted format), written to a temporary file
 * beside the destination and renamed into place only when complete, so a
 * failure or a signal leaves nothing half-written; the default names
 * (MODEL-MODE-PRESET-HOST-TIME.tar.zst) never overwrite. */
#define _GNU_SOURCE /* renameat2, O_NOFOLLOW */

#include "tracer/archive_internal.h"
#include "tracer/output.h"

#include "base/alloc.h"

#include <archive.h>
#include <archive_entry.h>

/* tracer/ must never be on the include path: it would shadow libarchive's
 * <archive.h> with ours.  Include this header as "tracer/archive.h". */
#ifndef ARCHIVE_VERSION_NUMBER
#error "<archive.h> resolved to tracer/archive.h; do not add tracer/ to the include path"
#endif

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define MAX_SUFFIX 10000 /* -1 .. -9999 after a default name already taken */
#define ARCHIVE_TMP_PREFIX ".fathom-tmp-"

static tracer_archive_status ar_fail(struct archive *a, const char *what)
{
    const char *msg = archive_error_string(a);

    return tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", what, msg ? msg : "libarchive error");
}

static tracer_archive_status add_file(struct archive *a, int dirfd, const char *name, const char *src,
                                      const char *arname)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    struct archive_entry *e = NULL;
    char *buf = NULL;
    int fd = -1;
    struct stat sb;
    int64_t left;

    fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &sb) != 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", src, strerror(errno));
        goto cleanup;
    }
    if (!S_ISREG(sb.st_mode)) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "%s: not a regular file", src);
        goto cleanup;
    }
    e = archive_entry_new();
    buf = base_malloc(COPY_BUF_SIZE);
    if (!e || !buf) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", src);
        goto cleanup;
    }
    archive_entry_set_pathname(e, arname);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, sb.st_mode & 0644);
    archive_entry_set_size(e, sb.st_size);
    archive_entry_set_mtime(e, sb.st_mtime, 0);
    if (archive_write_header(a, e) < ARCHIVE_WARN) {
        st = ar_fail(a, src);
        goto cleanup;
    }
    left = sb.st_size;
    while (left > 0) {
        size_t want = left < COPY_BUF_SIZE ? (size_t)left : COPY_BUF_SIZE;
        ssize_t n = read(fd, buf, want);

        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", src, strerror(errno));
            goto cleanup;
        }
        if (n == 0) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: file shrank while archiving", src);
            goto cleanup;
        }
        if (archive_write_data(a, buf, (size_t)n) != n) {
            st = ar_fail(a, src);
            goto cleanup;
        }
        left -= n;
    }
cleanup:
    base_free(buf);
    archive_entry_free(e);
    if (fd >= 0)
        close(fd);
    return st;
}

static tracer_archive_status add_dir_entry(struct archive *a, const char *arname, mode_t mode, time_t mtime)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    struct archive_entry *e = archive_entry_new();

    if (!e) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", arname);
        goto cleanup;
    }
    archive_entry_set_pathname(e, arname);
    archive_entry_set_filetype(e, AE_IFDIR);
    archive_entry_set_perm(e, (mode & 0755) | 0700);
    archive_entry_set_mtime(e, mtime, 0);
    if (archive_write_header(a, e) < ARCHIVE_WARN)
        st = ar_fail(a, arname);
cleanup:
    archive_entry_free(e);
    return st;
}

/* Archive the contents of dirfd (takes ownership) as `arprefix/...`. */
static tracer_archive_status add_tree(struct archive *a, int dirfd, const char *src, const char *arprefix, int depth)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char **names = NULL;
    size_t n = 0;
    int lfd = -1;

    if (depth > MAX_DEPTH) {
        close(dirfd);
        return tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: directories nested deeper than %d", src, MAX_DEPTH);
    }
    lfd = dup(dirfd);
    if (lfd < 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", src, strerror(errno));
        goto cleanup;
    }
    st = tracer_archive_list_dir(lfd, src, &names, &n);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    for (size_t i = 0; i < n && st == TRACER_ARCHIVE_OK; i++) {
        char *sp = tracer_archive_path_join(src, names[i]);
        char *ap = tracer_archive_path_join(arprefix, names[i]);
        struct stat sb;

        if (!sp || !ap) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", src);
        } else if (fstatat(dirfd, names[i], &sb, AT_SYMLINK_NOFOLLOW) != 0) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", sp, strerror(errno));
        } else if (S_ISREG(sb.st_mode)) {
            st = add_file(a, dirfd, names[i], sp, ap);
        } else if (S_ISDIR(sb.st_mode)) {
            int sub = openat(dirfd, names[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

            if (sub < 0) {
                st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", sp, strerror(errno));
            } else {
                st = add_dir_entry(a, ap, sb.st_mode, sb.st_mtime);
                if (st == TRACER_ARCHIVE_OK)
                    st = add_tree(a, sub, sp, ap, depth + 1);
                else
                    close(sub);
            }
        } else {
            st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL,
                                     "%s: not a regular file or directory "
                                     "(links and special files are not "
                                     "archived)",
                                     sp);
        }
        base_free(sp);
        base_free(ap);
    }
cleanup:
    tracer_archive_free_names(names, n);
    close(dirfd);
    return st;
}

/* Write the whole archive to the open fd. */
static tracer_archive_status write_archive_fd(int fd, const char *shown, const char *ctf_dir, const tracer_manifest *m)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    struct archive *a = NULL;
    struct archive_entry *e = NULL;
    char *text = NULL;
    size_t tlen = 0;
    int dirfd = -1;
    struct stat sb;
    time_t now = time(NULL);

    dirfd = open(ctf_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0 || fstat(dirfd, &sb) != 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", ctf_dir, strerror(errno));
        goto cleanup;
    }
    st = tracer_manifest_serialize(m, &text, &tlen);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    a = archive_write_new();
    e = archive_entry_new();
    if (!a || !e) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", shown);
        goto cleanup;
    }
    if (archive_write_add_filter_zstd(a) < ARCHIVE_WARN || archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
        archive_write_open_fd(a, fd) != ARCHIVE_OK) {
        st = ar_fail(a, shown);
        goto cleanup;
    }
    archive_entry_set_pathname(e, TRACER_MANIFEST_FILE);
    archive_entry_set_filetype(e, AE_IFREG);
    archive_entry_set_perm(e, 0644);
    archive_entry_set_size(e, (int64_t)tlen);
    archive_entry_set_mtime(e, now, 0);
    if (archive_write_header(a, e) < ARCHIVE_WARN || archive_write_data(a, text, tlen) != (ssize_t)tlen) {
        st = ar_fail(a, shown);
        goto cleanup;
    }
    st = add_dir_entry(a, TRACER_ARCHIVE_TOPDIR, sb.st_mode, sb.st_mtime);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    st = add_tree(a, dirfd, ctf_dir, TRACER_ARCHIVE_TOPDIR, 0);
    dirfd = -1; /* add_tree closed it */
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    if (archive_write_close(a) != ARCHIVE_OK) {
        st = ar_fail(a, shown);
        goto cleanup;
    }
    if (fsync(fd) != 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", shown, strerror(errno));
        goto cleanup;
    }
cleanup:
    if (a)
        archive_write_free(a);
    archive_entry_free(e);
    base_free(text);
    if (dirfd >= 0)
        close(dirfd);
    return st;
}

/* Write the archive to a fresh `<tmpl_base>.tmpXXXXXX`; *tmp_out is malloc'd
 * and names a complete file on success; nothing is left on error. */
static tracer_archive_status write_tmp(const char *tmpl_base, const char *ctf_dir, const tracer_manifest *m,
                                       char **tmp_out, int *slot_out)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    const char *slash = strrchr(tmpl_base, '/');
    size_t dl = slash ? (size_t)(slash - tmpl_base) + 1 : 0;
    char *tmp = base_malloc(dl + sizeof(ARCHIVE_TMP_PREFIX) + 32);
    tracer_cleanup_mask mask;
    int fd = -1, slot = -1;
    bool created = false;

    *tmp_out = NULL;
    if (!tmp) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", tmpl_base);
        goto cleanup;
    }
    /* `<folder>/.fathom-tmp-<pid>-XXXXXX`: a SIGKILLed writer's leftover
     * is recognized (and removed) by the next writer in that folder. */
    memcpy(tmp, tmpl_base, dl);
    tmp[dl ? dl - 1 : 0] = '\0';
    tracer_cleanup_stale(dl ? (dl == 1 ? "/" : tmp) : ".", ARCHIVE_TMP_PREFIX);
    if (dl)
        tmp[dl - 1] = '/';
    snprintf(tmp + dl, sizeof(ARCHIVE_TMP_PREFIX) + 32, ARCHIVE_TMP_PREFIX "%ld-XXXXXX", (long)getpid());
    tracer_cleanup_block(&mask);
    fd = mkostemp(tmp, O_CLOEXEC);
    if (fd >= 0)
        slot = tracer_cleanup_add(tmp, false);
    tracer_cleanup_unblock(&mask);
    if (fd < 0) {
        st =
            tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: cannot create temporary file: %s", tmpl_base, strerror(errno));
        goto cleanup;
    }
    created = true;
    (void)fchmod(fd, 0644);
    st = write_archive_fd(fd, tmpl_base, ctf_dir, m);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    if (close(fd) != 0) {
        fd = -1;
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", tmpl_base, strerror(errno));
        goto cleanup;
    }
    fd = -1;
    *tmp_out = tmp;
    tmp = NULL;
cleanup:
    if (fd >= 0)
        close(fd);
    if (tmp) {
        if (created)
            unlink(tmp);
        base_free(tmp);
    }
    if (st == TRACER_ARCHIVE_OK)
        *slot_out = slot; /* the caller forgets it once published */
    else
        tracer_cleanup_forget(slot);
    return st;
}

/* Give the finished temp file its final name without ever clobbering.
 * Returns EEXIST (and keeps tmp) if dst exists; removes tmp otherwise. */
static tracer_archive_status publish(const char *tmp, const char *dst)
{
    if (link(tmp, dst) == 0) {
        unlink(tmp);
        return TRACER_ARCHIVE_OK;
    }
    if (errno == EEXIST)
        return TRACER_ARCHIVE_EEXIST;
    if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS) {
        /* File systems without hard links: atomic no-replace rename. */
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dst, RENAME_NOREPLACE) == 0)
            return TRACER_ARCHIVE_OK;
        if (errno == EEXIST)
            return TRACER_ARCHIVE_EEXIST;
    }
    unlink(tmp);
    return tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", dst, strerror(errno));
}

static bool write_args_ok(const char *ctf_dir, const tracer_manifest *m, tracer_archive_status *st)
{
    struct stat sb;

    if (!ctf_dir || !m) {
        *st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive write: NULL argument");
        return false;
    }
    if (stat(ctf_dir, &sb) != 0) {
        *st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", ctf_dir, strerror(errno));
        return false;
    }
    if (!S_ISDIR(sb.st_mode)) {
        *st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "%s: not a directory", ctf_dir);
        return false;
    }
    return true;
}

tracer_archive_status tracer_archive_write(const char *out_path, const char *ctf_dir, const tracer_manifest *m)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char *tmp = NULL;
    struct stat sb;
    int slot = -1;

    if (!out_path || !*out_path) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive write: no output path");
        goto cleanup;
    }
    if (!write_args_ok(ctf_dir, m, &st))
        goto cleanup;
    if (lstat(out_path, &sb) == 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EEXIST, "%s: already exists (not overwriting)", out_path);
        goto cleanup;
    }
    st = write_tmp(out_path, ctf_dir, m, &tmp, &slot);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    st = publish(tmp, out_path);
    if (st == TRACER_ARCHIVE_EEXIST)
        st = tracer_archive_fail(TRACER_ARCHIVE_EEXIST, "%s: already exists (not overwriting)", out_path);
cleanup:
    if (tmp) {
        unlink(tmp); /* no-op if published */
        base_free(tmp);
    }
    tracer_cleanup_forget(slot);
    return st;
}

static void name_part(char *dst, size_t cap, const char *src)
{
    size_t n = 0;

    if (!src || !*src)
        src = "unknown";
    for (; *src && n + 1 < cap; src++) {
        unsigned char c = (unsigned char)*src;

        dst[n++] = (isalnum(c) || c == '.' || c == '_' || c == '+') ? (char)c : '_';
    }
    dst[n] = '\0';
    if (dst[0] == '.')
        dst[0] = '_';
}

/* "<model>-<mode>-<preset>-<host>-<time>" without suffix. */
static tracer_archive_status default_stem(const tracer_manifest *m, time_t when, char *buf, size_t buflen)
{
    char model[64], mode[16], preset[32], host[64], ts[32], rank[16], tag[24];
    struct tm tm;
    int n;

    if (!m || !buf) {
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive name: NULL argument");
    }
    if (when == (time_t)-1)
        when = time(NULL);
    if (!gmtime_r(&when, &tm) || strftime(ts, sizeof(ts), "%Y%m%dT%H%M%SZ", &tm) == 0) {
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive name: bad time");
    }
    name_part(model, sizeof(model), tracer_manifest_get(m, "model"));
    name_part(mode, sizeof(mode), tracer_manifest_get(m, "mode"));
    name_part(preset, sizeof(preset), tracer_manifest_get(m, "preset"));
    name_part(host, sizeof(host), tracer_manifest_get(m, "host"));
    /* one rank of a distributed job (an imported trace): its rank after the
     * model, so that the ranks of one job sort together and apart */
    name_part(rank, sizeof(rank), tracer_manifest_get(m, "source.rank"));
    snprintf(tag, sizeof(tag), "rank%s", rank);
    if (tracer_manifest_get(m, "source.rank") && !strstr(model, tag)) /* not twice: rank3-rank3 */
        n = snprintf(buf, buflen, "%s-rank%s-%s-%s-%s-%s", model, rank, mode, preset, host, ts);
    else
        n = snprintf(buf, buflen, "%s-%s-%s-%s-%s", model, mode, preset, host, ts);
    if (n < 0 || (size_t)n >= buflen) {
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive name: buffer too small");
    }
    return TRACER_ARCHIVE_OK;
}

tracer_archive_status tracer_archive_default_name(const tracer_manifest *m, time_t when, char *buf, size_t buflen)
{
    char stem[256];
    tracer_archive_status st;
    int n;

    st = default_stem(m, when, stem, sizeof(stem));
    if (st != TRACER_ARCHIVE_OK)
        return st;
    n = snprintf(buf, buflen, "%s%s", stem, TRACER_ARCHIVE_SUFFIX);
    if (n < 0 || (size_t)n >= buflen)
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive name: buffer too small");
    return TRACER_ARCHIVE_OK;
}

static tracer_archive_status candidate(const char *dir, const char *stem, unsigned i, char *buf, size_t buflen)
{
    int n;

    if (i == 0)
        n = snprintf(buf, buflen, "%s/%s%s", dir, stem, TRACER_ARCHIVE_SUFFIX);
    else
        n = snprintf(buf, buflen, "%s/%s-%u%s", dir, stem, i, TRACER_ARCHIVE_SUFFIX);
    if (n < 0 || (size_t)n >= buflen)
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "archive path: buffer too small");
    return TRACER_ARCHIVE_OK;
}

tracer_archive_status tracer_archive_default_path(const char *dir, const tracer_manifest *m, time_t when, char *buf,
                                                  size_t buflen)
{
    char stem[256];
    tracer_archive_status st;

    if (!dir)
        dir = TRACER_ARCHIVE_DEFAULT_DIR;
    st = default_stem(m, when, stem, sizeof(stem));
    for (unsigned i = 0; st == TRACER_ARCHIVE_OK && i < MAX_SUFFIX; i++) {
        struct stat sb;

        st = candidate(dir, stem, i, buf, buflen);
        if (st == TRACER_ARCHIVE_OK && lstat(buf, &sb) != 0)
            return TRACER_ARCHIVE_OK;
    }
    if (st == TRACER_ARCHIVE_OK)
        st = tracer_archive_fail(TRACER_ARCHIVE_EEXIST, "%s/%s: too many archives with this name", dir, stem);
    return st;
}

tracer_archive_status tracer_archive_check_dir(const char *dir)
{
    size_t len, comp = 0;

    if (!dir || !*dir)
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "no folder given");
    len = strlen(dir);
    /* reasons first, so a cut message still gives them */
    if (len + 1 + 255 >= PATH_MAX)
        return tracer_archive_fail(TRACER_ARCHIVE_EINVAL,
                                   "folder path too long (%zu bytes; at most %d "
                                   "with the archive's name): %.80s...",
                                   len, PATH_MAX - 1 - 1 - 255, dir);
    for (const char *c = dir;; c++) {
        if (*c == '/' || *c == '\0') {
            if (comp > MAX_NAME_COMPONENT)
                return tracer_archive_fail(TRACER_ARCHIVE_EINVAL,
                                           "folder name too long (%zu "
                                           "bytes; at most %d): %.80s...",
                                           comp, MAX_NAME_COMPONENT, c - comp);
            comp = 0;
            if (*c == '\0')
                break;
        } else {
            comp++;
        }
    }
    return TRACER_ARCHIVE_OK;
}

/* mkdir -p (0755) */
static tracer_archive_status make_dirs(const char *dir)
{
    tracer_archive_status st = tracer_archive_check_dir(dir);
    char *p;

    if (st != TRACER_ARCHIVE_OK)
        return st;
    p = base_strdup(dir);
    if (!p)
        return tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", dir);
    for (char *s = p + 1;; s++) {
        char c = *s;

        if (c != '/' && c != '\0')
            continue;
        *s = '\0';
        if (mkdir(p, 0755) != 0 && errno != EEXIST) {
            int e = errno;

            st = tracer_archive_fail(e == ENOSPC ? TRACER_ARCHIVE_ENOSPC : TRACER_ARCHIVE_EIO,
                                     "cannot create folder (%s): %s",
                                     e == ENOSPC ? "no space left on device" : strerror(e), p);
            break;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    base_free(p);
    return st;
}

tracer_archive_status tracer_archive_write_default(const char *dir, const char *ctf_dir, const tracer_manifest *m,
                                                   time_t when, char *out_path, size_t out_len)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char stem[256];
    char *base = NULL, *tmp = NULL;
    char path[PATH_MAX];
    unsigned i;
    int slot = -1;

    if (!dir)
        dir = TRACER_ARCHIVE_DEFAULT_DIR;
    if (!write_args_ok(ctf_dir, m, &st))
        goto cleanup;
    st = default_stem(m, when, stem, sizeof(stem));
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    st = make_dirs(dir);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    st = candidate(dir, stem, 0, path, sizeof(path));
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    base = base_strdup(path);
    if (!base) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", path);
        goto cleanup;
    }
    st = write_tmp(base, ctf_dir, m, &tmp, &slot);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    for (i = 0; i < MAX_SUFFIX; i++) {
        st = candidate(dir, stem, i, path, sizeof(path));
        if (st != TRACER_ARCHIVE_OK)
            goto cleanup;
        st = publish(tmp, path);
        if (st != TRACER_ARCHIVE_EEXIST)
            break;
    }
    if (st == TRACER_ARCHIVE_EEXIST)
        st = tracer_archive_fail(TRACER_ARCHIVE_EEXIST, "%s: too many archives with this name", base);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    if (out_path && out_len) {
        if (strlen(path) >= out_len) {
            /* The archive exists; report its name truncated. */
            st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL,
                                     "%s: written, but out_path buffer is too "
                                     "small",
                                     path);
        }
        snprintf(out_path, out_len, "%s", path);
    }
cleanup:
    if (tmp) {
        unlink(tmp); /* no-op once published */
        base_free(tmp);
    }
    tracer_cleanup_forget(slot);
    base_free(base);
    return st;
}
