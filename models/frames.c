/* frames.c -- speech's data: feature frames generated from random label
 * sequences (a stand-in for TIMIT's 26 MFCC-style features per frame). */
#include "models/seqdata.h"

#include "base/alloc.h"
#include "exec/rng.h"

#include <math.h>
#include <string.h>

#define FRAME_NOISE 0.3f

struct model_frames {
    int classes, features;
    uint64_t seed;
    float *proto; /* [classes, features] */
};

exec_status model_frames_create(int classes, int features, uint64_t seed, model_frames **out)
{
    *out = NULL;
    if (classes < 2 || features < 1)
        return exec_fail(EXEC_ERR_ARG, "frames: %d classes of %d features", classes, features);
    model_frames *f = base_calloc(1, sizeof *f);
    if (!f || !(f->proto = base_malloc((size_t)classes * features * sizeof *f->proto))) {
        base_free(f);
        return exec_fail(EXEC_ERR_NOMEM, "frames: out of memory");
    }
    f->classes = classes;
    f->features = features;
    f->seed = seed;
    exec_rng r = exec_rng_make(seed ^ 0x5eec4ull);
    for (int i = 0; i < classes * features; i++)
        f->proto[i] = exec_rng_normal(&r);
    *out = f;
    return EXEC_OK;
}

void model_frames_destroy(model_frames *f)
{
    if (!f)
        return;
    base_free(f->proto);
    base_free(f);
}

int model_frames_nearest(const model_frames *f, const float *frame)
{
    int best = 0;
    float bd = INFINITY;
    for (int c = 0; c < f->classes; c++) {
        float d = 0;
        for (int j = 0; j < f->features; j++) {
            float e = frame[j] - f->proto[c * f->features + j];
            d += e * e;
        }
        if (d < bd) {
            bd = d;
            best = c;
        }
    }
    return best;
}

void model_frames_fill(const model_frames *f, uint64_t step, int T, int N, int context, int max_labels, float *frames,
                       int32_t *labels, int32_t *label_len, int32_t *seq_len)
{
    const int F = f->features, W = F * (2 * context + 1);
    if (max_labels > T)
        max_labels = T;
    memset(labels, 0, (size_t)N * max_labels * sizeof *labels);
    for (int n = 0; n < N; n++) {
        exec_rng r = exec_rng_make(f->seed ^ exec_splitmix64(step * 0x9e37ull + (uint64_t)n + 1));
        int lo = max_labels / 2 > 1 ? max_labels / 2 : 1;
        int L = lo + (int)exec_rng_below(&r, (uint32_t)(max_labels - lo + 1));
        int32_t *lab = labels + (size_t)n * max_labels;
        for (int i = 0; i < L; i++) {
            int c;
            do
                c = (int)exec_rng_below(&r, (uint32_t)f->classes);
            while (i > 0 && c == lab[i - 1]);
            lab[i] = c;
        }
        label_len[n] = L;
        seq_len[n] = T;
        /* durations: weights in [0.5, 1.5), every label at least one frame */
        float wsum = 0, w[L];
        for (int i = 0; i < L; i++)
            wsum += w[i] = 0.5f + exec_rng_uniform(&r);
        int t = 0;
        float cum = 0;
        for (int i = 0; i < L; i++) {
            cum += w[i];
            int end = i == L - 1 ? T : (int)lroundf((float)T * cum / wsum);
            if (end < t + 1)
                end = t + 1;
            if (end > T - (L - 1 - i))
                end = T - (L - 1 - i);
            const float *p = f->proto + (size_t)lab[i] * F;
            for (; t < end; t++) {
                float *dst = frames + ((size_t)t * N + n) * W + (size_t)context * F;
                for (int j = 0; j < F; j++)
                    dst[j] = p[j] + FRAME_NOISE * exec_rng_normal(&r);
            }
        }
        /* the context window: neighbours' base features, zeros past the ends */
        for (t = 0; t < T; t++) {
            float *dst = frames + ((size_t)t * N + n) * W;
            for (int c = -context; c <= context; c++) {
                if (c == 0)
                    continue;
                float *slot = dst + (size_t)(c + context) * F;
                int u = t + c;
                if (u < 0 || u >= T)
                    memset(slot, 0, (size_t)F * sizeof *slot);
                else
                    memcpy(slot, frames + ((size_t)u * N + n) * W + (size_t)context * F, (size_t)F * sizeof *slot);
            }
        }
    }
}
