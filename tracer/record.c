/* record.c -- recording a traced run through liblttng-ctl (see record.h). */
#define _GNU_SOURCE
#include "tracer/record.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "tracer/hooks.h"
#include "tracer/output.h"
#include "tracer/reader.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <lttng/lttng.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
/* liblttng-ctl's own switch (exported; the lttng CLI sets it too): no PERROR
 * lines of its own on our stderr, we report errors ourselves. */
extern int lttng_opt_quiet __attribute__((weak));

#define CHANNEL "fathom"
#define DEFAULT_SUBBUF ((size_t)1 << 20)
#define DEFAULT_NSUBBUF 8

/* The recording's steps format their message into the recording's own
 * buffer, err of errlen bytes (base/error.h, the object's message: a first
 * message stands while the cleanup that follows runs, and may fail too);
 * tracer_record makes it the thread's when it returns. */

static void sleep_ms(long ms) { nanosleep(&(struct timespec){ ms / 1000, (ms % 1000) * 1000000L }, NULL); }

/* ---- signals ----------------------------------------------------------- */
static volatile sig_atomic_t g_signal, g_nsignals;
static void on_signal(int sig)
{
    g_signal = sig;
    g_nsignals++;
}

typedef struct sigsave {
    struct sigaction old[4];
} sigsave;
static const int caught[4] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static void signals_catch(sigsave *s)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* a signal must not cut an lttng-ctl exchange in half */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        sigaction(caught[i], &sa, &s->old[i]);
    /* liblttng-ctl writes to the session daemon's socket, which the daemon
     * may close after an error (e.g. an unreachable relay): an EPIPE, not a
     * death that would leave the session behind (the lttng CLI does the same) */
    sa.sa_handler = SIG_IGN;
    sa.sa_flags = 0;
    sigaction(SIGPIPE, &sa, &s->old[3]);
}

static void signals_restore(const sigsave *s)
{
    for (int i = 0; i < 4; i++)
        sigaction(caught[i], &s->old[i], NULL);
}

/* The signals a child must start with in their default disposition. */
static void child_sigdefault(posix_spawnattr_t *at, short *flags)
{
    sigset_t def;
    sigemptyset(&def);
    for (int i = 0; i < 4; i++)
        sigaddset(&def, caught[i]);
    posix_spawnattr_setsigdefault(at, &def);
    *flags |= POSIX_SPAWN_SETSIGDEF;
}

/* ---- the session daemon ------------------------------------------------ */
static int g_sessiond_refs;
static pid_t g_sessiond_pid; /* the daemon we started, or 0 */

int tracer_sessiond_alive(void) { return lttng_session_daemon_alive() == 1; }

/* Waits for pid up to ms milliseconds; 1 if it exited (status in *st). */
static int wait_pid_ms(pid_t pid, int *st, long ms)
{
    for (long t = 0;; t += 10) {
        pid_t w = waitpid(pid, st, WNOHANG);
        if (w == pid || (w < 0 && errno == ECHILD))
            return 1;
        if (t >= ms)
            return 0;
        sleep_ms(10);
    }
}

static void stop_child(pid_t pid, int sig)
{
    int st;
    kill(pid, sig);
    if (!wait_pid_ms(pid, &st, 10000)) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
}

/* Starts lttng-sessiond in the foreground as our child, in its own process
 * group (a Ctrl-C is ours to handle); its pid once it answers, or -1. */
static pid_t sessiond_start(char *err, size_t errlen)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t at;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawnattr_init(&at);
    posix_spawnattr_setpgroup(&at, 0);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&at, &none);
    short flags = POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK;
    child_sigdefault(&at, &flags);
    posix_spawnattr_setflags(&at, flags);
    char *argv[] = { "lttng-sessiond", "--no-kernel", NULL };
    pid_t pid;
    int rc = posix_spawnp(&pid, "lttng-sessiond", &fa, &at, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&at);
    if (rc != 0) {
        base_fail_into(err, errlen, -1, "no LTTng session daemon answers and lttng-sessiond cannot be started: %s",
                       strerror(rc));
        return -1;
    }
    for (int t = 0; t < 2000; t++) { /* up to 20 s */
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid) {
            base_fail_into(err, errlen, -1, "lttng-sessiond exited (%s %d) before answering",
                           WIFEXITED(st) ? "status" : "signal", WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st));
            return -1;
        }
        if (tracer_sessiond_alive())
            return pid;
        sleep_ms(10);
    }
    stop_child(pid, SIGTERM);
    base_fail_into(err, errlen, -1, "lttng-sessiond did not answer within 20 s");
    return -1;
}

tracer_record_status tracer_sessiond_acquire(void)
{
    if (tracer_sessiond_alive()) {
        if (g_sessiond_refs++ == 0)
            g_sessiond_pid = 0; /* someone else's: never ours to stop */
        return TRACER_RECORD_OK;
    }
    /* None answers: the first recording, or the daemon a long `record --all`
     * was using went away (the program that started it stopped it). Start
     * our own. */
    if (g_sessiond_pid > 0)
        stop_child(g_sessiond_pid, SIGTERM);
    g_sessiond_pid = 0;
    char err[512] = "";
    pid_t pid = sessiond_start(err, sizeof err);
    if (pid < 0)
        return base_fail(TRACER_RECORD_ERROR, "%s", err);
    g_sessiond_pid = pid;
    g_sessiond_refs++;
    return TRACER_RECORD_OK;
}

