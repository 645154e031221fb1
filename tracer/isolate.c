/* isolate.c -- the decoder in a child process (see isolate.h).
 *
 * The wire: frames of [u32 length of what follows][u8 kind][payload], in
 * the host's byte order (parent and child are the same program).  Strings
 * are [u32 length or UINT32_MAX for NULL][bytes][NUL], of any length: the
 * parent reads them in place, in the frame, and copies only the labels of
 * the nodes it keeps.  A node the decoder
 * described with node_def gets a number (the child maps the decoder's node
 * pointer to it), so an op record of such a node costs 37 bytes; a record
 * whose node was never described (schema 1) carries its node inline. */
#define _GNU_SOURCE
#include "tracer/isolate.h"

#include "base/alloc.h"
#include "base/clock.h"
#include "base/error.h"
#include "base/table.h"

#include "tracer/output.h"
#include "tracer/reader.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* clang says so with __has_feature, gcc with __SANITIZE_ADDRESS__ */
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FATHOM_HAS_ASAN 1
#endif
#endif
#ifndef FATHOM_HAS_ASAN
#define FATHOM_HAS_ASAN 0
#endif

/* The decoder's limits that follow the trace's size (isolate.h). */
#define DECODE_EVENTS_PER_BYTE 8     /* events (messages) a byte of CTF */
#define DECODE_MIN_EVENTS 10000u     /* and so many more */
#define DECODE_CPU_RATE (4ull << 20) /* bytes of CTF a CPU second, at the least: a tenth of the rate measured */
#if FATHOM_HAS_ASAN || defined(__SANITIZE_ADDRESS__)
#define DECODE_SANITIZED 4 /* a sanitized decoder's slowdown */
#else
#define DECODE_SANITIZED 1
#endif

/* Present when a sanitizer runtime is linked in (weak: absent otherwise). */
void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

enum wire {
    W_TRACE = 1,
    W_EVENT_NAME,
    W_EVENT,
    W_RUN_BEGIN,
    W_RUN_END,
    W_STEP_BEGIN,
    W_STEP_END,
    W_NODE_DEF,
    W_OP_REF,
    W_OP_FULL,
    W_TENSOR_ALLOC,
    W_TENSOR_FREE,
    W_CURRENT,
    W_DIAG,
    W_DONE,
    W_NODE_INTERN,
    W_RUN_STATE,
    W_TOTALS,
    W_CALL
};

/* A job's failure is the job's message, not the thread's (base/error.h,
 * the object's message): jobs decode side by side, and each keeps its
 * message in its tracer_decode_job until the caller takes it. */

static unsigned env_unsigned(const char *name, unsigned dflt);
static double g_run_ended_at, g_last_frame_at, g_last_flush_at; /* the child's live clock */

/* ---- the child: callbacks -> frames ------------------------------------------- */
typedef struct wbuf {
    int fd;
    unsigned char *b;
    size_t len, cap, frame; /* frame: where the open frame's header starts */
    int broken;
    /* node pointers numbered: struct node_num by the pointer */
    base_table keys;
    uint32_t next_id;
    /* event names numbered: the last one seen, and a small table */
    const char *names[256];
    int nnames;
    tracer_decoder *dec;
    int live, no_dataflow;
    /* the messages so far, and the most the trace's size allows (0: no limit) */
    unsigned long long msgs, max_msgs, bytes;
    /* schema-1 descriptions (no data flow) numbered by their content, so an
     * op record of one already sent costs 37 bytes too */
    base_table ikeys; /* struct ikey */
} wbuf;

struct node_num {
    const void *p;
    uint32_t id;
};

/* A description without data flow, and its number: the key is every field
 * before id (no padding between them). */
struct ikey {
    const char *op, *cls, *phase;
    int64_t op_value, cls_value, phase_value;
    uint32_t graph, node;
    uint64_t flops, bytes;
    uint32_t id;
};
#define IKEY_SIZE offsetof(struct ikey, id)
_Static_assert(IKEY_SIZE == 3 * sizeof(char *) + 5 * 8 + 2 * 4, "an ikey without padding");

static void w_flush(wbuf *w)
{
    size_t off = 0;
    while (off < w->len && !w->broken) {
        ssize_t n = write(w->fd, w->b + off, w->len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            w->broken = 1;
        else
            off += (size_t)n;
    }
    w->len = 0;
}

static void w_raw(wbuf *w, const void *p, size_t n)
{
    if (!n)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 65536;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *b = base_realloc(w->b, cap);
        if (!b) {
            w->broken = 1;
            return;
        }
        w->b = b, w->cap = cap;
    }
    memcpy(w->b + w->len, p, n);
    w->len += n;
}

static void w_begin(wbuf *w, enum wire kind)
{
    if (w->len > 60000)
        w_flush(w);
    w->frame = w->len;
    uint32_t z = 0;
    uint8_t k = (uint8_t)kind;
    w_raw(w, &z, 4);
    w_raw(w, &k, 1);
}

static int w_end(wbuf *w)
{
    uint32_t n = (uint32_t)(w->len - w->frame - 4);
    if (!w->broken)
        memcpy(w->b + w->frame, &n, 4);
    return w->broken ? -1 : 0;
}

#define W_VAL(w, v)                 \
    do {                            \
        __typeof__(v) v_ = (v);     \
        w_raw((w), &v_, sizeof v_); \
    } while (0)

static void w_str(wbuf *w, const char *s)
{
    uint32_t n = s ? (uint32_t)strlen(s) : UINT32_MAX;
    w_raw(w, &n, 4);
    if (s)
        w_raw(w, s, (size_t)n + 1);
}

static void w_node(wbuf *w, const tracer_node *n)
{
    W_VAL(w, n->graph);
    W_VAL(w, n->node);
    w_str(w, n->op);
    w_str(w, n->cls);
    w_str(w, n->phase);
    W_VAL(w, n->op_value);
    W_VAL(w, n->cls_value);
    W_VAL(w, n->phase_value);
    W_VAL(w, n->nin);
    W_VAL(w, n->nout);
    W_VAL(w, n->nattrs);
    w_raw(w, n->inputs, n->nin * sizeof *n->inputs);
    w_raw(w, n->outputs, n->nout * sizeof *n->outputs);
    w_raw(w, n->attrs, n->nattrs * sizeof *n->attrs);
    W_VAL(w, n->flops);
    W_VAL(w, n->bytes);
}

