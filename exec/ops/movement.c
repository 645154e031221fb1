/* movement.c -- data movement: Reshape, Tile. */
#include "../internal.h"

#include <omp.h>
#include <string.h>

/* Elements below which a copy stays on one thread: the engine's measured
 * threshold for streaming work (exec_par_min), the same as the elementwise
 * kernels'. One threshold for every memory-bound op keeps neighbours of a
 * size split alike, each thread on the elements it wrote: a parallel copy
 * between serial neighbours moves its whole output between the cores (a
 * fixed 65536 made memnet's Gather of [32,50,6,20] 60 us a step in its
 * graph at 2 threads against 21 us on one, its serial Mul after it 22
 * against 16). */
#define MOVE_PAR_MIN exec_par_min(EXEC_WORK_STREAM)

/* ---- Reshape: attrs = the new dims (one may be -1) --------------------- */
exec_status op_shape_Reshape(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    int64_t d[EXEC_MAX_DIMS], known = 1;
    int infer = -1;
    if (n->nattrs < 1 || n->nattrs > EXEC_MAX_DIMS)
        return exec_fail(EXEC_ERR_SHAPE, "Reshape: %d dims", n->nattrs);
    for (int i = 0; i < n->nattrs; i++) {
        d[i] = n->attrs[i];
        if (d[i] == -1 && infer < 0)
            infer = i;
        else if (d[i] <= 0)
            return exec_fail(EXEC_ERR_SHAPE, "Reshape: dim %d is %lld", i, (long long)d[i]);
        else
            known *= d[i];
    }
    if (infer >= 0) {
        if (x->numel % known)
            return exec_fail(EXEC_ERR_SHAPE, "Reshape: %lld elements do not split by %lld", (long long)x->numel,
                             (long long)known);
        d[infer] = x->numel / known;
        known *= d[infer];
    }
    if (known != x->numel)
        return exec_fail(EXEC_ERR_SHAPE, "Reshape: %lld elements into %lld", (long long)x->numel, (long long)known);
    exec_shape_set(out, x->dtype, n->nattrs, d);
    return EXEC_OK;
}

/* nothing where y shares x's buffer (forwarding.c: x dies here, as a
 * flattened feature map before a dense layer), else a copy; large ones
 * in one slice per thread: one core's copy does not reach the memory's
 * bandwidth */
exec_status op_fwd_Reshape(exec_kctx *k, const exec_node *n)
{
    const char *x = exec_in(k, n, 0)->data;
    char *y = exec_out(k, n, 0)->data;
    const size_t bytes = exec_in(k, n, 0)->bytes;
    if (x == y)
        return EXEC_OK;
    const int parts = k->nthreads;
    if (exec_in(k, n, 0)->numel <= MOVE_PAR_MIN || parts < 2) { /* no parallel region: its cost is a small copy's */
        memcpy(y, x, bytes);
        return EXEC_OK;
    }
#pragma omp parallel for num_threads(parts) schedule(static)
    for (int i = 0; i < parts; i++) {
        size_t a = bytes / (size_t)parts * (size_t)i,
               b = i == parts - 1 ? bytes : bytes / (size_t)parts * (size_t)(i + 1);
        memcpy(y + a, x + a, b - a);
    }
    return EXEC_OK;
}

exec_status op_grad_Reshape(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0]) {
        const exec_tensor *x = exec_t(g, n->in[0]);
        int64_t d[EXEC_MAX_DIMS];
        memcpy(d, x->shape, sizeof d);
        din[0] = exec_op1(g, EXEC_OP_Reshape, 1, &dout[0], x->ndim, d);
    }
    return g->status;
}

