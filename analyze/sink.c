/* sink.c -- Babeltrace2 messages -> profiles (see sink.h).
 *
 * Per event class, the kind of event, the indices of the payload members it
 * needs and how to read each (unsigned, signed, bool, or not an integer) are
 * looked up once and cached, as is whether its stream class has a clock; per
 * op, phase and role enum value, the interned op type, the phase and the
 * interned role are cached, so an event costs a few pointer lookups and no
 * string work. */
#include "analyze/sink.h"

#include "analyze/fields.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_FOREIGN, K_UNKNOWN, K_RUN_BEGIN, K_RUN_END, K_STEP_BEGIN, K_STEP_END, K_OP_BEGIN, K_OP_END,
            K_TENSOR_ALLOC, K_TENSOR_FREE };

enum slot { F_SCHEMA, F_MODEL, F_MODE, F_PRESET, F_BATCH, F_STEPS, F_THREADS, F_INTER, F_SEED, F_VERSION,
            F_BLAS, F_CPU, F_STATUS, F_OPS, F_STEP, F_SEQ, F_OP, F_CLS, F_PHASE, F_FLOPS, F_BYTES, F_ID,
            F_ROLE, NSLOT };

static const char *const slot_name[NSLOT] = {
    "schema", "model", "mode", "preset", "batch", "steps", "threads", "inter", "seed", "version",
    "blas", "cpu", "status", "ops", "step", "seq", "op", "cls", "phase", "flops", "bytes", "id", "role",
};

static const struct {
    const char *name;
    enum kind kind;
    uint32_t required; /* bit mask of slots */
} schema_events[] = {
    { "fathom:run_begin", K_RUN_BEGIN, 1u << F_SCHEMA },
    { "fathom:run_end", K_RUN_END, 0 },
    { "fathom:step_begin", K_STEP_BEGIN, 0 },
    { "fathom:step_end", K_STEP_END, 0 },
    { "fathom:op_begin", K_OP_BEGIN, 1u << F_SEQ | 1u << F_OP },
    { "fathom:op_end", K_OP_END, 1u << F_SEQ },
    { "fathom:tensor_alloc", K_TENSOR_ALLOC, 1u << F_ID | 1u << F_BYTES },
    { "fathom:tensor_free", K_TENSOR_FREE, 1u << F_ID },
};

#define OPCACHE_MAX 4096
#define SMALLCACHE_MAX 256

/* How a member's value is read (its field class type, fixed per event class). */
enum ftype { FT_ABSENT, FT_UINT, FT_SINT, FT_BOOL, FT_OTHER };

typedef struct evinfo {
    const bt_event_class *ec;
    enum kind kind;
    int malformed;          /* a required member is missing */
    int has_clock;          /* the stream class has a default clock class */
    int64_t idx[NSLOT];     /* payload member index, -1: absent */
    uint8_t ftype[NSLOT];   /* enum ftype of each member */
    int64_t vtid_idx;       /* common context member index, -1: absent */
    uint8_t vtid_ftype;
    int8_t phcache[SMALLCACHE_MAX]; /* phase value -> analyze_phase + 1 (any profile) */
    analyze_profile *cache_owner;   /* the profile the two caches below belong to */
    int32_t rolecache[SMALLCACHE_MAX]; /* role value -> role index + 1 */
    int32_t opcache[OPCACHE_MAX]; /* op enum value -> op index + 1 */
} evinfo;

typedef struct traceprof {
    const bt_trace *trace;
    analyze_profile *prof;
} traceprof;

struct analyze_sink {
    analyze_sink_options o;
    char *source;
    evinfo **ev;       /* open addressing on the event class pointer */
    size_t ev_cap, ev_len;
    evinfo *last;
    traceprof *tp;
    size_t ntp;
    analyze_profile *single;
    char err[512];
};

