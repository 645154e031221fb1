/* transformer.c -- the Transformer (Vaswani et al. 2017, "Attention Is All
 * You Need"), the base model at the full preset:
 *
 *   embedding  one V x d_model matrix shared by the source, the target and
 *              the pre-softmax projection (logits = y E^T); embeddings
 *              scaled by sqrt(d_model), plus sinusoidal positions
 *              PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(..)
 *   encoder    N layers of [self-attention, feed-forward], decoder N layers
 *              of [masked self-attention, encoder-decoder attention,
 *              feed-forward]; every sub-layer post-norm:
 *              x = LayerNorm(x + Dropout(sublayer(x))); each stack ends in
 *              a LayerNorm, as nn.Transformer's does
 *   attention  h heads of d_k = d_model / h: the projections are one MatMul
 *              (Q, K and V together for self-attention, as nn.Transformer's
 *              in_proj; Q, and K and V, for the encoder-decoder one), laid
 *              out as [1, B, h, T, d_k] by one Transpose and a Split, then
 *              all heads at once, as nn.Transformer and TF batch them:
 *              BatchMatMul(Q, K^T) over the (B, h) batch dims, Mul by
 *              1/sqrt(d_k), MaskedFill (padding keys; future positions in
 *              the decoder), Softmax, BatchMatMul with V; a Transpose back
 *              to [B, T, h, d_k], then the output projection. Independent
 *              branches (Q, K and V; the encoder-decoder attention's keys
 *              and values of every layer) run on the inter-op workers
 *   FFN        MatMul d_model x d_ff, Relu, MatMul d_ff x d_model
 *
 * Training: label-smoothed (0.1) cross entropy over the non-padding target
 * tokens, residual dropout 0.1, Adam (beta1 0.9, beta2 0.98, epsilon 1e-9)
 * with the paper's schedule lr = d_model^-0.5 min(s^-0.5, s warmup^-1.5).
 * infer: the encoder once, then greedy decoding: per step the new token's
 * layers over the cached keys and values of the earlier ones (ConcatV2),
 * the tied projection, ArgMax, and Gather of the next input.
 *
 * Data: the copy task (model_tokens_copy_task) or token-id parallel text
 * (--data, model_tokens_load). */
#include "models/transformer.h"

#include "base/alloc.h"
#include "exec/build.h"
#include "models/seqdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct tf_preset {
    int vocab, d, heads, dff, layers, len, warmup, examples;
    float dropout, lr_scale;
} tf_preset;
static const tf_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 16, 32, 4, 64, 2, 8, 40, 4096, 0.1f, 0.5f },
    [MODEL_SMALL] = { 8000, 256, 8, 1024, 3, 32, 1000, 20000, 0.1f, 1.0f },
    [MODEL_FULL] = { 37000, 512, 8, 2048, 6, 64, 4000, 100000, 0.1f, 1.0f },
};

#define TF_MAX_LAYERS 8

typedef struct mha {
    uint32_t wq, bq, wkv, bkv, wo, bo;
} mha; /* self-attention: wq, bq are [d, 3d], [3d] */
typedef struct ffn {
    uint32_t w1, b1, w2, b2;
} ffn;
typedef struct lnorm {
    uint32_t gamma, beta;
} lnorm;
typedef struct enc_layer {
    mha att;
    ffn ff;
    lnorm n1, n2;
} enc_layer;
typedef struct dec_layer {
    mha self, cross;
    ffn ff;
    lnorm n1, n2, n3;
} dec_layer;

typedef struct tf_priv {
    const tf_preset *ps;
    model_text_corpus *data;
    uint32_t src, src_mask, tgt_in, tgt_out, go, pe, causal;
    uint32_t *pred;    /* infer: ArgMax of each step, int32 [B] */
    int32_t *last_src; /* infer: the last batch's sources and outputs [B, len] */
    int32_t *last_out;
    int64_t cursor;
    uint64_t steps;
} tf_priv;

/* the graph-building context */
typedef struct tf_build {
    exec_graph *g;
    const tf_preset *ps;
    int64_t B;
    float dropout;  /* 0 in infer graphs */
    uint32_t scale; /* [1]: 1/sqrt(d_k) */
} tf_build;

