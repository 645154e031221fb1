/*
 * fathom outputs and the cleanup registry (see output.h).  libc and exec/'s
 * base allocator alone.
 */
#define _GNU_SOURCE /* mkostemp, renameat2, O_DIRECTORY */

#include "output.h"

#include "archive_internal.h"
#include "base/alloc.h"
#include "base/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define TMP_PREFIX ".fathom-tmp-"
#define CLEANUP_SLOTS 64
#define TREE_DEPTH 24 /* folders deep a signal handler removes (2 KiB of stack each) */
/* folders deep tracer_remove_tree and the stale cleanup remove: deeper
 * than any tree the archive library extracts (64) */
#define REMOVE_DEPTH 72

/* ---- errors ------------------------------------------------------------ */

/* Sets the thread's message (base/error.h; control bytes made '?');
 * returns st. */
#define output_fail(st, ...) ((tracer_output_status)base_fail_oneline((int)(st), __VA_ARGS__))

/* An errno as a status and a message ("no space left on device" named). */
static tracer_output_status errno_fail(const char *what, const char *path, const char *doing, int e)
{
    if (e == ENOSPC || e == EDQUOT)
        return output_fail(TRACER_OUTPUT_ENOSPC, "%s%s%s: %s: no space left on device", what, *what ? " " : "", path,
                           doing);
    return output_fail(e == ENOMEM ? TRACER_OUTPUT_ENOMEM : TRACER_OUTPUT_EIO, "%s%s%s: %s: %s", what, *what ? " " : "",
                       path, doing, strerror(e));
}

/* ---- async-signal-safe tree removal ------------------------------------ */

struct dirent64_raw {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Remove name (relative to dfd) and, if it is a directory, all below it
 * down to max_depth.  Only raw system calls: usable from a signal handler. */
static void remove_at(int dfd, const char *name, int depth, int max_depth)
{
    char buf[2048];
    int fd;
    bool removed;

    if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
        return;
    if (depth > max_depth)
        return;
    fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return;
    /* Removing entries while reading a directory may skip some: read
	 * again from the start until a pass removes nothing. */
    do {
        long n;

        removed = false;
        if (lseek(fd, 0, SEEK_SET) != 0)
            break;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
            for (long off = 0; off < n;) {
                struct dirent64_raw *d = (struct dirent64_raw *)(buf + off);
                const char *dn = d->d_name;

                off += d->d_reclen;
                if (dn[0] == '.' && (dn[1] == '\0' || (dn[1] == '.' && dn[2] == '\0')))
                    continue;
                remove_at(fd, dn, depth + 1, max_depth);
                removed = true;
            }
        }
    } while (removed);
    close(fd);
    unlinkat(dfd, name, AT_REMOVEDIR);
}

void tracer_remove_tree(const char *path)
{
    if (path && *path)
        remove_at(AT_FDCWD, path, 0, REMOVE_DEPTH);
}

/* ---- the registry ------------------------------------------------------ */

enum { SLOT_FREE, SLOT_BUSY, SLOT_FILE, SLOT_TREE };

static struct cleanup_slot {
    atomic_int state;
    char path[PATH_MAX];
} slots[CLEANUP_SLOTS];

static const int caught[] = { SIGINT, SIGTERM, SIGHUP };
static atomic_flag handlers_installed = ATOMIC_FLAG_INIT;

static void on_signal(int sig)
{
    int saved = errno;
    struct sigaction dfl;

    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        int st = atomic_load(&slots[i].state);

        if (st == SLOT_FILE)
            unlink(slots[i].path);
        else if (st == SLOT_TREE)
            remove_at(AT_FDCWD, slots[i].path, 0, TREE_DEPTH);
    }
    /* The default action, so the exit status says which signal. */
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig); /* delivered when this handler returns */
    errno = saved;
}

static void install_handlers(void)
{
    if (atomic_flag_test_and_set(&handlers_installed))
        return;
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++) {
        struct sigaction old, sa;

        if (sigaction(caught[i], NULL, &old) != 0 || (old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL)
            continue; /* ignored, or someone else's handler */
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigfillset(&sa.sa_mask); /* one cleanup at a time */
        sigaction(caught[i], &sa, NULL);
    }
}