static int fail(analyze_sink *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(analyze_sink *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

const char *analyze_sink_error(const analyze_sink *s)
{
    return s && s->err[0] ? s->err : "out of memory";
}

analyze_sink *analyze_sink_create(const analyze_sink_options *o)
{
    analyze_sink *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->o = *o;
    s->source = strdup(o->source ? o->source : "trace");
    if (!s->source) {
        free(s);
        return NULL;
    }
    s->o.source = s->source;
    return s;
}

void analyze_sink_destroy(analyze_sink *s)
{
    if (!s)
        return;
    for (size_t i = 0; i < s->ev_cap; i++)
        free(s->ev[i]);
    free(s->ev);
    for (size_t i = 0; i < s->ntp; i++)
        analyze_profile_destroy(s->tp[i].prof);
    free(s->tp);
    analyze_profile_destroy(s->single);
    free(s->source);
    free(s);
}

analyze_profile **analyze_sink_take(analyze_sink *s, size_t *n)
{
    size_t cnt = s->o.per_trace ? s->ntp : (s->single ? 1 : 0);
    analyze_profile **v = calloc(cnt ? cnt : 1, sizeof *v);
    *n = 0;
    if (!v)
        return NULL;
    if (s->o.per_trace) {
        for (size_t i = 0; i < s->ntp; i++)
            v[i] = s->tp[i].prof, s->tp[i].prof = NULL;
        s->ntp = 0;
    } else if (s->single) {
        v[0] = s->single;
        s->single = NULL;
    }
    for (size_t i = 0; i < cnt; i++)
        analyze_profile_finish(v[i]);
    *n = cnt;
    return v;
}

/* ---- which profile ------------------------------------------------------------- */
static analyze_profile *profile_for(analyze_sink *s, const bt_trace *trace)
{
    if (!s->o.per_trace) {
        if (!s->single)
            s->single = analyze_profile_create(s->source, s->o.skip_first, s->o.skip_last);
        return s->single;
    }
    for (size_t i = 0; i < s->ntp; i++)
        if (s->tp[i].trace == trace)
            return s->tp[i].prof;
    traceprof *v = realloc(s->tp, (s->ntp + 1) * sizeof *v);
    if (!v)
        return NULL;
    s->tp = v;
    const char *name = trace ? bt_trace_get_name(trace) : NULL;
    char buf[64];
    if (!name) {
        snprintf(buf, sizeof buf, "trace %zu", s->ntp + 1);
        name = buf;
    }
    analyze_profile *p = analyze_profile_create(name, s->o.skip_first, s->o.skip_last);
    if (!p)
        return NULL;
    v[s->ntp].trace = trace;
    v[s->ntp].prof = p;
    s->ntp++;
    return p;
}

/* ---- event classes ---------------------------------------------------------------- */
static int64_t member_index(const bt_field_class *fc, const char *name)
{
    if (!fc || bt_field_class_get_type(fc) != BT_FIELD_CLASS_TYPE_STRUCTURE)
        return -1;
    uint64_t n = bt_field_class_structure_get_member_count(fc);
    for (uint64_t i = 0; i < n; i++) {
        const char *m = bt_field_class_structure_member_get_name(
            bt_field_class_structure_borrow_member_by_index_const(fc, i));
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
    /* enumerations are integers too */
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_UNSIGNED_INTEGER))
        return FT_UINT;
    if (bt_field_class_type_is(t, BT_FIELD_CLASS_TYPE_SIGNED_INTEGER))
        return FT_SINT;
    if (t == BT_FIELD_CLASS_TYPE_BOOL)
        return FT_BOOL;
    return FT_OTHER;
}

static evinfo *evinfo_make(const bt_event_class *ec)
{
    evinfo *e = calloc(1, sizeof *e);
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
            }
        }
    }
    const bt_stream_class *sc = bt_event_class_borrow_stream_class_const(ec);
    const bt_field_class *cfc = bt_stream_class_borrow_event_common_context_field_class_const(sc);
    e->vtid_idx = member_index(cfc, "vtid");
    e->vtid_ftype = (uint8_t)member_ftype(cfc, e->vtid_idx);
    e->has_clock = bt_stream_class_borrow_default_clock_class_const(sc) != NULL;
    return e;
}

