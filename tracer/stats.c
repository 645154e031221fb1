/* stats.c -- summarize a `fathom` trace with Babeltrace2 (see stats.h). */
#define _GNU_SOURCE
#include "tracer/stats.h"

#include "tracer/opmatch.h"

#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum kind { K_OTHER, K_RUN_BEGIN, K_RUN_END, K_STEP_END, K_OP_BEGIN, K_OP_END };

#define CLASS_CACHE 128

typedef struct ctx {
    tracer_stats *s;
    struct { const bt_event_class *cls; enum kind kind; int name; } cache[CLASS_CACHE];
    int ncache;
    tracer_opmatch pending; /* op_begin events waiting for their op_end */
    bool oom;
} ctx;

static const bt_field *member(const bt_field *payload, const char *name)
{
    return payload ? bt_field_structure_borrow_member_field_by_name_const(payload, name) : NULL;
}

static bool is_uint(const bt_field *f)
{
    return f && bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER);
}

static uint64_t get_u64(const bt_field *payload, const char *name)
{
    const bt_field *f = member(payload, name);
    if (is_uint(f))
        return bt_field_integer_unsigned_get_value(f);
    if (f && bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return (uint64_t)bt_field_integer_signed_get_value(f);
    return 0;
}

static void get_str(const bt_field *payload, const char *name, char *buf, size_t len)
{
    const bt_field *f = member(payload, name);
    buf[0] = '\0';
    if (!f)
        return;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (t == BT_FIELD_CLASS_TYPE_STRING) {
        snprintf(buf, len, "%s", bt_field_string_get_value(f));
    } else if (t == BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION) {
        bt_field_class_enumeration_mapping_label_array labels;
        uint64_t n = 0;
        if (bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n) ==
                BT_FIELD_ENUMERATION_GET_MAPPING_LABELS_STATUS_OK && n > 0)
            snprintf(buf, len, "%s", labels[0]);
        else
            snprintf(buf, len, "%" PRIu64, bt_field_integer_unsigned_get_value(f));
    }
}

static bool is_array(const bt_field *payload, const char *name)
{
    const bt_field *f = member(payload, name);
    return f && bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_ARRAY);
}

static int name_index(tracer_stats *s, const char *name)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (strcmp(s->names[i].name, name) == 0)
            return (int)i;
    if (s->nnames == TRACER_STATS_MAX_NAMES)
        return -1;
    snprintf(s->names[s->nnames].name, sizeof s->names[0].name, "%s", name);
    return (int)s->nnames++;
}

static void classify(ctx *c, const bt_event_class *cls, enum kind *kind, int *name)
{
    for (int i = 0; i < c->ncache; i++)
        if (c->cache[i].cls == cls) {
            *kind = c->cache[i].kind;
            *name = c->cache[i].name;
            return;
        }
    const char *n = bt_event_class_get_name(cls);
    if (!n)
        n = "(unnamed)";
    *kind = !strcmp(n, "fathom:run_begin")  ? K_RUN_BEGIN
            : !strcmp(n, "fathom:run_end")  ? K_RUN_END
            : !strcmp(n, "fathom:step_end") ? K_STEP_END
            : !strcmp(n, "fathom:op_begin") ? K_OP_BEGIN
            : !strcmp(n, "fathom:op_end")   ? K_OP_END
                                            : K_OTHER;
    *name = name_index(c->s, n);
    if (c->ncache < CLASS_CACHE) {
        c->cache[c->ncache].cls = cls;
        c->cache[c->ncache].kind = *kind;
        c->cache[c->ncache].name = *name;
        c->ncache++;
    }
}

/* The event's vtid context (0 without one: a trace recorded without it
 * pairs ops by seq alone). */
static uint64_t vtid_of(const bt_event *ev)
{
    return get_u64(bt_event_borrow_common_context_field_const(ev), "vtid");
}

