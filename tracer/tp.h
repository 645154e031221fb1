/* tp.h -- the LTTng-UST tracepoint provider `fathom`, trace schema version 3
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

#include "tracer/schema.def"
#include "tracer/tp_enums.h"

#define FATHOM_TP_SCHEMA 3

#ifndef FATHOM_TP_ARGS_DEFINED
#define FATHOM_TP_ARGS_DEFINED
/* The events' arguments, their members expanded from tracer/schema.def:
 * TP_MEMBER_<kind>(ctype, src) for each row the provider writes (not the
 * schema, a constant, nor the rows of `import`). A sequence's length is a
 * member by hand, before the rows: several sequences share one, and the
 * event's field names it (a missing one does not compile). */
/* clang-format off */
#define TP_MEMBER(x, group, name, kind, ctype, src, len, need) TP_MEMBER_##group(kind, ctype, src)
#define TP_MEMBER_run(kind, ctype, src) TP_MEMBER_##kind(ctype, src)
#define TP_MEMBER_ev(kind, ctype, src) TP_MEMBER_##kind(ctype, src)
#define TP_MEMBER_packed(kind, ctype, src) TP_MEMBER_##kind(ctype, src)
#define TP_MEMBER_import(kind, ctype, src)
#define TP_MEMBER_SCHEMA(ctype, src)
#define TP_MEMBER_INT(ctype, src) ctype src;
#define TP_MEMBER_FLOAT(ctype, src) ctype src;
#define TP_MEMBER_ENUM(ctype, src) ctype src;
#define TP_MEMBER_STRING(ctype, src) const ctype *src;
#define TP_MEMBER_SEQ(ctype, src) const ctype *src;
/* clang-format on */

/* run_begin's fields (strings never NULL). */
struct fathom_tp_run {
    FATHOM_SCHEMA_RUN(TP_MEMBER, _)
};
/* node_def's fields. */
struct fathom_tp_node {
    uint32_t nin, nout, nattrs;
    FATHOM_SCHEMA_node_def(TP_MEMBER, _)
};
/* run_state's fields: run_begin's description and the run so far (a
 * statedump for a viewer that joins late). */
struct fathom_tp_state {
    const struct fathom_tp_run *run;
    FATHOM_SCHEMA_STATE(TP_MEMBER, _)
};
/* graph_totals' fields: the op invocations of n nodes of one graph so far. */
struct fathom_tp_totals {
    uint32_t n;
    FATHOM_SCHEMA_graph_totals(TP_MEMBER, _)
};
/* ops' fields: n records of one thread, one graph, either packed (npacked
 * = n gaps and durations from base, nwide = 0) or exact (nwide = n
 * begins and ends, npacked = 0): tracer/opspack.h. */
struct fathom_tp_ops {
    uint32_t n, nwide, npacked;
    FATHOM_SCHEMA_ops(TP_MEMBER, _)
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

/* ---- the events, expanded from tracer/schema.def ------------------------ */
/* A row's field: TP_<kind>(ctype, name, value, length), the value and the
 * length taken through TP_<group>, which each event defines for its
 * arguments just before it; rows of `import` are not the provider's. */
#define TP_FIELD(x, group, name, kind, ctype, src, len, need) TP_FIELD_##group(name, kind, ctype, src, len)
#define TP_FIELD_run(name, kind, ctype, src, len) TP_##kind(ctype, name, TP_run(src), TP_run(len))
#define TP_FIELD_ev(name, kind, ctype, src, len) TP_##kind(ctype, name, TP_ev(src), TP_ev(len))
#define TP_FIELD_packed(name, kind, ctype, src, len) TP_##kind(ctype, name, TP_ev(src), TP_ev(len))
#define TP_FIELD_import(name, kind, ctype, src, len) /* not the provider's */
#define TP_SCHEMA(ctype, name, v, n) lttng_ust_field_integer(ctype, name, FATHOM_TP_SCHEMA)
#define TP_INT(ctype, name, v, n) lttng_ust_field_integer(ctype, name, v)
#define TP_FLOAT(ctype, name, v, n) lttng_ust_field_float(ctype, name, v)
#define TP_STRING(ctype, name, v, n) lttng_ust_field_string(name, v)
#define TP_ENUM(ctype, name, v, n) lttng_ust_field_enum(fathom, name, ctype, name, v)
#define TP_SEQ(ctype, name, v, n) lttng_ust_field_sequence(ctype, name, v, uint32_t, n)

/* ---- runs and steps ---------------------------------------------------- */
#undef TP_run
#define TP_run(m) info->m
LTTNG_UST_TRACEPOINT_EVENT(fathom, run_begin,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_run *, info),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_run_begin(TP_FIELD, _))
)

#undef TP_ev
#define TP_ev(m) m
LTTNG_UST_TRACEPOINT_EVENT(fathom, run_end,
    LTTNG_UST_TP_ARGS(int32_t, status, uint64_t, ops),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_run_end(TP_FIELD, _))
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, step_begin,
    LTTNG_UST_TP_ARGS(uint32_t, step),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_step_begin(TP_FIELD, _))
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, step_end,
    LTTNG_UST_TP_ARGS(uint32_t, step, double, loss),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_step_end(TP_FIELD, _))
)

/* ---- the statedump (a live viewer that joins late) ---------------------- */
#undef TP_run
#define TP_run(m) st->run->m
#undef TP_ev
#define TP_ev(m) st->m
LTTNG_UST_TRACEPOINT_EVENT(fathom, run_state,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_state *, st),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_run_state(TP_FIELD, _))
)

#undef TP_ev
#define TP_ev(m) t->m
LTTNG_UST_TRACEPOINT_EVENT(fathom, graph_totals,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_totals *, t),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_graph_totals(TP_FIELD, _))
)

/* ---- nodes and op invocations ------------------------------------------ */
#undef TP_ev
#define TP_ev(m) d->m
LTTNG_UST_TRACEPOINT_EVENT(fathom, node_def,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_node *, d),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_node_def(TP_FIELD, _))
)

#undef TP_ev
#define TP_ev(m) b->m
LTTNG_UST_TRACEPOINT_EVENT(fathom, ops,
    LTTNG_UST_TP_ARGS(const struct fathom_tp_ops *, b),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_ops(TP_FIELD, _))
)

/* ---- tensors ----------------------------------------------------------- */
#undef TP_ev
#define TP_ev(m) m
LTTNG_UST_TRACEPOINT_EVENT(fathom, tensor_alloc,
    LTTNG_UST_TP_ARGS(uint32_t, id, uint8_t, role, uint8_t, dtype, uint32_t, ndim, const uint32_t *, shape,
                      uint64_t, bytes),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_tensor_alloc(TP_FIELD, _))
)

LTTNG_UST_TRACEPOINT_EVENT(fathom, tensor_free,
    LTTNG_UST_TP_ARGS(uint32_t, id),
    LTTNG_UST_TP_FIELDS(FATHOM_SCHEMA_tensor_free(TP_FIELD, _))
)

/* clang-format on */
#endif /* FATHOM_TRACER_TP_H */

#include <lttng/tracepoint-event.h>
