/* deepq.h -- what tests and tools may reach inside the deepq workload. */
#ifndef FATHOM_MODELS_DEEPQ_H
#define FATHOM_MODELS_DEEPQ_H
#include "models/model.h"

/* One learning update on a minibatch from replay memory: the target network
 * computes y = r + gamma * (1 - done) * max_a' Q_target(s', a'), the online
 * network takes one RMSProp step on the Huber loss of Q(s, a) - y.
 * resample = false reuses the previous minibatch (and the target network is
 * not synced), so repeated calls fit one fixed batch. Train mode only. */
exec_status model_deepq_learn(model *m, bool resample, float *loss);
/* Transitions stored in the replay memory so far. */
int64_t model_deepq_replay_size(const model *m);
/* A digest of every game's state and frame history (tests: the games play
 * the same whatever the thread count), and the summed score of the games
 * in play. */
uint64_t model_deepq_games_digest(const model *m, int64_t *score);
/* The weight tensors in which the acting network (train) differs from the
 * online network, after the sync a greedy action does first where sync
 * (the acting network copies the online weights only when it acts after
 * an update). */
int model_deepq_act_lag(model *m, bool sync);
#endif
