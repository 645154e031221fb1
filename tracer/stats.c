/* stats.c -- summarize a `fathom` trace through the one decoder (see stats.h). */
#define _GNU_SOURCE
#include "tracer/stats.h"

#include "tracer/archive.h"
#include "tracer/decode.h"
#include "tracer/isolate.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ctx {
    tracer_stats *s;
    const char *last_name; /* event class names are stable: the last one's index */
    int last_index;
} ctx;

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

static int cb_event(void *user, const char *name, uint64_t ts)
{
    ctx *c = user;
    tracer_stats *s = c->s;
    if (!name)
        name = "(unnamed)";
    int i = name == c->last_name ? c->last_index : name_index(s, name);
    c->last_name = name;
    c->last_index = i;
    s->events++;
    if (i >= 0)
        s->names[i].count++;
    else
        s->other_names++;
    if (s->events == 1)
        s->first_ns = ts;
    s->last_ns = ts;
    return 0;
}

static int cb_run_begin(void *user, const tracer_run *r)
{
    tracer_stats *s = ((ctx *)user)->s;
    if (s->runs++)
        return 0;
    s->schema = r->schema;
    s->batch = r->batch;
    s->steps_planned = r->steps;
    s->threads = r->threads;
    s->inter = r->inter;
    s->seed = r->seed;
    snprintf(s->model, sizeof s->model, "%s", r->model ? r->model : "");
    snprintf(s->mode, sizeof s->mode, "%s", r->mode ? r->mode : "");
    snprintf(s->preset, sizeof s->preset, "%s", r->preset ? r->preset : "");
    snprintf(s->version, sizeof s->version, "%s", r->version ? r->version : "");
    snprintf(s->blas, sizeof s->blas, "%s", r->blas ? r->blas : "");
    snprintf(s->cpu, sizeof s->cpu, "%s", r->cpu ? r->cpu : "");
    return 0;
}

static int cb_run_end(void *user, int32_t status, uint64_t ops)
{
    tracer_stats *s = ((ctx *)user)->s;
    s->run_ends++;
    s->run_end_ops += ops;
    s->run_end_status = status;
    return 0;
}

static int cb_step_end(void *user, uint64_t ts, uint32_t step, double loss)
{
    (void)ts, (void)step, (void)loss;
    ((ctx *)user)->s->steps++;
    return 0;
}

static int cb_op(void *user, const tracer_op *op)
{
    tracer_stats *s = ((ctx *)user)->s;
    s->op_time_ns += op->end >= op->begin ? op->end - op->begin : 0;
    return 0;
}

static const tracer_decode_cbs stats_cbs = {
    .event = cb_event,
    .run_begin = cb_run_begin,
    .run_end = cb_run_end,
    .step_end = cb_step_end,
    .op = cb_op,
    .no_dataflow = 1,
};

tracer_status tracer_stats_collect(const tracer_trace *t, tracer_stats *out)
{
    memset(out, 0, sizeof *out);
    ctx c = { .s = out, .last_index = -1 };
    tracer_decode_diag g = { 0 };
    tracer_status rc = tracer_decode_trace_isolated(t, tracer_trace_source(t), &stats_cbs, &c, &g);
    out->discarded_events = g.discarded_events + g.discarded_unknown;
    out->discarded_event_msgs = g.discarded_unknown; /* messages without a count */
    out->discarded_packets = g.discarded_packets;
    out->op_begins = tracer_stats_count_of(out, TRACER_EV_OP_BEGIN);
    out->op_ends = tracer_stats_count_of(out, TRACER_EV_OP_END);
    out->node_defs = tracer_stats_count_of(out, TRACER_EV_NODE_DEF);
    out->ops_events = tracer_stats_count_of(out, TRACER_EV_OPS);
    out->op_pairs = g.records;
    out->op_unmatched = g.unmatched_begin + g.unmatched_end;
    out->undefined_nodes = g.undefined_nodes;
    out->malformed = g.malformed_events;
    out->negative_time = g.negative_time;
    return rc;
}

uint64_t tracer_stats_count_of(const tracer_stats *s, const char *name)
{
    for (size_t i = 0; i < s->nnames; i++)
        if (strcmp(s->names[i].name, name) == 0)
            return s->names[i].count;
    return 0;
}
