/* seq2seq.c -- sequence to sequence with attention (Sutskever et al. 2014;
 * Bahdanau et al. 2015), as Fathom ran it: TensorFlow's translate example
 * (embedding_attention_seq2seq) in its largest bucket, source 20 and target
 * 25 tokens.
 *
 *   encoder   embedding 256, 3 x BasicLSTMCell(256) over the reversed,
 *             padded source; every cell is the TF graph: ConcatV2([x, h]),
 *             MatMul, BiasAdd, Split into (i, j, f, o), Sigmoid, Tanh, Mul,
 *             Add with forget bias 1
 *   attention TF's attention_decoder: hidden features W1 h_i computed once;
 *             per step y = Wq [c0,h0,..,c2,h2] + bq (the whole state is the
 *             query), e_i = v . tanh(W1 h_i + y) (MatMul), a = Softmax(e),
 *             context = sum_i a_i h_i (BatchMatMul)
 *   decoder   embedding 256, input linear([emb, context]), 3 x LSTM(256)
 *             initialised with the encoder's final state, output
 *             linear([cell output, context])
 *   output    projection 256 x 40000 trained with sampled softmax (512
 *             log-uniform candidates; one op over all steps' outputs)
 *
 * Training: SGD lr 0.5, gradients clipped to global norm 5, batch 64.
 * infer: greedy decoding that feeds back its own predictions: per step the
 * full projection (MatMul, BiasAdd), ArgMax, and Gather of the next input. */
#include "models/model.h"

#include "base/alloc.h"
#include "exec/build.h"
#include "models/seqdata.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

typedef struct s2s_preset {
    int src_vocab, tgt_vocab, emb, units, layers, src_len, tgt_len, samples, sentences;
} s2s_preset;
static const s2s_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { 64, 64, 16, 16, 3, 6, 8, 16, 512 },
    [MODEL_SMALL] = { 4000, 4000, 128, 128, 3, 10, 15, 256, 20000 },
    [MODEL_FULL] = { 40000, 40000, 256, 256, 3, 20, 25, 512, 100000 },
};

#define S2S_MAX_LAYERS 4

typedef struct s2s_priv {
    model_text_corpus *data;
    const s2s_preset *ps;
    uint32_t enc_in, dec_in, targets, go;
    uint32_t *pred; /* infer: the ArgMax of each step, int32 [B] */
    int64_t cursor;
} s2s_priv;

typedef struct lstm {
    uint32_t w, b;
} lstm;

static void s2s_destroy(model *m)
{
    if (!m)
        return;
    s2s_priv *p = m->priv;
    if (p) {
        model_text_destroy(p->data);
        base_free(p->pred);
    }
    model_free(m);
}

static lstm lstm_new(exec_graph *g, const char *name, int64_t in, int64_t units)
{
    char wn[48], bn[48];
    snprintf(wn, sizeof wn, "%s/W", name);
    snprintf(bn, sizeof bn, "%s/b", name);
    return (lstm){ exec_weight(g, wn, 2, (int64_t[]){ in + units, 4 * units }, EXEC_INIT_GLOROT),
                   exec_weight(g, bn, 1, (int64_t[]){ 4 * units }, EXEC_INIT_ZERO) };
}

/* TF's BasicLSTMCell: i, j, f, o = split(W [x, h] + b);
 * c' = c sigmoid(f + 1) + sigmoid(i) tanh(j); h' = tanh(c') sigmoid(o). */
static void lstm_step(exec_graph *g, lstm l, uint32_t x, uint32_t one, uint32_t *c, uint32_t *h)
{
    uint32_t z = ex_bias_add(g, ex_matmul(g, ex_concat(g, 2, (uint32_t[]){ x, *h }, 1), l.w, 0, 0), l.b, 1);
    uint32_t q[4] = { 0 };
    if (ex_split(g, z, 1, 4, q))
        return;
    *c =
        ex_add(g, ex_mul(g, *c, ex_sigmoid(g, ex_add(g, q[2], one))), ex_mul(g, ex_sigmoid(g, q[0]), ex_tanh(g, q[1])));
    *h = ex_mul(g, ex_tanh(g, *c), ex_sigmoid(g, q[3]));
}

