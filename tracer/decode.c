/* decode.c -- schema 1, 2 and 3 events -> op records (see decode.h).
 *
 * Per event class: its kind, the payload member index and read type of
 * every slot, the common context's vpid/vtid, the stream's clock class.
 * Per trace: the nodes its node_defs described (open addressing on
 * (vpid, graph, node)), the schema-1 op_begins waiting for their op_end
 * (tracer/opmatch.h, with their descriptions in a pool of slots), and the
 * diagnostics. */
#include "tracer/decode.h"

#include "base/alloc.h"
#include "base/table.h"
#include "tracer/fields.h"
#include "tracer/opmatch.h"
#include "tracer/schema.def"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind {
    K_FOREIGN,
    K_UNKNOWN,
#define KIND(event, schema) K_##event,
    FATHOM_SCHEMA_EVENTS(KIND)
#undef KIND
};

/* A slot: a member name of the schema, read from whichever event has it. */
enum slot {
#define SLOT(name) F_##name,
    FATHOM_SCHEMA_NAMES(SLOT)
#undef SLOT
        NSLOT
};

static const char *const slot_name[NSLOT] = {
#define SLOT(name) #name,
    FATHOM_SCHEMA_NAMES(SLOT)
#undef SLOT
};

#define BIT(f) (1ull << (f))
_Static_assert(NSLOT <= 64, "the slots of an event make a 64-bit mask");
#define REQ_BIT_REQ(name) BIT(F_##name) |
#define REQ_BIT_OPT(name)
#define REQ_BIT(x, group, name, kind, ctype, src, len, need) REQ_BIT_##need(name)
#define SEQ_BIT_SEQ(name) BIT(F_##name) |
#define SEQ_BIT_SCHEMA(name)
#define SEQ_BIT_INT(name)
#define SEQ_BIT_FLOAT(name)
#define SEQ_BIT_STRING(name)
#define SEQ_BIT_ENUM(name)
#define SEQ_BIT(x, group, name, kind, ctype, src, len, need) SEQ_BIT_##kind(name)

/* Each event's required members (a row naming no slot does not compile). */
static const struct {
    const char *name;
    enum kind kind;
    uint64_t required;
} schema_events[] = {
#define EVENT(event, schema) { "fathom:" #event, K_##event, FATHOM_SCHEMA_##event(REQ_BIT, _) 0 },
    FATHOM_SCHEMA_EVENTS(EVENT)
#undef EVENT
};

/* Each event's rows of schema 3 alone (group `packed`): all or none. */
#define PACKED_BIT_packed(name) BIT(F_##name) |
#define PACKED_BIT_run(name)
#define PACKED_BIT_ev(name)
#define PACKED_BIT_import(name)
#define PACKED_BIT(x, group, name, kind, ctype, src, len, need) PACKED_BIT_##group(name)
static const uint64_t packed_slots[] = {
#define EVENT(event, schema) [K_##event] = FATHOM_SCHEMA_##event(PACKED_BIT, _) 0,
    FATHOM_SCHEMA_EVENTS(EVENT)
#undef EVENT
};

/* The sequences of every event: arrays, else the event is malformed. */
static const uint64_t array_slots =
#define EVENT(event, schema) FATHOM_SCHEMA_##event(SEQ_BIT, _)
    FATHOM_SCHEMA_EVENTS(EVENT)
#undef EVENT
        0;

/* How a member's value is read (its field class type, fixed per event class). */
enum ftype { FT_ABSENT, FT_UINT, FT_SINT, FT_BOOL, FT_FLOAT, FT_ARRAY, FT_OTHER };

typedef struct evinfo {
    const bt_event_class *ec;
    enum kind kind;
    int malformed;               /* a required member is missing */
    const bt_clock_class *clock; /* the stream class's default clock class, or NULL */
    int64_t idx[NSLOT];          /* payload member index, -1: absent */
    uint8_t ftype[NSLOT];
    int64_t vtid_idx, vpid_idx; /* common context member indices, -1: absent */
    uint8_t vtid_ftype, vpid_ftype;
    /* enum labels by value (borrowed from the field classes, which live as
     * long as the trace): no mapping lookup per event */
    const char *op_label[4096], *cls_label[256], *phase_label[256], *role_label[64], *dtype_label[64];
} evinfo;

/* An event class's evinfo, by the class's address. */
struct evslot {
    const bt_event_class *ec;
    evinfo *info;
};

/* A schema-1 op_begin waiting for its op_end. */
typedef struct s1slot {
    tracer_node node;
    char op[64], cls[40], phase[24];
    uint32_t *io; /* inputs then outputs */
    int64_t *attrs;
    uint32_t io_cap, attrs_cap;
    int next_free;
    int own; /* bits: op, cls, phase labels in the buffers above */
} s1slot;

/* A node described by a node_def. */
typedef struct dnode {
    uint64_t vpid;
    tracer_node node; /* labels and arrays owned */
} dnode;

typedef struct dtrace {
    const bt_trace *trace;
    void *user;
    tracer_decode_diag diag;
    dnode *nodes; /* open addressing; node.op == NULL: empty */
    size_t nodes_cap, nodes_len;
    tracer_opmatch pend; /* schema 1: a = the slot */
    s1slot *slots;
    int nslots, cap_slots, free_slot;
    struct dthread {
        uint64_t vpid, vtid;
        uint64_t last;     /* the time of the thread's last ops event (0: none yet) */
        uint64_t last_end; /* the end of its last record delivered */
    } * thr;
    size_t nthr, cap_thr;
    int imported; /* run_begin's version "pytorch-...": `fathom import` places an ops event at its segment's
                   * edge, not after its records, so on_ops bounds its records by nothing */
    int joined;   /* 1: read from its run_begin; 2: from a run_state (a late viewer) */
    struct dgraph {
        uint64_t vpid;
        uint32_t graph;
    } * synced; /* joined 2: the graphs whose graph_totals came (their records count from there) */
    size_t nsynced, cap_synced;
} dtrace;

struct tracer_decoder {
    tracer_decode_cbs cb;
    void *ctx;
    base_table ev; /* of struct evslot: the event classes seen */
    evinfo *last;
    dtrace *tr;
    size_t ntr;
    dtrace *last_tr;
    int oom;
    /* scratch for the ops event's sequences */
    uint32_t *nodes;
    uint64_t *begins, *ends, *launches, *calls;
    size_t scratch_cap;
    uint32_t *io;
    int64_t *attrs;
    size_t io_cap, attrs_cap;
};

