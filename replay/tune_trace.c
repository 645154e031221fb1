/* tune_trace.c -- the tuner's target for a program rebuilt from a trace
 * (see tune.h: replay_tune_trace_target): one pass of the trace a step. */
#include "replay/tune.h"
#include "replay/tune_machine.h"

#include "base/alloc.h"
#include "base/clock.h"

#include <stdio.h>
#include <string.h>

typedef struct trace_inst {
    replay_program *p;
    exec_settings set;
    int inter;
} trace_inst;

static exec_status trace_open(void *ctx, const replay_tune_knobs *k, const exec_hooks *hooks, void **out)
{
    trace_inst *i = base_calloc(1, sizeof *i);
    if (!i)
        return exec_fail(EXEC_ERR_NOMEM, "out of memory");
    i->p = ctx;
    i->set = (exec_settings){ .threads = k->threads, .conv_algo = k->conv_algo, .bind = k->bind, .hooks = hooks };
    i->inter = k->inter;
    *out = i;
    return EXEC_OK;
}

static exec_status trace_step(void *inst, uint64_t *ns)
{
    trace_inst *i = inst;
    exec_run_opts ro = { .inter = i->inter, .max_phase = EXEC_PHASE_update, .settings = &i->set };
    double t0 = base_now_s();
    exec_status s = exec_graph_run(i->p->g, &ro);
    *ns = (uint64_t)((base_now_s() - t0) * 1e9);
    return s;
}

static exec_status trace_retune(void *inst, const replay_tune_knobs *k, const exec_hooks *hooks)
{
    trace_inst *i = inst;
    i->set = (exec_settings){ .threads = k->threads, .conv_algo = k->conv_algo, .bind = k->bind, .hooks = hooks };
    i->inter = k->inter;
    return EXEC_OK;
}

static void trace_close(void *inst) { base_free(inst); }

static const exec_graph *trace_graph(void *inst) { return ((const trace_inst *)inst)->p->g; }

exec_status replay_tune_trace_target(replay_program *p, replay_tune_target *t)
{
    if (p->rec.schema == 1)
        return exec_fail(EXEC_ERR_ARG, "a schema-1 trace has no data flow (node_def): record it with this fathom");
    int flow = 0;
    for (uint32_t i = 0; i < p->nops && !flow; i++)
        flow = p->ops[i].unknown < 0 && p->ops[i].nin + p->ops[i].nout > 0;
    if (!flow)
        return exec_fail(EXEC_ERR_ARG, "the trace has no data flow (its ops name no tensors)");
    memset(t, 0, sizeof *t);
    t->ctx = p;
    snprintf(t->what, sizeof t->what, "%s %s (%s)", p->rec.model[0] ? p->rec.model : "?", p->rec.mode, p->rec.preset);
    t->batch = p->rec.batch > 0 ? (int)p->rec.batch : 1;
    t->batch_fixed = 1;
    t->steps_per_run = p->nsteps ? (int)p->nsteps : 1;
    t->open = trace_open;
    t->step = trace_step;
    t->retune = trace_retune;
    t->close = trace_close;
    t->graph = trace_graph;
    return EXEC_OK;
}
