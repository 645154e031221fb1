/* reader.c -- the in-process Babeltrace2 graph over a trace (see reader.h). */
#define _GNU_SOURCE /* memfd_create */
#include "tracer/reader.h"

#include "base/error.h"
#include "tracer/metadata.h"

#include <babeltrace2/babeltrace.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Sets the thread's message (its line breaks and tabs made spaces: one
 * line); returns st. */
static tracer_status fail(tracer_status st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static tracer_status fail(tracer_status st, const char *fmt, ...)
{
    char buf[BASE_ERRMSG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    for (char *c = buf; *c; c++) /* one line */
        if (*c == '\n' || *c == '\r' || *c == '\t')
            *c = ' ';
    return base_fail(st, "%s", buf);
}

/* s without the object addresses Babeltrace2 puts in its causes
 * ("msg-it-addr=0x55ed1966dba0, "): they change from run to run and say
 * nothing about the trace. */
static void drop_addresses(char *s)
{
    static const char tag[] = "-addr=0x";
    char *p;
    while ((p = strstr(s, tag)) != NULL) {
        char *b = p, *e = p + sizeof tag - 1;
        while (b > s && (isalnum((unsigned char)b[-1]) || b[-1] == '-' || b[-1] == '_'))
            b--;
        while (isxdigit((unsigned char)*e))
            e++;
        if (e[0] == ',' && e[1] == ' ')
            e += 2; /* "a=0x1, b=2": "b=2" */
        else if (b - s >= 2 && b[-2] == ',' && b[-1] == ' ')
            b -= 2; /* "b=2, a=0x1": "b=2" */
        else if (b - s >= 2 && b[-2] == ':' && b[-1] == ' ' && !*e)
            b -= 2; /* "state: a=0x1": "state" */
        memmove(b, e, strlen(e) + 1);
    }
}

/* s with every "root/" removed: an archive's files named by their paths
 * in it, not in the private folder it was extracted into, which is gone
 * when the message is read */
static void drop_prefix(char *s, const char *root)
{
    const size_t n = strlen(root);
    if (n == 0)
        return;
    for (char *p = s; (p = strstr(p, root)) != NULL;)
        if (p[n] == '/')
            memmove(p, p + n + 1, strlen(p + n + 1) + 1);
        else
            p += n;
}

/* The root cause of the current thread's Babeltrace2 error (taken and
 * released; its addresses dropped, an extracted archive's paths made its
 * own; t may be NULL), or `dflt`. */
static void bt_error_text(const tracer_trace *t, char *buf, size_t len, const char *dflt)
{
    snprintf(buf, len, "%s", dflt);
    const bt_error *e = bt_current_thread_take_error();
    if (!e)
        return;
    uint64_t n = bt_error_get_cause_count(e);
    if (n > 0) {
        const char *m = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0));
        if (m && *m) {
            snprintf(buf, len, "%s", m);
            drop_addresses(buf);
            for (size_t k = strlen(buf); k > 0 && (buf[k - 1] == '.' || buf[k - 1] == ' '); k--)
                buf[k - 1] = '\0'; /* a sentence's stop: the message goes on */
            if (t && tracer_trace_get_kind(t) == TRACER_TRACE_ARCHIVE)
                drop_prefix(buf, tracer_trace_root(t));
        }
    }
    bt_error_release(e);
}

int tracer_read_capture_log;

/* fd 2 into a memory file while the source is created
 * (tracer_read_capture_log): the saved fd 2 and the memory file's, or -1s. */
typedef struct log_capture {
    int saved, fd;
} log_capture;

static log_capture capture_begin(void)
{
    log_capture c = { -1, -1 };
    if (!tracer_read_capture_log || (c.fd = memfd_create("fathom-bt-log", MFD_CLOEXEC)) < 0)
        return c;
    fflush(stderr);
    if ((c.saved = dup(STDERR_FILENO)) < 0 || dup2(c.fd, STDERR_FILENO) < 0) {
        if (c.saved >= 0)
            close(c.saved);
        close(c.fd);
        c.saved = c.fd = -1;
    }
    return c;
}

/* fd 2 back; the metadata parser's reason ("At line 116 in metadata
 * stream: syntax error, ...") as "metadata line N: why" into buf when
 * `want` and it logged one. */
