/* run.h -- re-executing a rebuilt program and comparing with the recording. */
#ifndef FATHOM_REPLAY_RUN_H
#define FATHOM_REPLAY_RUN_H
#include "replay/program.h"

typedef struct replay_opts {
    int iterations;   /* timed passes over the program (default 3) */
    int warmup;       /* untimed passes first (default 1) */
    int inter;        /* inter-op workers */
    int threads;      /* intra-op threads (the caller sets them) */
} replay_opts;

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
} replay_report;

exec_status replay_run(replay_program *p, const replay_opts *o, replay_report *r);
#endif
