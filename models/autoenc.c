/* autoenc.c -- the variational autoencoder of Kingma and Welling (2014):
 * a Gaussian MLP encoder 784-500-(mu, log-variance of 20), reparameterised
 * sampling z = mu + exp(logvar/2) * eps with eps from RandomStandardNormal,
 * a Bernoulli MLP decoder 20-500-784 (tanh hidden layers, as the paper's
 * appendix), loss = reconstruction cross-entropy + KL(q(z|x) || N(0, I)),
 * summed over features and averaged over the batch. Adam 1e-3, batch 128,
 * Xavier initialisation (Fathom's). 815,824 parameters at full.
 *
 * infer: encode, sample, decode (the sigmoid of the decoder's logits). */
#include "models/model.h"

#include "exec/build.h"
#include "models/seqdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct ae_preset {
    int hidden, latent, images;
} ae_preset;
static const ae_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 128, 10, 1024 },
    [MODEL_SMALL] = { 500, 20, 4096 },
    [MODEL_FULL] = { 500, 20, 10000 },
};

typedef struct ae_priv {
    model_mnist_set *data;
    uint32_t x, out;
    int64_t cursor;
} ae_priv;

static uint32_t dense(exec_graph *g, const char *name, uint32_t x, int64_t in, int64_t out)
{
    char wn[48], bn[48];
    snprintf(wn, sizeof wn, "%s/w", name);
    snprintf(bn, sizeof bn, "%s/b", name);
    uint32_t w = exec_weight(g, wn, 2, (int64_t[]){ in, out }, EXEC_INIT_GLOROT);
    uint32_t b = exec_weight(g, bn, 1, (int64_t[]){ out }, EXEC_INIT_ZERO);
    return ex_bias_add(g, ex_matmul(g, x, w, 0, 0), b, 1);
}

static void ae_destroy(model *m)
{
    if (!m)
        return;
    ae_priv *p = m->priv;
    if (p)
        model_mnist_destroy(p->data);
    model_free(m);
}

static exec_status ae_create(const model_config *cfg, model **out);

static exec_status ae_step(model *m, float *loss)
{
    ae_priv *p = m->priv;
    float *x = exec_dataf(m->g, p->x);
    if (!x || !p->data)
        return exec_fail(EXEC_ERR_STATE, "autoenc: step on an unplanned model");
    for (int i = 0; i < m->batch; i++) {
        memcpy(x + (size_t)i * 784, p->data->images + (size_t)(p->cursor % p->data->n) * 784, 784 * sizeof *x);
        p->cursor++;
    }
    exec_status s = model_run_graph(m);
    if (s)
        return s;
    *loss = m->loss ? exec_dataf(m->g, m->loss)[0] : NAN;
    return EXEC_OK;
}

const model_def model_autoenc = {
    .name = "autoenc",
    .paper = "Kingma and Welling 2014",
    .kind = "generative",
    .data_format = "an MNIST idx3-ubyte image file of 28x28 images",
    .summary = "variational autoencoder 784-500-(mu, logvar 20)-500-784, reparameterised sampling",
    .batch = { 32, 128, 128 },
    .create = ae_create,
    .step = ae_step,
    .destroy = ae_destroy,
};

static exec_status ae_create(const model_config *cfg, model **out)
{
    *out = NULL;
    const ae_preset *ps = &presets[cfg->preset];
    model *m;
    exec_status s = model_alloc(&model_autoenc, cfg, sizeof(ae_priv), &m);
    if (s)
        return s;
    ae_priv *p = m->priv;
    exec_graph *g = m->g;
    const int64_t N = m->batch, H = ps->hidden, Z = ps->latent;

    p->x = exec_input(g, "images", EXEC_F32, 2, (int64_t[]){ N, 784 });
    uint32_t h = ex_tanh(g, dense(g, "enc/h", p->x, 784, H));
    uint32_t mu = dense(g, "enc/mu", h, H, Z);
    uint32_t logvar = dense(g, "enc/logvar", h, H, Z);
    uint32_t half = exec_const(g, "0.5", 1, (int64_t[]){ 1 }, 0.5f);
    uint32_t eps = ex_random_normal(g, 2, (int64_t[]){ N, Z }, 0.0f, 1.0f);
    uint32_t z = ex_add(g, mu, ex_mul(g, ex_exp(g, ex_mul(g, logvar, half)), eps));
    uint32_t h2 = ex_tanh(g, dense(g, "dec/h", z, Z, H));
    uint32_t logits = dense(g, "dec/x", h2, H, 784);
    if (cfg->mode == MODEL_TRAIN) {
        uint32_t recon = ex_sigmoid_xent(g, logits, p->x);
        /* KL = -1/2 sum(1 + logvar - mu^2 - exp(logvar)), averaged over the batch */
        uint32_t one = exec_const(g, "1", 1, (int64_t[]){ 1 }, 1.0f);
        uint32_t t = ex_sub(g, ex_sub(g, ex_add(g, logvar, one), ex_square(g, mu)), ex_exp(g, logvar));
        uint32_t scale = exec_const(g, "-0.5/N", 1, (int64_t[]){ 1 }, -0.5f / (float)N);
        uint32_t kl = ex_mul(g, ex_sum(g, t, 0, NULL, 0), scale);
        m->loss = ex_add(g, recon, kl);
        if (!exec_graph_status(g) && !(s = exec_gradients(g, m->loss)))
            s = exec_optimizer_adam(g, 1e-3f, 0.9f, 0.999f, 1e-8f);
    } else {
        p->out = ex_sigmoid(g, logits);
    }
    if (!s)
        s = exec_graph_status(g);
    if (!s && cfg->plan) {
        if (cfg->data_path) {
            s = model_mnist_load(cfg->data_path, NULL, &p->data);
            if (!s && p->data->rows * p->data->cols != 784)
                s = exec_fail(EXEC_ERR_ARG, "autoenc: %s holds %dx%d images, the model takes 28x28", cfg->data_path,
                              p->data->rows, p->data->cols);
        } else {
            s = model_mnist_generate(ps->images, cfg->seed, model_threads(m), &p->data);
        }
        if (!s)
            s = exec_graph_plan(g);
    }
    if (s) {
        ae_destroy(m);
        return s;
    }
    *out = m;
    return EXEC_OK;
}
