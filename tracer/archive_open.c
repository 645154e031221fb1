/* archive_open.c -- opening any trace source safely: a CTF folder (with its
 * MANIFEST beside or above it), an lttng-live URL, or an archive extracted
 * into a private temporary folder under limits (entries, bytes, ratio, free
 * space), refusing hostile entries (.., absolute paths, links, devices)
 * and removing the folder on close or on a signal. */
#define _GNU_SOURCE /* mkdtemp, O_NOFOLLOW */

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
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#define EXTRACT_PREFIX "fathom-trace-"

static bool write_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n = write(fd, p, len);

        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += n;
        len -= (size_t)n;
    }
    return true;
}

struct tracer_trace {
    tracer_trace_kind kind;
    char *source;
    char *root;
    char *tmpdir; /* owned temporary directory, removed on close */
    int tmpslot;  /* its cleanup-registry slot (-1: none) */
    char **ctf;
    size_t nctf, capctf;
    char **skipped; /* "PATH (why)" of the CTF traces a reader set aside */
    size_t nskipped;
    tracer_manifest *manifest;
};

void tracer_trace_close(tracer_trace *t)
{
    if (!t)
        return;
    if (t->tmpdir) {
        tracer_remove_tree(t->tmpdir);
        tracer_cleanup_forget(t->tmpslot);
        base_free(t->tmpdir);
    }
    for (size_t i = 0; i < t->nctf; i++)
        base_free(t->ctf[i]);
    base_free(t->ctf);
    for (size_t i = 0; i < t->nskipped; i++)
        base_free(t->skipped[i]);
    base_free(t->skipped);
    base_free(t->source);
    base_free(t->root);
    tracer_manifest_destroy(t->manifest);
    base_free(t);
}

tracer_trace_kind tracer_trace_get_kind(const tracer_trace *t) { return t ? t->kind : TRACER_TRACE_DIR; }

const char *tracer_trace_source(const tracer_trace *t) { return t ? t->source : NULL; }

const char *tracer_trace_root(const tracer_trace *t) { return t ? t->root : NULL; }

size_t tracer_trace_ctf_count(const tracer_trace *t) { return t ? t->nctf : 0; }

const char *tracer_trace_ctf_path(const tracer_trace *t, size_t i) { return (t && i < t->nctf) ? t->ctf[i] : NULL; }

const tracer_manifest *tracer_trace_manifest(const tracer_trace *t) { return t ? t->manifest : NULL; }

tracer_archive_status tracer_trace_skip_ctf(tracer_trace *t, size_t i, const char *why)
{
    if (!t || i >= t->nctf)
        return TRACER_ARCHIVE_EINVAL;
    const char *p = t->ctf[i];
    const size_t n = strlen(t->root);
    if (!strncmp(p, t->root, n) && (p[n] == '/' || !p[n]))
        p += p[n] ? n + 1 : n; /* named inside the source: an archive's folder is private */
    char **v = base_realloc(t->skipped, (t->nskipped + 1) * sizeof *v);
    if (!v)
        return TRACER_ARCHIVE_ENOMEM;
    t->skipped = v;
    const size_t len = strlen(p) + strlen(why) + 8;
    if (!(v[t->nskipped] = base_malloc(len)))
        return TRACER_ARCHIVE_ENOMEM;
    snprintf(v[t->nskipped++], len, "%s (%s)", *p ? p : ".", why);
    base_free(t->ctf[i]);
    memmove(t->ctf + i, t->ctf + i + 1, (t->nctf - i - 1) * sizeof *t->ctf);
    t->nctf--;
    return TRACER_ARCHIVE_OK;
}

size_t tracer_trace_skipped_count(const tracer_trace *t) { return t ? t->nskipped : 0; }

const char *tracer_trace_skipped(const tracer_trace *t, size_t i)
{
    return (t && i < t->nskipped) ? t->skipped[i] : NULL;
}