void tracer_sessiond_release(void)
{
    if (g_sessiond_refs <= 0 || --g_sessiond_refs > 0)
        return;
    if (g_sessiond_pid > 0)
        stop_child(g_sessiond_pid, SIGTERM);
    g_sessiond_pid = 0;
}

/* ---- names, files ------------------------------------------------------ */
void tracer_session_name(char *buf, size_t len)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, 0) != (ssize_t)sizeof r)
        r = (uint32_t)(base_now_s() * 1e9) ^ ((uint32_t)getpid() << 16);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char when[32];
    strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(buf, len, "fathom-%ld-%s-%08" PRIx32, (long)getpid(), when, r);
}

static uint64_t g_du;
static int du_cb(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)path;
    (void)ftw;
    if (flag == FTW_F)
        g_du += (uint64_t)sb->st_size;
    return 0;
}
static uint64_t du(const char *path)
{
    g_du = 0;
    nftw(path, du_cb, 16, FTW_PHYS);
    return g_du;
}

/* The lttng-live URL of session `name` streamed to `relay`
 * (net://HOST[:CTRL[:DATA]]): net://HOST[:LIVE]/host/HOSTNAME/NAME, with
 * the live port the relay's ports imply by lttng-relayd's convention (its
 * defaults are 5342, 5343 and 5344): DATA + 1, or CTRL + 2; none given,
 * the default. */
static void live_url(const char *relay, const char *name, char *out, size_t len)
{
    const char *h = strstr(relay, "://");
    h = h ? h + 3 : relay;
    size_t n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/");
    char port[16] = "";
    const char *ports = h[n] == ':' ? h + n + 1 : NULL;
    if (ports) {
        char *end = NULL;
        long ctrl = strtol(ports, &end, 10), data = end && *end == ':' ? strtol(end + 1, NULL, 10) : 0;
        long live = data > 0 ? data + 1 : ctrl > 0 ? ctrl + 2 : 0;
        if (live > 0 && live < 65536)
            snprintf(port, sizeof port, ":%ld", live);
    }
    char host[256] = "unknown";
    gethostname(host, sizeof host - 1);
    snprintf(out, len, "net://%.*s%s/host/%s/%s", (int)n, h, port, host, name);
}

/* ---- the LTTng session ------------------------------------------------- */
typedef struct session {
    char name[128];
    bool created, stopped;
    struct lttng_handle *h;
} session;

static int lttng_fail(char *err, size_t errlen, const char *what, int ret)
{
    if (ret == -LTTNG_ERR_RELAYD_CONNECT_FAIL || ret == LTTNG_ERR_RELAYD_CONNECT_FAIL)
        base_fail_into(err, errlen, -1, "cannot reach lttng-relayd (is it running? are the host and ports right?)");
    else
        base_fail_into(err, errlen, -1, "%s: %s", what, lttng_strerror(ret < 0 ? ret : -ret));
    return -1;
}