tracer_decoder *tracer_decoder_create(const tracer_decode_cbs *cbs, void *ctx)
{
    tracer_decoder *d = base_calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->cb = *cbs;
    d->ctx = ctx;
    d->ev = BASE_TABLE(struct evslot, sizeof(const bt_event_class *));
    return d;
}

static void node_free(tracer_node *n)
{
    base_free((void *)n->op);
    base_free((void *)n->cls);
    base_free((void *)n->phase);
    base_free((void *)n->inputs);
    base_free((void *)n->attrs);
    memset(n, 0, sizeof *n);
}

void tracer_decoder_destroy(tracer_decoder *d)
{
    if (!d)
        return;
    size_t pos = 0;
    for (struct evslot *e; (e = base_table_next(&d->ev, &pos));)
        base_free(e->info);
    base_table_free(&d->ev);
    for (size_t t = 0; t < d->ntr; t++) {
        dtrace *tr = &d->tr[t];
        for (size_t i = 0; i < tr->nodes_cap; i++)
            if (tr->nodes[i].node.op)
                node_free(&tr->nodes[i].node);
        base_free(tr->nodes);
        tracer_opmatch_clear(&tr->pend);
        for (int i = 0; i < tr->nslots; i++) {
            base_free(tr->slots[i].io);
            base_free(tr->slots[i].attrs);
        }
        base_free(tr->slots);
        base_free(tr->thr);
        base_free(tr->synced);
    }
    base_free(d->tr);
    base_free(d->nodes);
    base_free(d->begins);
    base_free(d->ends);
    base_free(d->launches);
    base_free(d->calls);
    base_free(d->io);
    base_free(d->attrs);
    base_free(d);
}

static _Thread_local uint64_t cur_ts, cur_vpid, cur_vtid; /* the event being decoded */

void tracer_decode_current(uint64_t *ts, uint64_t *vpid, uint64_t *vtid)
{
    *ts = cur_ts;
    *vpid = cur_vpid;
    *vtid = cur_vtid;
}

void tracer_decode_set_current(uint64_t ts, uint64_t vpid, uint64_t vtid)
{
    cur_ts = ts;
    cur_vpid = vpid;
    cur_vtid = vtid;
}

const char *tracer_decoder_error(const tracer_decoder *d) { return d && d->oom ? "out of memory" : ""; }

static int oom(tracer_decoder *d)
{
    d->oom = 1;
    return -1;
}

/* ---- event classes ------------------------------------------------------ */
static int64_t member_index(const bt_field_class *fc, const char *name)
{
    if (!fc || bt_field_class_get_type(fc) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return -1;
    uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n; i++) {
        const char *m =
            bt_field_class_structure_member_get_name(bt_field_class_structure_borrow_member_by_index_const(fc, i));
        /* CTF readers strip one leading underscore; accept both */
        if (strcmp(m, name) == 0 || (m[0] == '_' && strcmp(m + 1, name) == 0))
            return (int64_t)i;
    }
    return -1;
}

static enum ftype member_ftype(const bt_field_class *fc, int64_t idx)
{
    if (idx < 0)
        return FT_ABSENT;
    const bt_field_class *m = bt_field_class_structure_member_borrow_field_class_const(
        bt_field_class_structure_borrow_member_by_index_const(fc, (uint64_t)idx));
    bt_field_class_type t = bt_field_class_get_type(m);
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return FT_UINT;
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return FT_SINT;
    if (t == BT_FIELD_CLASS_TYPE_BOOL)
        return FT_BOOL;
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_REAL))
        return FT_FLOAT;
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_ARRAY))
        return FT_ARRAY;
    return FT_OTHER;
}

static evinfo *evinfo_make(const bt_event_class *ec)
{
    evinfo *e = base_calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->ec = ec;
    const char *name = bt_event_class_get_name(ec);
    e->kind = K_FOREIGN;
    if (name && strncmp(name, "fathom:", 7) == 0) {
        e->kind = K_UNKNOWN;
        for (size_t i = 0; i < sizeof schema_events / sizeof *schema_events; i++) {
            if (strcmp(name, schema_events[i].name) != 0)
                continue;
            e->kind = schema_events[i].kind;
            const bt_field_class *pfc = bt_event_class_borrow_payload_field_class_const(ec);
            for (int f = 0; f < NSLOT; f++) {
                e->idx[f] = member_index(pfc, slot_name[f]);
                e->ftype[f] = (uint8_t)member_ftype(pfc, e->idx[f]);
                if ((schema_events[i].required >> f & 1) && e->idx[f] < 0)
                    e->malformed = 1;
                if ((array_slots >> f & 1) && e->idx[f] >= 0 && e->ftype[f] != FT_ARRAY)
                    e->malformed = 1;
            }
            uint64_t packed = 0; /* the packed rows it has: all or none */
            for (int f = 0; f < NSLOT; f++)
                if ((packed_slots[e->kind] >> f & 1) && e->idx[f] >= 0)
                    packed |= BIT(f);
            if (packed && packed != packed_slots[e->kind])
                e->malformed = 1;
        }
    }
    const bt_stream_class *sc = bt_event_class_borrow_stream_class_const(ec);
    const bt_field_class *cfc = bt_stream_class_borrow_event_common_context_field_class_const(sc);
    e->vtid_idx = member_index(cfc, "vtid");
    e->vtid_ftype = (uint8_t)member_ftype(cfc, e->vtid_idx);
    e->vpid_idx = member_index(cfc, "vpid");
    e->vpid_ftype = (uint8_t)member_ftype(cfc, e->vpid_idx);
    e->clock = bt_stream_class_borrow_default_clock_class_const(sc);
    return e;
}

static evinfo *evinfo_get(tracer_decoder *d, const bt_event_class *ec)
{
    if (d->last && d->last->ec == ec)
        return d->last;
    struct evslot *s;
    switch (base_table_put(&d->ev, &ec, (void **)&s)) {
    case BASE_TABLE_FOUND: return d->last = s->info;
    case BASE_TABLE_ADDED:
        if (!(s->info = evinfo_make(ec))) {
            base_table_del(&d->ev, s);
            return NULL;
        }
        return d->last = s->info;
    default: return NULL;
    }
}

/* ---- field access ------------------------------------------------------------ */
static inline const bt_field *member(const bt_field *pl, const evinfo *e, enum slot f)
{
    return e->idx[f] < 0 ? NULL : bt_field_structure_borrow_member_field_by_index_const(pl, (uint64_t)e->idx[f]);
}

