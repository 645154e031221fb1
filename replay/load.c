/* load.c -- a Babeltrace2 graph (src.ctf.fs -> flt.utils.muxer -> a simple
 * sink) that turns fathom events into a replay program: tensors from
 * tensor_alloc, ops from op_begin in recorded order, their recorded time
 * from the matching op_end (same vtid and seq), steps from step_begin/end. */
#include "replay/load.h"

#include "exec/alloc.h"
#include "tracer/archive.h"
#include "tracer/opmatch.h"

#include <babeltrace2/babeltrace.h>
#include <stdio.h>
#include <string.h>

typedef struct loader {
    replay_program *p;
    exec_status status;
    uint32_t *op_step;          /* per op: its step, UINT32_MAX outside steps */
    uint32_t cap_steps;
    uint64_t *step_ns;          /* per step: duration */
    uint32_t nsteps;            /* completed steps */
    uint64_t step_begin_ts;
    int in_step;
    uint32_t cur_step;
    tracer_opmatch pend; /* op_begins waiting for their op_end: a = the op's index */
    uint64_t discarded, unmatched_begin, unmatched_end, fathom_events, run_begins;
} loader;

static int fail(loader *L, exec_status s, const char *fmt, const char *a)
{
    if (!L->status)
        L->status = exec_fail(s, fmt, a);
    return -1;
}

static const bt_field *member(const bt_field *st, const char *name)
{
    return st ? bt_field_structure_borrow_member_field_by_name_const(st, name) : NULL;
}

static uint64_t get_u(const bt_field *f)
{
    if (!f)
        return 0;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return (uint64_t)bt_field_integer_signed_get_value(f);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return bt_field_integer_unsigned_get_value(f);
    return 0;
}

static const char *get_label(const bt_field *f)
{
    if (!f)
        return NULL;
    bt_field_class_enumeration_mapping_label_array labels;
    uint64_t n = 0;
    bt_field_class_type t = bt_field_get_class_type(f);
    if (t == BT_FIELD_CLASS_TYPE_UNSIGNED_ENUMERATION) {
        if (bt_field_enumeration_unsigned_get_mapping_labels(f, &labels, &n))
            return NULL;
    } else if (t == BT_FIELD_CLASS_TYPE_SIGNED_ENUMERATION) {
        if (bt_field_enumeration_signed_get_mapping_labels(f, &labels, &n))
            return NULL;
    } else {
        return NULL;
    }
    return n ? labels[0] : NULL;
}

static void get_str(const bt_field *f, char *out, size_t len)
{
    const char *s = f && bt_field_get_class_type(f) == BT_FIELD_CLASS_TYPE_STRING ? bt_field_string_get_value(f) : "";
    snprintf(out, len, "%s", s ? s : "");
}

/* Reads an integer sequence field into out (at most max); returns the
 * length, or -1 if the field is not a sequence or is longer than max. */
static int get_seq(const bt_field *f, int64_t *out, int max)
{
    if (!f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_ARRAY))
        return -1;
    uint64_t n = bt_field_array_get_length(f);
    if (n > (uint64_t)max)
        return -1;
    for (uint64_t i = 0; i < n; i++)
        out[i] = (int64_t)get_u(bt_field_array_borrow_element_field_by_index_const(f, i));
    return (int)n;
}

