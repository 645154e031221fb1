/* speech.c -- Deep Speech (Hannun et al. 2014) as Fathom's speech workload,
 * with its bidirectional layer actually run (Fathom's never was):
 *
 *   h1..h3 = min(max(x W + b, 0), 20)                      FC 1024, clipped ReLU
 *   h4f_t  = g(h3_t W4 + b4 + h4f_{t-1} Uf)                forward direction
 *   h4b_t  = g(h3_t W4 + b4 + h4b_{t+1} Ub)                backward direction
 *   h5     = g((h4f + h4b) W5 + b5)                         both feed the next layer
 *   logits = h5 W6 + b6                                     62 = 61 phonemes + blank
 *
 * W4 and b4 are shared by the two directions as in the paper (eq. 3); the
 * recurrence is unrolled over the fixed number of frames (1566 at full,
 * Fathom's maximum). The input is time-major, 26 features per frame, or
 * 26 * (2C + 1) with the paper's context window of C frames each side (the
 * tiny preset uses C = 2). CTC loss (forward-backward in log space) over the
 * logits, SGD lr 0.01, batch 32, the gradients clipped to global norm 5
 * (not in Fathom's: without it the recurrence's gradients blow up from some
 * seeds, the CLI's default among them: tiny 85.6 -> 2755 in 20 steps,
 * small NaN by step 7).
 *
 * infer: the forward pass and the greedy CTC decoder. */
#include "models/model.h"

#include "base/alloc.h"
#include "exec/build.h"
#include "models/seqdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define SP_FEATURES 26
#define SP_CLASSES 62 /* 61 phonemes + the CTC blank (last) */

typedef struct sp_preset {
    int frames, context, hidden, max_labels;
} sp_preset;
static const sp_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 24, 2, 64, 5 },
    [MODEL_SMALL] = { 200, 0, 512, 20 },
    [MODEL_FULL] = { 1566, 0, 1024, 75 },
};

typedef struct sp_priv {
    model_frames *data;
    const sp_preset *ps;
    uint32_t x, labels, label_len, seq_len, decoded;
    uint64_t step;
} sp_priv;

static void sp_destroy(model *m)
{
    if (!m)
        return;
    sp_priv *p = m->priv;
    if (p)
        model_frames_destroy(p->data);
    model_free(m);
}

static uint32_t dense(exec_graph *g, const char *name, uint32_t x, int64_t in, int64_t out)
{
    char wn[48], bn[48];
    snprintf(wn, sizeof wn, "%s/W", name);
    snprintf(bn, sizeof bn, "%s/b", name);
    uint32_t w = exec_weight(g, wn, 2, (int64_t[]){ in, out }, EXEC_INIT_GLOROT);
    uint32_t b = exec_weight(g, bn, 1, (int64_t[]){ out }, EXEC_INIT_ZERO);
    return ex_bias_add(g, ex_matmul(g, x, w, 0, 0), b, 1);
}

static exec_status sp_create(const model_config *cfg, model **out);

static exec_status sp_step(model *m, float *loss)
{
    sp_priv *p = m->priv;
    exec_graph *g = m->g;
    float *x = exec_dataf(g, p->x);
    if (!x)
        return exec_fail(EXEC_ERR_STATE, "speech: step on an unplanned model");
    const sp_preset *ps = p->ps;
    int32_t scratch_len[m->batch];
    int32_t *labels = p->labels ? exec_datai(g, p->labels) : NULL;
    int32_t *label_len = p->label_len ? exec_datai(g, p->label_len) : scratch_len;
    int32_t *lab_buf = labels;
    if (!lab_buf && !(lab_buf = base_malloc((size_t)m->batch * ps->max_labels * sizeof *lab_buf)))
        return exec_fail(EXEC_ERR_NOMEM, "speech: out of memory");
    model_frames_fill(p->data, p->step++, ps->frames, m->batch, ps->context, ps->max_labels, x, lab_buf, label_len,
                      exec_datai(g, p->seq_len));
    if (!labels)
        base_free(lab_buf);
    exec_status s = model_run_graph(m);
    if (s)
        return s;
    *loss = m->loss ? exec_dataf(g, m->loss)[0] : NAN;
    return EXEC_OK;
}

const model_def model_speech = {
    .name = "speech",
    .paper = "Hannun et al. 2014",
    .kind = "recurrent",
    .summary = "Deep Speech: 3 FC 1024 clipped ReLU, bidirectional RNN 1024, FC, 62 classes, CTC",
    .batch = { 4, 16, 32 },
    .create = sp_create,
    .step = sp_step,
    .destroy = sp_destroy,
};