static tracer_archive_status trace_add_ctf(tracer_trace *t, const char *path)
{
    char *p;

    if (base_grow(&t->ctf, &t->capctf, t->nctf + 1, sizeof(*t->ctf)))
        return tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", path);
    p = base_strdup(path);
    if (!p)
        return tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", path);
    t->ctf[t->nctf++] = p;
    return TRACER_ARCHIVE_OK;
}

/* Record every directory at or below `path` holding a regular `metadata`.
 * Symbolic links are not followed. */
static tracer_archive_status find_ctf(tracer_trace *t, const char *path, int depth)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char **names = NULL;
    size_t n = 0;
    int fd;

    if (depth > MAX_DEPTH)
        return tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: directories nested deeper than %d", path, MAX_DEPTH);
    /* The root given by the user may be a symlink; nothing below it. */
    fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (depth > 0 ? O_NOFOLLOW : 0));
    if (fd < 0)
        return tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", path, strerror(errno));
    st = tracer_archive_list_dir(fd, path, &names, &n);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    for (size_t i = 0; i < n && st == TRACER_ARCHIVE_OK; i++) {
        char *sub = tracer_archive_path_join(path, names[i]);
        struct stat sb;

        if (!sub) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", path);
            break;
        }
        if (lstat(sub, &sb) == 0) {
            if (S_ISREG(sb.st_mode) && strcmp(names[i], "metadata") == 0)
                st = trace_add_ctf(t, path);
            else if (S_ISDIR(sb.st_mode))
                st = find_ctf(t, sub, depth + 1);
        }
        base_free(sub);
    }
cleanup:
    tracer_archive_free_names(names, n);
    return st;
}

/* Entries named like trace archives ("x.tar", "x.tar.zst", ...) in a
 * folder and its subfolders, two levels down: a folder of archives given
 * where one trace was meant (`fathom analyze breakdown traces`). */
typedef struct archives_found {
    size_t n;             /* archives */
    size_t folders;       /* folders that hold them */
    char first[PATH_MAX]; /* the first of those */
} archives_found;

static void archives_in(const char *path, int depth, archives_found *f)
{
    char **names = NULL;
    size_t n = 0, here = 0;
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (depth > 0 ? O_NOFOLLOW : 0));
    if (fd < 0)
        return;
    if (tracer_archive_list_dir(fd, path, &names, &n) != TRACER_ARCHIVE_OK)
        return; /* the caller's message follows */
    for (size_t i = 0; i < n; i++) {
        char *sub = tracer_archive_path_join(path, names[i]);
        struct stat sb;
        if (!sub || lstat(sub, &sb) != 0) {
            base_free(sub);
            continue;
        }
        if (S_ISREG(sb.st_mode) && strstr(names[i], ".tar")) {
            if (!here++ && !f->folders++)
                snprintf(f->first, sizeof f->first, "%s", path);
            f->n++;
        } else if (S_ISDIR(sb.st_mode) && depth < 2) {
            archives_in(sub, depth + 1, f);
        }
        base_free(sub);
    }
    tracer_archive_free_names(names, n);
}

/* The CTF traces under t->root, sorted; none is an error (for a folder the
 * user named, `folder` 1, one that says where it holds archives). */
static tracer_archive_status finish_ctf(tracer_trace *t, int folder)
{
    tracer_archive_status st = find_ctf(t, t->root, 0);

    if (st != TRACER_ARCHIVE_OK)
        return st;
    archives_found f = { 0 };
    if (!t->nctf && folder)
        archives_in(t->root, 0, &f);
    if (f.n)
        return tracer_archive_fail(
            TRACER_ARCHIVE_ENOTRACE, "%s: no CTF trace, but %zu trace archive%s below it: name %s (%s%s/*.tar.zst)",
            t->source, f.n, f.n == 1 ? "" : "s", f.n == 1 ? "it" : "them", f.folders > 1 ? "such as " : "", f.first);
    if (t->nctf == 0)
        return tracer_archive_fail(TRACER_ARCHIVE_ENOTRACE, "%s: no CTF trace found (no 'metadata' file)", t->source);
    qsort(t->ctf, t->nctf, sizeof(*t->ctf), tracer_archive_cmp_str);
    return TRACER_ARCHIVE_OK;
}