/* ---- Tile: attrs = multiples per dim ----------------------------------- */
exec_status op_shape_Tile(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    if (n->nattrs != x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "Tile: %d multiples for %d dims", n->nattrs, x->ndim);
    int64_t d[EXEC_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        if (n->attrs[i] < 1)
            return exec_fail(EXEC_ERR_SHAPE, "Tile: multiple %lld", (long long)n->attrs[i]);
        d[i] = x->shape[i] * n->attrs[i];
    }
    exec_shape_set(out, x->dtype, x->ndim, d);
    return EXEC_OK;
}

/* Rows [r0, r1) of y (its last dim): each the matching row of x, repeated.
 * The rows' indices advance as an odometer over y's outer dims, x's index
 * beside it wrapping at x's extent: no division past the first row (with
 * a division per element, memnet's [32,50,1,20] x [1,1,6,1] ran at 3.5
 * GB/s). */
static void tile_rows(const exec_tensor *x, const exec_tensor *y, int64_t r0, int64_t r1)
{
    const int nd = x->ndim;
    const int64_t inner = y->shape[nd - 1], xin = x->shape[nd - 1];
    const uint32_t *X = x->data;
    uint32_t *Y = y->data;
    int64_t yi[EXEC_MAX_DIMS] = { 0 }, xi[EXEC_MAX_DIMS] = { 0 }, xoff = 0;
    for (int64_t rem = r0, i = nd - 2; i >= 0; i--) {
        yi[i] = rem % y->shape[i], rem /= y->shape[i];
        xi[i] = yi[i] % x->shape[i];
        xoff += xi[i] * x->strides[i];
    }
    for (int64_t r = r0; r < r1; r++) {
        uint32_t *restrict yr = Y + r * inner;
        const uint32_t *restrict xr = X + xoff;
        /* x's row once, then the row so far copied after itself, doubling:
         * a few long copies where xin floats at a time were many short
         * ones (memnet's training spends most of its op time in Tile) */
        memcpy(yr, xr, (size_t)xin * sizeof *yr);
        for (int64_t have = xin; have < inner; have *= 2)
            memcpy(yr + have, yr, (size_t)(inner - have < have ? inner - have : have) * sizeof *yr);
        for (int i = nd - 2; i >= 0; i--) { /* the next row */
            xoff -= xi[i] * x->strides[i];
            xi[i] = xi[i] + 1 == x->shape[i] ? 0 : xi[i] + 1;
            xoff += xi[i] * x->strides[i];
            if (++yi[i] < y->shape[i])
                break;
            yi[i] = 0;
        }
    }
}

exec_status op_fwd_Tile(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *y = exec_out(k, n, 0);
    const int64_t rows = y->numel / y->shape[y->ndim - 1];
    const int nt = y->numel >= exec_par_min(EXEC_WORK_STREAM) && k->nthreads > 1 && rows > 1 ? k->nthreads : 1;
    if (nt == 1) {
        tile_rows(x, y, 0, rows);
        return EXEC_OK;
    }
#pragma omp parallel num_threads(nt)
    {
        const int t = omp_get_thread_num(), m = omp_get_num_threads();
        tile_rows(x, y, rows * t / m, rows * (t + 1) / m);
    }
    return EXEC_OK;
}

/* dx = dy reshaped to [m0, d0, m1, d1, ...] and summed over the m axes. */
exec_status op_grad_Tile(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    const exec_tensor *x = exec_t(g, n->in[0]);
    uint32_t cur = dout[0];
    /* one dim at a time keeps every intermediate within EXEC_MAX_DIMS */
    for (int i = 0; i < x->ndim; i++) {
        if (n->attrs[i] == 1)
            continue;
        const exec_tensor *c = exec_t(g, cur);
        int64_t pre = 1, post = 1;
        for (int j = 0; j < i; j++)
            pre *= c->shape[j];
        for (int j = i + 1; j < c->ndim; j++)
            post *= c->shape[j];
        uint32_t r = exec_op1(g, EXEC_OP_Reshape, 1, &cur, 4, (int64_t[]){ pre, n->attrs[i], x->shape[i], post });
        uint32_t s = exec_op1(g, EXEC_OP_Sum, 1, &r, 2, (int64_t[]){ 0, 1 });
        if (!s)
            return g->status;
        int64_t d[EXEC_MAX_DIMS];
        c = exec_t(g, cur);
        memcpy(d, c->shape, sizeof d);
        d[i] = x->shape[i];
        cur = exec_op1(g, EXEC_OP_Reshape, 1, &s, c->ndim, d);
    }
    din[0] = cur;
    return g->status;
}