/* The current event's time and contexts, before the callbacks that use them. */
static void w_current(wbuf *w)
{
    uint64_t ts, vpid, vtid;
    tracer_decode_current(&ts, &vpid, &vtid);
    w_begin(w, W_CURRENT);
    W_VAL(w, ts);
    W_VAL(w, vpid);
    W_VAL(w, vtid);
    w_end(w);
}

static int64_t node_id(wbuf *w, const void *p, int insert)
{
    struct node_num *e = base_table_get(&w->keys, &p);
    if (e)
        return e->id;
    if (!insert || base_table_put(&w->keys, &p, (void **)&e) == BASE_TABLE_NOMEM)
        return -1;
    e->id = w->next_id++;
    return e->id;
}

static void *c_trace_begin(void *ctx, const bt_trace *trace)
{
    wbuf *w = ctx;
    const char *name = trace ? bt_trace_get_name(trace) : NULL;
    w_begin(w, W_TRACE);
    w_str(w, name);
    w_end(w);
    return w;
}

static int c_event(void *user, const char *name, uint64_t ts)
{
    wbuf *w = user;
    int id = -1;
    for (int i = 0; i < w->nnames; i++)
        if (w->names[i] == name) {
            id = i;
            break;
        }
    if (id < 0 && w->nnames < 256) {
        id = w->nnames;
        w->names[w->nnames++] = name;
        w_begin(w, W_EVENT_NAME);
        w_str(w, name);
        w_end(w);
    }
    w_begin(w, W_EVENT);
    W_VAL(w, (int32_t)id);
    if (id < 0)
        w_str(w, name);
    W_VAL(w, ts);
    return w_end(w);
}

/* The run's description on the wire: its rows (tracer/schema.def) in order,
 * strings and enum labels as strings, numbers as their bytes. */
#define W_ROW(x, group, name, kind, ctype, src, len, need) W_##kind(r->name);
#define W_SCHEMA(v) W_VAL(w, v)
#define W_INT(v) W_VAL(w, v)
#define W_STRING(v) w_str(w, v)
#define W_ENUM(v) w_str(w, v)

static void w_run(wbuf *w, const tracer_run *r) { FATHOM_SCHEMA_RUN(W_ROW, _) }

static int c_run_begin(void *user, const tracer_run *r)
{
    wbuf *w = user;
    w_current(w);
    w_begin(w, W_RUN_BEGIN);
    w_run(w, r);
    return w_end(w);
}

static int c_run_state(void *user, const tracer_run *r, const tracer_state *st)
{
    wbuf *w = user;
    w_current(w);
    w_begin(w, W_RUN_STATE);
    w_run(w, r);
    W_VAL(w, *st);
    return w_end(w);
}

static int c_totals(void *user, const tracer_node *n, uint64_t count, uint64_t ns, uint64_t min_ns, uint64_t max_ns)
{
    wbuf *w = user;
    int64_t id = node_id(w, n, 0);
    w_begin(w, W_TOTALS);
    W_VAL(w, id);
    if (id < 0)
        w_node(w, n);
    W_VAL(w, count);
    W_VAL(w, ns);
    W_VAL(w, min_ns);
    W_VAL(w, max_ns);
    return w_end(w);
}

static int c_run_end(void *user, int32_t status, uint64_t ops)
{
    wbuf *w = user;
    g_run_ended_at = base_now_s();
    w_current(w);
    w_begin(w, W_RUN_END);
    W_VAL(w, status);
    W_VAL(w, ops);
    return w_end(w);
}

static int c_step(wbuf *w, enum wire kind, uint64_t ts, uint32_t step, double loss)
{
    w_current(w);
    w_begin(w, kind);
    W_VAL(w, ts);
    W_VAL(w, step);
    W_VAL(w, loss);
    return w_end(w);
}
static int c_step_begin(void *user, uint64_t ts, uint32_t step) { return c_step(user, W_STEP_BEGIN, ts, step, 0); }
static int c_step_end(void *user, uint64_t ts, uint32_t step, double loss)
{
    return c_step(user, W_STEP_END, ts, step, loss);
}

static int c_node_def(void *user, const tracer_node *n, uint64_t ts)
{
    wbuf *w = user;
    int64_t id = node_id(w, n, 1);
    if (id < 0)
        return -1;
    w_begin(w, W_NODE_DEF);
    W_VAL(w, (uint32_t)id);
    W_VAL(w, ts);
    w_node(w, n);
    return w_end(w);
}

/* The number of a description without data flow, sent once (W_NODE_INTERN);
 * -1 when out of memory. Labels are compared by pointer: the decoder's are
 * the field classes' (stable), or its slot buffers ("#12"), whose content
 * is then fixed by the enum values compared beside them. */
static int64_t intern_node(wbuf *w, const tracer_node *n)
{
    struct ikey k = { n->op,    n->cls,   n->phase, n->op_value, n->cls_value, n->phase_value, n->graph, n->node,
                      n->flops, n->bytes, 0 };
    struct ikey *e = base_table_get(&w->ikeys, &k);
    if (e)
        return e->id;
    if (w->ikeys.len > 65536) /* descriptions that never repeat: not worth keeping */
        return -1;
    if (base_table_put(&w->ikeys, &k, (void **)&e) == BASE_TABLE_NOMEM)
        return -1;
    e->id = k.id = w->next_id++;
    w_begin(w, W_NODE_INTERN);
    W_VAL(w, k.id);
    w_node(w, n);
    w_end(w);
    return k.id;
}

static int c_op(void *user, const tracer_op *o)
{
    wbuf *w = user;
    int64_t id = node_id(w, o->node, 0);
    if (id < 0 && w->no_dataflow)
        id = intern_node(w, o->node);
    w_begin(w, id >= 0 ? W_OP_REF : W_OP_FULL);
    if (id >= 0)
        W_VAL(w, (uint32_t)id);
    else
        w_node(w, o->node);
    W_VAL(w, o->begin);
    W_VAL(w, o->end);
    W_VAL(w, o->vpid);
    W_VAL(w, o->vtid);
    W_VAL(w, o->launch);
    W_VAL(w, o->call);
    return w_end(w);
}

