/* export.c -- the Chrome trace-event (Perfetto) exporter (export.h): the
 * trace's records, as the one decoder (tracer/decode.h) delivers them in
 * time order, each become at most a few trace-event objects, written at
 * once: an op a complete slice (X), a step a B/E pair, the tensor memory a
 * counter. */
#include "analyze/export.h"
#include "analyze/analyze_status.h"

#include "base/alloc.h"
#include "base/table.h"
#include "tracer/fields.h"
#include "analyze/out.h"
#include "analyze/profile.h"
#include "tracer/decode.h"
#include "tracer/isolate.h"
#include "tracer/tp_enums.h" /* the op table's attribute layouts, generated from the engine's */

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMED 4096 /* threads and processes named (later ones stay unnamed) */

typedef struct exporter {
    FILE *out;
    analyze_export_stats *st;
    int wrote_any, have_t0;
    int64_t t0;
    analyze_profile *mem;      /* the live tensors and bytes per role (only its tensor bookkeeping is used) */
    uint64_t named[MAX_NAMED]; /* pid << 32 | tid of the tracks named so far */
    size_t nnamed;
    json_t *meta; /* run_begin's fields, for otherData */
    char *buf;    /* one encoded event */
    size_t cap;
    base_table shapes; /* struct shape_slot by id, for the ops' arguments */
} exporter;

static json_t *s64_array(const int64_t *v, uint32_t n);

/* ---- tensor shapes ----------------------------------------------------------- */
struct shape_slot {
    uint32_t id, ndim;
    uint32_t d[TRACER_MAX_DIMS];
};

/* The shape of tensor id; none for id 0 (no tensor). */
static const struct shape_slot *shape_find(const exporter *x, uint32_t id)
{
    return id ? base_table_get(&x->shapes, &id) : NULL;
}

static int shape_put(exporter *x, const tracer_tensor *t)
{
    struct shape_slot *e;
    if (!t->id)
        return 0;
    if (base_table_put(&x->shapes, &t->id, (void **)&e) == BASE_TABLE_NOMEM)
        return -1;
    e->ndim = t->shape_ok ? t->ndim : 0;
    memcpy(e->d, t->shape, sizeof e->d);
    return 0;
}

/* The shapes of tensors ids[0..n) ([] for a tensor never allocated). */
static json_t *shapes_of(const exporter *x, const uint32_t *ids, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++) {
        json_t *d = json_array();
        const struct shape_slot *sl = shape_find(x, ids[i]);
        for (uint32_t k = 0; d && sl && k < sl->ndim; k++)
            json_array_append_new(d, json_integer(sl->d[k]));
        json_array_append_new(a, d ? d : json_null());
    }
    return a;
}

/* ---- attribute names ----------------------------------------------------------- */
#define LAYOUT_ROW(op, layout) { op, layout },
static const struct {
    const char *op, *layout;
} attr_layouts[] = { FATHOM_TP_OP_ATTRS(LAYOUT_ROW) };
#undef LAYOUT_ROW

/* A node's attrs by their names in the op's layout ({"stride_h": 4, ...},
 * floats as floats), when this fathom knows the op and the count agrees;
 * the bare array otherwise (an op of another version or framework). */
static json_t *named_attrs(const tracer_node *n)
{
    const char *layout = NULL;
    for (size_t i = 0; n->op && i < sizeof attr_layouts / sizeof attr_layouts[0] && !layout; i++)
        if (strcmp(attr_layouts[i].op, n->op) == 0)
            layout = attr_layouts[i].layout;
    uint32_t names = layout && *layout ? 1 : 0;
    for (const char *c = layout; c && *c; c++)
        names += *c == ',';
    if (!layout || names != n->nattrs)
        return s64_array(n->attrs, n->nattrs);
    json_t *o = json_object();
    const char *p = layout;
    for (uint32_t i = 0; o && i < n->nattrs; i++) {
        size_t len = strcspn(p, ",");
        char name[64];
        snprintf(name, sizeof name, "%.*s", (int)len, p);
        size_t nl = strlen(name);
        if (nl > 3 && strcmp(name + nl - 3, "(f)") == 0) {
            name[nl - 3] = '\0';
            union {
                float f;
                uint32_t u;
            } v = { .u = (uint32_t)n->attrs[i] };
            json_object_set_new(o, name, analyze_out_jreal(v.f));
        } else {
            json_object_set_new(o, name, json_integer((json_int_t)n->attrs[i]));
        }
        p += len + (p[len] == ',');
    }
    return o;
}

