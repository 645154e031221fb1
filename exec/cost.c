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

/* ---- math family (elementwise math, activations, data movement) ---- */
EXEC_COST_FN(cost_elem2) { *flops = 2 * out_numel(g, n); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_elem3) { *flops = 3 * out_numel(g, n); *bytes = exec_io_bytes(g, n); }
EXEC_COST_FN(cost_elem8) { *flops = 8 * out_numel(g, n); *bytes = exec_io_bytes(g, n); }
/* ZerosLike: the input gives only the shape; only the output is touched */
EXEC_COST_FN(cost_fill)
{
    *flops = 0;
    *bytes = 0;
    for (int i = 0; i < n->nout; i++)
        *bytes += g->tensors[n->out[i]].bytes;
}