/* ======== data movement (more), the math family: Transpose, ConcatV2,
 * Split, Slice, Pad, Gather. Every kernel moves 4-byte elements, so float32
 * and int32 tensors both pass. */

/* Offset of row r (over the dims 0..nd-2 of `shape`) in a tensor with
 * `strides`, each index shifted by base[i]; base[nd-1] is added too. */
static int64_t row_offset(int64_t r, int nd, const int64_t *shape, const int64_t *base, const int64_t *strides)
{
    int64_t off = base ? base[nd - 1] * strides[nd - 1] : 0;
    for (int i = nd - 2; i >= 0; i--) {
        int64_t idx = r % shape[i];
        r /= shape[i];
        off += (idx + (base ? base[i] : 0)) * strides[i];
    }
    return off;
}

static int64_t norm_axis(int64_t ax, int ndim) { return ax < 0 ? ax + ndim : ax; }

/* ---- Transpose: attrs perm; y.shape[i] = x.shape[perm[i]] ------------- */
static exec_status transpose_perm(const exec_tensor *x, const exec_node *n, int *perm)
{
    if (n->nattrs != x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "Transpose: %d perm entries for %d dims", n->nattrs, x->ndim);
    int seen = 0;
    for (int i = 0; i < x->ndim; i++) {
        if (n->attrs[i] < 0 || n->attrs[i] >= x->ndim || (seen >> n->attrs[i]) & 1)
            return exec_fail(EXEC_ERR_SHAPE, "Transpose: attributes are not a permutation of 0..%d", x->ndim - 1);
        seen |= 1 << n->attrs[i];
        perm[i] = (int)n->attrs[i];
    }
    return EXEC_OK;
}

