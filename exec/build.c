/* build.c -- the typed builders of build.h over exec_op_add. */
#include "build.h"

#include "internal.h"

#define IN(...) (uint32_t[]){ __VA_ARGS__ }
#define AT(...) (int64_t[]){ __VA_ARGS__ }
#define NARGS(T, ...) (int)(sizeof((T[]){ __VA_ARGS__ }) / sizeof(T))
#define OP(g, op, ins, nattrs, attrs) exec_op1(g, EXEC_OP_##op, (int)(sizeof ins / sizeof(uint32_t)), ins, nattrs, attrs)

uint32_t ex_matmul(exec_graph *g, uint32_t a, uint32_t b, int ta, int tb) { return OP(g, MatMul, IN(a, b), 2, AT(ta, tb)); }
uint32_t ex_batch_matmul(exec_graph *g, uint32_t a, uint32_t b, int ax, int ay) { return OP(g, BatchMatMul, IN(a, b), 2, AT(ax, ay)); }
uint32_t ex_add(exec_graph *g, uint32_t a, uint32_t b) { return OP(g, Add, IN(a, b), 0, NULL); }
uint32_t ex_mul(exec_graph *g, uint32_t a, uint32_t b) { return OP(g, Mul, IN(a, b), 0, NULL); }
uint32_t ex_addn(exec_graph *g, int n, const uint32_t *xs) { return exec_op1(g, EXEC_OP_AddN, n, xs, 0, NULL); }
uint32_t ex_bias_add(exec_graph *g, uint32_t x, uint32_t b, int axis) { return OP(g, BiasAdd, IN(x, b), 1, AT(axis)); }
uint32_t ex_relu(exec_graph *g, uint32_t x) { return OP(g, Relu, IN(x), 0, NULL); }

uint32_t ex_sum(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims)
{
    int64_t attrs[EXEC_MAX_ATTRS] = { keep_dims };
    if (naxes < 0 || naxes >= EXEC_MAX_ATTRS)
        return exec_graph_fail(g, EXEC_ERR_ARG, "Sum: %d axes", naxes);
    for (int i = 0; i < naxes; i++)
        attrs[1 + i] = axes[i];
    return exec_op1(g, EXEC_OP_Sum, 1, &x, 1 + naxes, attrs);
}

uint32_t ex_sparse_softmax_xent(exec_graph *g, uint32_t logits, uint32_t labels)
{
    return OP(g, SparseSoftmaxCrossEntropyWithLogits, IN(logits, labels), 0, NULL);
}

uint32_t ex_reshape(exec_graph *g, uint32_t x, int ndim, const int64_t *dims) { return exec_op1(g, EXEC_OP_Reshape, 1, &x, ndim, dims); }

uint32_t ex_tile(exec_graph *g, uint32_t x, const int64_t *multiples)
{
    const exec_tensor *t = exec_tensor_get(g, x);
    if (!t)
        return exec_graph_fail(g, EXEC_ERR_ARG, "Tile: no input");
    return exec_op1(g, EXEC_OP_Tile, 1, &x, t->ndim, multiples);
}

/* ---- losses and random sampling (loss branch) ------------------------- */
uint32_t ex_softmax_xent(exec_graph *g, uint32_t logits, uint32_t labels)
{
    return OP(g, SoftmaxCrossEntropyWithLogits, IN(logits, labels), 0, NULL);
}

uint32_t ex_sampled_softmax_loss(exec_graph *g, uint32_t weights, uint32_t biases, uint32_t inputs, uint32_t labels,
                                 int num_sampled)
{
    return OP(g, SampledSoftmaxLoss, IN(weights, biases, inputs, labels), 2, AT(num_sampled, 0));
}

uint32_t ex_ctc_loss(exec_graph *g, uint32_t logits, uint32_t labels, uint32_t label_lengths, uint32_t seq_lengths)
{
    return OP(g, CTCLoss, IN(logits, labels, label_lengths, seq_lengths), 0, NULL);
}

uint32_t ex_ctc_greedy_decoder(exec_graph *g, uint32_t logits, uint32_t seq_lengths)
{
    return OP(g, CTCGreedyDecoder, IN(logits, seq_lengths), 0, NULL);
}

uint32_t ex_huber_loss(exec_graph *g, uint32_t pred, uint32_t target, float delta)
{
    return OP(g, HuberLoss, IN(pred, target), 1, AT(exec_attr_f(delta)));
}

uint32_t ex_sigmoid_xent(exec_graph *g, uint32_t logits, uint32_t labels)
{
    return OP(g, SigmoidCrossEntropyWithLogits, IN(logits, labels), 0, NULL);
}

static uint32_t random_op(exec_graph *g, exec_op op, int ndim, const int64_t *shape, float a, float b)
{
    if (ndim < 1 || ndim > EXEC_MAX_DIMS)
        return exec_graph_fail(g, EXEC_ERR_ARG, "%s: %d dims", exec_op_name(op), ndim);
    int64_t attrs[2 + EXEC_MAX_DIMS] = { exec_attr_f(a), exec_attr_f(b) };
    for (int i = 0; i < ndim; i++)
        attrs[2 + i] = shape[i];
    return exec_op1(g, op, 0, NULL, 2 + ndim, attrs);
}

uint32_t ex_random_normal(exec_graph *g, int ndim, const int64_t *shape, float mean, float stddev)
{
    return random_op(g, EXEC_OP_RandomStandardNormal, ndim, shape, mean, stddev);
}

uint32_t ex_random_uniform(exec_graph *g, int ndim, const int64_t *shape, float lo, float hi)
{
    return random_op(g, EXEC_OP_RandomUniform, ndim, shape, lo, hi);
}

uint32_t ex_dropout(exec_graph *g, uint32_t x, float rate) { return OP(g, Dropout, IN(x), 2, AT(exec_attr_f(rate), 0)); }