static evinfo *evinfo_get(analyze_sink *s, const bt_event_class *ec)
{
    if (s->last && s->last->ec == ec)
        return s->last;
    uintptr_t key = (uintptr_t)ec;
    if (s->ev_cap) {
        size_t h = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ULL >> 20) & (s->ev_cap - 1);
        while (s->ev[h]) {
            if (s->ev[h]->ec == ec)
                return s->last = s->ev[h];
            h = (h + 1) & (s->ev_cap - 1);
        }
    }
    if ((s->ev_len + 1) * 2 > s->ev_cap) {
        size_t cap = s->ev_cap ? s->ev_cap * 2 : 32;
        evinfo **t = calloc(cap, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < s->ev_cap; i++) {
            if (!s->ev[i])
                continue;
            size_t h = (size_t)(((uintptr_t)s->ev[i]->ec >> 4) * 0x9E3779B97F4A7C15ULL >> 20) & (cap - 1);
            while (t[h])
                h = (h + 1) & (cap - 1);
            t[h] = s->ev[i];
        }
        free(s->ev);
        s->ev = t;
        s->ev_cap = cap;
    }
    evinfo *e = evinfo_make(ec);
    if (!e)
        return NULL;
    size_t h = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ULL >> 20) & (s->ev_cap - 1);
    while (s->ev[h])
        h = (h + 1) & (s->ev_cap - 1);
    s->ev[h] = e;
    s->ev_len++;
    return s->last = e;
}

/* ---- field access ------------------------------------------------------------------- */
static const bt_field *member(const bt_field *payload, const evinfo *e, enum slot f)
{
    return e->idx[f] < 0 ? NULL : bt_field_structure_borrow_member_field_by_index_const(payload, (uint64_t)e->idx[f]);
}

/* analyze_field_u64() of member f of a struct, with the member's type known in
 * advance (what the event loop uses). */