exec_status op_shape_Transpose(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    int perm[EXEC_MAX_DIMS];
    exec_status s = transpose_perm(x, n, perm);
    if (s)
        return s;
    int64_t d[EXEC_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        d[i] = x->shape[perm[i]];
    exec_shape_set(out, x->dtype, x->ndim, d);
    return EXEC_OK;
}

/* Y[b][c][r] = X[b][r][c] for b < B, X [B,R,C], in cache-sized tiles */
static void transpose_batched(exec_kctx *k, const uint32_t *X, uint32_t *Y, int64_t B, int64_t R, int64_t C)
{
    enum { T = 32 };
    int64_t rt = (R + T - 1) / T;
#pragma omp parallel for collapse(2) num_threads(k->nthreads) if (B * R * C > MOVE_PAR_MIN)
    for (int64_t b = 0; b < B; b++)
        for (int64_t t = 0; t < rt; t++) {
            const uint32_t *xb = X + b * R * C;
            uint32_t *yb = Y + b * R * C;
            int64_t r0 = t * T, r1 = r0 + T < R ? r0 + T : R;
            for (int64_t c0 = 0; c0 < C; c0 += T) {
                int64_t c1 = c0 + T < C ? c0 + T : C;
                for (int64_t c = c0; c < c1; c++)
                    for (int64_t r = r0; r < r1; r++)
                        yb[c * R + r] = xb[r * C + c];
            }
        }
}

/* Drops size-1 dims and merges input dims that stay adjacent, so 2-D and the
 * common 4-D perms (NHWC<->NCHW: (0,3,1,2), (0,2,3,1)) become one batched 2-D
 * transpose; (1,0,2) becomes row copies; the rest take the general path. */
exec_status op_fwd_Transpose(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0);
    const uint32_t *X = x->data;
    uint32_t *Y = exec_out(k, n, 0)->data;
    int nd = x->ndim, perm[EXEC_MAX_DIMS];
    transpose_perm(x, n, perm);
    int map[EXEC_MAX_DIMS], m = 0, p[EXEC_MAX_DIMS], np = 0;
    for (int i = 0; i < nd; i++)
        map[i] = x->shape[i] != 1 ? m++ : -1;
    for (int i = 0; i < nd; i++)
        if (map[perm[i]] >= 0)
            p[np++] = perm[i];
    /* groups of adjacent input dims, in output order */
    int ng = 0, gin[EXEC_MAX_DIMS];
    int64_t gsize[EXEC_MAX_DIMS];
    for (int i = 0; i < np; i++) {
        if (i > 0 && p[i] == p[i - 1] + 1 && ng > 0) {
            gsize[ng - 1] *= x->shape[p[i]];
        } else {
            gin[ng] = p[i];
            gsize[ng++] = x->shape[p[i]];
        }
    }
    /* the collapsed input shape cin (groups in input order) and perm cperm */
    int cperm[EXEC_MAX_DIMS];
    int64_t cin[EXEC_MAX_DIMS];
    bool ident = true;
    for (int j = 0; j < ng; j++) {
        int rank = 0;
        for (int q = 0; q < ng; q++)
            rank += gin[q] < gin[j];
        cperm[j] = rank;
        cin[rank] = gsize[j];
        ident &= rank == j;
    }
    if (ng <= 1 || ident) {
        memcpy(Y, X, x->bytes);
        return EXEC_OK;
    }
    if (ng == 2) {
        transpose_batched(k, X, Y, 1, cin[0], cin[1]);
        return EXEC_OK;
    }
    if (ng == 3 && cperm[0] == 0 && cperm[1] == 2 && cperm[2] == 1) {
        transpose_batched(k, X, Y, cin[0], cin[1], cin[2]);
        return EXEC_OK;
    }
    /* general: one output row (the last output dim) at a time */
    int64_t cstr[EXEC_MAX_DIMS], od[EXEC_MAX_DIMS], ostr_in[EXEC_MAX_DIMS], s = 1;
    for (int i = ng - 1; i >= 0; i--) {
        cstr[i] = s;
        s *= cin[i];
    }
    for (int j = 0; j < ng; j++) {
        od[j] = cin[cperm[j]];
        ostr_in[j] = cstr[cperm[j]]; /* input stride of output dim j */
    }
    /* rows in runs along the next-to-last output dim: one row_offset (its
     * divisions) per run, then a step of that dim's input stride */
    int64_t inner = od[ng - 1], istep = ostr_in[ng - 1], run = od[ng - 2], rstep = ostr_in[ng - 2];
    int64_t runs = x->numel / (inner * run);
#pragma omp parallel for num_threads(k->nthreads) if (x->numel > MOVE_PAR_MIN)
    for (int64_t q = 0; q < runs; q++) {
        int64_t xoff = row_offset(q * run, ng, od, NULL, ostr_in);
        for (int64_t j = 0; j < run; j++, xoff += rstep) {
            uint32_t *yr = Y + (q * run + j) * inner;
            if (istep == 1) {
                memcpy(yr, X + xoff, (size_t)inner * sizeof *yr);
            } else {
                for (int64_t i = 0; i < inner; i++)
                    yr[i] = X[xoff + i * istep];
            }
        }
    }
    return EXEC_OK;
}

/* dx = Transpose(dy, inverse perm) */
exec_status op_grad_Transpose(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    int64_t inv[EXEC_MAX_DIMS];
    for (int i = 0; i < n->nattrs; i++)
        inv[n->attrs[i]] = i;
    din[0] = exec_op1(g, EXEC_OP_Transpose, 1, &dout[0], n->nattrs, inv);
    return g->status;
}

