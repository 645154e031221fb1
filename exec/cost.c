/* cost.c -- the cost formulas named in ops.def: FLOPs and ideal bytes
 * (each distinct input tensor read once, each output written once). */
#include "internal.h"

uint64_t exec_io_bytes(const exec_graph *g, const exec_node *n)
{
    uint64_t b = 0;
    for (int i = 0; i < n->nin; i++) {
        int dup = 0;
        for (int j = 0; j < i; j++)
            dup |= n->in[j] == n->in[i];
        if (!dup)
            b += g->tensors[n->in[i]].bytes;
    }
    for (int i = 0; i < n->nout; i++)
        b += g->tensors[n->out[i]].bytes;
    return b;
}

static uint64_t out_numel(const exec_graph *g, const exec_node *n)
{
    uint64_t e = 0;
    for (int i = 0; i < n->nout; i++)
        e += (uint64_t)g->tensors[n->out[i]].numel;
    return e;
}

EXEC_COST_FN(cost_io)
{
    *flops = 0;
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_elem1)
{
    *flops = out_numel(g, n);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_elem4)
{
    *flops = 4 * out_numel(g, n);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_addn)
{
    *flops = (uint64_t)(n->nin - 1) * (uint64_t)g->tensors[n->out[0]].numel;
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_reduce)
{
    *flops = (uint64_t)g->tensors[n->in[0]].numel;
    *bytes = exec_io_bytes(g, n);
}

EXEC_COST_FN(cost_matmul)
{
    const exec_tensor *a = &g->tensors[n->in[0]], *c = &g->tensors[n->out[0]];
    int64_t k = n->attrs[0] ? a->shape[0] : a->shape[1];
    *flops = 2ull * (uint64_t)c->numel * (uint64_t)k;
    *bytes = exec_io_bytes(g, n);
}

EXEC_COST_FN(cost_batchmatmul)
{
    const exec_tensor *a = &g->tensors[n->in[0]], *c = &g->tensors[n->out[0]];
    int64_t k = n->attrs[0] ? a->shape[a->ndim - 2] : a->shape[a->ndim - 1];
    *flops = 2ull * (uint64_t)c->numel * (uint64_t)k;
    *bytes = exec_io_bytes(g, n);
}

/* max, subtract, exp, sum, divide per logit */
EXEC_COST_FN(cost_softmax_xent)
{
    *flops = 5ull * (uint64_t)g->tensors[n->in[0]].numel;
    *bytes = exec_io_bytes(g, n);
}

/* var -= lr * grad: a multiply and a subtract per parameter */
EXEC_COST_FN(cost_apply_gd)
{
    *flops = 2ull * (uint64_t)g->tensors[n->in[0]].numel;
    *bytes = exec_io_bytes(g, n);
}

/* ---- losses, random, optimizers and clipping -------------------------- */
static uint64_t in_numel(const exec_graph *g, const exec_node *n, int i)
{
    return (uint64_t)g->tensors[n->in[i]].numel;
}

/* weights [V,D], inputs [N,D]; S = numel of the sampled ids (output 1) */
EXEC_COST_FN(cost_sampled_softmax)
{
    uint64_t N = (uint64_t)g->tensors[n->in[2]].shape[0], D = (uint64_t)g->tensors[n->in[2]].shape[1];
    uint64_t S1 = (uint64_t)g->tensors[n->out[1]].numel + 1;
    *flops = 2 * N * S1 * D + 6 * N * S1;
    *bytes = exec_io_bytes(g, n);
}

/* in [weights, inputs, labels, sampled, dlogits [N,S+1]] */
EXEC_COST_FN(cost_sampled_softmax_grad)
{
    uint64_t D = (uint64_t)g->tensors[n->in[1]].shape[1];
    *flops = 4 * in_numel(g, n, 4) * D;
    *bytes = exec_io_bytes(g, n);
}

/* logits [T,N,C], labels [N,L]: softmax, then alpha and beta over 2L+1 states */
EXEC_COST_FN(cost_ctc)
{
    const exec_tensor *x = &g->tensors[n->in[0]], *l = &g->tensors[n->in[1]];
    uint64_t T = (uint64_t)x->shape[0], N = (uint64_t)x->shape[1];
    uint64_t S = 2 * (uint64_t)l->shape[1] + 1;
    *flops = 5 * (uint64_t)x->numel + 10 * T * N * S;
    *bytes = exec_io_bytes(g, n);
}

EXEC_COST_FN(cost_huber)
{
    *flops = 5 * in_numel(g, n, 0);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_sigmoid_xent)
{
    *flops = 7 * in_numel(g, n, 0);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_apply_momentum)
{
    *flops = 3 * in_numel(g, n, 0);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_apply_adam)
{
    *flops = 12 * in_numel(g, n, 0);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_apply_rmsprop)
{
    *flops = 11 * in_numel(g, n, 0);
    *bytes = exec_io_bytes(g, n);
}