static void tf_destroy(model *m)
{
    if (!m)
        return;
    tf_priv *p = m->priv;
    if (p) {
        model_text_destroy(p->data);
        base_free(p->pred);
        base_free(p->last_src);
        base_free(p->last_out);
    }
    model_free(m);
}

static uint32_t weight(exec_graph *g, const char *prefix, const char *what, int ndim, const int64_t *shape,
                       exec_init init)
{
    char name[48];
    snprintf(name, sizeof name, "%s/%s", prefix, what);
    return exec_weight(g, name, ndim, shape, init);
}

static mha mha_new(exec_graph *g, const char *prefix, int64_t d, bool self)
{
    mha a = { 0 };
    if (self) {
        a.wq = weight(g, prefix, "Wqkv", 2, (int64_t[]){ d, 3 * d }, EXEC_INIT_GLOROT);
        a.bq = weight(g, prefix, "bqkv", 1, (int64_t[]){ 3 * d }, EXEC_INIT_ZERO);
    } else {
        a.wq = weight(g, prefix, "Wq", 2, (int64_t[]){ d, d }, EXEC_INIT_GLOROT);
        a.bq = weight(g, prefix, "bq", 1, (int64_t[]){ d }, EXEC_INIT_ZERO);
        a.wkv = weight(g, prefix, "Wkv", 2, (int64_t[]){ d, 2 * d }, EXEC_INIT_GLOROT);
        a.bkv = weight(g, prefix, "bkv", 1, (int64_t[]){ 2 * d }, EXEC_INIT_ZERO);
    }
    a.wo = weight(g, prefix, "Wo", 2, (int64_t[]){ d, d }, EXEC_INIT_GLOROT);
    a.bo = weight(g, prefix, "bo", 1, (int64_t[]){ d }, EXEC_INIT_ZERO);
    return a;
}

static ffn ffn_new(exec_graph *g, const char *prefix, int64_t d, int64_t dff)
{
    return (ffn){ weight(g, prefix, "W1", 2, (int64_t[]){ d, dff }, EXEC_INIT_GLOROT),
                  weight(g, prefix, "b1", 1, (int64_t[]){ dff }, EXEC_INIT_ZERO),
                  weight(g, prefix, "W2", 2, (int64_t[]){ dff, d }, EXEC_INIT_GLOROT),
                  weight(g, prefix, "b2", 1, (int64_t[]){ d }, EXEC_INIT_ZERO) };
}

static lnorm lnorm_new(exec_graph *g, const char *prefix, int64_t d)
{
    return (lnorm){ weight(g, prefix, "gamma", 1, (int64_t[]){ d }, EXEC_INIT_ONE),
                    weight(g, prefix, "beta", 1, (int64_t[]){ d }, EXEC_INIT_ZERO) };
}

/* x [R, d] W + b */
static uint32_t linear(exec_graph *g, uint32_t x, uint32_t w, uint32_t b)
{
    return ex_bias_add(g, ex_matmul(g, x, w, 0, 0), b, 1);
}

/* x [B*T, k*d] -> k tensors of all heads [1, B, h, T, d_k] (Q first, then
 * K, then V): Reshape to [B, T, k, h, d_k], one Transpose to [k, B, h, T,
 * d_k] and, for k > 1, a Split along the first axis, as nn.Transformer's and
 * TF's multi-head attention lay the heads out for batched matmuls over
 * (B, h). One position (a decoding step) needs no Transpose: Split x
 * [B, k*d] and Reshape each part. */
static exec_status heads_of(const tf_build *t, uint32_t x, int64_t T, int k, uint32_t *out)
{
    exec_graph *g = t->g;
    const int64_t H = t->ps->heads, dk = t->ps->d / H;
    exec_status s;
    if (T > 1) {
        uint32_t r = ex_reshape(g, x, 5, (int64_t[]){ t->B, T, k, H, dk });
        out[0] = ex_transpose(g, r, (int64_t[]){ 2, 0, 3, 1, 4 });
        s = k > 1 ? ex_split(g, out[0], 0, k, out) : EXEC_OK;
    } else {
        uint32_t parts[3] = { x };
        s = k > 1 ? ex_split(g, x, 1, k, parts) : EXEC_OK;
        for (int i = 0; i < k && !s; i++)
            out[i] = ex_reshape(g, parts[i], 5, (int64_t[]){ 1, t->B, H, 1, dk });
    }
    return s ? s : exec_graph_status(g);
}

