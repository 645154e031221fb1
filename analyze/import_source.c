/* import_source.c -- src.fathom.pytorch: the Babeltrace2 source that emits
 * an imported trace (import_trace.h) as a schema-2 fathom trace (docs/design.md,
 * "The trace"; fathom-trace(5)).
 *
 * One output port per input (`out0`, `out1`, ...), each with its own trace,
 * one stream and one packet.  The stream's events are in time order:
 *
 *   run_begin, tensor_alloc of every tensor, node_def of every node (all at
 *   the first op's time, as a recorder plans a graph before running it);
 *   then for each step: step_begin (at the step's begin), the step's ops
 *   events (one per thread and up to OPS_BATCH records each, at the step's
 *   end), step_end; ops outside every step between the steps, at the end
 *   of the step before; run_end at the last op's end.
 *
 * The records are kept by track, then begin (import_trace.h); the ops
 * events of a step take each track's next records in turn (a heap of the
 * tracks by the step of their next record), so the records are read once,
 * in order within each track, and never sorted again.
 *
 * Each event carries the vpid, vtid and procname contexts of its thread
 * (the step and definition events those of the thread that ran the first
 * op); GPU streams are threads of their own, named "gpu D stream S". */
#include "analyze/device.h"
#include "analyze/import_trace.h"
#include "analyze/analyze_status.h"
#include "base/alloc.h"
#include "tracer/schema.def"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OPS_BATCH 256 /* records per ops event, as a recording thread's buffer */
#define SCHEMA 2

/* The events an imported trace holds, their fields the schema's rows
 * (tracer/schema.def): a row's place in its payload is P_<event>_<name>. */
#define IMPORTED_EVENTS(E) \
    E(run_begin) E(run_end) E(step_begin) E(step_end) E(node_def) E(ops) E(tensor_alloc) E(runtime)
#define EV_ENUM(event) EV_##event,
enum { IMPORTED_EVENTS(EV_ENUM) EV_COUNT };
#define POS(event, group, name, kind, ctype, src, len, need) P_##event##_##name,
#define POS_ENUM(event) enum { FATHOM_SCHEMA_##event(POS, event) };
IMPORTED_EVENTS(POS_ENUM)

typedef fathom_schema_row row;
#define ROW FATHOM_SCHEMA_ROW
#define ROWS(event) static const row rows_##event[] = { FATHOM_SCHEMA_##event(ROW, _) };
IMPORTED_EVENTS(ROWS)
#define EV_ROWS(event) { "fathom:" #event, rows_##event, sizeof rows_##event / sizeof rows_##event[0] },
static const struct {
    const char *name;
    const row *rows;
    size_t n;
} ev_rows[EV_COUNT] = { IMPORTED_EVENTS(EV_ROWS) };

typedef struct imp_input {
    imp_trace *t;
    bt_trace_class *tc;
    bt_stream_class *sc;
    bt_event_class *ec[EV_COUNT];
} imp_input;

typedef struct imp_comp {
    size_t n;
    imp_input *in;
} imp_comp;

/* ---- the trace class ------------------------------------------------------ */

static bt_field_class *uint_fc(bt_trace_class *tc, unsigned bits)
{
    bt_field_class *fc = bt_field_class_integer_unsigned_create(tc);
    if (fc)
        bt_field_class_integer_set_field_value_range(fc, bits);
    return fc;
}

static bt_field_class *sint_fc(bt_trace_class *tc, unsigned bits)
{
    bt_field_class *fc = bt_field_class_integer_signed_create(tc);
    if (fc)
        bt_field_class_integer_set_field_value_range(fc, bits);
    return fc;
}

/* An unsigned enumeration of `bits` bits whose value i is labels(i). */
static bt_field_class *enum_fc(bt_trace_class *tc, unsigned bits, size_t n, const char *(*label)(const void *, size_t),
                               const void *ctx)
{
    bt_field_class *fc = bt_field_class_enumeration_unsigned_create(tc);
    if (!fc)
        return NULL;
    bt_field_class_integer_set_field_value_range(fc, bits);
    for (size_t i = 0; i < n; i++) {
        bt_integer_range_set_unsigned *rs = bt_integer_range_set_unsigned_create();
        int bad = !rs ||
                  bt_integer_range_set_unsigned_add_range(rs, i, i) != BT_INTEGER_RANGE_SET_ADD_RANGE_STATUS_OK ||
                  bt_field_class_enumeration_unsigned_add_mapping(fc, label(ctx, i), rs) !=
                      BT_FIELD_CLASS_ENUMERATION_ADD_MAPPING_STATUS_OK;
        bt_integer_range_set_unsigned_put_ref(rs);
        if (bad) {
            bt_field_class_put_ref(fc);
            return NULL;
        }
    }
    return fc;
}