/* ---- ConcatV2: n inputs, attrs axis; dims equal except along axis ----- */
exec_status op_shape_ConcatV2(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *a = exec_gin(g, n, 0);
    int64_t ax = norm_axis(n->nattrs > 0 ? n->attrs[0] : 0, a->ndim);
    if (ax < 0 || ax >= a->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "ConcatV2: axis %lld out of range for %d dims",
                         (long long)(n->nattrs > 0 ? n->attrs[0] : 0), a->ndim);
    int64_t d[EXEC_MAX_DIMS];
    memcpy(d, a->shape, sizeof d);
    for (int i = 1; i < n->nin; i++) {
        const exec_tensor *b = exec_gin(g, n, i);
        if (b->ndim != a->ndim || b->dtype != a->dtype)
            return exec_fail(EXEC_ERR_SHAPE, "ConcatV2: input %d differs from input 0 in rank or dtype", i);
        for (int j = 0; j < a->ndim; j++)
            if (j != ax && b->shape[j] != a->shape[j])
                return exec_fail(EXEC_ERR_SHAPE, "ConcatV2: input %d has %lld in dim %d, input 0 %lld", i,
                                 (long long)b->shape[j], j, (long long)a->shape[j]);
        d[ax] += b->shape[ax];
    }
    exec_shape_set(out, a->dtype, a->ndim, d);
    return EXEC_OK;
}

/* Outer row o of concat_split (below). */
static inline void concat_split_row(exec_tensor *whole, int nparts, exec_tensor *const *parts, int64_t ax, int split,
                                    int64_t o)
{
    const int64_t inner = whole->strides[ax], wrow = whole->shape[ax] * inner;
    uint32_t *W = whole->data;
    int64_t off = 0;
    for (int i = 0; i < nparts; i++) {
        int64_t chunk = parts[i]->shape[ax] * inner;
        uint32_t *P = (uint32_t *)parts[i]->data + o * chunk;
        if (split)
            memcpy(P, W + o * wrow + off, (size_t)chunk * sizeof *P);
        else
            memcpy(W + o * wrow + off, P, (size_t)chunk * sizeof *P);
        off += chunk;
    }
}

/* Concat (split = 0) or split (split = 1) between one tensor `whole` and the
 * parts, along axis: each outer row of `whole` is the parts' rows in turn. */
static void concat_split(exec_kctx *k, exec_tensor *whole, int nparts, exec_tensor *const *parts, int64_t ax, int split)
{
    int64_t inner = whole->strides[ax], outer = whole->numel / (whole->shape[ax] * inner);
    uint32_t *W = whole->data;
    if (outer == 1 && whole->numel > MOVE_PAR_MIN && k->nthreads > 1) {
        /* along the first non-unit axis: each part in one slice per thread */
        const int ns = k->nthreads;
#pragma omp parallel for num_threads(ns) schedule(static)
        for (int q = 0; q < nparts * ns; q++) {
            int i = q / ns, s = q % ns;
            int64_t off = 0;
            for (int j = 0; j < i; j++)
                off += parts[j]->numel;
            int64_t len = parts[i]->numel, a = len / ns * s, b = s == ns - 1 ? len : len / ns * (s + 1);
            uint32_t *P = (uint32_t *)parts[i]->data;
            if (split)
                memcpy(P + a, W + off + a, (size_t)(b - a) * sizeof *P);
            else
                memcpy(W + off + a, P + a, (size_t)(b - a) * sizeof *P);
        }
        return;
    }
    if (whole->numel > MOVE_PAR_MIN && outer > 1 && k->nthreads > 1) {
#pragma omp parallel for num_threads(k->nthreads)
        for (int64_t o = 0; o < outer; o++)
            concat_split_row(whole, nparts, parts, ax, split, o);
    } else { /* one thread, no parallel region */
        for (int64_t o = 0; o < outer; o++)
            concat_split_row(whole, nparts, parts, ax, split, o);
    }
}

