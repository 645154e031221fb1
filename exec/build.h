/* build.h -- typed graph builders, one per op (ex_<op>): each appends a node
 * and returns its output tensor id (0 on error; see exec_graph_status).
 * Shapes in the comments; images are NCHW. */
#ifndef FATHOM_EXEC_BUILD_H
#define FATHOM_EXEC_BUILD_H
#include "exec.h"

/* ---- matrix ---- */
uint32_t ex_matmul(exec_graph *g, uint32_t a, uint32_t b, int transpose_a, int transpose_b); /* [M,K]x[K,N] -> [M,N] */
uint32_t ex_batch_matmul(exec_graph *g, uint32_t a, uint32_t b, int adj_x, int adj_y);       /* [B,M,K]x[B,K,N] -> [B,M,N] */

/* ---- elementwise (b broadcasts onto a) ---- */
uint32_t ex_add(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_mul(exec_graph *g, uint32_t a, uint32_t b);
uint32_t ex_addn(exec_graph *g, int n, const uint32_t *xs);
uint32_t ex_bias_add(exec_graph *g, uint32_t x, uint32_t b, int axis);  /* b [x.shape[axis]] */
uint32_t ex_relu(exec_graph *g, uint32_t x);

/* ---- reduction ---- */
/* axes: n of them (n = 0: all); keep_dims keeps reduced dims as 1 */
uint32_t ex_sum(exec_graph *g, uint32_t x, int naxes, const int64_t *axes, int keep_dims);
/* logits [N,C], labels int32 [N] -> mean loss [1] */
uint32_t ex_sparse_softmax_xent(exec_graph *g, uint32_t logits, uint32_t labels);

/* ---- data movement ---- */
uint32_t ex_reshape(exec_graph *g, uint32_t x, int ndim, const int64_t *dims);
uint32_t ex_tile(exec_graph *g, uint32_t x, const int64_t *multiples);

#endif