static inline int read_u64(const bt_field *st, int64_t idx, enum ftype t, uint64_t *out)
{
    if (t == FT_ABSENT || t == FT_OTHER)
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

/* An integer value that fits a small cache: its slot, or -1. */
static inline int small_key(const evinfo *e, enum slot f, uint64_t v)
{
    if (e->ftype[f] == FT_SINT)
        return (int64_t)v >= 0 && (int64_t)v < SMALLCACHE_MAX ? (int)v : -1;
    return (e->ftype[f] == FT_UINT || e->ftype[f] == FT_BOOL) && v < SMALLCACHE_MAX ? (int)v : -1;
}

/* The caches of interned indices belong to one profile at a time. */
static void cache_claim(evinfo *e, analyze_profile *p)
{
    if (e->cache_owner == p)
        return;
    memset(e->opcache, 0, sizeof e->opcache);
    memset(e->rolecache, 0, sizeof e->rolecache);
    e->cache_owner = p;
}

/* ---- events ----------------------------------------------------------------------------- */
static int on_run_begin(analyze_sink *s, analyze_profile *p, const bt_field *pl, const evinfo *e)
{
    uint64_t schema = 0;
    if (analyze_field_u64(member(pl, e, F_SCHEMA), &schema) != 0) {
        p->diag.malformed_events++;
        return 0;
    }
    if (schema != ANALYZE_SCHEMA)
        return fail(s, "%s: unknown trace schema version %" PRIu64 " (this fathom reads version %d)", p->source,
                    schema, ANALYZE_SCHEMA);
    char mb[32], pb[32], vb[32], bb[32], cb[32], ob[32];
    analyze_meta m = { 0 };
    m.schema = (uint32_t)schema;
    m.model = (char *)analyze_field_label(member(pl, e, F_MODEL), mb, sizeof mb);
    m.mode = (char *)analyze_field_label(member(pl, e, F_MODE), ob, sizeof ob);
    m.preset = (char *)analyze_field_label(member(pl, e, F_PRESET), pb, sizeof pb);
    m.version = (char *)analyze_field_label(member(pl, e, F_VERSION), vb, sizeof vb);
    m.blas = (char *)analyze_field_label(member(pl, e, F_BLAS), bb, sizeof bb);
    m.cpu = (char *)analyze_field_label(member(pl, e, F_CPU), cb, sizeof cb);
    m.batch = (uint32_t)analyze_field_u64_or(member(pl, e, F_BATCH), 0);
    m.steps = (uint32_t)analyze_field_u64_or(member(pl, e, F_STEPS), 0);
    m.threads = (uint32_t)analyze_field_u64_or(member(pl, e, F_THREADS), 0);
    m.inter = (uint32_t)analyze_field_u64_or(member(pl, e, F_INTER), 0);
    m.seed = analyze_field_u64_or(member(pl, e, F_SEED), 0);
    return analyze_profile_run_begin(p, &m);
}

static int on_op_begin(analyze_profile *p, const bt_field *pl, evinfo *e, uint64_t ts, uint64_t vtid)
{
    uint64_t seq, opv = UINT64_MAX;
    if (slot_u64(pl, e, F_SEQ, &seq) != 0) {
        p->diag.malformed_events++;
        return 0;
    }
    int op = -1;
    int cacheable = slot_u64(pl, e, F_OP, &opv) == 0 && opv < OPCACHE_MAX;
    cache_claim(e, p);
    if (cacheable && e->opcache[opv])
        op = e->opcache[opv] - 1;
    if (op < 0) {
        char ob[32], cb[32];
        const char *name = analyze_field_label(member(pl, e, F_OP), ob, sizeof ob);
        if (!name) {
            p->diag.malformed_events++;
            return 0;
        }
        const char *cls = analyze_field_label(member(pl, e, F_CLS), cb, sizeof cb);
        op = analyze_profile_intern_op(p, name, cls ? cls : "unknown");
        if (op < 0)
            return -1;
        if (cacheable)
            e->opcache[opv] = op + 1;
    }
    uint64_t phv = 0;
    int key = slot_u64(pl, e, F_PHASE, &phv) == 0 ? small_key(e, F_PHASE, phv) : -1;
    analyze_phase ph;
    if (key >= 0 && e->phcache[key]) {
        ph = (analyze_phase)(e->phcache[key] - 1);
    } else {
        char phb[32];
        ph = analyze_phase_parse(analyze_field_label(member(pl, e, F_PHASE), phb, sizeof phb));
        if (key >= 0)
            e->phcache[key] = (int8_t)(ph + 1);
    }
    return analyze_profile_op_begin(p, ts, vtid, seq, op, ph);
}

static int on_event(analyze_sink *s, const bt_message *msg)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    evinfo *e = evinfo_get(s, bt_event_borrow_class_const(ev));
    if (!e)
        return fail(s, "out of memory");
    analyze_profile *p = !s->o.per_trace && s->single
                             ? s->single
                             : profile_for(s, bt_stream_borrow_trace_const(bt_event_borrow_stream_const(ev)));
    if (!p)
        return fail(s, "out of memory");
    p->diag.events++;
    if (e->kind == K_FOREIGN) {
        p->diag.foreign_events++;
        return 0;
    }
    if (e->kind == K_UNKNOWN) {
        p->diag.unknown_events++;
        return 0;
    }
    if (e->malformed) {
        p->diag.malformed_events++;
        return 0;
    }
    uint64_t ts = 0;
    if (e->has_clock) {
        const bt_clock_snapshot *cs = bt_message_event_borrow_default_clock_snapshot_const(msg);
        int64_t ns;
        if (bt_clock_snapshot_get_ns_from_origin(cs, &ns) == BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
            ts = (uint64_t)ns;
        else
            ts = bt_clock_snapshot_get_value(cs);
    }
    const bt_field *pl = bt_event_borrow_payload_field_const(ev);
    uint64_t vtid = 0;
    if (e->vtid_idx >= 0) {
        const bt_field *ctx = bt_event_borrow_common_context_field_const(ev);
        if (ctx && read_u64(ctx, e->vtid_idx, (enum ftype)e->vtid_ftype, &vtid) != 0)
            vtid = 0;
    }
    uint64_t v, w;
    char rb[32];
    int rc = 0;
    switch (e->kind) {
    case K_RUN_BEGIN:
        rc = on_run_begin(s, p, pl, e);
        break;
    case K_RUN_END:
        analyze_profile_run_end(p, (int32_t)slot_u64_or(pl, e, F_STATUS, 0), slot_u64_or(pl, e, F_OPS, 0));
        break;
    case K_STEP_BEGIN:
        rc = analyze_profile_step_begin(p, ts, (uint32_t)slot_u64_or(pl, e, F_STEP, 0));
        break;
    case K_STEP_END:
        rc = analyze_profile_step_end(p, ts, (uint32_t)slot_u64_or(pl, e, F_STEP, 0));
        break;
    case K_OP_BEGIN:
        rc = on_op_begin(p, pl, e, ts, vtid);
        break;
    case K_OP_END:
        if (slot_u64(pl, e, F_SEQ, &v) != 0) {
            p->diag.malformed_events++;
            break;
        }
        rc = analyze_profile_op_end(p, ts, vtid, v, slot_u64_or(pl, e, F_FLOPS, 0), slot_u64_or(pl, e, F_BYTES, 0));
        break;
    case K_TENSOR_ALLOC: {
        if (slot_u64(pl, e, F_ID, &v) != 0 || slot_u64(pl, e, F_BYTES, &w) != 0) {
            p->diag.malformed_events++;
            break;
        }
        uint64_t rv = 0;
        int key = slot_u64(pl, e, F_ROLE, &rv) == 0 ? small_key(e, F_ROLE, rv) : -1, r;
        cache_claim(e, p);
        if (key >= 0 && e->rolecache[key]) {
            r = e->rolecache[key] - 1;
        } else {
            const char *role = analyze_field_label(member(pl, e, F_ROLE), rb, sizeof rb);
            r = analyze_profile_intern_role(p, role ? role : "unknown");
            if (key >= 0 && r >= 0)
                e->rolecache[key] = r + 1;
        }
        rc = r < 0 ? -1 : analyze_profile_tensor_alloc(p, (uint32_t)v, r, w);
        break;
    }
    case K_TENSOR_FREE:
        if (slot_u64(pl, e, F_ID, &v) != 0) {
            p->diag.malformed_events++;
            break;
        }
        analyze_profile_tensor_free(p, (uint32_t)v);
        break;
    default:
        break;
    }
    if (rc && !s->err[0])
        fail(s, "out of memory");
    return rc;
}

int analyze_sink_consume(analyze_sink *s, const bt_message *msg)
{
    switch (bt_message_get_type(msg)) {
    case BT_MESSAGE_TYPE_EVENT:
        return on_event(s, msg);
    case BT_MESSAGE_TYPE_DISCARDED_EVENTS: {
        const bt_stream *st = bt_message_discarded_events_borrow_stream_const(msg);
        analyze_profile *p = profile_for(s, bt_stream_borrow_trace_const(st));
        if (!p)
            return fail(s, "out of memory");
        uint64_t n = 0;
        if (bt_message_discarded_events_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            p->diag.discarded_events += n;
        else
            p->diag.discarded_unknown++;
        return 0;
    }
    case BT_MESSAGE_TYPE_DISCARDED_PACKETS: {
        const bt_stream *st = bt_message_discarded_packets_borrow_stream_const(msg);
        analyze_profile *p = profile_for(s, bt_stream_borrow_trace_const(st));
        if (!p)
            return fail(s, "out of memory");
        uint64_t n = 0;
        if (bt_message_discarded_packets_get_count(msg, &n) == BT_PROPERTY_AVAILABILITY_AVAILABLE)
            p->diag.discarded_packets += n;
        else
            p->diag.discarded_packets++;
        return 0;
    }
    default:
        return 0;
    }
}
