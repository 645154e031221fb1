/* images.h -- the class-conditioned synthetic image generator shared by the
 * image classifiers (alexnet, vgg, residual). Deterministic for a seed and
 * learnable: every class has its own structure (stripes of a class-specific
 * orientation and frequency, a blob at a class-specific place, a colour
 * balance), each sample varies it (phase, jitter) and adds noise. Filled
 * straight into the input tensors: the input pipeline is not an op. */
#ifndef FATHOM_MODELS_IMAGES_H
#define FATHOM_MODELS_IMAGES_H
#include <stdint.h>

typedef struct model_images {
    int classes, c, h, w;
    uint64_t rng;
    float noise; /* noise amplitude (uniform, +-noise) */
} model_images;

void model_images_init(model_images *im, int classes, int c, int h, int w, uint64_t seed);
/* n images NCHW into x (n*c*h*w floats) and their labels (n ints; NULL: random
 * classes are still drawn but not written), rendered on `threads` OpenMP
 * threads (model_threads: the same images for any number). */
void model_images_fill(model_images *im, int n, float *x, int32_t *labels, int threads);
/* One image of a given class. */
void model_images_one(model_images *im, int cls, float *x);
#endif
