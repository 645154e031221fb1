/* decode.h -- the one decoder of fathom traces: Babeltrace2 messages in,
 * the same op records out for trace schema 2 and schema 1 (docs/design.md,
 * "The trace"; fathom-trace(5)).
 *
 * Every reader (the analyses and the plugin's sinks, `info`, the recorder's
 * check, replay, the Perfetto export) feeds the messages of its graph to a
 * decoder and receives callbacks:
 *
 *     tracer_decoder *d = tracer_decoder_create(&cbs, ctx);
 *     ... for each message: tracer_decoder_consume(d, msg) ...
 *     tracer_decoder_finish(d);      (ends the traces: unmatched ops counted)
 *     tracer_decoder_diag_sum(d, &diag);
 *     tracer_decoder_destroy(d);
 *
 * An op record is one op invocation: its node (what it computes, its data
 * flow, its FLOPs and bytes), the thread that ran it, and its begin and end
 * in ns from the trace clock's origin (the events' own time base).
 *   - schema 2: node_def describes the node once; each record of an `ops`
 *     event becomes a record, delivered in the thread's order when the
 *     event arrives (before the step_end of its step);
 *   - schema 1: op_begin and op_end of the same (vtid, seq) make a record,
 *     delivered at the op_end; the node is the op_begin's description and
 *     op_end's costs.
 * Records never reach the consumer twice and are never invented: what is
 * inconsistent (a record naming an undefined node, sequences of unequal
 * lengths, an end before its begin, an op_end without op_begin, run_end
 * disagreeing with the records) is counted in the trace's diagnostics,
 * which readers print as warnings.  Memory grows with the nodes defined
 * and the ops in flight, never with the number of events.
 *
 * Event classes are looked up once and cached (member indices and types),
 * so an event costs a few pointer lookups and no string work. */
#ifndef FATHOM_TRACER_DECODE_H
#define FATHOM_TRACER_DECODE_H

#include <babeltrace2/babeltrace.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include "tracer/schema.def"

/* The schema versions the decoder reads. */
#define TRACER_SCHEMA_V1 1
#define TRACER_SCHEMA_V2 2
#define TRACER_SCHEMA_V3 3 /* schema 2 with ops records packed: man fathom-trace(5) */
#define TRACER_SCHEMA_CURRENT TRACER_SCHEMA_V3
/* Whether the decoder reads schema version s, and the versions it reads in words. */
#define TRACER_SCHEMA_KNOWN(s) ((s) >= TRACER_SCHEMA_V1 && (s) <= TRACER_SCHEMA_V3)
#define TRACER_SCHEMA_READS "1, 2 and 3"
/* The message on a run_begin of another version (its argument a uint32_t). */
#define TRACER_SCHEMA_UNKNOWN \
    "unknown trace schema version %" PRIu32 " (this fathom reads versions " TRACER_SCHEMA_READS ")"

/* The provider's event names (the schema's, section 4). */
#define TRACER_EV_RUN_BEGIN "fathom:run_begin"
#define TRACER_EV_RUN_END "fathom:run_end"
#define TRACER_EV_STEP_BEGIN "fathom:step_begin"
#define TRACER_EV_STEP_END "fathom:step_end"
#define TRACER_EV_NODE_DEF "fathom:node_def"
#define TRACER_EV_OPS "fathom:ops"
#define TRACER_EV_TENSOR_ALLOC "fathom:tensor_alloc"
#define TRACER_EV_TENSOR_FREE "fathom:tensor_free"
#define TRACER_EV_RUN_STATE "fathom:run_state"       /* statedump */
#define TRACER_EV_GRAPH_TOTALS "fathom:graph_totals" /* statedump */
#define TRACER_EV_OP_BEGIN "fathom:op_begin"         /* schema 1 */
#define TRACER_EV_OP_END "fathom:op_end"             /* schema 1 */
#define TRACER_EV_RUNTIME "fathom:runtime"           /* import only */

/* A field of the schema (tracer/schema.def) as a member of the structs
 * below: enumerations by their label. */
