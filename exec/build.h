/* build.h -- typed graph builders, one per op (ex_<op>): each appends a node
 * and returns its output tensor id (0 on error; see exec_graph_status).
 * Shapes in the comments; images are NCHW. */
#ifndef FATHOM_EXEC_BUILD_H
#define FATHOM_EXEC_BUILD_H
#include "exec.h"

/* ---- matrix ---- */
uint32_t ex_matmul(exec_graph *g, uint32_t a, uint32_t b, int transpose_a, int transpose_b); /* [M,K]x[K,N] -> [M,N] */
/* [...,M,K]x[...,K,N] -> [...,M,N] over shared batch dims */
uint32_t ex_batch_matmul(exec_graph *g, uint32_t a, uint32_t b, int adj_x, int adj_y);

/* ---- elementwise (b broadcasts onto a) ---- */
uint32_t ex_add(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_mul(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_addn(exec_graph *g, int n, const uint32_t *xs);
uint32_t ex_bias_add(exec_graph *g, uint32_t x, uint32_t b, int axis); /* b [x.shape[axis]] */
uint32_t ex_relu(exec_graph *g, uint32_t x);

/* ---- reduction ---- */
/* axes: n of them (n = 0: all); keep_dims keeps reduced dims as 1 */
uint32_t ex_sum(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims);
/* logits [N,C], labels int32 [N] -> mean loss [1] */
uint32_t ex_sparse_softmax_xent(exec_graph *g, uint32_t logits, uint32_t labels);

/* ---- data movement ---- */
uint32_t ex_reshape(exec_graph *g, uint32_t x, int ndim, const int64_t *dims);
uint32_t ex_tile(exec_graph *g, uint32_t x, const int64_t *multiples);

/* ==== The rest of the table: declared here as the contract between the
 * families; each is defined in build.c by the family that lands it. ==== */

/* ---- convolution, pooling, normalization (exec/ops/conv.c, pool.c, norm.c) ----
 * x [N,C,H,W], filter [OC,C,KH,KW]; pads are symmetric (top=bottom, left=right);
 * out = (H + 2*pad - K) / stride + 1. */
uint32_t ex_conv2d(exec_graph *g, uint32_t x, uint32_t filter, int stride_h, int stride_w, int pad_h, int pad_w);
/* pad for TF's "SAME" at stride 1 is K/2; helpers for explicit layers: */
uint32_t ex_max_pool(exec_graph *g, uint32_t x, int kh, int kw, int sh, int sw, int ph, int pw);
uint32_t ex_avg_pool(exec_graph *g, uint32_t x, int kh, int kw, int sh, int sw, int ph, int pw);
uint32_t ex_global_avg_pool(exec_graph *g, uint32_t x); /* [N,C,H,W] -> [N,C,1,1] */
/* LRN across channels (AlexNet: depth_radius 2, bias 2 (or 1), alpha 1e-4, beta 0.75) */
uint32_t ex_lrn(exec_graph *g, uint32_t x, int depth_radius, float bias, float alpha, float beta);
/* FusedBatchNorm over N,H,W per channel C (x [N,C,H,W] or [N,C]); scale, offset,
 * running_mean, running_var [C] (the running stats are weights' siblings of
 * role weight but not trained: create them with exec_tensor_new(... EXEC_ROLE_weight ...)
 * or exec_const). training=1 uses batch statistics and updates the running
 * ones in place (momentum); training=0 is the inference form. */
uint32_t ex_fused_batch_norm(exec_graph *g, uint32_t x, uint32_t scale, uint32_t offset, uint32_t running_mean,
                             uint32_t running_var, float epsilon, float momentum, int training);

/* ---- more elementwise, activations, reductions, data movement
 *      (exec/ops/arith.c, activation.c, reduction.c, movement.c) ---- */
uint32_t ex_sub(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_div(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_pow(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_neg(exec_graph *g, uint32_t x);
uint32_t ex_square(exec_graph *g, uint32_t x);
uint32_t ex_sqrt(exec_graph *g, uint32_t x);
uint32_t ex_exp(exec_graph *g, uint32_t x);
uint32_t ex_log(exec_graph *g, uint32_t x);
uint32_t ex_sigmoid(exec_graph *g, uint32_t x);
uint32_t ex_tanh(exec_graph *g, uint32_t x);
uint32_t ex_clipped_relu(exec_graph *g, uint32_t x, float cap);           /* min(max(x,0),cap) */
uint32_t ex_softmax(exec_graph *g, uint32_t x);                           /* over the last axis */
uint32_t ex_log_softmax(exec_graph *g, uint32_t x);                       /* over the last axis */
uint32_t ex_select(exec_graph *g, uint32_t cond, uint32_t a, uint32_t b); /* cond != 0 ? a : b, same shapes */
uint32_t ex_cast(exec_graph *g, uint32_t x, exec_dtype to);
uint32_t ex_identity(exec_graph *g, uint32_t x); /* a copy */
uint32_t ex_mean(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims);
uint32_t ex_max(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims);
uint32_t ex_argmax(exec_graph *g, uint32_t x, int axis); /* -> int32 */
uint32_t ex_transpose(exec_graph *g, uint32_t x, const int64_t *perm);
uint32_t ex_concat(exec_graph *g, int n, const uint32_t *xs, int axis);
/* splits x along axis into n equal parts; writes the n ids to out */
exec_status ex_split(exec_graph *g, uint32_t x, int axis, int n, uint32_t *out);
uint32_t ex_slice(exec_graph *g, uint32_t x, const int64_t *begin, const int64_t *size);
uint32_t ex_pad(exec_graph *g, uint32_t x, const int64_t *before, const int64_t *after); /* zeros */
uint32_t ex_gather(exec_graph *g, uint32_t params, uint32_t indices); /* [V,D], int32 [...] -> [...,D] */
/* (math family extras) a == b ? 1 : 0 as float (b broadcasts); zeros of x's
 * shape; data [I...,D...] summed into rows indices [I...] of [num_segments,D...] */
uint32_t ex_equal(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_zeros_like(exec_graph *g, uint32_t x);
uint32_t ex_unsorted_segment_sum(exec_graph *g, uint32_t data, uint32_t indices, int64_t num_segments);

/* ---- losses (exec/ops/loss.c): each returns a scalar [1] loss tensor ---- */
uint32_t ex_softmax_xent(exec_graph *g, uint32_t logits, uint32_t labels); /* dense labels [N,C]; mean */
/* sampled softmax (Jean et al.; TF's sampled_softmax_loss): weights [V,D],
 * biases [V], inputs [N,D], labels int32 [N]; num_sampled log-uniform
 * candidates; mean over N */
uint32_t ex_sampled_softmax_loss(exec_graph *g, uint32_t weights, uint32_t biases, uint32_t inputs, uint32_t labels,
                                 int num_sampled);
/* CTC: logits [T,N,C] (blank = C-1), labels int32 [N,L] (padded), label_lengths
 * int32 [N], seq_lengths int32 [N]; mean negative log-likelihood over N */
uint32_t ex_ctc_loss(exec_graph *g, uint32_t logits, uint32_t labels, uint32_t label_lengths, uint32_t seq_lengths);
/* greedy CTC decoding: logits [T,N,C] -> int32 [N,T] (collapsed, -1 padded) */
uint32_t ex_ctc_greedy_decoder(exec_graph *g, uint32_t logits, uint32_t seq_lengths);
uint32_t ex_huber_loss(exec_graph *g, uint32_t pred, uint32_t target, float delta); /* mean */
uint32_t ex_sigmoid_xent(exec_graph *g, uint32_t logits, uint32_t labels);          /* sum over features, mean over N */

/* ---- attention models (exec/ops/norm.c, arith.c, reduction.c) ---- */
/* LayerNorm over the last axis: x [...,D], gamma, beta [D] -> y [...,D] */
uint32_t ex_layer_norm(exec_graph *g, uint32_t x, uint32_t gamma, uint32_t beta, float epsilon);
/* mask != 0 ? value : x; mask (float or int32) of x's rank, each dim x's or 1 */
uint32_t ex_masked_fill(exec_graph *g, uint32_t x, uint32_t mask, float value);
/* sparse softmax cross entropy with label smoothing eps (target
 * (1-eps) onehot + eps/C), mean over the rows whose label is not
 * ignore_label (-1: none): logits [N,C], labels int32 [N] -> [1] */
uint32_t ex_label_smoothed_xent(exec_graph *g, uint32_t logits, uint32_t labels, float label_smoothing,
                                int32_t ignore_label);

/* ---- random (exec/ops/random.c): new draws every run, deterministic per seed ---- */
uint32_t ex_random_normal(exec_graph *g, int ndim, const int64_t *shape, float mean, float stddev);
uint32_t ex_random_uniform(exec_graph *g, int ndim, const int64_t *shape, float lo, float hi);
uint32_t ex_dropout(exec_graph *g, uint32_t x, float rate); /* inverted dropout; identity-free in infer graphs */

#endif