exec_status op_fwd_ConcatV2(exec_kctx *k, const exec_node *n)
{
    exec_tensor *y = exec_out(k, n, 0);
    exec_tensor *parts[n->nin];
    for (int i = 0; i < n->nin; i++)
        parts[i] = exec_in(k, n, i);
    concat_split(k, y, n->nin, parts, norm_axis(n->nattrs > 0 ? n->attrs[0] : 0, y->ndim), 0);
    return EXEC_OK;
}

/* dx_i = Slice(dy) at input i's offset along axis */
exec_status op_grad_ConcatV2(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    uint32_t nid = n->id;
    int nd = exec_t(g, n->in[0])->ndim;
    int64_t ax = norm_axis(n->nattrs > 0 ? n->attrs[0] : 0, nd), off = 0;
    for (int i = 0; i < n->nin; i++) {
        const exec_tensor *xi = exec_t(g, n->in[i]);
        int64_t at[2 * EXEC_MAX_DIMS];
        for (int j = 0; j < nd; j++) {
            at[j] = j == ax ? off : 0;
            at[nd + j] = xi->shape[j];
        }
        off += xi->shape[ax];
        if (din[i])
            din[i] = exec_op1(g, EXEC_OP_Slice, 1, &dout[0], 2 * nd, at);
        n = exec_node_get(g, nid); /* adding nodes may move the node array */
    }
    return g->status;
}

/* ---- Split: attrs axis, num_split -> num_split equal parts ------------- */
exec_status op_shape_Split(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    if (n->nattrs != 2 || n->attrs[1] < 1 || n->attrs[1] != n->nout)
        return exec_fail(EXEC_ERR_SHAPE, "Split: wants attributes axis, num_split with num_split = the %d outputs",
                         n->nout);
    int64_t ax = norm_axis(n->attrs[0], x->ndim), ns = n->attrs[1];
    if (ax < 0 || ax >= x->ndim || x->shape[ax] % ns)
        return exec_fail(EXEC_ERR_SHAPE, "Split: axis %lld (%d dims) does not split into %lld equal parts",
                         (long long)n->attrs[0], x->ndim, (long long)ns);
    int64_t d[EXEC_MAX_DIMS];
    memcpy(d, x->shape, sizeof d);
    d[ax] /= ns;
    for (int i = 0; i < n->nout; i++)
        exec_shape_set(&out[i], x->dtype, x->ndim, d);
    return EXEC_OK;
}

exec_status op_fwd_Split(exec_kctx *k, const exec_node *n)
{
    exec_tensor *x = exec_in(k, n, 0);
    exec_tensor *parts[n->nout];
    for (int i = 0; i < n->nout; i++)
        parts[i] = exec_out(k, n, i);
    concat_split(k, x, n->nout, parts, norm_axis(n->attrs[0], x->ndim), 1);
    return EXEC_OK;
}

/* dx = ConcatV2 of the outputs' gradients (zeros where an output has none) */
exec_status op_grad_Split(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    uint32_t nid = n->id;
    int nout = n->nout;
    uint32_t parts[nout];
    int64_t ax = n->attrs[0];
    for (int i = 0; i < nout; i++) {
        parts[i] = dout[i] ? dout[i] : exec_op1(g, EXEC_OP_ZerosLike, 1, &n->out[i], 0, NULL);
        n = exec_node_get(g, nid); /* adding nodes may move the node array */
    }
    din[0] = exec_op1(g, EXEC_OP_ConcatV2, nout, parts, 1, &ax);
    return g->status;
}

