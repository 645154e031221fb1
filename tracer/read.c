/* read.c -- the in-process Babeltrace2 graph over a trace (see read.h). */
#include "tracer/read.h"

#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        for (char *c = err; *c; c++) /* one line */
            if (*c == '\n' || *c == '\r' || *c == '\t')
                *c = ' ';
    }
    return -1;
}

/* The root cause of the current thread's Babeltrace2 error (taken and
 * released), or `dflt`. */
static void bt_error_text(char *buf, size_t len, const char *dflt)
{
    snprintf(buf, len, "%s", dflt);
    const bt_error *e = bt_current_thread_take_error();
    if (!e)
        return;
    uint64_t n = bt_error_get_cause_count(e);
    if (n > 0) {
        const char *m = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, 0));
        if (m && *m)
            snprintf(buf, len, "%s", m);
    }
    bt_error_release(e);
}

typedef struct run_ctx {
    tracer_message_fn fn;
    void *fn_ctx;
    bt_message_iterator *it;
    int sink_failed;
    char why[512]; /* fn's message */
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
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    bt_graph_simple_sink_component_consume_func_status st = BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
    for (uint64_t i = 0; i < count; i++) {
        if (st == BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK && c->fn(c->fn_ctx, msgs[i], c->why, sizeof c->why)) {
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
int tracer_read_run(const tracer_trace *t, const char *src, tracer_message_fn fn, void *fn_ctx, char *err,
                    size_t errlen)
{
    int rc = -1, live = tracer_trace_get_kind(t) == TRACER_TRACE_LIVE;
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
        fail(err, errlen, "%s: Babeltrace2's %s plugin not found (is babeltrace2 installed?)", src,
             ctf ? "utils" : "ctf");
        goto end;
    }
    const bt_component_class_source *src_cls =
        bt_plugin_borrow_source_component_class_by_name_const(ctf, live ? "lttng-live" : "fs");
    const bt_component_class_filter *mux_cls = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
    if (!src_cls || !mux_cls) {
        fail(err, errlen, "%s: Babeltrace2 lacks src.ctf.%s or flt.utils.muxer", src, live ? "lttng-live" : "fs");
        goto end;
    }
    graph = bt_graph_create(0);
    params = bt_value_map_create();
    inputs = bt_value_array_create();
    if (!graph || !params || !inputs)
        goto oom;
    if (live) {
        if (bt_value_array_append_string_element(inputs, tracer_trace_root(t)) ||
            bt_value_map_insert_string_entry(params, "session-not-found-action", "end"))
            goto oom;
    } else {
        for (size_t i = 0; i < tracer_trace_ctf_count(t); i++)
            if (bt_value_array_append_string_element(inputs, tracer_trace_ctf_path(t, i)))
                goto oom;
    }
    if (bt_value_map_insert_entry(params, "inputs", inputs))
        goto oom;
    if (bt_graph_add_source_component(graph, src_cls, "source", params, BT_LOGGING_LEVEL_NONE, &source) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        bt_error_text(why, sizeof why, "cannot read the trace");
        fail(err, errlen, "%s: %s", src, why);
        goto end;
    }
    if (bt_graph_add_filter_component(graph, mux_cls, "muxer", NULL, BT_LOGGING_LEVEL_NONE, &muxer) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_simple_sink_component(graph, "fathom", sink_init, sink_consume, NULL, &ctx, &out) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        bt_error_text(why, sizeof why, "cannot build the graph");
        fail(err, errlen, "%s: %s", src, why);
        goto end;
    }
    uint64_t nout = bt_component_source_get_output_port_count(source);
    if (nout == 0) {
        fail(err, errlen, "%s: the trace has no event streams", src);
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
            bt_error_text(why, sizeof why, "cannot connect the muxer");
            fail(err, errlen, "%s: %s", src, why);
            goto end;
        }
    }
    if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(muxer, 0),
                               bt_component_sink_borrow_input_port_by_index_const(out, 0),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        bt_error_text(why, sizeof why, "cannot connect the sink");
        fail(err, errlen, "%s: %s", src, why);
        goto end;
    }
    for (;;) {
        bt_graph_run_status st = bt_graph_run(graph);
        if (st == BT_GRAPH_RUN_STATUS_OK)
            break;
        if (st == BT_GRAPH_RUN_STATUS_AGAIN) { /* live: nothing yet */
            struct timespec ts = { 0, 20 * 1000 * 1000 };
            nanosleep(&ts, NULL);
            continue;
        }
        if (ctx.sink_failed) {
            bt_current_thread_clear_error();
            fail(err, errlen, "%s", ctx.why);
        } else {
            bt_error_text(why, sizeof why, st == BT_GRAPH_RUN_STATUS_MEMORY_ERROR ? "out of memory" : "cannot decode the trace");
            fail(err, errlen, "%s: %s", src, why);
        }
        goto end;
    }
    rc = 0;
    goto end;
oom:
    fail(err, errlen, "%s: out of memory", src);
end:
    bt_graph_put_ref(graph); /* also puts the components */
    bt_value_put_ref(inputs);
    bt_value_put_ref(params);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    return rc;
}

/* Opens a source safely (archives are extracted into a private folder). */
int tracer_read_open(const char *source, tracer_trace **t, char *err, size_t errlen)
{
    char why[768];
    if (tracer_trace_open(source, t, why, sizeof why) == TRACER_ARCHIVE_OK)
        return 0;
    /* the archive library's messages name the path already */
    return strstr(why, source) ? fail(err, errlen, "%s", why) : fail(err, errlen, "%s: %s", source, why);
}

int tracer_read_messages(const char *source, tracer_message_fn fn, void *ctx, char *err, size_t errlen)
{
    tracer_trace *t = NULL;
    if (tracer_read_open(source, &t, err, errlen))
        return -1;
    int rc = tracer_read_run(t, source, fn, ctx, err, errlen);
    tracer_trace_close(t);
    return rc;
}

static int decode_message(void *ctx, const bt_message *msg, char *err, size_t errlen)
{
    tracer_decoder *d = ctx;
    if (tracer_decoder_consume(d, msg) == 0)
        return 0;
    const char *why = tracer_decoder_error(d);
    if (*why)
        snprintf(err, errlen, "%s", why);
    else if (!*err)
        snprintf(err, errlen, "stopped by its reader");
    return -1;
}

int tracer_read_decode(const char *source, const tracer_decode_cbs *cbs, void *ctx, tracer_decode_diag *diag,
                       char *err, size_t errlen)
{
    tracer_decoder *d = tracer_decoder_create(cbs, ctx);
    if (!d)
        return fail(err, errlen, "%s: out of memory", source);
    int rc = tracer_read_messages(source, decode_message, d, err, errlen);
    tracer_decoder_finish(d);
    tracer_decode_diag g = { 0 };
    tracer_decoder_diag_sum(d, NULL, &g);
    if (diag && !rc)
        tracer_decoder_diag_sum(d, NULL, diag);
    tracer_decoder_destroy(d);
    if (rc)
        return -1;
    if (g.bad_schema)
        return fail(err, errlen, "%s: unknown trace schema version %" PRIu32 " (this fathom reads versions %d and %d)",
                    source, g.bad_schema, TRACER_SCHEMA_V1, TRACER_SCHEMA_V2);
    if (g.events == g.foreign_events)
        return fail(err, errlen, "%s: no fathom events in the trace (%" PRIu64 " events of other providers)", source,
                    g.foreign_events);
    return 0;
}