int tracer_cleanup_add(const char *path, bool is_tree)
{
    size_t len;

    if (!path || (len = strlen(path)) == 0 || len >= PATH_MAX)
        return -1;
    install_handlers();
    for (int i = 0; i < CLEANUP_SLOTS; i++) {
        int expect = SLOT_FREE;

        if (!atomic_compare_exchange_strong(&slots[i].state, &expect, SLOT_BUSY))
            continue;
        memcpy(slots[i].path, path, len + 1);
        atomic_store(&slots[i].state, is_tree ? SLOT_TREE : SLOT_FILE);
        return i;
    }
    return -1;
}

void tracer_cleanup_forget(int id)
{
    if (id >= 0 && id < CLEANUP_SLOTS)
        atomic_store(&slots[id].state, SLOT_FREE);
}

void tracer_cleanup_disown(void)
{
    for (int i = 0; i < CLEANUP_SLOTS; i++)
        atomic_store(&slots[i].state, SLOT_FREE);
}

void tracer_cleanup_block(tracer_cleanup_mask *m)
{
    sigset_t set;

    _Static_assert(sizeof(sigset_t) <= sizeof m->saved, "tracer_cleanup_mask too small for a sigset_t");
    sigemptyset(&set);
    for (size_t i = 0; i < sizeof caught / sizeof caught[0]; i++)
        sigaddset(&set, caught[i]);
    pthread_sigmask(SIG_BLOCK, &set, (sigset_t *)(void *)m->saved);
}

void tracer_cleanup_unblock(const tracer_cleanup_mask *m)
{
    pthread_sigmask(SIG_SETMASK, (const sigset_t *)(const void *)m->saved, NULL);
}

/* The pid in `<prefix><pid>-...`, or 0. */
static pid_t name_pid(const char *name, const char *prefix)
{
    size_t pl = strlen(prefix);
    long long pid = 0;
    const char *p;

    if (strncmp(name, prefix, pl) != 0)
        return 0;
    for (p = name + pl; *p >= '0' && *p <= '9'; p++) {
        pid = pid * 10 + (*p - '0');
        if (pid > INT_MAX)
            return 0;
    }
    if (p == name + pl || *p != '-')
        return 0;
    return (pid_t)pid;
}

int tracer_cleanup_stale(const char *dir, const char *prefix)
{
    DIR *d;
    struct dirent *de;
    int fd, removed = 0;

    if (!dir || !prefix || !*prefix)
        return 0;
    fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        pid_t pid = name_pid(de->d_name, prefix);
        struct stat sb;

        if (pid <= 0 || pid == getpid())
            continue;
        if (kill(pid, 0) == 0 || errno != ESRCH)
            continue; /* alive (or not ours to judge) */
        if (fstatat(fd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0 || sb.st_uid != geteuid() ||
            !(S_ISDIR(sb.st_mode) || S_ISREG(sb.st_mode)))
            continue;
        remove_at(fd, de->d_name, 0, REMOVE_DEPTH);
        removed++;
    }
    closedir(d);
    return removed;
}

/* ---- the output rule ----------------------------------------------------- */

struct tracer_output {
    FILE *f;
    char *path;
    char *tmp;
    int slot;
};

static bool is_url(const char *s) { return strstr(s, "://") != NULL; }

/* The nearest existing folder holding path, resolved into real (PATH_MAX
 * bytes): a path in folders still to be made lies where its first existing
 * ancestor does.  1 when found, 0 when none resolves, -1 out of memory. */
static int parent_real(const char *path, char *real)
{
    char *copy = base_strdup(path), *slash;
    int found = 0;

    if (!copy)
        return -1;
    for (;;) {
        slash = strrchr(copy, '/');
        if (!slash) {
            found = realpath(".", real) != NULL;
            break;
        }
        if (slash == copy) {
            found = realpath("/", real) != NULL;
            break;
        }
        *slash = '\0';
        if (realpath(copy, real)) {
            found = 1;
            break;
        }
    }
    base_free(copy);
    return found;
}

/* dir exists, is a folder and this process may make files in it; else
 * the reason, for the output `named` ("-o P: cannot write in D: ..."). */