static int c_call(void *user, const tracer_call *c)
{
    wbuf *w = user;
    w_begin(w, W_CALL);
    W_VAL(w, *c);
    return w_end(w);
}

static int c_tensor_alloc(void *user, uint64_t ts, const tracer_tensor *t)
{
    wbuf *w = user;
    w_current(w);
    w_begin(w, W_TENSOR_ALLOC);
    W_VAL(w, ts);
    W_VAL(w, t->id);
    w_str(w, t->role);
    w_str(w, t->dtype);
    W_VAL(w, t->role_value);
    W_VAL(w, t->ndim);
    w_raw(w, t->shape, sizeof t->shape);
    W_VAL(w, t->shape_ok);
    W_VAL(w, t->bytes);
    return w_end(w);
}

static int c_tensor_free(void *user, uint64_t ts, uint32_t id)
{
    wbuf *w = user;
    w_current(w);
    w_begin(w, W_TENSOR_FREE);
    W_VAL(w, ts);
    W_VAL(w, id);
    return w_end(w);
}

static int c_message(void *ctx, const bt_message *msg)
{
    wbuf *w = ctx;
    if (w->max_msgs && ++w->msgs > w->max_msgs) /* events of no size, decoded without end */
        return base_fail(TRACER_ERR_STOPPED,
                         "the CTF decoder stopped after %llu events from %llu bytes of CTF, past its limit of %u a "
                         "byte (a damaged trace, of events of no size?); FATHOM_DECODE_EVENTS_PER_BYTE=N raises it",
                         w->msgs - 1, w->bytes, env_unsigned("FATHOM_DECODE_EVENTS_PER_BYTE", DECODE_EVENTS_PER_BYTE));
    if (w->live) { /* a live reader wants the records as they come, in a few writes a second */
        g_last_frame_at = base_now_s();
        if (w->len && g_last_frame_at - g_last_flush_at > 0.1) {
            w_flush(w);
            g_last_flush_at = g_last_frame_at;
        }
    }
    if (tracer_decoder_consume(w->dec, msg) == 0)
        return 0;
    return base_fail(TRACER_ERR_STOPPED, "%s", w->broken ? "the reader went away" : tracer_decoder_error(w->dec));
}

/* The bytes of t's CTF files (its metadata and streams); 0 for a live one. */
static unsigned long long ctf_bytes(const tracer_trace *t)
{
    unsigned long long n = 0;
    if (tracer_trace_get_kind(t) == TRACER_TRACE_LIVE)
        return 0;
    for (size_t i = 0; i < tracer_trace_ctf_count(t); i++) {
        const char *dir = tracer_trace_ctf_path(t, i);
        DIR *d = opendir(dir);
        struct dirent *e;
        struct stat st;
        while (d && (e = readdir(d)))
            if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
                n += (unsigned long long)st.st_size;
        if (d)
            closedir(d);
    }
    return n;
}

/* The decoder's address space by default: 2 GiB (the reference traces
 * decode in under 400 MB, Babeltrace2's plugins and fathom's libraries
 * mapped) and 64 bytes per byte of CTF, at most 16 GiB; 16 GiB for a live
 * session, whose size is not known.  A corrupt sequence length makes
 * Babeltrace2 allocate an element per count: a 238 KB fuzzed archive took
 * 5 GB and 10 s where now it stops at 2 GiB in under 2 s. */
static unsigned long long default_memory(const tracer_trace *t)
{
    const unsigned long long cap = 16ull << 30, bytes = ctf_bytes(t);
    if (!bytes || bytes > (cap >> 6))
        return cap;
    return (2ull << 30) + (bytes << 6) < cap ? (2ull << 30) + (bytes << 6) : cap;
}

/* The decoder's address-space limit in bytes (FATHOM_DECODE_MEMORY or
 * default_memory); 0 where none is set (sanitizer builds). */
static unsigned long long decode_memory(const tracer_trace *t)
{
#if !defined(__SANITIZE_ADDRESS__) && !FATHOM_HAS_ASAN /* ASan reserves terabytes of address space */
    const char *v = getenv("FATHOM_DECODE_MEMORY");
    return v && *v ? strtoull(v, NULL, 10) : default_memory(t);
#else
    (void)t, (void)default_memory;
    return 0;
#endif
}

/* The decoder's CPU seconds: FATHOM_DECODE_CPU, or by default 1 s (the
 * plugins loaded and the metadata parsed take 0.1 s for the largest
 * reference trace, parent included) and a second for each DECODE_CPU_RATE
 * bytes of CTF, times DECODE_SANITIZED; an hour for a live session, whose
 * size is not known.  A decoder that spins on a corrupt trace of a few
 * kilobytes is stopped after a second of CPU time, however loaded the
 * machine. */
static unsigned long decode_cpu(const tracer_trace *t)
{
    const unsigned long dflt = tracer_trace_get_kind(t) == TRACER_TRACE_LIVE
                                   ? 3600
                                   : (1 + (unsigned long)(ctf_bytes(t) / DECODE_CPU_RATE)) * DECODE_SANITIZED;
    return env_unsigned("FATHOM_DECODE_CPU", (unsigned)dflt);
}

/* The watchdog's seconds without a decoded record: FATHOM_DECODE_STALL, or
 * by default 10 s and twice the CPU time the trace's size allows (a wait
 * that is not the decoder's CPU time: a decoder blocked, or one starved on
 * a loaded machine); none for a live session, which may stay quiet as long
 * as its workload likes. */
static unsigned decode_stall(const tracer_trace *t)
{
    if (tracer_trace_get_kind(t) == TRACER_TRACE_LIVE)
        return env_unsigned("FATHOM_DECODE_STALL", 0);
    return env_unsigned("FATHOM_DECODE_STALL", (unsigned)(10 + 2 * decode_cpu(t)));
}

static void apply_limits(const tracer_trace *t)
{
    struct rlimit rl;
    const unsigned long cpu = decode_cpu(t);
    rl.rlim_cur = cpu, rl.rlim_max = cpu + 5;
    setrlimit(RLIMIT_CPU, &rl);
    const unsigned long long mem = decode_memory(t);
    if (mem) {
        rl.rlim_cur = rl.rlim_max = mem;
        setrlimit(RLIMIT_AS, &rl);
    }
}