/* ---- Slice: attrs begin[ndim], size[ndim] (size -1: to the end) -------- */
static exec_status slice_geom(const exec_tensor *x, const exec_node *n, int64_t *begin, int64_t *size)
{
    int nd = x->ndim;
    if (nd < 1 || n->nattrs != 2 * nd)
        return exec_fail(EXEC_ERR_SHAPE, "Slice: %d attributes for %d dims (wants begin and size per dim)", n->nattrs,
                         nd);
    for (int i = 0; i < nd; i++) {
        begin[i] = n->attrs[i];
        if (begin[i] < 0 || begin[i] > x->shape[i])
            return exec_fail(EXEC_ERR_SHAPE, "Slice: dim %d: begin %lld outside %lld", i, (long long)begin[i],
                             (long long)x->shape[i]);
        size[i] = n->attrs[nd + i] == -1 ? x->shape[i] - begin[i] : n->attrs[nd + i];
        if (size[i] < 1 || size[i] > x->shape[i] - begin[i])
            return exec_fail(EXEC_ERR_SHAPE, "Slice: dim %d: begin %lld size %lld outside %lld", i, (long long)begin[i],
                             (long long)n->attrs[nd + i], (long long)x->shape[i]);
    }
    return EXEC_OK;
}

exec_status op_shape_Slice(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    int64_t begin[EXEC_MAX_DIMS], size[EXEC_MAX_DIMS];
    exec_status s = slice_geom(x, n, begin, size);
    if (s)
        return s;
    exec_shape_set(out, x->dtype, x->ndim, size);
    return EXEC_OK;
}

exec_status op_fwd_Slice(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *y = exec_out(k, n, 0);
    int64_t begin[EXEC_MAX_DIMS], size[EXEC_MAX_DIMS];
    slice_geom(x, n, begin, size);
    int nd = x->ndim;
    int64_t inner = size[nd - 1], rows = y->numel / inner;
    const uint32_t *X = x->data;
    uint32_t *Y = y->data;
#pragma omp parallel for num_threads(k->nthreads) if (y->numel > MOVE_PAR_MIN)
    for (int64_t r = 0; r < rows; r++)
        memcpy(Y + r * inner, X + row_offset(r, nd, size, begin, x->strides), (size_t)inner * sizeof *Y);
    return EXEC_OK;
}

/* dx = Pad(dy, begin, shape - begin - size) */
exec_status op_grad_Slice(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    const exec_tensor *x = exec_t(g, n->in[0]);
    int64_t begin[EXEC_MAX_DIMS], size[EXEC_MAX_DIMS], at[2 * EXEC_MAX_DIMS];
    slice_geom(x, n, begin, size);
    int nd = x->ndim;
    for (int i = 0; i < nd; i++) {
        at[2 * i] = begin[i];
        at[2 * i + 1] = x->shape[i] - begin[i] - size[i];
    }
    din[0] = exec_op1(g, EXEC_OP_Pad, 1, &dout[0], 2 * nd, at);
    return g->status;
}

/* ---- Pad: attrs before0, after0, before1, after1, ... (>= 0); zeros ---- */
exec_status op_shape_Pad(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *x = exec_gin(g, n, 0);
    if (x->ndim < 1 || n->nattrs != 2 * x->ndim)
        return exec_fail(EXEC_ERR_SHAPE, "Pad: %d attributes for %d dims (wants before and after per dim)", n->nattrs,
                         x->ndim);
    int64_t d[EXEC_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) {
        if (n->attrs[2 * i] < 0 || n->attrs[2 * i + 1] < 0 || n->attrs[2 * i] > (1 << 30) ||
            n->attrs[2 * i + 1] > (1 << 30))
            return exec_fail(EXEC_ERR_SHAPE, "Pad: padding in dim %d is negative or above 2^30", i);
        d[i] = x->shape[i] + n->attrs[2 * i] + n->attrs[2 * i + 1];
    }
    exec_shape_set(out, x->dtype, x->ndim, d);
    return EXEC_OK;
}