static int emit(exporter *x, json_t *ev)
{
    if (!ev)
        return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    /* encoded into one buffer and written at once (jansson writes a FILE
     * token by token) */
    const size_t flags = JSON_COMPACT | JSON_REAL_PRECISION(15);
    size_t n = json_dumpb(ev, x->buf ? x->buf + 2 : NULL, x->buf ? x->cap - 2 : 0, flags);
    if (n + 2 > x->cap) {
        size_t cap = 2 * (n + 2) > 4096 ? 2 * (n + 2) : 4096;
        char *b = base_realloc(x->buf, cap);
        if (!b) {
            json_decref(ev);
            return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
        }
        x->buf = b, x->cap = cap;
        n = json_dumpb(ev, x->buf + 2, x->cap - 2, flags);
    }
    json_decref(ev);
    if (!n)
        return analyze_fail_rc(ANALYZE_ERR_INPUT, "cannot encode an event");
    x->buf[0] = x->wrote_any ? ',' : ' ';
    x->buf[1] = '\n';
    x->wrote_any = 1;
    x->st->events++;
    if (fwrite(x->buf, 1, n + 2, x->out) != n + 2)
        return analyze_fail_rc(ANALYZE_ERR_INPUT, "cannot write the timeline");
    return 0;
}

/* A thread's name on first sight of (pid, tid); the process is named by
 * its run_begin. */
static int name_track(exporter *x, uint64_t pid, uint64_t tid)
{
    uint64_t key = pid << 32 | (tid & 0xffffffffu);
    int have_t = 0;
    for (size_t i = 0; i < x->nnamed && !have_t; i++)
        have_t = x->named[i] == key;
    if (!have_t && x->nnamed < MAX_NAMED) {
        x->named[x->nnamed++] = key;
        char name[64];
        snprintf(name, sizeof name, tid == pid ? "main (vtid %llu)" : "vtid %llu", (unsigned long long)tid);
        if (emit(x, json_pack("{s:s, s:s, s:I, s:I, s:{s:s}}", "name", "thread_name", "ph", "M", "pid", (json_int_t)pid,
                              "tid", (json_int_t)tid, "args", "name", name)))
            return -1;
    }
    return 0;
}