/* The child's live end: its run ended (run_end) and nothing came for
 * FATHOM_LIVE_LINGER seconds (default 3). */
static wbuf *g_child_w;
static int child_live_idle(void)
{
    if (g_child_w && g_child_w->len) /* nothing more yet: what is buffered goes out now */
        w_flush(g_child_w);
    double now = base_now_s(), linger = env_unsigned("FATHOM_LIVE_LINGER", 3);
    return g_run_ended_at > 0 && now - g_last_frame_at >= linger;
}

/* The child: decodes t, writes the frames, ends with W_DIAG and W_DONE. */
static void child_main(const tracer_trace *t, const char *source, int fd, int want_events, int no_dataflow)
{
    apply_limits(t);
    tracer_read_live_idle = child_live_idle;
    const char *dbg = getenv("FATHOM_DECODE_DEBUG");
    tracer_read_capture_log = !dbg || strcmp(dbg, "1") != 0; /* why metadata does not parse (reader.h) */
    setenv("BABELTRACE_PLUGIN_CTF_METADATA_LOG_LEVEL", "E", 0);
    wbuf w = { .fd = fd,
               .live = tracer_trace_get_kind(t) == TRACER_TRACE_LIVE,
               .no_dataflow = no_dataflow,
               .keys = BASE_TABLE(struct node_num, sizeof(const void *)),
               .ikeys = BASE_TABLE(struct ikey, IKEY_SIZE) };
    if (!w.live) { /* an event takes a bit at least: 8 a byte, and room for the packets' messages */
        w.bytes = ctf_bytes(t);
        w.max_msgs =
            DECODE_MIN_EVENTS + w.bytes * env_unsigned("FATHOM_DECODE_EVENTS_PER_BYTE", DECODE_EVENTS_PER_BYTE);
    }
    g_child_w = &w;
    tracer_decode_cbs cbs = {
        .trace_begin = c_trace_begin,
        .event = want_events ? c_event : NULL,
        .run_begin = c_run_begin,
        .run_end = c_run_end,
        .step_begin = c_step_begin,
        .step_end = c_step_end,
        .node_def = c_node_def,
        .op = c_op,
        .tensor_alloc = c_tensor_alloc,
        .tensor_free = c_tensor_free,
        .call = c_call,
        .run_state = c_run_state,
        .totals = c_totals,
        .no_dataflow = no_dataflow,
    };
    w.dec = tracer_decoder_create(&cbs, &w);
    tracer_status rc =
        w.dec ? tracer_read_run(t, source, c_message, &w) : (tracer_status)base_fail(TRACER_ERR_NOMEM, "out of memory");
    tracer_decode_diag g = { 0 };
    if (w.dec) {
        tracer_decoder_finish(w.dec);
        tracer_decoder_diag_sum(w.dec, NULL, &g);
    }
    w_begin(&w, W_DIAG);
    W_VAL(&w, g);
    w_end(&w);
    w_begin(&w, W_DONE);
    W_VAL(&w, (int32_t)(rc ? -1 : 0));
    w_str(&w, rc ? base_errmsg() : ""); /* the parent's message */
    w_end(&w);
    w_flush(&w);
    _exit(w.broken ? 3 : 0); /* never the parent's cleanup (its temporary tree) */
}

/* ---- the parent: frames -> the caller's callbacks ----------------------------------- */
typedef struct rd {
    const unsigned char *p, *end;
    int bad;
} rd;

static void r_raw(rd *r, void *out, size_t n)
{
    if (!n)
        return;
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->p, n);
    r->p += n;
}
#define R_VAL(r, v) r_raw((r), &(v), sizeof(v))

/* A string in place in the frame (NULL when it was NULL): valid until the
 * frame's dispatch returns. */
static const char *r_str(rd *r)
{
    uint32_t n;
    R_VAL(r, n);
    if (r->bad || n == UINT32_MAX)
        return NULL;
    if ((size_t)(r->end - r->p) <= n || r->p[n] != '\0' || memchr(r->p, '\0', n)) {
        r->bad = 1;
        return NULL;
    }
    const char *s = (const char *)r->p;
    r->p += (size_t)n + 1;
    return s;
}

/* A copy of s in *buf (grown to fit), or NULL for NULL; -1 out of memory. */
static int keep_str(const char *s, char **buf, size_t *cap, const char **out)
{
    if (!s) {
        *out = NULL;
        return 0;
    }
    size_t n = strlen(s) + 1;
    if (n > *cap) {
        char *b = base_realloc(*buf, n);
        if (!b)
            return -1;
        *buf = b, *cap = n;
    }
    memcpy(*buf, s, n);
    *out = *buf;
    return 0;
}

typedef struct pnode {
    tracer_node n;
    char *op, *cls, *phase; /* the labels, owned */
    size_t op_cap, cls_cap, phase_cap;
    uint32_t *io;
    int64_t *attrs;
} pnode;

typedef struct parent {
    const tracer_decode_cbs *cb;
    void *ctx;
    void *user;
    char *names[256];
    int nnames;
    pnode **nodes; /* each its own allocation: tracer_node points into it */
    uint32_t nnodes;
    pnode scratch;
    tracer_decode_diag diag;
    int done, child_rc;
    char child_err[1024];
    uint64_t records;
} parent;

static void pnode_free(pnode *pn)
{
    base_free(pn->op);
    base_free(pn->cls);
    base_free(pn->phase);
    base_free(pn->io);
    base_free(pn->attrs);
}

static int r_node(rd *r, pnode *pn)
{
    tracer_node *n = &pn->n;
    R_VAL(r, n->graph);
    R_VAL(r, n->node);
    const char *op = r_str(r), *cls = r_str(r), *phase = r_str(r);
    if (r->bad)
        return -1;
    if (keep_str(op, &pn->op, &pn->op_cap, &n->op) || keep_str(cls, &pn->cls, &pn->cls_cap, &n->cls) ||
        keep_str(phase, &pn->phase, &pn->phase_cap, &n->phase))
        return -1;
    R_VAL(r, n->op_value);
    R_VAL(r, n->cls_value);
    R_VAL(r, n->phase_value);
    R_VAL(r, n->nin);
    R_VAL(r, n->nout);
    R_VAL(r, n->nattrs);
    if (r->bad || (uint64_t)n->nin + n->nout > (uint64_t)(r->end - r->p) / 4 ||
        n->nattrs > (uint64_t)(r->end - r->p) / 8)
        return r->bad = 1, -1;
    uint32_t *io = base_realloc(pn->io, (n->nin + n->nout + 1) * sizeof *io);
    if (io)
        pn->io = io;
    int64_t *at = io ? base_realloc(pn->attrs, (n->nattrs + 1) * sizeof *at) : NULL;
    if (!at)
        return -1;
    pn->attrs = at;
    r_raw(r, pn->io, (n->nin + n->nout) * sizeof *io);
    r_raw(r, pn->attrs, n->nattrs * sizeof *at);
    n->inputs = pn->io;
    n->outputs = pn->io + n->nin;
    n->attrs = pn->attrs;
    R_VAL(r, n->flops);
    R_VAL(r, n->bytes);
    return r->bad ? -1 : 0;
}