static int session_setup(session *s, const char *path, const char *relay, const tracer_record_opts *o, char *err,
                         size_t errlen)
{
    /* to a relay: a live session, so that analyzers read it while it runs */
    struct lttng_session_descriptor *d =
        relay ? lttng_session_descriptor_live_network_create(s->name, relay, NULL,
                                                             o->live_timer_us ? o->live_timer_us : 1000000)
              : lttng_session_descriptor_local_create(s->name, path);
    if (!d) {
        base_fail_into(err, errlen, -1,
                       relay ? "bad relay URL '%s' (want net://HOST[:CTRL[:DATA]])" : "bad trace path '%s'",
                       relay ? relay : path);
        return -1;
    }
    enum lttng_error_code ec = lttng_create_session_ext(d);
    lttng_session_descriptor_destroy(d);
    if (ec != LTTNG_OK)
        return lttng_fail(err, errlen,
                          relay ? "cannot create a session streaming to the relay" : "cannot create the session",
                          -(int)ec);
    s->created = true;

    struct lttng_domain dom;
    memset(&dom, 0, sizeof dom);
    dom.type = LTTNG_DOMAIN_UST;
    dom.buf_type = LTTNG_BUFFER_PER_UID;
    s->h = lttng_create_handle(s->name, &dom);
    if (!s->h) {
        base_fail_into(err, errlen, -1, "cannot create an LTTng handle");
        return -1;
    }
    struct lttng_channel *ch = lttng_channel_create(&dom);
    if (!ch) {
        base_fail_into(err, errlen, -1, "cannot create the channel");
        return -1;
    }
    snprintf(ch->name, sizeof ch->name, "%s", CHANNEL);
    ch->enabled = 1;
    ch->attr.overwrite = 0; /* discard mode ... */
    ch->attr.subbuf_size = o->subbuf_size ? o->subbuf_size : DEFAULT_SUBBUF;
    ch->attr.num_subbuf = o->num_subbuf ? o->num_subbuf : DEFAULT_NSUBBUF;
    ch->attr.output = LTTNG_EVENT_MMAP;
    /* timers: lttng's defaults (no read timer: a full sub-buffer wakes the
     * consumer at once, which is what a blocked writer waits for) */
    int ret = lttng_channel_set_blocking_timeout(ch, o->discard ? 0 : -1); /* ... that blocks, forever, instead */
    if (ret == 0)
        ret = lttng_enable_channel(s->h, ch);
    lttng_channel_destroy(ch);
    if (ret < 0)
        return lttng_fail(err, errlen, "cannot enable the blocking user-space channel", ret);

    struct lttng_event *ev = lttng_event_create();
    if (!ev) {
        base_fail_into(err, errlen, -1, "out of memory");
        return -1;
    }
    snprintf(ev->name, sizeof ev->name, "fathom:*");
    ev->type = LTTNG_EVENT_TRACEPOINT;
    ev->loglevel_type = LTTNG_EVENT_LOGLEVEL_ALL;
    ret = lttng_enable_event_with_exclusions(s->h, ev, CHANNEL, NULL, 0, NULL);
    lttng_event_destroy(ev);
    if (ret < 0)
        return lttng_fail(err, errlen, "cannot enable fathom:*", ret);

    static const struct {
        enum lttng_event_context_type t;
        const char *name;
    } ctxs[] = {
        { LTTNG_EVENT_CONTEXT_VPID, "vpid" },
        { LTTNG_EVENT_CONTEXT_VTID, "vtid" },
        { LTTNG_EVENT_CONTEXT_PROCNAME, "procname" },
    };
    size_t nctx = o->no_contexts ? 0 : sizeof ctxs / sizeof ctxs[0];
    for (size_t i = 0; i < nctx; i++) {
        struct lttng_event_context c;
        memset(&c, 0, sizeof c);
        c.ctx = ctxs[i].t;
        ret = lttng_add_context(s->h, &c, NULL, CHANNEL);
        if (ret < 0) {
            char what[64];
            snprintf(what, sizeof what, "cannot add the %s context", ctxs[i].name);
            return lttng_fail(err, errlen, what, ret);
        }
    }
    /* Only the workload's events: other processes of this user with the
     * fathom provider loaded (another recording, a test) register with the
     * same daemon. The set of tracked vpids starts empty; the workload's
     * pid enters it before the workload can register (session_track). */
    struct lttng_process_attr_tracker_handle *tr = NULL;
    ec = lttng_session_get_tracker_handle(s->name, LTTNG_DOMAIN_UST, LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID, &tr);
    if (ec != LTTNG_OK)
        return lttng_fail(err, errlen, "cannot get the session's process tracker", -(int)ec);
    enum lttng_process_attr_tracker_handle_status hs =
        lttng_process_attr_tracker_handle_set_tracking_policy(tr, LTTNG_TRACKING_POLICY_INCLUDE_SET);
    lttng_process_attr_tracker_handle_destroy(tr);
    if (hs != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK) {
        base_fail_into(err, errlen, -1, "cannot restrict the session to the workload's process");
        return -1;
    }
    ret = lttng_start_tracing(s->name);
    if (ret < 0)
        return lttng_fail(err, errlen, "cannot start tracing", ret);
    return 0;
}

/* Adds pid to the session's tracked processes. */
static int session_track(session *s, pid_t pid, char *err, size_t errlen)
{
    struct lttng_process_attr_tracker_handle *tr = NULL;
    enum lttng_error_code ec =
        lttng_session_get_tracker_handle(s->name, LTTNG_DOMAIN_UST, LTTNG_PROCESS_ATTR_VIRTUAL_PROCESS_ID, &tr);
    if (ec != LTTNG_OK)
        return lttng_fail(err, errlen, "cannot get the session's process tracker", -(int)ec);
    enum lttng_process_attr_tracker_handle_status hs =
        lttng_process_attr_virtual_process_id_tracker_handle_add_pid(tr, pid);
    lttng_process_attr_tracker_handle_destroy(tr);
    if (hs != LTTNG_PROCESS_ATTR_TRACKER_HANDLE_STATUS_OK) {
        base_fail_into(err, errlen, -1, "cannot track the workload's process %ld", (long)pid);
        return -1;
    }
    return 0;
}

/* Stops tracing and waits (up to 60 s) until every event is written. */
static int session_stop(session *s, char *err, size_t errlen)
{
    if (!s->created || s->stopped)
        return 0;
    s->stopped = true;
    int ret = lttng_stop_tracing_no_wait(s->name);
    if (ret < 0 && ret != -LTTNG_ERR_TRACE_ALREADY_STOPPED) {
        if (err)
            lttng_fail(err, errlen, "cannot stop tracing", ret);
        return -1;
    }
    int pending = 1;
    for (int t = 0; t < 6000 && (pending = lttng_data_pending(s->name)) == 1; t++)
        sleep_ms(10);
    if (pending != 0) {
        if (err && pending == 1)
            base_fail_into(err, errlen, -1, "the session daemon did not finish writing the trace within 60 s");
        else if (err)
            lttng_fail(err, errlen, "cannot wait for the trace data", pending);
        return -1;
    }
    return 0;
}

