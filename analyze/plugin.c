/* plugin.c -- fathom-bt2.so, the Babeltrace2 plugin `fathom`: the same sink
 * as `fathom analyze`, as sink component classes, and the source of
 * `fathom import` (src.fathom.pytorch, analyze/import_source.c)
 *
 *   sink.fathom.breakdown   sink.fathom.compare   sink.fathom.similarity
 *   sink.fathom.roofline    sink.fathom.memory
 *
 * one per ANALYZE_SINK_ROW of the table (analyses.def), each driven by its
 * row: the parameters it takes, create, print, destroy. *
 * so that  babeltrace2 --plugin-path=DIR TRACE... -c sink.fathom.breakdown
 * prints the analysis of every trace it is given (one profile per trace).
 * Parameters: format ("text", "csv", "json"), skip-first, skip-last (steps),
 * top (breakdown, roofline), by ("type", "class": similarity), peak (a
 * `fathom peak --format json` file), gflops and gbs (numbers: roofline's
 * ceilings, overriding peak's), output (a file path; default: standard
 * output).  Warnings go to standard error. */
#include "analyze/analysis.h"
#include "analyze/import.h"
#include "analyze/roofline.h"
#include "analyze/sink.h"
#include "base/alloc.h"
#include "tracer/output.h"

#include <babeltrace2/babeltrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

BT_PLUGIN_MODULE();
BT_PLUGIN(fathom);
BT_PLUGIN_DESCRIPTION("Op-level analyses of fathom deep-learning workload traces");
BT_PLUGIN_AUTHOR("fathom");
BT_PLUGIN_LICENSE("MIT");

typedef struct fathom_sink {
    const analyze_analysis *an; /* the row of the table */
    analyze_sink *sink;
    bt_message_iterator *it;
    cli_format fmt;
    uint32_t top;
    int by_class;
    char *output;
    analyze_peaks peaks; /* roofline: the ceilings */
    int have_peak_file;
    double gflops, gbs; /* roofline: 0, or overriding the peak file's */
} fathom_sink;

typedef struct param_ctx {
    fathom_sink *fs;
    analyze_sink_options *so;
    char err[256];
} param_ctx;

static int get_u32(const bt_value *v, uint32_t *out)
{
    if (bt_value_is_unsigned_integer(v)) {
        uint64_t x = bt_value_integer_unsigned_get(v);
        if (x > UINT32_MAX)
            return -1;
        *out = (uint32_t)x;
        return 0;
    }
    if (bt_value_is_signed_integer(v)) {
        int64_t x = bt_value_integer_signed_get(v);
        if (x < 0 || x > UINT32_MAX)
            return -1;
        *out = (uint32_t)x;
        return 0;
    }
    return -1;
}

/* A positive number (real or integer value) into *out; -1 otherwise. */
static int get_positive(const bt_value *v, double *out)
{
    double x = bt_value_is_real(v)               ? bt_value_real_get(v)
               : bt_value_is_unsigned_integer(v) ? (double)bt_value_integer_unsigned_get(v)
               : bt_value_is_signed_integer(v)   ? (double)bt_value_integer_signed_get(v)
                                                 : -1;
    if (!(x > 0 && x < 1e300))
        return -1;
    *out = x;
    return 0;
}

static bt_value_map_foreach_entry_const_func_status param(const char *key, const bt_value *v, void *data)
{
    param_ctx *c = data;
    const char *s = bt_value_is_string(v) ? bt_value_string_get(v) : NULL;
    int bad = 0;
    if (strcmp(key, "format") == 0) {
        int f = cli_format_from(s, 1);
        bad = f < 0;
        c->fs->fmt = bad ? CLI_TEXT : (cli_format)f;
    } else if (strcmp(key, "skip-first") == 0 && (c->fs->an->takes & ANALYZE_TAKES_WINDOW)) {
        bad = get_u32(v, &c->so->skip_first);
    } else if (strcmp(key, "skip-last") == 0 && (c->fs->an->takes & ANALYZE_TAKES_WINDOW)) {
        bad = get_u32(v, &c->so->skip_last);
    } else if (strcmp(key, "top") == 0 && (c->fs->an->takes & ANALYZE_TAKES_TOP)) {
        bad = get_u32(v, &c->fs->top);
    } else if (strcmp(key, "by") == 0 && (c->fs->an->takes & ANALYZE_TAKES_BY)) {
        bad = !s || (strcmp(s, "type") != 0 && strcmp(s, "class") != 0);
        c->fs->by_class = s && strcmp(s, "class") == 0;
    } else if (strcmp(key, "peak") == 0 && (c->fs->an->takes & ANALYZE_TAKES_PEAKS)) {
        if (!s || analyze_peaks_load(s, &c->fs->peaks) != 0) {
            snprintf(c->err, sizeof c->err, "%s", s ? base_errmsg() : "parameter `peak` wants a file path");
            return BT_VALUE_MAP_FOREACH_ENTRY_CONST_FUNC_STATUS_INTERRUPT;
        }
        c->fs->have_peak_file = 1;
    } else if (strcmp(key, "gflops") == 0 && (c->fs->an->takes & ANALYZE_TAKES_PEAKS)) {
        bad = get_positive(v, &c->fs->gflops);
    } else if (strcmp(key, "gbs") == 0 && (c->fs->an->takes & ANALYZE_TAKES_PEAKS)) {
        bad = get_positive(v, &c->fs->gbs);
    } else if (strcmp(key, "output") == 0) {
        bad = !s || !(c->fs->output = base_strdup(s));
    } else {
        snprintf(c->err, sizeof c->err, "unknown parameter `%s`", key);
        return BT_VALUE_MAP_FOREACH_ENTRY_CONST_FUNC_STATUS_INTERRUPT;
    }
    if (bad) {
        snprintf(c->err, sizeof c->err, "bad value for parameter `%s`", key);
        return BT_VALUE_MAP_FOREACH_ENTRY_CONST_FUNC_STATUS_INTERRUPT;
    }
    return BT_VALUE_MAP_FOREACH_ENTRY_CONST_FUNC_STATUS_OK;
}