/* The run's description as w_run wrote it. */
#define R_ROW(x, group, name, kind, ctype, src, len, need) R_##kind(run->name);
#define R_SCHEMA(v) R_VAL(r, v)
#define R_INT(v) R_VAL(r, v)
#define R_STRING(v) v = r_str(r)
#define R_ENUM(v) v = r_str(r)

static void r_run(rd *r, tracer_run *run) { FATHOM_SCHEMA_RUN(R_ROW, _) }

/* The frames, one function a kind (or two kinds of one shape): each
 * answers 0, -1 when a callback stopped (or out of memory), -2 when the
 * frame is malformed. */
static int frame_event(parent *P, rd *r)
{
    int32_t id;
    uint64_t ts;
    R_VAL(r, id);
    const char *name = id >= 0 && id < P->nnames ? P->names[id] : r_str(r);
    R_VAL(r, ts);
    return r->bad ? -2 : P->cb->event ? P->cb->event(P->user, name, ts) : 0;
}

static int frame_run(parent *P, uint8_t kind, rd *r)
{
    tracer_run run;
    tracer_state st;
    r_run(r, &run);
    if (kind == W_RUN_STATE) {
        R_VAL(r, st);
        return r->bad ? -2 : P->cb->run_state ? P->cb->run_state(P->user, &run, &st) : 0;
    }
    return r->bad ? -2 : P->cb->run_begin ? P->cb->run_begin(P->user, &run) : 0;
}

/* A node's totals; its description one sent before, by its number (id >=
 * 0), or in the frame itself (into the scratch node). */
static int frame_totals(parent *P, rd *r)
{
    int64_t id;
    const tracer_node *n;
    uint64_t v[4];
    R_VAL(r, id);
    if (r->bad || id >= (int64_t)P->nnodes)
        return -2;
    if (id >= 0) {
        n = &P->nodes[id]->n;
    } else {
        if (r_node(r, &P->scratch))
            return r->bad ? -2 : -1;
        n = &P->scratch.n;
    }
    for (int k = 0; k < 4; k++)
        R_VAL(r, v[k]);
    if (r->bad)
        return -2;
    P->records += v[0];
    return P->cb->totals ? P->cb->totals(P->user, n, v[0], v[1], v[2], v[3]) : 0;
}

static int frame_step(parent *P, uint8_t kind, rd *r)
{
    uint64_t ts;
    uint32_t step;
    double loss;
    R_VAL(r, ts);
    R_VAL(r, step);
    R_VAL(r, loss);
    if (r->bad)
        return -2;
    if (kind == W_STEP_BEGIN)
        return P->cb->step_begin ? P->cb->step_begin(P->user, ts, step) : 0;
    return P->cb->step_end ? P->cb->step_end(P->user, ts, step, loss) : 0;
}

/* A description numbered id: the next number, or one sent before (a
 * node_def again: the latest holds). */
static int frame_node(parent *P, uint8_t kind, rd *r)
{
    uint32_t id;
    uint64_t ts = 0;
    R_VAL(r, id);
    if (kind == W_NODE_DEF)
        R_VAL(r, ts);
    if (r->bad || id > P->nnodes)
        return -2;
    if (id == P->nnodes) {
        pnode **v = base_realloc(P->nodes, (P->nnodes + 1) * sizeof *v);
        if (!v)
            return -1;
        P->nodes = v;
        if (!(v[P->nnodes] = base_calloc(1, sizeof **v)))
            return -1;
        P->nnodes++;
    }
    if (r_node(r, P->nodes[id]))
        return r->bad ? -2 : -1;
    if (kind == W_NODE_INTERN) /* a schema-1 description: no node_def of the trace */
        return 0;
    return P->cb->node_def ? P->cb->node_def(P->user, &P->nodes[id]->n, ts) : 0;
}

static int frame_op(parent *P, uint8_t kind, rd *r)
{
    const tracer_node *n;
    if (kind == W_OP_REF) {
        uint32_t id;
        R_VAL(r, id);
        if (r->bad || id >= P->nnodes)
            return -2;
        n = &P->nodes[id]->n;
    } else {
        if (r_node(r, &P->scratch))
            return r->bad ? -2 : -1;
        n = &P->scratch.n;
    }
    tracer_op op = { .node = n };
    R_VAL(r, op.begin);
    R_VAL(r, op.end);
    R_VAL(r, op.vpid);
    R_VAL(r, op.vtid);
    R_VAL(r, op.launch);
    R_VAL(r, op.call);
    if (r->bad)
        return -2;
    P->records++;
    return P->cb->op ? P->cb->op(P->user, &op) : 0;
}

static int frame_tensor_alloc(parent *P, rd *r)
{
    uint64_t ts;
    tracer_tensor t;
    R_VAL(r, ts);
    R_VAL(r, t.id);
    t.role = r_str(r);
    t.dtype = r_str(r);
    R_VAL(r, t.role_value);
    R_VAL(r, t.ndim);
    r_raw(r, t.shape, sizeof t.shape);
    R_VAL(r, t.shape_ok);
    R_VAL(r, t.bytes);
    return r->bad ? -2 : P->cb->tensor_alloc ? P->cb->tensor_alloc(P->user, ts, &t) : 0;
}

/* The child's last frame: its status and message. */
static int frame_done(parent *P, rd *r)
{
    int32_t rc;
    R_VAL(r, rc);
    const char *e = r_str(r);
    snprintf(P->child_err, sizeof P->child_err, "%s", e ? e : "");
    P->child_rc = rc;
    P->done = 1;
    return r->bad ? -2 : 0;
}