static json_t *u32_array(const uint32_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *s64_array(const int64_t *v, uint32_t n)
{
    json_t *a = json_array();
    for (uint32_t i = 0; a && i < n; i++)
        json_array_append_new(a, json_integer((json_int_t)v[i]));
    return a;
}

static json_t *str_or(const char *s) { return json_string(s ? s : "?"); }

/* A begin (ph B) or end (ph E) of a slice, or a counter (C), on (pid, tid). */
static json_t *slice(const char *ph, double ts, uint64_t pid, uint64_t tid)
{
    return json_pack("{s:s, s:f, s:I, s:I}", "ph", ph, "ts", ts, "pid", (json_int_t)pid, "tid", (json_int_t)tid);
}

static int set_new(json_t *o, const char *key, json_t *v) { return v ? json_object_set_new(o, key, v) : -1; }

static int on_memory(exporter *x, double ts, uint64_t pid)
{
    json_t *args = json_object();
    for (size_t r = 0; args && r < x->mem->nroles; r++)
        json_object_set_new(args, x->mem->roles[r], json_integer((json_int_t)x->mem->role_live[r]));
    return emit(x, json_pack("{s:s, s:s, s:f, s:I, s:o}", "name", "tensor memory (bytes)", "ph", "C", "ts", ts, "pid",
                             (json_int_t)pid, "args", args ? args : json_null()));
}

/* The time of the event being decoded, in us from the first event; names
 * its thread on first sight. */
static int at(exporter *x, double *ts, uint64_t *pid, uint64_t *tid)
{
    uint64_t ns;
    tracer_decode_current(&ns, pid, tid);
    if (!x->have_t0)
        x->t0 = (int64_t)ns, x->have_t0 = 1;
    *ts = (double)((int64_t)ns - x->t0) / 1000.0;
    return name_track(x, *pid, *tid);
}

static int cb_run_begin(void *user, const tracer_run *r)
{
    exporter *x = user;
    double ts;
    uint64_t pid, tid;
    if (at(x, &ts, &pid, &tid))
        return -1;
    if (!TRACER_SCHEMA_KNOWN(r->schema))
        return analyze_fail_rc(ANALYZE_ERR_INPUT, "trace schema %u: this exporter reads schemas " TRACER_SCHEMA_READS,
                               r->schema);
    const char *keys[] = { "model", "mode", "preset", "version", "blas", "cpu" };
    const char *vals[] = { r->model, r->mode, r->preset, r->version, r->blas, r->cpu };
    int bad = 0;
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        bad |= set_new(x->meta, keys[i], str_or(vals[i]));
    const char *nums[] = { "schema", "batch", "steps", "threads", "inter", "seed" };
    uint64_t nv[] = { r->schema, r->batch, r->steps, r->threads, r->inter, r->seed };
    for (size_t i = 0; i < sizeof nums / sizeof nums[0]; i++)
        bad |= set_new(x->meta, nums[i], json_integer((json_int_t)nv[i]));
    if (bad)
        return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    char pname[256];
    snprintf(pname, sizeof pname, "fathom %s %s", r->model ? r->model : "?", r->mode ? r->mode : "?");
    if (emit(x, json_pack("{s:s, s:s, s:I, s:{s:s}}", "name", "process_name", "ph", "M", "pid", (json_int_t)pid, "args",
                          "name", pname)))
        return -1;
    json_t *e = json_pack("{s:s, s:s, s:s, s:f, s:I, s:I}", "name", "run_begin", "ph", "i", "s", "p", "ts", ts, "pid",
                          (json_int_t)pid, "tid", (json_int_t)tid);
    json_t *args = json_deep_copy(x->meta);
    if (!e || !args || json_object_set_new(e, "args", args)) {
        json_decref(e);
        return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    }
    return emit(x, e);
}

static int cb_run_end(void *user, int32_t status, uint64_t ops)
{
    exporter *x = user;
    double ts;
    uint64_t pid, tid;
    if (at(x, &ts, &pid, &tid))
        return -1;
    return emit(x, json_pack("{s:s, s:s, s:s, s:f, s:I, s:I, s:{s:i, s:I}}", "name", "run_end", "ph", "i", "s", "p",
                             "ts", ts, "pid", (json_int_t)pid, "tid", (json_int_t)tid, "args", "status", (int)status,
                             "ops", (json_int_t)ops));
}

static int cb_step_begin(void *user, uint64_t ns, uint32_t step)
{
    (void)ns;
    exporter *x = user;
    double ts;
    uint64_t pid, tid;
    if (at(x, &ts, &pid, &tid))
        return -1;
    x->st->steps++;
    char sname[32];
    snprintf(sname, sizeof sname, "step %u", step);
    json_t *e = slice("B", ts, pid, tid);
    if (!e || set_new(e, "name", json_string(sname)) || set_new(e, "cat", json_string("step")) ||
        set_new(e, "args", json_pack("{s:I}", "step", (json_int_t)step))) {
        json_decref(e);
        return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    }
    return emit(x, e);
}

static int cb_step_end(void *user, uint64_t ns, uint32_t step, double loss)
{
    (void)ns, (void)step;
    exporter *x = user;
    double ts;
    uint64_t pid, tid;
    if (at(x, &ts, &pid, &tid))
        return -1;
    json_t *e = slice("E", ts, pid, tid);
    if (!e || set_new(e, "args", json_pack("{s:o}", "loss", analyze_out_jreal(loss)))) {
        json_decref(e);
        return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    }
    return emit(x, e);
}

/* An op record: one complete slice (ph X) on its thread. */
static int cb_op(void *user, const tracer_op *o)
{
    exporter *x = user;
    const tracer_node *n = o->node;
    if (!x->have_t0) {
        x->t0 = (int64_t)o->begin;
        x->have_t0 = 1;
    }
    if (name_track(x, o->vpid, o->vtid))
        return -1;
    x->st->ops++;
    double ts = (double)((int64_t)o->begin - x->t0) / 1000.0;
    double dur = o->end >= o->begin ? (double)(o->end - o->begin) / 1000.0 : 0.0;
    json_t *e = json_pack("{s:s, s:f, s:f, s:I, s:I}", "ph", "X", "ts", ts, "dur", dur, "pid", (json_int_t)o->vpid,
                          "tid", (json_int_t)o->vtid);
    json_t *args = json_object();
    int bad = !e || !args || set_new(e, "name", str_or(n->op)) || set_new(e, "cat", str_or(n->cls)) ||
              set_new(args, "graph", json_integer(n->graph)) || set_new(args, "node", json_integer(n->node)) ||
              set_new(args, "phase", str_or(n->phase)) || set_new(args, "inputs", u32_array(n->inputs, n->nin)) ||
              set_new(args, "outputs", u32_array(n->outputs, n->nout)) || set_new(args, "attrs", named_attrs(n)) ||
              set_new(args, "input_shapes", shapes_of(x, n->inputs, n->nin)) ||
              set_new(args, "output_shapes", shapes_of(x, n->outputs, n->nout)) ||
              set_new(args, "flops", json_integer((json_int_t)n->flops)) ||
              set_new(args, "bytes", json_integer((json_int_t)n->bytes));
    if (bad || json_object_set_new(e, "args", args)) {
        json_decref(e);
        if (bad)
            json_decref(args);
        return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    }
    return emit(x, e);
}

static int cb_tensor(exporter *x, int alloc, const tracer_tensor *t, uint32_t id)
{
    double ts;
    uint64_t pid, tid;
    if (at(x, &ts, &pid, &tid))
        return -1;
    if (alloc) {
        int r = analyze_profile_intern_role(x->mem, t->role ? t->role : "unknown");
        if (r < 0 || analyze_profile_tensor_alloc(x->mem, t->id, r, t->bytes) || shape_put(x, t))
            return analyze_fail_rc(ANALYZE_ERR_NOMEM, "out of memory");
    } else {
        analyze_profile_tensor_free(x->mem, id);
    }
    return on_memory(x, ts, pid);
}

static int cb_tensor_alloc(void *user, uint64_t ns, const tracer_tensor *t)
{
    (void)ns;
    return cb_tensor(user, 1, t, t->id);
}

static int cb_tensor_free(void *user, uint64_t ns, uint32_t id)
{
    (void)ns;
    return cb_tensor(user, 0, NULL, id);
}

static const tracer_decode_cbs export_cbs = {
    .run_begin = cb_run_begin,
    .run_end = cb_run_end,
    .step_begin = cb_step_begin,
    .step_end = cb_step_end,
    .op = cb_op,
    .tensor_alloc = cb_tensor_alloc,
    .tensor_free = cb_tensor_free,
};

analyze_status analyze_export_perfetto(const char *source, FILE *out, analyze_export_stats *st)
{
    exporter x = { .out = out, .st = st, .shapes = BASE_TABLE(struct shape_slot, sizeof(uint32_t)) };
    memset(st, 0, sizeof *st);
    x.mem = analyze_profile_create(source, 0, 0);
    x.meta = json_object();
    analyze_status rc = ANALYZE_ERR_INPUT;
    if (!x.mem || !x.meta) {
        rc = analyze_fail(ANALYZE_ERR_NOMEM, "out of memory");
        goto end;
    }
    fputs("{\"traceEvents\":[", out);
    char why[512];
    tracer_decode_diag g = { 0 };
    if (tracer_read_decode_isolated(source, &export_cbs, &x, &g) != TRACER_OK) {
        snprintf(why, sizeof why, "%s", base_errmsg()); /* the reader's, or the exporter's own */
        /* the reader's messages name the source; the exporter's do not */
        if (strstr(why, source))
            rc = analyze_fail(ANALYZE_ERR_INPUT, "%s", why);
        else
            rc = analyze_fail(ANALYZE_ERR_INPUT, "%s: %s", source, why);
        goto end;
    }
    st->foreign = g.foreign_events;
    if (!st->ops && !st->steps && !x.mem->tensors) {
        rc = analyze_fail(ANALYZE_ERR_INPUT, "%s: no fathom events in the trace (%llu events of other providers)",
                          source, (unsigned long long)st->foreign);
        goto end;
    }
    json_object_set_new(x.meta, "source", json_string(source));
    json_object_set_new(x.meta, "exporter", json_string("fathom export --perfetto"));
    fputs("\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":", out);
    if (json_dumpf(x.meta, out, JSON_COMPACT) != 0 || fputs("}\n", out) == EOF || ferror(out)) {
        rc = analyze_fail(ANALYZE_ERR_INPUT, "cannot write the timeline");
        goto end;
    }
    rc = ANALYZE_OK;
end:
    json_decref(x.meta);
    base_free(x.buf);
    base_table_free(&x.shapes);
    analyze_profile_destroy(x.mem);
    return rc;
}
