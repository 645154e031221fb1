/* model.h -- the workloads: each of the eight is a model_def in the registry
 * (registry.c). A model builds its graph(s) from the engine's builders, owns
 * its data source, and runs one step at a time; `fathom run`, `fathom record`
 * and the tests drive every model through this one interface. */
#ifndef FATHOM_MODELS_MODEL_H
#define FATHOM_MODELS_MODEL_H
#include "exec/exec.h"

#include <stdio.h>

/* The engine's modes (exec_mode), under the names the workloads use. */
typedef enum model_mode {
    MODEL_TRAIN = EXEC_MODE_train,
    MODEL_INFER = EXEC_MODE_infer,
    MODEL_MODE_COUNT = EXEC_MODE_COUNT
} model_mode;
typedef enum model_preset { MODEL_TINY, MODEL_SMALL, MODEL_FULL, MODEL_PRESET_COUNT } model_preset;

const char *model_mode_name(model_mode m);
const char *model_preset_name(model_preset p);
int model_mode_from_name(const char *s);   /* -1 if unknown */
int model_preset_from_name(const char *s); /* -1 if unknown */

typedef struct model_config {
    model_mode mode;
    model_preset preset;
    int batch; /* 0: the preset's */
    int depth; /* residual: 18/34/50/101/152; 0: the default */
    uint64_t seed;
    int inter;              /* inter-op workers for exec_graph_run */
    exec_settings settings; /* intra-op threads and convolution algorithm of the
                               model's graphs (zero members: the process's) */
    bool plan;              /* false: build the graph only (parameter counts) */
    const char *data_path;  /* a real-format data file/dir; NULL: the generator */
} model_config;

typedef struct model_def model_def;

/* A model instance. `g` is the graph whose steps are profiled; models with
 * more graphs (deepq's target and acting networks) keep them in priv and name
 * them in `more`, so that model_settings_set reaches them too. */
typedef struct model {
    const model_def *def;
    model_config cfg;
    int batch; /* the effective batch */
    exec_graph *g;
    exec_graph *more[2]; /* the model's other graphs (owned by priv), or NULL */
    uint32_t loss;       /* scalar loss tensor (0 in infer mode if none) */
    void *priv;
} model;

struct model_def {
    const char *name;        /* "alexnet" */
    const char *paper;       /* "Krizhevsky et al. 2012" */
    const char *kind;        /* "convolutional", "recurrent", ... */
    const char *summary;     /* one line: the architecture */
    const char *data_format; /* what `--data PATH` reads ("MNIST idx3-ubyte
                              * images"); NULL: the generator only */
    int batch[MODEL_PRESET_COUNT];
    /* Builds the graph(s) (and plans them when cfg->plan); on error returns a
     * status with exec_errmsg() set and leaves *out NULL. */
    exec_status (*create)(const model_config *cfg, model **out);
    /* One step: feeds a batch, runs train (forward, backward, update) or
     * infer (forward); *loss gets the step's loss (NAN if none). */
    exec_status (*step)(model *m, float *loss);
    void (*destroy)(model *m);
};

/* The registry: every workload, in a stable order. */
extern const model_def *const model_registry[];
extern const int model_registry_count;
const model_def *model_find(const char *name);

/* Helpers every model uses (model.c). */
exec_status model_alloc(const model_def *def, const model_config *cfg, size_t priv_size, model **out);
void model_free(model *m); /* destroys m->g and frees m and m->priv */
int model_batch(const model_def *def, const model_config *cfg);
/* One line per workload with a `--data` loader: "  NAME  FORMAT" (the
 * registry's data_format, for --help texts). */
void model_print_data_formats(FILE *f);
/* Runs m->g for this step in cfg's mode (train: everything; infer: forward). */
exec_status model_run_graph(model *m);
/* From the next step on, every graph of m runs with settings s and `inter`
 * inter-op workers (what a model_config gives at create, but for a model
 * built: one instance measured at several settings, as fathom tune does). */
void model_settings_set(model *m, const exec_settings *s, int inter);
/* The OpenMP threads of m's own parallel work on the calling thread between
 * its graph runs (data, games): a run's share of the intra-op threads (its
 * settings' or the process's, over its inter-op workers), which is the
 * calling thread's team in the runs. A region of any other size would resize
 * that team at every step (libgomp ends a team's threads above a smaller
 * region's and makes them again for a larger one), and `fathom tune` would
 * measure a point's data work at the process's thread count, not the
 * point's. */
int model_threads(const model *m);

static inline exec_status model_create(const model_def *d, const model_config *c, model **out)
{
    return d->create(c, out);
}
static inline exec_status model_step(model *m, float *loss) { return m->def->step(m, loss); }
static inline void model_destroy(model *m)
{
    if (m)
        m->def->destroy(m);
}
#endif