static void fathom_sink_free(fathom_sink *fs)
{
    if (!fs)
        return;
    bt_message_iterator_put_ref(fs->it);
    analyze_sink_destroy(fs->sink);
    base_free(fs->output);
    base_free(fs);
}

static bt_component_class_initialize_method_status init(bt_self_component_sink *self, const bt_value *params,
                                                        const analyze_analysis *an)
{
    bt_self_component *comp = bt_self_component_sink_as_self_component(self);
    fathom_sink *fs = base_calloc(1, sizeof *fs);
    if (!fs)
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    fs->an = an;
    analyze_sink_options so = { .per_trace = 1, .source = "trace", .dataflow = (an->takes & ANALYZE_TAKES_FLOW) != 0 };
    param_ctx pc = { .fs = fs, .so = &so };
    if (params && bt_value_is_map(params) &&
        bt_value_map_foreach_entry_const(params, param, &pc) != BT_VALUE_MAP_FOREACH_ENTRY_CONST_STATUS_OK) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: %s", an->name,
                                                            pc.err[0] ? pc.err : "bad parameters");
        fathom_sink_free(fs);
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
    }
    if ((an->takes & ANALYZE_TAKES_PEAKS) &&
        analyze_peaks_override(&fs->peaks, fs->have_peak_file, fs->gflops, fs->gbs) != 0) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(
            comp,
            "sink.fathom.%s: wants the ceilings: peak=PATH (from `fathom peak --format json`), or "
            "gflops and gbs",
            an->name);
        fathom_sink_free(fs);
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_ERROR;
    }
    fs->sink = analyze_sink_create(&so);
    if (!fs->sink ||
        bt_self_component_sink_add_input_port(self, "in", NULL, NULL) != BT_SELF_COMPONENT_ADD_PORT_STATUS_OK) {
        fathom_sink_free(fs);
        return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_MEMORY_ERROR;
    }
    bt_self_component_set_data(comp, fs);
    return BT_COMPONENT_CLASS_INITIALIZE_METHOD_STATUS_OK;
}