static void on_event(ctx *c, const bt_message *m)
{
    tracer_stats *s = c->s;
    const bt_event *ev = bt_message_event_borrow_event_const(m);
    enum kind kind;
    int name;
    classify(c, bt_event_borrow_class_const(ev), &kind, &name);
    s->events++;
    if (name >= 0)
        s->names[name].count++;
    else
        s->other_names++;

    int64_t ns = 0;
    const bt_clock_snapshot *cs = NULL;
    const bt_stream_class *sc = bt_stream_borrow_class_const(bt_event_borrow_stream_const(ev));
    if (bt_stream_class_borrow_default_clock_class_const(sc))
        cs = bt_message_event_borrow_default_clock_snapshot_const(m);
    if (cs && bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK) {
        if (s->events == 1)
            s->first_ns = (uint64_t)ns;
        s->last_ns = (uint64_t)ns;
    }

    const bt_field *p = bt_event_borrow_payload_field_const(ev);
    switch (kind) {
    case K_RUN_BEGIN:
        if (s->runs++ == 0) {
            s->schema = (uint32_t)get_u64(p, "schema");
            s->batch = (uint32_t)get_u64(p, "batch");
            s->steps_planned = (uint32_t)get_u64(p, "steps");
            s->threads = (uint32_t)get_u64(p, "threads");
            s->inter = (uint32_t)get_u64(p, "inter");
            s->seed = get_u64(p, "seed");
            get_str(p, "model", s->model, sizeof s->model);
            get_str(p, "mode", s->mode, sizeof s->mode);
            get_str(p, "preset", s->preset, sizeof s->preset);
            get_str(p, "version", s->version, sizeof s->version);
            get_str(p, "blas", s->blas, sizeof s->blas);
            get_str(p, "cpu", s->cpu, sizeof s->cpu);
        }
        break;
    case K_RUN_END:
        s->run_ends++;
        s->run_end_ops += get_u64(p, "ops");
        s->run_end_status = (int32_t)get_u64(p, "status");
        break;
    case K_STEP_END:
        s->steps++;
        break;
    case K_OP_BEGIN: {
        s->op_begins++;
        if (!is_array(p, "inputs") || !is_array(p, "outputs") || !is_array(p, "attrs"))
            s->op_begin_incomplete++;
        tracer_opmatch_entry e = { .vtid = vtid_of(ev), .seq = get_u64(p, "seq"), .ts = (uint64_t)ns };
        switch (tracer_opmatch_begin(&c->pending, &e, NULL)) {
        case TRACER_OPMATCH_ADDED:
            break;
        case TRACER_OPMATCH_REPLACED: /* the earlier begin never ended */
        case TRACER_OPMATCH_FULL:     /* a run that never ends its ops */
            s->op_unmatched++;
            break;
        case TRACER_OPMATCH_NOMEM:
            c->oom = true;
            return;
        }
        break;
    }
    case K_OP_END: {
        s->op_ends++;
        tracer_opmatch_entry b;
        if (!tracer_opmatch_end(&c->pending, vtid_of(ev), get_u64(p, "seq"), &b)) {
            s->op_unmatched++;
        } else {
            s->op_pairs++;
            s->op_time_ns += (uint64_t)ns >= b.ts ? (uint64_t)ns - b.ts : 0;
        }
        break;
    }
    case K_OTHER:
        break;
    }
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *user)
{
    ctx *c = user;
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
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *m = msgs[i];
        switch (bt_message_get_type(m)) {
        case BT_MESSAGE_TYPE_EVENT:
            on_event(c, m);
            break;
        case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
            uint64_t n = 1;
            if (bt_message_discarded_events_get_count(m, &n) != BT_PROPERTY_AVAILABILITY_AVAILABLE)
                n = 1;
            c->s->discarded_events += n;
            c->s->discarded_event_msgs++;
            break;
        }
        case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
            uint64_t n = 1;
            if (bt_message_discarded_packets_get_count(m, &n) != BT_PROPERTY_AVAILABILITY_AVAILABLE)
                n = 1;
            c->s->discarded_packets += n;
            break;
        }
        default:
            break;
        }
        bt_message_put_ref(m);
    }
    return c->oom ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR
                  : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* The first cause of the current thread's Babeltrace2 error (where it
 * started: cause 0; later causes are the layers that passed it up), on one
 * line. */
static void bt_err(char *err, size_t errlen, const char *what)
{
    const bt_error *e = bt_current_thread_take_error();
    const char *msg = NULL;
    if (e) {
        uint64_t n = bt_error_get_cause_count(e);
        for (uint64_t i = 0; i < n && !msg; i++) {
            const char *cm = bt_error_cause_get_message(bt_error_borrow_cause_by_index(e, i));
            if (cm && *cm)
                msg = cm;
        }
    }
    snprintf(err, errlen, "%s%s%s", what, msg ? ": " : "", msg ? msg : "");
    for (char *q = err; *q; q++)
        if (*q == '\n' || *q == '\r' || *q == '\t')
            *q = ' ';
    if (e)
        bt_error_release(e);
}