#define TRACER_MEMBER_SCHEMA(ctype, name) ctype name;
#define TRACER_MEMBER_INT(ctype, name) ctype name;
#define TRACER_MEMBER_FLOAT(ctype, name) ctype name;
#define TRACER_MEMBER_STRING(ctype, name) const char *name;
#define TRACER_MEMBER_ENUM(ctype, name) const char *name;

/* run_begin (strings borrowed for the call; NULL when absent). The
 * consumer receives it whatever its schema: one it does not read is its
 * error to report. */
typedef struct tracer_run {
#define TRACER_RUN_MEMBER(x, group, name, kind, ctype, src, len, need) TRACER_MEMBER_##kind(ctype, name)
    FATHOM_SCHEMA_RUN(TRACER_RUN_MEMBER, _)
} tracer_run;

/* run_state's account of the run so far (the statedump a recorder
 * streaming live emits for viewers that join late, fathom-trace(5)): the
 * steps completed, their time, and the op invocations outside steps. */
typedef struct tracer_state {
    FATHOM_SCHEMA_STATE(TRACER_RUN_MEMBER, _)
} tracer_state;

/* A graph node: a node_def (schema 2) or an op_begin's description
 * (schema 1). Labels are NULL when the value has none; *_value is the enum's
 * integer (-1 when absent). Borrowed for the call. */
typedef struct tracer_node {
    uint32_t graph, node;
    const char *op, *cls, *phase;
    int64_t op_value, cls_value, phase_value;
    uint32_t nin, nout, nattrs;
    const uint32_t *inputs, *outputs;
    const int64_t *attrs;
    uint64_t flops, bytes;
} tracer_node;

/* One op invocation. */
typedef struct tracer_op {
    const tracer_node *node;
    uint64_t begin, end; /* ns from origin; end >= begin (schema 1: unless counted as negative_time) */
    uint64_t vpid, vtid;
    uint64_t launch; /* an imported GPU trace's launch number: a host op and the device activity it launched share
                      * one; 0 none (fathom-trace(5), ops.launches) */
    uint64_t call;   /* a device activity's runtime call (tracer_call.id); 0 none (ops.calls) */
} tracer_op;

/* An imported GPU trace's runtime call on a host thread (fathom-trace(5),
 * runtime): what it is, when it ran, and its number, which the device
 * activities it launched carry (tracer_op.call). */
enum tracer_call_kind {
    TRACER_CALL_LAUNCH,
    TRACER_CALL_SYNC,
    TRACER_CALL_MEMCPY,
    TRACER_CALL_OTHER,
    TRACER_CALL_NKIND
};
typedef struct tracer_call {
    uint64_t begin, end; /* ns from origin; end >= begin */
    uint64_t vpid, vtid;
    uint32_t id;   /* from 1 */
    uint32_t kind; /* enum tracer_call_kind (an unknown value reads as other) */
} tracer_call;

typedef struct tracer_tensor {
    uint32_t id;
    const char *role, *dtype; /* labels, NULL when absent */
    int64_t role_value;
    uint32_t ndim; /* dims in shape (at most TRACER_MAX_DIMS are kept) */
    uint32_t shape[8];
    int shape_ok; /* shape present and at most 8 dims */
    uint64_t bytes;
} tracer_tensor;
#define TRACER_MAX_DIMS 8

/* What went wrong while decoding one trace: every non-zero count is a
 * warning (tracer_decode_diag_print). */
typedef struct tracer_decode_diag {
    uint64_t events;            /* all events seen */
    uint64_t foreign_events;    /* events of other providers (ignored) */
    uint64_t unknown_events;    /* fathom:* events this schema does not define */
    uint64_t malformed_events;  /* fathom events missing a field, with sequences of unequal lengths, or a
                                 * run_begin of schema 0 (zeroed bytes) */
    uint64_t discarded_events;  /* lost by the tracer (discarded-events messages) */
    uint64_t discarded_packets; /* lost by the tracer (discarded-packets messages) */
    uint64_t discarded_unknown; /* discarded-events messages without a count */
    uint64_t unmatched_begin;   /* schema 1: op_begin without op_end */
    uint64_t unmatched_end;     /* schema 1: op_end without op_begin */
    uint64_t duplicate_begin;   /* schema 1: op_begin whose (vtid, seq) was already pending */
    uint64_t undefined_nodes;   /* schema 2: records naming a node no node_def described */
    uint64_t redefined_nodes;   /* schema 2: node_defs of a node already described differently */
    uint64_t negative_time;     /* records ending before they begin, or (schema 2) outside their thread's ops events:
                                 * delivered as 0 ns */
    uint64_t records;           /* op records delivered */
    uint64_t run_end_ops;       /* sum of run_end.ops */
    uint64_t run_ends;
    uint32_t schema;     /* run_begin.schema (0: none seen) */
    uint32_t bad_schema; /* a run_begin of a schema this decoder does not read */
} tracer_decode_diag;