/* Stops (waiting for the data) and destroys the session; 0 or -1. */
static int session_end(session *s, char *err, size_t errlen)
{
    if (s->h) {
        lttng_destroy_handle(s->h);
        s->h = NULL;
    }
    if (!s->created)
        return 0;
    int rc = session_stop(s, err, errlen);
    s->created = false;
    struct lttng_destruction_handle *dh = NULL;
    enum lttng_error_code ec = lttng_destroy_session_ext(s->name, &dh);
    if (ec != LTTNG_OK) {
        if (err && rc == 0)
            lttng_fail(err, errlen, "cannot destroy the session", -(int)ec);
        return -1;
    }
    enum lttng_destruction_handle_status hs = lttng_destruction_handle_wait_for_completion(dh, 60000);
    enum lttng_error_code result = LTTNG_OK;
    bool done = hs == LTTNG_DESTRUCTION_HANDLE_STATUS_COMPLETED || hs == LTTNG_DESTRUCTION_HANDLE_STATUS_OK;
    if (done && lttng_destruction_handle_get_result(dh, &result) != LTTNG_DESTRUCTION_HANDLE_STATUS_OK)
        result = LTTNG_ERR_UNK;
    lttng_destruction_handle_destroy(dh);
    if ((!done || result != LTTNG_OK) && err && rc == 0) {
        if (hs == LTTNG_DESTRUCTION_HANDLE_STATUS_TIMEOUT)
            base_fail_into(err, errlen, -1, "the session did not end within 60 s");
        else if (!done)
            base_fail_into(err, errlen, -1, "waiting for the session's end failed (status %d)", (int)hs);
        else
            base_fail_into(err, errlen, -1, "the session did not end cleanly: %s", lttng_strerror(-(int)result));
        rc = -1;
    }
    return rc;
}

/* ---- the child --------------------------------------------------------- */
static char **child_env(unsigned trace_buffer, const char *step_file, double restate_s)
{
    static const char *const drop[] = { TRACER_ENV_TRACE "=",          "LTTNG_UST_ALLOW_BLOCKING=",
                                        "LTTNG_UST_REGISTER_TIMEOUT=", TRACER_ENV_BUFFER "=",
                                        TRACER_ENV_STEP_FILE "=",      TRACER_ENV_RESTATE "=" };
    static char buffer_var[64], step_var[PATH_MAX + 64], restate_var[64];
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = base_calloc(n + 7, sizeof *env);
    if (!env)
        return NULL;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool skip = false;
        for (size_t j = 0; j < sizeof drop / sizeof drop[0]; j++)
            skip |= strncmp(environ[i], drop[j], strlen(drop[j])) == 0;
        if (!skip)
            env[k++] = environ[i];
    }
    env[k++] = TRACER_ENV_TRACE "=1";
    env[k++] = "LTTNG_UST_ALLOW_BLOCKING=1";
    if (trace_buffer) {
        snprintf(buffer_var, sizeof buffer_var, "%s=%u", TRACER_ENV_BUFFER, trace_buffer);
        env[k++] = buffer_var;
    }
    if (step_file && *step_file) {
        snprintf(step_var, sizeof step_var, "%s=%s", TRACER_ENV_STEP_FILE, step_file);
        env[k++] = step_var;
    }
    if (restate_s > 0) {
        snprintf(restate_var, sizeof restate_var, "%s=%g", TRACER_ENV_RESTATE, restate_s);
        env[k++] = restate_var;
    }
    /* The workload's lttng-ust must be registered (its events enabled)
     * before its first event: wait for the session daemon as long as it
     * takes (it answers: we just talked to it). */
    env[k++] = "LTTNG_UST_REGISTER_TIMEOUT=-1";
    env[k] = NULL;
    return env;
}

/* Starts argv (stdin from /dev/null, stdout and stderr to log unless NULL)
 * in its own process group: a Ctrl-C reaches the recorder alone, which stops
 * tracing before it stops the workload (a process killed in the middle of
 * writing an event would leave a sub-buffer that is never committed, and the
 * session could not end). The child waits at a gate until its pid is in the
 * session's tracked set, so that its lttng-ust registers already tracked and
 * its first event is recorded. Between fork and exec the child makes only
 * async-signal-safe calls. */