static inline int read_u64(const bt_field *st, int64_t idx, enum ftype t, uint64_t *out)
{
    if (t != FT_UINT && t != FT_SINT && t != FT_BOOL)
        return -1;
    const bt_field *f = bt_field_structure_borrow_member_field_by_index_const(st, (uint64_t)idx);
    if (t == FT_UINT)
        *out = bt_field_integer_unsigned_get_value(f);
    else if (t == FT_SINT)
        *out = (uint64_t)bt_field_integer_signed_get_value(f);
    else
        *out = bt_field_bool_get_value(f);
    return 0;
}

static inline int slot_u64(const bt_field *pl, const evinfo *e, enum slot f, uint64_t *out)
{
    return read_u64(pl, e->idx[f], (enum ftype)e->ftype[f], out);
}

static inline uint64_t slot_u64_or(const bt_field *pl, const evinfo *e, enum slot f, uint64_t dflt)
{
    uint64_t v;
    return slot_u64(pl, e, f, &v) == 0 ? v : dflt;
}

static int64_t slot_value(const bt_field *pl, const evinfo *e, enum slot f)
{
    uint64_t v;
    return slot_u64(pl, e, f, &v) == 0 ? (int64_t)v : -1;
}

/* The array of slot f: its length (-1: absent or not an array). */
static int64_t array_len(const bt_field *pl, const evinfo *e, enum slot f, const bt_field **arr)
{
    if (e->ftype[f] != FT_ARRAY) {
        *arr = NULL;
        return -1;
    }
    *arr = member(pl, e, f);
    return (int64_t)bt_field_array_get_length(*arr);
}

/* Reads an integer array's elements into out (n of them); -1 if an element
 * is not an integer. */
static int array_u32(const bt_field *arr, uint64_t n, uint32_t *out)
{
    for (uint64_t i = 0; i < n; i++) {
        uint64_t v;
        if (tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(arr, i), &v))
            return -1;
        out[i] = (uint32_t)v;
    }
    return 0;
}

static int array_u64(const bt_field *arr, uint64_t n, uint64_t *out)
{
    for (uint64_t i = 0; i < n; i++)
        if (tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(arr, i), &out[i]))
            return -1;
    return 0;
}

/* ---- traces ---------------------------------------------------------------- */
static dtrace *trace_of(tracer_decoder *d, const bt_trace *trace)
{
    if (d->last_tr && d->last_tr->trace == trace)
        return d->last_tr;
    for (size_t i = 0; i < d->ntr; i++)
        if (d->tr[i].trace == trace)
            return d->last_tr = &d->tr[i];
    dtrace *v = base_realloc(d->tr, (d->ntr + 1) * sizeof *v);
    if (!v)
        return NULL;
    d->tr = v;
    dtrace *t = &v[d->ntr];
    memset(t, 0, sizeof *t);
    t->trace = trace;
    t->free_slot = -1;
    t->user = d->cb.trace_begin ? d->cb.trace_begin(d->ctx, trace) : d->ctx;
    if (!t->user)
        return NULL;
    d->ntr++;
    return d->last_tr = t;
}

void tracer_decode_diag_add(tracer_decode_diag *out, const tracer_decode_diag *g)
{
    out->events += g->events;
    out->foreign_events += g->foreign_events;
    out->unknown_events += g->unknown_events;
    out->malformed_events += g->malformed_events;
    out->discarded_events += g->discarded_events;
    out->discarded_packets += g->discarded_packets;
    out->discarded_unknown += g->discarded_unknown;
    out->unmatched_begin += g->unmatched_begin;
    out->unmatched_end += g->unmatched_end;
    out->duplicate_begin += g->duplicate_begin;
    out->undefined_nodes += g->undefined_nodes;
    out->redefined_nodes += g->redefined_nodes;
    out->negative_time += g->negative_time;
    out->records += g->records;
    out->run_end_ops += g->run_end_ops;
    out->run_ends += g->run_ends;
    if (!out->schema)
        out->schema = g->schema;
    if (!out->bad_schema)
        out->bad_schema = g->bad_schema;
}

void tracer_decoder_diag_sum(const tracer_decoder *d, const void *user, tracer_decode_diag *out)
{
    for (size_t i = 0; i < d->ntr; i++)
        if (!user || d->tr[i].user == user)
            tracer_decode_diag_add(out, &d->tr[i].diag);
}

/* ---- nodes (schema 2) --------------------------------------------------------- */
/* Open addressing of its own, not base/table.h: one lookup an op record,
 * where the table (its generic key hashed and compared word by word) took
 * 9% more CPU time for `fathom analyze breakdown` of a schema-2 trace of
 * 2.4 million ops (2.35 s against 2.16 s user, six alternating runs). */
static size_t node_hash(uint64_t vpid, uint32_t graph, uint32_t node)
{
    uint64_t x = vpid * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)graph << 32 | node);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static dnode *node_find(const dtrace *t, uint64_t vpid, uint32_t graph, uint32_t node)
{
    if (!t->nodes_cap)
        return NULL;
    size_t mask = t->nodes_cap - 1;
    for (size_t h = node_hash(vpid, graph, node) & mask; t->nodes[h].node.op; h = (h + 1) & mask)
        if (t->nodes[h].vpid == vpid && t->nodes[h].node.graph == graph && t->nodes[h].node.node == node)
            return &t->nodes[h];
    return NULL;
}

static dnode *node_insert(dtrace *t, uint64_t vpid, uint32_t graph, uint32_t node)
{
    if ((t->nodes_len + 1) * 2 > t->nodes_cap) {
        size_t cap = t->nodes_cap ? t->nodes_cap * 2 : 256;
        dnode *v = base_calloc(cap, sizeof *v);
        if (!v)
            return NULL;
        for (size_t i = 0; i < t->nodes_cap; i++) {
            if (!t->nodes[i].node.op)
                continue;
            size_t h = node_hash(t->nodes[i].vpid, t->nodes[i].node.graph, t->nodes[i].node.node) & (cap - 1);
            while (v[h].node.op)
                h = (h + 1) & (cap - 1);
            v[h] = t->nodes[i];
        }
        base_free(t->nodes);
        t->nodes = v;
        t->nodes_cap = cap;
    }
    size_t h = node_hash(vpid, graph, node) & (t->nodes_cap - 1);
    while (t->nodes[h].node.op)
        h = (h + 1) & (t->nodes_cap - 1);
    t->nodes_len++;
    t->nodes[h].vpid = vpid;
    return &t->nodes[h];
}

static char *dup_label(const char *s)
{
    size_t n = strlen(s) + 1;
    char *c = base_malloc(n);
    if (c)
        memcpy(c, s, n);
    return c;
}

