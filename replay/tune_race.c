/* tune_race.c -- the statistics of the tuner's measured rounds and the
 * race that ends them (see tune_race.h). */
#include "replay/tune_race.h"

#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int replay_tune_same_knobs(const replay_tune_knobs *a, const replay_tune_knobs *b)
{
    return a->threads == b->threads && a->inter == b->inter && a->conv_algo == b->conv_algo && a->bind == b->bind &&
           a->batch == b->batch;
}

double replay_tune_batch(const replay_tune_cand *c) { return c->k.batch > 0 ? c->k.batch : 1; }

/* Candidate c's samples sorted into w (at most 64); their count. */
static int sorted(const double *v, const replay_tune_cand *c, double *w)
{
    int k = c->rounds < 64 ? c->rounds : 64;
    memcpy(w, v, (size_t)k * sizeof *w);
    qsort(w, (size_t)k, sizeof w[0], cmp_double);
    return k;
}

/* Median (of an even count the lower middle one: with two samples, one
 * that a busy moment stretched tenfold does not make the median five times
 * the other), fastest and slowest of candidate c's samples, per sample of
 * its batch. */
void replay_tune_stats(const double *v, const replay_tune_cand *c, double *med, double *mn, double *mx)
{
    double w[64];
    int k = sorted(v, c, w);
    const double b = replay_tune_batch(c);
    *med = w[(k - 1) / 2] / b;
    *mn = w[0] / b, *mx = w[k - 1] / b;
}

/* The leader's bound in the race: its slowest sample, or from three
 * samples on its slowest but one (a single busy moment in the leader's
 * samples kept a candidate 10% slower by its median in the race to the
 * last round: speech's training, the defaults 253.9-276.2 ms over five
 * rounds, one sample past 256, two inter-op workers 269.4-298.8) -- of
 * its samples after a profiled first one, where it has more: the steps
 * right after a point's warm-up and profiled first step run slow (the
 * defaults' profiled sample over their median of 20 rounds: 1.04 at the
 * mean of 30 such runs of ten workloads on the Xeon VM, 0.98-1.12), and
 * kept a candidate 3% slower by its median in memnet's inference to a
 * third round or a fifth. */
static double lead_bound(const double *v, const replay_tune_cand *c)
{
    double w[64];
    replay_tune_cand after = *c;
    const int skip = c->profiled && c->rounds >= 2;
    after.rounds -= skip;
    int k = sorted(v + skip, &after, w);
    const double b = replay_tune_batch(c);
    return w[k >= 3 ? k - 2 : k - 1] / b;
}

/* The race, after each round: which candidates drop out.
 *
 * A candidate is out when its fastest sample is slower than the leader's
 * slowest by more than margin.  The leader is the candidate with the
 * lowest median.  From its third sample on, the leader's slowest but one
 * counts instead (lead_bound).  A candidate's samples so far give its
 * median.
 *
 * From the second round the margin is REPLAY_TUNE_TIE.  Without a margin,
 * two samples each would put one of two equal points out one time in
 * three: each point's pair lies wholly above the other's one time in six,
 * each way.  (vgg's training: two inter-op workers were 4% faster than one
 * in a 20-round comparison and 1-3% in two sweeps, yet went out after two
 * rounds, fastest 20.99 ms against the defaults' slowest 20.70.)
 *
 * After the first round the margin is REPLAY_TUNE_FAR, and two kinds of
 * candidate stay in until a second sample of their own:
 * - one whose one sample is its profiled one, since the steps right after
 *   a warm-up and a profiled step run slow (memnet's inference: the
 *   defaults' 0.375 ms, where their median of five rounds was 0.278);
 * - one that the profile predicted faster than the leader by more than
 *   REPLAY_TUNE_TIE.  One sample 1.2x its point's median is a 1% event:
 *   1.5% of the first samples of 3536 points in the sweeps of
 *   tests/bench/bench_tune.sh, 1.0% of the later ones.  Such a sample took
 *   out two inter-op workers predicted at 28.0 ms, on a first sample of
 *   39.0 ms against the defaults' 32.4 (seq2seq's training; their next
 *   samples were 28.8-30.9 ms in two other runs, the sweep's best).  In
 *   162 tuner runs, such a candidate had gone out after one sample 3
 *   times.
 *
 * Returns the candidates still in.  *tie is set when every one of them is
 * within REPLAY_TUNE_TIE of the leader's median. */