/* TF's linear([a, b]): one weight over the concatenation, shared by every step. */
typedef struct dense {
    uint32_t w, b;
} dense;
static dense dense_new(exec_graph *g, const char *name, int64_t in, int64_t out)
{
    char wn[48], bn[48];
    snprintf(wn, sizeof wn, "%s/W", name);
    snprintf(bn, sizeof bn, "%s/b", name);
    return (dense){ exec_weight(g, wn, 2, (int64_t[]){ in, out }, EXEC_INIT_GLOROT),
                    exec_weight(g, bn, 1, (int64_t[]){ out }, EXEC_INIT_ZERO) };
}
static uint32_t linear2(exec_graph *g, dense d, uint32_t a, uint32_t b)
{
    return ex_bias_add(g, ex_matmul(g, ex_concat(g, 2, (uint32_t[]){ a, b }, 1), d.w, 0, 0), d.b, 1);
}

static exec_status s2s_create(const model_config *cfg, model **out);

static exec_status s2s_step(model *m, float *loss)
{
    s2s_priv *p = m->priv;
    exec_graph *g = m->g;
    int32_t *enc = exec_datai(g, p->enc_in);
    if (!enc || !p->data)
        return exec_fail(EXEC_ERR_STATE, "seq2seq: step on an unplanned model");
    const model_text_corpus *d = p->data;
    const int B = m->batch, Ts = d->src_len, Tt = d->tgt_len;
    int32_t *dec = p->dec_in ? exec_datai(g, p->dec_in) : NULL, *tgt = p->targets ? exec_datai(g, p->targets) : NULL;
    for (int b = 0; b < B; b++) {
        size_t k = (size_t)(p->cursor % d->n);
        p->cursor++;
        const int32_t *src = d->src + k * Ts, *ty = d->tgt + k * Tt;
        for (int t = 0; t < Ts; t++) /* TF's habit: the padded source, reversed */
            enc[t * B + b] = src[Ts - 1 - t];
        for (int t = 0; t < Tt && dec; t++) {
            dec[t * B + b] = t ? ty[t - 1] : MODEL_TEXT_GO;
            tgt[t * B + b] = ty[t];
        }
    }
    if (p->go) {
        int32_t *go = exec_datai(g, p->go);
        for (int b = 0; b < B; b++)
            go[b] = MODEL_TEXT_GO;
    }
    exec_status s = model_run_graph(m);
    if (s)
        return s;
    *loss = m->loss ? exec_dataf(g, m->loss)[0] : NAN;
    return EXEC_OK;
}

const model_def model_seq2seq = {
    .name = "seq2seq",
    .paper = "Sutskever et al. 2014",
    .kind = "recurrent",
    .data_format = "SOURCE,TARGET: two parallel text files, one sentence per line",
    .summary = "3-layer LSTM 256 encoder-decoder with attention, vocab 40000, sampled softmax 512",
    .batch = { 8, 32, 64 },
    .create = s2s_create,
    .step = s2s_step,
    .destroy = s2s_destroy,
};

static exec_status s2s_data(const model_config *cfg, const s2s_preset *ps, model_text_corpus **out)
{
    if (!cfg->data_path)
        return model_text_synth(ps->sentences, ps->src_len, ps->tgt_len, ps->src_vocab, ps->tgt_vocab, cfg->seed, out);
    const char *comma = strchr(cfg->data_path, ',');
    if (!comma || comma == cfg->data_path || !comma[1])
        return exec_fail(EXEC_ERR_ARG, "seq2seq: --data wants SOURCE,TARGET (two parallel text files), got '%s'",
                         cfg->data_path);
    char *src = base_strdup(cfg->data_path);
    if (!src)
        return exec_fail(EXEC_ERR_NOMEM, "seq2seq: out of memory");
    src[comma - cfg->data_path] = '\0';
    exec_status s = model_text_load(src, comma + 1, ps->src_len, ps->tgt_len, ps->src_vocab, ps->tgt_vocab, out);
    base_free(src);
    return s;
}

