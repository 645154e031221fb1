/* locate.c -- the probe library and the Babeltrace2 plugin, found relative
 * to the executable (locate.h).  The relative folders come from CMake
 * (tracer/CMakeLists.txt), computed from the install layout. */
#include "tracer/locate.h"
#include "tracer/hooks.h" /* TRACER_TP_LIB_NAME */

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tracer_self_dir(char *dir, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0)
        return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash || (size_t)(slash - exe) >= len)
        return -1;
    *slash = '\0';
    memcpy(dir, exe, (size_t)(slash - exe) + 1);
    return 0;
}

/* "DIR/REL/NAME" into out; the candidate is empty when it does not fit. */
static const char *join(char *out, size_t len, const char *dir, const char *rel, const char *name)
{
    int n = rel ? snprintf(out, len, "%s/%s/%s", dir, rel, name) : snprintf(out, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len)
        out[0] = '\0';
    return out;
}

const char *tracer_probe_candidate(int i, char *path, size_t len)
{
    if (len == 0)
        return NULL;
    char dir[PATH_MAX];
    int have_dir = tracer_self_dir(dir, sizeof dir) == 0;
    path[0] = '\0';
    switch (i) {
    case 0: /* the build tree: next to the executable */
        return have_dir ? join(path, len, dir, NULL, TRACER_TP_LIB_NAME) : path;
    case 1: /* an installed tree, wherever it lies: BINDIR/../LIBDIR/fathom */
        return have_dir ? join(path, len, dir, FATHOM_TP_REL_DIR, TRACER_TP_LIB_NAME) : path;
    case 2: return join(path, len, FATHOM_TP_INSTALL_DIR, NULL, TRACER_TP_LIB_NAME);
    case 3: return join(path, len, FATHOM_TP_BUILD_DIR, NULL, TRACER_TP_LIB_NAME);
    default: return NULL;
    }
}

/* src's canonical form (no "..") into out when it fits, else src itself. */
static int canonical(char *out, size_t len, const char *src)
{
    char real[PATH_MAX];
    const char *p = realpath(src, real) ? real : src;
    size_t n = strlen(p);
    if (n >= len)
        return -1;
    memmove(out, p, n + 1);
    return 0;
}

int tracer_probe_locate(char *path, size_t len)
{
    for (int i = 0; tracer_probe_candidate(i, path, len); i++)
        if (path[0] && access(path, R_OK) == 0 && canonical(path, len, path) == 0)
            return 0;
    if (len)
        path[0] = '\0';
    return -1;
}

int tracer_plugin_locate(char *dir, size_t len)
{
    char self[PATH_MAX], file[PATH_MAX + 64];
    int have_dir = tracer_self_dir(self, sizeof self) == 0;
    const char *dirs[3] = { NULL, NULL, FATHOM_PLUGIN_INSTALL_DIR };
    char build[PATH_MAX + 16], rel[PATH_MAX + 64];
    if (have_dir) {
        join(build, sizeof build, self, NULL, "plugins"); /* the build tree */
        join(rel, sizeof rel, self, NULL, FATHOM_PLUGIN_REL_DIR);
        dirs[0] = build;
        dirs[1] = rel;
    }
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (!dirs[i] || !dirs[i][0])
            continue;
        join(file, sizeof file, dirs[i], NULL, TRACER_PLUGIN_NAME);
        if (file[0] && access(file, R_OK) == 0 && canonical(dir, len, dirs[i]) == 0)
            return 0;
    }
    if (len)
        dir[0] = '\0';
    return -1;
}