int replay_tune_race(const double *samples, int stride, const replay_tune_cand *c, int n, int *active, double margin,
                     int *tie)
{
    int lead = -1;
    double lead_max = 0, lead_med = 0;
    for (int i = 0; i < n; i++) {
        double med, mn, mx;
        if (!active[i] || !c[i].rounds)
            continue;
        replay_tune_stats(samples + (size_t)i * stride, &c[i], &med, &mn, &mx);
        if (lead < 0 || med < lead_med)
            lead = i, lead_med = med;
    }
    if (lead >= 0)
        lead_max = lead_bound(samples + (size_t)lead * stride, &c[lead]);
    int in = 0;
    *tie = 1;
    for (int i = 0; i < n; i++) {
        double med, mn, mx;
        if (!active[i] || !c[i].rounds)
            continue;
        replay_tune_stats(samples + (size_t)i * stride, &c[i], &med, &mn, &mx);
        /* a candidate whose one sample of its own is its profiled one, or
         * one that the profile predicted faster than the leader's median
         * by more than a tie before its second sample of its own, stays */
        const int profiled_only = c[i].profiled && c[i].rounds < 2;
        const int favored = c[i].rounds - c[i].profiled < 2 && c[i].predicted_ns > 0 &&
                            c[i].predicted_ns / replay_tune_batch(&c[i]) < lead_med * (1 - REPLAY_TUNE_TIE);
        if (i != lead && !profiled_only && !favored && mn > lead_max * (1 + margin))
            active[i] = 0;
        else if (med > lead_med * (1 + REPLAY_TUNE_TIE))
            *tie = 0;
        in += active[i];
    }
    return in;
}

static uint32_t next_rand(uint64_t *x)
{
    *x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17; /* xorshift64 */
    return (uint32_t)(*x >> 32);
}

void replay_tune_round_order(int n, const int *hid, int nh, const int *first, uint64_t *rng, int *order)
{
    int rank[REPLAY_TUNE_MAX_GROUPS];
    for (int k = 0; k < nh; k++)
        rank[k] = k;
    for (int k = nh - 1; k > 0; k--) {
        int j = (int)(next_rand(rng) % (uint32_t)(k + 1)), x = rank[k];
        rank[k] = rank[j], rank[j] = x;
    }
    for (int i = 0; first && i < n; i++)
        if (first[i] && rank[hid[i]] < nh)
            rank[hid[i]] -= nh; /* ahead of every group without one, their shuffled order kept */
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(next_rand(rng) % (uint32_t)(i + 1)), x = order[i];
        order[i] = order[j], order[j] = x;
    }
    for (int i = 1; i < n; i++) /* stable by instance rank: the shuffle stays within each */
        for (int j = i; j > 0 && rank[hid[order[j]]] < rank[hid[order[j - 1]]]; j--) {
            int x = order[j];
            order[j] = order[j - 1], order[j - 1] = x;
        }
}

int replay_tune_conv_tie(const replay_tune_cand *c, int n, int best)
{
    const replay_tune_knobs *b = &c[best].k;
    const int best_auto = b->conv_algo == EXEC_CONV_AUTO;
    int o = -1;
    for (int i = 0; i < n; i++) {
        const replay_tune_knobs *k = &c[i].k;
        replay_tune_knobs other_algo = *k; /* k under best's algorithm: best's own point where k is its twin */
        other_algo.conv_algo = b->conv_algo;
        const int twin = replay_tune_same_knobs(&other_algo, b);
        if (i != best && c[i].rounds > 0 && (k->conv_algo == EXEC_CONV_AUTO) != best_auto && (best_auto || twin) &&
            c[i].per_sample_ns <= (1 + REPLAY_TUNE_CONV_TIE) * c[best].per_sample_ns &&
            (o < 0 || c[i].per_sample_ns < c[o].per_sample_ns))
            o = i;
    }
    return o;
}

int replay_tune_defaults_tie(const replay_tune_cand *c, int best, int defaults)
{
    return defaults != best && c[defaults].rounds > 0 && c[best].per_sample_ns > 0 &&
                   c[defaults].per_sample_ns <= (1 + REPLAY_TUNE_TIE) * c[best].per_sample_ns
               ? defaults
               : best;
}