/* One frame to the callbacks: 0, -1 when a callback stopped (or out of
 * memory), -2 when the frame is malformed. */
static int dispatch(parent *P, uint8_t kind, rd *r)
{
    const tracer_decode_cbs *cb = P->cb;
    switch (kind) {
    case W_TRACE:
        r_str(r);
        P->user = cb->trace_begin ? cb->trace_begin(P->ctx, NULL) : P->ctx;
        return P->user ? 0 : -1;
    case W_EVENT_NAME: {
        const char *n = r_str(r);
        if (P->nnames < 256 && !(P->names[P->nnames++] = base_strdup(n ? n : "(unnamed)")))
            return -1;
        return 0;
    }
    case W_EVENT: return frame_event(P, r);
    case W_CURRENT: {
        uint64_t ts, vpid, vtid;
        R_VAL(r, ts);
        R_VAL(r, vpid);
        R_VAL(r, vtid);
        tracer_decode_set_current(ts, vpid, vtid);
        return 0;
    }
    case W_RUN_BEGIN:
    case W_RUN_STATE: return frame_run(P, kind, r);
    case W_TOTALS: return frame_totals(P, r);
    case W_RUN_END: {
        int32_t status;
        uint64_t ops;
        R_VAL(r, status);
        R_VAL(r, ops);
        return r->bad ? -2 : cb->run_end ? cb->run_end(P->user, status, ops) : 0;
    }
    case W_STEP_BEGIN:
    case W_STEP_END: return frame_step(P, kind, r);
    case W_NODE_DEF:
    case W_NODE_INTERN: return frame_node(P, kind, r);
    case W_OP_REF:
    case W_OP_FULL: return frame_op(P, kind, r);
    case W_CALL: {
        tracer_call c;
        R_VAL(r, c);
        return r->bad ? -2 : P->cb->call ? P->cb->call(P->user, &c) : 0;
    }
    case W_TENSOR_ALLOC: return frame_tensor_alloc(P, r);
    case W_TENSOR_FREE: {
        uint64_t ts;
        uint32_t id;
        R_VAL(r, ts);
        R_VAL(r, id);
        return r->bad ? -2 : cb->tensor_free ? cb->tensor_free(P->user, ts, id) : 0;
    }
    case W_DIAG: R_VAL(r, P->diag); return r->bad ? -2 : 0;
    case W_DONE: return frame_done(P, r);
    default: return -2;
    }
}

static unsigned env_unsigned(const char *name, unsigned dflt)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return dflt;
    unsigned long n = strtoul(v, NULL, 10);
    return n ? (unsigned)n : dflt;
}

/* One decoding in flight: its child, its pipe and what came through. */
typedef struct chan {
    tracer_decode_job *job;
    parent P;
    int fd;
    pid_t pid;
    unsigned char *buf;
    size_t len, cap;
    double last, last_tick;
    unsigned stall; /* seconds without a frame before the child is given up (0: never) */
    int open;       /* still reading */
    int pr;         /* 0, -1 (a callback stopped, or out of memory), -2 (a failure: job->err) */
} chan;

/* Dispatches the whole frames in c's buffer; 0, or c->pr set. */
static int drain(chan *c)
{
    tracer_decode_job *j = c->job;
    size_t off = 0;
    while (c->len - off >= 5 && !c->P.done) {
        uint32_t flen;
        memcpy(&flen, c->buf + off, 4);
        if (flen < 1 || flen > (1u << 30))
            return c->pr = -2, base_fail_into(j->err, sizeof j->err, -1, "%s: the CTF decoder sent garbage", j->source);
        if (c->len - off - 4 < flen) {
            if ((size_t)flen + 4 > c->cap) {
                unsigned char *b = base_realloc(c->buf, (size_t)flen + 4 + c->cap);
                if (!b)
                    return c->pr = -1, base_fail_into(j->err, sizeof j->err, -1, "%s: out of memory", j->source);
                c->buf = b, c->cap = (size_t)flen + 4 + c->cap;
            }
            break;
        }
        rd r = { c->buf + off + 5, c->buf + off + 4 + flen, 0 };
        int d = dispatch(&c->P, c->buf[off + 4], &r);
        if (d == -2)
            return c->pr = -2, base_fail_into(j->err, sizeof j->err, -1, "%s: the CTF decoder sent garbage", j->source);
        if (d == -1)
            return c->pr = -1;
        off += 4 + (size_t)flen;
    }
    memmove(c->buf, c->buf + off, c->len - off);
    c->len -= off;
    return 0;
}

/* One read from c's pipe (it was readable). */
static void take_in(chan *c)
{
    tracer_decode_job *j = c->job;
    if (c->len == c->cap) {
        unsigned char *b = base_realloc(c->buf, c->cap * 2);
        if (!b) {
            c->pr = -1, base_fail_into(j->err, sizeof j->err, -1, "%s: out of memory", j->source);
            c->open = 0;
            return;
        }
        c->buf = b, c->cap *= 2;
    }
    ssize_t n = read(c->fd, c->buf + c->len, c->cap - c->len);
    if (n < 0 && errno == EINTR)
        return;
    if (n <= 0) {
        c->open = 0; /* EOF: the child ended (or died) */
        return;
    }
    c->last = base_now_s();
    c->len += (size_t)n;
    if (drain(c) || c->P.done)
        c->open = 0;
}

/* Reads every open channel until each is done, at EOF, stalled or stopped,
 * calling the ticks of the ones that ask. */
