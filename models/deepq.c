/* deepq.c -- Mnih et al. 2015 (Nature DQN) on the built-in Breakout-like
 * game: 84x84x4 stacked grayscale frames, conv 8x8/4 32, conv 4x4/2 64,
 * conv 3x3/1 64, FC 512, FC per action (ReLU between). A target network
 * (a second graph, synced by copying the weights every C updates), a replay
 * memory, epsilon-greedy with linear annealing, Huber loss (delta 1),
 * RMSProp 2.5e-4 (decay 0.95, eps 0.01), discount 0.99, batch 32, action
 * repeat 4 (the max of the last two frames), rewards clipped to [-1, 1], one
 * update every 4 actions. 1,686,180 parameters with 4 actions.
 *
 * train: a step acts 4 times (storing the transitions), samples a minibatch
 *        and learns (the target graph, then the online train graph);
 *        acting runs a third graph (batch 1) holding a copy of the online
 *        weights. The replay memory is prefilled by a random policy at create.
 * infer: `batch` games are played greedily in lockstep; a step is one
 *        forward pass over their states and one action in each game. */
#include "models/deepq.h"

extern const model_def model_deepq;

#include "models/breakout.h"
#include "models/layers.h"

#include "base/alloc.h"
#include "base/hash.h"

#include <math.h>
#include <string.h>

#define S MODEL_BREAKOUT_SIZE
#define FRAME (S * S)
#define HIST 4
#define ACTIONS MODEL_BREAKOUT_ACTIONS
#define ACTION_REPEAT 4
#define UPDATE_EVERY 4
#define GAMMA 0.99f

typedef struct deepq_preset {
    int conv[3], fc;
    int64_t replay;  /* replay capacity, frames (Nature: 1M) */
    int64_t prefill; /* random-policy frames before learning (Nature: 50k) */
    int64_t anneal;  /* frames over which epsilon goes 1.0 -> 0.1 (Nature: 1M) */
    int sync;        /* target network sync every C updates (Nature: 10k) */
} deepq_preset;

static const deepq_preset presets[MODEL_PRESET_COUNT] = {
    [MODEL_TINY] = { { 8, 16, 16 }, 64, 2000, 200, 400, 20 },
    [MODEL_SMALL] = { { 32, 64, 64 }, 512, 10000, 500, 2000, 10 },
    [MODEL_FULL] = { { 32, 64, 64 }, 512, 100000, 5000, 1000000, 10000 },
};

typedef struct qnet {
    exec_graph *g;
    uint32_t s, q;
} qnet;

typedef struct deepq {
    const deepq_preset *p;
    /* train: m->g is the online train graph */
    uint32_t s, onehot, y; /* online graph: states, actions one-hot, TD targets */
    qnet target;           /* target network: s' -> y */
    uint32_t t_r, t_notdone, t_y;
    qnet act; /* batch-1 acting network (train), or m->g's (infer) */
    uint32_t act_argmax;
    bool act_stale; /* train: the online weights changed since act's copy of them */
    /* game(s) */
    model_breakout *games; /* 1 (train) or batch (infer) */
    uint8_t *hist;         /* per game: HIST frames, oldest first */
    uint64_t rng;
    int64_t frames; /* agent steps taken */
    int64_t updates;
    /* replay memory: a ring of frames */
    uint8_t *rframes;
    uint8_t *raction, *rterm, *rfirst;
    float *rreward;
    int64_t cap, total;
    int32_t *batch_idx; /* the last minibatch */
    uint8_t *scratch;   /* two frames per game for max-pooling: prev, frame */
} deepq;

