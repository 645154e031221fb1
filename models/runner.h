/* runner.h -- the run loop every tool shares: `fathom run` and `fathom
 * record` (through `fathom run`) drive a model through model_runner, which
 * announces the run and each step to the engine's hooks (the tracer). */
#ifndef FATHOM_MODELS_RUNNER_H
#define FATHOM_MODELS_RUNNER_H
#include "base/cli.h"
#include "models/model.h"

#include <stdio.h>

/* `fathom run` rewrites "STEPS_DONE STEPS" in this file (it must exist)
 * after each step: how `fathom record` shows the workload's progress. */
#define MODEL_ENV_STEP_FILE "FATHOM_STEP_FILE"

typedef struct model_run_opts {
    int steps;         /* > 0 */
    int threads;       /* intra-op threads (0: all cores) */
    cli_format format; /* how `out` is written: CLI_JSON, else text (no CSV) */
    FILE *out;         /* NULL: nothing */
    FILE *progress;    /* a progress line with \r (a terminal), or NULL */
    int step_fd;       /* > 0: "STEPS_DONE STEPS\n" rewritten there after each step
                                (the recorder shows step k of N from it); 0: none */
} model_run_opts;

typedef struct model_run_result {
    int steps; /* steps completed */
    int64_t params;
    double mean_ms; /* mean step time, skipping the first step (all if only one) */
    double first_ms, total_ms;
    double mean_engine_ms; /* of mean_ms, the time inside the engine's graph runs (same steps) */
    float first_loss, last_loss;
} model_run_result;

/* Default steps of a preset: tiny 20, small 12 (Fathom's 12), full 12. */
int model_default_steps(model_preset p);

/* Sets the threads, creates the model, announces the run, runs the steps,
 * announces the end, destroys the model. On error the message is in
 * exec_errmsg() (and any JSON already written stays valid per line). */
exec_status model_runner(const model_def *def, const model_config *cfg, const model_run_opts *o, model_run_result *res);
#endif
