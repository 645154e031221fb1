/* alexnet.c -- Krizhevsky, Sutskever and Hinton 2012, single tower (as
 * TensorFlow's and torchvision's AlexNet): conv 11x11/4 64, ReLU, LRN,
 * max-pool 3x3/2, conv 5x5 192, ReLU, LRN, max-pool, conv 3x3 384, 256, 256,
 * max-pool, FC 4096 + dropout 0.5, FC 4096 + dropout 0.5, FC classes.
 * Adam 1e-3 (Fathom), batch 64. 61,100,840 parameters at 224x224 and 1000
 * classes. Fathom's defect (dropout declared, never applied) is not kept. */
#include "models/classifier.h"

extern const model_def model_alexnet;

typedef struct alexnet_preset {
    int size, classes, conv[5], fc;
} alexnet_preset;

static const alexnet_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 64, 10, { 16, 48, 96, 64, 64 }, 256 },
    [MODEL_SMALL] = { 128, 100, { 32, 96, 192, 128, 128 }, 1024 },
    [MODEL_FULL] = { 224, 1000, { 64, 192, 384, 256, 256 }, 4096 },
};

/* the paper's LRN: k = 2, n = 5 (depth radius 2), alpha = 1e-4, beta = 0.75 */
static uint32_t lrn(exec_graph *g, uint32_t x) { return ex_lrn(g, x, 2, 2.0f, 1e-4f, 0.75f); }

static uint32_t net(exec_graph *g, uint32_t x, bool train, const model_config *cfg, const void *arg)
{
    (void)cfg;
    const alexnet_preset *p = arg;
    x = ex_max_pool(g, lrn(g, model_conv_relu(g, "conv1", x, p->conv[0], 11, 4, 2)), 3, 3, 2, 2, 0, 0);
    x = ex_max_pool(g, lrn(g, model_conv_relu(g, "conv2", x, p->conv[1], 5, 1, 2)), 3, 3, 2, 2, 0, 0);
    x = model_conv_relu(g, "conv3", x, p->conv[2], 3, 1, 1);
    x = model_conv_relu(g, "conv4", x, p->conv[3], 3, 1, 1);
    x = model_conv_relu(g, "conv5", x, p->conv[4], 3, 1, 1);
    x = ex_max_pool(g, x, 3, 3, 2, 2, 0, 0);
    return model_fc_head(g, x, p->fc, p->classes, train);
}

static exec_status create(const model_config *cfg, model **out)
{
    const alexnet_preset *p = &presets[cfg->preset];
    model_classifier_spec spec = {
        .classes = p->classes, .size = p->size, .opt = MODEL_OPT_ADAM, .lr = 1e-3f, .net = net, .arg = p
    };
    return model_classifier_create(&model_alexnet, cfg, &spec, out);
}

const model_def model_alexnet = {
    .name = "alexnet",
    .paper = "Krizhevsky et al. 2012",
    .kind = "convolutional",
    .summary = "conv 11x11/4 64, LRN, pool, conv 5x5 192, LRN, pool, conv 384-256-256, pool, FC 4096-4096-1000, "
               "dropout 0.5; Adam 1e-3",
    .batch = { 16, 32, 64 },
    .create = create,
    .step = model_classifier_step,
    .destroy = model_classifier_destroy,
};
