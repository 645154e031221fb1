/* memnet.c -- End-To-End Memory Networks (Sukhbaatar et al. 2015) on bAbI:
 * K = 3 hops over a memory of 50 sentences, embedding 20, position
 * encoding (l_kj = (1 - j/J) - (k/d)(1 - 2j/J)), temporal encoding (T_A,
 * T_C), and the paper's adjacent weight tying: embeddings E_0..E_K and
 * temporal matrices T_0..T_K, hop k reads memory with (E_k, T_k) and
 * outputs with (E_k+1, T_k+1), the question embedding B = E_0 and the
 * answer matrix W^T = E_K. Per hop: p = softmax(m u), o = sum_i p_i c_i,
 * u <- u + o (BatchMatMul, Softmax, Add); answer softmax over the
 * vocabulary. Training as Fathom's (domluna's MemN2N): Adam 0.01, each
 * gradient clipped to norm 40, Gaussian noise of stddev 1e-3 added to every
 * gradient, the nil word's row (id 0, padding) kept at zero; batch 32.
 *
 * infer: the forward pass and the ArgMax answer. */
#include "models/model.h"

#include "exec/build.h"
#include "models/seqdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct mn_preset {
    int emb, hops, mem, stories;
} mn_preset;
static const mn_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 20, 3, 10, 200 },
    [MODEL_SMALL] = { 20, 3, 50, 2000 },
    [MODEL_FULL] = { 20, 3, 50, 2000 },
};

#define MN_MAX_HOPS 8

typedef struct mn_priv {
    model_babi_set *data;
    uint32_t stories, query, answers, pe, nilmask, answer_out;
    uint32_t emb[MN_MAX_HOPS + 1];
    int hops, emb_dim;
    int64_t cursor;
} mn_priv;

static void mn_destroy(model *m)
{
    if (!m)
        return;
    mn_priv *p = m->priv;
    if (p)
        model_babi_destroy(p->data);
    model_free(m);
}

/* sum_j l_j * E[x_j] over the words of each sentence: [..., J] -> [..., d] */
static uint32_t encode(exec_graph *g, uint32_t emb, uint32_t words, uint32_t pe, int word_axis)
{
    int64_t axis = word_axis;
    return ex_sum(g, ex_mul(g, ex_gather(g, emb, words), pe), 1, &axis, 0);
}

static exec_status mn_create(const model_config *cfg, model **out);

static exec_status mn_step(model *m, float *loss)
{
    mn_priv *p = m->priv;
    exec_graph *g = m->g;
    int32_t *st = exec_datai(g, p->stories), *q = exec_datai(g, p->query), *a = exec_datai(g, p->answers);
    if (!st)
        return exec_fail(EXEC_ERR_STATE, "memnet: step on an unplanned model");
    const model_babi_set *d = p->data;
    size_t ms = (size_t)d->mem * d->sent_len;
    for (int i = 0; i < m->batch; i++) {
        size_t k = (size_t)(p->cursor % d->n);
        model_babi_memory(d, (int)k, st + i * ms);
        memcpy(q + (size_t)i * d->sent_len, d->queries + k * d->sent_len, (size_t)d->sent_len * sizeof *q);
        if (a)
            a[i] = d->answers[k];
        p->cursor++;
    }
    exec_status s = model_run_graph(m);
    if (s)
        return s;
    *loss = m->loss ? exec_dataf(g, m->loss)[0] : NAN;
    return EXEC_OK;
}

const model_def model_memnet = {
    .name = "memnet",
    .paper = "Sukhbaatar et al. 2015",
    .kind = "memory network",
    .data_format = "a bAbI task file (numbered story lines, tab-separated answers)",
    .summary = "end-to-end memory network: embedding 20, 3 hops, memory 50, position + temporal encoding",
    .batch = { 32, 32, 32 },
    .create = mn_create,
    .step = mn_step,
    .destroy = mn_destroy,
};

/* After plan: the position-encoding table, the nil mask, nil rows zeroed. */
static void mn_fill_constants(model *m)
{
    mn_priv *p = m->priv;
    exec_graph *g = m->g;
    const int J = p->data->sent_len, d = p->emb_dim, V = p->data->vocab;
    float *pe = exec_dataf(g, p->pe);
    for (int j = 1; j <= J; j++)
        for (int k = 1; k <= d; k++)
            pe[(j - 1) * d + (k - 1)] = (1.0f - (float)j / J) - ((float)k / d) * (1.0f - 2.0f * (float)j / J);
    if (p->nilmask) {
        float *mask = exec_dataf(g, p->nilmask);
        for (int i = 0; i < V * d; i++)
            mask[i] = i < d ? 0.0f : 1.0f;
    }
    for (int k = 0; k <= p->hops; k++)
        memset(exec_dataf(g, p->emb[k]), 0, (size_t)d * sizeof(float));
}

