/* forwarding.c -- buffer forwarding at plan time: an elementwise node whose
 * input dies there writes its output over that input, as TensorFlow's
 * kernels do (OpKernelContext::forward_input_or_allocate_output).
 *
 * A chain such as Conv2D -> FusedBatchNorm -> Relu -> Add then runs in one
 * buffer: each op reads a line and writes the same line back, where
 * separate outputs would stream a fresh buffer through the caches (a write
 * that misses fetches the line first). The graph and its trace keep every
 * node and tensor (TF's op granularity); only the storage is shared.
 *
 * Storage is planned for groups of tensors: exec_tensor.storage names the
 * group's first tensor, whose buffer they all use. A tensor y joins the
 * group of a node's input t when
 *   - the node's op may write that input in place (the table below: the
 *     kernel reads x[i] before it writes y[i], nothing else; a Reshape,
 *     TF's view of the same bytes, then writes nothing);
 *   - t and y are activations (or both gradients) of the same size and
 *     type, and neither is kept (exec_tensor_keep: a caller reads it after
 *     runs);
 *   - over the whole program, in build order, every read of a group member
 *     sees that member's own contents: between its write and each of its
 *     reads no other member is written, but for a Reshape's output, whose
 *     contents are its input's too. This holds for a graph whose
 *     tensors are written once (t read by that node alone) and for replayed
 *     programs that write the same tensors again at every step.
 * The executor orders nodes by storage (executor.c), so inter-op workers
 * keep these hazards. */
#include "internal.h"

#include <stdlib.h>

/* the ops that may write their output over an input, and which inputs
 * (bits below FWD_MAX_INPUTS) */
enum { FWD_MAX_INPUTS = 8 };
static const struct {
    exec_op op;
    uint8_t inputs; /* a bit per input index */
} forwardable[] = {
    { EXEC_OP_Relu, 1 << 0 },           { EXEC_OP_Sigmoid, 1 << 0 },      { EXEC_OP_Tanh, 1 << 0 },
    { EXEC_OP_BiasAdd, 1 << 0 },        { EXEC_OP_Add, 1 << 0 | 1 << 1 }, { EXEC_OP_ReluGrad, 1 << 0 }, /* dy */
    { EXEC_OP_FusedBatchNorm, 1 << 0 }, /* inference form only (forward_mask) */
    { EXEC_OP_Reshape, 1 << 0 },        /* the same bytes: its kernel then copies nothing, as TF's shares them */
};

static unsigned forward_mask(const exec_node *n)
{
    if (n->op == EXEC_OP_FusedBatchNorm && n->attrs[2] != 0)
        return 0; /* training: x is read twice (moments, then y) and by the gradient */
    for (size_t i = 0; i < sizeof forwardable / sizeof forwardable[0]; i++)
        if (forwardable[i].op == n->op)
            return forwardable[i].inputs;
    return 0;
}

/* how often node n reads tensor t */
static int reads_of(const exec_node *n, uint32_t t)
{
    int c = 0;
    for (int i = 0; i < n->nin; i++)
        c += n->in[i] == t;
    return c;
}

static bool writes(const exec_node *n, uint32_t t)
{
    for (int o = 0; o < n->nout; o++)
        if (n->out[o] == t)
            return true;
    return false;
}

/* node n reads s and writes w in place of it, as its op allows */
static bool forwards(const exec_node *n, uint32_t s, uint32_t w)
{
    const unsigned mask = forward_mask(n);
    if (!mask || n->out[0] != w || reads_of(n, s) != 1)
        return false;
    for (int i = 0; i < n->nin; i++)
        if (n->in[i] == s)
            return (mask >> i) & 1;
    return false;
}

typedef struct {
    uint32_t *start, *node; /* per tensor: the nodes that touch it, in order (CSR) */
    uint32_t *next;         /* per tensor: the next member of its group (0: last) */
    uint32_t *touch;        /* scratch: the nodes touching a group */
    uint32_t *members;      /* scratch: a group's tensors */
    uint8_t *holds;         /* scratch, per tensor: the buffer holds its contents now */
} fwd_plan;

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* the group of `root` with y added keeps every read of a member on that
 * member's own contents. The buffer holds one writer's contents, or, after
 * a Reshape from one member into another, both members' alike (the same
 * bytes): a flattened feature map shares the buffer of the Relu before it,
 * which the Relu's gradient reads after the Reshape (DQN's conv3 -> fc4) */
static bool group_valid(const exec_graph *g, fwd_plan *P, uint32_t root, uint32_t y)
{
    uint32_t nm = 0, nt = 0;
    for (uint32_t m = root; m; m = P->next[m])
        P->members[nm++] = m;
    P->members[nm++] = y;
    for (uint32_t i = 0; i < nm; i++) {
        P->holds[P->members[i]] = 0;
        for (uint32_t a = P->start[P->members[i]]; a < P->start[P->members[i] + 1]; a++)
            P->touch[nt++] = P->node[a];
    }
    qsort(P->touch, nt, sizeof *P->touch, cmp_u32);
    for (uint32_t a = 0; a < nt; a++) {
        if (a && P->touch[a] == P->touch[a - 1])
            continue;
        const exec_node *n = &g->nodes[P->touch[a]];
        uint32_t read = 0, wrote = 0, nread = 0, nwrote = 0;
        for (uint32_t i = 0; i < nm; i++) {
            const uint32_t m = P->members[i];
            if (reads_of(n, m))
                read = m, nread++;
            if (writes(n, m))
                wrote = m, nwrote++;
        }
        if (nread > 1 || nwrote > 1 || (nread && !P->holds[read]))
            return false;
        if (nread && nwrote && read != wrote && !forwards(n, read, wrote))
            return false;
        if (nwrote && !(nread && n->op == EXEC_OP_Reshape))
            for (uint32_t i = 0; i < nm; i++)
                P->holds[P->members[i]] = 0;
        if (nwrote)
            P->holds[wrote] = 1;
    }
    return true;
}

