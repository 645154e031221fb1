/* export.c -- the Chrome trace-event (Perfetto) exporter (export.h): each
 * message of the trace, as the Babeltrace2 graph of read.h delivers them in
 * time order, becomes at most a few trace-event objects, written at once. */
#include "analyze/export.h"

#include "analyze/fields.h"
#include "analyze/out.h"
#include "analyze/profile.h"
#include "analyze/read.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMED 4096 /* threads and processes named (later ones stay unnamed) */

typedef struct exporter {
    FILE *out;
    analyze_export_stats *st;
    int wrote_any, have_t0;
    int64_t t0;
    analyze_profile *mem; /* the live tensors and bytes per role (only its tensor bookkeeping is used) */
    uint64_t named[MAX_NAMED]; /* pid << 32 | tid of the tracks named so far */
    size_t nnamed;
    json_t *meta; /* run_begin's fields, for otherData */
    char *buf;    /* one encoded event */
    size_t cap;
} exporter;

static int emit(exporter *x, json_t *ev, char *err, size_t errlen)
{
    if (!ev)
        return analyze_out_fail(err, errlen, "out of memory");
    /* encoded into one buffer and written at once (jansson writes a FILE
     * token by token) */
    const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
    size_t n = json_dumpb(ev, x->buf ? x->buf + 2 : NULL, x->buf ? x->cap - 2 : 0, flags);
    if (n + 2 > x->cap) {
        size_t cap = 2 * (n + 2) > 4096 ? 2 * (n + 2) : 4096;
        char *b = realloc(x->buf, cap);
        if (!b) {
            json_decref(ev);
            return analyze_out_fail(err, errlen, "out of memory");
        }
        x->buf = b, x->cap = cap;
        n = json_dumpb(ev, x->buf + 2, x->cap - 2, flags);
    }
    json_decref(ev);
    if (!n)
        return analyze_out_fail(err, errlen, "cannot encode an event");
    x->buf[0] = x->wrote_any ? ',' : ' ';
    x->buf[1] = '\n';
    x->wrote_any = 1;
    x->st->events++;
    if (fwrite(x->buf, 1, n + 2, x->out) != n + 2)
        return analyze_out_fail(err, errlen, "cannot write the timeline");
    return 0;
}

/* A thread's name on first sight of (pid, tid); the process is named by
 * its run_begin. */
static int name_track(exporter *x, uint64_t pid, uint64_t tid, char *err, size_t errlen)
{
    uint64_t key = pid << 32 | (tid & 0xffffffffu);
    int have_t = 0;
    for (size_t i = 0; i < x->nnamed && !have_t; i++)
        have_t = x->named[i] == key;
    if (!have_t && x->nnamed < MAX_NAMED) {
        x->named[x->nnamed++] = key;
        char name[64];
        snprintf(name, sizeof name, tid == pid ? "main (vtid %llu)" : "vtid %llu", (unsigned long long)tid);
        if (emit(x,
                 json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "thread_name", "ph", "M", "pid",
                           (json_int_t)pid, "tid", (json_int_t)tid, "args", "name", name),
                 err, errlen))
            return -1;
    }
    return 0;
}

/* A sequence field as a JSON array of integers. */
static json_t *int_array(const bt_field *f)
{
    json_t *a = json_array();
    if (!a || !f || !bt_field_class_type_is(bt_field_get_class_type(f), BT_FIELD_CLASS_TYPE_ARRAY))
        return a;
    uint64_t n = bt_field_array_get_length(f);
    for (uint64_t i = 0; i < n; i++) {
        const bt_field *e = bt_field_array_borrow_element_field_by_index_const(f, i);
        uint64_t v = 0;
        analyze_field_u64(e, &v);
        int is_signed = bt_field_class_type_is(bt_field_get_class_type(e), BT_FIELD_CLASS_TYPE_SIGNED_INTEGER);
        json_array_append_new(a, json_integer(is_signed ? (json_int_t)(int64_t)v : (json_int_t)v));
    }
    return a;
}

static json_t *label(const bt_field *pl, const char *name)
{
    char buf[64];
    const char *s = analyze_field_label(analyze_field_member(pl, name), buf, sizeof buf);
    return json_string(s ? s : "?");
}

static json_t *u64_of(const bt_field *pl, const char *name)
{
    return json_integer((json_int_t)analyze_field_u64_or(analyze_field_member(pl, name), 0));
}

/* A begin (ph B) or end (ph E) of a slice, or a counter (C), on (pid, tid). */
static json_t *slice(const char *ph, double ts, uint64_t pid, uint64_t tid)
{
    return json_pack("{s:s, s:f, s:I, s:I}", "ph", ph, "ts", ts, "pid", (json_int_t)pid, "tid", (json_int_t)tid);
}