/* softmax(Q K^T / sqrt(d_k), masked) V over all heads at once, the heads
 * concatenated and projected: q [1, B, h, Tq, d_k], k and v [1, B, h, Tk,
 * d_k]; mask [1, B or 1, 1, Tq or 1, Tk] -> [B*Tq, d] */
static uint32_t attend(const tf_build *t, const mha *w, uint32_t q, uint32_t k, uint32_t v, int64_t Tq, uint32_t mask)
{
    exec_graph *g = t->g;
    uint32_t s = ex_mul(g, ex_batch_matmul(g, q, k, 0, 1), t->scale); /* [1, B, h, Tq, Tk] */
    if (mask)
        s = ex_masked_fill(g, s, mask, -1e9f);
    uint32_t o = ex_batch_matmul(g, ex_softmax(g, s), v, 0, 0); /* [1, B, h, Tq, d_k] */
    if (Tq > 1)
        o = ex_transpose(g, o, (int64_t[]){ 1, 3, 0, 2, 4 }); /* [B, Tq, 1, h, d_k] */
    return linear(g, ex_reshape(g, o, 2, (int64_t[]){ t->B * Tq, t->ps->d }), w->wo, w->bo);
}

/* x = LayerNorm(x + Dropout(y)) */
static uint32_t add_norm(const tf_build *t, uint32_t x, uint32_t y, const lnorm *n)
{
    if (t->dropout > 0)
        y = ex_dropout(t->g, y, t->dropout);
    return ex_layer_norm(t->g, ex_add(t->g, x, y), n->gamma, n->beta, 1e-5f);
}

static uint32_t feed_forward(const tf_build *t, uint32_t x, const ffn *f)
{
    return linear(t->g, ex_relu(t->g, linear(t->g, x, f->w1, f->b1)), f->w2, f->b2);
}

/* self-attention over x [B*T, d] */
static uint32_t self_attention(const tf_build *t, const mha *w, uint32_t x, int64_t T, uint32_t mask)
{
    uint32_t qkv[3];
    if (heads_of(t, linear(t->g, x, w->wq, w->bq), T, 3, qkv))
        return 0;
    return attend(t, w, qkv[0], qkv[1], qkv[2], T, mask);
}

/* the encoder-decoder attention's keys and values of memory [B*Ts, d] */
static exec_status cross_kv(const tf_build *t, const mha *w, uint32_t memory, int64_t Ts, uint32_t *kv)
{
    return heads_of(t, linear(t->g, memory, w->wkv, w->bkv), Ts, 2, kv);
}

static uint32_t cross_attention(const tf_build *t, const mha *w, uint32_t y, int64_t Tq, const uint32_t *kv,
                                uint32_t mask)
{
    uint32_t q;
    if (heads_of(t, linear(t->g, y, w->wq, w->bq), Tq, 1, &q))
        return 0;
    return attend(t, w, q, kv[0], kv[1], Tq, mask);
}

/* sqrt(d) E[ids] + PE: ids int32 [B*T] -> [B*T, d]; pe [T, d] */
static uint32_t embed(const tf_build *t, uint32_t emb, uint32_t sqrt_d, uint32_t ids, uint32_t pe, int64_t T)
{
    exec_graph *g = t->g;
    const int64_t d = t->ps->d;
    uint32_t x = ex_reshape(g, ex_mul(g, ex_gather(g, emb, ids), sqrt_d), 3, (int64_t[]){ t->B, T, d });
    x = ex_reshape(g, ex_add(g, x, pe), 2, (int64_t[]){ t->B * T, d });
    return t->dropout > 0 ? ex_dropout(g, x, t->dropout) : x;
}

static exec_status tf_create(const model_config *cfg, model **out);

/* lr = scale * d^-0.5 * min(s^-0.5, s * warmup^-1.5) at step s (from 1) */
static float tf_lr(const tf_preset *ps, uint64_t step)
{
    double s = (double)step, w = (double)ps->warmup;
    return (float)(ps->lr_scale / sqrt((double)ps->d) * fmin(1.0 / sqrt(s), s * pow(w, -1.5)));
}