static void capture_end(log_capture *c, int want, char *buf, size_t len)
{
    char log[16384];
    ssize_t n = 0;
    if (c->fd < 0)
        return;
    fflush(stderr);
    dup2(c->saved, STDERR_FILENO);
    close(c->saved);
    if (want && lseek(c->fd, 0, SEEK_SET) == 0)
        n = read(c->fd, log, sizeof log - 1);
    close(c->fd);
    c->saved = c->fd = -1;
    log[n > 0 ? n : 0] = '\0';
    const char *at = strstr(log, "At line "), *mid;
    unsigned line;
    if (!at || sscanf(at, "At line %u", &line) != 1 || !(mid = strstr(at, " in metadata stream: ")))
        return;
    mid += strlen(" in metadata stream: ");
    snprintf(buf, len, "metadata line %u: %.*s", line, (int)strcspn(mid, "\n"), mid);
    base_scrub(buf); /* the token is the damaged trace's: no control byte reaches a terminal */
}

typedef struct run_ctx {
    tracer_message_fn fn;
    void *fn_ctx;
    bt_message_iterator *it;
    int sink_failed; /* fn stopped the reading: its message is the thread's */
} run_ctx;

static bt_graph_simple_sink_component_initialize_func_status sink_init(bt_message_iterator *it, void *data)
{
    ((run_ctx *)data)->it = it;
    return BT_GRAPH_SIMPLE_SINK_COMPONENT_INITIALIZE_FUNC_STATUS_OK;
}

static bt_graph_simple_sink_component_consume_func_status sink_consume(bt_message_iterator *it, void *data)
{
    run_ctx *c = data;
    bt_message_array_const msgs;
    uint64_t count = 0;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    bt_graph_simple_sink_component_consume_func_status st = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
    for (uint64_t i = 0; i < count; i++) {
        if (st == BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK && c->fn(c->fn_ctx, msgs[i])) {
            c->sink_failed = 1;
            st = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
        }
        bt_message_put_ref(msgs[i]);
    }
    return st;
}

static const bt_plugin *find_plugin(const char *name)
{
    const bt_plugin *p = NULL;
    if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &p) != BT_PLUGIN_FIND_STATUS_OK)
        return NULL;
    return p;
}

/* Builds and runs the graph, each message to fn. */
int (*tracer_read_live_idle)(void);