static void pump(chan *cs, size_t n)
{
    struct pollfd *pf = base_calloc(n ? n : 1, sizeof *pf);
    if (!pf) {
        for (size_t i = 0; i < n; i++)
            if (cs[i].open)
                cs[i].pr = -1, cs[i].open = 0,
                base_fail_into(cs[i].job->err, sizeof cs[i].job->err, -1, "out of memory");
        return;
    }
    for (;;) {
        size_t k = 0;
        int want_tick = 0;
        for (size_t i = 0; i < n; i++)
            if (cs[i].open) {
                pf[k++] = (struct pollfd){ .fd = cs[i].fd, .events = POLLIN };
                want_tick |= cs[i].job->cbs->tick != NULL;
            }
        if (!k)
            break;
        int pr = poll(pf, k, want_tick ? 100 : 500);
        if (pr < 0 && errno != EINTR) {
            for (size_t i = 0; i < n; i++)
                if (cs[i].open) {
                    cs[i].pr = -2, cs[i].open = 0;
                    base_fail_into(cs[i].job->err, sizeof cs[i].job->err, -1, "%s: poll: %s", cs[i].job->source,
                                   strerror(errno));
                }
            break;
        }
        double now = base_now_s();
        k = 0;
        for (size_t i = 0; i < n; i++) {
            chan *c = &cs[i];
            if (!c->open)
                continue;
            const tracer_decode_cbs *cb = c->job->cbs;
            short rev = pr > 0 ? pf[k].revents : 0;
            k++;
            if (cb->tick && cb->tick_s > 0 && now - c->last_tick >= cb->tick_s) {
                c->last_tick = now;
                if (cb->tick(c->job->ctx)) {
                    c->pr = -1, c->open = 0;
                    continue;
                }
            }
            if (rev) {
                take_in(c);
            } else if (c->stall && now - c->last > c->stall) {
                kill(c->pid, SIGKILL);
                c->pr = -2, c->open = 0;
                base_fail_into(
                    c->job->err, sizeof c->job->err, -1,
                    "%s: the CTF decoder stopped making progress (nothing decoded for %u s): a corrupt trace? "
                    "FATHOM_DECODE_STALL=SECONDS raises the limit",
                    c->job->source, c->stall);
            }
        }
    }
    base_free(pf);
}

/* In the calling process (FATHOM_DECODE_INPROCESS=1). */
static int decode_message(void *ctx, const bt_message *msg)
{
    tracer_decoder *d = ctx;
    if (tracer_decoder_consume(d, msg) == 0)
        return 0;
    if (*tracer_decoder_error(d))
        return base_fail(TRACER_ERR_STOPPED, "%s", tracer_decoder_error(d));
    /* a callback stopped it: its message stands, if it left one */
    if (!strcmp(base_errmsg(), "no error"))
        base_fail(TRACER_ERR_STOPPED, "stopped by its reader");
    return TRACER_ERR_STOPPED;
}

static tracer_status decode_here(const tracer_trace *t, const char *source, const tracer_decode_cbs *cbs, void *ctx,
                                 tracer_decode_diag *diag)
{
    tracer_decoder *d = tracer_decoder_create(cbs, ctx);
    if (!d)
        return base_fail(TRACER_ERR_NOMEM, "%s: out of memory", source);
    tracer_status rc = tracer_read_run(t, source, decode_message, d);
    tracer_decoder_finish(d);
    tracer_decode_diag g = { 0 };
    tracer_decoder_diag_sum(d, NULL, &g);
    tracer_decoder_destroy(d);
    if (rc)
        return rc;
    if (g.bad_schema)
        return base_fail(TRACER_ERR_INPUT, "%s: " TRACER_SCHEMA_UNKNOWN, source, g.bad_schema);
    if (g.events == g.foreign_events)
        return base_fail(TRACER_ERR_INPUT, "%s: no fathom events in the trace (%" PRIu64 " events of other providers)",
                         source, g.foreign_events);
    if (diag)
        tracer_decode_diag_add(diag, &g);
    return TRACER_OK;
}

tracer_status tracer_read_decode_isolated(const char *source, const tracer_decode_cbs *cbs, void *ctx,
                                          tracer_decode_diag *diag)
{
    tracer_trace *t = NULL;
    tracer_status rc = tracer_read_open(source, &t);
    if (rc)
        return rc;
    rc = tracer_decode_trace_isolated(t, source, cbs, ctx, diag);
    tracer_trace_close(t);
    return rc;
}

/* Starts c's child; 0, or -1 with the job's err. */
static int start(chan *c)
{
    tracer_decode_job *j = c->job;
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0)
        return base_fail_into(j->err, sizeof j->err, -1, "%s: pipe: %s", j->source, strerror(errno));
    fflush(NULL);
    pid_t parent_pid = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return base_fail_into(j->err, sizeof j->err, -1, "%s: cannot start the decoder: %s", j->source,
                              strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        /* the temporary paths are the parent's: a signal here must not remove them */
        tracer_cleanup_disown();
        /* never outlive the parent (killed, or its own timeout) */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != parent_pid)
            _exit(127);
        signal(SIGINT, SIG_IGN); /* the parent decides; it kills us when it must */
        const char *dbg = getenv("FATHOM_DECODE_DEBUG");
        if (!dbg || strcmp(dbg, "1") != 0) { /* GLib's criticals would make the parent's error many lines */
            int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
            if (null >= 0)
                dup2(null, 2);
        }
        signal(SIGPIPE, SIG_DFL);
        /* a decoder that faults dies of its signal, which the parent reports:
         * handlers inherited from the parent (a fuzzer's, a sanitizer's)
         * would turn it into an exit status or a report of their own */
        static const int fatal[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGALRM };
        for (size_t k = 0; k < sizeof fatal / sizeof fatal[0]; k++)
            signal(fatal[k], SIG_DFL);
        setitimer(ITIMER_REAL, &(struct itimerval){ { 0, 0 }, { 0, 0 } }, NULL);
        /* likewise a fuzzer's death callback, which would file the decoder's
         * sanitizer report as the fuzzer's own finding */
        if (__sanitizer_set_death_callback)
            __sanitizer_set_death_callback(NULL);
        child_main(j->t, j->source, fds[1], j->cbs->event != NULL, j->cbs->no_dataflow);
    }
    close(fds[1]);
    c->fd = fds[0];
    c->pid = pid;
    c->open = 1;
    c->cap = 1 << 17;
    if (!(c->buf = base_malloc(c->cap))) {
        c->open = 0;
        c->pr = -1;
        return base_fail_into(j->err, sizeof j->err, -1, "%s: out of memory", j->source);
    }
    c->last = c->last_tick = base_now_s();
    c->stall = decode_stall(j->t);
    return 0;
}