static int spawn_gated(pid_t *child, char *const argv[], char *const env[], const char *log, session *s, char *err,
                       size_t errlen)
{
    int gate[2] = { -1, -1 }, report[2] = { -1, -1 }, rc = -1;
    *child = -1;
    if (pipe2(gate, O_CLOEXEC) != 0 || pipe2(report, O_CLOEXEC) != 0) {
        base_fail_into(err, errlen, -1, "pipe: %s", strerror(errno));
        goto end;
    }
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = log ? open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
    if (in < 0 || (log && out < 0)) {
        base_fail_into(err, errlen, -1, "cannot open %s: %s", in < 0 ? "/dev/null" : log, strerror(errno));
        if (in >= 0)
            close(in);
        goto end;
    }
    pid_t pid = fork();
    if (pid == 0) {
        int e = 0;
        char c;
        setpgid(0, 0);
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = SIG_DFL;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < 4; i++)
            sigaction(caught[i], &sa, NULL);
        if (read(gate[0], &c, 1) != 1)
            _exit(127); /* the recorder gave up */
        if (dup2(in, 0) < 0 || (out >= 0 && (dup2(out, 1) < 0 || dup2(out, 2) < 0)))
            e = errno;
        else
            execve(argv[0], argv, env);
        if (!e)
            e = errno;
        ssize_t w = write(report[1], &e, sizeof e);
        (void)w;
        _exit(127);
    }
    int fork_errno = errno;
    close(in);
    if (out >= 0)
        close(out);
    if (pid < 0) {
        base_fail_into(err, errlen, -1, "cannot start %s: %s", argv[0], strerror(fork_errno));
        goto end;
    }
    *child = pid;
    setpgid(pid, pid); /* on both sides: whichever runs first */
    if (session_track(s, pid, err, errlen) != 0)
        goto end; /* the caller stops the child (its gate closes) */
    close(report[1]);
    report[1] = -1;
    if (write(gate[1], "g", 1) != 1) {
        base_fail_into(err, errlen, -1, "cannot start %s: %s", argv[0], strerror(errno));
        goto end;
    }
    int e = 0;
    ssize_t n;
    while ((n = read(report[0], &e, sizeof e)) < 0 && errno == EINTR)
        ;
    if (n == (ssize_t)sizeof e) { /* exec failed: the child is exiting */
        waitpid(pid, NULL, 0);
        *child = -1;
        base_fail_into(err, errlen, -1, "cannot start %s: %s", argv[0], strerror(e));
        goto end;
    }
    rc = 0;
end:
    for (int i = 0; i < 2; i++) {
        if (gate[i] >= 0)
            close(gate[i]);
        if (report[i] >= 0)
            close(report[i]);
    }
    return rc;
}

static void show_log_tail(const char *log)
{
    FILE *f = fopen(log, "r");
    if (!f)
        return;
    static char lines[20][512];
    int n = 0;
    while (fgets(lines[n % 20], sizeof lines[0], f))
        n++;
    fclose(f);
    int from = n > 20 ? n - 20 : 0;
    for (int i = from; i < n; i++)
        fprintf(stderr, "  | %s%s", lines[i % 20], strchr(lines[i % 20], '\n') ? "" : "\n");
}

/* "step K of N, ETA S s" from the workload's step file (empty until its
 * first step ends). */
static void steps_done(const char *step_file, double elapsed, char *out, size_t len)
{
    out[0] = '\0';
    FILE *f = step_file ? fopen(step_file, "r") : NULL;
    if (!f)
        return;
    int k = 0, n = 0;
    if (fscanf(f, "%d %d", &k, &n) == 2 && k > 0 && n >= k) {
        double eta = elapsed / k * (n - k);
        snprintf(out, len, ", step %d of %d, ETA %.0f s", k, n, eta);
    }
    fclose(f);
}

static void progress(const tracer_record_opts *o, bool tty, double t0, const char *trace_dir, const char *step_file,
                     bool final)
{
    char size[64] = "", steps[96];
    if (trace_dir) {
        double mib = (double)du(trace_dir) / (1024.0 * 1024.0);
        snprintf(size, sizeof size, ", %.1f MiB of trace", mib);
    }
    steps_done(final ? NULL : step_file, base_now_s() - t0, steps, sizeof steps);
    if (tty) {
        fprintf(stderr, "\r\033[Krecording %s: %.1f s%s%s", o->label ? o->label : "", base_now_s() - t0, steps, size);
        if (final)
            fputc('\n', stderr);
    } else {
        fprintf(stderr, "recording %s: %.1f s%s%s%s\n", o->label ? o->label : "", base_now_s() - t0, steps, size,
                final ? ", done" : "");
    }
    fflush(stderr);
}

/* ---- the manifest ------------------------------------------------------ */
static tracer_archive_status mset(tracer_manifest *m, const char *k, const char *v)
{
    return tracer_manifest_set(m, k, v ? v : "");
}

static const char *pick(const char *traced, const tracer_manifest *base, const char *key)
{
    if (traced && *traced)
        return traced;
    const char *v = base ? tracer_manifest_get(base, key) : NULL;
    return v ? v : "unknown";
}