static int set_new(json_t *o, const char *key, json_t *v) { return v ? json_object_set_new(o, key, v) : -1; }

static int on_memory(exporter *x, double ts, uint64_t pid, char *err, size_t errlen)
{
    json_t *args = json_object();
    for (size_t r = 0; args && r < x->mem->nroles; r++)
        json_object_set_new(args, x->mem->roles[r], json_integer((json_int_t)x->mem->role_live[r]));
    return emit(x,
                json_pack("{s:s, s:s, s:f, s:I, s:o}", "name", "tensor memory (bytes)", "ph", "C", "ts", ts, "pid",
                          (json_int_t)pid, "args", args ? args : json_null()),
                err, errlen);
}

static int on_event(exporter *x, const bt_message *msg, char *err, size_t errlen)
{
    const bt_event *ev = bt_message_event_borrow_event_const(msg);
    const char *name = bt_event_class_get_name(bt_event_borrow_class_const(ev));
    if (!name || strncmp(name, "fathom:", 7) != 0) {
        x->st->foreign++;
        return 0;
    }
    name += 7;
    if (!bt_message_event_borrow_stream_class_default_clock_class_const(msg))
        return analyze_out_fail(err, errlen, "the trace's events have no clock");
    int64_t ns = 0;
    if (bt_clock_snapshot_get_ns_from_origin(bt_message_event_borrow_default_clock_snapshot_const(msg), &ns) !=
        BT_CLOCK_SNAPSHOT_GET_NS_FROM_ORIGIN_STATUS_OK)
        return analyze_out_fail(err, errlen, "a timestamp out of range");
    if (!x->have_t0)
        x->t0 = ns, x->have_t0 = 1;
    double ts = (double)(ns - x->t0) / 1000.0;
    const bt_field *pl = bt_event_borrow_payload_field_const(ev), *cx = bt_event_borrow_common_context_field_const(ev);
    uint64_t pid = analyze_field_u64_or(analyze_field_member(cx, "vpid"), 0);
    uint64_t tid = analyze_field_u64_or(analyze_field_member(cx, "vtid"), 0);
    if (name_track(x, pid, tid, err, errlen))
        return -1;

    json_t *e = NULL, *args = json_object();
    if (!args)
        return analyze_out_fail(err, errlen, "out of memory");
    int bad = 0;
    if (strcmp(name, "op_begin") == 0) {
        x->st->ops++;
        e = slice("B", ts, pid, tid);
        bad |= e && (set_new(e, "name", label(pl, "op")) || set_new(e, "cat", label(pl, "cls")));
        bad |= set_new(args, "seq", u64_of(pl, "seq")) || set_new(args, "node", u64_of(pl, "node")) ||
               set_new(args, "phase", label(pl, "phase")) ||
               set_new(args, "inputs", int_array(analyze_field_member(pl, "inputs"))) ||
               set_new(args, "outputs", int_array(analyze_field_member(pl, "outputs"))) ||
               set_new(args, "attrs", int_array(analyze_field_member(pl, "attrs")));
    } else if (strcmp(name, "op_end") == 0) {
        e = slice("E", ts, pid, tid);
        bad |= set_new(args, "seq", u64_of(pl, "seq")) || set_new(args, "flops", u64_of(pl, "flops")) ||
               set_new(args, "bytes", u64_of(pl, "bytes"));
    } else if (strcmp(name, "step_begin") == 0) {
        x->st->steps++;
        char sname[32];
        uint64_t step = analyze_field_u64_or(analyze_field_member(pl, "step"), 0);
        snprintf(sname, sizeof sname, "step %llu", (unsigned long long)step);
        e = slice("B", ts, pid, tid);
        bad |= e && (set_new(e, "name", json_string(sname)) || set_new(e, "cat", json_string("step")));
        bad |= set_new(args, "step", json_integer((json_int_t)step));
    } else if (strcmp(name, "step_end") == 0) {
        e = slice("E", ts, pid, tid);
        const bt_field *loss = analyze_field_member(pl, "loss");
        if (loss && bt_field_class_type_is(bt_field_get_class_type(loss), BT_FIELD_CLASS_TYPE_REAL))
            bad |= set_new(args, "loss",
                           bt_field_get_class_type(loss) == BT_FIELD_CLASS_TYPE_DOUBLE_PRECISION_REAL
                               ? analyze_out_jreal(bt_field_real_double_precision_get_value(loss))
                               : analyze_out_jreal(bt_field_real_single_precision_get_value(loss)));
    } else if (strcmp(name, "tensor_alloc") == 0 || strcmp(name, "tensor_free") == 0) {
        uint32_t id = (uint32_t)analyze_field_u64_or(analyze_field_member(pl, "id"), 0);
        if (name[7] == 'a') {
            char rb[64];
            const char *role = analyze_field_label(analyze_field_member(pl, "role"), rb, sizeof rb);
            int r = analyze_profile_intern_role(x->mem, role ? role : "unknown");
            if (r < 0 || analyze_profile_tensor_alloc(x->mem, id, r,
                                                      analyze_field_u64_or(analyze_field_member(pl, "bytes"), 0))) {
                json_decref(args);
                return analyze_out_fail(err, errlen, "out of memory");
            }
        } else {
            analyze_profile_tensor_free(x->mem, id);
        }
        json_decref(args);
        return on_memory(x, ts, pid, err, errlen);
    } else if (strcmp(name, "run_begin") == 0) {
        uint64_t schema = analyze_field_u64_or(analyze_field_member(pl, "schema"), 0);
        if (schema != ANALYZE_SCHEMA) {
            json_decref(args);
            return analyze_out_fail(err, errlen, "trace schema %llu: this exporter reads schema %d",
                                    (unsigned long long)schema, ANALYZE_SCHEMA);
        }
        static const char *const keys[] = { "model", "mode", "preset", "version", "blas", "cpu" };
        for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
            bad |= set_new(x->meta, keys[i], label(pl, keys[i]));
        static const char *const nums[] = { "schema", "batch", "steps", "threads", "inter", "seed" };
        for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
            bad |= set_new(x->meta, nums[i], u64_of(pl, nums[i]));
        char pname[256];
        snprintf(pname, sizeof pname, "fathom %s %s", json_string_value(json_object_get(x->meta, "model")),
                 json_string_value(json_object_get(x->meta, "mode")));
        if (emit(x,
                 json_pack("{s:s, s:s, s:I, s:{s:s}}", "name", "process_name", "ph", "M", "pid", (json_int_t)pid,
                           "args", "name", pname),
                 err, errlen)) {
            json_decref(args);
            return -1;
        }
        e = json_pack("{s:s, s:s, s:s, s:f, s:I, s:I}", "name", "run_begin", "ph", "i", "s", "p", "ts", ts, "pid",
                      (json_int_t)pid, "tid", (json_int_t)tid);
        json_object_update(args, x->meta);
    } else if (strcmp(name, "run_end") == 0) {
        e = json_pack("{s:s, s:s, s:s, s:f, s:I, s:I}", "name", "run_end", "ph", "i", "s", "p", "ts", ts, "pid",
                      (json_int_t)pid, "tid", (json_int_t)tid);
        bad |= set_new(args, "status", u64_of(pl, "status")) || set_new(args, "ops", u64_of(pl, "ops"));
    } else { /* a fathom event this schema does not define: left out */
        json_decref(args);
        return 0;
    }
    if (!e || bad || json_object_set_new(e, "args", args)) {
        json_decref(e);
        return analyze_out_fail(err, errlen, "out of memory");
    }
    return emit(x, e, err, errlen);
}

