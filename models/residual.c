/* residual.c -- He, Zhang, Ren and Sun 2015, ResNet v1 with batch norm:
 * conv 7x7/2 64, BN, ReLU, max-pool 3x3/2, four stages of residual blocks
 * (bottleneck 1x1-3x3-1x1 for depth 50/101/152, basic 3x3-3x3 for 18/34;
 * a stage's first block downsamples by stride 2 in its first conv, as in the
 * paper, with a 1x1 projection shortcut (option B)), global average pool,
 * FC classes. Convs carry no bias (batch norm follows each). Momentum SGD
 * 0.9, batch 16; the learning rate is the paper's 0.1 scaled linearly to the
 * batch (0.1 * B / 256). ResNet-50 has 25,557,032 parameters at 1000 classes.
 * (Fathom's ResNet had no batch norm and no downsampling inside blocks.) */
#include "models/classifier.h"

extern const model_def model_residual;

#include <stdio.h>

typedef struct residual_preset {
    int size, classes, width; /* width: stage 1's base channels (64 in the paper) */
} residual_preset;

static const residual_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 32, 10, 8 },
    [MODEL_SMALL] = { 64, 100, 16 },
    [MODEL_FULL] = { 224, 1000, 64 },
};

typedef struct residual_arch {
    const residual_preset *p;
    int depth;
    bool bottleneck;
    int blocks[4];
} residual_arch;

static int arch_of(int depth, residual_arch *a)
{
    static const struct {
        int depth, bottleneck, blocks[4];
    } tab[] = {
        { 18, 0, { 2, 2, 2, 2 } },   { 34, 0, { 3, 4, 6, 3 } },   { 50, 1, { 3, 4, 6, 3 } },
        { 101, 1, { 3, 4, 23, 3 } }, { 152, 1, { 3, 8, 36, 3 } },
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].depth == depth) {
            a->depth = depth;
            a->bottleneck = tab[i].bottleneck;
            for (int s = 0; s < 4; s++)
                a->blocks[s] = tab[i].blocks[s];
            return 0;
        }
    return -1;
}

static uint32_t conv_bn(exec_graph *g, const char *prefix, const char *name, uint32_t x, int oc, int k, int stride,
                        bool relu, bool train)
{
    char n[48];
    snprintf(n, sizeof n, "%s/%s", prefix, name);
    x = model_conv(g, n, x, oc, k, stride, k / 2, false);
    snprintf(n, sizeof n, "%s/%s_bn", prefix, name);
    x = model_batch_norm(g, n, x, train);
    return relu ? ex_relu(g, x) : x;
}

static uint32_t block(exec_graph *g, const residual_arch *a, const char *prefix, uint32_t x, int width, int stride,
                      bool train)
{
    int out = a->bottleneck ? 4 * width : width;
    uint32_t y;
    if (a->bottleneck) {
        y = conv_bn(g, prefix, "conv1", x, width, 1, stride, true, train);
        y = conv_bn(g, prefix, "conv2", y, width, 3, 1, true, train);
        y = conv_bn(g, prefix, "conv3", y, out, 1, 1, false, train);
    } else {
        y = conv_bn(g, prefix, "conv1", x, width, 3, stride, true, train);
        y = conv_bn(g, prefix, "conv2", y, width, 3, 1, false, train);
    }
    uint32_t shortcut = x;
    if (stride != 1 || model_dim(g, x, 1) != out)
        shortcut = conv_bn(g, prefix, "proj", x, out, 1, stride, false, train);
    return ex_relu(g, ex_add(g, y, shortcut));
}

static uint32_t net(exec_graph *g, uint32_t x, bool train, const model_config *cfg, const void *arg)
{
    (void)cfg;
    const residual_arch *a = arg;
    int w = a->p->width;
    x = conv_bn(g, "stem", "conv", x, w, 7, 2, true, train);
    x = ex_max_pool(g, x, 3, 3, 2, 2, 1, 1);
    for (int s = 0; s < 4; s++)
        for (int b = 0; b < a->blocks[s]; b++) {
            char prefix[24];
            snprintf(prefix, sizeof prefix, "s%db%d", s + 1, b + 1);
            x = block(g, a, prefix, x, w << s, s > 0 && b == 0 ? 2 : 1, train);
        }
    x = ex_global_avg_pool(g, x);
    return model_fc(g, "fc", x, a->p->classes);
}

static exec_status create(const model_config *cfg, model **out)
{
    *out = NULL;
    residual_arch a = { .p = &presets[cfg->preset] };
    int depth = cfg->depth ? cfg->depth : 50;
    if (arch_of(depth, &a))
        return exec_fail(EXEC_ERR_ARG, "residual: depth %d is not one of 18, 34, 50, 101, 152", depth);
    int batch = model_batch(&model_residual, cfg);
    model_classifier_spec spec = { .classes = a.p->classes,
                                   .size = a.p->size,
                                   .opt = MODEL_OPT_MOMENTUM,
                                   .lr = 0.1f * (float)batch / 256.0f,
                                   .net = net,
                                   .arg = &a };
    return model_classifier_create(&model_residual, cfg, &spec, out);
}

const model_def model_residual = {
    .name = "residual",
    .paper = "He et al. 2015",
    .kind = "convolutional",
    .summary = "ResNet-50 v1 (bottleneck blocks 3-4-6-3, batch norm; depth 18/34/50/101/152), global average "
               "pool, FC 1000; momentum SGD 0.9",
    .batch = { 16, 16, 16 },
    .create = create,
    .step = model_classifier_step,
    .destroy = model_classifier_destroy,
};
