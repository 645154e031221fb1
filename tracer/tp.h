/* tp.h -- the LTTng-UST tracepoint provider `fathom`, trace schema version 2
 * (docs/design.md, "The trace"; man fathom-trace(5)).  Each graph node is described
 * once (node_def); op invocations are timed by the executing thread into a
 * buffer of its own and emitted in batches (ops).  Field and event names are a
 * contract: analyzers, replay and outside tools read them.
 *
 * Built the lttng-ust way, in three files: this header (the event
 * definitions), tp.c (LTTNG_UST_TRACEPOINT_CREATE_PROBES: the probes, built
 * as libfathom-tp.so), and the one compilation unit that fires the events
 * (hooks.c: LTTNG_UST_TRACEPOINT_DEFINE with
 * LTTNG_UST_TRACEPOINT_PROBE_DYNAMIC_LINKAGE, so `fathom` itself never links
 * liblttng-ust: the probe is dlopen'ed only in a traced run).
 *
 * The enum labels are generated from the engine's tables (tp_gen.c ->
 * tp_enums.h in the build tree); the values are the engine's enum values.
 * The provider includes no engine header: the events take plain values and
 * the small argument structs below (filled by hooks.c), so the dependency
 * stays one-way (the engine's hooks -> the provider). */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER fathom

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tracer/tp.h"

#if !defined(FATHOM_TRACER_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define FATHOM_TRACER_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#include "tracer/tp_enums.h"

#define FATHOM_TP_SCHEMA 2

#ifndef FATHOM_TP_ARGS_DEFINED
#define FATHOM_TP_ARGS_DEFINED
/* run_begin's fields (strings never NULL). */
struct fathom_tp_run {
    const char *model, *preset, *version, *blas, *cpu;
    uint8_t mode;
    uint32_t batch, steps, threads, inter;
    uint64_t seed;
};
/* node_def's fields. */
struct fathom_tp_node {
    uint32_t graph, node;
    uint16_t op;
    uint8_t cls, phase;
    uint32_t nin, nout, nattrs;
    const uint32_t *in, *out;
    const int64_t *attrs;
    uint64_t flops, bytes;
};
/* run_state's fields: run_begin's description and the run so far (a
 * statedump for a viewer that joins late). */
struct fathom_tp_state {
    const struct fathom_tp_run *run;
    uint64_t steps_done, step_ns, step_min_ns, step_max_ns, outside_ops;
};
/* graph_totals' fields: the op invocations of n nodes of one graph so far. */
struct fathom_tp_totals {
    uint32_t graph, n;
    const uint32_t *nodes;
    const uint64_t *counts, *ns, *min_ns, *max_ns;
};
/* ops' fields: n records of one thread, one graph. */
struct fathom_tp_ops {
    uint32_t graph, n;
    const uint32_t *nodes;
    const uint64_t *begins, *ends;
};
#endif

/* ---- enums ------------------------------------------------------------- */
/* the tracepoint macros keep LTTng-UST's layout, one field a line */
/* clang-format off */
LTTNG_UST_TRACEPOINT_ENUM(fathom, op, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_OP_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, cls, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_CLS_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, phase, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_PHASE_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, role, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_ROLE_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, dtype, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_DTYPE_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, mode, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_MODE_VALUES))

/* ---- runs and steps ---------------------------------------------------- */
LTTNG_UST_TRACEPOINT_EVENT(fathom, run_begin,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_run *, info),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, schema, FATHOM_TP_SCHEMA)
        lttng_ust_field_string(model, info->model)
        lttng_ust_field_enum(fathom, mode, uint8_t, mode, info->mode)
        lttng_ust_field_string(preset, info->preset)
        lttng_ust_field_integer(uint32_t, batch, info->batch)
        lttng_ust_field_integer(uint32_t, steps, info->steps)
        lttng_ust_field_integer(uint32_t, threads, info->threads)
        lttng_ust_field_integer(uint32_t, inter, info->inter)
        lttng_ust_field_integer(uint64_t, seed, info->seed)
        lttng_ust_field_string(version, info->version)
        lttng_ust_field_string(blas, info->blas)
        lttng_ust_field_string(cpu, info->cpu)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, run_end,
    LTTNG_UST_TP_ARGS(int32_t, status, uint64_t, ops),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int32_t, status, status)
        lttng_ust_field_integer(uint64_t, ops, ops)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, step_begin,
    LTTNG_UST_TP_ARGS(uint32_t, step),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, step, step)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, step_end,
    LTTNG_UST_TP_ARGS(uint32_t, step, double, loss),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, step, step)
        lttng_ust_field_float(double, loss, loss)
    )
)

