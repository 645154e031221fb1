/* registry.c -- every workload, in a stable order. */
#include "models/model.h"

/* Each model file defines one model_def. */
#define MODELS(X) X(seq2seq) X(memnet) X(speech) X(autoenc) X(residual) X(vgg) X(alexnet) X(deepq) X(transformer)

#define DECL(n) extern const model_def model_##n;
MODELS(DECL)
#undef DECL

const model_def *const model_registry[] = {
#define REF(n) &model_##n,
    MODELS(REF)
#undef REF
        NULL,
};
const int model_registry_count = (int)(sizeof model_registry / sizeof model_registry[0]) - 1;