/* The label of enum slot f by its value, cached per event class; a label
 * made from the value ("#12", in buf) is not cached. */
static const char *label_of(const bt_field *pl, evinfo *e, enum slot f, const char **cache, size_t ncache, char *buf,
                            size_t len)
{
    uint64_t v;
    if (slot_u64(pl, e, f, &v) == 0 && v < ncache) {
        if (cache[v])
            return cache[v];
        const char *l = tracer_field_label(member(pl, e, f), buf, len);
        if (l && l != buf)
            cache[v] = l;
        return l;
    }
    return tracer_field_label(member(pl, e, f), buf, len);
}

/* Reads the node description common to node_def and op_begin: op, cls,
 * phase labels into the given buffers, data flow into the decoder's scratch.
 * 0, 1 when malformed, -1 on out of memory. */
static int read_desc(tracer_decoder *d, const bt_field *pl, evinfo *e, tracer_node *n, char *ob, size_t ol, char *cb,
                     size_t cl, char *pb, size_t pll)
{
    memset(n, 0, sizeof *n);
    n->graph = (uint32_t)slot_u64_or(pl, e, F_graph, 0);
    n->node = (uint32_t)slot_u64_or(pl, e, F_node, 0);
    n->op = label_of(pl, e, F_op, e->op_label, 4096, ob, ol);
    if (!n->op)
        return 1;
    n->cls = label_of(pl, e, F_cls, e->cls_label, 256, cb, cl);
    n->phase = label_of(pl, e, F_phase, e->phase_label, 256, pb, pll);
    n->op_value = slot_value(pl, e, F_op);
    n->cls_value = slot_value(pl, e, F_cls);
    n->phase_value = slot_value(pl, e, F_phase);
    n->flops = slot_u64_or(pl, e, F_flops, 0);
    n->bytes = slot_u64_or(pl, e, F_bytes, 0);
    if (d->cb.no_dataflow)
        return 0;
    const bt_field *ai, *ao, *aa;
    int64_t ni = array_len(pl, e, F_inputs, &ai), no = array_len(pl, e, F_outputs, &ao),
            na = array_len(pl, e, F_attrs, &aa);
    ni = ni < 0 ? 0 : ni;
    no = no < 0 ? 0 : no;
    na = na < 0 ? 0 : na;
    if (ni + no > UINT32_MAX / 2 || na > UINT32_MAX / 2)
        return 1;
    if (base_grow(&d->io, &d->io_cap, (size_t)(ni + no + 1), sizeof *d->io) ||
        base_grow(&d->attrs, &d->attrs_cap, (size_t)na + 1, sizeof *d->attrs))
        return -1;
    if ((ni && array_u32(ai, (uint64_t)ni, d->io)) || (no && array_u32(ao, (uint64_t)no, d->io + ni)))
        return 1;
    for (int64_t i = 0; i < na; i++) {
        uint64_t v;
        if (tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(aa, (uint64_t)i), &v))
            return 1;
        d->attrs[i] = (int64_t)v;
    }
    n->nin = (uint32_t)ni;
    n->nout = (uint32_t)no;
    n->nattrs = (uint32_t)na;
    n->inputs = d->io;
    n->outputs = d->io + ni;
    n->attrs = d->attrs;
    return 0;
}

static int same_node(const tracer_node *a, const tracer_node *b)
{
    return !strcmp(a->op, b->op) && a->nin == b->nin && a->nout == b->nout && a->nattrs == b->nattrs &&
           (!(a->nin + a->nout) || !memcmp(a->inputs, b->inputs, (a->nin + a->nout) * sizeof *a->inputs)) &&
           (!a->nattrs || !memcmp(a->attrs, b->attrs, a->nattrs * sizeof *a->attrs));
}

static int on_node_def(tracer_decoder *d, dtrace *t, const bt_field *pl, evinfo *e, uint64_t vpid, uint64_t ts)
{
    char ob[40], cb[40], pb[40];
    tracer_node n;
    int r = read_desc(d, pl, e, &n, ob, sizeof ob, cb, sizeof cb, pb, sizeof pb);
    if (r < 0)
        return oom(d);
    if (r > 0) {
        t->diag.malformed_events++;
        return 0;
    }
    dnode *old = node_find(t, vpid, n.graph, n.node);
    if (old) {
        if (!same_node(&old->node, &n))
            t->diag.redefined_nodes++;
        node_free(&old->node); /* the latest description holds */
    } else if (!(old = node_insert(t, vpid, n.graph, n.node))) {
        return oom(d);
    }
    tracer_node *c = &old->node;
    *c = n;
    uint32_t *io = base_malloc((n.nin + n.nout + 1) * sizeof *io);
    int64_t *at = base_malloc((n.nattrs + 1) * sizeof *at);
    c->op = dup_label(n.op);
    c->cls = n.cls ? dup_label(n.cls) : NULL;
    c->phase = n.phase ? dup_label(n.phase) : NULL;
    c->inputs = io;
    c->attrs = at;
    if (!io || !at || !c->op || (n.cls && !c->cls) || (n.phase && !c->phase)) {
        base_free(io);
        base_free(at);
        base_free((void *)c->op);
        base_free((void *)c->cls);
        base_free((void *)c->phase);
        memset(c, 0, sizeof *c);
        t->nodes_len--; /* an empty slot again (op == NULL); probe chains stay valid: never removed */
        return oom(d);
    }
    if (n.nin + n.nout)
        memcpy(io, n.inputs, (n.nin + n.nout) * sizeof *io);
    if (n.nattrs)
        memcpy(at, n.attrs, n.nattrs * sizeof *at);
    c->outputs = io + n.nin;
    return d->cb.node_def ? d->cb.node_def(t->user, c, ts) : 0;
}

static uint64_t to_ns(const evinfo *e, uint64_t cycles)
{
    int64_t ns;
    if (e->clock && bt_clock_class_cycles_to_ns_from_origin(e->clock, cycles, &ns) ==
                        BT_CLOCK_CLASS_CYCLES_TO_NS_FROM_ORIGIN_STATUS_OK)
        return (uint64_t)ns;
    return cycles;
}

static int deliver(tracer_decoder *d, dtrace *t, tracer_op *op)
{
    if (op->end < op->begin)
        t->diag.negative_time++;
    t->diag.records++;
    return d->cb.op ? d->cb.op(t->user, op) : 0;
}