static const char *label_of_array(const void *ctx, size_t i) { return ((const char *const *)ctx)[i]; }
static const char *label_of_names(const void *ctx, size_t i) { return imp_str(ctx, (uint32_t)i); }
static const char *label_of_class(const void *ctx, size_t i)
{
    (void)ctx;
    if (i >= ANALYZE_IMPORT_CLASS_COUNT) /* a device activity's class */
        return analyze_device_class_label((int)(i - ANALYZE_IMPORT_CLASS_COUNT));
    return analyze_import_class_name((analyze_import_class)i);
}

/* Append member `name` of class fc (consumed: the structure keeps it). */
static int member(bt_field_class *st, const char *name, bt_field_class *fc)
{
    if (!fc)
        return -1;
    int r = bt_field_class_structure_append_member(st, name, fc) == BT_FIELD_CLASS_STRUCTURE_APPEND_MEMBER_STATUS_OK
                ? 0
                : -1;
    bt_field_class_put_ref(fc);
    return r;
}

static bt_field_class *seq_fc(bt_trace_class *tc, bt_field_class *elem)
{
    if (!elem)
        return NULL;
    bt_field_class *fc = bt_field_class_array_dynamic_create(tc, elem, NULL);
    bt_field_class_put_ref(elem);
    return fc;
}

/* The event class `name` with payload `payload` (consumed). */
static bt_event_class *event_class(bt_stream_class *sc, const char *name, bt_field_class *payload, int ok)
{
    bt_event_class *ec = ok && payload ? bt_event_class_create(sc) : NULL;
    if (ec && (bt_event_class_set_name(ec, name) != BT_EVENT_CLASS_SET_NAME_STATUS_OK ||
               bt_event_class_set_payload_field_class(ec, payload) != BT_EVENT_CLASS_SET_FIELD_CLASS_STATUS_OK)) {
        bt_event_class_put_ref(ec);
        ec = NULL;
    }
    bt_field_class_put_ref(payload);
    return ec;
}

/* The field class of a row: an enumeration by its name, the imported
 * trace's own labels; NULL when out of memory or an enumeration unknown
 * here (the import then fails: a row this writer lacks). */
static bt_field_class *row_fc(imp_input *in, const row *r)
{
    static const char *const modes[] = { "train", "infer" };
    bt_trace_class *tc = in->tc;
    switch (r->kind) {
    case FATHOM_SCHEMA_KIND_SCHEMA:
    case FATHOM_SCHEMA_KIND_INT: return r->sign ? sint_fc(tc, r->bits) : uint_fc(tc, r->bits);
    case FATHOM_SCHEMA_KIND_FLOAT: return bt_field_class_real_double_precision_create(tc);
    case FATHOM_SCHEMA_KIND_STRING: return bt_field_class_string_create(tc);
    case FATHOM_SCHEMA_KIND_SEQ: return seq_fc(tc, r->sign ? sint_fc(tc, r->bits) : uint_fc(tc, r->bits));
    case FATHOM_SCHEMA_KIND_ENUM: break;
    }
    uint32_t nops = imp_strcount(in->t->names);
    if (strcmp(r->name, "mode") == 0)
        return enum_fc(tc, r->bits, 2, label_of_array, modes);
    if (strcmp(r->name, "op") == 0)
        return nops <= 65536 ? enum_fc(tc, r->bits, nops, label_of_names, in->t->names) : NULL;
    if (strcmp(r->name, "cls") == 0)
        return enum_fc(tc, r->bits, ANALYZE_IMPORT_CLASS_COUNT + ANALYZE_DEVICE_NCLASS, label_of_class, NULL);
    if (strcmp(r->name, "phase") == 0)
        return enum_fc(tc, r->bits, IMP_PHASE_COUNT, label_of_array, analyze_import_phase_names);
    if (strcmp(r->name, "role") == 0)
        return enum_fc(tc, r->bits, IMP_ROLE_COUNT, label_of_array, analyze_import_role_names);
    if (strcmp(r->name, "dtype") == 0)
        return enum_fc(tc, r->bits, IMP_DTYPE_COUNT, label_of_array, analyze_import_dtype_names);
    return NULL;
}