static exec_status s2s_create(const model_config *cfg, model **out)
{
    *out = NULL;
    const s2s_preset *ps = &presets[cfg->preset];
    model *m;
    exec_status s = model_alloc(&model_seq2seq, cfg, sizeof(s2s_priv), &m);
    if (s)
        return s;
    s2s_priv *p = m->priv;
    p->ps = ps;
    exec_graph *g = m->g;
    const int64_t B = m->batch, Ts = ps->src_len, Tt = ps->tgt_len, E = ps->emb, U = ps->units, L = ps->layers;
    const int64_t Vs = ps->src_vocab, Vt = ps->tgt_vocab;
    uint32_t *xs = base_calloc((size_t)(Ts > Tt ? Ts : Tt), sizeof *xs);
    uint32_t *enc_out = base_calloc((size_t)Ts, sizeof *enc_out), *dec_out = base_calloc((size_t)Tt, sizeof *dec_out);
    if (cfg->mode == MODEL_INFER)
        p->pred = base_calloc((size_t)Tt, sizeof *p->pred);
    if (!xs || !enc_out || !dec_out || (cfg->mode == MODEL_INFER && !p->pred)) {
        s = exec_fail(EXEC_ERR_NOMEM, "seq2seq: out of memory");
        goto done;
    }
    if (cfg->plan && (s = s2s_data(cfg, ps, &p->data)))
        goto done;

    uint32_t one = exec_const(g, "forget_bias", 1, (int64_t[]){ 1 }, 1.0f);
    uint32_t zero = exec_const(g, "zero_state", 2, (int64_t[]){ B, U }, 0.0f);
    uint32_t c[S2S_MAX_LAYERS], h[S2S_MAX_LAYERS];
    lstm enc[S2S_MAX_LAYERS], dec[S2S_MAX_LAYERS];
    for (int l = 0; l < L; l++) {
        char name[32];
        snprintf(name, sizeof name, "encoder/cell%d", l);
        enc[l] = lstm_new(g, name, l ? U : E, U);
        snprintf(name, sizeof name, "decoder/cell%d", l);
        dec[l] = lstm_new(g, name, U, U);
        c[l] = h[l] = zero;
    }

    /* ---- encoder ---- */
    uint32_t emb_src =
        exec_weight_scaled(g, "encoder/embedding", 2, (int64_t[]){ Vs, E }, EXEC_INIT_UNIFORM, sqrtf(3.0f));
    p->enc_in = exec_input(g, "encoder_inputs", EXEC_I32, 1, (int64_t[]){ Ts * B }); /* time-major */
    if ((s = ex_split(g, ex_gather(g, emb_src, p->enc_in), 0, (int)Ts, xs)) || (s = exec_graph_status(g)))
        goto done;
    for (int64_t t = 0; t < Ts; t++) {
        uint32_t x = xs[t];
        for (int l = 0; l < L; l++) {
            lstm_step(g, enc[l], x, one, &c[l], &h[l]);
            x = h[l];
        }
        enc_out[t] = x;
    }

    /* ---- attention states ---- */
    uint32_t states = ex_concat(g, (int)Ts, enc_out, 0); /* [Ts*B, U] */
    uint32_t w1 = exec_weight(g, "attention/W1", 2, (int64_t[]){ U, U }, EXEC_INIT_GLOROT);
    uint32_t hidden = ex_reshape(g, ex_matmul(g, states, w1, 0, 0), 3, (int64_t[]){ Ts, B, U });
    uint32_t states_bm = ex_transpose(g, ex_reshape(g, states, 3, (int64_t[]){ Ts, B, U }), (int64_t[]){ 1, 0, 2 });
    uint32_t wq = exec_weight(g, "attention/Wq", 2, (int64_t[]){ 2 * L * U, U }, EXEC_INIT_GLOROT);
    uint32_t bq = exec_weight(g, "attention/bq", 1, (int64_t[]){ U }, EXEC_INIT_ZERO);
    uint32_t v = exec_weight(g, "attention/v", 2, (int64_t[]){ U, 1 }, EXEC_INIT_GLOROT);

    /* ---- decoder ---- */
    uint32_t emb_tgt =
        exec_weight_scaled(g, "decoder/embedding", 2, (int64_t[]){ Vt, E }, EXEC_INIT_UNIFORM, sqrtf(3.0f));
    uint32_t proj_w = exec_weight(g, "proj/W", 2, (int64_t[]){ Vt, U }, EXEC_INIT_GLOROT);
    uint32_t proj_b = exec_weight(g, "proj/b", 1, (int64_t[]){ Vt }, EXEC_INIT_ZERO);
    if (cfg->mode == MODEL_TRAIN) {
        p->dec_in = exec_input(g, "decoder_inputs", EXEC_I32, 1, (int64_t[]){ Tt * B });
        if ((s = ex_split(g, ex_gather(g, emb_tgt, p->dec_in), 0, (int)Tt, xs)) || (s = exec_graph_status(g)))
            goto done;
    } else {
        p->go = exec_input(g, "go", EXEC_I32, 1, (int64_t[]){ B });
        xs[0] = ex_gather(g, emb_tgt, p->go);
    }
    dense din = dense_new(g, "decoder/input", E + U, U), dout = dense_new(g, "decoder/output", 2 * U, U);
    uint32_t attns = zero;
    for (int64_t t = 0; t < Tt; t++) {
        uint32_t x = linear2(g, din, xs[t], attns);
        for (int l = 0; l < L; l++) {
            lstm_step(g, dec[l], x, one, &c[l], &h[l]);
            x = h[l];
        }
        /* attention, queried with the whole state */
        uint32_t qs[2 * S2S_MAX_LAYERS];
        for (int l = 0; l < L; l++) {
            qs[2 * l] = c[l];
            qs[2 * l + 1] = h[l];
        }
        uint32_t y = ex_bias_add(g, ex_matmul(g, ex_concat(g, (int)(2 * L), qs, 1), wq, 0, 0), bq, 1);
        uint32_t act = ex_reshape(g, ex_tanh(g, ex_add(g, hidden, y)), 2, (int64_t[]){ Ts * B, U });
        uint32_t e =
            ex_transpose(g, ex_reshape(g, ex_matmul(g, act, v, 0, 0), 2, (int64_t[]){ Ts, B }), (int64_t[]){ 1, 0 });
        uint32_t a = ex_reshape(g, ex_softmax(g, e), 3, (int64_t[]){ B, 1, Ts });
        attns = ex_reshape(g, ex_batch_matmul(g, a, states_bm, 0, 0), 2, (int64_t[]){ B, U });
        dec_out[t] = linear2(g, dout, x, attns);
        if (cfg->mode == MODEL_INFER) {
            uint32_t logits = ex_bias_add(g, ex_matmul(g, dec_out[t], proj_w, 0, 1), proj_b, 1);
            p->pred[t] = ex_argmax(g, logits, 1);
            if (t + 1 < Tt)
                xs[t + 1] = ex_gather(g, emb_tgt, p->pred[t]);
        }
        if ((s = exec_graph_status(g)))
            goto done;
    }
    if (cfg->mode == MODEL_TRAIN) {
        p->targets = exec_input(g, "targets", EXEC_I32, 1, (int64_t[]){ Tt * B });
        uint32_t outs = ex_concat(g, (int)Tt, dec_out, 0); /* [Tt*B, U] */
        m->loss = ex_sampled_softmax_loss(g, proj_w, proj_b, outs, p->targets, ps->samples);
        if (!(s = exec_graph_status(g)) && !(s = exec_gradients(g, m->loss)) && !(s = exec_clip_global_norm(g, 5.0f)))
            s = exec_optimizer_sgd(g, 0.5f);
    }
    if (!s)
        s = exec_graph_status(g);
    if (!s && cfg->plan)
        s = exec_graph_plan(g);
done:
    base_free(xs);
    base_free(enc_out);
    base_free(dec_out);
    if (s) {
        s2s_destroy(m);
        return s;
    }
    *out = m;
    return EXEC_OK;
}