/* A late viewer's graph whose graph_totals came. */
static int graph_synced(const dtrace *t, uint64_t vpid, uint32_t graph)
{
    for (size_t i = 0; i < t->nsynced; i++)
        if (t->synced[i].graph == graph && t->synced[i].vpid == vpid)
            return 1;
    return 0;
}

/* Thread (vpid, vtid)'s bounds, NULL past 4096 threads or out of memory
 * (then nothing bounds its records). */
static struct dthread *thread_of(dtrace *t, uint64_t vpid, uint64_t vtid)
{
    for (size_t i = t->nthr; i-- > 0;) /* the latest first: a step's few threads */
        if (t->thr[i].vtid == vtid && t->thr[i].vpid == vpid)
            return &t->thr[i];
    if (t->nthr == 4096)
        return NULL;
    if (t->nthr == t->cap_thr) {
        size_t cap = t->cap_thr ? 2 * t->cap_thr : 16;
        struct dthread *v = base_realloc(t->thr, cap * sizeof *v);
        if (!v)
            return NULL;
        t->thr = v, t->cap_thr = cap;
    }
    t->thr[t->nthr] = (struct dthread){ vpid, vtid, 0, 0 };
    return &t->thr[t->nthr++];
}

/* The lengths of an ops event's sequences agree: nodes, begins and ends
 * (schema 2, or a schema-3 event of exact records, its gaps and durations
 * empty), or nodes, gaps and durations (schema 3 packed, its begins and
 * ends empty); launches and calls, where present, as nodes.
 * Returns the records' count, -1 where they disagree; *packed 1 for the
 * packed form. */
static int64_t ops_lengths(const bt_field *pl, const evinfo *e, const bt_field **a, int *packed)
{
    static const enum slot f[] = { F_nodes, F_begins, F_ends, F_gaps, F_durations, F_launches, F_calls };
    enum { ABSENT = -2 }; /* launches, calls: an older archive's, fathom's recordings' */
    int64_t n[7];
    for (int k = 0; k < 7; k++) { /* absent: nodes, begins, ends malformed; gaps, durations empty (schema 2) */
        a[k] = NULL;
        n[k] = e->ftype[f[k]] == FT_ARRAY ? array_len(pl, e, f[k], &a[k]) : k < 3 ? -1 : k < 5 ? 0 : ABSENT;
    }
    const int64_t nn = n[0];
    *packed = n[3] > 0 || n[4] > 0;
    const int64_t want_b = *packed ? 0 : nn, want_o = *packed ? nn : 0;
    if (nn < 0 || n[1] != want_b || n[2] != want_b || n[3] != want_o || n[4] != want_o ||
        (n[5] != ABSENT && n[5] != nn) || (n[6] != ABSENT && n[6] != nn))
        return -1;
    return nn;
}

/* The ops event's scratch for nn records. */
static int ops_scratch(tracer_decoder *d, int64_t nn, int launches, int calls)
{
    if (base_grow(&d->nodes, &d->scratch_cap, (size_t)nn + 1, sizeof *d->nodes))
        return -1;
    size_t cap = d->scratch_cap;
    uint64_t **v[] = { &d->begins, &d->ends, launches ? &d->launches : NULL, calls ? &d->calls : NULL };
    for (int k = 0; k < 4; k++) {
        if (!v[k])
            continue; /* fathom's own recordings have no launches nor calls */
        uint64_t *p = base_realloc(*v[k], cap * sizeof *p);
        if (!p)
            return -1;
        *v[k] = p;
    }
    return 0;
}

/* One ops event's records (docs/design.md, "The trace"): a thread emits them after
 * they ran and empties its buffer, so each begins after the thread's last
 * ops event, no later than it ends, and ends no later than the event that
 * carries it (ts; not in an imported trace). In schema 3 a buffer may go
 * out as several events (tracer/opspack.h), whose records begin before the
 * events of the same buffer before them: there each begins no earlier
 * than the thread's last record ended (a thread's records never overlap).
 * A record outside that, which a flipped bit in a stream makes (a Reshape
 * of 16,579,204,606 s in a 1.7 ms step), is an impossible time: counted
 * with the ends before begins, and delivered as 0 ns at its time that is
 * possible (else the event's), so that no sum takes it in. A packed record
 * whose begin or end passes 2^64 ns is one too, as is every packed record
 * after it in its event (their times follow from it). */
static int on_ops(tracer_decoder *d, dtrace *t, const bt_field *pl, const evinfo *e, uint64_t vpid, uint64_t vtid,
                  uint64_t ts)
{
    const bt_field *a[7]; /* nodes, begins, ends, gaps, durations, launches, calls */
    int packed;
    const int64_t nn = ops_lengths(pl, e, a, &packed);
    uint64_t base = 0;
    if (nn < 0 || (packed && slot_u64(pl, e, F_base, &base))) {
        t->diag.malformed_events++;
        return 0;
    }
    uint32_t graph = (uint32_t)slot_u64_or(pl, e, F_graph, 0);
    if (t->joined == 2 && !graph_synced(t, vpid, graph))
        return 0; /* a late viewer: these records are in the graph's totals to come */
    const bt_field *al = a[5], *ac = a[6];
    if (ops_scratch(d, nn, al != NULL, ac != NULL))
        return oom(d);
    /* packed: gaps read where the begins go, durations where the ends go */
    if (array_u32(a[0], (uint64_t)nn, d->nodes) || array_u64(a[packed ? 3 : 1], (uint64_t)nn, d->begins) ||
        array_u64(a[packed ? 4 : 2], (uint64_t)nn, d->ends) || (al && array_u64(al, (uint64_t)nn, d->launches)) ||
        (ac && array_u64(ac, (uint64_t)nn, d->calls))) {
        t->diag.malformed_events++;
        return 0;
    }
    const int bounded = e->clock && !t->imported; /* without a clock: no event time to bound them */
    struct dthread *prev = bounded ? thread_of(t, vpid, vtid) : NULL;
    const int split = e->idx[F_gaps] >= 0; /* schema 3's event class */
    const uint64_t lo = !prev ? 0 : split ? prev->last_end : prev->last, hi = bounded ? ts : UINT64_MAX;
    const dnode *last = NULL;
    uint64_t at = base; /* packed: the end of the record before */
    int wrapped = 0;    /* packed: a begin or end passed 2^64 ns, and with it every later one */
    for (int64_t i = 0; i < nn; i++) {
        uint64_t b = d->begins[i], en = d->ends[i];
        if (packed) { /* before the node's look-up: an undefined node's record still moves the time on */
            b = at + d->begins[i], en = b + d->ends[i];
            wrapped |= b < at || en < b;
            at = en;
        }
        const dnode *dn = last && last->node.node == d->nodes[i] ? last : node_find(t, vpid, graph, d->nodes[i]);
        if (!dn) {
            t->diag.undefined_nodes++;
            continue;
        }
        last = dn;
        tracer_op op = {
            .node = &dn->node,
            .begin = to_ns(e, b),
            .end = to_ns(e, en),
            .vpid = vpid,
            .vtid = vtid,
            .launch = al ? d->launches[i] : 0,
            .call = ac ? d->calls[i] : 0,
        };
        if (wrapped || op.begin < lo || op.end > hi || op.begin > op.end) {
            t->diag.negative_time++;
            op.begin = op.end = !wrapped && op.begin >= lo && op.begin <= hi ? op.begin
                                : !wrapped && op.end >= lo && op.end <= hi   ? op.end
                                                                             : hi;
        }
        if (prev)
            prev->last_end = op.end;
        if (deliver(d, t, &op))
            return -1;
    }
    if (prev)
        prev->last = ts;
    return 0;
}