static int on_message(void *ctx, const bt_message *msg, char *err, size_t errlen)
{
    exporter *x = ctx;
    if (bt_message_get_type(msg) == BT_MESSAGE_TYPE_EVENT)
        return on_event(x, msg, err, errlen);
    return 0;
}

int analyze_export_perfetto(const char *source, FILE *out, analyze_export_stats *st, char *err, size_t errlen)
{
    exporter x = { .out = out, .st = st };
    memset(st, 0, sizeof *st);
    x.mem = analyze_profile_create(source, 0, 0);
    x.meta = json_object();
    int rc = -1;
    if (!x.mem || !x.meta) {
        analyze_out_fail(err, errlen, "out of memory");
        goto end;
    }
    fputs("{\"traceEvents\":[", out);
    char why[512];
    if (analyze_read_messages(source, on_message, &x, why, sizeof why) != 0) {
        /* the reader's messages name the source; the exporter's do not */
        if (strstr(why, source))
            analyze_out_fail(err, errlen, "%s", why);
        else
            analyze_out_fail(err, errlen, "%s: %s", source, why);
        goto end;
    }
    if (!st->ops && !st->steps && !x.mem->tensors) {
        analyze_out_fail(err, errlen, "%s: no fathom events in the trace (%llu events of other providers)", source,
                         (unsigned long long)st->foreign);
        goto end;
    }
    json_object_set_new(x.meta, "source", json_string(source));
    json_object_set_new(x.meta, "exporter", json_string("fathom export --perfetto"));
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":", out);
    if (json_dumpf(x.meta, out, JSON_COMPACT) != 0 || fputs("}\n", out) == EOF || ferror(out)) {
        analyze_out_fail(err, errlen, "cannot write the timeline");
        goto end;
    }
    rc = 0;
end:
    json_decref(x.meta);
    free(x.buf);
    analyze_profile_destroy(x.mem);
    return rc;
}