static exec_status mn_create(const model_config *cfg, model **out)
{
    *out = NULL;
    const mn_preset *ps = &presets[cfg->preset];
    model *m;
    exec_status s = model_alloc(&model_memnet, cfg, sizeof(mn_priv), &m);
    if (s)
        return s;
    mn_priv *p = m->priv;
    exec_graph *g = m->g;
    p->hops = ps->hops;
    p->emb_dim = ps->emb;
    s = cfg->data_path ? model_babi_load(cfg->data_path, ps->mem, &p->data)
                       : model_babi_generate(ps->stories, cfg->seed, ps->mem, &p->data);
    if (s) {
        mn_destroy(m);
        return s;
    }
    const int64_t N = m->batch, M = ps->mem, J = p->data->sent_len, V = p->data->vocab, D = ps->emb;

    p->stories = exec_input(g, "stories", EXEC_I32, 3, (int64_t[]){ N, M, J });
    p->query = exec_input(g, "query", EXEC_I32, 2, (int64_t[]){ N, J });
    p->pe = exec_input(g, "position_encoding", EXEC_F32, 2, (int64_t[]){ J, D });
    uint32_t temporal[MN_MAX_HOPS + 1];
    for (int k = 0; k <= p->hops; k++) {
        char name[32];
        snprintf(name, sizeof name, "E%d", k);
        p->emb[k] = exec_weight_scaled(g, name, 2, (int64_t[]){ V, D }, EXEC_INIT_NORMAL, 0.1f);
        snprintf(name, sizeof name, "T%d", k);
        temporal[k] = exec_weight_scaled(g, name, 2, (int64_t[]){ M, D }, EXEC_INIT_NORMAL, 0.1f);
    }
    /* the embedded memories: hop k reads mem[k] (A) and mem[k+1] (C) */
    uint32_t mem[MN_MAX_HOPS + 1];
    for (int k = 0; k <= p->hops; k++)
        mem[k] = ex_add(g, encode(g, p->emb[k], p->stories, p->pe, 2), temporal[k]); /* [N, M, D] */
    uint32_t u = encode(g, p->emb[0], p->query, p->pe, 1);                           /* [N, D] */
    for (int k = 0; k < p->hops; k++) {
        uint32_t score = ex_batch_matmul(g, mem[k], ex_reshape(g, u, 3, (int64_t[]){ N, D, 1 }), 0, 0);
        uint32_t prob = ex_softmax(g, ex_reshape(g, score, 2, (int64_t[]){ N, M }));
        uint32_t o = ex_batch_matmul(g, ex_reshape(g, prob, 3, (int64_t[]){ N, 1, M }), mem[k + 1], 0, 0);
        u = ex_add(g, u, ex_reshape(g, o, 2, (int64_t[]){ N, D }));
    }
    uint32_t logits = ex_matmul(g, u, p->emb[p->hops], 0, 1); /* W^T = E_K: [N, V] */

    if (cfg->mode == MODEL_TRAIN) {
        p->answers = exec_input(g, "answers", EXEC_I32, 1, (int64_t[]){ N });
        p->nilmask = exec_input(g, "nil_mask", EXEC_F32, 2, (int64_t[]){ V, D });
        m->loss = ex_sparse_softmax_xent(g, logits, p->answers);
        if (!(s = exec_graph_status(g)) && !(s = exec_gradients(g, m->loss)) && !(s = exec_clip_by_norm(g, 40.0f))) {
            exec_set_phase(g, EXEC_PHASE_backward);
            for (uint32_t i = 0; i < exec_weight_count(g); i++) {
                uint32_t w = exec_weight_id(g, i), gw = exec_grad_of(g, w);
                if (!gw)
                    continue;
                const exec_tensor *t = exec_tensor_get(g, w);
                gw = ex_add(g, gw, ex_random_normal(g, t->ndim, t->shape, 0.0f, 1e-3f));
                for (int k = 0; k <= p->hops; k++)
                    if (w == p->emb[k])
                        gw = ex_mul(g, gw, p->nilmask); /* the nil word stays zero */
                exec_grad_set(g, w, gw);
            }
            exec_set_phase(g, EXEC_PHASE_forward);
            if (!(s = exec_graph_status(g)))
                s = exec_optimizer_adam(g, 0.01f, 0.9f, 0.999f, 1e-8f);
        }
    } else {
        p->answer_out = ex_argmax(g, logits, 1);
    }
    if (!s)
        s = exec_graph_status(g);
    if (!s && cfg->plan && !(s = exec_graph_plan(g)))
        mn_fill_constants(m);
    if (s) {
        mn_destroy(m);
        return s;
    }
    *out = m;
    return EXEC_OK;
}