static tracer_archive_status open_dir(tracer_trace *t)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    char *mf = NULL;
    const char *base;
    size_t rl;
    struct stat sb;

    t->root = base_strdup(t->source);
    if (!t->root) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", t->source);
        goto cleanup;
    }
    rl = strlen(t->root);
    while (rl > 1 && t->root[rl - 1] == '/')
        t->root[--rl] = '\0';
    st = finish_ctf(t, 1);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    mf = tracer_archive_path_join(t->root, TRACER_MANIFEST_FILE);
    if (!mf) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", t->source);
        goto cleanup;
    }
    base = strrchr(t->root, '/');
    base = base ? base + 1 : t->root;
    if (lstat(mf, &sb) != 0 && strcmp(base, TRACER_ARCHIVE_TOPDIR) == 0) {
        base_free(mf);
        mf = tracer_archive_path_join(t->root, "../" TRACER_MANIFEST_FILE);
        if (!mf) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", t->source);
            goto cleanup;
        }
    }
    if (lstat(mf, &sb) == 0 && S_ISREG(sb.st_mode))
        st = tracer_manifest_read_file(mf, &t->manifest);
cleanup:
    base_free(mf);
    return st;
}

/* Whether src looks like a JSON document: its first byte past white space
 * (and a UTF-8 byte order mark) '{' or '[', or gzip's magic under a name
 * ending ".json.gz" (what PyTorch's profiler and execution-trace observer
 * write). */
static bool json_like(const char *src)
{
    unsigned char b[256];
    const size_t nl = strlen(src);
    int fd = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    const ssize_t n = read(fd, b, sizeof b);
    close(fd);
    if (n >= 2 && b[0] == 0x1f && b[1] == 0x8b)
        return nl > 8 && strcmp(src + nl - 8, ".json.gz") == 0;
    ssize_t i = n >= 3 && b[0] == 0xef && b[1] == 0xbb && b[2] == 0xbf ? 3 : 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r'))
        i++;
    return i < n && (b[i] == '{' || b[i] == '[');
}

/* One-line description of a libarchive read error. */
static tracer_archive_status read_fail(struct archive *a, const char *src)
{
    const char *msg = archive_error_string(a);

    if (!msg)
        msg = "unknown libarchive error";
    if (strstr(msg, "Unrecognized archive format") || strstr(msg, "not recognized"))
        return tracer_archive_fail(TRACER_ARCHIVE_EFORMAT,
                                   json_like(src) ? "%s: a JSON file, not a trace archive or CTF directory (a PyTorch "
                                                    "profiler or execution trace? 'fathom import' converts those)"
                                                  : "%s: not a trace archive or CTF directory (unrecognized format)",
                                   src);
    if (strstr(msg, "runcat") || strstr(msg, "Premature") || strstr(msg, "nexpected end") || strstr(msg, "EOF"))
        return tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s: truncated archive (%s)", src, msg);
    switch (archive_errno(a)) {
    case EIO:
    case EACCES:
    case ENOENT:
    case EISDIR:
    case ENOMEM: return tracer_archive_fail(tracer_archive_errno_status(archive_errno(a)), "%s: %s", src, msg);
    default: return tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s: corrupt archive (%s)", src, msg);
    }
}

/* Why an entry is refused (NULL: acceptable type). */
static const char *bad_type(struct archive_entry *e)
{
    if (archive_entry_hardlink(e))
        return "hard link";
    if (archive_entry_symlink(e))
        return "symbolic link";
    switch (archive_entry_filetype(e)) {
    case AE_IFREG:
    case AE_IFDIR: return NULL;
    case AE_IFLNK: return "symbolic link";
    case AE_IFCHR: return "character device";
    case AE_IFBLK: return "block device";
    case AE_IFIFO: return "fifo";
    case AE_IFSOCK: return "socket";
    default: return "unsupported file type";
    }
}

