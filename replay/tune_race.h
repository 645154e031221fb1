/* tune_race.h -- the tuner's measured rounds: each candidate's samples
 * (one per round, per step, of its batch), their statistics and the race
 * that ends the rounds early (replay_tune; fathom-tune(1), --budget), the
 * points compared and the tie of auto with a forced convolution algorithm.
 * Pure functions of the candidates, so that a test can hand them any. */
#ifndef FATHOM_REPLAY_TUNE_RACE_H
#define FATHOM_REPLAY_TUNE_RACE_H
#include "replay/tune.h"

#include <stdint.h>

/* The most groups of candidates a round orders: an instance's calling
 * thread and its pool, per instance. */
#define REPLAY_TUNE_MAX_GROUPS (2 * (REPLAY_TUNE_MAX_CANDIDATES + REPLAY_TUNE_MAX_LEVELS))

/* Whether a and b are the same point of the knob space. */
int replay_tune_same_knobs(const replay_tune_knobs *a, const replay_tune_knobs *b);

/* Candidate c's samples per step over its samples per sample: its batch
 * (1 where none is set). */
double replay_tune_batch(const replay_tune_cand *c);
/* Candidate c's c->rounds samples v (at most 64): *med the median (the
 * lower middle of an even count), *mn the fastest, *mx the slowest, each
 * per sample of c's batch. */
void replay_tune_stats(const double *v, const replay_tune_cand *c, double *med, double *mn, double *mx);

/* After a round: samples[i * stride ...] are candidate i's; active[i]
 * cleared for each one out (its fastest sample slower than the leader's --
 * the lowest median's -- slowest, or from three samples on its slowest but
 * one, of those after a profiled first sample where it has more, by more
 * than margin: REPLAY_TUNE_TIE from the second round, REPLAY_TUNE_FAR
 * after the first, where a candidate whose one sample is its profiled one
 * stays in, and one that c[i].predicted_ns put faster than the leader's
 * median by more than REPLAY_TUNE_TIE until its second sample of its
 * own). Returns the candidates still in; *tie set when each is within
 * REPLAY_TUNE_TIE of the leader's median. */
int replay_tune_race(const double *samples, int stride, const replay_tune_cand *c, int n, int *active, double margin,
                     int *tie);
/* One round's order of the n candidates into order: grouped by their
 * threads (hid[i], each below nh <= REPLAY_TUNE_MAX_GROUPS: an instance's
 * calling thread or its pool of inter-op workers, whose points run back
 * to back), the groups and the candidates within each shuffled by *rng;
 * where first is given, the groups that hold a candidate with first[i]
 * set go before the others, in their shuffled order (replay_tune: in the
 * second round, the candidates whose one sample is their profiled one, so
 * that the race can end on their samples without another of the
 * leader's). */
void replay_tune_round_order(int n, const int *hid, int nh, const int *first, uint64_t *rng, int *order);
/* After the rounds, best the fastest of c[0..n) by per_sample_ns: the
 * candidate of the other kind -- auto where best forces a convolution
 * algorithm, a forced one where best is auto -- within REPLAY_TUNE_CONV_TIE of
 * it, the fastest such; a forced best pairs only with its own point under
 * auto (its other knobs the same). -1 where none. */
int replay_tune_conv_tie(const replay_tune_cand *c, int n, int best);
/* After the rounds, best the fastest: the defaults (c[defaults]) instead
 * where they were measured and lie within REPLAY_TUNE_TIE of it by
 * per_sample_ns -- no measured gain to change the settings for; else best. */
int replay_tune_defaults_tie(const replay_tune_cand *c, int best, int defaults);
#endif