/* One runtime event's calls (an imported GPU trace's, fathom-trace(5)):
 * each delivered as it is; one ending before it begins ends at its begin,
 * counted with the other impossible times. */
static int on_runtime(tracer_decoder *d, dtrace *t, const bt_field *pl, const evinfo *e, uint64_t vpid, uint64_t vtid)
{
    const bt_field *ai, *ak, *ab, *ae;
    int64_t n = array_len(pl, e, F_calls, &ai);
    if (n < 0 || array_len(pl, e, F_kinds, &ak) != n || array_len(pl, e, F_begins, &ab) != n ||
        array_len(pl, e, F_ends, &ae) != n) {
        t->diag.malformed_events++;
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        uint64_t id, kind, b, en;
        if (tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(ai, (uint64_t)i), &id) ||
            tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(ak, (uint64_t)i), &kind) ||
            tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(ab, (uint64_t)i), &b) ||
            tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(ae, (uint64_t)i), &en)) {
            t->diag.malformed_events++;
            return 0;
        }
        tracer_call c = { .begin = to_ns(e, b), .end = to_ns(e, en), .vpid = vpid, .vtid = vtid };
        c.id = (uint32_t)id;
        c.kind = kind < TRACER_CALL_NKIND ? (uint32_t)kind : TRACER_CALL_OTHER;
        if (c.end < c.begin) {
            t->diag.negative_time++;
            c.end = c.begin;
        }
        if (d->cb.call && d->cb.call(t->user, &c))
            return -1;
    }
    return 0;
}