static exec_status sp_create(const model_config *cfg, model **out)
{
    *out = NULL;
    const sp_preset *ps = &presets[cfg->preset];
    model *m;
    exec_status s = model_alloc(&model_speech, cfg, sizeof(sp_priv), &m);
    if (s)
        return s;
    sp_priv *p = m->priv;
    p->ps = ps;
    exec_graph *g = m->g;
    if (cfg->data_path) {
        sp_destroy(m);
        return exec_fail(EXEC_ERR_ARG, "speech: no real-format loader (TIMIT is licensed); it runs on its generator");
    }
    const int64_t T = ps->frames, N = m->batch, H = ps->hidden, W = SP_FEATURES * (2 * ps->context + 1);
    uint32_t *xs = base_malloc((size_t)T * sizeof *xs), *hf = base_malloc((size_t)T * sizeof *hf),
             *hb = base_malloc((size_t)T * sizeof *hb);
    if (!xs || !hf || !hb) {
        s = exec_fail(EXEC_ERR_NOMEM, "speech: out of memory");
        goto done;
    }

    p->x = exec_input(g, "frames", EXEC_F32, 2, (int64_t[]){ T * N, W }); /* [T, N, W] time-major */
    p->seq_len = exec_input(g, "seq_len", EXEC_I32, 1, (int64_t[]){ N });
    uint32_t h = ex_clipped_relu(g, dense(g, "fc1", p->x, W, H), 20.0f);
    h = ex_clipped_relu(g, dense(g, "fc2", h, H, H), 20.0f);
    h = ex_clipped_relu(g, dense(g, "fc3", h, H, H), 20.0f);
    /* the bidirectional layer: one input projection, two recurrences */
    uint32_t x4 = dense(g, "birnn", h, H, H);
    uint32_t uf = exec_weight(g, "birnn/fw/U", 2, (int64_t[]){ H, H }, EXEC_INIT_GLOROT);
    uint32_t ub = exec_weight(g, "birnn/bw/U", 2, (int64_t[]){ H, H }, EXEC_INIT_GLOROT);
    if ((s = ex_split(g, x4, 0, (int)T, xs)) || (s = exec_graph_status(g)))
        goto done;
    for (int64_t t = 0; t < T; t++)
        hf[t] = ex_clipped_relu(g, t ? ex_add(g, xs[t], ex_matmul(g, hf[t - 1], uf, 0, 0)) : xs[t], 20.0f);
    for (int64_t t = T; t-- > 0;)
        hb[t] = ex_clipped_relu(g, t < T - 1 ? ex_add(g, xs[t], ex_matmul(g, hb[t + 1], ub, 0, 0)) : xs[t], 20.0f);
    uint32_t h4 = ex_add(g, ex_concat(g, (int)T, hf, 0), ex_concat(g, (int)T, hb, 0)); /* [T*N, H] */
    h = ex_clipped_relu(g, dense(g, "fc5", h4, H, H), 20.0f);
    uint32_t logits = ex_reshape(g, dense(g, "out", h, H, SP_CLASSES), 3, (int64_t[]){ T, N, SP_CLASSES });

    if (cfg->mode == MODEL_TRAIN) {
        p->labels = exec_input(g, "labels", EXEC_I32, 2, (int64_t[]){ N, ps->max_labels });
        p->label_len = exec_input(g, "label_len", EXEC_I32, 1, (int64_t[]){ N });
        m->loss = ex_ctc_loss(g, logits, p->labels, p->label_len, p->seq_len);
        if (!(s = exec_graph_status(g)) && !(s = exec_gradients(g, m->loss)) && !(s = exec_clip_global_norm(g, 5.0f)))
            s = exec_optimizer_sgd(g, 0.01f);
    } else {
        p->decoded = ex_ctc_greedy_decoder(g, logits, p->seq_len);
    }
    if (!s)
        s = exec_graph_status(g);
    if (!s && cfg->plan && !(s = model_frames_create(SP_CLASSES - 1, SP_FEATURES, cfg->seed, &p->data)))
        s = exec_graph_plan(g);
done:
    base_free(xs);
    base_free(hf);
    base_free(hb);
    if (s) {
        sp_destroy(m);
        return s;
    }
    *out = m;
    return EXEC_OK;
}