/*
 * Split name into components in comp (a writable copy), validating it.
 * Returns NULL on success or a reason.  "." and empty components are
 * dropped.
 */
static const char *split_name(char *name, char **comps, size_t *ncomp, size_t maxcomp)
{
    size_t n = 0;
    char *save = NULL;

    if (name[0] == '/')
        return "absolute path";
    for (char *c = strtok_r(name, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
        if (strcmp(c, ".") == 0)
            continue;
        if (strcmp(c, "..") == 0)
            return "'..' component";
        if (strlen(c) > MAX_NAME_COMPONENT)
            return "name component too long";
        if (n == maxcomp)
            return "too deeply nested";
        comps[n++] = c;
    }
    *ncomp = n;
    return NULL;
}

typedef struct extract_state {
    struct archive *a;
    int rootfd;
    const char *src;
    const char *tmpbase;
    uint64_t total, max_total;
    char *buf;
} extract_state;

/* A failed write while extracting; a full disk is named as such. */
static tracer_archive_status write_fail(const extract_state *x, const char *entry, int e)
{
    if (e == ENOSPC || e == EDQUOT)
        return tracer_archive_fail(TRACER_ARCHIVE_ENOSPC,
                                   "%s: no space left on device in %s while "
                                   "extracting '%s' (set TMPDIR to a larger "
                                   "file system)",
                                   x->src, x->tmpbase, entry);
    return tracer_archive_fail(tracer_archive_errno_status(e), "%s: writing '%s': %s", x->src, entry, strerror(e));
}

static tracer_archive_status extract_entry(extract_state *x, struct archive_entry *e)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    const char *raw = archive_entry_pathname(e);
    const char *why;
    char name[TRACER_TRACE_PATH_MAX + 1];
    char *comps[MAX_DEPTH + 1];
    size_t ncomp = 0, len;
    int dfd = x->rootfd, fd = -1;
    bool is_dir = archive_entry_filetype(e) == AE_IFDIR;

    if (!raw || !*raw)
        return tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE, "%s: entry with an empty or unreadable name", x->src);
    len = strlen(raw);
    if (len > TRACER_TRACE_PATH_MAX)
        return tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE, "%s: entry name longer than %d bytes ('%.60s...')", x->src,
                                   TRACER_TRACE_PATH_MAX, raw);
    why = bad_type(e);
    if (why)
        return tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE, "%s: refusing entry '%s': %s", x->src, raw, why);
    memcpy(name, raw, len + 1);
    why = split_name(name, comps, &ncomp, MAX_DEPTH + 1);
    if (why)
        return tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE, "%s: refusing entry '%s': %s", x->src, raw, why);
    if (ncomp == 0) {
        if (is_dir)
            return TRACER_ARCHIVE_OK; /* "./" itself */
        return tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE, "%s: refusing entry '%s': empty name", x->src, raw);
    }
    if (archive_entry_size_is_set(e) && archive_entry_size(e) > 0 &&
        (uint64_t)archive_entry_size(e) > x->max_total - x->total) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: entry '%s' would expand past the %" PRIu64 "-byte limit",
                                 x->src, raw, x->max_total);
        goto cleanup;
    }
    /* Walk/create parent directories without following anything. */
    for (size_t i = 0; i + 1 < ncomp || (is_dir && i < ncomp); i++) {
        int nfd;

        if (mkdirat(dfd, comps[i], 0700) != 0 && errno != EEXIST) {
            st = write_fail(x, raw, errno);
            goto cleanup;
        }
        nfd = openat(dfd, comps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (nfd < 0) {
            st = tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE,
                                     "%s: refusing entry '%s': path conflicts "
                                     "with an earlier entry (%s)",
                                     x->src, raw, strerror(errno));
            goto cleanup;
        }
        if (dfd != x->rootfd)
            close(dfd);
        dfd = nfd;
    }
    if (is_dir)
        goto cleanup;
    fd = openat(dfd, comps[ncomp - 1], O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        if (errno == EEXIST)
            st = tracer_archive_fail(TRACER_ARCHIVE_EUNSAFE, "%s: refusing entry '%s': duplicate name", x->src, raw);
        else
            st = write_fail(x, raw, errno);
        goto cleanup;
    }
    for (;;) {
        la_ssize_t n = archive_read_data(x->a, x->buf, COPY_BUF_SIZE);

        if (n == 0)
            break;
        if (n < 0) {
            st = read_fail(x->a, x->src);
            goto cleanup;
        }
        if ((uint64_t)n > x->max_total - x->total) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ELIMIT,
                                     "%s: expands past the %" PRIu64 "-byte limit (at entry '%s')", x->src,
                                     x->max_total, raw);
            goto cleanup;
        }
        x->total += (uint64_t)n;
        if (!write_all(fd, x->buf, (size_t)n)) {
            st = write_fail(x, raw, errno);
            goto cleanup;
        }
    }
    if (close(fd) != 0) {
        fd = -1;
        st = write_fail(x, raw, errno);
        goto cleanup;
    }
    fd = -1;