/* ---- schema 1: op_begin / op_end ------------------------------------------------ */
static int slot_take(dtrace *t)
{
    if (t->free_slot >= 0) {
        int s = t->free_slot;
        t->free_slot = t->slots[s].next_free;
        return s;
    }
    if (t->nslots == t->cap_slots) { /* geometric: as many slots as ops in flight */
        int cap = t->cap_slots ? t->cap_slots * 2 : 64;
        s1slot *v = base_realloc(t->slots, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        t->slots = v;
        t->cap_slots = cap;
    }
    memset(&t->slots[t->nslots], 0, sizeof *t->slots);
    return t->nslots++;
}

static void slot_give(dtrace *t, int s)
{
    t->slots[s].next_free = t->free_slot;
    t->free_slot = s;
}

static int on_op_begin(tracer_decoder *d, dtrace *t, const bt_field *pl, evinfo *e, uint64_t ts, uint64_t vtid)
{
    uint64_t seq;
    if (slot_u64(pl, e, F_seq, &seq) != 0) {
        t->diag.malformed_events++;
        return 0;
    }
    int s = slot_take(t);
    if (s < 0)
        return oom(d);
    s1slot *sl = &t->slots[s];
    tracer_node n;
    int r = read_desc(d, pl, e, &n, sl->op, sizeof sl->op, sl->cls, sizeof sl->cls, sl->phase, sizeof sl->phase);
    if (r) {
        slot_give(t, s);
        if (r < 0)
            return oom(d);
        t->diag.malformed_events++;
        return 0;
    }
    /* labels made from values live in the slot's buffers (re-pointed at the
     * op_end: the slots may move); enum labels are the field class's */
    sl->own = (n.op == sl->op) | (n.cls == sl->cls) << 1 | (n.phase == sl->phase) << 2;
    size_t io_cap = sl->io_cap, at_cap = sl->attrs_cap;
    if (base_grow(&sl->io, &io_cap, n.nin + n.nout + 1, sizeof *sl->io) ||
        base_grow(&sl->attrs, &at_cap, n.nattrs + 1, sizeof *sl->attrs)) {
        sl->io_cap = (uint32_t)io_cap;
        sl->attrs_cap = (uint32_t)at_cap;
        slot_give(t, s);
        return oom(d);
    }
    sl->io_cap = (uint32_t)io_cap;
    sl->attrs_cap = (uint32_t)at_cap;
    if (n.nin + n.nout) /* none read (no_dataflow): inputs is NULL */
        memcpy(sl->io, n.inputs, (n.nin + n.nout) * sizeof *sl->io);
    if (n.nattrs)
        memcpy(sl->attrs, n.attrs, n.nattrs * sizeof *sl->attrs);
    sl->node = n;
    sl->node.inputs = sl->io;
    sl->node.outputs = sl->io + n.nin;
    sl->node.attrs = sl->attrs;
    tracer_opmatch_entry en = { .vtid = vtid, .seq = seq, .ts = ts, .a = (uint64_t)s };
    tracer_opmatch_entry old;
    switch (tracer_opmatch_begin(&t->pend, &en, &old)) {
    case TRACER_OPMATCH_ADDED: break;
    case TRACER_OPMATCH_REPLACED: /* the earlier begin never ended */
        t->diag.duplicate_begin++;
        t->diag.unmatched_begin++;
        slot_give(t, (int)old.a);
        break;
    case TRACER_OPMATCH_FULL: /* ops that never end: this one is not timed */
        t->diag.unmatched_begin++;
        slot_give(t, s);
        break;
    case TRACER_OPMATCH_NOMEM: slot_give(t, s); return oom(d);
    }
    return 0;
}

static int on_op_end(tracer_decoder *d, dtrace *t, const bt_field *pl, const evinfo *e, uint64_t ts, uint64_t vpid,
                     uint64_t vtid)
{
    uint64_t seq;
    if (slot_u64(pl, e, F_seq, &seq) != 0) {
        t->diag.malformed_events++;
        return 0;
    }
    tracer_opmatch_entry b;
    if (!tracer_opmatch_end(&t->pend, vtid, seq, &b)) {
        t->diag.unmatched_end++;
        return 0;
    }
    s1slot *sl = &t->slots[b.a];
    /* the slots may have moved since the op_begin: its own labels point into them */
    if (sl->own & 1)
        sl->node.op = sl->op;
    if (sl->own & 2)
        sl->node.cls = sl->cls;
    if (sl->own & 4)
        sl->node.phase = sl->phase;
    sl->node.flops = slot_u64_or(pl, e, F_flops, 0);
    sl->node.bytes = slot_u64_or(pl, e, F_bytes, 0);
    tracer_op op = { .node = &sl->node, .begin = b.ts, .end = ts, .vpid = vpid, .vtid = vtid };
    int rc = deliver(d, t, &op);
    slot_give(t, (int)b.a);
    return rc;
}

/* ---- events ------------------------------------------------------------------- */
/* run_begin reaches the consumer whatever its schema (it decides), but
 * 0, which no fathom writes: a stream's zeroed bytes decode as run_begin
 * events, its event class 0, with every field 0 -- malformed, as an event
 * that lacks a field (a speech trace with 4 KiB zeroed in a stream's
 * middle: "unknown trace schema version 0" before, where the damage was
 * the news). */
typedef struct runbufs {
    char label[NSLOT][32]; /* the labels of the run's strings and enums */
} runbufs;

/* A row of the run's description or state (tracer/schema.def) read into
 * its member; absent members read as 0 or NULL. */
#define READ_ROW(x, group, name, kind, ctype, src, len, need) READ_##kind(ctype, name)
#define READ_SCHEMA(ctype, name) r.name = (ctype)schema;
#define READ_INT(ctype, name) r.name = (ctype)slot_u64_or(pl, e, F_##name, 0);
#define READ_STRING(ctype, name) \
    r.name = tracer_field_label(member(pl, e, F_##name), b->label[F_##name], sizeof b->label[F_##name]);
#define READ_ENUM(ctype, name) READ_STRING(ctype, name)

static tracer_run read_run(const bt_field *pl, const evinfo *e, uint64_t schema, runbufs *b)
{
    tracer_run r;
    FATHOM_SCHEMA_RUN(READ_ROW, _)
    return r;
}

static tracer_state read_state(const bt_field *pl, const evinfo *e)
{
    tracer_state r;
    FATHOM_SCHEMA_STATE(READ_ROW, _)
    return r;
}

/* The statedump (decode.h): ignored by a reader that saw the run begin;
 * the start of a late viewer's trace: what came before it is forgotten. */
static int on_run_state(tracer_decoder *d, dtrace *t, const bt_field *pl, const evinfo *e)
{
    uint64_t schema = 0;
    if (slot_u64(pl, e, F_schema, &schema) != 0 || (schema != TRACER_SCHEMA_V2 && schema != TRACER_SCHEMA_V3)) {
        t->diag.malformed_events++;
        return 0;
    }
    if (t->joined)
        return 0;
    t->joined = 2;
    const tracer_decode_diag keep = t->diag;
    memset(&t->diag, 0, sizeof t->diag); /* the partial reading before: not the trace's fault */
    t->diag.events = keep.events;
    t->diag.foreign_events = keep.foreign_events;
    t->diag.unknown_events = keep.unknown_events;
    t->diag.discarded_events = keep.discarded_events;
    t->diag.discarded_packets = keep.discarded_packets;
    t->diag.discarded_unknown = keep.discarded_unknown;
    t->diag.schema = (uint32_t)schema;
    runbufs b;
    tracer_run r = read_run(pl, e, schema, &b);
    tracer_state st = read_state(pl, e);
    t->diag.records = st.outside_ops;
    return d->cb.run_state ? d->cb.run_state(t->user, &r, &st) : 0;
}

/* A late viewer's first graph_totals of a graph: its nodes' invocations
 * so far; its records count from here on. */
static int on_graph_totals(tracer_decoder *d, dtrace *t, const bt_field *pl, const evinfo *e, uint64_t vpid)
{
    uint32_t graph = (uint32_t)slot_u64_or(pl, e, F_graph, 0);
    if (t->joined != 2 || graph_synced(t, vpid, graph))
        return 0;
    const bt_field *an, *a[4];
    int64_t nn = array_len(pl, e, F_nodes, &an);
    const enum slot f[4] = { F_counts, F_ns, F_min_ns, F_max_ns };
    for (int k = 0; k < 4; k++)
        if (array_len(pl, e, f[k], &a[k]) != nn)
            nn = -1;
    if (nn < 0) {
        t->diag.malformed_events++;
        return 0;
    }
    /* first every element read and every node known: a viewer that came
     * in the middle of a statedump missed some of its node_defs, and waits
     * for the next one */
    for (int pass = 0; pass < 2; pass++) {
        for (int64_t i = 0; i < nn; i++) {
            uint64_t node, v[4];
            int bad = tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(an, (uint64_t)i), &node);
            for (int k = 0; k < 4; k++)
                bad |= tracer_field_u64(bt_field_array_borrow_element_field_by_index_const(a[k], (uint64_t)i), &v[k]);
            if (bad) {
                t->diag.malformed_events++;
                return 0;
            }
            const dnode *dn = node_find(t, vpid, graph, (uint32_t)node);
            if (!dn)
                return 0;
            if (pass == 0)
                continue;
            t->diag.records += v[0];
            if (d->cb.totals && d->cb.totals(t->user, &dn->node, v[0], v[1], v[2], v[3]))
                return -1;
        }
        if (pass == 0) {
            if (base_grow(&t->synced, &t->cap_synced, t->nsynced + 1, sizeof *t->synced))
                return oom(d);
            t->synced[t->nsynced++] = (struct dgraph){ vpid, graph };
        }
    }
    return 0;
}

static int on_run_begin(tracer_decoder *d, dtrace *t, const bt_field *pl, const evinfo *e)
{
    uint64_t schema = 0;
    if (slot_u64(pl, e, F_schema, &schema) != 0 || schema == 0) {
        t->diag.malformed_events++;
        return 0;
    }
    if (schema > UINT32_MAX)
        schema = UINT32_MAX;
    if (!TRACER_SCHEMA_KNOWN(schema)) {
        if (!t->diag.bad_schema)
            t->diag.bad_schema = (uint32_t)schema;
    } else if (!t->diag.schema) {
        t->diag.schema = (uint32_t)schema;
    }
    if (!t->joined)
        t->joined = 1;
    runbufs b;
    tracer_run r = read_run(pl, e, schema, &b);
    t->imported = r.version && strncmp(r.version, "pytorch-", 8) == 0;
    return d->cb.run_begin ? d->cb.run_begin(t->user, &r) : 0;
}

static int on_tensor_alloc(tracer_decoder *d, dtrace *t, const bt_field *pl, evinfo *e, uint64_t ts)
{
    uint64_t id, bytes;
    if (slot_u64(pl, e, F_id, &id) != 0 || slot_u64(pl, e, F_bytes, &bytes) != 0) {
        t->diag.malformed_events++;
        return 0;
    }
    char rb[32], db[32];
    tracer_tensor x = { .id = (uint32_t)id, .bytes = bytes };
    x.role = label_of(pl, e, F_role, e->role_label, 64, rb, sizeof rb); /* per event: the labels cached */
    x.dtype = label_of(pl, e, F_dtype, e->dtype_label, 64, db, sizeof db);
    x.role_value = slot_value(pl, e, F_role);
    const bt_field *as;
    int64_t nd = array_len(pl, e, F_shape, &as);
    if (nd >= 0 && nd <= TRACER_MAX_DIMS && array_u32(as, (uint64_t)nd, x.shape) == 0) {
        x.ndim = (uint32_t)nd;
        x.shape_ok = 1;
    } else if (nd > TRACER_MAX_DIMS) {
        x.ndim = nd > UINT32_MAX ? UINT32_MAX : (uint32_t)nd;
    }
    return d->cb.tensor_alloc ? d->cb.tensor_alloc(t->user, ts, &x) : 0;
}

static int on_event(tracer_decoder *d, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const bt_event_class *ec = bt_event_borrow_class_const(ev);
    evinfo *e = evinfo_get(d, ec);
    if (!e)
        return oom(d);
    dtrace *t = trace_of(d, bt_stream_borrow_trace_const(bt_event_borrow_stream_const(ev)));
    if (!t)
        return oom(d);
    t->diag.events++;
    uint64_t ts = 0;
    if (e->clock) {
        const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
        int64_t ns;
        if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
            ts = (uint64_t)ns;
        else
            ts = bt_clock_snapshot_get_value(cs);
    }
    if (d->cb.event && d->cb.event(t->user, bt_event_class_get_name(ec), ts))
        return -1;
    if (e->kind == K_FOREIGN) {
        t->diag.foreign_events++;
        return 0;
    }
    if (e->kind == K_UNKNOWN) {
        t->diag.unknown_events++;
        return 0;
    }
    if (e->malformed) {
        t->diag.malformed_events++;
        return 0;
    }
    const bt_field *pl = bt_event_borrow_payload_field_const(ev);
    uint64_t vtid = 0, vpid = 0;
    if (e->vtid_idx >= 0 || e->vpid_idx >= 0) {
        const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
        if (ctx && e->vtid_idx >= 0 && read_u64(ctx, e->vtid_idx, (enum ftype)e->vtid_ftype, &vtid) != 0)
            vtid = 0;
        if (ctx && e->vpid_idx >= 0 && read_u64(ctx, e->vpid_idx, (enum ftype)e->vpid_ftype, &vpid) != 0)
            vpid = 0;
    }
    tracer_decode_set_current(ts, vpid, vtid);
    const tracer_decode_cbs *cb = &d->cb;
    uint64_t v;
    switch (e->kind) {
    case K_run_begin: return on_run_begin(d, t, pl, e);
    case K_run_end:
        v = slot_u64_or(pl, e, F_ops, 0);
        t->diag.run_end_ops += v;
        t->diag.run_ends++;
        return cb->run_end ? cb->run_end(t->user, (int32_t)slot_u64_or(pl, e, F_status, 0), v) : 0;
    case K_step_begin: return cb->step_begin ? cb->step_begin(t->user, ts, (uint32_t)slot_u64_or(pl, e, F_step, 0)) : 0;
    case K_step_end: {
        double loss = 0;
        if (e->ftype[F_loss] == FT_FLOAT)
            loss = bt_field_real_double_precision_get_value(member(pl, e, F_loss));
        return cb->step_end ? cb->step_end(t->user, ts, (uint32_t)slot_u64_or(pl, e, F_step, 0), loss) : 0;
    }
    case K_node_def: return on_node_def(d, t, pl, e, vpid, ts);
    case K_ops: return on_ops(d, t, pl, e, vpid, vtid, ts);
    case K_op_begin: return on_op_begin(d, t, pl, e, ts, vtid);
    case K_op_end: return on_op_end(d, t, pl, e, ts, vpid, vtid);
    case K_tensor_alloc: return on_tensor_alloc(d, t, pl, e, ts);
    case K_run_state: return on_run_state(d, t, pl, e);
    case K_graph_totals: return on_graph_totals(d, t, pl, e, vpid);
    case K_runtime: return on_runtime(d, t, pl, e, vpid, vtid);
    case K_tensor_free:
        if (slot_u64(pl, e, F_id, &v) != 0) {
            t->diag.malformed_events++;
            return 0;
        }
        return cb->tensor_free ? cb->tensor_free(t->user, ts, (uint32_t)v) : 0;
    default: return 0;
    }
}

int tracer_decoder_consume(tracer_decoder *d, const bt_message *msg)
{
    const bt_stream *st;
    dtrace *t;
    uint64_t n = 0;
    switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT: return on_event(d, msg);
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS:
        st = bt_message_discarded_events_borrow_stream_const(msg);
        if (!(t = trace_of(d, bt_stream_borrow_trace_const(st))))
            return oom(d);
        if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            t->diag.discarded_events += n;
        else
            t->diag.discarded_unknown++;
        return 0;
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS:
        st = bt_message_discarded_packets_borrow_stream_const(msg);
        if (!(t = trace_of(d, bt_stream_borrow_trace_const(st))))
            return oom(d);
        if (bt_message_discarded_packets_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            t->diag.discarded_packets += n;
        else
            t->diag.discarded_packets++;
        return 0;
    default: return 0;
    }
}

void tracer_decoder_finish(tracer_decoder *d)
{
    for (size_t i = 0; i < d->ntr; i++) {
        dtrace *t = &d->tr[i];
        t->diag.unmatched_begin += tracer_opmatch_pending(&t->pend);
        tracer_opmatch_clear(&t->pend);
        t->free_slot = -1;
        for (int s = 0; s < t->nslots; s++)
            slot_give(t, s);
    }
}
