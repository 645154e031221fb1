/* classifier.c -- the image classifiers' shared graph ends and step. */
#include "models/classifier.h"

#include <math.h>

typedef struct classifier {
    uint32_t x, labels, probs;
    int classes;
    model_images images;
} classifier;

exec_status model_classifier_create(const model_def *def, const model_config *cfg, const model_classifier_spec *spec,
                                    model **out)
{
    *out = NULL;
    model *m = NULL;
    exec_status s = model_alloc(def, cfg, sizeof(classifier), &m);
    if (s)
        return s;
    classifier *c = m->priv;
    exec_graph *g = m->g;
    bool train = cfg->mode == MODEL_TRAIN;
    int64_t B = m->batch;
    c->classes = spec->classes;
    c->x = exec_input(g, "images", EXEC_F32, 4, (int64_t[]){ B, 3, spec->size, spec->size });
    c->labels = exec_input(g, "labels", EXEC_I32, 1, &B);
    uint32_t logits = spec->net(g, c->x, train, cfg, spec->arg);
    if (train) {
        m->loss = ex_sparse_softmax_xent(g, logits, c->labels);
        if (!(s = exec_graph_status(g)) && !(s = exec_gradients(g, m->loss)))
            s = spec->opt == MODEL_OPT_ADAM ? exec_optimizer_adam(g, spec->lr, 0.9f, 0.999f, 1e-8f)
                                            : exec_optimizer_momentum(g, spec->lr, 0.9f);
    } else {
        /* inference ends at the class probabilities, as a deployed model does;
         * the step's loss is computed from them outside the graph */
        c->probs = ex_softmax(g, logits);
    }
    if (!s)
        s = model_plan(m);
    if (s) {
        model_free(m);
        return s;
    }
    model_images_init(&c->images, spec->classes, 3, spec->size, spec->size, cfg->seed);
    *out = m;
    return EXEC_OK;
}

exec_status model_classifier_step(model *m, float *loss)
{
    classifier *c = m->priv;
    *loss = NAN;
    if (!m->cfg.plan)
        return exec_fail(EXEC_ERR_STATE, "%s: built without planning", m->def->name);
    int32_t *labels = exec_datai(m->g, c->labels);
    model_images_fill(&c->images, m->batch, exec_dataf(m->g, c->x), labels, model_threads(m));
    exec_status s = model_run_graph(m);
    if (s)
        return s;
    if (m->loss) {
        *loss = exec_dataf(m->g, m->loss)[0];
    } else {
        const float *p = exec_dataf(m->g, c->probs);
        double sum = 0;
        for (int i = 0; i < m->batch; i++)
            sum -= log(fmax((double)p[(int64_t)i * c->classes + labels[i]], 1e-30));
        *loss = (float)(sum / m->batch);
    }
    return EXEC_OK;
}

void model_classifier_destroy(model *m) { model_free(m); }
