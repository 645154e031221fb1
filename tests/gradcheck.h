/* gradcheck.h -- the gradient-check cases: one or more per op. The test
 * (test_gradcheck.c) iterates the op table, so an op with a gradient rule
 * and no case here fails the suite. Each ops family adds its cases in
 * tests/ops/<family>.cases (an X-list included below). */
#ifndef FATHOM_TESTS_GRADCHECK_H
#define FATHOM_TESTS_GRADCHECK_H
#include "exec/exec.h"

typedef struct gc_input {
    exec_dtype dtype;
    int ndim;
    int64_t shape[EXEC_MAX_DIMS];
    float lo, hi; /* values drawn uniformly in [lo, hi) (ints: [lo, hi)) */
    int fixed;    /* 1: not differentiated (labels, indices, masks) */
} gc_input;

typedef struct gc_case {
    const char *op;
    int nin;
    gc_input in[8];
    int nattrs;
    int64_t attrs[EXEC_MAX_ATTRS];
    unsigned out_mask; /* outputs that feed the loss; 0 means output 0 only */
    float tol;         /* relative tolerance; 0 means the default */
} gc_case;

#define F(nd, ...)                                    \
    {                                                 \
        EXEC_F32, nd, { __VA_ARGS__ }, -1.0f, 1.0f, 0 \
    }
#define FR(lo_, hi_, nd, ...)                      \
    {                                              \
        EXEC_F32, nd, { __VA_ARGS__ }, lo_, hi_, 0 \
    }
#define FFIX(lo_, hi_, nd, ...)                    \
    {                                              \
        EXEC_F32, nd, { __VA_ARGS__ }, lo_, hi_, 1 \
    }
#define I(lo_, hi_, nd, ...)                       \
    {                                              \
        EXEC_I32, nd, { __VA_ARGS__ }, lo_, hi_, 1 \
    }
#define ATTRS(...) .nattrs = (int)(sizeof((int64_t[]){ __VA_ARGS__ }) / sizeof(int64_t)), .attrs = { __VA_ARGS__ }
#endif