static exec_status tf_step(model *m, float *loss)
{
    tf_priv *p = m->priv;
    exec_graph *g = m->g;
    int32_t *src = exec_datai(g, p->src);
    if (!src || !p->data)
        return exec_fail(EXEC_ERR_STATE, "transformer: step on an unplanned model");
    const model_text_corpus *d = p->data;
    const int B = m->batch, T = p->ps->len;
    float *mask = exec_dataf(g, p->src_mask);
    int32_t *tin = p->tgt_in ? exec_datai(g, p->tgt_in) : NULL, *tout = p->tgt_out ? exec_datai(g, p->tgt_out) : NULL;
    for (int b = 0; b < B; b++) {
        size_t k = (size_t)(p->cursor % d->n);
        p->cursor++;
        const int32_t *sx = d->src + k * (size_t)d->src_len, *ty = d->tgt + k * (size_t)d->tgt_len;
        for (int t = 0; t < T; t++) {
            src[b * T + t] = sx[t];
            mask[b * T + t] = sx[t] == MODEL_TEXT_PAD;
            if (tin) {
                tin[b * T + t] = t ? ty[t - 1] : MODEL_TEXT_GO;
                tout[b * T + t] = ty[t];
            }
        }
        if (p->last_src)
            memcpy(p->last_src + (size_t)b * T, sx, (size_t)T * sizeof *sx);
    }
    if (p->go) {
        int32_t *go = exec_datai(g, p->go);
        for (int b = 0; b < B; b++)
            go[b] = MODEL_TEXT_GO;
    }
    exec_status s;
    p->steps++;
    if (m->cfg.mode == MODEL_TRAIN && (s = exec_optimizer_set_lr(g, tf_lr(p->ps, p->steps))))
        return s;
    if ((s = model_run_graph(m)))
        return s;
    if (p->pred)
        for (int t = 0; t < T; t++) {
            const int32_t *pr = exec_datai(g, p->pred[t]);
            for (int b = 0; b < B; b++)
                p->last_out[(size_t)b * T + t] = pr[b];
        }
    *loss = m->loss ? exec_dataf(g, m->loss)[0] : NAN;
    return EXEC_OK;
}

exec_status model_transformer_last_batch(const model *m, const int32_t **src, const int32_t **out, int *len)
{
    const tf_priv *p = m && m->def == &model_transformer ? m->priv : NULL;
    if (!p || !p->last_out || !p->steps)
        return exec_fail(EXEC_ERR_STATE, "transformer: no decoded batch (infer mode, after a step)");
    *src = p->last_src;
    *out = p->last_out;
    *len = p->ps->len;
    return EXEC_OK;
}

const model_def model_transformer = {
    .name = "transformer",
    .paper = "Vaswani et al. 2017",
    .kind = "attention",
    .data_format = "token-id parallel text: 'SRC IDS ||| TGT IDS' (or a tab) per line",
    .summary = "6+6 layers, d_model 512, 8 heads, d_ff 2048, post-norm, tied embedding, vocab 37000",
    /* full: 128 x 64 source and target tokens, the most whose tensors fit in
     * 24 GiB (23.4 GiB in train, all roles) */
    .batch = { 16, 32, 128 },
    .create = tf_create,
    .step = tf_step,
    .destroy = tf_destroy,
};

static exec_status tf_data(const model_config *cfg, const tf_preset *ps, model_text_corpus **out)
{
    if (cfg->data_path)
        return model_tokens_load(cfg->data_path, ps->len, ps->len, ps->vocab, out);
    return model_tokens_copy_task(ps->examples, ps->len, ps->vocab, false, cfg->seed, out);
}

/* the sinusoidal positions [T, d] and the causal mask [1, T, T] (1 above
 * the diagonal: a query never sees later keys) */
static void fill_constants(exec_graph *g, const tf_priv *p)
{
    const int T = p->ps->len, d = p->ps->d;
    float *pe = exec_dataf(g, p->pe);
    for (int pos = 0; pos < T; pos++)
        for (int i = 0; i < d; i += 2) {
            double a = pos / pow(10000.0, (double)i / d);
            pe[pos * d + i] = (float)sin(a);
            if (i + 1 < d)
                pe[pos * d + i + 1] = (float)cos(a);
        }
    if (p->causal) {
        float *c = exec_dataf(g, p->causal);
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                c[i * T + j] = j > i;
    }
}

