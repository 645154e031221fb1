/* live.c -- a live session's URL taken apart, its state on the relay, and
 * where a relay on this machine stores it (see live.h). */
#define _GNU_SOURCE
#include "tracer/live.h"

#include "base/error.h"
#include "tracer/reader.h"

#include <dirent.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tracer_live_parse(const char *url, tracer_live_url *u)
{
    memset(u, 0, sizeof *u);
    if (strncmp(url, "net://", 6) != 0)
        return -1;
    const char *h = strstr(url, "/host/");
    size_t rl = h ? (size_t)(h - url) : strlen(url);
    while (rl > 6 && url[rl - 1] == '/')
        rl--;
    if (rl >= sizeof u->relay)
        return -1;
    memcpy(u->relay, url, rl);
    const char *hp = url + 6; /* HOST[:PORT] */
    const char *colon = memchr(hp, ':', rl - 6);
    u->port = colon ? atoi(colon + 1) : 5344; /* lttng-relayd's default live port */
    if (!h)
        return 0;
    const char *host = h + 6, *slash = strchr(host, '/');
    if (!slash || slash == host || !slash[1] || strchr(slash + 1, '/'))
        return -1;
    if ((size_t)(slash - host) >= sizeof u->host || strlen(slash + 1) >= sizeof u->session)
        return -1;
    memcpy(u->host, host, (size_t)(slash - host));
    snprintf(u->session, sizeof u->session, "%s", slash + 1);
    return 0;
}

int tracer_live_default_name(const char *session, char *when, size_t len)
{
    long pid;
    char stamp[17], hex[9];
    int end = 0;
    /* fathom-PID-YYYYMMDDTHHMMSSZ-XXXXXXXX (tracer_session_name) */
    if (sscanf(session, "fathom-%ld-%16[0-9TZ]-%8[0-9a-f]%n", &pid, stamp, hex, &end) != 3 || session[end] ||
        strlen(stamp) != 16 || strlen(hex) != 8 || stamp[8] != 'T' || stamp[15] != 'Z')
        return 0;
    if (when)
        snprintf(when, len, "%.4s-%.2s-%.2s %.2s:%.2s:%.2s UTC", stamp, stamp + 4, stamp + 6, stamp + 9, stamp + 11,
                 stamp + 13);
    return 1;
}

typedef struct find_ctx {
    const char *host, *session;
    tracer_live_session_info *out;
    int found;
} find_ctx;

static int find_one(void *ctx, const tracer_live_session *s)
{
    find_ctx *f = ctx;
    if (strcmp(s->name, f->session) == 0 && (!*f->host || strcmp(s->host, f->host) == 0)) {
        f->found = 1;
        if (f->out) {
            f->out->clients = s->clients;
            f->out->streams = s->streams;
        }
    }
    return 0;
}

tracer_status tracer_live_find(const tracer_live_url *u, int *found, tracer_live_session_info *info)
{
    find_ctx f = { .host = u->host, .session = u->session, .out = info };
    tracer_status st = tracer_live_sessions(u->relay, find_one, &f);
    *found = f.found;
    return st;
}

/* An argument of a relay's command line: "-o DIR", "-oDIR", "--output=DIR"
 * or "--output DIR" (short s, long l); NULL when absent. */
static const char *arg_of(char **argv, int argc, const char *s, const char *l)
{
    size_t ll = strlen(l);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], s) == 0 || strcmp(argv[i], l) == 0)
            return i + 1 < argc ? argv[i + 1] : NULL;
        if (strncmp(argv[i], l, ll) == 0 && argv[i][ll] == '=')
            return argv[i] + ll + 1;
        if (strncmp(argv[i], s, 2) == 0 && argv[i][2])
            return argv[i] + 2;
    }
    return NULL;
}

/* The live port a relay's command line gives (-L/--live-port URL; 5344). */
static int live_port_of(char **argv, int argc)
{
    const char *l = arg_of(argv, argc, "-L", "--live-port");
    const char *c = l ? strrchr(l, ':') : NULL;
    return c ? atoi(c + 1) : 5344;
}

/* The output folder of an lttng-relayd process (its -o, else its HOME's
 * lttng-traces); 0 when found. */
static int relay_output(const char *pid, int port, char *out, size_t len)
{
    char path[300], buf[8192];
    snprintf(path, sizeof path, "/proc/%.255s/cmdline", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    char *argv[128];
    int argc = 0;
    for (size_t i = 0; i < n && argc < 128; i += strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    if (!argc || !strstr(argv[0], "lttng-relayd") || live_port_of(argv, argc) != port)
        return -1;
    const char *o = arg_of(argv, argc, "-o", "--output");
    if (o && o[0] == '/') {
        snprintf(out, len, "%s", o);
        return 0;
    }
    char cwd[4096] = "";
    snprintf(path, sizeof path, "/proc/%.255s/cwd", pid);
    ssize_t k = readlink(path, cwd, sizeof cwd - 1);
    cwd[k > 0 ? k : 0] = '\0';
    if (o) /* a path too long to hold is no answer */
        return snprintf(out, len, "%s/%s", cwd, o) < (int)len ? 0 : -1;
    const char *home = getenv("HOME"); /* the relay's own HOME is not ours to read: the usual one */
    snprintf(out, len, "%s/lttng-traces", home && *home ? home : "~");
    return 0;
}

int tracer_live_stored(const tracer_live_url *u, char *out, size_t len)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d)) != NULL) {
        char dir[4096];
        if (e->d_name[0] < '1' || e->d_name[0] > '9' || relay_output(e->d_name, u->port, dir, sizeof dir) != 0)
            continue;
        char pat[4800];
        snprintf(pat, sizeof pat, "%s/%s/%s-*", dir, *u->host ? u->host : "*", u->session);
        glob_t g;
        if (glob(pat, GLOB_ONLYDIR, NULL, &g) == 0 && g.gl_pathc) {
            snprintf(out, len, "%s", g.gl_pathv[g.gl_pathc - 1]);
            found = 1;
        } else {
            snprintf(out, len, "%.3800s/%s/%s-*", dir, *u->host ? u->host : "HOST", u->session);
            found = 2;
        }
        globfree(&g);
    }
    closedir(d);
    return found;
}