/* ---- the statedump (a live viewer that joins late) ---------------------- */
LTTNG_UST_TRACEPOINT_EVENT(fathom, run_state,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_state *, st),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, schema, FATHOM_TP_SCHEMA)
        lttng_ust_field_string(model, st->run->model)
        lttng_ust_field_enum(fathom, mode, uint8_t, mode, st->run->mode)
        lttng_ust_field_string(preset, st->run->preset)
        lttng_ust_field_integer(uint32_t, batch, st->run->batch)
        lttng_ust_field_integer(uint32_t, steps, st->run->steps)
        lttng_ust_field_integer(uint32_t, threads, st->run->threads)
        lttng_ust_field_integer(uint32_t, inter, st->run->inter)
        lttng_ust_field_integer(uint64_t, seed, st->run->seed)
        lttng_ust_field_string(version, st->run->version)
        lttng_ust_field_string(blas, st->run->blas)
        lttng_ust_field_string(cpu, st->run->cpu)
        lttng_ust_field_integer(uint64_t, steps_done, st->steps_done)
        lttng_ust_field_integer(uint64_t, step_ns, st->step_ns)
        lttng_ust_field_integer(uint64_t, step_min_ns, st->step_min_ns)
        lttng_ust_field_integer(uint64_t, step_max_ns, st->step_max_ns)
        lttng_ust_field_integer(uint64_t, outside_ops, st->outside_ops)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, graph_totals,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_totals *, t),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, graph, t->graph)
        lttng_ust_field_sequence(uint32_t, nodes, t->nodes, uint32_t, t->n)
        lttng_ust_field_sequence(uint64_t, counts, t->counts, uint32_t, t->n)
        lttng_ust_field_sequence(uint64_t, ns, t->ns, uint32_t, t->n)
        lttng_ust_field_sequence(uint64_t, min_ns, t->min_ns, uint32_t, t->n)
        lttng_ust_field_sequence(uint64_t, max_ns, t->max_ns, uint32_t, t->n)
    )
)

/* ---- nodes and op invocations ------------------------------------------ */
LTTNG_UST_TRACEPOINT_EVENT(fathom, node_def,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_node *, d),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, graph, d->graph)
        lttng_ust_field_integer(uint32_t, node, d->node)
        lttng_ust_field_enum(fathom, op, uint16_t, op, d->op)
        lttng_ust_field_enum(fathom, cls, uint8_t, cls, d->cls)
        lttng_ust_field_enum(fathom, phase, uint8_t, phase, d->phase)
        lttng_ust_field_sequence(uint32_t, inputs, d->in, uint32_t, d->nin)
        lttng_ust_field_sequence(uint32_t, outputs, d->out, uint32_t, d->nout)
        lttng_ust_field_sequence(int64_t, attrs, d->attrs, uint32_t, d->nattrs)
        lttng_ust_field_integer(uint64_t, flops, d->flops)
        lttng_ust_field_integer(uint64_t, bytes, d->bytes)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, ops,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_ops *, b),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, graph, b->graph)
        lttng_ust_field_sequence(uint32_t, nodes, b->nodes, uint32_t, b->n)
        lttng_ust_field_sequence(uint64_t, begins, b->begins, uint32_t, b->n)
        lttng_ust_field_sequence(uint64_t, ends, b->ends, uint32_t, b->n)
    )
)

/* ---- tensors ----------------------------------------------------------- */
LTTNG_UST_TRACEPOINT_EVENT(fathom, tensor_alloc,
    LTTNG_UST_TP_ARGS(uint32_t, id, uint8_t, role, uint8_t, dtype, uint32_t, ndim, const uint32_t *, shape,
                      uint64_t, bytes),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, id, id)
        lttng_ust_field_enum(fathom, role, uint8_t, role, role)
        lttng_ust_field_enum(fathom, dtype, uint8_t, dtype, dtype)
        lttng_ust_field_sequence(uint32_t, shape, shape, uint32_t, ndim)
        lttng_ust_field_integer(uint64_t, bytes, bytes)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, tensor_free,
    LTTNG_UST_TP_ARGS(uint32_t, id),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, id, id)
    )
)

/* clang-format on */
#endif /* FATHOM_TRACER_TP_H */

#include <lttng/tracepoint-event.h>
