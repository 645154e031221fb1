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

EXEC_COST_FN(cost_io) { *flops = 0; *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_elem1) { *flops = out_numel(g, n); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_elem4) { *flops = 4 * out_numel(g, n); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_addn)
{
    *flops = (uint64_t)(n->nin - 1) * (uint64_t)g->tensors[n->out[0]].numel;
    *bytes = exec_io_bytes(g, n);
}
EXEC_COST_FN(cost_reduce) { *flops = (uint64_t)g->tensors[n->in[0]].numel; *bytes = exec_io_bytes(g, n); }

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
EXEC_COST_FN(cost_softmax_xent) { *flops = 5ull * (uint64_t)g->tensors[n->in[0]].numel; *bytes = exec_io_bytes(g, n); }

/* var -= lr * grad: a multiply and a subtract per parameter */
EXEC_COST_FN(cost_apply_gd) { *flops = 2ull * (uint64_t)g->tensors[n->in[0]].numel; *bytes = exec_io_bytes(g, n); }

/* ---- losses, random, optimizers and clipping (loss branch) ------------ */
static uint64_t in_numel(const exec_graph *g, const exec_node *n, int i) { return (uint64_t)g->tensors[n->in[i]].numel; }

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

EXEC_COST_FN(cost_huber) { *flops = 5 * in_numel(g, n, 0); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_sigmoid_xent) { *flops = 7 * in_numel(g, n, 0); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_apply_momentum) { *flops = 3 * in_numel(g, n, 0); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_apply_adam) { *flops = 12 * in_numel(g, n, 0); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_apply_rmsprop) { *flops = 11 * in_numel(g, n, 0); *bytes = exec_io_bytes(g, n); }

EXEC_COST_FN(cost_clip)
{
    uint64_t e = 0;
    for (int i = 0; i < n->nin; i++)
        e += in_numel(g, n, i);
    *flops = 3 * e;
    *bytes = exec_io_bytes(g, n);
}