tracer_archive_status tracer_record_manifest(tracer_manifest *m, const tracer_manifest *base, const tracer_stats *s,
                                             const char *session)
{
    tracer_archive_status st;
    char host[256] = "unknown", num[32], when[32];
    gethostname(host, sizeof host - 1);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    bool have_run = s && s->runs > 0;
    /* the schema of the trace itself (run_begin), which readers check against */
    snprintf(num, sizeof num, "%" PRIu32, have_run && s->schema ? s->schema : (uint32_t)TRACER_MANIFEST_SCHEMA);
    if ((st = mset(m, "schema", num)) || (st = mset(m, "model", pick(have_run ? s->model : NULL, base, "model"))) ||
        (st = mset(m, "mode", pick(have_run ? s->mode : NULL, base, "mode"))) ||
        (st = mset(m, "preset", pick(have_run ? s->preset : NULL, base, "preset"))) || (st = mset(m, "host", host)) ||
        (st = mset(m, "cpu", pick(have_run ? s->cpu : NULL, base, "cpu"))) ||
        (st = mset(m, "blas", pick(have_run ? s->blas : NULL, base, "blas"))))
        return st;
    if (have_run) {
        snprintf(num, sizeof num, "%" PRIu32, s->threads);
        if ((st = mset(m, "threads", num)))
            return st;
    } else if ((st = mset(m, "threads", pick(NULL, base, "threads")))) {
        return st;
    }
    if ((st = mset(m, "created", when)))
        return st;
    if (have_run) {
        struct {
            const char *k;
            uint64_t v;
        } extra[] = {
            { "batch", s->batch },
            { "steps", s->steps_planned },
            { "inter", s->inter },
            { "seed", s->seed },
        };
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            if ((st = tracer_manifest_set_u64(m, extra[i].k, extra[i].v)))
                return st;
        if ((st = mset(m, "version", s->version)))
            return st;
    }
    if (session && (st = mset(m, "session", session)))
        return st;
    if (s) {
        if ((st = tracer_manifest_set_u64(m, "events", s->events)))
            return st;
        for (size_t i = 0; i < s->nnames; i++) {
            char key[TRACER_MANIFEST_KEY_MAX + 1];
            snprintf(key, sizeof key, "events.%s", s->names[i].name);
            if ((st = tracer_manifest_set_u64(m, key, s->names[i].count)))
                return st;
        }
        if ((st = tracer_manifest_set_u64(m, "discarded", s->discarded_events)) ||
            (st = tracer_manifest_set_u64(m, "ops", s->run_end_ops)) ||
            (st = tracer_manifest_set_u64(m, "op_time_ns", s->op_time_ns)))
            return st;
    }
    return TRACER_ARCHIVE_OK;
}

/* ---- viewers that join late ---------------------------------------------
 * A live viewer starts at the newest data: the workload re-announces what
 * a reader needs every restate_s (hooks.c), and at once when the relay
 * counts a new viewer of our session (SIGUSR1, once the workload has run a
 * step: its handler is in place by then). */
typedef struct viewers {
    const char *name;
    uint64_t clients;
    int found;
} viewers;

static int viewers_count(void *ctx, const tracer_live_session *s)
{
    viewers *v = ctx;
    if (strcmp(s->name, v->name) == 0)
        v->clients = s->clients, v->found = 1;
    return 0;
}

static long steps_in(const char *step_file)
{
    char buf[64] = "";
    FILE *f = step_file && *step_file ? fopen(step_file, "r") : NULL;
    long n = -1;
    if (f) {
        if (fgets(buf, sizeof buf, f))
            n = strtol(buf, NULL, 10);
        fclose(f);
    }
    return n;
}

static void viewers_poll(viewers *v, const char *live_url, const char *name, const char *step_file, pid_t child)
{
    char relay[512];
    const char *h = strstr(live_url, "/host/");
    if (!h || (size_t)(h - live_url) >= sizeof relay)
        return;
    snprintf(relay, sizeof relay, "%.*s", (int)(h - live_url), live_url);
    uint64_t before = v->clients;
    v->name = name;
    v->found = 0;
    if (tracer_live_sessions(relay, viewers_count, v) != TRACER_OK || !v->found) {
        base_errmsg_clear();
        return;
    }
    if (v->clients > before && steps_in(step_file) >= 1)
        kill(child, SIGUSR1);
    else if (v->clients > before)
        v->clients = before; /* not yet: ask again at the next poll */
}

/* ---- recording --------------------------------------------------------- */

/* One recording's places and owned state, from its start to its cleanup. */
typedef struct recording {
    char tmp[PATH_MAX], trace_dir[PATH_MAX + 16], log[PATH_MAX + 16], step_file[PATH_MAX + 16];
    char err[BASE_ERRMSG_MAX]; /* the first message (base/error.h: the object's message) */
    session s;
    char **env;
    pid_t child;
    tracer_manifest *m;
    bool tty;
} recording;

