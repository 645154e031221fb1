/* vgg.c -- Simonyan and Zisserman 2014, VGG-19 (configuration E): 16 convs
 * 3x3/1 pad 1 with ReLU in blocks of 2-2-4-4-4 widths 64-128-256-512-512,
 * each block ending in a 2x2/2 max-pool; FC 4096 + dropout 0.5, FC 4096 +
 * dropout 0.5, FC classes. Adam 1e-4 (Fathom), batch 8. 143,667,240
 * parameters at 224x224 and 1000 classes. (Fathom's VGG had 12 convs.) */
#include "models/classifier.h"

extern const model_def model_vgg;

#include <stdio.h>

typedef struct vgg_preset {
    int size, classes, width[5], fc;
    float lr;
} vgg_preset;

static const int blocks[5] = { 2, 2, 4, 4, 4 };

static const vgg_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 32, 10, { 16, 32, 64, 64, 64 }, 1024, 3e-4f },
    [MODEL_SMALL] = { 64, 100, { 16, 32, 64, 128, 128 }, 512, 1e-4f },
    [MODEL_FULL] = { 224, 1000, { 64, 128, 256, 512, 512 }, 4096, 1e-4f },
};

static uint32_t net(exec_graph *g, uint32_t x, bool train, const model_config *cfg, const void *arg)
{
    (void)cfg;
    const vgg_preset *p = arg;
    for (int b = 0; b < 5; b++) {
        for (int i = 0; i < blocks[b]; i++) {
            char name[32];
            snprintf(name, sizeof name, "conv%d_%d", b + 1, i + 1);
            x = model_conv_relu(g, name, x, p->width[b], 3, 1, 1);
        }
        x = ex_max_pool(g, x, 2, 2, 2, 2, 0, 0);
    }
    return model_fc_head(g, x, p->fc, p->classes, train);
}

static exec_status create(const model_config *cfg, model **out)
{
    const vgg_preset *p = &presets[cfg->preset];
    model_classifier_spec spec = {
        .classes = p->classes, .size = p->size, .opt = MODEL_OPT_ADAM, .lr = p->lr, .net = net, .arg = p
    };
    return model_classifier_create(&model_vgg, cfg, &spec, out);
}

const model_def model_vgg = {
    .name = "vgg",
    .paper = "Simonyan and Zisserman 2014",
    .kind = "convolutional",
    .summary = "VGG-19 (config E): 16 convs 3x3 in blocks 2-2-4-4-4 (64-512), 5 max-pools, FC 4096-4096-1000, "
               "dropout 0.5; Adam 1e-4",
    .batch = { 8, 8, 8 },
    .create = create,
    .step = model_classifier_step,
    .destroy = model_classifier_destroy,
};