/* Whether the trace has the field of an `import` row (launches: a GPU
 * trace's launch links; calls, and the runtime event's rows: its runtime
 * calls). */
static int has_imported(const imp_input *in, const row *r)
{
    if (strcmp(r->name, "launches") == 0)
        return in->t->launch != NULL;
    return in->t->call != NULL;
}

/* Whether the trace has row r: not those of schema 3 (an import writes
 * schema 2: its spans, a GPU's among them, are long, and no run waits on
 * its bytes), those of `import` where the trace has them. */
static int has_row(const imp_input *in, const row *r) { return !r->packed && (!r->imported || has_imported(in, r)); }

/* Whether the trace holds event i: one of `import` rows alone (runtime)
 * only where it has them. */
static int has_event(const imp_input *in, int i)
{
    for (size_t k = 0; k < ev_rows[i].n; k++)
        if (has_row(in, &ev_rows[i].rows[k]))
            return 1;
    return 0;
}

static int build_classes(bt_self_component *self, imp_input *in)
{
    bt_trace_class *tc = in->tc = bt_trace_class_create(self);
    if (!tc || !(in->sc = bt_stream_class_create(tc)))
        return -1;
    bt_clock_class *cc = bt_clock_class_create(self);
    if (!cc)
        return -1;
    bt_clock_class_set_frequency(cc, UINT64_C(1000000000));
    bt_clock_class_set_origin_is_unix_epoch(cc, BT_TRUE);
    int bad = bt_clock_class_set_name(cc, "monotonic") != BT_CLOCK_CLASS_SET_NAME_STATUS_OK ||
              bt_stream_class_set_default_clock_class(in->sc, cc) != BT_STREAM_CLASS_SET_DEFAULT_CLOCK_CLASS_STATUS_OK;
    bt_clock_class_put_ref(cc);
    if (bad)
        return -1;
    bt_stream_class_set_supports_packets(in->sc, BT_TRUE, BT_FALSE, BT_FALSE);

    bt_field_class *ctx = bt_field_class_structure_create(tc);
    bad =
        !ctx || member(ctx, "vpid", sint_fc(tc, 64)) || member(ctx, "vtid", sint_fc(tc, 64)) ||
        member(ctx, "procname", bt_field_class_string_create(tc)) ||
        bt_stream_class_set_event_common_context_field_class(in->sc, ctx) != BT_STREAM_CLASS_SET_FIELD_CLASS_STATUS_OK;
    bt_field_class_put_ref(ctx);
    if (bad)
        return -1;

    for (int i = 0; i < EV_COUNT; i++) {
        if (!has_event(in, i))
            continue;
        bt_field_class *p = bt_field_class_structure_create(tc);
        int ok = p != NULL;
        for (size_t k = 0; ok && k < ev_rows[i].n; k++)
            if (has_row(in, &ev_rows[i].rows[k]))
                ok = !member(p, ev_rows[i].rows[k].name, row_fc(in, &ev_rows[i].rows[k]));
        in->ec[i] = event_class(in->sc, ev_rows[i].name, p, ok);
    }
    for (int i = 0; i < EV_COUNT; i++)
        if (!in->ec[i] && has_event(in, i))
            return -1;
    return 0;
}

/* ---- the component -------------------------------------------------------- */

static void comp_free(imp_comp *c)
{
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        for (int e = 0; e < EV_COUNT; e++)
            bt_event_class_put_ref(c->in[i].ec[e]);
        bt_stream_class_put_ref(c->in[i].sc);
        bt_trace_class_put_ref(c->in[i].tc);
        imp_trace_destroy(c->in[i].t);
    }
    base_free(c->in);
    base_free(c);
}

