/* images.c -- class-conditioned synthetic images (see images.h). */
#include "models/images.h"

#include "base/alloc.h"

#include <math.h>
#include <stdlib.h>

#define PI 3.14159265358979f

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static float unif(uint64_t *s) { return (float)(splitmix(s) >> 40) / 16777216.0f; } /* [0,1) */

void model_images_init(model_images *im, int classes, int c, int h, int w, uint64_t seed)
{
    im->classes = classes;
    im->c = c;
    im->h = h;
    im->w = w;
    im->rng = seed * 0x2545f4914f6cdd1dull + 0x1234567ull;
    im->noise = 0.35f;
}

/* A class's structure: a fixed function of the class index (not of the seed),
 * so every seed draws from the same task. */
typedef struct cls_params {
    float theta, freq; /* stripe orientation (rad) and cycles per image */
    float bx, by, bs;  /* blob centre (fractions) and size */
    float bamp;        /* blob sign/amplitude */
    float col[4];      /* per-channel weights */
} cls_params;

static void class_params(int k, int c, cls_params *p)
{
    uint64_t s = 0xc1a55ull * (uint64_t)(k + 1);
    /* orientation and frequency on a grid so neighbouring classes differ */
    p->theta = PI * (float)(k % 8) / 8.0f + 0.1f * unif(&s);
    p->freq = 3.0f + (float)((k / 8) % 6) * 1.5f + 0.3f * unif(&s);
    p->bx = 0.2f + 0.6f * unif(&s);
    p->by = 0.2f + 0.6f * unif(&s);
    p->bs = 0.08f + 0.1f * unif(&s);
    p->bamp = (k / 48) % 2 ? -1.0f : 1.0f;
    for (int ch = 0; ch < 4; ch++)
        p->col[ch] = ch < c ? 0.2f + 0.8f * unif(&s) : 0.0f;
}

/* What an image takes from the stream, in the order it takes it: its
 * variations (phase, jitter) and its noise seed. The pixels are a function
 * of these and the class alone, so a batch draws them in turn and renders
 * its images in parallel, the same images as one at a time. */
typedef struct img_draw {
    int cls;
    float phase, ut, ux, uy; /* uniforms: phase, orientation and blob jitter */
    uint64_t ns;             /* noise seed */
} img_draw;

static img_draw img_take(model_images *im, int cls)
{
    img_draw d = { .cls = cls };
    uint64_t *s = &im->rng;
    d.phase = 2.0f * PI * unif(s);
    d.ut = unif(s);
    d.ux = unif(s);
    d.uy = unif(s);
    d.ns = splitmix(s);
    return d;
}

static void img_render(const model_images *im, const img_draw *d, float *x)
{
    int c = im->c, h = im->h, w = im->w;
    cls_params p;
    class_params(d->cls, c < 4 ? c : 4, &p);
    float phase = d->phase;
    float theta = p.theta + 0.06f * (d->ut - 0.5f);
    float bx = p.bx + 0.06f * (d->ux - 0.5f), by = p.by + 0.06f * (d->uy - 0.5f);
    /* sin(a*i + b*j + phase) = sin(a*i + phase) cos(b*j) + cos(a*i + phase) sin(b*j):
     * O(h + w) transcendentals per image, the rest multiply-adds */
    float a = 2.0f * PI * p.freq * sinf(theta) / (float)h, b = 2.0f * PI * p.freq * cosf(theta) / (float)w;
    float rs[h], rc[h], cs[w], cc[w], gy[h], gx[w];
    float inv2s2 = 1.0f / (2.0f * p.bs * p.bs);
    for (int i = 0; i < h; i++) {
        rs[i] = sinf(a * (float)i + phase);
        rc[i] = cosf(a * (float)i + phase);
        float dy = ((float)i + 0.5f) / (float)h - by;
        gy[i] = expf(-dy * dy * inv2s2);
    }
    for (int j = 0; j < w; j++) {
        cs[j] = sinf(b * (float)j);
        cc[j] = cosf(b * (float)j);
        float dx = ((float)j + 0.5f) / (float)w - bx;
        gx[j] = expf(-dx * dx * inv2s2);
    }
    uint64_t ns = d->ns;
    float amp = 2.0f * im->noise / 4294967296.0f;
    for (int ch = 0; ch < c; ch++) {
        float col = ch < 4 ? p.col[ch] : p.col[ch % 4];
        float *o = x + (int64_t)ch * h * w;
        float dc = 1.2f * (col - 0.6f); /* a class's colour cast */
        for (int i = 0; i < h; i++)
            for (int j = 0; j < w; j++) {
                /* xorshift noise: cheap, deterministic */
                ns ^= ns << 13;
                ns ^= ns >> 7;
                ns ^= ns << 17;
                float noise = (float)(uint32_t)ns * amp - im->noise;
                o[i * w + j] = col * ((rs[i] * cc[j] + rc[i] * cs[j]) + 1.5f * p.bamp * gy[i] * gx[j]) + dc + noise;
            }
    }
}

void model_images_one(model_images *im, int cls, float *x)
{
    img_draw d = img_take(im, cls);
    img_render(im, &d, x);
}

void model_images_fill(model_images *im, int n, float *x, int32_t *labels, int threads)
{
    int64_t per = (int64_t)im->c * im->h * im->w;
    img_draw *d = n > 1 ? base_malloc((size_t)n * sizeof *d) : NULL;
    for (int i = 0; i < n; i++) {
        int cls = (int)(splitmix(&im->rng) % (uint64_t)im->classes);
        if (labels)
            labels[i] = cls;
        if (d)
            d[i] = img_take(im, cls);
        else /* one image, or no memory for the draws: one at a time */
            model_images_one(im, cls, x + i * per);
    }
    if (!d)
        return;
        /* a serial chain of noise per image (a few ns a pixel): images in parallel */
#pragma omp parallel for schedule(static) num_threads(threads)
    for (int i = 0; i < n; i++)
        img_render(im, &d[i], x + i * per);
    base_free(d);
}