/* Callbacks: each returns 0, or -1 to stop decoding (with the consumer's
 * own message). `user` is what trace_begin returned for the event's trace
 * (ctx when trace_begin is NULL). Any member may be NULL. */
typedef struct tracer_decode_cbs {
    void *(*trace_begin)(void *ctx, const bt_trace *trace);  /* NULL: out of memory */
    int (*event)(void *user, const char *name, uint64_t ts); /* every event, foreign ones too */
    int (*run_begin)(void *user, const tracer_run *run);
    int (*run_end)(void *user, int32_t status, uint64_t ops);
    int (*step_begin)(void *user, uint64_t ts, uint32_t step);
    int (*step_end)(void *user, uint64_t ts, uint32_t step, double loss);
    int (*node_def)(void *user, const tracer_node *node, uint64_t ts); /* schema 2 */
    int (*op)(void *user, const tracer_op *op);
    int (*tensor_alloc)(void *user, uint64_t ts, const tracer_tensor *t);
    int (*tensor_free)(void *user, uint64_t ts, uint32_t id);
    int (*call)(void *user, const tracer_call *c); /* imported GPU traces only */
    /* A trace read from its middle (a live viewer that joined late: its
     * first run_begin or run_state is a run_state): what was delivered
     * before is partial and the consumer starts again from `st` (the run
     * so far); then `totals` gives each graph's nodes' op invocations up to
     * its graph_totals, whose records before it are never delivered.
     * Traces read from their start never call these (repeated node_defs
     * keep one definition; the statedump's events are skipped). */
    int (*run_state)(void *user, const tracer_run *run, const tracer_state *st);
    int (*totals)(void *user, const tracer_node *node, uint64_t count, uint64_t ns, uint64_t min_ns, uint64_t max_ns);
    /* Isolated decoding (isolate.h) only: called with ctx every tick_s
     * seconds while the decoding goes on (a live trace's tables so far). */
    int (*tick)(void *ctx);
    double tick_s;
    /* 1: the consumer needs no data flow (the nodes' inputs, outputs and
     * attrs are left empty; schema-1 decoding is cheaper for it) */
    int no_dataflow;
} tracer_decode_cbs;

typedef struct tracer_decoder tracer_decoder;

/* NULL on out of memory. */
tracer_decoder *tracer_decoder_create(const tracer_decode_cbs *cbs, void *ctx);
void tracer_decoder_destroy(tracer_decoder *d);
/* 0, or -1: a callback stopped it, or out of memory (tracer_decoder_error). */
int tracer_decoder_consume(tracer_decoder *d, const bt_message *msg);
/* Ends every trace: schema-1 ops still pending become unmatched_begin;
 * run_end's count is checked against the records. */
void tracer_decoder_finish(tracer_decoder *d);
/* During a callback (of this thread's decoder, or of an isolated decoding,
 * isolate.h): the event's time (ns from origin) and its vpid and vtid
 * contexts (0 when absent). */
void tracer_decode_current(uint64_t *ts, uint64_t *vpid, uint64_t *vtid);
void tracer_decode_set_current(uint64_t ts, uint64_t vpid, uint64_t vtid);
/* *out += *in, field by field (the schema fields: the first non-zero). */
void tracer_decode_diag_add(tracer_decode_diag *out, const tracer_decode_diag *in);
/* "out of memory" or "" when a callback stopped the decoding. */
const char *tracer_decoder_error(const tracer_decoder *d);
/* The diagnostics of the trace whose consumer pointer is `user`, or of all
 * traces together when user is NULL, added into *out. */
void tracer_decoder_diag_sum(const tracer_decoder *d, const void *user, tracer_decode_diag *out);

#endif
