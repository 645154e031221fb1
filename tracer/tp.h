/* tp.h -- the LTTng-UST tracepoint provider `fathom`, trace schema version 1
 * (DESIGN.md section 4; man fathom-trace(5)).  Field and event names are a
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
 * tp_enums.h in the build tree); the values are the engine's enum values. */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER fathom

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "tracer/tp.h"

#if !defined(FATHOM_TRACER_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define FATHOM_TRACER_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

#include "exec/exec.h"
#include "tracer/tp_enums.h"

#define FATHOM_TP_SCHEMA 1

/* ---- enums ------------------------------------------------------------- */
LTTNG_UST_TRACEPOINT_ENUM(fathom, op, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_OP_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, cls, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_CLS_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, phase, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_PHASE_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, role, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_ROLE_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, dtype, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_DTYPE_VALUES))
LTTNG_UST_TRACEPOINT_ENUM(fathom, mode, LTTNG_UST_TP_ENUM_VALUES(FATHOM_TP_MODE_VALUES))

/* ---- runs and steps ---------------------------------------------------- */
/* Strings must not be NULL (hooks.c maps NULL to ""). */
LTTNG_UST_TRACEPOINT_EVENT(fathom, run_begin,
    LTTNG_UST_TP_ARGS(const exec_run_info *, info, uint8_t, mode),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, schema, FATHOM_TP_SCHEMA)
        lttng_ust_field_string(model, info->model)
        lttng_ust_field_enum(fathom, mode, uint8_t, mode, mode)
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

/* ---- ops --------------------------------------------------------------- */
/* `cls` is passed in so that the probe needs no symbol of the engine. */
LTTNG_UST_TRACEPOINT_EVENT(fathom, op_begin,
    LTTNG_UST_TP_ARGS(uint64_t, seq, const exec_node *, n, uint8_t, cls, const uint32_t *, in, const uint32_t *, out),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, seq, seq)
        lttng_ust_field_enum(fathom, op, uint16_t, op, n->op)
        lttng_ust_field_enum(fathom, cls, uint8_t, cls, cls)
        lttng_ust_field_enum(fathom, phase, uint8_t, phase, n->phase)
        lttng_ust_field_integer(uint32_t, node, n->id)
        lttng_ust_field_sequence(uint32_t, inputs, in, uint32_t, n->nin)
        lttng_ust_field_sequence(uint32_t, outputs, out, uint32_t, n->nout)
        lttng_ust_field_sequence(int64_t, attrs, n->attrs, uint32_t, n->nattrs)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, op_end,
    LTTNG_UST_TP_ARGS(uint64_t, seq, uint64_t, flops, uint64_t, bytes),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, seq, seq)
        lttng_ust_field_integer(uint64_t, flops, flops)
        lttng_ust_field_integer(uint64_t, bytes, bytes)
    )
)

/* ---- tensors ----------------------------------------------------------- */
/* `shape` is the tensor's shape as u32 (t->ndim entries; hooks.c converts). */
LTTNG_UST_TRACEPOINT_EVENT(fathom, tensor_alloc,
    LTTNG_UST_TP_ARGS(const exec_tensor *, t, uint32_t, id, const uint32_t *, shape),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, id, id)
        lttng_ust_field_enum(fathom, role, uint8_t, role, t->role)
        lttng_ust_field_enum(fathom, dtype, uint8_t, dtype, t->dtype)
        lttng_ust_field_sequence(uint32_t, shape, shape, uint32_t, t->ndim)
        lttng_ust_field_integer(uint64_t, bytes, t->bytes)
    )
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, tensor_free,
    LTTNG_UST_TP_ARGS(uint32_t, id),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, id, id)
    )
)

#endif /* FATHOM_TRACER_TP_H */

#include <lttng/tracepoint-event.h>
