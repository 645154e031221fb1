/* imported.h -- replaying the ops of an imported trace (`fathom import`:
 * framework op names such as aten::conv2d) on the engine.
 *
 * The one table of framework ops (tracer/import_ops.def, a plain data
 * header) names for each op its class and the engine op(s) that compute
 * the same thing; its COST column names the op's argument layout (addmm's
 * bias, a, b; linear's x, w, bias; ...). A planner per engine op turns a
 * recorded call (its input shapes, its attrs in the engine op's layout)
 * into the engine nodes to run, or says why it cannot: the op is then
 * demoted (not executed; its recorded time is carried over into the
 * prediction and counted in the coverage statement). */
#ifndef FATHOM_REPLAY_IMPORTED_H
#define FATHOM_REPLAY_IMPORTED_H
#include "exec/exec.h"

/* One entry of the framework op table. */
typedef struct replay_fw_op {
    const char *name;   /* "aten::conv2d" */
    const char *cls;    /* one of the seven class labels */
    const char *engine; /* "Conv2D", "" (none), "A,B" (two) */
    int layout;         /* the COST column (argument layout) */
} replay_fw_op;

/* The table entry of a framework op name, or NULL. */
const replay_fw_op *replay_fw_lookup(const char *name);

/* One recorded input of a framework op call. */
typedef struct replay_fw_arg {
    int ndim;
    int64_t shape[EXEC_MAX_DIMS];
} replay_fw_arg;

/* One engine node of a plan: its op, its inputs' dtypes and shapes (made
 * afresh by the caller: the trace's data flow is not replayed), attrs. */
#define REPLAY_FW_MAX_IN 5
typedef struct replay_fw_node {
    exec_op op;
    int nin;
    struct {
        exec_dtype dtype;
        int ndim;
        int64_t shape[EXEC_MAX_DIMS];
    } in[REPLAY_FW_MAX_IN];
    int nattrs;
    int64_t attrs[EXEC_MAX_ATTRS];
} replay_fw_node;

/* At most this many engine nodes for one call (a _foreach_ op runs one
 * engine op per tensor of its lists). */
#define REPLAY_FW_MAX_NODES 256
/* Which recorded output each node's output must match in size: node k
 * output k (OUT_EACH), the last node output 0 (OUT_LAST: a composite such
 * as attention or gelu), or none. */
enum { REPLAY_FW_OUT_EACH, REPLAY_FW_OUT_LAST, REPLAY_FW_OUT_NONE };
typedef struct replay_fw_plan {
    int nnodes;
    int outs;
    replay_fw_node node[REPLAY_FW_MAX_NODES];
} replay_fw_plan;

/* The engine nodes of a call of op with nin recorded inputs, nout recorded
 * outputs (0 and NULL where the trace records none: a profiler trace) and
 * nattrs recorded attrs; training: the trace is of a training run. NULL and a plan
 * to check against the engine's shape rules, or why the op is demoted (a
 * static string). */
const char *replay_fw_plan_of(const replay_fw_op *op, int nin, const replay_fw_arg *in, int nout,
                              const replay_fw_arg *out, int nattrs, const int64_t *attrs, int training,
                              replay_fw_plan *plan);

/* The engine dtype a recorded dtype label is replayed in; *converted: the
 * label names a dtype the engine lacks (float64, int64, bool...), replayed
 * converted. -1: not a dtype label. "other" (the framework did not say) is
 * taken as float32, PyTorch's default, and not counted as converted. */
int replay_fw_dtype(const char *label, int *converted);
#endif