/* A private temporary folder: the trace, the workload's log, its step count.  0, or -1. */
static int rec_dirs(recording *c)
{
    const char *tmpdir = getenv("TMPDIR");
    snprintf(c->tmp, sizeof c->tmp, "%s/fathom-rec-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(c->tmp)) {
        base_fail_into(c->err, sizeof c->err, -1, "cannot create a temporary directory in %s: %s",
                       tmpdir && *tmpdir ? tmpdir : "/tmp", strerror(errno));
        c->tmp[0] = '\0';
        return -1;
    }
    char abs[PATH_MAX];
    if (!realpath(c->tmp, abs))
        return base_fail_into(c->err, sizeof c->err, -1, "%s: %s", c->tmp, strerror(errno));
    snprintf(c->trace_dir, sizeof c->trace_dir, "%s/trace", abs);
    snprintf(c->log, sizeof c->log, "%s/workload.log", abs);
    snprintf(c->step_file, sizeof c->step_file, "%s/steps", abs);
    int sfd = open(c->step_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (sfd >= 0)
        close(sfd);
    else
        c->step_file[0] = '\0';
    return 0;
}

/* The session made (local or to the relay) and the live URL said.  0, or -1. */
static int rec_session(recording *c, const tracer_record_opts *o, tracer_record_result *r)
{
    if (o->session_name)
        snprintf(c->s.name, sizeof c->s.name, "%s", o->session_name);
    else
        tracer_session_name(c->s.name, sizeof c->s.name);
    snprintf(r->session, sizeof r->session, "%s", c->s.name);
    if (session_setup(&c->s, c->trace_dir, o->relay_url, o, c->err, sizeof c->err) != 0) {
        if (o->relay_url && !strstr(c->err, "relayd")) { /* say where it was going */
            char e[512];
            snprintf(e, sizeof e, "%.*s", (int)sizeof e - 1, c->err); /* cut: a line */
            base_fail_into(c->err, sizeof c->err, -1, "streaming to the relay %s: %s", o->relay_url, e);
        }
        return -1;
    }
    if (o->relay_url) {
        live_url(o->relay_url, c->s.name, r->live_url, sizeof r->live_url);
        fprintf(stderr, "fathom record: live at %s (fathom analyze breakdown %s)\n", r->live_url, r->live_url);
    }
    return 0;
}

/* The workload run to its end: signals passed on, viewers polled, progress
 * shown.  0 when it ended; -1 on an error or a second signal. */
static int rec_wait(recording *c, const tracer_record_opts *o, tracer_record_result *r, double restate_s)
{
    double t0 = base_now_s();
    if (spawn_gated(&c->child, o->argv, c->env, o->show_output ? NULL : c->log, &c->s, c->err, sizeof c->err) != 0)
        return -1;
    double last = t0, viewers_at = t0;
    viewers vw = { 0 };
    int wst = 0;
    for (;;) {
        pid_t w = waitpid(c->child, &wst, WNOHANG);
        if (w == c->child)
            break;
        if (w < 0 && errno != EINTR)
            return base_fail_into(c->err, sizeof c->err, -1, "waitpid: %s", strerror(errno));
        if (g_signal && !r->interrupted && g_nsignals < 2) {
            /* the first signal: the workload stops at its next op boundary,
             * flushes and ends its run; its trace is archived */
            r->interrupted = (int)g_signal;
            g_signal = 0;
            kill(c->child, r->interrupted == SIGINT ? SIGINT : SIGTERM);
            if (c->tty)
                fprintf(stderr, "\r\033[Kstopping %s at the next op (again to abort)\n", o->label ? o->label : "");
        } else if (g_signal) {
            return -1; /* a second signal: stops tracing, then the workload; no archive */
        }
        double t = base_now_s();
        if (restate_s > 0 && t - viewers_at >= 1.0) {
            viewers_at = t;
            viewers_poll(&vw, r->live_url, c->s.name, c->step_file, c->child);
        }
        if (o->progress && (t - last >= (c->tty ? 0.5 : 10.0))) {
            progress(o, c->tty, t0, o->relay_url ? NULL : c->trace_dir, c->step_file, false);
            last = t;
        }
        sleep_ms(20);
    }
    c->child = -1;
    r->child_status = wst;
    r->seconds = base_now_s() - t0;
    if (o->progress && (c->tty || r->seconds >= 10.0))
        progress(o, c->tty, t0, o->relay_url ? NULL : c->trace_dir, NULL, true);
    return 0;
}

/* The trace read back (what it holds, whether anything was lost) and
 * archived with its manifest.  OK, INCOMPLETE (archived, with the loss in
 * c->err) or ERROR. */
static tracer_record_status rec_archive(recording *c, const tracer_record_opts *o, tracer_record_result *r)
{
    char *err = c->err;
    const size_t errlen = sizeof c->err;
    tracer_trace *tr = NULL;
    if (tracer_trace_open(c->trace_dir, &tr) != TRACER_ARCHIVE_OK)
        return base_fail_into(err, errlen, TRACER_RECORD_ERROR, "%s", base_errmsg());
    tracer_status rc = tracer_stats_collect(tr, &r->stats);
    tracer_trace_close(tr);
    if (rc != TRACER_OK)
        return base_fail_into(err, errlen, TRACER_RECORD_ERROR, "%s", base_errmsg());

    if (!(c->m = tracer_manifest_create()))
        return base_fail_into(err, errlen, TRACER_RECORD_ERROR, "out of memory");
    if (o->manifest)
        for (size_t i = 0; i < tracer_manifest_count(o->manifest); i++)
            if (tracer_manifest_set(c->m, tracer_manifest_key_at(o->manifest, i),
                                    tracer_manifest_value_at(o->manifest, i)))
                return base_fail_into(err, errlen, TRACER_RECORD_ERROR, "%s", base_errmsg());
    if (tracer_record_manifest(c->m, o->manifest, &r->stats, c->s.name) != TRACER_ARCHIVE_OK ||
        mset(c->m, "status", r->interrupted ? "interrupted" : "complete"))
        return base_fail_into(err, errlen, TRACER_RECORD_ERROR, "%s", base_errmsg());
    if (g_nsignals >= 2 || (g_signal && !r->interrupted))
        return TRACER_RECORD_ERROR; /* abandoned before its archive existed */
    tracer_archive_status as = o->out_path ? tracer_archive_write(o->out_path, c->trace_dir, c->m)
                                           : tracer_archive_write_default(o->out_dir, c->trace_dir, c->m, (time_t)-1,
                                                                          r->archive, sizeof r->archive);
    if (as != TRACER_ARCHIVE_OK)
        return base_fail_into(err, errlen, TRACER_RECORD_ERROR, "%s", base_errmsg());
    if (o->out_path)
        snprintf(r->archive, sizeof r->archive, "%s", o->out_path);

    const tracer_stats *ts = &r->stats;
    if (ts->discarded_events || ts->discarded_packets)
        base_fail_into(err, errlen, -1, "%" PRIu64 " events and %" PRIu64 " packets were discarded",
                       ts->discarded_events, ts->discarded_packets);
    else if (ts->runs != 1 || ts->run_ends != 1)
        base_fail_into(err, errlen, -1,
                       "the trace holds %" PRIu64 " run_begin and %" PRIu64 " run_end events (want 1 and 1)", ts->runs,
                       ts->run_ends);
    else if (ts->op_pairs != ts->run_end_ops || ts->op_unmatched || ts->undefined_nodes)
        base_fail_into(err, errlen, -1,
                       "the trace is incomplete: %" PRIu64 " op records (%" PRIu64
                       " naming undefined nodes) for %" PRIu64 " ops run",
                       ts->op_pairs, ts->undefined_nodes, ts->run_end_ops);
    else if (ts->malformed)
        base_fail_into(err, errlen, -1, "%" PRIu64 " fathom events lack fields or have sequences of unequal lengths",
                       ts->malformed);
    return err[0] ? TRACER_RECORD_INCOMPLETE : TRACER_RECORD_OK;
}

/* What the workload's exit says: 0 when it ran to its end, or -1 with the
 * message (and its log's tail shown). */
static int rec_child_failed(recording *c, const tracer_record_opts *o, const tracer_record_result *r)
{
    int wst = r->child_status;
    if (r->interrupted || (WIFEXITED(wst) && WEXITSTATUS(wst) == 0))
        return 0;
    if (WIFEXITED(wst))
        base_fail_into(c->err, sizeof c->err, -1, "the workload failed (exit status %d)", WEXITSTATUS(wst));
    else
        base_fail_into(c->err, sizeof c->err, -1, "the workload was killed by signal %d", WTERMSIG(wst));
    if (!o->show_output)
        show_log_tail(c->log);
    return -1;
}

tracer_record_status tracer_record(const tracer_record_opts *o, tracer_record_result *r)
{
    memset(r, 0, sizeof *r);
    if (!o->argv || !o->argv[0])
        return base_fail(TRACER_RECORD_ERROR, "no workload to run");
    recording *c = base_calloc(1, sizeof *c);
    if (!c)
        return base_fail(TRACER_RECORD_ERROR, "out of memory");
    c->s = (session){ .created = false, .stopped = false };
    c->child = -1;
    c->tty = isatty(2);
    tracer_record_status st = TRACER_RECORD_ERROR;
    if (&lttng_opt_quiet)
        lttng_opt_quiet = 1;
    sigsave saved;
    g_signal = 0;
    g_nsignals = 0;
    signals_catch(&saved);
    bool have_sessiond = false;

    if (tracer_sessiond_acquire() != TRACER_RECORD_OK) {
        base_fail_into(c->err, sizeof c->err, -1, "%s", base_errmsg());
        goto end;
    }
    have_sessiond = true;
    r->sessiond_pid = (int)g_sessiond_pid;
    if (g_signal || rec_dirs(c) || rec_session(c, o, r) || g_signal)
        goto end;

    const double restate_s = !o->relay_url ? 0 : o->restate_s == 0 ? 1.0 : o->restate_s;
    if (!(c->env = child_env(o->trace_buffer, c->step_file, restate_s))) {
        base_fail_into(c->err, sizeof c->err, -1, "out of memory");
        goto end;
    }
    if (rec_wait(c, o, r, restate_s))
        goto end;

    /* Stop (lttng waits until every event is consumed) and destroy. */
    if (session_end(&c->s, c->err, sizeof c->err) != 0)
        goto end;
    if (g_nsignals >= 2 || (g_signal && !r->interrupted))
        goto end;
    if (rec_child_failed(c, o, r)) {
        st = TRACER_RECORD_CHILD;
        goto end;
    }
    if (o->relay_url)
        st = TRACER_RECORD_OK; /* the relay has it; nothing to check or archive here */
    else
        st = rec_archive(c, o, r);

end:
    if (c->child > 0) {
        session_stop(&c->s, NULL, 0); /* first: no event is being written when the workload dies */
        stop_child(c->child, g_signal == SIGINT ? SIGINT : SIGTERM);
    }
    if (c->s.created || c->s.h)
        session_end(&c->s, NULL, 0); /* an error path: the first message stands */
    if (g_signal) {
        if (r->archive[0]) /* it came after the archive was complete: kept */
            base_fail_into(c->err, sizeof c->err, -1, "interrupted by signal %d after archiving %s", (int)g_signal,
                           r->archive);
        else
            base_fail_into(c->err, sizeof c->err, -1,
                           "interrupted by signal %d; the session was destroyed, nothing archived", (int)g_signal);
        if (!r->interrupted)
            r->interrupted = (int)g_signal;
        st = TRACER_RECORD_INTERRUPTED;
    }
    if (have_sessiond)
        tracer_sessiond_release();
    tracer_manifest_destroy(c->m);
    base_free(c->env);
    tracer_remove_tree(c->tmp);
    signals_restore(&saved);
    if (c->err[0])
        base_fail(st, "%s", c->err);
    else
        base_errmsg_clear();
    base_free(c);
    return st;
}