/* One initialize method per sink of the table (analyses.def). */
#define ANALYZE_ROW(name)
#define ANALYZE_SINK_ROW(name, desc, help)                                                                       \
    extern const analyze_analysis analyze_row_##name;                                                            \
    static bt_component_class_initialize_method_status name##_init(bt_self_component_sink *self,                 \
                                                                   bt_self_component_sink_configuration *config, \
                                                                   const bt_value *params, void *init_data)      \
    {                                                                                                            \
        (void)config, (void)init_data;                                                                           \
        return init(self, params, &analyze_row_##name);                                                          \
    }
#include "analyze/analyses.def"
#undef ANALYZE_ROW
#undef ANALYZE_SINK_ROW

static void fathom_finalize(bt_self_component_sink *self)
{
    fathom_sink_free(bt_self_component_get_data(bt_self_component_sink_as_self_component(self)));
}

static bt_component_class_sink_graph_is_configured_method_status
fathom_graph_is_configured(bt_self_component_sink *self)
{
    fathom_sink *fs = bt_self_component_get_data(bt_self_component_sink_as_self_component(self));
    bt_self_component_port_input *port = bt_self_component_sink_borrow_input_port_by_name(self, "in");
    if (bt_message_iterator_create_from_sink_component(self, port, &fs->it) !=
        BT_MESSAGE_ITERATOR_CREATE_FROM_SINK_COMPONENT_STATUS_OK)
        return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_ERROR;
    return BT_COMPONENT_CLASS_SINK_GRAPH_IS_CONFIGURED_METHOD_STATUS_OK;
}

/* The end of the messages: the analysis of the profiles, printed. */
static int report(bt_self_component *comp, fathom_sink *fs)
{
    const analyze_analysis *an = fs->an;
    const char *cc = an->name;
    size_t n = 0;
    analyze_profile **p = analyze_sink_take(fs->sink, &n);
    int rc = -1;
    FILE *out = stdout;
    if (!p) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: out of memory", cc);
        return -1;
    }
    if (!n) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: no events", cc);
        goto end;
    }
    for (size_t i = 0; i < n; i++) {
        char w[4096];
        if (analyze_profile_warnings(p[i], w, sizeof w))
            for (char *line = strtok(w, "\n"); line; line = strtok(NULL, "\n"))
                fprintf(stderr, "sink.fathom.%s: warning: %s: %s\n", cc, p[i]->source, line);
    }
    analyze_options ao = { .top = fs->top, .by_class = fs->by_class, .peaks = &fs->peaks };
    void *res = NULL;
    if (an->create(p, n, &ao, &res) != ANALYZE_OK) {
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: %s", cc, base_errmsg());
        goto end;
    }
    char w[1024];
    if (an->mismatch && an->mismatch(res, w, sizeof w))
        fprintf(stderr, "sink.fathom.%s: warning: %s\n", cc, w);
    tracer_output *o = NULL; /* output=PATH follows the output rule: never over a file */
    if (fs->output) {
        if (tracer_output_open(fs->output, NULL, 0, "output=", &o)) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: %s", cc, base_errmsg());
            an->destroy(res);
            goto end;
        }
        out = tracer_output_file(o);
    }
    analyze_status io = an->print(out, res, fs->fmt, &ao);
    an->destroy(res);
    if (fflush(out) != 0 && !io)
        io = analyze_fail(ANALYZE_ERR_IO, "cannot write the output");
    if (o && io) {
        tracer_output_abort(o);
    } else if (o) {
        if (tracer_output_commit(o)) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: %s", cc, base_errmsg());
            io = -1;
        }
    }
    if (io)
        BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: cannot write the output", cc);
    else
        rc = 0;
end:
    for (size_t i = 0; i < n; i++)
        analyze_profile_destroy(p[i]);
    base_free(p);
    return rc;
}

static bt_component_class_sink_consume_method_status fathom_consume(bt_self_component_sink *self)
{
    bt_self_component *comp = bt_self_component_sink_as_self_component(self);
    fathom_sink *fs = bt_self_component_get_data(comp);
    bt_message_array_const msgs;
    uint64_t count = 0;
    switch (bt_message_iterator_next(fs->it, &msgs, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return report(comp, fs) == 0 ? BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_END
                                     : BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_MEMORY_ERROR;
    default: return BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
    }
    bt_component_class_sink_consume_method_status st = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK;
    for (uint64_t i = 0; i < count; i++) {
        if (st == BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_OK && analyze_sink_consume(fs->sink, msgs[i])) {
            BT_CURRENT_THREAD_ERROR_APPEND_CAUSE_FROM_COMPONENT(comp, "sink.fathom.%s: %s", fs->an->name,
                                                                analyze_sink_error(fs->sink));
            st = BT_COMPONENT_CLASS_SINK_CONSUME_METHOD_STATUS_ERROR;
        }
        bt_message_put_ref(msgs[i]);
    }
    return st;
}

#define SINK_CLASS(name, init_fn, desc, help)                              \
    BT_PLUGIN_SINK_COMPONENT_CLASS(name, fathom_consume);                  \
    BT_PLUGIN_SINK_COMPONENT_CLASS_DESCRIPTION(name, desc);                \
    BT_PLUGIN_SINK_COMPONENT_CLASS_HELP(name, help);                       \
    BT_PLUGIN_SINK_COMPONENT_CLASS_INITIALIZE_METHOD(name, init_fn);       \
    BT_PLUGIN_SINK_COMPONENT_CLASS_FINALIZE_METHOD(name, fathom_finalize); \
    BT_PLUGIN_SINK_COMPONENT_CLASS_GRAPH_IS_CONFIGURED_METHOD(name, fathom_graph_is_configured);

#define ANALYZE_ROW(name)
#define ANALYZE_SINK_ROW(name, desc, help) SINK_CLASS(name, name##_init, desc, help)
#include "analyze/analyses.def"
#undef ANALYZE_ROW
#undef ANALYZE_SINK_ROW

/* src.fathom.pytorch: PyTorch traces as schema-2 fathom traces (import_source.c) */
BT_PLUGIN_SOURCE_COMPONENT_CLASS(pytorch, analyze_import_iter_next);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_DESCRIPTION(pytorch, ANALYZE_IMPORT_SOURCE_DESC);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_HELP(pytorch, ANALYZE_IMPORT_SOURCE_HELP);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_INITIALIZE_METHOD(pytorch, analyze_import_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_FINALIZE_METHOD(pytorch, analyze_import_finalize);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_INITIALIZE_METHOD(pytorch, analyze_import_iter_init);
BT_PLUGIN_SOURCE_COMPONENT_CLASS_MESSAGE_ITERATOR_CLASS_FINALIZE_METHOD(pytorch, analyze_import_iter_finalize);
