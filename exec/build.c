/* build.c -- the typed builders of build.h over exec_op_add. */
#include "build.h"

#include "internal.h"

#define IN(...) \
    (uint32_t[]) { __VA_ARGS__ }
#define AT(...) \
    (int64_t[]) { __VA_ARGS__ }
#define NARGS(T, ...) (int)(sizeof((T[]){ __VA_ARGS__ }) / sizeof(T))
#define OP(g, op, ins, nattrs, attrs) \
    exec_op1(g, EXEC_OP_##op, (int)(sizeof ins / sizeof(uint32_t)), ins, nattrs, attrs)

uint32_t ex_matmul(exec_graph *g, uint32_t a, uint32_t b, int ta, int tb)
{
    return OP(g, MatMul, IN(a, b), 2, AT(ta, tb));
}
uint32_t ex_batch_matmul(exec_graph *g, uint32_t a, uint32_t b, int ax, int ay)
{
    return OP(g, BatchMatMul, IN(a, b), 2, AT(ax, ay));
}
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

uint32_t ex_reshape(exec_graph *g, uint32_t x, int ndim, const int64_t *dims)
{
    return exec_op1(g, EXEC_OP_Reshape, 1, &x, ndim, dims);
}

uint32_t ex_tile(exec_graph *g, uint32_t x, const int64_t *multiples)
{
    const exec_tensor *t = exec_tensor_get(g, x);
    if (!t)
        return exec_graph_fail(g, EXEC_ERR_ARG, "Tile: no input");
    return exec_op1(g, EXEC_OP_Tile, 1, &x, t->ndim, multiples);
}

/* ---- losses and random sampling --------------------------------------- */
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

uint32_t ex_dropout(exec_graph *g, uint32_t x, float rate)
{
    return OP(g, Dropout, IN(x), 2, AT(exec_attr_f(rate), 0));
}
/* ---- convolution, pooling, normalization (exec/ops/conv.c, pool.c, norm.c) ---- */
uint32_t ex_conv2d(exec_graph *g, uint32_t x, uint32_t filter, int stride_h, int stride_w, int pad_h, int pad_w)
{
    return OP(g, Conv2D, IN(x, filter), 4, AT(stride_h, stride_w, pad_h, pad_w));
}

uint32_t ex_max_pool(exec_graph *g, uint32_t x, int kh, int kw, int sh, int sw, int ph, int pw)
{
    return OP(g, MaxPool, IN(x), 6, AT(kh, kw, sh, sw, ph, pw));
}

uint32_t ex_avg_pool(exec_graph *g, uint32_t x, int kh, int kw, int sh, int sw, int ph, int pw)
{
    return OP(g, AvgPool, IN(x), 6, AT(kh, kw, sh, sw, ph, pw));
}

uint32_t ex_global_avg_pool(exec_graph *g, uint32_t x)
{
    const exec_tensor *t = exec_tensor_get(g, x);
    if (!t || t->ndim != 4)
        return exec_graph_fail(g, EXEC_ERR_SHAPE, "global_avg_pool: wants an [N,C,H,W] input");
    return OP(g, AvgPool, IN(x), 6, AT(t->shape[2], t->shape[3], 1, 1, 0, 0));
}

uint32_t ex_lrn(exec_graph *g, uint32_t x, int depth_radius, float bias, float alpha, float beta)
{
    return OP(g, LRN, IN(x), 4, AT(depth_radius, exec_attr_f(bias), exec_attr_f(alpha), exec_attr_f(beta)));
}

uint32_t ex_fused_batch_norm(exec_graph *g, uint32_t x, uint32_t scale, uint32_t offset, uint32_t running_mean,
                             uint32_t running_var, float epsilon, float momentum, int training)
{
    return OP(g, FusedBatchNorm, IN(x, scale, offset, running_mean, running_var), 3,
              AT(exec_attr_f(epsilon), exec_attr_f(momentum), training != 0));
}
/* ---- the math family: elementwise math, activations, reductions by axis,
 *      data movement (exec/ops/arith.c, activation.c, reduction.c, movement.c) ---- */
uint32_t ex_sub(exec_graph *g, uint32_t a, uint32_t b) { return OP(g, Sub, IN(a, b), 0, NULL); }
uint32_t ex_div(exec_graph *g, uint32_t a, uint32_t b) { return OP(g, Div, IN(a, b), 0, NULL); }
uint32_t ex_pow(exec_graph *g, uint32_t a, uint32_t b) { return OP(g, Pow, IN(a, b), 0, NULL); }
uint32_t ex_neg(exec_graph *g, uint32_t x) { return OP(g, Neg, IN(x), 0, NULL); }
uint32_t ex_square(exec_graph *g, uint32_t x) { return OP(g, Square, IN(x), 0, NULL); }
uint32_t ex_sqrt(exec_graph *g, uint32_t x) { return OP(g, Sqrt, IN(x), 0, NULL); }
uint32_t ex_exp(exec_graph *g, uint32_t x) { return OP(g, Exp, IN(x), 0, NULL); }
uint32_t ex_log(exec_graph *g, uint32_t x) { return OP(g, Log, IN(x), 0, NULL); }
uint32_t ex_equal(exec_graph *g, uint32_t a, uint32_t b) { return OP(g, Equal, IN(a, b), 0, NULL); }
uint32_t ex_sigmoid(exec_graph *g, uint32_t x) { return OP(g, Sigmoid, IN(x), 0, NULL); }
uint32_t ex_tanh(exec_graph *g, uint32_t x) { return OP(g, Tanh, IN(x), 0, NULL); }
uint32_t ex_clipped_relu(exec_graph *g, uint32_t x, float cap)
{
    return OP(g, ClippedRelu, IN(x), 1, AT(exec_attr_f(cap)));
}
uint32_t ex_softmax(exec_graph *g, uint32_t x) { return OP(g, Softmax, IN(x), 0, NULL); }
uint32_t ex_log_softmax(exec_graph *g, uint32_t x) { return OP(g, LogSoftmax, IN(x), 0, NULL); }
uint32_t ex_select(exec_graph *g, uint32_t cond, uint32_t a, uint32_t b)
{
    return OP(g, Select, IN(cond, a, b), 0, NULL);
}
uint32_t ex_zeros_like(exec_graph *g, uint32_t x) { return OP(g, ZerosLike, IN(x), 0, NULL); }
uint32_t ex_cast(exec_graph *g, uint32_t x, exec_dtype to) { return OP(g, Cast, IN(x), 1, AT((int64_t)to)); }
uint32_t ex_identity(exec_graph *g, uint32_t x) { return OP(g, Identity, IN(x), 0, NULL); }

static uint32_t reduce_op(exec_graph *g, exec_op op, uint32_t x, int naxes, const int64_t *axes, int keep_dims)
{
    int64_t attrs[EXEC_MAX_ATTRS] = { keep_dims };
    if (naxes < 0 || naxes >= EXEC_MAX_ATTRS)
        return exec_graph_fail(g, EXEC_ERR_ARG, "%s: %d axes", exec_op_name(op), naxes);
    for (int i = 0; i < naxes; i++)
        attrs[1 + i] = axes[i];
    return exec_op1(g, op, 1, &x, 1 + naxes, attrs);
}
uint32_t ex_mean(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims)
{
    return reduce_op(g, EXEC_OP_Mean, x, naxes, axes, keep_dims);
}
uint32_t ex_max(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims)
{
    return reduce_op(g, EXEC_OP_Max, x, naxes, axes, keep_dims);
}
uint32_t ex_argmax(exec_graph *g, uint32_t x, int axis) { return OP(g, ArgMax, IN(x), 1, AT(axis)); }
uint32_t ex_unsorted_segment_sum(exec_graph *g, uint32_t data, uint32_t indices, int64_t num_segments)
{
    return OP(g, UnsortedSegmentSum, IN(data, indices), 1, AT(num_segments));
}

/* the rank of x, or 0 after recording an error */
static int rank_of(exec_graph *g, uint32_t x, const char *op)
{
    const exec_tensor *t = exec_tensor_get(g, x);
    if (!t) {
        exec_graph_fail(g, EXEC_ERR_ARG, "%s: input is not a tensor (id %u)", op, x);
        return 0;
    }
    return t->ndim;
}

uint32_t ex_transpose(exec_graph *g, uint32_t x, const int64_t *perm)
{
    int nd = rank_of(g, x, "Transpose");
    return nd ? exec_op1(g, EXEC_OP_Transpose, 1, &x, nd, perm) : 0;
}

uint32_t ex_concat(exec_graph *g, int n, const uint32_t *xs, int axis)
{
    return exec_op1(g, EXEC_OP_ConcatV2, n, xs, 1, AT(axis));
}

exec_status ex_split(exec_graph *g, uint32_t x, int axis, int n, uint32_t *out)
{
    for (int i = 0; i < n; i++)
        out[i] = 0;
    exec_op_add(g, EXEC_OP_Split, 1, &x, 2, AT(axis, n), out);
    return g->status;
}

uint32_t ex_slice(exec_graph *g, uint32_t x, const int64_t *begin, const int64_t *size)
{
    int nd = rank_of(g, x, "Slice");
    if (!nd)
        return 0;
    int64_t at[2 * EXEC_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        at[i] = begin[i];
        at[nd + i] = size[i];
    }
    return exec_op1(g, EXEC_OP_Slice, 1, &x, 2 * nd, at);
}

uint32_t ex_pad(exec_graph *g, uint32_t x, const int64_t *before, const int64_t *after)
{
    int nd = rank_of(g, x, "Pad");
    if (!nd)
        return 0;
    int64_t at[2 * EXEC_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        at[2 * i] = before[i];
        at[2 * i + 1] = after[i];
    }
    return exec_op1(g, EXEC_OP_Pad, 1, &x, 2 * nd, at);
}

uint32_t ex_gather(exec_graph *g, uint32_t params, uint32_t indices)
{
    return OP(g, Gather, IN(params, indices), 0, NULL);
}

/* ---- attention models ---- */
uint32_t ex_layer_norm(exec_graph *g, uint32_t x, uint32_t gamma, uint32_t beta, float epsilon)
{
    return OP(g, LayerNorm, IN(x, gamma, beta), 1, AT(exec_attr_f(epsilon)));
}
uint32_t ex_masked_fill(exec_graph *g, uint32_t x, uint32_t mask, float value)
{
    return OP(g, MaskedFill, IN(x, mask), 1, AT(exec_attr_f(value)));
}
uint32_t ex_label_smoothed_xent(exec_graph *g, uint32_t logits, uint32_t labels, float label_smoothing,
                                int32_t ignore_label)
{
    return OP(g, LabelSmoothedCrossEntropy, IN(logits, labels), 2, AT(exec_attr_f(label_smoothing), ignore_label));
}
