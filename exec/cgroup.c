/* cgroup.c -- what a process's cgroups allow it, the least along the path
 * from its cgroup up to its hierarchy's mount: CPU time, the CFS quota of
 * cgroup v2 (cpu.max: "QUOTA PERIOD" or "max PERIOD") and of v1's cpu
 * controller (cpu.cfs_quota_us over cpu.cfs_period_us, -1 for none), and
 * memory (v2 memory.max, v1 memory.limit_in_bytes). A container run with
 * `--cpus=2` on a 64-CPU host has 64 CPUs in its affinity and two CPUs'
 * worth of time: 64 threads there are throttled, not faster; one run with
 * `--memory=256m` is killed, without a word, when it touches more. Read
 * from files only, under a root folder (the system's is ""), so that a
 * test can hand it a made-up tree. */
#include "internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { CG_PATH = 4096, CG_LINE = 8192 };

/* The first line of a file (its newline cut) into buf; 0 where unreadable. */
static int read_line(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (ok)
        buf[strcspn(buf, "\n")] = 0;
    return ok;
}

/* What one cgroup folder allows, of a controller; 0 where it sets nothing. */
typedef double (*folder_fn)(const char *dir, int v2);

/* The CPU quota of one folder, in CPUs. */
static double cpu_folder(const char *dir, int v2)
{
    char path[CG_PATH + 32], a[64], b[64];
    double quota, period;
    if (v2) {
        snprintf(path, sizeof path, "%s/cpu.max", dir);
        if (!read_line(path, a, sizeof a))
            return 0;
        char q[32] = "", p[32] = "";
        if (sscanf(a, "%31s %31s", q, p) < 1 || strcmp(q, "max") == 0)
            return 0;
        quota = strtod(q, NULL), period = p[0] ? strtod(p, NULL) : 100000;
    } else {
        snprintf(path, sizeof path, "%s/cpu.cfs_quota_us", dir);
        if (!read_line(path, a, sizeof a))
            return 0;
        snprintf(path, sizeof path, "%s/cpu.cfs_period_us", dir);
        if (!read_line(path, b, sizeof b))
            return 0;
        quota = strtod(a, NULL), period = strtod(b, NULL);
    }
    return quota > 0 && period > 0 ? quota / period : 0;
}

/* The memory limit of one folder, in bytes (v1 writes "none" as about 2^63). */
static double mem_folder(const char *dir, int v2)
{
    char path[CG_PATH + 32], a[64];
    snprintf(path, sizeof path, "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
    if (!read_line(path, a, sizeof a) || strcmp(a, "max") == 0)
        return 0;
    char *end;
    double v = strtod(a, &end);
    return end != a && v > 0 && v < 0x1p60 ? v : 0;
}

/* The least limit from folder mnt + rel up to mnt itself; 0 where none. */
static double path_limit(const char *mnt, const char *rel, int v2, folder_fn fn)
{
    char dir[CG_PATH];
    if (snprintf(dir, sizeof dir, "%s%s", mnt, rel) >= (int)sizeof dir)
        return 0;
    size_t floor = strlen(mnt);
    double least = 0;
    for (;;) {
        double l = fn(dir, v2);
        if (l > 0 && (least == 0 || l < least))
            least = l;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < floor)
            break;
        *slash = 0; /* the parent, down to the mount point */
    }
    return least;
}

/* Whether the comma-separated list has the word w. */
static int has_word(const char *list, const char *w)
{
    size_t n = strlen(w);
    for (const char *p = list; p && *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, w, n) == 0)
            return 1;
        p = e ? e + 1 : NULL;
    }
    return 0;
}

/* The process's cgroup path in the v2 hierarchy (v2) or in v1's
 * controller ctl's, from proc/self/cgroup under root; 0 where it has none. */
static int cgroup_of(const char *root, int v2, const char *ctl, char *out, size_t n)
{
    char path[CG_PATH], line[CG_LINE];
    snprintf(path, sizeof path, "%s/proc/self/cgroup", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = 0; /* line: the ID, c1 + 1: the controllers, c2 + 1: the path */
        const int is_v2 = strcmp(line, "0") == 0 && c1[1] == 0;
        if (v2 ? is_v2 : !is_v2 && has_word(c1 + 1, ctl))
            found = snprintf(out, n, "%s", c2 + 1) < (int)n;
    }
    fclose(f);
    return found;
}