static const bt_plugin *find_plugin(const char *name)
{
    const bt_plugin *p = NULL;
    if (bt_plugin_find(name, BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &p) != BT_PLUGIN_FIND_STATUS_OK)
        return NULL;
    return p;
}

int tracer_stats_collect(const char *const *paths, size_t n, tracer_stats *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (n == 0) {
        snprintf(err, errlen, "no CTF trace to read");
        return -1;
    }
    int rc = -1;
    ctx c = { .s = out };
    const bt_plugin *ctf = find_plugin("ctf"), *utils = find_plugin("utils");
    bt_graph *graph = NULL;
    bt_value *params = NULL;
    if (!ctf || !utils) {
        bt_current_thread_clear_error();
        snprintf(err, errlen, "cannot find the Babeltrace2 '%s' plugin (is babeltrace2 installed?)",
                 !ctf ? "ctf" : "utils");
        goto end;
    }
    const bt_component_class_source *fs = bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs");
    const bt_component_class_filter *mux = bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer");
    if (!fs || !mux) {
        snprintf(err, errlen, "Babeltrace2 lacks src.ctf.fs or flt.utils.muxer");
        goto end;
    }
    graph = bt_graph_create(0);
    params = bt_value_map_create();
    bt_value *inputs = NULL;
    if (!graph || !params || bt_value_map_insert_empty_array_entry(params, "inputs", &inputs) != BT_VALUE_MAP_INSERT_ENTRY_STATUS_OK) {
        snprintf(err, errlen, "out of memory");
        goto end;
    }
    for (size_t i = 0; i < n; i++)
        if (bt_value_array_append_string_element(inputs, paths[i]) != BT_VALUE_ARRAY_APPEND_ELEMENT_STATUS_OK) {
            snprintf(err, errlen, "out of memory");
            goto end;
        }
    const bt_component_source *src = NULL;
    const bt_component_filter *muxer = NULL;
    const bt_component_sink *sink = NULL;
    if (bt_graph_add_source_component(graph, fs, "src", params, BT_LOGGING_LEVEL_NONE, &src) !=
        BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        bt_err(err, errlen, "cannot read the CTF trace");
        goto end;
    }
    if (bt_graph_add_filter_component(graph, mux, "muxer", NULL, BT_LOGGING_LEVEL_NONE, &muxer) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
        bt_graph_add_simple_sink_component(graph, "stats", NULL, consume, NULL, &c, &sink) !=
            BT_GRAPH_ADD_COMPONENT_STATUS_OK) {
        bt_err(err, errlen, "cannot build the Babeltrace2 graph");
        goto end;
    }
    uint64_t nports = bt_component_source_get_output_port_count(src);
    for (uint64_t i = 0; i < nports; i++) {
        const bt_port_output *op = bt_component_source_borrow_output_port_by_index_const(src, i);
        uint64_t nin = bt_component_filter_get_input_port_count(muxer);
        const bt_port_input *ip = bt_component_filter_borrow_input_port_by_index_const(muxer, nin - 1);
        if (bt_graph_connect_ports(graph, op, ip, NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
            bt_err(err, errlen, "cannot connect the trace's streams");
            goto end;
        }
    }
    if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_name_const(muxer, "out"),
                               bt_component_sink_borrow_input_port_by_name_const(sink, "in"),
                               NULL) != BT_GRAPH_CONNECT_PORTS_STATUS_OK) {
        bt_err(err, errlen, "cannot connect the muxer");
        goto end;
    }
    for (;;) {
        bt_graph_run_status st = bt_graph_run(graph);
        if (st == BT_GRAPH_RUN_STATUS_OK)
            break;
        if (st == BT_GRAPH_RUN_STATUS_AGAIN) {
            nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
            continue;
        }
        if (c.oom)
            snprintf(err, errlen, "out of memory reading the trace");
        else
            bt_err(err, errlen, "cannot decode the trace");
        goto end;
    }
    out->op_unmatched += tracer_opmatch_pending(&c.pending);
    rc = 0;
end:
    tracer_opmatch_clear(&c.pending);
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    return rc;
}

uint64_t tracer_stats_count_of(const tracer_stats *s, const char *name)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (strcmp(s->names[i].name, name) == 0)
            return s->names[i].count;
    return 0;
}