static int on_tensor_alloc(loader *L, const bt_field *pl)
{
    replay_tensor t = { .id = (uint32_t)get_u(member(pl, "id")) };
    const char *role = get_label(member(pl, "role")), *dtype = get_label(member(pl, "dtype"));
    int r = -1, d = -1;
    for (int i = 0; role && i < EXEC_ROLE_COUNT; i++)
        if (strcmp(role, exec_role_name((exec_role)i)) == 0)
            r = i;
    for (int i = 0; dtype && i < EXEC_DTYPE_COUNT; i++)
        if (strcmp(dtype, exec_dtype_name((exec_dtype)i)) == 0)
            d = i;
    if (r < 0 || d < 0)
        return fail(L, EXEC_ERR_ARG, "tensor_alloc: unknown role or dtype '%s'", role ? (r < 0 ? role : dtype ? dtype : "?") : "?");
    t.role = (exec_role)r;
    t.dtype = (exec_dtype)d;
    int64_t shape[EXEC_MAX_DIMS];
    int nd = get_seq(member(pl, "shape"), shape, EXEC_MAX_DIMS);
    if (nd < 0)
        return fail(L, EXEC_ERR_ARG, "tensor_alloc: %s", "a shape of more than 5 dimensions or none at all");
    t.ndim = nd;
    memcpy(t.shape, shape, sizeof shape);
    if (replay_program_add_tensor(L->p, &t))
        return fail(L, EXEC_ERR_ARG, "%s", exec_errmsg());
    return 0;
}

static int grow_steps(loader *L)
{
    if (L->p->nops + 1 <= L->cap_steps)
        return 0;
    uint32_t nc = L->cap_steps ? L->cap_steps * 2 : 1024;
    uint32_t *ns = exec_realloc(L->op_step, nc * sizeof *ns);
    if (!ns)
        return fail(L, EXEC_ERR_NOMEM, "%s", "replay: out of memory");
    L->op_step = ns;
    L->cap_steps = nc;
    return 0;
}

/* An op_begin of an op type this version knows: into the program. */
static int add_known(loader *L, const bt_field *pl, const char *op, const char *phase)
{
    enum { MAXIO = 4096 };
    static _Thread_local int64_t io[2][MAXIO];
    int nin = get_seq(member(pl, "inputs"), io[0], MAXIO), nout = get_seq(member(pl, "outputs"), io[1], MAXIO);
    int64_t attrs[EXEC_MAX_ATTRS];
    int nat = get_seq(member(pl, "attrs"), attrs, EXEC_MAX_ATTRS);
    if (nin < 0 || nout < 0 || nat < 0)
        return fail(L, EXEC_ERR_ARG, "op_begin of %s: inputs, outputs or attrs missing or too long", op);
    uint32_t in[nin ? nin : 1], out[nout ? nout : 1];
    for (int i = 0; i < nin; i++)
        in[i] = (uint32_t)io[0][i];
    for (int i = 0; i < nout; i++)
        out[i] = (uint32_t)io[1][i];
    if (replay_program_add_op(L->p, op, phase, L->in_step ? L->cur_step : UINT32_MAX, nin, in, nout, out, nat, attrs, 0))
        return fail(L, EXEC_ERR_ARG, "%s", exec_errmsg());
    return 0;
}

static int on_op_begin(loader *L, const bt_field *pl, uint64_t ts, uint64_t vtid)
{
    const char *op = get_label(member(pl, "op")), *phase = get_label(member(pl, "phase"));
    if (!op || !phase)
        return fail(L, EXEC_ERR_ARG, "op_begin: %s", "an op or phase value without a label (a newer schema?)");
    if (grow_steps(L))
        return -1;
    if (exec_op_from_name(op) < 0) {
        /* an op type of a newer version: kept in its place, not replayed */
        if (replay_program_add_unknown(L->p, op, L->in_step ? L->cur_step : UINT32_MAX, 0))
            return fail(L, EXEC_ERR_ARG, "%s", exec_errmsg());
    } else if (add_known(L, pl, op, phase)) {
        return -1;
    }
    L->op_step[L->p->nops - 1] = L->in_step ? L->nsteps : UINT32_MAX;
    tracer_opmatch_entry e = { .vtid = vtid, .seq = get_u(member(pl, "seq")), .ts = ts, .a = L->p->nops - 1 };
    switch (tracer_opmatch_begin(&L->pend, &e, NULL)) {
    case TRACER_OPMATCH_ADDED:
        break;
    case TRACER_OPMATCH_REPLACED: /* the earlier begin never ended */
    case TRACER_OPMATCH_FULL:
        L->unmatched_begin++;
        break;
    case TRACER_OPMATCH_NOMEM:
        return fail(L, EXEC_ERR_NOMEM, "%s", "replay: out of memory");
    }
    return 0;
}