static uint64_t rnd(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The Nature network on s [B,4,84,84] -> Q [B,actions]. */
static uint32_t network(exec_graph *g, uint32_t s, const deepq_preset *p)
{
    uint32_t x = model_conv_relu(g, "conv1", s, p->conv[0], 8, 4, 0);
    x = model_conv_relu(g, "conv2", x, p->conv[1], 4, 2, 0);
    x = model_conv_relu(g, "conv3", x, p->conv[2], 3, 1, 0);
    x = ex_relu(g, model_fc(g, "fc4", x, p->fc));
    return model_fc(g, "fc5", x, ACTIONS);
}

static uint32_t state_input(exec_graph *g, const char *name, int64_t b)
{
    return exec_input(g, name, EXEC_F32, 4, (int64_t[]){ b, HIST, S, S });
}

/* dst's weights = src's (the acting network before a greedy action after
 * an update, the target network every C updates: 6.7 MB at 1.7M
 * parameters), copied in 64 KiB pieces on the engine's threads. */
static void copy_weights(exec_graph *dst, const exec_graph *src, int threads)
{
    enum { PIECE = 64 * 1024 };
    for (uint32_t i = 0; i < exec_weight_count(src); i++) {
        const exec_tensor *a = exec_tensor_get(src, exec_weight_id(src, i));
        exec_tensor *b = exec_tensor_get(dst, exec_weight_id(dst, i));
        const char *from = a->data;
        char *to = b->data;
        int64_t bytes = (int64_t)a->bytes, pieces = (bytes + PIECE - 1) / PIECE;
#pragma omp parallel for schedule(static) if (pieces > 1) num_threads(threads)
        for (int64_t k = 0; k < pieces; k++) {
            int64_t off = k * PIECE, len = bytes - off < PIECE ? bytes - off : PIECE;
            memcpy(to + off, from + off, (size_t)len);
        }
    }
}

static exec_status plan_graph(exec_graph *g, bool plan)
{
    exec_status s = exec_graph_status(g);
    return s || !plan ? s : exec_graph_plan(g);
}

static void destroy(model *m)
{
    if (!m)
        return;
    deepq *d = m->priv;
    if (d) {
        if (d->act.g != m->g)
            exec_graph_destroy(d->act.g);
        exec_graph_destroy(d->target.g);
        base_free(d->games);
        base_free(d->hist);
        base_free(d->rframes);
        base_free(d->raction);
        base_free(d->rterm);
        base_free(d->rfirst);
        base_free(d->rreward);
        base_free(d->batch_idx);
        base_free(d->scratch);
    }
    model_free(m);
}

/* ---- the game side ---- */

/* Game i's two scratch frames: the one before last, and the agent's frame. */
static uint8_t *prev_frame(deepq *d, int i) { return d->scratch + (int64_t)i * 2 * FRAME; }
static uint8_t *game_frame(deepq *d, int i) { return prev_frame(d, i) + FRAME; }

/* One agent step in game i: repeat the action, max-pool the last two
 * frames into game_frame(d, i); returns the summed reward.  Touches game
 * i's state and frames only (games step in parallel). */
static float env_step(deepq *d, int i, int action)
{
    model_breakout *b = &d->games[i];
    int reward = 0;
    uint8_t *prev = prev_frame(d, i), *frame = game_frame(d, i);
    for (int k = 0; k < ACTION_REPEAT; k++) {
        reward += model_breakout_step(b, action);
        if (k == ACTION_REPEAT - 2)
            model_breakout_render(b, prev);
    }
    model_breakout_render(b, frame);
#pragma omp simd
    for (int j = 0; j < FRAME; j++)
        frame[j] = frame[j] > prev[j] ? frame[j] : prev[j];
    return (float)reward;
}

static void hist_push(deepq *d, int i, const uint8_t *frame, bool first)
{
    uint8_t *h = d->hist + (int64_t)i * HIST * FRAME;
    if (first) {
        for (int k = 0; k < HIST; k++)
            memcpy(h + k * FRAME, frame, FRAME);
    } else {
        memmove(h, h + FRAME, (HIST - 1) * FRAME);
        memcpy(h + (HIST - 1) * FRAME, frame, FRAME);
    }
}

/* dst[0 .. n) = src / 255: pixels to the network's floats (explicitly a
 * vector loop: -O2 left it scalar, 7% of an inference step's samples) */
static void pixels_to_float(float *restrict dst, const uint8_t *restrict src, int n)
{
#pragma omp simd
    for (int j = 0; j < n; j++)
        dst[j] = (float)src[j] * (1.0f / 255.0f);
}

static void game_reset(deepq *d, int i, uint64_t seed)
{
    uint8_t *frame = game_frame(d, i);
    model_breakout_reset(&d->games[i], seed);
    model_breakout_render(&d->games[i], frame);
    hist_push(d, i, frame, true);
}

/* ---- replay memory ---- */

static void replay_store(deepq *d, const uint8_t *frame, int action, float reward, bool term, bool first)
{
    int64_t slot = d->total % d->cap;
    memcpy(d->rframes + slot * FRAME, frame, FRAME);
    d->raction[slot] = (uint8_t)action;
    d->rreward[slot] = reward > 1.0f ? 1.0f : reward < -1.0f ? -1.0f : reward;
    d->rterm[slot] = term;
    d->rfirst[slot] = first;
    d->total++;
}

static int64_t oldest(const deepq *d) { return d->total > d->cap ? d->total - d->cap : 0; }

/* the state ending at frame j: frames before its episode's first repeat it */
static void replay_state(const deepq *d, int64_t j, float *dst)
{
    int64_t cur = j, lo = oldest(d);
    for (int k = HIST - 1; k >= 0; k--) {
        const uint8_t *f = d->rframes + (cur % d->cap) * FRAME;
        pixels_to_float(dst + k * FRAME, f, FRAME);
        if (!d->rfirst[cur % d->cap] && cur > lo)
            cur--;
    }
}

static int64_t replay_sample_one(deepq *d)
{
    int64_t lo = oldest(d), n = d->total - 1 - lo; /* j in [lo, total-2] */
    for (;;) {
        int64_t j = lo + (int64_t)(rnd(&d->rng) % (uint64_t)n);
        if (!d->rfirst[(j + 1) % d->cap])
            return j;
    }
}

/* the acting network's weights = the online's, copied where an update ran
 * since the last copy */
static void act_sync(model *m)
{
    deepq *d = m->priv;
    if (d->act_stale)
        copy_weights(d->act.g, m->g, model_threads(m));
    d->act_stale = false;
}

int model_deepq_act_lag(model *m, bool sync)
{
    deepq *d = m->priv;
    if (m->cfg.mode != MODEL_TRAIN || !m->cfg.plan)
        return 0;
    if (sync)
        act_sync(m);
    int differ = 0;
    for (uint32_t i = 0; i < exec_weight_count(m->g); i++) {
        const exec_tensor *a = exec_tensor_get(m->g, exec_weight_id(m->g, i));
        const exec_tensor *b = exec_tensor_get(d->act.g, exec_weight_id(d->act.g, i));
        differ += a->bytes != b->bytes || memcmp(a->data, b->data, a->bytes) != 0;
    }
    return differ;
}

/* The agent's step in the training game: epsilon-greedy, store, reset. */
static exec_status act_and_store(model *m)
{
    deepq *d = m->priv;
    const deepq_preset *p = d->p;
    double frac = (double)d->frames / (double)p->anneal;
    double eps = frac >= 1.0 ? 0.1 : 1.0 - 0.9 * frac;
    int action;
    if ((double)(rnd(&d->rng) >> 11) / 9007199254740992.0 < eps) {
        action = (int)(rnd(&d->rng) % ACTIONS);
    } else {
        /* the acting network follows the online weights: copied when it
         * acts, not every step (epsilon-greedy acts at random early on:
         * the copy, 0.3 ms, and the repacking of fc4 it causes were a
         * step's largest part outside the graphs) */
        act_sync(m);
        pixels_to_float(exec_dataf(d->act.g, d->act.s), d->hist, HIST * FRAME);
        exec_run_opts o = { .inter = m->cfg.inter, .max_phase = EXEC_PHASE_forward };
        exec_status s = exec_graph_run(d->act.g, &o);
        if (s)
            return s;
        action = exec_datai(d->act.g, d->act_argmax)[0];
    }
    uint8_t *frame = game_frame(d, 0);
    float r = env_step(d, 0, action);
    bool over = d->games[0].over;
    replay_store(d, frame, action, r, over, false);
    hist_push(d, 0, frame, false);
    d->frames++;
    if (over) {
        game_reset(d, 0, rnd(&d->rng));
        replay_store(d, frame, 0, 0.0f, false, true);
    }
    return EXEC_OK;
}

static exec_status prefill(model *m)
{
    deepq *d = m->priv;
    game_reset(d, 0, m->cfg.seed);
    uint8_t *frame = game_frame(d, 0);
    replay_store(d, frame, 0, 0.0f, false, true);
    for (int64_t i = 0; i < d->p->prefill; i++) {
        int action = (int)(rnd(&d->rng) % ACTIONS);
        float r = env_step(d, 0, action);
        bool over = d->games[0].over;
        replay_store(d, frame, action, r, over, false);
        hist_push(d, 0, frame, false);
        if (over) {
            game_reset(d, 0, rnd(&d->rng));
            replay_store(d, frame, 0, 0.0f, false, true);
        }
    }
    return EXEC_OK;
}

exec_status model_deepq_learn(model *m, bool resample, float *loss)
{
    deepq *d = m->priv;
    *loss = NAN;
    if (m->cfg.mode != MODEL_TRAIN || !m->cfg.plan)
        return exec_fail(EXEC_ERR_STATE, "deepq: learning needs a planned train model");
    if (d->total - oldest(d) < 2)
        return exec_fail(EXEC_ERR_STATE, "deepq: replay memory is empty");
    int B = m->batch;
    if (resample || !d->batch_idx[0])
        for (int i = 0; i < B; i++)
            d->batch_idx[i] = (int32_t)(replay_sample_one(d) + 1); /* +1: 0 means none */
    float *s = exec_dataf(m->g, d->s), *s2 = exec_dataf(d->target.g, d->target.s);
    float *onehot = exec_dataf(m->g, d->onehot);
    float *r = exec_dataf(d->target.g, d->t_r), *notdone = exec_dataf(d->target.g, d->t_notdone);
    memset(onehot, 0, (size_t)B * ACTIONS * sizeof *onehot);
    /* the minibatch: 2 x B states of HIST frames to floats, on the engine's threads */
#pragma omp parallel for schedule(static) num_threads(model_threads(m))
    for (int i = 0; i < B; i++) {
        int64_t j = d->batch_idx[i] - 1, n = (j + 1) % d->cap;
        replay_state(d, j, s + (int64_t)i * HIST * FRAME);
        replay_state(d, j + 1, s2 + (int64_t)i * HIST * FRAME);
        onehot[i * ACTIONS + d->raction[n]] = 1.0f;
        r[i] = d->rreward[n];
        notdone[i] = d->rterm[n] ? 0.0f : 1.0f;
    }
    exec_run_opts fwd = { .inter = m->cfg.inter, .max_phase = EXEC_PHASE_forward };
    exec_status st = exec_graph_run(d->target.g, &fwd);
    if (st)
        return st;
    memcpy(exec_dataf(m->g, d->y), exec_dataf(d->target.g, d->t_y), (size_t)B * sizeof(float));
    st = model_run_graph(m);
    d->act_stale = true; /* the update ran (or may have, where it failed) */
    if (st)
        return st;
    *loss = exec_dataf(m->g, m->loss)[0];
    if (resample) {
        d->updates++;
        if (d->updates % d->p->sync == 0)
            copy_weights(d->target.g, m->g, model_threads(m));
    }
    return EXEC_OK;
}

int64_t model_deepq_replay_size(const model *m)
{
    const deepq *d = m->priv;
    return d->total - oldest(d);
}

uint64_t model_deepq_games_digest(const model *m, int64_t *score)
{
    const deepq *d = m->priv;
    int ngames = m->cfg.mode == MODEL_INFER ? m->batch : 1;
    uint64_t h = base_fnv1a(d->games, (size_t)ngames * sizeof *d->games);
    h = base_fnv1a_more(h, d->hist, (size_t)ngames * HIST * FRAME);
    *score = 0;
    for (int i = 0; i < ngames; i++)
        *score += d->games[i].score;
    return h;
}

static exec_status step_train(model *m, float *loss)
{
    for (int k = 0; k < UPDATE_EVERY; k++) {
        exec_status s = act_and_store(m);
        if (s)
            return s;
    }
    return model_deepq_learn(m, true, loss);
}

static exec_status step_infer(model *m, float *loss)
{
    deepq *d = m->priv;
    *loss = NAN;
    float *x = exec_dataf(m->g, d->act.s);
    /* the games are independent: they step on the engine's threads, like a
     * framework's vectorized environments (resets draw from the shared
     * generator, in game order, afterwards: the same for any thread count) */
#pragma omp parallel for schedule(static) num_threads(model_threads(m))
    for (int i = 0; i < m->batch; i++)
        pixels_to_float(x + (int64_t)i * HIST * FRAME, d->hist + (int64_t)i * HIST * FRAME, HIST * FRAME);
    exec_status s = model_run_graph(m);
    if (s)
        return s;
    const int32_t *a = exec_datai(m->g, d->act_argmax);
#pragma omp parallel for schedule(static) num_threads(model_threads(m))
    for (int i = 0; i < m->batch; i++) {
        env_step(d, i, a[i]);
        hist_push(d, i, game_frame(d, i), false);
    }
    for (int i = 0; i < m->batch; i++)
        if (d->games[i].over)
            game_reset(d, i, rnd(&d->rng));
    return EXEC_OK;
}

static exec_status step(model *m, float *loss)
{
    *loss = NAN;
    if (!m->cfg.plan)
        return exec_fail(EXEC_ERR_STATE, "deepq: built without planning");
    return m->cfg.mode == MODEL_TRAIN ? step_train(m, loss) : step_infer(m, loss);
}

static exec_status build_act(qnet *n, exec_graph *g, int64_t b, const deepq_preset *p, uint32_t *argmax)
{
    n->g = g;
    n->s = state_input(g, "state", b);
    n->q = network(g, n->s, p);
    *argmax = ex_argmax(g, n->q, 1);
    return exec_graph_status(g);
}

static exec_status create(const model_config *cfg, model **out)
{
    *out = NULL;
    model *m = NULL;
    exec_status s = model_alloc(&model_deepq, cfg, sizeof(deepq), &m);
    if (s)
        return s;
    deepq *d = m->priv;
    const deepq_preset *p = d->p = &presets[cfg->preset];
    int64_t B = m->batch;
    d->rng = cfg->seed * 0x9e3779b97f4a7c15ull + 17;
    if (cfg->mode == MODEL_INFER) {
        s = build_act(&d->act, m->g, B, p, &d->act_argmax);
        if (!s)
            s = plan_graph(m->g, cfg->plan);
    } else {
        exec_graph *g = m->g;
        d->s = state_input(g, "state", B);
        d->onehot = exec_input(g, "action_onehot", EXEC_F32, 2, (int64_t[]){ B, ACTIONS });
        d->y = exec_input(g, "td_target", EXEC_F32, 1, &B);
        uint32_t q = network(g, d->s, p);
        uint32_t qa = ex_sum(g, ex_mul(g, q, d->onehot), 1, (int64_t[]){ 1 }, 0);
        m->loss = ex_huber_loss(g, qa, d->y, 1.0f);
        if (!(s = exec_graph_status(g)) && !(s = exec_gradients(g, m->loss)) &&
            !(s = exec_optimizer_rmsprop(g, 2.5e-4f, 0.95f, 0.0f, 0.01f)))
            s = plan_graph(g, cfg->plan);
        /* the target network: y = r + gamma * notdone * max_a Q_target(s', a) */
        if (!s && !(s = exec_graph_create(&d->target.g, cfg->seed + 1))) {
            exec_graph *t = d->target.g;
            exec_graph_settings_set(t, &cfg->settings);
            m->more[0] = t;
            d->target.s = state_input(t, "next_state", B);
            d->t_r = exec_input(t, "reward", EXEC_F32, 1, &B);
            d->t_notdone = exec_input(t, "not_done", EXEC_F32, 1, &B);
            d->target.q = network(t, d->target.s, p);
            uint32_t maxq = ex_max(t, d->target.q, 1, (int64_t[]){ 1 }, 0);
            uint32_t gamma = exec_const(t, "discount", 1, (int64_t[]){ 1 }, GAMMA);
            d->t_y = ex_add(t, ex_mul(t, ex_mul(t, maxq, d->t_notdone), gamma), d->t_r);
            s = plan_graph(t, cfg->plan);
        }
        if (!s && !(s = exec_graph_create(&d->act.g, cfg->seed + 2))) {
            exec_graph_settings_set(d->act.g, &cfg->settings);
            m->more[1] = d->act.g;
            if (!(s = build_act(&d->act, d->act.g, 1, p, &d->act_argmax)))
                s = plan_graph(d->act.g, cfg->plan);
        }
    }
    if (s || !cfg->plan) {
        if (!s)
            *out = m;
        else
            destroy(m);
        return s;
    }
    int ngames = cfg->mode == MODEL_INFER ? m->batch : 1;
    d->games = base_calloc((size_t)ngames, sizeof *d->games);
    d->hist = base_malloc((size_t)ngames * HIST * FRAME);
    d->scratch = base_malloc((size_t)ngames * 2 * FRAME);
    if (!d->games || !d->hist || !d->scratch) {
        destroy(m);
        return exec_fail(EXEC_ERR_NOMEM, "deepq: out of memory");
    }
    if (cfg->mode == MODEL_INFER) {
        for (int i = 0; i < ngames; i++)
            game_reset(d, i, cfg->seed + (uint64_t)i);
        *out = m;
        return EXEC_OK;
    }
    d->cap = p->replay;
    d->rframes = base_malloc((size_t)d->cap * FRAME);
    d->raction = base_calloc((size_t)d->cap, 1);
    d->rterm = base_calloc((size_t)d->cap, 1);
    d->rfirst = base_calloc((size_t)d->cap, 1);
    d->rreward = base_calloc((size_t)d->cap, sizeof(float));
    d->batch_idx = base_calloc((size_t)B, sizeof(int32_t));
    if (!d->rframes || !d->raction || !d->rterm || !d->rfirst || !d->rreward || !d->batch_idx) {
        destroy(m);
        return exec_fail(EXEC_ERR_NOMEM, "deepq: out of memory for a replay memory of %lld frames", (long long)d->cap);
    }
    copy_weights(d->target.g, m->g, model_threads(m));
    d->act_stale = true;
    prefill(m);
    *out = m;
    return EXEC_OK;
}

const model_def model_deepq = {
    .name = "deepq",
    .paper = "Mnih et al. 2015",
    .kind = "convolutional (reinforcement)",
    .summary = "Nature DQN on a built-in Breakout: 84x84x4, conv 8x8/4 32, 4x4/2 64, 3x3/1 64, FC 512, FC 4; "
               "target network, replay, Huber; RMSProp 2.5e-4",
    .batch = { 8, 32, 32 },
    .create = create,
    .step = step,
    .destroy = destroy,
};
