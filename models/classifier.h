/* classifier.h -- what the three image classifiers (alexnet, vgg, residual)
 * share: the input tensors, the synthetic image source, the loss, the
 * optimizer and the step. Each model file supplies its network. */
#ifndef FATHOM_MODELS_CLASSIFIER_H
#define FATHOM_MODELS_CLASSIFIER_H
#include "models/images.h"
#include "models/layers.h"

typedef enum model_optim { MODEL_OPT_ADAM, MODEL_OPT_MOMENTUM } model_optim;

typedef struct model_classifier_spec {
    int classes, size; /* classes and image side (square, 3 channels) */
    model_optim opt;
    float lr;
    /* builds the network on images x [B,3,size,size]; returns the logits [B,classes] */
    uint32_t (*net)(exec_graph *g, uint32_t x, bool train, const model_config *cfg, const void *arg);
    const void *arg;
} model_classifier_spec;

exec_status model_classifier_create(const model_def *def, const model_config *cfg, const model_classifier_spec *spec,
                                    model **out);
exec_status model_classifier_step(model *m, float *loss);
void model_classifier_destroy(model *m);
#endif
