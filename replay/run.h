/* run.h -- re-executing a rebuilt program and comparing with the recording. */
#ifndef FATHOM_REPLAY_RUN_H
#define FATHOM_REPLAY_RUN_H
#include "replay/program.h"

#include <stdio.h>

typedef struct replay_opts {
    int iterations;   /* timed passes over the program (default 3) */
    int warmup;       /* untimed passes first (default 1) */
    int inter;        /* inter-op workers */
    int threads;      /* intra-op threads of this replay (0: the process's) */
    exec_conv_algo conv_algo; /* EXEC_CONV_DEFAULT: the process's */
    FILE *dump;       /* NULL, or: every op the first pass executes, one line each
                         (replay_dump_line's format); the pass is never a timed one */
} replay_opts;

/* A traced replay (a hook set is installed, as under `fathom record` or
 * `fathom replay --record`): replay_run fires run_begin (the source's model,
 * mode, preset and batch; this machine's threads, BLAS and CPU) and run_end
 * around all passes, and step_begin/step_end around every recorded step of
 * every pass, warm-up passes included, numbered from 0. */

typedef struct replay_row {
    char name[48];          /* op type or class */
    const char *cls;        /* for op types */
    uint64_t count;         /* invocations per step */
    double rec_ns, rep_ns;  /* per step */
} replay_row;

typedef struct replay_report {
    uint32_t steps;                  /* recorded steps in the program */
    uint64_t ops;                    /* op invocations per pass */
    uint64_t ops_executed;           /* invocations executed in timed passes */
    double rec_step_ns;              /* recorded mean step time */
    double rec_op_ns, rep_op_ns;     /* op time per step: recorded, replayed */
    double predicted_step_ns;        /* rec_step - rec_op + rep_op */
    replay_row types[EXEC_OP_COUNT];
    int ntypes;
    replay_row classes[EXEC_CLASS_COUNT];
    double rep_wall_step_ns;         /* replayed wall time per recorded step (timed passes) */
    /* op types this version does not know: not replayed, their recorded
     * time carried over into the prediction (rec_op_ns and rep_op_ns leave
     * them out) */
    replay_row unknown[32];
    int nunknown;                    /* rows filled (at most 32) */
    uint32_t unknown_types;          /* all such op types */
    double unknown_rec_ns;           /* their recorded time per step */
} replay_report;

/* One line for node n of g: "OP PHASE IN_SHAPES -> OUT_SHAPES : ATTRS",
 * shapes as DxDxD ("scalar" for none), separated by single spaces. */
void replay_dump_line(FILE *f, const exec_graph *g, const exec_node *n);

exec_status replay_run(replay_program *p, const replay_opts *o, replay_report *r);
#endif