/* the last node before j that touches t (-1: none) */
static int64_t last_touch(const fwd_plan *P, uint32_t t, uint32_t j)
{
    int64_t last = -1;
    for (uint32_t a = P->start[t]; a < P->start[t + 1] && P->node[a] < j; a++)
        last = P->node[a];
    return last;
}

static bool may_share(const exec_tensor *t, const exec_tensor *y)
{
    return (t->role == EXEC_ROLE_activation || t->role == EXEC_ROLE_gradient) && y->role == t->role &&
           t->dtype == y->dtype && t->bytes == y->bytes && t->numel == y->numel && !t->kept && !y->kept;
}

/* y joins the group of t when it may share t's buffer and every member's
 * reads stay on its own contents */
static bool join(exec_graph *g, fwd_plan *P, uint32_t t, uint32_t y)
{
    exec_tensor *ty = &g->tensors[y];
    if (t == y || !may_share(&g->tensors[t], ty))
        return false;
    const uint32_t root = g->tensors[t].storage;
    if (!group_valid(g, P, root, y))
        return false;
    uint32_t last = root;
    while (P->next[last])
        last = P->next[last];
    P->next[last] = y;
    ty->storage = root;
    return true;
}

/* Node j's output joins the group of one of the inputs its op may write
 * over, the most recently touched first: its lines are the likeliest still
 * in cache (a Transformer's Add writes over its sublayer's output, just
 * made, not over the residual stream, read last a sublayer ago: 1.7-1.9x
 * faster). An output already in a group, or heading one, stays there. */
static void forward_node(exec_graph *g, fwd_plan *P, uint32_t j)
{
    const exec_node *n = &g->nodes[j];
    const unsigned mask = forward_mask(n);
    if (!mask || n->nout < 1 || g->tensors[n->out[0]].storage != n->out[0] || P->next[n->out[0]])
        return;
    int64_t recent[FWD_MAX_INPUTS]; /* INT64_MIN: not a candidate, or tried */
    for (int i = 0; i < FWD_MAX_INPUTS; i++)
        recent[i] = i < n->nin && ((mask >> i) & 1) ? last_touch(P, n->in[i], j) : INT64_MIN;
    for (;;) {
        int c = 0;
        for (int i = 1; i < FWD_MAX_INPUTS; i++)
            c = recent[i] > recent[c] ? i : c;
        if (recent[c] == INT64_MIN || join(g, P, n->in[c], n->out[0]))
            return;
        recent[c] = INT64_MIN;
    }
}

exec_status exec_plan_forwarding(exec_graph *g)
{
    exec_status st = EXEC_OK;
    const uint32_t T = g->ntensors, N = g->nnodes;
    for (uint32_t id = 1; id < T; id++)
        g->tensors[id].storage = id;
    bool any = false;
    for (uint32_t j = 0; j < N && !any; j++)
        any = forward_mask(&g->nodes[j]) != 0;
    if (!any)
        return EXEC_OK;
    fwd_plan P = { 0 };
    uint64_t nacc = 0;
    for (uint32_t j = 0; j < N; j++)
        nacc += (uint64_t)g->nodes[j].nin + (uint64_t)g->nodes[j].nout;
    if (nacc >= UINT32_MAX)
        return EXEC_OK; /* no forwarding: every tensor its own buffer */
    P.start = base_calloc(T + 1, sizeof *P.start);
    P.node = base_malloc((nacc + 1) * sizeof *P.node);
    P.next = base_calloc(T, sizeof *P.next);
    P.touch = base_malloc((nacc + 1) * sizeof *P.touch);
    P.members = base_malloc((T + 1) * sizeof *P.members);
    P.holds = base_calloc(T + 1, sizeof *P.holds);
    uint32_t *fill = base_malloc((T + 1) * sizeof *fill);
    if (!P.start || !P.node || !P.next || !P.touch || !P.members || !P.holds || !fill) {
        st = exec_fail(EXEC_ERR_NOMEM, "plan: out of memory for buffer forwarding");
        goto end;
    }
    /* every (node, tensor) touch, in build order per tensor */
    for (uint32_t j = 0; j < N; j++) {
        const exec_node *n = &g->nodes[j];
        for (int i = 0; i < n->nin; i++)
            P.start[n->in[i] + 1]++;
        for (int o = 0; o < n->nout; o++)
            P.start[n->out[o] + 1]++;
    }
    for (uint32_t t = 0; t < T; t++)
        P.start[t + 1] += P.start[t];
    memcpy(fill, P.start, (T + 1) * sizeof *fill);
    for (uint32_t j = 0; j < N; j++) {
        const exec_node *n = &g->nodes[j];
        for (int i = 0; i < n->nin; i++)
            P.node[fill[n->in[i]]++] = j;
        for (int o = 0; o < n->nout; o++)
            P.node[fill[n->out[o]]++] = j;
    }
    for (uint32_t j = 0; j < N; j++)
        forward_node(g, &P, j);
end:
    base_free(P.start);
    base_free(P.node);
    base_free(P.next);
    base_free(P.touch);
    base_free(P.members);
    base_free(P.holds);
    base_free(fill);
    return st;
}