static exec_status tf_create(const model_config *cfg, model **out)
{
    *out = NULL;
    const tf_preset *ps = &presets[cfg->preset];
    model *m;
    exec_status s = model_alloc(&model_transformer, cfg, sizeof(tf_priv), &m);
    if (s)
        return s;
    tf_priv *p = m->priv;
    p->ps = ps;
    exec_graph *g = m->g;
    const bool train = cfg->mode == MODEL_TRAIN;
    const int64_t B = m->batch, T = ps->len, d = ps->d, V = ps->vocab, H = ps->heads, L = ps->layers;
    tf_build t = { .g = g, .ps = ps, .B = B, .dropout = train ? ps->dropout : 0.0f };
    if (!train) {
        p->pred = base_calloc((size_t)T, sizeof *p->pred);
        p->last_src = base_calloc((size_t)(B * T), sizeof *p->last_src);
        p->last_out = base_calloc((size_t)(B * T), sizeof *p->last_out);
        if (!p->pred || !p->last_src || !p->last_out) {
            s = exec_fail(EXEC_ERR_NOMEM, "transformer: out of memory");
            goto done;
        }
    }
    if (cfg->plan && (s = tf_data(cfg, ps, &p->data)))
        goto done;

    /* ---- weights: the shared embedding, then the stacks ---- */
    uint32_t emb = exec_weight_scaled(g, "embedding", 2, (int64_t[]){ V, d }, EXEC_INIT_NORMAL, 1.0f / sqrtf((float)d));
    enc_layer enc[TF_MAX_LAYERS];
    dec_layer dec[TF_MAX_LAYERS];
    char n[40];
    /* in creation order, one statement each: the order fixes the tensor ids
     * and the initialization draws */
#define PART(stack, what) (snprintf(n, sizeof n, "%s/%d/%s", stack, l, what), n)
    for (int l = 0; l < L; l++) {
        enc[l].att = mha_new(g, PART("encoder", "attn"), d, true);
        enc[l].ff = ffn_new(g, PART("encoder", "ffn"), d, ps->dff);
        enc[l].n1 = lnorm_new(g, PART("encoder", "norm1"), d);
        enc[l].n2 = lnorm_new(g, PART("encoder", "norm2"), d);
    }
    lnorm enc_norm = lnorm_new(g, "encoder/norm", d);
    for (int l = 0; l < L; l++) {
        dec[l].self = mha_new(g, PART("decoder", "self"), d, true);
        dec[l].cross = mha_new(g, PART("decoder", "cross"), d, false);
        dec[l].ff = ffn_new(g, PART("decoder", "ffn"), d, ps->dff);
        dec[l].n1 = lnorm_new(g, PART("decoder", "norm1"), d);
        dec[l].n2 = lnorm_new(g, PART("decoder", "norm2"), d);
        dec[l].n3 = lnorm_new(g, PART("decoder", "norm3"), d);
    }
#undef PART
    lnorm dec_norm = lnorm_new(g, "decoder/norm", d);

    /* ---- inputs and constants ---- */
    p->src = exec_input(g, "source", EXEC_I32, 1, (int64_t[]){ B * T });
    p->src_mask = exec_input(g, "source_padding", EXEC_F32, 3, (int64_t[]){ B, 1, T });
    p->pe = exec_input(g, "positions", EXEC_F32, 2, (int64_t[]){ T, d });
    uint32_t sqrt_d = exec_const(g, "sqrt_d_model", 1, (int64_t[]){ 1 }, sqrtf((float)d));
    t.scale = exec_const(g, "attention_scale", 1, (int64_t[]){ 1 }, 1.0f / sqrtf((float)(d / H)));

    /* the padding mask as the scores' [1, B, h, Tq, Tk] takes it */
    uint32_t pad = ex_reshape(g, p->src_mask, 5, (int64_t[]){ 1, B, 1, 1, T });

    /* ---- encoder ---- */
    uint32_t x = embed(&t, emb, sqrt_d, p->src, p->pe, T);
    for (int l = 0; l < L; l++) {
        x = add_norm(&t, x, self_attention(&t, &enc[l].att, x, T, pad), &enc[l].n1);
        x = add_norm(&t, x, feed_forward(&t, x, &enc[l].ff), &enc[l].n2);
    }
    uint32_t memory = ex_layer_norm(g, x, enc_norm.gamma, enc_norm.beta, 1e-5f);
    uint32_t kv[TF_MAX_LAYERS][2];
    for (int l = 0; l < L; l++)
        if ((s = cross_kv(&t, &dec[l].cross, memory, T, kv[l])))
            goto done;

    if (train) {
        /* ---- decoder over the whole shifted target, causally masked ---- */
        p->tgt_in = exec_input(g, "target_inputs", EXEC_I32, 1, (int64_t[]){ B * T });
        p->tgt_out = exec_input(g, "targets", EXEC_I32, 1, (int64_t[]){ B * T });
        p->causal = exec_input(g, "causal_mask", EXEC_F32, 3, (int64_t[]){ 1, T, T });
        uint32_t causal = ex_reshape(g, p->causal, 5, (int64_t[]){ 1, 1, 1, T, T });
        uint32_t y = embed(&t, emb, sqrt_d, p->tgt_in, p->pe, T);
        for (int l = 0; l < L; l++) {
            y = add_norm(&t, y, self_attention(&t, &dec[l].self, y, T, causal), &dec[l].n1);
            y = add_norm(&t, y, cross_attention(&t, &dec[l].cross, y, T, kv[l], pad), &dec[l].n2);
            y = add_norm(&t, y, feed_forward(&t, y, &dec[l].ff), &dec[l].n3);
        }
        y = ex_layer_norm(g, y, dec_norm.gamma, dec_norm.beta, 1e-5f);
        uint32_t logits = ex_matmul(g, y, emb, 0, 1); /* [B*T, V] */
        m->loss = ex_label_smoothed_xent(g, logits, p->tgt_out, 0.1f, MODEL_TEXT_PAD);
        if (!(s = exec_graph_status(g)) && !(s = exec_gradients(g, m->loss)))
            s = exec_optimizer_adam(g, tf_lr(ps, 1), 0.9f, 0.98f, 1e-9f);
    } else {
        /* ---- greedy decoding, one token a step over cached keys/values ---- */
        p->go = exec_input(g, "go", EXEC_I32, 1, (int64_t[]){ B });
        uint32_t cache[TF_MAX_LAYERS][2]; /* keys, values [1, B, h, tokens so far, d_k] */
        uint32_t tok = p->go;
        for (int64_t step = 0; step < T && !s; step++) {
            uint32_t pos = ex_reshape(g, ex_slice(g, p->pe, (int64_t[]){ step, 0 }, (int64_t[]){ 1, d }), 1, &d);
            uint32_t y = ex_add(g, ex_mul(g, ex_gather(g, emb, tok), sqrt_d), pos); /* [B, d] */
            for (int l = 0; l < L && !s; l++) {
                uint32_t qkv[3];
                if ((s = heads_of(&t, linear(g, y, dec[l].self.wq, dec[l].self.bq), 1, 3, qkv)))
                    break;
                for (int i = 0; i < 2; i++) /* keys and values of the tokens so far */
                    cache[l][i] = step ? ex_concat(g, 2, (uint32_t[]){ cache[l][i], qkv[1 + i] }, 3) : qkv[1 + i];
                y = add_norm(&t, y, attend(&t, &dec[l].self, qkv[0], cache[l][0], cache[l][1], 1, 0), &dec[l].n1);
                y = add_norm(&t, y, cross_attention(&t, &dec[l].cross, y, 1, kv[l], pad), &dec[l].n2);
                y = add_norm(&t, y, feed_forward(&t, y, &dec[l].ff), &dec[l].n3);
            }
            y = ex_layer_norm(g, y, dec_norm.gamma, dec_norm.beta, 1e-5f);
            tok = p->pred[step] = ex_argmax(g, ex_matmul(g, y, emb, 0, 1), 1);
            if (!s)
                s = exec_graph_status(g);
        }
    }
    if (!s)
        s = exec_graph_status(g);
    if (!s && cfg->plan && !(s = exec_graph_plan(g)))
        fill_constants(g, p);
done:
    if (s) {
        tf_destroy(m);
        return s;
    }
    *out = m;
    return EXEC_OK;
}