/* The job's verdict once its channel is closed and its child reaped. */
static tracer_status finish_chan(chan *c, int st)
{
    tracer_decode_job *j = c->job;
    parent *P = &c->P;
    if (c->pr == -1) {
        if (j->err[0]) /* the parent's own reason: out of memory */
            return TRACER_ERR_NOMEM;
        base_fail_into(j->err, sizeof j->err, -1, "%s: stopped by its reader", j->source); /* a callback stopped it */
        return TRACER_ERR_STOPPED;
    }
    if (c->pr == -2)
        return TRACER_ERR_SYSTEM;
    if (!P->done) {
        if (WIFSIGNALED(st)) {
            int sig = WTERMSIG(st);
            /* an allocation past the address-space limit aborts in GLib, or faults where unchecked */
            const unsigned long long mem = sig == SIGABRT || sig == SIGSEGV ? decode_memory(j->t) : 0;
            char why[200] = "a corrupt trace?";
            if (mem)
                snprintf(why, sizeof why,
                         "a corrupt trace, or one that needs more than the decoder's %.1f GiB "
                         "(FATHOM_DECODE_MEMORY)? FATHOM_DECODE_MEMORY=BYTES raises the limit",
                         (double)mem / (double)(1ull << 30));
            if (sig == SIGXCPU)
                base_fail_into(
                    j->err, sizeof j->err, -1,
                    "%s: the CTF decoder ran out of its CPU time (%lu s for %llu bytes of CTF): a corrupt trace "
                    "that makes it spin? FATHOM_DECODE_CPU=SECONDS raises the limit",
                    j->source, decode_cpu(j->t), ctf_bytes(j->t));
            else
                base_fail_into(j->err, sizeof j->err, -1, "%s: the CTF decoder crashed (signal %d, %s): %s", j->source,
                               sig, strsignal(sig), why);
            return TRACER_ERR_INPUT;
        }
        base_fail_into(j->err, sizeof j->err, -1, "%s: the CTF decoder exited early (status %d)", j->source,
                       WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        return TRACER_ERR_INPUT;
    }
    if (P->child_rc) {
        const char *why = P->child_err[0] ? P->child_err : "cannot decode the trace";
        if (strstr(why, j->source)) /* Babeltrace2's causes name it already */
            snprintf(j->err, sizeof j->err, "%s", why);
        else
            base_fail_into(j->err, sizeof j->err, -1, "%s: %s", j->source, why);
        return TRACER_ERR_INPUT;
    }
    if (P->diag.bad_schema) {
        base_fail_into(j->err, sizeof j->err, -1, "%s: " TRACER_SCHEMA_UNKNOWN, j->source, P->diag.bad_schema);
        return TRACER_ERR_INPUT;
    }
    if (P->diag.events == P->diag.foreign_events) {
        base_fail_into(j->err, sizeof j->err, -1,
                       "%s: no fathom events in the trace (%" PRIu64 " events of other providers)", j->source,
                       P->diag.foreign_events);
        return TRACER_ERR_INPUT;
    }
    if (j->diag)
        tracer_decode_diag_add(j->diag, &P->diag);
    return TRACER_OK;
}

static void chan_free(chan *c)
{
    parent *P = &c->P;
    for (int i = 0; i < P->nnames; i++)
        base_free(P->names[i]);
    for (uint32_t i = 0; i < P->nnodes; i++) {
        pnode_free(P->nodes[i]);
        base_free(P->nodes[i]);
    }
    base_free(P->nodes);
    pnode_free(&P->scratch);
    base_free(c->buf);
    if (c->fd >= 0)
        close(c->fd);
}

/* The first failed job's status, its message made the thread's -- except
 * where a callback stopped it and left a message of its own, which stands. */
static tracer_status jobs_verdict(const tracer_decode_job *jobs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (!jobs[i].status)
            continue;
        if (jobs[i].status == TRACER_ERR_STOPPED && strcmp(base_errmsg(), "no error") != 0)
            return jobs[i].status;
        return base_fail(jobs[i].status, "%s", jobs[i].err);
    }
    return TRACER_OK;
}

tracer_status tracer_decode_jobs_isolated(tracer_decode_job *jobs, size_t n)
{
    const char *inproc = getenv("FATHOM_DECODE_INPROCESS");
    base_errmsg_clear(); /* what a callback that stops the decoding says */
    for (size_t i = 0; i < n; i++)
        jobs[i].err[0] = '\0', jobs[i].status = TRACER_OK;
    if (inproc && !strcmp(inproc, "1")) {
        for (size_t i = 0; i < n; i++) {
            tracer_decode_job *j = &jobs[i];
            if ((j->status = decode_here(j->t, j->source, j->cbs, j->ctx, j->diag)))
                snprintf(j->err, sizeof j->err, "%s", base_errmsg());
        }
        return jobs_verdict(jobs, n);
    }
    chan *cs = base_calloc(n ? n : 1, sizeof *cs);
    if (!cs) {
        for (size_t i = 0; i < n; i++) {
            base_fail_into(jobs[i].err, sizeof jobs[i].err, -1, "%s: out of memory", jobs[i].source);
            jobs[i].status = TRACER_ERR_NOMEM;
        }
        return jobs_verdict(jobs, n);
    }
    for (size_t i = 0; i < n; i++) {
        cs[i] = (chan){ .job = &jobs[i], .fd = -1, .pid = -1 };
        cs[i].P = (parent){ .cb = jobs[i].cbs, .ctx = jobs[i].ctx, .user = jobs[i].ctx };
        if (start(&cs[i]) && !cs[i].pr)
            cs[i].pr = -2;
    }
    pump(cs, n);
    for (size_t i = 0; i < n; i++) {
        chan *c = &cs[i];
        int st = 0;
        if (c->pid > 0) {
            if (c->pr != 0 || !c->P.done)
                kill(c->pid, SIGKILL);
            while (waitpid(c->pid, &st, 0) < 0 && errno == EINTR)
                ;
        }
        jobs[i].status = c->pid > 0 ? finish_chan(c, st) : TRACER_ERR_SYSTEM;
        chan_free(c);
    }
    base_free(cs);
    return jobs_verdict(jobs, n);
}

tracer_status tracer_decode_trace_isolated(const tracer_trace *t, const char *source, const tracer_decode_cbs *cbs,
                                           void *ctx, tracer_decode_diag *diag)
{
    tracer_decode_job j = { .t = t, .source = source, .cbs = cbs, .ctx = ctx, .diag = diag };
    return tracer_decode_jobs_isolated(&j, 1);
}