static tracer_output_status writable_folder(const char *what, const char *named, const char *dir)
{
    char doing[PATH_MAX + 32];
    struct stat ds;
    snprintf(doing, sizeof doing, "cannot write in %s", dir);
    if (stat(dir, &ds) != 0)
        return errno_fail(what, named, doing, errno);
    if (!S_ISDIR(ds.st_mode))
        return errno_fail(what, named, doing, ENOTDIR);
    if (access(dir, W_OK | X_OK) != 0)
        return errno_fail(what, named, doing, errno);
    return TRACER_OUTPUT_OK;
}

tracer_output_status tracer_output_check(const char *path, const char *const *inputs, size_t ninputs, const char *what)
{
    tracer_output_status st = TRACER_OUTPUT_OK;
    struct stat out_l, out_s;
    bool exists;
    int parent = 0; /* 1: parent_dir holds the resolved folder of path */
    char parent_dir[PATH_MAX], in_real[PATH_MAX];

    if (!what)
        what = "";
    if (!path || !*path)
        return output_fail(TRACER_OUTPUT_EINVAL, "%s%sno output path given", what, *what ? ": " : "");
    exists = lstat(path, &out_l) == 0;
    for (size_t i = 0; i < ninputs && inputs; i++) {
        const char *in = inputs[i];
        struct stat in_s;
        size_t rl;

        if (!in || !*in || strcmp(in, "-") == 0 || is_url(in) || stat(in, &in_s) != 0)
            continue;
        if (strcmp(in, path) == 0 ||
            (exists && stat(path, &out_s) == 0 && out_s.st_dev == in_s.st_dev && out_s.st_ino == in_s.st_ino)) {
            st = output_fail(TRACER_OUTPUT_EALIAS,
                             "%s%s%s is the input %s: refusing to "
                             "write over it",
                             what, *what ? " " : "", path, in);
            goto end;
        }
        if (exists || !S_ISDIR(in_s.st_mode))
            continue;
        /* A new file inside an input folder would change that input. */
        if (!parent && (parent = parent_real(path, parent_dir)) < 0) {
            st = output_fail(TRACER_OUTPUT_ENOMEM, "%s%s%s: out of memory", what, *what ? " " : "", path);
            goto end;
        }
        if (!parent || !realpath(in, in_real))
            continue;
        rl = strlen(in_real);
        if (strncmp(parent_dir, in_real, rl) == 0 &&
            (parent_dir[rl] == '\0' || parent_dir[rl] == '/' || strcmp(in_real, "/") == 0)) {
            st = output_fail(TRACER_OUTPUT_EALIAS,
                             "%s%s%s is inside the input %s: refusing "
                             "to write into it",
                             what, *what ? " " : "", path, in);
            goto end;
        }
    }
    if (exists) {
        st = output_fail(TRACER_OUTPUT_EEXIST, "%s%s%s exists%s: nothing is overwritten", what, *what ? " " : "", path,
                         S_ISLNK(out_l.st_mode) ? " (a symbolic link)" : "");
    } else {
        /* its folder: an existing one this process may write in */
        const char *slash = strrchr(path, '/');
        char dir[PATH_MAX];
        if (!slash)
            snprintf(dir, sizeof dir, ".");
        else if (slash == path)
            snprintf(dir, sizeof dir, "/");
        else
            snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
        st = writable_folder(what, path, dir);
    }
end:
    return st;
}

tracer_output_status tracer_output_check_folder(const char *dir, const char *what)
{
    char p[PATH_MAX];
    struct stat ds;
    if (!what)
        what = "";
    if (!dir || !*dir || strlen(dir) >= sizeof p)
        return output_fail(TRACER_OUTPUT_EINVAL, "%s%sno folder or one too long", what, *what ? ": " : "");
    snprintf(p, sizeof p, "%s", dir);
    for (;;) { /* the deepest part that exists */
        if (stat(p, &ds) == 0)
            break;
        if (errno != ENOENT && errno != ENOTDIR) /* ENOTDIR: a file on the way, named below */
            return errno_fail(what, dir, "cannot write there", errno);
        char *slash = strrchr(p, '/');
        while (slash && slash > p && slash[1] == '\0') { /* "a/b/": "a/b" */
            *slash = '\0';
            slash = strrchr(p, '/');
        }
        if (!slash)
            snprintf(p, sizeof p, ".");
        else if (slash == p)
            p[1] = '\0';
        else
            *slash = '\0';
    }
    return writable_folder(what, dir, p);
}