tracer_status tracer_read_run(const tracer_trace *t, const char *src, tracer_message_fn fn, void *fn_ctx)
{
    tracer_status rc = TRACER_ERR_SYSTEM;
    int live = tracer_trace_get_kind(t) == TRACER_TRACE_LIVE;
    const bt_plugin *ctf = NULL, *utils = NULL;
    bt_graph *graph = NULL;
    bt_value *params = NULL, *inputs = NULL;
    const bt_component_source *source = NULL;
    const bt_component_filter *muxer = NULL;
    const bt_component_sink *out = NULL;
    run_ctx ctx = { .fn = fn, .fn_ctx = fn_ctx };
    char why[512];

    /* A cause left by an earlier call (the ctf source appends some even when
     * it succeeds) makes every Babeltrace2 function abort on its
     * precondition: start clean. */
    bt_current_thread_clear_error();
    ctf = find_plugin("ctf");
    utils = find_plugin("utils");
    if (!ctf || !utils) {
        bt_current_thread_clear_error();
        fail(rc, "%s: Babeltrace2's %s plugin not found (is babeltrace2 installed?)", src, ctf ? "utils" : "ctf");
        goto end;
    }
    const bt_component_class_source *src_cls =
        bt_plugin_borrow_source_component_class_by_name_const(ctf, live ? "lttng-live" : "fs");
    const bt_component_class_filter *mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
    if (!src_cls || !mux_cls) {
        fail(rc, "%s: Babeltrace2 lacks src.ctf.%s or flt.utils.muxer", src, live ? "lttng-live" : "fs");
        goto end;
    }
    graph = bt_graph_create(0);
    params = bt_value_map_create();
    inputs = bt_value_array_create();
    if (!graph || !params || !inputs)
        goto oom;
    if (live) {
        if (bt_value_array_append_string_element(inputs, tracer_trace_root(t)) ||
            bt_value_map_insert_string_entry(params, "session-not-found-action", "continue"))
            goto oom;
    } else {
        for (size_t i = 0; i < tracer_trace_ctf_count(t); i++)
            if (bt_value_array_append_string_element(inputs, tracer_trace_ctf_path(t, i)))
                goto oom;
    }
    if (bt_value_map_insert_entry(params, "inputs", inputs))
        goto oom;
    log_capture lc = capture_begin(); /* and the source's own errors logged, where they are captured */
    const bt_graph_add_component_status added = bt_graph_add_source_component(
        graph, src_cls, "source", params, lc.fd >= 0 ? BT_LOGGING_LEVEL_ERROR : BT_LOGGING_LEVEL_NONE, &source);
    if (added != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        /* the format was recognized (tracer_read_open): metadata that does
         * not parse, a stream file whose packets its size cuts short */
        bt_error_text(t, why, sizeof why, live ? "cannot read the trace" : "Babeltrace2 gave no cause");
    }
    capture_end(&lc, added != BT_GRAPH_ADD_COMPONENT_STATUS_OK, why, sizeof why);
    if (added != BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        rc = fail(TRACER_ERR_INPUT, live ? "%s: %s" : "%s: cannot read the trace: %s (a damaged trace?)", src, why);
        goto end;
    }
    if (bt_graph_add_filter_component(graph, mux_cls, "muxer", NULL, BT_LOGGING_LEVEL_NONE, &muxer) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_simple_sink_component(graph, "fathom", sink_init, sink_consume, NULL, &ctx, &out) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        bt_error_text(t, why, sizeof why, "cannot build the graph");
        fail(rc, "%s: %s", src, why);
        goto end;
    }
    uint64_t nout = bt_component_source_get_output_port_count(source);
    if (nout == 0) {
        rc = fail(TRACER_ERR_INPUT, "%s: the trace has no event streams", src);
        goto end;
    }
    for (uint64_t i = 0; i < nout; i++) {
        const bt_port_output *op = bt_component_source_borrow_output_port_by_index_const(source, i);
        const bt_port_input *ip = NULL;
        /* the muxer adds an input port each time one gets connected */
        for (uint64_t j = 0; j < bt_component_filter_get_input_port_count(muxer); j++) {
            const bt_port_input *cand = bt_component_filter_borrow_input_port_by_index_const(muxer, j);
            if (!bt_port_is_connected(bt_port_input_as_port_const(cand))) {
                ip = cand;
                break;
            }
        }
        if (!ip || bt_graph_connect_ports(graph, op, ip, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            bt_error_text(t, why, sizeof why, "cannot connect the muxer");
            fail(rc, "%s: %s", src, why);
            goto end;
        }
    }
    if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(muxer, 0),
                               bt_component_sink_borrow_input_port_by_index_const(out, 0),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        bt_error_text(t, why, sizeof why, "cannot connect the sink");
        fail(rc, "%s: %s", src, why);
        goto end;
    }
    for (;;) {
        bt_graph_run_status st = bt_graph_run(graph);
        if (st == BT_GRAPH_RUN_STATUS_OK)
            break;
        if (st == BT_GRAPH_RUN_STATUS_AGAIN) { /* live: nothing yet */
            if (live && tracer_read_live_idle && tracer_read_live_idle())
                break; /* the run ended and nothing came since: the end */
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            continue;
        }
        if (ctx.sink_failed) {
            bt_current_thread_clear_error();
            rc = fail(TRACER_ERR_STOPPED, "%s", base_errmsg());
        } else {
            const int oom = st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR;
            bt_error_text(t, why, sizeof why, oom ? "out of memory" : "cannot decode the trace");
            if (oom || live)
                rc = fail(oom ? TRACER_ERR_NOMEM : TRACER_ERR_INPUT, "%s: %s", src, why);
            else /* the metadata was read: a stream the decoder cannot follow past some point */
                rc = fail(TRACER_ERR_INPUT, "%s: the CTF decoder stopped: %s (a damaged trace?)", src, why);
        }
        goto end;
    }
    rc = TRACER_OK;
    goto end;
oom:
    rc = fail(TRACER_ERR_NOMEM, "%s: out of memory", src);
end:
    bt_graph_put_ref(graph); /* also puts the components */
    bt_value_put_ref(inputs);
    bt_value_put_ref(params);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    return rc;
}