cleanup:
    if (fd >= 0)
        close(fd);
    if (dfd != x->rootfd)
        close(dfd);
    return st;
}

/* The extraction bound: limits, else $FATHOM_MAX_EXTRACT, else 4 GiB. */
static tracer_archive_status max_bytes(const tracer_trace_limits *lim, uint64_t *out)
{
    const char *env = getenv(TRACER_TRACE_MAX_ENV);
    const char *p = env;
    uint64_t v = 0;
    unsigned shift = 0;

    *out = TRACER_TRACE_DEFAULT_MAX_BYTES;
    if (lim && lim->max_total_bytes) {
        *out = lim->max_total_bytes;
        return TRACER_ARCHIVE_OK;
    }
    if (!env)
        return TRACER_ARCHIVE_OK;
    for (; *p >= '0' && *p <= '9'; p++) {
        if (v > (UINT64_MAX - 9) / 10)
            goto bad;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    if (p == env)
        goto bad;
    switch (*p) {
    case 'K': shift = 10, p++; break;
    case 'M': shift = 20, p++; break;
    case 'G': shift = 30, p++; break;
    default: break;
    }
    if (*p || v == 0 || v > (UINT64_MAX >> shift))
        goto bad;
    *out = v << shift;
    return TRACER_ARCHIVE_OK;
bad:
    return tracer_archive_fail(TRACER_ARCHIVE_EINVAL,
                               "%s='%.40s': want a positive number of bytes "
                               "(optionally with K, M or G)",
                               TRACER_TRACE_MAX_ENV, env);
}

/* A reader of t->source with every filter and the tar formats. */
static tracer_archive_status open_reader(const tracer_trace *t, struct archive **out)
{
    struct archive *a = archive_read_new();
    tracer_archive_status st;

    *out = NULL;
    if (!a)
        return tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", t->source);
    archive_read_support_filter_all(a);
    archive_read_support_format_tar(a);
    if (archive_read_open_filename(a, t->source, COPY_BUF_SIZE) != ARCHIVE_OK) {
        st = read_fail(a, t->source);
        archive_read_free(a);
        return st;
    }
    *out = a;
    return TRACER_ARCHIVE_OK;
}

/*
 * The first pass: walk the headers without writing anything, summing the
 * sizes they declare, and refuse the archive if the sum passes the bound or
 * the free space of tmpbase.  A compressed stream is still decompressed to
 * reach each header, but nothing is kept; the walk stops at the first
 * header that passes a bound.
 */
static tracer_archive_status prescan(const tracer_trace *t, const char *tmpbase, uint64_t max_total,
                                     uint64_t max_entries)
{
    tracer_archive_status st;
    struct archive *a = NULL;
    struct archive_entry *e;
    struct statvfs vfs;
    uint64_t sum = 0, nent = 0, avail = UINT64_MAX;

    if (statvfs(tmpbase, &vfs) == 0 && vfs.f_frsize > 0)
        avail = (uint64_t)vfs.f_bavail * vfs.f_frsize;
    st = open_reader(t, &a);
    if (st != TRACER_ARCHIVE_OK)
        return st;
    for (;;) {
        int r = archive_read_next_header(a, &e);
        int64_t size;

        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            st = read_fail(a, t->source);
            goto end;
        }
        if (++nent > max_entries) {
            st =
                tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: more than %" PRIu64 " entries", t->source, max_entries);
            goto end;
        }
        size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
        if (size > 0 && archive_entry_filetype(e) == AE_IFREG)
            sum += (uint64_t)size < UINT64_MAX - sum ? (uint64_t)size : UINT64_MAX - sum;
        if (sum > max_total) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ELIMIT,
                                     "%s: its entries declare more than %" PRIu64 " bytes, past the %" PRIu64
                                     "-byte limit "
                                     "(refused before extracting; %s raises "
                                     "it)",
                                     t->source, sum, max_total, TRACER_TRACE_MAX_ENV);
            goto end;
        }
        if (sum > avail) {
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOSPC,
                                     "%s: no space left on device: its entries "
                                     "declare more than %" PRIu64 " bytes and "
                                     "%s has %" PRIu64 " free (refused before "
                                     "extracting; set TMPDIR)",
                                     t->source, sum, tmpbase, avail);
            goto end;
        }
        if (archive_read_data_skip(a) < ARCHIVE_WARN) {
            st = read_fail(a, t->source);
            goto end;
        }
    }
    if (nent == 0)
        st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s: empty archive", t->source);