tracer_output_status tracer_output_open(const char *path, const char *const *inputs, size_t ninputs, const char *what,
                                        tracer_output **out)
{
    tracer_output_status st;
    tracer_output *o = NULL;
    tracer_cleanup_mask mask;
    const char *slash;
    size_t dl;
    int fd = -1;
    mode_t um;

    if (!what)
        what = "";
    if (!out)
        return output_fail(TRACER_OUTPUT_EINVAL, "output: NULL argument");
    *out = NULL;
    st = tracer_output_check(path, inputs, ninputs, what);
    if (st != TRACER_OUTPUT_OK)
        return st;
    o = base_calloc(1, sizeof *o);
    slash = strrchr(path, '/');
    dl = slash ? (size_t)(slash - path) + 1 : 0;
    if (o) {
        o->slot = -1;
        o->path = base_strdup(path);
        o->tmp = base_malloc(dl + sizeof(TMP_PREFIX) + 32);
    }
    if (!o || !o->path || !o->tmp) {
        st = output_fail(TRACER_OUTPUT_ENOMEM, "%s%s%s: out of memory", what, *what ? " " : "", path);
        goto end;
    }
    /* leftovers of outputs whose writer was SIGKILLed */
    if (dl) {
        size_t n = dl > 1 ? dl - 1 : 1;
        char *dir = base_malloc(n + 1);

        if (!dir) {
            st = output_fail(TRACER_OUTPUT_ENOMEM, "%s%s%s: out of memory", what, *what ? " " : "", path);
            goto end;
        }
        memcpy(dir, path, n);
        dir[n] = '\0';
        tracer_cleanup_stale(dir, TMP_PREFIX);
        base_free(dir);
    } else {
        tracer_cleanup_stale(".", TMP_PREFIX);
    }
    memcpy(o->tmp, path, dl);
    snprintf(o->tmp + dl, sizeof(TMP_PREFIX) + 32, TMP_PREFIX "%ld-XXXXXX", (long)getpid());
    tracer_cleanup_block(&mask);
    fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd >= 0)
        o->slot = tracer_cleanup_add(o->tmp, false);
    tracer_cleanup_unblock(&mask);
    if (fd < 0) {
        st = errno_fail(what, path, "cannot write", errno);
        base_free(o->tmp);
        o->tmp = NULL;
        goto end;
    }
    um = umask(0);
    umask(um);
    (void)fchmod(fd, 0666 & ~um); /* what a plain fopen would give */
    o->f = fdopen(fd, "w");
    if (!o->f) {
        st = errno_fail(what, path, "fdopen", errno);
        close(fd);
        goto end;
    }
    *out = o;
    o = NULL;
end:
    tracer_output_abort(o);
    return st;
}

FILE *tracer_output_file(tracer_output *o) { return o ? o->f : NULL; }

const char *tracer_output_path(const tracer_output *o) { return o ? o->path : NULL; }

void tracer_output_abort(tracer_output *o)
{
    if (!o)
        return;
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    tracer_cleanup_forget(o->slot);
    base_free(o->tmp);
    base_free(o->path);
    base_free(o);
}

tracer_output_status tracer_output_commit(tracer_output *o)
{
    tracer_output_status st = TRACER_OUTPUT_OK;
    FILE *f;

    if (!o)
        return output_fail(TRACER_OUTPUT_EINVAL, "output: NULL argument");
    f = o->f;
    o->f = NULL;
    errno = 0;
    if (fflush(f) != 0 || ferror(f)) {
        int e = errno ? errno : EIO;

        fclose(f);
        st = errno_fail("", o->path, "write", e);
        goto end;
    }
    if (fclose(f) != 0) {
        st = errno_fail("", o->path, "write", errno);
        goto end;
    }
    if (link(o->tmp, o->path) == 0)
        goto end;
    if (errno == EPERM || errno == EOPNOTSUPP || errno == ENOSYS) {
        /* file systems without hard links: no-replace rename */
        if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->path, RENAME_NOREPLACE) == 0)
            goto end;
    }
    if (errno == EEXIST)
        st = output_fail(TRACER_OUTPUT_EEXIST,
                         "%s appeared while it was written: nothing is "
                         "overwritten",
                         o->path);
    else
        st = errno_fail("", o->path, "publish", errno);
end:
    tracer_output_abort(o); /* the temporary name goes in every case */
    return st;
}