bt_component_class_initialize_method_status analyze_import_init(bt_self_component_source *self,
                                                                bt_self_component_source_configuration *config,
                                                                const bt_value *params, void *init_data)
{
    (void)config;
    bt_self_component *comp = bt_self_component_source_as_self_component(self);
    const bt_value *inputs =
        params && bt_value_is_map(params) ? bt_value_map_borrow_entry_value_const(params, "inputs") : NULL;
    const bt_value *model =
        params && bt_value_is_map(params) ? bt_value_map_borrow_entry_value_const(params, "model") : NULL;
    const bt_value *profile =
        params && bt_value_is_map(params) ? bt_value_map_borrow_entry_value_const(params, "profile") : NULL;
    analyze_import_summary *sum = init_data;
    imp_comp *c = NULL;
    if (!inputs || !bt_value_is_array(inputs) || bt_value_array_get_length(inputs) == 0) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "src.fathom.pytorch: wants inputs=[PATH...]");
        goto error;
    }
    if (model && !bt_value_is_string(model)) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "src.fathom.pytorch: model wants a string");
        goto error;
    }
    if (profile && !bt_value_is_string(profile)) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "src.fathom.pytorch: profile wants a path");
        goto error;
    }
    if (params) {
        uint64_t nkeys = bt_value_map_get_size(params) - (inputs != NULL) - (model != NULL) - (profile != NULL);
        if (nkeys) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(
                comp, "src.fathom.pytorch: unknown parameter (it takes inputs, model and profile)");
            goto error;
        }
    }
    uint64_t n = bt_value_array_get_length(inputs);
    if (!(c = base_calloc(1, sizeof *c)) || !(c->in = base_calloc(n, sizeof *c->in)))
        goto oom;
    for (uint64_t i = 0; i < n; i++) {
        const bt_value *v = bt_value_array_borrow_element_by_index_const(inputs, i);
        if (!bt_value_is_string(v)) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp,
                                                                "src.fathom.pytorch: inputs wants paths (strings)");
            goto error;
        }
        imp_input *in = &c->in[c->n++];
        in->t = imp_trace_read_linked(bt_value_string_get(v), model ? bt_value_string_get(model) : NULL,
                                      profile ? bt_value_string_get(profile) : NULL);
        if (!in->t) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "%s", base_errmsg());
            goto error;
        }
        char w[4096];
        if (imp_trace_warnings(in->t, w, sizeof w))
            for (char *save = NULL, *line = strtok_r(w, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
                fprintf(stderr, "src.fathom.pytorch: warning: %s\n", line);
        if (imp_strcount(in->t->names) > 65536) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(
                comp, "%s: %u distinct op names: more than the 65536 a trace can label", in->t->path,
                imp_strcount(in->t->names));
            goto error;
        }
        if (build_classes(comp, in))
            goto oom;
        char port[32];
        snprintf(port, sizeof port, "out%llu", (unsigned long long)i);
        if (bt_self_component_source_add_output_port(self, port, in, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK)
            goto oom;
        if (sum)
            sum[i] = in->t->sum;
    }
    bt_self_component_set_data(comp, c);
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
oom:
    comp_free(c);
    BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "src.fathom.pytorch: out of memory");
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
error:
    comp_free(c);
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
}

void analyze_import_finalize(bt_self_component_source *self)
{
    comp_free(bt_self_component_get_data(bt_self_component_source_as_self_component(self)));
}

/* ---- the message iterator --------------------------------------------------- */

enum {
    ST_STREAM_BEGIN,
    ST_PACKET_BEGIN,
    ST_RUN_BEGIN,
    ST_TENSORS,
    ST_NODES,
    ST_SEGMENTS,
    ST_CALLS,
    ST_RUN_END,
    ST_PACKET_END,
    ST_STREAM_END,
    ST_DONE
};

typedef struct imp_iter {
    imp_input *in;
    bt_self_message_iterator *self;
    bt_trace *trace;
    bt_stream *stream;
    bt_packet *packet;
    int state;
    size_t idx; /* tensor or node index */
    size_t seg; /* segment: 2k+1 step k, 2k the gap before it */
    int step_open;
    uint64_t last_ts;
    size_t *cur;    /* per track: its next record */
    uint32_t *key;  /* per track: the segment of its next record */
    uint32_t *heap; /* the tracks with records left, least (key, track) first */
    size_t nheap;
} imp_iter;

static int track_less(const imp_iter *it, uint32_t a, uint32_t b)
{
    return it->key[a] < it->key[b] || (it->key[a] == it->key[b] && a < b);
}

static void heap_down(imp_iter *it, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, min = i;
        if (l < it->nheap && track_less(it, it->heap[l], it->heap[min]))
            min = l;
        if (r < it->nheap && track_less(it, it->heap[r], it->heap[min]))
            min = r;
        if (min == i)
            return;
        uint32_t x = it->heap[i];
        it->heap[i] = it->heap[min], it->heap[min] = x;
        i = min;
    }
}