exec_status op_fwd_Pad(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *x = exec_in(k, n, 0), *y = exec_out(k, n, 0);
    int nd = x->ndim;
    int64_t before[EXEC_MAX_DIMS];
    for (int i = 0; i < nd; i++)
        before[i] = n->attrs[2 * i];
    int64_t inner = x->shape[nd - 1], rows = x->numel / inner;
    const uint32_t *X = x->data;
    uint32_t *Y = y->data;
    memset(Y, 0, y->bytes);
#pragma omp parallel for num_threads(k->nthreads) if (y->numel > MOVE_PAR_MIN)
    for (int64_t r = 0; r < rows; r++)
        memcpy(Y + row_offset(r, nd, x->shape, before, y->strides), X + r * inner, (size_t)inner * sizeof *Y);
    return EXEC_OK;
}

/* dx = Slice(dy, before, x.shape) */
exec_status op_grad_Pad(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (!din[0])
        return g->status;
    const exec_tensor *x = exec_t(g, n->in[0]);
    int nd = x->ndim;
    int64_t at[2 * EXEC_MAX_DIMS];
    for (int i = 0; i < nd; i++) {
        at[i] = n->attrs[2 * i];
        at[nd + i] = x->shape[i];
    }
    din[0] = exec_op1(g, EXEC_OP_Slice, 1, &dout[0], 2 * nd, at);
    return g->status;
}

/* ---- Gather: in [params [V, D...], indices int32 [I...]] -> [I..., D...]
 * (TF's Gather along axis 0, the embedding lookup). An index outside [0,V)
 * is an error, as on TF's CPU kernels. ------------------------------------ */
exec_status op_shape_Gather(const exec_graph *g, const exec_node *n, exec_shape *out)
{
    const exec_tensor *p = exec_gin(g, n, 0), *ix = exec_gin(g, n, 1);
    if (ix->dtype != EXEC_I32 || p->ndim < 1)
        return exec_fail(EXEC_ERR_SHAPE, "Gather: wants params of at least 1 dim and int32 indices");
    if (ix->ndim + p->ndim - 1 > EXEC_MAX_DIMS)
        return exec_fail(EXEC_ERR_SHAPE, "Gather: the result would have %d dims (max %d)", ix->ndim + p->ndim - 1,
                         EXEC_MAX_DIMS);
    int64_t d[EXEC_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < ix->ndim; i++)
        d[nd++] = ix->shape[i];
    for (int i = 1; i < p->ndim; i++)
        d[nd++] = p->shape[i];
    if (nd == 0)
        d[nd++] = 1;
    exec_shape_set(out, p->dtype, nd, d);
    return EXEC_OK;
}

exec_status op_fwd_Gather(exec_kctx *k, const exec_node *n)
{
    const exec_tensor *p = exec_in(k, n, 0), *ix = exec_in(k, n, 1);
    int64_t V = p->shape[0], D = p->numel / V, rows = ix->numel;
    const int32_t *I = ix->data;
    const uint32_t *P = p->data;
    uint32_t *Y = exec_out(k, n, 0)->data;
    for (int64_t r = 0; r < rows; r++)
        if (I[r] < 0 || I[r] >= V)
            return exec_fail(EXEC_ERR_ARG, "Gather: index %d at %lld outside [0,%lld)", I[r], (long long)r,
                             (long long)V);
#pragma omp parallel for num_threads(k->nthreads) if (rows * D > MOVE_PAR_MIN)
    for (int64_t r = 0; r < rows; r++)
        memcpy(Y + r * D, P + (int64_t)I[r] * D, (size_t)D * sizeof *Y);
    return EXEC_OK;
}

/* d params = UnsortedSegmentSum(dy, indices, V); the indices get none */
exec_status op_grad_Gather(exec_graph *g, const exec_node *n, const uint32_t *dout, uint32_t *din)
{
    if (din[0]) {
        int64_t V = exec_t(g, n->in[0])->shape[0];
        din[0] = exec_op1(g, EXEC_OP_UnsortedSegmentSum, 2, (uint32_t[]){ dout[0], n->in[1] }, 1, &V);
    }
    if (din[1])
        din[1] = 0;
    return g->status;
}