/* The least limit of controller ctl (fn reads a folder's) over the
 * process's cgroups in every hierarchy that has it; 0 where none. */
static double cgroup_limit(const char *root, const char *ctl, folder_fn fn)
{
    char path[CG_PATH], line[CG_LINE], cg[2][CG_PATH];
    const int have[2] = { cgroup_of(root, 0, ctl, cg[0], sizeof cg[0]), cgroup_of(root, 1, ctl, cg[1], sizeof cg[1]) };
    if (!have[0] && !have[1])
        return 0;
    snprintf(path, sizeof path, "%s/proc/self/mountinfo", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    double least = 0;
    /* mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE SOURCE SUPEROPTIONS */
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = 0;
        char *fld[6] = { 0 }, *save = NULL, *tok = strtok_r(line, " ", &save);
        int nf = 0;
        for (; tok && nf < 6; tok = strtok_r(NULL, " ", &save))
            fld[nf++] = tok;
        while (tok && strcmp(tok, "-") != 0)
            tok = strtok_r(NULL, " ", &save);
        char *fstype = tok ? strtok_r(NULL, " ", &save) : NULL, *src = fstype ? strtok_r(NULL, " ", &save) : NULL,
             *super = src ? strtok_r(NULL, " ", &save) : NULL;
        if (nf < 5 || !fstype)
            continue;
        const int v2 = strcmp(fstype, "cgroup2") == 0;
        if (!(v2 || (strcmp(fstype, "cgroup") == 0 && super && has_word(super, ctl))) || !have[v2])
            continue;
        /* the cgroup's folder: the mount point and the path below the mount's root */
        const char *mroot = fld[3], *rel = cg[v2];
        size_t rl = strlen(mroot);
        if (strcmp(mroot, "/") != 0) {
            if (strncmp(rel, mroot, rl) != 0 || (rel[rl] != 0 && rel[rl] != '/'))
                continue; /* a mount of another part of the hierarchy */
            rel += rl;
        }
        if (strcmp(rel, "/") == 0)
            rel = "";
        char mnt[CG_PATH];
        if (snprintf(mnt, sizeof mnt, "%s%s", root, strcmp(fld[4], "/") == 0 ? "" : fld[4]) >= (int)sizeof mnt)
            continue;
        double l = path_limit(mnt, rel, v2, fn);
        if (l > 0 && (least == 0 || l < least))
            least = l;
    }
    fclose(f);
    return least;
}

double exec_cgroup_cpu_limit(const char *root) { return cgroup_limit(root, "cpu", cpu_folder); }

double exec_cgroup_mem_limit(const char *root) { return cgroup_limit(root, "memory", mem_folder); }

double exec_machine_memory(const char *root)
{
    char path[CG_PATH], line[256];
    snprintf(path, sizeof path, "%s/proc/meminfo", root);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    double total = 0, swap = 0, kb;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "MemTotal: %lf kB", &kb) == 1)
            total = kb * 1024;
        else if (sscanf(line, "SwapTotal: %lf kB", &kb) == 1)
            swap = kb * 1024;
    }
    fclose(f);
    return total > 0 ? total + swap : 0;
}

static double g_mem_limit;
static const char *g_mem_source;
static _Atomic double g_mem_given;

static void mem_init(void)
{
    double cg = exec_cgroup_mem_limit(""), machine = exec_machine_memory("");
    if (cg > 0 && (machine <= 0 || cg <= machine))
        g_mem_limit = cg, g_mem_source = "its cgroup's";
    else if (machine > 0)
        g_mem_limit = machine, g_mem_source = "the machine's memory and swap";
}

double exec_memory_limit(const char **source)
{
    double given = atomic_load(&g_mem_given);
    if (given > 0) {
        if (source)
            *source = "as set";
        return given;
    }
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, mem_init);
    if (source)
        *source = g_mem_source;
    return g_mem_limit;
}

void exec_memory_limit_set(double bytes) { atomic_store(&g_mem_given, bytes > 0 ? bytes : 0); }
