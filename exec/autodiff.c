/* autodiff.c -- symbolic reverse mode: walks the forward nodes backwards and
 * appends each op's gradient rule (from the op table) to the graph. */
#include "internal.h"

typedef struct contrib {
    uint32_t grad, next;
} contrib;

typedef struct ad {
    exec_graph *g;
    uint32_t *head; /* per tensor: first contribution (index into list) */
    contrib *list;
    uint32_t nlist, cap;
    uint8_t *needs; /* per tensor: depends on a weight */
} ad;

static exec_status push(ad *a, uint32_t t, uint32_t grad)
{
    if (a->nlist == a->cap) {
        uint32_t nc = a->cap ? a->cap * 2 : 256;
        contrib *nl = base_realloc(a->list, nc * sizeof *nl);
        if (!nl)
            return exec_fail(EXEC_ERR_NOMEM, "autodiff: out of memory");
        a->list = nl;
        a->cap = nc;
    }
    a->list[a->nlist] = (contrib){ .grad = grad, .next = a->head[t] };
    a->head[t] = ++a->nlist; /* 1-based, 0 ends */
    return EXEC_OK;
}

/* The sum of the contributions to t (one AddN when several), or 0. */
static uint32_t total(ad *a, uint32_t t)
{
    uint32_t n = 0;
    for (uint32_t c = a->head[t]; c; c = a->list[c - 1].next)
        n++;
    if (n <= 1)
        return n ? a->list[a->head[t] - 1].grad : 0;
    uint32_t ids[n];
    uint32_t i = n;
    for (uint32_t c = a->head[t]; c; c = a->list[c - 1].next)
        ids[--i] = a->list[c - 1].grad;
    uint32_t sum = exec_op1(a->g, EXEC_OP_AddN, (int)n, ids, 0, NULL);
    a->head[t] = 0;
    if (sum && push(a, t, sum))
        return 0;
    return sum;
}

exec_status exec_gradients(exec_graph *g, uint32_t loss)
{
    if (g->status)
        return g->status;
    exec_tensor *lt = exec_tensor_get(g, loss);
    if (!lt || lt->numel != 1 || lt->dtype != EXEC_F32)
        return exec_graph_fail(g, EXEC_ERR_ARG, "gradients: the loss must be a float scalar"), g->status;
    exec_status st = EXEC_OK;
    uint32_t nt0 = g->ntensors, nn0 = g->nnodes;
    ad a = { .g = g };
    a.head = base_calloc(nt0, sizeof *a.head);
    a.needs = base_calloc(nt0, 1);
    if (!a.head || !a.needs) {
        st = exec_fail(EXEC_ERR_NOMEM, "autodiff: out of memory");
        goto end;
    }
    for (uint32_t i = 0; i < g->nweights; i++)
        a.needs[g->weights[i]] = 1;
    for (uint32_t j = 0; j < nn0; j++) {
        const exec_node *n = &g->nodes[j];
        if (n->phase != EXEC_PHASE_forward)
            continue;
        uint8_t need = 0;
        for (int i = 0; i < n->nin; i++)
            need |= a.needs[n->in[i]];
        if (!exec_op_table[n->op].grad)
            need = 0; /* not differentiable: the gradient stops here */
        for (int o = 0; o < n->nout; o++)
            a.needs[n->out[o]] |= need;
    }

    exec_phase saved = g->phase;
    g->phase = EXEC_PHASE_backward;
    int64_t lshape[EXEC_MAX_DIMS]; /* a copy: a new tensor may move the tensor array under lt */
    memcpy(lshape, lt->shape, sizeof lshape);
    uint32_t seed = exec_tensor_new(g, EXEC_ROLE_gradient, EXEC_F32, lt->ndim, lshape, "dloss");
    if (!seed) {
        st = g->status;
        goto restore;
    }
    g->init[seed] = EXEC_INIT_ZERO + 1;
    g->init_value[seed] = 1.0f;
    g->grad_seed = seed;
    if ((st = push(&a, loss, seed)))
        goto restore;

    for (uint32_t jj = nn0; jj-- > 0;) {
        const exec_node *n = &g->nodes[jj];
        if (n->phase != EXEC_PHASE_forward || !exec_op_table[n->op].grad)
            continue;
        int any = 0;
        /* total() may append an AddN, which moves the node array: n is
         * fetched again after it */
        const int nout = n->nout;
        const uint32_t *outs = n->out;
        uint32_t dout[nout > 0 ? nout : 1];
        for (int o = 0; o < nout; o++) {
            dout[o] = a.needs[outs[o]] ? total(&a, outs[o]) : 0;
            any |= dout[o] != 0;
        }
        n = &g->nodes[jj];
        if (!any)
            continue;
        uint32_t din[n->nin];
        for (int i = 0; i < n->nin; i++)
            din[i] = a.needs[n->in[i]] ? EXEC_GRAD_WANTED : 0;
        st = exec_op_table[n->op].grad(g, &g->nodes[jj], dout, din);
        if (!st)
            st = g->status;
        if (st) {
            if (!g->status)
                exec_graph_fail(g, st, "%s", exec_errmsg());
            goto restore;
        }
        n = &g->nodes[jj];
        for (int i = 0; i < n->nin; i++)
            if (din[i] && din[i] != EXEC_GRAD_WANTED && (st = push(&a, n->in[i], din[i])))
                goto restore;
    }
    for (uint32_t i = 0; i < g->nweights; i++) {
        uint32_t w = g->weights[i];
        uint32_t gw = total(&a, w); /* may grow (move) g->grad: assign after */
        g->grad[w] = gw;
    }
    st = g->status;
restore:
    g->phase = saved;
end:
    base_free(a.head);
    base_free(a.needs);
    base_free(a.list);
    return st;
}
