/* transformer.h -- what the Transformer workload shows beyond model.h: the
 * batch its last infer step decoded (for tests of greedy decoding). */
#ifndef FATHOM_MODELS_TRANSFORMER_H
#define FATHOM_MODELS_TRANSFORMER_H
#include "models/model.h"

extern const model_def model_transformer;

/* After an infer step of a transformer: the batch's sources and its greedy
 * outputs, both [batch, len] token ids (borrowed; valid until the next step). */
exec_status model_transformer_last_batch(const model *m, const int32_t **src, const int32_t **out, int *len);
#endif