static int on_op_end(loader *L, const bt_field *pl, uint64_t ts, uint64_t vtid)
{
    tracer_opmatch_entry b;
    if (tracer_opmatch_end(&L->pend, vtid, get_u(member(pl, "seq")), &b))
        L->p->ops[b.a].rec_ns = ts >= b.ts ? ts - b.ts : 0;
    else
        L->unmatched_end++;
    return 0;
}

static int on_event(loader *L, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const char *name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
    if (!name || strncmp(name, "fathom:", 7) != 0)
        return 0; /* another provider's event */
    name += 7;
    L->fathom_events++;
    const bt_field *pl = bt_event_borrow_payload_field_const(ev);
    uint64_t ts = 0;
    int64_t ns = 0;
    const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
    if (cs && bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
        ts = (uint64_t)ns;
    uint64_t vtid = get_u(member(bt_event_borrow_common_context_field_const(ev), "vtid"));
    if (strcmp(name, "op_begin") == 0)
        return on_op_begin(L, pl, ts, vtid);
    if (strcmp(name, "op_end") == 0)
        return on_op_end(L, pl, ts, vtid);
    if (strcmp(name, "tensor_alloc") == 0)
        return on_tensor_alloc(L, pl);
    if (strcmp(name, "step_begin") == 0) {
        L->in_step = 1;
        L->cur_step = (uint32_t)get_u(member(pl, "step"));
        L->step_begin_ts = ts;
        return 0;
    }
    if (strcmp(name, "step_end") == 0) {
        if (!L->in_step)
            return 0;
        L->in_step = 0;
        uint64_t *sn = exec_realloc(L->step_ns, (L->nsteps + 1) * sizeof *sn);
        if (!sn)
            return fail(L, EXEC_ERR_NOMEM, "%s", "replay: out of memory");
        L->step_ns = sn;
        L->step_ns[L->nsteps++] = ts - L->step_begin_ts;
        return 0;
    }
    if (strcmp(name, "run_begin") == 0) {
        replay_machine *m = &L->p->rec;
        if (get_u(member(pl, "schema")) != 1)
            return fail(L, EXEC_ERR_ARG, "%s", "the trace has a schema version this fathom does not know (it reads 1)");
        get_str(member(pl, "model"), m->model, sizeof m->model);
        const char *mode = get_label(member(pl, "mode"));
        snprintf(m->mode, sizeof m->mode, "%s", mode ? mode : "?");
        get_str(member(pl, "preset"), m->preset, sizeof m->preset);
        get_str(member(pl, "cpu"), m->cpu, sizeof m->cpu);
        get_str(member(pl, "blas"), m->blas, sizeof m->blas);
        get_str(member(pl, "version"), m->version, sizeof m->version);
        m->threads = (uint32_t)get_u(member(pl, "threads"));
        m->inter = (uint32_t)get_u(member(pl, "inter"));
        m->batch = (uint32_t)get_u(member(pl, "batch"));
        m->steps = (uint32_t)get_u(member(pl, "steps"));
        L->run_begins++;
    }
    return 0;
}

static bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator *it, void *data)
{
    loader *L = data;
    bt_message_array_const msgs;
    uint64_t count = 0;
    switch (bt_message_iterator_next(it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK:
        break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    int rc = 0;
    for (uint64_t i = 0; i < count; i++) {
        const bt_message *m = msgs[i];
        if (!rc) {
            bt_message_type t = bt_message_get_type(m);
            if (t == BT_MESSAGE_TYPE_EVENT) {
                rc = on_event(L, m);
            } else if (t == BT_MESSAGE_TYPE_DISCARDED_EVENTS) {
                uint64_t n = 1;
                bt_message_discarded_events_get_count(m, &n);
                L->discarded += n ? n : 1;
            } else if (t == BT_MESSAGE_TYPE_DISCARDED_PACKETS) {
                L->discarded++;
            }
        }
        bt_message_put_ref(m);
    }
    return rc ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR
              : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK;
}

/* src.ctf.fs over every CTF path of t -> flt.utils.muxer -> the sink. */
static exec_status run_graph(loader *L, const tracer_trace *t)
{
    exec_status s = EXEC_OK;
    const bt_plugin *ctf = NULL, *utils = NULL;
    bt_graph *graph = NULL;
    bt_value *params = NULL, *inputs = NULL;
    const bt_component_source *src = NULL;
    const bt_component_filter *mux = NULL;
    const bt_component_sink *sink = NULL;
    if (bt_plugin_find("ctf", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &ctf) != BT_PLUGIN_FIND_STATUS_OK ||
        bt_plugin_find("utils", BT_TRUE, BT_FALSE, BT_TRUE, BT_TRUE, BT_FALSE, &utils) != BT_PLUGIN_FIND_STATUS_OK) {
        s = exec_fail(EXEC_ERR_STATE, "Babeltrace2's ctf and utils plugins are not installed");
        goto end;
    }
    graph = bt_graph_create(0);
    params = bt_value_map_create();
    inputs = bt_value_array_create();
    if (!graph || !params || !inputs) {
        s = exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
        goto end;
    }
    for (size_t i = 0; i < tracer_trace_ctf_count(t); i++)
        if (bt_value_array_append_string_element(inputs, tracer_trace_ctf_path(t, i))) {
            s = exec_fail(EXEC_ERR_NOMEM, "replay: out of memory");
            goto end;
        }
    if (bt_value_map_insert_entry(params, "inputs", inputs) ||
        bt_graph_add_source_component(graph, bt_plugin_borrow_source_component_class_by_name_const(ctf, "fs"), "src",
                                      params, BT_LOGGING_LEVEL_NONE, &src) ||
        bt_graph_add_filter_component(graph, bt_plugin_borrow_filter_component_class_by_name_const(utils, "muxer"),
                                      "mux", NULL, BT_LOGGING_LEVEL_NONE, &mux) ||
        bt_graph_add_simple_sink_component(graph, "sink", NULL, consume, NULL, L, &sink)) {
        s = exec_fail(EXEC_ERR_ARG, "%s: not a readable CTF trace", tracer_trace_source(t));
        goto end;
    }
    for (uint64_t i = 0; i < bt_component_source_get_output_port_count(src); i++) {
        const bt_port_input *in = bt_component_filter_borrow_input_port_by_index_const(
            mux, bt_component_filter_get_input_port_count(mux) - 1);
        if (bt_graph_connect_ports(graph, bt_component_source_borrow_output_port_by_index_const(src, i), in, NULL)) {
            s = exec_fail(EXEC_ERR_ARG, "%s: cannot connect the trace's streams", tracer_trace_source(t));
            goto end;
        }
    }
    if (bt_graph_connect_ports(graph, bt_component_filter_borrow_output_port_by_index_const(mux, 0),
                               bt_component_sink_borrow_input_port_by_index_const(sink, 0), NULL)) {
        s = exec_fail(EXEC_ERR_ARG, "%s: cannot connect the sink", tracer_trace_source(t));
        goto end;
    }
    for (;;) {
        bt_graph_run_status rs = bt_graph_run(graph);
        if (rs == BT_GRAPH_RUN_STATUS_AGAIN)
            continue;
        if (rs != BT_GRAPH_RUN_STATUS_OK) {
            if (L->status)
                s = L->status;
            else
                s = exec_fail(EXEC_ERR_ARG, "%s: the trace cannot be decoded (corrupt or truncated stream)",
                              tracer_trace_source(t));
        }
        break;
    }
end:
    bt_current_thread_clear_error();
    bt_value_put_ref(inputs);
    bt_value_put_ref(params);
    bt_graph_put_ref(graph);
    bt_plugin_put_ref(ctf);
    bt_plugin_put_ref(utils);
    return s;
}

/* Keeps the ops of kept steps only, in recorded order. */
static void keep_steps(loader *L, const replay_load_opts *o)
{
    replay_program *p = L->p;
    uint32_t first = o->skip_first, last = L->nsteps > o->skip_last ? L->nsteps - o->skip_last : 0;
    if (o->max_steps && last > first + o->max_steps)
        last = first + o->max_steps;
    uint32_t kept = 0;
    for (uint32_t k = 0; k < p->nops; k++) {
        uint32_t st = L->op_step[k];
        if (st != UINT32_MAX && st >= first && st < last) {
            p->ops[kept++] = p->ops[k];
        } else {
            exec_free(p->ops[k].in_more);
            exec_free(p->ops[k].out_more);
            p->skipped++;
        }
    }
    p->nops = kept;
    p->nsteps = last > first ? last - first : 0;
    p->rec_step_ns = 0;
    p->rec_op_ns = 0;
    for (uint32_t s = first; s < last; s++)
        p->rec_step_ns += L->step_ns[s];
    for (uint32_t k = 0; k < p->nops; k++)
        p->rec_op_ns += p->ops[k].rec_ns;
}

exec_status replay_load(const char *source, const replay_load_opts *o, replay_program *p)
{
    char err[512];
    tracer_trace *t = NULL;
    loader L = { .p = p };
    exec_status s = EXEC_OK;
    if (tracer_trace_open(source, &t, err, sizeof err) != TRACER_ARCHIVE_OK)
        return exec_fail(EXEC_ERR_IO, "%s", err);
    if (tracer_trace_get_kind(t) == TRACER_TRACE_LIVE) {
        s = exec_fail(EXEC_ERR_ARG, "%s: replay reads recorded traces (an archive or a CTF directory), not live sessions",
                      source);
        goto end;
    }
    if ((s = run_graph(&L, t)))
        goto end;
    if (!L.fathom_events) {
        s = exec_fail(EXEC_ERR_ARG, "%s: no fathom events (a trace of another tool?)", source);
        goto end;
    }
    if (!L.run_begins) {
        s = exec_fail(EXEC_ERR_ARG, "%s: no fathom:run_begin event: the run's schema and metadata are unknown", source);
        goto end;
    }
    if (L.run_begins > 1) {
        s = exec_fail(EXEC_ERR_ARG, "%s: %llu run_begin events (several runs in one trace); replay reads one run",
                      source, (unsigned long long)L.run_begins);
        goto end;
    }
    if (L.discarded) {
        s = exec_fail(EXEC_ERR_ARG, "%s: %llu events were discarded by the tracer: the op program is incomplete", source,
                      (unsigned long long)L.discarded);
        goto end;
    }
    if (L.unmatched_begin + tracer_opmatch_pending(&L.pend)) {
        s = exec_fail(EXEC_ERR_ARG, "%s: truncated trace: %llu ops have no op_end", source,
                      (unsigned long long)(L.unmatched_begin + tracer_opmatch_pending(&L.pend)));
        goto end;
    }
    if (L.unmatched_end) {
        s = exec_fail(EXEC_ERR_ARG, "%s: damaged trace: %llu op_end events have no op_begin", source,
                      (unsigned long long)L.unmatched_end);
        goto end;
    }
    if (!L.nsteps) {
        s = exec_fail(EXEC_ERR_ARG, "%s: the trace has no complete step", source);
        goto end;
    }
    if (o->skip_first + o->skip_last >= L.nsteps) {
        s = exec_fail(EXEC_ERR_ARG, "%s: skipping %u + %u of %u steps leaves none", source, o->skip_first, o->skip_last,
                      L.nsteps);
        goto end;
    }
    keep_steps(&L, o);
end:
    exec_free(L.op_step);
    exec_free(L.step_ns);
    tracer_opmatch_clear(&L.pend);
    tracer_trace_close(t);
    return s;
}
