/* program.h -- an op program rebuilt from a trace: the recorded tensors and
 * the recorded op invocations in their recorded order, grouped by step. It
 * is filled from decoded trace events (replay/load.c) and turned into an
 * engine graph (replay/program.c). Nothing here needs a model's code. */
#ifndef FATHOM_REPLAY_PROGRAM_H
#define FATHOM_REPLAY_PROGRAM_H
#include "exec/exec.h"

typedef struct replay_tensor {
    uint32_t id; /* the recorded id */
    exec_role role;
    exec_dtype dtype;
    int ndim;
    int64_t shape[EXEC_MAX_DIMS];
    uint8_t converted;  /* recorded in a dtype the engine lacks (float64, int64...):
                               replayed as float32 or int32 */
    uint32_t engine_id; /* its tensor in the rebuilt graph (0: no engine op reads it) */
} replay_tensor;

typedef struct replay_op {
    exec_op op;
    exec_phase phase;
    uint32_t step; /* recorded step */
    int nin, nout, nattrs;
    uint32_t in[EXEC_MAX_ATTRS], out[EXEC_MAX_ATTRS]; /* recorded tensor ids */
    uint32_t *in_more, *out_more;                     /* more than EXEC_MAX_ATTRS (AddN of many) */
    int64_t attrs[EXEC_MAX_ATTRS];
    uint64_t rec_ns;               /* recorded duration */
    uint32_t node;                 /* its (first) node in the rebuilt graph */
    int unknown;                   /* -1, or an op this version does not know: its index in
                               replay_program.unknown (not replayed, node unset) */
    const struct replay_fw_op *fw; /* NULL, or the framework op of an imported trace
                               (replay/imported.h): run as nnodes engine nodes from
                               `node` on, or demoted (nnodes 0) for the reason `why` */
    int nnodes;
    const char *why; /* a demoted op: why it is not replayed (static) */
    int converted;   /* a framework op whose inputs were recorded in a dtype
                               the engine lacks: replayed converted */
} replay_op;

/* An op type the trace names and this version does not know. */
typedef struct replay_unknown {
    char name[48];
} replay_unknown;

/* Measured device time of an imported GPU trace: its records of a device
 * class ("device.*": a linked execution trace's, one per op that launched
 * kernels and named as the op; a profiler trace's kernels), not ops of the
 * program. Per name, summed over the kept steps. */
typedef struct replay_device {
    char name[96];
    uint64_t ns;
} replay_device;

typedef struct replay_machine {
    char model[64], mode[16], preset[16], cpu[128], blas[256], version[32];
    uint32_t threads, inter, batch, steps;
    uint32_t schema; /* the trace's schema version */
} replay_machine;

typedef struct replay_program {
    replay_machine rec;     /* from run_begin */
    replay_tensor *tensors; /* sorted by id after load */
    uint32_t ntensors;
    size_t cap_tensors; /* base_grow's */
    replay_op *ops;
    uint32_t nops;
    size_t cap_ops;
    uint32_t nsteps;         /* steps with ops kept */
    uint64_t rec_step_ns;    /* sum of kept steps' durations */
    uint64_t rec_op_ns;      /* sum of kept ops' durations */
    uint64_t skipped;        /* op invocations outside kept steps */
    replay_unknown *unknown; /* op types not known here (their ops are not replayed) */
    uint32_t nunknown;
    replay_device *dev; /* measured device time by name (none: ndev 0) */
    uint32_t ndev;
    size_t cap_dev;
    uint64_t rec_dev_ns; /* all of it over the kept steps */
    int reuse;           /* lay the engine's intermediates out by their lifetimes
                                        (exec_graph_set_reuse), set before the build */
    int imported;        /* a trace `fathom import` wrote: its op types are the
                                        framework's (an unknown one is not in the op table) */
    uint8_t *step_first; /* per node: 1 if it is the first op of a recorded step */
    exec_graph *g;
    /* the state the program updates in place -- tensors filled with
     * synthetic data that a later op writes (weights, optimizer slots, in
     * their storage) -- as filled, put back before every pass but the first
     * (replay_program_restore) */
    uint32_t *kept_ids;
    unsigned char *kept; /* their bytes, one after another */
    uint32_t nkept;
} replay_program;

exec_status replay_program_init(replay_program *p);
void replay_program_destroy(replay_program *p);
exec_status replay_program_add_tensor(replay_program *p, const replay_tensor *t);
/* `in`/`out` hold nin/nout recorded ids; op_name is the trace's enum label. */
exec_status replay_program_add_op(replay_program *p, const char *op_name, const char *phase, uint32_t step, int nin,
                                  const uint32_t *in, int nout, const uint32_t *out, int nattrs, const int64_t *attrs,
                                  uint64_t rec_ns);
/* An invocation of a framework op of an imported trace (fw: its entry in
 * the framework op table): its recorded inputs (shapes from tensor_alloc)
 * and attrs (in the engine op's layout) become engine nodes when the
 * program is built, or it is demoted; recorded outputs (execution traces
 * have them) must have the sizes the engine computes. */
exec_status replay_program_add_framework(replay_program *p, const struct replay_fw_op *fw, const char *phase,
                                         uint32_t step, int nin, const uint32_t *in, int nout, const uint32_t *out,
                                         int nattrs, const int64_t *attrs, uint64_t rec_ns);
/* An invocation of an op type this version does not know (by its trace
 * label): kept in the program in its place, never executed; its outputs are
 * filled like inputs when later ops read them. */
exec_status replay_program_add_unknown(replay_program *p, const char *op_name, uint32_t step, uint64_t rec_ns);
/* Keeps recorded ops a to b (1-based, in recorded order) and drops the
 * rest: a trace too large to replay whole, replayed a range at a time. */
exec_status replay_program_keep_ops(replay_program *p, uint32_t a, uint32_t b);
/* Builds the engine graph, plans it and fills every tensor no op writes
 * before reading with synthetic data valid for its consumers. Framework ops
 * get inputs of their recorded shapes made afresh (one tensor per distinct
 * dtype, shape and value domain, never written) and outputs of the shapes
 * the engine computes (one per distinct shape, never read): an imported
 * trace's data flow is not replayed, its ops' shapes are. */
exec_status replay_program_build(replay_program *p, uint64_t seed);
/* Puts back the state the program updates in place as its build filled
 * it: every pass then runs on the same values. A training trace's updates
 * from synthetic gradients, pass after pass, drove its weights to Inf and
 * NaN (autoenc's, most of their floats), and the kernels' time with them. */
void replay_program_restore(replay_program *p);
#endif