/* The heap of the tracks with records, each at its first. */
static int heap_init(imp_iter *it)
{
    const imp_trace *t = it->in->t;
    size_t nt = t->ntracks ? t->ntracks : 1;
    if (!(it->cur = base_malloc(nt * sizeof *it->cur)) || !(it->key = base_malloc(nt * sizeof *it->key)) ||
        !(it->heap = base_malloc(nt * sizeof *it->heap)))
        return -1;
    for (size_t k = 0; k < t->ntracks; k++) {
        it->cur[k] = t->track_at[k];
        if (t->track_at[k] == t->track_at[k + 1])
            continue;
        it->key[k] = imp_seg_of(t, t->recs[t->track_at[k]].b);
        it->heap[it->nheap++] = (uint32_t)k;
    }
    for (size_t i = it->nheap / 2; i-- > 0;)
        heap_down(it, i);
    return 0;
}

bt_message_iterator_class_initialize_method_status
analyze_import_iter_init(bt_self_message_iterator *self, bt_self_message_iterator_configuration *config,
                         bt_self_component_port_output *port)
{
    (void)config;
    imp_iter *it = base_calloc(1, sizeof *it);
    if (!it)
        return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    it->self = self;
    it->in = bt_self_component_port_get_data(bt_self_component_port_output_as_self_component_port(port));
    imp_trace *t = it->in->t;
    if (heap_init(it) || !(it->trace = bt_trace_create(it->in->tc)) || bt_trace_set_name(it->trace, t->sum.model) ||
        bt_trace_set_environment_entry_string(it->trace, "tracer_name", "fathom import") ||
        bt_trace_set_environment_entry_string(it->trace, "source", t->sum.format) ||
        !(it->stream = bt_stream_create(it->in->sc, it->trace)) || !(it->packet = bt_packet_create(it->stream))) {
        bt_packet_put_ref(it->packet);
        bt_stream_put_ref(it->stream);
        bt_trace_put_ref(it->trace);
        base_free(it->cur), base_free(it->key), base_free(it->heap);
        base_free(it);
        return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    bt_self_message_iterator_set_data(self, it);
    return BT_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

void analyze_import_iter_finalize(bt_self_message_iterator *self)
{
    imp_iter *it = bt_self_message_iterator_get_data(self);
    if (!it)
        return;
    bt_packet_put_ref(it->packet);
    bt_stream_put_ref(it->stream);
    bt_trace_put_ref(it->trace);
    base_free(it->cur), base_free(it->key), base_free(it->heap);
    base_free(it);
}

static bt_field *field(bt_field *st, uint64_t i) { return bt_field_structure_borrow_member_field_by_index(st, i); }
static void set_u(bt_field *st, uint64_t i, uint64_t v) { bt_field_integer_unsigned_set_value(field(st, i), v); }
static void set_s(bt_field *st, uint64_t i, int64_t v) { bt_field_integer_signed_set_value(field(st, i), v); }
static int set_str(bt_field *st, uint64_t i, const char *v)
{
    return bt_field_string_set_value(field(st, i), v) == BT_FIELD_STRING_SET_VALUE_STATUS_OK ? 0 : -1;
}

/* Sequence member i of n elements get(ctx, k). */
static int set_seq(bt_field *st, uint64_t i, size_t n, int sign, uint64_t (*get)(const void *, size_t), const void *ctx)
{
    bt_field *f = field(st, i);
    if (bt_field_array_dynamic_set_length(f, n) != BT_FIELD_DYNAMIC_ARRAY_SET_LENGTH_STATUS_OK)
        return -1;
    for (size_t k = 0; k < n; k++) {
        bt_field *e = bt_field_array_borrow_element_field_by_index(f, k);
        if (sign)
            bt_field_integer_signed_set_value(e, (int64_t)get(ctx, k));
        else
            bt_field_integer_unsigned_set_value(e, get(ctx, k));
    }
    return 0;
}

static uint64_t get_u32s(const void *ctx, size_t k) { return ((const uint32_t *)ctx)[k]; }
static uint64_t get_call_id(const void *ctx, size_t k) { return *(const size_t *)ctx + k + 1; }
static uint64_t get_call_kind(const void *ctx, size_t k) { return ((const imp_call *)ctx)[k].kind; }
static uint64_t get_call_b(const void *ctx, size_t k) { return ((const imp_call *)ctx)[k].b; }
static uint64_t get_call_e(const void *ctx, size_t k) { return ((const imp_call *)ctx)[k].e; }
static uint64_t get_i64s(const void *ctx, size_t k) { return (uint64_t)((const int64_t *)ctx)[k]; }
static uint64_t get_rec_node(const void *ctx, size_t k) { return ((const imp_rec *)ctx)[k].ref; }
static uint64_t get_rec_b(const void *ctx, size_t k) { return ((const imp_rec *)ctx)[k].b; }
static uint64_t get_rec_e(const void *ctx, size_t k) { return ((const imp_rec *)ctx)[k].e; }

/* A new event message of class ev at ts (kept monotonic) on track k; its
 * payload in *payload.  NULL: out of memory. */
static bt_message *event(imp_iter *it, int ev, uint64_t ts, size_t k, bt_field **payload)
{
    if (ts < it->last_ts)
        ts = it->last_ts;
    it->last_ts = ts;
    bt_message *m =
        bt_message_event_create_with_packet_and_default_clock_snapshot(it->self, it->in->ec[ev], it->packet, ts);
    if (!m)
        return NULL;
    bt_event *e = bt_message_event_borrow_event(m);
    bt_field *ctx = bt_event_borrow_common_context_field(e);
    const imp_track *tr = &it->in->t->tracks[k];
    set_s(ctx, 0, tr->vpid);
    set_s(ctx, 1, tr->vtid);
    if (set_str(ctx, 2, tr->procname)) {
        bt_message_put_ref(m);
        return NULL;
    }
    *payload = bt_event_borrow_payload_field(e);
    return m;
}

/* The phases of the stream below each give the next message, or NULL: out
 * of memory, or (with *again set) none in this state, which moved on. */

/* run_begin: what the trace says of its run. */
static bt_message *run_begin_msg(imp_iter *it)
{
    imp_trace *t = it->in->t;
    bt_field *p = NULL;
    size_t cpu = 0;
    for (size_t i = 0; i < t->ntracks; i++)
        cpu += !t->tracks[i].gpu;
    bt_message *m = event(it, EV_run_begin, t->t0, t->main_track, &p);
    if (!m)
        return NULL;
    set_u(p, P_run_begin_schema, SCHEMA);
    set_u(p, P_run_begin_mode, strcmp(t->sum.mode, "train") == 0 ? 0 : 1);
    set_u(p, P_run_begin_batch, 0);
    set_u(p, P_run_begin_steps, t->nsteps);
    set_u(p, P_run_begin_threads, cpu);
    set_u(p, P_run_begin_inter, 1);
    set_u(p, P_run_begin_seed, 0);
    /* cpu: the device the trace was recorded on, where it says */
    if (set_str(p, P_run_begin_model, t->sum.model) || set_str(p, P_run_begin_preset, "imported") ||
        set_str(p, P_run_begin_version, t->sum.format) || set_str(p, P_run_begin_blas, "") ||
        set_str(p, P_run_begin_cpu, t->sum.device)) {
        bt_message_put_ref(m);
        return NULL;
    }
    it->state = ST_TENSORS;
    it->idx = 0;
    return m;
}

/* One tensor_alloc a tensor. */
static bt_message *tensor_msg(imp_iter *it, int *again)
{
    imp_trace *t = it->in->t;
    if (it->idx == t->ntensors) {
        it->state = ST_NODES;
        it->idx = 0;
        *again = 1;
        return NULL;
    }
    const imp_tensor *x = &t->tensors[it->idx];
    bt_field *p = NULL;
    bt_message *m = event(it, EV_tensor_alloc, t->t0, t->main_track, &p);
    if (!m)
        return NULL;
    set_u(p, P_tensor_alloc_id, it->idx);
    set_u(p, P_tensor_alloc_role, x->role);
    set_u(p, P_tensor_alloc_dtype, x->dtype);
    set_u(p, P_tensor_alloc_bytes, x->bytes);
    if (set_seq(p, P_tensor_alloc_shape, x->ndim, 0, get_u32s, x->shape)) {
        bt_message_put_ref(m);
        return NULL;
    }
    it->idx++;
    return m;
}

/* One node_def a node. */
static bt_message *node_msg(imp_iter *it, int *again)
{
    imp_trace *t = it->in->t;
    if (it->idx == t->nnodes) {
        it->state = ST_SEGMENTS;
        it->idx = 0;
        it->seg = 0;
        *again = 1;
        return NULL;
    }
    const imp_node *n = &t->nodes[it->idx];
    const imp_proto *pr = &t->protos[n->proto];
    bt_field *p = NULL;
    bt_message *m = event(it, EV_node_def, t->t0, t->main_track, &p);
    if (!m)
        return NULL;
    set_u(p, P_node_def_graph, 0);
    set_u(p, P_node_def_node, it->idx);
    set_u(p, P_node_def_op, pr->name);
    set_u(p, P_node_def_cls, n->cls);
    set_u(p, P_node_def_phase, n->phase);
    set_u(p, P_node_def_flops, pr->flops);
    set_u(p, P_node_def_bytes, pr->bytes);
    if (set_seq(p, P_node_def_inputs, pr->nin, 0, get_u32s, pr->in) ||
        set_seq(p, P_node_def_outputs, pr->nout, 0, get_u32s, pr->out) ||
        set_seq(p, P_node_def_attrs, pr->nattrs, 1, get_i64s, pr->attrs)) {
        bt_message_put_ref(m);
        return NULL;
    }
    it->idx++;
    return m;
}

/* One ops event: up to OPS_BATCH records of the thread first in the
 * segment's heap, stamped at the segment's end. */
static bt_message *ops_msg(imp_iter *it, int in_step, const imp_step *st)
{
    imp_trace *t = it->in->t;
    uint32_t k = it->heap[0];
    size_t i = it->cur[k], end = t->track_at[k + 1], n = 1;
    while (n < OPS_BATCH && i + n < end && imp_seg_of(t, t->recs[i + n].b) == it->seg)
        n++;
    uint64_t ts = in_step ? st->e : it->seg ? t->steps[it->seg / 2 - 1].e : t->t0;
    bt_field *p = NULL;
    bt_message *m = event(it, EV_ops, ts, t->recs[i].track, &p);
    if (!m)
        return NULL;
    set_u(p, P_ops_graph, 0);
    if (set_seq(p, P_ops_nodes, n, 0, get_rec_node, &t->recs[i]) ||
        set_seq(p, P_ops_begins, n, 0, get_rec_b, &t->recs[i]) ||
        set_seq(p, P_ops_ends, n, 0, get_rec_e, &t->recs[i]) ||
        (t->launch && set_seq(p, P_ops_launches, n, 0, get_u32s, &t->launch[i])) ||
        (t->call && set_seq(p, P_ops_calls, n, 0, get_u32s, &t->call[i]))) {
        bt_message_put_ref(m);
        return NULL;
    }
    imp_spill_touch(&t->recspill, n * sizeof *t->recs + 4096);
    if (t->launch)
        imp_spill_touch(&t->launch_spill, n * sizeof *t->launch + 4096);
    if (t->call)
        imp_spill_touch(&t->call_spill, n * sizeof *t->call + 4096);
    if ((it->cur[k] += n) == end)
        it->heap[0] = it->heap[--it->nheap];
    else
        it->key[k] = imp_seg_of(t, t->recs[it->cur[k]].b);
    heap_down(it, 0);
    return m;
}

/* The segments in time order: before the first step, each step (its
 * step_begin, its ops, its step_end), between steps, after the last. */
static bt_message *segment_msg(imp_iter *it, int *again)
{
    imp_trace *t = it->in->t;
    if (it->seg > 2 * t->nsteps) {
        it->state = ST_CALLS;
        it->idx = 0;
        *again = 1;
        return NULL;
    }
    int in_step = it->seg % 2;
    const imp_step *st = in_step ? &t->steps[it->seg / 2] : NULL;
    bt_field *p = NULL;
    bt_message *m = NULL;
    if (in_step && !it->step_open) {
        it->step_open = 1;
        if ((m = event(it, EV_step_begin, st->b, t->main_track, &p)))
            set_u(p, P_step_begin_step, st->num);
        return m;
    }
    if (it->nheap && it->key[it->heap[0]] == it->seg)
        return ops_msg(it, in_step, st);
    it->seg++;
    if (!in_step) {
        *again = 1;
        return NULL;
    }
    it->step_open = 0;
    if ((m = event(it, EV_step_end, st->e, t->main_track, &p))) {
        set_u(p, P_step_end_step, st->num);
        bt_field_real_double_precision_set_value(field(p, P_step_end_loss), 0.0); /* no loss recorded */
    }
    return m;
}

/* The runtime calls, a thread's at a time, at the run's end. */
static bt_message *calls_msg(imp_iter *it, int *again)
{
    imp_trace *t = it->in->t;
    if (!t->call || it->idx >= t->ncalls) {
        it->state = ST_RUN_END;
        *again = 1;
        return NULL;
    }
    size_t i = it->idx, n = 1;
    while (n < OPS_BATCH && i + n < t->ncalls && t->calls[i + n].track == t->calls[i].track)
        n++;
    bt_field *p = NULL;
    bt_message *m = event(it, EV_runtime, t->t1, t->calls[i].track, &p);
    if (!m)
        return NULL;
    if (set_seq(p, P_runtime_calls, n, 0, get_call_id, &i) ||
        set_seq(p, P_runtime_kinds, n, 0, get_call_kind, &t->calls[i]) ||
        set_seq(p, P_runtime_begins, n, 0, get_call_b, &t->calls[i]) ||
        set_seq(p, P_runtime_ends, n, 0, get_call_e, &t->calls[i])) {
        bt_message_put_ref(m);
        return NULL;
    }
    imp_spill_touch(&t->calls_spill, n * sizeof *t->calls + 4096);
    it->idx += n;
    return m;
}

/* run_end: the ops the run ran. */
static bt_message *run_end_msg(imp_iter *it)
{
    imp_trace *t = it->in->t;
    bt_field *p = NULL;
    bt_message *m = event(it, EV_run_end, t->t1, t->main_track, &p);
    if (!m)
        return NULL;
    set_s(p, P_run_end_status, 0);
    set_u(p, P_run_end_ops, t->nrecs);
    it->state = ST_PACKET_END;
    return m;
}

/* The next message of the stream, or NULL (out of memory; or none left,
 * state ST_DONE). */
static bt_message *next_message(imp_iter *it)
{
    for (;;) {
        int again = 0;
        bt_message *m = NULL;
        switch (it->state) {
        case ST_STREAM_BEGIN:
            it->state = ST_PACKET_BEGIN;
            return bt_message_stream_beginning_create(it->self, it->stream);
        case ST_PACKET_BEGIN: it->state = ST_RUN_BEGIN; return bt_message_packet_beginning_create(it->self, it->packet);
        case ST_RUN_BEGIN: return run_begin_msg(it);
        case ST_TENSORS: m = tensor_msg(it, &again); break;
        case ST_NODES: m = node_msg(it, &again); break;
        case ST_SEGMENTS: m = segment_msg(it, &again); break;
        case ST_CALLS: m = calls_msg(it, &again); break;
        case ST_RUN_END: return run_end_msg(it);
        case ST_PACKET_END: it->state = ST_STREAM_END; return bt_message_packet_end_create(it->self, it->packet);
        case ST_STREAM_END: it->state = ST_DONE; return bt_message_stream_end_create(it->self, it->stream);
        default: return NULL;
        }
        if (m || !again)
            return m;
    }
}

bt_message_iterator_class_next_method_status analyze_import_iter_next(bt_self_message_iterator *self,
                                                                      bt_message_array_const msgs, uint64_t capacity,
                                                                      uint64_t *count)
{
    imp_iter *it = bt_self_message_iterator_get_data(self);
    uint64_t n = 0;
    while (n < capacity && it->state != ST_DONE) {
        bt_message *m = next_message(it);
        if (!m) {
            if (it->state == ST_DONE)
                break;
            for (uint64_t i = 0; i < n; i++)
                bt_message_put_ref(msgs[i]);
            return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_MEMORY_ERROR;
        }
        msgs[n++] = m;
    }
    *count = n;
    if (!n)
        return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_END;
    return BT_MESSAGE_ITERATOR_CLASS_NEXT_METHOD_STATUS_OK;
}

bt_component_class_source *analyze_import_source_class(void)
{
    bt_message_iterator_class *ic = bt_message_iterator_class_create(analyze_import_iter_next);
    bt_component_class_source *cc = NULL;
    if (!ic || bt_message_iterator_class_set_initialize_method(ic, analyze_import_iter_init) ||
        bt_message_iterator_class_set_finalize_method(ic, analyze_import_iter_finalize))
        goto end;
    cc = bt_component_class_source_create(ANALYZE_IMPORT_SOURCE_NAME, ic);
    if (cc &&
        (bt_component_class_source_set_initialize_method(cc, analyze_import_init) ||
         bt_component_class_source_set_finalize_method(cc, analyze_import_finalize) ||
         bt_component_class_set_description(bt_component_class_source_as_component_class(cc),
                                            ANALYZE_IMPORT_SOURCE_DESC) ||
         bt_component_class_set_help(bt_component_class_source_as_component_class(cc), ANALYZE_IMPORT_SOURCE_HELP))) {
        bt_component_class_source_put_ref(cc);
        cc = NULL;
    }
end:
    bt_message_iterator_class_put_ref(ic);
    return cc;
}
