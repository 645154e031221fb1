/* run.h -- re-executing a rebuilt program and comparing with the recording. */
#ifndef FATHOM_REPLAY_RUN_H
#define FATHOM_REPLAY_RUN_H
#include "replay/program.h"

#include <stdio.h>

typedef struct replay_opts {
    int iterations;           /* timed passes over the program (default 3) */
    int warmup;               /* untimed passes first (default 1) */
    int inter;                /* inter-op workers */
    int threads;              /* intra-op threads of this replay (0: the process's) */
    exec_conv_algo conv_algo; /* EXEC_CONV_DEFAULT: the process's */
    exec_bind bind;           /* EXEC_BIND_DEFAULT: the process's */
    FILE *dump;               /* NULL, or: every op the first pass executes, one line each
                         (replay_dump_line's format); the pass is never a timed one */
} replay_opts;

/* A traced replay (a hook set is installed, as under `fathom record` or
 * `fathom replay --record`): replay_run fires run_begin (the source's model,
 * mode, preset and batch; this machine's threads, BLAS and CPU) and run_end
 * around all passes, and step_begin/step_end around every recorded step of
 * every pass, warm-up passes included, numbered from 0. */

#define REPLAY_MAX_TYPES 256 /* op type rows (more: folded into the last) */

typedef struct replay_row {
    char name[96];         /* op type as recorded (an engine op, or a framework
                               op of an imported trace: aten::conv2d), or class */
    const char *cls;       /* for op types */
    const void *key;       /* what the row counts (internal) */
    uint64_t count;        /* replayed invocations per step */
    double rec_ns, rep_ns; /* per step: their recorded and replayed time */
    uint64_t demoted;      /* invocations per step not replayed */
    double demoted_ns;     /* their recorded time per step */
    const char *why;       /* why (the first reason met), NULL if none is demoted */
    uint64_t converted;    /* replayed invocations per step whose inputs were recorded
                               in a dtype the engine lacks (replayed as float32/int32) */
    double dev_ns;         /* per step: the device time measured for it (an imported
                               GPU trace's device records named as the op type) */
} replay_row;

typedef struct replay_report {
    uint32_t steps;                     /* recorded steps in the program */
    uint64_t ops;                       /* engine nodes per pass */
    uint64_t ops_executed;              /* invocations executed in timed passes */
    double rec_step_ns;                 /* recorded mean step time */
    double rec_op_ns, rep_op_ns;        /* op time per step of the replayed ops: recorded, replayed */
    double predicted_step_ns;           /* rec_step - rec_op + rep_op */
    replay_row types[REPLAY_MAX_TYPES]; /* every recorded op type, replayed or not */
    int ntypes;
    replay_row classes[EXEC_CLASS_COUNT]; /* replayed invocations */
    double rep_wall_step_ns;              /* replayed wall time per recorded step (timed passes) */
    /* coverage: what share of the recording the replay represents. Ops not
     * replayed (demoted: no engine op, arguments the trace does not record,
     * shapes the engine op does not take; or op types this version does not
     * know) are not executed: their recorded time is carried over into the
     * prediction. Totals over all kept steps. */
    uint64_t rec_ops;       /* recorded op invocations */
    uint64_t rep_ops;       /* of them replayed */
    uint64_t converted_ops; /* of those, with inputs converted to the engine's dtypes */
    uint32_t demoted_types; /* op types with a demoted invocation */
    double demoted_rec_ns;  /* their recorded time per step */
    uint32_t unknown_types; /* op types this version does not know at all */
    double rec_dev_ns;      /* measured device time per step (an imported GPU trace's) */
    double typed_dev_ns;    /* of it, named as an op type of the rows */
} replay_report;

/* One line for node n of g: "OP PHASE IN_SHAPES -> OUT_SHAPES : ATTRS",
 * shapes as DxDxD ("scalar" for none), separated by single spaces. */
void replay_dump_line(FILE *f, const exec_graph *g, const exec_node *n);

exec_status replay_run(replay_program *p, const replay_opts *o, replay_report *r);
#endif