end:
    archive_read_free(a);
    return st;
}

static tracer_archive_status open_archive(tracer_trace *t, const tracer_trace_limits *lim)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    extract_state x = { .rootfd = -1, .src = t->source };
    struct archive_entry *e;
    const char *tmpbase = getenv("TMPDIR");
    uint64_t max_entries = TRACER_TRACE_DEFAULT_MAX_ENTRIES, nent = 0;
    tracer_cleanup_mask mask;
    char name[sizeof(EXTRACT_PREFIX) + 32];
    int mfd = -1, mkerr = 0;

    if (lim && lim->max_entries)
        max_entries = lim->max_entries;
    if (!tmpbase || !*tmpbase)
        tmpbase = "/tmp";
    x.tmpbase = tmpbase;
    st = max_bytes(lim, &x.max_total);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    /* trees left by SIGKILLed readers */
    tracer_cleanup_stale(tmpbase, EXTRACT_PREFIX);
    st = prescan(t, tmpbase, x.max_total, max_entries);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    snprintf(name, sizeof name, EXTRACT_PREFIX "%ld-XXXXXX", (long)getpid());
    t->tmpdir = tracer_archive_path_join(tmpbase, name);
    x.buf = base_malloc(COPY_BUF_SIZE);
    if (!t->tmpdir || !x.buf) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", t->source);
        goto cleanup;
    }
    tracer_cleanup_block(&mask);
    if (mkdtemp(t->tmpdir))
        t->tmpslot = tracer_cleanup_add(t->tmpdir, true);
    else
        mkerr = errno;
    tracer_cleanup_unblock(&mask);
    if (mkerr) {
        st = tracer_archive_fail(mkerr == ENOSPC ? TRACER_ARCHIVE_ENOSPC : TRACER_ARCHIVE_EIO,
                                 "%s: cannot create a temporary directory: %s", t->tmpdir,
                                 mkerr == ENOSPC ? "no space left on device" : strerror(mkerr));
        base_free(t->tmpdir);
        t->tmpdir = NULL;
        goto cleanup;
    }
    t->root = base_strdup(t->tmpdir);
    if (!t->root) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", t->source);
        goto cleanup;
    }
    x.rootfd = open(t->tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (x.rootfd < 0) {
        st = tracer_archive_fail(tracer_archive_errno_status(errno), "%s: %s", t->tmpdir, strerror(errno));
        goto cleanup;
    }
    st = open_reader(t, &x.a);
    if (st != TRACER_ARCHIVE_OK)
        goto cleanup;
    for (;;) {
        int r = archive_read_next_header(x.a, &e);

        if (r == ARCHIVE_EOF)
            break;
        if (r < ARCHIVE_WARN) {
            st = read_fail(x.a, t->source);
            goto cleanup;
        }
        if (++nent > max_entries) {
            st =
                tracer_archive_fail(TRACER_ARCHIVE_ELIMIT, "%s: more than %" PRIu64 " entries", t->source, max_entries);
            goto cleanup;
        }
        st = extract_entry(&x, e);
        if (st != TRACER_ARCHIVE_OK)
            goto cleanup;
    }
    if (nent == 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s: empty archive", t->source);
        goto cleanup;
    }
    mfd = openat(x.rootfd, TRACER_MANIFEST_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (mfd >= 0) {
        char shown[PATH_MAX];

        snprintf(shown, sizeof(shown), "%s:%s", t->source, TRACER_MANIFEST_FILE);
        st = tracer_manifest_read_fd(mfd, shown, &t->manifest);
        if (st != TRACER_ARCHIVE_OK)
            goto cleanup;
    }
    st = finish_ctf(t, 0);
cleanup:
    if (mfd >= 0)
        close(mfd);
    if (x.a)
        archive_read_free(x.a);
    if (x.rootfd >= 0)
        close(x.rootfd);
    base_free(x.buf);
    return st;
}

static bool is_live_url(const char *s)
{
    return strncmp(s, "net://", 6) == 0 || strncmp(s, "net4://", 7) == 0 || strncmp(s, "net6://", 7) == 0;
}

tracer_archive_status tracer_trace_open_ex(const char *path_or_url, const tracer_trace_limits *limits,
                                           tracer_trace **out)
{
    tracer_archive_status st = TRACER_ARCHIVE_OK;
    tracer_trace *t = NULL;
    struct stat sb;

    if (out)
        *out = NULL;
    if (!path_or_url || !*path_or_url || !out) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "trace open: no path given");
        goto cleanup;
    }
    t = base_calloc(1, sizeof(*t));
    if (t)
        t->tmpslot = -1;
    if (!t || !(t->source = base_strdup(path_or_url))) {
        st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", path_or_url);
        goto cleanup;
    }
    if (is_live_url(path_or_url)) {
        t->kind = TRACER_TRACE_LIVE;
        t->root = base_strdup(path_or_url);
        if (!t->root)
            st = tracer_archive_fail(TRACER_ARCHIVE_ENOMEM, "%s: out of memory", path_or_url);
        goto cleanup;
    }
    if (stat(path_or_url, &sb) != 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EIO, "%s: %s", path_or_url, strerror(errno));
        goto cleanup;
    }
    if (S_ISDIR(sb.st_mode)) {
        t->kind = TRACER_TRACE_DIR;
        st = open_dir(t);
        goto cleanup;
    }
    t->kind = TRACER_TRACE_ARCHIVE;
    if (!S_ISREG(sb.st_mode)) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EINVAL, "%s: not a regular file or directory", path_or_url);
        goto cleanup;
    }
    if (sb.st_size == 0) {
        st = tracer_archive_fail(TRACER_ARCHIVE_EFORMAT, "%s: empty file (not a trace archive)", path_or_url);
        goto cleanup;
    }
    st = open_archive(t, limits);
cleanup:
    if (st == TRACER_ARCHIVE_OK) {
        *out = t;
        t = NULL;
    }
    tracer_trace_close(t); /* removes the temporary directory on error */
    return st;
}

tracer_archive_status tracer_trace_open(const char *path_or_url, tracer_trace **out)
{
    return tracer_trace_open_ex(path_or_url, NULL, out);
}