/* Opens a source safely (archives are extracted into a private folder). */
tracer_status tracer_read_open(const char *source, tracer_trace **t)
{
    tracer_archive_status st = tracer_trace_open(source, t);
    if (st == TRACER_ARCHIVE_OK) {
        /* the traces that are not fathom's set aside from their metadata,
         * before any stream is decoded */
        tracer_status rc = tracer_ctf_screen(*t, source);
        if (rc) {
            tracer_trace_close(*t);
            *t = NULL;
        }
        return rc;
    }
    tracer_status rc = st == TRACER_ARCHIVE_ENOMEM ? TRACER_ERR_NOMEM : TRACER_ERR_INPUT;
    /* the archive library's messages (one line) name the path already */
    return strstr(base_errmsg(), source) ? rc : (tracer_status)base_fail_cause(rc, "%s: ", source);
}

static uint64_t map_u64(const bt_value *m, const char *key)
{
    const bt_value *v = bt_value_map_borrow_entry_value_const(m, key);
    if (!v)
        return 0;
    if (bt_value_is_unsigned_integer(v))
        return bt_value_integer_unsigned_get(v);
    if (bt_value_is_signed_integer(v))
        return (uint64_t)bt_value_integer_signed_get(v);
    return 0;
}

static const char *map_str(const bt_value *m, const char *key)
{
    const bt_value *v = bt_value_map_borrow_entry_value_const(m, key);
    return v && bt_value_is_string(v) ? bt_value_string_get(v) : "?";
}

tracer_status tracer_live_sessions(const char *url, int (*fn)(void *ctx, const tracer_live_session *s), void *ctx)
{
    tracer_status rc = TRACER_ERR_SYSTEM;
    const bt_plugin *ctf = find_plugin("ctf");
    bt_value *params = bt_value_map_create();
    bt_query_executor *q = NULL;
    const bt_value *res = NULL;
    char why[512];
    if (!ctf) {
        bt_current_thread_clear_error();
        fail(rc, "Babeltrace2's ctf plugin not found (is babeltrace2 installed?)");
        goto end;
    }
    const bt_component_class_source *live = bt_plugin_borrow_source_component_class_by_name_const(ctf, "lttng-live");
    if (!live || !params || bt_value_map_insert_string_entry(params, "url", url)) {
        rc = fail(live ? TRACER_ERR_NOMEM : rc, "%s: %s", url,
                  live ? "out of memory" : "Babeltrace2 lacks src.ctf.lttng-live");
        goto end;
    }
    q = bt_query_executor_create(bt_component_class_source_as_component_class_const(live), "sessions", params);
    if (!q) {
        rc = fail(TRACER_ERR_NOMEM, "%s: out of memory", url);
        goto end;
    }
    for (;;) {
        bt_query_executor_query_status st = bt_query_executor_query(q, &res);
        if (st == BT_QUERY_EXECUTOR_QUERY_STATUS_AGAIN) {
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            continue;
        }
        if (st != BT_QUERY_EXECUTOR_QUERY_STATUS_OK) {
            bt_error_text(NULL, why, sizeof why, "cannot query the relay");
            fail(rc, "%s: %s", url, why);
            goto end;
        }
        break;
    }
    if (!res || !bt_value_is_array(res)) {
        rc = fail(TRACER_ERR_INPUT, "%s: the relay's answer is not a list of sessions", url);
        goto end;
    }
    for (uint64_t i = 0; i < bt_value_array_get_length(res); i++) {
        const bt_value *m = bt_value_array_borrow_element_by_index_const(res, i);
        if (!bt_value_is_map(m))
            continue;
        tracer_live_session s = {
            .url = map_str(m, "url"),
            .host = map_str(m, "target-hostname"),
            .name = map_str(m, "session-name"),
            .timer_us = map_u64(m, "timer-us"),
            .streams = map_u64(m, "stream-count"),
            .clients = map_u64(m, "client-count"),
        };
        if (fn(ctx, &s)) {
            rc = TRACER_ERR_STOPPED;
            goto end;
        }
    }
    rc = TRACER_OK;
end:
    bt_value_put_ref(res);
    bt_query_executor_put_ref(q);
    bt_value_put_ref(params);
    bt_plugin_put_ref(ctf);
    return rc;
}