EXEC_COST_FN(cost_clip)
{
    uint64_t e = 0;
    for (int i = 0; i < n->nin; i++)
        e += in_numel(g, n, i);
    *flops = 3 * e;
    *bytes = exec_io_bytes(g, n);
}
/* ---- convolution / pooling / normalization (the nn family) ------------- */

/* Conv2D: x [N,C,H,W], filter [OC,C,KH,KW] -> y [N,OC,OH,OW]. The two
 * backprops do the same multiply-adds (one GEMM per image each), so all
 * three count 2*N*OC*OH*OW*C*KH*KW. */
EXEC_COST_FN(cost_conv2d)
{
    const exec_tensor *x, *w, *y;
    if (n->op == EXEC_OP_Conv2D) {
        x = &g->tensors[n->in[0]], w = &g->tensors[n->in[1]], y = &g->tensors[n->out[0]];
    } else if (n->op == EXEC_OP_Conv2DBackpropInput) {
        w = &g->tensors[n->in[0]], y = &g->tensors[n->in[1]], x = &g->tensors[n->out[0]];
    } else {
        x = &g->tensors[n->in[0]], y = &g->tensors[n->in[1]], w = &g->tensors[n->out[0]];
    }
    (void)x;
    /* y->numel = N*OC*OH*OW; w->numel / OC = C*KH*KW */
    *flops = 2ull * (uint64_t)y->numel * (uint64_t)(w->numel / w->shape[0]);
    *bytes = exec_io_bytes(g, n);
}

/* KH*KW per pooled element: the forward's output, or the dy a *Grad reads. */
EXEC_COST_FN(cost_pool)
{
    uint64_t window = (uint64_t)(n->attrs[0] * n->attrs[1]);
    uint32_t pooled = n->op == EXEC_OP_MaxPoolGrad ? n->in[2] : n->op == EXEC_OP_AvgPoolGrad ? n->in[0] : n->out[0];
    *flops = window * (uint64_t)g->tensors[pooled].numel;
    *bytes = exec_io_bytes(g, n);
}

/* LRN: per element a window of 2r+1 squares and adds, then bias + alpha*s
 * (2), the power (counted as 2) and the divide (1). LRNGrad: the same
 * normalizer, the window sum of dy*y/norm (2 per tap) and the combination. */
EXEC_COST_FN(cost_lrn)
{
    uint64_t taps = 2ull * (uint64_t)n->attrs[0] + 1, e = (uint64_t)g->tensors[n->out[0]].numel;
    *flops = n->op == EXEC_OP_LRN ? e * (2 * taps + 5) : e * (4 * taps + 10);
    *bytes = exec_io_bytes(g, n);
}

/* FusedBatchNorm: training: mean (1), variance (2), normalize-scale-shift
 * as one multiply-add after per-channel folding (2), plus 1 for the
 * statistics' subtract = 6 per element; inference: the multiply-add (2).
 * FusedBatchNormGrad: training: sum dy (1), sum dy*xhat (3), dx (5) = 9;
 * inference: sums (4), dx = dy*scale*inv_std folded (1) = 5. */
EXEC_COST_FN(cost_batch_norm)
{
    const exec_tensor *x = &g->tensors[n->op == EXEC_OP_FusedBatchNorm ? n->in[0] : n->in[1]];
    int training = n->op == EXEC_OP_FusedBatchNorm ? n->nattrs > 2 && n->attrs[2] : n->nattrs > 1 && n->attrs[1];
    uint64_t per = n->op == EXEC_OP_FusedBatchNorm ? (training ? 6 : 2) : (training ? 9 : 5);
    *flops = per * (uint64_t)x->numel;
    *bytes = exec_io_bytes(g, n);
}

/* LayerNorm: per element the row mean (1), the variance (3: subtract,
 * square, add) and y = (x - mean) * inv_std * gamma + beta (4) = 8.
 * LayerNormGrad: xhat (2), g = dy*gamma (1), the row sums of g and g*xhat
 * (3), dx = inv_std * (g - mean(g) - xhat*mean(g*xhat)) (4), dgamma (2)
 * and dbeta (1) = 13. */
EXEC_COST_FN(cost_layer_norm)
{
    const exec_tensor *x = &g->tensors[n->op == EXEC_OP_LayerNorm ? n->in[0] : n->in[1]];
    *flops = (n->op == EXEC_OP_LayerNorm ? 8ull : 13ull) * (uint64_t)x->numel;
    *bytes = exec_io_bytes(g, n);
}

/* ---- math family (elementwise math, activations, data movement) ---- */
EXEC_COST_FN(cost_elem2)
{
    *flops = 2 * out_numel(g, n);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_elem3)
{
    *flops = 3 * out_numel(g, n);
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_elem8)
{
    *flops = 8 * out_numel(g, n);
    *bytes = exec_io_bytes(g, n);
}
/* ZerosLike: the input gives only the shape; only the output is touched */
EXEC_COST_FN(cost_fill)
{
    *flops = 0;
    *bytes = 0;
    for (int i = 0; i < n->nout; i++)
        *bytes += g->tensors[n->out[i]].bytes;
}
